/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * race_test: the rx interrupt arming race, made deterministic.
 *
 * One process, one lcore. DPDK's net_vhost is the back end; the front end
 * (net_vnapi, or DPDK's net_virtio_user as the reference) is hot-plugged
 * against its socket. Both datapaths run in this thread, so the order of
 * events is ours to choose. Every round:
 *
 *   1. disarm the front end's rx queue 0 and drain it;
 *   2. harvest any event already pending on the epoll instance (there must be
 *      none: a stale event would hide a lost wakeup below);
 *   3. the back end transmits exactly one packet into the front end. The
 *      queue is disarmed, so the back end sends no notification: the packet
 *      sits in the used ring unannounced;
 *   4. arm (rte_eth_dev_rx_intr_enable), then rte_epoll_wait(timeout).
 *      A driver that re-checks the ring after arming wakes the waiter at once
 *      (or returns -EAGAIN); one that does not leaves it asleep until the
 *      timeout: a lost wakeup;
 *   5. disarm, receive exactly that packet (payload checked);
 *   6. the other direction: the front end sends one packet, the back end
 *      must receive it (payload checked).
 *
 * Afterwards the ethdev counters of both ports must agree with what was
 * sent, the front end's xstats (where it has them) must agree with what the
 * rounds did, and after stop and close every front-end mbuf must be back in
 * its mempool.
 *
 * Usage: race_test --frontend DEVARGS [--name NAME] [--rounds N]
 *                  [--expect-lost N|any] [--timeout-ms MS] [--log-level L]
 * DEVARGS may hold {sock}, replaced by the back end's socket path.
 * Exit status 0 only when the last line is "RESULT: PASS".
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_epoll.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_interrupts.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include "vnapi_compat.h"

#define RACE_RUN_DIR        "/run/vnapi-test"
#define RACE_BE_NAME        "net_vhost0"
#define RACE_BURST          32
#define RACE_POOL_SIZE      4095
#define RACE_FRAME_LEN      96
#define RACE_MAGIC          0x52414345u /* "RACE" */
#define RACE_IO_TIMEOUT_S   2.0         /* one packet through a datapath */
#define RACE_EXPECT_ANY     (-1L)
#define RACE_WARMUP_SEQ     UINT32_MAX

enum race_dir {
	RACE_BE_TO_FE = 1,
	RACE_FE_TO_BE = 2,
};

/* Where a packet stands after its round's arming. */
enum race_outcome {
	RACE_LOST,      /**< epoll_wait timed out: the wakeup was lost */
	RACE_SIGNAL,    /**< epoll_wait returned the queue's event */
	RACE_EAGAIN,    /**< intr_enable said -EAGAIN: work raced the arming */
	RACE_NO_INTR,   /**< the front end cannot arm at all */
};

struct __rte_packed_begin race_payload {
	uint32_t magic;
	uint32_t seq;
	uint8_t dir;
} __rte_packed_end;

#define RACE_PL_OFF   (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + \
		       sizeof(struct rte_udp_hdr))
#define RACE_PAT_OFF  (RACE_PL_OFF + sizeof(struct race_payload))

static struct {
	const char *frontend;
	const char *name;
	const char *log_level;
	unsigned long rounds;
	long expect_lost;
	int timeout_ms;
	unsigned long restarts;
} opts = {
	.frontend = NULL,
	.name = NULL,
	.log_level = "*:warning",
	.rounds = 200,
	.expect_lost = 0,
	.timeout_ms = 50,
	.restarts = 0,
};

/* The front end's per-queue interrupt xstats, read by name where present. */
enum race_xstat {
	XS_ARMS,
	XS_RESCUES,
	XS_NOTIFICATIONS,
	XS_WAKEUPS,
	XS_WAKEUP_PACKETS,
	XS_SPURIOUS,
	XS_PPN,
	XS_MAX,
};
static const char *const xstat_names[XS_MAX] = {
	[XS_ARMS] = "rx_q0_intr_arms",
	[XS_RESCUES] = "rx_q0_intr_rescues",
	[XS_NOTIFICATIONS] = "rx_q0_intr_notifications",
	[XS_WAKEUPS] = "rx_q0_intr_wakeups",
	[XS_WAKEUP_PACKETS] = "rx_q0_intr_wakeup_packets",
	[XS_SPURIOUS] = "rx_q0_intr_spurious_wakeups",
	[XS_PPN] = "rx_q0_intr_packets_per_notification",
};
static const char *const xstat_short[XS_MAX] = {
	[XS_ARMS] = "arms",
	[XS_RESCUES] = "rescues",
	[XS_NOTIFICATIONS] = "notifications",
	[XS_WAKEUPS] = "wakeups",
	[XS_WAKEUP_PACKETS] = "wakeup_packets",
	[XS_SPURIOUS] = "spurious",
	[XS_PPN] = "packets_per_notification",
};

struct race_xstats {
	bool have[XS_MAX];
	uint64_t id[XS_MAX];
	uint64_t val[XS_MAX];
};

/* Results of the rounds. */
struct race_result {
	unsigned long done;
	unsigned long lost;
	unsigned long signal;
	unsigned long eagain;
	unsigned long stale;        /**< events pending before arming */
	unsigned long not_pending;  /**< packet not in the ring before arming */
	unsigned long be_sent;
	unsigned long fe_rcvd;
	unsigned long fe_sent;
	unsigned long be_rcvd;
	double *lat_us;             /**< enable -> wake (or -EAGAIN), per round */
	bool intr_ok;
	char no_intr_why[256];
};

static char sock_path[PATH_MAX];
static char file_prefix[128];
static char fe_devargs[1024];
static char fe_name[RTE_DEV_NAME_MAX_LEN];
static uint16_t be_port = RTE_MAX_ETHPORTS;
static uint16_t fe_port = RTE_MAX_ETHPORTS;
static bool be_probed;
static bool fe_probed;
static bool fe_intr_registered;

static struct rte_mempool *fe_rx_pool;   /* front end rx ring buffers */
static struct rte_mempool *fe_tx_pool;   /* front end -> back end packets */
static struct rte_mempool *be_rx_pool;   /* back end rx (dequeue) buffers */
static struct rte_mempool *be_tx_pool;   /* back end -> front end packets */

static char fail_reason[512];
static uint8_t frame_buf[RACE_FRAME_LEN];

/* ---------------------------------------------------------------- output */

static int __rte_format_printf(1, 2)
fail(const char *fmt, ...)
{
	va_list ap;

	if (fail_reason[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(fail_reason, sizeof(fail_reason), fmt, ap);
		va_end(ap);
	}
	va_start(ap, fmt);
	printf("# FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	return -1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* -------------------------------------------------------------- frames */

static uint8_t
pat_byte(uint32_t seq, uint8_t dir, uint32_t off)
{
	return (uint8_t)(off * 11u + seq * 7u + dir * 53u);
}

static void
frame_fill(uint8_t *buf, uint32_t seq, uint8_t dir)
{
	static const struct rte_ether_addr fe_mac = {
		.addr_bytes = { 0x02, 0x72, 0x61, 0x00, 0x00, 0x01 } };
	static const struct rte_ether_addr be_mac = {
		.addr_bytes = { 0x02, 0x72, 0x61, 0x00, 0x00, 0x02 } };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	struct race_payload pl = {
		.magic = RACE_MAGIC,
		.seq = seq,
		.dir = dir,
	};
	uint32_t i;

	rte_ether_addr_copy(dir == RACE_BE_TO_FE ? &fe_mac : &be_mac, &eth->dst_addr);
	rte_ether_addr_copy(dir == RACE_BE_TO_FE ? &be_mac : &fe_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(RACE_FRAME_LEN - sizeof(*eth)));
	ip->packet_id = rte_cpu_to_be_16((uint16_t)seq);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 99, dir, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 99, dir, 2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(4242);
	udp->dst_port = rte_cpu_to_be_16(4243);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(RACE_FRAME_LEN - sizeof(*eth) -
						     sizeof(*ip)));
	udp->dgram_cksum = 0;
	memcpy(buf + RACE_PL_OFF, &pl, sizeof(pl));
	for (i = RACE_PAT_OFF; i < RACE_FRAME_LEN; i++)
		buf[i] = pat_byte(seq, dir, i);
}

static struct rte_mbuf *
frame_mbuf(struct rte_mempool *mp, uint32_t seq, uint8_t dir)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	if (m == NULL)
		return NULL;
	frame_fill(rte_pktmbuf_mtod(m, uint8_t *), seq, dir);
	m->data_len = RACE_FRAME_LEN;
	m->pkt_len = RACE_FRAME_LEN;
	return m;
}

/* 0 if m is packet seq of direction dir, byte for byte. */
static int
frame_check(const struct rte_mbuf *m, uint32_t seq, uint8_t dir, const char *who)
{
	uint8_t copy[RACE_FRAME_LEN];
	const uint8_t *data;
	uint32_t i;

	if (m->pkt_len != RACE_FRAME_LEN)
		return fail("%s: round %u: packet of %u bytes, sent %u", who, seq,
			    m->pkt_len, RACE_FRAME_LEN);
	data = rte_pktmbuf_read(m, 0, RACE_FRAME_LEN, copy);
	if (data == NULL)
		return fail("%s: round %u: unreadable mbuf", who, seq);
	frame_fill(frame_buf, seq, dir);
	if (memcmp(frame_buf, data, RACE_FRAME_LEN) != 0) {
		for (i = 0; i < RACE_FRAME_LEN && frame_buf[i] == data[i]; i++)
			;
		return fail("%s: round %u: byte %u is %#x, sent %#x", who, seq, i,
			    data[i], frame_buf[i]);
	}
	return 0;
}

/* Expand {sock} in a devargs template. */
static int
race_subst(char *out, size_t size, const char *in)
{
	size_t o = 0, l;

	while (*in != '\0') {
		if (strncmp(in, "{sock}", 6) == 0) {
			l = strlen(sock_path);
			if (o + l >= size)
				return -1;
			memcpy(out + o, sock_path, l);
			o += l;
			in += 6;
			continue;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = *in++;
	}
	out[o] = '\0';
	return 0;
}

/* --------------------------------------------------------------- ports */

static int
wait_link_up(uint16_t port, const char *who, double timeout)
{
	double t0 = now_s(), deadline = t0 + timeout;
	struct rte_eth_link link;

	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			break;
		if (now_s() > deadline)
			return fail("%s link not up within %.0f s", who, timeout);
		rte_delay_us_sleep(1000);
	}
	printf("# %s link up after %.3f s\n", who, now_s() - t0);
	return 0;
}

static int
port_setup(uint16_t port, const char *who, bool rxq_intr, struct rte_mempool *rx_pool)
{
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = rxq_intr ? 1 : 0;
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret != 0)
		return ret;
	ret = rte_eth_rx_queue_setup(port, 0, 0, rte_socket_id(), NULL, rx_pool);
	if (ret != 0)
		return fail("%s: rx queue setup: %d", who, ret);
	ret = rte_eth_tx_queue_setup(port, 0, 0, rte_socket_id(), NULL);
	if (ret != 0)
		return fail("%s: tx queue setup: %d", who, ret);
	ret = rte_eth_dev_start(port);
	if (ret != 0)
		return fail("%s: start: %d", who, ret);
	return 0;
}

/* net_vhost creates its socket at configure: it comes first. */
static int
be_create(void)
{
	char args[PATH_MAX + 64];
	int ret;

	snprintf(args, sizeof(args), "%s,iface=%s,queues=1", RACE_BE_NAME, sock_path);
	ret = rte_dev_probe(args);
	if (ret != 0)
		return fail("probe back end '%s': %d", args, ret);
	be_probed = true;
	if (rte_eth_dev_get_port_by_name(RACE_BE_NAME, &be_port) != 0)
		return fail("back end probed but no port named %s", RACE_BE_NAME);
	ret = port_setup(be_port, "back end", false, be_rx_pool);
	if (ret > 0 || (ret < 0 && fail_reason[0] == '\0'))
		return fail("back end: configure: %d", ret);
	return ret;
}

/*
 * Probe and start the front end with rx interrupts. A front end that refuses
 * intr_conf.rxq is started without it and the rounds run without arming
 * (res->intr_ok false, with the reason), so the counts and the leak check
 * still apply.
 */
static int
fe_create(struct race_result *res)
{
	int ret;

	ret = rte_dev_probe(fe_devargs);
	if (ret != 0)
		return fail("probe front end '%s': %d (%s)", fe_devargs, ret, strerror(-ret));
	fe_probed = true;
	if (rte_eth_dev_get_port_by_name(fe_name, &fe_port) != 0)
		return fail("front end probed but no port named %s", fe_name);
	res->intr_ok = true;
	ret = port_setup(fe_port, "front end", true, fe_rx_pool);
	if (ret < 0 && fail_reason[0] != '\0')
		return -1;
	if (ret != 0) {
		res->intr_ok = false;
		snprintf(res->no_intr_why, sizeof(res->no_intr_why),
			 "rte_eth_dev_configure with intr_conf.rxq=1 failed: %d (%s)",
			 ret, strerror(-ret));
		printf("# front end: %s; running without rx interrupts\n", res->no_intr_why);
		ret = port_setup(fe_port, "front end", false, fe_rx_pool);
		if (ret != 0)
			return fail("front end: configure without rx interrupts: %d", ret);
	}
	if (wait_link_up(be_port, "back end", 10.0) != 0 ||
	    wait_link_up(fe_port, "front end", 10.0) != 0)
		return -1;
	if (!res->intr_ok)
		return 0;
	ret = rte_eth_dev_rx_intr_ctl_q(fe_port, 0, RTE_EPOLL_PER_THREAD,
					RTE_INTR_EVENT_ADD, NULL);
	if (ret != 0) {
		res->intr_ok = false;
		snprintf(res->no_intr_why, sizeof(res->no_intr_why),
			 "rte_eth_dev_rx_intr_ctl_q(ADD) failed: %d (%s)", ret, strerror(-ret));
		printf("# front end: %s; running without rx interrupts\n", res->no_intr_why);
		return 0;
	}
	fe_intr_registered = true;
	return 0;
}

static void
fe_intr_unregister(void)
{
	int ret;

	if (!fe_intr_registered)
		return;
	ret = rte_eth_dev_rx_intr_ctl_q(fe_port, 0, RTE_EPOLL_PER_THREAD,
					RTE_INTR_EVENT_DEL, NULL);
	if (ret != 0)
		printf("# rx_intr_ctl_q(DEL): %d\n", ret);
	fe_intr_registered = false;
}

static void
port_remove(const char *name, uint16_t *port, bool *probed)
{
	int ret;

	if (!*probed)
		return;
	if (*port < RTE_MAX_ETHPORTS && rte_eth_dev_is_valid_port(*port)) {
		ret = rte_eth_dev_stop(*port);
		if (ret != 0)
			printf("# stop %s: %d\n", name, ret);
		ret = rte_eth_dev_close(*port);
		if (ret != 0)
			printf("# close %s: %d\n", name, ret);
	}
	ret = rte_eal_hotplug_remove("vdev", name);
	if (ret != 0 && ret != -ENOENT)
		printf("# remove %s: %d\n", name, ret);
	*port = RTE_MAX_ETHPORTS;
	*probed = false;
}

/* -------------------------------------------------------------- xstats */

static void
xstats_lookup(struct race_xstats *xs)
{
	unsigned int i;

	memset(xs, 0, sizeof(*xs));
	for (i = 0; i < XS_MAX; i++)
		xs->have[i] = rte_eth_xstats_get_id_by_name(fe_port, xstat_names[i],
							    &xs->id[i]) == 0;
}

static int
xstats_read(struct race_xstats *xs)
{
	unsigned int i;

	for (i = 0; i < XS_MAX; i++) {
		if (!xs->have[i])
			continue;
		if (rte_eth_xstats_get_by_id(fe_port, &xs->id[i], &xs->val[i], 1) != 1)
			return fail("xstat %s: read failed", xstat_names[i]);
	}
	return 0;
}

/* ---------------------------------------------------------------- rounds */

/* Receive and free everything the front end holds; the number received. */
static unsigned int
fe_drain(void)
{
	struct rte_mbuf *rx[RACE_BURST];
	unsigned int total = 0;
	uint16_t n, i;

	do {
		n = rte_eth_rx_burst(fe_port, 0, rx, RACE_BURST);
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(rx[i]);
		total += n;
	} while (n != 0);
	return total;
}

/* Transmit one packet on port/queue 0, retrying until accepted. */
static int
tx_one(uint16_t port, struct rte_mempool *mp, uint32_t seq, uint8_t dir, const char *who)
{
	double deadline = now_s() + RACE_IO_TIMEOUT_S;
	struct rte_mbuf *m = frame_mbuf(mp, seq, dir);

	if (m == NULL)
		return fail("%s: round %u: tx pool exhausted (in use %u)", who, seq,
			    rte_mempool_in_use_count(mp));
	while (rte_eth_tx_burst(port, 0, &m, 1) != 1) {
		if (now_s() > deadline) {
			rte_pktmbuf_free(m);
			return fail("%s: round %u: tx not accepted within %.0f s", who, seq,
				    RACE_IO_TIMEOUT_S);
		}
		rte_delay_us_sleep(100);
	}
	return 0;
}

/*
 * Receive exactly packet seq on port/queue 0: it is in the ring already (the
 * peer's burst ran in this thread), so one burst normally has it; a second
 * burst must find nothing more.
 */
static int
rx_one(uint16_t port, uint32_t seq, uint8_t dir, const char *who)
{
	double deadline = now_s() + RACE_IO_TIMEOUT_S;
	struct rte_mbuf *rx[RACE_BURST];
	unsigned int got = 0, bursts = 0;
	uint16_t n, i;
	int ret = 0;

	while (got == 0) {
		n = rte_eth_rx_burst(port, 0, rx, RACE_BURST);
		bursts++;
		for (i = 0; i < n; i++) {
			if (ret == 0 && i == 0)
				ret = frame_check(rx[i], seq, dir, who);
			rte_pktmbuf_free(rx[i]);
		}
		if (n > 1 && ret == 0)
			ret = fail("%s: round %u: %u packets received, sent 1", who, seq, n);
		got += n;
		if (got == 0 && now_s() > deadline)
			return fail("%s: round %u: packet not received within %.0f s (%u bursts)",
				    who, seq, RACE_IO_TIMEOUT_S, bursts);
	}
	n = rte_eth_rx_burst(port, 0, rx, RACE_BURST);
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(rx[i]);
	if (n != 0 && ret == 0)
		ret = fail("%s: round %u: %u extra packet(s) after the one sent", who, seq, n);
	return ret;
}

static int
round_run(uint32_t r, struct race_result *res)
{
	struct rte_epoll_event ev[1];
	enum race_outcome out;
	double t0, t1;
	int ret, n, q;

	/* 1. Disarmed and empty. */
	if (res->intr_ok) {
		ret = rte_eth_dev_rx_intr_disable(fe_port, 0);
		if (ret != 0)
			return fail("round %u: rx_intr_disable: %d", r, ret);
	}
	n = (int)fe_drain();
	if (n != 0)
		return fail("round %u: %d unexpected packet(s) in the front end's rx queue", r, n);

	/* 2. Nothing pending on the epoll instance. */
	if (res->intr_ok) {
		n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, 0);
		if (n < 0)
			return fail("round %u: rte_epoll_wait(0): %d", r, n);
		if (n > 0)
			res->stale++;
	}

	/* 3. One packet, unannounced. */
	if (tx_one(be_port, be_tx_pool, r, RACE_BE_TO_FE, "back end tx") != 0)
		return -1;
	res->be_sent++;
	q = rte_eth_rx_queue_count(fe_port, 0);
	if (q == 0)
		res->not_pending++;

	/* 4. Arm, sleep. */
	t0 = now_s();
	if (!res->intr_ok) {
		out = RACE_NO_INTR;
		t1 = t0;
	} else {
		ret = rte_eth_dev_rx_intr_enable(fe_port, 0);
		if (ret == -EAGAIN) {
			t1 = now_s();
			out = RACE_EAGAIN;
		} else if (ret != 0) {
			return fail("round %u: rx_intr_enable: %d (%s)", r, ret, strerror(-ret));
		} else {
			n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, opts.timeout_ms);
			t1 = now_s();
			if (n < 0)
				return fail("round %u: rte_epoll_wait: %d", r, n);
			out = n == 0 ? RACE_LOST : RACE_SIGNAL;
		}
	}
	res->lat_us[res->done] = (t1 - t0) * 1e6;
	switch (out) {
	case RACE_LOST:
	case RACE_NO_INTR:
		res->lost++;
		break;
	case RACE_SIGNAL:
		res->signal++;
		break;
	case RACE_EAGAIN:
		res->eagain++;
		break;
	}

	/* 5. Disarm, take the packet. */
	if (res->intr_ok) {
		ret = rte_eth_dev_rx_intr_disable(fe_port, 0);
		if (ret != 0)
			return fail("round %u: rx_intr_disable after wake: %d", r, ret);
	}
	if (rx_one(fe_port, r, RACE_BE_TO_FE, "front end rx") != 0)
		return -1;
	res->fe_rcvd++;

	/* 6. The other direction. */
	if (tx_one(fe_port, fe_tx_pool, r, RACE_FE_TO_BE, "front end tx") != 0)
		return -1;
	res->fe_sent++;
	if (rx_one(be_port, r, RACE_FE_TO_BE, "back end rx") != 0)
		return -1;
	res->be_rcvd++;
	res->done++;
	return 0;
}

/*
 * One packet each way before the rounds, outside the counts. With event idx,
 * lib/vhost signals its first completion after the ring was set up whatever
 * used_event says (signalled_used_valid starts false), so the first packet
 * would be announced and would not race the arming. The disarm after it reads
 * that notification off the eventfd, and the zero-timeout wait takes any
 * event it left on the epoll instance.
 */
static int
warm_up(const struct race_result *res)
{
	struct rte_epoll_event ev[1];
	int n;

	if (res->intr_ok && rte_eth_dev_rx_intr_disable(fe_port, 0) != 0)
		return fail("warm-up: rx_intr_disable failed");
	fe_drain();
	if (tx_one(be_port, be_tx_pool, RACE_WARMUP_SEQ, RACE_BE_TO_FE, "warm-up back end tx") != 0)
		return -1;
	/* Before the receive, so the wakeup this may count finds its packet. */
	if (res->intr_ok && rte_eth_dev_rx_intr_disable(fe_port, 0) != 0)
		return fail("warm-up: rx_intr_disable failed");
	if (rx_one(fe_port, RACE_WARMUP_SEQ, RACE_BE_TO_FE, "warm-up front end rx") != 0 ||
	    tx_one(fe_port, fe_tx_pool, RACE_WARMUP_SEQ, RACE_FE_TO_BE, "warm-up front end tx") != 0 ||
	    rx_one(be_port, RACE_WARMUP_SEQ, RACE_FE_TO_BE, "warm-up back end rx") != 0)
		return -1;
	if (!res->intr_ok)
		return 0;
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, 0);
	printf("# warm-up: one packet each way; %s\n",
	       n > 0 ? "the back end announced its first completion (an event was pending)" :
	       "no event pending afterwards");
	return 0;
}

/* ---------------------------------------------------------------- checks */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
percentile(const double *sorted, unsigned long n, double p)
{
	unsigned long i;

	if (n == 0)
		return 0.0;
	i = (unsigned long)(p * (double)(n - 1) + 0.5);
	return sorted[i < n ? i : n - 1];
}

static int
check_counts(const struct race_result *res)
{
	struct rte_eth_stats fs, bs;
	uint64_t n = res->done;

	if (rte_eth_stats_get(fe_port, &fs) != 0 || rte_eth_stats_get(be_port, &bs) != 0)
		return fail("rte_eth_stats_get failed");
	printf("# stats front end: ipackets %" PRIu64 " opackets %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64 " rx_nombuf %" PRIu64 "\n",
	       fs.ipackets, fs.opackets, fs.ierrors, fs.oerrors, fs.rx_nombuf);
	printf("# stats back end:  ipackets %" PRIu64 " opackets %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64 "\n",
	       bs.ipackets, bs.opackets, bs.ierrors, bs.oerrors);
	if (bs.opackets != n || fs.ipackets != n)
		return fail("back end -> front end: back end opackets %" PRIu64 ", front end ipackets %" PRIu64 ", rounds %" PRIu64,
			    bs.opackets, fs.ipackets, n);
	if (fs.opackets != n || bs.ipackets != n)
		return fail("front end -> back end: front end opackets %" PRIu64 ", back end ipackets %" PRIu64 ", rounds %" PRIu64,
			    fs.opackets, bs.ipackets, n);
	if (fs.ierrors != 0 || fs.oerrors != 0 || fs.rx_nombuf != 0 || bs.ierrors != 0)
		return fail("errors counted: front end ierrors %" PRIu64 " oerrors %" PRIu64 " rx_nombuf %" PRIu64 ", back end ierrors %" PRIu64,
			    fs.ierrors, fs.oerrors, fs.rx_nombuf, bs.ierrors);
	printf("# counts: %" PRIu64 " packets each way, ethdev stats of both ports agree\n", n);
	return 0;
}

/*
 * A front end with the interrupt xstats must account for the rounds exactly:
 * every round armed once, and found its packet at the arming (it was in the
 * ring, unannounced), so every arming is a rescue; the back end never
 * notified (the queue was disarmed whenever it transmitted), so no round is
 * a back-end wakeup: a rescue is counted as a rescue, not as a wakeup.
 */
static int
check_xstats(const struct race_xstats *x0, const struct race_xstats *x1,
	     const struct race_result *res)
{
	uint64_t d[XS_MAX];
	unsigned int i;
	int ret = 0;

	if (!x1->have[XS_ARMS] || !res->intr_ok)
		return 0;
	for (i = 0; i < XS_MAX; i++)
		d[i] = x1->val[i] - x0->val[i];
	if (d[XS_ARMS] != res->done)
		ret = fail("xstats: %" PRIu64 " arms over %lu rounds", d[XS_ARMS], res->done);
	if (x1->have[XS_RESCUES] && d[XS_RESCUES] != res->signal + res->eagain)
		ret = fail("xstats: %" PRIu64 " rescues, but %lu rounds woke at once (%lu signal, %lu -EAGAIN)",
			   d[XS_RESCUES], res->signal + res->eagain, res->signal, res->eagain);
	if (x1->have[XS_NOTIFICATIONS] && d[XS_NOTIFICATIONS] != 0)
		ret = fail("xstats: the back end notified %" PRIu64 " time(s) while the queue was disarmed",
			   d[XS_NOTIFICATIONS]);
	if (x1->have[XS_WAKEUPS] && d[XS_WAKEUPS] != 0)
		ret = fail("xstats: %" PRIu64 " back-end wakeups; every round was a rescue",
			   d[XS_WAKEUPS]);
	if (x1->have[XS_WAKEUP_PACKETS] && d[XS_WAKEUP_PACKETS] != 0)
		ret = fail("xstats: %" PRIu64 " wakeup packets; every round was a rescue",
			   d[XS_WAKEUP_PACKETS]);
	if (x1->have[XS_SPURIOUS] && d[XS_SPURIOUS] != 0)
		ret = fail("xstats: %" PRIu64 " spurious wakeups; every wakeup had its packet",
			   d[XS_SPURIOUS]);
	return ret;
}

static void
print_summary(const struct race_result *res, const struct race_xstats *x0,
	      const struct race_xstats *x1)
{
	double *sorted;
	double med = 0, p99 = 0, mx = 0;
	unsigned int i;

	sorted = malloc(sizeof(*sorted) * (res->done ? res->done : 1));
	if (sorted != NULL && res->done != 0) {
		memcpy(sorted, res->lat_us, sizeof(*sorted) * res->done);
		qsort(sorted, res->done, sizeof(*sorted), cmp_double);
		med = percentile(sorted, res->done, 0.5);
		p99 = percentile(sorted, res->done, 0.99);
		mx = sorted[res->done - 1];
	}
	free(sorted);
	if (!res->intr_ok)
		printf("# front end cannot arm rx interrupts: %s; every round counts as lost\n",
		       res->no_intr_why);
	printf("RACE: frontend=%s rounds=%lu lost=%lu rescued_by_signal=%lu eagain=%lu",
	       fe_devargs, res->done, res->lost, res->signal, res->eagain);
	if (res->intr_ok)
		printf(" median_wakeup_us=%.1f p99_wakeup_us=%.1f max_wakeup_us=%.1f",
		       med, p99, mx);
	else
		printf(" median_wakeup_us=n/a p99_wakeup_us=n/a max_wakeup_us=n/a");
	printf(" stale_events=%lu not_pending=%lu xstats:", res->stale, res->not_pending);
	for (i = 0; i < XS_MAX; i++) {
		if (i == XS_PPN) {
			/* A ratio (scaled by the driver), not a counter: print as read. */
			if (x1->have[i])
				printf(" %s=%" PRIu64, xstat_short[i], x1->val[i]);
			else
				printf(" %s=n/a", xstat_short[i]);
		} else if (x1->have[i]) {
			printf(" %s=%" PRIu64, xstat_short[i], x1->val[i] - x0->val[i]);
		} else {
			printf(" %s=n/a", xstat_short[i]);
		}
	}
	printf("\n");
}

/* ------------------------------------------------------------------ main */

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --frontend DEVARGS [--name NAME] [--rounds N]\n"
		"          [--expect-lost N|any] [--timeout-ms MS] [--log-level LEVEL]\n"
		"DEVARGS may contain {sock}. --expect-lost N fails the run when more than\n"
		"N wakeups are lost (default 0); 'any' only reports them.\n", prog);
}

static int
parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "frontend", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "expect-lost", required_argument, NULL, 'x' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "restarts", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			opts.frontend = optarg;
			break;
		case 'n':
			opts.name = optarg;
			break;
		case 'r':
			if (parse_ulong(optarg, 1, 10000000, &opts.rounds) != 0)
				return -1;
			break;
		case 'x':
			if (strcmp(optarg, "any") == 0) {
				opts.expect_lost = RACE_EXPECT_ANY;
			} else {
				if (parse_ulong(optarg, 0, LONG_MAX, &v) != 0)
					return -1;
				opts.expect_lost = (long)v;
			}
			break;
		case 't':
			if (parse_ulong(optarg, 0, 60000, &v) != 0)
				return -1;
			opts.timeout_ms = (int)v;
			break;
		case 'l':
			opts.log_level = optarg;
			break;
		case 's':
			if (parse_ulong(optarg, 0, 1000, &opts.restarts) != 0)
				return -1;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc || opts.frontend == NULL)
		return -1;
	return 0;
}

static struct rte_mempool *
pool_create(const char *name)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, RACE_POOL_SIZE, 0, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE,
							 rte_socket_id());

	if (mp == NULL)
		fail("mempool %s: %s", name, rte_strerror(rte_errno));
	return mp;
}

static int
race_run(void)
{
	struct race_xstats x0, x1;
	struct race_result res;
	unsigned int fe_rx_ref, fe_tx_ref, fe_rx_now, fe_tx_now, be_tx_now;
	unsigned long r;
	int ret = -1;

	memset(&res, 0, sizeof(res));
	res.lat_us = calloc(opts.rounds + 20 * opts.restarts, sizeof(*res.lat_us));
	if (res.lat_us == NULL)
		return fail("out of memory for %lu rounds", opts.rounds);

	if (be_create() != 0)
		goto out;
	fe_rx_ref = rte_mempool_in_use_count(fe_rx_pool);
	fe_tx_ref = rte_mempool_in_use_count(fe_tx_pool);
	if (fe_create(&res) != 0 || warm_up(&res) != 0)
		goto out;
	rte_eth_stats_reset(fe_port);
	rte_eth_stats_reset(be_port);
	xstats_lookup(&x0);
	if (xstats_read(&x0) != 0)
		goto out;
	x1 = x0;
	printf("# front end '%s': rx interrupts %s, xstats %s; %lu rounds, epoll timeout %d ms\n",
	       fe_devargs, res.intr_ok ? "on" : "off",
	       x0.have[XS_ARMS] ? "present" : "absent", opts.rounds, opts.timeout_ms);

	for (r = 0; r < opts.rounds; r++) {
		if (round_run((uint32_t)r, &res) != 0)
			break;
	}
	if (xstats_read(&x1) != 0)
		x1 = x0;
	print_summary(&res, &x0, &x1);
	if (fail_reason[0] != '\0')
		goto out;

	if (check_counts(&res) != 0 || check_xstats(&x0, &x1, &res) != 0)
		goto out;
	if (res.stale != 0)
		fail("%lu round(s) found an event pending before arming (a notification while disarmed)",
		     res.stale);
	if (res.not_pending != 0)
		fail("%lu round(s): rx_queue_count said 0 with the packet in the ring", res.not_pending);
	if (opts.expect_lost != RACE_EXPECT_ANY && res.lost > (unsigned long)opts.expect_lost)
		fail("%lu of %lu wakeups lost (at most %ld expected)", res.lost, res.done,
		     opts.expect_lost);
	if (fail_reason[0] != '\0')
		goto out;

	/*
	 * The interrupt fds registered once must keep working across port
	 * stop/start: restart the front end, warm up (lib/vhost announces its
	 * first completion on a fresh ring), and race again, with no
	 * re-registration. Only lost wakeups are judged here.
	 */
	for (r = 0; r < opts.restarts && res.intr_ok; r++) {
		unsigned long lost0 = res.lost, i;

		if (rte_eth_dev_stop(fe_port) != 0 || rte_eth_dev_start(fe_port) != 0) {
			fail("restart %lu: front end stop/start failed", r + 1);
			goto out;
		}
		if (wait_link_up(fe_port, "front end", 10.0) != 0 ||
		    wait_link_up(be_port, "back end", 10.0) != 0 || warm_up(&res) != 0)
			goto out;
		for (i = 0; i < 20; i++)
			if (round_run((uint32_t)(opts.rounds + r * 20 + i), &res) != 0)
				goto out;
		printf("# restart %lu: 20 rounds, %lu lost\n", r + 1, res.lost - lost0);
		if (opts.expect_lost != RACE_EXPECT_ANY && res.lost - lost0 > 0) {
			fail("restart %lu: %lu of 20 wakeups lost after stop/start", r + 1,
			     res.lost - lost0);
			goto out;
		}
	}

	/* Every front-end mbuf back home after stop and close. */
	be_tx_now = rte_mempool_in_use_count(be_tx_pool);
	if (be_tx_now != 0)
		fail("back end tx pool: %u mbufs in use after the rounds", be_tx_now);
	fe_intr_unregister();
	port_remove(fe_name, &fe_port, &fe_probed);
	fe_rx_now = rte_mempool_in_use_count(fe_rx_pool);
	fe_tx_now = rte_mempool_in_use_count(fe_tx_pool);
	printf("# front end mempools after stop/close: rx %u in use (%u before), tx %u in use (%u before)\n",
	       fe_rx_now, fe_rx_ref, fe_tx_now, fe_tx_ref);
	if (fe_rx_now != fe_rx_ref || fe_tx_now != fe_tx_ref)
		fail("front end leaked mbufs: rx pool %u in use (start %u), tx pool %u (start %u)",
		     fe_rx_now, fe_rx_ref, fe_tx_now, fe_tx_ref);
	ret = fail_reason[0] == '\0' ? 0 : -1;
out:
	free(res.lat_us);
	return ret;
}

int
main(int argc, char **argv)
{
	char lvl[160], name_buf[64];
	char *eal_argv[16];
	int eal_argc = 0, ret;
	size_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A front end writing to a dead vhost-user socket must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if (parse_args(argc, argv) != 0) {
		usage(argv[0]);
		return 2;
	}
	if (opts.name == NULL) {
		snprintf(name_buf, sizeof(name_buf), "race_%d", (int)getpid());
		opts.name = name_buf;
	}
	if (mkdir(RACE_RUN_DIR, 0755) != 0 && errno != EEXIST) {
		printf("RESULT: FAIL: mkdir %s: %s\n", RACE_RUN_DIR, strerror(errno));
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/%s.sock", RACE_RUN_DIR, opts.name);
	snprintf(file_prefix, sizeof(file_prefix), "vnapi_%s", opts.name);
	unlink(sock_path); /* left by a killed run */
	if (race_subst(fe_devargs, sizeof(fe_devargs), opts.frontend) != 0) {
		printf("RESULT: FAIL: --frontend too long\n");
		return 1;
	}
	len = strcspn(fe_devargs, ",");
	snprintf(fe_name, sizeof(fe_name), "%.*s", (int)len, fe_devargs);

	snprintf(lvl, sizeof(lvl), "--log-level=%s", opts.log_level);
	eal_argv[eal_argc++] = argv[0];
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-huge";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"-m";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"512";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-pci";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--lcores";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"0@0";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--file-prefix";
	eal_argv[eal_argc++] = file_prefix;
	eal_argv[eal_argc++] = lvl;
	eal_argv[eal_argc] = NULL;

	printf("# race: front end '%s', back end %s,iface=%s, file prefix %s\n",
	       fe_devargs, RACE_BE_NAME, sock_path, file_prefix);
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		printf("RESULT: FAIL: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}

	fe_rx_pool = pool_create("race_fe_rx");
	fe_tx_pool = pool_create("race_fe_tx");
	be_rx_pool = pool_create("race_be_rx");
	be_tx_pool = pool_create("race_be_tx");
	ret = -1;
	if (fe_rx_pool != NULL && fe_tx_pool != NULL && be_rx_pool != NULL &&
	    be_tx_pool != NULL)
		ret = race_run();

	fe_intr_unregister();
	port_remove(fe_name, &fe_port, &fe_probed);
	port_remove(RACE_BE_NAME, &be_port, &be_probed);
	rte_mempool_free(fe_rx_pool);
	rte_mempool_free(fe_tx_pool);
	rte_mempool_free(be_rx_pool);
	rte_mempool_free(be_tx_pool);
	rte_eal_cleanup();
	unlink(sock_path);
	if (ret == 0 && fail_reason[0] == '\0') {
		printf("RESULT: PASS\n");
		return 0;
	}
	printf("RESULT: FAIL: %s\n", fail_reason[0] ? fail_reason : "unknown");
	return 1;
}
