/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_FUZZ_H_
#define _VNAPI_FUZZ_H_

/**
 * @file
 * @internal
 * The libFuzzer entry point every target defines; fuzz_replay.c calls it on
 * each corpus file when the target is built as an ordinary test.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_log.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rejections are the common case: the first input silences the driver's log. */
static inline void
fuzz_quiet_logs(void)
{
	static bool quiet;

	if (!quiet) {
		rte_log_set_global_level(RTE_LOG_EMERG);
		quiet = true;
	}
}

/* The fuzzer's bytes, read front to back, little-endian; zeros once they run out. */
struct fz_input {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t
fz_u8(struct fz_input *in)
{
	uint8_t v;

	if (in->n == 0)
		return 0;
	v = *in->p;
	in->p++;
	in->n--;
	return v;
}

static inline uint16_t
fz_u16(struct fz_input *in)
{
	uint16_t lo = fz_u8(in);

	return (uint16_t)(lo | fz_u8(in) << 8);
}

static inline uint32_t
fz_u32(struct fz_input *in)
{
	uint32_t lo = fz_u16(in);

	return lo | (uint32_t)fz_u16(in) << 16;
}

#endif /* _VNAPI_FUZZ_H_ */
