/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_RXTX_AVX2_H_
#define _VNAPI_RXTX_AVX2_H_

/**
 * @file
 * @internal
 * The AVX2 part of the rx burst, in its own object built with -mavx2 (x86
 * builds define VNAPI_RX_AVX2); called by vnapi_rxtx.c only when
 * vnapi_rxtx_select() chose the AVX2 path.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "vnapi_dev.h"

/**
 * Turn a prefix of the @p n used buffers (@p cookies, @p lens: as
 * virtq_get_used() gave them), in groups of four, into packets in
 * @p rx_pkts[0..], adding their data bytes to @p bytes. A group is taken
 * when each length holds at least a header and, with mergeable buffers
 * (@p mrg), each header says num_buffers 1; the first group that does not,
 * and the last buffers (fewer than four), are left to the scalar code, as
 * is everything while a packet's later buffers are still due.
 * @return how many buffers (and packets) it took, a multiple of four.
 */
uint16_t vnapi_rx_vec_avx2(struct vnapi_rxq *rxq, void **cookies, const uint32_t *lens,
			   uint16_t n, struct rte_mbuf **rx_pkts, uint64_t *bytes, bool mrg);

#endif /* _VNAPI_RXTX_AVX2_H_ */
