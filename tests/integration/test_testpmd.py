#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""testpmd-based integration tests: a front end (net_vnapi or net_virtio_user) in one testpmd,
DPDK's net_vhost in another, over a vhost-user socket.

Usage: test_testpmd.py CASE [FRONTEND]
  CASE      txonly | rxonly | io | mq | baddevargs | lsc | csum | all
  FRONTEND  vnapi (default) | virtio_user, optionally with extra devargs:
            'vnapi:mrg_rxbuf=1,event_idx=0'
Exit status 0 = pass, 1 = fail, 77 = skip (meson's convention).

Every count assertion is exact: packets counted as sent by one side (NIC TX-packets, i.e. the
packets its PMD accepted into the ring) equal those counted as received by the other side once
the sender is stopped and the receiver has drained the ring.
"""

import os
import re
import signal
import struct
import sys
import time

from vnapitools import harness as h
from vnapitools.harness import Failure, check

SKIP = 77
# Traffic time per case; the counts are exact whatever the rate, so this is only about having
# enough packets (and some ring wrap-arounds) in the checks.
TRAFFIC_S = float(os.environ.get('VNAPI_TEST_TRAFFIC_S', '2'))
# Generous: other engineers share the 2 CPUs.
DRAIN_S = 30.0
PROC_DEADLINE = 150.0


# net_vhost (the back end) counts the packets a full guest ring refused as
# TX-errors from DPDK 23.11 on (before: nowhere), and testpmd (23.11 on) adds
# the port's TX-errors into its forward statistics' TX-dropped, where its
# engine's own drops already are: TX-dropped is then twice the refused count.
_SERIES = tuple(int(x) for x in os.environ.get('VNAPI_DPDK_SERIES', '22.11').split('.'))
VHOST_TX_MISSED_ARE_ERRORS = _SERIES >= (23, 11)


def backend_tx_errors(fwd_dropped):
    """The back end's exact TX-errors after a forward run whose statistics
    show fwd_dropped TX-dropped."""
    if not VHOST_TX_MISSED_ARE_ERRORS:
        return 0
    check(fwd_dropped % 2 == 0, 'backend TX-dropped %d counts each refused packet twice'
          % fwd_dropped)
    return fwd_dropped // 2


def connect(s, frontend, queues=1, fe_app_extra=()):
    """Backend testpmd (interactive), then the front end; returns (backend, frontend) with both
    links up."""
    backend, sock = h.start_backend(s.workdir, queues=queues, deadline=PROC_DEADLINE)
    s.add(backend)
    mark = backend.mark()
    fe = s.add(h.start_frontend(frontend, sock, queues=queues, deadline=PROC_DEADLINE,
                                app_extra=fe_app_extra))
    h.wait_backend_ready(backend, since=mark, timeout=30.0)
    h.poll_until(backend.link_up, 15.0, what='backend link up')
    h.poll_until(fe.link_up, 15.0, what='front-end link up')
    return backend, fe


def one_way(frontend, sender_is_frontend):
    with h.Session() as s:
        backend, fe = connect(s, frontend)
        if sender_is_frontend:
            tx, rx = fe, backend
        else:
            tx, rx = backend, fe
        rx.start_fwd('rxonly')
        tx.start_fwd('txonly')
        time.sleep(TRAFFIC_S)  # traffic time, not a wait for an event
        tx_fwd = tx.stop_fwd()
        tx_stats = tx.port_stats()
        sent = tx_stats['TX-packets']
        print('  %s sent %d packets (forward stats: %s)' % (tx.name, sent, tx_fwd.get(0)))
        # The receiver keeps polling: wait until it has drained everything the sender queued.
        rx_stats = h.wait_counter(rx, 'RX-packets', sent, DRAIN_S)
        rx_fwd = rx.stop_fwd()
        check(sent > 0, '%s TX-packets %d > 0' % (tx.name, sent))
        check(rx_stats['RX-packets'] == sent,
              '%s RX-packets %d == %s TX-packets %d'
              % (rx.name, rx_stats['RX-packets'], tx.name, sent))
        check(rx_fwd[0]['RX-packets'] == tx_fwd[0]['TX-packets'],
              'forward stats: %s RX %d == %s TX %d'
              % (rx.name, rx_fwd[0]['RX-packets'], tx.name, tx_fwd[0]['TX-packets']))
        # Nothing flows the other way.
        check(tx.port_stats()['RX-packets'] == 0 and rx.port_stats()['TX-packets'] == 0,
              'no packets in the reverse direction')
        for p in (rx, tx):
            st = p.port_stats()
            tx_err = backend_tx_errors(tx_fwd[0]['TX-dropped']) if (p is backend and tx is backend) else 0
            check(st.get('RX-errors', 0) == 0 and st.get('TX-errors', 0) == tx_err
                  and st.get('RX-nombuf', 0) == 0,
                  '%s: no RX errors, TX-errors %d == %d, no mbuf allocation failures'
                  % (p.name, st.get('TX-errors', 0), tx_err))
    return True


def case_txonly(frontend):
    """front end txonly -> backend rxonly."""
    return one_way(frontend, sender_is_frontend=True)


def case_rxonly(frontend):
    """backend txonly -> front end rxonly."""
    return one_way(frontend, sender_is_frontend=False)


def loopback(frontend, queues):
    """backend flowgen (generates UDP flows, frees what it receives) <-> front end io (sends back
    what it receives, on the same queue index)."""
    with h.Session() as s:
        backend, fe = connect(s, frontend, queues=queues)
        fe.start_fwd('io')
        backend.start_fwd('flowgen')
        time.sleep(TRAFFIC_S)
        b_fwd = backend.stop_fwd()        # stops generating and draining
        b_tx = backend.port_stats()['TX-packets']
        # The front end keeps forwarding until it has received all the backend sent.
        fe_stats = h.wait_counter(fe, 'RX-packets', b_tx, DRAIN_S)
        # Let io flush what it received, then stop it.
        fe_fwd = fe.stop_fwd()
        fe_stats = fe.port_stats()
        f_tx = fe_stats['TX-packets']
        # Drain what the front end sent while the backend was stopped.
        backend.start_fwd('rxonly')
        b_stats = h.wait_counter(backend, 'RX-packets', f_tx, DRAIN_S)
        backend.stop_fwd()
        print('  backend: TX %d RX %d; front end: RX %d TX %d (io TX-dropped %d)'
              % (b_tx, b_stats['RX-packets'], fe_stats['RX-packets'], f_tx,
                 fe_fwd[0]['TX-dropped']))
        check(b_tx > 0 and f_tx > 0, 'traffic in both directions (%d, %d)' % (b_tx, f_tx))
        check(fe_stats['RX-packets'] == b_tx,
              'front-end RX-packets %d == backend TX-packets %d' % (fe_stats['RX-packets'], b_tx))
        check(b_stats['RX-packets'] == f_tx,
              'backend RX-packets %d == front-end TX-packets %d' % (b_stats['RX-packets'], f_tx))
        # io conserves packets: what it received was sent or counted as dropped.
        check(fe_fwd[0]['RX-packets'] == fe_fwd[0]['TX-packets'] + fe_fwd[0]['TX-dropped'],
              'front-end io: RX %d == TX %d + TX-dropped %d'
              % (fe_fwd[0]['RX-packets'], fe_fwd[0]['TX-packets'], fe_fwd[0]['TX-dropped']))
        check(b_fwd[0]['TX-packets'] > 0, 'backend flowgen sent %d' % b_fwd[0]['TX-packets'])
        if queues > 1:
            # Per-queue counters of the backend (net_vhost fills the generic ethdev ones):
            # every queue carried traffic in both directions, and they add up.
            xs = backend.port_xstats()
            for d in ('rx', 'tx'):
                per_q = [xs.get('%s_q%d_packets' % (d, q)) for q in range(queues)]
                check(all(v is not None and v > 0 for v in per_q),
                      'backend %s per-queue packets all > 0: %s' % (d, per_q))
                total = b_stats['RX-packets'] if d == 'rx' else b_stats['TX-packets']
                check(sum(per_q) == total,
                      'backend %s per-queue sum %d == port total %d' % (d, sum(per_q), total))
        for p in (backend, fe):
            st = p.port_stats()
            tx_err = backend_tx_errors(b_fwd[0]['TX-dropped']) if p is backend else 0
            check(st.get('RX-errors', 0) == 0 and st.get('TX-errors', 0) == tx_err,
                  '%s: no RX errors, TX-errors %d == %d' % (p.name, st.get('TX-errors', 0), tx_err))
    return True


def case_io(frontend):
    return loopback(frontend, queues=1)


def case_mq(frontend):
    # 2 queues on each side, served by ONE forwarding lcore per process (--nb-cores=1): two
    # forwarders per process cannot be pinned apart on 2 CPUs.
    return loopback(frontend, queues=2)


# ---- bad devargs -----------------------------------------------------------------------------
# One row per rejected devargs string. '{path}' becomes a live vhost-user socket, '{missing}' a
# path where no socket exists. 'key': what the error must name; 'allowed': regexes for the
# allowed values that must appear in the same log line as the key (vnapi only; virtio_user
# rows just check that the probe fails). 'virtio_user': False where net_virtio_user accepts the
# value (it has no range checks for it) or does not have the key's semantics.
BAD_DEVARGS = [
    dict(args='path={path},queues=0', key='queues', allowed=[r'\b1\b'],
         virtio_user=False),
    dict(args='path={path},queues=abc', key='queues', allowed=[r'\b1\b'],
         virtio_user=False),
    dict(args='path={path},queues=-1', key='queues', allowed=[r'\b1\b']),
    dict(args='path={path},queue_size=1000', key='queue_size',
         allowed=[r'(?i)power.of.(2|two)']),
    dict(args='path={path},queue_size=0', key='queue_size',
         allowed=[r'(?i)power.of.(2|two)']),
    dict(args='path={path},mrg_rxbuf=2', key='mrg_rxbuf', allowed=[r'\b0\b.*\b1\b'],
         virtio_user=False),
    dict(args='path={path},event_idx=yes', key='event_idx', allowed=[r'\b0\b.*\b1\b']),
    dict(args='path={path},mac=zz:zz:zz:zz:zz:zz', key='mac',
         allowed=[r'([0-9a-fA-FxX]{2}:){5}[0-9a-fA-FxX]{2}'], virtio_user=False),
    dict(args='path={path},mac=00:11:22:33:44', key='mac',
         allowed=[r'([0-9a-fA-FxX]{2}:){5}[0-9a-fA-FxX]{2}'], virtio_user=False),
    dict(args='path={path},intr_rescue=bogus', key='intr_rescue',
         allowed=[r'signal.*eagain|eagain.*signal']),
    dict(args='path={path},bogus_key=1', key='bogus_key', allowed=[]),
    dict(args='queues=1', key='path', allowed=[]),
    dict(args='path={missing}', key='{missing}', allowed=[]),
]


def probe_failure(frontend, devargs, workdir):
    """testpmd with the front end's vdev and `devargs`; returns (probe_failed, stderr, stdout)."""
    fe = h.FrontEnd(frontend)
    prefix = h.unique('x')
    plugins = [h.prepare_plugin()] if fe.needs_plugin() else []
    vdev = ','.join(['%s0' % fe.driver] + [a for a in devargs.split(',') if a])
    argv = h.testpmd_argv(prefix, h.FRONTEND_LCORES, [vdev], plugins=plugins, interactive=True)
    p = h.start_testpmd('probe', argv, prefix, deadline=60.0)
    try:
        try:
            p.wait_prompt(40.0)
        except h.ProcessDied:
            pass  # testpmd may also exit; the probe verdict comes from the log
    finally:
        # A refused probe leaves testpmd without a port: it must still quit cleanly.
        h.check_exits([p])
    err = p.err
    failed = bool(re.search(r'failed to initialize %s0 device' % fe.driver, err)) \
        or 'No probed ethernet devices' in err + p.out
    return failed, err, p.out


def case_baddevargs(frontend):
    fe = h.FrontEnd(frontend)
    failures = []
    with h.Session() as s:
        # A live backend so that only the devarg under test is wrong.
        backend, sock = h.start_backend(s.workdir, deadline=600.0)
        s.add(backend)
        missing = os.path.join(s.workdir.path, 'no-such-dir', 'nobody.sock')
        for row in BAD_DEVARGS:
            if fe.name == 'virtio_user' and not row.get('virtio_user', True):
                print('- %-40s skipped for virtio_user (it accepts this value)' % row['args'])
                continue
            devargs = row['args'].format(path=sock, missing=missing)
            print('- %s' % devargs, flush=True)
            try:
                failed, err, out = probe_failure(frontend, devargs, s.workdir)
                if re.search(r'failed to parse device|Cannot init plugins|Cannot init EAL', err):
                    raise Failure('EAL did not get to probing (driver not registered, plugin '
                                  'not loaded?)')
                if not failed:
                    raise Failure('probe did not fail')
                if fe.name == 'vnapi':
                    key = row['key'].format(path=sock, missing=missing)
                    lines = [ln for ln in err.splitlines() if key in ln]
                    if not lines:
                        raise Failure('no stderr line names %r' % key)
                    for rx in row['allowed']:
                        if not any(re.search(rx, ln) for ln in lines):
                            raise Failure('no stderr line naming %r gives the allowed values '
                                          '(/%s/); lines: %s' % (key, rx, lines))
                    print('    ok: %s' % lines[0].strip())
                else:
                    print('    ok: probe failed')
            except Failure as e:
                failures.append('%s: %s' % (devargs, e))
                print('    FAIL: %s' % e)
                print('\n'.join('      | ' + ln for ln in err.splitlines()[-12:]))
        # The bad probes did not disturb the backend.
        check(backend.alive(), 'backend still running')
    check(not failures, 'all %d bad devargs rejected as expected%s'
          % (len(BAD_DEVARGS), ''.join('\n    ' + f for f in failures)))
    return True


# ---- link state --------------------------------------------------------------------------------

def case_lsc(frontend):
    """Killing the backend (SIGKILL, no goodbye on the socket) must give the front end a
    link-down LSC event; the front end survives and quits cleanly."""
    with h.Session() as s:
        backend, fe = connect(s, frontend, fe_app_extra=['--print-event', 'intr_lsc'])
        # Some traffic first so that the queues are live when the peer dies.
        backend.start_fwd('txonly')
        fe.start_fwd('rxonly')
        h.poll_until(lambda: fe.port_stats()['RX-packets'] > 0, 15.0,
                     what='front end receiving')
        mark = fe.mark()
        backend.kill()                        # SIGKILL by PID
        rc = backend.wait_exit(10.0)
        check(rc is not None, 'backend gone (rc %s)' % rc)
        # Each check below is independent: record a failure and go on, so that one run tells
        # everything (event, link state, survival, clean exit).
        failures = []
        try:
            fe.wait_for(h.LSC_RE, 20.0, since=mark, what='LSC event after the backend died')
        except h.Timeout:
            failures.append('no "Port 0: link state change event" within 20 s of the kill')
            print('  FAIL: %s' % failures[-1])
        try:
            h.poll_until(lambda: not fe.link_up(), 10.0, what='front-end link down')
            print("  ok: front end's 'show port info 0' says Link status: down", flush=True)
        except h.Timeout:
            failures.append("'show port info 0' still says Link status: up")
            print('  FAIL: %s' % failures[-1])
        # Link down and nothing since: exactly one event (net_vnapi); the reference may
        # report the dead peer more than once.
        n_lsc = len(fe.find_all(h.LSC_RE, since=mark))
        if n_lsc != 1 and (n_lsc == 0 or h.FrontEnd(frontend).name == 'vnapi'):
            failures.append('%d link state change events after the kill, expected 1' % n_lsc)
            print('  FAIL: %s' % failures[-1])
        else:
            print('  ok: %d link state change event(s) after the kill' % n_lsc, flush=True)
        check(fe.alive(), 'front end still running')
        fe_fwd = fe.stop_fwd()
        check(0 in fe_fwd, 'front end still answers commands (stop: RX %s)'
              % fe_fwd.get(0, {}).get('RX-packets'))
        if h.FrontEnd(frontend).name == 'virtio_user' and _SERIES < (23, 11):
            # Known DPDK 22.11 net_virtio_user behaviour: at port close it writes vhost-user
            # messages to the dead peer's socket without MSG_NOSIGNAL and testpmd dies of
            # SIGPIPE during "Closing ports...". Expected of the reference driver only.
            fe.expect_exit(-signal.SIGPIPE)
        mark = fe.mark()
        h.check_exits([fe])
        if fe.returncode == 0:
            fe.wait_for(r'^Bye\.\.\.', 1.0, since=mark, what='Bye...')
        check(not re.search(r'Segmentation fault|Aborted|PANIC', fe.err + fe.out),
              'no crash message')
        check(not failures, 'link-down reported' + ''.join('\n    ' + f for f in failures))
    return True


# ---- csum: testpmd's csum engine on the front end --------------------------------------
# TCP packets come from a pcap file: testpmd generates only UDP. The back end testpmd has two
# ports, net_vhost0 (tso=1, port 0) and net_pcap0 (port 1) in io mode: the pcap's packets go to
# the front end, whose csum engine ('csum set tcp hw', 'csum set ip sw', 'tso set') sends them
# back; net_vhost completes the TCP checksums the front end left to it (it does so in software
# when its port has no rx checksum offload) and the back end writes them to the output pcap.
# Every output packet must be the input packet with correct IPv4 and TCP checksums.

CSUM_TSO_SEGSZ = 800
# (IP version, TCP payload bytes): small ones, and ones above the TSO segment size.
CSUM_PKTS = [(4, 146), (6, 146), (4, 1400), (6, 1400), (4, 1), (6, 900)] * 40


def _cksum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def _csum_packet(ver, payload, seq):
    """Ethernet + IPv4/IPv6 + TCP + payload, with both checksums 0 (wrong)."""
    eth = bytes.fromhex('020000000002' '020000000001') + (b'\x08\x00' if ver == 4 else b'\x86\xdd')
    data = bytes((i * 7 + seq) & 0xff for i in range(payload))
    tcp = struct.pack('!HHIIBBHHH', 40000 + seq % 1000, 80, seq * 1000, 1, 5 << 4, 0x18,
                      65535, 0, 0)
    if ver == 4:
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp) + payload, seq & 0xffff, 0,
                         64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    else:
        ip = struct.pack('!IHBB16s16s', 6 << 28, len(tcp) + payload, 6, 64,
                         bytes(range(16)), bytes(range(16, 32)))
    return eth + ip + tcp + data


def _csum_ok(pkt):
    """(IPv4 header checksum correct or IPv6, TCP checksum correct) of an output packet."""
    ver = pkt[14] >> 4
    if ver == 4:
        ihl = (pkt[14] & 0xf) * 4
        ip, l4 = pkt[14:14 + ihl], pkt[14 + ihl:]
        ip_ok = _cksum(ip) == 0xffff
        pseudo = ip[12:20] + struct.pack('!BBH', 0, 6, len(l4))
    else:
        ip, l4 = pkt[14:54], pkt[54:]
        ip_ok = True
        pseudo = ip[8:40] + struct.pack('!IxxxB', len(l4), 6)
    return ip_ok, _cksum(pseudo + l4) == 0xffff


def _pcap_write(path, pkts):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(pkts):
            f.write(struct.pack('<IIII', i, 0, len(p), len(p)))
            f.write(p)


def _pcap_read(path):
    out = []
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return out
        magic = struct.unpack('<I', hdr[:4])[0]
        endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return out
            _, _, incl, _ = struct.unpack(endian + 'IIII', rec)
            out.append(f.read(incl))


def case_csum(frontend):
    """testpmd csum engine on the front end: TCP checksum and TSO requests answered by the back
    end; counters equal end to end; every output packet carries correct checksums."""
    with h.Session() as s:
        pkts = [_csum_packet(v, n, i) for i, (v, n) in enumerate(CSUM_PKTS)]
        in_pcap = os.path.join(s.workdir.path, 'in.pcap')
        out_pcap = os.path.join(s.workdir.path, 'out.pcap')
        _pcap_write(in_pcap, pkts)
        sock = s.workdir.socket()
        prefix = h.unique('b')
        argv = h.testpmd_argv(prefix, h.BACKEND_LCORES,
                              ['net_vhost0,iface=%s,queues=1,tso=1' % sock,
                               'net_pcap0,rx_pcap=%s,tx_pcap=%s' % (in_pcap, out_pcap)],
                              app_extra=['--no-flush-rx'])  # 'start' would drain the pcap
        backend = s.add(h.start_testpmd('backend', argv, prefix, deadline=PROC_DEADLINE))
        backend.wait_for(r'\(%s\) binding succeeded' % re.escape(sock), 60.0,
                         what='vhost-user socket bound')
        backend.wait_prompt(60.0)
        check('net_pcap' in backend.cmd('show port info 1'), 'back end port 1 is net_pcap0')
        mark = backend.mark()
        fe = s.add(h.start_frontend(frontend, sock, deadline=PROC_DEADLINE))
        h.wait_backend_ready(backend, since=mark, timeout=30.0)
        h.poll_until(backend.link_up, 15.0, what='backend link up')
        h.poll_until(fe.link_up, 15.0, what='front-end link up')

        info = fe.cmd('show port info 0')
        print('  front end: %s' % ' '.join(l.strip() for l in info.splitlines()
                                          if 'offload' in l.lower()))
        fe.cmd('port stop 0')
        for c in ('csum set ip sw 0', 'csum set tcp hw 0', 'tso set %d 0' % CSUM_TSO_SEGSZ):
            r = fe.cmd(c)
            check('not supported' not in r and 'Invalid' not in r and 'error' not in r.lower(),
                  '%r accepted: %s' % (c, ' '.join(r.split())[:160]))
        mark = backend.mark()
        r = fe.cmd('port start 0', timeout=30.0)
        check('Fail' not in r, 'front end restarted with the offloads: %s'
              % ' '.join(r.split())[:160])
        h.poll_until(fe.link_up, 15.0, what='front-end link up after restart')
        # The pcap's packets are read once: net_vhost must be ready before they come.
        h.wait_backend_ready(backend, since=mark, timeout=30.0)
        h.poll_until(backend.link_up, 15.0, what='backend link up after restart')
        fe.cmd('csum show 0')
        fe.start_fwd('csum')
        backend.start_fwd('io')
        n = len(pkts)
        h.wait_counter(backend, 'RX-packets', n, DRAIN_S, port=1, what='pcap packets read')
        try:
            h.wait_counter(backend, 'TX-packets', n, DRAIN_S, port=1, what='pcap packets written')
        except h.Timeout:
            print('  front end stats: %s\n  xstats: %s\n  back end stats: %s\n  front end tail:\n%s'
                  % (fe.port_stats(0), fe.port_xstats(), backend.port_stats_all(), fe.tail(30)))
            raise
        fe_fwd = fe.stop_fwd()
        b_fwd = backend.stop_fwd()
        fe_st, b_vh = fe.port_stats(0), backend.port_stats(0)
        check(b_vh['TX-packets'] == n and fe_st['RX-packets'] == n,
              'back end net_vhost TX-packets %d == front end RX-packets %d == %d'
              % (b_vh['TX-packets'], fe_st['RX-packets'], n))
        check(fe_st['TX-packets'] == n and b_vh['RX-packets'] == n,
              'front end TX-packets %d == back end net_vhost RX-packets %d == %d'
              % (fe_st['TX-packets'], b_vh['RX-packets'], n))
        check(fe_fwd[0]['RX-packets'] == n and fe_fwd[0]['TX-packets'] == n and
              fe_fwd[0]['TX-dropped'] == 0,
              'csum engine: RX %d TX %d dropped %d' % (fe_fwd[0]['RX-packets'],
                                                      fe_fwd[0]['TX-packets'],
                                                      fe_fwd[0]['TX-dropped']))
        check(not re.search(r'Preparing packet burst to transmit failed', fe.text()),
              'no tx_prepare failure reported by the csum engine')
        for p in (backend, fe):
            st = p.port_stats(0)
            check(st.get('RX-errors', 0) == 0 and st.get('TX-errors', 0) == 0,
                  '%s: no RX/TX errors' % p.name)
        xs = fe.port_xstats()
        check(xs.get('tx_q0_errors', -1) == 0, 'front end tx_q0_errors %s' % xs.get('tx_q0_errors'))
        print('  back end forward stats: %s' % b_fwd)
        # Stop the back end so that net_pcap flushes the output file.
        backend.stop()
        out = _pcap_read(out_pcap)
        check(len(out) == n, 'output pcap holds %d packets (want %d)' % (len(out), n))
        bad = []
        for i, (a, b) in enumerate(zip(pkts, out)):
            ip_ok, tcp_ok = _csum_ok(b)
            ver = a[14] >> 4
            same = len(a) == len(b)
            # The csum engine rewrites both MAC addresses (bytes 0-11).
            if same and ver == 4:
                same = a[12:24] == b[12:24] and a[26:50] == b[26:50] and a[52:] == b[52:]
            elif same:
                same = a[12:70] == b[12:70] and a[72:] == b[72:]
            if not (ip_ok and tcp_ok and same):
                bad.append('#%d IPv%d %dB: ip %s tcp %s bytes %s' % (i, ver, len(a), ip_ok,
                                                                      tcp_ok, same))
        check(not bad, 'every output packet is its input with correct IPv4 and TCP checksums'
              + ''.join('\n    ' + x for x in bad[:10]))
    return True


CASES = {
    'txonly': case_txonly,
    'rxonly': case_rxonly,
    'io': case_io,
    'mq': case_mq,
    'baddevargs': case_baddevargs,
    'lsc': case_lsc,
    'csum': case_csum,
}


def main(argv):
    if len(argv) < 2 or (argv[1] not in CASES and argv[1] != 'all'):
        print(__doc__, file=sys.stderr)
        return 2
    frontend = argv[2] if len(argv) > 2 else 'vnapi'
    names = list(CASES) if argv[1] == 'all' else [argv[1]]
    h.install_guards()
    fe = h.FrontEnd(frontend)
    if fe.needs_plugin():
        try:
            h.plugin_source()
        except h.HarnessError as e:
            print('SKIP: %s' % e)
            return SKIP
    rc = 0
    for name in names:
        print('=== %s %s' % (name, frontend), flush=True)
        t0 = time.monotonic()
        try:
            CASES[name](frontend)
            print('=== PASS %s %s (%.1f s)' % (name, frontend, time.monotonic() - t0), flush=True)
        except (Failure, h.HarnessError) as e:
            print('=== FAIL %s %s: %s' % (name, frontend, e), flush=True)
            rc = 1
    return rc


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv))
    finally:
        h._end_all()
