/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>

#include "peer_flow.h"
#include "peer_util.h"

/* l3fwd-power's destination MAC for port 0. */
static const struct rte_ether_addr peer_routed_dst = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x00 } };

static uint32_t
peer_flow_seed(const struct peer_flow *f, uint32_t seq)
{
	return (uint32_t)f->run ^ (seq * 2654435761u) ^ ((uint32_t)f->flow << 24) ^
	       ((uint32_t)f->kind << 16);
}

void
peer_flow_build(const struct peer_flow *f, uint8_t *buf, uint32_t len, uint32_t seq,
		uint64_t t_ns)
{
	struct peer_udp u = f->udp;
	struct peer_flow_hdr h = {
		.magic = PEER_FLOW_MAGIC,
		.run = f->run,
		.seq = seq,
		.t_ns = f->stamped ? t_ns : 0,
		.flow = f->flow,
		.kind = f->kind,
	};

	u.ip_id = (uint16_t)seq;
	if (f->nb_src_ports > 1)
		u.port_src = (uint16_t)(f->udp.port_src + seq % f->nb_src_ports);
	peer_udp_fill(buf, len, &u);
	memcpy(buf + PEER_FLOW_HDR_OFF, &h, sizeof(h));
	peer_pattern_fill(buf + PEER_FLOW_MIN_LEN, len - PEER_FLOW_MIN_LEN,
			  peer_flow_seed(f, seq));
}

int
peer_flow_peek(const uint8_t *buf, uint32_t len, uint16_t run, struct peer_flow_hdr *h)
{
	if (len < PEER_FLOW_MIN_LEN)
		return -1;
	memcpy(h, buf + PEER_FLOW_HDR_OFF, sizeof(*h));
	return h->magic == PEER_FLOW_MAGIC && h->run == run ? 0 : -1;
}

uint32_t
peer_flow_diff(const struct peer_flow *f, const struct peer_expect *e, const uint8_t *buf,
	       uint32_t len, const struct peer_flow_hdr *h)
{
	uint8_t exp[PEER_FLOW_MAX_LEN];
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)exp;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_ether_hdr *got = (const struct rte_ether_hdr *)buf;
	struct rte_ether_addr a;

	if (len > PEER_FLOW_MAX_LEN || len < PEER_FLOW_MIN_LEN)
		return 0;
	peer_flow_build(f, exp, len, h->seq, h->t_ns);
	switch (e->xform) {
	case PEER_XFORM_IO:
		break;
	case PEER_XFORM_MACSWAP:
		rte_ether_addr_copy(&eth->dst_addr, &a);
		rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
		rte_ether_addr_copy(&a, &eth->src_addr);
		break;
	case PEER_XFORM_ROUTED:
		rte_ether_addr_copy(&eth->dst_addr, &a);
		rte_ether_addr_copy(&peer_routed_dst, &eth->dst_addr);
		rte_ether_addr_copy(e->src_known ? &a : &got->src_addr, &eth->src_addr);
		ip->time_to_live--;
		/* The forwarder's checksum update (incremental or not) is its own. */
		memcpy(&ip->hdr_checksum, buf + ((const uint8_t *)&ip->hdr_checksum - exp),
		       sizeof(ip->hdr_checksum));
		break;
	}
	return peer_first_diff(exp, buf, len);
}

void
peer_tally_free(struct peer_tally *t)
{
	free(t->seen);
	memset(t, 0, sizeof(*t));
}

int
peer_tally_sent(struct peer_tally *t, uint64_t n)
{
	uint64_t need = (t->sent + n + 63) / 64, words;
	uint64_t *p;

	if (need > t->words) {
		words = RTE_MAX(need, t->words * 2);
		words = RTE_MAX(words, (uint64_t)64);
		p = realloc(t->seen, words * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		memset(p + t->words, 0, (words - t->words) * sizeof(*p));
		t->seen = p;
		t->words = words;
	}
	t->sent += n;
	return 0;
}

bool
peer_tally_seen(const struct peer_tally *t, uint64_t seq)
{
	return seq < t->sent && (t->seen[seq / 64] >> (seq % 64) & 1) != 0;
}

enum peer_tally_verdict
peer_tally_back(struct peer_tally *t, uint64_t seq, bool late)
{
	if (seq >= t->sent) {
		t->stray++;
		return PEER_TALLY_STRAY;
	}
	if (peer_tally_seen(t, seq)) {
		t->dup++;
		return PEER_TALLY_DUP;
	}
	t->seen[seq / 64] |= UINT64_C(1) << (seq % 64);
	if (late) {
		t->late++; /* lost: neither in order nor out of it */
		return PEER_TALLY_LATE;
	}
	if (seq < t->next)
		t->ooo++;
	else
		t->next = seq + 1;
	t->back++;
	return PEER_TALLY_BACK;
}
