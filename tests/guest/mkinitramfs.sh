#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Build the guest initramfs: busybox (static), our /init, and the kernel
# modules it loads, from the kernel unpacked by devtools/guest_setup.sh.
#
# Usage: mkinitramfs.sh KERNEL_DIR INIT WORKDIR OUTPUT
set -eu

[ $# -eq 4 ] || { echo "usage: $0 KERNEL_DIR INIT WORKDIR OUTPUT" >&2; exit 2; }
kdir=$1
init=$2
work=$3
out=$4

# Dependency order (no modprobe in the initramfs).
mods="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
netfs fscache 9pnet 9pnet_virtio 9p irqbypass vfio vfio_iommu_type1 vfio_virqfd
vfio-pci-core vfio-pci"

rm -rf "$work"
mkdir -p "$work/bin" "$work/modules" "$work/proc" "$work/sys" "$work/dev"
cp /bin/busybox "$work/bin/busybox"
cp "$init" "$work/init"
chmod 755 "$work/init"
: > "$work/modules.order"
for m in $mods; do
    f=$(find "$kdir/lib/modules" -name "$m.ko" | head -n 1)
    [ -n "$f" ] || { echo "mkinitramfs: module $m not in $kdir" >&2; exit 1; }
    cp "$f" "$work/modules/"
    echo "$m" >> "$work/modules.order"
done
(cd "$work" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
