/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Stop drains tx (vhost_pair --scenario drain | drain_stall).
 *
 * drain: the front end transmits at full rate into net_vhost, whose rx
 * burst (the back end consuming the front end's tx ring) runs on a thread
 * of its own pinned to CPU 1, at a measured pace (drain_be_loop()), and
 * counts what it dequeues; the main lcore
 * (CPU 0) stops the front end port right after its last accepted burst,
 * with the ring as full as the race of the two left it. Then the back end
 * must have received exactly what the front end's tx bursts accepted,
 * in order, tx_q0_dropped_at_stop must be 0 and the front end's tx mempool
 * empty of in-use mbufs; start again, --cycles times in one process.
 *
 * drain_stall: the back end stops consuming (nobody polls net_vhost):
 * the front end fills its tx ring, the back end takes exactly
 * DRAIN_STALL_TAKE packets, then the stop must return after the bound
 * (--drain-ms, the front end's tx_drain_ms) and not much later,
 * tx_q0_dropped_at_stop must be exactly what was left in the ring, and no
 * mbuf may stay in use. Then the ring is filled again and the back end
 * removed: once the front end's link is down, a stop must not wait. With
 * a bound of 2 s or more, a new back end comes, the ring is filled again
 * and the back end is removed 30 ms into the stop: the drain must notice
 * the hang-up and return well before the bound (the socket of a net_vhost
 * in this process is released only when the vhost library's poll() on it
 * returns, up to 1 s after the removal).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_SET, pthread_attr_setaffinity_np */
#endif

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "peer_frame.h"
#include "peer_port.h"
#include "peer_tap.h"
#include "peer_util.h"
#include "pair.h"

#define DRAIN_FRAME_LEN     64
#define DRAIN_BE_CPU        1
#define DRAIN_BE_BURST      4     /* the back end takes this many ... */
#define DRAIN_BE_PAUSE_US   150   /* ... then pauses this long */
#define DRAIN_TRAFFIC_MIN_MS 20   /* traffic per cycle: 20..119 ms, varied */
#define DRAIN_TRAFFIC_SPAN_MS 100
#define DRAIN_STALL_TAKE    100   /* packets the stalled back end takes first */
/*
 * Times are not verdicts on this shared VM: the bounds below only tell
 * "waited for the bound" from "did not wait" and "returned" from "hung",
 * with margins far above scheduling noise. The driver's deadline runs on
 * DPDK's timer (TSC, its frequency calibrated at start-up), the test's on
 * CLOCK_MONOTONIC: a stop may look DRAIN_CLOCK_PCT % shorter than the bound.
 */
#define DRAIN_CLOCK_PCT     2
#define DRAIN_SLACK_MS      1000  /* a stop returns within the bound plus this */
#define DRAIN_GONE_MAX_MS   50    /* a stop with the back end away: no wait */
#define DRAIN_DIES_AFTER_MS 30    /* the back end removed this far into a stop ... */
#define DRAIN_DIES_MIN_BOUND_MS 2000 /* ... when tx_drain_ms is at least this */
/* lib/vhost's fdset thread polls with a 1 s timeout; a removed net_vhost's
 * connection is released (the front end sees the hang-up) when it returns. */
#define DRAIN_VHOST_POLL_MS 1000

/* The back end's consumer thread. */
struct drain_be {
	pthread_t tid;
	volatile bool stop;
	uint32_t next_seq;  /* the seq the next packet must carry */
	uint64_t received;
	uint64_t bad;       /* packets out of order or not ours */
	uint32_t bad_seq;   /* the first bad packet's seq, expected next_seq */
	uint32_t bad_want;
};

/* A received frame: ours, front end to back end, queue 0, carrying @p seq. */
static bool
drain_frame_ok(const struct rte_mbuf *m, uint32_t want, uint32_t *seq)
{
	struct pair_payload pl;

	*seq = UINT32_MAX;
	if (rte_pktmbuf_data_len(m) < PAIR_PL_OFF + sizeof(pl))
		return false;
	memcpy(&pl, rte_pktmbuf_mtod_offset(m, const uint8_t *, PAIR_PL_OFF), sizeof(pl));
	*seq = pl.seq;
	return pl.magic == PAIR_MAGIC && pl.dir == PAIR_FE_TO_BE && pl.queue == 0 &&
	       pl.seq == want && pl.len == DRAIN_FRAME_LEN;
}

/* Take what the back end has now: at most @p max packets; how many. */
static uint16_t
drain_be_take(struct drain_be *be, uint16_t max)
{
	struct rte_mbuf *pkts[PAIR_BURST];
	uint32_t seq = 0;
	uint16_t n, i;

	n = rte_eth_rx_burst(pair.be_port, 0, pkts, RTE_MIN(max, (uint16_t)PAIR_BURST));
	for (i = 0; i < n; i++) {
		if (!drain_frame_ok(pkts[i], be->next_seq, &seq) && be->bad++ == 0) {
			be->bad_seq = seq;
			be->bad_want = be->next_seq;
		}
		be->next_seq++;
	}
	be->received += n;
	rte_pktmbuf_free_bulk(pkts, n);
	return n;
}

/*
 * The back end's consumer: DRAIN_BE_BURST packets, then a busy pause of
 * DRAIN_BE_PAUSE_US (it keeps its CPU: no oversleeping). A full ring takes
 * it about 256 / 4 * 150 us = 10 ms, well within the 100 ms bound but
 * longer than the stop's own messages usually take to reach net_vhost
 * (they stop its dequeue): without the drain the front end's ring is
 * taken back with packets in it (with 8 per 20 us, 1 cycle in 50 lost
 * packets on a quiet machine).
 */
static void *
drain_be_loop(void *arg)
{
	struct drain_be *be = arg;

	while (!__atomic_load_n(&be->stop, __ATOMIC_ACQUIRE)) {
		drain_be_take(be, DRAIN_BE_BURST);
		rte_delay_us_block(DRAIN_BE_PAUSE_US);
	}
	return NULL;
}

/* The consumer thread, on CPU 1 (the main lcore is on CPU 0). */
static int
drain_be_start(struct drain_be *be)
{
	pthread_attr_t attr;
	cpu_set_t cpus;
	int ret;

	be->stop = false;
	CPU_ZERO(&cpus);
	CPU_SET(DRAIN_BE_CPU, &cpus);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	ret = pthread_create(&be->tid, &attr, drain_be_loop, be);
	pthread_attr_destroy(&attr);
	if (ret != 0)
		return peer_fail("back end thread: %s", strerror(ret));
	return 0;
}

static void
drain_be_join(struct drain_be *be)
{
	__atomic_store_n(&be->stop, true, __ATOMIC_RELEASE);
	pthread_join(be->tid, NULL);
}

/*
 * One tx burst of up to PAIR_BURST frames carrying seq *seq on; what was
 * not accepted is freed (and its seqs given to the next burst).
 * @return how many the front end accepted, or -1 (no mbufs).
 */
static int
drain_tx_burst(uint32_t *seq)
{
	struct rte_mbuf *pkts[PAIR_BURST];
	uint16_t i, n;

	if (rte_pktmbuf_alloc_bulk(pair.pools.mp[POOL_FE_TX], pkts, PAIR_BURST) != 0)
		return -1;
	for (i = 0; i < PAIR_BURST; i++) {
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(pkts[i], DRAIN_FRAME_LEN);

		pair_frame_fill(p, DRAIN_FRAME_LEN, *seq + i, 0, PAIR_FE_TO_BE);
	}
	n = rte_eth_tx_burst(pair.fe_port, 0, pkts, PAIR_BURST);
	if (n < PAIR_BURST)
		rte_pktmbuf_free_bulk(&pkts[n], PAIR_BURST - n);
	*seq += n;
	return n;
}

static uint64_t
drain_xstat(uint16_t port, const char *name)
{
	uint64_t v = peer_xstat(port, name);

	if (v == UINT64_MAX)
		peer_fail("port %u has no xstat %s", port, name);
	return v;
}

/* Stop the front end; the milliseconds it took, or -1. */
static double
drain_stop_timed(void)
{
	uint64_t t0 = peer_now_ns();
	int ret = rte_eth_dev_stop(pair.fe_port);

	if (ret != 0)
		return peer_fail("front end stop: %d", ret);
	return (double)(peer_now_ns() - t0) / 1e6;
}

static int
drain_start(void)
{
	int ret = rte_eth_dev_start(pair.fe_port);

	if (ret != 0)
		return peer_fail("front end start: %d", ret);
	return pair_wait_link(pair.fe_port, "front end", true, 10.0);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define DRAIN_MAX_CYCLES 1000

int
pair_scenario_drain(void)
{
	static double stop_ms[DRAIN_MAX_CYCLES];
	struct rte_mempool *tx_pool = pair.pools.mp[POOL_FE_TX];
	unsigned int c, cycles = RTE_MIN(pair_opts.cycles, (uint32_t)DRAIN_MAX_CYCLES);
	uint64_t total = 0, in_flight_max = 0, dropped, dropped_prev = 0, fe_tx, be_rx;
	struct drain_be be;
	uint32_t seq = 0, lost_cycles = 0;
	double t_start = peer_now_s();

	memset(&be, 0, sizeof(be));
	if (pair_be_create(1, 0) != 0 || pair_fe_start() != 0)
		return -1;
	rte_eth_stats_reset(pair.fe_port);
	rte_eth_stats_reset(pair.be_port);
	for (c = 1; c <= cycles; c++) {
		double until = peer_now_s() + (DRAIN_TRAFFIC_MIN_MS +
			       (c * 37) % DRAIN_TRAFFIC_SPAN_MS) / 1e3;
		uint64_t sent = 0, rcvd0 = be.received, in_flight;
		int n;

		if (drain_be_start(&be) != 0)
			return -1;
		while (peer_now_s() < until) {
			n = drain_tx_burst(&seq);
			if (n < 0) {
				drain_be_join(&be);
				return peer_fail("cycle %u: the tx pool ran dry (%u in use)", c,
						 rte_mempool_in_use_count(tx_pool));
			}
			sent += (uint64_t)n;
		}
		/* What the back end had not taken yet when the stop began (a
		 * glimpse: its thread runs on). */
		in_flight = sent - (be.received - rcvd0);
		in_flight_max = RTE_MAX(in_flight_max, in_flight);
		stop_ms[c - 1] = drain_stop_timed();
		drain_be_join(&be);
		if (stop_ms[c - 1] < 0)
			return -1;
		total += sent;
		dropped = drain_xstat(pair.fe_port, "tx_q0_dropped_at_stop");
		if (be.received != total || be.bad != 0 || dropped != dropped_prev ||
		    rte_mempool_in_use_count(tx_pool) != 0) {
			lost_cycles++;
			peer_tap(false, "cycle %u: front end accepted %" PRIu64 " (total %" PRIu64 "), back end received %" PRIu64 " in total (%" PRIu64 " missing), %" PRIu64 " out of order, tx_q0_dropped_at_stop +%" PRIu64 ", tx mbufs in use %u, ~%" PRIu64 " in flight at stop, stop took %.3f ms",
				 c, sent, total, be.received, total - be.received, be.bad,
				 dropped - dropped_prev, rte_mempool_in_use_count(tx_pool),
				 in_flight, stop_ms[c - 1]);
			if (be.bad != 0)
				printf("# first packet out of order: seq %u, expected %u\n",
				       be.bad_seq, be.bad_want);
			/* Count on from what arrived: each cycle judged alone. */
			total = be.received;
			be.next_seq = seq;
			be.bad = 0;
		}
		dropped_prev = dropped;
		if (peer_failed() && lost_cycles == 0)
			return -1;
		if (drain_start() != 0)
			return -1;
	}
	fe_tx = drain_xstat(pair.fe_port, "tx_q0_good_packets");
	be_rx = drain_xstat(pair.be_port, "rx_q0_packets");
	qsort(stop_ms, cycles, sizeof(stop_ms[0]), cmp_double);
	printf("# %u cycles in %.1f s: %" PRIu64 " packets, up to ~%" PRIu64 " in flight at a stop; stop took median %.3f ms, max %.3f ms\n",
	       cycles, peer_now_s() - t_start, total, in_flight_max, stop_ms[cycles / 2],
	       stop_ms[cycles - 1]);
	peer_tap(lost_cycles == 0, "%u start/stop cycles at full rate: the back end received exactly what the front end accepted, in order, every cycle (%u cycles lost packets)",
		 cycles, lost_cycles);
	peer_tap(fe_tx == seq && be_rx == be.received && dropped_prev == 0,
		 "counters: front end tx_q0_good_packets %" PRIu64 " (accepted %u), back end rx_q0_packets %" PRIu64 " (received %" PRIu64 "), tx_q0_dropped_at_stop %" PRIu64 " (want 0)",
		 fe_tx, seq, be_rx, be.received, dropped_prev);
	return !peer_failed() ? 0 : -1;
}

/* Fill the front end's tx ring (nobody consumes it): how many it took. */
static int
drain_fill(uint32_t *seq, uint64_t *sent)
{
	double deadline = peer_now_s() + 5.0;
	unsigned int zero = 0;
	int n;

	*sent = 0;
	while (zero < 2) {
		if (peer_now_s() > deadline)
			return peer_fail("the tx ring never filled: %" PRIu64 " accepted", *sent);
		n = drain_tx_burst(seq);
		if (n < 0)
			return peer_fail("the tx pool ran dry filling the ring");
		*sent += (uint64_t)n;
		zero = n == 0 ? zero + 1 : 0;
	}
	return 0;
}

static void *
drain_remove_be_later(void *arg)
{
	int *ret = arg;

	uint64_t t0;

	rte_delay_us_sleep(DRAIN_DIES_AFTER_MS * 1000);
	t0 = peer_now_ns();
	*ret = peer_port_remove(PAIR_BE_NAME, &pair.be_port, &pair.be_probed);
	printf("# the back end's removal took %.3f ms\n", (double)(peer_now_ns() - t0) / 1e6);
	return NULL;
}

/*
 * 3. A new back end (the front end reconnects by itself), a full ring it
 * never consumes, and the back end removed DRAIN_DIES_AFTER_MS into the
 * stop: the drain sees the connection hang up and stops waiting, well
 * before the bound; every packet of the ring is dropped at the stop.
 */
static int
drain_dies_during_stop(void)
{
	struct rte_mempool *tx_pool = pair.pools.mp[POOL_FE_TX];
	uint64_t sent, dropped0, dropped;
	pthread_t tid;
	uint32_t seq = 0;
	int rm_ret = -1;
	double took;

	/* The front end, stopped, reconnects by itself (backoff up to 500 ms);
	 * its link comes up once it is started and connected. */
	if (pair_be_create(1, 0) != 0)
		return -1;
	if (rte_eth_dev_start(pair.fe_port) != 0)
		return peer_fail("front end start");
	if (pair_wait_link(pair.fe_port, "front end", true, 10.0) != 0 ||
	    drain_fill(&seq, &sent) != 0)
		return -1;
	dropped0 = drain_xstat(pair.fe_port, "tx_q0_dropped_at_stop");
	if (pthread_create(&tid, NULL, drain_remove_be_later, &rm_ret) != 0)
		return peer_fail("remover thread");
	took = drain_stop_timed();
	pthread_join(tid, NULL);
	if (took < 0)
		return -1;
	if (rm_ret != 0)
		return peer_fail("remove the back end during the stop: %d", rm_ret);
	dropped = drain_xstat(pair.fe_port, "tx_q0_dropped_at_stop");
	printf("# stop while the back end was removed %u ms into it took %.3f ms (tx_drain_ms=%u)\n",
	       DRAIN_DIES_AFTER_MS, took, pair_opts.drain_ms);
	peer_tap(took >= DRAIN_DIES_AFTER_MS && took < 0.9 * pair_opts.drain_ms,
		 "the back end went away during the drain: stop returned after %.3f ms, %u ms after the removal at most %u ms later (net_vhost's poll), well before the bound (%u ms)",
		 took, DRAIN_DIES_AFTER_MS, DRAIN_VHOST_POLL_MS, pair_opts.drain_ms);
	peer_tap(dropped - dropped0 == sent && rte_mempool_in_use_count(tx_pool) == 0,
		 "tx_q0_dropped_at_stop +%" PRIu64 " == the %" PRIu64 " packets of the ring; tx mbufs in use %u",
		 dropped - dropped0, sent, rte_mempool_in_use_count(tx_pool));
	return peer_failed() ? -1 : 0;
}

int
pair_scenario_drain_stall(void)
{
	struct rte_mempool *tx_pool = pair.pools.mp[POOL_FE_TX];
	const double bound = pair_opts.drain_ms;
	uint64_t sent, dropped, dropped0, reclaimed0, reclaimed, fe_tx;
	unsigned int ref0[PEER_POOLS_MAX];
	struct drain_be be;
	uint32_t seq = 0;
	double deadline, took;

	memset(&be, 0, sizeof(be));
	if (pair_opts.drain_ms == UINT32_MAX)
		return peer_fail("drain_stall needs --drain-ms (the front end's tx_drain_ms)");
	if (pair_be_create(1, 0) != 0)
		return -1;
	peer_pools_in_use(&pair.pools, ref0);
	if (pair_fe_start() != 0)
		return -1;
	rte_eth_stats_reset(pair.fe_port);

	/* 1. The back end takes DRAIN_STALL_TAKE packets, then nothing. */
	if (drain_fill(&seq, &sent) != 0)
		return -1;
	deadline = peer_now_s() + 5.0;
	while (be.received < DRAIN_STALL_TAKE && peer_now_s() < deadline)
		drain_be_take(&be, (uint16_t)(DRAIN_STALL_TAKE - be.received));
	peer_tap(be.received == DRAIN_STALL_TAKE && be.bad == 0,
		 "the front end's ring took %" PRIu64 " packets; the back end took %" PRIu64 " of them, in order, then stopped consuming",
		 sent, be.received);
	took = drain_stop_timed();
	if (took < 0)
		return -1;
	dropped = drain_xstat(pair.fe_port, "tx_q0_dropped_at_stop");
	fe_tx = drain_xstat(pair.fe_port, "tx_q0_good_packets");
	printf("# stop with a stalled back end took %.3f ms (tx_drain_ms=%u)\n", took,
	       pair_opts.drain_ms);
	peer_tap(took >= bound * (100 - DRAIN_CLOCK_PCT) / 100 && took < bound + DRAIN_SLACK_MS,
		 "stop returned after %.3f ms: it waited for the bound (%u ms, less %u %% for the two clocks) and returned within %u ms of it",
		 took, pair_opts.drain_ms, DRAIN_CLOCK_PCT, DRAIN_SLACK_MS);
	peer_tap(dropped == sent - be.received && fe_tx == sent,
		 "tx_q0_dropped_at_stop %" PRIu64 " == accepted %" PRIu64 " - received %" PRIu64 " (tx_q0_good_packets %" PRIu64 ")",
		 dropped, sent, be.received, fe_tx);
	peer_tap(rte_mempool_in_use_count(tx_pool) == 0,
		 "front end tx mbufs in use after the stop: %u (want 0)",
		 rte_mempool_in_use_count(tx_pool));
	if (peer_failed())
		return -1;

	/* 2. The back end goes away with a full ring: that stop must not wait. */
	if (drain_start() != 0 || drain_fill(&seq, &sent) != 0)
		return -1;
	dropped0 = dropped;
	reclaimed0 = drain_xstat(pair.fe_port, "tx_q0_reclaimed");
	if (peer_port_remove(PAIR_BE_NAME, &pair.be_port, &pair.be_probed) != 0)
		return peer_fail("remove the back end");
	if (pair_wait_link(pair.fe_port, "front end", false, 10.0) != 0)
		return -1;
	took = drain_stop_timed();
	if (took < 0)
		return -1;
	dropped = drain_xstat(pair.fe_port, "tx_q0_dropped_at_stop");
	reclaimed = drain_xstat(pair.fe_port, "tx_q0_reclaimed");
	peer_tap(took < DRAIN_GONE_MAX_MS,
		 "stop with the back end away (link down) took %.3f ms: no wait (< %u ms)", took,
		 DRAIN_GONE_MAX_MS);
	peer_tap(dropped == dropped0 && reclaimed - reclaimed0 == sent,
		 "the %" PRIu64 " packets of the ring were freed at the loss (tx_q0_reclaimed +%" PRIu64 "), none at the stop (tx_q0_dropped_at_stop %" PRIu64 ", was %" PRIu64 ")",
		 sent, reclaimed - reclaimed0, dropped, dropped0);
	peer_tap(rte_mempool_in_use_count(tx_pool) == 0,
		 "front end tx mbufs in use after the stop: %u (want 0)",
		 rte_mempool_in_use_count(tx_pool));
	if (peer_failed())
		return -1;
	if (pair_opts.drain_ms >= DRAIN_DIES_MIN_BOUND_MS && drain_dies_during_stop() != 0)
		return -1;
	/* The back end is gone: every pool but its own back where it was
	 * before the front end's probe (fds: the back end's went with it). */
	return pair_fe_remove_check(ref0, -1);
}
