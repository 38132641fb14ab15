//! Sampling CPU costs in integer picoseconds.

use crate::rng::Stream;
use crate::scenario::{Cost, Dist};
use crate::time::SimDuration;

/// Rounds a non-negative picosecond quantity to the nearest integer (ties up).
///
/// Written as `floor(x + 0.5)` so that the Python reference reproduces it bit for bit.
#[inline]
pub fn round_ps(x: f64) -> u64 {
    (x + 0.5).floor() as u64
}

/// Draws one cost. Deterministic costs draw no random number.
#[inline]
pub fn sample(cost: &Cost, stream: &mut Stream) -> SimDuration {
    match cost.dist {
        Dist::Deterministic => cost.mean,
        Dist::Exponential => SimDuration(round_ps(stream.exponential(cost.mean.ps() as f64))),
    }
}
