/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * lib/virtq unit tests, indirect descriptor tables.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "virtq_harness.h"

/* Buffers of the indirect cases: [chain][element][bytes]. */
#define T_IND_SEG 32
static uint8_t t_ind_mem[16][8][T_IND_SEG];

/* Where virtq puts table @p id: after the layout's areas, from a cache line. */
static const uint8_t *
h_table_addr(const struct harness *h, uint16_t id)
{
	struct virtq_params p0 = h->p;

	p0.indirect_max = 0;
	return h->ring + t_round_up(virtq_ring_mem_size(&p0), 64) +
		(size_t)id * h->p.indirect_max * 16;
}

/*
 * Chain @p cid: @p out readable then @p in writable elements in
 * t_ind_mem[cid], element k of length @p len0 + k.
 */
static int
h_add_ind(struct harness *h, unsigned int cid, uint16_t out, uint16_t in, uint32_t len0)
{
	struct virtq_sg sg[8];
	uint16_t k;

	for (k = 0; k < out + in; k++) {
		sg[k].addr = (uint64_t)(uintptr_t)t_ind_mem[cid % 16][k];
		sg[k].len = len0 + k;
	}
	return virtq_add(h->vq, sg, out, in, COOKIE(cid));
}

/* The device saw chain @p cid as h_add_ind() built it. */
static int
h_check_ind(const struct fake_dev_chain *c, unsigned int cid, uint16_t out, uint16_t in,
	    uint32_t len0, bool indirect)
{
	uint32_t in_len = 0;
	uint16_t k;

	EXPECT_EQ(c->indirect, indirect);
	EXPECT_EQ(c->ndescs, out + in);
	EXPECT_EQ(c->nring, indirect ? 1 : out + in);
	EXPECT_EQ(c->nout, out);
	EXPECT_EQ(c->nin, in);
	for (k = 0; k < out + in; k++) {
		EXPECT_EQ(c->sg[k].addr, (uint64_t)(uintptr_t)t_ind_mem[cid % 16][k]);
		EXPECT_EQ(c->sg[k].len, len0 + k);
		if (k >= out)
			in_len += len0 + k;
	}
	EXPECT_EQ(c->in_len, in_len);
	return 0;
}

/*
 * A multi-element chain goes as one INDIRECT ring descriptor pointing to
 * its table (the layout's areas where they were, the table after them);
 * the device reads every element, writes into the writable ones, and the
 * driver gets the cookie, the len and the bytes back. The shortest chain
 * that goes indirect (two read-only elements) reports len 0.
 */
static int
t_indirect_chain(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain c;
	struct virtq_params p0;
	uint8_t data[256];
	uint16_t s;
	uint32_t i;

	s = h->start;
	/* Sizes: the areas as without indirect, then 16 tables of 8 x 16 bytes. */
	EXPECT_EQ(h->ring_size, t_packed(cfg) ? 384 + 2048 : 4288 + 2048);
	p0 = h->p;
	p0.indirect_max = 0;
	EXPECT_EQ(h->ring_size, t_round_up(virtq_ring_mem_size(&p0), 64) + 16 * 8 * 16);
	EXPECT(virtq_desc_area(h->vq) == h->ring);
	EXPECT(virtq_driver_area(h->vq) == h->ring + 16 * 16);
	EXPECT(virtq_device_area(h->vq) == h->ring + (t_packed(cfg) ? 16 * 16 + 64 : 4096));

	EXPECT_EQ(h_add_ind(h, 1, 3, 2, 10), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 15);
	EXPECT_EQ(virtq_avail_idx(h->vq), (uint16_t)(s + 1));
	EXPECT_EQ(virtq_stats(h->vq)->indirect, 1);
	h_kick(h);
	/* The ring descriptor: INDIRECT alone (no NEXT, no WRITE), the table
	 * of head descriptor / buffer id 0, five entries.
	 */
	if (t_packed(cfg)) {
		const struct virtq_packed_desc *d = &((const struct virtq_packed_desc *)
			virtq_desc_area(h->vq))[s & 15];

		EXPECT_EQ(d->flags & ~(VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED),
			 VIRTQ_DESC_F_INDIRECT);
		EXPECT_EQ(d->id, 0);
		EXPECT_EQ(d->len, 5 * 16);
		EXPECT_EQ(d->addr, (uint64_t)(uintptr_t)h_table_addr(h, 0));
	} else {
		const struct virtq_desc *d = virtq_desc_area(h->vq);

		EXPECT_EQ(d[0].flags, VIRTQ_DESC_F_INDIRECT);
		EXPECT_EQ(d[0].len, 5 * 16);
		EXPECT_EQ(d[0].addr, (uint64_t)(uintptr_t)h_table_addr(h, 0));
	}
	EXPECT_EQ(fake_dev_avail_count(&h->dev), 1);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	EXPECT_EQ(h_check_ind(&c, 1, 3, 2, 10, true), 0);
	EXPECT_EQ(c.table, (uint64_t)(uintptr_t)h_table_addr(h, 0));
	EXPECT_EQ(c.in_len, 13 + 14);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	EXPECT_EQ(fake_dev_write(&h->dev, &c, data, 27), 27);
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 27), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(h_take_one(h, 1, 27), 0);
	for (i = 0; i < 13; i++)
		EXPECT_EQ(t_ind_mem[1][3][i], data[i]);
	for (i = 0; i < 14; i++)
		EXPECT_EQ(t_ind_mem[1][4][i], data[13 + i]);
	EXPECT_EQ(virtq_num_free(h->vq), 16);

	/* Two read-only elements: indirect; a len from the device means nothing. */
	EXPECT_EQ(h_add_ind(h, 2, 2, 0, 20), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 15);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	EXPECT_EQ(h_check_ind(&c, 2, 2, 0, 20, true), 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 77), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(h_take_one(h, 2, 0), 0);

	/* All writable (the rx shape): indirect too. */
	EXPECT_EQ(h_add_ind(h, 3, 0, 4, 5), 0);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	EXPECT_EQ(h_check_ind(&c, 3, 0, 4, 5, true), 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 5 + 6 + 7 + 8), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(h_take_one(h, 3, 26), 0);
	EXPECT_EQ(virtq_stats(h->vq)->indirect, 3);
	EXPECT_EQ(virtq_num_free(h->vq), 16);
	/* Split: 3 chains; packed: 3 slots. */
	EXPECT_EQ(virtq_last_used_idx(h->vq), (uint16_t)(s + 3));
	return 0;
}

/*
 * Used len against the writable elements of a table: their sum is fine, one
 * more byte breaks the queue; the chain still comes back by detach.
 */
static int
t_indirect_used_len(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain a, b;

	EXPECT_EQ(h_add_ind(h, 1, 1, 3, 100), 0);    /* writable 101 + 102 + 103 */
	EXPECT_EQ(h_add_ind(h, 2, 1, 3, 100), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 6);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &a), 0);
	EXPECT_EQ(h_dev_pop(h, &b), 0);
	EXPECT_EQ(h_check_ind(&a, 1, 1, 3, 100, true), 0);
	EXPECT_EQ(a.in_len, 306);
	EXPECT_EQ(fake_dev_push(&h->dev, &a, 306), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(h_take_one(h, 1, 306), 0);
	fake_dev_inject_len_too_large(&h->dev, &b);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(h_drain(h), 0);
	EXPECT_EQ(h_check_broken(h, "used len exceeds the writable length"), 0);
	EXPECT(virtq_detach_unused(h->vq) == COOKIE(2));
	EXPECT(virtq_detach_unused(h->vq) == NULL);
	EXPECT_EQ(virtq_num_free(h->vq), 8);
	return 0;
}

/*
 * Chain @p cid of @p out + @p in elements (lengths 8, 9, ...) there and
 * back: added (then @p free descriptors left), taken by the device and
 * checked as h_add_ind() built it, direct or @p indirect, completed with
 * len 0 and taken by the driver.
 */
static int
h_ind_round(struct harness *h, unsigned int cid, uint16_t out, uint16_t in, bool indirect,
	    uint16_t free)
{
	struct fake_dev_chain c;

	EXPECT_EQ(h_add_ind(h, cid, out, in, 8), 0);
	EXPECT_EQ(virtq_num_free(h->vq), free);
	h_kick(h);
	EXPECT_EQ(h_dev_pop(h, &c), 0);
	EXPECT_EQ(h_check_ind(&c, cid, out, in, 8, indirect), 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &c, 0), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(h_drain(h), 1);
	return 0;
}

/*
 * Which chains go indirect: 2..indirect_max elements and fewer than num.
 * One element, more than indirect_max, or num elements: a direct chain.
 * add_inbufs / add_outbufs never. -ENOSPC counts ring descriptors.
 */
static int
t_indirect_fallback(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c;
	struct virtq_sg sg[4];
	void *cookies[4];
	uint16_t i;
	int ret = -1;

	CHECK_EQ(h_setup_ind(&h, cfg, 16, 4), 0);
	CHECK_EQ(h_add_ind(&h, 1, 2, 3, 8), 0);       /* 5 > 4: direct */
	CHECK_EQ(virtq_num_free(h.vq), 11);
	CHECK_EQ(h_add_ind(&h, 2, 1, 0, 8), 0);       /* 1: direct */
	CHECK_EQ(h_add_ind(&h, 3, 2, 2, 8), 0);       /* 4: indirect */
	CHECK_EQ(virtq_num_free(h.vq), 9);
	t_bufs(sg, cookies, 4, 16, 10);
	CHECK_EQ(virtq_add_outbufs(h.vq, sg, cookies, 2), 2);
	CHECK_EQ(virtq_add_inbufs(h.vq, sg + 2, cookies + 2, 2), 2);
	CHECK_EQ(virtq_num_free(h.vq), 5);
	CHECK_EQ(virtq_stats(h.vq)->indirect, 1);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 1, 2, 3, 8, false), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 0), 0);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 2, 1, 0, 8, false), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 0), 0);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 3, 2, 2, 8, true), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 0), 0);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(h_dev_pop(&h, &c), 0);
		CHECK(!c.indirect);
		CHECK_EQ(c.ndescs, 1);
		CHECK_EQ(fake_dev_push(&h.dev, &c, 0), 0);
	}
	fake_dev_flush(&h.dev);
	CHECK_EQ(h_drain(&h), 7);
	CHECK_EQ(virtq_num_free(h.vq), 16);

	/* -ENOSPC by ring descriptors: 11 singles leave 5 free. */
	for (i = 0; i < 11; i++)
		CHECK_EQ(h_add_ind(&h, 20 + i, 1, 0, 8), 0);
	CHECK_EQ(h_add_ind(&h, 40, 3, 3, 8), -ENOSPC);   /* direct 6 > 5 */
	CHECK_EQ(h_add_ind(&h, 41, 2, 3, 8), 0);         /* direct 5 */
	CHECK_EQ(virtq_num_free(h.vq), 0);
	CHECK_EQ(h_add_ind(&h, 42, 1, 1, 8), -ENOSPC);   /* indirect needs 1 */
	h_kick(&h);
	CHECK_EQ(h_complete_drain(&h, 12), 0);
	for (i = 0; i < 15; i++)
		CHECK_EQ(h_add_ind(&h, 20 + i, 1, 0, 8), 0);
	CHECK_EQ(h_add_ind(&h, 43, 2, 2, 8), 0);         /* indirect in the last one */
	CHECK_EQ(virtq_num_free(h.vq), 0);
	CHECK_EQ(virtq_stats(h.vq)->indirect, 2);
	h_kick(&h);
	CHECK_EQ(h_complete_drain(&h, 16), 0);
	CHECK_EQ(h.dev.driver_errors, 0);
	h_teardown(&h);

	/* A table may not be as long as the ring: num 4, indirect_max 4. */
	CHECK_EQ(h_setup_ind(&h, cfg, 4, 4), 0);
	CHECK_EQ(h_ind_round(&h, 1, 2, 2, false, 0), 0);  /* 4 == num: direct */
	CHECK_EQ(h_ind_round(&h, 2, 2, 1, true, 3), 0);   /* 3 < num: indirect */
	ret = 0;
teardown:
	return h_end_clean(&h, ret);
}

/*
 * The ring full of indirect chains, many laps: num chains of 2..7 random
 * elements each take one descriptor, the next add is -ENOSPC; the device
 * reads every element, completes in random order with random lengths; the
 * driver checks cookies, lens and bytes. Every table is rewritten each lap.
 */
static int
t_indirect_ring_full(struct harness *h, const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	struct fake_dev_chain held[NUM];
	/* Indexed by chain 1..NUM (cookie and t_ind_mem row). */
	uint16_t out[NUM + 1], in[NUM + 1], len0[NUM + 1];
	uint32_t dev_len[NUM + 1];
	uint8_t tag[NUM + 1];
	uint64_t laps;

	EXPECT_EQ(h->p.num, NUM);   /* NUM is the table row's .num */
	t_srand(88172645u);
	for (laps = 0; laps < 3000; laps++) {
		void *cookies[NUM];
		uint32_t lens[NUM];
		unsigned int i, n, nheld = NUM;
		uint16_t got;

		for (i = 1; i <= NUM; i++) {
			uint16_t total = (uint16_t)(2 + t_rand() % 6);   /* 2..7 < num */

			out[i] = (uint16_t)(t_rand() % (total + 1));
			in[i] = (uint16_t)(total - out[i]);
			len0[i] = (uint16_t)(1 + t_rand() % (T_IND_SEG - 8));
			EXPECT_EQ(h_add_ind(h, i, out[i], in[i], len0[i]), 0);
		}
		EXPECT_EQ(virtq_num_free(h->vq), 0);
		EXPECT_EQ(h_add_ind(h, 9, 1, 1, 4), -ENOSPC);
		EXPECT_EQ(virtq_add_inbufs(h->vq, &(struct virtq_sg){ .addr = 1, .len = 1 },
					  &(void *){ COOKIE(9) }, 1), 0);
		h_kick(h);
		for (i = 0; i < NUM; i++) {
			EXPECT_EQ(h_dev_pop(h, &held[i]), 0);
			EXPECT_EQ(h_check_ind(&held[i], i + 1, out[i + 1], in[i + 1], len0[i + 1],
					     true), 0);
		}
		EXPECT_EQ(fake_dev_pop(&h->dev, &held[0]), 0);
		/* Complete in a random order, random lens within the writable. */
		while (nheld > 0) {
			unsigned int j = t_rand() % nheld;
			struct fake_dev_chain c = held[j];
			uint8_t buf[8 * T_IND_SEG];
			unsigned int cid;
			uint32_t len;

			/* Which chain: by its first element's buffer. */
			cid = (unsigned int)((c.sg[0].addr - (uint64_t)(uintptr_t)t_ind_mem[0][0]) /
					     sizeof(t_ind_mem[0]));
			EXPECT(cid >= 1 && cid <= NUM);
			len = c.in_len == 0 ? 0 : t_rand() % (c.in_len + 1);
			tag[cid] = (uint8_t)t_rand();
			memset(buf, tag[cid], len);
			EXPECT_EQ(fake_dev_write(&h->dev, &c, buf, len), len);
			dev_len[cid] = len;
			EXPECT_EQ(fake_dev_push(&h->dev, &c, len), 0);
			held[j] = held[--nheld];
			if (t_rand() % 3 == 0)
				fake_dev_flush(&h->dev);
		}
		fake_dev_flush(&h->dev);
		n = 0;
		while ((got = virtq_get_used(h->vq, cookies, lens, NUM)) > 0) {
			for (i = 0; i < got; i++) {
				unsigned int cid = COOKIE_ID(cookies[i]);
				uint32_t b, k = out[cid], off = 0;

				EXPECT(cid >= 1 && cid <= NUM);
				EXPECT_EQ(lens[i], dev_len[cid]);
				/* Bytes land in the writable elements in order. */
				for (b = 0; b < lens[i]; b++) {
					while (off >= (uint32_t)len0[cid] + k) {
						off -= (uint32_t)len0[cid] + k;
						k++;
					}
					EXPECT_EQ(t_ind_mem[cid][k][off], tag[cid]);
					off++;
				}
			}
			n += got;
		}
		EXPECT_EQ(n, NUM);
		EXPECT_EQ(virtq_num_free(h->vq), NUM);
	}
	/* Split: one avail entry per chain; packed: one slot per chain. */
	EXPECT_EQ(virtq_avail_idx(h->vq), (uint16_t)(h->start + laps * NUM));
	EXPECT_EQ(virtq_last_used_idx(h->vq), (uint16_t)(h->start + laps * NUM));
	EXPECT_EQ(virtq_stats(h->vq)->indirect, laps * NUM);
	return 0;
}

/*
 * Indirect chains outstanding in every state (published and held by the
 * device, completed but not taken, not published) come back by detach;
 * the queue then restarts at another index and carries indirect chains.
 */
static int
t_indirect_detach_restart(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain c[6];
	bool seen[16];
	void *cookie;
	uint16_t s2;
	unsigned int i, n = 0, r;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 6; i++)
		EXPECT_EQ(h_add_ind(h, i + 1, (uint16_t)(1 + i % 2), (uint16_t)(1 + i % 3), 8), 0);
	h_kick(h);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(h_add_ind(h, 7 + i, 2, 1, 8), 0);      /* not published */
	EXPECT_EQ(virtq_num_free(h->vq), 6);
	for (i = 0; i < 6; i++) {
		EXPECT_EQ(h_dev_pop(h, &c[i]), 0);
		EXPECT(c[i].indirect);
	}
	EXPECT_EQ(fake_dev_push(&h->dev, &c[1], 1), 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &c[3], 1), 0);
	EXPECT_EQ(fake_dev_push(&h->dev, &c[4], 1), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_get_used(h->vq, &cookie, NULL, 1), 1);
	EXPECT(cookie == COOKIE(2));
	while ((cookie = virtq_detach_unused(h->vq)) != NULL) {
		unsigned int id = COOKIE_ID(cookie);

		EXPECT(id >= 1 && id <= 10 && id != 2);
		EXPECT(!seen[id]);
		seen[id] = true;
		n++;
	}
	EXPECT_EQ(n, 9);
	EXPECT_EQ(virtq_num_free(h->vq), 16);

	s2 = (uint16_t)(h->start + 0x1234);
	EXPECT_EQ(h_restart(h, s2), 0);
	for (r = 0; r < 5; r++) {
		for (i = 1; i <= 16; i++)
			EXPECT_EQ(h_add_ind(h, i, 2, 2, 4), 0);
		EXPECT_EQ(virtq_num_free(h->vq), 0);
		h_kick(h);
		EXPECT_EQ(h_complete_drain(h, 16), 0);
	}
	EXPECT_EQ(virtq_avail_idx(h->vq), (uint16_t)(s2 + 80));
	EXPECT_EQ(virtq_last_used_idx(h->vq), (uint16_t)(s2 + 80));
	EXPECT_EQ(virtq_stats(h->vq)->indirect, 80);
	EXPECT(virtq_detach_unused(h->vq) == NULL);
	return 0;
}

/* Without the feature, the fake device refuses an INDIRECT descriptor. */
static int
t_indirect_not_negotiated(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain c;

	h->dev.params.indirect_max = 0;               /* the device did not offer it */
	EXPECT_EQ(h_add_ind(h, 1, 1, 1, 8), 0);
	h_kick(h);
	EXPECT_EQ(fake_dev_pop(&h->dev, &c), -EPROTO);
	EXPECT(strstr(h->dev.error, "not negotiated") != NULL);
	return 0;
}

static const struct test_case cases[] = {
	{ "indirect: chain as one descriptor", NULL, RUN_ALL, ON_BOTH,
	  .h = { t_indirect_chain, 16, 8, H_END_HEALTHY } },
	{ "indirect: used len of a table", NULL, RUN_ALL, ON_BOTH,
	  .h = { t_indirect_used_len, 8, 4, H_END_CLEAN } },
	{ "indirect: which chains go indirect, -ENOSPC", t_indirect_fallback, RUN_ALL, ON_BOTH },
	{ "indirect: ring full, many laps", NULL, RUN_ALL, ON_BOTH, ORDER_ANY,
	  .h = { t_indirect_ring_full, 8, 8, H_END_HEALTHY } },
	{ "indirect: detach_unused and restart", NULL, RUN_ALL, ON_BOTH, ORDER_ANY,
	  .h = { t_indirect_detach_restart, 16, 8, H_END_CLEAN } },
	{ "indirect: not negotiated", NULL, RUN_ONCE, ON_BOTH,
	  .h = { t_indirect_not_negotiated, 8, 4, H_END } },
};

const struct test_section test_section_indirect = { cases, RTE_DIM(cases) };
