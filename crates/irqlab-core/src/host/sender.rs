//! The sending thread of a veth lab (`[sender]`; its settings: `crate::sender`): a thread on
//! `sender.core` that sends each packet of the traffic at its arrival time, each send taking
//! `sender.cost_ns` of its CPU time (`sendto` → `__dev_queue_xmit` → `veth_xmit`, `veth`).
//! Packets due while it cannot run (softirqs, other threads hold its core) wait in order and
//! are sent back to back when it runs again. Between sends it does not hold the core: a send
//! that comes due on a core with no current thread starts at once, with no switch (the sender
//! was spinning until then); behind another thread it waits its turn in the run queue like any
//! thread (`sched`). Its core never enters an idle state (it spins), so it never pays
//! `platform.wakeup_ns`. A transmit that woke a NAPI thread costs the sender
//! `platform.task_wakeup_ns`; after each send it gives way once its slice is used and another
//! thread waits.

use std::collections::VecDeque;

use super::{Feed, Host, Layout, Routed, Work};
use crate::cpu::{Category, Level};
use crate::rng::StreamId;
use crate::sched::{Thread, ThreadState};
use crate::trace::Tracer;

/// The sending thread's state.
#[derive(Debug)]
pub struct SenderThread {
    pub core: usize,
    pub state: ThreadState,
    /// Packets whose send time has come, oldest first.
    pub due: VecDeque<Routed>,
    /// The packet being sent.
    pub sending: Option<Routed>,
}

impl SenderThread {
    pub fn new(core: usize) -> SenderThread {
        SenderThread {
            core,
            state: ThreadState::Sleeping,
            due: VecDeque::with_capacity(64),
            sending: None,
        }
    }

    /// Packets due and not sent yet (the one being sent included).
    pub fn holds(&self) -> u64 {
        self.due.len() as u64 + u64::from(self.sending.is_some())
    }

    fn of(s: &mut Option<Box<SenderThread>>) -> &mut SenderThread {
        s.as_mut().expect("a sending thread")
    }
}

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// Packet `a` is due: the sender sends it now if it can run, else when it runs again.
    pub(super) fn sender_due(&mut self, a: Routed) {
        let s = SenderThread::of(&mut self.sender);
        s.due.push_back(a);
        if s.state != ThreadState::Sleeping {
            return;
        }
        let c = s.core;
        if self.l.core(c).threads.current.is_some() {
            self.wake_thread(c, Thread::Sender);
            return;
        }
        // it was spinning until this send: it holds the core without a switch
        SenderThread::of(&mut self.sender).state = ThreadState::Current;
        let start = self.thread_ps(c);
        let rq = &mut self.l.core_mut(c).threads;
        rq.current = Some(Thread::Sender);
        rq.slice_start_ps = start;
        self.sender_next(c);
    }

    /// The sender's loop: send the oldest packet due, or wait for the next one.
    pub(super) fn sender_next(&mut self, c: usize) {
        let s = SenderThread::of(&mut self.sender);
        let Some(a) = s.due.pop_front() else {
            self.block_thread(c);
            return;
        };
        s.sending = Some(a);
        let d = self.draw(c, self.s.sender.cost, StreamId::TxCost);
        self.start(c, Level::Thread, d, Category::Sender, Work::SenderSend);
    }

    /// A send's CPU time is spent: the packet goes through `veth_xmit` now.
    pub(super) fn sender_sent(&mut self, c: usize) {
        let a = SenderThread::of(&mut self.sender)
            .sending
            .take()
            .expect("a packet being sent");
        if let Some(ipi) = self.veth_xmit(a) {
            let d = self.wakeup_cost(c, ipi);
            if !d.is_zero() {
                self.start(c, Level::Thread, d, Category::Sender, Work::SenderWakeup);
                return;
            }
        }
        self.sender_after_send(c);
    }

    /// After a send: give way once the slice is used and another thread waits, else go on.
    pub(super) fn sender_after_send(&mut self, c: usize) {
        if !self.cond_resched(c) {
            self.sender_next(c);
        }
    }
}
