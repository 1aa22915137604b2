/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_TAP_H_
#define _PEER_TAP_H_

/**
 * @file
 * Test-peer library: TAP output of a one-process test. Every check is one
 * "ok N - ..." or "not ok N - ..." line; the first failure is kept as the
 * reason; peer_tap_finish() prints the plan and the last line
 * "RESULT: PASS" or "RESULT: FAIL: <first failure>".
 */

#include <stdbool.h>

#include <rte_common.h>

/** One check: "ok N - msg" or "not ok N - msg" (the first failure is kept). */
void peer_tap(bool ok, const char *fmt, ...) __rte_format_printf(2, 3);

/** A failed check; always returns -1. */
int peer_fail(const char *fmt, ...) __rte_format_printf(1, 2);

/** Whether any check failed so far. */
bool peer_failed(void);

/**
 * Print the plan and the RESULT line.
 * @param ret the test's own verdict (0 pass); a failed check fails it too.
 * @return the exit status: 0 pass, 1 fail.
 */
int peer_tap_finish(int ret);

#endif /* _PEER_TAP_H_ */
