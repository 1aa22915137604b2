#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The back end dies and comes back: a front end in testpmd must recover by itself.

Usage: test_reconnect.py MODE FRONTEND [CYCLES]
  MODE      client: the front end connects to net_vhost (vhost-user server);
            server: the front end listens (server=1), net_vhost connects (client=1)
  FRONTEND  vnapi | virtio_user, optionally with devargs ('vnapi:packed_vq=1')
  CYCLES    back-end restarts (default 5)
Exit status 0 = pass, 1 = fail.

Each cycle: traffic runs (odd cycles: the front end transmits; even cycles: it forwards what the
back end sends), the back end is SIGKILLed, a new one started on the same socket. The front end
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

TRAFFIC_S = float(os.environ.get('VNAPI_TEST_TRAFFIC_S', '1'))
DRAIN_S = 30.0
PROC_DEADLINE = 300.0
LSC_RE = r'Port 0: link state change event'


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)
    print('  ok: %s' % msg, flush=True)


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


def fd_count(pid):
    return len(os.listdir('/proc/%d/fd' % pid))


def mempool_in_use(p):
    """Mbufs of the front end's pool that are not in the pool (testpmd's dump_mempool)."""
    r = p.cmd('dump_mempool')
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
        fds0 = fd_count(fe.pid)
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
            fe.wait_for(LSC_RE, 20.0, since=mark, what='LSC event (link down)')
            h.poll_until(lambda: not fe.link_up(), 10.0, what='front-end link down')
            if is_vnapi and c % 2:
                # Still transmitting into a link that is down: refused and counted.
                h.poll_until(lambda: xstat(fe, 'tx_q0_refused') > refused0, 10.0,
                             what='tx_q0_refused growing while down')
            if mode == 'client':
                os.unlink(sock)  # the dead server's socket file: lib/vhost will not bind over it
            mark_up = fe.mark()
            t_new = time.monotonic()
            backend = start_backend(s, mode, sock)
            t_ready = time.monotonic()
            fe.wait_for(LSC_RE, 30.0, since=mark_up, what='LSC event (link up)')
            t_up = fe.find_all(LSC_RE, since=mark_up)[0][0].t
            h.poll_until(fe.link_up, 10.0, what='front-end link up')
            lsc = len(fe.find_all(LSC_RE, since=mark))
            check(lsc == 2 if is_vnapi else lsc >= 2,
                  '%d LSC events for the outage (down, up)' % lsc)
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
            n = fd_count(fe.pid)
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


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('client', 'server'):
        print(__doc__)
        return 2
    cycles = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    try:
        run(sys.argv[1], sys.argv[2], cycles)
    except (Failure, h.HarnessError) as e:
        print('FAIL: %s' % e, flush=True)
        return 1
    print('PASS', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
