/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cpuflags.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_net.h>
#include <rte_prefetch.h>
#include <rte_vect.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"
#include "vnapi_gate.h"
#include "vnapi_intr.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_rxtx.h"
#ifdef VNAPI_RX_AVX2
#include "vnapi_rxtx_avx2.h"
#endif
#include "vnapi_transport.h"
#include "virtq_burst.h"

/* Refill the rx ring once at least this many descriptors are free. */
#define VNAPI_RX_REFILL_THRESH 32

/*
 * The ring code a burst function is built for, a compile-time constant:
 * lib/virtq's API (any layout, in order or not), or its in-order hot paths
 * inlined for one layout (virtq_burst.h). vnapi_rxtx_select() picks the
 * in-order ones when IN_ORDER is negotiated; a burst still checks the queue
 * (vnapi_ring_ok()): a back end met later may have negotiated otherwise.
 */
enum vnapi_ring {
	VNAPI_RING_ANY,
	VNAPI_RING_SPLIT_IO,
	VNAPI_RING_PACKED_IO,
};

static __rte_always_inline enum virtq_layout
vnapi_ring_layout(enum vnapi_ring ring)
{
	return ring == VNAPI_RING_PACKED_IO ? VIRTQ_LAYOUT_PACKED : VIRTQ_LAYOUT_SPLIT;
}

/* The queue is what a burst built for @p ring expects. */
static __rte_always_inline bool
vnapi_ring_ok(const struct virtq *vq, enum vnapi_ring ring)
{
	const struct virtq_params *vp = virtq_params(vq);

	return ring == VNAPI_RING_ANY ||
	       (vp->in_order && vp->layout == vnapi_ring_layout(ring));
}

/* virtq_get_used(), inline for an in-order ring. */
static __rte_always_inline uint16_t
vnapi_vq_get_used(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max,
		  enum vnapi_ring ring)
{
	const enum virtq_layout layout = vnapi_ring_layout(ring);
	struct virtq_take t;
	uint16_t n, i;

	if (ring == VNAPI_RING_ANY)
		return virtq_get_used(vq, cookies, lens, max);
	n = virtq_take_begin(vq, &t, layout, max);
	for (i = 0; i < n; i++) {
		uint32_t len;

		if (layout == VIRTQ_LAYOUT_SPLIT ? !virtq_take_split(&t, &cookies[i], &len) :
		    virtq_take_packed(&t, &cookies[i], &len) != 1)
			break;
		if (lens != NULL)
			lens[i] = len;
	}
	virtq_take_end(vq, &t, layout);
	return i;
}

/* One single-descriptor buffer through an open cursor (virtq_burst.h). */
static __rte_always_inline void
vnapi_vq_put(struct virtq_put *p, uint64_t addr, uint32_t len, void *cookie, bool in,
	     enum vnapi_ring ring)
{
	if (ring == VNAPI_RING_PACKED_IO)
		virtq_put_packed(p, addr, len, cookie, in);
	else
		virtq_put_split(p, addr, len, cookie, in);
}

/*
 * Notify the device through this process's transport (kick eventfd, or the
 * virtio-pci notify address): looked up here, on the rare path where the
 * device asked for a kick.
 */
static void
vnapi_notify(uint16_t port_id, uint16_t vring, struct vnapi_queue_stats *st)
{
	struct rte_eth_dev *dev = &rte_eth_devices[port_id];
	const struct vnapi_proc *proc = dev->process_private;

	if (likely(proc->ops->notify(dev, vring)))
		st->kicks++;
	else
		st->kick_errors++;
}

/* @p n raw mbufs from the rx queue's pool, or none, counted as a failure. */
static __rte_always_inline bool
vnapi_rxq_get_mbufs(struct vnapi_rxq *rxq, struct rte_mbuf **mbufs, uint16_t n)
{
	if (likely(rte_mempool_get_bulk(rxq->mp, (void **)mbufs, n) == 0))
		return true;
	rxq->stats.nombuf += n;
	rte_eth_devices[rxq->port_id].data->rx_mbuf_alloc_failed += n;
	return false;
}

/*
 * Post fresh mbufs to the rx ring. The device writes the virtio-net header
 * into the headroom just before data_off, so a packet lands where
 * rte_pktmbuf_mtod() expects it, with no copy. The mbufs come raw from the
 * pool (no rte_pktmbuf_reset(), whose stores reach each mbuf's second cache
 * line): a pool's free mbufs have next NULL, nb_segs 1 and refcnt 1, and a
 * receive writes the rest (vnapi_rx_init_mbuf()). Every buffer is posted
 * with the same writable length, rxq->buf_wlen, which the mergeable receive
 * compares used lengths with.
 */
int
vnapi_rxq_refill(struct vnapi_rxq *rxq)
{
	struct rte_mbuf *mbufs[VNAPI_BURST_MAX];
	struct virtq_sg sg[VNAPI_BURST_MAX];
	const uint32_t wlen = rxq->buf_wlen;
	uint16_t free_cnt = virtq_num_free(rxq->vq);
	int added = 0;

	while (free_cnt > 0) {
		uint16_t n = RTE_MIN(free_cnt, (uint16_t)VNAPI_BURST_MAX);
		uint16_t i, done;

		if (unlikely(!vnapi_rxq_get_mbufs(rxq, mbufs, n)))
			break;
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = mbufs[i];

			sg[i].addr = (uintptr_t)m->buf_addr + RTE_PKTMBUF_HEADROOM - rxq->hdr_size;
			sg[i].len = wlen;
		}
		done = virtq_add_inbufs(rxq->vq, sg, (void *const *)mbufs, n);
		if (unlikely(done < n)) {
			/* The queue broke under us: give back what was not posted. */
			rte_pktmbuf_free_bulk(&mbufs[done], n - done);
			added += done;
			break;
		}
		added += n;
		free_cnt -= n;
	}
	if (added > 0 && virtq_kick_prepare(rxq->vq))
		vnapi_notify(rxq->port_id, rxq->vring, &rxq->stats);
	return added;
}

/*
 * vnapi_rxq_refill() on an in-order ring: the mbufs go straight into the
 * descriptors (virtq_put_split() / virtq_put_packed()).
 */
static __rte_always_inline void
vnapi_rxq_refill_io(struct vnapi_rxq *rxq, enum vnapi_ring ring)
{
	const enum virtq_layout layout = vnapi_ring_layout(ring);
	const uint16_t hdr_size = rxq->hdr_size;
	const uint32_t wlen = rxq->buf_wlen;
	struct rte_mbuf *mbufs[VNAPI_BURST_MAX];
	struct virtq_put p;
	uint16_t room = virtq_put_begin(rxq->vq, &p, layout, true);

	while (room > 0) {
		uint16_t n = RTE_MIN(room, (uint16_t)VNAPI_BURST_MAX);
		uint16_t i;

		if (unlikely(!vnapi_rxq_get_mbufs(rxq, mbufs, n)))
			break;
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = mbufs[i];

			vnapi_vq_put(&p, (uintptr_t)m->buf_addr + RTE_PKTMBUF_HEADROOM - hdr_size,
				     wlen, m, true, ring);
		}
		room -= n;
	}
	virtq_put_end(rxq->vq, &p, layout);
	if (p.added > 0 && virtq_kick_prepare_inline(rxq->vq))
		vnapi_notify(rxq->port_id, rxq->vring, &rxq->stats);
}

/* Software packet types (rte_eth_dev_set_ptypes() may turn this off). */
static inline void
vnapi_rx_parse_ptypes(struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		pkts[i]->packet_type = rte_net_get_ptype(pkts[i], NULL,
				RTE_PTYPE_L2_MASK | RTE_PTYPE_L3_MASK | RTE_PTYPE_L4_MASK);
}

/*
 * The AVX2 rx path: x86 with AVX2, the EAL's SIMD width at least 256 bits
 * (--force-max-simd-bitwidth=64 or 128 keeps the scalar path), and no rx
 * offload negotiated. @p why says what decided.
 */
static bool
vnapi_rx_avx2_usable(const struct vnapi_hw *hw, const char **why)
{
#ifdef VNAPI_RX_AVX2
	if (rte_vect_get_max_simd_bitwidth() < RTE_VECT_SIMD_256) {
		*why = "SIMD width below 256 bits";
		return false;
	}
	if (rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) != 1) {
		*why = "no AVX2 on this CPU";
		return false;
	}
	if (vnapi_net_ol_rx(hw->features) != 0) {
		*why = "rx offloads negotiated";
		return false;
	}
	*why = "AVX2 allowed and present";
	return true;
#else
	RTE_SET_USED(hw);
	*why = "built without the AVX2 path";
	return false;
#endif
}

/*
 * The rx paths: buffer layout x scalar or AVX2, each in three ring codes
 * (NAME through lib/virtq's API, NAME_split and NAME_packed inline for an
 * in-order ring).
 */
struct vnapi_rx_path {
	eth_rx_burst_t any, split, packed;
	bool mrg, vec;
	const char *what;
};

static const struct vnapi_rx_path vnapi_rx_paths[] = {
	{ vnapi_recv_pkts_mrg, vnapi_recv_pkts_mrg_split, vnapi_recv_pkts_mrg_packed,
	  true, false, "Scalar, mergeable buffers" },
	{ vnapi_recv_pkts, vnapi_recv_pkts_split, vnapi_recv_pkts_packed,
	  false, false, "Scalar, one buffer per packet" },
#ifdef VNAPI_RX_AVX2
	{ vnapi_recv_pkts_mrg_avx2, vnapi_recv_pkts_mrg_avx2_split,
	  vnapi_recv_pkts_mrg_avx2_packed, true, true, "Vector AVX2, mergeable buffers" },
	{ vnapi_recv_pkts_avx2, vnapi_recv_pkts_avx2_split, vnapi_recv_pkts_avx2_packed,
	  false, true, "Vector AVX2, one buffer per packet" },
#endif
};

/* The ring code's words in a burst mode. */
static const char *
vnapi_ring_what(eth_rx_burst_t f, const struct vnapi_rx_path *rp)
{
	if (f == rp->split)
		return ", split ring in order";
	if (f == rp->packed)
		return ", packed ring in order";
	return "";
}

/* rte_eth_rx_burst_mode_get(): the rx path vnapi_rxtx_select() chose. */
int
vnapi_rx_burst_mode_get(struct rte_eth_dev *dev, uint16_t queue_id,
			struct rte_eth_burst_mode *mode)
{
	const eth_rx_burst_t f = dev->rx_pkt_burst;
	unsigned int i;

	RTE_SET_USED(queue_id);
	for (i = 0; i < RTE_DIM(vnapi_rx_paths); i++) {
		const struct vnapi_rx_path *rp = &vnapi_rx_paths[i];

		if (f == rp->any || f == rp->split || f == rp->packed) {
			snprintf(mode->info, sizeof(mode->info), "%s%s", rp->what,
				 vnapi_ring_what(f, rp));
			return 0;
		}
	}
	return -EINVAL; /* not started, or a secondary process */
}

/* rte_eth_tx_burst_mode_get(): one tx path, in its three ring codes. */
int
vnapi_tx_burst_mode_get(struct rte_eth_dev *dev, uint16_t queue_id,
			struct rte_eth_burst_mode *mode)
{
	const eth_tx_burst_t f = dev->tx_pkt_burst;

	RTE_SET_USED(queue_id);
	if (f != vnapi_xmit_pkts && f != vnapi_xmit_pkts_split && f != vnapi_xmit_pkts_packed)
		return -EINVAL;
	snprintf(mode->info, sizeof(mode->info), "Scalar%s",
		 f == vnapi_xmit_pkts_split ? ", split ring in order" :
		 f == vnapi_xmit_pkts_packed ? ", packed ring in order" : "");
	return 0;
}

/* Datapaths are chosen here, once, and logged. */
void
vnapi_rxtx_select(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const bool packed = vnapi_layout(hw) == VIRTQ_LAYOUT_PACKED;
	const bool in_order = vnapi_has_feature(hw, VIRTIO_F_IN_ORDER);
	const bool mrg = vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF);
	const char *ring = in_order ? (packed ? "packed ring in order" : "split ring in order") :
				      (packed ? "packed ring" : "split ring");
	const struct vnapi_rx_path *rp = NULL;
	const char *why;
	unsigned int i;
	bool vec;

	/*
	 * A secondary process has no kick eventfds (they are the primary's)
	 * and the queues have one user, the primary: no datapath here.
	 * Capture (dpdk-dumpcap) runs in the primary's bursts through pdump.
	 */
	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		dev->rx_pkt_burst = rte_eth_pkt_burst_dummy;
		dev->tx_pkt_burst = rte_eth_pkt_burst_dummy;
		VNAPI_INIT_LOG(INFO, "%s: secondary process: rx/tx bursts return 0 (the queues are the primary's)",
			       dev->data->name);
		return;
	}
	vec = vnapi_rx_avx2_usable(hw, &why);
	for (i = 0; i < RTE_DIM(vnapi_rx_paths); i++)
		if (vnapi_rx_paths[i].mrg == mrg && vnapi_rx_paths[i].vec == vec)
			rp = &vnapi_rx_paths[i];
	/* (vec is true only where the AVX2 paths are built) */
	RTE_VERIFY(rp != NULL);
	/* The ring code is the one negotiated now; a burst checks it again
	 * (vnapi_ring_ok()): a back end met later may negotiate otherwise. */
	dev->rx_pkt_burst = !in_order ? rp->any : packed ? rp->packed : rp->split;
	VNAPI_INIT_LOG(INFO, "%s: rx path: %s, %s, %s (%s)", dev->data->name, ring,
		       mrg ? "mergeable buffers" : "one buffer per packet",
		       vec ? "AVX2" : "scalar", why);
	dev->tx_pkt_burst = !in_order ? vnapi_xmit_pkts :
			    packed ? vnapi_xmit_pkts_packed : vnapi_xmit_pkts_split;
	dev->tx_pkt_prepare = vnapi_xmit_pkts_prepare;
	if (vnapi_has_feature(hw, VIRTIO_F_RING_INDIRECT_DESC))
		VNAPI_INIT_LOG(INFO, "%s: tx path: %s, header in headroom, multi-segment packets in indirect tables of up to %u descriptors",
			       dev->data->name, ring, VNAPI_TX_MAX_SEGS + 1);
	else
		VNAPI_INIT_LOG(INFO, "%s: tx path: %s, header in headroom, multi-segment packets as descriptor chains",
			       dev->data->name, ring);
}

/* Per burst, never per packet: refill, and the rare per-queue extras. */
static __rte_always_inline void
vnapi_rx_finish(struct vnapi_rxq *rxq, struct rte_mbuf **rx_pkts, uint16_t nb_rx,
		uint64_t bytes, enum vnapi_ring ring)
{
	rxq->stats.packets += nb_rx;
	rxq->stats.bytes += bytes;
	if (unlikely(nb_rx == 0) && virtq_is_broken_inline(rxq->vq) && !rxq->broken_reported) {
		rxq->broken_reported = true;
		vnapi_link_queue_broken(rxq->port_id, "rx", rxq->queue_id, rxq->vq);
	}
	if (rxq->parse_ptype)
		vnapi_rx_parse_ptypes(rx_pkts, nb_rx);
	if (unlikely(rxq->rx_window != VNAPI_RXW_NONE))
		vnapi_rx_window_account(rxq, nb_rx);
	if (virtq_num_free_inline(rxq->vq) >= VNAPI_RX_REFILL_THRESH) {
		if (ring == VNAPI_RING_ANY)
			vnapi_rxq_refill(rxq);
		else
			vnapi_rxq_refill_io(rxq, ring);
	}
}

/*
 * Every mbuf in the ring came raw from the pool (vnapi_rxq_refill()): next
 * NULL, nb_segs 1, refcnt 1 and nothing else known. Written here, all in
 * the first cache line: data_off, refcnt, nb_segs and port as one word,
 * ol_flags, packet_type, the lengths and vlan_tci (what rte_pktmbuf_reset()
 * would have set there). The second cache line (next, tx_offload) is left
 * alone, as DPDK's vector PMDs leave it.
 */
static __rte_always_inline void
vnapi_rx_init_mbuf(const struct vnapi_rxq *rxq, struct rte_mbuf *m, uint32_t len)
{
	memcpy(&m->rearm_data, &rxq->rearm, sizeof(rxq->rearm));
	m->ol_flags = rxq->ol_flags;
	m->packet_type = 0;
	m->pkt_len = len;
	m->data_len = (uint16_t)len;
	m->vlan_tci = 0;
}

/*
 * The offload fields of a received packet's header (rx offloads
 * negotiated): all zero for a plain packet, else decoded and validated by
 * vnapi_net_hdr_decode(); a rejected header is counted and the packet is
 * delivered without offload flags (its checksum then unknown).
 */
static inline void
vnapi_rx_offload(struct vnapi_rxq *rxq, struct rte_mbuf *m)
{
	const struct vnapi_net_hdr *hdr = (const void *)((char *)m->buf_addr +
							 RTE_PKTMBUF_HEADROOM - rxq->hdr_size);
	enum vnapi_net_rx_verdict v;

	if (likely((hdr->flags | hdr->gso_type) == 0))
		return;
	v = vnapi_net_hdr_decode(hdr, m, rxq->ol);
	if (unlikely(v != VNAPI_NET_RX_OK)) {
		VNAPI_DP_LOG(DEBUG, "port %u rx queue %u: header rejected (verdict %d): flags 0x%x gso_type 0x%x csum %u+%u gso_size %u hdr_len %u, packet %u bytes",
			     rxq->port_id, rxq->queue_id, v, hdr->flags, hdr->gso_type,
			     hdr->csum_start, hdr->csum_offset, hdr->gso_size, hdr->hdr_len,
			     m->pkt_len);
		rxq->stats.bad_hdr++;
	}
}

/*
 * The device wrote a header or a used len that makes no sense (the rare
 * path, out of line; @p why is a static string): we can no longer tell
 * where packets start or end. The queue is broken and reported at once
 * (link down, logged once); the @p n buffers from the bad one on are
 * freed, still as the pool gave them; what this burst took before them is
 * delivered.
 */
static __rte_noinline __rte_cold void
vnapi_rx_bad(struct vnapi_rxq *rxq, void **cookies, uint16_t n, const char *why)
{
	uint16_t i;

	VNAPI_DP_LOG(DEBUG, "port %u rx queue %u: %s", rxq->port_id, rxq->queue_id, why);
	for (i = 0; i < n; i++)
		rte_mbuf_raw_free(cookies[i]);
	/* Counted where lib/virtq did not reject something first (a packet
	 * whose later buffers it refused: bad_used). */
	if (!virtq_is_broken(rxq->vq)) {
		rxq->stats.errors++;
		virtq_mark_broken(rxq->vq, why);
	}
	if (!rxq->broken_reported) {
		rxq->broken_reported = true;
		vnapi_link_queue_broken(rxq->port_id, "rx", rxq->queue_id, rxq->vq);
	}
}

/*
 * A mergeable packet's first buffer says it spans @p nbufs buffers (not
 * 1): 0 is nonsense, and the device uses a packet's buffers together
 * (virtio 1.2, 5.1.6.4.2: at least num_buffers are seen used at once), so
 * the ones this burst has not taken (@p rest of them follow here) must be
 * in the used ring now. Otherwise vnapi_rx_bad(). Out of line: the common
 * packet fits one buffer.
 */
static __rte_noinline __rte_cold const char *
vnapi_rx_mrg_bad(struct vnapi_rxq *rxq, uint16_t nbufs, uint16_t rest)
{
	if (nbufs == 0)
		return "rx header says num_buffers 0";
	if (nbufs > rxq->nb_desc)
		return "rx header's num_buffers beyond the ring";
	if (nbufs - 1 > rest && virtq_used_count(rxq->vq) < nbufs - 1 - rest)
		return "rx used ring ends inside a packet (num_buffers)";
	return NULL;
}

/* A complete packet: its offload fields (if negotiated), then into the burst. */
static __rte_always_inline void
vnapi_rx_deliver(struct vnapi_rxq *rxq, struct rte_mbuf *m, struct rte_mbuf **rx_pkts,
		 uint16_t *nb_rx, uint64_t *bytes)
{
	if (rxq->ol != 0)
		vnapi_rx_offload(rxq, m);
	*bytes += m->pkt_len;
	rx_pkts[(*nb_rx)++] = m;
}

/* A packet in one buffer of used len @p len (the header included). */
static __rte_always_inline void
vnapi_rx_whole(struct vnapi_rxq *rxq, struct rte_mbuf *m, uint32_t len,
	       struct rte_mbuf **rx_pkts, uint16_t *nb_rx, uint64_t *bytes)
{
	vnapi_rx_init_mbuf(rxq, m, len - rxq->hdr_size);
	vnapi_rx_deliver(rxq, m, rx_pkts, nb_rx, bytes);
}

/*
 * The @p n used buffers to packets. One buffer per packet (@p mrg false:
 * mrg_rxbuf off), or mergeable rx buffers: the first buffer's header says
 * how many buffers the packet spans when the device filled that buffer
 * (else the packet is that buffer); the others carry data only. A packet
 * may span bursts: the chain under construction stays in the queue.
 */
static __rte_always_inline uint16_t
vnapi_rx_bufs(struct vnapi_rxq *rxq, void **cookies, const uint32_t *lens, uint16_t n,
	      struct rte_mbuf **rx_pkts, uint64_t *bytes, bool mrg)
{
	uint16_t i, nb_rx = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = cookies[i];
		uint32_t len = lens[i];

		if (!mrg || rxq->mrg_head == NULL) {
			const struct vnapi_net_hdr *hdr;
			const char *why;
			uint16_t nbufs;

			if (unlikely(len < rxq->hdr_size)) {
				vnapi_rx_bad(rxq, &cookies[i], n - i,
					     "rx used len shorter than the virtio-net header");
				break;
			}
			/* Only a buffer the device filled can be followed by
			 * more of its packet (rxq->buf_wlen): the header of any
			 * other is not read, its line stays with the device. */
			nbufs = 1;
			if (mrg && len == rxq->buf_wlen) {
				hdr = (const void *)((char *)m->buf_addr + RTE_PKTMBUF_HEADROOM -
						     rxq->hdr_size);
				nbufs = hdr->num_buffers;
			}
			if (likely(nbufs == 1)) {
				vnapi_rx_whole(rxq, m, len, rx_pkts, &nb_rx, bytes);
				continue;
			}
			why = vnapi_rx_mrg_bad(rxq, nbufs, n - i - 1);
			if (unlikely(why != NULL)) {
				vnapi_rx_bad(rxq, &cookies[i], n - i, why);
				break;
			}
			vnapi_rx_init_mbuf(rxq, m, len - rxq->hdr_size);
			rxq->mrg_head = m;
			rxq->mrg_tail = m;
			rxq->mrg_left = nbufs - 1;
			continue;
		}

		/* A continuation buffer: data from the start of the buffer. */
		vnapi_rx_init_mbuf(rxq, m, len);
		m->data_off = RTE_PKTMBUF_HEADROOM - rxq->hdr_size;
		rxq->mrg_tail->next = m;
		rxq->mrg_tail = m;
		rxq->mrg_head->nb_segs++;
		rxq->mrg_head->pkt_len += len;
		if (--rxq->mrg_left == 0) {
			vnapi_rx_deliver(rxq, rxq->mrg_head, rx_pkts, &nb_rx, bytes);
			rxq->mrg_head = NULL;
			rxq->mrg_tail = NULL;
		}
	}
	return nb_rx;
}

/*
 * The rx burst of both buffer layouts, scalar or with the AVX2 prefix, for
 * one ring code (@p mrg, @p vec and @p ring constants: one copy each), the
 * gate entered.
 */
static __rte_always_inline uint16_t
vnapi_rx_body(struct vnapi_rxq *rxq, struct rte_mbuf **rx_pkts, uint16_t nb_pkts, bool mrg,
	      bool vec, enum vnapi_ring ring)
{
	void *cookies[VNAPI_BURST_MAX];
	uint32_t lens[VNAPI_BURST_MAX];
	uint16_t n, nb_rx, done = 0;
	uint64_t bytes = 0;

	n = vnapi_vq_get_used(rxq->vq, cookies, lens, RTE_MIN(nb_pkts, (uint16_t)VNAPI_BURST_MAX),
			      ring);
#ifdef VNAPI_RX_AVX2
	if (vec)
		done = vnapi_rx_vec_avx2(rxq, cookies, lens, n, rx_pkts, &bytes, mrg);
#else
	RTE_SET_USED(vec);
#endif
	nb_rx = vnapi_rx_bufs(rxq, &cookies[done], &lens[done], n - done, &rx_pkts[done], &bytes,
			      mrg);
	nb_rx += done;
	vnapi_rx_finish(rxq, rx_pkts, nb_rx, bytes, ring);
	return nb_rx;
}

/*
 * One rx path (buffer layout, scalar or AVX2) in its three ring codes: NAME
 * through lib/virtq's API, NAME_split and NAME_packed with the in-order
 * ring inline, falling back to NAME's body when the queue is not what they
 * expect.
 */
#define VNAPI_RX_PATH(name, mrg, vec)                                                     \
static __rte_noinline uint16_t                                                            \
name##_any(struct vnapi_rxq *rxq, struct rte_mbuf **rx_pkts, uint16_t nb_pkts)             \
{                                                                                         \
	return vnapi_rx_body(rxq, rx_pkts, nb_pkts, mrg, vec, VNAPI_RING_ANY);            \
}                                                                                         \
static __rte_always_inline uint16_t                                                       \
name##_ring(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts,                   \
	    enum vnapi_ring ring)                                                         \
{                                                                                         \
	struct vnapi_rxq *rxq = rx_queue;                                                 \
	uint16_t nb_rx;                                                                   \
                                                                                          \
	if (unlikely(!vnapi_gate_enter(&rxq->gate)))                                      \
		return 0; /* no back end serves the ring */                               \
	if (ring != VNAPI_RING_ANY && likely(vnapi_ring_ok(rxq->vq, ring)))               \
		nb_rx = vnapi_rx_body(rxq, rx_pkts, nb_pkts, mrg, vec, ring);             \
	else                                                                              \
		nb_rx = name##_any(rxq, rx_pkts, nb_pkts);                                \
	vnapi_gate_leave(&rxq->gate);                                                     \
	return nb_rx;                                                                     \
}                                                                                         \
uint16_t                                                                                  \
name(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts)                          \
{                                                                                         \
	return name##_ring(rx_queue, rx_pkts, nb_pkts, VNAPI_RING_ANY);                   \
}                                                                                         \
uint16_t                                                                                  \
name##_split(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts)                  \
{                                                                                         \
	return name##_ring(rx_queue, rx_pkts, nb_pkts, VNAPI_RING_SPLIT_IO);              \
}                                                                                         \
uint16_t                                                                                  \
name##_packed(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts)                 \
{                                                                                         \
	return name##_ring(rx_queue, rx_pkts, nb_pkts, VNAPI_RING_PACKED_IO);             \
}

VNAPI_RX_PATH(vnapi_recv_pkts, false, false)
VNAPI_RX_PATH(vnapi_recv_pkts_mrg, true, false)
#ifdef VNAPI_RX_AVX2
VNAPI_RX_PATH(vnapi_recv_pkts_avx2, false, true)
VNAPI_RX_PATH(vnapi_recv_pkts_mrg_avx2, true, true)
#endif

/* A chain's cookie: the mbuf, or a header slot tagged with this bit. */
#define VNAPI_TX_COOKIE_SLOT ((uintptr_t)1)

static inline struct vnapi_tx_hdr_slot *
vnapi_tx_slot_get(struct vnapi_txq *txq)
{
	struct vnapi_tx_hdr_slot *slot;

	if (unlikely(txq->slot_free == UINT16_MAX))
		return NULL;
	slot = &txq->slots[txq->slot_free];
	txq->slot_free = slot->next_free;
	txq->slots_used++;
	return slot;
}

static inline void
vnapi_tx_slot_put(struct vnapi_txq *txq, struct vnapi_tx_hdr_slot *slot)
{
	slot->next_free = txq->slot_free;
	slot->m = NULL;
	txq->slot_free = (uint16_t)(slot - txq->slots);
	txq->slots_used--;
}

/*
 * RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE: the application promised refcnt 1 and
 * one pool per queue. A one-segment mbuf (nb_segs 1: next is NULL) goes back
 * to its pool as it is, in runs of the same pool, reading nothing but the
 * first cache line; a chain is freed segment by segment.
 */
static void
vnapi_tx_fast_free(void **cookies, uint16_t n)
{
	struct rte_mempool *mp = NULL;
	uint16_t i, start = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = cookies[i];

		if (unlikely(m->nb_segs != 1 || m->pool != mp)) {
			if (i > start)
				rte_mempool_put_bulk(mp, &cookies[start], i - start);
			if (m->nb_segs != 1) {
				rte_pktmbuf_free(m);
				start = i + 1;
				continue;
			}
			mp = m->pool;
			start = i;
		}
	}
	if (i > start)
		rte_mempool_put_bulk(mp, &cookies[start], i - start);
}

/* Free the mbufs of completed chains; header slots go back to the list. */
static inline void
vnapi_tx_free_cookies(struct vnapi_txq *txq, void **cookies, uint16_t n)
{
	uint16_t i;

	if (likely(txq->slots_used == 0)) {
		if (txq->fast_free)
			vnapi_tx_fast_free(cookies, n);
		else
			rte_pktmbuf_free_bulk((struct rte_mbuf **)cookies, n);
		return;
	}
	for (i = 0; i < n; i++) {
		uintptr_t c = (uintptr_t)cookies[i];

		if (c & VNAPI_TX_COOKIE_SLOT) {
			struct vnapi_tx_hdr_slot *slot = (void *)(c & ~VNAPI_TX_COOKIE_SLOT);
			struct rte_mbuf *m = slot->m;

			vnapi_tx_slot_put(txq, slot);
			rte_pktmbuf_free(m);
		} else {
			rte_pktmbuf_free(cookies[i]);
		}
	}
}

/* Take back what the device finished sending: up to @p max packets. */
static __rte_always_inline uint32_t
vnapi_tx_reclaim_ring(struct vnapi_txq *txq, uint32_t max, enum vnapi_ring ring)
{
	void *done[VNAPI_BURST_MAX];
	uint32_t total = 0;
	uint16_t n;

	do {
		n = vnapi_vq_get_used(txq->vq, done, NULL,
				      (uint16_t)RTE_MIN(max - total, (uint32_t)VNAPI_BURST_MAX), ring);
		if (n > 0)
			vnapi_tx_free_cookies(txq, done, n);
		total += n;
	} while (n == VNAPI_BURST_MAX && total < max);
	return total;
}

static inline uint32_t
vnapi_tx_reclaim_max(struct vnapi_txq *txq, uint32_t max)
{
	return vnapi_tx_reclaim_ring(txq, max, VNAPI_RING_ANY);
}

static inline void
vnapi_tx_reclaim(struct vnapi_txq *txq)
{
	vnapi_tx_reclaim_max(txq, UINT32_MAX);
}

/* rte_eth_tx_done_cleanup: free completed packets; 0 means all of them. */
int
vnapi_tx_done_cleanup(void *tx_queue, uint32_t free_cnt)
{
	struct vnapi_txq *txq = tx_queue;
	int n;

	if (!vnapi_gate_enter(&txq->gate))
		return 0; /* the ring's buffers were reclaimed with the back end */
	n = virtq_is_broken(txq->vq) ? -EIO :
	    (int)vnapi_tx_reclaim_max(txq, free_cnt == 0 ? UINT32_MAX : free_cnt);
	vnapi_gate_leave(&txq->gate);
	return n;
}

/*
 * Zero the virtio-net header in front of the data (no offload is
 * negotiated: an all-zero header is the whole message). Read first and
 * write only if it is not zero yet: a recycled mbuf usually still has the
 * zero header of its last trip, and a store would take that cache line
 * exclusive for nothing.
 */
static inline void
vnapi_tx_zero_hdr(char *hdr, uint16_t hdr_size)
{
	uint64_t head;
	uint32_t tail;

	/* Headers are 10 or 12 bytes: the first 8 and the last 4 cover them
	 * (two fixed-size accesses each way: a memset of a run-time length is
	 * a libc call, ~2% of a forwarding core, where received mbufs come
	 * back with their num_buffers set).
	 */
	memcpy(&head, hdr, sizeof(head));
	memcpy(&tail, hdr + hdr_size - sizeof(tail), sizeof(tail));
	if (unlikely((head | tail) != 0)) {
		head = 0;
		tail = 0;
		memcpy(hdr, &head, sizeof(head));
		memcpy(hdr + hdr_size - sizeof(tail), &tail, sizeof(tail));
	}
}

/* One mbuf we own alone, with room for the header: one descriptor. */
static inline bool
vnapi_tx_simple(const struct rte_mbuf *m, uint16_t hdr_size)
{
	return m->nb_segs == 1 && rte_mbuf_refcnt_read(m) == 1 && RTE_MBUF_DIRECT(m) &&
	       rte_pktmbuf_headroom(m) >= hdr_size;
}

/*
 * Add a chain for a multi-segment, shared or offload mbuf. The header goes
 * into the first segment's headroom when the mbuf is ours alone and has the
 * room; otherwise it is its own first element: the shared zero header, or,
 * for an offload request, a header slot that the chain's cookie names until
 * the device is done. With indirect descriptors negotiated, virtq_add()
 * puts a chain of two or more elements in the buffer's indirect table: one
 * ring descriptor per packet.
 */
static inline int
vnapi_tx_add_chain(struct vnapi_txq *txq, struct rte_mbuf *m)
{
	struct virtq_sg sg[VNAPI_TX_MAX_SEGS + 1];
	const uint16_t hdr_size = txq->hdr_size;
	const bool offload = txq->ol != 0 && (m->ol_flags & VNAPI_TX_OL_MASK) != 0;
	struct vnapi_tx_hdr_slot *slot = NULL;
	struct rte_mbuf *seg = m;
	void *cookie = m;
	uint16_t nsg = 1;
	int ret;

	if (rte_mbuf_refcnt_read(m) == 1 && RTE_MBUF_DIRECT(m) &&
	    rte_pktmbuf_headroom(m) >= hdr_size) {
		char *hdr = rte_pktmbuf_mtod(m, char *) - hdr_size;

		if (offload)
			vnapi_net_hdr_encode((struct vnapi_net_hdr *)hdr, hdr_size, m, txq->ol);
		else
			memset(hdr, 0, hdr_size);
		sg[0].addr = (uintptr_t)hdr;
		sg[0].len = m->data_len + hdr_size;
		seg = m->next;
	} else if (offload) {
		slot = vnapi_tx_slot_get(txq);
		if (unlikely(slot == NULL))
			return -ENOSPC;
		vnapi_net_hdr_encode(&slot->hdr, hdr_size, m, txq->ol);
		slot->m = m;
		cookie = (void *)((uintptr_t)slot | VNAPI_TX_COOKIE_SLOT);
		sg[0].addr = (uintptr_t)&slot->hdr;
		sg[0].len = hdr_size;
	} else {
		sg[0].addr = (uintptr_t)txq->zero_hdr;
		sg[0].len = hdr_size;
	}
	for (; seg != NULL; seg = seg->next) {
		sg[nsg].addr = rte_pktmbuf_mtod(seg, uintptr_t);
		sg[nsg].len = seg->data_len;
		nsg++;
	}
	ret = virtq_add(txq->vq, sg, nsg, 0, cookie);
	if (unlikely(ret == -ENOSPC)) {
		vnapi_tx_reclaim(txq);
		ret = virtq_add(txq->vq, sg, nsg, 0, cookie);
	}
	if (unlikely(ret != 0) && slot != NULL)
		vnapi_tx_slot_put(txq, slot);
	return ret;
}

/* rte_eth_tx_prepare: what the header needs of each packet (vnapi_net_tx_prepare()). */
uint16_t
vnapi_xmit_pkts_prepare(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	const struct vnapi_txq *txq = tx_queue;
	uint16_t i;
	int ret;

	for (i = 0; i < nb_pkts; i++) {
		struct rte_mbuf *m = tx_pkts[i];

		if (unlikely(m->nb_segs > VNAPI_TX_MAX_SEGS)) {
			rte_errno = EINVAL;
			return i;
		}
		ret = vnapi_net_tx_prepare(m, txq->ol);
		if (unlikely(ret != 0)) {
			rte_errno = -ret;
			return i;
		}
	}
	return nb_pkts;
}

/* The header of a one-descriptor packet, in its headroom. */
static __rte_always_inline char *
vnapi_tx_simple_hdr(const struct vnapi_txq *txq, struct rte_mbuf *m, uint16_t hdr_size)
{
	char *hdr = rte_pktmbuf_mtod(m, char *) - hdr_size;

	if (likely((m->ol_flags & VNAPI_TX_OL_MASK) == 0))
		vnapi_tx_zero_hdr(hdr, hdr_size);
	else
		vnapi_net_hdr_encode((struct vnapi_net_hdr *)hdr, hdr_size, m, txq->ol);
	return hdr;
}

/*
 * A run of one-descriptor packets (vnapi_tx_simple()) from @p pkts, at
 * most @p n, through lib/virtq's API, VNAPI_BURST_MAX at a time (the ring
 * publishes them at the kick). When the ring is full, completed buffers are
 * taken back once.
 * @return the packets added; *full when the ring stopped the run.
 */
static uint16_t
vnapi_tx_run_any(struct vnapi_txq *txq, struct rte_mbuf **pkts, uint16_t n, uint64_t *bytes,
		 bool *full)
{
	struct virtq_sg sg[VNAPI_BURST_MAX];
	const uint16_t hdr_size = txq->hdr_size;
	uint16_t nb = 0;

	while (nb < n) {
		uint64_t run_bytes = 0;
		uint16_t k = 0, done, i;

		while (nb + k < n && k < VNAPI_BURST_MAX && vnapi_tx_simple(pkts[nb + k], hdr_size)) {
			struct rte_mbuf *r = pkts[nb + k];

			sg[k].addr = (uintptr_t)vnapi_tx_simple_hdr(txq, r, hdr_size);
			sg[k].len = r->data_len + hdr_size;
			run_bytes += r->pkt_len;
			k++;
		}
		if (k == 0)
			break;
		done = virtq_add_outbufs(txq->vq, sg, (void *const *)&pkts[nb], k);
		if (unlikely(done < k)) {
			vnapi_tx_reclaim_max(txq, UINT32_MAX);
			done += virtq_add_outbufs(txq->vq, &sg[done], (void *const *)&pkts[nb + done],
						  k - done);
		}
		*bytes += run_bytes;
		if (unlikely(done < k)) {
			/* The ring is full: the rest of the run stays the caller's. */
			for (i = done; i < k; i++)
				*bytes -= pkts[nb + i]->pkt_len;
			*full = true;
			return nb + done;
		}
		nb += done;
	}
	return nb;
}

/*
 * The same on an in-order ring: each packet straight into its descriptor
 * (virtq_put_split() / virtq_put_packed()), published in groups as it goes.
 */
static __rte_always_inline uint16_t
vnapi_tx_run_io(struct vnapi_txq *txq, struct rte_mbuf **pkts, uint16_t n, uint64_t *bytes,
		bool *full, enum vnapi_ring ring)
{
	const enum virtq_layout layout = vnapi_ring_layout(ring);
	const uint16_t hdr_size = txq->hdr_size;
	struct virtq_put p;
	uint16_t lim = virtq_put_begin(txq->vq, &p, layout, false);
	uint16_t nb = 0;
	bool retried = false;

	for (;;) {
		lim = RTE_MIN(n, lim);
		for (; nb < lim; nb++) {
			struct rte_mbuf *r = pkts[nb];

			if (!vnapi_tx_simple(r, hdr_size))
				goto out;
			vnapi_vq_put(&p, (uintptr_t)vnapi_tx_simple_hdr(txq, r, hdr_size),
				     r->data_len + hdr_size, r, false, ring);
			*bytes += r->pkt_len;
		}
		if (nb == n || !vnapi_tx_simple(pkts[nb], hdr_size))
			break;
		/* The ring is full: close the cursor (reclaiming reads the
		 * published index), take back completed buffers once. */
		virtq_put_end(txq->vq, &p, layout);
		if (retried || vnapi_tx_reclaim_ring(txq, UINT32_MAX, ring) == 0) {
			*full = true;
			return nb;
		}
		retried = true;
		lim = nb + virtq_put_begin(txq->vq, &p, layout, false);
	}
out:
	virtq_put_end(txq->vq, &p, layout);
	return nb;
}

/*
 * Transmit. The virtio-net header is written into the mbuf's headroom when
 * we own the mbuf alone, so one descriptor carries header and data; runs of
 * such packets go in together (vnapi_tx_run_any() / vnapi_tx_run_io()). A
 * packet with no offload request gets the all-zero header (read first,
 * written only if not zero yet); one with a request gets its fields
 * (vnapi_net_hdr_encode()). Other packets get a chain (see
 * vnapi_tx_add_chain()).
 */
static __rte_always_inline uint16_t
vnapi_xmit_body(struct vnapi_txq *txq, struct rte_mbuf **tx_pkts, uint16_t nb_pkts,
		enum vnapi_ring ring)
{
	const uint16_t hdr_size = txq->hdr_size;
	uint16_t nb_tx = 0, dropped = 0;
	uint64_t bytes = 0;

	/*
	 * Take back completed buffers when fewer than tx_free_thresh
	 * descriptors (or fewer than the burst) are free. The default keeps
	 * few in flight: mbufs recycled soon stay hot in the caches, which
	 * outweighs reading the back end's cache line on every burst. On an
	 * in-order packed ring, at most what the burst needs and at least
	 * VNAPI_TX_FREE_THRESH: taking the device's batch and stopping there
	 * leaves alone the descriptor after it, whose cache line the device
	 * writes next (its next used descriptor). A split ring reads the used
	 * index once whatever it takes, and takes all.
	 */
	if (virtq_num_free_inline(txq->vq) < RTE_MAX(txq->free_thresh, nb_pkts))
		vnapi_tx_reclaim_ring(txq, ring == VNAPI_RING_PACKED_IO ?
					   RTE_MAX(nb_pkts, VNAPI_TX_FREE_THRESH) : UINT32_MAX,
				      ring);
	while (nb_tx < nb_pkts) {
		struct rte_mbuf *m = tx_pkts[nb_tx];

		if (vnapi_tx_simple(m, hdr_size)) {
			bool full = false;

			if (ring == VNAPI_RING_ANY)
				nb_tx += vnapi_tx_run_any(txq, &tx_pkts[nb_tx], nb_pkts - nb_tx,
							  &bytes, &full);
			else
				nb_tx += vnapi_tx_run_io(txq, &tx_pkts[nb_tx], nb_pkts - nb_tx,
							 &bytes, &full, ring);
			if (unlikely(full)) {
				txq->stats.full++;
				break;
			}
			continue;
		}
		if (unlikely(m->nb_segs > VNAPI_TX_MAX_SEGS || m->nb_segs >= txq->nb_desc)) {
			/* Can never fit: consumed and counted as an error, as
			 * other PMDs do. */
			VNAPI_DP_LOG(DEBUG, "port %u tx queue %u: %u segments, at most %u: dropped",
				     txq->port_id, txq->queue_id, m->nb_segs,
				     RTE_MIN((unsigned int)VNAPI_TX_MAX_SEGS, txq->nb_desc - 1u));
			dropped++;
			rte_pktmbuf_free(m);
			nb_tx++;
			continue;
		}
		if (vnapi_tx_add_chain(txq, m) != 0) {
			txq->stats.full++;
			break;
		}
		bytes += m->pkt_len;
		nb_tx++;
	}
	if (unlikely(nb_tx == 0) && virtq_is_broken_inline(txq->vq) && !txq->broken_reported) {
		txq->broken_reported = true;
		vnapi_link_queue_broken(txq->port_id, "tx", txq->queue_id, txq->vq);
	}
	txq->stats.packets += nb_tx - dropped;
	txq->stats.errors += dropped;
	txq->stats.bytes += bytes;
	if (virtq_kick_prepare_inline(txq->vq))
		vnapi_notify(txq->port_id, txq->vring, &txq->stats);
	return nb_tx;
}

static __rte_noinline uint16_t
vnapi_xmit_any(struct vnapi_txq *txq, struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	return vnapi_xmit_body(txq, tx_pkts, nb_pkts, VNAPI_RING_ANY);
}

/* The tx burst of one ring code, the gate entered around it. */
static __rte_always_inline uint16_t
vnapi_xmit_ring(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts,
		enum vnapi_ring ring)
{
	struct vnapi_txq *txq = tx_queue;
	uint16_t nb_tx;

	if (unlikely(!vnapi_gate_enter(&txq->gate))) {
		/* No back end serves the ring: refused, the caller keeps them. */
		txq->stats.refused += nb_pkts;
		return 0;
	}
	if (ring != VNAPI_RING_ANY && likely(vnapi_ring_ok(txq->vq, ring)))
		nb_tx = vnapi_xmit_body(txq, tx_pkts, nb_pkts, ring);
	else
		nb_tx = vnapi_xmit_any(txq, tx_pkts, nb_pkts);
	vnapi_gate_leave(&txq->gate);
	return nb_tx;
}

uint16_t
vnapi_xmit_pkts(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	return vnapi_xmit_ring(tx_queue, tx_pkts, nb_pkts, VNAPI_RING_ANY);
}

uint16_t
vnapi_xmit_pkts_split(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	return vnapi_xmit_ring(tx_queue, tx_pkts, nb_pkts, VNAPI_RING_SPLIT_IO);
}

uint16_t
vnapi_xmit_pkts_packed(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	return vnapi_xmit_ring(tx_queue, tx_pkts, nb_pkts, VNAPI_RING_PACKED_IO);
}

/* Queue stopped: free every buffer the ring still holds. */
void
vnapi_rxq_flush(struct vnapi_rxq *rxq)
{
	void *m;

	while ((m = virtq_detach_unused(rxq->vq)) != NULL) {
		rte_mbuf_raw_free(m); /* still as the pool gave it */
		rxq->stats.reclaimed++;
	}
	if (rxq->mrg_head != NULL) {
		rte_pktmbuf_free(rxq->mrg_head);
		rxq->mrg_head = NULL;
		rxq->mrg_tail = NULL;
		rxq->mrg_left = 0;
	}
}

/*
 * The device no longer uses the ring (stopped, or gone): what it consumed
 * was sent and is only freed; what it did not is freed unsent and counted
 * (reclaimed; the stop path also counts it as dropped_at_stop).
 */
void
vnapi_txq_flush(struct vnapi_txq *txq)
{
	void *c;

	vnapi_tx_reclaim(txq);
	while ((c = virtq_detach_unused(txq->vq)) != NULL) {
		vnapi_tx_free_cookies(txq, &c, 1);
		txq->stats.reclaimed++;
	}
}

/*
 * Stop (the queue's gate closed): take back what the device consumed.
 * @return true once the ring holds nothing the device has still to consume,
 * or the queue is broken (nothing more will come back from it).
 */
bool
vnapi_txq_drained(struct vnapi_txq *txq)
{
	vnapi_tx_reclaim(txq);
	return virtq_num_free(txq->vq) == txq->nb_desc || virtq_is_broken(txq->vq);
}

/* ------------------------------------------------ datapath-side queries */

vnapi_rxq_count_t
vnapi_rx_queue_count(void *rx_queue)
{
	struct vnapi_rxq *rxq = rx_queue;

	return virtq_used_count(rxq->vq);
}

int
vnapi_rx_descriptor_status(void *rx_queue, uint16_t offset)
{
	struct vnapi_rxq *rxq = rx_queue;
	uint16_t posted = rxq->nb_desc - virtq_num_free(rxq->vq);

	if (offset >= rxq->nb_desc)
		return -EINVAL;
	if (offset < virtq_used_count(rxq->vq))
		return RTE_ETH_RX_DESC_DONE;
	if (offset < posted)
		return RTE_ETH_RX_DESC_AVAIL;
	return RTE_ETH_RX_DESC_UNAVAIL;
}

int
vnapi_tx_descriptor_status(void *tx_queue, uint16_t offset)
{
	struct vnapi_txq *txq = tx_queue;
	uint16_t in_flight = txq->nb_desc - virtq_num_free(txq->vq);
	uint16_t done = virtq_used_count(txq->vq);

	if (offset >= txq->nb_desc)
		return -EINVAL;
	if (offset < in_flight - done)
		return RTE_ETH_TX_DESC_FULL;
	return RTE_ETH_TX_DESC_DONE;
}

static const uint32_t vnapi_ptypes[] = {
	RTE_PTYPE_L2_ETHER,
	RTE_PTYPE_L2_ETHER_VLAN,
	RTE_PTYPE_L3_IPV4,
	RTE_PTYPE_L3_IPV4_EXT,
	RTE_PTYPE_L3_IPV6,
	RTE_PTYPE_L3_IPV6_EXT,
	RTE_PTYPE_L4_TCP,
	RTE_PTYPE_L4_UDP,
	RTE_PTYPE_L4_FRAG,
	RTE_PTYPE_UNKNOWN,
};

const uint32_t *
vnapi_dev_supported_ptypes_get(struct rte_eth_dev *dev, size_t *no_of_elements)
{
	struct vnapi_hw *hw = dev->data->dev_private;

	if (!hw->parse_ptype)
		return NULL;
	*no_of_elements = RTE_DIM(vnapi_ptypes);
	return vnapi_ptypes;
}

/* Any mask turns software parsing on; RTE_PTYPE_UNKNOWN (0) turns it off. */
int
vnapi_dev_ptypes_set(struct rte_eth_dev *dev, uint32_t ptype_mask)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	uint16_t q;

	hw->parse_ptype = ptype_mask != 0;
	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			rxq->parse_ptype = hw->parse_ptype;
	}
	return 0;
}

/* rte_power_monitor: sleep while the watched ring word shows no completion. */
static int
vnapi_monitor_cb(const uint64_t value, const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	return (value & opaque[1]) != opaque[0] ? -1 : 0;
}

int
vnapi_get_monitor_addr(void *rx_queue, struct rte_power_monitor_cond *pmc)
{
	struct vnapi_rxq *rxq = rx_queue;
	uint64_t expected, mask;
	uint8_t size;

	pmc->addr = virtq_monitor_addr(rxq->vq, &expected, &mask, &size);
	if (pmc->addr == NULL)
		return -ENOTSUP;
	pmc->opaque[0] = expected;
	pmc->opaque[1] = mask;
	pmc->size = size;
	pmc->fn = vnapi_monitor_cb;
	return 0;
}
