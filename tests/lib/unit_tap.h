/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_UNIT_TAP_H_
#define _VNAPI_UNIT_TAP_H_

/**
 * @file
 * The one TAP runner of the unit tests: a table of named cases, run in
 * order, one "ok N - name" or "not ok N - name" line each after the plan.
 *
 * @code
 * static int
 * test_one(const void *arg)
 * {
 *	int rc = -1;
 *
 *	(void)arg;
 *	CHECK_EQ(1 + 1, 2);      (see unit_check.h)
 *	rc = 0;
 * teardown:
 *	return rc;
 * }
 *
 * static const struct unit_case cases[] = {
 *	{ "one plus one", test_one, NULL },
 * };
 *
 * int
 * main(int argc, char **argv)
 * {
 *	return unit_tap_main(argc, argv, cases, RTE_DIM(cases), NULL);
 * }
 * @endcode
 *
 * Command line of such a program: `prog [-l] [PATTERN...]`. With patterns,
 * only the cases whose name contains one of them run (and are counted in
 * the plan); a pattern no case matches is an error. `-l` lists the names
 * of the selected cases instead of running them.
 */

#include <stddef.h>

/** One case: returns 0 when it passes, anything else when it fails. */
struct unit_case {
	const char *name;                /**< the TAP line's description */
	int (*fn)(const void *arg);
	const void *arg;                 /**< passed to fn as is */
};

/**
 * Runs one case in place of the default `c->fn(c->arg)`, e.g. to check
 * something around every case. Returns 0 when the case passes.
 */
typedef int (*unit_case_runner)(const struct unit_case *c);

/**
 * Parse the command line, print the plan, run the selected cases of
 * @p cases in order and print one result line each.
 *
 * @param run
 *   NULL, or what runs each case (see unit_case_runner).
 * @return
 *   The exit status for main(): 0 when every selected case passed, 1 when
 *   one failed, 2 on a usage error or a pattern that matches no case.
 */
int unit_tap_main(int argc, char **argv, const struct unit_case *cases, size_t n,
		  unit_case_runner run);

#endif /* _VNAPI_UNIT_TAP_H_ */
