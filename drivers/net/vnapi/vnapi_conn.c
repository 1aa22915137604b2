/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The connection state machine (doc/design.md, "Connection"): DOWN (no back
 * end; client: a reconnection deadline with a bounded backoff; server: the
 * listening socket watched) and UP (negotiated; the session's connection
 * watched, and the device's configuration interrupt where it has one; the
 * rings served when the port is started). Every transition happens under
 * proc->lock, either in the port's connection thread or in an ethdev op
 * that quiesced it first. A device with no session (virtio-pci) is UP
 * from probe to remove: only its configuration interrupt is watched.
 *
 * The connection thread (one plain pthread per port of the primary
 * process, not an EAL control thread: its API differs across 22.11..25.11)
 * waits in poll() on what the state calls for and runs the handshake with
 * the back end, which may take seconds with a slow one: EAL's interrupt
 * thread never waits on a peer. It runs no application code: LSC events
 * go to EAL's interrupt thread through an alarm.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np, pthread_timedjoin_np */
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_common.h>
#include <rte_pause.h>

#include <ethdev_driver.h>

#include "vnapi_backend.h"
#include "vnapi_conn.h"
#include "vnapi_dev.h"
#include "vnapi_gate.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_rxtx.h"
#include "vnapi_time.h"
#include "vnapi_transport.h"

/** First reconnection delay (client); doubles up to reconnect_ms. */
#define VNAPI_BACKOFF_MIN_MS   50
/** Retry delay after an unexpected accept() failure (server). */
#define VNAPI_ACCEPT_RETRY_MS  1000
/** Sleep between two looks at a busy gate or a running handler. */
#define VNAPI_WAIT_NS          20000

/* How long close() waits for the connection thread to see conn_exit
 * (it is cancelled out of a handshake; a bound against a bug only). */
#define VNAPI_CONN_JOIN_MS     10000

static void
vnapi_short_sleep(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = VNAPI_WAIT_NS };

	nanosleep(&ts, NULL);
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

static uint32_t
vnapi_conn_quiesced(const struct vnapi_proc *proc)
{
	return __atomic_load_n(&proc->quiesce, __ATOMIC_SEQ_CST);
}

/* Make the connection thread look at the state again. */
static void
vnapi_conn_kick(const struct vnapi_proc *proc)
{
	uint64_t one = 1;

	if (proc->conn_wake_fd >= 0 &&
	    write(proc->conn_wake_fd, &one, sizeof(one)) != sizeof(one) && errno != EAGAIN)
		VNAPI_LOG(ERR, "cannot wake the connection thread: %s", strerror(errno));
}

static void
vnapi_eventfd_drain(int fd)
{
	uint64_t v;

	if (fd >= 0 && read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		VNAPI_LOG(ERR, "eventfd %d: %s", fd, strerror(errno));
}

/* Under the lock, not quiesced: arm what the state calls for (the
 * connection thread polls what is armed). */
static void
vnapi_conn_arm(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	const struct vnapi_session_ops *session = proc->session;
	const struct vnapi_device_ops *ops = proc->ops;

	if (vnapi_connected(hw) && session != NULL && session->event_fd(dev) >= 0)
		proc->sock_watched = true;
	if (vnapi_connected(hw) && ops->config_fd != NULL && ops->config_fd(dev) >= 0)
		proc->config_watched = true;
	if (hw->params.server) {
		if (session->listen_fd(dev) >= 0 && proc->alarm_at_ms == 0)
			proc->listen_watched = true;
	} else if (!vnapi_connected(hw) && hw->params.reconnect_ms > 0 &&
		   proc->alarm_at_ms == 0) {
		proc->alarm_at_ms = vnapi_now_ms() + proc->backoff_ms;
	}
	/* The caller wakes the connection thread (vnapi_conn_kick), unless it
	 * is that thread. */
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
	proc->ops->release(dev);
	if (hw->started)
		vnapi_backend_flush(dev);
	if (was) {
		proc->down_since_ms = vnapi_now_ms();
		proc->backoff_ms = VNAPI_BACKOFF_MIN_MS;
		if (hw->params.server)
			VNAPI_LOG(ERR, "%s: %s at %s: link down; waiting for a back end to connect",
				  dev->data->name, why, proc->peer);
		else if (hw->params.reconnect_ms > 0)
			VNAPI_LOG(ERR, "%s: %s at %s: link down; reconnecting (every %u ms at most)",
				  dev->data->name, why, proc->peer, hw->params.reconnect_ms);
		else
			VNAPI_LOG(ERR, "%s: %s at %s: link down; reconnect_ms=0: reset the port once it is back",
				  dev->data->name, why, proc->peer);
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
			proc->ops->release(dev);
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
			  dev->data->name, proc->peer, vnapi_now_ms() - proc->down_since_ms,
			  hw->started ? ": rings restarted, link up" : "");
		proc->down_since_ms = 0;
	}
	proc->backoff_ms = VNAPI_BACKOFF_MIN_MS;
	return 0;
}

/* Connection thread, outside the lock: the event goes to EAL's interrupt
 * thread (vnapi_link_event_post), where applications expect it (their
 * callback may call ethdev ops, which quiesce this thread). */
static void
vnapi_conn_lsc_post(struct rte_eth_dev *dev, bool lsc)
{
	if (lsc)
		vnapi_link_event_post(dev);
}

/* An op's thread, outside the lock: deliver the event at once. */
static void
vnapi_conn_lsc(struct rte_eth_dev *dev, bool lsc)
{
	if (lsc)
		vnapi_link_event(dev);
}

/* Under the lock: the connection is readable: a close, or bytes the back
 * end may not send. */
static bool
vnapi_conn_on_sock(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	int ret;

	ret = proc->session->poll(dev);
	if (ret == 0)
		return false; /* nothing was pending: not readable any more */
	proc->sock_watched = false;
	if (ret == -EPROTO)
		hw->ctrl_violations++;
	return vnapi_conn_lost(dev, ret == -EPROTO ?
			       "protocol violation by the back end" :
			       "the back end went away");
}

/* Under the lock: server: a back end is connecting. */
static void
vnapi_conn_on_listen(struct rte_eth_dev *dev, bool *lsc_down, bool *lsc_up)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	int ret;

	/* A restarted back end may connect before we saw the old one close. */
	if (vnapi_connected(hw)) {
		ret = proc->session->poll(dev);
		if (ret != 0) {
			proc->sock_watched = false;
			if (ret == -EPROTO)
				hw->ctrl_violations++;
			*lsc_down = vnapi_conn_lost(dev, ret == -EPROTO ?
					"protocol violation by the back end" :
					"the back end went away");
		}
	}
	ret = proc->session->accept(dev);
	if (ret == 0) {
		ret = vnapi_conn_up(dev, 0, lsc_up);
		if (ret != 0)
			VNAPI_LOG(ERR, "%s: the back end that connected to %s was refused (%s); waiting for another",
				  dev->data->name, proc->peer, strerror(-ret));
	} else if (ret != -EAGAIN && ret != -EBUSY) {
		/* E.g. out of fds: the socket stays readable, so look again later
		 * instead of spinning. */
		VNAPI_LOG(ERR, "%s: accept on %s: %s; retrying in %u ms", dev->data->name,
			  proc->peer, strerror(-ret), VNAPI_ACCEPT_RETRY_MS);
		proc->listen_watched = false;
		proc->alarm_at_ms = vnapi_now_ms() + VNAPI_ACCEPT_RETRY_MS;
	}
}

/* Under the lock: the deadline passed. Client: try to reconnect (server:
 * the listening socket is watched again). */
static bool
vnapi_conn_on_alarm(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	bool lsc = false;

	proc->alarm_at_ms = 0;
	if (!hw->params.server && !vnapi_connected(hw) &&
	    vnapi_conn_up(dev, 0, &lsc) != 0)
		proc->backoff_ms = RTE_MIN(proc->backoff_ms * 2, hw->params.reconnect_ms);
	return lsc;
}

/*
 * The connection thread. Under the lock it reads what is armed, outside
 * it waits in poll() for that (and for its wake eventfd), then under the
 * lock again runs the handlers of what is ready, unless an op quiesced it
 * meanwhile. The fds it polls may be closed by an op meanwhile: a handler
 * only does non-blocking checks first (read, accept), so a stale readiness
 * is harmless, and every op ends with resume(), which wakes the thread.
 */
static void *
vnapi_conn_thread(void *arg)
{
	struct rte_eth_dev *dev = arg;
	struct vnapi_proc *proc = dev->process_private;
	const struct vnapi_session_ops *session = proc->session;
	const struct vnapi_device_ops *ops = proc->ops;

	/* This thread's waits on the device end when an op quiesces it. */
	if (session != NULL)
		session->cancel_fd_set(proc->conn_cancel_fd);
	for (;;) {
		struct pollfd pfd[4];
		bool lsc_sock = false, lsc_down = false, lsc_up = false, lsc_alarm = false;
		int sock_i = -1, listen_i = -1, config_i = -1, timeout = -1;
		unsigned int n = 0;
		uint64_t now;

		pthread_mutex_lock(&proc->lock);
		if (proc->conn_exit) {
			pthread_mutex_unlock(&proc->lock);
			break;
		}
		pfd[n++] = (struct pollfd){ .fd = proc->conn_wake_fd, .events = POLLIN };
		if (vnapi_conn_quiesced(proc) == 0) {
			if (proc->sock_watched && session->event_fd(dev) >= 0) {
				sock_i = n;
				pfd[n++] = (struct pollfd){ .fd = session->event_fd(dev),
							    .events = POLLIN };
			}
			if (proc->listen_watched && session->listen_fd(dev) >= 0) {
				listen_i = n;
				pfd[n++] = (struct pollfd){ .fd = session->listen_fd(dev),
							    .events = POLLIN };
			}
			if (proc->config_watched && ops->config_fd(dev) >= 0) {
				config_i = n;
				pfd[n++] = (struct pollfd){ .fd = ops->config_fd(dev), .events = POLLIN };
			}
			if (proc->alarm_at_ms != 0) {
				now = vnapi_now_ms();
				timeout = proc->alarm_at_ms > now ?
					  (int)RTE_MIN(proc->alarm_at_ms - now, (uint64_t)INT_MAX) : 0;
			}
		}
		pthread_mutex_unlock(&proc->lock);

		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			VNAPI_LOG(ERR, "%s: connection thread: poll: %s", dev->data->name,
				  strerror(errno));
			vnapi_short_sleep();
			continue;
		}
		if (pfd[0].revents != 0)
			vnapi_eventfd_drain(proc->conn_wake_fd);

		pthread_mutex_lock(&proc->lock);
		/* A quiesce that began before this drain is seen by the check
		 * below; one that begins after it writes the cancel eventfd
		 * after its increment, so the handshake's waits see it. */
		vnapi_eventfd_drain(proc->conn_cancel_fd);
		if (vnapi_conn_quiesced(proc) == 0 && !proc->conn_exit) {
			if (sock_i >= 0 && pfd[sock_i].revents != 0 && proc->sock_watched)
				lsc_sock = vnapi_conn_on_sock(dev);
			if (listen_i >= 0 && pfd[listen_i].revents != 0 && proc->listen_watched)
				vnapi_conn_on_listen(dev, &lsc_down, &lsc_up);
			/* Its LSC event is the device's own (config_changed posts it). */
			if (config_i >= 0 && pfd[config_i].revents != 0 && proc->config_watched)
				ops->config_changed(dev);
			if (proc->alarm_at_ms != 0 && vnapi_now_ms() >= proc->alarm_at_ms)
				lsc_alarm = vnapi_conn_on_alarm(dev);
			if (vnapi_conn_quiesced(proc) == 0)
				vnapi_conn_arm(dev);
		}
		pthread_mutex_unlock(&proc->lock);
		vnapi_conn_lsc_post(dev, lsc_sock);
		vnapi_conn_lsc_post(dev, lsc_down);
		vnapi_conn_lsc_post(dev, lsc_up);
		vnapi_conn_lsc_post(dev, lsc_alarm);
	}
	if (session != NULL)
		session->cancel_fd_set(-1);
	return NULL;
}

static int
vnapi_conn_thread_start(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	char name[16];
	int ret;

	proc->conn_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	proc->conn_cancel_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (proc->conn_wake_fd < 0 || proc->conn_cancel_fd < 0) {
		ret = -errno;
		VNAPI_INIT_LOG(ERR, "%s: eventfd: %s", dev->data->name, strerror(-ret));
		return ret;
	}
	/* A plain pthread (see the top of this file); it inherits the
	 * caller's CPU affinity, usually the main lcore's. */
	ret = pthread_create(&proc->conn_thread, NULL, vnapi_conn_thread, dev);
	if (ret != 0) {
		VNAPI_INIT_LOG(ERR, "%s: cannot create the connection thread: %s",
			       dev->data->name, strerror(ret));
		return -ret;
	}
	snprintf(name, sizeof(name), "vnapi-conn%u", (unsigned int)dev->data->port_id % 10000);
	pthread_setname_np(proc->conn_thread, name);
	proc->conn_thread_up = true;
	return 0;
}

/* Close: end the thread (quiesced for good: it runs no handler any more). */
static void
vnapi_conn_thread_stop(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	struct timespec ts;

	if (proc->conn_thread_up) {
		pthread_mutex_lock(&proc->lock);
		proc->conn_exit = true;
		pthread_mutex_unlock(&proc->lock);
		vnapi_conn_kick(proc);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += VNAPI_CONN_JOIN_MS / 1000;
		if (pthread_timedjoin_np(proc->conn_thread, NULL, &ts) != 0) {
			VNAPI_LOG(ERR, "%s: the connection thread did not end within %u ms; left detached",
				  dev->data->name, VNAPI_CONN_JOIN_MS);
			pthread_detach(proc->conn_thread);
		}
		proc->conn_thread_up = false;
	}
	/* An LSC event not delivered yet would find the port gone. */
	vnapi_link_cancel(dev);
	if (proc->conn_wake_fd >= 0)
		close(proc->conn_wake_fd);
	if (proc->conn_cancel_fd >= 0)
		close(proc->conn_cancel_fd);
	proc->conn_wake_fd = -1;
	proc->conn_cancel_fd = -1;
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
	proc->conn_wake_fd = -1;
	proc->conn_cancel_fd = -1;
	proc->backoff_ms = VNAPI_BACKOFF_MIN_MS;
	if (hw->params.server) {
		if (proc->session == NULL) {
			VNAPI_INIT_LOG(ERR, "%s: server mode is vhost-user's: a %s device has no session to listen for",
				       dev->data->name, proc->ops->name);
			return -ENOTSUP;
		}
		ret = proc->session->listen(dev);
		if (ret != 0)
			return ret;
		vnapi_backend_assume(dev);
	} else {
		/* In the probing thread, as before: the application waits for
		 * its port here anyway. */
		ret = vnapi_backend_connect(dev, VNAPI_CONNECT_TIMEOUT_MS);
		if (ret != 0)
			return ret;
	}
	ret = vnapi_conn_thread_start(dev);
	if (ret != 0) {
		vnapi_conn_thread_stop(dev);
		vnapi_backend_disconnect(dev);
		if (proc->session != NULL)
			proc->session->unlisten(dev);
		return ret;
	}
	pthread_mutex_lock(&proc->lock);
	vnapi_conn_arm(dev);
	pthread_mutex_unlock(&proc->lock);
	vnapi_conn_kick(proc);
	return 0;
}

/*
 * The hand-over between an op (application thread, or EAL's interrupt
 * thread when called from an LSC callback) and the connection thread:
 * 1. quiesce is raised (atomic, no lock): a handler not yet begun sees it
 *    and does nothing;
 * 2. the cancel eventfd is written: a handshake in progress (the thread
 *    holds the lock while it waits on the back end) ends at its next wait,
 *    with -ECANCELED, its connection dropped, and releases the lock;
 * 3. taking the lock waits for that: from then on the op owns the state
 *    until resume(), and never waits on a peer's pace for it.
 */
void
vnapi_conn_quiesce(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	uint64_t one = 1;

	/* Seq-cst: pairs with the thread's drain of the cancel eventfd, then
	 * load of quiesce, under the lock (vnapi_conn_thread). */
	__atomic_add_fetch(&proc->quiesce, 1, __ATOMIC_SEQ_CST);
	if (proc->conn_cancel_fd >= 0 &&
	    write(proc->conn_cancel_fd, &one, sizeof(one)) != sizeof(one) && errno != EAGAIN)
		VNAPI_LOG(ERR, "%s: cannot cancel the handshake: %s", dev->data->name,
			  strerror(errno));
	pthread_mutex_lock(&proc->lock);
	proc->sock_watched = false;
	proc->listen_watched = false;
	proc->config_watched = false;
	proc->alarm_at_ms = 0;
	pthread_mutex_unlock(&proc->lock);
	/* The thread stops polling the connection's fds (an op may close them). */
	vnapi_conn_kick(proc);
}

void
vnapi_conn_resume(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	bool lsc = false;

	pthread_mutex_lock(&proc->lock);
	if (__atomic_sub_fetch(&proc->quiesce, 1, __ATOMIC_SEQ_CST) == 0) {
		/* A request of the op found the connection broken. */
		if (vnapi_connected(hw) && !vnapi_backend_session_open(dev))
			lsc = vnapi_conn_lost(dev, "the back end went away");
		vnapi_conn_arm(dev);
	}
	pthread_mutex_unlock(&proc->lock);
	vnapi_conn_kick(proc);
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
			       dev->data->name, proc->peer,
			       hw->params.server ? "connects" : "is reachable");
		return 0;
	}
	ret = vnapi_backend_start(dev);
	if (ret != 0 && !vnapi_backend_session_open(dev)) {
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

	vnapi_conn_thread_stop(dev);
	vnapi_backend_disconnect(dev);
	if (proc->session != NULL)
		proc->session->unlisten(dev);
}
