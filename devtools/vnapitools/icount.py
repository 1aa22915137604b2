# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Instructions per packet hop, counted by callgrind in one thread.

One dpdk-testpmd runs both ends of a vhost-user pair on one forwarding lcore: it starts with
net_vhost only (`--vdev net_vhost0,iface=SOCK`), then `port attach`es the front end (net_vnapi
or net_virtio_user), `port start all`, `set fwd io`, `start tx_first`: one burst per port
circulates for ever, vhost -> front end -> vhost, in one thread, with no timing in it.

The count (run_cell()), under `valgrind --tool=callgrind --instr-atstart=no
--separate-threads=yes`:

  1. warm up: `start tx_first`, a second of forwarding, `stop` (uninstrumented);
  2. `callgrind_control -i on`, `start`, a short forwarding run that fills the simulated
     caches and the translation cache, `stop`;
  3. `callgrind_control -z` (zero every counter), `start`, WINDOW seconds, `stop`;
  4. `callgrind_control -d` (dump), then quit.

Every callgrind command and every counter read happens while forwarding is stopped (testpmd
runs with `--no-flush-rx`, so the packets stay in the rings from one `start` to the next):
the dump of the forwarding lcore's thread holds exactly the iterations of step 3, and the
hops are exactly the packets the ports received in it (testpmd's forward statistics printed
by `stop`; io forwards each received packet once, so a hop is one rx burst entry on one port
and one tx on the other). The window's length in seconds only sets how many hops are
averaged; nothing in the count depends on time.

Costs are per shared object (the DPDK objects of Debian have no symbols; the table needs
none): the front end's PMD (the plugin, or librte_net_virtio), the back end (librte_net_vhost
+ librte_vhost), and the whole forwarding thread (testpmd's loop, ethdev, mempool, mbuf, libc,
ld.so's __tls_get_addr ...). With cache simulation on (cache=True), callgrind's simulated D1
and LL misses (reads + writes) come with them.

Python 3 standard library only.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from . import harness as h

QUEUE_SIZE = 256
BURST = 32
MBUFS = 16384
SIMD512 = ['--force-max-simd-bitwidth=512']

# The cache events callgrind reports with --cache-sim=yes, and how they are summed here.
MISS_EVENTS = {
    'D1': ('D1mr', 'D1mw'),
    'LL': ('DLmr', 'DLmw', 'ILmr'),
}


class Cell:
    """A ring layout, a frame size and mergeable rx buffers on or off; io forwarding."""

    def __init__(self, ring, size, mrg):
        self.ring, self.size, self.mrg = ring, int(size), int(mrg)

    @property
    def id(self):
        return '%s-%d-io%s' % (self.ring, self.size, '' if self.mrg else '-mrg0')

    @staticmethod
    def parse(cell_id):
        m = re.match(r'^(split|packed)-(\d+)-io(-mrg0)?$', cell_id)
        if not m:
            raise ValueError('bad cell id %r (e.g. split-64-io, packed-1518-io-mrg0)' % cell_id)
        return Cell(m.group(1), m.group(2), 0 if m.group(3) else 1)

    def __repr__(self):
        return self.id


def all_cells():
    return [Cell(ring, size, mrg) for ring in ('split', 'packed') for size in (64, 1518)
            for mrg in (1, 0)]


# net_virtio_user (DPDK 22.11) devargs a cell may use: in_order=1 is its default and the
# in-order paths; vectorized=1 selects the SSE split rx (in_order=0, mergeable off) or the
# AVX-512 packed paths (in_order=1; valgrind has no AVX-512, so under callgrind the packed
# ones fall back to the scalar code: the candidate stays for the record).
def vu_candidates(cell):
    if cell.ring == 'split':
        c = [('in_order=1', []), ('in_order=0', [])]
        if not cell.mrg:
            c.append(('in_order=0,vectorized=1', SIMD512))
    else:
        c = [('in_order=1', []), ('in_order=0', []), ('in_order=1,vectorized=1', SIMD512)]
    return c


class FrontEnd:
    """What a cell's front end is: 'vnapi' or 'virtio_user', its devargs beyond the cell's,
    the EAL options it needs."""

    def __init__(self, name, extra='', eal=()):
        if name not in ('vnapi', 'virtio_user'):
            raise ValueError('unknown front end %r' % name)
        self.name, self.extra, self.eal = name, extra, list(eal)

    def devargs(self, cell, sock):
        drv = 'net_vnapi0' if self.name == 'vnapi' else 'net_virtio_user0'
        args = [drv, 'path=%s' % sock, 'queue_size=%d' % QUEUE_SIZE, 'mrg_rxbuf=%d' % cell.mrg,
                'packed_vq=%d' % (cell.ring == 'packed')]
        if self.name == 'vnapi':
            args.append('in_order=1')
        args += [a for a in self.extra.split(',') if a]
        return ','.join(args)

    def label(self):
        return self.name + (' ' + self.extra if self.extra else '')


# ---- callgrind's output ------------------------------------------------------------------------

_NAME = re.compile(r'^\((\d+)\)(?: (.*))?$')


class Profile:
    """One callgrind output file (one thread, one dump): self cost per object and per function,
    inclusive cost per called function. Costs are lists, one entry per event of `events`."""

    def __init__(self, path):
        self.path = path
        self.events = []
        self.thread = None
        self.by_object = {}
        self.by_function = {}
        self.calls_to = {}          # (object, function) -> [calls, inclusive costs...]
        self._parse(path)

    def _parse(self, path):
        names = {}

        def name(kind, value):
            m = _NAME.match(value)
            if not m:
                return value
            key = (kind, m.group(1))
            if m.group(2) is not None:
                names[key] = m.group(2)
            return names.get(key, value)

        ob = fn = cob = cfn = None
        pending_call = None
        n = 0
        with open(path) as f:
            for line in f:
                line = line.rstrip('\n')
                if not line or line.startswith('#'):
                    continue
                c = line[0]
                if c.isdigit() or c in '+-*':
                    vals = line.split()[1:]
                    cost = [int(v) for v in vals] + [0] * (n - len(vals))
                    if pending_call is not None:
                        key = (cob or ob, cfn)
                        acc = self.calls_to.setdefault(key, [0] + [0] * n)
                        acc[0] += pending_call
                        for i, v in enumerate(cost):
                            acc[i + 1] += v
                        # cob= names the object of the one call it precedes; without it
                        # the callee is in the caller's object.
                        pending_call = cob = cfn = None
                        continue
                    for d, key in ((self.by_object, ob), (self.by_function, (ob, fn))):
                        acc = d.setdefault(key, [0] * n)
                        for i, v in enumerate(cost):
                            acc[i] += v
                    continue
                k, _, v = line.partition('=')
                if k == 'ob':
                    ob = name('ob', v)
                elif k == 'fn':
                    fn = name('fn', v)
                    cob = cfn = None
                elif k == 'cob':
                    cob = name('ob', v)
                elif k == 'cfn' or k == 'cfi' or k == 'cfl':
                    if k == 'cfn':
                        cfn = name('fn', v)
                    else:
                        name('fl', v)
                elif k in ('fl', 'fi', 'fe'):
                    name('fl', v)
                elif k == 'calls':
                    pending_call = int(v.split()[0])
                elif line.startswith('events:'):
                    self.events = line.split(':', 1)[1].split()
                    n = len(self.events)
                elif line.startswith('thread:'):
                    self.thread = int(line.split(':', 1)[1])

    def total(self, event='Ir'):
        i = self.events.index(event)
        return sum(v[i] for v in self.by_object.values())

    def object_cost(self, match, event='Ir'):
        """Self cost of every object whose path matches the regex `match`."""
        i = self.events.index(event)
        rx = re.compile(match)
        return sum(v[i] for ob, v in self.by_object.items() if rx.search(ob or ''))

    def misses(self, kind, match=None):
        """Simulated misses of kind 'D1' or 'LL' (MISS_EVENTS), of the objects matching
        `match` (None: all); None without cache simulation."""
        evs = MISS_EVENTS[kind]
        if not all(e in self.events for e in evs):
            return None
        rx = re.compile(match) if match else None
        idx = [self.events.index(e) for e in evs]
        return sum(v[i] for ob, v in self.by_object.items()
                   if rx is None or rx.search(ob or '') for i in idx)


# Objects, by path.
PMD_OBJECT = {'vnapi': r'librte_net_vnapi\.so', 'virtio_user': r'librte_net_virtio\.so'}
BACKEND_OBJECTS = r'librte_(net_)?vhost\.so'
GROUPS = (
    ('testpmd', r'/dpdk-testpmd$'),
    ('ethdev', r'librte_ethdev\.so'),
    ('mempool', r'librte_(mempool|ring)[a-z_]*\.so'),
    ('mbuf', r'librte_mbuf\.so'),
    ('eal', r'librte_eal\.so'),
    ('libc', r'/libc\.so'),
    ('ld.so', r'/ld-linux[^/]*\.so'),
)


def object_groups(prof, fe_name):
    """Ir per group of objects: pmd, backend, the GROUPS, other (the rest)."""
    out = {'pmd': prof.object_cost(PMD_OBJECT[fe_name]),
           'backend': prof.object_cost(BACKEND_OBJECTS)}
    for g, rx in GROUPS:
        out[g] = prof.object_cost(rx)
    out['other'] = prof.total() - sum(out.values())
    return out


def tool_versions():
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return None
    return {'valgrind': out(['valgrind', '--version']),
            'dpdk': out(['pkg-config', '--modversion', 'libdpdk']),
            'cc': out(['cc', '--version'])}


def build_info(build):
    """What the plugin was built with: meson's buildtype, optimization, debug, b_ndebug and
    the datapath_debug option ({} when the build directory has no meson-info)."""
    try:
        with open(os.path.join(build, 'meson-info', 'intro-buildoptions.json')) as f:
            opts = {o['name']: o['value'] for o in json.load(f)}
    except (OSError, ValueError):
        return {}
    return {k: opts.get(k) for k in ('buildtype', 'optimization', 'debug', 'b_ndebug',
                                     'datapath_debug')}


def gate_verdict(got, ref, threshold):
    """The gate's verdict on a PMD figure `got` against the baseline `ref` and its relative
    `threshold`: ('pass' | 'rise' | 'stale', relative change). 'rise': more than threshold
    over; 'stale': more than threshold under (the baseline would let a regression back up to
    it pass)."""
    delta = got / ref - 1.0
    if delta > threshold:
        return 'rise', delta
    if delta < -threshold:
        return 'stale', delta
    return 'pass', delta


# ---- one run ---------------------------------------------------------------------------------

class RunError(Exception):
    pass


def _callgrind_control(pid, *args):
    r = subprocess.run(['callgrind_control'] + list(args) + [str(pid)], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0 or 'OK' not in r.stdout:
        raise RunError('callgrind_control %s %d: rc %d: %s %s'
                       % (' '.join(args), pid, r.returncode, r.stdout.strip(), r.stderr.strip()))


def prerequisites():
    """What is missing to run a count: a list of messages (empty: nothing)."""
    miss = []
    for prog in ('valgrind', 'callgrind_control', h.TESTPMD):
        if shutil.which(prog) is None:
            miss.append('%s not found (Debian: apt-get install %s)'
                        % (prog, 'dpdk' if prog == h.TESTPMD else 'valgrind'))
    return miss


def run_cell(fe, cell, plugin=None, window=2.0, warm=1.0, cache=False, keep=None,
             hops_target=None):
    """Count one cell with front end `fe` (FrontEnd). plugin: the vnapi plugin as EAL loads it
    (harness.prepare_plugin()), needed when fe is vnapi. window: seconds of the counted
    forwarding run; with hops_target instead as long as the instrumented warm-up's rate says
    that many hops take (0.5 to 30 s), so that every run averages about as many hops whatever
    the host's speed. cache: simulate the caches (D1/LL misses; about twice as slow).
    keep: a directory to copy the callgrind files into. Returns a dict (see the keys below)."""
    wd = h.Workdir('icount')
    out_dir = tempfile.mkdtemp(prefix='vnapi-icount-')
    prefix = h.unique('ic')
    sock = wd.socket()
    vg = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes',
          '--callgrind-out-file=%s/cg.out' % out_dir]
    if cache:
        vg.append('--cache-sim=yes')
    eal = ['--no-pci', '--no-huge', '-m', '512', '--lcores', '0@0,1@0', '--file-prefix', prefix,
           '--vdev', 'net_vhost0,iface=%s' % sock,
           '--log-level=pmd.net.vnapi.init:info', '--log-level=pmd.net.virtio.init:info']
    if fe.name == 'vnapi':
        if not plugin:
            raise RunError('the vnapi front end needs the plugin')
        eal += ['-d', plugin]
    eal += fe.eal
    app = ['-i', '--mask-event=all', '--nb-cores=1', '--total-num-mbufs=%d' % MBUFS, '--no-flush-rx',
           '--burst=%d' % BURST, '--txpkts=%d' % cell.size]
    argv = vg + [h.TESTPMD] + eal + ['--'] + app
    devargs = fe.devargs(cell, sock)
    p = h.DpdkProcess('testpmd-%s' % fe.name, argv, deadline=600, interactive=True,
                      cleanup=[h._rm_runtime(prefix)])
    t0 = time.monotonic()
    try:
        p.start()
        p.wait_prompt(300)
        mark = p.mark()
        r = p.cmd('port attach %s' % devargs, timeout=120)
        if 'is attached' not in r:
            raise RunError('port attach %s: %s' % (devargs, r.strip()[-400:]))
        p.cmd('port start all', timeout=120)
        h.poll_until(lambda: p.link_up(0) and p.link_up(1), 60, what='both links up')
        paths = [ln.text.strip() for ln, _ in
                 p.find_all(r'(rx path|tx path|Rx function|Tx function|'
                            r'[Uu]sing .* (Rx|Tx)|(Rx|Tx) .*path)', since=mark)]
        p.cmd('set fwd io')
        r = p.cmd('start tx_first', timeout=60)
        time.sleep(warm)
        p.stop_fwd()
        _callgrind_control(p.pid, '-i', 'on')
        t1 = time.monotonic()
        p.cmd('start', timeout=60)
        time.sleep(0.5)
        fs = p.stop_fwd()
        if hops_target:
            rate = sum(fs.get(port, {}).get('RX-packets', 0) for port in (0, 1)) / max(
                time.monotonic() - t1, 0.1)
            window = min(30.0, max(0.5, hops_target / rate if rate > 0 else 30.0))
        _callgrind_control(p.pid, '-z')
        p.cmd('start', timeout=60)
        time.sleep(window)
        fs = p.stop_fwd()
        _callgrind_control(p.pid, '-d')
        stats = p.port_stats_all()
        p.stop()
    finally:
        p.stop()
        wd.close()
    try:
        if keep:
            os.makedirs(keep, exist_ok=True)
            for f in glob.glob(os.path.join(out_dir, 'cg.out.1-*')):
                shutil.copy(f, keep)
        files = sorted(glob.glob(os.path.join(out_dir, 'cg.out.1-*')))
        if not files:
            raise RunError('no callgrind dump in %s' % out_dir)
        profs = [Profile(f) for f in files]
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    # The forwarding lcore: the busiest thread that ran the front end's PMD (the main thread
    # runs some of it too: 'stop' reads the port statistics).
    fwd = sorted((pr for pr in profs if pr.object_cost(PMD_OBJECT[fe.name]) > 0),
                 key=lambda pr: -pr.total())
    if not fwd:
        raise RunError('no thread ran the PMD in the window: %s'
                       % ', '.join('%d: %d Ir' % (pr.thread, pr.total()) for pr in profs))
    prof = fwd[0]
    rx = {port: fs.get(port, {}).get('RX-packets', 0) for port in (0, 1)}
    tx = {port: fs.get(port, {}).get('TX-packets', 0) for port in (0, 1)}
    drops = sum(fs.get(port, {}).get('TX-dropped', 0) for port in (0, 1))
    hops = rx[0] + rx[1]
    if hops == 0:
        raise RunError('no packet forwarded in the window: %r' % fs)
    if drops or rx[0] != tx[1] or rx[1] != tx[0]:
        raise RunError('io forwarding lost packets in the window (rx %r, tx %r, dropped %d)'
                       % (rx, tx, drops))
    groups = object_groups(prof, fe.name)
    res = {
        'cell': cell.id, 'frontend': fe.name, 'devargs': devargs.replace(sock, '<sock>'),
        'eal_extra': fe.eal, 'paths': paths, 'hops': hops, 'rx_packets': rx,
        'thread': prof.thread, 'ir': prof.total(), 'ir_groups': groups,
        'pmd_ir_per_hop': groups['pmd'] / hops,
        'backend_ir_per_hop': groups['backend'] / hops,
        'whole_ir_per_hop': prof.total() / hops,
        'other_threads_ir': sum(pr.total() for pr in profs if pr is not prof),
        'seconds': time.monotonic() - t0, 'window_s': window, 'cache_sim': cache,
        'port_stats': {str(k): v for k, v in stats.items()},
    }
    if cache:
        pmd = PMD_OBJECT[fe.name]
        for kind in MISS_EVENTS:
            res['%s_misses_per_hop' % kind] = prof.misses(kind) / hops
            res['pmd_%s_misses_per_hop' % kind] = prof.misses(kind, pmd) / hops
            res['backend_%s_misses_per_hop' % kind] = prof.misses(kind, BACKEND_OBJECTS) / hops
    res['functions'] = top_functions(prof, hops)
    return res


def top_functions(prof, hops, n=40):
    """The n functions of highest self Ir: [object basename, function, Ir per hop]."""
    i = prof.events.index('Ir')
    rows = sorted(prof.by_function.items(), key=lambda kv: -kv[1][i])[:n]
    return [[os.path.basename(ob or '?'), fn, v[i] / hops] for (ob, fn), v in rows]
