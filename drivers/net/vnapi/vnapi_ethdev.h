/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_ETHDEV_H_
#define _VNAPI_ETHDEV_H_

/**
 * @file
 * @internal
 * The ethdev ops table (vnapi_ethdev.c), for the probe of each bus.
 */

#include <ethdev_driver.h>

extern const struct eth_dev_ops vnapi_eth_dev_ops;

/** Stop, release the queues and let go of the device (primary only). */
int vnapi_dev_close(struct rte_eth_dev *dev);

#endif /* _VNAPI_ETHDEV_H_ */
