/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PAIR_H_
#define _PAIR_H_

/*
 * vhost_pair's shared state: the options, the two ports (net_vhost back end,
 * front end under test) and the mempools, for the scenario files
 * (vhost_pair.c, pair_race.c, pair_drain.c).
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_dev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "peer_flow.h"
#include "peer_port.h"
#include "vnapi_compat.h"

#define PAIR_BE_NAME        "net_vhost0"
#define PAIR_BURST          32
#define PAIR_MAX_QUEUES     8
#define PAIR_MAX_BAD        32
#define PAIR_MAX_EAL_EXTRA  16
#define PAIR_RUN            0x5650u     /* the run of every frame (peer_flow.h) */
#define PAIR_EXPECT_ANY     (-1L)       /* race: --expect-lost any */
#define PAIR_EXPECT_ALL     (-2L)       /* race: --expect-lost all */

enum pair_dir {
	PAIR_FE_TO_BE = 1,
	PAIR_BE_TO_FE = 2,
};

struct pair_opts {
	const char *scenario;
	const char *frontend;
	const char *name;
	const char *log_level;
	uint32_t queues;
	uint32_t packets;
	uint32_t cycles;
	double timeout;
	const char *bad[PAIR_MAX_BAD];
	unsigned int nb_bad;
	const char *eal_extra[PAIR_MAX_EAL_EXTRA];
	unsigned int nb_eal_extra;
	bool tx_after_linkdown;
	bool sigpipe_ok;
	uint16_t sizes[16];
	unsigned int nb_sizes;
	uint64_t features_on;    /* virtio feature bits the back end must see negotiated */
	uint64_t features_off;   /* ... and must not */
	/* segs: chains of 2..N descriptors went indirect, none longer (0: none
	 * did); UINT32_MAX: unchecked. */
	uint32_t expect_indirect;
	/* The rx path rte_eth_rx_burst_mode_get() must report on every queue:
	 * "auto" (AVX2 where the EAL allows 256-bit SIMD and the CPU has AVX2,
	 * else scalar), "scalar", or NULL (not checked). */
	const char *rx_path;
	/* The front end's tx with RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE. */
	bool tx_fast_free;
	bool offloads_refused; /* offload: the front end has every offload devarg 0 */
	/* race */
	uint32_t rounds;
	long expect_lost;        /* PAIR_EXPECT_ANY: report only; PAIR_EXPECT_ALL: every round */
	uint32_t race_queue;     /* the rx queue raced (< queues) */
	uint32_t timeout_ms;     /* rte_epoll_wait per round */
	uint32_t restarts;
	/* drain_stall: the front end's tx_drain_ms (UINT32_MAX: not given) */
	uint32_t drain_ms;
};

enum pair_pool_id {
	POOL_FE_RX,
	POOL_BE_RX,
	POOL_FE_TX,
	POOL_BE_TX,
	POOL_MAX,
};

struct pair_state {
	char sock_path[PATH_MAX];
	char file_prefix[128];
	char fe_devargs[1024];
	char fe_name[RTE_DEV_NAME_MAX_LEN];
	uint16_t be_port;
	uint16_t fe_port;
	bool be_probed;
	bool fe_probed;
	struct peer_pools pools; /* indexed by enum pair_pool_id */
};

extern struct pair_opts pair_opts;
extern struct pair_state pair;

/*
 * The frames of direction @p dir on @p queue (peer_flow.h: flow = queue,
 * kind = dir, unstamped: every byte is compared).
 */
void pair_flow_spec(struct peer_flow *pf, uint8_t queue, uint8_t dir);

/* Frame @p seq of direction @p dir on @p queue, @p len bytes, into @p buf. */
void pair_frame_fill(uint8_t *buf, uint32_t len, uint32_t seq, uint8_t queue, uint8_t dir);

/* Probe net_vhost on the test's socket and start it; 0 or -1 (TAP failure). */
int pair_be_create(uint16_t nb_q, uint32_t mtu);

/* Probe the front end (--frontend); 0 or -1 (TAP failure). */
int pair_fe_probe(void);

/* Wait for @p port's link to go up or down; 0 or -1 (TAP failure). */
int pair_wait_link(uint16_t port, const char *who, bool up, double timeout);

/*
 * Close and remove the front end, then every mempool must come back to
 * @p ref0 and the fd count to @p ref_fds (unless negative); the result.
 */
int pair_fe_remove_check(const unsigned int ref0[PEER_POOLS_MAX], int ref_fds);

/* What the ports must have counted: [0] front end -> back end, [1] back to front. */
struct pair_counts {
	uint64_t pkts[2][PAIR_MAX_QUEUES];
	uint64_t bytes[2];
};

/*
 * The ethdev counters of both ports (reset before the traffic) against
 * @p c: packets per queue and in total, bytes each way, no errors. TAP
 * checks; 0 or -1.
 */
int pair_check_stats(const struct pair_counts *c);

/* Probe the front end, set it up with --queues queues and wait for both
 * links; 0 or -1 (TAP failure). */
int pair_fe_start(void);

/* The race scenario (pair_race.c). */
int pair_scenario_race(void);

/* The stop-drains-tx scenarios (pair_drain.c). */
int pair_scenario_drain(void);
int pair_scenario_drain_stall(void);

#endif /* _PAIR_H_ */
