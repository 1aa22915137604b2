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
	int (*attach)(struct fake_dev *d, void *desc_area, void *driver_area,
		      void *device_area);
	int (*avail_count)(struct fake_dev *d);
	int (*pop)(struct fake_dev *d, struct fake_dev_chain *c);
	void (*push_raw)(struct fake_dev *d, uint32_t id, uint32_t len);
	bool (*flush)(struct fake_dev *d);
	void (*set_no_notify)(struct fake_dev *d, bool no_notify);
	void (*set_avail_event)(struct fake_dev *d, uint16_t v);
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

/* ---- split ---- */

static int
fake_dev_attach_split(struct fake_dev *d, void *desc_area, void *driver_area, void *device_area)
{
	uint16_t num = d->params.num;

	d->split.desc = desc_area;
	d->split.avail = driver_area;
	d->split.used = device_area;
	d->split.used_event = virtq_used_event(d->split.avail, num);
	d->split.avail_event = virtq_avail_event(d->split.used, num);
	/* SET_VRING_BASE(start_idx): the device's own view; ring memory is the
	 * driver's to initialise, so check it agrees.
	 */
	if (__atomic_load_n(&d->split.used->idx, __ATOMIC_RELAXED) != d->params.start_idx ||
	    __atomic_load_n(&d->split.avail->idx, __ATOMIC_ACQUIRE) != d->params.start_idx)
		return fake_dev_driver_error(d, "ring indices differ from start_idx");
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

static int
fake_dev_pop_split(struct fake_dev *d, struct fake_dev_chain *c)
{
	uint16_t num = d->params.num;
	uint16_t idx;
	uint32_t count = 0;
	bool seen_write = false;
	int avail = fake_dev_avail_count_split(d);

	if (avail <= 0)
		return avail;

	memset(c, 0, sizeof(*c));
	idx = d->split.avail->ring[d->last_avail & d->mask];
	if (idx >= num)
		return fake_dev_driver_error(d, "avail head %u >= num", idx);
	c->id = idx;
	for (;;) {
		const struct virtq_desc *desc = &d->split.desc[idx];
		uint16_t flags = desc->flags;

		if (count >= num)
			return fake_dev_driver_error(d, "chain from %u loops", c->id);
		if (count >= FAKE_DEV_MAX_SG)
			return fake_dev_driver_error(d, "chain longer than the fake device records");
		if (d->held[idx])
			return fake_dev_driver_error(d, "descriptor %u posted while device holds it",
						     idx);
		if (flags & VIRTQ_DESC_F_INDIRECT)
			return fake_dev_driver_error(d, "indirect descriptor not negotiated");
		if (flags & VIRTQ_DESC_F_WRITE) {
			seen_write = true;
			c->nin++;
			c->in_len += desc->len;
		} else {
			if (seen_write)
				return fake_dev_driver_error(d, "readable descriptor after writable");
			c->nout++;
			c->out_len += desc->len;
		}
		c->sg[count].addr = desc->addr;
		c->sg[count].len = desc->len;
		c->desc_idx[count] = idx;
		count++;
		if (!(flags & VIRTQ_DESC_F_NEXT))
			break;
		idx = desc->next;
		if (idx >= num)
			return fake_dev_driver_error(d, "desc next %u >= num", idx);
	}
	c->ndescs = (uint16_t)count;
	for (count = 0; count < c->ndescs; count++)
		d->held[c->desc_idx[count]] = 1;
	d->last_avail++;
	d->pops++;
	return 1;
}

static void
fake_dev_push_raw_split(struct fake_dev *d, uint32_t id, uint32_t len)
{
	struct virtq_used_elem *e = &d->split.used->ring[d->used_idx & d->mask];

	e->id = id;
	e->len = len;
	d->used_idx++;
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
	d->signalled_used = new_idx;
	d->call_checks++;
	if (call)
		d->calls++;
	return call;
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

static const struct fake_dev_ops fake_dev_ops_split = {
	.attach = fake_dev_attach_split,
	.avail_count = fake_dev_avail_count_split,
	.pop = fake_dev_pop_split,
	.push_raw = fake_dev_push_raw_split,
	.flush = fake_dev_flush_split,
	.set_no_notify = fake_dev_set_no_notify_split,
	.set_avail_event = fake_dev_set_avail_event_split,
};

static const struct fake_dev_ops *const fake_dev_layout_ops[] = {
	[VIRTQ_LAYOUT_SPLIT] = &fake_dev_ops_split,
	[VIRTQ_LAYOUT_PACKED] = NULL,
};

/* ---- layout independent ---- */

int
fake_dev_init(struct fake_dev *d, const struct virtq_params *p, void *desc_area,
	      void *driver_area, void *device_area)
{
	int ret;

	memset(d, 0, sizeof(*d));
	if ((unsigned int)p->layout >= sizeof(fake_dev_layout_ops) / sizeof(fake_dev_layout_ops[0]) ||
	    fake_dev_layout_ops[p->layout] == NULL)
		return -EINVAL;
	d->ops = fake_dev_layout_ops[p->layout];
	d->params = *p;
	d->mask = p->num - 1;
	d->last_avail = p->start_idx;
	d->used_idx = p->start_idx;
	d->used_published = p->start_idx;
	d->signalled_used = p->start_idx;
	d->held = calloc(p->num, 1);
	if (d->held == NULL)
		return -ENOMEM;
	ret = d->ops->attach(d, desc_area, driver_area, device_area);
	if (ret != 0) {
		free(d->held);
		d->held = NULL;
	}
	return ret;
}

void
fake_dev_fini(struct fake_dev *d)
{
	free(d->held);
	d->held = NULL;
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
	uint16_t i;

	for (i = 0; i < c->ndescs; i++)
		if (c->desc_idx[i] >= d->params.num || !d->held[c->desc_idx[i]])
			return -EINVAL;
	for (i = 0; i < c->ndescs; i++)
		d->held[c->desc_idx[i]] = 0;
	d->ops->push_raw(d, c->id, len);
	d->pushes++;
	return 0;
}

bool
fake_dev_flush(struct fake_dev *d)
{
	return d->ops->flush(d);
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
	d->ops->push_raw(d, id, len);
}

void
fake_dev_inject_bad_id(struct fake_dev *d)
{
	d->ops->push_raw(d, d->params.num, 0);
}

void
fake_dev_inject_non_head(struct fake_dev *d, uint16_t id)
{
	d->ops->push_raw(d, id, 0);
}

void
fake_dev_inject_len_too_large(struct fake_dev *d, const struct fake_dev_chain *c)
{
	d->ops->push_raw(d, c->id, c->in_len + 1);
}

void
fake_dev_inject_used_jump(struct fake_dev *d)
{
	d->used_idx = (uint16_t)(d->used_idx + d->params.num + 1);
}
