/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "vnapi_compat.h"
#include "vnapi_logs.h"
#include "vnapi_time.h"
#include "vnapi_vhost_user.h"

/* Header flags. */
#define VHOST_USER_VERSION_MASK     0x3u
#define VHOST_USER_VERSION          0x1u
#define VHOST_USER_FLAG_REPLY       (1u << 2)
#define VHOST_USER_FLAG_NEED_REPLY  (1u << 3)

/* u64 payload of SET_VRING_KICK / SET_VRING_CALL. */
#define VHOST_USER_VRING_IDX_MASK   0xffu
#define VHOST_USER_VRING_NOFD       (1u << 8)

struct __rte_packed_begin vnapi_vhost_user_hdr {
	uint32_t request;
	uint32_t flags;
	uint32_t size;   /**< Payload bytes that follow. */
} __rte_packed_end;

struct __rte_packed_begin vnapi_vhost_user_vring_state {
	uint32_t index;
	uint32_t num;
} __rte_packed_end;

struct __rte_packed_begin vnapi_vhost_user_vring_addr {
	uint32_t index;
	uint32_t flags;
	uint64_t desc;
	uint64_t used;
	uint64_t avail;
	uint64_t log;
} __rte_packed_end;

struct __rte_packed_begin vnapi_vhost_user_mem_region {
	uint64_t guest_phys_addr;
	uint64_t memory_size;
	uint64_t userspace_addr;
	uint64_t mmap_offset;
} __rte_packed_end;

struct __rte_packed_begin vnapi_vhost_user_memory {
	uint32_t nregions;
	uint32_t padding;
	struct vnapi_vhost_user_mem_region regions[VHOST_USER_MAX_MEM_REGIONS];
} __rte_packed_end;

union __rte_packed_begin vnapi_vhost_user_payload {
	uint64_t u64;
	struct vnapi_vhost_user_vring_state state;
	struct vnapi_vhost_user_vring_addr addr;
	struct vnapi_vhost_user_memory memory;
} __rte_packed_end;

struct __rte_packed_begin vnapi_vhost_user_msg {
	struct vnapi_vhost_user_hdr hdr;
	union vnapi_vhost_user_payload payload;
} __rte_packed_end;

#define VNAPI_VU_HDR_SIZE     sizeof(struct vnapi_vhost_user_hdr)
#define VNAPI_VU_PAYLOAD_MAX  sizeof(union vnapi_vhost_user_payload)

_Static_assert(sizeof(struct vnapi_vhost_user_hdr) == 12, "vhost-user header is 12 bytes");
_Static_assert(sizeof(struct vnapi_vhost_user_vring_addr) == 40, "vring addr is 40 bytes");
_Static_assert(sizeof(struct vnapi_vhost_user_memory) == 8 + 32 * VHOST_USER_MAX_MEM_REGIONS,
	       "memory table layout");

/* What a request is answered with (the reply column of the X-macro list). */
enum vnapi_vhost_user_reply {
	VNAPI_VU_REPLY_NONE,  /* nothing, or an 8-byte ack under REPLY_ACK */
	VNAPI_VU_REPLY_U64,
	VNAPI_VU_REPLY_STATE,
	VNAPI_VU_REPLY_MEM,   /* not used by any request yet: rejected */
};

struct __rte_packed_begin vnapi_vhost_user_req_info {
	const char *name;     /* NULL: not a request we send */
	enum vnapi_vhost_user_reply reply;
};

static const struct vnapi_vhost_user_req_info vnapi_vhost_user_reqs[] = {
#define VNAPI_VU_REQ_INFO(name_, code_, reply_) \
	[code_] = { .name = #name_, .reply = VNAPI_VU_REPLY_ ## reply_ },
	VNAPI_VHOST_USER_REQUESTS(VNAPI_VU_REQ_INFO)
#undef VNAPI_VU_REQ_INFO
};

static const struct vnapi_vhost_user_req_info *
vnapi_vhost_user_req_lookup(uint32_t request)
{
	if (request >= RTE_DIM(vnapi_vhost_user_reqs) ||
	    vnapi_vhost_user_reqs[request].name == NULL)
		return NULL;
	return &vnapi_vhost_user_reqs[request];
}

const char *
vnapi_vhost_user_request_name(uint32_t request)
{
	const struct vnapi_vhost_user_req_info *info = vnapi_vhost_user_req_lookup(request);

	return info != NULL ? info->name : "UNKNOWN";
}

int
vnapi_vhost_user_check_reply(uint32_t request, const void *buf, size_t len,
			     unsigned int nfds, uint64_t *value)
{
	const struct vnapi_vhost_user_req_info *info = vnapi_vhost_user_req_lookup(request);
	const uint8_t *bytes = buf;
	struct vnapi_vhost_user_hdr hdr;
	struct vnapi_vhost_user_vring_state state;
	uint32_t expect;
	uint64_t v;

	if (info == NULL) {
		VNAPI_INIT_LOG(ERR, "request code %" PRIu32 " is not one we send", request);
		return -EINVAL;
	}
	if (buf == NULL || len < VNAPI_VU_HDR_SIZE) {
		VNAPI_INIT_LOG(ERR, "%s reply: %zu bytes, shorter than the %zu-byte header",
			       info->name, buf == NULL ? 0 : len, VNAPI_VU_HDR_SIZE);
		return -EPROTO;
	}
	memcpy(&hdr, bytes, sizeof(hdr));
	if (hdr.request != request) {
		VNAPI_INIT_LOG(ERR, "%s reply: request field is %" PRIu32 " (%s)",
			       info->name, hdr.request, vnapi_vhost_user_request_name(hdr.request));
		return -EPROTO;
	}
	if ((hdr.flags & VHOST_USER_VERSION_MASK) != VHOST_USER_VERSION) {
		VNAPI_INIT_LOG(ERR, "%s reply: version %" PRIu32 " in flags 0x%" PRIx32 ", expected %u",
			       info->name, hdr.flags & VHOST_USER_VERSION_MASK, hdr.flags,
			       VHOST_USER_VERSION);
		return -EPROTO;
	}
	if ((hdr.flags & VHOST_USER_FLAG_REPLY) == 0) {
		VNAPI_INIT_LOG(ERR, "%s reply: REPLY flag missing in flags 0x%" PRIx32,
			       info->name, hdr.flags);
		return -EPROTO;
	}
	if (hdr.size > VNAPI_VU_PAYLOAD_MAX) {
		VNAPI_INIT_LOG(ERR, "%s reply: size field %" PRIu32 " exceeds the largest payload (%zu)",
			       info->name, hdr.size, VNAPI_VU_PAYLOAD_MAX);
		return -EPROTO;
	}
	if (len - VNAPI_VU_HDR_SIZE != hdr.size) {
		VNAPI_INIT_LOG(ERR, "%s reply: size field %" PRIu32 " but %zu payload bytes",
			       info->name, hdr.size, len - VNAPI_VU_HDR_SIZE);
		return -EPROTO;
	}
	if (nfds != 0) {
		VNAPI_INIT_LOG(ERR, "%s reply: carries %u file descriptors, expected none",
			       info->name, nfds);
		return -EPROTO;
	}

	switch (info->reply) {
	case VNAPI_VU_REPLY_NONE:
	case VNAPI_VU_REPLY_U64:
		expect = sizeof(uint64_t);
		break;
	case VNAPI_VU_REPLY_STATE:
		expect = sizeof(struct vnapi_vhost_user_vring_state);
		break;
	default:
		VNAPI_INIT_LOG(ERR, "%s reply: this reply kind is not supported", info->name);
		return -EPROTO;
	}
	if (hdr.size != expect) {
		VNAPI_INIT_LOG(ERR, "%s reply: payload size %" PRIu32 ", expected %" PRIu32,
			       info->name, hdr.size, expect);
		return -EPROTO;
	}

	if (info->reply == VNAPI_VU_REPLY_STATE) {
		memcpy(&state, bytes + VNAPI_VU_HDR_SIZE, sizeof(state));
		v = ((uint64_t)state.index << 32) | state.num;
	} else {
		memcpy(&v, bytes + VNAPI_VU_HDR_SIZE, sizeof(v));
	}
	if (value != NULL)
		*value = v;
	return 0;
}

static void
vnapi_vhost_user_sleep_ms(uint64_t ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The calling thread's cancel eventfd (vnapi_vhost_user_cancel_fd_set). */
static __thread int vnapi_vhost_user_cancel_fd = -1;

void
vnapi_vhost_user_cancel_fd_set(int fd)
{
	vnapi_vhost_user_cancel_fd = fd;
}

/*
 * Wait until @p fd is ready for @p events or @p deadline (ms) passes, or
 * (-ECANCELED) the thread's cancel eventfd is readable.
 */
static int
vnapi_vhost_user_wait(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = events },
			{ .fd = vnapi_vhost_user_cancel_fd, .events = POLLIN },
		};
		uint64_t now = vnapi_now_ms();
		int n;

		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(pfd, pfd[1].fd >= 0 ? 2 : 1,
			 (int)RTE_MIN(deadline - now, (uint64_t)INT_MAX));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n > 0 && pfd[1].revents != 0)
			return -ECANCELED;
		/* Ready, or HUP/ERR: the next send/recv reports which. */
		if (n > 0)
			return 0;
	}
}

/*
 * One non-blocking sendmsg (@p out) or recvmsg on @p sock, again after an
 * interruption or once the socket is ready, until @p deadline: the byte
 * count, or a negative errno.
 */
static ssize_t
vnapi_vhost_user_msg_io(int sock, struct msghdr *mh, bool out, uint64_t deadline)
{
	for (;;) {
		ssize_t n;
		int ret;

		n = out ? sendmsg(sock, mh, MSG_NOSIGNAL | MSG_DONTWAIT) :
			  recvmsg(sock, mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = vnapi_vhost_user_wait(sock, out ? POLLOUT : POLLIN, deadline);
		if (ret < 0)
			return ret;
	}
}

/*
 * Send header + payload, with @p nfds descriptors attached to the first
 * byte. Partial writes continue without the descriptors (already passed).
 */
static int
vnapi_vhost_user_send(int sock, const struct vnapi_vhost_user_msg *msg,
		      const int *fds, unsigned int nfds, uint64_t deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_FDS)];
		struct cmsghdr align;
	} ctrl;
	const uint8_t *p = (const uint8_t *)msg;
	size_t left = VNAPI_VU_HDR_SIZE + msg->hdr.size;
	bool fds_pending = nfds > 0;

	if (nfds > VHOST_USER_MAX_FDS)
		return -E2BIG;

	while (left > 0) {
		struct iovec iov = { .iov_base = (void *)(uintptr_t)p, .iov_len = left };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (fds_pending) {
			struct cmsghdr *cmsg;

			memset(&ctrl, 0, sizeof(ctrl));
			mh.msg_control = ctrl.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
			cmsg = CMSG_FIRSTHDR(&mh);
			cmsg->cmsg_level = SOL_SOCKET;
			cmsg->cmsg_type = SCM_RIGHTS;
			cmsg->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
			memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * nfds);
		}
		n = vnapi_vhost_user_msg_io(sock, &mh, true, deadline);
		if (n < 0)
			return (int)n;
		fds_pending = false;
		p += n;
		left -= (size_t)n;
	}
	return 0;
}

/* Close every descriptor passed in @p mh; return how many there were. */
static unsigned int
vnapi_vhost_user_drop_fds(struct msghdr *mh)
{
	struct cmsghdr *cmsg;
	unsigned int count = 0;

	for (cmsg = CMSG_FIRSTHDR(mh); cmsg != NULL; cmsg = CMSG_NXTHDR(mh, cmsg)) {
		size_t i, n;

		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS ||
		    cmsg->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(fd));
			if (fd >= 0)
				close(fd);
		}
		count += n;
	}
	/* The kernel discards what did not fit: still a protocol error. */
	if (mh->msg_flags & MSG_CTRUNC)
		count++;
	return count;
}

/*
 * Receive exactly @p len bytes. Descriptors that come along are closed and
 * counted in @p nfds (a reply must carry none). EOF: -ECONNRESET.
 */
static int
vnapi_vhost_user_recv(int sock, void *buf, size_t len, unsigned int *nfds, uint64_t deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_FDS)];
		struct cmsghdr align;
	} ctrl;
	uint8_t *p = buf;

	while (len > 0) {
		struct iovec iov = { .iov_base = p, .iov_len = len };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctrl.buf,
			.msg_controllen = sizeof(ctrl.buf),
		};
		ssize_t n;

		n = vnapi_vhost_user_msg_io(sock, &mh, false, deadline);
		if (n < 0)
			return (int)n;
		*nfds += vnapi_vhost_user_drop_fds(&mh);
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void
vnapi_vhost_user_msg_init(struct vnapi_vhost_user_msg *msg, uint32_t request, uint32_t size)
{
	memset(msg, 0, sizeof(*msg));
	msg->hdr.request = request;
	msg->hdr.flags = VHOST_USER_VERSION;
	msg->hdr.size = size;
}

static void
vnapi_vhost_user_drop(struct vnapi_vhost_user *vu)
{
	int sock = vu->sock;

	/* peer_gone() may read sock from another thread. */
	__atomic_store_n(&vu->sock, -1, __ATOMIC_RELAXED);
	if (sock >= 0)
		close(sock);
}

/*
 * One request: send @p msg (with @p fds), then read and check its reply, or
 * the ack when REPLY_ACK is in use. @p value receives the reply's value.
 */
static int
vnapi_vhost_user_xfer(struct vnapi_vhost_user *vu, struct vnapi_vhost_user_msg *msg,
		      const int *fds, unsigned int nfds, uint64_t *value)
{
	const uint32_t request = msg->hdr.request;
	const struct vnapi_vhost_user_req_info *info = vnapi_vhost_user_req_lookup(request);
	struct vnapi_vhost_user_msg reply;
	unsigned int timeout_ms, rx_fds = 0;
	uint64_t deadline, v = 0;
	size_t extra_bytes;
	uint32_t v32;
	bool want_reply;
	int ret;

	if (vu->sock < 0) {
		VNAPI_INIT_LOG(ERR, "%s: not connected to the vhost-user back end%s%s",
			       info->name, vu->path[0] != '\0' ? " at " : "", vu->path);
		return -ENOTCONN;
	}

	want_reply = info->reply != VNAPI_VU_REPLY_NONE;
	/*
	 * REPLY_ACK: ask for an ack on every request with no reply of its own,
	 * except SET_PROTOCOL_FEATURES (see the header).
	 */
	if (!want_reply && request != VHOST_USER_SET_PROTOCOL_FEATURES &&
	    (vu->protocol_features & (UINT64_C(1) << VHOST_USER_PROTOCOL_F_REPLY_ACK))) {
		msg->hdr.flags |= VHOST_USER_FLAG_NEED_REPLY;
		want_reply = true;
	}

	timeout_ms = vu->reply_timeout_ms != 0 ? vu->reply_timeout_ms :
		VNAPI_VHOST_USER_REPLY_TIMEOUT_MS;
	deadline = vnapi_now_ms() + timeout_ms;

	/* Nothing may be waiting before we ask: bytes here were written
	 * outside any request (unsolicited, or a late reply). */
	ret = vnapi_vhost_user_poll_inbound(vu, &v32, &extra_bytes, &rx_fds);
	if (ret == -EPROTO) {
		VNAPI_INIT_LOG(ERR, "%s: the vhost-user back end at %s wrote %zu unsolicited bytes (request field %" PRIu32 ", %u fds) before it; protocol violation",
			       info->name, vu->path, extra_bytes, v32, rx_fds);
		goto drop;
	}
	if (ret < 0) {
		VNAPI_INIT_LOG(ERR, "%s: the vhost-user back end at %s closed the connection",
			       info->name, vu->path);
		ret = -ECONNRESET;
		goto drop;
	}
	rx_fds = 0;

	/* The message trace: --log-level=pmd.net.vnapi.init:debug */
	VNAPI_INIT_LOG(DEBUG, "vhost-user %s: send %s flags 0x%" PRIx32 " size %" PRIu32 " fds %u",
		       vu->path, info->name, msg->hdr.flags, msg->hdr.size, nfds);
	ret = vnapi_vhost_user_send(vu->sock, msg, fds, nfds, deadline);
	if (ret < 0) {
		VNAPI_INIT_LOG(ERR, "%s: sending to the vhost-user back end at %s failed: %s",
			       info->name, vu->path, strerror(-ret));
		goto drop;
	}
	if (!want_reply)
		return 0;

	ret = vnapi_vhost_user_recv(vu->sock, &reply.hdr, VNAPI_VU_HDR_SIZE, &rx_fds, deadline);
	/* An oversized size field is not read: check_reply() rejects it. */
	if (ret == 0 && reply.hdr.size <= VNAPI_VU_PAYLOAD_MAX)
		ret = vnapi_vhost_user_recv(vu->sock, &reply.payload, reply.hdr.size,
					    &rx_fds, deadline);
	if (ret < 0) {
		if (ret == -ETIMEDOUT)
			VNAPI_INIT_LOG(ERR, "%s: no reply from the vhost-user back end at %s within %u ms",
				       info->name, vu->path, timeout_ms);
		else if (ret == -ECONNRESET)
			VNAPI_INIT_LOG(ERR, "%s: the vhost-user back end at %s closed the connection instead of replying",
				       info->name, vu->path);
		else
			VNAPI_INIT_LOG(ERR, "%s: reading the reply from %s failed: %s",
				       info->name, vu->path, strerror(-ret));
		goto drop;
	}

	ret = vnapi_vhost_user_check_reply(request, &reply,
		VNAPI_VU_HDR_SIZE + RTE_MIN((size_t)reply.hdr.size, VNAPI_VU_PAYLOAD_MAX),
		rx_fds, &v);
	if (ret < 0) {
		VNAPI_INIT_LOG(ERR, "%s: invalid reply from the vhost-user back end at %s",
			       info->name, vu->path);
		goto drop;
	}

	VNAPI_INIT_LOG(DEBUG, "vhost-user %s: reply to %s flags 0x%" PRIx32 " size %" PRIu32 " value 0x%" PRIx64,
		       vu->path, info->name, reply.hdr.flags, reply.hdr.size, v);
	if (info->reply == VNAPI_VU_REPLY_NONE && v != 0) {
		VNAPI_INIT_LOG(ERR, "%s: the vhost-user back end at %s rejected it (ack %" PRIu64 ")",
			       info->name, vu->path, v);
		return -EIO;
	}
	if (value != NULL)
		*value = v;
	return 0;

drop:
	/* The stream is out of step with the back end: no later request may use it. */
	vnapi_vhost_user_drop(vu);
	return ret;
}

static int
vnapi_vhost_user_get_u64(struct vnapi_vhost_user *vu, uint32_t request, uint64_t *out)
{
	struct vnapi_vhost_user_msg msg;

	vnapi_vhost_user_msg_init(&msg, request, 0);
	return vnapi_vhost_user_xfer(vu, &msg, NULL, 0, out);
}

static int
vnapi_vhost_user_set_u64(struct vnapi_vhost_user *vu, uint32_t request, uint64_t val)
{
	struct vnapi_vhost_user_msg msg;

	vnapi_vhost_user_msg_init(&msg, request, sizeof(msg.payload.u64));
	msg.payload.u64 = val;
	return vnapi_vhost_user_xfer(vu, &msg, NULL, 0, NULL);
}

static int
vnapi_vhost_user_set_state(struct vnapi_vhost_user *vu, uint32_t request,
			   unsigned int idx, unsigned int num)
{
	struct vnapi_vhost_user_msg msg;

	vnapi_vhost_user_msg_init(&msg, request, sizeof(msg.payload.state));
	msg.payload.state.index = idx;
	msg.payload.state.num = num;
	return vnapi_vhost_user_xfer(vu, &msg, NULL, 0, NULL);
}

static int
vnapi_vhost_user_set_file(struct vnapi_vhost_user *vu, uint32_t request,
			  unsigned int idx, int fd)
{
	struct vnapi_vhost_user_msg msg;

	if (idx > VHOST_USER_VRING_IDX_MASK) {
		VNAPI_INIT_LOG(ERR, "%s: vring index %u does not fit in 8 bits",
			       vnapi_vhost_user_request_name(request), idx);
		return -EINVAL;
	}
	if (fd < -1) {
		VNAPI_INIT_LOG(ERR, "%s: invalid fd %d for vring %u",
			       vnapi_vhost_user_request_name(request), fd, idx);
		return -EBADF;
	}
	vnapi_vhost_user_msg_init(&msg, request, sizeof(msg.payload.u64));
	msg.payload.u64 = idx;
	if (fd == -1)
		msg.payload.u64 |= VHOST_USER_VRING_NOFD;
	return vnapi_vhost_user_xfer(vu, &msg, fd == -1 ? NULL : &fd, fd == -1 ? 0 : 1, NULL);
}

int
vnapi_vhost_user_connect(struct vnapi_vhost_user *vu, const char *path,
			 unsigned int timeout_ms, unsigned int retry_ms)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint64_t start, deadline, now;
	bool waiting_logged = false;
	size_t plen;
	int fd, err;

	vu->sock = -1;
	vu->protocol_features = 0;
	vu->path[0] = '\0';
	vu->reply_timeout_ms = VNAPI_VHOST_USER_REPLY_TIMEOUT_MS;

	if (path == NULL || path[0] == '\0') {
		VNAPI_INIT_LOG(ERR, "no vhost-user socket path given");
		return -EINVAL;
	}
	plen = strlen(path);
	if (plen >= sizeof(sun.sun_path) || plen >= sizeof(vu->path)) {
		VNAPI_INIT_LOG(ERR, "vhost-user socket path is %zu bytes, the limit is %zu: %s",
			       plen, RTE_MIN(sizeof(sun.sun_path), sizeof(vu->path)) - 1, path);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, plen + 1);
	memcpy(vu->path, path, plen + 1);

	if (retry_ms == 0)
		retry_ms = 1;
	start = vnapi_now_ms();
	deadline = start + timeout_ms;
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			VNAPI_INIT_LOG(ERR, "cannot create a unix socket for %s: %s",
				       path, strerror(err));
			return -err;
		}
		if (connect(fd, (const struct sockaddr *)&sun, sizeof(sun)) == 0)
			break;
		err = errno;
		close(fd);

		now = vnapi_now_ms();
		if ((err != ENOENT && err != ECONNREFUSED && err != EAGAIN && err != EINTR) ||
		    now >= deadline) {
			if (err == EACCES || err == EPERM)
				VNAPI_INIT_LOG(ERR, "cannot connect to vhost-user socket %s: %s; check the permissions of %s and its directory",
					       path, strerror(err), path);
			else
				VNAPI_INIT_LOG(ERR, "cannot connect to vhost-user socket %s: %s (gave up after %" PRIu64 " ms); is the vhost-user back end running and listening on %s?",
					       path, strerror(err), now - start, path);
			return -err;
		}
		if (!waiting_logged) {
			VNAPI_INIT_LOG(NOTICE, "waiting up to %u ms for a vhost-user back end to listen on %s (%s)",
				       timeout_ms, path, strerror(err));
			waiting_logged = true;
		}
		if (err != EINTR)
			vnapi_vhost_user_sleep_ms(RTE_MIN((uint64_t)retry_ms, deadline - now));
	}

	vu->sock = fd;
	VNAPI_INIT_LOG(INFO, "connected to vhost-user back end at %s", path);
	return 0;
}

int
vnapi_vhost_user_try_connect(struct vnapi_vhost_user *vu, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t plen;
	int fd, err;

	vu->sock = -1;
	vu->protocol_features = 0;
	vu->reply_timeout_ms = VNAPI_VHOST_USER_REPLY_TIMEOUT_MS;
	plen = path != NULL ? strlen(path) : 0;
	if (plen == 0 || plen >= sizeof(sun.sun_path) || plen >= sizeof(vu->path))
		return vnapi_vhost_user_connect(vu, path, 0, 0); /* logs why */
	memcpy(sun.sun_path, path, plen + 1);
	memcpy(vu->path, path, plen + 1);
	/* Non-blocking: a back end whose backlog is full gives EAGAIN
	 * (retried later) instead of a wait; every later I/O on the socket
	 * is non-blocking anyway. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&sun, sizeof(sun)) != 0) {
		err = errno;
		close(fd);
		if (err != ENOENT && err != ECONNREFUSED && err != EAGAIN && err != EINTR)
			VNAPI_INIT_LOG(ERR, "cannot connect to vhost-user socket %s: %s",
				       path, strerror(err));
		return -err;
	}
	vu->sock = fd;
	VNAPI_INIT_LOG(INFO, "connected to vhost-user back end at %s", path);
	return 0;
}

int
vnapi_vhost_user_listen(const char *path, int *lfd)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	size_t plen;
	int fd, err;

	*lfd = -1;
	if (path == NULL || path[0] == '\0') {
		VNAPI_INIT_LOG(ERR, "no vhost-user socket path given");
		return -EINVAL;
	}
	plen = strlen(path);
	if (plen >= sizeof(sun.sun_path)) {
		VNAPI_INIT_LOG(ERR, "vhost-user socket path is %zu bytes, the limit is %zu: %s",
			       plen, sizeof(sun.sun_path) - 1, path);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, plen + 1);

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			VNAPI_INIT_LOG(ERR, "server mode: %s exists and is not a socket; refusing to replace it",
				       path);
			return -EEXIST;
		}
		if (st.st_uid != geteuid()) {
			VNAPI_INIT_LOG(ERR, "server mode: socket %s belongs to uid %u, not to us; refusing to replace it",
				       path, (unsigned int)st.st_uid);
			return -EEXIST;
		}
		/* Ours: live (someone accepts on it) or stale (left by a
		 * process that died)? A connect tells. */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (const struct sockaddr *)&sun, sizeof(sun)) == 0) {
			close(fd);
			VNAPI_INIT_LOG(ERR, "server mode: %s is a live socket (another process listens on it); refusing to take it over",
				       path);
			return -EADDRINUSE;
		}
		err = errno;
		close(fd);
		if (err != ECONNREFUSED) {
			VNAPI_INIT_LOG(ERR, "server mode: cannot tell whether %s is in use: %s",
				       path, strerror(err));
			return -err;
		}
		if (unlink(path) != 0 && errno != ENOENT) {
			err = errno;
			VNAPI_INIT_LOG(ERR, "server mode: cannot remove the stale socket %s: %s",
				       path, strerror(err));
			return -err;
		}
		VNAPI_INIT_LOG(NOTICE, "server mode: removed the stale socket %s", path);
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (const struct sockaddr *)&sun, sizeof(sun)) != 0 || listen(fd, 4) != 0) {
		err = errno;
		close(fd);
		VNAPI_INIT_LOG(ERR, "server mode: cannot listen on %s: %s", path, strerror(err));
		return -err;
	}
	VNAPI_INIT_LOG(INFO, "listening for a vhost-user back end on %s", path);
	*lfd = fd;
	return 0;
}

int
vnapi_vhost_user_accept(struct vnapi_vhost_user *vu, int lfd, const char *path)
{
	int fd;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -EAGAIN;
		return -errno;
	}
	vu->sock = fd;
	vu->protocol_features = 0;
	vu->reply_timeout_ms = VNAPI_VHOST_USER_REPLY_TIMEOUT_MS;
	snprintf(vu->path, sizeof(vu->path), "%s", path);
	VNAPI_INIT_LOG(INFO, "a vhost-user back end connected to %s", path);
	return 0;
}

void
vnapi_vhost_user_close(struct vnapi_vhost_user *vu)
{
	vnapi_vhost_user_drop(vu);
	vu->protocol_features = 0;
}

int
vnapi_vhost_user_poll_inbound(struct vnapi_vhost_user *vu, uint32_t *request, size_t *bytes,
			      unsigned int *nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_FDS)];
		struct cmsghdr align;
	} ctrl;
	uint8_t buf[VNAPI_VU_HDR_SIZE + VNAPI_VU_PAYLOAD_MAX];
	struct vnapi_vhost_user_hdr hdr;
	size_t total = 0;
	unsigned int fds = 0;
	int sock = vu->sock;

	*request = 0;
	*bytes = 0;
	*nfds = 0;
	if (sock < 0)
		return -ENOTCONN;
	/* Read everything queued (bounded: a few buffers' worth), closing any
	 * descriptor that came along. */
	for (;;) {
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctrl.buf,
			.msg_controllen = sizeof(ctrl.buf),
		};
		ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0)
			return total > 0 ? -EPROTO : -errno;
		fds += vnapi_vhost_user_drop_fds(&mh);
		if (n == 0) {
			if (total == 0 && fds == 0)
				return -ECONNRESET;
			break;
		}
		if (total == 0 && (size_t)n >= sizeof(hdr)) {
			memcpy(&hdr, buf, sizeof(hdr));
			*request = hdr.request;
		}
		total += (size_t)n;
		if (total >= 4 * sizeof(buf))
			break;
	}
	*bytes = total;
	*nfds = fds;
	return total > 0 || fds > 0 ? -EPROTO : 0;
}

bool
vnapi_vhost_user_peer_gone(const struct vnapi_vhost_user *vu)
{
	int sock = __atomic_load_n(&vu->sock, __ATOMIC_RELAXED);
	ssize_t n;
	char c;

	if (sock < 0)
		return true;
	n = recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return true;
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		return true;
	return false;
}

int
vnapi_vhost_user_get_features(struct vnapi_vhost_user *vu, uint64_t *features)
{
	return vnapi_vhost_user_get_u64(vu, VHOST_USER_GET_FEATURES, features);
}

int
vnapi_vhost_user_set_features(struct vnapi_vhost_user *vu, uint64_t features)
{
	return vnapi_vhost_user_set_u64(vu, VHOST_USER_SET_FEATURES, features);
}

int
vnapi_vhost_user_get_protocol_features(struct vnapi_vhost_user *vu, uint64_t *features)
{
	return vnapi_vhost_user_get_u64(vu, VHOST_USER_GET_PROTOCOL_FEATURES, features);
}

int
vnapi_vhost_user_set_protocol_features(struct vnapi_vhost_user *vu, uint64_t features)
{
	int ret;

	ret = vnapi_vhost_user_set_u64(vu, VHOST_USER_SET_PROTOCOL_FEATURES, features);
	if (ret == 0)
		vu->protocol_features = features;
	return ret;
}

int
vnapi_vhost_user_set_owner(struct vnapi_vhost_user *vu)
{
	struct vnapi_vhost_user_msg msg;

	vnapi_vhost_user_msg_init(&msg, VHOST_USER_SET_OWNER, 0);
	return vnapi_vhost_user_xfer(vu, &msg, NULL, 0, NULL);
}

int
vnapi_vhost_user_get_queue_num(struct vnapi_vhost_user *vu, uint64_t *num)
{
	return vnapi_vhost_user_get_u64(vu, VHOST_USER_GET_QUEUE_NUM, num);
}

int
vnapi_vhost_user_set_mem_table(struct vnapi_vhost_user *vu,
			       const struct vnapi_vhost_user_region *regions, unsigned int n)
{
	struct vnapi_vhost_user_msg msg;
	int fds[VHOST_USER_MAX_MEM_REGIONS];
	unsigned int i;

	if (n > VHOST_USER_MAX_MEM_REGIONS) {
		VNAPI_INIT_LOG(ERR, "SET_MEM_TABLE: %u memory regions, vhost-user allows at most %d",
			       n, VHOST_USER_MAX_MEM_REGIONS);
		return -E2BIG;
	}
	if (n > 0 && regions == NULL)
		return -EINVAL;

	vnapi_vhost_user_msg_init(&msg, VHOST_USER_SET_MEM_TABLE,
		offsetof(struct vnapi_vhost_user_memory, regions) +
		n * sizeof(struct vnapi_vhost_user_mem_region));
	msg.payload.memory.nregions = n;
	for (i = 0; i < n; i++) {
		struct vnapi_vhost_user_mem_region *r = &msg.payload.memory.regions[i];

		if (regions[i].fd < 0) {
			VNAPI_INIT_LOG(ERR, "SET_MEM_TABLE: region %u has no fd", i);
			return -EBADF;
		}
		r->guest_phys_addr = regions[i].guest_phys_addr;
		r->memory_size = regions[i].memory_size;
		r->userspace_addr = regions[i].userspace_addr;
		r->mmap_offset = regions[i].mmap_offset;
		fds[i] = regions[i].fd;
	}
	return vnapi_vhost_user_xfer(vu, &msg, fds, n, NULL);
}

int
vnapi_vhost_user_set_vring_num(struct vnapi_vhost_user *vu, unsigned int idx, unsigned int num)
{
	return vnapi_vhost_user_set_state(vu, VHOST_USER_SET_VRING_NUM, idx, num);
}

int
vnapi_vhost_user_set_vring_base(struct vnapi_vhost_user *vu, unsigned int idx, unsigned int base)
{
	return vnapi_vhost_user_set_state(vu, VHOST_USER_SET_VRING_BASE, idx, base);
}

int
vnapi_vhost_user_get_vring_base(struct vnapi_vhost_user *vu, unsigned int idx, unsigned int *base)
{
	struct vnapi_vhost_user_msg msg;
	uint64_t v;
	int ret;

	vnapi_vhost_user_msg_init(&msg, VHOST_USER_GET_VRING_BASE, sizeof(msg.payload.state));
	msg.payload.state.index = idx;
	ret = vnapi_vhost_user_xfer(vu, &msg, NULL, 0, &v);
	if (ret < 0)
		return ret;
	if ((v >> 32) != idx) {
		VNAPI_INIT_LOG(ERR, "GET_VRING_BASE: asked for vring %u, the back end at %s answered for vring %" PRIu64,
			       idx, vu->path, v >> 32);
		vnapi_vhost_user_drop(vu);
		return -EPROTO;
	}
	if (base != NULL)
		*base = (uint32_t)v;
	return 0;
}

int
vnapi_vhost_user_set_vring_addr(struct vnapi_vhost_user *vu, unsigned int idx,
				uint64_t desc, uint64_t used, uint64_t avail, uint64_t log,
				unsigned int flags)
{
	struct vnapi_vhost_user_msg msg;

	vnapi_vhost_user_msg_init(&msg, VHOST_USER_SET_VRING_ADDR, sizeof(msg.payload.addr));
	msg.payload.addr.index = idx;
	msg.payload.addr.flags = flags;
	msg.payload.addr.desc = desc;
	msg.payload.addr.used = used;
	msg.payload.addr.avail = avail;
	msg.payload.addr.log = log;
	return vnapi_vhost_user_xfer(vu, &msg, NULL, 0, NULL);
}

int
vnapi_vhost_user_set_vring_kick(struct vnapi_vhost_user *vu, unsigned int idx, int fd)
{
	return vnapi_vhost_user_set_file(vu, VHOST_USER_SET_VRING_KICK, idx, fd);
}

int
vnapi_vhost_user_set_vring_call(struct vnapi_vhost_user *vu, unsigned int idx, int fd)
{
	return vnapi_vhost_user_set_file(vu, VHOST_USER_SET_VRING_CALL, idx, fd);
}

int
vnapi_vhost_user_set_vring_enable(struct vnapi_vhost_user *vu, unsigned int idx, bool enable)
{
	return vnapi_vhost_user_set_state(vu, VHOST_USER_SET_VRING_ENABLE, idx, enable ? 1 : 0);
}

int
vnapi_vhost_user_set_status(struct vnapi_vhost_user *vu, uint8_t status)
{
	return vnapi_vhost_user_set_u64(vu, VHOST_USER_SET_STATUS, status);
}

int
vnapi_vhost_user_get_status(struct vnapi_vhost_user *vu, uint8_t *status)
{
	uint64_t v;
	int ret;

	ret = vnapi_vhost_user_get_u64(vu, VHOST_USER_GET_STATUS, &v);
	if (ret < 0)
		return ret;
	if (v > UINT8_MAX) {
		VNAPI_INIT_LOG(ERR, "GET_STATUS: status 0x%" PRIx64 " from %s does not fit in 8 bits",
			       v, vu->path);
		vnapi_vhost_user_drop(vu);
		return -EPROTO;
	}
	if (status != NULL)
		*status = (uint8_t)v;
	return 0;
}
