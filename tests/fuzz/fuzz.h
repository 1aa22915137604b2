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

#endif /* _VNAPI_FUZZ_H_ */
