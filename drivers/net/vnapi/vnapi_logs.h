/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_LOGS_H_
#define _VNAPI_LOGS_H_

#include <rte_log.h>

extern int vnapi_logtype_init;
extern int vnapi_logtype_driver;

/** Control-path logs: probe, devargs, vhost-user, start/stop. */
#define VNAPI_INIT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, vnapi_logtype_init, "%s(): " fmt "\n", __func__, ##__VA_ARGS__)

/** Driver logs: link, queues, broken rings. */
#define VNAPI_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, vnapi_logtype_driver, "vnapi: " fmt "\n", ##__VA_ARGS__)

/** Per-packet logs: compiled out unless -Ddatapath_debug=true. */
#ifdef VNAPI_DATAPATH_DEBUG
#define VNAPI_DP_LOG(level, fmt, ...) VNAPI_LOG(level, fmt, ##__VA_ARGS__)
#else
#define VNAPI_DP_LOG(level, fmt, ...) do { } while (0)
#endif

#endif /* _VNAPI_LOGS_H_ */
