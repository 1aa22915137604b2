#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of devtools/vnapitools/icount.py without valgrind: the reader of callgrind's
output (self cost per object and function, name compression, the cost of a call that is not
the caller's own, cob= for one call only), the cells and the gate's verdict."""

import os
import tempfile
import unittest

from vnapitools import icount as ic

# Two objects; fn A in obj1 calls B in obj2 (cob given) and then C in obj1 (no cob: the
# caller's object); inlined code from another file (fi=) stays A's.
SAMPLE = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 42
part: 1
thread: 4

positions: line
events: Ir D1mr D1mw DLmr DLmw ILmr
summary: 1000

ob=(1) /usr/lib/obj1.so
fl=(1) ???
fn=(10) A
0 100 1 2
fi=(2) inl.h
0 10
fe=(1)
cob=(2) /usr/lib/dpdk/pmds-23.0/obj2.so
cfi=(1)
cfn=(11) B
calls=5 0
0 500 5 5 1 1 1
cfn=(12) C
calls=2 0
0 40
0 1

ob=(2)
fn=(11)
0 300 4 4 1 0 0
cfn=(13) D
calls=5 0
0 200

fn=(13)
0 200 1 1

ob=(1)
fn=(12)
0 40
"""


class TestProfile(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix='.cg')
        with os.fdopen(fd, 'w') as f:
            f.write(SAMPLE)
        self.p = ic.Profile(self.path)

    def tearDown(self):
        os.unlink(self.path)

    def test_header(self):
        self.assertEqual(self.p.thread, 4)
        self.assertEqual(self.p.events, ['Ir', 'D1mr', 'D1mw', 'DLmr', 'DLmw', 'ILmr'])

    def test_self_cost(self):
        # A: 100 + 10 (inlined) + 1 after its calls; call costs are B's and C's, not A's.
        self.assertEqual(self.p.by_function[('/usr/lib/obj1.so', 'A')][0], 111)
        self.assertEqual(self.p.by_function[('/usr/lib/dpdk/pmds-23.0/obj2.so', 'B')][0], 300)
        self.assertEqual(self.p.by_function[('/usr/lib/dpdk/pmds-23.0/obj2.so', 'D')][0], 200)
        self.assertEqual(self.p.by_function[('/usr/lib/obj1.so', 'C')][0], 40)
        self.assertEqual(self.p.total(), 651)
        self.assertEqual(self.p.object_cost(r'obj1\.so'), 151)
        self.assertEqual(self.p.object_cost(r'obj2\.so'), 500)

    def test_calls(self):
        # cob= applies to B's call only: C is in the caller's object.
        self.assertEqual(self.p.calls_to[('/usr/lib/dpdk/pmds-23.0/obj2.so', 'B')][:2], [5, 500])
        self.assertEqual(self.p.calls_to[('/usr/lib/obj1.so', 'C')][:2], [2, 40])
        self.assertEqual(self.p.calls_to[('/usr/lib/dpdk/pmds-23.0/obj2.so', 'D')][:2], [5, 200])

    def test_misses(self):
        # D1: D1mr + D1mw of self costs; LL: DLmr + DLmw + ILmr.
        self.assertEqual(self.p.misses('D1'), 1 + 2 + 4 + 4 + 1 + 1)
        self.assertEqual(self.p.misses('D1', r'obj2\.so'), 10)
        self.assertEqual(self.p.misses('LL'), 1)

    def test_groups(self):
        g = ic.object_groups(self.p, 'vnapi')
        self.assertEqual(g['pmd'], 0)
        self.assertEqual(sum(g.values()), self.p.total())


class TestCells(unittest.TestCase):
    def test_ids(self):
        ids = [c.id for c in ic.all_cells()]
        self.assertEqual(len(ids), 8)
        self.assertIn('split-64-io', ids)
        self.assertIn('packed-1518-io-mrg0', ids)
        for i in ids:
            self.assertEqual(ic.Cell.parse(i).id, i)
        self.assertRaises(ValueError, ic.Cell.parse, 'split-64-txonly')

    def test_devargs(self):
        c = ic.Cell.parse('packed-1518-io-mrg0')
        self.assertEqual(ic.FrontEnd('vnapi').devargs(c, '/s'),
                         'net_vnapi0,path=/s,queue_size=256,mrg_rxbuf=0,packed_vq=1,in_order=1')
        self.assertEqual(ic.FrontEnd('virtio_user', 'in_order=1,vectorized=1').devargs(c, '/s'),
                         'net_virtio_user0,path=/s,queue_size=256,mrg_rxbuf=0,packed_vq=1,'
                         'in_order=1,vectorized=1')


class TestGate(unittest.TestCase):
    def test_verdict(self):
        self.assertEqual(ic.gate_verdict(100.0, 100.0, 0.001)[0], 'pass')
        self.assertEqual(ic.gate_verdict(100.09, 100.0, 0.001)[0], 'pass')
        self.assertEqual(ic.gate_verdict(100.11, 100.0, 0.001)[0], 'rise')
        self.assertEqual(ic.gate_verdict(99.89, 100.0, 0.001)[0], 'stale')
        self.assertAlmostEqual(ic.gate_verdict(102.0, 100.0, 0.05)[1], 0.02)


if __name__ == '__main__':
    unittest.main()
