/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Fuzz target for vnapi_vhost_user_check_reply(), the decoder of every byte
 * a vhost-user back end sends us.
 *
 * Input: byte 0 picks the request we "sent" (one of the requests we send,
 * or, for values past the list, a raw code that is not one), byte 1 the
 * number of descriptors received with it (low 4 bits), the rest is the reply
 * as it came off the socket. Beyond memory errors (sanitizers), the target
 * aborts when an accepted reply breaks what the driver relies on.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "vnapi_vhost_user.h"

#include "fuzz.h"

#define FUZZ_VERSION_MASK 0x3u
#define FUZZ_FLAG_REPLY   (1u << 2)

static const uint32_t fuzz_requests[] = {
#define FUZZ_REQ(name, code, reply) code,
	VNAPI_VHOST_USER_REQUESTS(FUZZ_REQ)
#undef FUZZ_REQ
};

static bool
fuzz_is_state(uint32_t request)
{
	return request == VHOST_USER_GET_VRING_BASE;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t request, hdr[3];
	const uint8_t *buf;
	unsigned int nfds;
	uint64_t value = UINT64_C(0x5555555555555555), expect;
	size_t len;
	int ret;

	fuzz_quiet_logs();
	if (size < 2)
		return 0;
	if (data[0] < RTE_DIM(fuzz_requests))
		request = fuzz_requests[data[0]];
	else
		request = data[0];   /* may or may not be a request we send */
	nfds = data[1] & 0xf;
	buf = data + 2;
	len = size - 2;

	ret = vnapi_vhost_user_check_reply(request, len == 0 ? NULL : buf, len, nfds, &value);
	if (ret == -EINVAL) {
		if (strcmp(vnapi_vhost_user_request_name(request), "UNKNOWN") != 0)
			abort();
		return 0;
	}
	if (ret != 0) {
		if (ret != -EPROTO || value != UINT64_C(0x5555555555555555))
			abort();
		return 0;
	}

	/* Accepted: everything the driver relies on must hold. */
	if (len != 12 + 8 || nfds != 0)
		abort();
	memcpy(hdr, buf, sizeof(hdr));
	if (hdr[0] != request || (hdr[1] & FUZZ_VERSION_MASK) != 1 ||
	    !(hdr[1] & FUZZ_FLAG_REPLY) || hdr[2] != 8)
		abort();
	if (fuzz_is_state(request)) {
		uint32_t st[2];

		memcpy(st, buf + 12, sizeof(st));
		expect = ((uint64_t)st[0] << 32) | st[1];
	} else {
		memcpy(&expect, buf + 12, sizeof(expect));
	}
	if (value != expect)
		abort();
	return 0;
}
