#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Throughput benchmark: net_vnapi vs net_virtio_user against DPDK's net_vhost (testpmd both
sides). Not a test: it prints a markdown table and publishes it as section bench of
doc/performance.md (vnapitools.perfdoc: doc/results/bench.json, with the tree, the date, the
machine and the command; a smoke run sets VNAPI_PERFDOC_DIR=<scratch dir> or passes --no-doc).

Cells: packet size {64, 1518} x direction {front-end txonly -> backend rxonly,
backend txonly -> front-end rxonly}. In every cell the drivers ALTERNATE run by run (A B B A A B
...): the two vCPUs of these machines switch between fast and slow host states every few
seconds, so back-to-back blocks of one driver would measure the host, not the driver.

Each run: backend and front end testpmd with --stats-period=1, pinned (backend 0@0,1@1, front end
0@1,1@0), same memory mode; the receiver's per-second Rx-pps is sampled, the first --warmup
seconds after the link came up are discarded. Per run: median and best 1-s sample. Per driver:
median of the per-run medians, best sample overall; ratio vnapi / virtio_user.

Usage: devtools/bench.py [--build DIR] [--runs N] [--seconds S] [--queue-size N] [--quick]
                         [--sizes 64,1518] [--doc PATH | --no-doc]

--matrix: the benchmark matrix (section bench-matrix of doc/performance.md): {split, packed} x
{64, 1518 B} x {front-end txonly -> backend rxonly, backend txonly -> front-end rxonly, backend
flowgen <-> front-end io}, 1 queue pair, mergeable on, 5 runs per driver; secondary cells (3
runs): mergeable off, 512 B, 2 queue pairs. net_vnapi against
net_virtio_user with its best devargs for the cell; medians, best samples, ratio, bottleneck
side (sender TX-dropped vs receiver RX-dropped), cycles/packet of the front end's forwarding
core. A failing driver (probe error, no link, no traffic, hang) is recorded in its cell and the
matrix carries on; every process has a deadline and is ended by PID.

Usage: devtools/bench.py --matrix [--build DIR] [--quick] [--cells PATTERNS] [--list]
                         [--runs 5] [--secondary-runs 3] [--seconds 6] [--warmup 1]
                         [--vu-explore] [--json FILE] [--doc PATH | --no-doc]
  devtools/bench.py --matrix --list                       cells, devargs, time estimate
  devtools/bench.py --matrix --quick --cells split-64-io  development smoke run
  devtools/bench.py --matrix                              the full matrix (~24 min, run alone)

--prev-plugin PATH / --against REV (with --matrix): a third contender in every cell, vnapi_prev =
net_vnapi loaded from an earlier build (PATH, or the plugin devtools/build-rev.sh REV builds into
/var/tmp/vnapi-rev/<hash>), same devargs as vnapi; the tables add vnapi/vnapi_prev ratios.

--paired: paired throughput ratios, the verdict of a datapath change: in each of the six 64 B
core cells (split/packed x fe_tx, be_tx, io) at least 20 pairs of runs, net_vnapi and
net_virtio_user (its best devargs) back to back, each first in half of the pairs in a
seeded random order (--seed N repeats one); per pair
the ratio of the two run medians, per cell the median ratio with a 95 % bootstrap interval and
a verdict from the interval: "ahead" (it lies above 1.03), "behind" (below 0.97), "draw"
(within 0.97-1.03: what two runs of the same plugin can differ by here) or "undecided".
--aa: the same plugin on both sides (A/A), whose intervals must contain 1 (and come out
"draw" where they are no wider than the margin): it shows what the interval is worth here.
--against REV / --prev-plugin PATH: vnapi against net_vnapi of an earlier build instead of
net_virtio_user.

  devtools/bench.py --paired --list                       cells, contenders, time estimate
  devtools/bench.py --paired                              ~36 min, run alone
  devtools/bench.py --paired --aa                         the A/A run, ~36 min, run alone
  devtools/bench.py --paired --pairs 2 --seconds 4 --cells split-64-io --no-doc   smoke
  devtools/bench.py --paired --from-json FILE             publish a run stored with --json FILE
"""

import argparse
import fnmatch
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

from vnapitools import harness as h  # noqa: E402
from vnapitools import perfdoc  # noqa: E402
from vnapitools import runs  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VIRTIO_USER_DEFAULT_QSIZE = 256   # DPDK 22.11 net_virtio_user default queue_size

SAMPLER_NOTE = {
    'show': "1-s samples: the receiver runs interactive and is asked `show port stats 0` every "
            "second; the sender runs with `--stats-period=1`",
    'stats-period': "both sides `--stats-period=1`; on this VM testpmd prints every ~2 s",
}

DIRECTIONS = [
    # key, label, backend mode, front-end mode, receiver
    ('fe_tx', 'front end txonly -> backend rxonly', 'rxonly', 'txonly', 'backend'),
    ('be_tx', 'backend txonly -> front end rxonly', 'txonly', 'rxonly', 'frontend'),
]


def start_frontend_as(fe_name, sock, **kw):
    """h.start_frontend(), where 'vnapi_prev' is net_vnapi loaded from the --prev-plugin
    build (the same devargs as 'vnapi')."""
    if fe_name != 'vnapi_prev':
        return h.start_frontend(fe_name, sock, **kw)
    cur = os.environ['VNAPI_PLUGIN']
    os.environ['VNAPI_PLUGIN'] = os.environ['VNAPI_PREV_PLUGIN']
    try:
        return h.start_frontend('vnapi', sock, **kw)
    finally:
        os.environ['VNAPI_PLUGIN'] = cur


def one_run(fe_name, size, direction, seconds, warmup, mem, queue_size, workdir, sampler):
    """One measurement; returns dict(samples=[pps...], median, best, tx_median, qsize).

    sampler 'show': the receiver runs interactive (--auto-start) and is asked
    'show port stats 0' every second by this script; its Rx-pps is "since last show", computed
    by testpmd from TSC cycles, so each sample covers one real second.
    sampler 'stats-period': both sides non-interactive with --stats-period=1 and the receiver's
    printed Rx-pps is used. On this VM testpmd's --stats-period=1 loop prints every ~2 s
    (it sleeps 1 s, then compares elapsed TSC cycles with rte_get_timer_hz()), hence not the
    default."""
    key, label, be_mode, fe_mode, receiver = direction
    sender_extra = ['--txpkts=%d' % size]
    deadline = seconds + warmup + 90
    extra = ['queue_size=%d' % queue_size] if queue_size else []
    fe_eal = ['--log-level=pmd.net.vnapi.init:info'] if fe_name.startswith('vnapi') else []
    show = sampler == 'show'
    be_inter = show and receiver == 'backend'
    fe_inter = show and receiver == 'frontend'

    def app(mode, inter):
        a = list(sender_extra) if mode == 'txonly' else []
        return a + (['--auto-start'] if inter else [])

    with h.Session('bench') as s:
        backend, sock = h.start_backend(
            workdir, mem=mem, interactive=be_inter, fwd=be_mode,
            stats_period=None if be_inter else 1, deadline=deadline,
            app_extra=app(be_mode, be_inter))
        s.add(backend)
        mark = backend.mark()
        fe = start_frontend_as(
            fe_name, sock, mem=mem, interactive=fe_inter, fwd=fe_mode,
            stats_period=None if fe_inter else 1, deadline=deadline, extra_devargs=extra,
            eal_extra=fe_eal, app_extra=app(fe_mode, fe_inter))
        s.add(fe)
        h.wait_backend_ready(backend, since=mark, timeout=30.0)
        rx_proc, tx_proc = (backend, fe) if receiver == 'backend' else (fe, backend)
        t_ready = time.monotonic()
        rx = []
        if show:
            rx_proc.port_stats()              # sets testpmd's "last show" reference
            t_next = t_ready
            while True:
                t_next += 1.0
                left = t_next - time.monotonic()
                if left > 0:
                    time.sleep(left)          # the sampling clock
                st = rx_proc.port_stats()
                if time.monotonic() - t_ready > warmup + 0.5:
                    rx.append(st['Rx-pps'])
                if t_next - t_ready >= seconds - 0.01:
                    break
        else:
            time.sleep(seconds)               # measurement window
        t_end = time.monotonic()
        # quit (the interactive receiver: 22.11's interactive testpmd ignores SIGINT), else
        # SIGINT; the session judges both ends
        fe.stop()
        backend.stop()

        def pps(proc, field):
            return [v[field] for (t, port, v) in h.parse_stats_blocks(proc.lines)
                    if port == 0 and field in v and t_ready + warmup <= t <= t_end + 0.5]

        if not show:
            rx = pps(rx_proc, 'Rx-pps')
        tx = pps(tx_proc, 'Tx-pps')
        qsize = queue_size
        if not qsize:
            if fe_name == 'virtio_user':
                qsize = VIRTIO_USER_DEFAULT_QSIZE
            else:
                m = re.search(r'ring size (\d+)', fe.err)
                qsize = int(m.group(1)) if m else None
        if not rx:
            raise h.HarnessError('no Rx-pps samples after warm-up (%s, %d B, %s)\n%s\n%s'
                                 % (fe_name, size, key, backend.tail(15), fe.tail(15)))
        return dict(samples=rx, median=statistics.median(rx), best=max(rx),
                    tx_median=statistics.median(tx) if tx else 0, qsize=qsize)


def fmt_mpps(v):
    return '%.2f' % (v / 1e6)


# ============================================================================================
# --matrix: the benchmark matrix. Cells {split, packed} x {64, 1518 B} x {front-end txonly ->
# backend rxonly, backend txonly -> front-end rxonly, backend flowgen <-> front-end io}, one
# queue pair, mergeable on (core, 5 runs per driver); secondary cells (3 runs): mergeable off,
# 512 B, 2 queue pairs. net_vnapi against net_virtio_user with its best devargs for the cell.
# ============================================================================================

M_QUEUE_SIZE = 256          # both drivers, every cell (virtio_user's and vnapi's default)
M_OVERHEAD_S = 2.0          # per run: two testpmd start-ups, link, stats, quit (measured ~1.4 s)
SIMD512 = ['--force-max-simd-bitwidth=512']

M_DIRS = {
    # key: (label, backend fwd mode, front-end fwd mode, measured process, measured field)
    'fe_tx': ('front end txonly -> backend rxonly', 'rxonly', 'txonly', 'backend', 'Rx-pps'),
    'be_tx': ('backend txonly -> front end rxonly', 'txonly', 'rxonly', 'frontend', 'Rx-pps'),
    'io': ('backend flowgen <-> front end io', 'flowgen', 'io', 'frontend', 'Tx-pps'),
}
M_DIR_SHORT = {'fe_tx': 'fe txonly -> be rxonly', 'be_tx': 'be txonly -> fe rxonly',
               'io': 'be flowgen <-> fe io'}


class Cell:
    def __init__(self, ring, size, dkey, mrg=1, queues=1, tier='core'):
        self.ring, self.size, self.dkey = ring, size, dkey
        self.mrg, self.queues, self.tier = mrg, queues, tier

    @property
    def id(self):
        return '%s-%d-%s%s%s' % (self.ring, self.size, self.dkey,
                                 '' if self.mrg else '-mrg0',
                                 '' if self.queues == 1 else '-q%d' % self.queues)


def matrix_cells():
    cells = []
    for ring in ('split', 'packed'):
        for size in (64, 1518):
            for d in ('fe_tx', 'be_tx', 'io'):
                cells.append(Cell(ring, size, d))
    for ring in ('split', 'packed'):
        # mergeable off changes the receive side only (a 12-byte header either way with
        # VERSION_1): no fe_tx cell. It is what enables virtio_user's vectorized rx paths.
        for d in ('be_tx', 'io'):
            cells.append(Cell(ring, 64, d, mrg=0, tier='secondary'))
        for d in ('fe_tx', 'be_tx'):
            cells.append(Cell(ring, 512, d, tier='secondary'))
        cells.append(Cell(ring, 64, 'io', queues=2, tier='secondary'))
    return cells


def select_cells(cells, patterns):
    if not patterns:
        return cells
    pats = [p.strip() for p in patterns.split(',') if p.strip()]
    out = []
    for c in cells:
        for p in pats:
            if p == c.tier or fnmatch.fnmatchcase(c.id, p):
                out.append(c)
                break
    return out


def common_devargs(cell):
    return ['queue_size=%d' % M_QUEUE_SIZE, 'mrg_rxbuf=%d' % cell.mrg,
            'packed_vq=%d' % (cell.ring == 'packed')]


# net_virtio_user (DPDK 22.11) candidates; defaults there: in_order=1, vectorized=0.
# Split: in_order=1 selects the in-order rx/tx paths and disables vectorized rx; vectorized rx
# (SSE, split) needs in_order=0 and mrg_rxbuf=0. Packed: vectorized (AVX-512) needs in_order=1,
# AVX-512F and EAL --force-max-simd-bitwidth=512; its rx half needs mrg_rxbuf=0.
def vu_candidates(cell):
    if cell.ring == 'split':
        c = [('in_order=1', []), ('in_order=0', []), ('in_order=0,vectorized=1', SIMD512)]
    else:
        c = [('in_order=1', []), ('in_order=0', []), ('in_order=1,vectorized=1', SIMD512)]
    return [(d.split(','), e) for d, e in c]


# The choice per cell, from --vu-explore quick runs on this machine (see VU_CHOICE_NOTE).
def vu_best(cell):
    if cell.ring == 'split':
        return ['in_order=1'], []
    return ['in_order=1', 'vectorized=1'], SIMD512


VU_CHOICE_NOTE = """
Chosen by `devtools/bench.py --matrix --vu-explore` (2-3 alternating 4-s runs per candidate,
64 B cells, other jobs on the same 2 vCPUs: many runs got 30-70 % of a core, so the choice
rests on the runs whose forwarding core got ~100 % and on which rx/tx functions
net_virtio_user reports, `--log-level=pmd.net.virtio.init:info`):

- **split, every cell: `in_order=1`** (22.11's default; "inorder Rx; inorder Tx").
  `in_order=0` ("mergeable buffer Rx; standard Tx") was slower or equal in every cell:
  fe txonly best 19.7 vs 16.8 Mpps, be txonly run medians 22.4 vs 10.4 (second round), io 7.9
  vs 7.1. `vectorized=1` changes nothing with mrg_rxbuf on (split has no vector tx; vector rx
  needs `in_order=0` and `mrg_rxbuf=0`: the driver reports the same paths as `in_order=0`).
  With `mrg_rxbuf=0`, `in_order=0,vectorized=1` ("vectorized Rx; standard Tx") tied with
  `in_order=1`: be txonly 22.0-22.3 vs 22.3-22.5 Mpps, where the 1-2 % backend drops show the
  backend's txonly was the limit; io 11.5-12.0 vs 12.6 at full core. In-order keeps one
  setting for all split cells and has the faster tx for io.
- **packed, every cell: `in_order=1,vectorized=1` + EAL `--force-max-simd-bitwidth=512`**
  (this CPU has AVX-512F/BW/VL...). With `mrg_rxbuf=1` it selects the AVX-512 "packed ring
  vectorized Tx" (rx stays "packed ring mergeable buffer Rx", the vector rx needs mrg off);
  with `mrg_rxbuf=0` vectorized rx as well. Full-core runs: be txonly 29.8 vs 30.6 Mpps
  (`in_order=1` alone; the rx path is the same, so equal), io 17.1 vs 17.0, fe txonly best
  14.3 vs at most 7.0 for `in_order=1` alone (noisy); mrg off be txonly median 31.0 and best
  34.1 vs 24.8/31.4 (`in_order=1`) and 28.2/30.9 (`in_order=0`). `in_order=0` was never
  ahead (io 6.6 vs 11.4-11.8). The 22.11 driver takes the packed vector paths only when the
  max SIMD bitwidth is 512, and EAL's default is lower, hence the EAL option (from the
  source; not measured without it).
- 512 B and 1518 B cells use the same setting as 64 B: the paths do not depend on the size
  (1518 B fits one 2 KB mbuf). Everything else is the same for both drivers: `queue_size=256`,
  the cell's `mrg_rxbuf`, `packed_vq`, queue count. To re-check on a quiet machine:
  `devtools/bench.py --matrix --vu-explore --runs 3 --cells 'split-64-*,packed-64-*'`.
"""


def contenders_for(cell, explore=False, vu_try=None, prev=False):
    """The contenders of a cell: vnapi and virtio_user with its chosen devargs (+ vnapi_prev,
    net_vnapi of the --prev-plugin build with vnapi's devargs, when prev), or with explore the
    net_virtio_user candidates only."""
    if explore:
        cands = vu_candidates(cell)
        if vu_try:
            cands = [(d.split(','), SIMD512 if 'vectorized=1' in d else [])
                     for d in vu_try.split(';') if d]
        return [dict(label='virtio_user[%s]' % ','.join(d), fe='virtio_user',
                     devargs=common_devargs(cell) + d, eal=list(e))
                for d, e in cands]
    d, e = vu_best(cell)
    vnapi = dict(label='vnapi', fe='vnapi', devargs=common_devargs(cell) + ['in_order=1'], eal=[])
    cons = [vnapi, dict(label='virtio_user', fe='virtio_user', devargs=common_devargs(cell) + d,
                        eal=list(e))]
    if prev:
        cons.append(dict(vnapi, label='vnapi_prev', fe='vnapi_prev', devargs=list(vnapi['devargs'])))
    return cons


def run_order(cons, run):
    """The contenders' order in run `run`: rotated left by run // 2, reversed in odd runs. Two
    contenders: A B, B A, A B, ...; three: A B C, C B A, B C A, A C B, C A B, B A C, then again
    (over 6 runs each contender gets each slot twice)."""
    k = (run // 2) % len(cons) if len(cons) > 2 else 0
    order = list(cons[k:]) + list(cons[:k])
    return order if run % 2 == 0 else order[::-1]


def order_note(ncon):
    """The Method line's words for run_order()."""
    if ncon <= 2:
        return 'Drivers alternate run by run (A B B A A B ...)'
    return ('The %d contenders rotate run by run (run k: the list rotated left by k // 2, '
            'reversed in odd runs; 3 contenders: A B C, C B A, B C A, A C B, C A B, B A C, then '
            'again: over 6 runs each gets each slot twice)' % ncon)


def worker_cpu_ticks(pid):
    """utime+stime (clock ticks) of the process's forwarding lcore threads (rte-worker-N)."""
    total, found = 0, False
    for tid, comm in h.proc_threads(pid):
        if not (comm.startswith('rte-worker') or comm.startswith('lcore-worker')):
            continue
        try:
            total += h.thread_cpu_ticks(pid, tid)
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return total if found else None


def _template_argv(argv, sock):
    out = []
    for a in argv:
        a = a.replace(sock, '<sock>') if sock else a
        a = re.sub(r'^vn[bf]\d+_\d+$', '<prefix>', a)
        a = re.sub(r'^/run/vnapi/plugins/[0-9a-f]+/', '<plugin dir>/', a)
        out.append(a)
    return ' '.join(shlex.quote(x) for x in out)


def stats(p):
    return h.parse_port_stats(p.cmd('show port stats 0', timeout=5.0)).get(0, {})


def matrix_run(con, cell, seconds, warmup, mem):
    """One run of one contender in one cell. Never raises for a driver failure: returns
    dict(error=...) instead. Every process has a deadline and is ended by its PID."""
    label, be_mode, fe_mode, measured, field = M_DIRS[cell.dkey]
    ticks = int(round(seconds))
    wticks = int(math.ceil(warmup))
    deadline = seconds + 75
    size_arg = ['--txpkts=%d' % cell.size]
    log_eal = (['--log-level=pmd.net.vnapi.init:info'] if con['fe'].startswith('vnapi')
               else ['--log-level=pmd.net.virtio.init:info'])
    res = dict(cell=cell.id, contender=con['label'], error=None, t_start=time.time())
    t_begin = time.monotonic()
    backend = fe = sock = None
    try:
        with h.Session('mx') as s:
            backend, sock = h.start_backend(
                s.workdir, queues=cell.queues, mem=mem, interactive=True, fwd=be_mode,
                deadline=deadline, startup_timeout=30.0,
                app_extra=size_arg if be_mode != 'rxonly' else [])
            s.add(backend)
            mark = backend.mark()
            fe = start_frontend_as(
                con['fe'], sock, queues=cell.queues, mem=mem, interactive=True, fwd=fe_mode,
                deadline=deadline, extra_devargs=con['devargs'], eal_extra=con['eal'] + log_eal,
                app_extra=size_arg if fe_mode == 'txonly' else [], startup_timeout=30.0)
            s.add(fe)
            res['fe_argv'] = _template_argv(fe.argv, sock)
            res['be_argv'] = _template_argv(backend.argv, sock)
            for p in (backend, fe):
                p.grace = 3.0                  # quit -> SIGINT -> SIGKILL, 3 s apart
            h.wait_backend_ready(backend, timeout=12.0, since=mark)
            # receiver first, then the sender (loopback: io first, then the generator)
            order = (backend, fe) if be_mode == 'rxonly' else (fe, backend)
            for p in order:
                p.start_fwd()
            t0 = time.monotonic()
            for p in (fe, backend):
                stats(p)                       # reference for testpmd's "since last show"
            smp = {'frontend': {'Rx-pps': [], 'Tx-pps': []},
                   'backend': {'Rx-pps': [], 'Tx-pps': []}}
            cpu0 = cpu1 = None
            tw0 = None
            for k in range(1, ticks + 1):
                left = t0 + k - time.monotonic()
                if left > 0:
                    time.sleep(left)
                st = {'frontend': stats(fe), 'backend': stats(backend)}
                if k == wticks:
                    for p in (fe, backend):
                        p.cmd('clear fwd stats all', timeout=5.0)
                    cpu0 = (worker_cpu_ticks(fe.pid), worker_cpu_ticks(backend.pid))
                    tw0 = time.monotonic()
                elif k > wticks:
                    for who in smp:
                        for f in ('Rx-pps', 'Tx-pps'):
                            smp[who][f].append(st[who].get(f, 0))
            cpu1 = (worker_cpu_ticks(fe.pid), worker_cpu_ticks(backend.pid))
            tw1 = time.monotonic()
            fwd = {'frontend': h.parse_fwd_stats(fe.cmd('show fwd stats all', timeout=5.0))
                   .get(0, {}),
                   'backend': h.parse_fwd_stats(backend.cmd('show fwd stats all', timeout=5.0))
                   .get(0, {})}
            if con['fe'] == 'virtio_user':
                res['paths'] = sorted({m.group(1) for ln, m in
                                       fe.find_all(r'virtio: using (.*?) path')})
            else:
                # What the device serves: the line at start (the probe's
                # still has the offloads the application left off).
                m = fe.find_all(r'started with features 0x[0-9a-f]+ \(([^)]*)\)')
                res['features'] = m[-1][1].group(1) if m else None
            fe.stop()
            backend.stop()
    except Exception as e:   # a driver that fails must not stop the matrix
        msg = str(e).strip()
        res['error'] = '%s: %s' % (type(e).__name__, msg.split('\n')[0])
        res['error_tail'] = msg
        res['elapsed'] = time.monotonic() - t_begin
        return res
    res['elapsed'] = time.monotonic() - t_begin
    meas = smp[measured][field]
    fe_field = 'Tx-pps' if fe_mode in ('txonly', 'io') else 'Rx-pps'
    fe_pps = smp['frontend'][fe_field]
    window = tw1 - tw0
    clk = os.sysconf('SC_CLK_TCK')
    cpu = {}
    for i, who in enumerate(('frontend', 'backend')):
        if cpu0 and cpu0[i] is not None and cpu1[i] is not None and window > 0:
            cpu[who] = (cpu1[i] - cpu0[i]) / clk / window
    res.update(samples=meas, median=statistics.median(meas) if meas else 0,
               best=max(meas) if meas else 0,
               fe_pps_median=statistics.median(fe_pps) if fe_pps else 0,
               sender_samples=smp, fwd=fwd, cpu=cpu, window=window)
    if not meas or res['median'] <= 0:
        res['error'] = 'no traffic: median %s pps over %d samples' % (res['median'], len(meas))
    elif cell.ring == 'packed' and res.get('features') is not None and \
            'RING_PACKED' not in res['features'].split():
        res['error'] = 'vnapi did not negotiate RING_PACKED (features: %s)' % res['features']
    elif cell.ring == 'packed' and res.get('paths') and \
            not all(p.startswith('packed ring') for p in res['paths']):
        res['error'] = 'virtio_user is not on packed ring paths: %s' % '; '.join(res['paths'])
    return res


def drop_frac(fs):
    tx, d = fs.get('TX-packets', 0), fs.get('TX-dropped', 0)
    return d / (tx + d) if tx + d else 0.0


def bottleneck(cell, runs):
    """From the sender's TX-dropped (its ring was full: the receiver did not keep up) and
    the receiver's RX-dropped (imissed). Median over the runs."""
    ok = [r for r in runs if not r['error']]
    if not ok:
        return '-'
    fe_d = statistics.median(drop_frac(r['fwd']['frontend']) for r in ok)
    be_d = statistics.median(drop_frac(r['fwd']['backend']) for r in ok)
    miss = sum(r['fwd']['frontend'].get('RX-dropped', 0) + r['fwd']['backend'].get('RX-dropped', 0)
               for r in ok)
    extra = '; rx missed %d' % miss if miss else ''
    thr = 0.01
    if cell.dkey == 'fe_tx':
        s = ('backend rx (fe tx drop %.0f%%)' % (100 * fe_d) if fe_d > thr
             else 'fe tx, sender (drop %.1f%%)' % (100 * fe_d))
    elif cell.dkey == 'be_tx':
        s = ('fe rx (be tx drop %.0f%%)' % (100 * be_d) if be_d > thr
             else 'be tx, sender (drop %.1f%%)' % (100 * be_d))
    else:
        if be_d > thr and be_d >= fe_d:
            s = 'fe rx/fwd (flowgen drop %.0f%%, fe io drop %.0f%%)' % (100 * be_d, 100 * fe_d)
        elif fe_d > thr:
            s = 'backend rx (fe io drop %.0f%%, flowgen drop %.0f%%)' % (100 * fe_d, 100 * be_d)
        else:
            s = 'flowgen, generator (drops %.1f%% / %.1f%%)' % (100 * be_d, 100 * fe_d)
    return s + extra


def tsc_hz():
    """TSC frequency: /proc/cpuinfo 'cpu MHz' when the kernel reports tsc_known_freq
    (DPDK's rte_get_tsc_hz() agrees on these machines), else None."""
    try:
        with open('/proc/cpuinfo') as f:
            txt = f.read()
    except OSError:
        return None
    m = re.search(r'^cpu MHz\s*:\s*([\d.]+)', txt, re.M)
    if m and 'tsc_known_freq' in txt and 'constant_tsc' in txt:
        return float(m.group(1)) * 1e6
    return None


def cpu_flags():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('flags'):
                    return set(line.split(':', 1)[1].split())
    except OSError:
        pass
    return set()


# ---- --prev-plugin, --against ----

BUILD_REV_TIMEOUT = 900.0                # devtools/build-rev.sh REV, seconds
PLUGIN_HELP = 'plugin to load (default: $VNAPI_PLUGIN, else the one --build builds first)'


def git(*args):
    """git -C TOP ARGS: stripped stdout, or None when git fails."""
    try:
        p = subprocess.run(['git', '-C', TOP] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def commit_of(rev):
    """(full hash, subject) of rev, or None when it names no commit."""
    full = git('rev-parse', '--verify', '--quiet', rev + '^{commit}')
    if not full:
        return None
    return full, git('log', '-1', '--format=%s', full) or ''


def tree_state():
    """(HEAD's hash, whether drivers/ or lib/ have uncommitted changes)."""
    return git('rev-parse', 'HEAD') or 'unknown', bool(git('status', '--porcelain', '--',
                                                          'drivers', 'lib'))


def build_rev(rev):
    """devtools/build-rev.sh REV -> the plugin path; raises RuntimeError with its stderr."""
    cmd = [os.path.join(TOP, 'devtools', 'build-rev.sh'), rev]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=BUILD_REV_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors='replace') if isinstance(e.stderr, bytes) else e.stderr
        raise RuntimeError('devtools/build-rev.sh %s: no result after %.0f s\n%s'
                           % (rev, BUILD_REV_TIMEOUT, (err or '')[-3000:]))
    out = p.stdout.strip().splitlines()
    if p.returncode != 0 or not out or not os.path.exists(out[-1]):
        raise RuntimeError('devtools/build-rev.sh %s failed (exit %d)\n%s'
                           % (rev, p.returncode, p.stderr[-3000:]))
    return out[-1]


def set_prev_plugin(ap, path):
    """vnapi_prev's plugin: start_frontend_as() loads it from VNAPI_PREV_PLUGIN."""
    if not os.path.exists(path):
        ap.error('--prev-plugin %s not found' % path)
    os.environ['VNAPI_PREV_PLUGIN'] = os.path.abspath(path)


def matrix_main():
    ap = argparse.ArgumentParser(
        prog='bench.py --matrix',
        description='Benchmark matrix: net_vnapi vs net_virtio_user (best devargs per cell) '
        'against net_vhost, testpmd on both sides; publishes section bench-matrix of '
        'doc/performance.md.')
    ap.add_argument('--matrix', action='store_true')
    ap.add_argument('--prev-plugin', metavar='PATH',
                    help='a third contender, vnapi_prev: net_vnapi from this plugin (an earlier '
                    'build), same devargs as vnapi')
    ap.add_argument('--against', metavar='REV',
                    help='vnapi_prev = net_vnapi of commit REV, built by devtools/build-rev.sh '
                    'REV (into /var/tmp/vnapi-rev/<hash>, reused)')
    ap.add_argument('--build', default=os.path.join(TOP, 'build'))
    ap.add_argument('--plugin', help=PLUGIN_HELP)
    ap.add_argument('--runs', type=int, default=5, help='runs per driver in core cells (5)')
    ap.add_argument('--secondary-runs', type=int, default=3,
                    help='runs per driver in secondary cells (3)')
    ap.add_argument('--seconds', type=float, default=6.0,
                    help='seconds of traffic per run, warm-up included (6)')
    ap.add_argument('--warmup', type=float, default=1.0,
                    help='seconds discarded after forwarding started (1)')
    ap.add_argument('--quick', action='store_true',
                    help='development: 1 run per driver, 4 s (not a benchmark result)')
    ap.add_argument('--cells', help='comma-separated cell ids or fnmatch patterns, or "core" / '
                    '"secondary" (e.g. "split-64-io,packed-1518-*,*-mrg0"); --list shows them')
    ap.add_argument('--list', action='store_true', help='print the cells and the time '
                    'estimate, run nothing')
    ap.add_argument('--vu-explore', action='store_true',
                    help='run the net_virtio_user devargs candidates of each selected cell '
                    'against each other (no vnapi, no doc update)')
    ap.add_argument('--vu-try', metavar='SETS',
                    help='with --vu-explore: these devarg sets instead of the built-in '
                    'candidates, ";"-separated, e.g. "in_order=1;in_order=0" (vectorized=1 adds '
                    '--force-max-simd-bitwidth=512)')
    add_output_args(ap, 'append every run as a JSON line to this file')
    args = ap.parse_args()
    cmdline = ' '.join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], TOP)] + sys.argv[1:])
    meta = perfdoc.measurement('bench-matrix', cmdline,
                               build=os.path.abspath(args.build))
    if args.quick:
        args.runs, args.secondary_runs, args.seconds = 1, 1, 4.0
    if args.seconds < math.ceil(args.warmup) + 2:
        ap.error('--seconds must leave at least 2 samples after --warmup')
    if args.prev_plugin and args.against:
        ap.error('--prev-plugin and --against both name the earlier build: give one')
    if args.vu_explore and (args.prev_plugin or args.against):
        ap.error('--vu-explore runs net_virtio_user candidates only: not with --prev-plugin '
                 'or --against')
    against = against_why = None      # (hash, subject) of vnapi_prev's commit, how it was chosen
    if args.against:
        against_why = '--against %s' % args.against
    if args.against:
        against = commit_of(args.against)
        if not against:
            ap.error('--against %s: not a commit of this repository' % args.against)
    elif args.prev_plugin:
        # a devtools/build-rev.sh plugin names its commit: /var/tmp/vnapi-rev/<hash>/build/...
        m = re.search(r'/vnapi-rev/([0-9a-f]{40})/', os.path.abspath(args.prev_plugin))
        against = commit_of(m.group(1)) if m else None
        against_why = '--prev-plugin %s' % args.prev_plugin
    prev = bool(args.prev_plugin or args.against)

    cells = select_cells(matrix_cells(), args.cells)
    if not cells:
        ap.error('--cells %r selects no cell; cells: %s'
                 % (args.cells, ' '.join(c.id for c in matrix_cells())))
    plan = []
    for c in cells:
        cons = contenders_for(c, args.vu_explore, args.vu_try, prev)
        n = args.runs if c.tier == 'core' else args.secondary_runs
        plan.append((c, cons, n))
    total_runs = sum(len(cons) * n for c, cons, n in plan)
    est = total_runs * (args.seconds + M_OVERHEAD_S)
    ncon = max(len(cons) for c, cons, n in plan)
    print('bench %s: %s; %d cells (%d core x %d runs, %d secondary x %d runs per contender, '
          '%d contenders), %d runs of %.0f s (+~%.0f s start/stop each): estimated %.1f min'
          % ('--matrix',
             'QUICK MODE' if args.quick else ('vu-explore' if args.vu_explore else 'full'),
             len(cells), sum(c.tier == 'core' for c in cells), args.runs,
             sum(c.tier != 'core' for c in cells), args.secondary_runs, ncon, total_runs,
             args.seconds, M_OVERHEAD_S, est / 60), flush=True)
    print('(a failing driver costs up to ~25 s per failed run; after 2 failures in a cell its '
          'remaining runs there are skipped)', flush=True)
    if args.against:
        cached = os.path.exists('/var/tmp/vnapi-rev/%s/build/drivers/librte_net_vnapi.so'
                                % against[0])
        print('vnapi_prev: net_vnapi of %s "%s" (%s); %s' % (
            against[0], against[1][:60], against_why,
            'already built' if cached else 'built first by devtools/build-rev.sh (a few min, '
            'not in the estimate)'), flush=True)
    elif args.prev_plugin:
        print('vnapi_prev: net_vnapi from %s%s' % (
            args.prev_plugin, ' (commit %s "%s")' % (against[0], against[1][:60])
            if against else ''), flush=True)
    if args.list:
        for c, cons, n in plan:
            print('  %-24s %-9s %d runs x %s' % (c.id, c.tier, n,
                                                  ', '.join('%s [%s%s]'
                                                            % (x['label'], ','.join(x['devargs']),
                                                               ' ' + ' '.join(x['eal'])
                                                               if x['eal'] else '')
                                                            for x in cons)))
        return 0

    if any(x['fe'] == 'vnapi' for c, cons, n in plan for x in cons):
        runs.plugin(args.build, args.plugin)
    if args.against:
        print('building %s: devtools/build-rev.sh %s (at most %.0f s) ...'
              % (against[0][:12], against[0], BUILD_REV_TIMEOUT), flush=True)
        try:
            args.prev_plugin = build_rev(against[0])
        except RuntimeError as e:
            print('bench: %s' % e, file=sys.stderr)
            return 2
        print('vnapi_prev plugin: %s' % args.prev_plugin, flush=True)
    if prev:
        set_prev_plugin(ap, args.prev_plugin)
    h.install_guards()
    mem, mem_note = bench_memory(args.no_huge)
    hz = tsc_hz()
    print('memory: %s; TSC %s; warm-up %.0f s discarded' % (
        mem_note, '%.3f MHz' % (hz / 1e6) if hz else 'unknown', args.warmup), flush=True)

    jf = open(args.json, 'a') if args.json else None
    results = {}    # (cell id, label) -> [runs]
    t_all = time.monotonic()
    done = 0
    try:
        for c, cons, n in plan:
            failures = {}
            for run in range(n):
                # every contender gets each slot about equally often (run_order)
                order = run_order(cons, run)
                for con in order:
                    key = (c.id, con['label'])
                    if failures.get(con['label'], 0) >= 2:
                        results.setdefault(key, []).append(
                            dict(cell=c.id, contender=con['label'], skipped=True,
                                 error='skipped after 2 failures'))
                        done += 1
                        continue
                    r = matrix_run(con, c, args.seconds, args.warmup, mem)
                    done += 1
                    results.setdefault(key, []).append(r)
                    if r['error']:
                        failures[con['label']] = failures.get(con['label'], 0) + 1
                    if jf:
                        jf.write(json.dumps({k: v for k, v in r.items() if k != 'error_tail'})
                                 + '\n')
                        jf.flush()
                    el = time.monotonic() - t_all
                    eta = el / done * (total_runs - done)
                    if r['error']:
                        print('  %-24s run %d  %-40s FAILED: %s  [%d/%d, ETA %.1f min]'
                              % (c.id, run + 1, con['label'], r['error'][:200], done,
                                 total_runs, eta / 60), flush=True)
                    else:
                        print('  %-24s run %d  %-40s median %s  best %s Mpps  fe-core %s%%  '
                              'drops fe %.1f%% be %.1f%%  (%s)  [%d/%d, %.1f s, ETA %.1f min]'
                              % (c.id, run + 1, con['label'], fmt_mpps(r['median']),
                                 fmt_mpps(r['best']),
                                 '%.0f' % (100 * r['cpu']['frontend'])
                                 if 'frontend' in r['cpu'] else '?',
                                 100 * drop_frac(r['fwd']['frontend']),
                                 100 * drop_frac(r['fwd']['backend']),
                                 ' '.join(fmt_mpps(x) for x in r['samples']), done,
                                 total_runs, r['elapsed'], eta / 60), flush=True)
    finally:
        if jf:
            jf.close()
    elapsed = time.monotonic() - t_all
    print('\nelapsed %.1f min (estimate was %.1f min)' % (elapsed / 60, est / 60))

    rows = matrix_tables(plan, results, hz, args.vu_explore)
    print()
    print('\n\n'.join(rows))
    # A slow cell is a result, not an error.
    status = 0
    if args.no_doc or args.vu_explore:
        return status
    flags = cpu_flags()
    avx512 = sorted(f for f in flags if f.startswith('avx512'))
    n_all = len(matrix_cells())
    example = None
    for c, cons, n in plan:
        for con in cons:
            for r in results.get((c.id, con['label']), []):
                if r.get('fe_argv') and example is None:
                    example = r
    intro = None
    if args.quick or len(cells) < n_all:
        intro = ('**%s%s: not the benchmark result.** The full matrix is `devtools/bench.py '
                 '--matrix` (about %.0f min), run alone on the machine.'
                 % ('QUICK MODE (1 run per driver, 4 s)' if args.quick else 'PARTIAL RUN',
                    '' if len(cells) == n_all else ', %d of %d cells' % (len(cells), n_all),
                    n_all_estimate(args, ncon=ncon) / 60))
    machine = ('- CPU: TSC %s; AVX-512: %s'
               % ('%.3f MHz' % (hz / 1e6) if hz else 'unknown',
                  'yes (%s)' % ' '.join(avx512) if avx512 else 'no'))
    sec = []
    if prev:
        sec += ['- Against (vnapi_prev): %s' % ('%s "%s" (%s)' % (against + (against_why,))
                                                if against else 'commit unknown (%s)'
                                                % against_why)]
    sec += [
        '- Elapsed: %.1f min' % (elapsed / 60),
        machine,
        '- Plugin: `%s`' % os.path.relpath(os.environ.get('VNAPI_PLUGIN', '?'), TOP),
    ]
    if prev:
        sec += ['- Plugin of vnapi_prev: `%s`' % os.environ['VNAPI_PREV_PLUGIN']]
    sec += ['- Memory: %s' % mem_note]
    if example:
        sec += ['- Process command lines (first run of cell %s, %s; `<prefix>`, `<sock>` and '
                'the plugin directory vary per run; each cell\'s `--vdev`, EAL extras and '
                'forward modes are in the tables below):' % (example['cell'],
                                                             example['contender']),
                '  - back end: `%s`' % example['be_argv'],
                '  - front end: `%s`' % example['fe_argv']]
    sec += [
        '- Method: the back end is testpmd with `net_vhost` (vhost-user server), pinned '
        '`--lcores 0@0,1@1`; the front end testpmd `--lcores 0@1,1@0`; one forwarding core each '
        '(`--nb-cores=1`, also with 2 queue pairs). Both interactive; forwarding is started on '
        'the receiver first, then on the sender. Every second both are asked '
        '`show port stats 0` (testpmd\'s "since last show" pps, TSC-timed). The first %.0f s '
        'are discarded, then `clear fwd stats all` on both and %d one-second samples. '
        'Measured: the receiver\'s Rx-pps (txonly/rxonly cells) or the front end\'s Tx-pps '
        '(io loopback: packets the front end forwarded). Per run: median and best sample; per '
        'driver: median of the run medians and the best sample of all runs; ratio = vnapi / '
        'virtio_user%s. %s: the two vCPUs switch '
        'between fast and slow host states every few seconds. Core cells %d runs per driver, '
        'secondary cells %d, %.0f s per run. Ring size %d for both drivers (`queue_size`), same '
        '`mrg_rxbuf`, same queue count; packed cells `packed_vq=1` on both.'
        % (math.ceil(args.warmup), int(round(args.seconds)) - math.ceil(args.warmup),
           ' (and vnapi / vnapi_prev; vnapi_prev has vnapi\'s devargs)' if prev else '',
           order_note(ncon), args.runs, args.secondary_runs, args.seconds, M_QUEUE_SIZE)]
    sec += [
        '- Bottleneck: from testpmd\'s forward statistics over the measured window '
        '(`show fwd stats all`). A virtio receiver cannot miss a packet: when it is slow, the '
        'ring fills and the *sender\'s* burst is refused (testpmd TX-dropped). So sender '
        'TX-dropped > 1% = the receiver is the bottleneck; no drops = the sender is. The '
        'receivers\' RX-dropped (`imissed`) was also read: net_vhost, net_virtio_user and '
        'net_vnapi report 0 (net_vhost\'s xstats have size histograms, `undersize_packets`, '
        '`guest_notifications`, no ring-full counter; its `tx_errors` stays 0 while testpmd '
        'counts TX-dropped). In io loopback both sides send: flowgen\'s drops = the front end '
        'did not take packets fast enough, the front end\'s io drops = net_vhost did not drain '
        'its rx fast enough.',
        '- CPU per packet: the front end\'s forwarding lcore polls at 100% in every cell, so '
        'cycles/packet = TSC Hz / (front end\'s pps: Tx-pps sent in txonly, Rx-pps received in '
        'rxonly, Tx-pps forwarded in io), median of the run medians; labelled "TSC/pps". '
        '"fe core CPU" is that thread\'s utime+stime (/proc/PID/task/TID/stat) over the '
        'window: below 100% the thread was descheduled (other programs on the 2 vCPUs) and '
        'TSC/pps overstates the cost by that factor. No PMU on these VMs (no `perf stat` '
        'cycles).',
        '']
    for t in rows:
        sec += [t, '']
    sec += ['### net_virtio_user devargs per cell', '', VU_CHOICE_NOTE.strip(), '']
    fails = []
    for c, cons, n in plan:
        for con in cons:
            for i, r in enumerate(results.get((c.id, con['label']), [])):
                if r['error'] and not r.get('skipped'):
                    fails.append('- %s, %s, run %d: %s' % (c.id, con['label'], i + 1,
                                                           r['error'][:300]))
    if fails:
        sec += ['### Failed runs', ''] + fails + ['']
    perfdoc.publish(meta, '\n'.join(sec), intro, doc=args.doc)
    print('\npublished section %s (%s)' % (meta['section'], perfdoc.paths(args.doc)[0]))
    return status


# ============================================================================================
# --paired: paired throughput ratios with a bootstrap interval, and the A/A run.
# ============================================================================================

P_PAIRS = 20               # pairs per cell (the method's minimum)
P_SECONDS = 6.0            # seconds per run, warm-up included
P_WARMUP = 1.0
P_BOOTSTRAP = 10000        # resamples of the pair ratios
P_SEED = 20261203          # fixed: the same ratios give the same interval
# What this machine cannot resolve: two runs of the whole benchmark with the same plugin put
# one cell's median 3.8 % apart, each with an interval narrower than that, and A/A bounds
# reach 0.977 and 1.021. A verdict needs the interval clear of 1 +- P_DRAW.
P_DRAW = 0.03


def bench_memory(no_huge):
    """(the EAL memory of a run's two processes, its description): 256 MB each on 2 MB
    hugepages when enough are free, else (or with @no_huge) --no-huge -m 512, said so."""
    mem = h.Memory(huge=False, mb=512) if no_huge else h.Memory.best(processes=2, mb=256)
    note = mem.describe()
    if no_huge:
        note += ' (forced)'
    elif not mem.huge:
        note += ' -- FALLBACK: not enough free 2 MB hugepages (%d free)' % h.free_hugepages_2m()
    return mem, note


def add_output_args(ap, json_help):
    """The options every mode shares: --no-huge, and where the result goes (--json, --doc,
    --no-doc)."""
    ap.add_argument('--no-huge', action='store_true', help='force --no-huge -m 512')
    ap.add_argument('--json', help=json_help)
    ap.add_argument('--doc', help='the page (default doc/performance.md; results in the '
                    'directory results next to it)')
    ap.add_argument('--no-doc', action='store_true')


def paired_cells():
    """The six 64 B core cells: split/packed x fe_tx, be_tx, io, 1 queue pair, mergeable on."""
    return [c for c in matrix_cells() if c.size == 64 and c.tier == 'core']


def bootstrap_median(ratios, level=0.95, n=P_BOOTSTRAP, seed=P_SEED):
    """(median, low, high): the median of the ratios and its percentile bootstrap interval at
    `level` (n resamples, a fixed seed): vnapitools.runs.median_ci."""
    return runs.median_ci(ratios, level=level, resamples=n, seed=seed)


def paired_verdict(lo, hi, margin=P_DRAW):
    """From the interval [lo, hi] of the median ratio A/B: 'ahead' when it lies above
    1 + margin, 'behind' when below 1 - margin, 'draw' when it lies within 1 +- margin (the
    same rate, as far as the machine can tell), else 'undecided'."""
    if lo > 1.0 + margin:
        return 'ahead'
    if hi < 1.0 - margin:
        return 'behind'
    if lo >= 1.0 - margin and hi <= 1.0 + margin:
        return 'draw'
    return 'undecided'


def paired_contenders(cell, mode):
    """(A, B): vnapi, and net_virtio_user with its best devargs ('vu'), net_vnapi from the
    same plugin ('aa') or net_vnapi of the earlier build ('prev')."""
    vn = contenders_for(cell)
    a = vn[0]
    if mode == 'vu':
        b = vn[1]
    elif mode == 'aa':
        b = dict(a, label='vnapi(A/A)', fe='vnapi_prev', devargs=list(a['devargs']))
    else:
        b = dict(a, label='vnapi_prev', fe='vnapi_prev', devargs=list(a['devargs']))
    return a, b


def paired_tables(plan, pairs, mode):
    """The verdict table (per cell) and the pairs table."""
    bname = {'vu': 'net_virtio_user', 'aa': 'vnapi (same plugin)', 'prev': 'vnapi_prev'}[mode]
    t1 = ['| cell | pairs | median ratio vnapi / %s | 95 %% interval | verdict | vnapi median '
          '(Mpps) | %s median (Mpps) | failed runs |' % (bname, bname),
          '|---|---:|---:|---|---|---:|---:|---:|']
    t2 = ['| cell | per-pair ratios, in run order (a: vnapi ran first, b: %s ran first) | '
          'median ratio, a pairs / b pairs |' % bname, '|---|---|---|']
    out = {}
    for c, a, b in plan:
        ps = pairs.get(c.id, [])
        ok = [p for p in ps if p['ratio'] is not None]
        failed = sum(1 for p in ps for r in (p['a'], p['b']) if r.get('error'))
        if len(ok) >= 2:
            m, lo, hi = bootstrap_median([p['ratio'] for p in ok])
            # Fewer pairs than the method's minimum: a smoke run, no verdict.
            v = paired_verdict(lo, hi) if len(ok) >= P_PAIRS else \
                'none (%d pairs < %d)' % (len(ok), P_PAIRS)
            out[c.id] = dict(pairs=len(ok), median=m, low=lo, high=hi, verdict=v,
                             ratios=[p['ratio'] for p in ok])
            t1.append('| %s | %d | %.3f | [%.3f, %.3f] | %s | %s | %s | %d |' % (
                c.id, len(ok), m, lo, hi, v,
                fmt_mpps(statistics.median(p['a']['median'] for p in ok)),
                fmt_mpps(statistics.median(p['b']['median'] for p in ok)), failed))
        else:
            out[c.id] = dict(pairs=len(ok), verdict='no result')
            t1.append('| %s | %d | - | - | no result | - | - | %d |' % (c.id, len(ok), failed))
        first = ['a' if p['order'][0] == a['label'] else 'b' for p in ps]
        by = {k: [p['ratio'] for p, f in zip(ps, first) if f == k and p['ratio'] is not None]
              for k in 'ab'}
        t2.append('| %s | %s | %s / %s |' % (
            c.id, ', '.join(('%.2f' % p['ratio'] if p['ratio'] is not None else 'failed') + f
                            for p, f in zip(ps, first)),
            *('%.3f' % statistics.median(by[k]) if by[k] else '-' for k in 'ab')))
    return '\n'.join(t1), '\n'.join(t2), out


def paired_main():
    ap = argparse.ArgumentParser(
        prog='bench.py --paired',
        description='Paired throughput ratios: per cell at least 20 pairs of runs (vnapi and '
        'the other contender back to back, each first in half of the pairs, in a seeded random '
        'order), the median ratio with a 95 %% '
        'bootstrap interval and a verdict from it (ahead / behind / draw / undecided). Publishes '
        'section '
        'bench-paired of doc/performance.md (--aa: bench-aa; against an earlier build: printed '
        'only).')
    ap.add_argument('--paired', action='store_true')
    ap.add_argument('--aa', action='store_true',
                    help='A/A: the same plugin on both sides (net_vnapi twice)')
    ap.add_argument('--prev-plugin', metavar='PATH',
                    help='B = net_vnapi from this plugin (an earlier build)')
    ap.add_argument('--against', metavar='REV',
                    help='B = net_vnapi of commit REV (devtools/build-rev.sh REV)')
    ap.add_argument('--build', default=os.path.join(TOP, 'build'))
    ap.add_argument('--plugin', help=PLUGIN_HELP)
    ap.add_argument('--cells', help='cell ids or patterns among the six 64 B core cells')
    ap.add_argument('--pairs', type=int, default=P_PAIRS,
                    help='pairs per cell (default %d; fewer is a smoke run, not a result)'
                    % P_PAIRS)
    ap.add_argument('--seconds', type=float, default=P_SECONDS,
                    help='seconds per run, warm-up included (default %.0f)' % P_SECONDS)
    ap.add_argument('--warmup', type=float, default=P_WARMUP,
                    help='seconds discarded (default %.0f)' % P_WARMUP)
    ap.add_argument('--seed', type=int,
                    help='seed of the order of the two runs of each pair (default: drawn at '
                    'start, printed and stored; the same seed gives the same orders)')
    ap.add_argument('--list', action='store_true', help='cells, contenders, time estimate')
    ap.add_argument('--from-json', metavar='FILE',
                    help='run nothing: publish the section from the result an earlier run '
                    'stored with --json FILE, or from the page\'s own doc/results/SECTION.json')
    add_output_args(ap, 'write the result (every run, the pairs, the verdicts) here')
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            result = json.load(f)
        data, meta = perfdoc.stored_run(result)
        if isinstance(data, dict):
            result = dict(data, meta=meta)  # the page's own doc/results/SECTION.json
        if result.get('mode') not in ('vu', 'aa') or 'meta' not in result:
            ap.error('--from-json %s: no stored result of --paired or --paired --aa '
                     '(one against an earlier build is printed only)' % args.from_json)
        return paired_publish(result, args.doc)
    if args.seed is None:
        args.seed = runs.new_seed()
    if args.seconds < math.ceil(args.warmup) + 2:
        ap.error('--seconds must leave at least 2 samples after --warmup')
    if sum(bool(x) for x in (args.aa, args.prev_plugin, args.against)) > 1:
        ap.error('--aa, --prev-plugin and --against each name the other contender: give one')
    mode = 'aa' if args.aa else ('prev' if args.prev_plugin or args.against else 'vu')
    cmdline = ' '.join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], TOP)] + sys.argv[1:])
    # The provenance before measuring (the tree measured); an earlier build as B is a
    # developer's comparison, printed and kept with --json, not a section of the page.
    meta = perfdoc.measurement('bench-aa' if mode == 'aa' else 'bench-paired', cmdline,
                               build=os.path.abspath(args.build))
    cells = paired_cells()
    if args.cells:
        cells = select_cells(cells, args.cells)
        if not cells:
            ap.error('--cells %r selects none of %s' % (args.cells,
                                                        ' '.join(c.id for c in paired_cells())))
    plan = [(c,) + paired_contenders(c, mode) for c in cells]
    est = len(plan) * args.pairs * 2 * (args.seconds + M_OVERHEAD_S)
    print('bench --paired: %s; %d cells x %d pairs x 2 runs of %.0f s (+~%.0f s start/stop '
          'each): estimated %.0f min; order seed %d' % (
              {'vu': 'vnapi vs net_virtio_user', 'aa': 'A/A (vnapi vs the same plugin)',
               'prev': 'vnapi vs vnapi_prev'}[mode], len(plan), args.pairs, args.seconds,
              M_OVERHEAD_S, est / 60, args.seed), flush=True)
    if args.list:
        for c, a, b in plan:
            print('  %-18s A %s [%s]  B %s [%s%s]' % (c.id, a['label'], ','.join(a['devargs']),
                                                      b['label'], ','.join(b['devargs']),
                                                      ' ' + ' '.join(b['eal']) if b['eal']
                                                      else ''))
        return 0
    plugin = runs.plugin(args.build, args.plugin)
    against = None
    if args.against:
        against = commit_of(args.against)
        if not against:
            ap.error('--against %s: not a commit of this repository' % args.against)
        try:
            args.prev_plugin = build_rev(against[0])
        except RuntimeError as e:
            print('bench: %s' % e, file=sys.stderr)
            return 2
    if mode == 'aa':
        set_prev_plugin(ap, plugin)
    elif mode == 'prev':
        set_prev_plugin(ap, args.prev_plugin)
    h.install_guards()
    mem, mem_note = bench_memory(args.no_huge)
    t_all = time.monotonic()
    pairs = {}
    runs_done, runs_total = 0, len(plan) * args.pairs * 2
    for c, a, b in plan:
        for k, order in enumerate(runs.pair_orders(args.pairs, (a, b), args.seed, c.id)):
            got = {}
            for con in order:
                got[con['label']] = matrix_run(con, c, args.seconds, args.warmup, mem)
                runs_done += 1
            ra, rb = got[a['label']], got[b['label']]
            ratio = (ra['median'] / rb['median']
                     if not ra['error'] and not rb['error'] and rb['median'] else None)
            pairs.setdefault(c.id, []).append(dict(a=ra, b=rb, ratio=ratio,
                                                   order=[x['label'] for x in order]))
            el = time.monotonic() - t_all
            print('  %-16s pair %2d  %-28s %s Mpps  %-28s %s Mpps  ratio %s  [%d/%d, ETA %.1f '
                  'min]' % (c.id, k + 1, order[0]['label'],
                            fmt_mpps(got[order[0]['label']].get('median') or 0),
                            order[1]['label'], fmt_mpps(got[order[1]['label']].get('median') or 0),
                            '%.3f' % ratio if ratio is not None else 'FAILED (%s)' % (
                                ra['error'] or rb['error'])[:120],
                            runs_done, runs_total, el / runs_done * (runs_total - runs_done) / 60),
                  flush=True)
    elapsed = time.monotonic() - t_all
    t1, t2, verdicts = paired_tables(plan, pairs, mode)
    print('\n' + t1 + '\n\n' + t2)
    print('\nelapsed %.1f min (estimate was %.1f min)' % (elapsed / 60, est / 60))
    result = {
        'meta': meta, 'mode': mode, 'pairs_per_cell': args.pairs, 'seconds': args.seconds,
        'warmup': args.warmup, 'memory': mem_note, 'elapsed_s': elapsed, 'seed': args.seed,
        'against': list(against) if against else None,
        'plugin': os.path.relpath(plugin, TOP),
        'verdicts': verdicts,
        'pairs': {cid: [dict(order=p['order'], ratio=p['ratio'],
                             a={k: v for k, v in p['a'].items() if k != 'error_tail'},
                             b={k: v for k, v in p['b'].items() if k != 'error_tail'})
                        for p in ps] for cid, ps in pairs.items()},
    }
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(result, f, indent=1)
    if args.no_doc or mode == 'prev':
        return 0
    return paired_publish(result, args.doc)


def paired_publish(result, doc=None):
    """Publish section bench-paired (bench-aa for an A/A run) from a result of paired_main()
    (as --json stores it; --from-json FILE does it from the file)."""
    meta, mode, npairs = result['meta'], result['mode'], result['pairs_per_cell']
    byid = {c.id: c for c in paired_cells()}
    plan = [(byid[cid],) + paired_contenders(byid[cid], mode) for cid in byid
            if cid in result['pairs']]
    t1, t2, verdicts = paired_tables(plan, result['pairs'], mode)
    # Verdicts by the rule of this writer: a stored run published again gets them anew.
    result = dict(result, verdicts=verdicts)
    smoke = npairs < P_PAIRS
    if result.get('seed') is not None:
        order = ('%s: the two vCPUs switch between fast and slow host states within seconds, '
                 'so only runs adjacent in time are compared, and a random order keeps a state '
                 'that comes and goes with the run\'s position off one contender'
                 % runs.order_note(result['seed']))
    else:
        order = ('the order alternating pair by pair (A B, B A, ...): the two vCPUs switch '
                 'between fast and slow host states within seconds, so only runs adjacent in '
                 'time are compared')
    intro = ('%sPer cell %d pairs of runs, the two contenders back to back, %s. Per '
             'pair the ratio of the two run medians (vnapi / the other), per cell the median '
             'ratio and its 95 %% percentile bootstrap interval (%d resamples); the verdict '
             'comes from the interval alone: "ahead" when it lies above %.2f, "behind" when '
             'below %.2f, "draw" when it lies within the two (two runs of the same plugin '
             'can differ by that much here), else "undecided". %s' % (
                 '**SMOKE RUN (%d pairs per cell): not a result.**\n\n' % npairs
                 if smoke else '', npairs, order, P_BOOTSTRAP, 1 + P_DRAW, 1 - P_DRAW,
                 'A/A: the same plugin on both sides; an honest interval contains 1.' if
                 mode == 'aa' else ''))
    body = ['- Elapsed: %.1f min; %.0f s per run, the first %.0f s discarded; memory %s' % (
                result['elapsed_s'] / 60, result['seconds'], result['warmup'],
                result['memory']),
            '- Cells and processes: as in the benchmark matrix (its Method line and its '
            '"net_virtio_user devargs per cell")' + (
                '; B is net_vnapi from the same plugin (`%s`)'
                % result.get('plugin', 'build/drivers/librte_net_vnapi.so')
                if mode == 'aa' else ''),
            '', t1, '', t2, '']
    perfdoc.publish(meta, '\n'.join(body), intro,
                    data={k: v for k, v in result.items() if k != 'meta'}, doc=doc)
    print('\npublished section %s (%s)' % (meta['section'], perfdoc.paths(doc)[0]))
    return 0


def n_all_estimate(args, cells=None, ncon=2):
    """Minutes x 60 of a full run of cells (default: the whole matrix), ncon contenders."""
    runs = 5 if args.quick else args.runs
    sruns = 3 if args.quick else args.secondary_runs
    secs = 6.0 if args.quick else args.seconds
    n = sum(ncon * (runs if c.tier == 'core' else sruns) for c in cells or matrix_cells())
    return n * (secs + M_OVERHEAD_S)


def m_agg(runs):
    """One contender in one cell: its successful runs' count, median of the run medians, best
    sample, median front-end pps and fe core CPU, run medians; None when no run succeeded."""
    ok = [r for r in runs if not r['error']]
    if not ok:
        return None
    return dict(n=len(ok), med=statistics.median(r['median'] for r in ok),
                best=max(r['best'] for r in ok),
                fe_med=statistics.median(r['fe_pps_median'] for r in ok),
                cpu=statistics.median(r['cpu'].get('frontend', float('nan')) for r in ok),
                meds=[r['median'] for r in ok])


def matrix_tables(plan, results, hz, explore):
    """The matrix's markdown tables. When vnapi_prev ran, table 1 adds its median and best and
    the vnapi/vnapi_prev ratios, table 2 its run medians."""
    agg = m_agg

    def fail_note(runs):
        errs = [r for r in runs if r['error'] and not r.get('skipped')]
        if not errs:
            return ''
        skipped = sum(1 for r in runs if r.get('skipped'))
        return '%d failed%s (%s)' % (len(errs), ', %d skipped' % skipped if skipped else '',
                                     errs[0]['error'][:100].replace('|', '/'))

    out = []
    if explore:
        t = ['| cell | virtio_user devargs (+EAL) | runs | median (Mpps) | best (Mpps) | '
             'run medians | paths reported | failures |', '|---|---|---:|---:|---:|---|---|---|']
        for c, cons, n in plan:
            for con in cons:
                runs = results.get((c.id, con['label']), [])
                a = agg(runs)
                paths = sorted({p for r in runs for p in r.get('paths', [])})
                t.append('| %s | `%s`%s | %d | %s | %s | %s | %s | %s |' % (
                    c.id, ','.join(con['devargs'][3:]), ' `%s`' % ' '.join(con['eal'])
                    if con['eal'] else '', a['n'] if a else 0,
                    fmt_mpps(a['med']) if a else '-', fmt_mpps(a['best']) if a else '-',
                    ', '.join(fmt_mpps(x) for x in a['meds']) if a else '',
                    '; '.join(paths), fail_note(runs)))
        return ['\n'.join(t)]

    prev = any(x['label'] == 'vnapi_prev' for c, cons, n in plan for x in cons)
    t1 = ['| cell | ring | size | direction | mrg | qp | runs vnapi / vu%s | vnapi median (Mpps) | '
          'virtio_user median (Mpps) | ratio median | vnapi best (Mpps) | virtio_user best '
          '(Mpps) | ratio best |%s' % (' / prev' if prev else '',
                                      ' vnapi_prev median (Mpps) | vnapi_prev best (Mpps) | '
                                      'ratio vnapi/prev median | ratio vnapi/prev best |'
                                      if prev else ''),
          '|---|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|' + '---:|' * 4 * prev]
    t2 = ['| cell | bottleneck, vnapi | bottleneck, virtio_user | vnapi cycles/pkt (TSC/pps) | '
          'virtio_user cycles/pkt (TSC/pps) | fe core CPU vnapi / vu | run medians vnapi | '
          'run medians virtio_user |%s' % (' run medians vnapi_prev |' if prev else ''),
          '|---|---|---|---:|---:|---|---|---|' + '---|' * prev]
    t3 = ['| cell | vnapi `--vdev` | virtio_user `--vdev` (+EAL) | virtio_user paths reported |',
          '|---|---|---|---|']
    for c, cons, n in plan:
        rv = results.get((c.id, 'vnapi'), [])
        ru = results.get((c.id, 'virtio_user'), [])
        av, au = agg(rv), agg(ru)

        def cell_m(a, runs, key):
            if a:
                return fmt_mpps(a[key])
            return 'FAILED' if runs else '-'

        def ratio(a, key):
            return '%.2f' % (av[key] / a[key]) if av and a and a[key] else '-'
        rp = results.get((c.id, 'vnapi_prev'), [])
        ap = agg(rp)
        t1.append('| %s | %s | %d | %s | %d | %d | %s / %s%s | %s | %s | %s | %s | %s | %s |%s' % (
            c.id, c.ring, c.size, M_DIR_SHORT[c.dkey], c.mrg, c.queues,
            av['n'] if av else 0, au['n'] if au else 0,
            ' / %d' % (ap['n'] if ap else 0) if prev else '',
            cell_m(av, rv, 'med'), cell_m(au, ru, 'med'), ratio(au, 'med'),
            cell_m(av, rv, 'best'), cell_m(au, ru, 'best'), ratio(au, 'best'),
            ' %s | %s | %s | %s |' % (cell_m(ap, rp, 'med'), cell_m(ap, rp, 'best'),
                                      ratio(ap, 'med'), ratio(ap, 'best')) if prev else ''))

        def cyc(a):
            return '%.0f' % (hz / a['fe_med']) if a and hz and a['fe_med'] else '-'

        def cpu(a):
            return '%.0f%%' % (100 * a['cpu']) if a and a['cpu'] == a['cpu'] else '-'
        fv, fu = fail_note(rv), fail_note(ru)
        fp = fail_note(rp)
        t2.append('| %s | %s | %s | %s | %s | %s / %s | %s | %s |%s' % (
            c.id, bottleneck(c, rv) + ('; ' + fv if fv else ''),
            bottleneck(c, ru) + ('; ' + fu if fu else ''), cyc(av), cyc(au), cpu(av), cpu(au),
            ', '.join(fmt_mpps(x) for x in av['meds']) if av else '',
            ', '.join(fmt_mpps(x) for x in au['meds']) if au else '',
            ' %s |' % '; '.join(x for x in (', '.join(fmt_mpps(x) for x in ap['meds'])
                                            if ap else '', fp) if x) if prev else ''))
        cv = [x for x in cons if x['label'] == 'vnapi']
        cu = [x for x in cons if x['label'] == 'virtio_user']
        paths = sorted({p for r in ru for p in r.get('paths', [])})
        t3.append('| %s | `%s` | `%s`%s | %s |' % (
            c.id, ','.join(['net_vnapi0', 'path=<sock>'] + (['queues=%d' % c.queues]
                                                           if c.queues > 1 else [])
                           + cv[0]['devargs']) if cv else '-',
            ','.join(['net_virtio_user0', 'path=<sock>'] + (['queues=%d' % c.queues]
                                                           if c.queues > 1 else [])
                     + cu[0]['devargs']) if cu else '-',
            ' `%s`' % ' '.join(cu[0]['eal']) if cu and cu[0]['eal'] else '',
            '; '.join(paths) or '-'))
    out.append('\n'.join(t1))
    out.append('\n'.join(t2))
    out.append('\n'.join(t3))
    return out

def throughput_tables(results, sizes, frontends):
    """The throughput table and the ratio table ('' without a pair to compare) of
    results[(size, direction key, front end)] = [run dicts], and the queue sizes each front
    end ran with."""
    qs = {}
    for (size, dk, fe), cell_runs in results.items():
        qs.setdefault(fe, set()).update(str(r['qsize'] or 'default') for r in cell_runs)
    lines = []
    lines.append('| size | direction | driver | queue_size | runs | median of run medians (Mpps) '
                 '| best 1-s sample (Mpps) | run medians (Mpps) |')
    lines.append('|---:|---|---|---:|---:|---:|---:|---|')
    ratio_lines = ['| size | direction | ratio vnapi/virtio_user (median) '
                   '| ratio vnapi/virtio_user (best) | ratio vnapi/vnapi_prev (median) '
                   '| ratio vnapi/vnapi_prev (best) |', '|---:|---|---:|---:|---:|---:|']
    for size in sizes:
        for d in DIRECTIONS:
            agg = {}
            for fe in frontends:
                cell_runs = results.get((size, d[0], fe), [])
                if not cell_runs:
                    continue
                med = statistics.median(r['median'] for r in cell_runs)
                best = max(r['best'] for r in cell_runs)
                agg[fe] = (med, best)
                lines.append('| %d | %s | %s | %s | %d | %s | %s | %s |'
                             % (size, d[1], fe, '/'.join(sorted({str(r['qsize'] or '?')
                                                                 for r in cell_runs})),
                                len(cell_runs), fmt_mpps(med), fmt_mpps(best),
                                ', '.join(fmt_mpps(r['median']) for r in cell_runs)))
            def ratio(other, i):
                if 'vnapi' not in agg or other not in agg or agg[other][i] <= 0:
                    return '-'
                return '%.2f' % (agg['vnapi'][i] / agg[other][i])
            if 'vnapi' in agg and len(agg) > 1:
                ratio_lines.append('| %d | %s | %s | %s | %s | %s |'
                                   % (size, d[1], ratio('virtio_user', 0),
                                      ratio('virtio_user', 1), ratio('vnapi_prev', 0),
                                      ratio('vnapi_prev', 1)))
    ratios = '\n'.join(ratio_lines) if len(ratio_lines) > 2 else ''
    return '\n'.join(lines), ratios, qs


def main():
    if '--paired' in sys.argv[1:]:
        return paired_main()
    if '--matrix' in sys.argv[1:]:
        return matrix_main()
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(TOP, 'build'),
                    help='build directory holding drivers/librte_net_vnapi.so (default: build)')
    ap.add_argument('--plugin', help=PLUGIN_HELP)
    ap.add_argument('--runs', type=int, default=5, help='runs per driver per cell (default 5)')
    ap.add_argument('--seconds', type=float, default=8.0, help='seconds per run (default 8)')
    ap.add_argument('--warmup', type=float, default=2.0, help='seconds discarded (default 2)')
    ap.add_argument('--queue-size', type=int, default=0,
                    help="queue_size devarg for both drivers (default: each driver's default)")
    ap.add_argument('--sizes', default='64,1518', help='packet sizes (default 64,1518)')
    ap.add_argument('--frontends', default='vnapi,virtio_user')
    ap.add_argument('--prev-plugin', metavar='PATH',
                    help='also run net_vnapi from this plugin (an earlier build, e.g. made by '
                         'devtools/build-rev.sh REV), as front end vnapi_prev, alternating '
                         'with the others; the table then has vnapi/vnapi_prev ratios')
    ap.add_argument('--quick', action='store_true',
                    help='development mode: 1 run per driver, 4 s (not a benchmark result)')
    ap.add_argument('--sampler', choices=['show', 'stats-period'], default='show',
                    help="'show': 1-s samples by 'show port stats 0' on an interactive receiver "
                    "(default); 'stats-period': the receiver's --stats-period=1 output")
    ap.add_argument('--no-huge', action='store_true', help='force --no-huge -m 512')
    ap.add_argument('--doc', help='the page (default doc/performance.md; results in the '
                    'directory results next to it)')
    ap.add_argument('--no-doc', action='store_true', help='do not update doc/performance.md')
    ap.add_argument('--matrix', action='store_true',
                    help='the benchmark matrix instead (own options: --matrix --help)')
    ap.add_argument('--paired', action='store_true',
                    help='paired ratios with intervals instead (own options: --paired --help)')
    args = ap.parse_args()
    cmdline = ' '.join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], TOP)] + sys.argv[1:])
    meta = perfdoc.measurement('bench', cmdline, build=os.path.abspath(args.build))
    if args.quick:
        args.runs, args.seconds = 1, 4.0
    if args.seconds <= args.warmup + 1:
        ap.error('--seconds must exceed --warmup by more than 1')

    frontends = [f.strip() for f in args.frontends.split(',') if f.strip()]
    for f in frontends:
        h.FrontEnd(f)
    if args.prev_plugin:
        set_prev_plugin(ap, args.prev_plugin)
        frontends.insert(frontends.index('vnapi') + 1 if 'vnapi' in frontends else 0,
                         'vnapi_prev')
    if 'vnapi' in frontends:
        runs.plugin(args.build, args.plugin)
    sizes = [int(x) for x in args.sizes.split(',')]

    h.install_guards()
    mem, mem_note = bench_memory(args.no_huge)
    print('bench: %s; memory: %s; runs/driver/cell: %d x %.0f s (warm-up %.0f s discarded)'
          % ('QUICK MODE' if args.quick else 'full', mem_note, args.runs, args.seconds,
             args.warmup), flush=True)

    workdir = h.Workdir('bench')
    results = {}   # (size, dir key, fe) -> list of run dicts
    try:
        for size in sizes:
            for d in DIRECTIONS:
                for run in range(args.runs):
                    # A B, B A, ...; with 3 front ends they rotate (run_order()): each gets each slot.
                    order = run_order(frontends, run)
                    for fe in order:
                        r = one_run(fe, size, d, args.seconds, args.warmup, mem,
                                    args.queue_size, workdir, args.sampler)
                        results.setdefault((size, d[0], fe), []).append(r)
                        print('  %4d B  %-36s run %d  %-11s  median %s Mpps  best %s Mpps  '
                              '(%d samples: %s)'
                              % (size, d[1], run + 1, fe, fmt_mpps(r['median']),
                                 fmt_mpps(r['best']), len(r['samples']),
                                 ' '.join(fmt_mpps(x) for x in r['samples'])), flush=True)
    finally:
        workdir.close()

    table, ratios, qs = throughput_tables(results, sizes, frontends)
    print()
    print(table)
    if ratios:
        print()
        print(ratios)

    if args.no_doc:
        return 0
    intro = None
    if args.quick:
        intro = ('**QUICK MODE (1 run per driver, 4 s): a development smoke run, not a '
                 'benchmark result.** The full benchmark is `devtools/bench.py` without '
                 '`--quick`, run alone on the machine.')
    section = [
        '- Peers: `dpdk-testpmd` (DPDK 22.11) with `net_vhost` as back end; front end '
        '`net_vnapi` (plugin via `-d`) or `net_virtio_user`; backend `--lcores 0@0,1@1`, '
        'front end `--lcores 0@1,1@0`, 1 queue pair, `--total-num-mbufs=%d`' % h.DEFAULT_MBUFS,
        '- Memory: %s' % mem_note,
        '- queue_size: %s' % (str(args.queue_size) if args.queue_size else
                              "each driver's default (%s)"
                              % ', '.join('%s %s' % (fe, '/'.join(sorted(v)))
                                          for fe, v in sorted(qs.items()))),
        '- Method: per cell %d run(s) per driver, drivers alternating run by run; %.0f s per '
        'run, first %.0f s discarded; the receiver\'s Rx-pps samples (%s); '
        'per run the median and the best sample; per driver the median of the run medians and '
        'the best sample. The two vCPUs switch between fast and slow host states every few '
        'seconds, so single runs vary by up to 3x.' % (args.runs, args.seconds, args.warmup,
                                                   SAMPLER_NOTE[args.sampler]),
        '',
        table,
        '',
    ]
    if ratios:
        section += [ratios, '']
    perfdoc.publish(meta, '\n'.join(section), intro, doc=args.doc)
    print('\npublished section bench (%s)' % perfdoc.paths(args.doc)[0])
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    finally:
        h._end_all()
