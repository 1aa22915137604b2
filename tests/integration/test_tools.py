#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""DPDK's multi-process tools on a vnapi port: secondary processes attach to
the primary's net_vnapi0.

Setup: DPDK's net_vhost (in dpdk-testpmd, the vhost-user server) generates
UDP flows (flowgen); vnapi-fwd, the primary, forwards them back through
net_vnapi0 (io). vnapi-fwd serves pdump; Debian's dpdk-testpmd cannot serve
dpdk-dumpcap (its linked mempool drivers register their ops in another
order than dumpcap's), so it is not the primary here. The primary uses
2 MB hugepages (secondaries cannot attach to --no-huge memory).

Cases (argv[1]):
  proc_info   dpdk-proc-info -- --stats --xstats --show-port: exit 0, port 0
              is net_vnapi0 with traffic; -- --xstats (proc-info shows only
              the first of the two): vnapi's per-queue xstats
  dumpcap_list  dpdk-dumpcap -D lists net_vnapi0
  dumpcap     dpdk-dumpcap -i net_vnapi0 -c 200: 200 to 231 packets in the
              pcapng file (it writes whole bursts), each an IPv4/UDP frame of
              flowgen's
  secondary   vnapi_secondary (a secondary of our own): reads work, what
              belongs to the primary fails with -E_RTE_SECONDARY

Tools come from PATH (the DPDK built against); the plugin from VNAPI_PLUGIN;
vnapi-fwd and vnapi_secondary from VNAPI_FWD and VNAPI_SECONDARY.
"""

import os
import re
import shutil
import struct
import subprocess
import sys
import time

from vnapitools import harness as h
from vnapitools import sanitizer

TOOL_TIMEOUT_S = 60
FWD_MB = 256
CAPTURE_COUNT = 200


def run_tool(argv, timeout=TOOL_TIMEOUT_S, env=None):
    print('  $ %s' % ' '.join(argv), flush=True)
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        # subprocess.run killed it (SIGKILL, by its PID): a failure that names it
        out = '\n'.join(x.decode('utf-8', 'replace') if isinstance(x, bytes) else x
                        for x in (e.stdout or '', e.stderr or ''))
        sanitizer.scan(os.path.basename(argv[0]), out)
        raise h.CheckFailed('%s did not end within its deadline of %d s: ended by SIGKILL\n%s'
                            % (os.path.basename(argv[0]), timeout, out[-3000:]))
    sanitizer.scan(os.path.basename(argv[0]), res.stdout + '\n' + res.stderr)
    print('\n'.join('  | ' + ln for ln in (res.stdout + res.stderr).splitlines()[-80:]))
    return res


def pcapng_packets(path):
    """The packet data of every Enhanced Packet Block of a little-endian pcapng file."""
    out = []
    with open(path, 'rb') as f:
        data = f.read()
    pos = 0
    while pos + 12 <= len(data):
        btype, blen = struct.unpack_from('<II', data, pos)
        if blen < 12 or pos + blen > len(data):
            raise h.CheckFailed('pcapng: bad block length %d at %d' % (blen, pos))
        if btype == 6:
            caplen = struct.unpack_from('<I', data, pos + 20)[0]
            out.append(data[pos + 28:pos + 28 + caplen])
        pos += blen
    return out


def primary(s, plugin, fwd_bin):
    """net_vhost flowgen <-> vnapi-fwd io on net_vnapi0; returns (backend, fwd, prefix)."""
    if h.free_hugepages_2m() < FWD_MB // 2 + 16:
        raise h.CheckFailed('%d free 2 MB hugepages, need %d (devtools/setup.sh reserves them)'
                      % (h.free_hugepages_2m(), FWD_MB // 2 + 16))
    backend, sock = h.start_backend(s.workdir, deadline=240.0)
    s.add(backend)
    prefix = h.unique('t')
    # A secondary maps the primary's memory at the primary's addresses. EAL's
    # default hint (4 GiB) falls in ASan's shadow under the sanitized run, so
    # the kernel placed it among the shared libraries, where a secondary's
    # own mappings can already be ("Cannot reserve 17179869184 bytes at
    # [0x7f6fb6200000]", once). 32 TiB is free in both, with ASan or without.
    # The forwarding lcore is lcore 1, never 0: a secondary without lcore options
    # (dpdk-dumpcap of 22.11 and 23.11 has none) runs as lcore 0, and a mempool's
    # per-lcore cache is shared memory indexed by lcore id. pdump allocates the
    # copies from dumpcap's pool on the forwarding lcore while dumpcap frees them
    # on its own: with one lcore id on both, the two use one cache unlocked, an
    # mbuf goes out twice and dumpcap stops at a burst it cannot write (192 of
    # 200 captured, "pcapng file write failed", exit 0).
    argv = [fwd_bin, '--no-pci', '--lcores', '1@1', '--file-prefix', prefix,
            '--base-virtaddr=0x200000000000',
            '--single-file-segments', '-m', str(FWD_MB), '--log-level=lib.eal:notice',
            '-d', plugin, '--vdev', 'net_vnapi0,path=%s' % sock,
            '--', '--config', '(0,0,1)', '--mode', 'poll', '--fwd', 'io', '--duration', '200']
    fwd = s.add(h.DpdkProcess('vnapi-fwd', argv, deadline=220.0, interactive=False,
                              cleanup=[h._rm_runtime(prefix)]).start())
    fwd.wait_for(r'^FORWARDING', 60, what='vnapi-fwd forwarding')
    h.poll_until(backend.link_up, 15.0, what='backend link up')
    backend.start_fwd('flowgen')
    return backend, fwd, prefix


def eal_secondary_args(prefix, plugin):
    return ['--proc-type', 'secondary', '--file-prefix', prefix, '--single-file-segments',
            '--log-level=lib.eal:notice', '-d', plugin]


def case_proc_info(plugin, prefix, fwd_bin):
    time.sleep(1.0)  # traffic time before the snapshot, not a wait for an event
    res = run_tool(['dpdk-proc-info', '--no-pci'] + eal_secondary_args(prefix, plugin)[2:] +
                   ['--', '--stats', '--xstats', '--show-port'])
    out = res.stdout
    h.check(res.returncode == 0, 'dpdk-proc-info exits 0 (got %d)' % res.returncode)
    m = re.search(r'NIC statistics for port 0\s*#+\n(.*?)\n\s*#####', out, re.S)
    h.check(m is not None, 'NIC statistics for port 0 printed')
    # The port totals come first; "Stats reg N" lines (per queue) follow.
    kv = {}
    for k, v in re.findall(r'(\w[\w-]*):\s+(\d+)', m.group(1)):
        kv.setdefault(k, int(v))
    h.check(kv.get('RX-packets', 0) > 0 and kv.get('TX-packets', 0) > 0,
          'port 0 counted traffic (RX-packets %s, TX-packets %s)'
          % (kv.get('RX-packets'), kv.get('TX-packets')))
    # proc-info shows --stats or --xstats, the first given: xstats on their own.
    xres = run_tool(['dpdk-proc-info', '--no-pci'] + eal_secondary_args(prefix, plugin)[2:] +
                    ['--', '--xstats'])
    h.check(xres.returncode == 0, 'dpdk-proc-info -- --xstats exits 0 (got %d)' % xres.returncode)
    for name in ('rx_q0_good_packets', 'tx_q0_good_packets', 'rx_q0_kicks'):
        m = re.search(r'^\s*%s:\s+(\d+)' % name, xres.stdout, re.M)
        h.check(m is not None and (name == 'rx_q0_kicks' or int(m.group(1)) > 0),
              'xstat %s listed%s' % (name, '' if name == 'rx_q0_kicks' else ', > 0'))
    h.check(re.search(r'net_vnapi0', out) is not None and
          re.search(r'driver name.*net_vnapi|Driver.*net_vnapi', out, re.I) is not None,
          '--show-port names net_vnapi0 and its driver net_vnapi')
    h.check('secondary processes are not supported' not in res.stderr,
          'probe did not refuse the secondary')


def case_dumpcap_list(plugin, prefix, fwd_bin):
    # dumpcap builds its own EAL arguments (no -d): the plugin comes in
    # through LD_PRELOAD, its constructor registers the driver.
    env = dict(os.environ, LD_PRELOAD=plugin)
    res = run_tool(['dpdk-dumpcap', '--file-prefix=%s' % prefix, '-D'], env=env)
    h.check(res.returncode == 0, 'dpdk-dumpcap -D exits 0 (got %d)' % res.returncode)
    h.check(re.search(r'^0\. net_vnapi0$', res.stdout, re.M) is not None,
          'dpdk-dumpcap -D lists "0. net_vnapi0"')


def case_dumpcap(plugin, prefix, fwd_bin):
    env = dict(os.environ, LD_PRELOAD=plugin)
    out_dir = os.path.join(h.RUN_DIR, 'dumpcap-%d' % os.getpid())
    os.makedirs(out_dir, mode=0o755, exist_ok=True)
    out = os.path.join(out_dir, 'vnapi.pcapng')
    try:
        res = run_tool(['dpdk-dumpcap', '--file-prefix=%s' % prefix, '-i', 'net_vnapi0',
                        '-c', str(CAPTURE_COUNT), '-w', out, '-q'], env=env)
        h.check(res.returncode == 0, 'dpdk-dumpcap -i net_vnapi0 exits 0 (got %d)'
              % res.returncode)
        pkts = pcapng_packets(out)
        # dumpcap writes whole bursts (up to 32) and stops at the one that
        # reaches the count.
        h.check(CAPTURE_COUNT <= len(pkts) < CAPTURE_COUNT + 32,
              '%d packets in the capture (-c %d: at least that, less than one burst more)'
              % (len(pkts), CAPTURE_COUNT))
        udp = [p for p in pkts if len(p) >= 34 and p[12:14] == b'\x08\x00' and p[23] == 17]
        h.check(len(udp) == len(pkts), 'every captured frame is IPv4/UDP (%d of %d)'
              % (len(udp), len(pkts)))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def case_secondary(plugin, prefix, fwd_bin):
    sec = os.environ.get('VNAPI_SECONDARY')
    if not sec:
        raise h.CheckFailed('VNAPI_SECONDARY is not set')
    res = run_tool([sec] + eal_secondary_args(prefix, plugin) + ['--no-pci'])
    h.check(res.returncode == 0, 'vnapi_secondary: every check passed (exit %d)' % res.returncode)
    h.check('only the primary process may do this' in res.stderr,
          'the refusals name the reason in the log')
    # ethdev's own dummies (a port not started in this process) return 0 too: the bursts
    # must have reached net_vnapi's secondary datapath, not those.
    h.check('for not ready port' not in res.stdout + res.stderr,
          "the bursts reached the driver, not ethdev's not-ready dummies")


CASES = {
    'proc_info': case_proc_info,
    'dumpcap_list': case_dumpcap_list,
    'dumpcap': case_dumpcap,
    'secondary': case_secondary,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print('usage: %s %s' % (sys.argv[0], '|'.join(CASES)), file=sys.stderr)
        return 2
    case = sys.argv[1]
    plugin = h.prepare_plugin()
    fwd_bin = os.environ.get('VNAPI_FWD')
    if not fwd_bin:
        print('VNAPI_FWD is not set', file=sys.stderr)
        return 2
    print('=== %s' % case, flush=True)
    try:
        with h.Session('tools') as s:
            backend, fwd, prefix = primary(s, plugin, fwd_bin)
            CASES[case](plugin, prefix, fwd_bin)
            h.check(fwd.alive(), 'the primary still runs')
    except h.HarnessError as e:
        print('=== FAIL %s: %s' % (case, e), flush=True)
        return 1
    print('=== PASS %s' % case, flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
