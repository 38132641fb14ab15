//! Salah et al. (2007)'s protocol-processing loop, shared by `disable-enable`, `poll`,
//! `napi-poll` and `hybrid` (Figs. 3 and 4). Linux NAPI (`napi`) lives in `kernel` and
//! `driver`. Each vector has its own loop, on its own core (one vector per core: the scenario
//! checks it), on the ring of its first traffic class.
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

use super::{Feed, Host, Layout, Timer, Work};
use crate::cpu::{Category, Level};
use crate::dist::plus_bytes;
use crate::rng::StreamId;
use crate::scenario::{CauseMode, Scheme};
use crate::time::{SimDuration, SimTime};
use crate::trace::Tracer;

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

/// State of one vector's loop.
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
    /// Packets delivered since the hybrid's last measurement.
    pub window_delivered: u64,
    /// The ISR holds the head packet (first packet processed in the ISR).
    pub isr_packet: bool,
    /// Packets the current poll took so far (`platform.cold_packets`), and whether the next
    /// poll continues the count (the ISR took the first packet of its busy period).
    pub taken: u64,
    pub continues: bool,
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
            window_delivered: 0,
            isr_packet: false,
            taken: 0,
            continues: false,
        }
    }
}

impl<T: Tracer, L: Layout, F: Feed> Host<'_, T, L, F> {
    /// The vector whose loop runs on core `c`.
    #[inline]
    fn loop_vector(&self, c: usize) -> usize {
        self.l.core(c).vectors[0] as usize
    }

    /// Sets each vector's loop up at time zero.
    pub(super) fn poll_loop_start(&mut self) {
        for v in 0..self.l.vectors().len() {
            match self.s.scheme {
                Scheme::Poll => {
                    self.l.vector_mut(v).irq.masked = true;
                    self.enable_poll_timer(v);
                }
                Scheme::Hybrid => {
                    let t = self.now + self.s.hybrid.window;
                    self.push_timer(t, Timer::HybridWindow(v as u16));
                }
                _ => {}
            }
        }
    }

    fn enable_poll_timer(&mut self, v: usize) {
        let t = self.now + self.s.poll.period;
        self.l.vector_mut(v).poll_loop.next_tick = Some(t);
        self.push_timer(t, Timer::PollTick(v as u16));
    }

    /// The polling timer fires (stale events of a disabled timer are ignored).
    pub(super) fn on_poll_tick(&mut self, v: usize) {
        if self.l.vector_mut(v).poll_loop.next_tick != Some(self.now) {
            return;
        }
        self.enable_poll_timer(v);
        if self.measuring() {
            self.metrics.vectors[v].timer_ticks += 1;
        }
        if self.is_busy(self.l.vector(v).core, Level::HardIrq) {
            self.l.vector_mut(v).pending_ticks += 1;
        } else {
            self.start_timer_handler(v, Work::PollTimer);
        }
    }

    /// The timer's handler has run: `Poll_Mode` on, and a poll unless one is running.
    pub(super) fn tick_done(&mut self, c: usize) {
        self.hardirq_done(c);
        let v = self.l.core_mut(c).hardirq as usize;
        let l = &mut self.l.vector_mut(v).poll_loop;
        l.poll_mode = true;
        if !l.running {
            self.poll_start(v);
        }
        self.next_hardirq(c);
    }

    /// Whether the ISR of vector `v` processes the first packet of a busy period.
    pub(super) fn isr_takes_first_packet(&self, v: usize) -> bool {
        let vec = self.l.vector(v);
        self.s.scheme.uses_poll_loop()
            && vec.poll_loop.mode == LoopMode::DisableEnable
            && !vec.poll_loop.running
            && vec.rings[0].unprocessed() > 0
    }

    /// The cost of an ISR that also processes the first packet of a busy period (`1/v`):
    /// one draw of mean `irq + mask + proto`, distributed like `proto`, plus the per-byte part.
    pub(super) fn isr_with_first_packet(&mut self, v: usize) -> SimDuration {
        let vec = &mut self.l.vector_mut(v);
        let pkt = vec.rings[0].take();
        vec.poll_loop.isr_packet = true;
        let p = &self.s.platform;
        let mut cost = p.proto;
        cost.mean = p.irq.mean + p.mask.mean + p.proto.mean;
        cost.mean_ps = cost.mean.ps() as f64;
        let per_byte = p.proto_ps_per_byte;
        let c = self.l.vector(v).core;
        let d = plus_bytes(
            self.draw(c, cost, StreamId::FirstPacketCost),
            pkt.size_bytes,
            per_byte,
        );
        if p.cold() {
            // the first packet of the busy period: the poll that follows goes on from it
            let l = &mut self.l.vector_mut(v).poll_loop;
            l.taken = 1;
            l.continues = true;
            d + SimDuration(p.cold_ps(0))
        } else {
            d
        }
    }

    /// A packet ISR has run (the vector is disabled): deliver the packet it processed, if
    /// any, then poll.
    pub(super) fn poll_loop_isr_done(&mut self, v: usize) {
        if self.l.vector_mut(v).poll_loop.isr_packet {
            self.l.vector_mut(v).poll_loop.isr_packet = false;
            // waking an app from here is part of the ISR's cost
            self.deliver_head(v);
        }
        match self.l.vector_mut(v).poll_loop.mode {
            LoopMode::DisableEnable => {}
            LoopMode::NapiPoll => {
                self.enable_poll_timer(v);
                self.l.vector_mut(v).poll_loop.poll_mode = true;
            }
            LoopMode::Polling => self.l.vector_mut(v).poll_loop.poll_mode = true,
        }
        if !self.l.vector_mut(v).poll_loop.running {
            self.poll_start(v);
        }
    }

    /// Releases the packet in service and delivers it; returns the cost of waking its app.
    #[inline(always)]
    fn deliver_head(&mut self, v: usize) -> SimDuration {
        let pkt = self.l.vector_mut(v).rings[0].release();
        self.l.vector_mut(v).poll_loop.window_delivered += 1;
        let c = self.l.vector(v).core;
        self.deliver(c, v, pkt)
    }

    fn quota(&self, v: usize) -> u64 {
        match self.l.vector(v).poll_loop.mode {
            LoopMode::DisableEnable => u64::MAX,
            _ => self.s.poll.quota,
        }
    }

    /// A poll: `Poll_Mode` off, then up to the quota.
    fn poll_start(&mut self, v: usize) {
        let quota = self.quota(v);
        let l = &mut self.l.vector_mut(v).poll_loop;
        l.running = true;
        l.poll_mode = false;
        l.left = quota;
        if self.packet_extras && !std::mem::take(&mut l.continues) {
            l.taken = 0;
        }
        if self.measuring() {
            self.metrics.vectors[v].polls += 1;
        }
        self.poll_step(v);
    }

    #[inline]
    fn poll_step(&mut self, v: usize) {
        let vec = &mut self.l.vector_mut(v);
        if vec.poll_loop.left > 0 && vec.rings[0].unprocessed() > 0 {
            vec.poll_loop.left -= 1;
            let pkt = vec.rings[0].take();
            let c = vec.core;
            let mut d = self.packet_cost(c, pkt);
            if self.packet_extras {
                d = d + self.loop_cold(v);
            }
            self.start(c, Level::SoftIrq, d, Category::Softirq, Work::LoopPacket);
        } else {
            self.poll_end(v);
        }
    }

    /// The cold start of the next packet of vector `v`'s poll (`platform.cold_packets`).
    #[cold]
    #[inline(never)]
    fn loop_cold(&mut self, v: usize) -> SimDuration {
        let l = &mut self.l.vector_mut(v).poll_loop;
        l.taken += 1;
        SimDuration(self.s.platform.cold_ps(l.taken - 1))
    }

    pub(super) fn loop_packet_done(&mut self, c: usize) {
        let v = self.loop_vector(c);
        let wake = self.deliver_head(v);
        if self.measuring() {
            self.metrics.vectors[v].polled_packets += 1;
        }
        if wake.is_zero() {
            self.poll_step(v);
        } else {
            self.start(c, Level::SoftIrq, wake, Category::Softirq, Work::LoopWakeup);
        }
    }

    pub(super) fn loop_wakeup_done(&mut self, c: usize) {
        let v = self.loop_vector(c);
        self.poll_step(v);
    }

    /// The poll is done: another if the timer fired meanwhile, else by mode. (Out of line: it
    /// may start the next poll, and `poll_step` stays short enough to inline.)
    #[inline(never)]
    fn poll_end(&mut self, v: usize) {
        if self.l.vector_mut(v).poll_loop.poll_mode {
            self.poll_start(v);
            return;
        }
        let empty = self.l.vector_mut(v).rings[0].unprocessed() == 0;
        let l = &mut self.l.vector_mut(v).poll_loop;
        match l.mode {
            LoopMode::Polling => l.running = false,
            LoopMode::DisableEnable | LoopMode::NapiPoll if empty => {
                l.next_tick = None;
                self.reenable_packet_irqs(v);
            }
            LoopMode::DisableEnable => self.poll_start(v),
            LoopMode::NapiPoll => l.running = false,
        }
    }

    /// The ring is empty: packet interrupts on again (armed: only new packets interrupt).
    /// The poll ends when the register write is done.
    fn reenable_packet_irqs(&mut self, v: usize) {
        if self.s.nic.cause_mode == CauseMode::Armed {
            self.l.vector_mut(v).irq.clear();
        }
        let cost = self.s.platform.unmask;
        if cost.is_zero() {
            self.loop_unmask_finish(v);
        } else {
            self.l.vector_mut(v).poll_loop.running = true;
            let c = self.l.vector_mut(v).core;
            let d = self.draw(c, cost, StreamId::UnmaskCost);
            self.start(c, Level::SoftIrq, d, Category::Softirq, Work::LoopUnmask);
        }
    }

    pub(super) fn loop_unmask_done(&mut self, c: usize) {
        let v = self.loop_vector(c);
        self.loop_unmask_finish(v);
    }

    fn loop_unmask_finish(&mut self, v: usize) {
        self.l.vector_mut(v).poll_loop.running = false;
        if self.l.vector_mut(v).poll_loop.mode != LoopMode::Polling {
            self.l.vector_mut(v).irq.masked = false;
            self.nic_check(v);
        } else if self.l.vector_mut(v).poll_loop.poll_mode {
            // a hybrid switched to polling during the register write, and the timer fired
            self.poll_start(v);
        }
    }

    /// The hybrid measures its throughput and switches if it crossed the threshold.
    pub(super) fn on_hybrid_window(&mut self, v: usize) {
        let h = &self.s.hybrid;
        self.push_timer(self.now + h.window, Timer::HybridWindow(v as u16));
        let l = &mut self.l.vector_mut(v).poll_loop;
        let pps = l.window_delivered as f64 / h.window.as_secs_f64();
        l.window_delivered = 0;
        match l.mode {
            LoopMode::DisableEnable if pps >= h.switch_pps => {
                l.mode = LoopMode::Polling;
                l.left = l.left.min(self.s.poll.quota);
                self.l.vector_mut(v).irq.masked = true;
                self.enable_poll_timer(v);
                self.count_switch(v);
            }
            LoopMode::Polling if pps < (1.0 - h.hysteresis) * h.switch_pps => {
                l.mode = LoopMode::DisableEnable;
                l.next_tick = None;
                l.left = u64::MAX;
                if !l.running {
                    if self.l.vector_mut(v).rings[0].unprocessed() == 0 {
                        self.reenable_packet_irqs(v);
                    } else {
                        self.poll_start(v);
                    }
                }
                self.count_switch(v);
            }
            _ => {}
        }
    }

    fn count_switch(&mut self, v: usize) {
        if self.measuring() {
            self.metrics.vectors[v].mode_switches += 1;
        }
    }
}
