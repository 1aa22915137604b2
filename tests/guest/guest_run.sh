#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Runs inside the guest, chrooted into the host's root (over 9p, read-only):
# prepares DPDK (vfio-pci binding, a plugin directory without the PMD under
# test) and then sources the job list the host test wrote to the results
# share ($VG_OUT/jobs.sh). Jobs call the vg_* functions below; every process
# runs with a deadline and is ended by its PID. Markers for the host:
#   $VG_OUT/<name>.started  the process runs (its output: <name>.log)
#   $VG_OUT/<name>.stop     written by the host: stop it now
#   $VG_OUT/<name>.snap     written by the host: copy the threads' /proc stat
#                           lines to <name>.cpu0 (and the file is removed)
#   $VG_OUT/<name>.cpu      its threads' /proc stat lines when the stop came
#   $VG_OUT/<name>.probe    written by the host: run the job's probe command
#                           ($vg_probe when the job started: a secondary
#                           process, e.g. dpdk-proc-info) now, its output to
#                           <name>.probe.out (last line "rc N"), then the
#                           file is removed
#   $VG_OUT/<name>.end      how it ended: "stop" (the host's stop, then
#                           SIGINT), "itself" (before any stop), "deadline"
#                           (no stop within its deadline, then SIGINT), each
#                           followed by " killed" when it had not ended
#                           10 s after the SIGINT (SIGKILL)
#   $VG_OUT/<name>.rc       its exit status (written after .end)
#   $VG_OUT/done            every job ran
# The host's files are under $VG_HOST (init's bind mount of the host root):
# the guest's own /tmp and /run hide the host's.
set -u

VG_OUT=/run/vnapi-guest/out
VG_DIR=/run/vnapi-guest
VG_HOST=$VG_DIR/host
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# The DPDK under test: the host test's PATH and LD_LIBRARY_PATH (env.sh).
[ -e $VG_OUT/env.sh ] && . $VG_OUT/env.sh

vg_log() { echo "guest: $*"; echo "guest: $*" >> $VG_OUT/guest.log; }

# The BDF of the n-th (0-based) virtio-net 1.x device (1af4:1041).
vg_net_bdf() {
    n=0
    for d in /sys/bus/pci/devices/*; do
        if [ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1041 ]; then
            if [ "$n" -eq "$1" ]; then basename "$d"; return 0; fi
            n=$((n + 1))
        fi
    done
    return 1
}

# Hand a PCI device to vfio-pci.
vg_bind_vfio() {
    d=/sys/bus/pci/devices/$1
    [ -e "$d/driver" ] && echo "$1" > "$d/driver/unbind"
    echo vfio-pci > "$d/driver_override"
    echo "$1" > /sys/bus/pci/drivers_probe
    [ "$(basename "$(readlink "$d/driver")")" = vfio-pci ] ||
        { vg_log "cannot bind $1 to vfio-pci"; return 1; }
    vg_log "$1 bound to vfio-pci"
}

# The plugin directory of the DPDK under test (the dpdk-testpmd in PATH):
# the path its EAL was built with (RTE_EAL_PMD_PATH, a string in
# librte_eal), e.g. /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0.
vg_pmd_dir() {
    tp=$(command -v dpdk-testpmd) || { vg_log "no dpdk-testpmd in PATH ($PATH)"; return 1; }
    eal=$(ldd "$tp" | awk '$1 ~ /^librte_eal\.so/ { print $3; exit }')
    [ -n "$eal" ] || { vg_log "$tp: no librte_eal among its libraries"; return 1; }
    d=$(grep -ao '/[-a-zA-Z0-9_./]*/pmds-[0-9.]*[0-9]' "$eal" | head -n 1)
    [ -d "$d" ] || { vg_log "$eal: no plugin directory found (got '$d')"; return 1; }
    echo "$d"
}

# DPDK loads every PMD of its plugin directory: keep the real one reachable
# (bind mount, LD_LIBRARY_PATH) and mount a directory holding only links to
# the buses and the ring mempool over it (links, not copies: the dynamic
# loader then sees one file, never two copies of a library that registers a
# tailq). The PMD under test is loaded with -d from a root-owned 0755
# directory (EAL refuses -d paths below world-writable ones):
# $VG_PMDS/librte_net_virtio.so.$VG_ABI, or a copy of vnapi's plugin in $VG_PMD.
VG_PMDS=$VG_DIR/allpmds
VG_PMD=$VG_DIR/pmd
vg_plugins() {
    PMDS=$(vg_pmd_dir) || return 1
    VG_ABI=${PMDS##*/pmds-}
    VG_ABI=${VG_ABI%%.*}
    mkdir -p $VG_PMDS $VG_PMD
    mount --bind $PMDS $VG_PMDS
    mount -t tmpfs -o mode=0755 tmpfs $PMDS
    for l in librte_bus_pci librte_bus_vdev librte_mempool_ring; do
        # EAL loads *.so and *.so.<ABI>.0 only
        ln -s $VG_PMDS/$l.so.$VG_ABI $PMDS/$l.so
    done
    export LD_LIBRARY_PATH=$VG_PMDS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    vg_log "plugin directory $PMDS (ABI $VG_ABI) masked"
}

# Run the job's probe command (a secondary process: its own deadline) for
# the host, which waits for NAME.probe to go away.
vg_probe=
vg_run_probe() {
    if [ -n "$probe" ]; then
        timeout -k 5 60 sh -c "$probe" > $VG_OUT/$1.probe.tmp 2>&1
        echo "rc $?" >> $VG_OUT/$1.probe.tmp
    else
        echo "rc 127 (no probe command for this job)" > $VG_OUT/$1.probe.tmp
    fi
    mv $VG_OUT/$1.probe.tmp $VG_OUT/$1.probe.out
    rm -f $VG_OUT/$1.probe
}

# vg_run NAME DEADLINE_S CMD...: start CMD (stdin kept open, never EOF),
# then wait for the host's NAME.stop (or the deadline), SIGINT, wait up to
# 10 s for the exit, SIGKILL if needed; NAME.end says which, for the host
# to judge (a deadline or a SIGKILL fails the test). $vg_probe (if set) is the job's
# probe command (NAME.probe).
vg_run() {
    name=$1; deadline=$2; shift 2
    probe=$vg_probe
    mkfifo $VG_DIR/$name.in
    stdbuf -oL -eL "$@" < $VG_DIR/$name.in > $VG_OUT/$name.log 2>&1 &
    pid=$!
    exec 9<> $VG_DIR/$name.in
    touch $VG_OUT/$name.started
    vg_log "$name: pid $pid: $*"
    end=$(( $(date +%s) + deadline ))
    while [ ! -e $VG_OUT/$name.stop ] && [ "$(date +%s)" -lt "$end" ] &&
          kill -0 $pid 2>/dev/null; do
        if [ -e $VG_OUT/$name.snap ]; then
            cat /proc/$pid/task/*/stat > $VG_OUT/$name.cpu0 2>/dev/null
            rm -f $VG_OUT/$name.snap
        fi
        [ -e $VG_OUT/$name.probe ] && vg_run_probe $name
        sleep 0.05
    done
    if ! kill -0 $pid 2>/dev/null; then
        vg_log "$name: exited by itself"
        how=itself
    elif [ ! -e $VG_OUT/$name.stop ]; then
        vg_log "$name: no stop from the host within ${deadline}s"
        how=deadline
    else
        how=stop
    fi
    # CPU time of every thread so far (utime + stime, clock ticks), for the benchmark.
    cat /proc/$pid/task/*/stat > $VG_OUT/$name.cpu 2>/dev/null
    kill -INT $pid 2>/dev/null
    t_int=$(date +%s)
    end=$(( t_int + 10 ))
    while kill -0 $pid 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
        sleep 0.1
    done
    kill -0 $pid 2>/dev/null && { vg_log "$name: SIGKILL"; kill -KILL $pid; how="$how killed"; }
    wait $pid
    rc=$?
    exec 9<&-
    echo "$how" > $VG_OUT/$name.end
    echo $rc > $VG_OUT/$name.rc.tmp && mv $VG_OUT/$name.rc.tmp $VG_OUT/$name.rc  # whole, never half-written
    vg_log "$name: exit $rc, $(( $(date +%s) - t_int )) s after SIGINT"
}

vg_log "start $(uname -r), $(nproc) CPUs"
vg_plugins || { vg_log "no DPDK to test"; touch $VG_OUT/done; exit 1; }
# Hugepages: the kernel command line reserved them; EAL finds the mount.
grep -q hugetlbfs /proc/mounts || vg_log "no hugetlbfs mount"
. $VG_OUT/jobs.sh
vg_log "jobs done"
touch $VG_OUT/done
