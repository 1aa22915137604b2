# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
"""The python code the tests and the devtools scripts share.

- harness: DPDK processes (dpdk-testpmd, net_vhost peers) with deadlines, ended by PID; a
  test's check(), Failure and env_path();
- peer: app/vnapi-peer's command line and result lines (the one place they are read);
- l3fwd, napi_fwd: the runs and checks of the l3fwd-power and vnapi-fwd tests, which the
  latency benchmarks run too;
- runs: the build environment, quiet runs, median and format of those benchmarks;
- procfs: readers of /proc (CPU time per process and thread, thread names, CPU model);
- perfdoc: the one writer of doc/performance.md, from the stored results (doc/results/);
- icount: instructions per packet hop under callgrind (devtools/icount.py, tests/icount).

The devtools scripts import it as their sibling (devtools/ is their sys.path[0]); the python
tests get devtools/ on PYTHONPATH from meson (tests/meson.build: vnapi_pythonpath). To run a
test script by hand: PYTHONPATH=devtools python3 tests/integration/test_testpmd.py CASE FE.
"""
