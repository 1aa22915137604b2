/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_common.h>
#include <rte_eal_memconfig.h>
#include <rte_ether.h>
#include <rte_interrupts.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>

#include "vnapi_ethdev.h"
#include "vnapi_logs.h"

#define VNAPI_ARG_PATH       "path"
#define VNAPI_ARG_QUEUES     "queues"
#define VNAPI_ARG_QUEUE_SIZE "queue_size"
#define VNAPI_ARG_MAC        "mac"
#define VNAPI_ARG_MRG_RXBUF  "mrg_rxbuf"
#define VNAPI_ARG_EVENT_IDX  "event_idx"
#define VNAPI_ARG_INTR_RESCUE "intr_rescue"
#define VNAPI_ARG_PACKED_VQ  "packed_vq"
#define VNAPI_ARG_IN_ORDER   "in_order"
#define VNAPI_ARG_INDIRECT   "indirect"

static const char *const valid_args[] = {
	VNAPI_ARG_PATH,
	VNAPI_ARG_QUEUES,
	VNAPI_ARG_QUEUE_SIZE,
	VNAPI_ARG_MAC,
	VNAPI_ARG_MRG_RXBUF,
	VNAPI_ARG_EVENT_IDX,
	VNAPI_ARG_INTR_RESCUE,
	VNAPI_ARG_PACKED_VQ,
	VNAPI_ARG_IN_ORDER,
	VNAPI_ARG_INDIRECT,
	NULL,
};

static const struct vnapi_params vnapi_params_default = {
	.path = "",
	.queues = 1,
	.queue_size = VNAPI_DEFAULT_QUEUE_SIZE,
	.mac_set = false,
	.mrg_rxbuf = true,
	.event_idx = true,
	.intr_rescue = VNAPI_RESCUE_SIGNAL,
	.in_order = true,
	.indirect = true,
};

/* ---------------------------------------------------------------- devargs */

static int
vnapi_arg_path(const char *key, const char *value, void *opaque)
{
	struct vnapi_params *p = opaque;

	if (value == NULL || value[0] == '\0') {
		VNAPI_INIT_LOG(ERR, "devarg %s: empty; allowed: the vhost-user socket path", key);
		return -EINVAL;
	}
	if (strlen(value) >= sizeof(p->path)) {
		VNAPI_INIT_LOG(ERR, "devarg %s: '%s' is longer than %zu bytes (unix socket limit)",
			       key, value, sizeof(p->path) - 1);
		return -EINVAL;
	}
	strcpy(p->path, value);
	return 0;
}

/* A decimal integer in [min, max], the whole string; false otherwise. */
static bool
vnapi_arg_uint(const char *value, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end = NULL;
	unsigned long v;

	errno = 0;
	if (value == NULL || value[0] < '0' || value[0] > '9')
		return false;
	v = strtoul(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static int
vnapi_arg_queues(const char *key, const char *value, void *opaque)
{
	struct vnapi_params *p = opaque;
	unsigned long v;

	if (!vnapi_arg_uint(value, 1, VNAPI_MAX_QUEUE_PAIRS, &v)) {
		VNAPI_INIT_LOG(ERR, "devarg %s: invalid value '%s'; allowed: an integer from 1 to %u",
			       key, value ? value : "", VNAPI_MAX_QUEUE_PAIRS);
		return -EINVAL;
	}
	p->queues = (uint16_t)v;
	return 0;
}

static int
vnapi_arg_queue_size(const char *key, const char *value, void *opaque)
{
	struct vnapi_params *p = opaque;
	unsigned long v;

	if (!vnapi_arg_uint(value, VNAPI_MIN_QUEUE_SIZE, VNAPI_MAX_QUEUE_SIZE, &v) ||
	    !rte_is_power_of_2((uint32_t)v)) {
		VNAPI_INIT_LOG(ERR, "devarg %s: invalid value '%s'; allowed: a power of two from %u to %u",
			       key, value ? value : "", VNAPI_MIN_QUEUE_SIZE, VNAPI_MAX_QUEUE_SIZE);
		return -EINVAL;
	}
	p->queue_size = (uint16_t)v;
	return 0;
}

static int
vnapi_arg_bool(const char *key, const char *value, bool *out)
{
	if (value != NULL && strcmp(value, "0") == 0) {
		*out = false;
		return 0;
	}
	if (value != NULL && strcmp(value, "1") == 0) {
		*out = true;
		return 0;
	}
	VNAPI_INIT_LOG(ERR, "devarg %s: invalid value '%s'; allowed: 0 or 1",
		       key, value ? value : "");
	return -EINVAL;
}

static int
vnapi_arg_mrg_rxbuf(const char *key, const char *value, void *opaque)
{
	return vnapi_arg_bool(key, value, &((struct vnapi_params *)opaque)->mrg_rxbuf);
}

static int
vnapi_arg_event_idx(const char *key, const char *value, void *opaque)
{
	return vnapi_arg_bool(key, value, &((struct vnapi_params *)opaque)->event_idx);
}

static int
vnapi_arg_packed_vq(const char *key, const char *value, void *opaque)
{
	return vnapi_arg_bool(key, value, &((struct vnapi_params *)opaque)->packed_vq);
}

static int
vnapi_arg_in_order(const char *key, const char *value, void *opaque)
{
	return vnapi_arg_bool(key, value, &((struct vnapi_params *)opaque)->in_order);
}

static int
vnapi_arg_indirect(const char *key, const char *value, void *opaque)
{
	return vnapi_arg_bool(key, value, &((struct vnapi_params *)opaque)->indirect);
}

static int
vnapi_arg_mac(const char *key, const char *value, void *opaque)
{
	struct vnapi_params *p = opaque;

	if (value == NULL || rte_ether_unformat_addr(value, &p->mac) != 0) {
		VNAPI_INIT_LOG(ERR, "devarg %s: invalid value '%s'; allowed: a unicast MAC address xx:xx:xx:xx:xx:xx",
			       key, value ? value : "");
		return -EINVAL;
	}
	if (!rte_is_valid_assigned_ether_addr(&p->mac)) {
		VNAPI_INIT_LOG(ERR, "devarg %s: '%s' is not a unicast address; allowed: a unicast MAC address xx:xx:xx:xx:xx:xx",
			       key, value);
		return -EINVAL;
	}
	p->mac_set = true;
	return 0;
}

static int
vnapi_arg_intr_rescue(const char *key, const char *value, void *opaque)
{
	struct vnapi_params *p = opaque;

	if (value != NULL && strcmp(value, "signal") == 0) {
		p->intr_rescue = VNAPI_RESCUE_SIGNAL;
		return 0;
	}
	if (value != NULL && strcmp(value, "eagain") == 0) {
		p->intr_rescue = VNAPI_RESCUE_EAGAIN;
		return 0;
	}
	VNAPI_INIT_LOG(ERR, "devarg %s: invalid value '%s'; allowed: signal, eagain",
		       key, value ? value : "");
	return -EINVAL;
}

static const struct {
	const char *key;
	arg_handler_t handler;
} vnapi_arg_handlers[] = {
	{ VNAPI_ARG_PATH, vnapi_arg_path },
	{ VNAPI_ARG_QUEUES, vnapi_arg_queues },
	{ VNAPI_ARG_QUEUE_SIZE, vnapi_arg_queue_size },
	{ VNAPI_ARG_MAC, vnapi_arg_mac },
	{ VNAPI_ARG_MRG_RXBUF, vnapi_arg_mrg_rxbuf },
	{ VNAPI_ARG_EVENT_IDX, vnapi_arg_event_idx },
	{ VNAPI_ARG_INTR_RESCUE, vnapi_arg_intr_rescue },
	{ VNAPI_ARG_PACKED_VQ, vnapi_arg_packed_vq },
	{ VNAPI_ARG_IN_ORDER, vnapi_arg_in_order },
	{ VNAPI_ARG_INDIRECT, vnapi_arg_indirect },
};

static int
vnapi_parse_devargs(const char *name, const char *args, struct vnapi_params *p)
{
	struct rte_kvargs *kvlist;
	unsigned int i;
	int ret = 0;

	*p = vnapi_params_default;
	kvlist = rte_kvargs_parse(args ? args : "", valid_args);
	if (kvlist == NULL) {
		VNAPI_INIT_LOG(ERR, "%s: cannot parse devargs '%s'; allowed keys: path, queues, queue_size, mac, mrg_rxbuf, event_idx, intr_rescue, packed_vq, in_order, indirect",
			       name, args ? args : "");
		return -EINVAL;
	}
	for (i = 0; i < RTE_DIM(vnapi_arg_handlers) && ret == 0; i++) {
		if (rte_kvargs_count(kvlist, vnapi_arg_handlers[i].key) > 1) {
			VNAPI_INIT_LOG(ERR, "%s: devarg %s given more than once", name,
				       vnapi_arg_handlers[i].key);
			ret = -EINVAL;
			break;
		}
		ret = rte_kvargs_process(kvlist, vnapi_arg_handlers[i].key,
					 vnapi_arg_handlers[i].handler, p);
		if (ret < 0)
			ret = -EINVAL;
	}
	if (ret == 0 && p->path[0] == '\0') {
		VNAPI_INIT_LOG(ERR, "%s: devarg %s is required: the back end's vhost-user socket, e.g. %s,path=/run/vnapi/vhost0.sock",
			       name, VNAPI_ARG_PATH, name);
		ret = -EINVAL;
	}
	rte_kvargs_free(kvlist);
	return ret;
}

/* ------------------------------------------------------------- vhost-user */

static const char *const vnapi_feature_names[64] = {
	[VIRTIO_NET_F_MAC] = "MAC",
	[VIRTIO_NET_F_MRG_RXBUF] = "MRG_RXBUF",
	[VIRTIO_NET_F_STATUS] = "STATUS",
	[VIRTIO_NET_F_MQ] = "MQ",
	[VIRTIO_F_RING_INDIRECT_DESC] = "INDIRECT_DESC",
	[VIRTIO_F_RING_EVENT_IDX] = "EVENT_IDX",
	[VHOST_USER_F_PROTOCOL_FEATURES] = "PROTOCOL_FEATURES",
	[VIRTIO_F_VERSION_1] = "VERSION_1",
	[VIRTIO_F_RING_PACKED] = "RING_PACKED",
	[VIRTIO_F_IN_ORDER] = "IN_ORDER",
};

static void
vnapi_log_features(const char *name, const struct vnapi_hw *hw)
{
	char buf[256];
	size_t off = 0;
	unsigned int bit;

	buf[0] = '\0';
	for (bit = 0; bit < 64; bit++) {
		if (!((hw->features >> bit) & 1))
			continue;
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s", off ? " " : "",
				vnapi_feature_names[bit] ? vnapi_feature_names[bit] : "?");
		if (off >= sizeof(buf))
			break;
	}
	VNAPI_INIT_LOG(INFO, "%s: features 0x%" PRIx64 " (%s), protocol features 0x%" PRIx64
		       ", header %u bytes, back end allows %u queue pairs",
		       name, hw->features, buf, hw->protocol_features, hw->hdr_size,
		       hw->max_queue_pairs);
}

/*
 * Connect and negotiate: what the back end offers, what we take. Done at
 * probe and at reset. SET_FEATURES itself is sent at every start.
 */
static int
vnapi_backend_connect(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_vhost_user *vu = &proc->vu;
	const struct vnapi_params *p = &hw->params;
	uint64_t offered, want, proto = 0, qnum;
	int ret;

	ret = vnapi_vhost_user_connect(vu, p->path, VNAPI_CONNECT_TIMEOUT_MS,
				       VNAPI_CONNECT_RETRY_MS);
	if (ret != 0)
		return ret;
	ret = vnapi_vhost_user_get_features(vu, &offered);
	if (ret != 0)
		goto err_close;
	ret = vnapi_vhost_user_set_owner(vu);
	if (ret != 0)
		goto err_close;

	hw->protocol_features = 0;
	hw->max_queue_pairs = 1;
	if (offered & (1ULL << VHOST_USER_F_PROTOCOL_FEATURES)) {
		ret = vnapi_vhost_user_get_protocol_features(vu, &proto);
		if (ret != 0)
			goto err_close;
		proto &= (1ULL << VHOST_USER_PROTOCOL_F_MQ) |
			 (1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
			 (1ULL << VHOST_USER_PROTOCOL_F_STATUS);
		ret = vnapi_vhost_user_set_protocol_features(vu, proto);
		if (ret != 0)
			goto err_close;
		hw->protocol_features = proto;
		if (proto & (1ULL << VHOST_USER_PROTOCOL_F_MQ)) {
			ret = vnapi_vhost_user_get_queue_num(vu, &qnum);
			if (ret != 0)
				goto err_close;
			hw->max_queue_pairs = (uint16_t)RTE_MIN(qnum, (uint64_t)VNAPI_MAX_QUEUE_PAIRS);
		}
	}

	want = (1ULL << VIRTIO_F_VERSION_1) |
	       (1ULL << VIRTIO_NET_F_MAC) |
	       (1ULL << VIRTIO_NET_F_STATUS) |
	       (1ULL << VHOST_USER_F_PROTOCOL_FEATURES);
	if (p->mrg_rxbuf)
		want |= 1ULL << VIRTIO_NET_F_MRG_RXBUF;
	if (p->event_idx)
		want |= 1ULL << VIRTIO_F_RING_EVENT_IDX;
	if (p->queues > 1)
		want |= 1ULL << VIRTIO_NET_F_MQ;
	if (p->packed_vq)
		want |= 1ULL << VIRTIO_F_RING_PACKED;
	if (p->in_order)
		want |= 1ULL << VIRTIO_F_IN_ORDER;   /* taken only if offered */
	if (p->indirect)
		want |= 1ULL << VIRTIO_F_RING_INDIRECT_DESC;

	if (p->packed_vq && !(offered & (1ULL << VIRTIO_F_RING_PACKED))) {
		VNAPI_INIT_LOG(ERR, "%s: packed_vq=1 but the back end at %s does not offer packed virtqueues; use packed_vq=0",
			       dev->data->name, p->path);
		ret = -ENOTSUP;
		goto err_close;
	}

	if (p->queues > 1 && (!(offered & (1ULL << VIRTIO_NET_F_MQ)) ||
			      !(proto & (1ULL << VHOST_USER_PROTOCOL_F_MQ)))) {
		VNAPI_INIT_LOG(ERR, "%s: queues=%u needs multiqueue, which the back end at %s does not offer; use queues=1",
			       dev->data->name, p->queues, p->path);
		ret = -ENOTSUP;
		goto err_close;
	}
	if (p->queues > hw->max_queue_pairs) {
		VNAPI_INIT_LOG(ERR, "%s: queues=%u but the back end at %s allows %u queue pairs",
			       dev->data->name, p->queues, p->path, hw->max_queue_pairs);
		ret = -ENOTSUP;
		goto err_close;
	}

	hw->features_offered = offered;
	hw->features = offered & want;
	hw->hdr_size = (vnapi_has_feature(hw, VIRTIO_F_VERSION_1) ||
			vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF)) ?
		       sizeof(struct vnapi_net_hdr) : sizeof(struct vnapi_net_hdr) - 2;
	hw->connected = true;
	return 0;

err_close:
	VNAPI_INIT_LOG(ERR, "%s: negotiation with the back end at %s failed: %s",
		       dev->data->name, p->path, strerror(-ret));
	vnapi_vhost_user_close(vu);
	return ret;
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
vnapi_set_mem_table(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_mem_ctx ctx = { .n = 0, .error = 0 };
	int ret;

	rte_mcfg_mem_read_lock();
	rte_memseg_walk_thread_unsafe(vnapi_mem_walk, &ctx);
	if (ctx.error == -E2BIG) {
		VNAPI_INIT_LOG(ERR, "%s: DPDK memory needs more than %u vhost-user memory regions; start EAL with --single-file-segments (2 MB hugepages) or --no-huge",
			       dev->data->name, VHOST_USER_MAX_MEM_REGIONS);
		ret = -E2BIG;
	} else if (ctx.error != 0) {
		VNAPI_INIT_LOG(ERR, "%s: DPDK memory is not backed by shareable files; vhost-user needs hugetlbfs (--single-file-segments) or --no-huge (memfd)",
			       dev->data->name);
		ret = ctx.error;
	} else {
		ret = vnapi_vhost_user_set_mem_table(&proc->vu, ctx.regions, ctx.n);
	}
	rte_mcfg_mem_read_unlock();
	return ret;
}

/* ------------------------------------------------- disconnect detection */

static void vnapi_sock_intr_cb(void *arg);

/* Runs in the EAL alarm thread: the link goes down, the application hears it. */
static void
vnapi_broken_alarm(void *arg)
{
	struct rte_eth_dev *dev = arg;
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	link.link_status = RTE_ETH_LINK_DOWN;
	link.link_autoneg = RTE_ETH_LINK_FIXED;
	if (rte_eth_linkstatus_set(dev, &link) == 0) /* changed */
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

/*
 * A datapath found its ring broken by the device (a value lib/virtq
 * rejected): say so once, and take the link down from the alarm thread, not
 * from the application's lcore. The port needs a stop/start (or reset).
 */
void
vnapi_queue_broken(uint16_t port_id, const char *dir, uint16_t qid, struct virtq *vq)
{
	struct rte_eth_dev *dev = &rte_eth_devices[port_id];
	struct vnapi_hw *hw = dev->data->dev_private;

	if (!hw->connected)
		return; /* the back end left: reported by the disconnect detector */
	VNAPI_LOG(ERR, "%s: %s queue %u broken by the back end: %s; link down until the port is restarted",
		  dev->data->name, dir, qid, virtq_broken_reason(vq));
	rte_eal_alarm_set(1, vnapi_broken_alarm, dev);
}

static void
vnapi_queues_mark_broken(struct rte_eth_dev *dev, const char *why)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL)
			virtq_mark_broken(rxq->vq, why);
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			virtq_mark_broken(txq->vq, why);
	}
}

static void
vnapi_sock_intr_unregister(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;

	if (!proc->sock_intr_registered)
		return;
	/* -EAGAIN: the callback is running right now; it unregisters itself. */
	while (rte_intr_callback_unregister(proc->sock_intr, vnapi_sock_intr_cb, dev) == -EAGAIN)
		rte_pause();
	proc->sock_intr_registered = false;
}

static int
vnapi_sock_intr_register(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	int ret;

	if (rte_intr_fd_set(proc->sock_intr, proc->vu.sock) != 0 ||
	    rte_intr_type_set(proc->sock_intr, RTE_INTR_HANDLE_EXT) != 0)
		return -rte_errno;
	ret = rte_intr_callback_register(proc->sock_intr, vnapi_sock_intr_cb, dev);
	if (ret != 0) {
		VNAPI_INIT_LOG(ERR, "%s: cannot watch the vhost-user socket: %s",
			       dev->data->name, strerror(-ret));
		return ret;
	}
	proc->sock_intr_registered = true;
	return 0;
}

/*
 * The back end writes nothing unsolicited on the socket, so readability is a
 * close (or a failure). Runs in the EAL interrupt thread: it only peeks, flips
 * the flags and tells the application; the control path closes the socket.
 */
static void
vnapi_sock_intr_cb(void *arg)
{
	struct rte_eth_dev *dev = arg;
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	struct rte_eth_link link;

	if (!vnapi_vhost_user_peer_gone(&proc->vu))
		return;
	hw->connected = false;
	VNAPI_LOG(ERR, "%s: vhost-user back end at %s went away: link down",
		  dev->data->name, hw->params.path);
	/* Nobody serves the rings any more: bursts return 0 from now on, and
	 * stop/start after rte_eth_dev_reset lays them out anew. */
	vnapi_queues_mark_broken(dev, "vhost-user back end disconnected");
	rte_intr_callback_unregister_pending(proc->sock_intr, vnapi_sock_intr_cb, arg, NULL);
	proc->sock_intr_registered = false;
	memset(&link, 0, sizeof(link));
	link.link_status = RTE_ETH_LINK_DOWN;
	link.link_speed = RTE_ETH_SPEED_NUM_NONE;
	link.link_autoneg = RTE_ETH_LINK_FIXED;
	if (rte_eth_linkstatus_set(dev, &link) == 0) /* changed */
		rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

/* ------------------------------------------------------------- ethdev ops */

static void
vnapi_link_set(struct rte_eth_dev *dev, bool up)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	link.link_autoneg = RTE_ETH_LINK_FIXED;
	link.link_status = up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
	link.link_speed = up ? RTE_ETH_SPEED_NUM_10G : RTE_ETH_SPEED_NUM_NONE;
	/* Start and stop are the application's own doing: no LSC event. */
	rte_eth_linkstatus_set(dev, &link);
}

static int
vnapi_dev_link_update(struct rte_eth_dev *dev, int wait_to_complete __rte_unused)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	link.link_autoneg = RTE_ETH_LINK_FIXED;
	if (hw->started && hw->connected) {
		link.link_status = RTE_ETH_LINK_UP;
		link.link_speed = RTE_ETH_SPEED_NUM_10G;
	}
	return rte_eth_linkstatus_set(dev, &link);
}

static int
vnapi_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	uint32_t max_pktlen = vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF) ?
			      VNAPI_MAX_RX_PKTLEN : RTE_ETHER_MAX_LEN;

	info->max_mac_addrs = 1;
	info->max_rx_pktlen = max_pktlen;
	info->min_mtu = VNAPI_MIN_MTU;
	info->max_mtu = max_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN;
	info->min_rx_bufsize = RTE_ETHER_MIN_LEN + hw->hdr_size;
	info->max_rx_queues = hw->params.queues;
	info->max_tx_queues = hw->params.queues;
	info->rx_offload_capa = vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF) ?
				RTE_ETH_RX_OFFLOAD_SCATTER : 0;
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	info->rx_desc_lim.nb_max = VNAPI_MAX_QUEUE_SIZE;
	info->rx_desc_lim.nb_min = VNAPI_MIN_QUEUE_SIZE;
	info->rx_desc_lim.nb_align = 1;
	info->tx_desc_lim = info->rx_desc_lim;
	info->tx_desc_lim.nb_seg_max = VNAPI_TX_MAX_SEGS;
	info->tx_desc_lim.nb_mtu_seg_max = VNAPI_TX_MAX_SEGS;
	info->default_rxportconf.ring_size = hw->params.queue_size;
	info->default_txportconf.ring_size = hw->params.queue_size;
	info->default_rxportconf.burst_size = 32;
	info->default_txportconf.burst_size = 32;
	info->default_rxportconf.nb_queues = 1;
	info->default_txportconf.nb_queues = 1;
	info->speed_capa = RTE_ETH_LINK_SPEED_10G;
	info->dev_capa = 0;
	return 0;
}

static int vnapi_eventfds_open(struct rte_eth_dev *dev, uint16_t nb_vrings);

static int
vnapi_dev_configure(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const struct rte_eth_conf *conf = &dev->data->dev_conf;
	uint16_t nb_qp = RTE_MAX(dev->data->nb_rx_queues, dev->data->nb_tx_queues);
	int ret;

	if (conf->rxmode.mq_mode != RTE_ETH_MQ_RX_NONE) {
		VNAPI_INIT_LOG(ERR, "%s: rx mq_mode %d not supported (vhost-user spreads nothing); use RTE_ETH_MQ_RX_NONE",
			       dev->data->name, conf->rxmode.mq_mode);
		return -ENOTSUP;
	}
	if (nb_qp > hw->params.queues) {
		VNAPI_INIT_LOG(ERR, "%s: %u queue pairs requested, devarg queues=%u",
			       dev->data->name, nb_qp, hw->params.queues);
		return -EINVAL;
	}
	hw->nb_qp = nb_qp;
	/* The eventfds outlive stop/start: an application registers the rx
	 * interrupt fds once, after configure. */
	ret = vnapi_eventfds_open(dev, 2 * nb_qp);
	if (ret != 0)
		return ret;
	return vnapi_intr_configure(dev);
}

static uint16_t
vnapi_ring_size(const struct vnapi_hw *hw, const char *what, uint16_t qid, uint16_t nb_desc,
		int *err)
{
	*err = 0;
	if (nb_desc == 0)
		return hw->params.queue_size;
	if (!rte_is_power_of_2(nb_desc)) {
		VNAPI_INIT_LOG(ERR, "%s queue %u: %u descriptors; a virtqueue needs a power of two from %u to %u",
			       what, qid, nb_desc, VNAPI_MIN_QUEUE_SIZE, VNAPI_MAX_QUEUE_SIZE);
		*err = -EINVAL;
	}
	return nb_desc;
}

static enum virtq_layout
vnapi_layout(const struct vnapi_hw *hw)
{
	return vnapi_has_feature(hw, VIRTIO_F_RING_PACKED) ? VIRTQ_LAYOUT_PACKED :
							      VIRTQ_LAYOUT_SPLIT;
}

/* Virtqueue state and ring memory, both in DPDK memory (shared with the back end). */
static int
vnapi_vq_alloc(const struct virtq_params *vp, unsigned int socket, struct virtq **vq, void **ring)
{
	*vq = rte_zmalloc_socket("vnapi_vq", virtq_state_size(vp), RTE_CACHE_LINE_SIZE, socket);
	*ring = rte_zmalloc_socket("vnapi_ring", virtq_ring_mem_size(vp), VIRTQ_RING_ALIGN, socket);
	if (*vq == NULL || *ring == NULL) {
		rte_free(*vq);
		rte_free(*ring);
		*vq = NULL;
		*ring = NULL;
		return -ENOMEM;
	}
	return virtq_init(*vq, vp, *ring);
}

static void
vnapi_dev_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct vnapi_rxq *rxq = dev->data->rx_queues[qid];

	if (rxq == NULL)
		return;
	vnapi_rxq_flush(rxq);
	rte_free(rxq->vq);
	rte_free(rxq->ring);
	rte_free(rxq);
	dev->data->rx_queues[qid] = NULL;
}

static void
vnapi_dev_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct vnapi_txq *txq = dev->data->tx_queues[qid];

	if (txq == NULL)
		return;
	vnapi_txq_flush(txq);
	rte_free(txq->vq);
	rte_free(txq->ring);
	rte_free(txq->zero_hdr);
	rte_free(txq);
	dev->data->tx_queues[qid] = NULL;
}

static int
vnapi_dev_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			 unsigned int socket, const struct rte_eth_rxconf *conf __rte_unused,
			 struct rte_mempool *mp)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	uint16_t data_room = rte_pktmbuf_data_room_size(mp);
	uint32_t frame = dev->data->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	struct virtq_params vp = { .layout = vnapi_layout(hw) };
	struct vnapi_rxq *rxq;
	int ret;

	/* No indirect tables: rx posts one descriptor per buffer, never a chain. */
	vp.num = vnapi_ring_size(hw, "rx", qid, nb_desc, &ret);
	vp.event_idx = vnapi_has_feature(hw, VIRTIO_F_RING_EVENT_IDX);
	vp.in_order = vnapi_has_feature(hw, VIRTIO_F_IN_ORDER);
	vp.start_idx = 0;
	if (ret != 0)
		return ret;
	if (data_room < RTE_PKTMBUF_HEADROOM + RTE_ETHER_MIN_LEN) {
		VNAPI_INIT_LOG(ERR, "%s rx queue %u: mbuf data room %u too small (headroom %u + %u)",
			       dev->data->name, qid, data_room, RTE_PKTMBUF_HEADROOM,
			       RTE_ETHER_MIN_LEN);
		return -EINVAL;
	}
	if (!vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF) &&
	    frame > (uint32_t)data_room - RTE_PKTMBUF_HEADROOM) {
		VNAPI_INIT_LOG(ERR, "%s rx queue %u: MTU %u does not fit in one %u-byte mbuf and mergeable rx buffers are off; use mrg_rxbuf=1 or bigger mbufs",
			       dev->data->name, qid, dev->data->mtu, data_room);
		return -EINVAL;
	}

	if (dev->data->rx_queues[qid] != NULL)
		vnapi_dev_rx_queue_release(dev, qid);
	rxq = rte_zmalloc_socket("vnapi_rxq", sizeof(*rxq), RTE_CACHE_LINE_SIZE, socket);
	if (rxq == NULL)
		return -ENOMEM;
	ret = vnapi_vq_alloc(&vp, socket, &rxq->vq, &rxq->ring);
	if (ret != 0) {
		rte_free(rxq);
		return ret;
	}
	rxq->mp = mp;
	rxq->port_id = dev->data->port_id;
	rxq->queue_id = qid;
	rxq->vring = 2 * qid;
	rxq->hdr_size = hw->hdr_size;
	rxq->cfg.num = vp.num;
	rxq->cfg.event_idx = vp.event_idx;
	rxq->parse_ptype = hw->parse_ptype;
	dev->data->rx_queues[qid] = rxq;
	return 0;
}

static int
vnapi_dev_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			 unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct virtq_params vp = { .layout = vnapi_layout(hw) };
	struct vnapi_txq *txq;
	uint16_t free_thresh;
	int ret;

	vp.num = vnapi_ring_size(hw, "tx", qid, nb_desc, &ret);
	vp.event_idx = vnapi_has_feature(hw, VIRTIO_F_RING_EVENT_IDX);
	vp.in_order = vnapi_has_feature(hw, VIRTIO_F_IN_ORDER);
	vp.start_idx = 0;
	/*
	 * A multi-segment packet is at most VNAPI_TX_MAX_SEGS segments and a
	 * header descriptor: with indirect descriptors it takes one ring slot
	 * (vnapi_tx_add_chain() -> virtq_add()). The tables live in the ring
	 * memory (num * 65 * 16 bytes more), DPDK memory the back end maps.
	 */
	vp.indirect_max = vnapi_has_feature(hw, VIRTIO_F_RING_INDIRECT_DESC) ?
			  VNAPI_TX_MAX_SEGS + 1 : 0;
	if (ret != 0)
		return ret;
	/* Default: take completions back once more than min(32, num / 4)
	 * descriptors are in flight. Few mbufs in flight stay hot in the
	 * caches; waiting until the ring is nearly full measured ~20% slower.
	 */
	free_thresh = (uint16_t)(vp.num - RTE_MIN((uint16_t)VNAPI_TX_FREE_THRESH,
						  (uint16_t)(vp.num / 4)));
	if (conf != NULL && conf->tx_free_thresh != 0) {
		if (conf->tx_free_thresh >= vp.num) {
			VNAPI_INIT_LOG(ERR, "%s tx queue %u: tx_free_thresh %u must be below the ring size %u",
				       dev->data->name, qid, conf->tx_free_thresh, vp.num);
			return -EINVAL;
		}
		free_thresh = conf->tx_free_thresh;
	}

	if (dev->data->tx_queues[qid] != NULL)
		vnapi_dev_tx_queue_release(dev, qid);
	txq = rte_zmalloc_socket("vnapi_txq", sizeof(*txq), RTE_CACHE_LINE_SIZE, socket);
	if (txq == NULL)
		return -ENOMEM;
	txq->zero_hdr = rte_zmalloc_socket("vnapi_txhdr", sizeof(*txq->zero_hdr),
					   RTE_CACHE_LINE_SIZE, socket);
	if (txq->zero_hdr == NULL) {
		rte_free(txq);
		return -ENOMEM;
	}
	ret = vnapi_vq_alloc(&vp, socket, &txq->vq, &txq->ring);
	if (ret != 0) {
		rte_free(txq->zero_hdr);
		rte_free(txq);
		return ret;
	}
	txq->port_id = dev->data->port_id;
	txq->queue_id = qid;
	txq->vring = 2 * qid + 1;
	txq->hdr_size = hw->hdr_size;
	txq->cfg.num = vp.num;
	txq->cfg.event_idx = vp.event_idx;
	txq->free_thresh = free_thresh;
	txq->add_batch = virtq_publish_group(txq->vq);
	dev->data->tx_queues[qid] = txq;
	return 0;
}

/* Datapaths are chosen here, once, and logged. */
static void
vnapi_set_rxtx_funcs(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	const char *ring = vnapi_layout(hw) == VIRTQ_LAYOUT_PACKED ? "packed" : "split";

	if (vnapi_has_feature(hw, VIRTIO_NET_F_MRG_RXBUF)) {
		dev->rx_pkt_burst = vnapi_recv_pkts_mrg;
		VNAPI_INIT_LOG(INFO, "%s: rx path: %s ring, mergeable buffers", dev->data->name,
			       ring);
	} else {
		dev->rx_pkt_burst = vnapi_recv_pkts;
		VNAPI_INIT_LOG(INFO, "%s: rx path: %s ring, one buffer per packet",
			       dev->data->name, ring);
	}
	dev->tx_pkt_burst = vnapi_xmit_pkts;
	if (vnapi_has_feature(hw, VIRTIO_F_RING_INDIRECT_DESC))
		VNAPI_INIT_LOG(INFO, "%s: tx path: %s ring, header in headroom, multi-segment packets in indirect tables of up to %u descriptors",
			       dev->data->name, ring, VNAPI_TX_MAX_SEGS + 1);
	else
		VNAPI_INIT_LOG(INFO, "%s: tx path: %s ring, header in headroom, multi-segment packets as descriptor chains",
			       dev->data->name, ring);
}

/* Hand one virtqueue to the back end. */
static int
vnapi_vring_start(struct rte_eth_dev *dev, uint16_t vring, struct virtq *vq)
{
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_vhost_user *vu = &proc->vu;
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
	if (ret != 0)
		VNAPI_INIT_LOG(ERR, "%s: cannot start vring %u: %s", dev->data->name, vring,
			       strerror(-ret));
	return ret;
}

static int
vnapi_eventfds_open(struct rte_eth_dev *dev, uint16_t nb_vrings)
{
	struct vnapi_proc *proc = dev->process_private;
	uint16_t i;

	for (i = 0; i < nb_vrings; i++) {
		if (proc->kickfd[i] < 0)
			proc->kickfd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (proc->callfd[i] < 0)
			proc->callfd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (proc->kickfd[i] < 0 || proc->callfd[i] < 0) {
			VNAPI_INIT_LOG(ERR, "%s: eventfd: %s", dev->data->name, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static void
vnapi_eventfds_close(struct vnapi_proc *proc)
{
	unsigned int i;

	for (i = 0; i < VNAPI_MAX_VRINGS; i++) {
		if (proc->kickfd[i] >= 0)
			close(proc->kickfd[i]);
		if (proc->callfd[i] >= 0)
			close(proc->callfd[i]);
		proc->kickfd[i] = -1;
		proc->callfd[i] = -1;
	}
}

static void vnapi_queues_flush(struct rte_eth_dev *dev);

/*
 * The virtqueue behind vhost-user vring @p vring (rx queue q is 2q, tx queue
 * q is 2q + 1), or NULL when the application set up no such queue: queue
 * counts may differ (e.g. one rx and two tx queues), and a back end needs
 * only the vrings of pair 0 to be ready.
 */
static struct virtq *
vnapi_vring_vq(const struct rte_eth_dev *dev, uint16_t vring)
{
	uint16_t q = vring / 2;

	if (vring % 2 == 0) {
		const struct vnapi_rxq *rxq = q < dev->data->nb_rx_queues ?
					      dev->data->rx_queues[q] : NULL;

		return rxq != NULL ? rxq->vq : NULL;
	} else {
		const struct vnapi_txq *txq = q < dev->data->nb_tx_queues ?
					      dev->data->tx_queues[q] : NULL;

		return txq != NULL ? txq->vq : NULL;
	}
}

static int
vnapi_dev_start(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_vhost_user *vu = &proc->vu;
	uint16_t nb_qp = hw->nb_qp;
	uint16_t q, nb_vrings = 2 * nb_qp;
	int ret;

	if (!hw->connected) {
		VNAPI_INIT_LOG(ERR, "%s: the back end at %s is gone; reset the port (rte_eth_dev_reset) once it is back",
			       dev->data->name, hw->params.path);
		return -ENOTCONN;
	}
	if (vnapi_vring_vq(dev, 0) == NULL || vnapi_vring_vq(dev, 1) == NULL) {
		VNAPI_INIT_LOG(ERR, "%s: rx queue 0 and tx queue 0 must be set up",
			       dev->data->name);
		return -EINVAL;
	}
	for (q = 0; q < nb_vrings; q++) {
		if (vnapi_vring_vq(dev, q) == NULL &&
		    q / 2 < (q % 2 ? dev->data->nb_tx_queues : dev->data->nb_rx_queues)) {
			VNAPI_INIT_LOG(ERR, "%s: %s queue %u configured but not set up",
				       dev->data->name, q % 2 ? "tx" : "rx", q / 2);
			return -EINVAL;
		}
	}
	ret = vnapi_eventfds_open(dev, nb_vrings);
	if (ret != 0)
		return ret;

	ret = vnapi_vhost_user_set_features(vu, hw->features);
	if (ret == 0)
		ret = vnapi_set_mem_table(dev);
	if (ret != 0)
		goto err;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (vnapi_rxq_refill(rxq) == 0) {
			VNAPI_INIT_LOG(ERR, "%s rx queue %u: no mbuf to post (mempool %s empty?)",
				       dev->data->name, q, rxq->mp->name);
			ret = -ENOMEM;
			goto err;
		}
	}
	for (q = 0; q < nb_vrings; q++) {
		struct virtq *vq = vnapi_vring_vq(dev, q);

		if (vq == NULL)
			continue;
		ret = vnapi_vring_start(dev, q, vq);
		if (ret != 0)
			goto err;
	}
	if (hw->features & (1ULL << VHOST_USER_F_PROTOCOL_FEATURES)) {
		for (q = 0; q < nb_vrings; q++) {
			if (vnapi_vring_vq(dev, q) == NULL)
				continue;
			ret = vnapi_vhost_user_set_vring_enable(vu, q, true);
			if (ret != 0)
				goto err;
		}
	}
	if (hw->protocol_features & (1ULL << VHOST_USER_PROTOCOL_F_STATUS)) {
		ret = vnapi_vhost_user_set_status(vu, VIRTIO_STATUS_ACKNOWLEDGE |
						  VIRTIO_STATUS_DRIVER |
						  VIRTIO_STATUS_FEATURES_OK |
						  VIRTIO_STATUS_DRIVER_OK);
		if (ret != 0)
			goto err;
	}
	if (!proc->sock_intr_registered) {
		ret = vnapi_sock_intr_register(dev);
		if (ret != 0)
			goto err;
	}

	vnapi_set_rxtx_funcs(dev);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	hw->started = true;
	vnapi_link_set(dev, true);
	return 0;

err:
	VNAPI_INIT_LOG(ERR, "%s: start failed: %s", dev->data->name, strerror(-ret));
	vnapi_queues_flush(dev);
	return ret;
}

/* Lay an emptied virtqueue out anew (the parameters live inside it). */
static void
vnapi_vq_reinit(struct virtq *vq, void *ring)
{
	const struct virtq_params vp = *virtq_params(vq);

	virtq_init(vq, &vp, ring);
}

/* Free every buffer the rings hold and lay the rings out anew. */
static void
vnapi_queues_flush(struct rte_eth_dev *dev)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq == NULL)
			continue;
		vnapi_rxq_flush(rxq);
		vnapi_vq_reinit(rxq->vq, rxq->ring);
		rxq->broken_reported = false;
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq == NULL)
			continue;
		vnapi_txq_flush(txq);
		vnapi_vq_reinit(txq->vq, txq->ring);
		txq->broken_reported = false;
	}
}

static int
vnapi_dev_stop(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	uint16_t q, nb_vrings = 2 * hw->nb_qp;
	unsigned int base;

	if (!hw->started)
		return 0;
	hw->started = false;
	vnapi_link_set(dev, false);
	dev->data->dev_started = 0;

	/* Stop the back end's use of every ring before taking the buffers back:
	 * GET_VRING_BASE returns only once the back end has stopped the ring. */
	if (hw->connected) {
		if (hw->features & (1ULL << VHOST_USER_F_PROTOCOL_FEATURES))
			for (q = 0; q < nb_vrings; q++)
				if (vnapi_vring_vq(dev, q) != NULL)
					vnapi_vhost_user_set_vring_enable(&proc->vu, q, false);
		for (q = 0; q < nb_vrings; q++)
			if (vnapi_vring_vq(dev, q) != NULL &&
			    vnapi_vhost_user_get_vring_base(&proc->vu, q, &base) != 0)
				break;
		/* The client closes the socket on a transport error. */
		if (proc->vu.sock < 0)
			hw->connected = false;
	}
	vnapi_queues_flush(dev);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	return 0;
}

static int
vnapi_dev_close(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	uint16_t q;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	vnapi_dev_stop(dev);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		vnapi_dev_rx_queue_release(dev, q);
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		vnapi_dev_tx_queue_release(dev, q);
	rte_eal_alarm_cancel(vnapi_broken_alarm, dev);
	if (proc != NULL) {
		vnapi_sock_intr_unregister(dev);
		vnapi_intr_release(dev);
		vnapi_vhost_user_close(&proc->vu);
		vnapi_eventfds_close(proc);
		rte_intr_instance_free(proc->sock_intr);
		rte_free(proc);
		dev->process_private = NULL;
	}
	return 0;
}

/* Reconnect to the back end (e.g. after it restarted) and renegotiate. */
static int
vnapi_dev_reset(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;

	vnapi_dev_stop(dev);
	vnapi_sock_intr_unregister(dev);
	vnapi_vhost_user_close(&proc->vu);
	hw->connected = false;
	return vnapi_backend_connect(dev);
}

static int
vnapi_dev_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	struct rte_eth_dev_info info;

	vnapi_dev_infos_get(dev, &info);
	if (mtu < info.min_mtu || mtu > info.max_mtu) {
		VNAPI_INIT_LOG(ERR, "%s: MTU %u out of range %u..%u%s", dev->data->name, mtu,
			       info.min_mtu, info.max_mtu,
			       info.max_mtu < 9000 ? " (mrg_rxbuf=1 allows jumbo frames)" : "");
		return -EINVAL;
	}
	return 0;
}

static int
vnapi_dev_mac_addr_set(struct rte_eth_dev *dev __rte_unused,
		       struct rte_ether_addr *addr __rte_unused)
{
	/* ethdev stores it in data->mac_addrs; vhost-user filters nothing. */
	return 0;
}

static int
vnapi_dev_accept(struct rte_eth_dev *dev __rte_unused)
{
	return 0; /* promiscuous and allmulticast: the back end filters nothing */
}

static int
vnapi_dev_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *st)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		const struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq == NULL)
			continue;
		st->ipackets += rxq->stats.packets;
		st->ibytes += rxq->stats.bytes;
		st->ierrors += rxq->stats.errors;
		if (q < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			st->q_ipackets[q] = rxq->stats.packets;
			st->q_ibytes[q] = rxq->stats.bytes;
			st->q_errors[q] = rxq->stats.errors;
		}
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		const struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq == NULL)
			continue;
		st->opackets += txq->stats.packets;
		st->obytes += txq->stats.bytes;
		st->oerrors += txq->stats.errors;
		if (q < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			st->q_opackets[q] = txq->stats.packets;
			st->q_obytes[q] = txq->stats.bytes;
		}
	}
	st->rx_nombuf = dev->data->rx_mbuf_alloc_failed;
	return 0;
}

static int
vnapi_dev_stats_reset(struct rte_eth_dev *dev)
{
	uint16_t q;

	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		if (rxq != NULL) {
			memset(&rxq->stats, 0, sizeof(rxq->stats));
			memset(&rxq->istats, 0, sizeof(rxq->istats));
		}
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		struct vnapi_txq *txq = dev->data->tx_queues[q];

		if (txq != NULL)
			memset(&txq->stats, 0, sizeof(txq->stats));
	}
	return 0;
}

/* xstats: per queue, {name, where, offset}. */
enum vnapi_xstat_src {
	VNAPI_XS_QUEUE,  /**< struct vnapi_queue_stats */
	VNAPI_XS_VIRTQ,  /**< struct virtq_stats (lib/virtq) */
	VNAPI_XS_INTR,   /**< struct vnapi_intr_stats (rx only) */
	VNAPI_XS_PPN,    /**< derived: wakeup_packets / notifications */
};

struct vnapi_xstat {
	const char *name;
	enum vnapi_xstat_src src;
	size_t offset;
};

#define VNAPI_QSTAT(n, f) { n, VNAPI_XS_QUEUE, offsetof(struct vnapi_queue_stats, f) }
#define VNAPI_VQSTAT(n, f) { n, VNAPI_XS_VIRTQ, offsetof(struct virtq_stats, f) }
#define VNAPI_ISTAT(n, f) { n, VNAPI_XS_INTR, offsetof(struct vnapi_intr_stats, f) }

static const struct vnapi_xstat vnapi_rxq_xstats[] = {
	VNAPI_QSTAT("good_packets", packets),
	VNAPI_QSTAT("good_bytes", bytes),
	VNAPI_QSTAT("errors", errors),
	VNAPI_QSTAT("nombuf", nombuf),
	VNAPI_QSTAT("kicks", kicks),
	VNAPI_VQSTAT("kicks_suppressed", kicks_suppressed),
	VNAPI_QSTAT("kick_errors", kick_errors),
	VNAPI_VQSTAT("bad_used", bad_used),
	VNAPI_ISTAT("intr_arms", arms),
	VNAPI_ISTAT("intr_rescues", rescues),
	VNAPI_ISTAT("intr_notifications", notifications),
	VNAPI_ISTAT("intr_wakeups", wakeups),
	VNAPI_ISTAT("intr_wakeup_packets", wakeup_packets),
	VNAPI_ISTAT("intr_spurious_wakeups", spurious),
	{ "intr_packets_per_notification", VNAPI_XS_PPN, 0 },
};

static const struct vnapi_xstat vnapi_txq_xstats[] = {
	VNAPI_QSTAT("good_packets", packets),
	VNAPI_QSTAT("good_bytes", bytes),
	VNAPI_QSTAT("errors", errors),
	VNAPI_QSTAT("ring_full", full),
	VNAPI_QSTAT("kicks", kicks),
	VNAPI_VQSTAT("kicks_suppressed", kicks_suppressed),
	VNAPI_QSTAT("kick_errors", kick_errors),
	VNAPI_VQSTAT("bad_used", bad_used),
	VNAPI_VQSTAT("indirect", indirect),
};

static unsigned int
vnapi_xstats_count(const struct rte_eth_dev *dev)
{
	return dev->data->nb_rx_queues * RTE_DIM(vnapi_rxq_xstats) +
	       dev->data->nb_tx_queues * RTE_DIM(vnapi_txq_xstats);
}

static int
vnapi_dev_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
			   unsigned int limit)
{
	unsigned int n = vnapi_xstats_count(dev), i = 0, k;
	uint16_t q;

	if (names == NULL || limit < n)
		return n;
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		for (k = 0; k < RTE_DIM(vnapi_rxq_xstats); k++)
			snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "rx_q%u_%s", q,
				 vnapi_rxq_xstats[k].name);
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		for (k = 0; k < RTE_DIM(vnapi_txq_xstats); k++)
			snprintf(names[i++].name, RTE_ETH_XSTATS_NAME_SIZE, "tx_q%u_%s", q,
				 vnapi_txq_xstats[k].name);
	return n;
}

static uint64_t
vnapi_xstat_read(const struct vnapi_xstat *x, const struct vnapi_queue_stats *qs,
		 const struct virtq *vq, const struct vnapi_intr_stats *is)
{
	const void *base = qs;

	switch (x->src) {
	case VNAPI_XS_QUEUE:
		break;
	case VNAPI_XS_VIRTQ:
		base = virtq_stats(vq);
		break;
	case VNAPI_XS_INTR:
		base = is;
		break;
	case VNAPI_XS_PPN:
		return is->notifications ? is->wakeup_packets / is->notifications : 0;
	}
	return *(const uint64_t *)((const char *)base + x->offset);
}

static int
vnapi_dev_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int limit)
{
	unsigned int n = vnapi_xstats_count(dev), i = 0, k;
	uint16_t q;

	if (xs == NULL || limit < n)
		return n;
	for (q = 0; q < dev->data->nb_rx_queues; q++) {
		const struct vnapi_rxq *rxq = dev->data->rx_queues[q];

		for (k = 0; k < RTE_DIM(vnapi_rxq_xstats); k++, i++) {
			xs[i].id = i;
			xs[i].value = rxq ? vnapi_xstat_read(&vnapi_rxq_xstats[k], &rxq->stats,
							     rxq->vq, &rxq->istats) : 0;
		}
	}
	for (q = 0; q < dev->data->nb_tx_queues; q++) {
		const struct vnapi_txq *txq = dev->data->tx_queues[q];

		for (k = 0; k < RTE_DIM(vnapi_txq_xstats); k++, i++) {
			xs[i].id = i;
			xs[i].value = txq ? vnapi_xstat_read(&vnapi_txq_xstats[k], &txq->stats,
							     txq->vq, NULL) : 0;
		}
	}
	return n;
}

static const struct eth_dev_ops vnapi_eth_dev_ops = {
	.dev_configure = vnapi_dev_configure,
	.dev_start = vnapi_dev_start,
	.dev_stop = vnapi_dev_stop,
	.dev_close = vnapi_dev_close,
	.dev_reset = vnapi_dev_reset,
	.dev_infos_get = vnapi_dev_infos_get,
	.link_update = vnapi_dev_link_update,
	.promiscuous_enable = vnapi_dev_accept,
	.promiscuous_disable = vnapi_dev_accept,
	.allmulticast_enable = vnapi_dev_accept,
	.allmulticast_disable = vnapi_dev_accept,
	.mac_addr_set = vnapi_dev_mac_addr_set,
	.mtu_set = vnapi_dev_mtu_set,
	.stats_get = vnapi_dev_stats_get,
	.stats_reset = vnapi_dev_stats_reset,
	.xstats_get = vnapi_dev_xstats_get,
	.xstats_get_names = vnapi_dev_xstats_get_names,
	.xstats_reset = vnapi_dev_stats_reset,
	.rx_queue_setup = vnapi_dev_rx_queue_setup,
	.rx_queue_release = vnapi_dev_rx_queue_release,
	.tx_queue_setup = vnapi_dev_tx_queue_setup,
	.tx_queue_release = vnapi_dev_tx_queue_release,
	.tx_done_cleanup = vnapi_tx_done_cleanup,
	.rx_queue_intr_enable = vnapi_dev_rx_queue_intr_enable,
	.rx_queue_intr_disable = vnapi_dev_rx_queue_intr_disable,
	.dev_supported_ptypes_get = vnapi_dev_supported_ptypes_get,
	.dev_ptypes_set = vnapi_dev_ptypes_set,
	.get_monitor_addr = vnapi_get_monitor_addr,
};

/* ---------------------------------------------------------- probe/remove */

static int
vnapi_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct vnapi_params params;
	struct rte_eth_dev *dev;
	struct vnapi_proc *proc;
	struct vnapi_hw *hw;
	unsigned int i;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		VNAPI_INIT_LOG(ERR, "%s: secondary processes are not supported yet", name);
		return -ENOTSUP;
	}
	ret = vnapi_parse_devargs(name, rte_vdev_device_args(vdev), &params);
	if (ret != 0)
		return ret;

	dev = rte_eth_vdev_allocate(vdev, sizeof(struct vnapi_hw));
	if (dev == NULL)
		return -ENOMEM;
	hw = dev->data->dev_private;
	hw->params = params;

	proc = rte_zmalloc_socket("vnapi_proc", sizeof(*proc), RTE_CACHE_LINE_SIZE,
				  rte_socket_id());
	if (proc == NULL) {
		ret = -ENOMEM;
		goto err_release;
	}
	proc->vu.sock = -1;
	for (i = 0; i < VNAPI_MAX_VRINGS; i++) {
		proc->kickfd[i] = -1;
		proc->callfd[i] = -1;
	}
	proc->sock_intr = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (proc->sock_intr == NULL) {
		ret = -ENOMEM;
		goto err_free_proc;
	}
	dev->process_private = proc;

	ret = vnapi_backend_connect(dev);
	if (ret != 0)
		goto err_free_intr;
	vnapi_log_features(name, hw);

	dev->data->mac_addrs = rte_zmalloc_socket("vnapi_mac", sizeof(struct rte_ether_addr), 0,
						  rte_socket_id());
	if (dev->data->mac_addrs == NULL) {
		ret = -ENOMEM;
		goto err_disconnect;
	}
	if (params.mac_set)
		rte_ether_addr_copy(&params.mac, dev->data->mac_addrs);
	else
		rte_eth_random_addr(dev->data->mac_addrs->addr_bytes);

	dev->dev_ops = &vnapi_eth_dev_ops;
	dev->rx_queue_count = vnapi_rx_queue_count;
	dev->rx_descriptor_status = vnapi_rx_descriptor_status;
	dev->tx_descriptor_status = vnapi_tx_descriptor_status;
	hw->parse_ptype = true;
	dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC;
	dev->data->promiscuous = 1;
	dev->data->all_multicast = 1;
	vnapi_link_set(dev, false);
	rte_eth_dev_probing_finish(dev);
	VNAPI_INIT_LOG(INFO, "%s: port %u on %s, %u queue pair(s), ring size %u",
		       name, dev->data->port_id, params.path, params.queues, params.queue_size);
	return 0;

err_disconnect:
	vnapi_vhost_user_close(&proc->vu);
err_free_intr:
	rte_intr_instance_free(proc->sock_intr);
err_free_proc:
	rte_free(proc);
	dev->process_private = NULL;
err_release:
	rte_eth_dev_release_port(dev);
	return ret;
}

static int
vnapi_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));

	if (dev == NULL)
		return 0; /* already gone */
	vnapi_dev_close(dev);
	return rte_eth_dev_release_port(dev);
}

static struct rte_vdev_driver vnapi_vdev_driver = {
	.probe = vnapi_probe,
	.remove = vnapi_remove,
};

RTE_PMD_REGISTER_VDEV(net_vnapi, vnapi_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_vnapi,
	VNAPI_ARG_PATH "=<vhost-user socket path> "
	VNAPI_ARG_QUEUES "=<1-16> "
	VNAPI_ARG_QUEUE_SIZE "=<64-32768, power of 2> "
	VNAPI_ARG_MAC "=<xx:xx:xx:xx:xx:xx> "
	VNAPI_ARG_MRG_RXBUF "=<0|1> "
	VNAPI_ARG_EVENT_IDX "=<0|1> "
	VNAPI_ARG_INTR_RESCUE "=<signal|eagain> "
	VNAPI_ARG_PACKED_VQ "=<0|1> "
	VNAPI_ARG_INDIRECT "=<0|1>");
