/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_CONN_H_
#define _VNAPI_CONN_H_

/**
 * @file
 * @internal
 * The connection state machine: the back end comes, goes and comes back
 * while the application runs. The port's own connection thread (not EAL's
 * interrupt thread: a slow back end holds up nothing else) watches the
 * connection (loss, or a protocol violation), the listening socket
 * (server=1) and a reconnection deadline (client); on a loss it takes the
 * rings from the datapath (vnapi_gate.h) and reclaims every buffer, on a
 * (re)connection it negotiates, restarts the rings if the port is started
 * and brings the link up, each link change with an LSC event delivered in
 * EAL's interrupt thread.
 *
 * The ethdev ops that touch the connection or the rings bracket their work
 * with vnapi_conn_quiesce() / vnapi_conn_resume(): while quiesced no
 * handler runs, and a handshake in progress is cut short (it would be
 * retried after resume), so an op never races a reconnection nor waits on
 * a slow back end.
 */

#include <stdbool.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"

/** Probe: init the lock; client: connect (retrying for 2 s) and negotiate;
 * server: listen and take the devargs' features until a back end comes. */
int vnapi_conn_probe(struct rte_eth_dev *dev);

/** Stop every handler, cancel a handshake in progress and wait for it to
 * end (never for a peer); nest-able; from any thread. */
void vnapi_conn_quiesce(struct rte_eth_dev *dev);

/** Undo one vnapi_conn_quiesce(): re-arm what the state calls for. A
 * connection that an op's request found broken is handled as a loss. */
void vnapi_conn_resume(struct rte_eth_dev *dev);

/** Start (quiesced): hand the rings to the back end if one is there and
 * open the gates (link up); otherwise the first connection does it. */
int vnapi_conn_start(struct rte_eth_dev *dev);

/** Stop (quiesced): close the gates, take the rings back, link down. */
void vnapi_conn_stop(struct rte_eth_dev *dev);

/** Reset (quiesced): drop the connection and connect anew (client: one
 * 2 s attempt; without a back end the reconnection goes on after resume). */
int vnapi_conn_reset(struct rte_eth_dev *dev);

/** Close (quiesced, never resumed): drop the connection, stop listening. */
void vnapi_conn_close(struct rte_eth_dev *dev);

#endif /* _VNAPI_CONN_H_ */
