/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_UNIT_CHECK_H_
#define _VNAPI_UNIT_CHECK_H_

/**
 * @file
 * Checks for the TAP unit tests: a failed check prints a TAP diagnostic
 * line, then either jumps to the case's "teardown" label, which releases
 * what the case set up and returns its failure value (CHECK, CHECK_EQ), or,
 * in a body that owns nothing to release (a script whose runner owns the
 * fixture, a pure function's table), returns -1 at once (EXPECT,
 * EXPECT_EQ). Both kinds print the same line, so a failure reads the same.
 */

#include <stdio.h>

/* Print why cond failed, then run the failure action (goto or return). */
#define UNIT_CHECK_(cond, fail) do { \
	if (!(cond)) { \
		printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		fail; \
	} \
} while (0)

/* Print both values when they differ, then run the failure action. */
#define UNIT_CHECK_EQ_(a, b, fail) do { \
	long long a_ = (long long)(a); \
	long long b_ = (long long)(b); \
	if (a_ != b_) { \
		printf("#   %s:%d: %s is %lld (0x%llx), expected %s = %lld (0x%llx)\n", \
		       __FILE__, __LINE__, #a, a_, (unsigned long long)a_, #b, b_, \
		       (unsigned long long)b_); \
		fail; \
	} \
} while (0)

#define CHECK(cond) UNIT_CHECK_(cond, goto teardown)
#define CHECK_EQ(a, b) UNIT_CHECK_EQ_(a, b, goto teardown)
#define EXPECT(cond) UNIT_CHECK_(cond, return -1)
#define EXPECT_EQ(a, b) UNIT_CHECK_EQ_(a, b, return -1)

#endif /* _VNAPI_UNIT_CHECK_H_ */
