/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The harness of the lib/virtq unit tests: a driver queue and the fake
 * device on it, and the helpers every section of cases shares.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virtq_harness.h"

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

/* Buffer memory the device writes into. */
uint8_t t_mem[64][4][T_SEG_SIZE];

uint64_t
t_seg_addr(unsigned int slot, unsigned int seg)
{
	return (uint64_t)(uintptr_t)t_mem[slot][seg];
}

/* Deterministic PRNG (xorshift32). */
static uint32_t t_rng_state = T_RNG_SEED;

void
t_bufs(struct virtq_sg *sg, void **cookies, unsigned int n, uint32_t len,
       unsigned int first_cookie)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		sg[i].addr = t_seg_addr(i, 0);
		sg[i].len = len;
		if (cookies != NULL)
			cookies[i] = COOKIE(first_cookie + i);
	}
}

uint32_t
t_rand(void)
{
	uint32_t x = t_rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t_rng_state = x;
	return x;
}

void
t_srand(uint32_t seed)
{
	t_rng_state = seed;
}

void
h_teardown(struct harness *h)
{
	if (h->dev_up)
		fake_dev_fini(&h->dev);
	free(h->vq);
	free(h->ring);
	memset(h, 0, sizeof(*h));
}

/* (Re)start queue and device at @p start. */
int
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
int
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

int
h_setup(struct harness *h, const struct test_cfg *cfg, uint16_t num)
{
	return h_setup_ind(h, cfg, num, 0);
}

/* Publish and, if the driver says so, deliver the kick. */
bool
h_kick(struct harness *h)
{
	bool kick = virtq_kick_prepare(h->vq);

	if (kick)
		fake_dev_kick(&h->dev);
	return kick;
}

/* Device: pop everything available, complete it (len = writable length), flush. */
int
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
int
h_dev_pop(struct harness *h, struct fake_dev_chain *c)
{
	int r = fake_dev_pop(&h->dev, c);

	if (r != 1)
		printf("#   fake_dev_pop: %d %s\n", r, h->dev.error);
	return r == 1 ? 0 : -1;
}

/* One single-descriptor writable buffer. */
int
h_add_in(struct harness *h, unsigned int id)
{
	struct virtq_sg sg = { .addr = t_seg_addr(id % 64, 0), .len = T_SEG_SIZE };

	return virtq_add(h->vq, &sg, 0, 1, COOKIE(id));
}

/* A chain of @p out readable then @p in writable descriptors. */
int
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
uint16_t
h_drain(struct harness *h)
{
	void *cookies[64];
	uint16_t total = 0;
	uint16_t n;

	while ((n = virtq_get_used(h->vq, cookies, NULL, 64)) > 0)
		total += n;
	return total;
}

/*
 * Driver: exactly one completion is there, COOKIE(@p id) with used len
 * @p len, and it is taken. Asking for two tells one from more than one.
 */
int
h_take_one(struct harness *h, unsigned int id, uint32_t len)
{
	void *cookies[2];
	uint32_t lens[2];
	uint16_t n = virtq_get_used(h->vq, cookies, lens, 2);

	if (n != 1) {
		printf("#   the driver took %u completions, expected 1\n", n);
		return -1;
	}
	if (cookies[0] != COOKIE(id) || lens[0] != len) {
		printf("#   took cookie %u with len %" PRIu32 ", expected %u with len %" PRIu32 "\n",
		       COOKIE_ID(cookies[0]), lens[0], id, len);
		return -1;
	}
	return 0;
}


/* One device round: n inbufs added, published, completed, taken. Returns the
 * call decision of the flush, or -1.
 */
int
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

/* True if a power-monitor wait on the address would sleep now. */
bool
h_monitor_sleeps(volatile void *addr, uint64_t expected, uint64_t mask, uint8_t size)
{
	uint64_t v = size == 2 ? *(volatile uint16_t *)addr : *(volatile uint32_t *)addr;

	return (v & mask) == expected;
}

int
h_end(struct harness *h, int ret)
{
	h_teardown(h);
	return ret;
}

int
h_complete_drain(struct harness *h, unsigned int n)
{
	int done = h_dev_complete_all(h);
	uint16_t taken;

	if (done != (int)n) {
		printf("#   the device completed %d chains, expected %u\n", done, n);
		return -1;
	}
	taken = h_drain(h);
	if (taken != n) {
		printf("#   the driver took %u chains, expected %u\n", taken, n);
		return -1;
	}
	return 0;
}

int
h_check_broken(struct harness *h, const char *reason)
{
	const char *got = virtq_broken_reason(h->vq);
	uint64_t bad_used = virtq_stats(h->vq)->bad_used;

	if (!virtq_is_broken(h->vq) || got == NULL) {
		printf("#   the queue is not broken, expected '%s'\n", reason);
		return -1;
	}
	if (bad_used != 1 || strcmp(got, reason) != 0) {
		printf("#   broken with bad_used %" PRIu64 " for '%s', expected 1 for '%s'\n",
		       bad_used, got, reason);
		return -1;
	}
	return 0;
}

int
h_end_clean(struct harness *h, int ret)
{
	if (ret == 0 && h->dev.driver_errors != 0) {
		printf("#   the device saw %" PRIu64 " driver errors, last: %s\n",
		       h->dev.driver_errors, h->dev.error);
		ret = -1;
	}
	return h_end(h, ret);
}

int
h_end_healthy(struct harness *h, int ret)
{
	if (ret == 0 && virtq_is_broken(h->vq)) {
		printf("#   queue broken: %s\n", virtq_broken_reason(h->vq));
		ret = -1;
	}
	return h_end_clean(h, ret);
}
