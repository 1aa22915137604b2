/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_ETHDEV_H_
#define _VNAPI_ETHDEV_H_

/**
 * @file
 * @internal
 * The ethdev ops table (vnapi_ethdev.c), for the probe of each bus.
 */

#include <rte_ether.h>

#include <ethdev_driver.h>

extern const struct eth_dev_ops vnapi_eth_dev_ops;
/** A secondary process's: reads, and clear refusals of the rest. */
extern const struct eth_dev_ops vnapi_eth_dev_ops_secondary;

/**
 * The common end of a probe (vdev or PCI), once the device is connected:
 * the MAC address (@p mac, or a random one when NULL), the ops, the flags,
 * link down, probing finished. Returns 0 or -ENOMEM.
 */
int vnapi_eth_dev_init(struct rte_eth_dev *dev, const struct rte_ether_addr *mac, int socket);

/**
 * A failed probe's undo (vdev or PCI): if @p connected (vnapi_conn_probe()
 * succeeded), quiesce and close the connection; free the process-private
 * data and release the port.
 */
void vnapi_eth_dev_probe_undo(struct rte_eth_dev *dev, bool connected);

struct vnapi_proc;
struct vnapi_device_ops;
struct vnapi_session_ops;

/**
 * A primary's per-process state for a device reached through @p ops and,
 * when it has one, the session @p session (NULL: none, virtio-pci), with
 * no fds yet, followed by ops->state_size bytes for the transport
 * (zeroed, then ops->state_init), on NUMA node @p socket. NULL if out of
 * memory.
 */
struct vnapi_proc *vnapi_proc_alloc(const struct vnapi_device_ops *ops,
				    const struct vnapi_session_ops *session, int socket);

/**
 * The common tail of a primary's probe (vdev or PCI), once the port is
 * allocated with its params and process-private data: connect and
 * negotiate, log the features (client), then vnapi_eth_dev_init() with the
 * devargs' MAC, else the device's, else a random one. On failure the port
 * is undone (vnapi_eth_dev_probe_undo()). Returns 0 or -errno.
 */
int vnapi_eth_dev_probe_finish(struct rte_eth_dev *dev, int socket);

/**
 * A secondary process's probe (vdev or PCI): attach to the primary's port
 * @p name for @p device, with this process's own state for transport
 * @p ops, the secondary's ops (reads; refusals of the rest) and no
 * datapath. Returns 0, -ENODEV (the primary has no such port, or not a
 * vnapi one; logged) or -ENOMEM. @p if_ours: a device the user did not name
 * for vnapi (a PCI device without vnapi=1, e.g. seen by dpdk-dumpcap, which
 * takes no allow-list): attach only if the primary's port for it is vnapi's,
 * else return 1 quietly (the bus offers the device to the next driver).
 */
int vnapi_eth_dev_attach_secondary(struct rte_device *device, const char *name,
				   const struct vnapi_device_ops *ops, bool if_ours);

/** A bus's remove: close and release the port @p name (0 if already gone). */
int vnapi_eth_dev_remove(const char *name);

/**
 * Per process: the ops table (the primary's, or a secondary's that reads
 * and refuses the rest), the datapath-side queries.
 */
void vnapi_eth_dev_set_ops(struct rte_eth_dev *dev, bool primary);

/** Stop, release the queues and let go of the device; in a secondary,
 * free only that process's state. */
int vnapi_dev_close(struct rte_eth_dev *dev);

#endif /* _VNAPI_ETHDEV_H_ */
