/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_TIME_H_
#define _VNAPI_TIME_H_

/**
 * @file
 * @internal
 * The control path's clock: CLOCK_MONOTONIC in milliseconds, for deadlines
 * and backoffs (the connection state machine, the vhost-user socket, their
 * unit tests), and in microseconds for the tx drain at stop. Not for the
 * datapath.
 */

#include <stdint.h>
#include <time.h>

/** Milliseconds of CLOCK_MONOTONIC. */
static inline uint64_t
vnapi_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/** Microseconds of CLOCK_MONOTONIC (the tx drain's own account of its wait). */
static inline uint64_t
vnapi_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

#endif /* _VNAPI_TIME_H_ */
