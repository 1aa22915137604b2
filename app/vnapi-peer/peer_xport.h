/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _PEER_XPORT_H_
#define _PEER_XPORT_H_

/**
 * @file
 * Peer library: where a traffic program's frames go and come from.
 *
 *   ethdev  ports of DPDK's net_vhost, one per vhost-user socket (the
 *           server the front end under test connects to), 1..8 queue
 *           pairs each; polled.
 *   unix    a unix datagram socket bound at a path, sending to another
 *           (QEMU's -netdev dgram: one datagram is one frame); no EAL.
 *   packet  an AF_PACKET socket on a network interface (QEMU's tap, in the
 *           namespace the caller runs the program in); its own frames are
 *           not received back; no EAL.
 *
 * Sockets have one port and one queue; their waits block in poll(2), so
 * that a peer of a QEMU guest leaves the CPUs to QEMU.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rte_ether.h>
#include <rte_mempool.h>

#define PEER_XPORT_MAX_PORTS  2
#define PEER_XPORT_MAX_QUEUES 8
#define PEER_XPORT_BURST      32

enum peer_xport_kind {
	PEER_XPORT_ETHDEV,
	PEER_XPORT_UNIX,
	PEER_XPORT_PACKET,
};

/** One frame to send: where to write it (valid until peer_xport_tx()). */
struct peer_xbuf {
	uint8_t *data;
	void *m;          /**< the mbuf (ethdev) */
};

/** A frame received; data is valid during the callback only. */
typedef void (*peer_xport_rx_fn)(void *arg, const uint8_t *data, uint32_t len,
				 uint16_t port, uint16_t queue, uint64_t t_ns);

struct peer_xport {
	enum peer_xport_kind kind;
	uint16_t nb_ports;
	uint16_t nb_queues;
	uint16_t port_id[PEER_XPORT_MAX_PORTS];     /**< ethdev */
	struct rte_ether_addr mac[PEER_XPORT_MAX_PORTS];
	struct rte_mempool *pool;                   /**< ethdev */
	int fd;                                     /**< sockets, else -1 */
	struct sockaddr_un local;                   /**< unix: ours, removed at close */
	struct sockaddr_un remote;                  /**< unix */
	socklen_t remote_len;
	uint8_t *slab;                              /**< sockets: burst buffers */
	uint64_t q_sent[PEER_XPORT_MAX_QUEUES];     /**< frames taken per tx queue */
	uint64_t q_back[PEER_XPORT_MAX_QUEUES];     /**< frames received per rx queue */
	uint64_t tx_errors;                         /**< sockets: a send failed otherwise */
	int last_errno;
};

/**
 * net_vhost on each of @p nb_socks vhost-user sockets (port i is
 * net_vhost<i>) with @p queues queue pairs, configured and started
 * (the sockets listen from then on). EAL must be up.
 * @return 0, or a negative errno (printed as a "# ..." line).
 */
int peer_xport_ethdev(struct peer_xport *x, const char *const *socks, uint16_t nb_socks,
		      uint16_t queues);

/** A unix datagram socket bound at @p local (a stale file removed) sending to @p remote. */
int peer_xport_unix(struct peer_xport *x, const char *local, const char *remote);

/** An AF_PACKET socket on interface @p ifname. */
int peer_xport_packet(struct peer_xport *x, const char *ifname);

/** Wait for every port's link (ethdev) until @p timeout s; 0, -ETIMEDOUT or -EINTR. */
int peer_xport_link_wait(struct peer_xport *x, double timeout, const volatile sig_atomic_t *quit);

/**
 * @p n buffers of @p len bytes to write frames into.
 * @return 0, or -ENOBUFS (nothing allocated).
 */
int peer_xport_alloc(struct peer_xport *x, struct peer_xbuf *b, uint16_t n, uint32_t len);

/**
 * Send @p n frames of @p len bytes on @p port, @p queue; frames not taken
 * are released.
 * @return how many were taken (the first ones).
 */
uint16_t peer_xport_tx(struct peer_xport *x, uint16_t port, uint16_t queue,
		       struct peer_xbuf *b, uint16_t n, uint32_t len);

/**
 * One receive sweep over every queue of every port: @p fn for each frame.
 * @return the frames received.
 */
unsigned int peer_xport_rx(struct peer_xport *x, peer_xport_rx_fn fn, void *arg);

/**
 * Send back what arrives (the MAC addresses swapped), one sweep.
 * @return frames received; *@p tx: frames sent back.
 */
unsigned int peer_xport_reflect(struct peer_xport *x, uint64_t *tx);

/**
 * Nothing to do until @p until_ns (CLOCK_MONOTONIC) but receive: sockets
 * block in poll(2) on @p extra_fd too (when >= 0) at most until then;
 * ethdev returns at once (the caller polls).
 * @return 1 when @p extra_fd is readable, else 0.
 */
int peer_xport_idle(struct peer_xport *x, uint64_t until_ns, int extra_fd);

/** Whether the transport blocks in peer_xport_idle() (sockets). */
static inline bool
peer_xport_blocks(const struct peer_xport *x)
{
	return x->fd >= 0;
}

/** Stop, close and remove the ports, or close the socket. */
void peer_xport_close(struct peer_xport *x);

#endif /* _PEER_XPORT_H_ */
