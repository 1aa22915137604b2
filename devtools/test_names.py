#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Check test names against what exists: print every NAME that matches no test of LISTING,
one a line on stdout (with the reason on stderr), and exit 1 if there is one.

Usage: test_names.py LISTING NAME...

LISTING is a 'meson test --list' output (one test a line, 'project:suites / name', or the
bare name when the build has a single suite; ninja's line, when the listing rebuilt first, is
no test) or any list of names, one a line. A NAME matches a line that is the name itself or
ends with ' / NAME'.

Why: Debian 12's meson (1.0) runs the tests named on its command line and silently ignores a
name that matches none, so a renamed or misspelled entry of a list of tests (devtools/test.sh's
sanitized_tests) would drop out of the run unnoticed; devtools/summary.py counts only what
meson was asked for and found."""

import sys


def names_of(lines):
    """The test names of a listing's lines."""
    out = set()
    for ln in lines:
        ln = ln.strip()
        if not ln or ln.startswith('ninja: '):
            continue
        out.add(ln.rsplit(' / ', 1)[-1])
    return out


def unmatched(listing_lines, names):
    """The names (in their order, once each) that match no test of the listing."""
    have = names_of(listing_lines)
    out = []
    for n in names:
        if n not in have and n not in out:
            out.append(n)
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding='utf-8') as f:
            lines = f.readlines()
    except OSError as e:
        print('test_names.py: %s' % e, file=sys.stderr)
        return 2
    bad = unmatched(lines, argv[1:])
    for n in bad:
        print(n)
        print('test_names.py: %r matches no test of %s' % (n, argv[0]), file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
