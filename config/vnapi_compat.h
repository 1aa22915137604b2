/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * The one place where the DPDK LTS series vnapi supports (22.11, 23.11,
 * 24.11, 25.11: config/meson.build refuses others) differ for it, keyed on
 * RTE_VERSION. Code elsewhere uses the names below and has no #if on the
 * DPDK version. Each block says which release changed what.
 */

#ifndef VNAPI_COMPAT_H
#define VNAPI_COMPAT_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>
#include <rte_thread.h>
#include <rte_version.h>

#define VNAPI_DPDK_AT_LEAST(y, m) (RTE_VERSION >= RTE_VERSION_NUM(y, m, 0, 0))

/*
 * Packed structures. 25.03 deprecates the trailing __rte_packed for a
 * __rte_packed_begin/__rte_packed_end pair (MSVC's pragma form); before
 * that, the pair does not exist. Write: struct __rte_packed_begin x { } __rte_packed_end;
 */
#ifndef __rte_packed_begin
#define __rte_packed_begin
#define __rte_packed_end __attribute__((__packed__))
#endif

/*
 * Control threads. 23.11 removed rte_ctrl_thread_create (pthread, returns
 * void *) for rte_thread_create_control (rte_thread_t, returns uint32_t).
 * vnapi's thread functions have the new form; on 22.11 a trampoline adapts.
 */
typedef uint32_t (*vnapi_thread_fn)(void *arg);

#if VNAPI_DPDK_AT_LEAST(23, 11)
typedef rte_thread_t vnapi_ctrl_thread_t;

static inline int
vnapi_ctrl_thread_create(vnapi_ctrl_thread_t *t, const char *name, vnapi_thread_fn fn,
			 void *arg)
{
	return rte_thread_create_control(t, name, fn, arg);
}

static inline int
vnapi_ctrl_thread_join(vnapi_ctrl_thread_t t)
{
	return rte_thread_join(t, NULL);
}
#else
typedef pthread_t vnapi_ctrl_thread_t;

struct vnapi_compat_thread {
	vnapi_thread_fn fn;
	void *arg;
};

static inline void *
vnapi_compat_thread_main(void *p)
{
	struct vnapi_compat_thread c = *(struct vnapi_compat_thread *)p;

	free(p);
	c.fn(c.arg);
	return NULL;
}

static inline int
vnapi_ctrl_thread_create(vnapi_ctrl_thread_t *t, const char *name, vnapi_thread_fn fn,
			 void *arg)
{
	struct vnapi_compat_thread *c = malloc(sizeof(*c));
	int ret;

	if (c == NULL)
		return -ENOMEM;
	c->fn = fn;
	c->arg = arg;
	ret = rte_ctrl_thread_create(t, name, NULL, vnapi_compat_thread_main, c);
	if (ret != 0)
		free(c);
	return ret;
}

static inline int
vnapi_ctrl_thread_join(vnapi_ctrl_thread_t t)
{
	return -pthread_join(t, NULL);
}
#endif

/*
 * Telemetry. 23.03 added rte_tel_data_add_dict_uint; 24.11 deprecates
 * rte_tel_data_add_dict_u64 and 25.11 removes it.
 */
static inline int
vnapi_tel_dict_add_u64(struct rte_tel_data *d, const char *name, uint64_t v)
{
#if VNAPI_DPDK_AT_LEAST(23, 3)
	return rte_tel_data_add_dict_uint(d, name, v);
#else
	return rte_tel_data_add_dict_u64(d, name, v);
#endif
}

/*
 * ethdev driver ops whose type changed. The driver writes each op once, in
 * the newest form, and names it through these macros in its ops table; they
 * need <ethdev_driver.h> where they are expanded.
 *
 * dev_supported_ptypes_get: 24.03 added `size_t *no_of_elements` (the
 * length of the returned array, which then needs no RTE_PTYPE_UNKNOWN end
 * marker; vnapi keeps the marker, so both forms read it right).
 *   VNAPI_PTYPES_GET_OP(op_name, impl): defines op_name calling
 *   `const uint32_t *impl(struct rte_eth_dev *, size_t *no_of_elements)`.
 */
#if VNAPI_DPDK_AT_LEAST(24, 3)
#define VNAPI_PTYPES_GET_OP(op_name, impl) \
	static const uint32_t * \
	op_name(struct rte_eth_dev *dev, size_t *no_of_elements) \
	{ \
		return impl(dev, no_of_elements); \
	}
#else
#define VNAPI_PTYPES_GET_OP(op_name, impl) \
	static const uint32_t * \
	op_name(struct rte_eth_dev *dev) \
	{ \
		size_t n; \
		return impl(dev, &n); \
	}
#endif

/*
 * stats_get: 25.11 moved the per-queue counters (q_ipackets, q_opackets,
 * q_ibytes, q_obytes, q_errors) out of struct rte_eth_stats into a separate
 * struct eth_queue_stats argument, NULL when the caller wants none. Before,
 * they are the same fields of struct rte_eth_stats itself.
 *   VNAPI_STATS_GET_OP(op_name, impl): defines op_name calling
 *   `int impl(struct rte_eth_dev *, struct rte_eth_stats *, vnapi_eth_qstats *qs)`
 *   with qs NULL when there is nowhere to put per-queue counters.
 */
#if VNAPI_DPDK_AT_LEAST(25, 11)
typedef struct eth_queue_stats vnapi_eth_qstats;
#define VNAPI_STATS_GET_OP(op_name, impl) \
	static int \
	op_name(struct rte_eth_dev *dev, struct rte_eth_stats *st, struct eth_queue_stats *qs) \
	{ \
		return impl(dev, st, qs); \
	}
#else
typedef struct rte_eth_stats vnapi_eth_qstats;
#define VNAPI_STATS_GET_OP(op_name, impl) \
	static int \
	op_name(struct rte_eth_dev *dev, struct rte_eth_stats *st) \
	{ \
		return impl(dev, st, st); \
	}
#endif

/*
 * rx_queue_count: 25.11 changed the callback's return type from uint32_t to
 * int (so that it can return a negative errno). The count never exceeds a
 * ring size, so either type holds it.
 */
#if VNAPI_DPDK_AT_LEAST(25, 11)
typedef int vnapi_rxq_count_t;
#else
typedef uint32_t vnapi_rxq_count_t;
#endif

#endif /* VNAPI_COMPAT_H */
