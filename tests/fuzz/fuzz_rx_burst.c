/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Fuzz target for the driver's rx burst (rte_eth_rx_burst on a net_vnapi
 * port: vnapi_rxtx.c, its AVX2 part, the header checks, refill, the broken
 * queue's report, over lib/virtq) as a hostile device drives it. The
 * device is a loop device (tests/lib/loop_device.h): the input writes the
 * used ring and the headers.
 *
 * Input: byte 0 picks the port (bit 0 packed, bit 1 mergeable buffers, bit
 * 2 in order, bit 3 rx offloads: the header's offload fields are read)
 * and the rx path (bit 4: scalar; else AVX2 where the CPU has it). Rings
 * of 64, event idx on. Then a program, one op byte and its operands at a
 * time, until the input ends (at most FZ_MAX_OPS):
 *   0 an honest frame: u16 length; the header says num_buffers = the
 *     buffers it takes, each used len is what was written
 *   1 raw buffers: u8 count (1..4), the 12 header bytes, then per buffer
 *     u8 used-len mode (written, a u32 from the input, writable + 1, 0)
 *     and a u16 of bytes to write
 *   2 a raw used entry: u16 id, u32 len (no buffer behind it)
 *   3 publish (flush)
 *   4 a burst of u8 % 33 packets
 *   5 the used index jumps num + 1 (split)
 *   6 stop and start the port (the rings laid out anew)
 *   7 bursts of 32 until two return nothing
 *
 * Invariants, each an abort(): a burst returns at most what was asked;
 * every packet is a valid mbuf chain (rte_mbuf_check), of the rx pool,
 * on the port, at most 64 KB, not twice in a burst; a queue broken before
 * a burst delivers nothing in it; while the device has been honest since
 * the start, the queue never breaks and the packets are its frames, in
 * order, byte for byte, and every published frame comes out; after the
 * stop at the end of each input every mbuf is back in the pool exactly
 * once (no leak, no double free), as the pool gave it (refcnt 1, one
 * segment, no next). A loop shows as a libFuzzer timeout.
 *
 * EAL runs in memory (--no-huge --in-memory --no-pci: no files, no
 * sockets), started at the first input with the 16 ports.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_vect.h>

#include <ethdev_driver.h>

#include "fake_device.h"
#include "loop_device.h"
#include "vnapi_dev.h"
#include "vnapi_net_hdr.h"

#include "fuzz.h"

#define FZ_RING      64
#define FZ_POOL      (4 * FZ_RING)
#define FZ_PORTS     16
#define FZ_MAX_OPS   512
#define FZ_MAX_FRAMES 1024
#define FZ_MAX_LEN   (64 * 1024)
/* What one rx buffer takes: the mbuf's data room, then the header. */
#define FZ_ROOM      (RTE_MBUF_DEFAULT_DATAROOM + 12)

static struct {
	struct loop_dev *ld;
	struct rte_mempool *mp;
} fz_ports[FZ_PORTS];

/* One run: what the honest device published and what came out. */
static struct {
	struct loop_dev *ld;
	struct rte_mempool *mp;
	uint16_t port;
	bool hostile;            /* a hostile op since the last (re)start */
	uint32_t pushed;         /* honest frames written, not yet published */
	uint32_t published;      /* honest frames published (since the start) */
	uint32_t delivered;
	uint32_t len[FZ_MAX_FRAMES];
} fz;

static void
fz_frame(uint8_t *p, uint32_t len, uint32_t seq)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 31 + i * 7 + (i >> 8));
}

static void
fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_rx_burst: %s\n", what);
	abort();
}

static const char *const fz_eal_args[] = {
	"fuzz_rx_burst", "--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--no-telemetry",
	"-l", "0", "--log-level=1",
};

static void
fz_cleanup(void)
{
	unsigned int i;

	for (i = 0; i < FZ_PORTS; i++) {
		loop_dev_destroy(fz_ports[i].ld);
		rte_mempool_free(fz_ports[i].mp);
	}
	rte_eal_cleanup();
}

static void
fz_init(void)
{
	static char *argv[RTE_DIM(fz_eal_args) + 1];
	unsigned int i;

	for (i = 0; i < RTE_DIM(fz_eal_args); i++)
		argv[i] = (char *)(uintptr_t)fz_eal_args[i];
	if (rte_eal_init((int)RTE_DIM(fz_eal_args), argv) < 0)
		fz_fail("rte_eal_init");
	fuzz_quiet_logs();
	for (i = 0; i < FZ_PORTS; i++) {
		struct loop_cfg cfg = {
			.packed = i & 1, .mrg = (i >> 1) & 1, .in_order = (i >> 2) & 1,
			.rx_offloads = (i >> 3) & 1, .event_idx = true, .ring = FZ_RING,
		};
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "fz_pool%u", i);
		fz_ports[i].mp = rte_pktmbuf_pool_create(name, FZ_POOL, 0, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
		snprintf(name, sizeof(name), "net_vnapi_fz%u", i);
		if (fz_ports[i].mp != NULL)
			fz_ports[i].ld = loop_dev_create(name, &cfg, fz_ports[i].mp);
		if (fz_ports[i].ld == NULL)
			fz_fail("port setup");
	}
	atexit(fz_cleanup);
}

static const struct vnapi_rxq *
fz_rxq(void)
{
	return rte_eth_devices[fz.port].data->rx_queues[0];
}

static void
fz_start(void)
{
	if (rte_eth_dev_start(fz.port) != 0 || loop_dev_rx(fz.ld) == NULL)
		fz_fail("start");
	fz.hostile = false;
	fz.pushed = 0;
	fz.published = 0;
	fz.delivered = 0;
}

/* Check one delivered packet and free it. */
static void
fz_check_pkt(struct rte_mbuf *m)
{
	static uint8_t buf[FZ_MAX_LEN], want[FZ_MAX_LEN];
	const struct rte_mbuf *s;
	const char *why = NULL;
	const uint8_t *p;

	if (rte_mbuf_check(m, 1, &why) != 0)
		fz_fail(why);
	if (m->port != fz.port || m->pkt_len > FZ_MAX_LEN)
		fz_fail("packet of another port, or longer than 64 KB");
	for (s = m; s != NULL; s = s->next)
		if (s->pool != fz.mp)
			fz_fail("a segment not from the rx pool");
	if (!fz.hostile) {
		uint32_t k = fz.delivered;

		if (k >= fz.published)
			fz_fail("honest device: a packet it did not publish");
		if (k < FZ_MAX_FRAMES) {
			if (m->pkt_len != fz.len[k])
				fz_fail("honest device: a packet of another length");
			fz_frame(want, fz.len[k], k);
			p = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
			if (p == NULL || memcmp(p, want, m->pkt_len) != 0)
				fz_fail("honest device: other bytes");
		}
	}
	fz.delivered++;
	rte_pktmbuf_free(m);
}

static void
fz_burst(uint16_t nb)
{
	struct rte_mbuf *pkts[32];
	bool broken = virtq_is_broken(fz_rxq()->vq);
	uint16_t n, i, j;

	n = rte_eth_rx_burst(fz.port, 0, pkts, nb);
	if (n > nb)
		fz_fail("burst returned more than asked");
	if (broken && n != 0)
		fz_fail("a broken queue delivered");
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (pkts[i] == pkts[j])
				fz_fail("one mbuf twice in a burst");
	for (i = 0; i < n; i++)
		fz_check_pkt(pkts[i]);
	if (!fz.hostile && virtq_is_broken(fz_rxq()->vq))
		fz_fail("honest device: the queue broke");
}

static void
fz_drain(void)
{
	unsigned int empty = 0, rounds = 0;

	while (empty < 2 && rounds++ < 4 * FZ_RING) {
		uint32_t before = fz.delivered;

		fz_burst(32);
		empty = fz.delivered == before ? empty + 1 : 0;
	}
}

/* Op 0: an honest frame of the buffers it needs. */
static void
fz_op_frame(struct fz_input *in)
{
	static uint8_t frame[FZ_MAX_LEN];
	bool mrg = loop_dev_features(fz.ld) & (1ULL << VIRTIO_NET_F_MRG_RXBUF);
	uint32_t len = 14 + fz_u16(in) % (mrg ? 9000 : RTE_MBUF_DEFAULT_DATAROOM - 14 + 1);
	uint16_t hdr = loop_dev_hdr_size(fz.ld);
	uint16_t nbufs = (uint16_t)((len + hdr + FZ_ROOM - 1) / FZ_ROOM);

	uint32_t k = fz.published + fz.pushed;

	if (k >= FZ_MAX_FRAMES)
		return;
	fz_frame(frame, len, k);
	if (loop_dev_rx_fill(fz.ld, frame, len, nbufs, nbufs, NULL, NULL) != 0)
		return; /* not enough buffers posted: nothing was written */
	fz.len[k] = len;
	fz.pushed++;
}

/* Op 1: buffers with a header and used lens from the input. */
static void
fz_op_raw(struct fz_input *in)
{
	static uint8_t data[FZ_ROOM];
	struct fake_dev *d = loop_dev_rx(fz.ld);
	uint16_t nbufs = 1 + fz_u8(in) % 4, hdr_size = loop_dev_hdr_size(fz.ld), i, k;
	uint8_t hdr[sizeof(struct vnapi_net_hdr)];
	struct fake_dev_chain c;

	for (k = 0; k < sizeof(hdr); k++)
		hdr[k] = fz_u8(in);
	fz.hostile = true;
	for (i = 0; i < nbufs; i++) {
		uint8_t mode = fz_u8(in) % 4;
		uint32_t raw = mode == 1 ? fz_u32(in) : 0;
		uint32_t w = fz_u16(in), written;

		if (fake_dev_pop(d, &c) != 1)
			return;
		w = RTE_MIN(w, c.in_len);
		fz_frame(data, w, 0x5a + i);
		if (i == 0)
			memcpy(data, hdr, RTE_MIN((uint32_t)hdr_size, w));
		written = fake_dev_write(d, &c, data, w);
		if (mode == 0)
			fake_dev_push(d, &c, written);
		else if (mode == 1)
			fake_dev_push(d, &c, raw);
		else if (mode == 2)
			fake_dev_push(d, &c, c.in_len + 1);
		else
			fake_dev_push(d, &c, 0);
	}
}

static void
fz_flush(void)
{
	fake_dev_flush(loop_dev_rx(fz.ld));
	fz.published += fz.pushed;
	fz.pushed = 0;
}

static void
fz_stop(void)
{
	if (rte_eth_dev_stop(fz.port) != 0)
		fz_fail("stop");
}

/* After the stop: every mbuf in the pool once, as the pool gives it. */
static void
fz_pool_check(void)
{
	static void *objs[FZ_POOL];
	void *extra;
	unsigned int i, j;

	if (rte_mempool_get_bulk(fz.mp, objs, FZ_POOL) != 0)
		fz_fail("mbufs missing from the pool after the stop (a leak)");
	if (rte_mempool_get(fz.mp, &extra) == 0)
		fz_fail("more mbufs in the pool than it has (a double free)");
	for (i = 0; i < FZ_POOL; i++) {
		const struct rte_mbuf *m = objs[i];

		if (m->next != NULL || m->nb_segs != 1 || rte_mbuf_refcnt_read(m) != 1)
			fz_fail("an mbuf back in the pool not as the pool gives it");
		for (j = 0; j < i; j++)
			if (objs[j] == objs[i])
				fz_fail("one mbuf twice in the pool (a double free)");
	}
	rte_mempool_put_bulk(fz.mp, objs, FZ_POOL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct fz_input in = { data, size };
	unsigned int ops = 0;
	uint8_t cfg;

	if (size == 0)
		return 0;
	if (!ready) {
		fz_init();
		ready = true;
	}
	cfg = fz_u8(&in);
	memset(&fz, 0, sizeof(fz));
	fz.ld = fz_ports[cfg % FZ_PORTS].ld;
	fz.mp = fz_ports[cfg % FZ_PORTS].mp;
	fz.port = loop_dev_port(fz.ld);
	rte_vect_set_max_simd_bitwidth(cfg & 0x10 ? RTE_VECT_SIMD_DISABLED : RTE_VECT_SIMD_MAX);
	fz_start();
	while (in.n > 0 && ops++ < FZ_MAX_OPS) {
		switch (fz_u8(&in) % 8) {
		case 0:
			fz_op_frame(&in);
			break;
		case 1:
			fz_op_raw(&in);
			break;
		case 2: {
			uint16_t id = fz_u16(&in);
			uint32_t len = fz_u32(&in);

			fz.hostile = true;
			fake_dev_push_raw(loop_dev_rx(fz.ld), id, len);
			break;
		}
		case 3:
			fz_flush();
			break;
		case 4:
			fz_burst(fz_u8(&in) % 33);
			break;
		case 5:
			if (fake_dev_inject_used_jump(loop_dev_rx(fz.ld)) == 0)
				fz.hostile = true;
			break;
		case 6:
			fz_stop();
			fz_start();
			break;
		case 7:
			fz_drain();
			break;
		}
	}
	/* What an honest device published all comes out. */
	fz_drain();
	if (!fz.hostile && fz.delivered != fz.published)
		fz_fail("honest device: published frames not delivered");
	fz_stop();
	fz_pool_check();
	return 0;
}
