/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <netinet/in.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "peer_frame.h"

void
peer_udp_fill(uint8_t *buf, uint32_t len, const struct peer_udp *h)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	rte_ether_addr_copy(&h->dst, &eth->dst_addr);
	rte_ether_addr_copy(&h->src, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth)));
	ip->packet_id = rte_cpu_to_be_16(h->ip_id);
	ip->time_to_live = h->ttl;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(h->ip_src);
	ip->dst_addr = rte_cpu_to_be_32(h->ip_dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(h->port_src);
	udp->dst_port = rte_cpu_to_be_16(h->port_dst);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth) - sizeof(*ip)));
	udp->dgram_cksum = 0;
}

/* Append segment @p m holding @p n bytes to the chain head..last. */
static void
peer_chain_append(struct rte_mbuf **head, struct rte_mbuf **last, struct rte_mbuf *m,
		  uint32_t n)
{
	m->data_len = (uint16_t)n;
	m->pkt_len = n;
	if (*head == NULL) {
		*head = m;
	} else {
		(*last)->next = m;
		(*head)->nb_segs++;
		(*head)->pkt_len += n;
	}
	*last = m;
}

struct rte_mbuf *
peer_mbuf_copy(struct rte_mempool *mp, const uint8_t *buf, uint32_t len, uint32_t seg_max)
{
	struct rte_mbuf *head = NULL, *last = NULL, *m;
	uint32_t off = 0, n;

	while (off < len) {
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		n = RTE_MIN(len - off, (uint32_t)rte_pktmbuf_tailroom(m));
		n = RTE_MIN(n, seg_max);
		memcpy(rte_pktmbuf_mtod(m, void *), buf + off, n);
		peer_chain_append(&head, &last, m, n);
		off += n;
	}
	return head;
}

struct rte_mbuf *
peer_mbuf_segs(struct rte_mempool *mp, const uint8_t *buf, uint32_t len, uint32_t nsegs,
	       bool no_headroom)
{
	struct rte_mbuf *head = NULL, *last = NULL, *m;
	uint32_t off = 0, i, n;

	for (i = 0; i < nsegs; i++) {
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (i == 0 && no_headroom)
			m->data_off = 0;
		/* Segment i holds bytes [len * i / nsegs, len * (i + 1) / nsegs). */
		n = (uint32_t)((uint64_t)len * (i + 1) / nsegs) - off;
		memcpy(rte_pktmbuf_mtod(m, void *), buf + off, n);
		peer_chain_append(&head, &last, m, n);
		off += n;
	}
	return head;
}

uint32_t
peer_first_diff(const uint8_t *a, const uint8_t *b, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len && a[i] == b[i]; i++)
		;
	return i;
}
