#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""vnapi-fwd (lib/napi) over net_vnapi, against vnapi-peer (DPDK's net_vhost).

Usage: test_napi_fwd.py CASE [FRONTEND [MODE]] [--devargs K=V,...]
       CASE: burst | idle | sparse | pairs | mq;
       FRONTEND: vnapi (default) | vnapi_packed | virtio_user
       MODE (pairs only): poll | interrupt | hybrid
       --devargs: more front-end devargs (event_idx=0)
Paths from the environment (meson sets them): VNAPI_PLUGIN, VNAPI_FWD, VNAPI_PEER, and
VNAPI_DPDK_PMD_DIR (EAL's plugin directory of the DPDK built against, where net_vhost is).
Exit 0 pass, 1 fail, 77 skip. The cases and what each asserts: devtools/vnapitools/napi_fwd.py.
"""

import argparse
import os
import sys

from vnapitools import napi_fwd


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('case', choices=napi_fwd.CASES)
    ap.add_argument('frontend', nargs='?', default='vnapi', choices=napi_fwd.FRONTENDS)
    ap.add_argument('mode', nargs='?', choices=napi_fwd.MODES)
    ap.add_argument('--devargs', default='', help='more front-end devargs, e.g. event_idx=0')
    a = ap.parse_args()
    if a.mode is not None and a.case != 'pairs':
        ap.error('MODE is for pairs only')
    if os.geteuid() != 0:
        print('SKIP: needs root (vhost-user sockets under /run/vnapi): run as root')
        return napi_fwd.SKIP
    return napi_fwd.run(a.case, a.frontend, a.mode or 'hybrid', devargs=a.devargs)


if __name__ == '__main__':
    sys.exit(main())
