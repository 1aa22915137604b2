#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Build the DPDK LTS releases vnapi supports besides the system's one, each
# minimal (what the test suite runs) and installed into a cache outside the
# checkout, reused when present:
#     <cache>/dpdk-<series>/prefix   (bin/, lib/, include/, lib/pkgconfig)
#
# Sources, in this order:
#   1. Debian's own source package of the series, when Debian's archive
#      serves its files (deb-src entries for the suite that carries it are
#      added here: the release after this machine's one for 24.11, unstable
#      for 25.11; no Debian release carries 23.11);
#   2. else the upstream release tarball dpdk-<version>.tar.xz of the series
#      from a directory (--tarballs DIR, or VNAPI_DPDK_TARBALLS; default
#      ../shared/dpdk beside the checkout), accepted only when its SHA-256 is
#      listed in devtools/dpdk-sha256sums (committed here): an unlisted or
#      mismatching file is refused with a message. Nothing is downloaded.
# --source debian|tarball takes only one of the two.
#
# A cache counts only with its stamp (prefix/.vnapi-stamp) naming its source
# (source=debian, or source=tarball with a sha256= still listed in
# devtools/dpdk-sha256sums) and this script's config_rev.
#
# Usage: devtools/dpdk-versions.sh [--cache DIR] [--tarballs DIR] [--source auto|debian|tarball]
#                                  [--print-prefix] [--cached-only] SERIES...
#   SERIES: 23.11 | 24.11 | 25.11   (22.11 is the system's: nothing to build)
#   --cached-only: build nothing; fail (exit 3, one line saying why) when no
#   valid cache is present.
# Exit status 4: no source for the series (the archive does not serve it and
# no listed tarball is in the directory): nothing was built.
# Prints, per series, "dpdk-versions: SERIES VERSION PREFIX (reused|built in Ns)".
# With --print-prefix, stdout is only the prefixes, one a line.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VNAPI_DPDK_CACHE:-/var/cache/vnapi}
tarballs=${VNAPI_DPDK_TARBALLS:-$top/../shared/dpdk}
sums=$top/devtools/dpdk-sha256sums
source_pref=${VNAPI_DPDK_SOURCE:-auto}
print_prefix=false
cached_only=false
series_list=()
while [ $# -gt 0 ]; do
    case "$1" in
    --cache) cache=$2; shift 2 ;;
    --tarballs) tarballs=$2; shift 2 ;;
    --source) source_pref=$2; shift 2 ;;
    --print-prefix) print_prefix=true; shift ;;
    --cached-only) cached_only=true; shift ;;
    -h|--help) sed -n '4,36p' "$0"; exit 0 ;;
    -*) echo "dpdk-versions: unknown option '$1'" >&2; exit 2 ;;
    *) series_list+=("$1"); shift ;;
    esac
done
[ ${#series_list[@]} -gt 0 ] || { echo "dpdk-versions: no series given (23.11, 24.11, 25.11)" >&2; exit 2; }
case "$source_pref" in
auto|debian|tarball) ;;
*) echo "dpdk-versions: --source '$source_pref': allowed values are auto, debian, tarball" >&2; exit 2 ;;
esac

log() { printf 'dpdk-versions: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Bump when the configuration below changes: a cache built otherwise is rebuilt.
config_rev=3
drivers='bus/pci,bus/vdev,net/vhost,net/virtio,net/pcap,mempool/ring,power/*'
libs='vhost,cryptodev,dmadev,security,eventdev,timer,pdump,pcapng,bpf,power,lpm,metrics,telemetry,gro,gso,bitratestats,latencystats'
apps='test-pmd,proc-info,dumpcap,pdump'
examples='l3fwd-power'
build_deps=(meson ninja-build pkg-config gcc python3 python3-pyelftools libnuma-dev
            libpcap-dev dpkg-dev xz-utils ca-certificates)

# ---- Debian suites --------------------------------------------------------
# This machine's codename, and the suite that carries each series. Debian
# numbers its releases; the codename list comes from the distro-info-data
# table when present, else from the suites the archive answers for.
. /etc/os-release
own_codename=${VERSION_CODENAME:?/etc/os-release has no VERSION_CODENAME}

next_codename() {
    # The codename of the Debian release after $1.
    local csv=/usr/share/distro-info/debian.csv
    if [ -r "$csv" ]; then
        awk -F, -v c="$1" 'found { print $3; exit } $3 == c { found = 1 }' "$csv"
        return
    fi
    # Without distro-info-data: Release files name their codename; 'testing'
    # is the release after stable when stable is ours.
    echo testing
}

suite_for_series() {
    case "$1" in
    23.11) echo "" ;;   # in no Debian release
    24.11) echo "${VNAPI_DPDK_SUITE_24_11:-$(next_codename "$own_codename")}" ;;
    25.11) echo "${VNAPI_DPDK_SUITE_25_11:-unstable}" ;;
    *) die "unsupported series '$1' (buildable: 23.11, 24.11, 25.11; 22.11 is the system's)" ;;
    esac
}

# The archive URI the machine already uses for Debian (its own entries).
archive_uri() {
    local u
    u=$(grep -rhsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '$2 ~ /debian\/?$/ { print $2; exit }')
    [ -n "$u" ] || u=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$2 ~ /debian\/?$/ { print $2; exit }')
    echo "${u:-http://deb.debian.org/debian}"
}

src_list=/etc/apt/sources.list.d/vnapi-dpdk-src.sources
ensure_deb_src() {
    local suites="$*" have
    have=$( { awk '/^Suites:/ { $1 = ""; print }' "$src_list" 2>/dev/null || true; } | xargs -n1 | sort -u | xargs)
    local want
    want=$(echo "$have $suites" | xargs -n1 | sort -u | xargs)
    if [ "$have" != "$want" ]; then
        log "deb-src entries for: $want ($src_list)"
        cat > "$src_list" <<SRC
# Written by vnapi devtools/dpdk-versions.sh: source packages only (no
# binaries from these suites are installed).
Types: deb-src
URIs: $(archive_uri)
Suites: $want
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        apt-get update -q >&2
    fi
}

# Debian's newest version of source package dpdk in the given suite.
debian_version() {
    apt-get source --print-uris -q "dpdk/$1" 2>/dev/null |
        sed -nE "s/.*'[^']*dpdk_([^']+)\.dsc'.*/\1/p" | head -n 1 | sed 's/%2b/+/g'
}

# Fetch the upstream orig tarball of dpdk=$1 into $2 (through apt; a partial
# download is not kept). Returns non-zero when the archive cannot serve it.
fetch_debian() {
    (cd "$2" && apt-get source --download-only -q "dpdk=$1") >"$2/../fetch.log" 2>&1 || return 1
    ls "$2"/dpdk_*.orig.tar.* >/dev/null 2>&1
}

ensure_build_deps() {
    local missing=() p
    for p in "${build_deps[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing build dependencies: ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
    fi
}

# The listed tarball of a series in $tarballs: prints "FILE SHA256", or
# nothing when the directory holds no file of the series. A listed file whose
# hash is not the listed one is refused (exit 1), and so is a directory that
# holds only unlisted files of the series: neither is ever built.
find_tarball() {
    local series=$1 f name want got unlisted=""
    [ -r "$sums" ] || die "$sums is missing: cannot check any tarball"
    for f in "$tarballs"/dpdk-"$series".*.tar.xz; do
        [ -f "$f" ] || continue
        name=$(basename "$f")
        want=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$sums")
        if [ -z "$want" ]; then
            unlisted="$unlisted $name"
            continue
        fi
        got=$(sha256sum "$f" | cut -d' ' -f1)
        [ "$got" = "$want" ] || die "$f: SHA-256 $got, but $sums lists $want: refused"
        echo "$f $got"
        return 0
    done
    [ -z "$unlisted" ] ||
        die "$tarballs:$unlisted not listed in $sums (listed: $(awk '{ printf "%s ", $2 }' "$sums")): refused"
}

# Is the stamp's source still a valid one? debian, or a tarball whose hash
# is still listed in the sums file.
stamp_valid() {
    local stamp=$1 h
    [ -f "$stamp" ] && grep -qx "config_rev=$config_rev" "$stamp" || return 1
    grep -qx "source=debian" "$stamp" && return 0
    grep -qx "source=tarball" "$stamp" || return 1
    h=$(sed -n 's/^sha256=//p' "$stamp")
    [ -n "$h" ] && awk '{ print $1 }' "$sums" | grep -qx "$h"
}

build_one() {
    local series=$1 dir=$cache/dpdk-$1
    local prefix=$dir/prefix stamp=$dir/prefix/.vnapi-stamp
    if stamp_valid "$stamp"; then
        local v
        v=$(sed -n 's/^version=//p' "$stamp")
        log "$series $v $prefix (reused, $(grep -m1 '^source=' "$stamp"))"
        $print_prefix && echo "$prefix" || echo "dpdk-versions: $series $v $prefix (reused)"
        return 0
    fi
    if $cached_only; then
        if [ -f "$stamp" ]; then
            log "$series: $prefix has a stamp of another configuration or an unlisted source: ignored"
        fi
        log "$series: no valid DPDK $series cache in $dir (--cached-only: nothing built)"
        exit 3
    fi
    local t0=$SECONDS suite deb_ver="" src_ver origin kind="" hash="" tarball="" tb
    rm -rf "$dir/src" "$dir/build" "$dir/dl"
    mkdir -p "$dir/dl" "$dir/src"
    suite=$(suite_for_series "$series")
    # 1. Debian's source package, when the archive serves it.
    [ -n "$suite" ] || [ "$source_pref" != debian ] || { log "error: no Debian release carries DPDK $series (--source debian)"; exit 4; }
    if [ "$source_pref" != tarball ] && [ -n "$suite" ]; then
        ensure_deb_src "$suite"
        deb_ver=$(debian_version "$suite")
        case "$deb_ver" in
        "$series".*)
            if fetch_debian "$deb_ver" "$dir/dl"; then
                kind=debian
            elif grep -q '404' "$dir/fetch.log"; then
                log "$series: Debian's archive does not serve dpdk $deb_ver's source files (404)"
            else
                log "$series: fetching Debian's source package dpdk $deb_ver failed ($dir/fetch.log)"
            fi ;;
        *) log "$series: suite '$suite' carries dpdk '${deb_ver:-nothing}', not $series.x" ;;
        esac
    fi
    # 2. The release tarball, checked against the committed sums.
    if [ -z "$kind" ] && [ "$source_pref" != debian ]; then
        tb=$(find_tarball "$series") || exit 1
        if [ -n "$tb" ]; then
            tarball=${tb% *}
            hash=${tb#* }
            kind=tarball
        fi
    fi
    if [ -z "$kind" ]; then
        rm -rf "$dir/dl" "$dir/src"
        [ "$source_pref" = debian ] && { log "error: no source for DPDK $series: Debian's archive does not serve it (--source debian)"; exit 4; }
        log "error: no source for DPDK $series: Debian's archive does not serve it, and $tarballs has no dpdk-$series.*.tar.xz listed in $sums (--tarballs DIR or VNAPI_DPDK_TARBALLS names another directory)"
        exit 4
    fi
    ensure_build_deps
    if [ "$kind" = debian ]; then
        src_ver=${deb_ver%%-*}
        origin="Debian source package dpdk $deb_ver ($suite)"
        tar -xf "$(ls "$dir"/dl/dpdk_*.tar.* | grep -v debian | head -n 1)" -C "$dir/src" --strip-components=1
    else
        src_ver=$(basename "$tarball" .tar.xz)
        src_ver=${src_ver#dpdk-}
        origin="release tarball $(basename "$tarball") (sha256 $hash)"
        tar -xf "$tarball" -C "$dir/src" --strip-components=1
    fi
    log "$series: building from $origin"
    # platform=generic: the ISA baseline Debian's packages use, not this CPU's.
    # Debian's python3 (with python3-pyelftools) before any pyenv/venv one.
    local PATH=/usr/bin:$PATH
    nice -n 10 meson setup "$dir/build" "$dir/src" \
        --prefix="$prefix" --libdir=lib -Dbuildtype=release -Ddefault_library=shared \
        -Dplatform=generic -Dtests=false -Denable_docs=false \
        -Denable_driver_sdk=true -Denable_drivers="$drivers" -Denable_libs="$libs" \
        -Denable_apps="$apps" -Dexamples="$examples" >"$dir/meson-setup.log" 2>&1 ||
        { tail -n 30 "$dir/meson-setup.log" >&2; die "meson setup failed ($dir/meson-setup.log)"; }
    nice -n 10 ninja -C "$dir/build" >"$dir/ninja.log" 2>&1 ||
        { tail -n 30 "$dir/ninja.log" >&2; die "build failed ($dir/ninja.log)"; }
    rm -rf "$prefix"
    ninja -C "$dir/build" install >"$dir/install.log" 2>&1 || die "install failed ($dir/install.log)"
    install -m 0755 "$dir/build/examples/dpdk-l3fwd-power" "$prefix/bin/dpdk-l3fwd-power"
    local f
    for f in dpdk-testpmd dpdk-proc-info dpdk-dumpcap dpdk-pdump dpdk-l3fwd-power dpdk-pmdinfo.py; do
        [ -x "$prefix/bin/$f" ] || die "$f missing from $prefix/bin (see $dir/meson-setup.log)"
    done
    for f in ethdev_driver.h ethdev_vdev.h bus_vdev_driver.h bus_pci_driver.h dev_driver.h; do
        [ -f "$prefix/include/$f" ] || die "driver-SDK header $f missing from $prefix/include"
    done
    ls "$prefix"/lib/dpdk/pmds-*/librte_net_vhost.so* >/dev/null 2>&1 ||
        die "net_vhost missing from $prefix/lib/dpdk/pmds-*"
    {
        echo "config_rev=$config_rev"
        echo "source=$kind"
        [ -z "$hash" ] || echo "sha256=$hash"
        echo "version=$src_ver"
        echo "origin=$origin"
        echo "build_seconds=$((SECONDS - t0))"
    } > "$stamp"
    rm -rf "$dir/build" "$dir/src" "$dir/dl"
    log "$series $src_ver $prefix (built in $((SECONDS - t0)) s)"
    $print_prefix && echo "$prefix" || echo "dpdk-versions: $series $src_ver $prefix (built in $((SECONDS - t0)) s)"
}

mkdir -p "$cache"
for s in "${series_list[@]}"; do
    case "$s" in
    22.11) log "22.11 is the system's DPDK (devtools/setup.sh)"; continue ;;
    esac
    build_one "$s"
done
