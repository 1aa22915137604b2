/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_CTRLQ_H_
#define _VNAPI_CTRLQ_H_

/**
 * @file
 * @internal
 * The virtio-net control virtqueue, driver side: its ring and command
 * buffer, and the one command vnapi sends (MQ VQ_PAIRS_SET). The transport
 * hands the ring to the device and gives the notify address; this file
 * never touches a device register.
 */

#include <stdint.h>

#include "virtq.h"

/** Descriptors of the control ring (a command takes 3). */
#define VNAPI_CTRLQ_NUM        64
/** How long a command may wait for the device's ack. */
#define VNAPI_CTRLQ_TIMEOUT_MS 1000

struct vnapi_ctrlq {
	struct virtq *vq;
	void *ring;
	uint8_t *buf;                    /**< Command: class, cmd, data, ack. */
	volatile uint16_t *notify;       /**< Where the kick is stored. */
	uint16_t index;                  /**< The ring's virtqueue index (kick value). */
};

/**
 * Lay the ring out anew with @p vp (allocated at the first call, reused
 * after), before the transport hands it to the device.
 *
 * @return 0, -ENOMEM or -EINVAL.
 */
int vnapi_ctrlq_prepare(struct vnapi_ctrlq *cq, const struct virtq_params *vp);

/**
 * Send VQ_PAIRS_SET(@p pairs) and poll for the device's ack (control path,
 * bounded by VNAPI_CTRLQ_TIMEOUT_MS). @p name names the device in logs.
 *
 * @return 0, -EIO (refused, or the ring is full) or -ETIMEDOUT.
 */
int vnapi_ctrlq_mq_pairs_set(struct vnapi_ctrlq *cq, const char *name, uint16_t pairs);

/** Free what vnapi_ctrlq_prepare() allocated (NULL-safe fields). */
void vnapi_ctrlq_free(struct vnapi_ctrlq *cq);

#endif /* _VNAPI_CTRLQ_H_ */
