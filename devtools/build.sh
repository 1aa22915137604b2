#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Configure (once) and build vnapi. Warnings are errors under CI.
# Usage: devtools/build.sh [BUILD_DIR] [extra meson setup options...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
shift || true

werror=()
[ "${CI:-}" = "true" ] && werror=(--werror)

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$top" "${werror[@]}" "$@"
elif [ $# -gt 0 ]; then
    meson configure "$build" "$@"
fi
ninja -C "$build"
