#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The back end dies and comes back: a front end in testpmd must recover by itself.

Usage: test_reconnect.py MODE FRONTEND [CYCLES]
  MODE      client: the front end connects to net_vhost (vhost-user server);
            server: the front end listens (server=1), net_vhost connects (client=1);
            intr: vnapi-fwd in interrupt mode is the front end (see run_intr; $VNAPI_FWD);
            intr_l3fwd: the same with l3fwd-power --interrupt-only ($VNAPI_L3FWD_POWER);
            promisc: promiscuous/allmulticast off refused, foreign frames delivered (run_promisc)
  FRONTEND  vnapi | virtio_user, optionally with devargs ('vnapi:packed_vq=1')
  CYCLES    back-end restarts (default 3)
Exit status 0 = pass, 1 = fail.

Each cycle: traffic runs (odd cycles: the front end transmits; even cycles: it forwards what the
back end sends), the back end is SIGKILLed, a new one started on the same socket; meanwhile vnapi
gets 'port stop' / 'port start' (odd) or 'port stop' / 'port reset' / 'port start' (even), which
must succeed without a back end and leave the reconnection to itself. The front end
must print one LSC event for the link going down and one for it coming back, with nobody
touching it; then the traffic sent in each direction is counted exactly, the front end's fd
count is what it was at the start, and after 'port stop' its mbuf pool holds exactly the mbufs
it held at the start (every buffer of the old rings reclaimed). vnapi must also have counted
what it refused while down (tx_q0_refused) and one reconnection per cycle. The recovery time
(new back end's socket ready -> front end's link-up event) is printed per cycle.
"""

import os
import re
import sys
import time

from vnapitools import harness as h
from vnapitools.harness import Failure, check

TRAFFIC_S = float(os.environ.get('VNAPI_TEST_TRAFFIC_S', '1'))
DRAIN_S = 30.0
PROC_DEADLINE = 300.0


def start_backend(s, mode, sock):
    """net_vhost in testpmd: the server (client mode of the front end) or the client."""
    if mode == 'client':
        b, _ = h.start_backend(s.workdir, sock=sock, deadline=PROC_DEADLINE)
        return s.add(b)
    prefix = h.unique('b')
    vdev = 'net_vhost0,iface=%s,queues=1,client=1' % sock
    argv = h.testpmd_argv(prefix, h.BACKEND_LCORES, [vdev])
    b = s.add(h.start_testpmd('backend', argv, prefix, deadline=PROC_DEADLINE))
    b.wait_prompt(60.0)
    return b


def mempool_in_use(p):
    """Mbufs of the front end's pool that are not in the pool (testpmd's dump_mempool;
    25.11's testpmd spells it 'dump mempool')."""
    r = p.cmd('dump_mempool')
    if 'Command not found' in r:
        r = p.cmd('dump mempool')
    size = re.search(r'\n\s*size=(\d+)', r)
    cached = re.search(r'total_cache_count=(\d+)', r)
    common = re.search(r'common_pool_count=(\d+)', r)
    if not (size and cached and common):
        raise Failure('dump_mempool: no size / total_cache_count / common_pool_count:\n%s'
                      % r[-2000:])
    return int(size.group(1)) - int(cached.group(1)) - int(common.group(1))


def xstat(p, name):
    return p.port_xstats().get(name)


def one_way(tx, rx):
    """tx sends for TRAFFIC_S; rx must receive exactly what tx's PMD accepted."""
    for p in (tx, rx):
        p.cmd('clear port stats all')
    rx.start_fwd('rxonly')
    tx.start_fwd('txonly')
    time.sleep(TRAFFIC_S)  # traffic time, not a wait for an event
    tx.stop_fwd()
    sent = tx.port_stats()['TX-packets']
    h.wait_counter(rx, 'RX-packets', sent, DRAIN_S)
    rx.stop_fwd()
    check(sent > 0 and rx.port_stats()['RX-packets'] == sent,
          '%s -> %s: %d sent, %d received' % (tx.name, rx.name, sent, sent))


def port_cycle_in_use(fe):
    """'port stop' takes every buffer back: the pool's in-use count then; 'port start' again."""
    r = fe.cmd('port stop 0', timeout=30.0)
    if 'Stopping ports' not in r and 'Done' not in r:
        raise Failure('port stop 0: %r' % r)
    n = mempool_in_use(fe)
    fe.cmd('port start 0', timeout=30.0)
    return n


def run(mode, frontend, cycles):
    fe_spec = h.FrontEnd(frontend)
    is_vnapi = fe_spec.name == 'vnapi'
    extra = ['server=1'] if mode == 'server' else []
    recoveries = []
    with h.Session('rc') as s:
        sock = s.workdir.socket()
        if mode == 'client':
            backend = start_backend(s, mode, sock)
            fe = s.add(h.start_frontend(fe_spec, sock, deadline=PROC_DEADLINE,
                                        extra_devargs=extra,
                                        app_extra=['--print-event', 'intr_lsc']))
        else:
            # net_virtio_user's server mode waits in probe for the back end: start the front
            # end without waiting for its prompt, then the back end.
            fe = s.add(h.start_frontend(fe_spec, sock, deadline=PROC_DEADLINE,
                                        extra_devargs=extra, wait=False,
                                        app_extra=['--print-event', 'intr_lsc']))
            h.poll_until(lambda: os.path.exists(sock), 30.0, interval=0.05,
                         what='front end listening on %s' % sock)
            backend = start_backend(s, mode, sock)
            fe.wait_prompt(60.0)
        h.poll_until(backend.link_up, 30.0, what='backend link up')
        h.poll_until(fe.link_up, 30.0, what='front-end link up')
        one_way(backend, fe)
        one_way(fe, backend)
        in_use0 = port_cycle_in_use(fe)
        h.poll_until(fe.link_up, 30.0, what='front-end link up after port start')
        fds0 = h.open_fds_settled(fe.pid)
        print('  start: front end holds %d mbufs when stopped, %d fds' % (in_use0, fds0))

        for c in range(1, cycles + 1):
            print('cycle %d/%d' % (c, cycles), flush=True)
            refused0 = xstat(fe, 'tx_q0_refused') if is_vnapi else None
            if c % 2:
                backend.start_fwd('rxonly')
                fe.start_fwd('txonly')
            else:
                fe.start_fwd('io')
                backend.start_fwd('txonly')
            h.poll_until(lambda: sum(fe.port_stats().get(k, 0)
                                     for k in ('RX-packets', 'TX-packets')) > 0,
                         15.0, what='traffic through the front end')
            mark = fe.mark()
            backend.kill()                       # SIGKILL by PID, mid-traffic
            check(backend.wait_exit(10.0) is not None, 'back end killed')
            fe.wait_for(h.LSC_RE, 20.0, since=mark, what='LSC event (link down)')
            h.poll_until(lambda: not fe.link_up(), 10.0, what='front-end link down')
            if is_vnapi and c % 2:
                # Still transmitting into a link that is down: refused and counted.
                h.poll_until(lambda: xstat(fe, 'tx_q0_refused') > refused0, 10.0,
                             what='tx_q0_refused growing while down')
            if is_vnapi:
                # The application's own ops while the back end is away: they must work and
                # must not disturb the reconnection (odd: stop/start; even: stop/reset/start).
                fe.stop_fwd()
                fe.cmd('port stop 0', timeout=30.0)
                if c % 2 == 0:
                    r = fe.cmd('port reset 0', timeout=30.0)
                    check('Fail' not in r and 'rror' not in r, 'port reset 0 while down: %r'
                          % r.strip()[-80:])
                r = fe.cmd('port start 0', timeout=30.0)
                check('Fail' not in r and 'rror' not in r, 'port start 0 while down: %r'
                      % r.strip()[-80:])
                check(not fe.link_up(), 'link still down after port start without a back end')
            if mode == 'client':
                os.unlink(sock)  # the dead server's socket file: lib/vhost will not bind over it
            mark_up = fe.mark()
            t_new = time.monotonic()
            backend = start_backend(s, mode, sock)
            t_ready = time.monotonic()
            fe.wait_for(h.LSC_RE, 30.0, since=mark_up, what='LSC event (link up)')
            t_up = fe.find_all(h.LSC_RE, since=mark_up)[0][0].t
            h.poll_until(fe.link_up, 10.0, what='front-end link up')
            lsc = len(fe.find_all(h.LSC_RE, since=mark))
            check(lsc == 2 if is_vnapi else lsc >= 2,
                  '%d LSC events for the outage (down, up)' % lsc)
            for ln, _ in fe.find_all(r'vnapi: ', since=mark):
                print('  | %+.3f s %s' % (ln.t - t_ready, ln.text[:160]))
            recoveries.append((t_up - t_ready, t_up - t_new))
            print('  recovery: %.3f s after the new back end was ready (%.3f s after its start)'
                  % recoveries[-1], flush=True)
            fe.stop_fwd()
            h.poll_until(backend.link_up, 30.0, what='backend link up')
            one_way(backend, fe)
            one_way(fe, backend)
            n = port_cycle_in_use(fe)
            check(n == in_use0, 'front end holds %d mbufs when stopped (start: %d)' % (n, in_use0))
            h.poll_until(fe.link_up, 30.0, what='front-end link up after port start')
            n = h.open_fds_back_to(fe.pid, fds0)
            check(n == fds0, 'front end has %d fds (start: %d)' % (n, fds0))
            if is_vnapi:
                check(xstat(fe, 'reconnects') == c, 'reconnects xstat == %d' % c)
        check(fe.alive(), 'front end still running')
        check(not re.search(r'Segmentation fault|Aborted|PANIC', fe.err + fe.out),
              'no crash message')
    avg = sum(r[0] for r in recoveries) / len(recoveries)
    print('RESULT mode=%s frontend=%s cycles=%d recovery_avg_s=%.3f recovery_max_s=%.3f '
          'recovery_from_start_avg_s=%.3f'
          % (mode, frontend, cycles, avg, max(r[0] for r in recoveries),
             sum(r[1] for r in recoveries) / len(recoveries)), flush=True)
    return True


# l3fwd-power logs every rx-interrupt wakeup (INFO, logtype user1); epoll timeouts are silent.
L3FWD_WAKEUP_RE = r'lcore \d+ is waked up from rx interrupt'


def run_intr(frontend, cycles, forwarder='vnapi-fwd'):
    """A forwarder in interrupt mode (its lcore asleep in rte_epoll_wait on the rx queue's
    eventfd whenever the queue is empty) on the front end: vnapi-fwd --mode interrupt, or DPDK's
    l3fwd-power --interrupt-only (which routes every IPv4 packet back out of its one port). The
    back end is killed and restarted while it sleeps. After each recovery, 128 packets (4 bursts
    of 32, fewer than a ring) sent by the back end must all come back, with nobody touching the
    forwarder: the lcore woke on the same registration (l3fwd-power: it logged rx-interrupt
    wakeups since the restart; its 10 ms epoll timeouts alone would also drain the queue, and are
    not logged). During each outage the forwarder must stay idle (CPU, no busy loop).
    With a vnapi front end, its xstats (telemetry) must show after the start and after every
    cycle: rx_q0_intr_unnotified_work == 0 (the driver's lost-wakeup counter: no armed wait ended
    with work the back end never announced, across the outages and reconnections included), and
    rx_q0_intr_wakeups grown since the previous check (the echo woke the sleeping lcore)."""
    env = 'VNAPI_FWD' if forwarder == 'vnapi-fwd' else 'VNAPI_L3FWD_POWER'
    fwd_bin = os.environ.get(env)
    if not fwd_bin:
        raise Failure('%s (the %s binary) is not set' % (env, forwarder))
    fe_spec = h.FrontEnd(frontend)
    recoveries = []
    with h.Session('rci') as s:
        sock = s.workdir.socket()
        backend = start_backend(s, 'client', sock)
        prefix = h.unique('f')
        vdev = fe_spec.vdev(path=sock)
        argv = [fwd_bin, '--no-huge', '-m', '512', '--no-pci', '--lcores', '0@1',
                '--file-prefix', prefix, '-d', h.prepare_plugin(), '--vdev', vdev]
        if forwarder == 'vnapi-fwd':
            argv += ['--', '--config', '(0,0,0)', '--mode', 'interrupt', '--fwd', 'io',
                     '--duration', str(int(PROC_DEADLINE - 30))]
            ready = r'^FORWARDING'
        else:
            argv += ['--log-level=user1:info', '--', '-p', '0x1', '--config=(0,0,0)',
                     '--interrupt-only']
            ready = r'entering main interrupt loop on lcore'
        fwd = s.add(h.DpdkProcess(forwarder, argv, deadline=PROC_DEADLINE,
                                  cleanup=[h._rm_runtime(prefix)]).start())
        fwd.wait_for(ready, 30.0, what='%s forwarding' % forwarder)
        h.poll_until(backend.link_up, 30.0, what='backend link up')
        is_vnapi = fe_spec.name == 'vnapi'
        wakeups = [0]

        def judge_intr(label):
            """The front end's interrupt xstats after an echo (vnapi only)."""
            if not is_vnapi:
                return
            try:
                xs = h.telemetry(prefix, '/ethdev/xstats,0').get('/ethdev/xstats')
            except (OSError, ValueError) as e:
                raise Failure('%s: telemetry of %s: %s' % (label, forwarder, e))
            names = ('rx_q0_intr_unnotified_work', 'rx_q0_intr_wakeups',
                     'rx_q0_intr_notifications', 'rx_q0_intr_rescues', 'reconnects')
            missing = [n for n in names if not isinstance(xs, dict) or n not in xs]
            if missing:
                raise Failure('%s: xstat(s) %s missing from the front end' % (label, missing))
            print('  %s: xstats %s' % (label, ' '.join('%s=%d' % (n, xs[n]) for n in names)),
                  flush=True)
            check(xs['rx_q0_intr_unnotified_work'] == 0,
                  '%s: rx_q0_intr_unnotified_work %d == 0 (no lost wakeup)'
                  % (label, xs['rx_q0_intr_unnotified_work']))
            check(xs['rx_q0_intr_wakeups'] > wakeups[0],
                  '%s: rx_q0_intr_wakeups %d > %d (the echo woke the lcore)'
                  % (label, xs['rx_q0_intr_wakeups'], wakeups[0]))
            wakeups[0] = xs['rx_q0_intr_wakeups']

        def echo(label):
            mark = fwd.mark()
            backend.cmd('clear port stats all')
            backend.cmd('set fwd rxonly')
            r = backend.cmd('start tx_first 4')
            if 'packet forwarding' not in r:
                raise Failure('start tx_first: %r' % r)
            sent = 128
            h.wait_counter(backend, 'RX-packets', sent, DRAIN_S)
            backend.stop_fwd()
            st = backend.port_stats()
            check(st['TX-packets'] == sent, '%s: back end sent %d' % (label, st['TX-packets']))
            check(st['RX-packets'] == sent, '%s: all %d came back through the sleeping %s'
                  % (label, st['RX-packets'], forwarder))
            if forwarder == 'l3fwd-power':
                n = len(fwd.find_all(L3FWD_WAKEUP_RE, since=mark))
                check(n > 0, '%s: l3fwd-power logged %d rx-interrupt wakeups for them'
                      % (label, n))

        echo('start')
        judge_intr('start')
        fds0 = h.open_fds_settled(fwd.pid)
        for c in range(1, cycles + 1):
            print('cycle %d/%d' % (c, cycles), flush=True)
            time.sleep(0.5)  # vnapi-fwd armed and asleep before the kill
            backend.kill()
            check(backend.wait_exit(10.0) is not None, 'back end killed')
            os.unlink(sock)
            c0, m0 = h.proc_cpu_s(fwd.pid), time.monotonic()
            time.sleep(1.0)  # the outage: vnapi-fwd must not spin meanwhile
            c1, m1 = h.proc_cpu_s(fwd.pid), time.monotonic()
            cpu_pct = 100.0 * (c1 - c0) / (m1 - m0)
            check(cpu_pct < 5.0, '%s CPU during the outage %.2f %% < 5 %%'
                  % (forwarder, cpu_pct))
            t_new = time.monotonic()
            backend = start_backend(s, 'client', sock)
            t_ready = time.monotonic()
            h.poll_until(backend.link_up, 30.0, interval=0.05, what='backend link up')
            recoveries.append(time.monotonic() - t_ready)
            print('  recovery: back end link up %.3f s after it was ready (%.3f s after start)'
                  % (recoveries[-1], time.monotonic() - t_new), flush=True)
            echo('cycle %d' % c)
            judge_intr('cycle %d' % c)
            n = h.open_fds_back_to(fwd.pid, fds0)
            check(n == fds0, '%s has %d fds (start: %d)' % (forwarder, n, fds0))
        check(fwd.alive(), '%s still running' % forwarder)
        # SIGINT, while the back end is still up: a clean end, exit status 0.
        h.check_exits([fwd])
        if forwarder == 'vnapi-fwd':
            m = fwd.find_all(r'^FINAL rx=(\d+) tx=(\d+) dropped=(\d+)')
            check(len(m) == 1 and int(m[0][1].group(1)) == int(m[0][1].group(2)) ==
                  128 * (cycles + 1) and m[0][1].group(3) == '0',
                  'vnapi-fwd FINAL rx = tx = %d, dropped 0 (%s)'
                  % (128 * (cycles + 1), m[0][1].group(0) if m else 'no FINAL line'))
    print('RESULT mode=intr forwarder=%s frontend=%s cycles=%d recovery_avg_s=%.3f'
          % (forwarder, frontend, cycles, sum(recoveries) / len(recoveries)), flush=True)
    return True


def run_promisc(frontend):
    """Promiscuous and allmulticast cannot be turned off (the back end filters nothing and
    neither does vnapi): testpmd's 'set promisc/allmulti 0 off' must fail with 'Operation not
    supported', the port must still say enabled, and frames for other MAC addresses (testpmd
    txonly sends to 02:00:00:00:00:00) are all delivered, exactly counted."""
    with h.Session('pm') as s:
        sock = s.workdir.socket()
        backend = start_backend(s, 'client', sock)
        fe = s.add(h.start_frontend(frontend, sock))
        h.poll_until(fe.link_up, 30.0, what='front-end link up')
        for what, cmd, field in (('promiscuous', 'set promisc 0 off', 'Promiscuous mode'),
                                 ('allmulticast', 'set allmulti 0 off', 'Allmulticast mode')):
            mark = fe.mark()
            fe.cmd(cmd)
            fe.wait_for(r'Operation not supported', 5.0, since=mark,
                        what='%s off refused' % what)
            check(fe.port_info().get(field) == 'enabled',
                  "'%s' refused (-ENOTSUP), port info still says %s: enabled" % (cmd, field))
        check(fe.port_info().get('MAC address') != '02:00:00:00:00:00',
              'the frames below are not addressed to the port')
        one_way(backend, fe)
    return True


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == 'promisc':
        return h.run_checks(run_promisc, sys.argv[2])
    if len(sys.argv) < 3 or sys.argv[1] not in ('client', 'server', 'intr', 'intr_l3fwd'):
        print(__doc__)
        return 2
    cycles = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if sys.argv[1] in ('intr', 'intr_l3fwd'):
        return h.run_checks(run_intr, sys.argv[2], cycles,
                            'vnapi-fwd' if sys.argv[1] == 'intr' else 'l3fwd-power')
    return h.run_checks(run, sys.argv[1], sys.argv[2], cycles)


if __name__ == '__main__':
    sys.exit(main())
