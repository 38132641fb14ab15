//! Constant bit rate: arrival k at `round(k / rate)`, from k = 0, so rounding never drifts.

use crate::dist::round_ps;
use crate::time::{PS_PER_S, SimTime};

/// Its name (`traffic.kind`).
pub const KIND: &str = "cbr";

#[derive(Clone, Debug)]
pub struct Cbr {
    period_ps: f64,
    k: u64,
}

impl Cbr {
    pub fn new(rate_pps: f64) -> Cbr {
        Cbr {
            period_ps: PS_PER_S as f64 / rate_pps,
            k: 0,
        }
    }

    #[inline]
    pub fn next_time(&mut self) -> SimTime {
        let time = SimTime(round_ps(self.k as f64 * self.period_ps));
        self.k += 1;
        time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_does_not_drift() {
        let mut c = Cbr::new(3.0); // period 333333333333.33 ps
        let times: Vec<u64> = (0..4).map(|_| c.next_time().ps()).collect();
        assert_eq!(
            times,
            [0, 333_333_333_333, 666_666_666_667, 1_000_000_000_000]
        );
    }
}
