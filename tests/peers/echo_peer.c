/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * echo_peer: the back end of every two-process test whose front end sends
 * the traffic back: DPDK's l3fwd-power (tests/l3fwd) and vnapi-fwd
 * (tests/napi_fwd).
 *
 * One process, one lcore. DPDK's net_vhost (loaded from DPDK's plugin
 * directory, probed here on --iface SOCK) is the vhost-user server; the
 * front end under test (net_vnapi or net_virtio_user inside the forwarder)
 * connects to it. The peer sends Ethernet/IPv4/UDP frames to 1.1.1.1
 * (l3fwd-power's LPM route 1.1.1.0/24 -> port 0; with only port 0 enabled
 * every IPv4 packet goes back out of port 0 anyway) and receives them back.
 *
 * Every frame carries a magic, a run id, a phase, a sequence number, the
 * CLOCK_MONOTONIC send time and a pattern derived from the rest. A returned
 * frame must show what the forwarder does to it (--expect) and nothing else
 * changed:
 *   routed   l3fwd-power: destination MAC 02:00:00:00:00:00, source the
 *            front end's (--fe-mac), TTL decremented by one (the default);
 *   io       vnapi-fwd --fwd io: the frame as sent;
 *   macswap  vnapi-fwd --fwd macswap: the MAC addresses swapped.
 * The receive time minus the send time in the payload is its round trip.
 *
 * Every mode first sends a warm-up packet and waits (generously) for it to
 * come back, resending it every --warmup-resend-ms (0: never, so that the
 * forwarder sees exactly one), so that the forwarder is known to be in its
 * main loop; then it lets the forwarder settle into its interrupt sleep
 * (--settle-ms).
 *
 * Modes:
 *   --count N    N packets in bursts of --burst-size, at most --window in
 *                flight (so that no ring on the path can overflow), with
 *                --gap-us of receive-only time after each burst; exactly N
 *                must come back.
 *   --sparse N   N single packets, each sent a random --gap-min-us ..
 *                --gap-max-us after the previous one came back; each must
 *                come back within --loss-timeout-ms (else lost) and, with
 *                --max-latency-us, within that bound (the round trip as
 *                measured). Reports p50/p99/max, both of the round trip and
 *                of the round trip minus the run-queue wait and CPU stalls
 *                of the two processes (see "scheduler accounting").
 *                With --gap2-min-us/--gap2-max-us every second packet uses
 *                that range instead (pairs: a packet, then a second one soon
 *                after it came back). --dump FILE writes one line
 *                "seq latency_ns net_ns" per packet back. A LATENCY line
 *                follows RESULT with the tail (p99.9, counts over 1 and 5 ms,
 *                raw and net), the peer's own stalls and the round trips
 *                during host steal.
 *   --idle S     send nothing for S seconds ("IDLE begin" / "IDLE end" lines
 *                frame the window), wait --settle-ms, then one check packet
 *                (counted as the one packet sent; same latency bound).
 *
 * --queues Q probes net_vhost with Q queue pairs. net_vhost's tx queue q
 * fills the front end's rx queue q, so the peer steers: sparse packet i goes
 * out on queue i % Q (warm-up, count and idle traffic on queue 0), and it
 * receives on every queue. RESULT has, per queue, qN_sent (every frame
 * net_vhost accepted on tx queue N, warm-up included: exactly what the front
 * end's rx queue N must receive) and qN_back (frames back on rx queue N).
 *
 * A latency bound (--max-latency-us) applies to every packet: no round trip
 * is excused. The run-queue wait, CPU stalls and host steal measured around
 * each round trip are figures for the benchmark (devtools/latency_bench.py),
 * never a reason to leave a packet out of the verdict.
 *
 * Usage: echo_peer [EAL options] -- --iface SOCK MODE [options]
 * The last line of a finished run is "RESULT: PASS|FAIL key=value...";
 * with --linger S the process then keeps the port up (draining stray packets)
 * until SIGINT/SIGTERM or for S seconds, so that the front end can be stopped
 * while its back end is still there.
 *
 * Exit status: 0 pass, 1 traffic check failed, 2 usage, 3 setup error,
 * 4 link not up within --link-timeout, 5 run deadline (--timeout) expired,
 * 6 interrupted before a result.
 */

#define _GNU_SOURCE
#include <assert.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "peer_frame.h"
#include "peer_opt.h"
#include "peer_port.h"
#include "peer_proc.h"
#include "peer_stall.h"
#include "peer_util.h"

#include "vnapi_compat.h"

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
#define PEER_WARMUP_MAX 64          /* warm-up packets at most */
#define PEER_NB_MBUFS   8191
#define PEER_MBUF_CACHE 256
#define PEER_RING_SIZE  1024
#define PEER_PATTERN    16
#define PEER_MAX_COUNT  (1u << 24)
#define PEER_SLOW_US    2000 /* sparse: list packets slower than this ... */
#define PEER_SLOW_LINES 40   /* ... at most this many */
#define PEER_STALL_NS   100000 /* a longer gap in our wait for a reply: we were not running */
#define PEER_PROBE_PERIOD_US 200   /* the front end's CPU probe: wakes this often ... */
#define PEER_PROBE_LATE_US   100   /* ... and a wake-up later than this is a stall */
#define PEER_PROBE_CAP       (1u << 18)
#define PEER_MAX_QUEUES      8

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

/* What the forwarder does to a frame before sending it back. */
enum peer_expect {
	PEER_EXPECT_ROUTED,  /* l3fwd-power */
	PEER_EXPECT_IO,      /* vnapi-fwd --fwd io */
	PEER_EXPECT_MACSWAP, /* vnapi-fwd --fwd macswap */
};

static const char * const peer_expect_names[] = {
	[PEER_EXPECT_ROUTED] = "routed",
	[PEER_EXPECT_IO] = "io",
	[PEER_EXPECT_MACSWAP] = "macswap",
	NULL,
};

enum peer_phase {
	PEER_PHASE_WARMUP,
	PEER_PHASE_TRAFFIC, /* count or sparse packets, or idle's check packet */
	PEER_PHASE_MAX,
};

struct __rte_packed_begin peer_payload {
	uint32_t magic;
	uint32_t run_id;
	uint32_t seq;
	uint8_t phase;
	uint8_t reserved[3];
	uint64_t t_ns;
	uint8_t pattern[PEER_PATTERN];
} __rte_packed_end;

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
	uint32_t gap2_min_us;      /* sparse: every second gap from this range (0/0: off) */
	uint32_t gap2_max_us;
	const char *dump;          /* sparse: "seq latency_ns net_ns" per packet, or NULL */
	uint32_t max_latency_us;   /* 0: no bound */
	uint32_t queues;           /* queue pairs of net_vhost (1..PEER_MAX_QUEUES) */
	uint32_t window;
	uint32_t burst_size;
	uint32_t gap_us;           /* count: receive-only time after each burst */
	int expect;                /* enum peer_expect */
	uint32_t warmup_resend_ms; /* 0: one warm-up packet only */
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
	unsigned int nb_modes;
};

/* Per-phase bookkeeping: one byte per sequence number, latency per packet. */
struct peer_phase_state {
	uint32_t cap;
	uint32_t sent;
	uint32_t rcvd;
	uint8_t *seen;
	uint64_t *lat_ns;
	uint64_t *sched_ns; /* time either process did not run during each round trip */
	uint64_t *fe_ns;    /* the front end's part of it (run-queue wait) */
	uint64_t *t_ns;     /* when each packet was sent */
	uint8_t *stolen;    /* the host took CPU time (steal) during the round trip */
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
	uint64_t q_sent[PEER_MAX_QUEUES]; /* frames net_vhost accepted per tx queue */
	uint64_t q_back[PEER_MAX_QUEUES]; /* frames received per rx queue */
	/* Scheduler accounting: /proc/<pid>/schedstat (run-queue wait) of the
	 * front end's main thread and of ourselves, -1 when unavailable. */
	int fe_sched_fd;
	int self_sched_fd;
	int stat_fd;          /* /proc/stat (steal), with the front end watched */
	uint64_t stall_ns;    /* gaps over PEER_STALL_NS in our waits for replies */
	struct peer_stall_probe probe;      /* on the front end's CPU (sparse) */
	struct peer_stall_probe self_probe; /* on ours: steal inside a burst call */
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

static void
note_bad(struct peer *pr, const char *what, uint32_t seq)
{
	pr->bad++;
	if (pr->first_bad[0] == '\0')
		snprintf(pr->first_bad, sizeof(pr->first_bad), "%s (seq %" PRIu32 ")", what, seq);
}

/* ---- frames ------------------------------------------------------------ */

/* The pattern of packet @p seq of @p phase in this run. */
static void
frame_pattern(const struct peer *pr, uint8_t *p, uint32_t seq, uint8_t phase)
{
	peer_pattern_fill(p, PEER_PATTERN,
			  pr->run_id ^ (seq * 2654435761u) ^ ((uint32_t)phase << 24));
}

/* The destination of what we send. */
static const struct rte_ether_addr *
frame_fe_mac(const struct peer *pr)
{
	return pr->o.have_fe_mac ? &pr->o.fe_mac : &peer_default_fe_mac;
}

static struct rte_mbuf *
frame_build(struct peer *pr, enum peer_phase phase, uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pr->pool);
	struct peer_udp h = {
		.src = pr->mac,
		.dst = *frame_fe_mac(pr),
		.ip_src = PEER_IP_SRC,
		.ip_dst = PEER_IP_DST,
		.port_src = PEER_UDP_SRC,
		.port_dst = PEER_UDP_DST,
		.ip_id = (uint16_t)seq,
		.ttl = PEER_TTL,
	};
	struct peer_frame *f;

	if (m == NULL)
		return NULL;
	f = (struct peer_frame *)rte_pktmbuf_append(m, sizeof(*f));
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	peer_udp_fill((uint8_t *)f, sizeof(*f), &h);
	f->pl.magic = PEER_MAGIC;
	f->pl.run_id = pr->run_id;
	f->pl.seq = seq;
	f->pl.phase = (uint8_t)phase;
	frame_pattern(pr, f->pl.pattern, seq, (uint8_t)phase);
	f->pl.t_ns = peer_now_ns();
	return m;
}

/* Stamp the send time again right before a (re)try. */
static void
frame_stamp(struct rte_mbuf *m)
{
	struct peer_frame *f = rte_pktmbuf_mtod(m, struct peer_frame *);

	f->pl.t_ns = peer_now_ns();
}

/* NULL when the frame's addresses and TTL show the forwarder's work (--expect). */
static const char *
frame_check_fwd(const struct peer *pr, const struct peer_frame *f)
{
	const struct rte_ether_addr *fe = frame_fe_mac(pr);

	switch (pr->o.expect) {
	case PEER_EXPECT_ROUTED:
		/* l3fwd-power's work: routed back out of port 0, TTL decremented. */
		if (!rte_is_same_ether_addr(&f->eth.dst_addr, &peer_l3fwd_dst))
			return "destination MAC is not l3fwd-power's 02:00:00:00:00:00";
		if (pr->o.have_fe_mac && !rte_is_same_ether_addr(&f->eth.src_addr, fe))
			return "source MAC is not the front end's";
		if (f->ip.time_to_live != PEER_TTL - 1)
			return "TTL not decremented by exactly one";
		return NULL;
	case PEER_EXPECT_IO:
		if (!rte_is_same_ether_addr(&f->eth.dst_addr, fe) ||
		    !rte_is_same_ether_addr(&f->eth.src_addr, &pr->mac))
			return "MACs changed";
		break;
	case PEER_EXPECT_MACSWAP:
		if (!rte_is_same_ether_addr(&f->eth.dst_addr, &pr->mac) ||
		    !rte_is_same_ether_addr(&f->eth.src_addr, fe))
			return "MACs not swapped";
		break;
	}
	if (f->ip.time_to_live != PEER_TTL)
		return "TTL changed";
	return NULL;
}

/* Check one returned frame and account for it. */
static void
frame_check(struct peer *pr, struct rte_mbuf *m, uint64_t t_rx)
{
	const struct peer_frame *f;
	struct peer_phase_state *ps;
	uint8_t pat[PEER_PATTERN];
	const char *why;
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
	why = frame_check_fwd(pr, f);
	if (why != NULL) {
		note_bad(pr, why, seq);
		return;
	}
	frame_pattern(pr, pat, seq, f->pl.phase);
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
	unsigned int total = 0;
	uint16_t n, i, q;
	uint64_t t;

	for (q = 0; q < pr->o.queues; q++) {
		n = rte_eth_rx_burst(pr->port, q, pkts, PEER_BURST);
		if (n == 0)
			continue;
		t = peer_now_ns();
		for (i = 0; i < n; i++) {
			frame_check(pr, pkts[i], t);
			rte_pktmbuf_free(pkts[i]);
		}
		pr->q_back[q] += n;
		total += n;
	}
	return total;
}

/* rte_eth_tx_burst on queue @p q, counting what net_vhost accepted. */
static uint16_t
peer_tx(struct peer *pr, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = rte_eth_tx_burst(pr->port, q, pkts, n);

	pr->q_sent[q] += sent;
	return sent;
}

static bool
past_deadline(const struct peer *pr)
{
	return peer_now_ns() >= pr->deadline_ns;
}

/* Poll rx until `until_ns` (sleeping in 1 ms steps when `lazy`). */
static int
peer_drain_until(struct peer *pr, uint64_t until_ns, bool lazy)
{
	while (peer_now_ns() < until_ns) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr))
			return PEER_EXIT_DEADLINE;
		if (peer_rx(pr) == 0 && lazy) {
			uint64_t left = until_ns - peer_now_ns();
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
 *
 * On a VM the host also deschedules our vCPU (steal), which no schedstat
 * shows: a gap over PEER_STALL_NS in our busy wait for the reply is time we
 * did not run either (our own run-queue wait is part of those gaps, so the
 * larger of the two counts, once). For the front end's CPU a stall probe
 * (stall_probe_setup) gives the time that CPU was not there; with the front
 * end's run-queue wait the larger counts. A round trip during which the machine's
 * steal time (/proc/stat) grew is marked and counted. These are figures: the
 * latency bound (--max-latency-us) applies to the round trip as measured.
 */
static uint64_t
sched_wait_fe(const struct peer *pr)
{
	return peer_schedstat_wait_ns(pr->fe_sched_fd);
}

static uint64_t
sched_wait_self(const struct peer *pr)
{
	return peer_schedstat_wait_ns(pr->self_sched_fd);
}

/* Does /proc/<pid>/cmdline hold `needle`? */
static bool
cmdline_has(const char *pid, const char *needle)
{
	char path[sizeof("/proc//cmdline") + 256], buf[8192]; /* a d_name is < 256 */
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

/*
 * The front end's CPU: when its main thread (its lcore) is pinned to one CPU
 * that is not ours, a stall probe runs there (peer_stall.h), so that a round
 * trip during which that CPU was taken from it (by the hypervisor, mostly)
 * is known. A front end asleep on a lost wakeup leaves the CPU idle: no
 * stall explains that delay. A second probe runs on our own CPU: our busy
 * wait sees the gaps between its polls, not a steal inside a tx or rx burst
 * call (the in-process back end's work).
 */
static void
stall_probe_setup(struct peer *pr)
{
	cpu_set_t fe_set, self_set;
	int cpu, self = sched_getcpu(), ret;

	/* Our lcore is pinned (--lcores): probe the one CPU we run on. */
	if (sched_getaffinity(0, sizeof(self_set), &self_set) == 0 && CPU_COUNT(&self_set) == 1) {
		ret = peer_stall_start(&pr->self_probe, self, PEER_PROBE_PERIOD_US,
				       PEER_PROBE_LATE_US, PEER_PROBE_CAP);
		printf("# stall probe on our CPU %d: %s\n", self,
		       ret == 0 ? "running" : strerror(-ret));
	} else {
		printf("# stall probe: we are not pinned to one CPU, no probe on ours\n");
	}

	if (sched_getaffinity((pid_t)pr->fe_pid, sizeof(fe_set), &fe_set) != 0 ||
	    CPU_COUNT(&fe_set) != 1) {
		printf("# stall probe: front end not pinned to one CPU, no probe\n");
		return;
	}
	for (cpu = 0; !CPU_ISSET(cpu, &fe_set); cpu++)
		;
	if (cpu == self) {
		printf("# stall probe: front end shares our CPU %d, no probe\n", cpu);
		return;
	}
	ret = peer_stall_start(&pr->probe, cpu, PEER_PROBE_PERIOD_US, PEER_PROBE_LATE_US,
			       PEER_PROBE_CAP);
	printf("# stall probe on CPU %d: %s\n", cpu, ret == 0 ? "running" : strerror(-ret));
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
	pr->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	pr->fe_pid = found;
	printf("# run-queue accounting: front end pid %ld%s, self %s\n", found,
	       pr->fe_sched_fd < 0 ? " (schedstat unreadable)" : "",
	       pr->self_sched_fd < 0 ? "unreadable" : "ok");
	if (pr->o.mode == PEER_MODE_SPARSE || pr->o.mode == PEER_MODE_IDLE)
		stall_probe_setup(pr);
}

/* Send one packet of `phase` (retrying while the ring is full); then poll
 * until it is back or `timeout_ms` passed. Returns an exit code; *back says
 * whether it came back. */
static int
peer_one(struct peer *pr, enum peer_phase phase, uint32_t timeout_ms, bool *back)
{
	struct peer_phase_state *ps = &pr->ph[phase];
	uint32_t seq = ps->sent;
	/* Steer sparse packets over the queues; everything else on queue 0. */
	uint16_t q = phase == PEER_PHASE_TRAFFIC && pr->o.mode == PEER_MODE_SPARSE ?
		     (uint16_t)(seq % pr->o.queues) : 0;
	struct rte_mbuf *m;
	uint64_t t_end, t, last, stall = 0, fe_w0, self_w0, steal0;

	*back = false;
	if (seq >= ps->cap)
		return PEER_EXIT_SETUP;
	if (ps->t_ns != NULL)
		ps->t_ns[seq] = peer_now_ns(); /* before the frame's send stamp */
	fe_w0 = sched_wait_fe(pr);
	self_w0 = sched_wait_self(pr);
	steal0 = peer_steal_ticks(pr->stat_fd);
	m = frame_build(pr, phase, seq);
	if (m == NULL) {
		printf("# mbuf allocation failed\n");
		return PEER_EXIT_SETUP;
	}
	ps->sent++;
	while (peer_tx(pr, q, &m, 1) != 1) {
		pr->tx_retries++;
		peer_rx(pr);
		if (peer_quit || past_deadline(pr)) {
			rte_pktmbuf_free(m);
			ps->sent--;
			return peer_quit ? PEER_EXIT_INTERRUPTED : PEER_EXIT_DEADLINE;
		}
		frame_stamp(m);
	}
	last = peer_now_ns();
	t_end = last + (uint64_t)timeout_ms * 1000000ull;
	while (!ps->seen[seq]) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr))
			return PEER_EXIT_DEADLINE;
		t = peer_now_ns();
		if (t >= t_end)
			return PEER_EXIT_PASS;
		/* A gap in this busy loop: we were not running. */
		if (t - last > PEER_STALL_NS)
			stall += t - last;
		peer_rx(pr);
		last = peer_now_ns();
	}
	pr->stall_ns += stall;
	if (ps->sched_ns != NULL) {
		ps->fe_ns[seq] = sched_wait_fe(pr) - fe_w0;
		ps->sched_ns[seq] = ps->fe_ns[seq] + RTE_MAX(sched_wait_self(pr) - self_w0, stall);
	}
	if (ps->stolen != NULL)
		ps->stolen[seq] = peer_steal_ticks(pr->stat_fd) != steal0;
	*back = true;
	return PEER_EXIT_PASS;
}

/* ---- setup ------------------------------------------------------------- */

static int
peer_port_setup(struct peer *pr)
{
	struct peer_port_conf c = {
		.nb_queues = (uint16_t)pr->o.queues,
		.nb_desc = PEER_RING_SIZE,
		.quiet = true,
	};
	int ret;

	pr->pool = rte_pktmbuf_pool_create("peer_pool", PEER_NB_MBUFS, PEER_MBUF_CACHE, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (pr->pool == NULL) {
		printf("# mbuf pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	c.rx_pool = pr->pool;
	if (peer_vhost_probe(PEER_DEV_NAME, pr->o.iface, (uint16_t)pr->o.queues,
			     &pr->port) != 0)
		return -1;
	/* net_vhost creates (and listens on) its socket at configure. */
	ret = peer_port_start(pr->port, PEER_DEV_NAME, &c);
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
	double took;
	int ret;

	ret = peer_link_wait(pr->port, true, pr->o.link_timeout_s, &peer_quit, NULL, &took);
	if (ret == -EINTR)
		return PEER_EXIT_INTERRUPTED;
	if (ret != 0) {
		printf("# link not up within %.1f s\n", pr->o.link_timeout_s);
		return PEER_EXIT_LINK;
	}
	printf("LINK up after %.3f s\n", took);
	return PEER_EXIT_PASS;
}

static int
phase_alloc(struct peer_phase_state *ps, uint32_t cap, bool latency)
{
	ps->cap = cap;
	ps->seen = calloc(cap, 1);
	ps->lat_ns = latency ? calloc(cap, sizeof(*ps->lat_ns)) : NULL;
	ps->sched_ns = latency ? calloc(cap, sizeof(*ps->sched_ns)) : NULL;
	ps->fe_ns = latency ? calloc(cap, sizeof(*ps->fe_ns)) : NULL;
	ps->t_ns = latency ? calloc(cap, sizeof(*ps->t_ns)) : NULL;
	ps->stolen = latency ? calloc(cap, 1) : NULL;
	return ps->seen == NULL || (latency && (ps->lat_ns == NULL || ps->sched_ns == NULL ||
						ps->fe_ns == NULL || ps->t_ns == NULL ||
						ps->stolen == NULL)) ? -1 : 0;
}

static void
phase_free(struct peer_phase_state *ps)
{
	free(ps->seen);
	free(ps->lat_ns);
	free(ps->sched_ns);
	free(ps->fe_ns);
	free(ps->t_ns);
	free(ps->stolen);
}

/* ---- modes ------------------------------------------------------------- */

/* Warm up (l3fwd-power is in its main loop), then let it settle to sleep. */
static int
peer_warmup(struct peer *pr)
{
	uint64_t t0 = peer_now_ns();
	bool back;
	int ret;

	/*
	 * One warm-up packet every --warmup-resend-ms until one is back: a
	 * front end that loses the wakeup at arming (net_virtio_user 22.11
	 * does, see vhost_pair --scenario race) would otherwise sleep on the
	 * first one for good, and the test would measure that bug instead of
	 * the mode it runs.
	 */
	do {
		ret = peer_one(pr, PEER_PHASE_WARMUP, pr->o.warmup_resend_ms != 0 ?
			       pr->o.warmup_resend_ms : pr->o.warmup_timeout_ms, &back);
		if (ret != PEER_EXIT_PASS)
			return ret;
	} while (!back && peer_now_ns() - t0 < (uint64_t)pr->o.warmup_timeout_ms * 1000000ull &&
		 pr->ph[PEER_PHASE_WARMUP].sent < pr->ph[PEER_PHASE_WARMUP].cap);
	if (!back) {
		printf("# warm-up packet not back within %" PRIu32 " ms\n",
		       pr->o.warmup_timeout_ms);
		return PEER_EXIT_FAIL;
	}
	printf("WARMUP back after %.3f ms\n", (double)(peer_now_ns() - t0) / 1e6);
	sched_watch_setup(pr);
	return peer_drain_until(pr, peer_now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, true);
}

static int
peer_count(struct peer *pr)
{
	struct peer_phase_state *ps = &pr->ph[PEER_PHASE_TRAFFIC];
	struct rte_mbuf *pend[PEER_BURST];
	uint16_t npend = 0, sent, i;
	uint64_t t0 = peer_now_ns(), t_last;
	int ret;

	while (ps->sent < pr->o.count || npend > 0) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr)) {
			rte_pktmbuf_free_bulk(pend, npend);
			return PEER_EXIT_DEADLINE;
		}
		/* Refill the pending burst within the in-flight window. */
		while (npend < pr->o.burst_size && ps->sent < pr->o.count &&
		       ps->sent - ps->rcvd < pr->o.window) {
			struct rte_mbuf *m = frame_build(pr, PEER_PHASE_TRAFFIC, ps->sent);

			if (m == NULL)
				break;
			pend[npend++] = m;
			ps->sent++;
		}
		if (npend > 0) {
			sent = peer_tx(pr, 0, pend, npend);
			if (sent < npend) {
				pr->tx_retries++;
				for (i = sent; i < npend; i++)
					pend[i - sent] = pend[i];
			}
			npend -= sent;
			/* A whole burst is out: receive only for --gap-us. */
			if (npend == 0 && pr->o.gap_us != 0) {
				ret = peer_drain_until(pr, peer_now_ns() +
						       (uint64_t)pr->o.gap_us * 1000, false);
				if (ret != PEER_EXIT_PASS)
					return ret;
			}
		}
		peer_rx(pr);
	}
	/* Everything is sent: wait for the rest, then linger a little to catch
	 * duplicates. */
	t_last = peer_now_ns();
	while (ps->rcvd < ps->sent) {
		if (peer_quit)
			return PEER_EXIT_INTERRUPTED;
		if (past_deadline(pr))
			break;
		if (peer_now_ns() - t_last > (uint64_t)pr->o.loss_timeout_ms * 1000000ull)
			break;
		peer_rx(pr);
	}
	printf("COUNT %" PRIu32 " sent, %" PRIu32 " back in %.3f s\n", ps->sent, ps->rcvd,
	       (double)(peer_now_ns() - t0) / 1e9);
	ret = peer_drain_until(pr, peer_now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, false);
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
		uint64_t r = peer_rng_next(&pr->rng);
		uint64_t gap_ns = (uint64_t)(second ? pr->o.gap2_min_us + r % span2 :
					     pr->o.gap_min_us + r % span) * 1000;
		uint64_t t_send = peer_now_ns() + gap_ns;

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
	return peer_drain_until(pr, peer_now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, false);
}

static int
peer_idle(struct peer *pr)
{
	uint64_t t0, t_end;
	uint64_t before;
	bool back;
	int ret;

	before = pr->ph[PEER_PHASE_WARMUP].rcvd + pr->ph[PEER_PHASE_TRAFFIC].rcvd + pr->stray +
		 pr->dup + pr->bad;
	t0 = peer_now_ns();
	printf("IDLE begin %.3f s\n", pr->o.idle_s);
	fflush(stdout);
	t_end = t0 + (uint64_t)(pr->o.idle_s * 1e9);
	ret = peer_drain_until(pr, t_end, true);
	if (ret != PEER_EXIT_PASS)
		return ret;
	pr->idle_rx = pr->ph[PEER_PHASE_WARMUP].rcvd + pr->ph[PEER_PHASE_TRAFFIC].rcvd +
		      pr->stray + pr->dup + pr->bad - before;
	printf("IDLE end %.3f s received %" PRIu64 "\n", (double)(peer_now_ns() - t0) / 1e9,
	       pr->idle_rx);
	fflush(stdout);
	ret = peer_drain_until(pr, peer_now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, true);
	if (ret != PEER_EXIT_PASS)
		return ret;
	ret = peer_one(pr, PEER_PHASE_TRAFFIC, pr->o.loss_timeout_ms, &back);
	if (ret != PEER_EXIT_PASS)
		return ret;
	return peer_drain_until(pr, peer_now_ns() + (uint64_t)pr->o.settle_ms * 1000000ull, false);
}

/* ---- report ------------------------------------------------------------ */

/* How many of the @p n ascending values exceed @p limit. */
static uint64_t
count_over(const uint64_t *sorted, uint32_t n, uint64_t limit)
{
	uint32_t i = n;

	while (i > 0 && sorted[i - 1] > limit)
		i--;
	return n - i;
}

/*
 * The time packet @p i of @p ps was delayed by the machine, not by the
 * front end: for each side, the larger of its run-queue wait and its CPU's
 * stalls (our busy wait's gaps are our stalls too). Probes stopped first.
 */
static uint64_t
round_trip_wait(const struct peer *pr, const struct peer_phase_state *ps, uint32_t i,
		uint64_t *fe_stall_out, uint64_t *self_stall_out)
{
	uint64_t l = ps->lat_ns[i];
	uint64_t fe_stall = peer_stall_overlap_ns(&pr->probe, ps->t_ns[i], ps->t_ns[i] + l);
	uint64_t self_stall = peer_stall_overlap_ns(&pr->self_probe, ps->t_ns[i],
						    ps->t_ns[i] + l);
	uint64_t w = RTE_MAX(ps->sched_ns[i] - ps->fe_ns[i], self_stall) +
		     RTE_MAX(ps->fe_ns[i], fe_stall);

	*fe_stall_out = fe_stall;
	*self_stall_out = self_stall;
	return RTE_MIN(w, l);
}

static int
peer_report(struct peer *pr, int run_ret)
{
	struct peer_phase_state *tr = &pr->ph[PEER_PHASE_TRAFFIC];
	struct peer_phase_state *ck = tr; /* idle: the check packet */
	char extra[1024] = "";
	char reason[256] = "";
	char tail[512] = "";
	char qs[PEER_MAX_QUEUES * 64] = "";
	size_t qoff;
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
		uint64_t over_raw = 0, over_net = 0, stolen = 0, sched_total = 0;
		uint64_t probe_total = 0, self_probe_total = 0;
		FILE *dump = NULL;
		size_t off;
		unsigned int b;

		if (pr->o.dump != NULL) {
			dump = fopen(pr->o.dump, "w");
			if (dump == NULL)
				printf("# --dump %s: %s\n", pr->o.dump, strerror(errno));
		}
		if (raw == NULL || net == NULL || (pr->o.dump != NULL && dump == NULL)) {
			free(raw);
			free(net);
			if (dump != NULL)
				fclose(dump);
			return PEER_EXIT_SETUP;
		}
		peer_stall_stop(&pr->probe);
		peer_stall_stop(&pr->self_probe);
		for (i = 0; i < tr->sent; i++) {
			uint64_t l, w, fe_stall, self_stall;

			if (!tr->seen[i])
				continue;
			l = tr->lat_ns[i];
			w = round_trip_wait(pr, tr, i, &fe_stall, &self_stall);
			probe_total += fe_stall;
			self_probe_total += self_stall;
			raw[n] = l;
			net[n++] = l - w;
			sched_total += w;
			if (dump != NULL)
				fprintf(dump, "%" PRIu32 " %" PRIu64 " %" PRIu64 "\n", i, l, l - w);
			for (b = 0; b < RTE_DIM(edges_us); b++)
				if (l < (uint64_t)edges_us[b] * 1000)
					break;
			hist[b]++;
			if (bound && l > bound)
				over_raw++;
			if (bound && l - w > bound)
				over_net++;
			stolen += tr->stolen[i];
		}
		if (dump != NULL)
			fclose(dump);
		/* The slowest packets, with the quiet time before them and the
		 * run-queue wait inside them: a packet that raced the arming
		 * waits for the waiter's timeout with no run-queue wait;
		 * scheduling delays show up as run-queue wait. */
		for (i = 0, b = 0; i < tr->sent && b < PEER_SLOW_LINES; i++) {
			if (!tr->seen[i] || tr->lat_ns[i] < (uint64_t)PEER_SLOW_US * 1000)
				continue;
			printf("SLOW seq=%" PRIu32 " gap_us=%" PRIu32 " latency_us=%.1f runq_wait_us=%.1f"
			       " fe_cpu_stall_us=%.1f peer_cpu_stall_us=%.1f stolen=%u\n",
			       i, pr->gap_us != NULL ? pr->gap_us[i] : 0, tr->lat_ns[i] / 1e3,
			       tr->sched_ns[i] / 1e3,
			       peer_stall_overlap_ns(&pr->probe, tr->t_ns[i],
						     tr->t_ns[i] + tr->lat_ns[i]) / 1e3,
			       peer_stall_overlap_ns(&pr->self_probe, tr->t_ns[i],
						     tr->t_ns[i] + tr->lat_ns[i]) / 1e3,
			       tr->stolen[i]);
			b++;
		}
		peer_sort_u64(raw, n);
		peer_sort_u64(net, n);
		over = over_raw;
		off = snprintf(extra, sizeof(extra),
			       " p50_us=%.1f p99_us=%.1f max_us=%.1f min_us=%.1f"
			       " net_p50_us=%.1f net_p99_us=%.1f net_max_us=%.1f"
			       " runq_wait_total_ms=%.3f runq_watched=%d"
			       " bound_us=%" PRIu32 " over_bound=%" PRIu64
			       " over_bound_net=%" PRIu64 " fe_cpu_stall_ms=%.3f hist_us=",
			       peer_percentile_u64(raw, n, 50) / 1e3, peer_percentile_u64(raw, n, 99) / 1e3,
			       n ? raw[n - 1] / 1e3 : 0.0, n ? raw[0] / 1e3 : 0.0,
			       peer_percentile_u64(net, n, 50) / 1e3, peer_percentile_u64(net, n, 99) / 1e3,
			       n ? net[n - 1] / 1e3 : 0.0, sched_total / 1e6,
			       pr->fe_sched_fd >= 0, pr->o.max_latency_us, over_raw, over_net,
			       pr->probe.stalls != NULL ? probe_total / 1e6 : -1.0);
		for (b = 0; b <= RTE_DIM(edges_us) && off < sizeof(extra); b++) {
			if (b < RTE_DIM(edges_us))
				off += snprintf(extra + off, sizeof(extra) - off, "%s<%u:%u",
						b ? "," : "", edges_us[b], hist[b]);
			else
				off += snprintf(extra + off, sizeof(extra) - off, ",>=%u:%u",
						edges_us[b - 1], hist[b]);
		}
		snprintf(tail, sizeof(tail),
			 "LATENCY p999_us=%.1f over_1ms=%" PRIu64 " over_5ms=%" PRIu64
			 " net_p999_us=%.1f net_over_1ms=%" PRIu64 " net_over_5ms=%" PRIu64
			 " peer_stall_ms=%.3f stolen_round_trips=%" PRIu64
			 " fe_cpu_probe=%s fe_cpu_stall_ms=%.3f fe_cpu_stall_in_flight_ms=%.3f"
			 " fe_cpu_probe_wakeups=%" PRIu64 " peer_cpu_stall_in_flight_ms=%.3f\n",
			 peer_percentile_u64(raw, n, 99.9) / 1e3, count_over(raw, n, 1000000),
			 count_over(raw, n, 5000000), peer_percentile_u64(net, n, 99.9) / 1e3,
			 count_over(net, n, 1000000), count_over(net, n, 5000000),
			 pr->stall_ns / 1e6, stolen,
			 pr->probe.stalls != NULL ? "yes" : "no", peer_stall_total_ns(&pr->probe) / 1e6,
			 probe_total / 1e6, pr->probe.wakeups, self_probe_total / 1e6);
		free(raw);
		free(net);
		if (over > 0) {
			fail = true;
			snprintf(reason, sizeof(reason), " reason=%" PRIu64 "_over_%" PRIu32 "us",
				 over, pr->o.max_latency_us);
		}
	} else if (pr->o.mode == PEER_MODE_IDLE) {
		double lat_us = ck->rcvd ? ck->lat_ns[0] / 1e3 : -1.0;
		uint64_t lat = ck->rcvd ? ck->lat_ns[0] : 0;
		uint64_t fe_stall = 0, self_stall = 0, lat_net;
		int stolen;

		peer_stall_stop(&pr->probe);
		peer_stall_stop(&pr->self_probe);
		lat_net = lat - (ck->rcvd ? round_trip_wait(pr, ck, 0, &fe_stall, &self_stall) : 0);

		stolen = ck->rcvd && ck->stolen != NULL && ck->stolen[0];
		snprintf(extra, sizeof(extra), " idle_s=%.3f idle_rx=%" PRIu64
			 " check_back=%" PRIu32 " check_latency_us=%.1f check_net_latency_us=%.1f"
			 " check_stolen=%d",
			 pr->o.idle_s, pr->idle_rx, ck->rcvd, lat_us, lat_net / 1e3, stolen);
		if (ck->rcvd != 1) {
			fail = true;
			snprintf(reason, sizeof(reason), " reason=check_packet_lost");
		} else if (pr->o.max_latency_us && lat > (uint64_t)pr->o.max_latency_us * 1000) {
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
	for (i = 0, qoff = 0; i < pr->o.queues && qoff < sizeof(qs); i++)
		qoff += snprintf(qs + qoff, sizeof(qs) - qoff, " q%" PRIu32 "_sent=%" PRIu64
				" q%" PRIu32 "_back=%" PRIu64, i, pr->q_sent[i], i, pr->q_back[i]);
	if (pr->first_bad[0] != '\0')
		printf("# first bad frame: %s\n", pr->first_bad);
	printf("RESULT: %s mode=%s sent=%" PRIu32 " received=%" PRIu32 " lost=%" PRIu64
	       " dup=%" PRIu64 " bad=%" PRIu64 " stray=%" PRIu64 " tx_retries=%" PRIu64
	       " warmup=%" PRIu32 "/%" PRIu32 " queues=%" PRIu32 "%s%s%s\n",
	       (fail || run_ret != PEER_EXIT_PASS) ? "FAIL" : "PASS",
	       peer_mode_names[pr->o.mode], tr->sent, tr->rcvd, lost, pr->dup, pr->bad,
	       pr->stray, pr->tx_retries, pr->ph[PEER_PHASE_WARMUP].rcvd,
	       pr->ph[PEER_PHASE_WARMUP].sent, pr->o.queues, qs, extra, reason);
	fputs(tail, stdout);
	fflush(stdout);
	if (run_ret != PEER_EXIT_PASS)
		return run_ret;
	return fail ? PEER_EXIT_FAIL : PEER_EXIT_PASS;
}

/* ---- options ----------------------------------------------------------- */

/* The options (each one's default is in echo_opt_table); main() copies them into
 * its struct peer. */
static struct peer_opts echo_opts;

static int
opt_mode(struct peer_opts *o, enum peer_mode mode, const char *arg)
{
	o->mode = mode;
	o->nb_modes++;
	if (mode == PEER_MODE_IDLE)
		return peer_parse_double(arg, 0.0, 3600.0, &o->idle_s);
	return peer_parse_u32(arg, 1, PEER_MAX_COUNT, &o->count);
}

static int
opt_count(const char *arg, void *dst)
{
	return opt_mode(dst, PEER_MODE_COUNT, arg);
}

static int
opt_sparse(const char *arg, void *dst)
{
	return opt_mode(dst, PEER_MODE_SPARSE, arg);
}

static int
opt_idle(const char *arg, void *dst)
{
	return opt_mode(dst, PEER_MODE_IDLE, arg);
}

static int
opt_fe_mac(const char *arg, void *dst)
{
	struct peer_opts *o = dst;

	o->have_fe_mac = true;
	return rte_ether_unformat_addr(arg, &o->fe_mac) == 0 ? 0 : -1;
}

static int
opt_linger(const char *arg, void *dst)
{
	struct peer_opts *o = dst;

	o->linger = true;
	return peer_parse_double(arg, 0.0, 36000.0, &o->linger_s);
}

static const struct peer_opt echo_opt_table[] = {
	{ .name = "iface", .type = PEER_OPT_STR, .dst = &echo_opts.iface, .arg = "SOCK",
	  .help = "net_vhost's vhost-user socket (required)" },
	{ .name = "count", .type = PEER_OPT_FN, .dst = &echo_opts, .fn = opt_count, .arg = "N",
	  .help = "mode: N packets in bursts, exactly N back" },
	{ .name = "sparse", .type = PEER_OPT_FN, .dst = &echo_opts, .fn = opt_sparse, .arg = "N",
	  .help = "mode: N single packets with random gaps" },
	{ .name = "idle", .type = PEER_OPT_FN, .dst = &echo_opts, .fn = opt_idle, .arg = "S",
	  .help = "mode: S seconds of silence, then one check packet" },
	{ .name = "expect", .type = PEER_OPT_CHOICE, .dst = &echo_opts.expect,
	  .def = PEER_EXPECT_ROUTED, .choices = peer_expect_names, .arg = "routed|io|macswap",
	  .help = "the forwarder: l3fwd-power (default), vnapi-fwd --fwd io, macswap" },
	{ .name = "window", .type = PEER_OPT_U32, .dst = &echo_opts.window, .def = 128,
	  .min = 1, .max = PEER_NB_MBUFS / 2, .arg = "N",
	  .help = "count: packets in flight at most (default 128)" },
	{ .name = "burst-size", .type = PEER_OPT_U32, .dst = &echo_opts.burst_size,
	  .def = PEER_BURST, .min = 1, .max = PEER_BURST, .arg = "N",
	  .help = "count: packets per tx burst (default 32)" },
	{ .name = "gap-us", .type = PEER_OPT_U32, .dst = &echo_opts.gap_us, .max = 10000000,
	  .arg = "N", .help = "count: receive-only time after each burst (default 0)" },
	{ .name = "gap-min-us", .type = PEER_OPT_U32, .dst = &echo_opts.gap_min_us, .def = 100,
	  .max = 10000000, .arg = "N", .help = "sparse: shortest gap (default 100)" },
	{ .name = "gap-max-us", .type = PEER_OPT_U32, .dst = &echo_opts.gap_max_us, .def = 5000,
	  .max = 10000000, .arg = "N", .help = "sparse: longest gap (default 5000)" },
	{ .name = "gap2-min-us", .type = PEER_OPT_U32, .dst = &echo_opts.gap2_min_us,
	  .max = 10000000, .arg = "N", .help = "sparse: every second gap's shortest (default off)" },
	{ .name = "gap2-max-us", .type = PEER_OPT_U32, .dst = &echo_opts.gap2_max_us,
	  .max = 10000000, .arg = "N", .help = "sparse: every second gap's longest (0: off)" },
	{ .name = "dump", .type = PEER_OPT_STR, .dst = &echo_opts.dump, .arg = "FILE",
	  .help = "sparse: write \"seq latency_ns net_ns\" per packet back" },
	{ .name = "max-latency-us", .type = PEER_OPT_U32, .dst = &echo_opts.max_latency_us,
	  .max = UINT32_MAX, .arg = "N",
	  .help = "sparse/idle: fail any packet slower than N us (0: off)" },
	{ .name = "queues", .type = PEER_OPT_U32, .dst = &echo_opts.queues, .def = 1,
	  .min = 1, .max = PEER_MAX_QUEUES, .arg = "Q",
	  .help = "net_vhost queue pairs; sparse packets round-robin over them (default 1)" },
	{ .name = "loss-timeout-ms", .type = PEER_OPT_U32, .dst = &echo_opts.loss_timeout_ms,
	  .def = 200, .min = 1, .max = 600000, .arg = "N",
	  .help = "a packet not back after N ms is lost (default 200)" },
	{ .name = "warmup-timeout-ms", .type = PEER_OPT_U32, .dst = &echo_opts.warmup_timeout_ms,
	  .def = 20000, .min = 1, .max = 600000, .arg = "N",
	  .help = "the warm-up packet's allowance (default 20000)" },
	{ .name = "warmup-resend-ms", .type = PEER_OPT_U32, .dst = &echo_opts.warmup_resend_ms,
	  .def = 1000, .max = 600000, .arg = "N",
	  .help = "resend the warm-up packet after N ms (default 1000; 0 never)" },
	{ .name = "settle-ms", .type = PEER_OPT_U32, .dst = &echo_opts.settle_ms, .def = 200,
	  .max = 60000, .arg = "N",
	  .help = "quiet after warm-up and around the idle window (default 200)" },
	{ .name = "link-timeout", .type = PEER_OPT_DOUBLE, .dst = &echo_opts.link_timeout_s,
	  .ddef = 30.0, .dmax = 3600, .arg = "S",
	  .help = "wait at most S s for the link (default 30)" },
	{ .name = "timeout", .type = PEER_OPT_DOUBLE, .dst = &echo_opts.timeout_s,
	  .ddef = 120.0, .dmin = 0.001, .dmax = 36000, .arg = "S",
	  .help = "whole run deadline after link up (default 120)" },
	{ .name = "seed", .type = PEER_OPT_U64, .dst = &echo_opts.seed, .max = UINT32_MAX,
	  .arg = "N", .help = "gap generator seed (default: time and pid)" },
	{ .name = "fe-mac", .type = PEER_OPT_FN, .dst = &echo_opts, .fn = opt_fe_mac,
	  .arg = "MAC", .help = "the front end's MAC: destination, checked on return" },
	{ .name = "linger", .type = PEER_OPT_FN, .dst = &echo_opts, .fn = opt_linger,
	  .arg = "S", .help = "after RESULT keep the port up until a signal, at most S s" },
};

static int
parse_opts(int argc, char **argv)
{
	const struct peer_opts *o = &echo_opts;

	if (peer_opts_parse(argc, argv, echo_opt_table, RTE_DIM(echo_opt_table)) != 0)
		return -1;
	if (o->iface == NULL || o->nb_modes != 1) {
		fprintf(stderr, "need --iface and exactly one of --count, --sparse, --idle\n");
		return -1;
	}
	if (o->gap_min_us > o->gap_max_us || o->gap2_min_us > o->gap2_max_us) {
		fprintf(stderr, "--gap(2)-min-us must not exceed --gap(2)-max-us\n");
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
		.stat_fd = -1,
		.fe_pid = -1,
	};
	bool probed = true;
	int ret, code;

	setvbuf(stdout, NULL, _IOLBF, 0);
	echo_opts.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		printf("RESULT: FAIL reason=eal_init (%s)\n", rte_strerror(rte_errno));
		return PEER_EXIT_SETUP;
	}
	/* EAL leaves the program name in front of the application's options. */
	argc -= ret;
	argv += ret;
	if (parse_opts(argc, argv) != 0) {
		peer_opts_usage(stderr, "echo_peer [EAL options] -- --iface SOCK MODE [options]",
				echo_opt_table, RTE_DIM(echo_opt_table));
		rte_eal_cleanup();
		return PEER_EXIT_USAGE;
	}
	pr.o = echo_opts;
	signal(SIGINT, peer_on_signal);
	signal(SIGTERM, peer_on_signal);

	pr.rng = pr.o.seed ? pr.o.seed : 0x9e3779b97f4a7c15ull;
	pr.run_id = (uint32_t)peer_rng_next(&pr.rng);
	printf("# mode=%s expect=%s seed=%" PRIu64 " run_id=%08" PRIx32 "\n",
	       peer_mode_names[pr.o.mode], peer_expect_names[pr.o.expect], pr.o.seed, pr.run_id);

	if (phase_alloc(&pr.ph[PEER_PHASE_WARMUP], PEER_WARMUP_MAX, true) != 0 ||
	    phase_alloc(&pr.ph[PEER_PHASE_TRAFFIC],
			pr.o.mode == PEER_MODE_IDLE ? 1 : pr.o.count, true) != 0 ||
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
	pr.deadline_ns = peer_now_ns() + (uint64_t)(pr.o.timeout_s * 1e9);
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
		peer_drain_until(&pr, peer_now_ns() + (uint64_t)(pr.o.linger_s * 1e9), true);
		printf("LINGER end: %" PRIu64 " late or unexpected frames\n",
		       pr.bad + pr.dup + pr.stray - before);
	}
	peer_port_remove(PEER_DEV_NAME, &pr.port, &probed);
out:
	peer_stall_free(&pr.probe);
	peer_stall_free(&pr.self_probe);
	phase_free(&pr.ph[PEER_PHASE_WARMUP]);
	phase_free(&pr.ph[PEER_PHASE_TRAFFIC]);
	free(pr.gap_us);
	if (pr.fe_sched_fd >= 0)
		close(pr.fe_sched_fd);
	if (pr.self_sched_fd >= 0)
		close(pr.self_sched_fd);
	if (pr.stat_fd >= 0)
		close(pr.stat_fd);
	rte_eal_cleanup();
	return code;
}
