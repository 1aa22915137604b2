#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""DPDK inside a QEMU guest, on a virtio-net-pci device behind a virtual IOMMU (vfio-pci).

Usage: test_guest.py BOOT [--rates R1,R2 --secs S --devargs ,K=V...]
  BOOT  virtio | vnapi | vnapi_packed | vnapi_mq | vnapi_novec | virtio_mq | bench  (one guest boot each: every check of a
        boot shares it, a boot costs ~20-30 s of TCG time on both host CPUs)
Paths come from the environment (meson sets them): VNAPI_GUEST_KERNEL (vmlinuz),
VNAPI_GUEST_INITRD, VNAPI_GUEST_SCRIPT (guest_run.sh), VNAPI_PLUGIN, VNAPI_L3FWD_POWER,
VNAPI_PEER.
Exit status 0 = pass, 1 = fail, 77 = skip (no QEMU or no guest kernel: run devtools/setup.sh).

The guest (q35, TCG, intel-iommu, 2 vCPUs) mounts the host root read-only over 9p and runs
tests/guest/guest_run.sh, which sources the job list this script writes to the results share.
The guest's own tmpfs on /tmp and /run hide the host's: the guest sees the whole host root
again at HOST_VIEW, and every file of the checkout is named through it (a checkout under
/tmp works). The DPDK under test is the one in this script's PATH and LD_LIBRARY_PATH
(env.sh in the share); guest_run.sh finds its plugin directory (pmds-<ABI>) from its EAL.
The device's netdev is a unix datagram socket pair (one datagram = one frame); the host-side
peer is vnapi-peer on the other socket ($VNAPI_PEER, app/vnapi-peer: it sends, receives and
checks every frame, the tests' one traffic engine). The multi-queue boot uses a 2-queue tap in
a network namespace instead (a datagram netdev has one queue), with vnapi-peer on a packet
socket in that namespace.

Checks, per boot (PMD = DPDK's net_virtio, or net_vnapi's PCI driver with vnapi=1):
  count  dpdk-testpmd io forwarding (loop topology): N frames with a bounded window, exactly N
         back byte for byte, testpmd's forward statistics exactly N rx and N tx.
  link   QEMU monitor set_link off / on: testpmd prints one link state change event for each
         (RTE_ETH_EVENT_INTR_LSC from the config interrupt); then N frames again, exactly N back.
  l3fwd  l3fwd-power --interrupt-only: one warm-up frame, then M IPv4 frames, each sent
         once l3fwd-power's log says it waits again with rx interrupts armed (so each
         should wake it through its queue's MSI-X vector): every one back routed (TTL - 1), exit status 0 on SIGINT. A
         frame with no wakeup gives its late interrupt up to 2 s to arrive as a wakeup of
         its own before the next frame (the warm-up frame too). net_virtio (no counters of
         its own): at least M wakeups logged, no frame without one (extra wakeups reported).
         vnapi: a secondary process (dpdk-proc-info -- --xstats, the PCI port attached with
         the same allow-list entry) reads the driver's xstats while l3fwd-power runs, before
         and after the M frames, and each frame must be one of: announced by exactly one
         interrupt (a wakeup; or late, still on its way when the timeout disarmed: read at
         the next arm, rx_qN_intr_late_notifications; or later still: the wait counted
         unnotified and the interrupt arriving as a wakeup that finds nothing, spurious);
         found by the re-check at arming and never announced (rx_qN_intr_rescues_unannounced);
         or arrived while l3fwd-power was awake between an epoll timeout and its silent
         re-arm, owed no interrupt (rx_qN_intr_awake_packets; a host stall after the
         handshake; at most M / 10). A lost interrupt is none of these. So per queue: frames == notifications +
         unannounced rescues + awake frames, notifications == wakeups + late, unnotified ==
         spurious, logged <= wakeups + unannounced rescues; in all, driver wakeups not
         logged (an interrupt read at the disarm after a timeout) + unannounced rescues ==
         frames with no wakeup in the settle - late - awake; M tx.
  mq     (vnapi_mq, virtio_mq) 2 queue pairs: IPv4/UDP frames of 64 flows, spread over the
         tap's two queues by its flow hash; exactly N back, testpmd's per-queue statistics
         show both rx queues used and N in all. vnapi_mq then runs l3fwd with l3fwd-power
         serving both queues on one lcore (MSI-X vectors 1 and 2), each frame a flow of its
         own, which the tap's flow hash steers to either queue: both queues must get frames.
  hybrid vnapi-fwd --mode hybrid (lib/napi): M sparse frames, each 1-5 ms after the previous
         came back, then N with a window: every one back unchanged, vnapi-fwd's FINAL line
         exactly M + N (+ D) rx and tx, its queue in hybrid mode with rx-interrupt wakeups
         counted. vnapi: dpdk-dumpcap (a secondary process, no allow-list, the plugin
         preloaded, -c 2 D) captures on the PCI port while frames pass one at a time until
         it ends: exactly 2 D packets (rx and tx), none dropped, exit 0.
  packed (vnapi_packed) the driver leaves EVENT_IDX out with the packed ring on virtio-pci
         (QEMU's tx ring stalls with both; doc/design.md): its log says so and the
         negotiated features have no EVENT_IDX; count and l3fwd then run on that ring.
  nointr (vnapi_novec: a device without MSI-X, vectors=0) count runs in poll mode; l3fwd-power
         --interrupt-only fails to start with the driver's error naming the missing vectors.
  bench  (not a test, not in the suite) see run_bench().
"""

import argparse
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time

from vnapitools import harness as h
from vnapitools import peer as vp
from vnapitools import sanitizer
from vnapitools.harness import Failure, env_path

SKIP = 77
GUEST_MAC = '02:00:00:00:00:0a'
WAKEUP_RE = r'lcore \d+ is waked up from rx interrupt'
WAKEUP_Q_RE = r'lcore \d+ is waked up from rx interrupt on port 0 queue (\d+)'
# l3fwd-power logs this before it waits again after a wakeup, rx interrupts armed
ASLEEP_LINE = 'sleeps until interrupt triggers'
RUN_DIR = '/run/vnapi-test'
# The host's root inside the guest (tests/guest/init binds it there before the
# guest's own tmpfs hides the host's /tmp): files of the checkout are named
# through it, so a checkout anywhere works.
HOST_VIEW = '/run/vnapi-guest/host'
HIDDEN_IN_GUEST = ('/tmp', '/run', '/dev', '/proc', '/sys')
# The results share inside the guest (guest_run.sh's VG_OUT).
GUEST_OUT = '/run/vnapi-guest/out'
# What devtools/sanitized.py adds to the environment of a sanitized run.
SANITIZER_ENV = ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')
# What QEMU does not inherit: the sanitizer settings, and meson's MALLOC_PERTURB_
# (a random byte per test that glibc writes into the heap on every malloc and
# free). QEMU is no code under test: its heap is the one it has outside the suite.
QEMU_ENV_DROP = SANITIZER_ENV + ('MALLOC_PERTURB_',)
# How much longer a guest program may take to start or end in a sanitized run.
SANITIZED_SLOWDOWN = 4

BOOTS = {
    # name: (device properties, PMD, extra devargs, checks)
    'virtio': ('', 'virtio', '', ('count', 'link', 'l3fwd')),
    'vnapi': ('', 'vnapi', '', ('count', 'link', 'l3fwd', 'hybrid')),
    # no MSI-X capability: poll mode works, interrupt mode fails clearly
    'vnapi_novec': (',vectors=0', 'vnapi', '', ('count', 'nointr')),
    # the driver's default devargs (event_idx=1): it leaves EVENT_IDX out itself
    'vnapi_packed': (',packed=on', 'vnapi', ',packed_vq=1', ('packed', 'count', 'l3fwd')),
    'virtio_packed': (',packed=on', 'virtio', '', ('count',)),
    # 2 queue pairs: a 2-queue tap in a network namespace (see MqNet)
    # testpmd on both queues, then l3fwd-power --interrupt-only serving both
    # (MSI-X vectors 1 and 2), sparse frames of fresh flows steered by the tap's hash
    'vnapi_mq': (',mq=on,vectors=6', 'vnapi', ',queues=2', ('mq', 'l3fwd')),
    # reference only (not in the suite: the vnapi_mq boot proves the feature)
    'virtio_mq': (',mq=on,vectors=6', 'virtio', '', ('mq',)),
}
MQ_FLOWS = 64

COUNT_FRAMES = 2000
COUNT_WINDOW = 32
SPARSE_FRAMES = 200
# per-queue xstats the interrupt check reads (delta over the sparse frames)
INTR_XSTATS = ('good_packets', 'intr_wakeups', 'intr_notifications', 'intr_rescues',
               'intr_spurious_wakeups', 'intr_unnotified_work', 'intr_late_notifications',
               'intr_rescues_unannounced', 'intr_awake_packets')
# At most this many of the sparse frames may reach l3fwd-power while it is awake (between
# its 10 ms epoll timeout and its re-arm after one empty poll: no interrupt owed); past it
# the check no longer tests interrupts and fails.
AWAKE_FRAMES_MAX = SPARSE_FRAMES // 10
HYBRID_SPARSE = 100
# Frames sent while dpdk-dumpcap (a secondary process, no allow-list) captures on the PCI port
# of vnapi-fwd: each is captured twice (rx and tx).
DUMPCAP_FRAMES = 20
NOINTR_ERROR = r'rx interrupts need 2 MSI-X vectors through vfio-pci .*the device has 0'
# l3fwd-power's exit status then: its configure fails, rte_exit(EXIT_FAILURE).
NOINTR_RC = 1
PACKED_NO_EVIDX = r'virtio-pci: packed ring without EVENT_IDX on this transport'


class Peer:
    """The host side of the guest's netdev: vnapi-peer (app/vnapi-peer) runs for each traffic
    check, on a unix datagram socket bound at the guest's peer_path and sending to QEMU's (one
    datagram is one frame), or on a packet socket on the tap in MqNet's namespace. Between
    runs nothing is bound there: QEMU drops what the guest sends meanwhile (nothing: every
    run waits until all its frames are back). It checks every frame byte for byte; its
    result line is vnapitools.peer's to read. Frames go to GUEST_MAC (the device filters on
    it) from 02:00:00:00:00:01; every IPv4/UDP frame goes to 1.1.1.1, which l3fwd-power routes back."""

    def __init__(self, g, net=None):
        self.g, self.net = g, net
        self.bin = vp.binary()

    def argv(self, phases, **opts):
        opts.setdefault('fe_mac', GUEST_MAC)
        opts.setdefault('no_warmup', True)
        if self.net is not None:
            return self.net.wrap(vp.argv(self.bin, phases, packet=MqNet.IFNAME, **opts))
        return vp.argv(self.bin, phases, unix=(self.g.peer_path, self.g.qemu_path), **opts)

    def start(self, phases, deadline, interactive=False, **opts):
        return h.DpdkProcess('peer', self.argv(phases, **opts), deadline=deadline,
                             interactive=interactive).start()

    def run(self, phases, deadline, any_order=False, **opts):
        """One run to its end: the RESULT (a dict), every count exact, or Failure."""
        p = self.start(phases, deadline, any_order=any_order, drain_ms=300, **opts)
        try:
            res = vp.result(p, deadline)
            why = vp.end(p, res)
        finally:
            p.stop()
        wrong = [w for w in vp.exact(res) if not (any_order and w.startswith('ooo='))]
        if wrong or res['verdict'] != 'PASS' or why:
            raise Failure('vnapi-peer: %s%s\n%s'
                          % (', '.join(wrong) or res['verdict'],
                             '; process end: ' + why if why else '', p.tail(30)))
        print('  ok: %s ended by itself, exit status 0' % p.describe(), flush=True)
        return res

    def count(self, n, window, deadline_s, size=128, flows=False, gap_ms=None):
        """n frames of @size bytes, at most @window in flight (each a random @gap_ms after
        the previous came back if given; with @flows, IPv4/UDP of MQ_FLOWS flows in any
        order); every one back unchanged within 5 s of its sending, none twice, nothing
        more. Returns the number back."""
        ph = vp.phase('sparse', count=n, gap=(int(gap_ms[0] * 1000), int(gap_ms[1] * 1000))) \
            if gap_ms else vp.phase('closed', count=n, window=window, burst=1)
        res = self.run([ph], deadline_s, any_order=flows, size=size, loss_ms=5000,
                       src_ports=MQ_FLOWS if flows else None)
        if res['back'] != n:
            raise Failure('%d of %d frames back' % (res['back'], n))
        return res['back']


class MqNet:
    """A network namespace holding QEMU's 2-queue tap (a datagram netdev has one queue), where
    the peer runs on a packet socket on the tap. IPv6 is off in the namespace so the kernel
    sends nothing of its own into the tap."""

    IFNAME = 'vgtap0'

    def __init__(self):
        self.ns = 'vnapi-guest-mq'
        subprocess.run(['ip', 'netns', 'del', self.ns], stderr=subprocess.DEVNULL)
        subprocess.run(['ip', 'netns', 'add', self.ns], check=True)
        subprocess.run(['ip', 'netns', 'exec', self.ns, 'sysctl', '-q', '-w',
                        'net.ipv6.conf.all.disable_ipv6=1',
                        'net.ipv6.conf.default.disable_ipv6=1'], check=True)

    def wrap(self, argv):
        return ['ip', 'netns', 'exec', self.ns] + argv

    def netdev(self):
        return 'tap,id=n0,ifname=%s,script=no,downscript=no,queues=2,vhost=off' % self.IFNAME

    def link_up(self, timeout=30):
        """Once QEMU made the tap: its link up (the peer's packet socket needs it)."""
        end = time.monotonic() + timeout
        while subprocess.run(['ip', '-n', self.ns, 'link', 'set', self.IFNAME, 'up'],
                             stderr=subprocess.DEVNULL).returncode != 0:
            if time.monotonic() > end:
                raise Failure('no tap %s in %s within %.0f s' % (self.IFNAME, self.ns, timeout))
            time.sleep(0.1)

    def close(self):
        subprocess.run(['ip', 'netns', 'del', self.ns], stderr=subprocess.DEVNULL)


class Guest:
    """One QEMU boot: the process (serial console on stdout), its monitor and its share."""

    def __init__(self, name, dev_props, deadline, net=None):
        self.name = name
        self.net = net
        self.dir = os.path.join(RUN_DIR, 'guest-' + name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.out = os.path.join(self.dir, 'out')
        os.makedirs(self.out)
        self.mon_path = os.path.join(self.dir, 'mon.sock')
        self.qemu_path = os.path.join(self.dir, 'qemu0.sock')
        self.peer_path = os.path.join(self.dir, 'peer0.sock')
        self.dev_props = dev_props
        self.deadline = deadline
        self.proc = None

    def argv(self):
        kernel = env_path('VNAPI_GUEST_KERNEL')
        initrd = env_path('VNAPI_GUEST_INITRD')
        script = env_path('VNAPI_GUEST_SCRIPT')
        return [
            'qemu-system-x86_64', '-machine', 'q35,accel=tcg', '-cpu', 'max', '-smp', '2',
            '-m', '1536', '-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot',
            '-serial', 'stdio', '-monitor', 'unix:%s,server=on,wait=off' % self.mon_path,
            '-kernel', kernel, '-initrd', initrd,
            '-append', 'console=ttyS0 intel_iommu=on hugepages=256 panic=-1 quiet '
                       'vnapi.script=%s' % script,
            # a sanitized run maps DPDK's memory above ASan's shadow (16 TB up): IOVA as
            # VA there needs the vIOMMU's 48-bit address width (39 by default)
            '-device', 'intel-iommu,intremap=on' + (',aw-bits=48' if sanitized() else ''),
            '-fsdev', 'local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap',
            '-device', 'virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot',
            '-fsdev', 'local,id=out,path=%s,security_model=none,multidevs=remap' % self.out,
            '-device', 'virtio-9p-pci,fsdev=out,mount_tag=out',
            '-netdev', self.net.netdev() if self.net else
                       'dgram,id=n0,local.type=unix,local.path=%s,remote.type=unix,'
                       'remote.path=%s' % (self.qemu_path, self.peer_path),
            '-device', 'virtio-net-pci,netdev=n0,disable-legacy=on,iommu_platform=on,'
                       'mac=%s%s' % (GUEST_MAC, self.dev_props),
        ]

    def boot(self, jobs):
        with open(os.path.join(self.out, 'env.sh'), 'w') as f:
            f.write(guest_env())
        with open(os.path.join(self.out, 'jobs.sh'), 'w') as f:
            f.write(jobs)
        argv = self.net.wrap(self.argv()) if self.net else self.argv()
        # QEMU is no code under test: without the sanitizer runtimes a sanitized run
        # preloads (devtools/sanitized.py); the guest's DPDK programs get them (guest_env()).
        env = {k: v for k, v in os.environ.items() if k not in QEMU_ENV_DROP}
        self.proc = h.DpdkProcess('qemu-' + self.name, argv, deadline=self.deadline,
                                  grace=10.0, env=env)
        self.proc.start()
        self.proc.wait_for(r'init: guest up', 60, what='the guest boot')

    def path(self, name):
        return os.path.join(self.out, name)

    def wait_file(self, name, timeout):
        # A program's start and end in the guest: under ASan inside TCG they take
        # several times as long (testpmd's EAL maps ASan's shadow of its memory).
        if sanitized():
            timeout *= SANITIZED_SLOWDOWN
        end = time.monotonic() + timeout
        while not os.path.exists(self.path(name)):
            if not self.proc.alive():
                raise Failure('guest exited before %s\n%s' % (name, self.proc.tail()))
            if time.monotonic() > end:
                raise Failure('no %s from the guest within %.0f s\n%s'
                              % (name, timeout, self.proc.tail()))
            time.sleep(0.05)

    def read(self, name):
        try:
            with open(self.path(name), errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def wait_log(self, job, regex, timeout, count=1):
        """Wait until job's log has `count` lines matching regex; returns them."""
        rx = re.compile(regex)
        end = time.monotonic() + timeout
        while True:
            hits = [ln for ln in self.read(job + '.log').splitlines() if rx.search(ln)]
            if len(hits) >= count:
                return hits
            if os.path.exists(self.path(job + '.rc')):
                raise Failure('%s exited before %r\n%s' % (job, regex, self.read(job + '.log')[-3000:]))
            if time.monotonic() > end or not self.proc.alive():
                raise Failure('%s: %d of %d lines matching %r within %.0f s\n%s'
                              % (job, len(hits), count, regex, timeout,
                                 self.read(job + '.log')[-3000:]))
            time.sleep(0.05)

    def stop_job(self, job, timeout=90):
        """The host's stop of a job: SIGINT in the guest; returns (exit status, log) once
        the job ended by itself after it, else fails naming the job (job_end())."""
        # The guest gives the job 10 s after SIGINT, then SIGKILL, and a
        # SIGKILL waits for whatever the kernel is doing for the process.
        # Once (guest_virtio, testpmd had printed "Done") no rc came within
        # 30 s; the guest log now says how long each exit took.
        open(self.path(job + '.stop'), 'w').close()
        return self.job_end(job, 'stop', timeout)

    def job_end(self, job, want, timeout=90):
        """(exit status, log) of a job once it has ended as @want says ('stop': after the
        host's stop and SIGINT; 'itself': before any stop), else Failure naming it: a
        deadline that expired in the guest, a SIGKILL after 10 s of SIGINT, or an end
        other than @want. The caller judges the status."""
        self.wait_file(job + '.rc', timeout)
        rc = int(self.read(job + '.rc').strip() or -1)
        how = self.read(job + '.end').split()
        log = self.read(job + '.log')
        if not how or how[0] != want or 'killed' in how:
            raise Failure('guest job %s (%s): ended "%s", exit status %d; expected an end by '
                          'itself %s\n%s' % (job, self.job_cmd(job), ' '.join(how) or 'unknown',
                                              rc, 'within 10 s of the stop\'s SIGINT'
                                              if want == 'stop' else 'before any stop',
                                              log[-3000:]))
        print('  guest job %s (%s) ended by itself %s, exit status %d (judged by the caller)'
              % (job, self.job_cmd(job), 'after the stop\'s SIGINT' if want == 'stop'
                 else 'before any stop', rc), flush=True)
        return rc, log

    def job_cmd(self, job):
        """The program of a job, from the guest's log ('NAME: pid N: CMD ...')."""
        m = re.search(r'guest: %s: pid \d+: (?:gdb .*--args )?(\S+)' % re.escape(job),
                      self.read('guest.log'))
        return os.path.basename(m.group(1)) if m else '?'

    def monitor(self, cmd):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(self.mon_path)
        buf = b''
        while b'(qemu) ' not in buf:
            buf += s.recv(4096)
        s.sendall(cmd.encode() + b'\n')
        buf = b''
        while buf.count(b'(qemu) ') < 1:
            buf += s.recv(4096)
        s.close()
        h.log('monitor: %s' % cmd)

    def finish(self):
        """Every job ran: the guest script ends with status 0 and the guest powers off, so
        QEMU ends by itself with exit status 0."""
        if self.proc is None:
            return
        try:
            self.wait_file('done', 30)
            if self.proc.wait_exit(30) is None:
                h.log('guest did not power off within 30 s')
        finally:
            self.proc.stop()
        why = self.proc.exit_problem()
        if why is None and self.proc.ended_by != 'itself':
            why = '%s: the guest did not power off within 30 s of its last job' % (
                self.proc.describe())
        script = re.findall(r'init: guest script exited with (\d+)', self.proc.text())
        if why is None and script != ['0']:
            why = '%s: the guest script ended with %s, expected 0' % (
                self.proc.describe(), script or 'no exit line')
        if why:
            raise Failure('process end: ' + why)
        print('  ok: %s ended by itself (guest powered off), exit status 0' %
              self.proc.describe(), flush=True)


def gpath(p):
    """A host file's path inside the guest (through HOST_VIEW)."""
    return HOST_VIEW + os.path.realpath(p)


def guest_env():
    """env.sh for guest_run.sh: the DPDK under test is the host test's (PATH,
    LD_LIBRARY_PATH: e.g. DPDK 25.11's prefix); entries the guest hides go through
    HOST_VIEW."""
    def conv(v):
        out = []
        for d in v.split(':'):
            if d and any(d == r or d.startswith(r + '/') for r in HIDDEN_IN_GUEST):
                d = HOST_VIEW + d
            out.append(d)
        return ':'.join(out)
    lines = ['export PATH=%s' % shlex.quote(conv(os.environ.get('PATH', '/usr/bin:/bin')))]
    if os.environ.get('LD_LIBRARY_PATH'):
        lines.append('export LD_LIBRARY_PATH=%s' % shlex.quote(conv(os.environ['LD_LIBRARY_PATH'])))
    if sanitized():
        # Under devtools/sanitized.py: the guest's programs (the driver built with ASan and
        # UBSan, loaded with -d) get the same runtimes and options, ASan's reports going to
        # the results share (read back by scan_guest_reports()).
        opts = [o for o in os.environ.get('ASAN_OPTIONS', '').split(':')
                if o and not o.startswith('log_path=')]
        lines.append('export LD_PRELOAD=%s' % shlex.quote(conv(os.environ['LD_PRELOAD'])))
        lines.append('export ASAN_OPTIONS=%s' % shlex.quote(':'.join(
            opts + ['log_path=' + GUEST_OUT + '/asan'])))
        lines.append('export UBSAN_OPTIONS=%s' % shlex.quote(os.environ.get('UBSAN_OPTIONS', '')))
    return '\n'.join(lines) + '\n'


def sanitized():
    """Run by devtools/sanitized.py (the sanitized integration run)."""
    return bool(os.environ.get('VNAPI_SANITIZER_DIR')) and 'libasan' in os.environ.get(
        'LD_PRELOAD', '')


def scan_guest_reports(g):
    """The sanitizer reports of the guest's programs: ASan's files in the results share and
    UBSan's lines in the jobs' logs, handed to vnapitools.sanitizer (a report fails the
    sanitized run, printed). Returns how many ASan report files there were."""
    n = 0
    for f in sorted(os.listdir(g.out)):
        if f.startswith('asan.') or f.endswith('.log') or f.endswith('.probe.out'):
            text = g.read(f)
            n += f.startswith('asan.') and bool(text.strip())
            sanitizer.scan('guest.' + f, text)
    return n


def jobs_script(boot, pmd, devargs, checks):
    """The guest's job list: testpmd (count, link), then l3fwd-power (l3fwd)."""
    lines = ['bdf=$(vg_net_bdf 0) || { vg_log "no virtio-net device"; exit 1; }',
             'vg_bind_vfio $bdf || exit 1']
    if pmd == 'vnapi':
        lines.append('cp %s $VG_PMD/librte_net_vnapi.so' % gpath(env_path('VNAPI_PLUGIN')))
        load = '-d $VG_PMD/librte_net_vnapi.so'
        allow = '$bdf,vnapi=1' + devargs
        logs = '--log-level=pmd.net.vnapi.*:info'
        l3extra = ''
    else:
        load = '-d $VG_PMDS/librte_net_virtio.so.$VG_ABI'
        allow = '$bdf' + devargs
        logs = '--log-level=pmd.net.virtio.init:info'
        l3extra = ' --parse-ptype'
    if sanitized():
        # A secondary maps the primary's memory at the primary's addresses: EAL's default
        # hint falls in ASan's shadow (test_tools.py's primary, the same).
        logs += ' --base-virtaddr=0x200000000000'
    # Diagnosis: VNAPI_GUEST_GDB=1 runs the guest's testpmd under gdb (backtrace on a crash).
    gdb = 'gdb -q -batch -ex run -ex bt --args ' if os.environ.get('VNAPI_GUEST_GDB') else ''
    if 'mq' in checks:
        lines.append('vg_run testpmd 150 ' + gdb + 'dpdk-testpmd -l 0,1 -n 1 --file-prefix tp %s -a %s %s '
                     '-- --forward-mode=io --port-topology=loop --total-num-mbufs=8192 '
                     '--rxq=2 --txq=2 --nb-cores=1' % (logs, allow, load))
    if 'count' in checks or 'link' in checks:
        lines.append('vg_run testpmd 150 dpdk-testpmd -l 0,1 -n 1 --file-prefix tp %s -a %s %s '
                     '-- --forward-mode=io --port-topology=loop --total-num-mbufs=8192 '
                     '--rxd=256 --txd=256 --nb-cores=1' % (logs, allow, load))
    if 'l3fwd' in checks and pmd == 'vnapi':
        # The host's probe of the running l3fwd-power: its xstats, read by a
        # secondary process attached to the PCI port (same allow-list entry).
        lines.append('vg_probe="dpdk-proc-info --file-prefix l3 %s -a %s %s -- --xstats"'
                     % (logs, allow, load))
    if 'l3fwd' in checks or 'nointr' in checks:
        config = ','.join('(0,%d,1)' % q for q in range(boot_queues(checks)))
        lines.append('vg_run l3fwd 120 %s -l 1 -n 1 --file-prefix l3 %s -a %s %s '
                     '--log-level=user1:info -- -p 0x1 --config="%s" --interrupt-only%s'
                     % (gpath(env_path('VNAPI_L3FWD_POWER')), logs, allow, load, config,
                        l3extra))
        lines.append('vg_probe=')
    if 'hybrid' in checks:
        if pmd == 'vnapi':
            # The host's probe of the running vnapi-fwd: dpdk-dumpcap, a secondary process
            # that takes no -a (it sees the device without vnapi=1) and no -d (the plugin
            # preloaded), capturing what the port receives and sends.
            # (after the sanitizer runtimes of a sanitized run, which must come first)
            lines.append('vg_probe="LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}'
                         '$VG_PMD/librte_net_vnapi.so dpdk-dumpcap '
                         '--file-prefix fw -i $bdf -c %d -w /tmp/vg-fwd.pcapng"'
                         % (2 * DUMPCAP_FRAMES))
        lines.append('vg_run fwd 120 %s -l 0,1 -n 1 --file-prefix fw %s -a %s %s '
                     '-- --mode hybrid --config "(0,0,1)" --fwd io'
                     % (gpath(env_path('VNAPI_FWD')), logs, allow, load))
        lines.append('vg_probe=')
    return '\n'.join(lines) + '\n'


def boot_queues(checks):
    return 2 if 'mq' in checks else 1


def parse_xstats(text):
    """dpdk-proc-info -- --xstats: {name: value}."""
    return {k: int(v) for k, v in re.findall(r'^\s*(\w+): (\d+)\s*$', text, re.M)}


def probe_xstats(g, job, timeout=90):
    """Ask the guest to run the job's probe (dpdk-proc-info -- --xstats, a secondary
    process) while the job runs; returns (exit status, xstats, output)."""
    for f in (job + '.probe.out',):
        if os.path.exists(g.path(f)):
            os.unlink(g.path(f))
    open(g.path(job + '.probe'), 'w').close()
    g.wait_file(job + '.probe.out', timeout)
    text = g.read(job + '.probe.out')
    m = re.search(r'^rc (\d+)', text, re.M)
    return (int(m.group(1)) if m else -1), parse_xstats(text), text


class Handshake:
    """Called before each sparse frame (and once after the last): l3fwd-power waits again,
    rx interrupts armed, after its last wakeup (it logs ASLEEP_LINE at the first arm after a
    wakeup, before it waits; it re-arms silently after each 10 ms epoll timeout, following
    one empty poll). A frame that reaches it in that short awake moment between a timeout
    and the re-arm (a host stall after the handshake) is owed no interrupt: the driver
    counts it (rx_qN_intr_awake_packets) and the check judges it so. If the previous frame woke nobody (served after l3fwd-power's 10 ms epoll
    timeout: its notification lost, or late, still on its way when the timeout disarmed the
    queue), its notification gets up to LATE_SETTLE_S to show as a wakeup of its own (a
    notification that lands after the next arm) before the next frame goes: the next frame
    must not share a wakeup with it (a late interrupt and the next frame's in one eventfd
    read; likely what CI's 199 wakeups for 200 frames on net_virtio were). vnapi reads a
    notification that lands before its next arm there (rx_qN_intr_late_notifications): no
    wakeup comes and the wait runs out; this is rare (an interrupt over 10 ms late). `missed`
    counts the unwoken frames whose wait ran out."""

    LATE_SETTLE_S = 2.0

    def __init__(self, g, job):
        self.g, self.job = g, job
        self.restart()

    def restart(self):
        """Count from here: the last frame has had its handshake (and settle)."""
        self.last = wait_asleep(self.g, self.job)
        self.sent = False
        self.unwoken = 0
        self.missed = 0

    def _wakeups(self):
        return len(re.findall(WAKEUP_RE, self.g.read(self.job + '.log')))

    def __call__(self):
        if self.sent and self._wakeups() == self.last:
            self.unwoken += 1
            end = time.monotonic() + self.LATE_SETTLE_S
            while self._wakeups() == self.last:
                if time.monotonic() > end:
                    self.missed += 1
                    break
                time.sleep(0.002)
        self.sent = True
        self.last = wait_asleep(self.g, self.job)
        return self.last


def wait_asleep(g, job, timeout=10.0):
    """Until l3fwd-power waits again, rx interrupts armed, after its last wakeup (it logs
    ASLEEP_LINE once per wakeup, before the next wait). Returns the wakeups so far."""
    end = time.monotonic() + timeout
    while True:
        text = g.read(job + '.log')
        w = len(re.findall(WAKEUP_RE, text))
        if text.count(ASLEEP_LINE) >= w:
            return w
        if time.monotonic() > end:
            raise Failure('l3fwd-power not waiting again within %.0f s after wakeup %d: a frame '
                          'it did not see?\n%s' % (timeout, w, text[-2000:]))
        time.sleep(0.001)


def check_dumpcap(g, peer, res):
    """dpdk-dumpcap (a secondary process, the plugin preloaded, no allow-list: vnapi's PCI
    driver attaches because the primary's port for the device is vnapi's) captures on the
    PCI port of the running vnapi-fwd. Its capture goes live some time after it starts (its
    EAL, then vnapi-fwd installs the callbacks when its multi-process thread gets the
    request), so frames go one at a time from its start until it has its
    2 x DUMPCAP_FRAMES packets (-c: rx and tx of each frame) and exits: exit 0, exactly that
    many written, none dropped. Returns the frames sent (vnapi-fwd forwarded every one)."""
    for f in ('fwd.probe.out', 'fwd.probe.tmp'):
        if os.path.exists(g.path(f)):
            os.unlink(g.path(f))
    # One frame per "go" (each 20 ms after the previous came back) until dumpcap is done.
    p = peer.start([vp.phase('sparse', count=10000, gap=(20000, 20000), step=True)], 90,
                   interactive=True, size=128, loss_ms=5000)
    try:
        open(g.path('fwd.probe'), 'w').close()
        n = 0
        end = time.monotonic() + 55
        while not os.path.exists(g.path('fwd.probe.out')):
            if time.monotonic() > end:
                raise Failure('dpdk-dumpcap did not end after %d frames\n%s'
                              % (n, g.read('fwd.probe.tmp')[-3000:]))
            mark = p.mark()
            vp.send_line(p, 'go')
            m = p.wait_for(r'^FRAME 0 seq=%d back=(\d)' % n, 10, since=mark)
            if m.group(1) != '1':
                raise Failure('dumpcap: frame %d not back within 5 s\n%s' % (n, p.tail(20)))
            n += 1
        vp.send_line(p, 'end')
        res = vp.result(p, 10)
        why = vp.end(p, res)
    finally:
        p.stop()
    if vp.exact(res) or res['verdict'] != 'PASS' or why or res['back'] != n:
        raise Failure('dumpcap: vnapi-peer %s, %d frames sent%s'
                      % (', '.join(vp.exact(res)) or res['verdict'], n,
                         '; process end: ' + why if why else ''))
    text = g.read('fwd.probe.out')
    rc = re.search(r'^rc (\d+)', text, re.M)
    got = re.search(r"Packets received/dropped on interface '[^']*': (\d+)/(\d+)", text)
    # dumpcap rewrites the number of its "Packets captured: N" line as it goes (backspaces
    # or carriage returns): the last number of that line counts
    line = re.search(r'Packets captured:([^\n]*)', text)
    written = re.findall(r'\d+', line.group(1)) if line else []
    res['dumpcap'] = got.group(0) if got else None
    res['dumpcap_frames_sent'] = n
    # -c stops after the burst that reaches the count: with one frame at a time, exactly
    # the count is written. The "received" figure is librte_pdump's per-queue counters read
    # by dumpcap from the shared memzone as it ends; they are not exact at that moment (CI
    # saw 38 received with 40 written, other runs 41), so only dumpcap's written and
    # dropped counts are judged.
    if rc is None or int(rc.group(1)) != 0 or got is None or not written or \
            int(written[-1]) != 2 * DUMPCAP_FRAMES or \
            int(got.group(2)) != 0 or n < DUMPCAP_FRAMES:
        raise Failure('dpdk-dumpcap on the PCI port: expected exit 0, %d packets captured and '
                      'none dropped (rx and tx of %d frames; %d sent)\n%s'
                      % (2 * DUMPCAP_FRAMES, DUMPCAP_FRAMES, n, text[-3000:]))
    return n


def check_l3fwd(g, peer, boot, pmd, checks, res):
    """l3fwd-power --interrupt-only, exact: SPARSE_FRAMES frames, each sent once l3fwd-power
    waits again with rx interrupts armed (its log says so), so each must wake it through its
    queue's MSI-X vector, well before its 10 ms epoll timeout. A lost interrupt leaves the frame
    to that timeout: no wakeup logged, and the driver's disarm finds completions nobody
    announced (rx_qN_intr_unnotified_work). vnapi: the driver's xstats, read by a secondary
    process (dpdk-proc-info) before and after, must add up exactly."""
    nq = boot_queues(checks)
    g.wait_file('l3fwd.started', 30)
    g.wait_log('l3fwd', r'entering main interrupt loop', 90)
    # One run of the peer, two phases of frames sent one at a time on our "go": each a random
    # gap after the handshake, routed back by l3fwd-power within 2 s. With two queues each
    # frame is a flow of its own, which the tap's flow hash steers to either queue.
    p = peer.start([vp.phase('sparse', count=1, gap=(1000, 5000), step=True),
                    vp.phase('sparse', count=SPARSE_FRAMES, gap=(200, 1000), step=True)], 240,
                   interactive=True, expect='routed', loss_ms=2000,
                   src_ports=40000 if nq > 1 else None)
    try:
        check_l3fwd_run(g, p, pmd, nq, res)
    finally:
        p.stop()


def stepped(p, index, n, before):
    """@n frames of the peer's phase @index, each sent after before() returned: every one must
    come back (routed, within its loss timeout). The phase's result."""
    for k in range(n):
        before()
        mark = p.mark()
        vp.send_line(p, 'go')
        m = p.wait_for(r'^FRAME %d seq=%d back=(\d)' % (index, k), 30, since=mark,
                       what='sparse frame %d' % k)
        if m.group(1) != '1':
            raise Failure('sparse frame %d of %d not back within 2 s (or not routed)\n%s'
                          % (k, n, p.tail(20)))
    return vp.phase_result(p, index, 30)


def check_l3fwd_run(g, p, pmd, nq, res):
    # One frame first: the counted frames all start from "asleep after a wakeup". The first
    # interrupt after the start can be the slow one (a run here counted 201 wakeups for
    # 200 frames on net_virtio): the handshake after it gives a late one its settle too, before
    # the count starts.
    hs = Handshake(g, 'l3fwd')
    stepped(p, 0, 1, hs)
    hs()
    xs0 = None
    if pmd == 'vnapi':
        rc0, xs0, text0 = probe_xstats(g, 'l3fwd')
        res['probe_rc'] = rc0
        # vnapi's own per-queue names: its PCI driver attached in the secondary
        if rc0 != 0 or 'rx_q0_intr_unnotified_work' not in xs0:
            raise Failure('dpdk-proc-info (secondary) on the PCI port: exit %d, expected 0 with '
                          'vnapi\'s xstats\n%s' % (rc0, text0[-3000:]))
    res['warmup_served_by_timeout'] = hs.unwoken
    hs.restart()
    w0 = hs.last
    log0 = len(g.read('l3fwd.log'))
    t = time.monotonic()
    ph = stepped(p, 1, SPARSE_FRAMES, hs)
    res['sparse_s'] = round(time.monotonic() - t, 2)
    w1 = hs()
    res['frames_without_own_wakeup'] = hs.unwoken
    res['frames_no_wakeup_in_settle'] = hs.missed
    peer_res = vp.result(p, 30)
    why = vp.end(p, peer_res)
    if vp.exact(peer_res) or peer_res['back'] != SPARSE_FRAMES + 1 or why:
        raise Failure('vnapi-peer: %d of %d frames back, %s%s'
                      % (peer_res['back'], SPARSE_FRAMES + 1, ', '.join(vp.exact(peer_res)),
                         '; process end: ' + why if why else ''))
    res['sparse_back'] = ph['back']
    res['rtt_p50_ms'] = round(ph['p50_us'] / 1000, 2)
    res['rtt_max_ms'] = round(ph['max_us'] / 1000, 2)
    xs1 = None
    if pmd == 'vnapi':
        rc1, xs1, text1 = probe_xstats(g, 'l3fwd')
        if rc1 != 0 or not xs1:
            raise Failure('second dpdk-proc-info: exit %d\n%s' % (rc1, text1[-3000:]))
    rc, text = g.stop_job('l3fwd')
    logged = [int(q) for q in re.findall(WAKEUP_Q_RE, text[log0:])]
    per_q_logged = [logged.count(q) for q in range(nq)]
    res['l3fwd_rc'] = rc
    res['l3fwd_wakeups'] = per_q_logged
    bad = []
    if rc != 0:
        bad.append('l3fwd-power exit status %d, expected 0 on SIGINT' % rc)
    res['extra_wakeups'] = max(0, w1 - w0 - SPARSE_FRAMES)
    if xs1 is None and (w1 - w0 < SPARSE_FRAMES or hs.missed or len(logged) < w1 - w0):
        # net_virtio, which has no counters of its own: each frame one wakeup, on time or
        # late (a wakeup of its own within the settle); stepped() has already failed a
        # frame not forwarded. A wakeup beyond one per frame (a notification QEMU's device
        # sends for no new frame) is reported, not judged: DPDK's driver cannot say what its
        # wakeup found. vnapi's xstats judge that for vnapi.
        bad.append('%d rx-interrupt wakeups (%d logged with a queue), %d frames served by the '
                   'timeout, %d of them with no wakeup within %.0f s: expected at least one '
                   'wakeup per frame, none missed'
                   % (w1 - w0, len(logged), hs.unwoken, hs.missed, Handshake.LATE_SETTLE_S))
    if xs1 is not None and w1 - w0 != len(logged):
        bad.append('%d rx-interrupt wakeups, %d logged with a queue' % (w1 - w0, len(logged)))
    if xs1 is None:
        if bad:
            raise Failure('; '.join(bad) + '\n' + text[-3000:])
        return
    d = {}
    for q in range(nq):
        for k in INTR_XSTATS:
            name = 'rx_q%d_%s' % (q, k)
            if name not in xs0 or name not in xs1:
                raise Failure('xstat %s missing from dpdk-proc-info\'s output' % name)
            d[name] = xs1[name] - xs0[name]
    d['tx_q0_good_packets'] = xs1.get('tx_q0_good_packets', -1) - xs0.get('tx_q0_good_packets', 0)
    res['l3fwd_xstats'] = d
    # the warm-up frame (no handshake before it) may have been served by a timeout
    res['l3fwd_xstats_warmup'] = {k: v for k, v in xs0.items()
                                  if re.match(r'rx_q\d+_intr_(unnotified|spurious)', k)}
    if d['tx_q0_good_packets'] != SPARSE_FRAMES or \
            sum(d['rx_q%d_good_packets' % q] for q in range(nq)) != SPARSE_FRAMES:
        bad.append('expected exactly %d rx (all queues) and tx' % SPARSE_FRAMES)
    awake_all = 0
    for q in range(nq):
        pk = d['rx_q%d_good_packets' % q]
        if nq > 1 and pk == 0:
            bad.append('queue %d got no frame (the tap steers fresh flows to both)' % q)
        wk, nt, late, unn, spur, resc, resc_un, awake = (
            d['rx_q%d_intr_%s' % (q, k)]
            for k in ('wakeups', 'notifications', 'late_notifications', 'unnotified_work',
                      'spurious_wakeups', 'rescues', 'rescues_unannounced', 'awake_packets'))
        awake_all += awake
        # Every frame is one of: announced by exactly one interrupt (on time, late, or very
        # late), found by the re-check at arming and never announced (the driver's own
        # signal woke l3fwd-power), or arrived while l3fwd-power was awake between its
        # epoll timeout and its next arm (no interrupt owed). A lost interrupt breaks this:
        # its frame is in none of the three.
        if pk != nt + resc_un + awake:
            bad.append('queue %d: %d frames, %d notifications, %d unannounced rescues, %d frames '
                       'that arrived while disarmed: expected frames == notifications + '
                       'unannounced rescues + awake frames' % (q, pk, nt, resc_un, awake))
        # Each notification was read by a disarm of the armed queue (a wakeup) or at the
        # next arm (late); none came for a disarmed queue.
        if nt != wk + late:
            bad.append('queue %d: %d notifications, %d wakeups, %d late: expected notifications '
                       '== wakeups + late' % (q, nt, wk, late))
        if per_q_logged[q] > wk + resc_un:
            bad.append('queue %d: %d wakeups logged by l3fwd-power, driver %d wakeups and %d '
                       'unannounced rescues: expected logged <= their sum'
                       % (q, per_q_logged[q], wk, resc_un))
        if resc_un > resc:
            bad.append('queue %d: %d unannounced rescues of %d rescues' % (q, resc_un, resc))
        # A wait judged unnotified is a very late interrupt only if it arrived after all:
        # as a wakeup that found nothing (spurious).
        if unn != spur:
            bad.append('queue %d: %d lost-wakeup verdicts, %d spurious wakeups: each such '
                       'wait must be an interrupt that came very late (a spurious wakeup '
                       'after it), else it was lost' % (q, unn, spur))
    res['awake_frames'] = awake_all
    if awake_all > AWAKE_FRAMES_MAX:
        bad.append('%d frames reached l3fwd-power awake (at most %d): the handshake no longer '
                   'sends to a waiting l3fwd-power, the check tests no interrupt'
                   % (awake_all, AWAKE_FRAMES_MAX))
    # Driver wakeups l3fwd-power did not log: an interrupt landing between its timeout and
    # its disarm (read there). Wakeups it logged that the driver did not count: our own
    # rescue signal alone. Every frame the handshake saw with no wakeup within its settle
    # (missed) is the former, a late notification, or a frame that arrived awake.
    resc_un_all = sum(d['rx_q%d_intr_rescues_unannounced' % q] for q in range(nq))
    unlogged = sum(d['rx_q%d_intr_wakeups' % q] for q in range(nq)) - sum(per_q_logged)
    late_all = sum(d['rx_q%d_intr_late_notifications' % q] for q in range(nq))
    res['wakeups_read_at_disarm_after_timeout'] = unlogged + resc_un_all
    if unlogged + resc_un_all != hs.missed - late_all - awake_all:
        bad.append('%d driver wakeups l3fwd-power did not log, %d unannounced rescues, %d '
                   'frames with no wakeup within the settle, %d late notifications, %d awake '
                   'frames: expected unlogged + unannounced rescues == missed - late - awake'
                   % (unlogged, resc_un_all, hs.missed, late_all, awake_all))
    if bad:
        raise Failure('l3fwd-power on %d queue(s): %s\nxstats delta %s\n%s'
                      % (nq, '; '.join(bad), d, text[-3000:]))


def run_boot(boot):
    dev_props, pmd, devargs, checks = BOOTS[boot]
    res = {'boot': boot}
    net = MqNet() if 'mq' in checks else None
    g = Guest(boot, dev_props, deadline=240, net=net)
    peer = Peer(g, net)
    t0 = time.monotonic()
    try:
        g.boot(jobs_script(boot, pmd, devargs, checks))
        if net is not None:
            net.link_up()
        res['boot_s'] = round(time.monotonic() - t0, 1)
        if 'mq' in checks:
            g.wait_file('testpmd.started', 60)
            g.wait_log('testpmd', r'Press enter to exit', 90)
            res['mq_back'] = peer.count(COUNT_FRAMES, COUNT_WINDOW, 60, flows=True)
            rc, text = g.stop_job('testpmd')
            per_q = {int(q): int(n) for q, n in re.findall(
                r'Forward Stats for RX Port= *0/Queue= *(\d+)[^\n]*\n\s*RX-packets: (\d+)', text)}
            fs = h.parse_fwd_stats(text).get(0, {})
            res['testpmd_rc'] = rc
            res['mq_rx_per_queue'] = per_q
            res['testpmd_fwd'] = fs
            if rc != 0:
                raise Failure('testpmd exit status %d\n%s' % (rc, text[-3000:]))
            if fs.get('RX-packets') != COUNT_FRAMES or fs.get('TX-packets') != COUNT_FRAMES:
                raise Failure('testpmd forward statistics %s, expected %d rx and tx'
                              % (fs, COUNT_FRAMES))
            if sorted(per_q) != [0, 1] or min(per_q.values()) == 0 or \
                    sum(per_q.values()) != COUNT_FRAMES:
                raise Failure('rx per queue %s: both queues must carry traffic, %d in all\n%s'
                              % (per_q, COUNT_FRAMES, text[-3000:]))
        if 'count' in checks or 'link' in checks:
            g.wait_file('testpmd.started', 60)
            g.wait_log('testpmd', r'Press enter to exit', 90)
            if 'packed' in checks:
                text = g.read('testpmd.log')
                feats = re.search(r'virtio-pci: features 0x[0-9a-f]+ \(([^)]*)\)', text)
                if not re.search(PACKED_NO_EVIDX, text) or feats is None or \
                        'RING_PACKED' not in feats.group(1).split() or \
                        'EVENT_IDX' in feats.group(1).split():
                    raise Failure('packed ring: expected RING_PACKED without EVENT_IDX and the '
                                  'driver saying so\n%s' % text[-3000:])
                res['packed_features'] = feats.group(1)
            if 'count' in checks:
                t = time.monotonic()
                res['count_back'] = peer.count(COUNT_FRAMES, COUNT_WINDOW, 60)
                res['count_s'] = round(time.monotonic() - t, 2)
            if 'link' in checks:
                g.monitor('set_link n0 off')
                g.wait_log('testpmd', r'Port 0: link state change event', 20, count=1)
                g.monitor('set_link n0 on')
                g.wait_log('testpmd', r'Port 0: link state change event', 20, count=2)
                res['lsc_events'] = 2
                res['after_link_back'] = peer.count(COUNT_FRAMES // 4, COUNT_WINDOW, 60)
            rc, text = g.stop_job('testpmd')
            fs = h.parse_fwd_stats(text).get(0, {})
            res['testpmd_rc'] = rc
            res['testpmd_fwd'] = fs
            want = (COUNT_FRAMES if 'count' in checks else 0) + \
                (COUNT_FRAMES // 4 if 'link' in checks else 0)
            if rc != 0:
                raise Failure('testpmd exit status %d\n%s' % (rc, text[-3000:]))
            if fs.get('RX-packets') != want or fs.get('TX-packets') != want or \
                    fs.get('RX-dropped', 0) != 0 or fs.get('TX-dropped', 0) != 0:
                raise Failure('testpmd forward statistics %s, expected %d rx and tx\n%s'
                              % (fs, want, text[-3000:]))
            if 'link' in checks:
                n = len(re.findall(r'Port 0: link state change event', text))
                if n != 2:
                    raise Failure('%d link state change events, expected 2' % n)
        if 'l3fwd' in checks:
            check_l3fwd(g, peer, boot, pmd, checks, res)
        if 'nointr' in checks:
            # no stop from us: l3fwd-power must end by itself, refused at start
            rc, text = g.job_end('l3fwd', 'itself', 60)
            res['nointr_rc'] = rc
            if rc != NOINTR_RC or not re.search(NOINTR_ERROR, text):
                raise Failure('l3fwd-power --interrupt-only on a device without MSI-X: exit %d, '
                              'expected %d with %r\n%s'
                              % (rc, NOINTR_RC, NOINTR_ERROR, text[-3000:]))
        if 'hybrid' in checks:
            g.wait_file('fwd.started', 30)
            g.wait_log('fwd', r'rx port 0 queue 0 on lcore 1 .*hybrid', 90)
            t = time.monotonic()
            n = peer.count(HYBRID_SPARSE, 1, 60, gap_ms=(1.0, 5.0))
            n += peer.count(COUNT_FRAMES // 4, COUNT_WINDOW, 60)
            res['hybrid_s'] = round(time.monotonic() - t, 2)
            extra = 0
            if pmd == 'vnapi':
                extra = check_dumpcap(g, peer, res)
            rc, text = g.stop_job('fwd')
            fin = re.search(r'FINAL rx=(\d+) tx=(\d+) dropped=(\d+)', text)
            q = re.search(r'QUEUE lcore=1 port=0 queue=0 mode=(\S+) .* wakeups=(\d+) ', text)
            res['fwd_rc'] = rc
            res['hybrid_final'] = fin.group(0) if fin else None
            res['hybrid_wakeups'] = int(q.group(2)) if q else None
            want = HYBRID_SPARSE + COUNT_FRAMES // 4 + extra
            if rc != 0 or fin is None or q is None or \
                    (int(fin.group(1)), int(fin.group(2)), int(fin.group(3))) != (want, want, 0):
                raise Failure('vnapi-fwd hybrid: exit %d, expected FINAL rx=%d tx=%d dropped=0\n%s'
                              % (rc, want, want, text[-3000:]))
            if q.group(1) != 'hybrid' or not 1 <= int(q.group(2)) <= want:
                raise Failure('vnapi-fwd hybrid: queue mode %s, %s wakeups for %d frames'
                              % (q.group(1), q.group(2), want))
        g.finish()
        res['total_s'] = round(time.monotonic() - t0, 1)
        return res
    finally:
        if net is not None:
            net.close()
        if g.proc is not None:
            g.proc.stop()
        if sanitized():
            h.log('guest: %d ASan report file(s)' % scan_guest_reports(g))
        for f in ['guest.log'] + sorted(f for f in os.listdir(g.out)
                                        if f.endswith('.log') and f != 'guest.log'):
            text = g.read(f)
            if text:
                sys.stdout.write('---- %s (tail)\n%s\n' % (f, '\n'.join(text.splitlines()[-25:])))


def cpu_ticks(text):
    """utime + stime summed over /proc/PID/task/*/stat lines."""
    total = 0
    for ln in text.splitlines():
        f = ln[ln.rfind(')') + 2:].split()
        if len(f) > 12:
            total += int(f[11]) + int(f[12])
    return total


def snap_cpu(g, job):
    open(g.path(job + '.snap'), 'w').close()
    end = time.monotonic() + 10
    while os.path.exists(g.path(job + '.snap')):
        if time.monotonic() > end:
            raise Failure('no CPU snapshot of %s' % job)
        time.sleep(0.02)
    return cpu_ticks(g.read(job + '.cpu0'))


def open_loop(peer, rate, secs):
    """IPv4 frames at @rate per second for @secs (an open loop: a frame leaves when due, not
    when the last came back), routed back by l3fwd-power. Returns (sent, back)."""
    p = peer.start([vp.phase('open', rate=rate, secs=float(secs))], secs + 60,
                   expect='routed', loss_ms=2000)
    try:
        res = vp.result(p, secs + 60)
        why = vp.end(p, res)
    finally:
        p.stop()
    if why:
        raise Failure('process end: ' + why)
    return res['sent'], res['back']


def run_bench(rates, secs, devargs=''):
    """Benchmark (not a test): l3fwd-power --interrupt-only at sparse open-loop rates, vnapi
    then net_virtio on the same device in one boot: packets per wakeup and guest CPU; then
    testpmd io forwarding (poll mode) as context. TCG: relative figures only."""
    g = Guest('bench', '', deadline=600)
    peer = Peer(g)
    res = {}
    lines = ['bdf=$(vg_net_bdf 0) || exit 1', 'vg_bind_vfio $bdf || exit 1',
             'cp %s $VG_PMD/librte_net_vnapi.so' % gpath(env_path('VNAPI_PLUGIN'))]
    pmds = {'vnapi': ('$bdf,vnapi=1' + devargs, '-d $VG_PMD/librte_net_vnapi.so', ''),
            'virtio': ('$bdf', '-d $VG_PMDS/librte_net_virtio.so.$VG_ABI', ' --parse-ptype')}
    for name, (allow, load, extra) in pmds.items():
        lines.append('vg_run l3_%s 300 %s -l 1 -n 1 --file-prefix l3%s -a %s %s '
                     '--log-level=user1:info -- -p 0x1 --config="(0,0,1)" --interrupt-only%s'
                     % (name, gpath(env_path('VNAPI_L3FWD_POWER')), name, allow, load, extra))
        lines.append('vg_run tp_%s 120 dpdk-testpmd -l 0,1 -n 1 --file-prefix tp%s -a %s %s '
                     '-- --forward-mode=io --port-topology=loop --total-num-mbufs=8192 '
                     '--nb-cores=1' % (name, name, allow, load))
    try:
        g.boot('\n'.join(lines) + '\n')
        for name in pmds:
            job = 'l3_' + name
            g.wait_file(job + '.started', 60)
            g.wait_log(job, r'entering main interrupt loop', 90)
            for rate in rates:
                w0 = len(re.findall(WAKEUP_RE, g.read(job + '.log')))
                c0 = snap_cpu(g, job)
                t = time.monotonic()
                n, back = open_loop(peer, rate, secs)
                dt = time.monotonic() - t
                c1 = snap_cpu(g, job)
                w1 = len(re.findall(WAKEUP_RE, g.read(job + '.log')))
                wk = w1 - w0
                res['%s_%dpps' % (name, rate)] = {
                    'sent': n, 'back': back, 'wakeups': wk,
                    'pkts_per_wakeup': round(back / wk, 2) if wk else None,
                    'cpu_pct': round((c1 - c0) / 100.0 / dt * 100, 1)}
                h.log('%s %d pps: %s' % (name, rate, res['%s_%dpps' % (name, rate)]))
            g.stop_job(job)
            job = 'tp_' + name
            g.wait_file(job + '.started', 60)
            g.wait_log(job, r'Press enter to exit', 90)
            t = time.monotonic()
            n = peer.count(20000, 256, 120)
            res['%s_poll_pps' % name] = round(n / (time.monotonic() - t))
            h.log('%s poll: %s pps' % (name, res['%s_poll_pps' % name]))
            g.stop_job(job)
        g.finish()
        return res
    finally:
        if g.proc is not None:
            g.proc.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('boot', choices=sorted(BOOTS) + ['bench'])
    ap.add_argument('--rates', default='100,1000', help='bench: open-loop rates (pps)')
    ap.add_argument('--secs', type=float, default=5.0, help='bench: seconds per rate')
    ap.add_argument('--devargs', default='', help='bench: more vnapi devargs (",event_idx=0")')
    a = ap.parse_args()
    if shutil.which('qemu-system-x86_64') is None:
        print('SKIP: qemu-system-x86_64 not installed (devtools/setup.sh installs it)')
        return SKIP
    try:
        if a.boot == 'bench':
            res = run_bench([int(r) for r in a.rates.split(',')], a.secs, a.devargs)
            print('BENCH: %s' % json.dumps(res, sort_keys=True))
            return 0
        res = run_boot(a.boot)
    except (Failure, h.HarnessError) as e:
        print('FAIL: %s' % e)
        return 1
    print('RESULT: PASS %s' % json.dumps(res, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
