/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_NET_HDR_H_
#define _VNAPI_NET_HDR_H_

/**
 * @file
 * @internal
 * The virtio-net header and its offload fields (virtio 1.2 section 5.1.6):
 * which offloads a feature set allows, what the driver writes for an mbuf
 * it transmits, and what a header the device wrote means for a received
 * mbuf once it is validated. Pure: mbuf fields and packet bytes in, a
 * header or mbuf flags out; no EAL, no ring, no ethdev (tests/unit/net_hdr
 * runs it on mbufs built on the stack).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "vnapi_compat.h"
#include "vnapi_features.h"

/* Header flags and gso types. */
#define VNAPI_NET_HDR_F_NEEDS_CSUM 1
#define VNAPI_NET_HDR_F_DATA_VALID 2
#define VNAPI_NET_HDR_GSO_NONE     0
#define VNAPI_NET_HDR_GSO_TCPV4    1
#define VNAPI_NET_HDR_GSO_UDP      3
#define VNAPI_NET_HDR_GSO_TCPV6    4
#define VNAPI_NET_HDR_GSO_ECN      0x80

/** The virtio-net header (VERSION_1 / MRG_RXBUF layout: 12 bytes; 10 without). */
struct __rte_packed_begin vnapi_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
} __rte_packed_end;

/** The header without num_buffers (no VERSION_1, no MRG_RXBUF). */
#define VNAPI_NET_HDR_LEGACY_SIZE 10

/*
 * The offloads of one direction, as negotiated: VNAPI_OL_* bits.
 * tx: CSUM, HOST_TSO4/6, HOST_ECN; rx: GUEST_CSUM, GUEST_TSO4/6, GUEST_ECN.
 */
#define VNAPI_OL_CSUM 1u
#define VNAPI_OL_TSO4 2u
#define VNAPI_OL_TSO6 4u
#define VNAPI_OL_ECN  8u

/** The mbuf tx flags that make a header other than all zero. */
#define VNAPI_TX_OL_MASK (RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG)

/** Largest packet a TSO request or an LRO delivery carries (IP's limit plus L2). */
#define VNAPI_MAX_LRO_PKTLEN (UINT16_MAX + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)

/**
 * The offload feature bits to ask for: @p tx_csum CSUM; @p tso (with
 * tx_csum) HOST_TSO4/6 and HOST_ECN; @p rx_csum GUEST_CSUM; @p lro (with
 * rx_csum) GUEST_TSO4/6 and GUEST_ECN. The caller clears @p lro without
 * mergeable rx buffers (a 64 KB packet would need 64 KB buffers).
 */
uint64_t vnapi_net_offload_want(bool tx_csum, bool tso, bool rx_csum, bool lro);
/**
 * @p features less what the spec forbids without its dependency (5.1.3.1):
 * HOST_TSO4/6 without CSUM, HOST_ECN without HOST_TSO4/6, and the same for
 * the GUEST_ bits.
 */
uint64_t vnapi_net_offload_valid(uint64_t features);
/** Transmit offloads of the feature set @p features. */
uint32_t vnapi_net_ol_tx(uint64_t features);
/** Receive offloads of the feature set @p features. */
uint32_t vnapi_net_ol_rx(uint64_t features);
/** RTE_ETH_TX_OFFLOAD_* of the tx offloads @p ol (MULTI_SEGS not included). */
uint64_t vnapi_net_tx_capa(uint32_t ol);
/** RTE_ETH_RX_OFFLOAD_* of the rx offloads @p ol. */
uint64_t vnapi_net_rx_capa(uint32_t ol);

/**
 * rte_eth_tx_prepare() for one packet: check what the offload request of
 * @p m needs and write the pseudo-header checksum the device completes
 * (virtio: the L4 checksum field holds the pseudo-header sum, with the L4
 * length; for TSO the length of the whole L4 payload, as Linux sends it);
 * an IPv4 header checksum request is done here in software.
 * @param ol the negotiated tx offloads.
 * @return 0; -EINVAL: inconsistent fields (no IPV4/IPV6 flag, both, IP
 *   checksum on IPv6, TSO without tso_segsz or l4_len, l3_len too short,
 *   TSO with another L4 checksum, TSO with no payload); -ENOTSUP: an offload
 *   not negotiated (checksum, TSO of this IP version, TSO of a TCP segment
 *   with CWR without HOST_ECN), SCTP checksum, tunnel or UDP segmentation
 *   flags, or headers not all in the first segment.
 */
int vnapi_net_tx_prepare(struct rte_mbuf *m, uint32_t ol);

/**
 * Fill the header for @p m from its ol_flags, l2_len, l3_len, l4_len and
 * tso_segsz; requests not in @p ol are left out (a packet that skipped
 * rte_eth_tx_prepare() never makes the device see an offload it did not
 * negotiate). The TCP header's CWR bit (TSO) is read from the packet.
 * Writes @p hdr_size bytes: num_buffers (0) only when it is 12.
 */
void vnapi_net_hdr_encode(struct vnapi_net_hdr *hdr, uint16_t hdr_size,
			  const struct rte_mbuf *m, uint32_t ol);

/** What vnapi_net_hdr_decode() made of a received header. */
enum vnapi_net_rx_verdict {
	VNAPI_NET_RX_OK = 0,       /**< Flags set (or none asked for). */
	VNAPI_NET_RX_BAD_FLAGS,    /**< Unknown flag bit, or checksum flags without GUEST_CSUM. */
	VNAPI_NET_RX_BAD_CSUM,     /**< csum_start + csum_offset + 2 beyond the packet
				    *   (or, for a checksum we complete in software,
				    *   beyond the first segment). */
	VNAPI_NET_RX_BAD_GSO_TYPE, /**< Unknown gso_type, or one not negotiated (UDP, ECN). */
	VNAPI_NET_RX_BAD_GSO_SIZE, /**< gso_type set, gso_size 0. */
	VNAPI_NET_RX_BAD_HDR_LEN,  /**< hdr_len beyond the packet. */
	VNAPI_NET_RX_BAD_PACKET,   /**< gso_type disagrees with the packet's headers. */
};

/**
 * Apply a received header to @p m (data and pkt_len set, the whole chain
 * received): NEEDS_CSUM at the packet's own TCP/UDP checksum ->
 * RTE_MBUF_F_RX_L4_CKSUM_NONE (data verified, field partial); NEEDS_CSUM
 * elsewhere -> the checksum is completed in software, no flag; DATA_VALID
 * -> RTE_MBUF_F_RX_L4_CKSUM_GOOD; gso_type TCPV4/TCPV6 -> RTE_MBUF_F_RX_LRO
 * with tso_segsz = gso_size. packet_type is set from the packet whenever a
 * flag or gso_type is there. Every field is checked before any is used:
 * on a verdict other than OK, @p m is left untouched.
 * @param ol the negotiated rx offloads.
 */
enum vnapi_net_rx_verdict vnapi_net_hdr_decode(const struct vnapi_net_hdr *hdr,
					       struct rte_mbuf *m, uint32_t ol);

#endif /* _VNAPI_NET_HDR_H_ */
