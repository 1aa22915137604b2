/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Unit tests of lib/virtq against the fake device, TAP output.
 *
 * Every section's case table (test_virtq_<section>.c) runs over a table of
 * configurations: layout (split, packed) x event idx (on, off) x start index
 * (split: 0, 0xFFF0; packed: 0, and 16 slots before a wrap counter flip with
 * either counter value), some with in_order. A case says which
 * configurations it needs; cases that do not depend on the configuration run
 * once.
 */

#include <stdbool.h>
#include <stdio.h>

#include "unit_tap.h"
#include "virtq_harness.h"

static const struct test_cfg test_cfgs[] = {
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = false, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = false, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = true, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = true, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_NEAR_W1 },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_ZERO },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_NEAR_W1 },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_NEAR },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = false, .start = START_NEAR, .in_order = true },
	{ .layout = VIRTQ_LAYOUT_SPLIT, .event_idx = true, .start = START_ZERO, .in_order = true },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = false, .start = START_NEAR_W1,
	  .in_order = true },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_NEAR, .in_order = true },
	{ .layout = VIRTQ_LAYOUT_PACKED, .event_idx = true, .start = START_ZERO, .in_order = true },
};

static const struct test_section *const test_sections[] = {
	&test_section_ring,
	&test_section_notify,
	&test_section_bad_used,
	&test_section_threads,
	&test_section_indirect,
	&test_section_in_order,
};


static bool
test_runs_on(const struct test_case *tc, const struct test_cfg *cfg, size_t cfg_idx)
{
	if ((tc->layouts == ON_SPLIT && cfg->layout != VIRTQ_LAYOUT_SPLIT) ||
	    (tc->layouts == ON_PACKED && cfg->layout != VIRTQ_LAYOUT_PACKED))
		return false;
	if ((tc->order == ORDER_ANY && cfg->in_order) ||
	    (tc->order == ORDER_ONLY && !cfg->in_order))
		return false;
	switch (tc->runs) {
	case RUN_ALL:
		return true;
	case RUN_EVENT_IDX:
		return cfg->event_idx;
	case RUN_FLAGS:
		return !cfg->event_idx;
	case RUN_ONCE:
		return cfg_idx == 0;
	}
	return false;
}

static const char *
test_start_name(const struct test_cfg *cfg)
{
	switch (cfg->start) {
	case START_ZERO:
		return "0";
	case START_NEAR:
		return t_packed(cfg) ? "0xfff0 (num-16, wrap 0)" : "0xfff0";
	case START_NEAR_W1:
		return "0xfff0-num (num-16, wrap 1)";
	}
	return "?";
}

static const char *
test_layout_name(enum virtq_layout l)
{
	return l == VIRTQ_LAYOUT_SPLIT ? "split" : "packed";
}


/* One TAP case: a case of a section on one configuration. */
struct test_run {
	const struct test_case *tc;
	const struct test_cfg *cfg;
};

#define TEST_MAX_RUNS 512

static struct test_run test_runs[TEST_MAX_RUNS];
static struct unit_case test_unit_cases[TEST_MAX_RUNS];
static char test_names[TEST_MAX_RUNS][160];

/* A case on a harness this runner owns: set up, run the body, end. */
static int
test_run_harness(const struct test_case *tc, const struct test_cfg *cfg)
{
	struct harness h;
	int ret = -1;

	if (h_setup_ind(&h, cfg, tc->h.num, tc->h.ind) != 0) {
		printf("#   h_setup_ind(%u entries, indirect %u) failed\n", tc->h.num, tc->h.ind);
		goto teardown;
	}
	ret = tc->h.body(&h, cfg);
teardown:
	switch (tc->h.end) {
	case H_END_CLEAN:
		return h_end_clean(&h, ret);
	case H_END_HEALTHY:
		return h_end_healthy(&h, ret);
	case H_END:
		break;
	}
	return h_end(&h, ret);
}

static int
test_run_one(const void *arg)
{
	const struct test_run *r = arg;
	struct test_cfg cfg = *r->cfg;

	cfg.indirect_max = r->tc->indirect_max;
	if (r->tc->fn != NULL)
		return r->tc->fn(&cfg);
	return test_run_harness(r->tc, &cfg);
}

int
main(int argc, char **argv)
{
	size_t s, i, j, n = 0;

	for (s = 0; s < RTE_DIM(test_sections); s++) {
		for (i = 0; i < test_sections[s]->n; i++) {
			for (j = 0; j < RTE_DIM(test_cfgs); j++) {
				const struct test_case *tc = &test_sections[s]->cases[i];
				const struct test_cfg *cfg = &test_cfgs[j];

				if (!test_runs_on(tc, cfg, j))
					continue;
				if (n == TEST_MAX_RUNS) {
					printf("Bail out! more than %d cases\n", TEST_MAX_RUNS);
					return 2;
				}
				test_runs[n] = (struct test_run){ tc, cfg };
				if (tc->runs == RUN_ONCE)
					snprintf(test_names[n], sizeof(test_names[n]), "%s", tc->name);
				else
					snprintf(test_names[n], sizeof(test_names[n]),
						 "%s [%s event_idx=%s start=%s%s]", tc->name,
						 test_layout_name(cfg->layout),
						 cfg->event_idx ? "on" : "off",
						 test_start_name(cfg), cfg->in_order ? " in_order" : "");
				test_unit_cases[n] = (struct unit_case){
					test_names[n], test_run_one, &test_runs[n] };
				n++;
			}
		}
	}
	return unit_tap_main(argc, argv, test_unit_cases, n, NULL);
}
