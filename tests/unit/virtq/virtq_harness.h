/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_VIRTQ_HARNESS_H_
#define _VNAPI_VIRTQ_HARNESS_H_

/**
 * @file
 * What the lib/virtq unit test sections (test_virtq_*.c) share: the
 * configurations a case runs on, the case and section tables that
 * test_virtq.c runs, and the harness (a driver queue and the fake device on
 * it, helpers h_* and t_*).
 *
 * A case is `int fn(const struct test_cfg *cfg)`, returns 0 when it passes,
 * and ends either with
 *
 *	ret = 0;
 * teardown:
 *	return h_end_healthy(&h, ret);     (or h_end_clean(), h_end())
 *
 * or, when it needs one harness set up the common way, is
 * `int body(struct harness *h, const struct test_cfg *cfg)` named with the
 * queue size and the end in its table row's struct test_fixture:
 * test_virtq.c sets the harness up and ends it, and the body checks with
 * EXPECT/EXPECT_EQ.
 *
 * A section lists its cases in a `struct test_case` table and exports it
 * as `const struct test_section test_section_<name>`; test_virtq.c runs
 * every section's table over every configuration the case asks for.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

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
	uint16_t indirect_max;  /* the case's test_case.indirect_max (not a configuration) */
};

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

/* ... and whether it also runs on the in-order configurations. */
enum test_order {
	ORDER_BOTH,     /* with and without in_order */
	ORDER_ANY,      /* completes out of order: without in_order only */
	ORDER_ONLY,     /* in-order rules: with in_order only */
};

struct harness;

/* How the runner ends a harness case (h_end(), h_end_clean(), h_end_healthy()). */
enum h_end_kind {
	H_END,
	H_END_CLEAN,
	H_END_HEALTHY,
};

/*
 * A case body on a harness the runner owns: a queue of num entries with
 * indirect tables of ind (0: none) is set up before body runs and ended as
 * end says after it, so the body holds only its script and checks.
 */
struct test_fixture {
	int (*body)(struct harness *h, const struct test_cfg *cfg);
	uint16_t num;
	uint16_t ind;
	enum h_end_kind end;
};

struct test_case {
	const char *name;
	int (*fn)(const struct test_cfg *cfg);
	enum test_runs runs;
	enum test_layouts layouts;
	enum test_order order;
	/* For a case that runs with and without indirect tables: the table
	 * size its cfg->indirect_max says (0: none).
	 */
	uint16_t indirect_max;
	/* Or (fn NULL) a case on a harness the runner owns (see struct
	 * test_fixture).
	 */
	struct test_fixture h;
};

/* One file's cases. */
struct test_section {
	const struct test_case *cases;
	size_t n;
};

extern const struct test_section test_section_ring;
extern const struct test_section test_section_notify;
extern const struct test_section test_section_bad_used;
extern const struct test_section test_section_threads;
extern const struct test_section test_section_indirect;
extern const struct test_section test_section_in_order;

/* Cookies: small non-NULL integers. */
#define COOKIE(i) ((void *)(uintptr_t)(i))
#define COOKIE_ID(c) ((unsigned int)(uintptr_t)(c))

/* Buffer memory the device writes into: [slot][segment][bytes]. */
#define T_SEG_SIZE 64
extern uint8_t t_mem[64][4][T_SEG_SIZE];

uint64_t t_seg_addr(unsigned int slot, unsigned int seg);

/*
 * @p n buffers, one a segment: sg[i] at t_seg_addr(i, 0), @p len bytes;
 * cookies[i] = COOKIE(@p first_cookie + i) unless @p cookies is NULL.
 */
void t_bufs(struct virtq_sg *sg, void **cookies, unsigned int n, uint32_t len,
	    unsigned int first_cookie);

/* Deterministic PRNG (xorshift32), seeded with T_RNG_SEED at start. */
#define T_RNG_SEED 2463534242u
uint32_t t_rand(void);
void t_srand(uint32_t seed);

/* A driver queue and the fake device on it. */
struct harness {
	struct virtq_params p;
	uint16_t start;            /* the configuration's start index for this num */
	struct virtq *vq;
	uint8_t *ring;
	size_t ring_size;
	struct fake_dev dev;
	bool dev_up;
};

void h_teardown(struct harness *h);
/* (Re)start queue and device at @p start. */
int h_restart(struct harness *h, uint16_t start);
/* A queue of @p num entries with @p indirect_max (0: no indirect descriptors). */
int h_setup_ind(struct harness *h, const struct test_cfg *cfg, uint16_t num,
		uint16_t indirect_max);
int h_setup(struct harness *h, const struct test_cfg *cfg, uint16_t num);
/* Publish and, if the driver says so, deliver the kick. */
bool h_kick(struct harness *h);
/* Device: pop everything available, complete it (len = writable length), flush. */
int h_dev_complete_all(struct harness *h);
/* Device: pop one chain (must be there). */
int h_dev_pop(struct harness *h, struct fake_dev_chain *c);
/* One single-descriptor writable buffer. */
int h_add_in(struct harness *h, unsigned int id);
/* A chain of @p out readable then @p in writable descriptors. */
int h_add_chain(struct harness *h, unsigned int id, uint16_t out, uint16_t in,
		uint32_t seg_len);
/* Driver: take one round of completions and discard them; returns the count. */
uint16_t h_drain(struct harness *h);
/*
 * Driver: exactly one completion is there, COOKIE(@p id) with used len
 * @p len, and it is taken. Returns 0, or -1 with a diagnostic.
 */
int h_take_one(struct harness *h, unsigned int id, uint32_t len);
/* One device round: n inbufs added, published, completed, taken. Returns the
 * call decision of the flush, or -1.
 */
int h_round_trip(struct harness *h, uint16_t n);
/*
 * Device completes everything available, which must be exactly @p n chains;
 * the driver then takes exactly @p n. Returns 0, or -1 with a diagnostic.
 */
int h_complete_drain(struct harness *h, unsigned int n);
/*
 * The queue is broken by one bad used element, for @p reason. Returns 0,
 * or -1 with a diagnostic.
 */
int h_check_broken(struct harness *h, const char *reason);
/* True if a power-monitor wait on the address would sleep now. */
bool h_monitor_sleeps(volatile void *addr, uint64_t expected, uint64_t mask, uint8_t size);

/*
 * The common end of a case, after its teardown label: tears the harness
 * down and returns @p ret. With ret 0, h_end_clean() also fails the case
 * (a diagnostic and -1) when the device saw a driver error, and
 * h_end_healthy() also when the queue is broken.
 */
int h_end(struct harness *h, int ret);
int h_end_clean(struct harness *h, int ret);
int h_end_healthy(struct harness *h, int ret);

static inline size_t
t_round_up(size_t n, size_t align)
{
	return (n + align - 1) / align * align;
}

static inline bool
t_packed(const struct test_cfg *cfg)
{
	return cfg->layout == VIRTQ_LAYOUT_PACKED;
}

/* Ring descriptors (packed: slots) a chain of @p n elements takes. */
static inline uint16_t
h_chain_slots(const struct harness *h, uint32_t n)
{
	bool ind = n >= 2 && n <= h->p.indirect_max && n < h->p.num;

	return ind ? 1 : (uint16_t)n;
}

/* Wrap counter of a packed position. */
static inline bool
h_wrap(const struct harness *h, uint16_t pos)
{
	return ((pos / h->p.num) & 1) == 0;
}

/* The spec's 16-bit form of a packed position: slot | wrap counter << 15. */
static inline uint16_t
h_pos_enc(const struct harness *h, uint16_t pos)
{
	return (uint16_t)((pos & (h->p.num - 1)) | (h_wrap(h, pos) << 15));
}

/* The opaque virtq_enable_intr_prepare() returns at last used @p pos. */
static inline uint32_t
h_opaque(const struct harness *h, uint16_t pos)
{
	return h->p.layout == VIRTQ_LAYOUT_PACKED ? h_pos_enc(h, pos) : pos;
}

#endif /* _VNAPI_VIRTQ_HARNESS_H_ */
