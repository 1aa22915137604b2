/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The control path's side of the datapath gates (vnapi_gate.h): close
 * every queue's gate and wait for the lcores to leave, open them again.
 */

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>

#include <rte_common.h>
#include <rte_pause.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"
#include "vnapi_gate.h"
#include "vnapi_logs.h"

/** Sleep between two looks at a busy gate. */
#define VNAPI_GATE_WAIT_NS 20000

static void
vnapi_gate_sleep(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = VNAPI_GATE_WAIT_NS };

	nanosleep(&ts, NULL);
}

/* 1: the process is registered for the expedited membarrier; -1: not
 * available (then MEMBARRIER_CMD_GLOBAL). Set at probe. */
static int vnapi_membarrier_mode;

void
vnapi_membarrier_register(void)
{
	int mode;

	if (__atomic_load_n(&vnapi_membarrier_mode, __ATOMIC_RELAXED) != 0)
		return;
	mode = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0 ?
	       1 : -1;
	__atomic_store_n(&vnapi_membarrier_mode, mode, __ATOMIC_RELAXED);
}

/* A full barrier on every running thread of the process (vnapi_gate.h). */
static void
vnapi_membarrier(void)
{
	if (__atomic_load_n(&vnapi_membarrier_mode, __ATOMIC_RELAXED) == 1 &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0)
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0) != 0)
		VNAPI_LOG(ERR, "membarrier: %s; a burst may overlap a ring reset",
			  strerror(errno));
}

void
vnapi_gate_init_closed(struct vnapi_gate *g)
{
	g->busy = 0;
	g->off = 1;
}

static void
vnapi_gate_wait(const struct vnapi_gate *g)
{
	unsigned int spins = 0;

	/* Acquire: the burst's ring accesses before we touch the ring. A
	 * burst is short, but its lcore may be preempted: sleep, no spin. */
	while (__atomic_load_n(&g->busy, __ATOMIC_ACQUIRE)) {
		if (++spins < 64)
			rte_pause();
		else
			vnapi_gate_sleep();
	}
}

/* Every set-up queue's gate, rx then tx; returns how many (at most @p max). */
static unsigned int
vnapi_gates(struct rte_eth_dev *dev, struct vnapi_gate **gates, unsigned int max)
{
	unsigned int n = 0;
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues && n < max; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			gates[n++] = &rxq->gate;
	}
	for (q = 0; q < dev->data->nb_tx_queues && n < max; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			gates[n++] = &txq->gate;
	}
	return n;
}

/*
 * Store @p off in every set-up queue's gate, with release order (opening:
 * the rings laid out and handed over before a burst may run); returns the
 * gates in @p gates, which holds 2 * VNAPI_MAX_QUEUE_PAIRS (configure caps
 * the queues).
 */
static unsigned int
vnapi_gates_set(struct rte_eth_dev *dev, uint32_t off, struct vnapi_gate **gates)
{
	unsigned int i, n = vnapi_gates(dev, gates, 2 * VNAPI_MAX_QUEUE_PAIRS);

	for (i = 0; i < n; i++)
		__atomic_store_n(&gates[i]->off, off, __ATOMIC_RELEASE);
	return n;
}

void
vnapi_gates_close(struct rte_eth_dev *dev)
{
	struct vnapi_gate *gates[2 * VNAPI_MAX_QUEUE_PAIRS];
	unsigned int i, n = vnapi_gates_set(dev, 1, gates);

	/* off = 1 before the loads of busy, on every lcore's side too. */
	vnapi_membarrier();
	for (i = 0; i < n; i++)
		vnapi_gate_wait(gates[i]);
}

void
vnapi_gates_open(struct rte_eth_dev *dev)
{
	struct vnapi_gate *gates[2 * VNAPI_MAX_QUEUE_PAIRS];

	vnapi_gates_set(dev, 0, gates);
}
