/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "peer_proc.h"
#include "peer_watch.h"

#define PEER_PROBE_PERIOD_US 200   /* a probe wakes this often ... */
#define PEER_PROBE_LATE_US   100   /* ... and a wake-up later than this is a stall */
#define PEER_PROBE_CAP       (1u << 18)

void
peer_watch_init(struct peer_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->fe_sched_fd = -1;
	w->self_sched_fd = -1;
	w->stat_fd = -1;
	w->fe_pid = -1;
}

/* Does /proc/<pid>/cmdline hold @p needle? */
static bool
peer_cmdline_has(const char *pid, const char *needle)
{
	char path[sizeof("/proc//cmdline") + 256], buf[8192]; /* a d_name is < 256 */
	size_t len = strlen(needle);
	ssize_t n, i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	for (i = 0; n > 0 && i + (ssize_t)len <= n; i++)
		if (memcmp(buf + i, needle, len) == 0)
			return true;
	return false;
}

/*
 * A probe on the front end's CPU, when its main thread (its lcore) is
 * pinned to one CPU that is not ours, and one on our own: our busy wait
 * sees the gaps between its polls, not a steal inside a burst call (the
 * in-process back end's work).
 */
static void
peer_watch_probes(struct peer_watch *w)
{
	cpu_set_t fe_set, self_set;
	int cpu, self = sched_getcpu(), ret;

	if (sched_getaffinity(0, sizeof(self_set), &self_set) == 0 && CPU_COUNT(&self_set) == 1) {
		ret = peer_stall_start(&w->self_probe, self, PEER_PROBE_PERIOD_US,
				       PEER_PROBE_LATE_US, PEER_PROBE_CAP);
		printf("# stall probe on our CPU %d: %s\n", self,
		       ret == 0 ? "running" : strerror(-ret));
	} else {
		printf("# stall probe: we are not pinned to one CPU, no probe on ours\n");
	}
	if (sched_getaffinity((pid_t)w->fe_pid, sizeof(fe_set), &fe_set) != 0 ||
	    CPU_COUNT(&fe_set) != 1) {
		printf("# stall probe: front end not pinned to one CPU, no probe\n");
		return;
	}
	for (cpu = 0; !CPU_ISSET(cpu, &fe_set); cpu++)
		;
	if (cpu == self) {
		printf("# stall probe: front end shares our CPU %d, no probe\n", cpu);
		return;
	}
	ret = peer_stall_start(&w->probe, cpu, PEER_PROBE_PERIOD_US, PEER_PROBE_LATE_US,
			       PEER_PROBE_CAP);
	printf("# stall probe on CPU %d: %s\n", cpu, ret == 0 ? "running" : strerror(-ret));
}

void
peer_watch_start(struct peer_watch *w, const char *needle, bool probes)
{
	char path[64];
	struct dirent *de;
	long self = (long)getpid(), found = -1;
	int matches = 0;
	DIR *d;

	w->self_sched_fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
	d = opendir("/proc");
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0 || pid == self)
			continue;
		if (peer_cmdline_has(de->d_name, needle)) {
			found = pid;
			matches++;
		}
	}
	closedir(d);
	if (matches != 1) {
		printf("# run-queue accounting: %d processes name %s, front end not watched\n",
		       matches, needle);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%ld/schedstat", found);
	w->fe_sched_fd = open(path, O_RDONLY | O_CLOEXEC);
	w->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	w->fe_pid = found;
	printf("# run-queue accounting: front end pid %ld%s, self %s\n", found,
	       w->fe_sched_fd < 0 ? " (schedstat unreadable)" : "",
	       w->self_sched_fd < 0 ? "unreadable" : "ok");
	if (probes)
		peer_watch_probes(w);
}

uint64_t
peer_watch_fe_wait(const struct peer_watch *w)
{
	return peer_schedstat_wait_ns(w->fe_sched_fd);
}

uint64_t
peer_watch_self_wait(const struct peer_watch *w)
{
	return peer_schedstat_wait_ns(w->self_sched_fd);
}

uint64_t
peer_watch_steal(const struct peer_watch *w)
{
	return peer_steal_ticks(w->stat_fd);
}

void
peer_watch_stop(struct peer_watch *w)
{
	peer_stall_stop(&w->probe);
	peer_stall_stop(&w->self_probe);
}

uint64_t
peer_watch_wait(const struct peer_watch *w, uint64_t t_send, uint64_t lat, uint64_t sched_ns,
		uint64_t fe_ns, uint64_t *fe_stall, uint64_t *self_stall)
{
	uint64_t fs = peer_stall_overlap_ns(&w->probe, t_send, t_send + lat);
	uint64_t ss = peer_stall_overlap_ns(&w->self_probe, t_send, t_send + lat);
	uint64_t wait = RTE_MAX(sched_ns - fe_ns, ss) + RTE_MAX(fe_ns, fs);

	*fe_stall = fs;
	*self_stall = ss;
	return RTE_MIN(wait, lat);
}

void
peer_watch_free(struct peer_watch *w)
{
	peer_stall_stop(&w->probe);
	peer_stall_stop(&w->self_probe);
	peer_stall_free(&w->probe);
	peer_stall_free(&w->self_probe);
	if (w->fe_sched_fd >= 0)
		close(w->fe_sched_fd);
	if (w->self_sched_fd >= 0)
		close(w->self_sched_fd);
	if (w->stat_fd >= 0)
		close(w->stat_fd);
	peer_watch_init(w);
}
