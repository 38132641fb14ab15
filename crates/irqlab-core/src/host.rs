//! The host model's behaviour: how an arrival becomes an interrupt, a softirq, a NAPI poll and
//! protocol processing on the CPU. Every transition here happens at one instant; time passes
//! only inside CPU jobs (tagged with a [`Work`]) and until timers fire.
//!
//! Scheme by scheme:
//! - `ideal`: an accepted arrival schedules the NAPI and runs softirqs inline, for free.
//! - `irq`: the NIC raises an IRQ per arrival (cause bit semantics, `nic`); the ISR schedules
//!   the NAPI without masking the vector, so ISRs keep preempting protocol processing.
//! - `coalesce-count`, `coalesce-time`: as `irq`; the NIC coalesces (`nic.rx_frames`,
//!   `nic.rx_usecs`).
//! - `napi`: the IRQ auto-masks the vector; the poll re-enables it when it completes.
//! - `disable-enable`, `poll`, `napi-poll`, `hybrid`: the same NIC and CPU, with protocol
//!   processing in Salah's polling loop (`polling`).

use crate::cpu::{Category, Level};
use crate::dist::{round_ps, sample};
use crate::engine::{PRIO_TIMER, Sim, Tracer};
use crate::kernel::{Ksoftirqd, SoftirqCtx};
use crate::moderation::{Policy, Sample, Write};
use crate::nic::{IrqDecision, Packet};
use crate::polling::LoopMode;
use crate::rng::StreamId;
use crate::scenario::{CauseMode, Cost, Scheme};
use crate::time::SimDuration;
use crate::traffic::Arrival;

/// What a CPU job is doing; its completion continues the corresponding step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// The NIC's hard interrupt handler (entry, ISR, exit; masking for NAPI).
    Isr,
    /// Entry overhead of a `net_rx_action` run.
    NetRxEntry,
    /// Entry overhead of one call of the driver's poll function.
    PollEntry,
    /// Protocol processing of the packet at the head of the ring.
    Packet,
    /// Re-enabling the vector after `napi_complete_done`.
    Unmask,
    /// The context switch into ksoftirqd.
    KsoftirqdSwitch,
    /// The polling timer's interrupt handler (`polling`).
    PollTimer,
    /// Protocol processing of one packet in Salah's polling loop (`polling`).
    LoopPacket,
    /// Re-enabling packet interrupts at the end of the polling loop (`polling`).
    LoopUnmask,
    /// The NAPI hrtimer's interrupt (software IRQ coalescing).
    NapiWatchdog,
}

/// Timers in the event queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The NIC's moderation timer (ITR throttle or absolute timeout) expires.
    NicModeration,
    /// The periodic polling timer (`polling`).
    PollTick,
    /// The hybrid scheme's throughput measurement window ends (`polling`).
    HybridWindow,
    /// The NAPI hrtimer of software IRQ coalescing (`gro_flush_timeout`).
    NapiWatchdog,
}

impl<T: Tracer> Sim<'_, T> {
    #[inline]
    pub(crate) fn measuring(&self) -> bool {
        self.metrics.measuring(self.now)
    }

    #[inline]
    fn draw(&mut self, cost: Cost, stream: StreamId) -> SimDuration {
        sample(&cost, &mut self.streams[stream as usize])
    }

    // ----- NIC ---------------------------------------------------------------------------

    pub(crate) fn on_arrival(&mut self, a: Arrival) {
        let id = self.next_id;
        self.next_id += 1;
        let accepted = !self.ring.is_full();
        self.metrics.on_arrival(self.now, accepted);
        self.tracer.arrival(id, self.now, accepted);
        if accepted {
            self.ring.push(Packet {
                arrival: self.now,
                size_bytes: a.size_bytes,
                id,
            });
        }
        match self.s.scheme {
            Scheme::Ideal => {
                if accepted {
                    self.kernel.napi_schedule();
                    self.irq_exit();
                }
            }
            _ => {
                // A drop raises the cause too (receiver overrun), so that a full ring under
                // normal interruption keeps interrupting: that is receive livelock.
                self.irq.raise(self.now);
                self.nic_check();
            }
        }
    }

    /// Asks the interrupt logic whether to issue an IRQ now, later, or not.
    pub(crate) fn nic_check(&mut self) {
        match self.irq.decide(self.now) {
            IrqDecision::Idle => {}
            IrqDecision::Fire => self.issue_irq(),
            IrqDecision::WaitUntil(t) => {
                if self.irq.timer_at != Some(t) {
                    self.timers.push(t, PRIO_TIMER, Timer::NicModeration);
                    self.irq.timer_at = Some(t);
                }
            }
        }
    }

    pub(crate) fn on_timer(&mut self, timer: Timer) {
        match timer {
            Timer::NicModeration => {
                if self.irq.timer_at == Some(self.now) {
                    self.irq.timer_at = None;
                }
                self.nic_check();
            }
            Timer::PollTick => self.on_poll_tick(),
            Timer::HybridWindow => self.on_hybrid_window(),
            Timer::NapiWatchdog => self.on_napi_watchdog(),
        }
    }

    fn issue_irq(&mut self) {
        self.irq.issue(self.now, self.s.scheme.masks_on_irq());
        self.irq_events += 1;
        if self.measuring() {
            self.metrics.irqs += 1;
        }
        if self.cpu.is_busy(Level::HardIrq) {
            self.pending_hardirqs += 1;
        } else {
            self.start_isr();
        }
    }

    pub(crate) fn start_isr(&mut self) {
        let s = self.s;
        let d = if s.first_packet_in_isr
            && s.scheme.uses_poll_loop()
            && self.poll_loop.mode == LoopMode::DisableEnable
            && !self.poll_loop.running
            && self.ring.unprocessed() > 0
        {
            self.isr_with_first_packet()
        } else {
            let p = &s.platform;
            let mut d = self.draw(p.irq, StreamId::IrqCost);
            if s.scheme.masks_on_irq() && !p.mask.is_zero() {
                d = d + self.draw(p.mask, StreamId::MaskCost);
            }
            d
        };
        self.cpu.start(Level::HardIrq, d, Category::Irq, Work::Isr);
    }

    // ----- CPU job completions -----------------------------------------------------------

    pub(crate) fn on_work_done(&mut self, work: Work) {
        match work {
            Work::Isr => self.isr_done(),
            Work::NetRxEntry => self.net_rx_start(),
            Work::PollEntry => self.driver_poll_step(),
            Work::Packet => self.packet_done(),
            Work::Unmask => {
                self.irq.masked = false;
                self.nic_check();
                self.after_napi_poll();
            }
            Work::KsoftirqdSwitch => {
                self.kernel.ksoftirqd = Ksoftirqd::Running;
                self.ksoftirqd_loop();
            }
            Work::PollTimer => self.tick_done(),
            Work::NapiWatchdog => self.watchdog_done(),
            Work::LoopPacket => self.loop_packet_done(),
            Work::LoopUnmask => self.loop_unmask_done(),
        }
    }

    /// The ISR has run: it schedules the NAPI; `irq_exit` then runs softirqs. (Schemes with
    /// Salah's polling loop start a poll instead.)
    fn isr_done(&mut self) {
        self.irq.isr_done();
        if self.s.scheme.uses_poll_loop() {
            self.poll_loop_isr_done();
            self.next_hardirq();
        } else {
            self.kernel.napi_schedule();
            self.next_hardirq();
            self.irq_exit();
        }
        self.nic_check();
    }

    /// Hard IRQ exit: pending softirqs run inline unless softirq processing is already in
    /// progress on this CPU (it will see them).
    fn irq_exit(&mut self) {
        if self.kernel.softirq_pending && self.kernel.ctx.is_none() {
            self.handle_softirqs(SoftirqCtx::Inline);
        }
    }

    // ----- softirq -----------------------------------------------------------------------

    fn ctx(&self) -> SoftirqCtx {
        self.kernel.ctx.expect("inside handle_softirqs")
    }

    fn start_softirq_job(&mut self, d: SimDuration, work: Work) {
        let ctx = self.ctx();
        self.cpu.start(ctx.level(), d, ctx.category(), work);
    }

    fn handle_softirqs(&mut self, ctx: SoftirqCtx) {
        debug_assert!(self.kernel.ctx.is_none());
        self.kernel.ctx = Some(ctx);
        self.kernel.restart_end = self.kernel.jiffies(self.now) + self.s.kernel.max_softirq_jiffies;
        self.kernel.restarts_left = self.s.kernel.max_softirq_restart;
        self.softirq_pass();
    }

    fn softirq_pass(&mut self) {
        self.kernel.softirq_pending = false;
        if self.measuring() {
            self.metrics.softirq_runs += 1;
        }
        self.kernel.budget = self.s.kernel.netdev_budget;
        self.kernel.time_limit = self.kernel.jiffies(self.now) + self.s.kernel.budget_jiffies;
        let cost = self.s.platform.softirq;
        if cost.is_zero() {
            self.net_rx_start();
        } else {
            let d = self.draw(cost, StreamId::SoftirqCost);
            self.start_softirq_job(d, Work::NetRxEntry);
        }
    }

    /// `net_rx_action`'s `start:` label: take the poll list.
    fn net_rx_start(&mut self) {
        self.kernel.in_net_rx_action = true;
        let napi = &mut self.kernel.napi;
        napi.on_local_list |= napi.on_poll_list;
        napi.on_poll_list = false;
        self.net_rx_loop();
    }

    /// `net_rx_action`'s loop head.
    fn net_rx_loop(&mut self) {
        if self.kernel.napi.on_local_list {
            self.kernel.napi.on_local_list = false;
            self.napi_poll();
            return;
        }
        if !self.kernel.napi.on_repoll {
            self.kernel.in_net_rx_action = false;
            if self.kernel.napi.on_poll_list {
                self.net_rx_start();
            } else {
                self.softirq_pass_done();
            }
            return;
        }
        self.net_rx_finish();
    }

    /// After the loop broke: unfinished work goes back on the poll list, softirq re-raised.
    fn net_rx_finish(&mut self) {
        let napi = &mut self.kernel.napi;
        if napi.on_local_list || napi.on_repoll {
            napi.on_poll_list = true;
        }
        napi.on_local_list = false;
        napi.on_repoll = false;
        if napi.on_poll_list {
            self.kernel.softirq_pending = true;
        } else {
            self.kernel.in_net_rx_action = false;
        }
        self.softirq_pass_done();
    }

    /// `napi_poll`: call the driver's poll function with the NAPI weight.
    fn napi_poll(&mut self) {
        if self.measuring() {
            self.metrics.polls += 1;
        }
        self.kernel.napi.work = 0;
        let cost = self.s.platform.poll;
        if cost.is_zero() {
            self.driver_poll_step();
        } else {
            let d = self.draw(cost, StreamId::PollCost);
            self.start_softirq_job(d, Work::PollEntry);
        }
    }

    /// The driver's Rx clean loop: take the next packet while the weight allows.
    fn driver_poll_step(&mut self) {
        if self.kernel.napi.work < self.s.kernel.napi_weight && self.ring.unprocessed() > 0 {
            let pkt = self.ring.take();
            let p = &self.s.platform;
            let (proto, per_byte) = (p.proto, p.proto_ps_per_byte);
            let mut d = self.draw(proto, StreamId::ProtoCost);
            if per_byte > 0.0 {
                d = d + SimDuration(round_ps(pkt.size_bytes as f64 * per_byte));
            }
            self.start_softirq_job(d, Work::Packet);
        } else {
            self.driver_poll_done();
        }
    }

    fn packet_done(&mut self) {
        let pkt = self.ring.release();
        self.cleaned_packets += 1;
        // the driver counts skb->len: the frame without its FCS
        self.cleaned_bytes += u64::from(pkt.size_bytes.saturating_sub(4));
        self.metrics.on_delivery(self.now, pkt.arrival);
        if self.measuring() {
            self.metrics.polled_packets += 1;
        }
        self.tracer.delivered(pkt.id, pkt.arrival, self.now);
        self.kernel.napi.work += 1;
        self.driver_poll_step();
    }

    /// The poll function returns. Less than the weight done: the ring is empty, so
    /// `napi_complete_done` and (NAPI) re-enable the vector. The whole weight used: the NAPI
    /// stays scheduled and goes to the repoll list (even if the ring happens to be empty).
    fn driver_poll_done(&mut self) {
        if self.kernel.napi.work < self.s.kernel.napi_weight {
            self.kernel.napi.sched = false;
            if !self.napi_complete_done() {
                // software IRQ coalescing: the vector stays masked, a timer will poll again
                self.after_napi_poll();
                return;
            }
            self.moderate();
            if self.s.scheme.masks_on_irq() {
                if self.s.nic.cause_mode == CauseMode::Armed {
                    self.irq.clear();
                }
                let cost = self.s.platform.unmask;
                if !cost.is_zero() {
                    let d = self.draw(cost, StreamId::UnmaskCost);
                    self.start_softirq_job(d, Work::Unmask);
                    return;
                }
                self.irq.masked = false;
                self.nic_check();
            }
        } else {
            self.kernel.napi.on_repoll = true;
        }
        self.after_napi_poll();
    }

    /// `napi_complete_done`'s answer to the driver: re-enable the vector (true), or not,
    /// because `napi_defer_hard_irqs` and `gro_flush_timeout` defer it (reference §7.2): a
    /// poll that found packets reloads the counter; each completion while the counter is
    /// above zero decrements it and arms the timer instead.
    fn napi_complete_done(&mut self) -> bool {
        let k = &self.s.kernel;
        if k.defer_hard_irqs == 0 || k.gro_flush_timeout.is_zero() {
            return true;
        }
        if self.kernel.napi.work > 0 {
            self.kernel.defer_count = k.defer_hard_irqs;
        }
        if self.kernel.defer_count == 0 {
            return true;
        }
        self.kernel.defer_count -= 1;
        let t = self.now + k.gro_flush_timeout;
        self.kernel.watchdog_at = Some(t);
        self.timers.push(t, PRIO_TIMER, Timer::NapiWatchdog);
        false
    }

    /// The driver's moderation policy sees the completed session and may reprogram the NIC.
    fn moderate(&mut self) {
        let sample = Sample {
            now: self.now,
            jiffies: self.kernel.jiffies(self.now),
            packets: self.cleaned_packets,
            bytes: self.cleaned_bytes,
            events: self.irq_events,
        };
        if let Some(write) = self.policy.on_complete(&sample) {
            self.apply_moderation(write);
            if self.measuring() {
                self.metrics.moderation_writes += 1;
            }
        }
    }

    pub(crate) fn apply_moderation(&mut self, write: Write) {
        match write {
            Write::Itr(itr) => self.irq.set_itr(itr),
            Write::Coalesce {
                usecs,
                frames,
                restart,
            } => self.irq.set_coalesce(usecs, frames, restart),
        }
    }

    /// The NAPI hrtimer fires (`napi_watchdog`): its interrupt schedules the NAPI.
    fn on_napi_watchdog(&mut self) {
        if self.kernel.watchdog_at != Some(self.now) {
            return; // stale
        }
        self.kernel.watchdog_at = None;
        if self.cpu.is_busy(Level::HardIrq) {
            self.kernel.watchdog_pending = true;
        } else {
            self.start_watchdog();
        }
    }

    pub(crate) fn start_watchdog(&mut self) {
        let cost = self.s.platform.poll_timer;
        if cost.is_zero() {
            self.watchdog_done();
        } else {
            let d = self.draw(cost, StreamId::PollTimerCost);
            self.cpu
                .start(Level::HardIrq, d, Category::Irq, Work::NapiWatchdog);
        }
    }

    fn watchdog_done(&mut self) {
        if self.measuring() {
            self.metrics.timer_ticks += 1;
        }
        self.kernel.napi_schedule();
        self.next_hardirq();
        self.irq_exit();
    }

    /// Back in `net_rx_action` after one `napi_poll`.
    fn after_napi_poll(&mut self) {
        self.kernel.budget -= self.kernel.napi.work as i64;
        if self.kernel.budget <= 0 || self.kernel.jiffies(self.now) >= self.kernel.time_limit {
            if self.measuring() {
                self.metrics.time_squeeze += 1;
            }
            self.net_rx_finish();
        } else {
            self.net_rx_loop();
        }
    }

    /// `net_rx_action` returned to `handle_softirqs`: restart, hand off, or finish.
    fn softirq_pass_done(&mut self) {
        if self.kernel.softirq_pending {
            if self.kernel.jiffies(self.now) < self.kernel.restart_end {
                self.kernel.restarts_left -= 1;
                if self.kernel.restarts_left > 0 {
                    self.softirq_pass();
                    return;
                }
            }
            self.wakeup_softirqd();
        }
        let ctx = self.kernel.ctx.take();
        if ctx == Some(SoftirqCtx::Ksoftirqd) {
            self.ksoftirqd_loop();
        }
    }

    fn wakeup_softirqd(&mut self) {
        if self.kernel.ksoftirqd != Ksoftirqd::Sleeping {
            return;
        }
        self.kernel.ksoftirqd = Ksoftirqd::Switching;
        if self.measuring() {
            self.metrics.ksoftirqd_wakeups += 1;
        }
        let cost = self.s.platform.ctx_switch;
        let d = if cost.is_zero() {
            SimDuration::ZERO
        } else {
            self.draw(cost, StreamId::CtxSwitchCost)
        };
        self.cpu
            .start(Level::Thread, d, Category::Ksoftirqd, Work::KsoftirqdSwitch);
    }

    /// ksoftirqd's thread loop: handle softirqs while any are pending, else sleep.
    fn ksoftirqd_loop(&mut self) {
        debug_assert_eq!(self.kernel.ksoftirqd, Ksoftirqd::Running);
        if self.kernel.softirq_pending && self.kernel.ctx.is_none() {
            self.handle_softirqs(SoftirqCtx::Ksoftirqd);
        } else {
            self.kernel.ksoftirqd = Ksoftirqd::Sleeping;
        }
    }
}
