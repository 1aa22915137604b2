/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_BACKEND_H_
#define _VNAPI_BACKEND_H_

/**
 * @file
 * @internal
 * The device, whatever the transport: connect and negotiate, the kick and
 * call eventfds, hand the rings to the device and take them back. The
 * ethdev ops call these; these call the transport (proc->ops, and
 * proc->session's connect), the
 * datapath's refill/flush and the link reports, nothing above.
 */

#include <stdbool.h>
#include <stdint.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"

/**
 * Connect and negotiate: what the device offers, what we take (checked
 * against the devargs: packed_vq, queues). Done at probe, at reset and at
 * every reconnection; the features themselves are sent at every start.
 * Once the port is configured (hw->features_fixed) the rings' features
 * stay what they are: a device that lacks one of them, or has fewer queue
 * pairs than configured, is refused.
 * @param wait_ms client: how long to retry connecting (0: one attempt).
 * @return 0; -ENOTSUP when the device lacks what the devargs (or the
 *   configured rings) need; the transport's error otherwise (each logged,
 *   except a quiet attempt's -ENOENT / -ECONNREFUSED).
 */
int vnapi_backend_connect(struct rte_eth_dev *dev, unsigned int wait_ms);

/** Server mode before any back end: take the devargs' features as the
 * ones to lay the rings out for (a back end must then offer them). */
void vnapi_backend_assume(struct rte_eth_dev *dev);

/** Free every buffer the rings hold (counted in the queues' reclaimed
 * stats) and lay the rings out anew. The device must not use them. */
void vnapi_backend_flush(struct rte_eth_dev *dev);

/** Let go of the device (idempotent). */
void vnapi_backend_disconnect(struct rte_eth_dev *dev);

/**
 * The session that carries the device is open in this process (vhost-user:
 * the connection; always true for a device with no session, virtio-pci).
 * False after a request found the connection broken (the transport closed
 * it).
 */
bool vnapi_backend_session_open(const struct rte_eth_dev *dev);

/** Open the kick and call eventfds of the first @p nb_vrings rings (kept
 * across stop/start: applications register the call fds once). */
int vnapi_backend_eventfds_open(struct rte_eth_dev *dev, uint16_t nb_vrings);
void vnapi_backend_eventfds_close(struct rte_eth_dev *dev);

/**
 * Post the rx buffers and hand every set-up ring to the device, enable
 * them, report DRIVER_OK. On failure every buffer is taken back.
 */
int vnapi_backend_start(struct rte_eth_dev *dev);

/**
 * Take every ring back from the device (when it is still there), free
 * every buffer the rings held and lay the rings out anew.
 */
void vnapi_backend_stop(struct rte_eth_dev *dev);

/**
 * Log the features negotiated with the device (INFO): at probe (the devargs'
 * ceiling, @p when "") and at every start ("started with ").
 */
void vnapi_backend_log_features(const struct rte_eth_dev *dev, const char *when);

#endif /* _VNAPI_BACKEND_H_ */
