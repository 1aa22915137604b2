/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * load_peer: the back end of the NAPI experiments (devtools/napi_experiments.py).
 *
 * DPDK's net_vhost (one or two --vdev net_vhostN,iface=SOCK,queues=Q on the
 * command line, loaded from DPDK's plugin directory) is the vhost-user
 * server; the forwarder under test (vnapi-fwd, l3fwd-power) connects as the
 * front end and sends everything back. The peer generates the load and
 * measures what returns. One lcore does everything (tx pacing and rx).
 *
 * Frames are Ethernet/IPv4/UDP (valid IPv4 checksum, 10.0.0.1 -> 1.1.1.1,
 * which l3fwd-power routes back out of port 0 rewriting the destination MAC;
 * vnapi-fwd's macswap sends them back as well), padded to --size bytes.
 * The UDP payload carries a magic, a run id, the phase, the hop, a sequence
 * number and the TSC at sending; the MACs are not checked (both forwarders
 * rewrite them differently), the magic and run id are.
 *
 * Modes:
 *   --phase RATE:SECONDS  (repeatable; stream mode) send --size frames on
 *       port 0 queue 0 at RATE packets/s (0: send nothing, "max": as fast as
 *       the ring takes them) for SECONDS, receive on every queue of every
 *       port. Per phase: "PHASE i begin", one "SAMPLE" line per --sample-ms,
 *       "PHASE i stop" when sending ends, then after --drain-ms (late
 *       packets still count for their phase) "PHASE i result key=value...":
 *       offered (attempted), sent (taken by the ring), ring_full (refused:
 *       the front end's rx ring was full; freed), received, lost =
 *       sent - received, achieved rates and the latency (1 us buckets).
 *       --gap-ms of quiet (rx only) separate the phases.
 *   --rr SECONDS  request/response ping-pong, one transaction outstanding.
 *       With one port: the request goes out of port 0 and must come back on
 *       it. With two ports: the request goes out of port 0 and comes back on
 *       port 1 (the forwarder's first hop); the peer then sends the response
 *       out of port 1 at once, and it must come back on port 0 (second hop).
 *       The next request leaves when the previous transaction completes (or
 *       after --rr-timeout-ms: counted as a timeout). "RR result" gives
 *       transactions/s and the latency p50/p99/max (exact, per transaction).
 *       --yield calls sched_yield() after every empty rx sweep (so that a
 *       forwarder lcore pinned to the peer's CPU gets to run).
 *
 * Every mode starts with warm-up packets (one every 200 ms, on every port)
 * until one comes back, then --settle-ms of quiet.
 *
 * Usage: load_peer [EAL options, --vdev net_vhost0,...] -- --size N
 *        (--phase R:S ... | --rr S) [options]; --help lists them.
 * Last line: "RESULT: PASS|FAIL ..." (FAIL: setup, link, warm-up, deadline
 * or foreign frames); with --linger S the ports then stay up until
 * SIGINT/SIGTERM or S seconds, so that the front end can be stopped first.
 * Exit: 0 pass, 1 fail, 2 usage, 3 setup, 4 no link, 5 deadline, 6 no warm-up.
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include "vnapi_compat.h"
#include "peer_frame.h"
#include "peer_opt.h"
#include "peer_port.h"
#include "peer_util.h"

#define LP_PASS     0
#define LP_FAIL     1
#define LP_USAGE    2
#define LP_SETUP    3
#define LP_LINK     4
#define LP_DEADLINE 5
#define LP_WARMUP   6

#define LP_MAGIC       0x564e4c50u /* "VNLP" */
#define LP_BURST       32
#define LP_RING        1024
#define LP_MAX_PORTS   2
#define LP_MAX_QUEUES  4
#define LP_MAX_PHASES  32
#define LP_PHASE_WARM  255
#define LP_PHASE_RR    254
#define LP_HIST_US     1000000 /* 1 us buckets up to 1 s */
#define LP_RR_MAX      (1u << 23)
#define LP_MIN_SIZE    64
#define LP_MAX_SIZE    1514
#define LP_RATE_MAX    UINT64_MAX

#define LP_IP_SRC RTE_IPV4(10, 0, 0, 1)
#define LP_IP_DST RTE_IPV4(1, 1, 1, 1)
#define LP_TTL    64

struct __rte_packed_begin lp_payload {
	uint32_t magic;
	uint16_t run_id;
	uint8_t phase;
	uint8_t hop;
	uint32_t seq;
	uint64_t tsc;
} __rte_packed_end;

struct lp_hdr {
	struct rte_ether_hdr eth;
	struct rte_ipv4_hdr ip;
	struct rte_udp_hdr udp;
	struct lp_payload pl;
};
_Static_assert(sizeof(struct lp_hdr) == 62, "lp_hdr has padding");

struct lp_phase {
	uint64_t rate;     /* pps; 0 idle; LP_RATE_MAX as fast as possible */
	double secs;
	/* results */
	uint64_t offered, sent, ring_full, received, bad_seq;
	uint64_t t_begin, t_stop; /* TSC */
	uint32_t *hist;    /* 1 us buckets */
	uint64_t hist_over;
	uint64_t lat_max;  /* TSC */
};

static struct {
	uint32_t size;
	uint32_t queues;
	struct lp_phase phases[LP_MAX_PHASES];
	unsigned int nb_phases;
	double rr_s;
	uint32_t rr_timeout_ms;
	bool yield;
	uint32_t gap_ms;
	uint32_t drain_ms;
	uint32_t settle_ms;
	uint32_t sample_ms;
	double warmup_s;
	double link_s;
	double timeout_s;
	double linger_s;
} o; /* the options; each one's default is in lp_opt_table */

static uint16_t nb_ports;
static uint16_t ports[LP_MAX_PORTS];
static struct rte_mempool *pool;
static struct rte_ether_addr macs[LP_MAX_PORTS];
static uint16_t run_id;
static uint64_t hz;
static uint64_t deadline_tsc;
static volatile sig_atomic_t quit;
static uint8_t tmpl[LP_MAX_SIZE]; /* the frame, payload fields filled per packet */

/* Receive-side state. */
static uint64_t warm_rcvd, foreign, stray;
static struct lp_phase *cur_ph;    /* the phase whose packets are counted for samples */
static uint64_t sample_rx;         /* packets of any phase, for SAMPLE lines */
/* RR */
static uint32_t rr_seq;
static int rr_state;               /* 0 idle, 1 waiting for hop 0, 2 waiting for hop 1 */
static uint64_t rr_late;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static bool
expired(void)
{
	return quit || rte_rdtsc() > deadline_tsc;
}

static double
tsc_us(uint64_t cyc)
{
	return (double)cyc * 1e6 / (double)hz;
}

/* ---- frames ------------------------------------------------------------------ */

static void
tmpl_init(void)
{
	struct lp_hdr *h = (struct lp_hdr *)tmpl;
	/* l3fwd-power and vnapi-fwd do not filter on the destination MAC. */
	struct peer_udp u = {
		.src = macs[0],
		.dst = { .addr_bytes = { 2, 0, 0, 0, 0, 0x0a } },
		.ip_src = LP_IP_SRC,
		.ip_dst = LP_IP_DST,
		.port_src = 1024,
		.port_dst = 2048,
		.ttl = LP_TTL,
	};

	memset(tmpl, 0, sizeof(tmpl));
	peer_udp_fill(tmpl, o.size, &u);
	h->pl.magic = LP_MAGIC;
	h->pl.run_id = run_id;
}

static int
frames(struct rte_mbuf **m, unsigned int n, uint8_t phase, uint8_t hop, uint32_t seq0)
{
	unsigned int i;
	uint64_t t;

	if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0)
		return -1;
	t = rte_rdtsc();
	for (i = 0; i < n; i++) {
		char *d = rte_pktmbuf_append(m[i], o.size);
		struct lp_hdr *h = (struct lp_hdr *)d;

		rte_memcpy(d, tmpl, o.size);
		h->pl.phase = phase;
		h->pl.hop = hop;
		h->pl.seq = seq0 + i;
		h->pl.tsc = t;
	}
	return 0;
}

/* ---- receive -------------------------------------------------------------------- */

static void
rr_reply(uint16_t pi, uint32_t seq);

static void
account(struct rte_mbuf *m, uint16_t pi, uint64_t now)
{
	const struct lp_hdr *h;
	struct lp_phase *ph;
	uint64_t lat, us;

	if (rte_pktmbuf_data_len(m) < sizeof(*h)) {
		foreign++;
		return;
	}
	h = rte_pktmbuf_mtod(m, const struct lp_hdr *);
	if (h->pl.magic != LP_MAGIC || h->pl.run_id != run_id) {
		foreign++;
		return;
	}
	if (h->pl.phase == LP_PHASE_WARM) {
		warm_rcvd++;
		return;
	}
	if (h->pl.phase == LP_PHASE_RR) {
		if (h->pl.seq != rr_seq) {
			rr_late++;
			return;
		}
		if (rr_state == 1 && h->pl.hop == 0) {
			if (nb_ports == 2)
				rr_reply(pi, h->pl.seq);
			else
				rr_state = 0;
		} else if (rr_state == 2 && h->pl.hop == 1) {
			rr_state = 0;
		} else {
			stray++;
		}
		return;
	}
	if (h->pl.phase >= o.nb_phases) {
		stray++;
		return;
	}
	ph = &o.phases[h->pl.phase];
	ph->received++;
	sample_rx++;
	lat = now > h->pl.tsc ? now - h->pl.tsc : 0;
	if (lat > ph->lat_max)
		ph->lat_max = lat;
	us = (uint64_t)tsc_us(lat);
	if (us < LP_HIST_US)
		ph->hist[us]++;
	else
		ph->hist_over++;
}

/* One rx sweep over every queue of every port; returns the packets received. */
static unsigned int
rx_all(void)
{
	struct rte_mbuf *pkts[LP_BURST];
	unsigned int total = 0;
	uint16_t pi, q, n, i;
	uint64_t now;

	for (pi = 0; pi < nb_ports; pi++) {
		for (q = 0; q < o.queues; q++) {
			n = rte_eth_rx_burst(ports[pi], q, pkts, LP_BURST);
			if (n == 0)
				continue;
			now = rte_rdtsc();
			for (i = 0; i < n; i++)
				account(pkts[i], pi, now);
			rte_pktmbuf_free_bulk(pkts, n);
			total += n;
		}
	}
	return total;
}

static void
rx_for_ms(uint32_t ms)
{
	uint64_t end = rte_rdtsc() + (uint64_t)ms * hz / 1000;

	while (rte_rdtsc() < end && !expired())
		rx_all();
}

/* Send all of m (polling rx while the ring is full); false at the deadline. */
static bool
tx_all(uint16_t pi, struct rte_mbuf **m, uint16_t n)
{
	uint16_t done = 0;

	while (done < n) {
		done += rte_eth_tx_burst(ports[pi], 0, m + done, n - done);
		if (done < n) {
			rx_all();
			if (expired()) {
				rte_pktmbuf_free_bulk(m + done, n - done);
				return false;
			}
		}
	}
	return true;
}

/* ---- setup ------------------------------------------------------------------------ */

static int
ports_setup(void)
{
	uint16_t pid;
	unsigned int nb_mbufs;

	nb_ports = 0;
	RTE_ETH_FOREACH_DEV(pid) {
		if (nb_ports == LP_MAX_PORTS) {
			fprintf(stderr, "at most %u ports\n", LP_MAX_PORTS);
			return LP_SETUP;
		}
		ports[nb_ports++] = pid;
	}
	if (nb_ports == 0) {
		fprintf(stderr, "no port: pass --vdev net_vhost0,iface=SOCK\n");
		return LP_SETUP;
	}
	nb_mbufs = nb_ports * o.queues * 2 * LP_RING + 8192;
	pool = rte_pktmbuf_pool_create("lp_pool", nb_mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
		return LP_SETUP;
	}
	for (pid = 0; pid < nb_ports; pid++) {
		const struct peer_port_conf c = {
			.nb_queues = (uint16_t)o.queues,
			.nb_desc = LP_RING,
			.quiet = true,
			.rx_pool = pool,
		};

		/* net_vhost creates its socket at configure. */
		if (peer_port_start(ports[pid], "load_peer", &c) != 0) {
			fprintf(stderr, "port %u: setup with %u queues failed\n", ports[pid],
				o.queues);
			return LP_SETUP;
		}
		rte_eth_macaddr_get(ports[pid], &macs[pid]);
	}
	printf("READY ports=%u queues=%u size=%u\n", nb_ports, o.queues, o.size);
	return LP_PASS;
}

static int
links_wait(void)
{
	double end = peer_now_s() + o.link_s;
	uint16_t pi;

	for (pi = 0; pi < nb_ports; pi++) {
		if (peer_link_wait(ports[pi], true, end - peer_now_s(), &quit, NULL, NULL) != 0) {
			printf("# port %u: no link within %.0f s\n", ports[pi], o.link_s);
			return LP_LINK;
		}
	}
	printf("LINK up\n");
	return LP_PASS;
}

/* Warm-up packets on every port until one comes back. */
static int
warmup(void)
{
	uint64_t t0 = rte_rdtsc(), end = t0 + (uint64_t)(o.warmup_s * (double)hz);
	uint32_t seq = 0;

	while (warm_rcvd == 0) {
		uint64_t next = rte_rdtsc() + hz / 5;
		uint16_t pi;

		for (pi = 0; pi < nb_ports; pi++) {
			struct rte_mbuf *m;

			if (frames(&m, 1, LP_PHASE_WARM, 0, seq++) != 0)
				return LP_SETUP;
			if (!tx_all(pi, &m, 1))
				return LP_DEADLINE;
		}
		while (warm_rcvd == 0 && rte_rdtsc() < next) {
			rx_all();
			if (expired())
				return LP_DEADLINE;
		}
		if (rte_rdtsc() > end) {
			printf("# no warm-up packet came back within %.0f s\n", o.warmup_s);
			return LP_WARMUP;
		}
	}
	printf("WARMUP ok after %.1f ms (%u sent)\n", tsc_us(rte_rdtsc() - t0) / 1e3, seq);
	rx_for_ms(o.settle_ms);
	return LP_PASS;
}

/* ---- stream phases ------------------------------------------------------------------ */

static double
hist_pct(const struct lp_phase *ph, double p)
{
	uint64_t n = ph->received, want, acc = 0;
	uint32_t i;

	if (n == 0)
		return 0.0;
	want = (uint64_t)((double)n * p);
	if (want >= n)
		want = n - 1;
	for (i = 0; i < LP_HIST_US; i++) {
		acc += ph->hist[i];
		if (acc > want)
			return (double)i + 0.5;
	}
	return tsc_us(ph->lat_max);
}

static int
run_phase(unsigned int idx)
{
	struct lp_phase *ph = &o.phases[idx];
	struct rte_mbuf *m[LP_BURST];
	uint64_t t0, end, next_sample, last_sample, last_rx = 0, last_sent = 0, now;
	double per_cyc = ph->rate == LP_RATE_MAX ? 0.0 : (double)ph->rate / (double)hz;
	uint32_t seq = 0;
	char rate[32];

	ph->hist = calloc(LP_HIST_US, sizeof(*ph->hist));
	if (ph->hist == NULL)
		return LP_SETUP;
	if (ph->rate == LP_RATE_MAX)
		snprintf(rate, sizeof(rate), "max");
	else
		snprintf(rate, sizeof(rate), "%" PRIu64, ph->rate);
	cur_ph = ph;
	sample_rx = 0;
	printf("PHASE %u begin rate=%s secs=%.3f size=%u\n", idx, rate, ph->secs, o.size);
	fflush(stdout);
	t0 = rte_rdtsc();
	ph->t_begin = t0;
	end = t0 + (uint64_t)(ph->secs * (double)hz);
	next_sample = t0 + (uint64_t)o.sample_ms * hz / 1000;
	last_sample = t0;
	while ((now = rte_rdtsc()) < end) {
		uint64_t due;
		unsigned int n, k;

		if (expired())
			return LP_DEADLINE;
		if (ph->rate == LP_RATE_MAX)
			due = ph->offered + LP_BURST;
		else if (ph->rate == 0)
			due = 0;
		else
			due = (uint64_t)((double)(now - t0) * per_cyc);
		if (due > ph->offered) {
			n = (unsigned int)RTE_MIN(due - ph->offered, (uint64_t)LP_BURST);
			if (frames(m, n, (uint8_t)idx, 0, seq) != 0) {
				/* pool empty: the forwarder holds our mbufs; count as refused */
				ph->offered += n;
				ph->ring_full += n;
			} else {
				k = rte_eth_tx_burst(ports[0], 0, m, (uint16_t)n);
				if (k < n)
					rte_pktmbuf_free_bulk(m + k, n - k);
				ph->offered += n;
				ph->sent += k;
				ph->ring_full += n - k;
				seq += n;
			}
		}
		rx_all();
		if (now >= next_sample) {
			double dt = tsc_us(now - last_sample) / 1e6;

			printf("SAMPLE %u t=%.3f rx_pps=%.0f tx_pps=%.0f\n", idx,
			       tsc_us(now - t0) / 1e6, (double)(sample_rx - last_rx) / dt,
			       (double)(ph->sent - last_sent) / dt);
			last_rx = sample_rx;
			last_sent = ph->sent;
			last_sample = now;
			next_sample += (uint64_t)o.sample_ms * hz / 1000;
		}
	}
	ph->t_stop = rte_rdtsc();
	printf("PHASE %u stop secs=%.3f\n", idx, tsc_us(ph->t_stop - t0) / 1e6);
	fflush(stdout);
	rx_for_ms(o.drain_ms);
	{
		double secs = tsc_us(ph->t_stop - t0) / 1e6;
		int64_t lost = (int64_t)ph->sent - (int64_t)ph->received;
		uint64_t over_5ms = ph->hist_over, over_9ms = ph->hist_over;
		uint32_t i;

		for (i = 5000; i < LP_HIST_US; i++) {
			over_5ms += ph->hist[i];
			if (i >= 9000)
				over_9ms += ph->hist[i];
		}

		printf("PHASE %u result rate=%s secs=%.3f size=%u offered=%" PRIu64
		       " sent=%" PRIu64 " ring_full=%" PRIu64 " received=%" PRIu64
		       " lost=%" PRId64 " offered_pps=%.0f sent_pps=%.0f rx_pps=%.0f"
		       " rx_mbps=%.1f p50_us=%.1f p99_us=%.1f max_us=%.1f over_5ms=%" PRIu64
		       " over_9ms=%" PRIu64 " over_1s=%" PRIu64 "\n",
		       idx, rate, secs, o.size, ph->offered, ph->sent, ph->ring_full,
		       ph->received, lost, (double)ph->offered / secs, (double)ph->sent / secs,
		       (double)ph->received / secs,
		       (double)ph->received * o.size * 8 / secs / 1e6,
		       hist_pct(ph, 0.5), hist_pct(ph, 0.99), tsc_us(ph->lat_max), over_5ms,
		       over_9ms, ph->hist_over);
		fflush(stdout);
	}
	cur_ph = NULL;
	free(ph->hist);
	ph->hist = NULL;
	return LP_PASS;
}

/* ---- request/response -------------------------------------------------------------- */

static void
rr_reply(uint16_t pi, uint32_t seq)
{
	struct rte_mbuf *m;

	if (frames(&m, 1, LP_PHASE_RR, 1, seq) != 0) {
		rr_state = 0; /* cannot happen with our pool; the transaction times out */
		return;
	}
	rr_state = 2;
	if (!tx_all(pi, &m, 1))
		rr_state = 0;
}

static int
run_rr(void)
{
	uint64_t *lat = malloc(sizeof(*lat) * LP_RR_MAX);
	uint64_t t0, end, tmo = (uint64_t)o.rr_timeout_ms * hz / 1000, n = 0, timeouts = 0;
	uint64_t i, sum = 0;
	double secs;

	if (lat == NULL)
		return LP_SETUP;
	printf("RR begin secs=%.3f ports=%u size=%u yield=%d\n", o.rr_s, nb_ports, o.size,
	       o.yield);
	fflush(stdout);
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)(o.rr_s * (double)hz);
	while (rte_rdtsc() < end && n < LP_RR_MAX) {
		struct rte_mbuf *m;
		uint64_t ts, give_up;

		if (expired()) {
			free(lat);
			return LP_DEADLINE;
		}
		rr_seq++;
		if (frames(&m, 1, LP_PHASE_RR, 0, rr_seq) != 0) {
			free(lat);
			return LP_SETUP;
		}
		ts = rte_rdtsc();
		rr_state = 1;
		if (!tx_all(0, &m, 1)) {
			free(lat);
			return LP_DEADLINE;
		}
		give_up = ts + tmo;
		while (rr_state != 0) {
			if (rx_all() == 0) {
				if (rte_rdtsc() > give_up)
					break;
				if (o.yield)
					sched_yield();
			}
		}
		if (rr_state != 0) {
			timeouts++;
			rr_state = 0;
			continue;
		}
		lat[n++] = rte_rdtsc() - ts;
	}
	secs = tsc_us(rte_rdtsc() - t0) / 1e6;
	for (i = 0; i < n; i++)
		sum += lat[i];
	printf("RR stop secs=%.3f\n", secs);
	fflush(stdout);
	rx_for_ms(o.drain_ms);
	peer_sort_u64(lat, n);
	printf("RR result secs=%.3f transactions=%" PRIu64 " tps=%.1f timeouts=%" PRIu64
	       " late=%" PRIu64 " p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.1f mean_us=%.2f\n",
	       secs, n, (double)n / secs, timeouts, rr_late,
	       tsc_us(peer_percentile_u64(lat, n, 50)), tsc_us(peer_percentile_u64(lat, n, 90)),
	       tsc_us(peer_percentile_u64(lat, n, 99)),
	       n ? tsc_us(lat[n - 1]) : 0.0, n ? tsc_us(sum) / (double)n : 0.0);
	fflush(stdout);
	free(lat);
	return LP_PASS;
}

/* ---- options -------------------------------------------------------------------------- */

static int
opt_phase(const char *arg, void *dst)
{
	struct lp_phase *ph;
	char *end;

	RTE_SET_USED(dst);
	if (o.nb_phases == LP_MAX_PHASES)
		return -1;
	ph = &o.phases[o.nb_phases];
	memset(ph, 0, sizeof(*ph));
	if (strncmp(arg, "max:", 4) == 0) {
		ph->rate = LP_RATE_MAX;
		end = (char *)arg + 3;
	} else {
		errno = 0;
		ph->rate = strtoull(arg, &end, 10);
		if (errno != 0 || end == arg || ph->rate >= LP_RATE_MAX)
			return -1;
	}
	if (*end != ':')
		return -1;
	ph->secs = strtod(end + 1, &end);
	if (*end != '\0' || ph->secs <= 0 || ph->secs > 3600)
		return -1;
	o.nb_phases++;
	return 0;
}

static const struct peer_opt lp_opt_table[] = {
	{ .name = "size", .type = PEER_OPT_U32, .dst = &o.size, .def = 64, .min = LP_MIN_SIZE,
	  .max = LP_MAX_SIZE, .arg = "N", .help = "frame length in bytes (default 64)" },
	{ .name = "queues", .type = PEER_OPT_U32, .dst = &o.queues, .def = 1, .min = 1,
	  .max = LP_MAX_QUEUES, .arg = "Q",
	  .help = "queue pairs per port (as in the vdev's queues=; default 1)" },
	{ .name = "phase", .type = PEER_OPT_FN, .fn = opt_phase, .arg = "RATE:S",
	  .help = "stream phase: RATE pps (0 idle, max) for S seconds; repeatable" },
	{ .name = "rr", .type = PEER_OPT_DOUBLE, .dst = &o.rr_s, .dmin = 0.001, .dmax = 36000,
	  .arg = "S", .help = "request/response for S seconds" },
	{ .name = "rr-timeout-ms", .type = PEER_OPT_U32, .dst = &o.rr_timeout_ms, .def = 200,
	  .min = 1, .max = 600000, .arg = "N",
	  .help = "give up on a transaction after N ms (default 200)" },
	{ .name = "yield", .type = PEER_OPT_FLAG, .dst = &o.yield,
	  .help = "sched_yield() after empty rx sweeps (rr)" },
	{ .name = "gap-ms", .type = PEER_OPT_U32, .dst = &o.gap_ms, .def = 500, .max = 600000,
	  .arg = "N", .help = "quiet between phases (default 500)" },
	{ .name = "drain-ms", .type = PEER_OPT_U32, .dst = &o.drain_ms, .def = 200, .max = 600000,
	  .arg = "N", .help = "receive-only time after a phase (default 200)" },
	{ .name = "settle-ms", .type = PEER_OPT_U32, .dst = &o.settle_ms, .def = 500, .max = 600000,
	  .arg = "N", .help = "quiet after the warm-up (default 500)" },
	{ .name = "sample-ms", .type = PEER_OPT_U32, .dst = &o.sample_ms, .def = 1000, .min = 10,
	  .max = 600000, .arg = "N", .help = "SAMPLE line period (default 1000)" },
	{ .name = "warmup-timeout", .type = PEER_OPT_DOUBLE, .dst = &o.warmup_s, .ddef = 30.0,
	  .dmin = 0.001, .dmax = 3600, .arg = "S", .help = "the warm-up's allowance (default 30)" },
	{ .name = "link-timeout", .type = PEER_OPT_DOUBLE, .dst = &o.link_s, .ddef = 30.0,
	  .dmax = 3600, .arg = "S", .help = "wait at most S s for the links (default 30)" },
	{ .name = "timeout", .type = PEER_OPT_DOUBLE, .dst = &o.timeout_s, .ddef = 600.0,
	  .dmin = 0.001, .dmax = 36000, .arg = "S",
	  .help = "deadline of the whole run (default 600)" },
	{ .name = "linger", .type = PEER_OPT_DOUBLE, .dst = &o.linger_s, .dmax = 36000,
	  .arg = "S", .help = "keep the ports up after the result (until a signal)" },
};

static int
parse(int argc, char **argv)
{
	if (peer_opts_parse(argc, argv, lp_opt_table, RTE_DIM(lp_opt_table)) != 0)
		return -1;
	if ((o.nb_phases == 0) == (o.rr_s <= 0)) {
		fprintf(stderr, "need --phase ... or --rr S (not both)\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int i;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		printf("RESULT: FAIL reason=eal_init\n");
		return LP_SETUP;
	}
	if (parse(argc - ret, argv + ret) != 0) {
		peer_opts_usage(stderr, "load_peer [EAL options] -- (--phase RATE:S ... | --rr S) [options]",
				lp_opt_table, RTE_DIM(lp_opt_table));
		rte_eal_cleanup();
		return LP_USAGE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	hz = rte_get_tsc_hz();
	run_id = (uint16_t)(rte_rdtsc() ^ (uint64_t)getpid());
	deadline_tsc = rte_rdtsc() + (uint64_t)(o.timeout_s * (double)hz);

	ret = ports_setup();
	if (ret == LP_PASS)
		ret = links_wait();
	if (ret == LP_PASS) {
		tmpl_init();
		ret = warmup();
	}
	if (ret == LP_PASS && o.nb_phases > 0) {
		for (i = 0; i < o.nb_phases && ret == LP_PASS; i++) {
			if (i > 0)
				rx_for_ms(o.gap_ms);
			ret = run_phase(i);
		}
	} else if (ret == LP_PASS) {
		ret = run_rr();
	}
	if (ret == LP_PASS && foreign != 0)
		ret = LP_FAIL;
	printf("RESULT: %s code=%d foreign=%" PRIu64 " stray=%" PRIu64 " rr_late=%" PRIu64 "\n",
	       ret == LP_PASS ? "PASS" : "FAIL", ret, foreign, stray, rr_late);
	fflush(stdout);
	if (o.linger_s > 0 && !quit && nb_ports > 0) {
		uint64_t end = rte_rdtsc() + (uint64_t)(o.linger_s * (double)hz);

		printf("LINGER\n");
		fflush(stdout);
		deadline_tsc = end;
		while (!quit && rte_rdtsc() < end) {
			peer_sleep_us(1000);
			rx_all();
		}
	}
	for (i = 0; i < nb_ports; i++) {
		char name[RTE_ETH_NAME_MAX_LEN];
		bool probed = rte_eth_dev_get_name_by_port(ports[i], name) == 0;

		peer_port_remove(name, &ports[i], &probed);
	}
	rte_eal_cleanup();
	return ret;
}
