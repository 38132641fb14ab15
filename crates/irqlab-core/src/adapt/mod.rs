//! Receive-load controllers: schemes that watch the application's socket buffer and adapt the
//! protocol-processing budget and the interrupt interval (Chang et al. 2007, §II-D, §IV, §V).
//!
//! A controller is a small state machine with two inputs and one output, like a moderation
//! policy (it never touches the host):
//!
//! - [`Controller::on_enqueue`]: a packet is about to be put into a socket of the core; the
//!   socket's utilisation (`sk_rmem_alloc / sk_rcvbuf`) at that moment;
//! - [`Controller::on_interval`]: a sampling interval (`adapt.interval_ms`, 100 ms) ended; the
//!   highest utilisation seen at an enqueue in it, the one of the interval before, whether a
//!   socket refused a packet and whether the core's ksoftirqd ran;
//! - both may change the [`Knobs`]: `netdev_budget` (the paper's B_p is `max_softirq_restart`
//!   × `netdev_budget`; the schemes vary `netdev_budget`, §V) and the interrupt interval T
//!   (the ITR: the least time between two interrupts; 0 = an interrupt per packet).
//!
//! The host applies the knobs to the core's kernel and to the vectors whose interrupts it
//! handles. One file per scheme: [`qapolling`] (the budget), [`aic`] (the interval), [`rhip`]
//! (both, Fig. 6 as printed, with or without its ksoftirqd rule).
//!
//! QAPolling's update rules are in a reference that the paper cites but does not reproduce:
//! the rules used here (divide by α, add β, a trend micro-adjustment) are this crate's choice,
//! exposed as keys, and every result of these schemes depends on them.

pub mod aic;
pub mod config;
pub mod qapolling;
pub mod rhip;

pub use config::AdaptConfig;

use crate::schema::registry;
use crate::time::SimDuration;

/// What a controller sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knobs {
    /// `net.core.netdev_budget`: packets per `net_rx_action` run.
    pub budget: u64,
    /// The interrupt interval T (ITR); zero: an interrupt per packet.
    pub itr: SimDuration,
}

/// What a controller learns at the end of a sampling interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Interval {
    /// Highest socket utilisation seen at an enqueue in the interval (0 if none).
    pub max_util: f64,
    /// The same, for the interval before.
    pub prev_max_util: f64,
    /// A socket refused a packet in the interval (`rcv_buffer` overflow).
    pub overflowed: bool,
    /// The core's ksoftirqd had CPU time in the interval.
    pub ksoftirqd_ran: bool,
}

/// A receive-load controller.
pub trait Controller {
    /// A packet is about to be queued on a socket whose utilisation is `util` (before it).
    fn on_enqueue(&mut self, util: f64, k: &mut Knobs);
    /// A sampling interval ended.
    fn on_interval(&mut self, i: &Interval, k: &mut Knobs);
}

/// `adapt.scheme = "none"`: no controller.
pub const NONE: &str = "none";

registry! {
    key: config::SCHEME;
    /// Which controller (`adapt.scheme`): one line per controller, its name from its file.
    pub enum Scheme {
        None = NONE,
        QaPolling = qapolling::KIND,
        Aic = aic::KIND,
        Rhip = rhip::KIND,
        RhipNoKsd = rhip::KIND_NOKSD,
    }
}

impl Scheme {
    /// What a result of this scheme depends on beyond the paper: the rules the paper leaves
    /// open, for which irqlab chose (`docs/applications.md`). Every report of the scheme
    /// carries it (`notes`).
    pub fn choice_note(self) -> Option<&'static str> {
        match self {
            Scheme::None => None,
            Scheme::QaPolling => Some(qapolling::CHOICE_NOTE),
            Scheme::Aic => Some(aic::CHOICE_NOTE),
            Scheme::Rhip | Scheme::RhipNoKsd => Some(rhip::CHOICE_NOTE),
        }
    }

    /// Whether the scheme writes the interrupt interval.
    pub fn writes_itr(self) -> bool {
        match self {
            Scheme::None | Scheme::QaPolling => false,
            Scheme::Aic | Scheme::Rhip | Scheme::RhipNoKsd => true,
        }
    }

    /// The keys the controller reads.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Scheme::None => &[],
            Scheme::QaPolling => qapolling::KEYS,
            Scheme::Aic => aic::KEYS,
            Scheme::Rhip | Scheme::RhipNoKsd => rhip::KEYS,
        }
    }
}

impl AdaptConfig {
    /// The controller of one core, if a scheme is chosen.
    pub fn controller(&self) -> Option<AnyController> {
        Some(match self.scheme {
            Scheme::None => return None,
            Scheme::QaPolling => AnyController::QaPolling(qapolling::QaPolling::new(self)),
            Scheme::Aic => AnyController::Aic(aic::Aic::new(self)),
            Scheme::Rhip => AnyController::Rhip(rhip::Rhip::new(self, true)),
            Scheme::RhipNoKsd => AnyController::Rhip(rhip::Rhip::new(self, false)),
        })
    }
}

/// Every controller, for static dispatch.
#[derive(Debug)]
pub enum AnyController {
    QaPolling(qapolling::QaPolling),
    Aic(aic::Aic),
    Rhip(rhip::Rhip),
}

impl Controller for AnyController {
    fn on_enqueue(&mut self, util: f64, k: &mut Knobs) {
        match self {
            AnyController::QaPolling(c) => c.on_enqueue(util, k),
            AnyController::Aic(c) => c.on_enqueue(util, k),
            AnyController::Rhip(c) => c.on_enqueue(util, k),
        }
    }
    fn on_interval(&mut self, i: &Interval, k: &mut Knobs) {
        match self {
            AnyController::QaPolling(c) => c.on_interval(i, k),
            AnyController::Aic(c) => c.on_interval(i, k),
            AnyController::Rhip(c) => c.on_interval(i, k),
        }
    }
}

/// The budget rules QAPolling's description implies (and RHIP reuses): bounds, a
/// multiplicative decrease by α, an additive increase by β.
#[derive(Clone, Copy, Debug)]
pub struct BudgetRule {
    pub min: u64,
    pub max: u64,
    pub alpha: f64,
    pub beta: u64,
}

impl BudgetRule {
    pub fn of(c: &AdaptConfig) -> BudgetRule {
        BudgetRule {
            min: c.budget_min,
            max: c.budget_max,
            alpha: c.alpha,
            beta: c.beta,
        }
    }

    /// `B ← max(min, ⌊B / α⌋)`.
    pub fn decrease(&self, b: u64) -> u64 {
        ((b as f64 / self.alpha).floor() as u64).clamp(self.min, self.max)
    }

    /// `B ← min(max, B + β)`.
    pub fn increase(&self, b: u64) -> u64 {
        b.saturating_add(self.beta).clamp(self.min, self.max)
    }

    /// `B ← max(min, B − β)`.
    pub fn step_down(&self, b: u64) -> u64 {
        b.saturating_sub(self.beta).clamp(self.min, self.max)
    }
}

/// Where the interval maximum lies against the thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    /// Never above `buflow`.
    Low,
    /// Above `buflow`, never above `bufupper`: the micro-adjustment band.
    Middle,
    /// Above `bufupper` at least once.
    High,
}

pub fn band(max_util: f64, buflow: f64, bufupper: f64) -> Band {
    if max_util <= buflow {
        Band::Low
    } else if max_util <= bufupper {
        Band::Middle
    } else {
        Band::High
    }
}

/// The knobs at `budget` and `itr`, for the controllers' tests.
#[cfg(test)]
pub(crate) fn knobs(budget: u64, itr: SimDuration) -> Knobs {
    Knobs { budget, itr }
}

#[cfg(test)]
pub(crate) fn test_config(scheme: Scheme) -> AdaptConfig {
    AdaptConfig {
        scheme,
        interval: SimDuration::from_ms(100.0),
        buflow: 0.03,
        bufupper: 0.5,
        alpha: 2.0,
        beta: 1,
        budget_min: 1,
        budget_max: 300,
        micro: true,
        rhip_rate: 8000.0,
        rhip_budget: 300,
        t_decrease: 0.1,
        t_increase: SimDuration::from_ns(500.0),
        t_snap: SimDuration::from_ns(1000.0),
        t_min: SimDuration::ZERO,
        aic_min_rate: 1.0,
        aic_max_rate: 100_000.0,
        aic_rate_step: 1000.0,
        aic_once_per_interval: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_controller_reads_only_adapt_keys_and_every_adapt_key_has_a_reader() {
        assert!(
            Scheme::None.keys().is_empty(),
            "no controller reads nothing"
        );
        let mut read: Vec<&str> = Vec::new();
        for &s in Scheme::ALL {
            for &k in s.keys() {
                assert!(
                    config::KEYS.contains(&k),
                    "{}: {k} is no adapt key",
                    s.name()
                );
                read.push(k);
            }
        }
        for &k in config::KEYS {
            assert!(
                k == config::INTERVAL_MS || read.contains(&k),
                "{k}: no controller reads it"
            );
        }
        assert!(Scheme::Rhip.keys().contains(&rhip::RATE));
        assert!(Scheme::Aic.keys().contains(&aic::MIN_RATE));
        assert!(!Scheme::QaPolling.keys().contains(&aic::MIN_RATE));
        assert_eq!(Scheme::Rhip.keys(), Scheme::RhipNoKsd.keys());
    }

    #[test]
    fn the_budget_rule_stays_in_its_bounds() {
        let r = BudgetRule::of(&test_config(Scheme::QaPolling));
        assert_eq!(r.decrease(300), 150);
        assert_eq!(r.decrease(3), 1);
        assert_eq!(r.decrease(1), 1, "never below the floor");
        assert_eq!(r.increase(299), 300);
        assert_eq!(r.increase(300), 300, "never above the cap");
        assert_eq!(r.step_down(1), 1);
        assert_eq!(r.step_down(10), 9);
    }

    #[test]
    fn bands_by_the_thresholds() {
        assert_eq!(
            band(0.03, 0.03, 0.5),
            Band::Low,
            "at buflow is never above it"
        );
        assert_eq!(band(0.031, 0.03, 0.5), Band::Middle);
        assert_eq!(band(0.5, 0.03, 0.5), Band::Middle);
        assert_eq!(band(0.51, 0.03, 0.5), Band::High);
    }

    #[test]
    fn each_scheme_has_its_name_and_only_the_interval_schemes_write_t() {
        for (name, scheme, writes_t) in [
            ("qapolling", Scheme::QaPolling, false),
            ("aic", Scheme::Aic, true),
            ("rhip", Scheme::Rhip, true),
            ("rhip-noksd", Scheme::RhipNoKsd, true),
            ("none", Scheme::None, false),
        ] {
            assert_eq!(Scheme::from_name(name), Ok(scheme), "{name}");
            assert_eq!(scheme.writes_itr(), writes_t, "{name}");
        }
    }
}
