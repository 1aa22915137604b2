#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Instructions per packet hop, net_vnapi vs net_virtio_user, counted by callgrind in one
dpdk-testpmd thread (the method: devtools/vnapitools/icount.py).

Cells: {split, packed} x {64, 1518 B} x {mergeable on, off}, io forwarding (the burst that
`start tx_first` injects circulates vhost -> front end -> vhost). Per cell and front end: the
PMD's Ir per hop, the back end's (net_vhost + lib/vhost), the whole forwarding thread's, and
callgrind's simulated D1 and LL misses per hop. net_virtio_user runs with the devargs that
cost it the fewest PMD instructions in that cell (--vu-explore measures every candidate;
default: the recorded choice, VU_BEST).

There is no one-thread form of testpmd's txonly/rxonly directions: with both ports on one
lcore, txonly transmits on both and receives nothing (the rings fill and every burst is
refused), rxonly has nothing to receive, and flowgen does both directions at once. io is the
one loop; the PMD's figure is its rx and tx per hop together (a hop is one rx on one port and
one tx on the other), and the per-function list splits vnapi's (the plugin has symbols).

  devtools/icount.py --lock /run/vnapi-cpu.lock                 every cell, both front ends
  devtools/icount.py --cells 'split-64-*' --runs 3 --no-doc     a quick look
  devtools/icount.py --gate-baseline --runs 10 --lock ...       the gate's spread and baseline
  devtools/icount.py --cells packed-64-io --frontends vnapi --functions 25 --no-doc

--gate-baseline measures the gate's cells (GATE_CELLS, vnapi only, no cache simulation) --runs
times, and writes tests/icount/baseline.json: per cell the median PMD Ir per hop, the spread
((max - min) / median) and the threshold, 3 x the spread, at most 2 %. Commit that file only
with a message that says why the baseline moves.

Python 3 standard library only.
"""

import argparse
import contextlib
import datetime
import fcntl
import fnmatch
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

from vnapitools import harness as h
from vnapitools import icount as ic
from vnapitools import perfdoc
from vnapitools import procfs
from vnapitools import runs

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(TOP, 'tests', 'icount', 'baseline.json')
GATE_CELLS = ('split-64-io', 'packed-64-io')
GATE_HOPS = 800000
THRESHOLD_CAP = 0.02

# net_virtio_user's cheapest devargs per ring and mergeable setting, measured with
# --vu-explore (the section's "net_virtio_user devargs" table).
VU_BEST = {
    ('split', 1): ('in_order=1', []),
    ('split', 0): ('in_order=0,vectorized=1', ic.SIMD512),
    ('packed', 1): ('in_order=1', []),
    ('packed', 0): ('in_order=1', []),
}


def log(msg):
    print('icount: %s' % msg, flush=True)


class CpuLock:
    """The machine's CPU lock (flock), taken around every run and kept for up to `hold`
    seconds of runs in a row, then released before the next run so that others get a turn
    (RULES: at most about 10 minutes per hold). No path: no lock."""

    def __init__(self, path, hold=480.0):
        self.path, self.hold = path, hold
        self.fd = None
        self.since = 0.0

    @contextlib.contextmanager
    def run(self):
        if self.path and self.fd is not None and time.monotonic() - self.since > self.hold:
            self.release()
        if self.path and self.fd is None:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            t0 = time.monotonic()
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.since = time.monotonic()
            if self.since - t0 > 1:
                log('lock %s taken after %.0f s' % (self.path, self.since - t0))
        try:
            yield
        except BaseException:
            self.release()
            raise

    def release(self):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def git_tree():
    try:
        head = subprocess.run(['git', '-C', TOP, 'rev-parse', 'HEAD'], capture_output=True,
                              text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(['git', '-C', TOP, 'status', '--porcelain', '--untracked-files=no'],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return None
    return head + ('+uncommitted' if dirty else '')


def select(cells, patterns):
    if not patterns:
        return cells
    pats = [p.strip() for p in patterns.split(',') if p.strip()]
    return [c for c in cells if any(fnmatch.fnmatchcase(c.id, p) for p in pats)]


def frontends_for(cell, names, explore):
    out = []
    for n in names:
        if n == 'vnapi':
            out.append(ic.FrontEnd('vnapi'))
        elif explore:
            out += [ic.FrontEnd('virtio_user', d, e) for d, e in ic.vu_candidates(cell)]
        else:
            d, e = VU_BEST[(cell.ring, cell.mrg)]
            out.append(ic.FrontEnd('virtio_user', d, e))
    return out


def fmt(v, nd=1):
    return '-' if v is None else '%.*f' % (nd, v)


def med(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def spread(vals):
    m = statistics.median(vals)
    return (max(vals) - min(vals)) / m if m else 0.0


def summarize(results):
    """{cell: {frontend label: {figures: median over runs, 'runs': n, 'pmd_runs': [...]}}}"""
    out = {}
    for r in results:
        out.setdefault(r['cell'], {}).setdefault(r['label'], []).append(r)
    summ = {}
    for cell, by in out.items():
        for label, runs in by.items():
            s = {k: med(runs, k) for k in runs[0] if k.endswith('_per_hop')}
            s['runs'] = len(runs)
            s['pmd_runs'] = [r['pmd_ir_per_hop'] for r in runs]
            s['frontend'] = runs[0]['frontend']
            s['devargs'] = runs[0]['devargs']
            s['eal_extra'] = runs[0]['eal_extra']
            s['paths'] = runs[0]['paths']
            s['groups_per_hop'] = {g: statistics.median(r['ir_groups'][g] / r['hops']
                                                        for r in runs)
                                   for g in runs[0]['ir_groups']}
            summ.setdefault(cell, {})[label] = s
    return summ


def best_vu(by_label):
    vus = [(s['pmd_ir_per_hop'], label) for label, s in by_label.items()
           if s['frontend'] == 'virtio_user']
    return min(vus)[1] if vus else None


def tables(summ, cells):
    rows = []
    vu_rows = []
    groups = []
    for c in cells:
        by = summ.get(c.id)
        if not by:
            continue
        vn = by.get('vnapi')
        vl = best_vu(by)
        vu = by.get(vl) if vl else None

        def ratio(key):
            if not vn or not vu or not vu.get(key):
                return '-'
            return '%.2f' % (vn[key] / vu[key])

        def pair(key, nd=1):
            return '%s / %s' % (fmt(vn.get(key) if vn else None, nd),
                                fmt(vu.get(key) if vu else None, nd))
        goal = '-'
        if vn and vu:
            ok = (vn['pmd_ir_per_hop'] <= GOAL_RATIO * vu['pmd_ir_per_hop'] and
                  vn['whole_ir_per_hop'] < vu['whole_ir_per_hop'])
            goal = 'met' if ok else 'NOT MET'
        rows.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            c.id, fmt(vn['pmd_ir_per_hop'] if vn else None),
            fmt(vu['pmd_ir_per_hop'] if vu else None), ratio('pmd_ir_per_hop'),
            pair('whole_ir_per_hop'), ratio('whole_ir_per_hop'), pair('backend_ir_per_hop'),
            pair('D1_misses_per_hop', 2) + ' (PMD ' + pair('pmd_D1_misses_per_hop', 2) + ')',
            pair('LL_misses_per_hop', 3), goal))
        for label, s in sorted(by.items(), key=lambda kv: (kv[1]['frontend'] != 'vnapi',
                                                            kv[0])):
            paths = [m.group(1) for m in (re.search(r'((rx|tx) path: [^(]*|using .* path)', p)
                                          for p in s['paths']) if m]
            vu_rows.append('| %s | %s | `%s` %s | %s | %s | %s | %s |' % (
                c.id, s['frontend'], s['devargs'].split(',', 1)[1].replace('path=<sock>,', ''),
                ' '.join('`%s`' % e for e in s['eal_extra']), fmt(s['pmd_ir_per_hop']),
                fmt(s['whole_ir_per_hop']), '; '.join(paths[-2:]) or '-',
                'anchor' if label == vl else ''))
        for label, s in ((('vnapi', vn),) + (((vl, vu),) if vu else ())):
            if s is None:
                continue
            gp = s['groups_per_hop']
            groups.append('| %s | %s | %s |' % (c.id, s['frontend'], ' | '.join(
                fmt(gp.get(g)) for g in GROUP_COLS)))
    return rows, vu_rows, groups


INTRO = (
    'Instructions per packet hop, counted by callgrind with both ends of the vhost-user pair in '
    'one dpdk-testpmd thread: no timing, no second CPU, so the figures repeat to a few '
    'thousandths of an instruction run after run, hour after hour, where wall-clock ratios on '
    'these VMs move by tens of percent. They say what each PMD costs per packet, not how fast a '
    'run goes (cache misses, the back end\'s polling and the host decide that: the paired '
    'throughput sections). Goal: vnapi\'s PMD at most 0.70 of net_virtio_user\'s in every cell, '
    'and the whole forwarding thread cheaper than with net_virtio_user.')
GOAL_RATIO = 0.70


def gate_lines():
    """The gate's baseline, spread and threshold, from tests/icount/baseline.json."""
    try:
        with open(BASELINE) as f:
            b = json.load(f)
    except (OSError, ValueError):
        return ['- Gate: no baseline file (%s)' % os.path.relpath(BASELINE, TOP)]
    out = ['- Gate (CI, DPDK 22.11, tests/icount/test_icount_gate.py): vnapi\'s PMD Ir per hop '
           'in %s must stay within the threshold of the committed baseline (`%s`, measured by '
           '`%s`, %d runs of about %d hops each); above it fails, and so does below it (a stale '
           'baseline would hide a regression back up to it). Threshold: 3 x the spread (max - '
           'min) / median of the runs, at most %.0f %%:' % (
               ' and '.join(sorted(b['cells'])), os.path.relpath(BASELINE, TOP),
               b.get('command'), b.get('runs', 0),
               b.get('hops_target') or 0, 100 * b.get('threshold_cap', THRESHOLD_CAP))]
    for cid, c in sorted(b['cells'].items()):
        out.append('  - %s: baseline %.4f Ir/hop; runs %.4f to %.4f, spread %.4f %%, threshold '
                   '%.4f %% (%.4f Ir/hop)' % (cid, c['pmd_ir_per_hop'], min(c['runs']),
                                              max(c['runs']), 100 * c['spread'],
                                              100 * c['threshold'],
                                              c['threshold'] * c['pmd_ir_per_hop']))
    return out


GROUP_COLS = ('pmd', 'backend', 'testpmd', 'ethdev', 'mempool', 'mbuf', 'eal', 'libc', 'ld.so',
              'other')


def render(meta, summ, cells, functions):
    rows, vu_rows, groups = tables(summ, cells)
    lines = [
        '- Tools: %s; DPDK %s; %s; the plugin built with %s' % (
            meta['tools']['valgrind'], meta['tools']['dpdk'], meta['tools']['cc'],
            ', '.join('%s=%s' % kv for kv in meta['build'].items())),
        '- Method: one `dpdk-testpmd` (`--no-huge -m 512 --lcores 0@0,1@0 --nb-cores=1 '
        '--no-flush-rx --burst=32 --txpkts=SIZE`) with `--vdev net_vhost0,iface=SOCK` only; '
        '`port attach` of the front end (`queue_size=256`, the cell\'s `mrg_rxbuf` and '
        '`packed_vq`; vnapi `in_order=1`, net_virtio_user the devargs below), `port start all`, '
        '`set fwd io`, `start tx_first` (one burst of 32 per port circulates). Under '
        '`valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --cache-sim=yes`: '
        'a warm-up, `callgrind_control -i on`, a short run, `callgrind_control -z`, a counted '
        'run of %.0f s, `callgrind_control -d`; forwarding is stopped (`stop`) at every switch, '
        'so the forwarding thread\'s dump holds exactly the counted iterations and the hops are '
        'the packets both ports received in them (testpmd\'s forward statistics). %d run(s) per '
        'cell and front end, medians. A hop is one packet received on one port and sent on '
        'the other: the PMD figure is its rx and tx per hop together. No one-thread form of '
        'txonly/rxonly exists in testpmd (with both ports on one lcore txonly sends on both and '
        'receives nothing, rxonly has nothing to receive): the per-function list splits '
        'vnapi\'s rx and tx.' % (meta['window_s'], meta['runs']),
        '- Ir per hop per shared object: PMD (`librte_net_vnapi.so` / `librte_net_virtio.so`), '
        'back end (`librte_net_vhost` + `librte_vhost`), whole (the forwarding thread: testpmd, '
        'ethdev, mempool, libc, ld.so, both PMDs). Misses: callgrind\'s simulated D1 and LL '
        '(reads and writes; LL with instruction fetches) per hop.',
        '',
    ] + gate_lines() + [
        '',
        '| cell | vnapi PMD Ir/hop | net_virtio_user PMD Ir/hop | ratio | whole vnapi / vu '
        '| ratio | back end vnapi / vu | D1 misses/hop vnapi / vu | LL misses/hop vnapi / vu '
        '| goal (PMD <= %.2f, whole < 1) |' % GOAL_RATIO,
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ] + rows
    if vu_rows:
        lines += ['', '### Front ends and their paths', '',
                  'net_virtio_user: every devargs candidate of the cell when run with '
                  '`--vu-explore`; the one with the fewest PMD instructions is the anchor '
                  '(devtools/icount.py keeps it as VU_BEST). Under valgrind (no AVX-512) '
                  '`vectorized=1` on a packed ring runs the scalar paths. vnapi: the rx and tx '
                  'paths it logged (AVX2 rx: valgrind runs AVX2).', '',
                  '| cell | front end | devargs (+EAL) | PMD Ir/hop | whole Ir/hop | paths logged '
                  '| |', '|---|---|---|---:|---:|---|---|'] + vu_rows
    lines += ['', '### Ir per hop by object', '',
              '| cell | front end | %s |' % ' | '.join(GROUP_COLS),
              '|---|---|%s' % ('---:|' * len(GROUP_COLS))] + groups
    if functions:
        lines += ['', '### Functions (self Ir per hop, first run of each)', '']
        for key, rows_f in functions.items():
            lines += ['%s:' % key, '', '| object | function | Ir/hop |', '|---|---|---:|']
            lines += ['| %s | `%s` | %.2f |' % (o, f, v) for o, f, v in rows_f]
            lines.append('')
    return '\n'.join(lines) + '\n'


def run_all(args, cells, fes_names, cache, plugin):
    results = []
    lock = CpuLock(args.lock, args.lock_hold)
    for c in cells:
        for fe in frontends_for(c, fes_names, args.vu_explore):
            for i in range(args.runs):
                with lock.run():
                    r = ic.run_cell(fe, c, plugin=plugin, window=args.window, cache=cache,
                                    hops_target=args.hops,
                                    keep=args.keep and os.path.join(
                                        args.keep, '%s-%s-%d' % (c.id, fe.label().replace(
                                            ' ', '_').replace(',', '_'), i)))
                r['label'] = fe.label()
                results.append(r)
                if args.json:
                    with open(args.json + '.partial', 'w') as f:
                        json.dump(results, f)
                log('%-20s %-34s run %d: PMD %.2f, back end %.2f, whole %.2f Ir/hop '
                    '(%d hops, %.0f s)' % (c.id, fe.label(), i + 1, r['pmd_ir_per_hop'],
                                          r['backend_ir_per_hop'], r['whole_ir_per_hop'],
                                          r['hops'], r['seconds']))
    lock.release()
    return results


def gate_baseline(args, plugin, meta):
    cells = [ic.Cell.parse(c) for c in GATE_CELLS]
    args.hops = args.hops or GATE_HOPS
    results = run_all(args, cells, ['vnapi'], False, plugin)
    base = {
        'what': 'vnapi PMD Ir per hop of the icount gate (tests/icount/test_icount_gate.py); '
                'written by devtools/icount.py --gate-baseline, changed only in a commit that '
                'says why',
        # The tree and the date go in the commit that changes this file, not in it.
        'cpu_model': meta['cpu_model'],
        'command': meta['command'], 'tools': meta['tools'], 'build': meta['build'],
        'hops_target': args.hops, 'runs': args.runs, 'threshold_cap': THRESHOLD_CAP,
        'cells': {},
    }
    for c in cells:
        vals = [r['pmd_ir_per_hop'] for r in results if r['cell'] == c.id]
        sp = spread(vals)
        base['cells'][c.id] = {
            'pmd_ir_per_hop': round(statistics.median(vals), 4),
            'runs': [round(v, 4) for v in vals],
            'hops': [r['hops'] for r in results if r['cell'] == c.id],
            'spread': sp,
            'threshold': min(3 * sp, THRESHOLD_CAP),
        }
        log('%s: median %.3f, min %.4f, max %.4f, spread %.4f %%, threshold %.4f %%'
            % (c.id, statistics.median(vals), min(vals), max(vals), 100 * sp,
               100 * base['cells'][c.id]['threshold']))
    return base, results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split('\n\n', 1)[1])
    ap.add_argument('--build', default=os.path.join(TOP, 'build'),
                    help='build directory (its drivers/librte_net_vnapi.so)')
    ap.add_argument('--plugin', help='a plugin to count (default: $VNAPI_PLUGIN, '
                    'else the one --build builds first)')
    ap.add_argument('--cells', help='comma-separated cell ids or patterns (default: all 8)')
    ap.add_argument('--frontends', default='vnapi,virtio_user')
    ap.add_argument('--runs', type=int, default=1, help='runs per cell and front end')
    ap.add_argument('--window', type=float, default=2.0,
                    help='seconds of the counted forwarding run (default 2; see --hops)')
    ap.add_argument('--hops', type=int, default=None,
                    help='instead of --window: a window as long as this many hops take at '
                    'the warm-up\'s rate (--gate-baseline: %d)' % GATE_HOPS)
    ap.add_argument('--no-cache', action='store_true',
                    help='no cache simulation (no miss figures; about twice as fast)')
    ap.add_argument('--vu-explore', action='store_true',
                    help='every net_virtio_user devargs candidate, the cheapest is the anchor')
    ap.add_argument('--functions', type=int, default=0, metavar='N',
                    help='list the N costliest functions of each cell\'s first run')
    ap.add_argument('--gate-baseline', action='store_true',
                    help='measure the gate\'s cells and write tests/icount/baseline.json')
    ap.add_argument('--baseline-out', default=BASELINE)
    ap.add_argument('--lock', help='take this flock around the runs, released every '
                    '--lock-hold seconds (instead of running the whole script under flock)')
    ap.add_argument('--lock-hold', type=float, default=480.0,
                    help='seconds of runs per hold of --lock (default 480)')
    ap.add_argument('--json', help='write every run\'s figures here')
    ap.add_argument('--from-json', metavar='FILE',
                    help='measure nothing: publish the section from a --json file of an '
                    'earlier run (its own tree, date, machine and command)')
    ap.add_argument('--keep', help='keep the callgrind files under this directory')
    ap.add_argument('--no-doc', action='store_true',
                    help='print the section, publish nothing (a --cells or --frontends subset '
                    'is never published either)')
    ap.add_argument('--doc', help='the page (default doc/performance.md; results in the '
                    'directory results next to it)')
    args = ap.parse_args()

    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        meta, results = saved['meta'], saved['runs']
        ids = []
        for r in results:
            if r['cell'] not in ids:
                ids.append(r['cell'])
        return publish(args, meta, results, [ic.Cell.parse(i) for i in ids])
    miss = ic.prerequisites()
    if miss:
        print('icount: missing: %s' % '; '.join(miss), file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print('icount: needs root (EAL, /run/vnapi)', file=sys.stderr)
        return 2
    h.install_guards()
    src = runs.plugin(args.build, args.plugin)
    plugin = h.prepare_plugin(src)
    cmd = ('devtools/icount.py ' + ' '.join(shlex.quote(a) for a in sys.argv[1:])).strip()
    meta = {
        'command': cmd, 'tree': git_tree(),
        'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
        'cpu_model': procfs.cpu_model(), 'cpus': os.cpu_count(), 'kernel': platform.release(),
        'tools': ic.tool_versions(), 'build': ic.build_info(args.build), 'plugin': src,
        'window_s': args.window, 'runs': args.runs,
    }
    # The page's provenance, taken before measuring (the tree measured).
    meta['perfdoc'] = perfdoc.measurement('icount', cmd, build=os.path.abspath(args.build))
    t0 = time.monotonic()
    if args.gate_baseline:
        base, results = gate_baseline(args, plugin, meta)
        with open(args.baseline_out + '.tmp', 'w') as f:
            json.dump(base, f, indent=1, sort_keys=True)
            f.write('\n')
        os.rename(args.baseline_out + '.tmp', args.baseline_out)
        log('wrote %s (%.0f s)' % (args.baseline_out, time.monotonic() - t0))
        if args.json:
            with open(args.json, 'w') as f:
                json.dump({'meta': meta, 'baseline': base, 'runs': results}, f, indent=1)
        return 0

    cells = select(ic.all_cells(), args.cells)
    if not cells:
        ap.error('no cell matches %r' % args.cells)
    names = [n.strip() for n in args.frontends.split(',') if n.strip()]
    results = run_all(args, cells, names, not args.no_cache, plugin)
    meta['elapsed_s'] = time.monotonic() - t0
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'meta': meta, 'runs': results}, f, indent=1)
    publish(args, meta, results, cells)
    log('elapsed %.0f s' % meta['elapsed_s'])
    return 0


def publish(args, meta, results, cells):
    """Print the section and write it into the document (unless --no-doc)."""
    summ = summarize(results)
    functions = {}
    if args.functions:
        # vnapi's and the anchor's, the first run of each
        want = {(cid, label) for cid, by in summ.items() for label in by
                if label == 'vnapi' or label == best_vu(by)}
        for r in results:
            key = '%s, %s' % (r['cell'], r['label'])
            if (r['cell'], r['label']) in want and key not in functions:
                functions[key] = r['functions'][:args.functions]
    body = render(meta, summ, cells, functions)
    print(body)
    whole = ({c.id for c in cells} == {c.id for c in ic.all_cells()} and
             all('vnapi' in by and best_vu(by) for by in summ.values()))
    if args.no_doc or not whole:
        if not whole:
            log('a subset of the cells or front ends: printed, not published')
        return 0
    slim = [{k: v for k, v in r.items() if k not in ('port_stats', 'functions')}
            for r in results]
    perfdoc.publish(meta['perfdoc'], body, intro=INTRO,
                    data={'meta': {k: v for k, v in meta.items() if k != 'perfdoc'},
                          'summary': summ, 'runs': slim}, doc=args.doc)
    log('published section icount (%s)' % perfdoc.paths(args.doc)[0])
    return 0


if __name__ == '__main__':
    sys.exit(main())
