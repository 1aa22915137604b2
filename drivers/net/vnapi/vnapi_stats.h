/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_STATS_H_
#define _VNAPI_STATS_H_

/**
 * @file
 * @internal
 * Basic stats and xstats from the per-queue counters ({name, offsetof}
 * tables: queue, lib/virtq and rx interrupt counters).
 */

#include <ethdev_driver.h>

int vnapi_dev_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *st);
int vnapi_dev_stats_reset(struct rte_eth_dev *dev);
int vnapi_dev_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int limit);
int vnapi_dev_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
			       unsigned int limit);

#endif /* _VNAPI_STATS_H_ */
