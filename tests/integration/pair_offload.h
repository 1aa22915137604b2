/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PAIR_OFFLOAD_H_
#define _PAIR_OFFLOAD_H_

/**
 * @file
 * The offload checks of vhost_pair: checksum and TSO requests
 * from the front end must reach net_vhost (tso=1) as one packet with the
 * right flags and bytes, and net_vhost's checksum and TSO packets must
 * reach the front end with the right flags, lengths and bytes. Independent
 * of the harness: the caller owns EAL, the ports and the pools, and passes
 * its TAP reporter.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

/** The TAP line reporter of the harness (counts, records the first failure). */
typedef void (*pair_offload_tap_t)(bool ok, const char *fmt, ...);

struct pair_offload_ctx {
	uint16_t fe_port;
	uint16_t be_port;
	struct rte_mempool *fe_tx_pool;
	struct rte_mempool *be_tx_pool;
	pair_offload_tap_t tap;
	double timeout;              /**< Seconds to wait for the packets of one check. */
};

/** net_vhost's devargs for these checks (appended to name,iface=...,queues=...). */
#define PAIR_OFFLOAD_BE_DEVARGS ",tso=1"

/**
 * The offloads each side enables at configure: the front end all it
 * offers of checksum, TSO and LRO; the back end tx checksums (so its
 * enqueue writes the header) and no rx checksum (so it completes and
 * verifies the front end's partial checksums in software).
 */
void pair_offload_conf(bool frontend, const struct rte_eth_dev_info *info,
		       uint64_t *rx_offloads, uint64_t *tx_offloads);

/**
 * Front end -> back end, IPv4 or IPv6: TCP and UDP checksum requests, TSO
 * packets of ~64 KB (a chain, a chain with a second reference, and an
 * indirect clone), and a plain packet, through rte_eth_tx_prepare and
 * rte_eth_tx_burst. Each must arrive once, in order, with every byte but
 * the L4 checksum equal, a correct L4 checksum, and the flags: LRO with
 * the TSO segment size for TSO packets, none for the plain one.
 * @return 0, or -1 (reported through ctx->tap).
 */
int pair_offload_fe_to_be(const struct pair_offload_ctx *ctx, bool ipv6);

/**
 * Back end -> front end, IPv4 or IPv6: net_vhost sends TCP and UDP
 * checksum requests, a ~64 KB TSO packet and a plain packet; the front end
 * must deliver each with RTE_MBUF_F_RX_L4_CKSUM_NONE (partial checksum,
 * data verified), RTE_MBUF_F_RX_LRO and tso_segsz for TSO, no flag for the
 * plain one, the packet type, and every byte equal.
 */
int pair_offload_be_to_fe(const struct pair_offload_ctx *ctx, bool ipv6);

/**
 * A front end probed with every offload devarg 0: dev_infos_get offers
 * none, rte_eth_dev_configure refuses each (-EINVAL), and
 * rte_eth_tx_prepare refuses a checksum request (ENOTSUP). Leaves the port
 * configured with no offload (not started).
 */
int pair_offload_refused(const struct pair_offload_ctx *ctx);

#endif /* _PAIR_OFFLOAD_H_ */
