/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_FEATURES_H_
#define _VNAPI_FEATURES_H_

/**
 * @file
 * @internal
 * Every virtio feature bit the driver negotiates, and their names for the
 * logs. The ring bits (INDIRECT_DESC, EVENT_IDX, VERSION_1, RING_PACKED,
 * IN_ORDER) are lib/virtq's (virtq_ring.h), which needs them itself; the
 * others are defined here only. Header-only, no EAL.
 */

#include "virtq_ring.h"

/* virtio-net device features (virtio 1.2 section 5.1.3). */
#define VIRTIO_NET_F_CSUM         0  /**< Device completes a partial checksum (our tx). */
#define VIRTIO_NET_F_GUEST_CSUM   1  /**< Device may send partial checksums (our rx). */
#define VIRTIO_NET_F_MAC          5
#define VIRTIO_NET_F_GUEST_TSO4   7
#define VIRTIO_NET_F_GUEST_TSO6   8
#define VIRTIO_NET_F_GUEST_ECN    9
#define VIRTIO_NET_F_HOST_TSO4   11
#define VIRTIO_NET_F_HOST_TSO6   12
#define VIRTIO_NET_F_HOST_ECN    13
#define VIRTIO_NET_F_MRG_RXBUF   15
#define VIRTIO_NET_F_STATUS      16
#define VIRTIO_NET_F_CTRL_VQ     17  /**< Control virtqueue (virtio-pci, with MQ). */
#define VIRTIO_NET_F_MQ          22

/* Transport-level features (virtio 1.2 section 6), besides the ring bits. */
#define VIRTIO_F_ACCESS_PLATFORM 33  /**< Device behind the platform's IOMMU (virtio-pci). */

/* vhost-user's own bit in the feature word (vhost-user protocol). */
#define VHOST_USER_F_PROTOCOL_FEATURES 30

/** The name of feature @p bit in logs, or NULL for a bit the driver never takes. */
static inline const char *
vnapi_feature_name(unsigned int bit)
{
	switch (bit) {
	case VIRTIO_NET_F_CSUM: return "CSUM";
	case VIRTIO_NET_F_GUEST_CSUM: return "GUEST_CSUM";
	case VIRTIO_NET_F_MAC: return "MAC";
	case VIRTIO_NET_F_GUEST_TSO4: return "GUEST_TSO4";
	case VIRTIO_NET_F_GUEST_TSO6: return "GUEST_TSO6";
	case VIRTIO_NET_F_GUEST_ECN: return "GUEST_ECN";
	case VIRTIO_NET_F_HOST_TSO4: return "HOST_TSO4";
	case VIRTIO_NET_F_HOST_TSO6: return "HOST_TSO6";
	case VIRTIO_NET_F_HOST_ECN: return "HOST_ECN";
	case VIRTIO_NET_F_MRG_RXBUF: return "MRG_RXBUF";
	case VIRTIO_NET_F_STATUS: return "STATUS";
	case VIRTIO_NET_F_CTRL_VQ: return "CTRL_VQ";
	case VIRTIO_NET_F_MQ: return "MQ";
	case VIRTIO_F_RING_INDIRECT_DESC: return "INDIRECT_DESC";
	case VIRTIO_F_RING_EVENT_IDX: return "EVENT_IDX";
	case VHOST_USER_F_PROTOCOL_FEATURES: return "PROTOCOL_FEATURES";
	case VIRTIO_F_VERSION_1: return "VERSION_1";
	case VIRTIO_F_ACCESS_PLATFORM: return "ACCESS_PLATFORM";
	case VIRTIO_F_RING_PACKED: return "RING_PACKED";
	case VIRTIO_F_IN_ORDER: return "IN_ORDER";
	default: return NULL;
	}
}

#endif /* _VNAPI_FEATURES_H_ */
