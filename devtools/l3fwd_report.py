#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Measure l3fwd-power --interrupt-only on net_vnapi and net_virtio_user and publish the table
as section l3fwd of doc/performance.md (vnapitools.perfdoc: doc/results/l3fwd.json).

Each run does the idle case (10 s without traffic: l3fwd-power's CPU and its rx-interrupt
wakeups) and the sparse case (2000 single packets at random 0.1-5 ms gaps: round-trip latency)
of the l3fwd-power test (vnapitools.l3fwd, the test's own run and checks), for both front ends, alternating their order run by run (the
two vCPUs here change speed every few seconds, and other jobs share them). The table gives the
median over runs of each per-run figure, the worst max, and the total lost.

Usage: devtools/l3fwd_report.py [-C BUILD] [--runs N] [--no-write]
"""

import argparse
import json
import os
import re
import shlex
import sys

from vnapitools import l3fwd as l3
from vnapitools import perfdoc
from vnapitools.runs import build_env, fmt, med, quiet

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION_ID = 'l3fwd'
FRONTENDS = ['vnapi', 'virtio_user']
FE_LABEL = {'vnapi': 'net_vnapi', 'virtio_user': 'net_virtio_user (DPDK 22.11)'}


def log(msg):
    print('[l3fwd_report] %s' % msg, flush=True)


def run_one(case, fe, jsonfile):
    """One run of the test's case, its checks, its measurements appended to @jsonfile."""
    try:
        res = quiet(l3.run_case, case, fe, None)
        res['failures'] = quiet(l3.evaluate, res)
    except Exception as e:  # a harness error: the run failed, no figures
        log('%-7s %-12s FAIL (%s)' % (case, fe, str(e).split('\n')[0]))
        return None, 1
    res['pass'] = not res['failures']
    log('%-7s %-12s %s' % (case, fe, 'PASS' if res['pass'] else
                            'FAIL (%s)' % '; '.join(res['failures'])))
    if jsonfile:
        with open(jsonfile, 'a') as f:
            f.write(json.dumps({k: v for k, v in res.items() if not k.endswith('_tail')},
                               sort_keys=True) + '\n')
    return res, 0 if res['pass'] else 1


def aggregate(results):
    out = {}
    for fe in FRONTENDS:
        idle = [r for r in results if r['frontend'] == fe and r['case'] == 'idle']
        sparse = [r for r in results if r['frontend'] == fe and r['case'] == 'sparse']
        sp = [r.get('traffic') or {} for r in sparse]
        idle_busy = [max((r.get('idle_system_busy_pct') or {'0': 0}).values()) for r in idle]
        sparse_busy = [max((r.get('system_busy_pct') or {'0': 0}).values()) for r in sparse]
        out[fe] = {
            'idle_runs': len(idle),
            'sparse_runs': len(sparse),
            'idle_cpu_pct': med([r.get('idle_cpu_pct') for r in idle]),
            'idle_cpu_pct_max': max([r.get('idle_cpu_pct', 0) for r in idle] or [None]),
            'idle_wakeups_per_s': med([r.get('idle_rx_wakeups_per_s') for r in idle]),
            'idle_wakeups_total': sum(r.get('idle_rx_wakeups', 0) for r in idle),
            'idle_check_us': med([(r.get('traffic') or {}).get('max_us') for r in idle]),
            'p50': med([p.get('p50_us') for p in sp]),
            'p99': med([p.get('p99_us') for p in sp]),
            'max': max([p.get('max_us', 0) for p in sp] or [None]),
            'net_p50': med([p.get('net_p50_us') for p in sp]),
            'net_p99': med([p.get('net_p99_us') for p in sp]),
            'net_max': max([p.get('net_max_us', 0) for p in sp] or [None]),
            'sent': sum(p.get('sent', 0) for p in sp),
            'lost': sum(p.get('lost', 0) for p in sp) + sum(
                (r.get('peer') or {}).get('lost', 0) for r in idle),
            'passed': sum(1 for r in idle + sparse if r.get('pass')),
            'busy_idle': med(idle_busy),
            'busy_sparse': med(sparse_busy),
        }
    return out


def raw_over(results, fe):
    """Packets over 5 ms round trip (the peer's over_5ms)."""
    return sum((r.get('traffic') or {}).get('over_5ms', 0) for r in results
               if r['frontend'] == fe and r['case'] == 'sparse')


def timeout_waits(results, fe):
    """Sparse packets whose round trip, net of run-queue wait, reached 9 ms: they waited for
    l3fwd-power's 10 ms epoll timeout instead of an interrupt (from the peer's SLOW lines)."""
    n = 0
    for r in results:
        if r['frontend'] != fe or r['case'] != 'sparse':
            continue
        for ln in r.get('slow', []):
            d = dict(re.findall(r'(\w+)=([\d.]+)', ln))
            if float(d.get('latency_us', 0)) - float(d.get('runq_wait_us', 0)) >= 9000:
                n += 1
    return n


def section(agg, results, runs):
    """The section's body, below its provenance lines."""
    lines = []
    lines.append('- Runs: %d per front end, order alternating run by run.' % runs)
    lines.append('')
    lines.append('Setup: DPDK 22.11 `l3fwd-power --interrupt-only -p 0x1 --config=\'(0,0,0)\'` '
                 '(one lcore pinned on CPU 1, `--no-huge -m 512`), the front end under test as '
                 'its only port; `app/vnapi-peer` (DPDK net_vhost, the vhost-user server, '
                 'pinned on CPU 0) sends IPv4/UDP that l3fwd-power routes back '
                 'out of port 0. net_virtio_user needs `--parse-ptype` (it reports no packet '
                 'types); net_vnapi runs without it. Both vCPUs are shared with other jobs.')
    lines.append('')
    lines.append('| front end | idle CPU % | rx wakeups/s idle | sparse p50 µs | sparse p99 µs '
                 '| sparse max µs | net of run-queue wait p50 / p99 / max µs | lost |')
    lines.append('|---|---:|---:|---:|---:|---:|---:|---:|')
    for fe in FRONTENDS:
        a = agg[fe]
        lines.append('| %s | %s | %s | %s | %s | %s | %s / %s / %s | %d of %d |' % (
            FE_LABEL[fe], fmt(a['idle_cpu_pct'], 2), fmt(a['idle_wakeups_per_s'], 2),
            fmt(a['p50']), fmt(a['p99']), fmt(a['max']), fmt(a['net_p50']), fmt(a['net_p99']),
            fmt(a['net_max']), a['lost'], a['sent'] + a['idle_runs']))
    lines.append('')
    lines.append('- idle: l3fwd-power\'s utime+stime (all threads, /proc/PID/stat) over a 10 s '
                 'window without traffic, median of runs (worst run: %s %% vnapi, %s %% '
                 'virtio_user). rx wakeups are its "lcore 0 is waked up from rx interrupt" '
                 'log lines in the window (%d vnapi, %d virtio_user in total); its own 10 ms '
                 'epoll timeouts are not counted. The check packet after the window came back '
                 'in %s µs (vnapi) / %s µs (virtio_user), median.'
                 % (fmt(agg['vnapi']['idle_cpu_pct_max'], 2),
                    fmt(agg['virtio_user']['idle_cpu_pct_max'], 2),
                    agg['vnapi']['idle_wakeups_total'], agg['virtio_user']['idle_wakeups_total'],
                    fmt(agg['vnapi']['idle_check_us']), fmt(agg['virtio_user']['idle_check_us'])))
    lines.append('- sparse: %d single packets per run, each sent 0.1-5 ms (uniform) after the '
                 'previous one came back; round trip peer -> l3fwd-power -> peer, '
                 'CLOCK_MONOTONIC stamps in the payload. p50/p99: median over runs of the '
                 'per-run percentile; max: worst over all runs. Packets over 5 ms round trip: '
                 '%d vnapi, %d virtio_user.'
                 % (results and next((r['config']['packets'] for r in results
                                      if r['case'] == 'sparse'), 0) or 0,
                    raw_over(results, 'vnapi'), raw_over(results, 'virtio_user')))
    lines.append('- net of run-queue wait: each round trip minus the time l3fwd-power\'s lcore '
                 'and the peer were runnable but not running (schedstat, read by the peer '
                 'around every packet), i.e. what other programs on the shared CPUs added. A '
                 'wakeup the front end misses is not run-queue wait: it stays in this figure. '
                 'No test judges latency (devtools/latency_bench.py measures it). Packets that '
                 'waited for '
                 'l3fwd-power\'s 10 ms epoll timeout instead of an interrupt (net >= 9 ms, the '
                 'signature of a packet that raced the arming): %d vnapi, %d virtio_user.'
                 % (timeout_waits(results, 'vnapi'), timeout_waits(results, 'virtio_user')))
    lines.append('- machine busy (median of the busier CPU, /proc/stat): %s %% during idle '
                 'windows, %s %% during sparse runs.'
                 % (fmt(med([agg[fe]['busy_idle'] for fe in FRONTENDS]), 0),
                    fmt(med([agg[fe]['busy_sparse'] for fe in FRONTENDS]), 0)))
    lines.append('- checks passed: vnapi %d of %d, virtio_user %d of %d runs (virtio_user is held '
                 'only to counts and no crash).'
                 % (agg['vnapi']['passed'], agg['vnapi']['idle_runs'] + agg['vnapi']['sparse_runs'],
                    agg['virtio_user']['passed'],
                    agg['virtio_user']['idle_runs'] + agg['virtio_user']['sparse_runs']))
    return '\n'.join(lines) + '\n'



def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('-C', '--build', default=os.environ.get('VNAPI_BUILD',
                                                            os.path.join(TOP, 'build')))
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--no-write', action='store_true', help='print the section only')
    ap.add_argument('--json', help='also keep every run\'s measurements in this file')
    a = ap.parse_args()

    cmd = ' '.join(shlex.quote(x) for x in ['devtools/l3fwd_report.py'] + sys.argv[1:])
    meta = perfdoc.measurement(SECTION_ID, cmd, build=os.path.abspath(a.build))
    build_env(os.path.abspath(a.build))
    results = []
    failures = 0
    for run in range(a.runs):
        order = FRONTENDS if run % 2 == 0 else list(reversed(FRONTENDS))
        for fe in order:
            for case in ('idle', 'sparse'):
                res, rc = run_one(case, fe, a.json)
                failures += rc != 0
                if res is not None:
                    results.append(res)
    agg = aggregate(results)
    body = section(agg, results, a.runs)
    perfdoc.report(meta, body, data={'runs': results}, dry=a.no_write, log=log)
    log('%d run(s) failed their checks' % failures)
    return 0


if __name__ == '__main__':
    sys.exit(main())
