/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The default port operations: ethdev for the queues, EAL's per-thread
 * epoll instance for sleeping.
 */

#include <errno.h>
#include <sys/epoll.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_epoll.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>

#include "napi.h"

static uint16_t
napi_ethdev_rx_burst(void *arg, uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
		     uint16_t nb_pkts)
{
	return rte_eth_rx_burst(port, queue, pkts, nb_pkts);
}

static uint16_t
napi_ethdev_tx_burst(void *arg, uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
		     uint16_t nb_pkts)
{
	return rte_eth_tx_burst(port, queue, pkts, nb_pkts);
}

static int
napi_ethdev_intr_enable(void *arg, uint16_t port, uint16_t queue)
{
	return rte_eth_dev_rx_intr_enable(port, queue);
}

static int
napi_ethdev_intr_disable(void *arg, uint16_t port, uint16_t queue)
{
	return rte_eth_dev_rx_intr_disable(port, queue);
}

static int
napi_ethdev_rx_queue_count(void *arg, uint16_t port, uint16_t queue)
{
	return rte_eth_rx_queue_count(port, queue);
}

static int
napi_ethdev_tx_done_cleanup(void *arg, uint16_t port, uint16_t queue, uint32_t free_cnt)
{
	return rte_eth_tx_done_cleanup(port, queue, free_cnt);
}

static int
napi_ethdev_intr_register(void *arg, uint16_t port, uint16_t queue, void *data)
{
	return rte_eth_dev_rx_intr_ctl_q(port, queue, RTE_EPOLL_PER_THREAD,
					 RTE_INTR_EVENT_ADD, data);
}

static int
napi_ethdev_intr_unregister(void *arg, uint16_t port, uint16_t queue, void *data)
{
	/* EAL removes the fd from the epoll instance it was added to. */
	return rte_eth_dev_rx_intr_ctl_q(port, queue, RTE_EPOLL_PER_THREAD,
					 RTE_INTR_EVENT_DEL, data);
}

static int
napi_ethdev_fd_register(void *arg, int fd, struct rte_epoll_event *ev)
{
	return rte_epoll_ctl(RTE_EPOLL_PER_THREAD, EPOLL_CTL_ADD, fd, ev) == 0 ? 0 : -EIO;
}

static int
napi_ethdev_fd_unregister(void *arg, int fd, struct rte_epoll_event *ev)
{
	/* rte_epoll_ctl recorded the thread's epoll fd in ev at ADD. */
	return rte_epoll_ctl(ev->epfd, EPOLL_CTL_DEL, fd, ev) == 0 ? 0 : -EIO;
}

static int
napi_ethdev_epoll_wait(void *arg, struct rte_epoll_event *events, int max, int timeout_ms)
{
	/* Interruptible: a signal ends the sleep, so napi_run sees a stop flag
	 * set by a handler on this thread. */
	return rte_epoll_wait_interruptible(RTE_EPOLL_PER_THREAD, events, max, timeout_ms);
}

static uint64_t
napi_ethdev_now(void *arg)
{
	return rte_rdtsc();
}

const struct napi_ops napi_ops_ethdev = {
	.rx_burst = napi_ethdev_rx_burst,
	.tx_burst = napi_ethdev_tx_burst,
	.intr_enable = napi_ethdev_intr_enable,
	.intr_disable = napi_ethdev_intr_disable,
	.rx_queue_count = napi_ethdev_rx_queue_count,
	.tx_done_cleanup = napi_ethdev_tx_done_cleanup,
	.intr_register = napi_ethdev_intr_register,
	.intr_unregister = napi_ethdev_intr_unregister,
	.fd_register = napi_ethdev_fd_register,
	.fd_unregister = napi_ethdev_fd_unregister,
	.epoll_wait = napi_ethdev_epoll_wait,
	.now = napi_ethdev_now,
};
