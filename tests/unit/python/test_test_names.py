#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of devtools/test_names.py: a name of a list of tests (devtools/test.sh's
sanitized_tests) that matches no test of a 'meson test --list' output is named and fails."""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..',
                      'devtools', 'test_names.py')
sys.path.insert(0, os.path.dirname(SCRIPT))
import test_names  # noqa: E402

LISTING = '''ninja: no work to do.
vnapi:integration / pair_count_vnapi
vnapi:integration+variant / pair_count_virtio_user
vnapi:unit / harness
slow_handshake_vnapi
'''


class TestNames(unittest.TestCase):
    def test_all_match(self):
        lines = LISTING.splitlines()
        self.assertEqual(test_names.unmatched(lines, ['pair_count_vnapi', 'harness',
                                                      'pair_count_virtio_user',
                                                      'slow_handshake_vnapi']), [])

    def test_misspelled_and_partial_names(self):
        lines = LISTING.splitlines()
        # a misspelling, a prefix of a test, a suite, ninja's line: none is a test
        self.assertEqual(test_names.unmatched(lines, ['pair_cuont_vnapi', 'pair_count',
                                                      'integration', 'ninja: no work to do.',
                                                      'pair_cuont_vnapi']),
                         ['pair_cuont_vnapi', 'pair_count', 'integration',
                          'ninja: no work to do.'])

    def run_script(self, *names):
        with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as f:
            f.write(LISTING)
        try:
            return subprocess.run([sys.executable, SCRIPT, f.name] + list(names),
                                  capture_output=True, text=True, timeout=30)
        finally:
            os.unlink(f.name)

    def test_script_fails_and_names_it(self):
        r = self.run_script('pair_count_vnapi', 'pair_cuont_vnapi')
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, 'pair_cuont_vnapi\n')
        self.assertIn("'pair_cuont_vnapi' matches no test", r.stderr)

    def test_script_passes(self):
        r = self.run_script('pair_count_vnapi')
        self.assertEqual((r.returncode, r.stdout), (0, ''))


if __name__ == '__main__':
    unittest.main()
