/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The vdev: net_vnapi<N>,path=... Parse the devargs, allocate the port,
 * pick the transport, connect and negotiate, register the driver and its
 * parameter string.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_string_fns.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>

#include "vnapi_dev.h"
#include "vnapi_devargs.h"
#include "vnapi_ethdev.h"
#include "vnapi_link.h"
#include "vnapi_logs.h"
#include "vnapi_transport.h"

static int
vnapi_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct vnapi_params params;
	struct rte_eth_dev *dev;
	struct vnapi_proc *proc;
	struct vnapi_hw *hw;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return vnapi_eth_dev_attach_secondary(&vdev->device, name,
						      &vnapi_vhost_user_device_ops, false);
	ret = vnapi_devargs_parse(name, rte_vdev_device_args(vdev), &params);
	if (ret != 0)
		return ret;

	dev = rte_eth_vdev_allocate(vdev, sizeof(struct vnapi_hw));
	if (dev == NULL)
		return -ENOMEM;
	hw = dev->data->dev_private;
	hw->params = params;

	proc = vnapi_proc_alloc(&vnapi_vhost_user_device_ops, &vnapi_vhost_user_session_ops,
				rte_socket_id());
	if (proc == NULL) {
		vnapi_eth_dev_probe_undo(dev, false);
		return -ENOMEM;
	}
	rte_strscpy(proc->peer, params.path, sizeof(proc->peer));
	dev->process_private = proc;
	ret = vnapi_eth_dev_probe_finish(dev, rte_socket_id());
	if (ret != 0)
		return ret;
	VNAPI_INIT_LOG(INFO, "%s: port %u on %s (%s), %u queue pair(s), ring size %u",
		       name, dev->data->port_id, params.path,
		       params.server ? "server: the back end connects" : "client",
		       params.queues, params.queue_size);
	return 0;
}

static int
vnapi_remove(struct rte_vdev_device *vdev)
{
	return vnapi_eth_dev_remove(rte_vdev_device_name(vdev));
}

static struct rte_vdev_driver vnapi_vdev_driver = {
	.probe = vnapi_probe,
	.remove = vnapi_remove,
};

RTE_PMD_REGISTER_VDEV(net_vnapi, vnapi_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_vnapi, VNAPI_DEVARGS_PARAM_STRING);
