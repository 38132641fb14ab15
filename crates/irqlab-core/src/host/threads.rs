//! The thread level of each core: ksoftirqd and the apps' threads, switched by the run queue
//! (`sched`); an app's blocking `recv` loop.

use super::{Feed, Host, Layout, Work};
use crate::cpu::{Category, Level};
use crate::dist::plus_bytes;
use crate::rng::StreamId;
use crate::sched::{Thread, ThreadState};
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    fn state_mut(&mut self, c: usize, t: Thread) -> &mut ThreadState {
        match t {
            Thread::Ksoftirqd => &mut self.l.core_mut(c).ksoftirqd,
            Thread::App(a) => &mut self.apps[a as usize].state,
        }
    }

    /// Wakes thread `t` of core `c`: it runs at once if the thread level is free, else it
    /// waits its turn in the run queue.
    pub(super) fn wake_thread(&mut self, c: usize, t: Thread) {
        debug_assert_eq!(*self.state_mut(c, t), ThreadState::Sleeping);
        if self.l.core_mut(c).threads.current.is_none() {
            self.switch_to(c, t);
        } else {
            *self.state_mut(c, t) = ThreadState::Runnable;
            self.l.core_mut(c).threads.queue.push_back(t);
            if self.apps_extended {
                self.need_resched(c);
            }
        }
    }

    /// A context switch into `t`, which becomes the core's current thread.
    fn switch_to(&mut self, c: usize, t: Thread) {
        *self.state_mut(c, t) = ThreadState::Current;
        let rq = &mut self.l.core_mut(c).threads;
        rq.current = Some(t);
        rq.switching = true;
        if self.measuring() {
            self.metrics.cores[c].context_switches += 1;
        }
        let d = self.draw_or_zero(c, self.s.platform.ctx_switch, StreamId::CtxSwitchCost);
        let cat = match t {
            Thread::Ksoftirqd => Category::Ksoftirqd,
            Thread::App(_) => Category::App,
        };
        self.start(c, Level::Thread, d, cat, Work::ThreadSwitch);
    }

    /// The next runnable thread gets the core, if any.
    fn schedule_next(&mut self, c: usize) {
        match self.l.core_mut(c).threads.queue.pop_front() {
            Some(t) => self.switch_to(c, t),
            None => self.l.core_mut(c).threads.current = None,
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

    /// The current thread has used its slice and another waits: it goes to the tail.
    pub(super) fn yield_thread(&mut self, c: usize) {
        let t = self
            .l
            .core_mut(c)
            .threads
            .current
            .expect("a current thread");
        *self.state_mut(c, t) = ThreadState::Runnable;
        self.l.core_mut(c).threads.queue.push_back(t);
        self.schedule_next(c);
    }

    pub(super) fn thread_switched_in(&mut self, c: usize) {
        let start = self.thread_ps(c);
        let rq = &mut self.l.core_mut(c).threads;
        rq.switching = false;
        rq.slice_start_ps = start;
        match rq.current.expect("a current thread") {
            Thread::Ksoftirqd => self.ksoftirqd_loop(c),
            Thread::App(a) => self.app_next(c, a as usize),
        }
    }

    /// An app's `recv` loop: take the next packet, or sleep on an empty socket. (epoll, busy
    /// polling and responses: `busypoll`.)
    pub(super) fn app_next(&mut self, c: usize, a: usize) {
        if self.apps_extended {
            self.app_wait(c, a);
            return;
        }
        let Some(pkt) = self.apps[a].socket.dequeue() else {
            self.block_thread(c);
            return;
        };
        self.app_take(c, a, pkt);
    }

    /// The app handles `pkt`, read from its socket.
    pub(super) fn app_take(&mut self, c: usize, a: usize, pkt: crate::nic::Packet) {
        self.apps[a].holding = Some(pkt);
        let cfg = &self.s.apps[a];
        let (cost, per_byte) = (cfg.cost, cfg.cost_ps_per_byte);
        let mut d = plus_bytes(
            self.draw(c, cost, StreamId::AppCost),
            pkt.size_bytes,
            per_byte,
        );
        if self.s.rr.is_some() {
            // sending the response
            d = d + self.draw_or_zero(c, self.s.platform.tx, StreamId::TxCost);
        }
        self.start(c, Level::Thread, d, Category::App, Work::AppPacket);
    }

    pub(super) fn app_packet_done(&mut self, c: usize) {
        let Some(crate::sched::Thread::App(a)) = self.l.core_mut(c).threads.current else {
            unreachable!("an app's job finished while it was not current");
        };
        let a = a as usize;
        let pkt = self.apps[a].holding.take().expect("the app holds a packet");
        self.metrics.on_consumed(
            self.now,
            a,
            pkt.class,
            pkt.arrival,
            u32::from(pkt.size_bytes),
        );
        self.tracer.consumed(a, pkt.id, self.now);
        if self.s.rr.is_some() {
            self.send_response(a, pkt);
        }
        let rq = &self.l.core_mut(c).threads;
        if !rq.queue.is_empty() {
            let thread_ps = self.thread_ps(c);
            if self
                .l
                .core_mut(c)
                .threads
                .should_yield(thread_ps, self.s.kernel.sched_slice.ps())
            {
                self.yield_thread(c);
                return;
            }
        }
        self.app_next(c, a);
    }
}
