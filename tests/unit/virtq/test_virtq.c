/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Unit tests of lib/virtq against the fake device, TAP output.
 *
 * One case table runs over a table of configurations: layout (split, packed)
 * x event idx (on, off) x start index (split: 0, 0xFFF0; packed: 0, and 16
 * slots before a wrap counter flip with either counter value). A case says
 * which configurations it needs; cases that do not depend on the
 * configuration run once.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_device.h"
#include "unit_check.h"
#include "virtq.h"
#include "virtq_ring.h"

/* Where a configuration starts its indices (see t_start()). */
enum test_start {
	START_ZERO,     /* a fresh ring */
	START_NEAR,     /* split: 0xFFF0; packed: slot num - 16, wrap counter 0, then 2^16 */
	START_NEAR_W1,  /* packed: slot num - 16, wrap counter 1 */
};

struct test_cfg {
	enum virtq_layout layout;
	bool event_idx;
	enum test_start start;
	bool in_order;   /* params.in_order; the fake device batches as lib/vhost */
};

static const struct test_cfg test_cfgs[] = {
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = false, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = false, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = true, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = true, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_NEAR_W1 },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_NEAR_W1 },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = false, .start = START_NEAR, .in_order = true },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = true, .start = START_ZERO, .in_order = true },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_NEAR_W1,
	  .in_order = true },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_NEAR, .in_order = true },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_ZERO, .in_order = true },
};

/*
 * The start index of a configuration for a queue of @p num entries. Packed
 * positions are free-running like split indices; the wrap counter of a
 * position is 1 when position / num is even. For num >= 16, 0xFFF0 is slot
 * num - 16 with wrap counter 0 (16 slots later both the counter flips and
 * the index crosses 2^16), and 0xFFF0 - num is slot num - 16 with counter 1.
 */
static uint16_t
t_start(const struct test_cfg *cfg, uint16_t num)
{
	switch (cfg->start) {
	case START_ZERO:
		return 0;
	case START_NEAR:
		return 0xFFF0;
	case START_NEAR_W1:
		return (uint16_t)(0xFFF0 - num);
	}
	return 0;
}

static bool
t_packed(const struct test_cfg *cfg)
{
	return cfg->layout == VIRTQ_LAYOUT_PACKED;
}

/* Which configurations a case runs on: an event idx filter ... */
enum test_runs {
	RUN_ALL,        /* every configuration */
	RUN_EVENT_IDX,  /* event idx on */
	RUN_FLAGS,      /* event idx off */
	RUN_ONCE,       /* independent of the configuration */
};

/* ... and a layout filter. */
enum test_layouts {
	ON_BOTH,
	ON_SPLIT,
	ON_PACKED,
};

/* Cookies: small non-NULL integers. */
#define COOKIE(i) ((void *)(uintptr_t)(i))
#define COOKIE_ID(c) ((unsigned int)(uintptr_t)(c))

/* Buffer memory the device writes into (wrap test). */
#define T_SEG_SIZE 64
static uint8_t t_mem[64][4][T_SEG_SIZE];

static uint64_t
t_seg_addr(unsigned int slot, unsigned int seg)
{
	return (uint64_t)(uintptr_t)t_mem[slot][seg];
}

/* Deterministic PRNG (xorshift32). */
static uint32_t t_rng_state = 2463534242u;

static uint32_t
t_rand(void)
{
	uint32_t x = t_rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t_rng_state = x;
	return x;
}

/* ---- harness: a driver queue and the fake device on it ---- */

struct harness {
	struct virtq_params p;
	uint16_t start;            /* the configuration's start index for this num */
	struct virtq *vq;
	uint8_t *ring;
	size_t ring_size;
	struct fake_dev dev;
	bool dev_up;
};

static void
h_teardown(struct harness *h)
{
	if (h->dev_up)
		fake_dev_fini(&h->dev);
	free(h->vq);
	free(h->ring);
	memset(h, 0, sizeof(*h));
}

static size_t
t_round_up(size_t n, size_t align)
{
	return (n + align - 1) / align * align;
}

/* (Re)start queue and device at @p start. */
static int
h_restart(struct harness *h, uint16_t start)
{
	int ret;

	if (h->dev_up) {
		fake_dev_fini(&h->dev);
		h->dev_up = false;
	}
	h->p.start_idx = start;
	ret = virtq_init(h->vq, &h->p, h->ring);
	if (ret != 0) {
		printf("#   virtq_init: %d\n", ret);
		return ret;
	}
	ret = fake_dev_init(&h->dev, &h->p, virtq_vring_base(h->vq), virtq_desc_area(h->vq),
			    virtq_driver_area(h->vq), virtq_device_area(h->vq));
	if (ret != 0) {
		printf("#   fake_dev_init: %d %s\n", ret, h->dev.error);
		return ret;
	}
	h->dev_up = true;
	return 0;
}

/* A queue of @p num entries with @p indirect_max (0: no indirect descriptors). */
static int
h_setup_ind(struct harness *h, const struct test_cfg *cfg, uint16_t num, uint16_t indirect_max)
{
	size_t state_size;

	memset(h, 0, sizeof(*h));
	h->p.layout = cfg->layout;
	h->p.num = num;
	h->p.event_idx = cfg->event_idx;
	h->p.indirect_max = indirect_max;
	h->p.in_order = cfg->in_order;
	h->start = t_start(cfg, num);
	h->p.start_idx = h->start;
	h->ring_size = virtq_ring_mem_size(&h->p);
	state_size = virtq_state_size(&h->p);
	if (h->ring_size == 0 || state_size == 0)
		return -EINVAL;
	h->ring = aligned_alloc(VIRTQ_RING_ALIGN, t_round_up(h->ring_size, VIRTQ_RING_ALIGN));
	h->vq = aligned_alloc(64, t_round_up(state_size, 64));
	if (h->ring == NULL || h->vq == NULL)
		return -ENOMEM;
	/* Garbage first: init must not depend on zeroed memory. */
	memset(h->ring, 0xA5, h->ring_size);
	memset(h->vq, 0x5A, state_size);
	return h_restart(h, h->start);
}

static int
h_setup(struct harness *h, const struct test_cfg *cfg, uint16_t num)
{
	return h_setup_ind(h, cfg, num, 0);
}

/* Ring descriptors (packed: slots) a chain of @p n elements takes. */
static uint16_t
h_chain_slots(const struct harness *h, uint32_t n)
{
	bool ind = n >= 2 && n <= h->p.indirect_max && n < h->p.num;

	return ind ? 1 : (uint16_t)n;
}

/* Wrap counter of a packed position. */
static bool
h_wrap(const struct harness *h, uint16_t pos)
{
	return ((pos / h->p.num) & 1) == 0;
}

/* The spec's 16-bit form of a packed position: slot | wrap counter << 15. */
static uint16_t
h_pos_enc(const struct harness *h, uint16_t pos)
{
	return (uint16_t)((pos & (h->p.num - 1)) | (h_wrap(h, pos) << 15));
}

/* The opaque virtq_enable_intr_prepare() returns at last used @p pos. */
static uint32_t
h_opaque(const struct harness *h, uint16_t pos)
{
	return h->p.layout == VIRTQ_LAYOUT_PACKED ? h_pos_enc(h, pos) : pos;
}

/* Publish and, if the driver says so, deliver the kick. */
static bool
h_kick(struct harness *h)
{
	bool kick = virtq_kick_prepare(h->vq);

	if (kick)
		fake_dev_kick(&h->dev);
	return kick;
}

/* Device: pop everything available, complete it (len = writable length), flush. */
static int
h_dev_complete_all(struct harness *h)
{
	struct fake_dev_chain c;
	int n = 0;
	int r;

	while ((r = fake_dev_pop(&h->dev, &c)) == 1) {
		if (fake_dev_push(&h->dev, &c, c.in_len) != 0)
			return -EINVAL;
		n++;
	}
	if (r < 0) {
		printf("#   fake device: %s\n", h->dev.error);
		return r;
	}
	fake_dev_flush(&h->dev);
	return n;
}

/* Device: pop one chain (must be there). */
static int
h_dev_pop(struct harness *h, struct fake_dev_chain *c)
{
	int r = fake_dev_pop(&h->dev, c);

	if (r != 1)
		printf("#   fake_dev_pop: %d %s\n", r, h->dev.error);
	return r == 1 ? 0 : -1;
}

/* One single-descriptor writable buffer. */
static int
h_add_in(struct harness *h, unsigned int id)
{
	struct virtq_sg sg = { .addr = t_seg_addr(id % 64, 0), .len = T_SEG_SIZE };

	return virtq_add(h->vq, &sg, 0, 1, COOKIE(id));
}

/* A chain of @p out readable then @p in writable descriptors. */
static int
h_add_chain(struct harness *h, unsigned int id, uint16_t out, uint16_t in, uint32_t seg_len)
{
	struct virtq_sg sg[FAKE_DEV_MAX_SG];
	uint16_t i;

	for (i = 0; i < out + in && i < FAKE_DEV_MAX_SG; i++) {
		sg[i].addr = t_seg_addr(id % 64, i % 4);
		sg[i].len = seg_len;
	}
	return virtq_add(h->vq, sg, out, in, COOKIE(id));
}

/* Driver: take one round of completions and discard them; returns the count. */
static uint16_t
h_drain(struct harness *h)
{
	void *cookies[64];
	uint16_t total = 0;
	uint16_t n;

	while ((n = virtq_get_used(h->vq, cookies, NULL, 64)) > 0)
		total += n;
	return total;
}

/* ---- cases ---- */

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
	int ret = -1;

	CHECK_EQ(h->ring_size, 8192 + 4 + 256 * 8 + 2);
	CHECK(virtq_desc_area(h->vq) == h->ring);
	CHECK(virtq_driver_area(h->vq) == h->ring + 256 * 16);
	CHECK(virtq_device_area(h->vq) == h->ring + 8192);
	avail = virtq_driver_area(h->vq);
	used = virtq_device_area(h->vq);
	CHECK_EQ(avail->idx, s);
	CHECK_EQ(used->idx, s);
	CHECK_EQ(*virtq_avail_event(used, 256), s);
	CHECK_EQ(used->flags, 0);
	if (h->p.event_idx) {
		CHECK_EQ(avail->flags, 0);
		CHECK_EQ(*virtq_used_event(avail, 256), (uint16_t)(s - 1));
	} else {
		CHECK_EQ(avail->flags, VIRTQ_AVAIL_F_NO_INTERRUPT);
		CHECK_EQ(*virtq_used_event(avail, 256), 0);
	}
	/* The rest of the ring is zeroed. */
	for (size_t i = 0; i < 256 * 16; i++)
		CHECK_EQ(h->ring[i], 0);
	CHECK_EQ(virtq_vring_base(h->vq), s);
	ret = 0;
teardown:
	return ret;
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
	int ret = -1;

	CHECK_EQ(h->ring_size, 256 * 16 + 64 + 4);
	CHECK(virtq_desc_area(h->vq) == h->ring);
	CHECK(virtq_driver_area(h->vq) == h->ring + 256 * 16);
	CHECK(virtq_device_area(h->vq) == h->ring + 256 * 16 + 64);
	/* Slots from the start on: used in the lap before; before it: used
	 * in this lap. Nothing else written.
	 */
	for (i = 0; i < 256; i++) {
		bool lap = i < slot ? w : !w;

		CHECK_EQ(desc[i].flags, lap ? VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED : 0);
		CHECK_EQ(desc[i].addr, 0);
		CHECK_EQ(desc[i].len, 0);
		CHECK_EQ(desc[i].id, 0);
	}
	CHECK_EQ(drv->flags, VIRTQ_EVENT_F_DISABLE);
	CHECK_EQ(drv->off_wrap, 0);
	CHECK_EQ(dev->flags, 0);
	CHECK_EQ(dev->off_wrap, 0);
	CHECK_EQ(virtq_vring_base(h->vq), h_pos_enc(h, s));
	if (s == 0)
		CHECK_EQ(virtq_vring_base(h->vq), 0x8000);   /* what DPDK virtio-user sends */
	ret = 0;
teardown:
	return ret;
}

static int
t_init_layout(const struct test_cfg *cfg)
{
	struct harness h;
	uint16_t s;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 256), 0);
	s = h.start;
	if (t_packed(cfg))
		CHECK_EQ(t_init_layout_packed(&h), 0);
	else
		CHECK_EQ(t_init_layout_split(&h), 0);
	CHECK_EQ(virtq_params(h.vq)->num, 256);
	CHECK_EQ(virtq_params(h.vq)->start_idx, s);
	CHECK_EQ(virtq_num_free(h.vq), 256);
	CHECK_EQ(virtq_avail_idx(h.vq), s);
	CHECK_EQ(virtq_last_used_idx(h.vq), s);
	CHECK(!virtq_intr_enabled(h.vq));
	CHECK(!virtq_is_broken(h.vq));
	CHECK(virtq_broken_reason(h.vq) == NULL);
	CHECK_EQ(virtq_stats(h.vq)->kicks + virtq_stats(h.vq)->kicks_suppressed +
		 virtq_stats(h.vq)->bad_used + virtq_stats(h.vq)->intr_arms, 0);
	CHECK_EQ(virtq_used_count(h.vq), 0);
	CHECK(virtq_detach_unused(h.vq) == NULL);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
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
	int ret = -1;
	size_t i;

	(void)cfg;
	for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		CHECK_EQ(virtq_need_event(edge[i].event, edge[i].new_idx, edge[i].old),
			 edge[i].expect);
		CHECK_EQ(t_need_event_ref(edge[i].event, edge[i].new_idx, edge[i].old),
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
						goto teardown;
					}
				}
			}
		}
	}
	ret = 0;
teardown:
	return ret;
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
 * indices end exactly where the counts say.
 */
static int
t_wrap_ind(const struct test_cfg *cfg, uint16_t indirect_max)
{
	enum { NUM = 8 };
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
	t_rng_state = 2463534242u;
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
	h_teardown(&h);
	return ret;
}

static int
t_wrap(const struct test_cfg *cfg)
{
	return t_wrap_ind(cfg, 0);
}

/* The same with tables of 2: chains of 2 go indirect, chains of 3 stay direct. */
static int
t_wrap_indirect(const struct test_cfg *cfg)
{
	return t_wrap_ind(cfg, 2);
}

/* Kick suppression, flag mode: exact counts for a scripted sequence. */
static int
t_kick_no_notify(const struct test_cfg *cfg)
{
	struct harness h;
	const struct virtq_stats *st;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 16), 0);
	st = virtq_stats(h.vq);
	CHECK(!h_kick(&h));                        /* nothing added: nothing counted */
	CHECK_EQ(st->kicks + st->kicks_suppressed, 0);
	CHECK_EQ(h_add_in(&h, 1), 0);
	CHECK(h_kick(&h));
	CHECK_EQ(st->kicks, 1);
	CHECK_EQ(st->kicks_suppressed, 0);
	CHECK(!h_kick(&h));
	CHECK_EQ(st->kicks, 1);
	CHECK_EQ(st->kicks_suppressed, 0);
	fake_dev_set_no_notify(&h.dev, true);
	CHECK_EQ(h_add_in(&h, 2), 0);
	CHECK_EQ(h_add_chain(&h, 3, 1, 1, 10), 0);
	CHECK(!h_kick(&h));
	CHECK_EQ(st->kicks, 1);
	CHECK_EQ(st->kicks_suppressed, 1);
	CHECK_EQ(h_add_in(&h, 4), 0);
	CHECK(!h_kick(&h));
	CHECK_EQ(st->kicks_suppressed, 2);
	fake_dev_set_no_notify(&h.dev, false);
	CHECK_EQ(h_add_in(&h, 5), 0);
	CHECK(h_kick(&h));
	CHECK(!h_kick(&h));
	CHECK_EQ(st->kicks, 2);
	CHECK_EQ(st->kicks_suppressed, 2);
	CHECK_EQ(h.dev.kicks, 2);
	/* Five chains, six descriptors. */
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(h.start + (t_packed(cfg) ? 6 : 5)));
	if (!t_packed(cfg))
		CHECK_EQ(((struct virtq_avail *)virtq_driver_area(h.vq))->idx,
			 (uint16_t)(h.start + 5));
	CHECK_EQ(h_dev_complete_all(&h), 5);
	CHECK_EQ(h_drain(&h), 5);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * Kick suppression, event idx: exact counts for a scripted sequence that
 * crosses index 0 (split, start 0xFFF0) or a wrap counter flip (packed, near
 * wrap starts). Positions are taken from virtq_avail_idx(), so a two-slot
 * packed chain shifts them by one.
 */
static int
t_kick_avail_event(const struct test_cfg *cfg)
{
	struct harness h;
	const struct virtq_stats *st;
	uint64_t k0, s0, d0;
	uint16_t b, p;
	unsigned int i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 16), 0);
	st = virtq_stats(h.vq);
	/* Prime: 13 round trips, the device asking for every kick. */
	for (i = 0; i < 13; i++) {
		fake_dev_set_avail_event(&h.dev, h.dev.last_avail);
		CHECK_EQ(h_add_in(&h, i + 1), 0);
		CHECK(h_kick(&h));
		CHECK_EQ(h_dev_complete_all(&h), 1);
		CHECK_EQ(h_drain(&h), 1);
	}
	CHECK_EQ(st->kicks, 13);
	CHECK_EQ(st->kicks_suppressed, 0);
	b = (uint16_t)(h.start + 13);
	CHECK_EQ(virtq_avail_idx(h.vq), b);
	k0 = st->kicks;
	s0 = st->kicks_suppressed;
	d0 = h.dev.kicks;

	fake_dev_set_avail_event(&h.dev, b);
	CHECK_EQ(h_add_in(&h, 101), 0);
	CHECK(h_kick(&h));                          /* b in [b, b+1) */
	CHECK_EQ(h_add_in(&h, 102), 0);
	CHECK(!h_kick(&h));                         /* b not in [b+1, b+2) */
	CHECK_EQ(fake_dev_avail_count(&h.dev), 2);
	CHECK_EQ(h_dev_complete_all(&h), 2);
	CHECK_EQ(h_drain(&h), 2);
	fake_dev_set_avail_event(&h.dev, (uint16_t)(b + 2));
	for (i = 0; i < 3; i++)
		CHECK_EQ(h_add_in(&h, 103 + i), 0);
	CHECK(h_kick(&h));                          /* b+2 in [b+2, b+5) */
	fake_dev_set_avail_event(&h.dev, (uint16_t)(b + 10));
	CHECK_EQ(h_add_chain(&h, 106, 1, 1, 8), 0);
	p = virtq_avail_idx(h.vq);                  /* b+6 split, b+7 packed */
	CHECK(!h_kick(&h));                         /* [b+5, p) */
	for (i = 0; i < 6; i++)
		CHECK_EQ(h_add_in(&h, 107 + i), 0);
	CHECK(h_kick(&h));                          /* b+10 in [p, p+6) */
	CHECK(!h_kick(&h));                         /* nothing new: not counted */
	fake_dev_set_avail_event(&h.dev, (uint16_t)(b + 1));
	CHECK_EQ(h_add_in(&h, 113), 0);
	CHECK(!h_kick(&h));                         /* event far behind */
	p = virtq_avail_idx(h.vq);
	fake_dev_set_avail_event(&h.dev, (uint16_t)(p + 1));
	CHECK_EQ(h_add_in(&h, 114), 0);
	CHECK(!h_kick(&h));                         /* event == new: not yet */
	CHECK_EQ(h_add_in(&h, 115), 0);
	CHECK(h_kick(&h));                          /* p+1 in [p+1, p+2) */
	CHECK_EQ(st->kicks - k0, 4);
	CHECK_EQ(st->kicks_suppressed - s0, 4);
	CHECK_EQ(h.dev.kicks - d0, 4);
	CHECK_EQ(h_dev_complete_all(&h), 13);
	CHECK_EQ(h_drain(&h), 13);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* One device round: n inbufs added, published, completed, taken. Returns the
 * call decision of the flush, or -1.
 */
static int
h_round_trip(struct harness *h, uint16_t n)
{
	struct virtq_sg sg[64];
	void *cookies[64];
	uint16_t i;
	int calls_before = (int)h->dev.calls;

	for (i = 0; i < n; i++) {
		sg[i].addr = t_seg_addr(i % 64, 0);
		sg[i].len = T_SEG_SIZE;
		cookies[i] = COOKIE(i + 1);
	}
	if (virtq_add_inbufs(h->vq, sg, cookies, n) != n)
		return -1;
	h_kick(h);
	if (h_dev_complete_all(h) != n)
		return -1;
	if (virtq_get_used(h->vq, cookies, NULL, 64) != n)
		return -1;
	return (int)h->dev.calls - calls_before;
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
t_intr_suppression(const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	struct harness h;
	uint32_t word, changes = 0;
	uint16_t i;
	uint32_t opaque;
	uint32_t rounds;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, NUM), 0);
	word = h_intr_word(&h);
	for (rounds = 0; rounds < 70000 / NUM; rounds++) {
		uint32_t wd;

		CHECK_EQ(h_round_trip(&h, NUM), 0);
		wd = h_intr_word(&h);
		if (t_packed(cfg)) {
			CHECK_EQ(wd >> 16, VIRTQ_EVENT_F_DISABLE);
		} else if (cfg->event_idx) {
			uint16_t dist = (uint16_t)(virtq_last_used_idx(h.vq) - wd);

			/* Out of reach: behind the last used, at most 2^15 back. */
			CHECK(dist >= 1 && dist <= 0x8000);
		}
		if (wd != word)
			changes++;
		word = wd;
	}
	CHECK_EQ(h.dev.calls, 0);
	CHECK_EQ(h.dev.call_checks, rounds);
	/* Split event idx: rewritten only at 2^15 and 2^16 completions.
	 * Packed: DISABLE is never rewritten.
	 */
	CHECK_EQ(changes, cfg->event_idx && !t_packed(cfg) ? 2 : 0);
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(h.start + rounds * NUM));
	CHECK_EQ(virtq_stats(h.vq)->intr_arms, 0);

	/* Arm, the device completes 3 buffers in one go: one call. */
	for (i = 0; i < 3; i++)
		CHECK_EQ(h_add_in(&h, i + 1), 0);
	h_kick(&h);
	opaque = virtq_enable_intr_prepare(h.vq);
	CHECK_EQ(opaque, h_opaque(&h, virtq_last_used_idx(h.vq)));
	if (t_packed(cfg))
		CHECK_EQ(h_intr_word(&h), cfg->event_idx ?
			 (uint32_t)VIRTQ_EVENT_F_DESC << 16 | opaque :
			 (uint32_t)VIRTQ_EVENT_F_ENABLE << 16);
	CHECK(virtq_intr_enabled(h.vq));
	CHECK(!virtq_poll(h.vq, opaque));
	CHECK_EQ(virtq_stats(h.vq)->intr_arms, 1);
	CHECK_EQ(h_dev_complete_all(&h), 3);
	CHECK_EQ(h.dev.calls, 1);
	CHECK(virtq_poll(h.vq, opaque));
	/* The device completes one more before the driver reacts: event idx
	 * already fired for this arming; flag mode calls again.
	 */
	CHECK_EQ(h_add_in(&h, 4), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_complete_all(&h), 1);
	CHECK_EQ(h.dev.calls, cfg->event_idx ? 1 : 2);
	virtq_disable_intr(h.vq);
	CHECK(!virtq_intr_enabled(h.vq));
	CHECK_EQ(h_drain(&h), 4);
	/* Disarmed again: nothing. */
	CHECK_EQ(h_round_trip(&h, 5), 0);
	CHECK_EQ(h.dev.calls, cfg->event_idx ? 1 : 2);
	/* Re-arm with everything taken: exactly one call for the next batch. */
	opaque = virtq_enable_intr_prepare(h.vq);
	CHECK(!virtq_poll(h.vq, opaque));
	CHECK_EQ(h_round_trip(&h, 2), 1);
	CHECK_EQ(virtq_stats(h.vq)->intr_arms, 2);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* The re-arm race: a completion between enable_intr_prepare and poll. */
static int
t_rearm_race(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c[3];
	void *cookie;
	uint32_t opaque;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	CHECK_EQ(h_add_in(&h, 1), 0);
	CHECK_EQ(h_add_in(&h, 2), 0);
	CHECK_EQ(h_add_in(&h, 3), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c[0]), 0);
	CHECK_EQ(h_dev_pop(&h, &c[1]), 0);
	CHECK_EQ(h_dev_pop(&h, &c[2]), 0);

	/* Nothing pending: arm, poll says no work. */
	opaque = virtq_enable_intr_prepare(h.vq);
	CHECK(!virtq_poll(h.vq, opaque));
	virtq_disable_intr(h.vq);

	/* Completion lands between prepare and poll. */
	opaque = virtq_enable_intr_prepare(h.vq);
	CHECK_EQ(fake_dev_push(&h.dev, &c[0], 5), 0);
	CHECK(fake_dev_flush(&h.dev));              /* armed: the device calls */
	CHECK(virtq_poll(h.vq, opaque));
	virtq_disable_intr(h.vq);
	CHECK_EQ(virtq_get_used(h.vq, &cookie, NULL, 1), 1);
	CHECK(cookie == COOKIE(1));

	/* Completion before prepare, while disarmed (no call): prepare must
	 * still let poll see it, though no call will ever come for it.
	 */
	CHECK_EQ(fake_dev_push(&h.dev, &c[1], 5), 0);
	CHECK(!fake_dev_flush(&h.dev));
	opaque = virtq_enable_intr_prepare(h.vq);
	CHECK(virtq_poll(h.vq, opaque));
	virtq_disable_intr(h.vq);
	CHECK_EQ(virtq_get_used(h.vq, &cookie, NULL, 1), 1);
	CHECK(cookie == COOKIE(2));

	/* Armed and idle; then the device completes: one call, poll true. */
	opaque = virtq_enable_intr_prepare(h.vq);
	CHECK(!virtq_poll(h.vq, opaque));
	CHECK_EQ(fake_dev_push(&h.dev, &c[2], 5), 0);
	CHECK(fake_dev_flush(&h.dev));
	CHECK(virtq_poll(h.vq, opaque));
	CHECK_EQ(h.dev.calls, 2);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
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
	h_teardown(&h);
	return ret;
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
t_bad_used_jump_count(const struct test_cfg *cfg)
{
	struct harness h;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	CHECK_EQ(h_add_in(&h, 1), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_complete_all(&h), 1);
	CHECK_EQ(virtq_used_count(h.vq), 1);
	CHECK_EQ(h_drain(&h), 1);
	CHECK_EQ(h_add_in(&h, 2), 0);
	/* Exactly num + 1 past the last used: one too many. */
	fake_dev_inject_used_jump(&h.dev);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_used_count(h.vq), 0);
	CHECK(virtq_is_broken(h.vq));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK(strcmp(virtq_broken_reason(h.vq),
		     "used idx moved more than num past the last used") == 0);
	CHECK(virtq_detach_unused(h.vq) == COOKIE(2));
	CHECK(virtq_detach_unused(h.vq) == NULL);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * Boundaries of the used idx check: a full ring (num completions pending) is
 * valid; num + 1 past the last used breaks get_used, and so does a used idx
 * that moves backwards.
 */
static int
t_used_idx_bounds(const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	struct harness h;
	void *cookies[NUM];
	uint32_t lens[NUM];
	unsigned int i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, NUM), 0);
	for (i = 0; i < NUM; i++)
		CHECK_EQ(h_add_in(&h, i + 1), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_complete_all(&h), NUM);
	CHECK_EQ(virtq_used_count(h.vq), NUM);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, NUM), NUM);
	for (i = 0; i < NUM; i++) {
		CHECK(cookies[i] == COOKIE(i + 1));
		CHECK_EQ(lens[i], T_SEG_SIZE);
	}
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(h_add_in(&h, 20), 0);
	h_kick(&h);
	fake_dev_inject_used_jump(&h.dev);          /* exactly num + 1 */
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, NUM), 0);
	CHECK(virtq_is_broken(h.vq));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK(strcmp(virtq_broken_reason(h.vq),
		     "used idx moved more than num past the last used") == 0);

	/* Backwards by one: modulo 2^16 that is 0xFFFF ahead. */
	CHECK_EQ(h_restart(&h, h.start), 0);
	CHECK_EQ(h_add_in(&h, 30), 0);
	h_kick(&h);
	__atomic_store_n(&((struct virtq_used *)virtq_device_area(h.vq))->idx,
			 (uint16_t)(h.start - 1), __ATOMIC_RELEASE);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, NUM), 0);
	CHECK(virtq_is_broken(h.vq));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK(strcmp(virtq_broken_reason(h.vq),
		     "used idx moved more than num past the last used") == 0);
	CHECK(virtq_detach_unused(h.vq) == COOKIE(30));
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* len == writable length is fine; a chain with nothing writable reports 0. */
static int
t_used_len_bounds(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain a, b;
	void *cookies[2];
	uint32_t lens[2];
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	CHECK_EQ(h_add_chain(&h, 1, 1, 2, 20), 0);
	CHECK_EQ(h_add_chain(&h, 2, 3, 0, 20), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &a), 0);
	CHECK_EQ(h_dev_pop(&h, &b), 0);
	CHECK_EQ(a.in_len, 40);
	CHECK_EQ(b.in_len, 0);
	CHECK_EQ(fake_dev_push(&h.dev, &a, 40), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &b, 0xFFFFFFFFu), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 2), 2);
	CHECK(cookies[0] == COOKIE(1) && cookies[1] == COOKIE(2));
	CHECK_EQ(lens[0], 40);
	CHECK_EQ(lens[1], 0);
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(virtq_num_free(h.vq), 8);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* -EINVAL and exact -ENOSPC from add; partial add_inbufs. */
static int
t_add_errors(const struct test_cfg *cfg)
{
	struct harness h;
	struct virtq_sg sg[9];
	void *cookies[5];
	unsigned int i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	for (i = 0; i < 9; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = 8;
	}
	for (i = 0; i < 5; i++)
		cookies[i] = COOKIE(20 + i);
	CHECK_EQ(virtq_add(h.vq, sg, 0, 0, COOKIE(1)), -EINVAL);
	CHECK_EQ(virtq_add(h.vq, sg, 1, 0, NULL), -EINVAL);
	CHECK_EQ(virtq_add(h.vq, NULL, 1, 0, COOKIE(1)), -EINVAL);
	CHECK_EQ(virtq_add(h.vq, sg, 5, 4, COOKIE(1)), -ENOSPC);   /* 9 > num */
	CHECK_EQ(virtq_num_free(h.vq), 8);
	CHECK_EQ(virtq_avail_idx(h.vq), h.start);
	CHECK_EQ(virtq_add(h.vq, sg, 4, 4, COOKIE(1)), 0);         /* all 8 */
	CHECK_EQ(virtq_num_free(h.vq), 0);
	CHECK_EQ(virtq_add(h.vq, sg, 0, 1, COOKIE(2)), -ENOSPC);
	CHECK_EQ(virtq_add_inbufs(h.vq, sg, cookies, 2), 0);
	CHECK(h_kick(&h));
	CHECK_EQ(h_dev_complete_all(&h), 1);
	CHECK_EQ(h_drain(&h), 1);
	CHECK_EQ(virtq_num_free(h.vq), 8);
	CHECK_EQ(virtq_add(h.vq, sg, 3, 2, COOKIE(3)), 0);         /* 5 used */
	CHECK_EQ(virtq_add(h.vq, sg, 2, 2, COOKIE(4)), -ENOSPC);   /* 4 > 3 */
	CHECK_EQ(virtq_num_free(h.vq), 3);
	CHECK_EQ(virtq_add_inbufs(h.vq, sg, cookies, 5), 3);       /* partial */
	CHECK_EQ(virtq_num_free(h.vq), 0);
	/* Split: 1 + 1 + 3 chains; packed: 8 + 5 + 3 descriptors. */
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(h.start + (t_packed(cfg) ? 16 : 5)));
	h_kick(&h);
	CHECK_EQ(h_dev_complete_all(&h), 4);
	CHECK_EQ(h_drain(&h), 4);
	/* A NULL cookie stops add_inbufs there. */
	cookies[1] = NULL;
	CHECK_EQ(virtq_add_inbufs(h.vq, sg, cookies, 3), 1);
	CHECK_EQ(virtq_add_inbufs(h.vq, sg, cookies, 0), 0);
	CHECK_EQ(virtq_num_free(h.vq), 7);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* add_outbufs: one device-readable descriptor per buffer, in order, len 0 back. */
static int
t_add_outbufs(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c;
	struct virtq_sg sg[8];
	void *cookies[8], *got[8];
	uint32_t lens[8];
	unsigned int i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	for (i = 0; i < 8; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = 60 + i;
		cookies[i] = COOKIE(40 + i);
	}
	CHECK_EQ(virtq_add_outbufs(h.vq, sg, cookies, 0), 0);
	CHECK_EQ(virtq_add_outbufs(h.vq, sg, cookies, 6), 6);
	CHECK_EQ(virtq_add_outbufs(h.vq, sg, cookies, 6), 2);     /* partial: 2 free */
	CHECK_EQ(virtq_num_free(h.vq), 0);
	h_kick(&h);
	for (i = 0; i < 8; i++) {
		CHECK_EQ(fake_dev_pop(&h.dev, &c), 1);
		CHECK_EQ(c.ndescs, 1);
		CHECK_EQ(c.nout, 1);
		CHECK_EQ(c.nin, 0);
		CHECK_EQ(c.out_len, 60 + (i < 6 ? i : i - 6));
		CHECK_EQ(c.sg[0].addr, sg[i < 6 ? i : i - 6].addr);
		/* A device may write any len for a read-only chain: it is ignored. */
		CHECK_EQ(fake_dev_push(&h.dev, &c, 99), 0);
	}
	CHECK_EQ(fake_dev_pop(&h.dev, &c), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, got, lens, 8), 8);
	for (i = 0; i < 8; i++) {
		CHECK(got[i] == cookies[i < 6 ? i : i - 6]);
		CHECK_EQ(lens[i], 0);
	}
	CHECK_EQ(virtq_num_free(h.vq), 8);
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * Publication: virtq_add_outbufs() (packed: also virtq_add_inbufs())
 * publishes each complete group of virtq_publish_group() positions (packed:
 * a cache line of descriptors) as it adds; split receive buffers, an
 * incomplete group and a chain added behind it wait for
 * virtq_kick_prepare(). The kick decision covers everything published since
 * the last decision, early groups included (event idx: an avail event inside
 * an early group asks for a kick).
 */
static int
t_publish_groups(const struct test_cfg *cfg)
{
	struct harness h;
	struct virtq_sg sg[32];
	void *cookies[32];
	uint16_t s, g, q, n, G, pub;
	unsigned int i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 32), 0);
	G = virtq_publish_group(h.vq);
	CHECK_EQ(G, t_packed(cfg) ? 4 : 8);
	for (i = 0; i < 32; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = 60;
		cookies[i] = COOKIE(1 + i);
	}
	s = h.start;
	g = (uint16_t)((G - (s & (G - 1))) & (G - 1));   /* to the next multiple of G */
	if (cfg->event_idx)
		fake_dev_set_avail_event(&h.dev, (uint16_t)(s + g + 1));
	/* g + G + 2 buffers: groups up to s + g + G published, two held. */
	n = (uint16_t)(g + G + 2);
	CHECK_EQ(virtq_add_outbufs(h.vq, sg, cookies, n), n);
	CHECK_EQ(fake_dev_avail_count(&h.dev), g + G);
	CHECK(h_kick(&h));                      /* event idx: s+g+1 in [s, s+n) */
	CHECK_EQ(fake_dev_avail_count(&h.dev), n);
	CHECK(!virtq_kick_prepare(h.vq));       /* nothing new */

	/* From q = 2 mod G: one buffer (no group complete), then G more: the
	 * group ending at q + G - 2 is published, three stay held.
	 */
	q = (uint16_t)(s + n);
	if (cfg->event_idx)
		fake_dev_set_avail_event(&h.dev, (uint16_t)(q + 1));
	CHECK_EQ(virtq_add_outbufs(h.vq, sg, &cookies[n], 1), 1);
	CHECK_EQ(fake_dev_avail_count(&h.dev), n);
	CHECK_EQ(virtq_add_outbufs(h.vq, &sg[1], &cookies[n + 1], G), G);
	CHECK_EQ(fake_dev_avail_count(&h.dev), n + G - 2);
	/* A chain behind the held ones stays invisible too. */
	CHECK_EQ(h_add_chain(&h, 60, 1, 2, 8), 0);
	CHECK_EQ(fake_dev_avail_count(&h.dev), n + G - 2);
	CHECK(h_kick(&h));                      /* event idx: q+1 in [q, ...) */
	CHECK_EQ(fake_dev_avail_count(&h.dev), n + G + 2);

	/* Without the device asking, nothing kicks. */
	if (cfg->event_idx) {
		fake_dev_set_avail_event(&h.dev, (uint16_t)(s - 1));
		CHECK_EQ(h_add_in(&h, 70), 0);
		CHECK(!h_kick(&h));
		n++;
	}
	CHECK_EQ(h_dev_complete_all(&h), n + G + 2);
	CHECK_EQ(h_drain(&h), n + G + 2);
	CHECK_EQ(virtq_num_free(h.vq), 32);

	/* Many laps of bursts of 7: group edges fall everywhere in a burst,
	 * the device never sees what was not published, and every buffer
	 * comes back.
	 */
	for (i = 0; i < 40; i++) {
		q = virtq_avail_idx(h.vq);
		CHECK_EQ(virtq_add_outbufs(h.vq, sg, cookies, 7), 7);
		pub = (uint16_t)((q + 7) & ~(G - 1));    /* last group edge in (q, q + 7] */
		CHECK_EQ(fake_dev_avail_count(&h.dev),
			 (uint16_t)(pub - q) <= 7 ? (uint16_t)(pub - q) : 0);
		h_kick(&h);
		CHECK_EQ(h_dev_complete_all(&h), 7);
		CHECK_EQ(h_drain(&h), 7);
		/* Receive buffers: packed as above, split only at the kick. */
		q = virtq_avail_idx(h.vq);
		CHECK_EQ(virtq_add_inbufs(h.vq, sg, cookies, 9), 9);
		pub = (uint16_t)((q + 9) & ~(G - 1));
		CHECK_EQ(fake_dev_avail_count(&h.dev),
			 t_packed(cfg) && (uint16_t)(pub - q) <= 9 ? (uint16_t)(pub - q) : 0);
		h_kick(&h);
		CHECK_EQ(fake_dev_avail_count(&h.dev), 9);
		CHECK_EQ(h_dev_complete_all(&h), 9);
		CHECK_EQ(h_drain(&h), 9);
	}
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
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
t_detach_unused(const struct test_cfg *cfg)
{
	struct harness h;
	bool expect[16];
	bool seen[16];
	void *cookie;
	unsigned int n = 0;
	int ret = -1;

	memset(seen, 0, sizeof(seen));
	CHECK_EQ(h_setup(&h, cfg, 16), 0);
	CHECK_EQ(h_outstanding_mix(&h, expect), 0);
	CHECK_EQ(virtq_num_free(h.vq), 3);          /* 16 - 16 posted + 3 taken */
	while ((cookie = virtq_detach_unused(h.vq)) != NULL) {
		unsigned int id = COOKIE_ID(cookie);

		CHECK(id < 16);
		CHECK(expect[id]);
		CHECK(!seen[id]);
		seen[id] = true;
		n++;
	}
	CHECK_EQ(n, 9);
	CHECK(virtq_detach_unused(h.vq) == NULL);
	CHECK_EQ(virtq_num_free(h.vq), 16);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* After detaching, virtq_init restarts the queue at another index. */
static int
t_reinit_after_detach(const struct test_cfg *cfg)
{
	struct harness h;
	bool expect[16];
	uint16_t s2;
	unsigned int i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 16), 0);
	s2 = (uint16_t)(h.start + 0x1234);
	CHECK_EQ(h_outstanding_mix(&h, expect), 0);
	while (virtq_detach_unused(h.vq) != NULL)
		;
	CHECK_EQ(h_restart(&h, s2), 0);
	CHECK_EQ(virtq_avail_idx(h.vq), s2);
	CHECK_EQ(virtq_last_used_idx(h.vq), s2);
	CHECK_EQ(virtq_num_free(h.vq), 16);
	CHECK_EQ(virtq_stats(h.vq)->kicks, 0);
	CHECK(!virtq_intr_enabled(h.vq));
	for (i = 0; i < 5; i++)
		CHECK_EQ(h_round_trip(&h, 16), 0);
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(s2 + 80));
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(s2 + 80));
	CHECK(virtq_detach_unused(h.vq) == NULL);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * Packed: a used descriptor where none was expected (nothing published in
 * flight), seen by get_used and by used_count; a used id that was added but
 * not published.
 */
static int
t_packed_unexpected(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c;
	void *cookies[4];
	void *cookie;
	bool seen[3] = { false, false, false };
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	CHECK_EQ(h_round_trip(&h, 3), 0);
	fake_dev_push_raw(&h.dev, 0, 0);            /* nothing is in flight */
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, NULL, 4), 0);
	CHECK(virtq_is_broken(h.vq));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK(strcmp(virtq_broken_reason(h.vq), "used descriptor where none was expected") == 0);
	CHECK(virtq_detach_unused(h.vq) == NULL);

	/* The same through used_count, with an unpublished buffer added. */
	CHECK_EQ(h_restart(&h, h.start), 0);
	CHECK_EQ(h_round_trip(&h, 2), 0);
	CHECK_EQ(h_add_in(&h, 1), 0);
	fake_dev_push_raw(&h.dev, 0, 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_used_count(h.vq), 0);
	CHECK(virtq_is_broken(h.vq));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK(strcmp(virtq_broken_reason(h.vq), "used descriptor where none was expected") == 0);
	CHECK(virtq_detach_unused(h.vq) == COOKIE(1));
	CHECK(virtq_detach_unused(h.vq) == NULL);

	/* One published, one not: the device returns the unpublished id. */
	CHECK_EQ(h_restart(&h, h.start), 0);
	CHECK_EQ(h_add_in(&h, 1), 0);
	h_kick(&h);
	CHECK_EQ(h_add_in(&h, 2), 0);               /* id 1, not published */
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(c.id, 0);
	CHECK_EQ(fake_dev_pop(&h.dev, &c), 0);      /* invisible to the device */
	fake_dev_push_raw(&h.dev, 1, 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, NULL, 4), 0);
	CHECK(virtq_is_broken(h.vq));
	CHECK(strcmp(virtq_broken_reason(h.vq), "used id is not an outstanding buffer") == 0);
	while ((cookie = virtq_detach_unused(h.vq)) != NULL) {
		CHECK(COOKIE_ID(cookie) >= 1 && COOKIE_ID(cookie) <= 2);
		CHECK(!seen[COOKIE_ID(cookie)]);
		seen[COOKIE_ID(cookie)] = true;
	}
	CHECK(seen[1] && seen[2]);
	CHECK_EQ(virtq_num_free(h.vq), 8);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * Packed ring edges: one chain of num descriptors (the device writes one used
 * descriptor, the driver skips num slots, the wrap counter flips once);
 * num single buffers pending at once; a chain whose descriptors straddle the
 * end of the ring (the device checks each descriptor's wrap bits).
 */
static int
t_packed_ring_edges(const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	struct harness h;
	struct fake_dev_chain c;
	void *cookies[NUM];
	uint32_t lens[NUM];
	uint16_t base, k, i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, NUM), 0);
	base = h.start;
	CHECK_EQ(h_add_chain(&h, 1, 4, 4, 8), 0);
	CHECK_EQ(virtq_num_free(h.vq), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(c.ndescs, NUM);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 32), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_used_count(h.vq), 1);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, NUM), 1);
	CHECK(cookies[0] == COOKIE(1));
	CHECK_EQ(lens[0], 32);
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(base + NUM));
	CHECK_EQ(virtq_num_free(h.vq), NUM);
	CHECK_EQ(fake_dev_vring_base(&h.dev), h_pos_enc(&h, (uint16_t)(base + NUM)));
	CHECK(h_wrap(&h, base) != h_wrap(&h, (uint16_t)(base + NUM)));

	/* num single buffers completed at once. */
	for (i = 0; i < NUM; i++)
		CHECK_EQ(h_add_in(&h, 10 + i), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_complete_all(&h), NUM);
	CHECK_EQ(virtq_used_count(h.vq), NUM);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, NUM), NUM);
	for (i = 0; i < NUM; i++)
		CHECK(cookies[i] == COOKIE(10 + i));

	/* Move to the last slot, then a 3-descriptor chain across the end. */
	k = (uint16_t)(NUM - 1 - (virtq_avail_idx(h.vq) & (NUM - 1)));
	if (k > 0)
		CHECK_EQ(h_round_trip(&h, k), 0);
	CHECK_EQ(virtq_avail_idx(h.vq) & (NUM - 1), NUM - 1);
	CHECK_EQ(h_add_chain(&h, 20, 1, 2, 16), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(c.ndescs, 3);
	CHECK_EQ(c.desc_idx[0], NUM - 1);
	CHECK_EQ(c.desc_idx[1], 0);
	CHECK_EQ(c.desc_idx[2], 1);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 20), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, NUM), 1);
	CHECK(cookies[0] == COOKIE(20));
	CHECK_EQ(lens[0], 20);
	CHECK_EQ(virtq_last_used_idx(h.vq), virtq_avail_idx(h.vq));
	CHECK_EQ(virtq_avail_idx(h.vq) & (NUM - 1), 2);
	CHECK_EQ(fake_dev_vring_base(&h.dev), h_pos_enc(&h, virtq_avail_idx(h.vq)));
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* True if a power-monitor wait on the address would sleep now. */
static bool
h_monitor_sleeps(volatile void *addr, uint64_t expected, uint64_t mask, uint8_t size)
{
	uint64_t v = size == 2 ? *(volatile uint16_t *)addr : *(volatile uint32_t *)addr;

	return (v & mask) == expected;
}

/*
 * virtq_monitor_addr: the condition holds (sleep) while nothing completed,
 * fails as soon as the device completes, holds again once everything is
 * taken; NULL on a broken queue.
 */
static int
t_monitor_addr(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c[3];
	volatile void *addr;
	uint64_t expected, mask;
	uint8_t size;
	void *cookie;
	unsigned int i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 8), 0);
	/* Idle, nothing posted. */
	addr = virtq_monitor_addr(h.vq, &expected, &mask, &size);
	CHECK(addr != NULL);
	CHECK_EQ(size, 2);
	if (t_packed(cfg)) {
		const struct virtq_packed_desc *d = virtq_desc_area(h.vq);

		CHECK(addr == &d[h.start & 7].flags);
		CHECK_EQ(mask, VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED);
	} else {
		CHECK(addr == &((struct virtq_used *)virtq_device_area(h.vq))->idx);
		CHECK_EQ(mask, 0xFFFF);
		CHECK_EQ(expected, h.start);
	}
	CHECK(h_monitor_sleeps(addr, expected, mask, size));
	CHECK(virtq_monitor_addr(h.vq, NULL, &mask, &size) == NULL);

	for (i = 0; i < 3; i++)
		CHECK_EQ(h_add_in(&h, i + 1), 0);
	h_kick(&h);
	for (i = 0; i < 3; i++)
		CHECK_EQ(h_dev_pop(&h, &c[i]), 0);
	addr = virtq_monitor_addr(h.vq, &expected, &mask, &size);
	CHECK(h_monitor_sleeps(addr, expected, mask, size));
	/* Out of order: the device completes the second buffer first. */
	CHECK_EQ(fake_dev_push(&h.dev, &c[1], 4), 0);
	CHECK(h_monitor_sleeps(addr, expected, mask, size));   /* not flushed */
	fake_dev_flush(&h.dev);
	CHECK(!h_monitor_sleeps(addr, expected, mask, size));
	/* Asked again with the completion already there: no sleep. */
	addr = virtq_monitor_addr(h.vq, &expected, &mask, &size);
	CHECK(!h_monitor_sleeps(addr, expected, mask, size));
	CHECK_EQ(virtq_get_used(h.vq, &cookie, NULL, 1), 1);
	CHECK(cookie == COOKIE(2));
	addr = virtq_monitor_addr(h.vq, &expected, &mask, &size);
	CHECK(h_monitor_sleeps(addr, expected, mask, size));
	CHECK_EQ(fake_dev_push(&h.dev, &c[0], 4), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c[2], 4), 0);
	fake_dev_flush(&h.dev);
	CHECK(!h_monitor_sleeps(addr, expected, mask, size));
	CHECK_EQ(h_drain(&h), 2);
	addr = virtq_monitor_addr(h.vq, &expected, &mask, &size);
	CHECK(h_monitor_sleeps(addr, expected, mask, size));

	virtq_mark_broken(h.vq, "test");
	CHECK(virtq_monitor_addr(h.vq, &expected, &mask, &size) == NULL);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * SET_VRING_BASE / GET_VRING_BASE: the device decodes virtq_vring_base() into
 * the driver's start position (h_restart() attaches it that way); after
 * traffic, what the stopped device answers is exactly the vring base of a
 * queue re-initialised at the driver's avail index, and the restarted pair
 * works.
 */
static int
t_vring_base(const struct test_cfg *cfg)
{
	struct harness h;
	uint16_t base, i;
	int ret = -1;

	CHECK_EQ(h_setup(&h, cfg, 16), 0);
	CHECK_EQ(virtq_vring_base(h.vq), t_packed(cfg) ? h_pos_enc(&h, h.start) : h.start);
	CHECK_EQ(fake_dev_vring_base(&h.dev), virtq_vring_base(h.vq));
	for (i = 0; i < 7; i++) {
		CHECK_EQ(h_add_chain(&h, i + 1, 1, (uint16_t)(1 + i % 3), 8), 0);
		h_kick(&h);
		CHECK_EQ(h_dev_complete_all(&h), 1);
		CHECK_EQ(h_drain(&h), 1);
	}
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(h.start + (t_packed(cfg) ? 7 + 13 : 7)));
	base = fake_dev_vring_base(&h.dev);         /* GET_VRING_BASE */
	CHECK_EQ(h_restart(&h, virtq_avail_idx(h.vq)), 0);
	CHECK_EQ(virtq_vring_base(h.vq), base);
	CHECK_EQ(fake_dev_vring_base(&h.dev), base);
	CHECK_EQ(h_round_trip(&h, 16), 0);
	CHECK_EQ(h_round_trip(&h, 16), 0);
	CHECK_EQ(h.dev.driver_errors, 0);
	CHECK(!virtq_is_broken(h.vq));
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* ---- the re-arm race with a real concurrent device ---- */

/*
 * Spin-wait step for the threaded cases: yield now and then, so the peer
 * thread runs even on a loaded 2-core machine.
 */
static void
t_spin(unsigned int *spins)
{
	if (++*spins % 64 == 0)
		sched_yield();
}

struct race_ctx {
	struct harness *h;
	uint64_t target;            /* completions the device makes in all */
	uint64_t calls;             /* atomic: calls delivered */
	bool stop;                  /* atomic */
	int dev_error;
};

static void *
race_device(void *arg)
{
	struct race_ctx *x = arg;
	struct fake_dev_chain c;
	uint64_t done = 0;
	unsigned int spins = 0;

	while (done < x->target && !__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		int r = fake_dev_pop(&x->h->dev, &c);

		if (r < 0) {
			x->dev_error = r;
			break;
		}
		if (r == 0) {
			t_spin(&spins);
			continue;
		}
		if (fake_dev_push(&x->h->dev, &c, 1) != 0) {
			x->dev_error = -EINVAL;
			break;
		}
		done++;
		if (fake_dev_flush(&x->h->dev))
			__atomic_fetch_add(&x->calls, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The NAPI loop against a device thread: poll until empty, arm, re-check,
 * sleep until a call. A lost wakeup (work pending, armed, no call coming)
 * shows as a wait that never ends; it is bounded by a timeout.
 */
static int
t_rearm_race_threads(const struct test_cfg *cfg)
{
	enum { NUM = 16 };
	struct harness h;
	struct race_ctx x;
	pthread_t thr;
	bool started = false;
	uint64_t taken = 0, seen_calls = 0, sleeps = 0;
	unsigned int spins = 0;
	struct virtq_sg sg[NUM];
	void *cookies[NUM];
	unsigned int i;
	int ret = -1;

	memset(&x, 0, sizeof(x));
	CHECK_EQ(h_setup(&h, cfg, NUM), 0);
	x.h = &h;
	x.target = 100000;
	for (i = 0; i < NUM; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = T_SEG_SIZE;
		cookies[i] = COOKIE(i + 1);
	}
	CHECK_EQ(virtq_add_inbufs(h.vq, sg, cookies, NUM), NUM);
	virtq_kick_prepare(h.vq);
	CHECK_EQ(pthread_create(&thr, NULL, race_device, &x), 0);
	started = true;
	while (taken < x.target) {
		void *got[NUM];
		uint16_t n = virtq_get_used(h.vq, got, NULL, NUM);
		uint32_t opaque;

		CHECK(!virtq_is_broken(h.vq));
		if (n > 0) {
			taken += n;
			CHECK_EQ(virtq_add_inbufs(h.vq, sg, got, n), n);
			virtq_kick_prepare(h.vq);
			continue;
		}
		/* Calls before this arming do not count as a wakeup. */
		seen_calls = __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE);
		opaque = virtq_enable_intr_prepare(h.vq);
		if (!virtq_poll(h.vq, opaque)) {
			/* Sleep until a call; a lost wakeup times out. */
			struct timespec t0, t1;

			sleeps++;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (;;) {
				uint64_t calls = __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE);

				if (calls != seen_calls) {
					seen_calls = calls;
					break;
				}
				t_spin(&spins);
				clock_gettime(CLOCK_MONOTONIC, &t1);
				if (t1.tv_sec - t0.tv_sec > 10) {
					printf("#   lost wakeup after %" PRIu64 " buffers\n", taken);
					goto teardown;
				}
			}
		}
		virtq_disable_intr(h.vq);
	}
	CHECK_EQ(taken, x.target);
	printf("#   %" PRIu64 " buffers, %" PRIu64 " sleeps, %" PRIu64 " calls\n", taken, sleeps,
	       __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE));
	ret = 0;
teardown:
	if (started) {
		__atomic_store_n(&x.stop, true, __ATOMIC_RELEASE);
		pthread_join(thr, NULL);
		if (x.dev_error != 0) {
			printf("#   device error %d: %s\n", x.dev_error, h.dev.error);
			ret = -1;
		}
	}
	h_teardown(&h);
	return ret;
}

/* ---- the kick race with a real concurrent device ---- */

static double
t_elapsed(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

struct kick_ctx {
	struct harness *h;
	uint64_t target;            /* completions the device makes in all */
	uint64_t kicks;             /* atomic: kicks delivered */
	uint64_t sleeps;            /* device only */
	int status;                 /* atomic: 0 running, 1 done, < 0 failed */
};

/*
 * A device that sleeps when the ring is empty, the vhost way: ask for a kick
 * (clear NO_NOTIFY or move avail_event to last_avail; the fake device fences
 * after the store), re-check the ring, sleep until a kick. A kick lost by the
 * driver leaves it asleep with buffers pending: a timeout.
 */
static void *
kick_device(void *arg)
{
	struct kick_ctx *x = arg;
	struct fake_dev *d = &x->h->dev;
	bool event_idx = x->h->p.event_idx;
	struct fake_dev_chain c;
	uint64_t done = 0;
	unsigned int spins = 0;
	int status = 1;

	fake_dev_set_no_notify(d, true);
	while (done < x->target) {
		struct timespec t0;
		uint64_t seen;
		int r = fake_dev_pop(d, &c);

		if (r < 0 || (r == 1 && fake_dev_push(d, &c, 1) != 0)) {
			status = -EPROTO;
			break;
		}
		if (r == 1) {
			fake_dev_flush(d);
			done++;
			continue;
		}
		seen = __atomic_load_n(&x->kicks, __ATOMIC_ACQUIRE);
		if (event_idx)
			fake_dev_set_avail_event(d, d->last_avail);
		else
			fake_dev_set_no_notify(d, false);
		r = fake_dev_avail_count(d);
		if (r < 0) {
			status = -EPROTO;
			break;
		}
		if (r == 0) {
			x->sleeps++;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			while (__atomic_load_n(&x->kicks, __ATOMIC_ACQUIRE) == seen &&
			       __atomic_load_n(&x->status, __ATOMIC_ACQUIRE) == 0) {
				t_spin(&spins);
				if (t_elapsed(&t0) > 10.0) {
					status = -ETIMEDOUT;
					break;
				}
			}
			if (status != 1 || __atomic_load_n(&x->status, __ATOMIC_ACQUIRE) != 0)
				break;
		}
		if (!event_idx)
			fake_dev_set_no_notify(d, true);
	}
	if (__atomic_load_n(&x->status, __ATOMIC_ACQUIRE) == 0)
		__atomic_store_n(&x->status, status, __ATOMIC_RELEASE);
	return NULL;
}

/* The driver publishes, kicks only when asked, and polls for completions. */
static int
t_kick_race_threads(const struct test_cfg *cfg)
{
	enum { NUM = 16 };
	struct harness h;
	struct kick_ctx x;
	struct virtq_sg sg[NUM];
	void *cookies[NUM];
	pthread_t thr;
	bool started = false;
	uint64_t taken = 0;
	unsigned int spins = 0;
	unsigned int i;
	int ret = -1;

	memset(&x, 0, sizeof(x));
	CHECK_EQ(h_setup(&h, cfg, NUM), 0);
	x.h = &h;
	x.target = 100000;
	for (i = 0; i < NUM; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = T_SEG_SIZE;
		cookies[i] = COOKIE(i + 1);
	}
	CHECK_EQ(pthread_create(&thr, NULL, kick_device, &x), 0);
	started = true;
	/* Dribble the first buffers in one by one. */
	for (i = 0; i < NUM; i++) {
		CHECK_EQ(virtq_add_inbufs(h.vq, &sg[i], &cookies[i], 1), 1);
		if (virtq_kick_prepare(h.vq))
			__atomic_fetch_add(&x.kicks, 1, __ATOMIC_RELEASE);
	}
	while (taken < x.target && __atomic_load_n(&x.status, __ATOMIC_ACQUIRE) == 0) {
		void *got[NUM];
		uint16_t n = virtq_get_used(h.vq, got, NULL, (uint16_t)(1 + taken % 4));

		CHECK(!virtq_is_broken(h.vq));
		if (n == 0) {
			t_spin(&spins);
			continue;
		}
		taken += n;
		CHECK_EQ(virtq_add_inbufs(h.vq, sg, got, n), n);
		if (virtq_kick_prepare(h.vq))
			__atomic_fetch_add(&x.kicks, 1, __ATOMIC_RELEASE);
		/* Now and then let the device drain the ring and go to sleep. */
		if (t_rand() % 4 == 0)
			for (volatile unsigned int spin = t_rand() % 8192; spin > 0; spin--)
				;
	}
	pthread_join(thr, NULL);
	started = false;
	if (x.status < 0)
		printf("#   device: %s after %" PRIu64 " buffers %s\n",
		       x.status == -ETIMEDOUT ? "lost kick" : "error", taken, h.dev.error);
	CHECK_EQ(x.status, 1);
	taken += h_drain(&h);
	CHECK_EQ(taken, x.target);
	CHECK_EQ(virtq_stats(h.vq)->kicks, x.kicks);
	printf("#   %" PRIu64 " buffers, %" PRIu64 " device sleeps, %" PRIu64 " kicks, %"
	       PRIu64 " suppressed\n", taken, x.sleeps, x.kicks,
	       virtq_stats(h.vq)->kicks_suppressed);
	ret = 0;
teardown:
	if (started) {
		__atomic_store_n(&x.status, -ECANCELED, __ATOMIC_RELEASE);
		pthread_join(thr, NULL);
	}
	h_teardown(&h);
	return ret;
}

/* ---- indirect descriptors ---- */

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
	int ret = -1;

	CHECK_EQ(c->indirect, indirect);
	CHECK_EQ(c->ndescs, out + in);
	CHECK_EQ(c->nring, indirect ? 1 : out + in);
	CHECK_EQ(c->nout, out);
	CHECK_EQ(c->nin, in);
	for (k = 0; k < out + in; k++) {
		CHECK_EQ(c->sg[k].addr, (uint64_t)(uintptr_t)t_ind_mem[cid % 16][k]);
		CHECK_EQ(c->sg[k].len, len0 + k);
		if (k >= out)
			in_len += len0 + k;
	}
	CHECK_EQ(c->in_len, in_len);
	ret = 0;
teardown:
	return ret;
}

/*
 * A multi-element chain goes as one INDIRECT ring descriptor pointing to
 * its table (the layout's areas where they were, the table after them);
 * the device reads every element, writes into the writable ones, and the
 * driver gets the cookie, the len and the bytes back. The shortest chain
 * that goes indirect (two read-only elements) reports len 0.
 */
static int
t_indirect_chain(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c;
	struct virtq_params p0;
	void *cookies[2];
	uint32_t lens[2];
	uint8_t data[256];
	uint16_t s;
	uint32_t i;
	int ret = -1;

	CHECK_EQ(h_setup_ind(&h, cfg, 16, 8), 0);
	s = h.start;
	/* Sizes: the areas as without indirect, then 16 tables of 8 x 16 bytes. */
	CHECK_EQ(h.ring_size, t_packed(cfg) ? 384 + 2048 : 4288 + 2048);
	p0 = h.p;
	p0.indirect_max = 0;
	CHECK_EQ(h.ring_size, t_round_up(virtq_ring_mem_size(&p0), 64) + 16 * 8 * 16);
	CHECK(virtq_desc_area(h.vq) == h.ring);
	CHECK(virtq_driver_area(h.vq) == h.ring + 16 * 16);
	CHECK(virtq_device_area(h.vq) == h.ring + (t_packed(cfg) ? 16 * 16 + 64 : 4096));

	CHECK_EQ(h_add_ind(&h, 1, 3, 2, 10), 0);
	CHECK_EQ(virtq_num_free(h.vq), 15);
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(s + 1));
	CHECK_EQ(virtq_stats(h.vq)->indirect, 1);
	h_kick(&h);
	/* The ring descriptor: INDIRECT alone (no NEXT, no WRITE), the table
	 * of head descriptor / buffer id 0, five entries.
	 */
	if (t_packed(cfg)) {
		const struct virtq_packed_desc *d = &((const struct virtq_packed_desc *)
			virtq_desc_area(h.vq))[s & 15];

		CHECK_EQ(d->flags & ~(VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED),
			 VIRTQ_DESC_F_INDIRECT);
		CHECK_EQ(d->id, 0);
		CHECK_EQ(d->len, 5 * 16);
		CHECK_EQ(d->addr, (uint64_t)(uintptr_t)h_table_addr(&h, 0));
	} else {
		const struct virtq_desc *d = virtq_desc_area(h.vq);

		CHECK_EQ(d[0].flags, VIRTQ_DESC_F_INDIRECT);
		CHECK_EQ(d[0].len, 5 * 16);
		CHECK_EQ(d[0].addr, (uint64_t)(uintptr_t)h_table_addr(&h, 0));
	}
	CHECK_EQ(fake_dev_avail_count(&h.dev), 1);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 1, 3, 2, 10, true), 0);
	CHECK_EQ(c.table, (uint64_t)(uintptr_t)h_table_addr(&h, 0));
	CHECK_EQ(c.in_len, 13 + 14);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ(fake_dev_write(&h.dev, &c, data, 27), 27);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 27), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 2), 1);
	CHECK(cookies[0] == COOKIE(1));
	CHECK_EQ(lens[0], 27);
	for (i = 0; i < 13; i++)
		CHECK_EQ(t_ind_mem[1][3][i], data[i]);
	for (i = 0; i < 14; i++)
		CHECK_EQ(t_ind_mem[1][4][i], data[13 + i]);
	CHECK_EQ(virtq_num_free(h.vq), 16);

	/* Two read-only elements: indirect; a len from the device means nothing. */
	CHECK_EQ(h_add_ind(&h, 2, 2, 0, 20), 0);
	CHECK_EQ(virtq_num_free(h.vq), 15);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 2, 2, 0, 20, true), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 77), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 2), 1);
	CHECK(cookies[0] == COOKIE(2));
	CHECK_EQ(lens[0], 0);

	/* All writable (the rx shape): indirect too. */
	CHECK_EQ(h_add_ind(&h, 3, 0, 4, 5), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 3, 0, 4, 5, true), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 5 + 6 + 7 + 8), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 2), 1);
	CHECK_EQ(lens[0], 26);
	CHECK_EQ(virtq_stats(h.vq)->indirect, 3);
	CHECK_EQ(virtq_num_free(h.vq), 16);
	/* Split: 3 chains; packed: 3 slots. */
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(s + 3));
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * Used len against the writable elements of a table: their sum is fine, one
 * more byte breaks the queue; the chain still comes back by detach.
 */
static int
t_indirect_used_len(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain a, b;
	void *cookies[2];
	uint32_t lens[2];
	int ret = -1;

	CHECK_EQ(h_setup_ind(&h, cfg, 8, 4), 0);
	CHECK_EQ(h_add_ind(&h, 1, 1, 3, 100), 0);    /* writable 101 + 102 + 103 */
	CHECK_EQ(h_add_ind(&h, 2, 1, 3, 100), 0);
	CHECK_EQ(virtq_num_free(h.vq), 6);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &a), 0);
	CHECK_EQ(h_dev_pop(&h, &b), 0);
	CHECK_EQ(h_check_ind(&a, 1, 1, 3, 100, true), 0);
	CHECK_EQ(a.in_len, 306);
	CHECK_EQ(fake_dev_push(&h.dev, &a, 306), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 2), 1);
	CHECK_EQ(lens[0], 306);
	fake_dev_inject_len_too_large(&h.dev, &b);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, cookies, lens, 2), 0);
	CHECK(virtq_is_broken(h.vq));
	CHECK_EQ(virtq_stats(h.vq)->bad_used, 1);
	CHECK(strcmp(virtq_broken_reason(h.vq), "used len exceeds the writable length") == 0);
	CHECK(virtq_detach_unused(h.vq) == COOKIE(2));
	CHECK(virtq_detach_unused(h.vq) == NULL);
	CHECK_EQ(virtq_num_free(h.vq), 8);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
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
	for (i = 0; i < 4; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = 16;
		cookies[i] = COOKIE(10 + i);
	}
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
	CHECK_EQ(h_dev_complete_all(&h), 12);
	CHECK_EQ(h_drain(&h), 12);
	for (i = 0; i < 15; i++)
		CHECK_EQ(h_add_ind(&h, 20 + i, 1, 0, 8), 0);
	CHECK_EQ(h_add_ind(&h, 43, 2, 2, 8), 0);         /* indirect in the last one */
	CHECK_EQ(virtq_num_free(h.vq), 0);
	CHECK_EQ(virtq_stats(h.vq)->indirect, 2);
	h_kick(&h);
	CHECK_EQ(h_dev_complete_all(&h), 16);
	CHECK_EQ(h_drain(&h), 16);
	CHECK_EQ(h.dev.driver_errors, 0);
	h_teardown(&h);

	/* A table may not be as long as the ring: num 4, indirect_max 4. */
	CHECK_EQ(h_setup_ind(&h, cfg, 4, 4), 0);
	CHECK_EQ(h_add_ind(&h, 1, 2, 2, 8), 0);          /* 4 == num: direct */
	CHECK_EQ(virtq_num_free(h.vq), 0);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 1, 2, 2, 8, false), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 0), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(h_drain(&h), 1);
	CHECK_EQ(h_add_ind(&h, 2, 2, 1, 8), 0);          /* 3 < num: indirect */
	CHECK_EQ(virtq_num_free(h.vq), 3);
	h_kick(&h);
	CHECK_EQ(h_dev_pop(&h, &c), 0);
	CHECK_EQ(h_check_ind(&c, 2, 2, 1, 8, true), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c, 0), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(h_drain(&h), 1);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * The ring full of indirect chains, many laps: num chains of 2..7 random
 * elements each take one descriptor, the next add is -ENOSPC; the device
 * reads every element, completes in random order with random lengths; the
 * driver checks cookies, lens and bytes. Every table is rewritten each lap.
 */
static int
t_indirect_ring_full(const struct test_cfg *cfg)
{
	enum { NUM = 8 };
	struct harness h;
	struct fake_dev_chain held[NUM];
	/* Indexed by chain 1..NUM (cookie and t_ind_mem row). */
	uint16_t out[NUM + 1], in[NUM + 1], len0[NUM + 1];
	uint32_t dev_len[NUM + 1];
	uint8_t tag[NUM + 1];
	uint64_t laps;
	int ret = -1;

	CHECK_EQ(h_setup_ind(&h, cfg, NUM, 8), 0);
	t_rng_state = 88172645u;
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
			CHECK_EQ(h_add_ind(&h, i, out[i], in[i], len0[i]), 0);
		}
		CHECK_EQ(virtq_num_free(h.vq), 0);
		CHECK_EQ(h_add_ind(&h, 9, 1, 1, 4), -ENOSPC);
		CHECK_EQ(virtq_add_inbufs(h.vq, &(struct virtq_sg){ .addr = 1, .len = 1 },
					  &(void *){ COOKIE(9) }, 1), 0);
		h_kick(&h);
		for (i = 0; i < NUM; i++) {
			CHECK_EQ(h_dev_pop(&h, &held[i]), 0);
			CHECK_EQ(h_check_ind(&held[i], i + 1, out[i + 1], in[i + 1], len0[i + 1],
					     true), 0);
		}
		CHECK_EQ(fake_dev_pop(&h.dev, &held[0]), 0);
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
			CHECK(cid >= 1 && cid <= NUM);
			len = c.in_len == 0 ? 0 : t_rand() % (c.in_len + 1);
			tag[cid] = (uint8_t)t_rand();
			memset(buf, tag[cid], len);
			CHECK_EQ(fake_dev_write(&h.dev, &c, buf, len), len);
			dev_len[cid] = len;
			CHECK_EQ(fake_dev_push(&h.dev, &c, len), 0);
			held[j] = held[--nheld];
			if (t_rand() % 3 == 0)
				fake_dev_flush(&h.dev);
		}
		fake_dev_flush(&h.dev);
		n = 0;
		while ((got = virtq_get_used(h.vq, cookies, lens, NUM)) > 0) {
			for (i = 0; i < got; i++) {
				unsigned int cid = COOKIE_ID(cookies[i]);
				uint32_t b, k = out[cid], off = 0;

				CHECK(cid >= 1 && cid <= NUM);
				CHECK_EQ(lens[i], dev_len[cid]);
				/* Bytes land in the writable elements in order. */
				for (b = 0; b < lens[i]; b++) {
					while (off >= (uint32_t)len0[cid] + k) {
						off -= (uint32_t)len0[cid] + k;
						k++;
					}
					CHECK_EQ(t_ind_mem[cid][k][off], tag[cid]);
					off++;
				}
			}
			n += got;
		}
		CHECK_EQ(n, NUM);
		CHECK_EQ(virtq_num_free(h.vq), NUM);
	}
	/* Split: one avail entry per chain; packed: one slot per chain. */
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(h.start + laps * NUM));
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(h.start + laps * NUM));
	CHECK_EQ(virtq_stats(h.vq)->indirect, laps * NUM);
	CHECK(!virtq_is_broken(h.vq));
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/*
 * Indirect chains outstanding in every state (published and held by the
 * device, completed but not taken, not published) come back by detach;
 * the queue then restarts at another index and carries indirect chains.
 */
static int
t_indirect_detach_restart(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c[6];
	bool seen[16];
	void *cookie;
	uint16_t s2;
	unsigned int i, n = 0, r;
	int ret = -1;

	memset(seen, 0, sizeof(seen));
	CHECK_EQ(h_setup_ind(&h, cfg, 16, 8), 0);
	for (i = 0; i < 6; i++)
		CHECK_EQ(h_add_ind(&h, i + 1, (uint16_t)(1 + i % 2), (uint16_t)(1 + i % 3), 8), 0);
	h_kick(&h);
	for (i = 0; i < 4; i++)
		CHECK_EQ(h_add_ind(&h, 7 + i, 2, 1, 8), 0);      /* not published */
	CHECK_EQ(virtq_num_free(h.vq), 6);
	for (i = 0; i < 6; i++) {
		CHECK_EQ(h_dev_pop(&h, &c[i]), 0);
		CHECK(c[i].indirect);
	}
	CHECK_EQ(fake_dev_push(&h.dev, &c[1], 1), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c[3], 1), 0);
	CHECK_EQ(fake_dev_push(&h.dev, &c[4], 1), 0);
	fake_dev_flush(&h.dev);
	CHECK_EQ(virtq_get_used(h.vq, &cookie, NULL, 1), 1);
	CHECK(cookie == COOKIE(2));
	while ((cookie = virtq_detach_unused(h.vq)) != NULL) {
		unsigned int id = COOKIE_ID(cookie);

		CHECK(id >= 1 && id <= 10 && id != 2);
		CHECK(!seen[id]);
		seen[id] = true;
		n++;
	}
	CHECK_EQ(n, 9);
	CHECK_EQ(virtq_num_free(h.vq), 16);

	s2 = (uint16_t)(h.start + 0x1234);
	CHECK_EQ(h_restart(&h, s2), 0);
	for (r = 0; r < 5; r++) {
		for (i = 1; i <= 16; i++)
			CHECK_EQ(h_add_ind(&h, i, 2, 2, 4), 0);
		CHECK_EQ(virtq_num_free(h.vq), 0);
		h_kick(&h);
		CHECK_EQ(h_dev_complete_all(&h), 16);
		CHECK_EQ(h_drain(&h), 16);
	}
	CHECK_EQ(virtq_avail_idx(h.vq), (uint16_t)(s2 + 80));
	CHECK_EQ(virtq_last_used_idx(h.vq), (uint16_t)(s2 + 80));
	CHECK_EQ(virtq_stats(h.vq)->indirect, 80);
	CHECK(virtq_detach_unused(h.vq) == NULL);
	CHECK_EQ(h.dev.driver_errors, 0);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* Without the feature, the fake device refuses an INDIRECT descriptor. */
static int
t_indirect_not_negotiated(const struct test_cfg *cfg)
{
	struct harness h;
	struct fake_dev_chain c;
	int ret = -1;

	CHECK_EQ(h_setup_ind(&h, cfg, 8, 4), 0);
	h.dev.params.indirect_max = 0;               /* the device did not offer it */
	CHECK_EQ(h_add_ind(&h, 1, 1, 1, 8), 0);
	h_kick(&h);
	CHECK_EQ(fake_dev_pop(&h.dev, &c), -EPROTO);
	CHECK(strstr(h.dev.error, "not negotiated") != NULL);
	ret = 0;
teardown:
	h_teardown(&h);
	return ret;
}

/* ---- in order ---- */

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
	t_rng_state = 2463534242u;
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
	h_teardown(&h);
	return ret;
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

/* ---- the table ---- */

/* ... and whether it also runs on the in-order configurations. */
enum test_order {
	ORDER_BOTH,     /* with and without in_order */
	ORDER_ANY,      /* completes out of order: without in_order only */
	ORDER_ONLY,     /* in-order rules: with in_order only */
};

struct test_case {
	const char *name;
	int (*fn)(const struct test_cfg *cfg);
	enum test_runs runs;
	enum test_layouts layouts;
	enum test_order order;
};

static const struct test_case test_cases[] = {
	{ "params and sizes", t_params_sizes, RUN_ONCE, ON_BOTH },
	{ "need_event truth table", t_need_event_table, RUN_ONCE, ON_BOTH },
	{ "init layout", t_init_layout, RUN_ALL, ON_BOTH },
	{ "index wrap round trips", t_wrap, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "kick suppression NO_NOTIFY", t_kick_no_notify, RUN_FLAGS, ON_BOTH },
	{ "kick suppression avail_event", t_kick_avail_event, RUN_EVENT_IDX, ON_BOTH },
	{ "interrupt suppression", t_intr_suppression, RUN_ALL, ON_BOTH },
	{ "re-arm race", t_rearm_race, RUN_ALL, ON_BOTH },
	{ "re-arm race, device thread", t_rearm_race_threads, RUN_ALL, ON_BOTH },
	{ "kick race, device thread", t_kick_race_threads, RUN_ALL, ON_BOTH },
	{ "arming an armed queue writes nothing", t_arm_idempotent, RUN_ALL, ON_BOTH },
	{ "bad used: id out of range", t_bad_id_range, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "bad used: id not outstanding", t_bad_id_middle, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "bad used: id returned twice", t_bad_id_twice, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "bad used: len too large", t_bad_len, RUN_ALL, ON_BOTH },
	{ "bad used: used idx jump", t_bad_used_jump, RUN_ALL, ON_SPLIT , ORDER_ANY },
	{ "bad used: used idx jump seen by used_count", t_bad_used_jump_count, RUN_ALL, ON_SPLIT , ORDER_ANY },
	{ "bad used: used descriptor where none expected", t_packed_unexpected, RUN_ALL,
	  ON_PACKED },
	{ "used idx bounds", t_used_idx_bounds, RUN_ALL, ON_SPLIT , ORDER_ANY },
	{ "packed ring edges", t_packed_ring_edges, RUN_ALL, ON_PACKED },

	{ "used len bounds", t_used_len_bounds, RUN_ALL, ON_BOTH },
	{ "add errors", t_add_errors, RUN_ALL, ON_BOTH },
	{ "add_outbufs", t_add_outbufs, RUN_ALL, ON_BOTH },
	{ "bulk adds publish whole groups", t_publish_groups, RUN_ALL, ON_BOTH },
	{ "detach_unused", t_detach_unused, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "re-init after detach", t_reinit_after_detach, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "monitor address", t_monitor_addr, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "vring base", t_vring_base, RUN_ALL, ON_BOTH },
	{ "in order: round trips, batches, arming inside a batch", t_io_round_trips, RUN_ALL,
	  ON_BOTH, ORDER_ONLY },
	{ "in order: round trips, indirect tables of 2", t_io_round_trips_indirect, RUN_ALL,
	  ON_BOTH, ORDER_ONLY },
	{ "in order: bad used", t_io_bad, RUN_ALL, ON_BOTH, ORDER_ONLY },
	{ "indirect: chain as one descriptor", t_indirect_chain, RUN_ALL, ON_BOTH },
	{ "indirect: used len of a table", t_indirect_used_len, RUN_ALL, ON_BOTH },
	{ "indirect: which chains go indirect, -ENOSPC", t_indirect_fallback, RUN_ALL, ON_BOTH },
	{ "indirect: ring full, many laps", t_indirect_ring_full, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "indirect: detach_unused and restart", t_indirect_detach_restart, RUN_ALL, ON_BOTH , ORDER_ANY },
	{ "indirect: not negotiated", t_indirect_not_negotiated, RUN_ONCE, ON_BOTH },
	{ "index wrap round trips, indirect tables of 2", t_wrap_indirect, RUN_ALL, ON_BOTH , ORDER_ANY },
};

static bool
test_runs_on(const struct test_case *tc, const struct test_cfg *cfg, size_t cfg_idx)
{
	if ((tc->layouts == ON_SPLIT && cfg->layout != VIRTQ_LAYOUT_SPLIT) ||
	    (tc->layouts == ON_PACKED && cfg->layout != VIRTQ_LAYOUT_PACKED))
		return false;
	if ((tc->order == ORDER_ANY && cfg->in_order) ||
	    (tc->order == ORDER_ONLY && !cfg->in_order))
		return false;
	switch (tc->runs) {
	case RUN_ALL:
		return true;
	case RUN_EVENT_IDX:
		return cfg->event_idx;
	case RUN_FLAGS:
		return !cfg->event_idx;
	case RUN_ONCE:
		return cfg_idx == 0;
	}
	return false;
}

static const char *
test_start_name(const struct test_cfg *cfg)
{
	switch (cfg->start) {
	case START_ZERO:
		return "0";
	case START_NEAR:
		return t_packed(cfg) ? "0xfff0 (num-16, wrap 0)" : "0xfff0";
	case START_NEAR_W1:
		return "0xfff0-num (num-16, wrap 1)";
	}
	return "?";
}

static const char *
test_layout_name(enum virtq_layout l)
{
	return l == VIRTQ_LAYOUT_SPLIT ? "split" : "packed";
}

int
main(void)
{
	const size_t ncases = sizeof(test_cases) / sizeof(test_cases[0]);
	const size_t ncfgs = sizeof(test_cfgs) / sizeof(test_cfgs[0]);
	unsigned int planned = 0, n = 0, failed = 0;
	size_t i, j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < ncases; i++)
		for (j = 0; j < ncfgs; j++)
			if (test_runs_on(&test_cases[i], &test_cfgs[j], j))
				planned++;
	printf("1..%u\n", planned);
	for (i = 0; i < ncases; i++) {
		for (j = 0; j < ncfgs; j++) {
			const struct test_case *tc = &test_cases[i];
			const struct test_cfg *cfg = &test_cfgs[j];
			int r;

			if (!test_runs_on(tc, cfg, j))
				continue;
			r = tc->fn(cfg);
			n++;
			if (r != 0)
				failed++;
			if (tc->runs == RUN_ONCE)
				printf("%s %u - %s\n", r == 0 ? "ok" : "not ok", n, tc->name);
			else
				printf("%s %u - %s [%s event_idx=%s start=%s%s]\n",
				       r == 0 ? "ok" : "not ok", n, tc->name,
				       test_layout_name(cfg->layout), cfg->event_idx ? "on" : "off",
				       test_start_name(cfg), cfg->in_order ? " in_order" : "");
		}
	}
	return failed == 0 ? 0 : 1;
}
