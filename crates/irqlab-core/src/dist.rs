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

/// Draws one cost. Deterministic costs draw no random number.
#[inline]
pub fn sample(cost: &Cost, stream: &mut Stream) -> SimDuration {
    match cost.dist {
        Dist::Deterministic => cost.mean,
        Dist::Exponential => SimDuration(round_ps(stream.exponential(cost.mean_ps))),
    }
}
