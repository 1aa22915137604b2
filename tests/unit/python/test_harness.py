#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of the parts of devtools/vnapitools/harness.py that need no DPDK process: the
testpmd statistics parsers (one block reader behind all three) and run_checks(), which turns a
test body's outcome into PASS/FAIL and the script's exit code."""

import contextlib
import io
import os
import subprocess
import unittest

from vnapitools import harness as h

NIC = '''
  ######################## NIC statistics for port 0  ########################
  RX-packets: 12         RX-missed: 0          RX-bytes:  768
  TX-packets: 34         TX-errors: 1          TX-bytes:  2176
  ############################################################################
  ######################## NIC statistics for port 1  ########################
  RX-packets: 5
  ######################## NIC statistics for port 0  ########################
  RX-packets: 99
'''

FWD = '''
  ---------------------- Forward statistics for port 0  ----------------------
  RX-packets: 10             RX-dropped: 0             RX-total: 10
  ----------------------------------------------------------------------------
  RX-packets: 777
  ---------------------- Forward statistics for port 1  ----------------------
  TX-packets: 20             TX-dropped: 2             TX-total: 22
  ----------------------------------------------------------------------------
  +++++++++++++++ Accumulated forward statistics for all ports+++++++++++++++
  RX-packets: 30             RX-dropped: 0             RX-total: 30
  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
'''


class Line:
    def __init__(self, t, text):
        self.t = t
        self.text = text


class TestParsers(unittest.TestCase):
    def test_port_stats_last_block_wins(self):
        # Port 1's block is cut short by port 0's second one, which the text ends inside:
        # both still count, and port 0's second block replaces its first.
        self.assertEqual(h.parse_port_stats(NIC),
                         {0: {'RX-packets': 99}, 1: {'RX-packets': 5}})

    def test_stats_blocks_closed_only(self):
        lines = [Line(0.5 * i, text) for i, text in enumerate(NIC.splitlines())]
        self.assertEqual(h.parse_stats_blocks(lines), [
            (2.0, 0, {'RX-packets': 12, 'RX-missed': 0, 'RX-bytes': 768, 'TX-packets': 34,
                      'TX-errors': 1, 'TX-bytes': 2176}),
        ])

    def test_fwd_stats(self):
        # Counters after a block's closing line belong to no port.
        self.assertEqual(h.parse_fwd_stats(FWD), {
            0: {'RX-packets': 10, 'RX-dropped': 0, 'RX-total': 10},
            1: {'TX-packets': 20, 'TX-dropped': 2, 'TX-total': 22},
            'all': {'RX-packets': 30, 'RX-dropped': 0, 'RX-total': 30},
        })

    def test_empty(self):
        self.assertEqual(h.parse_port_stats(''), {})
        self.assertEqual(h.parse_fwd_stats(NIC), {})
        self.assertEqual(h.parse_stats_blocks([]), [])


class TestRunChecks(unittest.TestCase):
    def run_quiet(self, fn, *args, **kw):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = h.run_checks(fn, *args, **kw)
        return rc, out.getvalue()

    def test_pass(self):
        seen = []
        self.assertEqual(self.run_quiet(seen.append, 'x'), (0, 'PASS\n'))
        self.assertEqual(seen, ['x'])

    def test_failed_check(self):
        def body():
            h.check(False, 'one outcome')
        self.assertEqual(self.run_quiet(body), (1, 'FAIL: one outcome\n'))

    def test_harness_error(self):
        def body():
            raise h.Timeout('no prompt')
        self.assertEqual(self.run_quiet(body), (1, 'FAIL: no prompt\n'))

    def test_extra_errors(self):
        def body():
            raise subprocess.SubprocessError('ovs-vsctl')
        self.assertEqual(self.run_quiet(body, errors=(subprocess.SubprocessError,)),
                         (1, 'FAIL: ovs-vsctl\n'))
        with self.assertRaises(subprocess.SubprocessError):
            self.run_quiet(body)

    def test_skip_code_passes_through(self):
        self.assertEqual(self.run_quiet(lambda: 77), (77, ''))

    def test_true_passes(self):
        # test_reconnect.py's bodies return True for their own callers.
        self.assertEqual(self.run_quiet(lambda: True), (0, 'PASS\n'))

    def test_false_fails(self):
        rc, out = self.run_quiet(lambda: False)
        self.assertEqual(rc, 1)
        self.assertTrue(out.startswith('FAIL: the test body returned False'), out)

    def test_other_values_fail(self):
        for v in ('PASS', [], 0.0):
            rc, out = self.run_quiet(lambda: v)
            self.assertEqual(rc, 1, v)
            self.assertTrue(out.startswith('FAIL: '), out)


class TestOpenFds(unittest.TestCase):
    def test_counts_a_new_fd(self):
        n = h.open_fds(os.getpid())
        r, w = os.pipe()
        try:
            self.assertEqual(h.open_fds(os.getpid()), n + 2)
        finally:
            os.close(r)
            os.close(w)
        self.assertEqual(h.open_fds(os.getpid()), n)

    def test_back_to_waits_for_a_closing_fd(self):
        import threading
        n = h.open_fds(os.getpid())
        r, w = os.pipe()
        t = threading.Timer(0.05, lambda: (os.close(r), os.close(w)))
        t.start()
        try:
            self.assertEqual(h.open_fds_back_to(os.getpid(), n, timeout=5.0), n)
        finally:
            t.join()

    def test_back_to_reports_a_leak(self):
        n = h.open_fds(os.getpid())
        r, w = os.pipe()
        try:
            self.assertEqual(h.open_fds_back_to(os.getpid(), n, timeout=0.1), n + 2)
        finally:
            os.close(r)
            os.close(w)

    def test_settled_ignores_a_transient_fd(self):
        # A read that lands while the process holds an fd for a moment (a syslog() socket)
        # or lacks one (EAL's interrupt thread between two epoll fds) is not the baseline.
        for reads in ([24, 23, 23, 23], [22, 23, 23, 22, 23, 23, 23]):
            seq = iter(reads)
            self.assertEqual(h.open_fds_settled(1, interval=0, count=lambda pid: next(seq)),
                             23)

    def test_settled_gives_up_at_the_deadline(self):
        seq = iter(range(100000))
        n = h.open_fds_settled(1, interval=0.001, timeout=0.05, count=lambda pid: next(seq))
        self.assertGreater(n, 0)

    def test_settled_counts_a_kept_fd(self):
        n = h.open_fds(os.getpid())
        r, w = os.pipe()
        try:
            self.assertEqual(h.open_fds_settled(os.getpid()), n + 2)
        finally:
            os.close(r)
            os.close(w)

    def test_fd_diff_names_the_fd(self):
        before = h.fd_table(os.getpid())
        r, w = os.pipe()
        try:
            d = h.fd_diff(before, h.fd_table(os.getpid()))
            self.assertIn('fd %d: closed -> pipe:[' % r, d)
            self.assertIn('fd %d: closed -> pipe:[' % w, d)
        finally:
            os.close(r)
            os.close(w)
        self.assertEqual(h.fd_diff(before, h.fd_table(os.getpid())), '')


if __name__ == '__main__':
    unittest.main()
