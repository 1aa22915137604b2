#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Soak benchmark: vnapi-fwd in hybrid mode on net_vnapi for --minutes
(default 10) under disturbance, then exact counts and resources back at their baseline.

Usage (root; takes both CPUs, so under the machine's CPU lock):
  flock /run/vnapi-cpu.lock devtools/soak.py [--minutes M] [--build DIR] [--publish]

Processes (each with a deadline, each ended by its PID):
  back end   dpdk-testpmd with net_vhost (the vhost-user server), lcores 0@0 (CLI), 1@1 (io
             forwarding); SIGKILLed and started anew on the same socket every 20 s;
  vnapi-fwd  --mode hybrid --fwd io on net_vnapi0 (client), lcore 0@0, 2 MB hugepages so that
             secondaries can attach; every 30 s a port stop/start with an MTU change, asked for
             over telemetry (/vnapi_fwd/mtu,N: vnapi-fwd pauses its lcores, stops the port,
             reads its mbuf pool's in-use count, sets the MTU, starts the port, resumes);
  secondary  dpdk-proc-info --file-prefix <vnapi-fwd's> -d <plugin> -- --xstats (proc-info
             always attaches as a secondary), started every second (the next one when the previous has ended, if
             it took longer), each with a 20 s timeout.

Epochs. The run is cut at every disturbance (t = 20, 30, 40, 60, 80, 90, ... s; both at once at
multiples of 60 s: back end killed, port restarted without a back end, back end started). An
epoch starts at link-up (net_vhost's port up, and vnapi-fwd's port up over telemetry) and ends
at the next disturbance. In it the back end starts a fixed population of packets circulating
('start tx_first 4' in io mode: 128 frames of 64 bytes, well under every ring's 512 slots, so
no ring can overflow) which vnapi-fwd forwards back, round after round, until 1.5 s before the
disturbance; then the back end stops forwarding and switches to rxonly, which takes every frame
still on the way back. The epoch's check is exact: what the back end's PMD sent (TX-packets,
TX-bytes since the epoch's 'clear port stats') equals what it received (RX-packets, RX-bytes),
and nothing was dropped (testpmd's TX-dropped, vnapi-fwd's dropped). After the drain the
population circulates again until the disturbance hits it (the in-flight window; none with
--no-in-flight), judged exactly by the driver's counters (judge_window(), doc/soak.md): every
frame vnapi-fwd could not send was refused by the driver; at a port restart every frame the
driver sent reached the back end or is counted dropped at the stop (0: the drain), and what
the back end sent that the driver never delivered was on the rx ring the stop released; at a
back-end kill, what the back end held died with it and nothing of it reaches the new one. At
the end vnapi-fwd's FINAL line must be the driver's account exactly (rx, tx + tx errors,
refused), and with --no-in-flight rx = tx = the sum of what the back end sent, dropped = 0.

Resources, read in the same drained state at the end of every epoch: vnapi-fwd's open fds
(harness.open_fds_back_to: equal to the first epoch's), its VmRSS (growth from the first epoch
to the last under 1 MB; hugepage memory is not in VmRSS). Mbufs: every port restart reports
the pool's in-use count while the port is stopped (every ring released); each must equal the
first, and one more restart after the last epoch (/vnapi_fwd/port_restart, the MTU kept)
gives the final figure. Every secondary must
exit 0 and list rx_q0_good_packets.

Prints a table per epoch and a summary, and with --publish publishes them as section soak of
doc/performance.md (vnapitools.perfdoc: doc/results/soak.json, with the tree, the date, the
machine and the command; a smoke run sets VNAPI_PERFDOC_DIR=<scratch dir>).
Exit 0 when every check holds, 1 otherwise (a benchmark: meson registers a short run as a
benchmark(), never as a test).
"""

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

from vnapitools import harness as h  # noqa: E402
from vnapitools import perfdoc  # noqa: E402
from vnapitools import runs  # noqa: E402

RESTART_EVERY_S = 20
PORT_EVERY_S = 30
MTUS = (1400, 1500)          # alternately, starting with 1400 (the port starts at 1500)
DRAIN_BEFORE_S = 2.5         # counted traffic stops this long before each disturbance
TX_FIRST_BURSTS = 4          # x 32 frames: the circulating population
POPULATION = 32 * TX_FIRST_BURSTS
LINK_TIMEOUT_S = 30.0
DRAIN_TIMEOUT_S = 10.0
SECONDARY_PERIOD_S = 1.0
SECONDARY_TIMEOUT_S = 20.0
RSS_GROWTH_MAX_KB = 1024
FWD_MB = 256
SETTLE_S = 0.5               # rxonly until RX-packets has not moved for this long


def rss_kb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise h.HarnessError('no VmRSS for pid %d' % pid)


# The driver's counters an in-flight window is judged by (vnapi-fwd's port 0, queue 0).
WINDOW_XSTATS = ('rx_q0_good_packets', 'tx_q0_good_packets', 'tx_q0_errors', 'tx_q0_refused',
                 'tx_q0_reclaimed', 'tx_q0_dropped_at_stop')


class Secondary(threading.Thread):
    """dpdk-proc-info --xstats against vnapi-fwd once a second until stopped."""

    def __init__(self, prefix, plugin):
        super().__init__(daemon=True, name='secondary')
        # proc-info adds --proc-type=secondary itself (25.11's refuses it twice).
        self.argv = ['dpdk-proc-info', '--no-pci',
                     '--file-prefix', prefix, '--single-file-segments',
                     '--log-level=lib.eal:notice', '-d', plugin, '--', '--xstats']
        self.halt = threading.Event()
        self.runs = 0
        self.failures = []      # (t, why)
        self.durations = []
        self.last_rx = None

    def run(self):
        nxt = time.monotonic()
        while not self.halt.is_set():
            t0 = time.monotonic()
            p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, text=True,
                                 preexec_fn=h._child_setup)
            try:
                out, _ = p.communicate(timeout=SECONDARY_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
                self.failures.append((t0, 'timeout after %.0f s' % SECONDARY_TIMEOUT_S))
            else:
                m = re.search(r'^\s*rx_q0_good_packets:\s+(\d+)', out, re.M)
                if p.returncode != 0 or m is None:
                    self.failures.append((t0, 'exit %d, rx_q0_good_packets %s: %s' % (
                        p.returncode, 'listed' if m else 'missing',
                        ' '.join(out[-400:].split()))))
                else:
                    self.last_rx = int(m.group(1))
            self.runs += 1
            self.durations.append(time.monotonic() - t0)
            nxt += SECONDARY_PERIOD_S
            self.halt.wait(max(0.0, nxt - time.monotonic()))
            nxt = max(nxt, time.monotonic() - SECONDARY_PERIOD_S)


class Soak:
    def __init__(self, args, session):
        self.a = args
        self.s = session
        self.total_s = args.minutes * 60.0
        self.epochs = []
        self.disturbances = []
        self.restarts = []          # replies of /vnapi_fwd/mtu
        self.failures = []
        self.backend = None
        self.fwd = None
        self.sock = session.workdir.socket()
        self.plugin = h.prepare_plugin(args.plugin)
        self.prefix = h.unique('soak')
        self.fds0 = self.rss0 = None
        self.backend_starts = 0
        self.window_x0 = None

    # ---- processes ----
    def start_backend(self):
        deadline = self.total_s + 300.0
        b, _ = h.start_backend(self.s.workdir, sock=self.sock, deadline=deadline)
        self.backend = self.s.add(b)
        self.backend_starts += 1

    def kill_backend(self):
        self.backend.kill()
        if self.backend.wait_exit(10.0) is None:
            raise h.HarnessError('back end pid %d did not die' % self.backend.pid)
        self.backend.stop()   # runtime dir cleanup
        if os.path.exists(self.sock):
            os.unlink(self.sock)

    def start_fwd(self):
        if h.free_hugepages_2m() < FWD_MB // 2 + 16:
            raise h.HarnessError('%d free 2 MB hugepages, need %d' % (
                h.free_hugepages_2m(), FWD_MB // 2 + 16))
        argv = [self.a.fwd, '--no-pci', '--lcores', '0@0', '--file-prefix', self.prefix,
                '--single-file-segments', '-m', str(FWD_MB), '--log-level=lib.eal:notice',
                '-d', self.plugin, '--vdev', 'net_vnapi0,path=%s' % self.sock,
                '--', '--config', '(0,0,0)', '--mode', 'hybrid', '--fwd', 'io',
                '--duration', str(int(self.total_s + 240))]
        self.fwd = self.s.add(h.DpdkProcess('vnapi-fwd', argv, deadline=self.total_s + 270,
                                            cleanup=[h._rm_runtime(self.prefix)]).start())
        self.fwd.wait_for(r'^FORWARDING', 60, what='vnapi-fwd forwarding')

    def fwd_xstats(self):
        """The driver's own counters (telemetry of vnapi-fwd): {name: value} of
        WINDOW_XSTATS; every one must be there."""
        xs = h.telemetry(self.prefix, '/ethdev/xstats,0').get('/ethdev/xstats')
        missing = [n for n in WINDOW_XSTATS if not isinstance(xs, dict) or n not in xs]
        if missing:
            raise h.CheckFailed('vnapi-fwd port 0: xstats %s missing' % missing)
        return {n: xs[n] for n in WINDOW_XSTATS}

    def fwd_link_up(self):
        r = h.telemetry(self.prefix, '/ethdev/link_status,0').get('/ethdev/link_status', {})
        return r.get('status') == 'UP'

    def wait_link(self):
        t0 = time.monotonic()
        h.poll_until(self.backend.link_up, LINK_TIMEOUT_S, interval=0.05,
                     what='back end link up')
        h.poll_until(self.fwd_link_up, LINK_TIMEOUT_S, interval=0.05,
                     what='vnapi-fwd link up')
        return time.monotonic() - t0

    def port_restart(self, mtu=None):
        """/vnapi_fwd/mtu,MTU, or /vnapi_fwd/port_restart (MTU unchanged) for None."""
        cmd = '/vnapi_fwd/port_restart' if mtu is None else '/vnapi_fwd/mtu'
        r = h.telemetry(self.prefix, cmd if mtu is None else '%s,%d' % (cmd, mtu),
                        timeout=40.0)
        r = r.get(cmd) if isinstance(r, dict) else None
        if not isinstance(r, dict) or r.get('result') != 'ok' or \
                (mtu is not None and r.get('mtu') != mtu):
            raise h.CheckFailed('%s,%s: %r' % (cmd, mtu, r))
        self.restarts.append(r)
        return r

    # ---- one epoch ----
    def rx_settled(self):
        """rxonly until RX-packets stops moving (SETTLE_S): frames still on the way back."""
        b = self.backend
        b.cmd('set fwd rxonly')
        b.start_fwd()
        st = h.wait_stable(b, 'RX-packets', DRAIN_TIMEOUT_S, settle=SETTLE_S)
        b.stop_fwd()
        return st

    def epoch(self, until, end_event, link_s, dist):
        """One link-up epoch; @dist is the disturbance that began it (None for the first):
        its in-flight window's figures are completed here."""
        b = self.backend
        if dist is not None:
            if dist['tail_alive']:
                # The back end survived (port restart): its in-flight window's counts.
                b.stop_fwd()
                st = b.port_stats()
                dist['tail_sent'], dist['tail_received'] = st['TX-packets'], st['RX-packets']
                b.cmd('clear port stats all')
            dist['late'] = self.rx_settled()['RX-packets']
            if dist['tail_sent'] is not None:
                dist['lost'] = dist['tail_sent'] - dist['tail_received'] - dist['late']
            if dist.get('x0') is not None:
                x1 = self.fwd_xstats()
                dist['d'] = {n: x1[n] - dist['x0'][n] for n in WINDOW_XSTATS}
                self.judge_window(dist)
        t_begin = time.monotonic()
        b.cmd('clear port stats all')
        b.cmd('set fwd io')
        r = b.cmd('start tx_first %d' % TX_FIRST_BURSTS)
        if 'packet forwarding' not in r:
            raise h.HarnessError('start tx_first: %r' % r)
        time.sleep(max(0.0, until - DRAIN_BEFORE_S - time.monotonic()))  # traffic time
        io = b.stop_fwd()
        t_stop = time.monotonic()
        b.cmd('set fwd rxonly')
        b.start_fwd()
        sent = b.port_stats()['TX-packets']
        try:
            h.wait_counter(b, 'RX-packets', sent, DRAIN_TIMEOUT_S)
        except h.HarnessError as e:   # lost (or duplicated): the epoch fails, the soak goes on
            print('EPOCH %d: %s' % (len(self.epochs) + 1, str(e).split('\n')[0]), flush=True)
        b.stop_fwd()
        st = b.port_stats()
        drained_s = time.monotonic() - t_stop
        fds = h.open_fds_back_to(self.fwd.pid, self.fds0) if self.fds0 is not None else \
            h.open_fds_settled(self.fwd.pid)
        rss = rss_kb(self.fwd.pid)
        if self.fds0 is None:
            self.fds0, self.rss0 = fds, rss
        e = {
            'n': len(self.epochs) + 1, 't': t_begin - self.t0, 'link_s': link_s,
            'traffic_s': t_stop - t_begin, 'drain_s': drained_s,
            'sent': st['TX-packets'], 'received': st['RX-packets'],
            'tx_bytes': st['TX-bytes'], 'rx_bytes': st['RX-bytes'],
            'tx_dropped': io.get(0, {}).get('TX-dropped', 0) if io else 0,
            'fds': fds, 'rss_kb': rss, 'end': end_event,
        }
        e['ok'] = (e['sent'] == e['received'] and e['tx_bytes'] == e['rx_bytes'] and
                   e['sent'] > POPULATION and e['tx_dropped'] == 0 and fds == self.fds0)
        self.epochs.append(e)
        print('EPOCH %(n)d t=%(t).1f link=%(link_s).2fs traffic=%(traffic_s).1fs '
              'sent=%(sent)d received=%(received)d tx_bytes=%(tx_bytes)d rx_bytes=%(rx_bytes)d '
              'dropped=%(tx_dropped)d fds=%(fds)d rss_kb=%(rss_kb)d next=%(end)s %(ok)s' % e,
              flush=True)
        if not e['ok']:
            self.failures.append('epoch %d: %r' % (e['n'], e))
        if end_event != 'end' and self.a.in_flight:
            # The in-flight window: the population circulates again, uncounted by the epoch,
            # until the disturbance hits it; the driver's counters from here (nothing
            # circulates now) to the next epoch's drained start tell where each frame went.
            self.window_x0 = self.fwd_xstats()
            b.cmd('clear port stats all')
            b.cmd('set fwd io')
            r = b.cmd('start tx_first %d' % TX_FIRST_BURSTS)
            if 'packet forwarding' not in r:
                raise h.HarnessError('start tx_first: %r' % r)

    # ---- the run ----
    def run(self):
        self.start_backend()
        self.start_fwd()
        self.t0 = time.monotonic()
        link_s = self.wait_link()
        sec = Secondary(self.prefix, self.plugin)
        sec.start()
        self.secondary = sec
        next_restart, next_port, mtu_i = RESTART_EVERY_S, PORT_EVERY_S, 0
        dist = None
        try:
            while True:
                at = min(next_restart, next_port, self.total_s)
                restart = at == next_restart and at < self.total_s
                port = at == next_port and at < self.total_s
                ev = '+'.join(x for x, on in (('backend', restart),
                                              ('port+mtu%d' % MTUS[mtu_i % 2], port)) if on) \
                    or 'end'
                self.epoch(self.t0 + at, ev, link_s, dist)
                if ev == 'end':
                    break
                time.sleep(max(0.0, self.t0 + at - time.monotonic()))  # the schedule
                dist = {'t': at, 'what': ev, 'tail_alive': self.a.in_flight and not restart,
                        'tail_sent': None, 'tail_received': None, 'late': None, 'lost': None,
                        'x0': self.window_x0 if self.a.in_flight else None, 'd': None,
                        'ok': None, 'why': ''}
                self.disturbances.append(dist)
                if restart:
                    self.kill_backend()
                if port:
                    self.port_restart(MTUS[mtu_i % 2])
                    mtu_i += 1
                    next_port += PORT_EVERY_S
                if restart:
                    self.start_backend()
                    next_restart += RESTART_EVERY_S
                link_s = self.wait_link()
        finally:
            sec.halt.set()
            sec.join(SECONDARY_TIMEOUT_S + 5)
        # Resources in the drained state of the last epoch, then a last restart for the pool.
        self.fds_end = h.open_fds_back_to(self.fwd.pid, self.fds0)
        self.rss_end = rss_kb(self.fwd.pid)
        final = self.port_restart()
        self.in_use_end = final['mbufs_in_use_stopped']
        self.wait_link()
        self.x_end = self.fwd_xstats()   # drained: nothing moves until the end
        # SIGINT: vnapi-fwd must end by itself with exit status 0 (the harness judges it).
        h.check_exits([self.fwd])
        m = self.fwd.wait_for(r'^FINAL rx=(\d+) tx=(\d+) dropped=(\d+)', 1.0,
                              what='vnapi-fwd FINAL line')
        self.fwd_final = tuple(int(x) for x in m.groups())
        self.fwd_rc = self.fwd.returncode

    def judge_window(self, dist):
        """One in-flight window, exact, by the driver's counters (d: their rise over the
        window) and the back end's: every frame vnapi-fwd could not send is one the driver
        refused with the link down (rx - tx - tx errors == refused); with the back end alive
        (a port restart), every frame the driver took for tx reached the back end (received
        or late) or is counted dropped at the stop, which the drain makes 0, and what the
        back end sent that the driver never delivered was on the rx ring the stop released
        (a stopped port's rx ring cannot be drained); with the back end killed, nothing of
        the old population reaches the new one (late 0): the rest died with the back end,
        the loss its restart is documented to cause, less what the driver counted
        reclaimed from the tx ring it never consumed."""
        d, why = dist['d'], []
        fwd_drop = d['rx_q0_good_packets'] - d['tx_q0_good_packets'] - d['tx_q0_errors']
        if fwd_drop != d['tx_q0_refused'] or d['tx_q0_errors'] != 0:
            why.append('vnapi-fwd dropped %d, the driver refused %d (tx errors %d)'
                       % (fwd_drop, d['tx_q0_refused'], d['tx_q0_errors']))
        if dist['tail_sent'] is not None:
            to_be = dist['tail_received'] + dist['late'] + d['tx_q0_dropped_at_stop']
            if d['tx_q0_good_packets'] != to_be or d['tx_q0_dropped_at_stop'] != 0:
                why.append('the driver sent %d, the back end received %d + %d late, %d '
                           'dropped at stop' % (d['tx_q0_good_packets'], dist['tail_received'],
                                                dist['late'], d['tx_q0_dropped_at_stop']))
            dist['rx_ring_at_stop'] = dist['tail_sent'] - d['rx_q0_good_packets']
            if dist['rx_ring_at_stop'] < 0:
                why.append('the driver delivered %d, the back end sent %d'
                           % (d['rx_q0_good_packets'], dist['tail_sent']))
        elif dist['late'] != 0:
            why.append('%d frames of the killed back end\'s population reached the new one'
                       % dist['late'])
        dist['ok'] = not why
        dist['why'] = '; '.join(why)
        print('WINDOW t=%d %s: driver rx %d tx %d refused %d tx-reclaimed %d dropped-at-stop '
              '%d; back end %s; %s' % (
                  dist['t'], dist['what'], d['rx_q0_good_packets'], d['tx_q0_good_packets'],
                  d['tx_q0_refused'], d['tx_q0_reclaimed'], d['tx_q0_dropped_at_stop'],
                  'killed' if dist['tail_sent'] is None else 'sent %d received %d late %d' % (
                      dist['tail_sent'], dist['tail_received'], dist['late']),
                  'ok' if dist['ok'] else 'FAIL: ' + dist['why']), flush=True)

    # ---- verdict and report ----
    def verdict(self):
        checks = []
        sent = sum(e['sent'] for e in self.epochs)
        recv = sum(e['received'] for e in self.epochs)
        checks.append(('every epoch: sent == received (packets and bytes), 0 dropped, fds at '
                       'baseline', all(e['ok'] for e in self.epochs),
                       '%d epochs, %d failed' % (len(self.epochs),
                                                 sum(not e['ok'] for e in self.epochs))))
        rx, tx, dropped = self.fwd_final
        x = self.x_end
        # vnapi-fwd's own account is the driver's, exactly: what it received, sent (the
        # driver's tx errors are packets it took and dropped) and dropped (refused).
        checks.append(('vnapi-fwd FINAL rx, tx, dropped == the driver\'s rx_q0_good_packets, '
                       'tx_q0_good_packets + tx_q0_errors, tx_q0_refused',
                       rx == x['rx_q0_good_packets'] and dropped == x['tx_q0_refused'] and
                       tx == x['tx_q0_good_packets'] + x['tx_q0_errors'],
                       'rx=%d tx=%d dropped=%d; driver %s' % (
                           rx, tx, dropped, ' '.join('%s=%d' % kv for kv in sorted(x.items())))))
        if not self.a.in_flight:
            checks.append(('vnapi-fwd FINAL rx == tx == back end sent, dropped 0',
                           rx == tx == sent and dropped == 0 and recv == sent,
                           'rx=%d tx=%d dropped=%d, back end sent %d received %d'
                           % (rx, tx, dropped, sent, recv)))
        else:
            # The in-flight windows: each exact by the driver's counters (judge_window()).
            ws = [d for d in self.disturbances if d['ok'] is not None]
            bad = [d for d in ws if not d['ok']]
            restarts = [d for d in ws if d['tail_sent'] is not None]
            checks.append(('in-flight windows exact: every frame lost is one the driver '
                           'counted, or died with a killed back end',
                           len(ws) == len(self.disturbances) and not bad,
                           '%d windows (%d port restarts with the back end alive: lost %s, all '
                           'on the rx ring at the stop: %s)%s' % (
                               len(ws), len(restarts), sorted(d['lost'] for d in restarts),
                               sorted(d.get('rx_ring_at_stop') for d in restarts),
                               ''.join('; t=%d: %s' % (d['t'], d['why']) for d in bad))))
            checks.append(('vnapi-fwd FINAL rx >= the epochs\' sent, rx == tx + dropped',
                           rx == tx + dropped and rx >= sent,
                           'rx=%d tx=%d dropped=%d; epochs sent %d (received %d)'
                           % (rx, tx, dropped, sent, recv)))
        checks.append(('vnapi-fwd ended by itself after SIGINT, exit status 0',
                       self.fwd_rc == 0 and self.fwd.exit_problem() is None,
                       self.fwd.exit_problem() or 'rc %s' % self.fwd_rc))
        in_use = [r['mbufs_in_use_stopped'] for r in self.restarts]
        checks.append(('mbufs in use with the port stopped equal at every restart',
                       len(set(in_use)) == 1,
                       '%d restarts, values %s' % (len(in_use), sorted(set(in_use)))))
        checks.append(('fds at the end == baseline', self.fds_end == self.fds0,
                       '%d -> %d' % (self.fds0, self.fds_end)))
        growth = self.rss_end - self.rss0
        checks.append(('RSS growth < %d kB' % RSS_GROWTH_MAX_KB, growth < RSS_GROWTH_MAX_KB,
                       '%d kB -> %d kB (%+d kB)' % (self.rss0, self.rss_end, growth)))
        sec = self.secondary
        checks.append(('every secondary (dpdk-proc-info --xstats) exit 0 with xstats',
                       sec.runs > 0 and not sec.failures,
                       '%d runs, %d failed%s' % (sec.runs, len(sec.failures),
                                                 ('; first: %s' % sec.failures[0][1][:200])
                                                 if sec.failures else '')))
        return checks

    def report(self, checks):
        lines = []
        lines.append('- Run: %.1f min, DPDK %s; %d back-end starts, %d port restarts '
                     '(MTU %s alternately), %d secondary runs (%.2f s each on average).'
                     % (self.a.minutes, dpdk_version(),
                        self.backend_starts, len(self.restarts),
                        '/'.join(str(m) for m in MTUS), self.secondary.runs,
                        sum(self.secondary.durations) / max(1, len(self.secondary.durations))))
        lines.append('')
        lines.append('| epoch | t (s) | link-up wait (s) | traffic (s) | sent | received | '
                     'bytes sent = received | dropped | fds | RSS (kB) | ends with |')
        lines.append('|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|:---|')
        for e in self.epochs:
            lines.append('| %d | %.1f | %.2f | %.1f | %d | %d | %s | %d | %d | %d | %s |' % (
                e['n'], e['t'], e['link_s'], e['traffic_s'], e['sent'], e['received'],
                'yes' if e['tx_bytes'] == e['rx_bytes'] else 'NO (%d / %d)' % (
                    e['tx_bytes'], e['rx_bytes']),
                e['tx_dropped'], e['fds'], e['rss_kb'], e['end']))
        if self.a.in_flight:
            lines.append('')
            lines.append('In-flight windows (after each epoch\'s drain, %d frames circulate '
                         'again until the disturbance; not part of any epoch):' % POPULATION)
            lines.append('')
            lines.append('| t (s) | disturbance | back end sent | received | late (next '
                         'link-up) | lost in flight | driver rx / tx / refused / tx reclaimed '
                         '/ dropped at stop | exact |')
            lines.append('|---:|:---|---:|---:|---:|---:|:---|:---:|')
            for d in self.disturbances:
                unk = 'killed with it'
                dd = d.get('d')
                lines.append('| %d | %s | %s | %s | %s | %s | %s | %s |' % (
                    d['t'], d['what'],
                    unk if d['tail_sent'] is None else d['tail_sent'],
                    unk if d['tail_received'] is None else d['tail_received'],
                    '-' if d['late'] is None else d['late'],
                    'died with the back end' if d['lost'] is None else
                    '%d (on the rx ring at the stop: %s)' % (d['lost'], d.get('rx_ring_at_stop')),
                    '-' if dd is None else '%d / %d / %d / %d / %d' % (
                        dd['rx_q0_good_packets'], dd['tx_q0_good_packets'],
                        dd['tx_q0_refused'], dd['tx_q0_reclaimed'],
                        dd['tx_q0_dropped_at_stop']),
                    '-' if d['ok'] is None else ('yes' if d['ok'] else 'NO: ' + d['why'])))
        lines.append('')
        in_use = [r['mbufs_in_use_stopped'] for r in self.restarts]
        stop_us = sorted(r['stop_us'] for r in self.restarts)
        start_us = sorted(r['start_us'] for r in self.restarts)
        lines.append('Port restarts: mbufs in use while stopped %s; stop %d..%d us, '
                     'start %d..%d us (median %d / %d us).' % (
                         'always %d' % in_use[0] if len(set(in_use)) == 1 else
                         'VARIED: %s' % in_use, stop_us[0], stop_us[-1], start_us[0],
                         start_us[-1], stop_us[len(stop_us) // 2],
                         start_us[len(start_us) // 2]))
        lines.append('')
        lines.append('| check | result | figures |')
        lines.append('|:---|:---:|:---|')
        for what, ok, fig in checks:
            lines.append('| %s | %s | %s |' % (what, 'PASS' if ok else 'FAIL', fig))
        return '\n'.join(lines)


def dpdk_version():
    """The DPDK the tools come from: what pkg-config says (PKG_CONFIG_PATH as for the build)."""
    try:
        r = subprocess.run(['pkg-config', '--modversion', 'libdpdk'], capture_output=True,
                           text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return 'unknown'
    return r.stdout.strip() or 'unknown'


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--minutes', type=float, default=10.0,
                    help='length of the soak (default 10; 1-2 for a smoke run)')
    ap.add_argument('--build', default=os.path.join(top, 'build'),
                    help='build directory (vnapi-fwd and the plugin); default build/')
    ap.add_argument('--fwd', help='vnapi-fwd binary (default: $VNAPI_FWD or BUILD/app/...)')
    ap.add_argument('--plugin', help='librte_net_vnapi.so (default: $VNAPI_PLUGIN, else the one '
                    '--build builds first)')
    ap.add_argument('--publish', action='store_true',
                    help='publish the tables as section soak of doc/performance.md')
    ap.add_argument('--no-in-flight', dest='in_flight', action='store_false',
                    help='no traffic during the disturbances (every epoch drained, nothing '
                    'in flight: vnapi-fwd\'s FINAL must equal the epochs\' sum exactly)')
    a = ap.parse_args()
    a.fwd = a.fwd or os.environ.get('VNAPI_FWD') or \
        os.path.join(a.build, 'app', 'vnapi-fwd', 'vnapi-fwd')
    if a.minutes * 60 < RESTART_EVERY_S + PORT_EVERY_S:
        ap.error('--minutes must cover at least one restart of each kind (>= %.2f)'
                 % ((RESTART_EVERY_S + PORT_EVERY_S) / 60.0))
    if os.geteuid() != 0:
        print('soak: needs root (vhost-user sockets under /run/vnapi, hugepages)')
        return 77
    # A published soak measures the tree it stamps: build unless told which plugin.
    a.plugin = runs.plugin(a.build, a.plugin, 'app/vnapi-fwd/vnapi-fwd')
    cmdline = ' '.join(shlex.quote(x) for x in ['devtools/soak.py'] + sys.argv[1:])
    meta = perfdoc.measurement('soak', cmdline, build=os.path.abspath(a.build))
    try:
        with h.Session('soak') as s:   # every process's end judged on the way out
            soak = Soak(a, s)
            try:
                soak.run()
            except h.HarnessError:
                for p in (soak.fwd, soak.backend):
                    if p is not None:
                        print(p.tail(30))
                raise
    except h.HarnessError as e:
        print('soak: FAIL: %s' % e, flush=True)
        return 1
    checks = soak.verdict()
    text = soak.report(checks)
    print(text, flush=True)
    if a.publish:
        perfdoc.publish(meta, text, data={'epochs': soak.epochs,
                                          'disturbances': soak.disturbances,
                                          'restarts': soak.restarts})
        print('published section soak (%s)' % perfdoc.paths()[0], flush=True)
    ok = all(c[1] for c in checks)
    print('SOAK %s' % ('PASS' if ok else 'FAIL'), flush=True)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
