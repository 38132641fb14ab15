//! A veth device (`nic.device = "veth"`, `drivers/net/veth.c`): no hard interrupt and no
//! moderation. The peer's transmit (`veth_xmit` → `veth_forward_skb` → `veth_xdp_rx`) puts
//! the packet in the Rx queue's `ptr_ring` (`VETH_RING_SIZE` = 256 entries; a full ring drops
//! it, counted as `packets.dropped_nic`), then `__veth_xdp_flush` schedules the NAPI unless it
//! is scheduled already (`rx_notify_masked`, the NAPI's SCHED bit here) — on the core that
//! transmits. The transmit runs with bottom halves disabled (`__dev_queue_xmit`'s
//! `rcu_read_lock_bh`), so the `NET_RX_SOFTIRQ` it raised runs at its `local_bh_enable`,
//! inline on that core, with `handle_softirqs`' usual restarts and hand-off to ksoftirqd. With
//! threaded NAPI the schedule wakes the NAPI's thread instead (`napi_thread`).
//!
//! `veth_poll` is the driver's poll here (`driver`): it takes packets while the ring has them
//! and the budget allows; below the budget it completes, and a packet that came meanwhile
//! reschedules it (the poll function sees every packet in the ring until it returns, so that
//! re-check never finds one).

use super::{Feed, Host, Layout, Routed};
use crate::kernel::SoftirqCtx;
use crate::nic::Packet;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// A packet of the traffic is due on a veth device: the sending thread sends it when it
    /// runs (`[sender]`), or, with no sending thread, it is transmitted now.
    #[cold]
    #[inline(never)]
    pub(super) fn veth_arrival(&mut self, a: Routed) {
        if self.sender.is_some() {
            self.sender_due(a);
        } else {
            self.veth_xmit(a);
        }
    }

    /// `veth_xmit` of packet `a` now, on the transmitting core: into the ring, or dropped;
    /// the NAPI scheduled; the softirq raised run at the transmit's `local_bh_enable`.
    /// Returns, if it woke a NAPI thread (the transmitting thread pays the wake-up), whether
    /// the wake-up sent the thread's idle core an IPI ([`Host::ipi_due`], before the wake).
    pub(super) fn veth_xmit(&mut self, a: Routed) -> Option<bool> {
        let id = self.next_id;
        self.next_id += 1;
        let now = self.now;
        let v = a.vector as usize;
        let ring = &mut self.l.vector_mut(v).rings[0];
        let accepted = !ring.is_full();
        if accepted {
            ring.push(Packet {
                arrival: now,
                // sizes are validated to at most 65535 bytes
                size_bytes: a.size_bytes as u16,
                flow: a.flow,
                class: a.class,
                id,
            });
        }
        self.metrics
            .on_arrival(now, v, a.class, accepted, a.size_bytes);
        self.tracer.arrival(id, now, accepted);
        self.tracer.packet(id, a.size_bytes, a.flow, a.vector);
        self.tracer.class(id, a.class);
        let spinner = self.l.vector(v).spinner;
        // `__veth_xdp_flush`, called whether or not the packet was dropped
        let woke = if self.threaded && self.napi_threaded(v) {
            // the transmitting core: the sender's
            let ipi = self.ipi_due(self.s.sender.core, self.s.kernel.napi[v].thread_core);
            self.napi_thread_schedule(v).then_some(ipi)
        } else {
            self.napi_schedule(v);
            let c = self.l.vector(v).core;
            let k = &self.l.core(c).kernel;
            if k.softirq_pending && k.ctx.is_none() {
                self.handle_softirqs(c, SoftirqCtx::Inline);
            }
            None
        };
        self.busy_on_arrival(v, a.flow, accepted, spinner);
        woke
    }
}
