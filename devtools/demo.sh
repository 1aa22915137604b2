#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Demo: DPDK's net_vhost back end (testpmd, flowgen: generates UDP flows and
# drains what comes back) <-> a testpmd with net_vnapi (io: sends every
# received packet back). Prints both sides' packet rates every second, then
# the forward statistics and net_vnapi's xstats, and ends both processes by
# PID. 2 MB hugepages (--single-file-segments) when enough are free, else
# --no-huge.
#
# Usage: devtools/demo.sh [--frontend vnapi|virtio_user] [--seconds N] [--build DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
frontend=vnapi
seconds=10
build=$top/build

usage() { sed -n 's/^# Usage: //p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --frontend) frontend=${2:-}; shift 2 ;;
    --seconds) seconds=${2:-}; shift 2 ;;
    --build) build=${2:-}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "demo.sh: unknown option '$1' (allowed: --frontend vnapi|virtio_user, --seconds N, --build DIR)" >&2
       exit 2 ;;
    esac
done
case "$frontend" in
vnapi|virtio_user) ;;
*) echo "demo.sh: --frontend '$frontend': allowed values are vnapi, virtio_user" >&2; exit 2 ;;
esac
case "$seconds" in
''|*[!0-9]*|0) echo "demo.sh: --seconds '$seconds': allowed values are integers >= 1" >&2; exit 2 ;;
esac
# README command 1 on a fresh machine: install what is missing, then build.
if [ "${VNAPI_DEMO_NO_SETUP:-}" != 1 ]; then
    "$top/devtools/setup.sh" || exit 1
    "$top/devtools/build.sh" "$build" || exit 1
fi
command -v dpdk-testpmd >/dev/null || { echo "demo.sh: dpdk-testpmd not found (run devtools/setup.sh)" >&2; exit 1; }

build=$(cd "$build" 2>/dev/null && pwd) || { echo "demo.sh: build directory '$build' does not exist" >&2; exit 1; }
plugin=$build/drivers/librte_net_vnapi.so
if [ "$frontend" = vnapi ] && [ ! -e "$plugin" ]; then
    echo "demo.sh: $plugin not found: build first (ninja -C $build)" >&2
    exit 1
fi
export VNAPI_PLUGIN=$plugin

# The process handling (deadlines, end by PID, plugin copy under /run/vnapi)
# lives in the test harness; python3 standard library only.
PYTHONPATH="$top/devtools" exec python3 - "$top" "$frontend" "$seconds" <<'PY'
import sys
import time

from vnapitools import harness as h

top, frontend, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])

h.install_guards()
mem = h.Memory.best(processes=2, mb=256)
print('demo: net_vhost (testpmd flowgen) <-> net_%s (testpmd io), %d s, memory: %s'
      % (frontend, seconds, mem.describe()))
if not mem.huge:
    print('demo: fewer than %d free 2 MB hugepages: using --no-huge' % (2 * 128 + 16))


def mpps(v):
    return '%6.2f' % (v / 1e6)


rc = 0
try:
    with h.Session('demo') as s:
        deadline = seconds + 120
        backend, sock = h.start_backend(s.workdir, mem=mem, deadline=deadline)
        s.add(backend)
        mark = backend.mark()
        fe = s.add(h.start_frontend(frontend, sock, mem=mem, deadline=deadline))
        h.wait_backend_ready(backend, since=mark)
        print('demo: backend pid %d, front end pid %d, socket %s'
              % (backend.pid, fe.pid, sock))
        fe.start_fwd('io')
        backend.start_fwd('flowgen')
        fe.port_stats()
        backend.port_stats()          # reference points for "since last show"
        print('%4s  %-27s  %-27s' % ('', 'net_%s (Mpps)' % frontend, 'net_vhost backend (Mpps)'))
        print('%4s  %13s %13s  %13s %13s' % ('t', 'rx', 'tx', 'rx', 'tx'))
        t0 = time.monotonic()
        for i in range(1, seconds + 1):
            left = t0 + i - time.monotonic()
            if left > 0:
                time.sleep(left)
            f = fe.port_stats()
            b = backend.port_stats()
            print('%3ds  %13s %13s  %13s %13s' % (i, mpps(f['Rx-pps']), mpps(f['Tx-pps']),
                                                   mpps(b['Rx-pps']), mpps(b['Tx-pps'])),
                  flush=True)
        # Stop the generator first, let the front end drain, then stop it.
        backend.stop_fwd()
        b_tx = backend.port_stats()['TX-packets']
        try:
            h.wait_counter(fe, 'RX-packets', b_tx, 10.0)
        except h.Timeout as e:
            print('demo: %s' % e)
            rc = 1
        fe.stop_fwd()
        f = fe.port_stats()
        # Drain what the front end sent back after the generator stopped.
        backend.start_fwd('rxonly')
        try:
            h.wait_counter(backend, 'RX-packets', f['TX-packets'], 10.0)
        except h.Timeout as e:
            print('demo: %s' % e)
            rc = 1
        backend.stop_fwd()
        b = backend.port_stats()
        print('\ntotals: backend TX %d -> net_%s RX %d; net_%s TX %d -> backend RX %d'
              % (b['TX-packets'], frontend, f['RX-packets'], frontend, f['TX-packets'],
                 b['RX-packets']))
        print('\nnet_%s xstats (show port xstats 0):' % frontend)
        for k, v in fe.port_xstats().items():
            print('  %-40s %d' % (k, v))
        for p in (fe, backend):
            code = p.stop()
            print('demo: %s (pid %d) ended, exit status %s' % (p.name, p.pid, code))
except h.HarnessError as e:
    print('demo: FAILED: %s' % e, file=sys.stderr)
    rc = 1
sys.exit(rc)
PY
