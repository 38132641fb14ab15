//! The NIC side and the hard-IRQ level: an arrival is steered to its queue and ring, raises
//! its vector's interrupt cause, and the interrupt logic decides when to interrupt the
//! vector's core; the ISR, the polling timer's and the NAPI hrtimer's handlers run there one
//! at a time, the others waiting (packet IRQs first, in order).

use super::{Feed, Host, Layout, Routed, Timer, Work};
use crate::cpu::{Category, Level};
use crate::moderation::Write;
use crate::nic::{IrqDecision, Packet};
use crate::rng::StreamId;
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
        if self.apps_extended {
            self.arrival_seen(v, flow, accepted, spinner);
        }
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
        if self.is_busy(c, Level::HardIrq) {
            self.l.core_mut(c).pending_isr.push_back(v as u16);
        } else {
            self.start_isr(v);
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
        self.start(c, Level::HardIrq, d, Category::Irq, Work::Isr);
    }

    /// The ISR has run: it schedules the NAPI; `irq_exit` then runs softirqs. (Schemes with
    /// Salah's polling loop start a poll instead.)
    pub(super) fn isr_done(&mut self, c: usize) {
        let v = self.l.core_mut(c).hardirq as usize;
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

    /// Hard IRQ exit: pending softirqs run inline unless softirq processing is already in
    /// progress on this core (it will see them).
    #[inline]
    pub(super) fn irq_exit(&mut self, c: usize) {
        let k = &self.l.core_mut(c).kernel;
        if k.softirq_pending && k.ctx.is_none() {
            self.handle_softirqs(c, crate::kernel::SoftirqCtx::Inline);
        }
    }

    /// Starts the next waiting hard-IRQ job on core `c`, if the level is free: a packet ISR
    /// first, then a polling-timer, then a NAPI-timer interrupt.
    pub(super) fn next_hardirq(&mut self, c: usize) {
        if self.is_busy(c, Level::HardIrq) {
            return;
        }
        if let Some(v) = self.l.core_mut(c).pending_isr.pop_front() {
            self.start_isr(v as usize);
            return;
        }
        let l = &self.l;
        let core = l.core(c);
        if let Some(&v) = core
            .vectors
            .iter()
            .find(|&&v| l.vector(v as usize).pending_ticks > 0)
        {
            self.l.vector_mut(v as usize).pending_ticks -= 1;
            self.start_tick_handler(v as usize);
        } else if let Some(&v) = core
            .vectors
            .iter()
            .find(|&&v| l.vector(v as usize).napi.watchdog_pending)
        {
            self.l.vector_mut(v as usize).napi.watchdog_pending = false;
            self.start_watchdog(v as usize);
        }
    }

    /// `napi_schedule` of vector `v` on its core.
    #[inline]
    pub(super) fn napi_schedule(&mut self, v: usize) {
        let c = self.l.vector(v).core;
        let (core, vec) = self.l.both(c, v);
        if vec.napi.in_busy_poll {
            vec.napi.missed = true;
        }
        core.kernel.napi_schedule(&mut vec.napi, v as u16);
    }

    /// The NAPI hrtimer fires (`napi_watchdog`): its interrupt schedules the NAPI.
    pub(super) fn on_napi_watchdog(&mut self, v: usize) {
        let napi = &mut self.l.vector_mut(v).napi;
        if napi.watchdog_at != Some(self.now) {
            return; // stale
        }
        napi.watchdog_at = None;
        if self.is_busy(self.l.vector(v).core, Level::HardIrq) {
            self.l.vector_mut(v).napi.watchdog_pending = true;
        } else {
            self.start_watchdog(v);
        }
    }

    pub(super) fn start_watchdog(&mut self, v: usize) {
        let c = self.l.vector_mut(v).core;
        self.l.core_mut(c).hardirq = v as u16;
        let cost = self.s.platform.poll_timer;
        if cost.is_zero() {
            self.watchdog_done(c);
        } else {
            let d = self.draw(c, cost, StreamId::PollTimerCost);
            self.start(c, Level::HardIrq, d, Category::Irq, Work::NapiWatchdog);
        }
    }

    pub(super) fn watchdog_done(&mut self, c: usize) {
        let v = self.l.core_mut(c).hardirq as usize;
        if self.measuring() {
            self.metrics.vectors[v].timer_ticks += 1;
        }
        // `napi_watchdog`: an idle NAPI is scheduled and the prefer pledge revoked; an owned
        // one loses the expiry
        let napi = &mut self.l.vector_mut(v).napi;
        if napi.sched {
            if self.measuring() {
                self.metrics.busy.watchdog_lost += 1;
            }
        } else {
            napi.prefer = false;
        }
        self.napi_schedule(v);
        self.next_hardirq(c);
        self.irq_exit(c);
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
