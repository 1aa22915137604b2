/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Unit tests of the virtio-net header's offload fields
 * (drivers/net/vnapi/vnapi_net_hdr.c), TAP output, no EAL: mbufs are built
 * on the stack over static buffers. Feature masks; tx prepare (the
 * pseudo-header checksum the device completes, checked by completing it as
 * a device does and verifying the result with DPDK's software checksum) and
 * every rejection; header encode; rx decode of every valid form and of
 * every hostile field value, which must leave the mbuf untouched.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "ref_cksum.h"
#include "unit_check.h"
#include "unit_tap.h"
#include "vnapi_net_hdr.h"

#define HEADROOM     128
#define SMALL_BUF    2048
#define BIG_BUF      65535
#define ETH_LEN      14
#define IP4_LEN      20
#define IP6_LEN      40
#define TCP_LEN      20
#define OL_ALL       (VNAPI_OL_CSUM | VNAPI_OL_TSO4 | VNAPI_OL_TSO6 | VNAPI_OL_ECN)
#define F(bit)       (1ULL << (bit))

static uint8_t small_buf[SMALL_BUF];
static uint8_t small_buf2[SMALL_BUF];
static uint8_t big_buf[BIG_BUF];

static void
mbuf_init(struct rte_mbuf *m, uint8_t *buf, uint16_t buf_len)
{
	memset(m, 0, sizeof(*m));
	memset(buf, 0, buf_len);
	m->buf_addr = buf;
	m->buf_len = buf_len;
	m->data_off = HEADROOM;
	m->nb_segs = 1;
	m->next = NULL;
	rte_mbuf_refcnt_set(m, 1);
}

/*
 * Ethernet + IPv4/IPv6 + TCP/UDP + @p payload pattern bytes into @p m;
 * sets data_len, pkt_len, l2/l3/l4_len and the IP version flag.
 */
static void
build(struct rte_mbuf *m, bool v6, uint8_t proto, uint32_t payload)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t l4_len = proto == IPPROTO_TCP ? TCP_LEN : sizeof(struct rte_udp_hdr);
	uint32_t l3_len = v6 ? IP6_LEN : IP4_LEN;
	uint32_t total = ETH_LEN + l3_len + l4_len + payload;
	uint8_t *l3 = p + ETH_LEN, *l4 = l3 + l3_len;
	uint32_t i;

	memset(p, 0, ETH_LEN);
	p[0] = 0x02;
	p[6] = 0x02;
	p[11] = 1;
	p[12] = v6 ? 0x86 : 0x08;
	p[13] = v6 ? 0xdd : 0x00;
	memset(l3, 0, l3_len);
	if (v6) {
		l3[0] = 0x60;
		l3[4] = (uint8_t)((l4_len + payload) >> 8);
		l3[5] = (uint8_t)(l4_len + payload);
		l3[6] = proto;
		l3[7] = 64;
		for (i = 0; i < 32; i++)
			l3[8 + i] = (uint8_t)(0x20 + i * 7);
	} else {
		l3[0] = 0x45;
		l3[2] = (uint8_t)((l3_len + l4_len + payload) >> 8);
		l3[3] = (uint8_t)(l3_len + l4_len + payload);
		l3[8] = 64;
		l3[9] = proto;
		l3[12] = 10;
		l3[15] = 1;
		l3[16] = 10;
		l3[19] = 2;
	}
	memset(l4, 0, l4_len);
	l4[0] = 0x30;
	l4[1] = 0x39;
	l4[3] = 80;
	if (proto == IPPROTO_TCP) {
		l4[12] = (TCP_LEN / 4) << 4;
		l4[13] = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
		l4[4] = 0x12;
		l4[7] = 0x34;
	} else {
		l4[4] = (uint8_t)((l4_len + payload) >> 8);
		l4[5] = (uint8_t)(l4_len + payload);
	}
	for (i = 0; i < payload; i++)
		l4[l4_len + i] = (uint8_t)(i * 31 + 7);
	m->data_len = (uint16_t)total;
	m->pkt_len = total;
	m->l2_len = ETH_LEN;
	m->l3_len = l3_len;
	m->l4_len = l4_len;
	m->ol_flags = v6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4;
}

/*
 * A two-segment packet: build()'s packet (ol_flags cleared) in @p m over
 * small_buf, then @p len2 more bytes in @p m2 over small_buf2.
 */
static void
build_chain(struct rte_mbuf *m, struct rte_mbuf *m2, bool v6, uint8_t proto, uint32_t payload,
	    uint16_t len2)
{
	mbuf_init(m, small_buf, SMALL_BUF);
	mbuf_init(m2, small_buf2, SMALL_BUF);
	build(m, v6, proto, payload);
	m->ol_flags = 0;
	m2->data_len = len2;
	m->next = m2;
	m->nb_segs = 2;
	m->pkt_len += len2;
}

static uint8_t *
l3_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, uint8_t *, ETH_LEN);
}

/* The correct L4 checksum of @p m, by DPDK's software implementation. */
static uint16_t
ref_l4_cksum(struct rte_mbuf *m, bool v6, uint32_t csum_off)
{
	uint8_t *l3 = l3_of(m);
	uint8_t *l4 = l3 + (v6 ? IP6_LEN : IP4_LEN);

	return ref_udptcp_cksum(l3, l4, v6, l4 + csum_off);
}

/* Complete the checksum as the device does for NEEDS_CSUM. */
static void
device_complete(struct rte_mbuf *m, const struct vnapi_net_hdr *h)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t sum = rte_raw_cksum(p + h->csum_start, m->pkt_len - h->csum_start);

	sum = (uint16_t)~sum;
	memcpy(p + h->csum_start + h->csum_offset, &sum, 2);
}

static int
t_features(const void *arg __rte_unused)
{
	uint64_t all = F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_HOST_TSO4) |
		       F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_HOST_ECN) |
		       F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4) |
		       F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN);

	EXPECT_EQ(vnapi_net_offload_want(true, true, true, true), all);
	EXPECT_EQ(vnapi_net_offload_want(false, true, false, true), 0);
	EXPECT_EQ(vnapi_net_offload_want(true, false, true, false),
		 F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM));
	EXPECT_EQ(vnapi_net_offload_want(false, false, true, true),
		 F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4) |
		 F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN));

	EXPECT_EQ(vnapi_net_offload_valid(all), all);
	/* TSO without CSUM, ECN without TSO: dropped. */
	EXPECT_EQ(vnapi_net_offload_valid(F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_HOST_ECN)), 0);
	EXPECT_EQ(vnapi_net_offload_valid(F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_HOST_ECN)),
		 F(VIRTIO_NET_F_CSUM));
	EXPECT_EQ(vnapi_net_offload_valid(F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN) |
					 F(VIRTIO_NET_F_CSUM)), F(VIRTIO_NET_F_CSUM));
	EXPECT_EQ(vnapi_net_offload_valid(F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO6)),
		 F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO6));

	EXPECT_EQ(vnapi_net_ol_tx(all), OL_ALL);
	EXPECT_EQ(vnapi_net_ol_rx(all), OL_ALL);
	EXPECT_EQ(vnapi_net_ol_tx(F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4)), 0);
	EXPECT_EQ(vnapi_net_ol_tx(F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_HOST_TSO6)),
		 VNAPI_OL_CSUM | VNAPI_OL_TSO6);
	EXPECT_EQ(vnapi_net_ol_rx(F(VIRTIO_NET_F_GUEST_CSUM)), VNAPI_OL_CSUM);
	EXPECT_EQ(vnapi_net_ol_rx(F(VIRTIO_NET_F_GUEST_TSO4)), 0);

	EXPECT_EQ(vnapi_net_tx_capa(0), 0);
	EXPECT_EQ(vnapi_net_tx_capa(VNAPI_OL_CSUM),
		 RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
	EXPECT_EQ(vnapi_net_tx_capa(VNAPI_OL_CSUM | VNAPI_OL_TSO4),
		 RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
		 RTE_ETH_TX_OFFLOAD_TCP_TSO);
	EXPECT_EQ(vnapi_net_rx_capa(VNAPI_OL_CSUM),
		 RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	EXPECT_EQ(vnapi_net_rx_capa(OL_ALL),
		 RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
		 RTE_ETH_RX_OFFLOAD_TCP_LRO);
	return 0;
}

/* Checksum offload, IPv4/IPv6 x TCP/UDP: prepare, encode, device, verify. */
static int
t_tx_csum(const void *arg __rte_unused)
{
	static const struct { bool v6; uint8_t proto; } cases[] = {
		{ false, IPPROTO_TCP }, { false, IPPROTO_UDP },
		{ true, IPPROTO_TCP }, { true, IPPROTO_UDP },
	};
	struct rte_mbuf m;
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		const bool tcp = cases[i].proto == IPPROTO_TCP;
		const uint32_t coff = tcp ? 16 : 6;
		const uint32_t l3 = cases[i].v6 ? IP6_LEN : IP4_LEN;
		struct vnapi_net_hdr h;
		uint16_t ref, got;

		printf("#  %s %s\n", cases[i].v6 ? "IPv6" : "IPv4", tcp ? "TCP" : "UDP");
		mbuf_init(&m, small_buf, SMALL_BUF);
		build(&m, cases[i].v6, cases[i].proto, 333);
		m.ol_flags |= tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM;
		ref = ref_l4_cksum(&m, cases[i].v6, coff);
		EXPECT_EQ(vnapi_net_tx_prepare(&m, VNAPI_OL_CSUM), 0);
		/* The field holds the pseudo-header sum (with the L4 length). */
		memcpy(&got, l3_of(&m) + l3 + coff, 2);
		EXPECT_EQ(got, cases[i].v6 ?
			 rte_ipv6_phdr_cksum((const struct rte_ipv6_hdr *)l3_of(&m), 0) :
			 rte_ipv4_phdr_cksum((const struct rte_ipv4_hdr *)l3_of(&m), 0));
		memset(&h, 0xee, sizeof(h));
		vnapi_net_hdr_encode(&h, sizeof(h), &m, VNAPI_OL_CSUM);
		EXPECT_EQ(h.flags, VNAPI_NET_HDR_F_NEEDS_CSUM);
		EXPECT_EQ(h.gso_type, VNAPI_NET_HDR_GSO_NONE);
		EXPECT_EQ(h.csum_start, ETH_LEN + l3);
		EXPECT_EQ(h.csum_offset, coff);
		EXPECT_EQ(h.gso_size, 0);
		EXPECT_EQ(h.hdr_len, 0);
		EXPECT_EQ(h.num_buffers, 0);
		device_complete(&m, &h);
		memcpy(&got, l3_of(&m) + l3 + coff, 2);
		EXPECT_EQ(got, ref);
	}
	return 0;
}

/* TSO, IPv4 and IPv6, ~60 KB in one segment; ECN only when negotiated. */
static int
t_tx_tso(const void *arg __rte_unused)
{
	struct rte_mbuf m;
	struct vnapi_net_hdr h;
	uint16_t got, want;
	int v6;

	for (v6 = 0; v6 <= 1; v6++) {
		const uint32_t l3 = v6 ? IP6_LEN : IP4_LEN;
		const uint32_t payload = 60000;
		uint8_t *tcp;

		printf("#  TSO %s\n", v6 ? "IPv6" : "IPv4");
		mbuf_init(&m, big_buf, BIG_BUF);
		build(&m, v6, IPPROTO_TCP, payload);
		m.ol_flags |= RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM |
			      (v6 ? 0 : RTE_MBUF_F_TX_IP_CKSUM);
		m.tso_segsz = 1448;
		/* The other IP version's TSO only: refused. */
		EXPECT_EQ(vnapi_net_tx_prepare(&m, VNAPI_OL_CSUM |
					      (v6 ? VNAPI_OL_TSO4 : VNAPI_OL_TSO6)), -ENOTSUP);
		EXPECT_EQ(vnapi_net_tx_prepare(&m, VNAPI_OL_CSUM | VNAPI_OL_TSO4 | VNAPI_OL_TSO6), 0);
		/* Pseudo-header with the whole L4 length, as the IP header says it. */
		want = v6 ? rte_ipv6_phdr_cksum((const struct rte_ipv6_hdr *)l3_of(&m), 0) :
			    rte_ipv4_phdr_cksum((const struct rte_ipv4_hdr *)l3_of(&m), 0);
		tcp = l3_of(&m) + l3;
		memcpy(&got, tcp + 16, 2);
		EXPECT_EQ(got, want);
		if (!v6)
			EXPECT_EQ(rte_raw_cksum(l3_of(&m), IP4_LEN), 0xffff);
		vnapi_net_hdr_encode(&h, sizeof(h), &m, OL_ALL);
		EXPECT_EQ(h.flags, VNAPI_NET_HDR_F_NEEDS_CSUM);
		EXPECT_EQ(h.gso_type, v6 ? VNAPI_NET_HDR_GSO_TCPV6 : VNAPI_NET_HDR_GSO_TCPV4);
		EXPECT_EQ(h.gso_size, 1448);
		EXPECT_EQ(h.hdr_len, ETH_LEN + l3 + TCP_LEN);
		EXPECT_EQ(h.csum_start, ETH_LEN + l3);
		EXPECT_EQ(h.csum_offset, 16);

		/* CWR set: ECN needed. */
		tcp[13] |= RTE_TCP_CWR_FLAG;
		EXPECT_EQ(vnapi_net_tx_prepare(&m, VNAPI_OL_CSUM | VNAPI_OL_TSO4 | VNAPI_OL_TSO6),
			 -ENOTSUP);
		EXPECT_EQ(vnapi_net_tx_prepare(&m, OL_ALL), 0);
		vnapi_net_hdr_encode(&h, sizeof(h), &m, OL_ALL);
		EXPECT_EQ(h.gso_type, (v6 ? VNAPI_NET_HDR_GSO_TCPV6 : VNAPI_NET_HDR_GSO_TCPV4) |
			 VNAPI_NET_HDR_GSO_ECN);
	}
	return 0;
}

/* The IPv4 header checksum is done in software by prepare. */
static int
t_tx_ip_cksum(const void *arg __rte_unused)
{
	struct rte_mbuf m;
	struct rte_ipv4_hdr *ip;
	struct vnapi_net_hdr h;

	mbuf_init(&m, small_buf, SMALL_BUF);
	build(&m, false, IPPROTO_UDP, 100);
	ip = (struct rte_ipv4_hdr *)l3_of(&m);
	ip->hdr_checksum = 0x1234;
	m.ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	EXPECT_EQ(vnapi_net_tx_prepare(&m, 0), 0);
	EXPECT_EQ(rte_raw_cksum(ip, IP4_LEN), 0xffff);
	/* No L4 request: an all-zero header. */
	memset(&h, 0xee, sizeof(h));
	vnapi_net_hdr_encode(&h, sizeof(h), &m, OL_ALL);
	EXPECT_EQ(h.flags | h.gso_type | h.hdr_len | h.gso_size | h.csum_start | h.csum_offset |
		 h.num_buffers, 0);
	return 0;
}

/* Every rejection of prepare, and nothing written for a plain packet. */
static int
t_tx_prepare_rejects(const void *arg __rte_unused)
{
	static uint8_t before[SMALL_BUF];
	struct rte_mbuf m;

#define REJECT(setup, ol, err) do { \
	mbuf_init(&m, small_buf, SMALL_BUF); \
	build(&m, false, IPPROTO_TCP, 1800 - 54); \
	m.ol_flags |= RTE_MBUF_F_TX_TCP_SEG; \
	m.tso_segsz = 1000; \
	setup; \
	printf("#  %s -> %s\n", #setup, #err); \
	memcpy(before, small_buf, SMALL_BUF); \
	EXPECT_EQ(vnapi_net_tx_prepare(&m, ol), err); \
	EXPECT(memcmp(before, small_buf, SMALL_BUF) == 0); \
} while (0)

	REJECT(m.ol_flags &= ~RTE_MBUF_F_TX_IPV4, OL_ALL, -EINVAL);
	REJECT(m.ol_flags |= RTE_MBUF_F_TX_IPV6, OL_ALL, -EINVAL);
	REJECT(m.l3_len = 19, OL_ALL, -EINVAL);
	REJECT(m.tso_segsz = 0, OL_ALL, -EINVAL);
	REJECT(m.l4_len = 0, OL_ALL, -EINVAL);
	REJECT(m.l4_len = 64, OL_ALL, -EINVAL);
	REJECT(m.ol_flags |= RTE_MBUF_F_TX_UDP_CKSUM, OL_ALL, -EINVAL);
	REJECT(m.pkt_len = m.data_len = 54, OL_ALL, -EINVAL);
	REJECT(m.data_len = 50, OL_ALL, -ENOTSUP);
	REJECT((void)0, VNAPI_OL_CSUM, -ENOTSUP);
	REJECT((void)0, VNAPI_OL_TSO4 | VNAPI_OL_TSO6, -ENOTSUP);
	REJECT(m.ol_flags |= RTE_MBUF_F_TX_UDP_SEG, OL_ALL, -ENOTSUP);
	REJECT(m.ol_flags |= RTE_MBUF_F_TX_TUNNEL_VXLAN | RTE_MBUF_F_TX_OUTER_IPV4,
	       OL_ALL, -ENOTSUP);
	REJECT((m.ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_SCTP_CKSUM), OL_ALL, -ENOTSUP);
	REJECT((m.ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM), 0, -ENOTSUP);
	REJECT((m.ol_flags = RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_IP_CKSUM), OL_ALL, -EINVAL);
	REJECT((m.ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM, m.data_len = 14 + 20 + 17),
	       OL_ALL, -ENOTSUP);
	/* IP total length shorter than the headers. */
	REJECT((m.ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM,
		l3_of(&m)[2] = 0, l3_of(&m)[3] = 39), OL_ALL, -EINVAL);
	/* No request: accepted, nothing written, whatever the offloads. */
	REJECT((m.ol_flags = 0), 0, 0);
	REJECT((m.ol_flags = RTE_MBUF_F_TX_IPV4), OL_ALL, 0);
#undef REJECT
	return 0;
}

/* Encode: 10-byte headers stop at 10, requests not negotiated are left out. */
static int
t_tx_encode(const void *arg __rte_unused)
{
	struct rte_mbuf m;
	uint8_t raw[16];
	struct vnapi_net_hdr h;

	mbuf_init(&m, small_buf, SMALL_BUF);
	build(&m, false, IPPROTO_TCP, 1000);
	m.ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
	m.tso_segsz = 500;
	memset(raw, 0xee, sizeof(raw));
	vnapi_net_hdr_encode((struct vnapi_net_hdr *)raw, VNAPI_NET_HDR_LEGACY_SIZE, &m, OL_ALL);
	EXPECT_EQ(raw[0], VNAPI_NET_HDR_F_NEEDS_CSUM);
	EXPECT_EQ(raw[1], VNAPI_NET_HDR_GSO_TCPV4);
	EXPECT_EQ(raw[10], 0xee);
	EXPECT_EQ(raw[11], 0xee);

	/* TSO4 not negotiated: the checksum request only. */
	vnapi_net_hdr_encode(&h, sizeof(h), &m, VNAPI_OL_CSUM | VNAPI_OL_TSO6);
	EXPECT_EQ(h.flags, VNAPI_NET_HDR_F_NEEDS_CSUM);
	EXPECT_EQ(h.gso_type, VNAPI_NET_HDR_GSO_NONE);
	EXPECT_EQ(h.gso_size, 0);
	EXPECT_EQ(h.hdr_len, 0);
	EXPECT_EQ(h.csum_start, 34);
	/* Nothing negotiated: all zero. */
	memset(&h, 0xee, sizeof(h));
	vnapi_net_hdr_encode(&h, sizeof(h), &m, 0);
	EXPECT_EQ(h.flags | h.gso_type | h.hdr_len | h.gso_size | h.csum_start | h.csum_offset |
		 h.num_buffers, 0);
	/* SCTP: not expressible, no flag. */
	m.ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_SCTP_CKSUM;
	vnapi_net_hdr_encode(&h, sizeof(h), &m, OL_ALL);
	EXPECT_EQ(h.flags, 0);
	return 0;
}

static struct vnapi_net_hdr
hdr_of(uint8_t flags, uint8_t gso, uint16_t hdr_len, uint16_t gso_size, uint16_t cstart,
       uint16_t coff)
{
	struct vnapi_net_hdr h = {
		.flags = flags, .gso_type = gso, .hdr_len = hdr_len, .gso_size = gso_size,
		.csum_start = cstart, .csum_offset = coff, .num_buffers = 1,
	};

	return h;
}

/* Received: every valid form. */
static int
t_rx_decode(const void *arg __rte_unused)
{
	const uint32_t ptype4 = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP;
	const uint32_t ptype6 = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_TCP;
	struct rte_mbuf m, m2;
	struct vnapi_net_hdr h;

	/* All zero: nothing, not even a packet type. */
	mbuf_init(&m, small_buf, SMALL_BUF);
	build(&m, false, IPPROTO_TCP, 100);
	m.ol_flags = 0;
	h = hdr_of(0, 0, 0, 0, 0, 0);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, OL_ALL), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, 0);
	EXPECT_EQ(m.packet_type, 0);

	/* NEEDS_CSUM at the packet's TCP checksum: CKSUM_NONE. */
	h = hdr_of(VNAPI_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 34, 16);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, VNAPI_OL_CSUM), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, RTE_MBUF_F_RX_L4_CKSUM_NONE);
	EXPECT_EQ(m.packet_type, ptype4);

	/* DATA_VALID: GOOD. */
	m.ol_flags = 0;
	h = hdr_of(VNAPI_NET_HDR_F_DATA_VALID, 0, 0, 0, 0, 0);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, VNAPI_OL_CSUM), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, RTE_MBUF_F_RX_L4_CKSUM_GOOD);

	/* UDP over IPv6 at its own field. */
	mbuf_init(&m, small_buf, SMALL_BUF);
	build(&m, true, IPPROTO_UDP, 100);
	m.ol_flags = 0;
	h = hdr_of(VNAPI_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 54, 6);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, VNAPI_OL_CSUM), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, RTE_MBUF_F_RX_L4_CKSUM_NONE);
	EXPECT_EQ(m.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_UDP);

	/* GSO TCPV4 with NEEDS_CSUM: LRO + CKSUM_NONE + tso_segsz. */
	mbuf_init(&m, big_buf, BIG_BUF);
	build(&m, false, IPPROTO_TCP, 30000);
	m.ol_flags = 0;
	h = hdr_of(VNAPI_NET_HDR_F_NEEDS_CSUM, VNAPI_NET_HDR_GSO_TCPV4, 54, 1448, 34, 16);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, OL_ALL), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, RTE_MBUF_F_RX_LRO | RTE_MBUF_F_RX_L4_CKSUM_NONE);
	EXPECT_EQ(m.tso_segsz, 1448);
	EXPECT_EQ(m.packet_type, ptype4);

	/* GSO TCPV6 | ECN over a two-segment chain. */
	build_chain(&m, &m2, true, IPPROTO_TCP, 1000, 1500);
	h = hdr_of(VNAPI_NET_HDR_F_NEEDS_CSUM, VNAPI_NET_HDR_GSO_TCPV6 | VNAPI_NET_HDR_GSO_ECN,
		   74, 1220, 54, 16);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, OL_ALL), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, RTE_MBUF_F_RX_LRO | RTE_MBUF_F_RX_L4_CKSUM_NONE);
	EXPECT_EQ(m.tso_segsz, 1220);
	EXPECT_EQ(m.packet_type, ptype6);

	/* Boundary: csum_start + csum_offset + 2 == pkt_len is valid. */
	mbuf_init(&m, small_buf, SMALL_BUF);
	build(&m, false, IPPROTO_UDP, 0);
	m.ol_flags = 0;
	h = hdr_of(VNAPI_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 34, 6);
	EXPECT_EQ(m.pkt_len, 34 + 8);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, VNAPI_OL_CSUM), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, RTE_MBUF_F_RX_L4_CKSUM_NONE);
	return 0;
}

/* The software completion gives the right checksum when the device names
 * the packet's own field through another start (sum from the IP payload). */
static int
t_rx_sw_complete(const void *arg __rte_unused)
{
	struct rte_mbuf m;
	struct vnapi_net_hdr h;
	uint16_t ref, psum, got;
	uint8_t *l4;

	mbuf_init(&m, small_buf, SMALL_BUF);
	build(&m, false, IPPROTO_TCP, 777);
	m.ol_flags = 0;
	/* csum_start 32, csum_offset 18: the TCP checksum field, from a
	 * start that is not the L4 header's (two bytes earlier: the low half
	 * of the IP destination, zeroed so that the sum is the TCP one). */
	l3_of(&m)[18] = 0;
	l3_of(&m)[19] = 0;
	l4 = l3_of(&m) + IP4_LEN;
	psum = rte_ipv4_phdr_cksum((const struct rte_ipv4_hdr *)l3_of(&m), 0);
	memcpy(l4 + 16, &psum, 2);
	ref = ref_l4_cksum(&m, false, 16);
	h = hdr_of(VNAPI_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 32, 18);
	EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, VNAPI_OL_CSUM), VNAPI_NET_RX_OK);
	EXPECT_EQ(m.ol_flags, 0);
	memcpy(&got, l4 + 16, 2);
	EXPECT_EQ(got, ref);
	return 0;
}

/* Received: every hostile field value; the mbuf must stay untouched. */
static int
t_rx_hostile(const void *arg __rte_unused)
{
	static uint8_t before[BIG_BUF];
	static const struct {
		const char *what;
		bool v6;
		uint8_t proto;
		uint32_t ol;
		struct vnapi_net_hdr h;
		enum vnapi_net_rx_verdict v;
	} cases[] = {
		{ "unknown flag bit 0x04", false, IPPROTO_TCP, OL_ALL,
		  { 0x04, 0, 0, 0, 0, 0, 1 }, VNAPI_NET_RX_BAD_FLAGS },
		{ "flag bit 0x80", false, IPPROTO_TCP, OL_ALL,
		  { 0x81, 0, 0, 0, 34, 16, 1 }, VNAPI_NET_RX_BAD_FLAGS },
		{ "NEEDS_CSUM without GUEST_CSUM", false, IPPROTO_TCP, 0,
		  { 1, 0, 0, 0, 34, 16, 1 }, VNAPI_NET_RX_BAD_FLAGS },
		{ "DATA_VALID without GUEST_CSUM", false, IPPROTO_TCP, 0,
		  { 2, 0, 0, 0, 0, 0, 1 }, VNAPI_NET_RX_BAD_FLAGS },
		{ "csum_start at the end", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0, 0, 0, 174, 0, 1 }, VNAPI_NET_RX_BAD_CSUM },
		{ "csum field one byte past the end", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0, 0, 0, 34, 139, 1 }, VNAPI_NET_RX_BAD_CSUM },
		{ "csum_start 0xffff", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0, 0, 0, 0xffff, 16, 1 }, VNAPI_NET_RX_BAD_CSUM },
		{ "csum_offset 0xffff", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0, 0, 0, 34, 0xffff, 1 }, VNAPI_NET_RX_BAD_CSUM },
		{ "both 0xffff", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0, 0, 0, 0xffff, 0xffff, 1 }, VNAPI_NET_RX_BAD_CSUM },
		{ "gso_type 2", false, IPPROTO_TCP, OL_ALL,
		  { 1, 2, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "gso_type UDP (not negotiated)", false, IPPROTO_UDP, OL_ALL,
		  { 1, 3, 42, 100, 34, 6, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "gso_type 5", false, IPPROTO_TCP, OL_ALL,
		  { 1, 5, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "gso_type 0x7f", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0x7f, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "gso_type ECN alone", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0x80, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "gso_type 0xff", false, IPPROTO_TCP, OL_ALL,
		  { 1, 0xff, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "TCPV4 without GUEST_TSO4", false, IPPROTO_TCP,
		  VNAPI_OL_CSUM | VNAPI_OL_TSO6 | VNAPI_OL_ECN,
		  { 1, 1, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "TCPV6 without GUEST_TSO6", true, IPPROTO_TCP, VNAPI_OL_CSUM | VNAPI_OL_TSO4,
		  { 1, 4, 74, 100, 54, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "TCPV4 | ECN without GUEST_ECN", false, IPPROTO_TCP,
		  VNAPI_OL_CSUM | VNAPI_OL_TSO4,
		  { 1, 0x81, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "gso_type with no offload at all", false, IPPROTO_TCP, 0,
		  { 0, 1, 54, 100, 0, 0, 1 }, VNAPI_NET_RX_BAD_GSO_TYPE },
		{ "gso_size 0", false, IPPROTO_TCP, OL_ALL,
		  { 1, 1, 54, 0, 34, 16, 1 }, VNAPI_NET_RX_BAD_GSO_SIZE },
		{ "hdr_len one past the packet", false, IPPROTO_TCP, OL_ALL,
		  { 1, 1, 175, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_HDR_LEN },
		{ "hdr_len 0xffff", false, IPPROTO_TCP, OL_ALL,
		  { 1, 1, 0xffff, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_HDR_LEN },
		{ "TCPV4 on an IPv6 packet", true, IPPROTO_TCP, OL_ALL,
		  { 1, 1, 74, 100, 54, 16, 1 }, VNAPI_NET_RX_BAD_PACKET },
		{ "TCPV6 on an IPv4 packet", false, IPPROTO_TCP, OL_ALL,
		  { 1, 4, 54, 100, 34, 16, 1 }, VNAPI_NET_RX_BAD_PACKET },
		{ "TCPV4 on a UDP packet", false, IPPROTO_UDP, OL_ALL,
		  { 1, 1, 42, 100, 34, 6, 1 }, VNAPI_NET_RX_BAD_PACKET },
	};
	struct rte_mbuf m, saved;
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		printf("#  %s\n", cases[i].what);
		mbuf_init(&m, small_buf, SMALL_BUF);
		build(&m, cases[i].v6, cases[i].proto,
		      174 - ETH_LEN - (cases[i].v6 ? IP6_LEN : IP4_LEN) -
		      (cases[i].proto == IPPROTO_TCP ? TCP_LEN : 8));
		EXPECT_EQ(m.pkt_len, 174);
		m.ol_flags = 0;
		saved = m;
		memcpy(before, small_buf, SMALL_BUF);
		EXPECT_EQ(vnapi_net_hdr_decode(&cases[i].h, &m, cases[i].ol), cases[i].v);
		EXPECT(memcmp(&saved, &m, sizeof(m)) == 0);
		EXPECT(memcmp(before, small_buf, SMALL_BUF) == 0);
	}

	/* A checksum to complete in software whose field is in the second
	 * segment: refused (we write only into the first). */
	{
		struct rte_mbuf m2;
		struct vnapi_net_hdr h = hdr_of(VNAPI_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 14, 100);

		build_chain(&m, &m2, false, IPPROTO_UDP, 50, 500);
		saved = m;
		EXPECT_EQ(vnapi_net_hdr_decode(&h, &m, VNAPI_OL_CSUM), VNAPI_NET_RX_BAD_CSUM);
		EXPECT(memcmp(&saved, &m, sizeof(m)) == 0);
	}
	return 0;
}

static const struct unit_case cases[] = {
	{ "feature masks and capabilities", t_features, NULL },
	{ "tx checksum: prepare, encode, device completes, verified", t_tx_csum, NULL },
	{ "tx TSO IPv4/IPv6, ECN", t_tx_tso, NULL },
	{ "tx IPv4 header checksum in software", t_tx_ip_cksum, NULL },
	{ "tx prepare rejections write nothing", t_tx_prepare_rejects, NULL },
	{ "tx encode: legacy size, masking by negotiated offloads", t_tx_encode, NULL },
	{ "rx decode: valid headers", t_rx_decode, NULL },
	{ "rx decode: software completion", t_rx_sw_complete, NULL },
	{ "rx decode: hostile values leave the mbuf untouched", t_rx_hostile, NULL },
};

int
main(int argc, char **argv)
{
	return unit_tap_main(argc, argv, cases, RTE_DIM(cases), NULL);
}
