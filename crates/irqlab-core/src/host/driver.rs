//! The driver's NAPI poll function (ixgbe's shape): clean the vector's completed Tx
//! descriptors, then its Rx rings, each up to its share of the weight; hand each packet to its
//! socket, its Tx ring or the stack; and when every ring was cleaned below its budget,
//! complete the NAPI, let the moderation policy reprogram the NIC and re-enable the vector.

use super::{Host, Work};
use crate::dist::round_ps;
use crate::metrics::RingExit;
use crate::moderation::{Policy, Sample};
use crate::nic::Packet;
use crate::nic::tx::TxEntry;
use crate::rng::StreamId;
use crate::scenario::CauseMode;
use crate::sched::{Thread, ThreadState};
use crate::time::SimDuration;
use crate::topology::NO_APP;
use crate::trace::Tracer;

/// Where a packet goes when its protocol processing ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sink {
    /// The socket of this app.
    App(u16),
    /// The vector's Tx ring (forwarding).
    Tx,
    /// The stack.
    Stack,
}

impl<T: Tracer> Host<'_, T> {
    /// The Rx budget of each ring in a poll: the weight split equally (at least 1 each).
    #[inline]
    fn per_ring_budget(&self, v: usize) -> u64 {
        let rings = self.vectors[v].rings.len() as u64;
        let weight = self.s.kernel.napi_weight;
        if rings > 1 {
            (weight / rings).max(1)
        } else {
            weight
        }
    }

    #[inline]
    pub(super) fn sink_of(&self, flow: u32) -> Sink {
        let app = self.s.topology.flow_app[flow as usize];
        if app != NO_APP {
            Sink::App(app)
        } else if self.s.host.forward {
            Sink::Tx
        } else {
            Sink::Stack
        }
    }

    /// The poll function starts: first the Tx descriptors whose packets have left, up to the
    /// driver's work limit.
    pub(super) fn driver_poll_begin(&mut self, c: usize) {
        let v = self.cores[c].kernel.polling as usize;
        let done = self.vectors[v].tx.done_by(self.now);
        if done == 0 {
            self.driver_poll_step(c);
            return;
        }
        let limit = self.s.driver.tx_work_limit as usize;
        let n = done.min(limit);
        if n == limit {
            // the work limit used up: the poll is not complete (`return !!budget`)
            self.vectors[v].napi.clean_complete = false;
        }
        self.vectors[v].tx_cleaning = n;
        let cost = self.s.platform.tx_clean;
        let mut d = SimDuration::ZERO;
        if !cost.is_zero() {
            for _ in 0..n {
                d = d + self.draw(cost, StreamId::TxCleanCost);
            }
        }
        self.start_softirq_job(c, d, Work::TxClean);
    }

    pub(super) fn tx_clean_done(&mut self, c: usize) {
        let v = self.cores[c].kernel.polling as usize;
        let n = std::mem::take(&mut self.vectors[v].tx_cleaning);
        for _ in 0..n {
            let e = self.vectors[v].tx.pop();
            let vec = &mut self.vectors[v];
            vec.tx_packets += 1;
            // the driver counts skb->len: the frame without its FCS
            vec.tx_bytes += u64::from(e.size_bytes.saturating_sub(4));
            self.metrics.on_transmitted(self.now, v, e.class);
        }
        self.driver_poll_step(c);
    }

    /// The driver's Rx clean loop: the next packet of the current ring while its budget
    /// allows, then the next ring.
    pub(super) fn driver_poll_step(&mut self, c: usize) {
        let v = self.cores[c].kernel.polling as usize;
        let per_ring = self.per_ring_budget(v);
        let vec = &mut self.vectors[v];
        loop {
            let r = vec.napi.ring;
            if r >= vec.rings.len() {
                self.driver_poll_done(c);
                return;
            }
            if vec.napi.ring_work < per_ring && vec.rings[r].unprocessed() > 0 {
                let pkt = vec.rings[r].take();
                self.start_packet(c, pkt);
                return;
            }
            if vec.napi.ring_work >= per_ring {
                vec.napi.clean_complete = false;
            }
            vec.napi.ring = r + 1;
            vec.napi.ring_work = 0;
        }
    }

    /// Protocol processing of `pkt` (and its transmit, if it is forwarded).
    fn start_packet(&mut self, c: usize, pkt: Packet) {
        let d = self.packet_cost(pkt);
        self.start_softirq_job(c, d, Work::Packet);
    }

    /// Protocol processing of `pkt`, and its transmit if it is forwarded.
    #[inline]
    pub(super) fn packet_cost(&mut self, pkt: Packet) -> SimDuration {
        let p = &self.s.platform;
        let (proto, per_byte, tx) = (p.proto, p.proto_ps_per_byte, p.tx);
        let mut d = self.draw(proto, StreamId::ProtoCost);
        if per_byte > 0.0 {
            d = d + SimDuration(round_ps(pkt.size_bytes as f64 * per_byte));
        }
        if self.sink_of(pkt.flow) == Sink::Tx && !tx.is_zero() {
            d = d + self.draw(tx, StreamId::TxCost);
        }
        d
    }

    pub(super) fn packet_done(&mut self, c: usize) {
        let v = self.cores[c].kernel.polling as usize;
        let vec = &mut self.vectors[v];
        let pkt = vec.rings[vec.napi.ring].release();
        vec.rx_packets += 1;
        // the driver counts skb->len: the frame without its FCS
        vec.rx_bytes += u64::from(pkt.size_bytes.saturating_sub(4));
        vec.napi.work += 1;
        vec.napi.ring_work += 1;
        if self.measuring() {
            self.metrics.vectors[v].polled_packets += 1;
        }
        let wake = self.deliver(v, pkt);
        if wake.is_zero() {
            self.driver_poll_step(c);
        } else {
            self.start_softirq_job(c, wake, Work::Wakeup);
        }
    }

    /// Protocol processing of `pkt` (from vector `v`) has ended: it goes to its socket, its Tx
    /// ring or the stack. Returns the cost of waking its app, if it woke one (charged to the
    /// caller's context).
    pub(super) fn deliver(&mut self, v: usize, pkt: Packet) -> SimDuration {
        let now = self.now;
        match self.sink_of(pkt.flow) {
            Sink::Stack => {
                self.metrics
                    .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::Stack);
                self.tracer.delivered(pkt.id, pkt.arrival, now);
            }
            Sink::App(a) => {
                let a = a as usize;
                let truesize = self.s.socket.truesize(pkt.size_bytes);
                if self.apps[a].socket.enqueue(pkt, truesize) {
                    self.metrics
                        .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::Socket);
                    self.tracer.delivered(pkt.id, pkt.arrival, now);
                    if self.apps[a].state == ThreadState::Sleeping {
                        let d =
                            self.draw_or_zero(self.s.platform.task_wakeup, StreamId::WakeupCost);
                        self.wake_thread(self.apps[a].core, Thread::App(a as u16));
                        return d;
                    }
                } else {
                    self.metrics.on_ring_exit(
                        now,
                        v,
                        pkt.class,
                        pkt.arrival,
                        RingExit::DroppedSocket,
                    );
                    self.metrics.on_socket_drop(now, a, pkt.class);
                }
            }
            Sink::Tx => {
                if self.vectors[v].tx.is_full() {
                    self.metrics
                        .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::DroppedTx);
                } else {
                    let depart = self.wire.send(now, pkt.size_bytes);
                    self.vectors[v].tx.push(TxEntry {
                        depart,
                        size_bytes: pkt.size_bytes,
                        class: pkt.class,
                    });
                    self.metrics
                        .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::Tx);
                    self.tracer.delivered(pkt.id, pkt.arrival, now);
                    self.tx_queued(v, depart);
                }
            }
        }
        SimDuration::ZERO
    }

    /// The poll function returns. Every ring cleaned below its budget: `napi_complete_done`
    /// and (NAPI) re-enable the vector. Otherwise it reports the whole weight: the NAPI stays
    /// scheduled and goes to the repoll list (even if the rings happen to be empty).
    pub(super) fn driver_poll_done(&mut self, c: usize) {
        let v = self.cores[c].kernel.polling as usize;
        let weight = self.s.kernel.napi_weight;
        let napi = &mut self.vectors[v].napi;
        let complete = napi.clean_complete;
        let work = napi.work;
        self.vectors[v].napi_ret = if complete {
            work.min(weight - 1)
        } else {
            weight
        };
        self.tracer
            .poll(c, v, self.now, work, self.vectors[v].napi_ret);
        if complete {
            self.vectors[v].napi.sched = false;
            if !self.napi_complete_done(v) {
                // software IRQ coalescing: the vector stays masked, a timer will poll again
                self.after_napi_poll(c);
                return;
            }
            self.moderate(v);
            if self.s.scheme.masks_on_irq() {
                if self.s.nic.cause_mode == CauseMode::Armed {
                    self.vectors[v].irq.clear();
                    self.cause_cleared(v);
                }
                let cost = self.s.platform.unmask;
                if !cost.is_zero() {
                    let d = self.draw(cost, StreamId::UnmaskCost);
                    self.start_softirq_job(c, d, Work::Unmask);
                    return;
                }
                self.vectors[v].irq.masked = false;
                self.nic_check(v);
            }
        } else {
            self.cores[c].kernel.repoll.push_back(v as u16);
        }
        self.after_napi_poll(c);
    }

    pub(super) fn unmask_done(&mut self, c: usize) {
        let v = self.cores[c].kernel.polling as usize;
        self.vectors[v].irq.masked = false;
        self.nic_check(v);
        self.after_napi_poll(c);
    }

    /// `napi_complete_done`'s answer to the driver: re-enable the vector (true), or not,
    /// because `napi_defer_hard_irqs` and `gro_flush_timeout` defer it (reference §7.2): a
    /// poll that found packets reloads the counter; each completion while the counter is
    /// above zero decrements it and arms the timer instead.
    fn napi_complete_done(&mut self, v: usize) -> bool {
        let k = &self.s.kernel;
        if k.defer_hard_irqs == 0 || k.gro_flush_timeout.is_zero() {
            return true;
        }
        let napi = &mut self.vectors[v].napi;
        if napi.work > 0 {
            napi.defer_count = k.defer_hard_irqs;
        }
        if napi.defer_count == 0 {
            return true;
        }
        napi.defer_count -= 1;
        let t = self.now + k.gro_flush_timeout;
        napi.watchdog_at = Some(t);
        self.push_timer(t, super::Timer::NapiWatchdog(v as u16));
        false
    }

    /// The driver's moderation policy sees the completed session and may reprogram the NIC.
    fn moderate(&mut self, v: usize) {
        let c = self.vectors[v].core;
        let vec = &mut self.vectors[v];
        let sample = Sample {
            now: self.now,
            jiffies: self.cores[c].kernel.jiffies(self.now),
            packets: vec.rx_packets,
            bytes: vec.rx_bytes,
            events: vec.irq_events,
            tx_packets: vec.tx_packets,
            tx_bytes: vec.tx_bytes,
        };
        if let Some(write) = vec.policy.on_complete(&sample) {
            self.apply_moderation(v, write);
            if self.measuring() {
                self.metrics.vectors[v].moderation_writes += 1;
            }
        }
    }
}
