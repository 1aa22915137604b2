/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Split virtqueue, driver side (virtio 1.2 section 2.7).
 *
 * Ring memory: descriptor table at offset 0, avail ring (with used_event)
 * right after it, used ring (with avail_event) at the next VIRTQ_RING_ALIGN
 * boundary; then, with indirect descriptors, one table per head descriptor
 * (placed by virtq.c).
 *
 * What we publish (avail idx, avail flags, used_event) has a private shadow
 * and is never read back. What the device publishes (used idx, used entries,
 * used flags, avail_event) is read with single loads and every used entry is
 * validated before it is trusted. Descriptor links live in the private
 * vq->next[]; desc->next is written, never read.
 *
 * Concurrency: one driver thread per queue (see virtq.h); the device runs
 * concurrently. Each barrier below names what it orders and the device access
 * it pairs with.
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

/* Offset of the used ring: after the avail ring, at the next ring alignment. */
static size_t
virtq_used_offset_split(uint16_t num)
{
	size_t end = (size_t)virtq_split_desc_size(num) + virtq_split_avail_size(num);

	return (end + VIRTQ_RING_ALIGN - 1) & ~((size_t)VIRTQ_RING_ALIGN - 1);
}

size_t
virtq_ring_mem_size_split(uint16_t num)
{
	return virtq_used_offset_split(num) + virtq_split_used_size(num);
}

/*
 * The ring memory is zeroed. Start as a device given SET_VRING_BASE(start_idx)
 * expects: avail idx = used idx = start_idx. avail_event (device-owned, set
 * before the device runs) = start_idx, which is what a fresh zeroed ring means
 * with start_idx 0: "notify me about the first buffer". Interrupts start
 * suppressed: flag set, or used_event = start_idx - 1, out of reach (the
 * device's used idx must travel 2^16 - 1 entries to cross it).
 */
void
virtq_init_split(struct virtq *vq, void *ring_mem)
{
	uint16_t num = vq->params.num;
	uint16_t start = vq->params.start_idx;
	/* Through void *: the offsets keep each area aligned (ring_mem is
	 * VIRTQ_RING_ALIGN aligned, checked by virtq_init()).
	 */
	void *desc = ring_mem;
	void *avail = (uint8_t *)ring_mem + virtq_split_desc_size(num);
	void *used = (uint8_t *)ring_mem + virtq_used_offset_split(num);

	vq->split.desc = desc;
	vq->split.avail = avail;
	vq->split.used = used;
	vq->split.used_event = virtq_used_event(vq->split.avail, num);
	vq->split.avail_event = virtq_avail_event(vq->split.used, num);
	vq->desc_area = vq->split.desc;
	vq->driver_area = vq->split.avail;
	vq->device_area = vq->split.used;

	vq->split.avail->idx = start;
	vq->split.used->idx = start;
	*vq->split.avail_event = start;
	if (vq->params.event_idx) {
		/* The driver must keep flags at 0 with event idx (2.7.7.1). */
		vq->avail_flags = 0;
		vq->used_event = (uint16_t)(start - 1);
		*vq->split.used_event = vq->used_event;
	} else {
		vq->avail_flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
		vq->split.avail->flags = vq->avail_flags;
	}
	vq->split.ord_head = vq->free_head;
	vq->intr_enabled = false;
	vq->event_left = false;
}

/* Return a chain to the free list (private links only). */
static void
virtq_free_chain_split(struct virtq *vq, uint16_t head)
{
	struct virtq_head *h = &vq->heads[head];
	uint16_t last = head;
	uint16_t i;

	for (i = 1; i < h->ndescs; i++)
		last = vq->next[last];
	/* When num_free is 0, free_head is stale; the list is walked by count. */
	vq->next[last] = vq->free_head;
	vq->free_head = head;
	vq->num_free += h->ndescs;
	/* cookie NULL marks the head free; the next add rewrites the rest. */
	h->cookie = NULL;
}

/*
 * Write a chain into indirect table @p t: elements linked by next = i + 1
 * (indices within the table), the same WRITE/NEXT rule as a direct chain.
 * @return the sum of the writable lengths.
 */
static uint64_t
virtq_fill_table_split(struct virtq_desc *t, const struct virtq_sg *sg, uint16_t out,
		       uint32_t total)
{
	uint64_t in_len = 0;
	uint32_t i;

	for (i = 0; i < total; i++) {
		uint16_t flags = virtq_chain_flags(i, out, total);

		if (i >= out)
			in_len += sg[i].len;
		t[i].addr = sg[i].addr;
		t[i].len = sg[i].len;
		t[i].flags = flags;
		t[i].next = (flags & VIRTQ_DESC_F_NEXT) ? (uint16_t)(i + 1) : 0;
	}
	return in_len;
}

/*
 * An indirect chain: the elements go in the table of the head descriptor,
 * which alone is taken (free_head; @p next_free becomes the next one: the
 * free list's or, in order, the next index) and flagged INDIRECT (never NEXT,
 * never WRITE: 2.7.5.3.1). The table is free to rewrite: its head was not
 * outstanding, so the device finished with it (it read the table before
 * making the head used). Plain stores, published like a direct chain by the
 * release store of the avail idx in virtq_kick_prepare_split().
 */
static void
virtq_add_indirect_split(struct virtq *vq, const struct virtq_sg *sg, uint16_t out,
			 uint16_t in, void *cookie, uint16_t next_free)
{
	uint32_t total = (uint32_t)out + in;
	uint16_t head = vq->free_head;
	struct virtq_desc *t = virtq_indirect_table(vq, head);
	struct virtq_desc *d = &vq->split.desc[head];
	uint64_t in_len = virtq_fill_table_split(t, sg, out, total);

	d->addr = (uint64_t)(uintptr_t)t;
	d->len = total * VIRTQ_DESC_SIZE;
	d->flags = VIRTQ_DESC_F_INDIRECT;
	d->next = 0;
	vq->free_head = next_free;
	vq->num_free--;

	vq->heads[head].cookie = cookie;
	vq->heads[head].ndescs = 1;
	vq->heads[head].nin = in;
	vq->heads[head].in_len = in_len > UINT32_MAX ? UINT32_MAX : (uint32_t)in_len;
	vq->stats.indirect++;

	vq->split.avail->ring[vq->avail_idx & vq->mask] = head;
	vq->avail_idx++;
}

/* The descriptor after @p idx in a chain: the free list's, or in order the next index. */
static __rte_always_inline uint16_t
virtq_next_desc_split(const struct virtq *vq, uint16_t idx, bool io)
{
	return io ? (uint16_t)((idx + 1) & vq->mask) : vq->next[idx];
}

/*
 * Descriptors and the avail ring entry are plain stores: the device may not
 * read them before it sees the avail idx that virtq_kick_prepare_split()
 * publishes with a release store. In order (@p io), chains take descriptors
 * in index order from free_head, wrapping at num: completions come in the
 * same order, so the free descriptors are always the ones from free_head on.
 */
static __rte_always_inline void
virtq_add_chain_split(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		      void *cookie, bool io)
{
	uint32_t total = (uint32_t)out + in;
	uint16_t head = vq->free_head;
	uint16_t idx = head;
	uint64_t in_len = 0;
	uint32_t i;

	if (virtq_chain_indirect(vq, total)) {
		virtq_add_indirect_split(vq, sg, out, in, cookie,
					 virtq_next_desc_split(vq, head, io));
		return;
	}
	for (i = 0; i < total; i++) {
		struct virtq_desc *d = &vq->split.desc[idx];
		uint16_t flags = virtq_chain_flags(i, out, total);
		uint16_t nxt = virtq_next_desc_split(vq, idx, io);

		if (i >= out)
			in_len += sg[i].len;
		d->addr = sg[i].addr;
		d->len = sg[i].len;
		d->flags = flags;
		d->next = (flags & VIRTQ_DESC_F_NEXT) ? nxt : 0;
		idx = nxt;
	}
	vq->free_head = idx;
	vq->num_free -= total;

	vq->heads[head].cookie = cookie;
	vq->heads[head].ndescs = total;
	vq->heads[head].nin = in;
	vq->heads[head].in_len = in_len > UINT32_MAX ? UINT32_MAX : (uint32_t)in_len;

	/* Slot avail_idx modulo num: the device has read the entry num indices
	 * back, since fewer than num chains are outstanding (one was free).
	 */
	vq->split.avail->ring[vq->avail_idx & vq->mask] = head;
	vq->avail_idx++;
}

void
virtq_add_split(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		void *cookie)
{
	virtq_add_chain_split(vq, sg, out, in, cookie, false);
}

void
virtq_add_split_io(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		   void *cookie)
{
	virtq_add_chain_split(vq, sg, out, in, cookie, true);
}

/* Release: our stores of descriptors and avail ring entries before the avail
 * idx; pairs with the device's load-acquire of avail idx before it reads the
 * entries (lib/vhost virtio_dev_rx_split, virtio_dev_tx_split).
 */
static inline void
virtq_publish_split(struct virtq *vq, uint16_t idx)
{
	__atomic_store_n(&vq->split.avail->idx, idx, __ATOMIC_RELEASE);
	vq->avail_published = idx;
}

/* The rx refill and single-segment tx paths: one descriptor per buffer. */
uint16_t
virtq_add_bufs_split(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
		     uint16_t n, bool in)
{
	const uint16_t flags = in ? VIRTQ_DESC_F_WRITE : 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		uint16_t head = vq->free_head;
		struct virtq_desc *d = &vq->split.desc[head];
		struct virtq_head *h = &vq->heads[head];

		if (cookies[i] == NULL)
			break;
		d->addr = sg[i].addr;
		d->len = sg[i].len;
		d->flags = flags;
		d->next = 0;
		vq->free_head = vq->next[head];
		vq->num_free--;
		h->cookie = cookies[i];
		h->ndescs = 1;
		h->nin = in;
		h->in_len = in ? sg[i].len : 0;
		vq->split.avail->ring[vq->avail_idx & vq->mask] = head;
		vq->avail_idx++;
	}
	return i;
}

/* In order: virtq_put_split() and virtq_take_split() (virtq_burst.h). */
VIRTQ_LAYOUT_DEFINE_IO_BURST(split, VIRTQ_LAYOUT_SPLIT)

bool
virtq_kick_prepare_split(struct virtq *vq, uint16_t old)
{
	uint16_t new_idx = vq->avail_idx;
	bool need;

	if (vq->avail_published != new_idx)
		virtq_publish_split(vq, new_idx);

	/* Full barrier: our store of avail idx before our load of used flags /
	 * avail_event; pairs with the device's store of flags / avail_event
	 * (lib/vhost vhost_enable_notify_split) before its re-check load of
	 * avail idx. Without it both sides could miss each other's update and
	 * the device would sleep on new buffers.
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);

	if (vq->params.event_idx) {
		uint16_t ev = __atomic_load_n(vq->split.avail_event, __ATOMIC_RELAXED);

		/* Between kicks at most num entries are added, so new - old
		 * modulo 2^16 is exact.
		 */
		need = virtq_need_event(ev, new_idx, old);
	} else {
		uint16_t flags = __atomic_load_n(&vq->split.used->flags, __ATOMIC_RELAXED);

		need = !(flags & VIRTQ_USED_F_NO_NOTIFY);
	}
	return need;
}

/*
 * Write used_event / avail flags if they change; true if shared memory was
 * written. Relaxed: ordered against our later load of used idx by the fence
 * in virtq_poll_split() when it matters (arming).
 */
static bool
virtq_set_used_event_split(struct virtq *vq, uint16_t v)
{
	return virtq_store_shadowed(&vq->used_event, vq->split.used_event, v, __ATOMIC_RELAXED);
}

static bool
virtq_set_avail_flags_split(struct virtq *vq, uint16_t flags)
{
	return virtq_store_shadowed(&vq->avail_flags, &vq->split.avail->flags, flags,
				    __ATOMIC_RELAXED);
}

uint16_t
virtq_get_used_split(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max)
{
	uint16_t num = vq->params.num;
	uint16_t pending;
	uint16_t n;
	int used = virtq_used_pending_split(vq, num,
					    "used idx moved more than num past the last used");

	if (used < 0)
		return 0;
	pending = RTE_MIN((uint16_t)used, max);

	for (n = 0; n < pending; n++) {
		const struct virtq_used_elem *e = &vq->split.used->ring[vq->last_used & vq->mask];
		/* Each field read once: the device cannot change what we checked. */
		uint32_t id = __atomic_load_n(&e->id, __ATOMIC_RELAXED);
		uint32_t len = __atomic_load_n(&e->len, __ATOMIC_RELAXED);
		struct virtq_head *h;

		if (id >= num) {
			virtq_bad_used(vq, "used id out of range");
			break;
		}
		h = &vq->heads[id];
		if (h->cookie == NULL) {
			virtq_bad_used(vq, "used id is not an outstanding head");
			break;
		}
		if (h->nin == 0)
			len = 0;    /* Nothing device-writable: len means nothing. */
		else if (len > h->in_len) {
			virtq_bad_used(vq, "used len exceeds the writable length");
			break;
		}
		cookies[n] = h->cookie;
		if (lens != NULL)
			lens[n] = len;
		virtq_free_chain_split(vq, (uint16_t)id);
		vq->last_used++;
	}

	/* Disarmed with event idx: keep used_event out of the device's reach. */
	if (vq->params.event_idx && !vq->intr_enabled && !vq->broken &&
	    (uint16_t)(vq->last_used - vq->used_event) >= 0x8000)
		virtq_used_event_refresh_split(vq);
	return n;
}

/*
 * Disarmed with event idx: used_event = L - 1 for some earlier last used L.
 * Once we are 2^15 past it, move it to last_used - 1 again, so the device
 * (at most num <= 2^15 ahead of us) never crosses it. The store needs no
 * barrier: the device can only complete buffers we publish later with a
 * release store of avail idx, which orders this store before them. Rare:
 * once per 2^15 completions.
 */
void
virtq_used_event_refresh_split(struct virtq *vq)
{
	virtq_set_used_event_split(vq, (uint16_t)(vq->last_used - 1));
}

uint16_t
virtq_used_count_split_io(struct virtq *vq)
{
	int used = virtq_used_pending_split(vq, (uint16_t)(vq->avail_published - vq->last_used),
					    "used idx moved past the published buffers");

	return used < 0 ? 0 : (uint16_t)used;
}

uint16_t
virtq_used_count_split(struct virtq *vq)
{
	int used = virtq_used_pending_split(vq, vq->params.num,
					    "used idx moved more than num past the last used");

	return used < 0 ? 0 : (uint16_t)used;
}

uint32_t
virtq_enable_intr_prepare_split(struct virtq *vq)
{
	bool wrote;

	if (vq->params.event_idx)
		wrote = virtq_set_used_event_split(vq, vq->last_used);
	else
		wrote = virtq_set_avail_flags_split(vq,
			vq->avail_flags & (uint16_t)~VIRTQ_AVAIL_F_NO_INTERRUPT);
	vq->intr_enabled = true;
	vq->event_left = false;
	if (wrote)
		vq->stats.intr_arms++;
	return vq->last_used;
}

bool
virtq_poll_split(struct virtq *vq, uint32_t opaque)
{
	uint16_t used_idx;

	/* Full barrier: our store of avail flags / used_event (the arming)
	 * before our load of used idx; pairs with the device's full barrier
	 * between its store of used idx and its load of flags / used_event
	 * (lib/vhost vhost_vring_call_split).
	 * Either the device sees the arming and notifies, or we see its used
	 * idx here.
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	used_idx = __atomic_load_n(&vq->split.used->idx, __ATOMIC_RELAXED);
	return (uint16_t)opaque != used_idx;
}

void
virtq_disable_intr_split(struct virtq *vq)
{
	if (!vq->intr_enabled && !vq->event_left)
		return;    /* Already suppressed; get_used keeps used_event away. */
	vq->intr_enabled = false;
	vq->event_left = false;
	if (vq->params.event_idx)
		virtq_set_used_event_split(vq, (uint16_t)(vq->last_used - 1));
	else
		virtq_set_avail_flags_split(vq, vq->avail_flags | VIRTQ_AVAIL_F_NO_INTERRUPT);
}

/* A chain given back without the device (queue stopped: virtq_detach_unused()). */
void
virtq_release_split(struct virtq *vq, uint16_t head)
{
	virtq_free_chain_split(vq, head);
}

/*
 * The device's next completion stores used->idx: a monitor may sleep while it
 * still reads the last used index.
 */
volatile void *
virtq_monitor_addr_split(struct virtq *vq, uint64_t *expected, uint64_t *mask, uint8_t *size)
{
	*expected = vq->last_used;
	*mask = UINT16_MAX;
	*size = sizeof(vq->split.used->idx);
	return &vq->split.used->idx;
}

/* SET_VRING_BASE of a split ring carries the first avail (= used) index. */
uint16_t
virtq_vring_base_split(const struct virtq *vq)
{
	return vq->params.start_idx;
}
