/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_TRANSPORT_H_
#define _VNAPI_TRANSPORT_H_

/**
 * @file
 * @internal
 * How the driver reaches a virtio-net device: two ops tables, as DPDK's
 * virtio PMD keeps its device ops (virtio_pci.c, and virtio-user's device)
 * apart from the vhost-user back end's connection.
 *
 * - struct vnapi_device_ops, the device whatever carries it: what it
 *   offers, features, memory, rings, status, the kick, its configuration
 *   interrupt, whether it still serves. Every transport fills every op
 *   (but the configuration interrupt, which a vhost-user device does not
 *   have): vhost-user (vnapi_transport_vhost_user.c: the requests over
 *   the connection) and modern virtio-pci (vnapi_transport_pci.c:
 *   registers of a mapped PCI function).
 * - struct vnapi_session_ops, the vhost-user session: the connection that
 *   carries those requests, which comes and goes (connect as the client,
 *   or listen and accept as the server; watch it; cancel a wait on it).
 *   Only vhost-user has one; a virtio-pci device is there from probe to
 *   remove, so its port has no session (NULL) and nothing reconnects.
 *
 * The device layer (vnapi_backend.c) negotiates and starts the rings
 * through the device ops; the connection state machine (vnapi_conn.c)
 * drives the session and watches the device's config interrupt; the tx
 * drain at stop asks the device whether it still serves. The ethdev ops
 * and the datapath never see a transport (but for notify, the kick).
 *
 * Every op but notify runs on the control path of the primary process: an
 * ethdev op (probe, configure, start, stop, close, reset), or a handler on
 * the port's connection thread, never both at once (vnapi_conn.c
 * serialises them). Each returns 0 or a negative errno and logs its own
 * failure with the device name. The tables are per process (struct
 * vnapi_proc), never in shared memory.
 */

#include <stdbool.h>
#include <stdint.h>

#include <ethdev_driver.h>

#include "virtq.h"

struct vnapi_device_ops {
	/** Short name for logs ("vhost-user", "virtio-pci"). */
	const char *name;
	/**
	 * Reset the device and learn what it offers (vhost-user: over the
	 * session's connection, GET_FEATURES, SET_OWNER, protocol features,
	 * queue count; virtio-pci: reset, ACKNOWLEDGE, DRIVER, the feature
	 * bits, the queue count, the MAC).
	 * @param offered receives the device feature bits.
	 * @param max_qp receives the device's queue pair limit (1 without MQ).
	 */
	int (*features_get)(struct rte_eth_dev *dev, uint64_t *offered, uint16_t *max_qp);
	/** Tell the device the features we take (at every start). */
	int (*set_features)(struct rte_eth_dev *dev, uint64_t features);
	/** Make the driver's memory (rings and mbufs) reachable by the device. */
	int (*set_memory)(struct rte_eth_dev *dev);
	/** Hand ring @p vring (rx queue q: 2q, tx queue q: 2q + 1) to the device. */
	int (*vring_start)(struct rte_eth_dev *dev, uint16_t vring, const struct virtq *vq);
	/** Let the device use (or stop using) a started ring. */
	int (*vring_enable)(struct rte_eth_dev *dev, uint16_t vring, bool enable);
	/** Take ring @p vring back: returns once the device no longer uses it. */
	int (*vring_stop)(struct rte_eth_dev *dev, uint16_t vring);
	/** Report the driver status (VIRTIO_STATUS_*). */
	int (*set_status)(struct rte_eth_dev *dev, uint8_t status);
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
	 * The fd that becomes readable when the device raises its
	 * configuration interrupt (virtio-pci: the MSI-X config vector's
	 * eventfd), or -1 (no vector now). NULL, with config_changed: the
	 * device raises none (vhost-user: a front end gets no configuration
	 * change; its link is the session's).
	 */
	int (*config_fd)(const struct rte_eth_dev *dev);
	/**
	 * The configuration interrupt fired (connection thread, under
	 * vnapi_conn.c's lock): clear it and read what changed (the link
	 * status), without blocking. Returns whether it had fired.
	 */
	bool (*config_changed)(struct rte_eth_dev *dev);
	/**
	 * Whether the device still serves the rings, asked without blocking
	 * while the connection handlers are quiesced (the tx drain at stop):
	 * false once it can consume nothing more (vhost-user: the connection
	 * closed or hung up; virtio-pci: the device asks for a reset, or reads
	 * as gone).
	 */
	bool (*serving)(const struct rte_eth_dev *dev);
	/**
	 * Let go of the device, idempotent: it stops using the rings and the
	 * memory (virtio-pci: reset, interrupts off; vhost-user: the session's
	 * connection is closed, which stops the back end's rings).
	 */
	void (*release)(struct rte_eth_dev *dev);
	/**
	 * Feature bits the transport itself needs whenever the device offers
	 * them, whatever the devargs say (vhost-user: PROTOCOL_FEATURES;
	 * virtio-pci: ACCESS_PLATFORM, so the device goes through the IOMMU).
	 */
	uint64_t transport_features;
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
	/**
	 * Bytes of the transport's own per-process state, allocated right
	 * after struct vnapi_proc (proc->transport), in every process; and
	 * what makes it valid before any op runs (NULL: zeroed is valid).
	 */
	size_t state_size;
	void (*state_init)(void *state);
};

struct vnapi_session_ops {
	/**
	 * Reach the device. Client: connect, retrying for up to @p wait_ms
	 * (0: one quiet attempt, -ENOENT / -ECONNREFUSED unlogged); server:
	 * the connection accept() took (-ENOTCONN if none).
	 */
	int (*connect)(struct rte_eth_dev *dev, unsigned int wait_ms);
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
	/** The fd that becomes readable when the connection closes or the
	 * device writes outside a request, or -1 (no connection). */
	int (*event_fd)(const struct rte_eth_dev *dev);
	/**
	 * Read what the device sent outside a request, without blocking
	 * (connection thread, while no request runs). 0: nothing (a spurious
	 * wakeup); -ECONNRESET: the device went away; -EPROTO: it wrote
	 * something it may not (logged once per port, the caller drops the
	 * connection). Never leaves the fd readable with a 0 return.
	 */
	int (*poll)(struct rte_eth_dev *dev);
	/** True while the connection is open in this process. */
	bool (*is_open)(const struct rte_eth_dev *dev);
	/**
	 * The calling thread's waits for the device (a request's reply) end,
	 * failing with -ECANCELED, once @p fd is readable; -1: no such fd.
	 * The connection thread sets its cancel eventfd (vnapi_conn.c).
	 */
	void (*cancel_fd_set)(int fd);
};

/** vhost-user: the device, over the session's connection ... */
extern const struct vnapi_device_ops vnapi_vhost_user_device_ops;
/** ... and the session: vnapi connects to the back end's socket (client),
 * or, with server=1, listens on it and the back end connects. */
extern const struct vnapi_session_ops vnapi_vhost_user_session_ops;
/** Modern virtio-pci (virtio 1.x) through DPDK's PCI bus and VFIO; no session. */
extern const struct vnapi_device_ops vnapi_pci_device_ops;

#endif /* _VNAPI_TRANSPORT_H_ */
