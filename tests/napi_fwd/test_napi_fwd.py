#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""vnapi-fwd (lib/napi, hybrid mode) over net_vnapi, against echo_peer (DPDK's net_vhost).

Usage: test_napi_fwd.py CASE [FRONTEND [MODE]]
       CASE: burst | idle | sparse | latency;  FRONTEND: vnapi (default) | vnapi_packed | virtio_user
       MODE (latency only): poll | interrupt | hybrid
Paths from the environment (meson sets them): VNAPI_PLUGIN, VNAPI_FWD, VNAPI_ECHO_PEER.
Exit 0 pass, 1 fail, 77 skip.

  burst   20000 packets in bursts of 32 (at most 256 in flight, 50 us between bursts),
          macswap: the peer gets exactly 20000 back with swapped MACs, and vnapi-fwd's final
          line says rx = tx = 20001 (with the warm-up packet), dropped = 0.
  idle    after the warm-up, 8 s of no traffic; over a 5 s window inside it vnapi-fwd's CPU
          (utime+stime of all threads, /proc/PID/stat) must stay under 0.5 % and its napi
          context must see no wakeup (read with the /napi/stats telemetry command, before and
          after the window); then one check packet must return within 5 ms.
  sparse  300 single packets, each 0.2-3 ms after the previous came back: none lost, each back
          within 5 ms net (as in latency below: no lost wakeups).

  latency 2000 single packets in pairs: each a random 0.1-1.9 ms (1 ms +-90 %) after the
          previous came back, every second one only 35-665 us (350 us +-90 %) after it, so
          that packets land around the moment the receiver re-arms (issue 13's traffic, closed
          loop). vnapi-fwd --mode MODE. Exact counts (rx = tx = 2001, nothing lost or dropped),
          no packet over 5 ms net of the run-queue wait of both processes (the peer reads
          /proc/PID/schedstat around every round trip: on this shared 2-CPU VM other programs
          hold the CPUs for milliseconds, which says nothing about the scheduler), and per mode:
          poll never sleeps, interrupt and hybrid sleep and wake. MODE hybrid first runs the
          same traffic against --mode interrupt and requires hybrid to poll at most one round
          more per wakeup than interrupt mode (its idle polls skipped after long sleeps: the
          fix of issue 13) and hybrid's net p99 to be no more than LATENCY_SPREAD_US above
          interrupt's (the run-to-run spread of interrupt mode's net p99 measured on this
          machine, doc/napi.md). "Net" also takes out the time the peer itself did not run
          (gaps over 100 us in its busy wait: on this VM the host deschedules a vCPU for
          milliseconds, even in poll mode, and no schedstat shows it) and the time vnapi-fwd's
          CPU was not there (a stall probe thread on that CPU, tests/common/peer_stall.h; a
          vnapi-fwd asleep on a lost wakeup leaves its CPU idle, which the probe does not
          count); a round trip during
          which the machine's steal time (/proc/stat) grew is not held to the bound but
          reported (WARNING line): the hypervisor took the CPUs, not lib/napi. A failed run
          is repeated once and the repeat decides (RETRY line): on this VM the host stalls a
          vCPU for 5-20 ms a few times a minute under load, which steal does not always show
          (/proc/stat counts it in 10 ms ticks); a lib/napi fault repeats.

With FRONTEND virtio_user, DPDK's net_virtio_user is the port (lib/napi works on any ethdev
port with rx interrupts). That PMD arms without re-checking the ring (the race vnapi closes), and
has no rx_queue_count, so vnapi-fwd gets --sleep-timeout-ms 10 (a lost wakeup costs at most
10 ms) and only the exact counts (burst) are asserted.

The peer starts first (the vhost-user server); vnapi-fwd connects with --vdev net_vnapi0 and -d
<plugin copied into a root-owned 0755 dir under /run/vnapi/>. vnapi-fwd runs on --lcores 0@1,
the peer on 0@0, each with its own --file-prefix, --no-huge -m 512, --no-pci. Every process has
a deadline and is ended by PID: vnapi-fwd with SIGINT (then SIGKILL), then the peer.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from vnapitools.harness import latency_attempts, parse_kv, telemetry
from vnapitools.procfs import proc_cpu_s

SKIP = 77
IDLE_CPU_MAX_PCT = 0.5
IDLE_WINDOW_S = 5.0
LATENCY_BOUND_US = 5000
LATENCY_PACKETS = 2000
# Run-to-run spread of interrupt mode's net p99 on this machine (doc/napi.md, "Hybrid's latency
# tail"): 154 and 280 us in two runs of this case.
LATENCY_SPREAD_US = 130


class Failure(Exception):
    pass


class Proc:
    """A child with its output collected line by line in a thread."""

    def __init__(self, name, argv):
        self.name = name
        self.lines = []
        self.cv = threading.Condition()
        print('# start %s: %s' % (name, ' '.join(argv)))
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, text=True, bufsize=1)
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            with self.cv:
                self.lines.append(line.rstrip('\n'))
                self.cv.notify_all()
        with self.cv:
            self.cv.notify_all()

    def wait_line(self, pattern, timeout):
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        seen = 0
        with self.cv:
            while True:
                for line in self.lines[seen:]:
                    if rx.search(line):
                        return line
                seen = len(self.lines)
                left = end - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and not self.t.is_alive()):
                    raise Failure('%s: no line matching %r within %.0f s (exit %s)' % (
                        self.name, pattern, timeout, self.p.poll()))
                self.cv.wait(min(left, 0.2))

    def stop(self, sig, timeout):
        """Signal by PID, wait up to timeout, then SIGKILL. Returns the exit status."""
        if self.p.poll() is None:
            try:
                os.kill(self.p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                print('# %s (pid %d) did not exit within %.0f s: SIGKILL' % (
                    self.name, self.p.pid, timeout))
                os.kill(self.p.pid, signal.SIGKILL)
                self.p.wait(10)
        self.t.join(5)
        return self.p.returncode

    def dump(self, last=60):
        for line in self.lines[-last:]:
            print('# %s| %s' % (self.name, line))


def env_path(var):
    p = os.environ.get(var)
    if not p or not os.path.exists(p):
        raise Failure('%s=%r is not set or missing (run through meson test)' % (var, p))
    return p


def run(case, frontend, mode='hybrid', figures=None):
    plugin = env_path('VNAPI_PLUGIN')
    fwd_bin = env_path('VNAPI_FWD')
    peer_bin = env_path('VNAPI_ECHO_PEER')
    if not os.path.exists('/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/librte_net_vhost.so') and \
            not shutil.which('dpdk-testpmd'):
        print('# net_vhost not installed')
        return SKIP

    tag = 'napi_fwd_%s_%s_%d' % (case, frontend, os.getpid())
    rundir = os.path.join('/run/vnapi', tag)
    os.makedirs('/run/vnapi', mode=0o755, exist_ok=True)
    os.chmod('/run/vnapi', 0o755)
    os.makedirs(rundir, mode=0o755)
    os.chmod(rundir, 0o755)
    plugin_copy = os.path.join(rundir, 'librte_net_vnapi.so')
    shutil.copy(plugin, plugin_copy)
    os.chmod(plugin_copy, 0o755)
    sock = os.path.join(rundir, 'vhost.sock')
    peer_prefix = tag + '_peer'
    fwd_prefix = tag + '_fwd'

    peer_args = {
        'burst': ['--count', '20000', '--burst-size', '32', '--window', '256', '--gap-us', '50',
                  '--loss-timeout-ms', '2000', '--expect', 'macswap'],
        'idle': ['--idle', '8', '--max-latency-us', str(LATENCY_BOUND_US),
                 '--loss-timeout-ms', '500', '--expect', 'io'],
        'sparse': ['--sparse', '300', '--gap-min-us', '200', '--gap-max-us', '3000',
                   '--max-latency-us', str(LATENCY_BOUND_US), '--bound-on', 'net',
                   '--loss-timeout-ms', '500',
                   '--expect', 'io'],
        'latency': ['--sparse', str(LATENCY_PACKETS), '--gap-min-us', '100', '--gap-max-us', '1900',
                    '--gap2-min-us', '35', '--gap2-max-us', '665',
                    '--max-latency-us', str(LATENCY_BOUND_US), '--bound-on', 'net',
                    '--loss-timeout-ms', '500', '--expect', 'io'],
    }[case]
    fwd_mode = 'macswap' if case == 'burst' else 'io'
    peer_argv = [peer_bin, '--no-huge', '-m', '512', '--no-pci', '--lcores', '0@0',
                 '--file-prefix', peer_prefix, '--log-level=lib.eal:notice',
                 '--', '--iface', sock, '--fe-mac', '02:00:00:00:00:0a',
                 '--warmup-resend-ms', '0'] + peer_args + \
        ['--timeout', '60', '--linger', '60']
    packed = ',packed_vq=1' if frontend == 'vnapi_packed' else ''
    if frontend.startswith('vnapi'):
        port_args = ['-d', plugin_copy, '--vdev',
                     'net_vnapi0,path=%s,mac=02:00:00:00:00:0a%s' % (sock, packed)]
        extra = []
    else:
        port_args = ['--vdev', 'net_virtio_user0,path=%s,mac=02:00:00:00:00:0a' % sock]
        extra = ['--sleep-timeout-ms', '10']
    fwd_argv = [fwd_bin, '--no-huge', '-m', '512', '--no-pci', '--lcores', '0@1',
                '--file-prefix', fwd_prefix, '--log-level=lib.eal:notice'] + port_args + \
        ['--', '--config', '(0,0,0)', '--mode', mode, '--fwd', fwd_mode,
         '--duration', '90'] + extra
    if case == 'burst':
        fwd_argv += ['--stats', '1']

    peer = fwd = None
    result = 1
    try:
        peer = Proc('peer', peer_argv)
        peer.wait_line(r'^READY', 20)
        fwd = Proc('fwd', fwd_argv)
        fwd.wait_line(r'^FORWARDING', 20)
        peer.wait_line(r'^LINK up', 30)

        if case == 'idle':
            peer.wait_line(r'^IDLE begin', 40)
            time.sleep(1.5)  # past the settle time: vnapi-fwd armed and asleep
            t0 = telemetry(fwd_prefix, '/napi/stats,0')['/napi/stats']
            c0 = proc_cpu_s(fwd.p.pid)
            m0 = time.monotonic()
            time.sleep(IDLE_WINDOW_S)
            c1 = proc_cpu_s(fwd.p.pid)
            m1 = time.monotonic()
            t1 = telemetry(fwd_prefix, '/napi/stats,0')['/napi/stats']
            cpu_pct = 100.0 * (c1 - c0) / (m1 - m0)
            wakeups = t1['wakeups'] - t0['wakeups']
            sleeps = t1['sleeps'] - t0['sleeps']
            rounds = t1['rounds'] - t0['rounds']
            print('# idle window %.2f s: cpu %.3f %% (%.3f s), wakeups %d, sleeps %d, rounds %d' % (
                m1 - m0, cpu_pct, c1 - c0, wakeups, sleeps, rounds))
            print('# telemetry after: %s' % json.dumps(t1, sort_keys=True)[:600])
            if not frontend.startswith('vnapi'):
                pass  # figures only: the housekeeping timeout wakes it every 10 ms
            elif cpu_pct >= IDLE_CPU_MAX_PCT:
                raise Failure('idle CPU %.3f %% >= %.1f %%' % (cpu_pct, IDLE_CPU_MAX_PCT))
            if wakeups != 0:
                raise Failure('%d wakeups during the idle window' % wakeups)
            if t1['q0_0']['armed'] != 1:
                raise Failure('queue not armed while idle: %r' % t1['q0_0'])

        res_line = peer.wait_line(r'^RESULT:', 120 if case != 'idle' else 60)
        print('# peer %s' % res_line)
        res = parse_kv(res_line)
        fwd.stop(signal.SIGINT, 15)
        final_line = fwd.wait_line(r'^FINAL ', 5)
        print('# fwd %s' % final_line)
        for line in fwd.lines:
            if line.startswith(('QUEUE ', 'LCORE_TOTAL ')):
                print('# fwd %s' % line)
        stats_lines = [ln for ln in fwd.lines if ln.startswith('LCORE t=')]
        for line in stats_lines[-5:]:
            print('# fwd %s' % line)
        final = parse_kv(final_line)
        if frontend.startswith('vnapi') and not res_line.startswith('RESULT: PASS'):
            raise Failure('peer: %s' % res_line)
        if res['lost'] or res['bad'] or res['dup'] or res['stray']:
            raise Failure('peer: %s' % res_line)
        expected = res['sent'] + 1  # with the warm-up packet
        if final['rx'] != expected or final['tx'] != expected or final['dropped'] != 0:
            raise Failure('vnapi-fwd forwarded rx=%d tx=%d dropped=%d, expected %d' % (
                final['rx'], final['tx'], final['dropped'], expected))
        if fwd.p.returncode != 0:
            raise Failure('vnapi-fwd exit status %d' % fwd.p.returncode)
        if case == 'latency':
            check_latency(mode, res, peer, fwd, figures)
        print('# PASS %s %s' % (case, frontend))
        result = 0
    except Failure as e:
        print('# FAIL: %s' % e)
        for p in (fwd, peer):
            if p is not None:
                p.dump()
    finally:
        if fwd is not None:
            fwd.stop(signal.SIGINT, 15)
        if peer is not None:
            peer.stop(signal.SIGINT, 15)
        shutil.rmtree(rundir, ignore_errors=True)
        for prefix in (peer_prefix, fwd_prefix):
            shutil.rmtree(os.path.join('/var/run/dpdk', prefix), ignore_errors=True)
    return result


def check_latency(mode, res, peer, fwd, result):
    """The latency case's per-mode checks; the peer's RESULT (res) and LATENCY figures go to
    result (a dict, or None)."""
    lat = dict(res)
    lat.update(parse_kv(peer.wait_line(r'^LATENCY ', 5)))
    print('# peer %s' % ' '.join('%s=%s' % kv for kv in sorted(lat.items())))
    if lat['runq_watched'] != 1:
        raise Failure('peer did not watch vnapi-fwd\'s run-queue wait')
    if lat['over_bound_with_steal']:
        print('# WARNING: %d packets over %d us net, each during host steal (not held to the '
              'bound)' % (lat['over_bound_with_steal'], LATENCY_BOUND_US))
    q = parse_kv(fwd.wait_line(r'^QUEUE ', 5))
    lc = parse_kv(fwd.wait_line(r'^LCORE_TOTAL ', 5))
    if mode == 'poll' and (lc['sleeps'] != 0 or q['arms'] != 0):
        raise Failure('poll mode slept or armed: %r' % lc)
    if mode != 'poll' and (q['wakeups'] == 0 or q['arms'] == 0):
        raise Failure('%s mode never armed or woke: %r' % (mode, q))
    if result is not None:
        result.update(lat)
        result['wakeups'] = q['wakeups']
        result['polls_per_wakeup'] = q['polls'] / max(q['wakeups'], 1)
        result['quick_arms'] = q.get('quick_arms', 0)  # absent before adaptive_idle
        result['arms'] = q['arms']


def run_latency_once(frontend, mode, figures):
    """One latency run, repeated once if it fails: a host stall of this shared VM that neither
    schedstat nor /proc/stat's steal shows does not repeat; a lib/napi fault (a lost wakeup, a
    stuck queue, a lost packet) does. Both results are printed."""
    rc = run('latency', frontend, mode, figures)
    if rc != 0:
        print('# RETRY: %s %s failed once (above); running it again, the repeat decides' % (
            frontend, mode))
        figures.clear()
        rc = run('latency', frontend, mode, figures)
    return rc


def run_latency(frontend, mode):
    """The latency case; hybrid is compared with interrupt mode on the same traffic. A pair whose
    only failure is the p99 spread (a latency bound) is run again (harness.latency_attempts);
    a failed run or hybrid polling more per wakeup than interrupt mode fails at once."""
    if mode != 'hybrid':
        return run_latency_once(frontend, mode, {})
    rcs = []

    def pair(n):
        ref, hyb = {}, {}
        for m, fig in (('interrupt', ref), ('hybrid', hyb)):
            rc = run_latency_once(frontend, m, fig)
            if rc != 0:
                rcs.append(rc)
                return ('%s mode run failed (exit %d)' % (m, rc), False)
        print('# net p99: interrupt %.1f us, hybrid %.1f us (allowed: interrupt + %d us)' % (
            ref['net_p99_us'], hyb['net_p99_us'], LATENCY_SPREAD_US))
        print('# polls per wakeup: interrupt %.2f, hybrid %.2f; hybrid quick arms %d of %d' % (
            ref['polls_per_wakeup'], hyb['polls_per_wakeup'], hyb['quick_arms'], hyb['arms']))
        # At this traffic every sleep is long: hybrid must wake like interrupt mode (its idle
        # polls skipped), not poll ~idle_polls rounds per wakeup with the queue disarmed (the
        # cause).
        if hyb['polls_per_wakeup'] > ref['polls_per_wakeup'] + 1.0:
            return ('hybrid polls %.2f rounds per wakeup, interrupt mode %.2f' % (
                hyb['polls_per_wakeup'], ref['polls_per_wakeup']), False)
        if hyb['net_p99_us'] > ref['net_p99_us'] + LATENCY_SPREAD_US:
            return ('hybrid net p99 %.1f us above interrupt\'s %.1f us + %d us' % (
                hyb['net_p99_us'], ref['net_p99_us'], LATENCY_SPREAD_US), True)
        return None

    reason = latency_attempts(pair, what='interrupt/hybrid pair')
    if reason is None:
        return 0
    print('# FAIL: %s' % reason)
    return rcs[-1] if rcs else 1


def main():
    if len(sys.argv) not in (2, 3, 4) or \
            sys.argv[1] not in ('burst', 'idle', 'sparse', 'latency') or \
            (len(sys.argv) >= 3 and sys.argv[2] not in ('vnapi', 'vnapi_packed', 'virtio_user')) or \
            (len(sys.argv) == 4 and (sys.argv[1] != 'latency' or
                                     sys.argv[3] not in ('poll', 'interrupt', 'hybrid'))):
        print(__doc__)
        return 2
    frontend = sys.argv[2] if len(sys.argv) >= 3 else 'vnapi'
    if os.geteuid() != 0:
        print('# needs root (vhost-user sockets under /run/vnapi)')
        return SKIP
    if sys.argv[1] == 'latency':
        return run_latency(frontend, sys.argv[3] if len(sys.argv) == 4 else 'hybrid')
    return run(sys.argv[1], frontend)


if __name__ == '__main__':
    sys.exit(main())
