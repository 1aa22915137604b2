/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VIRTQ_H_
#define _VIRTQ_H_

/**
 * @file
 * The driver half of a virtqueue, split or packed, behind one API.
 *
 * No ethdev and no EAL initialisation inside: the caller provides the memory
 * (the ring, shared with the device, and the private state), and the
 * transport (how a notification reaches the device, how the device's
 * notification reaches us) stays outside. Every value the device writes is
 * validated; a violation marks the queue broken, after which every call is a
 * no-op that reports nothing and the caller is told by virtq_is_broken().
 *
 * Indices are free-running uint16_t, modulo 2^16, masked only at access.
 *
 * @note Thread safety: none. One thread at a time per virtqueue (the lcore
 * that owns the ethdev queue). The device runs concurrently; every barrier
 * in the implementation names the device access it pairs with.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "virtq_ring.h"

enum virtq_layout {
	VIRTQ_LAYOUT_SPLIT,
	VIRTQ_LAYOUT_PACKED,
};

/** How a virtqueue is built. */
struct virtq_params {
	enum virtq_layout layout;
	uint16_t num;        /**< Entries: a power of two, 2..VIRTQ_MAX_NUM. */
	bool event_idx;      /**< VIRTIO_F_RING_EVENT_IDX negotiated. */
	uint16_t start_idx;  /**< First avail/used index (what SET_VRING_BASE carries). */
};

/** One element of a descriptor chain. */
struct virtq_sg {
	uint64_t addr;       /**< Device-visible address (vhost-user: our virtual address). */
	uint32_t len;
};

/** Counters kept by the virtqueue itself. */
struct virtq_stats {
	uint64_t kicks;            /**< virtq_kick_prepare() asked the caller to notify. */
	uint64_t kicks_suppressed; /**< New buffers published, the device asked for no notification. */
	uint64_t bad_used;         /**< Device-written values rejected (each marks the queue broken). */
	uint64_t intr_arms;        /**< virtq_enable_intr_prepare() calls that wrote shared memory. */
};

struct virtq;

/**
 * Bytes of ring memory (descriptor, driver and device areas) the device shares.
 * The memory must be aligned to VIRTQ_RING_ALIGN.
 * @return the size, or 0 if @p p is invalid.
 */
size_t virtq_ring_mem_size(const struct virtq_params *p);

/**
 * Bytes of private state (struct virtq and its per-descriptor arrays).
 * Any alignment of 64 or more will do.
 * @return the size, or 0 if @p p is invalid.
 */
size_t virtq_state_size(const struct virtq_params *p);

/**
 * Lay out a virtqueue over @p ring_mem (zeroed here) and initialise @p vq.
 * May be called again on a virtqueue whose buffers were all detached, to
 * restart it (e.g. with another start index). Interrupts start suppressed.
 * Split: avail idx, used idx and avail_event are set to start_idx in ring
 * memory (a fresh ring as a device given SET_VRING_BASE(start_idx) sees it);
 * used_event = start_idx - 1 (event idx) or VIRTQ_AVAIL_F_NO_INTERRUPT.
 * Counters and the broken state are reset.
 * @return 0, or -EINVAL for bad parameters (num not a power of two, layout
 * not built in, NULL pointers, @p ring_mem not aligned to VIRTQ_RING_ALIGN).
 */
int virtq_init(struct virtq *vq, const struct virtq_params *p, void *ring_mem);

/** The parameters @p vq was initialised with. */
const struct virtq_params *virtq_params(const struct virtq *vq);

/** Descriptor area (split: descriptor table; packed: descriptor ring). */
void *virtq_desc_area(const struct virtq *vq);
/** Driver area (split: avail ring; packed: driver event suppression). */
void *virtq_driver_area(const struct virtq *vq);
/** Device area (split: used ring; packed: device event suppression). */
void *virtq_device_area(const struct virtq *vq);

/** Free descriptors. */
uint16_t virtq_num_free(const struct virtq *vq);

/**
 * Add one chain: @p out device-readable elements then @p in device-writable
 * ones. Not visible to the device until virtq_kick_prepare().
 * @param cookie returned by virtq_get_used() when the device is done; not NULL.
 * @return 0; -ENOSPC: fewer than out + in free descriptors; -EINVAL: empty
 * chain or NULL cookie; -EIO: the queue is broken.
 */
int virtq_add(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
	      void *cookie);

/**
 * Add @p n single-descriptor device-writable buffers (the rx refill path).
 * Stops at the first NULL cookie.
 * @return how many were added (fewer when descriptors run out or the queue is
 * broken).
 */
uint16_t virtq_add_inbufs(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
			  uint16_t n);

/**
 * Publish what was added since the last call (release store of the avail
 * index, then a full barrier) and decide whether the device wants a
 * notification (VIRTQ_USED_F_NO_NOTIFY, or avail_event with event idx).
 * @return true if the caller must notify the device (kick its eventfd).
 */
bool virtq_kick_prepare(struct virtq *vq);

/**
 * Take up to @p max completed chains, oldest first, freeing their descriptors.
 * @param cookies receives each chain's cookie.
 * @param lens receives the bytes the device wrote (validated against the
 * chain's writable length); may be NULL.
 * @return the number taken. On a device error the queue is marked broken and
 * the count of entries validated before it is returned.
 */
uint16_t virtq_get_used(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max);

/** Completed chains not yet taken (validated; 0 when broken). */
uint16_t virtq_used_count(struct virtq *vq);

/**
 * First half of arming the device's notification (Linux
 * virtqueue_enable_cb_prepare): event idx: used_event = last used index;
 * otherwise clear VIRTQ_AVAIL_F_NO_INTERRUPT. Writes shared memory only if
 * the value changes.
 * @return an opaque for virtq_poll().
 */
uint32_t virtq_enable_intr_prepare(struct virtq *vq);

/**
 * Second half (Linux virtqueue_poll): a full barrier (our store of the
 * arming before our load of the used index; pairs with the device's store of
 * the used index before its load of the flag / used_event), then report
 * whether completions arrived after @p opaque was taken. If true, a
 * notification may or may not have been sent for them: the caller must
 * process them itself.
 * @return true if work is pending; false if none, or the queue is broken.
 */
bool virtq_poll(struct virtq *vq, uint32_t opaque);

/**
 * Suppress the device's notifications again: flag, or used_event moved out of
 * reach of the device the Linux way. Idempotent; writes shared memory only
 * when the state changes. Keeping used_event out of reach during long
 * polling phases is done by virtq_get_used().
 */
void virtq_disable_intr(struct virtq *vq);

/** True between virtq_enable_intr_prepare() and virtq_disable_intr(). */
bool virtq_intr_enabled(const struct virtq *vq);

/**
 * Detach one buffer the device still holds or that was not yet taken
 * (queue stopped). Call until it returns NULL, then virtq_init() to reuse.
 * Works on a broken queue. Do not add buffers between the calls.
 * @return its cookie, or NULL when none remains.
 */
void *virtq_detach_unused(struct virtq *vq);

/** True once a device-written value was rejected. */
bool virtq_is_broken(const struct virtq *vq);

/** Why the queue is broken (a static string), or NULL. */
const char *virtq_broken_reason(const struct virtq *vq);

/** Mark the queue broken from outside (e.g. transport failure). */
void virtq_mark_broken(struct virtq *vq, const char *reason);

/** The queue's counters. */
const struct virtq_stats *virtq_stats(const struct virtq *vq);

/** Index the driver will publish next (next avail index, split). */
uint16_t virtq_avail_idx(const struct virtq *vq);

/** Last used index consumed by the driver. */
uint16_t virtq_last_used_idx(const struct virtq *vq);

#endif /* _VIRTQ_H_ */
