#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""vnapi-peer's accounting, exact, without EAL: the engine on its unix datagram transport
against a reflector written here, which sends every frame back as it came except the ones a
case tells it to drop, hold past the loss timeout, duplicate, corrupt, swap or add. Each case
asserts every count of the result line (vnapitools.peer reads it) and the exit status.

$VNAPI_PEER is the program (meson sets it)."""

import os
import socket
import struct
import subprocess
import tempfile
import threading
import unittest

from vnapitools import harness as h
from vnapitools import peer as vp

HDR_OFF = 42         # the flow header after Ethernet, IPv4 and UDP (peer_flow.h)
LOSS_MS = 300


class Reflector(threading.Thread):
    """Sends back what arrives at @path, to whoever sent it. @plan: {seq: action} for the
    data frames (kind 1) of phase 0: 'drop', 'late' (sent again after LOSS_MS + 400 ms),
    'dup', 'corrupt' (its last byte flipped), 'swap' (held until the next one is sent),
    'foreign' (a frame of no run sent after it)."""

    def __init__(self, path, plan=None):
        super().__init__(daemon=True)
        self.plan = plan or {}
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.05)
        self.stop = False
        self.held = None
        self.timers = []

    def send(self, frame, to):
        try:
            self.sock.sendto(frame, to)
        except OSError:
            pass  # the engine is gone

    def run(self):
        while not self.stop:
            try:
                frame, peer = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            _, _, seq, _, flow, kind = struct.unpack_from('<HHIQBB', frame, HDR_OFF)
            act = self.plan.get(seq) if (flow, kind) == (0, 1) else None
            if act == 'drop':
                continue
            if act == 'late':
                t = threading.Timer((LOSS_MS + 400) / 1000.0, self.send, (frame, peer))
                t.start()
                self.timers.append(t)
                continue
            if act == 'corrupt':
                frame = frame[:-1] + bytes([frame[-1] ^ 1])
            if act == 'swap':
                self.held = frame
                continue
            self.send(frame, peer)
            if act == 'dup':
                self.send(frame, peer)
            if act == 'foreign':
                self.send(b'\x02' * 64, peer)
            if self.held is not None:
                self.send(self.held, peer)
                self.held = None

    def close(self):
        self.stop = True
        self.join(5)
        for t in self.timers:
            t.cancel()
        path = self.sock.getsockname()
        self.sock.close()
        os.unlink(path)


class PeerAccounting(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='vnapi-peer-')
        self.local = os.path.join(self.dir, 'peer.sock')
        self.remote = os.path.join(self.dir, 'reflector.sock')

    def tearDown(self):
        for p in (self.local, self.remote):
            if os.path.exists(p):
                os.unlink(p)
        os.rmdir(self.dir)

    def run_peer(self, phases, plan=None, stdin=None, extra=()):
        """Run the engine to its end; (exit status, RESULT dict, phase dicts, output)."""
        r = Reflector(self.remote, plan)
        r.start()
        argv = vp.argv(os.environ['VNAPI_PEER'], phases, unix=(self.local, self.remote),
                       loss_ms=LOSS_MS, drain_ms=LOSS_MS + 600, timeout=60, seed=7)
        try:
            p = subprocess.run(argv + list(extra), input=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=60)
        finally:
            r.close()
        out = p.stdout
        lines = out.splitlines()
        res = [vp.parse(ln) for ln in lines if ln.startswith('RESULT: ')]
        phs = [vp.parse(ln) for ln in lines if ln.startswith('PHASE ') and ' result ' in ln]
        self.assertEqual(len(res), 1, out)
        return p.returncode, res[0], phs, out

    def counts(self, res, **want):
        """Every count of @res is 0 but those of @want, which are exact."""
        for k in ('lost', 'late', 'dup', 'ooo', 'corrupt', 'stray', 'foreign'):
            self.assertEqual(res.get(k), want.get(k, 0), '%s in %r' % (k, res))
        for k in ('sent', 'back'):
            if k in want:
                self.assertEqual(res.get(k), want[k], '%s in %r' % (k, res))

    def closed_fault(self, action, want_rc=1, seq=10, reason=None, extra=(), **want):
        """A closed phase of 100 frames, 8 in flight, whose frame @seq the reflector handles
        by @action: the exit status is @want_rc, the counts are @want (sent 100) and, when
        given, the result's reason is @reason."""
        rc, res, phs, out = self.run_peer([vp.phase('closed', count=100, window=8)],
                                          {seq: action}, extra=extra)
        self.assertEqual(rc, want_rc, out)
        self.counts(res, sent=100, **want)
        if reason is not None:
            self.assertEqual(res['reason'], reason, out)
        return out

    def test_exact_modes(self):
        """closed, sparse (pairs), open and rr through a clean reflector: all back."""
        rc, res, phs, out = self.run_peer([
            vp.phase('closed', count=2000, window=32),
            vp.phase('sparse', count=50, gap=(100, 300), gap2=(10, 50)),
            vp.phase('open', rate=2000, count=1000, burst=4),
            vp.phase('rr', count=200)])
        self.assertEqual(rc, 0, out)
        self.assertEqual(res['verdict'], 'PASS', out)
        self.assertEqual([p['kind'] for p in phs], ['closed', 'sparse', 'open', 'rr'])
        self.assertEqual((phs[0]['sent'], phs[0]['back']), (2000, 2000))
        self.assertEqual((phs[1]['sent'], phs[1]['back']), (50, 50))
        self.assertEqual(phs[2]['sent'] + phs[2]['refused'], 1000, out)
        self.assertEqual(phs[2]['back'], phs[2]['sent'])
        self.assertEqual((phs[3]['sent'], phs[3]['back']), (200, 200))
        self.counts(res, sent=2000 + 50 + phs[2]['sent'] + 200)
        self.assertEqual(res['q0_sent'], res['sent'] + res['warmup_sent'])
        self.assertEqual(res['q0_back'], res['back'] + res['warmup_back'])

    def test_late_is_lost(self):
        """A frame back after the loss timeout is lost and late, never back: exit 1."""
        self.closed_fault('late', seq=40, back=99, lost=1, late=1, reason='late')

    def test_late_sparse(self):
        """The same in sparse traffic (the tests that claim no lost wakeup)."""
        rc, res, phs, out = self.run_peer([vp.phase('sparse', count=20, gap=(100, 200))],
                                          {5: 'late'})
        self.assertEqual(rc, 1, out)
        self.counts(res, sent=20, back=19, lost=1, late=1)

    def test_drop(self):
        self.closed_fault('drop', back=99, lost=1, reason='lost')

    def test_duplicate(self):
        self.closed_fault('dup', back=100, dup=1, reason='duplicate')

    def test_corrupt(self):
        """A changed byte: the frame is corrupt, and not back."""
        out = self.closed_fault('corrupt', back=99, lost=1, corrupt=1)
        self.assertIn('# first bad frame: a frame changed on its way (phase 0 seq 10)', out)

    def test_out_of_order(self):
        self.closed_fault('swap', back=100, ooo=1, reason='out_of_order')
        self.closed_fault('swap', want_rc=0, extra=['--any-order'], back=100, ooo=1)

    def test_foreign(self):
        self.closed_fault('foreign', back=100, foreign=1)

    def test_idle_rx(self):
        """A frame arriving during an idle phase fails it (a late frame of the phase before)."""
        rc, res, phs, out = self.run_peer([vp.phase('sparse', count=3, gap=(100, 200)),
                                           vp.phase('idle', secs=1.5)], {2: 'late'},
                                          extra=['--drain-ms', '0'])
        self.assertEqual(rc, 1, out)
        self.counts(res, sent=3, back=2, lost=1, late=1)
        self.assertEqual(phs[1]['rx'], 1, out)
        self.assertEqual(phs[1]['reason'], 'traffic_during_idle', out)

    def test_step(self):
        """sparse step: one frame per "go", the phase ends at "end"."""
        rc, res, phs, out = self.run_peer([vp.phase('sparse', count=100, gap=(0, 0),
                                                    step=True)], stdin='go\ngo\ngo\nend\n')
        self.assertEqual(rc, 0, out)
        self.counts(res, sent=3, back=3)
        self.assertEqual([ln.split()[2] for ln in out.splitlines() if ln.startswith('FRAME ')],
                         ['seq=0', 'seq=1', 'seq=2'])

    def test_usage(self):
        """Bad phases and options: exit 2 with the usage, nothing run."""
        for bad in (['--phase', 'closed'], ['--phase', 'closed:count=10,secs=1'],
                    ['--phase', 'bogus:secs=1'], ['--phase', 'idle:secs=1,window=3'],
                    ['--phase', 'sparse:count=1,gap=9-3']):
            p = subprocess.run([os.environ['VNAPI_PEER'], '--unix-local', self.local,
                                '--unix-remote', self.remote] + bad, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=10)
            self.assertEqual(p.returncode, 2, '%s: %s' % (bad, p.stdout))
            self.assertIn('usage: vnapi-peer', p.stdout)



class PeerEnd(unittest.TestCase):
    """vnapitools.peer.end(): a run that printed its RESULT must end by itself with the
    RESULT's code as its exit status; anything else is a problem naming the process."""

    def end(self, result, then):
        """A stand-in peer: prints 'RESULT: @result', then runs the shell commands @then."""
        p = h.DpdkProcess('peer', ['sh', '-c', 'echo "RESULT: %s"; %s' % (result, then)],
                          deadline=30, grace=1.0).start()
        return vp.end(p, vp.result(p, 5), timeout=1.0)

    def test_its_code(self):
        self.assertIsNone(self.end('PASS code=0 sent=1', 'exit 0'))
        self.assertIsNone(self.end('FAIL code=1 sent=1', 'exit 1'))

    def test_other_status(self):
        self.assertRegex(self.end('PASS code=0 sent=1', 'exit 3'),
                         r'^peer \(pid \d+, sh\): exit status 3 \(it ended by itself\), '
                         r'expected 0$')

    def test_no_end(self):
        self.assertRegex(self.end('PASS code=0 sent=1', 'trap "" INT; sleep 20'),
                         r'did not end within 1 s of SIGINT; the harness SIGKILLed it')

    def test_ended_on_sigint(self):
        self.assertRegex(self.end('PASS code=0 sent=1', 'trap "exit 0" INT; sleep 20 & wait'),
                         r'still running 1 s after its RESULT line; it ended after SIGINT')


if __name__ == '__main__':
    unittest.main(verbosity=2)
