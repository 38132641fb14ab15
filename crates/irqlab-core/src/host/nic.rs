//! The NIC's behaviour (its state is in `crate::nic`: rings, interrupt line, Tx ring): an
//! arrival is DMA'd into the ring of its class on the vector RSS chose (`feed`) and raises the
//! vector's interrupt cause; the interrupt logic (ITR throttle, `rx-usecs` / `rx-frames`
//! coalescing, its moderation timer) decides when the vector interrupts its core, which
//! `irq` then handles; the driver's register writes reprogram it; a transmitted frame's
//! descriptor write-back raises the cause again.

use super::{Feed, Host, Layout, Routed, Timer};
use crate::moderation::Write;
use crate::nic::{IrqDecision, Packet};
use crate::scenario::Scheme;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    #[inline]
    pub(super) fn arrival(&mut self, a: Routed) {
        let id = self.next_id;
        self.next_id += 1;
        let Routed {
            flow,
            class,
            vector,
            ..
        } = a;
        let now = self.now;
        let Host {
            s,
            l,
            metrics,
            tracer,
            single_ring,
            ..
        } = self;
        let v = vector as usize;
        let c = l.vector(v).core;
        let (core, vec) = l.both(c, v);
        // one ring per vector (the common case) needs no lookup
        let r = if *single_ring {
            0
        } else {
            s.qos.class_ring[class as usize] as usize
        };
        let ring = &mut vec.rings[r];
        let accepted = !ring.is_full();
        if accepted {
            ring.push(Packet {
                arrival: now,
                // sizes are validated to at most 65535 bytes
                size_bytes: a.size_bytes as u16,
                flow,
                class,
                id,
            });
        }
        metrics.on_arrival(now, v, class, accepted, a.size_bytes);
        let spinner = vec.spinner;
        tracer.arrival(id, now, accepted);
        tracer.packet(id, a.size_bytes, flow, vector);
        tracer.class(id, class);
        if !s.platform.writeback.is_zero() && accepted {
            // the driver sees the packet when its descriptor is written back
            self.write_back_later(v, r);
            return;
        }
        if s.scheme == Scheme::Ideal {
            if accepted {
                let k = &mut core.kernel;
                k.napi_schedule(&mut vec.napi, v as u16);
                if k.softirq_pending && k.ctx.is_none() {
                    self.handle_softirqs(c, crate::kernel::SoftirqCtx::Inline);
                }
            }
        } else {
            // A drop raises the cause too (receiver overrun), so that a full ring under
            // normal interruption keeps interrupting: that is receive livelock.
            vec.irq.raise(now);
            // a masked line, or one whose ISR runs, decides nothing (NAPI's common case)
            if !vec.irq.held() {
                self.nic_check(v);
            }
        }
        self.busy_on_arrival(v, flow, accepted, spinner);
    }

    /// A packet was DMA'd into ring `r` of vector `v` now: the driver does not see it until
    /// its descriptor is written back, `platform.writeback_ns` later ([`Self::on_write_back`]).
    #[inline(never)]
    fn write_back_later(&mut self, v: usize, r: usize) {
        self.l.vector_mut(v).rings[r].hide_newest();
        let t = self.now + self.s.platform.writeback;
        self.push_timer(t, Timer::WriteBack(v as u16, r as u16));
    }

    /// The oldest descriptor not yet written back of ring `r` of vector `v` is written back:
    /// the driver sees its packet from now on, and it raises the cause (`ideal`: the NAPI is
    /// scheduled); a busy poller spinning on the vector sees it.
    pub(super) fn on_write_back(&mut self, v: usize, r: usize) {
        self.l.vector_mut(v).rings[r].write_back_oldest();
        if self.s.scheme == Scheme::Ideal {
            let c = self.l.vector(v).core;
            let (core, vec) = self.l.both(c, v);
            let k = &mut core.kernel;
            k.napi_schedule(&mut vec.napi, v as u16);
            if k.softirq_pending && k.ctx.is_none() {
                self.handle_softirqs(c, crate::kernel::SoftirqCtx::Inline);
            }
        } else {
            let vec = self.l.vector_mut(v);
            vec.irq.raise(self.now);
            if !vec.irq.held() {
                self.nic_check(v);
            }
        }
        let spinner = self.l.vector(v).spinner;
        self.busy_on_arrival(v, 0, true, spinner);
    }

    /// Asks vector `v`'s interrupt logic whether to issue an IRQ now, later, or not.
    #[inline]
    pub(super) fn nic_check(&mut self, v: usize) {
        let irq = &mut self.l.vector_mut(v).irq;
        match irq.decide(self.now) {
            IrqDecision::Idle => {}
            IrqDecision::Fire => self.issue_irq(v),
            IrqDecision::WaitUntil(t) => {
                if irq.timer_at != Some(t) {
                    irq.timer_at = Some(t);
                    self.push_timer(t, Timer::NicModeration(v as u16));
                }
            }
        }
    }

    /// Vector `v`'s moderation timer expires: the interrupt logic decides again.
    #[inline]
    pub(super) fn on_moderation_timer(&mut self, v: usize) {
        let irq = &mut self.l.vector_mut(v).irq;
        if irq.timer_at == Some(self.now) {
            irq.timer_at = None;
        }
        self.nic_check(v);
    }

    /// Vector `v` issues its IRQ (the throttle reloads; NAPI schemes mask the vector).
    fn issue_irq(&mut self, v: usize) {
        let vec = &mut self.l.vector_mut(v);
        vec.irq.issue(self.now, self.s.scheme.masks_on_irq());
        vec.irq_events += 1;
        let c = vec.core;
        let owned = vec.napi.in_busy_poll;
        if self.measuring() {
            self.metrics.vectors[v].irqs += 1;
            if owned {
                self.metrics.busy.irqs_while_owned += 1;
            }
        }
        let delay = self.s.platform.irq_delivery;
        if delay.is_zero() {
            self.do_irq(c, v);
        } else {
            // the interrupt is on its way (`platform.irq_delivery_ns`): the vector is
            // committed to it (in service), so arrivals meanwhile raise no second one
            self.push_timer(self.now + delay, Timer::IrqDelivered(v as u16));
        }
    }

    /// The driver programs new moderation into vector `v`'s interrupt logic.
    pub(crate) fn apply_moderation(&mut self, v: usize, write: Write) {
        let irq = &mut self.l.vector_mut(v).irq;
        match write {
            Write::Itr(itr) => irq.set_itr(itr),
            Write::Coalesce {
                usecs,
                frames,
                restart,
            } => irq.set_coalesce(usecs, frames, restart),
        }
    }

    // ----- Tx completions ----------------------------------------------------------------

    /// Whether Tx write-backs raise vector interrupts in this scenario.
    #[inline]
    fn tx_interrupts(&self) -> bool {
        self.s.nic.tx_irq && self.s.scheme != Scheme::Ideal
    }

    /// Vector `v`'s cause was cleared: packets that leave the wire from now on must raise it
    /// again, so the next departure is signalled.
    #[inline]
    pub(super) fn cause_cleared(&mut self, v: usize) {
        if !self.tx_interrupts() || self.l.vector_mut(v).tx.occupied() == 0 {
            return;
        }
        if let Some(d) = self.l.vector_mut(v).tx.next_departure_after(self.now) {
            self.arm_tx_signal(v, d);
        }
    }

    /// A packet queued on vector `v`'s Tx ring leaves at `depart`.
    #[inline]
    pub(super) fn tx_queued(&mut self, v: usize, depart: crate::time::SimTime) {
        if self.tx_interrupts() && !self.l.vector_mut(v).irq.cause {
            self.arm_tx_signal(v, depart);
        }
    }

    fn arm_tx_signal(&mut self, v: usize, at: crate::time::SimTime) {
        let vec = &mut self.l.vector_mut(v);
        if vec.tx_signal_at.is_some_and(|t| t <= at) {
            return;
        }
        vec.tx_signal_at = Some(at);
        self.push_timer(at, Timer::TxDone(v as u16));
    }

    /// A transmitted packet has left: its write-back raises the cause.
    pub(super) fn on_tx_done(&mut self, v: usize) {
        let vec = &mut self.l.vector_mut(v);
        if vec.tx_signal_at != Some(self.now) {
            return; // superseded
        }
        vec.tx_signal_at = None;
        vec.irq.raise_tx(self.now);
        self.nic_check(v);
    }
}
