/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_REF_CKSUM_H_
#define _VNAPI_REF_CKSUM_H_

/**
 * @file
 * The reference L4 checksum the offload tests judge against (the unit test
 * of the virtio-net header and the offload pair test): DPDK's software
 * implementation over the packet as it is, whatever its checksum field
 * holds now. Header only, so both test trees include it without a library.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ip.h>

/**
 * The correct TCP/UDP checksum of the segment at @p l4 behind the IPv4 or
 * IPv6 header at @p l3. @p field (inside the L4 header) is read as zero and
 * left as it was.
 */
static inline uint16_t
ref_udptcp_cksum(const uint8_t *l3, const uint8_t *l4, bool v6, uint8_t *field)
{
	uint16_t saved, ref;

	memcpy(&saved, field, 2);
	memset(field, 0, 2);
	ref = v6 ? rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)l3, l4) :
		   rte_ipv4_udptcp_cksum((const struct rte_ipv4_hdr *)l3, l4);
	memcpy(field, &saved, 2);
	return ref;
}

#endif /* _VNAPI_REF_CKSUM_H_ */
