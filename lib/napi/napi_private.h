/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _NAPI_PRIVATE_H_
#define _NAPI_PRIVATE_H_

/**
 * @file
 * @internal
 * lib/napi internals shared by napi.c and napi_telemetry.c.
 */

#include <rte_log.h>

#include "napi.h"

extern int napi_logtype;

#define NAPI_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, napi_logtype, "napi: " fmt "\n", ##__VA_ARGS__)

/**
 * @internal
 * Run @p fn on the context of @p lcore_id under the registry lock (so that
 * the context cannot be freed meanwhile).
 *
 * @return
 *   @p fn's result, or -ENOENT when the lcore has no context.
 */
int napi_registry_with(unsigned int lcore_id, int (*fn)(struct napi_ctx *ctx, void *arg),
		       void *arg);

/**
 * @internal
 * Lcore ids that have a context, ascending; returns how many (up to @p max).
 */
unsigned int napi_registry_list(unsigned int *ids, unsigned int max);

#endif /* _NAPI_PRIVATE_H_ */
