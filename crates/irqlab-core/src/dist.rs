//! A cost (CPU time or a delay): its mean in integer picoseconds and its distribution, and
//! drawing it.

use crate::error::Error;
use crate::rng::Stream;
use crate::schema::{Params, registry};
use crate::time::SimDuration;

registry! {
    /// Distribution of a cost (`platform.*_dist`, `app.N.cost_dist`, `rr.remote_dist`).
    pub enum Dist {
        Deterministic = "deterministic",
        Exponential = "exponential",
    }
}

/// A cost: its mean (integer ps) and distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub mean: SimDuration,
    /// `mean` in ps as a float, for sampling.
    pub mean_ps: f64,
    pub dist: Dist,
}

impl Cost {
    /// A cost of zero takes no time and draws no random number.
    pub fn is_zero(&self) -> bool {
        self.mean.is_zero()
    }

    /// A deterministic cost of `ns` nanoseconds.
    pub fn of_ns(ns: f64) -> Cost {
        Cost::of(SimDuration::from_ns(ns), Dist::Deterministic)
    }

    /// A cost of mean `mean`, distributed as `dist`.
    pub fn of(mean: SimDuration, dist: Dist) -> Cost {
        Cost {
            mean,
            mean_ps: mean.ps() as f64,
            dist,
        }
    }

    /// The cost whose mean is `ns_key` (ns) and whose distribution is `dist_key`.
    pub fn read(p: &Params, ns_key: &str, dist_key: &str) -> Result<Cost, Error> {
        Ok(Cost {
            dist: Dist::read(p, dist_key)?,
            ..Cost::of_ns(p.f64(ns_key))
        })
    }
}

/// Rounds a non-negative picosecond quantity to the nearest integer (ties up).
///
/// `floor(x + 0.5)`, written as a truncating cast (equal for non-negative `x`, and no libm
/// call); the Python reference computes `int(x + 0.5)`, bit for bit the same.
#[inline]
pub fn round_ps(x: f64) -> u64 {
    debug_assert!(
        (0.0..9.2e18).contains(&x),
        "time out of range (scenario limits keep it below 2^63 ps): {x}"
    );
    (x + 0.5) as i64 as u64
}

/// `d` plus a per-byte cost of `bytes` bytes, rounded to the picosecond. A per-byte cost of 0
/// (the default) adds nothing and computes nothing.
#[inline(always)]
pub fn plus_bytes(d: SimDuration, bytes: u16, ps_per_byte: f64) -> SimDuration {
    if ps_per_byte == 0.0 {
        d
    } else {
        d + SimDuration(round_ps(f64::from(bytes) * ps_per_byte))
    }
}

/// Draws one cost. Deterministic costs draw no random number.
#[inline]
pub fn sample(cost: &Cost, stream: &mut Stream) -> SimDuration {
    match cost.dist {
        Dist::Deterministic => cost.mean,
        Dist::Exponential => SimDuration(round_ps(stream.exponential(cost.mean_ps))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_per_byte_cost_adds_each_bytes_cost_rounded_to_the_picosecond() {
        assert_eq!(plus_bytes(SimDuration(1000), 1500, 0.0), SimDuration(1000));
        assert_eq!(plus_bytes(SimDuration(1000), 1500, 2.5), SimDuration(4750));
        // 1.5 ps rounds up, 1.25 ps down
        assert_eq!(plus_bytes(SimDuration(1000), 3, 0.5), SimDuration(1002));
        assert_eq!(plus_bytes(SimDuration(1000), 5, 0.25), SimDuration(1001));
    }
}
