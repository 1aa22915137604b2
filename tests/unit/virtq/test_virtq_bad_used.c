/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * lib/virtq unit tests, what a device may not report: malformed used entries, used idx and
 * len bounds, packed ring edges.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "virtq_harness.h"

enum bad_kind {
	BAD_ID_RANGE,
	BAD_ID_MIDDLE,     /* split: a descriptor inside a chain; packed: an id never given */
	BAD_ID_TWICE,      /* a head already returned */
	BAD_LEN,
	BAD_USED_JUMP,
};

/*
 * A malformed used entry among valid ones: the queue breaks at it, reports
 * the entries before it, counts one bad_used, and is inert afterwards; the
 * cookies can still be detached and the queue restarted.
 */
static int
t_bad_used(const struct test_cfg *cfg, enum bad_kind kind, const char *reason)
{
	struct harness h;
	struct fake_dev_chain a, b, c;
	struct virtq_sg sg = { .addr = t_seg_addr(9, 0), .len = 32 };
	void *cookies[8];
	uint32_t lens[8];
	bool seen[4] = { false, false, false, false };
	unsigned int ndetached = 0;
	uint16_t expect_taken = kind == BAD_USED_JUMP ? 0 : 1;
	uint64_t mon_expected, mon_mask;
	uint8_t mon_size;
	void *cookie;
	uint64_t kicks;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	CHECK_EQ(h_add_chain(&h, 1, 1, 1, 16), 0);
	CHECK_EQ(h_add_chain(&h, 2, 2, 1, 16), 0);
	CHECK_EQ(h_add_in(&h, 3), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &a), 0);
	CHECK_EQ(h_dev_pop(&h, &b), 0);
	CHECK_EQ(h_dev_pop(&h, &c), 0);

	CHECK_EQ(fake_dev_push(&h.dev, &a, 10), 0);
	switch (kind) {
	case BAD_ID_RANGE:
		fake_dev_inject_bad_id(&h.dev);
		break;
	case BAD_ID_MIDDLE:
		if (t_packed(cfg)) {
			uint16_t id = 0;

			while (id == a.id || id == b.id || id == c.id)
				id++;
			fake_dev_inject_non_head(&h.dev, id);
		} else {
			fake_dev_inject_non_head(&h.dev, b.desc_idx[1]);
		}
		break;
	case BAD_ID_TWICE:
		fake_dev_inject_non_head(&h.dev, a.id);
		break;
	case BAD_LEN:
		fake_dev_inject_len_too_large(&h.dev, &b);
		break;
	case BAD_USED_JUMP:
		CHECK_EQ(fake_dev_inject_used_jump(&h.dev), 0);
		break;
	}
	CHECK_EQ(fake_dev_push(&h.dev, &c, 4), 0);
	fake_dev_flush(&h.dev);

	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 8), expect_taken);
	if (expect_taken == 1) {
		CHECK(cookies[0] == COOKIE(1));
		CHECK_EQ(lens[0], 10);
	}
	CHECK(virtq_is_broken(h.vq));
	CHECK(virtq_broken_reason(h.vq) != NULL);
	CHECK(strcmp(virtq_broken_reason(h.vq), reason) == 0);
	/* A copy inside the queue's state, valid in any process mapping it. */
	CHECK((const uint8_t *)virtq_broken_reason(h.vq) >= (const uint8_t *)h.vq &&
	      (const uint8_t *)virtq_broken_reason(h.vq) <
	      (const uint8_t *)h.vq + virtq_state_size(&h.p));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK(virtq_monitor_addr(h.vq, &mon_expected, &mon_mask, &mon_size) == NULL);

	/* Inert from now on. */
	kicks = virtq_stats(h.vq)->kicks + virtq_stats(h.vq)->kicks_suppressed;
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 8), 0);
	CHECK_EQ(virtq_used_count(h.vq), 0);
	CHECK_EQ(virtq_add(h.vq, &sg, 0, 1, COOKIE(50)), -EIO);
	cookie = COOKIE(51);
	CHECK_EQ(virtq_add_inbufs(h.vq, &sg, &cookie, 1), 0);
	CHECK(!virtq_kick_prepare(h.vq));
	CHECK(!virtq_poll(h.vq, virtq_enable_intr_prepare(h.vq)));
	CHECK(!virtq_poll(h.vq, 0x12345));
	virtq_disable_intr(h.vq);
	virtq_mark_broken(h.vq, "second reason");
	CHECK(strcmp(virtq_broken_reason(h.vq), reason) == 0);
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK_EQ(virtq_stats(h.vq)->kicks + virtq_stats(h.vq)->kicks_suppressed, kicks);

	/* Every cookie not taken comes back exactly once. */
	while ((cookie = virtq_detach_unused(h.vq)) != NULL) {
		unsigned int id = COOKIE_ID(cookie);

		CHECK(id >= 1 && id <= 3);
		CHECK(!seen[id]);
		seen[id] = true;
		ndetached++;
	}
	CHECK_EQ(ndetached, 3u - expect_taken);
	CHECK_EQ(seen[1], expect_taken == 0);
	CHECK(seen[2] && seen[3]);
	CHECK_EQ(virtq_num_free(h.vq), 8);

	/* Restart: clean state, round trips work. */
	CHECK_EQ(h_restart(&h, (uint16_t)(h.start + 0x100)), 0);
	CHECK(!virtq_is_broken(h.vq));
	CHECK(virtq_broken_reason(h.vq) == NULL);
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 0);
	CHECK(h_round_trip(&h, 8) >= 0);
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(h.start + 0x108));
	ret = 0;
teardown:
	return h_end(&h, ret);
}

static int
t_bad_id_range(const struct test_cfg *cfg)
{
	return t_bad_used(cfg, BAD_ID_RANGE, "used id out of range");
}

static const char *
t_not_outstanding(const struct test_cfg *cfg)
{
	return t_packed(cfg) ? "used id is not an outstanding buffer" :
		"used id is not an outstanding head";
}

static int
t_bad_id_middle(const struct test_cfg *cfg)
{
	return t_bad_used(cfg, BAD_ID_MIDDLE, t_not_outstanding(cfg));
}

static int
t_bad_id_twice(const struct test_cfg *cfg)
{
	return t_bad_used(cfg, BAD_ID_TWICE, t_not_outstanding(cfg));
}

static int
t_bad_len(const struct test_cfg *cfg)
{
	return t_bad_used(cfg, BAD_LEN, "used len exceeds the writable length");
}

static int
t_bad_used_jump(const struct test_cfg *cfg)
{
	return t_bad_used(cfg, BAD_USED_JUMP, "used idx moved more than num past the last used");
}

/* used_count() sees a jump too, and breaks the queue the same way. */
static int
t_bad_used_jump_count(struct harness *h, const struct test_cfg *cfg)
{
	EXPECT_EQ(h_add_in(h, 1), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_complete_all(h), 1);
	EXPECT_EQ(virtq_used_count(h->vq), 1);
	EXPECT_EQ(h_drain(h), 1);
	EXPECT_EQ(h_add_in(h, 2), 0);
	/* Exactly num + 1 past the last used: one too many. */
	fake_dev_inject_used_jump(&h->dev);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_used_count(h->vq), 0);
	EXPECT_EQ(h_check_broken(h, "used idx moved more than num past the last used"), 0);
	EXPECT(virtq_detach_unused(h->vq) == COOKIE(2));
	EXPECT(virtq_detach_unused(h->vq) == NULL);
	return 0;
}

/*
 * Boundaries of the used idx check: a full ring (num completions pending) is
 * valid; num + 1 past the last used breaks get_used, and so does a used idx
 * that moves backwards.
 */
static int
t_used_idx_bounds(struct harness *h, const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	void *cookies[NUM];
	uint32_t lens[NUM];
	unsigned int i;

	EXPECT_EQ(h->p.num, NUM);   /* NUM is the table row's .num */
	for (i = 0; i < NUM; i++)
		EXPECT_EQ(h_add_in(h, i + 1), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_complete_all(h), NUM);
	EXPECT_EQ(virtq_used_count(h->vq), NUM);
	EXPECT_EQ(virtq_get_used(h->vq, cookies, lens, NUM), NUM);
	for (i = 0; i < NUM; i++) {
		EXPECT(cookies[i] == COOKIE(i + 1));
		EXPECT_EQ(lens[i], T_SEG_SIZE);
	}
	EXPECT(!virtq_is_broken(h->vq));
	EXPECT_EQ(h_add_in(h, 20), 0);
	h_kick(h);
	fake_dev_inject_used_jump(&h->dev);          /* exactly num + 1 */
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_get_used(h->vq, cookies, lens, NUM), 0);
	EXPECT_EQ(h_check_broken(h, "used idx moved more than num past the last used"), 0);

	/* Backwards by one: modulo 2^16 that is 0xFFFF ahead. */
	EXPECT_EQ(h_restart(h, h->start), 0);
	EXPECT_EQ(h_add_in(h, 30), 0);
	h_kick(h);
	__atomic_store_n(&((struct virtq_used *)virtq_device_area(h->vq))->idx,
			 (uint16_t)(h->start - 1), __ATOMIC_RELEASE);
	EXPECT_EQ(virtq_get_used(h->vq, cookies, lens, NUM), 0);
	EXPECT_EQ(h_check_broken(h, "used idx moved more than num past the last used"), 0);
	EXPECT(virtq_detach_unused(h->vq) == COOKIE(30));
	return 0;
}

/* len == writable length is fine; a chain with nothing writable reports 0. */
static int
t_used_len_bounds(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain a, b;
	void *cookies[2];
	uint32_t lens[2];

	EXPECT_EQ(h_add_chain(h, 1, 1, 2, 20), 0);
	EXPECT_EQ(h_add_chain(h, 2, 3, 0, 20), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &a), 0);
	EXPECT_EQ(h_dev_pop(h, &b), 0);
	EXPECT_EQ(a.in_len, 40);
	EXPECT_EQ(b.in_len, 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &a, 40), 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &b, 0xFFFFFFFFu), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_get_used(h->vq, cookies, lens, 2), 2);
	EXPECT(cookies[0] == COOKIE(1) && cookies[1] == COOKIE(2));
	EXPECT_EQ(lens[0], 40);
	EXPECT_EQ(lens[1], 0);
	EXPECT(!virtq_is_broken(h->vq));
	EXPECT_EQ(virtq_num_free(h->vq), 8);
	return 0;
}

/*
 * Packed: a used descriptor where none was expected (nothing published in
 * flight), seen by get_used and by used_count; a used id that was added but
 * not published.
 */
static int
t_packed_unexpected(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain c;
	void *cookies[4];
	void *cookie;
	bool seen[3] = { false, false, false };

	EXPECT_EQ(h_round_trip(h, 3), 0);
	fake_dev_push_raw(&h->dev, 0, 0);            /* nothing is in flight */
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_get_used(h->vq, cookies, NULL, 4), 0);
	EXPECT_EQ(h_check_broken(h, "used descriptor where none was expected"), 0);
	EXPECT(virtq_detach_unused(h->vq) == NULL);

	/* The same through used_count, with an unpublished buffer added. */
	EXPECT_EQ(h_restart(h, h->start), 0);
	EXPECT_EQ(h_round_trip(h, 2), 0);
	EXPECT_EQ(h_add_in(h, 1), 0);
	fake_dev_push_raw(&h->dev, 0, 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_used_count(h->vq), 0);
	EXPECT_EQ(h_check_broken(h, "used descriptor where none was expected"), 0);
	EXPECT(virtq_detach_unused(h->vq) == COOKIE(1));
	EXPECT(virtq_detach_unused(h->vq) == NULL);

	/* One published, one not: the device returns the unpublished id. */
	EXPECT_EQ(h_restart(h, h->start), 0);
	EXPECT_EQ(h_add_in(h, 1), 0);
	h_kick(h);
	EXPECT_EQ(h_add_in(h, 2), 0);               /* id 1, not published */
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	EXPECT_EQ(c.id, 0);
	EXPECT_EQ(fake_dev_pop(&h->dev, &c), 0);      /* invisible to the device */
	fake_dev_push_raw(&h->dev, 1, 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_get_used(h->vq, cookies, NULL, 4), 0);
	EXPECT(virtq_is_broken(h->vq));
	EXPECT(strcmp(virtq_broken_reason(h->vq), "used id is not an outstanding buffer") == 0);
	while ((cookie = virtq_detach_unused(h->vq)) != NULL) {
		EXPECT(COOKIE_ID(cookie) >= 1 && COOKIE_ID(cookie) <= 2);
		EXPECT(!seen[COOKIE_ID(cookie)]);
		seen[COOKIE_ID(cookie)] = true;
	}
	EXPECT(seen[1] && seen[2]);
	EXPECT_EQ(virtq_num_free(h->vq), 8);
	return 0;
}

/*
 * Packed ring edges: one chain of num descriptors (the device writes one used
 * descriptor, the driver skips num slots, the wrap counter flips once);
 * num single buffers pending at once; a chain whose descriptors straddle the
 * end of the ring (the device checks each descriptor's wrap bits).
 */
static int
t_packed_ring_edges(struct harness *h, const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	struct fake_dev_chain c;
	void *cookies[NUM];
	uint32_t lens[NUM];
	uint16_t base, k, i;

	EXPECT_EQ(h->p.num, NUM);   /* NUM is the table row's .num */
	base = h->start;
	EXPECT_EQ(h_add_chain(h, 1, 4, 4, 8), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	EXPECT_EQ(c.ndescs, NUM);
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 32), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_used_count(h->vq), 1);
	EXPECT_EQ(h_take_one(h, 1, 32), 0);
	EXPECT_EQ(virtq_last_used_idx(h->vq), (uint16_t)(base + NUM));
	EXPECT_EQ(virtq_num_free(h->vq), NUM);
	EXPECT_EQ(fake_dev_vring_base(&h->dev), h_pos_enc(h, (uint16_t)(base + NUM)));
	EXPECT(h_wrap(h, base) != h_wrap(h, (uint16_t)(base + NUM)));

	/* num single buffers completed at once. */
	for (i = 0; i < NUM; i++)
		EXPECT_EQ(h_add_in(h, 10 + i), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_complete_all(h), NUM);
	EXPECT_EQ(virtq_used_count(h->vq), NUM);
	EXPECT_EQ(virtq_get_used(h->vq, cookies, lens, NUM), NUM);
	for (i = 0; i < NUM; i++)
		EXPECT(cookies[i] == COOKIE(10 + i));

	/* Move to the last slot, then a 3-descriptor chain across the end. */
	k = (uint16_t)(NUM - 1 - (virtq_avail_idx(h->vq) & (NUM - 1)));
	if (k > 0)
		EXPECT_EQ(h_round_trip(h, k), 0);
	EXPECT_EQ(virtq_avail_idx(h->vq) & (NUM - 1), NUM - 1);
	EXPECT_EQ(h_add_chain(h, 20, 1, 2, 16), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	EXPECT_EQ(c.ndescs, 3);
	EXPECT_EQ(c.desc_idx[0], NUM - 1);
	EXPECT_EQ(c.desc_idx[1], 0);
	EXPECT_EQ(c.desc_idx[2], 1);
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 20), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(h_take_one(h, 20, 20), 0);
	EXPECT_EQ(virtq_last_used_idx(h->vq), virtq_avail_idx(h->vq));
	EXPECT_EQ(virtq_avail_idx(h->vq) & (NUM - 1), 2);
	EXPECT_EQ(fake_dev_vring_base(&h->dev), h_pos_enc(h, virtq_avail_idx(h->vq)));
	return 0;
}

static const struct test_case cases[] = {
	{ "bad used: id out of range", t_bad_id_range, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "bad used: id not outstanding", t_bad_id_middle, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "bad used: id returned twice", t_bad_id_twice, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "bad used: len too large", t_bad_len, RUN_ALL, ON_BOTH },
	{ "bad used: used idx jump", t_bad_used_jump, RUN_ALL, ON_SPLIT , ORDER_ANY },
	{ "bad used: used idx jump seen by used_count", NULL, RUN_ALL, ON_SPLIT, ORDER_ANY,
	  .h = { t_bad_used_jump_count, 8, 0, H_END } },
	{ "bad used: used descriptor where none expected", NULL, RUN_ALL, ON_PACKED,
	  .h = { t_packed_unexpected, 8, 0, H_END_CLEAN } },
	{ "used idx bounds", NULL, RUN_ALL, ON_SPLIT, ORDER_ANY,
	  .h = { t_used_idx_bounds, 8, 0, H_END } },
	{ "packed ring edges", NULL, RUN_ALL, ON_PACKED,
	  .h = { t_packed_ring_edges, 8, 0, H_END_HEALTHY } },
	{ "used len bounds", NULL, RUN_ALL, ON_BOTH, .h = { t_used_len_bounds, 8, 0, H_END } },
};

const struct test_section test_section_bad_used = { cases, RTE_DIM(cases) };
