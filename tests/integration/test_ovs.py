#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""OVS-DPDK as a real peer: two vnapi ports (two testpmd processes) through an OVS bridge.

Usage: test_ovs.py PORTTYPE
  PORTTYPE  dpdkvhostuser (OVS listens, vnapi is the client)
            | dpdkvhostuserclient (vnapi listens with server=1, OVS connects)
Exit status 0 = pass, 1 = fail, 77 = skip (Open vSwitch with DPDK not installed, or too few
free 2 MB hugepages: OVS-DPDK runs on hugepages, with --in-memory).

A private ovsdb-server and ovs-vswitchd (Debian's openvswitch-switch-dpdk) run with every file
under the test's own directory (OVS_RUNDIR, OVS_DBDIR, OVS_LOGDIR) and are ended by PID. Bridge
br0 (netdev datapath) holds ports p0 and p1, one per vnapi port, with the flows p0 -> p1 and
p1 -> p0. Testpmd A transmits on p0's vnapi port, testpmd B receives on p1's, in counted rounds
(8 x 128 frames, each round once B has the previous one, so B's rx ring always has room): A's
PMD accepts every frame, B receives every one, OVS read exactly those from p0 and wrote exactly
those to p1, no OVS drop counter moves and B's vnapi rx loss xstats stay 0; no difference is
excused. Then ovs-vswitchd is SIGKILLed while A transmits freely and started again
(dpdkvhostuser: after removing the socket files it left, which OVS will not bind over): both
vnapi ports must report the link down and up again by themselves, A must accept nothing while
down, and the counted rounds A sends after the link is up again must all reach B, judged the
same way against the new ovs-vswitchd's counters (which start at 0).
Counts come from testpmd and from OVS's OpenFlow port counters (ovs-ofctl dump-ports), or, where
those read "?" (dpdkvhostuser ports), from its database once they stopped moving (there OVS has
its own drop counters, ovs_*_drops, but no packet counters).
Throughput: one testpmd with both ports forwarding io, 4 bursts of 32 per port circulating through
OVS.
"""

import os
import re
import signal
import subprocess
import sys
import time

from vnapitools import harness as h
from vnapitools.harness import Failure, check

SKIP = 77
VSWITCHD = os.environ.get('VNAPI_OVS_VSWITCHD',
                          '/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk')
SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema'
TRAFFIC_S = float(os.environ.get('VNAPI_TEST_TRAFFIC_S', '2'))
OVS_SOCKET_MEM_MB = 256
PROC_DEADLINE = 300.0
# OVS's daemons end on SIGINT by running their exit hooks and raising the signal again with
# its default action: died of SIGINT is their clean end (the harness judges every end).
OVS_SIGINT_RC = -signal.SIGINT


class Ovs:
    """ovsdb-server and ovs-vswitchd, private to one directory."""

    def __init__(self, session, rundir):
        self.s = session
        self.dir = rundir
        self.dbsock = os.path.join(rundir, 'db.sock')
        self.vswitchd = None
        for k in ('OVS_RUNDIR', 'OVS_DBDIR', 'OVS_LOGDIR'):
            os.environ[k] = rundir
        db = os.path.join(rundir, 'conf.db')
        subprocess.run(['ovsdb-tool', 'create', db, SCHEMA], check=True, timeout=30)
        self.ovsdb = session.add(h.DpdkProcess(
            'ovsdb-server', ['ovsdb-server', db, '--remote=punix:' + self.dbsock,
                             '--pidfile=' + os.path.join(rundir, 'ovsdb-server.pid'),
                             '--unixctl=' + os.path.join(rundir, 'ovsdb-server.ctl'),
                             '-vconsole:info'],
            deadline=PROC_DEADLINE, sigint_rc=OVS_SIGINT_RC).start())
        h.poll_until(lambda: os.path.exists(self.dbsock), 20.0, interval=0.05,
                     what='ovsdb-server socket')
        self.vsctl('--no-wait', 'init')
        self.vsctl('--no-wait', 'set', 'Open_vSwitch', '.',
                   'other_config:dpdk-init=true',
                   'other_config:dpdk-lcore-mask=0x1',
                   'other_config:pmd-cpu-mask=0x2',
                   'other_config:dpdk-socket-mem=%d' % OVS_SOCKET_MEM_MB,
                   'other_config:dpdk-extra=--no-pci')

    def vsctl(self, *args):
        r = subprocess.run(['ovs-vsctl', '--db=unix:' + self.dbsock, '--timeout=30'] + list(args),
                           capture_output=True, text=True, timeout=40)
        if r.returncode != 0:
            raise Failure('ovs-vsctl %s: %s' % (' '.join(args), r.stderr.strip()))
        return r.stdout.strip()

    def ofctl(self, *args):
        r = subprocess.run(['ovs-ofctl'] + list(args), capture_output=True, text=True,
                           timeout=40)
        if r.returncode != 0:
            raise Failure('ovs-ofctl %s: %s' % (' '.join(args), r.stderr.strip()))
        return r.stdout

    def start_vswitchd(self):
        self.vswitchd = self.s.add(h.DpdkProcess(
            'ovs-vswitchd', [VSWITCHD, 'unix:' + self.dbsock,
                             '--pidfile=' + os.path.join(self.dir, 'ovs-vswitchd.pid'),
                             '--unixctl=' + os.path.join(self.dir, 'ovs-vswitchd.ctl'),
                             '-vconsole:info'],
            deadline=PROC_DEADLINE, sigint_rc=OVS_SIGINT_RC).start())
        self.vswitchd.wait_for(r'DPDK Enabled - initialized', 60.0, what='OVS DPDK init')
        return self.vswitchd

    def ports(self):
        """Live OpenFlow port counters (the database's statistics lag by 5 s):
        {port: {'rx_pkts', 'rx_drop', 'tx_pkts', 'tx_drop', ...}}."""
        out = self.ofctl('--names', 'dump-ports', 'br0')
        res = {}
        for m in re.finditer(r'port\s+"?(\w+)"?:\s*rx ([^\n]*)\n\s*tx ([^\n]*)', out):
            d = {}
            for side, text in (('rx', m.group(2)), ('tx', m.group(3))):
                for k, v in re.findall(r'(\w+)=(\d+)', text):
                    d['%s_%s' % (side, k)] = int(v)
            res[m.group(1)] = d
        if all(p in res and 'rx_pkts' in res[p] and 'tx_pkts' in res[p] for p in ('p0', 'p1')):
            return res
        # Port counters OpenFlow cannot read ("?": dpdkvhostuser ports of OVS 3.1): the
        # database's, once they stopped moving (OVS writes them every 5 s).
        return self.db_ports()

    def db_ports(self):
        def read():
            res = {}
            for p in ('p0', 'p1'):
                out = self.vsctl('get', 'Interface', p, 'statistics')
                st = {k: int(v) for k, v in re.findall(r'"?([\w-]+)"?=(\d+)', out)}
                # OVS's own drop counters (custom statistics, each by name) exist even
                # where the generic ones do not.
                res[p] = {k: v for k, v in st.items()
                          if k.startswith('ovs_') and k.endswith('drops')}
                for key, name in (('rx_pkts', 'rx_packets'), ('tx_pkts', 'tx_packets'),
                                  ('rx_drop', 'rx_dropped'), ('tx_drop', 'tx_dropped')):
                    if name in st:
                        res[p][key] = st[name]
            return res
        prev = read()
        end = time.monotonic() + 40.0
        while True:
            time.sleep(6.0)  # longer than OVS's statistics update interval (5 s)
            cur = read()
            if cur == prev:
                return cur
            if time.monotonic() > end:
                raise Failure('OVS interface statistics still moving: %s' % cur)
            prev = cur


# B's own rx losses (vnapi counts them): frames it took from its ring and did not deliver.
B_RX_LOSS_XSTATS = ('rx_q0_errors', 'rx_q0_nombuf', 'rx_q0_bad_hdr')
# Counted traffic: ROUNDS rounds of 'start tx_first 4' on A (4 bursts of 32 = 128 frames, half
# of B's 256-entry rx ring), each round sent only once B received every frame of the rounds
# before. B's ring therefore always has room, nothing may be dropped anywhere: a free-running
# txonly A overruns B's ring (OVS then counts most frames as p1 tx drops, and a loss in B's rx
# path would hide among them).
ROUNDS = 8
ROUND_PKTS = 128
DRAIN_S = 30.0


def b_rx_losses(b):
    xs = b.port_xstats()
    missing = [k for k in B_RX_LOSS_XSTATS if k not in xs]
    if missing:
        raise Failure('B has no xstat(s) %s' % missing)
    return {k: xs[k] for k in B_RX_LOSS_XSTATS}


def judge(ovs, label, sent, got, c0, c1, loss0, loss1):
    """Exact, no difference allowed: A's PMD accepted every frame of the rounds (sent); OVS
    read exactly those from p0 and put exactly those on p1; B received (got) all of them; no
    drop counter of OVS on either port moved; B's vnapi rx loss xstats did not move.
    c0: OVS's counters before (empty for a freshly started ovs-vswitchd, whose start at 0)."""
    expect = ROUNDS * ROUND_PKTS
    loss = {k: loss1[k] - loss0[k] for k in loss1}
    d = {p: {k: c1[p].get(k, 0) - c0.get(p, {}).get(k, 0) for k in c1[p]} for p in ('p0', 'p1')}
    drops = {'%s %s' % (p, k): v for p in ('p0', 'p1') for k, v in d[p].items()
             if v and 'drop' in k}
    print('  %s: A sent %d, B received %d (%d rounds of %d); OVS counters: %s'
          % (label, sent, got, ROUNDS, ROUND_PKTS, d), flush=True)
    check(sent == expect, '%s: A TX %d == %d (every frame of the rounds accepted)'
          % (label, sent, expect))
    check(got == sent, '%s: B RX %d == A TX %d' % (label, got, sent))
    check(all(v == 0 for v in loss.values()), '%s: B (vnapi) lost nothing it received: %s'
          % (label, ' '.join('%s +%d' % kv for kv in sorted(loss.items()))))
    check(not drops, '%s: no OVS drop counter moved: %s' % (label, drops or 'none'))
    if all('rx_pkts' in c1[p] and 'tx_pkts' in c1[p] for p in ('p0', 'p1')):
        check(d['p0']['rx_pkts'] == sent and d['p1']['tx_pkts'] == got,
              '%s: OVS p0 rx %d == A TX %d, OVS p1 tx %d == B RX %d'
              % (label, d['p0']['rx_pkts'], sent, d['p1']['tx_pkts'], got))
    else:
        print('  %s: OVS has no packet counters for these ports (its drop counters only)'
              % label)


def send_rounds(ovs, a, b, rx0):
    """A sends ROUNDS x ROUND_PKTS frames, one round after B received the previous one; B runs
    rxonly. Stops early (the judgement then says where frames went missing) when B does not
    get a round within DRAIN_S."""
    a.cmd('set fwd rxonly')
    for r in range(1, ROUNDS + 1):
        out = a.cmd('start tx_first 4')
        if 'packet forwarding' not in out:
            raise Failure('A: start tx_first 4: %r' % out)
        a.stop_fwd()
        try:
            h.wait_counter(b, 'RX-packets', rx0 + r * ROUND_PKTS, DRAIN_S)
        except h.HarnessError as e:
            print('  round %d: %s\n  A: %s\n  B: %s\n  OVS dump-ports: %s\n'
                  '  ovs-vswitchd, last lines:\n%s'
                  % (r, e, a.port_stats(), b.port_xstats(),
                     ovs.ofctl('--names', 'dump-ports', 'br0'), ovs.vswitchd.tail(40)))
            return


def count_through(ovs, a, b, label):
    """Counted rounds A -> B through OVS; judge() them."""
    # B first drains what an earlier phase left in its ring, then both counters start at 0.
    b.start_fwd('rxonly')
    h.wait_stable(b, 'RX-packets', 30.0, settle=1.0)
    for p in (a, b):
        p.cmd('clear port stats all')
    c0 = ovs.ports()
    loss0 = b_rx_losses(b)
    send_rounds(ovs, a, b, 0)
    sent = a.port_stats()['TX-packets']
    got = h.wait_stable(b, 'RX-packets', 5.0, settle=1.0)['RX-packets']
    b.stop_fwd()
    judge(ovs, label, sent, got, c0, ovs.ports(), loss0, b_rx_losses(b))


def add_flows(ovs):
    ovs.ofctl('del-flows', 'br0')
    ovs.ofctl('add-flow', 'br0', 'in_port=p0,actions=output:p1')
    ovs.ofctl('add-flow', 'br0', 'in_port=p1,actions=output:p0')


def loop_rate(s, socks, extra):
    """Throughput: one testpmd (one forwarding lcore) with both vnapi ports in io mode, OVS
    forwarding p0 <-> p1; 256 packets injected circulate. Mpps received by the testpmd."""
    prefix = h.unique('f')
    vdevs = ['net_vnapi%d,%s' % (i, ','.join(['path=' + socks[p]] + extra))
             for i, p in enumerate(('p0', 'p1'))]
    argv = h.testpmd_argv(prefix, h.FRONTEND_LCORES, vdevs, plugins=[h.prepare_plugin()])
    c = s.add(h.start_testpmd('loop', argv, prefix, deadline=PROC_DEADLINE))
    c.wait_prompt(60.0)
    h.poll_until(lambda: c.link_up(0) and c.link_up(1), 60.0, what='loop testpmd links up')
    c.cmd('set fwd io')
    r = c.cmd('start tx_first 4')  # 128 packets per port
    if 'packet forwarding' not in r:
        raise Failure('start tx_first: %r' % r)
    time.sleep(1.0)  # warm-up, then a timed window
    r0, t0 = c.port_stats_all(), time.monotonic()
    time.sleep(TRAFFIC_S)
    r1, t1 = c.port_stats_all(), time.monotonic()
    c.stop_fwd()
    rx = sum(r1[p]['RX-packets'] - r0[p]['RX-packets'] for p in (0, 1))
    c.stop()
    return rx / (t1 - t0)


def run(porttype):
    if not os.access(VSWITCHD, os.X_OK):
        print('SKIP: %s not installed (Debian package openvswitch-switch-dpdk)' % VSWITCHD)
        return SKIP
    need = OVS_SOCKET_MEM_MB // 2 + 16
    if h.free_hugepages_2m() < need:
        print('SKIP: OVS-DPDK needs %d free 2 MB hugepages, %d free'
              % (need, h.free_hugepages_2m()))
        return SKIP
    with h.Session('ovs') as s:
        rundir = os.path.join(s.workdir.path, 'ovs')
        os.mkdir(rundir, 0o700)
        ovs = Ovs(s, rundir)
        ovs.start_vswitchd()
        ovs.vsctl('add-br', 'br0', '--', 'set', 'bridge', 'br0', 'datapath_type=netdev')
        socks = {}
        for p in ('p0', 'p1'):
            if porttype == 'dpdkvhostuser':
                ovs.vsctl('add-port', 'br0', p, '--', 'set', 'Interface', p,
                          'type=dpdkvhostuser')
                socks[p] = os.path.join(rundir, p)
            else:
                socks[p] = os.path.join(s.workdir.path, 'vnapi-%s.sock' % p)
                ovs.vsctl('add-port', 'br0', p, '--', 'set', 'Interface', p,
                          'type=dpdkvhostuserclient', 'options:vhost-server-path=' + socks[p])
        add_flows(ovs)
        extra = ['server=1'] if porttype == 'dpdkvhostuserclient' else []
        fes = []
        for p in ('p0', 'p1'):
            if porttype == 'dpdkvhostuser':
                h.poll_until(lambda: os.path.exists(socks[p]), 30.0, interval=0.05,
                             what='OVS socket %s' % socks[p])
            fes.append(s.add(h.start_frontend('vnapi', socks[p], deadline=PROC_DEADLINE,
                                              extra_devargs=extra,
                                              app_extra=['--print-event', 'intr_lsc'])))
        a, b = fes
        a.name, b.name = 'A', 'B'
        for p in (a, b):
            h.poll_until(p.link_up, 60.0, what='%s link up' % p.name)
        count_through(ovs, a, b, porttype)

        # ovs-vswitchd dies mid-traffic and comes back.
        marks = [p.mark() for p in (a, b)]
        a.start_fwd('txonly')
        b.start_fwd('rxonly')
        h.poll_until(lambda: b.port_stats()['RX-packets'] > 0, 15.0, what='B receiving')
        ovs.vswitchd.kill()
        check(ovs.vswitchd.wait_exit(10.0) is not None, 'ovs-vswitchd killed')
        for p, m in zip((a, b), marks):
            p.wait_for(h.LSC_RE, 20.0, since=m, what='%s LSC (link down)' % p.name)
        check(not a.link_up() and not b.link_up(), 'both vnapi ports report link down')
        # From here A's PMD accepts nothing (it refuses while the link is down) and B's
        # receives nothing until OVS is back. A's application stops sending (its port is left
        # alone); after the restart it sends counted rounds, B still receiving: every frame
        # A's TX-packets counts from here on is one A sent after the link came up again.
        tx_down = a.port_stats()['TX-packets']
        rx_down = b.port_stats()['RX-packets']
        loss0 = b_rx_losses(b)
        a.stop_fwd()
        check(a.port_stats()['TX-packets'] == tx_down,
              'A accepted nothing while its link was down (TX-packets %d)' % tx_down)
        marks = [p.mark() for p in (a, b)]
        if porttype == 'dpdkvhostuser':
            # OVS (lib/vhost) does not bind over the socket files its killed instance left
            # ("failed to bind: Address already in use; remove it and try again"): remove them,
            # as whatever restarts OVS must. vnapi keeps retrying meanwhile.
            for p in ('p0', 'p1'):
                os.unlink(socks[p])
        t_restart = time.monotonic()
        ovs.start_vswitchd()
        try:
            for p, m in zip((a, b), marks):
                p.wait_for(h.LSC_RE, 60.0, since=m, what='%s LSC (link up)' % p.name)
                h.poll_until(p.link_up, 30.0, what='%s link up again' % p.name)
        except h.Timeout:
            print('  restarted ovs-vswitchd, last lines:\n%s' % ovs.vswitchd.tail(40))
            raise
        print('  links up %.2f s after ovs-vswitchd was restarted'
              % (time.monotonic() - t_restart))
        # OpenFlow flows do not survive the restart (the bridge is back to NORMAL): the same
        # two again, so that p0 -> p1 is all there is.
        add_flows(ovs)
        send_rounds(ovs, a, b, rx_down)
        sent = a.port_stats()['TX-packets'] - tx_down
        got = h.wait_stable(b, 'RX-packets', 5.0, settle=1.0)['RX-packets'] - rx_down
        b.stop_fwd()
        # Against the counters of the new ovs-vswitchd, which start at 0.
        judge(ovs, porttype + ' after the restart', sent, got, {}, ovs.ports(), loss0,
              b_rx_losses(b))
        for p in (a, b):
            check(p.port_xstats().get('reconnects') == 1, '%s: reconnects == 1' % p.name)
            p.stop()
        # The same bridge, one testpmd with both ports, for the throughput figure.
        add_flows(ovs)
        pps = loop_rate(s, socks, extra)
    print('RESULT porttype=%s ovs_loop_mpps=%.2f (io loop through OVS, 1 testpmd lcore + 1 '
          'OVS PMD)' % (porttype, pps / 1e6), flush=True)
    return 0


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ('dpdkvhostuser', 'dpdkvhostuserclient'):
        print(__doc__)
        return 2
    return h.run_checks(run, sys.argv[1], errors=(subprocess.SubprocessError,))


if __name__ == '__main__':
    sys.exit(main())
