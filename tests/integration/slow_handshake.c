/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * A slow vhost-user back end must not hold up the rest of the process:
 * neither the other ports' traffic, interrupts and link events nor their
 * reconnection. One process, one lcore:
 *
 *   port A  net_vhost (server) <---> port 0  net_vnapi, rx interrupts + LSC
 *   slow back end (a thread here) <-> port 1  net_vnapi (client, reconnects)
 *
 * The slow back end answers port 1's probe at once, then drops the
 * connection: port 1 reconnects by itself and the back end, this time,
 * accepts, reads the first request and answers only 4 s later. During those
 * 4 s the test sends packets from port A to port 0, whose rx queue a thread
 * waits on in rx-interrupt mode, then removes port A, which takes port 0's
 * link down (an LSC event), then adds it again: port 0 reconnects (its rx
 * sleeper woken, link up, LSC) and gets packets again. Verdicts (exact, no
 * latency bound): every packet reached port 0 through an interrupt wakeup,
 * each burst's before the slow back end answered; port 0's LSC events (down,
 * then up after its reconnection) were delivered (in EAL's interrupt
 * thread) before it answered; port 1 came back (reconnects = 1);
 * every mbuf back in its pool at the end. A driver that runs the handshake
 * in EAL's interrupt thread delivers the LSC event only after the answer.
 * Then port 1 reconnects to a silent back end once more and is closed
 * meanwhile: the close must not wait for the back end's answer.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "peer_frame.h"
#include "peer_port.h"
#include "peer_tap.h"
#include "peer_util.h"

#define SH_NAME        "slow_handshake"
/* The slow back end's silence: a 2 s stall, plus 2 s of margin for
 * net_vhost (22.11): its removal and its accept of port 0's reconnection
 * each take up to its event thread's 1 s poll timeout (~950 ms each). */
#define SH_DELAY_MS    4000
#define SH_PKTS        32
#define SH_PKT_LEN     128
#define SH_POOL_SIZE   4095
#define SH_WAIT_S      5.0           /* bound of every wait for an event */

/* vhost-user, the few requests a negotiation without a start uses. */
#define VU_GET_FEATURES           1
#define VU_GET_PROTOCOL_FEATURES  15
#define VU_GET_QUEUE_NUM          17
#define VU_FLAGS_REPLY            (0x1 | 0x4)
#define VU_FEATURES               ((1ULL << 32) | (1ULL << 30)) /* VERSION_1, PROTOCOL_FEATURES */

struct vu_hdr {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
}; /* 12 bytes, no padding */

/* The slow back end (its own thread). */
static struct {
	int lfd;
	int stop_fd;      /* eventfd: end the thread */
	int drop_fd;      /* eventfd: close the current connection */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int conns;
	bool slow_next;   /* the next connection's first reply waits SH_DELAY_MS */
	uint64_t t_req;   /* ns: the slow connection's first request read */
	uint64_t t_answer; /* ns: its reply sent */
	pthread_t th;
} be = { .lfd = -1, .stop_fd = -1, .drop_fd = -1,
	 .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* The rx-interrupt waiter on port 0 (its own thread). */
static struct {
	uint16_t port;
	volatile int stop;
	uint64_t wakes;      /* epoll wakeups with the queue's event */
	uint64_t rx_woken;   /* packets read after a wakeup */
	uint64_t rx_unwoken; /* packets read after a refused arm (no wakeup) */
	uint64_t first_wake; /* ns */
	int error;
	pthread_t th;
} rxw;

/* Port 0's LSC events. */
static struct {
	unsigned int n;
	uint64_t t_last;     /* ns */
	bool in_intr_thread;
	bool down;
} lsc;

static void
be_signal(void)
{
	pthread_mutex_lock(&be.mu);
	pthread_cond_broadcast(&be.cv);
	pthread_mutex_unlock(&be.mu);
}

/* Set *t to the time now, under be.mu, and wake the waiters on be.cv. */
static void
be_stamp(uint64_t *t)
{
	pthread_mutex_lock(&be.mu);
	*t = peer_now_ns();
	pthread_cond_broadcast(&be.cv);
	pthread_mutex_unlock(&be.mu);
}

/* Wait for @p fd readable, @p stop / @p drop, or @p ms: 1 fd, 0 timeout, -1 stop/drop. */
static int
be_wait(int fd, int ms)
{
	struct pollfd p[3] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = be.stop_fd, .events = POLLIN },
		{ .fd = be.drop_fd, .events = POLLIN },
	};
	int n = poll(p, 3, ms);

	if (n < 0)
		return errno == EINTR ? 0 : -1;
	if (p[1].revents || p[2].revents)
		return -1;
	return n > 0 ? 1 : 0;
}

/* Read exactly @p len bytes (closing passed fds): 0, or -1 on EOF/stop. */
static int
be_read(int c, void *buf, size_t len)
{
	char ctrl[CMSG_SPACE(sizeof(int) * 8)];
	size_t got = 0;

	while (got < len) {
		struct iovec iov = { .iov_base = (char *)buf + got, .iov_len = len - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };
		struct cmsghdr *cm;
		ssize_t n;

		if (be_wait(c, -1) < 0)
			return -1;
		n = recvmsg(c, &mh, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				int *fds = (int *)CMSG_DATA(cm);
				size_t i, nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				for (i = 0; i < nfd; i++)
					close(fds[i]);
			}
		}
		got += (size_t)n;
	}
	return 0;
}

static void
be_serve(int c, bool slow)
{
	uint8_t payload[512];
	bool first = true;

	for (;;) {
		struct vu_hdr h, rh;
		uint8_t r[sizeof(rh) + sizeof(uint64_t)]; /* header + u64, unpadded */
		uint64_t v;

		if (be_read(c, &h, sizeof(h)) != 0 || h.size > sizeof(payload) ||
		    (h.size > 0 && be_read(c, payload, h.size) != 0))
			return;
		if (first && slow) {
			be_stamp(&be.t_req);
			/* The point of the test: SH_DELAY_MS of silence (ends early
			 * only when the test stops). */
			struct pollfd p = { .fd = be.stop_fd, .events = POLLIN };

			if (poll(&p, 1, SH_DELAY_MS) != 0)
				return;
		}
		if (h.request != VU_GET_FEATURES && h.request != VU_GET_PROTOCOL_FEATURES &&
		    h.request != VU_GET_QUEUE_NUM)
			continue; /* SET_OWNER, SET_PROTOCOL_FEATURES: no reply (no REPLY_ACK) */
		rh.request = h.request;
		rh.flags = VU_FLAGS_REPLY;
		rh.size = sizeof(v);
		v = h.request == VU_GET_FEATURES ? VU_FEATURES :
		    h.request == VU_GET_QUEUE_NUM ? 1 : 0;
		memcpy(r, &rh, sizeof(rh));
		memcpy(r + sizeof(rh), &v, sizeof(v));
		if (send(c, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
			return;
		if (first && slow)
			be_stamp(&be.t_answer);
		first = false;
	}
}

static void *
be_thread(void *arg)
{
	uint64_t v;

	RTE_SET_USED(arg);
	for (;;) {
		int r = be_wait(be.lfd, -1), c;
		bool slow;

		if (r < 0) {
			/* stop, or a drop with no connection open: consume it */
			struct pollfd p = { .fd = be.stop_fd, .events = POLLIN };

			if (poll(&p, 1, 0) != 0)
				return NULL;
			if (read(be.drop_fd, &v, sizeof(v)) < 0)
				return NULL;
			continue;
		}
		c = accept4(be.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		pthread_mutex_lock(&be.mu);
		be.conns++;
		slow = be.slow_next;
		be.slow_next = false;
		pthread_cond_broadcast(&be.cv);
		pthread_mutex_unlock(&be.mu);
		be_serve(c, slow);
		close(c);
		if (read(be.drop_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return NULL;
		be_signal();
	}
}

/* Wait (bounded) until @p cond holds under be.mu. */
#define BE_WAIT_FOR(cond) __extension__ ({				\
	struct timespec ts_;						\
	int rc_ = 0;							\
	clock_gettime(CLOCK_REALTIME, &ts_);				\
	ts_.tv_sec += (time_t)SH_WAIT_S;				\
	pthread_mutex_lock(&be.mu);					\
	while (!(cond) && rc_ == 0)					\
		rc_ = pthread_cond_timedwait(&be.cv, &be.mu, &ts_);	\
	rc_ = (cond) ? 0 : -1;						\
	pthread_mutex_unlock(&be.mu);					\
	rc_; })

/* Drop port 1's connection: its reconnection finds the back end silent for
 * SH_DELAY_MS after the first request, whose time goes to @p t_req.
 * Returns 0, or -1 (reported). */
static int
be_slow_reconnect(uint64_t *t_req)
{
	uint64_t one = 1;

	pthread_mutex_lock(&be.mu);
	be.t_req = 0;
	be.slow_next = true;
	pthread_mutex_unlock(&be.mu);
	if (write(be.drop_fd, &one, sizeof(one)) != sizeof(one)) {
		peer_fail("drop: %s", strerror(errno));
		return -1;
	}
	if (BE_WAIT_FOR(be.t_req != 0) != 0) {
		peer_fail("port 1 did not reconnect to the slow back end within %.0f s", SH_WAIT_S);
		return -1;
	}
	*t_req = be.t_req;
	return 0;
}

static int
be_start(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	be.stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	be.drop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	be.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (be.stop_fd < 0 || be.drop_fd < 0 || be.lfd < 0)
		return -1;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	unlink(path);
	if (bind(be.lfd, (struct sockaddr *)&sun, sizeof(sun)) != 0 || listen(be.lfd, 4) != 0)
		return -1;
	return pthread_create(&be.th, NULL, be_thread, NULL) == 0 ? 0 : -1;
}

static void
be_stop(const char *path)
{
	uint64_t one = 1;

	if (be.stop_fd >= 0 && write(be.stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(be.th, NULL);
	if (be.lfd >= 0)
		close(be.lfd);
	if (be.stop_fd >= 0)
		close(be.stop_fd);
	if (be.drop_fd >= 0)
		close(be.drop_fd);
	unlink(path);
}

static void *
rxw_thread(void *arg)
{
	struct rte_mbuf *m[32];
	struct rte_epoll_event ev;
	uint64_t t_wake = 0;
	int ret, n;

	RTE_SET_USED(arg);
	ret = rte_eth_dev_rx_intr_ctl_q(rxw.port, 0, RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_ADD,
					NULL);
	if (ret != 0) {
		rxw.error = ret;
		return NULL;
	}
	while (!rxw.stop) {
		bool woken;

		ret = rte_eth_dev_rx_intr_enable(rxw.port, 0);
		if (ret == 0) {
			n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, &ev, 1, 50);
			rte_eth_dev_rx_intr_disable(rxw.port, 0);
			if (n <= 0)
				continue;
			woken = true;
			t_wake = peer_now_ns();
			__atomic_fetch_add(&rxw.wakes, 1, __ATOMIC_RELAXED);
		} else {
			woken = false; /* the arm found work (or no back end): read */
		}
		while ((n = rte_eth_rx_burst(rxw.port, 0, m, RTE_DIM(m))) > 0) {
			/* The first wakeup that brought packets. */
			if (woken && rxw.first_wake == 0)
				__atomic_store_n(&rxw.first_wake, t_wake, __ATOMIC_RELEASE);
			__atomic_fetch_add(woken ? &rxw.rx_woken : &rxw.rx_unwoken, (uint64_t)n,
					   __ATOMIC_RELEASE);
			rte_pktmbuf_free_bulk(m, n);
		}
		if (!woken)
			peer_sleep_us(1000); /* a link-down port refuses to arm: no spin */
	}
	rte_eth_dev_rx_intr_ctl_q(rxw.port, 0, RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_DEL, NULL);
	return NULL;
}

static int
on_lsc(uint16_t port, enum rte_eth_event_type type, void *cb_arg, void *ret_param)
{
	struct rte_eth_link link;

	RTE_SET_USED(type);
	RTE_SET_USED(cb_arg);
	RTE_SET_USED(ret_param);
	lsc.in_intr_thread = rte_thread_is_intr();
	lsc.down = rte_eth_link_get_nowait(port, &link) == 0 &&
		   link.link_status == RTE_ETH_LINK_DOWN;
	__atomic_store_n(&lsc.t_last, peer_now_ns(), __ATOMIC_RELEASE);
	__atomic_fetch_add(&lsc.n, 1, __ATOMIC_RELEASE);
	return 0;
}

/* SH_PKTS frames from @p port (net_vhost) to port 0, retried until
 * @p deadline_ns: how many went. */
static unsigned int
send_pkts(uint16_t port, struct rte_mempool *mp, uint16_t id0, uint64_t deadline_ns)
{
	struct peer_udp udp = {
		.src = {{ 0x02, 0, 0, 0, 0, 0xa }}, .dst = {{ 0x02, 0, 0, 0, 0, 0x0 }},
		.ip_src = 0x0a000001, .ip_dst = 0x0a000002, .port_src = 1000, .port_dst = 2000,
		.ttl = 64,
	};
	uint8_t frame[SH_PKT_LEN];
	struct rte_mbuf *m[SH_PKTS];
	unsigned int i, sent;

	for (i = 0; i < SH_PKTS; i++) {
		udp.ip_id = (uint16_t)(id0 + i);
		peer_udp_fill(frame, sizeof(frame), &udp);
		m[i] = peer_mbuf_copy(mp, frame, sizeof(frame), UINT32_MAX);
		if (m[i] == NULL) {
			if (i > 0)
				rte_pktmbuf_free_bulk(m, i);
			return 0;
		}
	}
	for (sent = 0; sent < SH_PKTS && peer_now_ns() < deadline_ns; )
		sent += rte_eth_tx_burst(port, 0, m + sent, SH_PKTS - sent);
	if (sent < SH_PKTS)
		rte_pktmbuf_free_bulk(m + sent, SH_PKTS - sent);
	return sent;
}

/* Poll (1 ms) until *v >= want or @p deadline_ns. */
static bool
wait_u64(const uint64_t *v, uint64_t want, uint64_t deadline_ns)
{
	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < want) {
		if (peer_now_ns() >= deadline_ns)
			return false;
		peer_sleep_us(1000);
	}
	return true;
}

static double
ms_since(uint64_t t, uint64_t t0)
{
	return t == 0 ? -1.0 : ((double)t - (double)t0) / 1e6;
}

/* Probe net_vhost0 on @p sock (port A) and start it; -1 when either
 * failed. @p again names a second probe in the failure. */
static int
port_a_up(const char *sock, const char *again, const struct peer_port_conf *conf,
	  uint16_t *port_a, bool *a_probed)
{
	if (peer_vhost_probe("net_vhost0", sock, 1, port_a) != 0)
		return peer_fail("probe net_vhost0%s", again);
	*a_probed = true;
	return peer_port_start(*port_a, "back end", conf);
}

/* Probe the port @p name with @p devargs; -1 when it failed. */
static int
vnapi_probe(const char *devargs, const char *name, uint16_t *port, bool *probed)
{
	if (rte_dev_probe(devargs) != 0 || rte_eth_dev_get_port_by_name(name, port) != 0)
		return peer_fail("probe %s", devargs);
	*probed = true;
	return 0;
}

int
main(int argc, char **argv)
{
	char sock0[96], sock1[104], prefix[64], args[256];
	uint16_t port_a = RTE_MAX_ETHPORTS, port0 = RTE_MAX_ETHPORTS, port1 = RTE_MAX_ETHPORTS;
	bool a_probed = false, p0_probed = false, p1_probed = false, rxw_up = false;
	struct peer_port_conf conf = { .nb_queues = 1 }, conf_a;
	struct rte_mempool *mp = NULL;
	uint64_t t_req, t_answer, t_sent, t_lsc, t_lsc_up, t_closed, wake, wake2, deadline, reconnects;
	unsigned int sent, sent2, lsc_before;
	bool lsc_down;
	int ret = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	RTE_SET_USED(argc);
	if (peer_run_paths(SH_NAME, sock0, sizeof(sock0), prefix, sizeof(prefix)) != 0) {
		printf("RESULT: FAIL: mkdir %s\n", PEER_RUN_DIR);
		return 1;
	}
	snprintf(sock1, sizeof(sock1), "%s/%s_slow.sock", PEER_RUN_DIR, SH_NAME);
	if (peer_eal_init(argv[0], prefix, "pmd.net.vnapi*:info", NULL, 0) < 0) {
		printf("RESULT: FAIL: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = rte_pktmbuf_pool_create("sh_pool", SH_POOL_SIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL) {
		peer_fail("mempool: %s", rte_strerror(rte_errno));
		goto out;
	}
	conf.rx_pool = mp;
	if (be_start(sock1) != 0) {
		peer_fail("slow back end on %s: %s", sock1, strerror(errno));
		goto out;
	}

	/* Port A (net_vhost) and port 0 (net_vnapi, rx interrupts, LSC). */
	/* net_vhost listens from its start on. */
	if (port_a_up(sock0, "", &conf, &port_a, &a_probed) != 0)
		goto out;
	snprintf(args, sizeof(args), "net_vnapi0,path=%s", sock0);
	if (vnapi_probe(args, "net_vnapi0", &port0, &p0_probed) != 0)
		goto out;
	/* Port 1: client of the slow back end, answered at once this time. */
	snprintf(args, sizeof(args), "net_vnapi1,path=%s,reconnect_ms=100", sock1);
	if (vnapi_probe(args, "net_vnapi1", &port1, &p1_probed) != 0)
		goto out;
	conf_a = conf;
	conf_a.quiet = true;
	conf.lsc = true;
	conf.rxq_intr = true;
	rte_eth_dev_callback_register(port0, RTE_ETH_EVENT_INTR_LSC, on_lsc, NULL);
	if (peer_port_start(port0, "port 0", &conf) != 0)
		goto out;
	if (peer_link_wait(port0, true, SH_WAIT_S, NULL, NULL, NULL) != 0) {
		peer_fail("port 0: link not up within %.0f s", SH_WAIT_S);
		goto out;
	}
	rxw.port = port0;
	if (pthread_create(&rxw.th, NULL, rxw_thread, NULL) != 0) {
		peer_fail("rx waiter thread");
		goto out;
	}
	rxw_up = true;

	/* The slow handshake: drop port 1's connection; its reconnection
	 * finds the back end silent for SH_DELAY_MS after the first request. */
	if (be_slow_reconnect(&t_req) != 0)
		goto out;
	printf("# port 1 reconnected; the slow back end read its first request and stays silent %u ms\n",
	       SH_DELAY_MS);

	/* During the silence: SH_PKTS packets A -> port 0. */
	deadline = peer_now_ns() + (uint64_t)(SH_WAIT_S * 1e9);
	sent = send_pkts(port_a, mp, 0, deadline);
	t_sent = peer_now_ns();
	wait_u64(&rxw.rx_woken, SH_PKTS, deadline);
	wake = __atomic_load_n(&rxw.first_wake, __ATOMIC_ACQUIRE);

	/* Then an LSC on port 0: its back end goes away. */
	lsc_before = __atomic_load_n(&lsc.n, __ATOMIC_ACQUIRE);
	ret = peer_port_remove("net_vhost0", &port_a, &a_probed);
	if (ret != 0)
		peer_fail("remove net_vhost0: %d", ret);
	deadline = peer_now_ns() + (uint64_t)(SH_WAIT_S * 1e9);
	while (__atomic_load_n(&lsc.n, __ATOMIC_ACQUIRE) == lsc_before && peer_now_ns() < deadline)
		peer_sleep_us(1000);
	t_lsc = __atomic_load_n(&lsc.n, __ATOMIC_ACQUIRE) != lsc_before ?
		__atomic_load_n(&lsc.t_last, __ATOMIC_ACQUIRE) : 0;
	lsc_down = lsc.down;

	/* And back: port 0 reconnects, its rings restart, its rx sleeper is
	 * woken and armed again, link up; then SH_PKTS packets more. */
	lsc_before = __atomic_load_n(&lsc.n, __ATOMIC_ACQUIRE);
	if (port_a_up(sock0, " again", &conf_a, &port_a, &a_probed) != 0)
		goto out;
	deadline = peer_now_ns() + (uint64_t)(SH_WAIT_S * 1e9);
	while ((__atomic_load_n(&lsc.n, __ATOMIC_ACQUIRE) == lsc_before || lsc.down) &&
	       peer_now_ns() < deadline)
		peer_sleep_us(1000);
	t_lsc_up = __atomic_load_n(&lsc.n, __ATOMIC_ACQUIRE) != lsc_before && !lsc.down ?
		   __atomic_load_n(&lsc.t_last, __ATOMIC_ACQUIRE) : 0;
	__atomic_store_n(&rxw.first_wake, 0, __ATOMIC_RELEASE);
	deadline = peer_now_ns() + (uint64_t)(SH_WAIT_S * 1e9);
	sent2 = send_pkts(port_a, mp, SH_PKTS, deadline);
	wait_u64(&rxw.rx_woken, 2 * SH_PKTS, deadline);
	wake2 = __atomic_load_n(&rxw.first_wake, __ATOMIC_ACQUIRE);

	if (BE_WAIT_FOR(be.t_answer != 0) != 0)
		peer_fail("the slow back end never answered");
	t_answer = be.t_answer;
	deadline = peer_now_ns() + (uint64_t)(SH_WAIT_S * 1e9);
	while ((reconnects = peer_xstat(port1, "reconnects")) < 1 && peer_now_ns() < deadline)
		peer_sleep_us(1000);

	printf("# times from the slow back end's first request (ms): packets sent %.1f, rx wakeup %.1f, port 0 LSC down %.1f, LSC up %.1f, rx wakeup after the reconnection %.1f, slow answer %.1f\n",
	       ms_since(t_sent, t_req), ms_since(wake, t_req), ms_since(t_lsc, t_req),
	       ms_since(t_lsc_up, t_req), ms_since(wake2, t_req), ms_since(t_answer, t_req));
	printf("# port 0: %" PRIu64 " wakeups, %" PRIu64 " packets after a wakeup, %" PRIu64 " without; LSC events %u (link %s, %s)\n",
	       rxw.wakes, rxw.rx_woken, rxw.rx_unwoken, lsc.n, lsc.down ? "down" : "up",
	       lsc.in_intr_thread ? "EAL interrupt thread" : "another thread");
	peer_tap(t_answer >= t_req + (uint64_t)SH_DELAY_MS * 1000000,
		 "the slow back end stayed silent %u ms during port 1's handshake", SH_DELAY_MS);
	peer_tap(sent == SH_PKTS && sent2 == SH_PKTS, "back end sent %u+%u/%u packets to port 0",
		 sent, sent2, 2 * SH_PKTS);
	peer_tap(rxw.rx_woken == 2 * SH_PKTS && rxw.rx_unwoken == 0,
		 "port 0 received every packet through an rx interrupt wakeup (%" PRIu64 "/%u, %" PRIu64 " without)",
		 rxw.rx_woken, 2 * SH_PKTS, rxw.rx_unwoken);
	peer_tap(wake != 0 && wake < t_answer,
		 "port 0's rx wakeup came during the slow handshake (at %.1f ms, answer at %.1f ms)",
		 ms_since(wake, t_req), ms_since(t_answer, t_req));
	peer_tap(t_lsc != 0 && t_lsc < t_answer && lsc_down,
		 "port 0's link-down LSC was delivered during the slow handshake (at %.1f ms, answer at %.1f ms)",
		 ms_since(t_lsc, t_req), ms_since(t_answer, t_req));
	peer_tap(t_lsc_up != 0 && t_lsc_up < t_answer,
		 "port 0 reconnected, link-up LSC delivered, during the slow handshake (at %.1f ms, answer at %.1f ms)",
		 ms_since(t_lsc_up, t_req), ms_since(t_answer, t_req));
	peer_tap(wake2 != 0 && wake2 < t_answer,
		 "port 0's rx wakeup after its reconnection came during the slow handshake (at %.1f ms, answer at %.1f ms)",
		 ms_since(wake2, t_req), ms_since(t_answer, t_req));
	peer_tap(lsc.in_intr_thread, "the LSC callback ran in EAL's interrupt thread");
	peer_tap(reconnects == 1, "port 1 came back after the slow handshake (reconnects %" PRIu64 ")",
		 reconnects);

	/* An ethdev op during a slow handshake cuts it short instead of
	 * waiting for the back end: close port 1 while it is silent again. */
	if (be_slow_reconnect(&t_req) != 0)
		goto out;
	ret = peer_port_remove("net_vnapi1", &port1, &p1_probed);
	t_closed = peer_now_ns();
	printf("# second slow handshake: port 1 closed and removed %.1f ms after the back end read its first request\n",
	       ms_since(t_closed, t_req));
	peer_tap(ret == 0 && t_closed < t_req + (uint64_t)SH_DELAY_MS * 1000000,
		 "closing port 1 during a slow handshake did not wait for the back end (%.1f ms < %u ms; ret %d)",
		 ms_since(t_closed, t_req), SH_DELAY_MS, ret);
	ret = 0;

out:
	if (rxw_up) {
		rxw.stop = 1;
		pthread_join(rxw.th, NULL);
		if (rxw.error != 0)
			peer_fail("rx waiter: rx_intr_ctl_q: %d", rxw.error);
	}
	/* Stop, close and removal of what is left: each must succeed. */
	if (peer_port_remove("net_vnapi0", &port0, &p0_probed) != 0)
		ret = peer_fail("net_vnapi0: stop, close or removal at exit failed (see above)");
	if (peer_port_remove("net_vnapi1", &port1, &p1_probed) != 0)
		ret = peer_fail("net_vnapi1: stop, close or removal at exit failed (see above)");
	if (peer_port_remove("net_vhost0", &port_a, &a_probed) != 0)
		ret = peer_fail("net_vhost0: stop, close or removal at exit failed (see above)");
	be_stop(sock1);
	if (mp != NULL) {
		peer_tap(rte_mempool_in_use_count(mp) == 0,
			 "every mbuf back in the pool (%u in use)", rte_mempool_in_use_count(mp));
		rte_mempool_free(mp);
	}
	rte_eal_cleanup();
	unlink(sock0);
	return peer_tap_finish(ret);
}
