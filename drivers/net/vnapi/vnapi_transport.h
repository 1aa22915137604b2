/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_TRANSPORT_H_
#define _VNAPI_TRANSPORT_H_

/**
 * @file
 * @internal
 * How the driver reaches a virtio-net device: the transport ops table.
 *
 * The device layer (vnapi_backend.c) negotiates, lays out and starts the
 * rings through these calls only; the ethdev ops and the datapath never see
 * the transport. Today: the vhost-user client (vnapi_transport_vhost_user.c).
 * A vhost-user server or a virtio-pci transport is another table, chosen at
 * probe; nothing above this header changes.
 *
 * Every op runs on the control path (probe, configure, start, stop, close,
 * reset) of the primary process, except where it says otherwise. Each
 * returns 0 or a negative errno and logs its own failure with the device
 * name. The table is per process (struct vnapi_proc), never in shared
 * memory.
 */

#include <stdbool.h>
#include <stdint.h>

#include <ethdev_driver.h>

#include "virtq.h"

struct vnapi_transport_ops {
	/** Short name for logs ("vhost-user client"). */
	const char *name;
	/**
	 * Reach the device and learn what it offers.
	 * @param offered receives the device feature bits.
	 * @param max_qp receives the device's queue pair limit (1 without MQ).
	 */
	int (*connect)(struct rte_eth_dev *dev, uint64_t *offered, uint16_t *max_qp);
	/** Let go of the device (idempotent). Stops watch() first. */
	void (*disconnect)(struct rte_eth_dev *dev);
	/** Tell the device the features we take (at every start). */
	int (*set_features)(struct rte_eth_dev *dev, uint64_t features);
	/** Make the driver's memory (rings and mbufs) reachable by the device. */
	int (*set_memory)(struct rte_eth_dev *dev);
	/** Hand ring @p vring (rx queue q: 2q, tx queue q: 2q + 1) to the device. */
	int (*vring_start)(struct rte_eth_dev *dev, uint16_t vring, const struct virtq *vq);
	/** Let the device use (or stop using) a started ring; a no-op where the
	 * transport has no such step. */
	int (*vring_enable)(struct rte_eth_dev *dev, uint16_t vring, bool enable);
	/** Take ring @p vring back: returns once the device no longer uses it. */
	int (*vring_stop)(struct rte_eth_dev *dev, uint16_t vring);
	/** Report the driver status (VIRTIO_STATUS_*); a no-op where unsupported. */
	int (*set_status)(struct rte_eth_dev *dev, uint8_t status);
	/**
	 * Start watching for the device going away (and, later, config
	 * changes); on loss the transport calls vnapi_link_lost() from the
	 * EAL interrupt thread. Idempotent.
	 */
	int (*watch)(struct rte_eth_dev *dev);
	/** Stop watching (idempotent; waits for a running callback). */
	void (*unwatch)(struct rte_eth_dev *dev);
	/** True while the connection is open in this process. */
	bool (*is_open)(const struct rte_eth_dev *dev);
	/**
	 * Notify the device that ring @p vring has new buffers (the kick).
	 * The one op that runs on a datapath lcore: reached through the
	 * process's table only when the ring asks for a kick, so the bursts
	 * carry no per-packet transport branch. vhost-user: write the ring's
	 * kick eventfd; virtio-pci: store the queue index at the ring's notify
	 * address. Returns false if the notification could not be sent.
	 */
	bool (*notify)(struct rte_eth_dev *dev, uint16_t vring);
	/**
	 * Feature bits the transport itself needs whenever the device offers
	 * them, whatever the devargs say (vhost-user: PROTOCOL_FEATURES;
	 * virtio-pci: ACCESS_PLATFORM, so the device goes through the IOMMU).
	 */
	uint64_t transport_features;
};

/** The vhost-user client: vnapi connects to the back end's socket. */
extern const struct vnapi_transport_ops vnapi_transport_vhost_user;
/** Modern virtio-pci (virtio 1.x) through DPDK's PCI bus and VFIO. */
extern const struct vnapi_transport_ops vnapi_transport_pci;

#endif /* _VNAPI_TRANSPORT_H_ */
