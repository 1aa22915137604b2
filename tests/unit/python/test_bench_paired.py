#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of devtools/bench.py --paired's statistics: the bootstrap interval of the median
pair ratio, the verdict drawn from it (with its margin), and the seeded order of each pair's runs
(vnapitools.runs.pair_orders, which every paired benchmark uses); and of the tables of its
unpaired run (no DPDK process)."""

import unittest

import bench
from vnapitools import runs


class TestPaired(unittest.TestCase):
    def test_constant(self):
        self.assertEqual(bench.bootstrap_median([1.2] * 20), (1.2, 1.2, 1.2))

    def test_interval(self):
        ratios = [0.9 + 0.01 * i for i in range(20)]          # 0.90 .. 1.09
        m, lo, hi = bench.bootstrap_median(ratios)
        self.assertAlmostEqual(m, 0.995)
        self.assertTrue(lo < m < hi)
        self.assertTrue(0.9 <= lo and hi <= 1.09)
        # the same ratios give the same interval (fixed seed)
        self.assertEqual(bench.bootstrap_median(ratios), (m, lo, hi))
        self.assertEqual(bench.paired_verdict(lo, hi), 'undecided')

    def test_verdicts(self):
        # a lead or lag counts only where the whole interval clears 1 +- 3 %
        self.assertEqual(bench.P_DRAW, 0.03)
        self.assertEqual(bench.paired_verdict(1.04, 1.2), 'ahead')
        self.assertEqual(bench.paired_verdict(0.8, 0.96), 'behind')
        self.assertEqual(bench.paired_verdict(1.01, 1.2), 'undecided')
        self.assertEqual(bench.paired_verdict(0.8, 0.99), 'undecided')
        self.assertEqual(bench.paired_verdict(1.0, 1.1), 'undecided')
        self.assertEqual(bench.paired_verdict(0.9, 1.1), 'undecided')
        # within the margin: a draw, whichever side of 1 the interval lies
        self.assertEqual(bench.paired_verdict(0.99, 1.01), 'draw')
        self.assertEqual(bench.paired_verdict(1.005, 1.026), 'draw')
        self.assertEqual(bench.paired_verdict(0.973, 0.994), 'draw')
        self.assertEqual(bench.paired_verdict(0.97, 1.03), 'draw')
        self.assertEqual(bench.paired_verdict(1.0, 1.1, margin=0.0), 'undecided')
        self.assertEqual(bench.paired_verdict(1.01, 1.1, margin=0.0), 'ahead')

    def test_orders_two(self):
        # each contender first in half of the pairs, the odd pair by a coin
        for n in (20, 21, 40):
            for seed in range(50):
                o = runs.pair_orders(n, 'AB', seed, 'split-64-io')
                self.assertEqual(len(o), n)
                self.assertTrue(all(sorted(x) == ['A', 'B'] for x in o))
                self.assertIn(sum(x[0] == 'A' for x in o), (n // 2, n - n // 2))
        # the same seed and key give the same orders; keys and seeds differ
        self.assertEqual(runs.pair_orders(20, 'AB', 7, 'split-64-io'),
                         runs.pair_orders(20, 'AB', 7, 'split-64-io'))
        self.assertNotEqual(runs.pair_orders(20, 'AB', 7, 'split-64-io'),
                            runs.pair_orders(20, 'AB', 7, 'packed-64-io'))
        self.assertNotEqual(runs.pair_orders(20, 'AB', 7, 'split-64-io'),
                            runs.pair_orders(20, 'AB', 8, 'split-64-io'))
        # no strict alternation: over 50 seeds, A B, B A, ... (or its mirror) comes out at
        # most by chance (2 of 184756 balanced orders)
        alt = [['A', 'B'] if k % 2 == 0 else ['B', 'A'] for k in range(20)]
        mirror = [x[::-1] for x in alt]
        self.assertTrue(all(runs.pair_orders(20, 'AB', s, 'x') not in (alt, mirror)
                            for s in range(50)))

    def test_orders_more(self):
        # three contenders: 18 of 20 pairs cover the 6 orders 3 times each, the last 2 are two
        # different ones: every contender in every slot 6 to 8 times, every order 3 or 4 times
        for seed in range(50):
            o = runs.pair_orders(20, 'HPI', seed, 'closed-32')
            self.assertTrue(all(sorted(x) == ['H', 'I', 'P'] for x in o))
            for c in 'HPI':
                for slot in range(3):
                    self.assertIn(sum(x[slot] == c for x in o), (6, 7, 8))
            counts = [o.count(list(p)) for p in ('HPI', 'PIH', 'IHP', 'IPH', 'HIP', 'PHI')]
            self.assertEqual(sum(counts), 20)
            self.assertTrue(all(3 <= k <= 4 for k in counts))
        self.assertEqual(runs.pair_orders(0, 'HPI', 1), [])

    def test_tables_name_the_first(self):
        # the pairs table says which contender ran first in each pair, and the median of the
        # ratios of each kind of pair (an order effect shows as a gap between the two)
        cell = bench.paired_cells()[2]
        a, b = bench.paired_contenders(cell, 'aa')
        ratios = [1.1, 0.9] * 10
        pairs = {cell.id: [dict(ratio=r, order=[a['label'], b['label']] if k % 2 == 0
                                else [b['label'], a['label']],
                                a=dict(median=r * 1e6), b=dict(median=1e6))
                           for k, r in enumerate(ratios)]}
        t1, t2, out = bench.paired_tables([(cell, a, b)], pairs, 'aa')
        row = [ln for ln in t2.splitlines() if ln.startswith('| %s ' % cell.id)][0]
        self.assertIn('1.10a, 0.90b, 1.10a', row)
        self.assertTrue(row.endswith('| 1.100 / 0.900 |'), row)
        self.assertEqual(out[cell.id]['pairs'], 20)
        self.assertEqual(out[cell.id]['verdict'], 'undecided')

    def test_cells(self):
        self.assertEqual([c.id for c in bench.paired_cells()],
                         ['split-64-fe_tx', 'split-64-be_tx', 'split-64-io',
                          'packed-64-fe_tx', 'packed-64-be_tx', 'packed-64-io'])


class TestThroughputTables(unittest.TestCase):
    def test_tables(self):
        def run(median, best, qsize=None):
            return dict(median=median, best=best, qsize=qsize)
        results = {(64, 'fe_tx', 'vnapi'): [run(3e6, 4e6, 256), run(5e6, 6e6, 256)],
                   (64, 'fe_tx', 'virtio_user'): [run(2e6, 3e6)],
                   (64, 'be_tx', 'vnapi'): [run(1e6, 1e6, 256)]}
        table, ratios, qs = bench.throughput_tables(results, [64], ['vnapi', 'virtio_user'])
        rows = table.splitlines()
        self.assertEqual(len(rows), 2 + 3)
        self.assertEqual(rows[2], '| 64 | front end txonly -> backend rxonly | vnapi | 256 | 2 '
                         '| 4.00 | 6.00 | 3.00, 5.00 |')
        self.assertEqual(rows[3], '| 64 | front end txonly -> backend rxonly | virtio_user | ? | 1 '
                         '| 2.00 | 3.00 | 2.00 |')
        # a ratio row only where vnapi has a second front end beside it
        self.assertEqual(ratios.splitlines()[2:],
                         ['| 64 | front end txonly -> backend rxonly | 2.00 | 2.00 | - | - |'])
        self.assertEqual(qs, {'vnapi': {'256'}, 'virtio_user': {'default'}})
        self.assertEqual(bench.throughput_tables({}, [64], ['vnapi'])[1], '')


if __name__ == '__main__':
    unittest.main()
