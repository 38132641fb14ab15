//! Kernel state: NAPI, `net_rx_action`, `handle_softirqs` and ksoftirqd (reference §6).
//!
//! This module holds the state and its small invariants; the transitions that touch the NIC
//! and the CPU live in `host`. The model follows v6.13 `net/core/dev.c` and
//! `kernel/softirq.c`:
//!
//! - `napi_schedule` sets SCHED, puts the NAPI on the per-CPU poll list and raises
//!   `NET_RX_SOFTIRQ` unless `net_rx_action` is running (it re-checks the list itself).
//! - `net_rx_action` takes the poll list, polls each NAPI with its weight, moves a NAPI that
//!   used its whole weight to the repoll list, and stops when the list is empty, when the
//!   `netdev_budget` is spent or when `jiffies` reaches its time limit; unfinished NAPIs go
//!   back on the poll list and the softirq is raised again.
//! - `handle_softirqs` reruns pending softirqs while fewer than `MAX_SOFTIRQ_RESTART` passes
//!   were made and `MAX_SOFTIRQ_TIME` has not elapsed, then wakes ksoftirqd, a thread that
//!   runs the same loop at thread priority.
//! - A hard IRQ's exit runs pending softirqs inline unless the CPU is already inside softirq
//!   processing (inline, or in ksoftirqd); post-v6.5 behaviour, no "let ksoftirqd do its job".

use crate::cpu::{Category, Level};
use crate::time::SimTime;

/// Where `handle_softirqs` is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftirqCtx {
    /// On hard IRQ exit (or a free notification, for `ideal`), at softirq priority.
    Inline,
    /// In the ksoftirqd thread, at thread priority.
    Ksoftirqd,
}

impl SoftirqCtx {
    pub fn level(self) -> Level {
        match self {
            SoftirqCtx::Inline => Level::SoftIrq,
            SoftirqCtx::Ksoftirqd => Level::Thread,
        }
    }

    pub fn category(self) -> Category {
        match self {
            SoftirqCtx::Inline => Category::Softirq,
            SoftirqCtx::Ksoftirqd => Category::Ksoftirqd,
        }
    }
}

/// The ksoftirqd thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ksoftirqd {
    Sleeping,
    /// Woken; the context switch to it is under way.
    Switching,
    Running,
}

/// The NAPI instance of the queue vector.
#[derive(Debug, Default)]
pub struct Napi {
    /// NAPI_STATE_SCHED: owned by the poll machinery.
    pub sched: bool,
    /// On the per-CPU poll list.
    pub on_poll_list: bool,
    /// On `net_rx_action`'s local list.
    pub on_local_list: bool,
    /// On `net_rx_action`'s repoll list.
    pub on_repoll: bool,
    /// Packets processed by the current poll call.
    pub work: u64,
}

/// Per-CPU softirq and NAPI state.
#[derive(Debug)]
pub struct Kernel {
    pub napi: Napi,
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
    /// Its time limit, in jiffies.
    pub time_limit: u64,
    pub ksoftirqd: Ksoftirqd,
    /// `napi->defer_hard_irqs_count`.
    pub defer_count: u64,
    /// When the NAPI hrtimer fires, if armed.
    pub watchdog_at: Option<SimTime>,
    /// The hrtimer fired while another hard IRQ ran.
    pub watchdog_pending: bool,
    /// Length of a jiffy, ps.
    jiffy_ps: u64,
}

impl Kernel {
    pub fn new(jiffy_ps: u64) -> Kernel {
        Kernel {
            napi: Napi::default(),
            softirq_pending: false,
            ctx: None,
            restart_end: 0,
            restarts_left: 0,
            in_net_rx_action: false,
            budget: 0,
            time_limit: 0,
            ksoftirqd: Ksoftirqd::Sleeping,
            defer_count: 0,
            watchdog_at: None,
            watchdog_pending: false,
            jiffy_ps,
        }
    }

    /// `jiffies` at `t` (the tick counter starts at zero with the run).
    #[inline]
    pub fn jiffies(&self, t: SimTime) -> u64 {
        t.ps() / self.jiffy_ps
    }

    /// `napi_schedule`: a no-op if the NAPI is already scheduled.
    #[inline]
    pub fn napi_schedule(&mut self) {
        if self.napi.sched {
            return;
        }
        self.napi.sched = true;
        self.napi.on_poll_list = true;
        if !self.in_net_rx_action {
            self.softirq_pending = true;
        }
    }
}
