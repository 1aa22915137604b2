/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * vnapi-fwd: forward packets between ethdev ports with lib/napi scheduling
 * every rx queue (poll, interrupt or hybrid).
 *
 * Usage: vnapi-fwd [EAL options] -- [--config '(port,queue,lcore)[,...]']
 *        [--fwd io|macswap] [--mode poll|interrupt|hybrid] [--budget N]
 *        [--defer-us N] [--no-disable-on-race] [--stats N]
 *        [--sleep-timeout-ms N] [--tx-retries N] [--tx-hold-ms N]
 *        [--nb-rxd N] [--nb-txd N] [--duration S]
 *
 * Forwarding: with one port, packets go back out of it; with more, ports
 * are paired in ascending order (first with second, third with fourth; an
 * odd last port sends back to itself). Every lcore has its own tx queue on
 * every port (tx queue index = the lcore's position in the config).
 *
 * Hybrid: the lcore tells lib/napi about work its rx queues do not show
 * (napi_work(): interrupts stay suspended while it is busy) when it sends to
 * another port than the one the packets came from (their answers come back
 * there) and when its tx queue pushes back (the back end is behind).
 *
 * Ends on SIGINT, SIGTERM or after --duration, prints final counters and a
 * last line "FINAL rx=N tx=N dropped=N" (rx = tx + dropped; these count the
 * whole run, the QUEUE/HIST/LCORE_TOTAL lines only since the last restart).
 * A tx queue that stays full holds the frames it refused and stops the rx
 * queue behind them (napi_tx): the sender is refused rather than frames
 * lost; dropped counts what napi_tx gave back or dropped after
 * --tx-hold-ms.
 *
 * Control (DPDK telemetry, e.g. dpdk-telemetry.py -f <file-prefix>):
 *   /vnapi_fwd/port_restart[,MTU]  stop every lcore's napi context, stop every
 *                                  port, (set MTU,) start them, resume
 *   /vnapi_fwd/mtu,MTU             the same with an MTU change
 * The reply (after the restart, or an error after FWD_CTL_TIMEOUT_S) holds
 * the restart count, the mbufs of the pool in use while the ports were
 * stopped (every ring released: the same figure every time unless mbufs
 * leak), and the stop and start times. devtools/soak.py drives them.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
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
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pdump.h>
#include <rte_telemetry.h>

#include "napi.h"
#include "vnapi_compat.h"

#define FWD_MAX_ENTRIES 64
#define FWD_MAX_LCORES  16
#define FWD_MBUF_CACHE  256
#define FWD_NB_RXD      512
#define FWD_NB_TXD      512
#define FWD_CTL_TIMEOUT_S 30 /* a control request not served by then is reported failed */

enum fwd_kind {
	FWD_IO,
	FWD_MACSWAP,
};

struct fwd_entry {
	uint16_t port;
	uint16_t queue;
	unsigned int lcore;
};

/* Handler argument of one rx entry. */
struct fwd_target {
	uint16_t dst_port;
	uint16_t dst_queue;
	struct fwd_lcore *lc;
};

struct fwd_lcore {
	unsigned int lcore;
	uint16_t txq;                /* this lcore's tx queue on every port */
	struct napi_ctx *ctx;
	struct fwd_target targets[FWD_MAX_ENTRIES];
	unsigned int nb_targets;
	/* Written by the lcore only, read at the end. */
	uint64_t rx;
	uint64_t tx;
	uint64_t dropped;
	uint64_t hold_drops;         /* tx_hold_drops of the contexts freed */
	int ret;
};

struct fwd_opts {
	struct fwd_entry entries[FWD_MAX_ENTRIES];
	unsigned int nb_entries;
	enum fwd_kind fwd;
	enum napi_mode mode;
	uint16_t budget;
	/* defer_us, disable_on_race, sleep_timeout_ms, tx_retries,
	 * tx_hold_ms: the library's defaults unless an option says. */
	struct napi_ctx_conf ctx;
	uint32_t stats_s;
	uint16_t nb_rxd;
	uint16_t nb_txd;
	uint32_t duration_s;
};

static struct fwd_opts opts;

static struct fwd_lcore fwd_lcores[FWD_MAX_LCORES];
static unsigned int fwd_nb_lcores;
static uint16_t fwd_ports[RTE_MAX_ETHPORTS];
static unsigned int fwd_nb_ports;
static volatile sig_atomic_t fwd_quit;
/* Posted (async-signal-safe) to wake the main thread when it has no context to run. */
static sem_t fwd_wake;

/*
 * A control request (telemetry thread) for the main thread, which serves it
 * while no lcore runs: the lock also covers creating and freeing the napi
 * contexts, so that a request never stops a context being freed.
 */
struct fwd_ctl {
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* CLOCK_MONOTONIC; signalled when a request is served */
	bool busy;               /* a request is pending or being served */
	bool pending;            /* ... and the main thread has not taken it yet */
	uint64_t seq;            /* requests served */
	uint16_t mtu;            /* of the pending request; 0: keep the MTU */
	/* Outcome of the last request served. */
	int ret;
	const char *failed;      /* the step that failed, or NULL */
	uint32_t mtu_now;
	uint64_t in_use_stopped;
	uint64_t stop_us;
	uint64_t start_us;
};

static struct fwd_ctl fwd_ctl = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- signals ---------------------------------------------------------------- */

static void
fwd_on_signal(int sig)
{
	unsigned int i;

	fwd_quit = 1;
	/* napi_stop is async-signal-safe: a flag and an eventfd write. */
	for (i = 0; i < fwd_nb_lcores; i++)
		if (fwd_lcores[i].ctx != NULL)
			napi_stop(fwd_lcores[i].ctx);
	sem_post(&fwd_wake);
}

static const int fwd_signals[] = { SIGINT, SIGTERM, SIGALRM };

static void
fwd_block_signals(int how)
{
	sigset_t set;
	unsigned int i;

	sigemptyset(&set);
	for (i = 0; i < RTE_DIM(fwd_signals); i++)
		sigaddset(&set, fwd_signals[i]);
	pthread_sigmask(how, &set, NULL);
}

/* ---- options ----------------------------------------------------------------- */

static void
usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [EAL options] -- [options]\n"
		"  --config '(port,queue,lcore)[,...]'  rx queues and the lcore polling each\n"
		"                          (default: (0,0,<main lcore>))\n"
		"  --fwd io|macswap        forwarding (default io)\n"
		"  --mode poll|interrupt|hybrid  scheduling of every rx queue (default hybrid)\n"
		"  --budget N              packets per queue per round, 1..%u (default %u)\n"
		"  --defer-us N            hybrid: poll an idle queue at most N us before arming it\n"
		"                          (the cap of its learned window; 0: arm at the first empty\n"
		"                          round; default %u: one sleep/wake cycle; at most %u)\n"
		"  --no-disable-on-race    leave a queue armed when the arming re-check finds work\n"
		"  --stats N               print per-queue figures every N seconds (default 0: off)\n"
		"  --sleep-timeout-ms N    housekeeping timeout of a sleeping lcore (default 0: none)\n"
		"  --tx-retries N          tx back-pressure retries with reclaim (default %u)\n"
		"  --tx-hold-ms N          hold what a full tx queue refused, its rx queue unpolled,\n"
		"                          at most N ms, then drop it (0: drop at once; default %u;\n"
		"                          at most %u)\n"
		"  --nb-rxd N, --nb-txd N  ring sizes (default %u, %u)\n"
		"  --duration S            stop after S seconds (default 0: at SIGINT/SIGTERM)\n"
		"Telemetry: /vnapi_fwd/port_restart[,MTU], /vnapi_fwd/mtu,MTU restart every port\n",
		prog, NAPI_BUDGET_MAX, NAPI_BUDGET_DEFAULT, NAPI_DEFER_US_DEFAULT,
		NAPI_DEFER_US_MAX, NAPI_TX_RETRIES_DEFAULT, NAPI_TX_HOLD_MS_DEFAULT,
		NAPI_TX_HOLD_MS_MAX, FWD_NB_RXD, FWD_NB_TXD);
}

/* The defaults, the library's among them: what usage() says. */
static void
fwd_opts_init(struct fwd_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->fwd = FWD_IO;
	o->mode = NAPI_MODE_HYBRID;
	o->budget = NAPI_BUDGET_DEFAULT;
	o->nb_rxd = FWD_NB_RXD;
	o->nb_txd = FWD_NB_TXD;
	napi_ctx_conf_init(&o->ctx);
}

static int
parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* "(p,q,l),(p,q,l)" */
static int
parse_config(const char *s, struct fwd_opts *o)
{
	const char *p = s;

	o->nb_entries = 0;
	while (*p != '\0') {
		unsigned int port, queue, lcore;
		int used = 0;

		if (o->nb_entries == FWD_MAX_ENTRIES)
			return -ENOSPC;
		if (sscanf(p, " (%u , %u , %u ) %n", &port, &queue, &lcore, &used) != 3 ||
		    used == 0)
			return -EINVAL;
		if (port >= RTE_MAX_ETHPORTS || queue > UINT16_MAX || lcore >= RTE_MAX_LCORE)
			return -ERANGE;
		o->entries[o->nb_entries++] = (struct fwd_entry){
			.port = (uint16_t)port, .queue = (uint16_t)queue, .lcore = lcore };
		p += used;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -EINVAL;
	}
	return o->nb_entries > 0 ? 0 : -EINVAL;
}

static int
parse_args(int argc, char **argv, struct fwd_opts *o)
{
	enum {
		OPT_CONFIG = 256, OPT_FWD, OPT_MODE, OPT_BUDGET, OPT_DEFER_US,
		OPT_NO_DOR, OPT_STATS, OPT_SLEEP_TMO, OPT_TX_RETRIES, OPT_TX_HOLD, OPT_NB_RXD,
		OPT_NB_TXD, OPT_DURATION, OPT_HELP,
	};
	static const struct option lo[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "fwd", required_argument, NULL, OPT_FWD },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "defer-us", required_argument, NULL, OPT_DEFER_US },
		{ "no-disable-on-race", no_argument, NULL, OPT_NO_DOR },
		{ "stats", required_argument, NULL, OPT_STATS },
		{ "sleep-timeout-ms", required_argument, NULL, OPT_SLEEP_TMO },
		{ "tx-retries", required_argument, NULL, OPT_TX_RETRIES },
		{ "tx-hold-ms", required_argument, NULL, OPT_TX_HOLD },
		{ "nb-rxd", required_argument, NULL, OPT_NB_RXD },
		{ "nb-txd", required_argument, NULL, OPT_NB_TXD },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t v;
	int c, ret;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case OPT_CONFIG:
			ret = parse_config(optarg, o);
			break;
		case OPT_FWD:
			if (strcmp(optarg, "io") == 0)
				o->fwd = FWD_IO;
			else if (strcmp(optarg, "macswap") == 0)
				o->fwd = FWD_MACSWAP;
			else
				ret = -EINVAL;
			break;
		case OPT_MODE:
			ret = napi_mode_parse(optarg, &o->mode);
			break;
		case OPT_BUDGET:
			ret = parse_u32(optarg, 1, NAPI_BUDGET_MAX, &v);
			o->budget = (uint16_t)v;
			break;
		case OPT_DEFER_US:
			ret = parse_u32(optarg, 0, NAPI_DEFER_US_MAX, &o->ctx.defer_us);
			break;
		case OPT_NO_DOR:
			o->ctx.disable_on_race = false;
			break;
		case OPT_STATS:
			ret = parse_u32(optarg, 0, 3600, &o->stats_s);
			break;
		case OPT_SLEEP_TMO:
			ret = parse_u32(optarg, 0, 3600000, &o->ctx.sleep_timeout_ms);
			break;
		case OPT_TX_RETRIES:
			ret = parse_u32(optarg, 0, 1000000, &o->ctx.tx_retries);
			break;
		case OPT_TX_HOLD:
			ret = parse_u32(optarg, 0, NAPI_TX_HOLD_MS_MAX, &o->ctx.tx_hold_ms);
			break;
		case OPT_NB_RXD:
			ret = parse_u32(optarg, 1, 32768, &v);
			o->nb_rxd = (uint16_t)v;
			break;
		case OPT_NB_TXD:
			ret = parse_u32(optarg, 1, 32768, &v);
			o->nb_txd = (uint16_t)v;
			break;
		case OPT_DURATION:
			ret = parse_u32(optarg, 0, 864000, &o->duration_s);
			break;
		default:
			return -EINVAL;
		}
		if (ret != 0) {
			fprintf(stderr, "bad value for --%s: '%s'\n", lo[c - OPT_CONFIG].name,
				optarg);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->nb_entries == 0)
		o->entries[o->nb_entries++] = (struct fwd_entry){
			.port = 0, .queue = 0, .lcore = rte_get_main_lcore() };
	return 0;
}

/* ---- forwarding -------------------------------------------------------------- */

static void
fwd_macswap(struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_ether_hdr *eh;
		struct rte_ether_addr tmp;

		if (rte_pktmbuf_data_len(pkts[i]) < sizeof(*eh))
			continue;
		eh = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);
		rte_ether_addr_copy(&eh->dst_addr, &tmp);
		rte_ether_addr_copy(&eh->src_addr, &eh->dst_addr);
		rte_ether_addr_copy(&tmp, &eh->src_addr);
	}
}

static void
fwd_handler(struct napi_ctx *ctx, uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
	    uint16_t n, void *arg)
{
	struct fwd_target *t = arg;
	uint16_t sent, i;

	if (opts.fwd == FWD_MACSWAP)
		fwd_macswap(pkts, n);
	sent = napi_tx(ctx, t->dst_port, t->dst_queue, pkts, n);
	for (i = sent; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
	/*
	 * Work the rx queue does not show: the answers to what went out of
	 * another port come back there, and a tx queue that pushed back has a
	 * back end behind. Either way the lcore stays busy: keep every queue of
	 * its context polled (interrupts suspended) for the window's cap.
	 */
	if (opts.mode == NAPI_MODE_HYBRID && (t->dst_port != port || sent < n))
		napi_work(ctx);
	t->lc->rx += n;
	t->lc->tx += sent;
	t->lc->dropped += n - sent;
}

static int
fwd_lcore_main(void *arg)
{
	struct fwd_lcore *lc = arg;

	lc->ret = napi_run(lc->ctx);
	return lc->ret;
}

/* ---- setup ----------------------------------------------------------------- */

static struct fwd_lcore *
fwd_lcore_get(unsigned int lcore)
{
	unsigned int i;

	for (i = 0; i < fwd_nb_lcores; i++)
		if (fwd_lcores[i].lcore == lcore)
			return &fwd_lcores[i];
	if (fwd_nb_lcores == FWD_MAX_LCORES)
		return NULL;
	fwd_lcores[fwd_nb_lcores] = (struct fwd_lcore){
		.lcore = lcore, .txq = (uint16_t)fwd_nb_lcores };
	return &fwd_lcores[fwd_nb_lcores++];
}

static bool
fwd_port_used(uint16_t port)
{
	unsigned int i;

	for (i = 0; i < fwd_nb_ports; i++)
		if (fwd_ports[i] == port)
			return true;
	return false;
}

static uint16_t
fwd_dst_port(uint16_t port)
{
	unsigned int i;

	for (i = 0; i < fwd_nb_ports; i++) {
		if (fwd_ports[i] != port)
			continue;
		if (i % 2 == 0)
			return i + 1 < fwd_nb_ports ? fwd_ports[i + 1] : port;
		return fwd_ports[i - 1];
	}
	return port;
}

static int
cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static int
fwd_port_setup(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t nb_rxq = 0, nb_rxd = opts.nb_rxd, nb_txd = opts.nb_txd, q;
	unsigned int i;
	int ret;

	for (i = 0; i < opts.nb_entries; i++)
		if (opts.entries[i].port == port)
			nb_rxq = RTE_MAX(nb_rxq, (uint16_t)(opts.entries[i].queue + 1));
	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	if (nb_rxq > info.max_rx_queues || fwd_nb_lcores > info.max_tx_queues) {
		fprintf(stderr, "port %u: %u rx / %u tx queues wanted, %u / %u available\n",
			port, nb_rxq, fwd_nb_lcores, info.max_rx_queues, info.max_tx_queues);
		return -EINVAL;
	}
	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = opts.mode != NAPI_MODE_POLL;
	ret = rte_eth_dev_configure(port, nb_rxq, (uint16_t)fwd_nb_lcores, &conf);
	if (ret != 0) {
		fprintf(stderr, "port %u: configure failed: %s\n", port, rte_strerror(-ret));
		return ret;
	}
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (ret != 0)
		return ret;
	for (q = 0; q < nb_rxq; q++) {
		ret = rte_eth_rx_queue_setup(port, q, nb_rxd, rte_eth_dev_socket_id(port),
					     NULL, pool);
		if (ret != 0) {
			fprintf(stderr, "port %u rxq %u: setup failed: %s\n", port, q,
				rte_strerror(-ret));
			return ret;
		}
	}
	for (q = 0; q < fwd_nb_lcores; q++) {
		ret = rte_eth_tx_queue_setup(port, q, nb_txd, rte_eth_dev_socket_id(port), NULL);
		if (ret != 0) {
			fprintf(stderr, "port %u txq %u: setup failed: %s\n", port, q,
				rte_strerror(-ret));
			return ret;
		}
	}
	ret = rte_eth_dev_start(port);
	if (ret != 0) {
		fprintf(stderr, "port %u: start failed: %s\n", port, rte_strerror(-ret));
		return ret;
	}
	rte_eth_promiscuous_enable(port); /* not every vdev has it: ignored */
	printf("port %u (%s): %u rxq x %u, %u txq x %u, rx interrupts %s\n", port,
	       info.driver_name, nb_rxq, nb_rxd, fwd_nb_lcores, nb_txd,
	       conf.intr_conf.rxq ? "on" : "off");
	return 0;
}

/*
 * The napi context of every lcore, with its entries (the targets are set up
 * once in fwd_setup). Called at start and after each control restart (a
 * stopped context stays stopped: a new one is made). Caller holds
 * fwd_ctl.lock, or no other thread runs yet.
 */
static int
fwd_ctx_create_all(void)
{
	unsigned int i, n[FWD_MAX_LCORES] = { 0 };
	int ret;

	for (i = 0; i < fwd_nb_lcores; i++) {
		struct fwd_lcore *lc = &fwd_lcores[i];
		struct napi_ctx_conf cc;

		cc = opts.ctx;
		cc.lcore_id = lc->lcore;
		lc->ret = 0;
		lc->ctx = napi_ctx_create(&cc);
		if (lc->ctx == NULL) {
			fprintf(stderr, "lcore %u: napi context: %s\n", lc->lcore,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	for (i = 0; i < opts.nb_entries; i++) {
		const struct fwd_entry *e = &opts.entries[i];
		struct fwd_lcore *lc = fwd_lcore_get(e->lcore);
		unsigned int li = (unsigned int)(lc - fwd_lcores);
		struct fwd_target *t = &lc->targets[n[li]++];
		struct napi_queue_conf qc;

		memset(&qc, 0, sizeof(qc));
		qc.port = e->port;
		qc.queue = e->queue;
		qc.mode = opts.mode;
		qc.budget = opts.budget;
		qc.handler = fwd_handler;
		qc.handler_arg = t;
		qc.has_tx = true;
		qc.tx_port = t->dst_port;
		qc.tx_queue = t->dst_queue;
		ret = napi_queue_add(lc->ctx, &qc);
		if (ret < 0) {
			fprintf(stderr, "(%u,%u,%u): napi_queue_add: %s\n", e->port, e->queue,
				e->lcore, rte_strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Free every lcore's context. Caller holds fwd_ctl.lock (or is alone). */
static void
fwd_ctx_free_all(void)
{
	unsigned int i;

	for (i = 0; i < fwd_nb_lcores; i++) {
		struct napi_lcore_stats ls;

		if (fwd_lcores[i].ctx != NULL &&
		    napi_stats_get(fwd_lcores[i].ctx, &ls, NULL, 0) >= 0)
			fwd_lcores[i].hold_drops += ls.tx_hold_drops;
		napi_ctx_free(fwd_lcores[i].ctx);
		fwd_lcores[i].ctx = NULL;
	}
}

static int
fwd_setup(struct rte_mempool **poolp)
{
	struct rte_mempool *pool;
	unsigned int i, nb_mbufs;
	int ret;

	for (i = 0; i < opts.nb_entries; i++) {
		const struct fwd_entry *e = &opts.entries[i];

		if (!rte_eth_dev_is_valid_port(e->port)) {
			fprintf(stderr, "--config: port %u does not exist (%u ports)\n", e->port,
				rte_eth_dev_count_avail());
			return -EINVAL;
		}
		if (!rte_lcore_is_enabled(e->lcore)) {
			fprintf(stderr, "--config: lcore %u is not enabled in EAL\n", e->lcore);
			return -EINVAL;
		}
		if (fwd_lcore_get(e->lcore) == NULL) {
			fprintf(stderr, "--config: more than %u lcores\n", FWD_MAX_LCORES);
			return -EINVAL;
		}
		if (!fwd_port_used(e->port))
			fwd_ports[fwd_nb_ports++] = e->port;
	}
	qsort(fwd_ports, fwd_nb_ports, sizeof(fwd_ports[0]), cmp_u16);

	nb_mbufs = fwd_nb_ports * (FWD_MAX_ENTRIES * opts.nb_rxd / 4 + fwd_nb_lcores * opts.nb_txd) +
		   fwd_nb_lcores * (FWD_MBUF_CACHE + NAPI_BUDGET_MAX) + 8192;
	pool = rte_pktmbuf_pool_create("fwd_pool", nb_mbufs, FWD_MBUF_CACHE, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "mbuf pool of %u: %s\n", nb_mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	*poolp = pool;
	for (i = 0; i < fwd_nb_ports; i++) {
		ret = fwd_port_setup(fwd_ports[i], pool);
		if (ret != 0)
			return ret;
	}

	for (i = 0; i < opts.nb_entries; i++) {
		const struct fwd_entry *e = &opts.entries[i];
		struct fwd_lcore *lc = fwd_lcore_get(e->lcore);
		struct fwd_target *t = &lc->targets[lc->nb_targets++];

		t->dst_port = fwd_dst_port(e->port);
		t->dst_queue = lc->txq;
		t->lc = lc;
		printf("rx port %u queue %u on lcore %u -> tx port %u queue %u, %s, budget %u\n",
		       e->port, e->queue, e->lcore, t->dst_port, t->dst_queue,
		       napi_mode_name(opts.mode), opts.budget);
	}
	return fwd_ctx_create_all();
}

/* ---- periodic stats ---------------------------------------------------------- */

struct fwd_snap {
	struct napi_lcore_stats ls;
	struct napi_queue_stats qs[FWD_MAX_ENTRIES];
	int nb;
};

static struct fwd_snap fwd_prev[FWD_MAX_LCORES];

static double
ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/*
 * A quantile of a timing histogram (delta of two readings, or NULL for
 * none): the upper bound in us of the bucket that holds it (the last
 * bucket's lower bound, 16384, for "at least that"); 0 when empty.
 */
static uint64_t
hist_quantile_us(const uint64_t *h, const uint64_t *prev, double q)
{
	uint64_t d[NAPI_HIST_BUCKETS], total = 0, acc = 0, want;
	unsigned int b;

	for (b = 0; b < NAPI_HIST_BUCKETS; b++) {
		d[b] = h[b] - (prev != NULL ? prev[b] : 0);
		total += d[b];
	}
	if (total == 0)
		return 0;
	want = (uint64_t)((double)total * q);
	want = RTE_MAX(want, (uint64_t)1);
	for (b = 0; b < NAPI_HIST_BUCKETS - 1; b++) {
		acc += d[b];
		if (acc >= want)
			return (uint64_t)1 << b;
	}
	return napi_hist_lower_us(NAPI_HIST_BUCKETS - 1);
}

/* Count of a histogram (delta) at or above `us` (a bucket bound). */
static uint64_t
hist_at_least(const uint64_t *h, const uint64_t *prev, uint64_t us)
{
	uint64_t n = 0;
	unsigned int b;

	for (b = napi_hist_bucket(us); b < NAPI_HIST_BUCKETS; b++)
		n += h[b] - (prev != NULL ? prev[b] : 0);
	return n;
}

static void
fwd_stats_print(double dt, double t)
{
	unsigned int i;
	int j;

	for (i = 0; i < fwd_nb_lcores; i++) {
		struct fwd_snap now, *pv = &fwd_prev[i];
		double cyc;

		now.nb = napi_stats_get(fwd_lcores[i].ctx, &now.ls, now.qs, FWD_MAX_ENTRIES);
		cyc = dt * (double)now.ls.tsc_hz;
		for (j = 0; j < now.nb && j < FWD_MAX_ENTRIES; j++) {
			const struct napi_queue_stats *q = &now.qs[j], *p = &pv->qs[j];
			uint64_t dw = q->wakeups - p->wakeups;

			printf("STATS t=%.1f lcore=%u port=%u queue=%u pps=%.0f wakeups_s=%.1f"
			       " pkts_per_wakeup=%.2f busy_pct=%.2f races=%" PRIu64
			       " wakeups=%" PRIu64 " packets=%" PRIu64 " notify_req_s=%.1f"
			       " window_us=%.2f window_grows=%" PRIu64 " window_shrinks=%" PRIu64
			       " windows_caught=%" PRIu64 " windows_expired=%" PRIu64
			       " paced=%" PRIu64 " pace_tests=%" PRIu64 " pace_slowed=%" PRIu64 "\n",
			       t, fwd_lcores[i].lcore, q->port, q->queue,
			       (double)(q->packets - p->packets) / dt, (double)dw / dt,
			       ratio(q->wakeup_packets - p->wakeup_packets, dw),
			       100.0 * (double)(q->busy_cycles - p->busy_cycles) / cyc,
			       q->races, q->wakeups, q->packets,
			       (double)(q->arms_held - p->arms_held) / dt, (double)q->window_ns / 1e3,
			       q->window_grows, q->window_shrinks, q->windows_caught,
			       q->windows_expired, q->paced, q->pace_tests, q->pace_slowed);
			/* Per-wakeup timing over the interval: bucket bounds in us. */
			printf("WAKE t=%.1f lcore=%u port=%u queue=%u"
			       " wake_poll_p99_us=%" PRIu64 " wake_arm_p50_us=%" PRIu64
			       " wake_arm_p99_us=%" PRIu64 " poll_gap_p99_us=%" PRIu64
			       " poll_gaps_ge1ms=%" PRIu64 " wake_arm_ge1ms=%" PRIu64
			       " spin_p50_us=%" PRIu64 " spin_p99_us=%" PRIu64 "\n",
			       t, fwd_lcores[i].lcore, q->port, q->queue,
			       hist_quantile_us(q->wake_poll_hist, p->wake_poll_hist, 0.99),
			       hist_quantile_us(q->wake_arm_hist, p->wake_arm_hist, 0.5),
			       hist_quantile_us(q->wake_arm_hist, p->wake_arm_hist, 0.99),
			       hist_quantile_us(q->poll_gap_hist, p->poll_gap_hist, 0.99),
			       hist_at_least(q->poll_gap_hist, p->poll_gap_hist, 1024),
			       hist_at_least(q->wake_arm_hist, p->wake_arm_hist, 1024),
			       hist_quantile_us(q->spin_hist, p->spin_hist, 0.5),
			       hist_quantile_us(q->spin_hist, p->spin_hist, 0.99));
		}
		printf("LCORE t=%.1f lcore=%u pps=%.0f wakeups_s=%.1f busy_pct=%.2f"
		       " awake_pct=%.2f sleeps=%" PRIu64 " wakeups=%" PRIu64
		       " spurious=%" PRIu64 " races=%" PRIu64 " tx_unsent=%" PRIu64
		       " tx_held=%" PRIu64 " tx_hold_drops=%" PRIu64
		       " notify_req_s=%.1f work_calls=%" PRIu64 "\n",
		       t, fwd_lcores[i].lcore, (double)(now.ls.packets - pv->ls.packets) / dt,
		       (double)(now.ls.wakeups - pv->ls.wakeups) / dt,
		       100.0 * (double)(now.ls.busy_cycles - pv->ls.busy_cycles) / cyc,
		       RTE_MAX(0.0, 100.0 - 100.0 * (double)(now.ls.sleep_cycles -
							     pv->ls.sleep_cycles) / cyc),
		       now.ls.sleeps, now.ls.wakeups, now.ls.spurious_wakeups, now.ls.races,
		       now.ls.tx_unsent, now.ls.tx_held, now.ls.tx_hold_drops,
		       (double)(now.ls.arms_held - pv->ls.arms_held) / dt,
		       now.ls.work_calls);
		*pv = now;
	}
	fflush(stdout);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t
fwd_stats_thread(void *arg)
{
	uint64_t t0 = mono_ns(), last = t0, next = t0;

	(void)arg;
	fwd_block_signals(SIG_BLOCK);
	while (!fwd_quit) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 200000000 };
		uint64_t now;

		nanosleep(&ts, NULL);
		now = mono_ns();
		if (now < next + (uint64_t)opts.stats_s * 1000000000ull)
			continue;
		next += (uint64_t)opts.stats_s * 1000000000ull;
		/* The contexts are remade at a control restart: not meanwhile. */
		pthread_mutex_lock(&fwd_ctl.lock);
		fwd_stats_print((double)(now - last) / 1e9, (double)(now - t0) / 1e9);
		pthread_mutex_unlock(&fwd_ctl.lock);
		last = now;
	}
	return 0;
}

/* ---- control: port restart and MTU change --------------------------------------- */

/* Ask every lcore's napi_run() to return and wake the main thread. */
static void
fwd_ctl_stop_lcores(void)
{
	unsigned int i;

	for (i = 0; i < fwd_nb_lcores; i++)
		if (fwd_lcores[i].ctx != NULL)
			napi_stop(fwd_lcores[i].ctx);
	sem_post(&fwd_wake);
}

enum fwd_step { FWD_STEP_STOP, FWD_STEP_MTU, FWD_STEP_START };
static const char * const fwd_step_names[] = { "stop", "mtu", "start" };

/* One step of a restart on every port; the first failure is kept (*ret, *failed). */
static void
fwd_ports_step(enum fwd_step step, uint16_t mtu, int *ret, const char **failed)
{
	unsigned int i;
	int r;

	for (i = 0; i < fwd_nb_ports; i++) {
		if (step == FWD_STEP_STOP)
			r = rte_eth_dev_stop(fwd_ports[i]);
		else if (step == FWD_STEP_MTU)
			r = rte_eth_dev_set_mtu(fwd_ports[i], mtu);
		else
			r = rte_eth_dev_start(fwd_ports[i]);
		if (r != 0 && *ret == 0) {
			*ret = r;
			*failed = fwd_step_names[step];
		}
	}
}

/*
 * Serve a control request: the main thread, with every lcore back from
 * napi_run() and signals blocked (the handler walks the contexts). The
 * contexts are freed first (their rx interrupts unregistered and disarmed),
 * the ports stopped, the pool's in-use count read (every ring released:
 * what the application itself holds, nothing here), the MTU set, the ports
 * started, new contexts made. Returns 0, or -errno when no context could be
 * made (the caller then ends the run).
 */
static int
fwd_ctl_serve(struct rte_mempool *pool)
{
	const char *failed = NULL;
	uint64_t t0, t1, t2, in_use;
	uint16_t mtu, mtu_now = 0;
	int ret = 0, r;

	pthread_mutex_lock(&fwd_ctl.lock);
	__atomic_store_n(&fwd_ctl.pending, false, __ATOMIC_RELAXED); /* read unlocked: atomic */
	mtu = fwd_ctl.mtu;
	fwd_ctx_free_all();
	pthread_mutex_unlock(&fwd_ctl.lock);

	t0 = mono_ns();
	fwd_ports_step(FWD_STEP_STOP, 0, &ret, &failed);
	t1 = mono_ns();
	in_use = rte_mempool_in_use_count(pool);
	if (mtu != 0)
		fwd_ports_step(FWD_STEP_MTU, mtu, &ret, &failed);
	t2 = mono_ns();
	fwd_ports_step(FWD_STEP_START, 0, &ret, &failed);
	if (fwd_nb_ports > 0)
		rte_eth_dev_get_mtu(fwd_ports[0], &mtu_now);
	printf("CONTROL restart %" PRIu64 ": %s%s, mtu %u, %" PRIu64 " mbufs in use while stopped,"
	       " stop %" PRIu64 " us, start %" PRIu64 " us\n", fwd_ctl.seq + 1,
	       ret == 0 ? "ok" : "failed at ", failed != NULL ? failed : "", mtu_now, in_use,
	       (t1 - t0) / 1000, (mono_ns() - t2) / 1000);

	pthread_mutex_lock(&fwd_ctl.lock);
	fwd_ctl.ret = ret;
	fwd_ctl.failed = failed;
	fwd_ctl.mtu_now = mtu_now;
	fwd_ctl.in_use_stopped = in_use;
	fwd_ctl.stop_us = (t1 - t0) / 1000;
	fwd_ctl.start_us = (mono_ns() - t2) / 1000;
	r = fwd_ctx_create_all();
	fwd_ctl.seq++;
	fwd_ctl.busy = false;
	pthread_cond_broadcast(&fwd_ctl.cond);
	pthread_mutex_unlock(&fwd_ctl.lock);
	return r;
}

/*
 * /vnapi_fwd/port_restart[,MTU] and /vnapi_fwd/mtu,MTU (telemetry thread):
 * hand the request to the main thread and wait (bounded) until it is
 * served. One request at a time: -EBUSY while one is under way.
 */
static int
fwd_tel_restart(const char *cmd, const char *params, struct rte_tel_data *d)
{
	bool need_mtu = strcmp(cmd, "/vnapi_fwd/mtu") == 0;
	struct timespec until;
	uint32_t mtu = 0;
	uint64_t seq;
	int ret = 0;

	if (params != NULL && *params != '\0') {
		if (parse_u32(params, RTE_ETHER_MIN_MTU, UINT16_MAX, &mtu) != 0)
			return -EINVAL;
	} else if (need_mtu) {
		return -EINVAL;
	}
	pthread_mutex_lock(&fwd_ctl.lock);
	if (fwd_ctl.busy || fwd_quit) {
		pthread_mutex_unlock(&fwd_ctl.lock);
		return -EBUSY;
	}
	fwd_ctl.busy = true;
	/* Release: pairs with the acquire load in fwd_run_once(). */
	__atomic_store_n(&fwd_ctl.pending, true, __ATOMIC_RELEASE);
	fwd_ctl.mtu = (uint16_t)mtu;
	seq = fwd_ctl.seq;
	fwd_ctl_stop_lcores();
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += FWD_CTL_TIMEOUT_S;
	while (fwd_ctl.seq == seq && !fwd_quit && ret == 0)
		ret = pthread_cond_timedwait(&fwd_ctl.cond, &fwd_ctl.lock, &until);
	rte_tel_data_start_dict(d);
	if (fwd_ctl.seq == seq) {
		rte_tel_data_add_dict_string(d, "result", fwd_quit ? "quitting" : "timeout");
	} else {
		rte_tel_data_add_dict_string(d, "result", fwd_ctl.ret == 0 ? "ok" : "failed");
		if (fwd_ctl.failed != NULL)
			rte_tel_data_add_dict_string(d, "failed_at", fwd_ctl.failed);
		rte_tel_data_add_dict_int(d, "errno", -fwd_ctl.ret);
		vnapi_tel_dict_add_u64(d, "restarts", fwd_ctl.seq);
		vnapi_tel_dict_add_u64(d, "mtu", fwd_ctl.mtu_now);
		vnapi_tel_dict_add_u64(d, "mbufs_in_use_stopped", fwd_ctl.in_use_stopped);
		vnapi_tel_dict_add_u64(d, "stop_us", fwd_ctl.stop_us);
		vnapi_tel_dict_add_u64(d, "start_us", fwd_ctl.start_us);
	}
	pthread_mutex_unlock(&fwd_ctl.lock);
	return 0;
}

static int
fwd_ctl_init(void)
{
	pthread_condattr_t ca;
	int ret;

	if (sem_init(&fwd_wake, 0, 0) != 0)
		return -errno;
	ret = pthread_condattr_init(&ca);
	if (ret == 0)
		ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (ret == 0)
		ret = pthread_cond_init(&fwd_ctl.cond, &ca);
	pthread_condattr_destroy(&ca);
	return -ret;
}

/*
 * Once the ports and contexts are set up: from then on a request may come
 * in (the telemetry thread reads fwd_lcores[] and fwd_nb_lcores, which no
 * longer change but for the contexts, remade under fwd_ctl.lock).
 */
static void
fwd_ctl_register(void)
{
	rte_telemetry_register_cmd("/vnapi_fwd/port_restart", fwd_tel_restart,
				   "Stop and start every port (lcores paused). Parameters: [int mtu]");
	rte_telemetry_register_cmd("/vnapi_fwd/mtu", fwd_tel_restart,
				   "Stop every port, set the MTU, start them. Parameters: int mtu");
}

/* ---- main --------------------------------------------------------------------- */

/* Print lc's QUEUE, HIST and LCORE_TOTAL lines; returns its frames dropped held. */
static uint64_t
fwd_lcore_report(const struct fwd_lcore *lc)
{
	struct napi_queue_stats qs[FWD_MAX_ENTRIES];
	struct napi_lcore_stats ls;
	int nb, j;

	nb = napi_stats_get(lc->ctx, &ls, qs, FWD_MAX_ENTRIES);
	for (j = 0; j < nb && j < FWD_MAX_ENTRIES; j++)
		printf("QUEUE lcore=%u port=%u queue=%u mode=%s polls=%" PRIu64
		       " empty_polls=%" PRIu64 " packets=%" PRIu64 " arms=%" PRIu64
		       " races=%" PRIu64 " arm_errors=%" PRIu64 " wakeups=%" PRIu64
		       " spurious=%" PRIu64 " timeout_polls=%" PRIu64
		       " pkts_per_wakeup=%.2f tx_sent=%" PRIu64
		       " tx_retries=%" PRIu64 " tx_unsent=%" PRIu64 " tx_reclaimed=%" PRIu64
		       " tx_held=%" PRIu64 " tx_hold_drops=%" PRIu64
		       " tx_blocked_rounds=%" PRIu64 " arms_held=%" PRIu64
		       " window_us=%.2f window_grows=%" PRIu64
		       " window_shrinks=%" PRIu64 " windows_caught=%" PRIu64
		       " windows_expired=%" PRIu64 " probes=%" PRIu64 " probe_hits=%" PRIu64
		       " work_holds=%" PRIu64 " paced=%" PRIu64 " pace_tests=%" PRIu64
		       " pace_slowed=%" PRIu64 " pace_voids=%" PRIu64
		       " pace_switches=%" PRIu64 "\n",
		       lc->lcore, qs[j].port, qs[j].queue, napi_mode_name(qs[j].mode),
		       qs[j].polls, qs[j].empty_polls, qs[j].packets, qs[j].arms,
		       qs[j].races, qs[j].arm_errors, qs[j].wakeups,
		       qs[j].spurious_wakeups, qs[j].timeout_polls,
		       ratio(qs[j].wakeup_packets, qs[j].wakeups),
		       qs[j].tx_sent, qs[j].tx_retries, qs[j].tx_unsent,
		       qs[j].tx_reclaimed, qs[j].tx_held, qs[j].tx_hold_drops,
		       qs[j].tx_blocked_rounds, qs[j].arms_held,
		       (double)qs[j].window_ns / 1e3,
		       qs[j].window_grows, qs[j].window_shrinks, qs[j].windows_caught,
		       qs[j].windows_expired, qs[j].probes, qs[j].probe_hits,
		       qs[j].work_holds, qs[j].paced, qs[j].pace_tests, qs[j].pace_slowed,
		       qs[j].pace_voids, qs[j].pace_switches);
	for (j = 0; j < nb && j < FWD_MAX_ENTRIES; j++) {
		char h[5][NAPI_HIST_BUCKETS * 21];
		const uint64_t *src[5] = { qs[j].arm_wake_hist, qs[j].wake_poll_hist,
					   qs[j].wake_arm_hist, qs[j].poll_gap_hist,
					   qs[j].spin_hist };
		unsigned int k, b;

		for (k = 0; k < RTE_DIM(src); k++) {
			int off = 0;

			for (b = 0; b < NAPI_HIST_BUCKETS; b++)
				off += snprintf(h[k] + off, sizeof(h[k]) - off, "%s%" PRIu64,
						b ? "," : "", src[k][b]);
		}
		printf("HIST lcore=%u port=%u queue=%u arm_wake=%s wake_poll=%s"
		       " wake_arm=%s poll_gap=%s spin=%s\n", lc->lcore, qs[j].port,
		       qs[j].queue, h[0], h[1], h[2], h[3], h[4]);
	}
	printf("LCORE_TOTAL lcore=%u rounds=%" PRIu64 " sleeps=%" PRIu64
	       " sleep_s=%.3f busy_s=%.3f idle_poll_s=%.3f wakeups=%" PRIu64
	       " spurious=%" PRIu64 " pkts_per_wakeup=%.2f defer_us=%" PRIu64
	       " arms_held=%" PRIu64 " work_calls=%" PRIu64 " work_holds=%" PRIu64 "\n",
	       lc->lcore, ls.rounds, ls.sleeps, ratio(ls.sleep_cycles, ls.tsc_hz),
	       ratio(ls.busy_cycles, ls.tsc_hz), ratio(ls.idle_cycles, ls.tsc_hz),
	       ls.wakeups, ls.spurious_wakeups, ratio(ls.wakeup_packets, ls.wakeups),
	       ls.defer_ns / 1000, ls.arms_held, ls.work_calls, ls.work_holds);
	return ls.tx_hold_drops;
}

static void
fwd_final(void)
{
	uint64_t rx = 0, tx = 0, dropped = 0;
	unsigned int i;

	for (i = 0; i < fwd_nb_lcores; i++) {
		const struct fwd_lcore *lc = &fwd_lcores[i];
		/* Taken by napi_tx (counted sent), then dropped held. */
		uint64_t hold_drops = lc->hold_drops;

		if (lc->ctx != NULL)
			hold_drops += fwd_lcore_report(lc);
		rx += lc->rx;
		tx += lc->tx - hold_drops;
		dropped += lc->dropped + hold_drops;
	}
	printf("FINAL rx=%" PRIu64 " tx=%" PRIu64 " dropped=%" PRIu64 "\n", rx, tx, dropped);
	fflush(stdout);
}

/*
 * Run every lcore's context until napi_stop() (a signal or a control
 * request): the other lcores launched, the main lcore's context here (or a
 * wait on fwd_wake). Signals are unblocked only meanwhile: the handler walks
 * the contexts, which a control restart remakes. Returns 0, or 1 when an
 * lcore failed.
 */
static int
fwd_run_once(void)
{
	struct fwd_lcore *main_lc = NULL;
	unsigned int i;
	int ret, code = 0;

	for (i = 0; i < fwd_nb_lcores; i++) {
		struct fwd_lcore *lc = &fwd_lcores[i];

		if (lc->lcore == rte_get_main_lcore()) {
			main_lc = lc;
			continue;
		}
		ret = rte_eal_remote_launch(fwd_lcore_main, lc, lc->lcore);
		if (ret != 0) {
			fprintf(stderr, "lcore %u: launch failed: %s\n", lc->lcore,
				rte_strerror(-ret));
			fwd_on_signal(SIGTERM);
			code = 1;
			break;
		}
	}
	fwd_block_signals(SIG_UNBLOCK);
	if (main_lc != NULL) {
		main_lc->ret = napi_run(main_lc->ctx);
	} else {
		/*
		 * Posted by the signal handler and by a control request. The
		 * acquire load of pending pairs with the requester's release
		 * store before its sem_post (a request is seen at the latest
		 * after the wake it posts).
		 */
		while (!fwd_quit && !__atomic_load_n(&fwd_ctl.pending, __ATOMIC_ACQUIRE) &&
		       code == 0)
			sem_wait(&fwd_wake);
	}
	fwd_block_signals(SIG_BLOCK);
	rte_eal_mp_wait_lcore();
	for (i = 0; i < fwd_nb_lcores; i++)
		if (fwd_lcores[i].ret != 0)
			code = 1;
	return code;
}

int
main(int argc, char **argv)
{
	struct rte_mempool *pool = NULL;
	struct sigaction sa;
	vnapi_ctrl_thread_t stats_tid;
	bool stats_started = false;
	unsigned int i;
	int ret, code = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* EAL's threads (and every lcore) inherit the blocked set: the signals
	 * reach the main thread only, whose sleep they interrupt. */
	fwd_block_signals(SIG_BLOCK);
	fwd_opts_init(&opts);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	/* Serve dpdk-dumpcap / dpdk-pdump (secondary processes) on our ports. */
	if (rte_pdump_init() != 0)
		fprintf(stderr, "pdump init failed: %s (no packet capture)\n",
			rte_strerror(rte_errno));
	if (parse_args(argc, argv, &opts) != 0) {
		usage("vnapi-fwd");
		rte_eal_cleanup();
		return 2;
	}
	ret = fwd_ctl_init();
	if (ret != 0) {
		fprintf(stderr, "control init: %s\n", strerror(-ret));
		rte_eal_cleanup();
		return 1;
	}
	ret = fwd_setup(&pool);
	if (ret != 0) {
		code = 1;
		goto out;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fwd_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < RTE_DIM(fwd_signals); i++)
		sigaction(fwd_signals[i], &sa, NULL);
	fwd_ctl_register();

	if (opts.stats_s > 0) {
		ret = vnapi_ctrl_thread_create(&stats_tid, "vnapi-fwd-stats",
					       fwd_stats_thread, NULL);
		if (ret == 0)
			stats_started = true;
		else
			fprintf(stderr, "stats thread: %s\n", rte_strerror(abs(ret)));
	}

	printf("FORWARDING fwd=%s mode=%s lcores=%u ports=%u defer_us=%u\n",
	       opts.fwd == FWD_IO ? "io" : "macswap", napi_mode_name(opts.mode),
	       fwd_nb_lcores, fwd_nb_ports, opts.ctx.defer_us);
	fflush(stdout);
	if (opts.duration_s > 0)
		alarm(opts.duration_s);
	for (;;) {
		if (fwd_run_once() != 0)
			code = 1;
		if (fwd_quit || code != 0)
			break;
		/* Back from napi_run() without a signal: a control request. */
		if (fwd_ctl_serve(pool) != 0) {
			code = 1;
			break;
		}
	}
	fwd_quit = 1;
	/* A control request that came in meanwhile: its client is told we quit. */
	pthread_mutex_lock(&fwd_ctl.lock);
	pthread_cond_broadcast(&fwd_ctl.cond);
	pthread_mutex_unlock(&fwd_ctl.lock);
	if (stats_started)
		vnapi_ctrl_thread_join(stats_tid);
	fwd_final();

out:
	fwd_block_signals(SIG_BLOCK); /* the handler walks the contexts */
	pthread_mutex_lock(&fwd_ctl.lock);
	fwd_ctx_free_all();
	pthread_mutex_unlock(&fwd_ctl.lock);
	for (i = 0; i < fwd_nb_ports; i++) {
		rte_eth_dev_stop(fwd_ports[i]);
		rte_eth_dev_close(fwd_ports[i]);
	}
	rte_mempool_free(pool);
	rte_pdump_uninit();
	rte_eal_cleanup();
	return code;
}
