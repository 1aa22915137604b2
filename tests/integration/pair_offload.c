/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The offload checks of vhost_pair (pair_offload.h): every packet is
 * Ethernet + IPv4/IPv6 + TCP/UDP + a byte pattern, built flat, kept as the
 * expected bytes, and sent as one mbuf or a chain.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "ref_cksum.h"
#include "pair_offload.h"
#include "peer_frame.h"
#include "peer_util.h"

#define OL_MAX_PKTS   8
#define OL_MAX_LEN    65536
#define OL_TSO_LEN    64014       /* IPv4 total length 64000 */
#define OL_ETH        14
#define OL_TCP        20
#define OL_UDP        8
#define OL_FE_SEGSZ   1448
#define OL_BE_SEGSZ   1000
#define OL_BURST      32

/* One packet of a check: how it was built and what must arrive. */
struct ol_pkt {
	const char *what;
	uint32_t len;
	uint8_t proto;
	bool tso;
	bool csum;           /* a checksum (or TSO) request */
	uint16_t segsz;
	uint8_t exp[OL_MAX_LEN];
};

static struct ol_pkt pkts[OL_MAX_PKTS];
static uint8_t flat[OL_MAX_LEN];

static uint32_t
ol_l3_len(bool ipv6)
{
	return ipv6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
}

static uint32_t
ol_csum_pos(bool ipv6, uint8_t proto)
{
	return OL_ETH + ol_l3_len(ipv6) + (proto == IPPROTO_TCP ?
		offsetof(struct rte_tcp_hdr, cksum) : offsetof(struct rte_udp_hdr, dgram_cksum));
}

/* Flat packet: headers (IPv4 header checksum done, L4 checksum 0) and pattern. */
static void
ol_build(uint8_t *b, uint32_t len, bool ipv6, uint8_t proto, uint32_t seq)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)b;
	uint8_t *l3 = b + OL_ETH;
	uint32_t l3_len = ol_l3_len(ipv6);
	uint8_t *l4 = l3 + l3_len;
	uint32_t l4_len = len - OL_ETH - l3_len, i;

	memset(b, 0, OL_ETH + l3_len + OL_TCP);
	eth->dst_addr.addr_bytes[0] = 0x02;
	eth->dst_addr.addr_bytes[5] = 0x02;
	eth->src_addr.addr_bytes[0] = 0x02;
	eth->src_addr.addr_bytes[5] = 0x01;
	eth->ether_type = rte_cpu_to_be_16(ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (ipv6) {
		l3[0] = 0x60;
		l3[4] = (uint8_t)(l4_len >> 8);
		l3[5] = (uint8_t)l4_len;
		l3[6] = proto;
		l3[7] = 64;
		for (i = 0; i < 32; i++)
			l3[8 + i] = (uint8_t)(0xfd + i * 3 + seq);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(len - OL_ETH));
		ip->packet_id = rte_cpu_to_be_16((uint16_t)seq);
		ip->time_to_live = 64;
		ip->next_proto_id = proto;
		ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 14, seq & 0xff, 1));
		ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 14, seq & 0xff, 2));
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	l4[0] = 0x9c;
	l4[1] = 0x40;
	l4[2] = 0x00;
	l4[3] = 0x50;
	if (proto == IPPROTO_TCP) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)l4;

		th->sent_seq = rte_cpu_to_be_32(seq * 100000u);
		th->recv_ack = rte_cpu_to_be_32(7);
		th->data_off = (OL_TCP / 4) << 4;
		th->tcp_flags = RTE_TCP_ACK_FLAG;
		th->rx_win = rte_cpu_to_be_16(65535);
		i = OL_TCP;
	} else {
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)l4;

		uh->dgram_len = rte_cpu_to_be_16((uint16_t)l4_len);
		i = OL_UDP;
	}
	for (; i < l4_len; i++)
		l4[i] = (uint8_t)(i * 11u + seq * 7u + (i >> 9));
}

/* The correct L4 checksum of flat packet @p b (its field ignored). */
static uint16_t
ol_ref_cksum(uint8_t *b, bool ipv6, uint8_t proto)
{
	uint32_t pos = ol_csum_pos(ipv6, proto);
	uint8_t *l3 = b + OL_ETH, *l4 = l3 + ol_l3_len(ipv6);

	return ref_udptcp_cksum(l3, l4, ipv6, b + pos);
}

static void
ol_set_tx(struct rte_mbuf *m, const struct ol_pkt *p, bool ipv6)
{
	m->l2_len = OL_ETH;
	m->l3_len = ol_l3_len(ipv6);
	m->l4_len = p->proto == IPPROTO_TCP ? OL_TCP : OL_UDP;
	m->ol_flags = 0;
	if (!p->csum)
		return;
	m->ol_flags = ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4;
	m->ol_flags |= p->proto == IPPROTO_TCP ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM;
	if (p->tso) {
		m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG | (ipv6 ? 0 : RTE_MBUF_F_TX_IP_CKSUM);
		m->tso_segsz = p->segsz;
	}
}

/* Send @p n mbufs on @p tx, receive as many on @p rx (in order) into @p got. */
static int
ol_exchange(const struct pair_offload_ctx *ctx, uint16_t tx, uint16_t rx, bool prepare,
	    struct rte_mbuf **m, uint16_t n, struct rte_mbuf **got)
{
	double deadline = peer_now_s() + ctx->timeout;
	uint16_t sent = 0, rcvd = 0, k;

	if (prepare) {
		k = rte_eth_tx_prepare(tx, 0, m, n);
		if (k != n) {
			ctx->tap(false, "tx_prepare stopped at packet %u of %u: %s", k, n,
				 rte_strerror(rte_errno));
			rte_pktmbuf_free_bulk(m, n);
			return -1;
		}
	}
	while ((sent < n || rcvd < n) && peer_now_s() < deadline) {
		if (sent < n)
			sent += rte_eth_tx_burst(tx, 0, m + sent, n - sent);
		if (rcvd < n) {
			struct rte_mbuf *b[OL_BURST];
			uint16_t r = rte_eth_rx_burst(rx, 0, b, OL_BURST);

			for (k = 0; k < r; k++) {
				if (rcvd < n)
					got[rcvd++] = b[k];
				else
					rte_pktmbuf_free(b[k]);
			}
		}
		if (rcvd < n)
			rte_delay_us_sleep(100);
	}
	if (sent < n || rcvd < n) {
		ctx->tap(false, "%u of %u packets sent, %u received within %.0f s", sent, n,
			 rcvd, ctx->timeout);
		rte_pktmbuf_free_bulk(m + sent, n - sent);
		rte_pktmbuf_free_bulk(got, rcvd);
		return -1;
	}
	return 0;
}

/* Bytes equal outside [skip, skip + 2) (skip UINT32_MAX: all). */
static bool
ol_bytes_equal(const uint8_t *a, const uint8_t *b, uint32_t len, uint32_t skip)
{
	if (skip == UINT32_MAX)
		return memcmp(a, b, len) == 0;
	return memcmp(a, b, skip) == 0 && memcmp(a + skip + 2, b + skip + 2, len - skip - 2) == 0;
}

static uint16_t
ol_pkt_add(uint16_t n, const char *what, uint32_t len, uint8_t proto, bool csum, bool tso,
	   uint16_t segsz, bool ipv6)
{
	struct ol_pkt *p = &pkts[n];

	*p = (struct ol_pkt){ .what = what, .len = len, .proto = proto, .tso = tso, .csum = csum,
			      .segsz = segsz };
	ol_build(p->exp, len, ipv6, proto, n + (ipv6 ? 50 : 0));
	return n + 1;
}

void
pair_offload_conf(bool frontend, const struct rte_eth_dev_info *info, uint64_t *rx_offloads,
		  uint64_t *tx_offloads)
{
	const uint64_t rx = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
			    RTE_ETH_RX_OFFLOAD_TCP_LRO | RTE_ETH_RX_OFFLOAD_SCATTER;
	const uint64_t tx = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
			    RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_MULTI_SEGS;

	if (frontend) {
		*rx_offloads = info->rx_offload_capa & rx;
		*tx_offloads = info->tx_offload_capa & tx;
	} else {
		*rx_offloads = 0;
		*tx_offloads = info->tx_offload_capa &
			       (RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
				RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	}
}

int
pair_offload_fe_to_be(const struct pair_offload_ctx *ctx, bool ipv6)
{
	const char *v = ipv6 ? "IPv6" : "IPv4";
	struct rte_mbuf *m[OL_MAX_PKTS], *got[OL_MAX_PKTS], *keep[2] = { NULL, NULL };
	uint16_t n = 0, i;
	int ret = 0;

	n = ol_pkt_add(n, "TCP checksum", 1000, IPPROTO_TCP, true, false, 0, ipv6);
	n = ol_pkt_add(n, "UDP checksum", 700, IPPROTO_UDP, true, false, 0, ipv6);
	n = ol_pkt_add(n, "TSO chain", OL_TSO_LEN, IPPROTO_TCP, true, true, OL_FE_SEGSZ, ipv6);
	n = ol_pkt_add(n, "TSO chain, shared", OL_TSO_LEN, IPPROTO_TCP, true, true, 1200, ipv6);
	n = ol_pkt_add(n, "TSO indirect clone", OL_TSO_LEN, IPPROTO_TCP, true, true, 536, ipv6);
	n = ol_pkt_add(n, "plain TCP", 300, IPPROTO_TCP, false, false, 0, ipv6);
	/* The plain packet carries its own checksum. */
	{
		uint16_t c = ol_ref_cksum(pkts[n - 1].exp, ipv6, IPPROTO_TCP);

		memcpy(pkts[n - 1].exp + ol_csum_pos(ipv6, IPPROTO_TCP), &c, 2);
	}
	for (i = 0; i < n; i++) {
		m[i] = peer_mbuf_copy(ctx->fe_tx_pool, pkts[i].exp, pkts[i].len, 2000);
		if (m[i] == NULL) {
			ctx->tap(false, "%s: mbufs for %s", v, pkts[i].what);
			rte_pktmbuf_free_bulk(m, i);
			return -1;
		}
		ol_set_tx(m[i], &pkts[i], ipv6);
	}
	/* Packet 3 with a second reference, packet 4 an indirect clone: the
	 * driver may write neither's headroom. */
	rte_mbuf_refcnt_update(m[3], 1);
	keep[0] = m[3];
	keep[1] = m[4];
	m[4] = rte_pktmbuf_clone(keep[1], ctx->fe_tx_pool);
	if (m[4] == NULL) {
		ctx->tap(false, "%s: clone", v);
		m[4] = keep[1];
		keep[1] = NULL;
	}
	if (ol_exchange(ctx, ctx->fe_port, ctx->be_port, true, m, n, got) != 0) {
		ret = -1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct ol_pkt *p = &pkts[i];
		struct rte_mbuf *r = got[i];
		uint64_t l4f = r->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
		uint32_t pos = ol_csum_pos(ipv6, p->proto);
		const uint8_t *b = NULL;
		uint16_t ref = 0, have = 0;
		bool ok;

		if (r->pkt_len == p->len)
			b = rte_pktmbuf_read(r, 0, p->len, flat);
		ok = b != NULL && ol_bytes_equal(b, p->exp, p->len, p->csum ? pos : UINT32_MAX);
		ctx->tap(ok, "%s fe->be %s: %u bytes arrived as one packet (%u segs), every byte but the L4 checksum equal",
			 v, p->what, r->pkt_len, r->nb_segs);
		if (!ok) {
			ret = -1;
			continue;
		}
		if (b != flat)
			memcpy(flat, b, p->len);
		ref = ol_ref_cksum(flat, ipv6, p->proto);
		memcpy(&have, flat + pos, 2);
		if (p->csum && l4f == RTE_MBUF_F_RX_L4_CKSUM_NONE) {
			/* Complete it as a device does: from csum_start, field included. */
			uint32_t start = OL_ETH + ol_l3_len(ipv6);

			have = (uint16_t)~rte_raw_cksum(flat + start, p->len - start);
			if (p->proto == IPPROTO_UDP && have == 0)
				have = 0xffff;
		}
		ok = have == ref && (p->csum ? l4f == RTE_MBUF_F_RX_L4_CKSUM_GOOD ||
					      l4f == RTE_MBUF_F_RX_L4_CKSUM_NONE :
					       l4f == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN);
		ctx->tap(ok, "%s fe->be %s: L4 checksum 0x%04x correct (0x%04x), back end rx flags %#" PRIx64,
			 v, p->what, have, ref, r->ol_flags);
		ret |= ok ? 0 : -1;
		ok = p->tso ? (r->ol_flags & RTE_MBUF_F_RX_LRO) && r->tso_segsz == p->segsz :
			      !(r->ol_flags & RTE_MBUF_F_RX_LRO);
		ctx->tap(ok, "%s fe->be %s: %s (tso_segsz %u, want %u)", v, p->what,
			 p->tso ? "LRO with the TSO segment size" : "no LRO", r->tso_segsz,
			 p->tso ? p->segsz : 0);
		ret |= ok ? 0 : -1;
	}
	rte_pktmbuf_free_bulk(got, n);
out:
	rte_pktmbuf_free(keep[0]);
	rte_pktmbuf_free(keep[1]);
	return ret;
}

int
pair_offload_be_to_fe(const struct pair_offload_ctx *ctx, bool ipv6)
{
	const char *v = ipv6 ? "IPv6" : "IPv4";
	struct rte_mbuf *m[OL_MAX_PKTS], *got[OL_MAX_PKTS];
	uint16_t n = 0, i;
	uint64_t bad = 0;
	uint64_t id;
	int ret = 0;

	n = ol_pkt_add(n, "TCP checksum", 1000, IPPROTO_TCP, true, false, 0, ipv6);
	n = ol_pkt_add(n, "UDP checksum", 600, IPPROTO_UDP, true, false, 0, ipv6);
	n = ol_pkt_add(n, "TSO chain", OL_TSO_LEN, IPPROTO_TCP, true, true, OL_BE_SEGSZ, ipv6);
	n = ol_pkt_add(n, "plain UDP", 200, IPPROTO_UDP, false, false, 0, ipv6);
	for (i = 0; i < n; i++) {
		struct ol_pkt *p = &pkts[i];
		uint8_t *l3 = p->exp + OL_ETH;
		uint16_t c;

		/* The field as lib/vhost's enqueue writes it
		 * (rte_net_intel_cksum_prepare): the pseudo-header sum, for
		 * TSO without the length. */
		if (p->csum) {
			uint64_t f = (ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4) |
				     (p->tso ? RTE_MBUF_F_TX_TCP_SEG : 0);

			c = ipv6 ? rte_ipv6_phdr_cksum((const struct rte_ipv6_hdr *)l3, f) :
				   rte_ipv4_phdr_cksum((const struct rte_ipv4_hdr *)l3, f);
		} else {
			c = ol_ref_cksum(p->exp, ipv6, p->proto);
		}
		memcpy(p->exp + ol_csum_pos(ipv6, p->proto), &c, 2);
		m[i] = peer_mbuf_copy(ctx->be_tx_pool, p->exp, p->len, 2000);
		if (m[i] == NULL) {
			ctx->tap(false, "%s: mbufs for %s", v, p->what);
			rte_pktmbuf_free_bulk(m, i);
			return -1;
		}
		ol_set_tx(m[i], p, ipv6);
	}
	if (ol_exchange(ctx, ctx->be_port, ctx->fe_port, false, m, n, got) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct ol_pkt *p = &pkts[i];
		struct rte_mbuf *r = got[i];
		uint64_t l4f = r->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
		uint32_t l3t = r->packet_type & RTE_PTYPE_L3_MASK;
		uint32_t l4t = r->packet_type & RTE_PTYPE_L4_MASK;
		const uint8_t *b = NULL;
		bool ok;

		if (r->pkt_len == p->len)
			b = rte_pktmbuf_read(r, 0, p->len, flat);
		ok = b != NULL && ol_bytes_equal(b, p->exp, p->len, UINT32_MAX);
		ctx->tap(ok, "%s be->fe %s: %u bytes (%u segs), every byte equal", v, p->what,
			 r->pkt_len, r->nb_segs);
		ret |= ok ? 0 : -1;
		ok = p->csum ? l4f == RTE_MBUF_F_RX_L4_CKSUM_NONE :
			       l4f == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN;
		ok = ok && (p->tso ? (r->ol_flags & RTE_MBUF_F_RX_LRO) && r->tso_segsz == p->segsz :
				     !(r->ol_flags & RTE_MBUF_F_RX_LRO));
		ctx->tap(ok, "%s be->fe %s: flags %#" PRIx64 " (%s), tso_segsz %u", v, p->what,
			 r->ol_flags, p->tso ? "LRO, L4 checksum partial" :
			 p->csum ? "L4 checksum partial" : "none", r->tso_segsz);
		ret |= ok ? 0 : -1;
		ok = (ipv6 ? RTE_ETH_IS_IPV6_HDR(l3t) : RTE_ETH_IS_IPV4_HDR(l3t)) &&
		     l4t == (p->proto == IPPROTO_TCP ? RTE_PTYPE_L4_TCP : RTE_PTYPE_L4_UDP);
		ctx->tap(ok, "%s be->fe %s: packet type %#x", v, p->what, r->packet_type);
		ret |= ok ? 0 : -1;
	}
	rte_pktmbuf_free_bulk(got, n);
	if (rte_eth_xstats_get_id_by_name(ctx->fe_port, "rx_q0_bad_hdr", &id) != 0 ||
	    rte_eth_xstats_get_by_id(ctx->fe_port, &id, &bad, 1) != 1)
		bad = UINT64_MAX;
	ctx->tap(bad == 0, "front end rx_q0_bad_hdr = %" PRIu64 " (expected 0)", bad);
	return bad == 0 ? ret : -1;
}

int
pair_offload_refused(const struct pair_offload_ctx *ctx)
{
	static const struct {
		const char *name;
		uint64_t rx, tx;
	} ol[] = {
		{ "tx TCP_CKSUM", 0, RTE_ETH_TX_OFFLOAD_TCP_CKSUM },
		{ "tx UDP_CKSUM", 0, RTE_ETH_TX_OFFLOAD_UDP_CKSUM },
		{ "tx TCP_TSO", 0, RTE_ETH_TX_OFFLOAD_TCP_TSO },
		{ "rx TCP_CKSUM", RTE_ETH_RX_OFFLOAD_TCP_CKSUM, 0 },
		{ "rx UDP_CKSUM", RTE_ETH_RX_OFFLOAD_UDP_CKSUM, 0 },
		{ "rx TCP_LRO", RTE_ETH_RX_OFFLOAD_TCP_LRO, 0 },
	};
	const uint64_t all_rx = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
				RTE_ETH_RX_OFFLOAD_TCP_LRO;
	const uint64_t all_tx = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
				RTE_ETH_TX_OFFLOAD_TCP_TSO;
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	struct rte_mbuf *m;
	unsigned int i;
	uint16_t k;
	int ret;

	if (rte_eth_dev_info_get(ctx->fe_port, &info) != 0) {
		ctx->tap(false, "dev_info_get");
		return -1;
	}
	ctx->tap((info.rx_offload_capa & all_rx) == 0 && (info.tx_offload_capa & all_tx) == 0,
		 "offloads off: rx_offload_capa %#" PRIx64 ", tx_offload_capa %#" PRIx64
		 " offer no checksum, TSO or LRO", info.rx_offload_capa, info.tx_offload_capa);
	/* A started port's fast-path ops include tx_prepare: try it first. */
	m = rte_pktmbuf_alloc(ctx->fe_tx_pool);
	if (m == NULL) {
		ctx->tap(false, "mbuf");
		return -1;
	}
	ol_build(rte_pktmbuf_mtod(m, uint8_t *), 200, false, IPPROTO_TCP, 1);
	m->data_len = 200;
	m->pkt_len = 200;
	pkts[0].proto = IPPROTO_TCP;
	pkts[0].csum = true;
	pkts[0].tso = false;
	ol_set_tx(m, &pkts[0], false);
	rte_errno = 0;
	k = rte_eth_tx_prepare(ctx->fe_port, 0, &m, 1);
	ctx->tap(k == 0 && rte_errno == ENOTSUP,
		 "tx_prepare of a TCP checksum request: %u accepted, rte_errno %d (want 0, ENOTSUP)",
		 k, rte_errno);
	rte_pktmbuf_free(m);

	ret = rte_eth_dev_stop(ctx->fe_port);
	if (ret != 0) {
		ctx->tap(false, "stop: %d", ret);
		return -1;
	}
	for (i = 0; i < RTE_DIM(ol); i++) {
		memset(&conf, 0, sizeof(conf));
		conf.rxmode.offloads = ol[i].rx;
		conf.txmode.offloads = ol[i].tx;
		ret = rte_eth_dev_configure(ctx->fe_port, 1, 1, &conf);
		ctx->tap(ret == -EINVAL, "configure with %s refused: %d (want -EINVAL)",
			 ol[i].name, ret);
	}
	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(ctx->fe_port, 1, 1, &conf);
	ctx->tap(ret == 0, "configure without offloads: %d", ret);
	return ret == 0 ? 0 : -1;
}
