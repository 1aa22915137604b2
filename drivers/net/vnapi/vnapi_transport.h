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
 * rings through these calls only, and the connection state machine
 * (vnapi_conn.c) watches and re-establishes the connection through them;
 * the ethdev ops and the datapath never see the transport (but for notify,
 * the kick). Two tables, chosen at probe: vhost-user as the client or the
 * server (vnapi_transport_vhost_user.c) and modern virtio-pci
 * (vnapi_transport_pci.c: no server mode, a device that never goes away).
 *
 * Every op runs on the control path of the primary process: an ethdev op
 * (probe, configure, start, stop, close, reset), or a connection handler in
 * the EAL interrupt thread, never both at once (vnapi_conn.c serialises
 * them). Each
 * returns 0 or a negative errno and logs its own failure with the device
 * name. The table is per process (struct vnapi_proc), never in shared
 * memory.
 */

#include <stdbool.h>
#include <stdint.h>

#include <ethdev_driver.h>

#include "virtq.h"

struct vnapi_transport_ops {
	/** Short name for logs ("vhost-user"). */
	const char *name;
	/**
	 * Server mode: open the endpoint back ends connect to (vhost-user:
	 * listen on the socket path). A no-op in client mode.
	 */
	int (*listen)(struct rte_eth_dev *dev);
	/** Close what listen() opened (and remove the socket file). Idempotent. */
	void (*unlisten)(struct rte_eth_dev *dev);
	/** Server mode: the fd to watch for a connecting back end, or -1. */
	int (*listen_fd)(const struct rte_eth_dev *dev);
	/**
	 * Server mode: take a pending connection. -EAGAIN: none pending;
	 * -EBUSY: a connection is open already (the newcomer was closed).
	 */
	int (*accept)(struct rte_eth_dev *dev);
	/**
	 * Reach the device and learn what it offers. Client: connect, retrying
	 * for up to @p wait_ms (0: one quiet attempt, -ENOENT / -ECONNREFUSED
	 * unlogged); server: the connection accept() took (-ENOTCONN if none).
	 * @param offered receives the device feature bits.
	 * @param max_qp receives the device's queue pair limit (1 without MQ).
	 */
	int (*connect)(struct rte_eth_dev *dev, unsigned int wait_ms, uint64_t *offered,
		       uint16_t *max_qp);
	/** Let go of the device's connection (idempotent). */
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
	/** The fd that becomes readable when the device goes away or writes
	 * outside a request (the connection), or -1. */
	int (*event_fd)(const struct rte_eth_dev *dev);
	/**
	 * Read what the device sent outside a request, without blocking (EAL
	 * interrupt thread, while no request runs). 0: nothing (a spurious
	 * wakeup); -ECONNRESET: the device went away; -EPROTO: it wrote
	 * something it may not (logged once per port, the caller drops the
	 * connection). Never leaves the fd readable with a 0 return.
	 */
	int (*poll)(struct rte_eth_dev *dev);
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
	/**
	 * The calling thread's waits for the device (a request's reply) end,
	 * failing with -ECANCELED, once @p fd is readable; -1: no such fd.
	 * The connection thread sets its cancel eventfd (vnapi_conn.c). NULL:
	 * the transport never waits for the device (virtio-pci).
	 */
	void (*cancel_fd_set)(int fd);
	/**
	 * Bytes of the transport's own per-process state, allocated right
	 * after struct vnapi_proc (proc->transport), in every process; and
	 * what makes it valid before any op runs (NULL: zeroed is valid).
	 */
	size_t state_size;
	void (*state_init)(void *state);
	/**
	 * Feature bits taken along with MQ when the device offers them: the
	 * transport's means of setting the queue pairs in use (virtio-pci:
	 * CTRL_VQ; vhost-user: none, the back end enables rings one by one).
	 * Part of the negotiated word, so the log shows what the device got.
	 */
	uint64_t mq_features;
	/**
	 * Feature bits never negotiated together with RING_PACKED on this
	 * transport, whatever the devargs say: virtio-pci leaves EVENT_IDX out
	 * (QEMU's virtio-net device stalls its transmit ring with both; see
	 * doc/design.md, "virtio-pci transport").
	 */
	uint64_t packed_excluded;
};

/** vhost-user: vnapi connects to the back end's socket (client), or, with
 * server=1, listens on it and the back end connects. */
extern const struct vnapi_transport_ops vnapi_transport_vhost_user;
/** Modern virtio-pci (virtio 1.x) through DPDK's PCI bus and VFIO. */
extern const struct vnapi_transport_ops vnapi_transport_pci;

#endif /* _VNAPI_TRANSPORT_H_ */
