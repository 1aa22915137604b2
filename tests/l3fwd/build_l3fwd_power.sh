#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Build DPDK's l3fwd-power example (from the installed dpdk-doc sources) in the
# build tree: copy the sources into WORKDIR, run its own Makefile there
# (pkg-config libdpdk), copy the binary to OUTPUT. Nothing of DPDK's lands in
# the source tree.
#
# Usage: build_l3fwd_power.sh SRCDIR WORKDIR OUTPUT
set -eu

[ $# -eq 3 ] || { echo "usage: $0 SRCDIR WORKDIR OUTPUT" >&2; exit 2; }
src=$1
work=$2
out=$3

rm -rf "$work"
mkdir -p "$work"
for f in "$src"/Makefile "$src"/*.c "$src"/*.h; do
    cp "$f" "$work"/
done
if ! make -C "$work" shared >"$work/make.log" 2>&1; then
    cat "$work/make.log" >&2
    exit 1
fi
cp "$work/build/l3fwd-power-shared" "$out.tmp"
mv "$out.tmp" "$out"
