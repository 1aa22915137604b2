#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Timed libFuzzer runs of every target of tests/fuzz (doc/fuzzing.md): build
# them with clang (-fsanitize=fuzzer,address,undefined) in their own build
# directory, then run each for a fixed time on a copy of its corpus
# (tests/fuzz/corpus/<target>, the repository's stays as it is unless
# --merge). One line per target: executions, coverage (libFuzzer's cov:
# edges and ft: features), new corpus files, crashes. A crash, a sanitizer
# report, a leak, a timeout or an out-of-memory (each leaves an artifact),
# or a fuzzer that does not end cleanly, fails the target.
#
# The results are also written as a meson-like testlog (one result per
# target, "fuzz / <target>") with its registered-tests.txt, in
# BUILD_DIR/fuzz-logs/, for devtools/summary.py: .ci/run counts them with
# the 22.11 series. The list is written before any target runs, from what
# exists: every libFuzzer executable the build defines (fuzz_<target>,
# tests/fuzz/meson.build) must have its source tests/fuzz/fuzz_<target>.c
# and its corpus tests/fuzz/corpus/<target>, and the other way round; a
# TARGET named on the command line must be one of them. A mismatch fails
# the run; a listed target without a result fails in summary.py.
#
# Usage: devtools/fuzz.sh [--clean] [--time S] [--merge] [BUILD_DIR [TARGET...]]
#   --clean   rebuild BUILD_DIR from scratch (CI)
#   --time S  seconds per target (default 15)
#   --merge   merge what the run found into the repository's corpus
#             (libFuzzer -merge=1 -use_counters=0: only inputs that reach
#             new edges, which keeps the corpus small)
#   BUILD_DIR default build-fuzz; TARGET default every target.
# Artifacts (crash-*, leak-*, timeout-*, oom-*) stay in BUILD_DIR/fuzz-out/<target>/;
# a crash is replayed with BUILD_DIR/tests/fuzz/fuzz_<target> <artifact>.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
secs=15
merge=false
clean=false
while [ $# -gt 0 ]; do
    case "$1" in
    --time) secs=$2; shift 2 ;;
    --merge) merge=true; shift ;;
    --clean) clean=true; shift ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
build=${1:-$top/build-fuzz}
shift || true
case "$build" in /*) ;; *) build=$PWD/$build ;; esac
targets=("$@")
# Per target: the longest input (bytes) its harness reads.
max_len() {
    case "$1" in
    virtq_used) echo 1024 ;;
    rx_burst) echo 2048 ;;
    *) echo 1100 ;;
    esac
}
# Per target: more libFuzzer options. virtq_used has ~15000 features, and
# entropic scheduling's bookkeeping of them cost 95% of the time (400 runs/s;
# 7500 without it).
fuzz_opts() {
    case "$1" in
    virtq_used) echo -entropic=0 ;;
    esac
}

logdir=$build/fuzz-logs
outroot=$build/fuzz-out
fail_all() {
    echo "fuzz.sh: FAILED: $1"
    mkdir -p "$logdir"
    printf 'fuzz / build\n' >"$logdir/registered-tests.txt"
    python3 -c 'import json, sys; print(json.dumps({"name": "fuzz / build", "result": "FAIL", "stdout": sys.argv[1]}))' \
        "$1" >"$logdir/testlog.json"
    exit 1
}

t0=$SECONDS
$clean && rm -rf "$build"
if [ ! -f "$build/build.ninja" ]; then
    CC=clang nice -n 5 meson setup "$build" "$top" -Dwerror=true -Dintegration_tests=false \
        >"$build.setup.log" 2>&1 || { cat "$build.setup.log"; fail_all "meson setup $build (CC=clang)"; }
    rm -f "$build.setup.log"
fi
# What exists: the libFuzzer executables the build defines, the sources, the corpora.
mapfile -t defined < <(meson introspect --targets "$build" | python3 -c '
import json, sys
for t in sorted(json.load(sys.stdin), key=lambda t: t["name"]):
    n = t["name"]
    if t["type"] == "executable" and n.startswith("fuzz_") and not n.startswith("fuzz_replay_"):
        print(n[len("fuzz_"):])')
mapfile -t sources < <(for f in "$top"/tests/fuzz/fuzz_*.c; do
    t=$(basename "$f" .c); t=${t#fuzz_}; [ "$t" = replay ] || echo "$t"; done | sort)
mapfile -t corpora < <(for d in "$top"/tests/fuzz/corpus/*/; do basename "$d"; done | sort)
mismatch=()
for t in "${sources[@]}"; do
    [[ " ${defined[*]} " == *" $t "* ]] ||
        mismatch+=("tests/fuzz/fuzz_$t.c has no libFuzzer target in $build (tests/fuzz/meson.build)")
done
for t in "${corpora[@]}"; do
    [[ " ${defined[*]} " == *" $t "* ]] ||
        mismatch+=("tests/fuzz/corpus/$t belongs to no libFuzzer target")
done
for t in "${defined[@]}"; do
    [[ " ${sources[*]} " == *" $t "* ]] || mismatch+=("target $t has no tests/fuzz/fuzz_$t.c")
    [[ " ${corpora[*]} " == *" $t "* ]] || mismatch+=("target $t has no corpus tests/fuzz/corpus/$t")
done
for t in "${targets[@]}"; do
    [[ " ${defined[*]} " == *" $t "* ]] ||
        mismatch+=("$t (command line) matches no libFuzzer target (there are: ${defined[*]})")
done
if [ ${#mismatch[@]} -ne 0 ]; then
    printf 'fuzz.sh: %s\n' "${mismatch[@]}"
    fail_all "the fuzz targets do not match what exists: ${mismatch[*]}"
fi
[ ${#targets[@]} -eq 0 ] && targets=("${defined[@]}")
[ ${#targets[@]} -eq 0 ] && fail_all "no libFuzzer target defined in $build"
bins=()
for t in "${targets[@]}"; do
    bins+=("tests/fuzz/fuzz_$t")
done
nice -n 5 ninja -C "$build" "${bins[@]}" || fail_all "ninja: the libFuzzer targets (needs clang, libclang-rt-14-dev)"
echo "fuzz.sh: built ${#targets[@]} targets with clang in $((SECONDS - t0)) s"

rm -rf "$logdir" "$outroot"
mkdir -p "$logdir" "$outroot"
: >"$logdir/testlog.json"
# Every target that will run, before any runs: one that ends without a result fails.
printf 'fuzz / %s\n' "${targets[@]}" >"$logdir/registered-tests.txt"
pid=
trap '[ -n "$pid" ] && kill -- "$pid" 2>/dev/null' EXIT
status=0
for t in "${targets[@]}"; do
    out=$outroot/$t
    work=$out/corpus
    log=$out/fuzz.log
    repo_corpus=$top/tests/fuzz/corpus/$t
    mkdir -p "$work"
    [ -d "$repo_corpus" ] && cp "$repo_corpus"/* "$work"/ 2>/dev/null
    before=$(find "$work" -type f | wc -l)
    read -r -a extra <<<"$(fuzz_opts "$t")"
    # The fuzzer's own budget, then timeout(1)'s, by PID: it is ended either way.
    timeout -k 5 $((secs + 30)) nice -n 5 "$build/tests/fuzz/fuzz_$t" \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
        -print_final_stats=1 "${extra[@]}" -artifact_prefix="$out/" "$work" >"$log" 2>&1 &
    pid=$!
    wait "$pid"
    rc=$?
    pid=
    after=$(find "$work" -type f | wc -l)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
    crashes=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o \
        -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    line="fuzz $t: ${execs:-?} executions, cov ${cov:-?} edges, ft ${ft:-?}, $((after - before)) new corpus files, $crashes crashes, ${secs} s"
    result=OK
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ] || [ -z "$done_line" ]; then
        result=FAIL
        status=1
        line="$line: FAILED (exit $rc)"
        grep -E 'ERROR|SUMMARY|==[0-9]+==|runtime error|Test unit written' "$log" | head -n 20
        echo "    log: $log; replay: $build/tests/fuzz/fuzz_$t $out/crash-..."
    fi
    echo "$line"
    python3 -c 'import json, sys; print(json.dumps({"name": sys.argv[1], "result": sys.argv[2], "stdout": sys.argv[3]}))' \
        "fuzz / $t" "$result" "$line" >>"$logdir/testlog.json"
    if $merge && [ "$result" = OK ]; then
        mkdir -p "$repo_corpus"
        timeout -k 5 300 "$build/tests/fuzz/fuzz_$t" -merge=1 -use_counters=0 -max_len="$(max_len "$t")" \
            "$repo_corpus" "$work" >"$out/merge.log" 2>&1 &
        pid=$!
        wait "$pid" || { echo "fuzz.sh: merge of $t failed: $out/merge.log"; status=1; }
        pid=
        echo "    merged: $(find "$repo_corpus" -type f | wc -l) files in tests/fuzz/corpus/$t"
    fi
done
echo "fuzz.sh: ${#targets[@]} targets, $((SECONDS - t0)) s in all"
exit $status
