//! Where a host's packets come from: the traffic as the NIC classifies it (RSS picks the
//! vector, the class the ring). A whole host generates its own ([`Generator`]); a part of a
//! host run on its own is fed what RSS steered to it ([`Buffer`], see `partition`).

use crate::rng::{N_STREAMS, Stream, StreamId};
use crate::scenario::Scenario;
use crate::time::SimTime;
use crate::traffic::Source;

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
}

/// The traffic of a scenario and the NIC's classification: times from the arrivals stream,
/// sizes, flows and classes from their own streams, the vector from the RSS table.
pub(crate) struct Generator<'s> {
    s: &'s Scenario,
    /// Flows (1: no draw), classes (1: no draw), and whether RSS has a choice (queues > 1).
    flows: usize,
    classes: usize,
    rss: bool,
    source: Source,
    arrivals: Stream,
    sizes: Stream,
    flow_stream: Stream,
    class_stream: Stream,
    next: Routed,
}

impl<'s> Generator<'s> {
    /// `streams`: block 0 of the run's streams (the traffic's).
    pub fn new(s: &'s Scenario, streams: &[Stream; N_STREAMS]) -> Generator<'s> {
        let mut g = Generator {
            s,
            flows: s.traffic.flows,
            classes: s.traffic.class_cum.len(),
            rss: s.nic.queues > 1,
            source: Source::new(&s.traffic),
            arrivals: streams[StreamId::Arrivals as usize].clone(),
            sizes: streams[StreamId::Sizes as usize].clone(),
            flow_stream: streams[StreamId::Flows as usize].clone(),
            class_stream: streams[StreamId::Classes as usize].clone(),
            next: Routed {
                time: SimTime::ZERO,
                size_bytes: 0,
                flow: 0,
                class: 0,
                vector: 0,
            },
        };
        g.next = g.generate();
        g
    }

    #[inline]
    fn generate(&mut self) -> Routed {
        let a = self
            .source
            .next_arrival(&mut self.arrivals, &mut self.sizes);
        let flow = self.draw_flow();
        let class = self.draw_class();
        let vector = if self.rss {
            self.s.topology.flow_queue[flow as usize]
        } else {
            0
        };
        Routed {
            time: a.time,
            size_bytes: a.size_bytes,
            flow,
            class,
            vector,
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

    #[inline(always)]
    fn take(&mut self) -> Routed {
        let r = self.next;
        self.next = self.generate();
        debug_assert!(self.next.time >= r.time);
        r
    }
}

/// Packets handed over by whoever generates them (a partitioned run), in time order: a batch
/// is pushed, then taken from the front; [`Buffer::compact`] drops what was taken before the
/// next batch (keeping the capacity: no allocation once the batches stop growing).
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    items: Vec<Routed>,
    next: usize,
}

impl Buffer {
    #[inline(always)]
    pub fn push(&mut self, r: Routed) {
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
        self.items.get(self.next).map_or(u64::MAX, |r| r.time.ps())
    }

    #[inline(always)]
    fn take(&mut self) -> Routed {
        let r = self.items[self.next];
        self.next += 1;
        r
    }
}
