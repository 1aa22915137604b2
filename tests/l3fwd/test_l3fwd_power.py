#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""l3fwd-power (--interrupt-only) on a vhost-user front end, against vnapi-peer (net_vhost).

Usage: test_l3fwd_power.py CASE FRONTEND [options]
  CASE      count | idle | sparse | mq
  FRONTEND  vnapi | virtio_user
Paths come from the environment (meson sets them): VNAPI_PLUGIN (librte_net_vnapi.so),
VNAPI_L3FWD_POWER (the l3fwd-power binary), VNAPI_PEER (vnapi-peer).
Exit status 0 = pass, 1 = fail, 77 = skip (meson's convention). The cases and what each
asserts: devtools/vnapitools/l3fwd.py.
"""

import argparse
import json
import os
import sys

from vnapitools import harness as h
from vnapitools import l3fwd as l3


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('case', choices=sorted(l3.CASE_DEFAULTS))
    ap.add_argument('frontend', choices=sorted(l3.FRONTENDS))
    ap.add_argument('--packets', type=int, help='count/sparse/mq: number of packets')
    ap.add_argument('--idle-s', type=float, help='idle: window length')
    ap.add_argument('--seed', type=int, help='sparse/mq: gap generator seed')
    ap.add_argument('--gap-min-us', type=int, help='sparse/mq: shortest gap')
    ap.add_argument('--gap-max-us', type=int, help='sparse/mq: longest gap')
    ap.add_argument('--nice', type=int, default=int(os.environ.get('VNAPI_L3FWD_NICE', '0')),
                    help='run both processes at this nice value')
    ap.add_argument('--devargs', default='',
                    help='extra front-end devargs, e.g. intr_rescue=eagain or event_idx=0')
    ap.add_argument('--json', help='append the measurements as one JSON line to this file')
    a = ap.parse_args()

    if os.geteuid() != 0:
        print('SKIP: needs root (EAL, /run/vnapi)')
        return l3.SKIP
    cfg = {'nice': a.nice, 'devargs': a.devargs}
    if a.packets is not None:
        cfg['packets'] = a.packets
    if a.idle_s is not None:
        cfg['idle_s'] = a.idle_s
    for k in ('seed', 'gap_min_us', 'gap_max_us'):
        if getattr(a, k) is not None:
            cfg[k] = getattr(a, k)

    print('l3fwd-power %s on %s' % (a.case, a.frontend), flush=True)
    try:
        res = l3.run_case(a.case, a.frontend, cfg)
    except h.HarnessError as e:
        print('FAIL: %s' % e, flush=True)
        return 1
    print('  l3fwd-power: %s' % res['l3fwd_cmd'])
    print('  peer: RESULT %s' % json.dumps(res['peer'], sort_keys=True))
    failures = l3.evaluate(res)
    res['failures'] = failures
    res['pass'] = not failures
    line = json.dumps({k: v for k, v in res.items() if not k.endswith('_tail')},
                      sort_keys=True)
    print('L3FWD_JSON ' + line, flush=True)
    if a.json:
        with open(a.json, 'a') as fj:
            fj.write(line + '\n')
    if failures:
        print('--- l3fwd-power (last lines) ---\n%s\n--- peer (last lines) ---\n%s'
              % (res['l3fwd_tail'], res['peer_tail']))
        print('FAIL: %d check(s) failed' % len(failures), flush=True)
        return 1
    print('PASS', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
