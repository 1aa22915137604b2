/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Unit tests of the vhost-user front end against a fake back end (TAP).
 * Every case also checks that it leaves no descriptor open.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_log.h>

#include "vnapi_time.h"
#include "vnapi_vhost_user.h"
#include "unit_check.h"
#include "unit_tap.h"

#include "fake_backend.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define FLAG_VERSION    0x1u
#define FLAG_REPLY      (1u << 2)
#define FLAG_NEED_REPLY (1u << 3)
#define NOFD            (1u << 8)
#define BIT(n)          (UINT64_C(1) << (n))

/* Short reply timeout: the no-answer cases wait for it. */
#define TEST_REPLY_TIMEOUT_MS 300

static int
count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static bool
no_violations(struct fake_backend *fb)
{
	char what[160];
	unsigned int n = fake_backend_violations(fb, what, sizeof(what));

	if (n != 0)
		printf("#   back end saw %u protocol violations, last: %s\n", n, what);
	return n == 0;
}

/* Start a back end and connect to it; with @p ack, negotiate REPLY_ACK. */
static struct fake_backend *
setup(struct vnapi_vhost_user *vu, const struct fb_config *cfg, bool ack)
{
	struct fake_backend *fb = fake_backend_start(cfg);
	uint64_t pf;

	if (fb == NULL)
		return NULL;
	if (vnapi_vhost_user_connect(vu, fake_backend_path(fb), 1000, 10) != 0)
		goto fail;
	vu->reply_timeout_ms = TEST_REPLY_TIMEOUT_MS;
	if (ack) {
		if (vnapi_vhost_user_get_protocol_features(vu, &pf) != 0 ||
		    !(pf & BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK)) ||
		    vnapi_vhost_user_set_protocol_features(vu,
				BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK)) != 0)
			goto fail;
	}
	return fb;
fail:
	printf("#   setup failed\n");
	vnapi_vhost_user_close(vu);
	fake_backend_destroy(fb);
	return NULL;
}

/*
 * A case on a connected front end: the back end it starts, whether REPLY_ACK
 * is negotiated, the script that drives and checks, and the script's argument.
 */
struct on_backend {
	struct fb_config cfg;
	bool ack;
	int (*script)(struct vnapi_vhost_user *vu, struct fake_backend *fb,
		      const struct on_backend *ob);
	const void *arg;
};

/* Start ob's back end, connect, run ob's script, close both. */
static int
run_on_backend(const void *arg)
{
	const struct on_backend *ob = arg;
	struct vnapi_vhost_user vu = { .sock = -1 };
	struct fake_backend *fb;
	int rc = -1;

	fb = setup(&vu, &ob->cfg, ob->ack);
	CHECK(fb != NULL);
	rc = ob->script(&vu, fb, ob);
teardown:
	vnapi_vhost_user_close(&vu);
	fake_backend_destroy(fb);
	return rc;
}

/* ---- request names ---- */

static int
test_request_names(const void *arg)
{
	(void)arg;
	EXPECT(strcmp(vnapi_vhost_user_request_name(VHOST_USER_GET_FEATURES), "GET_FEATURES") == 0);
	EXPECT(strcmp(vnapi_vhost_user_request_name(VHOST_USER_SET_VRING_KICK), "SET_VRING_KICK") == 0);
	EXPECT(strcmp(vnapi_vhost_user_request_name(VHOST_USER_GET_STATUS), "GET_STATUS") == 0);
	EXPECT(strcmp(vnapi_vhost_user_request_name(0), "UNKNOWN") == 0);
	EXPECT(strcmp(vnapi_vhost_user_request_name(6), "UNKNOWN") == 0);
	EXPECT(strcmp(vnapi_vhost_user_request_name(41), "UNKNOWN") == 0);
	EXPECT(strcmp(vnapi_vhost_user_request_name(UINT32_MAX), "UNKNOWN") == 0);
	return 0;
}

/* ---- check_reply over hand-made buffers ---- */

/* Payload bytes of every case: as a u64 and as {index 0x1234, num 3}. */
#define CR_U64   UINT64_C(0x0000000300001234)
#define CR_STATE ((UINT64_C(0x1234) << 32) | 3)

struct cr_case {
	const char *name;
	uint32_t request;   /* what we sent */
	uint32_t hreq;      /* request field of the reply */
	uint32_t flags;
	uint32_t size;      /* size field */
	size_t len;         /* bytes handed to check_reply */
	unsigned int nfds;
	int expect;
	uint64_t value;
	bool null_buf;
};

#define OKF (FLAG_VERSION | FLAG_REPLY)

static const struct cr_case cr_cases[] = {
	{ "u64 reply", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 20, 0, 0, CR_U64, false },
	{ "GET_QUEUE_NUM reply", VHOST_USER_GET_QUEUE_NUM, VHOST_USER_GET_QUEUE_NUM, OKF, 8, 20, 0, 0, CR_U64, false },
	{ "ack of a no-reply request", VHOST_USER_SET_OWNER, VHOST_USER_SET_OWNER, OKF, 8, 20, 0, 0, CR_U64, false },
	{ "state reply packs index and num", VHOST_USER_GET_VRING_BASE, VHOST_USER_GET_VRING_BASE, OKF, 8, 20, 0, 0, CR_STATE, false },
	{ "NEED_REPLY echoed in a reply is tolerated", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF | FLAG_NEED_REPLY, 8, 20, 0, 0, CR_U64, false },
	{ "NULL buffer", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 20, 0, -EPROTO, 0, true },
	{ "empty buffer", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 0, 0, -EPROTO, 0, false },
	{ "short header (11 bytes)", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 11, 0, -EPROTO, 0, false },
	{ "header only, size 8", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 12, 0, -EPROTO, 0, false },
	{ "truncated payload (4 of 8)", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 16, 0, -EPROTO, 0, false },
	{ "trailing bytes after payload", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 24, 0, -EPROTO, 0, false },
	{ "size 4 for a u64", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 4, 16, 0, -EPROTO, 0, false },
	{ "size 0 for a u64", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 0, 12, 0, -EPROTO, 0, false },
	{ "size 16 for a state", VHOST_USER_GET_VRING_BASE, VHOST_USER_GET_VRING_BASE, OKF, 16, 28, 0, -EPROTO, 0, false },
	{ "size 264 (max payload) for an ack", VHOST_USER_SET_OWNER, VHOST_USER_SET_OWNER, OKF, 264, 276, 0, -EPROTO, 0, false },
	{ "oversize 265", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 265, 277, 0, -EPROTO, 0, false },
	{ "size 0xffffffff", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, UINT32_MAX, 20, 0, -EPROTO, 0, false },
	{ "wrong request code", VHOST_USER_GET_FEATURES, VHOST_USER_GET_PROTOCOL_FEATURES, OKF, 8, 20, 0, -EPROTO, 0, false },
	{ "request code 0", VHOST_USER_GET_FEATURES, 0, OKF, 8, 20, 0, -EPROTO, 0, false },
	{ "REPLY flag missing", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, FLAG_VERSION, 8, 20, 0, -EPROTO, 0, false },
	{ "version 0", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, FLAG_REPLY, 8, 20, 0, -EPROTO, 0, false },
	{ "version 2", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, 0x2 | FLAG_REPLY, 8, 20, 0, -EPROTO, 0, false },
	{ "version 3", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, 0x3 | FLAG_REPLY, 8, 20, 0, -EPROTO, 0, false },
	{ "one fd with the reply", VHOST_USER_GET_FEATURES, VHOST_USER_GET_FEATURES, OKF, 8, 20, 1, -EPROTO, 0, false },
	{ "eight fds with an ack", VHOST_USER_SET_MEM_TABLE, VHOST_USER_SET_MEM_TABLE, OKF, 8, 20, 8, -EPROTO, 0, false },
	{ "unknown request 0", 0, 0, OKF, 8, 20, 0, -EINVAL, 0, false },
	{ "unknown request 6 (SET_LOG_BASE)", 6, 6, OKF, 8, 20, 0, -EINVAL, 0, false },
	{ "unknown request 1000", 1000, 1000, OKF, 8, 20, 0, -EINVAL, 0, false },
};

static int
test_check_reply(const void *arg)
{
	const struct cr_case *c = arg;
	uint8_t buf[300];
	uint64_t v = UINT64_C(0xdeadbeef), payload = CR_U64;
	int ret;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &c->hreq, 4);
	memcpy(buf + 4, &c->flags, 4);
	memcpy(buf + 8, &c->size, 4);
	memcpy(buf + 12, &payload, 8);
	ret = vnapi_vhost_user_check_reply(c->request, c->null_buf ? NULL : buf, c->len,
					   c->nfds, &v);
	EXPECT_EQ(ret, c->expect);
	if (ret == 0) {
		EXPECT_EQ(v, c->value);
		/* value is optional */
		EXPECT_EQ(vnapi_vhost_user_check_reply(c->request, buf, c->len, c->nfds, NULL), 0);
	} else {
		EXPECT_EQ(v, UINT64_C(0xdeadbeef));
	}
	return 0;
}

/* ---- the negotiation a driver does ---- */

struct expect {
	uint32_t request;
	uint32_t size;
	unsigned int nfds;
	uint8_t payload[FB_PAYLOAD_MAX];
};

struct expect_list {
	struct expect e[FB_MAX_RECORDS];
	unsigned int n;
};

static void
expect_push(struct expect_list *l, uint32_t request, uint32_t size, const void *payload,
	    unsigned int nfds)
{
	struct expect *e = &l->e[l->n++];

	memset(e, 0, sizeof(*e));
	e->request = request;
	e->size = size;
	e->nfds = nfds;
	if (size > 0)
		memcpy(e->payload, payload, size);
}

static void
expect_u64(struct expect_list *l, uint32_t request, uint64_t v)
{
	expect_push(l, request, 8, &v, 0);
}

static void
expect_state(struct expect_list *l, uint32_t request, uint32_t index, uint32_t num)
{
	uint32_t s[2] = { index, num };

	expect_push(l, request, 8, s, 0);
}

static bool
has_own_reply(uint32_t request)
{
	return request == VHOST_USER_GET_FEATURES || request == VHOST_USER_GET_PROTOCOL_FEATURES ||
		request == VHOST_USER_GET_QUEUE_NUM || request == VHOST_USER_GET_VRING_BASE ||
		request == VHOST_USER_GET_STATUS;
}

#define MEM_SIZE (64 * 1024)
#define NQUEUES 2

static int
test_negotiation(const void *arg)
{
	const bool ack = *(const bool *)arg;
	const uint64_t features = BIT(32) | BIT(VHOST_USER_F_PROTOCOL_FEATURES) | BIT(15) | BIT(5);
	const uint64_t pf_offered = BIT(VHOST_USER_PROTOCOL_F_MQ) | BIT(VHOST_USER_PROTOCOL_F_STATUS) |
		BIT(1) | (ack ? BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) : 0);
	const uint64_t pf_wanted = BIT(VHOST_USER_PROTOCOL_F_MQ) | BIT(VHOST_USER_PROTOCOL_F_STATUS) |
		BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK);
	struct fb_config cfg = {
		.features = features,
		.protocol_features = pf_offered,
		.queue_num = NQUEUES,
	};
	struct vnapi_vhost_user vu = { .sock = -1 };
	struct vnapi_vhost_user_region regions[2];
	struct expect_list *exp = calloc(1, sizeof(*exp));
	struct fake_backend *fb = NULL;
	int memfd[2] = { -1, -1 }, kickfd[NQUEUES] = { -1, -1 }, callfd[NQUEUES] = { -1, -1 };
	uint8_t *map[2] = { NULL, NULL };
	uint8_t memtab[8 + 2 * 32];
	uint64_t v, pf;
	unsigned int q, i, base;
	uint8_t status;
	int rc = -1;

	CHECK(exp != NULL);
	fb = fake_backend_start(&cfg);
	CHECK(fb != NULL);
	CHECK_EQ(vnapi_vhost_user_connect(&vu, fake_backend_path(fb), 1000, 10), 0);
	CHECK(vu.sock >= 0);
	CHECK(fcntl(vu.sock, F_GETFD) & FD_CLOEXEC);
	CHECK(strcmp(vu.path, fake_backend_path(fb)) == 0);
	vu.reply_timeout_ms = 2000;

	CHECK_EQ(vnapi_vhost_user_get_features(&vu, &v), 0);
	CHECK_EQ(v, features);
	expect_push(exp, VHOST_USER_GET_FEATURES, 0, NULL, 0);

	CHECK_EQ(vnapi_vhost_user_set_owner(&vu), 0);
	expect_push(exp, VHOST_USER_SET_OWNER, 0, NULL, 0);

	CHECK_EQ(vnapi_vhost_user_get_protocol_features(&vu, &pf), 0);
	CHECK_EQ(pf, pf_offered);
	expect_push(exp, VHOST_USER_GET_PROTOCOL_FEATURES, 0, NULL, 0);

	pf &= pf_wanted;
	CHECK_EQ(vnapi_vhost_user_set_protocol_features(&vu, pf), 0);
	CHECK_EQ(vu.protocol_features, pf);
	expect_u64(exp, VHOST_USER_SET_PROTOCOL_FEATURES, pf);

	CHECK_EQ(vnapi_vhost_user_get_queue_num(&vu, &v), 0);
	CHECK_EQ(v, NQUEUES);
	expect_push(exp, VHOST_USER_GET_QUEUE_NUM, 0, NULL, 0);

	CHECK_EQ(vnapi_vhost_user_set_features(&vu, features & ~BIT(5)), 0);
	expect_u64(exp, VHOST_USER_SET_FEATURES, features & ~BIT(5));

	/* Two memfd regions, each with a pattern. */
	memset(memtab, 0, sizeof(memtab));
	memtab[0] = 2;
	for (i = 0; i < 2; i++) {
		memfd[i] = memfd_create(i == 0 ? "vnapi-test-0" : "vnapi-test-1", MFD_CLOEXEC);
		CHECK(memfd[i] >= 0);
		CHECK_EQ(ftruncate(memfd[i], MEM_SIZE), 0);
		map[i] = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd[i], 0);
		CHECK(map[i] != MAP_FAILED);
		memset(map[i], 0xa0 + i, MEM_SIZE);
		regions[i] = (struct vnapi_vhost_user_region){
			.guest_phys_addr = (uintptr_t)map[i],
			.memory_size = MEM_SIZE,
			.userspace_addr = (uintptr_t)map[i],
			.mmap_offset = i * 4096,
			.fd = memfd[i],
		};
		memcpy(memtab + 8 + 32 * i, &regions[i].guest_phys_addr, 8);
		memcpy(memtab + 8 + 32 * i + 8, &regions[i].memory_size, 8);
		memcpy(memtab + 8 + 32 * i + 16, &regions[i].userspace_addr, 8);
		memcpy(memtab + 8 + 32 * i + 24, &regions[i].mmap_offset, 8);
	}
	CHECK_EQ(vnapi_vhost_user_set_mem_table(&vu, regions, 2), 0);
	expect_push(exp, VHOST_USER_SET_MEM_TABLE, sizeof(memtab), memtab, 2);

	for (q = 0; q < NQUEUES; q++) {
		uint64_t desc = 0x10000 * (q + 1), avail = desc + 0x1000, used = desc + 0x2000;
		uint8_t addr[40];
		uint32_t idx = q, fl = 0;
		uint64_t zero = 0;

		CHECK_EQ(vnapi_vhost_user_set_vring_num(&vu, q, 256), 0);
		expect_state(exp, VHOST_USER_SET_VRING_NUM, q, 256);
		CHECK_EQ(vnapi_vhost_user_set_vring_base(&vu, q, 7 * q + 1), 0);
		expect_state(exp, VHOST_USER_SET_VRING_BASE, q, 7 * q + 1);
		CHECK_EQ(vnapi_vhost_user_set_vring_addr(&vu, q, desc, used, avail, 0, 0), 0);
		memcpy(addr, &idx, 4);
		memcpy(addr + 4, &fl, 4);
		memcpy(addr + 8, &desc, 8);
		memcpy(addr + 16, &used, 8);
		memcpy(addr + 24, &avail, 8);
		memcpy(addr + 32, &zero, 8);
		expect_push(exp, VHOST_USER_SET_VRING_ADDR, sizeof(addr), addr, 0);

		kickfd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		callfd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		CHECK(kickfd[q] >= 0 && callfd[q] >= 0);
		CHECK_EQ(vnapi_vhost_user_set_vring_kick(&vu, q, kickfd[q]), 0);
		v = q;
		expect_push(exp, VHOST_USER_SET_VRING_KICK, 8, &v, 1);
		CHECK_EQ(vnapi_vhost_user_set_vring_call(&vu, q, callfd[q]), 0);
		expect_push(exp, VHOST_USER_SET_VRING_CALL, 8, &v, 1);
		CHECK_EQ(vnapi_vhost_user_set_vring_enable(&vu, q, true), 0);
		expect_state(exp, VHOST_USER_SET_VRING_ENABLE, q, 1);
	}

	CHECK_EQ(vnapi_vhost_user_get_vring_base(&vu, 1, &base), 0);
	CHECK_EQ(base, 8);
	expect_state(exp, VHOST_USER_GET_VRING_BASE, 1, 0);

	CHECK_EQ(vnapi_vhost_user_set_status(&vu, 0x0f), 0);
	expect_u64(exp, VHOST_USER_SET_STATUS, 0x0f);
	CHECK_EQ(vnapi_vhost_user_get_status(&vu, &status), 0);
	CHECK_EQ(status, 0x0f);
	expect_push(exp, VHOST_USER_GET_STATUS, 0, NULL, 0);

	/* Exactly these requests, in this order, with these flags. */
	CHECK_EQ(fake_backend_wait(fb, exp->n, 2000), exp->n);
	for (i = 0; i < exp->n; i++) {
		const struct expect *e = &exp->e[i];
		struct fb_record r;
		uint32_t flags = FLAG_VERSION;

		if (ack && !has_own_reply(e->request) &&
		    i > 3 /* after SET_PROTOCOL_FEATURES */)
			flags |= FLAG_NEED_REPLY;
		CHECK_EQ(fake_backend_record(fb, i, &r), 0);
		if (r.request != e->request)
			printf("#   record %u: %s, expected %s\n", i,
			       vnapi_vhost_user_request_name(r.request),
			       vnapi_vhost_user_request_name(e->request));
		CHECK_EQ(r.request, e->request);
		CHECK_EQ(r.flags, flags);
		CHECK_EQ(r.size, e->size);
		CHECK_EQ(r.nfds, e->nfds);
		CHECK(memcmp(r.payload, e->payload, e->size) == 0);

		if (r.request == VHOST_USER_SET_MEM_TABLE) {
			/* The descriptors that arrived map the same memory. */
			for (unsigned int k = 0; k < 2; k++) {
				struct stat a, b;
				uint8_t *m;

				CHECK_EQ(fstat(r.fds[k], &a), 0);
				CHECK_EQ(fstat(memfd[k], &b), 0);
				CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
				m = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, r.fds[k], 0);
				CHECK(m != MAP_FAILED);
				bool same = memcmp(m, map[k], MEM_SIZE) == 0;

				m[100] = 0x5a;
				same = same && map[k][100] == 0x5a;
				munmap(m, MEM_SIZE);
				CHECK(same);
			}
		}
		if (r.request == VHOST_USER_SET_VRING_KICK || r.request == VHOST_USER_SET_VRING_CALL) {
			/* The eventfd that arrived is ours. */
			uint64_t one = 3, got = 0;
			uint32_t qi = r.payload[0];
			int mine = r.request == VHOST_USER_SET_VRING_KICK ? kickfd[qi] : callfd[qi];

			CHECK_EQ(write(r.fds[0], &one, 8), 8);
			CHECK_EQ(read(mine, &got, 8), 8);
			CHECK_EQ(got, 3);
		}
	}
	CHECK_EQ(fake_backend_wait(fb, exp->n + 1, 50), exp->n);
	CHECK(no_violations(fb));
	CHECK(!vnapi_vhost_user_peer_gone(&vu));
	rc = 0;
teardown:
	vnapi_vhost_user_close(&vu);
	fake_backend_destroy(fb);
	for (i = 0; i < 2; i++) {
		if (map[i] != NULL && map[i] != MAP_FAILED)
			munmap(map[i], MEM_SIZE);
		if (memfd[i] >= 0)
			close(memfd[i]);
	}
	for (q = 0; q < NQUEUES; q++) {
		if (kickfd[q] >= 0)
			close(kickfd[q]);
		if (callfd[q] >= 0)
			close(callfd[q]);
	}
	free(exp);
	return rc;
}

/* ---- kick/call without a descriptor ---- */

static int
test_no_fd_flag(struct vnapi_vhost_user *vu, struct fake_backend *fb, const struct on_backend *ob)
{
	const bool ack = ob->ack;
	unsigned int first = ack ? 2 : 0;
	struct fb_record r;
	uint64_t v;

	EXPECT_EQ(vnapi_vhost_user_set_vring_kick(vu, 3, -1), 0);
	EXPECT_EQ(vnapi_vhost_user_set_vring_call(vu, 255, -1), 0);
	/* Rejected before sending. */
	EXPECT_EQ(vnapi_vhost_user_set_vring_kick(vu, 256, -1), -EINVAL);
	EXPECT_EQ(vnapi_vhost_user_set_vring_call(vu, 0, -7), -EBADF);
	EXPECT(vu->sock >= 0);
	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);

	EXPECT_EQ(fake_backend_wait(fb, first + 3, 2000), first + 3);
	EXPECT_EQ(fake_backend_record(fb, first, &r), 0);
	EXPECT_EQ(r.request, VHOST_USER_SET_VRING_KICK);
	EXPECT_EQ(r.flags, FLAG_VERSION | (ack ? FLAG_NEED_REPLY : 0));
	EXPECT_EQ(r.nfds, 0);
	memcpy(&v, r.payload, 8);
	EXPECT_EQ(v, 3 | NOFD);
	EXPECT_EQ(fake_backend_record(fb, first + 1, &r), 0);
	EXPECT_EQ(r.request, VHOST_USER_SET_VRING_CALL);
	EXPECT_EQ(r.nfds, 0);
	memcpy(&v, r.payload, 8);
	EXPECT_EQ(v, 255 | NOFD);
	EXPECT_EQ(fake_backend_record(fb, first + 2, &r), 0);
	EXPECT_EQ(r.request, VHOST_USER_GET_FEATURES);
	EXPECT(no_violations(fb));
	return 0;
}

/*
 * SET_PROTOCOL_FEATURES never asks for an ack, even when REPLY_ACK is
 * already in use: whether the back end acks it depends on whether it
 * applies the new features first. The request after it does ask.
 */
static int
test_set_protocol_features_no_ack(struct vnapi_vhost_user *vu, struct fake_backend *fb,
				  const struct on_backend *ob)
{
	struct fb_record r;
	const uint64_t pf = BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK);

	EXPECT_EQ(vnapi_vhost_user_set_protocol_features(vu, pf), 0);
	EXPECT_EQ(vnapi_vhost_user_set_owner(vu), 0);
	EXPECT_EQ(fake_backend_wait(fb, 4, 2000), 4);
	EXPECT_EQ(fake_backend_record(fb, 1, &r), 0);
	EXPECT_EQ(r.request, VHOST_USER_SET_PROTOCOL_FEATURES);
	EXPECT_EQ(r.flags, FLAG_VERSION);
	EXPECT_EQ(fake_backend_record(fb, 2, &r), 0);
	EXPECT_EQ(r.request, VHOST_USER_SET_PROTOCOL_FEATURES);
	EXPECT_EQ(r.flags, FLAG_VERSION);
	EXPECT_EQ(fake_backend_record(fb, 3, &r), 0);
	EXPECT_EQ(r.request, VHOST_USER_SET_OWNER);
	EXPECT_EQ(r.flags, FLAG_VERSION | FLAG_NEED_REPLY);
	EXPECT(no_violations(fb));
	return 0;
}

/* ---- faults ---- */

struct fault_case {
	const char *name;
	uint32_t request;
	enum fb_fault fault;
	bool ack;
	int expect;
};

static const struct fault_case fault_cases[] = {
	{ "GET_FEATURES: back end disconnects", VHOST_USER_GET_FEATURES, FB_DISCONNECT, false, -ECONNRESET },
	{ "GET_FEATURES: no answer", VHOST_USER_GET_FEATURES, FB_NO_ANSWER, false, -ETIMEDOUT },
	{ "GET_FEATURES: 4-byte payload", VHOST_USER_GET_FEATURES, FB_BAD_SIZE, false, -EPROTO },
	{ "GET_FEATURES: oversize size field", VHOST_USER_GET_FEATURES, FB_OVERSIZE, false, -EPROTO },
	{ "GET_FEATURES: wrong request code", VHOST_USER_GET_FEATURES, FB_WRONG_REQUEST, false, -EPROTO },
	{ "GET_FEATURES: REPLY flag missing", VHOST_USER_GET_FEATURES, FB_NO_REPLY_FLAG, false, -EPROTO },
	{ "GET_FEATURES: wrong version", VHOST_USER_GET_FEATURES, FB_BAD_VERSION, false, -EPROTO },
	{ "GET_FEATURES: extra fd", VHOST_USER_GET_FEATURES, FB_EXTRA_FD, false, -EPROTO },
	{ "GET_FEATURES: truncated payload then EOF", VHOST_USER_GET_FEATURES, FB_TRUNCATED, false, -ECONNRESET },
	{ "GET_VRING_BASE: wrong vring index", VHOST_USER_GET_VRING_BASE, FB_WRONG_INDEX, false, -EPROTO },
	{ "GET_VRING_BASE: 4-byte payload", VHOST_USER_GET_VRING_BASE, FB_BAD_SIZE, false, -EPROTO },
	{ "GET_PROTOCOL_FEATURES: extra fd", VHOST_USER_GET_PROTOCOL_FEATURES, FB_EXTRA_FD, false, -EPROTO },
	{ "REPLY_ACK SET_OWNER: non-zero ack", VHOST_USER_SET_OWNER, FB_NACK, true, -EIO },
	{ "REPLY_ACK SET_VRING_NUM: non-zero ack", VHOST_USER_SET_VRING_NUM, FB_NACK, true, -EIO },
	{ "REPLY_ACK SET_VRING_NUM: disconnect", VHOST_USER_SET_VRING_NUM, FB_DISCONNECT, true, -ECONNRESET },
	{ "REPLY_ACK SET_VRING_NUM: no ack", VHOST_USER_SET_VRING_NUM, FB_NO_ANSWER, true, -ETIMEDOUT },
	{ "REPLY_ACK SET_VRING_NUM: 4-byte ack", VHOST_USER_SET_VRING_NUM, FB_BAD_SIZE, true, -EPROTO },
	{ "REPLY_ACK SET_VRING_NUM: oversize ack", VHOST_USER_SET_VRING_NUM, FB_OVERSIZE, true, -EPROTO },
	{ "REPLY_ACK SET_VRING_NUM: ack for another request", VHOST_USER_SET_VRING_NUM, FB_WRONG_REQUEST, true, -EPROTO },
	{ "REPLY_ACK SET_VRING_NUM: ack without REPLY flag", VHOST_USER_SET_VRING_NUM, FB_NO_REPLY_FLAG, true, -EPROTO },
	{ "REPLY_ACK SET_VRING_NUM: ack with wrong version", VHOST_USER_SET_VRING_NUM, FB_BAD_VERSION, true, -EPROTO },
	{ "REPLY_ACK SET_VRING_NUM: fd with the ack", VHOST_USER_SET_VRING_NUM, FB_EXTRA_FD, true, -EPROTO },
	{ "REPLY_ACK SET_VRING_NUM: truncated ack then EOF", VHOST_USER_SET_VRING_NUM, FB_TRUNCATED, true, -ECONNRESET },
	{ "REPLY_ACK SET_MEM_TABLE: non-zero ack", VHOST_USER_SET_MEM_TABLE, FB_NACK, true, -EIO },
};

static int
fault_request(struct vnapi_vhost_user *vu, uint32_t request)
{
	struct vnapi_vhost_user_region reg = { .memory_size = 4096 };
	unsigned int base;
	uint64_t v;
	int ret;

	switch (request) {
	case VHOST_USER_GET_FEATURES:
		return vnapi_vhost_user_get_features(vu, &v);
	case VHOST_USER_GET_PROTOCOL_FEATURES:
		return vnapi_vhost_user_get_protocol_features(vu, &v);
	case VHOST_USER_GET_VRING_BASE:
		return vnapi_vhost_user_get_vring_base(vu, 0, &base);
	case VHOST_USER_SET_OWNER:
		return vnapi_vhost_user_set_owner(vu);
	case VHOST_USER_SET_VRING_NUM:
		return vnapi_vhost_user_set_vring_num(vu, 0, 256);
	case VHOST_USER_SET_MEM_TABLE:
		reg.fd = memfd_create("vnapi-test", MFD_CLOEXEC);
		if (reg.fd < 0)
			return -errno;
		ret = vnapi_vhost_user_set_mem_table(vu, &reg, 1);
		close(reg.fd);
		return ret;
	default:
		return -ENOSYS;
	}
}

static int
fault_script(struct vnapi_vhost_user *vu, struct fake_backend *fb, const struct on_backend *ob)
{
	const struct fault_case *c = ob->arg;
	uint64_t t0, dt, v;
	int ret;

	fake_backend_set_fault(fb, c->request, c->fault);
	t0 = vnapi_now_ms();
	ret = fault_request(vu, c->request);
	dt = vnapi_now_ms() - t0;
	EXPECT_EQ(ret, c->expect);
	if (c->expect == -ETIMEDOUT) {
		EXPECT(dt >= TEST_REPLY_TIMEOUT_MS - 10);
		EXPECT(dt < TEST_REPLY_TIMEOUT_MS + 2000);
	} else {
		EXPECT(dt < 2000);
	}
	if (c->expect == -EIO) {
		/* A refusal leaves the connection in step and usable. */
		EXPECT(vu->sock >= 0);
		EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);
		EXPECT_EQ(v, 0x1234);
	} else {
		/* Anything else closes it: later requests cannot read a stale reply. */
		EXPECT_EQ(vu->sock, -1);
		EXPECT(vnapi_vhost_user_peer_gone(vu));
		EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), -ENOTCONN);
	}
	EXPECT(no_violations(fb));
	return 0;
}

/* A fault_cases[] row on a back end that has REPLY_ACK to offer. */
static int
test_fault(const void *arg)
{
	const struct fault_case *c = arg;
	const struct on_backend ob = {
		.cfg = {
			.features = 0x1234,
			.protocol_features = BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK),
		},
		.ack = c->ack,
		.script = fault_script,
		.arg = c,
	};

	return run_on_backend(&ob);
}

/* ---- disconnects, peer_gone, SIGPIPE ---- */

static int
test_peer_gone(struct vnapi_vhost_user *vu, struct fake_backend *fb, const struct on_backend *ob)
{
	uint64_t v;
	int i;

	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);
	EXPECT(!vnapi_vhost_user_peer_gone(vu));
	EXPECT(!vnapi_vhost_user_peer_gone(vu));   /* peeking consumes nothing */
	fake_backend_drop(fb);
	for (i = 0; i < 100 && !vnapi_vhost_user_peer_gone(vu); i++)
		usleep(1000);
	EXPECT(vnapi_vhost_user_peer_gone(vu));
	vnapi_vhost_user_close(vu);
	EXPECT(vnapi_vhost_user_peer_gone(vu));
	return 0;
}

/*
 * A request's return, ret, after the back end went away: -EPIPE or
 * -ECONNRESET (whichever the socket saw first), and the connection dropped.
 */
static int
expect_peer_lost(const struct vnapi_vhost_user *vu, int ret)
{
	EXPECT(ret == -EPIPE || ret == -ECONNRESET);
	EXPECT_EQ(vu->sock, -1);
	return 0;
}

/* SIGPIPE keeps its default action here: a send without MSG_NOSIGNAL kills the test. */
static int
test_send_after_disconnect(struct vnapi_vhost_user *vu, struct fake_backend *fb,
			   const struct on_backend *ob)
{
	uint64_t v;

	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);
	fake_backend_drop(fb);
	EXPECT_EQ(expect_peer_lost(vu, vnapi_vhost_user_set_features(vu, 1)), 0);
	EXPECT_EQ(vnapi_vhost_user_set_features(vu, 1), -ENOTCONN);
	return 0;
}

/* A disconnect after a request that has no reply shows on the next request. */
static int
test_disconnect_no_reply(struct vnapi_vhost_user *vu, struct fake_backend *fb,
			 const struct on_backend *ob)
{
	uint64_t v;

	EXPECT_EQ(vnapi_vhost_user_set_features(vu, 1), 0);
	EXPECT_EQ(fake_backend_wait(fb, 1, 2000), 1);
	EXPECT_EQ(expect_peer_lost(vu, vnapi_vhost_user_get_features(vu, &v)), 0);
	return 0;
}

/*
 * The calling thread's cancel eventfd (the driver's connection thread, cut
 * short by an ethdev op): none set, a request works; set and readable, a
 * request the back end leaves unanswered ends at once with -ECANCELED and
 * the connection dropped, long before the reply timeout.
 */
static int
test_cancel(struct vnapi_vhost_user *vu, struct fake_backend *fb, const struct on_backend *ob)
{
	uint64_t one = 1, v, t0, dt;
	int efd, ret;

	vu->reply_timeout_ms = 5000;
	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	EXPECT(efd >= 0);
	vnapi_vhost_user_cancel_fd_set(efd);
	/* Not readable yet: the request works. */
	ret = vnapi_vhost_user_get_features(vu, &v);
	fake_backend_set_fault(fb, VHOST_USER_GET_FEATURES, FB_NO_ANSWER);
	if (ret == 0 && write(efd, &one, sizeof(one)) == sizeof(one)) {
		t0 = vnapi_now_ms();
		ret = vnapi_vhost_user_get_features(vu, &v);
		dt = vnapi_now_ms() - t0;
		if (ret != -ECANCELED || dt >= 1000) {
			printf("#   cancelled request: %d after %" PRIu64 " ms\n", ret, dt);
			ret = -1;
		} else {
			ret = 0;
		}
	} else {
		ret = -1;
	}
	vnapi_vhost_user_cancel_fd_set(-1);
	close(efd);
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(vu->sock, -1);
	return 0;
}

/* vnapi_vhost_user_get_features() with the EAL log going to *out (text, malloc'd). */
static int
logged_get_features(struct vnapi_vhost_user *vu, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	uint64_t v;
	int ret;

	if (f == NULL)
		return -errno;
	rte_openlog_stream(f);
	ret = vnapi_vhost_user_get_features(vu, &v);
	rte_openlog_stream(NULL);
	fclose(f);
	return ret;
}

/*
 * The message trace: nothing at the default level; at debug level on
 * pmd.net.vnapi.init, one line per request sent and one per reply, naming
 * the request.
 */
static int
test_debug_trace(struct vnapi_vhost_user *vu, struct fake_backend *fb,
		 const struct on_backend *ob)
{
	char *quiet = NULL, *trace = NULL;
	size_t quiet_len = 0, trace_len = 0;
	int rc = -1, type;

	type = rte_log_register("pmd.net.vnapi.init");   /* the driver's: returns its id */
	CHECK(type >= 0);
	CHECK_EQ(logged_get_features(vu, &quiet, &quiet_len), 0);
	CHECK_EQ(quiet_len, 0);

	CHECK_EQ(rte_log_set_level_pattern("pmd.net.vnapi.init", RTE_LOG_DEBUG), 0);
	CHECK_EQ(logged_get_features(vu, &trace, &trace_len), 0);
	CHECK(trace != NULL);
	CHECK(strstr(trace, ": send GET_FEATURES flags 0x1 size 0 fds 0\n") != NULL);
	CHECK(strstr(trace, ": reply to GET_FEATURES flags 0x5 size 8 value 0x1\n") != NULL);
	rc = 0;
teardown:
	rte_log_set_level_pattern("pmd.net.vnapi.init", RTE_LOG_NOTICE);
	free(quiet);
	free(trace);
	return rc;
}

static int
test_not_connected(const void *arg)
{
	struct vnapi_vhost_user vu = { .sock = -1 };
	uint64_t v;

	(void)arg;
	EXPECT_EQ(vnapi_vhost_user_get_features(&vu, &v), -ENOTCONN);
	EXPECT_EQ(vnapi_vhost_user_set_owner(&vu), -ENOTCONN);
	EXPECT(vnapi_vhost_user_peer_gone(&vu));
	vnapi_vhost_user_close(&vu);
	vnapi_vhost_user_close(&vu);
	EXPECT_EQ(vu.sock, -1);
	return 0;
}

/* ---- connect ---- */

static int
test_connect_missing(const void *arg)
{
	struct vnapi_vhost_user vu = { .sock = -1 };
	char path[108];
	uint64_t t0, dt;

	(void)arg;
	snprintf(path, sizeof(path), "/tmp/vnapi-vu-test-missing-%d/none.sock", (int)getpid());
	t0 = vnapi_now_ms();
	EXPECT_EQ(vnapi_vhost_user_connect(&vu, path, 300, 50), -ENOENT);
	dt = vnapi_now_ms() - t0;
	EXPECT(dt >= 290);
	EXPECT(dt < 3000);
	EXPECT_EQ(vu.sock, -1);

	/* timeout 0: one attempt */
	t0 = vnapi_now_ms();
	EXPECT_EQ(vnapi_vhost_user_connect(&vu, path, 0, 50), -ENOENT);
	EXPECT(vnapi_now_ms() - t0 < 100);
	return 0;
}

static int
test_connect_refused(const void *arg)
{
	struct vnapi_vhost_user vu = { .sock = -1 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[64] = "/tmp/vnapi-vu-test-XXXXXX";
	uint64_t t0, dt;
	int rc = -1, fd = -1;
	bool made = false;

	(void)arg;
	CHECK(mkdtemp(dir) != NULL);
	made = true;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	/* Bound, never listening: connect is refused. */
	CHECK_EQ(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	t0 = vnapi_now_ms();
	CHECK_EQ(vnapi_vhost_user_connect(&vu, sun.sun_path, 200, 20), -ECONNREFUSED);
	dt = vnapi_now_ms() - t0;
	CHECK(dt >= 190 && dt < 3000);
	CHECK_EQ(vu.sock, -1);
	rc = 0;
teardown:
	if (fd >= 0)
		close(fd);
	if (made) {
		unlink(sun.sun_path);
		rmdir(dir);
	}
	return rc;
}

static int
test_connect_retry(const void *arg)
{
	struct fb_config cfg = { .features = 42, .listen_delay_ms = 200 };
	struct vnapi_vhost_user vu = { .sock = -1 };
	struct fake_backend *fb;
	uint64_t t0, dt, v;
	int rc = -1;

	(void)arg;
	fb = fake_backend_start(&cfg);
	CHECK(fb != NULL);
	t0 = vnapi_now_ms();
	CHECK_EQ(vnapi_vhost_user_connect(&vu, fake_backend_path(fb), 5000, 20), 0);
	dt = vnapi_now_ms() - t0;
	CHECK(dt >= 150 && dt < 3000);
	CHECK_EQ(vnapi_vhost_user_get_features(&vu, &v), 0);
	CHECK_EQ(v, 42);
	rc = 0;
teardown:
	vnapi_vhost_user_close(&vu);
	fake_backend_destroy(fb);
	return rc;
}

static int
test_connect_bad_path(const void *arg)
{
	struct vnapi_vhost_user vu = { .sock = -1 };
	char path[256];

	(void)arg;
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[200] = '\0';
	EXPECT_EQ(vnapi_vhost_user_connect(&vu, path, 100, 10), -ENAMETOOLONG);
	EXPECT_EQ(vu.sock, -1);
	path[108] = '\0';   /* 108 bytes: no room for the NUL in sun_path */
	EXPECT_EQ(vnapi_vhost_user_connect(&vu, path, 100, 10), -ENAMETOOLONG);
	path[107] = '\0';   /* 107 bytes: fits, but does not exist */
	EXPECT_EQ(vnapi_vhost_user_connect(&vu, path, 0, 10), -ENOENT);
	EXPECT_EQ(vnapi_vhost_user_connect(&vu, "", 0, 10), -EINVAL);
	EXPECT_EQ(vnapi_vhost_user_connect(&vu, NULL, 0, 10), -EINVAL);
	EXPECT_EQ(vu.sock, -1);
	return 0;
}

/* ---- set_mem_table limits ---- */

static int
test_mem_table_limits(struct vnapi_vhost_user *vu, struct fake_backend *fb,
		      const struct on_backend *ob)
{
	struct vnapi_vhost_user_region reg[VHOST_USER_MAX_MEM_REGIONS + 1];
	unsigned int i;
	uint64_t v;

	memset(reg, 0, sizeof(reg));
	for (i = 0; i < ARRAY_SIZE(reg); i++)
		reg[i].fd = 0;
	EXPECT_EQ(vnapi_vhost_user_set_mem_table(vu, reg, 9), -E2BIG);
	reg[1].fd = -1;
	EXPECT_EQ(vnapi_vhost_user_set_mem_table(vu, reg, 2), -EBADF);
	EXPECT(vu->sock >= 0);
	/* Nothing was sent: the first request the back end sees is this one. */
	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);
	EXPECT_EQ(fake_backend_wait(fb, 1, 1000), 1);
	EXPECT_EQ(fake_backend_wait(fb, 2, 50), 1);
	return 0;
}

/* ---- what the back end writes outside a request ---- */

/* Wait until @p fd is readable (bounded). */
static bool
wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1;
}

struct unsolicited_case {
	enum fb_fault fault;
	size_t bytes;        /**< What poll_inbound() must read. */
	unsigned int nfds;   /**< And the descriptors it must close. */
};

static const struct unsolicited_case unsolicited_msg = { FB_UNSOLICITED, 20, 0 };
static const struct unsolicited_case unsolicited_fd = { FB_UNSOLICITED_FD, 20, 1 };
static const struct unsolicited_case unsolicited_dup = { FB_LATE_DUPLICATE, 20, 0 };

/* The interrupt thread's read: everything is consumed (the socket is not
 * readable any more), counted, the fds closed, -EPROTO. */
static int
test_unsolicited_poll(struct vnapi_vhost_user *vu, struct fake_backend *fb,
		      const struct on_backend *ob)
{
	const struct unsolicited_case *c = ob->arg;
	unsigned int nfds;
	uint32_t request;
	size_t bytes;
	uint64_t v;

	/* Nothing pending: 0, nothing consumed. */
	EXPECT_EQ(vnapi_vhost_user_poll_inbound(vu, &request, &bytes, &nfds), 0);
	EXPECT_EQ(bytes, 0);
	fake_backend_set_fault(fb, VHOST_USER_GET_FEATURES, c->fault);
	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);
	EXPECT_EQ(v, 0x1234);
	EXPECT(wait_readable(vu->sock, 1000));
	EXPECT_EQ(vnapi_vhost_user_poll_inbound(vu, &request, &bytes, &nfds), -EPROTO);
	EXPECT_EQ(request, VHOST_USER_GET_FEATURES);
	EXPECT_EQ(bytes, c->bytes);
	EXPECT_EQ(nfds, c->nfds);
	/* Read to the end: a level-triggered watch would not fire again. */
	EXPECT(!wait_readable(vu->sock, 0));
	/* Then the back end closes: -ECONNRESET. */
	fake_backend_drop(fb);
	EXPECT(wait_readable(vu->sock, 1000));
	EXPECT_EQ(vnapi_vhost_user_poll_inbound(vu, &request, &bytes, &nfds), -ECONNRESET);
	return 0;
}

/* Bytes already waiting when a request starts: -EPROTO, connection closed. */
static int
test_unsolicited_before_request(struct vnapi_vhost_user *vu, struct fake_backend *fb,
				const struct on_backend *ob)
{
	const struct unsolicited_case *c = ob->arg;
	uint64_t v;

	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), 0);
	EXPECT_EQ(fake_backend_send_unsolicited(fb, 42, c->nfds), 0);
	EXPECT(wait_readable(vu->sock, 1000));
	EXPECT_EQ(vnapi_vhost_user_set_owner(vu), -EPROTO);
	EXPECT_EQ(vu->sock, -1);
	EXPECT_EQ(vnapi_vhost_user_get_features(vu, &v), -ENOTCONN);
	/* Only GET_FEATURES reached the back end. */
	EXPECT_EQ(fake_backend_wait(fb, 2, 50), 1);
	return 0;
}

/* Server mode: stale socket removed, live one and a plain file refused. */
static int
test_listen(const void *arg)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct fb_config cfg = { .features = 0x1234 };
	struct vnapi_vhost_user vu = { .sock = -1 }, cl = { .sock = -1 };
	struct fake_backend *fb = NULL;
	char dir[] = "/tmp/vnapi-listen-XXXXXX", path[64];
	int lfd = -1, fd = -1, rc = -1;
	uint64_t v;

	(void)arg;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	/* A plain file: -EEXIST, left alone. */
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	fd = -1;
	CHECK_EQ(vnapi_vhost_user_listen(path, &lfd), -EEXIST);
	CHECK_EQ(lfd, -1);
	CHECK_EQ(access(path, F_OK), 0);
	CHECK_EQ(unlink(path), 0);
	/* A stale socket (bound, its owner gone): removed, then ours. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	fd = -1;
	CHECK_EQ(vnapi_vhost_user_listen(path, &lfd), 0);
	CHECK(lfd >= 0);
	/* Nobody connecting yet: -EAGAIN, never blocks. */
	CHECK_EQ(vnapi_vhost_user_accept(&vu, lfd, path), -EAGAIN);
	/* Live (ours, listening): a second listener is refused. */
	CHECK_EQ(vnapi_vhost_user_listen(path, &fd), -EADDRINUSE);
	CHECK_EQ(fd, -1);
	/* A client connects and is accepted. */
	CHECK_EQ(vnapi_vhost_user_connect(&cl, path, 0, 0), 0);
	CHECK(wait_readable(lfd, 1000));
	CHECK_EQ(vnapi_vhost_user_accept(&vu, lfd, path), 0);
	CHECK(vu.sock >= 0);
	CHECK(strcmp(vu.path, path) == 0);
	vnapi_vhost_user_close(&cl);
	vnapi_vhost_user_close(&vu);
	close(lfd);
	lfd = -1;
	unlink(path);
	/* Someone else's live socket (the fake back end's): refused. */
	fb = fake_backend_start(&cfg);
	CHECK(fb != NULL);
	CHECK_EQ(vnapi_vhost_user_listen(fake_backend_path(fb), &lfd), -EADDRINUSE);
	CHECK_EQ(vnapi_vhost_user_connect(&cl, fake_backend_path(fb), 1000, 10), 0);
	CHECK_EQ(vnapi_vhost_user_get_features(&cl, &v), 0);
	CHECK_EQ(v, 0x1234);
	rc = 0;
teardown:
	vnapi_vhost_user_close(&cl);
	vnapi_vhost_user_close(&vu);
	if (lfd >= 0)
		close(lfd);
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(dir);
	fake_backend_destroy(fb);
	return rc;
}

/* ---- the table ---- */

static const bool ack_off = false, ack_on = true;

/*
 * A fixed_cases[] row that runs on_backend's script on a back end of the
 * given configuration (struct on_backend's fields, designated); the compound
 * literal has static storage at file scope, so the row needs no named
 * on_backend.
 */
#define ON_BACKEND(name, ...) \
	{ name, run_on_backend, &(const struct on_backend){ __VA_ARGS__ } }

/*
 * A row of the unsolicited-message cases: test_unsolicited_<when> with
 * unsolicited_<what>, on a back end that offers features 0x1234 (the
 * script's get_features reply).
 */
#define UNSOLICITED(name, when, what) \
	ON_BACKEND(name, .script = test_unsolicited_##when, .cfg = { .features = 0x1234 }, \
		   .arg = &unsolicited_##what)

static const struct unit_case fixed_cases[] = {
	{ "request names", test_request_names, NULL },
	{ "negotiation sequence, REPLY_ACK off", test_negotiation, &ack_off },
	{ "negotiation sequence, REPLY_ACK on", test_negotiation, &ack_on },
	ON_BACKEND("kick/call no-fd flag, REPLY_ACK off",
		   .script = test_no_fd_flag,
		   .cfg = { .protocol_features = BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) }),
	ON_BACKEND("kick/call no-fd flag, REPLY_ACK on",
		   .script = test_no_fd_flag,
		   .cfg = { .protocol_features = BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) },
		   .ack = true),
	ON_BACKEND("SET_PROTOCOL_FEATURES never asks for an ack",
		   .script = test_set_protocol_features_no_ack,
		   .cfg = { .protocol_features = BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) },
		   .ack = true),
	ON_BACKEND("peer_gone: live, then back end closes",
		   .script = test_peer_gone, .cfg = { .features = 1 }),
	ON_BACKEND("send after disconnect: -EPIPE, no SIGPIPE",
		   .script = test_send_after_disconnect, .cfg = { .features = 1 }),
	ON_BACKEND("disconnect after a no-reply request",
		   .script = test_disconnect_no_reply,
		   .cfg = { .features = 1, .faults[VHOST_USER_SET_FEATURES] = FB_DISCONNECT }),
	ON_BACKEND("debug trace: one line per request and reply",
		   .script = test_debug_trace, .cfg = { .features = 1 }),
	ON_BACKEND("cancel eventfd: request ends at once with -ECANCELED, dropped",
		   .script = test_cancel, .cfg = { .features = 1 }),
	{ "not connected: -ENOTCONN, close idempotent", test_not_connected, NULL },
	{ "connect: missing socket, bounded retry", test_connect_missing, NULL },
	{ "connect: refused, bounded retry", test_connect_refused, NULL },
	{ "connect: back end listens late", test_connect_retry, NULL },
	{ "connect: path too long / empty", test_connect_bad_path, NULL },
	ON_BACKEND("set_mem_table: 9 regions -E2BIG, bad fd -EBADF",
		   .script = test_mem_table_limits, .cfg = { .features = 1 }),
	UNSOLICITED("unsolicited message after a reply: read, -EPROTO", poll, msg),
	UNSOLICITED("unsolicited message with an fd: read, fd closed, -EPROTO", poll, fd),
	UNSOLICITED("late (duplicate) reply: read, -EPROTO", poll, dup),
	UNSOLICITED("unsolicited message before a request: -EPROTO, closed", before_request, msg),
	UNSOLICITED("unsolicited fd before a request: -EPROTO, closed", before_request, fd),
	{ "server: stale socket removed, live or foreign refused, accept", test_listen, NULL },
};

#define N_CASES (ARRAY_SIZE(fixed_cases) + ARRAY_SIZE(cr_cases) + ARRAY_SIZE(fault_cases))

static struct unit_case all_cases[N_CASES];
static char all_names[N_CASES][128];

/* Every case also leaves no descriptor open. */
static int
run_no_fd_leak(const struct unit_case *c)
{
	int before = count_open_fds(), after, rc;

	rc = c->fn(c->arg);
	after = count_open_fds();
	if (rc == 0 && after != before) {
		printf("#   %d descriptors open before, %d after\n", before, after);
		rc = -1;
	}
	return rc;
}

static void
add_case(size_t *n, const char *prefix, const char *name, int (*fn)(const void *),
	 const void *arg)
{
	snprintf(all_names[*n], sizeof(all_names[*n]), "%s%s", prefix, name);
	all_cases[*n] = (struct unit_case){ all_names[*n], fn, arg };
	(*n)++;
}

int
main(int argc, char **argv)
{
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(fixed_cases); i++)
		add_case(&n, "", fixed_cases[i].name, fixed_cases[i].fn, fixed_cases[i].arg);
	for (i = 0; i < ARRAY_SIZE(cr_cases); i++)
		add_case(&n, "check_reply: ", cr_cases[i].name, test_check_reply, &cr_cases[i]);
	for (i = 0; i < ARRAY_SIZE(fault_cases); i++)
		add_case(&n, "fault: ", fault_cases[i].name, test_fault, &fault_cases[i]);
	return unit_tap_main(argc, argv, all_cases, n, run_no_fd_leak);
}
