#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""DPDK's dpdk-pmdinfo.py sees the plugin: one driver, net_vnapi, whose
params string names exactly the devargs the driver accepts, each as
key=<...>.

Usage: test_pmdinfo.py PMDINFO_TOOL PLUGIN DEVARGS_LIST_PROGRAM
DEVARGS_LIST_PROGRAM prints the driver's accepted devargs keys, one a line
(tests/unit/pmdinfo/devargs_list.c, built from the driver's own list).
"""

import json
import re
import subprocess
import sys

n = 0
failed = 0


def tap(ok, msg):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print('%s %d - %s' % ('ok' if ok else 'not ok', n, msg))


def main():
    tool, plugin, lister = sys.argv[1:4]
    # Under this (pyelftools-carrying) python: the tool's own shebang may
    # find another python3 first (pyenv, venv).
    res = subprocess.run([sys.executable, tool, plugin], capture_output=True, text=True,
                         timeout=60)
    tap(res.returncode == 0, '%s %s exits 0 (got %d: %s)' % (tool, plugin, res.returncode,
                                                           res.stderr.strip()[-200:]))
    try:
        info = json.loads(res.stdout)
    except ValueError:
        info = None
    tap(isinstance(info, list) and len(info) == 1,
        'exactly one driver in the output (got %r)' % (res.stdout[:200],))
    drv = info[0] if info else {}
    tap(drv.get('name') == 'net_vnapi', 'name is net_vnapi (got %r)' % drv.get('name'))
    params = drv.get('params', '')
    tokens = params.split()
    bad = [t for t in tokens if not re.fullmatch(r'[a-z_]+=<[^<>]+>', t)]
    # "<64-32768, power of 2>" has a space: rejoin tokens inside <...>.
    keys = re.findall(r'(?:^|\s)([a-z_]+)=<', params)
    values = re.findall(r'=<([^<>]*)>', params)
    tap(len(keys) == len(values) and len(keys) > 0 and
        re.fullmatch(r'([a-z_]+=<[^<>]+>\s?)+', params) is not None,
        'params is a list of key=<...> (%r; odd tokens %r)' % (params, bad))
    accepted = subprocess.run([lister], capture_output=True, text=True,
                              timeout=30).stdout.split()
    tap(len(keys) == len(set(keys)), 'no key twice (%r)' % keys)
    tap(sorted(keys) == sorted(accepted),
        'params keys %r == the keys the driver accepts %r' % (sorted(keys), sorted(accepted)))
    print('1..%d' % n)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
