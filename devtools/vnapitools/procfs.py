# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Readers of /proc: per-process and per-thread CPU time, thread names, per-CPU busy time, the
CPU model.

Python 3 standard library only.
"""

import os
import re

CLK_TCK = os.sysconf('SC_CLK_TCK')


def proc_stat_fields(path):
    """Fields of a /proc/.../stat file after the comm, which may hold spaces or parentheses."""
    with open(path) as f:
        s = f.read()
    return s[s.rindex(')') + 2:].split()


def proc_threads(pid):
    """[(tid, comm)] of a live process's threads; [] if it is gone. A thread that ends while
    it is being read is left out."""
    out = []
    try:
        tids = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
                out.append((int(tid), f.read().strip()))
        except (OSError, ValueError):
            pass
    return out


def thread_cpu_ticks(pid, tid):
    """utime+stime of one thread in clock ticks (raises OSError if it is gone)."""
    f = proc_stat_fields('/proc/%d/task/%d/stat' % (pid, tid))
    return int(f[11]) + int(f[12])


def proc_cpu_s(pid):
    """utime+stime of the whole process (all threads), in seconds."""
    f = proc_stat_fields('/proc/%d/stat' % pid)
    return (int(f[11]) + int(f[12])) / CLK_TCK


def cpu_model():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return 'unknown'


def _cpu_times():
    """{cpu: [user, nice, system, idle, iowait, irq, softirq, steal, ...]} in clock ticks, the
    cpuN lines of /proc/stat."""
    out = {}
    with open('/proc/stat') as f:
        for line in f:
            m = re.match(r'cpu(\d+)\s+(.*)', line)
            if m:
                out[int(m.group(1))] = [int(x) for x in m.group(2).split()]
    return out


def system_busy():
    """{cpu: (busy jiffies, total jiffies)} from /proc/stat (idle and iowait are not busy)."""
    out = {}
    for cpu, v in _cpu_times().items():
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        out[cpu] = (sum(v[:8]) - idle, sum(v[:8]))
    return out


def cpu_steal_s():
    """{cpu: host steal time so far, seconds} from /proc/stat."""
    return {cpu: v[7] / CLK_TCK for cpu, v in _cpu_times().items() if len(v) > 7}
