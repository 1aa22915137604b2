/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The AVX2 rx path: what the scalar burst does per received buffer, four
 * buffers at a time. Built with -mavx2 and called only when
 * vnapi_rxtx_select() found AVX2 allowed (rte_vect_get_max_simd_bitwidth()
 * >= 256) and present, and no rx offload negotiated (the header's offload
 * fields are then not read).
 *
 * Per buffer the scalar path writes six fields of the mbuf's first cache
 * line (data_off, refcnt, nb_segs and port as one word, ol_flags,
 * packet_type, pkt_len, data_len, vlan_tci); here they, and hash, are one
 * 32-byte store: a template with the length blended into pkt_len and
 * data_len. The four lengths are checked together: each at least a header
 * and, with mergeable buffers, each short of the buffer's writable length
 * (a buffer the device did not fill is a whole packet, so no header is
 * read: see vnapi_rxq.buf_wlen). A group that fails the check, and the
 * last buffers of a burst (fewer than four), are left to the scalar code,
 * which handles errors and multi-buffer packets: this function only takes
 * a prefix.
 */

#include <stddef.h>
#include <stdint.h>

#include <immintrin.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "vnapi_dev.h"
#include "vnapi_rxtx_avx2.h"

/* The 32 bytes from rearm_data, in the order the template's lanes assume. */
#define VNAPI_OFF(f) (offsetof(struct rte_mbuf, f) - offsetof(struct rte_mbuf, rearm_data))
static_assert(VNAPI_OFF(ol_flags) == 8, "mbuf layout: ol_flags after rearm_data");
static_assert(VNAPI_OFF(packet_type) == 16, "mbuf layout: packet_type");
static_assert(VNAPI_OFF(pkt_len) == 20, "mbuf layout: pkt_len");
static_assert(VNAPI_OFF(data_len) == 24, "mbuf layout: data_len");
static_assert(VNAPI_OFF(vlan_tci) == 26, "mbuf layout: vlan_tci");
static_assert(VNAPI_OFF(hash) == 28, "mbuf layout: hash");
static_assert(offsetof(struct rte_mbuf, rearm_data) + 32 <= RTE_CACHE_LINE_MIN_SIZE,
	      "mbuf layout: the 32 bytes in the first cache line");

/* Dwords 5 (pkt_len) and 6 (data_len, and vlan_tci: 0) take the length. */
#define VNAPI_LEN_LANES 0x60

static inline void
vnapi_rx_store_avx2(struct rte_mbuf *m, __m256i tmpl, __m256i len)
{
	_mm256_storeu_si256((__m256i *)(void *)((char *)m + offsetof(struct rte_mbuf, rearm_data)),
			    _mm256_blend_epi32(tmpl, len, VNAPI_LEN_LANES));
}

uint16_t
vnapi_rx_vec_avx2(struct vnapi_rxq *rxq, void **cookies, const uint32_t *lens, uint16_t n,
		  struct rte_mbuf **rx_pkts, uint64_t *bytes, bool mrg)
{
	const uint16_t hdr_size = rxq->hdr_size;
	const __m256i tmpl = _mm256_set_epi64x(0, 0, (long long)rxq->ol_flags,
					       (long long)rxq->rearm);
	const __m128i hdr = _mm_set1_epi32(hdr_size);
	const __m128i full = _mm_set1_epi32((int)rxq->buf_wlen);
	uint64_t sum = 0;
	uint16_t i;

	if (rxq->mrg_head != NULL)
		return 0;       /* a packet's later buffers come first */
	for (i = 0; i + 4 <= n; i += 4) {
		struct rte_mbuf **m = (struct rte_mbuf **)&cookies[i];
		__m128i l = _mm_loadu_si128((const __m128i *)(const void *)&lens[i]);
		__m128i d, bad;

		/* lens <= the buffer's writable length < 2^31: signed compare */
		bad = _mm_cmpgt_epi32(hdr, l);
		if (mrg)
			bad = _mm_or_si128(bad, _mm_cmpeq_epi32(l, full));
		if (_mm_movemask_epi8(bad) != 0)
			break;
		d = _mm_sub_epi32(l, hdr);
		vnapi_rx_store_avx2(m[0], tmpl, _mm256_broadcastd_epi32(d));
		vnapi_rx_store_avx2(m[1], tmpl,
				    _mm256_broadcastd_epi32(_mm_shuffle_epi32(d, 0x55)));
		vnapi_rx_store_avx2(m[2], tmpl,
				    _mm256_broadcastd_epi32(_mm_shuffle_epi32(d, 0xaa)));
		vnapi_rx_store_avx2(m[3], tmpl,
				    _mm256_broadcastd_epi32(_mm_shuffle_epi32(d, 0xff)));
		_mm256_storeu_si256((__m256i *)(void *)&rx_pkts[i],
				    _mm256_loadu_si256((const __m256i *)(const void *)&cookies[i]));
		/* the four lengths' sum, on the side */
		d = _mm_add_epi32(d, _mm_shuffle_epi32(d, 0x4e));
		d = _mm_add_epi32(d, _mm_shuffle_epi32(d, 0xb1));
		sum += (uint32_t)_mm_cvtsi128_si32(d);
	}
	*bytes += sum;
	return i;
}
