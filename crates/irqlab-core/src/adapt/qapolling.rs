//! QAPolling (Chang et al. 2007, §II-D; its own paper, their reference [13], is not
//! reproduced): a hybrid interrupt-polling scheme that adapts the protocol-processing budget
//! B_p (`netdev_budget`) to the socket buffer.
//!
//! As the paper describes it: B_p decreases when the current utilisation is above `bufupper`
//! (checked before each packet is queued), increases when the interval's maximum stayed at or
//! below `buflow`, and is micro-adjusted by the maxima of two consecutive intervals in
//! between. The rules themselves are this crate's choice (the paper names α = 2 and β = 1 but
//! not their use): B_p ← ⌊B_p / α⌋ per packet above `bufupper`; B_p ← B_p + β per interval
//! below `buflow`; in the band, B_p ← B_p − β if the maximum rose since the interval before,
//! else B_p + β (`adapt.micro = "trend"`; `"none"` leaves B_p alone there). The interval that
//! went above `bufupper` changes nothing more (the per-packet rule already acted).

use super::config::{ALPHA, BETA, BUDGET_MAX, BUDGET_MIN, BUFLOW, BUFUPPER, MICRO};
use super::{Band, BudgetRule, Controller, Interval, Knobs, band};

/// `adapt.scheme = "qapolling"`.
pub const KIND: &str = "qapolling";
/// The keys it reads.
pub const KEYS: &[&str] = &[BUFLOW, BUFUPPER, ALPHA, BETA, BUDGET_MIN, BUDGET_MAX, MICRO];
/// What its results depend on beyond the paper.
pub const CHOICE_NOTE: &str = "adapt.scheme = \"qapolling\": QAPolling's update rule is not in the paper \
     (adapt.alpha, adapt.beta, adapt.micro are used as irqlab chose): this result \
     depends on that choice (docs/applications.md)";

#[derive(Debug)]
pub struct QaPolling {
    rule: BudgetRule,
    buflow: f64,
    bufupper: f64,
    micro: bool,
}

impl QaPolling {
    pub fn new(c: &super::AdaptConfig) -> QaPolling {
        QaPolling {
            rule: BudgetRule::of(c),
            buflow: c.buflow,
            bufupper: c.bufupper,
            micro: c.micro,
        }
    }
}

impl Controller for QaPolling {
    fn on_enqueue(&mut self, util: f64, k: &mut Knobs) {
        if util > self.bufupper {
            k.budget = self.rule.decrease(k.budget);
        }
    }

    fn on_interval(&mut self, i: &Interval, k: &mut Knobs) {
        match band(i.max_util, self.buflow, self.bufupper) {
            Band::Low => k.budget = self.rule.increase(k.budget),
            Band::Middle if self.micro => {
                k.budget = if i.max_util > i.prev_max_util {
                    self.rule.step_down(k.budget)
                } else {
                    self.rule.increase(k.budget)
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
    use crate::time::SimDuration;

    fn interval(max: f64, prev: f64) -> Interval {
        Interval {
            max_util: max,
            prev_max_util: prev,
            overflowed: false,
            ksoftirqd_ran: true,
        }
    }

    #[test]
    fn a_packet_above_bufupper_halves_the_budget_and_never_touches_t() {
        let mut q = QaPolling::new(&test_config(Scheme::QaPolling));
        let mut k = knobs(300, SimDuration::ZERO);
        q.on_enqueue(0.50, &mut k);
        assert_eq!(k.budget, 300, "at bufupper is not above it");
        q.on_enqueue(0.51, &mut k);
        assert_eq!(k.budget, 150);
        for _ in 0..20 {
            q.on_enqueue(0.9, &mut k);
        }
        assert_eq!(k.budget, 1, "floor");
        assert_eq!(k.itr, SimDuration::ZERO);
    }

    #[test]
    fn a_quiet_interval_adds_beta_up_to_the_cap() {
        let mut q = QaPolling::new(&test_config(Scheme::QaPolling));
        let mut k = knobs(298, SimDuration::ZERO);
        for _ in 0..5 {
            q.on_interval(&interval(0.01, 0.0), &mut k);
        }
        assert_eq!(k.budget, 300);
    }

    #[test]
    fn the_band_follows_the_trend_of_the_maxima() {
        let mut q = QaPolling::new(&test_config(Scheme::QaPolling));
        let mut k = knobs(100, SimDuration::ZERO);
        q.on_interval(&interval(0.2, 0.1), &mut k);
        assert_eq!(k.budget, 99, "rising: step down");
        q.on_interval(&interval(0.1, 0.2), &mut k);
        assert_eq!(k.budget, 100, "falling: step up");
        q.on_interval(&interval(0.8, 0.1), &mut k);
        assert_eq!(
            k.budget, 100,
            "above bufupper: the per-packet rule acts, not the interval"
        );
        let mut c = test_config(Scheme::QaPolling);
        c.micro = false;
        let mut q = QaPolling::new(&c);
        q.on_interval(&interval(0.2, 0.1), &mut k);
        assert_eq!(k.budget, 100, "no micro-adjustment");
    }

    #[test]
    fn a_band_maximum_equal_to_the_one_before_adds_beta() {
        // Trend micro-adjustment: B_p steps down only if the maximum rose; an equal maximum
        // did not rise, so B_p + β.
        let mut q = QaPolling::new(&test_config(Scheme::QaPolling));
        let mut k = knobs(100, SimDuration::ZERO);
        q.on_interval(&interval(0.2, 0.2), &mut k);
        assert_eq!(k.budget, 101);
    }
}
