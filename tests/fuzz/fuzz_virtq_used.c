/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Fuzz target for lib/virtq's receive path as a hostile device drives it:
 * the code the PMD's rx (virtq_add_inbufs, virtq_get_used) and tx reclaim
 * (virtq_add_outbufs, virtq_add, virtq_get_used) run, split and packed,
 * with or without event idx, in order and indirect descriptors.
 *
 * Input: byte 0 picks the configuration (bit 0 packed, bit 1 event idx,
 * bit 2 in order, bit 3 indirect descriptors (4 per table), bits 4-6 log2
 * of num minus 1: 2..128), bytes 1-2 the start index. Then a program, one
 * op byte and its operands at a time, until the input ends:
 * the driver adds chains, inbufs, outbufs and kicks; an honest device (the
 * unit tests' fake device: pops, completes with a len within the chain's
 * writable length, flushes) takes the queue to deep states; the hostile
 * device writes anything into the device's side of the ring (split: used
 * idx, used entries' id and len; packed: any descriptor's id, len, flags;
 * both: its event suppression area); the driver takes used buffers, counts
 * them, arms, polls and disarms, and stops and restarts the queue (detach
 * everything, virtq_init() at a new start index) as dev_stop/dev_start do.
 *
 * Invariants, each an abort(): get_used never returns a cookie that is not
 * outstanding (handed out, not yet returned), never one twice, never a len
 * beyond the chain's writable length (0 for a device-readable one), never
 * more than asked; a broken queue returns nothing; bad_used counts are
 * consistent with the broken state; free descriptors plus those held by
 * outstanding chains are num; an honest device never breaks the queue; at
 * the end virtq_detach_unused() gives back exactly the outstanding cookies.
 * A loop shows as a libFuzzer timeout.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "fake_device.h"
#include "virtq.h"
#include "virtq_ring.h"

#include "fuzz.h"

#define FZ_MAX_TOKENS 2048
#define FZ_MAX_HELD 128
#define FZ_BUF_LEN 2048
#define FZ_INDIRECT_MAX 4

/* A cookie the driver handed out. */
struct fz_token {
	bool outstanding;
	uint32_t in_len;      /* writable bytes of its chain */
	uint16_t ndescs;      /* ring descriptors (packed: slots) it took */
};

struct fz_state {
	struct virtq *vq;
	void *ring;
	size_t ring_size;
	struct virtq_params p;
	struct fake_dev dev;
	bool dev_up;          /* the honest device still plays */
	bool hostile;         /* the hostile device wrote something */
	bool armed_idle;      /* armed, and virtq_poll() said no work since */
	struct fz_token tok[FZ_MAX_TOKENS];
	unsigned int ntok;
	uint32_t held_descs;  /* ring descriptors of outstanding tokens */
	struct fake_dev_chain held[FZ_MAX_HELD];
	unsigned int nheld;   /* popped by the honest device, oldest first */
};

static struct fz_state fz;

#define FZ_CHECK(cond) do { if (!(cond)) abort(); } while (0)

static void
fz_check_free(void)
{
	FZ_CHECK((uint32_t)virtq_num_free(fz.vq) + fz.held_descs == fz.p.num);
}

/* Record a token given to the driver, with the descriptors it took. */
static void
fz_hand_out(unsigned int t, uint32_t in_len, uint16_t ndescs)
{
	fz.tok[t].outstanding = true;
	fz.tok[t].in_len = in_len;
	fz.tok[t].ndescs = ndescs;
	fz.held_descs += ndescs;
}

/* A cookie came back: it must be an outstanding token; it no longer is. */
static void
fz_give_back(void *cookie, bool check_len, uint32_t len)
{
	uintptr_t off = (uintptr_t)cookie - (uintptr_t)fz.tok;
	struct fz_token *t;

	FZ_CHECK((uintptr_t)cookie >= (uintptr_t)fz.tok);
	FZ_CHECK(off % sizeof(fz.tok[0]) == 0 && off / sizeof(fz.tok[0]) < fz.ntok);
	t = cookie;
	FZ_CHECK(t->outstanding);
	if (check_len)
		FZ_CHECK(len <= t->in_len && (t->in_len != 0 || len == 0));
	t->outstanding = false;
	fz.held_descs -= t->ndescs;
}

/* virtq_add: out device-readable then in device-writable elements. */
static void
fz_op_add(struct fz_input *in)
{
	struct virtq_sg sg[8];
	uint8_t shape = fz_u8(in);
	uint16_t out = shape & 3, nin = (shape >> 2) & 3;
	uint16_t before = virtq_num_free(fz.vq);
	uint32_t in_len = 0;
	unsigned int i;
	int ret;

	if (fz.ntok == FZ_MAX_TOKENS)
		return;
	for (i = 0; i < (unsigned int)(out + nin); i++) {
		sg[i].addr = 0x100000u + fz.ntok * 0x1000u + i * 0x100u;
		sg[i].len = 1 + fz_u8(in) * 8u;
		if (i >= out)
			in_len += sg[i].len;
	}
	ret = virtq_add(fz.vq, sg, out, nin, &fz.tok[fz.ntok]);
	if (virtq_is_broken(fz.vq)) {
		FZ_CHECK(ret == -EIO);
		return;
	}
	if (out + nin == 0) {
		FZ_CHECK(ret == -EINVAL);
		return;
	}
	if (ret != 0) {
		FZ_CHECK(ret == -ENOSPC && virtq_num_free(fz.vq) == before);
		return;
	}
	FZ_CHECK(virtq_num_free(fz.vq) < before);
	fz_hand_out(fz.ntok++, in_len, (uint16_t)(before - virtq_num_free(fz.vq)));
}

/* virtq_add_inbufs / virtq_add_outbufs: @p n single-descriptor buffers. */
static void
fz_op_add_bufs(struct fz_input *in, bool writable)
{
	struct virtq_sg sg[16];
	void *cookies[16];
	uint16_t n = (fz_u8(in) & 15) + 1;
	uint16_t len = 1 + fz_u8(in) * 8u;
	uint16_t avail = virtq_num_free(fz.vq), added, i;

	n = (uint16_t)RTE_MIN((unsigned int)n, FZ_MAX_TOKENS - fz.ntok);
	for (i = 0; i < n; i++) {
		sg[i].addr = 0x100000u + (fz.ntok + i) * 0x1000u;
		sg[i].len = len;
		cookies[i] = &fz.tok[fz.ntok + i];
	}
	added = writable ? virtq_add_inbufs(fz.vq, sg, cookies, n) :
		virtq_add_outbufs(fz.vq, sg, cookies, n);
	FZ_CHECK(added <= n);
	if (virtq_is_broken(fz.vq))
		FZ_CHECK(added == 0);
	else
		FZ_CHECK(added == RTE_MIN(n, avail));
	for (i = 0; i < added; i++)
		fz_hand_out(fz.ntok++, writable ? len : 0, 1);
}

static void
fz_op_get_used(struct fz_input *in)
{
	void *cookies[64];
	uint32_t lens[64];
	uint16_t max = (fz_u8(in) & 63) + 1, n, i;
	bool with_lens = max & 1;
	bool was_broken = virtq_is_broken(fz.vq);

	n = virtq_get_used(fz.vq, cookies, with_lens ? lens : NULL, max);
	FZ_CHECK(n <= max);
	if (n > 0)
		fz.armed_idle = false;
	if (was_broken)
		FZ_CHECK(n == 0);
	for (i = 0; i < n; i++)
		fz_give_back(cookies[i], with_lens, with_lens ? lens[i] : 0);
}

/* The honest device: pop what is available (up to FZ_MAX_HELD held). */
static void
fz_op_dev_pop(struct fz_input *in)
{
	unsigned int k = (fz_u8(in) & 15) + 1;

	while (k-- > 0 && fz.nheld < FZ_MAX_HELD) {
		int r = fake_dev_pop(&fz.dev, &fz.held[fz.nheld]);

		if (r < 0) {
			/* The driver broke a rule, or hostile writes confused the device. */
			FZ_CHECK(fz.hostile);
			fz.dev_up = false;
			return;
		}
		if (r == 0)
			return;
		fz.nheld++;
	}
}

/* The honest device: complete one popped chain (in order: the oldest). */
static void
fz_op_dev_push(struct fz_input *in)
{
	uint8_t which = fz_u8(in);
	uint32_t len = fz_u32(in);
	unsigned int i;
	struct fake_dev_chain *c;

	if (fz.nheld == 0)
		return;
	i = fz.p.in_order ? 0 : which % fz.nheld;
	c = &fz.held[i];
	len = c->in_len == 0 ? 0 : len % (c->in_len + 1);
	if (fake_dev_push(&fz.dev, c, len) != 0)
		FZ_CHECK(fz.hostile);
	memmove(&fz.held[i], &fz.held[i + 1], (fz.nheld - i - 1) * sizeof(fz.held[0]));
	fz.nheld--;
}

/* The hostile device: one write to its side of the ring. */
static void
fz_op_hostile(struct fz_input *in)
{
	uint8_t what = fz_u8(in);
	uint16_t slot = fz_u16(in) & (fz.p.num - 1);
	uint32_t v = fz_u32(in);

	fz.hostile = true;
	if (what & 0x80) {
		/* The device's event suppression, read by virtq_kick_prepare(). */
		if (fz.p.layout == VIRTQ_LAYOUT_SPLIT) {
			struct virtq_used *used = virtq_device_area(fz.vq);

			if (what & 1)
				__atomic_store_n(&used->flags, (uint16_t)v, __ATOMIC_RELAXED);
			else
				__atomic_store_n(virtq_avail_event(used, fz.p.num), (uint16_t)v,
						 __ATOMIC_RELAXED);
		} else {
			struct virtq_packed_event *ev = virtq_device_area(fz.vq);

			__atomic_store_n(&ev->off_wrap, (uint16_t)(v >> 16), __ATOMIC_RELAXED);
			__atomic_store_n(&ev->flags, (uint16_t)v, __ATOMIC_RELEASE);
		}
		return;
	}
	if (fz.p.layout == VIRTQ_LAYOUT_SPLIT) {
		struct virtq_used *used = virtq_device_area(fz.vq);

		switch (what % 4) {
		case 0:
			__atomic_store_n(&used->idx, (uint16_t)v, __ATOMIC_RELEASE);
			break;
		case 1:
			/* used idx moves by a small step, as a device publishing. */
			__atomic_store_n(&used->idx, (uint16_t)(used->idx + (v & 7)),
					 __ATOMIC_RELEASE);
			break;
		case 2:
			__atomic_store_n(&used->ring[slot].id, v, __ATOMIC_RELAXED);
			break;
		default:
			__atomic_store_n(&used->ring[slot].len, v, __ATOMIC_RELAXED);
			break;
		}
	} else {
		struct virtq_packed_desc *d = &((struct virtq_packed_desc *)
						virtq_desc_area(fz.vq))[slot];

		/* The honest device's view of the ring is no longer the ring's. */
		fz.dev_up = false;
		switch (what % 4) {
		case 0:
			__atomic_store_n(&d->flags, (uint16_t)v, __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_store_n(&d->id, (uint16_t)v, __ATOMIC_RELAXED);
			break;
		case 2:
			__atomic_store_n(&d->len, v, __ATOMIC_RELAXED);
			break;
		default:
			/* A whole used descriptor: id, len, then flags (used in either wrap). */
			__atomic_store_n(&d->id, (uint16_t)v, __ATOMIC_RELAXED);
			__atomic_store_n(&d->len, v >> 16, __ATOMIC_RELAXED);
			__atomic_store_n(&d->flags, (v & 0x8000) ?
					 (VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED) : 0,
					 __ATOMIC_RELEASE);
			break;
		}
	}
}

/* Take every completion; honest device: exactly @p expect of them. */
static void
fz_take_all(int expect)
{
	void *cookies[64];
	uint32_t lens[64];
	uint16_t n, total = 0;

	do {
		n = virtq_get_used(fz.vq, cookies, lens, RTE_DIM(cookies));
		for (uint16_t i = 0; i < n; i++)
			fz_give_back(cookies[i], true, lens[i]);
		total += n;
	} while (n == RTE_DIM(cookies));
	if (total > 0)
		fz.armed_idle = false;
	if (!fz.hostile && expect >= 0)
		FZ_CHECK(total == expect);
}

/*
 * Arming and the wakeup hints. With an honest device: virtq_poll() after
 * virtq_enable_intr_prepare() says "work" whenever completions are pending
 * (else a wakeup is lost); the monitor address does not let a core sleep
 * over pending completions; virtq_used_count() is what virtq_get_used()
 * then takes.
 */
static void
fz_op_intr(struct fz_input *in)
{
	uint8_t what = fz_u8(in);
	uint64_t expected, mask;
	volatile void *addr;
	uint16_t pending;
	uint8_t size;
	uint32_t opaque;
	bool work;

	switch (what % 4) {
	case 0:
		opaque = virtq_enable_intr_prepare(fz.vq);
		work = virtq_poll(fz.vq, opaque);
		FZ_CHECK(virtq_intr_enabled(fz.vq) || virtq_is_broken(fz.vq));
		pending = virtq_used_count(fz.vq);
		if (!fz.hostile)
			FZ_CHECK(work || pending == 0);
		fz.armed_idle = !work && pending == 0 && !virtq_is_broken(fz.vq);
		break;
	case 1:
		virtq_disable_intr(fz.vq);
		FZ_CHECK(!virtq_intr_enabled(fz.vq) || virtq_is_broken(fz.vq));
		fz.armed_idle = false;
		break;
	case 2:
		addr = virtq_monitor_addr(fz.vq, &expected, &mask, &size);
		if (addr == NULL) {
			FZ_CHECK(virtq_is_broken(fz.vq));
			break;
		}
		FZ_CHECK(size == 2);
		if (!fz.hostile && virtq_used_count(fz.vq) != 0)
			FZ_CHECK((*(volatile uint16_t *)addr & mask) != expected);
		break;
	default:
		pending = virtq_used_count(fz.vq);
		if (pending != 0)
			FZ_CHECK(!virtq_is_broken(fz.vq));
		fz_take_all(pending);
		break;
	}
}

/*
 * The honest device publishes what it pushed and decides whether to notify:
 * armed with no work seen, a completion must be notified (a lost wakeup
 * otherwise: the rx interrupt would never fire).
 */
static void
fz_op_dev_flush(void)
{
	uint64_t before = fz.dev.chains_published;
	bool call = fake_dev_flush(&fz.dev);

	if (fz.dev.chains_published == before)
		return;
	if (fz.armed_idle && !fz.hostile)
		FZ_CHECK(call);
	if (call)
		fz.armed_idle = false;
}

static void
fz_op_dev_event(struct fz_input *in)
{
	uint8_t what = fz_u8(in);
	uint16_t v = fz_u16(in);

	if (what & 1)
		fake_dev_set_no_notify(&fz.dev, what & 2);
	else
		fake_dev_set_avail_event(&fz.dev, v);
}

/* Attach the honest device to the ring as virtq_init() laid it out. */
static void
fz_dev_attach(void)
{
	FZ_CHECK(fake_dev_init(&fz.dev, &fz.p, virtq_vring_base(fz.vq), virtq_desc_area(fz.vq),
			       virtq_driver_area(fz.vq), virtq_device_area(fz.vq)) == 0);
	fz.dev_up = true;
	fz.nheld = 0;
}

/* The queue is stopped: every outstanding cookie comes back, once. */
static void
fz_detach_all(void)
{
	void *cookie;

	while ((cookie = virtq_detach_unused(fz.vq)) != NULL)
		fz_give_back(cookie, false, 0);
	FZ_CHECK(fz.held_descs == 0);
	FZ_CHECK(virtq_num_free(fz.vq) == fz.p.num);
}

/*
 * Stop and start again, as the PMD does at dev_stop/dev_start or a
 * reconnection: detach everything, virtq_init() at a new start index (what
 * GET_VRING_BASE answered, or any), a new device on the ring. The hostile
 * device's writes are gone with the old ring; the queue is healthy again.
 */
static void
fz_op_restart(struct fz_input *in)
{
	uint16_t start = fz_u16(in);

	fz_detach_all();
	fake_dev_fini(&fz.dev);
	fz.p.start_idx = (start & 1) ? virtq_last_used_idx(fz.vq) : start;
	FZ_CHECK(virtq_init(fz.vq, &fz.p, fz.ring) == 0);
	FZ_CHECK(!virtq_is_broken(fz.vq) && virtq_stats(fz.vq)->bad_used == 0);
	fz.hostile = false;
	fz.armed_idle = false;
	fz_dev_attach();
}

static void
fz_run(struct fz_input *in)
{
	while (in->n > 0) {
		uint8_t op = fz_u8(in);
		bool broken;

		switch (op % 10) {
		case 0:
			fz_op_add(in);
			break;
		case 1:
			fz_op_add_bufs(in, true);
			break;
		case 2:
			fz_op_add_bufs(in, false);
			break;
		case 3:
			(void)virtq_kick_prepare(fz.vq);
			break;
		case 4:
			fz_op_get_used(in);
			break;
		case 5:
			if (fz.dev_up)
				fz_op_dev_pop(in);
			break;
		case 6:
			if (fz.dev_up)
				fz_op_dev_push(in);
			break;
		case 7:
			if (fz.dev_up)
				fz_op_dev_flush();
			break;
		case 8:
			fz_op_hostile(in);
			break;
		default:
			if ((op & 0xf0) == 0xf0)
				fz_op_restart(in);
			else if (op & 0x10) {
				if (fz.dev_up)
					fz_op_dev_event(in);
			} else {
				fz_op_intr(in);
			}
			break;
		}
		broken = virtq_is_broken(fz.vq);
		FZ_CHECK(broken == (virtq_stats(fz.vq)->bad_used != 0));
		FZ_CHECK(!broken || fz.hostile);
		FZ_CHECK(!broken || virtq_broken_reason(fz.vq) != NULL);
		fz_check_free();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_input in = { data, size };
	uint8_t cfg;
	size_t state_size;

	fuzz_quiet_logs();
	if (size < 3)
		return 0;
	cfg = fz_u8(&in);
	memset(&fz.p, 0, sizeof(fz.p));
	fz.p.layout = (cfg & 1) ? VIRTQ_LAYOUT_PACKED : VIRTQ_LAYOUT_SPLIT;
	fz.p.event_idx = cfg & 2;
	fz.p.in_order = cfg & 4;
	fz.p.indirect_max = (cfg & 8) ? FZ_INDIRECT_MAX : 0;
	fz.p.num = (uint16_t)(2u << (((cfg >> 4) & 7) % 7));
	fz.p.start_idx = fz_u16(&in);

	fz.ring_size = virtq_ring_mem_size(&fz.p);
	state_size = virtq_state_size(&fz.p);
	FZ_CHECK(fz.ring_size != 0 && state_size != 0);
	/* Exact sizes (rounded only as aligned_alloc needs): ASan sees any overrun. */
	fz.ring = aligned_alloc(VIRTQ_RING_ALIGN, RTE_ALIGN_CEIL(fz.ring_size, VIRTQ_RING_ALIGN));
	fz.vq = aligned_alloc(64, RTE_ALIGN_CEIL(state_size, 64));
	FZ_CHECK(fz.ring != NULL && fz.vq != NULL);
	memset(fz.vq, 0x5a, state_size);
	FZ_CHECK(virtq_init(fz.vq, &fz.p, fz.ring) == 0);
	fz_dev_attach();
	fz.hostile = false;
	fz.armed_idle = false;
	fz.ntok = 0;
	fz.held_descs = 0;
	memset(fz.tok, 0, sizeof(fz.tok));

	fz_run(&in);
	fz_detach_all();

	fake_dev_fini(&fz.dev);
	free(fz.vq);
	free(fz.ring);
	return 0;
}
