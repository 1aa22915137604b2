/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Fake virtio device over plain memory: the device half of the ring, as a
 * vhost-user backend would drive it. See fake_device.h.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>

#include "fake_device.h"
#include "virtq_ring.h"

struct fake_dev_ops {
	/** SET_VRING_BASE + SET_VRING_ADDR: decode the base, check the ring. */
	int (*attach)(struct fake_dev *d, uint16_t vring_base, void *desc_area,
		      void *driver_area, void *device_area);
	uint16_t (*vring_base)(const struct fake_dev *d);
	int (*avail_count)(struct fake_dev *d);
	int (*pop)(struct fake_dev *d, struct fake_dev_chain *c);
	/** The device gives @p c back: -EINVAL if it does not hold it. */
	int (*release)(struct fake_dev *d, const struct fake_dev_chain *c);
	/** A used entry; packed: the used position then moves by @p count. */
	void (*push_raw)(struct fake_dev *d, uint32_t id, uint32_t len, uint16_t count);
	bool (*flush)(struct fake_dev *d);
	void (*set_no_notify)(struct fake_dev *d, bool no_notify);
	void (*set_avail_event)(struct fake_dev *d, uint16_t v);
	int (*used_jump)(struct fake_dev *d);
};

static int
fake_dev_driver_error(struct fake_dev *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int
fake_dev_driver_error(struct fake_dev *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->error, sizeof(d->error), fmt, ap);
	va_end(ap);
	d->driver_errors++;
	return -EPROTO;
}

/* The table of one layout, from its fake_dev_<op>_<sfx> functions. */
#define FAKE_DEV_OPS(sfx) { \
	.attach = fake_dev_attach_##sfx, \
	.vring_base = fake_dev_vring_base_##sfx, \
	.avail_count = fake_dev_avail_count_##sfx, \
	.pop = fake_dev_pop_##sfx, \
	.release = fake_dev_release_##sfx, \
	.push_raw = fake_dev_push_raw_##sfx, \
	.flush = fake_dev_flush_##sfx, \
	.set_no_notify = fake_dev_set_no_notify_##sfx, \
	.set_avail_event = fake_dev_set_avail_event_##sfx, \
	.used_jump = fake_dev_used_jump_##sfx, \
}

/* ---- split ---- */

static int
fake_dev_attach_split(struct fake_dev *d, uint16_t vring_base, void *desc_area,
		      void *driver_area, void *device_area)
{
	uint16_t num = d->params.num;

	/* vhost_user_set_vring_base: last_avail = last_used = the base. */
	d->last_avail = vring_base;
	d->used_idx = vring_base;
	d->used_published = vring_base;
	d->signalled_used = vring_base;

	d->split.desc = desc_area;
	d->split.avail = driver_area;
	d->split.used = device_area;
	d->split.used_event = virtq_used_event(d->split.avail, num);
	d->split.avail_event = virtq_avail_event(d->split.used, num);
	/* SET_VRING_BASE(start_idx): the device's own view; ring memory is the
	 * driver's to initialise, so check it agrees.
	 */
	if (__atomic_load_n(&d->split.used->idx, __ATOMIC_RELAXED) != vring_base)
		return fake_dev_driver_error(d, "ring indices differ from the vring base");
	/* Buffers made available before the ring was handed over (rx) are
	 * taken from the base on, as lib/vhost does; at most num of them. */
	if (d->posted_ok ?
	    (uint16_t)(__atomic_load_n(&d->split.avail->idx, __ATOMIC_ACQUIRE) - vring_base) > num :
	    __atomic_load_n(&d->split.avail->idx, __ATOMIC_ACQUIRE) != vring_base)
		return fake_dev_driver_error(d, "ring indices differ from the vring base");
	return 0;
}

static uint16_t
fake_dev_vring_base_split(const struct fake_dev *d)
{
	return d->last_avail;
}

static int
fake_dev_release_split(struct fake_dev *d, const struct fake_dev_chain *c)
{
	uint16_t i;

	for (i = 0; i < c->nring; i++)
		if (c->desc_idx[i] >= d->params.num || !d->held[c->desc_idx[i]])
			return -EINVAL;
	for (i = 0; i < c->nring; i++)
		d->held[c->desc_idx[i]] = 0;
	return 0;
}

static int
fake_dev_avail_count_split(struct fake_dev *d)
{
	/* Acquire: pairs with the driver's store-release of avail idx, so the
	 * entries and descriptors it covers are visible to our later loads.
	 */
	uint16_t avail_idx = __atomic_load_n(&d->split.avail->idx, __ATOMIC_ACQUIRE);
	uint16_t n = (uint16_t)(avail_idx - d->last_avail); /* modulo 2^16 */

	if (n > d->params.num)
		return fake_dev_driver_error(d, "avail idx %u is %u past last_avail %u",
					     avail_idx, n, d->last_avail);
	return n;
}

/*
 * An indirect descriptor's table: checked as lib/vhost and the spec want.
 * @return the number of entries, or -EPROTO.
 */
static int
fake_dev_check_table(struct fake_dev *d, uint16_t flags, uint32_t len)
{
	uint32_t n = len / VIRTQ_DESC_SIZE;

	if (d->params.indirect_max == 0)
		return fake_dev_driver_error(d, "indirect descriptor not negotiated");
	if (flags & VIRTQ_DESC_F_NEXT)
		return fake_dev_driver_error(d, "INDIRECT together with NEXT");
	if (len == 0 || len % VIRTQ_DESC_SIZE != 0)
		return fake_dev_driver_error(d, "indirect table length %u", len);
	if (n > d->params.indirect_max || n >= d->params.num)
		return fake_dev_driver_error(d, "indirect table of %u entries (max %u, num %u)",
					     n, d->params.indirect_max, d->params.num);
	if (n > FAKE_DEV_MAX_SG)
		return fake_dev_driver_error(d, "chain longer than the fake device records");
	return (int)n;
}

/*
 * Record descriptor @p i of chain @p c (@p addr, @p len, @p flags, at ring
 * index @p desc_idx): readable descriptors first, then writable ones.
 * @return 0, or -EPROTO (a driver error) for a readable one after a writable.
 */
static int
fake_dev_chain_record(struct fake_dev *d, struct fake_dev_chain *c, uint32_t i,
		      uint64_t addr, uint32_t len, uint16_t flags, uint16_t desc_idx)
{
	if (flags & VIRTQ_DESC_F_WRITE) {
		c->nin++;
		c->in_len += len;
	} else {
		if (c->nin > 0)
			return fake_dev_driver_error(d, "readable descriptor after writable");
		c->nout++;
		c->out_len += len;
	}
	c->sg[i].addr = addr;
	c->sg[i].len = len;
	c->desc_idx[i] = desc_idx;
	return 0;
}

static int
fake_dev_pop_split(struct fake_dev *d, struct fake_dev_chain *c)
{
	uint16_t num = d->params.num;
	const struct virtq_desc *descs = d->split.desc;
	uint32_t limit = num;     /* entries of the table being walked */
	uint16_t idx;
	uint32_t count = 0;
	int avail = fake_dev_avail_count_split(d);

	if (avail <= 0)
		return avail;

	memset(c, 0, sizeof(*c));
	idx = d->split.avail->ring[d->last_avail & d->mask];
	if (idx >= num)
		return fake_dev_driver_error(d, "avail head %u >= num", idx);
	c->id = idx;
	if (d->split.desc[idx].flags & VIRTQ_DESC_F_INDIRECT) {
		const struct virtq_desc *hd = &d->split.desc[idx];
		int n = fake_dev_check_table(d, hd->flags, hd->len);

		if (n < 0)
			return n;
		if (d->held[idx])
			return fake_dev_driver_error(d, "descriptor %u posted while device holds it",
						     idx);
		c->indirect = true;
		c->table = hd->addr;
		descs = (const struct virtq_desc *)(uintptr_t)hd->addr;
		limit = (uint32_t)n;
		idx = 0;
	}
	for (;;) {
		const struct virtq_desc *desc = &descs[idx];
		uint16_t flags = desc->flags;

		if (count >= limit)
			return fake_dev_driver_error(d, "chain from %u loops", c->id);
		if (count >= FAKE_DEV_MAX_SG)
			return fake_dev_driver_error(d, "chain longer than the fake device records");
		if (!c->indirect && d->held[idx])
			return fake_dev_driver_error(d, "descriptor %u posted while device holds it",
						     idx);
		if (flags & VIRTQ_DESC_F_INDIRECT)
			return fake_dev_driver_error(d, d->params.indirect_max == 0 ?
						     "indirect descriptor not negotiated" :
						     "INDIRECT inside a chain or a table");
		if (fake_dev_chain_record(d, c, count, desc->addr, desc->len, flags,
					  c->indirect ? c->id : idx) < 0)
			return -EPROTO;
		count++;
		if (!(flags & VIRTQ_DESC_F_NEXT))
			break;
		idx = desc->next;
		if (idx >= limit)
			return fake_dev_driver_error(d, "desc next %u >= %s %u", idx,
						     c->indirect ? "table length" : "num", limit);
	}
	if (c->indirect && count != limit)
		return fake_dev_driver_error(d, "indirect table of %u entries holds a chain of %u",
					     limit, count);
	c->ndescs = (uint16_t)count;
	c->nring = c->indirect ? 1 : c->ndescs;
	for (count = 0; count < c->nring; count++)
		d->held[c->desc_idx[count]] = 1;
	d->last_avail++;
	d->pops++;
	return 1;
}

static void
fake_dev_push_raw_split(struct fake_dev *d, uint32_t id, uint32_t len, uint16_t count)
{
	struct virtq_used_elem *e = &d->split.used->ring[d->used_idx & d->mask];

	(void)count;
	e->id = id;
	e->len = len;
	d->used_idx++;
}

static int
fake_dev_used_jump_split(struct fake_dev *d)
{
	d->used_idx = (uint16_t)(d->used_idx + d->params.num + 1);
	return 0;
}

/* A flush published used up to @p new_idx and decided @p call: count it. */
static bool
fake_dev_count_call(struct fake_dev *d, uint16_t new_idx, bool call)
{
	d->signalled_used = new_idx;
	d->call_checks++;
	if (call)
		d->calls++;
	return call;
}

static bool
fake_dev_flush_split(struct fake_dev *d)
{
	uint16_t old = d->signalled_used;
	uint16_t new_idx = d->used_idx;
	bool call;

	if (new_idx == d->used_published)
		return false;
	/* Release: our stores of used entries before used idx; pairs with the
	 * driver's load-acquire of used idx in virtq_get_used().
	 */
	__atomic_store_n(&d->split.used->idx, new_idx, __ATOMIC_RELEASE);
	d->used_published = new_idx;
	if (d->between != NULL)
		d->between(d->between_arg);

	/* Full fence: our store of used idx before our load of avail flags /
	 * used_event; pairs with the driver's fence in virtq_poll() (its store
	 * of the arming before its load of used idx).
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);

	if (d->params.event_idx) {
		uint16_t ev = __atomic_load_n(d->split.used_event, __ATOMIC_RELAXED);

		if (__atomic_load_n(&d->split.avail->flags, __ATOMIC_RELAXED) != 0)
			fake_dev_driver_error(d, "avail flags nonzero with event idx");
		call = virtq_need_event(ev, new_idx, old);
	} else {
		uint16_t flags = __atomic_load_n(&d->split.avail->flags, __ATOMIC_RELAXED);

		call = !(flags & VIRTQ_AVAIL_F_NO_INTERRUPT);
	}
	return fake_dev_count_call(d, new_idx, call);
}

static void
fake_dev_set_no_notify_split(struct fake_dev *d, bool no_notify)
{
	__atomic_store_n(&d->split.used->flags, no_notify ? VIRTQ_USED_F_NO_NOTIFY : 0,
			 __ATOMIC_RELAXED);
	/* Store of flags before a later re-check load of avail idx; pairs with
	 * the driver's fence in virtq_kick_prepare().
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void
fake_dev_set_avail_event_split(struct fake_dev *d, uint16_t v)
{
	__atomic_store_n(d->split.avail_event, v, __ATOMIC_RELAXED);
	/* As above: store of avail_event before a re-check of avail idx. */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static const struct fake_dev_ops fake_dev_ops_split = FAKE_DEV_OPS(split);

/* ---- packed ---- */

#define FAKE_AVAIL_USED (VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED)

/* Wrap counter of a free-running position: 1 in even laps. */
static bool
fake_dev_wrap_packed(const struct fake_dev *d, uint16_t pos)
{
	return ((pos / d->params.num) & 1) == 0;
}

/* lib/vhost desc_is_avail: AVAIL == w, USED != w. */
static bool
fake_dev_is_avail_packed(uint16_t flags, bool w)
{
	return (flags & FAKE_AVAIL_USED) == (w ? VIRTQ_DESC_F_AVAIL : VIRTQ_DESC_F_USED);
}

static uint16_t
fake_dev_used_flags_packed(bool w)
{
	return w ? FAKE_AVAIL_USED : 0;
}

static int
fake_dev_attach_packed(struct fake_dev *d, uint16_t vring_base, void *desc_area,
		       void *driver_area, void *device_area)
{
	uint16_t num = d->params.num;
	uint16_t slot = vring_base & 0x7fff;
	bool w = (vring_base >> VIRTQ_EVENT_WRAP_SHIFT) & 1;
	uint16_t start;
	uint16_t i;

	d->packed.desc = desc_area;
	d->packed.driver = driver_area;
	d->packed.device = device_area;
	d->packed.pend = calloc(2u * num, sizeof(*d->packed.pend));
	if (d->packed.pend == NULL)
		return -ENOMEM;
	if (slot >= num)
		return fake_dev_driver_error(d, "vring base slot %u >= num", slot);
	/* vhost_user_set_vring_base: used position and counter = avail's. */
	start = (uint16_t)(slot + (w ? 0 : num));
	d->last_avail = start;
	d->used_idx = start;
	d->used_published = start;
	d->signalled_used = start;
	/* Nothing may be available (unless posted_ok: buffers made available
	 * before the ring was handed over are taken from the base on): slots
	 * from the base on would be taken in this lap, slots before it in the
	 * next.
	 */
	for (i = 0; i < num && !d->posted_ok; i++) {
		uint16_t flags = __atomic_load_n(&d->packed.desc[i].flags, __ATOMIC_ACQUIRE);

		if (fake_dev_is_avail_packed(flags, i >= slot ? w : !w))
			return fake_dev_driver_error(d, "slot %u available at attach", i);
	}
	if (__atomic_load_n(&d->packed.driver->flags, __ATOMIC_RELAXED) > VIRTQ_EVENT_F_DESC)
		return fake_dev_driver_error(d, "driver event flags undefined");
	return 0;
}

static uint16_t
fake_dev_vring_base_packed(const struct fake_dev *d)
{
	/* vhost_user_get_vring_base: slot, avail wrap counter in bit 15. */
	return (uint16_t)((d->last_avail & d->mask) |
			  (fake_dev_wrap_packed(d, d->last_avail) << VIRTQ_EVENT_WRAP_SHIFT));
}

/*
 * The available descriptor @p desc at position @p pos (flags @p flags)
 * points to an indirect table: read the chain from it (the packed format,
 * WRITE the only flag an entry may carry, ids ignored).
 * @return 1 (the chain takes one slot), or -EPROTO.
 */
static int
fake_dev_read_indirect_packed(struct fake_dev *d, uint16_t pos,
			      const struct virtq_packed_desc *desc, uint16_t flags,
			      struct fake_dev_chain *c)
{
	const struct virtq_packed_desc *t;
	int n = fake_dev_check_table(d, flags, desc->len);
	int i;

	if (n < 0)
		return n;
	t = (const struct virtq_packed_desc *)(uintptr_t)desc->addr;
	for (i = 0; i < n; i++) {
		if (t[i].flags & (uint16_t)~VIRTQ_DESC_F_WRITE)
			return fake_dev_driver_error(d, "indirect entry %d flags %#x: only WRITE is defined",
						     i, t[i].flags);
		if (fake_dev_chain_record(d, c, (uint32_t)i, t[i].addr, t[i].len, t[i].flags,
					  pos & d->mask) < 0)
			return -EPROTO;
	}
	if (desc->id >= d->params.num)
		return fake_dev_driver_error(d, "buffer id %u >= num", desc->id);
	c->id = desc->id;
	c->indirect = true;
	c->table = desc->addr;
	c->ndescs = (uint16_t)n;
	c->nring = 1;
	return 1;
}

/*
 * Read the chain at position @p pos without consuming it. @p c may be NULL.
 * @return its length in slots; 0 nothing available there; -EPROTO.
 */
static int
fake_dev_read_chain_packed(struct fake_dev *d, uint16_t pos, struct fake_dev_chain *c)
{
	uint16_t num = d->params.num;
	struct fake_dev_chain tmp;
	uint32_t count = 0;
	uint16_t flags;
	uint16_t id = 0;

	if (c == NULL)
		c = &tmp;
	/* Acquire (desc_is_avail): the head flags before the descriptors;
	 * pairs with the driver's store-release of the head flags.
	 */
	flags = __atomic_load_n(&d->packed.desc[pos & d->mask].flags, __ATOMIC_ACQUIRE);
	if (!fake_dev_is_avail_packed(flags, fake_dev_wrap_packed(d, pos)))
		return 0;
	memset(c, 0, sizeof(*c));
	for (;;) {
		const struct virtq_packed_desc *desc = &d->packed.desc[pos & d->mask];

		if (count >= num)
			return fake_dev_driver_error(d, "chain runs over the whole ring");
		if (count >= FAKE_DEV_MAX_SG)
			return fake_dev_driver_error(d, "chain longer than the fake device records");
		flags = __atomic_load_n(&desc->flags, __ATOMIC_RELAXED);
		/* Every descriptor carries the bits of its own slot's wrap. */
		if (!fake_dev_is_avail_packed(flags, fake_dev_wrap_packed(d, pos)))
			return fake_dev_driver_error(d, "descriptor %u of a chain not available",
						     count);
		if ((flags & VIRTQ_DESC_F_INDIRECT) && count == 0)
			return fake_dev_read_indirect_packed(d, pos, desc, flags, c);
		if (flags & VIRTQ_DESC_F_INDIRECT)
			return fake_dev_driver_error(d, d->params.indirect_max == 0 ?
						     "indirect descriptor not negotiated" :
						     "INDIRECT inside a chain");
		if (count > 0 && desc->id != id)
			return fake_dev_driver_error(d, "buffer ids differ within a chain");
		id = desc->id;
		if (fake_dev_chain_record(d, c, count, desc->addr, desc->len, flags,
					  pos & d->mask) < 0)
			return -EPROTO;
		count++;
		pos++;
		if (!(flags & VIRTQ_DESC_F_NEXT))
			break;
	}
	/* The id is the last descriptor's (lib/vhost fill_vec_buf_packed). */
	if (id >= num)
		return fake_dev_driver_error(d, "buffer id %u >= num", id);
	c->id = id;
	c->ndescs = (uint16_t)count;
	c->nring = c->ndescs;
	return (int)count;
}

static int
fake_dev_avail_count_packed(struct fake_dev *d)
{
	uint16_t pos = d->last_avail;
	uint32_t slots = 0;
	int n = 0;

	while (slots < d->params.num) {
		int r = fake_dev_read_chain_packed(d, pos, NULL);

		if (r < 0)
			return r;
		if (r == 0)
			break;
		pos = (uint16_t)(pos + r);
		slots += (uint32_t)r;
		n++;
	}
	return n;
}

static int
fake_dev_pop_packed(struct fake_dev *d, struct fake_dev_chain *c)
{
	int r = fake_dev_read_chain_packed(d, d->last_avail, c);

	if (r <= 0)
		return r;
	if (d->held[c->id])
		return fake_dev_driver_error(d, "buffer id %u posted while device holds it", c->id);
	d->held[c->id] = 1;
	d->last_avail = (uint16_t)(d->last_avail + r);
	d->pops++;
	return 1;
}

static int
fake_dev_release_packed(struct fake_dev *d, const struct fake_dev_chain *c)
{
	if (c->id >= d->params.num || !d->held[c->id])
		return -EINVAL;
	d->held[c->id] = 0;
	return 0;
}

static void
fake_dev_push_raw_packed(struct fake_dev *d, uint32_t id, uint32_t len, uint16_t count)
{
	struct fake_dev_pending *e;

	if (d->packed.npend >= 2u * d->params.num)
		return;     /* a test pushing that much is broken itself */
	e = &d->packed.pend[d->packed.npend++];
	e->pos = d->used_idx;
	e->id = (uint16_t)id;   /* the field is 16 bits: what a device can write */
	e->len = len;
	e->read_only = false;
	d->used_idx = (uint16_t)(d->used_idx + count);
}

/*
 * Write the pending used descriptors the vhost_flush_enqueue_shadow_packed
 * way (ids and lens, a release fence, the flags, the first one's last), then
 * decide on a call as vhost_vring_call_packed does.
 */
static bool
fake_dev_flush_packed(struct fake_dev *d)
{
	uint16_t n = d->packed.npend;
	uint16_t old = d->signalled_used;
	uint16_t new_idx = d->used_idx;
	uint16_t head_flags = 0;
	uint16_t flags;
	bool call;
	uint16_t i;

	if (n == 0)
		return false;
	if (d->inorder_batch) {
		bool all_ro = true;

		for (i = 0; i < n; i++)
			all_ro = all_ro && d->packed.pend[i].read_only;
		if (all_ro) {
			/* One used descriptor for the batch, as
			 * vhost_shadow_dequeue_batch_packed_inorder leaves it for
			 * vhost_flush_dequeue_shadow_packed.
			 */
			d->packed.pend[0].id = d->packed.pend[n - 1].id;
			n = 1;
		}
	}
	for (i = 0; i < n; i++) {
		struct virtq_packed_desc *desc = &d->packed.desc[d->packed.pend[i].pos & d->mask];

		desc->id = d->packed.pend[i].id;
		desc->len = d->packed.pend[i].len;
	}
	/* Release: ids and lens before the flags; pairs with the driver's
	 * load-acquire of the flags in virtq_get_used().
	 */
	rte_atomic_thread_fence(__ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		const struct fake_dev_pending *e = &d->packed.pend[i];

		flags = fake_dev_used_flags_packed(fake_dev_wrap_packed(d, e->pos));
		if (e->len != 0)
			flags |= VIRTQ_DESC_F_WRITE;
		if (i == 0)
			head_flags = flags;
		else
			__atomic_store_n(&d->packed.desc[e->pos & d->mask].flags, flags,
					 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&d->packed.desc[d->packed.pend[0].pos & d->mask].flags, head_flags,
			 __ATOMIC_RELEASE);
	d->packed.npend = 0;
	d->used_published = new_idx;
	if (d->between != NULL)
		d->between(d->between_arg);

	/* Full fence: our stores of used flags before our load of the driver
	 * event area; pairs with the driver's fence in virtq_poll().
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);

	flags = __atomic_load_n(&d->packed.driver->flags, __ATOMIC_RELAXED);
	if (flags > VIRTQ_EVENT_F_DESC)
		fake_dev_driver_error(d, "driver event flags %u undefined", flags);
	if (!d->params.event_idx) {
		if (flags == VIRTQ_EVENT_F_DESC)
			fake_dev_driver_error(d, "driver event DESC without event idx");
		call = flags != VIRTQ_EVENT_F_DISABLE;
	} else if (flags != VIRTQ_EVENT_F_DESC) {
		call = flags != VIRTQ_EVENT_F_DISABLE;
	} else {
		uint16_t off_wrap, off, ev;

		/* Acquire: flags before off_wrap; pairs with the driver's
		 * release store of flags after off_wrap.
		 */
		rte_atomic_thread_fence(__ATOMIC_ACQUIRE);
		off_wrap = __atomic_load_n(&d->packed.driver->off_wrap, __ATOMIC_RELAXED);
		off = off_wrap & 0x7fff;
		if (off >= d->params.num) {
			fake_dev_driver_error(d, "driver event off %u >= num", off);
			call = true;
		} else {
			/* The position off names, in new_idx's lap or the one before. */
			ev = (uint16_t)((new_idx & (uint16_t)~d->mask) + off);
			if ((bool)(off_wrap >> VIRTQ_EVENT_WRAP_SHIFT) !=
			    fake_dev_wrap_packed(d, new_idx))
				ev = (uint16_t)(ev - d->params.num);
			call = virtq_need_event(ev, new_idx, old);
		}
	}
	return fake_dev_count_call(d, new_idx, call);
}

static void
fake_dev_set_no_notify_packed(struct fake_dev *d, bool no_notify)
{
	__atomic_store_n(&d->packed.device->flags,
			 no_notify ? VIRTQ_EVENT_F_DISABLE : VIRTQ_EVENT_F_ENABLE, __ATOMIC_RELAXED);
	/* Store of flags before a later re-check of the ring; pairs with the
	 * driver's fence in virtq_kick_prepare().
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void
fake_dev_set_avail_event_packed(struct fake_dev *d, uint16_t v)
{
	uint16_t off_wrap = (uint16_t)((v & d->mask) |
				       (fake_dev_wrap_packed(d, v) << VIRTQ_EVENT_WRAP_SHIFT));

	/* vhost_enable_notify_packed: off_wrap, release fence, flags DESC. */
	__atomic_store_n(&d->packed.device->off_wrap, off_wrap, __ATOMIC_RELAXED);
	rte_atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&d->packed.device->flags, VIRTQ_EVENT_F_DESC, __ATOMIC_RELAXED);
	/* As above: store of flags before a re-check of the ring. */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int
fake_dev_used_jump_packed(struct fake_dev *d)
{
	(void)d;
	return -ENOTSUP;    /* no used index: a skipped slot is just never seen */
}

static const struct fake_dev_ops fake_dev_ops_packed = FAKE_DEV_OPS(packed);

static const struct fake_dev_ops *const fake_dev_layout_ops[] = {
	[VIRTQ_LAYOUT_SPLIT] = &fake_dev_ops_split,
	[VIRTQ_LAYOUT_PACKED] = &fake_dev_ops_packed,
};

/* ---- layout independent ---- */

static int
fake_dev_attach(struct fake_dev *d, const struct virtq_params *p, uint16_t vring_base,
		void *desc_area, void *driver_area, void *device_area, bool posted_ok)
{
	int ret;

	memset(d, 0, sizeof(*d));
	d->posted_ok = posted_ok;
	if ((unsigned int)p->layout >= sizeof(fake_dev_layout_ops) / sizeof(fake_dev_layout_ops[0]) ||
	    fake_dev_layout_ops[p->layout] == NULL)
		return -EINVAL;
	d->ops = fake_dev_layout_ops[p->layout];
	d->params = *p;
	d->mask = p->num - 1;
	d->inorder_batch = p->in_order;
	d->held = calloc(p->num, 1);
	if (d->held == NULL)
		return -ENOMEM;
	ret = d->ops->attach(d, vring_base, desc_area, driver_area, device_area);
	if (ret != 0)
		fake_dev_fini(d);
	return ret;
}

int
fake_dev_init(struct fake_dev *d, const struct virtq_params *p, uint16_t vring_base,
	      void *desc_area, void *driver_area, void *device_area)
{
	return fake_dev_attach(d, p, vring_base, desc_area, driver_area, device_area, false);
}

int
fake_dev_init_posted(struct fake_dev *d, const struct virtq_params *p, uint16_t vring_base,
		     void *desc_area, void *driver_area, void *device_area)
{
	return fake_dev_attach(d, p, vring_base, desc_area, driver_area, device_area, true);
}

void
fake_dev_fini(struct fake_dev *d)
{
	free(d->held);
	d->held = NULL;
	free(d->packed.pend);
	d->packed.pend = NULL;
}

uint16_t
fake_dev_vring_base(const struct fake_dev *d)
{
	return d->ops->vring_base(d);
}

void
fake_dev_kick(struct fake_dev *d)
{
	d->kicks++;
}

int
fake_dev_avail_count(struct fake_dev *d)
{
	return d->ops->avail_count(d);
}

int
fake_dev_pop(struct fake_dev *d, struct fake_dev_chain *c)
{
	return d->ops->pop(d, c);
}

uint32_t
fake_dev_write(struct fake_dev *d, const struct fake_dev_chain *c, const void *data,
	       uint32_t len)
{
	const uint8_t *src = data;
	uint32_t done = 0;
	uint16_t i;

	for (i = c->nout; i < c->ndescs && done < len; i++) {
		uint32_t n = c->sg[i].len;

		if (n > len - done)
			n = len - done;
		memcpy((void *)(uintptr_t)c->sg[i].addr, src + done, n);
		done += n;
	}
	return done;
}

int
fake_dev_push(struct fake_dev *d, const struct fake_dev_chain *c, uint32_t len)
{
	if (d->ops->release(d, c) != 0)
		return -EINVAL;
	d->ops->push_raw(d, c->id, len, c->nring);
	if (d->params.layout == VIRTQ_LAYOUT_PACKED && c->nin == 0)
		d->packed.pend[d->packed.npend - 1].read_only = true;
	d->pushes++;
	d->unflushed++;
	return 0;
}

bool
fake_dev_flush(struct fake_dev *d)
{
	bool call = d->ops->flush(d);

	d->chains_published += d->unflushed;
	d->unflushed = 0;
	return call;
}

void
fake_dev_set_no_notify(struct fake_dev *d, bool no_notify)
{
	d->ops->set_no_notify(d, no_notify);
}

void
fake_dev_set_avail_event(struct fake_dev *d, uint16_t v)
{
	d->ops->set_avail_event(d, v);
}

void
fake_dev_push_raw(struct fake_dev *d, uint32_t id, uint32_t len)
{
	d->ops->push_raw(d, id, len, 1);
	d->unflushed++;
}

void
fake_dev_inject_bad_id(struct fake_dev *d)
{
	fake_dev_push_raw(d, d->params.num, 0);
}

void
fake_dev_inject_non_head(struct fake_dev *d, uint16_t id)
{
	fake_dev_push_raw(d, id, 0);
}

void
fake_dev_inject_len_too_large(struct fake_dev *d, const struct fake_dev_chain *c)
{
	d->ops->push_raw(d, c->id, c->in_len + 1, c->nring);
	d->unflushed++;
}

int
fake_dev_inject_used_jump(struct fake_dev *d)
{
	return d->ops->used_jump(d);
}
