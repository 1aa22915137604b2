#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of devtools/bench.py --paired's statistics: the bootstrap interval of the median
pair ratio, the verdict drawn from it and the seeded order of each pair's runs (no DPDK
process)."""

import unittest

import bench


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
        self.assertEqual(bench.paired_verdict(1.01, 1.2), 'ahead')
        self.assertEqual(bench.paired_verdict(0.8, 0.99), 'behind')
        self.assertEqual(bench.paired_verdict(0.99, 1.01), 'undecided')
        self.assertEqual(bench.paired_verdict(1.0, 1.1), 'undecided')

    def test_orders(self):
        # each contender first in half of the pairs, the odd pair by a coin
        for n in (20, 21, 40):
            for seed in range(50):
                o = bench.paired_orders(n, seed, 'split-64-io')
                self.assertEqual(len(o), n)
                self.assertIn(sum(o), (n // 2, n - n // 2))
        # the same seed and cell give the same order; cells and seeds differ
        self.assertEqual(bench.paired_orders(20, 7, 'split-64-io'),
                         bench.paired_orders(20, 7, 'split-64-io'))
        self.assertNotEqual(bench.paired_orders(20, 7, 'split-64-io'),
                            bench.paired_orders(20, 7, 'packed-64-io'))
        self.assertNotEqual(bench.paired_orders(20, 7, 'split-64-io'),
                            bench.paired_orders(20, 8, 'split-64-io'))
        # no strict alternation: over 50 seeds, an A B, B A, ... order (or its mirror)
        # comes out at most by chance (2 of 184756 balanced orders)
        alt = [k % 2 == 0 for k in range(20)]
        mirror = [not x for x in alt]
        self.assertTrue(all(bench.paired_orders(20, s, 'x') not in (alt, mirror)
                            for s in range(50)))

    def test_cells(self):
        self.assertEqual([c.id for c in bench.paired_cells()],
                         ['split-64-fe_tx', 'split-64-be_tx', 'split-64-io',
                          'packed-64-fe_tx', 'packed-64-be_tx', 'packed-64-io'])


if __name__ == '__main__':
    unittest.main()
