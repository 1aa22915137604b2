/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The scheduler: per-entry state, one round, sleep and wakeup, tx with
 * back-pressure, counters and the lcore registry.
 *
 * Entry state is two flags, both owned by the context's thread:
 *   scheduled  polled in the next round
 *   armed      the port's rx interrupt is enabled (as far as we know)
 * polling: scheduled, !armed; waiting: !scheduled, armed; and, with
 * disable_on_race off, a raced arm leaves scheduled && armed (the Linux
 * patch's "before": interrupts stay on while we poll).
 *
 * A hybrid entry also has its deferral window W (cycles, 0..the cap M =
 * defer_us) and an idle period: from its last packet (or wakeup) on, the
 * empty rounds before it arms. The period is a "window" once polled past
 * its first empty round; it ends caught (a packet) or expired (armed).
 * W is learned at the first poll after each wakeup (napi_learn), raised at
 * a race; at W = 0 every NAPI_PROBE_FIRST-th, then 2x rarer, idle period
 * is a probe polled up to M.
 *
 * A hybrid entry that carries a stream also runs a pace test now and then
 * (napi_pace): two halves of NAPI_PACE_HALF_US, one polled with W at the
 * cap M, one with W at the paced cap P (M less one sleep/wake cycle's
 * cost; 0 at the default), in turn first. When the rate of the second is
 * below the first's by more than the counts' noise, the traffic follows
 * the wakeups' delay (a closed loop, a request/response, a sender held
 * back by a full ring): the entry stays "responsive" and learns W up to M.
 * Otherwise the traffic keeps its own pace, sleeping costs it nothing but
 * latency, and after NAPI_PACE_VOTES such tests in a row the entry is
 * "paced": its W is capped at P.
 *
 * Counters have one writer (the context's thread) and readers on other
 * threads (napi_stats_get, telemetry): the writer updates them with relaxed
 * atomic stores, readers use relaxed atomic loads; no ordering between
 * counters is promised.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_pause.h>
#include <rte_spinlock.h>

#include "napi.h"
#include "napi_private.h"

RTE_LOG_REGISTER(napi_logtype, lib.napi, NOTICE);

/* Packets per rx burst inside one entry's budget. */
#define NAPI_BURST 32
/* Hybrid at W = 0: wakeups before the first probe, and the largest backoff. */
#define NAPI_PROBE_FIRST 8
#define NAPI_PROBE_MAX 1024
/*
 * The pace test: each half lasts NAPI_PACE_HALF_US; a test starts once the
 * entry had at least NAPI_PACE_QUARTER_PKTS packets in each of its spacing's
 * quarters of NAPI_PACE_PERIOD_US in a row (a stream, not sparse traffic).
 * The spacing is NAPI_PACE_QUARTERS at first, doubles at each test that
 * confirms a settled verdict (up to NAPI_PACE_QUARTERS_MAX), and is back at
 * NAPI_PACE_QUARTERS when the verdict changes or the stream breaks: the
 * armed half of a test costs a responsive entry's traffic its wakeups, so
 * a verdict that keeps being confirmed is checked more rarely;
 * a half with fewer than NAPI_PACE_HALF_PKTS packets, or that lasted more
 * than NAPI_PACE_HALF_SLACK halves (the traffic stopped), voids the test;
 * the second half's rate counts as lower when it is below the first's by
 * more than NAPI_PACE_MARGIN and by more than two standard deviations of
 * the counts; NAPI_PACE_VOTES tests in a row without a lower rate make an
 * entry paced, one with a lower rate makes it responsive again.
 */
#define NAPI_PACE_HALF_US 500
#define NAPI_PACE_PERIOD_US 50000
#define NAPI_PACE_QUARTERS 4
#define NAPI_PACE_QUARTERS_MAX 32
#define NAPI_PACE_QUARTER_PKTS 64
#define NAPI_PACE_HALF_PKTS 16
#define NAPI_PACE_HALF_SLACK 4
#define NAPI_PACE_MARGIN 0.05
#define NAPI_PACE_VOTES 2
/* Epoll events per sleep: every entry, plus the stop eventfd. */
#define NAPI_MAX_EVENTS (NAPI_MAX_QUEUES + 1)

/* Single writer: a relaxed store of the incremented value. */
#define NAPI_ADD(field, v) \
	__atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)
#define NAPI_SET(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define NAPI_GET(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

struct napi_entry {
	struct napi_queue_conf conf;
	struct napi_ctx *ctx;
	bool scheduled;
	bool armed;
	bool registered;
	bool intr_ok;          /* interrupts usable; false after an error: poll only */
	bool count_ok;         /* rx_queue_count supported */
	bool cleanup_ok;       /* tx_done_cleanup supported */
	bool woken;            /* the next poll is the first after a wakeup */
	bool wake_window;      /* counting wakeup packets until the next arm */
	bool wake_open;        /* woken, not armed again yet (wake_arm_hist) */
	bool gap_valid;        /* last_poll_end is the end of the previous poll */
	bool window_open;      /* hybrid: idle period polled past an empty round */
	bool probing;          /* hybrid: this idle period is a probe (polled up to the cap) */
	bool learn;            /* hybrid: learn W at the next poll (the first after a wakeup) */
	bool paced;            /* hybrid: the traffic keeps its pace when the entry sleeps */
	bool pace_a_first;     /* hybrid: the current test polls at the cap in its first half */
	uint8_t pace_half;     /* hybrid: 0 no test, 1 or 2 the half of the test running */
	uint8_t pace_quarters; /* hybrid: quarters in a row with a stream */
	uint8_t pace_spacing;  /* hybrid: ... that start the next test */
	uint8_t pace_score;    /* hybrid: tests to go without a lower rate before paced */
	uint32_t probe_in;     /* hybrid, W = 0: wakeups until the next probe */
	uint32_t probe_gap;    /* ... the backoff: NAPI_PROBE_FIRST .. NAPI_PROBE_MAX */
	uint64_t window;       /* hybrid: the deferral window W, cycles */
	uint64_t last_pkt;     /* cycles: last poll with packets (or wakeup): the idle clock */
	uint64_t armed_at;     /* cycles: when armed */
	uint64_t woken_at;     /* cycles: the last wakeup */
	uint64_t slept;        /* cycles: armed to woken, the last wakeup */
	uint64_t idle_window;  /* cycles: last packet to arming, at the last arm */
	uint64_t last_poll_end; /* cycles: end of the last poll */
	uint64_t pace_mark;    /* cycles: start of the quarter, or of the half */
	uint64_t pace_pkts;    /* packets in the quarter, or in the half */
	uint64_t pace_n[2];    /* packets of the halves: [0] W at the cap, [1] W at the paced cap */
	uint64_t pace_t[2];    /* ... their lengths, cycles */
	int blocked_on;        /* rx not polled: entry holding its frames, or -1 */
	uint16_t hold_n;       /* paired tx queue: frames held (napi_tx) */
	uint64_t hold_since;   /* cycles: since when the hold is not empty */
	struct rte_mbuf *hold[NAPI_TX_HOLD_MAX];
	struct napi_queue_stats st;
};

struct napi_ctx {
	struct napi_ctx_conf conf;
	const struct napi_ops *ops;
	void *arg;
	uint64_t defer_cycles; /* defer_us in ops->now units: the cap M */
	uint64_t paced_cycles; /* the cap of a paced entry: M less C, or 0 */
	uint64_t pace_half_cycles;    /* NAPI_PACE_HALF_US */
	uint64_t pace_quarter_cycles; /* NAPI_PACE_PERIOD_US / 4 */
	uint64_t wake_cost_cycles; /* NAPI_WAKE_COST_US in ops->now units: C */
	uint64_t cycles_per_us; /* for the histograms (at least 1) */
	uint64_t hold_cycles;  /* tx_hold_ms in ops->now units */
	struct napi_entry *cur; /* the entry whose handler runs, or NULL */
	uint64_t last_work;    /* cycles: the last napi_work() */
	bool work_seen;        /* napi_work() was called */
	unsigned int nb;
	bool attached;         /* interrupts registered from the owning thread */
	int stop;              /* napi_stop() called (atomic) */
	int wake_fd;           /* eventfd written by napi_stop(), or -1 */
	bool wake_registered;
	struct rte_epoll_event wake_ev;
	struct napi_lcore_stats st; /* context-level counters only */
	struct napi_entry q[NAPI_MAX_QUEUES];
};

/* ---- the lcore registry ------------------------------------------------- */

static rte_spinlock_t napi_registry_lock = RTE_SPINLOCK_INITIALIZER;
static struct napi_ctx *napi_registry[RTE_MAX_LCORE];

int
napi_registry_with(unsigned int lcore_id, int (*fn)(struct napi_ctx *ctx, void *arg), void *arg)
{
	int ret = -ENOENT;

	if (lcore_id >= RTE_MAX_LCORE)
		return -ENOENT;
	rte_spinlock_lock(&napi_registry_lock);
	if (napi_registry[lcore_id] != NULL)
		ret = fn(napi_registry[lcore_id], arg);
	rte_spinlock_unlock(&napi_registry_lock);
	return ret;
}

unsigned int
napi_registry_list(unsigned int *ids, unsigned int max)
{
	unsigned int i, n = 0;

	rte_spinlock_lock(&napi_registry_lock);
	for (i = 0; i < RTE_MAX_LCORE && n < max; i++)
		if (napi_registry[i] != NULL)
			ids[n++] = i;
	rte_spinlock_unlock(&napi_registry_lock);
	return n;
}

struct napi_ctx *
napi_ctx_lookup(unsigned int lcore_id)
{
	struct napi_ctx *ctx;

	if (lcore_id >= RTE_MAX_LCORE)
		return NULL;
	rte_spinlock_lock(&napi_registry_lock);
	ctx = napi_registry[lcore_id];
	rte_spinlock_unlock(&napi_registry_lock);
	return ctx;
}

/* ---- modes ---------------------------------------------------------------- */

static const char * const napi_mode_names[] = {
	[NAPI_MODE_POLL] = "poll",
	[NAPI_MODE_INTERRUPT] = "interrupt",
	[NAPI_MODE_HYBRID] = "hybrid",
};

const char *
napi_mode_name(enum napi_mode mode)
{
	if ((unsigned int)mode >= RTE_DIM(napi_mode_names))
		return "unknown";
	return napi_mode_names[mode];
}

int
napi_mode_parse(const char *name, enum napi_mode *mode)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(napi_mode_names); i++) {
		if (strcmp(name, napi_mode_names[i]) == 0) {
			*mode = (enum napi_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- create, add, free ---------------------------------------------------- */

void
napi_ctx_conf_init(struct napi_ctx_conf *conf)
{
	unsigned int lcore = rte_lcore_id();

	memset(conf, 0, sizeof(*conf));
	conf->lcore_id = lcore == LCORE_ID_ANY ? 0 : lcore;
	conf->defer_us = NAPI_DEFER_US_DEFAULT;
	conf->disable_on_race = true;
	conf->sleep_timeout_ms = 0;
	conf->tx_retries = NAPI_TX_RETRIES_DEFAULT;
	conf->tx_hold_ms = NAPI_TX_HOLD_MS_DEFAULT;
	conf->ops = NULL;
}

struct napi_ctx *
napi_ctx_create(const struct napi_ctx_conf *conf)
{
	struct napi_ctx *ctx;
	uint32_t paced_us; /* a paced entry's cap: defer_us less a wakeup's cost */
	uint64_t hz;

	if (conf == NULL || conf->lcore_id >= RTE_MAX_LCORE ||
	    conf->sleep_timeout_ms > INT32_MAX || conf->defer_us > NAPI_DEFER_US_MAX ||
	    conf->tx_hold_ms > NAPI_TX_HOLD_MS_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	hz = conf->tsc_hz != 0 ? conf->tsc_hz : rte_get_tsc_hz();
	if (hz == 0) {
		NAPI_LOG(ERR, "cycles per second unknown: EAL not initialised and tsc_hz not set");
		rte_errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ctx->conf = *conf;
	ctx->conf.tsc_hz = hz;
	ctx->ops = conf->ops != NULL ? conf->ops : &napi_ops_ethdev;
	ctx->arg = conf->ops_arg;
	paced_us = conf->defer_us > NAPI_WAKE_COST_US ? conf->defer_us - NAPI_WAKE_COST_US : 0;
	ctx->defer_cycles = (uint64_t)conf->defer_us * hz / 1000000;
	ctx->wake_cost_cycles = (uint64_t)NAPI_WAKE_COST_US * hz / 1000000;
	ctx->paced_cycles = (uint64_t)paced_us * hz / 1000000;
	ctx->pace_half_cycles = (uint64_t)NAPI_PACE_HALF_US * hz / 1000000;
	ctx->pace_quarter_cycles = (uint64_t)NAPI_PACE_PERIOD_US / 4 * hz / 1000000;
	ctx->cycles_per_us = RTE_MAX(hz / 1000000, (uint64_t)1);
	ctx->hold_cycles = (uint64_t)conf->tx_hold_ms * hz / 1000;
	ctx->st.lcore_id = conf->lcore_id;
	ctx->st.tsc_hz = hz;
	ctx->st.defer_ns = (uint64_t)conf->defer_us * 1000;
	ctx->st.wake_cost_ns = (uint64_t)NAPI_WAKE_COST_US * 1000;
	ctx->st.paced_ns = (uint64_t)paced_us * 1000;
	ctx->wake_fd = -1;
	if (ctx->ops->fd_register != NULL) {
		ctx->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (ctx->wake_fd < 0) {
			rte_errno = errno;
			free(ctx);
			return NULL;
		}
	}

	rte_spinlock_lock(&napi_registry_lock);
	if (napi_registry[conf->lcore_id] != NULL) {
		rte_spinlock_unlock(&napi_registry_lock);
		NAPI_LOG(ERR, "lcore %u already has a context", conf->lcore_id);
		if (ctx->wake_fd >= 0)
			close(ctx->wake_fd);
		free(ctx);
		rte_errno = EEXIST;
		return NULL;
	}
	napi_registry[conf->lcore_id] = ctx;
	rte_spinlock_unlock(&napi_registry_lock);
	return ctx;
}

static uint64_t
napi_cycles_ns(const struct napi_ctx *ctx, uint64_t cycles)
{
	return (uint64_t)((double)cycles * 1e9 / (double)ctx->conf.tsc_hz);
}

/* The rx interrupt of @p e failed (@p what: registration or enable): the
 * entry polls from now on.
 */
static void
napi_intr_failed(struct napi_entry *e, const char *what, int ret)
{
	NAPI_LOG(WARNING, "port %u queue %u: rx interrupt %s failed (%d): polling only",
		 e->conf.port, e->conf.queue, what, ret);
	NAPI_ADD(e->st.arm_errors, 1);
	e->intr_ok = false;
}

/* Register one entry's interrupt with the calling thread's epoll. */
static void
napi_entry_attach(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now)
{
	int ret;

	e->last_pkt = now;
	if (e->conf.mode == NAPI_MODE_POLL || e->registered)
		return;
	ret = ctx->ops->intr_register(ctx->arg, e->conf.port, e->conf.queue, e);
	if (ret < 0) {
		napi_intr_failed(e, "registration", ret);
		return;
	}
	e->registered = true;
}

static void
napi_attach(struct napi_ctx *ctx)
{
	uint64_t now = ctx->ops->now(ctx->arg);
	unsigned int i;

	for (i = 0; i < ctx->nb; i++)
		napi_entry_attach(ctx, &ctx->q[i], now);
	if (ctx->wake_fd >= 0 && !ctx->wake_registered) {
		memset(&ctx->wake_ev, 0, sizeof(ctx->wake_ev));
		ctx->wake_ev.epdata.event = EPOLLIN | EPOLLET;
		ctx->wake_ev.epdata.data = ctx;
		if (ctx->ops->fd_register(ctx->arg, ctx->wake_fd, &ctx->wake_ev) == 0)
			ctx->wake_registered = true;
		else
			NAPI_LOG(WARNING, "lcore %u: stop eventfd not registered: napi_stop() waits for the next wakeup",
				 ctx->conf.lcore_id);
	}
	ctx->attached = true;
}

int
napi_queue_add(struct napi_ctx *ctx, const struct napi_queue_conf *qconf)
{
	struct napi_entry *e;
	unsigned int i;

	if (ctx == NULL || qconf == NULL || qconf->handler == NULL ||
	    (unsigned int)qconf->mode > NAPI_MODE_HYBRID || qconf->budget > NAPI_BUDGET_MAX)
		return -EINVAL;
	for (i = 0; i < ctx->nb; i++)
		if (ctx->q[i].conf.port == qconf->port && ctx->q[i].conf.queue == qconf->queue)
			return -EEXIST;
	if (ctx->nb == NAPI_MAX_QUEUES)
		return -ENOSPC;

	e = &ctx->q[ctx->nb];
	memset(e, 0, sizeof(*e));
	e->conf = *qconf;
	if (e->conf.budget == 0)
		e->conf.budget = NAPI_BUDGET_DEFAULT;
	e->ctx = ctx;
	e->scheduled = true;
	/* Hybrid starts at the cap (poll mode's behaviour) and learns down. */
	e->window = ctx->defer_cycles;
	e->probe_gap = NAPI_PROBE_FIRST;
	e->probe_in = NAPI_PROBE_FIRST;
	e->pace_score = NAPI_PACE_VOTES;
	e->pace_spacing = NAPI_PACE_QUARTERS;
	e->intr_ok = qconf->mode != NAPI_MODE_POLL;
	e->count_ok = true;
	e->cleanup_ok = qconf->has_tx;
	e->blocked_on = -1;
	e->st.port = qconf->port;
	e->st.queue = qconf->queue;
	e->st.mode = qconf->mode;
	e->st.scheduled = true;
	if (qconf->mode == NAPI_MODE_HYBRID)
		e->st.window_ns = napi_cycles_ns(ctx, e->window);
	/* Publish the entry before the count (stats readers on other threads). */
	__atomic_store_n(&ctx->nb, ctx->nb + 1, __ATOMIC_RELEASE);
	NAPI_SET(ctx->st.nb_queues, ctx->nb);
	if (ctx->attached)
		napi_entry_attach(ctx, e, ctx->ops->now(ctx->arg));
	return (int)(ctx->nb - 1);
}

static void napi_hold_drop(struct napi_ctx *ctx, struct napi_entry *o);

void
napi_ctx_free(struct napi_ctx *ctx)
{
	unsigned int i;

	if (ctx == NULL)
		return;
	rte_spinlock_lock(&napi_registry_lock);
	if (napi_registry[ctx->conf.lcore_id] == ctx)
		napi_registry[ctx->conf.lcore_id] = NULL;
	rte_spinlock_unlock(&napi_registry_lock);

	for (i = 0; i < ctx->nb; i++) {
		struct napi_entry *e = &ctx->q[i];

		napi_hold_drop(ctx, e);
		if (e->armed)
			ctx->ops->intr_disable(ctx->arg, e->conf.port, e->conf.queue);
		if (e->registered)
			ctx->ops->intr_unregister(ctx->arg, e->conf.port, e->conf.queue, e);
	}
	if (ctx->wake_registered && ctx->ops->fd_unregister != NULL)
		ctx->ops->fd_unregister(ctx->arg, ctx->wake_fd, &ctx->wake_ev);
	if (ctx->wake_fd >= 0)
		close(ctx->wake_fd);
	free(ctx);
}

/* ---- timing histograms -------------------------------------------------------- */

unsigned int
napi_hist_bucket(uint64_t us)
{
	unsigned int b;

	if (us == 0)
		return 0;
	b = 64 - (unsigned int)__builtin_clzll(us); /* us in [2^(b-1), 2^b) */
	return RTE_MIN(b, (unsigned int)NAPI_HIST_BUCKETS - 1);
}

uint64_t
napi_hist_lower_us(unsigned int bucket)
{
	if (bucket == 0 || bucket >= NAPI_HIST_BUCKETS)
		return 0;
	return (uint64_t)1 << (bucket - 1);
}

static inline void
napi_hist_add(const struct napi_ctx *ctx, uint64_t *hist, uint64_t cycles)
{
	unsigned int b = napi_hist_bucket(cycles / ctx->cycles_per_us);

	NAPI_ADD(hist[b], 1);
}

/* ---- the hybrid window ------------------------------------------------------ */

/* The cap of the entry's W: M, or P while its traffic is paced. */
static inline uint64_t
napi_cap(const struct napi_ctx *ctx, const struct napi_entry *e)
{
	return e->paced ? ctx->paced_cycles : ctx->defer_cycles;
}

/* Set W, counting a grow or a shrink, and publish it. */
static void
napi_window_set(struct napi_ctx *ctx, struct napi_entry *e, uint64_t w)
{
	if (w == e->window)
		return;
	NAPI_ADD(*(w > e->window ? &e->st.window_grows : &e->st.window_shrinks), 1);
	if (w == 0)
		e->probe_in = e->probe_gap;  /* probes from now on, at the current backoff */
	e->window = w;
	NAPI_SET(e->st.window_ns, napi_cycles_ns(ctx, w));
}

/* Polling on would have paid: W to the cap, probes back to their first backoff. */
static void
napi_window_grow(struct napi_ctx *ctx, struct napi_entry *e)
{
	e->probe_gap = NAPI_PROBE_FIRST;
	napi_window_set(ctx, e, napi_cap(ctx, e));
}

/*
 * The packet came @p gap after the entry's last one, beyond the cap M:
 * polling for W was spent for nothing. W shrinks by 2 gap / M (at least
 * half, to nothing when the gap is far longer), and below M / 8 to 0.
 */
static void
napi_window_shrink(struct napi_ctx *ctx, struct napi_entry *e, uint64_t gap)
{
	uint64_t cap = napi_cap(ctx, e);
	uint64_t w = (uint64_t)((double)e->window * (double)cap / (2.0 * (double)gap));

	if (w < cap / 8)
		w = 0;
	napi_window_set(ctx, e, w);
}

/*
 * The first poll after a wakeup of a hybrid entry found @p got packets:
 * learn W from the sleep. A full round (a backlog built up while asleep) or
 * a sleep shorter than a sleep/wake cycle costs (the packet came right
 * after arming) grows W. Otherwise the packet came idle_window + slept
 * after the last one, less the wakeup's own delay (the cycle's cost, C):
 * within the cap after a window that was polled, polling to the cap would
 * have caught it (grow); beyond the cap, shrink. At W = 0 the wakeup counts
 * towards the next probe.
 */
static void
napi_learn(struct napi_ctx *ctx, struct napi_entry *e, unsigned int got)
{
	uint64_t gap;

	e->learn = false;
	if (got == 0)
		return;  /* spurious: nothing came */
	if (got == e->conf.budget || e->slept < ctx->wake_cost_cycles) {
		napi_window_grow(ctx, e);
		return;
	}
	if (e->window == 0) {
		/* Armed at the first empty round, or after a probe that expired. */
		if (napi_cap(ctx, e) != 0 && e->probe_in > 0 && --e->probe_in == 0)
			e->probing = true;   /* the next idle period */
		return;
	}
	gap = e->idle_window + e->slept;
	gap = gap > ctx->wake_cost_cycles ? gap - ctx->wake_cost_cycles : 0;
	if (gap <= napi_cap(ctx, e))
		napi_window_grow(ctx, e);
	else
		napi_window_shrink(ctx, e, gap);
}

/* ---- arming ----------------------------------------------------------------- */

static void
napi_disarm(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now)
{
	ctx->ops->intr_disable(ctx->arg, e->conf.port, e->conf.queue);
	e->armed = false;
	NAPI_SET(e->st.armed, false);
	NAPI_ADD(e->st.armed_cycles, now - e->armed_at);
}

/* Work raced the arming: stay scheduled; a hybrid window grows to the cap. */
static void
napi_race(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now, bool port_disarmed)
{
	NAPI_ADD(e->st.races, 1);
	if (e->conf.mode == NAPI_MODE_HYBRID)
		napi_window_grow(ctx, e);   /* polling a little longer would have caught it */
	if (port_disarmed) {
		/* -EAGAIN: the port disarmed itself. */
		if (e->armed) {
			e->armed = false;
			NAPI_SET(e->st.armed, false);
			NAPI_ADD(e->st.armed_cycles, now - e->armed_at);
		}
		NAPI_ADD(e->st.race_disarms, 1);
		return;
	}
	if (ctx->conf.disable_on_race) {
		napi_disarm(ctx, e, now);
		NAPI_ADD(e->st.race_disarms, 1);
	}
}

/*
 * A hybrid entry's idle period ends in arming: count the window that
 * expired, and back a probe off (the next one NAPI_PROBE_FIRST.. times
 * NAPI_PROBE_MAX wakeups later, twice as far each time one finds nothing).
 */
static void
napi_window_expire(struct napi_ctx *ctx, struct napi_entry *e)
{
	uint64_t w = e->probing ? napi_cap(ctx, e) : e->window;

	if (e->window_open && w > 0)
		NAPI_ADD(e->st.windows_expired, 1);
	if (e->probing) {
		e->probing = false;
		e->probe_gap = RTE_MIN(e->probe_gap * 2, (uint32_t)NAPI_PROBE_MAX);
		e->probe_in = e->probe_gap;
	}
	e->window_open = false;
}

/*
 * Arm, re-check, and either leave the entry waiting or (work found) keep it
 * scheduled. The re-check is the port's business for -EAGAIN; otherwise we
 * ask rx_queue_count, whose load of the device's index comes after the
 * enable call (which, for a port that closes the race, holds a full barrier
 * between its arming store and its own re-check).
 */
static void
napi_arm(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now)
{
	int ret;

	NAPI_ADD(e->st.arms, 1);
	e->wake_window = false;
	e->idle_window = now - e->last_pkt;
	if (e->conf.mode == NAPI_MODE_HYBRID)
		napi_window_expire(ctx, e);
	ret = ctx->ops->intr_enable(ctx->arg, e->conf.port, e->conf.queue);
	if (ret == -EAGAIN) {
		napi_race(ctx, e, now, true);
		return;
	}
	if (ret < 0) {
		napi_intr_failed(e, "enable", ret);
		return;
	}
	if (!e->armed) {
		e->armed = true;
		e->armed_at = now;
		NAPI_SET(e->st.armed, true);
	}
	if (e->count_ok) {
		ret = ctx->ops->rx_queue_count(ctx->arg, e->conf.port, e->conf.queue);
		if (ret == -ENOTSUP)
			e->count_ok = false;
		else if (ret > 0) {
			napi_race(ctx, e, now, false);
			return;
		}
	}
	if (e->armed) {
		e->scheduled = false;
		NAPI_SET(e->st.scheduled, false);
		NAPI_ADD(e->st.arms_held, 1);
		e->gap_valid = false;
		if (e->wake_open) {
			e->wake_open = false;
			napi_hist_add(ctx, e->st.wake_arm_hist, now - e->woken_at);
		}
	}
}

/* ---- the pace test ---------------------------------------------------------- */

/* Whether the running half of the entry's pace test polls with W at the cap. */
static inline bool
napi_pace_polled(const struct napi_entry *e)
{
	return (e->pace_half == 1) == e->pace_a_first;
}

/* Paced (W capped at P) or responsive (W learned up to M). */
static void
napi_pace_set(struct napi_ctx *ctx, struct napi_entry *e, bool paced)
{
	e->paced = paced;
	NAPI_SET(e->st.paced, paced);
	NAPI_ADD(e->st.pace_switches, 1);
	if (!paced)
		napi_window_grow(ctx, e);
	else if (e->window > ctx->paced_cycles)
		napi_window_set(ctx, e, ctx->paced_cycles);
}

/*
 * Both halves done: was the rate with W at the paced cap lower? Counts
 * of n packets are taken to vary by sqrt(n) (Poisson): the ratio r of the
 * rates is lower when r - 1 exceeds NAPI_PACE_MARGIN and two of its
 * standard deviations, 2 sqrt(1/na + 1/nb).
 */
static void
napi_pace_vote(struct napi_ctx *ctx, struct napi_entry *e)
{
	double na = (double)e->pace_n[0], nb = (double)e->pace_n[1], r;
	bool settled = false;
	uint64_t slack = NAPI_PACE_HALF_SLACK * ctx->pace_half_cycles;

	if (e->pace_n[0] < NAPI_PACE_HALF_PKTS || e->pace_n[1] < NAPI_PACE_HALF_PKTS ||
	    e->pace_t[0] > slack || e->pace_t[1] > slack || e->pace_t[0] == 0 || e->pace_t[1] == 0) {
		NAPI_ADD(e->st.pace_voids, 1);
		return;
	}
	NAPI_ADD(e->st.pace_tests, 1);
	r = (na / (double)e->pace_t[0]) / (nb / (double)e->pace_t[1]);
	if (r > 1.0 + NAPI_PACE_MARGIN && (r - 1.0) * (r - 1.0) > 4.0 * (1.0 / na + 1.0 / nb)) {
		NAPI_ADD(e->st.pace_slowed, 1);
		e->pace_score = NAPI_PACE_VOTES;
		settled = !e->paced;
		if (e->paced)
			napi_pace_set(ctx, e, false);
	} else if (e->pace_score > 0 && --e->pace_score == 0 && !e->paced) {
		napi_pace_set(ctx, e, true);
	} else {
		settled = e->paced;
	}
	/* A verdict confirmed: test half as often; else soon again. */
	e->pace_spacing = settled ? (uint8_t)RTE_MIN(2 * e->pace_spacing, NAPI_PACE_QUARTERS_MAX) :
		NAPI_PACE_QUARTERS;
}

/*
 * A hybrid entry was polled and found @p got packets: count them towards
 * the stream check (four quarters in a row with a stream start a test) or
 * the running half, and move the test on when the time has come. Halves
 * end at a poll: one that slept across the end counts the packets its
 * wakeup found, which arrived before it, over the time up to it.
 */
static void
napi_pace(struct napi_ctx *ctx, struct napi_entry *e, unsigned int got, uint64_t now)
{
	unsigned int k;

	if (e->pace_half == 0) {
		if (got == 0 || ctx->paced_cycles == ctx->defer_cycles)
			return;   /* nothing to choose between */
		if (now - e->pace_mark >= ctx->pace_quarter_cycles) {
			if (e->pace_pkts >= NAPI_PACE_QUARTER_PKTS &&
			    now - e->pace_mark < 2 * ctx->pace_quarter_cycles) {
				e->pace_quarters++;
			} else {
				e->pace_quarters = 0;
				e->pace_spacing = NAPI_PACE_QUARTERS;   /* the stream broke */
			}
			e->pace_mark = now;
			e->pace_pkts = 0;
			if (e->pace_quarters >= e->pace_spacing) {
				e->pace_quarters = 0;
				e->pace_a_first = !e->pace_a_first;
				e->pace_half = 1;
				return;   /* this poll's packets came before the test */
			}
		}
		e->pace_pkts += got;
		return;
	}
	e->pace_pkts += got;
	if (now - e->pace_mark < ctx->pace_half_cycles)
		return;
	k = napi_pace_polled(e) ? 0 : 1;
	e->pace_n[k] = e->pace_pkts;
	e->pace_t[k] = now - e->pace_mark;
	e->pace_pkts = 0;
	e->pace_mark = now;
	if (e->pace_half == 1) {
		e->pace_half = 2;
		return;
	}
	e->pace_half = 0;
	napi_pace_vote(ctx, e);
}

/* Whether an entry that polled @p got packets is armed now. */
static bool
napi_should_arm(struct napi_ctx *ctx, struct napi_entry *e, unsigned int got, uint64_t now)
{
	uint64_t w;

	if (!e->intr_ok || got != 0)
		return false;
	switch (e->conf.mode) {
	case NAPI_MODE_INTERRUPT:
		return true;
	case NAPI_MODE_HYBRID:
		if (e->pace_half != 0)
			w = napi_pace_polled(e) ? ctx->defer_cycles : ctx->paced_cycles;
		else
			w = e->probing ? napi_cap(ctx, e) : e->window;
		if (now - e->last_pkt < w)
			return false;
		if (ctx->work_seen && now - ctx->last_work < ctx->defer_cycles) {
			NAPI_ADD(e->st.work_holds, 1);
			return false;
		}
		return true;
	default:
		return false;
	}
}

void
napi_work(struct napi_ctx *ctx)
{
	ctx->last_work = ctx->ops->now(ctx->arg);
	ctx->work_seen = true;
	NAPI_ADD(ctx->st.work_calls, 1);
}

/* ---- one round -------------------------------------------------------------- */

/* A hybrid entry's poll found packets: an idle period it had polled past an
 * empty round ends caught (and a probe raises W to the cap). */
static void
napi_window_caught(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now)
{
	if (!e->window_open)
		return;
	e->window_open = false;
	NAPI_ADD(e->st.windows_caught, 1);
	napi_hist_add(ctx, e->st.spin_hist, now - e->last_pkt);
	if (e->probing) {
		e->probing = false;
		NAPI_ADD(e->st.probe_hits, 1);
		napi_window_grow(ctx, e);
	}
}

/* Poll one entry up to its budget; returns the packets; *now advances. */
static unsigned int
napi_poll_entry(struct napi_ctx *ctx, struct napi_entry *e, uint64_t *now)
{
	struct rte_mbuf *pkts[NAPI_BURST];
	uint16_t budget = e->conf.budget;
	unsigned int got = 0;
	uint16_t want, n;
	uint64_t t0 = *now, t1;
	int ret;

	if (e->woken)
		napi_hist_add(ctx, e->st.wake_poll_hist, t0 - e->woken_at);
	else if (e->gap_valid)
		napi_hist_add(ctx, e->st.poll_gap_hist, t0 - e->last_poll_end);
	do {
		want = (uint16_t)RTE_MIN((unsigned int)NAPI_BURST, budget - got);
		n = ctx->ops->rx_burst(ctx->arg, e->conf.port, e->conf.queue, pkts, want);
		if (n > 0) {
			got += n;
			ctx->cur = e;
			e->conf.handler(ctx, e->conf.port, e->conf.queue, pkts, n,
					e->conf.handler_arg);
			ctx->cur = NULL;
		}
	} while (n == want && got < budget && e->blocked_on < 0);

	if (e->cleanup_ok) {
		ret = ctx->ops->tx_done_cleanup(ctx->arg, e->conf.tx_port, e->conf.tx_queue, 0);
		if (ret == -ENOTSUP)
			e->cleanup_ok = false;
		else if (ret > 0) {
			NAPI_ADD(e->st.tx_reclaimed, (uint64_t)ret);
			NAPI_ADD(ctx->st.tx_reclaimed, (uint64_t)ret);
		}
	}

	t1 = ctx->ops->now(ctx->arg);
	NAPI_ADD(e->st.polls, 1);
	if (got == 0)
		NAPI_ADD(e->st.empty_polls, 1);
	else {
		NAPI_ADD(e->st.packets, got);
		NAPI_ADD(e->st.busy_cycles, t1 - t0);
	}
	if (got == budget)
		NAPI_ADD(e->st.full_polls, 1);
	if (e->woken) {
		e->woken = false;
		if (got == 0)
			NAPI_ADD(e->st.spurious_wakeups, 1);
	}
	if (e->learn)
		napi_learn(ctx, e, got);
	if (e->wake_window)
		NAPI_ADD(e->st.wakeup_packets, got);
	e->last_poll_end = t1;
	e->gap_valid = true;
	*now = t1;
	return got;
}

/* An epoll event for entry e. */
static void
napi_wake_entry(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now)
{
	NAPI_ADD(e->st.wakeups, 1);
	if (e->armed) {
		uint64_t slept = now - e->armed_at;

		napi_hist_add(ctx, e->st.arm_wake_hist, slept);
		/* Hybrid: its first poll learns W from this sleep. */
		e->slept = slept;
		e->learn = e->conf.mode == NAPI_MODE_HYBRID;
		napi_disarm(ctx, e, now);
	}
	e->scheduled = true;
	NAPI_SET(e->st.scheduled, true);
	e->window_open = false;
	e->last_pkt = now;
	e->woken = true;
	e->wake_window = true;
	e->woken_at = now;
	e->wake_open = true;
	e->gap_valid = false;
}

/*
 * The housekeeping timeout passed with no event. A port that cannot re-check
 * at arming (no rx_queue_count) may have lost a wakeup: poll each of its
 * armed entries once (disarm and schedule). Where the count is available,
 * only an entry that shows work is scheduled (a wakeup the port lost).
 */
static void
napi_timeout_check(struct napi_ctx *ctx, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < ctx->nb; i++) {
		struct napi_entry *e = &ctx->q[i];
		int cnt;

		if (!e->armed || e->scheduled)
			continue;
		if (e->count_ok) {
			cnt = ctx->ops->rx_queue_count(ctx->arg, e->conf.port, e->conf.queue);
			if (cnt == 0)
				continue;
			if (cnt == -ENOTSUP)
				e->count_ok = false;
		}
		NAPI_ADD(e->st.timeout_polls, 1);
		napi_disarm(ctx, e, now);
		e->scheduled = true;
		NAPI_SET(e->st.scheduled, true);
		e->window_open = false;
	}
}

/* Which entry does this epoll data name? NULL: none of ours. */
static struct napi_entry *
napi_event_entry(struct napi_ctx *ctx, void *data)
{
	uintptr_t p = (uintptr_t)data, base = (uintptr_t)&ctx->q[0];

	if (p < base || p >= (uintptr_t)&ctx->q[ctx->nb] ||
	    (p - base) % sizeof(struct napi_entry) != 0)
		return NULL;
	return (struct napi_entry *)data;
}

/* Nothing scheduled: sleep. Returns 0, or -EINTR when woken for no queue. */
static int
napi_sleep(struct napi_ctx *ctx)
{
	struct rte_epoll_event ev[NAPI_MAX_EVENTS];
	int timeout = ctx->conf.sleep_timeout_ms ? (int)ctx->conf.sleep_timeout_ms : -1;
	bool queue_event = false;
	uint64_t t0, t1;
	int n, i;

	if (__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE))
		return -EINTR;
	t0 = ctx->ops->now(ctx->arg);
	n = ctx->ops->epoll_wait(ctx->arg, ev, NAPI_MAX_EVENTS, timeout);
	t1 = ctx->ops->now(ctx->arg);
	NAPI_ADD(ctx->st.sleeps, 1);
	NAPI_ADD(ctx->st.sleep_cycles, t1 - t0);
	if (n < 0) {
		NAPI_ADD(ctx->st.sleep_interrupts, 1);
		return -EINTR;
	}
	if (n == 0) {
		NAPI_ADD(ctx->st.sleep_timeouts, 1);
		napi_timeout_check(ctx, t1);
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct napi_entry *e;

		if (ev[i].epdata.data == ctx) {
			uint64_t cnt;

			/* Clear the stop eventfd (non-blocking). */
			if (read(ctx->wake_fd, &cnt, sizeof(cnt)) < 0)
				cnt = 0;
			continue;
		}
		e = napi_event_entry(ctx, ev[i].epdata.data);
		if (e == NULL) {
			NAPI_LOG(DEBUG, "lcore %u: epoll event with unknown data %p",
				 ctx->conf.lcore_id, ev[i].epdata.data);
			continue;
		}
		napi_wake_entry(ctx, e, t1);
		queue_event = true;
	}
	if (!queue_event) {
		NAPI_ADD(ctx->st.sleep_interrupts, 1);
		return -EINTR;
	}
	return 0;
}

static bool napi_blocked(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now);
static void napi_hold_final(struct napi_ctx *ctx);

int
napi_poll_once(struct napi_ctx *ctx)
{
	unsigned int i, got, total = 0;
	bool any_scheduled = false;
	uint64_t t0, now;
	int ret;

	if (ctx == NULL || ctx->nb == 0)
		return -EINVAL;
	if (unlikely(!ctx->attached))
		napi_attach(ctx);

	t0 = now = ctx->ops->now(ctx->arg);
	NAPI_ADD(ctx->st.rounds, 1);
	for (i = 0; i < ctx->nb; i++) {
		struct napi_entry *e = &ctx->q[i];

		if (!e->scheduled)
			continue;
		if (unlikely(e->blocked_on >= 0) && napi_blocked(ctx, e, now)) {
			any_scheduled = true;
			continue;
		}
		got = napi_poll_entry(ctx, e, &now);
		total += got;
		if (got > 0) {
			if (e->conf.mode == NAPI_MODE_HYBRID)
				napi_window_caught(ctx, e, now);
			e->last_pkt = now;   /* any packet restarts the idle clock */
		} else if (e->conf.mode == NAPI_MODE_HYBRID && !e->window_open) {
			e->window_open = true;
			if (e->probing)
				NAPI_ADD(e->st.probes, 1);
		}
		if (e->conf.mode == NAPI_MODE_HYBRID)
			napi_pace(ctx, e, got, now);
		if (napi_should_arm(ctx, e, got, now))
			napi_arm(ctx, e, now);
		any_scheduled |= e->scheduled;
	}
	if (total > 0)
		NAPI_ADD(ctx->st.busy_cycles, now - t0);
	else
		NAPI_ADD(ctx->st.idle_cycles, now - t0);

	if (any_scheduled)
		return (int)total;
	ret = napi_sleep(ctx);
	return ret < 0 && total == 0 ? ret : (int)total;
}

int
napi_run(struct napi_ctx *ctx)
{
	int ret;

	if (ctx == NULL || ctx->nb == 0)
		return -EINVAL;
	while (!__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE)) {
		ret = napi_poll_once(ctx);
		if (ret < 0 && ret != -EINTR)
			return ret;
	}
	napi_hold_final(ctx);
	return 0;
}

void
napi_stop(struct napi_ctx *ctx)
{
	uint64_t one = 1;

	__atomic_store_n(&ctx->stop, 1, __ATOMIC_RELEASE);
	/* After the flag: a sleeper woken by this write sees it. */
	if (ctx->wake_fd >= 0 && write(ctx->wake_fd, &one, sizeof(one)) < 0)
		one = 0;
}

bool
napi_stopped(const struct napi_ctx *ctx)
{
	return __atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE) != 0;
}

/* ---- transmit ------------------------------------------------------------- */

static struct napi_entry *
napi_tx_entry(struct napi_ctx *ctx, uint16_t port, uint16_t queue)
{
	unsigned int i;

	for (i = 0; i < ctx->nb; i++) {
		struct napi_entry *e = &ctx->q[i];

		if (e->conf.has_tx && e->conf.tx_port == port && e->conf.tx_queue == queue)
			return e;
	}
	return NULL;
}

/* Free the frames o holds, counted as dropped. */
static void
napi_hold_drop(struct napi_ctx *ctx, struct napi_entry *o)
{
	if (o->hold_n == 0)
		return;
	if (ctx->ops->free_pkts != NULL)
		ctx->ops->free_pkts(ctx->arg, o->hold, o->hold_n);
	else
		rte_pktmbuf_free_bulk(o->hold, o->hold_n);
	NAPI_ADD(o->st.tx_hold_drops, o->hold_n);
	NAPI_ADD(ctx->st.tx_hold_drops, o->hold_n);
	o->hold_n = 0;
}

/* Offer the frames o holds to its tx queue, reclaiming once if refused. */
static void
napi_hold_flush(struct napi_ctx *ctx, struct napi_entry *o)
{
	uint16_t sent;
	int ret;

	sent = ctx->ops->tx_burst(ctx->arg, o->conf.tx_port, o->conf.tx_queue, o->hold, o->hold_n);
	if (sent < o->hold_n && o->cleanup_ok) {
		ret = ctx->ops->tx_done_cleanup(ctx->arg, o->conf.tx_port, o->conf.tx_queue, 0);
		if (ret > 0) {
			NAPI_ADD(o->st.tx_reclaimed, (uint64_t)ret);
			NAPI_ADD(ctx->st.tx_reclaimed, (uint64_t)ret);
			sent += ctx->ops->tx_burst(ctx->arg, o->conf.tx_port, o->conf.tx_queue,
						   o->hold + sent, o->hold_n - sent);
		}
	}
	if (sent == 0)
		return;
	NAPI_ADD(o->st.tx_sent, sent);
	NAPI_ADD(ctx->st.tx_sent, sent);
	o->hold_n -= sent;
	memmove(o->hold, o->hold + sent, o->hold_n * sizeof(o->hold[0]));
}

/*
 * Entry e's frames are held: send them, or drop them once held for
 * tx_hold_ms. True while they stay held: e is not polled this round, nor
 * armed (it blocked in a round that found packets, which arms no mode).
 */
static bool
napi_blocked(struct napi_ctx *ctx, struct napi_entry *e, uint64_t now)
{
	struct napi_entry *o = &ctx->q[e->blocked_on];

	if (o->hold_n > 0)
		napi_hold_flush(ctx, o);
	if (o->hold_n > 0) {
		if (now - o->hold_since < ctx->hold_cycles) {
			NAPI_ADD(e->st.tx_blocked_rounds, 1);
			return true;
		}
		napi_hold_drop(ctx, o);
	}
	e->blocked_on = -1;
	return false;
}

/* napi_run returns: one last napi_tx-like attempt, then drop the rest. */
static void
napi_hold_final(struct napi_ctx *ctx)
{
	unsigned int i;
	uint32_t tries;

	for (i = 0; i < ctx->nb; i++) {
		struct napi_entry *o = &ctx->q[i];

		for (tries = 0; o->hold_n > 0 && tries <= ctx->conf.tx_retries; tries++)
			napi_hold_flush(ctx, o);
		napi_hold_drop(ctx, o);
		o->blocked_on = -1;
	}
}

uint16_t
napi_tx(struct napi_ctx *ctx, uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
	uint16_t nb_pkts)
{
	struct napi_entry *e = napi_tx_entry(ctx, port, queue);
	uint16_t sent = 0, unsent, held = 0;
	uint32_t retries = 0;
	int ret;

	/* Frames held for this queue go first: new ones queue behind them. */
	if (unlikely(e != NULL && e->hold_n > 0))
		napi_hold_flush(ctx, e);
	if (likely(e == NULL || e->hold_n == 0)) {
		sent = ctx->ops->tx_burst(ctx->arg, port, queue, pkts, nb_pkts);
		while (sent < nb_pkts && retries < ctx->conf.tx_retries) {
			retries++;
			ret = ctx->ops->tx_done_cleanup(ctx->arg, port, queue, 0);
			if (ret > 0) {
				NAPI_ADD(ctx->st.tx_reclaimed, (uint64_t)ret);
				if (e != NULL)
					NAPI_ADD(e->st.tx_reclaimed, (uint64_t)ret);
			} else {
				rte_pause();
			}
			sent += ctx->ops->tx_burst(ctx->arg, port, queue, pkts + sent,
						   nb_pkts - sent);
		}
	}
	unsent = nb_pkts - sent;
	if (unsent > 0 && e != NULL && ctx->cur != NULL && ctx->hold_cycles > 0) {
		held = (uint16_t)RTE_MIN((unsigned int)unsent,
					 (unsigned int)(NAPI_TX_HOLD_MAX - e->hold_n));
		if (held > 0 && e->hold_n == 0)
			e->hold_since = ctx->ops->now(ctx->arg);
		memcpy(e->hold + e->hold_n, pkts + sent, held * sizeof(pkts[0]));
		e->hold_n += held;
		unsent -= held;
		/* The hold full or not: the producer waits for it to drain. */
		ctx->cur->blocked_on = (int)(e - ctx->q);
	}
	NAPI_ADD(ctx->st.tx_sent, sent);
	NAPI_ADD(ctx->st.tx_retries, retries);
	NAPI_ADD(ctx->st.tx_unsent, unsent);
	NAPI_ADD(ctx->st.tx_held, held);
	if (e != NULL) {
		NAPI_ADD(e->st.tx_sent, sent);
		NAPI_ADD(e->st.tx_retries, retries);
		NAPI_ADD(e->st.tx_unsent, unsent);
		NAPI_ADD(e->st.tx_held, held);
	}
	return sent + held;
}

/* ---- counters --------------------------------------------------------------- */

/*
 * Everything from polls to the end of napi_queue_stats is a uint64_t counter
 * or histogram bucket that the polling thread stores with NAPI_ADD/NAPI_SET:
 * one loop reads them all, each with a relaxed atomic load (no torn value),
 * so a counter added to the struct is reported without a line here.
 */
#define NAPI_QSTATS_FIRST_U64 offsetof(struct napi_queue_stats, polls)
_Static_assert(NAPI_QSTATS_FIRST_U64 % sizeof(uint64_t) == 0 &&
	       (sizeof(struct napi_queue_stats) - NAPI_QSTATS_FIRST_U64) % sizeof(uint64_t) == 0,
	       "napi_queue_stats: the counters from polls on are not a run of uint64_t");

static void
napi_queue_stats_read(const struct napi_entry *e, struct napi_queue_stats *s)
{
	const uint64_t *from = (const uint64_t *)((const char *)&e->st + NAPI_QSTATS_FIRST_U64);
	uint64_t *to = (uint64_t *)((char *)s + NAPI_QSTATS_FIRST_U64);
	size_t i;

	s->port = e->st.port;
	s->queue = e->st.queue;
	s->mode = e->st.mode;
	s->armed = NAPI_GET(e->st.armed);
	s->scheduled = NAPI_GET(e->st.scheduled);
	for (i = 0; i < (sizeof(*s) - NAPI_QSTATS_FIRST_U64) / sizeof(uint64_t); i++)
		to[i] = NAPI_GET(from[i]);
}

/*
 * The context's own counters: everything from tsc_hz on is a uint64_t that
 * the polling thread stores with NAPI_ADD/NAPI_SET, or one it never writes
 * (the sums below, 0 in ctx->st): one loop copies them all.
 */
#define NAPI_LSTATS_FIRST_U64 offsetof(struct napi_lcore_stats, tsc_hz)
_Static_assert(NAPI_LSTATS_FIRST_U64 % sizeof(uint64_t) == 0 &&
	       (sizeof(struct napi_lcore_stats) - NAPI_LSTATS_FIRST_U64) % sizeof(uint64_t) == 0,
	       "napi_lcore_stats: the counters from tsc_hz on are not a run of uint64_t");

/* The lcore counters that sum the entries' counters (or buckets) of the same name. */
#define NAPI_SUM(f) { offsetof(struct napi_lcore_stats, f), \
		      offsetof(struct napi_queue_stats, f), \
		      RTE_SIZEOF_FIELD(struct napi_lcore_stats, f) / sizeof(uint64_t) }
static const struct {
	uint16_t lcore;
	uint16_t queue;
	uint16_t n;
} napi_sums[] = {
	NAPI_SUM(polls), NAPI_SUM(empty_polls), NAPI_SUM(packets), NAPI_SUM(arms),
	NAPI_SUM(races), NAPI_SUM(wakeups), NAPI_SUM(spurious_wakeups), NAPI_SUM(wakeup_packets),
	NAPI_SUM(arms_held), NAPI_SUM(window_grows), NAPI_SUM(window_shrinks),
	NAPI_SUM(windows_caught), NAPI_SUM(windows_expired), NAPI_SUM(probes),
	NAPI_SUM(probe_hits), NAPI_SUM(work_holds), NAPI_SUM(paced), NAPI_SUM(pace_tests),
	NAPI_SUM(pace_slowed), NAPI_SUM(pace_voids), NAPI_SUM(pace_switches),
	NAPI_SUM(tx_blocked_rounds), NAPI_SUM(arm_wake_hist), NAPI_SUM(wake_poll_hist),
	NAPI_SUM(wake_arm_hist), NAPI_SUM(poll_gap_hist), NAPI_SUM(spin_hist),
};

static void
napi_lcore_stats_add(struct napi_lcore_stats *lcore, const struct napi_queue_stats *s)
{
	unsigned int i, b;

	for (i = 0; i < RTE_DIM(napi_sums); i++) {
		uint64_t *to = (uint64_t *)((char *)lcore + napi_sums[i].lcore);
		const uint64_t *from = (const uint64_t *)((const char *)s + napi_sums[i].queue);

		for (b = 0; b < napi_sums[i].n; b++)
			to[b] += from[b];
	}
}

int
napi_stats_get(const struct napi_ctx *ctx, struct napi_lcore_stats *lcore,
	       struct napi_queue_stats *queues, unsigned int nb_queues)
{
	unsigned int nb, i;

	if (ctx == NULL)
		return -EINVAL;
	/* Pairs with the release store in napi_queue_add. */
	nb = __atomic_load_n(&ctx->nb, __ATOMIC_ACQUIRE);
	if (lcore != NULL) {
		const uint64_t *from = (const uint64_t *)((const char *)&ctx->st +
							  NAPI_LSTATS_FIRST_U64);
		uint64_t *to = (uint64_t *)((char *)lcore + NAPI_LSTATS_FIRST_U64);

		lcore->lcore_id = ctx->st.lcore_id;
		lcore->nb_queues = nb;
		for (i = 0; i < (sizeof(*lcore) - NAPI_LSTATS_FIRST_U64) / sizeof(uint64_t); i++)
			to[i] = NAPI_GET(from[i]);
	}
	for (i = 0; i < nb; i++) {
		struct napi_queue_stats s;

		napi_queue_stats_read(&ctx->q[i], &s);
		if (queues != NULL && i < nb_queues)
			queues[i] = s;
		if (lcore != NULL)
			napi_lcore_stats_add(lcore, &s);
	}
	return (int)nb;
}
