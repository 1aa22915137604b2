/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * tso_bench: TCP-like bulk transmit through a vhost-user front end
 * (net_vnapi or net_virtio_user) into DPDK's net_vhost (tso=1), one
 * process, one core: the main lcore builds the packets, transmits them on
 * the front end and receives them on the back end.
 *
 *   --mode tso  64014-byte frames (IPv4 total length 64000, a chain of
 *               2 KB mbufs) with TSO, segment size 1448;
 *   --mode mss  the same payload cut into 1502-byte frames (1448 bytes of
 *               TCP payload) with TCP checksum offload.
 *
 * Prints one line: frames, bytes, Gbit/s of L2 bytes, and TSC cycles per
 * byte spent in the front end's tx_prepare + tx_burst and in the back
 * end's rx_burst (+ freeing what it received). Not a test.
 *
 * Usage: tso_bench --frontend DEVARGS --mode tso|mss [--seconds S] [--name N]
 * DEVARGS may hold {sock}.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#define TB_BE_NAME   "net_vhost0"
#define TB_TSO_L3    64000u
#define TB_MSS       1448u
#define TB_HDRS      (14u + 20u + 20u)
#define TB_BURST     32
#define TB_POOL      16383

static double
tb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
tb_port(uint16_t port, struct rte_mempool *rx_pool, bool fe)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	if (fe)
		conf.txmode.offloads = info.tx_offload_capa &
			(RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
			 RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	printf("# port %u %s tx offloads %#" PRIx64 "\n", port, info.driver_name,
	       conf.txmode.offloads);
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, 0, rte_socket_id(), NULL, rx_pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, 0, rte_socket_id(), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	return ret;
}

/* The front end's tx kick and indirect counters, where it has them. */
static void
tb_xstats(uint16_t port)
{
	static const char *const names[] = {
		"tx_q0_kicks", "tx_q0_kicks_suppressed", "tx_q0_indirect", "tx_q0_ring_full",
	};
	uint64_t id, v;
	unsigned int i;

	for (i = 0; i < RTE_DIM(names); i++)
		if (rte_eth_xstats_get_id_by_name(port, names[i], &id) == 0 &&
		    rte_eth_xstats_get_by_id(port, &id, &v, 1) == 1)
			printf("# %s %" PRIu64 "\n", names[i], v);
}

/* One frame of @p l3 IP bytes: headers in the first segment, payload as is. */
static struct rte_mbuf *
tb_frame(struct rte_mempool *mp, uint32_t l3, bool tso, uint32_t seq)
{
	uint32_t len = 14 + l3, left = len;
	struct rte_mbuf *head = NULL, *last = NULL, *m;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint8_t *p;

	while (left > 0) {
		uint32_t n;

		m = rte_pktmbuf_alloc(mp);
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		n = RTE_MIN(left, (uint32_t)rte_pktmbuf_tailroom(m));
		m->data_len = (uint16_t)n;
		if (head == NULL) {
			head = m;
			head->pkt_len = n;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
		last = m;
		left -= n;
	}
	p = rte_pktmbuf_mtod(head, uint8_t *);
	memset(p, 0, TB_HDRS);
	p[0] = 0x02;
	p[6] = 0x02;
	p[12] = 0x08;
	ip = (struct rte_ipv4_hdr *)(p + 14);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)l3);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	th = (struct rte_tcp_hdr *)(ip + 1);
	th->src_port = rte_cpu_to_be_16(40000);
	th->dst_port = rte_cpu_to_be_16(80);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->data_off = 5 << 4;
	th->tcp_flags = RTE_TCP_ACK_FLAG;
	head->l2_len = 14;
	head->l3_len = 20;
	head->l4_len = 20;
	head->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM;
	if (tso) {
		head->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
		head->tso_segsz = TB_MSS;
	}
	return head;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "frontend", required_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *frontend = NULL, *mode = "tso", *name = "tso_bench";
	char sock[256], prefix[128], be_args[512], fe_args[512], fe_name[64];
	char *eal[16];
	struct rte_mempool *fe_pool, *be_pool;
	uint64_t fe_cyc = 0, be_cyc = 0, bytes = 0, frames = 0, rcvd = 0;
	uint16_t fe_port, be_port;
	double seconds = 5.0, t0, t1;
	uint32_t l3, per_round, seq = 0;
	bool tso;
	int c, ne = 0;
	char *s;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'f': frontend = optarg; break;
		case 'm': mode = optarg; break;
		case 's': seconds = strtod(optarg, NULL); break;
		case 'n': name = optarg; break;
		default: return 2;
		}
	}
	tso = strcmp(mode, "tso") == 0;
	if (frontend == NULL || (!tso && strcmp(mode, "mss") != 0) || seconds <= 0) {
		fprintf(stderr, "usage: %s --frontend DEVARGS --mode tso|mss [--seconds S] [--name N]\n",
			argv[0]);
		return 2;
	}
	/* tso: one 64000-byte IP packet per round; mss: 44 of 1448 + 40. */
	l3 = tso ? TB_TSO_L3 : TB_MSS + 40;
	per_round = tso ? 1 : (TB_TSO_L3 - 40) / TB_MSS;
	snprintf(sock, sizeof(sock), "/run/vnapi-test/%s.sock", name);
	snprintf(prefix, sizeof(prefix), "vnapi_%s", name);
	snprintf(be_args, sizeof(be_args), "%s,iface=%s,queues=1,tso=1", TB_BE_NAME, sock);
	s = strstr(frontend, "{sock}");
	if (s == NULL)
		snprintf(fe_args, sizeof(fe_args), "%s", frontend);
	else
		snprintf(fe_args, sizeof(fe_args), "%.*s%s%s", (int)(s - frontend), frontend, sock,
			 s + 6);
	snprintf(fe_name, sizeof(fe_name), "%.*s", (int)strcspn(fe_args, ","), fe_args);
	unlink(sock);

	eal[ne++] = argv[0];
	eal[ne++] = (char *)(uintptr_t)"--no-huge";
	eal[ne++] = (char *)(uintptr_t)"-m";
	eal[ne++] = (char *)(uintptr_t)"1024";
	eal[ne++] = (char *)(uintptr_t)"--no-pci";
	eal[ne++] = (char *)(uintptr_t)"--lcores";
	eal[ne++] = (char *)(uintptr_t)"0@0";
	eal[ne++] = (char *)(uintptr_t)"--file-prefix";
	eal[ne++] = prefix;
	eal[ne++] = (char *)(uintptr_t)"--log-level=*:warning";
	eal[ne] = NULL;
	if (rte_eal_init(ne, eal) < 0) {
		printf("RESULT: FAIL: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	fe_pool = rte_pktmbuf_pool_create("tb_fe", TB_POOL, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  rte_socket_id());
	be_pool = rte_pktmbuf_pool_create("tb_be", TB_POOL, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  rte_socket_id());
	if (fe_pool == NULL || be_pool == NULL || rte_dev_probe(be_args) != 0 ||
	    rte_eth_dev_get_port_by_name(TB_BE_NAME, &be_port) != 0 ||
	    tb_port(be_port, be_pool, false) != 0 || rte_dev_probe(fe_args) != 0 ||
	    rte_eth_dev_get_port_by_name(fe_name, &fe_port) != 0 ||
	    tb_port(fe_port, fe_pool, true) != 0) {
		printf("RESULT: FAIL: setup (%s, %s)\n", be_args, fe_args);
		return 1;
	}
	/* Both links up within 10 s. */
	t0 = tb_now();
	for (;;) {
		struct rte_eth_link a, b;

		if (rte_eth_link_get_nowait(fe_port, &a) == 0 &&
		    rte_eth_link_get_nowait(be_port, &b) == 0 &&
		    a.link_status && b.link_status)
			break;
		if (tb_now() - t0 > 10.0) {
			printf("RESULT: FAIL: links not up\n");
			return 1;
		}
		rte_delay_us_sleep(1000);
	}

	t0 = tb_now();
	t1 = t0;
	while (t1 - t0 < seconds) {
		struct rte_mbuf *pk[64], *rx[TB_BURST];
		uint16_t n = 0, sent = 0, r, i;
		uint64_t c0;

		for (i = 0; i < per_round; i++) {
			pk[n] = tb_frame(fe_pool, l3, tso, seq);
			if (pk[n] == NULL)
				break;
			seq += tso ? TB_TSO_L3 - 40 : TB_MSS;
			n++;
		}
		c0 = rte_rdtsc();
		n = rte_eth_tx_prepare(fe_port, 0, pk, n);
		while (sent < n) {
			sent += rte_eth_tx_burst(fe_port, 0, pk + sent, n - sent);
			if (sent < n) {
				/* Ring full: let the back end take some. */
				fe_cyc += rte_rdtsc() - c0;
				c0 = rte_rdtsc();
				r = rte_eth_rx_burst(be_port, 0, rx, TB_BURST);
				for (i = 0; i < r; i++)
					bytes += rx[i]->pkt_len;
				rcvd += r;
				rte_pktmbuf_free_bulk(rx, r);
				be_cyc += rte_rdtsc() - c0;
				c0 = rte_rdtsc();
			}
		}
		fe_cyc += rte_rdtsc() - c0;
		frames += n;
		c0 = rte_rdtsc();
		do {
			r = rte_eth_rx_burst(be_port, 0, rx, TB_BURST);
			for (i = 0; i < r; i++)
				bytes += rx[i]->pkt_len;
			rcvd += r;
			rte_pktmbuf_free_bulk(rx, r);
		} while (r == TB_BURST);
		be_cyc += rte_rdtsc() - c0;
		t1 = tb_now();
	}
	printf("RESULT: mode %s front end %s: %.1f s, %" PRIu64 " frames sent, %" PRIu64
	       " received, %" PRIu64 " bytes, %.2f Gbit/s, front end %.3f cycles/byte, back end %.3f cycles/byte (TSC %" PRIu64 " Hz)\n",
	       mode, fe_name, t1 - t0, frames, rcvd, bytes, bytes * 8.0 / (t1 - t0) / 1e9,
	       bytes ? (double)fe_cyc / bytes : 0.0, bytes ? (double)be_cyc / bytes : 0.0,
	       rte_get_tsc_hz());
	tb_xstats(fe_port);
	rte_eth_dev_stop(fe_port);
	rte_eal_hotplug_remove("vdev", fe_name);
	rte_eth_dev_stop(be_port);
	rte_eal_hotplug_remove("vdev", TB_BE_NAME);
	rte_eal_cleanup();
	unlink(sock);
	return 0;
}
