//! Sampling CPU costs in integer picoseconds.

use crate::rng::Stream;
use crate::scenario::{Cost, Dist};
use crate::time::SimDuration;

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
