/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * lib/virtq unit tests, VIRTIO_F_IN_ORDER: round trips and what an in-order device may not report.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "virtq_harness.h"

/*
 * In order, both layouts: random chains (writable, readable, mixed), the
 * device completes a random prefix of what it popped, in order, and flushes
 * (packed: a flush of read-only chains is ONE used descriptor carrying the
 * last id, as lib/vhost's in-order dequeue writes it); the driver takes
 * random counts, so it often stops inside a batch. Every cookie comes back
 * in order with the device's len (0 for read-only chains); packed buffer ids
 * are the slots of the chains' first descriptors, split chains take
 * descriptors in index order; an arming with completions waiting (also
 * inside a batch) reports work at once and a power monitor would not sleep.
 * Runs past three wraps of the 16-bit indices.
 */
static int
t_io_round_trips_ind(const struct test_cfg *cfg, uint16_t indirect_max)
{
	enum { NUM = 32 };
	struct harness h;
	struct fake_dev_chain held[NUM];
	struct {
		uint16_t nout, nin;
		uint32_t in_len, dev_len;
	} info[NUM * 2];
	unsigned int nheld = 0, hold_first = 0;
	uint64_t added = 0, taken = 0, batches = 0, pending_arms = 0, indirect = 0;
	uint16_t next_desc = 0;
	bool packed = t_packed(cfg);
	void *cookies[NUM];
	uint32_t lens[NUM];
	int ret = -1;

	CHECK_EQ(h_setup_ind(&h, cfg, NUM, indirect_max), 0);
	t_srand(T_RNG_SEED);
	while (taken < 3 * 65536 + 777) {
		uint16_t want, n, i;
		unsigned int k;

		/* Driver: random chains; cookie = add sequence number mod 2 * NUM. */
		want = (uint16_t)(t_rand() % (NUM / 2 + 1));
		for (i = 0; i < want; i++) {
			uint16_t out = 0, in = 0;
			unsigned int c = (unsigned int)(added % (NUM * 2));
			struct virtq_sg sg[3];
			uint16_t pos = virtq_avail_idx(h.vq);

			switch (t_rand() % 4) {
			case 0:
				in = 1;
				break;
			case 1:
			case 2:
				out = (uint16_t)(1 + t_rand() % 2);
				break;
			default:
				out = 1;
				in = 1;
				break;
			}
			if ((uint32_t)out + in > virtq_num_free(h.vq))
				break;
			if (virtq_is_broken(h.vq))
				printf("#   broken: %s\n", virtq_broken_reason(h.vq));
			CHECK(!virtq_is_broken(h.vq));
			for (k = 0; k < (unsigned int)(out + in); k++) {
				sg[k].addr = t_seg_addr(c % 64, k);
				sg[k].len = T_SEG_SIZE;
			}
			if (out + in == 1) {
				void *ck = COOKIE(c + 1);

				CHECK_EQ(in ? virtq_add_inbufs(h.vq, sg, &ck, 1) :
					      virtq_add_outbufs(h.vq, sg, &ck, 1), 1);
			} else {
				CHECK_EQ(virtq_add(h.vq, sg, out, in, COOKIE(c + 1)), 0);
			}
			(void)pos;
			info[c].nout = out;
			info[c].nin = in;
			info[c].in_len = in ? T_SEG_SIZE : 0;
			added++;
		}
		if (t_rand() % 4 != 0)
			h_kick(&h);

		/* Device: pop all, check ids; complete a random prefix in order. */
		for (;;) {
			int r = fake_dev_pop(&h.dev, &held[(hold_first + nheld) % NUM]);
			struct fake_dev_chain *c = &held[(hold_first + nheld) % NUM];

			CHECK(r >= 0);
			if (r == 0)
				break;
			/* Indirect exactly when the chain has 2..indirect_max elements. */
			CHECK_EQ(c->indirect, c->ndescs >= 2 && c->ndescs <= indirect_max);
			if (c->indirect)
				indirect++;
			if (packed) {
				CHECK_EQ(c->id, c->desc_idx[0]);   /* id = first slot */
			} else {
				CHECK_EQ(c->id, next_desc);        /* descriptors in order */
				for (k = 0; k < c->nring; k++)
					CHECK_EQ(c->desc_idx[k], (next_desc + k) % NUM);
				next_desc = (uint16_t)((next_desc + c->nring) % NUM);
			}
			nheld++;
		}
		want = (uint16_t)(t_rand() % (nheld + 1));
		for (i = 0; i < want; i++) {
			struct fake_dev_chain *c = &held[hold_first];
			unsigned int ci = (unsigned int)((c->sg[0].addr - t_seg_addr(0, 0)) /
							 sizeof(t_mem[0]));
			/* The cookie of this chain: find it through its buffer. */
			uint32_t len = c->in_len ? t_rand() % (c->in_len + 1) : 0;

			(void)ci;
			CHECK_EQ(fake_dev_push(&h.dev, c, len), 0);
			hold_first = (hold_first + 1) % NUM;
			nheld--;
			/* Remember the len by add order: completions are in add order. */
			info[(taken + h.dev.unflushed - 1 + (h.dev.chains_published - taken)) %
			     (NUM * 2)].dev_len = len;
		}
		if (want > 0) {
			bool all_ro = true;

			for (k = 0; k < want; k++)
				all_ro = all_ro && info[(h.dev.chains_published + k) % (NUM * 2)].nin == 0;
			if (packed && all_ro && want > 1)
				batches++;
			fake_dev_flush(&h.dev);
		}
		CHECK_EQ(virtq_used_count(h.vq), h.dev.chains_published - taken);

		/* Driver: a random number; sometimes arm in the middle. */
		want = (uint16_t)(1 + t_rand() % 8);
		n = virtq_get_used(h.vq, cookies, lens, want);
		for (i = 0; i < n; i++) {
			unsigned int c = (unsigned int)(taken % (NUM * 2));

			CHECK_EQ(COOKIE_ID(cookies[i]), c + 1);
			CHECK_EQ(lens[i], info[c].nin ? info[c].dev_len : 0);
			taken++;
		}
		if (t_rand() % 8 == 0) {
			uint32_t opaque = virtq_enable_intr_prepare(h.vq);
			bool more = virtq_used_count(h.vq) > 0;

			CHECK_EQ(virtq_poll(h.vq, opaque), more);
			if (more) {
				volatile void *addr;
				uint64_t expected, mask;
				uint8_t size;

				/* Nor may a power monitor sleep. */
				addr = virtq_monitor_addr(h.vq, &expected, &mask, &size);
				CHECK(!h_monitor_sleeps(addr, expected, mask, size));
				pending_arms++;
			}
			virtq_disable_intr(h.vq);
		}
	}
	/* Drain. */
	while (nheld > 0) {
		CHECK_EQ(fake_dev_push(&h.dev, &held[hold_first], 0), 0);
		hold_first = (hold_first + 1) % NUM;
		nheld--;
	}
	fake_dev_flush(&h.dev);
	h_kick(&h);
	CHECK(h_dev_complete_all(&h) >= 0);
	taken += h_drain(&h);
	CHECK_EQ(taken, added);
	CHECK_EQ(virtq_num_free(h.vq), NUM);
	CHECK_EQ(virtq_used_count(h.vq), 0);
	CHECK_EQ(h.dev.driver_errors, 0);
	CHECK(!virtq_is_broken(h.vq));
	if (packed) {
		CHECK(batches > 1000);
	}
	CHECK(pending_arms > 10);
	CHECK(indirect_max == 0 ? indirect == 0 : indirect > 10000);
	printf("#   %" PRIu64 " chains (%" PRIu64 " indirect), %" PRIu64
	       " batches of 2+ in one used descriptor, %" PRIu64
	       " arms with completions waiting\n", taken, indirect, batches, pending_arms);
	ret = 0;
teardown:
	return h_end(&h, ret);
}

static int
t_io_round_trips(const struct test_cfg *cfg)
{
	return t_io_round_trips_ind(cfg, 0);
}

/* The same with indirect tables of 2: two-element chains take one slot. */
static int
t_io_round_trips_indirect(const struct test_cfg *cfg)
{
	return t_io_round_trips_ind(cfg, 2);
}

/* In order: what a device may not report, and the reason each gets. */
static int
t_io_bad(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c[4];
	void *cookies[8];
	uint32_t lens[8];
	unsigned int i, k;
	int ret = -1;
	static const char *const packed_reasons[] = {
		"used id is not an outstanding buffer",              /* beyond inflight */
		"used id is not an outstanding buffer",              /* not a head */
		"in-order batch skips a device-writable buffer",
		"used len exceeds the writable length",
	};
	static const char *const split_reasons[] = {
		"used id out of order",
		"used idx moved past the published buffers",
		"used len exceeds the writable length",
	};
	unsigned int nk = t_packed(cfg) ? 4 : 3;

	for (k = 0; k < nk; k++) {
		CHECK_EQ(h_setup(&h, cfg, 16), 0);
		/* Chains: 0 read-only (2 descs), 1 writable, 2 read-only, 3 writable. */
		CHECK_EQ(h_add_chain(&h, 1, 2, 0, 8), 0);
		CHECK_EQ(h_add_chain(&h, 2, 0, 1, 8), 0);
		CHECK_EQ(h_add_chain(&h, 3, 1, 0, 8), 0);
		CHECK_EQ(h_add_chain(&h, 4, 0, 1, 8), 0);
		h_kick(&h);
		for (i = 0; i < 4; i++)
			CHECK_EQ(h_dev_pop(&h, &c[i]), 0);
		if (t_packed(cfg)) {
			switch (k) {
			case 0:   /* a slot past what is published */
				fake_dev_push_raw(&h.dev, (c[3].id + 1) % 16, 0);
				break;
			case 1:   /* the second slot of chain 0 */
				fake_dev_push_raw(&h.dev, c[0].desc_idx[1], 0);
				break;
			case 2:   /* chain 2's id: skips writable chain 1 */
				fake_dev_push_raw(&h.dev, c[2].id, 0);
				break;
			default:
				CHECK_EQ(fake_dev_push(&h.dev, &c[0], 0), 0);
				fake_dev_inject_len_too_large(&h.dev, &c[1]);
				break;
			}
		} else {
			switch (k) {
			case 0:   /* chain 1 is next; the device names chain 3 */
				CHECK_EQ(fake_dev_push(&h.dev, &c[0], 0), 0);
				fake_dev_push_raw(&h.dev, c[3].id, 1);
				break;
			case 1:   /* five used entries for four published chains */
				for (i = 0; i < 4; i++)
					CHECK_EQ(fake_dev_push(&h.dev, &c[i], 0), 0);
				fake_dev_push_raw(&h.dev, c[0].id, 0);
				break;
			default:
				CHECK_EQ(fake_dev_push(&h.dev, &c[0], 0), 0);
				fake_dev_inject_len_too_large(&h.dev, &c[1]);
				break;
			}
		}
		fake_dev_flush(&h.dev);
		/* Chain 0 is fine in the cases that complete it first. */
		(void)virtq_get_used(h.vq, cookies, lens, 8);
		CHECK(virtq_is_broken(h.vq));
		if (strcmp(virtq_broken_reason(h.vq),
			   t_packed(cfg) ? packed_reasons[k] : split_reasons[k]) != 0) {
			printf("#   case %u: reason '%s'\n", k, virtq_broken_reason(h.vq));
			goto teardown;
		}
		CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
		CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 8), 0);
		/* Every buffer still comes back to the caller. */
		i = 0;
		while (virtq_detach_unused(h.vq) != NULL)
			i++;
		CHECK(i <= 4);
		h_teardown(&h);
	}
	return 0;
teardown:
	h_teardown(&h);
	return ret;
}

static const struct test_case cases[] = {
	{ "in order: round trips, batches, arming inside a batch", t_io_round_trips, RUN_ALL,
	  ON_BOTH, ORDER_ONLY },
	{ "in order: round trips, indirect tables of 2", t_io_round_trips_indirect, RUN_ALL,
	  ON_BOTH, ORDER_ONLY },
	{ "in order: bad used", t_io_bad, RUN_ALL, ON_BOTH, ORDER_ONLY },
};

const struct test_section test_section_in_order = { cases, RTE_DIM(cases) };
