#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# README command 2: set up the machine, build, run the whole suite (unit and
# integration), then the unit suite again in an ASan+UBSan build. Ends with
# "N passed, N failed" over every meson test of both builds.
#
# Usage: devtools/test.sh [meson test options, e.g. --suite unit]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${VNAPI_BUILD:-$top/build}
asan=${VNAPI_BUILD_ASAN:-$top/build-asan}

"$top/devtools/setup.sh" || { echo "0 passed, 1 failed"; exit 1; }

status=0
"$top/devtools/build.sh" "$build" || { echo "0 passed, 1 failed"; exit 1; }
meson test -C "$build" --print-errorlogs --num-processes 1 "$@" || status=1

# Sanitizers over the unit tests (no DPDK processes: they need no EAL). This
# build also compiles the per-packet debug logs (-Ddatapath_debug=true), so
# they keep building.
if "$top/devtools/build.sh" "$asan" -Db_sanitize=address,undefined -Db_lundef=false \
        -Dintegration_tests=false -Dbuildtype=debug -Ddatapath_debug=true; then
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C "$asan" --suite unit --print-errorlogs || status=1
else
    status=1
fi

python3 "$top/devtools/summary.py" "$build/meson-logs/testlog.json" \
    "$asan/meson-logs/testlog.json" || status=1
exit $status
