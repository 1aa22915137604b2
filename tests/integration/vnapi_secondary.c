/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * A secondary process on a running primary's net_vnapi0 (test_tools.py
 * "secondary"): what reads shared state works; what belongs to the primary
 * (stopping the port, MTU, MAC, rx interrupts, packet types) fails with
 * -E_RTE_SECONDARY and leaves the port as it was; the bursts return 0.
 * Usage: vnapi_secondary <EAL args with --proc-type secondary>
 * Exit 0 when every check passed.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

static unsigned int failed;

static void
check(int ok, const char *what, long got)
{
	printf("%s - %s (got %ld)\n", ok ? "ok" : "not ok", what, got);
	if (!ok)
		failed++;
}

int
main(int argc, char **argv)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	struct rte_eth_stats st;
	struct rte_mbuf *pkts[4];
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
	ret = rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));
	check(ret == 0, "rx burst returns 0 in a secondary", ret);
	ret = rte_eth_tx_burst(port, 0, pkts, 0);
	check(ret == 0, "tx burst returns 0 in a secondary", ret);

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
