#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The driver's modules form no cycle. A module is a name: vnapi_X.c and vnapi_X.h together
(or either alone); it depends on every module whose header vnapi_X.c or vnapi_X.h includes. No
module may depend, directly or through others, on one that depends on it (a module's header is
its interface; a cycle means two concerns that cannot be read, tested or replaced apart): a
header that includes another counts as much as a .c file does. That reading of an include
holds only when a header is named for the file that defines what it declares, so that is
checked too: a header whose functions are defined in another file would hide an arrow. lib/
never includes the driver.
Usage: test_layering.py SRCROOT."""

import os
import re
import sys
import unittest

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)\.h"', re.M)


def module_includes(directory):
    """{module: set of the other modules whose header its .c or .h file includes}, for every
    .c and .h file of directory (a module is the name without .c or .h)."""
    mods = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(('.c', '.h')):
            with open(os.path.join(directory, name)) as f:
                mods.setdefault(name[:-2], set()).update(INCLUDE_RE.findall(f.read()))
    return {m: {h for h in inc if h in mods and h != m} for m, inc in mods.items()}


DECL_RE = re.compile(r'^(?!static\b)[A-Za-z_][^;{}()#]*?\b([a-z][a-z0-9_]*)\s*\(', re.M)
DEF_RE = re.compile(r'^([a-z][a-z0-9_]*)\(', re.M)


def header_mismatches(directory):
    """[(header, function, defining file)] for every function a driver header declares that
    a .c file other than the header's namesake defines (DPDK style: the defined function's
    name starts its line)."""
    defined = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith('.c'):
            with open(os.path.join(directory, name)) as f:
                for fn in DEF_RE.findall(f.read()):
                    defined.setdefault(fn, name)
    out = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith('.h'):
            continue
        with open(os.path.join(directory, name)) as f:
            text = f.read()
        for fn in sorted(set(DECL_RE.findall(text))):
            where = defined.get(fn)
            if where is not None and where[:-2] != name[:-2]:
                out.append((name, fn, where))
    return out


def cycles(graph):
    """Every cycle, as a list of modules, found by depth-first search (each reported once)."""
    found, seen = [], set()

    def walk(node, path):
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                cyc = path[path.index(nxt):]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc + [nxt])
            elif len(path) < len(graph):
                walk(nxt, path + [nxt])

    for start in sorted(graph):
        walk(start, [start])
    return found


def map_up_arrows(design_text, directory):
    """[(file, header)] for every include of doc/design.md's driver file map ("Layers": each
    file calls only the files listed below it) that points up the map, and [files] the map
    lacks."""
    blk = design_text[design_text.index('## Layers'):]
    blk = blk[:blk.index('```', blk.index('```') + 3)]
    order = [m[:-2] for m in re.findall(r'^\s+(vnapi_[a-z0-9_]+\.c)\b', blk, re.M)]
    pos = {m: i for i, m in enumerate(order)}
    graph = module_includes(directory)
    missing = sorted(n for n in os.listdir(directory) if n.endswith('.c') and n[:-2] not in pos)
    up = sorted((m + '.c', h + '.h') for m in graph for h in graph[m]
                if m in pos and h in pos and pos[h] < pos[m])
    return up, missing


class Layering(unittest.TestCase):
    root = '.'

    def test_finds_a_cycle(self):
        # The checker itself can fail: a two-module and a three-module cycle.
        self.assertEqual(cycles({'a': {'b'}, 'b': {'a'}}), [['a', 'b', 'a']])
        self.assertEqual(len(cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}})), 1)
        self.assertEqual(cycles({'a': {'b'}, 'b': set()}), [])

    def test_finds_a_cycle_through_a_header(self):
        # a.h includes b.h (a struct of b inside one of a), b.c includes a.h: a cycle that
        # no .c file shows on its own.
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for fname, text in (('a.h', '#include "b.h"\n'), ('a.c', '#include "a.h"\n'),
                                ('b.h', ''), ('b.c', '#include "a.h"\n#include "b.h"\n'),
                                ('c.c', '#include "a.h"\n')):
                with open(os.path.join(d, fname), 'w') as f:
                    f.write(text)
            g = module_includes(d)
            self.assertEqual(g, {'a': {'b'}, 'b': {'a'}, 'c': {'a'}})
            self.assertEqual(cycles(g), [['a', 'b', 'a']])

    def test_finds_a_misnamed_header(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for fname, text in (('a.h', 'int b_init(int x);\nstatic inline int a_inl(void);\n'),
                                ('a.c', '#include "a.h"\n'),
                                ('b.c', 'int\nb_init(int x)\n{\n\treturn x;\n}\n')):
                with open(os.path.join(d, fname), 'w') as f:
                    f.write(text)
            self.assertEqual(header_mismatches(d), [('a.h', 'b_init', 'b.c')])

    def test_driver_headers_are_named_for_their_files(self):
        d = os.path.join(self.root, 'drivers', 'net', 'vnapi')
        self.assertEqual(header_mismatches(d), [],
                         'headers that declare functions of another file')

    def test_design_map_matches_the_includes(self):
        with open(os.path.join(self.root, 'doc', 'design.md')) as f:
            up, missing = map_up_arrows(f.read(), os.path.join(self.root, 'drivers', 'net',
                                                                'vnapi'))
        self.assertEqual(missing, [], 'driver files missing from doc/design.md\'s map')
        self.assertEqual(up, [], 'includes that point up doc/design.md\'s map')

    def test_driver_has_no_file_cycle(self):
        g = module_includes(os.path.join(self.root, 'drivers', 'net', 'vnapi'))
        self.assertGreater(len(g), 10)
        self.assertEqual(cycles(g), [], 'driver modules that include each other (.c or .h)')

    def test_libs_do_not_include_the_driver(self):
        drv = os.path.join(self.root, 'drivers', 'net', 'vnapi')
        headers = {n[:-2] for n in os.listdir(drv) if n.endswith('.h')}
        self.assertIn('vnapi_dev', headers)
        for lib in ('virtq', 'napi'):
            d = os.path.join(self.root, 'lib', lib)
            for name in sorted(os.listdir(d)):
                if name.endswith(('.c', '.h')):
                    with open(os.path.join(d, name)) as f:
                        inc = INCLUDE_RE.findall(f.read())
                    self.assertEqual([h for h in inc if h in headers], [],
                                     'lib/%s/%s includes the driver' % (lib, name))


if __name__ == '__main__':
    Layering.root = sys.argv.pop(1) if len(sys.argv) > 1 else '.'
    unittest.main(verbosity=2)
