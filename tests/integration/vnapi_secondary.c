/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * A secondary process on a running primary's net_vnapi0 (test_tools.py
 * "secondary"): what reads shared state works; what belongs to the primary
 * (stopping the port, MTU, MAC, rx interrupts, packet types) fails with
 * -E_RTE_SECONDARY and leaves the port as it was; the bursts return 0. The
 * tx burst is given real packets (a pool of this process's own, in the
 * shared memory): it must accept none of them and leave every one as it
 * was given (reference count, lengths, chain, every byte), so that the
 * caller still owns and frees them; the pool's in-use count is then back to
 * what it was before the allocation. The rx burst must not write into the
 * array it is given.
 * Usage: vnapi_secondary <EAL args with --proc-type secondary>
 * Exit 0 when every check passed.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define SEC_POOL_NAME  "vnapi_sec_tx"
#define SEC_POOL_SIZE  63
#define SEC_TX_PKTS    8
#define SEC_FRAME_LEN  128

static unsigned int failed;

static void
check(int ok, const char *what, long got)
{
	printf("%s - %s (got %ld)\n", ok ? "ok" : "not ok", what, got);
	if (!ok)
		failed++;
}

/* Byte j of test packet i. */
static uint8_t
sec_byte(unsigned int i, unsigned int j)
{
	return (uint8_t)(i * 31 + j * 7 + 1);
}

/*
 * The secondary's tx burst on real packets: 0 accepted, each packet as it
 * was given, the caller frees them, the pool's in-use count back to where it
 * was.
 */
static void
check_tx_refused(uint16_t port)
{
	struct rte_mbuf *pkts[SEC_TX_PKTS], *rx[SEC_TX_PKTS];
	struct rte_mempool *mp;
	unsigned int i, j, in_use0, changed = 0;
	uint8_t *d;
	int ret;

	mp = rte_pktmbuf_pool_create(SEC_POOL_NAME, SEC_POOL_SIZE, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	check(mp != NULL, "a mempool of the secondary's own", mp == NULL ? rte_errno : 0);
	if (mp == NULL)
		return;
	in_use0 = rte_mempool_in_use_count(mp);
	ret = rte_pktmbuf_alloc_bulk(mp, pkts, SEC_TX_PKTS);
	check(ret == 0, "allocate the test packets", ret);
	if (ret != 0)
		goto free_pool;
	for (i = 0; i < SEC_TX_PKTS; i++) {
		d = (uint8_t *)rte_pktmbuf_append(pkts[i], SEC_FRAME_LEN);
		for (j = 0; d != NULL && j < SEC_FRAME_LEN; j++)
			d[j] = sec_byte(i, j);
	}
	check(rte_mempool_in_use_count(mp) == in_use0 + SEC_TX_PKTS,
	      "the test packets are in use", (long)rte_mempool_in_use_count(mp));

	ret = rte_eth_tx_burst(port, 0, pkts, SEC_TX_PKTS);
	check(ret == 0, "tx burst of 8 real packets in a secondary: 0 accepted", ret);
	for (i = 0; i < SEC_TX_PKTS; i++) {
		const struct rte_mbuf *m = pkts[i];
		bool same = m->pool == mp && rte_mbuf_refcnt_read(m) == 1 && m->nb_segs == 1 &&
			    m->next == NULL && m->pkt_len == SEC_FRAME_LEN &&
			    m->data_len == SEC_FRAME_LEN;

		d = rte_pktmbuf_mtod(m, uint8_t *);
		for (j = 0; same && j < SEC_FRAME_LEN; j++)
			same = d[j] == sec_byte(i, j);
		if (!same)
			changed++;
	}
	check(changed == 0,
	      "the refused packets are untouched (refcnt 1, one segment, 128 bytes, every byte)",
	      changed);
	check(rte_mempool_in_use_count(mp) == in_use0 + SEC_TX_PKTS,
	      "none of them was freed by the burst", (long)rte_mempool_in_use_count(mp));

	for (i = 0; i < SEC_TX_PKTS; i++)
		rx[i] = pkts[i];
	ret = rte_eth_rx_burst(port, 0, rx, SEC_TX_PKTS);
	for (i = 0, changed = 0; i < SEC_TX_PKTS; i++)
		changed += rx[i] != pkts[i];
	check(ret == 0 && changed == 0, "rx burst in a secondary: 0, its array not written",
	      ret != 0 ? ret : (long)changed);

	rte_pktmbuf_free_bulk(pkts, SEC_TX_PKTS);
	check(rte_mempool_in_use_count(mp) == in_use0,
	      "the caller freed them: the pool's in-use count is back to where it was",
	      (long)rte_mempool_in_use_count(mp));
free_pool:
	rte_mempool_free(mp);
}

int
main(int argc, char **argv)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	struct rte_eth_stats st;
	uint64_t before;
	uint16_t port;
	int ret, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		printf("not ok - EAL init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	check(rte_eal_process_type() == RTE_PROC_SECONDARY, "running as a secondary process",
	      rte_eal_process_type());
	ret = rte_eth_dev_get_port_by_name("net_vnapi0", &port);
	check(ret == 0, "net_vnapi0 attached", ret);
	if (ret != 0)
		goto out;

	ret = rte_eth_dev_info_get(port, &info);
	check(ret == 0 && strcmp(info.driver_name, "net_vnapi") == 0,
	      "device info: driver net_vnapi", ret);
	ret = rte_eth_stats_get(port, &st);
	check(ret == 0 && st.ipackets > 0, "stats: the primary's traffic is counted",
	      (long)st.ipackets);
	ret = rte_eth_xstats_get_names(port, NULL, 0);
	check(ret > 0, "xstats names", ret);
	/* Before the refused ops below: a refused rte_eth_dev_stop() has already
	 * pointed this process's fast-path ops at ethdev's "not ready" dummies,
	 * and the bursts would no longer reach the driver. */
	check_tx_refused(port);

	ret = rte_eth_dev_stop(port);
	check(ret == -E_RTE_SECONDARY, "stop refused with -E_RTE_SECONDARY", ret);
	ret = rte_eth_dev_set_mtu(port, 1400);
	check(ret == -E_RTE_SECONDARY, "MTU set refused", ret);
	memset(&mac, 0, sizeof(mac));
	mac.addr_bytes[0] = 0x02;
	mac.addr_bytes[5] = 0x42;
	ret = rte_eth_dev_default_mac_addr_set(port, &mac);
	check(ret == -E_RTE_SECONDARY, "MAC address set refused", ret);
	ret = rte_eth_dev_rx_intr_enable(port, 0);
	check(ret == -E_RTE_SECONDARY, "rx interrupt enable refused", ret);
	ret = rte_eth_dev_set_ptypes(port, RTE_PTYPE_UNKNOWN, NULL, 0);
	check(ret == -E_RTE_SECONDARY, "packet type set refused", ret);

	ret = rte_eth_stats_get(port, &st);
	check(ret == 0, "stats still readable", ret);
	before = st.ipackets;
	/* The primary still forwards: its counter moves (poll, 2 s deadline). */
	for (i = 0; i < 200 && st.ipackets == before; i++) {
		rte_delay_ms(10);
		rte_eth_stats_get(port, &st);
	}
	check(st.ipackets > before, "the primary still receives", (long)(st.ipackets - before));
out:
	rte_eal_cleanup();
	printf("%s\n", failed == 0 ? "ALL OK" : "FAILED");
	return failed == 0 ? 0 : 1;
}
