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
 * DRAIN_STALL_TAKE packets, then the stop's drain must have waited for the
 * bound (--drain-ms, the front end's tx_drain_ms) and no longer, by its
 * own account (the port's tx_drain_* xstats: its last look at the bound or
 * after it, the look before that earlier; with a bound of 0, one look and
 * no pause), tx_drain_left and tx_q0_dropped_at_stop must be exactly what
 * was left in the ring, and no mbuf may stay in use. Then the ring is
 * filled again and the back end removed: once the front end's link is
 * down, a stop must not drain at all (no look). With a bound of 2 s or
 * more, a new back end comes, the ring is filled again and the back end is
 * removed 30 ms into the stop: the drain must notice the hang-up and end
 * before the bound (the socket of a net_vhost in this process is released
 * only when the vhost library's poll() on it returns, up to 1 s after the
 * removal).
 *
 * The test's wall clock judges nothing but "the stop returned" (within
 * DRAIN_HUNG_S): a host stall here lasts up to hundreds of ms, and the
 * drain's own clock already says whether it waited.
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
/* A stop that has not returned this long after its bound hangs. */
#define DRAIN_HUNG_S        20
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

/* A received frame: ours, front end to back end, queue 0, carrying @p seq, intact. */
static bool
drain_frame_ok(const struct rte_mbuf *m, uint32_t want, uint32_t *seq)
{
	static const struct peer_expect as_sent = { .xform = PEER_XFORM_IO };
	uint8_t copy[DRAIN_FRAME_LEN];
	struct peer_flow_hdr h;
	struct peer_flow pf;
	const uint8_t *data;

	*seq = UINT32_MAX;
	if (rte_pktmbuf_pkt_len(m) != DRAIN_FRAME_LEN)
		return false;
	data = rte_pktmbuf_read(m, 0, DRAIN_FRAME_LEN, copy);
	if (peer_flow_peek(data, DRAIN_FRAME_LEN, PAIR_RUN, &h) != 0)
		return false;
	*seq = h.seq;
	pair_flow_spec(&pf, 0, PAIR_FE_TO_BE);
	return h.kind == PAIR_FE_TO_BE && h.flow == 0 && h.seq == want &&
	       peer_flow_diff(&pf, &as_sent, data, DRAIN_FRAME_LEN, &h) == DRAIN_FRAME_LEN;
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

/* What the front end's last stop says its tx drain did (tx_drain_*). */
struct drain_report {
	uint64_t looks;
	uint64_t waited_us;
	uint64_t prev_look_us;
	uint64_t left;
};

static void
drain_report_get(struct drain_report *r)
{
	r->looks = drain_xstat(pair.fe_port, "tx_drain_looks");
	r->waited_us = drain_xstat(pair.fe_port, "tx_drain_waited_us");
	r->prev_look_us = drain_xstat(pair.fe_port, "tx_drain_prev_look_us");
	r->left = drain_xstat(pair.fe_port, "tx_drain_left");
	printf("# tx drain: %" PRIu64 " looks, the last after %" PRIu64 " us, the one before after %" PRIu64 " us, %" PRIu64 " packets left\n",
	       r->looks, r->waited_us, r->prev_look_us, r->left);
}

/* Stop the front end; the milliseconds it took (printed, judged only as
 * "returned", DRAIN_HUNG_S), or -1. */
static double
drain_stop_timed(void)
{
	uint64_t t0 = peer_now_ns();
	int ret = rte_eth_dev_stop(pair.fe_port);
	double took = (double)(peer_now_ns() - t0) / 1e6;

	if (ret != 0)
		return peer_fail("front end stop: %d", ret);
	if (took > (pair_opts.drain_ms == UINT32_MAX ? 0 : pair_opts.drain_ms) +
		   DRAIN_HUNG_S * 1e3)
		return peer_fail("front end stop took %.3f ms: it hangs", took);
	return took;
}

/* Stop the front end (drain_stop_timed()) and read its drain report and
 * tx_q0_dropped_at_stop: the milliseconds the stop took, or -1. */
static double
drain_stop_read(struct drain_report *r, uint64_t *dropped)
{
	double took = drain_stop_timed();

	if (took < 0)
		return -1;
	*dropped = drain_xstat(pair.fe_port, "tx_q0_dropped_at_stop");
	drain_report_get(r);
	return took;
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
	uint64_t left, looks;
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
		left = drain_xstat(pair.fe_port, "tx_drain_left");
		looks = drain_xstat(pair.fe_port, "tx_drain_looks");
		if (be.received != total || be.bad != 0 || dropped != dropped_prev ||
		    left != 0 || looks == 0 || rte_mempool_in_use_count(tx_pool) != 0) {
			lost_cycles++;
			peer_tap(false, "cycle %u: front end accepted %" PRIu64 " (total %" PRIu64 "), back end received %" PRIu64 " in total (%" PRIu64 " missing), %" PRIu64 " out of order, tx_q0_dropped_at_stop +%" PRIu64 ", tx_drain_left %" PRIu64 " after %" PRIu64 " looks, tx mbufs in use %u, ~%" PRIu64 " in flight at stop, stop took %.3f ms",
				 c, sent, total, be.received, total - be.received, be.bad,
				 dropped - dropped_prev, left, looks,
				 rte_mempool_in_use_count(tx_pool), in_flight, stop_ms[c - 1]);
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
	peer_tap(lost_cycles == 0, "%u start/stop cycles at full rate: the back end received exactly what the front end accepted, in order, every cycle, and each stop's drain left nothing (%u cycles lost packets)",
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
	struct drain_report r;
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
	drain_report_get(&r);
	printf("# stop while the back end was removed %u ms into it took %.3f ms (tx_drain_ms=%u; the hang-up reaches us when net_vhost's poll returns, up to %u ms after the removal)\n",
	       DRAIN_DIES_AFTER_MS, took, pair_opts.drain_ms, DRAIN_VHOST_POLL_MS);
	peer_tap(r.looks >= 2 && r.waited_us < (uint64_t)pair_opts.drain_ms * 1000,
		 "the back end went away during the drain: the drain waited (%" PRIu64 " looks) and ended before the bound by its own clock (last look after %" PRIu64 " us < %u ms)",
		 r.looks, r.waited_us, pair_opts.drain_ms);
	peer_tap(r.left == sent && dropped - dropped0 == sent &&
		 rte_mempool_in_use_count(tx_pool) == 0,
		 "tx_drain_left %" PRIu64 " and tx_q0_dropped_at_stop +%" PRIu64 " == the %" PRIu64 " packets of the ring; tx mbufs in use %u",
		 r.left, dropped - dropped0, sent, rte_mempool_in_use_count(tx_pool));
	return peer_failed() ? -1 : 0;
}

int
pair_scenario_drain_stall(void)
{
	struct rte_mempool *tx_pool = pair.pools.mp[POOL_FE_TX];
	const uint64_t bound_us = (uint64_t)pair_opts.drain_ms * 1000;
	uint64_t sent, dropped, dropped0, reclaimed0, reclaimed, fe_tx;
	struct drain_report r;
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
	took = drain_stop_read(&r, &dropped);
	if (took < 0)
		return -1;
	fe_tx = drain_xstat(pair.fe_port, "tx_q0_good_packets");
	printf("# stop with a stalled back end returned after %.3f ms by the test's clock (tx_drain_ms=%u)\n",
	       took, pair_opts.drain_ms);
	if (bound_us == 0)
		peer_tap(r.looks == 1 && r.prev_look_us == 0,
			 "tx_drain_ms=0: the drain looked once and made no wait (%" PRIu64 " looks)",
			 r.looks);
	else
		peer_tap(r.looks >= 2 && r.prev_look_us < bound_us && r.waited_us >= bound_us,
			 "the drain waited for the bound and no longer, by its own clock: %" PRIu64 " looks, the one before the last after %" PRIu64 " us < %u ms <= the last after %" PRIu64 " us",
			 r.looks, r.prev_look_us, pair_opts.drain_ms, r.waited_us);
	peer_tap(r.left == sent - be.received && dropped == sent - be.received && fe_tx == sent,
		 "tx_drain_left %" PRIu64 " and tx_q0_dropped_at_stop %" PRIu64 " == accepted %" PRIu64 " - received %" PRIu64 " (tx_q0_good_packets %" PRIu64 ")",
		 r.left, dropped, sent, be.received, fe_tx);
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
	took = drain_stop_read(&r, &dropped);
	if (took < 0)
		return -1;
	reclaimed = drain_xstat(pair.fe_port, "tx_q0_reclaimed");
	peer_tap(r.looks == 0 && r.waited_us == 0 && r.left == 0,
		 "stop with the back end away (link down): no drain (%" PRIu64 " looks, %" PRIu64 " packets left; it returned after %.3f ms)",
		 r.looks, r.left, took);
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
