/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_WATCH_H_
#define _PEER_WATCH_H_

/**
 * @file
 * Peer library: what a shared machine adds to a round trip. A round trip
 * includes time the two processes were runnable but not running (another
 * program held the CPU: /proc/PID/schedstat, per thread) and time the host
 * took the vCPU (steal, which no schedstat shows; /proc/stat only in 10 ms
 * ticks). The watch reads the run-queue wait of the front end's main thread
 * (its lcore) and of this process around each round trip, and runs a stall
 * probe (peer_stall.h) on the front end's CPU and one on ours. A front end
 * that sleeps through a wakeup it should have had leaves its CPU idle: no
 * stall explains that delay. These are figures for the benchmarks, never a
 * reason to leave a packet out of a verdict.
 */

#include <stdbool.h>
#include <stdint.h>

#include "peer_stall.h"

struct peer_watch {
	int fe_sched_fd;    /**< the front end's /proc/PID/schedstat, or -1 */
	int self_sched_fd;
	int stat_fd;        /**< /proc/stat (steal), with the front end watched */
	long fe_pid;
	struct peer_stall_probe probe;      /**< on the front end's CPU */
	struct peer_stall_probe self_probe; /**< on ours: steal inside a burst call */
};

/** A watch that watches nothing (every reader returns 0). */
void peer_watch_init(struct peer_watch *w);

/**
 * Find the front end, the one other process whose command line holds
 * @p needle (its --vdev ...,path=SOCK), open its schedstat, and with
 * @p probes start the stall probes. Prints what it watches ("# " lines).
 */
void peer_watch_start(struct peer_watch *w, const char *needle, bool probes);

/** Run-queue wait so far (ns) of the front end and of this process. */
uint64_t peer_watch_fe_wait(const struct peer_watch *w);
uint64_t peer_watch_self_wait(const struct peer_watch *w);

/** The machine's steal time so far (USER_HZ ticks; 0 unwatched). */
uint64_t peer_watch_steal(const struct peer_watch *w);

/** Stop the probes (their stalls stay readable). */
void peer_watch_stop(struct peer_watch *w);

/**
 * The part of a round trip of @p lat ns sent at @p t_send that the
 * machine, not the front end, took: for each side the larger of its
 * run-queue wait (@p fe_ns the front end's, @p sched_ns - @p fe_ns ours or
 * our busy wait's gaps) and its CPU's stalls; at most @p lat. Probes
 * stopped first. *@p fe_stall, *@p self_stall: the probes' stalls in it.
 */
uint64_t peer_watch_wait(const struct peer_watch *w, uint64_t t_send, uint64_t lat,
			 uint64_t sched_ns, uint64_t fe_ns, uint64_t *fe_stall,
			 uint64_t *self_stall);

/** Close the files and release the probes. */
void peer_watch_free(struct peer_watch *w);

#endif /* _PEER_WATCH_H_ */
