#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# README command 2: set up the machine, build, run the whole suite (unit and
# integration), then the unit suite and a set of integration tests again in an
# ASan+UBSan build (sanitized_tests below). Ends with
# "N passed, N failed" over every meson test of both builds (devtools/summary.py:
# each build's registered tests, listed before its run, must all have a
# result; under CI a skip counts as failed). Both builds always use --werror
# (devtools/build.sh --werror), with or without CI in the environment.
#
# Usage: devtools/test.sh [--dpdk SERIES] [--no-asan] [meson test options, e.g. --suite unit]
#   --dpdk 23.11|24.11|25.11: against that DPDK, built minimal (from Debian's
#   source package when served, else the release tarball in ../shared/dpdk)
#   into the cache
#   (/var/cache/vnapi, devtools/dpdk-versions.sh; reused when present), in
#   build-dpdk<SERIES>/ and build-asan-dpdk<SERIES>/. Without it (or with
#   22.11): the system's DPDK, in build/ and build-asan/.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
series=
asan_run=true
while [ $# -gt 0 ]; do
    case "$1" in
    --dpdk) series=$2; shift 2 ;;
    --no-asan) asan_run=false; shift ;;
    *) break ;;
    esac
done
[ "$series" = 22.11 ] && series=
if [ -n "$series" ]; then
    build=${VNAPI_BUILD:-$top/build-dpdk$series}
    asan=${VNAPI_BUILD_ASAN:-$top/build-asan-dpdk$series}
else
    build=${VNAPI_BUILD:-$top/build}
    asan=${VNAPI_BUILD_ASAN:-$top/build-asan}
fi

"$top/devtools/setup.sh" || { echo "0 passed, 1 failed"; exit 1; }
if [ -n "$series" ]; then
    prefix=$("$top/devtools/dpdk-versions.sh" --print-prefix "$series") ||
        { echo "0 passed, 1 failed"; exit 1; }
    # Everything from that DPDK: pkg-config for the builds, its apps
    # (dpdk-testpmd, dpdk-proc-info, dpdk-dumpcap) for the tests, its
    # libraries at run time; its EAL loads its own pmds-<ABI> directory.
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    export PATH=$prefix/bin:$PATH
    export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

# CI however the runner spells it (true, 1, yes, on): tests and summary.py
# read CI=true.
case "${CI:-}" in
[Tt][Rr][Uu][Ee] | 1 | [Yy][Ee][Ss] | [Oo][Nn]) export CI=true ;;
esac

# The tests a meson test run with these options is asked for, one
# 'meson test --list' line each, written beside its testlog.json before the
# run: summary.py fails every one that has no result.
list_tests() {
    local dir=$1
    shift
    mkdir -p "$dir/meson-logs"
    meson test -C "$dir" --no-rebuild --list "$@" >"$dir/meson-logs/registered-tests.txt"
}

# Each build checks that pkg-config gives it the series this run is labelled with
# (-Ddpdk_series, config/meson.build).
label=${series:-22.11}
echo "test.sh: DPDK $label run: pkg-config finds DPDK $(pkg-config --modversion libdpdk 2>/dev/null || echo none)"
status=0
"$top/devtools/build.sh" --werror "$build" -Ddpdk_series="$label" || { echo "0 passed, 1 failed"; exit 1; }
list_tests "$build" "$@" || status=1
meson test -C "$build" --print-errorlogs --num-processes 1 "$@" || status=1

# Sanitizers: the unit tests (no DPDK processes: they need no EAL), then
# the integration tests of sanitized_tests below, every process of each under
# ASan+UBSan (devtools/sanitized.py, the meson test wrapper: it preloads the
# runtimes into dpdk-testpmd and l3fwd-power, and any report fails the test);
# doc/contributing.md, "Sanitizers". This build also compiles the per-packet
# debug logs (-Ddatapath_debug=true), so they keep building. --no-asan leaves
# it out (CI's matrix: once per run); a run restricted to the unit suite
# (--suite unit) leaves out the sanitized integration tests.
# One test per distinct piece of driver code (about 4 minutes on 2 vCPUs). Every
# name must be a test of the build: one that matches none fails the run (below).
sanitized_tests=(
    pair_count_vnapi pair_count_vnapi_packed pair_sizes_vnapi pair_segs_vnapi_packed
    pair_mq_vnapi_packed pair_cycles_vnapi
    pair_offload_vnapi_packed pair_offload_reneg_vnapi pair_badring_vnapi
    hostile_rx_split_mrg hostile_rx_packed_mrg_ooo
    pair_drain_vnapi pair_drain_vnapi_packed pair_drain_stall_vnapi
    pair_drain_stall_vnapi_packed pair_drain_stall_vnapi_nowait
    race_vnapi_event_idx race_vnapi_packed_q1of2
    reconnect_client_vnapi reconnect_server_vnapi_packed reconnect_intr_vnapi_packed
    slow_handshake_vnapi ctrl_violation_vnapi tools_secondary l3fwd_mq_vnapi
    napi_fwd_pairs_hybrid_vnapi napi_fwd_pairs_hybrid_vnapi_packed napi_fwd_stall_long_vnapi
)
# Under .ci/run (which sets VNAPI_CI_RUN=1) also the PCI code: one QEMU guest boot with the
# sanitized driver in the guest (90 to 170 s, more than the README command's time budget on a
# fresh machine allows: a runner that only sets CI=true does not get it).
[ "${VNAPI_CI_RUN:-}" = 1 ] && sanitized_tests+=(guest_vnapi)
# A name of sanitized_tests that matches no test of build $1: meson (1.0, Debian 12)
# silently runs nothing for it. Each is one failed result, in a testlog of its own
# (sanitized-names.json beside the list sanitized-names.txt; both empty when every name
# matches), which devtools/summary.py and .ci/run count with the others.
check_sanitized_names() {
    local dir=$1/meson-logs n
    mkdir -p "$dir"
    : >"$dir/sanitized-names.txt"
    : >"$dir/sanitized-names.json"
    meson test -C "$1" --no-rebuild --list >"$dir/all-tests.txt" || return 1
    while read -r n; do
        echo "test.sh: FAILED: sanitized_tests names '$n', which matches no test of $1"
        echo "sanitized_tests / $n" >>"$dir/sanitized-names.txt"
        python3 -c 'import json, sys; print(json.dumps({"name": sys.argv[1], "result": "FAIL",
            "stdout": "devtools/test.sh sanitized_tests: no such test"}))' \
            "sanitized_tests / $n" >>"$dir/sanitized-names.json"
    done < <(python3 "$top/devtools/test_names.py" "$dir/all-tests.txt" "${sanitized_tests[@]}")
    [ ! -s "$dir/sanitized-names.txt" ]
}
logs=("$build/meson-logs/testlog.json")
if $asan_run; then
    if "$top/devtools/build.sh" --werror "$asan" -Db_sanitize=address,undefined -Db_lundef=false \
            -Dbuildtype=debug -Ddatapath_debug=true -Ddpdk_series="$label"; then
        check_sanitized_names "$asan" || status=1
        logs+=("--registered=$asan/meson-logs/sanitized-names.txt"
            "$asan/meson-logs/sanitized-names.json")
        list_tests "$asan" --suite unit || status=1
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            meson test -C "$asan" --suite unit --print-errorlogs || status=1
        if [[ " $* " != *" --suite unit "* ]]; then
            # meson names the log after the wrapper: testlog-sanitized.py.json.
            meson test -C "$asan" --no-rebuild --list "${sanitized_tests[@]}" \
                >"$asan/meson-logs/registered-sanitized.txt" || status=1
            meson test -C "$asan" --no-rebuild --print-errorlogs --num-processes 1 \
                --wrapper "$top/devtools/sanitized.py" "${sanitized_tests[@]}" || status=1
            logs+=("--registered=$asan/meson-logs/registered-sanitized.txt"
                "$asan/meson-logs/testlog-sanitized.py.json")
        fi
    else
        status=1
    fi
    logs+=("$asan/meson-logs/testlog.json")
fi

python3 "$top/devtools/summary.py" "${logs[@]}" || status=1
exit $status
