/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <stdarg.h>
#include <stdio.h>

#include "peer_tap.h"

static unsigned int peer_tap_n;
static char peer_fail_reason[512];

void
peer_tap(bool ok, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("%s %u - %s\n", ok ? "ok" : "not ok", ++peer_tap_n, msg);
	if (!ok && peer_fail_reason[0] == '\0')
		snprintf(peer_fail_reason, sizeof(peer_fail_reason), "%s", msg);
	fflush(stdout);
}

int
peer_fail(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	peer_tap(false, "%s", msg);
	return -1;
}

bool
peer_failed(void)
{
	return peer_fail_reason[0] != '\0';
}

int
peer_tap_finish(int ret)
{
	if (ret == 0 && !peer_failed()) {
		printf("1..%u\nRESULT: PASS\n", peer_tap_n);
		return 0;
	}
	printf("1..%u\nRESULT: FAIL: %s\n", peer_tap_n,
	       peer_failed() ? peer_fail_reason : "unknown");
	return 1;
}
