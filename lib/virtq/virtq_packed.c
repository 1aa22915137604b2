/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Packed virtqueue, driver side (virtio 1.2 section 2.8).
 *
 * Ring memory: the descriptor ring at offset 0 (num * 16 bytes), the driver
 * event suppression area right after it, the device event suppression area
 * 64 bytes further (its own cache line: the device writes it, we write ours);
 * then, with indirect descriptors, one table per buffer id (placed by
 * virtq.c).
 *
 * Positions. avail_idx, avail_published and last_used are free-running
 * uint16_t descriptor positions, masked only at access: slot = pos & mask.
 * Since num is a power of two it divides 2^16, so each position also has a
 * well-defined wrap counter, 1 in laps 0, 2, 4... (pos / num even): a fresh
 * ring starts at position 0 with both wrap counters 1. We keep the counters
 * explicitly (avail_wrap, used_wrap), flipping them where a position passes a
 * multiple of num, exactly as the spec's driver does.
 *
 * Descriptors. A chain takes consecutive slots from avail_idx; every
 * descriptor carries the chain's buffer id (the device reads it from the
 * last one; lib/vhost fill_vec_buf_packed) and AVAIL/USED bits for the wrap
 * counter of its own slot. Flags are stored last. The head flags of the
 * first chain not yet published (the one at avail_published) are held back
 * in a shadow: the device consumes the ring in order and cannot get past an
 * unpublished head, so everything added after it stays invisible too,
 * whatever its flags say. The held head is stored by virtq_kick_prepare(),
 * or, for receive buffers, earlier by the one-descriptor bulk path each time
 * a group of VIRTQ_PACKED_PUBLISH slots (one cache line of descriptors,
 * lib/vhost's batch) is complete: the device fills the first buffers of a
 * refill while we write the rest, and it finds whole cache lines, which its
 * batch paths need. Send buffers wait for virtq_kick_prepare(), which
 * publishes the burst whole (virtq_private.h, VIRTQ_PACKED_PUBLISH).
 * kick_idx is the position of the last kick decision.
 *
 * Buffer ids. The device returns a buffer id, not a slot: ids come from a
 * private free list (vq->next[]), and heads[id] says how many slots the
 * chain took, so the driver knows how far the device skipped. An id in flight
 * keeps the position of its chain in next[id] (to tell published from not).
 *
 * Used descriptors are validated: used in the current wrap where we expect
 * one (some published descriptor not yet used), id < num, id outstanding and
 * published, chain no longer than what is published and not yet used, len no
 * more than the chain's writable length. The first violation marks the queue
 * broken; nothing is read or written out of bounds before or after.
 *
 * Event suppression. Kicks: the device event area (lib/vhost
 * vhost_enable_notify_packed writes it). Interrupts: the driver event area,
 * DISABLE while suppressed, ENABLE when armed, or with event idx DESC and
 * off_wrap = the next used position and its wrap counter (lib/vhost
 * vhost_vring_call_packed reads it). Both flags and off_wrap have shadows and
 * are written only when they change.
 *
 * Concurrency: one driver thread per queue (see virtq.h); the device runs
 * concurrently. Each barrier names what it orders and the lib/vhost code it
 * pairs with (DPDK 22.11 lib/vhost/virtio_net.c, vhost.h, vhost.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_atomic.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "virtq.h"
#include "virtq_burst.h"
#include "virtq_private.h"
#include "virtq_ring.h"

/* Offset of each event suppression area in ring memory. */
#define VIRTQ_PACKED_EVENT_GAP 64

/* Wrap counter of a free-running position (1 in even laps). */
static inline bool
virtq_pos_wrap_packed(const struct virtq *vq, uint16_t pos)
{
	return ((pos / vq->params.num) & 1) == 0;
}

/* The spec's 16-bit form of a position: slot, wrap counter in bit 15. */
static inline uint16_t
virtq_off_wrap_packed(const struct virtq *vq, uint16_t pos, bool w)
{
	return (uint16_t)((pos & vq->mask) | ((uint16_t)w << VIRTQ_EVENT_WRAP_SHIFT));
}

/* Move a position by n <= num slots; flip its wrap counter when it passes num. */
static inline void
virtq_advance_packed(const struct virtq *vq, uint16_t *pos, bool *w, uint16_t n)
{
	if ((uint32_t)(*pos & vq->mask) + n >= vq->params.num)
		*w = !*w;
	*pos = (uint16_t)(*pos + n);
}

size_t
virtq_ring_mem_size_packed(uint16_t num)
{
	return (size_t)num * sizeof(struct virtq_packed_desc) + VIRTQ_PACKED_EVENT_GAP +
		sizeof(struct virtq_packed_event);
}

/*
 * The ring memory is zeroed. Start at position S = start_idx (slot s, wrap
 * W) as a device given SET_VRING_BASE(virtq_vring_base()) expects: nothing is
 * available, nothing is used. Slots s..num-1 look used in wrap !W (the lap
 * before), slots 0..s-1 look used in wrap W (done in this lap): neither is
 * available to a device at S, and neither looks used to us until the device
 * writes it. With start_idx 0 this is the all-zero fresh ring.
 * Interrupts start suppressed (driver event flags DISABLE). The device event
 * area is the device's: zero (ENABLE) until it writes it.
 */
void
virtq_init_packed(struct virtq *vq, void *ring_mem)
{
	uint16_t num = vq->params.num;
	uint16_t start = vq->params.start_idx;
	uint16_t s = start & vq->mask;
	bool w = virtq_pos_wrap_packed(vq, start);
	size_t desc_size = (size_t)num * sizeof(struct virtq_packed_desc);
	/* Through void *: the offsets keep each area aligned (ring_mem is
	 * VIRTQ_RING_ALIGN aligned, checked by virtq_init()).
	 */
	void *driver = (uint8_t *)ring_mem + desc_size;
	void *device = (uint8_t *)ring_mem + desc_size + VIRTQ_PACKED_EVENT_GAP;
	uint16_t i;

	vq->packed.desc = ring_mem;
	vq->packed.driver = driver;
	vq->packed.device = device;
	vq->desc_area = vq->packed.desc;
	vq->driver_area = vq->packed.driver;
	vq->device_area = vq->packed.device;

	for (i = 0; i < num; i++)
		vq->packed.desc[i].flags = virtq_used_bits_packed(i < s ? w : !w);

	vq->packed.avail_wrap = w;
	vq->packed.used_wrap = w;
	vq->packed.head_flags = 0;
	vq->packed.event_flags = VIRTQ_EVENT_F_DISABLE;
	vq->packed.event_off_wrap = 0;
	vq->packed.ord_end = start;
	vq->packed.ord_len = 0;
	vq->packed.driver->flags = vq->packed.event_flags;
	vq->packed.driver->off_wrap = vq->packed.event_off_wrap;
	vq->intr_enabled = false;
	vq->event_left = false;
}

/*
 * Store a head's flags, the last store of its chain. Release: every earlier
 * store of the chain (and of chains added after it) before the flags; pairs
 * with the device's load-acquire of the head flags before it reads the
 * descriptors (lib/vhost desc_is_avail, called from fill_vec_buf_packed,
 * virtio_dev_rx_sync_batch_check and vhost_reserve_avail_batch_packed).
 */
static inline void
virtq_store_head_flags_packed(struct virtq *vq, uint16_t pos, uint16_t flags)
{
	virtq_store_flags_packed(&vq->packed.desc[pos & vq->mask], flags);
}

/*
 * Record a new chain at avail_idx (its descriptors are written) and make its
 * head visible, or hold the head back if it is the first unpublished chain.
 */
static inline void
virtq_commit_chain_packed(struct virtq *vq, uint16_t id, uint16_t head_flags, uint16_t ndescs,
			  uint16_t pos, bool w)
{
	if (vq->avail_idx == vq->avail_published)
		vq->packed.head_flags = head_flags;    /* published by kick_prepare */
	else
		virtq_store_head_flags_packed(vq, vq->avail_idx, head_flags);
	vq->next[id] = vq->avail_idx;              /* in flight: its position */
	vq->avail_idx = pos;
	vq->packed.avail_wrap = w;
	vq->num_free = (uint16_t)(vq->num_free - ndescs);
}

/* Take a free buffer id (there is one: ids in flight <= slots in flight < num). */
static inline uint16_t
virtq_alloc_id_packed(struct virtq *vq)
{
	uint16_t id = vq->free_head;

	vq->free_head = vq->next[id];
	return id;
}

static inline void
virtq_free_id_packed(struct virtq *vq, uint16_t id)
{
	struct virtq_head *h = &vq->heads[id];

	vq->num_free = (uint16_t)(vq->num_free + h->ndescs);
	/* cookie NULL marks the id free; the other fields are rewritten by
	 * the next add.
	 */
	h->cookie = NULL;
	/* When no id was free, free_head was stale; the list is walked by count. */
	vq->next[id] = vq->free_head;
	vq->free_head = id;
}

/*
 * An indirect chain (2.8.19): the elements go in the table of the buffer
 * id, in the packed descriptor format with WRITE as the only flag (no NEXT:
 * the table length says where the chain ends; id unused). One ring slot
 * carries the table's address and length, the id, and INDIRECT (never NEXT
 * nor WRITE). The table is free to rewrite: its id was not in flight, so the
 * device finished reading it. Plain stores: the device reads neither table
 * nor descriptor before the head flags, stored last with a release (held
 * back until virtq_kick_prepare_packed() if this is the first unpublished
 * head).
 */
static void
virtq_add_indirect_packed(struct virtq *vq, const struct virtq_sg *sg, uint16_t out,
			  uint16_t in, void *cookie, uint16_t id)
{
	uint16_t total = (uint16_t)(out + in);
	struct virtq_packed_desc *t = virtq_indirect_table(vq, id);
	uint16_t pos = vq->avail_idx;
	bool w = vq->packed.avail_wrap;
	struct virtq_packed_desc *d = &vq->packed.desc[pos & vq->mask];
	uint64_t in_len = 0;
	uint16_t i;

	for (i = 0; i < total; i++) {
		if (i >= out)
			in_len += sg[i].len;
		t[i].addr = sg[i].addr;
		t[i].len = sg[i].len;
		t[i].id = 0;
		t[i].flags = i >= out ? VIRTQ_DESC_F_WRITE : 0;
	}
	d->addr = (uint64_t)(uintptr_t)t;
	d->len = (uint32_t)total * VIRTQ_DESC_SIZE;
	d->id = id;

	vq->heads[id].cookie = cookie;
	vq->heads[id].ndescs = 1;
	vq->heads[id].nin = in;
	vq->heads[id].in_len = in_len > UINT32_MAX ? UINT32_MAX : (uint32_t)in_len;
	vq->stats.indirect++;
	virtq_advance_packed(vq, &pos, &w, 1);
	virtq_commit_chain_packed(vq, id,
		virtq_avail_bits_packed(vq->packed.avail_wrap) | VIRTQ_DESC_F_INDIRECT, 1, pos, w);
}

/*
 * Descriptor fields and non-head flags are plain stores (relaxed atomics for
 * the flags, which the device may be polling): the device reads none of them
 * before it sees the head flags, stored last with a release.
 */
static __rte_always_inline void
virtq_add_chain_packed(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		       void *cookie, uint16_t id)
{
	uint16_t total = (uint16_t)(out + in);
	uint16_t pos = vq->avail_idx;
	bool w = vq->packed.avail_wrap;
	uint16_t head_flags = 0;
	uint64_t in_len = 0;
	uint16_t i;

	if (virtq_chain_indirect(vq, total)) {
		virtq_add_indirect_packed(vq, sg, out, in, cookie, id);
		return;
	}
	for (i = 0; i < total; i++) {
		struct virtq_packed_desc *d = &vq->packed.desc[pos & vq->mask];
		uint16_t flags = virtq_avail_bits_packed(w) | virtq_chain_flags(i, out, total);

		if (i >= out)
			in_len += sg[i].len;
		d->addr = sg[i].addr;
		d->len = sg[i].len;
		d->id = id;
		if (i == 0)
			head_flags = flags;
		else
			__atomic_store_n(&d->flags, flags, __ATOMIC_RELAXED);
		virtq_advance_packed(vq, &pos, &w, 1);
	}

	vq->heads[id].cookie = cookie;
	vq->heads[id].ndescs = total;
	vq->heads[id].nin = in;
	vq->heads[id].in_len = in_len > UINT32_MAX ? UINT32_MAX : (uint32_t)in_len;
	virtq_commit_chain_packed(vq, id, head_flags, total, pos, w);
}

void
virtq_add_packed(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		 void *cookie)
{
	virtq_add_chain_packed(vq, sg, out, in, cookie, virtq_alloc_id_packed(vq));
}

/* In order: a chain's buffer id is the slot of its first descriptor. */
void
virtq_add_packed_io(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		    void *cookie)
{
	virtq_add_chain_packed(vq, sg, out, in, cookie, vq->avail_idx & vq->mask);
}

/*
 * The rx refill and single-segment tx paths: one descriptor per buffer.
 * Positions and counters are kept in locals and written back once: the
 * release stores of head flags are compiler barriers that would otherwise
 * reload and store the queue's fields for every buffer.
 * Publication: the first unpublished head (at pub) is held back while the
 * descriptors after it are written; for receive buffers, when the position
 * reaches a multiple of VIRTQ_PACKED_PUBLISH its store publishes the group,
 * and the next descriptor is the new held head. A group left incomplete,
 * and every send buffer, waits for the next call or virtq_kick_prepare().
 */
static __rte_always_inline uint16_t
virtq_add_bufs_packed_common(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
			     uint16_t n, bool in, bool io)
{
	const uint16_t dir = in ? VIRTQ_DESC_F_WRITE : 0;
	const uint16_t mask = vq->mask;
	struct virtq_packed_desc *ring = vq->packed.desc;
	struct virtq_head *heads = vq->heads;
	uint16_t *next = vq->next;
	uint16_t pos = vq->avail_idx;
	bool w = vq->packed.avail_wrap;
	uint16_t free_head = vq->free_head;
	uint16_t pub = vq->avail_published;
	uint16_t held_flags = vq->packed.head_flags;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct virtq_packed_desc *d = &ring[pos & mask];
		uint16_t flags = dir | virtq_avail_bits_packed(w);
		struct virtq_head *h;
		uint16_t id;

		if (cookies[i] == NULL)
			break;
		if (io) {
			id = pos & mask;
		} else {
			id = free_head;
			free_head = next[id];
			next[id] = pos;    /* in flight: its position */
		}
		h = &heads[id];
		d->addr = sg[i].addr;
		d->len = sg[i].len;
		d->id = id;
		h->cookie = cookies[i];
		h->ndescs = 1;
		h->nin = in;
		h->in_len = in ? sg[i].len : 0;
		if (pos == pub)
			held_flags = flags;     /* the first unpublished head */
		else
			virtq_store_head_flags_packed(vq, pos, flags);
		pos = (uint16_t)(pos + 1);
		if ((pos & mask) == 0)
			w = !w;
		if (in && (pos & (VIRTQ_PACKED_PUBLISH - 1)) == 0) {
			/* pub != pos: at least this descriptor is unpublished. */
			virtq_store_head_flags_packed(vq, pub, held_flags);
			pub = pos;
		}
	}
	vq->avail_published = pub;
	vq->packed.head_flags = held_flags;
	vq->avail_idx = pos;
	vq->packed.avail_wrap = w;
	vq->free_head = free_head;
	vq->num_free = (uint16_t)(vq->num_free - i);
	return i;
}

uint16_t
virtq_add_bufs_packed(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
		      uint16_t n, bool in)
{
	return virtq_add_bufs_packed_common(vq, sg, cookies, n, in, false);
}

/* In order: virtq_put_packed() and virtq_take_packed() (virtq_burst.h). */
VIRTQ_LAYOUT_DEFINE_IO_BURST(packed, VIRTQ_LAYOUT_PACKED)

/*
 * Map the device's off_wrap (slot, wrap counter) to the free-running position
 * it names, at most num behind @p new_idx (whose wrap counter is @p w) or
 * ahead of it in the same lap.
 */
static inline uint16_t
virtq_event_pos_packed(const struct virtq *vq, uint16_t off_wrap, uint16_t new_idx, bool w)
{
	uint16_t off = off_wrap & (uint16_t)~(1u << VIRTQ_EVENT_WRAP_SHIFT);
	uint16_t pos = (uint16_t)((new_idx & (uint16_t)~vq->mask) + off);

	if ((bool)(off_wrap >> VIRTQ_EVENT_WRAP_SHIFT) != w)
		pos = (uint16_t)(pos - vq->params.num);   /* the previous lap */
	return pos;
}

bool
virtq_kick_prepare_packed(struct virtq *vq, uint16_t old)
{
	uint16_t new_idx = vq->avail_idx;
	uint16_t flags;
	bool need;

	/* The held-back head, if any: its release store publishes every chain
	 * added after it (see virtq_store_head_flags_packed()).
	 */
	if (vq->avail_published != new_idx) {
		virtq_store_head_flags_packed(vq, vq->avail_published, vq->packed.head_flags);
		vq->avail_published = new_idx;
	}

	/*
	 * Full barrier: our store of the head flags before our load of the
	 * device event flags; pairs with the device's store of its event flags
	 * (lib/vhost vhost_enable_notify_packed) before its re-check of the ring
	 * (desc_is_avail on the next poll). Without it both sides could miss
	 * each other's update and the device would sleep on new buffers.
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);

	/* Acquire: our load of flags before our load of off_wrap; pairs with
	 * the release fence in vhost_enable_notify_packed between its store of
	 * off_wrap and its store of flags = DESC.
	 */
	flags = __atomic_load_n(&vq->packed.device->flags, __ATOMIC_ACQUIRE);
	if (flags == VIRTQ_EVENT_F_DISABLE) {
		need = false;
	} else if (flags == VIRTQ_EVENT_F_DESC && vq->params.event_idx) {
		uint16_t off_wrap = __atomic_load_n(&vq->packed.device->off_wrap,
						    __ATOMIC_RELAXED);

		if ((off_wrap & (uint16_t)~(1u << VIRTQ_EVENT_WRAP_SHIFT)) >= vq->params.num)
			need = true;    /* not a slot: notify, a spurious kick is harmless */
		else
			/* Between kicks at most num descriptors are added, so
			 * new - old modulo 2^16 is exact.
			 */
			need = virtq_need_event(virtq_event_pos_packed(vq, off_wrap, new_idx,
								       vq->packed.avail_wrap),
						new_idx, old);
	} else {
		/* ENABLE; DESC without event idx or an undefined value: the
		 * device broke a rule, notifying is always safe.
		 */
		need = true;
	}
	return need;
}

/*
 * Read the used descriptor at position @p pos (wrap @p w), with @p inflight
 * published slots not yet used from @p pos on: its id (checked < num) and
 * len, each loaded once (the device cannot change what we checked).
 * @return 1 read; 0 not used yet; -1 bad (queue marked broken).
 */
static inline int
virtq_read_used_packed(struct virtq *vq, uint16_t pos, bool w, uint16_t inflight,
		       uint16_t *idp, uint32_t *lenp)
{
	const struct virtq_packed_desc *d = &vq->packed.desc[pos & vq->mask];
	uint16_t flags;

	/*
	 * Acquire: our load of the flags before our loads of id and len; pairs
	 * with the device's release between its stores of id/len and of the
	 * flags (lib/vhost vhost_flush_enqueue_shadow_packed and
	 * vhost_flush_enqueue_batch_packed: release fence;
	 * vhost_flush_dequeue_shadow_packed: store-release of the flags).
	 */
	flags = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);
	if (!virtq_is_used_packed(flags, w))
		return 0;
	if (inflight == 0) {
		virtq_bad_used(vq, "used descriptor where none was expected");
		return -1;
	}
	*idp = __atomic_load_n(&d->id, __ATOMIC_RELAXED);
	*lenp = __atomic_load_n(&d->len, __ATOMIC_RELAXED);
	if (*idp >= vq->params.num) {
		virtq_bad_used(vq, "used id out of range");
		return -1;
	}
	return 1;
}

/*
 * The used len of chain @p h: 0 if nothing in it is device-writable (len
 * means nothing then), else at most its writable length.
 * @return 0, or -1 bad (queue marked broken).
 */
static inline int
virtq_check_len_packed(struct virtq *vq, const struct virtq_head *h, uint32_t *lenp)
{
	if (h->nin == 0)
		*lenp = 0;
	else if (*lenp > h->in_len) {
		virtq_bad_used(vq, "used len exceeds the writable length");
		return -1;
	}
	return 0;
}

/*
 * The checks of a used chain once its head @p h is known, both orders:
 * @p outstanding, its buffer is in flight and published; @p fits, the chain
 * ends within the published descriptors; its len (@p lenp) within what it
 * may write. 0, or -1 (queue marked broken).
 */
static inline int
virtq_check_head_packed(struct virtq *vq, const struct virtq_head *h, bool outstanding,
			bool fits, uint32_t *lenp)
{
	if (!outstanding) {
		virtq_bad_used(vq, "used id is not an outstanding buffer");
		return -1;
	}
	if (!fits) {
		virtq_bad_used(vq, "used chain runs past the published descriptors");
		return -1;
	}
	return virtq_check_len_packed(vq, h, lenp);
}

/*
 * Validate the used descriptor at position @p pos (wrap @p w), with @p
 * inflight published slots not yet used from @p pos on.
 * @return 1 and its id and len; 0 not used yet; -1 bad (queue marked broken).
 */
static inline int
virtq_check_used_packed(struct virtq *vq, uint16_t pos, bool w, uint16_t inflight,
			uint16_t *idp, uint32_t *lenp)
{
	const struct virtq_head *h;
	uint16_t id;
	uint32_t len;
	int r = virtq_read_used_packed(vq, pos, w, inflight, &id, &len);

	if (r != 1)
		return r;
	h = &vq->heads[id];
	/* In flight and published: its position is before avail_published
	 * (all positions in flight are within num of avail_idx, modulo 2^16).
	 */
	if (virtq_check_head_packed(vq, h,
				    h->cookie != NULL &&
				    (uint16_t)(vq->avail_idx - vq->next[id]) >
				    (uint16_t)(vq->avail_idx - vq->avail_published),
				    h->ndescs <= inflight, &len) != 0)
		return -1;
	*idp = id;
	*lenp = len;
	return 1;
}

uint16_t
virtq_get_used_packed(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max)
{
	/* Locals, written back once (the acquire loads are compiler barriers). */
	uint16_t pos = vq->last_used;
	bool w = vq->packed.used_wrap;
	uint16_t inflight = (uint16_t)(vq->avail_published - pos);
	uint16_t n;

	for (n = 0; n < max; n++) {
		uint16_t id;
		uint32_t len;
		struct virtq_head *h;

		if (virtq_check_used_packed(vq, pos, w, inflight, &id, &len) != 1)
			break;
		h = &vq->heads[id];
		cookies[n] = h->cookie;
		if (lens != NULL)
			lens[n] = len;
		/* The device skipped the chain's other slots (2.8.7). */
		virtq_advance_packed(vq, &pos, &w, h->ndescs);
		inflight = (uint16_t)(inflight - h->ndescs);
		virtq_free_id_packed(vq, id);
	}
	vq->last_used = pos;
	vq->packed.used_wrap = w;
	return n;
}

/*
 * Walk the used descriptors without taking them. Linear in the count; each is
 * validated as get_used would, except that an id returned twice in the
 * window is only caught when taken.
 */
uint16_t
virtq_used_count_packed(struct virtq *vq)
{
	uint16_t pos = vq->last_used;
	bool w = vq->packed.used_wrap;
	uint16_t inflight = (uint16_t)(vq->avail_published - vq->last_used);
	uint16_t n = 0;
	uint16_t id;
	uint32_t len;
	int r;

	while ((r = virtq_check_used_packed(vq, pos, w, inflight, &id, &len)) == 1) {
		uint16_t nd = vq->heads[id].ndescs;

		virtq_advance_packed(vq, &pos, &w, nd);
		inflight = (uint16_t)(inflight - nd);
		n++;
	}
	return r < 0 ? 0 : n;
}

/* As virtq_used_count_packed(), counting the chains a batch reported. */
uint16_t
virtq_used_count_packed_io(struct virtq *vq)
{
	struct virtq_take t;
	uint16_t n = 0;

	/* A cursor that is never written back: nothing is taken. */
	virtq_take_begin(vq, &t, VIRTQ_LAYOUT_PACKED, 0);
	for (;;) {
		uint16_t nd;

		if (t.last == t.end) {
			int r = virtq_take_batch_packed(&t);

			if (r < 0)
				return 0;
			if (r == 0)
				return n;
		}
		nd = t.heads[t.last & t.mask].ndescs;
		if ((uint32_t)(t.last & t.mask) + nd >= t.num)
			t.w = !t.w;
		t.last = (uint16_t)(t.last + nd);
		n++;
	}
}

/* Write driver event flags if they change; true if shared memory was written. */
static bool
virtq_set_event_flags_packed(struct virtq *vq, uint16_t flags)
{
	/* Release: our store of off_wrap before flags; pairs with the acquire
	 * fence in lib/vhost vhost_vring_call_packed between its load of
	 * flags (DESC) and its load of off_wrap.
	 */
	return virtq_store_shadowed(&vq->packed.event_flags, &vq->packed.driver->flags, flags,
				    __ATOMIC_RELEASE);
}

/* Write driver event off_wrap if it changes; true if shared memory was written. */
static bool
virtq_set_event_off_wrap_packed(struct virtq *vq, uint16_t off_wrap)
{
	/* Ordered before a later flags store by its release, and against our
	 * later load of the used flags by the fence in virtq_poll_packed().
	 */
	return virtq_store_shadowed(&vq->packed.event_off_wrap, &vq->packed.driver->off_wrap,
				    off_wrap, __ATOMIC_RELAXED);
}

/*
 * The opaque is the spec's form of the next used position: slot in bits
 * 0-14, used wrap counter in bit 15 (what we write as off_wrap).
 */
uint32_t
virtq_enable_intr_prepare_packed(struct virtq *vq)
{
	uint16_t off_wrap = virtq_off_wrap_packed(vq, vq->last_used, vq->packed.used_wrap);
	bool wrote;

	if (vq->params.event_idx) {
		/* "Notify me when the descriptor at off_wrap is made used." */
		wrote = virtq_set_event_off_wrap_packed(vq, off_wrap);
		wrote |= virtq_set_event_flags_packed(vq, VIRTQ_EVENT_F_DESC);
	} else {
		wrote = virtq_set_event_flags_packed(vq, VIRTQ_EVENT_F_ENABLE);
	}
	vq->intr_enabled = true;
	vq->event_left = false;
	if (wrote)
		vq->stats.intr_arms++;
	/* In order: a batch already reported and not all taken. */
	if (vq->params.in_order && vq->packed.ord_end != vq->last_used)
		return off_wrap | VIRTQ_OPAQUE_PENDING;
	return off_wrap;
}

bool
virtq_poll_packed(struct virtq *vq, uint32_t opaque)
{
	uint16_t flags;

	if (opaque & VIRTQ_OPAQUE_PENDING)
		return true;
	/*
	 * Full barrier: our store of the driver event flags / off_wrap (the
	 * arming) before our load of the used flags; pairs with the full
	 * fence in lib/vhost vhost_vring_call_packed between the device's
	 * stores of used flags and its load of the driver event area. Either
	 * the device sees the arming and notifies, or we see its used
	 * descriptor here.
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	flags = __atomic_load_n(&vq->packed.desc[opaque & vq->mask].flags, __ATOMIC_RELAXED);
	return virtq_is_used_packed(flags, (opaque >> VIRTQ_EVENT_WRAP_SHIFT) & 1);
}

void
virtq_disable_intr_packed(struct virtq *vq)
{
	if (!vq->intr_enabled && !vq->event_left)
		return;    /* Already DISABLE: nothing to write. */
	vq->intr_enabled = false;
	vq->event_left = false;
	virtq_set_event_flags_packed(vq, VIRTQ_EVENT_F_DISABLE);
}

/* A buffer id given back without the device (queue stopped: virtq_detach_unused()). */
void
virtq_release_packed(struct virtq *vq, uint16_t id)
{
	virtq_free_id_packed(vq, id);
}

/*
 * The device's next completion stores the flags of the slot at last_used,
 * making AVAIL == USED == used wrap. Until then the slot holds one of the
 * other three combinations of those two bits, and which one depends on its
 * history (our own avail descriptor, a used one of the lap before, a
 * non-head descriptor of an older chain). So: sleep while both bits keep the
 * value they have now. If that value already means used, expected is the
 * "available in this wrap" value instead, which differs from it, so nothing
 * sleeps and the caller finds the completion. A device store of the used
 * flags changes the bits, and so does our own next add to that slot (one
 * spurious wakeup). The relaxed load is only a hint: rte_power_monitor
 * re-reads the address after arming the monitor.
 */
volatile void *
virtq_monitor_addr_packed(struct virtq *vq, uint64_t *expected, uint64_t *mask, uint8_t *size)
{
	struct virtq_packed_desc *d = &vq->packed.desc[vq->last_used & vq->mask];
	uint16_t bits = VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED;
	uint16_t now = __atomic_load_n(&d->flags, __ATOMIC_RELAXED) & bits;

	if (now == virtq_used_bits_packed(vq->packed.used_wrap))
		now = virtq_avail_bits_packed(vq->packed.used_wrap);
	else if (vq->params.in_order && vq->packed.ord_end != vq->last_used)
		/* In order, a batch reported and not all taken: the slot was
		 * skipped and keeps its value; expect another, do not sleep.
		 */
		now ^= VIRTQ_DESC_F_USED;
	*expected = now;
	*mask = bits;
	*size = sizeof(d->flags);
	return &d->flags;
}

/*
 * SET_VRING_BASE of a packed ring carries the device's first avail position
 * as lib/vhost vhost_user_set_vring_base decodes it: slot in bits 0-14, avail
 * wrap counter in bit 15 (the used position and counter start equal).
 */
uint16_t
virtq_vring_base_packed(const struct virtq *vq)
{
	uint16_t start = vq->params.start_idx;

	return virtq_off_wrap_packed(vq, start, virtq_pos_wrap_packed(vq, start));
}
