/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VIRTQ_PRIVATE_H_
#define _VIRTQ_PRIVATE_H_

/**
 * @file
 * @internal
 * The private state of a virtqueue and the table of layout operations
 * (split in virtq_split.c, packed in a later virtq_packed.c). virtq.c holds
 * the public functions: it validates parameters, refuses work on a broken
 * queue and dispatches through vq->ops, so a layout only implements the ring
 * itself.
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
	uint16_t ndescs;  /**< Descriptors in the chain. */
	uint16_t nin;     /**< Device-writable descriptors (0: used len is ignored). */
};

/**
 * @internal
 * Ring operations of one layout. virtq.c calls them only on a queue that is
 * initialised and not broken, with validated arguments (see each public
 * function in virtq.h for the contract).
 */
struct virtq_ops {
	/** Bytes of ring memory for @p num entries (num already validated). */
	size_t (*ring_mem_size)(uint16_t num);
	/** Lay out the (already zeroed) ring memory; set the area pointers. */
	void (*init)(struct virtq *vq, void *ring_mem);
	/** out + in >= 1, cookie != NULL, out + in <= num_free. */
	void (*add)(struct virtq *vq, const struct virtq_sg *sg, uint16_t out, uint16_t in,
		    void *cookie);
	uint16_t (*add_inbufs)(struct virtq *vq, const struct virtq_sg *sg, void *const *cookies,
			       uint16_t n);
	bool (*kick_prepare)(struct virtq *vq);
	uint16_t (*get_used)(struct virtq *vq, void **cookies, uint32_t *lens, uint16_t max);
	uint16_t (*used_count)(struct virtq *vq);
	uint32_t (*enable_intr_prepare)(struct virtq *vq);
	bool (*poll)(struct virtq *vq, uint32_t opaque);
	void (*disable_intr)(struct virtq *vq);
	void *(*detach_unused)(struct virtq *vq);
};

/**
 * @internal
 * A virtqueue. Lives in caller memory of virtq_state_size() bytes: this
 * structure, then heads[num], then the free-list links next[num].
 */
struct virtq {
	const struct virtq_ops *ops;
	struct virtq_params params;
	uint16_t mask;             /**< num - 1: indices are masked only at access. */

	/* Descriptor allocation (private, never read from shared memory). */
	uint16_t num_free;
	uint16_t free_head;        /**< First free descriptor; valid when num_free > 0. */
	uint16_t *next;            /**< Free-list and chain links, [num]. */

	/* Driver-side indices, free-running modulo 2^16. */
	uint16_t avail_idx;        /**< Next avail index we will write (not yet published). */
	uint16_t avail_published;  /**< Shadow of the avail idx in ring memory. */
	uint16_t last_used;        /**< Next used index to consume. */

	/* Shadows of the suppression state we publish. */
	uint16_t avail_flags;      /**< Shadow of avail->flags. */
	uint16_t used_event;       /**< Shadow of used_event (event idx only). */
	bool intr_enabled;

	bool broken;
	const char *broken_reason;

	uint16_t detach_pos;       /**< Next head index virtq_detach_unused() looks at. */

	/* Areas in ring memory, set by ops->init. */
	void *desc_area;
	void *driver_area;
	void *device_area;

	/* Layout-specific typed views of the same areas. */
	union {
		struct {
			struct virtq_desc *desc;
			struct virtq_avail *avail;
			struct virtq_used *used;
			uint16_t *used_event;   /**< In the avail ring, after ring[num]. */
			uint16_t *avail_event;  /**< In the used ring, after ring[num]. */
		} split;
	};

	struct virtq_stats stats;

	struct virtq_head heads[];  /**< [num], followed by next[num]. */
};

/**
 * @internal
 * Reject a device-written value: count it in bad_used and mark the queue
 * broken. @p reason must be a static string.
 */
void virtq_bad_used(struct virtq *vq, const char *reason);

/** @internal The split-ring operations (virtq_split.c). */
extern const struct virtq_ops virtq_ops_split;

#endif /* _VIRTQ_PRIVATE_H_ */
