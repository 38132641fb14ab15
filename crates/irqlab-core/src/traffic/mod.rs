//! Traffic: open-loop packet sources.
//!
//! A source is asked for one arrival at a time; the engine merges it lazily with the other
//! events instead of pre-scheduling arrivals, so memory does not grow with the run.

mod cbr;
mod poisson;

pub use cbr::Cbr;
pub use poisson::Poisson;

use crate::rng::Stream;
use crate::scenario::{TrafficConfig, TrafficKind};
use crate::time::SimTime;

/// One arrival: when, and how many bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: SimTime,
    pub size_bytes: u32,
}

/// The arrival processes, dispatched statically.
#[derive(Clone, Debug)]
pub enum Source {
    Poisson(Poisson),
    Cbr(Cbr),
}

impl Source {
    pub fn new(cfg: &TrafficConfig) -> Source {
        match cfg.kind {
            TrafficKind::Poisson => Source::Poisson(Poisson::new(cfg.rate_pps, cfg.size_bytes)),
            TrafficKind::Cbr => Source::Cbr(Cbr::new(cfg.rate_pps, cfg.size_bytes)),
        }
    }

    /// The next arrival, drawing from the arrivals stream (and the sizes stream, for sources
    /// with variable sizes).
    #[inline]
    pub fn next_arrival(&mut self, arrivals: &mut Stream, _sizes: &mut Stream) -> Arrival {
        match self {
            Source::Poisson(s) => s.next_arrival(arrivals),
            Source::Cbr(s) => s.next_arrival(),
        }
    }
}
