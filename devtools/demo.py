#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""What vnapi is for, in about 80 seconds: a port that polls at full speed under load, sleeps on
interrupts when traffic stops, and never loses a wakeup.

vnapi-fwd (app/vnapi-fwd, on lib/napi; --fwd io, one lcore on CPU 1) forwards on a net_vnapi port
(or, with --frontend virtio_user, DPDK's net_virtio_user) in poll, interrupt and hybrid mode, one
after the other, each through the same traffic from the back end, app/vnapi-peer (DPDK's
net_vhost, CPU 0): idle, sparse single frames about 1 ms apart, a burst at full rate (at most
--window frames in flight, so that no ring can overflow and every count is exact), idle again.
Then the burst once more for hybrid and for poll, in that order: the throughput the summary
compares is each one's mean over two bursts run poll, hybrid, hybrid, poll, so that the machine's
drift (this VM's vCPUs change speed within seconds) falls on both alike.

Per mode and phase: frames forwarded (the peer's sent = received, checked), Mpps, CPU % of the
forwarding lcore's thread (/proc/PID/task/TID/schedstat), wakeups per second and packets per
wakeup (lib/napi's counters, /napi/stats telemetry), the round trip p50/p99 in the sparse phase
(the peer's), and net_vnapi's lost-wakeup counter rx_q0_intr_unnotified_work (ethdev xstats
telemetry), which must stay 0. Then one line computed from the figures, and a PNG of CPU % and
packets per wakeup over time (python3-matplotlib).

Every process has a deadline and is ended by its PID; Ctrl-C ends them and removes the sockets.
Called by devtools/demo.sh (which installs and builds first); python3 standard library plus
matplotlib for the figure.
"""

import argparse
import json
import os
import re
import shutil
import signal
import sys
import time

from vnapitools import harness as h  # noqa: E402
from vnapitools import peer as vp  # noqa: E402
from vnapitools.procfs import system_busy  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER_CPU = 0
FWD_CPU = 1
MODES = ('poll', 'interrupt', 'hybrid')
# After MODES, the burst alone again, in this order: poll's bursts come first and last, hybrid's
# in between, and the summary compares their means.
RETAKES = ('hybrid', 'poll')
# (kind, seconds): the traffic of every mode, in order; each kind's phase of vnapi-peer below.
PHASES = (('idle', 4.0), ('sparse', 6.0), ('burst', 6.0), ('idle', 4.0))
QUICK_PHASES = (('idle', 1.0), ('sparse', 1.5), ('burst', 1.5), ('idle', 1.0))
PEER_PHASE = {'idle': 'idle', 'sparse': 'sparse', 'burst': 'closed'}
SPARSE_GAP_US = (500, 1500)  # single frames about 1 ms apart
SAMPLE_S = 0.25            # the time series' period
RUN_OVERHEAD_S = 3.0       # start of both processes, link, warm-up, settle, stop (estimate)
LOST_XSTAT = 'rx_q0_intr_unnotified_work'
# The summary's words: hybrid "reaches" poll mode's throughput when its burst-phase Mpps
# is at least REACH of poll's (each the mean of two bursts, run poll, hybrid, hybrid, poll:
# what the noise of runs seconds apart leaves), and has
# interrupt mode's idle CPU when it is within IDLE_MARGIN_PCT points of it.
REACH = 0.95
IDLE_MARGIN_PCT = 1.0
# When hybrid misses REACH, the summary names other programs' share of the forwarder's CPU
# in hybrid's burst phase from this much on.
OTHER_NOTE_PCT = 10.0
# virtio_user has no re-check at arming: lib/napi needs a housekeeping timeout to bound a lost
# wakeup (doc/napi.md).
VIRTIO_SLEEP_TIMEOUT_MS = 10
COLORS = {'poll': '#d62728', 'interrupt': '#1f77b4', 'hybrid': '#2ca02c'}
STYLES = {'poll': '-', 'interrupt': '--', 'hybrid': '-'}   # interrupt dashed: it often overlaps
PHASE_SHADE = {'idle': '#f2f2f2', 'sparse': '#dbe9f6', 'burst': '#fde0c5'}


class Progress:
    """One status line: rewritten in place on a terminal; elsewhere (a log) a line at each
    phase and at most every PLAIN_EVERY_S seconds."""

    PLAIN_EVERY_S = 2.0

    def __init__(self, total_s):
        self.tty = sys.stdout.isatty()
        self.end = time.monotonic() + total_s
        self.printed = 0.0

    def show(self, text, force=False):
        now = time.monotonic()
        line = '%s | about %d s left in the demo' % (text, max(0, self.end - now) + 0.5)
        if self.tty:
            sys.stdout.write('\r\033[K' + line)
            sys.stdout.flush()
        elif force or now - self.printed >= self.PLAIN_EVERY_S:
            print(line, flush=True)
            self.printed = now

    def done(self):
        if self.tty:
            sys.stdout.write('\r\033[K')
            sys.stdout.flush()

    def note(self, text):
        self.done()
        print(text, flush=True)


def quiet_harness(demo, verbose):
    """The harness logs every start (with its command line) and every signal it sends; the
    demo shows its command lines once and keeps the signals (the PIDs it ends), on lines of
    their own so that they do not break the progress line."""
    def log(msg):
        if verbose or ': start: ' not in msg:
            demo.note('  ' + msg)
    h.log = log


def rm_runtime(prefix):
    def fn():
        shutil.rmtree(os.path.join('/var/run/dpdk', prefix), ignore_errors=True)
    return fn


def next_line(proc, pos, rx, timeout):
    """The first line at or after pos matching rx, waiting at most timeout s.
    Returns (next position, match or None); raises ProcessDied if the process is gone."""
    end = time.monotonic() + timeout
    with proc.cond:
        while True:
            while pos < len(proc.lines):
                m = rx.search(proc.lines[pos].text)
                pos += 1
                if m:
                    return pos, m
            if not proc.alive():
                raise h.ProcessDied('%s exited (rc=%s)\n%s' % (proc.name, proc.proc.returncode,
                                                              proc.tail(20)))
            left = end - time.monotonic()
            if left <= 0:
                return pos, None
            proc.cond.wait(left)


class Snap:
    """The forwarder at one instant: the lcore thread's CPU time, lib/napi's counters, the
    driver's lost-wakeup counter."""

    def __init__(self, fwd, prefix, xstats=False):
        self.t = time.monotonic()
        try:
            with open('/proc/%d/task/%d/schedstat' % (fwd.pid, fwd.pid)) as f:
                self.cpu_ns = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            self.cpu_ns = None
        try:
            q = h.telemetry(prefix, '/napi/stats,0')['/napi/stats']['q0_0']
            self.packets = q['packets']
            self.wakeups = q['wakeups']
            self.wakeup_packets = q['wakeup_packets']
            self.race_disarms = q['race_disarms']
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            # gone or stopping (its telemetry answers null then)
            self.packets = self.wakeups = self.wakeup_packets = self.race_disarms = None
        try:
            self.cpu1 = system_busy().get(FWD_CPU)
        except OSError:
            self.cpu1 = None
        self.lost = None
        if xstats:
            try:
                x = h.telemetry(prefix, '/ethdev/xstats,0')['/ethdev/xstats']
                self.lost = x.get(LOST_XSTAT)
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                pass


def delta(a, b):
    """Forwarder figures between two snapshots."""
    dt = b.t - a.t
    r = {'dt': dt, 'cpu_pct': None, 'wakeups_s': None, 'pkts_per_wakeup': None}
    if a.cpu_ns is not None and b.cpu_ns is not None and dt > 0:
        r['cpu_pct'] = 100.0 * (b.cpu_ns - a.cpu_ns) / 1e9 / dt
    if a.wakeups is not None and b.wakeups is not None and dt > 0:
        w = b.wakeups - a.wakeups
        r['wakeups'] = w
        r['wakeups_s'] = w / dt
        if w:
            r['pkts_per_wakeup'] = (b.wakeup_packets - a.wakeup_packets) / w
        r['race_disarms'] = b.race_disarms - a.race_disarms
    if a.lost is not None and b.lost is not None:
        r['lost'] = b.lost - a.lost
    r['other_pct'] = None
    if a.cpu1 and b.cpu1 and b.cpu1[1] > a.cpu1[1] and r['cpu_pct'] is not None:
        busy = 100.0 * (b.cpu1[0] - a.cpu1[0]) / (b.cpu1[1] - a.cpu1[1])
        r['other_pct'] = max(0.0, busy - r['cpu_pct'])
    return r


class Demo:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.peer_bin = vp.build_binary(self.build)
        self.fwd_bin = os.path.join(self.build, 'app', 'vnapi-fwd', 'vnapi-fwd')
        self.phases = QUICK_PHASES if args.quick else PHASES
        self.procs = []
        self.failures = []
        self.plugin = None
        self.workdir = None
        self.progress = None
        self.t_start = time.monotonic()
        self.loadavg = (0.0, 0.0, 0.0)

    def note(self, text):
        if self.progress is not None:
            self.progress.note(text)
        else:
            print(text, flush=True)

    def eal(self, prefix, cpu):
        return ['--no-huge', '-m', '512', '--no-pci', '--lcores', '0@%d' % cpu,
                '--file-prefix', prefix, '--log-level=lib.eal:notice']

    def start(self, name, argv, prefix, deadline):
        p = h.DpdkProcess(name, argv, deadline=deadline, cleanup=[rm_runtime(prefix)],
                          echo=self.args.verbose)
        self.procs.append(p)
        return p.start()

    def stop_all(self):
        for p in reversed(self.procs):
            try:
                p.stop()
            except Exception as e:  # never leave the other one running
                print('demo: stopping %s: %s' % (p.name, e), file=sys.stderr)
        self.procs = []

    def run_mode(self, mode, k, progress, own=None):
        """One run of vnapi-fwd in @mode through the phases (@own: [(kind, secs)], default
        the demo's), run @k of them all."""
        own = own or self.phases
        fe = self.args.frontend
        sock = self.workdir.socket('demo')
        pp, fp = h.unique('dp'), h.unique('df')
        total = sum(s for _, s in own)
        deadline = total + 90
        phases = [vp.phase(PEER_PHASE[kind], secs=float(secs),
                           gap=SPARSE_GAP_US if kind == 'sparse' else None,
                           window=self.args.window if kind == 'burst' else None)
                  for kind, secs in own]
        peer_argv = vp.argv(self.peer_bin, phases, ifaces=[sock], eal=self.eal(pp, PEER_CPU),
                            warmup_resend_ms=100, settle_ms=300, drain_ms=0,
                            timeout=int(total + 60), linger=int(deadline))
        fwd_argv = [self.fwd_bin] + self.eal(fp, FWD_CPU)
        if fe == 'vnapi':
            fwd_argv += ['-d', self.plugin, '--vdev', 'net_vnapi0,path=%s' % sock]
        else:
            fwd_argv += ['--vdev', 'net_virtio_user0,path=%s' % sock]
        fwd_argv += ['--', '--config', '(0,0,0)', '--fwd', 'io', '--mode', mode,
                     '--duration', str(int(deadline))]
        if fe == 'virtio_user' and mode != 'poll':
            fwd_argv += ['--sleep-timeout-ms', str(VIRTIO_SLEEP_TIMEOUT_MS)]
        if k == 0:
            progress.note('demo: back end: %s\ndemo: forwarder: %s'
                          % (' '.join(peer_argv), ' '.join(fwd_argv)))
        tag = '[%d/%d %s]' % (k + 1, len(MODES) + len(RETAKES), mode)
        res = {'mode': mode, 'phases': [], 'series': []}
        try:
            progress.show('%s starting the back end and vnapi-fwd' % tag, force=True)
            peer = self.start('peer', peer_argv, pp, deadline)
            peer.wait_for(r'^READY', 30, what='back end READY')
            fwd = self.start('vnapi-fwd-%s' % mode, fwd_argv, fp, deadline)
            peer.wait_for(r'^LINK up', 30, what='link up')
            m = peer.wait_for(r'^WARMUP back .*sent=(\d+)', 30, what='warm-up frame back')
            warm_sent = int(m.group(1))
            rx = re.compile(r'^(?:PHASE (\d+) (\w+) (begin|stop|result)(.*)|RESULT: (\S+)(.*))')
            pos, cur, begin, t0 = 0, None, None, None
            next_sample = time.monotonic()
            last = None
            while True:
                pos, m = next_line(peer, pos, rx, max(0.0, next_sample - time.monotonic()))
                if m is None:
                    s = Snap(fwd, fp)
                    if last is not None and t0 is not None:
                        d = delta(last, s)
                        d['t'] = s.t - t0
                        res['series'].append(d)
                    last = s
                    # A slow telemetry answer (loaded machine) must not make samples pile up.
                    next_sample = max(next_sample + SAMPLE_S, time.monotonic())
                    if cur is not None:
                        kind, secs = own[cur]
                        progress.show('%s phase %d/%d %-6s %4.1f s left in the phase'
                                      % (tag, cur + 1, len(own), kind,
                                         max(0.0, secs - (time.monotonic() - begin.t))))
                    continue
                if m.group(5):
                    res['peer_result'] = m.group(5) + m.group(6)
                    break
                i, what = int(m.group(1)), m.group(3)
                kind = own[i][0]
                if what == 'begin':
                    begin = Snap(fwd, fp, xstats=True)
                    if t0 is None:
                        t0 = begin.t
                        last = begin
                        next_sample = begin.t + SAMPLE_S
                    cur = i
                    progress.show('%s phase %d/%d %-6s %4.1f s left in the phase'
                                  % (tag, i + 1, len(own), kind, own[i][1]),
                                  force=True)
                elif what == 'stop':
                    stop = Snap(fwd, fp, xstats=True)
                    ph = {'kind': kind, 't0': begin.t - t0, 't1': stop.t - t0}
                    ph.update(delta(begin, stop))
                    res['phases'].append(ph)
                    cur = None
                else:
                    p = vp.parse(m.string)
                    p['mpps'] = p['pps'] / 1e6
                    res['phases'][i]['peer'] = p
            end = Snap(fwd, fp, xstats=True)
            res['lost_total'] = end.lost
            progress.show('%s stopping vnapi-fwd (pid %d)' % (tag, fwd.pid), force=True)
            res['fwd_rc'] = fwd.stop()
            fin = fwd.find_all(r'^FINAL (.*)')
            res['fwd_final'] = h.parse_kv(fin[-1][1].group(1)) if fin else None
            res['peer_rc'] = peer.stop()
            res['warm_sent'] = warm_sent
        except h.HarnessError as e:
            res['error'] = str(e)
        finally:
            self.stop_all()
        self.check(res)
        return res

    def check(self, res):
        """Exact counts in every phase, nothing dropped, no lost wakeup."""
        mode = res['mode']

        def fail(msg):
            self.failures.append('%s: %s' % (mode, msg))

        if res.get('error'):
            fail(res['error'].split('\n')[0])
            return
        if not res.get('peer_result', '').startswith('PASS'):
            fail('back end: RESULT %s' % res.get('peer_result'))
        sent = 0
        for i, ph in enumerate(res['phases']):
            p = ph.get('peer', {})
            sent += p.get('sent', 0)
            wrong = vp.exact(p) + (['rx=%s' % p.get('rx')] if ph['kind'] == 'idle' and
                                   p.get('rx') != 0 else [])
            if wrong:
                fail('phase %d %s: sent %s, back %s, %s'
                     % (i + 1, ph['kind'], p.get('sent'), p.get('back'), ', '.join(wrong)))
            # vnapi-fwd runs with no wakeup timeout; lib/napi's disarms right after arming
            # (work raced the arming) are the driver's raced disarms, never counted as
            # lost: a wait that ended without its wakeup is a lost one, and none may be.
            if ph.get('lost'):
                fail('phase %d %s: %s = %d (lost wakeups)'
                     % (i + 1, ph['kind'], LOST_XSTAT, ph['lost']))
        fin = res.get('fwd_final')
        want = sent + res.get('warm_sent', 0)
        if fin is None:
            fail('vnapi-fwd printed no FINAL line (exit status %s)' % res.get('fwd_rc'))
        elif not (fin['rx'] == fin['tx'] == want and fin['dropped'] == 0):
            fail('vnapi-fwd FINAL rx=%d tx=%d dropped=%d, the back end sent %d'
                 % (fin['rx'], fin['tx'], fin['dropped'], want))
        if self.args.frontend == 'vnapi':
            if res.get('lost_total') != 0:
                fail('%s = %s at the end (lost wakeups)' % (LOST_XSTAT, res.get('lost_total')))

    # ---- output ----

    def table(self, results):
        fe = 'net_' + self.args.frontend
        L = ['', 'vnapi-fwd --fwd io on %s (one lcore on CPU %d), back end net_vhost '
             '(app/vnapi-peer, CPU %d), 64 B frames' % (fe, FWD_CPU, PEER_CPU)]
        hdr = ('%-10s %-6s %5s %12s %7s %7s %10s %8s %15s %17s %7s'
               % ('mode', 'phase', 's', 'frames sent', 'Mpps', 'CPU %', 'wakeups/s',
                  'pkts/wk', 'RTT p50/p99 us', 'unnotified/races', 'other %'))
        L += [hdr, '-' * len(hdr)]
        for r in results:
            label = r.get('label', r['mode'])
            if self.args.frontend == 'virtio_user' and r['mode'] == 'hybrid':
                label = label.replace('hybrid', 'hybrid*')
            if r.get('error'):
                L.append('%-10s FAILED: %s' % (label, r['error'].split('\n')[0]))
                continue
            for ph in r['phases']:
                p = ph.get('peer', {})
                ok = p.get('sent') == p.get('back')
                frames = '%d%s' % (p.get('sent', 0), '' if ok else ' (%s back)' % p.get('back'))
                rtt = ('%.0f / %.0f' % (p['p50_us'], p['p99_us'])
                       if ph['kind'] == 'sparse' and p.get('back') else '-')
                races = ph.get('race_disarms')
                if self.args.frontend == 'vnapi':
                    lost = '%s / %s' % ('?' if ph.get('lost') is None else ph['lost'], races)
                else:
                    lost = 'n/a / %s' % races
                other = '-' if ph.get('other_pct') is None else '%.0f' % ph['other_pct']
                L.append('%-10s %-6s %5.1f %12s %7.3f %7.1f %10.0f %8s %15s %17s %7s' % (
                    label, ph['kind'], p.get('secs', 0.0), frames, p.get('mpps', 0.0),
                    ph['cpu_pct'] if ph['cpu_pct'] is not None else float('nan'),
                    ph['wakeups_s'] if ph['wakeups_s'] is not None else float('nan'),
                    '%.1f' % ph['pkts_per_wakeup'] if ph['pkts_per_wakeup'] else '-',
                    rtt, lost, other))
        L += ['',
              'frames sent: taken by vnapi-fwd\'s rx ring and all back (checked: sent = '
              'received in every phase, vnapi-fwd FINAL rx = tx, 0 dropped); Mpps: frames '
              'back / phase time; CPU %%: the forwarding lcore\'s thread; wakeups/s, pkts/wk: '
              'lib/napi (/napi/stats); RTT: round trip back end -> vnapi-fwd -> back end; '
              'other %%: CPU %d busy with anything but the forwarding lcore (other programs, '
              'the kernel: the CPU the forwarder did not get).' % FWD_CPU]
        if self.args.frontend == 'vnapi':
            L += ['unnotified: net_vnapi\'s lost-wakeup detector %s over the phase (waits '
                  'that ended with work in the ring and no notification, none arriving late '
                  'either): must be 0; races: lib/napi\'s disarms right after arming because '
                  'work came in (no sleep; the driver counts them apart).' % LOST_XSTAT,
                  'vnapi-fwd runs with no wakeup timeout: a lost wakeup would also leave '
                  'frames in the ring for good and break the exact counts.']
        else:
            L += ['unnotified: n/a, net_virtio_user has no lost-wakeup detector (and no '
                  're-check at arming: vnapi-fwd sleeps at most %d ms, --sleep-timeout-ms, so '
                  'that a lost wakeup costs at most that); races: lib/napi\'s.'
                  % VIRTIO_SLEEP_TIMEOUT_MS,
                  '* net_virtio_user has no hybrid mode of its own: this is lib/napi\'s hybrid '
                  'scheduling on top of its plain rx interrupts.']
        return '\n'.join(L)

    def summary(self, results, retakes):
        """One sentence from the measured figures."""
        by = {r['mode']: r for r in results if not r.get('error') and r['phases']}
        again = [r for r in retakes if not r.get('error') and r['phases']]

        def fig(mode, kind, key, sub=None, runs=None):
            v = []
            for r in runs if runs is not None else [by.get(mode)]:
                for ph in r['phases'] if r is not None else ():
                    if ph['kind'] != kind:
                        continue
                    x = ph.get('peer', {}).get(key) if sub == 'peer' else ph.get(key)
                    if x is not None:
                        v.append(x)
            return sum(v) / len(v) if v else None

        need = ('poll', 'interrupt', 'hybrid')
        if any(m not in by for m in need):
            return 'summary: not every mode ran (%s), nothing to compare' % ', '.join(sorted(by))
        # Poll's and hybrid's bursts: the mean of the first run's and the retake's.
        b = {m: fig(m, 'burst', 'mpps', 'peer',
                    [by[m]] + [r for r in again if r['mode'] == m]) for m in need}
        both = all(any(r['mode'] == m for r in again) for m in RETAKES)
        idle = {m: fig(m, 'idle', 'cpu_pct') for m in need}
        p99 = {m: fig(m, 'sparse', 'p99_us', 'peer') for m in need}
        ratio = b['hybrid'] / b['poll'] if b['poll'] else None
        fast = ratio is not None and ratio >= REACH
        calm = idle['hybrid'] <= idle['interrupt'] + IDLE_MARGIN_PCT
        parts = ['hybrid forwarded %.2f Mpps under full load (poll %.2f, %s of it%s; interrupt '
                 '%.2f) and used %.1f %% of its CPU idle (poll %.1f %%, interrupt %.1f %%); '
                 'sparse p99 %.0f us (interrupt %.0f, poll %.0f)'
                 % (b['hybrid'], b['poll'], 'n/a' if ratio is None else '%.0f %%' % (100 * ratio),
                    ', means of the bursts run poll, hybrid, hybrid, poll' if both else '',
                    b['interrupt'], idle['hybrid'], idle['poll'], idle['interrupt'],
                    p99['hybrid'], p99['interrupt'], p99['poll'])]
        starved = fig('poll', 'burst', 'cpu_pct')
        if starved is not None and starved < 90.0:
            parts.append('poll mode got only %.0f %% of CPU %d under load: other programs were '
                         'running (load average %.1f), so its figures are low'
                         % (starved, FWD_CPU, self.loadavg[0]))
        other = fig('hybrid', 'burst', 'other_pct')
        if not fast and other is not None and other >= OTHER_NOTE_PCT:
            parts.append('other programs took %.0f %% of CPU %d during hybrid\'s burst (a '
                         'sleeping forwarder gives the CPU up to them, a polling one keeps it): '
                         'compare on a quiet machine' % (other, FWD_CPU))
        if fast and calm:
            verdict = 'poll mode\'s throughput at full load and interrupt mode\'s CPU at idle'
        elif fast:
            verdict = 'poll mode\'s throughput at full load, but not interrupt mode\'s idle CPU'
        elif calm:
            verdict = ('interrupt mode\'s idle CPU, but below %.0f %% of poll mode\'s '
                       'throughput in this run' % (100 * REACH))
        else:
            verdict = 'neither poll\'s throughput nor interrupt mode\'s idle CPU in this run'
        n = sum(len(r['phases']) for r in list(by.values()) + again)
        if self.failures:
            parts.append('checks FAILED (below)')
        elif self.args.frontend == 'vnapi':
            lost = sum(ph.get('lost') or 0 for r in list(by.values()) + again
                       for ph in r['phases'])
            parts.append('no wakeup lost in %d phases (every frame back with no wakeup '
                         'timeout; the driver\'s detector read %d)' % (n, lost))
        else:
            parts.append('every frame back in %d phases' % n)
        return 'summary: hybrid = %s: %s.' % (verdict, '; '.join(parts))

    def plot(self, results, path):
        try:
            import matplotlib
            matplotlib.use('Agg')
            import matplotlib.pyplot as plt
        except ImportError:
            print('demo: python3-matplotlib is not installed (devtools/setup.sh installs it): '
                  'no figure', file=sys.stderr)
            return None
        ok = [r for r in results if not r.get('error') and r['phases']]
        if not ok:
            return None
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.4), sharex=True)
        ref = ok[0]['phases']
        for ax in (ax1, ax2):
            for ph in ref:
                ax.axvspan(ph['t0'], ph['t1'], color=PHASE_SHADE.get(ph['kind'], '#eeeeee'),
                           zorder=0)
        for ph in ref:
            ax1.text((ph['t0'] + ph['t1']) / 2, 1.02, ph['kind'], ha='center', va='bottom',
                     transform=ax1.get_xaxis_transform(), fontsize=9)
        for r in ok:
            label = r['mode'] if r['mode'] != 'hybrid' or self.args.frontend == 'vnapi' \
                else 'hybrid (lib/napi)'
            t = [s['t'] for s in r['series']]
            ax1.plot(t, [s['cpu_pct'] for s in r['series']], color=COLORS[r['mode']],
                     ls=STYLES[r['mode']], label=label, lw=1.6)
            pts = [(s['t'], s['pkts_per_wakeup']) for s in r['series'] if s['pkts_per_wakeup']]
            if pts:
                ax2.plot([a for a, _ in pts], [b for _, b in pts], color=COLORS[r['mode']],
                         ls=STYLES[r['mode']], marker='.', ms=4, lw=1.2, label=label)
            else:
                ax2.plot([], [], color=COLORS[r['mode']], label='%s: no wakeups' % label)
        ax1.set_ylabel('forwarding lcore CPU %')
        ax1.set_ylim(-3, 105)
        ax1.legend(loc='center left', fontsize=8)
        ax2.set_yscale('log')
        ax2.set_ylabel('packets per wakeup')
        ax2.set_xlabel('seconds since the first phase began (%d ms samples)'
                       % (SAMPLE_S * 1000))
        ax2.legend(loc='upper left', fontsize=8)
        fig.suptitle('vnapi-fwd on net_%s: the same traffic in poll, interrupt and hybrid mode'
                     % self.args.frontend, fontsize=11)
        fig.tight_layout()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        return path

    def run(self):
        for p in (self.peer_bin, self.fwd_bin):
            if not os.path.exists(p):
                raise SystemExit('demo: %s not found: build first (devtools/build.sh %s)'
                                 % (p, self.build))
        if self.args.frontend == 'vnapi':
            src = os.path.join(self.build, 'drivers', 'librte_net_vnapi.so')
            if not os.path.exists(src):
                raise SystemExit('demo: %s not found: build first' % src)
            self.plugin = h.prepare_plugin(src)
        per_mode = sum(s for _, s in self.phases) + RUN_OVERHEAD_S
        burst = [p for p in self.phases if p[0] == 'burst']
        progress = Progress(per_mode * len(MODES) +
                            (sum(s for _, s in burst) + RUN_OVERHEAD_S) * len(RETAKES))
        self.progress = progress
        progress.note('demo: vnapi-fwd on net_%s in %s mode, each through %s%s; then the '
                      'burst again in %s mode'
                      % (self.args.frontend, ', '.join(MODES),
                         ', '.join('%s %g s' % p for p in self.phases),
                         ' (--quick)' if self.args.quick else '', ', '.join(RETAKES)))
        self.workdir = h.Workdir('demo')
        results, retakes = [], []
        runs = [(m, None, results) for m in MODES] + [(m, burst, retakes) for m in RETAKES]
        try:
            for k, (mode, own, into) in enumerate(runs):
                into.append(self.run_mode(mode, k, progress, own))
                if into[-1].get('peer_result', '').startswith('FAIL code=7'):
                    raise KeyboardInterrupt  # the back end was interrupted: so are we
        finally:
            self.stop_all()
            self.workdir.close()
            progress.done()
        self.loadavg = os.getloadavg()
        saved = os.path.splitext(self.args.png)[0] + '.json'
        os.makedirs(os.path.dirname(saved), exist_ok=True)
        with open(saved, 'w') as f:
            json.dump({'frontend': self.args.frontend, 'failures': self.failures,
                       'loadavg': self.loadavg, 'results': results, 'retakes': retakes},
                      f, indent=1)
        return self.report(results, saved, retakes)

    def report(self, results, saved, retakes):
        print(self.table(results + [dict(r, label=r['mode'] + ' #2') for r in retakes]))
        print()
        print(self.summary(results, retakes))
        png = self.plot(results, self.args.png)
        if png:
            print('figure: %s' % png)
        print('figures: %s' % saved)
        if not self.args.from_json:
            print('demo: took %.0f s' % (time.monotonic() - self.t_start))
        if self.failures:
            print('\ndemo: FAILED checks:', file=sys.stderr)
            for f in self.failures:
                print('  ' + f, file=sys.stderr)
            return 1
        print('demo: every check held: exact counts in every phase, vnapi-fwd dropped '
              'nothing%s' % (', no lost wakeup' if self.args.frontend == 'vnapi' else ''))
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(TOP, 'build'))
    ap.add_argument('--frontend', choices=('vnapi', 'virtio_user'), default='vnapi')
    ap.add_argument('--quick', action='store_true', help='shorter phases (under 30 s in all)')
    ap.add_argument('--window', type=int, default=256,
                    help='burst: frames in flight at most (default 256, 32..1024)')
    ap.add_argument('--png', help='where to write the figure (default BUILD/demo/'
                    'vnapi-demo-FRONTEND.png)')
    ap.add_argument('--verbose', action='store_true', help='echo the processes\' output')
    ap.add_argument('--from-json', metavar='FILE',
                    help='print the table and draw the figure of a run saved before (its '
                    '.json beside the PNG), run nothing')
    args = ap.parse_args()
    if not 32 <= args.window <= 1024:
        ap.error('--window %d: allowed values are 32..1024' % args.window)
    if not args.png:
        args.png = os.path.join(os.path.abspath(args.build), 'demo',
                                'vnapi-demo-%s.png' % args.frontend)
    h.install_guards()
    interrupted = []

    def on_sigint(signum, frame):
        # Ctrl-C reaches the DPDK processes too (same process group): they end on their own,
        # and whatever this process was waiting for may fail first. Remember it, so that the
        # end says "interrupted" whatever exception comes out.
        interrupted.append(signum)
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, on_sigint)
    demo = Demo(args)
    quiet_harness(demo, args.verbose)
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        args.frontend = saved['frontend']
        demo.failures = saved['failures']
        demo.loadavg = saved['loadavg']
        return demo.report(saved['results'], args.from_json, saved.get('retakes', []))
    try:
        rc = demo.run()
    except KeyboardInterrupt:
        rc = None
    except Exception:
        if not interrupted:
            raise
        rc = None
    if interrupted or rc is None:
        demo.stop_all()  # already done on the way out; a second call costs nothing
        print('\ndemo: interrupted: every process ended by its PID, sockets removed',
              file=sys.stderr)
        return 130
    return rc


if __name__ == '__main__':
    sys.exit(main())
