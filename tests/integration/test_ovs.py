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
p1 -> p0. Testpmd A transmits on p0's vnapi port, testpmd B receives on p1's: what A's PMD
accepted must equal what B received plus what OVS counted as dropped on the way (exact). Then
ovs-vswitchd is SIGKILLed while A transmits and started again (dpdkvhostuser: after removing the
socket files it left, which OVS will not bind over): both vnapi ports must report the link down
and up again by themselves, and B must receive again, counted exactly again.
Counts come from testpmd and from OVS's OpenFlow port counters (ovs-ofctl dump-ports), or, where
those read "?" (dpdkvhostuser ports), from its database once they stopped moving.
Throughput: one testpmd with both ports forwarding io, 4 bursts of 32 per port circulating through
OVS.
"""

import os
import re
import subprocess
import sys
import time

from vnapitools import harness as h

SKIP = 77
VSWITCHD = os.environ.get('VNAPI_OVS_VSWITCHD',
                          '/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk')
SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema'
TRAFFIC_S = float(os.environ.get('VNAPI_TEST_TRAFFIC_S', '2'))
OVS_SOCKET_MEM_MB = 256
PROC_DEADLINE = 300.0


Failure = h.CheckFailed
check = h.check


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
            deadline=PROC_DEADLINE).start())
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
            deadline=PROC_DEADLINE).start())
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
                # OVS's own drop counters (custom statistics) exist even where the
                # generic ones do not.
                res[p] = {'ovs_drops': sum(v for k, v in st.items()
                                           if k.startswith('ovs_') and k.endswith('drops'))}
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


def count_through(ovs, a, b, label):
    """A transmits for TRAFFIC_S, B receives. Exact: OVS took from p0 all that A's PMD accepted,
    B received all that OVS put on p1, and what is missing is what OVS counted as p1's tx drops
    (B's ring full)."""
    # B first drains what an earlier phase left in its ring, then both counters start at 0.
    b.start_fwd('rxonly')
    h.wait_stable(b, 'RX-packets', 30.0, settle=1.0)
    for p in (a, b):
        p.cmd('clear port stats all')
    c0 = ovs.ports()
    a.start_fwd('txonly')
    t0 = time.monotonic()
    time.sleep(TRAFFIC_S)  # traffic time, not a wait for an event
    a.stop_fwd()
    dt = time.monotonic() - t0
    sent = a.port_stats()['TX-packets']
    got = h.wait_stable(b, 'RX-packets', 30.0, settle=1.0)['RX-packets']
    b.stop_fwd()
    c1 = ovs.ports()
    if not all('rx_pkts' in c1[p] and 'tx_pkts' in c1[p] for p in ('p0', 'p1')):
        # No generic counters for these ports: what A sent is what B got plus what OVS
        # counted as its own drops on the way.
        drops = sum(c1[p]['ovs_drops'] - c0[p]['ovs_drops'] for p in ('p0', 'p1'))
        print('  %s: A sent %d, B received %d; OVS drop counters %d (no packet counters: %s)'
              % (label, sent, got, drops, c1), flush=True)
        check(sent > 0 and got > 0, '%s: traffic went through' % label)
        check(sent == got + drops, '%s: A TX %d == B RX %d + OVS drops %d'
              % (label, sent, got, drops))
        return
    keys = ('rx_pkts', 'rx_drop', 'tx_pkts', 'tx_drop')
    d = {p: {k: c1[p].get(k, 0) - c0[p].get(k, 0) for k in keys} for p in ('p0', 'p1')}
    print('  %s: A sent %d, B received %d; OVS p0 rx %d (drop %d), p1 tx %d (drop %d)'
          % (label, sent, got, d['p0']['rx_pkts'], d['p0']['rx_drop'], d['p1']['tx_pkts'],
             d['p1']['tx_drop']), flush=True)
    check(sent > 0 and got > 0, '%s: traffic went through' % label)
    if d['p0']['rx_pkts'] != sent:
        print('  ovs-ofctl dump-ports after:\n%s' % ovs.ofctl('--names', 'dump-ports', 'br0'))
    check(d['p0']['rx_pkts'] == sent, '%s: OVS p0 rx %d == A TX %d'
          % (label, d['p0']['rx_pkts'], sent))
    check(d['p1']['tx_pkts'] == got, '%s: B RX %d == OVS p1 tx %d'
          % (label, got, d['p1']['tx_pkts']))
    check(sent == got + d['p1']['tx_drop'], '%s: A TX %d == B RX %d + OVS p1 tx drops %d'
          % (label, sent, got, d['p1']['tx_drop']))


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
        ovs.ofctl('del-flows', 'br0')
        ovs.ofctl('add-flow', 'br0', 'in_port=p0,actions=output:p1')
        ovs.ofctl('add-flow', 'br0', 'in_port=p1,actions=output:p0')
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
        rx_down = b.port_stats()['RX-packets']
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
        try:
            h.poll_until(lambda: b.port_stats()['RX-packets'] > rx_down, 30.0,
                         what='B receiving again, nobody touching the ports')
        except h.Timeout:
            # Where the frames stop: A's tx, OVS's two ports, B's rx ring.
            print('  A: %s\n  B: %s\n  OVS dump-ports: %s\n  ovs-vswitchd, last lines:\n%s'
                  % (a.port_stats(), b.port_xstats(), ovs.ofctl('--names', 'dump-ports', 'br0'),
                     ovs.vswitchd.tail(40)))
            raise
        check(True, 'traffic resumed by itself after the restart')
        a.stop_fwd()
        b.stop_fwd()
        # OpenFlow flows do not survive a restart: the bridge is back to NORMAL (flooding
        # between its two ports), the counts must still add up.
        count_through(ovs, a, b, porttype + ' after restart')
        for p in (a, b):
            check(p.port_xstats().get('reconnects') == 1, '%s: reconnects == 1' % p.name)
            p.stop()
        # The same bridge, one testpmd with both ports, for the throughput figure.
        ovs.ofctl('del-flows', 'br0')
        ovs.ofctl('add-flow', 'br0', 'in_port=p0,actions=output:p1')
        ovs.ofctl('add-flow', 'br0', 'in_port=p1,actions=output:p0')
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
