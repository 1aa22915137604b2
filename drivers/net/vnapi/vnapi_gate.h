/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_GATE_H_
#define _VNAPI_GATE_H_

/**
 * @file
 * @internal
 * The datapath gate of a queue: how the control path (the EAL interrupt
 * thread at a loss or a reconnection of the back end, or an ethdev op)
 * takes a ring away from an lcore that may be inside a burst, without a
 * lock or an atomic read-modify-write on the datapath.
 *
 * Datapath (vnapi_gate_enter): store busy = 1, then load off. Control
 * (vnapi_gates_close, vnapi_gate.c): store off = 1, membarrier() (a full
 * barrier on every running thread of the process), then wait until busy is
 * 0. Either the lcore's load of off comes after the barrier and sees 1, or
 * its store of busy came before it and the control path sees 1 and waits
 * for the burst to end: no burst runs on a ring the control path holds.
 * The datapath side needs only a compiler barrier between its store and
 * its load; the CPU barrier is the control path's membarrier().
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>

#include "vnapi_dev.h"    /* struct vnapi_gate, a member of every queue */

struct rte_eth_dev;

/** Set up a new queue's gate closed (queue setup). */
void vnapi_gate_init_closed(struct vnapi_gate *g);

/** Close every queue's gate of @p dev and wait until no lcore is in a burst. */
void vnapi_gates_close(struct rte_eth_dev *dev);

/** Open every queue's gate of @p dev (the rings are served again). */
void vnapi_gates_open(struct rte_eth_dev *dev);

/** Register the process for the expedited membarrier the control path
 * uses (once per process; at probe). */
void vnapi_membarrier_register(void);

/** Enter a burst: false when the gate is closed (do not touch the ring). */
static __rte_always_inline bool
vnapi_gate_enter(struct vnapi_gate *g)
{
	__atomic_store_n(&g->busy, 1, __ATOMIC_RELAXED);
	/* Compiler barrier: busy before off (the CPU side: see the file doc). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Acquire: pairs with the release store of off = 0 made after the
	 * ring was laid out anew (vnapi_gates_open). */
	if (likely(!__atomic_load_n(&g->off, __ATOMIC_ACQUIRE)))
		return true;
	__atomic_store_n(&g->busy, 0, __ATOMIC_RELEASE);
	return false;
}

/** Leave a burst. Release: the ring writes of the burst before busy = 0
 * (pairs with the control path's acquire load of busy). */
static __rte_always_inline void
vnapi_gate_leave(struct vnapi_gate *g)
{
	__atomic_store_n(&g->busy, 0, __ATOMIC_RELEASE);
}

#endif /* _VNAPI_GATE_H_ */
