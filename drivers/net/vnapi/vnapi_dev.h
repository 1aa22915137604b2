/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_ETHDEV_H_
#define _VNAPI_ETHDEV_H_

/**
 * @file
 * @internal
 * net_vnapi private state, shared by the ethdev glue (vnapi_ethdev.c) and the
 * datapath (vnapi_rxtx.c).
 *
 * Memory ownership: struct vnapi_hw (dev_private), the queues and their
 * virtqueues live in DPDK shared memory, so a secondary process can reach
 * them. File descriptors and the vhost-user connection are per process
 * (struct vnapi_proc, dev->process_private); the datapath reaches the kick
 * eventfd through it only when the device asks for a kick.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_power_intrinsics.h>

#include "virtq.h"
#include "vnapi_vhost_user.h"

#define VNAPI_MAX_QUEUE_PAIRS     16
#define VNAPI_DEFAULT_QUEUE_SIZE  256
#define VNAPI_MIN_QUEUE_SIZE      64
#define VNAPI_MAX_QUEUE_SIZE      VIRTQ_MAX_NUM
#define VNAPI_MAX_VRINGS          (2 * VNAPI_MAX_QUEUE_PAIRS)
#define VNAPI_BURST_MAX           64
/** Default tx_free_thresh: num minus this many (at most a quarter of the ring). */
#define VNAPI_TX_FREE_THRESH      32
#define VNAPI_TX_MAX_SEGS         64
#define VNAPI_MAX_RX_PKTLEN       9728
#define VNAPI_MIN_MTU             68
#define VNAPI_CONNECT_TIMEOUT_MS  2000
#define VNAPI_CONNECT_RETRY_MS    100

/* virtio-net device feature bits (virtio 1.2 section 5.1.3). */
#define VIRTIO_NET_F_MAC          5
#define VIRTIO_NET_F_MRG_RXBUF   15
#define VIRTIO_NET_F_STATUS      16
#define VIRTIO_NET_F_MQ          22

/* Device status bits (virtio 1.2 section 2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER      2
#define VIRTIO_STATUS_DRIVER_OK   4
#define VIRTIO_STATUS_FEATURES_OK 8

/** The virtio-net header (VERSION_1 / MRG_RXBUF layout: 12 bytes). */
struct vnapi_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
} __rte_packed;

/** What rx_queue_intr_enable does when work raced the arming. */
enum vnapi_intr_rescue {
	VNAPI_RESCUE_SIGNAL, /**< Signal the queue's own eventfd: the waiter returns at once. */
	VNAPI_RESCUE_EAGAIN, /**< Disarm again and return -EAGAIN: the caller keeps polling. */
};

/** Devargs, parsed once at probe. The initializer holds the defaults. */
struct vnapi_params {
	char path[108];
	uint16_t queues;
	uint16_t queue_size;
	struct rte_ether_addr mac;
	bool mac_set;
	bool mrg_rxbuf;
	bool event_idx;
	enum vnapi_intr_rescue intr_rescue;
	bool packed_vq;
	bool in_order;             /**< Negotiate VIRTIO_F_IN_ORDER if offered. */
	bool indirect;       /**< Negotiate indirect descriptors (tx chains). */
};

/** Per-queue counters; exported as xstats by a {name, offsetof} table. */
struct vnapi_queue_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t errors;      /**< rx: bad frames dropped; tx: packets dropped (too many segments). */
	uint64_t nombuf;      /**< rx: refill allocation failures. */
	uint64_t full;        /**< tx: bursts cut short by a full ring. */
	uint64_t kicks;       /**< Notifications written to the kick eventfd. */
	uint64_t kick_errors; /**< Kick eventfd writes that failed. */
};

/**
 * Rx interrupt counters (the NAPI figures), exported as xstats.
 * A wakeup is a disarm that found the queue's eventfd signalled.
 */
struct vnapi_intr_stats {
	uint64_t arms;           /**< Disarmed -> armed transitions. */
	uint64_t rescues;        /**< Work found by the re-check at arming. */
	uint64_t notifications;  /**< Eventfd writes by the back end (read at disarm). */
	uint64_t wakeups;        /**< Disarms that found the eventfd signalled. */
	uint64_t wakeup_packets; /**< Packets received from a wakeup to the next arm. */
	uint64_t spurious;       /**< Wakeups whose first poll found nothing. */
};

struct vnapi_rxq {
	struct virtq *vq;             /**< Private virtqueue state. */
	void *ring;                   /**< Ring memory shared with the back end. */
	struct rte_mempool *mp;
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t vring;               /**< vhost-user vring index (2 * queue_id). */
	uint16_t hdr_size;
	struct vnapi_params_q {
		uint16_t num;
		bool event_idx;
	} cfg;
	/* A mergeable packet whose buffers span bursts. */
	struct rte_mbuf *mrg_head;
	struct rte_mbuf *mrg_tail;
	uint16_t mrg_left;
	bool parse_ptype;             /**< Software packet-type parsing (rte_eth_dev_set_ptypes). */
	bool wake_window;             /**< Between a wakeup and the next arm. */
	bool wake_first_poll;         /**< The first poll after a wakeup is still to come. */
	uint32_t own_signals;         /**< Our rescue writes not yet read back from the eventfd. */
	bool broken_reported;         /**< The device broke this ring and we said so. */
	struct vnapi_queue_stats stats;
	struct vnapi_intr_stats istats;
};

struct vnapi_txq {
	struct virtq *vq;
	void *ring;
	struct vnapi_net_hdr *zero_hdr; /**< One all-zero header for every chain (no offloads). */
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t vring;               /**< 2 * queue_id + 1 */
	uint16_t hdr_size;
	struct vnapi_params_q cfg;
	/** Take back completed buffers when fewer descriptors than this are
	 * free (rte_eth_txconf tx_free_thresh; default num - min(32, num / 4)).
	 */
	uint16_t free_thresh;
	/** One-descriptor packets handed to the ring per call: the ring's
	 * publish group (virtq_publish_group(): packed 4, split 8), so the
	 * device starts on each group while we prepare the next.
	 */
	uint16_t add_batch;
	bool broken_reported;
	struct vnapi_queue_stats stats;
};

/** dev_private: shared between processes. */
struct vnapi_hw {
	struct vnapi_params params;
	uint64_t features_offered;   /**< Back end's GET_FEATURES. */
	uint64_t features;           /**< What we SET_FEATURES. */
	uint64_t protocol_features;  /**< Negotiated protocol features. */
	uint16_t max_queue_pairs;    /**< Back end's limit (GET_QUEUE_NUM), or 1. */
	uint16_t nb_qp;              /**< Queue pairs configured. */
	uint16_t hdr_size;
	bool parse_ptype;            /**< Default for new rx queues. */
	bool started;
	volatile bool connected;     /**< Cleared by the disconnect detector. */
};

/** process_private: fds and the connection, per process. */
struct vnapi_proc {
	struct vnapi_vhost_user vu;
	int kickfd[VNAPI_MAX_VRINGS];
	int callfd[VNAPI_MAX_VRINGS];
	struct rte_intr_handle *sock_intr; /**< Disconnect detector on the socket. */
	bool sock_intr_registered;
};

static inline bool
vnapi_has_feature(const struct vnapi_hw *hw, unsigned int bit)
{
	return (hw->features >> bit) & 1;
}

/* vnapi_intr.c */
int vnapi_intr_configure(struct rte_eth_dev *dev);
void vnapi_intr_release(struct rte_eth_dev *dev);
int vnapi_dev_rx_queue_intr_enable(struct rte_eth_dev *dev, uint16_t qid);
int vnapi_dev_rx_queue_intr_disable(struct rte_eth_dev *dev, uint16_t qid);
uint32_t vnapi_rx_queue_count(void *rx_queue);
int vnapi_rx_descriptor_status(void *rx_queue, uint16_t offset);
int vnapi_tx_descriptor_status(void *tx_queue, uint16_t offset);
const uint32_t *vnapi_dev_supported_ptypes_get(struct rte_eth_dev *dev);
int vnapi_dev_ptypes_set(struct rte_eth_dev *dev, uint32_t ptype_mask);
int vnapi_get_monitor_addr(void *rx_queue, struct rte_power_monitor_cond *pmc);
void vnapi_rx_wake_account(struct vnapi_rxq *rxq, uint16_t nb_rx);
void vnapi_rx_parse_ptypes(struct rte_mbuf **pkts, uint16_t n);

/* vnapi_ethdev.c */
void vnapi_queue_broken(uint16_t port_id, const char *dir, uint16_t qid, struct virtq *vq);

/* vnapi_rxtx.c */
uint16_t vnapi_recv_pkts(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_mrg(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_xmit_pkts(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts);
int vnapi_tx_done_cleanup(void *tx_queue, uint32_t free_cnt);
int vnapi_rxq_refill(struct vnapi_rxq *rxq);
void vnapi_rxq_flush(struct vnapi_rxq *rxq);
void vnapi_txq_flush(struct vnapi_txq *txq);

#endif /* _VNAPI_ETHDEV_H_ */
