//! Observing a run: per-packet outcomes, a time series for warm-up detection, and the kernel's
//! poll calls, for tests and the reference comparison. The default, [`NoTrace`], compiles to
//! nothing.

use crate::time::{SimDuration, SimTime};

/// Observes per-packet outcomes (for tests and the reference comparison).
pub trait Tracer {
    /// Packet `id` arrived at `t`; `accepted` is false if the ring was full.
    fn arrival(&mut self, id: u64, t: SimTime, accepted: bool);
    /// What packet `id`, just arrived, is: its frame size, its flow, and the queue vector
    /// RSS steered it to.
    #[inline(always)]
    fn packet(&mut self, _id: u64, _size_bytes: u32, _flow: u32, _queue: u16) {}
    /// The traffic class of packet `id`, just arrived.
    #[inline(always)]
    fn class(&mut self, _id: u64, _class: u16) {}
    /// Packet `id`, which arrived at `arrival`, finished protocol processing at `t` and was
    /// taken by its socket, its Tx ring or the stack.
    fn delivered(&mut self, id: u64, arrival: SimTime, t: SimTime);
    /// The driver's poll function of `vector` returned on `core` at `t`, having processed
    /// `packets` Rx packets and reported `work` to `net_rx_action`.
    #[inline(always)]
    fn poll(&mut self, _core: usize, _vector: usize, _t: SimTime, _packets: u64, _work: u64) {}
    /// An app finished packet `id` at `t`.
    #[inline(always)]
    fn consumed(&mut self, _app: usize, _id: u64, _t: SimTime) {}
    /// Core `core`'s receive-load controller set `netdev_budget` and the interrupt interval
    /// (ps) at `t`.
    #[inline(always)]
    fn knobs(&mut self, _core: usize, _t: SimTime, _budget: u64, _itr_ps: u64) {}
}

/// A tracer that records nothing.
pub struct NoTrace;

impl Tracer for NoTrace {
    #[inline(always)]
    fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
    #[inline(always)]
    fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
}

/// Per-packet outcomes of a run: arrival time, frame size, flow and queue, and completion time
/// (`None` if dropped or still in flight at the end).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketTrace {
    pub arrival_ps: Vec<u64>,
    pub accepted: Vec<bool>,
    pub done_ps: Vec<Option<u64>>,
    pub size_bytes: Vec<u32>,
    pub flow: Vec<u32>,
    pub queue: Vec<u16>,
    pub class: Vec<u16>,
}

impl Tracer for PacketTrace {
    fn arrival(&mut self, id: u64, t: SimTime, accepted: bool) {
        debug_assert_eq!(id as usize, self.arrival_ps.len());
        self.arrival_ps.push(t.ps());
        self.accepted.push(accepted);
        self.done_ps.push(None);
    }
    fn packet(&mut self, id: u64, size_bytes: u32, flow: u32, queue: u16) {
        debug_assert_eq!(id as usize + 1, self.arrival_ps.len());
        self.size_bytes.push(size_bytes);
        self.flow.push(flow);
        self.queue.push(queue);
    }
    fn class(&mut self, id: u64, class: u16) {
        debug_assert_eq!(id as usize + 1, self.arrival_ps.len());
        self.class.push(class);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_buckets_by_time_and_the_last_takes_what_lies_past_the_end() {
        // [0, 1000 ps) in 4 buckets of 250 ps.
        let mut s = Series::new(SimTime(1000), 4);
        assert_eq!(s.bucket, SimDuration(250));
        for (t, accepted) in [(0, true), (249, false), (250, true), (999, true)] {
            s.arrival(0, SimTime(t), accepted);
        }
        // at the end and far past it: the last bucket
        s.arrival(0, SimTime(1000), true);
        s.arrival(0, SimTime(5000), false);
        assert_eq!(s.offered, [2, 1, 0, 3]);
        assert_eq!(s.dropped, [1, 0, 0, 1]);
        // a delivery counts in the bucket of its completion, with its latency
        s.delivered(0, SimTime(100), SimTime(600));
        s.delivered(0, SimTime(700), SimTime(740));
        s.delivered(0, SimTime(900), SimTime(1200));
        assert_eq!(s.delivered, [0, 0, 2, 1]);
        assert_eq!(s.latency_sum_ps, [0, 0, 540, 300]);
    }

    #[test]
    fn a_packet_trace_holds_each_packets_class() {
        let s = crate::Scenario::from_pairs([
            ("run.duration_ms", crate::Value::Float(1.0)),
            ("run.warmup_ms", crate::Value::Float(0.0)),
            ("traffic.classes.0.share", crate::Value::Float(0.5)),
            ("traffic.classes.1.share", crate::Value::Float(0.5)),
        ])
        .unwrap();
        let (r, t) = crate::run_traced(&s);
        assert_eq!(t.class.len(), r.packets.offered as usize);
        // both classes, about half each, as drawn
        let rt = t.class.iter().filter(|&&c| c == 1).count();
        assert!(t.class.iter().all(|&c| c <= 1));
        assert!(rt > 0 && rt < t.class.len(), "{rt} of {}", t.class.len());
    }
}
