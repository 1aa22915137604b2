/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_PROC_H_
#define _PEER_PROC_H_

/**
 * @file
 * Test-peer library: the /proc counters a latency measurement on a shared
 * machine is corrected with. Each reader takes a file descriptor opened once
 * by the caller (read again with pread, so that a reading costs one system
 * call inside a timed loop); a descriptor < 0 or an unreadable file reads 0.
 * No EAL needed.
 */

#include <stdint.h>

/**
 * Run-queue wait of a thread, in ns: the second field of
 * /proc/<pid>/schedstat (time spent runnable but not running).
 */
uint64_t peer_schedstat_wait_ns(int fd);

/**
 * The machine's steal time, in USER_HZ ticks: the eighth value of
 * /proc/stat's "cpu" line (time the hypervisor ran something else while a
 * vCPU had work).
 */
uint64_t peer_steal_ticks(int fd);

#endif /* _PEER_PROC_H_ */
