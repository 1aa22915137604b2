/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_FAKE_DEVICE_H_
#define _VNAPI_FAKE_DEVICE_H_

/**
 * @file
 * The DEVICE half of a virtqueue over plain memory, for the unit tests.
 * With params.indirect_max (VIRTIO_F_RING_INDIRECT_DESC negotiated) it
 * follows indirect descriptors the way lib/vhost fill_vec_buf_split /
 * fill_vec_buf_packed do, and checks the driver's side of the rules
 * (2.7.5.3, 2.8.19): INDIRECT only on a lone ring descriptor, never with
 * NEXT; table length a non-zero multiple of 16, at most indirect_max
 * entries and fewer than num; no INDIRECT inside a table; split tables
 * linked by next within the table, every entry used; packed table entries
 * carrying no flag but WRITE. Without the feature, INDIRECT is an error.
 *
 * It behaves as a vhost-user backend that got SET_VRING_BASE(vring base) and
 * SET_VRING_ADDR(the driver's areas): it pops available chains, validating
 * everything the driver wrote; writes data into the device-writable buffers;
 * pushes used entries with a chosen len; publishes them and decides, by the
 * flag or event-idx rule, whether it would send a call (counted). Kicks are
 * counted when the test delivers them (fake_dev_kick()). Fault injection
 * writes what a buggy or hostile device would.
 *
 * Layouts sit behind an ops table (split, packed), like lib/virtq. The packed
 * half follows DPDK 22.11 lib/vhost: the vring base is decoded as
 * vhost_user_set_vring_base does, used descriptors are written in place
 * (id and len, a release fence, the flags, the first one's last, as
 * vhost_flush_enqueue_shadow_packed), and the call decision is
 * vhost_vring_call_packed's. Packed positions are free-running like the
 * driver's, in a representation congruent to the driver's modulo 2 * num
 * (slot and wrap counter agree; the numbers may differ by a multiple of
 * 2 * num).
 *
 * Not thread safe: one device thread at a time.
 */

#include <stdbool.h>
#include <stdint.h>

#include "virtq.h"

/** Longest chain the fake device records. */
#define FAKE_DEV_MAX_SG 64

/** One chain popped from the avail ring. */
struct fake_dev_chain {
	uint16_t id;        /**< Split: head descriptor index; packed: buffer id. */
	uint16_t ndescs;    /**< Elements (sg[]), in an indirect table or not. */
	uint16_t nring;     /**< Ring descriptors (packed: slots) taken: 1 if indirect. */
	bool indirect;      /**< The elements came from an indirect table. */
	uint64_t table;     /**< Indirect: the table's address (else 0). */
	uint16_t nout;      /**< Device-readable elements, first. */
	uint16_t nin;       /**< Device-writable elements, after them. */
	uint32_t out_len;
	uint32_t in_len;    /**< Sum of the writable lengths. */
	struct virtq_sg sg[FAKE_DEV_MAX_SG];
	/**
	 * Ring descriptor (packed: ring slot) of each element; for an indirect
	 * chain, the one ring descriptor that points to the table.
	 */
	uint16_t desc_idx[FAKE_DEV_MAX_SG];
};

/** A packed used descriptor written by push and not yet flushed. */
struct fake_dev_pending {
	uint16_t pos;       /**< Free-running position. */
	uint16_t id;
	uint32_t len;
	bool read_only;     /**< Pushed for a chain with no writable buffer. */
};

struct fake_dev_ops;

struct fake_dev {
	const struct fake_dev_ops *ops;
	struct virtq_params params;
	uint16_t mask;

	struct {
		struct virtq_desc *desc;
		struct virtq_avail *avail;
		struct virtq_used *used;
		uint16_t *used_event;
		uint16_t *avail_event;
	} split;
	struct {
		struct virtq_packed_desc *desc;
		struct virtq_packed_event *driver;
		struct virtq_packed_event *device;
		struct fake_dev_pending *pend;   /**< [2 * num] pushed, not flushed. */
		uint16_t npend;
	} packed;

	uint16_t last_avail;       /**< Next avail entry (packed: position) to pop. */
	uint16_t used_idx;         /**< Next used entry to write (not yet published). */
	uint16_t used_published;   /**< Used idx in ring memory. */
	uint16_t signalled_used;   /**< Used idx at the previous call decision. */
	uint8_t *held;             /**< [num] descriptor (packed: buffer id) popped, not pushed. */
	uint64_t unflushed;        /**< Used entries pushed since the last flush. */
	/**
	 * Packed, in order (set from params.in_order by init; tests may
	 * change it): a flush of entries that are all for read-only chains
	 * (fake_dev_push of a chain without writable buffers) writes ONE used
	 * descriptor, at the first one's position, with the last one's id (the
	 * batch form of lib/vhost's in-order dequeue).
	 */
	bool inorder_batch;
	/** Attached by fake_dev_init_posted(). */
	bool posted_ok;
	/**
	 * If set, called by fake_dev_flush() between its publication of the
	 * used entries and its read of the driver's suppression state: what
	 * the driver does there (e.g. disarm) is what a device that stalls at
	 * that point sees. NULL by init.
	 */
	void (*between)(void *arg);
	void *between_arg;

	/* Counters, exact. */
	uint64_t kicks;            /**< fake_dev_kick() calls. */
	uint64_t calls;            /**< Call decisions that said "notify". */
	uint64_t call_checks;      /**< Call decisions taken (flushes that moved used idx). */
	uint64_t pops;
	uint64_t pushes;
	uint64_t chains_published; /**< Used entries made visible by flushes. */
	uint64_t driver_errors;    /**< Rule violations by the driver seen by the device. */
	char error[160];           /**< The last one. */
};

/**
 * Attach to a driver's ring (SET_VRING_ADDR + SET_VRING_BASE(@p vring_base),
 * decoded per layout as lib/vhost does; p->start_idx is not used).
 * @return 0, -EINVAL (layout not built), -ENOMEM, -EPROTO (the ring does not
 * look like a ring starting at @p vring_base).
 */
int fake_dev_init(struct fake_dev *d, const struct virtq_params *p, uint16_t vring_base,
		  void *desc_area, void *driver_area, void *device_area);

/**
 * As fake_dev_init(), for a ring in which the driver may already have made
 * buffers available (the PMD posts its rx buffers before it hands the ring
 * over): they are taken from @p vring_base on, as lib/vhost takes them.
 */
int fake_dev_init_posted(struct fake_dev *d, const struct virtq_params *p, uint16_t vring_base,
			 void *desc_area, void *driver_area, void *device_area);

/** What GET_VRING_BASE would answer (packed: slot | wrap counter << 15). */
uint16_t fake_dev_vring_base(const struct fake_dev *d);
void fake_dev_fini(struct fake_dev *d);

/** A notification from the driver arrived. */
void fake_dev_kick(struct fake_dev *d);

/** Chains available and not yet popped (validated: -EPROTO if insane). */
int fake_dev_avail_count(struct fake_dev *d);

/**
 * Pop the next available chain, validating the driver's descriptors.
 * @return 1 popped; 0 nothing available; -EPROTO the driver broke a rule
 * (d->error says which, d->driver_errors counts it).
 */
int fake_dev_pop(struct fake_dev *d, struct fake_dev_chain *c);

/** Write @p len bytes of @p data into the writable buffers; returns bytes written. */
uint32_t fake_dev_write(struct fake_dev *d, const struct fake_dev_chain *c, const void *data,
			uint32_t len);

/**
 * Write the used entry for a popped chain (not yet visible: see flush).
 * @return 0, -EINVAL if @p c is not held by the device.
 */
int fake_dev_push(struct fake_dev *d, const struct fake_dev_chain *c, uint32_t len);

/**
 * Publish the pushed entries (store-release of used idx), then a full fence,
 * then read flags / used_event and decide whether to call the driver.
 * @return true if a call was "sent" (counted in d->calls).
 */
bool fake_dev_flush(struct fake_dev *d);

/** Flag mode: set or clear VIRTQ_USED_F_NO_NOTIFY (packed: DISABLE / ENABLE). */
void fake_dev_set_no_notify(struct fake_dev *d, bool no_notify);
/**
 * Event idx: write avail_event (notify me when avail idx passes @p v);
 * packed: off_wrap = position @p v with its wrap counter, then flags DESC.
 */
void fake_dev_set_avail_event(struct fake_dev *d, uint16_t v);

/* Fault injection: each writes a used entry / moves the used idx the way a
 * buggy device would; like fake_dev_push(), nothing is visible before
 * fake_dev_flush().
 */
/**
 * A used entry with an arbitrary id and len (no checks, no bookkeeping);
 * packed: at the next used position, which then moves by one slot.
 */
void fake_dev_push_raw(struct fake_dev *d, uint32_t id, uint32_t len);
/** Used id out of range (= num). */
void fake_dev_inject_bad_id(struct fake_dev *d);
/** Used id that is not an outstanding head (the caller chooses which). */
void fake_dev_inject_non_head(struct fake_dev *d, uint16_t id);
/** A held chain completed with len = its writable length + 1. */
void fake_dev_inject_len_too_large(struct fake_dev *d, const struct fake_dev_chain *c);
/** Used idx moved by num + 1 without entries (split only: -ENOTSUP for packed). */
int fake_dev_inject_used_jump(struct fake_dev *d);

#endif /* _VNAPI_FAKE_DEVICE_H_ */
