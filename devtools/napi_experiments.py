#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The Linux NAPI threads' experiments as benchmarks (not a test): the UDP-stream analogue of "virtio_net:
Disable interrupts if napi_complete_done rescheduled napi" and the RR affinity table of
"virtio-net: transmit napi", run with vnapi-fwd (lib/napi), l3fwd-power and app/vnapi-peer
(DPDK's net_vhost as the back end). Publishes its tables as section napi-experiments of
doc/performance.md (vnapitools.perfdoc: doc/results/napi-experiments.json) and its PNG plots
as doc/img/napi_*.png.

UDP-stream analogue. vnapi-peer sends 64 B and 1472 B frames (Ethernet/IPv4/UDP) on its port at
a fixed rate and receives what the forwarder sends back. First the poll-mode maximum: vnapi-fwd
--mode poll, peer at "max" (as fast as the ring takes frames); the maximum is the median of the
peer's 1-s received-rate samples. Then per mode one forwarder process per frame size, the peer
running phases at 1 %, 10 %, 50 %, 100 % of that maximum (64 B also idle and 100 pps first, for
the targets). Modes:
  poll          vnapi-fwd --mode poll (net_vnapi)
  hybrid        vnapi-fwd --mode hybrid (the learned deferral window; the disable-on-race rule)
  hybrid-nodor  vnapi-fwd --mode hybrid --no-disable-on-race, net_vnapi intr_rescue=signal
                (the patch's "before")
  l3fwd-vnapi   l3fwd-power --interrupt-only on net_vnapi
  l3fwd-virtio  l3fwd-power --interrupt-only --parse-ptype on net_virtio_user
  (optional, --modes: hybrid-ei0, hybrid-nodor-ei0: the two hybrid modes with event_idx=0,
   the thread's back end had no event idx)
Per phase: throughput (peer), packets per wakeup and wakeups/s (vnapi-fwd: /napi/stats
telemetry at the phase's begin and stop; l3fwd-power: its "lcore N is waked up from rx interrupt"
INFO lines in the window, packets per wakeup = packets received by the peer / wakeups), CPU of
the forwarding lcore's thread and of the whole forwarder (run time from /proc/PID/task/*/schedstat,
ns; utime+stime from /proc/PID/stat kept in the JSON as a cross-check).

RR analogue. 64 B request/response, one transaction outstanding, over two ports: the request
goes peer port 0 -> forwarder -> peer port 1, the response peer port 1 -> forwarder -> peer
port 0. Configurations: "same" (one forwarder lcore serves every rx and tx queue) and "split"
(lcore 0 serves port 0's rx queue and port 1's tx queue, lcore 1 port 1's rx and port 0's tx: a
port's rx and tx queues on different lcores), lcore 1 either on the peer's CPU ("split") or
time-sharing CPU 1 with lcore 0 ("split-1cpu"); poll and hybrid. Transactions/s, latency
p50/p99, forwarder CPU time per transaction (schedstat) and lib/napi busy time per transaction.

Latency at sparse load (--only latency). Single 64-70 B packets in pairs, closed loop:
each a random 0.1-1.9 ms (1 ms +-90 %) after the previous came back, every second one 35-665 us
(350 us +-90 %) after it, so that packets land around the moment the receiver re-arms; 2000
packets per run (--lat-packets). Receivers side by side, in alternating order rep by rep:
vnapi-fwd --mode poll, interrupt, hybrid (defaults), and l3fwd-power --interrupt-only on net_vnapi,
all against the same sender, app/vnapi-peer (routable IPv4/UDP frames; only --expect
differs: macswap for vnapi-fwd, routed for l3fwd-power). Per packet: the round trip and the
round trip net of the time either process did not run (run-queue wait from /proc/PID/schedstat,
and gaps over 100 us in the peer's own busy wait, i.e. host steal). Table p50/p99/p99.9/>1 ms/
>5 ms and a plot of the latency distributions (CCDF): section napi-latency of
doc/performance.md.

Every process: --no-pci, its own --file-prefix, pinned lcores (peer CPU 0, forwarder CPU 1),
--no-huge -m 512, a deadline, ended by PID (devtools/vnapitools/harness.py). The plugin is copied
under /run/vnapi (EAL refuses -d paths under world-writable directories).

Usage:
  devtools/napi_experiments.py [--build DIR] [--quick] [--reps N] [--secs S] [--rr-secs S]
                               [--sizes 64,1472] [--modes LIST] [--rr-configs LIST]
                               [--only stream|rr|latency] [--json FILE] [--doc PATH | --no-doc]
                               [--estimate] [--verbose]
  devtools/napi_experiments.py --estimate       print the plan and its run time, run nothing
  devtools/napi_experiments.py --quick          development smoke run (~4 min, noisy)
  devtools/napi_experiments.py                  the full run (~21 min; run it alone)
"""

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

from vnapitools import harness as h  # process handling, plugin copy
from vnapitools import peer as vp
from vnapitools import perfdoc  # noqa: E402
from vnapitools import runs  # noqa: E402
from vnapitools.harness import telemetry  # noqa: E402
from vnapitools.procfs import system_busy  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WAKEUP_RE = r'lcore \d+ is waked up from rx interrupt'
PEER_CPU = 0
FWD_CPU = 1
FE_MAC = '02:00:00:00:00:0a'

# mode: (label, forwarder, front end, extra devargs, vnapi-fwd options)
MODES = {
    'poll': ('vnapi-fwd poll', 'fwd', 'vnapi', '', ['--mode', 'poll']),
    'hybrid': ('vnapi-fwd hybrid', 'fwd', 'vnapi', '', ['--mode', 'hybrid']),
    'hybrid-nodor': ('vnapi-fwd hybrid, no disable-on-race', 'fwd', 'vnapi',
                     'intr_rescue=signal', ['--mode', 'hybrid', '--no-disable-on-race']),
    'l3fwd-vnapi': ('l3fwd-power on net_vnapi', 'l3fwd', 'vnapi', '', []),
    'l3fwd-virtio': ('l3fwd-power on net_virtio_user', 'l3fwd', 'virtio_user', '', []),
    'hybrid-ei0': ('vnapi-fwd hybrid, event_idx=0', 'fwd', 'vnapi', 'event_idx=0',
                   ['--mode', 'hybrid']),
    'hybrid-nodor-ei0': ('vnapi-fwd hybrid, no disable-on-race, event_idx=0', 'fwd', 'vnapi',
                         'event_idx=0,intr_rescue=signal',
                         ['--mode', 'hybrid', '--no-disable-on-race']),
}
DEFAULT_MODES = ['poll', 'hybrid', 'hybrid-nodor', 'l3fwd-vnapi', 'l3fwd-virtio']

# RR configurations: (label, vnapi-fwd --lcores, --config, queues per port)
RR_CONFIGS = {
    'same': ('rx+tx of both ports on lcore 0 (CPU 1)', '0@%d' % FWD_CPU,
             '(0,0,0),(1,0,0)', 1),
    'split': ('port rx and tx on different lcores: lcore 0 on CPU 1, lcore 1 on CPU 0 '
              '(the peer\'s CPU)', '0@%d,1@%d' % (FWD_CPU, PEER_CPU),
              '(0,0,0),(0,1,1),(1,0,1),(1,1,0)', 2),
    'split-1cpu': ('port rx and tx on different lcores, both lcores on CPU 1',
                   '0@%d,1@%d' % (FWD_CPU, FWD_CPU), '(0,0,0),(0,1,1),(1,0,1),(1,1,0)', 2),
}
DEFAULT_RR_CONFIGS = ['same', 'split', 'split-1cpu']

# Latency at sparse load: mode -> (label, forwarder, vnapi-fwd options)
LAT_MODES = {
    'poll': ('vnapi-fwd poll', 'fwd', ['--mode', 'poll']),
    'interrupt': ('vnapi-fwd interrupt', 'fwd', ['--mode', 'interrupt']),
    'hybrid': ('vnapi-fwd hybrid', 'fwd', ['--mode', 'hybrid']),
    'l3fwd-vnapi': ('l3fwd-power --interrupt-only', 'l3fwd', []),
}
LAT_GAPS = {'gap': (100, 1900), 'gap2': (35, 665)}
RR_MODES = ['poll', 'hybrid']

LOADS = [0.01, 0.10, 0.50, 1.00]
TARGET_IDLE_CPU_PCT = 0.5
TARGET_THROUGHPUT_RATIO = 0.95

# Fixed costs per forwarder run, for the estimate (s): start of both processes, link, warm-up,
# settle, stop. Measured on this VM: ~3-4 s.
RUN_OVERHEAD_S = 4.0
GAP_S = 0.5
DRAIN_S = 0.2


def log(msg):
    print('[%s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


# ---- /proc accounting ------------------------------------------------------------------------

def task_runtime_ns(pid):
    """{tid: on-CPU ns} from /proc/PID/task/TID/schedstat (field 1)."""
    out = {}
    for tid, _ in h.proc_threads(pid):
        try:
            with open('/proc/%d/task/%d/schedstat' % (pid, tid)) as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def lcore_tids(pid):
    """{lcore id: tid}: the main lcore is the main thread, workers are 'lcore-worker-N'."""
    out = {0: pid}
    for tid, comm in h.proc_threads(pid):
        m = re.match(r'lcore-worker-(\d+)', comm)
        if m:
            out[int(m.group(1))] = tid
    return out


class Snap:
    """CPU and (vnapi-fwd) lib/napi counters of the forwarder at one instant."""

    def __init__(self, proc, prefix=None, lcores=(), wake_proc=None):
        self.t = time.monotonic()
        pid = proc.pid
        self.tasks = task_runtime_ns(pid)
        try:
            self.ticks = h.proc_cpu_s(pid)
        except OSError:
            self.ticks = None
        self.sys = system_busy()
        self.napi = {}
        for lc in lcores:
            try:
                self.napi[lc] = telemetry(prefix, '/napi/stats,%d' % lc)['/napi/stats']
            except (OSError, ValueError, KeyError) as e:
                self.napi[lc] = {'error': str(e)}
        self.wake_mark = wake_proc.mark() if wake_proc is not None else None


def window(a, b, pid, lcores_of_interest):
    """Derived figures of a forwarder between two snapshots."""
    dt = b.t - a.t
    res = {'window_s': round(dt, 3)}
    proc_ns = sum(v - a.tasks.get(k, 0) for k, v in b.tasks.items())
    res['proc_cpu_pct'] = round(100.0 * proc_ns / 1e9 / dt, 3)
    res['proc_cpu_s'] = round(proc_ns / 1e9, 4)
    if a.ticks is not None and b.ticks is not None:
        res['proc_stat_cpu_pct'] = round(100.0 * (b.ticks - a.ticks) / dt, 2)
    tids = lcore_tids(pid)
    lc_ns = 0
    for lc in lcores_of_interest:
        tid = tids.get(lc)
        if tid is not None and tid in b.tasks:
            lc_ns += b.tasks[tid] - a.tasks.get(tid, 0)
    res['lcore_cpu_pct'] = round(100.0 * lc_ns / 1e9 / dt / max(1, len(lcores_of_interest)), 3)
    busy = {}
    for cpu in b.sys:
        if cpu in a.sys:
            db = b.sys[cpu][0] - a.sys[cpu][0]
            dtot = b.sys[cpu][1] - a.sys[cpu][1]
            busy[cpu] = round(100.0 * db / dtot, 1) if dtot > 0 else 0.0
    res['system_busy_pct'] = busy
    if FWD_CPU in busy:
        # Busy time of the forwarder's CPU that was not the forwarder: other programs
        # (the machine is shared) and kernel work.
        res['other_on_fwd_cpu_pct'] = round(max(0.0, busy[FWD_CPU] - res['proc_cpu_pct']), 1)
    if a.napi:
        tot = {}
        for lc, s1 in b.napi.items():
            s0 = a.napi.get(lc, {})
            if 'error' in s1 or 'error' in s0:
                res['napi_error'] = s1.get('error') or s0.get('error')
                continue
            for k in ('rounds', 'packets', 'arms', 'races', 'sleeps', 'wakeups',
                      'spurious_wakeups', 'wakeup_packets', 'busy_cycles', 'idle_cycles',
                      'sleep_cycles', 'tx_unsent', 'sleep_timeouts'):
                tot[k] = tot.get(k, 0) + s1.get(k, 0) - s0.get(k, 0)
            tot['tsc_hz'] = s1.get('tsc_hz', 0)
        if tot:
            res['napi'] = tot
            res['wakeups'] = tot['wakeups']
            res['wakeups_per_s'] = round(tot['wakeups'] / dt, 1)
            res['pkts_per_wakeup'] = (round(tot['wakeup_packets'] / tot['wakeups'], 2)
                                      if tot['wakeups'] else None)
            res['races_per_s'] = round(tot['races'] / dt, 1)
            if tot['tsc_hz']:
                res['napi_busy_s'] = round(tot['busy_cycles'] / tot['tsc_hz'], 4)
                res['napi_poll_s'] = round((tot['busy_cycles'] + tot['idle_cycles']) /
                                           tot['tsc_hz'], 4)
    return res


def rm_runtime(prefix):
    def fn():
        shutil.rmtree(os.path.join('/var/run/dpdk', prefix), ignore_errors=True)
    return fn


# ---- the run environment -----------------------------------------------------------------------

class Env:
    def __init__(self, args):
        self.build = os.path.abspath(args.build)
        self.peer = vp.build_binary(self.build)
        self.fwd = os.path.join(self.build, 'app', 'vnapi-fwd', 'vnapi-fwd')
        self.l3fwd = os.path.join(self.build, 'tests', 'l3fwd', 'l3fwd-power')
        self.verbose = args.verbose
        self.plugin = None
        self.workdir = None
        self.commands = {}   # mode/config -> [peer argv, forwarder argv] (first run of each)

    def prepare(self):
        # Build what runs first: the results are stamped with the tree, not with the build.
        src = runs.plugin(self.build, None, *(os.path.relpath(p, self.build)
                                              for p in (self.peer, self.fwd, self.l3fwd)))
        self.plugin = h.prepare_plugin(src)
        self.workdir = h.Workdir('exp')

    def close(self):
        if self.workdir:
            self.workdir.close()

    def start(self, name, argv, prefix, deadline):
        p = h.DpdkProcess(name, argv, deadline=deadline, cleanup=[rm_runtime(prefix)],
                          echo=self.verbose)
        return p.start()

    def start_pair(self, procs, peer_argv, pp, name, fwd_argv, fp, deadline, warm=False):
        """The peer (the vhost-user server) up to READY, then the forwarder; both join procs.
        With @warm, also up to the link and the warm-up frame back (the phases follow)."""
        peer = self.start('peer', peer_argv, pp, deadline)
        procs.append(peer)
        peer.wait_for(r'^READY ', 30, what='peer READY')
        fwd = self.start(name, fwd_argv, fp, deadline)
        procs.append(fwd)
        if warm:
            peer.wait_for(r'^LINK up', 40, what='link up')
            peer.wait_for(r'^WARMUP back', 40, what='warm-up frame back')
        return peer, fwd

    def eal(self, prefix, lcores):
        return ['--no-huge', '-m', '512', '--no-pci', '--lcores', lcores,
                '--file-prefix', prefix, '--log-level=lib.eal:notice']

    def peer_argv(self, prefix, socks, queues, phases, **opts):
        eal = self.eal(prefix, '0@%d' % PEER_CPU) + ['--log-level=vhost.config:warning']
        return vp.argv(self.peer, phases, ifaces=socks, eal=eal, queues=queues, fe_mac=FE_MAC,
                       **opts)

    def fe_vdev(self, fe, sock, index=0, queues=1, extra=''):
        if fe == 'vnapi':
            v = 'net_vnapi%d,path=%s,mac=%s' % (index, sock, FE_MAC)
        else:
            v = 'net_virtio_user%d,path=%s,mac=%s' % (index, sock, FE_MAC)
        if queues != 1:
            v += ',queues=%d' % queues
        if extra:
            v += ',' + extra
        return v

    def fwd_argv(self, prefix, lcores, vdevs, fe, config, opts, duration):
        argv = [self.fwd] + self.eal(prefix, lcores)
        if fe == 'vnapi':
            argv += ['-d', self.plugin]
        for v in vdevs:
            argv += ['--vdev', v]
        return argv + ['--', '--config', config, '--fwd', 'macswap',
                       '--duration', str(int(duration))] + opts

    def l3fwd_argv(self, prefix, vdev, fe):
        argv = [self.l3fwd] + self.eal(prefix, '0@%d' % FWD_CPU) + ['--log-level=user1:info']
        if fe == 'vnapi':
            argv += ['-d', self.plugin]
        argv += ['--vdev', vdev, '--', '-p', '0x1', '--config=(0,0,0)', '--interrupt-only']
        if fe == 'virtio_user':
            argv += ['--parse-ptype']  # net_virtio_user reports no packet types
        return argv


def fwd_final(fwd):
    """vnapi-fwd's FINAL line (rx, tx, dropped: what napi_tx gave up on) as a dict, or None
    when it printed none."""
    fin = fwd.find_all(r'^FINAL (.*)')
    return h.parse_kv(fin[-1][1].group(1)) if fin else None


def stop_all(procs):
    """End every process of a run, last started first; never leave one behind."""
    for p in reversed(procs):
        try:
            p.stop()
        except Exception as e:
            print('stop %s: %s' % (p.name, e), file=sys.stderr)


# ---- one stream run: one forwarder process, the peer running phases -------------------------

def stream_run(env, mode, size, phases, tag):
    """phases: [(rate or 'max' or 0, secs)]. Returns {'phases': [...], ...}."""
    label, kind, fe, devargs, opts = MODES[mode]
    sock = env.workdir.socket('s')
    pp, fp = h.unique('xp'), h.unique('xf')
    total = sum(s for _, s in phases) + len(phases) * (GAP_S + DRAIN_S)
    deadline = total + 60
    peer_argv = env.peer_argv(
        pp, [sock], 1, [vp.phase('open', rate=rate, secs=float(secs)) for rate, secs in phases],
        size=size, timeout=int(total + 40), linger=int(deadline),
        drain_ms=int((GAP_S + DRAIN_S) * 1000), sample_ms=1000,
        expect='macswap' if kind == 'fwd' else 'routed')
    vdev = env.fe_vdev(fe, sock, extra=devargs)
    if kind == 'fwd':
        fwd_argv = env.fwd_argv(fp, '0@%d' % FWD_CPU, [vdev], fe, '(0,0,0)', opts, deadline)
    else:
        fwd_argv = env.l3fwd_argv(fp, vdev, fe)
    env.commands.setdefault('%s (%s, %d B)' % (mode, 'poll-mode maximum' if tag == 'max' else
                                               'loads', size), [peer_argv, fwd_argv])
    res = {'mode': mode, 'size': size, 'tag': tag, 'phases': [], 'error': None}
    procs = []
    try:
        peer, fwd = env.start_pair(procs, peer_argv, pp, mode, fwd_argv, fp, deadline, warm=True)
        lcores = [0] if kind == 'fwd' else []
        wake_proc = fwd if kind == 'l3fwd' else None
        for i, (rate, secs) in enumerate(phases):
            peer.wait_for(r'^PHASE %d \w+ begin' % i, 60, what='phase %d begin' % i)
            a = Snap(fwd, fp, lcores, wake_proc)
            peer.wait_for(r'^PHASE %d \w+ stop' % i, secs + 30, what='phase %d stop' % i)
            b = Snap(fwd, fp, lcores, wake_proc)
            ph = {'rate': rate, 'secs': secs, 'peer': vp.phase_result(peer, i, 30)}
            ph.update(window(a, b, fwd.pid, [0]))
            ph['_unsent0'] = a.napi.get(0, {}).get('tx_unsent')
            samples = [h.parse_kv(ln.text)['rx_pps'] for ln, _ in
                       peer.find_all(r'^SAMPLE %d ' % i)]
            ph['rx_pps_samples'] = samples
            if kind == 'l3fwd':
                n = len([ln for ln, _ in fwd.find_all(WAKEUP_RE, since=a.wake_mark)
                         if a.t <= ln.t <= b.t])
                ph['wakeups'] = n
                ph['wakeups_per_s'] = round(n / ph['window_s'], 1)
                ph['pkts_per_wakeup'] = (round(ph['peer']['back'] / n, 2) if n else None)
            res['phases'].append(ph)
        m = peer.wait_for(vp.RESULT_RE, 60, what='peer RESULT')
        res['peer_result'] = m.group(1) + ' ' + m.group(2)
        res['fwd_alive_at_end'] = fwd.alive()
        res['fwd_rc'] = fwd.stop()
        if kind == 'fwd':
            res['fwd_final'] = fwd_final(fwd)
            # The forwarder's own drops (napi_tx gave up: the peer's rx ring was full) from a
            # phase's begin to the next one's (the last: to vnapi-fwd's FINAL line), so that
            # packets of a phase forwarded late are counted: what of the peer's "lost" the
            # forwarder explains.
            marks = [ph['_unsent0'] for ph in res['phases']]
            marks.append(res['fwd_final']['dropped'] if res['fwd_final'] else None)
            for i, ph in enumerate(res['phases']):
                if marks[i] is not None and marks[i + 1] is not None:
                    ph['fwd_tx_drops'] = marks[i + 1] - marks[i]
            res['fwd_queue'] = [ln.text for ln, _ in fwd.find_all(r'^(QUEUE|LCORE_TOTAL) ')]
        else:
            res['wakeup_lines_total'] = len(fwd.find_all(WAKEUP_RE))
        res['peer_rc'] = peer.stop()
    except h.HarnessError as e:
        res['error'] = str(e).split('\n')[0]
        res['tails'] = [p.tail(20) for p in procs]
        log('  ERROR %s %d B: %s' % (mode, size, res['error']))
        if env.verbose:
            for t in res['tails']:
                print(t)
    finally:
        stop_all(procs)
    return res


def rr_run(env, config, mode, secs, tag):
    label, lcores, cfg, queues = RR_CONFIGS[config]
    socks = [env.workdir.socket('ra'), env.workdir.socket('rb')]
    pp, fp = h.unique('xp'), h.unique('xf')
    deadline = secs + 60
    peer_argv = env.peer_argv(pp, socks, queues, [vp.phase('rr', secs=float(secs))], size=64,
                              expect='macswap', loss_ms=200, timeout=int(secs + 40),
                              linger=int(deadline), drain_ms=int(DRAIN_S * 1000),
                              **{'yield': True})
    vdevs = [env.fe_vdev('vnapi', s, index=i, queues=queues) for i, s in enumerate(socks)]
    nb_lcores = len(lcores.split(','))
    fwd_argv = env.fwd_argv(fp, lcores, vdevs, 'vnapi', cfg, ['--mode', mode], deadline)
    env.commands.setdefault('RR %s %s' % (config, mode), [peer_argv, fwd_argv])
    res = {'config': config, 'mode': mode, 'tag': tag, 'error': None}
    procs = []
    try:
        peer, fwd = env.start_pair(procs, peer_argv, pp, 'rr-%s-%s' % (config, mode), fwd_argv,
                                   fp, deadline, warm=True)
        lcs = list(range(nb_lcores))
        peer.wait_for(r'^PHASE 0 rr begin', 30, what='RR begin')
        a = Snap(fwd, fp, lcs)
        peer.wait_for(r'^PHASE 0 rr stop', secs + 30, what='RR stop')
        b = Snap(fwd, fp, lcs)
        res['peer'] = vp.phase_result(peer, 0, 30)
        res.update(window(a, b, fwd.pid, lcs))
        n = res['peer']['back']
        if n:
            res['cpu_us_per_txn'] = round(res['proc_cpu_s'] * 1e6 / n, 2)
            if 'napi_busy_s' in res:
                res['busy_us_per_txn'] = round(res['napi_busy_s'] * 1e6 / n, 3)
                res['poll_us_per_txn'] = round(res['napi_poll_s'] * 1e6 / n, 3)
            res['wakeups_per_txn'] = round(res.get('wakeups', 0) / n, 2)
        m = peer.wait_for(vp.RESULT_RE, 60, what='peer RESULT')
        res['peer_result'] = m.group(1) + ' ' + m.group(2)
        res['fwd_rc'] = fwd.stop()
        res['fwd_final'] = fwd_final(fwd)
        res['peer_rc'] = peer.stop()
    except h.HarnessError as e:
        res['error'] = str(e).split('\n')[0]
        res['tails'] = [p.tail(20) for p in procs]
        log('  ERROR rr %s %s: %s' % (config, mode, res['error']))
    finally:
        stop_all(procs)
    return res


def lat_stats(vals_ns):
    v = sorted(vals_ns)
    n = len(v)
    if not n:
        return {}

    def pct(p):
        return round(v[min(n - 1, int(n * p))] / 1e3, 1)
    return {'n': n, 'p50': pct(0.50), 'p99': pct(0.99), 'p999': pct(0.999),
            'max': round(v[-1] / 1e3, 1), 'over_1ms': sum(1 for x in v if x > 1000000),
            'over_5ms': sum(1 for x in v if x > 5000000)}


def latency_run(env, mode, packets, tag):
    """One receiver, one sender run of the sparse pair traffic; per-packet latencies."""
    label, kind, opts = LAT_MODES[mode]
    sock = env.workdir.socket('l')
    pp, fp = h.unique('lp'), h.unique('lf')
    dump = os.path.join(env.workdir.path, 'lat_%s_%s.txt' % (mode, tag))
    deadline = packets * 0.004 + 60
    # One sender for every receiver: only what it expects back differs.
    peer_argv = vp.argv(env.peer, [vp.phase('sparse', count=packets, **LAT_GAPS)],
                        ifaces=[sock], eal=env.eal(pp, '0@%d' % PEER_CPU), fe_mac=FE_MAC,
                        dump=dump, timeout=int(deadline - 20), linger=int(deadline),
                        expect='macswap' if kind == 'fwd' else 'routed')
    if kind == 'fwd':
        fwd_argv = env.fwd_argv(fp, '0@%d' % FWD_CPU, [env.fe_vdev('vnapi', sock)], 'vnapi',
                                '(0,0,0)', opts, deadline)
    else:
        fwd_argv = env.l3fwd_argv(fp, env.fe_vdev('vnapi', sock), 'vnapi')
    env.commands.setdefault('latency %s' % mode, [peer_argv, fwd_argv])
    res = {'mode': mode, 'tag': tag, 'error': None}
    procs = []
    try:
        peer, fwd = env.start_pair(procs, peer_argv, pp, mode, fwd_argv, fp, deadline)
        m = peer.wait_for(vp.RESULT_RE, deadline, what='peer RESULT')
        res['peer_result'] = m.group(1) + ' ' + m.group(2)
        res['fwd_rc'] = fwd.stop()
        if kind == 'fwd':
            res['fwd_queue'] = [ln.text for ln, _ in fwd.find_all(r'^(QUEUE|HIST|LCORE_TOTAL) ')]
        res['peer_rc'] = peer.stop()
        raw, net = [], []
        with open(dump) as f:
            for line in f:
                _, lat, nt = line.split()
                raw.append(int(lat))
                net.append(int(nt))
        res['raw'], res['net'] = raw, net
        res['raw_stats'], res['net_stats'] = lat_stats(raw), lat_stats(net)
    except (h.HarnessError, OSError, ValueError) as e:
        res['error'] = str(e).split('\n')[0]
        log('  ERROR latency %s: %s' % (mode, res['error']))
    finally:
        stop_all(procs)
    return res


def plot_latency(runs, modes, imgdir, quick):
    """CCDF of the round trip (raw and net of run-queue wait), all reps of a mode pooled."""
    data, plots = {}, {'raw': [], 'net': []}
    styles = ['lc rgb "#1f77b4"', 'lc rgb "#ff7f0e"', 'lc rgb "#2ca02c"', 'lc rgb "#d62728"',
              'lc rgb "#9467bd"']
    for i, mode in enumerate(modes):
        for kind in ('raw', 'net'):
            v = sorted(x for r in runs if r['mode'] == mode and not r['error'] for x in r[kind])
            if not v:
                continue
            n = len(v)
            name = 'lat_%s_%s.dat' % (kind, mode.replace('-', '_'))
            data[name] = ''.join('%g %g\n' % (v[k] / 1e3, (n - k) / n) for k in range(n))
            plots[kind].append('"{%s}" using 1:2 with lines lw 2 %s title "%s"' % (
                name.replace('.', '_'), styles[i % len(styles)], LAT_MODES[mode][0]))
    if not plots['raw']:
        return []
    out = os.path.join(imgdir, 'napi_latency_ccdf.png')
    lines = ['set terminal pngcairo noenhanced size 1120,480 font "DejaVu Sans,10"',
             'set output "%s"' % out,
             'set multiplot layout 1,2 title "Sparse pair traffic: round-trip latency '
             'distribution (fraction of packets slower than x)%s"' % (
                 ' (QUICK run)' if quick else ''),
             'set logscale xy', 'set xrange [5:*]', 'set yrange [1e-4:1]',
             'set xlabel "round trip (us, log)"', 'set ylabel "fraction slower (log)"',
             'set grid', 'set key bottom left font ",9"']
    for kind, title in (('raw', 'round trip'), ('net', 'net of run-queue wait and peer stalls')):
        lines += ['set title "%s"' % title, 'plot ' + ', '.join(plots[kind])]
    lines.append('unset multiplot')
    return ['napi_latency_ccdf.png'] if gnuplot('\n'.join(lines) + '\n', data) else []


def write_latency_doc(args, env, runs, modes, doc_path, imgs, meta):
    intro = ['**QUICK MODE: a development smoke run, not a result.**', ''] if args.quick else []
    intro += ['Paired sparse traffic, closed loop: single packets in pairs, each a random 0.1-1.9 ms '
          'after the previous came back, every second one only 35-665 us after it, %d packets '
          'per run, %d run(s) per receiver in alternating order (figures pooled over the runs). '
          'vnapi-fwd (`--fwd macswap`, one lcore on CPU %d) and l3fwd-power against the same '
          'sender, `app/vnapi-peer` (only `--expect` differs), on CPU %d. "Net" is the '
          'round trip minus the run-queue wait of both processes during it (schedstat) and '
          'minus the time the peer itself did not run (gaps over 100 us in its busy wait: '
          'host steal). '
          'Cause and fix: doc/napi.md, "Hybrid\'s latency tail".' % (
              args.lat_packets, args.reps, FWD_CPU, PEER_CPU)]
    L = ['| receiver | runs | p50 us | p99 us | p99.9 us | max us | > 1 ms | > 5 ms | '
          'net p50 | net p99 | net p99.9 | net > 1 ms | net > 5 ms |',
          '|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for mode in modes:
        ok = [r for r in runs if r['mode'] == mode and not r['error']]
        raw = lat_stats([x for r in ok for x in r['raw']])
        net = lat_stats([x for r in ok for x in r['net']])
        if not raw:
            L.append('| %s | 0 | – | – | – | – | – | – | – | – | – | – | – |' % LAT_MODES[mode][0])
            continue
        L.append('| %s | %d | %s | %s | %s | %s | %d | %d | %s | %s | %s | %d | %d |' % (
            LAT_MODES[mode][0], len(ok), raw['p50'], raw['p99'], raw['p999'], raw['max'],
            raw['over_1ms'], raw['over_5ms'], net['p50'], net['p99'], net['p999'],
            net['over_1ms'], net['over_5ms']))
    L += ['', 'Per run (net p99 us): ' + '; '.join(
        '%s %s' % (m, ', '.join(str(r['net_stats'].get('p99')) for r in runs
                                if r['mode'] == m and not r['error'])) for m in modes), '']
    for img in imgs:
        L += ['![%s](img/%s)' % (img[:-4], img), '']
    L += ['Commands (first run of each):', '']
    for k, (pa, fa) in env.commands.items():
        if k.startswith('latency '):
            L += ['- %s' % k, '  - sender: `%s`' % cmdline(pa), '  - receiver: `%s`' % cmdline(fa)]
    perfdoc.publish(dict(meta, section='napi-latency'), '\n'.join(L), '\n'.join(intro),
                    doc=doc_path)
    log('published section napi-latency (%s)' % perfdoc.paths(doc_path)[0])


# ---- plan and estimate -----------------------------------------------------------------------

def plan(args):
    sizes = [int(s) for s in args.sizes.split(',')]
    modes = args.modes.split(',')
    for m in modes:
        if m not in MODES:
            raise SystemExit('unknown mode %r (known: %s)' % (m, ', '.join(MODES)))
    rr_configs = args.rr_configs.split(',')
    for c in rr_configs:
        if c not in RR_CONFIGS:
            raise SystemExit('unknown RR config %r (known: %s)' % (c, ', '.join(RR_CONFIGS)))
    return sizes, modes, rr_configs


def extra_phases(size, args):
    """Idle and 100 pps (one packet per 10 ms) before the loads, for the targets (64 B)."""
    return [(0, args.secs), (100, args.secs)] if size == min(args.sizes_list) else []


def estimate(args, sizes, modes, rr_configs):
    t = 0.0
    if args.only in (None, 'stream'):
        t += len(sizes) * (RUN_OVERHEAD_S + args.max_secs + GAP_S + DRAIN_S)
        for size in sizes:
            nph = len(LOADS) + len(extra_phases(size, args))
            per = RUN_OVERHEAD_S + nph * (args.secs + GAP_S + DRAIN_S)
            t += args.reps * len(modes) * per
    if args.only in (None, 'rr'):
        t += args.reps * len(rr_configs) * len(RR_MODES) * (RUN_OVERHEAD_S + args.rr_secs +
                                                             DRAIN_S)
    if args.only in (None, 'latency'):
        t += args.reps * len(args.lat_modes.split(',')) * (RUN_OVERHEAD_S +
                                                            args.lat_packets * 0.0012)
    return t + 10  # plots, doc


# ---- aggregation ------------------------------------------------------------------------------

def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def stream_table(runs, modes, size, loads_pps, max_pps):
    """Rows: (mode, load label, per-field medians over reps)."""
    rows = []
    for mode in modes:
        rs = [r for r in runs if r['mode'] == mode and r['size'] == size]
        nph = max([len(r['phases']) for r in rs] + [0])
        for i in range(nph):
            phs = [r['phases'][i] for r in rs if i < len(r['phases'])]
            if not phs:
                continue
            rate = phs[0]['rate']
            row = {'mode': mode, 'rate': rate, 'n': len(phs), 'errors': [r['error'] for r in rs
                                                                         if r['error']]}
            if rate == 0:
                row['load'] = 'idle'
            elif rate == 100:
                row['load'] = '100 pps'
            else:
                row['load'] = '%g %%' % round(100.0 * rate / max_pps) if max_pps else str(rate)
                row['frac'] = rate / max_pps if max_pps else None
            for k, pk in (('offered_pps', 'offered_pps'), ('rx_pps', 'pps'), ('rx_mbps', 'mbps'),
                          ('lost', 'lost'), ('ring_full', 'refused'), ('p50_us', 'p50_us'),
                          ('p99_us', 'p99_us'), ('max_us', 'max_us'), ('over_5ms', 'over_5ms')):
                row[k] = med([p['peer'].get(pk) for p in phs])
            row['lost_sum'] = sum(p['peer'].get('lost', 0) for p in phs)
            drops = [p.get('fwd_tx_drops') for p in phs]
            row['fwd_tx_drops_sum'] = (sum(drops) if all(d is not None for d in drops)
                                       else None)
            row['unexplained_lost_sum'] = (
                sum(max(0, p['peer'].get('lost', 0) - p['fwd_tx_drops']) for p in phs)
                if row['fwd_tx_drops_sum'] is not None else None)
            row['ring_full_sum'] = sum(p['peer'].get('refused', 0) for p in phs)
            row['over_5ms_sum'] = sum(p['peer'].get('over_5ms', 0) for p in phs)
            row['max_us_max'] = max(p['peer'].get('max_us', 0) for p in phs)
            for k in ('pkts_per_wakeup', 'wakeups_per_s', 'lcore_cpu_pct', 'proc_cpu_pct',
                      'races_per_s', 'other_on_fwd_cpu_pct'):
                row[k] = med([p.get(k) for p in phs])
            row['wakeups_sum'] = sum(p.get('wakeups', 0) or 0 for p in phs)
            row['best_sample'] = max([max(p['rx_pps_samples'] or [0]) for p in phs] + [0])
            rows.append(row)
    return rows


def fmt(v, spec='%.1f', none='–'):
    if v is None:
        return none
    return spec % v


def kpps(v):
    return fmt(v / 1e3 if v is not None else None, '%.1f')


# ---- plots ------------------------------------------------------------------------------------

def ensure_gnuplot():
    if shutil.which('gnuplot'):
        return True
    log('gnuplot missing: apt-get install -y gnuplot-nox')
    r = subprocess.run(['apt-get', 'install', '-y', 'gnuplot-nox'], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        subprocess.run(['apt-get', 'update'], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        r = subprocess.run(['apt-get', 'install', '-y', 'gnuplot-nox'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        log('gnuplot install failed: %s' % r.stderr.strip()[-300:])
        return False
    return shutil.which('gnuplot') is not None


def gnuplot(script, datafiles):
    tmp = env_tmp()
    paths = {}
    for name, text in datafiles.items():
        p = os.path.join(tmp, name)
        with open(p, 'w') as f:
            f.write(text)
        paths[name] = p
    script = script.format(**{k.replace('.', '_'): v for k, v in paths.items()})
    r = subprocess.run(['gnuplot'], input=script, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        log('gnuplot failed: %s' % r.stderr.strip()[-500:])
    return r.returncode == 0


_TMP = None


def env_tmp():
    global _TMP
    if _TMP is None:
        import tempfile
        _TMP = tempfile.mkdtemp(prefix='napi-exp-plot-')
    return _TMP


MODE_STYLE = {
    'poll': 'lc rgb "#1f77b4" pt 7',
    'hybrid': 'lc rgb "#2ca02c" pt 5',
    'hybrid-nodor': 'lc rgb "#d62728" pt 9',
    'l3fwd-vnapi': 'lc rgb "#9467bd" pt 11',
    'l3fwd-virtio': 'lc rgb "#ff7f0e" pt 13',
    'hybrid-ei0': 'lc rgb "#17becf" pt 6',
    'hybrid-nodor-ei0': 'lc rgb "#8c564b" pt 8',
}


def plot_stream(tables, sizes, modes, imgdir, quick):
    """Three PNGs, each with one panel per frame size: throughput, packets per wakeup, CPU."""
    made = []
    title_sfx = ' (QUICK run)' if quick else ''
    figs = [
        ('napi_stream_throughput.png', 'rx_pps', 'forwarded throughput (Mpps, log)', 1e-6, True,
         'Throughput vs offered load' + title_sfx),
        ('napi_stream_pkts_per_wakeup.png', 'pkts_per_wakeup', 'packets per wakeup', 1.0, True,
         'Packets per wakeup vs offered load' + title_sfx),
        ('napi_stream_cpu.png', 'lcore_cpu_pct', 'forwarding lcore CPU (%)', 1.0, False,
         'CPU of the forwarding lcore vs offered load' + title_sfx),
    ]
    for fname, key, ylabel, scale, logy, title in figs:
        data = {}
        panels = []
        for size in sizes:
            rows = [r for r in tables[size] if r.get('frac')]
            plots = []
            for mode in modes:
                pts = [(100.0 * r['frac'], r[key]) for r in rows
                       if r['mode'] == mode and r[key] is not None and (not logy or r[key] > 0)]
                if not pts:
                    continue
                name = '%s_%d_%s.dat' % (key, size, mode.replace('-', '_'))
                data[name] = ''.join('%g %g\n' % (x, y * scale) for x, y in pts)
                plots.append('"{%s}" using 1:2 with linespoints lw 2 ps 1.3 %s title "%s"'
                             % (name.replace('.', '_'), MODE_STYLE.get(mode, ''),
                                MODES[mode][0]))
            if plots and key == 'rx_pps':
                offered = sorted({(100.0 * r['frac'], r['rate']) for r in rows})
                name = 'offered_%d.dat' % size
                data[name] = ''.join('%g %g\n' % (x, y * scale) for x, y in offered)
                plots.append('"{%s}" using 1:2 with lines dt 2 lc rgb "#777777" title "offered"'
                             % name.replace('.', '_'))
            if plots:
                panels.append((size, plots))
        if not panels:
            continue
        out = os.path.join(imgdir, fname)
        lines = ['set terminal pngcairo noenhanced size %d,480 font "DejaVu Sans,10"'
                 % (560 * len(panels)),
                 'set output "%s"' % out,
                 'set multiplot layout 1,%d title "%s"' % (len(panels), title),
                 'set logscale x', 'set xrange [0.7:140]', 'set xtics ("1" 1, "10" 10, '
                 '"50" 50, "100" 100)', 'set xlabel "offered load (% of the poll-mode maximum)"',
                 'set ylabel "%s"' % ylabel, 'set grid', 'set key top left font ",9"']
        if logy:
            lines.append('set logscale y')
        else:
            lines.append('unset logscale y')
            lines.append('set yrange [0:*]')
        for size, plots in panels:
            lines.append('set title "%d B frames"' % size)
            lines.append('plot ' + ', '.join(plots))
        lines.append('unset multiplot')
        if gnuplot('\n'.join(lines) + '\n', data):
            made.append(fname)
    return made


def plot_rr(rr_rows, imgdir, quick):
    if not rr_rows:
        return []
    data = ''
    for r in rr_rows:
        if r['p50_us'] is None:
            continue
        data += '"%s\\n%s" %g %g\n' % (r['config'], r['mode'], r['p50_us'], r['p99_us'])
    out = os.path.join(imgdir, 'napi_rr_latency.png')
    script = '\n'.join([
        'set terminal pngcairo noenhanced size 900,520 font "DejaVu Sans,10"',
        'set bmargin 5',
        'set output "%s"' % out,
        'set title "RR analogue: 64 B request/response latency (2 forwarder hops)%s"'
        % (' (QUICK run)' if quick else ''),
        'set style data histograms', 'set style histogram clustered gap 1',
        'set style fill solid 0.8 border -1', 'set boxwidth 0.9',
        'set logscale y', 'set yrange [1:*]', 'set ylabel "round-trip latency (us, log)"',
        'set grid ytics', 'set key top left',
        'plot "{rr_dat}" using 2:xtic(1) title "p50" lc rgb "#2ca02c", '
        '"" using 3 title "p99" lc rgb "#d62728"',
    ]) + '\n'
    return ['napi_rr_latency.png'] if gnuplot(script, {'rr.dat': data}) else []


# ---- the doc --------------------------------------------------------------------------------------

def cmdline(argv):
    """The command that measures again: @argv less --json FILE, which only keeps the runs."""
    argv = list(argv)
    for i, a in enumerate(argv):
        if a == '--json' and i + 1 < len(argv):
            del argv[i:i + 2]
            break
        if a.startswith('--json='):
            del argv[i]
            break
    return ' '.join(shlex.quote(os.path.relpath(a, TOP) if a.startswith(TOP + '/') else a)
                    for a in argv)


def targets(tables, sizes, rr):
    """[(target, measured, verdict)]."""
    out = []
    small = min(sizes)

    def row(size, mode, load):
        for r in tables.get(size, []):
            if r['mode'] == mode and r['load'] == load:
                return r
        return None

    for size in sizes:
        p, hy = row(size, 'poll', '100 %'), row(size, 'hybrid', '100 %')
        if p and hy and p['rx_pps'] and hy['rx_pps'] is not None:
            ratio = hy['rx_pps'] / p['rx_pps']
            out.append(('hybrid >= 95 %% of pure-poll throughput at 100 %% load (%d B)' % size,
                        '%.1f %% (%s vs %s kpps)' % (100 * ratio, kpps(hy['rx_pps']),
                                                    kpps(p['rx_pps'])),
                        'met' if ratio >= TARGET_THROUGHPUT_RATIO else 'NOT met'))
    idle = row(small, 'hybrid', 'idle')
    if idle:
        ok = idle['wakeups_sum'] == 0 and (idle['proc_cpu_pct'] or 0) < TARGET_IDLE_CPU_PCT
        out.append(('hybrid idle: no wakeup, < 0.5 % CPU',
                    '%d wakeups, %s %% CPU (process; lcore thread %s %%)'
                    % (idle['wakeups_sum'], fmt(idle['proc_cpu_pct'], '%.3f'),
                       fmt(idle['lcore_cpu_pct'], '%.3f')),
                    'met' if ok else 'NOT met'))
    sp = row(small, 'hybrid', '100 pps')
    if sp:
        for ref in ('l3fwd-virtio', 'l3fwd-vnapi'):
            r = row(small, ref, '100 pps')
            if r and r['proc_cpu_pct'] is not None and sp['proc_cpu_pct'] is not None:
                out.append(('one packet per 10 ms: hybrid uses less CPU than %s' % MODES[ref][0],
                            '%s %% vs %s %%' % (fmt(sp['proc_cpu_pct'], '%.2f'),
                                                fmt(r['proc_cpu_pct'], '%.2f')),
                            'met' if sp['proc_cpu_pct'] < r['proc_cpu_pct'] else 'NOT met'))
    for mode in ('hybrid', 'hybrid-nodor', 'hybrid-ei0', 'hybrid-nodor-ei0'):
        # Totals over every phase of the mode: a forwarder drop is counted from a phase's
        # begin to the next one's, so one burst can straddle a boundary.
        lost, drops, late, n = 0, 0, 0, 0
        for size in sizes:
            for r in tables.get(size, []):
                if r['mode'] != mode:
                    continue
                n += 1
                lost += r['lost_sum']
                drops += r['fwd_tx_drops_sum'] or 0
                if r['load'] == '100 pps':
                    late += r['over_5ms_sum']
        if not n:
            continue
        unexpl = max(0, lost - drops)
        out.append(('zero lost wakeups (%s)' % mode,
                    '%d packets never came back that the forwarder did not drop itself '
                    '(%d forwarder tx drops: the peer\'s ring was full); %d of the 100-pps '
                    'packets back after > 5 ms (a lost wakeup holds one until the next packet, '
                    '10 ms later; host steal can too)' % (unexpl, drops, late),
                    'no lost wakeup seen' if unexpl == 0 and late == 0 else
                    'SUSPECT (see the table)'))
    return out


def write_doc(args, env, results, doc_path, imgs, elapsed):
    sizes = args.sizes_list
    modes = args.modes_list
    tables = results['tables']
    rr_rows = results['rr_rows']
    intro = []
    if args.quick:
        intro += ['**QUICK MODE (%g s phases, %d rep): a development smoke run on a shared, busy '
                  'machine, not a result.** The full run is `devtools/napi_experiments.py` '
                  'without `--quick`, alone on the machine.' % (args.secs, args.reps), '']
    intro += ['Two Linux netdev threads (NAPI completion, TX NAPI), reproduced on vnapi: the UDP-stream '
              'experiment of "virtio_net: Disable interrupts if napi_complete_done rescheduled '
              'napi" (packets per interrupt with and without disarming on a race) and the '
              'TCP_RR affinity table of "virtio-net: transmit napi" (cycles per transaction '
              'with rx and tx work on the same or different CPUs).']
    L = []
    L += ['- Total run time: %.1f min' % (elapsed / 60),
          '- Driver: net_vnapi built in `%s`' % os.path.relpath(env.build, TOP),
          '- DPDK 22.11 (Debian); no PMU, CPU time from /proc',
          '- Processes: back end `app/vnapi-peer` (DPDK net_vhost, vhost-user server) '
          'on CPU %d; forwarder (vnapi-fwd or l3fwd-power, one lcore) on CPU %d; every process '
          '`--no-huge -m 512 --no-pci`, own `--file-prefix`, a deadline, ended by PID'
          % (PEER_CPU, FWD_CPU),
          '- Repetitions: %d per cell (modes in alternating order rep by rep); figures are '
          'medians over the reps; phases of %g s (RR: %g s)' % (args.reps, args.secs,
                                                                args.rr_secs), '']
    # ---- stream
    if tables:
        L += ['### UDP-stream analogue', '',
              'vnapi-peer sends Ethernet/IPv4/UDP frames of 64 B and 1472 B (the threads\' netperf '
              'message size, here as the frame length) at a fixed rate on one port; the '
              'forwarder sends them back (vnapi-fwd `--fwd macswap`, l3fwd-power routes them '
              'out of port 0). Offered loads are fractions of the **poll-mode maximum**: what '
              'vnapi-fwd `--mode poll` returned while the peer sent as fast as the ring took '
              'frames (median of 1-s samples; the peer and the forwarder share the machine, '
              'so this is the maximum of the pair, not of the forwarder alone).', '']
        for size in sizes:
            mx = results['max'].get(size) or {}
            L.append('- %d B: poll-mode maximum %s kpps (median of 1-s samples; best sample '
                     '%s kpps); loads %s kpps' % (
                         size, kpps(mx.get('median')), kpps(mx.get('best')),
                         ', '.join(kpps(x) for x in mx.get('loads', []))))
        L += ['',
              'Columns: offered and returned rate (peer), lost = taken by the forwarder\'s rx '
              'ring but not back within 200 ms of the phase\'s end (in parentheses, for '
              'vnapi-fwd: packets it dropped itself because the peer\'s rx ring was full, '
              'from lib/napi\'s tx_unsent, counted from the phase\'s begin to the next one\'s, '
              'so one burst can straddle a boundary), ring full = refused by the forwarder\'s rx ring '
              '(the peer frees them: the forwarder fell behind), packets per wakeup and '
              'wakeups/s (vnapi-fwd: lib/napi counters over the phase; l3fwd-power: its '
              '"waked up" log lines, packets per wakeup = returned packets / wakeups), CPU of '
              'the forwarding lcore\'s thread and of the whole forwarder process (run time '
              'from /proc/PID/task/*/schedstat over the phase), round-trip latency '
              'peer -> forwarder -> peer (1 us buckets), and the busy time of the '
              'forwarder\'s CPU that was not the forwarder (/proc/stat minus the above: other '
              'programs on the shared machine; a forwarder that gets less than its CPU falls '
              'behind, whatever its mode).', '',
              'Reading notes: pure poll holds its lcore at 100 % whatever the load, so it has '
              'no wakeups. l3fwd-power sleeps only after ~300 empty polls with '
              '`rte_delay_us(1)` between them and spins in those delays while traffic flows, '
              'so under load it rarely wakes and its packets per wakeup are huge; its CPU is '
              'what it spins. lib/napi\'s hybrid mode arms after 32 short rounds and sleeps '
              'when every queue is armed.', '']
        for size in sizes:
            L += ['#### %d B frames' % size, '',
                  '| mode | load | offered kpps | returned kpps | Mbit/s | lost (fwd tx drops) | '
                  'ring full | pkts/wakeup | wakeups/s | lcore CPU % | process CPU % | '
                  'p50 / p99 us | other on CPU ' + str(FWD_CPU) + ' % |',
                  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
            for r in tables[size]:
                lost = '%d' % r['lost_sum']
                if r['fwd_tx_drops_sum'] is not None:
                    lost += ' (%d)' % r['fwd_tx_drops_sum']
                L.append('| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s / %s | %s |' % (
                    r['mode'], r['load'], kpps(r['offered_pps']), kpps(r['rx_pps']),
                    fmt(r['rx_mbps'], '%.0f'), lost, r['ring_full_sum'],
                    fmt(r['pkts_per_wakeup'], '%.1f'), fmt(r['wakeups_per_s'], '%.0f'),
                    fmt(r['lcore_cpu_pct'], '%.2f'), fmt(r['proc_cpu_pct'], '%.2f'),
                    fmt(r['p50_us'], '%.0f'), fmt(r['p99_us'], '%.0f'),
                    fmt(r['other_on_fwd_cpu_pct'], '%.0f')))
                if r['errors']:
                    L[-1] += ' error: %s' % '; '.join(r['errors'])[:120]
            L.append('')
        if 'hybrid' in modes and 'hybrid-nodor' in modes:
            L += ['#### Before/after of the NAPI-completion patch: disarm on race (hybrid) or not (hybrid-nodor)',
                  '',
                  'The NAPI-completion thread (vhost-user back end without event idx, netperf UDP_STREAM 1472 B): '
                  'before 2.37 packets per interrupt, after 6.64, throughput received 4590 -> '
                  '6436 Mbit/s. Here, per load:', '',
                  '| size | load | pkts/wakeup before -> after | wakeups/s before -> after | '
                  'races/s before -> after | returned kpps before -> after | lcore CPU % '
                  'before -> after |', '|---|---|---|---|---|---|---|']
            for size in sizes:
                for b in tables[size]:
                    if b['mode'] != 'hybrid-nodor' or b['load'] == 'idle':
                        continue
                    a = next((r for r in tables[size] if r['mode'] == 'hybrid' and
                              r['load'] == b['load']), None)
                    if a is None:
                        continue
                    L.append('| %d | %s | %s -> %s | %s -> %s | %s -> %s | %s -> %s | %s -> %s |'
                             % (size, b['load'], fmt(b['pkts_per_wakeup'], '%.2f'),
                                fmt(a['pkts_per_wakeup'], '%.2f'), fmt(b['wakeups_per_s'], '%.0f'),
                                fmt(a['wakeups_per_s'], '%.0f'), fmt(b['races_per_s'], '%.0f'),
                                fmt(a['races_per_s'], '%.0f'), kpps(b['rx_pps']), kpps(a['rx_pps']),
                                fmt(b['lcore_cpu_pct'], '%.1f'), fmt(a['lcore_cpu_pct'], '%.1f')))
            L.append('')
        errs = [r for r in results['stream'] if r['error']]
        if errs:
            L.append('Failed runs: ' + '; '.join('%s %d B: %s' % (r['mode'], r['size'],
                                                                  r['error'][:160])
                                                 for r in errs))
            L.append('')
        for img in imgs:
            if img.startswith('napi_stream'):
                L += ['![%s](img/%s)' % (img[:-4], img), '']
    # ---- targets
    tg = targets(tables, sizes, rr_rows)
    if tg:
        L += ['### Targets', '', '| target | measured | verdict |', '|---|---|---|']
        for t, m, v in tg:
            L.append('| %s | %s | %s |' % (t, m, v))
        L += ['', 'Reference figures measured earlier on this VM for l3fwd-power on '
              'net_virtio_user: idle 0.5-1 % CPU (it wakes every 10 ms), 1-5 % at one packet '
              'per 10 ms (about 300 busy polls before it re-arms), wakeup latency ~200 us p50 '
              'after a long sleep and 45-60 us after a short one, 12.6 Mpps forwarded at 64 B '
              'full load (testpmd flowgen back end; vnapi-peer here both generates and checks, '
              'so the pair\'s maximum is lower).', '']
    # ---- RR
    if rr_rows:
        L += ['### RR analogue (the affinity table)', '',
              '64 B request/response, one transaction outstanding. Two ports: the request goes '
              'peer port 0 -> forwarder -> peer port 1, the peer answers at once, the response '
              'goes peer port 1 -> forwarder -> peer port 0; a transaction is both hops. '
              'vnapi-fwd transmits a packet on the tx queue of the lcore that received it, so '
              'the only way to put a port\'s rx and tx queues on different lcores is this '
              'two-port crossing: in **split**, lcore 0 polls port 0\'s rx queue and '
              'transmits on port 1, lcore 1 polls port 1\'s rx queue and transmits on port 0 '
              '(each port has 2 queue pairs because net_vnapi sets up queue pairs, so each '
              'lcore also holds an idle second rx queue); in **same**, lcore 0 does all of it '
              '(1 queue pair per port). The peer polls with `sched_yield()` after every empty '
              'sweep in every configuration.', '',
              '**Limitation (2 vCPUs):** the peer needs a CPU of its own, so "different lcores" '
              'cannot mean "different, otherwise idle CPUs" here. **split** puts lcore 1 on the '
              'peer\'s CPU 0, **split-1cpu** puts both lcores on CPU 1. Where two pollers share '
              'a CPU (poll mode in both split configurations) the scheduler time-slices them '
              'and every hop can wait for a time slice: those rows measure the scheduler, not '
              'cache-line traffic. Hybrid lcores sleep between packets, so the split rows in '
              'hybrid mode do measure the cross-lcore handoff (an eventfd wakeup per hop). The '
              'threads\' cost of cross-CPU cache traffic at equal wakeups would need a third '
              'CPU.', '',
              '| config | mode | transactions/s | p50 us | p99 us | max us | timeouts | '
              'forwarder CPU us/txn | lib/napi busy us/txn | wakeups/txn |',
              '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|']
        for r in rr_rows:
            L.append('| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |' % (
                r['config'], r['mode'], fmt(r['tps'], '%.0f'), fmt(r['p50_us'], '%.1f'),
                fmt(r['p99_us'], '%.1f'), fmt(r['max_us'], '%.0f'), r['timeouts'],
                fmt(r['cpu_us_per_txn'], '%.2f'), fmt(r['busy_us_per_txn'], '%.3f'),
                fmt(r['wakeups_per_txn'], '%.2f')) +
                (' error: %s' % '; '.join(r['errors'])[:120] if r['errors'] else ''))
        L += ['', 'Configurations: ' + '; '.join('**%s**: %s, `--lcores %s --config \'%s\'`'
                                                 % (c, RR_CONFIGS[c][0], RR_CONFIGS[c][1],
                                                    RR_CONFIGS[c][2])
                                                 for c in args.rr_configs_list) + '.',
              'Forwarder CPU us/txn: run time of all its threads (schedstat) over the window / '
              'transactions (poll mode burns its CPU whatever the rate). lib/napi busy us/txn: '
              'TSC time of the rounds that found packets, summed over lcores: the work itself.',
              '']
        for img in imgs:
            if img.startswith('napi_rr'):
                L += ['![%s](img/%s)' % (img[:-4], img), '']
    # ---- commands
    L += ['### Exact commands', '',
          'The first run of each kind, as started (from the checkout; sockets under a '
          'temporary directory, file prefixes unique per run, the plugin copied to a '
          'root-owned directory under /run/vnapi):', '']
    for k, (pa, fa) in env.commands.items():
        L += ['- %s' % k, '  - back end: `%s`' % cmdline(pa), '  - forwarder: `%s`' % cmdline(fa)]
    L += ['', 'Raw per-phase figures (JSON, every rep): `--json FILE` keeps them.', '']
    perfdoc.publish(dict(results['measurement'], section='napi-experiments'), '\n'.join(L),
                    '\n'.join(intro), doc=doc_path)
    log('published section napi-experiments (%s)' % perfdoc.paths(doc_path)[0])


def rr_table(rr_runs, configs):
    rows = []
    for c in configs:
        for mode in RR_MODES:
            rs = [r for r in rr_runs if r['config'] == c and r['mode'] == mode]
            if not rs:
                continue
            ok = [r for r in rs if not r['error']]
            row = {'config': c, 'mode': mode, 'errors': [r['error'] for r in rs if r['error']]}
            for k in ('tps', 'p50_us', 'p99_us', 'max_us'):
                row[k] = med([r['peer'].get(k) for r in ok])
            row['timeouts'] = sum(r['peer'].get('lost', 0) for r in ok)
            for k in ('cpu_us_per_txn', 'busy_us_per_txn', 'wakeups_per_txn', 'proc_cpu_pct'):
                row[k] = med([r.get(k) for r in ok])
            rows.append(row)
    return rows


# ---- main -----------------------------------------------------------------------------------------

def build(build_dir):
    if not os.path.exists(os.path.join(build_dir, 'build.ninja')):
        log('meson setup %s --werror' % build_dir)
        subprocess.run(['meson', 'setup', build_dir, '--werror'], cwd=TOP, check=True,
                       stdout=subprocess.DEVNULL)
    r = subprocess.run(['ninja', '-C', build_dir], cwd=TOP, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout[-3000:])
        raise SystemExit('build failed')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default=os.path.join(TOP, 'build-exp'),
                    help='build directory (default build-exp; set up and built if needed)')
    ap.add_argument('--quick', action='store_true',
                    help='development smoke run: 1.5 s phases, 1 rep')
    ap.add_argument('--reps', type=int, help='repetitions of every run (default 2; quick 1)')
    ap.add_argument('--secs', type=float, help='seconds per load phase (default 8; quick 1.5)')
    ap.add_argument('--max-secs', type=float, help='seconds of the max-finding run (default 8)')
    ap.add_argument('--rr-secs', type=float, help='seconds per RR run (default 10; quick 2)')
    ap.add_argument('--sizes', default='64,1472')
    ap.add_argument('--modes', default=','.join(DEFAULT_MODES),
                    help='stream modes (default %s; also: hybrid-ei0, hybrid-nodor-ei0)'
                    % ','.join(DEFAULT_MODES))
    ap.add_argument('--rr-configs', default=','.join(DEFAULT_RR_CONFIGS))
    ap.add_argument('--only', choices=['stream', 'rr', 'latency'])
    ap.add_argument('--lat-packets', type=int, default=2000,
                    help='latency: packets per run (default 2000)')
    ap.add_argument('--lat-modes', default=','.join(LAT_MODES),
                    help='latency receivers (default %s)' % ','.join(LAT_MODES))
    ap.add_argument('--json', help='write every run as JSON to this file')
    ap.add_argument('--doc', help='the page (default doc/performance.md; results in the '
                    'directory results next to it)')
    ap.add_argument('--no-doc', action='store_true')
    ap.add_argument('--estimate', action='store_true', help='print the plan and time, run nothing')
    ap.add_argument('--verbose', action='store_true', help='echo every process\'s output')
    ap.add_argument('--from-json', metavar='FILE',
                    help='measure nothing: write the doc and plots from a --json file of an '
                         'earlier run (same options)')
    args = ap.parse_args()
    args.reps = args.reps or (1 if args.quick else 2)
    args.secs = args.secs or (1.5 if args.quick else 8.0)
    args.max_secs = args.max_secs or (2.0 if args.quick else 8.0)
    args.rr_secs = args.rr_secs or (2.0 if args.quick else 10.0)
    sizes, modes, rr_configs = plan(args)
    args.sizes_list, args.modes_list, args.rr_configs_list = sizes, modes, rr_configs

    est = estimate(args, sizes, modes, rr_configs)
    print('Plan: stream %s x sizes %s x loads %s (+ idle, 100 pps at %d B), %d rep(s), %g s '
          'phases; RR %s x %s, %g s; estimated run time %.1f min'
          % (','.join(modes) if args.only != 'rr' else '-', sizes,
             ','.join('%g%%' % (100 * x) for x in LOADS), min(sizes), args.reps, args.secs,
             ','.join(rr_configs) if args.only != 'stream' else '-', ','.join(RR_MODES),
             args.rr_secs, est / 60), flush=True)
    if args.estimate:
        return 0
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        results = saved['results']
        for k in ('max', 'tables'):
            results[k] = {int(sz): v for sz, v in results[k].items()}
        env = Env(args)
        env.commands = saved['commands']
        elapsed = saved.get('elapsed_s', 0.0)
        if 'measurement' not in results and not args.no_doc:
            log('%s records no measurement (tree, date, machine): nothing is published'
                % args.from_json)
            args.no_doc = True
        return report(args, env, results, sizes, elapsed)
    if os.geteuid() != 0:
        raise SystemExit('needs root (vhost-user sockets, /run/vnapi)')
    if os.cpu_count() < 2:
        raise SystemExit('needs 2 CPUs')
    measured = perfdoc.measurement(
        'napi-latency' if args.only == 'latency' else 'napi-experiments',
        cmdline(['devtools/napi_experiments.py'] + sys.argv[1:]), build=os.path.abspath(args.build))
    build(os.path.abspath(args.build))
    env = Env(args)
    env.prepare()
    h.install_guards()
    t_start = time.monotonic()
    results = {'stream': [], 'rr': [], 'max': {}, 'tables': {}, 'rr_rows': [],
               'measurement': measured}
    try:
        if args.only in (None, 'stream'):
            for size in sizes:
                log('poll-mode maximum, %d B' % size)
                r = stream_run(env, 'poll', size, [('max', args.max_secs)], 'max')
                results['stream_max_run_%d' % size] = r
                if r['error'] or not r['phases']:
                    log('  cannot find the maximum for %d B: skipped' % size)
                    continue
                ph = r['phases'][0]
                samples = ph['rx_pps_samples'] or [ph['peer']['pps']]
                mx = statistics.median(samples)
                results['max'][size] = {'median': mx, 'best': max(samples),
                                        'samples': samples,
                                        'loads': [round(f * mx) for f in LOADS]}
                log('  max %.0f pps (best %.0f)' % (mx, max(samples)))
            for rep in range(args.reps):
                order = modes if rep % 2 == 0 else list(reversed(modes))
                for size in sizes:
                    if size not in results['max']:
                        continue
                    phases = extra_phases(size, args) + \
                        [(x, args.secs) for x in results['max'][size]['loads']]
                    for mode in order:
                        log('rep %d/%d %s %d B (%d phases)' % (rep + 1, args.reps, mode, size,
                                                              len(phases)))
                        r = stream_run(env, mode, size, phases, 'rep%d' % rep)
                        for ph in r['phases']:
                            log('  %-8s %8.0f -> %8.0f pps lost %-6d ppw %-7s wk/s %-8s '
                                'lcore %6.2f%% proc %6.2f%% p50 %s p99 %s us' % (
                                    ph['rate'], ph['peer']['offered_pps'], ph['peer']['pps'],
                                    ph['peer']['lost'], ph.get('pkts_per_wakeup'),
                                    ph.get('wakeups_per_s'), ph['lcore_cpu_pct'],
                                    ph['proc_cpu_pct'], ph['peer']['p50_us'],
                                    ph['peer']['p99_us']))
                        results['stream'].append(r)
            for size in sizes:
                if size in results['max']:
                    results['tables'][size] = stream_table(
                        results['stream'], modes, size, results['max'][size]['loads'],
                        results['max'][size]['median'])
        if args.only in (None, 'rr'):
            for rep in range(args.reps):
                order = rr_configs if rep % 2 == 0 else list(reversed(rr_configs))
                for c in order:
                    for mode in (RR_MODES if rep % 2 == 0 else list(reversed(RR_MODES))):
                        log('rep %d/%d RR %s %s' % (rep + 1, args.reps, c, mode))
                        r = rr_run(env, c, mode, args.rr_secs, 'rep%d' % rep)
                        if not r['error']:
                            log('  %.0f tps p50 %s p99 %s us, fwd CPU %s us/txn, busy %s us/txn,'
                                ' wakeups/txn %s' % (r['peer']['tps'], r['peer']['p50_us'],
                                                     r['peer']['p99_us'], r.get('cpu_us_per_txn'),
                                                     r.get('busy_us_per_txn'),
                                                     r.get('wakeups_per_txn')))
                        results['rr'].append(r)
            results['rr_rows'] = rr_table(results['rr'], rr_configs)
        if args.only in (None, 'latency'):
            lat_modes = args.lat_modes.split(',')
            for m in lat_modes:
                if m not in LAT_MODES:
                    raise SystemExit('unknown latency receiver %r' % m)
            results['latency'] = []
            for rep_i in range(args.reps):
                for mode in (lat_modes if rep_i % 2 == 0 else list(reversed(lat_modes))):
                    log('rep %d/%d latency %s' % (rep_i + 1, args.reps, mode))
                    r = latency_run(env, mode, args.lat_packets, 'rep%d' % rep_i)
                    if not r['error']:
                        log('  raw %s; net %s' % (r['raw_stats'], r['net_stats']))
                    results['latency'].append(r)
    finally:
        env.close()
    elapsed = time.monotonic() - t_start
    log('measurements done in %.1f min (estimate was %.1f)' % (elapsed / 60, est / 60))

    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'args': {k: v for k, v in vars(args).items()}, 'results': results,
                       'commands': env.commands, 'elapsed_s': elapsed,
                       'argv': sys.argv[1:]}, f, indent=1, default=str)
        log('wrote %s' % args.json)
    return report(args, env, results, sizes, elapsed)


def report(args, env, results, sizes, elapsed):
    for t, m, v in targets(results['tables'], sizes, results['rr_rows']):
        print('TARGET %s: %s -> %s' % (t, m, v))
    if args.no_doc:
        return 0
    imgdir = os.path.join(os.path.dirname(os.path.abspath(perfdoc.paths(args.doc)[0])), 'img')
    os.makedirs(imgdir, exist_ok=True)
    if results.get('latency'):
        lat_modes = args.lat_modes.split(',')
        imgs = plot_latency(results['latency'], lat_modes, imgdir, args.quick) \
            if ensure_gnuplot() else []
        write_latency_doc(args, env, results['latency'], lat_modes, args.doc, imgs,
                          results['measurement'])
        if args.only == 'latency':
            return 0
    imgs = []
    if ensure_gnuplot():
        if results['tables']:
            imgs += plot_stream(results['tables'], [s for s in sizes if s in results['tables']],
                                args.modes_list, imgdir, args.quick)
        imgs += plot_rr(results['rr_rows'], imgdir, args.quick)
    write_doc(args, env, results, args.doc, imgs, elapsed)
    return 0


if __name__ == '__main__':
    sys.exit(main())
