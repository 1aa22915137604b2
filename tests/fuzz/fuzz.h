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

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* _VNAPI_FUZZ_H_ */
