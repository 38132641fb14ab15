//! The driver (ixgbe's shape): its ISR, which schedules the NAPI; its NAPI poll function, which
//! cleans the vector's completed Tx descriptors, then its Rx rings, each up to its share of the
//! weight, and hands each packet to its socket (`socket`), its Tx ring or the stack; and when
//! every ring was cleaned below its budget, completes the NAPI (`kernel`), lets the moderation
//! policy (`crate::moderation`) reprogram the NIC and re-enables the vector.

use super::{Feed, Host, Layout, Work};
use crate::cpu::{Category, Level};
use crate::dist::{plus_bytes, sample};
use crate::metrics::RingExit;
use crate::moderation::{AnyPolicy, Policy, Sample};
use crate::nic::Packet;
use crate::nic::tx::TxEntry;
use crate::rng::StreamId;
use crate::scenario::CauseMode;
use crate::time::SimDuration;
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

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    #[inline]
    pub(super) fn sink_of(&self, flow: u32) -> Sink {
        if self.all_to_stack {
            return Sink::Stack;
        }
        if let Some(app) = self.s.topology.app_of(flow) {
            Sink::App(app)
        } else if self.s.host.forward {
            Sink::Tx
        } else {
            Sink::Stack
        }
    }

    pub(super) fn start_isr(&mut self, v: usize) {
        let s = self.s;
        let c = self.l.vector_mut(v).core;
        self.l.core_mut(c).hardirq = v as u16;
        let d = if s.first_packet_in_isr && self.isr_takes_first_packet(v) {
            self.isr_with_first_packet(v)
        } else {
            let p = &s.platform;
            let mut d = self.draw(c, p.irq, StreamId::IrqCost);
            if s.scheme.masks_on_irq() && !p.mask.is_zero() {
                d = d + self.draw(c, p.mask, StreamId::MaskCost);
            }
            d
        };
        if self.contention {
            self.contention_on_isr(v);
        }
        self.start(c, Level::HardIrq, d, Category::Irq, Work::Isr);
    }

    /// The ISR has run: it schedules the NAPI; `irq_exit` then runs softirqs. (Schemes with
    /// Salah's polling loop start a poll instead.)
    pub(super) fn isr_done(&mut self, c: usize) {
        self.hardirq_done(c);
        let v = self.l.core_mut(c).hardirq as usize;
        self.contention_isr_done(v);
        self.l.vector_mut(v).irq.isr_done();
        self.cause_cleared(v);
        if self.s.scheme.uses_poll_loop() {
            self.poll_loop_isr_done(v);
            self.next_hardirq(c);
        } else {
            self.napi_schedule(v);
            self.next_hardirq(c);
            self.irq_exit(c);
        }
        self.nic_check(v);
    }

    /// The poll function starts: first the Tx descriptors whose packets have left, up to the
    /// driver's work limit.
    #[inline(always)]
    pub(super) fn driver_poll_begin(&mut self, c: usize) {
        let v = self.l.core_mut(c).kernel.polling as usize;
        if self.l.vector_mut(v).tx.occupied() == 0 {
            self.driver_poll_step(c);
            return;
        }
        let done = self.l.vector_mut(v).tx.done_by(self.now);
        if done == 0 {
            self.driver_poll_step(c);
            return;
        }
        let limit = self.s.driver.tx_work_limit as usize;
        let n = done.min(limit);
        if n == limit {
            // the work limit used up: the poll is not complete (`return !!budget`)
            self.l.vector_mut(v).napi.clean_complete = false;
        }
        self.l.vector_mut(v).tx_cleaning = n;
        let cost = self.s.platform.tx_clean;
        let mut d = SimDuration::ZERO;
        if !cost.is_zero() {
            for _ in 0..n {
                d = d + self.draw(c, cost, StreamId::TxCleanCost);
            }
        }
        self.start_softirq_job(c, d, Work::TxClean);
    }

    pub(super) fn tx_clean_done(&mut self, c: usize) {
        let v = self.l.core_mut(c).kernel.polling as usize;
        let n = std::mem::take(&mut self.l.vector_mut(v).tx_cleaning);
        for _ in 0..n {
            let e = self.l.vector_mut(v).tx.pop();
            let vec = &mut self.l.vector_mut(v);
            vec.tx_packets += 1;
            // the driver counts skb->len: the frame without its FCS
            vec.tx_bytes += u64::from(e.size_bytes.saturating_sub(4));
            if e.class == crate::host::busypoll::RESPONSE_CLASS {
                continue; // a response an app sent, not a received packet
            }
            self.metrics.on_transmitted(self.now, v, e.class);
        }
        self.driver_poll_step(c);
    }

    /// The driver's Rx clean loop: the next packet of the current ring while its budget
    /// allows, then the next ring.
    #[inline]
    pub(super) fn driver_poll_step(&mut self, c: usize) {
        if self.ring_order_step(c) {
            return;
        }
        let v = self.l.core_mut(c).kernel.polling as usize;
        let per_ring = self.poll_limit(c, self.l.vector(v).napi.ring_budget);
        let vec = &mut self.l.vector_mut(v);
        if let [ring] = vec.rings.as_mut_slice() {
            // one ring: its budget is the weight
            if vec.napi.ring_work < per_ring && ring.unprocessed() > 0 {
                let pkt = ring.take();
                self.start_packet(c, pkt);
            } else {
                if vec.napi.ring_work >= per_ring {
                    vec.napi.clean_complete = false;
                }
                vec.napi.ring = 1;
                self.driver_poll_done(c);
            }
            return;
        }
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

    /// The packets each ring may give this poll: its share of the poll's budget (`per_ring`:
    /// the weight's, or a busy poll's), or (2.6.18) no more than what is left of the
    /// `net_rx_action` budget.
    #[inline(always)]
    fn poll_limit(&self, c: usize, per_ring: u64) -> u64 {
        if self.s.kernel.poll_budget_left {
            per_ring.min(self.l.core(c).kernel.budget.max(1) as u64)
        } else {
            per_ring
        }
    }

    /// Protocol processing of `pkt` (and its transmit, if it is forwarded). (Always inlined:
    /// the extras' test would otherwise keep it out of line, a call per packet.)
    #[inline(always)]
    pub(super) fn start_packet(&mut self, c: usize, pkt: Packet) {
        let mut d = self.packet_cost(c, pkt);
        if self.packet_extras {
            d = d + self.poll_packet_extras(c);
        }
        self.start_softirq_job(c, d, Work::Packet);
    }

    /// The extra time of the next packet of the poll core `c` runs: its share of the poll's
    /// cold start (`platform.cold_packets`, by the packets the poll took before it), and the
    /// ring contention it meets as it starts (`busypoll::contention_on_start`).
    #[cold]
    #[inline(never)]
    fn poll_packet_extras(&mut self, c: usize) -> SimDuration {
        let v = self.l.core(c).kernel.polling as usize;
        let taken = self.l.vector(v).napi.work;
        let cold = SimDuration(self.s.platform.cold_ps(taken));
        cold + self.contention_on_start(c, v)
    }

    /// Protocol processing of `pkt` on core `c`, and its transmit if it is forwarded.
    #[inline(always)]
    pub(super) fn packet_cost(&mut self, c: usize, pkt: Packet) -> SimDuration {
        if let Some(d) = self.xsk_redirect_cost(pkt.flow) {
            return d;
        }
        let p = &self.s.platform;
        let (proto, per_byte) = (p.proto, p.proto_ps_per_byte);
        let mut d = plus_bytes(
            self.draw(c, proto, StreamId::ProtoCost),
            pkt.size_bytes,
            per_byte,
        );
        if !self.all_to_stack {
            d = d + self.tx_cost(c, pkt);
        }
        d
    }

    /// The cost of transmitting `pkt`, if it is forwarded.
    #[inline(never)]
    fn tx_cost(&mut self, c: usize, pkt: Packet) -> SimDuration {
        let tx = self.s.platform.tx;
        if !tx.is_zero() && self.sink_of(pkt.flow) == Sink::Tx {
            self.draw(c, tx, StreamId::TxCost)
        } else {
            SimDuration::ZERO
        }
    }

    /// Protocol processing of the packet in service on core `c` has ended.
    #[inline]
    pub(super) fn packet_done(&mut self, c: usize) {
        if !self.fused {
            self.packet_done_general(c);
            return;
        }
        // The common case, fused: one ring, every packet to the stack, visible at once; the
        // next packet of the ring starts at once if the budget allows. (The core was brought to now by the
        // completion.)
        let Host {
            now,
            l,
            metrics,
            tracer,
            s,
            ..
        } = self;
        let now = *now;
        let v = l.core(c).kernel.polling as usize;
        let (core, vec) = l.both(c, v);
        let ring = &mut vec.rings[0];
        let pkt = ring.release();
        vec.rx_packets += 1;
        // the driver counts skb->len: the frame without its FCS
        vec.rx_bytes += u64::from(pkt.size_bytes.saturating_sub(4));
        vec.napi.work += 1;
        vec.napi.ring_work += 1;
        metrics.on_polled_to_stack(now, v, pkt.class, pkt.arrival);
        tracer.delivered(pkt.id, pkt.arrival, now);
        let limit = if s.kernel.poll_budget_left {
            vec.napi.ring_budget.min(core.kernel.budget.max(1) as u64)
        } else {
            vec.napi.ring_budget
        };
        if vec.napi.ring_work < limit && ring.unprocessed() > 0 {
            let next = ring.take();
            let p = &s.platform;
            let d = plus_bytes(
                sample(&p.proto, &mut core.streams[StreamId::ProtoCost as usize]),
                next.size_bytes,
                p.proto_ps_per_byte,
            );
            let ctx = core.kernel.ctx.expect("inside handle_softirqs");
            core.cpu.start(ctx.level(), d, ctx.category(), Work::Packet);
            let t = core.cpu.next_completion_ps();
            self.cpu_changed(c, t);
            return;
        }
        self.driver_poll_step(c);
    }

    fn packet_done_general(&mut self, c: usize) {
        let v = self.l.core_mut(c).kernel.polling as usize;
        let vec = &mut self.l.vector_mut(v);
        let pkt = vec.rings[vec.napi.ring].release();
        vec.rx_packets += 1;
        // the driver counts skb->len: the frame without its FCS
        vec.rx_bytes += u64::from(pkt.size_bytes.saturating_sub(4));
        vec.napi.work += 1;
        vec.napi.ring_work += 1;
        if self.measuring() {
            self.metrics.vectors[v].polled_packets += 1;
        }
        let wake = self.deliver(c, v, pkt);
        if wake.is_zero() {
            self.driver_poll_step(c);
        } else {
            self.start_softirq_job(c, wake, Work::Wakeup);
        }
    }

    /// Protocol processing of `pkt` (from vector `v`, on core `c`) has ended: it goes to its
    /// socket, its Tx ring or the stack. Returns the cost of waking its app, if it woke one (charged to the
    /// caller's context).
    #[inline(always)]
    pub(super) fn deliver(&mut self, c: usize, v: usize, pkt: Packet) -> SimDuration {
        let now = self.now;
        if self.all_to_stack {
            self.metrics.on_stack(now, v, pkt.class, pkt.arrival);
            self.tracer.delivered(pkt.id, pkt.arrival, now);
            return SimDuration::ZERO;
        }
        self.deliver_to_sink(c, v, pkt)
    }

    #[inline(never)]
    fn deliver_to_sink(&mut self, c: usize, v: usize, pkt: Packet) -> SimDuration {
        let now = self.now;
        match self.sink_of(pkt.flow) {
            Sink::Stack => {
                self.metrics
                    .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::Stack);
                self.tracer.delivered(pkt.id, pkt.arrival, now);
            }
            Sink::App(a) => {
                if self.xsk_on_deliver(v, a as usize, pkt) {
                    return SimDuration::ZERO;
                }
                return self.socket_enqueue(c, v, a as usize, pkt);
            }
            Sink::Tx => {
                if self.l.vector_mut(v).tx.is_full() {
                    self.metrics
                        .on_ring_exit(now, v, pkt.class, pkt.arrival, RingExit::DroppedTx);
                } else {
                    let depart = self.wire.send(now, u32::from(pkt.size_bytes));
                    self.l.vector_mut(v).tx.push(TxEntry {
                        depart,
                        size_bytes: u32::from(pkt.size_bytes),
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
        let v = self.l.core_mut(c).kernel.polling as usize;
        self.xsk_on_poll_done(v);
        if self.busy_poll_done(c, v) {
            return;
        }
        let weight = self.s.kernel.napi_weight;
        let napi = &mut self.l.vector_mut(v).napi;
        let complete = napi.clean_complete;
        let work = napi.work;
        self.l.vector_mut(v).napi_ret = if complete {
            work.min(weight - 1)
        } else {
            weight
        };
        self.tracer
            .poll(c, v, self.now, work, self.l.vector_mut(v).napi_ret);
        self.metrics.on_poll_done(self.now, v, work);
        if complete && self.napi_thread_busy(v) {
            // `NAPI_STATE_IN_BUSY_POLL`: `napi_complete_done` returns false at once; the NAPI
            // stays scheduled, the IRQ masked, and its thread polls again (`napi_thread`)
            self.after_napi_poll(c);
            return;
        }
        if complete {
            let napi = &mut self.l.vector_mut(v).napi;
            napi.sched = false;
            napi.prefer = false;
            self.busy_on_napi_complete(v);
            if !self.napi_complete_done(v) {
                // software IRQ coalescing: the vector stays masked, a timer will poll again
                self.after_napi_poll(c);
                return;
            }
            self.moderate(v);
            if self.s.scheme.masks_on_irq() && !self.veth {
                if self.s.nic.cause_mode == CauseMode::Armed {
                    // re-arming discards what this poll handled; a Tx descriptor whose frame
                    // left during the poll was not cleaned, so it still signals
                    let now = self.now;
                    let vec = self.l.vector_mut(v);
                    vec.irq.clear();
                    if self.s.nic.tx_irq && vec.tx.done_by(now) > 0 {
                        vec.irq.raise_tx(now);
                    }
                    self.cause_cleared(v);
                }
                let cost = self.s.platform.unmask;
                if !cost.is_zero() {
                    let d = self.draw(c, cost, StreamId::UnmaskCost);
                    self.start_softirq_job(c, d, Work::Unmask);
                    return;
                }
                self.l.vector_mut(v).irq.masked = false;
                self.nic_check(v);
            }
        } else if !self.in_napi_thread(c) && !self.busy_prefer_handover(c, v) {
            // (unless a preferring busy poller waits and takes it over: `__napi_poll`; a NAPI
            // thread polls it again itself)
            self.l.core_mut(c).kernel.repoll.push_back(v as u16);
        }
        self.after_napi_poll(c);
    }

    pub(super) fn unmask_done(&mut self, c: usize) {
        let v = self.l.core_mut(c).kernel.polling as usize;
        self.l.vector_mut(v).irq.masked = false;
        self.nic_check(v);
        self.after_napi_poll(c);
    }

    /// The driver's moderation policy sees the completed session and may reprogram the NIC.
    #[inline]
    fn moderate(&mut self, v: usize) {
        if !matches!(
            self.l.vector_mut(v).policy,
            AnyPolicy::Off(_) | AnyPolicy::Static(_)
        ) {
            self.run_policy(v); // fixed settings never write
        }
    }

    fn run_policy(&mut self, v: usize) {
        let c = self.l.vector(v).core;
        let now = self.now;
        let (core, vec) = self.l.both(c, v);
        let sample = Sample {
            now,
            jiffies: core.kernel.jiffies(now),
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
