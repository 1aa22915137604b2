/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_DEVARGS_H_
#define _VNAPI_DEVARGS_H_

/**
 * @file
 * @internal
 * net_vnapi devargs: one list (VNAPI_DEVARGS) makes the kvargs keys, the
 * handlers, the allowed-keys text of the parse error and the parameter
 * string registered with RTE_PMD_REGISTER_PARAM_STRING (what
 * dpdk-pmdinfo.py shows). The user guide's devargs table
 * (doc/user-guide.md) is checked against the same list by the unit test
 * (tests/unit/devargs).
 *
 * Parsing needs no EAL: only librte_kvargs and librte_net.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include <rte_ether.h>

#define VNAPI_MAX_QUEUE_PAIRS     16
#define VNAPI_DEFAULT_QUEUE_SIZE  256
#define VNAPI_MIN_QUEUE_SIZE      64
#define VNAPI_MAX_QUEUE_SIZE      32768
/** Longest wait between two reconnection attempts (client), ms. */
#define VNAPI_DEFAULT_RECONNECT_MS 500
#define VNAPI_MAX_RECONNECT_MS     60000
/** Longest wait at stop for the device to consume the tx rings, ms. */
#define VNAPI_DEFAULT_TX_DRAIN_MS  100
#define VNAPI_MAX_TX_DRAIN_MS      10000
/** The longest socket path plus its NUL (the kernel's sockaddr_un). */
#define VNAPI_PATH_MAX            sizeof(((struct sockaddr_un *)NULL)->sun_path)

/** What rx_queue_intr_enable does when work raced the arming. */
enum vnapi_intr_rescue {
	VNAPI_RESCUE_SIGNAL, /**< Signal the queue's own eventfd: the waiter returns at once. */
	VNAPI_RESCUE_EAGAIN, /**< Disarm again and return -EAGAIN: the caller keeps polling. */
};

/** Devargs, parsed once at probe. vnapi_params_default holds the defaults. */
struct vnapi_params {
	char path[VNAPI_PATH_MAX];
	uint16_t queues;
	uint16_t queue_size;
	struct rte_ether_addr mac;   /**< All zero: not given (a random one is made). */
	bool mrg_rxbuf;
	bool event_idx;
	enum vnapi_intr_rescue intr_rescue;
	bool packed_vq;
	bool in_order;       /**< Negotiate VIRTIO_F_IN_ORDER if offered. */
	bool indirect;       /**< Negotiate indirect descriptors (tx chains). */
	bool tx_csum;        /**< Negotiate VIRTIO_NET_F_CSUM (tx checksum offload). */
	bool tso;            /**< Negotiate HOST_TSO4/6 and HOST_ECN (needs tx_csum). */
	bool rx_csum;        /**< Negotiate VIRTIO_NET_F_GUEST_CSUM (rx checksum offload). */
	bool lro;            /**< Negotiate GUEST_TSO4/6 and GUEST_ECN (needs rx_csum, mrg_rxbuf). */
	bool server;         /**< vhost-user server: listen on path, the back end connects. */
	uint32_t reconnect_ms; /**< Client: longest backoff between attempts; 0: no reconnection. */
	uint32_t tx_drain_ms;  /**< Stop: longest wait for the device to consume the tx rings; 0: none. */
};

/*
 * The devargs: X(key, parser, field, allowed). @p parser is a
 * vnapi_arg_<parser>() handler that stores into struct vnapi_params'
 * @p field; @p allowed is the text shown after "=" in the registered
 * parameter string and in the user guide's "values" column, and is what every
 * rejection of that key names.
 */
#define VNAPI_DEVARGS(X) \
	X("path",        path,        path,        "<vhost-user socket path>") \
	X("queues",      queues,      queues,      "<1-16>") \
	X("queue_size",  queue_size,  queue_size,  "<64-32768, power of 2>") \
	X("mac",         mac,         mac,         "<xx:xx:xx:xx:xx:xx>") \
	X("mrg_rxbuf",   bool,        mrg_rxbuf,   "<0|1>") \
	X("event_idx",   bool,        event_idx,   "<0|1>") \
	X("packed_vq",   bool,        packed_vq,   "<0|1>") \
	X("in_order",    bool,        in_order,    "<0|1>") \
	X("indirect",    bool,        indirect,    "<0|1>") \
	X("tx_csum",     bool,        tx_csum,     "<0|1>") \
	X("tso",         bool,        tso,         "<0|1>") \
	X("rx_csum",     bool,        rx_csum,     "<0|1>") \
	X("lro",         bool,        lro,         "<0|1>") \
	X("intr_rescue", intr_rescue, intr_rescue, "<signal|eagain>") \
	X("server",      bool,        server,      "<0|1>") \
	X("reconnect_ms", reconnect_ms, reconnect_ms, "<0-60000>") \
	X("tx_drain_ms", tx_drain_ms, tx_drain_ms, "<0-10000>")

#define VNAPI_DEVARG_PARAM(key, parser, field, allowed) key "=" allowed " "
/** The parameter string for RTE_PMD_REGISTER_PARAM_STRING (one literal). */
#define VNAPI_DEVARGS_PARAM_STRING VNAPI_DEVARGS(VNAPI_DEVARG_PARAM)

/*
 * The PCI driver's keys (vnapi_probe_pci.c): each field says whether it applies to
 * a virtio-pci device (a key added to the list fails to compile until it
 * says). path and server are vhost-user's and refused there; reconnect_ms
 * has nothing to do (the device never goes away); tx_drain_ms applies (a
 * QEMU device consumes the tx ring as a vhost-user back end does).
 */
#define VNAPI_DEVARG_PCI_path(x)
#define VNAPI_DEVARG_PCI_queues(x) x
#define VNAPI_DEVARG_PCI_queue_size(x) x
#define VNAPI_DEVARG_PCI_mac(x) x
#define VNAPI_DEVARG_PCI_mrg_rxbuf(x) x
#define VNAPI_DEVARG_PCI_event_idx(x) x
#define VNAPI_DEVARG_PCI_packed_vq(x) x
#define VNAPI_DEVARG_PCI_in_order(x) x
#define VNAPI_DEVARG_PCI_indirect(x) x
#define VNAPI_DEVARG_PCI_tx_csum(x) x
#define VNAPI_DEVARG_PCI_tso(x) x
#define VNAPI_DEVARG_PCI_rx_csum(x) x
#define VNAPI_DEVARG_PCI_lro(x) x
#define VNAPI_DEVARG_PCI_intr_rescue(x) x
#define VNAPI_DEVARG_PCI_server(x)
#define VNAPI_DEVARG_PCI_reconnect_ms(x)
#define VNAPI_DEVARG_PCI_tx_drain_ms(x) x
/** Apply @p X(key, parser, field, allowed) to the keys of a PCI device. */
#define VNAPI_DEVARGS_PCI_APPLY(key, parser, field, allowed) \
	VNAPI_DEVARG_PCI_ ## field(VNAPI_DEVARG_PCI_X(key, parser, field, allowed))
/** The PCI driver's parameter string: its opt-in, then its keys. */
#define VNAPI_DEVARG_PCI_X VNAPI_DEVARG_PARAM
#define VNAPI_DEVARGS_PCI_PARAM_STRING "vnapi=<1> " VNAPI_DEVARGS(VNAPI_DEVARGS_PCI_APPLY)

/** One devarg, as the list describes it (for tests and messages). */
struct vnapi_devarg_info {
	const char *key;
	const char *allowed;
};

/** The devargs in list order; @p n receives how many. */
const struct vnapi_devarg_info *vnapi_devargs_list(unsigned int *n);

/** The defaults: every field as if no devarg were given (path empty). */
extern const struct vnapi_params vnapi_params_default;

/**
 * Parse @p args (may be NULL or "") into @p p, starting from the defaults.
 * @param name the device name, for the log lines.
 * @return 0, or -EINVAL with one log line (pmd.net.vnapi.init, ERR) that
 *   names the key and its allowed values: an unknown key, a key given twice,
 *   a bad value, or no path.
 */
int vnapi_devargs_parse(const char *name, const char *args, struct vnapi_params *p);

/** As vnapi_devargs_parse(), with path required only if @p need_path
 * (false: the PCI driver, whose device is no socket). */
int vnapi_devargs_parse_opt(const char *name, const char *args, struct vnapi_params *p,
			    bool need_path);

#endif /* _VNAPI_DEVARGS_H_ */
