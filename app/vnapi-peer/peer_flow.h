/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_FLOW_H_
#define _PEER_FLOW_H_

/**
 * @file
 * Peer library: a flow of numbered test frames, the one frame format of
 * every traffic program of this tree (app/vnapi-peer and the one-process
 * tests): built, checked byte for byte when it comes back, and accounted.
 *
 * A frame is Ethernet/IPv4/UDP (peer_udp_fill()); its UDP payload starts
 * with struct peer_flow_hdr (a magic, the run, the flow, the sequence
 * number and the time it was sent), followed by a
 * pattern derived from the run, the flow and the sequence number. The
 * receiver rebuilds the frame from its header and compares every byte, as
 * the forwarder in between must have left it (enum peer_xform).
 *
 * A tally counts what came back of the frames sent: back (within the loss
 * timeout), late (after it: lost all the same), duplicates, out of order
 * and never sent; lost is what was sent and is not back.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>

#include "peer_frame.h"
#include "vnapi_compat.h"

/** The first two bytes of every flow frame's payload: "VN". */
#define PEER_FLOW_MAGIC 0x4e56u

/** The payload header of a flow frame; host byte order (sender and receiver are us). */
struct __rte_packed_begin peer_flow_hdr {
	uint16_t magic;   /**< PEER_FLOW_MAGIC */
	uint16_t run;     /**< the run (a sender's random id) */
	uint32_t seq;     /**< the frame's sequence number in its flow */
	uint64_t t_ns;    /**< CLOCK_MONOTONIC when sent (stamped flows), else 0 */
	uint8_t flow;     /**< the flow (a phase, a queue and direction) */
	uint8_t kind;     /**< what the frame is for (the sender's own meaning) */
} __rte_packed_end;

/** Where the header starts, and the shortest flow frame (60 bytes: Ethernet's). */
#define PEER_FLOW_HDR_OFF PEER_UDP_PL_OFF
#define PEER_FLOW_MIN_LEN (PEER_FLOW_HDR_OFF + (uint32_t)sizeof(struct peer_flow_hdr))
/** The longest flow frame. */
#define PEER_FLOW_MAX_LEN 9600u

/** What the forwarder between sender and receiver does to a frame. */
enum peer_xform {
	PEER_XFORM_IO,      /**< nothing: the frame as sent (vnapi-fwd --fwd io, testpmd io) */
	PEER_XFORM_MACSWAP, /**< the MAC addresses swapped (vnapi-fwd --fwd macswap) */
	PEER_XFORM_ROUTED,  /**< l3fwd-power's routing out of port 0: destination
			      *  02:00:00:00:00:00, source the front end's MAC, TTL - 1,
			      *  the IPv4 checksum updated (not compared) */
};

/** The frames of one flow, as its sender builds them. */
struct peer_flow {
	struct peer_udp udp; /**< headers; ip_id is the sequence number's low 16 bits */
	uint16_t run;
	uint8_t flow;
	uint8_t kind;
	/** UDP source ports: udp.port_src + seq % nb_src_ports (0 or 1: one port). */
	uint32_t nb_src_ports;
	/** Frames carry their send time (not compared); else t_ns is 0 and compared. */
	bool stamped;
};

/** What a receiver expects a forwarder to have done. */
struct peer_expect {
	enum peer_xform xform;
	/** routed: the source MAC must be the flow's destination (the front end's). */
	bool src_known;
};

/**
 * Write frame @p seq of @p f, @p len bytes (PEER_FLOW_MIN_LEN ..
 * PEER_FLOW_MAX_LEN), sent at @p t_ns (stamped flows), at @p buf.
 */
void peer_flow_build(const struct peer_flow *f, uint8_t *buf, uint32_t len, uint32_t seq,
		     uint64_t t_ns);

/**
 * The header of a received frame of run @p run.
 * @return 0, or -1 when the frame is not one (too short, magic, run).
 */
int peer_flow_peek(const uint8_t *buf, uint32_t len, uint16_t run, struct peer_flow_hdr *h);

/**
 * Compare a received frame with frame @p h->seq of @p f as the forwarder
 * had to leave it (@p e).
 * @return @p len when they are the same, else the first offset that differs
 *   (a frame of another length differs in its IPv4 total length).
 */
uint32_t peer_flow_diff(const struct peer_flow *f, const struct peer_expect *e,
			const uint8_t *buf, uint32_t len, const struct peer_flow_hdr *h);

/** What came back of a flow's frames. */
struct peer_tally {
	uint64_t sent;     /**< frames the transport took (sequence numbers 0..sent-1) */
	uint64_t back;     /**< first copies back within the loss timeout */
	uint64_t late;     /**< first copies back after it: lost all the same */
	uint64_t dup;      /**< copies of a frame already back */
	uint64_t ooo;      /**< first copies back in time after one sent later */
	uint64_t stray;    /**< sequence numbers never sent */
	uint64_t next;     /**< the highest sequence number back, plus one */
	uint64_t *seen;    /**< one bit per sequence number sent */
	uint64_t words;    /**< of seen */
};

/** What peer_tally_back() made of a frame. */
enum peer_tally_verdict {
	PEER_TALLY_BACK,   /**< back in time (in order or not: see ooo) */
	PEER_TALLY_LATE,
	PEER_TALLY_DUP,
	PEER_TALLY_STRAY,
};

/** Release the tally's bitmap and zero it. */
void peer_tally_free(struct peer_tally *t);

/**
 * @p n more frames were sent (sequence numbers sent .. sent + n - 1).
 * @return 0, or -ENOMEM (the bitmap could not grow; nothing counted).
 */
int peer_tally_sent(struct peer_tally *t, uint64_t n);

/** Account for frame @p seq back, after the loss timeout when @p late. */
enum peer_tally_verdict peer_tally_back(struct peer_tally *t, uint64_t seq, bool late);

/** Whether frame @p seq came back (in time or late). */
bool peer_tally_seen(const struct peer_tally *t, uint64_t seq);

/** Frames sent and not back within the loss timeout (late ones included). */
static inline uint64_t
peer_tally_lost(const struct peer_tally *t)
{
	return t->sent - t->back;
}

#endif /* _PEER_FLOW_H_ */
