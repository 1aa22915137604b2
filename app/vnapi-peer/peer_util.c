/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peer_util.h"

double
peer_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t
peer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
peer_sleep_us(uint64_t us)
{
	struct timespec ts = {
		.tv_sec = (time_t)(us / 1000000),
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	nanosleep(&ts, NULL);
}

int
peer_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || s[0] == '-' || s[0] == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
peer_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (peer_parse_u64(s, min, max, &v) != 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int
peer_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (s == NULL)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

int
peer_subst(char *out, size_t size, const char *in, const char *sock, unsigned int queues)
{
	size_t o = 0, l;
	char qbuf[16];
	const char *rep;

	snprintf(qbuf, sizeof(qbuf), "%u", queues);
	while (*in != '\0') {
		rep = NULL;
		if (strncmp(in, "{sock}", 6) == 0) {
			rep = sock;
			in += 6;
		} else if (strncmp(in, "{queues}", 8) == 0) {
			rep = qbuf;
			in += 8;
		}
		if (rep != NULL) {
			l = strlen(rep);
			if (o + l >= size)
				return -1;
			memcpy(out + o, rep, l);
			o += l;
			continue;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = *in++;
	}
	out[o] = '\0';
	return 0;
}

static int
peer_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void
peer_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), peer_cmp_u64);
}

uint64_t
peer_percentile_u64(const uint64_t *sorted, size_t n, double pct)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = (size_t)(pct / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

uint64_t
peer_rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

void
peer_pattern_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t v = seed;
	size_t i;

	for (i = 0; i < n; i++) {
		v = v * 1103515245u + 12345u;
		p[i] = (uint8_t)(v >> 16);
	}
}
