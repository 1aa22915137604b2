#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# The rx interrupt arming race, as a table: runs tests/integration/vhost_pair --scenario race (one
# process, net_vhost back end, one lcore) for net_vnapi in its arming modes
# and for DPDK's net_virtio_user, N rounds each, and prints a markdown table
# (front end, mode, rounds, lost wakeups, median enable->wake latency).
# Every round the back end puts one packet in the front end's rx ring while
# interrupts are off, then the test arms and sleeps in rte_epoll_wait with a
# 50 ms timeout: a lost wakeup costs the whole timeout.
#
# Usage: devtools/race_report.sh [--doc] [BUILD_DIR]   (default: <top>/build)
# --doc: also publish the table as section "race" of doc/performance.md
# (devtools/vnapitools/perfdoc.py: doc/results/race.json), only when every
# run completed. A smoke run sets VNAPI_PERFDOC_DIR=<scratch dir>.
# Environment: RACE_ROUNDS (default 200), RACE_TIMEOUT_MS (default 50).
# Exit status: 0 when every run completed (lost wakeups are reported, not
# judged: the meson tests race_* do the judging).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cmd="devtools/race_report.sh${*:+ $*}"
doc=
if [ "${1:-}" = "--doc" ]; then
    doc=1
    shift
fi
build=${1:-$top/build}
rounds=${RACE_ROUNDS:-200}
timeout_ms=${RACE_TIMEOUT_MS:-50}
bin=$build/tests/integration/vhost_pair
perfdoc() {
    PYTHONPATH="$top/devtools${PYTHONPATH:+:$PYTHONPATH}" python3 -m vnapitools.perfdoc "$@"
}

if [ ! -x "$bin" ]; then
    echo "race_report: $bin not found: build first (ninja -C $build)" >&2
    exit 1
fi
# The run's provenance (tree, date, machine), taken before it measures.
if [ -n "$doc" ]; then
    meta=$(perfdoc --measure race --command "$cmd" --build "$build") || exit 1
fi

# front end | mode | devargs
runs=(
    "net_vnapi|event_idx=0, intr_rescue=signal|net_vnapi0,path={sock},event_idx=0,intr_rescue=signal"
    "net_vnapi|event_idx=1, intr_rescue=signal|net_vnapi0,path={sock},event_idx=1,intr_rescue=signal"
    "net_vnapi|event_idx=1, intr_rescue=eagain|net_vnapi0,path={sock},event_idx=1,intr_rescue=eagain"
    "net_virtio_user (DPDK 22.11)|default|net_virtio_user0,path={sock}"
)

field() { # field NAME LINE
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"
}

status=0
rows=()
i=0
for r in "${runs[@]}"; do
    IFS='|' read -r fe mode devargs <<<"$r"
    log=$(mktemp)
    "$bin" --scenario race --name "race_report_$i" --frontend "$devargs" --rounds "$rounds" \
        --expect-lost any --timeout-ms "$timeout_ms" >"$log" 2>&1
    rc=$?
    line=$(grep '^RACE:' "$log" | tail -n 1)
    result=$(grep '^RESULT:' "$log" | tail -n 1)
    if [ -z "$line" ] || [ $rc -ne 0 ]; then
        echo "race_report: $fe ($mode) did not complete (exit $rc): ${result:-no RESULT line}" >&2
        sed 's/^/    /' "$log" >&2
        rows+=("| $fe | $mode | $rounds | run failed | - | - |")
        status=1
    else
        lost=$(field lost "$line")
        done_rounds=$(field rounds "$line")
        med=$(field median_wakeup_us "$line")
        sig=$(field rescued_by_signal "$line")
        eag=$(field eagain "$line")
        rows+=("| $fe | $mode | $done_rounds | $lost | $med | $sig / $eag |")
    fi
    rm -f "$log"
    i=$((i + 1))
done

table() {
    echo "| front end | mode | rounds | lost wakeups | median wakeup (us) | woken by signal / -EAGAIN |"
    echo "|---|---|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
}
table

if [ -n "$doc" ] && [ $status -eq 0 ]; then
    intro="What is measured: the lost-wakeup race of rx interrupt arming, made deterministic
(vhost_pair --scenario race). One process, one lcore, DPDK's \`net_vhost\` as the back end.
Each round the back end puts one packet into the front end's rx ring while the queue is
disarmed (so the back end sends no notification), then the application arms the queue
(\`rte_eth_dev_rx_intr_enable\`) and sleeps in \`rte_epoll_wait(..., $timeout_ms ms)\`. A front
end that re-checks the ring after arming wakes at once (or returns -EAGAIN); one that does
not sleeps until the timeout: a lost wakeup. Latency is from the call to
\`rte_eth_dev_rx_intr_enable\` to the return of \`rte_epoll_wait\` (or of the enable call
when it returns -EAGAIN), median over the rounds."
    body=$(mktemp)
    {
        echo "- Rounds: $rounds per front end, epoll timeout $timeout_ms ms, one packet per round each" \
            "way (the front end also sends one back, which the back end must receive)"
        echo
        table
    } >"$body"
    printf '%s' "$meta" | perfdoc --publish - --body "$body" --intro "$intro" || status=1
    rm -f "$body"
fi
exit $status
