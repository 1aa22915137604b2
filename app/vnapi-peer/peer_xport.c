/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "peer_flow.h"
#include "peer_port.h"
#include "peer_util.h"
#include "peer_xport.h"

#define PEER_XPORT_RING  1024
#define PEER_XPORT_FRAME PEER_FLOW_MAX_LEN
#define PEER_XPORT_SOCKBUF (4 << 20)

static uint8_t peer_xport_scratch[PEER_XPORT_FRAME];

static void
peer_xport_zero(struct peer_xport *x, enum peer_xport_kind kind)
{
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->fd = -1;
	x->nb_ports = 1;
	x->nb_queues = 1;
}

int
peer_xport_ethdev(struct peer_xport *x, const char *const *socks, uint16_t nb_socks,
		  uint16_t queues)
{
	char name[32];
	uint16_t i;
	int ret;

	peer_xport_zero(x, PEER_XPORT_ETHDEV);
	if (nb_socks == 0 || nb_socks > PEER_XPORT_MAX_PORTS || queues == 0 ||
	    queues > PEER_XPORT_MAX_QUEUES)
		return -EINVAL;
	x->nb_ports = nb_socks;
	x->nb_queues = queues;
	x->pool = rte_pktmbuf_pool_create("peer_pool",
					  nb_socks * queues * 2 * PEER_XPORT_RING + 8192, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (x->pool == NULL) {
		printf("# mbuf pool: %s\n", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	for (i = 0; i < nb_socks; i++) {
		const struct peer_port_conf c = {
			.nb_queues = queues,
			.nb_desc = PEER_XPORT_RING,
			.quiet = true,
			.rx_pool = x->pool,
		};

		snprintf(name, sizeof(name), "net_vhost%u", i);
		ret = peer_vhost_probe(name, socks[i], queues, &x->port_id[i]);
		if (ret != 0)
			return ret;
		/* net_vhost creates (and listens on) its socket at configure. */
		ret = peer_port_start(x->port_id[i], name, &c);
		if (ret == 0)
			ret = rte_eth_macaddr_get(x->port_id[i], &x->mac[i]);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* A socket transport's buffers: a burst to send, one frame received. */
static int
peer_xport_slab(struct peer_xport *x)
{
	int sz = PEER_XPORT_SOCKBUF;

	x->slab = malloc((size_t)(PEER_XPORT_BURST + 1) * PEER_XPORT_FRAME);
	if (x->slab == NULL)
		return -ENOMEM;
	if (setsockopt(x->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)) != 0 ||
	    setsockopt(x->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) != 0)
		return -errno;
	/* A fixed local address the peer's frames carry as their source. */
	x->mac[0] = (struct rte_ether_addr){ .addr_bytes = { 2, 0, 0, 0, 0, 1 } };
	return 0;
}

static int
peer_xport_sun(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

int
peer_xport_unix(struct peer_xport *x, const char *local, const char *remote)
{
	int ret;

	peer_xport_zero(x, PEER_XPORT_UNIX);
	if (peer_xport_sun(&x->local, local) != 0 || peer_xport_sun(&x->remote, remote) != 0)
		return -ENAMETOOLONG;
	x->remote_len = sizeof(x->remote);
	x->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		return -errno;
	unlink(local); /* a stale socket of an earlier run */
	if (bind(x->fd, (struct sockaddr *)&x->local, sizeof(x->local)) != 0) {
		ret = -errno;
		x->local.sun_path[0] = '\0';
		printf("# bind %s: %s\n", local, strerror(-ret));
		return ret;
	}
	return peer_xport_slab(x);
}

int
peer_xport_packet(struct peer_xport *x, const char *ifname)
{
	struct sockaddr_ll sll;
	int one = 1, ret;

	peer_xport_zero(x, PEER_XPORT_PACKET);
	x->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (x->fd < 0)
		return -errno;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (sll.sll_ifindex == 0 || bind(x->fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		ret = errno != 0 ? -errno : -ENODEV;
		printf("# packet socket on %s: %s\n", ifname, strerror(-ret));
		return ret;
	}
	/* Our own frames are not received back (the type check below covers
	 * a kernel without the option). */
	setsockopt(x->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	return peer_xport_slab(x);
}

int
peer_xport_link_wait(struct peer_xport *x, double timeout, const volatile sig_atomic_t *quit)
{
	double end = peer_now_s() + timeout;
	uint16_t i;
	int ret;

	if (x->kind != PEER_XPORT_ETHDEV)
		return 0;
	for (i = 0; i < x->nb_ports; i++) {
		ret = peer_link_wait(x->port_id[i], true, end - peer_now_s(), quit, NULL, NULL);
		if (ret != 0)
			return ret;
	}
	return 0;
}

int
peer_xport_alloc(struct peer_xport *x, struct peer_xbuf *b, uint16_t n, uint32_t len)
{
	struct rte_mbuf *m[PEER_XPORT_BURST];
	uint16_t i;

	if (n > PEER_XPORT_BURST || len > PEER_XPORT_FRAME)
		return -EINVAL;
	if (x->kind != PEER_XPORT_ETHDEV) {
		for (i = 0; i < n; i++) {
			b[i].data = x->slab + (size_t)i * PEER_XPORT_FRAME;
			b[i].m = NULL;
		}
		return 0;
	}
	if (rte_pktmbuf_alloc_bulk(x->pool, m, n) != 0)
		return -ENOBUFS;
	for (i = 0; i < n; i++) {
		b[i].m = m[i];
		b[i].data = (uint8_t *)rte_pktmbuf_append(m[i], (uint16_t)len);
		if (b[i].data == NULL) { /* longer than one mbuf: not a frame we send */
			rte_pktmbuf_free_bulk(m, n);
			return -EINVAL;
		}
	}
	return 0;
}

/* Send one frame on a socket: 1, or 0 when it was not taken. */
static int
peer_xport_sock_send(struct peer_xport *x, const uint8_t *data, uint32_t len)
{
	ssize_t r;

	if (x->kind == PEER_XPORT_UNIX)
		r = sendto(x->fd, data, len, MSG_DONTWAIT, (struct sockaddr *)&x->remote,
			   x->remote_len);
	else
		r = send(x->fd, data, len, MSG_DONTWAIT);
	if (r == (ssize_t)len)
		return 1;
	if (r < 0 && x->last_errno != errno) {
		x->last_errno = errno;
		printf("# send: %s\n", strerror(errno));
	}
	/* A full queue (the receiver is slow), or a packet socket reporting a
	 * past link change of its interface once: not taken, sent again
	 * later. Anything else is counted. */
	if (r >= 0 || (errno != EAGAIN && errno != ENOBUFS && errno != EINTR &&
		       errno != ENETDOWN))
		x->tx_errors++;
	return 0;
}

uint16_t
peer_xport_tx(struct peer_xport *x, uint16_t port, uint16_t queue, struct peer_xbuf *b,
	      uint16_t n, uint32_t len)
{
	struct rte_mbuf *m[PEER_XPORT_BURST];
	uint16_t i, k = 0;

	if (x->kind == PEER_XPORT_ETHDEV) {
		for (i = 0; i < n; i++)
			m[i] = b[i].m;
		k = rte_eth_tx_burst(x->port_id[port], queue, m, n);
		if (k < n)
			rte_pktmbuf_free_bulk(m + k, n - k);
	} else {
		while (k < n && peer_xport_sock_send(x, b[k].data, len))
			k++;
	}
	x->q_sent[queue] += k;
	return k;
}

static void
peer_xport_swap(uint8_t *frame)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_ether_addr a;

	rte_ether_addr_copy(&eth->dst_addr, &a);
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&a, &eth->src_addr);
}

/* What peer_xport_bursts() calls with each burst of n > 0 packets that
 * queue q of port p received: the callback owns the mbufs. */
typedef void (*peer_xport_burst_fn)(struct peer_xport *x, uint16_t p, uint16_t q,
				    struct rte_mbuf **m, uint16_t n, void *arg);

/* One rx burst from every queue of every ethdev port, each non-empty one
 * handed to fn and counted; returns the packets received. */
static unsigned int
peer_xport_bursts(struct peer_xport *x, peer_xport_burst_fn fn, void *arg)
{
	struct rte_mbuf *m[PEER_XPORT_BURST];
	unsigned int total = 0;
	uint16_t p, q, n;

	for (p = 0; p < x->nb_ports; p++) {
		for (q = 0; q < x->nb_queues; q++) {
			n = rte_eth_rx_burst(x->port_id[p], q, m, PEER_XPORT_BURST);
			if (n == 0)
				continue;
			fn(x, p, q, m, n, arg);
			x->q_back[q] += n;
			total += n;
		}
	}
	return total;
}

struct peer_xport_rx_cb {
	peer_xport_rx_fn fn;
	void *arg;
};

/* peer_xport_rx(): each packet's first bytes to the caller's callback. */
static void
peer_xport_rx_burst(struct peer_xport *x, uint16_t p, uint16_t q, struct rte_mbuf **m,
		    uint16_t n, void *arg)
{
	const struct peer_xport_rx_cb *cb = arg;
	uint64_t t = peer_now_ns();
	const uint8_t *data;
	uint16_t i;

	RTE_SET_USED(x);
	for (i = 0; i < n; i++) {
		uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m[i]), PEER_XPORT_FRAME);

		data = rte_pktmbuf_read(m[i], 0, len, peer_xport_scratch);
		cb->fn(cb->arg, data, len, p, q, t);
	}
	rte_pktmbuf_free_bulk(m, n);
}

unsigned int
peer_xport_rx(struct peer_xport *x, peer_xport_rx_fn fn, void *arg)
{
	struct peer_xport_rx_cb cb = { .fn = fn, .arg = arg };
	unsigned int total = 0;
	struct sockaddr_ll from;
	socklen_t flen;
	uint16_t i;
	ssize_t r;

	if (x->kind != PEER_XPORT_ETHDEV) {
		uint8_t *buf = x->slab + (size_t)PEER_XPORT_BURST * PEER_XPORT_FRAME;

		for (i = 0; i < PEER_XPORT_BURST; i++) {
			flen = sizeof(from);
			r = recvfrom(x->fd, buf, PEER_XPORT_FRAME, MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &flen);
			if (r < 0) {
				if (errno == ENETDOWN || errno == EINTR)
					continue; /* reported once after a link change */
				break;
			}
			if (x->kind == PEER_XPORT_PACKET && from.sll_pkttype == PACKET_OUTGOING)
				continue;
			x->q_back[0]++;
			total++;
			fn(arg, buf, (uint32_t)RTE_MIN(r, (ssize_t)PEER_XPORT_FRAME), 0, 0,
			   peer_now_ns());
		}
		return total;
	}
	return peer_xport_bursts(x, peer_xport_rx_burst, &cb);
}

/* peer_xport_reflect(): each frame back out of the queue it came in on,
 * its addresses swapped; arg counts the packets sent. */
static void
peer_xport_reflect_burst(struct peer_xport *x, uint16_t p, uint16_t q, struct rte_mbuf **m,
			 uint16_t n, void *arg)
{
	uint64_t *tx = arg;
	uint16_t i, k;

	for (i = 0; i < n; i++)
		if (rte_pktmbuf_data_len(m[i]) >= sizeof(struct rte_ether_hdr))
			peer_xport_swap(rte_pktmbuf_mtod(m[i], uint8_t *));
	k = rte_eth_tx_burst(x->port_id[p], q, m, n);
	if (k < n)
		rte_pktmbuf_free_bulk(m + k, n - k);
	x->q_sent[q] += k;
	*tx += k;
}

unsigned int
peer_xport_reflect(struct peer_xport *x, uint64_t *tx)
{
	unsigned int total = 0;
	uint16_t i;
	ssize_t r;

	if (x->kind != PEER_XPORT_ETHDEV) {
		for (i = 0; i < PEER_XPORT_BURST; i++) {
			r = recv(x->fd, x->slab, PEER_XPORT_FRAME, MSG_DONTWAIT);
			if (r < (ssize_t)sizeof(struct rte_ether_hdr))
				break;
			total++;
			x->q_back[0]++;
			peer_xport_swap(x->slab);
			if (peer_xport_sock_send(x, x->slab, (uint32_t)r)) {
				(*tx)++;
				x->q_sent[0]++;
			}
		}
		return total;
	}
	return peer_xport_bursts(x, peer_xport_reflect_burst, tx);
}

int
peer_xport_idle(struct peer_xport *x, uint64_t until_ns, int extra_fd)
{
	struct pollfd pfd[2];
	struct timespec ts;
	uint64_t now = peer_now_ns(), left;
	nfds_t n = 0;
	int i;

	if (x->fd >= 0) {
		pfd[n].fd = x->fd;
		pfd[n++].events = POLLIN;
	}
	if (extra_fd >= 0) {
		pfd[n].fd = extra_fd;
		pfd[n++].events = POLLIN;
	}
	if (n == 0)
		return 0;
	/* ethdev: only a look at the extra descriptor, the caller polls the ports. */
	left = x->fd >= 0 && until_ns > now ? until_ns - now : 0;
	ts.tv_sec = (time_t)(left / 1000000000u);
	ts.tv_nsec = (long)(left % 1000000000u);
	if (ppoll(pfd, n, &ts, NULL) <= 0)
		return 0;
	for (i = 0; i < (int)n; i++)
		if (pfd[i].fd == extra_fd && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			return 1;
	return 0;
}

void
peer_xport_close(struct peer_xport *x)
{
	char name[32];
	bool probed;
	uint16_t i;

	if (x->kind == PEER_XPORT_ETHDEV) {
		for (i = 0; i < x->nb_ports; i++) {
			snprintf(name, sizeof(name), "net_vhost%u", i);
			probed = rte_eth_dev_get_port_by_name(name, &x->port_id[i]) == 0;
			peer_port_remove(name, &x->port_id[i], &probed);
		}
		rte_mempool_free(x->pool);
		x->pool = NULL;
		return;
	}
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	if (x->kind == PEER_XPORT_UNIX && x->local.sun_path[0] != '\0')
		unlink(x->local.sun_path);
	free(x->slab);
	x->slab = NULL;
}
