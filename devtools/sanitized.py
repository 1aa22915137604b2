#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""Run one test command with every process of its tree under ASan+UBSan.

Usage: devtools/sanitized.py COMMAND [ARGS...]
(devtools/test.sh passes it to 'meson test --wrapper' for the sanitized
integration tests of build-asan/.)

Our own programs of that build (vhost_pair, vnapi-peer, vnapi-fwd,
vnapi_secondary) are compiled with the sanitizers; the DPDK programs that
load the sanitized PMD with -d (dpdk-testpmd, l3fwd-power) are not, so the
runtimes are preloaded into the whole tree (the test script's interpreter
included): LD_PRELOAD=libasan.so:libubsan.so of the compiler that built it
($CC, else cc). ASan writes every report to a file of a directory of this
run (log_path), whatever process wrote it and however the test started it.
GCC's UBSan writes to the process's stderr whatever its log_path says; the
test scripts pass their children's output to vnapitools.sanitizer.scan(),
which copies report lines into the same directory (VNAPI_SANITIZER_DIR),
and a program the test runs itself (vhost_pair) exits 1 at the first
report. When the command has ended, any report file fails the test (exit 1)
and is printed, whatever the command's own exit status was.

Options (the caller's ASAN_OPTIONS / UBSAN_OPTIONS come after these, so they
win): ASan halt_on_error=1 and abort_on_error=1 (the first report ends the
process), detect_leaks=0 (processes are ended by signals with DPDK's memory
in use; the unit suite runs LeakSanitizer). UBSan: halt_on_error=1 (the
first report ends the process with exit status 1), print_stacktrace=1.

ASan sees the libc heap, the stack and globals of every process, and every
access our instrumented code makes; it does not see overflows inside DPDK's
own heap (rte_malloc, mempools, mbufs: the system's DPDK is not built with
ASan, so nothing poisons its redzones). doc/contributing.md, "Sanitizers".
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

ASAN_OPTIONS = ('halt_on_error=1:abort_on_error=1:detect_leaks=0:'
                'print_summary=1')
UBSAN_OPTIONS = 'halt_on_error=1:print_stacktrace=1'
# Where the per-run report directories go (tmpfs, removed after each run).
RUN_DIR = '/run/vnapi-test'


def runtime(cc, name):
    """The full path of the compiler's shared runtime 'name' (libasan.so...)."""
    out = subprocess.run(cc + ['-print-file-name=' + name], capture_output=True, text=True,
                         timeout=30, check=True).stdout.strip()
    if not os.path.isabs(out) or not os.path.exists(out):
        raise SystemExit('sanitized.py: %s has no %s (got %r)' % (' '.join(cc), name, out))
    return os.path.realpath(out)


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cc = os.environ.get('CC', 'cc').split()
    libs = [runtime(cc, 'libasan.so'), runtime(cc, 'libubsan.so')]
    os.makedirs(RUN_DIR, exist_ok=True)
    logdir = tempfile.mkdtemp(prefix='sanitizer.', dir=RUN_DIR)
    env = dict(os.environ)
    env['LD_PRELOAD'] = ':'.join(libs + ([env['LD_PRELOAD']] if env.get('LD_PRELOAD') else []))
    env['ASAN_OPTIONS'] = ':'.join(
        [ASAN_OPTIONS, 'log_path=' + os.path.join(logdir, 'asan')] +
        ([env['ASAN_OPTIONS']] if env.get('ASAN_OPTIONS') else []))
    env['UBSAN_OPTIONS'] = ':'.join(
        [UBSAN_OPTIONS] + ([env['UBSAN_OPTIONS']] if env.get('UBSAN_OPTIONS') else []))
    env['VNAPI_SANITIZER_DIR'] = logdir
    print('sanitized.py: LD_PRELOAD=%s, reports to %s/' % (env['LD_PRELOAD'], logdir), flush=True)
    try:
        child = subprocess.Popen(argv, env=env)

        # meson's timeout (SIGTERM) or ^C: passed on to the test, which ends its processes.
        def forward(signum, frame):
            try:
                child.send_signal(signum)
            except ProcessLookupError:
                pass

        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, forward)
        rc = child.wait()
        reports = sorted(f for f in os.listdir(logdir)
                         if os.path.getsize(os.path.join(logdir, f)) > 0)
        for f in reports:
            with open(os.path.join(logdir, f), errors='replace') as fh:
                print('==== sanitizer report %s ====\n%s' % (f, fh.read()), flush=True)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    if reports:
        print('sanitized.py: FAIL: %d sanitizer report(s) (test exit status %d)'
              % (len(reports), rc), flush=True)
        return 1
    return rc if rc >= 0 else 128 - rc


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
