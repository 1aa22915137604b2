# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The traffic engine's python side: where app/vnapi-peer is, its command line, and the one
place its result lines are read.

vnapi-peer (app/vnapi-peer/main.c says what it does) runs a list of phases (idle, sparse,
closed, open, rr, echo) against a forwarder and prints, per phase,
    PHASE i KIND result key=value ...
and at the end the summary of every phase,
    RESULT: PASS|FAIL code=C key=value ...
with the same counts: sent, back (within the loss timeout), lost (sent and not back in time),
late (back after it: lost all the same), dup, ooo, corrupt, stray, refused, rx; per phase also
the round trips (p50_us, p99_us, ...), pps, tps (rr), cpu_s (the engine's own utime+stime) and
kicks (net_vhost's notifications to the front end); RESULT also foreign, warmup=BACK/SENT and
qN_sent / qN_back per queue (warm-up frames included).
"""

import os
import re

from . import harness as h

RESULT_RE = r'^RESULT: (PASS|FAIL) (.*)'
PHASE_RE = r'^PHASE (\d+) (\w+) result (.*)'
# Every count that must be 0 for a run to be exact (lost includes late).
EXACT_ZERO = ('lost', 'late', 'dup', 'ooo', 'corrupt', 'stray')


def binary():
    """The vnapi-peer program: $VNAPI_PEER (meson sets it), else the build's."""
    return h.env_path('VNAPI_PEER')


def build_binary(build):
    return os.path.join(build, 'app', 'vnapi-peer', 'vnapi-peer')


def phase(kind, **keys):
    """One --phase argument: phase('sparse', count=300, gap=(200, 3000)) ->
    'sparse:count=300,gap=200-3000'; a True value is a bare key (step)."""
    parts = []
    for k, v in keys.items():
        if v is None or v is False:
            continue
        if v is True:
            parts.append(k)
        elif isinstance(v, (tuple, list)):
            parts.append('%s=%d-%d' % (k, v[0], v[1]))
        else:
            parts.append('%s=%s' % (k, ('%g' % v) if isinstance(v, float) else v))
    return kind + (':' + ','.join(parts) if parts else '')


def eal_args(prefix, cpu, mem=512):
    """EAL options of a net_vhost peer: no hugepages, one lcore pinned to @cpu."""
    return ['--no-huge', '-m', str(mem), '--no-pci', '--lcores', '0@%d' % cpu,
            '--file-prefix', prefix, '--log-level=lib.eal:notice']


def argv(binary_path, phases, ifaces=None, eal=None, unix=None, packet=None, **opts):
    """A vnapi-peer command line. Transport: @ifaces (vhost-user sockets, with @eal, the EAL
    options), @unix=(local, remote) or @packet=IFNAME. @phases: phase() strings. @opts:
    option=value (underscores become dashes; True: a flag, None/False: left out)."""
    a = [binary_path]
    if ifaces:
        a += list(eal or []) + ['--']
        for s in ifaces:
            a += ['--iface', s]
    elif unix:
        a += ['--unix-local', unix[0], '--unix-remote', unix[1]]
    else:
        a += ['--packet', packet]
    for p in phases:
        a += ['--phase', p]
    for k, v in opts.items():
        if v is None or v is False:
            continue
        a.append('--' + k.replace('_', '-'))
        if v is not True:
            a.append(str(v))
    return a


def parse(line):
    """A RESULT or PHASE result line as a dict: RESULT lines get 'verdict' (PASS or FAIL),
    phase lines 'index' and 'kind'; warmup=B/S becomes warmup_back, warmup_sent."""
    m = re.search(RESULT_RE, line)
    if m:
        r = {'verdict': m.group(1)}
        r.update(h.parse_kv(m.group(2)))
    else:
        m = re.search(PHASE_RE, line)
        if not m:
            raise h.HarnessError('not a vnapi-peer result line: %r' % line)
        r = {'index': int(m.group(1)), 'kind': m.group(2)}
        r.update(h.parse_kv(m.group(3)))
    w = r.get('warmup')
    if isinstance(w, str) and '/' in w:
        b, s = w.split('/', 1)
        r['warmup_back'], r['warmup_sent'] = int(b), int(s)
    return r


def result(proc, timeout, since=0):
    """Wait for the RESULT line of the vnapi-peer process @proc (harness.DpdkProcess)."""
    m = proc.wait_for(RESULT_RE, timeout, since=since, what='vnapi-peer RESULT line')
    return parse(m.string)


def phase_result(proc, index, timeout, since=0):
    """Wait for phase @index's result line."""
    m = proc.wait_for(r'^PHASE %d \w+ result ' % index, timeout, since=since,
                      what='vnapi-peer phase %d result' % index)
    return parse(m.string)


def phases(proc):
    """Every phase result line printed so far, in order."""
    return [parse(ln.text) for ln, _ in proc.find_all(PHASE_RE)]


def exact(res):
    """What is not exact in a result (RESULT or phase): [] when nothing was lost, late,
    duplicated, out of order, corrupted or stray, and (RESULT) nothing foreign came."""
    keys = EXACT_ZERO + (('foreign',) if 'verdict' in res else ())
    return ['%s=%s' % (k, res.get(k)) for k in keys if res.get(k) != 0]


def send_line(proc, text):
    """A line to vnapi-peer's stdin (an interactive harness.DpdkProcess): 'go', 'end'."""
    try:
        proc.proc.stdin.write((text + '\n').encode())
        proc.proc.stdin.flush()
    except (BrokenPipeError, OSError, ValueError) as e:
        raise h.ProcessDied('%s: cannot send %r: %s\n%s' % (proc.name, text, e, proc.tail()))


def end(proc, res, timeout=10.0):
    """The end of a vnapi-peer run (harness.DpdkProcess @proc) that printed its RESULT @res:
    it must end by itself within @timeout, with the RESULT's code as its exit status. None if
    it did, else why not, naming it (it is stopped either way)."""
    proc.expect_exit(res.get('code'))
    proc.wait_exit(timeout)
    proc.stop()
    why = proc.exit_problem()
    if why is None and proc.ended_by != 'itself':
        why = '%s: still running %.0f s after its RESULT line; it %s' % (
            proc.describe(), timeout, proc.how_ended())
    return why
