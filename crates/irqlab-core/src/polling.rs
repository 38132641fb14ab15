//! Salah et al. (2007)'s protocol-processing loop, shared by `disable-enable`, `poll`,
//! `napi-poll` and `hybrid` (Figs. 3 and 4). Linux NAPI (`napi`) lives in `host` and `kernel`.
//!
//! The loop ("IP processing") runs at softirq priority and processes up to a quota of packets
//! per poll; interrupts (the NIC's, and the polling timer's) preempt it:
//!
//! - **Polling timer** (`poll`, `napi-poll`, hybrid when polling): a hardware timer interrupts
//!   every `T_poll` (deterministic), costing `platform.poll_timer_ns` at hard-IRQ priority
//!   (Salah's `T_PollOH`). Its handler sets `Poll_Mode` and starts a poll unless one is
//!   running; a tick during a running poll costs its overhead and only sets the flag, so the
//!   poll, when its quota is done, starts another at once (Fig. 3, step 3).
//! - **A poll** clears `Poll_Mode` and processes up to `Q = poll.quota` packets, or until the
//!   ring is empty.
//! - `poll`: packet interrupts are never enabled; polls come only from the timer.
//! - `napi-poll` (Fig. 4): a packet IRQ disables packet interrupts, enables the polling timer
//!   (first tick `T_poll` later) and starts a poll at once; a poll that leaves the ring empty
//!   disables the timer and re-enables packet interrupts.
//! - `disable-enable` (§3.3): a packet IRQ disables packet interrupts and starts an
//!   exhaustive poll (no quota); when the ring is empty, interrupts are re-enabled. With
//!   `driver.first_packet = "isr"` the ISR itself processes the first packet of the busy
//!   period, one cost of mean `irq + mask + proto` (Salah's `1/v`), as the Markov chain of
//!   Fig. 2 assumes.
//! - `hybrid` (§5.3): disable-enable while the throughput measured over each
//!   `hybrid.window_us` is below `hybrid.switch_pps`, pure polling from there until it falls
//!   below `(1 − hybrid.hysteresis)` times it.

use crate::cpu::{Category, Level};
use crate::dist::{round_ps, sample};
use crate::engine::{PRIO_TIMER, Sim, Tracer};
use crate::host::{Timer, Work};
use crate::rng::StreamId;
use crate::scenario::{CauseMode, Scheme};
use crate::time::{SimDuration, SimTime};

/// What the loop is doing with packet interrupts and the polling timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopMode {
    /// Interrupts drive exhaustive polls.
    DisableEnable,
    /// The timer drives polls of up to Q; packet interrupts stay disabled.
    Polling,
    /// A packet interrupt starts timer-driven polls until the ring is empty.
    NapiPoll,
}

/// State of the loop.
#[derive(Debug)]
pub struct PollLoop {
    pub mode: LoopMode,
    /// Salah's `Poll_Mode` flag.
    pub poll_mode: bool,
    /// A poll is in progress.
    pub running: bool,
    /// Packets the current poll may still take.
    pub left: u64,
    /// When the polling timer fires next, if it is enabled.
    pub next_tick: Option<SimTime>,
    /// Timer interrupts waiting for the hard-IRQ level.
    pub pending_ticks: u32,
    /// Packets delivered since the hybrid's last measurement.
    pub window_delivered: u64,
    /// The ISR holds the head packet (first packet processed in the ISR).
    pub isr_packet: bool,
}

impl PollLoop {
    pub fn new(scheme: Scheme) -> PollLoop {
        let mode = match scheme {
            Scheme::Poll => LoopMode::Polling,
            Scheme::NapiPoll => LoopMode::NapiPoll,
            _ => LoopMode::DisableEnable,
        };
        PollLoop {
            mode,
            poll_mode: false,
            running: false,
            left: 0,
            next_tick: None,
            pending_ticks: 0,
            window_delivered: 0,
            isr_packet: false,
        }
    }
}

impl<T: Tracer> Sim<'_, T> {
    /// Sets the loop up at time zero.
    pub(crate) fn poll_loop_start(&mut self) {
        match self.s.scheme {
            Scheme::Poll => {
                self.irq.masked = true;
                self.enable_poll_timer();
            }
            Scheme::Hybrid => {
                self.timers.push(
                    self.now + self.s.hybrid.window,
                    PRIO_TIMER,
                    Timer::HybridWindow,
                );
            }
            _ => {}
        }
    }

    fn enable_poll_timer(&mut self) {
        let t = self.now + self.s.poll.period;
        self.poll_loop.next_tick = Some(t);
        self.timers.push(t, PRIO_TIMER, Timer::PollTick);
    }

    /// The polling timer fires (stale events of a disabled timer are ignored).
    pub(crate) fn on_poll_tick(&mut self) {
        if self.poll_loop.next_tick != Some(self.now) {
            return;
        }
        self.enable_poll_timer();
        if self.measuring() {
            self.metrics.timer_ticks += 1;
        }
        if self.cpu.is_busy(Level::HardIrq) {
            self.poll_loop.pending_ticks += 1;
        } else {
            self.start_tick_handler();
        }
    }

    fn start_tick_handler(&mut self) {
        let cost = self.s.platform.poll_timer;
        if cost.is_zero() {
            self.tick_done();
        } else {
            let d = sample(&cost, &mut self.streams[StreamId::PollTimerCost as usize]);
            self.cpu
                .start(Level::HardIrq, d, Category::Irq, Work::PollTimer);
        }
    }

    /// The timer's handler has run: `Poll_Mode` on, and a poll unless one is running.
    pub(crate) fn tick_done(&mut self) {
        self.poll_loop.poll_mode = true;
        if !self.poll_loop.running {
            self.poll_start();
        }
        self.next_hardirq();
    }

    /// Starts the next waiting hard-IRQ job, if the level is free: a packet ISR first, then a
    /// polling-timer or NAPI-timer interrupt.
    pub(crate) fn next_hardirq(&mut self) {
        if self.cpu.is_busy(Level::HardIrq) {
            return;
        }
        if self.pending_hardirqs > 0 {
            self.pending_hardirqs -= 1;
            self.start_isr();
        } else if self.poll_loop.pending_ticks > 0 {
            self.poll_loop.pending_ticks -= 1;
            self.start_tick_handler();
        } else if self.kernel.watchdog_pending {
            self.kernel.watchdog_pending = false;
            self.start_watchdog();
        }
    }

    /// The cost of an ISR that also processes the first packet of a busy period (`1/v`):
    /// one draw of mean `irq + mask + proto`, distributed like `proto`, plus the per-byte part.
    pub(crate) fn isr_with_first_packet(&mut self) -> SimDuration {
        let pkt = self.ring.take();
        self.poll_loop.isr_packet = true;
        let p = &self.s.platform;
        let mut cost = p.proto;
        cost.mean = p.irq.mean + p.mask.mean + p.proto.mean;
        cost.mean_ps = cost.mean.ps() as f64;
        let per_byte = p.proto_ps_per_byte;
        let mut d = sample(&cost, &mut self.streams[StreamId::FirstPacketCost as usize]);
        if per_byte > 0.0 {
            d = d + SimDuration(round_ps(pkt.size_bytes as f64 * per_byte));
        }
        d
    }

    /// A packet ISR has run (the vector is disabled): deliver the packet it processed, if
    /// any, then poll.
    pub(crate) fn poll_loop_isr_done(&mut self) {
        if self.poll_loop.isr_packet {
            self.poll_loop.isr_packet = false;
            self.deliver_head();
        }
        match self.poll_loop.mode {
            LoopMode::DisableEnable => {}
            LoopMode::NapiPoll => {
                self.enable_poll_timer();
                self.poll_loop.poll_mode = true;
            }
            LoopMode::Polling => self.poll_loop.poll_mode = true,
        }
        if !self.poll_loop.running {
            self.poll_start();
        }
    }

    /// Releases the packet in service and records its delivery.
    fn deliver_head(&mut self) {
        let pkt = self.ring.release();
        self.metrics.on_delivery(self.now, pkt.arrival);
        self.tracer.delivered(pkt.id, pkt.arrival, self.now);
        self.poll_loop.window_delivered += 1;
    }

    fn quota(&self) -> u64 {
        match self.poll_loop.mode {
            LoopMode::DisableEnable => u64::MAX,
            _ => self.s.poll.quota,
        }
    }

    /// A poll: `Poll_Mode` off, then up to the quota.
    pub(crate) fn poll_start(&mut self) {
        let quota = self.quota();
        let l = &mut self.poll_loop;
        l.running = true;
        l.poll_mode = false;
        l.left = quota;
        if self.measuring() {
            self.metrics.polls += 1;
        }
        self.poll_step();
    }

    fn poll_step(&mut self) {
        if self.poll_loop.left > 0 && self.ring.unprocessed() > 0 {
            self.poll_loop.left -= 1;
            let pkt = self.ring.take();
            let p = &self.s.platform;
            let (proto, per_byte) = (p.proto, p.proto_ps_per_byte);
            let mut d = sample(&proto, &mut self.streams[StreamId::ProtoCost as usize]);
            if per_byte > 0.0 {
                d = d + SimDuration(round_ps(pkt.size_bytes as f64 * per_byte));
            }
            self.cpu
                .start(Level::SoftIrq, d, Category::Softirq, Work::LoopPacket);
        } else {
            self.poll_end();
        }
    }

    pub(crate) fn loop_packet_done(&mut self) {
        self.deliver_head();
        if self.measuring() {
            self.metrics.polled_packets += 1;
        }
        self.poll_step();
    }

    /// The poll is done: another if the timer fired meanwhile, else by mode.
    fn poll_end(&mut self) {
        if self.poll_loop.poll_mode {
            self.poll_start();
            return;
        }
        let empty = self.ring.unprocessed() == 0;
        match self.poll_loop.mode {
            LoopMode::Polling => self.poll_loop.running = false,
            LoopMode::DisableEnable | LoopMode::NapiPoll if empty => {
                self.poll_loop.next_tick = None;
                self.reenable_packet_irqs();
            }
            LoopMode::DisableEnable => self.poll_start(),
            LoopMode::NapiPoll => self.poll_loop.running = false,
        }
    }

    /// The ring is empty: packet interrupts on again (armed: only new packets interrupt).
    /// The poll ends when the register write is done.
    fn reenable_packet_irqs(&mut self) {
        if self.s.nic.cause_mode == CauseMode::Armed {
            self.irq.clear();
        }
        let cost = self.s.platform.unmask;
        if cost.is_zero() {
            self.loop_unmask_done();
        } else {
            self.poll_loop.running = true;
            let d = sample(&cost, &mut self.streams[StreamId::UnmaskCost as usize]);
            self.cpu
                .start(Level::SoftIrq, d, Category::Softirq, Work::LoopUnmask);
        }
    }

    pub(crate) fn loop_unmask_done(&mut self) {
        self.poll_loop.running = false;
        if self.poll_loop.mode != LoopMode::Polling {
            self.irq.masked = false;
            self.nic_check();
        } else if self.poll_loop.poll_mode {
            // a hybrid switched to polling during the register write, and the timer fired
            self.poll_start();
        }
    }

    /// The hybrid measures its throughput and switches if it crossed the threshold.
    pub(crate) fn on_hybrid_window(&mut self) {
        let h = &self.s.hybrid;
        self.timers
            .push(self.now + h.window, PRIO_TIMER, Timer::HybridWindow);
        let pps = self.poll_loop.window_delivered as f64 / h.window.as_secs_f64();
        self.poll_loop.window_delivered = 0;
        match self.poll_loop.mode {
            LoopMode::DisableEnable if pps >= h.switch_pps => {
                self.poll_loop.mode = LoopMode::Polling;
                self.irq.masked = true;
                self.poll_loop.left = self.poll_loop.left.min(self.s.poll.quota);
                self.enable_poll_timer();
                self.count_switch();
            }
            LoopMode::Polling if pps < (1.0 - h.hysteresis) * h.switch_pps => {
                self.poll_loop.mode = LoopMode::DisableEnable;
                self.poll_loop.next_tick = None;
                self.poll_loop.left = u64::MAX;
                if !self.poll_loop.running {
                    if self.ring.unprocessed() == 0 {
                        self.reenable_packet_irqs();
                    } else {
                        self.poll_start();
                    }
                }
                self.count_switch();
            }
            _ => {}
        }
    }

    fn count_switch(&mut self) {
        if self.measuring() {
            self.metrics.mode_switches += 1;
        }
    }
}
