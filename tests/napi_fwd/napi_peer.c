/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * napi_peer: the back-end side of the vnapi-fwd tests.
 *
 * DPDK's net_vhost (a --vdev on the command line, loaded from DPDK's plugin
 * directory) is the vhost-user server; vnapi-fwd's front end connects to it
 * and forwards everything back. The peer sends numbered frames (ethertype
 * 0x88b5, local experimental) and checks what returns: the payload intact,
 * the MAC addresses as the forwarding mode leaves them (io: unchanged,
 * macswap: swapped), every sequence number exactly once.
 *
 * Modes (each starts with one warm-up packet that must come back):
 *   --burst N      N packets in bursts of --burst-size, at most --window in
 *                  flight, --gap-us between bursts; exactly N must return.
 *   --sparse N     N single packets, each a random --gap-min-us..--gap-max-us
 *                  after the previous returned; each must return within
 *                  --max-latency-us (lost after --loss-timeout-ms).
 *                  With --gap2-min-us/--gap2-max-us every second packet uses
 *                  that range instead (pairs: a packet, then a second one soon
 *                  after it came back); with --fe-pid-file (a file holding
 *                  the front end's pid, read after the warm-up) its run-queue
 *                  wait (/proc/PID/schedstat) during each round trip and the
 *                  time we did not run (gaps over 100 us in our busy wait:
 *                  preemption, or host steal that no schedstat shows) are
 *                  taken out of it for the bound ("net" latency), and a round
 *                  trip during which the machine's steal time (/proc/stat)
 *                  grew is not held to the bound (counted apart).
 *   --idle S       nothing for S seconds between "IDLE begin" and "IDLE end"
 *                  lines, then one check packet (same latency bound).
 *
 * Usage: napi_peer [EAL options with --vdev net_vhost0,iface=SOCK] -- MODE [options]
 * Last line: "RESULT: PASS|FAIL key=value ..."; with --linger S the port then
 * stays up until SIGINT/SIGTERM (or S seconds) so that vnapi-fwd can be
 * stopped first. Exit: 0 pass, 1 fail, 2 usage, 3 setup, 4 no link, 5 deadline.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define PEER_PASS     0
#define PEER_FAIL     1
#define PEER_USAGE    2
#define PEER_SETUP    3
#define PEER_LINK     4
#define PEER_DEADLINE 5

#define PEER_ETHERTYPE 0x88b5
#define PEER_MAGIC     0x4e415049u /* "NAPI" */
#define PEER_BURST     32
#define PEER_NB_MBUFS  8191
#define PEER_RING      1024
#define PEER_PATTERN   32
#define PEER_MAX_N     (1u << 22)
#define PEER_STALL_NS  100000 /* a longer gap in the wait loop: we were not running */

struct peer_payload {
	uint32_t magic;
	uint32_t run_id;
	uint32_t seq;          /* 0: warm-up/check, 1..N traffic */
	uint32_t pad;
	uint64_t t_ns;
	uint8_t pattern[PEER_PATTERN];
} __rte_packed;

struct peer_frame {
	struct rte_ether_hdr eth;
	struct peer_payload pl;
};

enum peer_mode { MODE_NONE, MODE_BURST, MODE_SPARSE, MODE_IDLE };

static const struct rte_ether_addr peer_fe_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a } };

static struct {
	enum peer_mode mode;
	uint32_t n;
	uint32_t burst_size;
	uint32_t window;
	uint32_t gap_us;
	uint32_t gap_min_us;
	uint32_t gap_max_us;
	uint32_t gap2_min_us;   /* 0/0: every gap from gap_min_us..gap_max_us */
	uint32_t gap2_max_us;
	const char *fe_pid_file; /* NULL: no run-queue accounting */
	uint32_t max_latency_us;
	const char *dump;       /* per-packet "seq latency_ns net_ns" lines, or NULL */
	uint32_t loss_timeout_ms;
	double idle_s;
	bool macswap;
	double timeout_s;
	double linger_s;
} o = {
	.burst_size = 32,
	.window = 256,
	.gap_us = 0,
	.gap_min_us = 200,
	.gap_max_us = 3000,
	.max_latency_us = 5000,
	.loss_timeout_ms = 500,
	.timeout_s = 60,
};

static uint16_t port;
static struct rte_mempool *pool;
static struct rte_ether_addr my_mac;
static uint32_t run_id;
static uint64_t deadline_ns;
static volatile sig_atomic_t quit;

/* Receive accounting. */
static uint8_t *seen;          /* per seq (index 0 = the warm-up/check packet) */
static uint64_t *lat_ns;
static uint64_t *net_ns;       /* lat_ns minus the run-queue wait and our stalls */
static uint64_t *stall_ns;     /* gaps over PEER_STALL_NS in our busy wait for the reply */
static uint8_t *stolen;        /* the host took CPU time during the round trip (steal) */
static int stat_fd = -1;       /* /proc/stat, with --fe-pid-file */
static int fe_sched_fd = -1, self_sched_fd = -1;
static uint32_t rcvd, zero_rcvd;
static uint64_t bad, dups, stray;
static char first_bad[128];

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static void
pattern(uint8_t *p, uint32_t seq)
{
	uint32_t v = run_id ^ (seq * 2654435761u);
	unsigned int i;

	for (i = 0; i < PEER_PATTERN; i++) {
		v = v * 1103515245u + 12345u;
		p[i] = (uint8_t)(v >> 16);
	}
}

static struct rte_mbuf *
frame(uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct peer_frame *f;

	if (m == NULL)
		return NULL;
	f = (struct peer_frame *)rte_pktmbuf_append(m, sizeof(*f));
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	rte_ether_addr_copy(&peer_fe_mac, &f->eth.dst_addr);
	rte_ether_addr_copy(&my_mac, &f->eth.src_addr);
	f->eth.ether_type = rte_cpu_to_be_16(PEER_ETHERTYPE);
	f->pl.magic = PEER_MAGIC;
	f->pl.run_id = run_id;
	f->pl.seq = seq;
	f->pl.pad = 0;
	pattern(f->pl.pattern, seq);
	f->pl.t_ns = now_ns();
	return m;
}

/* The first line of a /proc file opened as fd, NUL-terminated; false when unreadable. */
static bool
proc_read(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (fd < 0)
		return false;
	n = pread(fd, buf, len - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Run-queue wait (schedstat field 2, ns) of a thread; 0 when unavailable. */
static uint64_t
sched_wait_ns(int fd)
{
	unsigned long long run, wait;
	char buf[128];

	if (!proc_read(fd, buf, sizeof(buf)))
		return 0;
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? wait : 0;
}

/* The machine's steal time (/proc/stat "cpu" line, 8th value, USER_HZ ticks). */
static uint64_t
steal_ticks(void)
{
	unsigned long long v[8];
	char buf[256];

	if (!proc_read(stat_fd, buf, sizeof(buf)))
		return 0;
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return 0;
	return v[7];
}

static void
note_bad(const char *what, uint32_t seq)
{
	bad++;
	if (first_bad[0] == '\0')
		snprintf(first_bad, sizeof(first_bad), "%s (seq %" PRIu32 ")", what, seq);
}

static void
check(struct rte_mbuf *m, uint64_t t)
{
	const struct peer_frame *f;
	const struct rte_ether_addr *want_dst, *want_src;
	uint8_t pat[PEER_PATTERN];

	if (m->nb_segs != 1 || rte_pktmbuf_pkt_len(m) != sizeof(*f)) {
		note_bad("length", UINT32_MAX);
		return;
	}
	f = rte_pktmbuf_mtod(m, const struct peer_frame *);
	if (f->eth.ether_type != rte_cpu_to_be_16(PEER_ETHERTYPE) ||
	    f->pl.magic != PEER_MAGIC || f->pl.run_id != run_id) {
		note_bad("not ours", UINT32_MAX);
		return;
	}
	want_dst = o.macswap ? &my_mac : &peer_fe_mac;
	want_src = o.macswap ? &peer_fe_mac : &my_mac;
	if (!rte_is_same_ether_addr(&f->eth.dst_addr, want_dst) ||
	    !rte_is_same_ether_addr(&f->eth.src_addr, want_src)) {
		note_bad(o.macswap ? "MACs not swapped" : "MACs changed", f->pl.seq);
		return;
	}
	pattern(pat, f->pl.seq);
	if (memcmp(pat, f->pl.pattern, sizeof(pat)) != 0) {
		note_bad("payload", f->pl.seq);
		return;
	}
	if (f->pl.seq == 0) {
		zero_rcvd++;
		return;
	}
	if (f->pl.seq > o.n) {
		stray++;
		return;
	}
	if (seen[f->pl.seq]) {
		dups++;
		return;
	}
	seen[f->pl.seq] = 1;
	lat_ns[f->pl.seq] = t - f->pl.t_ns;
	rcvd++;
}

static unsigned int
rx(void)
{
	struct rte_mbuf *pkts[PEER_BURST];
	uint16_t n, i;
	uint64_t t;

	n = rte_eth_rx_burst(port, 0, pkts, PEER_BURST);
	if (n == 0)
		return 0;
	t = now_ns();
	for (i = 0; i < n; i++) {
		check(pkts[i], t);
		rte_pktmbuf_free(pkts[i]);
	}
	return n;
}

/* Send all of pkts, polling rx while the ring is full. */
static int
tx_all(struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0;

	while (sent < n) {
		sent += rte_eth_tx_burst(port, 0, pkts + sent, n - sent);
		if (sent < n) {
			rx();
			if (quit || now_ns() > deadline_ns) {
				rte_pktmbuf_free_bulk(pkts + sent, n - sent);
				return PEER_DEADLINE;
			}
		}
	}
	return PEER_PASS;
}

/* One packet (seq), then wait until it is back: 0 back, 1 lost, else error. */
static int
one(uint32_t seq, uint32_t timeout_ms)
{
	struct rte_mbuf *m = frame(seq);
	uint32_t before_r = rcvd, before_z = zero_rcvd;
	uint64_t end, t, last, stall = 0;
	uint64_t fe_w0 = sched_wait_ns(fe_sched_fd), self_w0 = sched_wait_ns(self_sched_fd);
	uint64_t steal0 = steal_ticks();
	int ret;

	if (m == NULL)
		return PEER_SETUP;
	ret = tx_all(&m, 1);
	if (ret != PEER_PASS)
		return ret;
	last = now_ns();
	end = last + (uint64_t)timeout_ms * 1000000;
	while ((t = now_ns()) < end) {
		/* A gap in this busy loop: we were not running (preempted, or
		 * our vCPU descheduled by the host: steal, not in schedstat). */
		if (t - last > PEER_STALL_NS)
			stall += t - last;
		rx();
		last = now_ns();
		if (rcvd != before_r || zero_rcvd != before_z) {
			if (seq > 0 && seq <= o.n && seen[seq]) {
				/* Net: minus the front end's run-queue wait and the
				 * time we were not running (our run-queue wait is
				 * part of our stalls, counted once). */
				uint64_t w = sched_wait_ns(fe_sched_fd) - fe_w0 +
					RTE_MAX(sched_wait_ns(self_sched_fd) - self_w0, stall);

				net_ns[seq] = lat_ns[seq] > w ? lat_ns[seq] - w : 0;
				stall_ns[seq] = stall;
				stolen[seq] = steal_ticks() != steal0;
			}
			return 0;
		}
		if (quit || now_ns() > deadline_ns)
			return PEER_DEADLINE;
	}
	return 1;
}

static int
run_burst(void)
{
	struct rte_mbuf *pkts[PEER_BURST];
	uint32_t next = 1;
	uint64_t end;

	while (next <= o.n) {
		uint32_t k, want = RTE_MIN(o.burst_size, o.n - next + 1);

		while (next - 1 - rcvd + want > o.window) {
			rx();
			if (quit || now_ns() > deadline_ns)
				return PEER_DEADLINE;
		}
		for (k = 0; k < want; k++) {
			pkts[k] = frame(next + k);
			if (pkts[k] == NULL) {
				rte_pktmbuf_free_bulk(pkts, k);
				return PEER_SETUP;
			}
		}
		if (tx_all(pkts, (uint16_t)want) != PEER_PASS)
			return PEER_DEADLINE;
		next += want;
		if (o.gap_us) {
			end = now_ns() + (uint64_t)o.gap_us * 1000;
			while (now_ns() < end)
				rx();
		}
	}
	end = now_ns() + (uint64_t)o.loss_timeout_ms * 1000000;
	while (rcvd < o.n && now_ns() < end && !quit)
		rx();
	return PEER_PASS;
}

static int
run_sparse(void)
{
	uint64_t rng = run_id | 1;
	uint32_t i;
	int ret;

	for (i = 1; i <= o.n; i++) {
		uint64_t gap;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		if (i % 2 == 0 && o.gap2_max_us > 0)
			gap = o.gap2_min_us + rng % (o.gap2_max_us - o.gap2_min_us + 1);
		else
			gap = o.gap_min_us + rng % (o.gap_max_us - o.gap_min_us + 1);
		sleep_us(gap);
		ret = one(i, o.loss_timeout_ms);
		if (ret > 1)
			return ret;
	}
	return PEER_PASS;
}

static int
run_idle(void)
{
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(o.idle_s * 1e9);
	uint64_t before = zero_rcvd + rcvd + bad + stray + dups;
	uint64_t got;
	int ret;

	printf("IDLE begin %.1f s\n", o.idle_s);
	fflush(stdout);
	while (now_ns() < end && !quit) {
		sleep_us(10000);
		rx();
	}
	got = zero_rcvd + rcvd + bad + stray + dups - before;
	printf("IDLE end received=%" PRIu64 "\n", got);
	fflush(stdout);
	if (got != 0)
		note_bad("traffic during idle", UINT32_MAX);
	/* The check packet: seq 1 of a 1-packet run, latency-bounded. */
	ret = one(1, o.loss_timeout_ms);
	return ret > 1 ? ret : PEER_PASS;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
report(int run_ret)
{
	uint64_t *v = calloc(o.n + 1, sizeof(*v));
	uint64_t *nv = calloc(o.n + 1, sizeof(*nv));
	uint64_t over = 0, lost, over1 = 0, over5 = 0, nover1 = 0, nover5 = 0, stalls = 0;
	uint64_t excused = 0;
	uint32_t i, k = 0;
	FILE *dump = o.dump != NULL ? fopen(o.dump, "w") : NULL;
	bool fail;

	if (v == NULL || nv == NULL)
		return PEER_SETUP;
	for (i = 1; i <= o.n; i++) {
		if (!seen[i])
			continue;
		if (fe_sched_fd < 0)
			net_ns[i] = lat_ns[i];
		nv[k] = net_ns[i];
		v[k++] = lat_ns[i];
		over1 += lat_ns[i] > 1000000;
		over5 += lat_ns[i] > 5000000;
		nover1 += net_ns[i] > 1000000;
		nover5 += net_ns[i] > 5000000;
		stalls += stall_ns[i];
		if (dump != NULL)
			fprintf(dump, "%" PRIu32 " %" PRIu64 " %" PRIu64 "\n", i, lat_ns[i], net_ns[i]);
		/* The bound applies net of run-queue wait and our stalls, and not
		 * to a round trip during which the host took CPU time (steal):
		 * with --fe-pid-file. */
		if (o.mode != MODE_BURST && net_ns[i] > (uint64_t)o.max_latency_us * 1000) {
			if (stolen[i])
				excused++;
			else
				over++;
		}
	}
	if (dump != NULL)
		fclose(dump);
	qsort(v, k, sizeof(*v), cmp_u64);
	qsort(nv, k, sizeof(*nv), cmp_u64);
	lost = o.n - rcvd;
	fail = run_ret != PEER_PASS || lost || bad || dups || stray || over || zero_rcvd != 1;
	if (first_bad[0] != '\0')
		printf("# first bad: %s\n", first_bad);
	printf("RESULT: %s sent=%" PRIu32 " received=%" PRIu32 " lost=%" PRIu64
	       " bad=%" PRIu64 " dup=%" PRIu64 " stray=%" PRIu64 " warmup=%" PRIu32
	       " over_bound=%" PRIu64 " bound_us=%" PRIu32 " p50_us=%.1f p99_us=%.1f max_us=%.1f"
	       " run=%d\n",
	       fail ? "FAIL" : "PASS", o.n, rcvd, lost, bad, dups, stray, zero_rcvd, over,
	       o.max_latency_us, k ? v[k / 2] / 1e3 : 0.0,
	       k ? v[RTE_MIN(k - 1, (uint32_t)(k * 0.99))] / 1e3 : 0.0,
	       k ? v[k - 1] / 1e3 : 0.0, run_ret);
	printf("LATENCY p999_us=%.1f over_1ms=%" PRIu64 " over_5ms=%" PRIu64
	       " net_p50_us=%.1f net_p99_us=%.1f net_p999_us=%.1f net_max_us=%.1f"
	       " net_over_1ms=%" PRIu64 " net_over_5ms=%" PRIu64 " runq_watched=%d"
	       " peer_stall_ms=%.3f over_bound_with_steal=%" PRIu64 "\n",
	       k ? v[RTE_MIN(k - 1, (uint32_t)(k * 0.999))] / 1e3 : 0.0, over1, over5,
	       k ? nv[k / 2] / 1e3 : 0.0, k ? nv[RTE_MIN(k - 1, (uint32_t)(k * 0.99))] / 1e3 : 0.0,
	       k ? nv[RTE_MIN(k - 1, (uint32_t)(k * 0.999))] / 1e3 : 0.0,
	       k ? nv[k - 1] / 1e3 : 0.0, nover1, nover5, fe_sched_fd >= 0, stalls / 1e6, excused);
	fflush(stdout);
	free(v);
	free(nv);
	if (run_ret != PEER_PASS)
		return run_ret;
	return fail ? PEER_FAIL : PEER_PASS;
}

static int
port_setup(void)
{
	struct rte_eth_conf conf;
	struct rte_eth_link link;
	uint64_t end;
	int ret;

	if (rte_eth_dev_count_avail() != 1) {
		fprintf(stderr, "need exactly one port (--vdev net_vhost0,iface=...)\n");
		return PEER_SETUP;
	}
	port = 0;
	while (!rte_eth_dev_is_valid_port(port))
		port++;
	pool = rte_pktmbuf_pool_create("peer_pool", PEER_NB_MBUFS, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pool == NULL)
		return PEER_SETUP;
	memset(&conf, 0, sizeof(conf));
	/* net_vhost creates its socket here. */
	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, PEER_RING, rte_socket_id(), NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, PEER_RING, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(port) != 0)
		return PEER_SETUP;
	rte_eth_macaddr_get(port, &my_mac);
	printf("READY port=%u\n", port);
	fflush(stdout);
	end = now_ns() + 30ull * 1000000000;
	for (;;) {
		ret = rte_eth_link_get_nowait(port, &link);
		if (ret == 0 && link.link_status == RTE_ETH_LINK_UP)
			break;
		if (quit || now_ns() > end)
			return PEER_LINK;
		sleep_us(10000);
	}
	printf("LINK up\n");
	fflush(stdout);
	return PEER_PASS;
}

static int
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "burst", required_argument, NULL, 'b' },
		{ "sparse", required_argument, NULL, 's' },
		{ "idle", required_argument, NULL, 'i' },
		{ "burst-size", required_argument, NULL, 'z' },
		{ "window", required_argument, NULL, 'w' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "gap-min-us", required_argument, NULL, 'm' },
		{ "gap-max-us", required_argument, NULL, 'M' },
		{ "max-latency-us", required_argument, NULL, 'L' },
		{ "loss-timeout-ms", required_argument, NULL, 'l' },
		{ "macswap", no_argument, NULL, 'x' },
		{ "timeout", required_argument, NULL, 't' },
		{ "linger", required_argument, NULL, 'G' },
		{ "gap2-min-us", required_argument, NULL, 'n' },
		{ "gap2-max-us", required_argument, NULL, 'N' },
		{ "fe-pid-file", required_argument, NULL, 'p' },
		{ "dump", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long v = optarg ? strtoul(optarg, NULL, 0) : 0;

		switch (c) {
		case 'b': o.mode = MODE_BURST; o.n = (uint32_t)v; break;
		case 's': o.mode = MODE_SPARSE; o.n = (uint32_t)v; break;
		case 'i': o.mode = MODE_IDLE; o.n = 1; o.idle_s = strtod(optarg, NULL); break;
		case 'z': o.burst_size = (uint32_t)RTE_MIN(v, (unsigned long)PEER_BURST); break;
		case 'w': o.window = (uint32_t)v; break;
		case 'g': o.gap_us = (uint32_t)v; break;
		case 'm': o.gap_min_us = (uint32_t)v; break;
		case 'M': o.gap_max_us = (uint32_t)v; break;
		case 'L': o.max_latency_us = (uint32_t)v; break;
		case 'l': o.loss_timeout_ms = (uint32_t)v; break;
		case 'x': o.macswap = true; break;
		case 't': o.timeout_s = strtod(optarg, NULL); break;
		case 'G': o.linger_s = strtod(optarg, NULL); break;
		case 'n': o.gap2_min_us = (uint32_t)v; break;
		case 'N': o.gap2_max_us = (uint32_t)v; break;
		case 'p': o.fe_pid_file = optarg; break;
		case 'D': o.dump = optarg; break;
		default: return -1;
		}
	}
	if (o.mode == MODE_NONE || o.n == 0 || o.n > PEER_MAX_N || o.burst_size == 0 ||
	    o.window < o.burst_size || o.gap_min_us > o.gap_max_us ||
	    o.gap2_min_us > o.gap2_max_us) {
		fprintf(stderr, "need one of --burst N, --sparse N, --idle S (and sane options)\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	int ret, code;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		printf("RESULT: FAIL reason=eal_init\n");
		return PEER_SETUP;
	}
	if (parse(argc - ret, argv + ret) != 0) {
		rte_eal_cleanup();
		return PEER_USAGE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	run_id = (uint32_t)(now_ns() ^ ((uint64_t)getpid() << 16));
	seen = calloc(o.n + 1, 1);
	lat_ns = calloc(o.n + 1, sizeof(*lat_ns));
	net_ns = calloc(o.n + 1, sizeof(*net_ns));
	stall_ns = calloc(o.n + 1, sizeof(*stall_ns));
	stolen = calloc(o.n + 1, 1);
	if (seen == NULL || lat_ns == NULL || net_ns == NULL || stall_ns == NULL || stolen == NULL)
		return PEER_SETUP;


	ret = port_setup();
	deadline_ns = now_ns() + (uint64_t)(o.timeout_s * 1e9);
	if (ret == PEER_PASS) {
		/* Warm-up: vnapi-fwd is in its loop once this returns. */
		ret = one(0, 20000);
		if (ret == 1)
			ret = PEER_FAIL;
	}
	if (ret == PEER_PASS) {
		/* Let the front end settle (arm and sleep) before measuring. */
		uint64_t end = now_ns() + 200000000ull;
		FILE *pf = o.fe_pid_file != NULL ? fopen(o.fe_pid_file, "r") : NULL;
		long fe_pid = 0;

		if (pf != NULL) {
			char path[64];

			if (fscanf(pf, "%ld", &fe_pid) == 1 && fe_pid > 0) {
				snprintf(path, sizeof(path), "/proc/%ld/schedstat", fe_pid);
				fe_sched_fd = open(path, O_RDONLY | O_CLOEXEC);
				self_sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
				stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
			}
			fclose(pf);
		}

		while (now_ns() < end)
			rx();
		ret = o.mode == MODE_BURST ? run_burst() :
		      o.mode == MODE_SPARSE ? run_sparse() : run_idle();
	}
	code = report(ret);
	if (o.linger_s > 0 && !quit) {
		uint64_t end = now_ns() + (uint64_t)(o.linger_s * 1e9);

		printf("LINGER\n");
		fflush(stdout);
		while (!quit && now_ns() < end) {
			sleep_us(1000);
			rx();
		}
	}
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	free(seen);
	free(lat_ns);
	free(net_ns);
	free(stall_ns);
	free(stolen);
	rte_eal_cleanup();
	return code;
}
