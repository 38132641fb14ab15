//! Poisson arrivals: exponential gaps, rounded to the picosecond.

use crate::dist::round_ps;
use crate::rng::Stream;
use crate::time::{PS_PER_S, SimDuration, SimTime};

/// Its name (`traffic.kind`).
pub const KIND: &str = "poisson";

#[derive(Clone, Debug)]
pub struct Poisson {
    mean_gap_ps: f64,
    last: SimTime,
}

impl Poisson {
    pub fn new(rate_pps: f64) -> Poisson {
        Poisson {
            mean_gap_ps: PS_PER_S as f64 / rate_pps,
            last: SimTime::ZERO,
        }
    }

    /// The first arrival comes one gap after time zero, then one gap after the previous.
    #[inline]
    pub fn next_time(&mut self, arrivals: &mut Stream) -> SimTime {
        self.last += SimDuration(round_ps(arrivals.exponential(self.mean_gap_ps)));
        self.last
    }
}
