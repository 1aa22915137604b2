/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_VHOST_USER_H_
#define _VNAPI_VHOST_USER_H_

/**
 * @file
 * @internal
 * The front-end (driver) side of the vhost-user protocol over a unix socket,
 * as the client (vnapi connects) or the server (vnapi listens and accepts). Synchronous request/reply; every reply is validated (size,
 * request code, flags, fd count) before its payload is used.
 *
 * The message codec (vnapi_vhost_user_check_reply()) is a pure function so
 * that it can be fuzzed without a socket.
 *
 * @note Thread safety: none. The control path (probe, start, stop, close)
 * owns the connection; the EAL interrupt thread reads what arrives outside a
 * request (vnapi_vhost_user_poll_inbound()) only while no request runs.
 * Before each request, bytes already waiting on the socket are a protocol
 * violation (-EPROTO, connection closed).
 *
 * Errors of the request functions: 0 on success, or
 * - -ENOTCONN: not connected (never connected, or closed after an error);
 * - -EINVAL / -E2BIG / -EBADF: a bad argument, nothing was sent;
 * - -EPIPE / -ECONNRESET: the back end closed the connection or it failed;
 * - -ETIMEDOUT: no complete reply within reply_timeout_ms;
 * - -EPROTO: the reply failed validation (vnapi_vhost_user_check_reply());
 * - -EIO: the back end answered a REPLY_ACK request with a non-zero ack.
 * After -EPIPE, -ECONNRESET, -ETIMEDOUT or -EPROTO the stream is no longer in
 * step with the back end (a late or partial reply may still be queued), so
 * the connection is closed (sock == -1) and later requests get -ENOTCONN.
 * Every error is logged with the request name and the socket path.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include "vnapi_features.h"   /* VHOST_USER_F_PROTOCOL_FEATURES */

/* Protocol features (VHOST_USER_GET_PROTOCOL_FEATURES bits). */
#define VHOST_USER_PROTOCOL_F_MQ         0
#define VHOST_USER_PROTOCOL_F_REPLY_ACK  3
#define VHOST_USER_PROTOCOL_F_STATUS    16

#define VHOST_USER_MAX_MEM_REGIONS 8
#define VHOST_USER_MAX_FDS         8

/** Default bound on the wait for a reply (and for a blocked send). */
#define VNAPI_VHOST_USER_REPLY_TIMEOUT_MS 5000

/**
 * The requests we send: X(name, code, reply), where reply is
 * NONE (no reply; an ack when REPLY_ACK is negotiated), U64, STATE (vring
 * state) or MEM (none yet). One list makes the enum, the names and the
 * expected-reply table.
 */
#define VNAPI_VHOST_USER_REQUESTS(X) \
	X(GET_FEATURES,           1, U64) \
	X(SET_FEATURES,           2, NONE) \
	X(SET_OWNER,              3, NONE) \
	X(RESET_OWNER,            4, NONE) \
	X(SET_MEM_TABLE,          5, NONE) \
	X(SET_VRING_NUM,          8, NONE) \
	X(SET_VRING_ADDR,         9, NONE) \
	X(SET_VRING_BASE,        10, NONE) \
	X(GET_VRING_BASE,        11, STATE) \
	X(SET_VRING_KICK,        12, NONE) \
	X(SET_VRING_CALL,        13, NONE) \
	X(GET_PROTOCOL_FEATURES, 15, U64) \
	X(SET_PROTOCOL_FEATURES, 16, NONE) \
	X(GET_QUEUE_NUM,         17, U64) \
	X(SET_VRING_ENABLE,      18, NONE) \
	X(SET_STATUS,            39, NONE) \
	X(GET_STATUS,            40, U64)

enum vnapi_vhost_user_request {
#define VNAPI_VHOST_USER_ENUM(name, code, reply) VHOST_USER_ ## name = code,
	VNAPI_VHOST_USER_REQUESTS(VNAPI_VHOST_USER_ENUM)
#undef VNAPI_VHOST_USER_ENUM
};

/** Name of a request code ("GET_FEATURES"), or "UNKNOWN". */
const char *vnapi_vhost_user_request_name(uint32_t request);

/** One memory region of SET_MEM_TABLE. */
struct vnapi_vhost_user_region {
	uint64_t guest_phys_addr; /**< We use our virtual address. */
	uint64_t memory_size;
	uint64_t userspace_addr;  /**< Our virtual address. */
	uint64_t mmap_offset;     /**< Offset of the region in @ref fd. */
	int fd;
};

/** A connection to a vhost-user back end. */
struct vnapi_vhost_user {
	int sock;                 /**< -1 when not connected. */
	uint64_t protocol_features; /**< Negotiated (acked) protocol features. */
	char path[sizeof(((struct sockaddr_un *)NULL)->sun_path)];
	/**
	 * Bound on one request's send and reply, in ms. Set to
	 * VNAPI_VHOST_USER_REPLY_TIMEOUT_MS by vnapi_vhost_user_connect();
	 * may be changed afterwards (tests use a short one). 0: the default.
	 */
	unsigned int reply_timeout_ms;
};

/**
 * From now on the calling thread's requests (their send and the wait for
 * their reply) also end, with -ECANCELED and the connection dropped, when
 * @p fd (an eventfd; -1: none, the default) is readable. Per thread: the
 * driver's connection thread sets it, so that an ethdev op can cut a
 * handshake with a slow back end short (vnapi_conn.c).
 */
void vnapi_vhost_user_cancel_fd_set(int fd);

/**
 * Connect to the back end's socket, retrying every @p retry_ms (0: 1 ms)
 * for up to @p timeout_ms (0: one attempt) while the socket is missing
 * (ENOENT) or nobody listens on it (ECONNREFUSED). Initialises every field
 * of @p vu; a connection already open in it is not closed (call
 * vnapi_vhost_user_close() first). The socket is SOCK_CLOEXEC.
 * @return 0; -EINVAL (no path); -ENAMETOOLONG (longer than sun_path);
 * otherwise the last connect() error, e.g. -ENOENT or -ECONNREFUSED when
 * the time ran out, -EACCES at once; each with a log line naming the path
 * and what to check.
 */
int vnapi_vhost_user_connect(struct vnapi_vhost_user *vu, const char *path,
			     unsigned int timeout_ms, unsigned int retry_ms);

/**
 * One connection attempt, quiet when the back end is not there (yet):
 * -ENOENT and -ECONNREFUSED are returned without a log line (reconnection
 * retries; the caller logs once). Initialises @p vu as
 * vnapi_vhost_user_connect() does.
 */
int vnapi_vhost_user_try_connect(struct vnapi_vhost_user *vu, const char *path);

/**
 * Server mode: listen on @p path (non-blocking, SOCK_CLOEXEC). A socket file
 * already there is removed only if it is ours (same uid) and stale (a
 * connect is refused); a live socket gives -EADDRINUSE, anything else at
 * the path (a file, someone else's socket) -EEXIST. Each failure is logged.
 * @param lfd receives the listening socket.
 */
int vnapi_vhost_user_listen(const char *path, int *lfd);

/**
 * Server mode: take one pending connection from @p lfd into @p vu
 * (initialising it as vnapi_vhost_user_connect() does).
 * @return 0; -EAGAIN when none is pending; another -errno on failure.
 */
int vnapi_vhost_user_accept(struct vnapi_vhost_user *vu, int lfd, const char *path);

/**
 * Read whatever the back end wrote outside a request, without blocking
 * (the back end never writes unsolicited on this socket: anything read is a
 * protocol violation). Descriptors that came along are closed.
 * @param request receives the request field of the first message (0 if
 *   fewer than a header's bytes came).
 * @param bytes, nfds receive how much was read.
 * @return 0 nothing pending; -EPROTO something was read (the caller drops
 *   the connection); -ECONNRESET the back end closed it; -ENOTCONN not
 *   connected; another -errno on a socket error.
 */
int vnapi_vhost_user_poll_inbound(struct vnapi_vhost_user *vu, uint32_t *request,
				  size_t *bytes, unsigned int *nfds);

/** Close the connection (idempotent). */
void vnapi_vhost_user_close(struct vnapi_vhost_user *vu);

/**
 * Disconnect check, safe from the interrupt thread: a non-blocking peek.
 * @return true if the peer closed the socket or it failed.
 */
bool vnapi_vhost_user_peer_gone(const struct vnapi_vhost_user *vu);

int vnapi_vhost_user_get_features(struct vnapi_vhost_user *vu, uint64_t *features);
int vnapi_vhost_user_set_features(struct vnapi_vhost_user *vu, uint64_t features);
int vnapi_vhost_user_get_protocol_features(struct vnapi_vhost_user *vu, uint64_t *features);
/**
 * Also records @p features as vu->protocol_features: REPLY_ACK use starts
 * with the next request. This message itself never asks for an ack: the
 * back end may handle NEED_REPLY before or after it applies the new
 * features, so an ack may or may not come.
 */
int vnapi_vhost_user_set_protocol_features(struct vnapi_vhost_user *vu, uint64_t features);
int vnapi_vhost_user_set_owner(struct vnapi_vhost_user *vu);
int vnapi_vhost_user_get_queue_num(struct vnapi_vhost_user *vu, uint64_t *num);
/** @return -E2BIG if @p n exceeds VHOST_USER_MAX_MEM_REGIONS. */
int vnapi_vhost_user_set_mem_table(struct vnapi_vhost_user *vu,
				   const struct vnapi_vhost_user_region *regions, unsigned int n);
int vnapi_vhost_user_set_vring_num(struct vnapi_vhost_user *vu, unsigned int idx, unsigned int num);
int vnapi_vhost_user_set_vring_base(struct vnapi_vhost_user *vu, unsigned int idx, unsigned int base);
/** @return -EPROTO also if the reply names another vring than @p idx. */
int vnapi_vhost_user_get_vring_base(struct vnapi_vhost_user *vu, unsigned int idx, unsigned int *base);
int vnapi_vhost_user_set_vring_addr(struct vnapi_vhost_user *vu, unsigned int idx,
				    uint64_t desc, uint64_t used, uint64_t avail, uint64_t log,
				    unsigned int flags);
/**
 * @param idx vring index, at most 255 (-EINVAL otherwise).
 * @param fd the eventfd we write to kick; -1 sends the "no fd" (polling) flag.
 */
int vnapi_vhost_user_set_vring_kick(struct vnapi_vhost_user *vu, unsigned int idx, int fd);
/**
 * @param idx vring index, at most 255 (-EINVAL otherwise).
 * @param fd the eventfd the back end writes; -1 sends the "no fd" flag.
 */
int vnapi_vhost_user_set_vring_call(struct vnapi_vhost_user *vu, unsigned int idx, int fd);
int vnapi_vhost_user_set_vring_enable(struct vnapi_vhost_user *vu, unsigned int idx, bool enable);
int vnapi_vhost_user_set_status(struct vnapi_vhost_user *vu, uint8_t status);
int vnapi_vhost_user_get_status(struct vnapi_vhost_user *vu, uint8_t *status);

/**
 * Validate a reply (pure: no socket, no state), the only door through which
 * back-end bytes reach the rest of the driver.
 * @param request the request we sent.
 * @param buf the bytes received (header then payload), @p len of them.
 * @param nfds file descriptors received with it.
 * @param value receives the u64 (U64 replies, acks) or, for STATE replies,
 * ((uint64_t)index << 32) | num: the caller checks the index. May be NULL.
 * For requests with no reply of their own (NONE) the reply checked is the
 * REPLY_ACK ack (an 8-byte u64; the caller decides what non-zero means).
 * @return 0 if valid; -EPROTO with a log line naming the field otherwise;
 * -EINVAL if @p request is not one of VNAPI_VHOST_USER_REQUESTS.
 */
int vnapi_vhost_user_check_reply(uint32_t request, const void *buf, size_t len,
				 unsigned int nfds, uint64_t *value);

#endif /* _VNAPI_VHOST_USER_H_ */
