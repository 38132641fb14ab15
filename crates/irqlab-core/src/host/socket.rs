//! The sockets and the apps that read them (their state: `crate::socket`, [`super::App`]):
//! protocol processing queues a packet on its app's socket or drops it there
//! (`__udp_enqueue_schedule_skb`), `sk_data_ready` wakes the app, and the app's thread reads
//! and handles packets in its `recv` loop (`udp_recvmsg`), which frees each skb or defers its
//! free to the core that allocated it (`skb_defer`). epoll, busy polling and the
//! responses of request/response traffic are `busypoll`'s.

use super::{Feed, Host, Layout, Work};
use crate::cpu::{Category, Level};
use crate::dist::plus_bytes;
use crate::metrics::RingExit;
use crate::nic::Packet;
use crate::rng::StreamId;
use crate::sched::{Thread, ThreadState};
use crate::time::SimDuration;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// Protocol processing of `pkt` (from vector `v`, on core `c`) queues it on app `a`'s
    /// socket, or drops it there (the receive buffer is full). Returns the cost of waking the app, if it woke
    /// it (the waker pays, on the vector's core, in the caller's context).
    #[inline(always)]
    pub(super) fn socket_enqueue(
        &mut self,
        c: usize,
        v: usize,
        a: usize,
        pkt: Packet,
    ) -> SimDuration {
        let now = self.now;
        let truesize = self.s.socket.truesize(u32::from(pkt.size_bytes));
        self.adapt_on_enqueue(self.l.vector(v).core, a);
        // `skb->alloc_cpu`, read only by deferred frees
        let alloc = if self.skb_defer {
            self.alloc_core(c)
        } else {
            0
        };
        if self.apps[a].socket.enqueue_from(pkt, truesize, alloc) {
            self.metrics
                .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::Socket);
            self.tracer.delivered(pkt.id, pkt.arrival, now);
            self.busy_on_data_ready(a, v);
            if self.apps[a].state == ThreadState::Sleeping {
                // the waker pays, on the vector's core
                let c = self.l.vector(v).core;
                let ipi = self.ipi_due(c, self.apps[a].core);
                let d = self.wakeup_cost(c, ipi);
                self.wake_thread(self.apps[a].core, Thread::App(a as u16));
                return d;
            }
        } else {
            self.metrics
                .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::DroppedSocket);
            self.metrics.on_socket_drop(now, a, pkt.class);
            self.adapt_on_overflow(self.l.vector(v).core);
            self.rr_on_request_lost(pkt.flow);
        }
        SimDuration::ZERO
    }

    /// An app's `recv` loop: take the next packet, or sleep on an empty socket. (epoll, busy
    /// polling and responses: `busypoll`.)
    pub(super) fn app_next(&mut self, c: usize, a: usize) {
        if self.busy_app_wait(c, a) {
            return;
        }
        let Some(pkt) = self.apps[a].socket.dequeue() else {
            self.block_thread(c);
            return;
        };
        self.app_take(c, a, pkt);
    }

    /// App `a` on core `c` holds `pkt`: what handling it costs (`app.N.cost_ns`, and its
    /// per-byte cost; with requests, its response's transmit too).
    #[inline(always)]
    pub(super) fn app_hold(&mut self, c: usize, a: usize, pkt: Packet) -> SimDuration {
        self.apps[a].holding = Some(pkt);
        let cfg = &self.s.apps[a];
        let (cost, per_byte) = (cfg.cost, cfg.cost_ps_per_byte);
        let d = plus_bytes(
            self.draw(c, cost, StreamId::AppCost),
            pkt.size_bytes,
            per_byte,
        );
        self.rr_with_response_cost(c, d)
    }

    /// The app handles `pkt`, read from its socket.
    pub(super) fn app_take(&mut self, c: usize, a: usize, pkt: Packet) {
        let d = self.app_hold(c, a, pkt);
        let d = if self.skb_defer {
            d + self.skb_attempt_defer_free(c, a)
        } else {
            d
        };
        self.start(c, Level::Thread, d, Category::App, Work::AppPacket);
    }

    pub(super) fn app_packet_done(&mut self, c: usize) {
        let Some(Thread::App(a)) = self.l.core_mut(c).threads.current else {
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
        self.rr_on_consumed(a, pkt);
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
