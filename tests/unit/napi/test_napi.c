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

static void
count_handler(struct napi_ctx *ctx, uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
	      uint16_t n, void *arg)
{
	handled[queue] += n;
	handler_calls++;
}

/*
 * Reset the fake port (nb queues) and the handler counts, and fill conf with
 * what every case shares: lcore 3, the 1 MHz fake clock, the fake's ops.
 */
static void
fake_conf(struct napi_ctx_conf *conf, unsigned int nb)
{
	fake_init(&fp, nb);
	memset(handled, 0, sizeof(handled));
	handler_calls = 0;
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

/* A context from conf with queues 0..nb-1 of `mode` (budget 64), or NULL. */
static struct napi_ctx *
create_with_queues(const struct napi_ctx_conf *conf, unsigned int nb, enum napi_mode mode)
{
	struct napi_ctx *ctx = napi_ctx_create(conf);
	unsigned int i;

	for (i = 0; ctx != NULL && i < nb; i++) {
		struct napi_queue_conf qc = {
			.port = 0,
			.queue = (uint16_t)i,
			.mode = mode,
			.handler = count_handler,
		};

		if (napi_queue_add(ctx, &qc) != (int)i) {
			napi_ctx_free(ctx);
			ctx = NULL;
		}
	}
	return ctx;
}

/* A context over the fake port with nb queues of `mode` (budget 64). */
static struct napi_ctx *
setup(unsigned int nb, enum napi_mode mode, uint32_t idle_polls, uint32_t idle_us,
      bool disable_on_race)
{
	struct napi_ctx_conf conf;

	fake_conf(&conf, nb);
	conf.idle_polls = idle_polls;
	conf.idle_us = idle_us;
	conf.disable_on_race = disable_on_race;
	return create_with_queues(&conf, nb, mode);
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

/*
 * A case that runs a script on a fresh setup() context: the context's shape
 * (setup()'s arguments) and the script, which only scripts and checks.
 */
struct ctx_case {
	unsigned int nb;
	enum napi_mode mode;
	uint32_t idle_polls;
	uint32_t idle_us;
	bool keep_armed_on_race;  /* disable_on_race off */
	int (*script)(struct napi_ctx *ctx);
};

static int
run_on_ctx(const void *arg)
{
	const struct ctx_case *c = arg;
	struct napi_ctx *ctx = setup(c->nb, c->mode, c->idle_polls, c->idle_us,
				     !c->keep_armed_on_race);
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

static int
test_short_rounds_arm_after_n(struct napi_ctx *ctx)
{
	int i;

	for (i = 0; i < 4; i++) {
		EXPECT_EQ(napi_poll_once(ctx), 0);
		EXPECT_EQ(fp.q[0].enables, 0);
	}
	/* a full round resets the count */
	fake_arrive(&fp, 0, 64);
	EXPECT_EQ(napi_poll_once(ctx), 64);
	for (i = 0; i < 4; i++) {
		/* short but not empty counts as well */
		fake_arrive(&fp, 0, i == 0 ? 3 : 0);
		napi_poll_once(ctx);
		EXPECT_EQ(fp.q[0].enables, 0);
	}
	EXPECT_EQ(fp.waits, 0);
	EXPECT_EQ(napi_poll_once(ctx), 0);  /* 5th short round */
	EXPECT_EQ(fp.q[0].enables, 1);
	EXPECT(fp.q[0].armed);
	EXPECT(!qstats(ctx, 0).scheduled);
	EXPECT(qstats(ctx, 0).armed);
	EXPECT_EQ(fp.waits, 1);
	EXPECT_EQ(fp.last_timeout, -1);
	return 0;
}

static int
test_idle_us_arms_after_t(struct napi_ctx *ctx)
{
	/* idle_polls 0: time alone decides; 100 us at 1 cycle per us. */
	int i;

	fake_arrive(&fp, 0, 1);
	EXPECT_EQ(napi_poll_once(ctx), 1);  /* packet at t = 1000 */
	for (i = 1; i < 10; i++) {
		fp.clock = 1000 + (uint64_t)i * 10;
		EXPECT_EQ(napi_poll_once(ctx), 0);
		EXPECT_EQ(fp.q[0].enables, 0);
	}
	fp.clock = 1099;
	napi_poll_once(ctx);
	EXPECT_EQ(fp.q[0].enables, 0);
	fp.clock = 1100;
	napi_poll_once(ctx);
	EXPECT_EQ(fp.q[0].enables, 1);
	EXPECT_EQ(fp.waits, 1);
	return 0;
}

static int
test_both_thresholds(struct napi_ctx *ctx)
{
	/* Both must hold: 3 short rounds and 50 us. */
	int i;

	for (i = 0; i < 10; i++)
		napi_poll_once(ctx);    /* clock still: rounds enough, time not */
	EXPECT_EQ(fp.q[0].enables, 0);
	fp.clock += 50;
	napi_poll_once(ctx);
	EXPECT_EQ(fp.q[0].enables, 1);
	return 0;
}

/*
 * The race at arming each race case starts with: the next enable returns
 * enable_ret once (0: none) and n packets land right after it. The empty
 * round finds them at the re-check: one race, the queue stays scheduled and
 * the context does not sleep. Whether the queue is left armed (in the
 * context's stats and at the port), the race disarms and the port's
 * disables are the case's.
 */
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
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.waits, 1);
	EXPECT(fp.q[0].armed && fp.q[1].armed && fp.q[2].armed);
	ls = lstats(ctx);
	EXPECT_EQ(ls.sleeps, 1);
	EXPECT_EQ(ls.sleep_timeouts, 1);  /* the fake returned 0 events */
	EXPECT_EQ(ls.sleep_cycles, 500);
	/* nothing woke: the next round polls nothing and sleeps again */
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.waits, 2);
	EXPECT_EQ(fp.q[0].rx_calls, 1);
	return 0;
}

static int
test_partial_armed_no_sleep(const void *arg)
{
	struct napi_ctx *ctx = setup(2, NAPI_MODE_INTERRUPT, 0, 0, true);
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
	ctx = setup(2, NAPI_MODE_INTERRUPT, 0, 0, true);
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

	EXPECT_EQ(napi_poll_once(ctx), 0);     /* all armed, asleep */
	EXPECT_EQ(fp.waits, 1);
	fake_arrive(&fp, 1, 5);
	EXPECT(fp.q[1].signalled);
	EXPECT_EQ(napi_poll_once(ctx), 0);     /* polls nobody, wakes for q1 */
	EXPECT_EQ(fp.waits, 2);
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
	EXPECT_EQ(napi_poll_once(ctx), 0);
	EXPECT_EQ(fp.waits, 3);
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
test_sleep_timeout_and_eintr(const void *arg)
{
	struct napi_ctx_conf conf;
	struct napi_queue_conf qc = {
		.port = 0, .queue = 0, .mode = NAPI_MODE_INTERRUPT, .handler = count_handler,
	};
	struct napi_ctx *ctx;
	int ret = -1;

	fake_conf(&conf, 1);
	conf.sleep_timeout_ms = 250;
	ctx = create_with_queue(&conf, &qc);
	CHECK(ctx != NULL);
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK_EQ(fp.last_timeout, 250);
	fp.wait_ret_once = -1;
	CHECK_EQ(napi_poll_once(ctx), -EINTR);
	CHECK_EQ(lstats(ctx).sleep_interrupts, 1);
	CHECK_EQ(lstats(ctx).sleep_timeouts, 1);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

/* A context with a housekeeping timeout over nb interrupt-mode queues. */
static struct napi_ctx *
setup_timeout(unsigned int nb)
{
	struct napi_ctx_conf conf;

	fake_conf(&conf, nb);
	conf.sleep_timeout_ms = 10;
	return create_with_queues(&conf, nb, NAPI_MODE_INTERRUPT);
}

static int
test_timeout_rescues_lost_wakeup(const void *arg)
{
	struct napi_ctx *ctx = setup_timeout(2);
	int ret = -1;

	CHECK(ctx != NULL);
	CHECK_EQ(napi_poll_once(ctx), 0);           /* both armed, asleep, timeout */
	CHECK_EQ(fp.waits, 1);
	/* count supported, nothing there: timeouts leave the queues armed */
	CHECK_EQ(fp.q[0].disables + fp.q[1].disables, 0);
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK_EQ(fp.waits, 2);
	CHECK_EQ(fp.q[0].rx_calls, 1);
	/* a packet lands on q1 without a signal (a lost wakeup) */
	fp.q[1].waiting = 2;
	CHECK_EQ(napi_poll_once(ctx), 0);           /* timeout: q1 shows work */
	CHECK_EQ(fp.q[1].disables, 1);
	CHECK_EQ(fp.q[0].disables, 0);
	CHECK_EQ(qstats(ctx, 1).timeout_polls, 1);
	CHECK_EQ(qstats(ctx, 1).wakeups, 0);
	CHECK_EQ(napi_poll_once(ctx), 2);           /* polled */
	CHECK_EQ(fp.q[0].rx_calls, 1);

	/* without rx_queue_count every armed queue is polled at a timeout */
	napi_ctx_free(ctx);
	ctx = setup_timeout(2);
	CHECK(ctx != NULL);
	fp.count_supported = false;
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK_EQ(fp.q[0].disables, 1);
	CHECK_EQ(fp.q[1].disables, 1);
	CHECK_EQ(qstats(ctx, 0).timeout_polls, 1);
	CHECK_EQ(napi_poll_once(ctx), 0);           /* polls both, re-arms, sleeps */
	CHECK_EQ(fp.q[0].rx_calls, 2);
	CHECK_EQ(fp.q[1].rx_calls, 2);
	CHECK_EQ(fp.waits, 2);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
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
	struct napi_ctx *ctx = setup(2, NAPI_MODE_INTERRUPT, 0, 0, true);
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

static int
test_tx_backpressure(const void *arg)
{
	struct napi_ctx_conf conf;
	struct napi_queue_conf qc = {
		.port = 0, .queue = 0, .mode = NAPI_MODE_POLL, .handler = count_handler,
		.has_tx = true, .tx_port = 1, .tx_queue = 0,
	};
	struct rte_mbuf *pkts[32];
	struct napi_queue_stats s;
	struct napi_lcore_stats ls;
	struct napi_ctx *ctx;
	int ret = -1;

	memset(pkts, 0, sizeof(pkts));
	fake_conf(&conf, 1);
	conf.tx_retries = 4;
	ctx = create_with_queue(&conf, &qc);
	CHECK(ctx != NULL);

	/* room for all: one burst, no retry */
	fp.tx_room = 100;
	CHECK_EQ(napi_tx(ctx, 1, 0, pkts, 10), 10);
	CHECK_EQ(fp.tx_calls, 1);
	CHECK_EQ(fp.cleanup_calls, 0);

	/* 5 room, 2 completions per cleanup: 5 + 2 + 2 + 2 + 2 after 4 retries */
	fp.tx_room = 5;
	fp.tx_done = 100;
	fp.tx_done_per_cleanup = 2;
	CHECK_EQ(napi_tx(ctx, 1, 0, pkts, 20), 13);
	CHECK_EQ(fp.cleanup_calls, 4);
	s = qstats(ctx, 0);
	CHECK_EQ(s.tx_sent, 23);
	CHECK_EQ(s.tx_retries, 4);
	CHECK_EQ(s.tx_unsent, 7);
	CHECK_EQ(s.tx_reclaimed, 8);

	/* enough after one reclaim: stops retrying */
	fp.tx_room = 0;
	fp.tx_done_per_cleanup = 0;
	fp.tx_done = 50;
	CHECK_EQ(napi_tx(ctx, 1, 0, pkts, 8), 8);
	CHECK_EQ(fp.cleanup_calls, 5);

	/* cleanup unsupported: tolerated, retries still bounded */
	fp.cleanup_supported = false;
	fp.tx_room = 0;
	CHECK_EQ(napi_tx(ctx, 1, 0, pkts, 4), 0);

	/* an unpaired queue counts on the context only */
	fp.tx_room = 3;
	CHECK_EQ(napi_tx(ctx, 2, 0, pkts, 3), 3);

	s = qstats(ctx, 0);
	CHECK_EQ(s.tx_sent, 31);
	CHECK_EQ(s.tx_retries, 9);
	CHECK_EQ(s.tx_unsent, 11);
	CHECK_EQ(s.tx_reclaimed, 58);
	ls = lstats(ctx);
	CHECK_EQ(ls.tx_sent, 34);
	CHECK_EQ(ls.tx_retries, 9);
	CHECK_EQ(ls.tx_unsent, 11);
	CHECK_EQ(ls.tx_reclaimed, 58);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

static int
test_tx_cleanup_during_rx(const void *arg)
{
	struct napi_ctx_conf conf;
	struct napi_queue_conf qc = {
		.port = 0, .queue = 0, .mode = NAPI_MODE_POLL, .handler = count_handler,
		.has_tx = true, .tx_port = 0, .tx_queue = 0,
	};
	struct napi_ctx *ctx;
	int ret = -1;

	fake_conf(&conf, 1);
	ctx = create_with_queue(&conf, &qc);
	CHECK(ctx != NULL);
	fp.tx_done = 7;
	napi_poll_once(ctx);
	CHECK_EQ(fp.cleanup_calls, 1);
	CHECK_EQ(qstats(ctx, 0).tx_reclaimed, 7);
	CHECK_EQ(lstats(ctx).tx_reclaimed, 7);
	napi_poll_once(ctx);
	CHECK_EQ(fp.cleanup_calls, 2);
	/* -ENOTSUP: tolerated once, never asked again */
	fp.cleanup_supported = false;
	napi_poll_once(ctx);
	napi_poll_once(ctx);
	napi_poll_once(ctx);
	CHECK_EQ(fp.cleanup_calls, 3);
	CHECK_EQ(qstats(ctx, 0).tx_reclaimed, 7);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

/* The counters of struct napi_queue_stats that stats_exact compares. */
#define QSTATS_COUNTERS(X) \
	X(polls) X(empty_polls) X(full_polls) X(packets) X(arms) X(races) X(race_disarms) \
	X(wakeups) X(spurious_wakeups) X(wakeup_packets)

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

static int
test_stats_exact(struct napi_ctx *ctx)
{
	struct napi_queue_stats q0, q1;
	struct napi_lcore_stats ls;

	fp.tick = 1;   /* every now() call moves the clock one cycle */
	fp.sleep_cycles = 1000;
	/* round 1: q0 70 (64 taken, full), q1 3 (short #1) */
	fake_arrive(&fp, 0, 70);
	fake_arrive(&fp, 1, 3);
	EXPECT_EQ(napi_poll_once(ctx), 67);
	/* round 2: q0 6 (short #1), q1 0 (short #2: arms, race: 1 lands) */
	fp.q[1].arrive_on_enable = 1;
	EXPECT_EQ(napi_poll_once(ctx), 6);
	/* round 3: q0 0 (short #2: arms), q1 1 (short #1) */
	EXPECT_EQ(napi_poll_once(ctx), 1);
	/* round 4: q1 0 (short #2: arms) -> all armed, sleep, nothing */
	EXPECT_EQ(napi_poll_once(ctx), 0);
	/* round 5: nothing polled; 4 arrive on q0 -> wakeup */
	fake_arrive(&fp, 0, 4);
	EXPECT_EQ(napi_poll_once(ctx), 0);
	/* round 6: q0 4 (short #1) */
	EXPECT_EQ(napi_poll_once(ctx), 4);
	/* round 7: q0 0 (short #2: arms) -> sleep */
	EXPECT_EQ(napi_poll_once(ctx), 0);

	napi_stats_get(ctx, &ls, NULL, 0);
	q0 = qstats(ctx, 0);
	q1 = qstats(ctx, 1);
	EXPECT_EQ(expect_qstats(&q0, &(const struct napi_queue_stats){
		.polls = 5, .empty_polls = 2, .full_polls = 1, .packets = 74, .arms = 2,
		.wakeups = 1, .wakeup_packets = 4, .armed = true }), 0);
	EXPECT_EQ(expect_qstats(&q1, &(const struct napi_queue_stats){
		.polls = 4, .empty_polls = 2, .packets = 4, .arms = 2, .races = 1,
		.race_disarms = 1, .armed = true }), 0);
	EXPECT_EQ(ls.rounds, 7);
	EXPECT_EQ(ls.polls, 9);
	EXPECT_EQ(ls.empty_polls, 4);
	EXPECT_EQ(ls.packets, 78);
	EXPECT_EQ(ls.arms, 4);
	EXPECT_EQ(ls.races, 1);
	EXPECT_EQ(ls.sleeps, 3);
	EXPECT_EQ(ls.sleep_timeouts, 2);
	EXPECT_EQ(ls.wakeups, 1);
	EXPECT_EQ(ls.wakeup_packets, 4);
	EXPECT_EQ(ls.sleep_cycles, 3 * (1000 + 1));
	EXPECT_EQ(ls.nb_queues, 2);
	EXPECT_EQ(ls.tsc_hz, 1000000);
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

/* Rounds until the entry arms (at most max); the count of empty rounds polled. */
static int
rounds_to_arm(struct napi_ctx *ctx, unsigned int q, int max)
{
	unsigned int before = fp.q[q].enables;
	int i;

	for (i = 1; i <= max; i++) {
		napi_poll_once(ctx);
		if (fp.q[q].enables != before && fp.q[q].armed)
			return i;
	}
	return -1;
}

/*
 * Hybrid with adaptive_idle (the default): after a long sleep the entry arms
 * at its first empty round; a short sleep, a race at arming or a full round
 * bring the idle polls back. With adaptive_idle off, idle polls every time.
 */
static int
test_hybrid_adaptive_idle(const void *arg __rte_unused)
{
	struct napi_ctx *ctx = setup(1, NAPI_MODE_HYBRID, 5, 0, true);
	struct napi_ctx_conf conf;
	int ret = -1;

	CHECK(ctx != NULL);
	fp.clock = 100;
	CHECK_EQ(rounds_to_arm(ctx, 0, 10), 5);          /* idle polls at first */
	/* a long sleep (1000 us): one packet, then armed at the first empty round */
	fp.clock = 1100;
	fake_arrive(&fp, 0, 1);
	CHECK_EQ(napi_poll_once(ctx), 0);                /* woken */
	CHECK_EQ(napi_poll_once(ctx), 1);                /* the packet: short, no arm */
	CHECK(!fp.q[0].armed);
	CHECK_EQ(rounds_to_arm(ctx, 0, 10), 1);
	CHECK_EQ(qstats(ctx, 0).quick_arms, 1);
	/* a short sleep (5 us < NAPI_SHORT_SLEEP_US): idle polls again */
	fp.clock += 5;
	fake_arrive(&fp, 0, 1);
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK_EQ(napi_poll_once(ctx), 1);
	CHECK_EQ(rounds_to_arm(ctx, 0, 10), 4);          /* 5 short rounds in all */
	CHECK_EQ(qstats(ctx, 0).quick_arms, 1);
	/* long sleep, then a race at the quick arm: idle polls again */
	fp.clock += 5000;
	fake_arrive(&fp, 0, 1);
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK_EQ(napi_poll_once(ctx), 1);
	fp.q[0].arrive_on_enable = 1;
	CHECK_EQ(napi_poll_once(ctx), 0);                /* quick arm, race */
	CHECK_EQ(qstats(ctx, 0).races, 1);
	CHECK_EQ(qstats(ctx, 0).quick_arms, 2);
	CHECK_EQ(napi_poll_once(ctx), 1);                /* the raced packet */
	CHECK_EQ(rounds_to_arm(ctx, 0, 10), 4);
	/* long sleep, then a full round: idle polls again */
	fp.clock += 5000;
	fake_arrive(&fp, 0, 64);
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK_EQ(napi_poll_once(ctx), 64);
	CHECK_EQ(rounds_to_arm(ctx, 0, 10), 5);
	CHECK_EQ(qstats(ctx, 0).quick_arms, 2);

	/* adaptive_idle off: idle polls after a long sleep too */
	napi_ctx_free(ctx);
	fake_conf(&conf, 1);
	CHECK(conf.adaptive_idle);
	conf.idle_polls = 5;
	conf.adaptive_idle = false;
	ctx = create_with_queues(&conf, 1, NAPI_MODE_HYBRID);
	CHECK(ctx != NULL);
	fp.clock = 100;
	CHECK_EQ(rounds_to_arm(ctx, 0, 10), 5);
	fp.clock = 5100;
	fake_arrive(&fp, 0, 1);
	CHECK_EQ(napi_poll_once(ctx), 0);
	CHECK_EQ(napi_poll_once(ctx), 1);
	CHECK_EQ(rounds_to_arm(ctx, 0, 10), 4);
	CHECK_EQ(qstats(ctx, 0).quick_arms, 0);
	ret = 0;
teardown:
	napi_ctx_free(ctx);
	return ret;
}

static const struct unit_case tests[] = {
	CTX_CASE("budget exhaustion keeps polling",
		 test_budget_exhaustion_keeps_polling, .nb = 1, .mode = NAPI_MODE_INTERRUPT),
	{ "custom budget, add checks", test_budget_custom, NULL },
	CTX_CASE("hybrid: short rounds arm after N",
		 test_short_rounds_arm_after_n, .nb = 1, .mode = NAPI_MODE_HYBRID, .idle_polls = 5),
	CTX_CASE("hybrid: idle-us arms after T (fake clock)",
		 test_idle_us_arms_after_t, .nb = 1, .mode = NAPI_MODE_HYBRID, .idle_us = 100),
	CTX_CASE("hybrid: both thresholds must hold",
		 test_both_thresholds, .nb = 1, .mode = NAPI_MODE_HYBRID, .idle_polls = 3,
		 .idle_us = 50),
	CTX_CASE("race at arming (-EAGAIN) disarms, keeps polling",
		 test_race_eagain_disarms, .nb = 1, .mode = NAPI_MODE_INTERRUPT),
	CTX_CASE("race at arming (queue count) disarms, keeps polling",
		 test_race_queue_count_disarms, .nb = 1, .mode = NAPI_MODE_INTERRUPT),
	CTX_CASE("race with the rule off stays armed",
		 test_race_rule_off_stays_armed, .nb = 1, .mode = NAPI_MODE_INTERRUPT,
		 .keep_armed_on_race = true),
	CTX_CASE("race (-EAGAIN) with the rule off: port disarmed",
		 test_race_eagain_rule_off, .nb = 1, .mode = NAPI_MODE_INTERRUPT,
		 .keep_armed_on_race = true),
	CTX_CASE("no rx_queue_count: no re-check",
		 test_no_queue_count, .nb = 1, .mode = NAPI_MODE_INTERRUPT),
	CTX_CASE("all armed: sleeps",
		 test_all_armed_sleeps, .nb = 3, .mode = NAPI_MODE_INTERRUPT),
	{ "partially armed: does not sleep", test_partial_armed_no_sleep, NULL },
	CTX_CASE("wakeup disarms exactly the woken queues and polls them",
		 test_wakeup_disarms_woken_only, .nb = 3, .mode = NAPI_MODE_INTERRUPT),
	CTX_CASE("spurious wakeup counted",
		 test_spurious_wakeup, .nb = 2, .mode = NAPI_MODE_INTERRUPT),
	{ "housekeeping timeout and EINTR", test_sleep_timeout_and_eintr, NULL },
	{ "housekeeping timeout polls queues that may have lost a wakeup",
	  test_timeout_rescues_lost_wakeup, NULL },
	CTX_CASE("napi_stop wakes and stops",
		 test_stop, .nb = 1, .mode = NAPI_MODE_INTERRUPT),
	CTX_CASE("registration failure: polling only",
		 test_register_failure_polls, .nb = 2, .mode = NAPI_MODE_INTERRUPT),
	{ "free disarms and unregisters", test_free_unregisters, NULL },
	CTX_CASE("one context per lcore, tsc_hz needed",
		 test_duplicate_lcore, .nb = 1, .mode = NAPI_MODE_POLL),
	{ "tx back-pressure with bounded reclaim retries", test_tx_backpressure, NULL },
	{ "tx cleanup during rx polls, -ENOTSUP tolerated", test_tx_cleanup_during_rx, NULL },
	CTX_CASE("stats exact",
		 test_stats_exact, .nb = 2, .mode = NAPI_MODE_HYBRID, .idle_polls = 2),
	{ "mode names", test_modes_names, NULL },
	CTX_CASE("poll mode never arms",
		 test_poll_mode_never_arms, .nb = 1, .mode = NAPI_MODE_POLL),
	{ "timing histogram buckets", test_hist_buckets, NULL },
	CTX_CASE("per-wakeup timing histograms (fake clock)",
		 test_wakeup_timing_hist, .nb = 1, .mode = NAPI_MODE_INTERRUPT),
	{ "hybrid: idle polls only while they pay (adaptive_idle)", test_hybrid_adaptive_idle,
	  NULL },
};

int
main(int argc, char **argv)
{
	return unit_tap_main(argc, argv, tests, RTE_DIM(tests), NULL);
}
