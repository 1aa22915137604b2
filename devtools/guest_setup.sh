#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# The kernel of the QEMU guest tests (called by devtools/setup.sh, which
# installs QEMU and busybox-static): Debian's kernel package unpacked (never
# installed) under $VNAPI_GUEST_DIR (default /var/cache/vnapi-guest):
#   <dir>/<kernel version>/boot/vmlinuz-*, .../lib/modules/...
#   <dir>/current -> <kernel version>
# Idempotent: a second run only checks.
set -euo pipefail

dir=${VNAPI_GUEST_DIR:-/var/cache/vnapi-guest}
log() { printf 'guest_setup: %s\n' "$*"; }

if [ -e "$dir/current/.complete" ]; then
    log "guest kernel $(readlink "$dir/current") present in $dir"
    exit 0
fi
# The image package the metapackage points at (linux-image-6.1.0-N-amd64).
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
      awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
    apt-get update -q
    pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
[ -n "$pkg" ] || { log "no linux-image-*-amd64 package found"; exit 1; }
kver=${pkg#linux-image-}
dl=$(mktemp -d)
trap 'rm -rf "$dl"' EXIT
chmod 755 "$dl"   # apt's sandbox user writes the download here
log "downloading $pkg"
(cd "$dl" && apt-get download -q "$pkg" >/dev/null 2>&1)
mkdir -p "$dir"
rm -rf "${dir:?}/$kver"
dpkg-deb -x "$dl"/"$pkg"_*.deb "$dir/$kver"
[ -f "$dir/$kver/boot/vmlinuz-$kver" ] || { log "no vmlinuz in $pkg"; exit 1; }
touch "$dir/$kver/.complete"
ln -sfn "$kver" "$dir/current"
log "guest kernel $kver unpacked in $dir/$kver"
