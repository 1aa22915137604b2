/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_TRANSPORT_PCI_H_
#define _VNAPI_TRANSPORT_PCI_H_

/**
 * @file
 * @internal
 * The virtio-pci transport's per-process state (struct vnapi_proc's pci):
 * where the modern (virtio 1.x) capabilities sit in the mapped BARs, the
 * rings' notify addresses, and the VFIO MSI-X wiring.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_interrupts.h>

#include "vnapi_ctrlq.h"
#include "vnapi_dev.h"

struct rte_pci_device;

/** MSI-X vector of config changes; rx queue q uses 1 + q. */
#define VNAPI_PCI_CONFIG_VECTOR 0
#define VNAPI_PCI_NO_VECTOR     0xffff

struct vnapi_pci {
	struct rte_pci_device *pci_dev;
	uint8_t *common;                 /**< Common configuration (BAR mapping). */
	uint8_t *notify_base;            /**< Notification area. */
	uint32_t notify_mult;            /**< notify_off_multiplier. */
	uint8_t *isr;                    /**< ISR status (unused with MSI-X). */
	uint8_t *devcfg;                 /**< virtio-net device configuration. */
	uint32_t devcfg_len;
	/** Per ring: where the kick is stored (set by vring_start). */
	volatile uint16_t *notify_addr[VNAPI_MAX_VRINGS];
	int vfio_fd;                     /**< VFIO device fd, -1 without VFIO. */
	uint32_t msix_table;             /**< MSI-X vectors the device has (VFIO). */
	uint32_t msix_enabled;           /**< Vectors wired to eventfds now. */
	int cfg_fd;                      /**< Config-change eventfd (vector 0). */
	bool has_mac;
	struct rte_ether_addr mac;       /**< From the device configuration. */
	/* The control virtqueue (multiqueue only: VQ_PAIRS_SET). */
	uint16_t dev_max_qp;             /**< The device's max_virtqueue_pairs. */
	bool ctrl;                       /**< CTRL_VQ negotiated (with MQ). */
	struct vnapi_ctrlq cvq;          /**< vnapi_ctrlq.c */
};

/**
 * Find the modern virtio capabilities of @p pci_dev (BARs already mapped by
 * the bus) and fill @p pci. Returns 0, or -ENODEV (logged) for a device
 * without them (legacy only).
 */
int vnapi_pci_init(struct vnapi_pci *pci, struct rte_pci_device *pci_dev, const char *name);

#endif /* _VNAPI_TRANSPORT_PCI_H_ */
