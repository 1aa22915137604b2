/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * A loop device: a net_vnapi port whose device is the test itself (see
 * loop_device.h). Its transport is a struct vnapi_device_ops of its own;
 * the rings it is handed are attached to fake devices, the rx one for the
 * test to serve.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include <dev_driver.h>
#include <ethdev_driver.h>

#include "loop_device.h"
#include "vnapi_dev.h"
#include "vnapi_devargs.h"
#include "vnapi_ethdev.h"
#include "vnapi_features.h"
#include "vnapi_net_hdr.h"
#include "vnapi_transport.h"

/* The longest buffer a receive chain offers (mbuf data room + header). */
#define LOOP_BUF_MAX 16384

struct loop_dev {
	struct loop_cfg cfg;
	uint16_t port;
	bool created;
	bool started;
	uint64_t offered;
	uint64_t features;
	/* The device halves of vring 0 (rx) and 1 (tx), attached at vring_start. */
	struct fake_dev ring[2];
	bool attached[2];
	uint64_t kicks[2];
	char name[RTE_ETH_NAME_MAX_LEN];
	/* What rte_eth_dev_info_get() reads through dev->device. */
	struct rte_driver drv;
	struct rte_device rte_dev;
};

/* The transport's per-process state: which loop device. */
struct loop_state {
	struct loop_dev *ld;
};

static struct loop_dev *
loop_of(const struct rte_eth_dev *dev)
{
	const struct vnapi_proc *proc = dev->process_private;

	return ((const struct loop_state *)proc->transport)->ld;
}

static int
loop_features_get(struct rte_eth_dev *dev, uint64_t *offered, uint16_t *max_qp)
{
	*offered = loop_of(dev)->offered;
	*max_qp = 1;
	return 0;
}

static int
loop_set_features(struct rte_eth_dev *dev, uint64_t features)
{
	loop_of(dev)->features = features;
	return 0;
}

/* Same process, same addresses: the rings carry our virtual addresses. */
static int
loop_set_memory(struct rte_eth_dev *dev __rte_unused)
{
	return 0;
}

static void
loop_detach(struct loop_dev *ld, uint16_t vring)
{
	if (vring < 2 && ld->attached[vring]) {
		fake_dev_fini(&ld->ring[vring]);
		ld->attached[vring] = false;
	}
}

/* SET_VRING_BASE + SET_VRING_ADDR, as the fake device takes them. */
static int
loop_vring_start(struct rte_eth_dev *dev, uint16_t vring, const struct virtq *vq)
{
	struct loop_dev *ld = loop_of(dev);
	int ret;

	if (vring >= 2)
		return -EINVAL;
	loop_detach(ld, vring);
	ret = fake_dev_init_posted(&ld->ring[vring], virtq_params(vq), virtq_vring_base(vq),
			    virtq_desc_area(vq), virtq_driver_area(vq), virtq_device_area(vq));
	if (ret != 0) {
		printf("# loop device %s: ring %u: fake_dev_init_posted: %d (%s)\n", ld->name, vring,
		       ret, ld->ring[vring].error);
		return ret;
	}
	ld->attached[vring] = true;
	return 0;
}

static int
loop_vring_enable(struct rte_eth_dev *dev __rte_unused, uint16_t vring __rte_unused,
		  bool enable __rte_unused)
{
	return 0;
}

/* The device lets the ring go: whatever it held stays the driver's. */
static int
loop_vring_stop(struct rte_eth_dev *dev, uint16_t vring)
{
	loop_detach(loop_of(dev), vring);
	return 0;
}

static int
loop_set_status(struct rte_eth_dev *dev __rte_unused, uint8_t status __rte_unused)
{
	return 0;
}

static bool
loop_notify(struct rte_eth_dev *dev, uint16_t vring)
{
	struct loop_dev *ld = loop_of(dev);

	if (vring < 2) {
		ld->kicks[vring]++;
		if (ld->attached[vring])
			fake_dev_kick(&ld->ring[vring]);
	}
	return true;
}

static bool
loop_serving(const struct rte_eth_dev *dev __rte_unused)
{
	return true;
}

static void
loop_release(struct rte_eth_dev *dev)
{
	struct loop_dev *ld = loop_of(dev);

	loop_detach(ld, 0);
	loop_detach(ld, 1);
}

static const struct vnapi_device_ops loop_device_ops = {
	.name = "loop",
	.features_get = loop_features_get,
	.set_features = loop_set_features,
	.set_memory = loop_set_memory,
	.vring_start = loop_vring_start,
	.vring_enable = loop_vring_enable,
	.vring_stop = loop_vring_stop,
	.set_status = loop_set_status,
	.notify = loop_notify,
	.serving = loop_serving,
	.release = loop_release,
	.state_size = sizeof(struct loop_state),
};

/* The driver's probe, with this transport (as vnapi_probe_pci.c does it). */
static int
loop_probe(struct loop_dev *ld)
{
	struct vnapi_params params;
	struct rte_eth_dev *dev;
	struct vnapi_proc *proc;
	struct vnapi_hw *hw;
	char args[128];
	int ret;

	snprintf(args, sizeof(args), "packed_vq=%d,mrg_rxbuf=%d,in_order=%d,event_idx=%d,queue_size=%u",
		 ld->cfg.packed, ld->cfg.mrg, ld->cfg.in_order, ld->cfg.event_idx, ld->cfg.ring);
	ret = vnapi_devargs_parse_pci(ld->name, args, &params);
	if (ret != 0)
		return ret;
	params.reconnect_ms = 0;
	dev = rte_eth_dev_allocate(ld->name);
	if (dev == NULL)
		return -ENOMEM;
	dev->data->dev_private = rte_zmalloc_socket(ld->name, sizeof(struct vnapi_hw),
						    RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (dev->data->dev_private == NULL) {
		rte_eth_dev_release_port(dev);
		return -ENOMEM;
	}
	dev->device = &ld->rte_dev;
	hw = dev->data->dev_private;
	hw->params = params;
	proc = vnapi_proc_alloc(&loop_device_ops, NULL, SOCKET_ID_ANY);
	if (proc == NULL) {
		vnapi_eth_dev_probe_undo(dev, false);
		return -ENOMEM;
	}
	((struct loop_state *)proc->transport)->ld = ld;
	snprintf(proc->peer, sizeof(proc->peer), "loop device %s", ld->name);
	dev->process_private = proc;
	ld->port = dev->data->port_id;
	return vnapi_eth_dev_probe_finish(dev, SOCKET_ID_ANY);
}

struct loop_dev *
loop_dev_create(const char *name, const struct loop_cfg *cfg, struct rte_mempool *rx_pool)
{
	struct rte_eth_conf conf;
	struct loop_dev *ld;
	int ret;

	ld = calloc(1, sizeof(*ld));
	if (ld == NULL)
		return NULL;
	ld->cfg = *cfg;
	snprintf(ld->name, sizeof(ld->name), "%s", name);
	ld->drv.name = "net_vnapi_loop";
	ld->rte_dev.name = ld->name;
	ld->rte_dev.driver = &ld->drv;
	ld->rte_dev.numa_node = SOCKET_ID_ANY;
	ld->offered = (1ULL << VIRTIO_F_VERSION_1) |
		      (cfg->mrg ? 1ULL << VIRTIO_NET_F_MRG_RXBUF : 0) |
		      (cfg->packed ? 1ULL << VIRTIO_F_RING_PACKED : 0) |
		      (cfg->in_order ? 1ULL << VIRTIO_F_IN_ORDER : 0) |
		      (cfg->event_idx ? 1ULL << VIRTIO_F_RING_EVENT_IDX : 0) |
		      (cfg->rx_offloads ? (1ULL << VIRTIO_NET_F_GUEST_CSUM) |
		       (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6) |
		       (1ULL << VIRTIO_NET_F_GUEST_ECN) : 0);
	ret = loop_probe(ld);
	if (ret != 0) {
		printf("# loop device %s: probe: %d\n", name, ret);
		free(ld);
		return NULL;
	}
	ld->created = true;
	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.lsc = 1;
	conf.intr_conf.rxq = cfg->rx_intr;
	if (cfg->rx_offloads)
		conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
				       (cfg->mrg ? RTE_ETH_RX_OFFLOAD_TCP_LRO : 0);
	ret = rte_eth_dev_configure(ld->port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(ld->port, 0, cfg->ring, SOCKET_ID_ANY, NULL, rx_pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(ld->port, 0, cfg->ring, SOCKET_ID_ANY, NULL);
	if (ret != 0) {
		printf("# loop device %s: configure and queue setup: %d\n", name, ret);
		loop_dev_destroy(ld);
		return NULL;
	}
	return ld;
}

void
loop_dev_destroy(struct loop_dev *ld)
{
	if (ld == NULL)
		return;
	if (ld->created) {
		rte_eth_dev_stop(ld->port);
		rte_eth_dev_close(ld->port);
	}
	free(ld);
}

uint16_t
loop_dev_port(const struct loop_dev *ld)
{
	return ld->port;
}

uint16_t
loop_dev_hdr_size(const struct loop_dev *ld)
{
	const struct vnapi_hw *hw = rte_eth_devices[ld->port].data->dev_private;

	return hw->hdr_size;
}

uint64_t
loop_dev_features(const struct loop_dev *ld)
{
	return ld->features;
}

struct fake_dev *
loop_dev_rx(struct loop_dev *ld)
{
	return ld->attached[0] ? &ld->ring[0] : NULL;
}

uint64_t
loop_dev_kicks(const struct loop_dev *ld, uint16_t vring)
{
	return vring < 2 ? ld->kicks[vring] : 0;
}

int
loop_dev_rx_fill(struct loop_dev *ld, const uint8_t *frame, uint32_t len, uint16_t nbufs,
		 uint16_t num_buffers, const uint32_t *lens, uint16_t *last_id)
{
	static uint8_t buf[LOOP_BUF_MAX];
	struct fake_dev *d = loop_dev_rx(ld);
	struct fake_dev_chain c;
	struct vnapi_net_hdr hdr;
	uint16_t hdr_size = loop_dev_hdr_size(ld), i;
	uint32_t off = 0;
	int ret;

	if (d == NULL || nbufs == 0)
		return -ENOSPC;
	ret = fake_dev_avail_count(d);
	if (ret < 0)
		return ret;
	if (ret < nbufs)
		return -ENOSPC;
	memset(&hdr, 0, sizeof(hdr));
	if (ld->features & (1ULL << VIRTIO_NET_F_MRG_RXBUF))
		hdr.num_buffers = num_buffers;
	for (i = 0; i < nbufs; i++) {
		uint32_t room, n, wrote = 0;

		ret = fake_dev_pop(d, &c);
		if (ret != 1)
			return ret < 0 ? ret : -ENOSPC;
		room = c.in_len;
		if (i == 0) {
			if (room < hdr_size)
				return -ENOSPC;
			wrote = fake_dev_write(d, &c, &hdr, hdr_size);
			room -= hdr_size;
		}
		n = RTE_MIN(room, len - off);
		if (n > 0) {
			/* After the header, in the same chain: write both at once. */
			if (wrote + n > sizeof(buf))
				return -ENOSPC;
			if (wrote != 0)
				memcpy(buf, &hdr, wrote);
			memcpy(buf + wrote, frame + off, n);
			wrote = fake_dev_write(d, &c, buf, wrote + n);
			off += n;
		}
		if (lens == NULL)
			ret = fake_dev_push(d, &c, wrote);
		else if (lens[i] == LOOP_LEN_OVER)
			ret = fake_dev_push(d, &c, c.in_len + 1);
		else
			ret = fake_dev_push(d, &c, lens[i]);
		if (ret != 0)
			return ret;
		if (last_id != NULL)
			*last_id = c.id;
	}
	return off == len ? 0 : -ENOSPC;
}
