#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of devtools/sanitized.py (the meson test wrapper of the sanitized integration
run) and vnapitools.sanitizer (the copy of UBSan's stderr reports): a report file fails the
test whatever its exit status, no report leaves the exit status as it is, a UBSan report line
and its stack frames reach the report directory and ordinary lines do not."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from vnapitools import sanitizer

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
WRAPPER = os.path.join(TOP, 'devtools', 'sanitized.py')
UBSAN_LINE = '../drivers/net/vnapi/vnapi_rxtx.c:330:13: runtime error: signed integer overflow'


def wrapped(code):
    """Run python code under the wrapper; return (exit status, output)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, 'devtools'))
    # The sanitized unit run's own options (detect_leaks=1) would win over the wrapper's and
    # report the interpreter's leaks: the wrapper's defaults are what is tested.
    for k in ('ASAN_OPTIONS', 'UBSAN_OPTIONS', 'VNAPI_SANITIZER_DIR'):
        env.pop(k, None)
    r = subprocess.run([sys.executable, WRAPPER, sys.executable, '-c', code], env=env,
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


class TestWrapper(unittest.TestCase):
    def test_clean_pass(self):
        rc, out = wrapped('import os; assert "libasan" in os.environ["LD_PRELOAD"]')
        self.assertEqual(rc, 0, out)
        self.assertNotIn('FAIL', out)

    def test_clean_fail_keeps_status(self):
        rc, out = wrapped('import sys; sys.exit(3)')
        self.assertEqual(rc, 3, out)

    def test_report_file_fails_a_passing_test(self):
        rc, out = wrapped('import os; open(os.path.join(os.environ["VNAPI_SANITIZER_DIR"], '
                          '"asan.1"), "w").write("==1==ERROR: AddressSanitizer: planted\\n")')
        self.assertEqual(rc, 1, out)
        self.assertIn('AddressSanitizer: planted', out)
        self.assertIn('sanitized.py: FAIL: 1 sanitizer report(s)', out)

    def test_scanned_stderr_report_fails(self):
        rc, out = wrapped('from vnapitools import sanitizer; '
                          'sanitizer.scan("testpmd.err", %r)' % UBSAN_LINE)
        self.assertEqual(rc, 1, out)
        self.assertIn('testpmd.err| ' + UBSAN_LINE, out)

    def test_report_dir_removed(self):
        rc, out = wrapped('import os; print("DIR=" + os.environ["VNAPI_SANITIZER_DIR"])')
        self.assertEqual(rc, 0, out)
        d = [ln[4:] for ln in out.splitlines() if ln.startswith('DIR=')][0]
        self.assertFalse(os.path.exists(d))


class TestScan(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='test-sanitizer-')
        self.saved = sanitizer._DIR
        sanitizer._DIR = self.dir
        sanitizer._in_report.clear()

    def tearDown(self):
        sanitizer._DIR = self.saved
        shutil.rmtree(self.dir)

    def recorded(self):
        out = ''
        for f in sorted(os.listdir(self.dir)):
            with open(os.path.join(self.dir, f)) as fh:
                out += fh.read()
        return out

    def test_report_and_frames_only(self):
        sanitizer.scan('p.err', 'EAL: Detected 2 lcores\n' + UBSAN_LINE + '\n'
                       '    #0 0x1 in vnapi_recv_burst\n    #1 0x2 in main\n'
                       'Port 0: link up\n    #7 not a frame of a report')
        self.assertEqual(self.recorded(), 'p.err| %s\np.err|     #0 0x1 in vnapi_recv_burst\n'
                         'p.err|     #1 0x2 in main\n' % UBSAN_LINE)

    def test_streams_apart(self):
        sanitizer.scan('p.err', UBSAN_LINE)
        sanitizer.scan('p.out', 'testpmd> ')
        sanitizer.scan('p.err', '    #0 0x1 in f')
        self.assertIn('p.err|     #0 0x1 in f', self.recorded())

    def test_nothing_clean(self):
        sanitizer.scan('p.err', 'EAL: Detected 2 lcores\nruntime of 3 s\n')
        self.assertEqual(self.recorded(), '')

    def test_off_without_dir(self):
        sanitizer._DIR = None
        sanitizer.scan('p.err', UBSAN_LINE)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
