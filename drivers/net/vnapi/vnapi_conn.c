/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The connection state machine (doc/design.md, "Connection"): DOWN (no back
 * end; client: a reconnection alarm with a bounded backoff; server: the
 * listening socket watched) and UP (negotiated; the connection watched;
 * the rings served when the port is started). Every transition happens
 * under proc->lock, either in a handler of the EAL interrupt thread or in
 * an ethdev op that quiesced the handlers first.
 */

#include <errno.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_common.h>
#include <rte_interrupts.h>
#include <rte_pause.h>

#include <ethdev_driver.h>

#include "vnapi_backend.h"
#include "vnapi_conn.h"
#include "vnapi_dev.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_rxtx.h"
#include "vnapi_transport.h"

/** First reconnection delay (client); doubles up to reconnect_ms. */
#define VNAPI_BACKOFF_MIN_MS   50
/** Retry delay after an unexpected accept() failure (server). */
#define VNAPI_ACCEPT_RETRY_MS  1000
/** Sleep between two looks at a busy gate or a running handler. */
#define VNAPI_WAIT_NS          20000

static void vnapi_conn_sock_cb(void *arg);
static void vnapi_conn_listen_cb(void *arg);
static void vnapi_conn_alarm_cb(void *arg);

static uint64_t
vnapi_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
vnapi_short_sleep(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = VNAPI_WAIT_NS };

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------- gates */

/* 1: the process is registered for the expedited membarrier; -1: not
 * available (then MEMBARRIER_CMD_GLOBAL). Set at probe. */
static int vnapi_membarrier_mode;

static void
vnapi_membarrier_register(void)
{
	int mode;

	if (__atomic_load_n(&vnapi_membarrier_mode, __ATOMIC_RELAXED) != 0)
		return;
	mode = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0 ?
	       1 : -1;
	__atomic_store_n(&vnapi_membarrier_mode, mode, __ATOMIC_RELAXED);
}

/* A full barrier on every running thread of the process (vnapi_gate.h). */
static void
vnapi_membarrier(void)
{
	if (__atomic_load_n(&vnapi_membarrier_mode, __ATOMIC_RELAXED) == 1 &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0)
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0) != 0)
		VNAPI_LOG(ERR, "membarrier: %s; a burst may overlap a ring reset",
			  strerror(errno));
}

void
vnapi_gate_init_closed(struct vnapi_gate *g)
{
	g->busy = 0;
	g->off = 1;
}

static void
vnapi_gate_wait(const struct vnapi_gate *g)
{
	unsigned int spins = 0;

	/* Acquire: the burst's ring accesses before we touch the ring. A
	 * burst is short, but its lcore may be preempted: sleep, no spin. */
	while (__atomic_load_n(&g->busy, __ATOMIC_ACQUIRE)) {
		if (++spins < 64)
			rte_pause();
		else
			vnapi_short_sleep();
	}
}

/* Every set-up queue's gate, rx then tx; returns how many (at most @p max). */
static unsigned int
vnapi_gates(struct rte_eth_dev *dev, struct vnapi_gate **gates, unsigned int max)
{
	unsigned int n = 0;
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues && n < max; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			gates[n++] = &rxq->gate;
	}
	for (q = 0; q < dev->data->nb_tx_queues && n < max; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			gates[n++] = &txq->gate;
	}
	return n;
}

void
vnapi_gates_close(struct rte_eth_dev *dev)
{
	struct vnapi_gate *gates[2 * VNAPI_MAX_QUEUE_PAIRS]; /* configure caps the queues */
	unsigned int i, n = vnapi_gates(dev, gates, RTE_DIM(gates));

	for (i = 0; i < n; i++)
		__atomic_store_n(&gates[i]->off, 1, __ATOMIC_RELAXED);
	/* off = 1 before the loads of busy, on every lcore's side too. */
	vnapi_membarrier();
	for (i = 0; i < n; i++)
		vnapi_gate_wait(gates[i]);
}

static void
vnapi_gates_open(struct rte_eth_dev *dev)
{
	struct vnapi_gate *gates[2 * VNAPI_MAX_QUEUE_PAIRS]; /* configure caps the queues */
	unsigned int i, n = vnapi_gates(dev, gates, RTE_DIM(gates));

	/* Release: the rings laid out and handed over before a burst may run. */
	for (i = 0; i < n; i++)
		__atomic_store_n(&gates[i]->off, 0, __ATOMIC_RELEASE);
}

/* An lcore asleep on an rx queue's call eventfd armed nothing while the
 * gate was closed: wake it, it polls the restarted ring and re-arms. */
static void
vnapi_conn_wake_rx(struct rte_eth_dev *dev)
{
	const struct vnapi_proc *proc = dev->process_private;
	uint64_t one = 1;
	uint16_t q;

	if (!dev->data->dev_conf.intr_conf.rxq)
		return;
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		if (proc->callfd[2 * q] >= 0 &&
		    write(proc->callfd[2 * q], &one, sizeof(one)) != sizeof(one))
			VNAPI_LOG(WARNING, "%s: rx queue %u: cannot signal the call eventfd",
				  dev->data->name, q);
}

/* --------------------------------------------------------- handlers */

static int
vnapi_conn_watch(struct rte_intr_handle **h, int fd, rte_intr_callback_fn cb,
		 struct rte_eth_dev *dev)
{
	int ret;

	if (*h == NULL) {
		*h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
		if (*h == NULL)
			return -ENOMEM;
	}
	if (rte_intr_fd_set(*h, fd) != 0 || rte_intr_type_set(*h, RTE_INTR_HANDLE_EXT) != 0)
		return -rte_errno;
	ret = rte_intr_callback_register(*h, cb, dev);
	if (ret != 0)
		VNAPI_LOG(ERR, "%s: cannot watch fd %d in the interrupt thread: %s",
			  dev->data->name, fd, strerror(-ret));
	return ret;
}

/* Unregister @p cb, waiting for a running call (never from inside it). */
static void
vnapi_conn_unwatch(struct rte_intr_handle *h, rte_intr_callback_fn cb, struct rte_eth_dev *dev)
{
	if (h == NULL)
		return;
	if (rte_thread_is_intr()) {
		/* An op called from a callback (e.g. an LSC handler): nothing else
		 * runs in this thread; a running one is removed when it returns. */
		if (rte_intr_callback_unregister(h, cb, dev) == -EAGAIN)
			rte_intr_callback_unregister_pending(h, cb, dev, NULL);
		return;
	}
	while (rte_intr_callback_unregister(h, cb, dev) == -EAGAIN)
		vnapi_short_sleep();
}

/* Under the lock, not quiesced: arm what the state calls for. */
static void
vnapi_conn_arm(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	const struct vnapi_transport_ops *ops = proc->ops;
	int fd;

	if (vnapi_connected(hw) && !proc->sock_watched) {
		fd = ops->event_fd(dev);
		if (fd >= 0 && vnapi_conn_watch(&proc->sock_intr, fd, vnapi_conn_sock_cb, dev) == 0)
			proc->sock_watched = true;
	}
	if (hw->params.server) {
		fd = ops->listen_fd(dev);
		if (fd >= 0 && !proc->listen_watched && !proc->alarm_set &&
		    vnapi_conn_watch(&proc->listen_intr, fd, vnapi_conn_listen_cb, dev) == 0)
			proc->listen_watched = true;
	} else if (!vnapi_connected(hw) && hw->params.reconnect_ms > 0 && !proc->alarm_set) {
		if (rte_eal_alarm_set((uint64_t)proc->backoff_ms * 1000, vnapi_conn_alarm_cb,
				      dev) == 0)
			proc->alarm_set = true;
		else
			VNAPI_LOG(ERR, "%s: cannot set the reconnection alarm", dev->data->name);
	}
}

/*
 * Under the lock: the back end is gone (or broke the protocol). Take the
 * rings from the datapath, drop the connection, reclaim every buffer and
 * lay the rings out anew, link down. The caller stopped watching the
 * connection. @return true if the link went down (an LSC event is due).
 */
static bool
vnapi_conn_lost(struct rte_eth_dev *dev, const char *why)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	bool was = vnapi_connected(hw);

	vnapi_connected_set(hw, false);
	vnapi_gates_close(dev);
	proc->ops->disconnect(dev);
	if (hw->started)
		vnapi_backend_flush(dev);
	if (was) {
		proc->down_since_ms = vnapi_now_ms();
		proc->backoff_ms = VNAPI_BACKOFF_MIN_MS;
		if (hw->params.server)
			VNAPI_LOG(ERR, "%s: %s at %s: link down; waiting for a back end to connect",
				  dev->data->name, why, hw->params.path);
		else if (hw->params.reconnect_ms > 0)
			VNAPI_LOG(ERR, "%s: %s at %s: link down; reconnecting (every %u ms at most)",
				  dev->data->name, why, hw->params.path, hw->params.reconnect_ms);
		else
			VNAPI_LOG(ERR, "%s: %s at %s: link down; reconnect_ms=0: reset the port once it is back",
				  dev->data->name, why, hw->params.path);
	}
	return vnapi_link_state_set(dev, false);
}

/*
 * Under the lock: connect (client; server: the accepted connection) and
 * negotiate; if the port is started, hand the rings over, open the gates,
 * wake rx sleepers, link up. @p lsc is set if the link came up.
 */
static int
vnapi_conn_up(struct rte_eth_dev *dev, unsigned int wait_ms, bool *lsc)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	int ret;

	*lsc = false;
	ret = vnapi_backend_connect(dev, wait_ms);
	if (ret != 0)
		return ret;
	if (hw->started) {
		ret = vnapi_backend_start(dev);
		if (ret != 0) {
			proc->ops->disconnect(dev);
			vnapi_connected_set(hw, false);
			return ret;
		}
		vnapi_gates_open(dev);
		vnapi_conn_wake_rx(dev);
		*lsc = vnapi_link_state_set(dev, true);
	}
	if (proc->down_since_ms != 0) {
		hw->reconnects++;
		VNAPI_LOG(NOTICE, "%s: the back end at %s is back after %" PRIu64 " ms%s",
			  dev->data->name, hw->params.path, vnapi_now_ms() - proc->down_since_ms,
			  hw->started ? ": rings restarted, link up" : "");
		proc->down_since_ms = 0;
	}
	proc->backoff_ms = VNAPI_BACKOFF_MIN_MS;
	return 0;
}

static void
vnapi_conn_lsc(struct rte_eth_dev *dev, bool lsc)
{
	/* Outside the lock: the application's callback may call ethdev ops. */
	if (lsc)
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

/* The connection is readable: a close, or bytes the back end may not send. */
static void
vnapi_conn_sock_cb(void *arg)
{
	struct rte_eth_dev *dev = arg;
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	bool lsc = false;
	int ret = 0;

	pthread_mutex_lock(&proc->lock);
	if (proc->quiesce == 0) {
		ret = proc->ops->poll(dev);
		if (ret == 0) {
			pthread_mutex_unlock(&proc->lock);
			return; /* nothing was pending: not readable any more */
		}
	}
	/* Quiesced (an op runs) or lost: stop watching; the fd stays readable. */
	rte_intr_callback_unregister_pending(proc->sock_intr, vnapi_conn_sock_cb, arg, NULL);
	proc->sock_watched = false;
	if (proc->quiesce == 0) {
		if (ret == -EPROTO)
			hw->ctrl_violations++;
		lsc = vnapi_conn_lost(dev, ret == -EPROTO ?
				      "protocol violation by the vhost-user back end" :
				      "vhost-user back end went away");
		vnapi_conn_arm(dev);
	}
	pthread_mutex_unlock(&proc->lock);
	vnapi_conn_lsc(dev, lsc);
}

/* Server: a back end is connecting. */
static void
vnapi_conn_listen_cb(void *arg)
{
	struct rte_eth_dev *dev = arg;
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	bool lsc_down = false, lsc_up = false;
	int ret;

	pthread_mutex_lock(&proc->lock);
	if (proc->quiesce != 0) {
		rte_intr_callback_unregister_pending(proc->listen_intr, vnapi_conn_listen_cb, arg,
						     NULL);
		proc->listen_watched = false;
		pthread_mutex_unlock(&proc->lock);
		return;
	}
	/* A restarted back end may connect before we saw the old one close. */
	if (vnapi_connected(hw)) {
		ret = proc->ops->poll(dev);
		if (ret != 0) {
			if (proc->sock_watched)
				rte_intr_callback_unregister(proc->sock_intr, vnapi_conn_sock_cb, dev);
			proc->sock_watched = false;
			if (ret == -EPROTO)
				hw->ctrl_violations++;
			lsc_down = vnapi_conn_lost(dev, ret == -EPROTO ?
					"protocol violation by the vhost-user back end" :
					"vhost-user back end went away");
		}
	}
	ret = proc->ops->accept(dev);
	if (ret == 0) {
		ret = vnapi_conn_up(dev, 0, &lsc_up);
		if (ret != 0)
			VNAPI_LOG(ERR, "%s: the back end that connected to %s was refused (%s); waiting for another",
				  dev->data->name, hw->params.path, strerror(-ret));
	} else if (ret != -EAGAIN && ret != -EBUSY) {
		/* E.g. out of fds: the socket stays readable, so look again later
		 * instead of spinning. */
		VNAPI_LOG(ERR, "%s: accept on %s: %s; retrying in %u ms", dev->data->name,
			  hw->params.path, strerror(-ret), VNAPI_ACCEPT_RETRY_MS);
		rte_intr_callback_unregister_pending(proc->listen_intr, vnapi_conn_listen_cb, arg,
						     NULL);
		proc->listen_watched = false;
		if (rte_eal_alarm_set(VNAPI_ACCEPT_RETRY_MS * 1000, vnapi_conn_alarm_cb, dev) == 0)
			proc->alarm_set = true;
	}
	vnapi_conn_arm(dev);
	pthread_mutex_unlock(&proc->lock);
	vnapi_conn_lsc(dev, lsc_down);
	vnapi_conn_lsc(dev, lsc_up);
}

/* Client: try to reconnect (server: re-arm the listening socket). */
static void
vnapi_conn_alarm_cb(void *arg)
{
	struct rte_eth_dev *dev = arg;
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	bool lsc = false;
	int ret;

	pthread_mutex_lock(&proc->lock);
	proc->alarm_set = false;
	if (proc->quiesce != 0) {
		pthread_mutex_unlock(&proc->lock);
		return;
	}
	if (!hw->params.server && !vnapi_connected(hw)) {
		ret = vnapi_conn_up(dev, 0, &lsc);
		if (ret != 0)
			proc->backoff_ms = RTE_MIN(proc->backoff_ms * 2, hw->params.reconnect_ms);
	}
	vnapi_conn_arm(dev);
	pthread_mutex_unlock(&proc->lock);
	vnapi_conn_lsc(dev, lsc);
}

/* ------------------------------------------------------- ethdev side */

int
vnapi_conn_probe(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	int ret;

	vnapi_membarrier_register();
	pthread_mutex_init(&proc->lock, NULL);
	proc->listen_fd = -1;
	proc->backoff_ms = VNAPI_BACKOFF_MIN_MS;
	if (hw->params.server) {
		ret = proc->ops->listen(dev);
		if (ret != 0)
			return ret;
		vnapi_backend_assume(dev);
	} else {
		ret = vnapi_backend_connect(dev, VNAPI_CONNECT_TIMEOUT_MS);
		if (ret != 0)
			return ret;
	}
	pthread_mutex_lock(&proc->lock);
	vnapi_conn_arm(dev);
	pthread_mutex_unlock(&proc->lock);
	return 0;
}

void
vnapi_conn_quiesce(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;

	pthread_mutex_lock(&proc->lock);
	proc->quiesce++;
	pthread_mutex_unlock(&proc->lock);
	/* A handler that runs now sees quiesce and does nothing; wait for one
	 * that was already past that check. */
	vnapi_conn_unwatch(proc->sock_intr, vnapi_conn_sock_cb, dev);
	vnapi_conn_unwatch(proc->listen_intr, vnapi_conn_listen_cb, dev);
	rte_eal_alarm_cancel(vnapi_conn_alarm_cb, dev);
	pthread_mutex_lock(&proc->lock);
	proc->sock_watched = false;
	proc->listen_watched = false;
	proc->alarm_set = false;
	pthread_mutex_unlock(&proc->lock);
}

void
vnapi_conn_resume(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	bool lsc = false;

	pthread_mutex_lock(&proc->lock);
	if (--proc->quiesce == 0) {
		/* A request of the op found the connection broken. */
		if (vnapi_connected(hw) && !proc->ops->is_open(dev))
			lsc = vnapi_conn_lost(dev, "vhost-user back end went away");
		vnapi_conn_arm(dev);
	}
	pthread_mutex_unlock(&proc->lock);
	vnapi_conn_lsc(dev, lsc);
}

int
vnapi_conn_start(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	int ret;

	vnapi_rxtx_select(dev);
	hw->started = true;
	if (!vnapi_connected(hw)) {
		VNAPI_INIT_LOG(NOTICE, "%s: started with no back end at %s: link down until one %s",
			       dev->data->name, hw->params.path,
			       hw->params.server ? "connects" : "is reachable");
		return 0;
	}
	ret = vnapi_backend_start(dev);
	if (ret != 0 && !proc->ops->is_open(dev)) {
		/* It went away during the start: resume() reports the loss, the
		 * next connection starts the rings. */
		return 0;
	}
	if (ret != 0) {
		hw->started = false;
		return ret;
	}
	vnapi_gates_open(dev);
	/* Start and stop are the application's own doing: no LSC event. */
	vnapi_link_state_set(dev, true);
	return 0;
}

void
vnapi_conn_stop(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;

	hw->started = false;
	vnapi_link_state_set(dev, false);
	vnapi_gates_close(dev);
	vnapi_backend_stop(dev);
}

int
vnapi_conn_reset(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	int ret;

	vnapi_backend_disconnect(dev);
	hw->features_fixed = false; /* the application configures anew */
	if (hw->params.server)
		return 0; /* the back end connects again */
	ret = vnapi_backend_connect(dev, VNAPI_CONNECT_TIMEOUT_MS);
	if (ret == -ENOENT || ret == -ECONNREFUSED) {
		if (hw->params.reconnect_ms == 0)
			return ret;
		/* Not there yet: the reconnection goes on after resume(). */
		if (proc->down_since_ms == 0)
			proc->down_since_ms = vnapi_now_ms();
		return 0;
	}
	return ret;
}

void
vnapi_conn_close(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;

	vnapi_backend_disconnect(dev);
	proc->ops->unlisten(dev);
	rte_intr_instance_free(proc->sock_intr);
	proc->sock_intr = NULL;
	rte_intr_instance_free(proc->listen_intr);
	proc->listen_intr = NULL;
}
