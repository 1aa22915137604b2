/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VIRTQ_PRIVATE_H_
#define _VIRTQ_PRIVATE_H_

/**
 * @file
 * @internal
 * The private state of a virtqueue and the table of layout operations
 * (split in virtq_split.c, packed in virtq_packed.c). virtq.c holds the
 * public functions: it validates parameters, refuses work on a broken queue
 * and dispatches through the per-process table of layouts, so a layout only
 * implements the ring itself.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "virtq.h"

/**
 * @internal
 * Driver-private state of one chain, indexed by its head descriptor. Nothing
 * here is ever read back from shared memory.
 */
struct virtq_head {
	void *cookie;     /**< NULL: this index is not an outstanding head. */
	uint32_t in_len;  /**< Sum of the device-writable lengths (saturated). */
	uint16_t ndescs;  /**< Ring descriptors the chain takes (1 when indirect). */
	uint16_t nin;     /**< Device-writable descriptors (0: used len is ignored). */
};

/**
 * @internal
 * Ring operations of one layout. virtq.c calls them only on a queue that is
 * initialised and not broken (except release, monitor_addr and
 * vring_base), with validated arguments (see each public function in virtq.h
 * for the contract).
 *
 * The tables live in virtq.c, one per layout, in a per-process static array
 * indexed by vq->params.layout: struct virtq sits in memory shared with
 * secondary processes, which map this library at another address, so it must
 * hold no pointer into the library image (no ops pointer, no static string).
 */
struct virtq_ops {
	/** Bytes of ring memory for @p num entries (num already validated). */
	size_t (*ring_mem_size)(uint16_t num);
	/** Lay out the (already zeroed) ring memory; set the area pointers. */
	void (*init)(struct virtq *vq, void *ring_mem);
	/**
	 * out + in >= 1, cookie != NULL, and the ring descriptors the chain
	 * takes (1 if virtq_chain_indirect(), else out + in) <= num_free.
	 */
	void (*add)(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		    void *cookie);
	/** n single-descriptor chains, device-writable if @p in; n <= num_free. */
	uint16_t (*add_bufs)(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
			     uint16_t n, bool in);
	/** Publish up to avail_idx and decide whether to notify; called only
	 * when something was added since the last kick at @p old (kick_idx is
	 * already avail_idx; virtq_kick_prepare() counts the outcome).
	 */
	bool (*kick_prepare)(struct virtq *vq, uint16_t old);
	uint16_t (*get_used)(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max);
	uint16_t (*used_count)(struct virtq *vq);
	uint32_t (*enable_intr_prepare)(struct virtq *vq);
	bool (*poll)(struct virtq *vq, uint32_t opaque);
	void (*disable_intr)(struct virtq *vq);
	/** Give back the descriptors (ids) of outstanding chain @p head, forget its cookie. */
	void (*release)(struct virtq *vq, uint16_t head);
	volatile void *(*monitor_addr)(struct virtq *vq, uint64_t *expected, uint64_t *mask,
				       uint8_t *size);
	uint16_t (*vring_base)(const struct virtq *vq);
};

/**
 * @internal
 * Declare the operations of one layout: functions named virtq_<op>_<sfx>,
 * defined in virtq_<sfx>.c. They have external linkage only so that virtq.c
 * can build its table of layouts as an array of structures (one indexed load
 * per dispatch); nothing outside lib/virtq calls them.
 */
#define VIRTQ_LAYOUT_DECLARE(sfx) \
	size_t virtq_ring_mem_size_##sfx(uint16_t num); \
	void virtq_init_##sfx(struct virtq *vq, void *ring_mem); \
	void virtq_add_##sfx(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, \
			     uint16_t in, void *cookie); \
	uint16_t virtq_add_bufs_##sfx(struct virtq *vq, const struct virtq_sg *sg, \
				      void *const *cookies, uint16_t n, bool in); \
	bool virtq_kick_prepare_##sfx(struct virtq *vq, uint16_t old); \
	uint16_t virtq_get_used_##sfx(struct virtq *vq, void **cookies, uint32_t *lens, \
				      uint16_t max); \
	uint16_t virtq_used_count_##sfx(struct virtq *vq); \
	uint32_t virtq_enable_intr_prepare_##sfx(struct virtq *vq); \
	bool virtq_poll_##sfx(struct virtq *vq, uint32_t opaque); \
	void virtq_disable_intr_##sfx(struct virtq *vq); \
	void virtq_release_##sfx(struct virtq *vq, uint16_t head); \
	volatile void *virtq_monitor_addr_##sfx(struct virtq *vq, uint64_t *expected, \
						uint64_t *mask, uint8_t *size); \
	uint16_t virtq_vring_base_##sfx(const struct virtq *vq)

/**
 * @internal
 * The in-order variant of a layout (params.in_order): the same table, with
 * the operations whose id allocation or completion rule differs replaced by
 * their _<sfx>_io versions (VIRTQ_LAYOUT_DECLARE_IO).
 */
#define VIRTQ_LAYOUT_DECLARE_IO(sfx) \
	void virtq_add_##sfx##_io(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, \
				  uint16_t in, void *cookie); \
	uint16_t virtq_add_bufs_##sfx##_io(struct virtq *vq, const struct virtq_sg *sg, \
					   void *const *cookies, uint16_t n, bool in); \
	uint16_t virtq_get_used_##sfx##_io(struct virtq *vq, void **cookies, uint32_t *lens, \
					   uint16_t max); \
	uint16_t virtq_used_count_##sfx##_io(struct virtq *vq)

/**
 * @internal
 * The in-order burst operations of a layout, built on its cursors in
 * virtq_burst.h: add_bufs posts one descriptor per buffer through
 * virtq_put_<sfx>() (a direction fixed at compile time on each branch),
 * get_used takes chains through virtq_take_<sfx>() until one is not there
 * or is rejected. Both layouts share this one text.
 */
#define VIRTQ_LAYOUT_DEFINE_IO_BURST(sfx, layout) \
static __rte_always_inline uint16_t \
virtq_add_bufs_##sfx##_io_dir(struct virtq *vq, const struct virtq_sg *sg, \
			      void *const *cookies, uint16_t n, bool in) \
{ \
	struct virtq_put p; \
	uint16_t i; \
 \
	n = RTE_MIN(n, virtq_put_begin(vq, &p, layout, in)); \
	for (i = 0; i < n && cookies[i] != NULL; i++) \
		virtq_put_##sfx(&p, sg[i].addr, sg[i].len, cookies[i], in); \
	virtq_put_end(vq, &p, layout); \
	return i; \
} \
 \
uint16_t \
virtq_add_bufs_##sfx##_io(struct virtq *vq, const struct virtq_sg *sg, \
			  void *const *cookies, uint16_t n, bool in) \
{ \
	return in ? virtq_add_bufs_##sfx##_io_dir(vq, sg, cookies, n, true) : \
		    virtq_add_bufs_##sfx##_io_dir(vq, sg, cookies, n, false); \
} \
 \
uint16_t \
virtq_get_used_##sfx##_io(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max) \
{ \
	struct virtq_take t; \
	uint16_t n = virtq_take_begin(vq, &t, layout, max); \
	uint16_t i; \
	uint32_t len; \
 \
	for (i = 0; i < n; i++) { \
		if (virtq_take_##sfx(&t, &cookies[i], &len) != 1) \
			break; \
		if (lens != NULL) \
			lens[i] = len; \
	} \
	virtq_take_end(vq, &t, layout); \
	return i; \
}

/** @internal The designated initializer of one layout's table. */
#define VIRTQ_LAYOUT_OPS(sfx) { \
	.ring_mem_size = virtq_ring_mem_size_##sfx, \
	.init = virtq_init_##sfx, \
	.add = virtq_add_##sfx, \
	.add_bufs = virtq_add_bufs_##sfx, \
	.kick_prepare = virtq_kick_prepare_##sfx, \
	.get_used = virtq_get_used_##sfx, \
	.used_count = virtq_used_count_##sfx, \
	.enable_intr_prepare = virtq_enable_intr_prepare_##sfx, \
	.poll = virtq_poll_##sfx, \
	.disable_intr = virtq_disable_intr_##sfx, \
	.release = virtq_release_##sfx, \
	.monitor_addr = virtq_monitor_addr_##sfx, \
	.vring_base = virtq_vring_base_##sfx, \
}

/** @internal The table of a layout's in-order variant. */
#define VIRTQ_LAYOUT_OPS_IO(sfx) { \
	.ring_mem_size = virtq_ring_mem_size_##sfx, \
	.init = virtq_init_##sfx, \
	.add = virtq_add_##sfx##_io, \
	.add_bufs = virtq_add_bufs_##sfx##_io, \
	.kick_prepare = virtq_kick_prepare_##sfx, \
	.get_used = virtq_get_used_##sfx##_io, \
	.used_count = virtq_used_count_##sfx##_io, \
	.enable_intr_prepare = virtq_enable_intr_prepare_##sfx, \
	.poll = virtq_poll_##sfx, \
	.disable_intr = virtq_disable_intr_##sfx, \
	.release = virtq_release_io, \
	.monitor_addr = virtq_monitor_addr_##sfx, \
	.vring_base = virtq_vring_base_##sfx, \
}

/**
 * @internal
 * Bit of the virtq_enable_intr_prepare() opaque: completions the device
 * already reported are not taken yet (packed in-order: the rest of a batch
 * reported by one used descriptor), so virtq_poll() must say true at once.
 */
#define VIRTQ_OPAQUE_PENDING (UINT32_C(1) << 16)

/**
 * @internal
 * Flags of element @p i of a chain of @p total elements whose first @p out
 * are device-readable: WRITE for the device-writable ones, NEXT on all but
 * the last. The same rule in both layouts.
 */
static inline uint16_t
virtq_chain_flags(uint32_t i, uint32_t out, uint32_t total)
{
	return (uint16_t)((i >= out ? VIRTQ_DESC_F_WRITE : 0) |
			  (i + 1 < total ? VIRTQ_DESC_F_NEXT : 0));
}

/** @internal Room for the broken reason, terminating NUL included. */
#define VIRTQ_REASON_LEN 64

/*
 * The packed bulk paths publish receive buffers at each multiple of this
 * many positions, so the device fills the first buffers of a refill while
 * the driver adds the rest (virtq_publish_group()): four 16-byte
 * descriptors fill a 64-byte cache line, and lib/vhost takes four at a time
 * only from such a line with all four available
 * (virtio_dev_rx_sync_batch_check). Send buffers, on either layout, are
 * published once per call, by virtq_kick_prepare(): a device that polls
 * the next head while the driver is mid-burst takes the cache line the
 * driver is writing, and the part published so far, and each lib/vhost
 * dequeue has a fixed cost (doc/design.md, "Publication").
 */
#define VIRTQ_PACKED_PUBLISH 4

/**
 * @internal
 * A virtqueue. Lives in caller memory of virtq_state_size() bytes: this
 * structure, then heads[num], then the free-list links next[num].
 */
struct virtq {
	struct virtq_params params;
	uint16_t mask;             /**< num - 1: indices are masked only at access. */
	/** Index of the operations in the per-process table: the layout, and
	 * its in-order variant if params.in_order.
	 */
	uint8_t ops_idx;

	/*
	 * Descriptor allocation (private, never read from shared memory).
	 * Split: free_head/next[] link free descriptors and chains; heads[] is
	 * indexed by head descriptor. Packed: num_free counts free ring slots;
	 * free_head/next[] link free buffer ids; heads[] is indexed by buffer id,
	 * and next[id] of an id in flight holds the free-running ring position
	 * of its chain's first descriptor.
	 * In order (params.in_order), no list: split takes descriptors in
	 * index order from free_head (the oldest chain in flight starts at
	 * split.ord_head); packed uses the slot of a chain's first descriptor
	 * as its buffer id. heads[i].cookie != NULL still marks exactly the
	 * heads (ids) in flight.
	 */
	uint16_t num_free;
	uint16_t free_head;        /**< First free descriptor / id; valid when num_free > 0. */
	uint16_t *next;            /**< Free-list and chain links, [num]. */

	/*
	 * Driver-side indices, free-running modulo 2^16, masked only at
	 * access. Split: avail ring and used ring entries. Packed: descriptor
	 * ring positions (slot = index & mask; the wrap counter of a position
	 * flips each time the index passes a multiple of num).
	 */
	uint16_t avail_idx;        /**< Next avail index we will write (not yet published). */
	uint16_t avail_published;  /**< Shadow of the avail idx in ring memory. */
	uint16_t kick_idx;         /**< avail_idx at the last kick decision. */
	uint16_t last_used;        /**< Next used index to consume. */

	/* Shadows of the suppression state we publish. */
	uint16_t avail_flags;      /**< Shadow of avail->flags. */
	uint16_t used_event;       /**< Shadow of used_event (event idx only). */
	bool intr_enabled;
	/* Disarmed by virtq_disarm_keep_event(): the event we published is
	 * still in the device's view (virtq_disable_intr() withdraws it). */
	bool event_left;

	bool broken;
	/* A copy, not a pointer: a static string of one process is not at the
	 * same address in another.
	 */
	char broken_reason[VIRTQ_REASON_LEN];

	uint16_t detach_pos;       /**< Next head index virtq_detach_unused() looks at. */

	/* Areas in ring memory, set by ops->init. */
	void *desc_area;
	void *driver_area;
	void *device_area;
	/*
	 * Indirect tables in ring memory, [num][params.indirect_max]
	 * descriptors, one table per head descriptor (split) or buffer id
	 * (packed); NULL when indirect_max is 0. Set by virtq_init().
	 */
	void *indirect;

	/* Layout-specific typed views of the same areas. */
	union {
		struct {
			struct virtq_desc *desc;
			struct virtq_avail *avail;
			struct virtq_used *used;
			uint16_t *used_event;   /**< In the avail ring, after ring[num]. */
			uint16_t *avail_event;  /**< In the used ring, after ring[num]. */
			uint16_t ord_head;      /**< In order: head of the oldest chain in flight. */
		} split;
		struct {
			struct virtq_packed_desc *desc;
			struct virtq_packed_event *driver;  /**< We write: interrupt suppression. */
			struct virtq_packed_event *device;  /**< Device writes: kick suppression. */
			bool avail_wrap;        /**< Wrap counter at avail_idx. */
			bool used_wrap;         /**< Wrap counter at last_used. */
			uint16_t head_flags;    /**< Flags of the head at avail_published. */
			uint16_t event_flags;   /**< Shadow of driver->flags. */
			uint16_t event_off_wrap; /**< Shadow of driver->off_wrap. */
			/* In order: the device reported every chain before
			 * position ord_end used (one used descriptor for a
			 * batch); last_used == ord_end when none is pending.
			 * ord_len is the used len of the chain ending there.
			 */
			uint16_t ord_end;
			uint32_t ord_len;
		} packed;
	};

	struct virtq_stats stats;

	struct virtq_head heads[];  /**< [num], followed by next[num]. */
};

/**
 * @internal
 * True if a chain of @p total elements goes in an indirect table: two or
 * more elements, at most indirect_max, and fewer than num (a table may not
 * be longer than the ring; lib/vhost also refuses a packed table of num).
 */
static inline bool
virtq_chain_indirect(const struct virtq *vq, uint32_t total)
{
	return total >= 2 && total <= vq->params.indirect_max && total < vq->params.num;
}

/**
 * @internal
 * The indirect table of head descriptor (split) or buffer id (packed) @p id.
 * Both layouts' descriptors are VIRTQ_DESC_SIZE bytes.
 */
static inline void *
virtq_indirect_table(const struct virtq *vq, uint16_t id)
{
	return (uint8_t *)vq->indirect + (size_t)id * vq->params.indirect_max * VIRTQ_DESC_SIZE;
}

/**
 * @internal
 * Store @p v in the driver-written ring word @p shared, with memory order
 * @p order (a constant), and in our shadow @p shadow, if it changes.
 * @return true if shared memory was written.
 */
static inline bool
virtq_store_shadowed(uint16_t *shadow, uint16_t *shared, uint16_t v, int order)
{
	if (*shadow == v)
		return false;
	*shadow = v;
	__atomic_store_n(shared, v, order);
	return true;
}

/**
 * @internal
 * Reject a device-written value: count it in bad_used and mark the queue
 * broken. @p reason must be a static string.
 */
void virtq_bad_used(struct virtq *vq, const char *reason);

/**
 * @internal
 * In order, both layouts: give back chain @p head (packed: buffer id)
 * without the device (virtq_detach_unused()). No free list: allocation
 * follows the ring order, so only the count and the cookie change.
 */
void virtq_release_io(struct virtq *vq, uint16_t head);

/**
 * @internal
 * In order, both layouts: hand chain @p h to the caller as completion @p n
 * (len @p len) and count its descriptors in @p freed.
 */
static inline void
virtq_take_io(struct virtq_head *h, void **cookies, uint32_t *lens, uint16_t n, uint32_t len,
	      uint16_t *freed)
{
	cookies[n] = h->cookie;
	if (lens != NULL)
		lens[n] = len;
	h->cookie = NULL;
	*freed = (uint16_t)(*freed + h->ndescs);
}

/**
 * @internal
 * Split, disarmed with event idx: used_event = L - 1 for some earlier last
 * used L. Once 2^15 past it, move it to last_used - 1 again, so that the
 * device (at most num <= 2^15 ahead of us) never crosses it (virtq_split.c;
 * called by virtq_take_end(), once per 2^15 completions).
 */
void virtq_used_event_refresh_split(struct virtq *vq);

/** @internal The split-ring operations (virtq_split.c). */
VIRTQ_LAYOUT_DECLARE(split);
/** @internal The packed-ring operations (virtq_packed.c). */
VIRTQ_LAYOUT_DECLARE(packed);
/** @internal In-order variants (virtq_split.c, virtq_packed.c). */
VIRTQ_LAYOUT_DECLARE_IO(split);
VIRTQ_LAYOUT_DECLARE_IO(packed);

#endif /* _VIRTQ_PRIVATE_H_ */
