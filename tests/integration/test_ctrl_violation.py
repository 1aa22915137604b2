#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""A back end that writes on the vhost-user socket outside any request.

Usage: test_ctrl_violation.py
Exit status 0 = pass, 1 = fail.

The back end is a minimal vhost-user server in this script (it answers the control requests,
never touches the rings). net_vnapi runs in testpmd, started, link up. Three times the back end
writes a message nobody asked for (20 bytes; the third carries an eventfd). Each time vnapi must
drop the connection (the back end reads EOF), reconnect by itself (a new connection, negotiated
and started again), report link down and up with an LSC event each, and count it: port xstats
ctrl_protocol_violations = reconnects = the number of messages. The violation is logged once
(one line for the three). The port's connection thread reads what it is sent: testpmd's CPU stays
near idle after each message (a level-triggered watch that only peeked would spin at 100 %).
"""

import array
import os
import re
import socket
import struct
import sys
import threading
import time

from vnapitools import harness as h
from vnapitools.harness import Failure, check

VIOLATION_RE = r'wrote \d+ bytes outside any request'
REPLY = 0x1 | 0x4
FEATURES = (1 << 32) | (1 << 30)  # VERSION_1, PROTOCOL_FEATURES
GET_FEATURES, GET_VRING_BASE, GET_PROTOCOL_FEATURES, GET_QUEUE_NUM = 1, 11, 15, 17


class MiniBackend:
    """Accepts one connection at a time and answers vnapi's requests."""

    def __init__(self, path):
        self.path = path
        self.lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.lsock.bind(path)
        self.lsock.listen(4)
        self.lock = threading.Condition()
        self.conn = None
        self.connections = 0
        self.eofs = 0
        self.started = 0          # SET_VRING_KICK of vring 1 seen: the rings were handed over
        self.stop = False
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _recv_exact(self, c, n):
        buf = b''
        while len(buf) < n:
            data, anc, _, _ = c.recvmsg(n - len(buf), socket.CMSG_SPACE(8 * 4))
            for level, typ, d in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    fds = array.array('i')
                    fds.frombytes(d[:len(d) - len(d) % fds.itemsize])
                    for fd in fds:
                        os.close(fd)
            if not data:
                return None
            buf += data
        return buf

    def _serve(self, c):
        while True:
            hdr = self._recv_exact(c, 12)
            if hdr is None:
                return
            req, _flags, size = struct.unpack('<III', hdr)
            payload = self._recv_exact(c, size) if size else b''
            if payload is None:
                return
            if req in (GET_FEATURES, GET_PROTOCOL_FEATURES, GET_QUEUE_NUM):
                val = {GET_FEATURES: FEATURES, GET_PROTOCOL_FEATURES: 0, GET_QUEUE_NUM: 1}[req]
                c.sendall(struct.pack('<IIIQ', req, REPLY, 8, val))
            elif req == GET_VRING_BASE:
                idx = struct.unpack('<I', payload[:4])[0]
                c.sendall(struct.pack('<IIIII', req, REPLY, 8, idx, 0))
            elif req == 12 and (struct.unpack('<Q', payload)[0] & 0xff) == 1:  # SET_VRING_KICK
                with self.lock:
                    self.started += 1
                    self.lock.notify_all()

    def _run(self):
        while not self.stop:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            with self.lock:
                self.conn = c
                self.connections += 1
                self.lock.notify_all()
            try:
                self._serve(c)
            except OSError:
                pass
            with self.lock:
                self.eofs += 1
                self.conn = None
                self.lock.notify_all()
            c.close()

    def wait(self, what, cond, timeout):
        end = time.monotonic() + timeout
        with self.lock:
            while not cond():
                left = end - time.monotonic()
                if left <= 0:
                    raise Failure('back end: %s not within %.0f s' % (what, timeout))
                self.lock.wait(left)

    def inject(self, with_fd):
        msg = struct.pack('<IIIQ', 3, 0x1, 8, 0x5a5a)
        with self.lock:
            c = self.conn
        if c is None:
            raise Failure('no connection to write on')
        if with_fd:
            r, w = os.pipe()
            c.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [r]))])
            os.close(r)
            os.close(w)
        else:
            c.sendall(msg)

    def close(self):
        self.stop = True
        self.lsock.close()


def run():
    with h.Session('cv') as s:
        sock = s.workdir.socket()
        be = MiniBackend(sock)
        fe = s.add(h.start_frontend('vnapi', sock, app_extra=['--print-event', 'intr_lsc']))
        be.wait('rings handed over', lambda: be.started >= 1, 30.0)
        h.poll_until(fe.link_up, 20.0, what='front-end link up')
        for n in (1, 2, 3):
            mark = fe.mark()
            be.inject(with_fd=(n == 3))
            be.wait('connection %d dropped by vnapi' % n, lambda: be.eofs >= n, 10.0)
            check(be.eofs == n, 'message %d: vnapi dropped the connection (%d dropped in all)'
                  % (n, be.eofs))
            be.wait('reconnection %d' % n, lambda: be.started >= n + 1, 10.0)
            check(be.connections == be.started == n + 1,
                  'message %d: vnapi reconnected and handed the rings over again (%d '
                  'connections, rings handed over %d times)' % (n, be.connections, be.started))
            h.poll_until(fe.link_up, 10.0, what='front-end link up')
            h.poll_until(lambda: len(fe.find_all(h.LSC_RE, since=mark)) >= 2, 10.0,
                         what='LSC down and up')
            c0, m0 = h.proc_cpu_s(fe.pid), time.monotonic()
            time.sleep(1.0)  # an idle window: nothing may spin
            c1, m1 = h.proc_cpu_s(fe.pid), time.monotonic()
            pct = 100.0 * (c1 - c0) / (m1 - m0)
            check(pct < 10.0, 'message %d: testpmd CPU %.1f %% < 10 %% afterwards' % (n, pct))
            xs = fe.port_xstats()
            check(xs.get('ctrl_protocol_violations') == n and xs.get('reconnects') == n,
                  'ctrl_protocol_violations = reconnects = %d (%s, %s)'
                  % (n, xs.get('ctrl_protocol_violations'), xs.get('reconnects')))
        lines = fe.find_all(VIOLATION_RE)
        check(len(lines) == 1, 'the violation was logged once (%d lines)' % len(lines))
        check(be.connections == 4, '4 connections in all (%d)' % be.connections)
        # testpmd's quit closes the port on the live connection: a clean end, exit status 0.
        h.check_exits([fe])
        be.close()


def main():
    return h.run_checks(run)


if __name__ == '__main__':
    sys.exit(main())
