//! AF_XDP apps (their settings and rules: `crate::xsk`): the XDP redirect of an app's packet
//! into its XSK's Rx ring in the NAPI poll (`__xsk_map_redirect`), the poll's flush that makes
//! the descriptors visible (`xdp_do_flush` → `xsk_flush`), and the app's threads: its own,
//! which never sleeps and peeks its ring in user space, spinning, kicking or busy-polling
//! with `recvfrom` when it finds it empty, and its polling thread (`app.N.xsk_poll_core`),
//! which calls `recvfrom` in a loop. A `recvfrom` that busy-polls is the busy loop of
//! `busypoll`, nonblocking (`sk_busy_loop(sk, 1)`).
//!
//! The empty checks of a thread that does not busy-poll are one CPU job (`Work::XskSpin`) of
//! as many iterations (`platform.busy_iter_ns` each) as fit before the run's end, or before
//! the end of the thread's slice when another thread waits, cut at the end of the iteration
//! under way when a flush makes a descriptor visible or a thread wakes on the core (as a
//! busy loop's spin is, `busypoll::cut_spin`). The result is the same as checking the ring
//! once per iteration.

use super::{Feed, Host, Layout, Work};
use crate::cpu::{Category, Level};
use crate::metrics::RingExit;
use crate::nic::Packet;
use crate::sched::{Thread, ThreadState};
use crate::time::SimDuration;
use crate::trace::Tracer;
use crate::xsk::{OnEmpty, XskRing, busy_polls};

/// An XSK app's state besides its thread's ([`super::App`]).
#[derive(Debug)]
pub struct XskState {
    /// Its Rx ring.
    pub ring: XskRing,
    /// Its polling thread (`app.N.xsk_poll_core`), if it has one.
    pub poller: ThreadState,
    /// The length of the app thread's spin job under way (0: none), from its start.
    pub spin_ps: u64,
}

impl XskState {
    pub fn new(ring: usize) -> XskState {
        XskState {
            ring: XskRing::new(ring),
            poller: ThreadState::Sleeping,
            spin_ps: 0,
        }
    }
}

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    fn xsk_state(&mut self, a: usize) -> &mut XskState {
        self.apps[a].xsk.as_mut().expect("an XSK app")
    }

    /// Time zero: every XSK app's threads run (they never sleep). A thread that finds its
    /// core free holds it without a switch (it was running before); one that finds another
    /// there waits its turn.
    #[cold]
    pub(super) fn xsk_start(&mut self) {
        for a in 0..self.apps.len() {
            let Some(cfg) = self.s.xsk.of(a).copied() else {
                continue;
            };
            self.xsk_thread_start(self.apps[a].core, Thread::App(a as u16));
            if let Some(pc) = cfg.poll_core {
                self.xsk_thread_start(pc, Thread::XskPoller(a as u16));
            }
        }
    }

    fn xsk_thread_start(&mut self, c: usize, t: Thread) {
        let (a, own) = match t {
            Thread::App(a) => (a as usize, true),
            Thread::XskPoller(a) => (a as usize, false),
            other => unreachable!("not an XSK app's thread: {other:?}"),
        };
        let running = self.l.core(c).threads.current.is_none();
        let state = if running {
            ThreadState::Current
        } else {
            ThreadState::Runnable
        };
        if own {
            self.apps[a].state = state;
        } else {
            self.xsk_state(a).poller = state;
        }
        if !running {
            self.l.core_mut(c).threads.queue.push_back(t);
            return;
        }
        let start = self.thread_ps(c);
        let rq = &mut self.l.core_mut(c).threads;
        rq.current = Some(t);
        rq.slice_start_ps = start;
        if own {
            self.xsk_next(c, a);
        } else {
            self.xsk_poller_loop(c, a);
        }
    }

    /// The cost of `flow`'s packet in the poll if an XSK app reads it: the XDP program and its
    /// redirect (`platform.xdp_ns`), instead of protocol processing.
    #[cold]
    pub(super) fn xdp_cost(&self, flow: u32) -> Option<SimDuration> {
        let a = self.s.topology.app_of(flow)?;
        self.s.xsk.of(a as usize).map(|_| self.s.platform.xdp)
    }

    /// `__xsk_map_redirect` → `xsk_rcv_zc`: the XDP program of vector `v`'s poll redirects
    /// `pkt` into app `a`'s XSK: its descriptor is reserved in the Rx ring, visible at the
    /// poll's flush, or the full ring refuses it (`rx_queue_full`), a drop counted as the
    /// app's socket drops.
    #[cold]
    pub(super) fn xsk_redirect(&mut self, v: usize, a: usize, pkt: Packet) {
        let now = self.now;
        if self.xsk_state(a).ring.reserve(pkt) {
            self.metrics
                .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::Socket);
            self.tracer.delivered(pkt.id, pkt.arrival, now);
        } else {
            self.metrics
                .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::DroppedSocket);
            self.metrics.on_socket_drop(now, a, pkt.class);
            if self.measuring() {
                self.metrics.xsk.rx_ring_full += 1;
            }
            self.rr_on_request_lost(pkt.flow);
        }
    }

    /// `xdp_do_flush` → `xsk_flush` at the end of vector `v`'s Rx clean: the descriptors its
    /// poll reserved become visible (`xskq_prod_submit`); an app spinning on its ring sees
    /// them at the end of the iteration under way.
    #[cold]
    pub(super) fn xsk_flush(&mut self, v: usize) {
        let Some(&a) = self.xsk_bound.get(v) else {
            return;
        };
        if a == crate::topology::NO_APP {
            return;
        }
        let a = a as usize;
        if self.xsk_state(a).ring.submit() > 0 {
            self.xsk_cut(a);
        }
    }

    /// The app's own thread peeks its ring: a descriptor, or what it does on an empty ring.
    #[cold]
    pub(super) fn xsk_next(&mut self, c: usize, a: usize) {
        if let Some(pkt) = self.xsk_state(a).ring.take() {
            self.xsk_take(c, a, pkt);
            return;
        }
        if self.cond_resched(c) {
            return;
        }
        let cfg = self.s.xsk.of(a).expect("an XSK app");
        match cfg.on_empty(busy_polls(&self.s.busy)) {
            OnEmpty::BusyPoll => {
                if self.measuring() {
                    self.metrics.xsk.empty_checks += 1;
                }
                self.xsk_recvfrom(c);
            }
            OnEmpty::Kick | OnEmpty::Check => self.xsk_spin(c, a),
        }
    }

    /// The app takes `pkt`'s descriptor and handles it (`app.N.cost_ns`; with requests, its
    /// response's transmit): no skb to free.
    fn xsk_take(&mut self, c: usize, a: usize, pkt: Packet) {
        let d = self.app_hold(c, a, pkt);
        self.start(c, Level::Thread, d, Category::App, Work::AppPacket);
    }

    /// The app spins on its empty ring (each iteration a check, and with a kick a `recvfrom`
    /// that does nothing), charged to `cpu.app`, until the run's end or, when another thread
    /// waits, its slice's.
    fn xsk_spin(&mut self, c: usize, a: usize) {
        let iter = self.s.busy.iter.ps();
        let thread_ps = self.thread_ps(c);
        let slice = self.s.kernel.sched_slice.ps();
        let rq = &self.l.core(c).threads;
        let until = self.s.run.end.ps().saturating_sub(self.now.ps());
        let mut k = until.div_ceil(iter).max(1);
        if !rq.queue.is_empty() {
            let left = slice.saturating_sub(thread_ps - rq.slice_start_ps);
            k = k.min(left.div_ceil(iter).max(1));
        }
        let d = k * iter;
        self.xsk_state(a).spin_ps = d;
        self.start(
            c,
            Level::Thread,
            SimDuration(d),
            Category::App,
            Work::XskSpin,
        );
    }

    /// The spin job ended (its iterations done, or cut): each was an empty check, and a kick.
    #[cold]
    pub(super) fn xsk_spin_done(&mut self, c: usize) {
        let a = self.current_app(c);
        let iter = self.s.busy.iter.ps();
        let n = std::mem::take(&mut self.xsk_state(a).spin_ps) / iter;
        if self.measuring() {
            self.metrics.xsk.empty_checks += n;
            let cfg = self.s.xsk.of(a).expect("an XSK app");
            if cfg.on_empty(busy_polls(&self.s.busy)) == OnEmpty::Kick {
                self.metrics.xsk.recvfroms += n;
            }
        }
        self.xsk_next(c, a);
    }

    /// Cuts app `a`'s spin at the end of the iteration under way, if it spins.
    #[cold]
    pub(super) fn xsk_cut(&mut self, a: usize) {
        let spin_ps = self.xsk_state(a).spin_ps;
        if spin_ps == 0 {
            return;
        }
        let c = self.apps[a].core;
        let cut = self.cut_spin(c, spin_ps);
        self.xsk_state(a).spin_ps = cut;
    }

    /// `recvfrom(…, MSG_DONTWAIT)` on the XSK from core `c`'s current thread (the app's or
    /// its polling thread): its entry costs one iteration, charged to `cpu.busy_poll`.
    fn xsk_recvfrom(&mut self, c: usize) {
        let d = self.s.busy.iter;
        self.start(c, Level::Thread, d, Category::BusyPoll, Work::XskRecvfrom);
    }

    /// `__xsk_recvmsg`: with SO_BUSY_POLL, `sk_busy_loop(sk, 1)` on the bound queue's NAPI (a
    /// nonblocking busy loop, `busypoll`); then back to the thread's loop.
    #[cold]
    pub(super) fn xsk_recvmsg(&mut self, c: usize) {
        let a = self.current_app(c);
        if self.measuring() {
            self.metrics.xsk.recvfroms += 1;
        }
        let b = &self.s.busy;
        if !busy_polls(b) {
            self.xsk_after_recvfrom(c, a);
            return;
        }
        let v = self.s.xsk.of(a).expect("an XSK app").queue;
        let (budget, prefer) = (b.sock_budget, b.sock_prefer);
        self.busy_loop_start(c, a, v, None, budget, prefer);
    }

    /// `recvfrom` returned to app `a`'s thread on core `c`: the app peeks its ring again, its
    /// polling thread calls `recvfrom` again.
    #[cold]
    pub(super) fn xsk_after_recvfrom(&mut self, c: usize, a: usize) {
        match self.l.core(c).threads.current {
            Some(Thread::XskPoller(_)) => self.xsk_poller_loop(c, a),
            _ => self.xsk_next(c, a),
        }
    }

    /// The polling thread's loop: `recvfrom`, again and again, giving way once its slice is
    /// used and another thread waits.
    #[cold]
    pub(super) fn xsk_poller_loop(&mut self, c: usize, a: usize) {
        let _ = a;
        if !self.cond_resched(c) {
            self.xsk_recvfrom(c);
        }
    }
}
