#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of the parts of devtools/vnapitools/harness.py that need no DPDK process: the
testpmd statistics parsers (one block reader behind all three), the prompt finder and cmd()
(against a stand-in for interactive testpmd), and run_checks(), which turns a test body's
outcome into PASS/FAIL and the script's exit code."""

import contextlib
import io
import os
import signal
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


class TestPrompt(unittest.TestCase):
    def test_event_inside_the_prompt(self):
        # testpmd's event thread wrote between the prompt's characters.
        buf = ('Done\nt\nPort 0: queue state event\nestpmd> '
               '\nPort 0: link state change event\n')
        p, clean = h.find_prompt(buf)
        self.assertEqual(clean[:p], 'Done\n')
        self.assertEqual(clean[p:p + len(h.PROMPT)], h.PROMPT)

    def test_no_prompt(self):
        self.assertEqual(h.find_prompt('Done\ntestp\nPort 1: link state change event\n')[0],
                         -1)
        self.assertEqual(h.find_prompt('Done\ntestpmd')[0], -1)


# A stand-in for interactive testpmd: echoes each command, answers with two lines, and
# prints an asynchronous event where the command asks for one: "mid" between the reply's
# lines, "prompt" inside the next prompt (testpmd writes its prompt a character at a time).
FAKE_TESTPMD = r'''
import sys
EV = "\nPort 0: link state change event\n"
def w(s):
    sys.stdout.write(s)
    sys.stdout.flush()
w("testpmd> ")
for line in sys.stdin:
    c = line.strip()
    if c == "quit":
        break
    w(c + "\n")
    w("reply to " + c + "\n")
    if c == "mid":
        w(EV)
    w("done\n")
    if c == "prompt":
        w("tes" + EV + "tpmd> ")
    else:
        w("testpmd> ")
'''


class TestCmd(unittest.TestCase):
    def test_reply_without_events(self):
        # Wherever an event lands, the reply is the same two lines.
        p = h.DpdkProcess('fake', ['python3', '-c', FAKE_TESTPMD], deadline=30,
                          interactive=True)
        p.start()
        try:
            p.wait_prompt(10)
            for c in ('plain', 'mid', 'prompt', 'after'):
                self.assertEqual(p.cmd(c, 10), 'reply to %s\ndone\n' % c)
            self.assertEqual(len(p.find_all(h.LSC_RE)), 2)
        finally:
            self.assertEqual(p.stop(), 0)


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


def sh(script, name='p', interactive=False, grace=5.0, deadline=30.0, **kw):
    """A DpdkProcess running a shell script, started, its harness log kept quiet."""
    with contextlib.redirect_stdout(io.StringIO()):
        return h.DpdkProcess(name, ['sh', '-c', script], deadline=deadline,
                             interactive=interactive, grace=grace, **kw).start()


# A program that ends cleanly on SIGINT (as testpmd, vnapi-fwd and l3fwd-power do); sleep in
# the background so that the trap runs at once.
CLEAN = 'trap "exit 0" INT; echo up; while :; do sleep 0.05 & wait $!; done'


class TestExitJudged(unittest.TestCase):
    """Every end of a process is judged: by itself within the grace period after its quit
    command or SIGINT, with exit status 0 or the one the test expects."""

    def judge(self, procs):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            problems = h.stop_and_judge(procs)
        return problems, out.getvalue()

    def up(self, p):
        with contextlib.redirect_stdout(io.StringIO()):
            p.wait_for(r'^up', 10.0)
        return p

    def test_clean_sigint(self):
        p = self.up(sh(CLEAN))
        problems, out = self.judge([p])
        self.assertEqual(problems, [])
        self.assertRegex(out, r'ok: p \(pid \d+, sh\) ended after SIGINT, exit status 0')

    def test_quit_command(self):
        p = sh('read line; [ "$line" = quit ] && exit 0; exit 9', interactive=True)
        problems, out = self.judge([p])
        self.assertEqual(problems, [])
        self.assertEqual(p.ended_by, 'quit')

    def test_hang_at_sigint_fails(self):
        # a driver whose close never returns: the harness SIGKILLs it, the test fails
        p = self.up(sh('trap "" INT; echo up; while :; do sleep 0.05; done', grace=0.5))
        problems, _ = self.judge([p])
        self.assertEqual(len(problems), 1)
        self.assertRegex(problems[0], r'^p \(pid \d+, sh\): it did not end within 0 s of '
                         r'SIGINT; the harness SIGKILLed it \(exit status SIGKILL\)$')

    def test_hang_at_quit_fails(self):
        p = sh('trap "" INT; read line; while :; do sleep 0.05; done', interactive=True,
               grace=0.5)
        problems, _ = self.judge([p])
        self.assertEqual(len(problems), 1)
        self.assertIn('it did not end within 0 s of its quit command; the harness SIGKILLed it',
                      problems[0])

    def test_slow_quit_fails(self):
        # a close that takes longer than the grace period, then ends at SIGINT
        p = sh('trap "exit 0" INT; read line; while :; do sleep 0.05 & wait $!; done',
               interactive=True, grace=0.5)
        problems, _ = self.judge([p])
        self.assertEqual(len(problems), 1)
        self.assertRegex(problems[0], r'it did not end within 0 s of its quit command; it ended '
                         r'after SIGINT \(exit status 0\)$')

    def test_crash_at_stop_fails(self):
        p = self.up(sh('trap "kill -SEGV \\$\\$" INT; echo up; '
                       'while :; do sleep 0.05 & wait $!; done'))
        problems, _ = self.judge([p])
        self.assertEqual(len(problems), 1)
        self.assertRegex(problems[0],
                         r'exit status SIGSEGV \(it ended after SIGINT\), expected 0$')

    def test_status_other_than_expected_fails(self):
        p = sh('exit 3')
        self.assertEqual(p.wait_exit(10.0), 3)
        problems, _ = self.judge([p])
        self.assertEqual(problems, ['p (pid %d, sh): exit status 3 (it ended by itself), '
                                    'expected 0' % p.pid])
        self.assertEqual(self.judge([p.expect_exit(3)])[0], [])

    def test_deadline_fails(self):
        p = self.up(sh(CLEAN, deadline=0.5))
        self.assertEqual(p.wait_exit(10.0), 0)  # the deadline's stop: SIGINT, a clean end
        problems, _ = self.judge([p])
        self.assertEqual(len(problems), 1)
        self.assertIn('its deadline of 0 s expired', problems[0])

    def test_killed_by_the_test_is_expected(self):
        p = self.up(sh(CLEAN))
        with contextlib.redirect_stdout(io.StringIO()):
            p.kill()
        self.assertEqual(p.wait_exit(10.0), -signal.SIGKILL)
        self.assertEqual(self.judge([p])[0], [])

    def test_sigint_status(self):
        # OVS's daemons re-raise SIGINT: that is their clean end
        p = self.up(sh('echo up; while :; do sleep 0.05 & wait $!; done',
                       sigint_rc=-signal.SIGINT))
        self.assertEqual(self.judge([p])[0], [])

    def test_session_fails_the_body(self):
        with self.assertRaises(h.CheckFailed) as cm:
            with contextlib.redirect_stdout(io.StringIO()):
                with h.Session('ut') as s:
                    s.add(sh('trap "" INT; echo up; while :; do sleep 0.05; done',
                             name='frontend', grace=0.5)).wait_for(r'^up', 10.0)
        self.assertRegex(str(cm.exception), r'^process end: frontend \(pid \d+, sh\): it did '
                         r'not end within 0 s of SIGINT')

    def test_session_keeps_the_body_failure(self):
        out = io.StringIO()
        with self.assertRaises(h.Timeout):
            with contextlib.redirect_stdout(out):
                with h.Session('ut') as s:
                    s.add(sh('exit 4', name='backend')).wait_exit(10.0)
                    raise h.Timeout('no prompt')
        self.assertIn('FAIL (as well): process end: backend', out.getvalue())


@contextlib.contextmanager
def two_fds():
    """A pipe's two ends open for the block."""
    r, w = os.pipe()
    try:
        yield
    finally:
        os.close(r)
        os.close(w)


class TestOpenFds(unittest.TestCase):
    def test_counts_a_new_fd(self):
        n = h.open_fds(os.getpid())
        with two_fds():
            self.assertEqual(h.open_fds(os.getpid()), n + 2)
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
        with two_fds():
            self.assertEqual(h.open_fds_back_to(os.getpid(), n, timeout=0.1), n + 2)

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
        with two_fds():
            self.assertEqual(h.open_fds_settled(os.getpid()), n + 2)

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
