# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""vnapi-fwd (lib/napi) over a vhost-user front end, against vnapi-peer (DPDK's net_vhost): one
run of a case, its exact checks, and the figures the latency benchmark reads. The test
(tests/napi_fwd/test_napi_fwd.py) and devtools/latency_bench.py both run it.

Cases:
  burst   20000 frames in closed loop, at most 256 in flight in bursts of 32 (50 us between
          bursts), vnapi-fwd --fwd macswap: the peer gets exactly 20000 back with swapped MACs,
          and vnapi-fwd's final line says rx = tx = 20001 (with the warm-up frame), dropped = 0.
  idle    after the warm-up, 8 s of no traffic; over a 5 s window inside it vnapi-fwd's CPU
          (utime+stime of all threads, /proc/PID/stat) must stay under 0.5 % and its napi
          context must see no wakeup (the /napi/stats telemetry command, before and after the
          window); then one check frame must come back.
  sparse  300 single frames, each 0.2-3 ms after the previous came back: none lost.
  pairs   2000 single frames in pairs: each a random 0.1-1.9 ms after the previous came back,
          every second one only 35-665 us after it, so that frames land around the moment the
          receiver re-arms (paired sparse traffic, closed loop), vnapi-fwd --mode MODE: exact
          counts (rx = tx = 2001, nothing lost or dropped), poll mode never sleeps or arms,
          interrupt and hybrid arm and wake.
  mq      the port with queues=2, both rx queues on vnapi-fwd's one lcore (hybrid,
          --config '(0,0,0),(0,1,0)'), 600 sparse frames that the peer steers alternately to
          queue 0 and 1: exact counts, per queue rx_qN_good_packets == what net_vhost sent on
          its tx queue N, and rx_qN_intr_notifications > 0, rx_qN_intr_wakeups > 0.
  stall   open loop at 500 kpps for 1 s (bursts of 32); the peer stops receiving from 300 to
          350 ms into it, so vnapi-fwd's tx ring fills: napi_tx holds what it refuses and
          stops polling the rx queue behind it, whose ring fills in turn, and the peer is
          refused. Nothing lost, rx = tx = sent, dropped = 0; vnapi-fwd held frames and
          skipped rounds (tx_held, tx_blocked_rounds > 0, tx_hold_drops = 0); the peer was
          refused (refused > 0).
  stall_nohold  the same with vnapi-fwd --tx-hold-ms 0 (refused frames dropped at once): the
          check of the check. Frames are lost, and exactly those vnapi-fwd dropped: lost =
          dropped > 0, rx = sent, tx = sent - dropped, nothing held; nothing else inexact.
  stall_long  the peer deaf for 300 ms, three times vnapi-fwd's hold bound (100 ms): held
          frames are dropped at the bound and counted: lost = dropped = the queues'
          tx_hold_drops + tx_unsent > 0, tx_hold_drops > 0; nothing else inexact.

The peer's one notion of lost: a frame not back within 500 ms of its sending (2 s in burst and
the stall cases) is
lost, and one that comes back after that is late, lost all the same: vnapi-fwd has no sleep
timeout here, so a lost wakeup leaves its frame in the ring until the next one, and the frame
comes back late. Every net_vnapi run also reads the port's xstats over telemetry once the traffic
is over and requires rx_qN_intr_unnotified_work == 0 on every queue: no wait ended with
completions the back end did not announce. Latency is printed, never judged: the latency
benchmark measures it. No run is repeated.

With FRONTEND virtio_user, DPDK's net_virtio_user is the port (lib/napi works on any ethdev port
with rx interrupts). That PMD arms without re-checking the ring (the race vnapi closes), and has no
rx_queue_count, so vnapi-fwd gets --sleep-timeout-ms 10 (a lost wakeup costs at most 10 ms) and
only the exact counts are asserted. Extra front-end devargs (event_idx=0: the front end asks
for a notification of every packet, by flags instead of the event index) go with @devargs.

The peer starts first (the vhost-user server); vnapi-fwd connects with --vdev net_vnapi0 and -d
<plugin copied into a root-owned 0755 dir under /run/vnapi/>. vnapi-fwd runs on --lcores 0@1,
the peer on 0@0, each with its own --file-prefix, --no-huge -m 512, --no-pci. Every process has
a deadline and is ended by PID: vnapi-fwd with SIGINT (then SIGKILL), then the peer.
"""

import json
import os
import shutil
import time

from . import harness as h
from . import peer as vp
from .harness import (fd_diff, fd_table, open_fds_back_to, open_fds_settled, parse_kv,
                      telemetry)
from .procfs import cpu_steal_s, proc_cpu_s

SKIP = 77
IDLE_CPU_MAX_PCT = 0.5
IDLE_WINDOW_S = 5.0
PAIRS_PACKETS = 2000
FE_MAC = '02:00:00:00:00:0a'
CASES = ('burst', 'idle', 'sparse', 'pairs', 'mq', 'stall', 'stall_nohold', 'stall_long')
# The stall cases: open loop (pps, s, frames per burst), the peer deaf from/to (ms into it).
STALL_OPEN = (500000, 1.0, 32)
STALL_DEAF_MS = {'stall': (300, 350), 'stall_nohold': (300, 350), 'stall_long': (300, 600)}
FRONTENDS = ('vnapi', 'vnapi_packed', 'virtio_user')
MODES = ('poll', 'interrupt', 'hybrid')
# The pairs traffic (the hybrid benchmark's too): gaps after the previous frame came back.
PAIRS_GAP_US = (100, 1900)
PAIRS_GAP2_US = (35, 665)


class Proc:
    """A child on the shared harness (harness.DpdkProcess: both streams collected line by
    line, sanitizer reports caught, a deadline, ended by its PID), with this module's failures
    raised as harness.Failure."""

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
            raise h.Failure('%s: no line matching %r within %.0f s: %s' % (
                self.name, pattern, timeout, str(e).splitlines()[0]))

    def stop(self, timeout):
        """SIGINT by PID, then SIGKILL after @timeout. Returns the exit status."""
        self.d.grace = timeout
        return self.d.stop(quit_first=False)

    def dump(self, last=60):
        for line in self.lines[-last:]:
            print('# %s| %s' % (self.name, line))


def port_xstats(prefix):
    """The port's xstats over vnapi-fwd's telemetry socket: {name: value}."""
    xs = telemetry(prefix, '/ethdev/xstats,0').get('/ethdev/xstats')
    if not isinstance(xs, dict):
        raise h.Failure('telemetry /ethdev/xstats,0: %r' % xs)
    return xs


def check_queues(xs, res, queues, traffic):
    """net_vnapi's per-queue counters once the traffic is over: exact rx counts per queue (the
    peer's qN_sent), bytes, no lost wakeup, and with traffic that every queue slept and was
    woken."""
    size = res['size']
    back = sum(res.get('q%d_back' % q, 0) for q in range(queues))
    if xs.get('tx_good_packets') != back or xs.get('tx_good_bytes') != size * back:
        raise h.Failure('the port sent tx_good_packets %s, tx_good_bytes %s; the peer got %d '
                        'frames of %d bytes back' % (xs.get('tx_good_packets'),
                                                     xs.get('tx_good_bytes'), back, size))
    for q in range(queues):
        k = 'rx_q%d_' % q
        print('# xstats queue %d: %s' % (q, ' '.join(
            '%s=%s' % (n[len(k):], v) for n, v in sorted(xs.items())
            if n.startswith(k) and (n.startswith(k + 'intr_') or n == k + 'good_packets'))))
        if xs.get(k + 'intr_unnotified_work') != 0:
            raise h.Failure('%sintr_unnotified_work = %s: a wait ended with completions the '
                            'back end did not announce (lost wakeup)'
                            % (k, xs.get(k + 'intr_unnotified_work')))
        sent = res.get('q%d_sent' % q)
        if sent is None or xs.get(k + 'good_packets') != sent or \
                xs.get(k + 'good_bytes') != size * sent:
            raise h.Failure('%sgood_packets = %s, %sgood_bytes = %s, but net_vhost sent %s '
                            'frames of %d bytes on its tx queue %d' % (
                                k, xs.get(k + 'good_packets'), k, xs.get(k + 'good_bytes'),
                                sent, size, q))
        if traffic and (xs.get(k + 'intr_notifications', 0) == 0 or
                        xs.get(k + 'intr_wakeups', 0) == 0):
            raise h.Failure('queue %d never notified or woken: notifications %s, wakeups %s' % (
                q, xs.get(k + 'intr_notifications'), xs.get(k + 'intr_wakeups')))


def net_vhost_present():
    """net_vhost in EAL's plugin directory of the DPDK under test (meson passes it:
    RTE_EAL_PMD_PATH, e.g. .../dpdk/pmds-23.0 for 22.11, pmds-26.0 for 25.11)."""
    d = os.environ.get('VNAPI_DPDK_PMD_DIR', '')
    return bool(d) and os.path.exists(os.path.join(d, 'librte_net_vhost.so'))


def peer_phases(case, packets=None):
    """The engine's phases and the options of a case."""
    if case == 'burst':
        return ([vp.phase('closed', count=20000, window=256, burst=32, gap_us=50)],
                {'expect': 'macswap', 'loss_ms': 2000})
    if case == 'idle':
        return [vp.phase('idle', secs=8), vp.phase('sparse', count=1)], {}
    if case == 'sparse':
        return [vp.phase('sparse', count=300, gap=(200, 3000))], {}
    if case == 'pairs':
        return [vp.phase('sparse', count=packets or PAIRS_PACKETS, gap=PAIRS_GAP_US,
                         gap2=PAIRS_GAP2_US)], {}
    if case in STALL_DEAF_MS:
        rate, secs, burst = STALL_OPEN
        return ([vp.phase('open', rate=rate, secs=secs, burst=burst,
                          deaf=STALL_DEAF_MS[case])], {'loss_ms': 2000})
    return [vp.phase('sparse', count=600, gap=(100, 3000))], {'queues': 2}


def run(case, frontend, mode='hybrid', figures=None, packets=None, devargs=''):
    """One case. @packets (pairs only, default PAIRS_PACKETS) and @figures (a dict filled
    with the run's figures) are for devtools/latency_bench.py; the tests use neither.
    Returns 0 (pass), 1 (fail) or SKIP."""
    plugin = h.env_path('VNAPI_PLUGIN')
    fwd_bin = h.env_path('VNAPI_FWD')
    peer_bin = vp.binary()
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

    phases, opts = peer_phases(case, packets)
    opts.setdefault('expect', 'io')
    peer_argv = vp.argv(peer_bin, phases, ifaces=[sock], eal=vp.eal_args(peer_prefix, 0),
                        fe_mac=FE_MAC, warmup_resend_ms=0, timeout=60, linger=60, **opts)
    extra_devargs = ',packed_vq=1' if frontend == 'vnapi_packed' else ''
    if queues != 1:
        extra_devargs += ',queues=%d' % queues
    if devargs:
        extra_devargs += ',' + devargs
    if frontend.startswith('vnapi'):
        port_args = ['-d', plugin_copy, '--vdev',
                     'net_vnapi0,path=%s,mac=%s%s' % (sock, FE_MAC, extra_devargs)]
        extra = []
    else:
        port_args = ['--vdev', 'net_virtio_user0,path=%s,mac=%s%s' % (sock, FE_MAC,
                                                                      extra_devargs)]
        extra = ['--sleep-timeout-ms', '10']
    fwd_mode = 'macswap' if case == 'burst' else 'io'
    fwd_argv = [fwd_bin, '--no-huge', '-m', '512', '--no-pci', '--lcores', '0@1',
                '--file-prefix', fwd_prefix, '--log-level=lib.eal:notice'] + port_args + \
        ['--', '--config', ','.join('(0,%d,0)' % q for q in range(queues)), '--mode', mode,
         '--fwd', fwd_mode, '--duration', '90'] + extra
    if case == 'burst':
        fwd_argv += ['--stats', '1']
    if case == 'stall_nohold':
        fwd_argv += ['--tx-hold-ms', '0']

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
            peer.wait_line(r'^PHASE 0 idle begin', 40)
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
                raise h.Failure('idle CPU %.3f %% >= %.1f %%' % (cpu_pct, IDLE_CPU_MAX_PCT))
            if wakeups != 0:
                raise h.Failure('%d wakeups during the idle window' % wakeups)
            if t1['q0_0']['armed'] != 1:
                raise h.Failure('queue not armed while idle: %r' % t1['q0_0'])

        res_line = peer.wait_line(vp.RESULT_RE, 120 if case != 'idle' else 60)
        if figures is not None:
            steal1 = cpu_steal_s()
            figures['traffic_s'] = time.monotonic() - m_traffic0
            figures['traffic_mono'] = (m_traffic0, time.monotonic())
            figures['steal_s'] = {c: steal1[c] - steal0.get(c, steal1[c]) for c in steal1}
            figures['slow'] = [parse_kv(ln[len('SLOW '):]) for ln in peer.lines
                               if ln.startswith('SLOW ')]
        print('# peer %s' % res_line)
        res = vp.parse(res_line)
        phase_res = vp.phases(peer.d)
        # The traffic is over: the driver's account of it, before vnapi-fwd stops.
        xs = port_xstats(fwd_prefix) if frontend.startswith('vnapi') else None
        fds1 = open_fds_back_to(fwd.pid, fds0)
        fds_changed = fd_diff(fdt0, fd_table(fwd.pid))
        if figures is not None:
            figures['cpu_pct'] = 100.0 * (proc_cpu_s(fwd.pid) - cpu0) / (time.monotonic() - t0)
        fwd.stop(15)
        final_line = fwd.wait_line(r'^FINAL ', 5)
        print('# fwd %s' % final_line)
        for line in fwd.lines:
            if line.startswith(('QUEUE ', 'LCORE_TOTAL ')):
                print('# fwd %s' % line)
        stats_lines = [ln for ln in fwd.lines if ln.startswith('LCORE t=')]
        for line in stats_lines[-5:]:
            print('# fwd %s' % line)
        final = parse_kv(final_line)
        expected = res['sent'] + res['warmup_sent']
        if case in ('stall_nohold', 'stall_long'):
            check_stall_loss(case, res, final, expected, fwd)
        else:
            # Lost includes late: a frame back after the loss timeout is a lost wakeup's frame.
            not_exact = vp.exact(res)
            if not_exact or (frontend.startswith('vnapi') and res['verdict'] != 'PASS'):
                raise h.Failure('peer: %s (%s)' % (', '.join(not_exact) or 'FAIL', res_line))
            if final['rx'] != expected or final['tx'] != expected or final['dropped'] != 0:
                raise h.Failure('vnapi-fwd forwarded rx=%d tx=%d dropped=%d, expected %d' % (
                    final['rx'], final['tx'], final['dropped'], expected))
        if case == 'stall':
            check_stall_held(res, fwd)
        if case == 'idle' and (phase_res[0]['rx'] != 0 or phase_res[1]['back'] != 1):
            raise h.Failure('idle: %d frames received during the idle phase, check frame back '
                            '%d of 1' % (phase_res[0]['rx'], phase_res[1]['back']))
        # The peer ends at its SIGINT below (it lingers), with its RESULT's code as its exit
        # status; vnapi-fwd ended at its SIGINT above, exit 0.
        peer.d.expect_exit(res['code'])
        judged = True
        problems = h.stop_and_judge([fwd.d, peer.d])
        if problems:
            raise h.Failure('process end: ' + '; '.join(problems))
        print('# vnapi-fwd open fds: %d after the warm-up, %d after the traffic' % (fds0, fds1))
        if fds1 != fds0:
            raise h.Failure('vnapi-fwd holds %d fds after the traffic, %d after the warm-up (%s)'
                            % (fds1, fds0, fds_changed))
        if xs is not None:
            check_queues(xs, res, queues, traffic=case in ('sparse', 'pairs', 'mq') and
                         mode != 'poll')
        if case in ('sparse', 'pairs', 'mq'):
            check_modes(mode, phase_res[-1], fwd, figures, frontend.startswith('vnapi'))
        print('# PASS %s %s' % (case, frontend))
        result = 0
    except h.Failure as e:
        print('# FAIL: %s' % e)
        for p in (fwd, peer):
            if p is not None:
                p.dump()
    finally:
        # Every end judged (above, on the way to a verdict; here after a failure, beside
        # it): vnapi-fwd (SIGINT, exit 0), then the peer (SIGINT).
        for p in (fwd, peer):
            if p is not None:
                p.stop(15)
        if not judged:
            for why in h.stop_and_judge([p.d for p in (fwd, peer) if p is not None]):
                print('# FAIL (as well): process end: %s' % why)
        shutil.rmtree(rundir, ignore_errors=True)
        for prefix in (peer_prefix, fwd_prefix):
            shutil.rmtree(os.path.join('/var/run/dpdk', prefix), ignore_errors=True)
    return result


def queue_sums(fwd, *keys):
    """The sums over vnapi-fwd's QUEUE lines of @keys."""
    qs = [parse_kv(ln) for ln in fwd.lines if ln.startswith('QUEUE ')]
    if not qs:
        raise h.Failure('vnapi-fwd printed no QUEUE line')
    return [sum(q[k] for q in qs) for k in keys]


def check_stall_held(res, fwd):
    """stall: the back-pressure happened, and reached the peer."""
    held, drops, blocked = queue_sums(fwd, 'tx_held', 'tx_hold_drops', 'tx_blocked_rounds')
    print('# stall: vnapi-fwd held %d frames, skipped %d rounds, dropped %d held; the peer '
          'was refused %d' % (held, blocked, drops, res['refused']))
    if held == 0 or blocked == 0 or drops != 0 or res['refused'] == 0:
        raise h.Failure('stall: tx_held=%d tx_blocked_rounds=%d tx_hold_drops=%d refused=%d: '
                        'expected the tx queue to push back to the peer, nothing dropped'
                        % (held, blocked, drops, res['refused']))


def check_stall_loss(case, res, final, expected, fwd):
    """stall_nohold, stall_long: frames lost, exactly those vnapi-fwd counted dropped."""
    lost = res['lost']
    others = [x for x in vp.exact(res) if not x.startswith('lost=')]
    held, drops, unsent = queue_sums(fwd, 'tx_held', 'tx_hold_drops', 'tx_unsent')
    print('# %s: lost %d, vnapi-fwd dropped %d (held %d, dropped held %d, unsent %d)' % (
        case, lost, final['dropped'], held, drops, unsent))
    if others:
        raise h.Failure('%s: peer: %s' % (case, ', '.join(others)))
    if lost == 0 or final['dropped'] != lost or final['rx'] != expected or \
            final['tx'] != expected - lost or drops + unsent != lost:
        raise h.Failure('%s: lost %d; vnapi-fwd rx=%d tx=%d dropped=%d (tx_hold_drops %d, '
                        'tx_unsent %d), sent %d: expected lost = dropped > 0' % (
                            case, lost, final['rx'], final['tx'], final['dropped'], drops,
                            unsent, expected))
    if case == 'stall_nohold' and held != 0:
        raise h.Failure('stall_nohold: %d frames held with --tx-hold-ms 0' % held)
    if case == 'stall_long' and drops == 0:
        raise h.Failure('stall_long: no held frame dropped at the bound')


def check_modes(mode, lat, fwd, result, strict=True):
    """Per mode (strict: net_vnapi): poll never sleeps or arms, interrupt and hybrid arm and
    wake. The peer's latency figures (@lat, the traffic phase's result) are printed (and go
    to @result, a dict or None), not judged."""
    print('# figures (not judged): round trip p50 %s us, p99 %s us, max %s us' % (
        lat.get('p50_us'), lat.get('p99_us'), lat.get('max_us')))
    qs = [parse_kv(ln) for ln in fwd.lines if ln.startswith('QUEUE ')]
    lc = parse_kv(fwd.wait_line(r'^LCORE_TOTAL ', 5))
    if not qs:
        raise h.Failure('vnapi-fwd printed no QUEUE line')
    for q in qs if strict else ():
        if mode == 'poll' and (lc['sleeps'] != 0 or q['arms'] != 0):
            raise h.Failure('poll mode slept or armed: %r %r' % (lc, q))
        if mode != 'poll' and (q['wakeups'] == 0 or q['arms'] == 0):
            raise h.Failure('%s mode never armed or woke: %r' % (mode, q))
    if result is not None:
        result.update(lat)
        result['wakeups'] = sum(q['wakeups'] for q in qs)
        result['polls'] = sum(q['polls'] for q in qs)
        result['arms'] = sum(q['arms'] for q in qs)
        result['sleeps'] = lc['sleeps']
