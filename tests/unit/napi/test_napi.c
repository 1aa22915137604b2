/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Unit tests of lib/napi's state machine against the scripted fake port
 * (fake_port.c), TAP output, no EAL. The fake clock runs at 1 MHz (one
 * cycle = one microsecond) and moves only when a test moves it (or by
 * fake_port::tick per now() call).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "fake_port.h"
#include "napi.h"
#include "unit_check.h"
#include "unit_tap.h"

static struct fake_port fp;
static unsigned int handled[FAKE_QUEUES];   /* packets per queue */
static unsigned int handler_calls;
/* fwd_handler's tx queue (on port 1), and the frames napi_tx gave it back. */
static uint16_t fwd_txq;
static unsigned int fwd_returned;
/* The window cases' timeline: the fake's clock at arrive_after()'s last arrival. */
static uint64_t arrival;

static void
count_handler(struct napi_ctx *ctx, uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
	      uint16_t n, void *arg)
{
	handled[queue] += n;
	handler_calls++;
}

/*
 * Reset the fake port (nb queues), the handler counts and the timeline (at
 * the fake's clock), and fill conf with what every case shares: lcore 3,
 * the 1 MHz fake clock, the fake's ops.
 */
static void
fake_conf(struct napi_ctx_conf *conf, unsigned int nb)
{
	fake_init(&fp, nb);
	arrival = fp.clock;
	memset(handled, 0, sizeof(handled));
	handler_calls = 0;
	fwd_txq = 0;
	fwd_returned = 0;
	napi_ctx_conf_init(conf);
	conf->lcore_id = 3;
	conf->tsc_hz = 1000000;
	conf->ops = &fake_ops;
	conf->ops_arg = &fp;
}

/* A context from conf with queue qc added as entry 0, or NULL. */
static struct napi_ctx *
create_with_queue(const struct napi_ctx_conf *conf, const struct napi_queue_conf *qc)
{
	struct napi_ctx *ctx = napi_ctx_create(conf);

	if (ctx != NULL && napi_queue_add(ctx, qc) != 0) {
		napi_ctx_free(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * A setting of conf one past its @max is refused (NULL, EINVAL); at @max
 * it makes a context: that one, or NULL (also when the first was not).
 */
static struct napi_ctx *
create_at_max(struct napi_ctx_conf *conf, uint32_t *setting, uint32_t max)
{
	struct napi_ctx *ctx;

	*setting = max + 1;
	ctx = napi_ctx_create(conf);
	if (ctx != NULL || rte_errno != EINVAL) {
		napi_ctx_free(ctx);
		return NULL;
	}
	*setting = max;
	return napi_ctx_create(conf);
}

/*
 * The shape of a context over the fake port: nb queues of `mode` (budget
 * 64, queue i at port 0), and what its conf says; a field left 0 keeps
 * the setting said below. A case runs a script on a fresh context of its
 * shape, and the script only scripts and checks.
 */
struct ctx_case {
	unsigned int nb;
	enum napi_mode mode;
	uint32_t defer_us;        /* hybrid's cap (0: arm at the first empty round) */
	bool keep_armed_on_race;  /* disable_on_race off */
	uint32_t sleep_timeout_ms; /* the housekeeping timeout (0: none) */
	bool has_tx;              /* queue i transmits on tx_port's queue i */
	uint16_t tx_port;
	uint32_t tx_retries;      /* 0: NAPI_TX_RETRIES_DEFAULT */
	bool no_tx_hold;          /* tx_hold_ms 0 */
	napi_handler_t handler;   /* NULL: count_handler */
	int (*script)(struct napi_ctx *ctx);
};

/* A context of shape c over the fake port, or NULL. */
static struct napi_ctx *
setup(const struct ctx_case *c)
{
	struct napi_ctx_conf conf;
	struct napi_ctx *ctx;
	unsigned int i;

	fake_conf(&conf, c->nb);
	conf.defer_us = c->defer_us;
	conf.disable_on_race = !c->keep_armed_on_race;
	conf.sleep_timeout_ms = c->sleep_timeout_ms;
	if (c->tx_retries != 0)
		conf.tx_retries = c->tx_retries;
	if (c->no_tx_hold)
		conf.tx_hold_ms = 0;
	ctx = napi_ctx_create(&conf);
	for (i = 0; ctx != NULL && i < c->nb; i++) {
		struct napi_queue_conf qc = {
			.port = 0,
			.queue = (uint16_t)i,
			.mode = c->mode,
			.handler = c->handler != NULL ? c->handler : count_handler,
			.has_tx = c->has_tx,
			.tx_port = c->tx_port,
			.tx_queue = (uint16_t)i,
		};

		if (napi_queue_add(ctx, &qc) != (int)i) {
			napi_ctx_free(ctx);
			ctx = NULL;
		}
	}
	return ctx;
}

static struct napi_queue_stats
qstats(struct napi_ctx *ctx, unsigned int i)
{
	struct napi_queue_stats qs[FAKE_QUEUES];

	memset(qs, 0, sizeof(qs));
	napi_stats_get(ctx, NULL, qs, RTE_DIM(qs));
	return qs[i];
}

static struct napi_lcore_stats
lstats(struct napi_ctx *ctx)
{
	struct napi_lcore_stats ls;

	memset(&ls, 0, sizeof(ls));
	napi_stats_get(ctx, &ls, NULL, 0);
	return ls;
}

static int
run_on_ctx(const void *arg)
{
	const struct ctx_case *c = arg;
	struct napi_ctx *ctx = setup(c);
	int ret = -1;

	CHECK(ctx != NULL);
	ret = c->script(ctx);
teardown:
	napi_ctx_free(ctx);
	return ret;
}

/*
 * A table row that runs script on a fresh setup() context of the given
 * shape (struct ctx_case's fields, designated); the compound literal has
 * static storage at file scope, so the row needs no named ctx_case.
 */
#define CTX_CASE(name, fn, ...) \
	{ name, run_on_ctx, &(const struct ctx_case){ .script = fn, __VA_ARGS__ } }

/* Two interrupt-mode queues, as the cases that build their own contexts use. */
static const struct ctx_case two_interrupt = { .nb = 2, .mode = NAPI_MODE_INTERRUPT };

/* ---- cases ---------------------------------------------------------------- */

static int
test_budget_exhaustion_keeps_polling(struct napi_ctx *ctx)
{
	int r;

	fake_arrive(&fp, 0, 200);
	r = napi_poll_once(ctx);
	EXPECT_EQ(r, 64);
	EXPECT_EQ(fp.q[0].enables, 0);
	EXPECT(qstats(ctx, 0).scheduled);
	EXPECT_EQ(napi_poll_once(ctx), 64);
	EXPECT_EQ(napi_poll_once(ctx), 64);
	EXPECT_EQ(fp.q[0].enables, 0);
	/* 8 left: short but not empty, interrupt mode keeps polling */
	EXPECT_EQ(napi_poll_once(ctx), 8);
	EXPECT_EQ(fp.q[0].enables, 0);
	EXPECT_EQ(qstats(ctx, 0).full_polls, 3);
	/* empty: armed, and with the only queue armed, asleep */
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].enables, 1);
	EXPECT_EQ(fp.waits, 1);
	EXPECT_EQ(handled[0], 200);
	return 0;
}

static int
test_budget_custom(const void *arg)
{
	struct napi_ctx_conf conf;
	struct napi_queue_conf qc = {
		.port = 0, .queue = 0, .mode = NAPI_MODE_HYBRID, .budget = 10,
		.handler = count_handler,
	};
	struct napi_ctx *ctx;
	int ret = -1;

	fake_conf(&conf, 1);
	ctx = create_with_queue(&conf, &qc);
	CHECK(ctx != NULL);
	CHECK_EQ(napi_queue_add(ctx, &qc), -EEXIST);
	qc.queue = 1;
	qc.budget = NAPI_BUDGET_MAX + 1;
	CHECK_EQ(napi_queue_add(ctx, &qc), -EINVAL);
	qc.budget = 0;
	qc.handler = NULL;
	CHECK_EQ(napi_queue_add(ctx, &qc), -EINVAL);
	fake_arrive(&fp, 0, 25);
	CHECK_EQ(napi_poll_once(ctx), 10);
	CHECK_EQ(napi_poll_once(ctx), 10);
	CHECK_EQ(napi_poll_once(ctx), 5);
	CHECK_EQ(qstats(ctx, 0).full_polls, 2);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

/*
 * The race at arming each race case starts with: the next enable returns
 * enable_ret once (0: none) and n packets land right after it. The empty
 * round finds them at the re-check: one race, the queue stays scheduled and
 * the context does not sleep. Whether the queue is left armed (in the
 * context's stats and at the port), the race disarms and the port's
 * disables are the case's.
 */
/* One round that handles no packet and leaves the fake's wait count at waits. */
static int
round_waits(struct napi_ctx *ctx, unsigned int waits)
{
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.waits, waits);
	return 0;
}

static int
race_at_arming(struct napi_ctx *ctx, int enable_ret, uint32_t n, bool armed,
	       uint64_t race_disarms, unsigned int disables)
{
	struct napi_queue_stats s;

	fp.q[0].enable_ret_once = enable_ret;
	fp.q[0].arrive_on_enable = n;
	EXPECT_EQ(napi_poll_once(ctx), 0);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.arms, 1);
	EXPECT_EQ(s.races, 1);
	EXPECT_EQ(s.race_disarms, race_disarms);
	EXPECT(s.scheduled);
	EXPECT_EQ(s.armed, armed);
	EXPECT_EQ(fp.q[0].armed, armed);
	EXPECT_EQ(fp.q[0].disables, disables);
	EXPECT_EQ(fp.waits, 0);
	return 0;
}

static int
test_race_eagain_disarms(struct napi_ctx *ctx)
{
	/* the port disarmed itself: no disable call */
	EXPECT_EQ(race_at_arming(ctx, -EAGAIN, 2, false, 1, 0), 0);
	EXPECT_EQ(napi_poll_once(ctx), 2);
	return 0;
}

static int
test_race_queue_count_disarms(struct napi_ctx *ctx)
{
	EXPECT_EQ(race_at_arming(ctx, 0, 1, false, 1, 1), 0);
	EXPECT_EQ(fp.q[0].enables, 1);
	EXPECT_EQ(fp.q[0].counts, 1);
	EXPECT(!fp.q[0].signalled);
	EXPECT_EQ(napi_poll_once(ctx), 1);
	/* next empty round arms cleanly and sleeps */
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].enables, 2);
	EXPECT_EQ(fp.waits, 1);
	return 0;
}

static int
test_race_rule_off_stays_armed(struct napi_ctx *ctx)
{
	/* armed and still polled */
	EXPECT_EQ(race_at_arming(ctx, 0, 1, true, 0, 0), 0);
	/* packets keep coming while it is armed: the port signals */
	fake_arrive(&fp, 0, 3);
	EXPECT_EQ(napi_poll_once(ctx), 4);
	EXPECT(fp.q[0].signalled);
	/* empty: arms again (already armed), goes to sleep, the stale
	 * signal wakes it at once
	 */
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].enables, 2);
	EXPECT_EQ(fp.waits, 1);
	EXPECT_EQ(qstats(ctx, 0).wakeups, 1);
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(qstats(ctx, 0).spurious_wakeups, 1);
	return 0;
}

static int
test_race_eagain_rule_off(struct napi_ctx *ctx)
{
	/* -EAGAIN: the port already disarmed; nothing to leave armed. */
	return race_at_arming(ctx, -EAGAIN, 1, false, 1, 0);
}

static int
test_no_queue_count(struct napi_ctx *ctx)
{
	/* Without rx_queue_count (net_virtio_user) there is no re-check. */
	fp.count_supported = false;
	fp.q[0].arrive_on_enable = 1;
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(qstats(ctx, 0).races, 0);
	EXPECT_EQ(fp.waits, 1);
	/* the fake's packet signalled the armed queue: the wakeup finds it */
	EXPECT_EQ(qstats(ctx, 0).wakeups, 1);
	EXPECT_EQ(napi_poll_once(ctx), 1);
	return 0;
}

static int
test_all_armed_sleeps(struct napi_ctx *ctx)
{
	struct napi_lcore_stats ls;

	fp.sleep_cycles = 500;
	EXPECT_EQ(round_waits(ctx, 1), 0);
	EXPECT(fp.q[0].armed && fp.q[1].armed && fp.q[2].armed);
	ls = lstats(ctx);
	EXPECT_EQ(ls.sleeps, 1);
	EXPECT_EQ(ls.sleep_timeouts, 1);  /* the fake returned 0 events */
	EXPECT_EQ(ls.sleep_cycles, 500);
	/* nothing woke: the next round polls nothing and sleeps again */
	EXPECT_EQ(round_waits(ctx, 2), 0);
	EXPECT_EQ(fp.q[0].rx_calls, 1);
	return 0;
}

static int
test_partial_armed_no_sleep(const void *arg)
{
	struct napi_ctx *ctx = setup(&two_interrupt);
	struct napi_queue_conf qc = {
		.port = 0, .queue = 2, .mode = NAPI_MODE_POLL, .handler = count_handler,
	};
	int ret = -1, i;

	CHECK(ctx != NULL);
	/* queue 1 busy: queue 0 armed, queue 1 polled, no sleep */
	fake_arrive(&fp, 1, 1000);
	for (i = 0; i < 5; i++)
		CHECK_EQ(napi_poll_once(ctx), 64);
	CHECK(fp.q[0].armed);
	CHECK(!fp.q[1].armed);
	CHECK_EQ(fp.waits, 0);
	CHECK_EQ(fp.q[0].rx_calls, 1);

	/* a poll-mode entry keeps the context awake forever */
	napi_ctx_free(ctx);
	ctx = setup(&two_interrupt);
	CHECK(ctx != NULL);
	fp.nb = 3;
	fp.q[2].queue = 2;
	CHECK_EQ(napi_queue_add(ctx, &qc), 2);
	for (i = 0; i < 10; i++)
		napi_poll_once(ctx);
	CHECK_EQ(fp.waits, 0);
	CHECK_EQ(fp.q[2].enables, 0);
	CHECK(!fp.q[2].registered);    /* poll mode registers nothing */
	CHECK(fp.q[0].registered && fp.q[1].registered);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

static int
test_wakeup_disarms_woken_only(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;

	EXPECT_EQ(round_waits(ctx, 1), 0);     /* all armed, asleep */
	fake_arrive(&fp, 1, 5);
	EXPECT(fp.q[1].signalled);
	EXPECT_EQ(round_waits(ctx, 2), 0);     /* polls nobody, wakes for q1 */
	EXPECT_EQ(fp.q[1].disables, 1);
	EXPECT_EQ(fp.q[0].disables, 0);
	EXPECT_EQ(fp.q[2].disables, 0);
	EXPECT(fp.q[0].armed && !fp.q[1].armed && fp.q[2].armed);
	EXPECT_EQ(fp.q[0].rx_calls, 1);
	EXPECT_EQ(fp.q[1].rx_calls, 1);
	/* next round: only q1 polled */
	EXPECT_EQ(napi_poll_once(ctx), 5);
	EXPECT_EQ(fp.q[0].rx_calls, 1);
	EXPECT_EQ(fp.q[1].rx_calls, 2);
	EXPECT_EQ(fp.q[2].rx_calls, 1);
	s = qstats(ctx, 1);
	EXPECT_EQ(s.wakeups, 1);
	EXPECT_EQ(s.spurious_wakeups, 0);
	EXPECT_EQ(s.wakeup_packets, 5);
	EXPECT_EQ(qstats(ctx, 0).wakeups, 0);
	/* q1 empty: armed again, all armed, asleep */
	EXPECT_EQ(round_waits(ctx, 3), 0);
	EXPECT_EQ(fp.q[1].enables, 2);
	return 0;
}

static int
test_spurious_wakeup(struct napi_ctx *ctx)
{
	struct napi_lcore_stats ls;

	EXPECT_EQ(napi_poll_once(ctx), 0);
	fp.spurious_data[0] = fp.q[0].data;
	fp.nb_spurious = 1;
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* wakes for q0, nothing there */
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* polls q0: empty, re-arms, sleeps */
	EXPECT_EQ(qstats(ctx, 0).wakeups, 1);
	EXPECT_EQ(qstats(ctx, 0).spurious_wakeups, 1);
	EXPECT_EQ(qstats(ctx, 1).wakeups, 0);
	/* unknown data is ignored, counted as an interrupted sleep */
	fp.spurious_data[0] = &fp;
	fp.nb_spurious = 1;
	EXPECT_EQ(napi_poll_once(ctx), -EINTR);
	ls = lstats(ctx);
	EXPECT_EQ(ls.wakeups, 1);
	EXPECT_EQ(ls.spurious_wakeups, 1);
	EXPECT_EQ(ls.sleep_interrupts, 1);
	return 0;
}

static int
test_sleep_timeout_and_eintr(struct napi_ctx *ctx)
{
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.last_timeout, 250);
	fp.wait_ret_once = -1;
	EXPECT_EQ(napi_poll_once(ctx), -EINTR);
	EXPECT_EQ(lstats(ctx).sleep_interrupts, 1);
	EXPECT_EQ(lstats(ctx).sleep_timeouts, 1);
	return 0;
}

/* On 2 interrupt-mode queues with a housekeeping timeout. */
static int
test_timeout_rescues_lost_wakeup(struct napi_ctx *ctx)
{
	EXPECT_EQ(round_waits(ctx, 1), 0);           /* both armed, asleep, timeout */
	/* count supported, nothing there: timeouts leave the queues armed */
	EXPECT_EQ(fp.q[0].disables + fp.q[1].disables, 0);
	EXPECT_EQ(round_waits(ctx, 2), 0);
	EXPECT_EQ(fp.q[0].rx_calls, 1);
	/* a packet lands on q1 without a signal (a lost wakeup) */
	fp.q[1].waiting = 2;
	EXPECT_EQ(napi_poll_once(ctx), 0);           /* timeout: q1 shows work */
	EXPECT_EQ(fp.q[1].disables, 1);
	EXPECT_EQ(fp.q[0].disables, 0);
	EXPECT_EQ(qstats(ctx, 1).timeout_polls, 1);
	EXPECT_EQ(qstats(ctx, 1).wakeups, 0);
	EXPECT_EQ(napi_poll_once(ctx), 2);           /* polled */
	EXPECT_EQ(fp.q[0].rx_calls, 1);
	return 0;
}

/* The same without rx_queue_count: every armed queue is polled at a timeout. */
static int
test_timeout_polls_all_without_count(struct napi_ctx *ctx)
{
	fp.count_supported = false;
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].disables, 1);
	EXPECT_EQ(fp.q[1].disables, 1);
	EXPECT_EQ(qstats(ctx, 0).timeout_polls, 1);
	EXPECT_EQ(napi_poll_once(ctx), 0);           /* polls both, re-arms, sleeps */
	EXPECT_EQ(fp.q[0].rx_calls, 2);
	EXPECT_EQ(fp.q[1].rx_calls, 2);
	EXPECT_EQ(fp.waits, 2);
	return 0;
}

static int
test_stop(struct napi_ctx *ctx)
{
	uint64_t cnt = 0;

	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT(fp.stop_fd >= 0);
	EXPECT(fp.stop_data == ctx);
	EXPECT(!napi_stopped(ctx));
	napi_stop(ctx);
	EXPECT(napi_stopped(ctx));
	/* the eventfd was written */
	EXPECT_EQ(read(fp.stop_fd, &cnt, sizeof(cnt)), (long long)sizeof(cnt));
	EXPECT_EQ(cnt, 1);
	/* stopped: run returns at once, no sleep */
	EXPECT_EQ(napi_run(ctx), 0);
	EXPECT_EQ(fp.waits, 1);
	return 0;
}

static int
test_register_failure_polls(struct napi_ctx *ctx)
{
	int i;

	fp.q[1].register_ret = -EPERM;
	for (i = 0; i < 5; i++)
		napi_poll_once(ctx);
	EXPECT_EQ(qstats(ctx, 1).arm_errors, 1);
	EXPECT_EQ(fp.q[1].enables, 0);
	EXPECT_EQ(fp.waits, 0);         /* q1 polls forever: never asleep */
	EXPECT_EQ(fp.q[1].rx_calls, 5);
	return 0;
}

static int
test_free_unregisters(const void *arg)
{
	struct napi_ctx *ctx = setup(&two_interrupt);
	int ret = -1;

	CHECK(ctx != NULL);
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK(fp.q[0].armed && fp.q[1].armed);
	CHECK(napi_ctx_lookup(3) == ctx);
	napi_ctx_free(ctx);
	ctx = NULL;
	CHECK(napi_ctx_lookup(3) == NULL);
	CHECK(!fp.q[0].armed && !fp.q[1].armed);
	CHECK_EQ(fp.q[0].unregisters, 1);
	CHECK_EQ(fp.q[1].unregisters, 1);
	CHECK_EQ(fp.stop_fd, -1);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

static int
test_duplicate_lcore(struct napi_ctx *ctx)
{
	struct napi_ctx_conf conf;

	napi_ctx_conf_init(&conf);
	conf.lcore_id = 3;
	conf.tsc_hz = 1000;
	conf.ops = &fake_ops;
	conf.ops_arg = &fp;
	EXPECT(napi_ctx_create(&conf) == NULL);
	EXPECT_EQ(rte_errno, EEXIST);
	conf.lcore_id = 4;
	conf.tsc_hz = 0;   /* no EAL: unknown */
	EXPECT(napi_ctx_create(&conf) == NULL);
	EXPECT_EQ(rte_errno, EINVAL);
	return 0;
}

/* The fake's tx side for the next napi_tx(): room, completions, per cleanup. */
static void
tx_side(uint32_t room, uint32_t done, uint32_t done_per_cleanup)
{
	fp.tx_room = room;
	fp.tx_done = done;
	fp.tx_done_per_cleanup = done_per_cleanup;
}

/* The tx counters of st, a queue's or the context's stats, are these. */
#define EXPECT_TX_COUNTS(st, sent, retries, unsent, reclaimed) do { \
	EXPECT_EQ((st).tx_sent, sent); \
	EXPECT_EQ((st).tx_retries, retries); \
	EXPECT_EQ((st).tx_unsent, unsent); \
	EXPECT_EQ((st).tx_reclaimed, reclaimed); \
} while (0)

static int
test_tx_backpressure(struct napi_ctx *ctx)
{
	struct rte_mbuf *pkts[32];

	memset(pkts, 0, sizeof(pkts));
	/* room for all: one burst, no retry */
	fp.tx_room = 100;
	EXPECT_EQ(napi_tx(ctx, 1, 0, pkts, 10), 10);
	EXPECT_EQ(fp.tx_calls, 1);
	EXPECT_EQ(fp.cleanup_calls, 0);

	/* 5 room, 2 completions per cleanup: 5 + 2 + 2 + 2 + 2 after 4 retries */
	tx_side(5, 100, 2);
	EXPECT_EQ(napi_tx(ctx, 1, 0, pkts, 20), 13);
	EXPECT_EQ(fp.cleanup_calls, 4);
	EXPECT_TX_COUNTS(qstats(ctx, 0), 23, 4, 7, 8);

	/* enough after one reclaim: stops retrying */
	tx_side(0, 50, 0);
	EXPECT_EQ(napi_tx(ctx, 1, 0, pkts, 8), 8);
	EXPECT_EQ(fp.cleanup_calls, 5);

	/* cleanup unsupported: tolerated, retries still bounded */
	fp.cleanup_supported = false;
	fp.tx_room = 0;
	EXPECT_EQ(napi_tx(ctx, 1, 0, pkts, 4), 0);

	/* an unpaired queue counts on the context only */
	fp.tx_room = 3;
	EXPECT_EQ(napi_tx(ctx, 2, 0, pkts, 3), 3);

	EXPECT_TX_COUNTS(qstats(ctx, 0), 31, 9, 11, 58);
	EXPECT_TX_COUNTS(lstats(ctx), 34, 9, 11, 58);
	return 0;
}

static int
test_tx_cleanup_during_rx(struct napi_ctx *ctx)
{
	fp.tx_done = 7;
	napi_poll_once(ctx);
	EXPECT_EQ(fp.cleanup_calls, 1);
	EXPECT_EQ(qstats(ctx, 0).tx_reclaimed, 7);
	EXPECT_EQ(lstats(ctx).tx_reclaimed, 7);
	napi_poll_once(ctx);
	EXPECT_EQ(fp.cleanup_calls, 2);
	/* -ENOTSUP: tolerated once, never asked again */
	fp.cleanup_supported = false;
	napi_poll_once(ctx);
	napi_poll_once(ctx);
	napi_poll_once(ctx);
	EXPECT_EQ(fp.cleanup_calls, 3);
	EXPECT_EQ(qstats(ctx, 0).tx_reclaimed, 7);
	return 0;
}

/*
 * Forward to port 1's queue fwd_txq (as vnapi-fwd does); free what napi_tx
 * gives back. Every frame ends sent, held or freed: the fake checks their
 * order.
 */
static void
fwd_handler(struct napi_ctx *ctx, uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
	    uint16_t n, void *arg)
{
	uint16_t taken = napi_tx(ctx, 1, fwd_txq, pkts, n);

	handled[queue] += n;
	handler_calls++;
	fwd_returned += n - taken;
	fake_ops.free_pkts(&fp, pkts + taken, n - taken);
}

/* The hold counters of st: held, dropped, rounds an rx queue waited. */
#define EXPECT_HOLD_COUNTS(st, held, drops, blocked) do { \
	EXPECT_EQ((st).tx_held, held); \
	EXPECT_EQ((st).tx_hold_drops, drops); \
	EXPECT_EQ((st).tx_blocked_rounds, blocked); \
} while (0)

/* @arrive frames on queue 0, room for @room on the tx queue: one round. */
static int
fwd_round(struct napi_ctx *ctx, uint32_t arrive, uint32_t room)
{
	fake_arrive(&fp, 0, arrive);
	tx_side(room, 0, 0);
	return napi_poll_once(ctx);
}

/* Every frame rx handed out is sent, freed or still held (hold), in order. */
#define EXPECT_FRAMES_ACCOUNTED(hold) do { \
	EXPECT_EQ(fp.rx_seq, fp.tx_accepted + fp.freed + (hold)); \
	EXPECT_EQ(fp.out_of_order, 0); \
} while (0)

static int
test_tx_hold_blocks_rx(struct napi_ctx *ctx)
{
	struct rte_mbuf *own[3];
	unsigned int rx_calls;

	memset(own, 0, sizeof(own));
	/* 10 go out; 22 refused after the retries: held, rx stops mid-budget */
	EXPECT_EQ(fwd_round(ctx, 200, 10), 32);
	EXPECT_EQ(fp.q[0].waiting, 168);
	EXPECT_EQ(fwd_returned, 0);
	EXPECT_TX_COUNTS(qstats(ctx, 0), 10, 4, 0, 0);
	EXPECT_HOLD_COUNTS(qstats(ctx, 0), 22, 0, 0);
	/* no room: the held frames are offered (and a reclaim), rx is not polled */
	rx_calls = fp.q[0].rx_calls;
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].rx_calls, rx_calls);
	EXPECT_HOLD_COUNTS(qstats(ctx, 0), 22, 0, 1);
	/* the application's own napi_tx to that queue waits behind them */
	EXPECT_EQ(napi_tx(ctx, 1, 0, own, 3), 0);
	EXPECT_EQ(qstats(ctx, 0).tx_unsent, 3);
	/* room for 12 of the 22: still held, still not polled */
	tx_side(12, 0, 0);
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].rx_calls, rx_calls);
	EXPECT_HOLD_COUNTS(qstats(ctx, 0), 22, 0, 2);
	EXPECT_FRAMES_ACCOUNTED(10);
	/* completions free the ring: the last 10 go, then rx resumes */
	tx_side(0, 1000, 0);
	EXPECT_EQ(napi_poll_once(ctx), 64);
	EXPECT_EQ(napi_poll_once(ctx), 64);
	EXPECT_EQ(napi_poll_once(ctx), 40);
	EXPECT_EQ(handled[0], 200);
	EXPECT_EQ(fwd_returned, 0);
	EXPECT_EQ(fp.tx_accepted, 200);
	EXPECT_FRAMES_ACCOUNTED(0);
	EXPECT_TX_COUNTS(qstats(ctx, 0), 200, 4, 3, 1000 - fp.tx_done);
	EXPECT_HOLD_COUNTS(qstats(ctx, 0), 22, 0, 2);
	EXPECT_HOLD_COUNTS(lstats(ctx), 22, 0, 2);
	EXPECT_EQ(fp.waits, 0);
	return 0;
}

static int
test_tx_hold_drops_after_bound(struct napi_ctx *ctx)
{
	/* 32 refused: held; short of the budget, yet not armed (work held) */
	EXPECT_EQ(fwd_round(ctx, 32, 0), 32);
	EXPECT_EQ(fp.q[0].enables, 0);
	EXPECT(qstats(ctx, 0).scheduled);
	/* 1 us short of tx_hold_ms (100 ms at the fake's 1 MHz): still held */
	fp.clock += NAPI_TX_HOLD_MS_DEFAULT * 1000 - 1;
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].enables, 0);
	EXPECT_EQ(fp.waits, 0);
	EXPECT_EQ(fp.freed, 0);
	/* at tx_hold_ms: dropped and counted, rx polled (empty: armed, asleep) */
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.freed, 32);
	EXPECT_EQ(fp.q[0].enables, 1);
	EXPECT_EQ(fp.waits, 1);
	EXPECT_HOLD_COUNTS(qstats(ctx, 0), 32, 32, 1);
	EXPECT_HOLD_COUNTS(lstats(ctx), 32, 32, 1);
	EXPECT_TX_COUNTS(qstats(ctx, 0), 0, NAPI_TX_RETRIES_DEFAULT, 0, 0);
	EXPECT_FRAMES_ACCOUNTED(0);
	return 0;
}

static int
test_tx_hold_full_blocks_all(struct napi_ctx *ctx)
{
	unsigned int i;

	/* three rx queues forward to one tx queue (entry 0's pair), full */
	for (i = 0; i < 3; i++)
		fake_arrive(&fp, i, 32);
	tx_side(0, 0, 0);
	EXPECT_EQ(napi_poll_once(ctx), 96);
	/* two bursts fill the hold; the third goes back to its handler */
	EXPECT_EQ(fwd_returned, 32);
	EXPECT_HOLD_COUNTS(qstats(ctx, 0), NAPI_TX_HOLD_MAX, 0, 0);
	EXPECT_EQ(qstats(ctx, 0).tx_unsent, 32);
	/* and every producer waits for the hold to drain */
	for (i = 0; i < 3; i++)
		fake_arrive(&fp, i, 5);
	EXPECT_EQ(napi_poll_once(ctx), 0);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(qstats(ctx, i).tx_blocked_rounds, 1);
	EXPECT_FRAMES_ACCOUNTED(NAPI_TX_HOLD_MAX);
	/* room: the hold drains in order, then the new frames follow */
	tx_side(1000, 0, 0);
	EXPECT_EQ(napi_poll_once(ctx), 15);
	EXPECT_EQ(fp.tx_accepted, NAPI_TX_HOLD_MAX + 15);
	EXPECT_FRAMES_ACCOUNTED(0);
	EXPECT_HOLD_COUNTS(lstats(ctx), NAPI_TX_HOLD_MAX, 0, 3);
	return 0;
}

static int
test_tx_hold_off(struct napi_ctx *ctx)
{
	/* tx_hold_ms 0: refused frames go back to the handler, rx goes on */
	EXPECT_EQ(fwd_round(ctx, 64, 8), 64);
	EXPECT_EQ(fwd_returned, 56);
	EXPECT_TX_COUNTS(qstats(ctx, 0), 8, 2 * NAPI_TX_RETRIES_DEFAULT, 56, 0);
	EXPECT_HOLD_COUNTS(qstats(ctx, 0), 0, 0, 0);
	EXPECT_FRAMES_ACCOUNTED(0);
	return 0;
}

static int
test_tx_hold_at_stop_and_free(const void *arg)
{
	const struct ctx_case c = { .nb = 1, .mode = NAPI_MODE_POLL, .has_tx = true,
				    .tx_port = 1, .handler = fwd_handler };
	struct napi_ctx_conf conf;
	struct napi_ctx *ctx = setup(&c);
	int ret = -1;

	CHECK(ctx != NULL);
	/* napi_run returns: what the queue takes goes, the rest is dropped */
	CHECK_EQ(fwd_round(ctx, 32, 0), 32);
	tx_side(5, 0, 0);
	napi_stop(ctx);
	CHECK_EQ(napi_run(ctx), 0);
	CHECK_EQ(fp.tx_accepted, 5);
	CHECK_EQ(fp.freed, 27);
	CHECK_EQ(qstats(ctx, 0).tx_hold_drops, 27);
	CHECK_EQ(fp.out_of_order, 0);
	/* freeing the context drops what it holds */
	CHECK_EQ(fwd_round(ctx, 32, 0), 32);
	CHECK_EQ(qstats(ctx, 0).tx_held, 64);
	napi_ctx_free(ctx);
	ctx = NULL;
	CHECK_EQ(fp.freed, 59);
	CHECK_EQ(fp.rx_seq, fp.tx_accepted + fp.freed);
	CHECK_EQ(fp.out_of_order, 0);
	/* a bound past NAPI_TX_HOLD_MS_MAX is refused */
	fake_conf(&conf, 1);
	ctx = create_at_max(&conf, &conf.tx_hold_ms, NAPI_TX_HOLD_MS_MAX);
	CHECK(ctx != NULL);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

/* The counters of struct napi_queue_stats that stats_exact compares. */
#define QSTATS_COUNTERS(X) \
	X(polls) X(empty_polls) X(full_polls) X(packets) X(arms) X(races) X(race_disarms) \
	X(wakeups) X(spurious_wakeups) X(wakeup_packets) X(arms_held) X(window_ns) \
	X(window_grows) X(window_shrinks) X(windows_caught) X(windows_expired) X(probes) \
	X(work_holds)

/* Every counter above and both state flags of @p got equal @p want's. */
static int
expect_qstats(const struct napi_queue_stats *got, const struct napi_queue_stats *want)
{
#define EXPECT_COUNTER(f) EXPECT_EQ(got->f, want->f);
	QSTATS_COUNTERS(EXPECT_COUNTER)
#undef EXPECT_COUNTER
	EXPECT_EQ(got->armed, want->armed);
	EXPECT_EQ(got->scheduled, want->scheduled);
	return 0;
}

/* The counters of struct napi_lcore_stats that stats_exact compares. */
#define LSTATS_COUNTERS(X) \
	X(rounds) X(polls) X(empty_polls) X(packets) X(arms) X(arms_held) X(defer_ns) \
	X(wake_cost_ns) X(races) X(sleeps) X(sleep_timeouts) X(wakeups) X(wakeup_packets) \
	X(sleep_cycles) X(nb_queues) X(tsc_hz)

/* Every counter above of @p got equals @p want's. */
static int
expect_lstats(const struct napi_lcore_stats *got, const struct napi_lcore_stats *want)
{
#define EXPECT_COUNTER(f) EXPECT_EQ(got->f, want->f);
	LSTATS_COUNTERS(EXPECT_COUNTER)
#undef EXPECT_COUNTER
	return 0;
}

static int
test_stats_exact(struct napi_ctx *ctx)
{
	struct napi_queue_stats q0, q1;
	struct napi_lcore_stats ls;

	fp.tick = 1;   /* every now() call moves the clock one cycle */
	fp.sleep_cycles = 1000;
	/* hybrid with defer_us 0: every window is 0, an empty round arms */
	/* round 1: q0 70 (64 taken, full), q1 3 (short) */
	fake_arrive(&fp, 0, 70);
	fake_arrive(&fp, 1, 3);
	EXPECT_EQ(napi_poll_once(ctx), 67);
	/* round 2: q0 6 (short, not empty), q1 0 (empty: arms, race: 1 lands) */
	fp.q[1].arrive_on_enable = 1;
	EXPECT_EQ(napi_poll_once(ctx), 6);
	/* round 3: q0 0 (arms), q1 1 */
	EXPECT_EQ(napi_poll_once(ctx), 1);
	/* round 4: q1 0 (arms) -> all armed, sleep, nothing */
	EXPECT_EQ(napi_poll_once(ctx), 0);
	/* round 5: nothing polled; 4 arrive on q0 -> wakeup */
	fake_arrive(&fp, 0, 4);
	EXPECT_EQ(napi_poll_once(ctx), 0);
	/* round 6: q0 4 */
	EXPECT_EQ(napi_poll_once(ctx), 4);
	/* round 7: q0 0 (arms) -> sleep */
	EXPECT_EQ(napi_poll_once(ctx), 0);

	napi_stats_get(ctx, &ls, NULL, 0);
	q0 = qstats(ctx, 0);
	q1 = qstats(ctx, 1);
	EXPECT_EQ(expect_qstats(&q0, &(const struct napi_queue_stats){
		.polls = 5, .empty_polls = 2, .full_polls = 1, .packets = 74, .arms = 2,
		.wakeups = 1, .wakeup_packets = 4, .arms_held = 2, .armed = true }), 0);
	EXPECT_EQ(expect_qstats(&q1, &(const struct napi_queue_stats){
		.polls = 4, .empty_polls = 2, .packets = 4, .arms = 2, .races = 1,
		.race_disarms = 1, .arms_held = 1, .armed = true }), 0);
	EXPECT_EQ(expect_lstats(&ls, &(const struct napi_lcore_stats){
		.rounds = 7, .polls = 9, .empty_polls = 4, .packets = 78, .arms = 4,
		.arms_held = 3, .defer_ns = 0, .wake_cost_ns = NAPI_WAKE_COST_US * 1000,
		.races = 1, .sleeps = 3, .sleep_timeouts = 2, .wakeups = 1, .wakeup_packets = 4,
		.sleep_cycles = 3 * (1000 + 1), .nb_queues = 2, .tsc_hz = 1000000 }), 0);
	EXPECT_EQ(handled[0], 74);
	EXPECT_EQ(handled[1], 4);
	/* each poll takes one tick (its closing now()); busy = polls with packets */
	EXPECT_EQ(q0.busy_cycles, 3);
	EXPECT_EQ(q1.busy_cycles, 2);
	EXPECT(ls.busy_cycles > 0 && ls.idle_cycles > 0);
	return 0;
}

static int
test_modes_names(const void *arg)
{
	enum napi_mode m;

	EXPECT_EQ(napi_mode_parse("hybrid", &m), 0);
	EXPECT_EQ(m, NAPI_MODE_HYBRID);
	EXPECT_EQ(napi_mode_parse("interrupt", &m), 0);
	EXPECT_EQ(m, NAPI_MODE_INTERRUPT);
	EXPECT_EQ(napi_mode_parse("poll", &m), 0);
	EXPECT_EQ(m, NAPI_MODE_POLL);
	EXPECT_EQ(napi_mode_parse("busy", &m), -EINVAL);
	EXPECT(strcmp(napi_mode_name(NAPI_MODE_HYBRID), "hybrid") == 0);
	EXPECT(strcmp(napi_mode_name((enum napi_mode)9), "unknown") == 0);
	return 0;
}

static int
test_poll_mode_never_arms(struct napi_ctx *ctx)
{
	int i;

	for (i = 0; i < 100; i++)
		EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.q[0].enables, 0);
	EXPECT_EQ(fp.waits, 0);
	EXPECT_EQ(qstats(ctx, 0).empty_polls, 100);
	return 0;
}

/* Exactly one sample, in bucket b, and nothing elsewhere. */
static int
hist_only(const uint64_t *h, unsigned int b)
{
	unsigned int i;

	for (i = 0; i < NAPI_HIST_BUCKETS; i++)
		if (h[i] != (i == b ? 1u : 0u))
			return 0;
	return 1;
}

static int
test_hist_buckets(const void *arg __rte_unused)
{
	EXPECT_EQ(napi_hist_bucket(0), 0);
	EXPECT_EQ(napi_hist_bucket(1), 1);
	EXPECT_EQ(napi_hist_bucket(2), 2);
	EXPECT_EQ(napi_hist_bucket(3), 2);
	EXPECT_EQ(napi_hist_bucket(4), 3);
	EXPECT_EQ(napi_hist_bucket(1023), 10);
	EXPECT_EQ(napi_hist_bucket(1024), 11);
	EXPECT_EQ(napi_hist_bucket(16383), 14);
	EXPECT_EQ(napi_hist_bucket(16384), 15);
	EXPECT_EQ(napi_hist_bucket(UINT64_MAX), NAPI_HIST_BUCKETS - 1);
	EXPECT_EQ(napi_hist_lower_us(0), 0);
	EXPECT_EQ(napi_hist_lower_us(1), 1);
	EXPECT_EQ(napi_hist_lower_us(11), 1024);
	EXPECT_EQ(napi_hist_lower_us(15), 16384);
	EXPECT_EQ(napi_hist_lower_us(16), 0);
	return 0;
}

/*
 * One wakeup on the fake clock (1 cycle = 1 us): armed at 1000, woken at
 * 4000 (arm_wake 3000 us), first poll at 4005 (wake_poll 5 us), the next poll
 * at 4105 (poll_gap 100 us) finds nothing and arms (wake_arm 105 us).
 */
static int
test_wakeup_timing_hist(struct napi_ctx *ctx)
{
	struct napi_lcore_stats ls;
	struct napi_queue_stats s;

	fp.clock = 1000;
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* empty: armed at 1000, asleep */
	EXPECT(fp.q[0].armed);
	fp.clock = 4000;
	fake_arrive(&fp, 0, 2);
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* woken at 4000 */
	fp.clock = 4005;
	EXPECT_EQ(napi_poll_once(ctx), 2);     /* first poll */
	fp.clock = 4105;
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* empty: armed again, asleep */
	EXPECT(fp.q[0].armed);
	s = qstats(ctx, 0);
	EXPECT(hist_only(s.arm_wake_hist, napi_hist_bucket(3000)));
	EXPECT(hist_only(s.wake_poll_hist, napi_hist_bucket(5)));
	EXPECT(hist_only(s.wake_arm_hist, napi_hist_bucket(105)));
	EXPECT(hist_only(s.poll_gap_hist, napi_hist_bucket(100)));
	napi_stats_get(ctx, &ls, NULL, 0);
	EXPECT(hist_only(ls.arm_wake_hist, napi_hist_bucket(3000)));
	EXPECT(hist_only(ls.wake_arm_hist, napi_hist_bucket(105)));
	/* a race after the wakeup keeps the wakeup open until an arm holds */
	fp.clock = 5000;
	fake_arrive(&fp, 0, 1);
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* woken at 5000 */
	fp.clock = 5001;
	fp.q[0].arrive_on_enable = 1;
	EXPECT_EQ(napi_poll_once(ctx), 1);     /* not empty: no arm (interrupt mode) */
	fp.clock = 5002;
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* empty: arm, race: stays scheduled */
	EXPECT_EQ(qstats(ctx, 0).races, 1);
	fp.clock = 5600;
	EXPECT_EQ(napi_poll_once(ctx), 1);     /* the raced packet */
	fp.clock = 5700;
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* armed at 5700: wake_arm 700 us */
	s = qstats(ctx, 0);
	EXPECT_EQ(s.wake_arm_hist[napi_hist_bucket(700)], 1);
	EXPECT_EQ(s.wake_arm_hist[napi_hist_bucket(105)], 1);
	EXPECT_EQ(s.arm_wake_hist[napi_hist_bucket(4000 - 1000)], 1);
	EXPECT_EQ(s.arm_wake_hist[napi_hist_bucket(5000 - 4105)], 1);
	/* poll gaps: 4005->4105, 5001->5002, 5002->5600, 5600->5700 */
	EXPECT_EQ(s.poll_gap_hist[napi_hist_bucket(100)], 2);
	EXPECT_EQ(s.poll_gap_hist[napi_hist_bucket(1)], 1);
	EXPECT_EQ(s.poll_gap_hist[napi_hist_bucket(598)], 1);
	return 0;
}

/* ---- hybrid: the learned deferral window (fake clock, 1 cycle = 1 us) ----- */

/* A round every ROUND_US while the context is awake. */
#define ROUND_US 1
/*
 * The fake's wakeup latency in the window cases: below NAPI_WAKE_COST_US, as
 * on the machine the cost was measured on (doc/napi.md), so that the
 * window's allowance for it neither helps nor hides a case.
 */
#define WAKE_US 10
/* The length of a pace test's half (lib/napi's NAPI_PACE_HALF_US). */
#define PACE_HALF_US 500
/* The default cap, in the fake's cycles. */
#define CAP NAPI_DEFER_US_DEFAULT

/* Entry 0's window W in microseconds (1 cycle = 1 us). */
static uint64_t
window_us(struct napi_ctx *ctx)
{
	return qstats(ctx, 0).window_ns / 1000;
}

/*
 * Traffic on queue 0: `n` packets arrive `gap` us after the previous
 * arrival (`arrival`, advanced). While the context is awake it runs a round
 * every ROUND_US up to the arrival (packets that the timeline puts in the
 * past, behind a slow wakeup, arrive at once); if the queue is armed when
 * they arrive, the wakeup comes `wake` us later. The next call's rounds (or
 * settle()) poll them.
 */
static void
arrive_after(struct napi_ctx *ctx, uint64_t gap, uint32_t n, uint64_t wake)
{
	arrival += gap;
	while (!fp.q[0].armed && fp.clock + ROUND_US <= arrival) {
		fp.clock += ROUND_US;
		napi_poll_once(ctx);
	}
	if (fp.clock < arrival)
		fp.clock = arrival;
	fake_arrive(&fp, 0, n);
	if (fp.q[0].armed) {
		fp.sleep_cycles = wake;
		napi_poll_once(ctx);   /* asleep: woken `wake` us after the arrival */
		fp.sleep_cycles = 0;
	}
}

/* count arrivals as arrive_after()'s, `gap` us apart. */
static void
arrive_every(struct napi_ctx *ctx, unsigned int count, uint64_t gap, uint32_t n, uint64_t wake)
{
	while (count-- > 0)
		arrive_after(ctx, gap, n, wake);
}

/* Rounds every ROUND_US for `us` us, or until the queue is armed. */
static void
settle(struct napi_ctx *ctx, uint64_t us)
{
	uint64_t end = fp.clock + us;

	while (!fp.q[0].armed && fp.clock < end) {
		fp.clock += ROUND_US;
		napi_poll_once(ctx);
	}
}

/* n samples in bucket b, none elsewhere. */
static int
hist_is(const uint64_t *h, unsigned int b, uint64_t n)
{
	unsigned int i;

	for (i = 0; i < NAPI_HIST_BUCKETS; i++)
		if (h[i] != (i == b ? n : 0))
			return 0;
	return 1;
}

/* A pseudo-random gap in [lo, hi] us (a fixed sequence: the case is exact). */
static uint64_t
gap_in(uint32_t *seed, uint64_t lo, uint64_t hi)
{
	*seed = *seed * 1103515245u + 12345u;
	return lo + (*seed >> 8) % (hi - lo + 1);
}

/*
 * Sparse traffic (1 ms gaps) from the start: the window starts at the cap,
 * expires once, and the first wakeup (1 ms after the last packet, far
 * beyond the cap) takes it to 0.
 */
static int
to_zero(struct napi_ctx *ctx)
{
	arrive_after(ctx, 1000, 1, WAKE_US);
	settle(ctx, 1000);
	EXPECT_EQ(window_us(ctx), 0);
	return 0;
}

/* A burst every 4 us from the start: caught by the window, never armed. */
static int
test_hybrid_stream_never_arms(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;

	arrive_every(ctx, 2000, 4, 32, WAKE_US);
	settle(ctx, 1);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.arms, 0);
	EXPECT_EQ(s.wakeups, 0);
	EXPECT_EQ(fp.waits, 0);
	EXPECT_EQ(s.packets, 2000 * 32);
	EXPECT_EQ(s.window_ns, CAP * 1000);
	/* every gap polled past an empty round and caught, 4 us after the last */
	EXPECT_EQ(s.windows_caught, 2000);
	EXPECT_EQ(s.windows_expired, 0);
	EXPECT(hist_is(s.spin_hist, napi_hist_bucket(4), 2000));
	EXPECT(hist_is(lstats(ctx).spin_hist, napi_hist_bucket(4), 2000));
	return 0;
}

/*
 * A stream after sparse traffic (W = 0), bursts of 8 every 4 us, its first
 * 1 ms after the last packet: the bursts that came during that wakeup are
 * polled, the empty round after them arms (W = 0), the next burst wakes it
 * sooner than a sleep/wake cycle costs, W goes back to the cap, and no
 * later gap arms.
 */
static int
test_hybrid_stream_after_sparse(struct napi_ctx *ctx)
{
	struct napi_queue_stats s0, s;

	EXPECT_EQ(to_zero(ctx), 0);
	s0 = qstats(ctx, 0);
	EXPECT_EQ(s0.arms, 2);
	EXPECT_EQ(s0.window_shrinks, 1);
	arrive_after(ctx, 1000, 8, WAKE_US);
	arrive_every(ctx, 2000 - 1, 4, 8, WAKE_US);
	settle(ctx, 1);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.packets - s0.packets, 2000 * 8);
	EXPECT_EQ(s.arms - s0.arms, 1);
	EXPECT_EQ(s.wakeups - s0.wakeups, 2);
	EXPECT_EQ(s.window_grows, 1);
	EXPECT_EQ(s.window_ns, CAP * 1000);
	EXPECT_EQ(s.races, 0);
	return 0;
}

/*
 * 1 ms gaps after a stream (W at the cap): the first wakeup takes W to 0, so
 * every wakeup polls twice (the packet, then the empty round that arms),
 * but the probes: the 9th wakeup's idle period is polled up to the cap,
 * finds nothing, and the next probes come 16 and 32 wakeups later.
 */
static int
test_hybrid_sparse_two_polls(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;
	uint64_t polls[64];
	unsigned int k;

	arrive_every(ctx, 100, 4, 32, WAKE_US);
	EXPECT_EQ(window_us(ctx), CAP);
	EXPECT_EQ(qstats(ctx, 0).arms, 0);
	for (k = 0; k < RTE_DIM(polls); k++) {
		polls[k] = qstats(ctx, 0).polls;
		arrive_after(ctx, 1000, 1, WAKE_US);
	}
	settle(ctx, 1000);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.wakeups, RTE_DIM(polls));
	EXPECT_EQ(s.window_ns, 0);
	EXPECT_EQ(s.window_shrinks, 1);
	EXPECT_EQ(s.window_grows, 0);
	/* polls[k + 1] - polls[k]: the (k)th wakeup's polls, k = 1.. */
	for (k = 1; k + 1 < RTE_DIM(polls); k++)
		EXPECT_EQ(polls[k + 1] - polls[k], k == 9 || k == 25 || k == 57 ? 1 + CAP : 2);
	EXPECT_EQ(s.probes, 3);
	EXPECT_EQ(s.probe_hits, 0);
	/* the stream's last window, and the three probes */
	EXPECT_EQ(s.windows_expired, 4);
	EXPECT_EQ(s.packets, 100 * 32 + RTE_DIM(polls));
	return 0;
}

/* Idle from the start: one window at the cap, armed once, never woken. */
static int
test_hybrid_idle_arms_once(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;
	unsigned int k;

	settle(ctx, 1000);
	EXPECT(fp.q[0].armed);
	for (k = 0; k < 1000; k++) {
		fp.clock += 1000;
		EXPECT_EQ(napi_poll_once(ctx), 0);
	}
	s = qstats(ctx, 0);
	EXPECT_EQ(s.arms, 1);
	EXPECT_EQ(s.arms_held, 1);
	EXPECT_EQ(s.wakeups, 0);
	EXPECT_EQ(s.polls, CAP + 1);       /* rounds 0..CAP us after the first */
	EXPECT_EQ(s.windows_expired, 1);
	EXPECT_EQ(s.window_ns, CAP * 1000); /* nothing learned without a wakeup */
	EXPECT_EQ(fp.q[0].rx_calls, CAP + 1);
	return 0;
}

/*
 * Paired sparse traffic (tests/napi_fwd's pairs): gaps of 100-1900 us and
 * 35-665 us in turn. Past the first wakeup W stays 0: no wakeup comes
 * sooner than a cycle costs, and every probe expires.
 */
static int
test_hybrid_pairs_stay_zero(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;
	uint32_t seed = 1;
	unsigned int k;

	for (k = 0; k < 600; k++) {
		arrive_after(ctx, k % 2 == 0 ? gap_in(&seed, 100, 1900) : gap_in(&seed, 35, 665),
			     1, WAKE_US);
		if (k >= 1)
			EXPECT_EQ(window_us(ctx), 0);
	}
	settle(ctx, 2000);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.wakeups, 600);
	EXPECT_EQ(s.packets, 600);
	EXPECT_EQ(s.window_grows, 0);
	EXPECT_EQ(s.window_shrinks, 1);
	EXPECT_EQ(s.window_ns, 0);
	/* probes after the wakeups 9, 25, 57, 121, 249 and 505 */
	EXPECT_EQ(s.probes, 6);
	EXPECT_EQ(s.probe_hits, 0);
	EXPECT_EQ(s.windows_caught, 0);
	EXPECT_EQ(s.polls, CAP + 1 + 2 * 600 + (CAP - 1) * 6);
	EXPECT_EQ(s.races, 0);
	return 0;
}

/*
 * The disarm-on-race rule holds in hybrid mode: a race at arming (the
 * re-check, or -EAGAIN) disarms, keeps the entry scheduled, and raises W
 * to the cap (polling a little longer would have caught it).
 */
static int
test_hybrid_race_disarms(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;

	EXPECT_EQ(to_zero(ctx), 0);
	arrive_after(ctx, 1000, 1, WAKE_US);
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 1);      /* the packet */
	fp.clock += 1;
	fp.q[0].arrive_on_enable = 1;
	EXPECT_EQ(napi_poll_once(ctx), 0);      /* W = 0: arms, the re-check finds 1 */
	s = qstats(ctx, 0);
	EXPECT_EQ(s.races, 1);
	EXPECT_EQ(s.race_disarms, 1);
	EXPECT(s.scheduled);
	EXPECT(!s.armed);
	EXPECT(!fp.q[0].armed);
	EXPECT_EQ(fp.q[0].disables, 3);         /* two wakeups and the race */
	EXPECT_EQ(s.window_ns, CAP * 1000);
	EXPECT_EQ(s.window_grows, 1);
	EXPECT_EQ(fp.waits, 4);                 /* no sleep at the race */
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 1);      /* the raced packet */
	settle(ctx, 1000);
	EXPECT(fp.q[0].armed);
	EXPECT_EQ(fp.clock - arrival, WAKE_US + 3 + CAP); /* armed a window after the last packet */
	/* -EAGAIN: the port disarmed itself, no disable call */
	EXPECT_EQ(to_zero(ctx), 0);
	arrive_after(ctx, 1000, 1, WAKE_US);
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 1);
	fp.clock += 1;
	fp.q[0].enable_ret_once = -EAGAIN;
	fp.q[0].arrive_on_enable = 2;
	s = qstats(ctx, 0);
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(qstats(ctx, 0).races, 2);
	EXPECT_EQ(qstats(ctx, 0).race_disarms, 2);
	EXPECT_EQ(fp.q[0].disables, s.wakeups + 1);  /* none for -EAGAIN */
	EXPECT(!fp.q[0].armed && qstats(ctx, 0).scheduled);
	EXPECT_EQ(window_us(ctx), CAP);
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 2);
	return 0;
}

/*
 * Two more signs that polling on would have paid raise W from 0 to the
 * cap: a first round after a wakeup that uses the whole budget, and a
 * sleep shorter than a sleep/wake cycle costs.
 */
static int
test_hybrid_grows(struct napi_ctx *ctx)
{

	EXPECT_EQ(to_zero(ctx), 0);
	arrive_after(ctx, 1000, 100, WAKE_US);     /* a backlog while asleep */
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 64);
	EXPECT_EQ(window_us(ctx), CAP);
	EXPECT_EQ(qstats(ctx, 0).window_grows, 1);
	settle(ctx, 1000);
	EXPECT_EQ(to_zero(ctx), 0);                 /* the next wakeup: far beyond */
	EXPECT_EQ(qstats(ctx, 0).window_shrinks, 2);
	/* armed right after the packet: one 2 us later wakes 12 us after arming */
	arrive_after(ctx, 2, 1, WAKE_US);
	EXPECT_EQ(qstats(ctx, 0).wakeups, 4);
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 1);
	EXPECT_EQ(window_us(ctx), CAP);
	EXPECT_EQ(qstats(ctx, 0).window_grows, 2);
	return 0;
}

/*
 * A stream whose wakeups are slower than a sleep/wake cycle costs (a busy
 * host) looks sparse to the wakeups: W stays 0 until the 8th wakeup's
 * probe polls an idle period up to the cap, catches the next packet, and
 * raises W: from then on nothing arms.
 */
static int
test_hybrid_probe_finds_stream(struct napi_ctx *ctx)
{
	struct napi_queue_stats s0, s;

	EXPECT_EQ(to_zero(ctx), 0);
	arrival = fp.clock;
	s0 = qstats(ctx, 0);
	arrive_every(ctx, 400, 15, 1, 40);
	settle(ctx, 1);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.packets - s0.packets, 400);
	EXPECT_EQ(s.probes, 1);
	EXPECT_EQ(s.probe_hits, 1);
	EXPECT_EQ(s.window_ns, CAP * 1000);
	/* woken 8 times (from the arm before the stream on), the 8th polls a probe */
	EXPECT_EQ(s.wakeups - s0.wakeups, 8);
	EXPECT_EQ(s.arms_held - s0.arms_held, 7);
	return 0;
}

/*
 * napi_work(): application work holds arming off for the cap, on top of
 * the entry's own window (0 here), and only while it keeps coming.
 */
static int
test_hybrid_app_work(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;
	uint64_t t0;
	unsigned int k;

	EXPECT_EQ(to_zero(ctx), 0);
	arrive_after(ctx, 1000, 1, WAKE_US);
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 1);
	napi_work(ctx);                     /* the application found work now */
	t0 = fp.clock;
	for (k = 1; k < CAP; k++) {
		fp.clock += 1;
		EXPECT_EQ(napi_poll_once(ctx), 0);
		EXPECT(!fp.q[0].armed);
	}
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 0);  /* CAP us after the work: arms */
	EXPECT(fp.q[0].armed);
	EXPECT_EQ(fp.clock - t0, CAP);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.work_holds, CAP - 1);
	EXPECT_EQ(s.window_ns, 0);          /* the queue's own window is unchanged */
	EXPECT_EQ(lstats(ctx).work_calls, 1);
	EXPECT_EQ(lstats(ctx).work_holds, CAP - 1);
	/* work every 5 us keeps the queue polled as long as it comes */
	arrive_after(ctx, 1000, 1, WAKE_US);
	fp.clock += 1;
	EXPECT_EQ(napi_poll_once(ctx), 1);
	for (k = 0; k < 1000; k++) {
		if (k % 5 == 0)
			napi_work(ctx);
		fp.clock += 1;
		EXPECT_EQ(napi_poll_once(ctx), 0);
	}
	EXPECT(!fp.q[0].armed);
	settle(ctx, 1000);
	EXPECT(fp.q[0].armed);
	EXPECT_EQ(qstats(ctx, 0).arms_held, s.arms_held + 1);
	return 0;
}

/*
 * A closed loop for `us` us: `n` frames in flight, handed back by the peer
 * `turn` us after the forwarder's poll took the last of them. Rounds every
 * ROUND_US while the context is awake; an armed queue is woken `wake` us
 * after the frames land. Returns the frames the forwarder took.
 */
static uint64_t
closed_loop(struct napi_ctx *ctx, uint64_t us, uint32_t n, uint64_t turn, uint64_t wake)
{
	uint64_t end = fp.clock + us, due = fp.clock, p0 = qstats(ctx, 0).packets;
	bool out = true;   /* the frames are at the peer */

	while (fp.clock < end) {
		if (out && fp.clock >= due) {
			fake_arrive(&fp, 0, n);
			out = false;
		}
		if (fp.q[0].armed && out) {
			fp.clock = due;          /* asleep until they land */
			continue;
		}
		if (fp.q[0].armed) {
			fp.sleep_cycles = wake;
			napi_poll_once(ctx);     /* woken `wake` us after they landed */
			fp.sleep_cycles = 0;
			continue;
		}
		fp.clock += ROUND_US;
		napi_poll_once(ctx);
		if (!out && fp.q[0].waiting == 0) {
			out = true;
			due = fp.clock + turn;
		}
	}
	return qstats(ctx, 0).packets - p0;
}

/* `count` bursts of `n`, `gap` us apart, then rounds until the queue arms;
 * returns the packets taken. */
static uint64_t
open_stream(struct napi_ctx *ctx, unsigned int count, uint64_t gap, uint32_t n)
{
	uint64_t p0 = qstats(ctx, 0).packets;

	arrive_every(ctx, count, gap, n, WAKE_US);
	settle(ctx, 1000);
	return qstats(ctx, 0).packets - p0;
}

/* Entry 0 is paced (1) or responsive (0), after `switches` changes and
 * `slowed` pace tests with a lower rate; no test was void. */
static int
expect_pace(struct napi_ctx *ctx, uint64_t paced, uint64_t switches, uint64_t slowed)
{
	struct napi_queue_stats s = qstats(ctx, 0);

	EXPECT_EQ(s.paced, paced);
	EXPECT_EQ(s.pace_switches, switches);
	EXPECT_EQ(s.pace_slowed, slowed);
	EXPECT_EQ(s.pace_voids, 0);
	return 0;
}

/*
 * A closed loop (32 frames in flight, turned around in 6 us) stays
 * responsive: every pace test sees the rate fall in the half that arms at
 * once, and each doubles the spacing to the next, so its 2 s hold 7 tests
 * (at 50, 150, 350, 750, 1150, 1550 and 1950 ms: 50 ms, then 100, 200 and
 * 400 ms apart). The window stays at the cap, the queue arms only in the
 * tests' armed halves (30 cycles of each), and the loop runs within 0.2 %
 * of a forwarder that never arms (a cycle of 7 us, the turn and the round
 * that takes the frames: 9,142,857 frames; this one takes 9,133,280).
 */
static int
test_hybrid_closed_loop_responsive(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;
	uint64_t got = closed_loop(ctx, 2000000, 32, 6, WAKE_US);

	s = qstats(ctx, 0);
	EXPECT_EQ(s.pace_tests, 7);
	EXPECT_EQ(expect_pace(ctx, 0, 0, 7), 0);
	EXPECT_EQ(s.window_ns, CAP * 1000);
	EXPECT_EQ(s.arms_held, 7 * 30);
	EXPECT_EQ(s.wakeups, 7 * 30);
	EXPECT_EQ(s.races, 0);
	EXPECT_EQ(got, 9133280);
	EXPECT(got * 1000 >= 2000000ull / 7 * 32 * 998);
	return 0;
}

/*
 * The spacing starts over when the stream breaks: a closed loop of 1 s
 * has its tests at 50, 150, 350 and 750 ms (the next would be 400 ms
 * later); after 100 ms of quiet (the queue armed) the same loop has its
 * next test 50 ms into it, not 400.
 */
static int
test_hybrid_pace_spacing_restarts(struct napi_ctx *ctx)
{
	closed_loop(ctx, 1000000, 32, 6, WAKE_US);
	EXPECT_EQ(qstats(ctx, 0).pace_tests, 4);
	closed_loop(ctx, 100000, 32, 6, WAKE_US);
	EXPECT_EQ(qstats(ctx, 0).pace_tests, 4);    /* spaced 400 ms: none */
	settle(ctx, 1000);
	EXPECT(fp.q[0].armed);
	fp.clock += 100000;
	closed_loop(ctx, 70000, 32, 6, WAKE_US);
	EXPECT_EQ(qstats(ctx, 0).pace_tests, 5);
	EXPECT_EQ(expect_pace(ctx, 0, 0, 5), 0);
	return 0;
}

/*
 * An open stream (bursts of 8 every 16 us, a sender that keeps its pace):
 * the pace tests see the same rate in both halves; after two (at 50 and
 * 100 ms) the entry is paced, its window drops to the paced cap (0 at the
 * default), and from then on every gap arms (but in the polled halves of
 * the two later tests, at 150 and 250 ms, the spacing doubling as they
 * confirm it). Every packet is taken.
 */
static int
test_hybrid_open_stream_paced(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;

	EXPECT_EQ(open_stream(ctx, 25000, 16, 8), 25000 * 8);
	EXPECT_EQ(expect_pace(ctx, 1, 1, 0), 0);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.pace_tests, 4);
	EXPECT_EQ(s.window_ns, 0);
	EXPECT_EQ(lstats(ctx).paced_ns, 0);
	/* paced after the second test (about 102 ms in): the 18,683 gaps of
	 * the 298 ms after it less those of the two polled halves, and the
	 * arm at the end that no packet follows */
	EXPECT_EQ(s.wakeups, 18683);
	EXPECT_EQ(s.arms_held, 18684);
	EXPECT_EQ(s.races, 0);
	return 0;
}

/*
 * The traffic changes: an open stream makes the entry paced (tests at 50,
 * 100, 150 and 250 ms of its 320), a closed loop right after it (no break
 * in the stream) makes it responsive again at its first pace test, at 450
 * ms (one lower rate is enough), the spacing back at 50 ms; from then on
 * the loop runs as one that never arms but for the tests' armed halves.
 */
static int
test_hybrid_pace_follows_traffic(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;
	uint64_t got;

	arrive_every(ctx, 20000, 16, 8, WAKE_US);
	EXPECT_EQ(qstats(ctx, 0).paced, 1);
	EXPECT_EQ(qstats(ctx, 0).pace_tests, 4);
	closed_loop(ctx, 200000, 32, 6, WAKE_US);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.paced, 0);
	EXPECT_EQ(s.pace_switches, 2);
	EXPECT_EQ(s.pace_tests, 6);
	EXPECT_EQ(s.pace_slowed, 2);  /* at 450 and 500 ms */
	EXPECT_EQ(s.wakeups, 21591);
	EXPECT_EQ(s.window_ns, CAP * 1000);
	got = closed_loop(ctx, 200000, 32, 6, WAKE_US);
	/* one test, at 600 ms; 914,285 frames for a loop that never arms */
	EXPECT_EQ(got, 912928);
	EXPECT(got * 1000 >= 200000 / 7 * 32 * 998);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.pace_switches, 2);
	EXPECT_EQ(s.pace_tests, 7);
	EXPECT_EQ(s.pace_slowed, 3);
	EXPECT_EQ(s.wakeups, 21591 + 30);  /* the paced stream's, and one armed half */
	EXPECT_EQ(s.races, 0);
	return 0;
}

/* defer_us 0: hybrid arms at the first empty round and never learns. */
static int
test_hybrid_cap_zero(struct napi_ctx *ctx)
{
	struct napi_queue_stats s;

	settle(ctx, 10);
	EXPECT_EQ(qstats(ctx, 0).polls, 1);
	arrive_every(ctx, 50, 4, 32, WAKE_US);           /* short sleeps */
	arrive_after(ctx, 1000, 100, WAKE_US);      /* a full first round */
	napi_work(ctx);
	settle(ctx, 100);
	fp.q[0].arrive_on_enable = 1;                   /* a race */
	arrive_after(ctx, 1000, 1, WAKE_US);
	settle(ctx, 100);
	s = qstats(ctx, 0);
	EXPECT_EQ(s.races, 1);
	EXPECT_EQ(s.window_ns, 0);
	EXPECT_EQ(s.window_grows + s.window_shrinks + s.probes + s.work_holds, 0);
	EXPECT_EQ(s.pace_tests + s.pace_voids + s.pace_switches + s.paced, 0);
	EXPECT_EQ(s.windows_caught + s.windows_expired, 0);
	EXPECT_EQ(s.wakeups + 1, s.arms_held);   /* the last arm still holds */
	EXPECT(fp.q[0].armed);
	return 0;
}

/* defer_us is checked: at most NAPI_DEFER_US_MAX. */
static int
test_hybrid_defer_range(const void *arg __rte_unused)
{
	struct napi_ctx_conf conf;
	struct napi_ctx *ctx;

	fake_conf(&conf, 1);
	EXPECT_EQ(conf.defer_us, NAPI_DEFER_US_DEFAULT);
	ctx = create_at_max(&conf, &conf.defer_us, NAPI_DEFER_US_MAX);
	EXPECT(ctx != NULL);
	EXPECT_EQ(lstats(ctx).defer_ns, (uint64_t)NAPI_DEFER_US_MAX * 1000);
	napi_ctx_free(ctx);
	return 0;
}

/*
 * The shapes most rows use (struct ctx_case's fields): one poll-mode
 * queue, one hybrid queue with defer_us cap.
 */
#define POLL .nb = 1, .mode = NAPI_MODE_POLL
#define HYBRID(cap) .nb = 1, .mode = NAPI_MODE_HYBRID, .defer_us = (cap)
/*
 * A case on interrupt-mode queues: their number, then any more of struct
 * ctx_case's fields.
 */
#define INTERRUPT_CASE(name, fn, ...) \
	CTX_CASE(name, fn, .mode = NAPI_MODE_INTERRUPT, .nb = __VA_ARGS__)
/* A hybrid case at the default cap, its name after "hybrid: ". */
#define HYBRID_CASE(what, fn) CTX_CASE("hybrid: " what, fn, HYBRID(CAP))

static const struct unit_case tests[] = {
	INTERRUPT_CASE("budget exhaustion keeps polling",
		       test_budget_exhaustion_keeps_polling, 1),
	{ "custom budget, add checks", test_budget_custom, NULL },
	INTERRUPT_CASE("race at arming (-EAGAIN) disarms, keeps polling",
		       test_race_eagain_disarms, 1),
	INTERRUPT_CASE("race at arming (queue count) disarms, keeps polling",
		       test_race_queue_count_disarms, 1),
	INTERRUPT_CASE("race with the rule off stays armed",
		       test_race_rule_off_stays_armed, 1, .keep_armed_on_race = true),
	INTERRUPT_CASE("race (-EAGAIN) with the rule off: port disarmed",
		       test_race_eagain_rule_off, 1, .keep_armed_on_race = true),
	INTERRUPT_CASE("no rx_queue_count: no re-check",
		       test_no_queue_count, 1),
	INTERRUPT_CASE("all armed: sleeps",
		       test_all_armed_sleeps, 3),
	{ "partially armed: does not sleep", test_partial_armed_no_sleep, NULL },
	INTERRUPT_CASE("wakeup disarms exactly the woken queues and polls them",
		       test_wakeup_disarms_woken_only, 3),
	INTERRUPT_CASE("spurious wakeup counted",
		       test_spurious_wakeup, 2),
	INTERRUPT_CASE("housekeeping timeout and EINTR",
		       test_sleep_timeout_and_eintr, 1, .sleep_timeout_ms = 250),
	INTERRUPT_CASE("housekeeping timeout polls queues that may have lost a wakeup",
		       test_timeout_rescues_lost_wakeup, 2, .sleep_timeout_ms = 10),
	INTERRUPT_CASE("housekeeping timeout without rx_queue_count polls all",
		       test_timeout_polls_all_without_count, 2, .sleep_timeout_ms = 10),
	INTERRUPT_CASE("napi_stop wakes and stops",
		       test_stop, 1),
	INTERRUPT_CASE("registration failure: polling only",
		       test_register_failure_polls, 2),
	{ "free disarms and unregisters", test_free_unregisters, NULL },
	CTX_CASE("one context per lcore, tsc_hz needed",
		 test_duplicate_lcore, POLL),
	CTX_CASE("tx back-pressure with bounded reclaim retries",
		 test_tx_backpressure, POLL, .has_tx = true, .tx_port = 1, .tx_retries = 4),
	CTX_CASE("tx cleanup during rx polls, -ENOTSUP tolerated",
		 test_tx_cleanup_during_rx, POLL, .has_tx = true),
	CTX_CASE("tx refused in a handler: held, its rx queue waits, order kept",
		 test_tx_hold_blocks_rx, POLL, .has_tx = true, .tx_port = 1, .tx_retries = 4,
		 .handler = fwd_handler),
	INTERRUPT_CASE("tx held: never armed; dropped and counted at tx_hold_ms",
		       test_tx_hold_drops_after_bound, 1, .has_tx = true, .tx_port = 1,
		       .handler = fwd_handler),
	INTERRUPT_CASE("tx hold full: the rest go back, every producer waits",
		       test_tx_hold_full_blocks_all, 3, .has_tx = true, .tx_port = 1,
		       .handler = fwd_handler),
	CTX_CASE("tx_hold_ms 0: refused frames go back to the handler",
		 test_tx_hold_off, POLL, .has_tx = true, .tx_port = 1, .no_tx_hold = true,
		 .handler = fwd_handler),
	{ "tx held at napi_run's return and at free: sent or dropped",
	  test_tx_hold_at_stop_and_free, NULL },
	CTX_CASE("stats exact",
		 test_stats_exact, .nb = 2, .mode = NAPI_MODE_HYBRID, .defer_us = 0),
	{ "mode names", test_modes_names, NULL },
	CTX_CASE("poll mode never arms",
		 test_poll_mode_never_arms, POLL),
	{ "timing histogram buckets", test_hist_buckets, NULL },
	INTERRUPT_CASE("per-wakeup timing histograms (fake clock)",
		       test_wakeup_timing_hist, 1),
	HYBRID_CASE("bursts every 4 us never arm",
		    test_hybrid_stream_never_arms),
	HYBRID_CASE("a stream after sparse traffic arms once more",
		    test_hybrid_stream_after_sparse),
	HYBRID_CASE("1 ms gaps poll twice per wakeup from the 1st",
		    test_hybrid_sparse_two_polls),
	HYBRID_CASE("idle arms once and never wakes",
		    test_hybrid_idle_arms_once),
	HYBRID_CASE("gaps of 35-665 us keep the window at 0",
		    test_hybrid_pairs_stay_zero),
	HYBRID_CASE("a race still disarms (and grows the window)",
		    test_hybrid_race_disarms),
	HYBRID_CASE("a full first round, a short sleep grow the window",
		    test_hybrid_grows),
	HYBRID_CASE("a probe finds a stream behind slow wakeups",
		    test_hybrid_probe_finds_stream),
	HYBRID_CASE("a closed loop stays responsive, at poll mode's rate",
		    test_hybrid_closed_loop_responsive),
	HYBRID_CASE("the pace tests space out, and start over after a break",
		    test_hybrid_pace_spacing_restarts),
	HYBRID_CASE("an open stream is paced: it arms at every gap",
		    test_hybrid_open_stream_paced),
	HYBRID_CASE("open, then closed: paced, then responsive",
		    test_hybrid_pace_follows_traffic),
	HYBRID_CASE("napi_work holds arming off for the cap",
		    test_hybrid_app_work),
	CTX_CASE("hybrid: defer_us 0 arms at the first empty round",
		 test_hybrid_cap_zero, HYBRID(0)),
	{ "hybrid: defer_us range", test_hybrid_defer_range, NULL },
};

int
main(int argc, char **argv)
{
	return unit_tap_main(argc, argv, tests, RTE_DIM(tests), NULL);
}
