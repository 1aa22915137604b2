/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _VNAPI_FAKE_PORT_H_
#define _VNAPI_FAKE_PORT_H_

/*
 * A scripted port for lib/napi: struct napi_ops over plain counters, no EAL.
 *
 * Each fake queue holds a number of waiting packets. Arming records the
 * queue as armed; packets that arrive on an armed queue signal it (once,
 * like an eventfd); the fake epoll returns the signalled, registered queues
 * with the data they were registered with. Scripts inject a race at arming
 * (-EAGAIN from enable, or packets that land between enable and the
 * re-check), spurious events, tx room and cleanup, and a manual clock.
 */

#include <stdbool.h>
#include <stdint.h>

#include "napi.h"

#define FAKE_QUEUES 8

struct fake_queue {
	uint16_t port;
	uint16_t queue;
	uint32_t waiting;       /* packets the next rx bursts return */
	bool armed;
	bool signalled;         /* eventfd written, not yet returned by epoll */
	bool registered;
	void *data;             /* epoll data given at registration */
	int enable_ret_once;    /* returned (once) by the next enable; 0: none */
	uint32_t arrive_on_enable; /* packets landing right after the next enable */
	bool eagain_disarms;    /* -EAGAIN: the port disarms itself (vnapi) */
	int register_ret;       /* intr_register result */
	uint32_t rx_frames;     /* frames rx handed out */
	uint32_t gone;          /* ... sent or freed, in order */
	/* Call counts. */
	unsigned int rx_calls;
	unsigned int enables;
	unsigned int disables;
	unsigned int counts;
	unsigned int unregisters;
};

struct fake_port {
	struct fake_queue q[FAKE_QUEUES];
	unsigned int nb;
	bool count_supported;
	bool cleanup_supported;
	uint64_t clock;          /* now() */
	uint64_t tick;           /* added to the clock at every now() */
	/* epoll */
	unsigned int waits;
	int last_timeout;
	uint64_t sleep_cycles;   /* clock advance inside each wait */
	void *spurious_data[FAKE_QUEUES]; /* returned (once) by the next wait */
	unsigned int nb_spurious;
	int wait_ret_once;       /* e.g. -1: EINTR (once); 0: none */
	int stop_fd;             /* registered eventfd, or -1 */
	void *stop_data;
	/* tx */
	uint32_t tx_room;        /* packets tx_burst accepts */
	uint32_t tx_done;        /* completions cleanup can reclaim */
	uint32_t tx_done_per_cleanup; /* cleanup reclaims at most this many (0: all) */
	unsigned int tx_calls;
	unsigned int cleanup_calls;
	uint64_t tx_accepted;
	/*
	 * Frames: rx hands out numbered mbufs; a frame sent or freed
	 * (free_pkts) must be the next of its rx queue not yet gone, else
	 * out_of_order counts it.
	 */
	uint32_t rx_seq;         /* frames rx has handed out (all queues) */
	uint64_t freed;          /* frames free_pkts freed */
	unsigned int out_of_order;
};

extern const struct napi_ops fake_ops;

/* Reset and set up nb queues on port 0 (queue i = i), count and cleanup supported. */
void fake_init(struct fake_port *fp, unsigned int nb);
/* Packets arrive on queue i; an armed queue is signalled. */
void fake_arrive(struct fake_port *fp, unsigned int i, uint32_t n);
struct fake_queue *fake_find(struct fake_port *fp, uint16_t port, uint16_t queue);

#endif /* _VNAPI_FAKE_PORT_H_ */
