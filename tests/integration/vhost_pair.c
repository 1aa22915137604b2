/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * vhost_pair: a one-process integration test of a vhost-user front end
 * (net_vnapi, or DPDK's net_virtio_user as the reference) against DPDK's
 * net_vhost back end.
 *
 * Both ports live in this process and are driven from the main lcore only:
 * net_vhost's rx burst dequeues from the guest's tx ring in the caller's
 * thread and its tx burst enqueues into the guest's rx ring, so traffic both
 * ways is deterministic and needs no second lcore.  The vhost-user control
 * plane runs in the vhost library's own thread.
 *
 * Every packet is Ethernet + IPv4 + UDP with a payload that carries a magic,
 * a sequence number, the frame length, the queue id and the direction,
 * followed by a byte pattern derived from all of them.  The receiver
 * regenerates the whole frame and compares every byte, and checks that the
 * sequence numbers arrive in order on the queue they were sent to.
 *
 * Usage: vhost_pair --scenario NAME --frontend DEVARGS --name TESTNAME
 *                   [--queues N] [--packets N] [--cycles N] [--timeout S]
 *                   [--bad DEVARGS]... [--log-level L] [--eal ARG]...
 *                   [--expect-indirect 0|1]
 * DEVARGS may hold {sock} (the back end's socket path) and {queues}.
 * Exit status 0 only when the last line is "RESULT: PASS".
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <limits.h>
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
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>
#include <rte_eth_vhost.h>
#include <rte_vhost.h>

#include "vnapi_compat.h"

#define PAIR_RUN_DIR        "/run/vnapi-test"
#define PAIR_BE_NAME        "net_vhost0"
#define PAIR_BURST          32
#define PAIR_TX_ROUNDS      16
#define PAIR_MAX_QUEUES     8
#define PAIR_MAX_FLOWS      (2 * PAIR_MAX_QUEUES)
#define PAIR_MAX_BAD        32
#define PAIR_MAX_EAL_EXTRA  16
#define PAIR_MAX_FRAME      9600
#define PAIR_POOL_SIZE      8191
#define PAIR_JUMBO_MTU      9000
#define PAIR_MAGIC          0x56504149u /* "VPAI" */
#define PAIR_SEGS_MAX       64          /* net_vnapi's tx_desc_lim.nb_seg_max */

/* Offsets inside a test frame. */
#define PAIR_L2_LEN         ((uint32_t)sizeof(struct rte_ether_hdr))
#define PAIR_L3_OFF         PAIR_L2_LEN
#define PAIR_L4_OFF         (PAIR_L3_OFF + (uint32_t)sizeof(struct rte_ipv4_hdr))
#define PAIR_PL_OFF         (PAIR_L4_OFF + (uint32_t)sizeof(struct rte_udp_hdr))
#define PAIR_PAT_OFF        (PAIR_PL_OFF + (uint32_t)sizeof(struct pair_payload))
#define PAIR_MIN_FRAME      60

enum pair_dir {
	PAIR_FE_TO_BE = 1,
	PAIR_BE_TO_FE = 2,
};

/* The start of every payload; host byte order (both ends are this process). */
struct __rte_packed_begin pair_payload {
	uint32_t magic;
	uint32_t seq;
	uint16_t len;
	uint8_t queue;
	uint8_t dir;
} __rte_packed_end;

/* One direction on one queue pair: a sender queue and a receiver queue. */
struct pair_flow {
	char name[32];
	uint16_t tx_port;
	uint16_t rx_port;
	uint8_t queue;
	uint8_t dir;
	uint32_t total;
	uint32_t built;
	uint32_t sent;
	uint32_t received;
	const uint16_t *sizes;
	unsigned int nb_sizes;
	struct rte_mempool *tx_pool;
	struct rte_mbuf *pend[PAIR_BURST];
	uint16_t pend_n;
	uint16_t pend_off;
	uint64_t bytes_sent;
	uint64_t bytes_rcvd;
	uint64_t tx_partial;
	uint32_t max_segs_sent;
	uint32_t max_segs_rcvd;
	bool segmented;     /* tx: 2..PAIR_SEGS_MAX segments (frame_to_segs()) */
	uint32_t no_headroom; /* tx: segmented packets sent with no headroom */
};

struct pair_opts {
	const char *scenario;
	const char *frontend;
	const char *name;
	const char *log_level;
	unsigned int queues;
	unsigned int packets;
	unsigned int cycles;
	double timeout;
	const char *bad[PAIR_MAX_BAD];
	unsigned int nb_bad;
	const char *eal_extra[PAIR_MAX_EAL_EXTRA];
	unsigned int nb_eal_extra;
	bool tx_after_linkdown;
	bool sigpipe_ok;
	uint16_t sizes[16];
	unsigned int nb_sizes;
	uint64_t features_on;    /* virtio feature bits the back end must see negotiated */
	uint64_t features_off;   /* ... and must not */
	int expect_indirect; /* segs: tx_q0_indirect must be all (1) or 0 (0); -1 unchecked */
};

static struct pair_opts opts = {
	.scenario = NULL,
	.frontend = NULL,
	.name = NULL,
	.log_level = "*:warning",
	.queues = 1,
	.packets = 0,
	.cycles = 20,
	.timeout = 60.0,
	.expect_indirect = -1,
};

static char sock_path[PATH_MAX];
static char file_prefix[128];
static char fe_devargs[1024];
static char fe_name[RTE_DEV_NAME_MAX_LEN];
static uint16_t be_port = RTE_MAX_ETHPORTS;
static uint16_t fe_port = RTE_MAX_ETHPORTS;
static bool be_probed;
static bool fe_probed;

enum pair_pool_id {
	POOL_FE_RX,
	POOL_BE_RX,
	POOL_FE_TX,
	POOL_BE_TX,
	POOL_MAX,
};
static const char *const pool_names[POOL_MAX] = {
	[POOL_FE_RX] = "pair_fe_rx",
	[POOL_BE_RX] = "pair_be_rx",
	[POOL_FE_TX] = "pair_fe_tx",
	[POOL_BE_TX] = "pair_be_tx",
};
static struct rte_mempool *pools[POOL_MAX];

static unsigned int tap_n;
static char fail_reason[512];
static uint8_t frame_buf[PAIR_MAX_FRAME];
static uint8_t expect_buf[PAIR_MAX_FRAME];
static uint32_t lsc_events;
static volatile sig_atomic_t sigpipes;

/* ---------------------------------------------------------------- output */

static void __rte_format_printf(2, 3)
tap(bool ok, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("%s %u - %s\n", ok ? "ok" : "not ok", ++tap_n, msg);
	if (!ok && fail_reason[0] == '\0')
		snprintf(fail_reason, sizeof(fail_reason), "%s", msg);
	fflush(stdout);
}

static int __rte_format_printf(1, 2)
fail(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tap(false, "%s", msg);
	return -1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Pause between polls of something that changes in another thread. */
static void
poll_pause(void)
{
	rte_delay_us_sleep(1000);
}

/* -------------------------------------------------------------- frames */

static uint8_t
pat_byte(uint32_t seq, uint8_t queue, uint8_t dir, uint32_t off)
{
	return (uint8_t)(off * 7u + seq * 13u + queue * 29u + dir * 101u +
			 (off >> 8) * 3u);
}

static void
frame_fill(uint8_t *buf, uint32_t len, uint32_t seq, uint8_t queue,
	   uint8_t dir)
{
	static const struct rte_ether_addr fe_mac = {
		.addr_bytes = { 0x02, 0x76, 0x6e, 0x00, 0x00, 0x01 } };
	static const struct rte_ether_addr be_mac = {
		.addr_bytes = { 0x02, 0x76, 0x6e, 0x00, 0x00, 0x02 } };
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + PAIR_L3_OFF);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(buf + PAIR_L4_OFF);
	struct pair_payload pl = {
		.magic = PAIR_MAGIC,
		.seq = seq,
		.len = (uint16_t)len,
		.queue = queue,
		.dir = dir,
	};
	uint32_t i;

	rte_ether_addr_copy(dir == PAIR_FE_TO_BE ? &be_mac : &fe_mac,
			    &eth->dst_addr);
	rte_ether_addr_copy(dir == PAIR_FE_TO_BE ? &fe_mac : &be_mac,
			    &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);

	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - PAIR_L2_LEN));
	ip->packet_id = rte_cpu_to_be_16((uint16_t)seq);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, dir, queue, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, dir, queue, 2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);

	udp->src_port = rte_cpu_to_be_16((uint16_t)(4000 + queue));
	udp->dst_port = rte_cpu_to_be_16((uint16_t)(5000 + queue));
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - PAIR_L4_OFF));
	udp->dgram_cksum = 0;

	memcpy(buf + PAIR_PL_OFF, &pl, sizeof(pl));
	for (i = PAIR_PAT_OFF; i < len; i++)
		buf[i] = pat_byte(seq, queue, dir, i);
}

/* Append segment @p m holding @p n bytes to the chain head..last. */
static void
chain_append(struct rte_mbuf **head, struct rte_mbuf **last, struct rte_mbuf *m, uint32_t n)
{
	m->data_len = (uint16_t)n;
	m->pkt_len = n;
	if (*head == NULL) {
		*head = m;
	} else {
		(*last)->next = m;
		(*head)->nb_segs++;
		(*head)->pkt_len += n;
	}
	*last = m;
}

/* A frame as a chain of mbufs holding at most seg_max bytes each. */
static struct rte_mbuf *
frame_to_mbuf(struct rte_mempool *mp, const uint8_t *buf, uint32_t len,
	      uint32_t seg_max)
{
	struct rte_mbuf *head = NULL, *last = NULL, *m;
	uint32_t off = 0, n;

	while (off < len) {
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		n = RTE_MIN(len - off, (uint32_t)rte_pktmbuf_tailroom(m));
		n = RTE_MIN(n, seg_max);
		memcpy(rte_pktmbuf_mtod(m, void *), buf + off, n);
		chain_append(&head, &last, m, n);
		off += n;
	}
	return head;
}

/*
 * Packet @p seq of a segmented flow: how many segments (2..PAIR_SEGS_MAX,
 * mostly 2..17, every 50th the maximum) and whether the first segment has
 * no headroom (every third: the driver cannot put the virtio-net header in
 * front of the data and chains a separate header descriptor).
 */
static uint32_t
segs_count(uint32_t seq, uint32_t len)
{
	uint32_t n = seq % 50 == 7 ? PAIR_SEGS_MAX : 2 + seq % 16;

	return RTE_MIN(n, len);
}

static bool
segs_no_headroom(uint32_t seq)
{
	return seq % 3 == 1;
}

/* A frame as a chain of @p nsegs mbufs of (nearly) equal length. */
static struct rte_mbuf *
frame_to_segs(struct rte_mempool *mp, const uint8_t *buf, uint32_t len, uint32_t nsegs,
	      bool no_headroom)
{
	struct rte_mbuf *head = NULL, *last = NULL, *m;
	uint32_t off = 0, i, n;

	for (i = 0; i < nsegs; i++) {
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (i == 0 && no_headroom)
			m->data_off = 0;
		/* Segment i holds bytes [len * i / nsegs, len * (i + 1) / nsegs). */
		n = (uint32_t)((uint64_t)len * (i + 1) / nsegs) - off;
		memcpy(rte_pktmbuf_mtod(m, void *), buf + off, n);
		chain_append(&head, &last, m, n);
		off += n;
	}
	return head;
}

static uint32_t
flow_size(const struct pair_flow *f, uint32_t seq)
{
	return f->sizes[seq % f->nb_sizes];
}

/* Check one received packet against what flow f must deliver next. */
static int
flow_verify(struct pair_flow *f, const struct rte_mbuf *m)
{
	const struct rte_mbuf *s;
	const uint8_t *data;
	struct pair_payload pl;
	uint32_t segs = 0, sum = 0, exp_len, i;

	for (s = m; s != NULL; s = s->next) {
		segs++;
		sum += s->data_len;
	}
	if (segs != m->nb_segs || sum != m->pkt_len)
		return fail("%s: malformed mbuf: nb_segs %u (chain %u), pkt_len %u (sum of data_len %u)",
			    f->name, m->nb_segs, segs, m->pkt_len, sum);
	if (m->pkt_len < PAIR_PAT_OFF || m->pkt_len > PAIR_MAX_FRAME)
		return fail("%s: packet %u: unexpected length %u",
			    f->name, f->received, m->pkt_len);
	data = rte_pktmbuf_read(m, 0, m->pkt_len, frame_buf);
	memcpy(&pl, data + PAIR_PL_OFF, sizeof(pl));
	if (pl.magic != PAIR_MAGIC || pl.dir != f->dir || pl.queue != f->queue)
		return fail("%s: packet %u: foreign packet (magic %#x dir %u queue %u)",
			    f->name, f->received, pl.magic, pl.dir, pl.queue);
	if (pl.seq != f->received)
		return fail("%s: order: expected seq %u, got %u",
			    f->name, f->received, pl.seq);
	exp_len = flow_size(f, pl.seq);
	if (m->pkt_len != exp_len)
		return fail("%s: seq %u: length %u, sent %u",
			    f->name, pl.seq, m->pkt_len, exp_len);
	frame_fill(expect_buf, exp_len, pl.seq, f->queue, f->dir);
	if (memcmp(expect_buf, data, exp_len) != 0) {
		for (i = 0; i < exp_len && expect_buf[i] == data[i]; i++)
			;
		return fail("%s: seq %u (len %u, %u segs): byte %u is %#x, sent %#x",
			    f->name, pl.seq, exp_len, segs, i, data[i],
			    expect_buf[i]);
	}
	f->received++;
	f->bytes_rcvd += exp_len;
	if (segs > f->max_segs_rcvd)
		f->max_segs_rcvd = segs;
	return 0;
}

static void
flow_init(struct pair_flow *f, uint8_t dir, uint8_t queue, uint32_t total,
	  const uint16_t *sizes, unsigned int nb_sizes)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s q%u",
		 dir == PAIR_FE_TO_BE ? "fe->be" : "be->fe", queue);
	f->dir = dir;
	f->queue = queue;
	f->total = total;
	f->sizes = sizes;
	f->nb_sizes = nb_sizes;
	if (dir == PAIR_FE_TO_BE) {
		f->tx_port = fe_port;
		f->rx_port = be_port;
		f->tx_pool = pools[POOL_FE_TX];
	} else {
		f->tx_port = be_port;
		f->rx_port = fe_port;
		f->tx_pool = pools[POOL_BE_TX];
	}
}

static void
flows_release(struct pair_flow *fl, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		while (fl[i].pend_off < fl[i].pend_n)
			rte_pktmbuf_free(fl[i].pend[fl[i].pend_off++]);
		fl[i].pend_n = fl[i].pend_off = 0;
	}
}

/* Make the next burst of flow f; 0 or -1. */
static int
flow_build(struct pair_flow *f)
{
	uint32_t k = RTE_MIN((uint32_t)PAIR_BURST, f->total - f->built);
	uint32_t i, len;

	for (i = 0; i < k; i++) {
		len = flow_size(f, f->built);
		frame_fill(frame_buf, len, f->built, f->queue, f->dir);
		if (f->segmented) {
			f->pend[i] = frame_to_segs(f->tx_pool, frame_buf, len,
						   segs_count(f->built, len),
						   segs_no_headroom(f->built));
			if (segs_no_headroom(f->built))
				f->no_headroom++;
		} else {
			f->pend[i] = frame_to_mbuf(f->tx_pool, frame_buf, len, UINT32_MAX);
		}
		if (f->pend[i] == NULL) {
			f->pend_n = (uint16_t)i;
			f->pend_off = 0;
			return fail("%s: tx pool %s exhausted at seq %u (in use %u)",
				    f->name, f->tx_pool->name, f->built,
				    rte_mempool_in_use_count(f->tx_pool));
		}
		if (f->pend[i]->nb_segs > f->max_segs_sent)
			f->max_segs_sent = f->pend[i]->nb_segs;
		f->built++;
	}
	f->pend_n = (uint16_t)k;
	f->pend_off = 0;
	return 0;
}

/* Receive on flow f's queue; every packet must belong to f. */
static int
flow_rx(struct pair_flow *f, uint16_t *got)
{
	struct rte_mbuf *rx[PAIR_BURST];
	uint16_t n, i;
	int ret = 0;

	n = rte_eth_rx_burst(f->rx_port, f->queue, rx, PAIR_BURST);
	for (i = 0; i < n; i++) {
		if (ret == 0 && f->received >= f->total)
			ret = fail("%s: extra packet after all %u arrived",
				   f->name, f->total);
		if (ret == 0)
			ret = flow_verify(f, rx[i]);
		rte_pktmbuf_free(rx[i]);
	}
	if (got != NULL)
		*got = n;
	return ret;
}

/*
 * Run all flows to completion, interleaved in this thread: tx a burst
 * (retrying what a partial burst left), then poll the receiving queue.
 */
static int
flows_run(struct pair_flow *fl, unsigned int n, double timeout)
{
	double t0 = now_s(), deadline = t0 + timeout, t;
	unsigned int i, r;
	uint16_t nb, got, want, k;
	bool done;

	for (;;) {
		done = true;
		for (i = 0; i < n; i++) {
			struct pair_flow *f = &fl[i];

			/*
			 * Several bursts per receive poll, so that the ring
			 * fills and partial bursts are exercised and retried.
			 */
			for (r = 0; r < PAIR_TX_ROUNDS && f->sent < f->total;
			     r++) {
				if (f->pend_off == f->pend_n &&
				    flow_build(f) != 0)
					goto fail;
				want = (uint16_t)(f->pend_n - f->pend_off);
				nb = rte_eth_tx_burst(f->tx_port, f->queue,
						      f->pend + f->pend_off,
						      want);
				for (k = 0; k < nb; k++) {
					f->bytes_sent +=
						f->pend[f->pend_off]->pkt_len;
					f->pend_off++;
					f->sent++;
				}
				if (nb < want) {
					f->tx_partial++;
					break;
				}
			}
			if (flow_rx(f, NULL) != 0)
				goto fail;
			if (f->received < f->total)
				done = false;
		}
		if (done)
			break;
		if (now_s() > deadline) {
			for (i = 0; i < n; i++)
				printf("# %s: sent %u received %u of %u\n",
				       fl[i].name, fl[i].sent, fl[i].received,
				       fl[i].total);
			fail("traffic did not complete within %.0f s", timeout);
			goto fail;
		}
	}
	t = now_s() - t0;

	/* Nothing more may arrive: no duplicates, no strays. */
	deadline = now_s() + 0.05;
	while (now_s() < deadline) {
		for (i = 0; i < n; i++) {
			if (flow_rx(&fl[i], &got) != 0)
				goto fail;
		}
	}
	for (i = 0; i < n; i++)
		printf("# %-10s %8u pkts %10" PRIu64 " bytes, partial tx bursts %" PRIu64 ", max segs tx %u rx %u\n",
		       fl[i].name, fl[i].received, fl[i].bytes_rcvd,
		       fl[i].tx_partial, fl[i].max_segs_sent,
		       fl[i].max_segs_rcvd);
	printf("# traffic took %.3f s\n", t);
	return 0;
fail:
	flows_release(fl, n);
	return -1;
}

/* Expand {sock} and {queues} in a devargs template. */
static int
pair_subst(char *out, size_t size, const char *in)
{
	size_t o = 0, l;
	char qbuf[16];
	const char *rep;

	snprintf(qbuf, sizeof(qbuf), "%u", opts.queues);
	while (*in != '\0') {
		rep = NULL;
		if (strncmp(in, "{sock}", 6) == 0) {
			rep = sock_path;
			in += 6;
		} else if (strncmp(in, "{queues}", 8) == 0) {
			rep = qbuf;
			in += 8;
		}
		if (rep != NULL) {
			l = strlen(rep);
			if (o + l >= size)
				return -1;
			memcpy(out + o, rep, l);
			o += l;
			continue;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = *in++;
	}
	out[o] = '\0';
	return 0;
}

/* ---------------------------------------------------------- resources */

static int
count_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return n - 1; /* not the directory stream's own fd */
}

static void
pools_in_use(unsigned int out[POOL_MAX])
{
	unsigned int i;

	for (i = 0; i < POOL_MAX; i++)
		out[i] = rte_mempool_in_use_count(pools[i]);
}

static void
print_in_use(const char *what, const unsigned int v[POOL_MAX], int fds)
{
	unsigned int i;

	printf("# %s: fds %d, mbufs in use:", what, fds);
	for (i = 0; i < POOL_MAX; i++)
		printf(" %s=%u", pool_names[i], v[i]);
	printf("\n");
}

/*
 * Poll (the vhost thread closes fds and frees nothing of ours, but it
 * does close kick/call fds asynchronously) until the in-use counts and the fd
 * count (unless ref_fds < 0) equal the references, or the deadline passes.
 */
static int
wait_resources(const char *what, const unsigned int ref[POOL_MAX], int ref_fds,
	       double timeout)
{
	double deadline = now_s() + timeout;
	unsigned int cur[POOL_MAX], i;
	int fds;
	bool same;

	for (;;) {
		pools_in_use(cur);
		fds = count_fds();
		same = ref_fds < 0 || fds == ref_fds;
		for (i = 0; i < POOL_MAX; i++)
			same = same && cur[i] == ref[i];
		if (same)
			return 0;
		if (now_s() > deadline)
			break;
		poll_pause();
	}
	print_in_use("expected", ref, ref_fds);
	print_in_use("found   ", cur, fds);
	for (i = 0; i < POOL_MAX; i++) {
		if (cur[i] != ref[i])
			return fail("%s: mempool %s in use %u, expected %u",
				    what, pool_names[i], cur[i], ref[i]);
	}
	return fail("%s: %d open fds, expected %d", what, fds, ref_fds);
}

/*
 * Stop and remove the front end, then every mempool must come back to
 * @p ref0 (its value before the probe), and the open fd count to @p ref_fds
 * unless it is -1. Ends a scenario: returns its result.
 */
static int
fe_remove_check(const unsigned int ref0[POOL_MAX], int ref_fds)
{
	int ret = rte_eth_dev_stop(fe_port);

	if (ret != 0)
		return fail("front end stop: %d", ret);
	ret = rte_eal_hotplug_remove("vdev", fe_name);
	fe_probed = false;
	fe_port = RTE_MAX_ETHPORTS;
	if (ret != 0)
		return fail("rte_dev_remove of the front end: %d", ret);
	if (wait_resources("front end removed", ref0, ref_fds, 5.0) != 0)
		return -1;
	tap(true, "front end removed: every mempool%s back to its value before probe",
	    ref_fds >= 0 ? " and the fd count" : "");
	return fail_reason[0] == '\0' ? 0 : -1;
}

/* --------------------------------------------------------------- ports */

static int
wait_link(uint16_t port, const char *who, bool up, double timeout)
{
	double t0 = now_s(), deadline = t0 + timeout;
	struct rte_eth_link link;

	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    (link.link_status == RTE_ETH_LINK_UP) == up)
			break;
		if (now_s() > deadline)
			return fail("%s link not %s within %.0f s", who,
				    up ? "up" : "down", timeout);
		poll_pause();
	}
	printf("# %s link %s after %.3f s (speed %u)\n", who,
	       up ? "up" : "down", now_s() - t0, link.link_speed);
	return 0;
}

/* The feature bits the front end negotiated, as the back end sees them. */
static int
check_features(void)
{
	int vid = rte_eth_vhost_get_vid_from_port_id(be_port);
	uint64_t f = 0;

	if (opts.features_on == 0 && opts.features_off == 0)
		return 0;
	if (vid < 0 || rte_vhost_get_negotiated_features(vid, &f) != 0)
		return fail("cannot read the negotiated features (vid %d)", vid);
	if ((f & opts.features_on) != opts.features_on || (f & opts.features_off) != 0)
		return fail("negotiated features 0x%" PRIx64 ": expected bits 0x%" PRIx64
			    " set and 0x%" PRIx64 " clear", f, opts.features_on,
			    opts.features_off);
	printf("# negotiated features 0x%" PRIx64 " (bits 0x%" PRIx64 " set, 0x%" PRIx64
	       " clear, as expected)\n", f, opts.features_on, opts.features_off);
	return 0;
}

static int
wait_links_up(void)
{
	if (wait_link(be_port, "back end", true, 10.0) != 0)
		return -1;
	if (wait_link(fe_port, "front end", true, 10.0) != 0)
		return -1;
	return check_features();
}

static int
port_setup(uint16_t port, const char *who, uint16_t nb_q, uint32_t mtu,
	   bool lsc, struct rte_mempool *rx_pool)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t q;
	int ret;

	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return fail("%s: dev_info_get: %d", who, ret);
	memset(&conf, 0, sizeof(conf));
	if (mtu != 0) {
		if (mtu > info.max_mtu)
			return fail("%s: max_mtu %u < %u", who, info.max_mtu,
				    mtu);
		conf.rxmode.mtu = mtu;
		if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
		if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
			conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	}
	conf.intr_conf.lsc = lsc ? 1 : 0;
	printf("# %s: port %u driver %s, max_mtu %u, max_rx_pktlen %u, rx_offload_capa %#" PRIx64 ", tx_offload_capa %#" PRIx64 ", config mtu %u rx_offloads %#" PRIx64 " tx_offloads %#" PRIx64 " lsc %d\n",
	       who, port, info.driver_name, info.max_mtu, info.max_rx_pktlen,
	       info.rx_offload_capa, info.tx_offload_capa, conf.rxmode.mtu,
	       conf.rxmode.offloads, conf.txmode.offloads, conf.intr_conf.lsc);
	ret = rte_eth_dev_configure(port, nb_q, nb_q, &conf);
	if (ret != 0)
		return fail("%s: configure %u queues: %d", who, nb_q, ret);
	for (q = 0; q < nb_q; q++) {
		ret = rte_eth_rx_queue_setup(port, q, 0, rte_socket_id(), NULL,
					     rx_pool);
		if (ret != 0)
			return fail("%s: rx queue %u setup: %d", who, q, ret);
		ret = rte_eth_tx_queue_setup(port, q, 0, rte_socket_id(), NULL);
		if (ret != 0)
			return fail("%s: tx queue %u setup: %d", who, q, ret);
	}
	ret = rte_eth_dev_start(port);
	if (ret != 0)
		return fail("%s: start: %d", who, ret);
	return 0;
}

static int
be_create(uint16_t nb_q, uint32_t mtu)
{
	char args[PATH_MAX + 64];
	int ret;

	snprintf(args, sizeof(args), "%s,iface=%s,queues=%u", PAIR_BE_NAME,
		 sock_path, nb_q);
	ret = rte_dev_probe(args);
	if (ret != 0)
		return fail("probe back end '%s': %d", args, ret);
	be_probed = true;
	if (rte_eth_dev_get_port_by_name(PAIR_BE_NAME, &be_port) != 0)
		return fail("back end probed but no port named %s",
			    PAIR_BE_NAME);
	return port_setup(be_port, "back end", nb_q, mtu, false,
			  pools[POOL_BE_RX]);
}

static int
fe_probe(void)
{
	int ret = rte_dev_probe(fe_devargs);

	if (ret != 0)
		return fail("probe front end '%s': %d (%s)", fe_devargs, ret,
			    strerror(-ret));
	fe_probed = true;
	if (rte_eth_dev_get_port_by_name(fe_name, &fe_port) != 0)
		return fail("front end probed but no port named %s", fe_name);
	return 0;
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
	}
	ret = rte_eal_hotplug_remove("vdev", name);
	if (ret != 0)
		printf("# remove %s: %d\n", name, ret);
	*port = RTE_MAX_ETHPORTS;
	*probed = false;
}

/* ---------------------------------------------------------------- stats */

/*
 * A per-queue packet counter by xstat name: struct rte_eth_stats has per-queue
 * arrays only up to DPDK 25.07. The front ends (vnapi, virtio_user) name
 * theirs "rx_q0_good_packets"; net_vhost has ethdev's generic ones
 * ("rx_q0_packets", from its stats_get, so reset with the port's stats, unlike
 * the vhost library's own vring counters). UINT64_MAX when there is none.
 */
static uint64_t
queue_packets(uint16_t port, const char *dir, unsigned int q)
{
	char name[RTE_ETH_XSTATS_NAME_SIZE];
	uint64_t id, v;

	snprintf(name, sizeof(name), port == be_port ? "%s_q%u_packets" : "%s_q%u_good_packets",
		 dir, q);
	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return UINT64_MAX;
	return v;
}

static int
check_stats(const struct pair_flow *fl, unsigned int n)
{
	struct rte_eth_stats fs, bs;
	uint64_t fe_o = 0, fe_i = 0, be_o = 0, be_i = 0;
	uint64_t fe_ob = 0, fe_ib = 0;
	uint64_t fq_o[PAIR_MAX_QUEUES] = { 0 }, fq_i[PAIR_MAX_QUEUES] = { 0 };
	unsigned int i, q;
	bool ok = true;

	if (rte_eth_stats_get(fe_port, &fs) != 0 ||
	    rte_eth_stats_get(be_port, &bs) != 0)
		return fail("rte_eth_stats_get failed");
	for (i = 0; i < n; i++) {
		if (fl[i].dir == PAIR_FE_TO_BE) {
			fe_o += fl[i].received;
			fe_ob += fl[i].bytes_rcvd;
			fq_o[fl[i].queue] += fl[i].received;
		} else {
			fe_i += fl[i].received;
			fe_ib += fl[i].bytes_rcvd;
			fq_i[fl[i].queue] += fl[i].received;
		}
	}
	be_i = fe_o;
	be_o = fe_i;
	printf("# stats front end: ipackets %" PRIu64 " opackets %" PRIu64 " ibytes %" PRIu64 " obytes %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64 " imissed %" PRIu64 " rx_nombuf %" PRIu64 "\n",
	       fs.ipackets, fs.opackets, fs.ibytes, fs.obytes, fs.ierrors,
	       fs.oerrors, fs.imissed, fs.rx_nombuf);
	printf("# stats back end:  ipackets %" PRIu64 " opackets %" PRIu64 " ibytes %" PRIu64 " obytes %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64 " imissed %" PRIu64 " rx_nombuf %" PRIu64 "\n",
	       bs.ipackets, bs.opackets, bs.ibytes, bs.obytes, bs.ierrors,
	       bs.oerrors, bs.imissed, bs.rx_nombuf);

	tap(fs.opackets == fe_o, "front end opackets %" PRIu64 " == %" PRIu64,
	    fs.opackets, fe_o);
	tap(bs.ipackets == be_i, "back end ipackets %" PRIu64 " == %" PRIu64,
	    bs.ipackets, be_i);
	tap(bs.opackets == be_o, "back end opackets %" PRIu64 " == %" PRIu64,
	    bs.opackets, be_o);
	tap(fs.ipackets == fe_i, "front end ipackets %" PRIu64 " == %" PRIu64,
	    fs.ipackets, fe_i);
	tap(fs.obytes == fe_ob && bs.ibytes == fe_ob,
	    "bytes fe->be: front end obytes %" PRIu64 ", back end ibytes %" PRIu64 ", sent %" PRIu64,
	    fs.obytes, bs.ibytes, fe_ob);
	tap(fs.ibytes == fe_ib && bs.obytes == fe_ib,
	    "bytes be->fe: back end obytes %" PRIu64 ", front end ibytes %" PRIu64 ", sent %" PRIu64,
	    bs.obytes, fs.ibytes, fe_ib);
	tap(fs.ierrors == 0 && fs.oerrors == 0 && fs.rx_nombuf == 0 &&
	    bs.ierrors == 0,
	    "no errors (front end ierrors %" PRIu64 " oerrors %" PRIu64 " rx_nombuf %" PRIu64 ", back end ierrors %" PRIu64 ")",
	    fs.ierrors, fs.oerrors, fs.rx_nombuf, bs.ierrors);
	for (q = 0; q < opts.queues; q++) {
		uint64_t fe_qo = queue_packets(fe_port, "tx", q);
		uint64_t be_qi = queue_packets(be_port, "rx", q);
		uint64_t be_qo = queue_packets(be_port, "tx", q);
		uint64_t fe_qi = queue_packets(fe_port, "rx", q);

		ok = fe_qo == fq_o[q] && be_qi == fq_o[q] && be_qo == fq_i[q] && fe_qi == fq_i[q];
		tap(ok, "queue %u: fe tx_q%u_good_packets %" PRIu64 " be rx_q%u_packets %" PRIu64 " (sent %" PRIu64 "), be tx_q%u_packets %" PRIu64 " fe rx_q%u_good_packets %" PRIu64 " (sent %" PRIu64 ")",
		    q, q, fe_qo, q, be_qi, fq_o[q], q, be_qo, q, fe_qi, fq_i[q]);
	}
	return fail_reason[0] == '\0' ? 0 : -1;
}

static void
stats_reset(void)
{
	rte_eth_stats_reset(fe_port);
	rte_eth_stats_reset(be_port);
}

/* Both directions on every queue; total for queue q is base + q * step. */
static unsigned int
flows_both(struct pair_flow *fl, uint32_t base, uint32_t step,
	   const uint16_t *sizes, unsigned int nb_sizes)
{
	unsigned int q, n = 0;

	for (q = 0; q < opts.queues; q++) {
		flow_init(&fl[n++], PAIR_FE_TO_BE, (uint8_t)q, base + q * step,
			  sizes, nb_sizes);
		flow_init(&fl[n++], PAIR_BE_TO_FE, (uint8_t)q, base + q * step,
			  sizes, nb_sizes);
	}
	return n;
}

/* ------------------------------------------------------------ scenarios */

static int
fe_bringup(uint32_t mtu, bool want_lsc, bool *lsc_on)
{
	struct rte_eth_dev_info info;
	bool lsc = false;

	if (fe_probe() != 0)
		return -1;
	if (rte_eth_dev_info_get(fe_port, &info) != 0)
		return fail("front end dev_info_get failed");
	if (want_lsc && info.dev_flags != NULL &&
	    (*info.dev_flags & RTE_ETH_DEV_INTR_LSC))
		lsc = true;
	if (lsc_on != NULL)
		*lsc_on = lsc;
	if (port_setup(fe_port, "front end", (uint16_t)opts.queues, mtu, lsc,
		       pools[POOL_FE_RX]) != 0)
		return -1;
	return wait_links_up();
}

static int
scenario_count(void)
{
	static const uint16_t sz[] = { 64 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t total = opts.packets ? opts.packets : 100000;
	unsigned int n;

	if (be_create((uint16_t)opts.queues, 0) != 0 ||
	    fe_bringup(0, false, NULL) != 0)
		return -1;
	stats_reset();
	n = flows_both(fl, total, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	tap(true, "%u x 64-byte frames each way on %u queue(s), every byte and the order checked",
	    total, opts.queues);
	return check_stats(fl, n);
}

static int
scenario_sizes(void)
{
	static const uint16_t sz[] = { 60, 64, 512, 1518, 9000 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t per_size = opts.packets ? opts.packets : 500;
	const uint16_t *sizes = opts.nb_sizes ? opts.sizes : sz;
	unsigned int nb = opts.nb_sizes ? opts.nb_sizes : RTE_DIM(sz);
	unsigned int n, i;
	bool chains = false;

	if (be_create((uint16_t)opts.queues, PAIR_JUMBO_MTU) != 0 ||
	    fe_bringup(PAIR_JUMBO_MTU, false, NULL) != 0)
		return -1;
	stats_reset();
	n = flows_both(fl, per_size * nb, 0, sizes, nb);
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	for (i = 0; i < nb; i++)
		chains = chains || sizes[i] > RTE_MBUF_DEFAULT_DATAROOM;
	for (i = 0; chains && i < n; i++) {
		/* 9000 bytes cannot fit one 2048-byte mbuf either way. */
		tap(fl[i].max_segs_sent > 1 && fl[i].max_segs_rcvd > 1,
		    "%s: jumbo frames went as chains (max segs tx %u, rx %u)",
		    fl[i].name, fl[i].max_segs_sent, fl[i].max_segs_rcvd);
	}
	tap(true, "%u frames of each of %u sizes (60, 64, 512, 1518, 9000 by default) each way, every byte checked",
	    per_size, nb);
	return check_stats(fl, n);
}

/* Front-end xstat @p name, or UINT64_MAX when the driver has none. */
static uint64_t
fe_xstat(const char *name)
{
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *xs = NULL;
	uint64_t v = UINT64_MAX;
	int nx, k;

	nx = rte_eth_xstats_get_names(fe_port, NULL, 0);
	if (nx <= 0)
		return v;
	names = calloc(nx, sizeof(*names));
	xs = calloc(nx, sizeof(*xs));
	if (names != NULL && xs != NULL &&
	    rte_eth_xstats_get_names(fe_port, names, nx) == nx &&
	    rte_eth_xstats_get(fe_port, xs, nx) == nx)
		for (k = 0; k < nx; k++)
			if (strcmp(names[k].name, name) == 0)
				v = xs[k].value;
	free(names);
	free(xs);
	return v;
}

/*
 * Multi-segment tx from the front end: every packet front end -> back end
 * is a chain of 2..64 mbufs (frame_to_segs()), of six frame sizes, every
 * third without headroom (separate header descriptor); the back end sends
 * plain frames the other way. Counts and bytes exact, every byte checked;
 * with --expect-indirect, the front end's tx_qN_indirect xstat must count
 * every packet (1: each chain went in an indirect table) or none (0:
 * indirect=0, direct chains). Then the front end is removed and every
 * mempool must be back to its value before the probe.
 */
static int
scenario_segs(void)
{
	static const uint16_t sz[] = { 60, 64, 200, 512, 1000, 1514 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t total = opts.packets ? opts.packets : 20000;
	unsigned int ref0[POOL_MAX], n, i, q;
	char name[64];
	uint64_t v;

	if (be_create((uint16_t)opts.queues, 0) != 0)
		return -1;
	pools_in_use(ref0);
	if (fe_bringup(0, false, NULL) != 0)
		return -1;
	stats_reset();
	n = flows_both(fl, total, 0, sz, RTE_DIM(sz));
	for (i = 0; i < n; i++)
		fl[i].segmented = fl[i].dir == PAIR_FE_TO_BE;
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (fl[i].dir != PAIR_FE_TO_BE)
			continue;
		tap(fl[i].max_segs_sent == PAIR_SEGS_MAX && fl[i].no_headroom > 0,
		    "%s: chains of 2..%u segments sent (max %u), %u without headroom",
		    fl[i].name, PAIR_SEGS_MAX, fl[i].max_segs_sent, fl[i].no_headroom);
	}
	tap(true, "%u chained frames front end -> back end per queue (%u queue(s)), every byte checked",
	    total, opts.queues);
	if (check_stats(fl, n) != 0)
		return -1;
	for (q = 0; opts.expect_indirect >= 0 && q < opts.queues; q++) {
		snprintf(name, sizeof(name), "tx_q%u_indirect", q);
		v = fe_xstat(name);
		tap(v == (opts.expect_indirect ? total : 0),
		    "%s = %" PRIu64 " (expected %u: indirect %s)", name, v,
		    opts.expect_indirect ? total : 0, opts.expect_indirect ? "on" : "off");
	}

	return fe_remove_check(ref0, -1);
}

static int
scenario_mq(void)
{
	static const uint16_t sz[] = { 64, 128, 256 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t base = opts.packets ? opts.packets : 20000;
	unsigned int n;

	if (opts.queues < 2)
		return fail("mq needs --queues >= 2");
	if (be_create((uint16_t)opts.queues, 0) != 0 ||
	    fe_bringup(0, false, NULL) != 0)
		return -1;
	stats_reset();
	/* Distinct totals per queue so that a mixed-up queue shows. */
	n = flows_both(fl, base, base / 2, sz, RTE_DIM(sz));
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	return check_stats(fl, n);
}

static int
scenario_cycles(void)
{
	static const uint16_t sz[] = { 64, 1000 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	uint32_t per_cycle = opts.packets ? opts.packets : 2000;
	unsigned int ref0[POOL_MAX], ref1[POOL_MAX], refs[POOL_MAX];
	unsigned int c, n;
	int fds0, fds1, fdss = -1, ret;

	if (be_create((uint16_t)opts.queues, 0) != 0)
		return -1;
	pools_in_use(ref0);
	fds0 = count_fds();
	print_in_use("before the front end", ref0, fds0);

	if (fe_bringup(0, false, NULL) != 0)
		return -1;
	n = flows_both(fl, per_cycle, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	pools_in_use(ref1);
	fds1 = count_fds();
	print_in_use("after the first start and traffic", ref1, fds1);

	for (c = 1; c <= opts.cycles; c++) {
		ret = rte_eth_dev_stop(fe_port);
		if (ret != 0)
			return fail("cycle %u: stop: %d", c, ret);
		/* Stopped, the front end holds the same every time. */
		if (c == 1) {
			pools_in_use(refs);
			fdss = count_fds();
			print_in_use("first stop", refs, fdss);
		} else if (wait_resources("stopped", refs, fdss, 5.0) != 0) {
			return fail("cycle %u: stopped state differs from the first stop",
				    c);
		}
		/* Every fifth cycle also reconfigures: configure and queue
		 * setup again (the old queues are released), then start. */
		if (c % 5 == 0)
			ret = port_setup(fe_port, "front end", (uint16_t)opts.queues, 0, false,
					 pools[POOL_FE_RX]);
		else
			ret = rte_eth_dev_start(fe_port);
		if (ret != 0) {
			struct rte_eth_stats st;

			pools_in_use(refs);
			print_in_use("failed start", refs, count_fds());
			if (rte_eth_stats_get(fe_port, &st) == 0)
				printf("# front end rx_nombuf %" PRIu64 "\n",
				       st.rx_nombuf);
			return fail("cycle %u: start: %d", c, ret);
		}
		if (wait_links_up() != 0)
			return -1;
		n = flows_both(fl, per_cycle, 0, sz, RTE_DIM(sz));
		if (flows_run(fl, n, opts.timeout) != 0)
			return -1;
		if (wait_resources("after a cycle", ref1, fds1, 5.0) != 0)
			return fail("cycle %u leaked (see above)", c);
		tap(true, "cycle %u: stop, %sstart, %u packets each way, no mbuf or fd leaked",
		    c, c % 5 == 0 ? "reconfigure, queue setup, " : "", per_cycle);
	}

	return fe_remove_check(ref0, fds0);
}

/* Runs in the EAL interrupt thread. */
static int
lsc_cb(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	RTE_SET_USED(port);
	RTE_SET_USED(type);
	RTE_SET_USED(arg);
	RTE_SET_USED(ret);
	__atomic_fetch_add(&lsc_events, 1, __ATOMIC_RELEASE);
	return 0;
}

static int
scenario_linkdown(void)
{
	static const uint16_t sz[] = { 64, 700 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	struct rte_mbuf *burst[PAIR_BURST], *rx[PAIR_BURST];
	struct rte_eth_dev_info info;
	uint32_t total = opts.packets ? opts.packets : 5000;
	uint32_t before, accepted = 0, late = 0, rcvd = 0, i, k;
	unsigned int ref0[POOL_MAX], n, q;
	bool lsc = false;
	double deadline;
	uint16_t nb;
	int ret;

	if (be_create((uint16_t)opts.queues, 0) != 0)
		return -1;
	pools_in_use(ref0);
	if (fe_probe() != 0)
		return -1;
	ret = rte_eth_dev_callback_register(fe_port, RTE_ETH_EVENT_INTR_LSC,
					    lsc_cb, NULL);
	if (ret != 0)
		return fail("callback_register: %d", ret);
	if (rte_eth_dev_info_get(fe_port, &info) != 0)
		return fail("front end dev_info_get failed");
	lsc = info.dev_flags != NULL &&
	      (*info.dev_flags & RTE_ETH_DEV_INTR_LSC) != 0;
	if (port_setup(fe_port, "front end", (uint16_t)opts.queues, 0, lsc,
		       pools[POOL_FE_RX]) != 0)
		return -1;
	if (wait_links_up() != 0)
		return -1;
	printf("# front end %s LSC interrupts\n",
	       lsc ? "advertises" : "does not advertise");
	n = flows_both(fl, total, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	tap(true, "traffic before link down: %u packets each way", total);

	before = __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE);
	ret = rte_eth_dev_stop(be_port);
	if (ret != 0)
		return fail("back end stop: %d", ret);
	ret = rte_eth_dev_close(be_port);
	if (ret != 0)
		return fail("back end close: %d", ret);
	be_port = RTE_MAX_ETHPORTS;
	if (wait_link(fe_port, "front end", false, 10.0) != 0)
		return -1;
	tap(true, "front end reports link down after the back end closed");
	if (lsc) {
		deadline = now_s() + 5.0;
		while (__atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) == before &&
		       now_s() < deadline)
			poll_pause();
		tap(__atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) != before,
		    "LSC callback fired (%u events in total, %u before close)",
		    __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE), before);
	}

	/* Bursts on a dead link: no crash, nothing received or accepted. */
	for (i = 0; i < 200; i++) {
		for (q = 0; q < opts.queues; q++) {
			nb = rte_eth_rx_burst(fe_port, (uint16_t)q, rx,
					      PAIR_BURST);
			rcvd += nb;
			for (k = 0; k < nb; k++)
				rte_pktmbuf_free(rx[k]);
			for (k = 0; k < PAIR_BURST; k++) {
				frame_fill(frame_buf, 64, k, (uint8_t)q,
					   PAIR_FE_TO_BE);
				burst[k] = frame_to_mbuf(pools[POOL_FE_TX],
							 frame_buf, 64,
							 UINT32_MAX);
				if (burst[k] == NULL) {
					while (k-- > 0)
						rte_pktmbuf_free(burst[k]);
					return fail("tx pool exhausted after link down (%u accepted)",
						    accepted);
				}
			}
			nb = rte_eth_tx_burst(fe_port, (uint16_t)q, burst,
					      PAIR_BURST);
			accepted += nb;
			if (i >= 100)
				late += nb;
			for (k = nb; k < PAIR_BURST; k++)
				rte_pktmbuf_free(burst[k]);
		}
	}
	tap(rcvd == 0, "rx bursts after link down returned %u packets", rcvd);
	if (opts.tx_after_linkdown)
		/*
		 * Tolerated (net_virtio_user does it): tx fills what room the
		 * ring had; then it must return 0, never block or crash.
		 */
		tap(late == 0,
		    "tx bursts after link down: %u packets accepted while the ring had room, none in the last 100 rounds (%u)",
		    accepted, late);
	else
		tap(accepted == 0,
		    "tx bursts after link down accepted %u packets", accepted);

	/* Whatever a dead front end holds, it gives back when removed. */
	ret = rte_eth_dev_stop(fe_port);
	if (ret != 0)
		return fail("front end stop after link down: %d", ret);
	ret = rte_eal_hotplug_remove("vdev", fe_name);
	fe_probed = false;
	fe_port = RTE_MAX_ETHPORTS;
	if (ret != 0)
		return fail("rte_dev_remove of the front end after link down: %d",
			    ret);
	if (wait_resources("front end removed after link down", ref0, -1,
			   5.0) != 0)
		return -1;
	tap(true, "front end removed after link down: every mempool back to its value before probe");
	return fail_reason[0] == '\0' ? 0 : -1;
}

/*
 * A back end that writes nonsense: the test reaches into net_vhost's view of
 * the front end's rx ring (vring 0, split layout) and publishes a used entry
 * whose id is out of range. The front end must mark that queue broken, count
 * it, take the link down (with an LSC event) and keep running; a stop/start
 * lays the rings out anew and traffic flows again, exactly counted, with no
 * mbuf leaked.
 */
static int
scenario_badring(void)
{
	static const uint16_t sz[] = { 64 };
	struct pair_flow fl[PAIR_MAX_FLOWS];
	struct rte_mbuf *rx[PAIR_BURST];
	struct rte_vhost_vring vr;
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *xs = NULL;
	unsigned int ref0[POOL_MAX], n;
	uint64_t bad_used = UINT64_MAX;
	uint32_t rcvd = 0, i;
	uint16_t idx, size;
	double deadline;
	int vid, ret, nx, k;
	bool lsc = false;
	unsigned int before;

	if (be_create(1, 0) != 0)
		return -1;
	pools_in_use(ref0);
	if (fe_probe() != 0)
		return -1;
	ret = rte_eth_dev_callback_register(fe_port, RTE_ETH_EVENT_INTR_LSC, lsc_cb, NULL);
	if (ret != 0)
		return fail("callback_register: %d", ret);
	if (port_setup(fe_port, "front end", 1, 0, true, pools[POOL_FE_RX]) != 0 ||
	    wait_links_up() != 0)
		return -1;
	lsc = true;
	n = flows_both(fl, 1000, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	tap(true, "traffic before the bad used entry: 1000 packets each way");

	vid = rte_eth_vhost_get_vid_from_port_id(be_port);
	if (vid < 0 || rte_vhost_get_vhost_vring(vid, 0, &vr) != 0 || vr.used == NULL)
		return fail("cannot reach the front end's rx vring through net_vhost (vid %d)", vid);
	size = vr.size;
	idx = __atomic_load_n(&vr.used->idx, __ATOMIC_ACQUIRE);
	vr.used->ring[idx & (size - 1)].id = size + 5u;   /* out of range */
	vr.used->ring[idx & (size - 1)].len = 64;
	__atomic_store_n(&vr.used->idx, (uint16_t)(idx + 1), __ATOMIC_RELEASE);
	before = __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE);

	/* The front end finds it on its next poll. */
	for (i = 0; i < 100; i++) {
		uint16_t nb = rte_eth_rx_burst(fe_port, 0, rx, PAIR_BURST);

		rcvd += nb;
		for (k = 0; k < nb; k++)
			rte_pktmbuf_free(rx[k]);
	}
	tap(rcvd == 0, "rx bursts on the broken ring returned %u packets", rcvd);
	if (wait_link(fe_port, "front end", false, 5.0) != 0)
		return -1;
	tap(true, "front end reports link down after the bad used entry");
	deadline = now_s() + 5.0;
	while (lsc && __atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) == before &&
	       now_s() < deadline)
		poll_pause();
	tap(__atomic_load_n(&lsc_events, __ATOMIC_ACQUIRE) != before, "LSC callback fired");

	nx = rte_eth_xstats_get_names(fe_port, NULL, 0);
	names = calloc(nx > 0 ? nx : 1, sizeof(*names));
	xs = calloc(nx > 0 ? nx : 1, sizeof(*xs));
	if (nx > 0 && names != NULL && xs != NULL &&
	    rte_eth_xstats_get_names(fe_port, names, nx) == nx &&
	    rte_eth_xstats_get(fe_port, xs, nx) == nx)
		for (k = 0; k < nx; k++)
			if (strcmp(names[k].name, "rx_q0_bad_used") == 0)
				bad_used = xs[k].value;
	free(names);
	free(xs);
	tap(bad_used == 1, "rx_q0_bad_used = %" PRIu64 " (expected 1)", bad_used);

	/* Restart: the rings are laid out anew; traffic flows again. */
	if (rte_eth_dev_stop(fe_port) != 0 || rte_eth_dev_start(fe_port) != 0)
		return fail("front end stop/start after the broken ring failed");
	if (wait_links_up() != 0)
		return -1;
	stats_reset();
	n = flows_both(fl, 2000, 0, sz, RTE_DIM(sz));
	if (flows_run(fl, n, opts.timeout) != 0)
		return -1;
	tap(true, "after stop/start: 2000 packets each way, every byte checked");
	if (check_stats(fl, n) != 0)
		return -1;

	return fe_remove_check(ref0, -1);
}

static int
scenario_baddevargs(void)
{
	char args[1024], name[RTE_DEV_NAME_MAX_LEN];
	uint16_t ports_before, port;
	unsigned int i;
	size_t len;
	int ret;

	if (opts.nb_bad == 0)
		return fail("baddevargs needs at least one --bad");
	if (be_create((uint16_t)opts.queues, 0) != 0)
		return -1;
	for (i = 0; i < opts.nb_bad; i++) {
		if (pair_subst(args, sizeof(args), opts.bad[i]) != 0)
			return fail("--bad '%s' too long", opts.bad[i]);
		len = strcspn(args, ",");
		snprintf(name, sizeof(name), "%.*s", (int)len, args);
		ports_before = rte_eth_dev_count_total();
		ret = rte_dev_probe(args);
		if (ret == 0) {
			tap(false, "probe '%s' succeeded, expected failure",
			    args);
			rte_eal_hotplug_remove("vdev", name);
			continue;
		}
		tap(ret < 0 && rte_eth_dev_count_total() == ports_before &&
		    rte_eth_dev_get_port_by_name(name, &port) != 0,
		    "probe '%s' failed with %d, %u ports before and %u after",
		    args, ret, ports_before,
		    rte_eth_dev_count_total());
	}
	/* The good devargs still work afterwards: no stale state left. */
	if (fe_bringup(0, false, NULL) != 0)
		return -1;
	tap(true, "the good front end '%s' probes and links up afterwards",
	    fe_devargs);
	return fail_reason[0] == '\0' ? 0 : -1;
}

static const struct {
	const char *name;
	int (*run)(void);
} scenarios[] = {
	{ "count", scenario_count },
	{ "sizes", scenario_sizes },
	{ "mq", scenario_mq },
	{ "cycles", scenario_cycles },
	{ "linkdown", scenario_linkdown },
	{ "baddevargs", scenario_baddevargs },
	{ "badring", scenario_badring },
	{ "segs", scenario_segs },
};

/* ------------------------------------------------------------------ main */

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --scenario count|sizes|mq|cycles|linkdown|baddevargs|badring|segs\n"
		"          --frontend DEVARGS --name TESTNAME [--queues N]\n"
		"          [--packets N] [--cycles N] [--timeout S] [--bad DEVARGS]...\n"
		"          [--log-level LEVEL] [--eal ARG]... [--allow-tx-after-linkdown]\n"
		"          [--expect-features MASK] [--expect-no-features MASK]\n"
		"          [--allow-sigpipe] [--sizes N,N,...] [--expect-indirect 0|1]\n"
		"DEVARGS may contain {sock} and {queues}.\n", prog);
}

/*
 * A driver that writes to its vhost-user socket after the peer went away
 * without MSG_NOSIGNAL raises SIGPIPE, which kills an application that
 * kept the default disposition.  Count it instead, and fail unless allowed.
 */
static void
on_sigpipe(int sig)
{
	RTE_SET_USED(sig);
	sigpipes++;
}

/* --sizes: frame lengths for the sizes scenario (debugging a failure). */
static int
parse_sizes(const char *arg)
{
	char *end;
	unsigned long v;

	opts.nb_sizes = 0;
	do {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno != 0 || end == arg || v < PAIR_MIN_FRAME ||
		    v > PAIR_JUMBO_MTU || opts.nb_sizes == RTE_DIM(opts.sizes) ||
		    (*end != ',' && *end != '\0'))
			return -1;
		opts.sizes[opts.nb_sizes++] = (uint16_t)v;
		arg = end + 1;
	} while (*end == ',');
	return 0;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "frontend", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "queues", required_argument, NULL, 'q' },
		{ "packets", required_argument, NULL, 'p' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "bad", required_argument, NULL, 'b' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "eal", required_argument, NULL, 'e' },
		{ "allow-tx-after-linkdown", no_argument, NULL, 'a' },
		{ "allow-sigpipe", no_argument, NULL, 'P' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "expect-features", required_argument, NULL, 'F' },
		{ "expect-no-features", required_argument, NULL, 'N' },
		{ "expect-indirect", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': opts.scenario = optarg; break;
		case 'f': opts.frontend = optarg; break;
		case 'n': opts.name = optarg; break;
		case 'q': opts.queues = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': opts.packets = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'c': opts.cycles = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 't': opts.timeout = strtod(optarg, NULL); break;
		case 'l': opts.log_level = optarg; break;
		case 'a': opts.tx_after_linkdown = true; break;
		case 'P': opts.sigpipe_ok = true; break;
		case 'F': opts.features_on = strtoull(optarg, NULL, 0); break;
		case 'N': opts.features_off = strtoull(optarg, NULL, 0); break;
		case 'S':
			if (parse_sizes(optarg) != 0)
				return -1;
			break;
		case 'I':
			if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0)
				return -1;
			opts.expect_indirect = optarg[0] - '0';
			break;
		case 'b':
			if (opts.nb_bad == PAIR_MAX_BAD)
				return -1;
			opts.bad[opts.nb_bad++] = optarg;
			break;
		case 'e':
			if (opts.nb_eal_extra == PAIR_MAX_EAL_EXTRA)
				return -1;
			opts.eal_extra[opts.nb_eal_extra++] = optarg;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc || opts.scenario == NULL ||
	    opts.frontend == NULL || opts.name == NULL ||
	    opts.queues == 0 || opts.queues > PAIR_MAX_QUEUES ||
	    opts.timeout <= 0)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	char lvl[128];
	char *eal_argv[16 + PAIR_MAX_EAL_EXTRA];
	int eal_argc = 0, ret = -1;
	unsigned int i, s;
	size_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, on_sigpipe);
	if (parse_args(argc, argv) != 0) {
		usage(argv[0]);
		return 2;
	}
	for (s = 0; s < RTE_DIM(scenarios); s++) {
		if (strcmp(scenarios[s].name, opts.scenario) == 0)
			break;
	}
	if (s == RTE_DIM(scenarios)) {
		usage(argv[0]);
		return 2;
	}
	if (mkdir(PAIR_RUN_DIR, 0755) != 0 && errno != EEXIST) {
		printf("RESULT: FAIL: mkdir %s: %s\n", PAIR_RUN_DIR,
		       strerror(errno));
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/%s.sock", PAIR_RUN_DIR,
		 opts.name);
	snprintf(file_prefix, sizeof(file_prefix), "vnapi_%s", opts.name);
	unlink(sock_path); /* a stale socket of a killed run */
	if (pair_subst(fe_devargs, sizeof(fe_devargs), opts.frontend) != 0) {
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
	for (i = 0; i < opts.nb_eal_extra; i++)
		eal_argv[eal_argc++] = (char *)(uintptr_t)opts.eal_extra[i];
	eal_argv[eal_argc] = NULL;

	printf("# scenario %s, front end '%s', back end %s,iface=%s,queues=%u, file prefix %s\n",
	       opts.scenario, fe_devargs, PAIR_BE_NAME, sock_path, opts.queues,
	       file_prefix);
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		printf("RESULT: FAIL: rte_eal_init: %s\n",
		       rte_strerror(rte_errno));
		return 1;
	}

	for (i = 0; i < POOL_MAX; i++) {
		pools[i] = rte_pktmbuf_pool_create(pool_names[i],
						   PAIR_POOL_SIZE, 0, 0,
						   RTE_MBUF_DEFAULT_BUF_SIZE,
						   rte_socket_id());
		if (pools[i] == NULL) {
			fail("mempool %s: %s", pool_names[i],
			     rte_strerror(rte_errno));
			goto out;
		}
	}

	ret = scenarios[s].run();
	if (ret == 0 && fail_reason[0] != '\0')
		ret = -1;
	if (sigpipes != 0 && !opts.sigpipe_ok)
		ret = fail("the front end raised SIGPIPE %d time(s) (socket writes need MSG_NOSIGNAL)",
			   (int)sigpipes);

out:
	port_remove(fe_name, &fe_port, &fe_probed);
	port_remove(PAIR_BE_NAME, &be_port, &be_probed);
	for (i = 0; i < POOL_MAX; i++)
		rte_mempool_free(pools[i]);
	rte_eal_cleanup();
	unlink(sock_path);
	if (sigpipes != 0)
		printf("# SIGPIPE raised %d time(s)%s\n", (int)sigpipes,
		       opts.sigpipe_ok ? " (allowed)" : "");
	if (ret == 0 && sigpipes != 0 && !opts.sigpipe_ok)
		ret = fail("SIGPIPE raised during cleanup (socket writes need MSG_NOSIGNAL)");
	if (ret == 0) {
		printf("1..%u\nRESULT: PASS\n", tap_n);
		return 0;
	}
	printf("1..%u\nRESULT: FAIL: %s\n", tap_n,
	       fail_reason[0] ? fail_reason : "unknown");
	return 1;
}
