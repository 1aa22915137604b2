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
    def test_every_series_by_default(self):
        rc, out = dry_run()
        self.assertEqual(rc, 0, out)
        for s in ('22.11', '23.11', '24.11', '25.11'):
            self.assertIn('=== DPDK %s: would run devtools/test.sh' % s, out)
        self.assertNotIn('NOT RUN', out)
        self.assertEqual(out.splitlines()[-1], '0 passed, 0 failed')

    def test_left_out_series_fail_loudly(self):
        rc, out = dry_run('25.11')
        self.assertEqual(rc, 1, out)
        self.assertIn('DPDK 22.11 23.11 24.11 NOT RUN', out)
        self.assertIn('=== DPDK 25.11: would run', out)
        self.assertNotIn('=== DPDK 22.11: would run', out)
        for s in ('22.11', '23.11', '24.11'):
            self.assertIn('DPDK %s: failed 1 (not run: VNAPI_CI_DPDK)' % s, out)
        self.assertEqual(out.splitlines()[-1], '0 passed, 3 failed')

    def test_unknown_series_fails(self):
        rc, out = dry_run('22.11 23.11 24.11 25.11 21.11')
        self.assertEqual(rc, 1, out)
        self.assertIn('DPDK 21.11 is no series of CI', out)
        self.assertNotIn('NOT RUN', out)
        self.assertEqual(out.splitlines()[-1], '0 passed, 1 failed')


if __name__ == '__main__':
    unittest.main()
