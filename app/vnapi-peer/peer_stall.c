/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "peer_proc.h"
#include "peer_stall.h"
#include "peer_util.h"

static void *
stall_main(void *arg)
{
	struct peer_stall_probe *p = arg;
	int sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	uint64_t due = peer_now_ns() + p->period_ns;
	uint64_t rq = peer_schedstat_wait_ns(sched_fd);

	/* The default 50 us slack would read as lateness. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = {
			.tv_sec = (time_t)(due / 1000000000ull),
			.tv_nsec = (long)(due % 1000000000ull),
		};
		uint64_t now, late, rq_prev;

		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
			continue; /* EINTR: sleep again to the same deadline */
		now = peer_now_ns();
		/* Woken late, we may have waited in the run queue behind other
		 * threads on this CPU: that is their time, not a stall. */
		rq_prev = rq;
		rq = peer_schedstat_wait_ns(sched_fd);
		late = now - due;
		late -= late < rq - rq_prev ? late : rq - rq_prev;
		p->wakeups++;
		if (late > p->threshold_ns) {
			if (p->n < p->cap)
				p->stalls[p->n++] = (struct peer_stall){ .from = due,
									  .to = due + late };
			else
				p->dropped++;
		}
		due = now + p->period_ns;
	}
	if (sched_fd >= 0)
		close(sched_fd);
	return NULL;
}

int
peer_stall_start(struct peer_stall_probe *p, int cpu, uint32_t period_us,
		 uint32_t threshold_us, uint32_t cap)
{
	cpu_set_t set;
	pthread_attr_t attr;
	int ret;

	memset(p, 0, sizeof(*p));
	p->cpu = cpu;
	p->period_ns = (uint64_t)period_us * 1000;
	p->threshold_ns = (uint64_t)threshold_us * 1000;
	p->cap = cap;
	p->stalls = calloc(cap, sizeof(*p->stalls));
	if (p->stalls == NULL)
		return -ENOMEM;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_attr_init(&attr);
	if (ret == 0)
		ret = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (ret == 0)
		ret = pthread_create(&p->thread, &attr, stall_main, p);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		peer_stall_free(p);
		return -ret;
	}
	p->running = true;
	return 0;
}

void
peer_stall_stop(struct peer_stall_probe *p)
{
	if (!p->running)
		return;
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	pthread_join(p->thread, NULL);
	p->running = false;
}

void
peer_stall_free(struct peer_stall_probe *p)
{
	peer_stall_stop(p);
	free(p->stalls);
	p->stalls = NULL;
	p->n = 0;
}

uint64_t
peer_stall_overlap_ns(const struct peer_stall_probe *p, uint64_t t0, uint64_t t1)
{
	uint32_t lo = 0, hi = p->n, i;
	uint64_t sum = 0;

	/* First stall ending after t0 (stalls are in time order, disjoint). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->stalls[mid].to <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < p->n && p->stalls[i].from < t1; i++) {
		uint64_t a = p->stalls[i].from > t0 ? p->stalls[i].from : t0;
		uint64_t b = p->stalls[i].to < t1 ? p->stalls[i].to : t1;

		sum += b - a;
	}
	return sum;
}

uint64_t
peer_stall_total_ns(const struct peer_stall_probe *p)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < p->n; i++)
		sum += p->stalls[i].to - p->stalls[i].from;
	return sum;
}
