/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"
#include "vnapi_stats.h"

/*
 * Queue @p q's counters into one direction of struct rte_eth_stats: added
 * to the port totals, and copied to the per-queue slots of the first
 * RTE_ETHDEV_QUEUE_STAT_CNTRS queues (@p q_packets NULL: no per-queue
 * slots; @p q_errors NULL: there are none, tx).
 */
static void
vnapi_stats_add(const struct vnapi_queue_stats *qs, uint16_t q, uint64_t *packets,
		uint64_t *bytes, uint64_t *errors, uint64_t *q_packets, uint64_t *q_bytes,
		uint64_t *q_errors)
{
	*packets += qs->packets;
	*bytes += qs->bytes;
	*errors += qs->errors;
	if (q_packets == NULL || q >= RTE_ETHDEV_QUEUE_STAT_CNTRS)
		return;
	q_packets[q] = qs->packets;
	q_bytes[q] = qs->bytes;
	if (q_errors != NULL)
		q_errors[q] = qs->errors;
}

int
vnapi_dev_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *st, vnapi_eth_qstats *qs)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		const struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			vnapi_stats_add(&rxq->stats, q, &st->ipackets, &st->ibytes, &st->ierrors,
					qs != NULL ? qs->q_ipackets : NULL,
					qs != NULL ? qs->q_ibytes : NULL,
					qs != NULL ? qs->q_errors : NULL);
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		const struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			vnapi_stats_add(&txq->stats, q, &st->opackets, &st->obytes, &st->oerrors,
					qs != NULL ? qs->q_opackets : NULL,
					qs != NULL ? qs->q_obytes : NULL, NULL);
	}
	st->rx_nombuf = dev->data->rx_mbuf_alloc_failed;
	return 0;
}

int
vnapi_dev_stats_reset(struct rte_eth_dev *dev)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL) {
			memset(&rxq->stats, 0, sizeof(rxq->stats));
			memset(&rxq->istats, 0, sizeof(rxq->istats));
		}
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			memset(&txq->stats, 0, sizeof(txq->stats));
	}
	return 0;
}

/* xstats: per queue, {name, where, offset}. */
enum vnapi_xstat_src {
	VNAPI_XS_QUEUE,  /**< struct vnapi_queue_stats */
	VNAPI_XS_VIRTQ,  /**< struct virtq_stats (lib/virtq) */
	VNAPI_XS_INTR,   /**< struct vnapi_intr_stats (rx only) */
	VNAPI_XS_PPN,    /**< derived: wakeup_packets / notifications */
};

struct vnapi_xstat {
	const char *name;
	enum vnapi_xstat_src src;
	size_t offset;
};

#define VNAPI_QSTAT(n, f) { n, VNAPI_XS_QUEUE, offsetof(struct vnapi_queue_stats, f) }
#define VNAPI_VQSTAT(n, f) { n, VNAPI_XS_VIRTQ, offsetof(struct virtq_stats, f) }
#define VNAPI_ISTAT(n, f) { n, VNAPI_XS_INTR, offsetof(struct vnapi_intr_stats, f) }

static const struct vnapi_xstat vnapi_rxq_xstats[] = {
	VNAPI_QSTAT("good_packets", packets),
	VNAPI_QSTAT("good_bytes", bytes),
	VNAPI_QSTAT("errors", errors),
	VNAPI_QSTAT("nombuf", nombuf),
	VNAPI_QSTAT("bad_hdr", bad_hdr),
	VNAPI_QSTAT("kicks", kicks),
	VNAPI_VQSTAT("kicks_suppressed", kicks_suppressed),
	VNAPI_QSTAT("kick_errors", kick_errors),
	VNAPI_VQSTAT("bad_used", bad_used),
	VNAPI_QSTAT("reclaimed", reclaimed),
	VNAPI_ISTAT("intr_arms", arms),
	VNAPI_ISTAT("intr_rescues", rescues),
	VNAPI_ISTAT("intr_notifications", notifications),
	VNAPI_ISTAT("intr_wakeups", wakeups),
	VNAPI_ISTAT("intr_wakeup_packets", wakeup_packets),
	VNAPI_ISTAT("intr_spurious_wakeups", spurious),
	VNAPI_ISTAT("intr_unnotified_work", unnotified),
	VNAPI_ISTAT("intr_late_notifications", late),
	VNAPI_ISTAT("intr_raced_disarms", raced),
	VNAPI_ISTAT("intr_rescues_unannounced", rescues_unannounced),
	VNAPI_ISTAT("intr_awake_packets", awake_packets),
	{ "intr_packets_per_notification", VNAPI_XS_PPN, 0 },
};

static const struct vnapi_xstat vnapi_txq_xstats[] = {
	VNAPI_QSTAT("good_packets", packets),
	VNAPI_QSTAT("good_bytes", bytes),
	VNAPI_QSTAT("errors", errors),
	VNAPI_QSTAT("ring_full", full),
	VNAPI_QSTAT("kicks", kicks),
	VNAPI_VQSTAT("kicks_suppressed", kicks_suppressed),
	VNAPI_QSTAT("kick_errors", kick_errors),
	VNAPI_VQSTAT("bad_used", bad_used),
	VNAPI_VQSTAT("indirect", indirect),
	VNAPI_QSTAT("refused", refused),
	VNAPI_QSTAT("reclaimed", reclaimed),
	VNAPI_QSTAT("dropped_at_stop", dropped_at_stop),
};

/* Port-wide: {name, offset in struct vnapi_hw}. */
static const struct {
	const char *name;
	size_t offset;
} vnapi_port_xstats[] = {
	{ "reconnects", offsetof(struct vnapi_hw, reconnects) },
	{ "ctrl_protocol_violations", offsetof(struct vnapi_hw, ctrl_violations) },
	{ "tx_drain_looks", offsetof(struct vnapi_hw, drain.looks) },
	{ "tx_drain_waited_us", offsetof(struct vnapi_hw, drain.waited_us) },
	{ "tx_drain_prev_look_us", offsetof(struct vnapi_hw, drain.prev_look_us) },
	{ "tx_drain_left", offsetof(struct vnapi_hw, drain.left) },
};

static unsigned int
vnapi_xstats_count(const struct rte_eth_dev *dev)
{
	return RTE_DIM(vnapi_port_xstats) +
	       dev->data->nb_rx_queues * RTE_DIM(vnapi_rxq_xstats) +
	       dev->data->nb_tx_queues * RTE_DIM(vnapi_txq_xstats);
}

int
vnapi_dev_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
			   unsigned int limit)
{
	unsigned int n = vnapi_xstats_count(dev), i = 0, k;
	uint16_t q;

	if (names == NULL || limit < n)
		return n;
	for (k = 0; k < RTE_DIM(vnapi_port_xstats); k++)
		snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "%s",
			 vnapi_port_xstats[k].name);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		for (k = 0; k < RTE_DIM(vnapi_rxq_xstats); k++)
			snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "rx_q%u_%s", q,
				 vnapi_rxq_xstats[k].name);
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		for (k = 0; k < RTE_DIM(vnapi_txq_xstats); k++)
			snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "tx_q%u_%s", q,
				 vnapi_txq_xstats[k].name);
	return n;
}

static uint64_t
vnapi_xstat_read(const struct vnapi_xstat *x, const struct vnapi_queue_stats *qs,
		 const struct virtq *vq, const struct vnapi_intr_stats *is)
{
	const void *base = qs;

	switch (x->src) {
	case VNAPI_XS_QUEUE:
		break;
	case VNAPI_XS_VIRTQ:
		base = virtq_stats(vq);
		break;
	case VNAPI_XS_INTR:
		base = is;
		break;
	case VNAPI_XS_PPN:
		return is->notifications ? is->wakeup_packets / is->notifications : 0;
	}
	return *(const uint64_t *)RTE_PTR_ADD(base, x->offset);
}

int
vnapi_dev_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int limit)
{
	unsigned int n = vnapi_xstats_count(dev), i = 0, k;
	uint16_t q;

	if (xs == NULL || limit < n)
		return n;
	for (k = 0; k < RTE_DIM(vnapi_port_xstats); k++, i++) {
		xs[i].id = i;
		xs[i].value = *(const uint64_t *)RTE_PTR_ADD(dev->data->dev_private,
							    vnapi_port_xstats[k].offset);
	}
	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		const struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		for (k = 0; k < RTE_DIM(vnapi_rxq_xstats); k++, i++) {
			xs[i].id = i;
			xs[i].value = rxq ? vnapi_xstat_read(&vnapi_rxq_xstats[k], &rxq->stats,
							     rxq->vq, &rxq->istats) : 0;
		}
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		const struct vnapi_txq *txq = dev->data->tx_queues[q];

		for (k = 0; k < RTE_DIM(vnapi_txq_xstats); k++, i++) {
			xs[i].id = i;
			xs[i].value = txq ? vnapi_xstat_read(&vnapi_txq_xstats[k], &txq->stats,
							     txq->vq, NULL) : 0;
		}
	}
	return n;
}
