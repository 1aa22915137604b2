/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_PORT_H_
#define _PEER_PORT_H_

/**
 * @file
 * Test-peer library: EAL and run directory of a one-process test, ethdev
 * ports (DPDK's net_vhost as the back end, any front end), links, removal,
 * xstats, and the fd and mempool counts that leak checks compare.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

/** Where one-process tests put their vhost-user sockets. */
#define PEER_RUN_DIR "/run/vnapi-test"

/**
 * Create PEER_RUN_DIR and name a test's socket (PEER_RUN_DIR/<name>.sock,
 * a stale one of a killed run removed) and EAL file prefix (vnapi_<name>).
 * @return 0, or -errno of mkdir.
 */
int peer_run_paths(const char *name, char *sock, size_t sock_size, char *prefix,
		   size_t prefix_size);

/**
 * rte_eal_init for a one-process test: --no-huge -m 512 --no-pci,
 * one lcore on CPU 0, its own file prefix and log level, then @p extra.
 * @return what rte_eal_init returns.
 */
int peer_eal_init(const char *argv0, const char *prefix, const char *log_level,
		  const char *const *extra, unsigned int nb_extra);

/** How peer_port_start() configures a port: every queue pair alike. */
struct peer_port_conf {
	uint16_t nb_queues;
	uint16_t nb_desc;            /**< 0: the driver's default */
	uint32_t mtu;                /**< 0: default; else scatter and multi-seg where offered */
	bool lsc;                    /**< intr_conf.lsc */
	bool rxq_intr;               /**< intr_conf.rxq */
	bool quiet;                  /**< no "# who: port ..." line */
	uint64_t rx_offloads;        /**< RTE_ETH_RX_OFFLOAD_* to enable as well */
	uint64_t tx_offloads;        /**< RTE_ETH_TX_OFFLOAD_* to enable as well */
	struct rte_mempool *rx_pool;
};

/**
 * Configure, set up every queue and start @p port.
 * @return 0, or the negative errno of the step that failed (printed as a
 *   "# who: step: err" line).
 */
int peer_port_start(uint16_t port, const char *who, const struct peer_port_conf *c);

/**
 * Probe DPDK's net_vhost as @p name with iface=@p sock and @p queues queue
 * pairs (its socket appears at configure) and find its port.
 * @return 0, or a negative errno (printed).
 */
int peer_vhost_probe(const char *name, const char *sock, uint16_t queues, uint16_t *port);

/** peer_vhost_probe() with @p extra appended to the devargs (e.g. ",tso=1"). */
int peer_vhost_probe_extra(const char *name, const char *sock, uint16_t queues,
			   const char *extra, uint16_t *port);

/**
 * Wait until @p port's link is up (or down) or @p timeout seconds passed,
 * polling every millisecond; stops early when @p quit is set.
 * @param link the last status read (may be NULL).
 * @param took seconds waited (may be NULL).
 * @return 0, -ETIMEDOUT or -EINTR.
 */
int peer_link_wait(uint16_t port, bool up, double timeout, const volatile sig_atomic_t *quit,
		   struct rte_eth_link *link, double *took);

/**
 * Close-then-remove: stop and close @p *port (when it is still valid), then
 * remove vdev @p name. Sets *port to RTE_MAX_ETHPORTS and *probed false.
 * Nothing to do when !*probed.
 * @return 0, or the first negative errno (each step printed when it fails);
 *   a remove that finds the device gone already (-ENOENT) is no failure.
 */
int peer_port_remove(const char *name, uint16_t *port, bool *probed);

/** Port @p port's xstat @p name, or UINT64_MAX when it has none. */
uint64_t peer_xstat(uint16_t port, const char *name);

/** Open file descriptors of this process but epoll instances (see peer_port.c), or -1. */
int peer_count_fds(void);

/** A test's mempools, compared as a whole by the leak checks. */
#define PEER_POOLS_MAX 8
struct peer_pools {
	unsigned int n;
	struct rte_mempool *mp[PEER_POOLS_MAX];
};

/** The in-use count of every pool of @p ps. */
void peer_pools_in_use(const struct peer_pools *ps, unsigned int out[PEER_POOLS_MAX]);

/** Print "# what: fds F, mbufs in use: name=N ...". */
void peer_pools_print(const struct peer_pools *ps, const char *what,
		      const unsigned int v[PEER_POOLS_MAX], int fds);

/**
 * Poll (the vhost thread closes kick/call fds asynchronously) until every
 * pool's in-use count equals @p ref and the fd count equals @p ref_fds
 * (unless it is negative), or @p timeout seconds passed.
 * @return 0, or -1 after a failed TAP check naming the first difference.
 */
int peer_pools_wait(const struct peer_pools *ps, const char *what,
		    const unsigned int ref[PEER_POOLS_MAX], int ref_fds, double timeout);

#endif /* _PEER_PORT_H_ */
