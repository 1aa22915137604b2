#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""DPDK's dpdk-pmdinfo.py sees the plugin: two drivers, net_vnapi (the vdev)
and net_vnapi_pci (virtio-pci devices), whose params strings name exactly the
devargs each accepts, each as key=<...>.

Usage: test_pmdinfo.py PMDINFO_TOOL PLUGIN DEVARGS_ACCEPT USER_GUIDE

Both PMD info strings are generated from the driver's list (VNAPI_DEVARGS),
so they are judged against two other sources: the user guide
(doc/user-guide.md, "Devargs": its table's keys and <values>, and for
net_vnapi_pci the sentence that names the vhost-user keys it leaves out),
and the driver's behaviour (DEVARGS_ACCEPT, tests/unit/pmdinfo/devargs_accept.c:
which KEY=VALUE its parsers accept): every advertised key accepted with a
value it advertises, every key it leaves out and an unknown key refused.
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


def guide_devargs(path):
    """The user guide's devargs: ({key: '<values>'} of its table, [keys the PCI driver
    leaves out]) as the text says them."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    sec = text.split('\n## Devargs\n', 1)[-1].split('\n## ', 1)[0]
    table = {}
    for m in re.finditer(r'^\| `([a-z_]+)` \| `(<[^`]*>)` \|', sec, re.M):
        table[m.group(1)] = m.group(2).replace('\\|', '|')
    m = re.search(r'Devargs after `vnapi=1` are the table above minus ([^(]*)\(', text)
    left_out = re.findall(r'`([a-z_]+)`', m.group(1)) if m else []
    return table, left_out


def example_value(allowed):
    """One value the <allowed> text permits: the first of a list or a range, a path, a
    locally administered MAC."""
    inner = allowed.strip('<>')
    if 'path' in inner:
        return '/run/vnapi-test/pmdinfo.sock'
    if inner.startswith('xx:'):
        return '02:00:00:00:00:01'
    m = re.match(r'(\d+)', inner)
    if m:
        return m.group(1)
    return inner.split('|')[0]


def accepted(lister, pci, args):
    """{KEY=VALUE: True if the driver's parser accepts it alone}."""
    argv = [lister] + (['--pci'] if pci else []) + list(args)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    res = {}
    for line in out.splitlines():
        arg, _, verdict = line.rpartition(' ')
        res[arg] = verdict == 'accepted'
    return res


def main():
    tool, plugin, lister, guide = sys.argv[1:5]
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
    table, left_out = guide_devargs(guide)
    tap(len(table) > 0 and left_out != [] and all(k in table for k in left_out),
        'the user guide documents %d devargs, %r of them not for PCI devices'
        % (len(table), left_out))
    for drv in info if isinstance(info, list) else []:
        name = drv.get('name')
        is_pci = name == 'net_vnapi_pci'
        params = drv.get('params', '')
        tokens = params.split()
        bad = [t for t in tokens if not re.fullmatch(r'[a-z_]+=<[^<>]+>', t)]
        # "<64-32768, power of 2>" has a space: rejoin tokens inside <...>.
        pairs = re.findall(r'(?:^|\s)([a-z_]+)=(<[^<>]*>)', params)
        keys = [k for k, _ in pairs]
        tap(len(pairs) > 0 and re.fullmatch(r'([a-z_]+=<[^<>]+>\s?)+', params) is not None,
            '%s: params is a list of key=<...> (%r; odd tokens %r)' % (name, params, bad))
        tap(len(keys) == len(set(keys)), '%s: no key twice (%r)' % (name, keys))
        want = {k: v for k, v in table.items() if not (is_pci and k in left_out)}
        if is_pci:
            want = dict({'vnapi': '<1>'}, **want)
        tap(dict(pairs) == want,
            '%s: params == the user guide\'s devargs%s: %s'
            % (name, ' after vnapi=1, less %s' % left_out if is_pci else '',
               'the same %d' % len(want) if dict(pairs) == want else
               'advertised only %r, documented only %r, values differ %r' % (
                   sorted(set(keys) - set(want)), sorted(set(want) - set(keys)),
                   sorted(k for k, v in pairs if k in want and want[k] != v))))
        # The parser's behaviour: every advertised key accepted with an advertised value
        # (the PCI opt-in is taken before the parser), every other documented key and an
        # unknown one refused.
        asked = ['%s=%s' % (k, example_value(v)) for k, v in pairs if k != 'vnapi']
        others = ['%s=%s' % (k, example_value(v)) for k, v in table.items() if k not in keys]
        verdict = accepted(lister, is_pci, asked + others + ['no_such_key=1'])
        tap(all(verdict.get(a) is True for a in asked),
            '%s: the driver accepts every advertised key (refused: %r)'
            % (name, [a for a in asked if verdict.get(a) is not True]))
        tap(all(verdict.get(a) is False for a in others + ['no_such_key=1']),
            '%s: the driver refuses the keys it does not advertise, %r (accepted: %r)'
            % (name, others + ['no_such_key=1'],
               [a for a in others + ['no_such_key=1'] if verdict.get(a) is not False]))
    print('1..%d' % n)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
