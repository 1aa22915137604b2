#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Build the plugin of an earlier commit, for the benchmarks' "previous vnapi"
# column (devtools/bench.py --prev-plugin). Prints the plugin's path.
# Usage: devtools/build-rev.sh REV [DIR]
#   REV: any commit (a tag, a hash, main~3); DIR: where to build
#   (default /var/tmp/vnapi-rev/<hash>; reused when already built).
# Builds against the DPDK in PKG_CONFIG_PATH (default: the system's), with the
# driver-SDK headers of this checkout's build-sdk/ (devtools/setup.sh).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:?usage: devtools/build-rev.sh REV [DIR]}
hash=$(git -C "$top" rev-parse --verify "$rev^{commit}")
dir=${2:-/var/tmp/vnapi-rev/$hash}
plugin=$dir/build/drivers/librte_net_vnapi.so

if [ ! -f "$plugin" ]; then
    mkdir -p "$dir"
    if [ ! -d "$dir/src" ]; then
        git -C "$top" archive --prefix=src/ "$hash" | tar -x -C "$dir"
    fi
    [ -d "$top/build-sdk" ] && [ ! -e "$dir/src/build-sdk" ] && cp -a "$top/build-sdk" "$dir/src/"
    (cd "$dir/src" && nice -n 5 devtools/build.sh "$dir/build" -Dintegration_tests=false >&2)
fi
echo "$plugin"
