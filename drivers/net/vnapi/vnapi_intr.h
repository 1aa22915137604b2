/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_INTR_H_
#define _VNAPI_INTR_H_

/**
 * @file
 * @internal
 * Rx interrupts the NAPI way (see vnapi_intr.c): the interrupt handle over
 * the call eventfds, arming with a re-check, disarming with the
 * notification count, and the per-wakeup accounting.
 */

#include <stdint.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"

/** (Re)build dev->intr_handle over the rx call eventfds if intr_conf.rxq. */
int vnapi_intr_configure(struct rte_eth_dev *dev);
void vnapi_intr_release(struct rte_eth_dev *dev);
int vnapi_dev_rx_queue_intr_enable(struct rte_eth_dev *dev, uint16_t qid);
int vnapi_dev_rx_queue_intr_disable(struct rte_eth_dev *dev, uint16_t qid);

/** The queue's rings were laid out anew: forget what a disarm left owed. */
void vnapi_intr_rings_restarted(struct vnapi_rxq *rxq);

/** Called by the rx bursts while a wakeup window is open (rare branch). */
void vnapi_rx_window_account(struct vnapi_rxq *rxq, uint16_t nb_rx);

#endif /* _VNAPI_INTR_H_ */
