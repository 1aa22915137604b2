#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Count meson test results over one or more testlog.json files and print
the closing line CI reads: 'N passed, N failed[, N skipped]'.

Usage: summary.py [--ci] [--failed=WHAT | [--registered=LIST] TESTLOG]...

For each TESTLOG, the tests its meson run was asked for (one 'meson test
--list' line per test, as devtools/test.sh writes them before the run) come
from LIST, by default registered-tests.txt beside the TESTLOG. A registered
test with no result in the TESTLOG counts as failed, and so does a result of
a test that is not in the list, so the closing line counts exactly the tests
the suite registers. No LIST (or no TESTLOG) is a failure too.

Under CI (--ci, or the environment's CI is true, 1, yes or on) a SKIP counts
as failed: CI has every prerequisite; the skipping test's own reason is
printed with it. Otherwise a SKIP counts as skipped and its reason is printed.

--failed=WHAT counts one failure that is no meson test (WHAT could not be
built, so its tests never ran). Exit status 0 when nothing failed and
something passed, else 1."""

import json
import os
import sys

LIST_NAME = 'registered-tests.txt'
CI_FIX = ('no test may skip in CI: run devtools/setup.sh as root (it installs the packages, '
          'the guest kernel and reserves the hugepages the tests name)')


def ci_enabled(environ):
    """True when the CI variable says so, however the runner spells it."""
    return environ.get('CI', '').strip().lower() in ('true', '1', 'yes', 'on')


def read_list(path):
    """Test names of a 'meson test --list' output: one line each, 'project:suite / name', or
    the bare name when the build has a single suite (as testlog.json names them); ninja's
    line, when the listing rebuilt first, is not a test."""
    with open(path, encoding='utf-8') as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith('ninja: ')]


def skip_reason(t):
    """The line of a skipped test's output that says why, else its last line."""
    lines = [ln.strip() for ln in ((t.get('stdout') or '') + '\n' + (t.get('stderr') or '')).splitlines()
             if ln.strip()]
    for ln in lines:
        if 'skip' in ln.lower() or 'missing prerequisite' in ln.lower():
            return ln
    return lines[-1] if lines else 'no output'


def main(args, environ=None, out=sys.stdout):
    environ = os.environ if environ is None else environ
    ci = ci_enabled(environ)
    passed = failed = skipped = 0
    registered = None

    def fail(msg):
        nonlocal failed
        failed += 1
        print(f'FAILED: {msg}', file=out)

    for arg in args:
        if arg == '--ci':
            ci = True
            continue
        if arg.startswith('--failed='):
            fail(arg[len('--failed='):])
            continue
        if arg.startswith('--registered='):
            registered = arg[len('--registered='):]
            continue
        list_path = registered or os.path.join(os.path.dirname(arg), LIST_NAME)
        registered = None
        try:
            with open(arg, encoding='utf-8') as f:
                results = [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError) as e:
            fail(f'{arg}: {e}')
            continue
        try:
            expected = read_list(list_path)
        except OSError as e:
            fail(f'{arg}: no list of the registered tests ({e}; devtools/test.sh writes it)')
            expected = None
        ran = set()
        for t in results:
            name = t.get('name')
            ran.add(name)
            result = t.get('result')
            if result in ('OK', 'EXPECTEDFAIL'):
                passed += 1
            elif result == 'SKIP' and ci:
                fail(f'{name} (SKIP under CI: {skip_reason(t)}; {CI_FIX})')
            elif result == 'SKIP':
                skipped += 1
                print(f'SKIPPED: {name} ({skip_reason(t)})', file=out)
            elif 'MISSING PREREQUISITE' in (t.get('stdout') or ''):
                fail(f'{name} ({result}: {skip_reason(t)})')
            else:
                fail(f'{name} ({result})')
        if expected is not None:
            for name in expected:
                if name not in ran:
                    fail(f'{name} (registered, no result in {arg})')
            for name in sorted(ran - set(expected), key=str):
                fail(f'{name} (a result in {arg}, but not in {list_path})')
    line = f'{passed} passed, {failed} failed'
    if skipped:
        line += f', {skipped} skipped'
    print(line, file=out)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
