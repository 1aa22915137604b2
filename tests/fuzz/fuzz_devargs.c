/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Fuzz target for the devargs parsers: net_vnapi's vnapi_devargs_parse_opt()
 * and net_vnapi_pci's vnapi_devargs_parse_pci(), every key of VNAPI_DEVARGS,
 * its values and ranges, through librte_kvargs as probe calls them.
 *
 * Input: byte 0 bit 0 says which: 0 the vdev's (a path required), 1 the PCI
 * driver's; the rest (at most 1024 bytes, cut at the first NUL) is the
 * devargs string. When the vdev's parse succeeds, every field must be
 * within its documented range (the user guide's table), and the accepted
 * values, written back as a devargs string (path aside), must parse again
 * to the same values. A parse that fails must report -EINVAL. The PCI
 * parser must accept exactly what the vdev's accepts without a path,
 * unless the string gives a vhost-user key (path, server, reconnect_ms:
 * the guide's list, not the driver's), which it refuses; what it accepts,
 * it parses to the same values, with those keys at their defaults.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_kvargs.h>

#include "vnapi_devargs.h"

#include "fuzz.h"

#define FUZZ_MAX_ARGS 1024

#define FZ_CHECK(cond) do { if (!(cond)) abort(); } while (0)

/* Every field within the range the devargs table documents. */
static void
fuzz_check_ranges(const struct vnapi_params *p, bool need_path)
{
	size_t plen = strnlen(p->path, sizeof(p->path));

	FZ_CHECK(plen < sizeof(p->path));
	FZ_CHECK(!need_path || plen > 0);
	/* The documented ranges (doc/user-guide.md, "Devargs"), not the driver's macros. */
	FZ_CHECK(p->queues >= 1 && p->queues <= 16);
	FZ_CHECK(p->queue_size >= 64 && p->queue_size <= 32768 && rte_is_power_of_2(p->queue_size));
	FZ_CHECK(p->intr_rescue == VNAPI_RESCUE_SIGNAL || p->intr_rescue == VNAPI_RESCUE_EAGAIN);
	FZ_CHECK(p->reconnect_ms <= 60000);
	FZ_CHECK(p->tx_drain_ms <= 10000);
	FZ_CHECK(rte_is_zero_ether_addr(&p->mac) || rte_is_valid_assigned_ether_addr(&p->mac));
}

/* The values of @p p (path aside) as a devargs string. */
static void
fuzz_format(const struct vnapi_params *p, char *buf, size_t size)
{
	char mac[RTE_ETHER_ADDR_FMT_SIZE] = "";
	int n;

	if (!rte_is_zero_ether_addr(&p->mac))
		rte_ether_format_addr(mac, sizeof(mac), &p->mac);
	n = snprintf(buf, size,
		     "path=p,queues=%u,queue_size=%u,mrg_rxbuf=%d,event_idx=%d,packed_vq=%d,"
		     "in_order=%d,indirect=%d,tx_csum=%d,tso=%d,rx_csum=%d,lro=%d,"
		     "intr_rescue=%s,server=%d,reconnect_ms=%u,tx_drain_ms=%u%s%s",
		     p->queues, p->queue_size, p->mrg_rxbuf, p->event_idx, p->packed_vq,
		     p->in_order, p->indirect, p->tx_csum, p->tso, p->rx_csum, p->lro,
		     p->intr_rescue == VNAPI_RESCUE_EAGAIN ? "eagain" : "signal", p->server,
		     p->reconnect_ms, p->tx_drain_ms, mac[0] != '\0' ? ",mac=" : "", mac);
	FZ_CHECK(n > 0 && (size_t)n < size);
}

static void
fuzz_check_same(const struct vnapi_params *a, const struct vnapi_params *b)
{
	FZ_CHECK(a->queues == b->queues && a->queue_size == b->queue_size);
	FZ_CHECK(rte_is_same_ether_addr(&a->mac, &b->mac));
	FZ_CHECK(a->mrg_rxbuf == b->mrg_rxbuf && a->event_idx == b->event_idx &&
		 a->packed_vq == b->packed_vq && a->in_order == b->in_order &&
		 a->indirect == b->indirect && a->tx_csum == b->tx_csum && a->tso == b->tso &&
		 a->rx_csum == b->rx_csum && a->lro == b->lro);
	FZ_CHECK(a->intr_rescue == b->intr_rescue && a->server == b->server &&
		 a->reconnect_ms == b->reconnect_ms && a->tx_drain_ms == b->tx_drain_ms);
}

/* Whether @args gives one of the vhost-user keys a PCI device refuses (the user guide's
 * list), as librte_kvargs splits it (no list of valid keys: any key counts). */
static bool
fuzz_vhost_user_key_given(const char *args)
{
	static const char *const vhost_only[] = { "path", "server", "reconnect_ms" };
	struct rte_kvargs *kv = rte_kvargs_parse(args, NULL);
	bool given = false;
	unsigned int i;

	if (kv == NULL)
		return false;
	for (i = 0; i < RTE_DIM(vhost_only); i++)
		given = given || rte_kvargs_count(kv, vhost_only[i]) > 0;
	rte_kvargs_free(kv);
	return given;
}

/* net_vnapi_pci's parser against the vdev's on the same string. */
static void
fuzz_pci(const char *args)
{
	struct vnapi_params p, v;
	int ret = vnapi_devargs_parse_pci("net_vnapi_pci_fuzz", args, &p);
	int vret = vnapi_devargs_parse_opt("net_vnapi_fuzz", args, &v, false);

	FZ_CHECK(ret == 0 || ret == -EINVAL);
	if (vret != 0 || fuzz_vhost_user_key_given(args)) {
		FZ_CHECK(ret == -EINVAL);
		return;
	}
	FZ_CHECK(ret == 0);
	fuzz_check_ranges(&p, false);
	fuzz_check_same(&p, &v);
	FZ_CHECK(p.path[0] == '\0' && !p.server && p.reconnect_ms == 500);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnapi_params p, q;
	char *args, again[512];
	size_t len;
	bool need_path;
	int ret;

	fuzz_quiet_logs();
	if (size < 1)
		return 0;
	need_path = !(data[0] & 1);
	len = RTE_MIN(size - 1, (size_t)FUZZ_MAX_ARGS);
	/* An exact allocation: ASan sees a read past the string's NUL. */
	args = malloc(len + 1);
	FZ_CHECK(args != NULL);
	memcpy(args, data + 1, len);
	args[len] = '\0';

	if (!need_path) {
		fuzz_pci(args);
		free(args);
		return 0;
	}
	ret = vnapi_devargs_parse_opt("net_vnapi_fuzz", args, &p, need_path);
	if (ret == 0) {
		fuzz_check_ranges(&p, need_path);
		fuzz_format(&p, again, sizeof(again));
		FZ_CHECK(vnapi_devargs_parse_opt("net_vnapi_fuzz", again, &q, true) == 0);
		fuzz_check_same(&p, &q);
	} else {
		FZ_CHECK(ret == -EINVAL);
	}
	free(args);
	return 0;
}
