//! Traffic: open-loop packet sources.
//!
//! A source is asked for one arrival at a time; the engine merges it lazily with the other
//! events instead of pre-scheduling arrivals, so memory does not grow with the run.

mod cbr;
pub mod onoff;
mod poisson;

pub use cbr::Cbr;
pub use onoff::OnOff;
pub use poisson::Poisson;

use crate::rng::Stream;
use crate::scenario::{SizeDist, TrafficConfig, TrafficKind};
use crate::time::SimTime;

/// One arrival: when, and how many bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: SimTime,
    pub size_bytes: u32,
}

/// The arrival processes, dispatched statically.
#[derive(Clone, Debug)]
pub enum Process {
    Poisson(Poisson),
    Cbr(Cbr),
    OnOff(OnOff),
}

/// An arrival process and the frame sizes it carries.
#[derive(Clone, Debug)]
pub struct Source {
    process: Process,
    sizes: SizeDist,
}

impl Source {
    pub fn new(cfg: &TrafficConfig) -> Source {
        let process = match cfg.kind {
            TrafficKind::Poisson => Process::Poisson(Poisson::new(cfg.rate_pps)),
            TrafficKind::Cbr => Process::Cbr(Cbr::new(cfg.rate_pps)),
            TrafficKind::ParetoOnOff => {
                Process::OnOff(OnOff::new(cfg.onoff.as_ref().expect("on/off configured")))
            }
        };
        Source {
            process,
            sizes: cfg.sizes.clone(),
        }
    }

    /// The next arrival, drawing times from the arrivals stream and sizes from the sizes
    /// stream (fixed sizes draw nothing).
    #[inline]
    pub fn next_arrival(&mut self, arrivals: &mut Stream, sizes: &mut Stream) -> Arrival {
        let time = match &mut self.process {
            Process::Poisson(s) => s.next_time(arrivals),
            Process::Cbr(s) => s.next_time(),
            Process::OnOff(s) => return s.next_arrival(arrivals, &self.sizes, sizes),
        };
        Arrival {
            time,
            size_bytes: self.sizes.sample(sizes),
        }
    }
}

impl SizeDist {
    /// One frame size.
    #[inline]
    pub fn sample(&self, stream: &mut Stream) -> u32 {
        match self {
            SizeDist::Fixed(s) => *s,
            SizeDist::Table { sizes, cum } => {
                let u = stream.uniform();
                let i = cum.partition_point(|c| *c <= u).min(sizes.len() - 1);
                sizes[i]
            }
        }
    }
}
