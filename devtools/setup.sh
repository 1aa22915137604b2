#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Prepare a Debian 12 machine for vnapi: install what is missing, fetch the
# DPDK driver-SDK headers of exactly the installed DPDK version into the build
# tree, and make sure hugetlbfs is mounted. Idempotent: a second run does
# nothing but checks.
#
# Usage: devtools/setup.sh [--sdk-dir DIR] [--hugepages N] [--dpdk SERIES]...
#   --dpdk 23.11|24.11|25.11: also build that DPDK into the cache
#   (devtools/dpdk-versions.sh; reused when present).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
sdk_dir=${VNAPI_SDK_DIR:-$top/build-sdk}
want_pages=${VNAPI_HUGEPAGES:-512}
dpdk_series=()

while [ $# -gt 0 ]; do
    case "$1" in
    --sdk-dir) sdk_dir=$2; shift 2 ;;
    --hugepages) want_pages=$2; shift 2 ;;
    --dpdk) [ "$2" = 22.11 ] || dpdk_series+=("$2"); shift 2 ;;
    *) echo "setup.sh: unknown option '$1' (allowed: --sdk-dir DIR, --hugepages N, --dpdk SERIES)" >&2; exit 2 ;;
    esac
done

log() { printf 'setup: %s\n' "$*"; }

packages=(dpdk dpdk-dev libdpdk-dev dpdk-doc meson ninja-build python3-pyelftools
          pkg-config gcc clang make libnuma-dev libpcap-dev dpkg-dev
          libclang-rt-14-dev        # clang's libFuzzer (devtools/fuzz.sh); only recommended by clang
          qemu-system-x86 busybox-static
          openvswitch-switch-dpdk   # OVS-DPDK: a real peer in the suite (test_ovs.py)
          python3-matplotlib        # the figure of devtools/demo.sh
          valgrind)                 # callgrind: the instruction-count gate (tests/icount)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    log "packages present"
fi
# The guest kernel of the QEMU guest tests (tests/guest).
"$top/devtools/guest_setup.sh"

# Driver-SDK headers from Debian's source package of the installed version.
ver=$(dpkg-query -W -f='${Version}' libdpdk-dev)
stamp=$sdk_dir/.version
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ver" ] && [ -f "$sdk_dir/include/bus_pci_driver.h" ]; then
    log "driver-SDK headers for dpdk $ver present in $sdk_dir"
else
    # Only a source entry for this machine's own suites serves this version.
    if ! apt-get source --print-uris -q "dpdk=$ver" >/dev/null 2>&1; then
        log "adding deb-src entries (/etc/apt/sources.list.d/vnapi-src.sources)"
        # The same archives and suites as this machine's own Debian entries,
        # as source entries; without deb822 entries, this release's codename.
        src=/etc/apt/sources.list.d/debian.sources
        . /etc/os-release
        if [ -r "$src" ] && grep -q '^Suites:' "$src"; then
            awk 'BEGIN { RS = ""; ORS = "\n\n" }
                 /Types:[^\n]*deb/ && /URIs:[^\n]*debian/ {
                     sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$src" \
                > /etc/apt/sources.list.d/vnapi-src.sources
        else
            cat > /etc/apt/sources.list.d/vnapi-src.sources <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: ${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release} ${VERSION_CODENAME}-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: ${VERSION_CODENAME}-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        fi
        apt-get update -q
    fi
    dl=$(mktemp -d)
    trap 'rm -rf "$dl"' EXIT
    log "downloading Debian source of dpdk=$ver"
    (cd "$dl" && apt-get source --download-only -q "dpdk=$ver" >/dev/null)
    tarball=$(ls "$dl"/dpdk_*.orig.tar.* | head -n 1)
    rm -rf "$sdk_dir"
    mkdir -p "$sdk_dir/include"
    # The SDK headers and the internal headers they include.
    tar -xf "$tarball" -C "$dl" --wildcards \
        '*/lib/ethdev/ethdev_driver.h' '*/lib/ethdev/ethdev_vdev.h' \
        '*/lib/ethdev/ethdev_pci.h' '*/lib/ethdev/rte_ethdev_core.h' \
        '*/drivers/bus/vdev/bus_vdev_driver.h' '*/lib/eal/include/dev_driver.h' \
        '*/drivers/bus/pci/bus_pci_driver.h' \
        '*/lib/eal/include/bus_driver.h' '*/lib/eal/include/rte_eal_paging.h' \
        '*/lib/eal/common/eal_private.h'
    find "$dl" -name '*.h' -exec cp {} "$sdk_dir/include/" \;
    echo "$ver" > "$stamp"
    log "driver-SDK headers in $sdk_dir/include"
fi

# hugetlbfs and 2 MB pages: most tests use --no-huge, but ovs_* (OVS-DPDK's
# socket memory) and tools_* (multi-process: vnapi-fwd's primary) need free
# 2 MB pages, as do the demo and the benchmarks. A shortfall is reported, not
# swallowed: those tests skip without the pages (fail under CI).
hp=/sys/kernel/mm/hugepages/hugepages-2048kB
hugepage_error() {
    printf 'setup: ERROR: %s; ovs_* and tools_* need %s free 2 MB hugepages (they skip or fail without them): free memory, or ask for fewer with --hugepages N (VNAPI_HUGEPAGES)\n' \
        "$1" "$want_pages" >&2
}
if ! mountpoint -q /dev/hugepages 2>/dev/null; then
    mkdir -p /dev/hugepages
    if mount -t hugetlbfs nodev /dev/hugepages; then
        log "mounted hugetlbfs on /dev/hugepages"
    else
        hugepage_error "cannot mount hugetlbfs on /dev/hugepages"
    fi
fi
if [ ! -r "$hp/free_hugepages" ]; then
    hugepage_error "this kernel has no 2 MB hugepages ($hp)"
else
    free_pages=$(cat "$hp/free_hugepages")
    total_pages=$(cat "$hp/nr_hugepages")
    if [ "$free_pages" -lt "$want_pages" ]; then
        ask=$((total_pages + want_pages - free_pages))
        if ! err=$( { echo "$ask" > "$hp/nr_hugepages"; } 2>&1); then
            hugepage_error "cannot set $hp/nr_hugepages to $ask: $err"
        fi
        free_pages=$(cat "$hp/free_hugepages")
        if [ "$free_pages" -lt "$want_pages" ]; then
            hugepage_error "$free_pages of $want_pages 2 MB hugepages free after asking for $ask (the kernel gave $(cat "$hp/nr_hugepages"))"
        else
            log "2 MB hugepages: $free_pages free"
        fi
    else
        log "2 MB hugepages: $free_pages free (want $want_pages)"
    fi
fi
if [ ${#dpdk_series[@]} -gt 0 ]; then
    "$top/devtools/dpdk-versions.sh" "${dpdk_series[@]}"
fi
log "done"
