//! The kernel's receive machinery on a core (its state is in `crate::kernel`, with the rules it
//! follows): `__napi_schedule`; `handle_softirqs` and its restarts, the hand-off to ksoftirqd
//! and its thread loop (`kernel/softirq.c`); `net_rx_action` over the core's poll list,
//! `napi_poll`, `napi_complete_done` and the NAPI hrtimer, `napi_watchdog` (software IRQ
//! coalescing; `net/core/dev.c`).

use super::{Feed, Host, Layout, Timer, Work};
use crate::cpu::{Category, Level};
use crate::dist::Cost;
use crate::kernel::SoftirqCtx;
use crate::rng::StreamId;
use crate::sched::Thread;
use crate::sched::ThreadState;
use crate::time::SimDuration;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    #[inline]
    fn ctx(&self, c: usize) -> SoftirqCtx {
        self.l.core(c).kernel.ctx.expect("inside handle_softirqs")
    }

    /// Starts a job in core `c`'s softirq context (inline, or in ksoftirqd).
    #[inline(always)]
    pub(super) fn start_softirq_job(&mut self, c: usize, d: SimDuration, work: Work) {
        let ctx = self.ctx(c);
        self.start(c, ctx.level(), d, ctx.category(), work);
    }

    /// Spends `cost` on core `c` at its softirq level (in its softirq context), then goes on
    /// with `then`; a zero cost takes no time and draws nothing: `then` runs at once.
    #[inline(always)]
    pub(super) fn softirq_cost(&mut self, c: usize, cost: Cost, stream: StreamId, then: Work) {
        if cost.is_zero() {
            self.work_done(c, then);
        } else {
            let d = self.draw(c, cost, stream);
            self.start_softirq_job(c, d, then);
        }
    }

    /// `napi_schedule` of vector `v` on its core.
    #[inline]
    pub(super) fn napi_schedule(&mut self, v: usize) {
        if self.threaded && self.napi_threaded(v) {
            self.napi_thread_schedule(v);
            return;
        }
        let c = self.l.vector(v).core;
        let (core, vec) = self.l.both(c, v);
        if vec.napi.in_busy_poll {
            vec.napi.missed = true;
        }
        core.kernel.napi_schedule(&mut vec.napi, v as u16);
    }

    /// `local_bh_enable` at the end of a thread's poll (a busy poller's, a NAPI thread's):
    /// softirqs raised meanwhile run now, then `then` continues the thread, charged to
    /// `category`.
    pub(super) fn local_bh_enable(&mut self, c: usize, category: Category, then: Work) {
        let k = &mut self.l.core_mut(c).kernel;
        k.ctx = None;
        if k.softirq_pending {
            self.handle_softirqs(c, SoftirqCtx::Inline);
            // the thread goes on once the softirq level is free
            self.start(c, Level::Thread, SimDuration::ZERO, category, then);
        } else {
            self.work_done(c, then);
        }
    }

    pub(super) fn handle_softirqs(&mut self, c: usize, ctx: SoftirqCtx) {
        let now = self.now;
        let k = &mut self.l.core_mut(c).kernel;
        debug_assert!(k.ctx.is_none());
        k.ctx = Some(ctx);
        k.restart_end = k.jiffies(now) + self.s.kernel.max_softirq_jiffies;
        k.restarts_left = self.s.kernel.max_softirq_restart;
        self.softirq_pass(c);
    }

    fn softirq_pass(&mut self, c: usize) {
        let now = self.now;
        let k = &mut self.l.core_mut(c).kernel;
        k.softirq_pending = false;
        k.budget = k.netdev_budget;
        k.time_limit = k.jiffies(now) + self.s.kernel.budget_jiffies;
        if self.measuring() {
            self.metrics.cores[c].softirq_runs += 1;
        }
        let cost = self.s.platform.softirq;
        self.softirq_cost(c, cost, StreamId::SoftirqCost, Work::NetRxEntry);
    }

    /// `net_rx_action`'s `start:` label: take the poll list.
    pub(super) fn net_rx_start(&mut self, c: usize) {
        let k = &mut self.l.core_mut(c).kernel;
        k.in_net_rx_action = true;
        k.take_poll_list();
        self.net_rx_loop(c);
    }

    /// `net_rx_action`'s loop head: the core's deferred skbs freed first (`skb_defer`).
    #[inline]
    fn net_rx_loop(&mut self, c: usize) {
        if self.skb_defer && self.skb_defer_free_flush(c, Work::NetRxFlushed) {
            return;
        }
        self.net_rx_next(c);
    }

    /// `net_rx_action`'s loop, after the loop head's flush: the next NAPI, or the end.
    #[inline]
    pub(super) fn net_rx_next(&mut self, c: usize) {
        let k = &mut self.l.core_mut(c).kernel;
        if let Some(v) = k.local.pop_front() {
            self.napi_poll(c, v as usize);
            return;
        }
        if k.repoll.is_empty() {
            k.in_net_rx_action = false;
            if k.poll_list.is_empty() {
                self.softirq_pass_done(c);
            } else {
                self.net_rx_start(c);
            }
            return;
        }
        if self.s.kernel.poll_budget_left {
            // 2.6.18: the device went to the tail of the poll list; the pass goes on
            let k = &mut self.l.core_mut(c).kernel;
            let scheduled = std::mem::take(&mut k.poll_list);
            k.local.extend(scheduled.iter().copied());
            k.poll_list = scheduled;
            k.poll_list.clear();
            let repoll = std::mem::take(&mut k.repoll);
            k.local.extend(repoll.iter().copied());
            k.repoll = repoll;
            k.repoll.clear();
            let v = k.local.pop_front().expect("a NAPI to poll");
            self.napi_poll(c, v as usize);
            return;
        }
        self.net_rx_finish(c);
    }

    /// After the loop broke: unfinished work goes back on the poll list, softirq re-raised.
    fn net_rx_finish(&mut self, c: usize) {
        let k = &mut self.l.core_mut(c).kernel;
        if k.requeue() {
            k.softirq_pending = true;
        } else {
            k.in_net_rx_action = false;
        }
        self.softirq_pass_done(c);
    }

    /// `napi_poll` from `net_rx_action`: the driver's poll function of vector `v` with the
    /// NAPI weight, its ring discipline's pass (if any) starting afresh.
    #[inline(always)]
    pub(super) fn napi_poll(&mut self, c: usize, v: usize) {
        self.l.vector_mut(v).napi.rings = crate::qos::PollState::default();
        self.poll_call(c, v, self.ring_budget);
    }

    /// `__napi_poll`'s call of vector `v`'s poll function on core `c`, each Rx ring allowed
    /// `ring_budget` packets: the one setup of a poll, for the softirq's (`napi_poll`) and a
    /// busy loop's (`busypoll`). The poll function starts once the poll's entry cost is paid.
    #[inline(always)]
    pub(super) fn poll_call(&mut self, c: usize, v: usize, ring_budget: u64) {
        self.l.core_mut(c).kernel.polling = v as u16;
        if self.measuring() {
            self.metrics.vectors[v].polls += 1;
        }
        let napi = &mut self.l.vector_mut(v).napi;
        napi.work = 0;
        napi.ring = 0;
        napi.ring_work = 0;
        napi.clean_complete = true;
        napi.ring_budget = ring_budget;
        let cost = self.s.platform.poll;
        if self.napi_switching && self.napi_switched(c, v) {
            // another NAPI than the last one this core polled: its context is cold
            let d = self.draw_or_zero(c, cost, StreamId::PollCost) + self.s.platform.napi_switch;
            self.start_softirq_job(c, d, Work::PollEntry);
        } else {
            self.softirq_cost(c, cost, StreamId::PollCost, Work::PollEntry);
        }
    }

    /// Core `c` polls NAPI `v`: whether the last NAPI it polled was another one
    /// (`platform.napi_switch_ns`; the first poll on a core switches from none).
    #[cold]
    #[inline(never)]
    fn napi_switched(&mut self, c: usize, v: usize) -> bool {
        let last = std::mem::replace(&mut self.l.core_mut(c).kernel.last_polled, v as u16);
        last != v as u16 && last != u16::MAX
    }

    /// Back in `net_rx_action` after one `napi_poll`, which reported `napi_ret`.
    #[inline]
    pub(super) fn after_napi_poll(&mut self, c: usize) {
        if self.busy_after_poll(c) || self.thread_after_poll(c) {
            return;
        }
        let now = self.now;
        let v = self.l.core_mut(c).kernel.polling as usize;
        let work = self.l.vector_mut(v).napi_ret;
        let k = &mut self.l.core_mut(c).kernel;
        k.budget -= work as i64;
        if k.budget <= 0 || k.jiffies(now) >= k.time_limit {
            if self.measuring() {
                self.metrics.cores[c].time_squeeze += 1;
            }
            self.net_rx_finish(c);
        } else {
            self.net_rx_loop(c);
        }
    }

    /// `napi_complete_done`'s answer to the driver: re-enable the vector (true), or not,
    /// because `napi_defer_hard_irqs` and `gro_flush_timeout` defer it (reference §7.2): a
    /// poll that found packets reloads the counter; each completion while the counter is
    /// above zero decrements it and arms the timer instead.
    pub(super) fn napi_complete_done(&mut self, v: usize) -> bool {
        let k = &self.s.kernel.napi[v];
        if !k.defers() {
            return true;
        }
        let napi = &mut self.l.vector_mut(v).napi;
        if napi.work > 0 {
            napi.defer_count = k.defer_hard_irqs;
        }
        if napi.defer_count == 0 {
            return true;
        }
        napi.defer_count -= 1;
        let t = self.now + k.gro_flush_timeout;
        napi.watchdog_at = Some(t);
        self.push_timer(t, Timer::NapiWatchdog(v as u16));
        false
    }

    /// `net_rx_action` returned to `handle_softirqs`: restart, hand off, or finish.
    fn softirq_pass_done(&mut self, c: usize) {
        let now = self.now;
        let k = &mut self.l.core_mut(c).kernel;
        if k.softirq_pending {
            if k.jiffies(now) < k.restart_end {
                k.restarts_left -= 1;
                if k.restarts_left > 0 {
                    self.softirq_pass(c);
                    return;
                }
            }
            self.wakeup_softirqd(c);
        }
        let ctx = self.l.core_mut(c).kernel.ctx.take();
        if ctx == Some(SoftirqCtx::Ksoftirqd) {
            self.ksoftirqd_loop(c);
        }
    }

    fn wakeup_softirqd(&mut self, c: usize) {
        if self.l.core_mut(c).ksoftirqd != ThreadState::Sleeping {
            return;
        }
        if self.measuring() {
            self.metrics.cores[c].ksoftirqd_wakeups += 1;
        }
        self.wake_thread(c, Thread::Ksoftirqd);
    }

    /// ksoftirqd's thread loop: handle softirqs while any are pending, else sleep; between
    /// two `handle_softirqs` runs it gives way to a waiting thread once its slice is used.
    pub(super) fn ksoftirqd_loop(&mut self, c: usize) {
        debug_assert_eq!(self.l.core_mut(c).ksoftirqd, ThreadState::Current);
        let k = &self.l.core_mut(c).kernel;
        if k.softirq_pending && k.ctx.is_none() {
            let thread_ps = self.thread_ps(c);
            let slice = self.s.kernel.sched_slice.ps();
            let rq = &self.l.core_mut(c).threads;
            // below-apps: an app that waits takes the core after each handle_softirqs run
            // (Linux 2.6.18); ksoftirqd, once switched in, makes at least one
            let below = self.s.kernel.ksoftirqd_below_apps
                && !rq.queue.is_empty()
                && thread_ps > rq.slice_start_ps;
            if below || rq.should_yield(thread_ps, slice) {
                self.yield_thread(c);
            } else {
                self.handle_softirqs(c, SoftirqCtx::Ksoftirqd);
            }
        } else {
            self.block_thread(c);
        }
    }

    /// The NAPI hrtimer fires (`napi_watchdog`): its interrupt schedules the NAPI.
    pub(super) fn on_napi_watchdog(&mut self, v: usize) {
        let napi = &mut self.l.vector_mut(v).napi;
        if napi.watchdog_at != Some(self.now) {
            return; // stale
        }
        napi.watchdog_at = None;
        if self.is_busy(self.l.vector(v).core, Level::HardIrq) {
            self.l.vector_mut(v).napi.watchdog_pending = true;
        } else {
            self.start_timer_handler(v, Work::NapiWatchdog);
        }
    }

    pub(super) fn watchdog_done(&mut self, c: usize) {
        self.hardirq_done(c);
        let v = self.l.core_mut(c).hardirq as usize;
        if self.measuring() {
            self.metrics.vectors[v].timer_ticks += 1;
        }
        // `napi_watchdog`: an idle NAPI is scheduled and the prefer pledge revoked; an owned
        // one loses the expiry
        let napi = &mut self.l.vector_mut(v).napi;
        if napi.sched {
            if self.measuring() {
                self.metrics.busy.watchdog_lost += 1;
            }
        } else {
            napi.prefer = false;
        }
        self.napi_schedule(v);
        self.next_hardirq(c);
        self.irq_exit(c);
    }
}
