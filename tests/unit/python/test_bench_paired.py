#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Unit test of devtools/bench.py --paired's statistics: the bootstrap interval of the median
pair ratio and the verdict drawn from it (no DPDK process)."""

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

    def test_cells(self):
        self.assertEqual([c.id for c in bench.paired_cells()],
                         ['split-64-fe_tx', 'split-64-be_tx', 'split-64-io',
                          'packed-64-fe_tx', 'packed-64-be_tx', 'packed-64-io'])


if __name__ == '__main__':
    unittest.main()
