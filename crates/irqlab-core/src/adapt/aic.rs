//! AIC, adaptive interrupt coalescing (Chang et al. 2007, §V-B): QAPolling's adjusting
//! algorithm applied to the interrupt rate instead of the budget, with a floor of one
//! interrupt per second. The budget stays where the scenario put it.
//!
//! The paper gives the idea only; the mapping is this crate's choice: where QAPolling divides
//! B_p by α, AIC divides the interrupt rate 1/T by α (an unthrottled NIC counts as
//! `aic_max_rate`); where QAPolling adds β, AIC adds β × `aic_rate_step` interrupts/s, and a
//! rate that reaches `aic_max_rate` unthrottles the NIC (T = 0, an interrupt per packet, the
//! paper's setting without receive livelock). The division happens at most once per sampling
//! interval (`adapt.aic_decrease = "per-interval"`, the default): at every packet above
//! `bufupper` (`"per-packet"`) it takes the rate from 100000/s to the floor of 1/s within 17
//! packets, and a ring emptied once a second into the socket keeps it above `bufupper`, so the
//! scheme never leaves the floor.

use super::config;
use super::{Band, Controller, Interval, Knobs, band};
use crate::schema::{keys, registry};
use crate::time::SimDuration;

/// `adapt.scheme = "aic"`.
pub const KIND: &str = "aic";
keys! {
    /// The keys it reads.
    pub KEYS = "adapt.aic_" [
        config::BUFLOW,
        config::BUFUPPER,
        config::ALPHA,
        config::BETA,
        config::MICRO,
        MIN_RATE,
        MAX_RATE,
        RATE_STEP,
        /// How often the rate is divided ([`Decrease`]).
        DECREASE,
    ];
}
/// What its results depend on beyond the paper.
pub const CHOICE_NOTE: &str = "adapt.scheme = \"aic\": AIC's rule on the interrupt rate (adapt.alpha, \
     adapt.beta, adapt.aic_rate_step, adapt.aic_decrease) is irqlab's choice: this \
     result depends on it (docs/applications.md)";

registry! {
    key: DECREASE;
    /// How often AIC divides the interrupt rate.
    pub enum Decrease {
        /// At most once per sampling interval.
        PerInterval = "per-interval",
        /// At every packet above `bufupper`.
        PerPacket = "per-packet",
    }
}

#[derive(Debug)]
pub struct Aic {
    buflow: f64,
    bufupper: f64,
    alpha: f64,
    beta: f64,
    micro: bool,
    min_rate: f64,
    max_rate: f64,
    step: f64,
    /// At most one decrease per interval, and whether it was made in this one.
    once_per_interval: bool,
    decreased: bool,
}

impl Aic {
    pub fn new(c: &super::AdaptConfig) -> Aic {
        Aic {
            buflow: c.buflow,
            bufupper: c.bufupper,
            alpha: c.alpha,
            beta: c.beta as f64,
            micro: c.micro,
            min_rate: c.aic_min_rate,
            max_rate: c.aic_max_rate,
            step: c.aic_rate_step,
            once_per_interval: c.aic_once_per_interval,
            decreased: false,
        }
    }

    /// The interrupt rate T stands for (the unthrottled NIC counts as the highest rate).
    fn rate(&self, itr: SimDuration) -> f64 {
        if itr.is_zero() {
            self.max_rate
        } else {
            (1e12 / itr.ps() as f64).min(self.max_rate)
        }
    }

    fn set_rate(&self, rate: f64, k: &mut Knobs) {
        k.itr = if rate >= self.max_rate {
            SimDuration::ZERO
        } else {
            crate::moderation::interval_of_rate(rate.max(self.min_rate))
        };
    }

    fn raise(&self, k: &mut Knobs) {
        let r = self.rate(k.itr) + self.beta * self.step;
        self.set_rate(r, k);
    }
}

impl Controller for Aic {
    fn on_enqueue(&mut self, util: f64, k: &mut Knobs) {
        if util > self.bufupper && !(self.once_per_interval && self.decreased) {
            let r = (self.rate(k.itr) / self.alpha).max(self.min_rate);
            self.set_rate(r, k);
            self.decreased = true;
        }
    }

    fn on_interval(&mut self, i: &Interval, k: &mut Knobs) {
        self.decreased = false;
        match band(i.max_util, self.buflow, self.bufupper) {
            Band::Low => self.raise(k),
            Band::Middle if self.micro => {
                if i.max_util > i.prev_max_util {
                    let r = (self.rate(k.itr) - self.beta * self.step).max(self.min_rate);
                    self.set_rate(r, k);
                } else {
                    self.raise(k);
                }
            }
            Band::Middle | Band::High => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Scheme, knobs, test_config};
    use super::*;

    fn rate(k: &Knobs) -> f64 {
        1e12 / k.itr.ps() as f64
    }

    /// AIC with the test settings.
    fn aic() -> Aic {
        Aic::new(&test_config(Scheme::Aic))
    }

    /// AIC dividing the rate at every packet above `bufupper` (`adapt.aic_decrease =
    /// "per-packet"`).
    fn per_packet() -> Aic {
        let mut c = test_config(Scheme::Aic);
        c.aic_once_per_interval = false;
        Aic::new(&c)
    }

    /// The budget at its default, the NIC at `pps` interrupts a second.
    fn at_rate(pps: f64) -> Knobs {
        knobs(300, crate::moderation::interval_of_rate(pps))
    }

    /// An interval whose ring maximum was `max`, after `prev` in the one before.
    fn band(max: f64, prev: f64) -> Interval {
        Interval {
            max_util: max,
            prev_max_util: prev,
            ..Interval::default()
        }
    }

    #[test]
    fn overflow_pressure_halves_the_rate_once_per_interval() {
        let mut a = aic();
        let mut k = knobs(300, SimDuration::ZERO);
        for _ in 0..10 {
            a.on_enqueue(0.6, &mut k);
        }
        assert!((rate(&k) - 50_000.0).abs() < 1e-3, "{}", rate(&k));
        let high = Interval {
            max_util: 0.6,
            ..Interval::default()
        };
        a.on_interval(&high, &mut k);
        assert!(
            (rate(&k) - 50_000.0).abs() < 1e-3,
            "the interval itself does nothing"
        );
        a.on_enqueue(0.6, &mut k);
        assert!((rate(&k) - 25_000.0).abs() < 1e-3, "{}", rate(&k));
    }

    #[test]
    fn per_packet_pressure_halves_the_rate_down_to_one_per_second() {
        let mut a = per_packet();
        let mut k = knobs(300, SimDuration::ZERO);
        a.on_enqueue(0.4, &mut k);
        assert!(k.itr.is_zero(), "below bufupper: nothing");
        a.on_enqueue(0.6, &mut k);
        assert!((rate(&k) - 50_000.0).abs() < 1e-3, "{}", rate(&k));
        for _ in 0..40 {
            a.on_enqueue(0.6, &mut k);
        }
        assert!(
            (rate(&k) - 1.0).abs() < 1e-9,
            "floor: one interrupt per second"
        );
        assert_eq!(k.budget, 300, "AIC never touches the budget");
    }

    #[test]
    fn quiet_intervals_raise_the_rate_until_unthrottled() {
        let mut a = aic();
        let mut k = at_rate(97_500.0);
        let quiet = Interval {
            max_util: 0.0,
            ..Interval::default()
        };
        a.on_interval(&quiet, &mut k);
        assert!((rate(&k) - 98_500.0).abs() < 0.01, "{}", rate(&k));
        a.on_interval(&quiet, &mut k);
        a.on_interval(&quiet, &mut k);
        assert!(
            k.itr.is_zero(),
            "at the highest rate the NIC is unthrottled"
        );
    }

    #[test]
    fn the_band_follows_the_trend() {
        let (mut a, mut k) = (aic(), at_rate(8000.0));
        let rising = band(0.3, 0.1);
        a.on_interval(&rising, &mut k);
        assert!((rate(&k) - 7000.0).abs() < 1e-3);
        let falling = band(0.2, 0.3);
        a.on_interval(&falling, &mut k);
        assert!((rate(&k) - 8000.0).abs() < 1e-3);
    }

    #[test]
    fn only_a_ring_above_bufupper_divides_the_rate() {
        // bufupper 0.5: a ring exactly at it is not above it; just past it halves the rate.
        let mut a = per_packet();
        let mut k = at_rate(40_000.0);
        a.on_enqueue(0.5, &mut k);
        assert!((rate(&k) - 40_000.0).abs() < 1e-3, "{}", rate(&k));
        a.on_enqueue(0.500_001, &mut k);
        assert!((rate(&k) - 20_000.0).abs() < 1e-3, "{}", rate(&k));
    }

    #[test]
    fn without_micro_adjustment_the_band_leaves_the_rate_alone() {
        // adapt.micro = "none": an interval whose maximum lies between buflow and bufupper
        // changes nothing, whatever the trend; only a quiet interval raises the rate.
        let mut c = test_config(Scheme::Aic);
        c.micro = false;
        let mut a = Aic::new(&c);
        let mut k = at_rate(8000.0);
        for (max, prev) in [(0.3, 0.1), (0.1, 0.3), (0.2, 0.2)] {
            a.on_interval(&band(max, prev), &mut k);
            assert!(
                (rate(&k) - 8000.0).abs() < 1e-3,
                "{max} after {prev}: {}",
                rate(&k)
            );
        }
        let quiet = Interval::default();
        a.on_interval(&quiet, &mut k);
        assert!((rate(&k) - 9000.0).abs() < 1e-3, "{}", rate(&k));
    }

    #[test]
    fn a_band_maximum_equal_to_the_one_before_raises_the_rate() {
        // Only a maximum that rose since the interval before lowers the rate; an equal one
        // counts as not rising: + β × aic_rate_step.
        let (mut a, mut k) = (aic(), at_rate(8000.0));
        let flat = band(0.3, 0.3);
        a.on_interval(&flat, &mut k);
        assert!((rate(&k) - 9000.0).abs() < 1e-3, "{}", rate(&k));
    }
}
