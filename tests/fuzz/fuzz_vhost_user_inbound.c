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
 * connection; bit 4: the bytes answer a request, GET_FEATURES or, with bit
 * 5, GET_VRING_BASE: the back end reads the request, then writes them), the
 * rest (at most 1024 bytes) is written by the back end. Whatever the bytes,
 * poll_inbound must read them all (the socket is not readable afterwards,
 * so a level-triggered watch does not fire again), report -EPROTO with the
 * exact count (0 and -ECONNRESET only for nothing and a bare close), close
 * every received descriptor, and a request must fail with -EPROTO and close
 * the connection.
 *
 * As an answer, the bytes go through the request's real receive path
 * (vnapi_vhost_user_xfer: header, payload, received descriptors, then
 * vnapi_vhost_user_check_reply): the request succeeds exactly when the bytes
 * hold a whole reply that check_reply() accepts (and, for GET_VRING_BASE,
 * names the vring asked for), with its value; a short reply times out, or
 * is a reset when the back end closes; a refused one drops the connection;
 * bytes after a reply are then unsolicited (poll_inbound counts them). No
 * descriptor leaks: the process has as many open as before.
 */

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
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
/* The vhost-user header, and the largest payload we read (SET_MEM_TABLE's). */
#define FUZZ_HDR_SIZE 12
#define FUZZ_PAYLOAD_MAX 264
#define FUZZ_VRING 1

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

/* The listening socket, made once (before the descriptors are counted). */
static void
fuzz_listen_once(void)
{
	if (fuzz_lfd >= 0)
		return;
	if (mkdtemp(fuzz_dir) == NULL)
		abort();
	snprintf(fuzz_path, sizeof(fuzz_path), "%s/vu.sock", fuzz_dir);
	if (vnapi_vhost_user_listen(fuzz_path, &fuzz_lfd) != 0)
		abort();
	atexit(fuzz_unlisten);
}

/* A back end connects to the server socket: sv[0] the driver's, sv[1] the back end's. */
static void
fuzz_server_pair(struct vnapi_vhost_user *vu, int sv[2])
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

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

/* Descriptors open in the process. */
static unsigned int
fuzz_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned int n = 0;

	if (d == NULL)
		abort();
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The back end of a request: read it, then answer with the input. */
struct fuzz_answer {
	int sock;
	const uint8_t *buf;
	size_t len;
	int fd;
	bool close_after;
	bool sent;      /* the whole answer was written */
};

static void *
fuzz_answer_thread(void *arg)
{
	struct fuzz_answer *a = arg;
	uint8_t req[FUZZ_HDR_SIZE + FUZZ_PAYLOAD_MAX];
	struct pollfd pfd = { .fd = a->sock, .events = POLLIN };
	uint32_t size;
	size_t got = 0, want = FUZZ_HDR_SIZE;

	while (got < want) {
		ssize_t n;

		/* The request comes at once, or the driver failed: 2 s. */
		if (poll(&pfd, 1, 2000) != 1)
			abort();
		n = read(a->sock, req + got, want - got);
		if (n <= 0)
			abort();
		got += (size_t)n;
		if (got == FUZZ_HDR_SIZE) {
			memcpy(&size, req + 8, sizeof(size));
			if (size > FUZZ_PAYLOAD_MAX)
				abort();
			want += size;
		}
	}
	/* May fail only when the driver gave up waiting (a short answer). */
	a->sent = send_with_fd(a->sock, a->buf, a->len, a->fd) == (ssize_t)a->len;
	if (a->close_after)
		shutdown(a->sock, SHUT_WR);
	return NULL;
}

/* What the answer must produce: 0, or the request's error. */
static int
fuzz_expect_answer(uint32_t request, const uint8_t *buf, size_t len, bool with_fd,
		   bool close_after, uint64_t *value, size_t *reply_len)
{
	uint32_t size;
	int ret;

	*reply_len = 0;
	if (len < FUZZ_HDR_SIZE)
		return close_after ? -ECONNRESET : -ETIMEDOUT;
	memcpy(&size, buf + 8, sizeof(size));
	if (size > FUZZ_PAYLOAD_MAX)
		return -EPROTO;    /* not read: refused from the header */
	if (len < FUZZ_HDR_SIZE + size)
		return close_after ? -ECONNRESET : -ETIMEDOUT;
	*reply_len = FUZZ_HDR_SIZE + size;
	ret = vnapi_vhost_user_check_reply(request, buf, FUZZ_HDR_SIZE + size, with_fd ? 1 : 0,
					   value);
	if (ret != 0)
		return ret;
	if (request == VHOST_USER_GET_VRING_BASE && (*value >> 32) != FUZZ_VRING)
		return -EPROTO;
	return 0;
}

/* The bytes answer a request: see the file's comment. */
static void
fuzz_answer(struct vnapi_vhost_user *vu, int sv[2], const uint8_t *buf, size_t len,
	    bool with_fd, bool close_after, bool vring_base)
{
	uint32_t request = vring_base ? VHOST_USER_GET_VRING_BASE : VHOST_USER_GET_FEATURES;
	struct fuzz_answer a = { .sock = sv[1], .fd = -1, .close_after = close_after };
	size_t reply_len, bytes;
	unsigned int nfds, base = 0;
	uint64_t expect_v = 0, v = 0;
	pthread_t th;
	int expect, ret;

	if (len == 0 && with_fd) {
		/* fuzz_send() sends one zero byte to carry the fd. */
		static const uint8_t zero;

		buf = &zero;
		len = 1;
	}
	a.buf = buf;
	a.len = len;
	expect = fuzz_expect_answer(request, buf, len, with_fd, close_after, &expect_v,
				    &reply_len);
	/*
	 * A short answer must time out: 10 ms. Any other outcome must not,
	 * however loaded the machine: the answer gets 2 s.
	 */
	vu->reply_timeout_ms = expect == -ETIMEDOUT ? 10 : 2000;
	if (with_fd) {
		a.fd = eventfd(0, EFD_CLOEXEC);
		if (a.fd < 0)
			abort();
	}
	if (pthread_create(&th, NULL, fuzz_answer_thread, &a) != 0)
		abort();
	if (vring_base)
		ret = vnapi_vhost_user_get_vring_base(vu, FUZZ_VRING, &base);
	else
		ret = vnapi_vhost_user_get_features(vu, &v);
	pthread_join(th, NULL);
	if (a.fd >= 0)
		close(a.fd);
	if (ret != expect || (!a.sent && expect != -ETIMEDOUT))
		abort();
	if (ret != 0) {
		if (vu->sock != -1)
			abort();    /* an error drops the connection */
		return;
	}
	if (vu->sock < 0 || (vring_base ? base != (uint32_t)expect_v : v != expect_v))
		abort();
	/* What followed the reply is unsolicited. */
	ret = vnapi_vhost_user_poll_inbound(vu, &request, &bytes, &nfds);
	if (len > reply_len ? ret != -EPROTO || bytes != len - reply_len :
	    ret != (close_after ? -ECONNRESET : 0))
		abort();
	vnapi_vhost_user_close(vu);
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
	bool with_fd, close_after, via_request, server, answer;
	unsigned int fds_before;
	int sv[2], efd = -1, ret;
	uint64_t v;

	fuzz_quiet_logs();
	if (size < 1)
		return 0;
	fuzz_listen_once();
	fds_before = fuzz_open_fds();
	with_fd = data[0] & 1;
	close_after = data[0] & 2;
	via_request = data[0] & 4;
	server = data[0] & 8;
	answer = data[0] & 16;
	len = RTE_MIN(size - 1, (size_t)FUZZ_MAX_BYTES);
	if (server)
		fuzz_server_pair(&vu, sv);
	else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	if (answer) {
		vu.sock = sv[0];
		fuzz_answer(&vu, sv, data + 1, len, with_fd, close_after, data[0] & 32);
		vnapi_vhost_user_close(&vu);
		close(sv[1]);
		if (fuzz_open_fds() != fds_before)
			abort();
		return 0;
	}
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
	vu.reply_timeout_ms = 10;

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
	if (fuzz_open_fds() != fds_before)
		abort();
	return 0;
}
