#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Latency benchmark: what the gating tests do not judge.

The tests (tests/l3fwd, tests/napi_fwd) assert exact outcomes only: counts, bytes, per-queue
xstats, no lost wakeup. Round-trip latency on this shared 2-vCPU VM measures the machine as
much as the driver, so it is measured here, side by side and alternating, and written into
doc/performance.md (section perf:latency-bench) with the command that made it.

Each round runs, in an order that alternates round by round (reversed every second round):
  * l3fwd-power --interrupt-only, sparse traffic (tests/l3fwd "sparse": 2000 single packets,
    each 0.1-5 ms after the previous came back), on net_vnapi and on net_virtio_user;
  * l3fwd-power idle (10 s without traffic, then one check packet) on both front ends;
  * vnapi-fwd --mode interrupt and --mode hybrid with paired sparse traffic (tests/napi_fwd
    "pairs": 2000 packets, every second one 35-665 us after the previous came back), on
    net_vnapi and net_virtio_user (vnapi-fwd --sleep-timeout-ms 10 there, as in the test).
It reuses the test scripts' run functions (same command lines, same peer), collects the
figures and prints one table: p50/p99/max round trip (as measured: nothing subtracted), net
p99/max (minus what the peer's run-queue and CPU-stall accounting saw), packets per wakeup,
wakeups, CPU % of the receiver, lost packets, and the idle figures.

Packets per wakeup: l3fwd-power: packets back / its "waked up from rx interrupt" lines after the
warm-up (the same count on both front ends); vnapi-fwd: packets back / lib/napi's wakeups
(QUEUE lines, the warm-up packet's wakeup included). CPU %: utime+stime of the receiver process
over the traffic.

Usage: devtools/latency_bench.py [-C BUILD] [--rounds N] [--no-write] [--json FILE]
Run it alone, under the machine's CPU lock:
    flock /run/vnapi-cpu.lock devtools/latency_bench.py
"""

import argparse
import contextlib
import glob
import io
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TOP, 'tests', 'lib'), os.path.join(TOP, 'tests', 'l3fwd'),
                os.path.join(TOP, 'tests', 'napi_fwd')]

from vnapitools import perfdoc  # noqa: E402
import test_l3fwd_power as l3t  # noqa: E402
import test_napi_fwd as nft  # noqa: E402

DOC = os.path.join(TOP, 'doc', 'performance.md')
SECTION_ID = 'latency-bench'
TITLE = 'Latency benchmark: sparse, idle, hybrid vs interrupt (devtools/latency_bench.py)'
FE_LABEL = {'vnapi': 'net_vnapi', 'virtio_user': 'net_virtio_user'}

# (receiver, traffic, front end, mode): one row of the table each.
RUNS = [
    ('l3fwd-power', 'sparse', 'vnapi', None),
    ('l3fwd-power', 'sparse', 'virtio_user', None),
    ('l3fwd-power', 'idle', 'vnapi', None),
    ('l3fwd-power', 'idle', 'virtio_user', None),
    ('vnapi-fwd', 'pairs', 'vnapi', 'interrupt'),
    ('vnapi-fwd', 'pairs', 'vnapi', 'hybrid'),
    ('vnapi-fwd', 'pairs', 'virtio_user', 'interrupt'),
    ('vnapi-fwd', 'pairs', 'virtio_user', 'hybrid'),
]


def log(msg):
    print('[latency_bench %s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def build_env(build):
    plugin = sorted((p for p in glob.glob(os.path.join(build, 'drivers', 'librte_net_vnapi.so*'))
                     if not p.endswith('.p')), key=len)
    targets = ['tests/peers/echo_peer', 'tests/l3fwd/l3fwd-power', 'app/vnapi-fwd/vnapi-fwd']
    subprocess.run(['ninja', '-C', build] + targets, check=True, stdout=subprocess.DEVNULL)
    pmd_dir = subprocess.run(
        ['cc', '-E', '-dM', '-include', 'rte_build_config.h', '-x', 'c', '/dev/null'] +
        subprocess.run(['pkg-config', '--cflags', 'libdpdk'], stdout=subprocess.PIPE,
                       text=True, check=True).stdout.split(),
        stdout=subprocess.PIPE, text=True, check=True).stdout
    pmd_dir = next((ln.split()[2].strip('"') for ln in pmd_dir.splitlines()
                    if ln.startswith('#define RTE_EAL_PMD_PATH ')), '')
    paths = {
        'VNAPI_PLUGIN': plugin[0] if plugin else '',
        'VNAPI_L3FWD_POWER': os.path.join(build, 'tests', 'l3fwd', 'l3fwd-power'),
        'VNAPI_ECHO_PEER': os.path.join(build, 'tests', 'peers', 'echo_peer'),
        'VNAPI_FWD': os.path.join(build, 'app', 'vnapi-fwd', 'vnapi-fwd'),
        'VNAPI_DPDK_PMD_DIR': pmd_dir,
    }
    for k, v in paths.items():
        if not v or not os.path.exists(v):
            sys.exit('%s not found (%r): build %s with integration tests first' % (k, v, build))
    os.environ.update(paths)


def quiet(fn, *args):
    """Run one measurement with its output kept; print the output only if it failed."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            return fn(*args)
    except Exception:
        print(out.getvalue()[-4000:])
        raise


def run_l3fwd(case, fe):
    res = quiet(l3t.run_case, case, fe, None)
    fails = quiet(l3t.evaluate, res)
    p = res.get('peer') or {}
    r = {'ok': not fails, 'lost': p.get('lost'), 'sent': p.get('sent')}
    if case == 'sparse':
        wk = res['rx_wakeups_after_warmup']
        r.update(p50=p.get('p50_us'), p99=p.get('p99_us'), max=p.get('max_us'),
                 net_p99=p.get('net_p99_us'), net_max=p.get('net_max_us'), wakeups=wk,
                 ppw=(p.get('received', 0) / wk) if wk else None,
                 cpu=100.0 * res['l3fwd_cpu_s'] / res['run_window_s'])
    else:
        r.update(idle_cpu=res['idle_cpu_pct'], idle_wakeups=res['idle_rx_wakeups'],
                 check_us=p.get('check_latency_us'))
    return r


def run_fwd(fe, mode):
    fig = {}
    rc = quiet(nft.run, 'pairs', fe, mode, fig)
    wk = fig.get('wakeups')
    return {'ok': rc == 0, 'lost': fig.get('lost'), 'sent': fig.get('sent'),
            'p50': fig.get('p50_us'), 'p99': fig.get('p99_us'), 'max': fig.get('max_us'),
            'net_p99': fig.get('net_p99_us'), 'net_max': fig.get('net_max_us'),
            'wakeups': wk, 'ppw': (fig.get('received', 0) / wk) if wk else None,
            'cpu': fig.get('cpu_pct')}


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(x, d=1):
    return 'n/a' if x is None else ('%.' + str(d) + 'f') % x


def table(results, rounds, rev):
    lines = ['- Rounds: %d, each running every row once, the order reversed every second '
             'round; net_vnapi built from %s. Figures: median over rounds of each round\'s '
             'figure; max: the worst over all rounds; lost and failed: totals.'
             % (rounds, rev or 'an unrecorded tree'), '']
    lines.append('| receiver | front end | traffic | p50 µs | p99 µs | max µs | net p99 / max µs '
                 '| packets/wakeup | wakeups | CPU % | lost | failed runs |')
    lines.append('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for recv, traffic, fe, mode in RUNS:
        if traffic == 'idle':
            continue
        rs = results[(recv, traffic, fe, mode)]
        lines.append('| %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s of %s '
                     '| %d of %d |' % (
            recv + (' --mode %s' % mode if mode else ' --interrupt-only'), FE_LABEL[fe],
            traffic, fmt(med([r.get('p50') for r in rs])), fmt(med([r.get('p99') for r in rs])),
            fmt(max([r['max'] for r in rs if r.get('max') is not None] or [None])),
            fmt(med([r.get('net_p99') for r in rs])),
            fmt(max([r['net_max'] for r in rs if r.get('net_max') is not None] or [None])),
            fmt(med([r.get('ppw') for r in rs]), 2), fmt(med([r.get('wakeups') for r in rs]), 0),
            fmt(med([r.get('cpu') for r in rs]), 1), sum(r.get('lost') or 0 for r in rs),
            sum(r.get('sent') or 0 for r in rs), sum(1 for r in rs if not r['ok']), len(rs)))
    lines.append('')
    lines.append('| receiver | front end | idle CPU % | wakeup lines in 10 s idle | check packet '
                 'after idle µs | failed runs |')
    lines.append('|---|---|---:|---:|---:|---:|')
    for recv, traffic, fe, mode in RUNS:
        if traffic != 'idle':
            continue
        rs = results[(recv, traffic, fe, mode)]
        lines.append('| %s --interrupt-only | %s | %s | %s | %s | %d of %d |' % (
            recv, FE_LABEL[fe], fmt(med([r.get('idle_cpu') for r in rs]), 2),
            fmt(med([r.get('idle_wakeups') for r in rs]), 0),
            fmt(med([r.get('check_us') for r in rs])), sum(1 for r in rs if not r['ok']),
            len(rs)))
    lines.append('')
    lines.append('- sparse: tests/l3fwd `sparse` (2000 single packets, each 0.1-5 ms after the '
                 'previous came back); pairs: tests/napi_fwd `pairs` (2000 packets, each '
                 '0.1-1.9 ms after the previous came back, every second one only 35-665 us); '
                 'round trip peer -> receiver -> peer, CLOCK_MONOTONIC stamps in the payload, '
                 'nothing subtracted (run-queue wait, stalls and host steal stay in). "Net": '
                 'the same round trips minus, for each side, the larger of its run-queue wait '
                 '(schedstat) and its CPU\'s stalls (echo_peer\'s stall probes, '
                 'tests/lib/peer_stall.h), i.e. what this shared machine added; a wakeup the '
                 'driver loses leaves the CPU idle and stays in. The '
                 'receiver runs pinned on CPU 1, echo_peer (net_vhost) on CPU 0; both vCPUs are '
                 'shared with other jobs. vnapi-fwd on net_virtio_user has '
                 '`--sleep-timeout-ms 10` (that PMD arms without a re-check).')
    lines.append('- failed runs: runs whose exact checks (the tests\' own) failed; their figures '
                 'are in the table all the same.')
    return '\n'.join(lines) + '\n'


def source_rev():
    try:
        return subprocess.run(['git', '-C', TOP, 'describe', '--always', '--dirty'],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('-C', '--build', default=os.path.join(TOP, 'build'))
    ap.add_argument('--rounds', type=int, default=4, help='rounds (default 4: about 5 min)')
    ap.add_argument('--no-write', action='store_true', help='print the section only')
    ap.add_argument('--json', help='append every run\'s figures to this file (JSON lines)')
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit('needs root (EAL, /run/vnapi)')
    cmd = 'devtools/latency_bench.py ' + ' '.join(shlex.quote(x) for x in sys.argv[1:])
    build_env(os.path.abspath(a.build))
    rev = source_rev()
    results = {row: [] for row in RUNS}
    for rnd in range(a.rounds):
        for row in (RUNS if rnd % 2 == 0 else list(reversed(RUNS))):
            recv, traffic, fe, mode = row
            try:
                r = run_l3fwd(traffic, fe) if recv == 'l3fwd-power' else run_fwd(fe, mode)
            except Exception as e:  # a harness error: the run counts as failed, no figures
                r = {'ok': False, 'error': str(e)}
            results[row].append(r)
            log('round %d %s %s %s %s: %s' % (rnd + 1, recv, traffic, fe, mode or '',
                                              json.dumps(r, sort_keys=True)))
            if a.json:
                with open(a.json, 'a') as f:
                    f.write(json.dumps({'round': rnd + 1, 'row': row, 'figures': r}) + '\n')
    body = table(results, a.rounds, rev)
    when = perfdoc.now()
    print(perfdoc.render(SECTION_ID, TITLE, body, cmd.strip(), when))
    if not a.no_write:
        perfdoc.write_section(DOC, SECTION_ID, TITLE, body, cmd.strip(), when, after='l3fwd')
        log('wrote the section to %s' % DOC)
    return 0


if __name__ == '__main__':
    sys.exit(main())
