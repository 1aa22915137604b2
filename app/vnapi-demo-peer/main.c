/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * vnapi-demo-peer: the back end of devtools/demo.sh.
 *
 * DPDK's net_vhost (--vdev net_vhost0,iface=SOCK on the command line) is the
 * vhost-user server; vnapi-fwd connects to it (net_vnapi or
 * net_virtio_user) and sends every frame back. One lcore sends, receives and
 * measures. The traffic is a list of phases run back to back:
 *
 *   idle:S    send nothing for S seconds (what comes back is counted as bad);
 *   sparse:S  single frames about a millisecond apart (0.5-1.5 ms, uniform),
 *             each sent only after the previous one came back (or was given
 *             up after --loss-ms); the round trip of each is kept, for
 *             p50/p99/max;
 *   burst:S   as fast as the forwarder returns them, with at most --window
 *             frames in flight: no ring on the path (512 descriptors in
 *             vnapi-fwd, 1024 here) can overflow, so every frame taken by
 *             the ring must come back: exact counts at full rate.
 *
 * After each phase the peer waits (--drain-ms at most) until every frame of
 * the phase is back. Lines (stdout, one per event, flushed):
 *   READY                       the port is started (the socket exists)
 *   LINK up                     vnapi-fwd connected
 *   WARMUP ok ms=T              a warm-up frame came back (then --settle-ms)
 *   PHASE i KIND begin secs=S
 *   PHASE i KIND stop secs=S    sending ended
 *   PHASE i KIND result secs= sent= received= lost= bad= mpps= p50_us= p99_us= max_us=
 *   RESULT: PASS|FAIL code=C sent= received= lost= bad=
 * PASS: every frame sent came back, nothing foreign or unexpected arrived.
 * With --linger S the port then stays up (receiving) until SIGINT/SIGTERM or
 * for S seconds, so that the forwarder can be stopped first.
 *
 * Usage: vnapi-demo-peer [EAL options] -- --phase KIND:S [--phase ...] [options]
 * Exit status: 0 pass, 1 traffic check failed, 2 usage, 3 setup, 4 no link,
 * 5 deadline (--timeout), 6 no warm-up frame back, 7 interrupted.
 */

#include <errno.h>
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
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "vnapi_compat.h"

#define DEMO_PASS        0
#define DEMO_FAIL        1
#define DEMO_USAGE       2
#define DEMO_SETUP       3
#define DEMO_LINK        4
#define DEMO_DEADLINE    5
#define DEMO_WARMUP      6
#define DEMO_INTERRUPTED 7

#define DEMO_MAGIC      0x564e444du /* "VNDM" */
#define DEMO_ETHERTYPE  0x88b5      /* IEEE 802 local experimental */
#define DEMO_FRAME      64
#define DEMO_BURST      32
#define DEMO_RING       1024
#define DEMO_NB_MBUFS   8191
#define DEMO_MAX_PHASES 16
#define DEMO_PHASE_WARM 255
#define DEMO_GAP_MIN_US 500
#define DEMO_GAP_MAX_US 1500

enum demo_kind {
	DEMO_KIND_IDLE,
	DEMO_KIND_SPARSE,
	DEMO_KIND_BURST,
};

static const char *const demo_kind_names[] = {
	[DEMO_KIND_IDLE] = "idle",
	[DEMO_KIND_SPARSE] = "sparse",
	[DEMO_KIND_BURST] = "burst",
};

/* Natural alignment throughout (the frame starts at an aligned mbuf data offset). */
struct demo_frame {
	struct rte_ether_hdr eth;
	uint16_t pad0;
	uint32_t magic;
	uint16_t run_id;
	uint8_t phase;
	uint8_t pad1;
	uint64_t seq;
	uint64_t tsc;
};
_Static_assert(sizeof(struct demo_frame) == 40, "demo_frame has hidden padding");
_Static_assert(sizeof(struct demo_frame) <= DEMO_FRAME, "demo_frame does not fit a frame");

struct demo_phase {
	enum demo_kind kind;
	double secs;
	uint64_t sent;      /* taken by the ring */
	uint64_t received;  /* came back, this phase's frames */
	uint64_t *lat;      /* sparse: round trips (TSC), one per frame back */
	uint64_t nb_lat;
	uint64_t max_lat;
};

static struct {
	struct demo_phase phases[DEMO_MAX_PHASES];
	unsigned int nb_phases;
	unsigned int window;
	unsigned int drain_ms;
	unsigned int settle_ms;
	unsigned int loss_ms;
	double link_s;
	double warmup_s;
	double timeout_s;
	double linger_s;
} opt = {
	.window = 256,
	.drain_ms = 1000,
	.settle_ms = 300,
	.loss_ms = 100,
	.link_s = 30.0,
	.warmup_s = 30.0,
	.timeout_s = 600.0,
	.linger_s = 0.0,
};

static volatile sig_atomic_t quit;
static uint16_t port;
static struct rte_mempool *pool;
static uint16_t run_id;
static uint64_t hz;
static uint64_t deadline;
static uint64_t warm_back;
static uint64_t bad;   /* foreign frames, frames of no phase, or of an idle phase */

static void
demo_on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit = 1;
}

static double
demo_us(uint64_t cyc)
{
	return (double)cyc * 1e6 / (double)hz;
}

/* 0 to go on, else the exit status: interrupted or past the deadline. */
static int
demo_stopped(void)
{
	if (quit)
		return DEMO_INTERRUPTED;
	if (rte_rdtsc() > deadline)
		return DEMO_DEADLINE;
	return 0;
}

static uint64_t
demo_rand(void)
{
	static uint64_t s = 0x9e3779b97f4a7c15ull;

	/* xorshift64 */
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

/* Allocate and fill @p n frames of phase @p ph from sequence number @p seq. */
static int
demo_frames(struct rte_mbuf **m, unsigned int n, uint8_t ph, uint64_t seq)
{
	unsigned int i;
	uint64_t now;

	if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0)
		return -ENOMEM;
	now = rte_rdtsc();
	for (i = 0; i < n; i++) {
		struct demo_frame *f = (void *)rte_pktmbuf_append(m[i], DEMO_FRAME);

		memset(f, 0, DEMO_FRAME);
		memset(&f->eth.dst_addr, 0xff, sizeof(f->eth.dst_addr));
		f->eth.src_addr.addr_bytes[0] = 0x02;
		f->eth.ether_type = rte_cpu_to_be_16(DEMO_ETHERTYPE);
		f->magic = DEMO_MAGIC;
		f->run_id = run_id;
		f->phase = ph;
		f->seq = seq + i;
		f->tsc = now;
	}
	return 0;
}

/* Send what the ring takes of @p n new frames; returns how many it took. */
static unsigned int
demo_send(unsigned int n, uint8_t ph, uint64_t seq)
{
	struct rte_mbuf *m[DEMO_BURST];
	uint16_t k;

	if (demo_frames(m, n, ph, seq) != 0)
		return 0;
	k = rte_eth_tx_burst(port, 0, m, (uint16_t)n);
	if (k < n)
		rte_pktmbuf_free_bulk(m + k, n - k);
	return k;
}

static void
demo_account(const struct rte_mbuf *m, uint64_t now)
{
	const struct demo_frame *f;
	struct demo_phase *ph;
	uint64_t lat;

	if (rte_pktmbuf_data_len(m) < sizeof(*f)) {
		bad++;
		return;
	}
	f = rte_pktmbuf_mtod(m, const struct demo_frame *);
	if (f->magic != DEMO_MAGIC || f->run_id != run_id) {
		bad++;
		return;
	}
	if (f->phase == DEMO_PHASE_WARM) {
		warm_back++;
		return;
	}
	if (f->phase >= opt.nb_phases) {
		bad++;
		return;
	}
	ph = &opt.phases[f->phase];
	if (ph->kind == DEMO_KIND_IDLE || f->seq >= ph->sent) {
		bad++;
		return;
	}
	ph->received++;
	lat = now > f->tsc ? now - f->tsc : 0;
	if (lat > ph->max_lat)
		ph->max_lat = lat;
	if (ph->lat != NULL)
		ph->lat[ph->nb_lat++] = lat;
}

static unsigned int
demo_rx(void)
{
	struct rte_mbuf *m[DEMO_BURST];
	uint16_t n, i;
	uint64_t now;

	n = rte_eth_rx_burst(port, 0, m, DEMO_BURST);
	if (n == 0)
		return 0;
	now = rte_rdtsc();
	for (i = 0; i < n; i++)
		demo_account(m[i], now);
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

static int
demo_port_setup(void)
{
	struct rte_eth_conf conf;
	uint16_t pid, n = 0;
	int ret;

	RTE_ETH_FOREACH_DEV(pid) {
		port = pid;
		n++;
	}
	if (n != 1) {
		fprintf(stderr, "need exactly one port (--vdev net_vhost0,iface=SOCK), found %u\n",
			n);
		return DEMO_SETUP;
	}
	pool = rte_pktmbuf_pool_create("demo_pool", DEMO_NB_MBUFS, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
		return DEMO_SETUP;
	}
	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, DEMO_RING, rte_socket_id(), NULL, pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, DEMO_RING, rte_socket_id(), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret != 0) {
		fprintf(stderr, "port %u setup: %s\n", port, rte_strerror(-ret));
		return DEMO_SETUP;
	}
	printf("READY port=%u\n", port);
	return DEMO_PASS;
}

static int
demo_link_wait(void)
{
	uint64_t end = rte_rdtsc() + (uint64_t)(opt.link_s * (double)hz);
	struct rte_eth_link link;
	int ret;

	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status)
			break;
		ret = demo_stopped();
		if (ret != 0)
			return ret;
		if (rte_rdtsc() > end) {
			printf("# no link within %.0f s\n", opt.link_s);
			return DEMO_LINK;
		}
		rte_delay_us_sleep(1000);
	}
	printf("LINK up\n");
	return DEMO_PASS;
}

/* Receive only, for @p ms milliseconds. */
static int
demo_rx_for(unsigned int ms)
{
	uint64_t end = rte_rdtsc() + (uint64_t)ms * hz / 1000;
	int ret;

	while (rte_rdtsc() < end) {
		ret = demo_stopped();
		if (ret != 0)
			return ret;
		demo_rx();
	}
	return DEMO_PASS;
}

/* One warm-up frame every 100 ms until one comes back: vnapi-fwd is forwarding. */
static int
demo_warmup(void)
{
	uint64_t t0 = rte_rdtsc(), end = t0 + (uint64_t)(opt.warmup_s * (double)hz);
	uint64_t seq = 0, next = t0;
	int ret;

	while (warm_back == 0) {
		if (rte_rdtsc() >= next) {
			seq += demo_send(1, DEMO_PHASE_WARM, seq);
			next += hz / 10;
		}
		demo_rx();
		ret = demo_stopped();
		if (ret != 0)
			return ret;
		if (rte_rdtsc() > end) {
			printf("# no warm-up frame back within %.0f s\n", opt.warmup_s);
			return DEMO_WARMUP;
		}
	}
	printf("WARMUP ok ms=%.1f sent=%" PRIu64 "\n", demo_us(rte_rdtsc() - t0) / 1e3, seq);
	return demo_rx_for(opt.settle_ms);
}

static int
demo_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least @p pct % of the values at or below it. */
static double
demo_pct_us(const struct demo_phase *ph, double pct)
{
	uint64_t rank;

	if (ph->nb_lat == 0)
		return 0.0;
	rank = (uint64_t)((pct / 100.0) * (double)ph->nb_lat + 0.999999);
	if (rank == 0)
		rank = 1;
	if (rank > ph->nb_lat)
		rank = ph->nb_lat;
	return demo_us(ph->lat[rank - 1]);
}

static int
demo_run_phase(unsigned int idx)
{
	struct demo_phase *ph = &opt.phases[idx];
	const char *kind = demo_kind_names[ph->kind];
	uint64_t t0, end, now, next_send, t_sent = 0, loss = (uint64_t)opt.loss_ms * hz / 1000;
	uint64_t gap_span = (uint64_t)(DEMO_GAP_MAX_US - DEMO_GAP_MIN_US) * hz / 1000000;
	uint64_t gap_min = (uint64_t)DEMO_GAP_MIN_US * hz / 1000000, drain_end;
	bool waiting = false;
	double secs;
	int ret;

	if (ph->kind == DEMO_KIND_SPARSE) {
		/* At most one frame per 0.5 ms. */
		ph->lat = calloc((size_t)(ph->secs * 1e6 / DEMO_GAP_MIN_US) + 16,
				 sizeof(*ph->lat));
		if (ph->lat == NULL)
			return DEMO_SETUP;
	}
	printf("PHASE %u %s begin secs=%.3f\n", idx, kind, ph->secs);
	t0 = rte_rdtsc();
	end = t0 + (uint64_t)(ph->secs * (double)hz);
	next_send = t0;
	while ((now = rte_rdtsc()) < end) {
		ret = demo_stopped();
		if (ret != 0)
			return ret;
		switch (ph->kind) {
		case DEMO_KIND_IDLE:
			break;
		case DEMO_KIND_SPARSE:
			if (waiting && (ph->received == ph->sent || now - t_sent > loss))
				waiting = false;
			if (!waiting && now >= next_send && demo_send(1, (uint8_t)idx, ph->sent)) {
				ph->sent++;
				waiting = true;
				t_sent = now;
				next_send = now + gap_min + (gap_span ? demo_rand() % gap_span : 0);
			}
			break;
		case DEMO_KIND_BURST:
			if (ph->sent - ph->received + DEMO_BURST <= opt.window)
				ph->sent += demo_send(DEMO_BURST, (uint8_t)idx, ph->sent);
			break;
		}
		demo_rx();
	}
	secs = demo_us(rte_rdtsc() - t0) / 1e6;
	printf("PHASE %u %s stop secs=%.3f\n", idx, kind, secs);
	drain_end = rte_rdtsc() + (uint64_t)opt.drain_ms * hz / 1000;
	while (ph->received < ph->sent && rte_rdtsc() < drain_end) {
		ret = demo_stopped();
		if (ret != 0)
			return ret;
		demo_rx();
	}
	if (ph->nb_lat != 0)
		qsort(ph->lat, ph->nb_lat, sizeof(*ph->lat), demo_cmp_u64);
	printf("PHASE %u %s result secs=%.3f sent=%" PRIu64 " received=%" PRIu64
	       " lost=%" PRId64 " bad=%" PRIu64 " mpps=%.4f p50_us=%.1f p99_us=%.1f max_us=%.1f\n",
	       idx, kind, secs, ph->sent, ph->received, (int64_t)(ph->sent - ph->received), bad,
	       (double)ph->received / secs / 1e6, demo_pct_us(ph, 50), demo_pct_us(ph, 99),
	       demo_us(ph->max_lat));
	free(ph->lat);
	ph->lat = NULL;
	return DEMO_PASS;
}

static void
demo_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL options] -- --phase KIND:S [--phase KIND:S ...] [options]\n"
		"  --phase KIND:S     idle, sparse or burst for S seconds; repeatable, in order\n"
		"  --window N         burst: frames in flight at most (default %u, 32..1024)\n"
		"  --drain-ms N       wait at most N ms for a phase's frames (default %u)\n"
		"  --settle-ms N      quiet after the warm-up (default %u)\n"
		"  --loss-ms N        sparse: give a frame up after N ms (default %u)\n"
		"  --link-timeout S   wait at most S s for the link (default %.0f)\n"
		"  --timeout S        deadline of the whole run (default %.0f)\n"
		"  --linger S         keep the port up after the result (default 0)\n",
		prog, opt.window, opt.drain_ms, opt.settle_ms, opt.loss_ms, opt.link_s,
		opt.timeout_s);
}

static int
demo_parse_phase(const char *arg)
{
	struct demo_phase *ph;
	const char *colon = strchr(arg, ':');
	unsigned int k;
	char *end;

	if (colon == NULL || opt.nb_phases == DEMO_MAX_PHASES)
		return -EINVAL;
	ph = &opt.phases[opt.nb_phases];
	for (k = 0; k < RTE_DIM(demo_kind_names); k++)
		if (strlen(demo_kind_names[k]) == (size_t)(colon - arg) &&
		    strncmp(arg, demo_kind_names[k], (size_t)(colon - arg)) == 0)
			break;
	if (k == RTE_DIM(demo_kind_names))
		return -EINVAL;
	errno = 0;
	ph->secs = strtod(colon + 1, &end);
	if (errno != 0 || end == colon + 1 || *end != '\0' || !(ph->secs > 0 && ph->secs <= 3600))
		return -EINVAL;
	ph->kind = (enum demo_kind)k;
	opt.nb_phases++;
	return 0;
}

static int
demo_parse_num(const char *s, double min, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(*out >= min && *out <= max))
		return -EINVAL;
	return 0;
}

static int
demo_parse(int argc, char **argv)
{
	int i;

	/* Options come in pairs: "--name value". */
	for (i = 1; i < argc; i += 2) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		double d;
		int ret = -EINVAL;

		if (v == NULL) {
			fprintf(stderr, "%s: missing value\n", o);
			return -EINVAL;
		}
		if (strcmp(o, "--phase") == 0) {
			ret = demo_parse_phase(v);
		} else if (strcmp(o, "--window") == 0) {
			ret = demo_parse_num(v, DEMO_BURST, DEMO_RING, &d);
			opt.window = (unsigned int)d;
		} else if (strcmp(o, "--drain-ms") == 0) {
			ret = demo_parse_num(v, 0, 600000, &d);
			opt.drain_ms = (unsigned int)d;
		} else if (strcmp(o, "--settle-ms") == 0) {
			ret = demo_parse_num(v, 0, 600000, &d);
			opt.settle_ms = (unsigned int)d;
		} else if (strcmp(o, "--loss-ms") == 0) {
			ret = demo_parse_num(v, 1, 600000, &d);
			opt.loss_ms = (unsigned int)d;
		} else if (strcmp(o, "--link-timeout") == 0) {
			ret = demo_parse_num(v, 0.001, 3600, &opt.link_s);
		} else if (strcmp(o, "--timeout") == 0) {
			ret = demo_parse_num(v, 0.001, 36000, &opt.timeout_s);
		} else if (strcmp(o, "--linger") == 0) {
			ret = demo_parse_num(v, 0, 36000, &opt.linger_s);
		} else {
			fprintf(stderr, "unknown option '%s'\n", o);
			return -EINVAL;
		}
		if (ret != 0) {
			fprintf(stderr, "%s: bad value '%s'\n", o, v);
			return ret;
		}
	}
	if (opt.nb_phases == 0) {
		fprintf(stderr, "need at least one --phase KIND:S\n");
		return -EINVAL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t sent = 0, received = 0;
	unsigned int i;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		printf("RESULT: FAIL code=%d reason=eal_init\n", DEMO_SETUP);
		return DEMO_SETUP;
	}
	if (demo_parse(argc - ret, argv + ret) != 0) {
		demo_usage(argv[0]);
		rte_eal_cleanup();
		return DEMO_USAGE;
	}
	signal(SIGINT, demo_on_signal);
	signal(SIGTERM, demo_on_signal);
	hz = rte_get_tsc_hz();
	run_id = (uint16_t)(rte_rdtsc() ^ (uint64_t)getpid());
	deadline = rte_rdtsc() + (uint64_t)(opt.timeout_s * (double)hz);

	ret = demo_port_setup();
	if (ret == DEMO_PASS)
		ret = demo_link_wait();
	if (ret == DEMO_PASS)
		ret = demo_warmup();
	for (i = 0; i < opt.nb_phases && ret == DEMO_PASS; i++)
		ret = demo_run_phase(i);
	for (i = 0; i < opt.nb_phases; i++) {
		sent += opt.phases[i].sent;
		received += opt.phases[i].received;
		free(opt.phases[i].lat);
	}
	if (ret == DEMO_PASS && (sent != received || bad != 0))
		ret = DEMO_FAIL;
	printf("RESULT: %s code=%d sent=%" PRIu64 " received=%" PRIu64 " lost=%" PRId64
	       " bad=%" PRIu64 "\n", ret == DEMO_PASS ? "PASS" : "FAIL", ret, sent, received,
	       (int64_t)(sent - received), bad);
	if (opt.linger_s > 0 && !quit && pool != NULL) {
		deadline = rte_rdtsc() + (uint64_t)(opt.linger_s * (double)hz);
		printf("LINGER\n");
		while (demo_stopped() == 0) {
			demo_rx();
			rte_delay_us_sleep(1000);
		}
	}
	if (pool != NULL) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
	rte_eal_cleanup();
	return ret;
}
