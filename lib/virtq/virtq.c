/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The public virtqueue functions: parameter checks, the broken state, the
 * size helpers, and dispatch to the layout.
 *
 * Dispatch goes through virtq_layout_ops[], a static table of this process
 * indexed by the layout stored in the queue: struct virtq lives in memory
 * shared with secondary processes, which map this library at another address,
 * so the queue stores no pointer to the table. The table is an array of
 * structures, so a call costs one indexed load, as a stored ops pointer did.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "virtq.h"
#include "virtq_private.h"

_Static_assert(sizeof(struct virtq_desc) == VIRTQ_DESC_SIZE, "split descriptor size");
_Static_assert(sizeof(struct virtq_packed_desc) == VIRTQ_DESC_SIZE, "packed descriptor size");

/* Alignment of the indirect tables (after the layout's areas): a cache line. */
#define VIRTQ_INDIRECT_ALIGN 64

/* Number of layouts in enum virtq_layout. */
#define VIRTQ_NB_LAYOUTS 2

/* The layouts, indexed by enum virtq_layout, then their in-order variants. */
static const struct virtq_ops virtq_layout_ops[2 * VIRTQ_NB_LAYOUTS] = {
	[VIRTQ_LAYOUT_SPLIT] = VIRTQ_LAYOUT_OPS(split),
	[VIRTQ_LAYOUT_PACKED] = VIRTQ_LAYOUT_OPS(packed),
	[VIRTQ_NB_LAYOUTS + VIRTQ_LAYOUT_SPLIT] = VIRTQ_LAYOUT_OPS_IO(split),
	[VIRTQ_NB_LAYOUTS + VIRTQ_LAYOUT_PACKED] = VIRTQ_LAYOUT_OPS_IO(packed),
};

/* The operations of an initialised queue (checked by init). */
#define VQ_OPS(vq) (&virtq_layout_ops[(vq)->ops_idx])

static const struct virtq_ops *
virtq_params_ops(const struct virtq_params *p)
{
	if (p == NULL)
		return NULL;
	if ((unsigned int)p->layout >= VIRTQ_NB_LAYOUTS)
		return NULL;
	/*
	 * A power of two, 2..VIRTQ_MAX_NUM. The packed ring allows any size up
	 * to 2^15, but its free-running indices rely on num dividing 2^16 (the
	 * wrap counter of an index is then a function of the index).
	 */
	if (p->num < 2 || p->num > VIRTQ_MAX_NUM || (p->num & (p->num - 1)) != 0)
		return NULL;
	/* A table of one descriptor would save nothing. */
	if (p->indirect_max == 1 || p->indirect_max > VIRTQ_MAX_INDIRECT)
		return NULL;
	return &virtq_layout_ops[p->layout];
}

/*
 * The indirect tables follow the layout's areas (so those keep their
 * offsets), from the next cache line: num tables of indirect_max
 * descriptors, table i at i * indirect_max * VIRTQ_DESC_SIZE (16-byte aligned).
 */
static size_t
virtq_indirect_offset(const struct virtq_ops *ops, const struct virtq_params *p)
{
	size_t end = ops->ring_mem_size(p->num);

	return (end + VIRTQ_INDIRECT_ALIGN - 1) & ~((size_t)VIRTQ_INDIRECT_ALIGN - 1);
}

size_t
virtq_ring_mem_size(const struct virtq_params *p)
{
	const struct virtq_ops *ops = virtq_params_ops(p);

	if (ops == NULL)
		return 0;
	if (p->indirect_max == 0)
		return ops->ring_mem_size(p->num);
	return virtq_indirect_offset(ops, p) +
		(size_t)p->num * p->indirect_max * VIRTQ_DESC_SIZE;
}

size_t
virtq_state_size(const struct virtq_params *p)
{
	if (virtq_params_ops(p) == NULL)
		return 0;
	return sizeof(struct virtq) + (size_t)p->num * sizeof(struct virtq_head) +
		(size_t)p->num * sizeof(uint16_t);
}

int
virtq_init(struct virtq *vq, const struct virtq_params *p, void *ring_mem)
{
	const struct virtq_ops *ops = virtq_params_ops(p);
	uint16_t i;

	if (vq == NULL || ops == NULL || ring_mem == NULL ||
	    ((uintptr_t)ring_mem & (VIRTQ_RING_ALIGN - 1)) != 0)
		return -EINVAL;

	memset(vq, 0, virtq_state_size(p));
	memset(ring_mem, 0, ops->ring_mem_size(p->num));
	vq->params = *p;
	vq->mask = p->num - 1;
	vq->ops_idx = (uint8_t)(p->layout + (p->in_order ? VIRTQ_NB_LAYOUTS : 0));
	vq->next = (uint16_t *)&vq->heads[p->num];

	/* Every descriptor free, linked in index order. */
	for (i = 0; i < p->num - 1; i++)
		vq->next[i] = i + 1;
	vq->next[p->num - 1] = 0;
	vq->free_head = 0;
	vq->num_free = p->num;

	vq->avail_idx = p->start_idx;
	vq->avail_published = p->start_idx;
	vq->kick_idx = p->start_idx;
	vq->last_used = p->start_idx;

	/* The tables are not zeroed: each is written before it is published. */
	vq->indirect = p->indirect_max == 0 ? NULL :
		(uint8_t *)ring_mem + virtq_indirect_offset(ops, p);
	ops->init(vq, ring_mem);
	return 0;
}

const struct virtq_params *
virtq_params(const struct virtq *vq)
{
	return &vq->params;
}

void *
virtq_desc_area(const struct virtq *vq)
{
	return vq->desc_area;
}

void *
virtq_driver_area(const struct virtq *vq)
{
	return vq->driver_area;
}

void *
virtq_device_area(const struct virtq *vq)
{
	return vq->device_area;
}

uint16_t
virtq_num_free(const struct virtq *vq)
{
	return vq->num_free;
}

uint16_t
virtq_publish_group(const struct virtq *vq)
{
	return vq->params.layout == VIRTQ_LAYOUT_PACKED ? VIRTQ_PACKED_PUBLISH : 0;
}

int
virtq_add(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
	  void *cookie)
{
	uint32_t total = (uint32_t)out + in;

	if (vq->broken)
		return -EIO;
	if (total == 0 || cookie == NULL || sg == NULL)
		return -EINVAL;
	/* An indirect chain takes one ring descriptor (packed: slot). */
	if ((virtq_chain_indirect(vq, total) ? 1 : total) > vq->num_free)
		return -ENOSPC;
	VQ_OPS(vq)->add(vq, sg, out, in, cookie);
	return 0;
}

static inline uint16_t
virtq_add_bufs(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies, uint16_t n,
	       bool in)
{
	if (vq->broken || n == 0 || sg == NULL || cookies == NULL)
		return 0;
	if (n > vq->num_free)
		n = vq->num_free;
	return VQ_OPS(vq)->add_bufs(vq, sg, cookies, n, in);
}

uint16_t
virtq_add_inbufs(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies, uint16_t n)
{
	return virtq_add_bufs(vq, sg, cookies, n, true);
}

uint16_t
virtq_add_outbufs(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies, uint16_t n)
{
	return virtq_add_bufs(vq, sg, cookies, n, false);
}

bool
virtq_kick_prepare(struct virtq *vq)
{
	uint16_t old = vq->kick_idx;
	bool need;

	/* Nothing added since the last kick: nothing to publish or notify. */
	if (vq->broken || vq->avail_idx == old)
		return false;
	vq->kick_idx = vq->avail_idx;
	need = VQ_OPS(vq)->kick_prepare(vq, old);
	if (need)
		vq->stats.kicks++;
	else
		vq->stats.kicks_suppressed++;
	return need;
}

uint16_t
virtq_get_used(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max)
{
	if (vq->broken || max == 0 || cookies == NULL)
		return 0;
	return VQ_OPS(vq)->get_used(vq, cookies, lens, max);
}

uint16_t
virtq_used_count(struct virtq *vq)
{
	if (vq->broken)
		return 0;
	return VQ_OPS(vq)->used_count(vq);
}

uint32_t
virtq_enable_intr_prepare(struct virtq *vq)
{
	/* Nothing is armed on a broken queue; virtq_poll() will say false
	 * whatever the opaque.
	 */
	if (vq->broken)
		return vq->last_used;
	return VQ_OPS(vq)->enable_intr_prepare(vq);
}

bool
virtq_poll(struct virtq *vq, uint32_t opaque)
{
	if (vq->broken)
		return false;
	return VQ_OPS(vq)->poll(vq, opaque);
}

void
virtq_disable_intr(struct virtq *vq)
{
	if (vq->broken)
		return;
	VQ_OPS(vq)->disable_intr(vq);
}

void
virtq_disarm_keep_event(struct virtq *vq)
{
	if (!vq->intr_enabled)
		return;
	vq->intr_enabled = false;
	vq->event_left = true;
}

bool
virtq_intr_enabled(const struct virtq *vq)
{
	return vq->intr_enabled;
}

/*
 * Every head (packed: buffer id) with a cookie is outstanding: added
 * (published or not) and not taken by get_used. Scan from detach_pos so that
 * draining is O(num) in all; heads below it were already looked at (the
 * queue is stopped, no add runs meanwhile). Allowed on a broken queue: the
 * caller must get its buffers back.
 */
void *
virtq_detach_unused(struct virtq *vq)
{
	uint32_t i;

	for (i = vq->detach_pos; i < vq->params.num; i++) {
		void *cookie = vq->heads[i].cookie;

		if (cookie != NULL) {
			VQ_OPS(vq)->release(vq, (uint16_t)i);
			vq->detach_pos = (uint16_t)(i + 1);
			return cookie;
		}
	}
	vq->detach_pos = 0;
	return NULL;
}

void
virtq_release_io(struct virtq *vq, uint16_t head)
{
	vq->num_free = (uint16_t)(vq->num_free + vq->heads[head].ndescs);
	vq->heads[head].cookie = NULL;
}

/* Every head (packed: buffer id) with a cookie, as virtq_detach_unused(). */
uint16_t
virtq_outstanding(const struct virtq *vq)
{
	uint32_t i;
	uint16_t n = 0;

	for (i = 0; i < vq->params.num; i++)
		n += vq->heads[i].cookie != NULL;
	return n;
}

bool
virtq_is_broken(const struct virtq *vq)
{
	return vq->broken;
}

const char *
virtq_broken_reason(const struct virtq *vq)
{
	return vq->broken ? vq->broken_reason : NULL;
}

void
virtq_mark_broken(struct virtq *vq, const char *reason)
{
	/* The first reason is the one worth reporting. */
	if (vq->broken)
		return;
	vq->broken = true;
	/* Copied (truncated if need be): see broken_reason in struct virtq. */
	snprintf(vq->broken_reason, sizeof(vq->broken_reason), "%s",
		 reason != NULL ? reason : "marked broken");
}

void
virtq_bad_used(struct virtq *vq, const char *reason)
{
	vq->stats.bad_used++;
	virtq_mark_broken(vq, reason);
}

const struct virtq_stats *
virtq_stats(const struct virtq *vq)
{
	return &vq->stats;
}

uint16_t
virtq_avail_idx(const struct virtq *vq)
{
	return vq->avail_idx;
}

uint16_t
virtq_last_used_idx(const struct virtq *vq)
{
	return vq->last_used;
}

volatile void *
virtq_monitor_addr(struct virtq *vq, uint64_t *expected, uint64_t *mask, uint8_t *size)
{
	if (vq->broken || expected == NULL || mask == NULL || size == NULL)
		return NULL;
	return VQ_OPS(vq)->monitor_addr(vq, expected, mask, size);
}

uint16_t
virtq_vring_base(const struct virtq *vq)
{
	return VQ_OPS(vq)->vring_base(vq);
}
