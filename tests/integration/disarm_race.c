/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The disarm race, made deterministic: an application's wait ends (its
 * timeout) at the moment the device makes a packet used, and the
 * application disarms between the device's store of the used entry and its
 * read of the driver's event area. The test is the device: a net_vnapi
 * port over a loop device (tests/lib/loop_device.h) with rx interrupts on,
 * whose fake device calls the test back between those two steps
 * (fake_dev.between), where the test disarms the queue
 * (rte_eth_dev_rx_intr_disable). When the device's read says "notify", the
 * test writes the queue's call eventfd, as lib/vhost does.
 *
 * Cases, each on the same started port, in this order:
 *
 *   timeout_race  arm; the wait times out (2 ms, over the driver's 1 ms
 *                 minimum wait); the device publishes one packet and the
 *                 application disarms in the middle. The disarm finds the
 *                 packet and no notification. The driver must leave the
 *                 device its event, so the device still owes, and sends,
 *                 the notification; the rx burst that takes the packet
 *                 reads it: late 1, unnotified 0. Then three more packets,
 *                 one publication each, while the application polls: no
 *                 notification for any (the event is spent, or withdrawn
 *                 in flag mode). Before the driver left the event, the
 *                 device saw the queue disarmed, sent nothing, and the
 *                 driver counted a lost wakeup that was not one.
 *   disarm_again  as timeout_race, and the application disarms once more
 *                 (the queue is no longer armed) after the notification
 *                 came and before it polls: that disarm reads it, late 1,
 *                 and withdraws the event; no notification while it polls.
 *   lost          arm; the wait times out; the device publishes one packet
 *                 and decides to notify, and the notification is lost (the
 *                 test does not write the eventfd). The application
 *                 disarms, takes the packet, arms again: that arm finds no
 *                 late notification: unnotified 1. The detector still sees
 *                 a real loss.
 *   short_race    arm and, at once, the device publishes one packet with
 *                 the disarm in the middle (an application such as lib/napi
 *                 that re-checks the ring after arming and disarms): a
 *                 disarm within 1 ms of the arm withdraws the event; the
 *                 device sends nothing: raced 1, unnotified 0.
 *
 * Each case checks the packets taken (count and bytes) and the exact
 * change of the queue's interrupt xstats; at the end every mbuf is back in
 * the pool. Split and packed, event idx on (--event-idx) and off, in order
 * on (as lib/vhost offers it).
 *
 * Usage: disarm_race --name NAME [--packed] [--event-idx]
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_epoll.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "loop_device.h"
#include "peer_opt.h"
#include "peer_port.h"
#include "peer_tap.h"
#include "peer_util.h"

#define DR_RING        64
#define DR_POOL        (4 * DR_RING)
#define DR_FRAME_LEN   100
#define DR_WAIT_MS     2       /* a wait over the driver's VNAPI_INTR_WAIT_MIN_US */
#define DR_POLLS       20      /* rx bursts after each publication */
#define DR_TAG         0x5a

static struct {
	const char *name;
	bool packed;
	bool event_idx;
} opts = { .name = "disarm_race" };

static const struct peer_opt dr_opts[] = {
	{ .name = "name", .type = PEER_OPT_STR, .dst = &opts.name, .arg = "NAME",
	  .help = "test name (EAL file prefix)" },
	{ .name = "packed", .type = PEER_OPT_FLAG, .dst = &opts.packed,
	  .help = "packed ring (else split)" },
	{ .name = "event-idx", .type = PEER_OPT_FLAG, .dst = &opts.event_idx,
	  .help = "VIRTIO_F_RING_EVENT_IDX (else flag mode)" },
};

/* The queue's interrupt xstats this test judges. */
static const char *const dr_names[] = {
	"rx_q0_intr_notifications", "rx_q0_intr_wakeups", "rx_q0_intr_late_notifications",
	"rx_q0_intr_unnotified_work", "rx_q0_intr_raced_disarms", "rx_q0_intr_rescues",
};
enum { DR_NOTIF, DR_WAKEUPS, DR_LATE, DR_UNNOTIFIED, DR_RACED, DR_RESCUES, DR_NSTATS };

struct dr_stats {
	uint64_t v[DR_NSTATS];
};

struct dr_ctx {
	struct loop_dev *ld;
	uint16_t port;
	int callfd;
	uint32_t seq;
	uint64_t rx_packets;
	uint64_t rx_bytes;
	int disarm_ret;
	unsigned int disarms;
};

static void
dr_read_stats(uint16_t port, struct dr_stats *s)
{
	unsigned int i;

	for (i = 0; i < DR_NSTATS; i++)
		s->v[i] = peer_xstat(port, dr_names[i]);
}

/* The application's disarm, run by the device between its publication and
 * its read of the event area. */
static void
dr_disarm_between(void *arg)
{
	struct dr_ctx *c = arg;

	c->disarm_ret = rte_eth_dev_rx_intr_disable(c->port, 0);
	c->disarms++;
}

/*
 * The device publishes one packet, with @p between run in the middle if
 * not NULL. @return whether its read of the event area said "notify";
 * *wrote whether the test then wrote the call eventfd (not when @p lose).
 */
static int
dr_publish(struct dr_ctx *c, void (*between)(void *), bool lose, bool *notify)
{
	struct fake_dev *rx = loop_dev_rx(c->ld);
	uint8_t frame[DR_FRAME_LEN];
	uint64_t one = 1;
	int ret;

	if (rx == NULL)
		return peer_fail("no rx ring attached");
	memset(frame, 0, sizeof(frame));
	memset(frame, 0xff, 6);   /* broadcast destination */
	frame[12] = 0x88;
	frame[13] = 0xb5;         /* local experimental ethertype */
	memcpy(frame + 14, &c->seq, sizeof(c->seq));
	c->seq++;
	ret = loop_dev_rx_fill(c->ld, frame, sizeof(frame), 1, 1, NULL, NULL);
	if (ret != 0)
		return peer_fail("loop_dev_rx_fill: %d (%s)", ret, rx->error);
	rx->between = between;
	rx->between_arg = c;
	*notify = fake_dev_flush(rx);
	rx->between = NULL;
	if (rx->driver_errors != 0)
		return peer_fail("the driver broke a ring rule: %s", rx->error);
	if (*notify && !lose && write(c->callfd, &one, sizeof(one)) != sizeof(one))
		return peer_fail("write to the call eventfd: %s", strerror(errno));
	return 0;
}

/* Rx bursts until DR_POLLS in a row are empty; counts and frees. */
static uint16_t
dr_poll(struct dr_ctx *c)
{
	struct rte_mbuf *pkts[32];
	unsigned int empty = 0;
	uint16_t n, i, total = 0;

	while (empty < DR_POLLS) {
		n = rte_eth_rx_burst(c->port, 0, pkts, RTE_DIM(pkts));
		empty = n == 0 ? empty + 1 : 0;
		for (i = 0; i < n; i++) {
			c->rx_bytes += pkts[i]->pkt_len;
			rte_pktmbuf_free(pkts[i]);
		}
		total += n;
	}
	c->rx_packets += total;
	return total;
}

/* Arm, then wait DR_WAIT_MS on the thread's epoll set: must time out. */
static int
dr_arm_and_time_out(struct dr_ctx *c, const char *what)
{
	struct rte_epoll_event ev;
	int ret, n;

	ret = rte_eth_dev_rx_intr_enable(c->port, 0);
	if (ret != 0)
		return peer_fail("%s: rx_intr_enable: %d", what, ret);
	n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, &ev, 1, DR_WAIT_MS);
	if (n != 0)
		return peer_fail("%s: the wait before any packet returned %d, not a timeout", what, n);
	return 0;
}

static void
dr_expect_delta(const char *what, const struct dr_stats *a, const struct dr_stats *b,
		const uint64_t want[DR_NSTATS])
{
	unsigned int i;

	for (i = 0; i < DR_NSTATS; i++)
		peer_tap(b->v[i] - a->v[i] == want[i], "%s: %s +%" PRIu64 " (want +%" PRIu64 ")",
			 what, dr_names[i], b->v[i] - a->v[i], want[i]);
}

static void
dr_timeout_race(struct dr_ctx *c)
{
	const uint64_t want[DR_NSTATS] = {
		[DR_NOTIF] = 1, [DR_LATE] = 1,
	};
	struct dr_stats a, b;
	bool notify = false;
	uint64_t calls;
	unsigned int i, quiet = 0;
	uint16_t got;

	dr_read_stats(c->port, &a);
	if (dr_arm_and_time_out(c, "timeout_race") != 0)
		return;
	if (dr_publish(c, dr_disarm_between, false, &notify) != 0)
		return;
	peer_tap(c->disarm_ret == 0, "timeout_race: the disarm between the device's steps returned %d",
		 c->disarm_ret);
	peer_tap(notify, "timeout_race: the device, reading the event area after the disarm, still owes the notification");
	got = dr_poll(c);
	peer_tap(got == 1, "timeout_race: the packet taken (%u)", got);
	/* The application polls: the owed notification was the last. */
	calls = loop_dev_rx(c->ld)->calls;
	for (i = 0; i < 3; i++) {
		if (dr_publish(c, NULL, false, &notify) != 0)
			return;
		quiet += !notify;
		got = dr_poll(c);
		peer_tap(got == 1, "timeout_race: polled packet %u taken (%u)", i, got);
	}
	peer_tap(quiet == 3 && loop_dev_rx(c->ld)->calls == calls,
		 "timeout_race: no notification for the 3 packets published while the application polls (%u of 3 quiet)",
		 quiet);
	dr_read_stats(c->port, &b);
	dr_expect_delta("timeout_race", &a, &b, want);
}

static void
dr_disarm_again(struct dr_ctx *c)
{
	const uint64_t want[DR_NSTATS] = {
		[DR_NOTIF] = 1, [DR_LATE] = 1,
	};
	struct dr_stats a, b;
	bool notify = false;
	unsigned int i, quiet = 0;
	uint16_t got;
	int ret;

	dr_read_stats(c->port, &a);
	if (dr_arm_and_time_out(c, "disarm_again") != 0)
		return;
	if (dr_publish(c, dr_disarm_between, false, &notify) != 0)
		return;
	peer_tap(notify, "disarm_again: the device still owes the notification");
	ret = rte_eth_dev_rx_intr_disable(c->port, 0);
	peer_tap(ret == 0, "disarm_again: the second disarm returned %d", ret);
	got = dr_poll(c);
	peer_tap(got == 1, "disarm_again: the packet taken (%u)", got);
	for (i = 0; i < 3; i++) {
		if (dr_publish(c, NULL, false, &notify) != 0)
			return;
		quiet += !notify;
		got = dr_poll(c);
		peer_tap(got == 1, "disarm_again: polled packet %u taken (%u)", i, got);
	}
	peer_tap(quiet == 3, "disarm_again: no notification while the application polls (%u of 3 quiet)",
		 quiet);
	dr_read_stats(c->port, &b);
	dr_expect_delta("disarm_again", &a, &b, want);
}

static void
dr_lost(struct dr_ctx *c)
{
	const uint64_t want[DR_NSTATS] = {
		[DR_UNNOTIFIED] = 1,
	};
	struct dr_stats a, b;
	bool notify = false;
	uint16_t got;
	int ret;

	dr_read_stats(c->port, &a);
	if (dr_arm_and_time_out(c, "lost") != 0)
		return;
	if (dr_publish(c, NULL, true, &notify) != 0)
		return;
	peer_tap(notify, "lost: the device decided to notify (and the notification is lost)");
	ret = rte_eth_dev_rx_intr_disable(c->port, 0);
	peer_tap(ret == 0, "lost: disarm returned %d", ret);
	got = dr_poll(c);
	peer_tap(got == 1, "lost: the packet taken (%u)", got);
	/* The next arm judges; then the queue goes back to polling. */
	ret = rte_eth_dev_rx_intr_enable(c->port, 0);
	peer_tap(ret == 0, "lost: the next arm returned %d", ret);
	ret = rte_eth_dev_rx_intr_disable(c->port, 0);
	peer_tap(ret == 0, "lost: its disarm returned %d", ret);
	dr_read_stats(c->port, &b);
	dr_expect_delta("lost", &a, &b, want);
}

static void
dr_short_race(struct dr_ctx *c)
{
	const uint64_t want[DR_NSTATS] = {
		[DR_RACED] = 1,
	};
	struct dr_stats a, b;
	bool notify = true;
	uint16_t got;
	int ret;

	dr_read_stats(c->port, &a);
	ret = rte_eth_dev_rx_intr_enable(c->port, 0);
	peer_tap(ret == 0, "short_race: arm returned %d", ret);
	if (dr_publish(c, dr_disarm_between, false, &notify) != 0)
		return;
	peer_tap(!notify, "short_race: a disarm right after the arm withdraws the event: no notification");
	got = dr_poll(c);
	peer_tap(got == 1, "short_race: the packet taken (%u)", got);
	/* Arm and disarm once more: nothing left to judge. */
	ret = rte_eth_dev_rx_intr_enable(c->port, 0);
	ret |= rte_eth_dev_rx_intr_disable(c->port, 0);
	peer_tap(ret == 0, "short_race: a last arm and disarm");
	dr_read_stats(c->port, &b);
	dr_expect_delta("short_race", &a, &b, want);
}

int
main(int argc, char **argv)
{
	struct loop_cfg cfg = { .ring = DR_RING, .in_order = true, .rx_intr = true };
	struct dr_ctx c = { .callfd = -1 };
	struct rte_eth_stats st;
	char sock[128], prefix[96];
	struct rte_mempool *mp = NULL;
	struct loop_dev *ld = NULL;
	uint16_t got;
	int ret = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (peer_opts_parse(argc, argv, dr_opts, RTE_DIM(dr_opts)) != 0) {
		peer_opts_usage(stderr, "disarm_race", dr_opts, RTE_DIM(dr_opts));
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
	cfg.event_idx = opts.event_idx;
	mp = rte_pktmbuf_pool_create("dr_pool", DR_POOL, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL) {
		peer_fail("mempool: %s", rte_strerror(rte_errno));
		goto out;
	}
	ld = loop_dev_create("net_vnapi_disarm_race", &cfg, mp);
	if (ld == NULL) {
		peer_fail("loop device");
		goto out;
	}
	c.ld = ld;
	c.port = loop_dev_port(ld);
	if (rte_eth_dev_start(c.port) != 0) {
		peer_fail("port start");
		goto out;
	}
	printf("# %s ring, event idx %s, in order: features 0x%" PRIx64 " negotiated\n",
	       cfg.packed ? "packed" : "split", cfg.event_idx ? "on" : "off",
	       loop_dev_features(ld));
	c.callfd = rte_eth_dev_rx_intr_ctl_q_get_fd(c.port, 0);
	ret = rte_eth_dev_rx_intr_ctl_q(c.port, 0, RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_ADD,
					(void *)(uintptr_t)DR_TAG);
	if (c.callfd < 0 || ret != 0) {
		peer_fail("rx interrupt of queue 0: fd %d, epoll registration %d", c.callfd, ret);
		ret = -1;
		goto out;
	}
	/* The driver polls to start with: its first receive buffers posted. */
	got = dr_poll(&c);
	peer_tap(got == 0, "nothing received before the device sends (%u)", got);

	dr_timeout_race(&c);
	dr_disarm_again(&c);
	dr_lost(&c);
	dr_short_race(&c);

	peer_tap(rte_eth_stats_get(c.port, &st) == 0 && st.ipackets == c.rx_packets &&
		 st.ibytes == c.rx_bytes && c.rx_packets == c.seq &&
		 c.rx_bytes == (uint64_t)c.seq * DR_FRAME_LEN,
		 "port counters: %" PRIu64 " packets, %" PRIu64 " bytes; taken %" PRIu64 ", %" PRIu64
		 " bytes; sent %u of %u bytes", st.ipackets, st.ibytes, c.rx_packets, c.rx_bytes,
		 c.seq, DR_FRAME_LEN);
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
