/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_STALL_H_
#define _PEER_STALL_H_

/**
 * @file
 * Test-peer library: a CPU stall probe. A thread pinned to one CPU sleeps
 * for a short period again and again (absolute CLOCK_MONOTONIC deadlines,
 * 1 ns timer slack). A wake-up later than a threshold, less the time the
 * probe then waited in the run queue behind other threads (its schedstat),
 * is a stall: an interval from the deadline during which that CPU was not
 * there, mostly because the hypervisor ran something else (steal, which
 * /proc/stat shows only in 10 ms ticks), or it ran with interrupts off.
 *
 * A latency test pins the probe to the CPU of the process under test. A
 * process that sleeps through a wakeup it should have had (a lost
 * interrupt) leaves that CPU idle: the probe keeps waking on time, and the
 * delay is not explained away.
 *
 * The probe thread appends; the owner reads only after peer_stall_stop().
 * No EAL needed.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/** One stall: the probe was due at @p from and ran at @p to (ns, CLOCK_MONOTONIC). */
struct peer_stall {
	uint64_t from;
	uint64_t to;
};

struct peer_stall_probe {
	pthread_t thread;
	bool running;
	volatile int stop;
	int cpu;
	uint64_t period_ns;
	uint64_t threshold_ns;
	uint32_t cap;
	uint32_t n;         /**< stalls recorded, in time order */
	uint64_t dropped;   /**< stalls past @p cap */
	uint64_t wakeups;
	struct peer_stall *stalls;
};

/**
 * Start a probe on @p cpu waking every @p period_us; a wake-up more than
 * @p threshold_us late is a stall. Up to @p cap stalls are kept.
 * @return 0, or a negative errno (the probe is then not running).
 */
int peer_stall_start(struct peer_stall_probe *p, int cpu, uint32_t period_us,
		     uint32_t threshold_us, uint32_t cap);

/** Stop and join the probe (no-op when not running); the stalls stay readable. */
void peer_stall_stop(struct peer_stall_probe *p);

/** Release the stalls. */
void peer_stall_free(struct peer_stall_probe *p);

/**
 * Total stall time inside [@p t0, @p t1] (ns). Only after peer_stall_stop().
 */
uint64_t peer_stall_overlap_ns(const struct peer_stall_probe *p, uint64_t t0, uint64_t t1);

/** Total stall time recorded (ns). */
uint64_t peer_stall_total_ns(const struct peer_stall_probe *p);

#endif /* _PEER_STALL_H_ */
