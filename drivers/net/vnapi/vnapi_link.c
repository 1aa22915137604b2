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

/* The driver's one call of the LSC callbacks. */
void
vnapi_link_event(struct rte_eth_dev *dev)
{
	rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

void
vnapi_link_set(struct rte_eth_dev *dev, bool up, bool event)
{
	if (vnapi_link_state_set(dev, up) && event)
		vnapi_link_event(dev);
}

/* EAL interrupt thread: deliver the events vnapi_link_event_post() counted. */
static void
vnapi_link_event_alarm(void *arg)
{
	struct rte_eth_dev *dev = arg;
	struct vnapi_proc *proc = dev->process_private;
	uint32_t n;

	if (proc == NULL)
		return;
	/* Pairs with the fetch-add in vnapi_link_event_post(): an event
	 * counted after this exchange sets a new alarm. */
	n = __atomic_exchange_n(&proc->lsc_due, 0, __ATOMIC_ACQ_REL);
	/* The application's callback may close the port: look again each time. */
	while (n-- > 0 && dev->process_private != NULL)
		vnapi_link_event(dev);
}

void
vnapi_link_event_post(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;

	if (__atomic_fetch_add(&proc->lsc_due, 1, __ATOMIC_ACQ_REL) == 0 &&
	    rte_eal_alarm_set(1, vnapi_link_event_alarm, dev) != 0)
		VNAPI_LOG(ERR, "%s: cannot set the LSC alarm: an LSC event is lost",
			  dev->data->name);
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
	/* An alarm running now (its callback closing the port) is not waited for. */
	rte_eal_alarm_cancel(vnapi_link_event_alarm, dev);
}
