/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

/*
 * Rx interrupts the NAPI way.
 *
 * The interrupts are the device's per-vring eventfds (vhost-user: the back
 * end's "call" eventfds; virtio-pci: the eventfds VFIO signals for the MSI-X
 * vectors), one per rx vring, exposed as the efds of an interrupt handle so
 * that the ethdev calls (rte_eth_dev_rx_intr_ctl_q, rte_epoll_wait) work as
 * with any NIC.
 * EAL is told not to read them (efd counter size 0): the driver reads the
 * counter at disarm, so it knows how many notifications the back end sent.
 *
 * Arming follows Linux's virtqueue_enable_cb_prepare + virtqueue_poll: arm,
 * full barrier, re-read the used index. Work that raced the arming wakes the
 * waiter at once (we signal the queue's own eventfd), or, with
 * intr_rescue=eagain, the call returns -EAGAIN with the queue disarmed.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_interrupts.h>

#include <ethdev_driver.h>

#include "vnapi_dev.h"
#include "vnapi_gate.h"
#include "vnapi_intr.h"
#include "vnapi_logs.h"

/* Build the rx interrupt handle over the rx vrings' call eventfds. */
int
vnapi_intr_configure(struct rte_eth_dev *dev)
{
	struct vnapi_proc *proc = dev->process_private;
	uint16_t nb_rxq = dev->data->nb_rx_queues;
	struct rte_intr_handle *h;
	uint16_t q;

	vnapi_intr_release(dev);
	if (!dev->data->dev_conf.intr_conf.rxq)
		return 0;

	h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (h == NULL)
		return -ENOMEM;
	if (rte_intr_type_set(h, RTE_INTR_HANDLE_VDEV) != 0 ||
	    rte_intr_efd_counter_size_set(h, 0) != 0 ||
	    rte_intr_nb_efd_set(h, nb_rxq) != 0 ||
	    rte_intr_max_intr_set(h, nb_rxq + 1) != 0 ||
	    rte_intr_vec_list_alloc(h, "vnapi_intr_vec", nb_rxq) != 0)
		goto err;
	for (q = 0; q < nb_rxq; q++) {
		if (rte_intr_efds_index_set(h, q, proc->callfd[2 * q]) != 0 ||
		    rte_intr_vec_list_index_set(h, q, RTE_INTR_VEC_RXTX_OFFSET + q) != 0)
			goto err;
	}
	dev->intr_handle = h;
	return 0;
err:
	VNAPI_INIT_LOG(ERR, "%s: cannot build the rx interrupt handle: %s",
		       dev->data->name, rte_strerror(rte_errno));
	rte_intr_vec_list_free(h);
	rte_intr_instance_free(h);
	return -ENOMEM;
}

void
vnapi_intr_release(struct rte_eth_dev *dev)
{
	if (dev->intr_handle == NULL)
		return;
	rte_intr_vec_list_free(dev->intr_handle);
	rte_intr_instance_free(dev->intr_handle);
	dev->intr_handle = NULL;
}

/*
 * The last disarm of this queue ended a wait with work in the ring and no
 * notification read. It left the device the event it was armed with
 * (virtq_disarm_keep_event()), so a device that had made the work used
 * before that disarm owes the notification whenever it reads the event
 * area: its notification is late, or lost. Before arming again (nothing of
 * ours writes the eventfd while the queue is disarmed), whatever is in the
 * eventfd came from the device: late, not lost. Emptying it also keeps the
 * coming wait from returning at once for work already taken.
 */
static void
vnapi_intr_judge_suspect(struct vnapi_proc *proc, struct vnapi_rxq *rxq)
{
	uint64_t cnt = 0;

	if (!rxq->unnotified_suspect)
		return;
	rxq->unnotified_suspect = false;
	if (read(proc->callfd[rxq->vring], &cnt, sizeof(cnt)) == sizeof(cnt) && cnt != 0) {
		rxq->istats.late++;
		rxq->istats.notifications += cnt;
		return;
	}
	rxq->istats.unnotified++;
}

/* The rings start over (reconnection, restart): nothing is owed any more. */
void
vnapi_intr_rings_restarted(struct vnapi_rxq *rxq)
{
	rxq->unnotified_suspect = false;
	rxq->rx_window = VNAPI_RXW_NONE;
	rxq->wake_first_poll = false;
}

int
vnapi_dev_rx_queue_intr_enable(struct rte_eth_dev *dev, uint16_t qid)
{
	struct vnapi_hw *hw = dev->data->dev_private;
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_rxq *rxq = dev->data->rx_queues[qid];
	uint64_t one = 1;
	uint32_t opaque;
	int ret = 0;

	/* No back end: sleep. Whoever brings one back signals the call
	 * eventfd once the ring is served again (vnapi_conn.c). */
	if (!vnapi_gate_enter(&rxq->gate))
		return 0;
	if (virtq_is_broken(rxq->vq)) {
		ret = -EIO;
		goto out;
	}
	if (!virtq_intr_enabled(rxq->vq)) {
		rxq->istats.arms++;
		rxq->armed_tsc = rte_get_tsc_cycles();
		vnapi_intr_judge_suspect(proc, rxq);
	}
	rxq->rx_window = VNAPI_RXW_NONE;
	rxq->wake_first_poll = false;
	/* Store of used_event / the flag, then (inside virtq_poll) a full
	 * barrier, then the load of the used index: pairs with the back end's
	 * store of the used index, full barrier, load of used_event / flag. One
	 * of the two sides is bound to see the other's store. */
	opaque = virtq_enable_intr_prepare(rxq->vq);
	if (likely(!virtq_poll(rxq->vq, opaque)))
		goto out;

	rxq->istats.rescues++;
	if (hw->params.intr_rescue == VNAPI_RESCUE_EAGAIN) {
		virtq_disable_intr(rxq->vq);
		ret = -EAGAIN;
		goto out;
	}
	/* The back end may or may not have signalled for this work: signal
	 * ourselves so the waiter returns now rather than at its timeout. */
	if (write(proc->callfd[rxq->vring], &one, sizeof(one)) == sizeof(one))
		rxq->own_signals++;
out:
	vnapi_gate_leave(&rxq->gate);
	return ret;
}

int
vnapi_dev_rx_queue_intr_disable(struct rte_eth_dev *dev, uint16_t qid)
{
	struct vnapi_proc *proc = dev->process_private;
	struct vnapi_rxq *rxq = dev->data->rx_queues[qid];
	bool armed, pending;
	uint64_t cnt = 0, own;

	if (!vnapi_gate_enter(&rxq->gate)) {
		/* The ring is not ours to touch; empty the counter (the wakeup
		 * after a reconnection is our own signal). */
		if (read(proc->callfd[rxq->vring], &cnt, sizeof(cnt)) < 0)
			cnt = 0;
		rxq->own_signals = 0;
		vnapi_intr_rings_restarted(rxq);
		return 0;
	}
	armed = virtq_intr_enabled(rxq->vq);
	/* Non-blocking read: the number of writes since the last read, our
	 * own rescue signals included. The counter is empty afterwards. */
	if (read(proc->callfd[rxq->vring], &cnt, sizeof(cnt)) != sizeof(cnt))
		cnt = 0;
	own = rxq->own_signals;
	rxq->own_signals = 0;
	if (!armed) {
		/* Nothing to disarm. A notification here wakes nobody: the
		 * one a disarm after a wait left owed (late), or one for a
		 * queue never armed (lib/vhost notifies its first completion
		 * unconditionally). An event left owed stays until then. */
		if (cnt > own) {
			rxq->istats.notifications += cnt - own;
			if (rxq->unnotified_suspect) {
				rxq->unnotified_suspect = false;
				rxq->istats.late++;
				rxq->rx_window = VNAPI_RXW_NONE;
				virtq_disable_intr(rxq->vq);
			}
		}
		vnapi_gate_leave(&rxq->gate);
		return 0;
	}
	if (cnt > own) {
		virtq_disable_intr(rxq->vq);
		vnapi_gate_leave(&rxq->gate);
		rxq->istats.notifications += cnt - own;
		rxq->istats.wakeups++;
		rxq->rx_window = VNAPI_RXW_WAKE;
		rxq->wake_first_poll = true;
		return 0;
	}
	/* Nothing from the device. Work in the ring now, with no notification
	 * read above, is work whose notification is on its way or lost. */
	pending = virtq_used_count(rxq->vq) != 0;
	if (pending && own == 0 &&
	    rte_get_tsc_cycles() - rxq->armed_tsc >=
	    rte_get_tsc_hz() / 1000000 * VNAPI_INTR_WAIT_MIN_US) {
		/* After a wait (only here, rare: the clock and the division).
		 * The device may have made the work used and not yet read the
		 * event area: left armed, it owes the notification, which the
		 * rx bursts until the next arm look for (vnapi_rx_window_account)
		 * and the next arm judges. Withdrawn, it could rightly send
		 * none, and a withheld notification would look lost. */
		virtq_disarm_keep_event(rxq->vq);
		vnapi_gate_leave(&rxq->gate);
		rxq->unnotified_suspect = true;
		rxq->rx_window = VNAPI_RXW_SUSPECT;
		return 0;
	}
	virtq_disable_intr(rxq->vq);
	vnapi_gate_leave(&rxq->gate);
	if (pending && own == 0) {
		/* Right after the arm: the application disarmed on its own
		 * (work raced the arming; the device may have seen our disarm
		 * and rightly not notified). */
		rxq->istats.raced++;
	} else if (own != 0) {
		/* Woken by our own rescue alone: the device never announced
		 * the work the re-check found. */
		rxq->istats.rescues_unannounced++;
	} else if (!pending) {
		/* Nothing arrived while armed (the application's wait timed
		 * out): what the polls find until the next arm arrived while
		 * disarmed, no interrupt owed. */
		rxq->rx_window = VNAPI_RXW_AWAKE;
	}
	return 0;
}

/*
 * After a disarm that left the device its event: the notification owed
 * for the work that disarm found. Read here (the rx burst, inside the
 * gate), it is late, not lost, and the event is withdrawn: in flag mode the
 * device would otherwise notify every completion while the application
 * polls. Not read before the next arm: that arm judges.
 */
static void
vnapi_intr_suspect_poll(struct vnapi_rxq *rxq)
{
	const struct vnapi_proc *proc = rte_eth_devices[rxq->port_id].process_private;
	uint64_t cnt = 0;

	if (read(proc->callfd[rxq->vring], &cnt, sizeof(cnt)) != sizeof(cnt) || cnt == 0)
		return;
	rxq->istats.late++;
	rxq->istats.notifications += cnt;
	rxq->unnotified_suspect = false;
	rxq->rx_window = VNAPI_RXW_NONE;
	virtq_disable_intr(rxq->vq);
}

void
vnapi_rx_window_account(struct vnapi_rxq *rxq, uint16_t nb_rx)
{
	if (rxq->rx_window == VNAPI_RXW_SUSPECT) {
		vnapi_intr_suspect_poll(rxq);
		return;
	}
	if (rxq->rx_window == VNAPI_RXW_AWAKE) {
		rxq->istats.awake_packets += nb_rx;
		return;
	}
	if (rxq->wake_first_poll) {
		rxq->wake_first_poll = false;
		if (nb_rx == 0)
			rxq->istats.spurious++;
	}
	rxq->istats.wakeup_packets += nb_rx;
}
