/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VIRTQ_RING_H_
#define _VIRTQ_RING_H_

/**
 * @file
 * Virtqueue memory layouts as the virtio 1.2 specification defines them
 * (section 2.7 split, 2.8 packed), little-endian on x86. Shared by the driver
 * half (lib/virtq) and the fake device of the unit tests. No logic here except
 * virtq_need_event(), a pure function.
 */

#include <stdbool.h>
#include <stdint.h>

/* Descriptor flags (split and packed). */
#define VIRTQ_DESC_F_NEXT      1
#define VIRTQ_DESC_F_WRITE     2
#define VIRTQ_DESC_F_INDIRECT  4
/* Packed ring only. */
#define VIRTQ_DESC_F_AVAIL     (1 << 7)
#define VIRTQ_DESC_F_USED      (1 << 15)

/* Split ring suppression flags. */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY     1

/* Packed ring event suppression. */
#define VIRTQ_EVENT_F_ENABLE  0
#define VIRTQ_EVENT_F_DISABLE 1
#define VIRTQ_EVENT_F_DESC    2
#define VIRTQ_EVENT_WRAP_SHIFT 15

/* Feature bits of the transport (virtio 1.2 section 6). */
#define VIRTIO_F_RING_INDIRECT_DESC 28
#define VIRTIO_F_RING_EVENT_IDX     29
#define VIRTIO_F_VERSION_1          32
#define VIRTIO_F_RING_PACKED        34
#define VIRTIO_F_IN_ORDER           35

/** Bytes of one descriptor, split or packed, in a ring or an indirect table. */
#define VIRTQ_DESC_SIZE 16

/** Largest queue size a split ring may have. */
#define VIRTQ_MAX_NUM 32768
/** Alignment of every ring area we allocate (legacy-compatible). */
#define VIRTQ_RING_ALIGN 4096

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct virtq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];
	/* uint16_t used_event; after ring[num], with EVENT_IDX */
};

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};

struct virtq_used {
	uint16_t flags;
	uint16_t idx;
	struct virtq_used_elem ring[];
	/* uint16_t avail_event; after ring[num], with EVENT_IDX */
};

struct virtq_packed_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t id;
	uint16_t flags;
};

struct virtq_packed_event {
	uint16_t off_wrap;
	uint16_t flags;
};

/** Address of used_event: the slot after the avail ring. */
static inline uint16_t *
virtq_used_event(struct virtq_avail *avail, uint16_t num)
{
	return &avail->ring[num];
}

/** Address of avail_event: the slot after the used ring. */
static inline uint16_t *
virtq_avail_event(struct virtq_used *used, uint16_t num)
{
	return (uint16_t *)&used->ring[num];
}

/**
 * The event-idx rule (virtio 1.2 section 2.7.10): having moved an index from
 * @p old to @p new_idx, notify the other side if its event index lies in
 * [old, new_idx). All arithmetic is modulo 2^16.
 */
static inline bool
virtq_need_event(uint16_t event_idx, uint16_t new_idx, uint16_t old)
{
	return (uint16_t)(new_idx - event_idx - 1) < (uint16_t)(new_idx - old);
}

/** Bytes of the split descriptor table. */
static inline uint32_t
virtq_split_desc_size(uint16_t num)
{
	return (uint32_t)num * sizeof(struct virtq_desc);
}

/** Bytes of the split avail ring, used_event included. */
static inline uint32_t
virtq_split_avail_size(uint16_t num)
{
	return sizeof(struct virtq_avail) + (uint32_t)num * sizeof(uint16_t) + sizeof(uint16_t);
}

/** Bytes of the split used ring, avail_event included. */
static inline uint32_t
virtq_split_used_size(uint16_t num)
{
	return sizeof(struct virtq_used) + (uint32_t)num * sizeof(struct virtq_used_elem) +
		sizeof(uint16_t);
}

#endif /* _VIRTQ_RING_H_ */
