//! The receive-load controllers' settings (`adapt.*`): the scheme chosen, checked against the
//! interrupt-handling scheme and the moderation policy, and its parameters; and the settings
//! without effect.

use super::{Scheme, aic, rhip};
use crate::error::Error;
use crate::moderation::Moderation;
use crate::schema::{Params, keys, registry};
use crate::time::SimDuration;
use crate::warnings::{Warnings, no_effect};

/// The key that chooses the controller.
pub const SCHEME: &str = "adapt.scheme";

keys! {
    /// The controllers' parameters (every key but the choice), in the order the warnings list
    /// them.
    pub KEYS = "adapt." [
        INTERVAL_MS,
        BUFLOW,
        BUFUPPER,
        ALPHA,
        BETA,
        BUDGET_MIN,
        BUDGET_MAX,
        /// The micro-adjustment between the thresholds ([`Micro`]).
        MICRO,
        rhip::RATE,
        rhip::BUDGET,
        rhip::T_DECREASE,
        rhip::T_INCREASE_NS,
        rhip::T_SNAP_NS,
        rhip::T_MIN_NS,
        aic::MIN_RATE,
        aic::MAX_RATE,
        aic::RATE_STEP,
        aic::DECREASE,
    ];
}

registry! {
    key: MICRO;
    /// The micro-adjustment between the thresholds.
    pub enum Micro {
        /// By the trend of two consecutive interval maxima.
        Trend = "trend",
        /// None: the budget stays where it is.
        None = "none",
    }
}

/// The parameters of the schemes (`adapt.*`), validated.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptConfig {
    pub scheme: Scheme,
    /// Sampling interval.
    pub interval: SimDuration,
    /// Utilisation thresholds, fractions of the buffer.
    pub buflow: f64,
    pub bufupper: f64,
    /// Multiplicative decrease and additive increase.
    pub alpha: f64,
    pub beta: u64,
    /// Bounds of `netdev_budget`.
    pub budget_min: u64,
    pub budget_max: u64,
    /// Micro-adjustment between the thresholds by the trend of the interval maxima.
    pub micro: bool,
    /// RHIP: the interrupt rate above which T grows before B_p shrinks (8000/s), the budget
    /// at which T starts to shrink (300), T's decrease (10 %) and increase (500 ns), and the
    /// interval under which T snaps to zero.
    pub rhip_rate: f64,
    pub rhip_budget: u64,
    pub t_decrease: f64,
    pub t_increase: SimDuration,
    pub t_snap: SimDuration,
    /// RHIP: the smallest interval a calm interval lowers T to (zero: none, as printed).
    pub t_min: SimDuration,
    /// AIC: interrupt-rate floor (1/s), the rate at and above which the NIC is unthrottled,
    /// and the rate step that β counts.
    pub aic_min_rate: f64,
    pub aic_max_rate: f64,
    pub aic_rate_step: f64,
    /// AIC divides the rate at most once per interval.
    pub aic_once_per_interval: bool,
}

/// The controller of `p`, checked against the scheme (`napi` only) and the moderation policy
/// (one that writes to the NIC leaves no interval to a controller that writes it).
pub fn configure(
    p: &Params,
    scheme: crate::scheme::Scheme,
    moderation: &Moderation,
) -> Result<AdaptConfig, Error> {
    let a = Scheme::of(p)?;
    if a != Scheme::None {
        if scheme != crate::scheme::Scheme::Napi {
            return Err(p.inconsistent(
                SCHEME,
                format!(
                    "needs scheme \"napi\" (it adapts NAPI's budget and the interrupt interval); scheme is \"{}\"",
                    scheme.name()
                ),
            ));
        }
        if a.writes_itr() && moderation.writes() {
            return Err(p.inconsistent(
                crate::moderation::config::KEY,
                format!(
                    "adapt.scheme \"{}\" writes the interrupt interval itself: use \"static\" (its start is nic.itr_us) or \"off\"",
                    a.name()
                ),
            ));
        }
    }
    check_bounds(p)?;
    Ok(AdaptConfig {
        scheme: a,
        interval: SimDuration::from_ms(p.f64(INTERVAL_MS)),
        buflow: p.f64(BUFLOW),
        bufupper: p.f64(BUFUPPER),
        alpha: p.f64(ALPHA),
        beta: p.u64(BETA),
        budget_min: p.u64(BUDGET_MIN),
        budget_max: p.u64(BUDGET_MAX),
        micro: Micro::of(p)? == Micro::Trend,
        rhip_rate: p.f64(rhip::RATE),
        rhip_budget: p.u64(rhip::BUDGET),
        t_decrease: p.f64(rhip::T_DECREASE),
        t_increase: SimDuration::from_ns(p.f64(rhip::T_INCREASE_NS)),
        t_snap: SimDuration::from_ns(p.f64(rhip::T_SNAP_NS)),
        t_min: SimDuration::from_ns(p.f64(rhip::T_MIN_NS)),
        aic_min_rate: p.f64(aic::MIN_RATE),
        aic_max_rate: p.f64(aic::MAX_RATE),
        aic_rate_step: p.f64(aic::RATE_STEP),
        aic_once_per_interval: aic::Decrease::of(p)? == aic::Decrease::PerInterval,
    })
}

/// Each lower bound at most its upper bound.
fn check_bounds(p: &Params) -> Result<(), Error> {
    let pairs = [
        (BUFLOW, BUFUPPER, p.f64(BUFLOW) > p.f64(BUFUPPER)),
        (
            BUDGET_MIN,
            BUDGET_MAX,
            p.u64(BUDGET_MIN) > p.u64(BUDGET_MAX),
        ),
        (
            aic::MIN_RATE,
            aic::MAX_RATE,
            p.f64(aic::MIN_RATE) > p.f64(aic::MAX_RATE),
        ),
    ];
    for (low, high, exceeds) in pairs {
        if exceeds {
            return Err(p.inconsistent(low, format!("must not exceed {high} ({})", p.get(high))));
        }
    }
    Ok(())
}

/// The parameters without a controller.
pub fn warnings(w: &mut Warnings, cfg: &AdaptConfig) {
    w.rule(KEYS, cfg.scheme == Scheme::None, || {
        no_effect("only a receive-load controller uses it (adapt.scheme)")
    });
}

#[cfg(test)]
mod tests {
    use crate::scenario::test_support::*;
    use crate::schema::Value;

    #[test]
    fn aic_decreases_once_per_interval_unless_per_packet() {
        let sc = build(&[]).unwrap();
        assert!(sc.adapt.aic_once_per_interval);
        let sc = build(&[("adapt.aic_decrease", s("per-packet"))]).unwrap();
        assert!(!sc.adapt.aic_once_per_interval);
        let sc = build(&[("adapt.aic_decrease", s("per-interval"))]).unwrap();
        assert!(sc.adapt.aic_once_per_interval);
    }

    #[test]
    fn an_adapt_lower_bound_may_equal_its_upper_bound_but_not_exceed_it() {
        let sc = build(&[
            ("adapt.budget_min", Value::Int(300)),
            ("adapt.buflow", Value::Float(0.5)),
            ("adapt.aic_min_rate", Value::Int(100_000)),
        ])
        .unwrap();
        assert_eq!((sc.adapt.budget_min, sc.adapt.budget_max), (300, 300));
        assert_eq!((sc.adapt.buflow, sc.adapt.bufupper), (0.5, 0.5));
        assert_eq!(
            (sc.adapt.aic_min_rate, sc.adapt.aic_max_rate),
            (100_000.0, 100_000.0)
        );
        for (key, value, message) in [
            (
                "adapt.budget_min",
                Value::Int(301),
                "adapt.budget_min = 301: must not exceed adapt.budget_max (300)",
            ),
            (
                "adapt.buflow",
                Value::Float(0.75),
                "adapt.buflow = 0.75: must not exceed adapt.bufupper (0.5)",
            ),
            (
                "adapt.aic_min_rate",
                Value::Int(100_001),
                "adapt.aic_min_rate = 100001.0: must not exceed adapt.aic_max_rate (100000.0)",
            ),
        ] {
            let e = rejected(&[(key, value)]);
            assert_eq!(e.key(), key);
            assert_eq!(e.to_string(), message);
        }
    }

    #[test]
    fn adapt_steps_on_the_utilisation_trend_unless_micro_is_none() {
        assert!(build(&[]).unwrap().adapt.micro);
        assert!(!build(&[("adapt.micro", s("none"))]).unwrap().adapt.micro);
    }

    #[test]
    fn adapt_settings_without_a_controller_are_named() {
        let alpha = ("adapt.alpha", Value::Float(4.0));
        assert_eq!(warned(std::slice::from_ref(&alpha)), ["adapt.alpha"]);
        assert!(warned(&[("adapt.scheme", s("qapolling")), alpha]).is_empty());
    }
}
