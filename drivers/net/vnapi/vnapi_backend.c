/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The device layer: negotiation, eventfds, ring start and stop, through the
 * device ops of this process (proc->ops), after the session's connect
 * where the device has one (proc->session: vhost-user).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>

#include <ethdev_driver.h>

#include "vnapi_backend.h"
#include "vnapi_dev.h"
#include "vnapi_intr.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_rxtx.h"
#include "vnapi_transport.h"

void
vnapi_backend_log_features(const struct rte_eth_dev *dev, const char *when)
{
	const struct vnapi_hw *hw = dev->data->dev_private;
	const struct vnapi_proc *proc = dev->process_private;
	char buf[256];
	size_t off = 0;
	unsigned int bit;

	buf[0] = '\0';
	for (bit = 0; bit < 64; bit++) {
		if (!((hw->features >> bit) & 1))
			continue;
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s", off ? " " : "",
				vnapi_feature_name(bit) ? vnapi_feature_name(bit) : "?");
		if (off >= sizeof(buf))
			break;
	}
	VNAPI_INIT_LOG(INFO, "%s: %s: %sfeatures 0x%" PRIx64 " (%s), protocol features 0x%" PRIx64
		       ", header %u bytes, device allows %u queue pairs",
		       dev->data->name, proc->ops->name, when, hw->features, buf,
		       hw->protocol_features, hw->hdr_size, hw->max_queue_pairs);
}

/* What the devargs ask for (features taken only if offered included). */
static uint64_t
vnapi_backend_want(const struct vnapi_params *p)
{
	uint64_t want;

	want = (1ULL << VIRTIO_F_VERSION_1) |
	       (1ULL << VIRTIO_NET_F_MAC) |
	       (1ULL << VIRTIO_NET_F_STATUS) |
	       (1ULL << VHOST_USER_F_PROTOCOL_FEATURES);
	if (p->mrg_rxbuf)
		want |= 1ULL << VIRTIO_NET_F_MRG_RXBUF;
	if (p->event_idx)
		want |= 1ULL << VIRTIO_F_RING_EVENT_IDX;
	if (p->queues > 1)
		want |= 1ULL << VIRTIO_NET_F_MQ;
	if (p->packed_vq)
		want |= 1ULL << VIRTIO_F_RING_PACKED;
	if (p->in_order)
		want |= 1ULL << VIRTIO_F_IN_ORDER;   /* taken only if offered */
	if (p->indirect)
		want |= 1ULL << VIRTIO_F_RING_INDIRECT_DESC;
	want |= vnapi_net_offload_want(p->tx_csum, p->tso, p->rx_csum, p->lro && p->mrg_rxbuf);
	return want;
}

/* The features the rings' memory and the application's configuration
 * depend on: fixed once the port is configured. */
#define VNAPI_RING_FEATURES ((1ULL << VIRTIO_F_VERSION_1) | \
			     (1ULL << VIRTIO_NET_F_MRG_RXBUF) | \
			     (1ULL << VIRTIO_F_RING_PACKED))
/* Features only lib/virtq's behaviour depends on: taken anew from each back
 * end, the rings laid out for them at the next start (vnapi_vq_relayout). */
#define VNAPI_VQ_FEATURES ((1ULL << VIRTIO_F_RING_EVENT_IDX) | \
			   (1ULL << VIRTIO_F_IN_ORDER) | \
			   (1ULL << VIRTIO_F_RING_INDIRECT_DESC))

static void
vnapi_backend_set_hdr_size(struct vnapi_hw *hw)
{
	hw->hdr_size = (vnapi_has_feature(hw, VIRTIO_F_VERSION_1) ||
			vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF)) ?
		       sizeof(struct vnapi_net_hdr) : sizeof(struct vnapi_net_hdr) - 2;
}

void
vnapi_backend_assume(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;

	hw->features = vnapi_net_offload_valid(vnapi_backend_want(&hw->params));
	hw->features_usable = hw->features;
	hw->features_offered = 0;
	hw->max_queue_pairs = hw->params.queues;
	vnapi_backend_set_hdr_size(hw);
}

/* A back end that comes after configure must serve the rings as laid out. */
static int
vnapi_backend_check_fixed(struct rte_eth_dev *dev, uint64_t offered, uint16_t max_qp)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const struct vnapi_proc *proc = dev->process_private;
	/* The ring features, and the offloads the application enabled
	 * (hw->ol_required): the others are taken anew from each back end. */
	uint64_t need = (hw->features & VNAPI_RING_FEATURES) | hw->ol_required;
	uint64_t missing;
	char buf[128];
	size_t off = 0;
	unsigned int bit;

	if (hw->nb_qp > 1)
		need |= 1ULL << VIRTIO_NET_F_MQ;
	missing = need & ~offered;
	if (missing == 0 && hw->nb_qp <= max_qp)
		return 0;
	buf[0] = '\0';
	for (bit = 0; bit < 64 && off < sizeof(buf); bit++)
		if ((missing >> bit) & 1)
			off += snprintf(buf + off, sizeof(buf) - off, " %s",
					vnapi_feature_name(bit) ? vnapi_feature_name(bit) : "?");
	VNAPI_INIT_LOG(ERR, "%s: refused the back end at %s: the port is configured with features it no longer offers (missing 0x%" PRIx64 ":%s; %u queue pairs, it allows %u); reconfigure the port or restore the back end",
		       dev->data->name, proc->peer, missing, buf, hw->nb_qp, max_qp);
	return -ENOTSUP;
}

int
vnapi_backend_connect(struct rte_eth_dev *dev, unsigned int wait_ms)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const struct vnapi_proc *proc = dev->process_private;
	const struct vnapi_params *p = &hw->params;
	uint64_t offered = 0, want;
	uint16_t max_qp = 1, q;
	int ret;

	/* The transport logs its own failures (with the request and the path). */
	if (proc->session != NULL) {
		ret = proc->session->connect(dev, wait_ms);
		if (ret != 0)
			return ret;
	}
	ret = proc->ops->features_get(dev, &offered, &max_qp);
	if (ret != 0)
		goto err_release;

	/* The transport's own needs (vhost-user: PROTOCOL_FEATURES; virtio-pci:
	 * ACCESS_PLATFORM) whenever offered, whatever the devargs say. */
	want = vnapi_backend_want(p) | proc->ops->transport_features;
	if (want & (1ULL << VIRTIO_NET_F_MQ))
		want |= proc->ops->mq_features;
	if (p->packed_vq && (want & proc->ops->packed_excluded) != 0) {
		VNAPI_INIT_LOG(INFO, "%s: %s: packed ring without EVENT_IDX on this transport",
			       dev->data->name, proc->ops->name);
		want &= ~proc->ops->packed_excluded;
	}
	if (hw->features_fixed) {
		ret = vnapi_backend_check_fixed(dev, offered, max_qp);
		if (ret != 0)
			goto err_release;
		hw->max_queue_pairs = max_qp;
		hw->features_offered = offered;
		hw->features = vnapi_net_offload_valid((hw->features & VNAPI_RING_FEATURES) |
						       (offered & want & ~VNAPI_RING_FEATURES &
							~hw->ol_unwanted));
		/* Indirect tables exist only if the tx rings were set up with them. */
		for (q = 0; q < dev->data->nb_tx_queues; q++) {
			const struct vnapi_txq *txq = dev->data->tx_queues[q];

			if (txq != NULL && txq->indirect_alloc == 0)
				hw->features &= ~(1ULL << VIRTIO_F_RING_INDIRECT_DESC);
		}
		vnapi_connected_set(hw, true);
		return 0;
	}

	if (p->packed_vq && !(offered & (1ULL << VIRTIO_F_RING_PACKED))) {
		VNAPI_INIT_LOG(ERR, "%s: packed_vq=1 but the back end at %s does not offer packed virtqueues; use packed_vq=0",
			       dev->data->name, proc->peer);
		ret = -ENOTSUP;
		goto err_release;
	}
	if (p->queues > 1 && !(offered & (1ULL << VIRTIO_NET_F_MQ))) {
		VNAPI_INIT_LOG(ERR, "%s: queues=%u needs multiqueue, which the back end at %s does not offer; use queues=1",
			       dev->data->name, p->queues, proc->peer);
		ret = -ENOTSUP;
		goto err_release;
	}
	if (p->queues > max_qp) {
		VNAPI_INIT_LOG(ERR, "%s: queues=%u but the back end at %s allows %u queue pairs",
			       dev->data->name, p->queues, proc->peer, max_qp);
		ret = -ENOTSUP;
		goto err_release;
	}

	hw->max_queue_pairs = max_qp;
	hw->features_offered = offered;
	hw->features = vnapi_net_offload_valid(offered & want);
	hw->features_usable = hw->features;
	vnapi_backend_set_hdr_size(hw);
	vnapi_connected_set(hw, true);
	return 0;

err_release:
	proc->ops->release(dev);
	return ret;
}

void
vnapi_backend_disconnect(struct rte_eth_dev *dev)
{
	const struct vnapi_proc *proc = dev->process_private;

	proc->ops->release(dev);
	vnapi_connected_set(dev->data->dev_private, false);
}

bool
vnapi_backend_session_open(const struct rte_eth_dev *dev)
{
	const struct vnapi_proc *proc = dev->process_private;

	return proc->session == NULL || proc->session->is_open(dev);
}

int
vnapi_backend_eventfds_open(struct rte_eth_dev *dev, uint16_t nb_vrings)
{
	struct vnapi_proc *proc = dev->process_private;
	uint16_t i;
	int err;

	for (i = 0; i < nb_vrings; i++) {
		if (proc->kickfd[i] < 0)
			proc->kickfd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (proc->kickfd[i] >= 0 && proc->callfd[i] < 0)
			proc->callfd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (proc->kickfd[i] < 0 || proc->callfd[i] < 0) {
			err = errno; /* before the log call can change it */
			VNAPI_INIT_LOG(ERR, "%s: eventfd: %s", dev->data->name, strerror(err));
			return -err;
		}
	}
	return 0;
}

void
vnapi_backend_eventfds_close(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	unsigned int i;

	for (i = 0; i < VNAPI_MAX_VRINGS; i++) {
		if (proc->kickfd[i] >= 0)
			close(proc->kickfd[i]);
		if (proc->callfd[i] >= 0)
			close(proc->callfd[i]);
		proc->kickfd[i] = -1;
		proc->callfd[i] = -1;
	}
}

/* What the rings' control path reaches of the queue behind one ring. */
struct vnapi_vring_ref {
	struct virtq *vq;
	void *ring;                 /**< the ring's memory */
	bool *broken_reported;
	struct vnapi_rxq *rxq;      /**< the queue: one of these two */
	struct vnapi_txq *txq;
};

/*
 * The queue behind ring @p vring (rx queue q is 2q, tx queue q is 2q + 1):
 * false when the application set up no such queue. Queue counts may differ
 * (e.g. one rx and two tx queues), and a device needs only the rings of
 * pair 0 to be ready.
 */
static bool
vnapi_vring_ref(const struct rte_eth_dev *dev, uint16_t vring, struct vnapi_vring_ref *r)
{
	const uint16_t q = vring / 2;

	memset(r, 0, sizeof(*r));
	if (vring % 2 == 0 && q < dev->data->nb_rx_queues && dev->data->rx_queues[q] != NULL) {
		r->rxq = dev->data->rx_queues[q];
		r->vq = r->rxq->vq;
		r->ring = r->rxq->ring;
		r->broken_reported = &r->rxq->broken_reported;
	} else if (vring % 2 == 1 && q < dev->data->nb_tx_queues &&
		   dev->data->tx_queues[q] != NULL) {
		r->txq = dev->data->tx_queues[q];
		r->vq = r->txq->vq;
		r->ring = r->txq->ring;
		r->broken_reported = &r->txq->broken_reported;
	}
	return r->vq != NULL;
}

/* The virtqueue behind ring @p vring, NULL when its queue is not set up. */
static struct virtq *
vnapi_vring_vq(const struct rte_eth_dev *dev, uint16_t vring)
{
	struct vnapi_vring_ref r;

	return vnapi_vring_ref(dev, vring, &r) ? r.vq : NULL;
}

/* The rings a set-up queue may be behind: 2 * the larger queue count. */
static uint16_t
vnapi_vring_count(const struct rte_eth_dev *dev)
{
	return 2 * RTE_MAX(dev->data->nb_rx_queues, dev->data->nb_tx_queues);
}

/*
 * Lay empty rings out for the negotiated EVENT_IDX / IN_ORDER / INDIRECT_DESC
 * (they may differ from one back end to the next; the memory was sized at
 * queue setup, indirect tables included when they were negotiated then: rx
 * rings never have them).
 */
static void
vnapi_vq_relayout(struct rte_eth_dev *dev)
{
	const struct vnapi_hw *hw = dev->data->dev_private;
	const bool event_idx = vnapi_has_feature(hw, VIRTIO_F_RING_EVENT_IDX);
	const bool in_order = vnapi_has_feature(hw, VIRTIO_F_IN_ORDER);
	const bool indirect = vnapi_has_feature(hw, VIRTIO_F_RING_INDIRECT_DESC);
	struct vnapi_vring_ref r;
	struct virtq_params vp;
	uint16_t v, indirect_max;

	for (v = 0; v < vnapi_vring_count(dev); v++) {
		if (!vnapi_vring_ref(dev, v, &r))
			continue;
		indirect_max = r.txq != NULL && indirect ? r.txq->indirect_alloc : 0;
		vp = *virtq_params(r.vq);
		if (vp.event_idx == event_idx && vp.in_order == in_order &&
		    vp.indirect_max == indirect_max)
			continue;
		vp.event_idx = event_idx;
		vp.in_order = in_order;
		vp.indirect_max = indirect_max;
		virtq_init(r.vq, &vp, r.ring);
	}
}

/* Free every buffer the rings hold and lay the rings out anew. */
void
vnapi_backend_flush(struct rte_eth_dev *dev)
{
	struct vnapi_vring_ref r;
	struct virtq_params vp;
	uint16_t v;

	for (v = 0; v < vnapi_vring_count(dev); v++) {
		if (!vnapi_vring_ref(dev, v, &r))
			continue;
		if (r.rxq != NULL) {
			vnapi_rxq_flush(r.rxq);
			vnapi_intr_rings_restarted(r.rxq);
		} else {
			vnapi_txq_flush(r.txq);
		}
		vp = *virtq_params(r.vq); /* the parameters live inside it */
		virtq_init(r.vq, &vp, r.ring);
		*r.broken_reported = false;
	}
}

int
vnapi_backend_start(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const struct vnapi_device_ops *ops =
		((const struct vnapi_proc *)dev->process_private)->ops;
	uint16_t q, nb_vrings = 2 * hw->nb_qp;
	int ret;

	if (vnapi_vring_vq(dev, 0) == NULL || vnapi_vring_vq(dev, 1) == NULL) {
		VNAPI_INIT_LOG(ERR, "%s: rx queue 0 and tx queue 0 must be set up",
			       dev->data->name);
		return -EINVAL;
	}
	for (q = 0; q < nb_vrings; q++) {
		if (vnapi_vring_vq(dev, q) == NULL &&
		    q / 2 < (q % 2 ? dev->data->nb_tx_queues : dev->data->nb_rx_queues)) {
			VNAPI_INIT_LOG(ERR, "%s: %s queue %u configured but not set up",
				       dev->data->name, q % 2 ? "tx" : "rx", q / 2);
			return -EINVAL;
		}
	}
	ret = vnapi_backend_eventfds_open(dev, nb_vrings);
	if (ret != 0)
		return ret;
	vnapi_vq_relayout(dev); /* the rings are empty here */

	ret = ops->set_features(dev, hw->features);
	if (ret == 0)
		ret = ops->set_memory(dev);
	if (ret != 0)
		goto err;
	/* The probe's line names the devargs' ceiling; this one what the
	 * device serves now (offloads the application left off are out). */
	vnapi_backend_log_features(dev, "started with ");

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (vnapi_rxq_refill(rxq) == 0) {
			VNAPI_INIT_LOG(ERR, "%s rx queue %u: no mbuf to post (mempool %s empty?)",
				       dev->data->name, q, rxq->mp->name);
			ret = -ENOMEM;
			goto err;
		}
	}
	for (q = 0; q < nb_vrings; q++) {
		const struct virtq *vq = vnapi_vring_vq(dev, q);

		if (vq == NULL)
			continue;
		ret = ops->vring_start(dev, q, vq);
		if (ret != 0) {
			VNAPI_INIT_LOG(ERR, "%s: cannot start vring %u: %s", dev->data->name, q,
				       strerror(-ret));
			goto err;
		}
	}
	for (q = 0; q < nb_vrings; q++) {
		if (vnapi_vring_vq(dev, q) == NULL)
			continue;
		ret = ops->vring_enable(dev, q, true);
		if (ret != 0)
			goto err;
	}
	ret = ops->set_status(dev, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
			      VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
	if (ret != 0)
		goto err;
	return 0;

err:
	VNAPI_INIT_LOG(ERR, "%s: start failed: %s", dev->data->name, strerror(-ret));
	vnapi_backend_flush(dev);
	return ret;
}

void
vnapi_backend_stop(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const struct vnapi_proc *proc = dev->process_private;
	uint16_t q;

	/* Stop the device's use of every ring before taking the buffers back. */
	if (vnapi_connected(hw)) {
		for (q = 0; q < 2 * hw->nb_qp; q++)
			if (vnapi_vring_vq(dev, q) != NULL)
				proc->ops->vring_enable(dev, q, false);
		for (q = 0; q < 2 * hw->nb_qp; q++)
			if (vnapi_vring_vq(dev, q) != NULL && proc->ops->vring_stop(dev, q) != 0)
				break;
		/* The transport closes the connection on an error. */
		if (!vnapi_backend_session_open(dev))
			vnapi_connected_set(hw, false);
	}
	vnapi_backend_flush(dev);
}
