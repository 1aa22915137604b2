/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The virtio-pci transport: a modern (virtio 1.x) virtio-net PCI device,
 * mapped by DPDK's PCI bus (vfio-pci). The driver finds the vendor
 * capabilities (common, notify, ISR, device configuration), negotiates
 * through the common configuration, hands rings over by IOVA and kicks by
 * storing the queue index at the ring's notify address. Legacy (0.95)
 * devices are not driven: disable-legacy=on, or a transitional device's
 * modern interface, is what vnapi takes.
 *
 * Interrupts go through VFIO MSI-X: vector 0 for config changes (link state,
 * read from the device configuration on the EAL interrupt thread), vector
 * 1 + q for rx queue q, each wired to the eventfd the rest of the driver
 * already uses for the ring (proc->callfd), so vnapi_intr.c arms, disarms
 * and counts exactly as over vhost-user. Tx rings have no vector.
 *
 * Addresses: lib/virtq and the bursts write our virtual addresses into the
 * rings, so the transport requires IOVA as VA (EAL's choice with vfio-pci
 * behind an IOMMU), checked at start.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/vfio.h>

#include <rte_alarm.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_interrupts.h>
#include <rte_io.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_pause.h>

#include <bus_pci_driver.h>
#include <ethdev_driver.h>

#include "vnapi_ctrlq.h"
#include "vnapi_dev.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_transport_pci.h"
#include "vnapi_transport.h"

/* Vendor capability types (virtio 1.2 section 4.1.4). */
#define VNAPI_PCI_CAP_VNDR           0x09
#define VNAPI_PCI_CAP_COMMON         1
#define VNAPI_PCI_CAP_NOTIFY         2
#define VNAPI_PCI_CAP_ISR            3
#define VNAPI_PCI_CAP_DEVICE         4
#define VNAPI_PCI_CFG_STATUS         0x06
#define VNAPI_PCI_CFG_STATUS_CAPS    0x10
#define VNAPI_PCI_CFG_CAP_PTR        0x34

/* Common configuration layout (virtio 1.2 section 4.1.4.3). */
#define VNAPI_PCI_DFSELECT     0
#define VNAPI_PCI_DF           4
#define VNAPI_PCI_GFSELECT     8
#define VNAPI_PCI_GF           12
#define VNAPI_PCI_MSIX_CONFIG  16
#define VNAPI_PCI_NUM_QUEUES   18
#define VNAPI_PCI_STATUS       20
#define VNAPI_PCI_CFG_GEN      21
#define VNAPI_PCI_Q_SELECT     22
#define VNAPI_PCI_Q_SIZE       24
#define VNAPI_PCI_Q_MSIX       26
#define VNAPI_PCI_Q_ENABLE     28
#define VNAPI_PCI_Q_NOFF       30
#define VNAPI_PCI_Q_DESC       32
#define VNAPI_PCI_Q_DRIVER     40
#define VNAPI_PCI_Q_DEVICE     48

/* virtio-net device configuration (virtio 1.2 section 5.1.4). */
#define VNET_CFG_MAC      0
#define VNET_CFG_STATUS   6
#define VNET_S_LINK_UP    1
#define VNET_CFG_MAX_QP   8

#define VNAPI_PCI_RESET_TIMEOUT_MS    1000

struct vnapi_pci_cap {
	uint8_t vndr;
	uint8_t next;
	uint8_t len;
	uint8_t type;
	uint8_t bar;
	uint8_t id;
	uint8_t pad[2];
	uint32_t offset;
	uint32_t length;
};

static struct vnapi_pci *
vnapi_pci_of(const struct rte_eth_dev *dev)
{
	return ((const struct vnapi_proc *)dev->process_private)->transport;
}

static void
vnapi_pci_w8(struct vnapi_pci *p, unsigned int off, uint8_t v)
{
	rte_write8(v, p->common + off);
}

static void
vnapi_pci_w16(struct vnapi_pci *p, unsigned int off, uint16_t v)
{
	rte_write16(v, p->common + off);
}

static void
vnapi_pci_w32(struct vnapi_pci *p, unsigned int off, uint32_t v)
{
	rte_write32(v, p->common + off);
}

/* 64-bit fields as two 32-bit stores, low half first (the spec allows it). */
static void
vnapi_pci_w64(struct vnapi_pci *p, unsigned int off, uint64_t v)
{
	vnapi_pci_w32(p, off, (uint32_t)v);
	vnapi_pci_w32(p, off + 4, (uint32_t)(v >> 32));
}

static uint8_t
vnapi_pci_r8(struct vnapi_pci *p, unsigned int off)
{
	return rte_read8(p->common + off);
}

static uint16_t
vnapi_pci_r16(struct vnapi_pci *p, unsigned int off)
{
	return rte_read16(p->common + off);
}

static uint32_t
vnapi_pci_r32(struct vnapi_pci *p, unsigned int off)
{
	return rte_read32(p->common + off);
}

static void *
vnapi_pci_cap_addr(struct rte_pci_device *pd, const struct vnapi_pci_cap *c, const char *name)
{
	const struct rte_mem_resource *r;

	if (c->bar >= PCI_MAX_RESOURCE)
		return NULL;
	r = &pd->mem_resource[c->bar];
	if (r->addr == NULL || (uint64_t)c->offset + c->length > r->len) {
		VNAPI_INIT_LOG(ERR, "%s: virtio capability %u outside BAR %u (mapped: %s)",
			       name, c->type, c->bar, r->addr ? "yes" : "no");
		return NULL;
	}
	return (uint8_t *)r->addr + c->offset;
}

int
vnapi_pci_init(struct vnapi_pci *p, struct rte_pci_device *pd, const char *name)
{
	uint8_t pos = 0;
	uint16_t status = 0;
	unsigned int hops = 0;
	uint32_t info_cnt;
	struct vfio_irq_info info = { .argsz = sizeof(info), .index = VFIO_PCI_MSIX_IRQ_INDEX };

	memset(p, 0, sizeof(*p));
	p->pci_dev = pd;
	p->vfio_fd = -1;
	p->cfg_fd = -1;
	if (rte_pci_read_config(pd, &status, sizeof(status), VNAPI_PCI_CFG_STATUS) != sizeof(status) ||
	    !(status & VNAPI_PCI_CFG_STATUS_CAPS) ||
	    rte_pci_read_config(pd, &pos, 1, VNAPI_PCI_CFG_CAP_PTR) != 1)
		pos = 0;
	/* Walk the capability list (bounded: at most 48 entries fit). */
	while (pos >= 0x40 && hops++ < 48) {
		struct vnapi_pci_cap c;

		if (rte_pci_read_config(pd, &c, sizeof(c), pos) != sizeof(c))
			break;
		if (c.vndr == VNAPI_PCI_CAP_VNDR) {
			switch (c.type) {
			case VNAPI_PCI_CAP_COMMON:
				if (p->common == NULL)
					p->common = vnapi_pci_cap_addr(pd, &c, name);
				break;
			case VNAPI_PCI_CAP_NOTIFY:
				if (p->notify_base == NULL &&
				    rte_pci_read_config(pd, &p->notify_mult, sizeof(p->notify_mult),
							pos + sizeof(c)) == sizeof(p->notify_mult))
					p->notify_base = vnapi_pci_cap_addr(pd, &c, name);
				break;
			case VNAPI_PCI_CAP_ISR:
				if (p->isr == NULL)
					p->isr = vnapi_pci_cap_addr(pd, &c, name);
				break;
			case VNAPI_PCI_CAP_DEVICE:
				if (p->devcfg == NULL) {
					p->devcfg = vnapi_pci_cap_addr(pd, &c, name);
					p->devcfg_len = c.length;
				}
				break;
			default:
				break;
			}
		}
		pos = c.next;
	}
	if (p->common == NULL || p->notify_base == NULL || p->devcfg == NULL) {
		VNAPI_INIT_LOG(ERR, "%s: no modern virtio capabilities (common %s, notify %s, device %s): vnapi drives virtio 1.x PCI devices only (QEMU: disable-legacy=on)",
			       name, p->common ? "ok" : "missing", p->notify_base ? "ok" : "missing",
			       p->devcfg ? "ok" : "missing");
		return -ENODEV;
	}
	if (pd->kdrv == RTE_PCI_KDRV_VFIO) {
		p->vfio_fd = rte_intr_dev_fd_get(pd->intr_handle);
		if (p->vfio_fd >= 0 && ioctl(p->vfio_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) == 0)
			p->msix_table = info.count;
	}
	info_cnt = p->msix_table;
	VNAPI_INIT_LOG(INFO, "%s: virtio-pci modern device, notify multiplier %u, %u MSI-X vectors%s",
		       name, p->notify_mult, info_cnt,
		       p->vfio_fd < 0 ? " (not vfio-pci: no interrupts, poll mode only)" : "");
	return 0;
}

/* Write 0 and wait until the device reads back 0 (reset done). */
static int
vnapi_pci_reset(struct rte_eth_dev *dev)
{
	struct vnapi_pci *p = vnapi_pci_of(dev);
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * VNAPI_PCI_RESET_TIMEOUT_MS / 1000;

	vnapi_pci_w8(p, VNAPI_PCI_STATUS, 0);
	while (vnapi_pci_r8(p, VNAPI_PCI_STATUS) != 0) {
		if (rte_get_timer_cycles() > end) {
			VNAPI_INIT_LOG(ERR, "%s: virtio-pci device did not reset within %u ms",
				       dev->data->name, VNAPI_PCI_RESET_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		rte_delay_us_sleep(100);
	}
	return 0;
}

static void
vnapi_pci_status_or(struct vnapi_pci *p, uint8_t bits)
{
	vnapi_pci_w8(p, VNAPI_PCI_STATUS, vnapi_pci_r8(p, VNAPI_PCI_STATUS) | bits);
}

/* Read device configuration bytes consistently (config_generation loop). */
static void
vnapi_pci_devcfg_read(struct vnapi_pci *p, unsigned int off, void *buf, unsigned int len)
{
	uint8_t gen, *b = buf;
	unsigned int i, tries = 0;

	do {
		gen = vnapi_pci_r8(p, VNAPI_PCI_CFG_GEN);
		for (i = 0; i < len && off + i < p->devcfg_len; i++)
			b[i] = rte_read8(p->devcfg + off + i);
	} while (vnapi_pci_r8(p, VNAPI_PCI_CFG_GEN) != gen && ++tries < 100);
}

static bool
vnapi_pci_link_up(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	uint16_t st = VNET_S_LINK_UP;

	if (vnapi_has_feature(hw, VIRTIO_NET_F_STATUS))
		vnapi_pci_devcfg_read(vnapi_pci_of(dev), VNET_CFG_STATUS, &st, sizeof(st));
	return (rte_le_to_cpu_16(st) & VNET_S_LINK_UP) != 0;
}

/*
 * Every existing ring's notify address (the rx refill at start may kick
 * before its ring is handed over; the device ignores that). Called again
 * after FEATURES_OK: QEMU creates the rings of the other pairs only once MQ
 * is negotiated. Returns the device's number of queues.
 */
static uint16_t
vnapi_pci_notify_addrs(struct vnapi_pci *p)
{
	uint16_t q, nq = RTE_MIN(vnapi_pci_r16(p, VNAPI_PCI_NUM_QUEUES), (uint16_t)VNAPI_MAX_VRINGS);

	for (q = 0; q < nq; q++) {
		vnapi_pci_w16(p, VNAPI_PCI_Q_SELECT, q);
		p->notify_addr[q] = RTE_PTR_ADD(p->notify_base,
				(uint32_t)vnapi_pci_r16(p, VNAPI_PCI_Q_NOFF) * p->notify_mult);
	}
	return nq;
}

/* Reset and read what the device offers (there from probe on). */
static int
vnapi_pci_features_get(struct rte_eth_dev *dev, uint64_t *offered, uint16_t *max_qp)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_pci *p = vnapi_pci_of(dev);
	uint16_t q, nq;
	uint32_t lo, hi;
	int ret;

	ret = vnapi_pci_reset(dev);
	if (ret != 0)
		return ret;
	vnapi_pci_status_or(p, VIRTIO_STATUS_ACKNOWLEDGE);
	vnapi_pci_status_or(p, VIRTIO_STATUS_DRIVER);
	vnapi_pci_w32(p, VNAPI_PCI_DFSELECT, 0);
	lo = vnapi_pci_r32(p, VNAPI_PCI_DF);
	vnapi_pci_w32(p, VNAPI_PCI_DFSELECT, 1);
	hi = vnapi_pci_r32(p, VNAPI_PCI_DF);
	*offered = ((uint64_t)hi << 32) | lo;
	if (!(*offered & (1ULL << VIRTIO_F_VERSION_1))) {
		VNAPI_INIT_LOG(ERR, "%s: device does not offer VERSION_1", dev->data->name);
		return -ENOTSUP;
	}
	/* Multiqueue over PCI: the queue pairs in use are set through the
	 * control virtqueue (VQ_PAIRS_SET), so MQ goes with CTRL_VQ. */
	*max_qp = 1;
	p->dev_max_qp = 1;
	if ((*offered & (1ULL << VIRTIO_NET_F_MQ)) && (*offered & (1ULL << VIRTIO_NET_F_CTRL_VQ))) {
		uint16_t mq = 1;

		vnapi_pci_devcfg_read(p, VNET_CFG_MAX_QP, &mq, sizeof(mq));
		p->dev_max_qp = RTE_MAX(rte_le_to_cpu_16(mq), (uint16_t)1);
		*max_qp = RTE_MIN(p->dev_max_qp, (uint16_t)VNAPI_MAX_QUEUE_PAIRS);
	} else {
		*offered &= ~(1ULL << VIRTIO_NET_F_MQ);
	}
	nq = vnapi_pci_notify_addrs(p);
	hw->max_ring = VNAPI_MAX_QUEUE_SIZE;
	for (q = 0; q < RTE_MIN(nq, 2); q++) {
		/* the rings of a pair; a control queue may be smaller */
		vnapi_pci_w16(p, VNAPI_PCI_Q_SELECT, q);
		hw->max_ring = RTE_MIN(hw->max_ring, vnapi_pci_r16(p, VNAPI_PCI_Q_SIZE));
	}
	if (nq < 2) {
		VNAPI_INIT_LOG(ERR, "%s: device has %u virtqueues, at least 2 needed",
			       dev->data->name, nq);
		return -ENODEV;
	}
	p->has_mac = (*offered >> VIRTIO_NET_F_MAC) & 1;
	if (p->has_mac)
		vnapi_pci_devcfg_read(p, VNET_CFG_MAC, p->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	((struct vnapi_proc *)dev->process_private)->dev_mac = p->has_mac ? &p->mac : NULL;
	return 0;
}

static void
vnapi_pci_irqs_off(struct vnapi_pci *p)
{
	struct vfio_irq_set set = {
		.argsz = sizeof(set),
		.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
		.index = VFIO_PCI_MSIX_IRQ_INDEX,
		.start = 0,
		.count = 0,
	};

	if (p->msix_enabled == 0 || p->vfio_fd < 0)
		return;
	if (ioctl(p->vfio_fd, VFIO_DEVICE_SET_IRQS, &set) != 0)
		VNAPI_INIT_LOG(WARNING, "vnapi-pci: cannot disable MSI-X: %s", strerror(errno));
	p->msix_enabled = 0;
}

/*
 * Wire MSI-X: vector 0 to the config eventfd, vector 1 + q to rx queue q's
 * call eventfd, as many as the device has (all rx queues when the
 * application asked for rx interrupts, or it is an error).
 */
static int
vnapi_pci_irqs_on(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_pci *p = proc->transport;
	uint16_t nb_rxq = dev->data->nb_rx_queues, q;
	uint32_t n = RTE_MIN(p->msix_table, (uint32_t)nb_rxq + 1);
	char buf[sizeof(struct vfio_irq_set) + sizeof(int) * (VNAPI_MAX_QUEUE_PAIRS + 1)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
	int *fds = (int *)&set->data;

	vnapi_pci_irqs_off(p);
	if (dev->data->dev_conf.intr_conf.rxq && (p->vfio_fd < 0 || n < (uint32_t)nb_rxq + 1)) {
		VNAPI_INIT_LOG(ERR, "%s: rx interrupts need %u MSI-X vectors through vfio-pci (1 for config, 1 per rx queue); the device has %u%s",
			       dev->data->name, nb_rxq + 1, p->msix_table,
			       p->vfio_fd < 0 ? " and is not bound to vfio-pci" : "");
		return -ENOTSUP;
	}
	if (n == 0)
		return 0; /* poll mode: no vectors at all */
	if (p->cfg_fd < 0) {
		p->cfg_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (p->cfg_fd < 0)
			return -errno;
	}
	memset(buf, 0, sizeof(buf));
	set->argsz = sizeof(*set) + sizeof(int) * n;
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_MSIX_IRQ_INDEX;
	set->start = 0;
	set->count = n;
	fds[VNAPI_PCI_CONFIG_VECTOR] = p->cfg_fd;
	for (q = 0; (uint32_t)q + 1 < n; q++)
		fds[q + 1] = proc->callfd[2 * q];
	if (ioctl(p->vfio_fd, VFIO_DEVICE_SET_IRQS, set) != 0) {
		int err = errno;

		VNAPI_INIT_LOG(ERR, "%s: VFIO MSI-X setup (%u vectors): %s", dev->data->name, n,
			       strerror(err));
		return -err;
	}
	p->msix_enabled = n;
	return 0;
}

/* Reset, then negotiate @p features again (every start), then MSI-X. */
static int
vnapi_pci_set_features(struct rte_eth_dev *dev, uint64_t features)
{
	const struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_pci *p = vnapi_pci_of(dev);
	int ret;

	ret = vnapi_pci_reset(dev);
	if (ret != 0)
		return ret;
	/* MQ is set up through the control virtqueue (mq_features). */
	p->ctrl = (features >> VIRTIO_NET_F_CTRL_VQ) & 1;
	vnapi_pci_status_or(p, VIRTIO_STATUS_ACKNOWLEDGE);
	vnapi_pci_status_or(p, VIRTIO_STATUS_DRIVER);
	vnapi_pci_w32(p, VNAPI_PCI_GFSELECT, 0);
	vnapi_pci_w32(p, VNAPI_PCI_GF, (uint32_t)features);
	vnapi_pci_w32(p, VNAPI_PCI_GFSELECT, 1);
	vnapi_pci_w32(p, VNAPI_PCI_GF, (uint32_t)(features >> 32));
	vnapi_pci_status_or(p, VIRTIO_STATUS_FEATURES_OK);
	if (!(vnapi_pci_r8(p, VNAPI_PCI_STATUS) & VIRTIO_STATUS_FEATURES_OK)) {
		VNAPI_INIT_LOG(ERR, "%s: device refused features 0x%" PRIx64, dev->data->name,
			       features);
		return -ENOTSUP;
	}
	if (vnapi_pci_notify_addrs(p) < 2 * hw->nb_qp) {
		VNAPI_INIT_LOG(ERR, "%s: device has too few virtqueues for %u queue pairs",
			       dev->data->name, hw->nb_qp);
		return -ENODEV;
	}
	ret = vnapi_pci_irqs_on(dev);
	if (ret != 0)
		return ret;
	if (p->msix_enabled > 0) {
		vnapi_pci_w16(p, VNAPI_PCI_MSIX_CONFIG, VNAPI_PCI_CONFIG_VECTOR);
		if (vnapi_pci_r16(p, VNAPI_PCI_MSIX_CONFIG) == VNAPI_PCI_NO_VECTOR)
			VNAPI_INIT_LOG(WARNING, "%s: device took no config vector: no link-state events",
				       dev->data->name);
	}
	return 0;
}

/* DPDK's memory is already mapped for the device by EAL (VFIO DMA maps);
 * what the rings carry are virtual addresses, so IOVA must be VA. */
static int
vnapi_pci_set_memory(struct rte_eth_dev *dev)
{
	if (rte_eal_iova_mode() != RTE_IOVA_VA) {
		VNAPI_INIT_LOG(ERR, "%s: the virtio-pci transport needs IOVA as VA (vfio-pci behind an IOMMU; EAL --iova-mode=va)",
			       dev->data->name);
		return -ENOTSUP;
	}
	return 0;
}

static int
vnapi_pci_vring_start(struct rte_eth_dev *dev, uint16_t vring, const struct virtq *vq)
{
	struct vnapi_pci *p = vnapi_pci_of(dev);
	const struct virtq_params *vp = virtq_params(vq);
	uint16_t max, vec = VNAPI_PCI_NO_VECTOR, got;

	vnapi_pci_w16(p, VNAPI_PCI_Q_SELECT, vring);
	max = vnapi_pci_r16(p, VNAPI_PCI_Q_SIZE);
	if (max == 0 || vp->num > max) {
		VNAPI_INIT_LOG(ERR, "%s: ring %u: device queue size %u, ring of %u asked (queue_size devarg)",
			       dev->data->name, vring, max, vp->num);
		return -EINVAL;
	}
	vnapi_pci_w16(p, VNAPI_PCI_Q_SIZE, vp->num);
	if (vring % 2 == 0 && (uint32_t)vring / 2 + 1 < p->msix_enabled)
		vec = vring / 2 + 1;
	vnapi_pci_w16(p, VNAPI_PCI_Q_MSIX, vec);
	got = vnapi_pci_r16(p, VNAPI_PCI_Q_MSIX);
	if (got != vec) {
		VNAPI_INIT_LOG(ERR, "%s: ring %u: device refused MSI-X vector %u", dev->data->name,
			       vring, vec);
		return -ENOSPC;
	}
	vnapi_pci_w64(p, VNAPI_PCI_Q_DESC, rte_mem_virt2iova(virtq_desc_area(vq)));
	vnapi_pci_w64(p, VNAPI_PCI_Q_DRIVER, rte_mem_virt2iova(virtq_driver_area(vq)));
	vnapi_pci_w64(p, VNAPI_PCI_Q_DEVICE, rte_mem_virt2iova(virtq_device_area(vq)));
	return 0;
}

/* A ring runs once enabled; it stops only with the whole device (reset). */
static int
vnapi_pci_vring_enable(struct rte_eth_dev *dev, uint16_t vring, bool enable)
{
	struct vnapi_pci *p = vnapi_pci_of(dev);

	if (!enable)
		return 0;
	vnapi_pci_w16(p, VNAPI_PCI_Q_SELECT, vring);
	vnapi_pci_w16(p, VNAPI_PCI_Q_ENABLE, 1);
	return 0;
}

/* Without VIRTIO_F_RING_RESET a ring is taken back by resetting the device:
 * the first ring's stop does it, the others find it done. */
static int
vnapi_pci_vring_stop(struct rte_eth_dev *dev, uint16_t vring __rte_unused)
{
	struct vnapi_pci *p = vnapi_pci_of(dev);

	if (vnapi_pci_r8(p, VNAPI_PCI_STATUS) == 0)
		return 0;
	return vnapi_pci_reset(dev);
}

/* Lay the control virtqueue out (anew at every start, vnapi_ctrlq.c) and
 * hand it over. */
static int
vnapi_pci_ctrl_start(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_pci *p = vnapi_pci_of(dev);
	uint16_t idx = 2 * p->dev_max_qp, max;
	struct virtq_params vp = {
		.layout = vnapi_layout(hw),
		.num = VNAPI_CTRLQ_NUM,
		.event_idx = vnapi_has_feature(hw, VIRTIO_F_RING_EVENT_IDX),
		.in_order = vnapi_has_feature(hw, VIRTIO_F_IN_ORDER),
	};
	int ret;

	vnapi_pci_w16(p, VNAPI_PCI_Q_SELECT, idx);
	max = vnapi_pci_r16(p, VNAPI_PCI_Q_SIZE);
	if (max == 0) {
		VNAPI_INIT_LOG(ERR, "%s: no control virtqueue at index %u", dev->data->name, idx);
		return -ENODEV;
	}
	vp.num = RTE_MIN(vp.num, max);
	ret = vnapi_ctrlq_prepare(&p->cvq, &vp);
	if (ret != 0)
		return ret;
	vnapi_pci_w16(p, VNAPI_PCI_Q_SIZE, vp.num);
	vnapi_pci_w16(p, VNAPI_PCI_Q_MSIX, VNAPI_PCI_NO_VECTOR);
	vnapi_pci_w64(p, VNAPI_PCI_Q_DESC, rte_mem_virt2iova(virtq_desc_area(p->cvq.vq)));
	vnapi_pci_w64(p, VNAPI_PCI_Q_DRIVER, rte_mem_virt2iova(virtq_driver_area(p->cvq.vq)));
	vnapi_pci_w64(p, VNAPI_PCI_Q_DEVICE, rte_mem_virt2iova(virtq_device_area(p->cvq.vq)));
	p->cvq.index = idx;
	p->cvq.notify = RTE_PTR_ADD(p->notify_base,
			(uint32_t)vnapi_pci_r16(p, VNAPI_PCI_Q_NOFF) * p->notify_mult);
	vnapi_pci_w16(p, VNAPI_PCI_Q_ENABLE, 1);
	return 0;
}

/* DRIVER_OK comes last; with MQ the control virtqueue is set up before it
 * and VQ_PAIRS_SET sent after it. */
static int
vnapi_pci_set_status(struct rte_eth_dev *dev, uint8_t status)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_pci *p = vnapi_pci_of(dev);
	int ret;

	if (p->ctrl && (status & VIRTIO_STATUS_DRIVER_OK)) {
		ret = vnapi_pci_ctrl_start(dev);
		if (ret != 0)
			return ret;
	}
	vnapi_pci_w8(p, VNAPI_PCI_STATUS, status);
	if (status & VIRTIO_STATUS_DRIVER_OK)
		/* The carrier as the device reports it now; config interrupts
		 * (vnapi_pci_poll) follow its changes. */
		__atomic_store_n(&hw->no_carrier, !vnapi_pci_link_up(dev), __ATOMIC_RELAXED);
	if (p->ctrl && (status & VIRTIO_STATUS_DRIVER_OK))
		return vnapi_ctrlq_mq_pairs_set(&p->cvq, dev->data->name, hw->nb_qp);
	return 0;
}

/*
 * The config eventfd (vector 0): vnapi_conn.c watches it while the device
 * is negotiated, and calls config_changed() when it is readable, which
 * reads the link status from the device configuration and updates the
 * link.
 */
static int
vnapi_pci_config_fd(const struct rte_eth_dev *dev)
{
	const struct vnapi_pci *p = vnapi_pci_of(dev);

	return p->msix_enabled > 0 ? p->cfg_fd : -1;
}

/* Config change, on the port's connection thread under vnapi_conn.c's lock. */
static bool
vnapi_pci_config_changed(struct rte_eth_dev *dev)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_pci *p = vnapi_pci_of(dev);
	uint64_t cnt;
	bool up;

	/* EAL does not read an EXT handle's fd: clear the eventfd (nonblocking;
	 * nothing pending is a spurious wakeup). */
	if (p->cfg_fd < 0 || read(p->cfg_fd, &cnt, sizeof(cnt)) != sizeof(cnt))
		return false;
	up = vnapi_pci_link_up(dev);
	if (up == !__atomic_load_n(&hw->no_carrier, __ATOMIC_RELAXED))
		return true;
	__atomic_store_n(&hw->no_carrier, !up, __ATOMIC_RELAXED);
	VNAPI_LOG(INFO, "%s: device reports link %s", dev->data->name, up ? "up" : "down");
	/* The event outside vnapi_conn.c's lock (the application's callback
	 * may call ethdev ops, which take it). */
	if (hw->started && vnapi_connected(hw) && vnapi_link_state_set(dev, up))
		vnapi_link_event_post(dev);
	return true;
}

/*
 * The device serves while it is mapped, has not set DEVICE_NEEDS_RESET
 * (virtio 1.2 section 2.1.1: it can no longer use the rings) and does not
 * read as all ones (a function that is gone).
 */
static bool
vnapi_pci_serving(const struct rte_eth_dev *dev)
{
	struct vnapi_pci *p = vnapi_pci_of(dev);
	uint8_t status;

	if (p->common == NULL)
		return false;
	status = vnapi_pci_r8(p, VNAPI_PCI_STATUS);
	return status != 0xff && (status & VIRTIO_STATUS_DEVICE_NEEDS_RESET) == 0;
}

/* Let go of the device (reset, vectors off): at close, at a port reset,
 * and when negotiation refused it. */
static void
vnapi_pci_release(struct rte_eth_dev *dev)
{
	struct vnapi_pci *p = vnapi_pci_of(dev);

	if (p == NULL || p->common == NULL)
		return;
	/* vnapi_conn.c stopped watching the config eventfd before this. */
	vnapi_link_cancel(dev);
	vnapi_pci_reset(dev);
	vnapi_pci_irqs_off(p);
	vnapi_ctrlq_free(&p->cvq);
	if (p->cfg_fd >= 0)
		close(p->cfg_fd);
	p->cfg_fd = -1;
}

/* The kick (datapath lcore): the queue index at the ring's notify address.
 * rte_write16 orders it after the ring stores that published the buffers. */
static bool
vnapi_pci_notify(struct rte_eth_dev *dev, uint16_t vring)
{
	rte_write16(vring, vnapi_pci_of(dev)->notify_addr[vring]);
	return true;
}

const struct vnapi_device_ops vnapi_pci_device_ops = {
	.name = "virtio-pci",
	.features_get = vnapi_pci_features_get,
	.set_features = vnapi_pci_set_features,
	.set_memory = vnapi_pci_set_memory,
	.vring_start = vnapi_pci_vring_start,
	.vring_enable = vnapi_pci_vring_enable,
	.vring_stop = vnapi_pci_vring_stop,
	.set_status = vnapi_pci_set_status,
	.notify = vnapi_pci_notify,
	.config_fd = vnapi_pci_config_fd,
	.config_changed = vnapi_pci_config_changed,
	.serving = vnapi_pci_serving,
	.release = vnapi_pci_release,
	.transport_features = 1ULL << VIRTIO_F_ACCESS_PLATFORM,
	.mq_features = 1ULL << VIRTIO_NET_F_CTRL_VQ,
	/* QEMU (7.2 at least) arms the packed tx ring's event at the slot it
	 * will consume next, then consumes on (virtio_net_tx_complete) without
	 * arming again: the event names a slot we already made available and
	 * no later kick matches it (doc/design.md, "virtio-pci transport"). */
	.packed_excluded = 1ULL << VIRTIO_F_RING_EVENT_IDX,
	.state_size = sizeof(struct vnapi_pci),
};
