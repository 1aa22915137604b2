/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _FAKE_BACKEND_H_
#define _FAKE_BACKEND_H_

/**
 * @file
 * A fake vhost-user back end for the front end's unit tests: one thread
 * listening on a unix socket in a fresh temporary directory, serving one
 * connection at a time. It answers like a real back end (features, protocol
 * features, queue count, vring bases, status; acks when NEED_REPLY is set),
 * records every request with its payload and descriptors, checks what the
 * front end sends (see fake_backend_violations()), and injects one fault per
 * request code.
 *
 * It is written from the vhost-user specification, independently of the
 * driver's codec, so that the two check each other.
 *
 * @note Thread safety: every function may be called from the test thread
 * while the back-end thread runs.
 */

#include <stddef.h>
#include <stdint.h>

#define FB_MAX_REQUEST   64  /**< Request codes below this can get a fault. */
#define FB_MAX_RECORDS   64  /**< Requests recorded in full. */
#define FB_PAYLOAD_MAX  264  /**< Largest request payload (memory table). */
#define FB_MAX_FDS        8

/** What the back end does with a request. */
enum fb_fault {
	FB_OK = 0,        /**< Answer as a real back end does. */
	FB_DISCONNECT,    /**< Close the connection instead of answering. */
	FB_NO_ANSWER,     /**< Read the request and never answer it. */
	/* The rest apply only when a reply (or an ack) is due. */
	FB_BAD_SIZE,      /**< Payload of 4 bytes, size field 4. */
	FB_OVERSIZE,      /**< Size field 4096, header only. */
	FB_WRONG_REQUEST, /**< Request field of another request. */
	FB_NO_REPLY_FLAG, /**< Flags: version 1 without the REPLY bit. */
	FB_BAD_VERSION,   /**< Flags: version 2 with the REPLY bit. */
	FB_EXTRA_FD,      /**< An eventfd attached to the reply. */
	FB_NACK,          /**< Ack (or u64 value) of 1. */
	FB_TRUNCATED,     /**< Size field 8, 4 payload bytes, then close. */
	FB_WRONG_INDEX,   /**< STATE reply naming vring index + 1. */
	/* These answer normally, then write more (any request). */
	FB_UNSOLICITED,    /**< Then a 20-byte message nobody asked for. */
	FB_UNSOLICITED_FD, /**< Then a 20-byte message carrying an eventfd. */
	FB_LATE_DUPLICATE, /**< Then the same reply again (a late reply). */
	FB_FAULT_COUNT,
};

/** Name of a fault, for test names. */
const char *fb_fault_name(enum fb_fault f);

struct fb_config {
	uint64_t features;           /**< GET_FEATURES answer. */
	uint64_t protocol_features;  /**< GET_PROTOCOL_FEATURES answer. */
	uint64_t queue_num;          /**< GET_QUEUE_NUM answer. */
	unsigned int listen_delay_ms; /**< Bind and listen only after this. */
	enum fb_fault faults[FB_MAX_REQUEST];
};

/** One request as received. */
struct fb_record {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
	uint8_t payload[FB_PAYLOAD_MAX];
	unsigned int nfds;
	/** Received descriptors: the back end keeps them open until destroy. */
	int fds[FB_MAX_FDS];
};

struct fake_backend;

/** Start a back end; NULL on failure (with a "# " diagnostic on stdout). */
struct fake_backend *fake_backend_start(const struct fb_config *cfg);

/** Stop the thread, close every descriptor, remove the socket and its directory. */
void fake_backend_destroy(struct fake_backend *fb);

/** The socket path. */
const char *fake_backend_path(const struct fake_backend *fb);

/** Change the fault for one request code (takes effect on the next request). */
void fake_backend_set_fault(struct fake_backend *fb, uint32_t request, enum fb_fault f);

/** Wait until at least @p n requests have been received; returns the count. */
unsigned int fake_backend_wait(struct fake_backend *fb, unsigned int n, unsigned int timeout_ms);

/** Copy record @p i; -1 if there is none. */
int fake_backend_record(struct fake_backend *fb, unsigned int i, struct fb_record *out);

/**
 * Write a 20-byte message (request field @p request, a u64 payload) on the
 * current connection now, outside any request, with an eventfd attached if
 * @p with_fd. @return 0, or -1 if no connection is open.
 */
int fake_backend_send_unsolicited(struct fake_backend *fb, uint32_t request, int with_fd);

/** Close the current connection now (returns once it is closed). */
void fake_backend_drop(struct fake_backend *fb);

/**
 * Protocol violations seen in what the front end sent (bad version, payload
 * size, descriptor count, NEED_REPLY without REPLY_ACK or on a request that
 * has its own reply). @p what receives the last one's description.
 */
unsigned int fake_backend_violations(struct fake_backend *fb, char *what, size_t len);

#endif /* _FAKE_BACKEND_H_ */
