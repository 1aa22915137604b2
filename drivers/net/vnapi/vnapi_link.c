/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <string.h>

#include <rte_alarm.h>
#include <rte_common.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"

void
vnapi_link_set(struct rte_eth_dev *dev, bool up, bool event)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	link.link_autoneg = RTE_ETH_LINK_FIXED;
	link.link_status = up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
	link.link_speed = up ? RTE_ETH_SPEED_NUM_10G : RTE_ETH_SPEED_NUM_NONE;
	/* rte_eth_linkstatus_set() returns 0 when the status changed. */
	if (rte_eth_linkstatus_set(dev, &link) == 0 && event)
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

static void
vnapi_link_down_alarm(void *arg)
{
	vnapi_link_set(arg, false, true);
}

static void
vnapi_queues_mark_broken(struct rte_eth_dev *dev, const char *why)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			virtq_mark_broken(rxq->vq, why);
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			virtq_mark_broken(txq->vq, why);
	}
}

void
vnapi_link_lost(struct rte_eth_dev *dev, const char *why)
{
	struct vnapi_hw *hw = dev->data->dev_private;

	vnapi_connected_set(hw, false);
	VNAPI_LOG(ERR, "%s: %s at %s: link down", dev->data->name, why, hw->params.path);
	/* Nobody serves the rings any more: bursts return 0 from now on, and
	 * stop/start after rte_eth_dev_reset lays them out anew. */
	vnapi_queues_mark_broken(dev, why);
	vnapi_link_set(dev, false, true);
}

void
vnapi_link_queue_broken(uint16_t port_id, const char *dir, uint16_t qid,
			const struct virtq *vq)
{
	struct rte_eth_dev *dev = &rte_eth_devices[port_id];
	struct vnapi_hw *hw = dev->data->dev_private;

	if (!vnapi_connected(hw))
		return; /* the device left: vnapi_link_lost() said so */
	VNAPI_LOG(ERR, "%s: %s queue %u broken by the back end: %s; link down until the port is restarted",
		  dev->data->name, dir, qid, virtq_broken_reason(vq));
	rte_eal_alarm_set(1, vnapi_link_down_alarm, dev);
}

void
vnapi_link_cancel(struct rte_eth_dev *dev)
{
	rte_eal_alarm_cancel(vnapi_link_down_alarm, dev);
}
