/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vnapi_vhost_user.h"

#include "fake_backend.h"
#include "send_fd.h"

/* Wire constants, from the vhost-user specification. */
#define FB_HDR_SIZE        12
#define FB_VERSION         0x1u
#define FB_FLAG_REPLY      (1u << 2)
#define FB_FLAG_NEED_REPLY (1u << 3)
#define FB_VRING_NOFD      (1u << 8)
#define FB_REGION_SIZE     32

enum fb_reply {
	FB_REPLY_NONE,
	FB_REPLY_U64,
	FB_REPLY_STATE,
};

struct fake_backend {
	struct fb_config cfg;
	char dir[64];
	char path[108];
	int listen_fd;
	int conn;
	int wake;          /* eventfd: stop or drop requested */
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under lock: */
	bool stop;
	bool drop;
	unsigned int drops_done;
	unsigned int count;
	struct fb_record records[FB_MAX_RECORDS];
	unsigned int violations;
	char violation[160];

	/* Back-end state, thread only. */
	uint64_t acked_protocol_features;
	uint32_t vring_base[256];
	uint64_t status;
};

static const char *const fb_fault_names[FB_FAULT_COUNT] = {
	[FB_OK] = "ok",
	[FB_DISCONNECT] = "disconnect",
	[FB_NO_ANSWER] = "no answer",
	[FB_BAD_SIZE] = "bad size",
	[FB_OVERSIZE] = "oversize",
	[FB_WRONG_REQUEST] = "wrong request",
	[FB_NO_REPLY_FLAG] = "no REPLY flag",
	[FB_BAD_VERSION] = "bad version",
	[FB_EXTRA_FD] = "extra fd",
	[FB_NACK] = "nack",
	[FB_TRUNCATED] = "truncated payload",
	[FB_WRONG_INDEX] = "wrong vring index",
	[FB_UNSOLICITED] = "unsolicited message after the reply",
	[FB_UNSOLICITED_FD] = "unsolicited message with an fd after the reply",
	[FB_LATE_DUPLICATE] = "reply sent twice",
};

const char *
fb_fault_name(enum fb_fault f)
{
	return (unsigned int)f < FB_FAULT_COUNT ? fb_fault_names[f] : "?";
}

static enum fb_reply
fb_reply_kind(uint32_t request)
{
	switch (request) {
	case VHOST_USER_GET_FEATURES:
	case VHOST_USER_GET_PROTOCOL_FEATURES:
	case VHOST_USER_GET_QUEUE_NUM:
	case VHOST_USER_GET_STATUS:
		return FB_REPLY_U64;
	case VHOST_USER_GET_VRING_BASE:
		return FB_REPLY_STATE;
	default:
		return FB_REPLY_NONE;
	}
}

static void __attribute__((format(printf, 2, 3)))
fb_violation(struct fake_backend *fb, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fb->lock);
	fb->violations++;
	va_start(ap, fmt);
	vsnprintf(fb->violation, sizeof(fb->violation), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&fb->lock);
}

static void
fb_close_conn(struct fake_backend *fb)
{
	if (fb->conn >= 0) {
		close(fb->conn);
		fb->conn = -1;
	}
}

/* Read exactly @p len bytes, collecting descriptors; -1 on EOF or error. */
static int
fb_read(struct fake_backend *fb, void *buf, size_t len, int *fds, unsigned int *nfds)
{
	uint8_t *p = buf;

	while (len > 0) {
		char ctrl[CMSG_SPACE(sizeof(int) * FB_MAX_FDS)];
		struct iovec iov = { .iov_base = p, .iov_len = len };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctrl,
			.msg_controllen = sizeof(ctrl),
		};
		struct cmsghdr *c;
		ssize_t n;

		n = recvmsg(fb->conn, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		for (c = CMSG_FIRSTHDR(&mh); n > 0 && c != NULL; c = CMSG_NXTHDR(&mh, c)) {
			size_t i, k;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
				if (*nfds < FB_MAX_FDS)
					fds[(*nfds)++] = fd;
				else
					close(fd);
			}
		}
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
fb_write(struct fake_backend *fb, const void *buf, size_t len, int fd)
{
	return send_with_fd(fb->conn, buf, len, fd) == (ssize_t)len ? 0 : -1;
}

/* A 20-byte message with request field @p request, outside any request. */
static int
fb_write_unsolicited(struct fake_backend *fb, uint32_t request, int with_fd)
{
	uint8_t msg[FB_HDR_SIZE + 8];
	uint32_t flags = FB_VERSION, size = 8;
	uint64_t v = 0x5a5a;
	int fd = -1, ret;

	memcpy(msg, &request, 4);
	memcpy(msg + 4, &flags, 4);
	memcpy(msg + 8, &size, 4);
	memcpy(msg + 12, &v, 8);
	if (with_fd)
		fd = eventfd(0, EFD_CLOEXEC);
	ret = fb_write(fb, msg, sizeof(msg), fd);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* What FB_UNSOLICITED* / FB_LATE_DUPLICATE write after the answer. */
static int
fb_after(struct fake_backend *fb, enum fb_fault after, uint32_t request, const void *reply,
	 size_t len)
{
	switch (after) {
	case FB_UNSOLICITED:
		return fb_write_unsolicited(fb, request, 0) < 0 ? -1 : 0;
	case FB_UNSOLICITED_FD:
		return fb_write_unsolicited(fb, request, 1) < 0 ? -1 : 0;
	case FB_LATE_DUPLICATE:
		if (reply == NULL)
			return fb_write_unsolicited(fb, request, 0) < 0 ? -1 : 0;
		return fb_write(fb, reply, len, -1) < 0 ? -1 : 0;
	default:
		return 0;
	}
}

static uint32_t
fb_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
fb_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Check a request against the specification; count what is wrong. */
static void
fb_check_request(struct fake_backend *fb, const struct fb_record *r)
{
	uint32_t expect_size = 0;
	unsigned int expect_fds = 0;
	bool need_reply = r->flags & FB_FLAG_NEED_REPLY;

	if ((r->flags & 0x3) != FB_VERSION || (r->flags & FB_FLAG_REPLY))
		fb_violation(fb, "request %u: flags 0x%x", r->request, r->flags);

	switch (r->request) {
	case VHOST_USER_GET_FEATURES:
	case VHOST_USER_SET_OWNER:
	case VHOST_USER_RESET_OWNER:
	case VHOST_USER_GET_PROTOCOL_FEATURES:
	case VHOST_USER_GET_QUEUE_NUM:
	case VHOST_USER_GET_STATUS:
		expect_size = 0;
		break;
	case VHOST_USER_SET_MEM_TABLE:
		expect_size = 8 + FB_REGION_SIZE * fb_u32(r->payload);
		expect_fds = fb_u32(r->payload);
		break;
	case VHOST_USER_SET_VRING_ADDR:
		expect_size = 40;
		break;
	case VHOST_USER_SET_VRING_KICK:
	case VHOST_USER_SET_VRING_CALL:
		expect_size = 8;
		expect_fds = (fb_u64(r->payload) & FB_VRING_NOFD) ? 0 : 1;
		break;
	default:
		expect_size = 8;
		break;
	}
	if (r->size != expect_size)
		fb_violation(fb, "request %u: size %u, expected %u", r->request, r->size, expect_size);
	if (r->nfds != expect_fds)
		fb_violation(fb, "request %u: %u fds, expected %u", r->request, r->nfds, expect_fds);
	if (need_reply && fb_reply_kind(r->request) != FB_REPLY_NONE)
		fb_violation(fb, "request %u: NEED_REPLY on a request with a reply", r->request);
	if (need_reply && !(fb->acked_protocol_features & (1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK)))
		fb_violation(fb, "request %u: NEED_REPLY without REPLY_ACK negotiated", r->request);
}

/* Serve one request. Returns -1 when the connection must be closed. */
static int
fb_serve_one(struct fake_backend *fb)
{
	struct fb_record r;
	uint8_t hdr[FB_HDR_SIZE];
	uint8_t out[FB_HDR_SIZE + 8];
	uint32_t rflags, rsize, rrequest;
	uint64_t value = 0;
	enum fb_reply kind;
	enum fb_fault fault, after = FB_OK;
	size_t out_len;
	int extra_fd = -1, ret;

	memset(&r, 0, sizeof(r));
	if (fb_read(fb, hdr, sizeof(hdr), r.fds, &r.nfds) < 0)
		goto fail;
	r.request = fb_u32(hdr);
	r.flags = fb_u32(hdr + 4);
	r.size = fb_u32(hdr + 8);
	if (r.size > FB_PAYLOAD_MAX) {
		fb_violation(fb, "request %u: size %u too big", r.request, r.size);
		goto fail;
	}
	if (fb_read(fb, r.payload, r.size, r.fds, &r.nfds) < 0)
		goto fail;

	fb_check_request(fb, &r);
	pthread_mutex_lock(&fb->lock);
	if (fb->count < FB_MAX_RECORDS)
		fb->records[fb->count] = r;
	else
		for (unsigned int i = 0; i < r.nfds; i++)
			close(r.fds[i]);
	fb->count++;
	fault = r.request < FB_MAX_REQUEST ? fb->cfg.faults[r.request] : FB_OK;
	pthread_cond_broadcast(&fb->cond);
	pthread_mutex_unlock(&fb->lock);
	if (fault == FB_UNSOLICITED || fault == FB_UNSOLICITED_FD || fault == FB_LATE_DUPLICATE) {
		after = fault;
		fault = FB_OK;
	}

	/* Apply the request. */
	switch (r.request) {
	case VHOST_USER_GET_FEATURES:
		value = fb->cfg.features;
		break;
	case VHOST_USER_GET_PROTOCOL_FEATURES:
		value = fb->cfg.protocol_features;
		break;
	case VHOST_USER_SET_PROTOCOL_FEATURES:
		fb->acked_protocol_features = fb_u64(r.payload);
		break;
	case VHOST_USER_GET_QUEUE_NUM:
		value = fb->cfg.queue_num;
		break;
	case VHOST_USER_SET_VRING_BASE:
		fb->vring_base[fb_u32(r.payload) & 0xff] = fb_u32(r.payload + 4);
		break;
	case VHOST_USER_GET_VRING_BASE: {
		uint32_t idx = fb_u32(r.payload);

		value = ((uint64_t)fb->vring_base[idx & 0xff] << 32) | idx;
		if (fault == FB_WRONG_INDEX)
			value += 1;
		break;
	}
	case VHOST_USER_SET_STATUS:
		fb->status = fb_u64(r.payload);
		break;
	case VHOST_USER_GET_STATUS:
		value = fb->status;
		break;
	default:
		break;
	}

	if (fault == FB_DISCONNECT)
		return -1;
	if (fault == FB_NO_ANSWER)
		return 0;
	kind = fb_reply_kind(r.request);
	if (kind == FB_REPLY_NONE && !(r.flags & FB_FLAG_NEED_REPLY))
		return fb_after(fb, after, r.request, NULL, 0);

	/* Reply (or ack): header then 8 bytes, then the fault. */
	rrequest = r.request;
	rflags = FB_VERSION | FB_FLAG_REPLY;
	rsize = 8;
	out_len = sizeof(out);
	if (fault == FB_NACK)
		value = 1;
	switch (fault) {
	case FB_BAD_SIZE:
		rsize = 4;
		out_len = FB_HDR_SIZE + 4;
		break;
	case FB_OVERSIZE:
		rsize = 4096;
		out_len = FB_HDR_SIZE;
		break;
	case FB_WRONG_REQUEST:
		rrequest = r.request + 100;
		break;
	case FB_NO_REPLY_FLAG:
		rflags = FB_VERSION;
		break;
	case FB_BAD_VERSION:
		rflags = 0x2 | FB_FLAG_REPLY;
		break;
	case FB_EXTRA_FD:
		extra_fd = eventfd(0, EFD_CLOEXEC);
		break;
	case FB_TRUNCATED:
		out_len = FB_HDR_SIZE + 4;
		break;
	default:
		break;
	}
	memcpy(out, &rrequest, 4);
	memcpy(out + 4, &rflags, 4);
	memcpy(out + 8, &rsize, 4);
	/* A STATE reply is {index u32, num u32}: value is base << 32 | index. */
	if (kind == FB_REPLY_STATE) {
		uint32_t idx = (uint32_t)value, num = (uint32_t)(value >> 32);

		memcpy(out + 12, &idx, 4);
		memcpy(out + 16, &num, 4);
	} else {
		memcpy(out + 12, &value, 8);
	}
	ret = fb_write(fb, out, out_len, extra_fd);
	if (extra_fd >= 0)
		close(extra_fd);
	if (ret < 0 || fault == FB_TRUNCATED)
		return -1;
	return fb_after(fb, after, r.request, out, out_len);

fail:
	for (unsigned int i = 0; i < r.nfds; i++)
		close(r.fds[i]);
	return -1;
}

static int
fb_listen(struct fake_backend *fb)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", fb->path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(fd, 4) < 0) {
		printf("# fake back end: bind/listen %s: %s\n", fb->path, strerror(errno));
		close(fd);
		return -1;
	}
	fb->listen_fd = fd;
	return 0;
}

static void *
fb_thread(void *arg)
{
	struct fake_backend *fb = arg;

	if (fb->listen_fd < 0) {
		struct pollfd p = { .fd = fb->wake, .events = POLLIN };

		/* Delayed listen: a stop request cuts the delay short. */
		if (poll(&p, 1, (int)fb->cfg.listen_delay_ms) == 0)
			fb_listen(fb);
	}

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fb->wake, .events = POLLIN },
			{ .fd = fb->conn >= 0 ? fb->conn : fb->listen_fd, .events = POLLIN },
		};
		uint64_t v;
		bool stop, drop;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & POLLIN) {
			if (read(fb->wake, &v, sizeof(v)) < 0)
				v = 0;
			pthread_mutex_lock(&fb->lock);
			stop = fb->stop;
			drop = fb->drop;
			fb->drop = false;
			pthread_mutex_unlock(&fb->lock);
			if (drop) {
				fb_close_conn(fb);
				pthread_mutex_lock(&fb->lock);
				fb->drops_done++;
				pthread_cond_broadcast(&fb->cond);
				pthread_mutex_unlock(&fb->lock);
			}
			if (stop)
				break;
			continue;
		}
		if (p[1].fd < 0 || p[1].revents == 0)
			continue;
		if (fb->conn < 0) {
			fb->conn = accept4(fb->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fb->conn >= 0) {
				/* Never block forever on a half-sent request. */
				struct timeval tv = { .tv_sec = 2 };

				setsockopt(fb->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			}
			continue;
		}
		if (fb_serve_one(fb) < 0)
			fb_close_conn(fb);
	}
	fb_close_conn(fb);
	return NULL;
}

struct fake_backend *
fake_backend_start(const struct fb_config *cfg)
{
	struct fake_backend *fb;

	fb = calloc(1, sizeof(*fb));
	if (fb == NULL)
		return NULL;
	fb->cfg = *cfg;
	fb->listen_fd = -1;
	fb->conn = -1;
	fb->wake = -1;
	pthread_mutex_init(&fb->lock, NULL);
	pthread_cond_init(&fb->cond, NULL);

	snprintf(fb->dir, sizeof(fb->dir), "/tmp/vnapi-vu-test-XXXXXX");
	if (mkdtemp(fb->dir) == NULL) {
		printf("# fake back end: mkdtemp: %s\n", strerror(errno));
		fb->dir[0] = '\0';
		goto fail;
	}
	snprintf(fb->path, sizeof(fb->path), "%s/vhost-user.sock", fb->dir);
	fb->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fb->wake < 0)
		goto fail;
	if (cfg->listen_delay_ms == 0 && fb_listen(fb) < 0)
		goto fail;
	if (pthread_create(&fb->thread, NULL, fb_thread, fb) != 0)
		goto fail;
	fb->thread_started = true;
	return fb;

fail:
	fake_backend_destroy(fb);
	return NULL;
}

static void
fb_kick(struct fake_backend *fb)
{
	uint64_t one = 1;

	if (write(fb->wake, &one, sizeof(one)) < 0)
		printf("# fake back end: wake: %s\n", strerror(errno));
}

void
fake_backend_destroy(struct fake_backend *fb)
{
	unsigned int i, j, n;

	if (fb == NULL)
		return;
	if (fb->thread_started) {
		pthread_mutex_lock(&fb->lock);
		fb->stop = true;
		pthread_mutex_unlock(&fb->lock);
		fb_kick(fb);
		pthread_join(fb->thread, NULL);
	}
	fb_close_conn(fb);
	if (fb->listen_fd >= 0)
		close(fb->listen_fd);
	if (fb->wake >= 0)
		close(fb->wake);
	n = fb->count < FB_MAX_RECORDS ? fb->count : FB_MAX_RECORDS;
	for (i = 0; i < n; i++)
		for (j = 0; j < fb->records[i].nfds; j++)
			close(fb->records[i].fds[j]);
	if (fb->path[0] != '\0')
		unlink(fb->path);
	if (fb->dir[0] != '\0')
		rmdir(fb->dir);
	pthread_cond_destroy(&fb->cond);
	pthread_mutex_destroy(&fb->lock);
	free(fb);
}

const char *
fake_backend_path(const struct fake_backend *fb)
{
	return fb->path;
}

void
fake_backend_set_fault(struct fake_backend *fb, uint32_t request, enum fb_fault f)
{
	if (request >= FB_MAX_REQUEST)
		return;
	pthread_mutex_lock(&fb->lock);
	fb->cfg.faults[request] = f;
	pthread_mutex_unlock(&fb->lock);
}

unsigned int
fake_backend_wait(struct fake_backend *fb, unsigned int n, unsigned int timeout_ms)
{
	struct timespec deadline;
	unsigned int count;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&fb->lock);
	while (fb->count < n &&
	       pthread_cond_timedwait(&fb->cond, &fb->lock, &deadline) == 0)
		;
	count = fb->count;
	pthread_mutex_unlock(&fb->lock);
	return count;
}

int
fake_backend_record(struct fake_backend *fb, unsigned int i, struct fb_record *out)
{
	int ret = -1;

	pthread_mutex_lock(&fb->lock);
	if (i < fb->count && i < FB_MAX_RECORDS) {
		*out = fb->records[i];
		ret = 0;
	}
	pthread_mutex_unlock(&fb->lock);
	return ret;
}

void
fake_backend_drop(struct fake_backend *fb)
{
	unsigned int done;

	pthread_mutex_lock(&fb->lock);
	done = fb->drops_done;
	fb->drop = true;
	pthread_mutex_unlock(&fb->lock);
	fb_kick(fb);
	pthread_mutex_lock(&fb->lock);
	while (fb->drops_done == done)
		pthread_cond_wait(&fb->cond, &fb->lock);
	pthread_mutex_unlock(&fb->lock);
}

int
fake_backend_send_unsolicited(struct fake_backend *fb, uint32_t request, int with_fd)
{
	if (__atomic_load_n(&fb->conn, __ATOMIC_ACQUIRE) < 0)
		return -1;
	return fb_write_unsolicited(fb, request, with_fd);
}

unsigned int
fake_backend_violations(struct fake_backend *fb, char *what, size_t len)
{
	unsigned int n;

	pthread_mutex_lock(&fb->lock);
	n = fb->violations;
	if (what != NULL && len > 0)
		snprintf(what, len, "%s", fb->violation);
	pthread_mutex_unlock(&fb->lock);
	return n;
}
