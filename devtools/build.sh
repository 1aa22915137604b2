#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Configure (once) and build vnapi. Warnings are errors with --werror
# (devtools/test.sh, and so .ci/run, always pass it) and whenever the
# environment's CI is true (or 1, yes, on); an existing build directory is
# switched to werror=true then, never back.
# Usage: devtools/build.sh [--werror] [BUILD_DIR] [extra meson setup options...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
werror=false
if [ "${1:-}" = --werror ]; then
    werror=true
    shift
fi
case "${CI:-}" in
[Tt][Rr][Uu][Ee] | 1 | [Yy][Ee][Ss] | [Oo][Nn]) werror=true ;;
esac
build=${1:-$top/build}
shift || true

# The werror option of a configured build directory (true or false).
build_werror() {
    python3 - "$1/meson-info/intro-buildoptions.json" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    print(str(next(o['value'] for o in json.load(f) if o['name'] == 'werror')).lower())
PY
}

# The arguments among $2... that change the configured build $1: every one
# but a -Dname=value whose option already has that value.
changed_options() {
    python3 - "$@" <<'PY'
import json, sys
build, args = sys.argv[1], sys.argv[2:]
with open(build + '/meson-info/intro-buildoptions.json') as f:
    cur = {o['name']: o['value'] for o in json.load(f)}
for a in args:
    if a.startswith('-D') and '=' in a:
        name, value = a[2:].split('=', 1)
        have = cur.get(name)
        if isinstance(have, bool):
            have = str(have).lower()
        elif isinstance(have, list):
            have = ','.join(str(x) for x in have)
        if have is not None and str(have) == value:
            continue
    print(a)
PY
}

if [ ! -f "$build/build.ninja" ]; then
    opts=()
    [ "$werror" = true ] && opts=(-Dwerror=true)
    meson setup "$build" "$top" "${opts[@]}" "$@"
else
    # Only the options whose value changes: an unchanged -D reconfigures for nothing.
    mapfile -t opts < <(changed_options "$build" "$@")
    if [ "$werror" = true ] && [ "$(build_werror "$build")" != true ]; then
        echo "build.sh: $build: switching to werror=true"
        opts+=(-Dwerror=true)
    fi
    if [ ${#opts[@]} -gt 0 ]; then
        # --reconfigure: an option this tree added since the setup is unknown to configure
        meson setup --reconfigure "$build" "$top" "${opts[@]}"
    fi
fi
ninja -C "$build"
