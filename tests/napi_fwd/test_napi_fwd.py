#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""vnapi-fwd (lib/napi, hybrid mode) over net_vnapi, against echo_peer (DPDK's net_vhost).

Usage: test_napi_fwd.py CASE [FRONTEND [MODE]]
       CASE: burst | idle | sparse | pairs | mq;
       FRONTEND: vnapi (default) | vnapi_packed | virtio_user
       MODE (pairs only): poll | interrupt | hybrid
Paths from the environment (meson sets them): VNAPI_PLUGIN, VNAPI_FWD, VNAPI_ECHO_PEER, and
VNAPI_DPDK_PMD_DIR (EAL's plugin directory of the DPDK built against, where net_vhost is).
Exit 0 pass, 1 fail, 77 skip.

  burst   20000 packets in bursts of 32 (at most 256 in flight, 50 us between bursts),
          macswap: the peer gets exactly 20000 back with swapped MACs, and vnapi-fwd's final
          line says rx = tx = 20001 (with the warm-up packet), dropped = 0.
  idle    after the warm-up, 8 s of no traffic; over a 5 s window inside it vnapi-fwd's CPU
          (utime+stime of all threads, /proc/PID/stat) must stay under 0.5 % and its napi
          context must see no wakeup (read with the /napi/stats telemetry command, before and
          after the window); then one check packet must come back.
  sparse  300 single packets, each 0.2-3 ms after the previous came back: none lost.
  pairs   2000 single packets in pairs: each a random 0.1-1.9 ms after the previous came back,
          every second one only 35-665 us after it, so that packets land around the moment the
          receiver re-arms (paired sparse traffic, closed loop), vnapi-fwd --mode MODE: exact counts
          (rx = tx = 2001, nothing lost or dropped), poll mode never sleeps or arms, interrupt
          and hybrid arm and wake.
  mq      the port with queues=2, both rx queues on vnapi-fwd's one lcore (hybrid,
          --config '(0,0,0),(0,1,0)'), 600 sparse packets that the peer steers alternately to
          queue 0 and 1: exact counts, per queue rx_qN_good_packets == what net_vhost sent on
          its tx queue N, and rx_qN_intr_notifications > 0, rx_qN_intr_wakeups > 0.

Every net_vnapi run also reads the port's xstats over telemetry once the traffic is over and
requires rx_qN_intr_unnotified_work == 0 on every queue: no wait ended with completions the
back end did not announce. vnapi-fwd has no sleep timeout here, so a lost wakeup is also a
packet that never comes back: the exact counts catch it. Latency is printed, never judged (the
round trips on this shared 2-vCPU VM measure the machine as much as lib/napi):
devtools/latency_bench.py measures it. No run is repeated.

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
import sys
import time

from vnapitools import harness as h
from vnapitools.harness import (fd_diff, fd_table, open_fds_back_to, open_fds_settled,
                                parse_kv, telemetry)
from vnapitools.procfs import cpu_steal_s, proc_cpu_s

SKIP = 77
IDLE_CPU_MAX_PCT = 0.5
IDLE_WINDOW_S = 5.0
PAIRS_PACKETS = 2000
FRAME_LEN = 82  # echo_peer's frames (struct peer_frame), every phase
CASES = ('burst', 'idle', 'sparse', 'pairs', 'mq')


class Failure(Exception):
    pass


class Proc:
    """A child on the shared harness (vnapitools.harness.DpdkProcess: both streams collected
    line by line, sanitizer reports caught, a deadline, ended by its PID), with this test's
    failures raised as Failure."""

    def __init__(self, name, argv, deadline=150.0):
        print('# start %s: %s' % (name, ' '.join(argv)))
        self.name = name
        self.d = h.DpdkProcess(name, argv, deadline=deadline).start()

    @property
    def pid(self):
        return self.d.pid

    @property
    def returncode(self):
        return self.d.returncode

    @property
    def lines(self):
        return [ln.text for ln in self.d.lines]

    def wait_line(self, pattern, timeout):
        """The first line matching @pattern (from the start of the output)."""
        try:
            return self.d.wait_for(pattern, timeout).string
        except (h.Timeout, h.ProcessDied) as e:
            raise Failure('%s: no line matching %r within %.0f s: %s' % (
                self.name, pattern, timeout, str(e).splitlines()[0]))

    def stop(self, sig, timeout):
        """SIGINT by PID, then SIGKILL after @timeout. Returns the exit status."""
        assert sig == signal.SIGINT
        self.d.grace = timeout
        return self.d.stop(quit_first=False)

    def dump(self, last=60):
        for line in self.lines[-last:]:
            print('# %s| %s' % (self.name, line))


def env_path(var):
    p = os.environ.get(var)
    if not p or not os.path.exists(p):
        raise Failure('%s=%r is not set or missing (run through meson test)' % (var, p))
    return p


def port_xstats(prefix):
    """The port's xstats over vnapi-fwd's telemetry socket: {name: value}."""
    xs = telemetry(prefix, '/ethdev/xstats,0').get('/ethdev/xstats')
    if not isinstance(xs, dict):
        raise Failure('telemetry /ethdev/xstats,0: %r' % xs)
    return xs


def check_queues(xs, res, queues, traffic):
    """net_vnapi's per-queue counters once the traffic is over: exact rx counts per queue (the
    peer's qN_sent), bytes, no lost wakeup, and with traffic that every queue slept and was
    woken."""
    back = sum(res.get('q%d_back' % q, 0) for q in range(queues))
    if xs.get('tx_good_packets') != back or xs.get('tx_good_bytes') != FRAME_LEN * back:
        raise Failure('the port sent tx_good_packets %s, tx_good_bytes %s; the peer got %d '
                      'frames of %d bytes back' % (xs.get('tx_good_packets'),
                                                   xs.get('tx_good_bytes'), back, FRAME_LEN))
    for q in range(queues):
        k = 'rx_q%d_' % q
        print('# xstats queue %d: %s' % (q, ' '.join(
            '%s=%s' % (n[len(k):], v) for n, v in sorted(xs.items())
            if n.startswith(k) and (n.startswith(k + 'intr_') or n == k + 'good_packets'))))
        if xs.get(k + 'intr_unnotified_work') != 0:
            raise Failure('%sintr_unnotified_work = %s: a wait ended with completions the back '
                          'end did not announce (lost wakeup)' % (k, xs.get(k + 'intr_unnotified_work')))
        sent = res.get('q%d_sent' % q)
        if sent is None or xs.get(k + 'good_packets') != sent or \
                xs.get(k + 'good_bytes') != FRAME_LEN * sent:
            raise Failure('%sgood_packets = %s, %sgood_bytes = %s, but net_vhost sent %s '
                          'frames of %d bytes on its tx queue %d' % (
                              k, xs.get(k + 'good_packets'), k, xs.get(k + 'good_bytes'), sent,
                              FRAME_LEN, q))
        if traffic and (xs.get(k + 'intr_notifications', 0) == 0 or
                        xs.get(k + 'intr_wakeups', 0) == 0):
            raise Failure('queue %d never notified or woken: notifications %s, wakeups %s' % (
                q, xs.get(k + 'intr_notifications'), xs.get(k + 'intr_wakeups')))


def net_vhost_present():
    """net_vhost in EAL's plugin directory of the DPDK under test (meson passes it:
    RTE_EAL_PMD_PATH, e.g. .../dpdk/pmds-23.0 for 22.11, pmds-26.0 for 25.11)."""
    d = os.environ.get('VNAPI_DPDK_PMD_DIR', '')
    return bool(d) and os.path.exists(os.path.join(d, 'librte_net_vhost.so'))


def run(case, frontend, mode='hybrid', figures=None, packets=None):
    """One case. @packets (pairs only, default PAIRS_PACKETS) and @figures (a dict filled
    with the run's figures) are for devtools/latency_bench.py; the tests use neither."""
    plugin = env_path('VNAPI_PLUGIN')
    fwd_bin = env_path('VNAPI_FWD')
    peer_bin = env_path('VNAPI_ECHO_PEER')
    if not net_vhost_present():
        print('# net_vhost not in VNAPI_DPDK_PMD_DIR=%r' % os.environ.get('VNAPI_DPDK_PMD_DIR'))
        return SKIP
    queues = 2 if case == 'mq' else 1

    tag = 'napi_fwd_%s_%s_%d' % (case, frontend, os.getpid())
    rundir = os.path.join('/run/vnapi', tag)
    os.makedirs('/run/vnapi', mode=0o755, exist_ok=True)
    os.chmod('/run/vnapi', 0o755)
    os.makedirs(rundir, mode=0o755)
    os.chmod(rundir, 0o755)
    plugin_copy = h.prepare_plugin(plugin)  # EAL's -d: a root-owned 0755 path
    sock = os.path.join(rundir, 'vhost.sock')
    peer_prefix = tag + '_peer'
    fwd_prefix = tag + '_fwd'

    peer_args = {
        'burst': ['--count', '20000', '--burst-size', '32', '--window', '256', '--gap-us', '50',
                  '--loss-timeout-ms', '2000', '--expect', 'macswap'],
        'idle': ['--idle', '8', '--loss-timeout-ms', '500', '--expect', 'io'],
        'sparse': ['--sparse', '300', '--gap-min-us', '200', '--gap-max-us', '3000',
                   '--loss-timeout-ms', '500', '--expect', 'io'],
        'pairs': ['--sparse', str(packets or PAIRS_PACKETS), '--gap-min-us', '100',
                  '--gap-max-us', '1900', '--gap2-min-us', '35', '--gap2-max-us', '665',
                  '--loss-timeout-ms', '500', '--expect', 'io'],
        'mq': ['--sparse', '600', '--gap-min-us', '100', '--gap-max-us', '3000',
               '--loss-timeout-ms', '500', '--expect', 'io', '--queues', '2'],
    }[case]
    fwd_mode = 'macswap' if case == 'burst' else 'io'
    peer_argv = [peer_bin, '--no-huge', '-m', '512', '--no-pci', '--lcores', '0@0',
                 '--file-prefix', peer_prefix, '--log-level=lib.eal:notice',
                 '--', '--iface', sock, '--fe-mac', '02:00:00:00:00:0a',
                 '--warmup-resend-ms', '0'] + peer_args + \
        ['--timeout', '60', '--linger', '60']
    packed = ',packed_vq=1' if frontend == 'vnapi_packed' else ''
    if queues != 1:
        packed += ',queues=%d' % queues
    if frontend.startswith('vnapi'):
        port_args = ['-d', plugin_copy, '--vdev',
                     'net_vnapi0,path=%s,mac=02:00:00:00:00:0a%s' % (sock, packed)]
        extra = []
    else:
        port_args = ['--vdev', 'net_virtio_user0,path=%s,mac=02:00:00:00:00:0a' % sock]
        extra = ['--sleep-timeout-ms', '10']
    fwd_argv = [fwd_bin, '--no-huge', '-m', '512', '--no-pci', '--lcores', '0@1',
                '--file-prefix', fwd_prefix, '--log-level=lib.eal:notice'] + port_args + \
        ['--', '--config', ','.join('(0,%d,0)' % q for q in range(queues)), '--mode', mode, '--fwd', fwd_mode,
         '--duration', '90'] + extra
    if case == 'burst':
        fwd_argv += ['--stats', '1']

    peer = fwd = None
    result = 1
    judged = False
    try:
        peer = Proc('peer', peer_argv)
        peer.wait_line(r'^READY', 20)
        fwd = Proc('fwd', fwd_argv)
        fwd.wait_line(r'^FORWARDING', 20)
        peer.wait_line(r'^LINK up', 30)
        cpu0, t0 = proc_cpu_s(fwd.pid), time.monotonic()
        peer.wait_line(r'^WARMUP back', 30)
        steal0, m_traffic0 = cpu_steal_s(), time.monotonic()
        fds0 = open_fds_settled(fwd.pid)
        fdt0 = fd_table(fwd.pid)

        if case == 'idle':
            peer.wait_line(r'^IDLE begin', 40)
            time.sleep(1.5)  # past the settle time: vnapi-fwd armed and asleep
            t0 = telemetry(fwd_prefix, '/napi/stats,0')['/napi/stats']
            c0 = proc_cpu_s(fwd.pid)
            m0 = time.monotonic()
            time.sleep(IDLE_WINDOW_S)
            c1 = proc_cpu_s(fwd.pid)
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
        if figures is not None:
            steal1 = cpu_steal_s()
            figures['traffic_s'] = time.monotonic() - m_traffic0
            figures['traffic_mono'] = (m_traffic0, time.monotonic())
            figures['steal_s'] = {c: steal1[c] - steal0.get(c, steal1[c]) for c in steal1}
            figures['slow'] = [parse_kv(ln[len('SLOW '):]) for ln in peer.lines
                               if ln.startswith('SLOW ')]
        print('# peer %s' % res_line)
        res = parse_kv(res_line)
        # The traffic is over: the driver's account of it, before vnapi-fwd stops.
        xs = port_xstats(fwd_prefix) if frontend.startswith('vnapi') else None
        fds1 = open_fds_back_to(fwd.pid, fds0)
        fds_changed = fd_diff(fdt0, fd_table(fwd.pid))
        if figures is not None:
            figures['cpu_pct'] = 100.0 * (proc_cpu_s(fwd.pid) - cpu0) / (time.monotonic() - t0)
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
        # The peer ends at its SIGINT below, with the status of its verdict.
        peer.d.expect_exit(0 if res_line.startswith('RESULT: PASS') else 1)
        judged = True
        problems = h.stop_and_judge([fwd.d, peer.d])
        if problems:
            raise Failure('process end: ' + '; '.join(problems))
        print('# vnapi-fwd open fds: %d after the warm-up, %d after the traffic' % (fds0, fds1))
        if fds1 != fds0:
            raise Failure('vnapi-fwd holds %d fds after the traffic, %d after the warm-up (%s)'
                          % (fds1, fds0, fds_changed))
        if xs is not None:
            check_queues(xs, res, queues, traffic=case in ('sparse', 'pairs', 'mq') and
                         mode != 'poll')
        if case in ('sparse', 'pairs', 'mq'):
            check_modes(mode, res, peer, fwd, figures, frontend.startswith('vnapi'))
        print('# PASS %s %s' % (case, frontend))
        result = 0
    except Failure as e:
        print('# FAIL: %s' % e)
        for p in (fwd, peer):
            if p is not None:
                p.dump()
    finally:
        # Every end judged (above, on the way to a verdict; here after a failure, beside
        # it): vnapi-fwd (SIGINT, exit 0), then the peer (SIGINT).
        for p in (fwd, peer):
            if p is not None:
                p.stop(signal.SIGINT, 15)
        if not judged:
            for why in h.stop_and_judge([p.d for p in (fwd, peer) if p is not None]):
                print('# FAIL (as well): process end: %s' % why)
        shutil.rmtree(rundir, ignore_errors=True)
        for prefix in (peer_prefix, fwd_prefix):
            shutil.rmtree(os.path.join('/var/run/dpdk', prefix), ignore_errors=True)
    return result


def check_modes(mode, res, peer, fwd, result, strict=True):
    """Per mode (strict: net_vnapi): poll never sleeps or arms, interrupt and hybrid arm and
    wake. The peer's latency figures are printed (and go to result, a dict or None), not
    judged."""
    lat = dict(res)
    lat.update(parse_kv(peer.wait_line(r'^LATENCY ', 5)))
    print('# figures (not judged): round trip p50 %s us, p99 %s us, max %s us' % (
        lat.get('p50_us'), lat.get('p99_us'), lat.get('max_us')))
    qs = [parse_kv(ln) for ln in fwd.lines if ln.startswith('QUEUE ')]
    lc = parse_kv(fwd.wait_line(r'^LCORE_TOTAL ', 5))
    if not qs:
        raise Failure('vnapi-fwd printed no QUEUE line')
    for q in qs if strict else ():
        if mode == 'poll' and (lc['sleeps'] != 0 or q['arms'] != 0):
            raise Failure('poll mode slept or armed: %r %r' % (lc, q))
        if mode != 'poll' and (q['wakeups'] == 0 or q['arms'] == 0):
            raise Failure('%s mode never armed or woke: %r' % (mode, q))
    if result is not None:
        result.update(lat)
        result['wakeups'] = sum(q['wakeups'] for q in qs)
        result['polls'] = sum(q['polls'] for q in qs)
        result['arms'] = sum(q['arms'] for q in qs)
        result['sleeps'] = lc['sleeps']


def main():
    args = sys.argv[1:]
    if not 1 <= len(args) <= 3 or args[0] not in CASES or \
            (len(args) >= 2 and args[1] not in ('vnapi', 'vnapi_packed', 'virtio_user')) or \
            (len(args) == 3 and (args[0] != 'pairs' or
                                 args[2] not in ('poll', 'interrupt', 'hybrid'))):
        print(__doc__)
        return 2
    frontend = args[1] if len(args) >= 2 else 'vnapi'
    if os.geteuid() != 0:
        print('# needs root (vhost-user sockets under /run/vnapi)')
        return SKIP
    return run(args[0], frontend, args[2] if len(args) == 3 else 'hybrid')


if __name__ == '__main__':
    sys.exit(main())
