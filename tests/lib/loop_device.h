/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _LOOP_DEVICE_H_
#define _LOOP_DEVICE_H_

/**
 * @file
 * A virtio-net device in the test's own process, behind a net_vnapi port:
 * a transport of its own (struct vnapi_device_ops, no session, like
 * virtio-pci) whose rings the test serves through the unit tests' fake
 * device (tests/unit/virtq/fake_device.h) over the driver's own ring
 * memory. The test plays the device: it pops the receive buffers the
 * driver posted, writes headers and frames into them and publishes used
 * entries, honest or hostile, then calls the driver's rx burst
 * (rte_eth_rx_burst) and looks at what comes out: the driver's whole rx
 * path (bursts, header checks, refill, broken-queue report, link), with
 * no socket and no second process.
 *
 * One rx and one tx queue. The port is created with rte_eth_dev_allocate()
 * and the driver's own probe tail (vnapi_eth_dev_probe_finish()), so
 * configure, start, stop and close are the driver's. EAL must be up.
 *
 * @note Not thread safe: one thread drives the port and plays the device.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "fake_device.h"

/** What the device offers and the port asks for. */
struct loop_cfg {
	bool packed;     /**< RING_PACKED */
	bool mrg;        /**< MRG_RXBUF */
	bool in_order;   /**< IN_ORDER */
	bool event_idx;  /**< RING_EVENT_IDX */
	/** GUEST_CSUM, GUEST_TSO4/6, GUEST_ECN offered and the rx offloads
	 * enabled (TCP/UDP checksum; LRO with mergeable buffers): the driver
	 * then reads each header's offload fields. */
	bool rx_offloads;
	/** Rx interrupts on (intr_conf.rxq): the driver's call eventfd is
	 * the queue's interrupt; the test, as the device, writes it
	 * (rte_eth_dev_rx_intr_ctl_q_get_fd()) when fake_dev_flush() says
	 * to notify. */
	bool rx_intr;
	uint16_t ring;   /**< queue_size (both rings) */
};

struct loop_dev;

/**
 * Create port @p name over a loop device and configure it (one rx queue
 * on @p rx_pool, one tx queue, LSC interrupts on). Not started.
 * @return the device, or NULL (a "# " line says why).
 */
struct loop_dev *loop_dev_create(const char *name, const struct loop_cfg *cfg,
				 struct rte_mempool *rx_pool);

/** Stop (if started) and close the port: its rings' buffers go back to the pool. */
void loop_dev_destroy(struct loop_dev *ld);

/** The port's ethdev id. */
uint16_t loop_dev_port(const struct loop_dev *ld);

/** The virtio-net header's size the port negotiated (12 with VERSION_1). */
uint16_t loop_dev_hdr_size(const struct loop_dev *ld);

/** The negotiated feature bits (the port's last SET_FEATURES). */
uint64_t loop_dev_features(const struct loop_dev *ld);

/**
 * The device half of the rx ring (vring 0) while the port is started,
 * else NULL: pop the posted buffers, write, push, flush (fake_device.h).
 */
struct fake_dev *loop_dev_rx(struct loop_dev *ld);

/** Kicks the driver sent on ring @p vring (0: rx, 1: tx) since creation. */
uint64_t loop_dev_kicks(const struct loop_dev *ld, uint16_t vring);

/** A used len for loop_dev_rx_fill(): the buffer's writable length + 1. */
#define LOOP_LEN_OVER UINT32_MAX

/**
 * Pop @p nbufs rx buffers and fill them as a device does with a frame of
 * @p len bytes (@p frame): the virtio-net header first (all zero, with
 * num_buffers = @p num_buffers when mergeable buffers are negotiated),
 * then the frame, each buffer filled before the next; each buffer is
 * pushed with the bytes written into it, unless @p lens is not NULL: then
 * buffer i is pushed with lens[i] whatever was written (LOOP_LEN_OVER:
 * one byte more than it can take). Nothing is published
 * (fake_dev_flush()). @p last_id, if not NULL, receives the id of the
 * last buffer pushed.
 * @return 0; -ENOSPC: fewer than @p nbufs buffers posted, or the frame
 * does not fit; -EPROTO: the driver broke a ring rule (fake_dev error).
 */
int loop_dev_rx_fill(struct loop_dev *ld, const uint8_t *frame, uint32_t len, uint16_t nbufs,
		     uint16_t num_buffers, const uint32_t *lens, uint16_t *last_id);

#endif /* _LOOP_DEVICE_H_ */
