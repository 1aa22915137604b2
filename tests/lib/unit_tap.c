/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "unit_tap.h"

struct unit_tap_args {
	char **patterns;
	int npatterns;
	bool list;
};

static bool
unit_tap_selected(const struct unit_tap_args *a, const char *name)
{
	int i;

	if (a->npatterns == 0)
		return true;
	for (i = 0; i < a->npatterns; i++)
		if (strstr(name, a->patterns[i]) != NULL)
			return true;
	return false;
}

/* Every pattern must select at least one case: a typo is not a pass. */
static int
unit_tap_check_patterns(const struct unit_tap_args *a, const struct unit_case *cases,
			size_t n)
{
	int i;
	size_t j;

	for (i = 0; i < a->npatterns; i++) {
		for (j = 0; j < n; j++)
			if (strstr(cases[j].name, a->patterns[i]) != NULL)
				break;
		if (j == n) {
			printf("Bail out! no case name contains \"%s\"\n", a->patterns[i]);
			return -1;
		}
	}
	return 0;
}

static int
unit_tap_parse(struct unit_tap_args *a, int argc, char **argv)
{
	int i;

	memset(a, 0, sizeof(*a));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-l") == 0) {
			a->list = true;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: %s [-l] [PATTERN...]\n", argv[0]);
			return -1;
		} else {
			break;
		}
	}
	a->patterns = argv + i;
	a->npatterns = argc - i;
	return 0;
}

int
unit_tap_main(int argc, char **argv, const struct unit_case *cases, size_t n,
	      unit_case_runner run)
{
	struct unit_tap_args a;
	unsigned int planned = 0, num = 0, failed = 0;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (unit_tap_parse(&a, argc, argv) != 0 ||
	    unit_tap_check_patterns(&a, cases, n) != 0)
		return 2;
	for (i = 0; i < n; i++) {
		if (!unit_tap_selected(&a, cases[i].name))
			continue;
		if (a.list)
			printf("%s\n", cases[i].name);
		planned++;
	}
	if (a.list)
		return 0;
	printf("1..%u\n", planned);
	for (i = 0; i < n; i++) {
		const struct unit_case *c = &cases[i];
		int rc;

		if (!unit_tap_selected(&a, c->name))
			continue;
		rc = run != NULL ? run(c) : c->fn(c->arg);
		num++;
		if (rc != 0)
			failed++;
		printf("%s %u - %s\n", rc == 0 ? "ok" : "not ok", num, c->name);
		fflush(stdout);
	}
	return failed == 0 ? 0 : 1;
}
