//! Kernel state of one core: softirq processing, the NAPI poll list, `net_rx_action` and the
//! ksoftirqd thread (reference §6); and the NAPI instance of a queue vector.
//!
//! This module holds the state and its small invariants; the transitions that touch the NIC
//! and the CPU live in `host::kernel`. The model follows v6.13 `net/core/dev.c` and
//! `kernel/softirq.c`:
//!
//! - `napi_schedule` sets SCHED, appends the NAPI to its core's poll list and raises
//!   `NET_RX_SOFTIRQ` unless `net_rx_action` is running there (it re-checks the list itself).
//! - `net_rx_action` takes the poll list into a local list and polls its NAPIs in order, each
//!   with its weight; a NAPI that used its whole weight goes to the tail of a repoll list. It
//!   stops when the local and repoll lists are empty (re-checking the poll list first), when
//!   the local list is empty but the repoll list is not, when the `netdev_budget` shared by the
//!   pass is spent or when `jiffies` reaches the time limit. Then the poll list becomes: what is
//!   left of the local list, then the NAPIs scheduled meanwhile, then the repoll list; if it is
//!   not empty the softirq is raised again.
//! - `handle_softirqs` reruns pending softirqs while fewer than `MAX_SOFTIRQ_RESTART` passes
//!   were made and `MAX_SOFTIRQ_TIME` has not elapsed, then wakes ksoftirqd, a thread that
//!   runs the same loop at thread priority.
//! - A hard IRQ's exit runs pending softirqs inline unless the core is already inside softirq
//!   processing (inline, or in ksoftirqd); post-v6.5 behaviour, no "let ksoftirqd do its job".
//!
//! The kernel's settings (`kernel.*`) are read in [`config`].

pub mod config;

pub use config::KernelConfig;

use std::collections::VecDeque;

use crate::cpu::{Category, Level};
use crate::time::SimTime;

/// Where `handle_softirqs` is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftirqCtx {
    /// On hard IRQ exit (or a free notification, for `ideal`), at softirq priority.
    Inline,
    /// In the ksoftirqd thread, at thread priority.
    Ksoftirqd,
    /// Not `handle_softirqs`: an app's busy loop calling the poll function with bottom halves
    /// disabled (`busypoll`), at thread priority, charged to busy polling.
    BusyPoll,
    /// Not `handle_softirqs`: a NAPI thread calling the poll function with bottom halves
    /// disabled (`napi_threaded_poll_loop`), at thread priority, charged to `cpu.napi_thread`.
    NapiThread,
}

impl SoftirqCtx {
    pub fn level(self) -> Level {
        match self {
            SoftirqCtx::Inline => Level::SoftIrq,
            SoftirqCtx::Ksoftirqd | SoftirqCtx::BusyPoll | SoftirqCtx::NapiThread => Level::Thread,
        }
    }

    pub fn category(self) -> Category {
        match self {
            SoftirqCtx::Inline => Category::Softirq,
            SoftirqCtx::Ksoftirqd => Category::Ksoftirqd,
            SoftirqCtx::BusyPoll => Category::BusyPoll,
            SoftirqCtx::NapiThread => Category::NapiThread,
        }
    }
}

/// The NAPI instance of a queue vector.
#[derive(Debug, Default)]
pub struct Napi {
    /// NAPI_STATE_SCHED: owned by the poll machinery.
    pub sched: bool,
    /// Rx packets processed by the current poll call.
    pub work: u64,
    /// The Rx ring the current poll is cleaning, and its packets so far.
    pub ring: usize,
    pub ring_work: u64,
    /// Every ring (and the Tx ring) was cleaned below its budget so far in this poll.
    pub clean_complete: bool,
    /// Where the poll is in the vector's ring discipline (`qos`), if it has one.
    pub rings: crate::qos::PollState,
    /// `napi->defer_hard_irqs_count`.
    pub defer_count: u64,
    /// When the NAPI hrtimer fires, if armed.
    pub watchdog_at: Option<SimTime>,
    /// The hrtimer fired while another hard IRQ ran.
    pub watchdog_pending: bool,
    /// The Rx budget of each ring in the current poll call (the weight, or a busy poll's
    /// budget, split over the rings).
    pub ring_budget: u64,
    /// NAPI_STATE_IN_BUSY_POLL: the owner is a busy poller (`busypoll`).
    pub in_busy_poll: bool,
    /// NAPI_STATE_MISSED: an IRQ tried to schedule the NAPI while a busy poller owned it.
    pub missed: bool,
    /// NAPI_STATE_PREFER_BUSY_POLL: a preferring busy poller asked the softirq to hand over.
    pub prefer: bool,
}

/// Per-core softirq and NAPI state.
#[derive(Debug)]
pub struct Kernel {
    /// NET_RX_SOFTIRQ pending bit.
    pub softirq_pending: bool,
    /// `handle_softirqs` in progress, and where.
    pub ctx: Option<SoftirqCtx>,
    /// `handle_softirqs`' restart deadline (jiffies) and passes left.
    pub restart_end: u64,
    pub restarts_left: u64,
    /// `sd->in_net_rx_action`.
    pub in_net_rx_action: bool,
    /// Budget left in the current `net_rx_action` run.
    pub budget: i64,
    /// `netdev_budget`: the budget of each run (a receive-load controller may change it).
    pub netdev_budget: i64,
    /// Its time limit, in jiffies.
    pub time_limit: u64,
    /// The per-CPU poll list, and `net_rx_action`'s local and repoll lists (vector indices).
    pub poll_list: VecDeque<u16>,
    pub local: VecDeque<u16>,
    pub repoll: VecDeque<u16>,
    /// The NAPI whose poll function is running.
    pub polling: u16,
    /// The NAPI whose poll function was called last on this core (`u16::MAX`: none yet), for
    /// `platform.napi_switch_ns`.
    pub last_polled: u16,
    /// Length of a jiffy, ps.
    jiffy_ps: u64,
    /// `jiffies` at the last call, and when the next tick comes: time only moves forward, so
    /// the division is needed once per jiffy.
    jiffies_now: u64,
    next_tick_ps: u64,
}

/// A core's list of deferred skb frees (Linux 6.18, `net/core/skbuff.c`
/// `skb_attempt_defer_free`; `net/core/dev.c` `skb_defer_free_flush`): the skbs this core
/// allocated that apps on other cores have read, left for this core to free.
#[derive(Debug, Default)]
pub struct DeferList {
    /// `defer_count`: the attempts since the last flush, including those that found the list
    /// full (the kernel counts them too: `atomic_long_inc_return` comes before the check).
    pub count: u64,
    /// The skbs on the list.
    pub skbs: u64,
}

/// What `skb_attempt_defer_free` did with one skb.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deferred {
    /// The list is full (or `skb_defer_max` is 0): the reader frees it now.
    No,
    /// On the list.
    Yes,
    /// On the list, and the list passed half its capacity: an IPI raises `NET_RX` on the
    /// allocating core (`kick_defer_list_purge`).
    Kick,
}

impl DeferList {
    /// `skb_attempt_defer_free` of one skb from another core, with `net.core.skb_defer_max`
    /// = `max`: count it; the list takes it below `max`; the one that finds `max / 2` before it
    /// kicks.
    pub fn attempt(&mut self, max: u64) -> Deferred {
        self.count += 1;
        if self.count >= max {
            return Deferred::No;
        }
        self.skbs += 1;
        if self.count - 1 == max >> 1 {
            Deferred::Kick
        } else {
            Deferred::Yes
        }
    }

    /// `skb_defer_free_flush`: takes the whole list (its skbs are returned, to be freed) and
    /// resets the count.
    pub fn flush(&mut self) -> u64 {
        self.count = 0;
        std::mem::take(&mut self.skbs)
    }
}

impl Kernel {
    /// A core's kernel with room for `napis` NAPIs on its lists.
    pub fn new(jiffy_ps: u64, napis: usize) -> Kernel {
        Kernel {
            softirq_pending: false,
            ctx: None,
            restart_end: 0,
            restarts_left: 0,
            in_net_rx_action: false,
            budget: 0,
            netdev_budget: 0,
            time_limit: 0,
            poll_list: VecDeque::with_capacity(napis),
            local: VecDeque::with_capacity(napis),
            repoll: VecDeque::with_capacity(napis),
            polling: 0,
            last_polled: u16::MAX,
            jiffy_ps,
            jiffies_now: 0,
            next_tick_ps: jiffy_ps,
        }
    }

    /// `jiffies` at `t` (the tick counter starts at zero with the run); `t` never goes back.
    #[inline]
    pub fn jiffies(&mut self, t: SimTime) -> u64 {
        if t.ps() >= self.next_tick_ps {
            self.jiffies_now = t.ps() / self.jiffy_ps;
            self.next_tick_ps = (self.jiffies_now + 1) * self.jiffy_ps;
        }
        debug_assert_eq!(self.jiffies_now, t.ps() / self.jiffy_ps, "time went back");
        self.jiffies_now
    }

    /// `napi_schedule` of vector `v` (whose NAPI is `napi`): a no-op if already scheduled.
    #[inline]
    pub fn napi_schedule(&mut self, napi: &mut Napi, v: u16) {
        if napi.sched {
            return;
        }
        napi.sched = true;
        self.poll_list.push_back(v);
        if !self.in_net_rx_action {
            self.softirq_pending = true;
        }
    }

    /// `net_rx_action`'s `start:` label: the local list takes the poll list (the local list is
    /// empty whenever the label is reached).
    #[inline]
    pub fn take_poll_list(&mut self) {
        debug_assert!(self.local.is_empty());
        std::mem::swap(&mut self.local, &mut self.poll_list);
    }

    /// After the loop broke: the poll list becomes the rest of the local list, then the NAPIs
    /// scheduled meanwhile, then the repoll list. Returns whether it holds any NAPI.
    #[inline]
    pub fn requeue(&mut self) -> bool {
        if !self.poll_list.is_empty() {
            let scheduled = std::mem::take(&mut self.poll_list);
            self.local.extend(scheduled.iter().copied());
            // keep the allocation for the poll list
            self.poll_list = scheduled;
            self.poll_list.clear();
        }
        self.local.extend(self.repoll.drain(..));
        std::mem::swap(&mut self.local, &mut self.poll_list);
        !self.poll_list.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defer_list_kicks_at_its_half_and_holds_one_less_than_its_max() {
        let mut d = DeferList::default();
        let got: Vec<Deferred> = (0..70).map(|_| d.attempt(64)).collect();
        // the 33rd skb finds 32 before it: the kick; the 64th finds the list full
        assert!(got[..32].iter().all(|&x| x == Deferred::Yes));
        assert_eq!(got[32], Deferred::Kick);
        assert!(got[33..63].iter().all(|&x| x == Deferred::Yes));
        assert!(got[63..].iter().all(|&x| x == Deferred::No));
        assert_eq!((d.count, d.skbs), (70, 63));
        assert_eq!(d.flush(), 63);
        assert_eq!((d.count, d.skbs), (0, 0));
        assert_eq!(d.attempt(64), Deferred::Yes);
    }

    #[test]
    fn skb_defer_max_0_or_1_defers_nothing_and_2_never_kicks() {
        for max in [0, 1] {
            let mut d = DeferList::default();
            assert!((0..5).all(|_| d.attempt(max) == Deferred::No));
            assert_eq!(d.skbs, 0);
        }
        let mut d = DeferList::default();
        let got: Vec<Deferred> = (0..3).map(|_| d.attempt(2)).collect();
        assert_eq!(got, [Deferred::Yes, Deferred::No, Deferred::No]);
    }

    #[test]
    fn requeue_puts_leftovers_first_then_newcomers_then_repolls() {
        let mut k = Kernel::new(1, 8);
        let mut napis: Vec<Napi> = (0..6).map(|_| Napi::default()).collect();
        for v in [0u16, 1, 2] {
            k.napi_schedule(&mut napis[v as usize], v);
        }
        assert!(k.softirq_pending);
        k.softirq_pending = false;
        k.in_net_rx_action = true;
        k.take_poll_list();
        assert_eq!(k.local, [0, 1, 2]);
        assert!(k.poll_list.is_empty());
        // 0 used its weight; 3 was scheduled while the pass ran; then the budget ran out.
        let v = k.local.pop_front().unwrap();
        k.repoll.push_back(v);
        k.napi_schedule(&mut napis[3], 3);
        assert!(
            !k.softirq_pending,
            "net_rx_action re-checks the list itself"
        );
        k.napi_schedule(&mut napis[3], 3);
        assert!(k.requeue());
        assert_eq!(k.poll_list, [1, 2, 3, 0]);
        assert!(k.local.is_empty() && k.repoll.is_empty());
    }
}
