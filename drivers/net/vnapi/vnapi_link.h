/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_LINK_H_
#define _VNAPI_LINK_H_

/**
 * @file
 * @internal
 * Link state and fault reports: the one place that builds a struct
 * rte_eth_link and raises RTE_ETH_EVENT_INTR_LSC. Depends on nothing else
 * of the driver, so the datapath and the transports can report to it.
 */

#include <stdbool.h>
#include <stdint.h>

#include <ethdev_driver.h>

#include "virtq.h"

/**
 * Set the link up (10G full duplex, fixed) or down.
 * @param event also raise RTE_ETH_EVENT_INTR_LSC if the state changed
 *   (false for the application's own start/stop).
 */
void vnapi_link_set(struct rte_eth_dev *dev, bool up, bool event);

/** Set the link up or down, no event; up only while the device reports a
 * carrier (hw->no_carrier clear). @return true if the status changed (the
 * caller raises the LSC event, e.g. after dropping a lock). */
bool vnapi_link_state_set(struct rte_eth_dev *dev, bool up);

/**
 * A datapath found its ring broken by the device (lib/virtq rejected a
 * value): log it once with virtq_broken_reason(), and take the link down
 * (+ LSC) from the EAL alarm thread, not from the application's lcore.
 * The port needs a stop/start (or reset).
 */
void vnapi_link_queue_broken(uint16_t port_id, const char *dir, uint16_t qid,
			     const struct virtq *vq);

/**
 * Raise RTE_ETH_EVENT_INTR_LSC now, in the caller's thread (outside the
 * driver's locks: the application's callback may call ethdev ops).
 */
void vnapi_link_event(struct rte_eth_dev *dev);

/**
 * Raise RTE_ETH_EVENT_INTR_LSC from EAL's interrupt thread, where
 * applications expect it, for a status change found in another thread (the
 * connection thread, a datapath lcore). Events posted before the first is
 * delivered are delivered as many times.
 */
void vnapi_link_event_post(struct rte_eth_dev *dev);

/** Cancel pending link-down and LSC deliveries (close). */
void vnapi_link_cancel(struct rte_eth_dev *dev);

#endif /* _VNAPI_LINK_H_ */
