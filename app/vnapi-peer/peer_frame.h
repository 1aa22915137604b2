/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_FRAME_H_
#define _PEER_FRAME_H_

/**
 * @file
 * Test-peer library: Ethernet/IPv4/UDP test frames, built in a flat buffer
 * and copied into one mbuf or a chain, and compared byte for byte.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

/** Where the UDP payload of a peer_udp_fill() frame starts. */
#define PEER_UDP_PL_OFF ((uint32_t)(sizeof(struct rte_ether_hdr) + \
				    sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr)))

/** The headers of a test frame; addresses and ports in host byte order. */
struct peer_udp {
	struct rte_ether_addr src;
	struct rte_ether_addr dst;
	uint32_t ip_src;
	uint32_t ip_dst;
	uint16_t port_src;
	uint16_t port_dst;
	uint16_t ip_id;
	uint8_t ttl;
};

/**
 * Write the Ethernet, IPv4 (with its checksum) and UDP headers of a frame of
 * @p len bytes (at least PEER_UDP_PL_OFF) at @p buf; the payload is the
 * caller's.
 */
void peer_udp_fill(uint8_t *buf, uint32_t len, const struct peer_udp *h);

/**
 * A frame as a chain of mbufs from @p mp holding at most @p seg_max bytes
 * each (UINT32_MAX: as much as fits). NULL when the pool runs dry.
 */
struct rte_mbuf *peer_mbuf_copy(struct rte_mempool *mp, const uint8_t *buf, uint32_t len,
				uint32_t seg_max);

/**
 * A frame as a chain of @p nsegs mbufs of (nearly) equal length; with
 * @p no_headroom the first segment's data starts at the buffer (no room for
 * a driver to prepend a header). NULL when the pool runs dry.
 */
struct rte_mbuf *peer_mbuf_segs(struct rte_mempool *mp, const uint8_t *buf, uint32_t len,
				uint32_t nsegs, bool no_headroom);

/** The first offset where @p a and @p b differ, or @p len when they do not. */
uint32_t peer_first_diff(const uint8_t *a, const uint8_t *b, uint32_t len);

#endif /* _PEER_FRAME_H_ */
