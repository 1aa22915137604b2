/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The virtio-net control virtqueue (virtio 1.2, 5.1.6.5): one command,
 * VQ_PAIRS_SET, sent at each start of a multiqueue port on virtio-pci.
 * A command is a chain of three buffers: the header (class, command) and
 * the data read by the device, the one-byte ack written by it.
 */

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_io.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "vnapi_ctrlq.h"
#include "vnapi_logs.h"

#define VNAPI_CTRL_MQ              4
#define VNAPI_CTRL_MQ_VQ_PAIRS_SET 0
#define VNAPI_CTRL_OK              0

int
vnapi_ctrlq_prepare(struct vnapi_ctrlq *cq, const struct virtq_params *vp)
{
	if (cq->vq == NULL) {
		cq->vq = rte_zmalloc("vnapi_cvq", virtq_state_size(vp), RTE_CACHE_LINE_SIZE);
		cq->ring = rte_zmalloc("vnapi_cvq_ring", virtq_ring_mem_size(vp),
				       VIRTQ_RING_ALIGN);
		cq->buf = rte_zmalloc("vnapi_cvq_buf", RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE);
		if (cq->vq == NULL || cq->ring == NULL || cq->buf == NULL)
			return -ENOMEM;
	} else {
		/* The buffer is our own; nothing to free per command. */
		while (virtq_detach_unused(cq->vq) != NULL)
			;
	}
	return virtq_init(cq->vq, vp, cq->ring) != 0 ? -EINVAL : 0;
}

int
vnapi_ctrlq_mq_pairs_set(struct vnapi_ctrlq *cq, const char *name, uint16_t pairs)
{
	uint8_t *b = cq->buf;
	uint16_t le = rte_cpu_to_le_16(pairs);
	struct virtq_sg sg[3] = {
		{ .addr = rte_mem_virt2iova(b), .len = 2 },
		{ .addr = rte_mem_virt2iova(b + 2), .len = 2 },
		{ .addr = rte_mem_virt2iova(b + 4), .len = 1 },
	};
	uint64_t end = rte_get_timer_cycles() +
		rte_get_timer_hz() * VNAPI_CTRLQ_TIMEOUT_MS / 1000;
	void *cookie;
	uint32_t len;

	b[0] = VNAPI_CTRL_MQ;
	b[1] = VNAPI_CTRL_MQ_VQ_PAIRS_SET;
	memcpy(b + 2, &le, sizeof(le));
	b[4] = 0xff;
	if (virtq_add(cq->vq, sg, 2, 1, b) != 0)
		return -EIO;
	/* rte_write16 orders the kick after virtq_add's publication. */
	if (virtq_kick_prepare(cq->vq))
		rte_write16(cq->index, cq->notify);
	while (virtq_get_used(cq->vq, &cookie, &len, 1) == 0) {
		if (rte_get_timer_cycles() > end) {
			VNAPI_INIT_LOG(ERR, "%s: no reply to VQ_PAIRS_SET within %u ms",
				       name, VNAPI_CTRLQ_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		rte_delay_us_sleep(100);
	}
	/* The device wrote the ack before it made the chain used (virtq_get_used
	 * reads the used index with acquire order). */
	if (*(volatile uint8_t *)(b + 4) != VNAPI_CTRL_OK) {
		VNAPI_INIT_LOG(ERR, "%s: device refused VQ_PAIRS_SET %u", name, pairs);
		return -EIO;
	}
	return 0;
}

void
vnapi_ctrlq_free(struct vnapi_ctrlq *cq)
{
	rte_free(cq->vq);
	rte_free(cq->ring);
	rte_free(cq->buf);
	cq->vq = NULL;
	cq->ring = NULL;
	cq->buf = NULL;
}
