# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""What the benchmarks that run the tests' own runs (vnapitools.l3fwd, vnapitools.napi_fwd)
share: the environment meson gives those runs, taken from a build directory; a run whose output
is shown only when it fails; the figures' median and format; the order of the runs in each
pair; pair-by-pair ratios with their median and its bootstrap interval."""

import contextlib
import glob
import io
import os
import random
import statistics
import subprocess
import sys

from . import peer as vp


def _ninja(build, targets):
    """Build @targets (paths relative to @build; none: everything) in @build, quietly."""
    subprocess.run(['ninja', '-C', build] + list(targets), check=True, stdout=subprocess.DEVNULL)


def built_plugin(build, *targets):
    """Build the plugin (and @targets) in @build and return the plugin's path: a benchmark
    measures the tree it stamps, never a plugin left over from an older edit (only these
    targets: other parts of a shared tree may be mid-edit)."""
    def found():
        return sorted((p for p in glob.glob(os.path.join(build, 'drivers',
                                                         'librte_net_vnapi.so*'))
                       if not p.endswith('.p')), key=len)
    plugin = found()
    if plugin:
        wanted = list(targets) + [os.path.relpath(plugin[-1], build)]
    else:
        # No plugin yet: build everything (its versioned name is not known before).
        wanted = []
    _ninja(build, wanted)
    plugin = found()
    if not plugin:
        sys.exit('%s/drivers/librte_net_vnapi.so not found: is %s a configured build of '
                 'this tree?' % (build, build))
    return plugin[0]


def plugin(build, explicit=None, *targets):
    """The plugin a run loads, as an absolute path, also exported as $VNAPI_PLUGIN for the
    processes it starts: @explicit (a --plugin option) or a non-empty $VNAPI_PLUGIN taken as
    given, else the one built_plugin builds in @build. @targets, the other programs the run starts,
    are built in @build either way."""
    path = explicit or os.environ.get('VNAPI_PLUGIN')
    if not path:
        path = built_plugin(build, *targets)
    elif targets:
        _ninja(build, targets)
    if not os.path.exists(path):
        sys.exit('plugin %s not found (--plugin or $VNAPI_PLUGIN names it)' % path)
    path = os.path.abspath(path)
    os.environ['VNAPI_PLUGIN'] = path
    return path


def build_env(build):
    """Build what the runs need in @build and export the paths meson gives the tests: the
    plugin (plugin(): $VNAPI_PLUGIN when set), vnapi-peer, vnapi-fwd, l3fwd-power and EAL's
    plugin directory (where net_vhost is)."""
    plugin_path = plugin(build, None, 'app/vnapi-peer/vnapi-peer', 'tests/l3fwd/l3fwd-power',
                         'app/vnapi-fwd/vnapi-fwd')
    cflags = subprocess.run(['pkg-config', '--cflags', 'libdpdk'], stdout=subprocess.PIPE,
                            text=True, check=True).stdout.split()
    defines = subprocess.run(['cc', '-E', '-dM', '-include', 'rte_build_config.h', '-x', 'c',
                              '/dev/null'] + cflags, stdout=subprocess.PIPE, text=True,
                             check=True).stdout
    pmd_dir = next((ln.split()[2].strip('"') for ln in defines.splitlines()
                    if ln.startswith('#define RTE_EAL_PMD_PATH ')), '')
    paths = {
        'VNAPI_PLUGIN': plugin_path,
        'VNAPI_L3FWD_POWER': os.path.join(build, 'tests', 'l3fwd', 'l3fwd-power'),
        'VNAPI_PEER': vp.build_binary(build),
        'VNAPI_FWD': os.path.join(build, 'app', 'vnapi-fwd', 'vnapi-fwd'),
        'VNAPI_DPDK_PMD_DIR': pmd_dir,
    }
    for k, v in paths.items():
        if not v or not os.path.exists(v):
            sys.exit('%s not found (%r): build %s with integration tests first' % (k, v, build))
    os.environ.update(paths)


def quiet(fn, *args):
    """Run one measurement with its output kept; print the output only if it failed."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            return fn(*args)
    except Exception:
        print(out.getvalue()[-4000:])
        raise


def med(values):
    """The median of the values that are not None, or None."""
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def fmt(x, digits=1):
    return 'n/a' if x is None else ('%.' + str(digits) + 'f') % x


def pair_ratios(nums, dens):
    """The ratios nums[i] / dens[i] of the pairs where both figures exist and the divisor is
    not 0 (a pair's two runs saw the same machine: their ratio is the measurement)."""
    return [n / d for n, d in zip(nums, dens) if n is not None and d]


def median_ci(values, level=0.95, resamples=4000, seed=1):
    """(median, low, high) of @values: the median and its @level percentile bootstrap interval
    (@resamples resamples with replacement, a fixed seed so that a stored run re-renders the
    same); (None, None, None) without values. With one value the interval is that value."""
    v = [x for x in values if x is not None]
    if not v:
        return None, None, None
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(resamples))
    tail = (1.0 - level) / 2
    lo = meds[int(tail * resamples)]
    hi = meds[min(resamples - 1, int((1.0 - tail) * resamples))]
    return statistics.median(v), lo, hi


def new_seed():
    """A seed for pair_orders(), drawn from the system's entropy (print and store it)."""
    return int.from_bytes(os.urandom(4), 'little')


def order_note(seed):
    """How pair_orders() ordered a run's pairs, as a published table says it."""
    if seed is None:
        return 'in an order the run did not record'
    return ('in an order drawn at random (seed %d, `--seed` repeats it) in which every '
            'contender holds every slot about equally often' % seed)


def pair_orders(n_pairs, contenders, seed, key=''):
    """The order of the contenders' runs in each of @n_pairs pairs (lists of @contenders).
    Every pair runs each contender once, in one of the list's rotations (with more than two
    contenders, also the reversed rotations: every neighbour in both orders), each as often
    as the others (the n_pairs left over take distinct ones drawn at random), and the pairs'
    sequence is shuffled by a generator seeded with (@seed, @key). So every contender holds
    every slot about equally often, and no fixed pattern (A B, B A, ...) lets a host state
    that comes and goes with a run's position (every second run, every fourth) fall on one
    contender's runs: an A/A run with that alternation put identical code 10 % ahead of
    itself. The same seed and key give the same orders. Two contenders: A first in half of
    the pairs, the odd pair's by a coin."""
    cons = list(contenders)
    n = len(cons)
    if n == 0 or n_pairs <= 0:
        return []
    base = [cons[r:] + cons[:r] for r in range(n)]
    if n > 2:
        base += [o[::-1] for o in base]
    m = len(base)
    rng = random.Random('%d/%s' % (seed, key))
    picks = sorted(k % m for k in range(n_pairs - n_pairs % m))
    left = n_pairs % m
    if left == 1:
        picks.append(int(rng.random() * m))
    elif left:
        picks += rng.sample(range(m), left)
    rng.shuffle(picks)
    return [list(base[i]) for i in picks]
