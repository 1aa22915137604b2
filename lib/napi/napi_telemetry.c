/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Telemetry: /napi/lcores lists the lcores with a context, /napi/stats,<lcore>
 * gives that context's counters and one dictionary per entry
 * ("q<port>_<queue>": telemetry names allow only [A-Za-z0-9_/]). Read with dpdk-telemetry.py.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "napi.h"
#include "napi_private.h"
#include "vnapi_compat.h"

/* A {name, offsetof} table per stats struct: the dictionaries follow it. */
struct napi_tel_field {
	const char *name;
	size_t off;
};

#define NAPI_LCORE_FIELD(f) { #f, offsetof(struct napi_lcore_stats, f) }
static const struct napi_tel_field napi_tel_lcore[] = {
	NAPI_LCORE_FIELD(tsc_hz),
	NAPI_LCORE_FIELD(rounds),
	NAPI_LCORE_FIELD(polls),
	NAPI_LCORE_FIELD(empty_polls),
	NAPI_LCORE_FIELD(packets),
	NAPI_LCORE_FIELD(arms),
	NAPI_LCORE_FIELD(races),
	NAPI_LCORE_FIELD(sleeps),
	NAPI_LCORE_FIELD(sleep_timeouts),
	NAPI_LCORE_FIELD(sleep_interrupts),
	NAPI_LCORE_FIELD(wakeups),
	NAPI_LCORE_FIELD(spurious_wakeups),
	NAPI_LCORE_FIELD(wakeup_packets),
	NAPI_LCORE_FIELD(sleep_cycles),
	NAPI_LCORE_FIELD(busy_cycles),
	NAPI_LCORE_FIELD(idle_cycles),
	NAPI_LCORE_FIELD(tx_reclaimed),
	NAPI_LCORE_FIELD(tx_sent),
	NAPI_LCORE_FIELD(tx_retries),
	NAPI_LCORE_FIELD(tx_unsent),
	NAPI_LCORE_FIELD(tx_held),
	NAPI_LCORE_FIELD(tx_hold_drops),
	NAPI_LCORE_FIELD(tx_blocked_rounds),
	NAPI_LCORE_FIELD(defer_ns),
	NAPI_LCORE_FIELD(wake_cost_ns),
	NAPI_LCORE_FIELD(paced_ns),
	NAPI_LCORE_FIELD(work_calls),
	NAPI_LCORE_FIELD(arms_held),
	NAPI_LCORE_FIELD(window_grows),
	NAPI_LCORE_FIELD(window_shrinks),
	NAPI_LCORE_FIELD(windows_caught),
	NAPI_LCORE_FIELD(windows_expired),
	NAPI_LCORE_FIELD(probes),
	NAPI_LCORE_FIELD(probe_hits),
	NAPI_LCORE_FIELD(work_holds),
	NAPI_LCORE_FIELD(paced),
	NAPI_LCORE_FIELD(pace_tests),
	NAPI_LCORE_FIELD(pace_slowed),
	NAPI_LCORE_FIELD(pace_voids),
	NAPI_LCORE_FIELD(pace_switches),
};

#define NAPI_QUEUE_FIELD(f) { #f, offsetof(struct napi_queue_stats, f) }
static const struct napi_tel_field napi_tel_queue[] = {
	NAPI_QUEUE_FIELD(polls),
	NAPI_QUEUE_FIELD(empty_polls),
	NAPI_QUEUE_FIELD(full_polls),
	NAPI_QUEUE_FIELD(packets),
	NAPI_QUEUE_FIELD(arms),
	NAPI_QUEUE_FIELD(races),
	NAPI_QUEUE_FIELD(race_disarms),
	NAPI_QUEUE_FIELD(arm_errors),
	NAPI_QUEUE_FIELD(wakeups),
	NAPI_QUEUE_FIELD(spurious_wakeups),
	NAPI_QUEUE_FIELD(timeout_polls),
	NAPI_QUEUE_FIELD(wakeup_packets),
	NAPI_QUEUE_FIELD(arms_held),
	NAPI_QUEUE_FIELD(window_ns),
	NAPI_QUEUE_FIELD(window_grows),
	NAPI_QUEUE_FIELD(window_shrinks),
	NAPI_QUEUE_FIELD(windows_caught),
	NAPI_QUEUE_FIELD(windows_expired),
	NAPI_QUEUE_FIELD(probes),
	NAPI_QUEUE_FIELD(probe_hits),
	NAPI_QUEUE_FIELD(work_holds),
	NAPI_QUEUE_FIELD(paced),
	NAPI_QUEUE_FIELD(pace_tests),
	NAPI_QUEUE_FIELD(pace_slowed),
	NAPI_QUEUE_FIELD(pace_voids),
	NAPI_QUEUE_FIELD(pace_switches),
	NAPI_QUEUE_FIELD(armed_cycles),
	NAPI_QUEUE_FIELD(busy_cycles),
	NAPI_QUEUE_FIELD(tx_reclaimed),
	NAPI_QUEUE_FIELD(tx_sent),
	NAPI_QUEUE_FIELD(tx_retries),
	NAPI_QUEUE_FIELD(tx_unsent),
	NAPI_QUEUE_FIELD(tx_held),
	NAPI_QUEUE_FIELD(tx_hold_drops),
	NAPI_QUEUE_FIELD(tx_blocked_rounds),
};

static void
napi_tel_fill(struct rte_tel_data *d, const void *s, const struct napi_tel_field *f,
	      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		vnapi_tel_dict_add_u64(d, f[i].name,
				       *(const uint64_t *)RTE_PTR_ADD(s, f[i].off));
}

/*
 * The per-wakeup timing histograms, flattened into the entry's dictionary
 * (one level of nesting is all telemetry promises): "<name>_lt<N>us" counts
 * the durations under N us (and at least the previous bound),
 * "<name>_ge16384us" the rest.
 */
struct napi_tel_hist {
	const char *name;
	size_t off;
};

#define NAPI_QUEUE_HIST(f) { #f, offsetof(struct napi_queue_stats, f ## _hist) }
static const struct napi_tel_hist napi_tel_queue_hist[] = {
	NAPI_QUEUE_HIST(arm_wake),
	NAPI_QUEUE_HIST(wake_poll),
	NAPI_QUEUE_HIST(wake_arm),
	NAPI_QUEUE_HIST(poll_gap),
	NAPI_QUEUE_HIST(spin),
};

static void
napi_tel_add_hists(struct rte_tel_data *d, const void *s, const struct napi_tel_hist *h,
		   unsigned int n)
{
	unsigned int i, b;
	char name[RTE_TEL_MAX_STRING_LEN];

	for (i = 0; i < n; i++) {
		const uint64_t *v = RTE_PTR_ADD(s, h[i].off);

		for (b = 0; b < NAPI_HIST_BUCKETS; b++) {
			if (b == NAPI_HIST_BUCKETS - 1)
				snprintf(name, sizeof(name), "%s_ge%" PRIu64 "us", h[i].name,
					 napi_hist_lower_us(b));
			else
				snprintf(name, sizeof(name), "%s_lt%" PRIu64 "us", h[i].name,
					 (uint64_t)1 << b);
			vnapi_tel_dict_add_u64(d, name, v[b]);
		}
	}
}

static int
napi_tel_lcores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int ids[RTE_MAX_LCORE], n, i;

	n = napi_registry_list(ids, RTE_DIM(ids));
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < n; i++)
		rte_tel_data_add_array_int(d, (int)ids[i]);
	return 0;
}

struct napi_tel_req {
	struct rte_tel_data *d;
};

static int
napi_tel_stats_of(struct napi_ctx *ctx, void *arg)
{
	struct napi_tel_req *req = arg;
	struct napi_queue_stats qs[NAPI_MAX_QUEUES];
	struct napi_lcore_stats ls;
	int n, i;

	n = napi_stats_get(ctx, &ls, qs, RTE_DIM(qs));
	if (n < 0)
		return n;
	rte_tel_data_start_dict(req->d);
	rte_tel_data_add_dict_int(req->d, "lcore", (int)ls.lcore_id);
	rte_tel_data_add_dict_int(req->d, "nb_queues", (int)ls.nb_queues);
	napi_tel_fill(req->d, &ls, napi_tel_lcore, RTE_DIM(napi_tel_lcore));
	for (i = 0; i < n && i < (int)RTE_DIM(qs); i++) {
		struct rte_tel_data *q = rte_tel_data_alloc();
		char name[32];

		if (q == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(q);
		rte_tel_data_add_dict_int(q, "port", qs[i].port);
		rte_tel_data_add_dict_int(q, "queue", qs[i].queue);
		rte_tel_data_add_dict_string(q, "mode", napi_mode_name(qs[i].mode));
		rte_tel_data_add_dict_int(q, "armed", qs[i].armed);
		rte_tel_data_add_dict_int(q, "scheduled", qs[i].scheduled);
		napi_tel_fill(q, &qs[i], napi_tel_queue, RTE_DIM(napi_tel_queue));
		napi_tel_add_hists(q, &qs[i], napi_tel_queue_hist, RTE_DIM(napi_tel_queue_hist));
		snprintf(name, sizeof(name), "q%u_%u", qs[i].port, qs[i].queue);
		if (rte_tel_data_add_dict_container(req->d, name, q, 0) != 0) {
			rte_tel_data_free(q);
			return -ENOSPC;
		}
	}
	return 0;
}

static int
napi_tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct napi_tel_req req = { .d = d };
	unsigned long lcore;
	char *end;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	lcore = strtoul(params, &end, 10);
	if (*end != '\0' || lcore >= RTE_MAX_LCORE)
		return -EINVAL;
	return napi_registry_with((unsigned int)lcore, napi_tel_stats_of, &req);
}

/* Registered at load time, as DPDK's libraries register theirs: the
 * scheduler never calls into this file (the dependency runs one way, from
 * here to the registry). The commands answer -ENOENT/empty until a context
 * exists. meson links this library whole so that the constructor is kept.
 */
RTE_INIT(napi_telemetry_register)
{
	rte_telemetry_register_cmd("/napi/lcores", napi_tel_lcores,
				   "Lcores with a napi context. No parameters");
	rte_telemetry_register_cmd("/napi/stats", napi_tel_stats,
				   "Counters of an lcore's napi context. Parameters: int lcore_id");
}
