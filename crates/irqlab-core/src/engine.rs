//! The engine: one run of one scenario, from time zero to the end of the measured window.
//!
//! Three sources of events are merged lazily, never pre-scheduled:
//! the CPU's running job completing (priority 0), timers from the event queue (priority 1),
//! and the next packet arrival (priority 2). The next event is the one with the smallest
//! `(time, priority)`; timers among themselves are FIFO (`queue`). An event at or after the
//! end of the run is not processed. Between events the engine only advances the CPU's
//! accounting; everything else happens at event times, in zero simulated time.

use crate::cpu::{Cpu, N_CATEGORIES};
use crate::host::{Timer, Work};
use crate::kernel::Kernel;
use crate::metrics::{Metrics, Report};
use crate::moderation::{AnyPolicy, Policy};
use crate::nic::{IrqLine, Ring};
use crate::polling::PollLoop;
use crate::queue::EventQueue;
use crate::rng::{self, N_STREAMS, Stream};
use crate::scenario::Scenario;
use crate::time::{SimDuration, SimTime};
use crate::traffic::{Arrival, Source};

/// Priority of timers in the event queue. The CPU's completion ranks 0 and an arrival 2; they
/// are merged in the loop, not queued.
pub(crate) const PRIO_TIMER: u8 = 1;

/// Observes per-packet outcomes (for tests and the reference comparison). The default,
/// [`NoTrace`], compiles to nothing.
pub trait Tracer {
    /// Packet `id` arrived at `t`; `accepted` is false if the ring was full.
    fn arrival(&mut self, id: u64, t: SimTime, accepted: bool);
    /// Packet `id`, which arrived at `arrival`, finished protocol processing at `t`.
    fn delivered(&mut self, id: u64, arrival: SimTime, t: SimTime);
}

/// A tracer that records nothing.
pub struct NoTrace;

impl Tracer for NoTrace {
    #[inline(always)]
    fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
    #[inline(always)]
    fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
}

/// Per-packet outcomes of a run: arrival time, and completion time (`None` if dropped or still
/// in flight at the end).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketTrace {
    pub arrival_ps: Vec<u64>,
    pub accepted: Vec<bool>,
    pub done_ps: Vec<Option<u64>>,
}

impl Tracer for PacketTrace {
    fn arrival(&mut self, id: u64, t: SimTime, accepted: bool) {
        debug_assert_eq!(id as usize, self.arrival_ps.len());
        self.arrival_ps.push(t.ps());
        self.accepted.push(accepted);
        self.done_ps.push(None);
    }
    fn delivered(&mut self, id: u64, _: SimTime, t: SimTime) {
        self.done_ps[id as usize] = Some(t.ps());
    }
}

/// The run as a time series: per bucket of equal width from time zero, the packets offered,
/// dropped at the NIC and delivered, and the sum of the delivered packets' latencies. This is
/// the output sequence warm-up detection (MSER) works on. Memory is fixed by the bucket count.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub bucket: SimDuration,
    pub offered: Vec<u64>,
    pub dropped: Vec<u64>,
    pub delivered: Vec<u64>,
    /// Sum of latencies of the packets delivered in the bucket, ps (exact).
    pub latency_sum_ps: Vec<u128>,
}

impl Series {
    /// `buckets` equal buckets covering `[0, end)` (the last may extend past `end`).
    pub fn new(end: SimTime, buckets: usize) -> Series {
        let buckets = buckets.max(1);
        let width = end.ps().div_ceil(buckets as u64).max(1);
        Series {
            bucket: SimDuration(width),
            offered: vec![0; buckets],
            dropped: vec![0; buckets],
            delivered: vec![0; buckets],
            latency_sum_ps: vec![0; buckets],
        }
    }

    #[inline]
    fn index(&self, t: SimTime) -> usize {
        ((t.ps() / self.bucket.ps()) as usize).min(self.offered.len() - 1)
    }
}

impl Tracer for Series {
    fn arrival(&mut self, _: u64, t: SimTime, accepted: bool) {
        let i = self.index(t);
        self.offered[i] += 1;
        self.dropped[i] += u64::from(!accepted);
    }
    fn delivered(&mut self, _: u64, arrival: SimTime, t: SimTime) {
        let i = self.index(t);
        self.delivered[i] += 1;
        self.latency_sum_ps[i] += u128::from((t - arrival).ps());
    }
}

/// The state of one run.
pub(crate) struct Sim<'s, T: Tracer> {
    pub now: SimTime,
    pub s: &'s Scenario,
    pub streams: [Stream; N_STREAMS],
    pub source: Source,
    pub next_arrival: Arrival,
    pub next_id: u64,
    pub ring: Ring,
    pub irq: IrqLine,
    pub pending_hardirqs: u32,
    pub cpu: Cpu<Work>,
    pub kernel: Kernel,
    pub poll_loop: PollLoop,
    /// The driver's interrupt moderation policy.
    pub policy: AnyPolicy,
    /// Packets and bytes the driver has cleaned, and IRQs issued, since time zero.
    pub cleaned_packets: u64,
    pub cleaned_bytes: u64,
    pub irq_events: u64,
    pub timers: EventQueue<Timer>,
    pub metrics: Metrics,
    pub tracer: T,
}

enum Next {
    Cpu,
    Timer,
    Arrival,
}

impl<'s, T: Tracer> Sim<'s, T> {
    pub fn new(s: &'s Scenario, tracer: T) -> Self {
        let mut streams = rng::streams(s.run.seed, s.run.replication);
        let mut source = Source::new(&s.traffic);
        let (arrivals, rest) = streams.split_at_mut(1);
        let next_arrival = source.next_arrival(&mut arrivals[0], &mut rest[0]);
        let policy = s.moderation.policy();
        let initial = policy.initial();
        let p = &s.platform;
        let mut sim = Sim {
            now: SimTime::ZERO,
            s,
            streams,
            source,
            next_arrival,
            next_id: 0,
            ring: Ring::new(s.nic.ring_descriptors),
            irq: IrqLine::new(&s.nic),
            pending_hardirqs: 0,
            cpu: Cpu::new().with_wakeup(
                if p.wakeup.is_zero() {
                    SimDuration::ZERO
                } else {
                    p.wakeup.mean
                },
                p.wakeup_after,
            ),
            kernel: Kernel::new(s.kernel.jiffy.ps()),
            poll_loop: PollLoop::new(s.scheme),
            policy,
            cleaned_packets: 0,
            cleaned_bytes: 0,
            irq_events: 0,
            timers: EventQueue::with_capacity(64),
            metrics: Metrics::new(s.run.warmup, s.run.end),
            tracer,
        };
        if let Some(write) = initial {
            sim.apply_moderation(write);
        }
        sim
    }

    /// Runs to the end and returns the report.
    pub fn run(mut self) -> (Report, T) {
        let end = self.s.run.end;
        let warmup = self.s.run.warmup;
        if self.s.scheme.uses_poll_loop() {
            self.poll_loop_start();
        }
        // CPU accounts when the measured window opens (read at the first event at or after it).
        let mut at_warmup: Option<[u64; N_CATEGORIES]> = None;
        loop {
            // Lazy merge of the three sources; ties go to the CPU, then timers, then arrivals.
            let tc = self.cpu.next_completion_ps();
            let tt = self.timers.peek().map_or(u64::MAX, |(t, _)| t.ps());
            let ta = self.next_arrival.time.ps();
            let (t, which) = if tc <= tt && tc <= ta {
                (tc, Next::Cpu)
            } else if tt <= ta {
                (tt, Next::Timer)
            } else {
                (ta, Next::Arrival)
            };
            let t = SimTime(t);
            if t >= end {
                break;
            }
            debug_assert!(t >= self.now, "event in the past: {t} < {}", self.now);
            if at_warmup.is_none() && t >= warmup {
                self.cpu.advance(warmup);
                at_warmup = Some(self.cpu.account());
            }
            self.now = t;
            self.cpu.advance(t);
            match which {
                Next::Cpu => {
                    let (_, work) = self.cpu.complete();
                    self.on_work_done(work);
                }
                Next::Timer => {
                    let (_, timer) = self.timers.pop().expect("peeked timer");
                    self.on_timer(timer);
                }
                Next::Arrival => {
                    let a = self.next_arrival;
                    let (arrivals, rest) = self.streams.split_at_mut(1);
                    self.next_arrival = self.source.next_arrival(&mut arrivals[0], &mut rest[0]);
                    debug_assert!(self.next_arrival.time >= a.time);
                    self.on_arrival(a);
                }
            }
        }
        if at_warmup.is_none() {
            self.cpu.advance(warmup);
            at_warmup = Some(self.cpu.account());
        }
        self.now = end;
        self.cpu.advance(end);
        let before = at_warmup.expect("read above");
        let mut measured = self.cpu.account();
        for (m, b) in measured.iter_mut().zip(before) {
            *m -= b;
        }
        let report = self
            .metrics
            .report(self.s, measured, self.ring.occupied() as u64);
        (report, self.tracer)
    }
}
