#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Build the DPDK LTS releases vnapi supports besides the system's one, each
# minimal (what the test suite runs) and installed into a cache outside the
# checkout, reused when present:
#     <cache>/dpdk-<series>/prefix   (bin/, lib/, include/, lib/pkgconfig)
#
# Sources: only Debian's own source package of the series (deb-src entries for
# the suite that carries it are added here: the release after this machine's
# one for 24.11, unstable for 25.11). When Debian's archive does not serve the
# package's files (404), the series cannot be built on this machine: the
# script says so and fails; there is no other source.
#
# A cache counts only with its stamp (prefix/.vnapi-stamp) saying
# source=debian: a prefix built any other way is ignored, never used.
#
# Usage: devtools/dpdk-versions.sh [--cache DIR] [--print-prefix] [--cached-only] SERIES...
#   SERIES: 24.11 | 25.11   (22.11 is the system's: nothing to build)
#   --cached-only: build nothing; fail (exit 3, one line saying why) when no
#   cache built from Debian's sources is present.
# Exit status 4: Debian's archive does not serve the series' source files
# (404): the series is blocked on this machine, nothing was built.
# Prints, per series, "dpdk-versions: SERIES VERSION PREFIX (reused|built in Ns)".
# With --print-prefix, stdout is only the prefixes, one a line.
set -euo pipefail

cache=${VNAPI_DPDK_CACHE:-/var/cache/vnapi}
print_prefix=false
cached_only=false
series_list=()
while [ $# -gt 0 ]; do
    case "$1" in
    --cache) cache=$2; shift 2 ;;
    --print-prefix) print_prefix=true; shift ;;
    --cached-only) cached_only=true; shift ;;
    -h|--help) sed -n '4,26p' "$0"; exit 0 ;;
    -*) echo "dpdk-versions: unknown option '$1'" >&2; exit 2 ;;
    *) series_list+=("$1"); shift ;;
    esac
done
[ ${#series_list[@]} -gt 0 ] || { echo "dpdk-versions: no series given (24.11, 25.11)" >&2; exit 2; }

log() { printf 'dpdk-versions: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Bump when the configuration below changes: a cache built otherwise is rebuilt.
config_rev=1
drivers='bus/pci,bus/vdev,net/vhost,net/virtio,mempool/ring,power/*'
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
    24.11) echo "${VNAPI_DPDK_SUITE_24_11:-$(next_codename "$own_codename")}" ;;
    25.11) echo "${VNAPI_DPDK_SUITE_25_11:-unstable}" ;;
    *) die "unsupported series '$1' (buildable: 24.11, 25.11; 22.11 is the system's)" ;;
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
    (cd "$2" && apt-get source --download-only -q "dpdk=$1") >"$2/../fetch.log" 2>&1 ||
        { cat "$2/../fetch.log" >&2; return 1; }
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

build_one() {
    local series=$1 dir=$cache/dpdk-$1
    local prefix=$dir/prefix stamp=$dir/prefix/.vnapi-stamp
    if [ -f "$stamp" ] && grep -qx "config_rev=$config_rev" "$stamp" &&
        grep -qx "source=debian" "$stamp"; then
        local v
        v=$(sed -n 's/^version=//p' "$stamp")
        log "$series $v $prefix (reused)"
        $print_prefix && echo "$prefix" || echo "dpdk-versions: $series $v $prefix (reused)"
        return 0
    fi
    if $cached_only; then
        if [ -f "$stamp" ]; then
            log "$series: $prefix was not built from Debian's source packages (its stamp has no source=debian): ignored"
        fi
        log "$series: no DPDK $series built from Debian's source packages in $dir (--cached-only: nothing built)"
        exit 3
    fi
    local t0=$SECONDS suite deb_ver src_ver origin
    suite=$(suite_for_series "$series")
    ensure_deb_src "$suite"
    deb_ver=$(debian_version "$suite")
    case "$deb_ver" in
    "$series".*) ;;
    *) die "suite '$suite' carries dpdk '${deb_ver:-nothing}', not $series.x (set VNAPI_DPDK_SUITE_${series/./_})" ;;
    esac
    rm -rf "$dir/src" "$dir/build" "$dir/dl"
    mkdir -p "$dir/dl" "$dir/src"
    if ! fetch_debian "$deb_ver" "$dir/dl"; then
        rm -rf "$dir/dl" "$dir/src"
        if grep -q '404' "$dir/fetch.log"; then
            log "error: Debian's archive does not serve dpdk $deb_ver's source files (404): DPDK $series cannot be built on this machine"
            exit 4
        fi
        die "fetching Debian's source package dpdk $deb_ver failed ($dir/fetch.log): DPDK $series cannot be built on this machine"
    fi
    ensure_build_deps
    src_ver=${deb_ver%%-*}
    origin="Debian source package dpdk $deb_ver ($suite)"
    log "$series: $origin"
    tar -xf "$(ls "$dir"/dl/dpdk_*.tar.* | grep -v debian | head -n 1)" -C "$dir/src" --strip-components=1
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
        echo "source=debian"
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
