//! Ingress QoS on the receive path (Beifuß et al. 2016): the NIC classifies each packet into a
//! real-time (RT) or best-effort (BE) class, the class picks an Rx ring (and, for `rr`, a queue
//! vector), and the driver's poll function serves the vector's rings by a *ring discipline*.
//!
//! Strategies (`qos.strategy`):
//! - `off`: the classes of `traffic.classes`, a ring each, the stock equal split in class order
//!   (the host's behaviour without QoS).
//! - `sq`: no classification: one ring per vector takes both classes (the stock driver).
//! - `rr`: two queue vectors on one core, the BE one (vector 0) and the RT one (vector 1), each
//!   with its own ring, IRQ line and NAPI of the full weight; `net_rx_action` serves them round
//!   robin.
//! - `vmdq`: one vector, a BE and an RT ring, the stock driver's equal split of the weight
//!   (`max(weight / rings, 1)` per ring, one pass).
//! - `ll-rr`, `ll-wfq`: one vector, a BE and an RT ring with ring budgets (4/4 and 4/60), served
//!   by the LL driver's procedure ([`Discipline::next`]).
//!
//! The classes are `be` (index 0) and `rt` (index 1), in the order of the driver's `PRB`
//! parameter (increasing priority); each packet is RT with probability `qos.rt_share`, drawn
//! independently, so the two classes are independent Poisson streams when the arrivals are.

use crate::error::Error;
use crate::schema::{Params, Value};

/// Class (and ring) indices of the two QoS classes, in PRB order.
pub const BE: usize = 0;
pub const RT: usize = 1;

/// The strategies, as `qos.strategy` names them.
pub const STRATEGIES: &[&str] = &["off", "sq", "rr", "vmdq", "ll-rr", "ll-wfq"];

/// How the driver serves the vector's Rx rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Off,
    Sq,
    Rr,
    Vmdq,
    LlRr,
    LlWfq,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Off => "off",
            Strategy::Sq => "sq",
            Strategy::Rr => "rr",
            Strategy::Vmdq => "vmdq",
            Strategy::LlRr => "ll-rr",
            Strategy::LlWfq => "ll-wfq",
        }
    }

    fn from_name(name: &str) -> Strategy {
        match name {
            "sq" => Strategy::Sq,
            "rr" => Strategy::Rr,
            "vmdq" => Strategy::Vmdq,
            "ll-rr" => Strategy::LlRr,
            "ll-wfq" => Strategy::LlWfq,
            _ => Strategy::Off,
        }
    }

    /// The paper's ring budgets `[BE, RT]` (`PRB`).
    fn default_budgets(self) -> Option<[u64; 2]> {
        match self {
            Strategy::LlRr => Some([4, 4]),
            Strategy::LlWfq => Some([4, 60]),
            _ => None,
        }
    }
}

/// One step of a poll, as the ring discipline decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Start a visit of this ring (it costs `platform.ring_switch_ns`).
    Visit(usize),
    /// Take the next packet of this ring for protocol processing.
    Take(usize),
    /// The poll returns: complete (every ring empty: `napi_complete_done`, re-enable the
    /// IRQ) or not (the NAPI reports its whole weight and stays on the poll list).
    Done { complete: bool },
}

/// Where a poll is in the discipline: the position in the visit order, the packets taken from
/// the ring visited and from all rings, and whether a ring used its whole budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollState {
    pos: usize,
    ring_work: u64,
    work: u64,
    visited: bool,
    budget_used: bool,
}

/// A ring discipline for a vector with several Rx rings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discipline {
    /// Ring indices in the order a pass visits them.
    pub order: Vec<usize>,
    /// Budget of each ring (by ring index) in one visit.
    pub budgets: Vec<u64>,
    /// LL: repeat passes until every ring is empty or the device budget is used. Otherwise
    /// (stock) one pass, incomplete if a ring used its budget.
    pub repeat: bool,
    /// Each ring visit costs `platform.ring_switch_ns` (a job of its own).
    pub visit_cost: bool,
}

impl Discipline {
    /// The next step of a poll with device budget `weight`; `unprocessed(r)` is the number of
    /// packets waiting in ring `r` now. A `Take` counts its packet at once.
    ///
    /// The LL procedure (Beifuß et al. §III-B, §IV-B): a pass visits the rings in order and
    /// takes from each up to `min(ring budget, weight − taken)`; a visit that would start
    /// with the device budget used ends the pass. After a pass: every ring empty → complete;
    /// the device budget used → incomplete; otherwise another pass. So a poll never takes
    /// more than `weight`.
    ///
    /// ```
    /// use irqlab_core::qos::{Discipline, PollState, Step};
    /// // LL-WFQ, RT first: RT (ring 1) holds 70 packets, BE (ring 0) holds 10
    /// let d = Discipline { order: vec![1, 0], budgets: vec![4, 60], repeat: true, visit_cost: false };
    /// let mut rings = [10usize, 70];
    /// let mut st = PollState::default();
    /// let mut taken = [0u64; 2];
    /// let done = loop {
    ///     match d.next(&mut st, 64, |r| rings[r]) {
    ///         Step::Take(r) => { rings[r] -= 1; taken[r] += 1; }
    ///         Step::Visit(_) => {}
    ///         Step::Done { complete } => break complete,
    ///     }
    /// };
    /// assert_eq!((taken, done), ([4, 60], false));
    /// ```
    pub fn next(
        &self,
        st: &mut PollState,
        weight: u64,
        unprocessed: impl Fn(usize) -> usize,
    ) -> Step {
        let n = self.order.len();
        loop {
            if st.pos == n {
                if !self.repeat {
                    return Step::Done {
                        complete: !st.budget_used,
                    };
                }
                if (0..self.budgets.len()).all(|r| unprocessed(r) == 0) {
                    return Step::Done { complete: true };
                }
                if st.work >= weight {
                    return Step::Done { complete: false };
                }
                st.pos = 0;
                st.ring_work = 0;
                st.visited = false;
                continue;
            }
            let r = self.order[st.pos];
            if !st.visited {
                if st.work >= weight {
                    // no quota left: the pass ends here
                    st.pos = n;
                    continue;
                }
                st.visited = true;
                if self.visit_cost {
                    return Step::Visit(r);
                }
            }
            if st.ring_work < self.budgets[r] && st.work < weight && unprocessed(r) > 0 {
                st.ring_work += 1;
                st.work += 1;
                return Step::Take(r);
            }
            if st.ring_work >= self.budgets[r] {
                st.budget_used = true;
            }
            st.pos += 1;
            st.ring_work = 0;
            st.visited = false;
        }
    }
}

/// The order in which a pass visits the rings (`qos.ring_order`).
pub const RING_ORDERS: &[&str] = &["rt-first", "prb"];

/// The QoS configuration of a scenario, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct QosConfig {
    pub strategy: Strategy,
    /// Rx rings per vector.
    pub rings: usize,
    /// The ring of each class.
    pub class_ring: Vec<u16>,
    /// `rr`: the vector of each class (instead of RSS).
    pub class_vector: Option<Vec<u16>>,
    /// The ring discipline (`vmdq`, `ll-*`); `None`: the host's stock loop.
    pub discipline: Option<Discipline>,
}

impl QosConfig {
    /// No QoS: a ring per class of `traffic.classes`.
    pub fn off(classes: usize) -> QosConfig {
        QosConfig {
            strategy: Strategy::Off,
            rings: classes,
            class_ring: (0..classes as u16).collect(),
            class_vector: None,
            discipline: None,
        }
    }
}

fn inconsistent(p: &Params, key: &str, reason: impl Into<String>) -> Error {
    Error::Inconsistent {
        key: key.into(),
        value: p.get(key).to_string(),
        reason: reason.into(),
    }
}

/// Reads the `qos.*` keys. With a strategy, sets the classes `be` and `rt` from
/// `qos.rt_share` (so that the resolved scenario lists them) and, for `rr`, two queue
/// vectors unless `nic.queues` is given. Call before the classes and the topology are built.
pub fn prepare(p: &mut Params) -> Result<Strategy, Error> {
    let strategy = Strategy::from_name(p.str("qos.strategy"));
    let budgets = p.u64_list("qos.ring_budgets");
    if strategy == Strategy::Off {
        // its keys have no effect (a warning, `scenario`)
        return Ok(strategy);
    }
    let r = p.f64("qos.rt_share");
    if p.entries("traffic.classes") > 0 && !classes_are_echo(p, r) {
        return Err(Error::Inconsistent {
            key: "traffic.classes".into(),
            value: format!("{} classes", p.entries("traffic.classes")),
            reason: format!(
                "qos.strategy = \"{}\" makes the classes be and rt itself (qos.rt_share); remove traffic.classes",
                strategy.name()
            ),
        });
    }
    if !budgets.is_empty() && budgets.len() != 2 {
        return Err(inconsistent(
            p,
            "qos.ring_budgets",
            "must be two ring budgets, [BE, RT] (the driver's PRB order)",
        ));
    }
    p.set_entry("traffic.classes", 0, "name", Value::Str("be".into()));
    p.set_entry("traffic.classes", 0, "share", Value::Float(1.0 - r));
    p.set_entry("traffic.classes", 1, "name", Value::Str("rt".into()));
    p.set_entry("traffic.classes", 1, "share", Value::Float(r));
    if strategy == Strategy::Rr && !p.given("nic.queues") {
        p.set("nic.queues", Value::Int(2));
    }
    Ok(strategy)
}

/// Whether the classes given are the ones a strategy makes (the echo of a resolved scenario).
fn classes_are_echo(p: &Params, r: f64) -> bool {
    let field = |i: usize, f: &str| {
        p.get(&crate::schema::field_key("traffic.classes", i, f))
            .clone()
    };
    p.entries("traffic.classes") == 2
        && field(0, "name") == Value::Str("be".into())
        && field(1, "name") == Value::Str("rt".into())
        && field(0, "share") == Value::Float(1.0 - r)
        && field(1, "share") == Value::Float(r)
}

/// The QoS configuration once the topology is known: checks that `rr` has its two vectors on
/// one core.
pub fn configure(
    p: &Params,
    strategy: Strategy,
    classes: usize,
    weight: u64,
    vector_core: &[u16],
) -> Result<QosConfig, Error> {
    let rt_first = p.str("qos.ring_order") == "rt-first";
    let order = if rt_first { vec![RT, BE] } else { vec![BE, RT] };
    let budgets = p.u64_list("qos.ring_budgets");
    let q = match strategy {
        Strategy::Off => QosConfig::off(classes),
        Strategy::Sq => QosConfig {
            strategy,
            rings: 1,
            class_ring: vec![0, 0],
            class_vector: None,
            discipline: None,
        },
        Strategy::Rr => {
            if vector_core.len() != 2 {
                return Err(inconsistent(
                    p,
                    "nic.queues",
                    "qos.strategy = \"rr\" needs two queue vectors on one core: the BE one (0) and the RT one (1)",
                ));
            }
            if vector_core[0] != vector_core[1] {
                let key = if p.u64_list("nic.irq_affinity").is_empty() {
                    "host.cores"
                } else {
                    "nic.irq_affinity"
                };
                return Err(inconsistent(
                    p,
                    key,
                    format!(
                        "qos.strategy = \"rr\" serves its BE and RT vectors on one core; they are on cores {} and {} (set nic.irq_affinity = [{}, {}])",
                        vector_core[0], vector_core[1], vector_core[0], vector_core[0]
                    ),
                ));
            }
            QosConfig {
                strategy,
                rings: 1,
                class_ring: vec![0, 0],
                class_vector: Some(vec![0, 1]),
                discipline: None,
            }
        }
        Strategy::Vmdq => {
            let share = (weight / 2).max(1);
            QosConfig {
                strategy,
                rings: 2,
                class_ring: vec![0, 1],
                class_vector: None,
                discipline: Some(Discipline {
                    order,
                    budgets: vec![share, share],
                    repeat: false,
                    visit_cost: false,
                }),
            }
        }
        Strategy::LlRr | Strategy::LlWfq => {
            let b = if budgets.is_empty() {
                strategy.default_budgets().expect("LL budgets").to_vec()
            } else {
                budgets
            };
            QosConfig {
                strategy,
                rings: 2,
                class_ring: vec![0, 1],
                class_vector: None,
                discipline: Some(Discipline {
                    order,
                    budgets: b,
                    repeat: true,
                    visit_cost: true,
                }),
            }
        }
    };
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one poll over rings holding `contents` (nothing arrives meanwhile); returns the
    /// rings taken from in order, the visits, and whether it completed.
    fn poll(d: &Discipline, contents: &[usize], weight: u64) -> (Vec<usize>, Vec<usize>, bool) {
        let mut rings = contents.to_vec();
        let mut st = PollState::default();
        let (mut takes, mut visits) = (Vec::new(), Vec::new());
        loop {
            match d.next(&mut st, weight, |r| rings[r]) {
                Step::Take(r) => {
                    rings[r] -= 1;
                    takes.push(r);
                }
                Step::Visit(r) => visits.push(r),
                Step::Done { complete } => return (takes, visits, complete),
            }
        }
    }

    fn ll(budgets: [u64; 2], rt_first: bool) -> Discipline {
        Discipline {
            order: if rt_first { vec![RT, BE] } else { vec![BE, RT] },
            budgets: budgets.to_vec(),
            repeat: true,
            visit_cost: true,
        }
    }

    fn counts(takes: &[usize]) -> [usize; 2] {
        let mut c = [0; 2];
        for &r in takes {
            c[r] += 1;
        }
        c
    }

    #[test]
    fn ll_rr_alternates_four_and_four_for_eight_passes_under_backlog() {
        let (takes, visits, complete) = poll(&ll([4, 4], true), &[100, 100], 64);
        assert_eq!(takes.len(), 64);
        assert!(!complete);
        // RT first, then BE, 4 each, 8 passes
        let expect: Vec<usize> = (0..8)
            .flat_map(|_| [RT; 4].into_iter().chain([BE; 4]))
            .collect();
        assert_eq!(takes, expect);
        assert_eq!(visits.len(), 16);
    }

    #[test]
    fn ll_wfq_takes_60_rt_and_4_be_in_one_pass() {
        let (takes, visits, complete) = poll(&ll([4, 60], true), &[100, 100], 64);
        assert_eq!(counts(&takes), [4, 60]);
        assert_eq!(&takes[..60], &[RT; 60][..]);
        assert_eq!(visits, vec![RT, BE]);
        assert!(!complete);
    }

    #[test]
    fn a_ring_that_runs_dry_lets_the_other_use_the_rest_of_the_budget() {
        // RT has 2: every later pass visits it empty and BE takes 4 per pass until 64
        let (takes, _, complete) = poll(&ll([4, 4], true), &[100, 2], 64);
        assert_eq!(counts(&takes), [62, 2]);
        assert!(!complete);
    }

    #[test]
    fn all_rings_emptied_completes_even_with_budget_left() {
        let (takes, _, complete) = poll(&ll([4, 4], true), &[5, 3], 64);
        assert_eq!(counts(&takes), [5, 3]);
        assert!(complete);
        // emptied exactly at the device budget: the empty check comes first (the paper)
        let (takes, _, complete) = poll(&ll([4, 60], true), &[4, 60], 64);
        assert_eq!(takes.len(), 64);
        assert!(complete);
    }

    #[test]
    fn the_device_budget_is_never_exceeded() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..2000 {
            let budgets = [1 + rnd(100), 1 + rnd(100)];
            let weight = 1 + rnd(128);
            let contents = [rnd(300) as usize, rnd(300) as usize];
            let d = ll(budgets, rnd(2) == 0);
            let (takes, _, complete) = poll(&d, &contents, weight);
            assert!(
                takes.len() as u64 <= weight,
                "{budgets:?} {weight} {contents:?}"
            );
            let total = (contents[0] + contents[1]) as u64;
            // it takes everything or the whole budget; complete iff nothing is left
            assert_eq!(takes.len() as u64, total.min(weight));
            assert_eq!(complete, total <= weight);
        }
    }

    #[test]
    fn an_rt_budget_above_the_device_budget_starves_be() {
        let (takes, _, complete) = poll(&ll([4, 100], true), &[50, 500], 64);
        assert_eq!(counts(&takes), [0, 64]);
        assert!(!complete);
        // in PRB order BE is served first and gets its 4
        let (takes, _, _) = poll(&ll([4, 100], false), &[50, 500], 64);
        assert_eq!(counts(&takes), [4, 60]);
    }

    #[test]
    fn vmdq_is_one_pass_of_equal_shares_and_incomplete_when_a_share_is_used() {
        let d = Discipline {
            order: vec![BE, RT],
            budgets: vec![32, 32],
            repeat: false,
            visit_cost: false,
        };
        let (takes, visits, complete) = poll(&d, &[100, 5], 64);
        assert_eq!(counts(&takes), [32, 5]);
        assert!(visits.is_empty());
        assert!(!complete);
        let (takes, _, complete) = poll(&d, &[10, 5], 64);
        assert_eq!(counts(&takes), [10, 5]);
        assert!(complete);
        // used its share exactly: incomplete, as the stock driver reports
        let (_, _, complete) = poll(&d, &[32, 0], 64);
        assert!(!complete);
    }

    fn scenario(pairs: &[(&str, Value)]) -> Result<crate::Scenario, Error> {
        crate::Scenario::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())))
    }

    #[test]
    fn vmdq_splits_the_weight_equally_between_its_two_rings() {
        let vmdq = |weight: i128| {
            let s = scenario(&[
                ("qos.strategy", Value::Str("vmdq".into())),
                ("kernel.napi_weight", Value::Int(weight)),
            ])
            .unwrap();
            s.qos.discipline.expect("vmdq serves two rings").budgets
        };
        assert_eq!(vmdq(64), [32, 32]);
        assert_eq!(vmdq(7), [3, 3]);
        // at least one packet each
        assert_eq!(vmdq(1), [1, 1]);
    }

    #[test]
    fn classes_given_with_a_strategy_must_be_its_own_be_and_rt() {
        let with = |names: [&str; 2], shares: [f64; 2]| {
            scenario(&[
                ("qos.strategy", Value::Str("ll-rr".into())),
                ("qos.rt_share", Value::Float(0.25)),
                ("traffic.classes.0.name", Value::Str(names[0].into())),
                ("traffic.classes.0.share", Value::Float(shares[0])),
                ("traffic.classes.1.name", Value::Str(names[1].into())),
                ("traffic.classes.1.share", Value::Float(shares[1])),
            ])
        };
        // the echo of a resolved scenario is accepted
        assert!(with(["be", "rt"], [0.75, 0.25]).is_ok());
        // two classes with the right shares but other names, or the right names but other
        // shares, are refused
        for e in [
            with(["gold", "bronze"], [0.75, 0.25]).unwrap_err(),
            with(["be", "rt"], [0.5, 0.5]).unwrap_err(),
            with(["rt", "be"], [0.75, 0.25]).unwrap_err(),
        ] {
            assert_eq!(e.key(), "traffic.classes", "{e}");
            assert!(e.to_string().contains("makes the classes be and rt"), "{e}");
        }
    }
}
