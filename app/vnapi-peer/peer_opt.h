/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_OPT_H_
#define _PEER_OPT_H_

/**
 * @file
 * Test-peer library: a peer's command-line options as one table, which
 * both parses (getopt_long, every value range-checked) and prints the usage.
 */

#include <stdint.h>
#include <stdio.h>

/** What an option's argument is and where it goes. */
enum peer_opt_type {
	PEER_OPT_FLAG,   /**< no argument; dst is a bool, set true */
	PEER_OPT_STR,    /**< dst is a const char *, the argument itself */
	PEER_OPT_U32,    /**< dst is a uint32_t in [min, max] */
	PEER_OPT_U64,    /**< dst is a uint64_t in [min, max] */
	PEER_OPT_DOUBLE, /**< dst is a double in [dmin, dmax] */
	PEER_OPT_CHOICE, /**< dst is an int: the index of the argument in choices */
	PEER_OPT_FN,     /**< fn(argument, dst) stores it; 0 or -1 */
};

/** One long option (--name). */
struct peer_opt {
	const char *name;
	enum peer_opt_type type;
	void *dst;
	uint64_t min;                  /**< PEER_OPT_U32, PEER_OPT_U64 */
	uint64_t max;
	double dmin;                   /**< PEER_OPT_DOUBLE */
	double dmax;
	const char *const *choices;    /**< PEER_OPT_CHOICE: NULL-terminated */
	/**
	 * The default, stored by peer_opts_parse() before it reads argv, so
	 * that each option states its default once, in its own row: def for
	 * PEER_OPT_U32, PEER_OPT_U64 and PEER_OPT_CHOICE, ddef for
	 * PEER_OPT_DOUBLE. 0 leaves dst as it is (a default set at run time,
	 * or the zero of static storage).
	 */
	uint64_t def;
	double ddef;
	int (*fn)(const char *arg, void *dst);
	const char *arg;               /**< the argument's name in the usage, e.g. "N" */
	const char *help;
};

/**
 * Store the defaults of the @p n options of @p t (def, ddef), then parse
 * argv[1..argc-1] against them. Every argument must be an option of the
 * table.
 * @return 0, or -1 with a line on stderr naming the option and the value.
 */
int peer_opts_parse(int argc, char **argv, const struct peer_opt *t, unsigned int n);

/** Print "usage: @p synopsis" and one line per option of @p t to @p f. */
void peer_opts_usage(FILE *f, const char *synopsis, const struct peer_opt *t, unsigned int n);

#endif /* _PEER_OPT_H_ */
