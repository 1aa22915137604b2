/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_UNIT_CHECK_H_
#define _VNAPI_UNIT_CHECK_H_

/**
 * @file
 * Checks for the TAP unit tests: a failed check prints a TAP diagnostic
 * line and jumps to the case's "teardown" label, which releases what the
 * case set up and returns its failure value.
 */

#include <stdio.h>

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		goto teardown; \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long a_ = (long long)(a); \
	long long b_ = (long long)(b); \
	if (a_ != b_) { \
		printf("#   %s:%d: %s is %lld (0x%llx), expected %s = %lld (0x%llx)\n", \
		       __FILE__, __LINE__, #a, a_, (unsigned long long)a_, #b, b_, \
		       (unsigned long long)b_); \
		goto teardown; \
	} \
} while (0)

#endif /* _VNAPI_UNIT_CHECK_H_ */
