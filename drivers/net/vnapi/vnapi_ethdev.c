/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The ethdev ops: configure, queue setup and release, start, stop, close,
 * reset, device info, MTU and MAC. The device work is vnapi_backend.c's,
 * the bursts vnapi_rxtx.c's, the counters vnapi_stats.c's.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <ethdev_driver.h>

#include "vnapi_backend.h"
#include "vnapi_conn.h"
#include "vnapi_ethdev.h"
#include "vnapi_gate.h"
#include "vnapi_intr.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_rxtx.h"
#include "vnapi_stats.h"
#include "vnapi_time.h"
#include "vnapi_transport.h"

/* The pause between two looks at the used rings while stop drains tx. */
#define VNAPI_TX_DRAIN_POLL_US 50

/*
 * The link status is recorded at each transition (start, stop, loss and
 * return of the back end: vnapi_link_state_set()); recomputing it here could
 * report "up" between the negotiation and the restart of the rings, and
 * swallow that transition's LSC event.
 */
static int
vnapi_dev_link_update(struct rte_eth_dev *dev __rte_unused, int wait_to_complete __rte_unused)
{
	return -1; /* unchanged */
}

static int
vnapi_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	uint32_t max_pktlen = vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF) ?
			      VNAPI_MAX_RX_PKTLEN : RTE_ETHER_MAX_LEN;

	info->max_mac_addrs = 1;
	info->max_rx_pktlen = max_pktlen;
	info->min_mtu = VNAPI_MIN_MTU;
	info->max_mtu = max_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN;
	info->min_rx_bufsize = RTE_ETHER_MIN_LEN + hw->hdr_size;
	info->max_rx_queues = hw->params.queues;
	info->max_tx_queues = hw->params.queues;
	/* Offloads: what was negotiated with the device (features_usable),
	 * not what this configuration enabled. */
	info->rx_offload_capa = (vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF) ?
				 RTE_ETH_RX_OFFLOAD_SCATTER : 0) |
				vnapi_net_rx_capa(vnapi_net_ol_rx(hw->features_usable));
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE |
				vnapi_net_tx_capa(vnapi_net_ol_tx(hw->features_usable));
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_TCP_LRO)
		info->max_lro_pkt_size = VNAPI_MAX_LRO_PKTLEN;
	info->rx_desc_lim.nb_max = hw->max_ring != 0 ? hw->max_ring : VNAPI_MAX_QUEUE_SIZE;
	info->rx_desc_lim.nb_min = VNAPI_MIN_QUEUE_SIZE;
	info->rx_desc_lim.nb_align = 1;
	info->tx_desc_lim = info->rx_desc_lim;
	info->tx_desc_lim.nb_seg_max = VNAPI_TX_MAX_SEGS;
	info->tx_desc_lim.nb_mtu_seg_max = VNAPI_TX_MAX_SEGS;
	info->default_rxportconf.ring_size = hw->params.queue_size;
	info->default_txportconf.ring_size = hw->params.queue_size;
	info->default_rxportconf.burst_size = 32;
	info->default_txportconf.burst_size = 32;
	info->default_rxportconf.nb_queues = 1;
	info->default_txportconf.nb_queues = 1;
	info->speed_capa = RTE_ETH_LINK_SPEED_10G;
	info->dev_capa = 0;
	return 0;
}

/* The offload feature bits the enabled offloads of @p conf depend on. */
static uint64_t
vnapi_ol_required(const struct rte_eth_conf *conf)
{
	const uint64_t tx = conf->txmode.offloads, rx = conf->rxmode.offloads;
	uint64_t req = 0;

	if (tx & (RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
		  RTE_ETH_TX_OFFLOAD_TCP_TSO))
		req |= 1ULL << VIRTIO_NET_F_CSUM;
	if (tx & RTE_ETH_TX_OFFLOAD_TCP_TSO)
		req |= (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6);
	if (rx & (RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
		  RTE_ETH_RX_OFFLOAD_TCP_LRO))
		req |= 1ULL << VIRTIO_NET_F_GUEST_CSUM;
	if (rx & RTE_ETH_RX_OFFLOAD_TCP_LRO)
		req |= (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6);
	return req;
}

/*
 * The offload feature bits the configuration @p conf does not need: the
 * GUEST_ bits for rx offloads it did not enable, the CSUM and HOST_ bits for
 * tx offloads it did not enable (tx offloads are port-level only:
 * tx_queue_offload_capa is 0, so no queue can enable one later). A feature
 * not negotiated costs the device nothing per packet: it neither parses nor
 * writes the header's offload fields.
 */
static uint64_t
vnapi_features_unwanted(const struct rte_eth_conf *conf)
{
	const uint64_t offloads = conf->rxmode.offloads, tx = conf->txmode.offloads;
	uint64_t unwanted = 0;

	if (!(tx & RTE_ETH_TX_OFFLOAD_TCP_TSO))
		unwanted |= (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6) |
			    (1ULL << VIRTIO_NET_F_HOST_ECN);
	if (!(tx & (RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
		    RTE_ETH_TX_OFFLOAD_TCP_TSO)))
		unwanted |= 1ULL << VIRTIO_NET_F_CSUM;

	if (!(offloads & RTE_ETH_RX_OFFLOAD_TCP_LRO))
		unwanted |= (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6) |
			    (1ULL << VIRTIO_NET_F_GUEST_ECN);
	/* LRO packets carry partial checksums: LRO keeps GUEST_CSUM. */
	if (!(offloads & (RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
			  RTE_ETH_RX_OFFLOAD_TCP_LRO)))
		unwanted |= 1ULL << VIRTIO_NET_F_GUEST_CSUM;
	return unwanted;
}

static int
vnapi_dev_configure(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const struct rte_eth_conf *conf = &dev->data->dev_conf;
	uint16_t nb_qp = RTE_MAX(dev->data->nb_rx_queues, dev->data->nb_tx_queues);
	int ret;

	if (conf->rxmode.mq_mode != RTE_ETH_MQ_RX_NONE) {
		VNAPI_INIT_LOG(ERR, "%s: rx mq_mode %d not supported (vnapi negotiates no RSS); use RTE_ETH_MQ_RX_NONE",
			       dev->data->name, conf->rxmode.mq_mode);
		return -ENOTSUP;
	}
	if (nb_qp > hw->params.queues) {
		VNAPI_INIT_LOG(ERR, "%s: %u queue pairs requested, devarg queues=%u",
			       dev->data->name, nb_qp, hw->params.queues);
		return -EINVAL;
	}
	hw->nb_qp = nb_qp;
	/*
	 * ethdev refused offloads beyond dev_infos_get's capabilities. The
	 * offloads the application did not enable are not negotiated at the
	 * next start (set_features there): the device then sends neither
	 * partial checksums nor 64 KB packets to an application that does not
	 * expect them, and spends nothing on the header's offload fields.
	 * dev_infos_get keeps reporting what the device offers
	 * (features_usable): a later configure may enable them again.
	 */
	hw->ol_unwanted = vnapi_features_unwanted(conf);
	hw->features = vnapi_net_offload_valid(hw->features_usable & ~hw->ol_unwanted);
	hw->ol_required = vnapi_ol_required(conf) & hw->features;
	/* Queues are laid out for the features negotiated so far: a later
	 * back end must offer them (vnapi_backend_connect()). */
	hw->features_fixed = true;
	/* The eventfds outlive stop/start: an application registers the rx
	 * interrupt fds once, after configure. */
	ret = vnapi_backend_eventfds_open(dev, 2 * nb_qp);
	if (ret != 0)
		return ret;
	return vnapi_intr_configure(dev);
}

/*
 * The ring of a new rx or tx queue, from the negotiated features: nb_desc
 * descriptors (0: the devargs' queue_size), which must be a power of two;
 * a fresh ring (start_idx 0).
 */
static int
vnapi_vq_params(const struct vnapi_hw *hw, const char *what, uint16_t qid, uint16_t nb_desc,
		struct virtq_params *vp)
{
	memset(vp, 0, sizeof(*vp));
	vp->layout = vnapi_layout(hw);
	vp->num = nb_desc == 0 ? hw->params.queue_size : nb_desc;
	vp->event_idx = vnapi_has_feature(hw, VIRTIO_F_RING_EVENT_IDX);
	vp->in_order = vnapi_has_feature(hw, VIRTIO_F_IN_ORDER);
	if (nb_desc != 0 && !rte_is_power_of_2(nb_desc)) {
		VNAPI_INIT_LOG(ERR, "%s queue %u: %u descriptors; a virtqueue needs a power of two from %u to %u",
			       what, qid, nb_desc, VNAPI_MIN_QUEUE_SIZE, VNAPI_MAX_QUEUE_SIZE);
		return -EINVAL;
	}
	return 0;
}

static void
vnapi_vq_free(struct virtq *vq, void *ring)
{
	rte_free(vq);
	rte_free(ring);
}

/*
 * Virtqueue state and ring memory, both in DPDK memory (shared with the back
 * end); on failure nothing stays allocated.
 */
static int
vnapi_vq_alloc(const struct virtq_params *vp, unsigned int socket, struct virtq **vq, void **ring)
{
	int ret = -ENOMEM;

	*vq = rte_zmalloc_socket("vnapi_vq", virtq_state_size(vp), RTE_CACHE_LINE_SIZE, socket);
	*ring = rte_zmalloc_socket("vnapi_ring", virtq_ring_mem_size(vp), VIRTQ_RING_ALIGN, socket);
	if (*vq != NULL && *ring != NULL)
		ret = virtq_init(*vq, vp, *ring);
	if (ret != 0) {
		vnapi_vq_free(*vq, *ring);
		*vq = NULL;
		*ring = NULL;
	}
	return ret;
}

static void
vnapi_dev_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct vnapi_rxq *rxq = dev->data->rx_queues[qid];

	if (rxq == NULL)
		return;
	vnapi_rxq_flush(rxq);
	vnapi_vq_free(rxq->vq, rxq->ring);
	rte_free(rxq);
	dev->data->rx_queues[qid] = NULL;
}

static void
vnapi_dev_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct vnapi_txq *txq = dev->data->tx_queues[qid];

	if (txq == NULL)
		return;
	vnapi_txq_flush(txq);
	vnapi_vq_free(txq->vq, txq->ring);
	rte_free(txq->zero_hdr);
	rte_free(txq->slots);
	rte_free(txq);
	dev->data->tx_queues[qid] = NULL;
}

static int
vnapi_dev_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			 unsigned int socket, const struct rte_eth_rxconf *conf __rte_unused,
			 struct rte_mempool *mp)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	uint16_t data_room = rte_pktmbuf_data_room_size(mp);
	uint32_t frame = dev->data->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	struct virtq_params vp;
	struct vnapi_rxq *rxq;
	int ret;

	/* No indirect tables: rx posts one descriptor per buffer, never a chain. */
	ret = vnapi_vq_params(hw, "rx", qid, nb_desc, &vp);
	if (ret != 0)
		return ret;
	if (data_room < RTE_PKTMBUF_HEADROOM + RTE_ETHER_MIN_LEN) {
		VNAPI_INIT_LOG(ERR, "%s rx queue %u: mbuf data room %u too small (headroom %u + %u)",
			       dev->data->name, qid, data_room, RTE_PKTMBUF_HEADROOM,
			       RTE_ETHER_MIN_LEN);
		return -EINVAL;
	}
	if (!vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF) &&
	    frame > (uint32_t)data_room - RTE_PKTMBUF_HEADROOM) {
		VNAPI_INIT_LOG(ERR, "%s rx queue %u: MTU %u does not fit in one %u-byte mbuf and mergeable rx buffers are off; use mrg_rxbuf=1 or bigger mbufs",
			       dev->data->name, qid, dev->data->mtu, data_room);
		return -EINVAL;
	}

	if (dev->data->rx_queues[qid] != NULL)
		vnapi_dev_rx_queue_release(dev, qid);
	rxq = rte_zmalloc_socket("vnapi_rxq", sizeof(*rxq), RTE_CACHE_LINE_SIZE, socket);
	if (rxq == NULL)
		return -ENOMEM;
	ret = vnapi_vq_alloc(&vp, socket, &rxq->vq, &rxq->ring);
	if (ret != 0) {
		rte_free(rxq);
		return ret;
	}
	rxq->mp = mp;
	rxq->port_id = dev->data->port_id;
	rxq->queue_id = qid;
	rxq->vring = 2 * qid;
	rxq->hdr_size = hw->hdr_size;
	/* rte_pktmbuf_init and the pinned-buffer init give every mbuf of a
	 * pool buf_len = its data room: the length each refill posts. */
	rxq->buf_wlen = (uint32_t)data_room - RTE_PKTMBUF_HEADROOM + hw->hdr_size;
	rxq->nb_desc = vp.num;
	rxq->parse_ptype = hw->parse_ptype;
	rxq->rearm = vnapi_rx_rearm_word(rxq->port_id);
	rxq->ol_flags = (rte_pktmbuf_priv_flags(mp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF) ?
			RTE_MBUF_F_EXTERNAL : 0;
	vnapi_gate_init_closed(&rxq->gate);
	rxq->ol = vnapi_net_ol_rx(hw->features);
	dev->data->rx_queues[qid] = rxq;
	return 0;
}

static int
vnapi_dev_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			 unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct virtq_params vp;
	struct vnapi_txq *txq;
	uint16_t free_thresh;
	uint32_t q;
	int ret;

	ret = vnapi_vq_params(hw, "tx", qid, nb_desc, &vp);
	/*
	 * With indirect descriptors a chain of up to VNAPI_TX_INDIRECT_MAX
	 * descriptors (segments and a header descriptor) takes one ring slot
	 * (vnapi_tx_add_chain() -> virtq_add()); longer chains go direct. The
	 * tables live in the ring memory (num * 8 * 16 bytes more), DPDK
	 * memory the back end maps.
	 */
	vp.indirect_max = vnapi_has_feature(hw, VIRTIO_F_RING_INDIRECT_DESC) ?
			  VNAPI_TX_INDIRECT_MAX : 0;
	if (ret != 0)
		return ret;
	/* Default: take completions back once more than min(32, num / 4)
	 * descriptors are in flight. Few mbufs in flight stay hot in the
	 * caches; waiting until the ring is nearly full measured ~20% slower.
	 */
	free_thresh = (uint16_t)(vp.num - RTE_MIN((uint16_t)VNAPI_TX_FREE_THRESH,
						  (uint16_t)(vp.num / 4)));
	if (conf != NULL && conf->tx_free_thresh != 0) {
		if (conf->tx_free_thresh >= vp.num) {
			VNAPI_INIT_LOG(ERR, "%s tx queue %u: tx_free_thresh %u must be below the ring size %u",
				       dev->data->name, qid, conf->tx_free_thresh, vp.num);
			return -EINVAL;
		}
		free_thresh = conf->tx_free_thresh;
	}

	if (dev->data->tx_queues[qid] != NULL)
		vnapi_dev_tx_queue_release(dev, qid);
	txq = rte_zmalloc_socket("vnapi_txq", sizeof(*txq), RTE_CACHE_LINE_SIZE, socket);
	if (txq == NULL)
		return -ENOMEM;
	txq->zero_hdr = rte_zmalloc_socket("vnapi_txhdr", sizeof(*txq->zero_hdr),
					   RTE_CACHE_LINE_SIZE, socket);
	txq->ol = vnapi_net_ol_tx(hw->features);
	/* Headers of offload packets that cannot carry theirs: one per
	 * descriptor at most in flight (DPDK memory: the device reads them). */
	if (txq->ol != 0)
		txq->slots = rte_zmalloc_socket("vnapi_txslots", vp.num * sizeof(*txq->slots),
						RTE_CACHE_LINE_SIZE, socket);
	ret = txq->zero_hdr == NULL || (txq->ol != 0 && txq->slots == NULL) ? -ENOMEM :
	      vnapi_vq_alloc(&vp, socket, &txq->vq, &txq->ring);
	if (ret != 0) {
		rte_free(txq->zero_hdr);
		rte_free(txq->slots);
		rte_free(txq);
		return ret;
	}
	txq->slot_free = txq->slots != NULL ? 0 : UINT16_MAX;
	for (q = 0; txq->slots != NULL && q < vp.num; q++)
		txq->slots[q].next_free = q + 1 < vp.num ? (uint16_t)(q + 1) : UINT16_MAX;
	txq->port_id = dev->data->port_id;
	txq->queue_id = qid;
	txq->vring = 2 * qid + 1;
	txq->hdr_size = hw->hdr_size;
	txq->nb_desc = vp.num;
	txq->free_thresh = free_thresh;
	txq->indirect_alloc = vp.indirect_max;
	txq->fast_free = ((dev->data->dev_conf.txmode.offloads | conf->offloads) &
			  RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) != 0;
	vnapi_gate_init_closed(&txq->gate);
	dev->data->tx_queues[qid] = txq;
	return 0;
}

static int
vnapi_dev_start(struct rte_eth_dev *dev)
{
	uint16_t q;
	int ret;

	vnapi_conn_quiesce(dev);
	ret = vnapi_conn_start(dev);
	vnapi_conn_resume(dev);
	if (ret != 0)
		return ret;
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	return 0;
}

/*
 * Stop drains tx: before the rings are taken back, wait (at most
 * tx_drain_ms) until the device has consumed every packet the application
 * handed over, looking at the used rings every VNAPI_TX_DRAIN_POLL_US and
 * reclaiming as it goes. The gates are closed first, so no lcore is in a
 * burst while this thread reclaims, and a burst from now on is refused
 * (tx_qN_refused) rather than accepted into a ring about to be dropped. No
 * drain without a back end (it is away: its rings were flushed at the
 * loss); no wait with tx_drain_ms=0 (one look), for a broken queue, or once
 * the device no longer serves (the transport says so: serving(); the
 * connection handlers that would notice a vhost-user back end's hang-up
 * are quiesced). Whatever is left is freed by the stop and counted in
 * tx_qN_dropped_at_stop (vnapi_dev_stop_quiesced()).
 *
 * What it did is the port's tx_drain_* xstats, by its own clock: looks,
 * the time of the last look and of the one before it, and the packets
 * left. A drain that ran to the bound B made its last look at B or later
 * and the one before it earlier than B; with tx_drain_ms=0 it looked once.
 */
static void
vnapi_tx_drain(struct rte_eth_dev *dev)
{
	const struct vnapi_proc *proc = dev->process_private;
	struct vnapi_hw *hw = dev->data->dev_private;
	const uint64_t bound_us = (uint64_t)hw->params.tx_drain_ms * 1000;
	const char *end;
	uint64_t start, now = 0;
	bool waiting;
	uint16_t q;

	memset(&hw->drain, 0, sizeof(hw->drain));
	if (!vnapi_connected(hw))
		return;
	vnapi_gates_close(dev);
	start = vnapi_now_us();
	for (;;) {
		waiting = false;
		for (q = 0; q < dev->data->nb_tx_queues; q++) {
			struct vnapi_txq *txq = dev->data->tx_queues[q];

			if (txq != NULL && !vnapi_txq_drained(txq))
				waiting = true;
		}
		hw->drain.looks++;
		hw->drain.prev_look_us = now; /* 0 before the first */
		now = vnapi_now_us() - start;
		if (!waiting) {
			end = "nothing left to wait for";
			break;
		}
		if (now >= bound_us) {
			end = "the bound passed";
			break;
		}
		if (!proc->ops->serving(dev)) {
			end = "the device stopped serving";
			break;
		}
		rte_delay_us_sleep(VNAPI_TX_DRAIN_POLL_US);
	}
	hw->drain.waited_us = now;
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		const struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			hw->drain.left += virtq_outstanding(txq->vq);
	}
	if (hw->drain.left != 0 && hw->params.tx_drain_ms != 0)
		VNAPI_INIT_LOG(WARNING, "%s: stop: %" PRIu64 " tx packets not consumed within tx_drain_ms=%u (%s after %" PRIu64 " us): dropped (tx_qN_dropped_at_stop)",
			       dev->data->name, hw->drain.left, hw->params.tx_drain_ms, end,
			       hw->drain.waited_us);
	VNAPI_INIT_LOG(DEBUG, "%s: stop: tx drain: %" PRIu64 " looks, the last after %" PRIu64 " us, the one before after %" PRIu64 " us (tx_drain_ms=%u), %" PRIu64 " packets left: %s",
		       dev->data->name, hw->drain.looks, hw->drain.waited_us,
		       hw->drain.prev_look_us, hw->params.tx_drain_ms, hw->drain.left, end);
}

static void
vnapi_dev_stop_quiesced(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	/* configure caps the queues at VNAPI_MAX_QUEUE_PAIRS */
	const uint16_t nb_txq = RTE_MIN(dev->data->nb_tx_queues, (uint16_t)VNAPI_MAX_QUEUE_PAIRS);
	uint64_t reclaimed[VNAPI_MAX_QUEUE_PAIRS];
	uint16_t q;

	if (!hw->started)
		return;
	dev->data->dev_started = 0;
	vnapi_tx_drain(dev);
	/* What the stop frees unsent: the rise of reclaimed across it. */
	for (q = 0; q < nb_txq; q++) {
		const struct vnapi_txq *txq = dev->data->tx_queues[q];

		reclaimed[q] = txq != NULL ? txq->stats.reclaimed : 0;
	}
	vnapi_conn_stop(dev);
	for (q = 0; q < nb_txq; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			txq->stats.dropped_at_stop += txq->stats.reclaimed - reclaimed[q];
	}
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
}

static int
vnapi_dev_stop(struct rte_eth_dev *dev)
{
	vnapi_conn_quiesce(dev);
	vnapi_dev_stop_quiesced(dev);
	vnapi_conn_resume(dev);
	return 0;
}

int
vnapi_dev_close(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	uint16_t q;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		/* Only this process's own state: the device is the primary's. */
		rte_free(proc);
		dev->process_private = NULL;
		return 0;
	}
	if (proc != NULL) {
		vnapi_conn_quiesce(dev); /* for good: no handler after this */
		vnapi_dev_stop_quiesced(dev);
	}
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		vnapi_dev_rx_queue_release(dev, q);
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		vnapi_dev_tx_queue_release(dev, q);
	vnapi_link_cancel(dev);
	if (proc != NULL) {
		vnapi_conn_close(dev);
		vnapi_intr_release(dev);
		vnapi_backend_eventfds_close(dev);
		rte_free(proc);
		dev->process_private = NULL;
	}
	return 0;
}

/*
 * Drop the connection and connect anew, renegotiating from scratch (the
 * application configures the port again). Without a back end (client) the
 * reconnection goes on in the background; 0 is returned.
 */
static int
vnapi_dev_reset(struct rte_eth_dev *dev)
{
	int ret;

	vnapi_conn_quiesce(dev);
	vnapi_dev_stop_quiesced(dev);
	ret = vnapi_conn_reset(dev);
	vnapi_conn_resume(dev);
	return ret;
}

static int
vnapi_dev_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	struct rte_eth_dev_info info;

	vnapi_dev_infos_get(dev, &info);
	if (mtu < info.min_mtu || mtu > info.max_mtu) {
		VNAPI_INIT_LOG(ERR, "%s: MTU %u out of range %u..%u%s", dev->data->name, mtu,
			       info.min_mtu, info.max_mtu,
			       info.max_mtu < 9000 ? " (mrg_rxbuf=1 allows jumbo frames)" : "");
		return -EINVAL;
	}
	return 0;
}

static int
vnapi_dev_mac_addr_set(struct rte_eth_dev *dev __rte_unused,
		       struct rte_ether_addr *addr __rte_unused)
{
	/* ethdev stores it in data->mac_addrs; the back end filters nothing. */
	return 0;
}

static int
vnapi_dev_accept(struct rte_eth_dev *dev __rte_unused)
{
	return 0; /* promiscuous and allmulticast: the back end filters nothing */
}

/*
 * The back end delivers every frame and vnapi does not filter: turning
 * promiscuous or allmulticast mode off would be a lie (ethdev keeps the mode
 * on when the op fails).
 */
static int
vnapi_dev_promiscuous_disable(struct rte_eth_dev *dev)
{
	VNAPI_INIT_LOG(ERR, "%s: promiscuous mode cannot be turned off: the back end delivers every frame and vnapi does not filter",
		       dev->data->name);
	return -ENOTSUP;
}

static int
vnapi_dev_allmulticast_disable(struct rte_eth_dev *dev)
{
	VNAPI_INIT_LOG(ERR, "%s: allmulticast mode cannot be turned off: the back end delivers every frame and vnapi does not filter",
		       dev->data->name);
	return -ENOTSUP;
}

/* The two ops whose type differs between DPDK releases (vnapi_compat.h). */
VNAPI_STATS_GET_OP(vnapi_stats_get_op, vnapi_dev_stats_get)
VNAPI_PTYPES_GET_OP(vnapi_ptypes_get_op, vnapi_dev_supported_ptypes_get)

/*
 * The ops the primary and a secondary process share: they read what lives in
 * shared memory, reset the counters, or refuse the same way in both.
 */
#define VNAPI_OPS_SHARED \
	.dev_close = vnapi_dev_close, \
	.dev_infos_get = vnapi_dev_infos_get, \
	.link_update = vnapi_dev_link_update, \
	.promiscuous_enable = vnapi_dev_accept, \
	.promiscuous_disable = vnapi_dev_promiscuous_disable, \
	.allmulticast_enable = vnapi_dev_accept, \
	.allmulticast_disable = vnapi_dev_allmulticast_disable, \
	.stats_get = vnapi_stats_get_op, \
	.stats_reset = vnapi_dev_stats_reset, \
	.xstats_get = vnapi_dev_xstats_get, \
	.xstats_get_names = vnapi_dev_xstats_get_names, \
	.xstats_reset = vnapi_dev_stats_reset, \
	.dev_supported_ptypes_get = vnapi_ptypes_get_op

const struct eth_dev_ops vnapi_eth_dev_ops = {
	VNAPI_OPS_SHARED,
	.dev_configure = vnapi_dev_configure,
	.dev_start = vnapi_dev_start,
	.dev_stop = vnapi_dev_stop,
	.dev_reset = vnapi_dev_reset,
	.mac_addr_set = vnapi_dev_mac_addr_set,
	.mtu_set = vnapi_dev_mtu_set,
	.rx_queue_setup = vnapi_dev_rx_queue_setup,
	.rx_queue_release = vnapi_dev_rx_queue_release,
	.rx_burst_mode_get = vnapi_rx_burst_mode_get,
	.tx_burst_mode_get = vnapi_tx_burst_mode_get,
	.tx_queue_setup = vnapi_dev_tx_queue_setup,
	.tx_queue_release = vnapi_dev_tx_queue_release,
	.tx_done_cleanup = vnapi_tx_done_cleanup,
	.rx_queue_intr_enable = vnapi_dev_rx_queue_intr_enable,
	.rx_queue_intr_disable = vnapi_dev_rx_queue_intr_disable,
	.dev_ptypes_set = vnapi_dev_ptypes_set,
	.get_monitor_addr = vnapi_get_monitor_addr,
};

/*
 * A secondary process (dpdk-proc-info, dpdk-dumpcap) attaches to the
 * primary's port: it reads what lives in shared memory (device info, link,
 * stats, xstats, packet types) and may reset the counters. The device, its
 * queues and its eventfds belong to the primary: everything that would
 * change them fails here with a message saying so.
 */
static int
vnapi_secondary_refuse(struct rte_eth_dev *dev, const char *what)
{
	VNAPI_INIT_LOG(ERR, "%s: %s: only the primary process may do this (this is a secondary process attached to the primary's port)",
		       dev->data->name, what);
	return -E_RTE_SECONDARY;
}

/* The ops that take only the device: one refusing op each. */
#define VNAPI_SECONDARY_REFUSE_OP(op, what) \
static int \
vnapi_secondary_##op(struct rte_eth_dev *dev) \
{ \
	return vnapi_secondary_refuse(dev, what); \
}

VNAPI_SECONDARY_REFUSE_OP(configure, "configure")
VNAPI_SECONDARY_REFUSE_OP(start, "start")
VNAPI_SECONDARY_REFUSE_OP(stop, "stop")
VNAPI_SECONDARY_REFUSE_OP(reset, "reset")

static int
vnapi_secondary_mtu_set(struct rte_eth_dev *dev, uint16_t mtu __rte_unused)
{
	return vnapi_secondary_refuse(dev, "MTU set");
}

static int
vnapi_secondary_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *addr __rte_unused)
{
	return vnapi_secondary_refuse(dev, "MAC address set");
}

static int
vnapi_secondary_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid __rte_unused,
			       uint16_t nb_desc __rte_unused, unsigned int socket __rte_unused,
			       const struct rte_eth_rxconf *conf __rte_unused,
			       struct rte_mempool *mp __rte_unused)
{
	return vnapi_secondary_refuse(dev, "rx queue setup");
}

static int
vnapi_secondary_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid __rte_unused,
			       uint16_t nb_desc __rte_unused, unsigned int socket __rte_unused,
			       const struct rte_eth_txconf *conf __rte_unused)
{
	return vnapi_secondary_refuse(dev, "tx queue setup");
}

static int
vnapi_secondary_intr(struct rte_eth_dev *dev, uint16_t qid __rte_unused)
{
	return vnapi_secondary_refuse(dev, "rx interrupt enable/disable (the eventfds are the primary's)");
}

static int
vnapi_secondary_ptypes_set(struct rte_eth_dev *dev, uint32_t ptype_mask __rte_unused)
{
	return vnapi_secondary_refuse(dev, "packet type set");
}

const struct eth_dev_ops vnapi_eth_dev_ops_secondary = {
	VNAPI_OPS_SHARED,
	.dev_configure = vnapi_secondary_configure,
	.dev_start = vnapi_secondary_start,
	.dev_stop = vnapi_secondary_stop,
	.dev_reset = vnapi_secondary_reset,
	.mac_addr_set = vnapi_secondary_mac_addr_set,
	.mtu_set = vnapi_secondary_mtu_set,
	.rx_queue_setup = vnapi_secondary_rx_queue_setup,
	.tx_queue_setup = vnapi_secondary_tx_queue_setup,
	.rx_queue_intr_enable = vnapi_secondary_intr,
	.rx_queue_intr_disable = vnapi_secondary_intr,
	.dev_ptypes_set = vnapi_secondary_ptypes_set,
};

void
vnapi_eth_dev_set_ops(struct rte_eth_dev *dev, bool primary)
{
	dev->dev_ops = primary ? &vnapi_eth_dev_ops : &vnapi_eth_dev_ops_secondary;
	dev->rx_queue_count = vnapi_rx_queue_count;
	dev->rx_descriptor_status = vnapi_rx_descriptor_status;
	dev->tx_descriptor_status = vnapi_tx_descriptor_status;
}

int
vnapi_eth_dev_init(struct rte_eth_dev *dev, const struct rte_ether_addr *mac, int socket)
{
	struct vnapi_hw *hw = dev->data->dev_private;

	dev->data->mac_addrs = rte_zmalloc_socket("vnapi_mac", sizeof(struct rte_ether_addr), 0,
						  socket);
	if (dev->data->mac_addrs == NULL)
		return -ENOMEM;
	if (mac != NULL)
		rte_ether_addr_copy(mac, dev->data->mac_addrs);
	else
		rte_eth_random_addr(dev->data->mac_addrs->addr_bytes);
	vnapi_eth_dev_set_ops(dev, true);
	hw->parse_ptype = true;
	dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC;
	dev->data->promiscuous = 1;
	dev->data->all_multicast = 1;
	vnapi_link_set(dev, false, false);
	rte_eth_dev_probing_finish(dev);
	return 0;
}

void
vnapi_eth_dev_probe_undo(struct rte_eth_dev *dev, bool connected)
{
	if (connected) {
		vnapi_conn_quiesce(dev);
		vnapi_conn_close(dev);
	}
	rte_free(dev->process_private);
	dev->process_private = NULL;
	rte_eth_dev_release_port(dev);
}

struct vnapi_proc *
vnapi_proc_alloc(const struct vnapi_device_ops *ops, const struct vnapi_session_ops *session,
		 int socket)
{
	struct vnapi_proc *proc;
	unsigned int i;

	proc = rte_zmalloc_socket("vnapi_proc", sizeof(*proc) + ops->state_size,
				  RTE_CACHE_LINE_SIZE, socket);
	if (proc == NULL)
		return NULL;
	proc->ops = ops;
	proc->session = session;
	proc->transport = ops->state_size != 0 ? (void *)(proc + 1) : NULL;
	if (ops->state_init != NULL)
		ops->state_init(proc->transport);
	for (i = 0; i < VNAPI_MAX_VRINGS; i++) {
		proc->kickfd[i] = -1;
		proc->callfd[i] = -1;
	}
	return proc;
}

/*
 * A secondary process attaches to the port the primary made (same name,
 * shared dev->data and queues); it has its own process_private, without the
 * primary's socket, eventfds or device mapping: nothing in a secondary calls
 * the transport (its ops refuse what would).
 */
int
vnapi_eth_dev_attach_secondary(struct rte_device *device, const char *name,
			       const struct vnapi_device_ops *ops, bool if_ours)
{
	const struct vnapi_hw *hw;
	struct rte_eth_dev *dev;
	struct vnapi_proc *proc;

	dev = rte_eth_dev_attach_secondary(name);
	if (dev == NULL) {
		if (if_ours)
			return 1; /* no port of the primary: another driver's device */
		VNAPI_INIT_LOG(ERR, "%s: the primary process has no such port: a secondary process attaches to the primary's ports, it cannot create one",
			       name);
		return -ENODEV;
	}
	hw = dev->data->dev_private;
	if (hw == NULL || hw->magic != VNAPI_HW_MAGIC) {
		/* The primary's port is another driver's (e.g. net_virtio's). */
		rte_eth_dev_release_port(dev);
		if (if_ours)
			return 1;
		VNAPI_INIT_LOG(ERR, "%s: the primary process's port is not vnapi's", name);
		return -ENODEV;
	}
	proc = vnapi_proc_alloc(ops, NULL, rte_socket_id());
	if (proc == NULL) {
		rte_eth_dev_release_port(dev);
		return -ENOMEM;
	}
	dev->process_private = proc;
	dev->device = device;
	/* The rx interrupt handle is the primary's (its eventfds). */
	dev->intr_handle = NULL;
	vnapi_eth_dev_set_ops(dev, false);
	vnapi_rxtx_select(dev);
	rte_eth_dev_probing_finish(dev);
	VNAPI_INIT_LOG(INFO, "%s: port %u attached in a secondary process (%s)", name,
		       dev->data->port_id, ops->name);
	return 0;
}

int
vnapi_eth_dev_probe_finish(struct rte_eth_dev *dev, int socket)
{
	const struct vnapi_hw *hw = dev->data->dev_private;
	const struct vnapi_proc *proc = dev->process_private;
	const struct rte_ether_addr *mac = NULL;
	int ret;

	((struct vnapi_hw *)dev->data->dev_private)->magic = VNAPI_HW_MAGIC;
	ret = vnapi_conn_probe(dev);
	if (ret != 0)
		goto err_release;
	/* A server's back end has not connected yet: nothing negotiated to log.
	 * Offloads the application does not enable are dropped at configure:
	 * the line at start says what the device serves. */
	if (!hw->params.server)
		vnapi_backend_log_features(dev, "");

	/* The devargs' MAC wins; else the device's (virtio-pci with F_MAC,
	 * read while connecting); else a random one. */
	if (!rte_is_zero_ether_addr(&hw->params.mac))
		mac = &hw->params.mac;
	else
		mac = proc->dev_mac;
	ret = vnapi_eth_dev_init(dev, mac, socket);
	if (ret != 0)
		goto err_disconnect;
	return 0;

err_disconnect:
	vnapi_eth_dev_probe_undo(dev, true);
	return ret;
err_release:
	vnapi_eth_dev_probe_undo(dev, false);
	return ret;
}

int
vnapi_eth_dev_remove(const char *name)
{
	struct rte_eth_dev *dev = rte_eth_dev_allocated(name);

	if (dev == NULL)
		return 0; /* already gone */
	vnapi_dev_close(dev);
	return rte_eth_dev_release_port(dev);
}
