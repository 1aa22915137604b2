/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Fuzz target for what a vhost-user back end writes outside a request:
 * vnapi_vhost_user_poll_inbound() (the EAL interrupt thread's read of the
 * connection) and the check every request makes before it sends.
 *
 * Input: byte 0 is a mode (bit 0: an eventfd rides with the bytes; bit 1:
 * the back end closes after writing; bit 2: a request is made instead of a
 * poll; bit 3: server mode, the connection is the one
 * vnapi_vhost_user_accept() takes from the socket vnapi_vhost_user_listen()
 * made, as net_vnapi with server=1 gets it; else a socketpair, as a client's
 * connection), the rest (at most 1024 bytes) is written by the back end. Whatever the bytes, poll_inbound must read them all (the
 * socket is not readable afterwards, so a level-triggered watch does not
 * fire again), report -EPROTO with the exact count (0 and -ECONNRESET only
 * for nothing and a bare close), close every received descriptor, and a
 * request must fail with -EPROTO and close the connection.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_log.h>

#include "vnapi_vhost_user.h"

#include "fuzz.h"
#include "../unit/vhost_user/send_fd.h"

#define FUZZ_MAX_BYTES 1024

static void
fuzz_send(int fd, const uint8_t *buf, size_t len, int pass_fd)
{
	static const uint8_t zero;

	if (len == 0 && pass_fd < 0)
		return;
	if (len == 0) {
		/* An fd needs at least one byte to ride on. */
		buf = &zero;
		len = 1;
	}
	if (send_with_fd(fd, buf, len, pass_fd) != (ssize_t)len)
		abort();
}

/* Server mode: one listening socket, made by the driver's code, for the run. */
static char fuzz_dir[] = "/tmp/vnapi-fuzz-XXXXXX";
static char fuzz_path[64];
static int fuzz_lfd = -1;

static void
fuzz_unlisten(void)
{
	if (fuzz_lfd >= 0)
		close(fuzz_lfd);
	unlink(fuzz_path);
	rmdir(fuzz_dir);
}

/* A back end connects to the server socket: sv[0] the driver's, sv[1] the back end's. */
static void
fuzz_server_pair(struct vnapi_vhost_user *vu, int sv[2])
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	if (fuzz_lfd < 0) {
		if (mkdtemp(fuzz_dir) == NULL)
			abort();
		snprintf(fuzz_path, sizeof(fuzz_path), "%s/vu.sock", fuzz_dir);
		if (vnapi_vhost_user_listen(fuzz_path, &fuzz_lfd) != 0)
			abort();
		atexit(fuzz_unlisten);
	}
	/* Nobody is connected: the listening socket has nothing to accept. */
	if (vnapi_vhost_user_accept(vu, fuzz_lfd, fuzz_path) != -EAGAIN)
		abort();
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", fuzz_path);
	sv[1] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv[1] < 0 || connect(sv[1], (const struct sockaddr *)&sun, sizeof(sun)) != 0)
		abort();
	if (vnapi_vhost_user_accept(vu, fuzz_lfd, fuzz_path) != 0 || vu->sock < 0)
		abort();
	sv[0] = vu->sock;
}

static bool
fuzz_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnapi_vhost_user vu = { .sock = -1, .path = "fuzz" };
	size_t len, want, bytes = 0;
	unsigned int nfds = 0;
	uint32_t request;
	bool with_fd, close_after, via_request, server;
	int sv[2], efd = -1, ret;
	uint64_t v;

	fuzz_quiet_logs();
	if (size < 1)
		return 0;
	with_fd = data[0] & 1;
	close_after = data[0] & 2;
	via_request = data[0] & 4;
	server = data[0] & 8;
	len = RTE_MIN(size - 1, (size_t)FUZZ_MAX_BYTES);
	if (server)
		fuzz_server_pair(&vu, sv);
	else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	if (with_fd) {
		efd = eventfd(0, EFD_CLOEXEC);
		if (efd < 0)
			abort();
	}
	fuzz_send(sv[1], data + 1, len, efd);
	want = len == 0 && with_fd ? 1 : len;
	if (efd >= 0)
		close(efd);
	if (close_after) {
		close(sv[1]);
		sv[1] = -1;
	}
	vu.sock = sv[0];
	vu.reply_timeout_ms = 50;

	if (via_request) {
		ret = vnapi_vhost_user_get_features(&vu, &v);
		if (want > 0 || close_after) {
			/* Unsolicited bytes, or a close: refused before sending. */
			if ((want > 0 && ret != -EPROTO) || (want == 0 && ret != -ECONNRESET) ||
			    vu.sock != -1)
				abort();
		} else if (ret != -ETIMEDOUT || vu.sock != -1) {
			abort(); /* the peer never answers */
		}
	} else {
		ret = vnapi_vhost_user_poll_inbound(&vu, &request, &bytes, &nfds);
		if (want == 0)
			ret = close_after ? (ret == -ECONNRESET ? 0 : -1) : (ret == 0 ? 0 : -1);
		else
			ret = ret == -EPROTO && bytes == want && nfds == (with_fd ? 1u : 0u) &&
			      (close_after || !fuzz_readable(vu.sock)) ? 0 : -1;
		if (ret != 0)
			abort();
		vnapi_vhost_user_close(&vu);
	}
	if (sv[1] >= 0)
		close(sv[1]);
	return 0;
}
