# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""l3fwd-power (--interrupt-only) on a vhost-user front end, against vnapi-peer (net_vhost): one
run of a case (run_case) and its exact checks (evaluate). The test
(tests/l3fwd/test_l3fwd_power.py) and the benchmarks (devtools/latency_bench.py,
devtools/l3fwd_report.py) run them.

The peer (vhost-user server) starts first; l3fwd-power connects with --vdev net_vnapi0 (loaded
with -d from a root-owned copy under /run/vnapi/) or net_virtio_user0. The peer sends, receives
and checks (vnapitools.peer reads its result). Every process has a deadline and is ended by
PID: l3fwd-power with SIGINT (the only signal it stops on), the peer with SIGINT once
l3fwd-power is gone (the peer keeps the vhost-user side up until then, --linger).

Cases:
  count   N frames (10000) in closed loop, at most 128 in flight: exactly N back, every byte
          checked.
  idle    10 s without traffic: l3fwd-power's CPU (utime+stime of all its threads from
          /proc/PID/stat over the window) and its "lcore N is waked up from rx interrupt" lines in
          the window (l3fwd-power logs every rx-interrupt wakeup at INFO; its 10 ms epoll
          timeouts are not logged). Then one check frame must come back.
  sparse  2000 single frames (the test runs 1000), each a random 0.1-5 ms after the previous one
          came back: every one must come back within the peer's loss timeout (500 ms; one
          back later is late, lost all the same). The round trips are printed, never judged.
  mq      the port with queues=2, both rx queues on l3fwd-power's one lcore
          (--config='(0,0,0),(0,1,0)'); 1000 sparse frames that the peer steers alternately to
          queue 0 and 1 (net_vhost's tx queue q fills the front end's rx queue q).

What is asserted, exact outcomes only: frame counts both ways (the peer's sent/back, and per rx
queue the front end's rx_qN_good_packets == what net_vhost accepted on its tx queue N), every
returned frame intact and in order, l3fwd-power exits 0. For net_vnapi (the front end under
test) also, for every queue: rx_qN_intr_unnotified_work == 0 (the exact lost-wakeup detector:
l3fwd-power disarms after its 10 ms epoll timeout, and the driver counts a disarm that finds
completions nobody announced), l3fwd-power's own wakeup lines against the driver's counters
(below), and for sparse/mq traffic rx_qN_intr_notifications > 0 and rx_qN_intr_wakeups > 0 on
every queue; at idle 0 wakeup lines, no notification, no wakeup, and CPU < 2 %.
net_virtio_user, the reference, is held to the counts only; its CPU and wakeups are printed.

l3fwd-power's wakeup lines against the driver's xstats, per queue q. EAL does not read the
vnapi eventfds (counter size 0); l3fwd-power logs one line for q when rte_epoll_wait reports q's
eventfd readable, and then disarms every queue; the driver's disarm reads (and empties) the
eventfd. Epoll reports an eventfd only while its counter is non-zero, and nothing reads it between
that report and the disarm, so the disarm after a line for q reads a count >= 1: either more
than its own rescue signals (a back-end notification on an armed queue: rx_qN_intr_wakeups + 1)
or only its own rescue signal (rx_qN_intr_rescues moved in that arming). Hence, exactly:
    lines(q) <= rx_qN_intr_wakeups + rx_qN_intr_rescues.
The other way is not exact: a notification that lands after rte_epoll_wait returned (its 10 ms
timeout, or another queue's event) and before the disarm is a wakeup with no line; the
difference is printed.

No run is repeated: every check fails the first (and only) run it fails in.
"""

import os
import re
import shutil
import sys
import time

from . import harness as h
from . import peer as vp
from .harness import check
from .procfs import system_busy

SKIP = 77
FE_MAC = '02:00:00:00:00:0a'
# l3fwd-power's per-wakeup log line (INFO, logtype user1), one per queue its epoll reported.
WAKEUP_RE = r'lcore \d+ is waked up from rx interrupt on port (\d+) queue (\d+)'
CLK_TCK = h.CLK_TCK

# Spec threshold (net_vnapi).
IDLE_CPU_MAX_PCT = 2.0

FRONTENDS = {
    # name: (vdev, needs plugin, extra l3fwd-power options)
    'vnapi': ('net_vnapi0,path={sock},mac={mac}', True, []),
    # net_virtio_user reports no packet types: l3fwd-power needs its software parser.
    'virtio_user': ('net_virtio_user0,path={sock},mac={mac}', False, ['--parse-ptype']),
}

CASE_DEFAULTS = {
    'count': {'packets': 10000, 'window': 128, 'deadline': 90.0, 'nice': 0},
    'idle': {'idle_s': 10.0, 'deadline': 90.0, 'nice': 0},
    'sparse': {'packets': 2000, 'gap_min_us': 100, 'gap_max_us': 5000, 'deadline': 150.0,
               'nice': 0},
    'mq': {'packets': 1000, 'gap_min_us': 100, 'gap_max_us': 3000, 'deadline': 150.0,
           'nice': 0, 'queues': 2},
}


def rm_runtime(prefix):
    def fn():
        shutil.rmtree(os.path.join('/var/run/dpdk', prefix), ignore_errors=True)
    return fn


# ---- /proc accounting -----------------------------------------------------------------------

def threads_cpu_s(pid):
    """{'comm/tid': cpu seconds} for each thread."""
    out = {}
    for tid, comm in h.proc_threads(pid):
        try:
            out['%s/%d' % (comm, tid)] = h.thread_cpu_ticks(pid, tid) / CLK_TCK
        except (OSError, ValueError, IndexError):
            pass
    return out


def sched_wait_s(pid):
    """Run-queue wait of the main thread (schedstat field 2), seconds; None if unavailable."""
    try:
        with open('/proc/%d/schedstat' % pid) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def busy_pct(a, b):
    res = {}
    for cpu in b:
        if cpu in a:
            db = b[cpu][0] - a[cpu][0]
            dt = b[cpu][1] - a[cpu][1]
            res[cpu] = round(100.0 * db / dt, 1) if dt > 0 else 0.0
    return res


class Snapshot:
    def __init__(self, pid):
        self.t = time.monotonic()
        self.cpu = h.proc_cpu_s(pid)
        self.threads = threads_cpu_s(pid)
        self.wait = sched_wait_s(pid)
        self.sys = system_busy()


# ---- one run --------------------------------------------------------------------------------

def peer_argv(peer, case, sock, prefix, cfg):
    """vnapi-peer against l3fwd-power: frames l3fwd-power routes back out of port 0."""
    if case == 'count':
        phases = [vp.phase('closed', count=cfg['packets'], window=cfg['window'])]
    elif case == 'idle':
        phases = [vp.phase('idle', secs=cfg['idle_s']), vp.phase('sparse', count=1)]
    else:
        phases = [vp.phase('sparse', count=cfg['packets'],
                           gap=(cfg['gap_min_us'], cfg['gap_max_us']))]
    return vp.argv(peer, phases, ifaces=[sock], eal=vp.eal_args(prefix, 0), expect='routed',
                   fe_mac=FE_MAC, link_timeout=30, timeout=int(cfg['deadline'] - 40),
                   linger=int(cfg['deadline']), queues=cfg.get('queues', 1),
                   loss_ms=2000 if case == 'count' else None, seed=cfg.get('seed'))


def l3fwd_argv(l3fwd, fe, sock, prefix, plugin, devargs='', queues=1):
    vdev, _, extra = FRONTENDS[fe]
    if devargs:
        vdev += ',' + devargs
    if queues != 1:
        vdev += ',queues=%d' % queues
    # Every rx queue on l3fwd-power's one lcore: one epoll set, one disarm pass over all.
    config = ','.join('(0,%d,0)' % q for q in range(queues))
    argv = [l3fwd, '--no-huge', '-m', '512', '--no-pci', '--lcores', '0@1',
            '--file-prefix', prefix, '--log-level=user1:info']
    if plugin:
        argv += ['-d', plugin]
    argv += ['--vdev', vdev.format(sock=sock, mac=FE_MAC), '--',
             '-p', '0x1', '--config=' + config, '--interrupt-only'] + extra
    return argv


# The per-queue xstats this test reads (rx_q<N>_<name>).
INTR_XSTATS = ('intr_arms', 'intr_rescues', 'intr_notifications', 'intr_wakeups',
               'intr_wakeup_packets', 'intr_spurious_wakeups', 'intr_unnotified_work',
               'good_packets')


def qx(xs, q, name):
    """rx_q<q>_<name> from an xstats dict (None if absent)."""
    return (xs or {}).get('rx_q%d_%s' % (q, name))


def telemetry_xstats(prefix, port=0):
    """Port xstats of a running DPDK process through its telemetry socket (l3fwd-power has
    no way to print them itself). Returns {name: value}, or None if unreachable."""
    try:
        xs = h.telemetry(prefix, '/ethdev/xstats,%d' % port).get('/ethdev/xstats')
    except (OSError, ValueError):
        return None
    return xs if isinstance(xs, dict) else None


def xstats_delta(a, b):
    if a is None or b is None:
        return None
    return {k: b.get(k, 0) - a.get(k, 0) for k in b
            if re.match(r'rx_q\d+_(%s)$' % '|'.join(INTR_XSTATS), k)}


def niced(argv, nice):
    return (['nice', '-n', str(nice)] + argv) if nice else argv


def run_case(case, fe, cfg=None):
    """Run one case once; returns a dict of measurements (raises on harness errors)."""
    cfg = dict(CASE_DEFAULTS[case], **(cfg or {}))
    peer = vp.binary()
    l3fwd = h.env_path('VNAPI_L3FWD_POWER')
    plugin = h.prepare_plugin() if FRONTENDS[fe][1] else None
    res = {'case': case, 'frontend': fe, 'config': cfg}
    wd = h.Workdir('l3')
    procs = []
    try:
        sock = wd.socket('vhost')
        pp = h.unique('l3p')
        pr = h.DpdkProcess('peer', niced(peer_argv(peer, case, sock, pp, cfg), cfg['nice']),
                           deadline=cfg['deadline'], cleanup=[rm_runtime(pp)])
        procs.append(pr.start())
        pr.wait_for(r'^READY ', 30.0, what='peer READY (vhost-user socket listening)')

        fp = h.unique('l3f')
        argv = niced(l3fwd_argv(l3fwd, fe, sock, fp, plugin, cfg.get('devargs', ''),
                                cfg.get('queues', 1)), cfg['nice'])
        res['l3fwd_cmd'] = ' '.join(argv)
        lf = h.DpdkProcess('l3fwd-power', argv, deadline=cfg['deadline'] - 10,
                           cleanup=[rm_runtime(fp)])
        procs.append(lf.start())
        lf.wait_for(r'entering main interrupt loop on lcore', 60.0,
                    what='l3fwd-power main interrupt loop')
        res['l3fwd_rx_intr'] = not lf.find_all(r"RX interrupt won't enable")
        snap_start = Snapshot(lf.pid)
        peer_wait0 = sched_wait_s(pr.pid)

        m = pr.wait_for(r'^WARMUP back ms=([0-9.]+)', 45.0, what='warm-up frame back')
        res['warmup_ms'] = float(m.group(1))
        t_warm = time.monotonic()
        res['fds_after_warmup'] = h.open_fds_settled(lf.pid)
        fdt_warm = h.fd_table(lf.pid)

        if case == 'idle':
            pr.wait_for(r'^PHASE 0 idle begin', 30.0, what='idle window begins')
            a = Snapshot(lf.pid)
            xa = telemetry_xstats(fp)
            pr.wait_for(r'^PHASE 0 idle stop', cfg['idle_s'] + 30.0, what='idle window ends')
            b = Snapshot(lf.pid)
            res['idle_xstats'] = xstats_delta(xa, telemetry_xstats(fp))
            window = b.t - a.t
            wakeups = [ln for ln, _ in lf.find_all(WAKEUP_RE) if a.t <= ln.t <= b.t]
            res['idle_window_s'] = round(window, 3)
            res['idle_cpu_pct'] = round(100.0 * (b.cpu - a.cpu) / window, 2)
            res['idle_rx_wakeups'] = len(wakeups)
            res['idle_rx_wakeups_per_s'] = round(len(wakeups) / window, 2)
            res['idle_threads_cpu_s'] = {k: round(v - a.threads.get(k, 0.0), 3)
                                         for k, v in b.threads.items()
                                         if v - a.threads.get(k, 0.0) > 0}
            res['idle_system_busy_pct'] = busy_pct(a.sys, b.sys)

        m = pr.wait_for(vp.RESULT_RE, cfg['deadline'], what='peer RESULT line')
        snap_end = Snapshot(lf.pid)
        res['xstats'] = telemetry_xstats(fp)
        res['fds_at_end'] = h.open_fds_back_to(lf.pid, res['fds_after_warmup'])
        res['fds_changed'] = h.fd_diff(fdt_warm, h.fd_table(lf.pid))
        peer_wait1 = sched_wait_s(pr.pid)
        if peer_wait0 is not None and peer_wait1 is not None:
            res['peer_runqueue_wait_ms'] = round(1e3 * (peer_wait1 - peer_wait0), 3)
        res['peer'] = vp.parse(m.string)
        res['phases'] = vp.phases(pr)
        # The phase whose round trips are the figures: the traffic (idle: the check frame).
        res['traffic'] = res['phases'][-1] if res['phases'] else {}
        res['run_window_s'] = round(snap_end.t - snap_start.t, 3)
        res['l3fwd_cpu_s'] = round(snap_end.cpu - snap_start.cpu, 3)
        if snap_start.wait is not None and snap_end.wait is not None:
            res['l3fwd_runqueue_wait_ms'] = round(1e3 * (snap_end.wait - snap_start.wait), 3)
        res['system_busy_pct'] = busy_pct(snap_start.sys, snap_end.sys)
        res['rx_wakeups_after_warmup'] = len([ln for ln, _ in lf.find_all(WAKEUP_RE)
                                              if ln.t >= t_warm])
        res['rx_wakeups_total'] = len(lf.find_all(WAKEUP_RE))

        # l3fwd-power first (SIGINT), while its back end is still up; then the peer.
        res['l3fwd_alive_at_end'] = lf.alive()
        res['l3fwd_rc'] = lf.stop()
        res['l3fwd_deadline_hit'] = lf.deadline_hit
        res['l3fwd_exit_problem'] = lf.exit_problem()
        res['l3fwd_tail'] = lf.tail(15)
        # Every wakeup line, per queue, once l3fwd-power is gone (no line can still be on
        # its way); nothing wakes it between the xstats read above and its stop: the
        # traffic is over and its 10 ms epoll timeouts are not logged.
        res['wakeup_lines'] = {}
        for _, m in lf.find_all(WAKEUP_RE):
            q = int(m.group(2))
            res['wakeup_lines'][q] = res['wakeup_lines'].get(q, 0) + 1
        # The peer ends at its SIGINT (it lingers) with its RESULT's code as its exit status.
        pr.expect_exit(res['peer'].get('code'))
        res['peer_rc'] = pr.stop()
        res['peer_deadline_hit'] = pr.deadline_hit
        res['peer_exit_problem'] = pr.exit_problem()
        res['peer_tail'] = pr.tail(12)
        res['slow'] = [ln.text for ln, _ in pr.find_all(r'^SLOW ')]
        return res
    finally:
        for p in reversed(procs):
            try:
                p.stop()
            except Exception as e:  # pragma: no cover
                print('stop %s: %s' % (p.name, e), file=sys.stderr)
        wd.close()


# ---- verdicts -------------------------------------------------------------------------------

def check_queues(res, f, traffic):
    """Per rx queue, what every front end must show (exact counts) and, for net_vnapi, its
    interrupt counters: no lost wakeup, l3fwd-power's wakeup lines accounted for, and with
    traffic at least one notification and one wakeup."""
    p = res.get('peer') or {}
    xs = res.get('xstats')
    lines = res.get('wakeup_lines', {})
    nq = p.get('queues', 1)
    size = p.get('size', 0)
    back = sum(p.get('q%d_back' % q, 0) for q in range(nq))
    check(xs is not None and xs.get('tx_good_packets') == back and
          xs.get('tx_good_bytes') == size * back,
          'the port sent exactly what the peer got back: tx_good_packets %s, tx_good_bytes %s '
          '(peer: %d frames of %d bytes)' % ((xs or {}).get('tx_good_packets'),
                                              (xs or {}).get('tx_good_bytes'), back, size), f)
    # The reference only: warm-up frames the peer sent and never got back may be ones
    # net_virtio_user dropped unseen: its dev_start flushes what the rx ring already
    # holds ("Flush the old packets"), and net_vhost may enqueue a warm-up frame once
    # the vring is ready, before that flush (seen once in CI: rx_q0_good_packets 2 of
    # 3 sent, warm-up 1/2 back). The deficit must be exactly such frames: at most the
    # unreturned warm-ups, over all queues. net_vnapi drops nothing: exact.
    warm_unreturned = max(0, p.get('warmup_sent', 0) - p.get('warmup_back', 0)) \
        if res['frontend'] != 'vnapi' else 0
    deficit = 0
    for q in range(nq):
        sent = p.get('q%d_sent' % q)
        good, nbytes = qx(xs, q, 'good_packets'), qx(xs, q, 'good_bytes')
        short = (sent - good) if sent is not None and good is not None else None
        exact = short == 0
        if not exact and short is not None and 0 < short <= warm_unreturned - deficit:
            deficit += short
            print('  info: rx queue %d: %d frame(s) short, within the %d warm-up frame(s) '
                  'never returned: dropped by %s\'s start-time rx flush'
                  % (q, short, warm_unreturned, res['frontend']), flush=True)
            exact = True
        check(sent is not None and exact and nbytes == size * good,
              'rx queue %d received exactly what net_vhost sent on its tx queue %d '
              '(rx_q%d_good_packets %s, rx_q%d_good_bytes %s; sent %s%s)'
              % (q, q, q, good, q, nbytes, sent,
                 '' if short in (0, None) else ', %d unreturned warm-up frame(s) may be '
                 'missing for %s' % (warm_unreturned, res['frontend'])), f)
        if res['frontend'] != 'vnapi':
            continue
        un = qx(xs, q, 'intr_unnotified_work')
        check(un == 0, 'rx_q%d_intr_unnotified_work %s == 0: no wait ended with completions '
              'the back end did not announce (no wakeup lost)' % (q, un), f)
        wk, rs = qx(xs, q, 'intr_wakeups'), qx(xs, q, 'intr_rescues')
        nt = qx(xs, q, 'intr_notifications')
        n = lines.get(q, 0)
        check(wk is not None and rs is not None and n <= wk + rs,
              'queue %d: l3fwd-power\'s %d wakeup lines <= rx_q%d_intr_wakeups %s + '
              'rx_q%d_intr_rescues %s (%s wakeups whose notification came after epoll '
              'returned)' % (q, n, q, wk, q, rs, None if wk is None else wk - n), f)
        if traffic:
            check((nt or 0) > 0 and (wk or 0) > 0 and n > 0,
                  'queue %d slept and was woken: rx_q%d_intr_notifications %s > 0, '
                  'rx_q%d_intr_wakeups %s > 0, %d wakeup lines > 0' % (q, q, nt, q, wk, n), f)


def evaluate(res):
    """Assertions per case and front end (exact outcomes); returns the failed checks."""
    case, fe = res['case'], res['frontend']
    strict = fe == 'vnapi'
    p = res.get('peer') or {}
    f = []
    check(res['l3fwd_alive_at_end'], 'l3fwd-power still running when the traffic ended', f)
    check(res['l3fwd_rc'] == 0 and res['l3fwd_exit_problem'] is None,
          'l3fwd-power ended by itself after SIGINT, exit status 0 (%s)'
          % (res['l3fwd_exit_problem'] or 'rc %s' % res['l3fwd_rc']), f)
    check(res['l3fwd_rx_intr'], 'l3fwd-power enabled rx interrupts', f)
    check(res['fds_at_end'] == res['fds_after_warmup'],
          'l3fwd-power\'s open fds back to baseline: %s after the warm-up, %s at the end'
          % (res['fds_after_warmup'], res['fds_at_end'])
          + ('' if res['fds_at_end'] == res['fds_after_warmup']
             else ' (%s)' % res.get('fds_changed', '?')), f)
    check(p.get('corrupt', 1) == 0 and p.get('dup', 1) == 0 and p.get('stray', 1) == 0 and
          p.get('ooo', 1) == 0 and p.get('foreign', 1) == 0,
          'every returned frame intact, routed by l3fwd-power, in order, no duplicates/strays '
          '(corrupt %s dup %s ooo %s stray %s foreign %s)' % (
              p.get('corrupt'), p.get('dup'), p.get('ooo'), p.get('stray'), p.get('foreign')),
          f)
    check(p.get('verdict') == 'PASS' and res['peer_rc'] == 0 and
          res['peer_exit_problem'] is None,
          'peer RESULT PASS, ended by itself after SIGINT, exit status 0 (%s)'
          % (res['peer_exit_problem'] or 'rc %s' % res['peer_rc']), f)
    xs = res.get('xstats')
    if xs is not None:
        print('  info: xstats at the end: ' + ', '.join(
            '%s=%s' % (k, v) for k, v in sorted(xs.items())
            if re.match(r'rx_q\d+_(%s)$' % '|'.join(INTR_XSTATS), k)))
    if case in ('count', 'sparse', 'mq'):
        n = res['config']['packets']
        check(p.get('sent') == n and p.get('back') == n and p.get('lost') == 0 and
              p.get('late') == 0,
              'exactly %d sent and %d back within the loss timeout (sent %s, back %s, lost %s, '
              'of them late %s)' % (n, n, p.get('sent'), p.get('back'), p.get('lost'),
                                    p.get('late')), f)
    check_queues(res, f, traffic=case in ('sparse', 'mq'))
    if case == 'idle':
        ph = res.get('phases') or [{}, {}]
        check(len(ph) == 2 and ph[1].get('back') == 1 and p.get('lost') == 0,
              'check frame after %.0f s idle came back (%s us)'
              % (res['config']['idle_s'], ph[-1].get('p50_us')), f)
        check(ph[0].get('rx') == 0, 'nothing received during the idle window (%s)'
              % ph[0].get('rx'), f)
        msg_cpu = 'idle CPU %.2f %% over %.1f s (threads: %s; machine busy %s)' % (
            res['idle_cpu_pct'], res['idle_window_s'], res['idle_threads_cpu_s'],
            res['idle_system_busy_pct'])
        msg_wk = '%d rx-interrupt wakeup lines in the idle window' % res['idle_rx_wakeups']
        ixs = res.get('idle_xstats')
        if strict:
            # The driver's own account of the idle window, read over telemetry.
            quiet = ixs is not None and all(
                v == 0 for k, v in ixs.items()
                if re.search(r'_(intr_notifications|intr_wakeups|good_packets)$', k))
            check(quiet, 'vnapi xstats over the idle window: %s (no notification, no wakeup, '
                  'no packet)' % ixs, f)
            check(res['idle_cpu_pct'] < IDLE_CPU_MAX_PCT,
                  msg_cpu + ' < %.0f %%' % IDLE_CPU_MAX_PCT, f)
            check(res['idle_rx_wakeups'] == 0, msg_wk + ' == 0', f)
        else:
            print('  info: ' + msg_cpu)
            print('  info: ' + msg_wk)
    elif case in ('sparse', 'mq'):
        # Figures only: latency is measured by devtools/latency_bench.py, not judged here.
        t = res.get('traffic') or {}
        print('  info: round trip p50 %s us, p99 %s us, max %s us (over 1 ms %s, 5 ms %s); '
              'run-queue wait l3fwd-power %s ms, peer %s ms; machine busy %s' % (
                  t.get('p50_us'), t.get('p99_us'), t.get('max_us'), t.get('over_1ms'),
                  t.get('over_5ms'),
                  res.get('l3fwd_runqueue_wait_ms'), res.get('peer_runqueue_wait_ms'),
                  res.get('system_busy_pct')))
        for ln in res.get('slow', [])[:10]:
            print('  info: ' + ln)
    return f


