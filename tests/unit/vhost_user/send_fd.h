/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_TEST_SEND_FD_H_
#define _VNAPI_TEST_SEND_FD_H_

/*
 * The back-end side of a vhost-user connection in tests: one sendmsg() of
 * bytes with, when fd >= 0, that descriptor as SCM_RIGHTS. Shared by the
 * unit tests' fake back end and the inbound fuzz target.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* sendmsg()'s result (retried on EINTR); MSG_NOSIGNAL: a gone peer is -1/EPIPE. */
static inline ssize_t
send_with_fd(int sock, const void *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctrl, 0, sizeof(ctrl));
		mh.msg_control = ctrl.buf;
		mh.msg_controllen = sizeof(ctrl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n;
}

#endif /* _VNAPI_TEST_SEND_FD_H_ */
