#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Demo: what vnapi is for. vnapi-fwd (lib/napi) forwards on a net_vnapi port
# in poll, interrupt and hybrid mode, one after the other, each through the
# same traffic from a net_vhost back end (app/vnapi-peer): idle, sparse
# single frames ~1 ms apart, a burst at full rate, idle again; then the
# burst again in hybrid and poll mode (throughput compared over bursts run
# poll, hybrid, hybrid, poll). Prints per
# mode and phase the frames (exact counts, checked), Mpps, the forwarding
# lcore's CPU %, wakeups/s, packets per wakeup, the sparse round trip
# p50/p99 and net_vnapi's lost-wakeup counter (must be 0), one line of
# conclusion computed from them, and writes a PNG of CPU % and packets per
# wakeup over time. About 80 s (--quick: under 30 s). Every process is
# ended by its PID; Ctrl-C leaves none behind. The work is in devtools/demo.py.
#
# On a fresh machine it first runs devtools/setup.sh and devtools/build.sh
# (VNAPI_DEMO_NO_SETUP=1 skips both).
#
# Usage: devtools/demo.sh [--frontend vnapi|virtio_user] [--quick] [--build DIR] [--png FILE] [--window N] [--verbose]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
args=()

usage() { sed -n 's/^# Usage: //p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --frontend|--png|--window)
        [ $# -ge 2 ] || { echo "demo.sh: $1 needs a value" >&2; exit 2; }
        args+=("$1" "$2"); shift 2 ;;
    --build)
        [ $# -ge 2 ] || { echo "demo.sh: $1 needs a value" >&2; exit 2; }
        build=$2; shift 2 ;;
    --quick|--verbose) args+=("$1"); shift ;;
    -h|--help) usage ;;
    *) echo "demo.sh: unknown option '$1' (allowed: --frontend vnapi|virtio_user, --quick, --build DIR, --png FILE, --window N, --verbose)" >&2
       exit 2 ;;
    esac
done
# README command 1 on a fresh machine: install what is missing, then build.
if [ "${VNAPI_DEMO_NO_SETUP:-}" != 1 ]; then
    "$top/devtools/setup.sh" || exit 1
    "$top/devtools/build.sh" "$build" || exit 1
fi
build=$(cd "$build" 2>/dev/null && pwd) || { echo "demo.sh: build directory '$build' does not exist" >&2; exit 1; }

# Debian's python3-matplotlib (installed by setup.sh) is a module of Debian's
# interpreter: use that one even when another python3 comes first in PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
PYTHONPATH="$top/devtools" exec "$py" "$top/devtools/demo.py" --build "$build" "${args[@]}"
