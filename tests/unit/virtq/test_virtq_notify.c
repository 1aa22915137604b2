/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * lib/virtq unit tests, notifications: kick and interrupt suppression, arming and its race,
 * the power-monitor address.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "virtq_harness.h"

/* Kick suppression, flag mode: exact counts for a scripted sequence. */
static int
t_kick_no_notify(struct harness *h, const struct test_cfg *cfg)
{
	const struct virtq_stats *st;

	st = virtq_stats(h->vq);
	EXPECT(!h_kick(h));                        /* nothing added: nothing counted */
	EXPECT_EQ(st->kicks + st->kicks_suppressed, 0);
	EXPECT_EQ(h_add_in(h, 1), 0);
	EXPECT(h_kick(h));
	EXPECT_EQ(st->kicks, 1);
	EXPECT_EQ(st->kicks_suppressed, 0);
	EXPECT(!h_kick(h));
	EXPECT_EQ(st->kicks, 1);
	EXPECT_EQ(st->kicks_suppressed, 0);
	fake_dev_set_no_notify(&h->dev, true);
	EXPECT_EQ(h_add_in(h, 2), 0);
	EXPECT_EQ(h_add_chain(h, 3, 1, 1, 10), 0);
	EXPECT(!h_kick(h));
	EXPECT_EQ(st->kicks, 1);
	EXPECT_EQ(st->kicks_suppressed, 1);
	EXPECT_EQ(h_add_in(h, 4), 0);
	EXPECT(!h_kick(h));
	EXPECT_EQ(st->kicks_suppressed, 2);
	fake_dev_set_no_notify(&h->dev, false);
	EXPECT_EQ(h_add_in(h, 5), 0);
	EXPECT(h_kick(h));
	EXPECT(!h_kick(h));
	EXPECT_EQ(st->kicks, 2);
	EXPECT_EQ(st->kicks_suppressed, 2);
	EXPECT_EQ(h->dev.kicks, 2);
	/* Five chains, six descriptors. */
	EXPECT_EQ(virtq_avail_idx(h->vq), (uint16_t)(h->start + (t_packed(cfg) ? 6 : 5)));
	if (!t_packed(cfg))
		EXPECT_EQ(((struct virtq_avail *)virtq_driver_area(h->vq))->idx,
			 (uint16_t)(h->start + 5));
	EXPECT_EQ(h_complete_drain(h, 5), 0);
	return 0;
}

/*
 * Kick suppression, event idx: exact counts for a scripted sequence that
 * crosses index 0 (split, start 0xFFF0) or a wrap counter flip (packed, near
 * wrap starts). Positions are taken from virtq_avail_idx(), so a two-slot
 * packed chain shifts them by one.
 */
static int
t_kick_avail_event(struct harness *h, const struct test_cfg *cfg)
{
	const struct virtq_stats *st;
	uint64_t k0, s0, d0;
	uint16_t b, p;
	unsigned int i;

	st = virtq_stats(h->vq);
	/* Prime: 13 round trips, the device asking for every kick. */
	for (i = 0; i < 13; i++) {
		fake_dev_set_avail_event(&h->dev, h->dev.last_avail);
		EXPECT_EQ(h_add_in(h, i + 1), 0);
		EXPECT(h_kick(h));
		EXPECT_EQ(h_complete_drain(h, 1), 0);
	}
	EXPECT_EQ(st->kicks, 13);
	EXPECT_EQ(st->kicks_suppressed, 0);
	b = (uint16_t)(h->start + 13);
	EXPECT_EQ(virtq_avail_idx(h->vq), b);
	k0 = st->kicks;
	s0 = st->kicks_suppressed;
	d0 = h->dev.kicks;

	fake_dev_set_avail_event(&h->dev, b);
	EXPECT_EQ(h_add_in(h, 101), 0);
	EXPECT(h_kick(h));                          /* b in [b, b+1) */
	EXPECT_EQ(h_add_in(h, 102), 0);
	EXPECT(!h_kick(h));                         /* b not in [b+1, b+2) */
	EXPECT_EQ(fake_dev_avail_count(&h->dev), 2);
	EXPECT_EQ(h_complete_drain(h, 2), 0);
	fake_dev_set_avail_event(&h->dev, (uint16_t)(b + 2));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(h_add_in(h, 103 + i), 0);
	EXPECT(h_kick(h));                          /* b+2 in [b+2, b+5) */
	fake_dev_set_avail_event(&h->dev, (uint16_t)(b + 10));
	EXPECT_EQ(h_add_chain(h, 106, 1, 1, 8), 0);
	p = virtq_avail_idx(h->vq);                  /* b+6 split, b+7 packed */
	EXPECT(!h_kick(h));                         /* [b+5, p) */
	for (i = 0; i < 6; i++)
		EXPECT_EQ(h_add_in(h, 107 + i), 0);
	EXPECT(h_kick(h));                          /* b+10 in [p, p+6) */
	EXPECT(!h_kick(h));                         /* nothing new: not counted */
	fake_dev_set_avail_event(&h->dev, (uint16_t)(b + 1));
	EXPECT_EQ(h_add_in(h, 113), 0);
	EXPECT(!h_kick(h));                         /* event far behind */
	p = virtq_avail_idx(h->vq);
	fake_dev_set_avail_event(&h->dev, (uint16_t)(p + 1));
	EXPECT_EQ(h_add_in(h, 114), 0);
	EXPECT(!h_kick(h));                         /* event == new: not yet */
	EXPECT_EQ(h_add_in(h, 115), 0);
	EXPECT(h_kick(h));                          /* p+1 in [p+1, p+2) */
	EXPECT_EQ(st->kicks - k0, 4);
	EXPECT_EQ(st->kicks_suppressed - s0, 4);
	EXPECT_EQ(h->dev.kicks - d0, 4);
	EXPECT_EQ(h_complete_drain(h, 13), 0);
	return 0;
}

/* What the driver publishes to suppress interrupts (split: used_event or
 * the avail flags; packed: the driver event area).
 */
static uint32_t
h_intr_word(const struct harness *h)
{
	if (h->p.layout == VIRTQ_LAYOUT_PACKED) {
		const struct virtq_packed_event *e = virtq_driver_area(h->vq);

		return (uint32_t)e->flags << 16 | e->off_wrap;
	}
	if (h->p.event_idx)
		return *virtq_used_event(virtq_driver_area(h->vq), h->p.num);
	return ((struct virtq_avail *)virtq_driver_area(h->vq))->flags;
}

/*
 * Interrupt suppression: no calls while disarmed, even after more than 2^16
 * completions (many wrap counter flips) with event idx; exactly one call
 * after arming when the device completes.
 */
static int
t_intr_suppression(struct harness *h, const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	uint32_t word, changes = 0;
	uint16_t i;
	uint32_t opaque;
	uint32_t rounds;

	EXPECT_EQ(h->p.num, NUM);   /* NUM is the table row's .num */
	word = h_intr_word(h);
	for (rounds = 0; rounds < 70000 / NUM; rounds++) {
		uint32_t wd;

		EXPECT_EQ(h_round_trip(h, NUM), 0);
		wd = h_intr_word(h);
		if (t_packed(cfg)) {
			EXPECT_EQ(wd >> 16, VIRTQ_EVENT_F_DISABLE);
		} else if (cfg->event_idx) {
			uint16_t dist = (uint16_t)(virtq_last_used_idx(h->vq) - wd);

			/* Out of reach: behind the last used, at most 2^15 back. */
			EXPECT(dist >= 1 && dist <= 0x8000);
		}
		if (wd != word)
			changes++;
		word = wd;
	}
	EXPECT_EQ(h->dev.calls, 0);
	EXPECT_EQ(h->dev.call_checks, rounds);
	/* Split event idx: rewritten only at 2^15 and 2^16 completions.
	 * Packed: DISABLE is never rewritten.
	 */
	EXPECT_EQ(changes, cfg->event_idx && !t_packed(cfg) ? 2 : 0);
	EXPECT_EQ(virtq_last_used_idx(h->vq), (uint16_t)(h->start + rounds * NUM));
	EXPECT_EQ(virtq_stats(h->vq)->intr_arms, 0);

	/* Arm, the device completes 3 buffers in one go: one call. */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(h_add_in(h, i + 1), 0);
	h_kick(h);
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT_EQ(opaque, h_opaque(h, virtq_last_used_idx(h->vq)));
	if (t_packed(cfg))
		EXPECT_EQ(h_intr_word(h), cfg->event_idx ?
			 (uint32_t)VIRTQ_EVENT_F_DESC << 16 | opaque :
			 (uint32_t)VIRTQ_EVENT_F_ENABLE << 16);
	EXPECT(virtq_intr_enabled(h->vq));
	EXPECT(!virtq_poll(h->vq, opaque));
	EXPECT_EQ(virtq_stats(h->vq)->intr_arms, 1);
	EXPECT_EQ(h_dev_complete_all(h), 3);
	EXPECT_EQ(h->dev.calls, 1);
	EXPECT(virtq_poll(h->vq, opaque));
	/* The device completes one more before the driver reacts: event idx
	 * already fired for this arming; flag mode calls again.
	 */
	EXPECT_EQ(h_add_in(h, 4), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_complete_all(h), 1);
	EXPECT_EQ(h->dev.calls, cfg->event_idx ? 1 : 2);
	virtq_disable_intr(h->vq);
	EXPECT(!virtq_intr_enabled(h->vq));
	EXPECT_EQ(h_drain(h), 4);
	/* Disarmed again: nothing. */
	EXPECT_EQ(h_round_trip(h, 5), 0);
	EXPECT_EQ(h->dev.calls, cfg->event_idx ? 1 : 2);
	/* Re-arm with everything taken: exactly one call for the next batch. */
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(!virtq_poll(h->vq, opaque));
	EXPECT_EQ(h_round_trip(h, 2), 1);
	EXPECT_EQ(virtq_stats(h->vq)->intr_arms, 2);
	return 0;
}

/* The re-arm race: a completion between enable_intr_prepare and poll. */
static int
t_rearm_race(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain c[3];
	void *cookie;
	uint32_t opaque;

	EXPECT_EQ(h_add_in(h, 1), 0);
	EXPECT_EQ(h_add_in(h, 2), 0);
	EXPECT_EQ(h_add_in(h, 3), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c[0]), 0);
	EXPECT_EQ(h_dev_pop(h, &c[1]), 0);
	EXPECT_EQ(h_dev_pop(h, &c[2]), 0);

	/* Nothing pending: arm, poll says no work. */
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(!virtq_poll(h->vq, opaque));
	virtq_disable_intr(h->vq);

	/* Completion lands between prepare and poll. */
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT_EQ(fake_dev_push(&h->dev, &c[0], 5), 0);
	EXPECT(fake_dev_flush(&h->dev));              /* armed: the device calls */
	EXPECT(virtq_poll(h->vq, opaque));
	virtq_disable_intr(h->vq);
	EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);
	EXPECT(cookie == COOKIE(1));

	/* Completion before prepare, while disarmed (no call): prepare must
	 * still let poll see it, though no call will ever come for it.
	 */
	EXPECT_EQ(fake_dev_push(&h->dev, &c[1], 5), 0);
	EXPECT(!fake_dev_flush(&h->dev));
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(virtq_poll(h->vq, opaque));
	virtq_disable_intr(h->vq);
	EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);
	EXPECT(cookie == COOKIE(2));

	/* Armed and idle; then the device completes: one call, poll true. */
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(!virtq_poll(h->vq, opaque));
	EXPECT_EQ(fake_dev_push(&h->dev, &c[2], 5), 0);
	EXPECT(fake_dev_flush(&h->dev));
	EXPECT(virtq_poll(h->vq, opaque));
	EXPECT_EQ(h->dev.calls, 2);
	return 0;
}

/* The device's flush stopping between publication and its read of the event area. */
static void
t_between_keep(void *arg)
{
	virtq_disarm_keep_event(arg);
}

static void
t_between_disable(void *arg)
{
	virtq_disable_intr(arg);
}

/*
 * A disarm between the device's publication and its read of the event
 * area: virtq_disable_intr() withdraws the event (no call: a device may
 * rightly send none), virtq_disarm_keep_event() leaves it (the call is
 * owed and sent), and only that one: after virtq_disable_intr() nothing
 * more, in every mode, with laps enough for a packed event to come round.
 */
static int
t_disarm_keep_event(struct harness *h, const struct test_cfg *cfg __rte_unused)
{
	struct fake_dev_chain c;
	void *cookie;
	uint32_t opaque;
	unsigned int i;

	/* Withdrawn: the device reads DISABLE / a used_event behind it. */
	EXPECT_EQ(h_add_in(h, 1), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(!virtq_poll(h->vq, opaque));
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 5), 0);
	h->dev.between = t_between_disable;
	h->dev.between_arg = h->vq;
	EXPECT(!fake_dev_flush(&h->dev));
	EXPECT(!virtq_intr_enabled(h->vq));
	EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);

	/* Kept: the device still sees the queue armed and calls. */
	EXPECT_EQ(h_add_in(h, 2), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(!virtq_poll(h->vq, opaque));
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 5), 0);
	h->dev.between = t_between_keep;
	EXPECT(fake_dev_flush(&h->dev));
	h->dev.between = NULL;
	EXPECT(!virtq_intr_enabled(h->vq));
	EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);
	EXPECT(cookie == COOKIE(2));
	EXPECT_EQ(h->dev.calls, 1);

	/* The call read, the caller withdraws the event: no call for the
	 * next three laps of the ring. */
	virtq_disable_intr(h->vq);
	for (i = 0; i < 3u * h->p.num; i++) {
		EXPECT_EQ(h_add_in(h, 3), 0);
		h_kick(h);
		EXPECT_EQ(h_dev_pop(h, &c), 0);
		EXPECT_EQ(fake_dev_push(&h->dev, &c, 5), 0);
		EXPECT(!fake_dev_flush(&h->dev));
		EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);
	}
	EXPECT_EQ(h->dev.calls, 1);

	/* Kept and never withdrawn: the next arm replaces the event. */
	EXPECT_EQ(h_add_in(h, 4), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(!virtq_poll(h->vq, opaque));
	virtq_disarm_keep_event(h->vq);
	EXPECT(!virtq_intr_enabled(h->vq));
	opaque = virtq_enable_intr_prepare(h->vq);
	EXPECT(virtq_intr_enabled(h->vq));
	EXPECT(!virtq_poll(h->vq, opaque));
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 5), 0);
	EXPECT(fake_dev_flush(&h->dev));
	EXPECT(virtq_poll(h->vq, opaque));
	virtq_disable_intr(h->vq);
	EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);
	EXPECT(cookie == COOKIE(4));
	EXPECT_EQ(h->dev.calls, 2);
	return 0;
}

/* Arming an armed queue, disarming a disarmed one: no shared-memory write. */
static int
t_arm_idempotent(const struct test_cfg *cfg)
{
	struct harness h;
	uint8_t *snap = NULL;
	uint32_t o1, o2;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	snap = malloc(h.ring_size);
	CHECK(snap != NULL);
	memcpy(snap, h.ring, h.ring_size);
	virtq_disable_intr(h.vq);                    /* already suppressed by init */
	CHECK(memcmp(snap, h.ring, h.ring_size) == 0);

	o1 = virtq_enable_intr_prepare(h.vq);
	CHECK(memcmp(snap, h.ring, h.ring_size) != 0);
	CHECK_EQ(virtq_stats(h.vq)->intr_arms, 1);
	memcpy(snap, h.ring, h.ring_size);
	o2 = virtq_enable_intr_prepare(h.vq);
	CHECK_EQ(o1, o2);
	CHECK(memcmp(snap, h.ring, h.ring_size) == 0);
	CHECK_EQ(virtq_stats(h.vq)->intr_arms, 1);
	CHECK(!virtq_poll(h.vq, o2));
	CHECK(memcmp(snap, h.ring, h.ring_size) == 0);

	virtq_disable_intr(h.vq);
	CHECK(memcmp(snap, h.ring, h.ring_size) != 0);
	memcpy(snap, h.ring, h.ring_size);
	virtq_disable_intr(h.vq);
	CHECK(memcmp(snap, h.ring, h.ring_size) == 0);

	/* Work moves last_used: re-arming writes again (event idx: a new
	 * used_event; flags: the flag is cleared again).
	 */
	CHECK_EQ(h_round_trip(&h, 3), 0);
	memcpy(snap, h.ring, h.ring_size);
	virtq_disable_intr(h.vq);                    /* disarmed, last_used moved */
	CHECK(memcmp(snap, h.ring, h.ring_size) == 0);
	o1 = virtq_enable_intr_prepare(h.vq);
	CHECK_EQ(o1, h_opaque(&h, (uint16_t)(h.start + 3)));
	CHECK(memcmp(snap, h.ring, h.ring_size) != 0);
	CHECK_EQ(virtq_stats(h.vq)->intr_arms, 2);
	memcpy(snap, h.ring, h.ring_size);
	CHECK_EQ(virtq_enable_intr_prepare(h.vq), o1);
	CHECK(memcmp(snap, h.ring, h.ring_size) == 0);
	CHECK_EQ(virtq_stats(h.vq)->intr_arms, 2);
	ret = 0;
teardown:
	free(snap);
	h_teardown(&h);
	return ret;
}

/*
 * virtq_monitor_addr: the condition holds (sleep) while nothing completed,
 * fails as soon as the device completes, holds again once everything is
 * taken; NULL on a broken queue.
 */
static int
t_monitor_addr(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain c[3];
	volatile void *addr;
	uint64_t expected, mask;
	uint8_t size;
	void *cookie;
	unsigned int i;

	/* Idle, nothing posted. */
	addr = virtq_monitor_addr(h->vq, &expected, &mask, &size);
	EXPECT(addr != NULL);
	EXPECT_EQ(size, 2);
	if (t_packed(cfg)) {
		const struct virtq_packed_desc *d = virtq_desc_area(h->vq);

		EXPECT(addr == &d[h->start & 7].flags);
		EXPECT_EQ(mask, VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED);
	} else {
		EXPECT(addr == &((struct virtq_used *)virtq_device_area(h->vq))->idx);
		EXPECT_EQ(mask, 0xFFFF);
		EXPECT_EQ(expected, h->start);
	}
	EXPECT(h_monitor_sleeps(addr, expected, mask, size));
	EXPECT(virtq_monitor_addr(h->vq, NULL, &mask, &size) == NULL);

	for (i = 0; i < 3; i++)
		EXPECT_EQ(h_add_in(h, i + 1), 0);
	h_kick(h);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(h_dev_pop(h, &c[i]), 0);
	addr = virtq_monitor_addr(h->vq, &expected, &mask, &size);
	EXPECT(h_monitor_sleeps(addr, expected, mask, size));
	/* Out of order: the device completes the second buffer first. */
	EXPECT_EQ(fake_dev_push(&h->dev, &c[1], 4), 0);
	EXPECT(h_monitor_sleeps(addr, expected, mask, size));   /* not flushed */
	fake_dev_flush(&h->dev);
	EXPECT(!h_monitor_sleeps(addr, expected, mask, size));
	/* Asked again with the completion already there: no sleep. */
	addr = virtq_monitor_addr(h->vq, &expected, &mask, &size);
	EXPECT(!h_monitor_sleeps(addr, expected, mask, size));
	EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);
	EXPECT(cookie == COOKIE(2));
	addr = virtq_monitor_addr(h->vq, &expected, &mask, &size);
	EXPECT(h_monitor_sleeps(addr, expected, mask, size));
	EXPECT_EQ(fake_dev_push(&h->dev, &c[0], 4), 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &c[2], 4), 0);
	fake_dev_flush(&h->dev);
	EXPECT(!h_monitor_sleeps(addr, expected, mask, size));
	EXPECT_EQ(h_drain(h), 2);
	addr = virtq_monitor_addr(h->vq, &expected, &mask, &size);
	EXPECT(h_monitor_sleeps(addr, expected, mask, size));

	virtq_mark_broken(h->vq, "test");
	EXPECT(virtq_monitor_addr(h->vq, &expected, &mask, &size) == NULL);
	return 0;
}

static const struct test_case cases[] = {
	{ "kick suppression NO_NOTIFY", NULL, RUN_FLAGS, ON_BOTH,
	  .h = { t_kick_no_notify, 16, 0, H_END } },
	{ "kick suppression avail_event", NULL, RUN_EVENT_IDX, ON_BOTH,
	  .h = { t_kick_avail_event, 16, 0, H_END_CLEAN } },
	{ "interrupt suppression", NULL, RUN_ALL, ON_BOTH,
	  .h = { t_intr_suppression, 8, 0, H_END_CLEAN } },
	{ "re-arm race", NULL, RUN_ALL, ON_BOTH, .h = { t_rearm_race, 8, 0, H_END } },
	{ "disarm between publication and event read", NULL, RUN_ALL, ON_BOTH,
	  .h = { t_disarm_keep_event, 8, 0, H_END } },
	{ "arming an armed queue writes nothing", t_arm_idempotent, RUN_ALL, ON_BOTH },
	{ "monitor address", NULL, RUN_ALL, ON_BOTH, ORDER_ANY,
	  .h = { t_monitor_addr, 8, 0, H_END } },
};

const struct test_section test_section_notify = { cases, RTE_DIM(cases) };
