//! Where a host's packets come from: the traffic as the NIC classifies it (RSS picks the
//! vector, the class the ring). A whole host generates its own ([`Generator`]); a part of a
//! host run on its own is fed what RSS steered to it ([`Buffer`], see `partition`).

use crate::rng::{N_STREAMS, Stream, StreamId};
use crate::scenario::Scenario;
use crate::time::{SimDuration, SimTime};
use crate::traffic::replay::ReplayReport;
use crate::traffic::{Arrival, Source};

/// One packet arriving at the NIC, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Routed {
    pub time: SimTime,
    pub size_bytes: u32,
    pub flow: u32,
    pub class: u16,
    /// The vector RSS steers its flow to.
    pub vector: u16,
}

/// A host's arrivals, in time order.
pub(crate) trait Feed {
    /// When the next packet arrives, ps (`u64::MAX`: none known).
    fn next_ps(&self) -> u64;
    /// Takes the next packet.
    fn take(&mut self) -> Routed;
    /// How a replayed capture went (`None`: the traffic is not a replay, or not generated
    /// here).
    fn replay_report(&self) -> Option<ReplayReport> {
        None
    }
    /// Request/response traffic: the response to a request of client `flow` left the wire at
    /// `at` (`lost`: the request or its response was dropped at `at`). A closed loop's next
    /// request from that client is due after the remote delay (or the timeout, if lost).
    /// Returns the remote delay drawn, for the round-trip time.
    fn respond(&mut self, _flow: u32, _at: SimTime, _lost: bool) -> SimDuration {
        SimDuration::ZERO
    }
}

/// The traffic of a scenario and the NIC's classification: times from the arrivals stream,
/// sizes, flows and classes from their own streams (a replayed capture gives times, sizes and
/// flows itself), the vector from the RSS table. The next
/// arrival's time and size are drawn one ahead (the engine needs its time); its flow, class
/// and vector when it is taken (cheaper than carrying a classified packet ahead, and the same
/// numbers: each comes from its own stream).
pub(crate) struct Generator<'s> {
    s: &'s Scenario,
    /// Flows (1: no draw), classes (1: no draw), and whether RSS has a choice (queues > 1).
    flows: usize,
    classes: usize,
    rss: bool,
    /// One flow, one class and one vector.
    plain: bool,
    source: Source,
    arrivals: Stream,
    sizes: Stream,
    flow_stream: Stream,
    class_stream: Stream,
    next: Arrival,
}

impl<'s> Generator<'s> {
    /// `streams`: block 0 of the run's streams (the traffic's).
    pub fn new(s: &'s Scenario, streams: &[Stream; N_STREAMS]) -> Generator<'s> {
        let mut source = Source::new(&s.traffic, s.rr.as_ref(), s.run.end);
        let mut arrivals = streams[StreamId::Arrivals as usize].clone();
        let mut sizes = streams[StreamId::Sizes as usize].clone();
        let next = source.next_arrival(&mut arrivals, &mut sizes);
        let (flows, classes, rss) = (s.traffic.flows, s.traffic.class_cum.len(), s.nic.queues > 1);
        Generator {
            s,
            flows,
            classes,
            rss,
            plain: flows == 1 && classes == 1 && !rss,
            source,
            arrivals,
            sizes,
            flow_stream: streams[StreamId::Flows as usize].clone(),
            class_stream: streams[StreamId::Classes as usize].clone(),
            next,
        }
    }

    /// The next arrival, drawing the one after it.
    #[inline(always)]
    fn advance(&mut self) -> Arrival {
        let a = self.next;
        self.next = self
            .source
            .next_arrival(&mut self.arrivals, &mut self.sizes);
        debug_assert!(self.next.time >= a.time);
        a
    }

    /// The next packet with its flow and class, before RSS (vector 0).
    #[inline(always)]
    pub fn take_unsteered(&mut self) -> Routed {
        let a = self.advance();
        let flow = if a.flow == Arrival::DRAW_FLOW {
            self.draw_flow()
        } else {
            a.flow
        };
        let class = self.draw_class();
        Routed {
            time: a.time,
            size_bytes: a.size_bytes,
            flow,
            class,
            vector: 0,
        }
    }

    /// The flow of a packet: uniform, or by its cumulative popularity.
    #[inline]
    fn draw_flow(&mut self) -> u32 {
        let n = self.flows;
        if n == 1 {
            return 0;
        }
        let u = self.flow_stream.uniform();
        match &self.s.traffic.flow_cum {
            None => ((u * n as f64) as usize).min(n - 1) as u32,
            Some(cum) => cum.partition_point(|c| *c <= u).min(n - 1) as u32,
        }
    }

    /// The traffic class of a packet, by the shares.
    #[inline]
    fn draw_class(&mut self) -> u16 {
        if self.classes == 1 {
            return 0;
        }
        let cum = &self.s.traffic.class_cum;
        let u = self.class_stream.uniform();
        cum.partition_point(|c| *c <= u).min(cum.len() - 1) as u16
    }
}

impl Feed for Generator<'_> {
    #[inline(always)]
    fn next_ps(&self) -> u64 {
        self.next.time.ps()
    }

    fn replay_report(&self) -> Option<ReplayReport> {
        self.source.replay_report()
    }

    fn respond(&mut self, flow: u32, at: SimTime, lost: bool) -> SimDuration {
        let Some(cfg) = &self.s.rr else {
            return SimDuration::ZERO;
        };
        let remote = if lost {
            cfg.timeout
        } else {
            // rr draws no flows (each request names its client): the stream is free
            crate::dist::sample(&cfg.remote, &mut self.flow_stream)
        };
        let Some(rr) = self.source.rr_mut() else {
            return remote;
        };
        if !rr.closed() {
            return remote;
        }
        let t = at + remote;
        if t < self.next.time {
            // the new request comes before the one drawn ahead, which goes back
            if self.next.time.ps() != u64::MAX {
                rr.push(self.next.flow, self.next.time);
            }
            rr.push(flow, t);
            self.next = self
                .source
                .next_arrival(&mut self.arrivals, &mut self.sizes);
        } else {
            rr.push(flow, t);
        }
        remote
    }

    #[inline(always)]
    fn take(&mut self) -> Routed {
        if self.plain {
            // one flow, one class, one vector: nothing to draw or look up
            let a = self.advance();
            return Routed {
                time: a.time,
                size_bytes: a.size_bytes,
                flow: if a.flow == Arrival::DRAW_FLOW {
                    0
                } else {
                    a.flow
                },
                class: 0,
                vector: 0,
            };
        }
        let mut r = self.take_unsteered();
        if self.rss {
            r.vector = match &self.s.qos.class_vector {
                // qos.strategy = "rr": the NIC's filter steers each class to its vector
                Some(v) => v[r.class as usize],
                None => self.s.topology.flow_queue[r.flow as usize],
            };
        }
        r
    }
}

/// Packets handed over by whoever generates them (a partitioned run), in time order: a batch
/// is pushed, then taken from the front; [`Buffer::compact`] drops what was taken before the
/// next batch (keeping the capacity: no allocation once the batches stop growing).
#[derive(Debug)]
pub(crate) struct Buffer {
    items: Vec<Routed>,
    next: usize,
    /// The time of `items[next]` (`u64::MAX`: none), read at every event.
    next_ps: u64,
}

impl Default for Buffer {
    fn default() -> Buffer {
        Buffer {
            items: Vec::new(),
            next: 0,
            next_ps: u64::MAX,
        }
    }
}

impl Buffer {
    #[inline(always)]
    pub fn push(&mut self, r: Routed) {
        if self.next == self.items.len() {
            self.next_ps = r.time.ps();
        }
        self.items.push(r);
    }

    /// Forgets the packets already taken.
    pub fn compact(&mut self) {
        self.items.drain(..self.next);
        self.next = 0;
    }
}

impl Feed for Buffer {
    #[inline(always)]
    fn next_ps(&self) -> u64 {
        self.next_ps
    }

    #[inline(always)]
    fn take(&mut self) -> Routed {
        let r = self.items[self.next];
        self.next += 1;
        self.next_ps = self.items.get(self.next).map_or(u64::MAX, |r| r.time.ps());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routed(ps: u64) -> Routed {
        Routed {
            time: SimTime(ps),
            size_bytes: 64,
            flow: 0,
            class: 0,
            vector: 0,
        }
    }

    #[test]
    fn compact_forgets_the_taken_packets_and_keeps_the_rest_in_order() {
        let mut b = Buffer::default();
        for ps in [10, 20, 30] {
            b.push(routed(ps));
        }
        assert_eq!(b.take().time, SimTime(10));
        assert_eq!(b.take().time, SimTime(20));
        b.compact();
        assert_eq!((b.items.len(), b.next), (1, 0));
        assert_eq!(b.next_ps(), 30);
        b.push(routed(40));
        assert_eq!(b.take().time, SimTime(30));
        assert_eq!(b.take().time, SimTime(40));
        assert_eq!(b.next_ps(), u64::MAX);
        b.compact();
        assert!(b.items.is_empty());
    }
}
