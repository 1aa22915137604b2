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

bool
vnapi_link_state_set(struct rte_eth_dev *dev, bool up)
{
	const struct vnapi_hw *hw = dev->data->dev_private;
	struct rte_eth_link link;

	/* A device that reports no carrier (virtio-pci config status) keeps
	 * the link down even with the rings served. */
	up = up && !__atomic_load_n(&hw->no_carrier, __ATOMIC_RELAXED);

	memset(&link, 0, sizeof(link));
	link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	link.link_autoneg = RTE_ETH_LINK_FIXED;
	link.link_status = up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
	link.link_speed = up ? RTE_ETH_SPEED_NUM_10G : RTE_ETH_SPEED_NUM_NONE;
	/* rte_eth_linkstatus_set() returns 0 when the status changed. */
	return rte_eth_linkstatus_set(dev, &link) == 0;
}

void
vnapi_link_set(struct rte_eth_dev *dev, bool up, bool event)
{
	if (vnapi_link_state_set(dev, up) && event)
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

static void
vnapi_link_down_alarm(void *arg)
{
	vnapi_link_set(arg, false, true);
}

void
vnapi_link_queue_broken(uint16_t port_id, const char *dir, uint16_t qid,
			const struct virtq *vq)
{
	struct rte_eth_dev *dev = &rte_eth_devices[port_id];
	struct vnapi_hw *hw = dev->data->dev_private;

	if (!vnapi_connected(hw))
		return; /* the device left: vnapi_conn.c said so */
	VNAPI_LOG(ERR, "%s: %s queue %u broken by the back end: %s; link down until the port is restarted",
		  dev->data->name, dir, qid, virtq_broken_reason(vq));
	rte_eal_alarm_set(1, vnapi_link_down_alarm, dev);
}

void
vnapi_link_cancel(struct rte_eth_dev *dev)
{
	rte_eal_alarm_cancel(vnapi_link_down_alarm, dev);
}
