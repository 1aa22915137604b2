# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Integration harness: run DPDK processes (dpdk-testpmd) as peers over vhost-user.

Python 3 standard library only.

Rules this module enforces:
  * every process has a deadline and is ended by its PID: its quit command (interactive
    testpmd) or SIGINT, then SIGKILL after a grace period; an atexit guard and a SIGTERM
    handler end whatever is left, and the child gets PR_SET_PDEATHSIG so that it dies even if
    this interpreter is SIGKILLed;
  * every end is judged (DpdkProcess.exit_problem(), Session): the process must end by itself
    within the grace period after its quit command or SIGINT, with exit status 0 or the one
    the test expects (expect_exit()); a deadline that expires, a SIGKILL the harness had to
    send, or any other status fails the test and names the process;
  * waits are event-driven (an output line matching a regex, a condition on a polled counter),
    always with a deadline;
  * every process runs with --no-pci, pinned lcores, its own --file-prefix;
  * the vnapi plugin ($VNAPI_PLUGIN) is copied into a root-owned 0755 directory under /run/vnapi/
    because EAL refuses a -d path that crosses a world-writable directory.
"""

import atexit
import ctypes
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

# The /proc readers live in procfs; kept importable as harness.<name> for the scripts.
from . import sanitizer
from .procfs import (CLK_TCK, cpu_model, proc_cpu_s, proc_stat_fields,  # noqa: F401
                     proc_threads, thread_cpu_ticks)

TESTPMD = os.environ.get('VNAPI_TESTPMD', 'dpdk-testpmd')
PROMPT = 'testpmd> '
# testpmd prints an asynchronous event ("\nPort 0: link state change event\n") with one
# write from another thread, while its command line writes the prompt a character at a
# time: an event can land inside the prompt ("t" EVENT "estpmd> "). The prompt is looked
# for with these removed.
EVENT_RX = re.compile(r'\r?\nPort \d+: [A-Za-z ]+ event\r?\n')


def find_prompt(buf):
    """Where the prompt is in @buf, events inside it removed: (its index in the text with
    events removed, that text), or (-1, that text)."""
    clean = EVENT_RX.sub('', buf)
    return clean.find(PROMPT), clean

RUN_DIR = '/run/vnapi'
HUGEPAGE_DIR = '/dev/hugepages'
# testpmd's default mbuf pool (155456 mbufs, ~340 MB) does not fit in -m 512; 32768 mbufs are
# plenty for 2 queues x 1024 descriptors on each side.
DEFAULT_MBUFS = 32768

# Backend pins main lcore 0 on CPU 0 and the forwarding lcore 1 on CPU 1; the front end the
# other way round, so each CPU holds exactly one polling forwarder.
BACKEND_LCORES = '0@0,1@1'
FRONTEND_LCORES = '0@1,1@0'


# What testpmd prints (--print-event lsc) when port 0's link changes.
LSC_RE = r'Port 0: link state change event'


class HarnessError(Exception):
    pass


class Timeout(HarnessError):
    pass


class ProcessDied(HarnessError):
    pass


class Failure(HarnessError):
    """An exact outcome a test asserted did not hold (check(), or the test's own raise)."""


CheckFailed = Failure


def check(cond, msg, failures=None):
    """Assert one outcome of a test: print '  ok: msg', or raise Failure(msg); with a list
    @failures, print '  FAIL: msg' and append msg to it instead (a test that reports every
    failed check of a run)."""
    if cond:
        print('  ok: %s' % msg, flush=True)
    elif failures is None:
        raise Failure(msg)
    else:
        print('  FAIL: %s' % msg, flush=True)
        failures.append(msg)


def env_path(var):
    """The path meson gives a test in @var (a program, the plugin, a guest kernel); Failure
    when it is not set or does not exist."""
    p = os.environ.get(var)
    if not p:
        raise Failure('%s is not set (run through meson test, or export it)' % var)
    if not os.path.exists(p):
        raise Failure('%s=%s does not exist (build first)' % (var, p))
    return p


def run_checks(fn, *args, errors=()):
    """Run one test body fn(*args) and turn its outcome into the script's exit code: a
    HarnessError (a failed check() included) or one of @errors prints 'FAIL: why' and gives 1;
    so does a body that returns False or anything but None, True or an int. Otherwise the
    code is fn's int (e.g. 77, skipped), or 0 for None and True (a body that returns True for
    its own callers), and 0 prints 'PASS'."""
    try:
        rc = fn(*args)
    except (HarnessError,) + tuple(errors) as e:
        print('FAIL: %s' % e, flush=True)
        return 1
    if rc is None or rc is True:
        rc = 0
    elif rc is False or not isinstance(rc, int):
        print('FAIL: the test body returned %r, not a verdict (None, True or an exit code)'
              % (rc,), flush=True)
        return 1
    if rc == 0:
        print('PASS', flush=True)
    return rc


def log(msg):
    print('[harness %7.3f] %s' % (time.monotonic() - _T0, msg), flush=True)


_T0 = time.monotonic()

# How long a process gets to end by itself after its quit command or SIGINT (each) before the
# harness SIGKILLs it and the test fails: a hang detector, far above the second or so a
# testpmd quit takes here, with a driver's tx drain and a shared, sanitized machine.
STOP_GRACE = 15.0


def status_text(rc):
    """An exit status as a person reads it: '0', '1', 'SIGSEGV' (died of a signal)."""
    if rc is None:
        return 'none'
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return 'signal %d' % -rc
    return str(rc)


def stop_and_judge(procs):
    """End every process of @procs (in that order) and judge each end: prints one 'ok' line
    per process, returns the problems (exit_problem()), [] if none."""
    problems = []
    for p in procs:
        if p is None or p.proc is None:
            continue
        try:
            p.stop()
        except Exception as e:  # never let one failure leave the others running
            problems.append('%s: stopping it failed: %s' % (p.describe(), e))
            continue
    for p in procs:
        if p is None or p.proc is None or p.judged:
            continue
        why = p.exit_problem()
        if why:
            problems.append(why)
        else:
            p.judged = True
            print('  ok: %s %s, exit status %s' % (p.describe(), p.how_ended(),
                                                   status_text(p.returncode)), flush=True)
    return problems


def check_exits(procs):
    """stop_and_judge(@procs); CheckFailed naming every process that did not end as it
    must."""
    problems = stop_and_judge(procs)
    if problems:
        raise CheckFailed('process end: ' + '; '.join(problems))

# --------------------------------------------------------------------------------------------
# Process registry and guards
# --------------------------------------------------------------------------------------------

_live = set()
_live_lock = threading.Lock()
_guards_installed = False


def _end_all():
    with _live_lock:
        procs = list(_live)
    for p in procs:
        try:
            p.stop()
        except Exception as e:  # never let one failure leave the others running
            print('harness: stopping %s failed: %s' % (p.name, e), file=sys.stderr)


def _on_signal(signum, frame):
    # Turn SIGTERM/SIGHUP (meson's timeout, a closed terminal) into SystemExit so that every
    # finally block and the atexit guard run.
    raise SystemExit(128 + signum)


def install_guards():
    """atexit + SIGTERM/SIGHUP -> end every process this interpreter started."""
    global _guards_installed
    if _guards_installed:
        return
    _guards_installed = True
    atexit.register(_end_all)
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, _on_signal)


_PR_SET_PDEATHSIG = 1
try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover
    _libc = None


def _child_setup():
    # Runs in the child between fork and exec: if this interpreter dies without cleaning up,
    # the kernel sends the child SIGTERM (testpmd handles it like SIGINT).
    if _libc is not None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


# --------------------------------------------------------------------------------------------
# A DPDK process
# --------------------------------------------------------------------------------------------

class Line:
    __slots__ = ('t', 'stream', 'text')

    def __init__(self, t, stream, text):
        self.t = t
        self.stream = stream
        self.text = text


class DpdkProcess:
    """One DPDK process with captured stdout/stderr, a deadline and PID-based shutdown.

    stdout is made line-buffered with stdbuf (testpmd's printf output is otherwise held in a
    4 KB stdio buffer while its prompt is written directly, so replies would arrive only at exit).
    """

    def __init__(self, name, argv, deadline=120.0, interactive=False, cleanup=None,
                 grace=STOP_GRACE, echo=None, sigint_rc=0, env=None):
        self.name = name
        self.env = env           # the child's environment (None: this process's)
        self.argv = list(argv)
        self.deadline = deadline
        self.interactive = interactive
        self.grace = grace
        self.cleanup = cleanup or []
        self.echo = (os.environ.get('VNAPI_HARNESS_ECHO') == '1') if echo is None else echo
        self.proc = None
        self.lines = []          # complete lines of both streams, in arrival order
        self.out = ''            # all of stdout (prompt included)
        self.err = ''            # all of stderr
        self.cond = threading.Condition()
        self.deadline_hit = False
        self.returncode = None
        # How it ended, for exit_problem(): 'itself' (before anyone asked), 'quit', 'SIGINT'
        # (the harness's or a test's, kill()), or a signal a test sent to end it otherwise.
        self.ended_by = None
        # Why the harness had to SIGKILL it (a deadline, no end within the grace period);
        # None when it ended by itself.
        self.forced = None
        # The exit status of a clean end on SIGINT (OVS's daemons re-raise it: -2), and the
        # status a test expects (expect_exit()), which overrides both.
        self.sigint_rc = sigint_rc
        self.expected_rc = None
        self.judged = False      # its end was judged good (stop_and_judge())
        self.sigkilled = False   # the harness had to send SIGKILL
        self._stop_lock = threading.RLock()
        self._readers = []
        self._timer = None
        self._stopped = False

    # ---- lifecycle ----
    def start(self):
        install_guards()
        argv = ['stdbuf', '-oL', '-eL'] + self.argv
        log('%s: start: %s' % (self.name, ' '.join(self.argv)))
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if self.interactive else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=_child_setup, close_fds=True, env=self.env)
        with _live_lock:
            _live.add(self)
        self.t_start = time.monotonic()
        for stream, f in (('out', self.proc.stdout), ('err', self.proc.stderr)):
            th = threading.Thread(target=self._reader, args=(stream, f), daemon=True,
                                  name='%s-%s' % (self.name, stream))
            th.start()
            self._readers.append(th)
        self._timer = threading.Timer(self.deadline, self._deadline_expired)
        self._timer.daemon = True
        self._timer.start()
        return self

    @property
    def pid(self):
        return self.proc.pid

    def _deadline_expired(self):
        if self.alive():
            self.deadline_hit = True
            self._force('its deadline of %.0f s expired' % self.deadline)
            log('%s: deadline of %.0f s expired, ending pid %d'
                % (self.name, self.deadline, self.proc.pid))
            self.stop()

    def _force(self, why):
        """Record the first reason the harness had to end it (a failure of the test)."""
        if self.forced is None:
            self.forced = why

    def _reader(self, stream, f):
        fd = f.fileno()
        partial = ''
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b''
            if not chunk:
                break
            text = chunk.decode('utf-8', 'replace')
            now = time.monotonic()
            with self.cond:
                if stream == 'out':
                    self.out += text
                else:
                    self.err += text
                parts = (partial + text).split('\n')
                partial = parts.pop()
                for p in parts:
                    p = p.rstrip('\r')
                    self.lines.append(Line(now, stream, p))
                    sanitizer.scan('%s.%s' % (self.name, stream), p)
                    if self.echo:
                        sys.stdout.write('  %s.%s| %s\n' % (self.name, stream, p))
                self.cond.notify_all()
        with self.cond:
            if partial:
                self.lines.append(Line(time.monotonic(), stream, partial))
            self.cond.notify_all()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout):
        """Wait for the process to exit on its own; return its exit code or None."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        self._finish()
        return rc

    def _finish(self):
        if self.proc is None:
            return
        for th in self._readers:
            th.join(timeout=2.0)
        self.returncode = self.proc.returncode
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None and not any(th.is_alive() for th in self._readers):
                try:
                    f.close()
                except OSError:
                    pass
        if self._timer:
            self._timer.cancel()
        with _live_lock:
            _live.discard(self)
        with self.cond:
            self.cond.notify_all()
        if not self._stopped:
            self._stopped = True
            for fn in self.cleanup:
                try:
                    fn()
                except Exception as e:
                    print('harness: cleanup of %s: %s' % (self.name, e), file=sys.stderr)

    def kill(self, sig=signal.SIGKILL):
        """Send one signal to the process, by PID. SIGINT (or SIGTERM) asks for a clean end,
        judged like stop()'s; any other signal (SIGKILL: a crashed peer) makes death by that
        signal the exit status expected of it, unless the test said otherwise."""
        if self.alive():
            log('%s: signal %s to pid %d' % (self.name, signal.Signals(sig).name, self.pid))
            if sig in (signal.SIGINT, signal.SIGTERM):
                self.ended_by = 'SIGINT'
            else:
                self.ended_by = signal.Signals(sig).name
                if self.expected_rc is None:
                    self.expected_rc = -sig
            os.kill(self.proc.pid, sig)

    def expect_exit(self, rc):
        """The exit status this process must end with (instead of 0, or sigint_rc)."""
        self.expected_rc = rc
        return self

    def stop(self, quit_first=True):
        """End the process: 'quit' (interactive), else SIGINT; SIGKILL if it has not ended
        within the grace period, which exit_problem() then reports. Returns the exit code.
        Safe to call more than once, and from the deadline's timer."""
        if self.proc is None:
            return None
        with self._stop_lock:
            return self._stop(quit_first)

    def _stop(self, quit_first):
        if not self.alive():
            if self.ended_by is None:
                self.ended_by = 'itself'
            self.proc.wait()
            self._finish()
            return self.returncode
        if quit_first and self.interactive:
            t0 = time.monotonic()
            try:
                self.proc.stdin.write(b'quit\n')
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass
            if self.wait_exit(self.grace) is not None:
                self.ended_by = self.ended_by or 'quit'
                log('%s: ended %.1f s after quit, exit status %s'
                    % (self.name, time.monotonic() - t0, self.returncode))
                return self.returncode
            self._force('it did not end within %.0f s of its quit command' % self.grace)
        if self.alive():
            log('%s: SIGINT to pid %d' % (self.name, self.proc.pid))
            t0 = time.monotonic()
            try:
                os.kill(self.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            if self.ended_by is None:
                self.ended_by = 'SIGINT'
            if self.wait_exit(self.grace) is not None:
                log('%s: ended %.1f s after SIGINT, exit status %s'
                    % (self.name, time.monotonic() - t0, self.returncode))
                return self.returncode
            self._force('it did not end within %.0f s of SIGINT' % self.grace)
        if self.alive():
            log('%s: SIGKILL to pid %d (%s)' % (self.name, self.proc.pid, self.forced))
            self.sigkilled = True
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self._finish()
        return self.returncode

    def describe(self):
        """'name (pid N, program)': how a verdict names the process."""
        return '%s (pid %s, %s)' % (self.name, self.proc.pid if self.proc else '-',
                                    os.path.basename(self.argv[0]) if self.argv else '?')

    def how_ended(self):
        return {'itself': 'ended by itself', 'quit': 'ended after its quit command',
                'SIGINT': 'ended after SIGINT', None: 'has not been stopped'}.get(
                    self.ended_by, 'was killed by the test (%s)' % self.ended_by)

    def expected_status(self):
        """The exit status this process must have ended with."""
        if self.expected_rc is not None:
            return self.expected_rc
        return self.sigint_rc if self.ended_by == 'SIGINT' else 0

    def exit_problem(self):
        """None if the process ended as it must (by itself within the grace period after
        its quit command or SIGINT, with the expected exit status), else why not, naming it.
        Call it after stop() (a running process is a problem too)."""
        if self.proc is None:
            return None
        if self.alive():
            return '%s: still running' % self.describe()
        if self.ended_by is None:
            self.ended_by = 'itself'
        if self.forced:
            return '%s: %s; %s (exit status %s)' % (
                self.describe(), self.forced,
                'the harness SIGKILLed it' if self.sigkilled else 'it ' + self.how_ended(),
                status_text(self.returncode))
        want = self.expected_status()
        if self.returncode != want:
            return '%s: exit status %s (it %s), expected %s' % (
                self.describe(), status_text(self.returncode), self.how_ended(),
                status_text(want))
        return None

    # ---- output ----
    def mark(self):
        """A position in the line list, for wait_for(..., since=mark)."""
        with self.cond:
            return len(self.lines)

    def wait_for(self, regex, timeout, stream=None, since=0, what=None):
        """Wait for a complete output line matching regex (on 'out', 'err' or either).
        Returns the re.Match. Raises Timeout, or ProcessDied if the process exits first."""
        rx = re.compile(regex)
        end = time.monotonic() + timeout
        i = since
        with self.cond:
            while True:
                while i < len(self.lines):
                    ln = self.lines[i]
                    i += 1
                    if stream and ln.stream != stream:
                        continue
                    m = rx.search(ln.text)
                    if m:
                        return m
                if self.proc.poll() is not None and all(not t.is_alive() for t in self._readers):
                    raise ProcessDied('%s exited (rc=%s) before %s\n%s'
                                      % (self.name, self.proc.returncode, what or repr(regex),
                                         self.tail()))
                left = end - time.monotonic()
                if left <= 0:
                    raise Timeout('%s: no line matching %s within %.1f s\n%s'
                                  % (self.name, what or repr(regex), timeout, self.tail()))
                self.cond.wait(min(left, 0.5))

    def find_all(self, regex, stream=None, since=0):
        rx = re.compile(regex)
        with self.cond:
            lines = self.lines[since:]
        return [(ln, m) for ln in lines if (not stream or ln.stream == stream)
                for m in [rx.search(ln.text)] if m]

    def text(self, stream=None, since=0):
        with self.cond:
            return '\n'.join(ln.text for ln in self.lines[since:]
                             if not stream or ln.stream == stream)

    def tail(self, n=40):
        with self.cond:
            return '\n'.join('  %s.%s| %s' % (self.name, ln.stream, ln.text)
                             for ln in self.lines[-n:])

    # ---- interactive testpmd ----
    def wait_prompt(self, timeout=30.0):
        """Wait for the first testpmd prompt (startup done)."""
        end = time.monotonic() + timeout
        with self.cond:
            while find_prompt(self.out)[0] < 0:
                if not self.alive() and all(not t.is_alive() for t in self._readers):
                    raise ProcessDied('%s exited (rc=%s) before its prompt\n%s'
                                      % (self.name, self.proc.returncode, self.tail()))
                left = end - time.monotonic()
                if left <= 0:
                    raise Timeout('%s: no prompt within %.1f s\n%s'
                                  % (self.name, timeout, self.tail()))
                self.cond.wait(min(left, 0.5))

    def cmd(self, command, timeout=20.0):
        """Send one testpmd command; return its reply: the text between the echo and the
        next prompt, without the asynchronous event lines printed meanwhile (they stay in
        the process's output, where wait_for() and find_all() see them)."""
        if not self.interactive:
            raise HarnessError('%s is not interactive' % self.name)
        with self.cond:
            start = len(self.out)
        try:
            self.proc.stdin.write((command + '\n').encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as e:
            raise ProcessDied('%s: cannot send %r: %s\n%s' % (self.name, command, e, self.tail()))
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                buf = self.out[start:]
                # The reply ends at the prompt printed after the echoed command line; an
                # event may have landed anywhere in it, the prompt included.
                nl = buf.find('\n')
                if nl >= 0:
                    p, clean = find_prompt(buf[nl + 1:])
                    if p >= 0:
                        return clean[:p].replace('\r', '')
                if not self.alive() and all(not t.is_alive() for t in self._readers):
                    raise ProcessDied('%s exited (rc=%s) during %r\n%s'
                                      % (self.name, self.proc.returncode, command, self.tail()))
                left = end - time.monotonic()
                if left <= 0:
                    raise Timeout('%s: no reply to %r within %.1f s\n%s'
                                  % (self.name, command, timeout, self.tail()))
                self.cond.wait(min(left, 0.5))

    def port_stats(self, port=0):
        return parse_port_stats(self.cmd('show port stats %d' % port)).get(port, {})

    def port_stats_all(self):
        return parse_port_stats(self.cmd('show port stats all'))

    def port_xstats(self, port=0):
        return parse_xstats(self.cmd('show port xstats %d' % port))

    def port_info(self, port=0):
        return parse_colon_fields(self.cmd('show port info %d' % port))

    def link_up(self, port=0):
        return self.port_info(port).get('Link status') == 'up'

    def start_fwd(self, mode=None):
        if mode:
            r = self.cmd('set fwd %s' % mode)
            if 'Set %s packet forwarding mode' % mode not in r:
                raise HarnessError('%s: set fwd %s: %r' % (self.name, mode, r))
        r = self.cmd('start')
        if 'packet forwarding' not in r:
            raise HarnessError('%s: start: %r' % (self.name, r))
        return r

    def stop_fwd(self):
        """'stop'; returns the forward statistics per port (counts since the last 'start')."""
        r = self.cmd('stop', timeout=30.0)
        return parse_fwd_stats(r)


# --------------------------------------------------------------------------------------------
# Parsers for testpmd output
# --------------------------------------------------------------------------------------------

_KV = re.compile(r'([A-Za-z][A-Za-z-]*):\s+(\d+)')


def _counter_blocks(texts, start, end, total=None):
    """Blocks of 'Name: n' counters in a sequence of lines: yields (i, key, {name: n}) per
    block, key = the port number regex @start captures ('all' for a line containing @total),
    i = the index of the line that closes it (one starting with @end, a prefix or a tuple of
    them), None for a block cut short by the next one or by the end of the text."""
    key, vals = None, None
    for i, line in enumerate(texts):
        m = re.search(start, line)
        if m or (total is not None and total in line):
            if key is not None:
                yield None, key, vals
            key, vals = (int(m.group(1)) if m else 'all'), {}
            continue
        if key is None:
            continue
        if line.strip().startswith(end):
            yield i, key, vals
            key = None
            continue
        for k, v in _KV.findall(line):
            vals[k] = int(v)
    if key is not None:
        yield None, key, vals


_NIC_STATS = (r'NIC statistics for port (\d+)', '####')


def parse_port_stats(text):
    """'show port stats' / --stats-period blocks -> {port: {'RX-packets': n, 'TX-packets': n,
    'RX-bytes', 'RX-missed', 'RX-errors', 'RX-nombuf', 'TX-errors', 'TX-bytes', 'Rx-pps',
    'Tx-pps', 'Rx-bps', 'Tx-bps'}}; the last block of a port wins."""
    return {port: vals for _, port, vals in _counter_blocks(text.splitlines(), *_NIC_STATS)}


def parse_stats_blocks(lines):
    """Every NIC statistics block in a list of Line objects (from --stats-period output) ->
    [(t, port, {counters})], t = arrival time of the block's closing line."""
    return [(lines[i].t, port, vals)
            for i, port, vals in _counter_blocks([ln.text for ln in lines], *_NIC_STATS)
            if i is not None]


def parse_fwd_stats(text):
    """Forward statistics (printed by 'stop' and at exit) -> {port: {'RX-packets', 'RX-dropped',
    'RX-total', 'TX-packets', 'TX-dropped', 'TX-total'}}; 'all' for the accumulated block."""
    return {port: vals for _, port, vals in
            _counter_blocks(text.splitlines(), r'Forward statistics for port (\d+)',
                            ('----', '++++'), total='Accumulated forward statistics')}


def parse_xstats(text):
    """'show port xstats N' -> {name: value}."""
    res = {}
    for line in text.splitlines():
        m = re.match(r'\s*([A-Za-z0-9_\[\]\-.]+):\s+(\d+)\s*$', line)
        if m:
            res[m.group(1)] = int(m.group(2))
    return res


def parse_colon_fields(text):
    res = {}
    for line in text.splitlines():
        if ':' in line:
            k, v = line.split(':', 1)
            res[k.strip()] = v.strip()
    return res


# --------------------------------------------------------------------------------------------
# Environment: plugin, memory, names
# --------------------------------------------------------------------------------------------

_counter = itertools.count()


def parse_kv(text):
    """'a=1 b=2.5 c=x' -> {'a': 1, 'b': 2.5, 'c': 'x'}."""
    out = {}
    for k, v in re.findall(r'(\w+)=(\S+)', text):
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def telemetry(prefix, cmd, timeout=5.0):
    """One DPDK telemetry command over the v2 socket of the process with file prefix @prefix
    (what dpdk-telemetry.py does); returns the decoded reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(timeout)
        s.connect('/var/run/dpdk/%s/dpdk_telemetry.v2' % prefix)
        s.recv(16384)                           # the greeting
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20).decode())


def fd_table(pid):
    """{fd: what it points to} of a process (/proc/PID/fd), to name the fds a count differs by."""
    out = {}
    d = '/proc/%d/fd' % pid
    for fd in os.listdir(d):
        try:
            out[int(fd)] = os.readlink(os.path.join(d, fd))
        except OSError:
            continue  # closed meanwhile
    return out


def fd_diff(before, after):
    """What changed between two fd_table()s, as text ('' when nothing did)."""
    parts = []
    for fd in sorted(set(before) | set(after)):
        a, b = before.get(fd), after.get(fd)
        if a != b:
            parts.append('fd %d: %s -> %s' % (fd, a or 'closed', b or 'closed'))
    return '; '.join(parts)


def open_fds(pid):
    """The open fds of a process (/proc/PID/fd), except the connections its telemetry server
    accepted (they close in the server's own thread, a moment after the client's end): a count
    to compare with a baseline."""
    telemetry_inodes = set()
    try:
        with open('/proc/net/unix') as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if len(parts) >= 8 and 'dpdk_telemetry' in parts[7]:
                    telemetry_inodes.add(parts[6])
    except OSError:
        pass
    n = 0
    d = '/proc/%d/fd' % pid
    for fd in os.listdir(d):
        try:
            target = os.readlink(os.path.join(d, fd))
        except OSError:
            continue  # closed meanwhile
        m = re.match(r'socket:\[(\d+)\]$', target)
        if m and m.group(1) in telemetry_inodes:
            continue
        n += 1
    return n


def open_fds_settled(pid, reads=3, interval=0.01, timeout=2.0, count=None):
    """open_fds(pid) once @reads consecutive reads @interval apart agree (bounded by
    @timeout; the last read then): a baseline. A single read can land in a moment when a
    process holds one fd more or fewer than it keeps: EAL's interrupt thread closes its
    epoll fd and makes a new one whenever a callback is registered or removed, and glibc's
    syslog() opens and closes a datagram socket for every log line while no syslog daemon
    listens (l3fwd-power logs every wakeup). CI saw such a baseline once (22 after the
    warm-up where every other run holds 23). @count replaces open_fds (for tests)."""
    count = count or open_fds
    deadline = time.monotonic() + timeout
    last, same = count(pid), 1
    while same < reads and time.monotonic() < deadline:
        time.sleep(interval)
        n = count(pid)
        same = same + 1 if n == last else 1
        last = n
    return last


def open_fds_back_to(pid, baseline, timeout=3.0):
    """open_fds(pid) once it is back to @baseline, or what it is at the deadline: an fd a
    process closes a moment later (a telemetry connection, EAL's interrupt thread) is not a
    leak; one still open after @timeout is."""
    deadline = time.monotonic() + timeout
    while True:
        n = open_fds(pid)
        if n == baseline or time.monotonic() >= deadline:
            return n
        time.sleep(0.01)


def unique(tag):
    """A short unique name for a file prefix (pid + counter keeps parallel runs apart)."""
    return 'vn%s%d_%d' % (tag, os.getpid(), next(_counter))


def _secure_dir(path):
    os.makedirs(path, mode=0o755, exist_ok=True)
    st = os.stat(path)
    if st.st_uid != 0 or (st.st_mode & 0o022):
        os.chown(path, 0, 0)
        os.chmod(path, 0o755)


def _check_no_world_writable(path):
    d = os.path.dirname(os.path.abspath(path))
    while True:
        st = os.stat(d)
        if st.st_mode & stat.S_IWOTH:  # sticky or not: EAL refuses both
            raise HarnessError('%s is world-writable: EAL would refuse a plugin under it' % d)
        if d == '/':
            break
        d = os.path.dirname(d)


def plugin_source():
    p = os.environ.get('VNAPI_PLUGIN')
    if not p:
        raise HarnessError('VNAPI_PLUGIN is not set (path of the built librte_net_vnapi.so)')
    if not os.path.exists(p):
        raise HarnessError('VNAPI_PLUGIN=%s does not exist (build first)' % p)
    return p


def prepare_plugin(src=None):
    """Copy the plugin into /run/vnapi/plugins/<content hash>/librte_net_vnapi.so (root-owned,
    0755 all the way up) and return that path, for EAL's -d."""
    src = src or plugin_source()
    with open(src, 'rb') as f:
        data = f.read()
    h = hashlib.sha256(data).hexdigest()[:16]
    _secure_dir(RUN_DIR)
    _secure_dir(os.path.join(RUN_DIR, 'plugins'))
    d = os.path.join(RUN_DIR, 'plugins', h)
    _secure_dir(d)
    dst = os.path.join(d, 'librte_net_vnapi.so')
    if not os.path.exists(dst):
        tmp = dst + '.tmp%d' % os.getpid()
        with open(tmp, 'wb') as f:
            f.write(data)
        os.chmod(tmp, 0o755)
        os.rename(tmp, dst)
    _check_no_world_writable(dst)
    return dst


def free_hugepages_2m():
    try:
        with open('/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages') as f:
            n = int(f.read())
    except OSError:
        return 0
    if not os.path.ismount(HUGEPAGE_DIR):
        return 0
    return n


class Memory:
    """EAL memory options. Default for tests: --no-huge -m 512 (memfd-backed, shareable)."""

    def __init__(self, huge=False, mb=512):
        self.huge = huge
        self.mb = mb

    def eal_args(self):
        if self.huge:
            return ['--single-file-segments', '-m', str(self.mb)]
        return ['--no-huge', '-m', str(self.mb)]

    def describe(self):
        if self.huge:
            return '2 MB hugepages, --single-file-segments -m %d' % self.mb
        return '--no-huge -m %d (memfd)' % self.mb

    @staticmethod
    def best(processes=2, mb=256):
        """Hugepages if enough free 2 MB pages for `processes` x `mb`, else --no-huge."""
        need = processes * (mb // 2) + 16
        if free_hugepages_2m() >= need:
            return Memory(huge=True, mb=mb)
        return Memory(huge=False, mb=512)


def _rm_runtime(prefix):
    def fn():
        shutil.rmtree(os.path.join('/var/run/dpdk', prefix), ignore_errors=True)
        try:
            for n in os.listdir(HUGEPAGE_DIR):
                if n.startswith(prefix + 'map_'):
                    os.unlink(os.path.join(HUGEPAGE_DIR, n))
        except OSError:
            pass
    return fn


class Workdir:
    """A private temporary directory for sockets (removed at close)."""

    def __init__(self, tag='it'):
        self.path = tempfile.mkdtemp(prefix='vnapi-%s-' % tag)
        self._n = itertools.count()

    def socket(self, name='vhost'):
        p = os.path.join(self.path, '%s%d.sock' % (name, next(self._n)))
        if len(p) >= 107:
            raise HarnessError('socket path too long: %s' % p)
        return p

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Front ends and testpmd command lines
# --------------------------------------------------------------------------------------------

class FrontEnd:
    """A front-end spec: 'vnapi', 'virtio_user', optionally with extra devargs after ':' or ',',
    e.g. 'vnapi:mrg_rxbuf=1,event_idx=0' or 'virtio_user,queue_size=1024'."""

    DRIVERS = {'vnapi': 'net_vnapi', 'virtio_user': 'net_virtio_user'}

    def __init__(self, spec):
        m = re.match(r'\s*([A-Za-z_]+)\s*(?:[:,](.*))?$', spec)
        name, extra = (m.group(1), m.group(2) or '') if m else (spec, '')
        if name not in self.DRIVERS:
            raise HarnessError('unknown front end %r (allowed: %s)'
                               % (name, ', '.join(sorted(self.DRIVERS))))
        self.name = name
        self.driver = self.DRIVERS[name]
        self.extra = [a for a in extra.split(',') if a]
        self.spec = spec

    def needs_plugin(self):
        return self.name == 'vnapi'

    def vdev(self, path=None, queues=None, extra=(), index=0):
        args = []
        if path is not None:
            args.append('path=%s' % path)
        if queues is not None and queues != 1:
            args.append('queues=%d' % queues)
        args += self.extra + list(extra)
        return ','.join(['%s%d' % (self.driver, index)] + args)


def testpmd_argv(prefix, lcores, vdevs, mem=None, plugins=(), interactive=True,
                 fwd=None, stats_period=None, rxq=1, txq=1, nb_cores=1, mbufs=DEFAULT_MBUFS,
                 eal_extra=(), app_extra=()):
    mem = mem or Memory()
    argv = [TESTPMD, '--no-pci', '--lcores', lcores, '--file-prefix', prefix]
    argv += mem.eal_args()
    for p in plugins:
        argv += ['-d', p]
    for v in vdevs:
        argv += ['--vdev', v]
    argv += list(eal_extra)
    argv += ['--']
    if interactive:
        argv += ['-i']
    if fwd:
        argv += ['--forward-mode=%s' % fwd]
    if stats_period:
        argv += ['--stats-period=%d' % stats_period]
    if rxq != 1 or txq != 1:
        argv += ['--rxq=%d' % rxq, '--txq=%d' % txq]
    argv += ['--nb-cores=%d' % nb_cores]
    if mbufs:
        argv += ['--total-num-mbufs=%d' % mbufs]
    argv += list(app_extra)
    return argv


def start_testpmd(name, argv, prefix, deadline=120.0, interactive=True):
    p = DpdkProcess(name, argv, deadline=deadline, interactive=interactive,
                    cleanup=[_rm_runtime(prefix)])
    return p.start()


def start_backend(workdir, sock=None, queues=1, mem=None, interactive=True, fwd=None,
                  stats_period=None, deadline=120.0, app_extra=(), startup_timeout=60.0):
    """net_vhost (vhost-user server) in testpmd; returns (process, socket path) once the
    socket exists."""
    sock = sock or workdir.socket()
    prefix = unique('b')
    vdev = 'net_vhost0,iface=%s,queues=%d' % (sock, queues)
    argv = testpmd_argv(prefix, BACKEND_LCORES, [vdev], mem=mem, interactive=interactive,
                        fwd=fwd, stats_period=stats_period, rxq=queues, txq=queues,
                        app_extra=app_extra)
    p = start_testpmd('backend', argv, prefix, deadline=deadline, interactive=interactive)
    try:
        p.wait_for(r'\(%s\) binding succeeded' % re.escape(sock), startup_timeout,
                   what='vhost-user socket bound')
        if interactive:
            p.wait_prompt(startup_timeout)
    except BaseException:
        p.stop()
        raise
    return p, sock


def start_frontend(spec, sock, queues=1, mem=None, interactive=True, fwd=None,
                   stats_period=None, deadline=120.0, extra_devargs=(), app_extra=(),
                   eal_extra=(), wait=True, startup_timeout=60.0):
    fe = spec if isinstance(spec, FrontEnd) else FrontEnd(spec)
    prefix = unique('f')
    plugins = [prepare_plugin()] if fe.needs_plugin() else []
    vdev = fe.vdev(path=sock, queues=queues, extra=extra_devargs)
    argv = testpmd_argv(prefix, FRONTEND_LCORES, [vdev], mem=mem, plugins=plugins,
                        interactive=interactive, fwd=fwd, stats_period=stats_period,
                        rxq=queues, txq=queues, eal_extra=eal_extra, app_extra=app_extra)
    p = start_testpmd('frontend-%s' % fe.name, argv, prefix, deadline=deadline,
                      interactive=interactive)
    if wait:
        try:
            if interactive:
                p.wait_prompt(startup_timeout)
            else:
                p.wait_for(r'(No commandline core given, start packet forwarding|'
                           r'packet forwarding - ports=)', startup_timeout,
                           what='forwarding started')
        except BaseException:
            p.stop()
            raise
    return p


def wait_backend_ready(backend, queues=1, timeout=30.0, since=0):
    """Wait until net_vhost reports the device ready (all vrings configured)."""
    backend.wait_for(r'virtio is now ready for processing', timeout, since=since,
                     what='vhost device ready')


def poll_until(fn, timeout, interval=0.2, what='condition'):
    """Call fn() until it returns a truthy value (returned) or the deadline passes (Timeout).
    For counters that have no event to wait on."""
    end = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= end:
            raise Timeout('%s not reached within %.1f s (last: %r)' % (what, timeout, last))
        time.sleep(interval)


def wait_counter(proc, key, target, timeout, port=0, what=None):
    """Poll 'show port stats' until stats[key] == target; return the stats. Raises Timeout with
    the last value if it never gets there (or overshoots)."""
    last = {}

    def check():
        nonlocal last
        last = proc.port_stats(port)
        v = last.get(key, -1)
        if v > target:
            raise HarnessError('%s: %s = %d overshoots the expected %d'
                               % (proc.name, key, v, target))
        return last if v == target else None

    try:
        return poll_until(check, timeout, what=what or '%s %s == %d' % (proc.name, key, target))
    except Timeout:
        raise Timeout('%s: %s stuck at %s, expected %d after %.0f s'
                      % (proc.name, key, last.get(key), target, timeout))


def wait_stable(proc, key, timeout, settle=1.0, port=0):
    """Poll a counter until it has not moved for `settle` seconds; return the stats."""
    end = time.monotonic() + timeout
    prev = proc.port_stats(port)
    t_prev = time.monotonic()
    while True:
        time.sleep(0.2)
        cur = proc.port_stats(port)
        if cur.get(key) != prev.get(key):
            prev, t_prev = cur, time.monotonic()
        elif time.monotonic() - t_prev >= settle:
            return cur
        if time.monotonic() > end:
            raise Timeout('%s: %s still moving after %.0f s' % (proc.name, key, timeout))


class Session:
    """Context manager that owns processes and a workdir and ends them all on exit."""

    def __init__(self, tag='it'):
        self.workdir = Workdir(tag)
        self.procs = []

    def add(self, p):
        self.procs.append(p)
        return p

    def __enter__(self):
        install_guards()
        return self

    def __exit__(self, exc_type, exc, tb):
        # Front ends first (they are the vhost-user clients), then backends; every end is
        # judged (check_exits()). With the body's own failure on its way, the problems are
        # printed beside it; otherwise they fail the test.
        try:
            problems = stop_and_judge(list(reversed(self.procs)))
        finally:
            self.workdir.close()
        if problems and exc_type is None:
            raise CheckFailed('process end: ' + '; '.join(problems))
        for why in problems:
            print('FAIL (as well): process end: %s' % why, flush=True)
        return False
