/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <getopt.h>
#include <stdbool.h>
#include <string.h>

#include "peer_opt.h"
#include "peer_util.h"

#define PEER_OPTS_MAX 64
#define PEER_OPT_VAL0 256 /* getopt_long's val of table entry 0 */

/* Store @p v where option @p o of an integer type (U32, U64, CHOICE) points. */
static void
peer_opt_store_int(const struct peer_opt *o, uint64_t v)
{
	if (o->type == PEER_OPT_U64)
		*(uint64_t *)o->dst = v;
	else if (o->type == PEER_OPT_U32)
		*(uint32_t *)o->dst = (uint32_t)v;
	else
		*(int *)o->dst = (int)v;
}

/* Store @p arg as option @p o says; 0 or -1. */
static int
peer_opt_store(const struct peer_opt *o, const char *arg)
{
	unsigned int i;
	uint64_t v;

	switch (o->type) {
	case PEER_OPT_FLAG:
		*(bool *)o->dst = true;
		return 0;
	case PEER_OPT_STR:
		*(const char **)o->dst = arg;
		return 0;
	case PEER_OPT_U32:
	case PEER_OPT_U64:
		if (peer_parse_u64(arg, o->min, o->type == PEER_OPT_U32 && o->max > UINT32_MAX ?
				   UINT32_MAX : o->max, &v) != 0)
			return -1;
		peer_opt_store_int(o, v);
		return 0;
	case PEER_OPT_DOUBLE:
		return peer_parse_double(arg, o->dmin, o->dmax, (double *)o->dst);
	case PEER_OPT_CHOICE:
		for (i = 0; o->choices[i] != NULL; i++) {
			if (strcmp(arg, o->choices[i]) == 0) {
				peer_opt_store_int(o, i);
				return 0;
			}
		}
		return -1;
	case PEER_OPT_FN:
		return o->fn(arg, o->dst);
	}
	return -1;
}

/* Store option @p o's default, unless it has none (0). */
static void
peer_opt_store_default(const struct peer_opt *o)
{
	if (o->type == PEER_OPT_DOUBLE && o->ddef != 0)
		*(double *)o->dst = o->ddef;
	else if ((o->type == PEER_OPT_U32 || o->type == PEER_OPT_U64 ||
		  o->type == PEER_OPT_CHOICE) && o->def != 0)
		peer_opt_store_int(o, o->def);
}

int
peer_opts_parse(int argc, char **argv, const struct peer_opt *t, unsigned int n)
{
	struct option lo[PEER_OPTS_MAX + 1];
	unsigned int i;
	int c;

	if (n > PEER_OPTS_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		peer_opt_store_default(&t[i]);
		lo[i] = (struct option){
			.name = t[i].name,
			.has_arg = t[i].type == PEER_OPT_FLAG ? no_argument : required_argument,
			.flag = NULL,
			.val = PEER_OPT_VAL0 + (int)i,
		};
	}
	memset(&lo[n], 0, sizeof(lo[n]));
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c < PEER_OPT_VAL0 || c >= PEER_OPT_VAL0 + (int)n)
			return -1; /* getopt_long named it already */
		if (peer_opt_store(&t[c - PEER_OPT_VAL0], optarg) != 0) {
			fprintf(stderr, "bad value for --%s: '%s'\n", t[c - PEER_OPT_VAL0].name,
				optarg);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

void
peer_opts_usage(FILE *f, const char *synopsis, const struct peer_opt *t, unsigned int n)
{
	char left[64];
	unsigned int i;

	fprintf(f, "usage: %s\n", synopsis);
	for (i = 0; i < n; i++) {
		snprintf(left, sizeof(left), "--%s%s%s", t[i].name, t[i].arg != NULL ? " " : "",
			 t[i].arg != NULL ? t[i].arg : "");
		fprintf(f, "  %-24s %s\n", left, t[i].help != NULL ? t[i].help : "");
	}
}
