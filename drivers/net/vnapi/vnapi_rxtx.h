/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_RXTX_H_
#define _VNAPI_RXTX_H_

/**
 * @file
 * @internal
 * The datapath: rx/tx bursts, buffer refill and flush, and every
 * datapath-side query (queue count, descriptor status, packet types, the
 * power-monitor address). Calls lib/virtq and reports faults to
 * vnapi_link.h; nothing else of the driver.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_power_intrinsics.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"

/** Choose the rx/tx burst functions for the negotiated features and log
 * them; called at start (and by a secondary process at probe). */
void vnapi_rxtx_select(struct rte_eth_dev *dev);

/*
 * The bursts. NAME works on any ring through lib/virtq's API; NAME_split and
 * NAME_packed inline lib/virtq's in-order code for one layout
 * (virtq_burst.h) and fall back to NAME's code on any other queue.
 */
uint16_t vnapi_recv_pkts(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_split(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_packed(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_mrg(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_mrg_split(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_mrg_packed(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_xmit_pkts(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts);
uint16_t vnapi_xmit_pkts_split(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts);
uint16_t vnapi_xmit_pkts_packed(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts);
uint16_t vnapi_xmit_pkts_prepare(void *tx_queue, struct rte_mbuf **tx_pkts, uint16_t nb_pkts);
int vnapi_tx_done_cleanup(void *tx_queue, uint32_t free_cnt);

/**
 * The rearm_data word of a received mbuf: data_off the standard headroom,
 * refcnt 1, nb_segs 1, @p port (built through a scratch mbuf, so the layout
 * is the headers' own).
 */
static inline uint64_t
vnapi_rx_rearm_word(uint16_t port)
{
	struct rte_mbuf m;
	uint64_t w;

	memset(&m, 0, sizeof(m));
	m.data_off = RTE_PKTMBUF_HEADROOM;
	rte_mbuf_refcnt_set(&m, 1);
	m.nb_segs = 1;
	m.port = port;
	memcpy(&w, &m.rearm_data, sizeof(w));
	return w;
}

int vnapi_rx_burst_mode_get(struct rte_eth_dev *dev, uint16_t queue_id,
			    struct rte_eth_burst_mode *mode);
int vnapi_tx_burst_mode_get(struct rte_eth_dev *dev, uint16_t queue_id,
			    struct rte_eth_burst_mode *mode);

#ifdef VNAPI_RX_AVX2
/* The rx bursts with the AVX2 part (vnapi_rxtx_avx2.h). */
uint16_t vnapi_recv_pkts_avx2(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_avx2_split(void *rx_queue, struct rte_mbuf **rx_pkts,
				    uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_avx2_packed(void *rx_queue, struct rte_mbuf **rx_pkts,
				     uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_mrg_avx2(void *rx_queue, struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_mrg_avx2_split(void *rx_queue, struct rte_mbuf **rx_pkts,
					uint16_t nb_pkts);
uint16_t vnapi_recv_pkts_mrg_avx2_packed(void *rx_queue, struct rte_mbuf **rx_pkts,
					 uint16_t nb_pkts);
#endif

/** Post fresh mbufs to every free rx descriptor. @return how many. */
int vnapi_rxq_refill(struct vnapi_rxq *rxq);
/** Free every buffer the rings hold (the device no longer uses them). */
void vnapi_rxq_flush(struct vnapi_rxq *rxq);
void vnapi_txq_flush(struct vnapi_txq *txq);
/** Stop, gate closed: reclaim what the device consumed; true once nothing
 * is left for it to consume (or the queue is broken). */
bool vnapi_txq_drained(struct vnapi_txq *txq);

vnapi_rxq_count_t vnapi_rx_queue_count(void *rx_queue);
int vnapi_rx_descriptor_status(void *rx_queue, uint16_t offset);
int vnapi_tx_descriptor_status(void *tx_queue, uint16_t offset);
const uint32_t *vnapi_dev_supported_ptypes_get(struct rte_eth_dev *dev, size_t *no_of_elements);
int vnapi_dev_ptypes_set(struct rte_eth_dev *dev, uint32_t ptype_mask);
int vnapi_get_monitor_addr(void *rx_queue, struct rte_power_monitor_cond *pmc);

#endif /* _VNAPI_RXTX_H_ */
