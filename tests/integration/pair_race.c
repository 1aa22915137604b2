/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * vhost_pair --scenario race: the rx interrupt arming race, made
 * deterministic.
 *
 * Both datapaths run in this thread, so the order of events is ours to
 * choose. The race runs on one queue pair, Q (--race-queue, default 0), of
 * a port of --queues queue pairs; every rx queue of the front end is
 * registered on the thread's epoll instance, each with its own tag, as an
 * application with one lcore per port does. Every round:
 *
 *   1. disarm the front end's rx queue Q and drain it;
 *   2. harvest any event already pending on the epoll instance (there must be
 *      none: a stale event would hide a lost wakeup below);
 *   3. the back end transmits exactly one packet into the front end. The
 *      queue is disarmed, so the back end sends no notification: the packet
 *      sits in the used ring unannounced;
 *   4. arm (rte_eth_dev_rx_intr_enable), then rte_epoll_wait(--timeout-ms).
 *      A driver that re-checks the ring after arming wakes the waiter at once
 *      (or returns -EAGAIN); one that does not leaves it asleep until the
 *      timeout: a lost wakeup. The event that wakes it must carry queue Q's
 *      tag: a driver that signals, or registered, another queue's eventfd
 *      fails here;
 *   5. disarm, receive exactly that packet (every byte checked);
 *   6. the other direction: the front end sends one packet, the back end
 *      must receive it (every byte checked).
 *
 * Afterwards the ethdev counters of both ports must agree with what was
 * sent (queue Q only), the front end's interrupt xstats of queue Q must agree
 * with what the rounds did and those of every other queue must not have
 * moved (net_vnapi must have every one of them: a missing name fails);
 * --restarts N stops and starts the front end N times and races 20 rounds
 * after each; then the front end is closed and removed and every mempool
 * must be back to its value before the probe. The line
 * "RACE: frontend=... queue=Q rounds=N lost=N ..." is what
 * devtools/race_report.sh reads.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_epoll.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "peer_frame.h"
#include "peer_port.h"
#include "peer_tap.h"
#include "peer_util.h"
#include "pair.h"

#define RACE_FRAME_LEN      96
#define RACE_IO_TIMEOUT_S   2.0         /* one packet through a datapath */
#define RACE_WARMUP_SEQ     UINT32_MAX
#define RACE_DETECTOR_SEQ   (UINT32_MAX - 1)
#define RACE_RESTART_ROUNDS 20
#define RACE_TAG_BASE       0x7a00u     /* epoll data of rx queue q: base + q */
#define RACE_VNAPI_DRIVER   "net_vnapi"

/* Where a packet stands after its round's arming. */
enum race_outcome {
	RACE_LOST,      /**< epoll_wait timed out: the wakeup was lost */
	RACE_SIGNAL,    /**< epoll_wait returned the queue's event */
	RACE_EAGAIN,    /**< intr_enable said -EAGAIN: work raced the arming */
	RACE_NO_INTR,   /**< the front end cannot arm at all */
};

/*
 * The front end's per-queue interrupt xstats, read by name:
 * rx_q<N>_intr_<name>, and <name> in the RACE line. net_vnapi must have
 * all of them on every queue, other front ends have what they have. The
 * one list below makes both the enum and the names.
 */
#define RACE_XSTATS(X) \
	X(ARMS, arms) X(RESCUES, rescues) X(NOTIFICATIONS, notifications) \
	X(WAKEUPS, wakeups) X(WAKEUP_PACKETS, wakeup_packets) \
	X(SPURIOUS, spurious_wakeups) X(UNNOTIFIED, unnotified_work) \
	X(LATE, late_notifications) X(RACED, raced_disarms) \
	X(RESC_UN, rescues_unannounced) X(AWAKE, awake_packets) \
	X(PPN, packets_per_notification)

#define RACE_XS_ENUM(id, name) XS_##id,
enum race_xstat { RACE_XSTATS(RACE_XS_ENUM) XS_MAX };
#define RACE_XS_NAME(id, name) [XS_##id] = #name,
static const char *const race_xstat_names[XS_MAX] = { RACE_XSTATS(RACE_XS_NAME) };

/* [queue][xstat], for every rx queue of the front end. */
struct race_xstats {
	bool have[PAIR_MAX_QUEUES][XS_MAX];
	uint64_t id[PAIR_MAX_QUEUES][XS_MAX];
	uint64_t val[PAIR_MAX_QUEUES][XS_MAX];
};

/* Results of the rounds. */
struct race_result {
	unsigned long done;
	unsigned long lost;
	unsigned long signal;
	unsigned long eagain;
	unsigned long stale;        /**< events pending before arming */
	unsigned long not_pending;  /**< packet not in the ring before arming */
	uint64_t *lat_ns;           /**< enable -> wake (or -EAGAIN), per round */
	bool intr_ok;
	char no_intr_why[256];
};

/* Rx queues registered on the thread's epoll instance: 0..race_nb_registered-1. */
static uint16_t race_nb_registered;
/* The front end is net_vnapi: every interrupt xstat and rx interrupts are required. */
static bool race_fe_is_vnapi;
/* The queue raced (pair_opts.race_queue). */
static uint16_t race_q;

/* What rte_epoll_wait returns in epdata.data for rx queue q. */
static void *
race_tag(uint16_t q)
{
	return (void *)(uintptr_t)(RACE_TAG_BASE + q);
}

static void
race_xstat_name(char *buf, size_t len, uint16_t q, unsigned int i)
{
	snprintf(buf, len, "rx_q%u_intr_%s", q, race_xstat_names[i]);
}

/* ---------------------------------------------------------------- frames */

static struct rte_mbuf *
race_frame(struct rte_mempool *mp, uint32_t seq, uint8_t dir)
{
	uint8_t buf[RACE_FRAME_LEN];

	pair_frame_fill(buf, RACE_FRAME_LEN, seq, 0, dir);
	return peer_mbuf_copy(mp, buf, RACE_FRAME_LEN, UINT32_MAX);
}

/* 0 if m is packet seq of direction dir, byte for byte. */
static int
race_frame_check(const struct rte_mbuf *m, uint32_t seq, uint8_t dir, const char *who)
{
	uint8_t copy[RACE_FRAME_LEN], expect[RACE_FRAME_LEN];
	const uint8_t *data;
	uint32_t i;

	if (m->pkt_len != RACE_FRAME_LEN)
		return peer_fail("%s: round %u: packet of %u bytes, sent %u", who, seq,
				 m->pkt_len, RACE_FRAME_LEN);
	data = rte_pktmbuf_read(m, 0, RACE_FRAME_LEN, copy);
	if (data == NULL)
		return peer_fail("%s: round %u: unreadable mbuf", who, seq);
	pair_frame_fill(expect, RACE_FRAME_LEN, seq, 0, dir);
	i = peer_first_diff(expect, data, RACE_FRAME_LEN);
	if (i != RACE_FRAME_LEN)
		return peer_fail("%s: round %u: byte %u is %#x, sent %#x", who, seq, i,
				 data[i], expect[i]);
	return 0;
}

/* --------------------------------------------------------------- ports */

/*
 * Probe and start the front end with rx interrupts. A front end that refuses
 * intr_conf.rxq is started without it and the rounds run without arming
 * (res->intr_ok false, with the reason), so the counts and the leak check
 * still apply.
 */
static int
race_fe_create(struct race_result *res)
{
	struct peer_port_conf c = {
		.nb_queues = (uint16_t)pair_opts.queues,
		.rxq_intr = true,
		.rx_pool = pair.pools.mp[POOL_FE_RX],
	};
	struct rte_eth_dev_info info;
	uint16_t q;
	int ret;

	if (pair_fe_probe() != 0)
		return -1;
	ret = rte_eth_dev_info_get(pair.fe_port, &info);
	if (ret != 0)
		return peer_fail("front end: rte_eth_dev_info_get: %d", ret);
	race_fe_is_vnapi = strcmp(info.driver_name, RACE_VNAPI_DRIVER) == 0;
	res->intr_ok = true;
	ret = peer_port_start(pair.fe_port, "front end", &c);
	if (ret != 0 && race_fe_is_vnapi)
		return peer_fail("front end (%s): setup with intr_conf.rxq=1 failed: %d (%s)",
				 RACE_VNAPI_DRIVER, ret, strerror(-ret));
	if (ret != 0) {
		res->intr_ok = false;
		snprintf(res->no_intr_why, sizeof(res->no_intr_why),
			 "port setup with intr_conf.rxq=1 failed: %d (%s)", ret, strerror(-ret));
		printf("# front end: %s; running without rx interrupts\n", res->no_intr_why);
		c.rxq_intr = false;
		ret = peer_port_start(pair.fe_port, "front end", &c);
		if (ret != 0)
			return peer_fail("front end: setup without rx interrupts: %d", ret);
	}
	if (pair_wait_link(pair.be_port, "back end", true, 10.0) != 0 ||
	    pair_wait_link(pair.fe_port, "front end", true, 10.0) != 0)
		return -1;
	if (!res->intr_ok)
		return 0;
	/* Every rx queue, each with its own tag: an event of the wrong queue,
	 * or two queues sharing an eventfd (EEXIST), shows. */
	for (q = 0; q < pair_opts.queues; q++) {
		ret = rte_eth_dev_rx_intr_ctl_q(pair.fe_port, q, RTE_EPOLL_PER_THREAD,
						RTE_INTR_EVENT_ADD, race_tag(q));
		if (ret != 0 && race_fe_is_vnapi)
			return peer_fail("front end (%s): rte_eth_dev_rx_intr_ctl_q(queue %u, ADD) failed: %d (%s)",
					 RACE_VNAPI_DRIVER, q, ret, strerror(-ret));
		if (ret != 0) {
			res->intr_ok = false;
			snprintf(res->no_intr_why, sizeof(res->no_intr_why),
				 "rte_eth_dev_rx_intr_ctl_q(queue %u, ADD) failed: %d (%s)", q, ret,
				 strerror(-ret));
			printf("# front end: %s; running without rx interrupts\n",
			       res->no_intr_why);
			return 0;
		}
		race_nb_registered = (uint16_t)(q + 1);
	}
	return 0;
}

static void
race_intr_unregister(void)
{
	uint16_t q;
	int ret;

	for (q = 0; q < race_nb_registered; q++) {
		ret = rte_eth_dev_rx_intr_ctl_q(pair.fe_port, q, RTE_EPOLL_PER_THREAD,
						RTE_INTR_EVENT_DEL, race_tag(q));
		if (ret != 0)
			printf("# rx_intr_ctl_q(queue %u, DEL): %d\n", q, ret);
	}
	race_nb_registered = 0;
}

/* -------------------------------------------------------------- xstats */

/*
 * Look up every interrupt xstat of every rx queue. net_vnapi must have all
 * of them: a missing one fails, by name (a renamed xstat must not quietly
 * turn the exact checks below off).
 */
static int
race_xstats_lookup(struct race_xstats *xs)
{
	char name[RTE_ETH_XSTATS_NAME_SIZE];
	unsigned int i, missing = 0;
	uint16_t q;

	memset(xs, 0, sizeof(*xs));
	for (q = 0; q < pair_opts.queues; q++) {
		for (i = 0; i < XS_MAX; i++) {
			race_xstat_name(name, sizeof(name), q, i);
			xs->have[q][i] = rte_eth_xstats_get_id_by_name(pair.fe_port, name,
								       &xs->id[q][i]) == 0;
			if (!xs->have[q][i] && race_fe_is_vnapi) {
				peer_fail("front end (%s) has no xstat %s", RACE_VNAPI_DRIVER,
					  name);
				missing++;
			}
		}
	}
	return missing == 0 ? 0 : -1;
}

static int
race_xstats_read(struct race_xstats *xs)
{
	char name[RTE_ETH_XSTATS_NAME_SIZE];
	unsigned int i;
	uint16_t q;

	for (q = 0; q < pair_opts.queues; q++) {
		for (i = 0; i < XS_MAX; i++) {
			if (!xs->have[q][i])
				continue;
			if (rte_eth_xstats_get_by_id(pair.fe_port, &xs->id[q][i], &xs->val[q][i],
						     1) != 1) {
				race_xstat_name(name, sizeof(name), q, i);
				return peer_fail("xstat %s: read failed", name);
			}
		}
	}
	return 0;
}

/*
 * The rx queues other than the one raced must not have moved between @p a
 * and @p b: every interrupt counter the same (and the ratio too).
 */
static void
race_check_others(const struct race_xstats *a, const struct race_xstats *b, const char *when)
{
	char moved[512];
	unsigned int i;
	size_t off;
	uint16_t q;
	int n;

	for (q = 0; q < pair_opts.queues; q++) {
		if (q == race_q)
			continue;
		off = 0;
		moved[0] = '\0';
		for (i = 0; i < XS_MAX; i++) {
			if (!b->have[q][i] || b->val[q][i] == a->val[q][i])
				continue;
			n = snprintf(moved + off, sizeof(moved) - off, " %s %" PRIu64 "->%" PRIu64,
				     race_xstat_names[i], a->val[q][i], b->val[q][i]);
			if (n > 0)
				off = RTE_MIN(off + (size_t)n, sizeof(moved) - 1);
		}
		peer_tap(moved[0] == '\0', "%s: queue %u (not raced): interrupt xstats unchanged%s%s",
			 when, q, moved[0] == '\0' ? "" : ", moved:", moved);
	}
}

/* ---------------------------------------------------------------- rounds */

/* Receive and free everything the front end holds; the number received. */
static unsigned int
race_fe_drain(void)
{
	struct rte_mbuf *rx[PAIR_BURST];
	unsigned int total = 0;
	uint16_t n, i;

	do {
		n = rte_eth_rx_burst(pair.fe_port, race_q, rx, PAIR_BURST);
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(rx[i]);
		total += n;
	} while (n != 0);
	return total;
}

/* Transmit one packet on port/queue race_q, retrying until accepted. */
static int
race_tx_one(uint16_t port, struct rte_mempool *mp, uint32_t seq, uint8_t dir, const char *who)
{
	double deadline = peer_now_s() + RACE_IO_TIMEOUT_S;
	struct rte_mbuf *m = race_frame(mp, seq, dir);

	if (m == NULL)
		return peer_fail("%s: round %u: tx pool exhausted (in use %u)", who, seq,
				 rte_mempool_in_use_count(mp));
	while (rte_eth_tx_burst(port, race_q, &m, 1) != 1) {
		if (peer_now_s() > deadline) {
			rte_pktmbuf_free(m);
			return peer_fail("%s: round %u: tx not accepted within %.0f s", who, seq,
					 RACE_IO_TIMEOUT_S);
		}
		peer_sleep_us(100);
	}
	return 0;
}

/*
 * Receive exactly packet seq on port/queue race_q: it is in the ring already (the
 * peer's burst ran in this thread), so one burst normally has it; a second
 * burst must find nothing more.
 */
static int
race_rx_one(uint16_t port, uint32_t seq, uint8_t dir, const char *who)
{
	double deadline = peer_now_s() + RACE_IO_TIMEOUT_S;
	struct rte_mbuf *rx[PAIR_BURST];
	unsigned int got = 0, bursts = 0;
	uint16_t n, i;
	int ret = 0;

	while (got == 0) {
		n = rte_eth_rx_burst(port, race_q, rx, PAIR_BURST);
		bursts++;
		for (i = 0; i < n; i++) {
			if (ret == 0 && i == 0)
				ret = race_frame_check(rx[i], seq, dir, who);
			rte_pktmbuf_free(rx[i]);
		}
		if (n > 1 && ret == 0)
			ret = peer_fail("%s: round %u: %u packets received, sent 1", who, seq, n);
		got += n;
		if (got == 0 && peer_now_s() > deadline)
			return peer_fail("%s: round %u: packet not received within %.0f s (%u bursts)",
					 who, seq, RACE_IO_TIMEOUT_S, bursts);
	}
	n = rte_eth_rx_burst(port, race_q, rx, PAIR_BURST);
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(rx[i]);
	if (n != 0 && ret == 0)
		ret = peer_fail("%s: round %u: %u extra packet(s) after the one sent", who, seq, n);
	return ret;
}

static int
race_round(uint32_t r, struct race_result *res)
{
	struct rte_epoll_event ev[1];
	enum race_outcome out;
	uint64_t t0, t1;
	int ret, n, q;

	/* 1. Disarmed and empty. */
	if (res->intr_ok) {
		ret = rte_eth_dev_rx_intr_disable(pair.fe_port, race_q);
		if (ret != 0)
			return peer_fail("round %u: rx_intr_disable: %d", r, ret);
	}
	n = (int)race_fe_drain();
	if (n != 0)
		return peer_fail("round %u: %d unexpected packet(s) in the front end's rx queue",
				 r, n);

	/* 2. Nothing pending on the epoll instance. */
	if (res->intr_ok) {
		n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, 0);
		if (n < 0)
			return peer_fail("round %u: rte_epoll_wait(0): %d", r, n);
		if (n > 0)
			res->stale++;
	}

	/* 3. One packet, unannounced. */
	if (race_tx_one(pair.be_port, pair.pools.mp[POOL_BE_TX], r, PAIR_BE_TO_FE,
			"back end tx") != 0)
		return -1;
	q = rte_eth_rx_queue_count(pair.fe_port, race_q);
	if (q == 0)
		res->not_pending++;

	/* 4. Arm, sleep. */
	t0 = peer_now_ns();
	if (!res->intr_ok) {
		out = RACE_NO_INTR;
		t1 = t0;
	} else {
		ret = rte_eth_dev_rx_intr_enable(pair.fe_port, race_q);
		if (ret == -EAGAIN) {
			t1 = peer_now_ns();
			out = RACE_EAGAIN;
		} else if (ret != 0) {
			return peer_fail("round %u: rx_intr_enable: %d (%s)", r, ret,
					 strerror(-ret));
		} else {
			n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, (int)pair_opts.timeout_ms);
			t1 = peer_now_ns();
			if (n < 0)
				return peer_fail("round %u: rte_epoll_wait: %d", r, n);
			if (n > 0 && ev[0].epdata.data != race_tag(race_q))
				return peer_fail("round %u: armed rx queue %u, woken by the event of fd %d tagged %#" PRIxPTR " (queue %u's tag is %#" PRIxPTR ")",
						 r, race_q, ev[0].fd, (uintptr_t)ev[0].epdata.data,
						 race_q, (uintptr_t)race_tag(race_q));
			out = n == 0 ? RACE_LOST : RACE_SIGNAL;
		}
	}
	res->lat_ns[res->done] = t1 - t0;
	switch (out) {
	case RACE_LOST:
	case RACE_NO_INTR:
		res->lost++;
		break;
	case RACE_SIGNAL:
		res->signal++;
		break;
	case RACE_EAGAIN:
		res->eagain++;
		break;
	}

	/* 5. Disarm, take the packet. */
	if (res->intr_ok) {
		ret = rte_eth_dev_rx_intr_disable(pair.fe_port, race_q);
		if (ret != 0)
			return peer_fail("round %u: rx_intr_disable after wake: %d", r, ret);
	}
	if (race_rx_one(pair.fe_port, r, PAIR_BE_TO_FE, "front end rx") != 0)
		return -1;

	/* 6. The other direction. */
	if (race_tx_one(pair.fe_port, pair.pools.mp[POOL_FE_TX], r, PAIR_FE_TO_BE,
			"front end tx") != 0 ||
	    race_rx_one(pair.be_port, r, PAIR_FE_TO_BE, "back end rx") != 0)
		return -1;
	res->done++;
	return 0;
}

/*
 * One packet each way before the rounds, outside the counts. With event idx,
 * lib/vhost signals its first completion after the ring was set up whatever
 * used_event says (signalled_used_valid starts false), so the first packet
 * would be announced and would not race the arming. The disarm after it reads
 * that notification off the eventfd, and the zero-timeout wait takes any
 * event it left on the epoll instance.
 */
static int
race_warm_up(const struct race_result *res)
{
	struct rte_epoll_event ev[1];
	int n;

	if (res->intr_ok && rte_eth_dev_rx_intr_disable(pair.fe_port, race_q) != 0)
		return peer_fail("warm-up: rx_intr_disable failed");
	race_fe_drain();
	if (race_tx_one(pair.be_port, pair.pools.mp[POOL_BE_TX], RACE_WARMUP_SEQ, PAIR_BE_TO_FE,
			"warm-up back end tx") != 0)
		return -1;
	/* Before the receive, so the wakeup this may count finds its packet. */
	if (res->intr_ok && rte_eth_dev_rx_intr_disable(pair.fe_port, race_q) != 0)
		return peer_fail("warm-up: rx_intr_disable failed");
	if (race_rx_one(pair.fe_port, RACE_WARMUP_SEQ, PAIR_BE_TO_FE, "warm-up front end rx") != 0 ||
	    race_tx_one(pair.fe_port, pair.pools.mp[POOL_FE_TX], RACE_WARMUP_SEQ, PAIR_FE_TO_BE,
			"warm-up front end tx") != 0 ||
	    race_rx_one(pair.be_port, RACE_WARMUP_SEQ, PAIR_FE_TO_BE, "warm-up back end rx") != 0)
		return -1;
	if (!res->intr_ok)
		return 0;
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, 0);
	printf("# warm-up: one packet each way; %s\n",
	       n > 0 ? "the back end announced its first completion (an event was pending)" :
	       "no event pending afterwards");
	return 0;
}

/* ---------------------------------------------------------------- checks */

/* Every round moved one frame each way on queue race_q, none on the others. */
static int
race_check_counts(const struct race_result *res)
{
	struct pair_counts c;

	memset(&c, 0, sizeof(c));
	c.pkts[0][race_q] = c.pkts[1][race_q] = res->done;
	c.bytes[0] = c.bytes[1] = (uint64_t)res->done * RACE_FRAME_LEN;
	return pair_check_stats(&c);
}

/*
 * A front end with the interrupt xstats (net_vnapi always) must account for
 * the rounds exactly on the queue raced, and not at all on the others:
 * every round armed once, and found its packet at the arming (it was in the
 * ring, unannounced), so every arming is a rescue; the back end never
 * notified (the queue was disarmed whenever it transmitted), so no round is
 * a back-end wakeup: a rescue is counted as a rescue, not as a wakeup.
 */
static int
race_check_xstats(const struct race_xstats *x0, const struct race_xstats *x1,
		  const struct race_result *res)
{
	const bool *have = x1->have[race_q];
	uint64_t d[XS_MAX];
	unsigned int i;

	if (!have[XS_ARMS] || !res->intr_ok)
		return 0;
	for (i = 0; i < XS_MAX; i++)
		d[i] = x1->val[race_q][i] - x0->val[race_q][i];
	peer_tap(d[XS_ARMS] == res->done, "xstats: %" PRIu64 " arms over %lu rounds",
		 d[XS_ARMS], res->done);
	if (have[XS_RESCUES])
		peer_tap(d[XS_RESCUES] == res->signal + res->eagain,
			 "xstats: %" PRIu64 " rescues, %lu rounds woke at once (%lu signal, %lu -EAGAIN)",
			 d[XS_RESCUES], res->signal + res->eagain, res->signal, res->eagain);
	if (have[XS_NOTIFICATIONS])
		peer_tap(d[XS_NOTIFICATIONS] == 0,
			 "xstats: the back end notified %" PRIu64 " time(s) while the queue was disarmed",
			 d[XS_NOTIFICATIONS]);
	if (have[XS_WAKEUPS])
		peer_tap(d[XS_WAKEUPS] == 0, "xstats: %" PRIu64 " back-end wakeups (every round a rescue)",
			 d[XS_WAKEUPS]);
	if (have[XS_WAKEUP_PACKETS])
		peer_tap(d[XS_WAKEUP_PACKETS] == 0,
			 "xstats: %" PRIu64 " wakeup packets (every round a rescue)",
			 d[XS_WAKEUP_PACKETS]);
	if (have[XS_SPURIOUS])
		peer_tap(d[XS_SPURIOUS] == 0,
			 "xstats: %" PRIu64 " spurious wakeups (every wakeup had its packet)",
			 d[XS_SPURIOUS]);
	if (have[XS_LATE] && have[XS_RACED])
		peer_tap(d[XS_LATE] == 0 && d[XS_RACED] == 0,
			 "xstats: %" PRIu64 " late notifications, %" PRIu64 " raced disarms (every round a rescue)",
			 d[XS_LATE], d[XS_RACED]);
	if (have[XS_UNNOTIFIED])
		peer_tap(d[XS_UNNOTIFIED] == 0,
			 "xstats: %" PRIu64 " armed waits ended with unannounced work (a rescue is no such wait)",
			 d[XS_UNNOTIFIED]);
	if (have[XS_RESC_UN])
		peer_tap(d[XS_RESC_UN] == res->signal,
			 "xstats: %" PRIu64 " unannounced rescues, %lu rounds woken by the driver's own signal",
			 d[XS_RESC_UN], res->signal);
	if (have[XS_AWAKE])
		peer_tap(d[XS_AWAKE] == 0,
			 "xstats: %" PRIu64 " awake packets (every packet arrived before its arm)",
			 d[XS_AWAKE]);
	race_check_others(x0, x1, "rounds");
	return peer_failed() ? -1 : 0;
}

/* Past the driver's wait threshold (VNAPI_INTR_WAIT_MIN_US, 1 ms). */
#define RACE_DETECTOR_WAIT_US 2000

/* Deltas of queue race_q's detector xstats, b - a. */
#define RACE_D(b, a, x) ((b).val[race_q][x] - (a).val[race_q][x])

/* A detector xstat of queue race_q and its expected delta. */
struct race_want {
	unsigned int xs;
	uint64_t d;
};
/* race_detector_tap()'s want and n from a list of { xstat, delta }. */
#define RACE_WANT(...) \
	(const struct race_want[]){ __VA_ARGS__ }, \
	RTE_DIM(((const struct race_want[]){ __VA_ARGS__ }))

/* One TAP line: each of the n xstats of want moved by exactly its delta
 * from a to b on queue race_q; the line names every delta seen and
 * expected. */
static void
race_detector_tap(const char *what, const struct race_xstats *a, const struct race_xstats *b,
		  const struct race_want *want, unsigned int n)
{
	char seen[512], exp[128];
	size_t so = 0, eo = 0;
	bool ok = true;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t d = RACE_D(*b, *a, want[i].xs);

		ok = ok && d == want[i].d;
		so += (size_t)snprintf(seen + so, sizeof(seen) - RTE_MIN(so, sizeof(seen)),
				       "%s%s +%" PRIu64, i ? ", " : "",
				       race_xstat_names[want[i].xs], d);
		eo += (size_t)snprintf(exp + eo, sizeof(exp) - RTE_MIN(eo, sizeof(exp)),
				       "%s+%" PRIu64, i ? ", " : "", want[i].d);
	}
	peer_tap(ok, "detector: %s on queue %u: %s (expected %s)", what, race_q, seen, exp);
}

/*
 * One armed wait on the empty queue whose notification we take off the
 * eventfd behind the driver's back, as if it had never come: arm, the back
 * end transmits one packet and notifies (the queue is armed), we read the
 * eventfd, wait @p wait_us since the arm when non-zero, disarm, receive the
 * packet (every byte), then @p late_write is written to the eventfd (a
 * notification landing after the disarm), and the queue is armed and
 * disarmed once more, empty: the driver's verdict on the wait comes at that
 * arm. The xstats around it in @p a and @p b.
 */
static int
race_detector_wait(const char *what, unsigned int wait_us, uint64_t late_write,
		   struct race_xstats *a, struct race_xstats *b)
{
	struct rte_epoll_event ev[1];
	struct pollfd pfd = { .events = POLLIN };
	uint64_t cnt = 0, t0;
	int ret;

	if (rte_eth_dev_rx_intr_disable(pair.fe_port, race_q) != 0)
		return peer_fail("detector %s: rx_intr_disable failed", what);
	if (race_fe_drain() != 0)
		return peer_fail("detector %s: unexpected packets in the front end's rx queue", what);
	(void)rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, 0);
	if (race_xstats_read(a) != 0)
		return -1;
	pfd.fd = rte_eth_dev_rx_intr_ctl_q_get_fd(pair.fe_port, race_q);
	if (pfd.fd < 0)
		return peer_fail("detector %s: no rx interrupt fd for queue %u: %d", what, race_q,
				 pfd.fd);
	t0 = rte_get_timer_cycles();
	ret = rte_eth_dev_rx_intr_enable(pair.fe_port, race_q);
	if (ret != 0)
		return peer_fail("detector %s: arming an empty queue: %d", what, ret);
	if (race_tx_one(pair.be_port, pair.pools.mp[POOL_BE_TX], RACE_DETECTOR_SEQ,
			PAIR_BE_TO_FE, "detector back end tx") != 0)
		return -1;
	ret = poll(&pfd, 1, (int)(RACE_IO_TIMEOUT_S * 1000));
	if (ret != 1)
		return peer_fail("detector %s: the back end did not notify the armed queue within %.0f s",
				 what, RACE_IO_TIMEOUT_S);
	if (read(pfd.fd, &cnt, sizeof(cnt)) != sizeof(cnt) || cnt == 0)
		return peer_fail("detector %s: could not take the notification off the eventfd", what);
	if (wait_us != 0) {
		uint64_t until = t0 + rte_get_timer_hz() / 1000000 * wait_us;
		uint64_t now = rte_get_timer_cycles();

		/* A wait the driver must judge as one: armed this long. */
		if (now < until)
			rte_delay_us_sleep((unsigned int)((until - now) * 1000000 / rte_get_timer_hz()) + 1);
	}
	if (rte_eth_dev_rx_intr_disable(pair.fe_port, race_q) != 0)
		return peer_fail("detector %s: rx_intr_disable failed", what);
	if (race_rx_one(pair.fe_port, RACE_DETECTOR_SEQ, PAIR_BE_TO_FE, "detector front end rx") != 0)
		return -1;
	if (late_write != 0 && write(pfd.fd, &late_write, sizeof(late_write)) != sizeof(late_write))
		return peer_fail("detector %s: could not write the late notification", what);
	if (rte_eth_dev_rx_intr_enable(pair.fe_port, race_q) != 0 ||
	    rte_eth_dev_rx_intr_disable(pair.fe_port, race_q) != 0)
		return peer_fail("detector %s: arming the empty queue again failed", what);
	/* The edge the notification left on the epoll instance. */
	(void)rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, 0);
	*b = *a;
	if (race_xstats_read(b) != 0)
		return -1;
	race_check_others(a, b, "detector");
	return peer_failed() ? -1 : 0;
}

/*
 * A packet that arrives while the queue is disarmed after a wait that timed
 * out with nothing to do (l3fwd-power awake between its epoll timeout and
 * its next arm): arm the empty queue, wait RACE_AWAKE_WAIT_MS for nothing,
 * disarm, then the back end transmits one packet and we receive it. It is
 * owed no interrupt: exactly awake_packets +1, no notification, no wakeup,
 * nothing unnotified, late, raced or rescued.
 */
#define RACE_AWAKE_WAIT_MS 5

static int
race_detector_awake(struct race_xstats *a, struct race_xstats *b)
{
	struct rte_epoll_event ev[1];
	int n;

	if (rte_eth_dev_rx_intr_disable(pair.fe_port, race_q) != 0)
		return peer_fail("detector awake: rx_intr_disable failed");
	if (race_fe_drain() != 0)
		return peer_fail("detector awake: unexpected packets in the front end's rx queue");
	(void)rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, 0);
	if (race_xstats_read(a) != 0)
		return -1;
	if (rte_eth_dev_rx_intr_enable(pair.fe_port, race_q) != 0)
		return peer_fail("detector awake: arming an empty queue failed");
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, RACE_AWAKE_WAIT_MS);
	if (n != 0)
		return peer_fail("detector awake: the empty armed queue woke the waiter (%d)", n);
	if (rte_eth_dev_rx_intr_disable(pair.fe_port, race_q) != 0)
		return peer_fail("detector awake: rx_intr_disable failed");
	if (race_tx_one(pair.be_port, pair.pools.mp[POOL_BE_TX], RACE_DETECTOR_SEQ,
			PAIR_BE_TO_FE, "detector back end tx") != 0 ||
	    race_rx_one(pair.fe_port, RACE_DETECTOR_SEQ, PAIR_BE_TO_FE, "detector front end rx") != 0)
		return -1;
	*b = *a;
	if (race_xstats_read(b) != 0)
		return -1;
	race_detector_tap("a packet after a wait that timed out empty is an awake packet", a, b,
			  RACE_WANT({ XS_AWAKE, 1 }, { XS_NOTIFICATIONS, 0 },
				    { XS_WAKEUPS, 0 }, { XS_UNNOTIFIED, 0 },
				    { XS_LATE, 0 }, { XS_RACED, 0 },
				    { XS_RESC_UN, 0 }));
	race_check_others(a, b, "detector");
	return peer_failed() ? -1 : 0;
}

/*
 * The lost-wakeup detector (rx_qN_intr_unnotified_work) on queue race_q, by
 * the three verdicts the driver gives a disarm that finds unannounced work:
 *  - lost: armed past 1 ms, and no notification by the next arm: exactly
 *    unnotified +1, no notification, no wakeup, nothing late or raced;
 *  - late: the same, but the notification lands after the disarm: late +1,
 *    notifications +1, unnotified +0 (the driver empties the eventfd);
 *  - raced: disarmed as soon as the notification is gone: raced +1 when the
 *    disarm came within 1 ms of the arm, else unnotified +1 (this VM may
 *    stall us past 1 ms): exactly one of the two, never both or neither.
 * Front ends with the xstats only.
 */
static int
race_detector(const struct race_result *res, const struct race_xstats *xl)
{
	struct race_xstats a = *xl, b;

	if (!res->intr_ok || !xl->have[race_q][XS_UNNOTIFIED])
		return 0;
	if (race_detector_wait("lost", RACE_DETECTOR_WAIT_US, 0, &a, &b) != 0)
		return -1;
	race_detector_tap("a notification lost in a wait of " RTE_STR(RACE_DETECTOR_WAIT_US)
			  " us is counted", &a, &b,
			  RACE_WANT({ XS_UNNOTIFIED, 1 }, { XS_NOTIFICATIONS, 0 },
				    { XS_WAKEUPS, 0 }, { XS_LATE, 0 },
				    { XS_RACED, 0 }));
	a = b;
	if (race_detector_wait("late", RACE_DETECTOR_WAIT_US, 1, &a, &b) != 0)
		return -1;
	race_detector_tap("a notification that lands after the disarm is late", &a, &b,
			  RACE_WANT({ XS_UNNOTIFIED, 0 }, { XS_LATE, 1 },
				    { XS_NOTIFICATIONS, 1 }, { XS_WAKEUPS, 0 },
				    { XS_RACED, 0 }));
	a = b;
	if (race_detector_wait("raced", 0, 0, &a, &b) != 0)
		return -1;
	peer_tap(RACE_D(b, a, XS_UNNOTIFIED) + RACE_D(b, a, XS_RACED) == 1 &&
		 RACE_D(b, a, XS_NOTIFICATIONS) == 0 && RACE_D(b, a, XS_WAKEUPS) == 0 &&
		 RACE_D(b, a, XS_LATE) == 0,
		 "detector: a disarm right after the arm, unannounced work, on queue %u: raced +%" PRIu64
		 ", unnotified +%" PRIu64 " (exactly one of the two), notifications +%" PRIu64
		 ", wakeups +%" PRIu64 ", late +%" PRIu64, race_q, RACE_D(b, a, XS_RACED),
		 RACE_D(b, a, XS_UNNOTIFIED), RACE_D(b, a, XS_NOTIFICATIONS),
		 RACE_D(b, a, XS_WAKEUPS), RACE_D(b, a, XS_LATE));
	a = b;
	if (race_detector_awake(&a, &b) != 0)
		return -1;
	return peer_failed() ? -1 : 0;
}

static void
race_print_summary(const struct race_result *res, const struct race_xstats *x0,
		   const struct race_xstats *x1)
{
	uint64_t *sorted;
	double med = 0, p99 = 0, mx = 0;
	unsigned int i;

	sorted = malloc(sizeof(*sorted) * (res->done ? res->done : 1));
	if (sorted != NULL && res->done != 0) {
		memcpy(sorted, res->lat_ns, sizeof(*sorted) * res->done);
		peer_sort_u64(sorted, res->done);
		med = (double)peer_percentile_u64(sorted, res->done, 50) / 1e3;
		p99 = (double)peer_percentile_u64(sorted, res->done, 99) / 1e3;
		mx = (double)sorted[res->done - 1] / 1e3;
	}
	free(sorted);
	if (!res->intr_ok)
		printf("# front end cannot arm rx interrupts: %s; every round counts as lost\n",
		       res->no_intr_why);
	printf("RACE: frontend=%s queue=%u rounds=%lu lost=%lu rescued_by_signal=%lu eagain=%lu",
	       pair.fe_devargs, race_q, res->done, res->lost, res->signal, res->eagain);
	if (res->intr_ok)
		printf(" median_wakeup_us=%.1f p99_wakeup_us=%.1f max_wakeup_us=%.1f",
		       med, p99, mx);
	else
		printf(" median_wakeup_us=n/a p99_wakeup_us=n/a max_wakeup_us=n/a");
	printf(" stale_events=%lu not_pending=%lu xstats:", res->stale, res->not_pending);
	for (i = 0; i < XS_MAX; i++) {
		if (i == XS_PPN) {
			/* A ratio (scaled by the driver), not a counter: print as read. */
			if (x1->have[race_q][i])
				printf(" %s=%" PRIu64, race_xstat_names[i],
				       x1->val[race_q][i]);
			else
				printf(" %s=n/a", race_xstat_names[i]);
		} else if (x1->have[race_q][i]) {
			printf(" %s=%" PRIu64, race_xstat_names[i],
			       x1->val[race_q][i] - x0->val[race_q][i]);
		} else {
			printf(" %s=n/a", race_xstat_names[i]);
		}
	}
	printf("\n");
}

/*
 * The interrupt fds registered once must keep working across port
 * stop/start: restart the front end, warm up (lib/vhost announces its
 * first completion on a fresh ring), and race again, with no
 * re-registration. Only lost wakeups are judged here.
 */
static int
race_restarts(struct race_result *res)
{
	unsigned long lost0, lost_start = res->lost, i;
	uint32_t r;

	for (r = 0; r < pair_opts.restarts && res->intr_ok; r++) {
		lost0 = res->lost;
		if (rte_eth_dev_stop(pair.fe_port) != 0 || rte_eth_dev_start(pair.fe_port) != 0)
			return peer_fail("restart %u: front end stop/start failed", r + 1);
		if (pair_wait_link(pair.fe_port, "front end", true, 10.0) != 0 ||
		    pair_wait_link(pair.be_port, "back end", true, 10.0) != 0 ||
		    race_warm_up(res) != 0)
			return -1;
		for (i = 0; i < RACE_RESTART_ROUNDS; i++)
			if (race_round(pair_opts.rounds + r * RACE_RESTART_ROUNDS + (uint32_t)i,
				       res) != 0)
				return -1;
		printf("# restart %u: %u rounds, %lu lost\n", r + 1, RACE_RESTART_ROUNDS,
		       res->lost - lost0);
		if (pair_opts.expect_lost == PAIR_EXPECT_ALL) {
			if (res->lost - lost0 != RACE_RESTART_ROUNDS)
				return peer_fail("restart %u: %lu of %u wakeups lost after stop/start, expected all",
						 r + 1, res->lost - lost0, RACE_RESTART_ROUNDS);
		} else if (pair_opts.expect_lost != PAIR_EXPECT_ANY && res->lost - lost0 > 0) {
			return peer_fail("restart %u: %lu of %u wakeups lost after stop/start", r + 1,
					 res->lost - lost0, RACE_RESTART_ROUNDS);
		}
	}
	if (pair_opts.restarts != 0 && res->intr_ok)
		peer_tap(r == pair_opts.restarts &&
			 (pair_opts.expect_lost == PAIR_EXPECT_ANY ||
			  res->lost - lost_start == (pair_opts.expect_lost == PAIR_EXPECT_ALL ?
						    (unsigned long)r * RACE_RESTART_ROUNDS : 0)),
			 "%u of %u restart(s) of the front end, %u rounds each, %lu wakeups lost in them: the interrupt fds kept working",
			 r, pair_opts.restarts, RACE_RESTART_ROUNDS, res->lost - lost_start);
	return 0;
}

/*
 * How many wakeups the front end may lose. --expect-lost all is for a front
 * end that arms without re-checking the ring (net_virtio_user): each round
 * leaves the packet unannounced in the used ring before the arming (the
 * stale-event check shows the back end did not notify), nothing else writes
 * the eventfd, so an arming with no re-check must sleep to the timeout in
 * every single round. The criterion is exact: rx interrupts work (every
 * arming returned 0), lost == rounds, no round woke by a signal, none got
 * -EAGAIN. One woken round means the front end did re-check, or something
 * else signalled its eventfd.
 */
static void
race_judge_lost(const struct race_result *res)
{
	if (pair_opts.expect_lost == PAIR_EXPECT_ANY) {
		printf("# %lu of %lu wakeups lost (reported, not judged)\n", res->lost, res->done);
	} else if (pair_opts.expect_lost == PAIR_EXPECT_ALL) {
		peer_tap(res->intr_ok && res->done == pair_opts.rounds && res->lost == res->done &&
			 res->signal == 0 && res->eagain == 0,
			 "every wakeup lost (the front end arms without re-checking the ring): %lu of %lu rounds slept to the %u ms timeout, %lu woke on a signal, %lu got -EAGAIN, rx interrupts %s",
			 res->lost, res->done, pair_opts.timeout_ms, res->signal, res->eagain,
			 res->intr_ok ? "armed" : "unavailable");
	} else {
		peer_tap(res->lost <= (unsigned long)pair_opts.expect_lost,
			 "%lu of %lu wakeups lost (at most %ld expected)", res->lost, res->done,
			 pair_opts.expect_lost);
	}
}

int
pair_scenario_race(void)
{
	struct race_xstats x0, x1;
	struct race_result res;
	unsigned int ref0[PEER_POOLS_MAX];
	uint32_t r;
	int ret = -1;

	if (pair_opts.race_queue >= pair_opts.queues)
		return peer_fail("--race-queue %u: the port has %u queue pair(s)",
				 pair_opts.race_queue, pair_opts.queues);
	race_q = (uint16_t)pair_opts.race_queue;
	memset(&res, 0, sizeof(res));
	res.lat_ns = calloc(pair_opts.rounds + RACE_RESTART_ROUNDS * pair_opts.restarts,
			    sizeof(*res.lat_ns));
	if (res.lat_ns == NULL)
		return peer_fail("out of memory for %u rounds", pair_opts.rounds);

	if (pair_be_create((uint16_t)pair_opts.queues, 0) != 0)
		goto out;
	peer_pools_in_use(&pair.pools, ref0);
	if (race_fe_create(&res) != 0 || race_warm_up(&res) != 0)
		goto out;
	rte_eth_stats_reset(pair.fe_port);
	rte_eth_stats_reset(pair.be_port);
	if (race_xstats_lookup(&x0) != 0 || race_xstats_read(&x0) != 0)
		goto out;
	x1 = x0;
	printf("# front end '%s' (%s): rx interrupts %s, xstats %s; race on rx queue %u of %u, %u rounds, epoll timeout %u ms\n",
	       pair.fe_devargs, race_fe_is_vnapi ? "net_vnapi: every xstat required" : "reference",
	       res.intr_ok ? "on" : "off", x0.have[race_q][XS_ARMS] ? "present" : "absent",
	       race_q, pair_opts.queues, pair_opts.rounds, pair_opts.timeout_ms);

	for (r = 0; r < pair_opts.rounds; r++) {
		if (race_round(r, &res) != 0)
			break;
	}
	if (race_xstats_read(&x1) != 0)
		x1 = x0;
	race_print_summary(&res, &x0, &x1);
	if (peer_failed())
		goto out;
	peer_tap(res.done == pair_opts.rounds,
		 "%lu of %u rounds, one packet each way per round, every byte checked", res.done,
		 pair_opts.rounds);

	if (race_check_counts(&res) != 0 || race_check_xstats(&x0, &x1, &res) != 0)
		goto out;
	peer_tap(res.stale == 0,
		 "%lu round(s) found an event pending before arming (a notification while disarmed)",
		 res.stale);
	peer_tap(res.not_pending == 0,
		 "%lu round(s): rx_queue_count said 0 with the packet in the ring", res.not_pending);
	race_judge_lost(&res);
	if (peer_failed() || race_restarts(&res) != 0 || race_detector(&res, &x1) != 0)
		goto out;

	/* Every mbuf back home after the front end's close and removal. */
	race_intr_unregister();
	ret = pair_fe_remove_check(ref0, -1);
out:
	race_intr_unregister();
	free(res.lat_ns);
	return ret;
}
