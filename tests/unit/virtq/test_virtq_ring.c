/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * lib/virtq unit tests, the ring itself: parameters and layout, the event-idx rule, index wrap,
 * adding buffers, publication, detach and re-init, the vring base.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virtq_harness.h"

/*
 * virtq_init lays out the ring as documented and starts every index at
 * start_idx, interrupts suppressed.
 */
static int
t_init_layout_split(struct harness *h)
{
	struct virtq_avail *avail;
	struct virtq_used *used;
	uint16_t s = h->start;

	EXPECT_EQ(h->ring_size, 8192 + 4 + 256 * 8 + 2);
	EXPECT(virtq_desc_area(h->vq) == h->ring);
	EXPECT(virtq_driver_area(h->vq) == h->ring + 256 * 16);
	EXPECT(virtq_device_area(h->vq) == h->ring + 8192);
	avail = virtq_driver_area(h->vq);
	used = virtq_device_area(h->vq);
	EXPECT_EQ(avail->idx, s);
	EXPECT_EQ(used->idx, s);
	EXPECT_EQ(*virtq_avail_event(used, 256), s);
	EXPECT_EQ(used->flags, 0);
	if (h->p.event_idx) {
		EXPECT_EQ(avail->flags, 0);
		EXPECT_EQ(*virtq_used_event(avail, 256), (uint16_t)(s - 1));
	} else {
		EXPECT_EQ(avail->flags, VIRTQ_AVAIL_F_NO_INTERRUPT);
		EXPECT_EQ(*virtq_used_event(avail, 256), 0);
	}
	/* The rest of the ring is zeroed. */
	for (size_t i = 0; i < 256 * 16; i++)
		EXPECT_EQ(h->ring[i], 0);
	EXPECT_EQ(virtq_vring_base(h->vq), s);
	return 0;
}

static int
t_init_layout_packed(struct harness *h)
{
	const struct virtq_packed_desc *desc = virtq_desc_area(h->vq);
	const struct virtq_packed_event *drv = virtq_driver_area(h->vq);
	const struct virtq_packed_event *dev = virtq_device_area(h->vq);
	uint16_t s = h->start;
	uint16_t slot = s & 255;
	bool w = h_wrap(h, s);
	uint16_t i;

	EXPECT_EQ(h->ring_size, 256 * 16 + 64 + 4);
	EXPECT(virtq_desc_area(h->vq) == h->ring);
	EXPECT(virtq_driver_area(h->vq) == h->ring + 256 * 16);
	EXPECT(virtq_device_area(h->vq) == h->ring + 256 * 16 + 64);
	/* Slots from the start on: used in the lap before; before it: used
	 * in this lap. Nothing else written.
	 */
	for (i = 0; i < 256; i++) {
		bool lap = i < slot ? w : !w;

		EXPECT_EQ(desc[i].flags, lap ? VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED : 0);
		EXPECT_EQ(desc[i].addr, 0);
		EXPECT_EQ(desc[i].len, 0);
		EXPECT_EQ(desc[i].id, 0);
	}
	EXPECT_EQ(drv->flags, VIRTQ_EVENT_F_DISABLE);
	EXPECT_EQ(drv->off_wrap, 0);
	EXPECT_EQ(dev->flags, 0);
	EXPECT_EQ(dev->off_wrap, 0);
	EXPECT_EQ(virtq_vring_base(h->vq), h_pos_enc(h, s));
	if (s == 0)
		EXPECT_EQ(virtq_vring_base(h->vq), 0x8000);   /* what DPDK virtio-user sends */
	return 0;
}

static int
t_init_layout(struct harness *h, const struct test_cfg *cfg)
{
	uint16_t s;

	s = h->start;
	if (t_packed(cfg))
		EXPECT_EQ(t_init_layout_packed(h), 0);
	else
		EXPECT_EQ(t_init_layout_split(h), 0);
	EXPECT_EQ(virtq_params(h->vq)->num, 256);
	EXPECT_EQ(virtq_params(h->vq)->start_idx, s);
	EXPECT_EQ(virtq_num_free(h->vq), 256);
	EXPECT_EQ(virtq_avail_idx(h->vq), s);
	EXPECT_EQ(virtq_last_used_idx(h->vq), s);
	EXPECT(!virtq_intr_enabled(h->vq));
	EXPECT(!virtq_is_broken(h->vq));
	EXPECT(virtq_broken_reason(h->vq) == NULL);
	EXPECT_EQ(virtq_stats(h->vq)->kicks + virtq_stats(h->vq)->kicks_suppressed +
		 virtq_stats(h->vq)->bad_used + virtq_stats(h->vq)->intr_arms, 0);
	EXPECT_EQ(virtq_used_count(h->vq), 0);
	EXPECT(virtq_detach_unused(h->vq) == NULL);
	return 0;
}

/* Parameter checks and sizes, independent of the configuration. */
static int
t_params_sizes(const struct test_cfg *cfg)
{
	static const uint16_t bad_num[] = { 0, 1, 3, 6, 100, 32767, 32769, 65535 };
	struct virtq_params p = { .layout = VIRTQ_LAYOUT_SPLIT, .num = 2 };
	uint8_t *ring = aligned_alloc(VIRTQ_RING_ALIGN, 4 * VIRTQ_RING_ALIGN);
	struct virtq *vq = aligned_alloc(64, 4096);
	int ret = -1;
	size_t i;

	(void)cfg;
	CHECK(ring != NULL && vq != NULL);
	CHECK_EQ(virtq_ring_mem_size(&p), 4096 + 4 + 2 * 8 + 2);
	CHECK(virtq_state_size(&p) > 0 && virtq_state_size(&p) <= 4096);
	CHECK_EQ(virtq_init(vq, &p, ring), 0);
	p.num = 32768;
	CHECK_EQ(virtq_ring_mem_size(&p), 32768 * 16 + 4096 * 17 + 4 + 32768 * 8 + 2);
	CHECK(virtq_state_size(&p) > 32768 * 2);
	for (i = 0; i < sizeof(bad_num) / sizeof(bad_num[0]); i++) {
		p.num = bad_num[i];
		CHECK_EQ(virtq_ring_mem_size(&p), 0);
		CHECK_EQ(virtq_state_size(&p), 0);
		CHECK_EQ(virtq_init(vq, &p, ring), -EINVAL);
	}
	p.layout = VIRTQ_LAYOUT_PACKED;
	p.num = 2;
	CHECK_EQ(virtq_ring_mem_size(&p), 2 * 16 + 64 + 4);
	CHECK(virtq_state_size(&p) > 0 && virtq_state_size(&p) <= 4096);
	CHECK_EQ(virtq_init(vq, &p, ring), 0);
	CHECK_EQ(virtq_vring_base(vq), 0x8000);
	p.num = 32768;
	CHECK_EQ(virtq_ring_mem_size(&p), 32768 * 16 + 64 + 4);
	for (i = 0; i < sizeof(bad_num) / sizeof(bad_num[0]); i++) {
		p.num = bad_num[i];
		CHECK_EQ(virtq_ring_mem_size(&p), 0);
		CHECK_EQ(virtq_state_size(&p), 0);
		CHECK_EQ(virtq_init(vq, &p, ring), -EINVAL);
	}
	p.num = 2;
	CHECK_EQ(virtq_init(vq, &p, ring + 64), -EINVAL);  /* misaligned ring */
	/* Indirect tables after the areas, from a cache line: 100 -> 128. */
	p.indirect_max = 4;
	CHECK_EQ(virtq_ring_mem_size(&p), 128 + 2 * 4 * 16);
	CHECK_EQ(virtq_init(vq, &p, ring), 0);
	p.layout = VIRTQ_LAYOUT_SPLIT;
	CHECK_EQ(virtq_ring_mem_size(&p), 4160 + 2 * 4 * 16);   /* 4118 -> 4160 */
	CHECK_EQ(virtq_init(vq, &p, ring), 0);
	p.indirect_max = VIRTQ_MAX_INDIRECT;
	CHECK_EQ(virtq_ring_mem_size(&p), 4160 + 2 * VIRTQ_MAX_INDIRECT * 16);
	for (i = 0; i < 2; i++) {
		static const uint16_t bad_ind[] = { 1, VIRTQ_MAX_INDIRECT + 1 };

		p.layout = i == 0 ? VIRTQ_LAYOUT_SPLIT : VIRTQ_LAYOUT_PACKED;
		for (size_t k = 0; k < 2; k++) {
			p.indirect_max = bad_ind[k];
			CHECK_EQ(virtq_ring_mem_size(&p), 0);
			CHECK_EQ(virtq_state_size(&p), 0);
			CHECK_EQ(virtq_init(vq, &p, ring), -EINVAL);
		}
	}
	p.indirect_max = 0;
	p.layout = (enum virtq_layout)7;
	CHECK_EQ(virtq_init(vq, &p, ring), -EINVAL);
	p.layout = VIRTQ_LAYOUT_SPLIT;
	CHECK_EQ(virtq_init(vq, &p, ring + 64), -EINVAL);  /* misaligned ring */
	CHECK_EQ(virtq_init(vq, &p, NULL), -EINVAL);
	CHECK_EQ(virtq_init(NULL, &p, ring), -EINVAL);
	CHECK_EQ(virtq_init(vq, NULL, ring), -EINVAL);
	CHECK_EQ(virtq_ring_mem_size(NULL), 0);
	ret = 0;
teardown:
	free(ring);
	free(vq);
	return ret;
}

/* Reference for the event-idx rule: walk from old to new one step at a time. */
static bool
t_need_event_ref(uint16_t event, uint16_t new_idx, uint16_t old)
{
	uint16_t i;

	for (i = old; i != new_idx; i++)
		if (i == event)
			return true;
	return false;
}

static int
t_need_event_table(const struct test_cfg *cfg)
{
	static const struct {
		uint16_t event, new_idx, old;
		bool expect;
	} edge[] = {
		{ 0, 1, 0, true },
		{ 0, 0, 0, false },             /* nothing moved */
		{ 1, 1, 0, false },             /* event == new: not yet */
		{ 0xFFFF, 0, 0xFFFF, true },    /* crossing 0 */
		{ 0xFFFF, 0, 0xFFFE, true },
		{ 0xFFFE, 0, 0xFFFF, false },   /* behind old */
		{ 0, 0, 0xFFFF, false },        /* event == new across 0 */
		{ 0, 1, 0xFFFF, true },
		{ 0xFFF0, 0x0010, 0xFFF0, true },
		{ 0x000F, 0x0010, 0xFFF0, true },
		{ 0x0010, 0x0010, 0xFFF0, false },
		{ 0xFFEF, 0x0010, 0xFFF0, false },
		{ 5, 4, 5, true },              /* window of 2^16 - 1 */
		{ 4, 4, 5, false },
		{ 0x7FFF, 0x8000, 0x7FFF, true },
		{ 0x8000, 0x8001, 0x7FFF, true },
		{ 0x8001, 0x8001, 0x7FFF, false },
		{ 0xFFFF, 0x7FFF, 0xFFFF, true },  /* 2^15 ahead */
		{ 0x7FFE, 0x7FFF, 0xFFFF, true },
		{ 0x7FFF, 0x7FFF, 0xFFFF, false },
	};
	static const uint16_t bases[] = { 0, 1, 0x7FF8, 0xFFF0, 0xFFFB, 0xFFFF };
	size_t i;

	(void)cfg;
	for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		EXPECT_EQ(virtq_need_event(edge[i].event, edge[i].new_idx, edge[i].old),
			 edge[i].expect);
		EXPECT_EQ(t_need_event_ref(edge[i].event, edge[i].new_idx, edge[i].old),
			 edge[i].expect);
	}
	/* Exhaustive over small windows around 0, 2^15 and the wrap:
	 * old = base + a, new = old + d, event = base + e - 8.
	 */
	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		for (unsigned int a = 0; a < 24; a++) {
			for (unsigned int d = 0; d < 24; d++) {
				for (unsigned int e = 0; e < 56; e++) {
					uint16_t old = (uint16_t)(bases[i] + a);
					uint16_t new_idx = (uint16_t)(old + d);
					uint16_t ev = (uint16_t)(bases[i] + e - 8);

					if (virtq_need_event(ev, new_idx, old) !=
					    t_need_event_ref(ev, new_idx, old)) {
						printf("#   event %u new %u old %u\n", ev, new_idx,
						       old);
						return -1;
					}
				}
			}
		}
	}
	return 0;
}

/* Per-slot expectations of the wrap test. */
struct wrap_slot {
	bool busy;
	uint16_t nout, nin;
	uint32_t in_len;
	uint32_t dev_len;    /* len the device reported */
	uint8_t tag;         /* data pattern the device wrote */
	bool completed;
};

/*
 * Many round trips across index 0: mixed chains, out-of-order completion,
 * random batch sizes. Every cookie, len and data byte is checked, and the
 * indices end exactly where the counts say. Indirect tables of
 * cfg->indirect_max entries (the case table's; 0: none).
 */
static int
t_wrap(const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	uint16_t indirect_max = cfg->indirect_max;
	struct harness h;
	struct wrap_slot slot[NUM * 2];
	struct fake_dev_chain held[NUM];
	unsigned int nheld = 0;
	uint64_t added = 0, taken = 0;
	/* Indices move by chains (split) or descriptors (packed). */
	uint64_t added_idx = 0, taken_idx = 0;
	bool packed = t_packed(cfg);
	void *cookies[NUM];
	uint32_t lens[NUM];
	int ret = -1;

	memset(slot, 0, sizeof(slot));
	CHECK_EQ(h_setup_ind(&h, cfg, NUM, indirect_max), 0);
	t_srand(T_RNG_SEED);
	while (taken < 3 * 65536 + 1234) {
		unsigned int s, i;
		uint16_t n, want;
		bool kicked = false;

		/* Driver: add a random number of random chains. */
		want = (uint16_t)(t_rand() % (NUM + 1));
		for (i = 0; i < want; i++) {
			uint16_t out = 0, in = 0;
			struct virtq_sg sg[3];
			unsigned int k;

			for (s = 0; s < NUM * 2 && slot[s].busy; s++)
				;
			CHECK(s < NUM * 2);
			switch (t_rand() % 3) {
			case 0:
				in = 1;
				break;
			case 1:
				out = (uint16_t)(1 + t_rand() % 2);
				break;
			default:
				out = 1;
				in = (uint16_t)(1 + t_rand() % 2);
				break;
			}
			if (h_chain_slots(&h, (uint32_t)out + in) > virtq_num_free(h.vq))
				break;
			for (k = 0; k < (unsigned int)(out + in); k++) {
				sg[k].addr = t_seg_addr(s, k);
				sg[k].len = T_SEG_SIZE - k;
			}
			if (out == 0 && in == 1 && (t_rand() & 1)) {
				void *c = COOKIE(s + 1);

				CHECK_EQ(virtq_add_inbufs(h.vq, sg, &c, 1), 1);
			} else {
				CHECK_EQ(virtq_add(h.vq, sg, out, in, COOKIE(s + 1)), 0);
			}
			slot[s].busy = true;
			slot[s].completed = false;
			slot[s].nout = out;
			slot[s].nin = in;
			slot[s].in_len = in == 0 ? 0 : (in == 1 ? (uint32_t)T_SEG_SIZE - out :
				(uint32_t)(T_SEG_SIZE - 1) + (T_SEG_SIZE - 2));
			added++;
			added_idx += packed ? h_chain_slots(&h, (uint32_t)out + in) : 1;
		}
		CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(h.start + added_idx));
		if (t_rand() % 4 != 0) {
			h_kick(&h);
			kicked = true;
		}

		/* Device: pop what is there, complete a random subset. */
		for (;;) {
			int r = fake_dev_pop(&h.dev, &held[nheld]);

			CHECK(r >= 0);
			if (r == 0)
				break;
			s = (unsigned int)((held[nheld].sg[0].addr - t_seg_addr(0, 0)) /
					   sizeof(t_mem[0]));
			CHECK(s < NUM * 2 && slot[s].busy && !slot[s].completed);
			if (!packed)
				CHECK_EQ(held[nheld].id, held[nheld].desc_idx[0]);
			CHECK(held[nheld].id < NUM);
			CHECK_EQ(held[nheld].nout, slot[s].nout);
			CHECK_EQ(held[nheld].nin, slot[s].nin);
			CHECK_EQ(held[nheld].in_len, slot[s].in_len);
			CHECK_EQ(held[nheld].nring,
				 h_chain_slots(&h, (uint32_t)slot[s].nout + slot[s].nin));
			nheld++;
		}
		/* Device and driver agree on the avail position and, packed,
		 * its wrap counter (what GET_VRING_BASE would say).
		 */
		if (kicked)
			CHECK_EQ(fake_dev_vring_base(&h.dev),
				 packed ? h_pos_enc(&h, virtq_avail_idx(h.vq)) : virtq_avail_idx(h.vq));
		for (i = 0; i < nheld;) {
			uint8_t data[2 * T_SEG_SIZE];
			uint32_t len;

			if (t_rand() % 3 == 0) {
				i++;
				continue;
			}
			s = (unsigned int)((held[i].sg[0].addr - t_seg_addr(0, 0)) /
					   sizeof(t_mem[0]));
			slot[s].tag = (uint8_t)t_rand();
			if (held[i].in_len > 0) {
				len = t_rand() % (held[i].in_len + 1);
				memset(data, slot[s].tag, len);
				CHECK_EQ(fake_dev_write(&h.dev, &held[i], data, len), len);
				slot[s].dev_len = len;
			} else {
				len = t_rand() % 100;   /* meaningless: must be reported as 0 */
				slot[s].dev_len = 0;
			}
			CHECK_EQ(fake_dev_push(&h.dev, &held[i], len), 0);
			slot[s].completed = true;
			held[i] = held[--nheld];
		}
		fake_dev_flush(&h.dev);
		CHECK_EQ(virtq_used_count(h.vq), h.dev.chains_published - taken);

		/* Driver: take a random number of completions. */
		want = (uint16_t)(1 + t_rand() % NUM);
		n = virtq_get_used(h.vq, cookies, lens, want);
		CHECK(n <= want);
		for (i = 0; i < n; i++) {
			unsigned int id = COOKIE_ID(cookies[i]);
			uint32_t b;

			CHECK(id >= 1 && id <= NUM * 2);
			s = id - 1;
			CHECK(slot[s].busy && slot[s].completed);
			CHECK_EQ(lens[i], slot[s].dev_len);
			taken_idx += packed ?
				h_chain_slots(&h, (uint32_t)slot[s].nout + slot[s].nin) : 1;
			for (b = 0; b < lens[i]; b++) {
				/* Writable segments are k = nout, nout + 1. */
				unsigned int k = slot[s].nout;
				uint32_t off = b;

				if (off >= (uint32_t)(T_SEG_SIZE - k)) {
					off -= T_SEG_SIZE - k;
					k++;
				}
				CHECK_EQ(t_mem[s][k][off], slot[s].tag);
			}
			slot[s].busy = false;
		}
		taken += n;
		CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(h.start + taken_idx));
	}
	/* Drain: everything outstanding completes. */
	h_kick(&h);
	for (unsigned int i = 0; i < nheld; i++)
		CHECK_EQ(fake_dev_push(&h.dev, &held[i], 0), 0);
	nheld = 0;
	CHECK(h_dev_complete_all(&h) >= 0);
	taken += h_drain(&h);
	CHECK_EQ(taken, added);
	CHECK_EQ(virtq_num_free(h.vq), NUM);
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(h.start + added_idx));
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(h.start + added_idx));
	CHECK_EQ(virtq_used_count(h.vq), 0);
	CHECK_EQ(h.dev.pops, added);
	CHECK_EQ(h.dev.driver_errors, 0);
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 0);
	CHECK_EQ(h.dev.kicks, virtq_stats(h.vq)->kicks);
	if (indirect_max == 0)
		CHECK_EQ(virtq_stats(h.vq)->indirect, 0);
	else
		CHECK(virtq_stats(h.vq)->indirect > added / 8);
	ret = 0;
teardown:
	return h_end(&h, ret);
}

/* -EINVAL and exact -ENOSPC from add; partial add_inbufs. */
static int
t_add_errors(struct harness *h, const struct test_cfg *cfg)
{
	struct virtq_sg sg[9];
	void *cookies[5];
	unsigned int i;

	t_bufs(sg, NULL, 9, 8, 0);
	for (i = 0; i < 5; i++)
		cookies[i] = COOKIE(20 + i);
	EXPECT_EQ(virtq_add(h->vq, sg, 0, 0, COOKIE(1)), -EINVAL);
	EXPECT_EQ(virtq_add(h->vq, sg, 1, 0, NULL), -EINVAL);
	EXPECT_EQ(virtq_add(h->vq, NULL, 1, 0, COOKIE(1)), -EINVAL);
	EXPECT_EQ(virtq_add(h->vq, sg, 5, 4, COOKIE(1)), -ENOSPC);   /* 9 > num */
	EXPECT_EQ(virtq_num_free(h->vq), 8);
	EXPECT_EQ(virtq_avail_idx(h->vq), h->start);
	EXPECT_EQ(virtq_add(h->vq, sg, 4, 4, COOKIE(1)), 0);         /* all 8 */
	EXPECT_EQ(virtq_num_free(h->vq), 0);
	EXPECT_EQ(virtq_add(h->vq, sg, 0, 1, COOKIE(2)), -ENOSPC);
	EXPECT_EQ(virtq_add_inbufs(h->vq, sg, cookies, 2), 0);
	EXPECT(h_kick(h));
	EXPECT_EQ(h_complete_drain(h, 1), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 8);
	EXPECT_EQ(virtq_add(h->vq, sg, 3, 2, COOKIE(3)), 0);         /* 5 used */
	EXPECT_EQ(virtq_add(h->vq, sg, 2, 2, COOKIE(4)), -ENOSPC);   /* 4 > 3 */
	EXPECT_EQ(virtq_num_free(h->vq), 3);
	EXPECT_EQ(virtq_add_inbufs(h->vq, sg, cookies, 5), 3);       /* partial */
	EXPECT_EQ(virtq_num_free(h->vq), 0);
	/* Split: 1 + 1 + 3 chains; packed: 8 + 5 + 3 descriptors. */
	EXPECT_EQ(virtq_avail_idx(h->vq), (uint16_t)(h->start + (t_packed(cfg) ? 16 : 5)));
	h_kick(h);
	EXPECT_EQ(h_complete_drain(h, 4), 0);
	/* A NULL cookie stops add_inbufs there. */
	cookies[1] = NULL;
	EXPECT_EQ(virtq_add_inbufs(h->vq, sg, cookies, 3), 1);
	EXPECT_EQ(virtq_add_inbufs(h->vq, sg, cookies, 0), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 7);
	return 0;
}

/* add_outbufs: one device-readable descriptor per buffer, in order, len 0 back. */
static int
t_add_outbufs(struct harness *h, const struct test_cfg *cfg)
{
	struct fake_dev_chain c;
	struct virtq_sg sg[8];
	void *cookies[8], *got[8];
	uint32_t lens[8];
	unsigned int i;

	for (i = 0; i < 8; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = 60 + i;
		cookies[i] = COOKIE(40 + i);
	}
	EXPECT_EQ(virtq_add_outbufs(h->vq, sg, cookies, 0), 0);
	EXPECT_EQ(virtq_add_outbufs(h->vq, sg, cookies, 6), 6);
	EXPECT_EQ(virtq_add_outbufs(h->vq, sg, cookies, 6), 2);     /* partial: 2 free */
	EXPECT_EQ(virtq_num_free(h->vq), 0);
	h_kick(h);
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(fake_dev_pop(&h->dev, &c), 1);
		EXPECT_EQ(c.ndescs, 1);
		EXPECT_EQ(c.nout, 1);
		EXPECT_EQ(c.nin, 0);
		EXPECT_EQ(c.out_len, 60 + (i < 6 ? i : i - 6));
		EXPECT_EQ(c.sg[0].addr, sg[i < 6 ? i : i - 6].addr);
		/* A device may write any len for a read-only chain: it is ignored. */
		EXPECT_EQ(fake_dev_push(&h->dev, &c, 99), 0);
	}
	EXPECT_EQ(fake_dev_pop(&h->dev, &c), 0);
	fake_dev_flush(&h->dev);
	EXPECT_EQ(virtq_get_used(h->vq, got, lens, 8), 8);
	for (i = 0; i < 8; i++) {
		EXPECT(got[i] == cookies[i < 6 ? i : i - 6]);
		EXPECT_EQ(lens[i], 0);
	}
	EXPECT_EQ(virtq_num_free(h->vq), 8);
	return 0;
}

/*
 * Publication at the kick: nothing virtq_add_outbufs() adds (either layout)
 * or virtq_add_inbufs() adds (split; @p in_too) is visible before
 * virtq_kick_prepare(), which publishes it all at once and decides the kick
 * over all of it (event idx: an avail event anywhere in the burst asks for
 * one).
 */
static int
t_publish_at_kick(struct harness *h, const struct test_cfg *cfg,
		  const struct virtq_sg *sg, void **cookies, bool in_too)
{
	uint16_t s = h->start, n;
	unsigned int i;

	if (cfg->event_idx)
		fake_dev_set_avail_event(&h->dev, (uint16_t)(s + 9));
	EXPECT_EQ(virtq_add_outbufs(h->vq, sg, cookies, 10), 10);
	EXPECT_EQ(fake_dev_avail_count(&h->dev), 0);
	EXPECT(h_kick(h));                      /* event idx: s+9 in [s, s+10) */
	EXPECT_EQ(fake_dev_avail_count(&h->dev), 10);
	EXPECT(!virtq_kick_prepare(h->vq));       /* nothing new */
	n = 10;
	if (cfg->event_idx) {
		/* Without the device asking, published all the same, no kick. */
		fake_dev_set_avail_event(&h->dev, (uint16_t)(s - 1));
		EXPECT_EQ(virtq_add_outbufs(h->vq, sg, &cookies[10], 3), 3);
		EXPECT(!h_kick(h));
		EXPECT_EQ(fake_dev_avail_count(&h->dev), 13);
		n = 13;
	}
	EXPECT_EQ(h_complete_drain(h, n), 0);
	/* Many laps of bursts of 7 and 9: none visible before its kick. */
	for (i = 0; i < 40; i++) {
		EXPECT_EQ(virtq_add_outbufs(h->vq, sg, cookies, 7), 7);
		EXPECT_EQ(fake_dev_avail_count(&h->dev), 0);
		h_kick(h);
		EXPECT_EQ(fake_dev_avail_count(&h->dev), 7);
		EXPECT_EQ(h_complete_drain(h, 7), 0);
		if (!in_too)
			continue;
		EXPECT_EQ(virtq_add_inbufs(h->vq, sg, cookies, 9), 9);
		EXPECT_EQ(fake_dev_avail_count(&h->dev), 0);
		h_kick(h);
		EXPECT_EQ(fake_dev_avail_count(&h->dev), 9);
		EXPECT_EQ(h_complete_drain(h, 9), 0);
	}
	EXPECT_EQ(virtq_num_free(h->vq), 32);
	return 0;
}

/*
 * Packed publication: virtq_add_inbufs() publishes each complete group of
 * virtq_publish_group() positions (a cache line of descriptors) as it adds;
 * an incomplete group and a chain added behind it wait for
 * virtq_kick_prepare(), and so does everything virtq_add_outbufs() adds.
 * The kick decision covers everything published since the last decision,
 * early groups included (event idx: an avail event inside an early group
 * asks for a kick).
 */
static int
t_publish_groups(struct harness *h, const struct test_cfg *cfg)
{
	struct virtq_sg sg[32];
	void *cookies[32];
	uint16_t s, g, q, n, G, pub;
	unsigned int i;

	G = virtq_publish_group(h->vq);
	EXPECT_EQ(G, t_packed(cfg) ? 4 : 0);
	t_bufs(sg, cookies, 32, 60, 1);
	if (G == 0)
		return t_publish_at_kick(h, cfg, sg, cookies, true);
	if (t_publish_at_kick(h, cfg, sg, cookies, false) != 0)
		return -1;
	s = virtq_avail_idx(h->vq);
	g = (uint16_t)((G - (s & (G - 1))) & (G - 1));   /* to the next multiple of G */
	if (cfg->event_idx)
		fake_dev_set_avail_event(&h->dev, (uint16_t)(s + g + 1));
	/* g + G + 2 buffers: groups up to s + g + G published, two held. */
	n = (uint16_t)(g + G + 2);
	EXPECT_EQ(virtq_add_inbufs(h->vq, sg, cookies, n), n);
	EXPECT_EQ(fake_dev_avail_count(&h->dev), g + G);
	EXPECT(h_kick(h));                      /* event idx: s+g+1 in [s, s+n) */
	EXPECT_EQ(fake_dev_avail_count(&h->dev), n);
	EXPECT(!virtq_kick_prepare(h->vq));       /* nothing new */

	/* From q = 2 mod G: one buffer (no group complete), then G more: the
	 * group ending at q + G - 2 is published, three stay held.
	 */
	q = (uint16_t)(s + n);
	if (cfg->event_idx)
		fake_dev_set_avail_event(&h->dev, (uint16_t)(q + 1));
	EXPECT_EQ(virtq_add_inbufs(h->vq, sg, &cookies[n], 1), 1);
	EXPECT_EQ(fake_dev_avail_count(&h->dev), n);
	EXPECT_EQ(virtq_add_inbufs(h->vq, &sg[1], &cookies[n + 1], G), G);
	EXPECT_EQ(fake_dev_avail_count(&h->dev), n + G - 2);
	/* A chain behind the held ones stays invisible too. */
	EXPECT_EQ(h_add_chain(h, 60, 1, 2, 8), 0);
	EXPECT_EQ(fake_dev_avail_count(&h->dev), n + G - 2);
	EXPECT(h_kick(h));                      /* event idx: q+1 in [q, ...) */
	EXPECT_EQ(fake_dev_avail_count(&h->dev), n + G + 2);

	/* Without the device asking, nothing kicks. */
	if (cfg->event_idx) {
		fake_dev_set_avail_event(&h->dev, (uint16_t)(s - 1));
		EXPECT_EQ(h_add_in(h, 70), 0);
		EXPECT(!h_kick(h));
		n++;
	}
	EXPECT_EQ(h_complete_drain(h, n + G + 2), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 32);

	/* Many laps of bursts of 9 receive buffers (9 is 1 mod G, so each
	 * burst starts one position further into a group): group edges fall
	 * everywhere in a burst, the device never sees what was not
	 * published, and every buffer comes back. (Send buffers are
	 * t_publish_at_kick()'s.)
	 */
	for (i = 0; i < 40; i++) {
		q = virtq_avail_idx(h->vq);
		EXPECT_EQ(virtq_add_inbufs(h->vq, sg, cookies, 9), 9);
		pub = (uint16_t)((q + 9) & ~(G - 1));
		EXPECT_EQ(fake_dev_avail_count(&h->dev),
			 (uint16_t)(pub - q) <= 9 ? (uint16_t)(pub - q) : 0);
		h_kick(h);
		EXPECT_EQ(fake_dev_avail_count(&h->dev), 9);
		EXPECT_EQ(h_complete_drain(h, 9), 0);
	}
	return 0;
}

/*
 * Set up a mix of outstanding chains: published and popped, completed but
 * not taken, not yet published; one taken. Fills @p expect[id] for the
 * cookies that must come back.
 */
static int
h_outstanding_mix(struct harness *h, bool expect[16])
{
	struct fake_dev_chain c[6];
	void *taken;
	unsigned int i;

	memset(expect, 0, 16 * sizeof(expect[0]));
	for (i = 0; i < 6; i++) {
		if (h_add_chain(h, i + 1, (uint16_t)(i % 2), (uint16_t)(1 + i % 2), 8) != 0)
			return -1;
		expect[i + 1] = true;
	}
	h_kick(h);
	/* Not published: one at a time (the bulk path would publish a
	 * complete packed group).
	 */
	for (i = 0; i < 4; i++) {
		if (h_add_in(h, 7 + i) != 0)
			return -1;
		expect[7 + i] = true;
	}
	for (i = 0; i < 6; i++)
		if (h_dev_pop(h, &c[i]) != 0)
			return -1;
	/* Device completes 2, 4, 5; the driver takes one (2). */
	if (fake_dev_push(&h->dev, &c[1], 1) != 0 || fake_dev_push(&h->dev, &c[3], 1) != 0 ||
	    fake_dev_push(&h->dev, &c[4], 1) != 0)
		return -1;
	fake_dev_flush(&h->dev);
	if (virtq_get_used(h->vq, &taken, NULL, 1) != 1 || taken != COOKIE(2))
		return -1;
	expect[2] = false;
	return 0;
}

static int
t_detach_unused(struct harness *h, const struct test_cfg *cfg)
{
	bool expect[16];
	bool seen[16];
	void *cookie;
	unsigned int n = 0;

	memset(seen, 0, sizeof(seen));
	EXPECT_EQ(h_outstanding_mix(h, expect), 0);
	EXPECT_EQ(virtq_num_free(h->vq), 3);          /* 16 - 16 posted + 3 taken */
	EXPECT_EQ(virtq_outstanding(h->vq), 9);
	while ((cookie = virtq_detach_unused(h->vq)) != NULL) {
		unsigned int id = COOKIE_ID(cookie);

		EXPECT_EQ(virtq_outstanding(h->vq), 9 - n - 1);

		EXPECT(id < 16);
		EXPECT(expect[id]);
		EXPECT(!seen[id]);
		seen[id] = true;
		n++;
	}
	EXPECT_EQ(n, 9);
	EXPECT(virtq_detach_unused(h->vq) == NULL);
	EXPECT_EQ(virtq_num_free(h->vq), 16);
	return 0;
}

/* After detaching, virtq_init restarts the queue at another index. */
static int
t_reinit_after_detach(struct harness *h, const struct test_cfg *cfg)
{
	bool expect[16];
	uint16_t s2;
	unsigned int i;

	s2 = (uint16_t)(h->start + 0x1234);
	EXPECT_EQ(h_outstanding_mix(h, expect), 0);
	while (virtq_detach_unused(h->vq) != NULL)
		;
	EXPECT_EQ(h_restart(h, s2), 0);
	EXPECT_EQ(virtq_avail_idx(h->vq), s2);
	EXPECT_EQ(virtq_last_used_idx(h->vq), s2);
	EXPECT_EQ(virtq_num_free(h->vq), 16);
	EXPECT_EQ(virtq_stats(h->vq)->kicks, 0);
	EXPECT(!virtq_intr_enabled(h->vq));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(h_round_trip(h, 16), 0);
	EXPECT_EQ(virtq_avail_idx(h->vq), (uint16_t)(s2 + 80));
	EXPECT_EQ(virtq_last_used_idx(h->vq), (uint16_t)(s2 + 80));
	EXPECT(virtq_detach_unused(h->vq) == NULL);
	return 0;
}

/*
 * SET_VRING_BASE / GET_VRING_BASE: the device decodes virtq_vring_base() into
 * the driver's start position (h_restart() attaches it that way); after
 * traffic, what the stopped device answers is exactly the vring base of a
 * queue re-initialised at the driver's avail index, and the restarted pair
 * works.
 */
static int
t_vring_base(struct harness *h, const struct test_cfg *cfg)
{
	uint16_t base, i;

	EXPECT_EQ(virtq_vring_base(h->vq), t_packed(cfg) ? h_pos_enc(h, h->start) : h->start);
	EXPECT_EQ(fake_dev_vring_base(&h->dev), virtq_vring_base(h->vq));
	for (i = 0; i < 7; i++) {
		EXPECT_EQ(h_add_chain(h, i + 1, 1, (uint16_t)(1 + i % 3), 8), 0);
		h_kick(h);
		EXPECT_EQ(h_complete_drain(h, 1), 0);
	}
	EXPECT_EQ(virtq_avail_idx(h->vq), (uint16_t)(h->start + (t_packed(cfg) ? 7 + 13 : 7)));
	base = fake_dev_vring_base(&h->dev);         /* GET_VRING_BASE */
	EXPECT_EQ(h_restart(h, virtq_avail_idx(h->vq)), 0);
	EXPECT_EQ(virtq_vring_base(h->vq), base);
	EXPECT_EQ(fake_dev_vring_base(&h->dev), base);
	EXPECT_EQ(h_round_trip(h, 16), 0);
	EXPECT_EQ(h_round_trip(h, 16), 0);
	return 0;
}

static const struct test_case cases[] = {
	{ "params and sizes", t_params_sizes, RUN_ONCE, ON_BOTH },
	{ "need_event truth table", t_need_event_table, RUN_ONCE, ON_BOTH },
	{ "init layout", NULL, RUN_ALL, ON_BOTH, .h = { t_init_layout, 256, 0, H_END } },
	{ "index wrap round trips", t_wrap, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "add errors", NULL, RUN_ALL, ON_BOTH, .h = { t_add_errors, 8, 0, H_END_CLEAN } },
	{ "add_outbufs", NULL, RUN_ALL, ON_BOTH, .h = { t_add_outbufs, 8, 0, H_END_HEALTHY } },
	{ "bulk adds publish whole groups", NULL, RUN_ALL, ON_BOTH,
	  .h = { t_publish_groups, 32, 0, H_END_HEALTHY } },
	{ "detach_unused", NULL, RUN_ALL, ON_BOTH, ORDER_ANY,
	  .h = { t_detach_unused, 16, 0, H_END } },
	{ "re-init after detach", NULL, RUN_ALL, ON_BOTH, ORDER_ANY,
	  .h = { t_reinit_after_detach, 16, 0, H_END_CLEAN } },
	{ "vring base", NULL, RUN_ALL, ON_BOTH, .h = { t_vring_base, 16, 0, H_END_HEALTHY } },
	{ "index wrap round trips, indirect tables of 2", t_wrap, RUN_ALL, ON_BOTH, ORDER_ANY, 2 },
};

const struct test_section test_section_ring = { cases, RTE_DIM(cases) };
