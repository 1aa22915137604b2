/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * A hostile device on the receive path. The test is the device: a net_vnapi
 * port over a loop device (tests/lib/loop_device.h), whose rx ring the test
 * serves with the unit tests' fake device, writing the headers and used
 * entries a buggy or hostile device would. One case per fault:
 *
 *   id_out_of_range       used id = ring size + 5
 *   id_not_outstanding    the id of a buffer the same flush already used
 *   len_over_buffer       used len = the buffer's writable length + 1
 *   len_under_header      used len = header size - 1
 *   len_zero              used len = 0
 *   used_idx_jump         (split) used idx moved ring size + 1 past ours
 *   mrg_num_buffers_0     (mergeable) num_buffers 0 in a buffer the
 *                         device filled
 *   mrg_num_buffers_ring  (mergeable) num_buffers = ring size + 1, the
 *                         buffer filled
 *   mrg_ends_early        (mergeable) num_buffers 3, two buffers used, the
 *                         used ring ends there (more packets only later)
 *   mrg_beyond_used       (mergeable) num_buffers 40, one buffer used, filled
 *   mrg_cont_len_over     (mergeable) a packet's second buffer with a used
 *                         len one byte beyond it
 *
 * and one that is not a fault for the driver to see:
 *
 *   mrg_short_says_more   (mergeable) num_buffers 2 in a 64-byte frame's
 *                         buffer: only a buffer the device filled can be
 *                         followed by more of its packet (virtio 1.2,
 *                         5.1.6.4.1), so the driver takes the frame whole
 *                         without reading the header, and every frame after
 *                         it; the queue stays up
 *
 * Each case, on a freshly started port: the device completes 3 good frames
 * (the driver must deliver exactly those), then in one publication 2 good
 * frames, the fault and 3 good frames (with mrg_ends_early and
 * mrg_beyond_used the 3 come in a later publication, after the driver has
 * looked). Then, exactly (for a fault): the 2 frames before the fault delivered, byte for
 * byte, and nothing after it (used_idx_jump: nothing of that publication,
 * the index itself is the fault); the queue broken: rx_q0_bad_used 1 for a
 * fault lib/virtq catches, rx_q0_errors 1 for one the driver's header
 * checks catch (the other 0); the link down with exactly one LSC event;
 * the driver's "rx queue 0 broken by the back end" line logged exactly once
 * over 100 more bursts, which return nothing; after the stop every mbuf
 * back in the pool. Each case runs with the default rx path (AVX2 where the
 * CPU and EAL allow it) and bursts of 32, the scalar path and bursts of 32,
 * and the scalar path and bursts of 3 (packets then span bursts).
 *
 * Usage: hostile_rx --name NAME [--packed] [--mrg] [--in-order] [--case NAME]
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_vect.h>

#include "loop_device.h"
#include "peer_opt.h"
#include "peer_port.h"
#include "peer_tap.h"
#include "peer_util.h"

#define HR_RING          64
#define HR_POOL          (4 * HR_RING)
#define HR_GOOD_FIRST    3     /* completed and taken before the fault's publication */
#define HR_GOOD_BEFORE   2     /* in the fault's publication, before it */
#define HR_GOOD_AFTER    3     /* after the fault */
#define HR_FRAME_LEN     200
#define HR_BIG_LEN       5000  /* three 2 KB buffers with mergeable buffers */
#define HR_BIG_BUFS      3
#define HR_FULL_LEN      2048  /* fills one 2 KB buffer after the header */
#define HR_EMPTY_BURSTS  50    /* consecutive empty bursts that end a phase */
#define HR_MORE_BURSTS   100
#define HR_BROKEN_LINE   "rx queue 0 broken by the back end"

enum hr_fault {
	HR_ID_OUT_OF_RANGE,
	HR_ID_NOT_OUTSTANDING,
	HR_LEN_OVER_BUFFER,
	HR_LEN_UNDER_HEADER,
	HR_LEN_ZERO,
	HR_USED_IDX_JUMP,
	HR_MRG_NUM_BUFFERS_0,
	HR_MRG_NUM_BUFFERS_RING,
	HR_MRG_ENDS_EARLY,
	HR_MRG_BEYOND_USED,
	HR_MRG_CONT_LEN_OVER,
	HR_MRG_SHORT_SAYS_MORE,
};

/* Who must catch it: lib/virtq (bad_used) or the driver's header checks (errors). */
enum hr_catcher {
	HR_VIRTQ,
	HR_DRIVER,
	HR_NOBODY,    /* not a fault: every frame delivered, the queue up */
};

struct hr_case {
	const char *name;
	enum hr_fault fault;
	enum hr_catcher by;
	bool mrg_only;
	bool split_only;
	/* What the driver's log line must name (NULL: lib/virtq's own words). */
	const char *reason;
};

static const struct hr_case hr_cases[] = {
	{ "id_out_of_range", HR_ID_OUT_OF_RANGE, HR_VIRTQ, false, false, NULL },
	{ "id_not_outstanding", HR_ID_NOT_OUTSTANDING, HR_VIRTQ, false, false, NULL },
	{ "len_over_buffer", HR_LEN_OVER_BUFFER, HR_VIRTQ, false, false,
	  "used len exceeds the writable length" },
	{ "len_under_header", HR_LEN_UNDER_HEADER, HR_DRIVER, false, false,
	  "shorter than the virtio-net header" },
	{ "len_zero", HR_LEN_ZERO, HR_DRIVER, false, false, "shorter than the virtio-net header" },
	{ "used_idx_jump", HR_USED_IDX_JUMP, HR_VIRTQ, false, true, NULL },
	{ "mrg_num_buffers_0", HR_MRG_NUM_BUFFERS_0, HR_DRIVER, true, false, "num_buffers 0" },
	{ "mrg_num_buffers_ring", HR_MRG_NUM_BUFFERS_RING, HR_DRIVER, true, false,
	  "num_buffers beyond the ring" },
	{ "mrg_ends_early", HR_MRG_ENDS_EARLY, HR_DRIVER, true, false,
	  "used ring ends inside a packet" },
	{ "mrg_beyond_used", HR_MRG_BEYOND_USED, HR_DRIVER, true, false,
	  "used ring ends inside a packet" },
	{ "mrg_cont_len_over", HR_MRG_CONT_LEN_OVER, HR_VIRTQ, true, false,
	  "used len exceeds the writable length" },
	{ "mrg_short_says_more", HR_MRG_SHORT_SAYS_MORE, HR_NOBODY, true, false, NULL },
};

/* How a case is run: the rx path and the burst size. */
struct hr_pass {
	const char *name;
	uint16_t simd;     /* rte_vect_set_max_simd_bitwidth() before the start */
	uint16_t burst;
};

static const struct hr_pass hr_passes[] = {
	{ "default path, bursts of 32", RTE_VECT_SIMD_MAX, 32 },
	{ "scalar, bursts of 32", RTE_VECT_SIMD_DISABLED, 32 },
	{ "scalar, bursts of 3", RTE_VECT_SIMD_DISABLED, 3 },
};

static struct {
	const char *name;
	bool packed;
	bool mrg;
	bool in_order;
	const char *only;
} opts = { .name = "hostile_rx" };

static const struct peer_opt hr_opts[] = {
	{ .name = "name", .type = PEER_OPT_STR, .dst = &opts.name, .arg = "NAME",
	  .help = "test name (EAL file prefix)" },
	{ .name = "packed", .type = PEER_OPT_FLAG, .dst = &opts.packed,
	  .help = "packed ring (else split)" },
	{ .name = "mrg", .type = PEER_OPT_FLAG, .dst = &opts.mrg,
	  .help = "mergeable rx buffers" },
	{ .name = "in-order", .type = PEER_OPT_FLAG, .dst = &opts.in_order,
	  .help = "VIRTIO_F_IN_ORDER offered (and taken)" },
	{ .name = "case", .type = PEER_OPT_STR, .dst = &opts.only, .arg = "NAME",
	  .help = "run only this case (default: every case the ring takes)" },
};

static unsigned int hr_lsc_events;

static int
hr_lsc_cb(uint16_t port __rte_unused, enum rte_eth_event_type ev __rte_unused,
	  void *arg __rte_unused, void *ret __rte_unused)
{
	__atomic_fetch_add(&hr_lsc_events, 1, __ATOMIC_ACQ_REL);
	return 0;
}

/* Frame @p seq: its seq in the first 4 bytes, then a pattern of it. */
static void
hr_frame(uint8_t *p, uint32_t len, uint32_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	peer_pattern_fill(p + sizeof(seq), len - sizeof(seq), seq);
}

/* What the device sent, in order, for the delivery check. */
struct hr_expect {
	uint32_t seq[16];
	uint32_t len[16];
	unsigned int n;
};

/* One good frame from the device: @p big spans HR_BIG_BUFS buffers (mergeable). */
static int
hr_good(struct loop_dev *ld, uint32_t seq, bool big, struct hr_expect *e, uint16_t *id)
{
	static uint8_t frame[HR_BIG_LEN];
	uint32_t len = big ? HR_BIG_LEN : HR_FRAME_LEN + seq;
	uint16_t nbufs = big ? HR_BIG_BUFS : 1;
	int ret;

	hr_frame(frame, len, seq);
	ret = loop_dev_rx_fill(ld, frame, len, nbufs, nbufs, NULL, id);
	if (ret != 0)
		return peer_fail("device: good frame %u (%u bytes): %d", seq, len, ret);
	if (e != NULL) {
		e->seq[e->n] = seq;
		e->len[e->n] = len;
		e->n++;
	}
	return 0;
}

/* The fault itself (not published). */
static int
hr_fault(struct loop_dev *ld, const struct hr_case *c, uint16_t last_id)
{
	struct fake_dev *d = loop_dev_rx(ld);
	uint16_t hdr = loop_dev_hdr_size(ld);
	uint8_t frame[HR_BIG_LEN];
	uint32_t lens[HR_BIG_BUFS];
	int ret = 0;

	hr_frame(frame, sizeof(frame), 0xbad);
	switch (c->fault) {
	case HR_ID_OUT_OF_RANGE:
		fake_dev_push_raw(d, HR_RING + 5, 64);
		break;
	case HR_ID_NOT_OUTSTANDING:
		fake_dev_push_raw(d, last_id, 64);
		break;
	case HR_LEN_OVER_BUFFER:
		lens[0] = LOOP_LEN_OVER;
		ret = loop_dev_rx_fill(ld, frame, 64, 1, 1, lens, NULL);
		break;
	case HR_LEN_UNDER_HEADER:
		lens[0] = hdr - 1u;
		ret = loop_dev_rx_fill(ld, frame, 64, 1, 1, lens, NULL);
		break;
	case HR_LEN_ZERO:
		lens[0] = 0;
		ret = loop_dev_rx_fill(ld, frame, 64, 1, 1, lens, NULL);
		break;
	case HR_USED_IDX_JUMP:
		ret = fake_dev_inject_used_jump(d);
		break;
	case HR_MRG_NUM_BUFFERS_0:
		ret = loop_dev_rx_fill(ld, frame, HR_FULL_LEN, 1, 0, NULL, NULL);
		break;
	case HR_MRG_NUM_BUFFERS_RING:
		ret = loop_dev_rx_fill(ld, frame, HR_FULL_LEN, 1, HR_RING + 1, NULL, NULL);
		break;
	case HR_MRG_ENDS_EARLY:
		/* A frame in two buffers that says it has three. */
		ret = loop_dev_rx_fill(ld, frame, 3000, 2, 3, NULL, NULL);
		break;
	case HR_MRG_BEYOND_USED:
		ret = loop_dev_rx_fill(ld, frame, HR_FULL_LEN, 1, 40, NULL, NULL);
		break;
	case HR_MRG_CONT_LEN_OVER:
		lens[0] = 2048u + hdr;
		lens[1] = LOOP_LEN_OVER;
		ret = loop_dev_rx_fill(ld, frame, 3000, 2, 2, lens, NULL);
		break;
	case HR_MRG_SHORT_SAYS_MORE:
		ret = loop_dev_rx_fill(ld, frame, 64, 1, 2, NULL, NULL);
		break;
	}
	if (ret != 0)
		return peer_fail("device: %s: %d", c->name, ret);
	return 0;
}

/*
 * Bursts of @p burst until HR_EMPTY_BURSTS in a row return nothing; every
 * packet is checked against @p e in order (frames the device completed and
 * the driver must deliver) and freed. Returns the count received; *bad
 * counts those that are not the expected frame.
 */
static unsigned int
hr_drain(uint16_t port, uint16_t burst, const struct hr_expect *e, unsigned int *next,
	 unsigned int *bad)
{
	static uint8_t buf[HR_BIG_LEN];
	struct rte_mbuf *pkts[32];
	unsigned int empty = 0, got = 0, bursts = 0;

	while (empty < HR_EMPTY_BURSTS && bursts++ < 100000) {
		uint16_t n = rte_eth_rx_burst(port, 0, pkts, burst), i;

		empty = n == 0 ? empty + 1 : 0;
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			uint8_t want[HR_BIG_LEN];
			const uint8_t *p;
			unsigned int k = *next;

			got++;
			(*next)++;
			if (k >= e->n) {
				if ((*bad)++ == 0)
					printf("# packet %u delivered beyond the %u expected (%u bytes, %u segments)\n",
					       k, e->n, m->pkt_len, m->nb_segs);
				rte_pktmbuf_free(m);
				continue;
			}
			hr_frame(want, e->len[k], e->seq[k]);
			p = m->pkt_len == e->len[k] ?
			    rte_pktmbuf_read(m, 0, m->pkt_len, buf) : NULL;
			if (p == NULL || memcmp(p, want, e->len[k]) != 0 ||
			    rte_mbuf_check(m, 1, NULL) != 0) {
				if ((*bad)++ == 0)
					printf("# packet %u: %u bytes in %u segments, expected frame %u of %u bytes%s\n",
					       k, m->pkt_len, m->nb_segs, e->seq[k], e->len[k],
					       p == NULL ? "" : " (other bytes)");
			}
			rte_pktmbuf_free(m);
		}
	}
	return got;
}

static uint64_t
hr_xstat(uint16_t port, const char *name)
{
	uint64_t v = peer_xstat(port, name);

	if (v == UINT64_MAX)
		peer_fail("no xstat %s", name);
	return v;
}

/* Lines of the captured driver log that say @p what; each echoed as "# log:". */
static unsigned int
hr_log_count(FILE *log, const char *what)
{
	char line[512];
	unsigned int n = 0;

	fflush(log);
	rewind(log);
	while (fgets(line, sizeof(line), log) != NULL) {
		if (strstr(line, what) == NULL)
			continue;
		n++;
		printf("# log: %s", line);
	}
	fseek(log, 0, SEEK_END);
	return n;
}

static void
hr_wait_lsc(unsigned int want, double timeout)
{
	double deadline = peer_now_s() + timeout;

	while (__atomic_load_n(&hr_lsc_events, __ATOMIC_ACQUIRE) < want &&
	       peer_now_s() < deadline)
		peer_sleep_us(1000);
}

/* One case in one pass: the port started, the case played, the port stopped. */
static int
hr_run(struct loop_dev *ld, struct rte_mempool *mp, const struct hr_case *c,
       const struct hr_pass *ps)
{
	uint16_t port = loop_dev_port(ld);
	struct hr_expect e = { .n = 0 };
	struct rte_eth_burst_mode mode;
	struct rte_eth_link link;
	uint64_t bad_used, errors;
	unsigned int next = 0, lines, lsc, i;
	bool late = c->fault == HR_MRG_ENDS_EARLY || c->fault == HR_MRG_BEYOND_USED;
	bool idx_fault = c->fault == HR_USED_IDX_JUMP;
	bool fault = c->by != HR_NOBODY;
	unsigned int got1, got2, got3 = 0, bad = 0, more = 0, in_use0;
	uint16_t last_id = 0;
	uint32_t seq = 0;
	FILE *log;

	log = tmpfile();
	if (log == NULL)
		return peer_fail("tmpfile: %s", strerror(errno));
	rte_openlog_stream(log);
	in_use0 = rte_mempool_in_use_count(mp);
	rte_vect_set_max_simd_bitwidth(ps->simd);
	if (rte_eth_dev_start(port) != 0 || loop_dev_rx(ld) == NULL) {
		rte_openlog_stream(NULL);
		fclose(log);
		return peer_fail("%s: start", c->name);
	}
	rte_eth_xstats_reset(port);
	__atomic_store_n(&hr_lsc_events, 0, __ATOMIC_RELEASE);
	memset(&mode, 0, sizeof(mode));
	rte_eth_rx_burst_mode_get(port, 0, &mode);

	/* 1. Frames the driver takes before anything goes wrong. */
	for (i = 0; i < HR_GOOD_FIRST; i++)
		if (hr_good(ld, seq++, opts.mrg && i == 1, &e, &last_id) != 0)
			goto fail;
	fake_dev_flush(loop_dev_rx(ld));
	got1 = hr_drain(port, ps->burst, &e, &next, &bad);

	/* 2. In one publication: good frames, the fault, good frames. */
	for (i = 0; i < HR_GOOD_BEFORE; i++)
		if (hr_good(ld, seq++, opts.mrg && i == 0, idx_fault ? NULL : &e, &last_id) != 0)
			goto fail;
	if (hr_fault(ld, c, last_id) != 0)
		goto fail;
	if (!fault) {
		e.seq[e.n] = 0xbad;     /* hr_fault()'s frame */
		e.len[e.n++] = 64;
	}
	for (i = 0; !late && i < HR_GOOD_AFTER; i++)
		if (hr_good(ld, seq++, false, fault ? NULL : &e, NULL) != 0)
			goto fail;
	fake_dev_flush(loop_dev_rx(ld));
	got2 = hr_drain(port, ps->burst, &e, &next, &bad);

	/* 3. A device that goes on after the used ring ended inside a packet. */
	if (late) {
		for (i = 0; i < HR_GOOD_AFTER; i++)
			if (hr_good(ld, seq++, false, NULL, NULL) != 0)
				goto fail;
		fake_dev_flush(loop_dev_rx(ld));
		got3 = hr_drain(port, ps->burst, &e, &next, &bad);
	}

	/* The link goes down with one LSC event; nothing more comes. */
	/* Waits with a deadline (the report goes through an EAL alarm); the
	 * state is judged below. Not a fault: the link stays as it is. */
	if (fault) {
		peer_link_wait(port, false, 5.0, NULL, NULL, NULL);
		hr_wait_lsc(1, 5.0);
	}
	for (i = 0; i < HR_MORE_BURSTS; i++) {
		struct rte_mbuf *pkts[32];
		uint16_t n = rte_eth_rx_burst(port, 0, pkts, ps->burst);

		more += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	lsc = __atomic_load_n(&hr_lsc_events, __ATOMIC_ACQUIRE);
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(port, &link) != 0)
		link.link_status = RTE_ETH_LINK_UP; /* unknown: not down */
	bad_used = hr_xstat(port, "rx_q0_bad_used");
	errors = hr_xstat(port, "rx_q0_errors");
	lines = hr_log_count(log, HR_BROKEN_LINE);
	peer_tap(got1 == HR_GOOD_FIRST && got2 == e.n - HR_GOOD_FIRST && got3 == 0 && more == 0 &&
		 bad == 0,
		 "%s, %s (%s): delivered %u then %u then %u, %u more, %u not the frame expected (want %u, %u, 0, 0, 0: %s)",
		 c->name, ps->name, mode.info, got1, got2, got3, more, bad, HR_GOOD_FIRST,
		 e.n - HR_GOOD_FIRST,
		 fault ? "the frames before the fault, nothing past it" : "every frame");
	peer_tap(bad_used == (c->by == HR_VIRTQ) && errors == (c->by == HR_DRIVER),
		 "%s, %s: rx_q0_bad_used %" PRIu64 ", rx_q0_errors %" PRIu64 " (want %d, %d)",
		 c->name, ps->name, bad_used, errors, c->by == HR_VIRTQ, c->by == HR_DRIVER);
	peer_tap(link.link_status == (fault ? RTE_ETH_LINK_DOWN : RTE_ETH_LINK_UP) &&
		 lsc == fault && lines == fault &&
		 (c->reason == NULL || hr_log_count(log, c->reason) == 1),
		 "%s, %s: link %s, %u LSC events, the broken queue logged %u times%s%s (want %s)",
		 c->name, ps->name, link.link_status ? "up" : "down", lsc, lines,
		 c->reason != NULL ? ", naming: " : "", c->reason != NULL ? c->reason : "",
		 fault ? "down, 1, 1" : "up, 0, 0");
	rte_openlog_stream(NULL);
	fclose(log);
	if (rte_eth_dev_stop(port) != 0)
		return peer_fail("%s: stop", c->name);
	peer_tap(rte_mempool_in_use_count(mp) == in_use0,
		 "%s, %s: every mbuf back in the pool after the stop (%u in use, %u before)",
		 c->name, ps->name, rte_mempool_in_use_count(mp), in_use0);
	return peer_failed() ? -1 : 0;
fail:
	rte_openlog_stream(NULL);
	fclose(log);
	rte_eth_dev_stop(port);
	return -1;
}

int
main(int argc, char **argv)
{
	struct loop_cfg cfg = { .ring = HR_RING };
	char sock[128], prefix[96];
	struct rte_mempool *mp = NULL;
	struct loop_dev *ld = NULL;
	unsigned int c, p, ran = 0;
	int ret = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (peer_opts_parse(argc, argv, hr_opts, RTE_DIM(hr_opts)) != 0) {
		peer_opts_usage(stderr, "hostile_rx", hr_opts, RTE_DIM(hr_opts));
		return 2;
	}
	if (peer_run_paths(opts.name, sock, sizeof(sock), prefix, sizeof(prefix)) != 0) {
		printf("RESULT: FAIL: mkdir %s\n", PEER_RUN_DIR);
		return 1;
	}
	if (peer_eal_init(argv[0], prefix, "pmd.net.vnapi*:info", NULL, 0) < 0) {
		printf("RESULT: FAIL: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	cfg.packed = opts.packed;
	cfg.mrg = opts.mrg;
	cfg.in_order = opts.in_order;
	cfg.event_idx = true;
	mp = rte_pktmbuf_pool_create("hr_pool", HR_POOL, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL) {
		peer_fail("mempool: %s", rte_strerror(rte_errno));
		goto out;
	}
	ld = loop_dev_create("net_vnapi_hostile", &cfg, mp);
	if (ld == NULL) {
		peer_fail("loop device");
		goto out;
	}
	if (rte_eth_dev_callback_register(loop_dev_port(ld), RTE_ETH_EVENT_INTR_LSC, hr_lsc_cb,
					  NULL) != 0) {
		peer_fail("LSC callback");
		goto out;
	}
	printf("# %s ring, mergeable buffers %s, in order %s: features 0x%" PRIx64 " negotiated\n",
	       cfg.packed ? "packed" : "split", cfg.mrg ? "on" : "off",
	       cfg.in_order ? "on" : "off", loop_dev_features(ld));
	for (c = 0; c < RTE_DIM(hr_cases); c++) {
		if ((hr_cases[c].mrg_only && !cfg.mrg) || (hr_cases[c].split_only && cfg.packed) ||
		    (opts.only != NULL && strcmp(opts.only, hr_cases[c].name) != 0))
			continue;
		for (p = 0; p < RTE_DIM(hr_passes); p++) {
			ran++;
			/* Each case judged alone: a failed one does not stop the others. */
			hr_run(ld, mp, &hr_cases[c], &hr_passes[p]);
		}
	}
	printf("# %u case runs (%u cases x %u passes)\n", ran, ran / (unsigned int)RTE_DIM(hr_passes),
	       (unsigned int)RTE_DIM(hr_passes));
	ret = 0;
out:
	loop_dev_destroy(ld);
	if (mp != NULL) {
		peer_tap(rte_mempool_in_use_count(mp) == 0,
			 "port closed: every mbuf back in the pool (%u in use)",
			 rte_mempool_in_use_count(mp));
		rte_mempool_free(mp);
	}
	rte_eal_cleanup();
	return peer_tap_finish(ret);
}
