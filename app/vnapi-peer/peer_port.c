/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "peer_port.h"
#include "peer_tap.h"
#include "peer_util.h"

#define PEER_EAL_ARGS_MAX 32

int
peer_run_paths(const char *name, char *sock, size_t sock_size, char *prefix,
	       size_t prefix_size)
{
	if (mkdir(PEER_RUN_DIR, 0755) != 0 && errno != EEXIST)
		return -errno;
	snprintf(sock, sock_size, "%s/%s.sock", PEER_RUN_DIR, name);
	snprintf(prefix, prefix_size, "vnapi_%s", name);
	unlink(sock); /* a stale socket of a killed run */
	return 0;
}

int
peer_eal_init(const char *argv0, const char *prefix, const char *log_level,
	      const char *const *extra, unsigned int nb_extra)
{
	static const char *const fixed[] = {
		"--no-huge", "-m", "512", "--no-pci", "--lcores", "0@0", "--file-prefix",
	};
	/* rte_eal_init may permute argv: keep our own copy of the strings. */
	static char lvl[160], pfx[160], a0[PATH_MAX];
	static char *argv[PEER_EAL_ARGS_MAX + 1];
	unsigned int i;
	int argc = 0;

	if (nb_extra > PEER_EAL_ARGS_MAX - RTE_DIM(fixed) - 3)
		return -1;
	snprintf(a0, sizeof(a0), "%s", argv0);
	snprintf(pfx, sizeof(pfx), "%s", prefix);
	snprintf(lvl, sizeof(lvl), "--log-level=%s", log_level);
	argv[argc++] = a0;
	for (i = 0; i < RTE_DIM(fixed); i++)
		argv[argc++] = (char *)(uintptr_t)fixed[i];
	argv[argc++] = pfx;
	argv[argc++] = lvl;
	for (i = 0; i < nb_extra; i++)
		argv[argc++] = (char *)(uintptr_t)extra[i];
	argv[argc] = NULL;
	return rte_eal_init(argc, argv);
}

int
peer_port_start(uint16_t port, const char *who, const struct peer_port_conf *c)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t q;
	int ret;

	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0) {
		printf("# %s: dev_info_get: %d\n", who, ret);
		return ret;
	}
	memset(&conf, 0, sizeof(conf));
	if (c->mtu != 0) {
		if (c->mtu > info.max_mtu) {
			printf("# %s: max_mtu %u < %u\n", who, info.max_mtu, c->mtu);
			return -EINVAL;
		}
		conf.rxmode.mtu = c->mtu;
		if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
		if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
			conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	}
	conf.rxmode.offloads |= c->rx_offloads;
	conf.txmode.offloads |= c->tx_offloads;
	conf.intr_conf.lsc = c->lsc ? 1 : 0;
	conf.intr_conf.rxq = c->rxq_intr ? 1 : 0;
	if (!c->quiet)
		printf("# %s: port %u driver %s, max_mtu %u, max_rx_pktlen %u, rx_offload_capa %#" PRIx64 ", tx_offload_capa %#" PRIx64 ", config mtu %u rx_offloads %#" PRIx64 " tx_offloads %#" PRIx64 " lsc %d rxq %d\n",
		       who, port, info.driver_name, info.max_mtu, info.max_rx_pktlen,
		       info.rx_offload_capa, info.tx_offload_capa, conf.rxmode.mtu,
		       conf.rxmode.offloads, conf.txmode.offloads, conf.intr_conf.lsc,
		       conf.intr_conf.rxq);
	ret = rte_eth_dev_configure(port, c->nb_queues, c->nb_queues, &conf);
	if (ret != 0) {
		printf("# %s: configure %u queues: %d\n", who, c->nb_queues, ret);
		return ret;
	}
	for (q = 0; q < c->nb_queues; q++) {
		ret = rte_eth_rx_queue_setup(port, q, c->nb_desc, rte_socket_id(), NULL,
					     c->rx_pool);
		if (ret != 0) {
			printf("# %s: rx queue %u setup: %d\n", who, q, ret);
			return ret;
		}
		ret = rte_eth_tx_queue_setup(port, q, c->nb_desc, rte_socket_id(), NULL);
		if (ret != 0) {
			printf("# %s: tx queue %u setup: %d\n", who, q, ret);
			return ret;
		}
	}
	ret = rte_eth_dev_start(port);
	if (ret != 0)
		printf("# %s: start: %d\n", who, ret);
	return ret;
}

int
peer_vhost_probe(const char *name, const char *sock, uint16_t queues, uint16_t *port)
{
	return peer_vhost_probe_extra(name, sock, queues, "", port);
}

int
peer_vhost_probe_extra(const char *name, const char *sock, uint16_t queues,
		       const char *extra, uint16_t *port)
{
	char args[PATH_MAX + 128];
	int ret;

	snprintf(args, sizeof(args), "%s,iface=%s,queues=%u%s", name, sock, queues, extra);
	ret = rte_dev_probe(args);
	if (ret != 0) {
		printf("# probe back end '%s': %d\n", args, ret);
		return ret;
	}
	ret = rte_eth_dev_get_port_by_name(name, port);
	if (ret != 0)
		printf("# back end probed but no port named %s\n", name);
	return ret;
}

int
peer_link_wait(uint16_t port, bool up, double timeout, const volatile sig_atomic_t *quit,
	       struct rte_eth_link *link, double *took)
{
	double t0 = peer_now_s(), deadline = t0 + timeout;
	struct rte_eth_link l;
	int ret = 0;

	for (;;) {
		memset(&l, 0, sizeof(l));
		if (rte_eth_link_get_nowait(port, &l) == 0 &&
		    (l.link_status == RTE_ETH_LINK_UP) == up)
			break;
		if (quit != NULL && *quit) {
			ret = -EINTR;
			break;
		}
		if (peer_now_s() > deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		peer_sleep_us(1000);
	}
	if (link != NULL)
		*link = l;
	if (took != NULL)
		*took = peer_now_s() - t0;
	return ret;
}

int
peer_port_remove(const char *name, uint16_t *port, bool *probed)
{
	int ret, first = 0;

	if (!*probed)
		return 0;
	if (*port < RTE_MAX_ETHPORTS && rte_eth_dev_is_valid_port(*port)) {
		ret = rte_eth_dev_stop(*port);
		if (ret != 0) {
			printf("# stop %s: %d\n", name, ret);
			first = ret;
		}
		ret = rte_eth_dev_close(*port);
		if (ret != 0) {
			printf("# close %s: %d\n", name, ret);
			first = first != 0 ? first : ret;
		}
	}
	ret = rte_eal_hotplug_remove("vdev", name);
	if (ret != 0 && ret != -ENOENT) {
		printf("# remove %s: %d\n", name, ret);
		first = first != 0 ? first : ret;
	}
	*port = RTE_MAX_ETHPORTS;
	*probed = false;
	return first;
}

uint64_t
peer_xstat(uint16_t port, const char *name)
{
	uint64_t id, v;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return UINT64_MAX;
	return v;
}

int
peer_count_fds(void)
{
	char path[sizeof("/proc/self/fd/") + sizeof(((struct dirent *)0)->d_name)], target[64];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	ssize_t len;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || (int)strtol(de->d_name, NULL, 10) == dirfd(d))
			continue;
		/* EAL's interrupt thread closes its epoll instance and makes a
		 * new one each time a source is added or removed, so one such
		 * fd can be missing for a moment after any callback
		 * (un)registration: epoll instances are left out of the count,
		 * and so is an fd closed between readdir and readlink (that
		 * epoll instance, caught closing). Neither the driver nor
		 * lib/vhost makes an epoll instance per start. */
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strcmp(target, "anon_inode:[eventpoll]") == 0)
			continue;
		n++;
	}
	closedir(d);
	return n;
}

void
peer_pools_in_use(const struct peer_pools *ps, unsigned int out[PEER_POOLS_MAX])
{
	unsigned int i;

	for (i = 0; i < ps->n; i++)
		out[i] = rte_mempool_in_use_count(ps->mp[i]);
}

void
peer_pools_print(const struct peer_pools *ps, const char *what,
		 const unsigned int v[PEER_POOLS_MAX], int fds)
{
	unsigned int i;

	printf("# %s: fds %d, mbufs in use:", what, fds);
	for (i = 0; i < ps->n; i++)
		printf(" %s=%u", ps->mp[i]->name, v[i]);
	printf("\n");
}

int
peer_pools_wait(const struct peer_pools *ps, const char *what,
		const unsigned int ref[PEER_POOLS_MAX], int ref_fds, double timeout)
{
	double deadline = peer_now_s() + timeout;
	unsigned int cur[PEER_POOLS_MAX], i;
	bool same;
	int fds;

	for (;;) {
		peer_pools_in_use(ps, cur);
		fds = peer_count_fds();
		same = ref_fds < 0 || fds == ref_fds;
		for (i = 0; i < ps->n; i++)
			same = same && cur[i] == ref[i];
		if (same)
			return 0;
		if (peer_now_s() > deadline)
			break;
		peer_sleep_us(1000);
	}
	peer_pools_print(ps, "expected", ref, ref_fds);
	peer_pools_print(ps, "found   ", cur, fds);
	for (i = 0; i < ps->n; i++) {
		if (cur[i] != ref[i])
			return peer_fail("%s: mempool %s in use %u, expected %u",
					 what, ps->mp[i]->name, cur[i], ref[i]);
	}
	return peer_fail("%s: %d open fds, expected %d", what, fds, ref_fds);
}
