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
 * Split: avail and used ring entries. Packed: descriptor ring positions
 * (slot = index mod num); the wrap counter of a position is 1 in laps 0, 2,
 * 4... (index / num even) and flips each time the index passes a multiple of
 * num, which is well defined because num is a power of two.
 *
 * @note Secondary processes: struct virtq may live in memory shared between
 * processes that map this library at different addresses. It holds no
 * pointer into the library image (dispatch goes through a per-process table
 * indexed by the layout; the broken reason is a copy), only pointers into
 * the caller's memory, which must be mapped at the same address everywhere
 * (DPDK memory is).
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
	/**
	 * First avail and used index, free-running. Split: what SET_VRING_BASE
	 * carries. Packed: a descriptor position; its slot is start_idx mod
	 * num and both wrap counters start at its wrap counter (1 when
	 * start_idx / num is even). SET_VRING_BASE carries another encoding
	 * of it: use virtq_vring_base(). 0 is a fresh ring for both layouts.
	 */
	uint16_t start_idx;
	/**
	 * VIRTIO_F_IN_ORDER negotiated: the device uses buffers in the order
	 * they were made available, and may report a batch of them with one
	 * used entry (packed ring: one used descriptor carrying the id of the
	 * batch's last buffer). Buffer ids and descriptors are then allocated
	 * in ring order and nothing is read that in-order completion implies.
	 */
	bool in_order;
	/**
	 * VIRTIO_F_RING_INDIRECT_DESC negotiated: descriptors per indirect
	 * table (0: no indirect descriptors). Ring memory then also holds one
	 * table per buffer id, and virtq_add() puts a chain of two or more
	 * elements, at most this many, in a table taking one ring slot.
	 * 0 or 2..VIRTQ_MAX_INDIRECT. A chain must also be shorter than num
	 * to go indirect (DPDK lib/vhost refuses a packed table of num
	 * entries); other chains take one ring descriptor per element.
	 */
	uint16_t indirect_max;
};

/**
 * Largest indirect_max: a table of 128 descriptors is 2 KB, and lib/vhost
 * maps at most 256 buffers per chain (BUF_VECTOR_MAX). The tables take
 * num * indirect_max * 16 bytes of ring memory.
 */
#define VIRTQ_MAX_INDIRECT 128

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
	uint64_t indirect;         /**< Chains virtq_add() put in an indirect table. */
};

struct virtq;

/**
 * Bytes of ring memory (descriptor, driver and device areas, then the
 * indirect tables when indirect_max is not 0) the device shares.
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
 * Packed (start slot s, wrap counter W): descriptors s..num-1 look used in
 * wrap !W and 0..s-1 used in wrap W (nothing available, nothing used; all
 * zero for start_idx 0); driver event flags DISABLE; device event area zero.
 * The indirect tables are not zeroed: virtq_add() writes a table before the
 * descriptor that points to it is made available.
 * Counters and the broken state are reset.
 * @return 0, or -EINVAL for bad parameters (num not a power of two, layout
 * not built in, indirect_max 1 or above VIRTQ_MAX_INDIRECT, NULL pointers,
 * @p ring_mem not aligned to VIRTQ_RING_ALIGN).
 */
int virtq_init(struct virtq *vq, const struct virtq_params *p, void *ring_mem);

/** The parameters @p vq was initialised with. */
const struct virtq_params *virtq_params(const struct virtq *vq);

/**
 * Descriptor area (split: descriptor table; packed: descriptor ring).
 * SET_VRING_ADDR's desc_user_addr.
 */
void *virtq_desc_area(const struct virtq *vq);
/**
 * Driver area (split: avail ring; packed: driver event suppression, which
 * we write). SET_VRING_ADDR's avail_user_addr.
 */
void *virtq_driver_area(const struct virtq *vq);
/**
 * Device area (split: used ring; packed: device event suppression, which
 * the device writes). SET_VRING_ADDR's used_user_addr.
 */
void *virtq_device_area(const struct virtq *vq);

/**
 * The value SET_VRING_BASE must carry for the ring as virtq_init() laid it
 * out. Split: start_idx. Packed: start slot in bits 0-14 and the wrap
 * counter in bit 15, as DPDK lib/vhost (vhost_user_set_vring_base) and QEMU
 * decode it. GET_VRING_BASE answers in the same encoding: for packed, the
 * device's next avail slot and wrap counter.
 */
uint16_t virtq_vring_base(const struct virtq *vq);

/** Free descriptors (packed: free ring slots). */
uint16_t virtq_num_free(const struct virtq *vq);

/**
 * Add one chain: @p out device-readable elements then @p in device-writable
 * ones. Visible to the device at the latest after virtq_kick_prepare(),
 * maybe earlier (packed: the first head added since the last publication
 * holds back everything after it until virtq_kick_prepare() or the bulk
 * paths below store its flags).
 * With indirect descriptors (params.indirect_max), a chain of n = out + in
 * elements, 2 <= n <= indirect_max and n < num, is written into the table
 * of its buffer id (split: head descriptor) and takes one ring descriptor
 * flagged VIRTQ_DESC_F_INDIRECT (address: the table, length: n * 16).
 * @param cookie returned by virtq_get_used() when the device is done; not NULL.
 * @return 0; -ENOSPC: fewer free descriptors than the chain takes (1 when it
 * goes indirect, else out + in); -EINVAL: empty chain or NULL cookie; -EIO:
 * the queue is broken.
 */
int virtq_add(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
	      void *cookie);

/**
 * Add @p n single-descriptor device-writable buffers (the rx refill path).
 * Stops at the first NULL cookie. Packed: published in groups as they are
 * added, whenever the position reaches a multiple of virtq_publish_group(),
 * the rest by virtq_kick_prepare(). Split: all by virtq_kick_prepare().
 * @return how many were added (fewer when descriptors run out or the queue is
 * broken).
 */
uint16_t virtq_add_inbufs(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
			  uint16_t n);

/**
 * Add @p n single-descriptor device-readable buffers (the single-segment tx
 * path): like virtq_add() with out = 1, in = 0, for a batch. Published
 * all by virtq_kick_prepare(), so that a device polling the ring sees the
 * caller's burst whole, never the part added so far.
 * @return how many were added (fewer when descriptors run out, a cookie is
 * NULL, or the queue is broken).
 */
uint16_t virtq_add_outbufs(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
			   uint16_t n);

/**
 * virtq_add_inbufs() publishes whenever the avail position reaches a
 * multiple of this many: packed 4 (a cache line of descriptors); split 0,
 * never before virtq_kick_prepare(). On a packed ring, a caller that
 * prepares receive buffers in chunks of this size lets the device fill each
 * chunk as soon as it is added. virtq_add_outbufs() publishes at
 * virtq_kick_prepare() on both layouts.
 */
uint16_t virtq_publish_group(const struct virtq *vq);

/**
 * Publish what was added and is not visible yet (release store of the avail
 * index, packed: of the first held-back head's flags; then a full barrier)
 * and decide whether the device wants a notification for what it was given
 * since the last call (split:
 * VIRTQ_USED_F_NO_NOTIFY, or avail_event with event idx; packed: the device
 * event area, ENABLE / DISABLE, or DESC: off_wrap, taken with its wrap
 * counter, in the range published, by the event-idx rule).
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
 * virtqueue_enable_cb_prepare). Split: event idx: used_event = last used
 * index; otherwise clear VIRTQ_AVAIL_F_NO_INTERRUPT. Packed: driver event
 * flags ENABLE, or with event idx off_wrap = the next used position (slot,
 * used wrap counter in bit 15) then flags DESC. Writes shared memory only if
 * a value changes.
 * @return an opaque for virtq_poll(): split, the last used index; packed,
 * the next used slot with the used wrap counter in bit 15.
 */
uint32_t virtq_enable_intr_prepare(struct virtq *vq);

/**
 * Second half (Linux virtqueue_poll): a full barrier (our store of the
 * arming before our load of the used index / descriptor flags; pairs with
 * the device's store of them before its load of the flag / used_event /
 * driver event area), then report whether completions arrived after @p
 * opaque was taken (packed: whether the descriptor at the opaque's slot was
 * made used in the opaque's wrap). If true, a notification may or may not
 * have been sent for them: the caller must process them itself.
 * @return true if work is pending; false if none, or the queue is broken.
 */
bool virtq_poll(struct virtq *vq, uint32_t opaque);

/**
 * Suppress the device's notifications again: split, flag, or used_event moved
 * out of reach of the device the Linux way (keeping it out of reach during
 * long polling phases is done by virtq_get_used()); packed, driver event
 * flags DISABLE. Idempotent; writes shared memory only when the state
 * changes.
 */
void virtq_disable_intr(struct virtq *vq);

/**
 * Disarm for the driver, but leave the device the event it was given: for
 * a disarm that found completions whose notification it has not read. The
 * device may have made them used and not yet read the event area; it then
 * still sees the queue armed and owes the notification, where after
 * virtq_disable_intr() it could rightly send none, and the driver could not
 * tell a notification withheld from one lost. With event idx that is the
 * only notification the event can still bring (the device has passed the
 * index it names); in flag mode the device notifies every completion until
 * virtq_disable_intr(), which the caller calls once the owed notification
 * is read. virtq_intr_enabled() is false afterwards; the next
 * virtq_enable_intr_prepare() or virtq_disable_intr() replaces the event.
 */
void virtq_disarm_keep_event(struct virtq *vq);

/** True between virtq_enable_intr_prepare() and virtq_disable_intr() or
 * virtq_disarm_keep_event(). */
bool virtq_intr_enabled(const struct virtq *vq);

/**
 * Detach one buffer the device still holds or that was not yet taken
 * (queue stopped). Call until it returns NULL, then virtq_init() to reuse.
 * Works on a broken queue. Do not add buffers between the calls.
 * @return its cookie, or NULL when none remains.
 */
void *virtq_detach_unused(struct virtq *vq);

/**
 * Chains added and not yet taken by virtq_get_used() (whether the device
 * used them or not): what virtq_detach_unused() would give back now. O(num),
 * for the control path (the tx drain at stop). Works on a broken queue.
 */
uint16_t virtq_outstanding(const struct virtq *vq);

/** True once a device-written value was rejected. */
bool virtq_is_broken(const struct virtq *vq);

/** Why the queue is broken (a static string), or NULL. */
const char *virtq_broken_reason(const struct virtq *vq);

/** Mark the queue broken from outside (e.g. transport failure). */
void virtq_mark_broken(struct virtq *vq, const char *reason);

/** The queue's counters. */
const struct virtq_stats *virtq_stats(const struct virtq *vq);

/** Index the driver will write next (split: avail entry; packed: descriptor position). */
uint16_t virtq_avail_idx(const struct virtq *vq);

/** Next used index to consume (split: used entry; packed: descriptor position). */
uint16_t virtq_last_used_idx(const struct virtq *vq);

/**
 * Where a power-monitor wait (rte_power_monitor) can watch for the device's
 * next completion. The wait may sleep while `(value & *mask) == *expected`,
 * value being the *size bytes at the returned address; any completion makes
 * the condition false. Split: &used->idx, expected the last used index, mask
 * 0xffff. Packed: the flags of the descriptor at the next used position,
 * mask VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED, expected their current value
 * (which is never "used in the current wrap": then expected differs from
 * it and nothing sleeps). Valid until the next virtq call on @p vq.
 * @return the address, or NULL if the queue is broken or an argument NULL.
 */
volatile void *virtq_monitor_addr(struct virtq *vq, uint64_t *expected, uint64_t *mask,
				  uint8_t *size);

#endif /* _VIRTQ_H_ */
