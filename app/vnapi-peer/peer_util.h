/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_UTIL_H_
#define _PEER_UTIL_H_

/**
 * @file
 * Test-peer library: clocks, deadlines, option parsing, devargs templates,
 * percentiles and a small random generator, shared by every DPDK test peer
 * (app/vnapi-peer, tests/integration/vhost_pair).
 * No EAL needed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** CLOCK_MONOTONIC in seconds. */
double peer_now_s(void);

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t peer_now_ns(void);

/** Sleep @p us microseconds (nanosleep; a signal may cut it short). */
void peer_sleep_us(uint64_t us);

/**
 * Parse an unsigned number (base 0: decimal, 0x hex) in [min, max].
 * @return 0, or -1 on junk, overflow, a sign or a value out of range.
 */
int peer_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** peer_parse_u64() for a uint32_t. */
int peer_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/** Parse a finite double in [min, max]; 0 or -1. */
int peer_parse_double(const char *s, double min, double max, double *out);

/**
 * Expand a devargs template: "{sock}" becomes @p sock and "{queues}" the
 * decimal @p queues; everything else is copied.
 * @return 0, or -1 when the result does not fit @p size bytes.
 */
int peer_subst(char *out, size_t size, const char *in, const char *sock, unsigned int queues);

/** Sort @p n values ascending. */
void peer_sort_u64(uint64_t *v, size_t n);

/**
 * Nearest-rank percentile of an ascending array: the smallest value with at
 * least @p pct percent of the values at or below it; 0 for an empty array.
 */
uint64_t peer_percentile_u64(const uint64_t *sorted, size_t n, double pct);

/** xorshift64*: the next value of the generator whose state is @p s (not 0). */
uint64_t peer_rng_next(uint64_t *s);

/**
 * Fill @p n bytes with a pattern that depends on every bit of @p seed
 * (a linear congruential sequence): what a receiver regenerates to check.
 */
void peer_pattern_fill(uint8_t *p, size_t n, uint32_t seed);

#endif /* _PEER_UTIL_H_ */
