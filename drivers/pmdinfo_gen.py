#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Give an out-of-tree PMD plugin the PMD info string DPDK's tools read.

dpdk-pmdinfo.py looks in a binary's .rodata for strings that start with
"PMD_INFO_STRING=" followed by JSON ({"name": ..., "params": ...}). DPDK's
build makes them for in-tree drivers; Debian ships no generator, so this is
vnapi's own. It reads what the driver registered, from the compiled objects
(a static library or object files), never a second copy of it:

  RTE_PMD_REGISTER_VDEV/PCI(nm, drv)    -> char array this_pmd_name<N or nm> = "nm"
  RTE_PMD_REGISTER_PARAM_STRING(nm, s)  -> char array __nm_param_string_export = s
  RTE_PMD_REGISTER_KMOD_DEP(nm, s)      -> char array __nm_kmod_dep_export = s
  RTE_PMD_REGISTER_PCI_TABLE(nm, tbl)   -> char array __nm_pci_tbl_export = "tbl",
                                           and tbl itself: struct rte_pci_id[],
                                           12 bytes each, up to vendor_id 0

and writes a C file with one such string per driver found.

Usage: pmdinfo_gen.py OUTPUT.c INPUT.a|INPUT.o...
"""

import io
import json
import os
import re
import struct
import sys

from elftools.elf.elffile import ELFFile

NAME_RE = re.compile(r'^this_pmd_name\w+$')  # <counter> up to 25.07, <name> since
PARAM_SUFFIX = '_param_string_export'
KMOD_SUFFIX = '_kmod_dep_export'
PCI_TBL_SUFFIX = '_pci_tbl_export'
STRING_SUFFIXES = (PARAM_SUFFIX, KMOD_SUFFIX, PCI_TBL_SUFFIX)
# struct rte_pci_id: class_id (u32), vendor_id, device_id, subsystem_vendor_id,
# subsystem_device_id (u16 each), little endian.
PCI_ID = struct.Struct('<IHHHH')


def ar_members(data, path):
    """Yield the member files of an ar archive, regular or thin (meson makes
    thin ones: members are named, by path relative to the archive, and not
    stored in it)."""
    thin = data.startswith(b'!<thin>\n')
    names = b''
    pos = 8
    while pos + 60 <= len(data):
        hdr = data[pos:pos + 60]
        name = hdr[0:16].decode().strip()
        size = int(hdr[48:58].decode().strip())
        body_pos = pos + 60
        if name == '//':
            names = data[body_pos:body_pos + size]
            pos = body_pos + size + (size & 1)
            continue
        stored = not thin or name in ('/', '/SYM64/')
        pos = body_pos + (size + (size & 1) if stored else 0)
        if name in ('/', '/SYM64/'):
            continue
        if not thin:
            yield data[body_pos:body_pos + size]
            continue
        long_name = re.match(r'/([0-9]+)', name)
        if long_name:
            off = int(long_name.group(1))
            name = names[off:names.index(b'/\n', off)].decode()
        else:
            name = name.rstrip('/')
        with open(os.path.join(os.path.dirname(path), name), 'rb') as f:
            yield f.read()


def object_files(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data.startswith(b'!<arch>\n') or data.startswith(b'!<thin>\n'):
        yield from ar_members(data, path)
    elif data.startswith(b'\x7fELF'):
        yield data
    else:
        raise ValueError('%s: neither an ELF object nor an ar archive' % path)


def symbol_data(elf):
    """{symbol: bytes} of every initialized data object."""
    out = {}
    symtab = elf.get_section_by_name('.symtab')
    if symtab is None:
        return out
    for sym in symtab.iter_symbols():
        if sym['st_info']['type'] != 'STT_OBJECT':
            continue
        shndx = sym['st_shndx']
        if not isinstance(shndx, int):
            continue
        sec = elf.get_section(shndx)
        if sec['sh_type'] == 'SHT_NOBITS':
            continue
        start = sym['st_value']
        out[sym.name] = sec.data()[start:start + sym['st_size']]
    return out


def symbol_strings(data):
    """{symbol: string} for the registration's C strings (other data objects,
    e.g. a sanitizer's, are not text)."""
    return {name: raw.split(b'\0', 1)[0].decode() for name, raw in data.items()
            if NAME_RE.match(name) or name.endswith(STRING_SUFFIXES)}


def pci_ids(raw):
    """[[vendor, device, subsystem vendor, subsystem device], ...] as
    dpdk-pmdinfo.py shows them, up to the terminating entry."""
    ids = []
    for off in range(0, len(raw) - PCI_ID.size + 1, PCI_ID.size):
        _, ven, dev, sven, sdev = PCI_ID.unpack_from(raw, off)
        if ven == 0:
            break
        ids.append([ven, dev, sven, sdev])
    return ids


def drivers_in(paths):
    drivers = []
    for p in paths:
        for obj in object_files(p):
            data = symbol_data(ELFFile(io.BytesIO(obj)))
            strings = symbol_strings(data)
            for sym, value in strings.items():
                if NAME_RE.match(sym):
                    # dpdk-pmdinfo.py expects pci_ids in every entry; a vdev has none.
                    tbl = strings.get('__' + value + PCI_TBL_SUFFIX)
                    drv = {'name': value, 'pci_ids': pci_ids(data.get(tbl, b''))}
                    if tbl is not None and not drv['pci_ids']:
                        raise ValueError('%s: PCI table %s not found or empty' % (value, tbl))
                    params = strings.get('__' + value + PARAM_SUFFIX)
                    if params is not None:
                        drv['params'] = params
                    kmod = strings.get('__' + value + KMOD_SUFFIX)
                    if kmod is not None:
                        drv['kmod'] = kmod
                    drivers.append(drv)
    return drivers


def c_string(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out, inputs = sys.argv[1], sys.argv[2:]
    drivers = drivers_in(inputs)
    if not drivers:
        sys.stderr.write('pmdinfo_gen: no RTE_PMD_REGISTER_* driver in %s\n' % ' '.join(inputs))
        return 1
    lines = ['/* Generated by drivers/pmdinfo_gen.py from %s: do not edit. */\n'
             % ' '.join(p.split('/')[-1] for p in inputs)]
    for i, drv in enumerate(sorted(drivers, key=lambda d: d['name'])):
        info = 'PMD_INFO_STRING= ' + json.dumps(drv, sort_keys=True)
        lines.append('static const char vnapi_pmd_info_%d[] __attribute__((used)) = %s;\n'
                     % (i, c_string(info)))
    with open(out, 'w') as f:
        f.writelines(lines)
    return 0


if __name__ == '__main__':
    sys.exit(main())
