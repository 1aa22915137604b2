/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_epoll.h>
#include <rte_mbuf.h>

#include "fake_port.h"

/*
 * Handlers never dereference what they get: numbered dummy mbufs, handed
 * out in a cycle (FAKE_MBUFS frames in flight at most), each with the
 * queue it came from and its number there.
 */
#define FAKE_MBUFS 1024
static struct rte_mbuf fake_mbufs[FAKE_MBUFS];
static struct {
	unsigned int queue;
	uint32_t n;
} fake_origin[FAKE_MBUFS];

/* The frames of one rx queue leave in the order they came: count those that do not. */
static void
fake_gone(struct fake_port *fp, struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int i, slot;
	struct fake_queue *q;

	for (i = 0; i < n; i++) {
		if (pkts[i] < &fake_mbufs[0] || pkts[i] >= &fake_mbufs[FAKE_MBUFS])
			continue;   /* not from rx (a script's own array) */
		slot = (unsigned int)(pkts[i] - fake_mbufs);
		q = &fp->q[fake_origin[slot].queue];
		if (fake_origin[slot].n != q->gone)
			fp->out_of_order++;
		q->gone++;
	}
}

struct fake_queue *
fake_find(struct fake_port *fp, uint16_t port, uint16_t queue)
{
	unsigned int i;

	for (i = 0; i < fp->nb; i++)
		if (fp->q[i].port == port && fp->q[i].queue == queue)
			return &fp->q[i];
	return NULL;
}

void
fake_init(struct fake_port *fp, unsigned int nb)
{
	unsigned int i;

	memset(fp, 0, sizeof(*fp));
	fp->nb = nb;
	fp->count_supported = true;
	fp->cleanup_supported = true;
	fp->clock = 1000;
	fp->stop_fd = -1;
	for (i = 0; i < nb; i++) {
		fp->q[i].port = 0;
		fp->q[i].queue = (uint16_t)i;
		fp->q[i].eagain_disarms = true;
	}
}

void
fake_arrive(struct fake_port *fp, unsigned int i, uint32_t n)
{
	fp->q[i].waiting += n;
	if (fp->q[i].armed)
		fp->q[i].signalled = true;
}

static uint16_t
fake_rx_burst(void *arg, uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct fake_port *fp = arg;
	struct fake_queue *q = fake_find(fp, port, queue);
	uint16_t got, i;

	if (q == NULL)
		return 0;
	q->rx_calls++;
	got = (uint16_t)RTE_MIN((uint32_t)n, q->waiting);
	q->waiting -= got;
	for (i = 0; i < got; i++) {
		unsigned int slot = fp->rx_seq++ % FAKE_MBUFS;

		fake_origin[slot].queue = (unsigned int)(q - fp->q);
		fake_origin[slot].n = q->rx_frames++;
		pkts[i] = &fake_mbufs[slot];
	}
	return got;
}

static uint16_t
fake_tx_burst(void *arg, uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct fake_port *fp = arg;
	uint16_t took = (uint16_t)RTE_MIN((uint32_t)n, fp->tx_room);

	fp->tx_calls++;
	fp->tx_room -= took;
	fp->tx_accepted += took;
	fake_gone(fp, pkts, took);
	return took;
}

static void
fake_free_pkts(void *arg, struct rte_mbuf **pkts, unsigned int n)
{
	struct fake_port *fp = arg;

	fp->freed += n;
	fake_gone(fp, pkts, n);
}

static int
fake_intr_enable(void *arg, uint16_t port, uint16_t queue)
{
	struct fake_queue *q = fake_find(arg, port, queue);
	int ret;

	if (q == NULL)
		return -EINVAL;
	q->enables++;
	q->armed = true;
	if (q->arrive_on_enable) {
		/* Lands after the arming store: an eventfd write as well. */
		fake_arrive(arg, (unsigned int)(q - ((struct fake_port *)arg)->q),
			    q->arrive_on_enable);
		q->arrive_on_enable = 0;
	}
	ret = q->enable_ret_once;
	q->enable_ret_once = 0;
	if (ret == -EAGAIN && q->eagain_disarms) {
		q->armed = false;
		q->signalled = false;
	}
	return ret;
}

static int
fake_intr_disable(void *arg, uint16_t port, uint16_t queue)
{
	struct fake_queue *q = fake_find(arg, port, queue);

	if (q == NULL)
		return -EINVAL;
	q->disables++;
	q->armed = false;
	q->signalled = false; /* vnapi reads the eventfd at disarm */
	return 0;
}

static int
fake_rx_queue_count(void *arg, uint16_t port, uint16_t queue)
{
	struct fake_port *fp = arg;
	struct fake_queue *q = fake_find(fp, port, queue);

	if (!fp->count_supported)
		return -ENOTSUP;
	if (q == NULL)
		return -EINVAL;
	q->counts++;
	return (int)q->waiting;
}

static int
fake_tx_done_cleanup(void *arg, uint16_t port, uint16_t queue, uint32_t free_cnt)
{
	struct fake_port *fp = arg;
	uint32_t n;

	fp->cleanup_calls++;
	if (!fp->cleanup_supported)
		return -ENOTSUP;
	n = fp->tx_done;
	if (fp->tx_done_per_cleanup != 0)
		n = RTE_MIN(n, fp->tx_done_per_cleanup);
	fp->tx_done -= n;
	fp->tx_room += n;
	return (int)n;
}

static int
fake_intr_register(void *arg, uint16_t port, uint16_t queue, void *data)
{
	struct fake_queue *q = fake_find(arg, port, queue);

	if (q == NULL)
		return -EINVAL;
	if (q->register_ret != 0)
		return q->register_ret;
	if (q->registered)
		return -EEXIST;
	q->registered = true;
	q->data = data;
	return 0;
}

static int
fake_intr_unregister(void *arg, uint16_t port, uint16_t queue, void *data)
{
	struct fake_queue *q = fake_find(arg, port, queue);

	if (q == NULL || !q->registered || q->data != data)
		return -EINVAL;
	q->registered = false;
	q->unregisters++;
	return 0;
}

static int
fake_fd_register(void *arg, int fd, struct rte_epoll_event *ev)
{
	struct fake_port *fp = arg;

	fp->stop_fd = fd;
	fp->stop_data = ev->epdata.data;
	return 0;
}

static int
fake_fd_unregister(void *arg, int fd, struct rte_epoll_event *ev)
{
	struct fake_port *fp = arg;

	fp->stop_fd = -1;
	return 0;
}

static int
fake_epoll_wait(void *arg, struct rte_epoll_event *ev, int max, int timeout_ms)
{
	struct fake_port *fp = arg;
	unsigned int i;
	int n = 0;

	fp->waits++;
	fp->last_timeout = timeout_ms;
	fp->clock += fp->sleep_cycles;
	if (fp->wait_ret_once != 0) {
		n = fp->wait_ret_once;
		fp->wait_ret_once = 0;
		errno = EINTR;
		return n;
	}
	for (i = 0; i < fp->nb_spurious && n < max; i++) {
		memset(&ev[n], 0, sizeof(ev[n]));
		ev[n++].epdata.data = fp->spurious_data[i];
	}
	fp->nb_spurious = 0;
	for (i = 0; i < fp->nb && n < max; i++) {
		struct fake_queue *q = &fp->q[i];

		if (!q->signalled || !q->registered)
			continue;
		q->signalled = false;
		memset(&ev[n], 0, sizeof(ev[n]));
		ev[n++].epdata.data = q->data;
	}
	return n;
}

static uint64_t
fake_now(void *arg)
{
	struct fake_port *fp = arg;
	uint64_t t = fp->clock;

	fp->clock += fp->tick;
	return t;
}

const struct napi_ops fake_ops = {
	.rx_burst = fake_rx_burst,
	.tx_burst = fake_tx_burst,
	.intr_enable = fake_intr_enable,
	.intr_disable = fake_intr_disable,
	.rx_queue_count = fake_rx_queue_count,
	.tx_done_cleanup = fake_tx_done_cleanup,
	.intr_register = fake_intr_register,
	.intr_unregister = fake_intr_unregister,
	.fd_register = fake_fd_register,
	.fd_unregister = fake_fd_unregister,
	.epoll_wait = fake_epoll_wait,
	.now = fake_now,
	.free_pkts = fake_free_pkts,
};
