//! The hard-IRQ level of each core (`do_IRQ`, `irq_exit`). One handler runs there at a time:
//! the ISR of a packet IRQ (`driver`), the polling timer's (`polling`) or the NAPI hrtimer's
//! (`kernel`); the others wait, packet IRQs first and in order, then polling-timer ticks, then
//! NAPI-timer expiries. A handler's exit runs the pending softirqs (`kernel`).
//!
//! State: `Core::pending_isr` (packet IRQs waiting), `Core::hardirq` (the vector whose handler
//! runs), `Vector::pending_ticks` and `Napi::watchdog_pending` (timer interrupts waiting).

use super::{Feed, Host, Layout, Work};
use crate::cpu::{Category, Level};
use crate::kernel::SoftirqCtx;
use crate::rng::StreamId;
use crate::trace::Tracer;

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// `do_IRQ` of vector `v`'s packet IRQ on core `c`: its ISR runs now if the hard-IRQ level
    /// is free, else it waits its turn.
    #[inline]
    pub(super) fn do_irq(&mut self, c: usize, v: usize) {
        if self.is_busy(c, Level::HardIrq) {
            self.l.core_mut(c).pending_isr.push_back(v as u16);
        } else {
            self.start_isr(v);
        }
    }

    /// Vector `v`'s interrupt reaches its core after its delivery delay: `do_IRQ`.
    pub(super) fn on_irq_delivered(&mut self, v: usize) {
        let c = self.l.vector(v).core;
        self.do_irq(c, v);
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
            self.start_timer_handler(v as usize, Work::PollTimer);
        } else if let Some(&v) = core
            .vectors
            .iter()
            .find(|&&v| l.vector(v as usize).napi.watchdog_pending)
        {
            self.l.vector_mut(v as usize).napi.watchdog_pending = false;
            self.start_timer_handler(v as usize, Work::NapiWatchdog);
        }
    }

    /// Starts the handler of vector `v`'s timer interrupt on its core's hard-IRQ level: the
    /// polling timer's ([`Work::PollTimer`]) or the NAPI hrtimer's ([`Work::NapiWatchdog`]),
    /// each costing `platform.poll_timer_ns`; a zero cost takes no time: it runs at once.
    /// (Inlined, so that each call's `handler` is a constant and its continuation a call.)
    #[inline(always)]
    pub(super) fn start_timer_handler(&mut self, v: usize, handler: Work) {
        let c = self.l.vector_mut(v).core;
        self.l.core_mut(c).hardirq = v as u16;
        let cost = self.s.platform.poll_timer;
        if cost.is_zero() {
            self.work_done(c, handler);
        } else {
            let d = self.draw(c, cost, StreamId::PollTimerCost);
            self.start(c, Level::HardIrq, d, Category::Irq, handler);
        }
    }

    /// A hard-IRQ handler on core `c` has ended: the work that runs now on the core pays the
    /// indirect cost of the interrupt (`platform.irq_indirect_ns`; `crate::cpu`). First thing
    /// in each handler's continuation, before any job starts.
    #[inline(always)]
    pub(super) fn hardirq_done(&mut self, c: usize) {
        if !self.s.platform.irq_indirect.is_zero() {
            let cpu = &mut self.l.core_mut(c).cpu;
            cpu.irq_done();
            let t = cpu.next_completion_ps();
            self.cpu_changed(c, t);
        }
    }

    /// Hard IRQ exit: pending softirqs run inline unless softirq processing is already in
    /// progress on this core (it will see them).
    #[inline]
    pub(super) fn irq_exit(&mut self, c: usize) {
        let k = &self.l.core_mut(c).kernel;
        if k.softirq_pending && k.ctx.is_none() {
            self.handle_softirqs(c, SoftirqCtx::Inline);
        }
    }
}
