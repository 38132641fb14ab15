//! Threaded NAPI (`kernel.threaded_napi`, or per NAPI `napi.N.threaded`; `net/core/dev.c`):
//! `____napi_schedule` of a threaded NAPI sets `NAPI_STATE_SCHED_THREADED` and wakes the
//! NAPI's thread (`wake_up_process`) instead of listing it and raising `NET_RX_SOFTIRQ`. The
//! thread, pinned to its core (`napi.N.thread_core`, else `kernel.napi_thread_core`), runs at
//! the thread level beside that core's other threads (`sched`'s rule, fair or FIFO by its
//! policy), switched in at `platform.ctx_switch_ns`; its loop (`napi_threaded_poll`):
//!
//! - `napi_thread_wait`: while the NAPI is not scheduled, sleep;
//! - `napi_threaded_poll_loop`: `local_bh_disable`, one `__napi_poll` with the NAPI weight,
//!   `local_bh_enable` (the softirqs raised meanwhile on the core run now), then poll again if
//!   the poll used its whole weight (repoll), after `cond_resched` (it gives way once its
//!   slice is used and another thread waits); a poll below the weight completed the NAPI
//!   (`napi_complete_done`), and the thread waits again.
//!
//! After each poll it frees its core's deferred skbs (`skb_defer`). The polls' CPU time is
//! `cpu.napi_thread`, not the softirq's.
//!
//! Threaded busy polling (`napi.N.threaded = "busy-poll"`, `NAPI_STATE_THREADED_BUSY_POLL`,
//! Linux 6.19): when its thread is scheduled it sets `NAPI_STATE_IN_BUSY_POLL`, so the
//! driver's `napi_complete_done` returns false at once: SCHED and SCHED_THREADED stay set,
//! the IRQ is never re-armed (it stays masked after the one that first scheduled the NAPI),
//! no deferral timer is armed, and no moderation policy runs (drivers run DIM only when
//! `napi_complete_done` returns true). `napi_thread_wait` then returns at once and the
//! thread polls again, for ever: its core is 100 % busy. Each turn ends with
//! `cond_resched`, so a fair thread gives way once its slice is used and another thread
//! waits. Its polls that find nothing are one CPU job (`Work::NapiThreadSpin`) of
//! `platform.busy_iter_ns` per poll, lasting to the end of its slice; a packet on its ring,
//! or a thread woken on its core, cuts the job at the end of the poll under way (as a socket
//! busy loop's spin, `busypoll`).

use super::{Feed, Host, Layout, Work};
use crate::cpu::{Category, Level};
use crate::kernel::SoftirqCtx;
use crate::kernel::config::Threaded;
use crate::sched::{Thread, ThreadState};
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// `napi_schedule` of vector `v` with threaded NAPI: nothing if it is scheduled already;
    /// else SCHED, and its thread woken if it sleeps. Returns whether it woke it.
    #[cold]
    #[inline(never)]
    pub(super) fn napi_thread_schedule(&mut self, v: usize) -> bool {
        let vec = self.l.vector_mut(v);
        if vec.napi.sched {
            return false;
        }
        vec.napi.sched = true;
        if vec.napi_thread != ThreadState::Sleeping {
            return false; // running or runnable: its loop sees SCHED
        }
        let c = self.s.kernel.napi[v].thread_core;
        self.wake_thread(c, Thread::NapiThread(v as u16));
        true
    }

    /// Vector `v` is polled by a NAPI thread (`napi.N.threaded` on or busy-poll).
    #[inline(always)]
    pub(super) fn napi_threaded(&self, v: usize) -> bool {
        self.s.kernel.napi[v].threaded != Threaded::Off
    }

    /// Vector `v`'s NAPI thread busy-polls (`napi.N.threaded = "busy-poll"`).
    #[inline(always)]
    pub(super) fn napi_thread_busy(&self, v: usize) -> bool {
        self.threaded_busy && self.s.kernel.napi[v].threaded == Threaded::BusyPoll
    }

    /// The NAPI thread of vector `v`, current on core `c`, at the head of its loop: sleep if
    /// the NAPI is not scheduled, give way if its slice is used and another thread waits, else
    /// poll with bottom halves disabled.
    pub(super) fn napi_thread_loop(&mut self, c: usize, v: usize) {
        if !self.l.vector(v).napi.sched {
            self.block_thread(c);
            return;
        }
        if self.cond_resched(c) {
            return;
        }
        if self.napi_thread_busy(v) && !self.poll_finds_work(v) {
            self.napi_thread_spin(c, v);
            return;
        }
        let k = &mut self.l.core_mut(c).kernel;
        debug_assert!(k.ctx.is_none(), "bottom halves already disabled");
        k.ctx = Some(SoftirqCtx::NapiThread);
        self.napi_poll(c, v);
    }

    /// A poll returned on core `c`: true if a NAPI thread made it (it goes on there). It frees
    /// its core's deferred skbs (`skb_defer`); its `local_bh_enable` runs the softirqs raised
    /// meanwhile, then the loop goes on.
    #[cold]
    #[inline(never)]
    pub(super) fn napi_thread_after_poll(&mut self, c: usize) -> bool {
        if self.l.core(c).kernel.ctx != Some(SoftirqCtx::NapiThread) {
            return false;
        }
        if !(self.skb_defer && self.skb_defer_free_flush(c, Work::NapiThreadFlushed)) {
            self.napi_thread_bh_enable(c);
        }
        true
    }

    /// The NAPI thread on core `c` enables bottom halves after its poll: the softirqs raised
    /// meanwhile run, then its loop goes on.
    pub(super) fn napi_thread_bh_enable(&mut self, c: usize) {
        self.local_bh_enable(c, Category::NapiThread, Work::NapiThreadNext);
    }

    /// The current NAPI thread of core `c` goes on with its loop.
    pub(super) fn napi_thread_next(&mut self, c: usize) {
        let Some(Thread::NapiThread(v)) = self.l.core(c).threads.current else {
            unreachable!("a NAPI thread's loop while it was not current");
        };
        self.napi_thread_loop(c, v as usize);
    }

    /// The busy-polling NAPI thread of vector `v`, current on core `c`, finds nothing: its
    /// polls spin to the end of its slice (of what is left of it when another thread waits),
    /// cut by a packet on its ring or a thread woken on its core.
    fn napi_thread_spin(&mut self, c: usize, v: usize) {
        let iter = self.s.busy.iter.ps();
        let slice = self.s.kernel.sched_slice.ps();
        let used = self.thread_ps(c) - self.l.core(c).threads.slice_start_ps;
        let left = slice.saturating_sub(used % slice.max(1));
        let d = left.div_ceil(iter).max(1) * iter;
        self.l.vector_mut(v).napi_spin_ps = d;
        self.start(
            c,
            Level::Thread,
            crate::time::SimDuration(d),
            Category::NapiThread,
            Work::NapiThreadSpin,
        );
    }

    /// The spin job of the current NAPI thread of core `c` ended: its loop goes on.
    pub(super) fn napi_thread_spun(&mut self, c: usize) {
        let Some(Thread::NapiThread(v)) = self.l.core(c).threads.current else {
            unreachable!("a NAPI thread's spin while it was not current");
        };
        self.l.vector_mut(v as usize).napi_spin_ps = 0;
        self.napi_thread_loop(c, v as usize);
    }

    /// Cuts the spin job of vector `v`'s busy-polling NAPI thread, if one is under way, at
    /// the end of the poll under way.
    #[cold]
    #[inline(never)]
    pub(super) fn napi_thread_cut(&mut self, v: usize) {
        let spin = self.l.vector(v).napi_spin_ps;
        if spin == 0 {
            return;
        }
        let c = self.s.kernel.napi[v].thread_core;
        self.cut_spin(c, spin);
    }
}
