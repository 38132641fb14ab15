//! RHIP, robust hybrid interrupt-polling (Chang et al. 2007, §IV, Fig. 6 as printed): adapts
//! the interrupt interval T and the budget B_p (`netdev_budget`) together.
//!
//! Before a packet is put into a socket whose utilisation is above `bufupper`: while the
//! interrupt rate 1/T is above `rhip_rate` (8000/s), T grows by `t_increase` (the paper's
//! "+500", a unit it does not give: ns here, a key), never past 1/`rhip_rate`; only then B_p
//! decreases (QAPolling's rule, ⌊B_p / α⌋).
//!
//! At the end of each interval, "line 6" runs if ksoftirqd was inactive in it, or its
//! utilisation never went above `buflow`, or never above `bufupper`: if B_p is below
//! `rhip_budget` (300) it increases (+β), else T decreases by `t_decrease` (10 %), snapping to
//! zero (an interrupt per packet) under `t_snap`, and never below `t_min` (zero by default: the
//! paper prints no floor; with none, T keeps falling as long as the load stays calm, so that
//! RHIP's idle time depends on the run's length — docs/applications.md). An interval that
//! went above `bufupper` while ksoftirqd ran changes nothing. `rhip-noksd`, the variant of Table II "without adjusting
//! ksoftirqd", drops the first condition.

use super::config;
use super::{Band, BudgetRule, Controller, Interval, Knobs, band};
use crate::schema::keys;
use crate::time::SimDuration;

/// `adapt.scheme = "rhip"`, and the variant without the ksoftirqd rule.
pub const KIND: &str = "rhip";
pub const KIND_NOKSD: &str = "rhip-noksd";
keys! {
    /// The keys it reads.
    pub KEYS = "adapt." [
        config::BUFLOW,
        config::BUFUPPER,
        config::ALPHA,
        config::BETA,
        config::BUDGET_MIN,
        config::BUDGET_MAX,
        RATE = "adapt.rhip_rate",
        BUDGET = "adapt.rhip_budget",
        T_DECREASE,
        T_INCREASE_NS,
        T_SNAP_NS,
        T_MIN_NS,
    ];
}
/// What its results depend on beyond the paper.
pub const CHOICE_NOTE: &str = "adapt.scheme = rhip: the unit of the paper's \"+500\" (adapt.t_increase_ns, \
     ns) and the budget rule taken from QAPolling (adapt.alpha, adapt.beta) are \
     irqlab's choices: this result depends on them (docs/applications.md)";

#[derive(Debug)]
pub struct Rhip {
    rule: BudgetRule,
    buflow: f64,
    bufupper: f64,
    /// T at which the interrupt rate is `rhip_rate`.
    t_threshold: SimDuration,
    budget_threshold: u64,
    t_decrease: f64,
    t_increase: SimDuration,
    t_snap: SimDuration,
    /// The floor of a calm interval's decrease (zero: none).
    t_min: SimDuration,
    /// The ksoftirqd rule (Fig. 6, per-interval lines 1–2).
    ksoftirqd_rule: bool,
}

impl Rhip {
    pub fn new(c: &super::AdaptConfig, ksoftirqd_rule: bool) -> Rhip {
        Rhip {
            rule: BudgetRule::of(c),
            buflow: c.buflow,
            bufupper: c.bufupper,
            t_threshold: crate::moderation::interval_of_rate(c.rhip_rate),
            budget_threshold: c.rhip_budget,
            t_decrease: c.t_decrease,
            t_increase: c.t_increase,
            t_snap: c.t_snap,
            t_min: c.t_min,
            ksoftirqd_rule,
        }
    }
}

impl Controller for Rhip {
    fn on_enqueue(&mut self, util: f64, k: &mut Knobs) {
        if util <= self.bufupper {
            return;
        }
        if k.itr < self.t_threshold {
            // 1/T > 8000: increasing T
            k.itr = (k.itr + self.t_increase).min(self.t_threshold);
        } else {
            k.budget = self.rule.decrease(k.budget);
        }
    }

    fn on_interval(&mut self, i: &Interval, k: &mut Knobs) {
        let line6 = (self.ksoftirqd_rule && !i.ksoftirqd_ran)
            || band(i.max_util, self.buflow, self.bufupper) != Band::High;
        if !line6 {
            return;
        }
        if k.budget < self.budget_threshold {
            k.budget = self.rule.increase(k.budget).min(self.budget_threshold);
        } else {
            let t = SimDuration((k.itr.ps() as f64 * (1.0 - self.t_decrease)).round() as u64);
            let t = if t < self.t_snap {
                SimDuration::ZERO
            } else {
                t
            };
            // never below the floor; a floor above T (set by pressure) leaves T where it is
            k.itr = t.max(self.t_min.min(k.itr));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Scheme, knobs, test_config};
    use super::*;

    fn us(v: f64) -> SimDuration {
        SimDuration::from_us(v)
    }

    #[test]
    fn pressure_raises_t_to_the_8000_per_second_interval_before_lowering_the_budget() {
        let mut r = Rhip::new(&test_config(Scheme::Rhip), true);
        let mut k = knobs(300, SimDuration::ZERO);
        r.on_enqueue(0.5, &mut k);
        assert!(k.itr.is_zero(), "at bufupper: nothing");
        r.on_enqueue(0.6, &mut k);
        assert_eq!(k.itr, SimDuration::from_ns(500.0));
        for _ in 0..249 {
            r.on_enqueue(0.6, &mut k);
        }
        assert_eq!(k.itr, us(125.0), "250 steps of 500 ns reach 1/8000 s");
        assert_eq!(k.budget, 300, "the budget waits for T");
        r.on_enqueue(0.6, &mut k);
        assert_eq!((k.itr, k.budget), (us(125.0), 150));
    }

    #[test]
    fn t_never_passes_the_threshold() {
        let mut r = Rhip::new(&test_config(Scheme::Rhip), true);
        let mut k = knobs(300, us(124.8));
        r.on_enqueue(0.9, &mut k);
        assert_eq!(k.itr, us(125.0));
    }

    fn interval(max: f64, ksd: bool) -> Interval {
        Interval {
            max_util: max,
            prev_max_util: 0.0,
            overflowed: max > 0.5,
            ksoftirqd_ran: ksd,
        }
    }

    #[test]
    fn a_calm_interval_raises_the_budget_to_300_then_lowers_t_by_ten_percent() {
        let mut r = Rhip::new(&test_config(Scheme::Rhip), true);
        let mut k = knobs(299, us(125.0));
        r.on_interval(&interval(0.2, true), &mut k);
        assert_eq!((k.budget, k.itr), (300, us(125.0)));
        r.on_interval(&interval(0.01, true), &mut k);
        assert_eq!((k.budget, k.itr), (300, us(112.5)));
        k.itr = SimDuration::from_ns(1100.0);
        r.on_interval(&interval(0.0, false), &mut k);
        assert!(k.itr.is_zero(), "990 ns is under the 1 us snap");
    }

    #[test]
    fn an_overflowing_interval_acts_only_when_ksoftirqd_was_idle() {
        let mut rhip = Rhip::new(&test_config(Scheme::Rhip), true);
        let mut noksd = Rhip::new(&test_config(Scheme::RhipNoKsd), false);
        let start = knobs(100, us(125.0));
        let (mut a, mut b) = (start, start);
        rhip.on_interval(&interval(0.7, true), &mut a);
        noksd.on_interval(&interval(0.7, true), &mut b);
        assert_eq!((a, b), (start, start), "ksoftirqd ran: both leave it");
        rhip.on_interval(&interval(0.7, false), &mut a);
        noksd.on_interval(&interval(0.7, false), &mut b);
        assert_eq!(a.budget, 101, "ksoftirqd idle: RHIP raises B_p");
        assert_eq!(b, start, "without the ksoftirqd rule nothing happens");
    }

    #[test]
    fn t_lowered_exactly_to_the_snap_interval_is_kept() {
        // T snaps to zero only *under* t_snap: 10 µs less 10 % is 9 µs, at a 9 µs snap it
        // stays 9 µs; from 9.99 µs (→ 8.991 µs) it snaps to an interrupt per packet.
        let mut c = test_config(Scheme::Rhip);
        c.t_snap = us(9.0);
        let mut r = Rhip::new(&c, true);
        let mut k = knobs(300, us(10.0));
        r.on_interval(&interval(0.01, true), &mut k);
        assert_eq!((k.budget, k.itr), (300, us(9.0)));
        k.itr = us(9.99);
        r.on_interval(&interval(0.01, true), &mut k);
        assert!(k.itr.is_zero(), "{:?}", k.itr);
    }

    #[test]
    fn a_calm_interval_never_lowers_t_below_its_floor() {
        let mut c = test_config(Scheme::Rhip);
        c.t_min = us(100.0);
        let mut r = Rhip::new(&c, true);
        let mut k = knobs(300, us(125.0));
        r.on_interval(&interval(0.01, true), &mut k);
        assert_eq!(k.itr, us(112.5), "above the floor: 10 % less");
        r.on_interval(&interval(0.01, true), &mut k);
        assert_eq!(k.itr, us(101.25));
        r.on_interval(&interval(0.01, true), &mut k);
        assert_eq!(k.itr, us(100.0), "91.125 us is held at the floor");
        r.on_interval(&interval(0.01, true), &mut k);
        assert_eq!(k.itr, us(100.0));
        // a T under the floor (the start, T = 0) is not raised by a calm interval
        let mut k = knobs(300, SimDuration::ZERO);
        r.on_interval(&interval(0.01, true), &mut k);
        assert!(k.itr.is_zero());
    }
}
