/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The virtio-net header's offload fields: negotiation masks, tx encode and
 * prepare, rx decode and validation. No EAL, no ring (vnapi_net_hdr.h).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_net.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "vnapi_net_hdr.h"

/* Byte offsets in the IP headers (struct field names differ across DPDK versions). */
#define VNAPI_IPV4_SRC_OFF   12
#define VNAPI_IPV6_SRC_OFF    8
#define VNAPI_IPV6_PLEN_OFF   4
#define VNAPI_TCP_FLAGS_OFF  13
#define VNAPI_TCP_CSUM_OFF   offsetof(struct rte_tcp_hdr, cksum)
#define VNAPI_UDP_CSUM_OFF   offsetof(struct rte_udp_hdr, dgram_cksum)
#define VNAPI_TCP_MIN_LEN    20
#define VNAPI_TCP_MAX_LEN    60
#define VNAPI_IPV4_MIN_LEN   20
#define VNAPI_IPV6_LEN       40

/* tx flags we cannot express in a virtio-net header. */
#define VNAPI_TX_OL_UNSUPPORTED (RTE_MBUF_F_TX_TUNNEL_MASK | RTE_MBUF_F_TX_OUTER_IPV4 | \
				 RTE_MBUF_F_TX_OUTER_IPV6 | RTE_MBUF_F_TX_OUTER_IP_CKSUM | \
				 RTE_MBUF_F_TX_OUTER_UDP_CKSUM | RTE_MBUF_F_TX_UDP_SEG)

#define VNAPI_F(bit) (1ULL << (bit))
#define VNAPI_F_HOST_TSO  (VNAPI_F(VIRTIO_NET_F_HOST_TSO4) | VNAPI_F(VIRTIO_NET_F_HOST_TSO6))
#define VNAPI_F_GUEST_TSO (VNAPI_F(VIRTIO_NET_F_GUEST_TSO4) | VNAPI_F(VIRTIO_NET_F_GUEST_TSO6))

uint64_t
vnapi_net_offload_want(bool tx_csum, bool tso, bool rx_csum, bool lro)
{
	uint64_t want = 0;

	if (tx_csum)
		want |= VNAPI_F(VIRTIO_NET_F_CSUM);
	if (tx_csum && tso)
		want |= VNAPI_F_HOST_TSO | VNAPI_F(VIRTIO_NET_F_HOST_ECN);
	if (rx_csum)
		want |= VNAPI_F(VIRTIO_NET_F_GUEST_CSUM);
	if (rx_csum && lro)
		want |= VNAPI_F_GUEST_TSO | VNAPI_F(VIRTIO_NET_F_GUEST_ECN);
	return want;
}

uint64_t
vnapi_net_offload_valid(uint64_t f)
{
	if (!(f & VNAPI_F(VIRTIO_NET_F_CSUM)))
		f &= ~VNAPI_F_HOST_TSO;
	if (!(f & VNAPI_F_HOST_TSO))
		f &= ~VNAPI_F(VIRTIO_NET_F_HOST_ECN);
	if (!(f & VNAPI_F(VIRTIO_NET_F_GUEST_CSUM)))
		f &= ~VNAPI_F_GUEST_TSO;
	if (!(f & VNAPI_F_GUEST_TSO))
		f &= ~VNAPI_F(VIRTIO_NET_F_GUEST_ECN);
	return f;
}

static inline uint32_t
vnapi_net_ol(uint64_t features, unsigned int csum, unsigned int tso4, unsigned int tso6,
	     unsigned int ecn)
{
	uint32_t ol = 0;

	/* The spec makes TSO depend on CSUM and ECN on TSO (5.1.3.1). */
	if (!((features >> csum) & 1))
		return 0;
	ol |= VNAPI_OL_CSUM;
	if ((features >> tso4) & 1)
		ol |= VNAPI_OL_TSO4;
	if ((features >> tso6) & 1)
		ol |= VNAPI_OL_TSO6;
	if ((ol & (VNAPI_OL_TSO4 | VNAPI_OL_TSO6)) && ((features >> ecn) & 1))
		ol |= VNAPI_OL_ECN;
	return ol;
}

uint32_t
vnapi_net_ol_tx(uint64_t features)
{
	return vnapi_net_ol(features, VIRTIO_NET_F_CSUM, VIRTIO_NET_F_HOST_TSO4,
			    VIRTIO_NET_F_HOST_TSO6, VIRTIO_NET_F_HOST_ECN);
}

uint32_t
vnapi_net_ol_rx(uint64_t features)
{
	return vnapi_net_ol(features, VIRTIO_NET_F_GUEST_CSUM, VIRTIO_NET_F_GUEST_TSO4,
			    VIRTIO_NET_F_GUEST_TSO6, VIRTIO_NET_F_GUEST_ECN);
}

uint64_t
vnapi_net_tx_capa(uint32_t ol)
{
	uint64_t capa = 0;

	if (ol & VNAPI_OL_CSUM)
		capa |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	if (ol & (VNAPI_OL_TSO4 | VNAPI_OL_TSO6))
		capa |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
	return capa;
}

uint64_t
vnapi_net_rx_capa(uint32_t ol)
{
	uint64_t capa = 0;

	if (ol & VNAPI_OL_CSUM)
		capa |= RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	if (ol & (VNAPI_OL_TSO4 | VNAPI_OL_TSO6))
		capa |= RTE_ETH_RX_OFFLOAD_TCP_LRO;
	return capa;
}

/*
 * The pseudo-header sum (not complemented) for an L4 of @p l4_len bytes,
 * the value the device expects in the checksum field: it sums from
 * csum_start to the end, field included, and stores the complement.
 */
static uint16_t
vnapi_net_phdr_sum(const uint8_t *l3, bool ipv4, uint8_t proto, uint32_t l4_len)
{
	if (ipv4) {
		struct {
			uint8_t addrs[8];
			uint8_t zero;
			uint8_t proto;
			rte_be16_t len;
		} __rte_packed v4;

		memcpy(v4.addrs, l3 + VNAPI_IPV4_SRC_OFF, sizeof(v4.addrs));
		v4.zero = 0;
		v4.proto = proto;
		v4.len = rte_cpu_to_be_16((uint16_t)l4_len);
		return rte_raw_cksum(&v4, sizeof(v4));
	} else {
		struct {
			uint8_t addrs[32];
			rte_be32_t len;
			uint8_t zero[3];
			uint8_t proto;
		} __rte_packed v6;

		memcpy(v6.addrs, l3 + VNAPI_IPV6_SRC_OFF, sizeof(v6.addrs));
		v6.len = rte_cpu_to_be_32(l4_len);
		memset(v6.zero, 0, sizeof(v6.zero));
		v6.proto = proto;
		return rte_raw_cksum(&v6, sizeof(v6));
	}
}

int
vnapi_net_tx_prepare(struct rte_mbuf *m, uint32_t ol)
{
	const uint64_t f = m->ol_flags;
	const uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
	const bool tso = (f & RTE_MBUF_F_TX_TCP_SEG) != 0;
	const bool ipv4 = (f & RTE_MBUF_F_TX_IPV4) != 0;
	const uint32_t l3_off = m->l2_len;
	const uint32_t l4_off = l3_off + m->l3_len;
	uint32_t hdrs, l4_len, csum_off;
	uint8_t *l3, *l4h, proto;
	uint16_t sum;

	if (!(f & (VNAPI_TX_OL_MASK | RTE_MBUF_F_TX_IP_CKSUM | VNAPI_TX_OL_UNSUPPORTED)))
		return 0;
	if (f & VNAPI_TX_OL_UNSUPPORTED)
		return -ENOTSUP;
	if (ipv4 == ((f & RTE_MBUF_F_TX_IPV6) != 0))
		return -EINVAL;          /* neither or both */
	if (ipv4 ? m->l3_len < VNAPI_IPV4_MIN_LEN : m->l3_len < VNAPI_IPV6_LEN)
		return -EINVAL;
	if ((f & RTE_MBUF_F_TX_IP_CKSUM) && !ipv4)
		return -EINVAL;
	if (l4 == RTE_MBUF_F_TX_SCTP_CKSUM)
		return -ENOTSUP;         /* a CRC, not the internet checksum */
	if ((l4 != 0 || tso) && !(ol & VNAPI_OL_CSUM))
		return -ENOTSUP;
	if (tso) {
		if (!(ol & (ipv4 ? VNAPI_OL_TSO4 : VNAPI_OL_TSO6)))
			return -ENOTSUP;
		if (m->tso_segsz == 0 || m->l4_len < VNAPI_TCP_MIN_LEN ||
		    m->l4_len > VNAPI_TCP_MAX_LEN ||
		    (l4 != 0 && l4 != RTE_MBUF_F_TX_TCP_CKSUM))
			return -EINVAL;
		hdrs = l4_off + m->l4_len;
		if (m->pkt_len <= hdrs || m->pkt_len - l3_off > VNAPI_MAX_LRO_PKTLEN -
		    RTE_ETHER_HDR_LEN - RTE_VLAN_HLEN)
			return -EINVAL;
	} else {
		hdrs = l4_off + (l4 == RTE_MBUF_F_TX_TCP_CKSUM ? VNAPI_TCP_MIN_LEN :
				 l4 == RTE_MBUF_F_TX_UDP_CKSUM ? sizeof(struct rte_udp_hdr) : 0);
	}
	if (m->data_len < hdrs)
		return -ENOTSUP;         /* headers not all in the first segment */

	l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, l3_off);
	if (f & RTE_MBUF_F_TX_IP_CKSUM) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		if (rte_ipv4_hdr_len(ip) > m->l3_len)
			return -EINVAL;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if (l4 == 0 && !tso)
		return 0;

	l4h = l3 + m->l3_len;
	if (tso) {
		/* Linux (tcp_gso_segment) takes the length of the whole
		 * payload out of the field and puts each segment's in. */
		if ((l4h[VNAPI_TCP_FLAGS_OFF] & RTE_TCP_CWR_FLAG) && !(ol & VNAPI_OL_ECN))
			return -ENOTSUP;
		l4_len = m->pkt_len - l4_off;
	} else if (ipv4) {
		uint16_t tot = rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)l3)->total_length);

		if ((uint32_t)tot < m->l3_len + hdrs - l4_off)
			return -EINVAL;
		l4_len = tot - m->l3_len;
	} else {
		uint16_t plen;

		memcpy(&plen, l3 + VNAPI_IPV6_PLEN_OFF, sizeof(plen));
		plen = rte_be_to_cpu_16(plen);
		if ((uint32_t)plen + VNAPI_IPV6_LEN < m->l3_len + hdrs - l4_off)
			return -EINVAL;
		l4_len = plen + VNAPI_IPV6_LEN - m->l3_len;
	}
	if (tso || l4 == RTE_MBUF_F_TX_TCP_CKSUM) {
		proto = IPPROTO_TCP;
		csum_off = VNAPI_TCP_CSUM_OFF;
	} else {
		proto = IPPROTO_UDP;
		csum_off = VNAPI_UDP_CSUM_OFF;
	}
	sum = vnapi_net_phdr_sum(l3, ipv4, proto, l4_len);
	memcpy(l4h + csum_off, &sum, sizeof(sum));
	return 0;
}

void
vnapi_net_hdr_encode(struct vnapi_net_hdr *hdr, uint16_t hdr_size, const struct rte_mbuf *m,
		     uint32_t ol)
{
	const uint64_t f = m->ol_flags;
	uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
	const uint16_t start = m->l2_len + m->l3_len;
	struct vnapi_net_hdr h = { .gso_type = VNAPI_NET_HDR_GSO_NONE };
	const bool ipv4 = (f & RTE_MBUF_F_TX_IPV4) != 0;

	/* TSO implies the TCP checksum (also when TSO itself is left out). */
	if (f & RTE_MBUF_F_TX_TCP_SEG)
		l4 = RTE_MBUF_F_TX_TCP_CKSUM;
	if ((f & RTE_MBUF_F_TX_TCP_SEG) && (ol & (ipv4 ? VNAPI_OL_TSO4 : VNAPI_OL_TSO6))) {
		h.gso_type = ipv4 ? VNAPI_NET_HDR_GSO_TCPV4 : VNAPI_NET_HDR_GSO_TCPV6;
		if ((ol & VNAPI_OL_ECN) && m->data_len > start + VNAPI_TCP_FLAGS_OFF &&
		    (*rte_pktmbuf_mtod_offset(m, const uint8_t *, start + VNAPI_TCP_FLAGS_OFF) &
		     RTE_TCP_CWR_FLAG))
			h.gso_type |= VNAPI_NET_HDR_GSO_ECN;
		h.gso_size = m->tso_segsz;
		h.hdr_len = start + m->l4_len;
	}
	if ((ol & VNAPI_OL_CSUM) &&
	    (l4 == RTE_MBUF_F_TX_TCP_CKSUM || l4 == RTE_MBUF_F_TX_UDP_CKSUM)) {
		h.flags = VNAPI_NET_HDR_F_NEEDS_CSUM;
		h.csum_start = start;
		h.csum_offset = l4 == RTE_MBUF_F_TX_TCP_CKSUM ? VNAPI_TCP_CSUM_OFF :
								VNAPI_UDP_CSUM_OFF;
	}
	/* hdr_size is 12 (num_buffers 0) or 10: never past the header. */
	memcpy(hdr, &h, hdr_size);
}

enum vnapi_net_rx_verdict
vnapi_net_hdr_decode(const struct vnapi_net_hdr *hdr, struct rte_mbuf *m, uint32_t ol)
{
	const uint8_t flags = hdr->flags;
	const uint8_t gso = hdr->gso_type;
	const uint8_t gso_base = gso & ~VNAPI_NET_HDR_GSO_ECN;
	const uint16_t cstart = hdr->csum_start;
	const uint16_t coff = hdr->csum_offset;
	const uint32_t len = m->pkt_len;
	struct rte_net_hdr_lens lens;
	uint64_t olf = 0;
	uint32_t ptype, l4;
	bool sw_csum = false;

	if (likely(flags == 0 && gso == VNAPI_NET_HDR_GSO_NONE))
		return VNAPI_NET_RX_OK;

	/* The header alone. */
	if (flags & ~(VNAPI_NET_HDR_F_NEEDS_CSUM | VNAPI_NET_HDR_F_DATA_VALID))
		return VNAPI_NET_RX_BAD_FLAGS;
	if (flags != 0 && !(ol & VNAPI_OL_CSUM))
		return VNAPI_NET_RX_BAD_FLAGS;
	if ((flags & VNAPI_NET_HDR_F_NEEDS_CSUM) && (uint32_t)cstart + coff + 2 > len)
		return VNAPI_NET_RX_BAD_CSUM;
	if (gso != VNAPI_NET_HDR_GSO_NONE) {
		if (!((gso_base == VNAPI_NET_HDR_GSO_TCPV4 && (ol & VNAPI_OL_TSO4)) ||
		      (gso_base == VNAPI_NET_HDR_GSO_TCPV6 && (ol & VNAPI_OL_TSO6))))
			return VNAPI_NET_RX_BAD_GSO_TYPE;
		if ((gso & VNAPI_NET_HDR_GSO_ECN) && !(ol & VNAPI_OL_ECN))
			return VNAPI_NET_RX_BAD_GSO_TYPE;
		if (hdr->gso_size == 0)
			return VNAPI_NET_RX_BAD_GSO_SIZE;
		if (hdr->hdr_len > len)
			return VNAPI_NET_RX_BAD_HDR_LEN;
	}

	/* The header against the packet (bounded reads, any chain). */
	memset(&lens, 0, sizeof(lens));
	ptype = rte_net_get_ptype(m, &lens, RTE_PTYPE_L2_MASK | RTE_PTYPE_L3_MASK |
				  RTE_PTYPE_L4_MASK);
	l4 = ptype & RTE_PTYPE_L4_MASK;
	if (gso != VNAPI_NET_HDR_GSO_NONE) {
		if (l4 != RTE_PTYPE_L4_TCP ||
		    (gso_base == VNAPI_NET_HDR_GSO_TCPV4 ? !RTE_ETH_IS_IPV4_HDR(ptype) :
							   !RTE_ETH_IS_IPV6_HDR(ptype)))
			return VNAPI_NET_RX_BAD_PACKET;
		olf |= RTE_MBUF_F_RX_LRO;
	}
	if (flags & VNAPI_NET_HDR_F_NEEDS_CSUM) {
		const uint32_t own = l4 == RTE_PTYPE_L4_TCP ? VNAPI_TCP_CSUM_OFF :
				     l4 == RTE_PTYPE_L4_UDP ? VNAPI_UDP_CSUM_OFF : UINT32_MAX;

		if (cstart == lens.l2_len + lens.l3_len && coff == own) {
			olf |= RTE_MBUF_F_RX_L4_CKSUM_NONE;
		} else {
			/* Not the packet's own L4 checksum (a tunnel, an
			 * unparsed header): completed here, where ethdev has no
			 * flag for it. The field must be in the first segment. */
			if ((uint32_t)cstart + coff + 2 > m->data_len)
				return VNAPI_NET_RX_BAD_CSUM;
			sw_csum = true;
		}
	} else if (flags & VNAPI_NET_HDR_F_DATA_VALID) {
		olf |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	}

	/* Valid: apply. */
	if (sw_csum) {
		uint16_t csum = 0;

		if (rte_raw_cksum_mbuf(m, cstart, len - cstart, &csum) == 0) {
			if (likely(csum != 0xffff))
				csum = ~csum;
			memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, cstart + coff), &csum,
			       sizeof(csum));
		}
	}
	if (olf & RTE_MBUF_F_RX_LRO)
		m->tso_segsz = hdr->gso_size;
	m->ol_flags |= olf;
	m->packet_type = ptype;
	return VNAPI_NET_RX_OK;
}
