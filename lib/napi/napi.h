/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The vnapi authors
 */

#ifndef _NAPI_H_
#define _NAPI_H_

/**
 * @file
 * NAPI-style hybrid poll/interrupt scheduling of ethdev rx queues.
 *
 * A context belongs to one lcore (one thread) and holds (port, queue)
 * entries. One round (napi_poll_once()) polls every scheduled entry up to its
 * budget and hands what it got to the entry's handler. An entry that used its
 * whole budget stays scheduled. An entry that came up short is armed
 * (rte_eth_dev_rx_intr_enable) once its mode says so; arming is followed by a
 * re-check (-EAGAIN from the enable call, or rte_eth_rx_queue_count() > 0
 * where the port has it), and work found there is a race: the entry is
 * disarmed again and stays scheduled (Linux "virtio_net: Disable interrupts
 * if napi_complete_done rescheduled napi"). When no entry is scheduled, the
 * round sleeps in rte_epoll_wait on the thread's epoll instance; each woken
 * entry is disarmed and scheduled for the next round.
 *
 * Modes:
 * - NAPI_MODE_POLL: never armed; the context never sleeps while it holds one.
 * - NAPI_MODE_INTERRUPT: armed after every empty round.
 * - NAPI_MODE_HYBRID: armed after an empty round once the time since the
 *   entry's last packet reaches its deferral window W, which the entry
 *   learns from its wakeups between 0 (interrupt mode's behaviour) and the
 *   cap napi_ctx_conf::defer_us (the one setting: how long an idle queue may
 *   be polled to spare a sleep and a wakeup). Any packet restarts the idle
 *   clock, so a queue whose traffic keeps coming within W never arms.
 *   W grows to the cap when a wakeup shows that polling on would have paid
 *   (the first round after it used the whole budget, the sleep was shorter
 *   than a sleep/wake cycle costs, NAPI_WAKE_COST_US, a window expired and
 *   the packet came within the cap, or the re-check at arming found work),
 *   and shrinks when the time from the last packet to the wakeup was beyond
 *   the cap (to 0 when far beyond); at W = 0 the entry probes now and then
 *   (one idle period polled up to the cap, with exponential backoff) so that
 *   a stream whose wakeups look like sparse traffic is still found.
 *   Whether the wakeups' delay costs a stream anything is measured, not
 *   assumed: an entry that carries a stream runs a pace test now and then
 *   (half a millisecond polled with W at the cap against half a millisecond
 *   with W at the paced cap, defer_us less NAPI_WAKE_COST_US, 0 at the
 *   default). Traffic whose rate falls when the entry sleeps (a closed loop,
 *   request/response, a sender held back) stays "responsive" and keeps the
 *   rules above; traffic that keeps its own pace (an open-loop sender) is
 *   "paced" after two tests without a lower rate: its W is capped at the
 *   paced cap, so at the default it arms at every gap, as interrupt mode
 *   does, and one test with a lower rate makes it responsive again. Tests
 *   are 50 ms apart at first and up to 400 ms apart while they confirm the
 *   verdict. The
 *   analogues: Linux's napi_defer_hard_irqs and gro_flush_timeout (empty
 *   polls and a time), IRQ suspension (napi_work()), DPDK's PMD power
 *   management (consecutive empty polls).
 *
 * Application-driven: napi_work() tells the context that the application's
 * own loop found work elsewhere (its tx side, a port or device it polls
 * itself); no hybrid entry of the context arms until defer_us has passed
 * since the last such call, so interrupts stay suspended while the
 * application is busy (Linux's IRQ suspension, irq_suspend_timeout).
 *
 * The port operations go through a table (struct napi_ops); the default
 * table calls ethdev and EAL, a test can pass a scripted one and run the
 * scheduler without EAL.
 *
 * @note Thread safety: a context is used by one thread: napi_queue_add(),
 * napi_poll_once(), napi_run(), napi_tx() and napi_ctx_free() must not run
 * concurrently on the same context, and napi_poll_once()/napi_run() must
 * always be called from the same thread (the first call registers the
 * queues' interrupts with that thread's epoll instance). napi_stop() and
 * napi_stats_get() may be called from any thread, napi_stop() also from a
 * signal handler. Different contexts are independent.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_epoll.h>
#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default packets per entry per round (Linux's NAPI weight). */
#define NAPI_BUDGET_DEFAULT 64
/** Largest budget accepted. */
#define NAPI_BUDGET_MAX 1024
/**
 * What one sleep/wake cycle costs the forwarding lcore, in microseconds
 * (measured on the reference machine; doc/napi.md says how): a hybrid
 * wakeup whose sleep was shorter than this shows that polling on would have
 * paid, and the time from an entry's last packet to its wakeup counts this
 * much less (the wakeup's own delay).
 */
#define NAPI_WAKE_COST_US 20
/**
 * Default napi_ctx_conf::defer_us: one sleep/wake cycle. Polling an idle
 * queue for as long as a sleep and a wakeup would cost, then sleeping, never
 * spends more than twice the CPU of the better of the two choices made with
 * hindsight (the ski-rental bound).
 */
#define NAPI_DEFER_US_DEFAULT NAPI_WAKE_COST_US
/** Largest napi_ctx_conf::defer_us accepted (one second). */
#define NAPI_DEFER_US_MAX 1000000
/** Default napi_ctx_conf::tx_retries. */
#define NAPI_TX_RETRIES_DEFAULT 16
/**
 * Default napi_ctx_conf::tx_hold_ms: how long napi_tx holds the frames a
 * full tx queue refused (and keeps the rx queue that produced them
 * unpolled) before it drops them. Longer than a host stall of the peer;
 * short enough that a peer gone for good costs a held burst per period.
 */
#define NAPI_TX_HOLD_MS_DEFAULT 100
/** Largest napi_ctx_conf::tx_hold_ms accepted. */
#define NAPI_TX_HOLD_MS_MAX 60000
/** Frames one tx queue's hold takes (two rx bursts). */
#define NAPI_TX_HOLD_MAX 64
/** Largest number of entries in one context. */
#define NAPI_MAX_QUEUES 64
/**
 * Buckets of the timing histograms (napi_queue_stats::arm_wake_hist and the
 * others): bucket 0 counts durations under 1 us, bucket i (1..14) those in
 * [2^(i-1), 2^i) us, the last one 16384 us and more.
 */
#define NAPI_HIST_BUCKETS 16

/** When an entry is armed. */
enum napi_mode {
	NAPI_MODE_POLL,       /**< Never armed. */
	NAPI_MODE_INTERRUPT,  /**< Armed after every empty round. */
	NAPI_MODE_HYBRID,     /**< Armed after an empty round once its learned window passed without packets (capped lower while the traffic is paced). */
};

struct napi_ctx;

/**
 * Packet handler of an entry: called from napi_poll_once() with the packets
 * of one rx burst (1..32 of them); it owns them from then on.
 *
 * @param ctx
 *   The context polling.
 * @param port
 *   Port the packets came from.
 * @param queue
 *   Rx queue they came from.
 * @param pkts
 *   The packets.
 * @param nb_pkts
 *   How many.
 * @param arg
 *   napi_queue_conf::handler_arg.
 */
typedef void (*napi_handler_t)(struct napi_ctx *ctx, uint16_t port, uint16_t queue,
			       struct rte_mbuf **pkts, uint16_t nb_pkts, void *arg);

/**
 * Port operations. Every function gets napi_ctx_conf::ops_arg first. The
 * default table (napi_ops_ethdev) calls the ethdev functions of the same
 * names and EAL's per-thread epoll. Return conventions are those of ethdev.
 */
struct napi_ops {
	/** rte_eth_rx_burst. */
	uint16_t (*rx_burst)(void *arg, uint16_t port, uint16_t queue,
			     struct rte_mbuf **pkts, uint16_t nb_pkts);
	/** rte_eth_tx_burst. */
	uint16_t (*tx_burst)(void *arg, uint16_t port, uint16_t queue,
			     struct rte_mbuf **pkts, uint16_t nb_pkts);
	/** rte_eth_dev_rx_intr_enable: 0 armed, -EAGAIN work found and left disarmed. */
	int (*intr_enable)(void *arg, uint16_t port, uint16_t queue);
	/** rte_eth_dev_rx_intr_disable. */
	int (*intr_disable)(void *arg, uint16_t port, uint16_t queue);
	/** rte_eth_rx_queue_count: used descriptors, or -ENOTSUP. */
	int (*rx_queue_count)(void *arg, uint16_t port, uint16_t queue);
	/** rte_eth_tx_done_cleanup: descriptors freed, or -ENOTSUP. */
	int (*tx_done_cleanup)(void *arg, uint16_t port, uint16_t queue, uint32_t free_cnt);
	/**
	 * Add the queue's interrupt to the calling thread's epoll instance,
	 * with @p data returned in rte_epoll_event::epdata.data on wakeup
	 * (rte_eth_dev_rx_intr_ctl_q with RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_ADD).
	 */
	int (*intr_register)(void *arg, uint16_t port, uint16_t queue, void *data);
	/** Remove it again (RTE_INTR_EVENT_DEL); may be called from any thread. */
	int (*intr_unregister)(void *arg, uint16_t port, uint16_t queue, void *data);
	/**
	 * Add an eventfd (the context's stop signal) to the calling thread's
	 * epoll instance; @p ev is filled by the caller and stays valid until
	 * fd_unregister. NULL: napi_stop() only sets the flag.
	 */
	int (*fd_register)(void *arg, int fd, struct rte_epoll_event *ev);
	/** Remove it (may be called from any thread). */
	int (*fd_unregister)(void *arg, int fd, struct rte_epoll_event *ev);
	/**
	 * Wait on the calling thread's epoll instance (rte_epoll_wait_interruptible):
	 * events found, 0 at @p timeout_ms (-1: none), -1 with errno (EINTR) on error.
	 */
	int (*epoll_wait)(void *arg, struct rte_epoll_event *events, int max, int timeout_ms);
	/** Monotonic clock in cycles (rte_rdtsc). */
	uint64_t (*now)(void *arg);
	/** rte_pktmbuf_free_bulk: held frames dropped (NULL: that). */
	void (*free_pkts)(void *arg, struct rte_mbuf **pkts, unsigned int n);
};

/** The ethdev/EAL operations; the default when napi_ctx_conf::ops is NULL. */
extern const struct napi_ops napi_ops_ethdev;

/** Per-context settings; fill with napi_ctx_conf_init() first. */
struct napi_ctx_conf {
	unsigned int lcore_id;  /**< Lcore the context runs on (telemetry key); must be unique. */
	/**
	 * Hybrid: the cap of every entry's learned deferral window, in
	 * microseconds: an idle queue is polled at most this long before it is
	 * armed, and napi_work() holds arming off for this long; a paced entry
	 * (traffic that keeps its own pace) at most defer_us less
	 * NAPI_WAKE_COST_US. Larger: fewer sleeps and wakeups, lower latency,
	 * more CPU; 0: arm at the first empty round (interrupt mode's
	 * behaviour). Default NAPI_DEFER_US_DEFAULT; at most NAPI_DEFER_US_MAX.
	 */
	uint32_t defer_us;
	bool disable_on_race;   /**< Disarm when the re-check finds work (default true). */
	uint32_t sleep_timeout_ms; /**< Housekeeping: napi_poll_once returns after this long asleep (0: none). */
	uint32_t tx_retries;    /**< napi_tx: retries with reclaim before giving up. */
	/**
	 * napi_tx from a handler: how long refused frames are held, and their
	 * rx queue left unpolled, before they are dropped (see napi_tx);
	 * 0: no hold, refused frames go back to the caller. Default
	 * NAPI_TX_HOLD_MS_DEFAULT; at most NAPI_TX_HOLD_MS_MAX.
	 */
	uint32_t tx_hold_ms;
	uint64_t tsc_hz;        /**< Cycles per second of ops->now (0: rte_get_tsc_hz()). */
	const struct napi_ops *ops; /**< NULL: napi_ops_ethdev. */
	void *ops_arg;          /**< First argument of every op. */
};

/** One (port, queue) entry. */
struct napi_queue_conf {
	uint16_t port;
	uint16_t queue;
	enum napi_mode mode;
	uint16_t budget;        /**< Packets per round, 1..NAPI_BUDGET_MAX (0: NAPI_BUDGET_DEFAULT). */
	napi_handler_t handler; /**< Required. */
	void *handler_arg;
	bool has_tx;            /**< A paired tx queue: reclaimed while rx is polled. */
	uint16_t tx_port;
	uint16_t tx_queue;
};

/**
 * Counters of one entry (all monotonic; cycles in ops->now units).
 * Packets per wakeup = wakeup_packets / wakeups.
 */
struct napi_queue_stats {
	uint16_t port;
	uint16_t queue;
	enum napi_mode mode;
	bool armed;               /**< Armed at the time of reading. */
	bool scheduled;           /**< Polled in the next round. */
	uint64_t polls;           /**< Rounds that polled this entry. */
	uint64_t empty_polls;     /**< ... and found nothing. */
	uint64_t full_polls;      /**< ... and used the whole budget. */
	uint64_t packets;         /**< Packets handed to the handler. */
	uint64_t arms;            /**< Arming attempts (intr_enable calls). */
	uint64_t races;           /**< Arms whose re-check found work. */
	uint64_t race_disarms;    /**< ... and disarmed for it (the rule on). */
	uint64_t arm_errors;      /**< intr_enable/register failures (the entry polls from then on). */
	uint64_t wakeups;         /**< Epoll events for this entry. */
	uint64_t spurious_wakeups;/**< Wakeups whose first poll found nothing. */
	uint64_t timeout_polls;   /**< Disarmed and polled at a housekeeping timeout (see napi_poll_once). */
	uint64_t wakeup_packets;  /**< Packets from a wakeup to the next arm. */
	uint64_t arms_held;       /**< Arms that held (the entry went waiting): notifications asked of the back end. */
	uint64_t window_ns;       /**< Hybrid: the entry's deferral window W at the time of reading. */
	uint64_t window_grows;    /**< Hybrid: W raised to the cap (full first round, short sleep, race, probe hit). */
	uint64_t window_shrinks;  /**< Hybrid: W lowered (a wakeup long after the cap). */
	uint64_t windows_caught;  /**< Hybrid: idle periods polled past an empty round that a packet ended. */
	uint64_t windows_expired; /**< Hybrid: idle periods polled for W > 0 (or a probe) that ended armed. */
	uint64_t probes;          /**< Hybrid: idle periods at W = 0 polled up to the cap, looking for a stream. */
	uint64_t probe_hits;      /**< ... that a packet ended (W raised to the cap). */
	uint64_t work_holds;      /**< Hybrid: empty rounds past W in which napi_work() held arming off. */
	uint64_t paced;           /**< Hybrid: 1 while the traffic is paced (W capped at napi_lcore_stats::paced_ns), 0 while responsive. */
	uint64_t pace_tests;      /**< Hybrid: pace tests decided (a half polled at the cap against a half at the paced cap). */
	uint64_t pace_slowed;     /**< ... in which the rate was lower at the paced cap (the traffic follows the wakeups). */
	uint64_t pace_voids;      /**< Hybrid: pace tests void (a half with too few packets, or the traffic stopped). */
	uint64_t pace_switches;   /**< Hybrid: changes between paced and responsive. */
	uint64_t armed_cycles;    /**< Time spent armed. */
	uint64_t busy_cycles;     /**< Time in polls that found packets (handler included). */
	uint64_t tx_reclaimed;    /**< Paired tx queue: descriptors freed (rx polls and napi_tx). */
	uint64_t tx_sent;         /**< napi_tx on the paired tx queue: packets sent. */
	uint64_t tx_retries;      /**< ... retries after a short tx burst (back-pressure). */
	uint64_t tx_unsent;       /**< ... packets returned unsent to the caller. */
	uint64_t tx_held;         /**< ... packets a full queue refused, held (see napi_tx). */
	uint64_t tx_hold_drops;   /**< ... held packets dropped (tx_hold_ms passed, or the end). */
	uint64_t tx_blocked_rounds; /**< Rounds this entry's rx was not polled: its packets were held. */
	/**
	 * Timing of the wakeups (NAPI_HIST_BUCKETS log2 buckets of microseconds).
	 * arm_wake: from arming to the wakeup (time asleep on this entry).
	 * wake_poll: from the return of the sleep to the first poll of the woken
	 * entry (other entries' polls and the wakeup handling in between).
	 * wake_arm: from the wakeup to the next arming that holds (the time the
	 * entry stays disarmed per wakeup: its packets and its idle polls).
	 * poll_gap: between the end of one poll of the entry and the start of the
	 * next while it stays scheduled (a large gap: the thread lost the CPU, or
	 * other entries' work, while this queue was disarmed).
	 * spin (hybrid): from the entry's last packet to the packet that ended an
	 * idle period before arming (windows_caught): what polling an idle queue
	 * waited for the packets it caught.
	 */
	uint64_t arm_wake_hist[NAPI_HIST_BUCKETS];
	uint64_t wake_poll_hist[NAPI_HIST_BUCKETS];
	uint64_t wake_arm_hist[NAPI_HIST_BUCKETS];
	uint64_t poll_gap_hist[NAPI_HIST_BUCKETS];
	uint64_t spin_hist[NAPI_HIST_BUCKETS];
};

/** Counters of one context (lcore). */
struct napi_lcore_stats {
	unsigned int lcore_id;
	uint32_t nb_queues;
	uint64_t tsc_hz;
	uint64_t rounds;          /**< napi_poll_once calls. */
	uint64_t polls;           /**< Sum over the entries. */
	uint64_t empty_polls;
	uint64_t packets;
	uint64_t arms;
	uint64_t races;
	uint64_t sleeps;          /**< rte_epoll_wait calls. */
	uint64_t sleep_timeouts;  /**< ... that returned at the housekeeping timeout. */
	uint64_t sleep_interrupts;/**< ... that returned early (signal, stop). */
	uint64_t wakeups;         /**< Queue events (sum over the entries). */
	uint64_t spurious_wakeups;
	uint64_t wakeup_packets;
	uint64_t sleep_cycles;    /**< Time inside rte_epoll_wait. */
	uint64_t busy_cycles;     /**< Time in rounds that found packets. */
	uint64_t idle_cycles;     /**< Time in rounds that found nothing (polling cost). */
	uint64_t tx_reclaimed;    /**< Descriptors freed by tx_done_cleanup (rx polls and napi_tx). */
	uint64_t tx_sent;         /**< All napi_tx calls of the context. */
	uint64_t tx_retries;
	uint64_t tx_unsent;
	uint64_t tx_held;
	uint64_t tx_hold_drops;
	uint64_t tx_blocked_rounds;
	uint64_t defer_ns;        /**< napi_ctx_conf::defer_us: the cap of the hybrid windows. */
	uint64_t wake_cost_ns;    /**< NAPI_WAKE_COST_US. */
	uint64_t paced_ns;        /**< The cap of a paced entry's W: defer_ns less wake_cost_ns, or 0. */
	uint64_t work_calls;      /**< napi_work() calls. */
	/** Sums of the entries' counters of the same names. */
	uint64_t arms_held;
	uint64_t window_grows;
	uint64_t window_shrinks;
	uint64_t windows_caught;
	uint64_t windows_expired;
	uint64_t probes;
	uint64_t probe_hits;
	uint64_t work_holds;
	uint64_t paced;           /**< Entries paced at the time of reading. */
	uint64_t pace_tests;
	uint64_t pace_slowed;
	uint64_t pace_voids;
	uint64_t pace_switches;
	/** Sums of the entries' histograms (see napi_queue_stats). */
	uint64_t arm_wake_hist[NAPI_HIST_BUCKETS];
	uint64_t wake_poll_hist[NAPI_HIST_BUCKETS];
	uint64_t wake_arm_hist[NAPI_HIST_BUCKETS];
	uint64_t poll_gap_hist[NAPI_HIST_BUCKETS];
	uint64_t spin_hist[NAPI_HIST_BUCKETS];
};

/**
 * Histogram bucket of a duration (see NAPI_HIST_BUCKETS).
 *
 * @param us
 *   Duration in microseconds.
 * @return
 *   0 .. NAPI_HIST_BUCKETS - 1.
 */
unsigned int napi_hist_bucket(uint64_t us);

/**
 * Lower bound of a histogram bucket.
 *
 * @param bucket
 *   0 .. NAPI_HIST_BUCKETS - 1.
 * @return
 *   Microseconds: 0 for bucket 0, 2^(bucket-1) otherwise.
 */
uint64_t napi_hist_lower_us(unsigned int bucket);

/**
 * Fill @p conf with the defaults: hybrid windows capped at
 * NAPI_DEFER_US_DEFAULT, disarm on race, no sleep timeout,
 * NAPI_TX_RETRIES_DEFAULT, ethdev ops, lcore_id of the calling thread.
 *
 * @param conf
 *   Settings to initialise.
 */
void napi_ctx_conf_init(struct napi_ctx_conf *conf);

/**
 * Create a context. Memory comes from malloc (no EAL needed with custom ops).
 *
 * @param conf
 *   Settings; copied.
 * @return
 *   The context, or NULL with rte_errno set: EINVAL (bad setting: defer_us
 *   over NAPI_DEFER_US_MAX, sleep_timeout_ms over INT32_MAX, lcore_id out of
 *   range; or tsc_hz unknown), EEXIST (a context with this lcore_id exists), ENOMEM.
 */
struct napi_ctx *napi_ctx_create(const struct napi_ctx_conf *conf);

/**
 * Free a context: unregister and disarm its queues, drop the frames
 * napi_tx still holds (ops free_pkts), free it. The mbufs already handed
 * to handlers are theirs.
 *
 * @param ctx
 *   Context, or NULL.
 * @note Not while napi_run() runs on it: stop it and let it return first.
 */
void napi_ctx_free(struct napi_ctx *ctx);

/**
 * Add an entry. The port must be started before the first round; with a
 * mode other than NAPI_MODE_POLL it must have been configured with
 * intr_conf.rxq = 1.
 *
 * @param ctx
 *   Context.
 * @param qconf
 *   Entry settings; copied.
 * @return
 *   Entry index (>= 0), or -EINVAL (NULL argument, no handler, unknown
 *   mode, budget over NAPI_BUDGET_MAX), -EEXIST (the pair is already in
 *   this context), -ENOSPC (NAPI_MAX_QUEUES reached).
 * @note From the context's thread, or before its first round. Interrupt
 *   registration failures are not errors here: the entry falls back to
 *   polling and counts napi_queue_stats::arm_errors.
 */
int napi_queue_add(struct napi_ctx *ctx, const struct napi_queue_conf *qconf);

/**
 * One round: poll every scheduled entry up to its budget, arm those whose
 * mode says so (disarming again on a race, see the file comment); if no
 * entry is left scheduled, sleep until an armed entry's interrupt, the
 * housekeeping timeout, napi_stop() or a signal, then disarm and schedule
 * the woken entries (they are polled in the next round). At the
 * housekeeping timeout, armed entries whose port has no rx_queue_count
 * (no re-check at arming: a wakeup may have been lost), or whose count
 * shows work, are disarmed and scheduled as well (timeout_polls).
 *
 * The first call registers the entries' interrupts with the calling
 * thread's epoll instance: call it always from the same thread.
 *
 * @param ctx
 *   Context.
 * @return
 *   Packets received in this round (>= 0); -EINTR if the sleep was
 *   interrupted (signal or napi_stop()); -EINVAL without entries.
 */
int napi_poll_once(struct napi_ctx *ctx);

/**
 * Run rounds until napi_stop(); then send what napi_tx holds (retrying as
 * napi_tx does) and drop what the queues still refuse (tx_hold_drops).
 *
 * @param ctx
 *   Context.
 * @return
 *   0 when stopped, -EINVAL without entries.
 */
int napi_run(struct napi_ctx *ctx);

/**
 * Ask napi_run() to return, waking the context if it sleeps.
 *
 * @param ctx
 *   Context.
 * @note Any thread; async-signal-safe (an atomic store and an eventfd write).
 */
void napi_stop(struct napi_ctx *ctx);

/**
 * Whether napi_stop() was called on this context.
 *
 * @param ctx
 *   Context.
 * @return
 *   true once stopped.
 */
bool napi_stopped(const struct napi_ctx *ctx);

/**
 * Transmit with back-pressure: tx_burst; when the queue took fewer than
 * offered, reclaim completed descriptors (tx_done_cleanup, -ENOTSUP
 * tolerated) and retry, at most napi_ctx_conf::tx_retries times.
 *
 * Called from an entry's handler, on a tx queue paired with an entry of the
 * context (napi_queue_conf::has_tx), the frames the queue still refused are
 * held by the paired entry (up to NAPI_TX_HOLD_MAX) and counted as taken:
 * the entry whose handler called is not polled again until they are sent,
 * so its rx ring fills and the sender behind it is refused instead of the
 * frames being lost. It is not armed while they are held either. Each round
 * tries to send them first; after napi_ctx_conf::tx_hold_ms they are freed
 * and counted (tx_hold_drops), as they are when napi_run returns or the
 * context is freed. Frames for a queue that holds frames go behind them.
 *
 * Anywhere else (no handler running, an unpaired queue, tx_hold_ms 0, the
 * hold full), the refused frames pkts[ret..nb_pkts-1] stay the caller's:
 * count them as unsent, or keep them. Sent, retries, held and unsent
 * packets are counted per context and on the paired entry.
 *
 * @param ctx
 *   Context (of the calling thread).
 * @param port
 *   Tx port.
 * @param queue
 *   Tx queue.
 * @param pkts
 *   Packets.
 * @param nb_pkts
 *   How many.
 * @return
 *   Packets taken, sent or held (0..nb_pkts); the rest are left to the
 *   caller.
 */
uint16_t napi_tx(struct napi_ctx *ctx, uint16_t port, uint16_t queue,
		 struct rte_mbuf **pkts, uint16_t nb_pkts);

/**
 * Tell the context that the application's own loop found work outside the
 * context's rx queues: packets it sent or reclaimed, a port or device it
 * polls itself, a ring from another lcore. Until napi_ctx_conf::defer_us has
 * passed since the last call, no hybrid entry of the context is armed: the
 * context keeps polling them while the application is busy, as Linux's IRQ
 * suspension keeps device interrupts off while epoll busy polling finds
 * events. Their own windows apply as well (an entry arms only once both have
 * passed). No effect on poll and interrupt entries, nor with defer_us 0.
 *
 * @param ctx
 *   Context (of the calling thread).
 * @note Call it once per loop iteration that found work (one clock read);
 *   the context sleeps only when every entry is armed, so work that no rx
 *   queue announces needs its own wakeup: napi_ctx_conf::sleep_timeout_ms,
 *   or use it for work that rx traffic brings.
 */
void napi_work(struct napi_ctx *ctx);

/**
 * Read the counters.
 *
 * @param ctx
 *   Context.
 * @param lcore
 *   Context totals (may be NULL).
 * @param queues
 *   Per-entry counters, in napi_queue_add() order (may be NULL).
 * @param nb_queues
 *   Room in @p queues.
 * @return
 *   Number of entries of the context (may exceed @p nb_queues), or -EINVAL.
 * @note Any thread: each counter is read atomically, the set is not a
 *   snapshot (totals may lag the entries by one round).
 */
int napi_stats_get(const struct napi_ctx *ctx, struct napi_lcore_stats *lcore,
		   struct napi_queue_stats *queues, unsigned int nb_queues);

/**
 * Look up the context of an lcore (the telemetry commands use it).
 *
 * @param lcore_id
 *   napi_ctx_conf::lcore_id.
 * @return
 *   The context, or NULL.
 */
struct napi_ctx *napi_ctx_lookup(unsigned int lcore_id);

/**
 * Name of a mode ("poll", "interrupt", "hybrid").
 *
 * @param mode
 *   Mode.
 * @return
 *   Static string; "unknown" for an invalid value.
 */
const char *napi_mode_name(enum napi_mode mode);

/**
 * Parse a mode name.
 *
 * @param name
 *   "poll", "interrupt" or "hybrid".
 * @param mode
 *   Result.
 * @return
 *   0, or -EINVAL.
 */
int napi_mode_parse(const char *name, enum napi_mode *mode);

#ifdef __cplusplus
}
#endif

#endif /* _NAPI_H_ */
