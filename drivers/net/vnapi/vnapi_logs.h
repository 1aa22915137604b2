/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_LOGS_H_
#define _VNAPI_LOGS_H_

#include <rte_log.h>

extern int vnapi_logtype_init;
extern int vnapi_logtype_driver;

/** Every message starts with this, whatever its log type. */
#define VNAPI_LOG_PREFIX "vnapi: "

/** Control-path logs (pmd.net.vnapi.init): probe, devargs, vhost-user, start/stop. */
#define VNAPI_INIT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, vnapi_logtype_init, VNAPI_LOG_PREFIX fmt "\n", ##__VA_ARGS__)

/** Driver logs (pmd.net.vnapi.driver): link, queues, broken rings. */
#define VNAPI_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, vnapi_logtype_driver, VNAPI_LOG_PREFIX fmt "\n", ##__VA_ARGS__)

/**
 * Per-packet logs (pmd.net.vnapi.driver): compiled out unless
 * -Ddatapath_debug=true. When out, the arguments are still type-checked
 * (inside a dead branch) but never evaluated.
 */
#ifdef VNAPI_DATAPATH_DEBUG
#define VNAPI_DP_LOG(level, fmt, ...) VNAPI_LOG(level, fmt, ##__VA_ARGS__)
#else
#define VNAPI_DP_LOG(level, fmt, ...) do { \
	if (0) \
		VNAPI_LOG(level, fmt, ##__VA_ARGS__); \
} while (0)
#endif

#endif /* _VNAPI_LOGS_H_ */
