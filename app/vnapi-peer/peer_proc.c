/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "peer_proc.h"

/* The start of a /proc file opened as fd, NUL-terminated; false when unreadable. */
static bool
proc_read(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (fd < 0)
		return false;
	n = pread(fd, buf, len - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

uint64_t
peer_schedstat_wait_ns(int fd)
{
	unsigned long long run, wait;
	char buf[128];

	if (!proc_read(fd, buf, sizeof(buf)))
		return 0;
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? wait : 0;
}

uint64_t
peer_steal_ticks(int fd)
{
	unsigned long long v[8];
	char buf[256];

	if (!proc_read(fd, buf, sizeof(buf)))
		return 0;
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return 0;
	return v[7];
}
