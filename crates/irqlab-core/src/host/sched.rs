//! The thread level of each core (its state and rules are in `crate::sched`): ksoftirqd and the
//! apps' threads, woken (`wake_up_process`), switched in by the run queue (`schedule`), and
//! giving way once their slice is used (`cond_resched`).

use super::{Feed, Host, Layout, Work};
use crate::cpu::{Category, Level};
use crate::rng::StreamId;
use crate::sched::{Thread, ThreadState};
use crate::time::SimDuration;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    fn state_mut(&mut self, c: usize, t: Thread) -> &mut ThreadState {
        match t {
            Thread::Ksoftirqd => &mut self.l.core_mut(c).ksoftirqd,
            Thread::App(a) => &mut self.apps[a as usize].state,
            Thread::NapiThread(v) => &mut self.l.vector_mut(v as usize).napi_thread,
            Thread::Sender => &mut self.sender.as_mut().expect("a sending thread").state,
            Thread::XskPoller(a) => &mut self.apps[a as usize].xsk.as_mut().expect("XSK").poller,
        }
    }

    /// Whether waking a thread of core `target` from core `c` sends `target` a reschedule
    /// IPI the waker pays (`ipi_wakeup_ns`): `target` is another core, idle for longer than
    /// `wakeup_after_us` (a core idle for less still polls in its idle loop and needs none).
    /// Asked before the wake-up, which ends the idle period.
    pub(super) fn ipi_due(&self, c: usize, target: usize) -> bool {
        let p = &self.s.platform;
        !p.ipi_wakeup.is_zero()
            && target != c
            && self
                .l
                .core(target)
                .cpu
                .idle_longer_than(self.now, p.wakeup_after)
    }

    /// What a wake-up costs the waker on core `c`: `task_wakeup_ns`, and `ipi_wakeup_ns` more
    /// with an IPI ([`Host::ipi_due`]).
    pub(super) fn wakeup_cost(&mut self, c: usize, ipi: bool) -> SimDuration {
        let d = self.draw_or_zero(c, self.s.platform.task_wakeup, StreamId::WakeupCost);
        if ipi {
            d + self.s.platform.ipi_wakeup
        } else {
            d
        }
    }

    /// Whether thread `t` is `SCHED_FIFO`: a NAPI thread with that policy
    /// (`kernel.napi_thread_policy`, `napi.N.thread_policy`).
    #[inline]
    fn is_fifo(&self, t: Thread) -> bool {
        matches!(t, Thread::NapiThread(v) if self.s.kernel.napi[v as usize].thread_fifo)
    }

    /// Wakes thread `t` of core `c`: it runs at once if the thread level is free, else it
    /// waits its turn in the run queue.
    pub(super) fn wake_thread(&mut self, c: usize, t: Thread) {
        debug_assert_eq!(*self.state_mut(c, t), ThreadState::Sleeping);
        if let Thread::App(a) = t {
            self.apps[a as usize].woken_at = Some(self.now);
        }
        if self.l.core_mut(c).threads.current.is_none() {
            self.switch_to(c, t);
        } else {
            *self.state_mut(c, t) = ThreadState::Runnable;
            let fifo = self.is_fifo(t);
            self.l.core_mut(c).threads.enqueue(t, fifo);
            self.busy_on_wakeup(c);
            self.napi_thread_on_wakeup(c);
        }
    }

    /// A context switch into `t`, which becomes the core's current thread.
    fn switch_to(&mut self, c: usize, t: Thread) {
        *self.state_mut(c, t) = ThreadState::Current;
        let fifo = self.is_fifo(t);
        let rq = &mut self.l.core_mut(c).threads;
        rq.current = Some(t);
        rq.current_fifo = fifo;
        rq.switching = true;
        if self.measuring() {
            self.metrics.cores[c].context_switches += 1;
        }
        let d = self.draw_or_zero(c, self.s.platform.ctx_switch, StreamId::CtxSwitchCost);
        let cat = match t {
            Thread::Ksoftirqd => Category::Ksoftirqd,
            Thread::App(a) => {
                self.apps[a as usize].switch_cost = d;
                Category::App
            }
            Thread::NapiThread(_) => Category::NapiThread,
            Thread::Sender => Category::Sender,
            Thread::XskPoller(_) => Category::BusyPoll,
        };
        self.start(c, Level::Thread, d, cat, Work::ThreadSwitch);
    }

    /// The next runnable thread gets the core, if any.
    fn schedule_next(&mut self, c: usize) {
        if let Some(t) = self.l.core_mut(c).threads.pick_next() {
            self.switch_to(c, t);
        }
    }

    /// The current thread sleeps (its socket is empty, or no softirq is pending).
    pub(super) fn block_thread(&mut self, c: usize) {
        let t = self
            .l
            .core_mut(c)
            .threads
            .current
            .expect("a current thread");
        *self.state_mut(c, t) = ThreadState::Sleeping;
        self.schedule_next(c);
    }

    /// `cond_resched` of core `c`'s current thread at a point where it may give way: it yields
    /// (true) if it should ([`crate::sched::RunQueue::should_yield`]), else goes on (false).
    pub(super) fn cond_resched(&mut self, c: usize) -> bool {
        let thread_ps = self.thread_ps(c);
        let slice = self.s.kernel.sched_slice.ps();
        if self.l.core(c).threads.should_yield(thread_ps, slice) {
            self.yield_thread(c);
            return true;
        }
        false
    }

    /// The current thread has used its slice and another waits: it goes to the tail.
    pub(super) fn yield_thread(&mut self, c: usize) {
        let t = self
            .l
            .core_mut(c)
            .threads
            .current
            .expect("a current thread");
        *self.state_mut(c, t) = ThreadState::Runnable;
        let fifo = self.is_fifo(t);
        self.l.core_mut(c).threads.enqueue(t, fifo);
        self.schedule_next(c);
    }

    pub(super) fn thread_switched_in(&mut self, c: usize) {
        let start = self.thread_ps(c);
        let rq = &mut self.l.core_mut(c).threads;
        rq.switching = false;
        rq.slice_start_ps = start;
        match rq.current.expect("a current thread") {
            Thread::Ksoftirqd => self.ksoftirqd_loop(c),
            Thread::App(a) => {
                self.app_woken(a as usize);
                self.app_next(c, a as usize)
            }
            Thread::NapiThread(v) => self.napi_thread_loop(c, v as usize),
            Thread::Sender => self.sender_next(c),
            Thread::XskPoller(a) => self.xsk_poller_loop(c, a as usize),
        }
    }

    /// App `a`'s switch in completed: if a wake-up brought it here (not a return from the run
    /// queue after its slice), its wake-up delay is the time from the wake-up to the start of
    /// the switch, the switch's own cost left out (as `sched_switch` fires before it).
    fn app_woken(&mut self, a: usize) {
        let app = &mut self.apps[a];
        if let Some(woken) = app.woken_at.take() {
            let took = self.now - woken;
            debug_assert!(
                took >= app.switch_cost,
                "app {a}: switched in {took:?} after its wake-up, its switch costs {:?}",
                app.switch_cost
            );
            let delay = took.ps().saturating_sub(app.switch_cost.ps());
            self.metrics.on_app_switched_in(self.now, a, delay);
        }
    }
}
