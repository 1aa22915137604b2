#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""DPDK's dpdk-pmdinfo.py sees the plugin: two drivers, net_vnapi (the vdev)
and net_vnapi_pci (virtio-pci devices), whose params strings name exactly the
devargs each accepts, each as key=<...>.

Usage: test_pmdinfo.py PMDINFO_TOOL PLUGIN DEVARGS_LIST_PROGRAM
DEVARGS_LIST_PROGRAM prints the driver's accepted devargs keys, one a line
(tests/unit/pmdinfo/devargs_keys.c, built from the driver's own list; --pci:
the PCI driver's).
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
    names = sorted(d.get('name', '') for d in info) if isinstance(info, list) else []
    tap(names == ['net_vnapi', 'net_vnapi_pci'],
        'two drivers, net_vnapi and net_vnapi_pci (got %r; output %r)' % (names, res.stdout[:200]))
    pci = [d for d in info if d.get('name') == 'net_vnapi_pci'] if isinstance(info, list) else []
    # virtio-net 1.x (1af4:1041), any subsystem; VFIO's module for dpdk-devbind.
    tap(len(pci) == 1 and pci[0].get('pci_ids') == [{'vendor': '1af4', 'device': '1041'}] and
        pci[0].get('kmod') == 'vfio-pci',
        'net_vnapi_pci: pci_ids 1af4:1041 (any subsystem), kmod vfio-pci (got %r, %r)'
        % (pci[0].get('pci_ids') if pci else None, pci[0].get('kmod') if pci else None))
    for drv in info if isinstance(info, list) else []:
        name = drv.get('name')
        params = drv.get('params', '')
        tokens = params.split()
        bad = [t for t in tokens if not re.fullmatch(r'[a-z_]+=<[^<>]+>', t)]
        # "<64-32768, power of 2>" has a space: rejoin tokens inside <...>.
        keys = re.findall(r'(?:^|\s)([a-z_]+)=<', params)
        values = re.findall(r'=<([^<>]*)>', params)
        tap(len(keys) == len(values) and len(keys) > 0 and
            re.fullmatch(r'([a-z_]+=<[^<>]+>\s?)+', params) is not None,
            '%s: params is a list of key=<...> (%r; odd tokens %r)' % (name, params, bad))
        argv = [lister, '--pci'] if name == 'net_vnapi_pci' else [lister]
        accepted = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.split()
        tap(len(keys) == len(set(keys)), '%s: no key twice (%r)' % (name, keys))
        tap(sorted(keys) == sorted(accepted),
            '%s: params keys %r == the keys the driver accepts %r'
            % (name, sorted(keys), sorted(accepted)))
    print('1..%d' % n)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
