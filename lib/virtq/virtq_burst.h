/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VIRTQ_BURST_H_
#define _VIRTQ_BURST_H_

/**
 * @file
 * @internal
 * The in-order hot paths as inline functions, for a caller that knows the
 * layout and the direction at compile time (the PMD's bursts, one copy per
 * layout): no call through the table of layouts, no array of descriptors
 * between the caller and the ring, the queue's indices in registers for a
 * whole burst. The out-of-line in-order operations of virtq_split.c and
 * virtq_packed.c are loops over these same functions, so the unit tests and
 * the fuzz target run this code.
 *
 * Only for a queue built with params.in_order (in order, buffer ids and
 * descriptors follow the ring).
 *
 * Producer, single-descriptor buffers (what virtq_add_inbufs() and
 * virtq_add_outbufs() do): virtq_put_begin() says how many may be added,
 * virtq_put_split() / virtq_put_packed() adds one, virtq_put_end() writes
 * the indices back. Publication as there: packed receive buffers whenever
 * the position reaches a multiple of VIRTQ_PACKED_PUBLISH; send buffers,
 * split rings, and the rest of a packed refill by virtq_kick_prepare().
 *
 * Consumer (what virtq_get_used() does): virtq_take_begin() says how many
 * at most, virtq_take_split() / virtq_take_packed() takes one (or says
 * none, or rejects a device-written value: the queue is then broken),
 * virtq_take_end() writes the indices back.
 *
 * Between begin and end the cursor holds the queue's indices: nothing else
 * may use the queue (the rule of virtq.h: one thread per queue).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "virtq.h"
#include "virtq_private.h"
#include "virtq_ring.h"

/* ------------------------------------------------------------- helpers */

/** @internal The AVAIL/USED bits of a descriptor made available in wrap @p w. */
static __rte_always_inline uint16_t
virtq_avail_bits_packed(bool w)
{
	return w ? VIRTQ_DESC_F_AVAIL : VIRTQ_DESC_F_USED;
}

/** @internal The AVAIL/USED bits of a descriptor made used in wrap @p w. */
static __rte_always_inline uint16_t
virtq_used_bits_packed(bool w)
{
	return w ? (VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED) : 0;
}

/** @internal True if @p flags say "used in wrap @p w": AVAIL == USED == w. */
static __rte_always_inline bool
virtq_is_used_packed(uint16_t flags, bool w)
{
	return (flags & (VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED)) == virtq_used_bits_packed(w);
}

/**
 * @internal
 * Store the flags of the packed descriptor at @p desc. Release: our stores
 * of its address, len and id (and of the descriptors of the chains after
 * a held head) before the flags that make them available; pairs with the
 * device's load-acquire of the flags before it reads the descriptors
 * (lib/vhost desc_is_avail, called from fill_vec_buf_packed,
 * virtio_dev_rx_sync_batch_check and vhost_reserve_avail_batch_packed).
 */
static __rte_always_inline void
virtq_store_flags_packed(struct virtq_packed_desc *desc, uint16_t flags)
{
	__atomic_store_n(&desc->flags, flags, __ATOMIC_RELEASE);
}

/** @internal A chain's private state: one store for cookie, one for the rest. */
static __rte_always_inline void
virtq_head_set(struct virtq_head *h, void *cookie, uint32_t in_len, uint16_t ndescs,
	       uint16_t nin)
{
	h->cookie = cookie;
	h->in_len = in_len;
	h->ndescs = ndescs;
	h->nin = nin;
}

/* ------------------------------------------------------------ producer */

/** @internal A producer cursor (virtq_put_begin() fills it). */
struct virtq_put {
	struct virtq_head *heads;
	void *desc;                /**< struct virtq_desc / virtq_packed_desc [num]. */
	uint16_t *avail_ring;      /**< Split: the avail ring's entries. */
	uint16_t mask;
	uint16_t pos;              /**< Split: avail idx; packed: ring position. */
	uint16_t head;             /**< Split: the next descriptor. */
	uint16_t pub;              /**< The first position not yet published. */
	uint16_t held;             /**< Packed: the flags held back for position pub. */
	uint16_t flags;            /**< Packed: the flags of a buffer made available at pos. */
	uint16_t added;
};

/**
 * @internal
 * Start adding single-descriptor buffers, device-writable if @p in.
 * @return how many may be added (the free descriptors; 0 on a broken
 * queue). virtq_put_end() may be called whatever it says.
 */
static __rte_always_inline uint16_t
virtq_put_begin(struct virtq *vq, struct virtq_put *p, enum virtq_layout layout, bool in)
{
	p->heads = vq->heads;
	p->mask = vq->mask;
	p->pos = vq->avail_idx;
	p->pub = vq->avail_published;
	p->added = 0;
	if (layout == VIRTQ_LAYOUT_SPLIT) {
		p->desc = vq->split.desc;
		p->avail_ring = vq->split.avail->ring;
		p->head = vq->free_head;
	} else {
		p->desc = vq->packed.desc;
		p->held = vq->packed.head_flags;
		p->flags = (uint16_t)((in ? VIRTQ_DESC_F_WRITE : 0) |
				      virtq_avail_bits_packed(vq->packed.avail_wrap));
	}
	return unlikely(vq->broken) ? 0 : vq->num_free;
}

/**
 * @internal
 * Split, in order: one buffer. With only such chains in the ring, a slot of
 * the avail ring always names the same descriptor, lap after lap: the entry
 * is rewritten only when it changes, so its cache line stays clean and the
 * device's reads of it stay in its cache. Likewise flags and next, which
 * only change when the descriptor last served a chain of another kind.
 */
static __rte_always_inline void
virtq_put_split(struct virtq_put *p, uint64_t addr, uint32_t len, void *cookie, bool in)
{
	const uint16_t flags = in ? VIRTQ_DESC_F_WRITE : 0;
	struct virtq_desc *d = &((struct virtq_desc *)p->desc)[p->head];
	uint16_t *slot = &p->avail_ring[p->pos & p->mask];

	d->addr = addr;
	d->len = len;
	if (unlikely(d->flags != flags || d->next != 0)) {
		d->flags = flags;
		d->next = 0;
	}
	virtq_head_set(&p->heads[p->head], cookie, in ? len : 0, 1, in);
	if (*slot != p->head)
		*slot = p->head;
	p->pos++;
	p->head = (uint16_t)((p->head + 1) & p->mask);
	p->added++;
}

/**
 * @internal
 * Packed, in order: one buffer; its id is its slot. The first unpublished
 * head (at pub) is held back while the descriptors after it are written.
 * A receive buffer (@p in): when the position reaches a multiple of
 * VIRTQ_PACKED_PUBLISH, the head's store (virtq_store_flags_packed())
 * publishes the group, and the next descriptor is the new held head; a
 * group left incomplete waits for the next call or virtq_kick_prepare().
 * A send buffer: the head stays held until virtq_kick_prepare(), which
 * publishes the burst whole.
 */
static __rte_always_inline void
virtq_put_packed(struct virtq_put *p, uint64_t addr, uint32_t len, void *cookie, bool in)
{
	struct virtq_packed_desc *ring = p->desc;
	const uint16_t slot = p->pos & p->mask;
	struct virtq_packed_desc *d = &ring[slot];

	d->addr = addr;
	d->len = len;
	d->id = slot;
	virtq_head_set(&p->heads[slot], cookie, in ? len : 0, 1, in);
	if (p->pos == p->pub)
		p->held = p->flags;     /* the first unpublished head */
	else
		virtq_store_flags_packed(d, p->flags);
	p->pos++;
	p->added++;
	/* The wrap counter flips past the last slot: AVAIL and USED with it. */
	if (unlikely(slot == p->mask))
		p->flags ^= VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED;
	if (in && (p->pos & (VIRTQ_PACKED_PUBLISH - 1)) == 0) {
		/* p->pub != p->pos: at least this descriptor is unpublished. */
		virtq_store_flags_packed(&ring[p->pub & p->mask], p->held);
		p->pub = p->pos;
	}
}

/** @internal Write the cursor's indices back into the queue. */
static __rte_always_inline void
virtq_put_end(struct virtq *vq, const struct virtq_put *p, enum virtq_layout layout)
{
	vq->avail_idx = p->pos;
	vq->avail_published = p->pub;
	vq->num_free = (uint16_t)(vq->num_free - p->added);
	if (layout == VIRTQ_LAYOUT_SPLIT) {
		vq->free_head = p->head;
	} else {
		vq->packed.head_flags = p->held;
		vq->packed.avail_wrap = (p->flags & VIRTQ_DESC_F_AVAIL) != 0;
	}
}

/* ------------------------------------------------------------ consumer */

/** @internal A consumer cursor (virtq_take_begin() fills it). */
struct virtq_take {
	struct virtq *vq;          /**< For a rejection (virtq_bad_used()). */
	struct virtq_head *heads;
	const void *ring;          /**< Split: used entries; packed: descriptors. */
	uint16_t mask;
	uint16_t num;
	uint16_t last;             /**< Split: used idx; packed: ring position. */
	uint16_t head;             /**< Split: head of the oldest chain in flight. */
	uint16_t end;              /**< Packed: the device reported every chain before it. */
	uint16_t published;        /**< Packed: avail_published. */
	uint32_t end_len;          /**< Packed: the used len of the chain ending at end. */
	uint16_t freed;
	bool w;                    /**< Packed: the used wrap counter at last. */
};

/**
 * @internal
 * Split: used entries the device added since last_used, at most @p bound;
 * -1 if more (the queue is then marked broken with @p reason). Acquire:
 * our load of used idx before our loads of the used entries (or, for a
 * count, before a later virtq_get_used()); pairs with the device's
 * store-release of used idx after writing the entries (lib/vhost
 * flush_shadow_used_ring_split). One load per call.
 */
static __rte_always_inline int
virtq_used_pending_split(struct virtq *vq, uint16_t bound, const char *reason)
{
	uint16_t pending = (uint16_t)(__atomic_load_n(&vq->split.used->idx, __ATOMIC_ACQUIRE) -
				      vq->last_used); /* modulo 2^16 */

	if (unlikely(pending > bound)) {
		virtq_bad_used(vq, reason);
		return -1;
	}
	return pending;
}

/**
 * @internal
 * Start taking completed chains, at most @p max.
 * @return split: how many the device completed (at most @p max), to take
 * each with virtq_take_split(); packed: @p max, a bound (virtq_take_packed()
 * says when there is none); 0 on a broken queue or a used idx that jumped
 * (the queue is then broken). virtq_take_end() may be called whatever it
 * says.
 */
static __rte_always_inline uint16_t
virtq_take_begin(struct virtq *vq, struct virtq_take *t, enum virtq_layout layout,
		 uint16_t max)
{
	t->vq = vq;
	t->heads = vq->heads;
	t->mask = vq->mask;
	t->num = vq->params.num;
	t->last = vq->last_used;
	t->freed = 0;
	if (layout == VIRTQ_LAYOUT_SPLIT) {
		int used;

		t->ring = vq->split.used->ring;
		t->head = vq->split.ord_head;
		if (unlikely(vq->broken))
			return 0;
		/* At most the entries in flight: published, not yet used. */
		used = virtq_used_pending_split(vq, (uint16_t)(vq->avail_published - vq->last_used),
						"used idx moved past the published buffers");
		return used < 0 ? 0 : RTE_MIN((uint16_t)used, max);
	}
	t->ring = vq->packed.desc;
	t->end = vq->packed.ord_end;
	t->end_len = vq->packed.ord_len;
	t->published = vq->avail_published;
	t->w = vq->packed.used_wrap;
	return unlikely(vq->broken) ? 0 : max;
}

/** @internal Hand out chain @p h and forget it (its descriptors are free again). */
static __rte_always_inline void
virtq_take_head(struct virtq_take *t, struct virtq_head *h, void **cookie)
{
	*cookie = h->cookie;
	h->cookie = NULL;
	t->freed = (uint16_t)(t->freed + h->ndescs);
}

/**
 * @internal
 * Split, in order: take the next completed chain (virtq_take_begin() said
 * how many there are). The used entries come in the order the chains were
 * made available, so the next one belongs to the chain at the head. Its
 * entry is read only when its len matters (device-writable buffers: rx),
 * and then its id must be that head; for device-readable chains (tx) the
 * used idx alone says they completed, and the entries' cache lines are not
 * touched.
 * @return true, or false for a rejected entry (the queue is broken).
 */
static __rte_always_inline bool
virtq_take_split(struct virtq_take *t, void **cookie, uint32_t *lenp)
{
	struct virtq_head *h = &t->heads[t->head];
	uint32_t len = 0;

	if (h->nin != 0) {
		const struct virtq_used_elem *e =
			&((const struct virtq_used_elem *)t->ring)[t->last & t->mask];
		/* Each field read once: the device cannot change what we checked. */
		uint32_t id = __atomic_load_n(&e->id, __ATOMIC_RELAXED);

		len = __atomic_load_n(&e->len, __ATOMIC_RELAXED);
		if (unlikely(id != t->head)) {
			virtq_bad_used(t->vq, "used id out of order");
			return false;
		}
		if (unlikely(len > h->in_len)) {
			virtq_bad_used(t->vq, "used len exceeds the writable length");
			return false;
		}
	}
	*lenp = len;
	t->head = (uint16_t)((t->head + h->ndescs) & t->mask);
	t->last++;
	virtq_take_head(t, h, cookie);
	return true;
}

/**
 * @internal
 * Packed, in order (VIRTIO_F_IN_ORDER, 2.8.20): the used descriptor at the
 * cursor's position may carry the id of a later chain, meaning every chain
 * from there to that one inclusive is used (lib/vhost writes one for a
 * batch of transmitted buffers: vhost_shadow_dequeue_batch_packed_inorder,
 * flushed by vhost_flush_dequeue_shadow_packed). Buffer ids are slots of
 * first descriptors, so the id says where the batch ends. The chains in
 * flight and published tile [pos, pos + inflight), one head each, and only
 * heads in flight have a cookie. This checks a used descriptor whose @p id
 * and @p len were loaded once (the device cannot change what we checked),
 * @p inflight > 0.
 * @return 1 with t->end = the position after the batch and t->end_len =
 * the used len of its last chain; -1 bad (queue broken).
 */
static __rte_always_inline int
virtq_take_batch_check_packed(struct virtq_take *t, uint16_t id, uint32_t len, uint16_t inflight)
{
	const struct virtq_head *h;
	uint16_t dist;

	if (unlikely(id >= t->num)) {
		virtq_bad_used(t->vq, "used id out of range");
		return -1;
	}
	h = &t->heads[id];
	dist = (uint16_t)((id - t->last) & t->mask);
	if (unlikely(h->cookie == NULL || dist >= inflight)) {
		virtq_bad_used(t->vq, "used id is not an outstanding buffer");
		return -1;
	}
	if (unlikely((uint32_t)dist + h->ndescs > inflight)) {
		virtq_bad_used(t->vq, "used chain runs past the published descriptors");
		return -1;
	}
	if (h->nin == 0)
		len = 0;    /* nothing device-writable: len means nothing */
	else if (unlikely(len > h->in_len)) {
		virtq_bad_used(t->vq, "used len exceeds the writable length");
		return -1;
	}
	t->end = (uint16_t)(t->last + dist + h->ndescs);
	t->end_len = len;
	return 1;
}

/**
 * @internal
 * Load the used descriptor at the cursor's position, if the device used
 * it. Acquire: our load of the flags before our loads of id and len; pairs
 * with the device's release between its stores of id/len and of the flags
 * (lib/vhost vhost_flush_enqueue_shadow_packed and
 * vhost_flush_enqueue_batch_packed: release fence;
 * vhost_flush_dequeue_shadow_packed: store-release of the flags).
 * @return 1 with @p id, @p len and @p inflight (> 0) loaded; 0 not used
 * yet; -1 bad (queue broken).
 */
static __rte_always_inline int
virtq_take_load_packed(struct virtq_take *t, uint16_t *id, uint32_t *len, uint16_t *inflight)
{
	const struct virtq_packed_desc *d =
		&((const struct virtq_packed_desc *)t->ring)[t->last & t->mask];
	uint16_t flags = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);

	if (!virtq_is_used_packed(flags, t->w))
		return 0;
	*inflight = (uint16_t)(t->published - t->last);
	if (unlikely(*inflight == 0)) {
		virtq_bad_used(t->vq, "used descriptor where none was expected");
		return -1;
	}
	*id = __atomic_load_n(&d->id, __ATOMIC_RELAXED);
	*len = __atomic_load_n(&d->len, __ATOMIC_RELAXED);
	return 1;
}

/**
 * @internal
 * The batch that starts at the cursor's position, if the device used it
 * (virtq_take_batch_check_packed()).
 * @return 1 with t->end and t->end_len set; 0 not used yet; -1 bad.
 */
static __rte_always_inline int
virtq_take_batch_packed(struct virtq_take *t)
{
	uint16_t id, inflight;
	uint32_t len;
	int r = virtq_take_load_packed(t, &id, &len, &inflight);

	return r != 1 ? r : virtq_take_batch_check_packed(t, id, len, inflight);
}

/**
 * @internal
 * Packed, in order: take the next completed chain, if any. The common
 * case first: the used descriptor at the cursor names the chain there (a
 * batch of one: every rx buffer, a lone tx chain). That chain is the
 * oldest in flight (inflight > 0), so it has a cookie and its id is in
 * range; what is left to check is its length against the published
 * descriptors and its used len.
 * @return 1 taken; 0 none completed; -1 a rejected descriptor (the queue is
 * broken).
 */
static __rte_always_inline int
virtq_take_packed(struct virtq_take *t, void **cookie, uint32_t *lenp)
{
	const uint16_t slot = t->last & t->mask;
	struct virtq_head *h = &t->heads[slot];
	const uint16_t nd = h->ndescs;

	if (t->last == t->end) {
		uint16_t id, inflight;
		uint32_t len;
		int r = virtq_take_load_packed(t, &id, &len, &inflight);

		if (r != 1)
			return r;
		if (likely(id == slot)) {
			if (unlikely(nd > inflight)) {
				virtq_bad_used(t->vq, "used chain runs past the published descriptors");
				return -1;
			}
			if (h->nin == 0)
				len = 0;
			else if (unlikely(len > h->in_len)) {
				virtq_bad_used(t->vq, "used len exceeds the writable length");
				return -1;
			}
			t->end = (uint16_t)(t->last + nd);
			t->end_len = len;
		} else if (virtq_take_batch_check_packed(t, id, len, inflight) != 1) {
			return -1;
		}
	}
	if ((uint16_t)(t->last + nd) == t->end) {
		*lenp = t->end_len;
	} else if (unlikely(h->nin != 0)) {
		/* Its len would be lost: a device must report each
		 * device-writable buffer (lib/vhost does, on rx). */
		virtq_bad_used(t->vq, "in-order batch skips a device-writable buffer");
		return -1;
	} else {
		*lenp = 0;
	}
	/* The device skipped the chain's other slots (2.8.7). */
	if ((uint32_t)slot + nd >= t->num)
		t->w = !t->w;
	t->last = (uint16_t)(t->last + nd);
	virtq_take_head(t, h, cookie);
	return 1;
}

/** @internal Write the cursor's indices back into the queue. */
static __rte_always_inline void
virtq_take_end(struct virtq *vq, const struct virtq_take *t, enum virtq_layout layout)
{
	vq->last_used = t->last;
	vq->num_free = (uint16_t)(vq->num_free + t->freed);
	if (layout == VIRTQ_LAYOUT_SPLIT) {
		vq->split.ord_head = t->head;
		/* Disarmed with event idx: keep used_event out of the device's
		 * reach (virtq_used_event_refresh_split()). */
		if (unlikely(vq->params.event_idx && !vq->intr_enabled && !vq->broken &&
			     (uint16_t)(vq->last_used - vq->used_event) >= 0x8000))
			virtq_used_event_refresh_split(vq);
	} else {
		vq->packed.used_wrap = t->w;
		vq->packed.ord_end = vq->broken ? t->last : t->end;
		vq->packed.ord_len = t->end_len;
	}
}

/* ---------------------------------------------------------- the rest */

/** @internal virtq_num_free(), inline. */
static __rte_always_inline uint16_t
virtq_num_free_inline(const struct virtq *vq)
{
	return vq->num_free;
}

/** @internal virtq_is_broken(), inline. */
static __rte_always_inline bool
virtq_is_broken_inline(const struct virtq *vq)
{
	return vq->broken;
}

/**
 * @internal
 * virtq_kick_prepare() with its common outcome inline: nothing added since
 * the last decision (or a broken queue) needs neither a publication nor a
 * barrier.
 */
static __rte_always_inline bool
virtq_kick_prepare_inline(struct virtq *vq)
{
	if (vq->avail_idx == vq->kick_idx || vq->broken)
		return false;
	return virtq_kick_prepare(vq);
}

#endif /* _VIRTQ_BURST_H_ */
