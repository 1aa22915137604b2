/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * lib/virtq unit tests, races against a real concurrent device thread: re-arm and kick.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "virtq_harness.h"

/* ---- the re-arm race with a real concurrent device ---- */

/*
 * Spin-wait step for the threaded cases: yield now and then, so the peer
 * thread runs even on a loaded 2-core machine.
 */
static void
t_spin(unsigned int *spins)
{
	if (++*spins % 64 == 0)
		sched_yield();
}

/* Buffers and completions of the threaded cases. */
enum { T_THR_NUM = 16 };
#define T_THR_TARGET 100000

/*
 * The driver side of a threaded case: its queue, T_THR_NUM device-writable
 * buffers, the device thread and the buffers taken back.
 */
struct thr_drv {
	struct harness h;
	struct virtq_sg sg[T_THR_NUM];
	void *cookies[T_THR_NUM];
	pthread_t thr;
	bool started;
	uint64_t taken;
	unsigned int spins;
};

/* The queue and the buffers of @p d; no device thread yet. */
static int
thr_setup(struct thr_drv *d, const struct test_cfg *cfg)
{
	d->started = false;
	d->taken = 0;
	d->spins = 0;
	if (h_setup(&d->h, cfg, T_THR_NUM) != 0)
		return -1;
	t_bufs(d->sg, d->cookies, T_THR_NUM, T_SEG_SIZE, 1);
	return 0;
}

/* Start @p d's device thread: @p fn on @p ctx. */
static int
thr_start(struct thr_drv *d, void *(*fn)(void *), void *ctx)
{
	if (pthread_create(&d->thr, NULL, fn, ctx) != 0)
		return -1;
	d->started = true;
	return 0;
}

struct race_ctx {
	struct harness *h;
	uint64_t target;            /* completions the device makes in all */
	uint64_t calls;             /* atomic: calls delivered */
	bool stop;                  /* atomic */
	int dev_error;
};

static void *
race_device(void *arg)
{
	struct race_ctx *x = arg;
	struct fake_dev_chain c;
	uint64_t done = 0;
	unsigned int spins = 0;

	while (done < x->target && !__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		int r = fake_dev_pop(&x->h->dev, &c);

		if (r < 0) {
			x->dev_error = r;
			break;
		}
		if (r == 0) {
			t_spin(&spins);
			continue;
		}
		if (fake_dev_push(&x->h->dev, &c, 1) != 0) {
			x->dev_error = -EINVAL;
			break;
		}
		done++;
		if (fake_dev_flush(&x->h->dev))
			__atomic_fetch_add(&x->calls, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The NAPI loop against a device thread: poll until empty, arm, re-check,
 * sleep until a call. A lost wakeup (work pending, armed, no call coming)
 * shows as a wait that never ends; it is bounded by a timeout.
 */
static int
t_rearm_race_threads(const struct test_cfg *cfg)
{
	struct thr_drv d;
	struct race_ctx x;
	uint64_t seen_calls = 0, sleeps = 0;
	int ret = -1;

	memset(&x, 0, sizeof(x));
	CHECK_EQ(thr_setup(&d, cfg), 0);
	x.h = &d.h;
	x.target = T_THR_TARGET;
	CHECK_EQ(virtq_add_inbufs(d.h.vq, d.sg, d.cookies, T_THR_NUM), T_THR_NUM);
	virtq_kick_prepare(d.h.vq);
	CHECK_EQ(thr_start(&d, race_device, &x), 0);
	while (d.taken < x.target) {
		void *got[T_THR_NUM];
		uint16_t n = virtq_get_used(d.h.vq, got, NULL, T_THR_NUM);
		uint32_t opaque;

		CHECK(!virtq_is_broken(d.h.vq));
		if (n > 0) {
			d.taken += n;
			CHECK_EQ(virtq_add_inbufs(d.h.vq, d.sg, got, n), n);
			virtq_kick_prepare(d.h.vq);
			continue;
		}
		/* Calls before this arming do not count as a wakeup. */
		seen_calls = __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE);
		opaque = virtq_enable_intr_prepare(d.h.vq);
		if (!virtq_poll(d.h.vq, opaque)) {
			/* Sleep until a call; a lost wakeup times out. */
			struct timespec t0, t1;

			sleeps++;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (;;) {
				uint64_t calls = __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE);

				if (calls != seen_calls) {
					seen_calls = calls;
					break;
				}
				t_spin(&d.spins);
				clock_gettime(CLOCK_MONOTONIC, &t1);
				if (t1.tv_sec - t0.tv_sec > 10) {
					printf("#   lost wakeup after %" PRIu64 " buffers\n", d.taken);
					goto teardown;
				}
			}
		}
		virtq_disable_intr(d.h.vq);
	}
	CHECK_EQ(d.taken, x.target);
	printf("#   %" PRIu64 " buffers, %" PRIu64 " sleeps, %" PRIu64 " calls\n", d.taken, sleeps,
	       __atomic_load_n(&x.calls, __ATOMIC_ACQUIRE));
	ret = 0;
teardown:
	if (d.started) {
		__atomic_store_n(&x.stop, true, __ATOMIC_RELEASE);
		pthread_join(d.thr, NULL);
		if (x.dev_error != 0) {
			printf("#   device error %d: %s\n", x.dev_error, d.h.dev.error);
			ret = -1;
		}
	}
	h_teardown(&d.h);
	return ret;
}

/* ---- the kick race with a real concurrent device ---- */

static double
t_elapsed(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

struct kick_ctx {
	struct harness *h;
	uint64_t target;            /* completions the device makes in all */
	uint64_t kicks;             /* atomic: kicks delivered */
	uint64_t sleeps;            /* device only */
	int status;                 /* atomic: 0 running, 1 done, < 0 failed */
};

/*
 * A device that sleeps when the ring is empty, the vhost way: ask for a kick
 * (clear NO_NOTIFY or move avail_event to last_avail; the fake device fences
 * after the store), re-check the ring, sleep until a kick. A kick lost by the
 * driver leaves it asleep with buffers pending: a timeout.
 */
static void *
kick_device(void *arg)
{
	struct kick_ctx *x = arg;
	struct fake_dev *d = &x->h->dev;
	bool event_idx = x->h->p.event_idx;
	struct fake_dev_chain c;
	uint64_t done = 0;
	unsigned int spins = 0;
	int status = 1;

	fake_dev_set_no_notify(d, true);
	while (done < x->target) {
		struct timespec t0;
		uint64_t seen;
		int r = fake_dev_pop(d, &c);

		if (r < 0 || (r == 1 && fake_dev_push(d, &c, 1) != 0)) {
			status = -EPROTO;
			break;
		}
		if (r == 1) {
			fake_dev_flush(d);
			done++;
			continue;
		}
		seen = __atomic_load_n(&x->kicks, __ATOMIC_ACQUIRE);
		if (event_idx)
			fake_dev_set_avail_event(d, d->last_avail);
		else
			fake_dev_set_no_notify(d, false);
		r = fake_dev_avail_count(d);
		if (r < 0) {
			status = -EPROTO;
			break;
		}
		if (r == 0) {
			x->sleeps++;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			while (__atomic_load_n(&x->kicks, __ATOMIC_ACQUIRE) == seen &&
			       __atomic_load_n(&x->status, __ATOMIC_ACQUIRE) == 0) {
				t_spin(&spins);
				if (t_elapsed(&t0) > 10.0) {
					status = -ETIMEDOUT;
					break;
				}
			}
			if (status != 1 || __atomic_load_n(&x->status, __ATOMIC_ACQUIRE) != 0)
				break;
		}
		if (!event_idx)
			fake_dev_set_no_notify(d, true);
	}
	if (__atomic_load_n(&x->status, __ATOMIC_ACQUIRE) == 0)
		__atomic_store_n(&x->status, status, __ATOMIC_RELEASE);
	return NULL;
}

/* The driver publishes, kicks only when asked, and polls for completions. */
static int
t_kick_race_threads(const struct test_cfg *cfg)
{
	struct thr_drv d;
	struct kick_ctx x;
	unsigned int i;
	int ret = -1;

	memset(&x, 0, sizeof(x));
	CHECK_EQ(thr_setup(&d, cfg), 0);
	x.h = &d.h;
	x.target = T_THR_TARGET;
	CHECK_EQ(thr_start(&d, kick_device, &x), 0);
	/* Dribble the first buffers in one by one. */
	for (i = 0; i < T_THR_NUM; i++) {
		CHECK_EQ(virtq_add_inbufs(d.h.vq, &d.sg[i], &d.cookies[i], 1), 1);
		if (virtq_kick_prepare(d.h.vq))
			__atomic_fetch_add(&x.kicks, 1, __ATOMIC_RELEASE);
	}
	while (d.taken < x.target && __atomic_load_n(&x.status, __ATOMIC_ACQUIRE) == 0) {
		void *got[T_THR_NUM];
		uint16_t n = virtq_get_used(d.h.vq, got, NULL, (uint16_t)(1 + d.taken % 4));

		CHECK(!virtq_is_broken(d.h.vq));
		if (n == 0) {
			t_spin(&d.spins);
			continue;
		}
		d.taken += n;
		CHECK_EQ(virtq_add_inbufs(d.h.vq, d.sg, got, n), n);
		if (virtq_kick_prepare(d.h.vq))
			__atomic_fetch_add(&x.kicks, 1, __ATOMIC_RELEASE);
		/* Now and then let the device drain the ring and go to sleep. */
		if (t_rand() % 4 == 0)
			for (volatile unsigned int spin = t_rand() % 8192; spin > 0; spin--)
				;
	}
	pthread_join(d.thr, NULL);
	d.started = false;
	if (x.status < 0)
		printf("#   device: %s after %" PRIu64 " buffers %s\n",
		       x.status == -ETIMEDOUT ? "lost kick" : "error", d.taken, d.h.dev.error);
	CHECK_EQ(x.status, 1);
	d.taken += h_drain(&d.h);
	CHECK_EQ(d.taken, x.target);
	CHECK_EQ(virtq_stats(d.h.vq)->kicks, x.kicks);
	printf("#   %" PRIu64 " buffers, %" PRIu64 " device sleeps, %" PRIu64 " kicks, %"
	       PRIu64 " suppressed\n", d.taken, x.sleeps, x.kicks,
	       virtq_stats(d.h.vq)->kicks_suppressed);
	ret = 0;
teardown:
	if (d.started) {
		__atomic_store_n(&x.status, -ECANCELED, __ATOMIC_RELEASE);
		pthread_join(d.thr, NULL);
	}
	h_teardown(&d.h);
	return ret;
}

static const struct test_case cases[] = {
	{ "re-arm race, device thread", t_rearm_race_threads, RUN_ALL, ON_BOTH },
	{ "kick race, device thread", t_kick_race_threads, RUN_ALL, ON_BOTH },
};

const struct test_section test_section_threads = { cases, RTE_DIM(cases) };
