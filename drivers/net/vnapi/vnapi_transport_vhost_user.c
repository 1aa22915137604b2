/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The vhost-user transport, in two tables (vnapi_transport.h). The
 * session: vnapi connects to the back end's unix socket (client), or
 * listens on it and accepts the back end (server=1), and watches the
 * connection. The device: vnapi_vhost_user.c's requests over that
 * connection. Memory is shared by file descriptor (SET_MEM_TABLE over
 * DPDK's memseg files); the rings' kick and call are the eventfds of
 * struct vnapi_proc.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* POLLRDHUP */
#endif

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal_memconfig.h>
#include <rte_memory.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"
#include "vnapi_logs.h"
#include "vnapi_transport.h"
#include "vnapi_vhost_user.h"

/* No connection yet (also in a secondary, which never makes one). */
static void
vnapi_vu_state_init(void *state)
{
	struct vnapi_vhost_user *vu = state;

	vu->sock = -1;
}

static struct vnapi_vhost_user *
vnapi_vu(const struct rte_eth_dev *dev)
{
	return ((struct vnapi_proc *)dev->process_private)->transport;
}

/* ------------------------------------------------------------ session */

static int
vnapi_vu_connect(struct rte_eth_dev *dev, unsigned int wait_ms)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_vhost_user *vu = vnapi_vu(dev);

	if (hw->params.server)
		return vu->sock < 0 ? -ENOTCONN : 0; /* nobody connected yet */
	if (wait_ms == 0)
		return vnapi_vhost_user_try_connect(vu, hw->params.path);
	return vnapi_vhost_user_connect(vu, hw->params.path, wait_ms, VNAPI_CONNECT_RETRY_MS);
}

static int
vnapi_vu_listen(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;

	if (!hw->params.server || proc->listen_fd >= 0)
		return 0;
	return vnapi_vhost_user_listen(hw->params.path, &proc->listen_fd);
}

static void
vnapi_vu_unlisten(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;

	if (proc->listen_fd < 0)
		return;
	close(proc->listen_fd);
	proc->listen_fd = -1;
	/* Ours: created by listen(). */
	unlink(hw->params.path);
}

static int
vnapi_vu_listen_fd(const struct rte_eth_dev *dev)
{
	return ((const struct vnapi_proc *)dev->process_private)->listen_fd;
}

static int
vnapi_vu_accept(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_vhost_user extra;
	int ret;

	if (proc->listen_fd < 0)
		return -ENOTCONN;
	if (vnapi_vu(dev)->sock < 0)
		return vnapi_vhost_user_accept(vnapi_vu(dev), proc->listen_fd, hw->params.path);
	/* One back end at a time: a second one is turned away (taking it
	 * off the backlog keeps the listening socket from staying readable). */
	extra.sock = -1;
	ret = vnapi_vhost_user_accept(&extra, proc->listen_fd, hw->params.path);
	if (ret != 0)
		return ret;
	VNAPI_LOG(WARNING, "%s: a second vhost-user back end connected to %s while one is attached: closed",
		  dev->data->name, hw->params.path);
	vnapi_vhost_user_close(&extra);
	return -EBUSY;
}

static int
vnapi_vu_event_fd(const struct rte_eth_dev *dev)
{
	return __atomic_load_n(&vnapi_vu(dev)->sock, __ATOMIC_RELAXED);
}

static int
vnapi_vu_poll(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	size_t bytes;
	unsigned int nfds;
	uint32_t request;
	int ret;

	ret = vnapi_vhost_user_poll_inbound(vnapi_vu(dev), &request, &bytes, &nfds);
	if (ret == 0 || ret == -ECONNRESET || ret == -ENOTCONN)
		return ret == 0 ? 0 : -ECONNRESET;
	if (ret != -EPROTO)
		return -ECONNRESET; /* a socket error: gone as well */
	if (!proc->violation_logged) {
		proc->violation_logged = true;
		VNAPI_LOG(ERR, "%s: the vhost-user back end at %s wrote %zu bytes outside any request (request field %" PRIu32 " %s, %u fds): protocol violation; dropping the connection (logged once, counted in ctrl_protocol_violations)",
			  dev->data->name, vnapi_vu(dev)->path, bytes, request,
			  vnapi_vhost_user_request_name(request), nfds);
	}
	return -EPROTO;
}

static bool
vnapi_vu_is_open(const struct rte_eth_dev *dev)
{
	return __atomic_load_n(&vnapi_vu(dev)->sock, __ATOMIC_RELAXED) >= 0;
}

/* ------------------------------------------------------------- device */

/* What the back end offers, over the session's connection. */
static int
vnapi_vu_features_get(struct rte_eth_dev *dev, uint64_t *offered, uint16_t *max_qp)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_vhost_user *vu = vnapi_vu(dev);
	uint64_t proto = 0, qnum;
	int ret;

	ret = vnapi_vhost_user_get_features(vu, offered);
	if (ret == 0)
		ret = vnapi_vhost_user_set_owner(vu);
	if (ret != 0)
		return ret;

	hw->protocol_features = 0;
	*max_qp = 1;
	if (*offered & (1ULL << VHOST_USER_F_PROTOCOL_FEATURES)) {
		ret = vnapi_vhost_user_get_protocol_features(vu, &proto);
		if (ret != 0)
			return ret;
		proto &= (1ULL << VHOST_USER_PROTOCOL_F_MQ) |
			 (1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
			 (1ULL << VHOST_USER_PROTOCOL_F_STATUS);
		ret = vnapi_vhost_user_set_protocol_features(vu, proto);
		if (ret != 0)
			return ret;
		hw->protocol_features = proto;
		if (proto & (1ULL << VHOST_USER_PROTOCOL_F_MQ)) {
			ret = vnapi_vhost_user_get_queue_num(vu, &qnum);
			if (ret != 0)
				return ret;
			*max_qp = (uint16_t)RTE_MIN(qnum, (uint64_t)VNAPI_MAX_QUEUE_PAIRS);
		}
	}
	/* Multiqueue needs the protocol feature as well as the device bit. */
	if (!(proto & (1ULL << VHOST_USER_PROTOCOL_F_MQ)))
		*offered &= ~(1ULL << VIRTIO_NET_F_MQ);
	return 0;
}

static int
vnapi_vu_set_features(struct rte_eth_dev *dev, uint64_t features)
{
	return vnapi_vhost_user_set_features(vnapi_vu(dev), features);
}

struct vnapi_mem_ctx {
	struct vnapi_vhost_user_region regions[VHOST_USER_MAX_MEM_REGIONS];
	unsigned int n;
	int error;
};

/*
 * One region per run of memory segments that share a file and map linearly
 * (same fd, VA distance == file offset distance). With --single-file-segments
 * or --no-huge that is one region per memseg list; with one file per page it
 * overflows the vhost-user limit of 8, which the caller reports.
 */
static int
vnapi_mem_walk(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	struct vnapi_mem_ctx *ctx = arg;
	struct vnapi_vhost_user_region *r;
	uint64_t va = (uintptr_t)ms->addr;
	size_t off;
	int fd;

	if (msl->external)
		return 0;
	fd = rte_memseg_get_fd_thread_unsafe(ms);
	if (fd < 0 || rte_memseg_get_fd_offset_thread_unsafe(ms, &off) < 0) {
		ctx->error = -ENOTSUP;
		return 1;
	}
	if (ctx->n > 0) {
		r = &ctx->regions[ctx->n - 1];
		if (r->fd == fd && va >= r->userspace_addr &&
		    va - r->userspace_addr == off - r->mmap_offset) {
			r->memory_size = va + ms->len - r->userspace_addr;
			return 0;
		}
	}
	if (ctx->n == VHOST_USER_MAX_MEM_REGIONS) {
		ctx->error = -E2BIG;
		return 1;
	}
	r = &ctx->regions[ctx->n++];
	r->guest_phys_addr = va;
	r->userspace_addr = va;
	r->memory_size = ms->len;
	r->mmap_offset = off;
	r->fd = fd;
	return 0;
}

static int
vnapi_vu_set_memory(struct rte_eth_dev *dev)
{
	struct vnapi_mem_ctx ctx = { .n = 0, .error = 0 };
	int ret;

	rte_mcfg_mem_read_lock();
	rte_memseg_walk_thread_unsafe(vnapi_mem_walk, &ctx);
	if (ctx.error == -E2BIG) {
		VNAPI_LOG(ERR, "%s: DPDK memory needs more than %u vhost-user memory regions; start EAL with --single-file-segments (2 MB hugepages) or --no-huge",
			  dev->data->name, VHOST_USER_MAX_MEM_REGIONS);
		ret = -E2BIG;
	} else if (ctx.error != 0) {
		VNAPI_LOG(ERR, "%s: DPDK memory is not backed by shareable files; vhost-user needs hugetlbfs (--single-file-segments) or --no-huge (memfd)",
			  dev->data->name);
		ret = ctx.error;
	} else {
		ret = vnapi_vhost_user_set_mem_table(vnapi_vu(dev), ctx.regions, ctx.n);
	}
	rte_mcfg_mem_read_unlock();
	return ret;
}

static int
vnapi_vu_vring_start(struct rte_eth_dev *dev, uint16_t vring, const struct virtq *vq)
{
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_vhost_user *vu = vnapi_vu(dev);
	const struct virtq_params *vp = virtq_params(vq);
	int ret;

	ret = vnapi_vhost_user_set_vring_call(vu, vring, proc->callfd[vring]);
	if (ret == 0)
		ret = vnapi_vhost_user_set_vring_num(vu, vring, vp->num);
	if (ret == 0)
		ret = vnapi_vhost_user_set_vring_base(vu, vring, virtq_vring_base(vq));
	if (ret == 0)
		ret = vnapi_vhost_user_set_vring_addr(vu, vring,
				(uintptr_t)virtq_desc_area(vq),
				(uintptr_t)virtq_device_area(vq),
				(uintptr_t)virtq_driver_area(vq), 0, 0);
	if (ret == 0)
		ret = vnapi_vhost_user_set_vring_kick(vu, vring, proc->kickfd[vring]);
	return ret;
}

static int
vnapi_vu_vring_enable(struct rte_eth_dev *dev, uint16_t vring, bool enable)
{
	struct vnapi_hw *hw = dev->data->dev_private;

	if (!vnapi_has_feature(hw, VHOST_USER_F_PROTOCOL_FEATURES))
		return 0; /* without it, a ring is enabled by its kick fd */
	return vnapi_vhost_user_set_vring_enable(vnapi_vu(dev), vring, enable);
}

/* GET_VRING_BASE returns only once the back end has stopped the ring. */
static int
vnapi_vu_vring_stop(struct rte_eth_dev *dev, uint16_t vring)
{
	unsigned int base;

	return vnapi_vhost_user_get_vring_base(vnapi_vu(dev), vring, &base);
}

static int
vnapi_vu_set_status(struct rte_eth_dev *dev, uint8_t status)
{
	struct vnapi_hw *hw = dev->data->dev_private;

	if (!(hw->protocol_features & (1ULL << VHOST_USER_PROTOCOL_F_STATUS)))
		return 0;
	return vnapi_vhost_user_set_status(vnapi_vu(dev), status);
}

/* The kick: one write to the ring's kick eventfd (datapath lcore). */
static bool
vnapi_vu_notify(struct rte_eth_dev *dev, uint16_t vring)
{
	const struct vnapi_proc *proc = dev->process_private;
	uint64_t one = 1;

	return write(proc->kickfd[vring], &one, sizeof(one)) == sizeof(one);
}

/*
 * The back end still serves while its end of the connection is open: a
 * hang-up (POLLRDHUP, POLLHUP) or an error on the socket, seen without
 * reading it, says it is gone. The drain at stop asks this while the
 * connection thread, which would read the socket, is quiesced.
 */
static bool
vnapi_vu_serving(const struct rte_eth_dev *dev)
{
	struct pollfd pfd = {
		.fd = __atomic_load_n(&vnapi_vu(dev)->sock, __ATOMIC_RELAXED),
		.events = POLLRDHUP,
	};

	if (pfd.fd < 0)
		return false;
	if (poll(&pfd, 1, 0) <= 0)
		return true;
	return (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

/* The device is the connection: closing it stops the back end's rings. */
static void
vnapi_vu_release(struct rte_eth_dev *dev)
{
	vnapi_vhost_user_close(vnapi_vu(dev));
}

const struct vnapi_device_ops vnapi_vhost_user_device_ops = {
	.name = "vhost-user",
	.features_get = vnapi_vu_features_get,
	.set_features = vnapi_vu_set_features,
	.set_memory = vnapi_vu_set_memory,
	.vring_start = vnapi_vu_vring_start,
	.vring_enable = vnapi_vu_vring_enable,
	.vring_stop = vnapi_vu_vring_stop,
	.set_status = vnapi_vu_set_status,
	.notify = vnapi_vu_notify,
	.serving = vnapi_vu_serving,
	.release = vnapi_vu_release,
	.transport_features = 1ULL << VHOST_USER_F_PROTOCOL_FEATURES,
	.state_size = sizeof(struct vnapi_vhost_user),
	.state_init = vnapi_vu_state_init,
};

const struct vnapi_session_ops vnapi_vhost_user_session_ops = {
	.connect = vnapi_vu_connect,
	.listen = vnapi_vu_listen,
	.unlisten = vnapi_vu_unlisten,
	.listen_fd = vnapi_vu_listen_fd,
	.accept = vnapi_vu_accept,
	.event_fd = vnapi_vu_event_fd,
	.poll = vnapi_vu_poll,
	.is_open = vnapi_vu_is_open,
	.cancel_fd_set = vnapi_vhost_user_cancel_fd_set,
};
