#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Hybrid mode against poll and interrupt mode, pair by pair (a benchmark, not a test): does
lib/napi's hybrid mode, with vnapi-fwd's defaults, give poll mode's throughput under load,
interrupt mode's CPU at idle and no latency cost, and how does it compare with DPDK's own
l3fwd-power on the same net_vnapi port? Publishes section hybrid-bench of doc/performance.md
(vnapitools.perfdoc: doc/results/hybrid-bench.json).

Contenders, each one forwarder process on a net_vnapi port (one lcore on CPU 1) against the
one traffic engine, app/vnapi-peer (DPDK's net_vhost, CPU 0):
  poll, interrupt, hybrid   vnapi-fwd --mode MODE --fwd macswap, defaults otherwise (no tuning
                            flag: hybrid's deferral window is the default --defer-us)
  l3fwd-intr                l3fwd-power --interrupt-only
  l3fwd-pause               l3fwd-power --pmd-mgmt pause
  l3fwd-monitor             l3fwd-power --pmd-mgmt monitor, only where the CPU can monitor an
                            address (waitpkg or monitorx in /proc/cpuinfo)
  l3fwd-scale               l3fwd-power --pmd-mgmt scale, only with cpufreq
                            (/sys/devices/system/cpu/cpu1/cpufreq)
The run says which of the last two the machine lacks.

Scenarios: the phases of one vnapi-peer run, so that each contender's processes start once per
pair and serve every scenario (the peer drains --drain-ms between phases):
  rr         request/response, one frame outstanding (on one port this is also the closed loop
             with 1 frame in flight): transactions/s
  closed-32  closed loop, 32 frames in flight (one burst of 32)
  closed-256 closed loop, 256 in flight, bursts of 32
  open-1, open-10, open-50, open-100
             open loop, bursts of 8, at 1, 10, 50 and 100 % of poll mode's rate (calibrated
             once at the start: vnapi-fwd poll, vnapi-peer open rate=max, the median of its
             receive-rate samples; --rate PPS skips it)
  sparse     the hybrid-pairs traffic of devtools/latency_bench.py (single frames, each
             0.1-1.9 ms after the previous came back, every second one 35-665 us after it)
  idle       no traffic: CPU and wakeups from --idle-skip-s after its start to its end (the
             wakeups "after the first")
Figures per phase: Mpps back and transactions/s (the peer's), forwarder CPU (run time of all its
threads, /proc/PID/task/*/schedstat) and back-end CPU (vnapi-peer's, the same way over the same
window; the engine busy-waits while frames are due, so under load this is mostly its own loop,
and the cost a sleeping forwarder adds to the back end shows as kicks), wakeups/s (vnapi-fwd:
lib/napi's counters over /napi/stats; l3fwd-power --interrupt-only: its "waked up from rx
interrupt" lines; pmd-mgmt: none), notifications asked/s (vnapi-fwd: lib/napi's arms
that held, what its STATS lines call notify_req_s), kicks/s (the notifications net_vhost sent
the front end, the peer's kicks), round trip p50/p99 (the peer's; --json also keeps the max),
frames lost. --json keeps per run vnapi-fwd's FINAL line too: its dropped count says whether
frames the peer lost were given up by napi_tx (the back end's ring full) or went elsewhere.
After each run net_vnapi's rx_q0_intr_unnotified_work (the driver's lost-wakeup detector) must
be 0.

Pairs: pair k runs every contender once, in a seeded random order in which every contender
holds every slot about equally often (vnapitools.runs.pair_orders; --seed repeats one); per
scenario and figure the ratio hybrid / other is taken pair by pair, and the table gives its
median with a 95 % bootstrap interval (vnapitools.runs.median_ci).

Every process: --no-pci, its own --file-prefix, --no-huge -m 512, a deadline, ended by PID
(vnapitools.harness; the run environment is napi_experiments.Env's). Run it alone, under the
machine lock.

The trade-off curve of hybrid's one setting (--curve): vnapi-fwd hybrid at --defer-us 0, 5, 30,
50 and 200 as contenders hybrid-dN beside poll, interrupt, hybrid (the default) and l3fwd-power
--pmd-mgmt pause, 5 pairs, the open-loop loads, sparse and idle; published as section
hybrid-curve. --defer-us LIST adds such contenders to any run.

Usage:
  devtools/hybrid_bench.py [--build DIR] [--pairs N] [--secs S] [--sparse-secs S]
                           [--idle-secs S] [--contenders LIST] [--scenarios LIST]
                           [--defer-us LIST] [--curve] [--rate PPS] [--lock FILE
                           [--chunk-pairs K]] [--json FILE] [--no-doc] [--estimate] [--verbose]
  devtools/hybrid_bench.py --estimate        the plan and its run time, nothing run
  VNAPI_PERFDOC_DIR=/tmp/hb devtools/hybrid_bench.py --pairs 2 --secs 0.5
                                             smoke run (about 2 min; the page goes to /tmp/hb)
  flock /run/vnapi-cpu.lock devtools/hybrid_bench.py           the full run (about 24 min)
  devtools/hybrid_bench.py --lock /run/vnapi-cpu.lock            the same, the lock taken for
                                             7 pairs at a time (--chunk-pairs)
  flock /run/vnapi-cpu.lock devtools/hybrid_bench.py --curve   the curve (about 7 min)
"""

import argparse
import json
import os
import statistics
import sys
import time

from vnapitools import harness as h
from vnapitools import peer as vp
from vnapitools import perfdoc
from vnapitools.harness import telemetry
from vnapitools.runs import fmt, med, median_ci, new_seed, order_note, pair_orders, pair_ratios

import napi_experiments as nx   # the forwarder run environment, CPU and lib/napi snapshots
from latency_bench import cpu_lock

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = 'hybrid-bench'
CURVE_SECTION = 'hybrid-curve'
# --curve: hybrid at several --defer-us against poll, interrupt and pmd-mgmt pause, the loads
# where the setting moves CPU and latency.
CURVE_ARGS = ['--pairs', '5', '--defer-us', '0,5,30,50,200', '--contenders',
              'poll,interrupt,hybrid,l3fwd-pause', '--scenarios',
              'open-1,open-10,open-50,open-100,sparse,idle']

# contender: (label, forwarder kind, options)
CONTENDERS = {
    'poll': ('vnapi-fwd poll', 'fwd', ['--mode', 'poll']),
    'interrupt': ('vnapi-fwd interrupt', 'fwd', ['--mode', 'interrupt']),
    'hybrid': ('vnapi-fwd hybrid', 'fwd', ['--mode', 'hybrid']),
    'l3fwd-intr': ('l3fwd-power --interrupt-only', 'l3fwd', ['--interrupt-only']),
    'l3fwd-pause': ('l3fwd-power --pmd-mgmt pause', 'l3fwd', ['--pmd-mgmt', 'pause']),
    'l3fwd-monitor': ('l3fwd-power --pmd-mgmt monitor', 'l3fwd', ['--pmd-mgmt', 'monitor']),
    'l3fwd-scale': ('l3fwd-power --pmd-mgmt scale', 'l3fwd', ['--pmd-mgmt', 'scale']),
}
OTHERS = ('poll', 'interrupt', 'l3fwd-intr', 'l3fwd-pause', 'l3fwd-monitor', 'l3fwd-scale')

# scenario: (label, phase builder(rate, secs, args) -> vnapi-peer phase spec)
SCENARIOS = (
    ('rr', 'RR / closed loop, 1 in flight',
     lambda r, s, a: vp.phase('rr', secs=s)),
    ('closed-32', 'closed loop, 32 in flight',
     lambda r, s, a: vp.phase('closed', secs=s, window=32, burst=32, gap_us=0)),
    ('closed-256', 'closed loop, 256 in flight',
     lambda r, s, a: vp.phase('closed', secs=s, window=256, burst=32, gap_us=0)),
    ('open-1', 'open loop, 1 % of poll\'s rate',
     lambda r, s, a: vp.phase('open', secs=s, rate=int(r * 0.01), burst=8)),
    ('open-10', 'open loop, 10 %',
     lambda r, s, a: vp.phase('open', secs=s, rate=int(r * 0.10), burst=8)),
    ('open-50', 'open loop, 50 %',
     lambda r, s, a: vp.phase('open', secs=s, rate=int(r * 0.50), burst=8)),
    ('open-100', 'open loop, 100 %',
     lambda r, s, a: vp.phase('open', secs=s, rate=int(r), burst=8)),
    ('sparse', 'sparse (hybrid-pairs traffic)',
     lambda r, s, a: vp.phase('sparse', secs=a.sparse_secs, gap=(100, 1900), gap2=(35, 665))),
    ('idle', 'idle',
     lambda r, s, a: vp.phase('idle', secs=a.idle_secs)),
)
SCEN = {s[0]: s for s in SCENARIOS}
OPEN_BURST = 8
DRAIN_MS = 200
RUN_OVERHEAD_S = 3.0   # start of both processes, link, warm-up, settle, stop (estimate)
CAL_SECS = 3.0
LOST_XSTAT = 'rx_q0_intr_unnotified_work'

# The figures of a phase: key, column heading, digits, the ratio table's judgement of "better"
FIGS = (
    ('mpps', 'Mpps back', 3),
    ('tps', 'transactions/s', 0),
    ('fwd_cpu', 'fwd CPU %', 1),
    ('peer_cpu', 'back-end CPU %', 1),
    ('wakeups_s', 'wakeups/s', 0),
    ('notify_req_s', 'notif. asked/s', 0),
    ('kicks_s', 'kicks/s', 0),
    ('p50', 'p50 µs', 1),
    ('p99', 'p99 µs', 1),
)
# Per scenario, the figures whose hybrid/other ratio the pair table gives.
RATIO_FIGS = {
    'rr': ('tps', 'fwd_cpu', 'p99'),
    'closed-32': ('mpps', 'fwd_cpu', 'p99'),
    'closed-256': ('mpps', 'fwd_cpu', 'p99'),
    'open-1': ('fwd_cpu', 'peer_cpu', 'p99'),
    'open-10': ('fwd_cpu', 'peer_cpu', 'p99'),
    'open-50': ('fwd_cpu', 'peer_cpu', 'p99'),
    'open-100': ('mpps', 'fwd_cpu', 'p99'),
    'sparse': ('p50', 'p99', 'fwd_cpu'),
    'idle': ('fwd_cpu',),
}


def log(msg):
    print('[%s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def cpu_support():
    """{contender: None (supported) or why not} for pmd-mgmt monitor and scale."""
    try:
        with open('/proc/cpuinfo') as f:
            flags = set(next((ln.split(':', 1)[1].split() for ln in f
                              if ln.startswith('flags')), []))
    except OSError:
        flags = set()
    out = {}
    out['l3fwd-monitor'] = None if flags & {'waitpkg', 'monitorx'} else \
        'the CPU has neither waitpkg nor monitorx (/proc/cpuinfo): no power monitor'
    cf = '/sys/devices/system/cpu/cpu%d/cpufreq' % nx.FWD_CPU
    out['l3fwd-scale'] = None if os.path.isdir(cf) else \
        'no cpufreq (%s absent): no frequency scaling' % cf
    return out


def l3fwd_argv(env, prefix, vdev, opts):
    """napi_experiments' l3fwd-power command line with @opts for its mode flag."""
    argv = env.l3fwd_argv(prefix, vdev, 'vnapi')
    i = argv.index('--interrupt-only')
    return argv[:i] + opts + argv[i + 1:]


def phase_figs(kind, a, b, pid, peer_res, fwd, wake_lines):
    """The figures of one phase from the two snapshots and the peer's result line."""
    w = nx.window(a, b, pid, [0])
    secs = peer_res.get('secs') or w['window_s']
    f = {'secs': secs, 'sent': peer_res.get('sent'), 'back': peer_res.get('back'),
         'lost': peer_res.get('lost'), 'refused': peer_res.get('refused'),
         'not_exact': vp.exact(peer_res),
         'mpps': (peer_res.get('back') or 0) / secs / 1e6 if secs else None,
         'tps': peer_res.get('tps'), 'fwd_cpu': w['proc_cpu_pct'],
         'peer_own_cpu': peer_res.get('cpu_pct'),
         'kicks_s': peer_res['kicks'] / secs if peer_res.get('kicks') is not None and secs
         else None,
         'p50': peer_res.get('p50_us'), 'p99': peer_res.get('p99_us'),
         'max': peer_res.get('max_us'),
         'other_on_fwd_cpu': w.get('other_on_fwd_cpu_pct'), 'window_s': w['window_s']}
    if kind == 'fwd':
        f['wakeups_s'] = w.get('wakeups_per_s')
        f['wakeups'] = w.get('wakeups')
        n0, n1 = a.napi.get(0, {}), b.napi.get(0, {})
        if 'arms_held' in n1 and 'arms_held' in n0:
            f['notify_req_s'] = (n1['arms_held'] - n0['arms_held']) / w['window_s']
    elif wake_lines:
        n = len([ln for ln, _ in fwd.find_all(nx.WAKEUP_RE, since=a.wake_mark)
                 if a.t <= ln.t <= b.t])
        f['wakeups'] = n
        f['wakeups_s'] = n / w['window_s']
    return f


def run_contender(env, args, con, rate, scenarios, tag):
    """One forwarder run of @con through every scenario. Returns {'scen': {id: figs}, ...}."""
    label, kind, opts = CONTENDERS[con]
    sock = env.workdir.socket('hb')
    pp, fp = h.unique('hp'), h.unique('hf')
    phases = [SCEN[s][2](rate, args.secs, args) for s in scenarios]
    total = sum(phase_secs(args, s) + DRAIN_MS / 1000.0 for s in scenarios)
    deadline = total + 60
    peer_argv = env.peer_argv(pp, [sock], 1, phases, size=64, drain_ms=DRAIN_MS,
                              timeout=int(total + 40), linger=int(deadline),
                              expect='macswap' if kind == 'fwd' else 'routed')
    vdev = env.fe_vdev('vnapi', sock)
    if kind == 'fwd':
        fwd_argv = env.fwd_argv(fp, '0@%d' % nx.FWD_CPU, [vdev], 'vnapi', '(0,0,0)', opts,
                                deadline)
    else:
        fwd_argv = l3fwd_argv(env, fp, vdev, opts)
    env.commands.setdefault(con, [peer_argv, fwd_argv])
    res = {'contender': con, 'tag': tag, 'scen': {}, 'error': None}
    procs = []
    try:
        peer, fwd = env.start_pair(procs, peer_argv, pp, con, fwd_argv, fp, deadline, warm=True)
        lcores = [0] if kind == 'fwd' else []
        wake_proc = fwd if kind == 'l3fwd' else None
        for i, s in enumerate(scenarios):
            peer.wait_for(r'^PHASE %d \w+ begin' % i, 60, what='phase %d begin' % i)
            if s == 'idle':
                time.sleep(args.idle_skip_s)   # wakeups "after the first": past the arming
            a, pa = nx.Snap(fwd, fp, lcores, wake_proc), nx.Snap(peer)
            peer.wait_for(r'^PHASE %d \w+ stop' % i, phase_secs(args, s) + 30,
                          what='phase %d stop' % i)
            b, pb = nx.Snap(fwd, fp, lcores, wake_proc), nx.Snap(peer)
            pr = vp.phase_result(peer, i, 30)
            if s == 'idle':   # the window measured, not the phase
                pr = dict(pr, secs=b.t - a.t)
            res['scen'][s] = phase_figs(kind, a, b, fwd.pid, pr, fwd,
                                        '--interrupt-only' in opts)
            res['scen'][s]['peer_cpu'] = nx.window(pa, pb, peer.pid, [0])['proc_cpu_pct']
        res['peer_result'] = vp.result(peer, 60)
        xs = telemetry(fp, '/ethdev/xstats,0').get('/ethdev/xstats') or {}
        res['unnotified_work'] = xs.get(LOST_XSTAT)
        res['fwd_rc'] = fwd.stop()
        if kind == 'fwd':   # where frames the peer counts lost went: napi_tx's drops
            res['fwd_final'] = nx.fwd_final(fwd)
        res['peer_rc'] = peer.stop()
        if res['unnotified_work'] != 0:
            res['error'] = '%s = %r: a lost wakeup' % (LOST_XSTAT, res['unnotified_work'])
    except (h.HarnessError, OSError, ValueError, KeyError) as e:
        res['error'] = str(e).split('\n')[0]
        res['tails'] = [p.tail(20) for p in procs]
        if args.verbose:
            for t in res['tails']:
                print(t)
    finally:
        nx.stop_all(procs)
    if res['error']:
        log('  ERROR %s: %s' % (con, res['error']))
    return res


def phase_secs(args, s):
    return {'sparse': args.sparse_secs, 'idle': args.idle_secs}.get(s, args.secs)


def calibrate(env, args):
    """Poll mode's rate: vnapi-fwd poll against open rate=max, the median of the peer's
    receive-rate samples after the first."""
    sock = env.workdir.socket('cal')
    pp, fp = h.unique('cp'), h.unique('cf')
    deadline = CAL_SECS + 60
    peer_argv = env.peer_argv(pp, [sock], 1, [vp.phase('open', secs=CAL_SECS, rate='max',
                                                       burst=32)],
                              size=64, drain_ms=DRAIN_MS, sample_ms=250, expect='macswap',
                              timeout=int(CAL_SECS + 40), linger=int(deadline))
    fwd_argv = env.fwd_argv(fp, '0@%d' % nx.FWD_CPU, [env.fe_vdev('vnapi', sock)], 'vnapi',
                            '(0,0,0)', ['--mode', 'poll'], deadline)
    env.commands.setdefault('calibration', [peer_argv, fwd_argv])
    procs = []
    try:
        peer, _ = env.start_pair(procs, peer_argv, pp, 'cal-poll', fwd_argv, fp, deadline)
        pr = vp.phase_result(peer, 0, CAL_SECS + 40)
        samples = [h.parse_kv(ln.text)['rx_pps'] for ln, _ in peer.find_all(r'^SAMPLE 0 ')]
    finally:
        nx.stop_all(procs)
    rate = statistics.median(samples[1:]) if len(samples) > 1 else pr.get('pps')
    return rate, samples


def estimate_s(args, contenders, scenarios):
    per = RUN_OVERHEAD_S + sum(phase_secs(args, s) + DRAIN_MS / 1000.0 for s in scenarios)
    cal = 0 if args.rate else RUN_OVERHEAD_S + CAL_SECS
    return cal + args.pairs * len(contenders) * per


# ---- tables ------------------------------------------------------------------------------

def by_scen(runs, con, s, key):
    """@key of scenario @s in the runs of @con, in pair order (None where a run failed)."""
    out = []
    for r in runs:
        if r['contender'] == con:
            f = r['scen'].get(s) if not r['error'] else None
            out.append(f.get(key) if f else None)
    return out


def figures_table(runs, contenders, scenarios):
    rows = []
    for s in scenarios:
        for con in contenders:
            ok = [r for r in runs if r['contender'] == con and not r['error'] and s in r['scen']]
            lost = sum(r['scen'][s]['lost'] or 0 for r in ok)
            sent = sum(r['scen'][s]['sent'] or 0 for r in ok)
            row = [SCEN[s][1] if con == contenders[0] else '', CONTENDERS[con][0], str(len(ok))]
            for key, _, d in FIGS:
                row.append(fmt(med(by_scen(runs, con, s, key)), d))
            row.append('%d of %d' % (lost, sent))
            rows.append(row)
    cols = ['scenario', 'forwarder', 'runs'] + [c for _, c, _ in FIGS] + ['lost']
    return perfdoc.table(cols, rows, 'lll' + 'r' * (len(FIGS) + 1))


def ratio_cell(runs, s, key, other):
    m, lo, hi = median_ci(pair_ratios(by_scen(runs, 'hybrid', s, key),
                                      by_scen(runs, other, s, key)))
    if m is None:
        return '–'
    return '%.3f [%.3f, %.3f]' % (m, lo, hi)


def ratio_table(runs, contenders, scenarios):
    others = [c for c in OTHERS if c in contenders]
    rows = []
    for s in scenarios:
        for key in RATIO_FIGS[s]:
            head = dict((k, c) for k, c, _ in FIGS)[key]
            rows.append([SCEN[s][1] if key == RATIO_FIGS[s][0] else '', head] +
                        [ratio_cell(runs, s, key, o) for o in others])
    cols = ['scenario', 'figure'] + ['hybrid / %s' % CONTENDERS[o][0] for o in others]
    return perfdoc.table(cols, rows, 'll' + 'r' * len(others))


def goals(runs, scenarios):
    """The issue's goals that one run can judge, as lines (figures, then yes/no)."""
    out = []

    def rc(s, key, other):
        return median_ci(pair_ratios(by_scen(runs, 'hybrid', s, key),
                                     by_scen(runs, other, s, key)))
    for s in ('rr', 'closed-32', 'closed-256'):
        if s not in scenarios:
            continue
        m, lo, _ = rc(s, 'mpps', 'poll')
        if m is not None:
            out.append('- %s: hybrid / poll Mpps %.3f, interval from %.3f (goal >= 0.97, '
                       'from >= 0.95): %s' % (SCEN[s][1], m, lo,
                                              'met' if m >= 0.97 and lo >= 0.95 else 'not met'))
    for s in ('open-10', 'open-50'):
        if s not in scenarios:
            continue
        m, _, _ = rc(s, 'fwd_cpu', 'poll')
        lost = sum(x or 0 for x in by_scen(runs, 'hybrid', s, 'lost'))
        if m is not None:
            out.append('- %s: hybrid / poll forwarder CPU %.3f (goal <= 0.8): %s; hybrid lost '
                       '%d frames' % (SCEN[s][1], m, 'met' if m <= 0.8 else 'not met', lost))
        hc, hp = (med(by_scen(runs, 'hybrid', s, k)) for k in ('fwd_cpu', 'p99'))
        pc, pp = (med(by_scen(runs, 'l3fwd-pause', s, k)) for k in ('fwd_cpu', 'p99'))
        if None not in (hc, hp, pc, pp):
            out.append('- %s: hybrid (CPU %.1f %%, p99 %.1f µs) against l3fwd-power --pmd-mgmt '
                       'pause (%.1f %%, %.1f µs), medians (goal: not worse in both): %s' % (
                           SCEN[s][1], hc, hp, pc, pp,
                           'met' if hc <= pc and hp <= pp else 'not met'))
    if 'idle' in scenarios:
        cpu = med(by_scen(runs, 'hybrid', 'idle', 'fwd_cpu'))
        wk = sum(x or 0 for x in by_scen(runs, 'hybrid', 'idle', 'wakeups'))
        if cpu is not None:
            out.append('- idle: hybrid %.2f %% CPU (goal < 1), %d wakeups after the first in '
                       'all runs (goal 0): %s' % (cpu, wk, 'met' if cpu < 1 and wk == 0
                                                  else 'not met'))
    curve = sorted((int(c[len('hybrid-d'):]), c) for c in {r['contender'] for r in runs}
                   if c.startswith('hybrid-d'))
    for s in scenarios if curve else ():
        pp = med(by_scen(runs, 'poll', s, 'p99'))
        if pp is None:
            continue
        within = [d for d, c in curve if (med(by_scen(runs, c, s, 'p99')) or 1e18) <= 1.2 * pp]
        out.append('- %s: the smallest --defer-us of %s whose p99 (median) is within 1.2x poll '
                   'mode\'s (%.1f µs): %s' % (SCEN[s][1], ', '.join(str(d) for d, _ in curve),
                                              pp, within[0] if within else 'none'))
    if 'sparse' in scenarios:
        m99, _, _ = rc('sparse', 'p99', 'interrupt')
        m50, _, _ = rc('sparse', 'p50', 'interrupt')
        if m99 is not None and m50 is not None:
            out.append('- sparse: hybrid / interrupt p99 %.3f (goal <= 1.1), p50 %.3f (goal: '
                       'no worse, <= 1.05): %s' % (m99, m50, 'met' if m99 <= 1.1 and m50 <= 1.05
                                                   else 'not met'))
    return out


def body(args, env, runs, contenders, scenarios, rate, unsupported):
    L = ['- Pairs: %d. %s. Per phase %.1f s (sparse %.1f s, idle %.1f s, measured from %.1f s '
         'after its start), 64 B frames; open loop in bursts of %d; poll mode\'s rate %.0f pps '
         '(%s).' % (args.pairs, 'Each pair runs every contender once, ' +
                    order_note(args.seed), args.secs, args.sparse_secs,
                    args.idle_secs, args.idle_skip_s, OPEN_BURST, rate,
                    'given' if args.rate else 'calibrated: vnapi-fwd poll, open loop at max'),
         '- Not run on this machine: ' + ('; '.join('%s (%s)' % (CONTENDERS[c][0], why)
                                                  for c, why in unsupported.items() if why)
                                        or 'nothing') + '.',
         '- Lost wakeups: net_vnapi\'s %s after every run: %s.' % (
             LOST_XSTAT, ', '.join(sorted(set(str(r.get('unnotified_work')) for r in runs)))),
         '- Failed runs: %s.' % (', '.join('%s pair %s (%s)' % (r['contender'], r['tag'],
                                                                 r['error'])
                                           for r in runs if r['error']) or 'none'),
         '', '### Hybrid over the others, pair by pair', '',
         'Median of the per-pair ratios hybrid / other, [95 % bootstrap interval]. CPU and p99: '
         'below 1 is better for hybrid; Mpps and transactions/s: above 1.', '',
         ratio_table(runs, contenders, scenarios), '', '### Goals', ''] + \
        goals(runs, scenarios) + \
        ['', '### Figures, median over the runs', '',
         'Forwarder and back-end (vnapi-peer) CPU: run time of all their threads over the same '
         'window (schedstat); notif. asked/s: lib/napi\'s arms that held (vnapi-fwd only); '
         'kicks/s: the notifications net_vhost sent the front end; wakeups/s of l3fwd-power '
         '--interrupt-only: its wakeup log lines (pmd-mgmt: none).', '',
         figures_table(runs, contenders, scenarios), '', 'Commands (first run of each):', '']
    for k, (pa, fa) in env.commands.items():
        L += ['- %s' % k, '  - back end: `%s`' % nx.cmdline(pa),
              '  - forwarder: `%s`' % nx.cmdline(fa)]
    return '\n'.join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default=os.path.join(TOP, 'build'))
    ap.add_argument('--pairs', type=int, default=20, help='pairs (default 20)')
    ap.add_argument('--secs', type=float, default=1.0,
                    help='seconds per closed, open and rr phase (default 1.0)')
    ap.add_argument('--sparse-secs', type=float, default=1.2)
    ap.add_argument('--idle-secs', type=float, default=1.2)
    ap.add_argument('--idle-skip-s', type=float, default=0.3)
    ap.add_argument('--contenders', help='comma list (default: all the machine supports; '
                                         'known: %s)' % ', '.join(CONTENDERS))
    ap.add_argument('--scenarios', default=','.join(s[0] for s in SCENARIOS))
    ap.add_argument('--defer-us', help='comma list of vnapi-fwd --defer-us values: a contender '
                                       'hybrid-dN per value (the trade-off curve; published '
                                       'as section %s)' % CURVE_SECTION)
    ap.add_argument('--curve', action='store_true',
                    help='the trade-off curve: ' + ' '.join(CURVE_ARGS))
    ap.add_argument('--rate', type=float, help='poll mode\'s rate (pps): no calibration')
    ap.add_argument('--lock', help='take this lock (flock) for every --chunk-pairs pairs, '
                                   'so that other jobs can run between (run without an outer '
                                   'flock then)')
    ap.add_argument('--chunk-pairs', type=int, default=7,
                    help='pairs per lock hold with --lock (default 7: about 8.5 min)')
    ap.add_argument('--seed', type=int, help='seed of the run order in the pairs (default: '
                    'drawn at start, printed and stored)')
    ap.add_argument('--json', help='write every run\'s figures here')
    ap.add_argument('--no-doc', action='store_true', help='print the section, write nothing')
    ap.add_argument('--estimate', action='store_true')
    ap.add_argument('--verbose', action='store_true')
    argv = sys.argv[1:]
    if '--curve' in argv:   # its options first: the user's own, after them, win
        argv = CURVE_ARGS + argv
    args = ap.parse_args(argv)
    if args.seed is None:
        args.seed = new_seed()
    unsupported = cpu_support()
    extra = []
    for d in (args.defer_us.split(',') if args.defer_us else []):
        if not d.isdigit():
            ap.error('--defer-us: %r is not a number of microseconds' % d)
        name = 'hybrid-d%d' % int(d)
        CONTENDERS[name] = ('vnapi-fwd hybrid --defer-us %d' % int(d), 'fwd',
                            ['--mode', 'hybrid', '--defer-us', str(int(d))])
        extra.append(name)
    if args.contenders:
        contenders = args.contenders.split(',')
    else:
        contenders = [c for c in CONTENDERS if not unsupported.get(c) and c not in extra]
    contenders += [c for c in extra if c not in contenders]
    scenarios = args.scenarios.split(',')
    for c in contenders:
        if c not in CONTENDERS:
            ap.error('unknown contender %r (known: %s)' % (c, ', '.join(CONTENDERS)))
    for s in scenarios:
        if s not in SCEN:
            ap.error('unknown scenario %r (known: %s)' % (s, ', '.join(SCEN)))
    if args.chunk_pairs < 1:
        ap.error('--chunk-pairs must be at least 1')
    if 'hybrid' not in contenders or args.pairs < 1:
        ap.error('hybrid must run, in at least one pair')
    est = estimate_s(args, contenders, scenarios)
    log('plan: %d pairs x %d contenders (%s) x %d scenarios; about %.1f min; order seed %d'
        % (args.pairs, len(contenders), ', '.join(contenders), len(scenarios), est / 60,
           args.seed))
    for c, why in unsupported.items():
        if why:
            log('not run: %s: %s' % (CONTENDERS[c][0], why))
    if args.estimate:
        return 0
    cmd = 'devtools/hybrid_bench.py' + ''.join(' ' + a for a in sys.argv[1:])
    section = CURVE_SECTION if extra else SECTION
    meta = perfdoc.measurement(section, cmd, build=args.build)
    h.install_guards()
    env = nx.Env(args)
    env.prepare()
    runs = []
    t0 = time.monotonic()
    rate, samples = args.rate, []
    chunk = args.chunk_pairs if args.lock else args.pairs
    orders = pair_orders(args.pairs, contenders, args.seed)
    try:
        for first in range(0, args.pairs, chunk):
            with cpu_lock(args.lock):
                if rate is None:
                    rate, samples = calibrate(env, args)
                    log('poll mode\'s rate: %.0f pps (samples %s)' % (rate, ', '.join(
                        '%.0f' % x for x in samples)))
                for k in range(first, min(first + chunk, args.pairs)):
                    for con in orders[k]:
                        r = run_contender(env, args, con, rate, scenarios, k)
                        runs.append(r)
                        hy = r['scen']
                        log('pair %d %-13s %s' % (k, con, '  '.join(
                            '%s %s/%s%%/%s' % (s, fmt(hy[s].get('mpps'), 3),
                                               fmt(hy[s].get('fwd_cpu'), 0),
                                               fmt(hy[s].get('p99'), 0))
                            for s in scenarios if s in hy)))
    finally:
        env.close()
    log('done in %.1f min' % ((time.monotonic() - t0) / 60))
    data = {'rate': rate, 'samples': samples, 'contenders': contenders, 'seed': args.seed,
            'scenarios': scenarios, 'runs': [dict((k, v) for k, v in r.items() if k != 'tails')
                                              for r in runs]}
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(data, f, indent=1)
    text = body(args, env, runs, contenders, scenarios, rate, unsupported)
    intro = ('Hybrid mode (vnapi-fwd defaults) against poll and interrupt mode and DPDK\'s '
             'l3fwd-power on the same net_vnapi port, in pairs of runs in a seeded random '
             'order; the scenarios and '
             'figures are described in devtools/hybrid_bench.py.')
    perfdoc.report(meta, text, intro, data=data, dry=args.no_doc, log=log)
    return 1 if any(r['error'] for r in runs) else 0


if __name__ == '__main__':
    sys.exit(main())
