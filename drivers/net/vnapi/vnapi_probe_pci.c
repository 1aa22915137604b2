/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The PCI driver net_vnapi_pci: virtio-net 1.x devices (1af4:1041) through
 * the virtio-pci transport (vnapi_transport_pci.c).
 *
 * It never takes a device by accident: probe declines (returns 1, so the PCI
 * bus offers the device to the next driver, e.g. DPDK's net_virtio) unless
 * the device's devargs carry vnapi=1, as in
 *   -a 0000:00:03.0,vnapi=1[,packed_vq=1,...]
 * The other devargs are net_vnapi's (VNAPI_DEVARGS) whose pci column says
 * VNAPI_PCI_YES; the vhost-user ones (path, server, reconnect_ms) are
 * refused by name (vnapi_devargs_parse_pci).
 * Load the plugin with -d: EAL loads -d plugins before its plugin directory, so
 * vnapi's PCI driver is asked before net_virtio is.
 *
 * A secondary process (dpdk-proc-info) passes the same allow-list entry
 * (vnapi=1) and attaches to the primary's port as on the vdev.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_devargs.h>
#include <rte_ether.h>
#include <rte_string_fns.h>

#include <bus_pci_driver.h>
#include <ethdev_driver.h>
#include <ethdev_pci.h>

#include "vnapi_dev.h"
#include "vnapi_devargs.h"
#include "vnapi_ethdev.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_transport_pci.h"
#include "vnapi_rxtx.h"
#include "vnapi_transport.h"

#define VNAPI_PCI_OPT_IN "vnapi=1"
#define VNAPI_PCI_ARGS_MAX 512

/*
 * Split the device's devargs into the opt-in (vnapi=1) and the rest, which
 * go to the devargs parser. Returns true if the user asked for vnapi.
 */
static bool
vnapi_pci_args(const char *args, char *rest, size_t size)
{
	bool wanted = false;
	const char *s = args != NULL ? args : "";
	size_t off = 0;

	rest[0] = '\0';
	while (*s != '\0') {
		size_t len = strcspn(s, ",");

		if (len == strlen(VNAPI_PCI_OPT_IN) && strncmp(s, VNAPI_PCI_OPT_IN, len) == 0) {
			wanted = true;
		} else if (len > 0 && off + len + 2 <= size) {
			off += snprintf(rest + off, size - off, "%s%.*s", off ? "," : "",
					(int)len, s);
		}
		s += len;
		if (*s == ',')
			s++;
	}
	return wanted;
}

static int
vnapi_pci_probe(struct rte_pci_driver *drv __rte_unused, struct rte_pci_device *pd)
{
	const char *name = pd->device.name;
	char rest[VNAPI_PCI_ARGS_MAX];
	struct vnapi_params params;
	struct rte_eth_dev *dev;
	struct vnapi_proc *proc;
	struct vnapi_hw *hw;
	bool wanted;
	int ret;

	wanted = vnapi_pci_args(pd->device.devargs ? pd->device.devargs->args : NULL, rest,
				sizeof(rest));
	/* A secondary (dpdk-proc-info, dpdk-dumpcap) attaches to the primary's
	 * port; the bus mapped the BARs for it too, but it never touches the
	 * device. Without vnapi=1 (dumpcap passes no allow-list) only if the
	 * primary's port for the device is vnapi's. */
	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return vnapi_eth_dev_attach_secondary(&pd->device, name, &vnapi_pci_device_ops,
						      !wanted);
	if (!wanted)
		return 1; /* not asked for: leave the device to another driver */
	ret = vnapi_devargs_parse_pci(name, rest, &params);
	if (ret != 0)
		return ret;
	/* The device never goes away: vnapi_conn.c has nothing to reconnect. */
	params.reconnect_ms = 0;

	dev = rte_eth_dev_pci_allocate(pd, sizeof(struct vnapi_hw));
	if (dev == NULL)
		return -ENOMEM;
	/* The PCI device's interrupt handle stays the bus's: the rx interrupt
	 * handle is vnapi_intr.c's own, over the rings' eventfds. */
	dev->intr_handle = NULL;
	hw = dev->data->dev_private;
	hw->params = params;

	proc = vnapi_proc_alloc(&vnapi_pci_device_ops, NULL, pd->device.numa_node);
	if (proc == NULL) {
		ret = -ENOMEM;
		goto err_release;
	}
	rte_strscpy(proc->peer, pd->device.name, sizeof(proc->peer));
	dev->process_private = proc;
	ret = vnapi_pci_init(proc->transport, pd, name);
	if (ret != 0)
		goto err_release;
	/* From here on, the probe's tail undoes the port itself on failure. */
	ret = vnapi_eth_dev_probe_finish(dev, pd->device.numa_node);
	if (ret != 0)
		return ret;
	VNAPI_INIT_LOG(INFO, "%s: port %u, virtio-pci, ring size %u", name, dev->data->port_id,
		       params.queue_size);
	return 0;

err_release:
	vnapi_eth_dev_probe_undo(dev, false);
	return ret;
}

static int
vnapi_pci_remove(struct rte_pci_device *pd)
{
	return vnapi_eth_dev_remove(pd->device.name);
}

static const struct rte_pci_id vnapi_pci_ids[] = {
	{ RTE_PCI_DEVICE(0x1af4, 0x1041) }, /* virtio-net, modern (virtio 1.x) */
	{ .vendor_id = 0 },
};

static struct rte_pci_driver vnapi_pci_driver = {
	.id_table = vnapi_pci_ids,
	.drv_flags = RTE_PCI_DRV_NEED_MAPPING,
	.probe = vnapi_pci_probe,
	.remove = vnapi_pci_remove,
};

RTE_PMD_REGISTER_PCI(net_vnapi_pci, vnapi_pci_driver);
RTE_PMD_REGISTER_PCI_TABLE(net_vnapi_pci, vnapi_pci_ids);
RTE_PMD_REGISTER_KMOD_DEP(net_vnapi_pci, "vfio-pci");
RTE_PMD_REGISTER_PARAM_STRING(net_vnapi_pci, VNAPI_DEVARGS_PCI_PARAM_STRING);
