//! Simulated time: integer picoseconds.
//!
//! Time never is a float inside the engine. Configuration values (ns, µs, ms as `f64`) are
//! converted once, at build time, by rounding to the nearest picosecond; results are converted
//! back to seconds only at the edge. A `u64` of picoseconds spans 213 days, far beyond any run.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per nanosecond, microsecond, millisecond and second.
pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    #[inline]
    pub fn ps(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier` (saturating at zero).
    #[inline]
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    #[inline]
    pub fn ps(self) -> u64 {
        self.0
    }

    #[inline]
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }

    /// Converts a non-negative, finite quantity of `unit_ps` picoseconds to a duration,
    /// rounding to the nearest picosecond (ties away from zero). Callers validate the input.
    pub fn from_units(value: f64, unit_ps: u64) -> SimDuration {
        debug_assert!(value.is_finite() && value >= 0.0, "bad duration {value}");
        SimDuration((value * unit_ps as f64).round() as u64)
    }

    pub fn from_ns(ns: f64) -> SimDuration {
        Self::from_units(ns, PS_PER_NS)
    }

    pub fn from_us(us: f64) -> SimDuration {
        Self::from_units(us, PS_PER_US)
    }

    pub fn from_ms(ms: f64) -> SimDuration {
        Self::from_units(ms, PS_PER_MS)
    }
}

// Plain additions: scenario limits keep every time below 2^63 ps (the run is at most
// ~2000 hours and no single cost can reach it), so they cannot overflow; debug builds check.
impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0 + d.0)
    }
}

impl AddAssign<SimDuration> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: SimDuration) {
        self.0 += d.0;
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    #[inline]
    fn sub(self, earlier: SimTime) -> SimDuration {
        debug_assert!(self >= earlier, "time went backwards: {self} - {earlier}");
        SimDuration(self.0 - earlier.0)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    #[inline]
    fn add(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0 + o.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} us", self.0 as f64 / PS_PER_US as f64)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} us", self.0 as f64 / PS_PER_US as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_to_nearest_picosecond() {
        assert_eq!(SimDuration::from_ns(3730.0).ps(), 3_730_000);
        assert_eq!(SimDuration::from_ns(0.0004).ps(), 0);
        assert_eq!(SimDuration::from_ns(0.0005).ps(), 1);
        assert_eq!(SimDuration::from_us(1.59).ps(), 1_590_000);
        assert_eq!(SimDuration::from_ms(2.0).ps(), 2 * PS_PER_MS);
    }

    #[test]
    fn arithmetic() {
        assert_eq!(SimTime(5) + SimDuration(5), SimTime(10));
        assert_eq!(SimTime(5).since(SimTime(9)), SimDuration::ZERO);
        assert_eq!(SimTime(9) - SimTime(5), SimDuration(4));
    }

    #[test]
    fn times_and_durations_show_in_microseconds_to_the_picosecond() {
        assert_eq!(SimTime(1_234_567).to_string(), "1.234567 us");
        assert_eq!(SimDuration(20_000_000).to_string(), "20.000000 us");
    }
}
