#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of devtools/summary.py, the closing line CI reads: exact counts, a registered test
with no result is a named failure, a SKIP is a failure under CI (however CI is spelled) and a
skip otherwise; and of tests/missing_prereq.py, the stand-in meson registers for a test whose
prerequisite is missing (fails under CI, skips otherwise, names the fix)."""

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

# devtools/summary.py, the script under test.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..',
                                'devtools'))
import summary  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
MISSING = os.path.join(TOP, 'tests', 'missing_prereq.py')
CLOSING = re.compile(r'^\d+ passed, \d+ failed(, \d+ skipped)?$')


class TestSummary(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='test-summary-')

    def tearDown(self):
        shutil.rmtree(self.dir)

    def build(self, name, results, registered):
        """A fake build's meson-logs: testlog.json with results {name: (result, stdout)}, and
        registered-tests.txt listing registered (None: no list)."""
        logs = os.path.join(self.dir, name, 'meson-logs')
        os.makedirs(logs)
        with open(os.path.join(logs, 'testlog.json'), 'w') as f:
            for n, (res, out) in results.items():
                f.write(json.dumps({'name': n, 'result': res, 'stdout': out}) + '\n')
        if registered is not None:
            with open(os.path.join(logs, summary.LIST_NAME), 'w') as f:
                f.write(''.join(n + '\n' for n in registered))
        return os.path.join(logs, 'testlog.json')

    def run_summary(self, args, ci=None):
        out = io.StringIO()
        env = {} if ci is None else {'CI': ci}
        rc = summary.main(args, environ=env, out=out)
        lines = out.getvalue().splitlines()
        self.assertRegex(lines[-1], CLOSING)
        return rc, lines

    def test_all_pass(self):
        log = self.build('b', {'p:unit / a': ('OK', ''), 'p:unit / b': ('EXPECTEDFAIL', '')},
                         ['p:unit / a', 'p:unit / b'])
        self.assertEqual(self.run_summary([log]), (0, ['2 passed, 0 failed']))

    def test_failures_counted_and_named(self):
        log = self.build('b', {'p:unit / a': ('OK', ''), 'p:unit / b': ('FAIL', ''),
                               'p:unit / c': ('TIMEOUT', '')},
                         ['p:unit / a', 'p:unit / b', 'p:unit / c'])
        self.assertEqual(self.run_summary([log]), (1, [
            'FAILED: p:unit / b (FAIL)', 'FAILED: p:unit / c (TIMEOUT)', '1 passed, 2 failed']))

    def test_missing_prerequisite_named(self):
        out = 'MISSING PREREQUISITE: no l3fwd-power: apt-get install dpdk-doc\nFAIL: CI=true\n'
        log = self.build('b', {'p:unit / a': ('OK', ''), 'p:integration / l3fwd_x': ('FAIL', out)},
                         ['p:unit / a', 'p:integration / l3fwd_x'])
        self.assertEqual(self.run_summary([log]), (1, [
            'FAILED: p:integration / l3fwd_x (FAIL: MISSING PREREQUISITE: no l3fwd-power: '
            'apt-get install dpdk-doc)', '1 passed, 1 failed']))

    def test_registered_without_result_fails(self):
        log = self.build('b', {'p:unit / a': ('OK', '')},
                         ['p:unit / a', 'p:integration / l3fwd_count_vnapi'])
        rc, lines = self.run_summary([log])
        self.assertEqual(rc, 1)
        self.assertEqual(lines[0], 'FAILED: p:integration / l3fwd_count_vnapi '
                                   '(registered, no result in %s)' % log)
        self.assertEqual(lines[1:], ['1 passed, 1 failed'])

    def test_result_not_registered_fails(self):
        log = self.build('b', {'p:unit / a': ('OK', ''), 'p:unit / stale': ('OK', '')},
                         ['p:unit / a'])
        rc, lines = self.run_summary([log])
        self.assertEqual(rc, 1)
        self.assertTrue(lines[0].startswith('FAILED: p:unit / stale (a result in '), lines)
        self.assertEqual(lines[-1], '2 passed, 1 failed')

    def test_no_list_fails(self):
        log = self.build('b', {'p:unit / a': ('OK', '')}, None)
        rc, lines = self.run_summary([log])
        self.assertEqual(rc, 1)
        self.assertIn('no list of the registered tests', lines[0])
        self.assertEqual(lines[-1], '1 passed, 1 failed')

    def test_explicit_list(self):
        log = self.build('b', {'p:unit / a': ('OK', '')}, None)
        lst = os.path.join(self.dir, 'list.txt')
        with open(lst, 'w') as f:
            f.write('ninja: no work to do.\np:unit / a\n')
        self.assertEqual(self.run_summary(['--registered=' + lst, log]),
                         (0, ['1 passed, 0 failed']))
        # The list applies to the next testlog only.
        self.assertEqual(self.run_summary(['--registered=' + lst, log, log])[1][-1],
                         '2 passed, 1 failed')

    def test_single_suite_bare_names(self):
        # A build with one suite (the ASan build: unit only): meson lists and logs bare names.
        log = self.build('asan', {'a': ('OK', ''), 'b': ('OK', '')}, ['a', 'b', 'c'])
        self.assertEqual(self.run_summary([log]), (1, [
            'FAILED: c (registered, no result in %s)' % log, '2 passed, 1 failed']))

    def test_no_testlog_fails(self):
        rc, lines = self.run_summary([os.path.join(self.dir, 'nope', 'testlog.json')])
        self.assertEqual((rc, lines[-1]), (1, '0 passed, 1 failed'))

    def test_failed_arg(self):
        log = self.build('b', {'p:unit / a': ('OK', '')}, ['p:unit / a'])
        self.assertEqual(self.run_summary(['--failed=DPDK 24.11 build', log]),
                         (1, ['FAILED: DPDK 24.11 build', '1 passed, 1 failed']))

    def test_nothing_passed_fails(self):
        log = self.build('b', {}, [])
        self.assertEqual(self.run_summary([log]), (1, ['0 passed, 0 failed']))

    def test_skip_outside_ci(self):
        log = self.build('b', {'p:unit / a': ('OK', ''),
                               'p:integration / ovs_x': ('SKIP', 'start\nSKIP: no OVS\n')},
                         ['p:unit / a', 'p:integration / ovs_x'])
        for ci in (None, '', 'false', '0'):
            self.assertEqual(self.run_summary([log], ci=ci), (0, [
                'SKIPPED: p:integration / ovs_x (SKIP: no OVS)', '1 passed, 0 failed, 1 skipped']))

    def test_skip_under_ci_fails(self):
        log = self.build('b', {'p:unit / a': ('OK', ''),
                               'p:integration / ovs_x': ('SKIP', 'start\nSKIP: no OVS\n')},
                         ['p:unit / a', 'p:integration / ovs_x'])
        for ci in ('true', 'True', '1', 'yes', 'ON'):
            rc, lines = self.run_summary([log], ci=ci)
            self.assertEqual(rc, 1)
            self.assertEqual(lines[0], 'FAILED: p:integration / ovs_x (SKIP under CI: SKIP: no OVS; '
                             + summary.CI_FIX + ')')
            self.assertEqual(lines[1:], ['1 passed, 1 failed'])
        self.assertEqual(self.run_summary(['--ci', log])[1][-1], '1 passed, 1 failed')

    def test_two_builds_add_up(self):
        a = self.build('a', {'p:unit / a': ('OK', ''), 'p:integration / b': ('OK', '')},
                       ['p:unit / a', 'p:integration / b'])
        b = self.build('asan', {'p:unit / a': ('OK', '')}, ['p:unit / a'])
        self.assertEqual(self.run_summary([a, b]), (0, ['3 passed, 0 failed']))

    def test_command_line(self):
        log = self.build('b', {'p:unit / a': ('OK', '')}, ['p:unit / a', 'p:unit / gone'])
        env = dict(os.environ, CI='true')
        r = subprocess.run([sys.executable, summary.__file__, log], env=env,
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout.splitlines()[-1], '1 passed, 1 failed')


class TestMissingPrereq(unittest.TestCase):
    MSG = 'l3fwd-power sources not in /x: apt-get install dpdk-doc'

    def run_missing(self, ci):
        env = {k: v for k, v in os.environ.items() if k != 'CI'}
        if ci is not None:
            env['CI'] = ci
        return subprocess.run([sys.executable, MISSING, self.MSG], env=env,
                              capture_output=True, text=True, timeout=30)

    def test_fails_under_ci(self):
        for ci in ('true', 'TRUE', '1', 'yes'):
            r = self.run_missing(ci)
            self.assertEqual(r.returncode, 1)
            self.assertIn('MISSING PREREQUISITE: ' + self.MSG, r.stdout)
            self.assertIn('FAIL', r.stdout)

    def test_skips_otherwise(self):
        for ci in (None, '', 'false'):
            r = self.run_missing(ci)
            self.assertEqual(r.returncode, 77)
            self.assertIn('MISSING PREREQUISITE: ' + self.MSG, r.stdout)
            self.assertIn('SKIP', r.stdout)

    def test_usage(self):
        r = subprocess.run([sys.executable, MISSING], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2)


if __name__ == '__main__':
    unittest.main(verbosity=2)
