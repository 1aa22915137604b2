/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * vnapi-peer: the traffic engine of the demo, the benchmarks and the tests.
 *
 * It sends numbered frames (peer_flow.h: Ethernet/IPv4/UDP to 1.1.1.1, a
 * sequence number, the send time, a pattern) to a forwarder under test and
 * checks every byte of what comes back, as that forwarder must have left it
 * (--expect). One thread sends, receives and measures.
 *
 * Transports (peer_xport.h): DPDK's net_vhost on vhost-user sockets
 * (--iface SOCK, up to two; EAL options before "--"), a unix datagram
 * socket to QEMU's -netdev dgram (--unix-local, --unix-remote) or an
 * AF_PACKET socket on an interface (--packet IF); the two sockets need no
 * EAL and block while nothing is due.
 *
 * The traffic is a list of phases (--phase KIND[:key=value,...]), run back
 * to back after a warm-up (a frame, resent every --warmup-resend-ms, until
 * one comes back; then --settle-ms of quiet):
 *   idle     secs=S: send nothing; anything received counts (rx).
 *   sparse   count=N|secs=S, gap=MIN-MAX (us), gap2=MIN-MAX, step: single
 *            frames, each a random gap after the previous one came back or
 *            was given up; with gap2 every second gap is from that range
 *            ("pairs": a frame soon after the one before it came back).
 *            step: each frame waits for a line "go" on stdin ("end" or EOF
 *            ends the phase) and is reported by a FRAME line.
 *   closed   count=N|secs=S, window=W, burst=B, gap_us=G: closed loop, at
 *            most W frames in flight, sent in bursts of B (then G us of
 *            receive only).
 *   open     rate=PPS|max, count=N|secs=S, burst=B, deaf=AT-END: open
 *            loop, frames leave in bursts of B at the rate (ring full:
 *            refused); with deaf, nothing is received from AT to END ms
 *            into the phase (a receiver that stalls: the forwarder's tx
 *            ring fills while the sending goes on).
 *   rr       count=N|secs=S: request/response, one outstanding. One port:
 *            the request comes back and completes. Two ports: it goes out
 *            of port 0 and comes back on port 1, the response then goes out
 *            of port 1 and must come back on port 0.
 *   echo     secs=S (0: until a signal): send back what arrives, the MAC
 *            addresses swapped.
 * Frames of a burst leave on tx queue (burst number % --queues); sparse
 * frame i on queue i % --queues; every rx queue is read.
 *
 * Accounting, per phase: sent (taken by the transport), back (first copy
 * back within --loss-ms of its sending), late (back after it), lost (sent
 * and not back in time: late ones included), dup, ooo (back after a frame
 * sent later), corrupt (ours, changed), stray (never sent), refused (not
 * taken), rx (frames received during the phase); round trips p50/p90/p99/
 * p99.9/max (exact in sparse and rr, 1 us buckets otherwise), pps, tps
 * (rr), the engine's own CPU (utime+stime), and with ethdev the
 * notifications net_vhost sent the front end (kicks: its xstats
 * tx_qN_guest_notifications). A phase passes when nothing was lost, late,
 * duplicated, corrupted, stray or out of order (--any-order: allowed) and,
 * idle, nothing arrived.
 *
 * Lines (stdout, flushed):
 *   READY transport=... ports=P queues=Q size=N mac=M
 *   LINK up secs=T
 *   WARMUP back ms=T sent=N
 *   PHASE i KIND begin
 *   SAMPLE i t= rx_pps= tx_pps=          (--sample-ms, closed and open)
 *   FRAME i seq=N back=0|1 rtt_us=T       (sparse step)
 *   SLOW seq= gap_us= latency_us= ...     (sparse, on ethdev: frames over 2 ms)
 *   PHASE i KIND stop secs=T
 *   PHASE i KIND result key=value ...     (one line per phase)
 *   RESULT: PASS|FAIL code=C key=value ... (every phase summed; the summary)
 *   LINGER end rx=N                        (with --linger)
 * The result lines' keys are vnapitools/peer.py's to read.
 *
 * Usage: vnapi-peer [EAL options --] TRANSPORT --phase SPEC... [options]
 * Exit status: 0 pass, 1 a phase failed, 2 usage, 3 setup, 4 no link,
 * 5 deadline (--timeout), 6 no warm-up frame back, 7 interrupted.
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "peer_flow.h"
#include "peer_opt.h"
#include "peer_port.h"
#include "peer_util.h"
#include "peer_watch.h"
#include "peer_xport.h"

enum {
	EXIT_PASS,
	EXIT_FAIL,
	EXIT_USAGE,
	EXIT_SETUP,
	EXIT_LINK,
	EXIT_DEADLINE,
	EXIT_WARMUP,
	EXIT_INTERRUPTED,
};

#define MAX_PHASES   32
#define WARM_FLOW    255
#define HIST_US      1000000           /* 1 us buckets up to 1 s */
#define SLOW_US      2000              /* sparse: SLOW lines for frames over this ... */
#define SLOW_LINES   40                /* ... at most this many */
#define STALL_NS     100000            /* a longer gap in our busy wait: we were not running */
#define LAZY_NS      300000            /* sleep through a quiet time longer than this ... */
#define LAZY_EARLY_NS 200000           /* ... waking this much before its end */
#define SEQ_MAX      UINT32_MAX        /* sequence numbers are 32 bits in a frame */
#define RATE_MAX     UINT64_MAX

enum kind {
	KIND_WARM,
	KIND_DATA,
	KIND_REQ,    /* rr: request, first hop */
	KIND_RESP,   /* rr: response, second hop */
};

enum mode {
	MODE_IDLE,
	MODE_SPARSE,
	MODE_CLOSED,
	MODE_OPEN,
	MODE_RR,
	MODE_ECHO,
};

static const char *const xform_names[] = {
	[PEER_XFORM_IO] = "io",
	[PEER_XFORM_MACSWAP] = "macswap",
	[PEER_XFORM_ROUTED] = "routed",
	NULL,
};

/* Per frame of a sparse phase: what the report needs. */
struct rec {
	uint64_t t_send;
	uint64_t lat;       /* round trip, 0 when not back in time */
	uint64_t sched;     /* run-queue wait of both sides (ours: or our busy wait's gaps) */
	uint64_t fe;        /* the front end's part of it */
	uint32_t gap_us;    /* the quiet time before the frame */
	uint8_t stolen;     /* the host's steal time grew during the round trip */
};

struct phase {
	enum mode mode;
	double secs;
	uint64_t count;
	uint32_t window;
	uint32_t burst;
	uint32_t gap_us;
	uint64_t rate;
	uint32_t gap_min, gap_max, gap2_min, gap2_max;
	uint32_t deaf_from, deaf_to; /* open: ms into the phase with no receiving */
	bool step;
	/* state and results */
	struct peer_flow flow;
	struct peer_flow resp;     /* rr: the response (from port 1) */
	struct peer_tally t;
	uint64_t corrupt;          /* ours, but not as the forwarder had to leave it */
	uint64_t refused;
	uint64_t rx;
	uint64_t echoed;
	uint64_t t_begin, t_stop, t_last_tx;
	double cpu_s;
	uint64_t kicks;            /* UINT64_MAX: not exposed */
	uint64_t oldest;           /* closed, sparse: lowest sequence number not resolved */
	uint64_t *tsent;           /* closed: send times, ring of ring_mask + 1 */
	uint64_t ring_mask;
	uint32_t *hist;            /* closed, open: 1 us buckets */
	uint64_t hist_over, lat_n, lat_sum, lat_min, lat_max;
	uint64_t *lat;             /* rr: round trips of transactions back */
	struct rec *recs;          /* sparse: one per frame sent */
	uint64_t cap;              /* of lat or recs */
	uint64_t stall_ns;         /* sparse: gaps in our busy waits */
	/* rr: the transaction in flight */
	int rr_state;              /* 0 none, 1 first hop, 2 second hop, 3 done */
	uint64_t rr_seq;
	uint16_t rr_port;          /* where the first hop came back */
};

static struct {
	const char *iface[PEER_XPORT_MAX_PORTS];
	unsigned int nb_iface;
	uint32_t queues;
	const char *unix_local;
	const char *unix_remote;
	const char *packet;
	struct phase ph[MAX_PHASES];
	unsigned int nb_phases;
	uint32_t size;
	int expect;
	bool have_fe_mac;
	struct rte_ether_addr fe_mac;
	uint32_t src_ports;
	bool any_order;
	uint32_t loss_ms;
	uint32_t warmup_resend_ms;
	double warmup_s;
	bool no_warmup;
	uint32_t settle_ms;
	uint32_t drain_ms;
	uint32_t sample_ms;
	bool yield;
	uint64_t seed;
	const char *dump;
	double link_s;
	double timeout_s;
	double linger_s;
	bool help;
} o;

static struct {
	struct peer_xport x;
	struct peer_expect expect;
	struct peer_watch watch;
	uint16_t run;
	uint64_t rng;
	uint64_t loss_ns;
	uint64_t deadline;
	uint64_t rx_total;
	uint64_t foreign;
	uint64_t warm_sent, warm_back;
	struct phase *cur;
	char first_bad[200];
	char stdin_buf[256];
	size_t stdin_len;
	bool stdin_eof;
} g;

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit = 1;
}

/* 0 to go on, else the exit status: interrupted or past the deadline. */
static int
stopped(void)
{
	if (quit)
		return EXIT_INTERRUPTED;
	if (peer_now_ns() > g.deadline)
		return EXIT_DEADLINE;
	return 0;
}

static double
us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static double
cpu_now_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0.0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Notifications net_vhost sent the front end so far; UINT64_MAX when not exposed. */
static uint64_t
kicks_now(void)
{
	char name[64];
	uint64_t sum = 0, v;
	uint16_t p, q;

	if (g.x.kind != PEER_XPORT_ETHDEV)
		return UINT64_MAX;
	for (p = 0; p < g.x.nb_ports; p++) {
		for (q = 0; q < g.x.nb_queues; q++) {
			snprintf(name, sizeof(name), "tx_q%u_guest_notifications", q);
			v = peer_xstat(g.x.port_id[p], name);
			if (v == UINT64_MAX)
				return UINT64_MAX;
			sum += v;
		}
	}
	return sum;
}

static void
note_bad(const char *what, const struct phase *ph, uint64_t seq)
{
	if (g.first_bad[0] == '\0')
		snprintf(g.first_bad, sizeof(g.first_bad), "%s (phase %d seq %" PRIu64 ")", what,
			 ph != NULL ? (int)(ph - o.ph) : -1, seq);
}

/* ---- per-phase latency --------------------------------------------------- */

static int
lat_grow(struct phase *ph, uint64_t need)
{
	uint64_t cap = RTE_MAX(need, ph->cap * 2);
	void *p;

	if (need <= ph->cap)
		return 0;
	cap = RTE_MAX(cap, (uint64_t)1024);
	if (ph->mode == MODE_SPARSE) {
		p = realloc(ph->recs, cap * sizeof(*ph->recs));
		if (p == NULL)
			return -ENOMEM;
		memset((struct rec *)p + ph->cap, 0, (cap - ph->cap) * sizeof(*ph->recs));
		ph->recs = p;
	} else {
		p = realloc(ph->lat, cap * sizeof(*ph->lat));
		if (p == NULL)
			return -ENOMEM;
		ph->lat = p;
	}
	ph->cap = cap;
	return 0;
}

static void
lat_add(struct phase *ph, uint64_t seq, uint64_t ns)
{
	uint64_t b = ns / 1000;

	ph->lat_n++;
	ph->lat_sum += ns;
	ph->lat_max = RTE_MAX(ph->lat_max, ns);
	ph->lat_min = ph->lat_n == 1 ? ns : RTE_MIN(ph->lat_min, ns);
	if (ph->mode == MODE_SPARSE) {
		ph->recs[seq].lat = ns;
	} else if (ph->mode == MODE_RR) {
		if (lat_grow(ph, ph->lat_n) == 0)
			ph->lat[ph->lat_n - 1] = ns;
	} else if (ph->hist != NULL) {
		if (b < HIST_US)
			ph->hist[b]++;
		else
			ph->hist_over++;
	}
}

/* The @p pct percentile (nearest rank) of a closed or open phase's histogram, in us. */
static double
hist_pct(const struct phase *ph, double pct)
{
	uint64_t want, acc = 0;
	uint32_t i;

	if (ph->lat_n == 0 || ph->hist == NULL)
		return 0.0;
	want = (uint64_t)(pct / 100.0 * (double)ph->lat_n + 0.999999);
	want = RTE_MAX(want, (uint64_t)1);
	for (i = 0; i < HIST_US; i++) {
		acc += ph->hist[i];
		if (acc >= want)
			return (double)i + 0.5;
	}
	return us(ph->lat_max);
}

/* ---- receive ---------------------------------------------------------------- */

static void
on_rx(void *arg, const uint8_t *data, uint32_t len, uint16_t port, uint16_t queue,
      uint64_t t_rx)
{
	struct peer_flow_hdr h;
	const struct peer_flow *spec;
	struct phase *ph;
	uint64_t rtt;
	bool late;

	RTE_SET_USED(arg);
	RTE_SET_USED(queue);
	g.rx_total++;
	if (peer_flow_peek(data, len, g.run, &h) != 0) {
		g.foreign++;
		note_bad("a frame not of this run", NULL, UINT64_MAX);
		return;
	}
	if (h.flow == WARM_FLOW && h.kind == KIND_WARM) {
		g.warm_back++;
		return;
	}
	if (h.flow >= o.nb_phases) {
		g.foreign++;
		note_bad("a frame of no phase", NULL, h.seq);
		return;
	}
	ph = &o.ph[h.flow];
	spec = h.kind == KIND_RESP ? &ph->resp : &ph->flow;
	if (h.kind != spec->kind || peer_flow_diff(spec, &g.expect, data, len, &h) != len) {
		ph->corrupt++;
		note_bad("a frame changed on its way", ph, h.seq);
		return;
	}
	rtt = t_rx > h.t_ns ? t_rx - h.t_ns : 0;
	late = rtt > g.loss_ns;
	if (ph->mode == MODE_RR) {
		if (h.seq == ph->rr_seq && !late) {
			if (h.kind == KIND_REQ && ph->rr_state == 1) {
				ph->rr_state = g.x.nb_ports == 2 ? 2 : 3;
				ph->rr_port = port;
			} else if (h.kind == KIND_RESP && ph->rr_state == 2) {
				ph->rr_state = 3;
			}
			return;
		}
		/* A transaction given up: its last hop is a late frame. */
		if (h.kind == (g.x.nb_ports == 2 ? KIND_RESP : KIND_REQ))
			peer_tally_back(&ph->t, h.seq, true);
		return;
	}
	if (peer_tally_back(&ph->t, h.seq, late) == PEER_TALLY_BACK)
		lat_add(ph, h.seq, rtt);
}

/* One receive sweep; frames received. */
static unsigned int
rx_sweep(void)
{
	return peer_xport_rx(&g.x, on_rx, NULL);
}

/*
 * Receive only until @p until (CLOCK_MONOTONIC ns). Sockets block in poll
 * meanwhile; ethdev polls, and with @p lazy sleeps through a long quiet
 * time, waking early enough to poll its end. 0, or the exit status that
 * stopped it.
 */
static int
rx_until(uint64_t until, bool lazy)
{
	uint64_t now;
	int ret;

	while ((now = peer_now_ns()) < until) {
		ret = stopped();
		if (ret != 0)
			return ret;
		if (rx_sweep() != 0)
			continue;
		if (peer_xport_blocks(&g.x))
			peer_xport_idle(&g.x, RTE_MIN(until, now + 100000000ull), -1);
		else if (lazy && until - now > LAZY_NS)
			peer_sleep_us(RTE_MIN(until - now - LAZY_EARLY_NS, 1000000ull) / 1000);
	}
	return 0;
}

/* ---- send -------------------------------------------------------------------- */

/*
 * Send @p n frames of @p spec from sequence number @p seq0 on @p port,
 * @p queue. The sequence numbers of frames not taken are used again by the
 * next send. Returns how many were taken.
 */
static uint16_t
tx_frames(const struct peer_flow *spec, uint64_t seq0, uint16_t n, uint16_t port,
	  uint16_t queue)
{
	struct peer_xbuf b[PEER_XPORT_BURST];
	uint64_t now;
	uint16_t i;

	if (peer_xport_alloc(&g.x, b, n, o.size) != 0)
		return 0;
	now = peer_now_ns();
	for (i = 0; i < n; i++)
		peer_flow_build(spec, b[i].data, o.size, (uint32_t)(seq0 + i), now);
	return peer_xport_tx(&g.x, port, queue, b, n, o.size);
}

/* Send frames of phase @p ph and count what was taken; -1 when out of memory. */
static int
tx_phase(struct phase *ph, uint16_t n, uint16_t queue, uint16_t *taken)
{
	uint16_t k = 0;

	if (ph->t.sent + n > SEQ_MAX)
		n = (uint16_t)(SEQ_MAX - ph->t.sent);
	if (n > 0)
		k = tx_frames(&ph->flow, ph->t.sent, n, 0, queue);
	ph->refused += n - k;
	if (k > 0) {
		ph->t_last_tx = peer_now_ns();
		if (peer_tally_sent(&ph->t, k) != 0)
			return -1;
	}
	*taken = k;
	return 0;
}

/* ---- warm-up ---------------------------------------------------------------- */

static int
warmup(void)
{
	struct peer_flow warm[PEER_XPORT_MAX_PORTS];
	uint64_t t0 = peer_now_ns(), end = t0 + (uint64_t)(o.warmup_s * 1e9), next = t0;
	uint64_t resend = (uint64_t)o.warmup_resend_ms * 1000000ull;
	uint16_t p;
	int ret;

	for (p = 0; p < g.x.nb_ports; p++) {
		warm[p] = o.ph[0].flow;
		warm[p].udp.src = g.x.mac[p];
		warm[p].flow = WARM_FLOW;
		warm[p].kind = KIND_WARM;
	}
	while (g.warm_back == 0) {
		if (peer_now_ns() >= next && (g.warm_sent == 0 || resend != 0)) {
			uint64_t sent = g.warm_sent;

			for (p = 0; p < g.x.nb_ports; p++)
				g.warm_sent += tx_frames(&warm[p], g.warm_sent, 1, p, 0);
			/* Not taken (the front end's ring is not there yet): again soon. */
			next = peer_now_ns() + (g.warm_sent == sent ? 1000000ull :
						resend != 0 ? resend : UINT64_MAX / 2);
		}
		ret = stopped();
		if (ret != 0)
			return ret;
		if (peer_now_ns() > end) {
			printf("# no warm-up frame back within %.0f s (%" PRIu64 " sent)\n",
			       o.warmup_s, g.warm_sent);
			return EXIT_WARMUP;
		}
		if (rx_sweep() == 0 && peer_xport_blocks(&g.x))
			peer_xport_idle(&g.x, RTE_MIN(next, end), -1);
	}
	printf("WARMUP back ms=%.3f sent=%" PRIu64 "\n", (double)(peer_now_ns() - t0) / 1e6,
	       g.warm_sent);
	return rx_until(peer_now_ns() + (uint64_t)o.settle_ms * 1000000ull, true);
}

/* ---- phases ------------------------------------------------------------------- */

/* The phase's time is up, or its count sent. */
static bool
phase_done(const struct phase *ph, uint64_t now)
{
	if (ph->count != 0 && ph->t.sent >= ph->count)
		return true;
	return ph->secs > 0 && now >= ph->t_begin + (uint64_t)(ph->secs * 1e9);
}

/*
 * The next line of stdin (sparse step): 1 "go", 0 "end" or end of file,
 * receiving meanwhile; or an exit status (> 1) that stopped the wait.
 */
static int
step_wait(void)
{
	char *nl;
	ssize_t r;
	int ret;

	for (;;) {
		nl = memchr(g.stdin_buf, '\n', g.stdin_len);
		if (nl != NULL) {
			bool go;

			*nl = '\0';
			go = strcmp(g.stdin_buf, "go") == 0;
			if (!go && strcmp(g.stdin_buf, "end") != 0 && strcmp(g.stdin_buf, "quit") != 0)
				printf("# stdin: '%s' is neither go nor end: taken as end\n",
				       g.stdin_buf);
			g.stdin_len -= (size_t)(nl + 1 - g.stdin_buf);
			memmove(g.stdin_buf, nl + 1, g.stdin_len);
			return go ? 1 : 0;
		}
		if (g.stdin_eof || g.stdin_len == sizeof(g.stdin_buf))
			return 0;
		ret = stopped();
		if (ret != 0)
			return ret;
		rx_sweep();
		if (peer_xport_idle(&g.x, peer_now_ns() + 100000000ull, STDIN_FILENO) == 0)
			continue;
		r = read(STDIN_FILENO, g.stdin_buf + g.stdin_len, sizeof(g.stdin_buf) - g.stdin_len);
		if (r <= 0)
			g.stdin_eof = true;
		else
			g.stdin_len += (size_t)r;
	}
}

/* The gap before sparse frame @p i (us). */
static uint32_t
sparse_gap(const struct phase *ph, uint64_t i)
{
	bool second = i % 2 == 1 && ph->gap2_max > 0;
	uint32_t lo = second ? ph->gap2_min : ph->gap_min, hi = second ? ph->gap2_max : ph->gap_max;

	return lo + (uint32_t)(peer_rng_next(&g.rng) % (hi - lo + 1));
}

static int
run_sparse(struct phase *ph)
{
	uint64_t i, t_ready = peer_now_ns(), t_send, t_end, t, last, stall, fe_w0, self_w0, steal0;
	uint16_t k;
	struct rec *r;
	int ret;

	for (i = 0; !phase_done(ph, peer_now_ns()); i++) {
		uint32_t gap;

		if (ph->step) {
			ret = step_wait();
			if (ret != 1)
				return ret;
			t_ready = peer_now_ns();
		}
		gap = sparse_gap(ph, i);
		t_send = t_ready + (uint64_t)gap * 1000;
		ret = rx_until(t_send, true);
		if (ret != 0)
			return ret;
		if (ph->secs > 0 && phase_done(ph, peer_now_ns()))
			break;
		if (lat_grow(ph, ph->t.sent + 1) != 0)
			return EXIT_SETUP;
		fe_w0 = peer_watch_fe_wait(&g.watch);
		self_w0 = peer_watch_self_wait(&g.watch);
		steal0 = peer_watch_steal(&g.watch);
		/* A full ring: receive, then send it again (a new stamp). */
		for (;;) {
			if (tx_phase(ph, 1, (uint16_t)(ph->t.sent % g.x.nb_queues), &k) != 0)
				return EXIT_SETUP;
			if (k == 1)
				break;
			if (rx_sweep() == 0 && peer_xport_blocks(&g.x))
				peer_xport_idle(&g.x, peer_now_ns() + 1000000ull, -1);
			ret = stopped();
			if (ret != 0)
				return ret;
		}
		r = &ph->recs[ph->t.sent - 1];
		r->t_send = ph->t_last_tx;
		r->gap_us = gap;
		last = peer_now_ns();
		t_end = r->t_send + g.loss_ns;
		stall = 0;
		while (!peer_tally_seen(&ph->t, ph->t.sent - 1)) {
			ret = stopped();
			if (ret != 0)
				return ret;
			t = peer_now_ns();
			if (t >= t_end)
				break;
			/* A gap in this busy loop: we were not running. */
			if (t - last > STALL_NS)
				stall += t - last;
			if (rx_sweep() == 0 && peer_xport_blocks(&g.x))
				peer_xport_idle(&g.x, t_end, -1);
			last = peer_now_ns();
		}
		ph->stall_ns += stall;
		r->fe = peer_watch_fe_wait(&g.watch) - fe_w0;
		r->sched = r->fe + RTE_MAX(peer_watch_self_wait(&g.watch) - self_w0, stall);
		r->stolen = peer_watch_steal(&g.watch) != steal0;
		t_ready = peer_now_ns();
		if (ph->step)
			printf("FRAME %u seq=%" PRIu64 " back=%d rtt_us=%.1f\n",
			       (unsigned int)(ph - o.ph), ph->t.sent - 1, r->lat != 0,
			       us(r->lat));
		else if (r->lat == 0)
			printf("# sparse frame %" PRIu64 " not back within %u ms\n", ph->t.sent - 1,
			       o.loss_ms);
	}
	return 0;
}

/* Give up the oldest frames in flight that are back or past the loss timeout. */
static void
closed_resolve(struct phase *ph, uint64_t now)
{
	while (ph->oldest < ph->t.sent &&
	       (peer_tally_seen(&ph->t, ph->oldest) ||
		now - ph->tsent[ph->oldest & ph->ring_mask] > g.loss_ns))
		ph->oldest++;
}

static void
sample_line(struct phase *ph, uint64_t now, uint64_t *next, uint64_t *t_last,
	    uint64_t *rx_last, uint64_t *tx_last)
{
	double dt;

	if (o.sample_ms == 0 || now < *next)
		return;
	dt = (double)(now - *t_last) / 1e9;
	printf("SAMPLE %u t=%.3f rx_pps=%.0f tx_pps=%.0f\n", (unsigned int)(ph - o.ph),
	       (double)(now - ph->t_begin) / 1e9, (double)(g.rx_total - *rx_last) / dt,
	       (double)(ph->t.sent - *tx_last) / dt);
	*rx_last = g.rx_total;
	*tx_last = ph->t.sent;
	*t_last = now;
	*next += (uint64_t)o.sample_ms * 1000000ull;
}

static int
run_closed(struct phase *ph)
{
	uint64_t now, nburst = 0, next_sample, t_sample, rx0 = g.rx_total, tx0 = 0, s;
	uint16_t n, k, i;
	int ret;

	next_sample = ph->t_begin + (uint64_t)o.sample_ms * 1000000ull;
	t_sample = ph->t_begin;
	while (!phase_done(ph, now = peer_now_ns())) {
		ret = stopped();
		if (ret != 0)
			return ret;
		closed_resolve(ph, now);
		n = (uint16_t)ph->burst;
		if (ph->count != 0)
			n = (uint16_t)RTE_MIN((uint64_t)n, ph->count - ph->t.sent);
		k = 0;
		if (ph->t.sent - ph->oldest + n <= ph->window) {
			s = ph->t.sent;
			if (tx_phase(ph, n, (uint16_t)(nburst % g.x.nb_queues), &k) != 0)
				return EXIT_SETUP;
			for (i = 0; i < k; i++)
				ph->tsent[(s + i) & ph->ring_mask] = ph->t_last_tx;
			if (k == n) {
				nburst++;
				if (ph->gap_us != 0) {
					ret = rx_until(peer_now_ns() + (uint64_t)ph->gap_us * 1000,
						       false);
					if (ret != 0)
						return ret;
				}
			}
		}
		/* Sockets block until a frame arrives when none could be sent. */
		if (rx_sweep() == 0 && k == 0 && peer_xport_blocks(&g.x))
			peer_xport_idle(&g.x, now + 1000000ull, -1);
		sample_line(ph, now, &next_sample, &t_sample, &rx0, &tx0);
	}
	return 0;
}

static int
run_open(struct phase *ph)
{
	uint64_t now, due, offered = 0, next_sample, t_sample, rx0 = g.rx_total, tx0 = 0, nburst = 0;
	uint64_t cap = PEER_XPORT_BURST / ph->burst * ph->burst;
	uint64_t deaf_from = (uint64_t)ph->deaf_from * 1000000ull;
	uint64_t deaf_to = (uint64_t)ph->deaf_to * 1000000ull;
	bool deaf;
	uint16_t k;
	int ret;

	next_sample = ph->t_begin + (uint64_t)o.sample_ms * 1000000ull;
	t_sample = ph->t_begin;
	while (!(now = peer_now_ns(), ph->secs > 0 ? phase_done(ph, now) :
		 offered >= ph->count)) {
		ret = stopped();
		if (ret != 0)
			return ret;
		if (ph->rate == RATE_MAX)
			due = offered + cap;
		else
			due = (uint64_t)((double)(now - ph->t_begin) * (double)ph->rate / 1e9);
		if (ph->count != 0)
			due = RTE_MIN(due, ph->count);
		if (due >= offered + ph->burst) {
			uint64_t n = RTE_MIN((due - offered) / ph->burst * ph->burst, cap);

			if (tx_phase(ph, (uint16_t)n, (uint16_t)(nburst++ % g.x.nb_queues), &k) != 0)
				return EXIT_SETUP;
			offered += n;
		}
		deaf = now - ph->t_begin >= deaf_from && now - ph->t_begin < deaf_to;
		if (!deaf && rx_sweep() == 0 && peer_xport_blocks(&g.x) && ph->rate != RATE_MAX) {
			uint64_t next = ph->rate == 0 ? now + 100000000ull : ph->t_begin +
				(uint64_t)((double)(offered + ph->burst) * 1e9 / (double)ph->rate);

			peer_xport_idle(&g.x, next, -1);
		}
		sample_line(ph, now, &next_sample, &t_sample, &rx0, &tx0);
	}
	return 0;
}

static int
run_rr(struct phase *ph)
{
	uint64_t t_req, t_end;
	uint16_t k;
	int ret;

	while (!phase_done(ph, peer_now_ns())) {
		ret = stopped();
		if (ret != 0)
			return ret;
		ph->rr_seq = ph->t.sent;
		ph->rr_state = 1;
		if (tx_phase(ph, 1, 0, &k) != 0)
			return EXIT_SETUP;
		if (k == 0) {
			ph->rr_state = 0;
			rx_sweep();
			continue;
		}
		t_req = ph->t_last_tx;
		t_end = t_req + g.loss_ns;
		while (ph->rr_state != 3) {
			ret = stopped();
			if (ret != 0)
				return ret;
			if (ph->rr_state == 2 && ph->rr_port != UINT16_MAX) {
				/* The first hop is back: the response leaves at once. */
				while (tx_frames(&ph->resp, ph->rr_seq, 1, ph->rr_port, 0) != 1) {
					rx_sweep();
					if (peer_now_ns() > t_end || stopped() != 0)
						break;
				}
				ph->rr_port = UINT16_MAX;
			}
			if (rx_sweep() != 0)
				continue;
			if (peer_now_ns() > t_end)
				break;
			if (peer_xport_blocks(&g.x))
				peer_xport_idle(&g.x, t_end, -1);
			else if (o.yield)
				sched_yield();
		}
		if (ph->rr_state == 3 && peer_tally_back(&ph->t, ph->rr_seq, false) ==
		    PEER_TALLY_BACK)
			lat_add(ph, ph->rr_seq, peer_now_ns() - t_req);
		ph->rr_state = 0;
	}
	return 0;
}

static int
run_echo(struct phase *ph)
{
	unsigned int n;
	uint64_t now;
	int ret;

	while (ph->secs == 0 || !phase_done(ph, now = peer_now_ns())) {
		ret = stopped();
		if (ret == EXIT_INTERRUPTED && ph->secs == 0)
			return 0; /* echo until a signal: the signal ends the phase */
		if (ret != 0)
			return ret;
		n = peer_xport_reflect(&g.x, &ph->echoed);
		g.rx_total += n;
		if (n == 0 && peer_xport_blocks(&g.x))
			peer_xport_idle(&g.x, peer_now_ns() + 100000000ull, -1);
	}
	return 0;
}

/* An idle phase: receive until its time is up. */
static int
run_idle(struct phase *ph)
{
	return rx_until(ph->t_begin + (uint64_t)(ph->secs * 1e9), true);
}

/* Each kind of phase: its name in --phase, the keys it takes and its
 * traffic, run from the phase's t_begin on. */
static const struct mode_kind {
	const char *name;
	const char *keys;
	int (*run)(struct phase *ph);
} modes[] = {
	[MODE_IDLE] = { "idle", " secs ", run_idle },
	[MODE_SPARSE] = { "sparse", " count secs gap gap2 step ", run_sparse },
	[MODE_CLOSED] = { "closed", " count secs window burst gap_us ", run_closed },
	[MODE_OPEN] = { "open", " count secs rate burst deaf ", run_open },
	[MODE_RR] = { "rr", " count secs ", run_rr },
	[MODE_ECHO] = { "echo", " secs ", run_echo },
};

/* After the phase's sending: wait until every frame is back or given up. */
static int
phase_drain(struct phase *ph)
{
	uint64_t end = ph->t_last_tx + g.loss_ns, now;
	int ret;

	while (ph->t.back + ph->t.late < ph->t.sent && (now = peer_now_ns()) <= end) {
		ret = stopped();
		if (ret != 0)
			return ret;
		if (rx_sweep() == 0 && peer_xport_blocks(&g.x))
			peer_xport_idle(&g.x, end, -1);
	}
	return rx_until(peer_now_ns() + (uint64_t)o.drain_ms * 1000000ull, false);
}

/* ---- report ------------------------------------------------------------------- */

/* Append printf-style text to @p b (size @p n, used @p *off), truncating. */
static void __rte_format_printf(4, 5)
kv(char *b, size_t n, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*off >= n)
		return;
	va_start(ap, fmt);
	r = vsnprintf(b + *off, n - *off, fmt, ap);
	va_end(ap);
	if (r > 0)
		*off = RTE_MIN(*off + (size_t)r, n);
}

/* How many of the @p n ascending values exceed @p limit. */
static uint64_t
count_over(const uint64_t *sorted, uint64_t n, uint64_t limit)
{
	uint64_t i = n;

	while (i > 0 && sorted[i - 1] > limit)
		i--;
	return n - i;
}

/* Exact round-trip figures of @p n ascending values, as key=value. */
static void
kv_exact(char *b, size_t n, size_t *off, const char *pfx, const uint64_t *v, uint64_t cnt)
{
	kv(b, n, off, " %sp50_us=%.1f %sp90_us=%.1f %sp99_us=%.1f %sp999_us=%.1f %smax_us=%.1f"
	   " %sover_1ms=%" PRIu64 " %sover_5ms=%" PRIu64,
	   pfx, us(peer_percentile_u64(v, cnt, 50)), pfx, us(peer_percentile_u64(v, cnt, 90)),
	   pfx, us(peer_percentile_u64(v, cnt, 99)), pfx, us(peer_percentile_u64(v, cnt, 99.9)),
	   pfx, cnt ? us(v[cnt - 1]) : 0.0, pfx, count_over(v, cnt, 1000000),
	   pfx, count_over(v, cnt, 5000000));
}

/* Sparse: exact and net round trips, the slow frames, the dump. */
static int
report_sparse(struct phase *ph, char *b, size_t n, size_t *off)
{
	uint64_t *raw = malloc(sizeof(*raw) * (ph->t.sent + 1));
	uint64_t *net = malloc(sizeof(*net) * (ph->t.sent + 1));
	uint64_t i, cnt = 0, wait, fs, ss, fe_total = 0, self_total = 0, stolen = 0;
	unsigned int slow = 0;
	FILE *dump = NULL;

	if (o.dump != NULL && (dump = fopen(o.dump, "w")) == NULL)
		printf("# --dump %s: %s\n", o.dump, strerror(errno));
	if (raw == NULL || net == NULL || (o.dump != NULL && dump == NULL)) {
		free(raw);
		free(net);
		return -1;
	}
	peer_watch_stop(&g.watch);
	for (i = 0; i < ph->t.sent; i++) {
		const struct rec *r = &ph->recs[i];

		if (r->lat == 0)
			continue;
		wait = peer_watch_wait(&g.watch, r->t_send, r->lat, r->sched, r->fe, &fs, &ss);
		fe_total += fs;
		self_total += ss;
		stolen += r->stolen;
		raw[cnt] = r->lat;
		net[cnt++] = r->lat - wait;
		if (dump != NULL)
			fprintf(dump, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i, r->lat,
				r->lat - wait);
		/* The slowest frames, with the quiet time before them and what the
		 * machine took during them: a frame that raced the arming waits
		 * for the waiter's timeout with no run-queue wait or stall. */
		if (r->lat >= (uint64_t)SLOW_US * 1000 && slow++ < SLOW_LINES)
			printf("SLOW seq=%" PRIu64 " gap_us=%u latency_us=%.1f runq_wait_us=%.1f"
			       " fe_cpu_stall_us=%.1f peer_cpu_stall_us=%.1f stolen=%u\n", i,
			       r->gap_us, us(r->lat), us(r->sched), us(fs), us(ss), r->stolen);
	}
	if (dump != NULL)
		fclose(dump);
	peer_sort_u64(raw, cnt);
	peer_sort_u64(net, cnt);
	kv_exact(b, n, off, "", raw, cnt);
	kv(b, n, off, " min_us=%.1f mean_us=%.1f", cnt ? us(raw[0]) : 0.0,
	   cnt ? us(ph->lat_sum) / (double)cnt : 0.0);
	kv_exact(b, n, off, "net_", net, cnt);
	kv(b, n, off, " runq_watched=%d peer_stall_ms=%.3f stolen_round_trips=%" PRIu64
	   " fe_cpu_probe=%s fe_cpu_stall_ms=%.3f fe_cpu_stall_in_flight_ms=%.3f"
	   " fe_cpu_probe_wakeups=%" PRIu64 " peer_cpu_stall_in_flight_ms=%.3f",
	   g.watch.fe_sched_fd >= 0, (double)ph->stall_ns / 1e6, stolen,
	   g.watch.probe.stalls != NULL ? "yes" : "no",
	   (double)peer_stall_total_ns(&g.watch.probe) / 1e6, (double)fe_total / 1e6,
	   g.watch.probe.wakeups, (double)self_total / 1e6);
	free(raw);
	free(net);
	return 0;
}

/* The verdict of one phase: NULL when it passed, else why not. */
static const char *
phase_failure(const struct phase *ph)
{
	if (ph->t.late != 0)
		return "late";
	if (peer_tally_lost(&ph->t) != 0)
		return "lost";
	if (ph->corrupt != 0)
		return "corrupt";
	if (ph->t.dup != 0)
		return "duplicate";
	if (ph->t.stray != 0)
		return "stray";
	if (ph->t.ooo != 0 && !o.any_order)
		return "out_of_order";
	if (ph->mode == MODE_IDLE && ph->rx != 0)
		return "traffic_during_idle";
	return NULL;
}

/* The counts every result line has, for one phase or (@p total) all of them. */
static void
kv_counts(char *b, size_t n, size_t *off, const struct phase *ph, unsigned int nb)
{
	uint64_t sent = 0, back = 0, late = 0, dup = 0, ooo = 0, corrupt = 0, stray = 0;
	uint64_t refused = 0, rx = 0;
	unsigned int i;

	for (i = 0; i < nb; i++) {
		sent += ph[i].t.sent;
		back += ph[i].t.back;
		late += ph[i].t.late;
		dup += ph[i].t.dup;
		ooo += ph[i].t.ooo;
		corrupt += ph[i].corrupt;
		stray += ph[i].t.stray;
		refused += ph[i].refused;
		rx += ph[i].rx;
	}
	kv(b, n, off, " sent=%" PRIu64 " back=%" PRIu64 " lost=%" PRIu64 " late=%" PRIu64
	   " dup=%" PRIu64 " ooo=%" PRIu64 " corrupt=%" PRIu64 " stray=%" PRIu64
	   " refused=%" PRIu64 " rx=%" PRIu64, sent, back, sent - back, late, dup, ooo, corrupt,
	   stray, refused, rx);
}

static int
report_phase(struct phase *ph)
{
	static char b[4096];
	size_t off = 0;
	double secs = (double)(ph->t_stop - ph->t_begin) / 1e9;
	const char *why = phase_failure(ph);
	uint64_t *v;

	kv(b, sizeof(b), &off, "PHASE %u %s result secs=%.3f", (unsigned int)(ph - o.ph),
	   modes[ph->mode].name, secs);
	kv_counts(b, sizeof(b), &off, ph, 1);
	kv(b, sizeof(b), &off, " size=%u pps=%.1f mbps=%.1f", o.size,
	   secs > 0 ? (double)ph->t.back / secs : 0.0,
	   secs > 0 ? (double)ph->t.back * o.size * 8 / secs / 1e6 : 0.0);
	if (ph->mode == MODE_RR)
		kv(b, sizeof(b), &off, " tps=%.1f", secs > 0 ? (double)ph->t.back / secs : 0.0);
	if (ph->mode == MODE_ECHO)
		kv(b, sizeof(b), &off, " echoed=%" PRIu64, ph->echoed);
	if (ph->mode == MODE_OPEN)
		kv(b, sizeof(b), &off, " offered_pps=%.1f sent_pps=%.1f",
		   secs > 0 ? (double)(ph->t.sent + ph->refused) / secs : 0.0,
		   secs > 0 ? (double)ph->t.sent / secs : 0.0);
	if (ph->mode == MODE_SPARSE) {
		if (report_sparse(ph, b, sizeof(b), &off) != 0)
			return -1;
	} else if (ph->mode == MODE_RR) {
		v = ph->lat;
		peer_sort_u64(v, ph->lat_n);
		kv_exact(b, sizeof(b), &off, "", v, ph->lat_n);
		kv(b, sizeof(b), &off, " min_us=%.1f mean_us=%.2f", ph->lat_n ? us(v[0]) : 0.0,
		   ph->lat_n ? us(ph->lat_sum) / (double)ph->lat_n : 0.0);
	} else if (ph->mode == MODE_CLOSED || ph->mode == MODE_OPEN) {
		uint64_t over5 = ph->hist_over, over1 = ph->hist_over;
		uint32_t i;

		for (i = 1000; i < HIST_US; i++) {
			over1 += ph->hist[i];
			if (i >= 5000)
				over5 += ph->hist[i];
		}
		kv(b, sizeof(b), &off, " p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f"
		   " max_us=%.1f min_us=%.1f mean_us=%.1f over_1ms=%" PRIu64 " over_5ms=%" PRIu64,
		   hist_pct(ph, 50), hist_pct(ph, 90), hist_pct(ph, 99), hist_pct(ph, 99.9),
		   us(ph->lat_max), us(ph->lat_min),
		   ph->lat_n ? us(ph->lat_sum) / (double)ph->lat_n : 0.0, over1, over5);
	}
	kv(b, sizeof(b), &off, " cpu_s=%.3f cpu_pct=%.1f", ph->cpu_s,
	   secs > 0 ? 100.0 * ph->cpu_s / secs : 0.0);
	if (ph->kicks != UINT64_MAX)
		kv(b, sizeof(b), &off, " kicks=%" PRIu64, ph->kicks);
	if (ph->mode != MODE_ECHO && why != NULL)
		kv(b, sizeof(b), &off, " reason=%s", why);
	printf("%s\n", b);
	return 0;
}

static void
report_total(int code)
{
	static char b[2048];
	size_t off = 0;
	const char *why = NULL;
	unsigned int i;

	for (i = 0; i < o.nb_phases && why == NULL; i++)
		if (o.ph[i].mode != MODE_ECHO)
			why = phase_failure(&o.ph[i]);
	if (code == EXIT_PASS && g.foreign != 0)
		why = "foreign";
	if (code == EXIT_PASS && why != NULL)
		code = EXIT_FAIL;
	if (code != EXIT_PASS && code != EXIT_FAIL)
		why = code == EXIT_DEADLINE ? "deadline" : code == EXIT_INTERRUPTED ? "interrupted" :
		      code == EXIT_LINK ? "link_timeout" : code == EXIT_WARMUP ? "warmup_lost" :
		      "setup";
	kv(b, sizeof(b), &off, "RESULT: %s code=%d", code == EXIT_PASS ? "PASS" : "FAIL", code);
	kv_counts(b, sizeof(b), &off, o.ph, o.nb_phases);
	kv(b, sizeof(b), &off, " foreign=%" PRIu64 " warmup=%" PRIu64 "/%" PRIu64
	   " phases=%u queues=%u size=%u expect=%s", g.foreign, g.warm_back, g.warm_sent,
	   o.nb_phases, g.x.nb_queues, o.size, xform_names[g.expect.xform]);
	for (i = 0; i < g.x.nb_queues; i++)
		kv(b, sizeof(b), &off, " q%u_sent=%" PRIu64 " q%u_back=%" PRIu64, i,
		   g.x.q_sent[i], i, g.x.q_back[i]);
	if (why != NULL)
		kv(b, sizeof(b), &off, " reason=%s", why);
	if (g.first_bad[0] != '\0')
		printf("# first bad frame: %s\n", g.first_bad);
	printf("%s\n", b);
}

/* The exit status of the run so far: 0, or 1 when a phase failed. */
static int
verdict(void)
{
	unsigned int i;

	if (g.foreign != 0)
		return EXIT_FAIL;
	for (i = 0; i < o.nb_phases; i++)
		if (o.ph[i].mode != MODE_ECHO && phase_failure(&o.ph[i]) != NULL)
			return EXIT_FAIL;
	return EXIT_PASS;
}

/* Set up, run, stop and report one phase. */
static int
run_phase(struct phase *ph)
{
	uint64_t k0;
	double c0;
	int ret;

	if (ph->mode == MODE_CLOSED) {
		ph->ring_mask = rte_align64pow2(ph->window) - 1;
		ph->tsent = calloc(ph->ring_mask + 1, sizeof(*ph->tsent));
		if (ph->tsent == NULL)
			return EXIT_SETUP;
	}
	if ((ph->mode == MODE_CLOSED || ph->mode == MODE_OPEN) &&
	    (ph->hist = calloc(HIST_US, sizeof(*ph->hist))) == NULL)
		return EXIT_SETUP;
	printf("PHASE %u %s begin\n", (unsigned int)(ph - o.ph), modes[ph->mode].name);
	fflush(stdout);
	g.cur = ph;
	k0 = kicks_now();
	c0 = cpu_now_s();
	ph->rx = g.rx_total;
	ph->t_begin = peer_now_ns();
	ph->t_last_tx = ph->t_begin;
	ret = modes[ph->mode].run(ph);
	ph->t_stop = peer_now_ns();
	ph->cpu_s = cpu_now_s() - c0;
	ph->kicks = kicks_now();
	ph->kicks = ph->kicks == UINT64_MAX || k0 == UINT64_MAX ? UINT64_MAX : ph->kicks - k0;
	ph->rx = g.rx_total - ph->rx;
	printf("PHASE %u %s stop secs=%.3f\n", (unsigned int)(ph - o.ph), modes[ph->mode].name,
	       (double)(ph->t_stop - ph->t_begin) / 1e9);
	fflush(stdout);
	if (ret == 0 && ph->mode != MODE_ECHO)
		ret = phase_drain(ph);
	if (ret == 0 && report_phase(ph) != 0)
		ret = EXIT_SETUP;
	g.cur = NULL;
	free(ph->tsent);
	ph->tsent = NULL;
	free(ph->hist);
	ph->hist = NULL;
	return ret;
}

/* ---- options ------------------------------------------------------------------ */

/* "MIN-MAX" in us. */
static int
parse_range(const char *s, uint32_t *lo, uint32_t *hi)
{
	char buf[64], *dash;

	snprintf(buf, sizeof(buf), "%s", s);
	dash = strchr(buf, '-');
	if (dash == NULL)
		return -1;
	*dash = '\0';
	if (peer_parse_u32(buf, 0, 10000000, lo) != 0 ||
	    peer_parse_u32(dash + 1, 0, 10000000, hi) != 0 || *lo > *hi)
		return -1;
	return 0;
}

/* One key=value of a phase spec. */
static int
phase_key(struct phase *ph, const char *k, const char *v)
{
	char word[24];
	uint32_t u;

	snprintf(word, sizeof(word), " %s ", k);
	if (strlen(k) > 16 || strstr(modes[ph->mode].keys, word) == NULL)
		return -1;
	if (strcmp(k, "step") == 0 && v == NULL) {
		ph->step = true;
		return ph->mode == MODE_SPARSE ? 0 : -1;
	}
	if (v == NULL)
		return -1;
	if (strcmp(k, "secs") == 0)
		return peer_parse_double(v, 0.0, 36000.0, &ph->secs);
	if (strcmp(k, "count") == 0)
		return peer_parse_u64(v, 1, SEQ_MAX, &ph->count);
	if (strcmp(k, "window") == 0)
		return peer_parse_u32(v, 1, 4096, &ph->window);
	if (strcmp(k, "burst") == 0)
		return peer_parse_u32(v, 1, PEER_XPORT_BURST, &ph->burst);
	if (strcmp(k, "gap_us") == 0)
		return peer_parse_u32(v, 0, 10000000, &ph->gap_us);
	if (strcmp(k, "gap") == 0)
		return parse_range(v, &ph->gap_min, &ph->gap_max);
	if (strcmp(k, "gap2") == 0)
		return parse_range(v, &ph->gap2_min, &ph->gap2_max);
	if (strcmp(k, "deaf") == 0)
		return parse_range(v, &ph->deaf_from, &ph->deaf_to);
	if (strcmp(k, "rate") == 0) {
		if (strcmp(v, "max") == 0) {
			ph->rate = RATE_MAX;
			return 0;
		}
		return peer_parse_u64(v, 0, RATE_MAX - 1, &ph->rate);
	}
	if (strcmp(k, "step") == 0 && peer_parse_u32(v, 0, 1, &u) == 0) {
		ph->step = u == 1;
		return ph->mode == MODE_SPARSE ? 0 : -1;
	}
	return -1;
}

/* --phase KIND[:key=value,...] */
static int
opt_phase(const char *arg, void *dst)
{
	char buf[256], *save = NULL, *tok, *eq;
	const char *colon = strchr(arg, ':');
	struct phase *ph;
	size_t klen = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
	unsigned int m;

	RTE_SET_USED(dst);
	if (o.nb_phases == MAX_PHASES)
		return -1;
	ph = &o.ph[o.nb_phases];
	memset(ph, 0, sizeof(*ph));
	for (m = 0; m < RTE_DIM(modes); m++)
		if (strlen(modes[m].name) == klen && strncmp(arg, modes[m].name, klen) == 0)
			break;
	if (m == RTE_DIM(modes))
		return -1;
	ph->mode = (enum mode)m;
	ph->window = 128;
	ph->burst = m == MODE_CLOSED ? 32 : 1;
	ph->gap_min = 100;
	ph->gap_max = 5000;
	if (colon != NULL) {
		snprintf(buf, sizeof(buf), "%s", colon + 1);
		for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
			eq = strchr(tok, '=');
			if (eq != NULL)
				*eq++ = '\0';
			if (phase_key(ph, tok, eq) != 0) {
				fprintf(stderr, "--phase %s: bad key '%s'\n", arg, tok);
				return -1;
			}
		}
	}
	ph->burst = RTE_MIN(ph->burst, ph->window);
	switch (ph->mode) {
	case MODE_IDLE:
		if (ph->secs <= 0 || ph->count != 0)
			return -1;
		break;
	case MODE_ECHO:
		if (ph->count != 0)
			return -1;
		break;
	case MODE_OPEN:
		if (ph->rate == 0 && ph->secs <= 0)
			return -1;
		/* fall through */
	default:
		if ((ph->secs > 0) == (ph->count != 0))
			return -1; /* one of secs and count */
		break;
	}
	o.nb_phases++;
	return 0;
}

static int
opt_fe_mac(const char *arg, void *dst)
{
	RTE_SET_USED(dst);
	o.have_fe_mac = true;
	return rte_ether_unformat_addr(arg, &o.fe_mac) == 0 ? 0 : -1;
}

static int
opt_iface(const char *arg, void *dst)
{
	RTE_SET_USED(dst);
	if (o.nb_iface == PEER_XPORT_MAX_PORTS)
		return -1;
	o.iface[o.nb_iface++] = arg;
	return 0;
}

static const struct peer_opt opt_table[] = {
	{ .name = "iface", .type = PEER_OPT_FN, .fn = opt_iface, .arg = "SOCK",
	  .help = "transport ethdev: net_vhost on this vhost-user socket (twice: two ports)" },
	{ .name = "queues", .type = PEER_OPT_U32, .dst = &o.queues, .def = 1, .min = 1,
	  .max = PEER_XPORT_MAX_QUEUES, .arg = "Q", .help = "ethdev: queue pairs (default 1)" },
	{ .name = "unix-local", .type = PEER_OPT_STR, .dst = &o.unix_local, .arg = "PATH",
	  .help = "transport unix: bind a datagram socket here ..." },
	{ .name = "unix-remote", .type = PEER_OPT_STR, .dst = &o.unix_remote, .arg = "PATH",
	  .help = "... and send to this one (QEMU's -netdev dgram)" },
	{ .name = "packet", .type = PEER_OPT_STR, .dst = &o.packet, .arg = "IF",
	  .help = "transport packet: an AF_PACKET socket on interface IF" },
	{ .name = "phase", .type = PEER_OPT_FN, .fn = opt_phase, .arg = "KIND[:K=V,...]",
	  .help = "idle, sparse, closed, open, rr, echo (see the top of main.c); repeatable" },
	{ .name = "size", .type = PEER_OPT_U32, .dst = &o.size, .def = 64,
	  .min = PEER_FLOW_MIN_LEN, .max = 1514, .arg = "N",
	  .help = "frame length in bytes (default 64)" },
	{ .name = "expect", .type = PEER_OPT_CHOICE, .dst = &o.expect, .choices = xform_names,
	  .arg = "io|macswap|routed", .help = "what the forwarder does to a frame (default io)" },
	{ .name = "fe-mac", .type = PEER_OPT_FN, .fn = opt_fe_mac, .arg = "MAC",
	  .help = "the front end's MAC: destination; routed: the source expected back" },
	{ .name = "src-ports", .type = PEER_OPT_U32, .dst = &o.src_ports, .def = 1, .min = 1,
	  .max = 60000, .arg = "N", .help = "UDP source ports, one per frame in turn (flows)" },
	{ .name = "any-order", .type = PEER_OPT_FLAG, .dst = &o.any_order,
	  .help = "frames may come back out of order (several queues)" },
	{ .name = "loss-ms", .type = PEER_OPT_U32, .dst = &o.loss_ms, .def = 500, .min = 1,
	  .max = 600000, .arg = "N",
	  .help = "a frame not back N ms after it was sent is lost (default 500)" },
	{ .name = "warmup-resend-ms", .type = PEER_OPT_U32, .dst = &o.warmup_resend_ms,
	  .def = 1000, .max = 600000, .arg = "N",
	  .help = "resend the warm-up frame every N ms (default 1000; 0: one only)" },
	{ .name = "warmup-timeout", .type = PEER_OPT_DOUBLE, .dst = &o.warmup_s, .ddef = 30.0,
	  .dmin = 0.001, .dmax = 3600, .arg = "S", .help = "the warm-up's allowance (default 30)" },
	{ .name = "no-warmup", .type = PEER_OPT_FLAG, .dst = &o.no_warmup,
	  .help = "no warm-up frame (the forwarder is known to be ready)" },
	{ .name = "settle-ms", .type = PEER_OPT_U32, .dst = &o.settle_ms, .def = 200,
	  .max = 600000, .arg = "N", .help = "quiet after the warm-up (default 200)" },
	{ .name = "drain-ms", .type = PEER_OPT_U32, .dst = &o.drain_ms, .def = 200, .max = 600000,
	  .arg = "N", .help = "receive only after each phase's frames are back (default 200)" },
	{ .name = "sample-ms", .type = PEER_OPT_U32, .dst = &o.sample_ms, .max = 600000,
	  .arg = "N", .help = "closed, open: a SAMPLE line every N ms (default 0: none)" },
	{ .name = "yield", .type = PEER_OPT_FLAG, .dst = &o.yield,
	  .help = "rr: sched_yield() after empty receive sweeps" },
	{ .name = "seed", .type = PEER_OPT_U64, .dst = &o.seed, .max = UINT32_MAX, .arg = "N",
	  .help = "gap generator seed (default: time and pid)" },
	{ .name = "dump", .type = PEER_OPT_STR, .dst = &o.dump, .arg = "FILE",
	  .help = "sparse: \"seq latency_ns net_ns\" per frame back" },
	{ .name = "link-timeout", .type = PEER_OPT_DOUBLE, .dst = &o.link_s, .ddef = 30.0,
	  .dmax = 3600, .arg = "S", .help = "ethdev: wait at most S s for the links (default 30)" },
	{ .name = "timeout", .type = PEER_OPT_DOUBLE, .dst = &o.timeout_s, .ddef = 600.0,
	  .dmin = 0.001, .dmax = 36000, .arg = "S",
	  .help = "deadline of the run after the link (default 600)" },
	{ .name = "linger", .type = PEER_OPT_DOUBLE, .dst = &o.linger_s, .dmax = 36000,
	  .arg = "S", .help = "after RESULT keep receiving until a signal, at most S s" },
	{ .name = "help", .type = PEER_OPT_FLAG, .dst = &o.help, .help = "this text" },
};

#define SYNOPSIS "vnapi-peer [EAL options --] (--iface SOCK... | --unix-local P --unix-remote P" \
		 " | --packet IF) --phase KIND[:K=V,...]... [options]"

static int
parse(int argc, char **argv)
{
	unsigned int nt;

	if (peer_opts_parse(argc, argv, opt_table, RTE_DIM(opt_table)) != 0)
		return -1;
	if (o.help)
		return 0;
	nt = (o.nb_iface > 0) + (o.unix_local != NULL || o.unix_remote != NULL) +
	     (o.packet != NULL);
	if (nt != 1 || (o.unix_local != NULL) != (o.unix_remote != NULL)) {
		fprintf(stderr, "need one transport: --iface, --unix-local with --unix-remote, or --packet\n");
		return -1;
	}
	if (o.nb_phases == 0) {
		fprintf(stderr, "need at least one --phase\n");
		return -1;
	}
	if (o.size > PEER_FLOW_MAX_LEN) {
		fprintf(stderr, "--size at most %u\n", PEER_FLOW_MAX_LEN);
		return -1;
	}
	return 0;
}

/* ---- main --------------------------------------------------------------------- */

/* The frames of phase @p i: from port 0 (rr responses from port 1) to the front end. */
static void
flows_init(void)
{
	static const struct rte_ether_addr default_fe = {
		.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a } };
	unsigned int i;

	for (i = 0; i < o.nb_phases; i++) {
		struct phase *ph = &o.ph[i];

		ph->flow = (struct peer_flow){
			.udp = {
				.src = g.x.mac[0],
				.dst = o.have_fe_mac ? o.fe_mac : default_fe,
				/* l3fwd-power routes 1.1.1.0/24 back out of port 0. */
				.ip_src = RTE_IPV4(10, 0, 0, 1),
				.ip_dst = RTE_IPV4(1, 1, 1, 1),
				.port_src = 1024,
				.port_dst = 2048,
				.ttl = 64,
			},
			.run = g.run,
			.flow = (uint8_t)i,
			.kind = ph->mode == MODE_RR ? KIND_REQ : KIND_DATA,
			.nb_src_ports = o.src_ports,
			.stamped = true,
		};
		ph->resp = ph->flow;
		ph->resp.kind = KIND_RESP;
		ph->resp.udp.src = g.x.mac[g.x.nb_ports - 1];
		ph->kicks = UINT64_MAX;
		ph->rr_port = UINT16_MAX;
	}
}

static int
transport_init(void)
{
	int ret;

	if (o.nb_iface > 0)
		ret = peer_xport_ethdev(&g.x, o.iface, (uint16_t)o.nb_iface, (uint16_t)o.queues);
	else if (o.unix_local != NULL)
		ret = peer_xport_unix(&g.x, o.unix_local, o.unix_remote);
	else
		ret = peer_xport_packet(&g.x, o.packet);
	if (ret != 0) {
		printf("# transport: %s\n", strerror(-ret));
		return -1;
	}
	printf("READY transport=%s ports=%u queues=%u size=%u mac=" RTE_ETHER_ADDR_PRT_FMT "\n",
	       o.nb_iface > 0 ? "ethdev" : o.unix_local != NULL ? "unix" : "packet",
	       g.x.nb_ports, g.x.nb_queues, o.size, RTE_ETHER_ADDR_BYTES(&g.x.mac[0]));
	return 0;
}

static bool
any_sparse(void)
{
	unsigned int i;

	for (i = 0; i < o.nb_phases; i++)
		if (o.ph[i].mode == MODE_SPARSE)
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	bool eal = false;
	unsigned int i;
	double took;
	int dd, ret, code;
	uint64_t before;

	setvbuf(stdout, NULL, _IOLBF, 0);
	peer_watch_init(&g.watch);
	g.x.fd = -1;
	o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	/* EAL's options come before "--"; without it, there are none (sockets). */
	for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
		;
	if (dd < argc) {
		argv[dd] = argv[0];
		if (parse(argc - dd, argv + dd) != 0)
			goto usage;
	} else if (parse(argc, argv) != 0) {
		goto usage;
	}
	if (o.help) {
		peer_opts_usage(stdout, SYNOPSIS, opt_table, RTE_DIM(opt_table));
		return EXIT_PASS;
	}
	if ((o.nb_iface > 0) != (dd < argc)) {
		fprintf(stderr, "EAL options (before --) with --iface, and only with it\n");
		goto usage;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (o.nb_iface > 0) {
		ret = rte_eal_init(dd, argv);
		if (ret < 0) {
			printf("RESULT: FAIL code=%d reason=eal_init (%s)\n", EXIT_SETUP,
			       rte_strerror(rte_errno));
			return EXIT_SETUP;
		}
		eal = true;
	}
	g.rng = o.seed != 0 ? o.seed : 0x9e3779b97f4a7c15ull;
	g.run = (uint16_t)peer_rng_next(&g.rng);
	g.loss_ns = (uint64_t)o.loss_ms * 1000000ull;
	g.expect.xform = (enum peer_xform)o.expect;
	g.expect.src_known = o.have_fe_mac;
	printf("# seed=%" PRIu64 " run=%04x expect=%s loss_ms=%u\n", o.seed, g.run,
	       xform_names[o.expect], o.loss_ms);
	g.deadline = UINT64_MAX;
	code = EXIT_PASS;
	if (transport_init() != 0) {
		code = EXIT_SETUP;
		goto report;
	}
	flows_init();
	took = peer_now_s();
	ret = peer_xport_link_wait(&g.x, o.link_s, &quit);
	if (ret == -EINTR) {
		code = EXIT_INTERRUPTED;
		goto report;
	} else if (ret != 0) {
		printf("# no link within %.1f s\n", o.link_s);
		code = EXIT_LINK;
		goto report;
	}
	printf("LINK up secs=%.3f\n", peer_now_s() - took);
	g.deadline = peer_now_ns() + (uint64_t)(o.timeout_s * 1e9);
	if (!o.no_warmup)
		code = warmup();
	if (code == EXIT_PASS && o.nb_iface > 0 && any_sparse())
		peer_watch_start(&g.watch, o.iface[0], true);
	for (i = 0; i < o.nb_phases && code == EXIT_PASS; i++)
		code = run_phase(&o.ph[i]);
	if (code == EXIT_PASS)
		code = verdict();
report:
	report_total(code);
	if (code == EXIT_PASS && verdict() != EXIT_PASS)
		code = EXIT_FAIL;
	if (o.linger_s > 0 && !quit && g.x.kind == PEER_XPORT_ETHDEV && g.x.pool != NULL) {
		before = g.rx_total;
		g.deadline = UINT64_MAX;
		printf("LINGER until a signal (at most %.0f s)\n", o.linger_s);
		fflush(stdout);
		rx_until(peer_now_ns() + (uint64_t)(o.linger_s * 1e9), true);
		printf("LINGER end rx=%" PRIu64 "\n", g.rx_total - before);
	}
	peer_watch_free(&g.watch);
	for (i = 0; i < o.nb_phases; i++) {
		peer_tally_free(&o.ph[i].t);
		free(o.ph[i].recs);
		free(o.ph[i].lat);
	}
	peer_xport_close(&g.x);
	if (eal)
		rte_eal_cleanup();
	return code;
usage:
	peer_opts_usage(stderr, SYNOPSIS, opt_table, RTE_DIM(opt_table));
	return EXIT_USAGE;
}
