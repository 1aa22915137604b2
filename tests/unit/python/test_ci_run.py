#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of .ci/run's series selection, by its dry run (nothing is built or run): every
series of devtools/ci-matrix.sh runs by default; VNAPI_CI_DPDK, a developer's partial run,
names every series it leaves out on a banner and counts each as failed, and a series CI does
not know fails too, so such a run never ends green.

Usage: test_ci_run.py SOURCE_ROOT"""

import os
import subprocess
import sys
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')


def dry_run(ci_dpdk=None):
    env = {k: v for k, v in os.environ.items() if k != 'VNAPI_CI_DPDK'}
    if ci_dpdk is not None:
        env['VNAPI_CI_DPDK'] = ci_dpdk
    r = subprocess.run(['bash', os.path.join(ROOT, '.ci', 'run'), '--dry-run'], env=env,
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout


class TestCiRun(unittest.TestCase):
    def check_run(self, ci_dpdk, rc, last, shown=(), not_shown=()):
        """A dry run with VNAPI_CI_DPDK=@ci_dpdk (None: unset) exits @rc, its output holds
        every line of @shown and none of @not_shown, and its last line is @last."""
        got_rc, out = dry_run(ci_dpdk)
        self.assertEqual(got_rc, rc, out)
        for text in shown:
            self.assertIn(text, out)
        for text in not_shown:
            self.assertNotIn(text, out)
        self.assertEqual(out.splitlines()[-1], last)

    def test_every_series_by_default(self):
        self.check_run(None, 0, '0 passed, 0 failed',
                       ['=== DPDK %s: would run devtools/test.sh' % s
                        for s in ('22.11', '23.11', '24.11', '25.11')],
                       ['NOT RUN'])

    def test_left_out_series_fail_loudly(self):
        self.check_run('25.11', 1, '0 passed, 3 failed',
                       ['DPDK 22.11 23.11 24.11 NOT RUN', '=== DPDK 25.11: would run'] +
                       ['DPDK %s: failed 1 (not run: VNAPI_CI_DPDK)' % s
                        for s in ('22.11', '23.11', '24.11')],
                       ['=== DPDK 22.11: would run'])

    def test_unknown_series_fails(self):
        self.check_run('22.11 23.11 24.11 25.11 21.11', 1, '0 passed, 1 failed',
                       ['DPDK 21.11 is no series of CI'], ['NOT RUN'])

if __name__ == '__main__':
    unittest.main()
