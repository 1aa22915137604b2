#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The instruction-count gate: vnapi's PMD instructions per packet hop in one cell (io
forwarding in one dpdk-testpmd thread under callgrind, devtools/vnapitools/icount.py) must not
rise over the committed baseline (tests/icount/baseline.json) by more than the cell's
threshold, three times the spread of 10 runs and at most 2 %. A figure below the baseline by
more than the threshold fails too: the baseline is then stale, and a regression back up to it
would pass unseen. Either way the fix is a commit: the code's, or the baseline's
(devtools/icount.py --gate-baseline) with a message that says why it moves.

The baseline holds for the tools and the build it was measured with (valgrind, DPDK and
compiler versions, meson's buildtype and optimization): another one fails with the
difference named, as its counts cannot be compared.

Usage: test_icount_gate.py CELL (split-64-io, packed-64-io). Exit 0 pass, 1 fail, 77 skip
(not root, outside CI).
"""

import json
import os
import sys

from vnapitools import harness as h
from vnapitools import icount as ic

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, 'baseline.json')
TOP = os.path.dirname(os.path.dirname(HERE))


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cell_id = argv[1]
    if os.geteuid() != 0:
        print('SKIP: needs root (EAL, /run/vnapi): run as root')
        return 77
    miss = ic.prerequisites()
    if miss:
        print('FAIL: missing: %s' % '; '.join(miss))
        return 1
    with open(BASELINE) as f:
        base = json.load(f)
    cb = base['cells'].get(cell_id)
    if cb is None:
        print('FAIL: %s has no cell %s' % (BASELINE, cell_id))
        return 1
    build = os.environ.get('VNAPI_BUILD_DIR')
    now = {'tools': ic.tool_versions(),
           'build': ic.build_info(build) if build else {}}
    diff = ['%s %s: baseline %r, here %r' % (k, n, base[k].get(n), now[k].get(n))
            for k in ('tools', 'build') for n in sorted(base[k])
            if base[k].get(n) != now[k].get(n)]
    if diff:
        print('FAIL: this build cannot be compared with the baseline (%s): %s. Measure a '
              'baseline for it (devtools/icount.py --gate-baseline) in a commit that says why.'
              % (os.path.relpath(BASELINE, TOP), '; '.join(diff)))
        return 1
    h.install_guards()
    plugin = h.prepare_plugin()
    r = ic.run_cell(ic.FrontEnd('vnapi'), ic.Cell.parse(cell_id), plugin=plugin,
                    hops_target=base['hops_target'], cache=False)
    got, ref, thr = r['pmd_ir_per_hop'], cb['pmd_ir_per_hop'], cb['threshold']
    verdict, delta = ic.gate_verdict(got, ref, thr)
    print('%s: vnapi PMD %.4f Ir/hop (%d hops), baseline %.4f, %+.4f %%, threshold %.4f %% '
          '(3 x spread %.4f %% of %d runs, at most %.0f %%); whole %.2f, back end %.2f '
          'Ir/hop' % (cell_id, got, r['hops'], ref, 100 * delta, 100 * thr,
                      100 * cb['spread'], len(cb['runs']), 100 * base['threshold_cap'],
                      r['whole_ir_per_hop'], r['backend_ir_per_hop']))
    for o, fn, v in r['functions'][:12]:
        print('  %-28s %-40s %8.2f Ir/hop' % (o, fn, v))
    if verdict == 'rise':
        print('FAIL: vnapi\'s PMD costs %.3f Ir/hop more than the baseline (+%.3f %% > %.3f %%)'
              % (got - ref, 100 * delta, 100 * thr))
        return 1
    if verdict == 'stale':
        print('FAIL: vnapi\'s PMD costs %.3f Ir/hop less than the baseline (%.3f %%): the '
              'baseline is stale; lower it (devtools/icount.py --gate-baseline) in the commit '
              'that made it cheaper' % (ref - got, 100 * delta))
        return 1
    print('PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
