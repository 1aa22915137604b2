#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Stand-in for a test whose prerequisite is missing at configure time: meson
registers this under the real test's name, so that the test is never silently
absent. Usage: missing_prereq.py MESSAGE (what is missing and the fix).
Prints 'MISSING PREREQUISITE: MESSAGE'; fails (exit 1) when the environment's
CI is true (or 1, yes, on: CI has every prerequisite), else skips (exit 77,
meson's skip)."""

import os
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    print('MISSING PREREQUISITE: %s' % argv[1])
    if os.environ.get('CI', '').strip().lower() in ('true', '1', 'yes', 'on'):
        print('FAIL: CI=true, and a test may not skip in CI')
        return 1
    print('SKIP (outside CI)')
    return 77


if __name__ == '__main__':
    sys.exit(main(sys.argv))
