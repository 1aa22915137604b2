/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * vhost_peer: the back-end side of the l3fwd-power tests.
 *
 * One process, one lcore. DPDK's net_vhost (loaded from DPDK's plugin
 * directory) is the vhost-user server; the front end under test (net_vnapi or
 * net_virtio_user inside DPDK's l3fwd-power example) connects to it. The peer
 * sends Ethernet/IPv4/UDP frames to 1.1.1.1 (l3fwd-power's LPM route
 * 1.1.1.0/24 -> port 0; with only port 0 enabled every IPv4 packet goes back
 * out of port 0 anyway) and receives them back.
 *
 * Every frame carries a magic, a run id, a phase, a sequence number, the
 * CLOCK_MONOTONIC send time and a pattern derived from the rest. A returned
 * frame must show l3fwd-power's work (destination MAC 02:00:00:00:00:00,
 * TTL decremented by one) and nothing else changed; the receive time minus
 * the send time in the payload is its round-trip latency.
 *
 * Every mode first sends one warm-up packet and waits (generously) for it to
 * come back, so that l3fwd-power is known to be in its main loop; then it
 * lets l3fwd-power settle into its interrupt sleep (--settle-ms).
 *
 * Modes:
 *   --count N    N packets in bursts, at most --window in flight, so that no
 *                ring on the path can overflow; exactly N must come back.
 *   --sparse N   N single packets, each sent a random --gap-min-us ..
 *                --gap-max-us after the previous one came back; each must
 *                come back within --loss-timeout-ms (else lost) and, with
 *                --max-latency-us, within that bound. Reports p50/p99/max,
 *                both of the round trip and of the round trip minus the
 *                run-queue wait of the two processes (--bound-on net applies
 *                the bound to the latter: see "scheduler accounting").
 *   --idle S     send nothing for S seconds ("IDLE begin" / "IDLE end" lines
 *                frame the window), wait --settle-ms, then one check packet.
 *
 * Usage: vhost_peer [EAL options] -- --iface SOCK MODE [options]
 * The last line of a finished run is "RESULT: PASS|FAIL key=value...";
 * with --linger S the process then keeps the port up (draining stray packets)
 * until SIGINT/SIGTERM or for S seconds, so that the front end can be stopped
 * while its back end is still there.
 *
 * Exit status: 0 pass, 1 traffic check failed, 2 usage, 3 setup error,
 * 4 link not up within --link-timeout, 5 run deadline (--timeout) expired,
 * 6 interrupted before a result.
 */

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#define PEER_EXIT_PASS        0
#define PEER_EXIT_FAIL        1
#define PEER_EXIT_USAGE       2
#define PEER_EXIT_SETUP       3
#define PEER_EXIT_LINK        4
#define PEER_EXIT_DEADLINE    5
#define PEER_EXIT_INTERRUPTED 6

#define PEER_DEV_NAME   "net_vhost0"
#define PEER_MAGIC      0x564e4c33u /* "VNL3" */
#define PEER_BURST      32
#define PEER_WARMUP_RESEND_MS 1000  /* resend the warm-up packet after this long */
#define PEER_WARMUP_MAX 64          /* warm-up packets at most */
#define PEER_NB_MBUFS   8191
#define PEER_MBUF_CACHE 256
#define PEER_RING_SIZE  1024
#define PEER_PATTERN    16
#define PEER_MAX_COUNT  (1u << 24)
#define PEER_SLOW_US    2000 /* sparse: list packets slower than this ... */
#define PEER_SLOW_LINES 40   /* ... at most this many */

/* l3fwd-power's rewrite: destination 02:00:00:00:00:<port>. */
static const struct rte_ether_addr peer_l3fwd_dst = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x00 } };
/* Whatever we send to: vhost-user filters nothing, l3fwd-power checks nothing. */
static const struct rte_ether_addr peer_default_fe_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 } };
#define PEER_IP_SRC     RTE_IPV4(10, 0, 0, 1)
#define PEER_IP_DST     RTE_IPV4(1, 1, 1, 1)
#define PEER_UDP_SRC    1024
#define PEER_UDP_DST    2048
#define PEER_TTL        64

enum peer_mode {
	PEER_MODE_NONE,
	PEER_MODE_COUNT,
	PEER_MODE_SPARSE,
	PEER_MODE_IDLE,
};

static const char * const peer_mode_names[] = {
	[PEER_MODE_NONE] = "none",
	[PEER_MODE_COUNT] = "count",
	[PEER_MODE_SPARSE] = "sparse",
	[PEER_MODE_IDLE] = "idle",
};

enum peer_phase {
	PEER_PHASE_WARMUP,
	PEER_PHASE_TRAFFIC, /* count or sparse packets */
	PEER_PHASE_CHECK,   /* the packet after the idle window */
	PEER_PHASE_MAX,
};

struct peer_payload {
	uint32_t magic;
	uint32_t run_id;
	uint32_t seq;
	uint8_t phase;
	uint8_t reserved[3];
	uint64_t t_ns;
	uint8_t pattern[PEER_PATTERN];
} __rte_packed;

struct peer_frame {
	struct rte_ether_hdr eth;
	struct rte_ipv4_hdr ip;
	struct rte_udp_hdr udp;
	struct peer_payload pl;
};
/* The headers pack without padding: 14 + 20 + 8 + 40 bytes. */
static_assert(sizeof(struct peer_frame) == 82, "peer_frame has padding");

struct peer_opts {
	const char *iface;
	enum peer_mode mode;
	uint32_t count;
	double idle_s;
	uint32_t gap_min_us;
	uint32_t gap_max_us;
	uint32_t gap2_min_us;      /* every second gap from this range (0/0: off) */
	uint32_t gap2_max_us;
	const char *dump;          /* sparse: "seq latency_ns net_ns" per packet, or NULL */
	uint32_t max_latency_us;   /* 0: no bound */
	bool bound_net;            /* bound the latency net of run-queue wait */
	uint32_t window;
	uint32_t loss_timeout_ms;
	uint32_t warmup_timeout_ms;
	uint32_t settle_ms;
	double link_timeout_s;
	double timeout_s;
	uint64_t seed;
	bool have_fe_mac;
	struct rte_ether_addr fe_mac;
	bool linger;
	double linger_s;
};

/* Per-phase bookkeeping: one byte per sequence number, latency per packet. */
struct peer_phase_state {
	uint32_t cap;
	uint32_t sent;
	uint32_t rcvd;
	uint8_t *seen;
	uint64_t *lat_ns;
	uint64_t *sched_ns; /* run-queue wait of both processes during each round trip */
};

struct peer {
	struct peer_opts o;
	uint16_t port;
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	uint32_t run_id;
	uint64_t rng;
	uint64_t deadline_ns;
	struct peer_phase_state ph[PEER_PHASE_MAX];
	/* Receive-side anomalies. */
	uint64_t bad;        /* not our frame, or a field l3fwd-power must not change changed */
	uint64_t dup;        /* a sequence number seen twice */
	uint64_t stray;      /* our frame, but never sent or of a phase already over */
	uint64_t idle_rx;    /* anything received during the idle window */
	uint64_t tx_retries; /* tx bursts that accepted fewer than offered */
	uint32_t *gap_us;    /* sparse: the quiet time before each packet */
	/* Scheduler accounting: /proc/<pid>/schedstat (run-queue wait) of the
	 * front end's main thread and of ourselves, -1 when unavailable. */
	int fe_sched_fd;
	int self_sched_fd;
	long fe_pid;
	char first_bad[160];
};

static volatile sig_atomic_t peer_quit;

static void
peer_on_signal(int sig)
{
	(void)sig;
	peer_quit = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
rng_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void
pattern_fill(uint8_t *p, uint32_t run_id, uint32_t seq, uint8_t phase)
{
	uint32_t v = run_id ^ (seq * 2654435761u) ^ ((uint32_t)phase << 24);
	unsigned int i;

	for (i = 0; i < PEER_PATTERN; i++) {
		v = v * 1103515245u + 12345u;
		p[i] = (uint8_t)(v >> 16);
	}
}

static void
note_bad(struct peer *pr, const char *what, uint32_t seq)
{
	pr->bad++;
	if (pr->first_bad[0] == '\0')
		snprintf(pr->first_bad, sizeof(pr->first_bad), "%s (seq %" PRIu32 ")", what, seq);
}

/* ---- frames ------------------------------------------------------------ */

static struct rte_mbuf *
frame_build(struct peer *pr, enum peer_phase phase, uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pr->pool);
	struct peer_frame *f;

	if (m == NULL)
		return NULL;
	f = (struct peer_frame *)rte_pktmbuf_append(m, sizeof(*f));
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	rte_ether_addr_copy(pr->o.have_fe_mac ? &pr->o.fe_mac : &peer_default_fe_mac,
			    &f->eth.dst_addr);
	rte_ether_addr_copy(&pr->mac, &f->eth.src_addr);
	f->eth.ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	f->ip.version_ihl = RTE_IPV4_VHL_DEF;
	f->ip.total_length = rte_cpu_to_be_16(sizeof(*f) - sizeof(f->eth));
	f->ip.packet_id = rte_cpu_to_be_16((uint16_t)seq);
	f->ip.time_to_live = PEER_TTL;
	f->ip.next_proto_id = IPPROTO_UDP;
	f->ip.src_addr = rte_cpu_to_be_32(PEER_IP_SRC);
	f->ip.dst_addr = rte_cpu_to_be_32(PEER_IP_DST);
	f->ip.hdr_checksum = rte_ipv4_cksum(&f->ip);
	f->udp.src_port = rte_cpu_to_be_16(PEER_UDP_SRC);
	f->udp.dst_port = rte_cpu_to_be_16(PEER_UDP_DST);
	f->udp.dgram_len = rte_cpu_to_be_16(sizeof(f->udp) + sizeof(f->pl));
	f->pl.magic = PEER_MAGIC;
	f->pl.run_id = pr->run_id;
	f->pl.seq = seq;
	f->pl.phase = (uint8_t)phase;
	pattern_fill(f->pl.pattern, pr->run_id, seq, (uint8_t)phase);
	f->pl.t_ns = now_ns();
	return m;
}

/* Stamp the send time again right before a (re)try. */
static void
frame_stamp(struct rte_mbuf *m)
{
	struct peer_frame *f = rte_pktmbuf_mtod(m, struct peer_frame *);

	f->pl.t_ns = now_ns();
}

/* Check one returned frame and account for it. */
static void
frame_check(struct peer *pr, struct rte_mbuf *m, uint64_t t_rx)
{
	const struct peer_frame *f;
	struct peer_phase_state *ps;
	uint8_t pat[PEER_PATTERN];
	uint32_t seq;

	if (m->nb_segs != 1 || rte_pktmbuf_pkt_len(m) != sizeof(*f)) {
		note_bad(pr, "unexpected frame length or segments", UINT32_MAX);
		return;
	}
	f = rte_pktmbuf_mtod(m, const struct peer_frame *);
	seq = f->pl.seq;
	if (f->pl.magic != PEER_MAGIC || f->pl.run_id != pr->run_id ||
	    f->pl.phase >= PEER_PHASE_MAX) {
		note_bad(pr, "not a frame of this run", UINT32_MAX);
		return;
	}
	if (f->eth.ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    f->ip.version_ihl != RTE_IPV4_VHL_DEF ||
	    f->ip.next_proto_id != IPPROTO_UDP ||
	    f->ip.src_addr != rte_cpu_to_be_32(PEER_IP_SRC) ||
	    f->ip.dst_addr != rte_cpu_to_be_32(PEER_IP_DST) ||
	    f->ip.packet_id != rte_cpu_to_be_16((uint16_t)seq) ||
	    f->ip.total_length != rte_cpu_to_be_16(sizeof(*f) - sizeof(f->eth)) ||
	    f->udp.src_port != rte_cpu_to_be_16(PEER_UDP_SRC) ||
	    f->udp.dst_port != rte_cpu_to_be_16(PEER_UDP_DST)) {
		note_bad(pr, "IPv4/UDP header changed", seq);
		return;
	}
	/* l3fwd-power's work: routed back out of port 0, TTL decremented. */
	if (!rte_is_same_ether_addr(&f->eth.dst_addr, &peer_l3fwd_dst)) {
		note_bad(pr, "destination MAC is not l3fwd-power's 02:00:00:00:00:00", seq);
		return;
	}
	if (pr->o.have_fe_mac && !rte_is_same_ether_addr(&f->eth.src_addr, &pr->o.fe_mac)) {
		note_bad(pr, "source MAC is not the front end's", seq);
		return;
	}
	if (f->ip.time_to_live != PEER_TTL - 1) {
		note_bad(pr, "TTL not decremented by exactly one", seq);
		return;
	}
	pattern_fill(pat, pr->run_id, seq, f->pl.phase);
	if (memcmp(pat, f->pl.pattern, sizeof(pat)) != 0) {
		note_bad(pr, "payload pattern corrupted", seq);
		return;
	}
	ps = &pr->ph[f->pl.phase];
	if (seq >= ps->sent) {
		pr->stray++;
		return;
	}
	if (ps->seen[seq]) {
		pr->dup++;
		return;
	}
	ps->seen[seq] = 1;
	ps->rcvd++;
	if (ps->lat_ns != NULL)
		ps->lat_ns[seq] = t_rx - f->pl.t_ns;
}

/* One rx burst; returns the number of frames received. */
static unsigned int
peer_rx(struct peer *pr)
{
	struct rte_mbuf *pkts[PEER_BURST];
	uint16_t n, i;
	uint64_t t;

	n = rte_eth_rx_burst(pr->port, 0, pkts, PEER_BURST);
	if (n == 0)
		return 0;
	t = now_ns();
	for (i = 0; i < n; i++) {
		frame_check(pr, pkts[i], t);
		rte_pktmbuf_free(pkts[i]);
	}
	return n;
}

static bool
past_deadline(const struct peer *pr)
{
	return now_ns() >= pr->deadline_ns;
}

/* Poll rx until `until_ns` (sleeping in 1 ms steps when `lazy`). */
static int
peer_drain_until(struct peer *pr, uint64_t until_ns, bool lazy)
{
	while (now_ns() < until_ns) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr))
			return PEER_EXIT_DEADLINE;
		if (peer_rx(pr) == 0 && lazy) {
			uint64_t left = until_ns - now_ns();
			struct timespec ts = { 0, (long)RTE_MIN(left, 1000000ull) };

			if ((int64_t)left > 0)
				nanosleep(&ts, NULL);
		}
	}
	return PEER_EXIT_PASS;
}

/* ---- scheduler accounting ---------------------------------------------- */

/*
 * Round-trip latency on a shared machine includes time the two processes
 * spent runnable but not running (another program held the CPU). The
 * kernel counts it per thread (schedstat, second field, ns); we read it for
 * the front end's main thread (its lcore) and for ourselves before each
 * send and after each return, so that every latency can be split into
 * run-queue wait and the rest. A front end that sleeps through a wakeup it
 * should have had is not runnable: that time stays in the rest.
 */
static uint64_t
schedstat_wait_ns(int fd)
{
	char buf[128];
	unsigned long long run, wait;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return 0;
	return wait;
}

static uint64_t
sched_wait_now(const struct peer *pr)
{
	return schedstat_wait_ns(pr->fe_sched_fd) + schedstat_wait_ns(pr->self_sched_fd);
}

/* Does /proc/<pid>/cmdline hold `needle`? */
static bool
cmdline_has(const char *pid, const char *needle)
{
	char path[64], buf[8192];
	size_t len = strlen(needle);
	ssize_t n, i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	for (i = 0; n > 0 && i + (ssize_t)len <= n; i++)
		if (memcmp(buf + i, needle, len) == 0)
			return true;
	return false;
}

/* Find the front end: the one other process whose command line names our
 * socket (its --vdev ...,path=SOCK). */
static void
sched_watch_setup(struct peer *pr)
{
	char path[64];
	struct dirent *de;
	long self = (long)getpid(), found = -1;
	int matches = 0;
	DIR *d;

	pr->self_sched_fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
	d = opendir("/proc");
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0 || pid == self)
			continue;
		if (cmdline_has(de->d_name, pr->o.iface)) {
			found = pid;
			matches++;
		}
	}
	closedir(d);
	if (matches != 1) {
		printf("# run-queue accounting: %d processes name %s, front end not watched\n",
		       matches, pr->o.iface);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%ld/schedstat", found);
	pr->fe_sched_fd = open(path, O_RDONLY | O_CLOEXEC);
	pr->fe_pid = found;
	printf("# run-queue accounting: front end pid %ld%s, self %s\n", found,
	       pr->fe_sched_fd < 0 ? " (schedstat unreadable)" : "",
	       pr->self_sched_fd < 0 ? "unreadable" : "ok");
}

/* Send one packet of `phase` (retrying while the ring is full); then poll
 * until it is back or `timeout_ms` passed. Returns an exit code; *back says
 * whether it came back. */
static int
peer_one(struct peer *pr, enum peer_phase phase, uint32_t timeout_ms, bool *back)
{
	struct peer_phase_state *ps = &pr->ph[phase];
	uint32_t seq = ps->sent;
	struct rte_mbuf *m;
	uint64_t t_end, w0;

	*back = false;
	if (seq >= ps->cap)
		return PEER_EXIT_SETUP;
	w0 = sched_wait_now(pr);
	m = frame_build(pr, phase, seq);
	if (m == NULL) {
		printf("# mbuf allocation failed\n");
		return PEER_EXIT_SETUP;
	}
	ps->sent++;
	while (rte_eth_tx_burst(pr->port, 0, &m, 1) != 1) {
		pr->tx_retries++;
		peer_rx(pr);
		if (peer_quit || past_deadline(pr)) {
			rte_pktmbuf_free(m);
			ps->sent--;
			return peer_quit ? PEER_EXIT_INTERRUPTED : PEER_EXIT_DEADLINE;
		}
		frame_stamp(m);
	}
	t_end = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	while (!ps->seen[seq]) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr))
			return PEER_EXIT_DEADLINE;
		if (now_ns() >= t_end)
			return PEER_EXIT_PASS;
		peer_rx(pr);
	}
	if (ps->sched_ns != NULL)
		ps->sched_ns[seq] = sched_wait_now(pr) - w0;
	*back = true;
	return PEER_EXIT_PASS;
}

/* ---- setup ------------------------------------------------------------- */

static int
peer_port_setup(struct peer *pr)
{
	struct rte_eth_conf conf;
	char devargs[512];
	int ret;

	pr->pool = rte_pktmbuf_pool_create("peer_pool", PEER_NB_MBUFS, PEER_MBUF_CACHE, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pr->pool == NULL) {
		printf("# mbuf pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	snprintf(devargs, sizeof(devargs), "%s,iface=%s,queues=1", PEER_DEV_NAME, pr->o.iface);
	ret = rte_dev_probe(devargs);
	if (ret != 0) {
		printf("# probe %s: %s\n", devargs, rte_strerror(-ret));
		return -1;
	}
	ret = rte_eth_dev_get_port_by_name(PEER_DEV_NAME, &pr->port);
	if (ret != 0) {
		printf("# no port named %s\n", PEER_DEV_NAME);
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	/* net_vhost creates (and listens on) its socket here. */
	ret = rte_eth_dev_configure(pr->port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(pr->port, 0, PEER_RING_SIZE, rte_socket_id(), NULL,
					     pr->pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(pr->port, 0, PEER_RING_SIZE, rte_socket_id(), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(pr->port);
	if (ret == 0)
		ret = rte_eth_macaddr_get(pr->port, &pr->mac);
	if (ret != 0) {
		printf("# %s setup: %s\n", PEER_DEV_NAME, rte_strerror(-ret));
		return -1;
	}
	return 0;
}

static int
peer_wait_link(struct peer *pr)
{
	uint64_t t0 = now_ns();
	uint64_t end = t0 + (uint64_t)(pr->o.link_timeout_s * 1e9);
	struct rte_eth_link link;

	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(pr->port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			break;
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (now_ns() >= end) {
			printf("# link not up within %.1f s\n", pr->o.link_timeout_s);
			return PEER_EXIT_LINK;
		}
		rte_delay_us_sleep(1000);
	}
	printf("LINK up after %.3f s\n", (double)(now_ns() - t0) / 1e9);
	return PEER_EXIT_PASS;
}

static int
phase_alloc(struct peer_phase_state *ps, uint32_t cap, bool latency)
{
	ps->cap = cap;
	ps->seen = calloc(cap, 1);
	ps->lat_ns = latency ? calloc(cap, sizeof(*ps->lat_ns)) : NULL;
	ps->sched_ns = latency ? calloc(cap, sizeof(*ps->sched_ns)) : NULL;
	return ps->seen == NULL || (latency && (ps->lat_ns == NULL || ps->sched_ns == NULL)) ?
		-1 : 0;
}

static void
phase_free(struct peer_phase_state *ps)
{
	free(ps->seen);
	free(ps->lat_ns);
	free(ps->sched_ns);
}

/* ---- modes ------------------------------------------------------------- */

/* Warm up (l3fwd-power is in its main loop), then let it settle to sleep. */
static int
peer_warmup(struct peer *pr)
{
	uint64_t t0 = now_ns();
	bool back;
	int ret;

	/*
	 * One warm-up packet a second until one is back: a front end that
	 * loses the wakeup at arming (net_virtio_user 22.11 does, see
	 * tests/race) would otherwise sleep on the first one for good, and
	 * the test would measure that bug instead of the mode it runs.
	 */
	do {
		ret = peer_one(pr, PEER_PHASE_WARMUP, PEER_WARMUP_RESEND_MS, &back);
		if (ret != PEER_EXIT_PASS)
			return ret;
	} while (!back && now_ns() - t0 < (uint64_t)pr->o.warmup_timeout_ms * 1000000ull &&
		 pr->ph[PEER_PHASE_WARMUP].sent < pr->ph[PEER_PHASE_WARMUP].cap);
	if (!back) {
		printf("# warm-up packet not back within %" PRIu32 " ms\n",
		       pr->o.warmup_timeout_ms);
		return PEER_EXIT_FAIL;
	}
	printf("WARMUP back after %.3f ms\n", (double)(now_ns() - t0) / 1e6);
	sched_watch_setup(pr);
	return peer_drain_until(pr, now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, true);
}

static int
peer_count(struct peer *pr)
{
	struct peer_phase_state *ps = &pr->ph[PEER_PHASE_TRAFFIC];
	struct rte_mbuf *pend[PEER_BURST];
	uint16_t npend = 0, sent, i;
	uint64_t t0 = now_ns(), t_last;
	int ret;

	while (ps->sent < pr->o.count || npend > 0) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr)) {
			rte_pktmbuf_free_bulk(pend, npend);
			return PEER_EXIT_DEADLINE;
		}
		/* Refill the pending burst within the in-flight window. */
		while (npend < PEER_BURST && ps->sent < pr->o.count &&
		       ps->sent - ps->rcvd < pr->o.window) {
			struct rte_mbuf *m = frame_build(pr, PEER_PHASE_TRAFFIC, ps->sent);

			if (m == NULL)
				break;
			pend[npend++] = m;
			ps->sent++;
		}
		if (npend > 0) {
			sent = rte_eth_tx_burst(pr->port, 0, pend, npend);
			if (sent < npend) {
				pr->tx_retries++;
				for (i = sent; i < npend; i++)
					pend[i - sent] = pend[i];
			}
			npend -= sent;
		}
		peer_rx(pr);
	}
	/* Everything is sent: wait for the rest, then linger a little to catch
	 * duplicates. */
	t_last = now_ns();
	while (ps->rcvd < ps->sent) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr))
			break;
		if (now_ns() - t_last > (uint64_t)pr->o.loss_timeout_ms * 1000000ull)
			break;
		peer_rx(pr);
	}
	printf("COUNT %" PRIu32 " sent, %" PRIu32 " back in %.3f s\n", ps->sent, ps->rcvd,
	       (double)(now_ns() - t0) / 1e9);
	ret = peer_drain_until(pr, now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, false);
	return ret == PEER_EXIT_DEADLINE ? PEER_EXIT_PASS : ret;
}

static int
peer_sparse(struct peer *pr)
{
	uint32_t span = pr->o.gap_max_us - pr->o.gap_min_us + 1;
	uint32_t span2 = pr->o.gap2_max_us - pr->o.gap2_min_us + 1;
	uint32_t i;
	bool back;
	int ret;

	for (i = 0; i < pr->o.count; i++) {
		bool second = i % 2 == 1 && pr->o.gap2_max_us > 0;
		uint64_t gap_ns = (uint64_t)(second ?
			pr->o.gap2_min_us + rng_next(&pr->rng) % span2 :
			pr->o.gap_min_us + rng_next(&pr->rng) % span) * 1000;
		uint64_t t_send = now_ns() + gap_ns;

		if (pr->gap_us != NULL)
			pr->gap_us[i] = (uint32_t)(gap_ns / 1000);

		/* Sleep through most of the gap (nothing is in flight), poll the rest. */
		if (gap_ns > 300000) {
			ret = peer_drain_until(pr, t_send - 200000, true);
			if (ret != PEER_EXIT_PASS)
				return ret;
		}
		ret = peer_drain_until(pr, t_send, false);
		if (ret != PEER_EXIT_PASS)
			return ret;
		ret = peer_one(pr, PEER_PHASE_TRAFFIC, pr->o.loss_timeout_ms, &back);
		if (ret != PEER_EXIT_PASS)
			return ret;
		if (!back)
			printf("# sparse packet %" PRIu32 " not back within %" PRIu32 " ms\n",
			       i, pr->o.loss_timeout_ms);
	}
	return peer_drain_until(pr, now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, false);
}

static int
peer_idle(struct peer *pr)
{
	uint64_t t0, t_end;
	uint64_t before;
	bool back;
	int ret;

	before = pr->ph[PEER_PHASE_WARMUP].rcvd + pr->stray + pr->dup + pr->bad;
	t0 = now_ns();
	printf("IDLE begin %.3f s\n", pr->o.idle_s);
	fflush(stdout);
	t_end = t0 + (uint64_t)(pr->o.idle_s * 1e9);
	ret = peer_drain_until(pr, t_end, true);
	if (ret != PEER_EXIT_PASS)
		return ret;
	pr->idle_rx = pr->ph[PEER_PHASE_WARMUP].rcvd + pr->stray + pr->dup + pr->bad - before;
	printf("IDLE end %.3f s received %" PRIu64 "\n", (double)(now_ns() - t0) / 1e9,
	       pr->idle_rx);
	fflush(stdout);
	ret = peer_drain_until(pr, now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, true);
	if (ret != PEER_EXIT_PASS)
		return ret;
	ret = peer_one(pr, PEER_PHASE_CHECK, pr->o.loss_timeout_ms, &back);
	if (ret != PEER_EXIT_PASS)
		return ret;
	return peer_drain_until(pr, now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, false);
}

/* ---- report ------------------------------------------------------------ */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t
percentile(const uint64_t *v, uint32_t n, double p)
{
	uint32_t rank;

	if (n == 0)
		return 0;
	rank = (uint32_t)(p / 100.0 * n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static int
peer_report(struct peer *pr, int run_ret)
{
	struct peer_phase_state *tr = &pr->ph[PEER_PHASE_TRAFFIC];
	struct peer_phase_state *ck = &pr->ph[PEER_PHASE_CHECK];
	char extra[1024] = "";
	char reason[256] = "";
	uint64_t lost = (uint64_t)tr->sent - tr->rcvd;
	uint64_t over = 0;
	bool fail = false;
	uint32_t i, n = 0;

	if (pr->o.mode == PEER_MODE_SPARSE) {
		static const uint32_t edges_us[] = { 50, 100, 200, 500, 1000, 2000, 5000, 10000 };
		uint32_t hist[RTE_DIM(edges_us) + 1] = { 0 };
		uint64_t *raw = malloc(sizeof(*raw) * (tr->rcvd + 1));
		uint64_t *net = malloc(sizeof(*net) * (tr->rcvd + 1));
		uint64_t bound = (uint64_t)pr->o.max_latency_us * 1000;
		uint64_t over_raw = 0, over_net = 0, sched_total = 0;
		size_t off;
		unsigned int b;

		if (raw == NULL || net == NULL) {
			free(raw);
			free(net);
			return PEER_EXIT_SETUP;
		}
		FILE *dump = pr->o.dump != NULL ? fopen(pr->o.dump, "w") : NULL;

		for (i = 0; i < tr->sent; i++) {
			uint64_t l, w;

			if (!tr->seen[i])
				continue;
			l = tr->lat_ns[i];
			w = RTE_MIN(tr->sched_ns[i], l);
			if (dump != NULL)
				fprintf(dump, "%" PRIu32 " %" PRIu64 " %" PRIu64 "\n", i, l, l - w);
			raw[n] = l;
			net[n++] = l - w;
			sched_total += w;
			for (b = 0; b < RTE_DIM(edges_us); b++)
				if (l < (uint64_t)edges_us[b] * 1000)
					break;
			hist[b]++;
			if (bound && l > bound)
				over_raw++;
			if (bound && l - w > bound)
				over_net++;
		}
		/* The slowest packets, with the quiet time before them and the
		 * run-queue wait inside them: a packet that raced the arming
		 * waits for the waiter's timeout with no run-queue wait;
		 * scheduling delays show up as run-queue wait. */
		for (i = 0, b = 0; i < tr->sent && b < PEER_SLOW_LINES; i++) {
			if (!tr->seen[i] || tr->lat_ns[i] < (uint64_t)PEER_SLOW_US * 1000)
				continue;
			printf("SLOW seq=%" PRIu32 " gap_us=%" PRIu32 " latency_us=%.1f runq_wait_us=%.1f\n",
			       i, pr->gap_us != NULL ? pr->gap_us[i] : 0, tr->lat_ns[i] / 1e3,
			       tr->sched_ns[i] / 1e3);
			b++;
		}
		if (dump != NULL)
			fclose(dump);
		qsort(raw, n, sizeof(*raw), cmp_u64);
		qsort(net, n, sizeof(*net), cmp_u64);
		over = pr->o.bound_net ? over_net : over_raw;
		off = snprintf(extra, sizeof(extra),
			       " p50_us=%.1f p99_us=%.1f max_us=%.1f min_us=%.1f"
			       " net_p50_us=%.1f net_p99_us=%.1f net_max_us=%.1f"
			       " runq_wait_total_ms=%.3f runq_watched=%d"
			       " bound_us=%" PRIu32 " bound_on=%s over_bound=%" PRIu64
			       " over_bound_net=%" PRIu64 " hist_us=",
			       percentile(raw, n, 50) / 1e3, percentile(raw, n, 99) / 1e3,
			       n ? raw[n - 1] / 1e3 : 0.0, n ? raw[0] / 1e3 : 0.0,
			       percentile(net, n, 50) / 1e3, percentile(net, n, 99) / 1e3,
			       n ? net[n - 1] / 1e3 : 0.0, sched_total / 1e6,
			       pr->fe_sched_fd >= 0, pr->o.max_latency_us,
			       pr->o.bound_net ? "net" : "raw", over_raw, over_net);
		for (b = 0; b <= RTE_DIM(edges_us) && off < sizeof(extra); b++) {
			if (b < RTE_DIM(edges_us))
				off += snprintf(extra + off, sizeof(extra) - off, "%s<%u:%u",
						b ? "," : "", edges_us[b], hist[b]);
			else
				off += snprintf(extra + off, sizeof(extra) - off, ",>=%u:%u",
						edges_us[b - 1], hist[b]);
		}
		free(raw);
		free(net);
		if (over > 0) {
			fail = true;
			snprintf(reason, sizeof(reason), " reason=%" PRIu64 "_over_%" PRIu32 "us_%s",
				 over, pr->o.max_latency_us, pr->o.bound_net ? "net" : "raw");
		}
	} else if (pr->o.mode == PEER_MODE_IDLE) {
		double lat_us = ck->rcvd ? ck->lat_ns[0] / 1e3 : -1.0;
		uint64_t lat = ck->rcvd ? ck->lat_ns[0] : 0;
		uint64_t lat_net = lat - RTE_MIN(lat, ck->rcvd ? ck->sched_ns[0] : 0);

		snprintf(extra, sizeof(extra), " idle_s=%.3f idle_rx=%" PRIu64
			 " check_back=%" PRIu32 " check_latency_us=%.1f check_net_latency_us=%.1f",
			 pr->o.idle_s, pr->idle_rx, ck->rcvd, lat_us, lat_net / 1e3);
		lost += (uint64_t)ck->sent - ck->rcvd;
		if (ck->rcvd != 1) {
			fail = true;
			snprintf(reason, sizeof(reason), " reason=check_packet_lost");
		} else if (pr->o.max_latency_us &&
			   (pr->o.bound_net ? lat_net : lat) > (uint64_t)pr->o.max_latency_us * 1000) {
			fail = true;
			snprintf(reason, sizeof(reason), " reason=check_latency_over_%" PRIu32 "us",
				 pr->o.max_latency_us);
		} else if (pr->idle_rx != 0) {
			fail = true;
			snprintf(reason, sizeof(reason), " reason=traffic_during_idle");
		}
	}
	if (run_ret == PEER_EXIT_PASS && (lost || pr->bad || pr->dup || pr->stray)) {
		fail = true;
		if (reason[0] == '\0')
			snprintf(reason, sizeof(reason), " reason=%s",
				 lost ? "lost" : pr->bad ? "bad_frame" : pr->dup ? "duplicate" : "stray");
	}
	/* A run that did not finish: say why it stopped, not what it missed. */
	if (run_ret != PEER_EXIT_PASS)
		snprintf(reason, sizeof(reason), " reason=%s",
			 run_ret == PEER_EXIT_DEADLINE ? "deadline" :
			 run_ret == PEER_EXIT_INTERRUPTED ? "interrupted" :
			 run_ret == PEER_EXIT_LINK ? "link_timeout" :
			 run_ret == PEER_EXIT_FAIL ? "warmup_lost" : "setup");
	if (pr->first_bad[0] != '\0')
		printf("# first bad frame: %s\n", pr->first_bad);
	printf("RESULT: %s mode=%s sent=%" PRIu32 " received=%" PRIu32 " lost=%" PRIu64
	       " dup=%" PRIu64 " bad=%" PRIu64 " stray=%" PRIu64 " tx_retries=%" PRIu64
	       " warmup=%" PRIu32 "/%" PRIu32 "%s%s\n",
	       (fail || run_ret != PEER_EXIT_PASS) ? "FAIL" : "PASS",
	       peer_mode_names[pr->o.mode], tr->sent, tr->rcvd, lost, pr->dup, pr->bad,
	       pr->stray, pr->tx_retries, pr->ph[PEER_PHASE_WARMUP].rcvd,
	       pr->ph[PEER_PHASE_WARMUP].sent, extra, reason);
	fflush(stdout);
	if (run_ret != PEER_EXIT_PASS)
		return run_ret;
	return fail ? PEER_EXIT_FAIL : PEER_EXIT_PASS;
}

/* ---- options ----------------------------------------------------------- */

static void
usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [EAL options] -- --iface SOCK MODE [options]\n"
		"MODE: --count N | --sparse N | --idle SECONDS\n"
		"  --window N            count: packets in flight at most (default 128)\n"
		"  --gap-min-us N        sparse: shortest gap (default 100)\n"
		"  --gap-max-us N        sparse: longest gap (default 5000)\n"
		"  --gap2-min-us N, --gap2-max-us N  sparse: every second gap from this range\n"
		"  --dump FILE           sparse: \"seq latency_ns net_ns\" per packet\n"
		"  --max-latency-us N    sparse/idle: fail any packet slower than N us (0: off)\n"
		"  --bound-on raw|net    apply it to the round trip (raw, default) or to the round\n"
		"                        trip minus both processes' run-queue wait (net)\n"
		"  --loss-timeout-ms N   a packet not back after N ms is lost (default 200)\n"
		"  --warmup-timeout-ms N the warm-up packet's allowance (default 20000)\n"
		"  --settle-ms N         quiet time after warm-up and around the idle window (default 200)\n"
		"  --link-timeout S      wait at most S s for the link (default 30)\n"
		"  --timeout S           whole run deadline after link up (default 120)\n"
		"  --seed N              gap generator seed (default: time and pid)\n"
		"  --fe-mac MAC          the front end's MAC: destination, and checked as source\n"
		"  --linger S            after RESULT keep the port up until a signal, at most S s\n",
		prog);
}

static int
parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

static int
parse_opts(int argc, char **argv, struct peer_opts *o)
{
	enum {
		OPT_IFACE = 256, OPT_COUNT, OPT_SPARSE, OPT_IDLE, OPT_WINDOW, OPT_GAP_MIN,
		OPT_GAP_MAX, OPT_MAX_LAT, OPT_LOSS, OPT_WARMUP, OPT_SETTLE, OPT_LINK,
		OPT_TIMEOUT, OPT_SEED, OPT_FE_MAC, OPT_LINGER, OPT_BOUND_ON, OPT_HELP,
		OPT_GAP2_MIN, OPT_GAP2_MAX, OPT_DUMP,
	};
	static const struct option lo[] = {
		{ "iface", required_argument, NULL, OPT_IFACE },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "sparse", required_argument, NULL, OPT_SPARSE },
		{ "idle", required_argument, NULL, OPT_IDLE },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "gap-min-us", required_argument, NULL, OPT_GAP_MIN },
		{ "gap-max-us", required_argument, NULL, OPT_GAP_MAX },
		{ "gap2-min-us", required_argument, NULL, OPT_GAP2_MIN },
		{ "gap2-max-us", required_argument, NULL, OPT_GAP2_MAX },
		{ "dump", required_argument, NULL, OPT_DUMP },
		{ "max-latency-us", required_argument, NULL, OPT_MAX_LAT },
		{ "loss-timeout-ms", required_argument, NULL, OPT_LOSS },
		{ "warmup-timeout-ms", required_argument, NULL, OPT_WARMUP },
		{ "settle-ms", required_argument, NULL, OPT_SETTLE },
		{ "link-timeout", required_argument, NULL, OPT_LINK },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "fe-mac", required_argument, NULL, OPT_FE_MAC },
		{ "linger", required_argument, NULL, OPT_LINGER },
		{ "bound-on", required_argument, NULL, OPT_BOUND_ON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c, modes = 0;
	uint32_t u;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case OPT_IFACE:
			o->iface = optarg;
			break;
		case OPT_COUNT:
		case OPT_SPARSE:
			bad = parse_u32(optarg, 1, PEER_MAX_COUNT, &o->count);
			o->mode = c == OPT_COUNT ? PEER_MODE_COUNT : PEER_MODE_SPARSE;
			modes++;
			break;
		case OPT_IDLE:
			bad = parse_double(optarg, 0.0, 3600.0, &o->idle_s);
			o->mode = PEER_MODE_IDLE;
			modes++;
			break;
		case OPT_WINDOW:
			bad = parse_u32(optarg, 1, PEER_NB_MBUFS / 2, &o->window);
			break;
		case OPT_GAP_MIN:
			bad = parse_u32(optarg, 0, 10000000, &o->gap_min_us);
			break;
		case OPT_GAP_MAX:
			bad = parse_u32(optarg, 0, 10000000, &o->gap_max_us);
			break;
		case OPT_GAP2_MIN:
			bad = parse_u32(optarg, 0, 10000000, &o->gap2_min_us);
			break;
		case OPT_GAP2_MAX:
			bad = parse_u32(optarg, 0, 10000000, &o->gap2_max_us);
			break;
		case OPT_DUMP:
			o->dump = optarg;
			break;
		case OPT_MAX_LAT:
			bad = parse_u32(optarg, 0, UINT32_MAX, &o->max_latency_us);
			break;
		case OPT_LOSS:
			bad = parse_u32(optarg, 1, 600000, &o->loss_timeout_ms);
			break;
		case OPT_WARMUP:
			bad = parse_u32(optarg, 1, 600000, &o->warmup_timeout_ms);
			break;
		case OPT_SETTLE:
			bad = parse_u32(optarg, 0, 60000, &o->settle_ms);
			break;
		case OPT_LINK:
			bad = parse_double(optarg, 0.0, 3600.0, &o->link_timeout_s);
			break;
		case OPT_TIMEOUT:
			bad = parse_double(optarg, 0.001, 36000.0, &o->timeout_s);
			break;
		case OPT_SEED:
			bad = parse_u32(optarg, 0, UINT32_MAX, &u);
			o->seed = u;
			break;
		case OPT_FE_MAC:
			bad = rte_ether_unformat_addr(optarg, &o->fe_mac);
			o->have_fe_mac = true;
			break;
		case OPT_LINGER:
			o->linger = true;
			bad = parse_double(optarg, 0.0, 36000.0, &o->linger_s);
			break;
		case OPT_BOUND_ON:
			if (strcmp(optarg, "raw") == 0)
				o->bound_net = false;
			else if (strcmp(optarg, "net") == 0)
				o->bound_net = true;
			else
				bad = 1;
			break;
		default:
			return -1;
		}
		if (bad) {
			fprintf(stderr, "bad value for --%s: '%s'\n", lo[c - OPT_IFACE].name,
				optarg);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->iface == NULL || modes != 1) {
		fprintf(stderr, "need --iface and exactly one of --count, --sparse, --idle\n");
		return -1;
	}
	if (o->gap_min_us > o->gap_max_us || o->gap2_min_us > o->gap2_max_us) {
		fprintf(stderr, "--gap-min-us must not exceed --gap-max-us\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct peer pr = {
		.fe_sched_fd = -1,
		.self_sched_fd = -1,
		.fe_pid = -1,
		.o = {
			.window = 128,
			.gap_min_us = 100,
			.gap_max_us = 5000,
			.loss_timeout_ms = 200,
			.warmup_timeout_ms = 20000,
			.settle_ms = 200,
			.link_timeout_s = 30.0,
			.timeout_s = 120.0,
		},
	};
	int ret, code;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pr.o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		printf("RESULT: FAIL reason=eal_init (%s)\n", rte_strerror(rte_errno));
		return PEER_EXIT_SETUP;
	}
	/* EAL leaves the program name in front of the application's options. */
	argc -= ret;
	argv += ret;
	if (parse_opts(argc, argv, &pr.o) != 0) {
		usage("vhost_peer");
		rte_eal_cleanup();
		return PEER_EXIT_USAGE;
	}
	signal(SIGINT, peer_on_signal);
	signal(SIGTERM, peer_on_signal);

	pr.rng = pr.o.seed ? pr.o.seed : 0x9e3779b97f4a7c15ull;
	pr.run_id = (uint32_t)rng_next(&pr.rng);
	printf("# mode=%s seed=%" PRIu64 " run_id=%08" PRIx32 "\n", peer_mode_names[pr.o.mode],
	       pr.o.seed, pr.run_id);

	if (phase_alloc(&pr.ph[PEER_PHASE_WARMUP], PEER_WARMUP_MAX, true) != 0 ||
	    phase_alloc(&pr.ph[PEER_PHASE_TRAFFIC],
			pr.o.mode == PEER_MODE_IDLE ? 1 : pr.o.count, true) != 0 ||
	    phase_alloc(&pr.ph[PEER_PHASE_CHECK], 1, true) != 0 ||
	    (pr.o.mode == PEER_MODE_SPARSE &&
	     (pr.gap_us = calloc(pr.o.count, sizeof(*pr.gap_us))) == NULL) ||
	    peer_port_setup(&pr) != 0) {
		printf("RESULT: FAIL reason=setup\n");
		code = PEER_EXIT_SETUP;
		goto out;
	}
	printf("READY iface=%s port=%u mac=" RTE_ETHER_ADDR_PRT_FMT "\n", pr.o.iface, pr.port,
	       RTE_ETHER_ADDR_BYTES(&pr.mac));

	ret = peer_wait_link(&pr);
	pr.deadline_ns = now_ns() + (uint64_t)(pr.o.timeout_s * 1e9);
	if (ret == PEER_EXIT_PASS)
		ret = peer_warmup(&pr);
	if (ret == PEER_EXIT_PASS) {
		switch (pr.o.mode) {
		case PEER_MODE_COUNT:
			ret = peer_count(&pr);
			break;
		case PEER_MODE_SPARSE:
			ret = peer_sparse(&pr);
			break;
		case PEER_MODE_IDLE:
			ret = peer_idle(&pr);
			break;
		default:
			ret = PEER_EXIT_USAGE;
			break;
		}
	}
	code = peer_report(&pr, ret);

	if (pr.o.linger && !peer_quit) {
		uint64_t before = pr.bad + pr.dup + pr.stray;

		printf("LINGER until a signal (at most %.0f s)\n", pr.o.linger_s);
		pr.deadline_ns = UINT64_MAX;
		peer_drain_until(&pr, now_ns() + (uint64_t)(pr.o.linger_s * 1e9), true);
		printf("LINGER end: %" PRIu64 " late or unexpected frames\n",
		       pr.bad + pr.dup + pr.stray - before);
	}
	rte_eth_dev_stop(pr.port);
	rte_eth_dev_close(pr.port);
out:
	phase_free(&pr.ph[PEER_PHASE_WARMUP]);
	phase_free(&pr.ph[PEER_PHASE_TRAFFIC]);
	phase_free(&pr.ph[PEER_PHASE_CHECK]);
	free(pr.gap_us);
	if (pr.fe_sched_fd >= 0)
		close(pr.fe_sched_fd);
	if (pr.self_sched_fd >= 0)
		close(pr.self_sched_fd);
	rte_eal_cleanup();
	return code;
}
