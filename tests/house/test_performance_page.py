#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""doc/performance.md is what devtools/vnapitools/perfdoc.py generates from the stored results
(doc/results/<section>.json), and no table in it is older than the last datapath change.

The datapath (perfdoc.DATAPATH; this list must name each of its entries; the sections of
scope pmd leave out lib/napi and app/vnapi-fwd, see perfdoc):
  drivers/net/vnapi/vnapi_rxtx*     rx and tx bursts, scalar and AVX2
  drivers/net/vnapi/vnapi_intr.*    rx interrupt arming
  drivers/net/vnapi/vnapi_gate.*    the gate every burst enters
  drivers/net/vnapi/vnapi_net_hdr.*  the virtio-net header of every packet
  drivers/net/vnapi/vnapi_dev.h, drivers/net/vnapi/vnapi_devargs.h,
  drivers/net/vnapi/vnapi_features.h  queue layout, defaults, feature bits
  drivers/net/vnapi/vnapi_transport.h,
  drivers/net/vnapi/vnapi_transport_vhost_user.c  the kick (the notify op)
  drivers/net/vnapi/meson.build, config/*, meson.build, meson_options.txt  build options
  lib/virtq/*, lib/napi/*, app/vnapi-fwd/*  the rings, NAPI, the forwarder measured
A datapath change is a commit that changes one of these files. A table is older than the last
datapath change when the datapath files of this checkout differ from the ones it was measured
on (the result's "datapath" digest). The fix: run the section's command, or drop the result
(python3 -m vnapitools.perfdoc --drop-stale) so that the section says "not measured".

Usage: test_performance_page.py SRCROOT."""

import os
import sys
import unittest

from vnapitools import perfdoc


class PerformancePage(unittest.TestCase):
    root = '.'

    def test_doc_names_the_datapath(self):
        for p in perfdoc.DATAPATH:
            self.assertIn(p, __doc__)

    def test_page_is_generated_and_fresh(self):
        doc = os.path.join(self.root, 'doc', 'performance.md')
        results = os.path.join(self.root, 'doc', 'results')
        out = perfdoc.problems(doc, results, self.root)
        self.assertEqual(out, [], '\n' + '\n'.join(out))
        measured = sorted(perfdoc.load_all(results))
        print('measured: %s; not measured: %s' % (
            ', '.join(measured) or 'none',
            ', '.join(s.id for s in perfdoc.SECTIONS if s.id not in measured) or 'none'))


if __name__ == '__main__':
    PerformancePage.root = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else '.')
    unittest.main(verbosity=2)
