//! The thread level of a core: ksoftirqd and the apps' threads share it by round robin with a
//! time slice.
//!
//! The rule approximates EEVDF (Linux ≥ 6.6) with equal weights and its `RUN_TO_PARITY`
//! behaviour: a thread that wakes does not preempt the running thread; it waits at the tail of
//! the run queue until the running thread blocks or has used its slice (`kernel.sched_slice_us`,
//! by default `sysctl_sched_base_slice` = 0.75 ms × (1 + log2(min(cores, 8)))). A thread is
//! switched out only at a point where Linux could reschedule it: an app after a packet,
//! ksoftirqd after a `handle_softirqs` run (its `cond_resched()`); the slice counts the CPU
//! time the thread received (preemption by interrupts and softirqs does not use it up).
//! Hard IRQs and softirqs preempt every thread (the CPU's priority levels). The transitions
//! live in `host::sched`.
//!
//! A NAPI thread may be `SCHED_FIFO` (`kernel.napi_thread_policy`, `chrt -f`): the real-time
//! class runs before the fair one. A woken FIFO thread goes ahead of the fair threads in the
//! run queue (behind FIFO threads already waiting: one priority is modelled, first come first
//! served), and the current fair thread gives way at its next preemption point whatever its
//! slice; a current FIFO thread gives way to no one (`SCHED_FIFO` has no slice, and threads of
//! its priority run only when it blocks).

use std::collections::VecDeque;

/// A thread of a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thread {
    Ksoftirqd,
    App(u16),
    /// The NAPI thread of a vector (`kernel.threaded_napi`).
    NapiThread(u16),
    /// The sending thread (`[sender]`).
    Sender,
    /// The polling thread of app N's AF_XDP socket (`app.N.xsk_poll_core`).
    XskPoller(u16),
}

/// What a thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    Sleeping,
    /// Waiting in the run queue.
    Runnable,
    /// The core's current thread: being switched in, or running.
    Current,
}

/// The run queue of one core.
#[derive(Debug)]
pub struct RunQueue {
    /// The thread that holds the thread level.
    pub current: Option<Thread>,
    /// The context switch into `current` is under way.
    pub switching: bool,
    /// Runnable threads, in the order they will run.
    pub queue: VecDeque<Thread>,
    /// Thread-level CPU time of the core (ps) when `current`'s slice began.
    pub slice_start_ps: u64,
    /// `current` is a FIFO thread.
    pub current_fifo: bool,
    /// The FIFO threads waiting: the first this many of `queue`.
    pub fifo_waiting: usize,
}

impl RunQueue {
    pub fn new(threads: usize) -> RunQueue {
        RunQueue {
            current: None,
            switching: false,
            queue: VecDeque::with_capacity(threads),
            slice_start_ps: 0,
            current_fifo: false,
            fifo_waiting: 0,
        }
    }

    /// Whether `current` should give way: a fair thread that has used its slice while another
    /// thread waits, or while a FIFO thread waits whatever it has used. A FIFO thread never.
    #[inline]
    pub fn should_yield(&self, thread_ps: u64, slice_ps: u64) -> bool {
        !self.current_fifo
            && (self.fifo_waiting > 0
                || (!self.queue.is_empty() && thread_ps - self.slice_start_ps >= slice_ps))
    }

    /// `t` waits its turn: a FIFO thread behind the FIFO threads waiting, a fair one at the
    /// tail.
    pub fn enqueue(&mut self, t: Thread, fifo: bool) {
        if fifo {
            self.queue.insert(self.fifo_waiting, t);
            self.fifo_waiting += 1;
        } else {
            self.queue.push_back(t);
        }
    }

    /// The next thread to run, if any, which becomes `current`.
    pub fn pick_next(&mut self) -> Option<Thread> {
        let t = self.queue.pop_front();
        self.current_fifo = t.is_some() && self.fifo_waiting > 0;
        if self.current_fifo {
            self.fifo_waiting -= 1;
        }
        self.current = t;
        t
    }
}
