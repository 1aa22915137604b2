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
 * The devargs: X(key, parser, field, allowed, dflt, pci), one row each, the
 * one owner of every fact about a key. @p parser is a vnapi_arg_<parser>()
 * handler that stores into struct vnapi_params' @p field; @p allowed is the
 * text shown after "=" in the registered parameter strings and in the user
 * guide's "values" column, and is what every rejection of that key names;
 * @p dflt is the field's value when the key is not given
 * (vnapi_params_default); @p pci says whether the key applies to a
 * virtio-pci device (net_vnapi_pci): VNAPI_PCI_YES, or VNAPI_PCI_NO for a
 * vhost-user key, which the PCI driver refuses by name and leaves out of
 * its parameter string.
 */
#define VNAPI_DEVARGS(X) \
	X("path",        path,        path,        "<vhost-user socket path>", "", VNAPI_PCI_NO) \
	X("queues",      queues,      queues,      "<1-16>", 1, VNAPI_PCI_YES) \
	X("queue_size",  queue_size,  queue_size,  "<64-32768, power of 2>", \
	  VNAPI_DEFAULT_QUEUE_SIZE, VNAPI_PCI_YES) \
	X("mac",         mac,         mac,         "<xx:xx:xx:xx:xx:xx>", { { 0 } }, VNAPI_PCI_YES) \
	X("mrg_rxbuf",   bool,        mrg_rxbuf,   "<0|1>", true, VNAPI_PCI_YES) \
	X("event_idx",   bool,        event_idx,   "<0|1>", true, VNAPI_PCI_YES) \
	X("packed_vq",   bool,        packed_vq,   "<0|1>", false, VNAPI_PCI_YES) \
	X("in_order",    bool,        in_order,    "<0|1>", true, VNAPI_PCI_YES) \
	X("indirect",    bool,        indirect,    "<0|1>", true, VNAPI_PCI_YES) \
	X("tx_csum",     bool,        tx_csum,     "<0|1>", true, VNAPI_PCI_YES) \
	X("tso",         bool,        tso,         "<0|1>", true, VNAPI_PCI_YES) \
	X("rx_csum",     bool,        rx_csum,     "<0|1>", true, VNAPI_PCI_YES) \
	X("lro",         bool,        lro,         "<0|1>", true, VNAPI_PCI_YES) \
	X("intr_rescue", intr_rescue, intr_rescue, "<signal|eagain>", VNAPI_RESCUE_SIGNAL, \
	  VNAPI_PCI_YES) \
	X("server",      bool,        server,      "<0|1>", false, VNAPI_PCI_NO) \
	X("reconnect_ms", reconnect_ms, reconnect_ms, "<0-60000>", VNAPI_DEFAULT_RECONNECT_MS, \
	  VNAPI_PCI_NO) \
	X("tx_drain_ms", tx_drain_ms, tx_drain_ms, "<0-10000>", VNAPI_DEFAULT_TX_DRAIN_MS, \
	  VNAPI_PCI_YES)

/* The pci column: what a row gives the PCI driver's lists (x), or nothing.
 * tx_drain_ms applies (a QEMU device consumes the tx ring as a vhost-user
 * back end does); path and server are vhost-user's; reconnect_ms has
 * nothing to do there (the device never goes away). */
#define VNAPI_PCI_YES(x) x
#define VNAPI_PCI_NO(x)

#define VNAPI_DEVARG_PARAM(key, parser, field, allowed, dflt, pci) key "=" allowed " "
/** The parameter string for RTE_PMD_REGISTER_PARAM_STRING (one literal). */
#define VNAPI_DEVARGS_PARAM_STRING VNAPI_DEVARGS(VNAPI_DEVARG_PARAM)
#define VNAPI_DEVARG_PCI_PARAM(key, parser, field, allowed, dflt, pci) \
	pci(VNAPI_DEVARG_PARAM(key, parser, field, allowed, dflt, pci))
/** The PCI driver's parameter string: its opt-in, then the keys of its column. */
#define VNAPI_DEVARGS_PCI_PARAM_STRING "vnapi=<1> " VNAPI_DEVARGS(VNAPI_DEVARG_PCI_PARAM)

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

/** As vnapi_devargs_parse(), with path required only if @p need_path. */
int vnapi_devargs_parse_opt(const char *name, const char *args, struct vnapi_params *p,
			    bool need_path);

/**
 * The PCI driver's devargs (after its opt-in): as vnapi_devargs_parse(), no
 * path needed, and a key of the list's VNAPI_PCI_NO rows is refused by
 * name (-EINVAL, one log line).
 */
int vnapi_devargs_parse_pci(const char *name, const char *args, struct vnapi_params *p);

#endif /* _VNAPI_DEVARGS_H_ */
