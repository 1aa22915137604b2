/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * vhost_pair: a one-process integration test of a vhost-user front end
 * (net_vnapi, or DPDK's net_virtio_user as the reference) against DPDK's
 * net_vhost back end.
 *
 * Both ports live in this process and are driven from the main lcore only:
 * net_vhost's rx burst dequeues from the guest's tx ring in the caller's
 * thread and its tx burst enqueues into the guest's rx ring, so traffic both
 * ways is deterministic and needs no second lcore.  The vhost-user control
 * plane runs in the vhost library's own thread.
 *
 * Every packet is Ethernet + IPv4 + UDP with a payload that carries a magic,
 * a sequence number, the frame length, the queue id and the direction,
 * followed by a byte pattern derived from all of them.  The receiver
 * regenerates the whole frame and compares every byte, and checks that the
 * sequence numbers arrive in order on the queue they were sent to.
 *
 * Scenario race (pair_race.c) is the rx interrupt arming race, made
 * deterministic: see that file. Scenarios drain and drain_stall
 * (pair_drain.c): stop drains tx.
 *
 * Usage: vhost_pair --scenario NAME --frontend DEVARGS --name TESTNAME
 *                   [--queues N] [--packets N] [--cycles N] [--timeout S]
 *                   [--bad DEVARGS]... [--log-level L] [--eal ARG]...
 *                   [--expect-indirect N]
 *                   [--rounds N] [--expect-lost N|any|all] [--timeout-ms MS]
 *                   [--restarts N] [--race-queue Q]   (race)
 *                   [--drain-ms MS]   (drain_stall; drain takes --cycles)
 * DEVARGS may hold {sock} (the back end's socket path) and {queues}.
 * Exit status 0 only when the last line is "RESULT: PASS".
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_vect.h>
#include <rte_eth_vhost.h>
#include <rte_vhost.h>

#include "peer_frame.h"
#include "peer_opt.h"
#include "peer_port.h"
#include "peer_tap.h"
#include "peer_util.h"
#include "pair.h"
#include "pair_offload.h"

#define PAIR_TX_ROUNDS      16
#define PAIR_MAX_FLOWS      (2 * PAIR_MAX_QUEUES)
#define PAIR_MAX_FRAME      9600
#define PAIR_POOL_SIZE      8191
#define PAIR_JUMBO_MTU      9000
#define PAIR_SEGS_MAX       64          /* net_vnapi's tx_desc_lim.nb_seg_max */
#define PAIR_MIN_FRAME      60

/* One direction on one queue pair: a sender queue and a receiver queue. */
struct pair_flow {
	char name[32];
	uint16_t tx_port;
	uint16_t rx_port;
	uint8_t queue;
	uint8_t dir;
	uint32_t total;
	uint32_t built;
	uint32_t sent;
	uint32_t received;
	struct peer_flow spec;    /* the frames (peer_flow.h) */
	struct peer_tally tally;  /* what came back of them */
	const uint16_t *sizes;
	unsigned int nb_sizes;
	struct rte_mempool *tx_pool;
	struct rte_mbuf *pend[PAIR_BURST];
	uint16_t pend_n;
	uint16_t pend_off;
	uint64_t bytes_sent;
	uint64_t bytes_rcvd;
	uint64_t tx_partial;
	uint64_t rx_tsc;    /* TSC cycles in rx bursts (diagnostic, printed) */
	uint64_t tx_tsc;    /* TSC cycles in tx bursts */
	uint32_t max_segs_sent;
	uint32_t max_segs_rcvd;
	bool segmented;     /* tx: 2..PAIR_SEGS_MAX segments (peer_mbuf_segs()) */
	uint32_t no_headroom; /* tx: segmented packets sent with no headroom */
	uint32_t short_chains; /* tx: segmented packets of 2..expect_indirect descriptors */
};

struct pair_opts pair_opts = {
	.scenario = NULL,
	.frontend = NULL,
	.name = NULL,
	.log_level = "*:warning",
	.queues = 1,
	.packets = 0,
	.cycles = 20,
	.timeout = 60.0,
	.expect_indirect = UINT32_MAX,
	.rounds = 200,
	.expect_lost = 0,
	.timeout_ms = 50,
	.restarts = 0,
	.drain_ms = UINT32_MAX,
};

struct pair_state pair = {
	.be_port = RTE_MAX_ETHPORTS,
	.fe_port = RTE_MAX_ETHPORTS,
};

static const char *const pool_names[POOL_MAX] = {
	[POOL_FE_RX] = "pair_fe_rx",
	[POOL_BE_RX] = "pair_be_rx",
	[POOL_FE_TX] = "pair_fe_tx",
	[POOL_BE_TX] = "pair_be_tx",
};

static uint8_t frame_buf[PAIR_MAX_FRAME];
static uint8_t expect_buf[PAIR_MAX_FRAME];
static uint32_t lsc_events;
static volatile sig_atomic_t sigpipes;


/* -------------------------------------------------------------- frames */

void
pair_flow_spec(struct peer_flow *pf, uint8_t queue, uint8_t dir)
{
	static const struct rte_ether_addr fe_mac = {
		.addr_bytes = { 0x02, 0x76, 0x6e, 0x00, 0x00, 0x01 } };
	static const struct rte_ether_addr be_mac = {
		.addr_bytes = { 0x02, 0x76, 0x6e, 0x00, 0x00, 0x02 } };

	*pf = (struct peer_flow){
		.udp = {
			.src = dir == PAIR_FE_TO_BE ? fe_mac : be_mac,
			.dst = dir == PAIR_FE_TO_BE ? be_mac : fe_mac,
			.ip_src = RTE_IPV4(10, dir, queue, 1),
			.ip_dst = RTE_IPV4(10, dir, queue, 2),
			.port_src = (uint16_t)(4000 + queue),
			.port_dst = (uint16_t)(5000 + queue),
			.ttl = 64,
		},
		.run = PAIR_RUN,
		.flow = queue,
		.kind = dir,
	};
}

void
pair_frame_fill(uint8_t *buf, uint32_t len, uint32_t seq, uint8_t queue, uint8_t dir)
{
	struct peer_flow pf;

	pair_flow_spec(&pf, queue, dir);
	peer_flow_build(&pf, buf, len, seq, 0);
}

/*
 * Packet @p seq of a segmented flow: how many segments (2..PAIR_SEGS_MAX,
 * mostly 2..17, every 50th the maximum) and whether the first segment has
 * no headroom (every third: the driver cannot put the virtio-net header in
 * front of the data and chains a separate header descriptor).
 */
static uint32_t
segs_count(uint32_t seq, uint32_t len)
{
	uint32_t n = seq % 50 == 7 ? PAIR_SEGS_MAX : 2 + seq % 16;

	return RTE_MIN(n, len);
}

static bool
segs_no_headroom(uint32_t seq)
{
	return seq % 3 == 1;
}

static uint32_t
flow_size(const struct pair_flow *f, uint32_t seq)
{
	return f->sizes[seq % f->nb_sizes];
}

/* Check one received packet against what flow f must deliver next. */
static int
flow_verify(struct pair_flow *f, const struct rte_mbuf *m)
{
	static const struct peer_expect as_sent = { .xform = PEER_XFORM_IO };
	const struct rte_mbuf *s;
	const uint8_t *data;
	struct peer_flow_hdr h;
	uint32_t segs = 0, sum = 0, exp_len, i;

	for (s = m; s != NULL; s = s->next) {
		segs++;
		sum += s->data_len;
	}
	if (segs != m->nb_segs || sum != m->pkt_len)
		return peer_fail("%s: malformed mbuf: nb_segs %u (chain %u), pkt_len %u (sum of data_len %u)",
			    f->name, m->nb_segs, segs, m->pkt_len, sum);
	if (m->pkt_len > PAIR_MAX_FRAME)
		return peer_fail("%s: packet %u: unexpected length %u",
			    f->name, f->received, m->pkt_len);
	data = rte_pktmbuf_read(m, 0, m->pkt_len, frame_buf);
	if (peer_flow_peek(data, m->pkt_len, PAIR_RUN, &h) != 0 || h.kind != f->dir ||
	    h.flow != f->queue)
		return peer_fail("%s: packet %u: foreign packet (length %u, magic %#x run %#x dir %u queue %u)",
			    f->name, f->received, m->pkt_len, h.magic, h.run, h.kind, h.flow);
	if (h.seq != f->tally.back)
		return peer_fail("%s: order: expected seq %" PRIu64 ", got %u",
			    f->name, f->tally.back, h.seq);
	exp_len = flow_size(f, h.seq);
	if (m->pkt_len != exp_len)
		return peer_fail("%s: seq %u: length %u, sent %u",
			    f->name, h.seq, m->pkt_len, exp_len);
	i = peer_flow_diff(&f->spec, &as_sent, data, exp_len, &h);
	if (i != exp_len) {
		pair_frame_fill(expect_buf, exp_len, h.seq, f->queue, f->dir);
		return peer_fail("%s: seq %u (len %u, %u segs): byte %u is %#x, sent %#x",
			    f->name, h.seq, exp_len, segs, i, data[i],
			    expect_buf[i]);
	}
	switch (peer_tally_back(&f->tally, h.seq, false)) {
	case PEER_TALLY_BACK:
		break;
	case PEER_TALLY_STRAY:
		return peer_fail("%s: seq %u was never sent", f->name, h.seq);
	default:
		return peer_fail("%s: seq %u came back twice", f->name, h.seq);
	}
	f->received++;
	f->bytes_rcvd += exp_len;
	if (segs > f->max_segs_rcvd)
		f->max_segs_rcvd = segs;
	return 0;
}

static void
flow_init(struct pair_flow *f, uint8_t dir, uint8_t queue, uint32_t total,
	  const uint16_t *sizes, unsigned int nb_sizes)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s q%u",
		 dir == PAIR_FE_TO_BE ? "fe->be" : "be->fe", queue);
	f->dir = dir;
	f->queue = queue;
	f->total = total;
	pair_flow_spec(&f->spec, queue, dir);
	f->sizes = sizes;
	f->nb_sizes = nb_sizes;
	if (dir == PAIR_FE_TO_BE) {
		f->tx_port = pair.fe_port;
		f->rx_port = pair.be_port;
		f->tx_pool = pair.pools.mp[POOL_FE_TX];
	} else {
		f->tx_port = pair.be_port;
		f->rx_port = pair.fe_port;
		f->tx_pool = pair.pools.mp[POOL_BE_TX];
	}
}

static void
flows_release(struct pair_flow *fl, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		while (fl[i].pend_off < fl[i].pend_n)
			rte_pktmbuf_free(fl[i].pend[fl[i].pend_off++]);
		fl[i].pend_n = fl[i].pend_off = 0;
		peer_tally_free(&fl[i].tally);
	}
}

/* Make the next burst of flow f; 0 or -1. */
static int
flow_build(struct pair_flow *f)
{
	uint32_t k = RTE_MIN((uint32_t)PAIR_BURST, f->total - f->built);
	uint32_t i, len;

	for (i = 0; i < k; i++) {
		len = flow_size(f, f->built);
		pair_frame_fill(frame_buf, len, f->built, f->queue, f->dir);
		if (f->segmented) {
			f->pend[i] = peer_mbuf_segs(f->tx_pool, frame_buf, len,
						   segs_count(f->built, len),
						   segs_no_headroom(f->built));
			if (segs_no_headroom(f->built))
				f->no_headroom++;
			/* The header is a descriptor of its own without headroom. */
			if (f->pend[i] != NULL &&
			    f->pend[i]->nb_segs + (segs_no_headroom(f->built) ? 1u : 0u) <=
			    pair_opts.expect_indirect)
				f->short_chains++;
		} else {
			f->pend[i] = peer_mbuf_copy(f->tx_pool, frame_buf, len, UINT32_MAX);
		}
		if (f->pend[i] == NULL) {
			f->pend_n = (uint16_t)i;
			f->pend_off = 0;
			return peer_fail("%s: tx pool %s exhausted at seq %u (in use %u)",
				    f->name, f->tx_pool->name, f->built,
				    rte_mempool_in_use_count(f->tx_pool));
		}
		if (f->pend[i]->nb_segs > f->max_segs_sent)
			f->max_segs_sent = f->pend[i]->nb_segs;
		f->built++;
	}
	f->pend_n = (uint16_t)k;
	f->pend_off = 0;
	return 0;
}

/* Receive on flow f's queue; every packet must belong to f. */
static int
flow_rx(struct pair_flow *f, uint16_t *got)
{
	struct rte_mbuf *rx[PAIR_BURST];
	uint16_t n, i;
	int ret = 0;

	uint64_t t0 = rte_rdtsc();

	n = rte_eth_rx_burst(f->rx_port, f->queue, rx, PAIR_BURST);
	f->rx_tsc += rte_rdtsc() - t0;
	for (i = 0; i < n; i++) {
		if (ret == 0 && f->received >= f->total)
			ret = peer_fail("%s: extra packet after all %u arrived",
				   f->name, f->total);
		if (ret == 0)
			ret = flow_verify(f, rx[i]);
		rte_pktmbuf_free(rx[i]);
	}
	if (got != NULL)
		*got = n;
	return ret;
}

/*
 * Run all flows to completion, interleaved in this thread: tx a burst
 * (retrying what a partial burst left), then poll the receiving queue.
 */
static int
flows_run(struct pair_flow *fl, unsigned int n, double timeout)
{
	double t0 = peer_now_s(), deadline = t0 + timeout, t;
	unsigned int i, r;
	uint16_t nb, got, want, k;
	bool done;

	for (;;) {
		done = true;
		for (i = 0; i < n; i++) {
			struct pair_flow *f = &fl[i];

			/*
			 * Several bursts per receive poll, so that the ring
			 * fills and partial bursts are exercised and retried.
			 */
			for (r = 0; r < PAIR_TX_ROUNDS && f->sent < f->total;
			     r++) {
				if (f->pend_off == f->pend_n &&
				    flow_build(f) != 0)
					goto fail;
				uint64_t t1 = rte_rdtsc();

				want = (uint16_t)(f->pend_n - f->pend_off);
				nb = rte_eth_tx_burst(f->tx_port, f->queue,
						      f->pend + f->pend_off,
						      want);
				f->tx_tsc += rte_rdtsc() - t1;
				if (peer_tally_sent(&f->tally, nb) != 0) {
					peer_fail("%s: out of memory", f->name);
					goto fail;
				}
				for (k = 0; k < nb; k++) {
					f->bytes_sent +=
						f->pend[f->pend_off]->pkt_len;
					f->pend_off++;
					f->sent++;
				}
				if (nb < want) {
					f->tx_partial++;
					break;
				}
			}
			if (flow_rx(f, NULL) != 0)
				goto fail;
			if (f->received < f->total)
				done = false;
		}
		if (done)
			break;
		if (peer_now_s() > deadline) {
			for (i = 0; i < n; i++)
				printf("# %s: sent %u received %u of %u\n",
				       fl[i].name, fl[i].sent, fl[i].received,
				       fl[i].total);
			peer_fail("traffic did not complete within %.0f s", timeout);
			goto fail;
		}
	}
	t = peer_now_s() - t0;

	/* Nothing more may arrive: no duplicates, no strays. */
	deadline = peer_now_s() + 0.05;
	while (peer_now_s() < deadline) {
		for (i = 0; i < n; i++) {
			if (flow_rx(&fl[i], &got) != 0)
				goto fail;
		}
	}
	for (i = 0; i < n; i++)
		printf("# %-10s %8u pkts %10" PRIu64 " bytes, partial tx bursts %" PRIu64 ", max segs tx %u rx %u; TSC per packet in tx bursts %.1f, rx bursts %.1f (all calls, empty polls too)\n",
		       fl[i].name, fl[i].received, fl[i].bytes_rcvd,
		       fl[i].tx_partial, fl[i].max_segs_sent,
		       fl[i].max_segs_rcvd,
		       fl[i].received ? (double)fl[i].tx_tsc / fl[i].received : 0.0,
		       fl[i].received ? (double)fl[i].rx_tsc / fl[i].received : 0.0);
	printf("# traffic took %.3f s\n", t);
	flows_release(fl, n);
	return 0;
fail:
	flows_release(fl, n);
	return -1;
}

/*
 * The flows' outcome, read back for the check that reports it: every flow
 * sent and received exactly its total, the bytes received are the bytes
 * sent, and @want packets were received over all of them.
 */
static bool
flows_exact(const struct pair_flow *fl, unsigned int n, uint64_t want)
{
	uint64_t got = 0;
	unsigned int i;
	bool ok = n > 0;

	for (i = 0; i < n; i++) {
		ok = ok && fl[i].sent == fl[i].total && fl[i].received == fl[i].total &&
		     fl[i].bytes_rcvd == fl[i].bytes_sent;
		got += fl[i].received;
	}
	return ok && got == want;
}

/* The packets received over all flows. */
static uint64_t
flows_received(const struct pair_flow *fl, unsigned int n)
{
	uint64_t got = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		got += fl[i].received;
	return got;
}

/* The port's link status now (up: true). */
static bool
link_is_up(uint16_t port)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

/* Every mempool's in-use count, and the fd count unless ref_fds < 0, is @ref now. */
static bool
pools_back(const unsigned int ref[PEER_POOLS_MAX], int ref_fds)
{
	unsigned int cur[PEER_POOLS_MAX], i;
	bool same = ref_fds < 0 || peer_count_fds() == ref_fds;

	peer_pools_in_use(&pair.pools, cur);
	for (i = 0; i < pair.pools.n; i++)
		same = same && cur[i] == ref[i];
	return same;
}

/* The mbufs in use over every mempool. */
static unsigned int
pools_in_use(void)
{
	unsigned int cur[PEER_POOLS_MAX], i, sum = 0;

	peer_pools_in_use(&pair.pools, cur);
	for (i = 0; i < pair.pools.n; i++)
		sum += cur[i];
	return sum;
}

/* ---------------------------------------------------------- resources */

int
pair_fe_remove_check(const unsigned int ref0[PEER_POOLS_MAX], int ref_fds)
{
	int ret = peer_port_remove(pair.fe_name, &pair.fe_port, &pair.fe_probed);

	if (ret != 0)
		return peer_fail("close and remove of the front end: %d", ret);
	if (peer_pools_wait(&pair.pools, "front end removed", ref0, ref_fds, 5.0) != 0)
		return -1;
	peer_tap(pools_back(ref0, ref_fds),
		 "front end removed: every mempool%s back to its value before probe (%u mbufs in use)",
		 ref_fds >= 0 ? " and the fd count" : "", pools_in_use());
	return !peer_failed() ? 0 : -1;
}

/* --------------------------------------------------------------- ports */

int
pair_wait_link(uint16_t port, const char *who, bool up, double timeout)
{
	struct rte_eth_link link;
	double took;

	if (peer_link_wait(port, up, timeout, NULL, &link, &took) != 0)
		return peer_fail("%s link not %s within %.0f s", who, up ? "up" : "down", timeout);
	printf("# %s link %s after %.3f s (speed %u)\n", who, up ? "up" : "down", took,
	       link.link_speed);
	return 0;
}

/* The feature bits the front end negotiated, as the back end sees them. */
static int
be_features(const char *phase, uint64_t *f)
{
	int vid = rte_eth_vhost_get_vid_from_port_id(pair.be_port);

	*f = 0;
	if (vid < 0 || rte_vhost_get_negotiated_features(vid, f) != 0)
		return peer_fail("%s: cannot read the negotiated features (vid %d)", phase, vid);
	return 0;
}

static int
check_features(void)
{
	uint64_t f;

	if (pair_opts.features_on == 0 && pair_opts.features_off == 0)
		return 0;
	if (be_features("link up", &f) != 0)
		return -1;
	if ((f & pair_opts.features_on) != pair_opts.features_on || (f & pair_opts.features_off) != 0)
		return peer_fail("negotiated features 0x%" PRIx64 ": expected bits 0x%" PRIx64
			    " set and 0x%" PRIx64 " clear", f, pair_opts.features_on,
			    pair_opts.features_off);
	printf("# negotiated features 0x%" PRIx64 " (bits 0x%" PRIx64 " set, 0x%" PRIx64
	       " clear, as expected)\n", f, pair_opts.features_on, pair_opts.features_off);
	return 0;
}

/*
 * --rx-path: the front end's rx burst mode on every queue. "auto": the
 * driver's rule (vnapi_rxtx_select()), AVX2 exactly when the EAL allows
 * 256-bit SIMD and the CPU has AVX2 (this test runs no rx offload); "scalar".
 */
static int
check_rx_path(void)
{
	const char *want;
	uint16_t q;

	if (pair_opts.rx_path == NULL)
		return 0;
	if (strcmp(pair_opts.rx_path, "scalar") == 0)
		want = "Scalar";
	else if (strcmp(pair_opts.rx_path, "auto") == 0)
#ifdef RTE_ARCH_X86
		want = rte_vect_get_max_simd_bitwidth() >= RTE_VECT_SIMD_256 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) == 1 ? "Vector AVX2" : "Scalar";
#else
		want = "Scalar";
#endif
	else
		return peer_fail("--rx-path %s: expected auto or scalar", pair_opts.rx_path);
	for (q = 0; q < pair_opts.queues; q++) {
		struct rte_eth_burst_mode mode;
		int ret = rte_eth_rx_burst_mode_get(pair.fe_port, q, &mode);

		if (ret != 0)
			return peer_fail("rx queue %u: rte_eth_rx_burst_mode_get: %s", q,
					 rte_strerror(-ret));
		if (strncmp(mode.info, want, strlen(want)) != 0)
			return peer_fail("rx queue %u: burst mode '%s', expected '%s...' (--rx-path %s, SIMD width %u)",
					 q, mode.info, want, pair_opts.rx_path,
					 (unsigned int)rte_vect_get_max_simd_bitwidth());
		printf("# rx queue %u: burst mode '%s', as expected\n", q, mode.info);
	}
	return 0;
}

static int
wait_links_up(void)
{
	if (pair_wait_link(pair.be_port, "back end", true, 10.0) != 0)
		return -1;
	if (pair_wait_link(pair.fe_port, "front end", true, 10.0) != 0)
		return -1;
	if (check_rx_path() != 0)
		return -1;
	return check_features();
}

/* The offload scenario: net_vhost's extra devargs, offloads at configure. */
static const char *be_extra_devargs = "";
static bool offload_conf;

static int
port_setup(uint16_t port, const char *who, uint16_t nb_q, uint32_t mtu,
	   bool lsc, struct rte_mempool *rx_pool)
{
	struct peer_port_conf c = {
		.nb_queues = nb_q,
		.mtu = mtu,
		.lsc = lsc,
		.rx_pool = rx_pool,
	};
	struct rte_eth_dev_info info;
	int ret;

	if (offload_conf && rte_eth_dev_info_get(port, &info) == 0)
		pair_offload_conf(port == pair.fe_port, &info, &c.rx_offloads, &c.tx_offloads);
	/* configure fails if the front end does not offer it */
	if (pair_opts.tx_fast_free && port == pair.fe_port)
		c.tx_offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	ret = peer_port_start(port, who, &c);

	if (ret != 0)
		return peer_fail("%s: setup of %u queue(s) failed: %d", who, nb_q, ret);
	return 0;
}

int
pair_be_create(uint16_t nb_q, uint32_t mtu)
{
	int ret = peer_vhost_probe_extra(PAIR_BE_NAME, pair.sock_path, nb_q, be_extra_devargs,
					 &pair.be_port);

	if (ret != 0)
		return peer_fail("back end %s at %s: %d", PAIR_BE_NAME, pair.sock_path, ret);
	pair.be_probed = true;
	return port_setup(pair.be_port, "back end", nb_q, mtu, false,
			  pair.pools.mp[POOL_BE_RX]);
}

int
pair_fe_probe(void)
{
	int ret = rte_dev_probe(pair.fe_devargs);

	if (ret != 0)
		return peer_fail("probe front end '%s': %d (%s)", pair.fe_devargs, ret,
				 strerror(-ret));
	pair.fe_probed = true;
	if (rte_eth_dev_get_port_by_name(pair.fe_name, &pair.fe_port) != 0)
		return peer_fail("front end probed but no port named %s", pair.fe_name);
	return 0;
}

/* ---------------------------------------------------------------- stats */

/*
 * A per-queue packet counter by xstat name: struct rte_eth_stats has per-queue
 * arrays only up to DPDK 25.07. The front ends (vnapi, virtio_user) name
 * theirs "rx_q0_good_packets"; net_vhost has ethdev's generic ones
 * ("rx_q0_packets", from its stats_get, so reset with the port's stats, unlike
 * the vhost library's own vring counters). UINT64_MAX when there is none.
 */
static uint64_t
queue_packets(uint16_t port, const char *dir, unsigned int q)
{
	char name[RTE_ETH_XSTATS_NAME_SIZE];
	uint64_t id, v;

	snprintf(name, sizeof(name), port == pair.be_port ? "%s_q%u_packets" : "%s_q%u_good_packets",
		 dir, q);
	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return UINT64_MAX;
	return v;
}

int
pair_check_stats(const struct pair_counts *c)
{
	struct rte_eth_stats fs, bs;
	uint64_t fe_o = 0, fe_i = 0, be_o, be_i;
	const uint64_t fe_ob = c->bytes[0], fe_ib = c->bytes[1];
	const uint64_t *fq_o = c->pkts[0], *fq_i = c->pkts[1];
	unsigned int q;
	bool ok = true;

	if (rte_eth_stats_get(pair.fe_port, &fs) != 0 ||
	    rte_eth_stats_get(pair.be_port, &bs) != 0)
		return peer_fail("rte_eth_stats_get failed");
	for (q = 0; q < PAIR_MAX_QUEUES; q++) {
		fe_o += fq_o[q];
		fe_i += fq_i[q];
	}
	be_i = fe_o;
	be_o = fe_i;
	printf("# stats front end: ipackets %" PRIu64 " opackets %" PRIu64 " ibytes %" PRIu64 " obytes %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64 " imissed %" PRIu64 " rx_nombuf %" PRIu64 "\n",
	       fs.ipackets, fs.opackets, fs.ibytes, fs.obytes, fs.ierrors,
	       fs.oerrors, fs.imissed, fs.rx_nombuf);
	printf("# stats back end:  ipackets %" PRIu64 " opackets %" PRIu64 " ibytes %" PRIu64 " obytes %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64 " imissed %" PRIu64 " rx_nombuf %" PRIu64 "\n",
	       bs.ipackets, bs.opackets, bs.ibytes, bs.obytes, bs.ierrors,
	       bs.oerrors, bs.imissed, bs.rx_nombuf);

	peer_tap(fs.opackets == fe_o, "front end opackets %" PRIu64 " == %" PRIu64,
	    fs.opackets, fe_o);
	peer_tap(bs.ipackets == be_i, "back end ipackets %" PRIu64 " == %" PRIu64,
	    bs.ipackets, be_i);
	peer_tap(bs.opackets == be_o, "back end opackets %" PRIu64 " == %" PRIu64,
	    bs.opackets, be_o);
	peer_tap(fs.ipackets == fe_i, "front end ipackets %" PRIu64 " == %" PRIu64,
	    fs.ipackets, fe_i);
	peer_tap(fs.obytes == fe_ob && bs.ibytes == fe_ob,
	    "bytes fe->be: front end obytes %" PRIu64 ", back end ibytes %" PRIu64 ", sent %" PRIu64,
	    fs.obytes, bs.ibytes, fe_ob);
	peer_tap(fs.ibytes == fe_ib && bs.obytes == fe_ib,
	    "bytes be->fe: back end obytes %" PRIu64 ", front end ibytes %" PRIu64 ", sent %" PRIu64,
	    bs.obytes, fs.ibytes, fe_ib);
	peer_tap(fs.ierrors == 0 && fs.oerrors == 0 && fs.rx_nombuf == 0 &&
	    bs.ierrors == 0,
	    "no errors (front end ierrors %" PRIu64 " oerrors %" PRIu64 " rx_nombuf %" PRIu64 ", back end ierrors %" PRIu64 ")",
	    fs.ierrors, fs.oerrors, fs.rx_nombuf, bs.ierrors);
	for (q = 0; q < pair_opts.queues; q++) {
		uint64_t fe_qo = queue_packets(pair.fe_port, "tx", q);
		uint64_t be_qi = queue_packets(pair.be_port, "rx", q);
		uint64_t be_qo = queue_packets(pair.be_port, "tx", q);
		uint64_t fe_qi = queue_packets(pair.fe_port, "rx", q);

		ok = fe_qo == fq_o[q] && be_qi == fq_o[q] && be_qo == fq_i[q] && fe_qi == fq_i[q];
		peer_tap(ok, "queue %u: fe tx_q%u_good_packets %" PRIu64 " be rx_q%u_packets %" PRIu64 " (sent %" PRIu64 "), be tx_q%u_packets %" PRIu64 " fe rx_q%u_good_packets %" PRIu64 " (sent %" PRIu64 ")",
		    q, q, fe_qo, q, be_qi, fq_o[q], q, be_qo, q, fe_qi, fq_i[q]);
	}
	return !peer_failed() ? 0 : -1;
}

/* The counters must agree with what flows @p fl (all complete) delivered. */
static int
check_stats(const struct pair_flow *fl, unsigned int n)
{
	struct pair_counts c;
	unsigned int i, d;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < n; i++) {
		d = fl[i].dir == PAIR_FE_TO_BE ? 0 : 1;
		c.pkts[d][fl[i].queue] += fl[i].received;
		c.bytes[d] += fl[i].bytes_rcvd;
	}
	return pair_check_stats(&c);
}

static void
stats_reset(void)
{
	rte_eth_stats_reset(pair.fe_port);
	rte_eth_stats_reset(pair.be_port);
}

/* Both directions on every queue; total for queue q is base + q * step. */
static unsigned int
flows_both(struct pair_flow *fl, uint32_t base, uint32_t step,
	   const uint16_t *sizes, unsigned int nb_sizes)
{
	unsigned int q, n = 0;

	for (q = 0; q < pair_opts.queues; q++) {
		flow_init(&fl[n++], PAIR_FE_TO_BE, (uint8_t)q, base + q * step,
			  sizes, nb_sizes);
		flow_init(&fl[n++], PAIR_BE_TO_FE, (uint8_t)q, base + q * step,
			  sizes, nb_sizes);
	}
	return n;
}

/* ------------------------------------------------------------ scenarios */

static int
fe_bringup(uint32_t mtu, bool want_lsc, bool *lsc_on)
{
	struct rte_eth_dev_info info;
	bool lsc = false;

	if (pair_fe_probe() != 0)
		return -1;
	if (rte_eth_dev_info_get(pair.fe_port, &info) != 0)
		return peer_fail("front end dev_info_get failed");
	if (want_lsc && info.dev_flags != NULL &&
	    (*info.dev_flags & RTE_ETH_DEV_INTR_LSC))
		lsc = true;
	if (lsc_on != NULL)
		*lsc_on = lsc;
	if (port_setup(pair.fe_port, "front end", (uint16_t)pair_opts.queues, mtu, lsc,
		       pair.pools.mp[POOL_FE_RX]) != 0)
		return -1;
	return wait_links_up();
}

int
pair_fe_start(void)
{
	return fe_bringup(0, false, NULL);
}

/*
 * The back end with the run's queues, the front end brought up with the
 * default MTU, counters zeroed; @p ref0 gets the pools' mbufs in use before
 * the front end took any (what must be back at the end).
 */
static int
pair_up(unsigned int *ref0)
{
	if (pair_be_create((uint16_t)pair_opts.queues, 0) != 0)
		return -1;
	peer_pools_in_use(&pair.pools, ref0);
	if (fe_bringup(0, false, NULL) != 0)
		return -1;
	stats_reset();
	return 0;
}

static int
scenario_count(void)
{
	static const uint16_t sz[] = { 64 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t total = pair_opts.packets ? pair_opts.packets : 100000;
	unsigned int ref0[PEER_POOLS_MAX], n;

	if (pair_up(ref0) != 0)
		return -1;
	n = flows_both(fl, total, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	peer_tap(flows_exact(fl, n, 2ull * total * pair_opts.queues),
	    "%u x 64-byte frames each way on %u queue(s), every byte and the order checked (%" PRIu64 " received)",
	    total, pair_opts.queues, flows_received(fl, n));
	if (check_stats(fl, n) != 0)
		return -1;
	return pair_fe_remove_check(ref0, -1);
}

static int
scenario_sizes(void)
{
	static const uint16_t sz[] = { 60, 64, 512, 1518, 9000 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t per_size = pair_opts.packets ? pair_opts.packets : 500;
	const uint16_t *sizes = pair_opts.nb_sizes ? pair_opts.sizes : sz;
	unsigned int nb = pair_opts.nb_sizes ? pair_opts.nb_sizes : RTE_DIM(sz);
	unsigned int ref0[PEER_POOLS_MAX], n, i;
	bool chains = false;

	if (pair_be_create((uint16_t)pair_opts.queues, PAIR_JUMBO_MTU) != 0)
		return -1;
	peer_pools_in_use(&pair.pools, ref0);
	if (fe_bringup(PAIR_JUMBO_MTU, false, NULL) != 0)
		return -1;
	stats_reset();
	n = flows_both(fl, per_size * nb, 0, sizes, nb);
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	for (i = 0; i < nb; i++)
		chains = chains || sizes[i] > RTE_MBUF_DEFAULT_DATAROOM;
	for (i = 0; chains && i < n; i++) {
		/* 9000 bytes cannot fit one 2048-byte mbuf either way. */
		peer_tap(fl[i].max_segs_sent > 1 && fl[i].max_segs_rcvd > 1,
		    "%s: jumbo frames went as chains (max segs tx %u, rx %u)",
		    fl[i].name, fl[i].max_segs_sent, fl[i].max_segs_rcvd);
	}
	peer_tap(flows_exact(fl, n, 2ull * per_size * nb * pair_opts.queues),
	    "%u frames of each of %u sizes (60, 64, 512, 1518, 9000 by default) each way, every byte checked (%" PRIu64 " received)",
	    per_size, nb, flows_received(fl, n));
	if (check_stats(fl, n) != 0)
		return -1;
	return pair_fe_remove_check(ref0, -1);
}

/*
 * Multi-segment tx from the front end: every packet front end -> back end
 * is a chain of 2..64 mbufs (peer_mbuf_segs()), of six frame sizes, every
 * third without headroom (separate header descriptor); the back end sends
 * plain frames the other way. Counts and bytes exact, every byte checked;
 * with --expect-indirect N, the front end's tx_qN_indirect xstat must count
 * exactly the packets of 2..N descriptors (the header is one more without
 * headroom): those went in an indirect table, longer chains direct (0:
 * none, indirect=0). Then the front end is removed and every
 * mempool must be back to its value before the probe.
 */
static int
scenario_segs(void)
{
	static const uint16_t sz[] = { 60, 64, 200, 512, 1000, 1514 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t total = pair_opts.packets ? pair_opts.packets : 20000;
	unsigned int ref0[PEER_POOLS_MAX], n, i, q;
	char name[64];
	uint64_t v;

	if (pair_up(ref0) != 0)
		return -1;
	n = flows_both(fl, total, 0, sz, RTE_DIM(sz));
	for (i = 0; i < n; i++)
		fl[i].segmented = fl[i].dir == PAIR_FE_TO_BE;
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (fl[i].dir != PAIR_FE_TO_BE)
			continue;
		peer_tap(fl[i].max_segs_sent == PAIR_SEGS_MAX && fl[i].no_headroom > 0,
		    "%s: chains of 2..%u segments sent (max %u), %u without headroom",
		    fl[i].name, PAIR_SEGS_MAX, fl[i].max_segs_sent, fl[i].no_headroom);
	}
	peer_tap(flows_exact(fl, n, 2ull * total * pair_opts.queues),
	    "%u chained frames front end -> back end per queue (%u queue(s)), every byte checked (%" PRIu64 " received both ways)",
	    total, pair_opts.queues, flows_received(fl, n));
	if (check_stats(fl, n) != 0)
		return -1;
	for (q = 0; pair_opts.expect_indirect != UINT32_MAX && q < pair_opts.queues; q++) {
		uint32_t want = 0;

		for (i = 0; i < n; i++)
			if (fl[i].dir == PAIR_FE_TO_BE && fl[i].queue == q)
				want += fl[i].short_chains;
		snprintf(name, sizeof(name), "tx_q%u_indirect", q);
		v = peer_xstat(pair.fe_port, name);
		peer_tap(v == want && (pair_opts.expect_indirect == 0 || (want > 0 && want < total)),
		    "%s = %" PRIu64 " (expected %u of %u: the chains of at most %u descriptors)",
		    name, v, want, total, pair_opts.expect_indirect);
	}

	return pair_fe_remove_check(ref0, -1);
}

static int
scenario_mq(void)
{
	static const uint16_t sz[] = { 64, 128, 256 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t base = pair_opts.packets ? pair_opts.packets : 20000;
	unsigned int ref0[PEER_POOLS_MAX], n;

	if (pair_opts.queues < 2)
		return peer_fail("mq needs --queues >= 2");
	if (pair_up(ref0) != 0)
		return -1;
	/* Distinct totals per queue so that a mixed-up queue shows. */
	n = flows_both(fl, base, base / 2, sz, RTE_DIM(sz));
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	if (check_stats(fl, n) != 0)
		return -1;
	return pair_fe_remove_check(ref0, -1);
}

static int
scenario_cycles(void)
{
	static const uint16_t sz[] = { 64, 1000 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t per_cycle = pair_opts.packets ? pair_opts.packets : 2000;
	unsigned int ref0[PEER_POOLS_MAX], ref1[PEER_POOLS_MAX], refs[PEER_POOLS_MAX];
	unsigned int c, n;
	int fds0, fds1, fdss = -1, ret;

	if (pair_be_create((uint16_t)pair_opts.queues, 0) != 0)
		return -1;
	peer_pools_in_use(&pair.pools, ref0);
	fds0 = peer_count_fds();
	peer_pools_print(&pair.pools, "before the front end", ref0, fds0);

	if (fe_bringup(0, false, NULL) != 0)
		return -1;
	n = flows_both(fl, per_cycle, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	peer_pools_in_use(&pair.pools, ref1);
	fds1 = peer_count_fds();
	peer_pools_print(&pair.pools, "after the first start and traffic", ref1, fds1);

	for (c = 1; c <= pair_opts.cycles; c++) {
		ret = rte_eth_dev_stop(pair.fe_port);
		if (ret != 0)
			return peer_fail("cycle %u: stop: %d", c, ret);
		/* Stopped, the front end holds the same every time. */
		if (c == 1) {
			peer_pools_in_use(&pair.pools, refs);
			fdss = peer_count_fds();
			peer_pools_print(&pair.pools, "first stop", refs, fdss);
		} else if (peer_pools_wait(&pair.pools, "stopped", refs, fdss, 5.0) != 0) {
			return peer_fail("cycle %u: stopped state differs from the first stop",
				    c);
		}
		/* Every fifth cycle also reconfigures: configure and queue
		 * setup again (the old queues are released), then start. */
		if (c % 5 == 0)
			ret = port_setup(pair.fe_port, "front end", (uint16_t)pair_opts.queues, 0, false,
					 pair.pools.mp[POOL_FE_RX]);
		else
			ret = rte_eth_dev_start(pair.fe_port);
		if (ret != 0) {
			struct rte_eth_stats st;

			peer_pools_in_use(&pair.pools, refs);
			peer_pools_print(&pair.pools, "failed start", refs, peer_count_fds());
			if (rte_eth_stats_get(pair.fe_port, &st) == 0)
				printf("# front end rx_nombuf %" PRIu64 "\n",
				       st.rx_nombuf);
			return peer_fail("cycle %u: start: %d", c, ret);
		}
		if (wait_links_up() != 0)
			return -1;
		n = flows_both(fl, per_cycle, 0, sz, RTE_DIM(sz));
		if (flows_run(fl, n, pair_opts.timeout) != 0)
			return -1;
		if (peer_pools_wait(&pair.pools, "after a cycle", ref1, fds1, 5.0) != 0)
			return peer_fail("cycle %u leaked (see above)", c);
		peer_tap(flows_exact(fl, n, 2ull * per_cycle * pair_opts.queues) &&
			 pools_back(ref1, fds1),
		    "cycle %u: stop, %sstart, %u packets each way, no mbuf or fd leaked (%" PRIu64 " received, %u mbufs in use)",
		    c, c % 5 == 0 ? "reconfigure, queue setup, " : "", per_cycle, flows_received(fl, n), pools_in_use());
	}

	return pair_fe_remove_check(ref0, fds0);
}

/* Runs in the EAL interrupt thread. */
static int
lsc_cb(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	RTE_SET_USED(port);
	RTE_SET_USED(type);
	RTE_SET_USED(arg);
	RTE_SET_USED(ret);
	__atomic_fetch_add(&lsc_events, 1, __ATOMIC_RELEASE);
	return 0;
}

static int
scenario_linkdown(void)
{
	static const uint16_t sz[] = { 64, 700 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	struct rte_mbuf *burst[PAIR_BURST], *rx[PAIR_BURST];
	struct rte_eth_dev_info info;
	uint32_t total = pair_opts.packets ? pair_opts.packets : 5000;
	uint32_t before, accepted = 0, late = 0, rcvd = 0, i, k;
	unsigned int ref0[PEER_POOLS_MAX], n, q;
	bool lsc = false;
	double deadline;
	uint16_t nb;
	int ret;

	if (pair_be_create((uint16_t)pair_opts.queues, 0) != 0)
		return -1;
	peer_pools_in_use(&pair.pools, ref0);
	if (pair_fe_probe() != 0)
		return -1;
	ret = rte_eth_dev_callback_register(pair.fe_port, RTE_ETH_EVENT_INTR_LSC,
					    lsc_cb, NULL);
	if (ret != 0)
		return peer_fail("callback_register: %d", ret);
	if (rte_eth_dev_info_get(pair.fe_port, &info) != 0)
		return peer_fail("front end dev_info_get failed");
	lsc = info.dev_flags != NULL &&
	      (*info.dev_flags & RTE_ETH_DEV_INTR_LSC) != 0;
	if (port_setup(pair.fe_port, "front end", (uint16_t)pair_opts.queues, 0, lsc,
		       pair.pools.mp[POOL_FE_RX]) != 0)
		return -1;
	if (wait_links_up() != 0)
		return -1;
	printf("# front end %s LSC interrupts\n",
	       lsc ? "advertises" : "does not advertise");
	n = flows_both(fl, total, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	peer_tap(flows_exact(fl, n, 2ull * total * pair_opts.queues),
		 "traffic before link down: %u packets each way (%" PRIu64 " received)", total, flows_received(fl, n));

	before = __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE);
	ret = rte_eth_dev_stop(pair.be_port);
	if (ret != 0)
		return peer_fail("back end stop: %d", ret);
	ret = rte_eth_dev_close(pair.be_port);
	if (ret != 0)
		return peer_fail("back end close: %d", ret);
	pair.be_port = RTE_MAX_ETHPORTS;
	if (pair_wait_link(pair.fe_port, "front end", false, 10.0) != 0)
		return -1;
	peer_tap(!link_is_up(pair.fe_port), "front end reports link down after the back end closed");
	if (lsc) {
		deadline = peer_now_s() + 5.0;
		while (__atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) == before &&
		       peer_now_s() < deadline)
			peer_sleep_us(1000);
		peer_tap(__atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) != before,
		    "LSC callback fired (%u events in total, %u before close)",
		    __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE), before);
	}

	/* Bursts on a dead link: no crash, nothing received or accepted. */
	for (i = 0; i < 200; i++) {
		for (q = 0; q < pair_opts.queues; q++) {
			nb = rte_eth_rx_burst(pair.fe_port, (uint16_t)q, rx,
					      PAIR_BURST);
			rcvd += nb;
			for (k = 0; k < nb; k++)
				rte_pktmbuf_free(rx[k]);
			for (k = 0; k < PAIR_BURST; k++) {
				pair_frame_fill(frame_buf, 64, k, (uint8_t)q,
					   PAIR_FE_TO_BE);
				burst[k] = peer_mbuf_copy(pair.pools.mp[POOL_FE_TX],
							 frame_buf, 64,
							 UINT32_MAX);
				if (burst[k] == NULL) {
					while (k-- > 0)
						rte_pktmbuf_free(burst[k]);
					return peer_fail("tx pool exhausted after link down (%u accepted)",
						    accepted);
				}
			}
			nb = rte_eth_tx_burst(pair.fe_port, (uint16_t)q, burst,
					      PAIR_BURST);
			accepted += nb;
			if (i >= 100)
				late += nb;
			for (k = nb; k < PAIR_BURST; k++)
				rte_pktmbuf_free(burst[k]);
		}
	}
	peer_tap(rcvd == 0, "rx bursts after link down returned %u packets", rcvd);
	if (pair_opts.tx_after_linkdown)
		/*
		 * Tolerated (net_virtio_user does it): tx fills what room the
		 * ring had; then it must return 0, never block or crash.
		 */
		peer_tap(late == 0,
		    "tx bursts after link down: %u packets accepted while the ring had room, none in the last 100 rounds (%u)",
		    accepted, late);
	else
		peer_tap(accepted == 0,
		    "tx bursts after link down accepted %u packets", accepted);

	/* Whatever a dead front end holds, it gives back when removed. */
	ret = peer_port_remove(pair.fe_name, &pair.fe_port, &pair.fe_probed);
	if (ret != 0)
		return peer_fail("close and remove of the front end after link down: %d", ret);
	if (peer_pools_wait(&pair.pools, "front end removed after link down", ref0, -1,
			    5.0) != 0)
		return -1;
	peer_tap(pools_back(ref0, -1),
		 "front end removed after link down: every mempool back to its value before probe (%u mbufs in use)",
		 pools_in_use());
	return !peer_failed() ? 0 : -1;
}

/*
 * A back end that writes nonsense: the test reaches into net_vhost's view of
 * the front end's rx ring (vring 0, split layout) and publishes a used entry
 * whose id is out of range. The front end must mark that queue broken, count
 * it, take the link down (with an LSC event) and keep running; a stop/start
 * lays the rings out anew and traffic flows again, exactly counted, with no
 * mbuf leaked.
 */
static int
scenario_badring(void)
{
	static const uint16_t sz[] = { 64 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	struct rte_mbuf *rx[PAIR_BURST];
	struct rte_vhost_vring vr;
	unsigned int ref0[PEER_POOLS_MAX], n;
	uint64_t bad_used;
	uint32_t rcvd = 0, i;
	uint16_t idx, size;
	double deadline;
	int vid, ret, k;
	bool lsc = false;
	unsigned int before;

	if (pair_be_create(1, 0) != 0)
		return -1;
	peer_pools_in_use(&pair.pools, ref0);
	if (pair_fe_probe() != 0)
		return -1;
	ret = rte_eth_dev_callback_register(pair.fe_port, RTE_ETH_EVENT_INTR_LSC, lsc_cb, NULL);
	if (ret != 0)
		return peer_fail("callback_register: %d", ret);
	if (port_setup(pair.fe_port, "front end", 1, 0, true, pair.pools.mp[POOL_FE_RX]) != 0 ||
	    wait_links_up() != 0)
		return -1;
	lsc = true;
	n = flows_both(fl, 1000, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	peer_tap(flows_exact(fl, n, 2000),
		 "traffic before the bad used entry: 1000 packets each way (%" PRIu64 " received)", flows_received(fl, n));

	vid = rte_eth_vhost_get_vid_from_port_id(pair.be_port);
	if (vid < 0 || rte_vhost_get_vhost_vring(vid, 0, &vr) != 0 || vr.used == NULL)
		return peer_fail("cannot reach the front end's rx vring through net_vhost (vid %d)", vid);
	size = vr.size;
	idx = __atomic_load_n(&vr.used->idx, __ATOMIC_ACQUIRE);
	vr.used->ring[idx & (size - 1)].id = size + 5u;   /* out of range */
	vr.used->ring[idx & (size - 1)].len = 64;
	__atomic_store_n(&vr.used->idx, (uint16_t)(idx + 1), __ATOMIC_RELEASE);
	before = __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE);

	/* The front end finds it on its next poll. */
	for (i = 0; i < 100; i++) {
		uint16_t nb = rte_eth_rx_burst(pair.fe_port, 0, rx, PAIR_BURST);

		rcvd += nb;
		for (k = 0; k < nb; k++)
			rte_pktmbuf_free(rx[k]);
	}
	peer_tap(rcvd == 0, "rx bursts on the broken ring returned %u packets", rcvd);
	if (pair_wait_link(pair.fe_port, "front end", false, 5.0) != 0)
		return -1;
	peer_tap(!link_is_up(pair.fe_port), "front end reports link down after the bad used entry");
	deadline = peer_now_s() + 5.0;
	while (lsc && __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) == before &&
	       peer_now_s() < deadline)
		peer_sleep_us(1000);
	peer_tap(__atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) != before, "LSC callback fired");

	bad_used = peer_xstat(pair.fe_port, "rx_q0_bad_used");
	peer_tap(bad_used == 1, "rx_q0_bad_used = %" PRIu64 " (expected 1)", bad_used);

	/* Restart: the rings are laid out anew; traffic flows again. */
	if (rte_eth_dev_stop(pair.fe_port) != 0 || rte_eth_dev_start(pair.fe_port) != 0)
		return peer_fail("front end stop/start after the broken ring failed");
	if (wait_links_up() != 0)
		return -1;
	stats_reset();
	n = flows_both(fl, 2000, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	peer_tap(flows_exact(fl, n, 4000),
		 "after stop/start: 2000 packets each way, every byte checked (%" PRIu64 " received)", flows_received(fl, n));
	if (check_stats(fl, n) != 0)
		return -1;

	return pair_fe_remove_check(ref0, -1);
}

static int
scenario_baddevargs(void)
{
	char args[1024], name[RTE_DEV_NAME_MAX_LEN];
	uint16_t ports_before, port;
	unsigned int i;
	size_t len;
	int ret;

	if (pair_opts.nb_bad == 0)
		return peer_fail("baddevargs needs at least one --bad");
	if (pair_be_create((uint16_t)pair_opts.queues, 0) != 0)
		return -1;
	for (i = 0; i < pair_opts.nb_bad; i++) {
		if (peer_subst(args, sizeof(args), pair_opts.bad[i], pair.sock_path,
			       pair_opts.queues) != 0)
			return peer_fail("--bad '%s' too long", pair_opts.bad[i]);
		len = strcspn(args, ",");
		snprintf(name, sizeof(name), "%.*s", (int)len, args);
		ports_before = rte_eth_dev_count_total();
		ret = rte_dev_probe(args);
		if (ret == 0) {
			peer_tap(false, "probe '%s' succeeded, expected failure",
			    args);
			rte_eal_hotplug_remove("vdev", name);
			continue;
		}
		peer_tap(ret < 0 && rte_eth_dev_count_total() == ports_before &&
		    rte_eth_dev_get_port_by_name(name, &port) != 0,
		    "probe '%s' failed with %d, %u ports before and %u after",
		    args, ret, ports_before,
		    rte_eth_dev_count_total());
	}
	/* The good devargs still work afterwards: no stale state left. */
	if (fe_bringup(0, false, NULL) != 0)
		return -1;
	peer_tap(rte_eth_dev_get_port_by_name(pair.fe_name, &port) == 0 && port == pair.fe_port &&
		 link_is_up(pair.fe_port),
		 "the good front end '%s' probes and links up afterwards (port %u)",
		 pair.fe_devargs, pair.fe_port);
	return !peer_failed() ? 0 : -1;
}

/* What pair_offload.c's checks need of this pair. */
static void
offload_ctx_init(struct pair_offload_ctx *ctx)
{
	ctx->fe_port = pair.fe_port;
	ctx->be_port = pair.be_port;
	ctx->fe_tx_pool = pair.pools.mp[POOL_FE_TX];
	ctx->be_tx_pool = pair.pools.mp[POOL_BE_TX];
	ctx->tap = peer_tap;
	ctx->timeout = pair_opts.timeout;
}

/*
 * Offloads (pair_offload.c) against net_vhost with tso=1, one queue pair:
 * checksum and TSO requests front end -> back end and back end -> front
 * end, IPv4 and IPv6, then the port counters. With --offloads-refused (the
 * front end probed with every offload devarg 0): nothing offered, every
 * offload refused at configure and at tx_prepare.
 */
static int
scenario_offload(void)
{
	struct pair_offload_ctx ctx;
	struct rte_eth_stats fs, bs;
	int ret = 0;

	be_extra_devargs = PAIR_OFFLOAD_BE_DEVARGS;
	offload_conf = true;
	if (pair_be_create(1, 0) != 0 || fe_bringup(0, false, NULL) != 0)
		return -1;
	offload_ctx_init(&ctx);
	if (pair_opts.offloads_refused)
		return pair_offload_refused(&ctx);
	rte_eth_stats_reset(pair.fe_port);
	rte_eth_stats_reset(pair.be_port);
	ret |= pair_offload_fe_to_be(&ctx, false);
	ret |= pair_offload_fe_to_be(&ctx, true);
	ret |= pair_offload_be_to_fe(&ctx, false);
	ret |= pair_offload_be_to_fe(&ctx, true);
	if (rte_eth_stats_get(pair.fe_port, &fs) != 0 ||
	    rte_eth_stats_get(pair.be_port, &bs) != 0)
		return peer_fail("rte_eth_stats_get failed");
	/* 6 packets per IP version front end -> back end, 4 back. */
	peer_tap(fs.opackets == 12 && bs.ipackets == 12 && bs.opackets == 8 && fs.ipackets == 8 &&
		 fs.obytes == bs.ibytes && fs.ibytes == bs.obytes && fs.oerrors == 0 &&
		 fs.ierrors == 0,
		 "counters: front end opackets %" PRIu64 " obytes %" PRIu64 ", back end ipackets %" PRIu64 " ibytes %" PRIu64 "; back end opackets %" PRIu64 " obytes %" PRIu64 ", front end ipackets %" PRIu64 " ibytes %" PRIu64 " (want 12, 12, 8, 8, bytes equal, no errors)",
		 fs.opackets, fs.obytes, bs.ipackets, bs.ibytes, bs.opackets, bs.obytes,
		 fs.ipackets, fs.ibytes);
	return ret != 0 || peer_failed() ? -1 : 0;
}

/* Every offload feature bit (CSUM, GUEST_CSUM, GUEST_TSO4/6, GUEST_ECN,
 * HOST_TSO4/6, HOST_ECN): net_vhost tso=1 offers them all, and the offload
 * configuration (pair_offload_conf(): checksums, TSO, LRO) needs them all. */
#define PAIR_OFFLOAD_ALL_BITS UINT64_C(0x3b83)

/* The back end's negotiated offload bits must be exactly @p want. */
static int
reneg_check(const char *phase, uint64_t want)
{
	uint64_t f;

	if (be_features(phase, &f) != 0)
		return -1;
	peer_tap((f & PAIR_OFFLOAD_ALL_BITS) == want,
		 "%s: the back end negotiated offload bits 0x%" PRIx64 " (features 0x%" PRIx64 "), want 0x%" PRIx64,
		 phase, f & PAIR_OFFLOAD_ALL_BITS, f, want);
	return peer_failed() ? -1 : 0;
}

/* 64- and 1518-byte frames both ways, every byte and the counters checked. */
static int
reneg_traffic(uint32_t total)
{
	static const uint16_t sz[] = { 64, 1518 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	unsigned int n;

	stats_reset();
	n = flows_both(fl, total, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, pair_opts.timeout) != 0)
		return -1;
	return check_stats(fl, n);
}

/* Stop the front end, configure it with or without the offloads, start. */
static int
reneg_reconfigure(bool offloads)
{
	int ret = rte_eth_dev_stop(pair.fe_port);

	if (ret != 0)
		return peer_fail("front end stop: %d", ret);
	offload_conf = offloads;
	if (port_setup(pair.fe_port, "front end", 1, 0, false, pair.pools.mp[POOL_FE_RX]) != 0)
		return -1;
	if (pair_wait_link(pair.be_port, "back end", true, 10.0) != 0 ||
	    pair_wait_link(pair.fe_port, "front end", true, 10.0) != 0)
		return -1;
	return 0;
}

/*
 * Offload features follow the configuration (net_vhost tso=1 offers every
 * one): configured without offloads, the front end negotiates none of them
 * (the back end neither parses nor writes the header's offload fields);
 * reconfigured with them, it negotiates them at the next start, and the
 * offloads work both ways; reconfigured without, they are gone again. Traffic
 * both ways, byte-exact, in each phase.
 */
static int
scenario_offload_reneg(void)
{
	struct pair_offload_ctx ctx;
	int ret = 0;

	/* The back end configured as in the offload scenario. */
	be_extra_devargs = PAIR_OFFLOAD_BE_DEVARGS;
	offload_conf = true;
	if (pair_be_create(1, 0) != 0)
		return -1;
	offload_conf = false;
	if (fe_bringup(0, false, NULL) != 0)
		return -1;
	if (reneg_check("configured without offloads", 0) != 0 || reneg_traffic(2000) != 0)
		return -1;
	if (reneg_reconfigure(true) != 0 ||
	    reneg_check("reconfigured with offloads", PAIR_OFFLOAD_ALL_BITS) != 0)
		return -1;
	offload_ctx_init(&ctx);
	ret |= pair_offload_fe_to_be(&ctx, false);
	ret |= pair_offload_be_to_fe(&ctx, false);
	if (ret != 0)
		return -1;
	if (reneg_reconfigure(false) != 0 ||
	    reneg_check("reconfigured without offloads", 0) != 0 || reneg_traffic(2000) != 0)
		return -1;
	return peer_failed() ? -1 : 0;
}

static const struct {
	const char *name;
	int (*run)(void);
} scenarios[] = {
	{ "count", scenario_count },
	{ "sizes", scenario_sizes },
	{ "mq", scenario_mq },
	{ "cycles", scenario_cycles },
	{ "linkdown", scenario_linkdown },
	{ "baddevargs", scenario_baddevargs },
	{ "badring", scenario_badring },
	{ "segs", scenario_segs },
	{ "offload", scenario_offload },
	{ "offload_reneg", scenario_offload_reneg },
	{ "race", pair_scenario_race },
	{ "drain", pair_scenario_drain },
	{ "drain_stall", pair_scenario_drain_stall },
};

/* ------------------------------------------------------------------ main */

/*
 * A driver that writes to its vhost-user socket after the peer went away
 * without MSG_NOSIGNAL raises SIGPIPE, which kills an application that
 * kept the default disposition.  Count it instead, and fail unless allowed.
 */
static void
on_sigpipe(int sig)
{
	RTE_SET_USED(sig);
	sigpipes++;
}

/* --sizes: frame lengths for the sizes scenario (debugging a failure). */
static int
opt_sizes(const char *arg, void *dst)
{
	struct pair_opts *o = dst;
	char buf[256], *tok, *save = NULL;
	uint32_t v;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -1;
	o->nb_sizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (o->nb_sizes == RTE_DIM(o->sizes) ||
		    peer_parse_u32(tok, PAIR_MIN_FRAME, PAIR_JUMBO_MTU, &v) != 0)
			return -1;
		o->sizes[o->nb_sizes++] = (uint16_t)v;
	}
	return o->nb_sizes != 0 ? 0 : -1;
}

/* A repeatable option: @p arg appended to @p list (@p max entries). */
static int
opt_append(const char **list, unsigned int *nb, unsigned int max, const char *arg)
{
	if (*nb == max)
		return -1;
	list[(*nb)++] = arg;
	return 0;
}

static int
opt_bad(const char *arg, void *dst)
{
	struct pair_opts *o = dst;

	return opt_append(o->bad, &o->nb_bad, PAIR_MAX_BAD, arg);
}

static int
opt_eal(const char *arg, void *dst)
{
	struct pair_opts *o = dst;

	return opt_append(o->eal_extra, &o->nb_eal_extra, PAIR_MAX_EAL_EXTRA, arg);
}

static int
opt_expect_lost(const char *arg, void *dst)
{
	long *out = dst;
	uint64_t v;

	if (strcmp(arg, "any") == 0) {
		*out = PAIR_EXPECT_ANY;
		return 0;
	}
	if (strcmp(arg, "all") == 0) {
		*out = PAIR_EXPECT_ALL;
		return 0;
	}
	if (peer_parse_u64(arg, 0, LONG_MAX, &v) != 0)
		return -1;
	*out = (long)v;
	return 0;
}


static const struct peer_opt pair_opt_table[] = {
	{ .name = "scenario", .type = PEER_OPT_STR, .dst = &pair_opts.scenario, .arg = "NAME",
	  .help = "count|sizes|mq|cycles|linkdown|baddevargs|badring|segs|offload|race|drain|drain_stall" },
	{ .name = "frontend", .type = PEER_OPT_STR, .dst = &pair_opts.frontend, .arg = "DEVARGS",
	  .help = "the front end; {sock} and {queues} are replaced" },
	{ .name = "name", .type = PEER_OPT_STR, .dst = &pair_opts.name, .arg = "TESTNAME",
	  .help = "names the socket and the EAL file prefix" },
	{ .name = "queues", .type = PEER_OPT_U32, .dst = &pair_opts.queues, .min = 1,
	  .max = PAIR_MAX_QUEUES, .arg = "N", .help = "queue pairs (default 1)" },
	{ .name = "packets", .type = PEER_OPT_U32, .dst = &pair_opts.packets, .max = 100000000,
	  .arg = "N", .help = "packets per flow (default: the scenario's)" },
	{ .name = "cycles", .type = PEER_OPT_U32, .dst = &pair_opts.cycles, .max = 100000,
	  .arg = "N", .help = "cycles: stop/start cycles (default 20)" },
	{ .name = "timeout", .type = PEER_OPT_DOUBLE, .dst = &pair_opts.timeout, .dmin = 0.001,
	  .dmax = 36000, .arg = "S", .help = "traffic deadline (default 60)" },
	{ .name = "bad", .type = PEER_OPT_FN, .dst = &pair_opts, .fn = opt_bad, .arg = "DEVARGS",
	  .help = "baddevargs: devargs the probe must refuse (repeatable)" },
	{ .name = "log-level", .type = PEER_OPT_STR, .dst = &pair_opts.log_level, .arg = "L",
	  .help = "EAL --log-level (default *:warning)" },
	{ .name = "eal", .type = PEER_OPT_FN, .dst = &pair_opts, .fn = opt_eal, .arg = "ARG",
	  .help = "one more EAL argument (repeatable)" },
	{ .name = "allow-tx-after-linkdown", .type = PEER_OPT_FLAG,
	  .dst = &pair_opts.tx_after_linkdown,
	  .help = "linkdown: tx may fill the ring after link down" },
	{ .name = "allow-sigpipe", .type = PEER_OPT_FLAG, .dst = &pair_opts.sigpipe_ok,
	  .help = "a SIGPIPE of the front end is no failure" },
	{ .name = "sizes", .type = PEER_OPT_FN, .dst = &pair_opts, .fn = opt_sizes,
	  .arg = "N,N,...", .help = "sizes: frame lengths" },
	{ .name = "expect-features", .type = PEER_OPT_U64, .dst = &pair_opts.features_on,
	  .max = UINT64_MAX, .arg = "MASK", .help = "feature bits the back end must see" },
	{ .name = "expect-no-features", .type = PEER_OPT_U64, .dst = &pair_opts.features_off,
	  .max = UINT64_MAX, .arg = "MASK", .help = "... and must not" },
	{ .name = "expect-indirect", .type = PEER_OPT_U32, .dst = &pair_opts.expect_indirect,
	  .max = 1024, .arg = "N",
	  .help = "segs: tx_qN_indirect counts the chains of 2..N descriptors (0: none)" },
	{ .name = "rx-path", .type = PEER_OPT_STR, .dst = &pair_opts.rx_path, .arg = "auto|scalar",
	  .help = "the rx burst mode the front end must report on every queue" },
	{ .name = "tx-fast-free", .type = PEER_OPT_FLAG, .dst = &pair_opts.tx_fast_free,
	  .help = "the front end's tx with RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE" },
	{ .name = "offloads-refused", .type = PEER_OPT_FLAG, .dst = &pair_opts.offloads_refused,
	  .help = "offload: the front end has every offload devarg 0" },
	{ .name = "rounds", .type = PEER_OPT_U32, .dst = &pair_opts.rounds, .min = 1,
	  .max = 10000000, .arg = "N", .help = "race: rounds (default 200)" },
	{ .name = "expect-lost", .type = PEER_OPT_FN, .dst = &pair_opts.expect_lost,
	  .fn = opt_expect_lost, .arg = "N|any|all",
	  .help = "race: fail when more wakeups are lost (default 0; any: report; all: every round must lose)" },
	{ .name = "race-queue", .type = PEER_OPT_U32, .dst = &pair_opts.race_queue,
	  .max = PAIR_MAX_QUEUES - 1, .arg = "Q",
	  .help = "race: the rx queue raced, < --queues (default 0)" },
	{ .name = "timeout-ms", .type = PEER_OPT_U32, .dst = &pair_opts.timeout_ms, .max = 60000,
	  .arg = "MS", .help = "race: epoll timeout per round (default 50)" },
	{ .name = "restarts", .type = PEER_OPT_U32, .dst = &pair_opts.restarts, .max = 1000,
	  .arg = "N", .help = "race: stop/start and race again N times (default 0)" },
	{ .name = "drain-ms", .type = PEER_OPT_U32, .dst = &pair_opts.drain_ms, .max = 10000,
	  .arg = "MS", .help = "drain_stall: the front end's tx_drain_ms (the stop's bound)" },
};

static void
usage(void)
{
	peer_opts_usage(stderr, "vhost_pair --scenario NAME --frontend DEVARGS --name TESTNAME [options]",
			pair_opt_table, RTE_DIM(pair_opt_table));
}

int
main(int argc, char **argv)
{
	unsigned int i, s;
	int ret = -1;
	size_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, on_sigpipe);
	if (peer_opts_parse(argc, argv, pair_opt_table, RTE_DIM(pair_opt_table)) != 0 ||
	    pair_opts.scenario == NULL || pair_opts.frontend == NULL || pair_opts.name == NULL) {
		usage();
		return 2;
	}
	for (s = 0; s < RTE_DIM(scenarios); s++) {
		if (strcmp(scenarios[s].name, pair_opts.scenario) == 0)
			break;
	}
	if (s == RTE_DIM(scenarios)) {
		usage();
		return 2;
	}
	ret = peer_run_paths(pair_opts.name, pair.sock_path, sizeof(pair.sock_path),
			     pair.file_prefix, sizeof(pair.file_prefix));
	if (ret != 0) {
		printf("RESULT: FAIL: mkdir %s: %s\n", PEER_RUN_DIR, strerror(-ret));
		return 1;
	}
	if (peer_subst(pair.fe_devargs, sizeof(pair.fe_devargs), pair_opts.frontend,
		       pair.sock_path, pair_opts.queues) != 0) {
		printf("RESULT: FAIL: --frontend too long\n");
		return 1;
	}
	len = strcspn(pair.fe_devargs, ",");
	snprintf(pair.fe_name, sizeof(pair.fe_name), "%.*s", (int)len, pair.fe_devargs);

	printf("# scenario %s, front end '%s', back end %s,iface=%s,queues=%u, file prefix %s\n",
	       pair_opts.scenario, pair.fe_devargs, PAIR_BE_NAME, pair.sock_path,
	       pair_opts.queues, pair.file_prefix);
	if (peer_eal_init(argv[0], pair.file_prefix, pair_opts.log_level, pair_opts.eal_extra,
			  pair_opts.nb_eal_extra) < 0) {
		printf("RESULT: FAIL: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}

	ret = -1;
	pair.pools.n = POOL_MAX;
	for (i = 0; i < POOL_MAX; i++) {
		pair.pools.mp[i] = rte_pktmbuf_pool_create(pool_names[i], PAIR_POOL_SIZE, 0, 0,
							   RTE_MBUF_DEFAULT_BUF_SIZE,
							   rte_socket_id());
		if (pair.pools.mp[i] == NULL) {
			peer_fail("mempool %s: %s", pool_names[i], rte_strerror(rte_errno));
			goto out;
		}
	}

	ret = scenarios[s].run();
	if (ret == 0 && peer_failed())
		ret = -1;
	if (sigpipes != 0 && !pair_opts.sigpipe_ok)
		ret = peer_fail("the front end raised SIGPIPE %d time(s) (socket writes need MSG_NOSIGNAL)",
				(int)sigpipes);

out:
	/* Stop, close and removal of whatever the scenario left: each must succeed. */
	if (peer_port_remove(pair.fe_name, &pair.fe_port, &pair.fe_probed) != 0)
		ret = peer_fail("front end '%s': stop, close or removal at exit failed (see above)",
				pair.fe_name);
	if (peer_port_remove(PAIR_BE_NAME, &pair.be_port, &pair.be_probed) != 0)
		ret = peer_fail("back end: stop, close or removal at exit failed (see above)");
	for (i = 0; i < POOL_MAX; i++)
		rte_mempool_free(pair.pools.mp[i]);
	rte_eal_cleanup();
	unlink(pair.sock_path);
	if (sigpipes != 0)
		printf("# SIGPIPE raised %d time(s)%s\n", (int)sigpipes,
		       pair_opts.sigpipe_ok ? " (allowed)" : "");
	if (ret == 0 && sigpipes != 0 && !pair_opts.sigpipe_ok)
		ret = peer_fail("SIGPIPE raised during cleanup (socket writes need MSG_NOSIGNAL)");
	return peer_tap_finish(ret);
}
