/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_DEV_H_
#define _VNAPI_DEV_H_

/**
 * @file
 * @internal
 * net_vnapi private state: the types every driver file shares, no functions.
 *
 * The driver's files and their layering: doc/design.md, "Layers" (the
 * layering unit test checks it).
 *
 * Memory ownership: struct vnapi_hw (dev_private), the queues and their
 * virtqueues live in DPDK shared memory, so a secondary process can reach
 * them. File descriptors and the vhost-user connection are per process
 * (struct vnapi_proc, dev->process_private); the datapath reaches the kick
 * eventfd through it only when the device asks for a kick.
 */

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_power_intrinsics.h>

#include "virtq.h"
#include "vnapi_compat.h"
#include "vnapi_devargs.h"
#include "vnapi_features.h"
#include "vnapi_net_hdr.h"

struct vnapi_device_ops;
struct vnapi_session_ops;

_Static_assert(VNAPI_MAX_QUEUE_SIZE <= VIRTQ_MAX_NUM, "devarg queue_size exceeds lib/virtq's limit");

#define VNAPI_MAX_VRINGS          (2 * VNAPI_MAX_QUEUE_PAIRS)
#define VNAPI_BURST_MAX           64
/** Default tx_free_thresh: num minus this many (at most a quarter of the ring). */
#define VNAPI_TX_FREE_THRESH      32
#define VNAPI_TX_MAX_SEGS         64
/**
 * Longest tx chain (descriptors, header included) put in an indirect
 * table; longer ones go direct, as DPDK's net_virtio does. A 64 KB TSO
 * frame of 2 KB mbufs (35 descriptors) in a table takes one ring slot, so
 * the descriptor-based reclaim threshold let ~32 such frames (2 MB of
 * mbufs) be in flight, and it cost ~5x net_virtio's cycles per byte
 * (devtools/bench/tso_bench); direct, it is at par.
 */
#define VNAPI_TX_INDIRECT_MAX     8
#define VNAPI_MAX_RX_PKTLEN       9728
#define VNAPI_MIN_MTU             68
#define VNAPI_CONNECT_TIMEOUT_MS  2000
#define VNAPI_CONNECT_RETRY_MS    100

/* Device status bits (virtio 1.2 section 2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER      2
#define VIRTIO_STATUS_DRIVER_OK   4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_DEVICE_NEEDS_RESET 64

/**
 * A queue's datapath gate (vnapi_gate.h): the burst functions enter it and
 * leave it; the control path closes it (and waits until the lcore has left)
 * before it touches the ring, opens it once the ring is served again.
 */
struct vnapi_gate {
	uint8_t busy; /**< Written by the datapath lcore only. */
	uint8_t off;  /**< Written by the control path only. */
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
	uint64_t refused;     /**< tx: packets refused while no back end served the ring. */
	uint64_t reclaimed;   /**< Buffers taken back from the ring at stop or at the loss of
			       *   the back end (tx: freed unsent; rx: freed, reposted at start). */
	uint64_t bad_hdr;     /**< rx: headers whose offload fields were rejected
			       *   (delivered without offload flags). */
	uint64_t dropped_at_stop; /**< tx: packets the device had not consumed when the
				   *   port stopped (after the drain, tx_drain_ms): freed
				   *   unsent, also counted in reclaimed. */
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
	uint64_t unnotified;     /**< Armed waits of VNAPI_INTR_WAIT_MIN_US or more that
				  *   ended with completions in the ring and no
				  *   notification for them, none arriving late either
				  *   (up to the next arm; the disarm left the device
				  *   its event, so one was owed): lost wakeups. */
	uint64_t late;           /**< Notifications owed for the work such a disarm
				  *   found, read after it (by an rx burst or the next
				  *   arm). */
	uint64_t raced;          /**< Disarms within VNAPI_INTR_WAIT_MIN_US of the arm
				  *   that found unannounced work: work that raced the
				  *   arming (the application disarmed on its own). */
	uint64_t rescues_unannounced; /**< Disarms of an armed queue that read only
				  *   the driver's own rescue signal: work the re-check
				  *   at arming found and the device never announced. */
	uint64_t awake_packets;  /**< Packets that arrived while the queue was
				  *   disarmed: received after a disarm that found
				  *   neither work nor a notification, up to the next
				  *   arm. No interrupt was owed for them. */
};

/** Which packets the rx burst counts, from a disarm to the next arm. */
enum vnapi_rx_window {
	VNAPI_RXW_NONE = 0,   /**< None. */
	VNAPI_RXW_WAKE,       /**< After a wakeup: wakeup_packets (and spurious). */
	VNAPI_RXW_AWAKE,      /**< After a disarm that found nothing: awake_packets. */
	VNAPI_RXW_SUSPECT,    /**< After a disarm that found unannounced work after a
			       *   wait: no packets counted; each burst looks for the
			       *   notification owed (vnapi_intr.c). */
};

/**
 * An armed queue must have been armed at least this long for unannounced
 * work at its disarm to count as a lost wakeup (rx_qN_intr_unnotified_work).
 * A disarm sooner than this follows no wait: an application such as lib/napi
 * that re-checks the ring after arming and disarms when work raced the
 * arming. The back end may then have seen the disarm before deciding to
 * notify (and rightly not notified): not a loss, counted as raced.
 */
#define VNAPI_INTR_WAIT_MIN_US 1000

struct vnapi_rxq {
	struct vnapi_gate gate;
	struct virtq *vq;             /**< Private virtqueue state. */
	void *ring;                   /**< Ring memory shared with the back end. */
	struct rte_mempool *mp;
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t vring;               /**< vhost-user vring index (2 * queue_id). */
	uint16_t hdr_size;
	/** The ring's size (virtq_params(vq)->num), kept here for the
	 * per-packet bounds checks of the bursts. */
	uint16_t nb_desc;
	/** The writable length of every buffer posted (the pool's data room
	 * less the headroom, plus the header). With mergeable buffers only a
	 * buffer used to this length can be followed by more of its packet:
	 * the device fills all buffers of a packet but the last (virtio 1.2,
	 * 5.1.6.4.1), so a shorter first buffer is a whole packet and its
	 * header's num_buffers is not read. */
	uint32_t buf_wlen;
	/* A mergeable packet whose buffers span bursts. */
	struct rte_mbuf *mrg_head;
	struct rte_mbuf *mrg_tail;
	uint16_t mrg_left;
	/** A received mbuf's data_off, refcnt, nb_segs and port, stored as one
	 * word (rearm_data): the ring's mbufs come raw from the pool. */
	uint64_t rearm;
	/** Its ol_flags: 0, or RTE_MBUF_F_EXTERNAL for a pool of pinned
	 * external buffers (every mbuf of such a pool keeps it). */
	uint64_t ol_flags;
	bool parse_ptype;             /**< Software packet-type parsing (rte_eth_dev_set_ptypes). */
	uint32_t ol;                  /**< Negotiated rx offloads (VNAPI_OL_*): 0, the header is not read. */
	uint8_t rx_window;            /**< enum vnapi_rx_window, until the next arm. */
	bool wake_first_poll;         /**< The first poll after a wakeup is still to come. */
	uint32_t own_signals;         /**< Our rescue writes not yet read back from the eventfd. */
	bool unnotified_suspect;      /**< The last disarm, after a wait, found unannounced
				       *   work: judged at the next arm (late or lost). */
	uint64_t armed_tsc;           /**< TSC of the last disarmed -> armed transition. */
	bool broken_reported;         /**< The device broke this ring and we said so. */
	struct vnapi_queue_stats stats;
	struct vnapi_intr_stats istats;
};

/**
 * A header for an offload packet whose own headroom we may not write
 * (shared, indirect, or too little of it): lives until the device is done
 * with the chain, found again through the chain's cookie (tagged pointer).
 */
struct vnapi_tx_hdr_slot {
	struct vnapi_net_hdr hdr;
	uint16_t next_free;
	struct rte_mbuf *m;
};

struct vnapi_txq {
	struct vnapi_gate gate;
	struct virtq *vq;
	void *ring;
	struct vnapi_net_hdr *zero_hdr; /**< One all-zero header for chains without offloads. */
	struct vnapi_tx_hdr_slot *slots; /**< num header slots (tx offloads negotiated), else NULL. */
	uint16_t slot_free;           /**< First free slot, or UINT16_MAX. */
	uint16_t slots_used;          /**< Slots in flight: 0 lets completions skip the cookie test. */
	uint32_t ol;                  /**< Negotiated tx offloads (VNAPI_OL_*). */
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t vring;               /**< 2 * queue_id + 1 */
	uint16_t hdr_size;
	/** The ring's size (virtq_params(vq)->num), kept here for the
	 * per-packet bounds checks of the bursts. */
	uint16_t nb_desc;
	/** Take back completed buffers when fewer descriptors than this are
	 * free (rte_eth_txconf tx_free_thresh; default num - min(32, num / 4)).
	 */
	uint16_t free_thresh;
	/** indirect_max the ring memory was sized for at queue setup (0: no
	 * tables); a later back end may use indirect descriptors only then. */
	uint16_t indirect_alloc;
	/** RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE enabled: the application's
	 * mbufs all have refcnt 1 and this queue's come from one pool, so a
	 * sent one-segment mbuf goes straight back to its pool. */
	bool fast_free;
	bool broken_reported;
	struct vnapi_queue_stats stats;
};

/** struct vnapi_hw's magic ("vnap"). */
#define VNAPI_HW_MAGIC 0x766e6170u

/** dev_private: shared between processes. */
struct vnapi_hw {
	/** VNAPI_HW_MAGIC once probed: how a secondary process knows the
	 * primary's port for a PCI device is vnapi's (first, so that reading it
	 * from another driver's dev_private stays within it). */
	uint32_t magic;
	struct vnapi_params params;
	uint64_t features_offered;   /**< Back end's GET_FEATURES. */
	uint64_t features;           /**< What we SET_FEATURES. */
	/** offered & wanted at connect: the device offloads an application
	 * may enable (dev_infos_get); configure drops the ones it did not
	 * enable (rx and tx) from features. */
	uint64_t features_usable;
	/** Set at configure: the offload features the application enabled
	 * (a later back end must offer them, vnapi_backend_connect()) and the
	 * ones it did not (never negotiated, whatever the back end offers). */
	uint64_t ol_required;
	uint64_t ol_unwanted;
	uint64_t protocol_features;  /**< Negotiated protocol features. */
	uint16_t max_queue_pairs;    /**< Back end's limit (GET_QUEUE_NUM), or 1. */
	uint16_t nb_qp;              /**< Queue pairs configured. */
	uint16_t hdr_size;
	bool parse_ptype;            /**< Default for new rx queues. */
	/** The rings are laid out for hw->features (set at configure): a back
	 * end that comes later must offer every ring feature of them. */
	bool features_fixed;
	bool started;
	/** Largest ring the device takes (virtio-pci queue_size), 0: no limit
	 * of its own; reported as the descriptor limit. */
	uint16_t max_ring;
	/** The device reports its link down (virtio-net config status, read
	 * on a config interrupt); vhost-user never sets it. */
	bool no_carrier;
	/**
	 * What the tx drain of the last stop did (port xstats tx_drain_*; a
	 * stop of a started port rewrites them, xstats_reset does not).
	 */
	struct {
		uint64_t looks;        /**< Looks at the tx rings (0: no drain, no back end). */
		uint64_t waited_us;    /**< From the drain's start to its last look. */
		uint64_t prev_look_us; /**< From its start to the look before the last (0: one look). */
		uint64_t left;         /**< Packets the tx rings still held at the last look. */
	} drain;
	uint64_t reconnects;         /**< Back ends (re)connected after a loss. */
	uint64_t ctrl_violations;    /**< Connections dropped for a protocol violation. */
	/** The device is there and negotiated: read and written with
	 * __atomic_*_n (the transport's watch clears it from the interrupt
	 * thread); see vnapi_connected(). */
	bool connected;
};

/** process_private: fds, the transport and its connection, per process. */
struct vnapi_proc {
	const struct vnapi_device_ops *ops;    /**< The device, through its transport. */
	/** The vhost-user session that carries the device (connect, listen,
	 * reconnect, cancel), or NULL: the device is there from probe to
	 * remove (virtio-pci). */
	const struct vnapi_session_ops *session;
	/** The transport's own state (ops->state_size bytes after this struct):
	 * struct vnapi_vhost_user or struct vnapi_pci. */
	void *transport;
	int kickfd[VNAPI_MAX_VRINGS];
	int callfd[VNAPI_MAX_VRINGS];
	/*
	 * The connection state machine (vnapi_conn.c). @ref lock serialises
	 * its handlers (the port's own connection thread: socket, listening
	 * socket, reconnection deadline) with the ethdev ops, which first
	 * "quiesce" them (@ref quiesce, atomic: handlers do nothing; a
	 * handshake in progress is cancelled through @ref conn_cancel_fd).
	 */
	pthread_mutex_t lock;
	unsigned int quiesce;
	pthread_t conn_thread;
	bool conn_thread_up;
	bool conn_exit;                      /**< The thread is to return (close). */
	int conn_wake_fd;                    /**< eventfd: look at the state again. */
	int conn_cancel_fd;                  /**< eventfd: abort the handshake's waits. */
	uint32_t lsc_due;                    /**< LSC events to deliver (atomic). */
	bool sock_watched;                   /**< The session's connection. */
	bool listen_watched;                 /**< Server: the listening socket. */
	bool config_watched;                 /**< The device's config interrupt fd. */
	uint64_t alarm_at_ms;                /**< Reconnection / accept retry (0: none). */
	int listen_fd;                       /**< Server: -1 otherwise. */
	uint32_t backoff_ms;                 /**< Client: next reconnection delay. */
	uint64_t down_since_ms;              /**< When the back end was lost (0: never). */
	bool violation_logged;
	/** Where the device is, for logs: the vhost-user socket path or the
	 * PCI address (set at probe), named by the transport-neutral files. */
	char peer[VNAPI_PATH_MAX];
	/** The MAC the device offers (virtio F_MAC), set while connecting; else NULL. */
	const struct rte_ether_addr *dev_mac;
};

static inline bool
vnapi_connected(const struct vnapi_hw *hw)
{
	return __atomic_load_n(&hw->connected, __ATOMIC_ACQUIRE);
}

static inline void
vnapi_connected_set(struct vnapi_hw *hw, bool connected)
{
	__atomic_store_n(&hw->connected, connected, __ATOMIC_RELEASE);
}

static inline bool
vnapi_has_feature(const struct vnapi_hw *hw, unsigned int bit)
{
	return (hw->features >> bit) & 1;
}

static inline enum virtq_layout
vnapi_layout(const struct vnapi_hw *hw)
{
	return vnapi_has_feature(hw, VIRTIO_F_RING_PACKED) ? VIRTQ_LAYOUT_PACKED :
							      VIRTQ_LAYOUT_SPLIT;
}

#endif /* _VNAPI_DEV_H_ */
