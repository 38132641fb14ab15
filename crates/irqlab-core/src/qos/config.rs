//! The QoS settings (`qos.*`): the strategy (through the registry, [`Strategy`]), the RT
//! share that makes the classes `be` and `rt`, the LL ring budgets and the ring order; checked
//! against the scheme, the classes given and the topology; and the settings without effect.

use super::{BE, BE_NAME, Discipline, RT, RT_NAME, Strategy};
use crate::error::Error;
use crate::nic::config::QUEUES;
use crate::schema::{Params, Value, field_key, keys, registry};
use crate::scheme::Scheme;
use crate::traffic::config::{CLASS_NAME, CLASS_SHARE, CLASSES};
use crate::warnings::{Warnings, no_effect};

keys! {
    /// The QoS keys.
    pub KEYS = "qos." [
        /// The key that chooses the strategy.
        STRATEGY,
        /// The keys of a strategy.
        STRATEGY_KEYS = [
            /// The share of RT packets.
            RT_SHARE,
            /// The LL driver's ring budgets, `[BE, RT]` (empty: the strategy's own).
            RING_BUDGETS,
            /// The ring a pass visits first ([`RingOrder`]).
            RING_ORDER,
        ],
    ];
}

registry! {
    key: RING_ORDER;
    /// The order in which a pass visits the rings.
    pub enum RingOrder {
        /// RT first.
        RtFirst = "rt-first",
        /// BE first: the driver's PRB order.
        Prb = "prb",
    }
}

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

/// What a strategy lays out its rings from.
pub struct Context<'a> {
    pub p: &'a Params,
    pub strategy: Strategy,
    /// The traffic classes.
    pub classes: usize,
    /// The NAPI weight (the device budget of a poll).
    pub weight: u64,
    /// The core of each vector.
    pub vector_core: &'a [u16],
    /// The rings in the order a pass visits them (`qos.ring_order`).
    pub order: Vec<usize>,
    /// `qos.ring_budgets` as given (empty: the strategy's own).
    pub budgets: Vec<u64>,
}

impl Context<'_> {
    /// One vector with a BE and an RT ring, served by a ring discipline with `budgets` (by
    /// ring) in the order of `qos.ring_order`: the LL driver's (`ll`: passes repeated until the
    /// rings are empty or the weight is used, each ring visit a cost of its own) or the stock
    /// driver's (one pass).
    pub fn two_rings(&self, budgets: Vec<u64>, ll: bool) -> QosConfig {
        QosConfig {
            strategy: self.strategy,
            rings: 2,
            class_ring: vec![0, 1],
            class_vector: None,
            discipline: Some(Discipline {
                order: self.order.clone(),
                budgets,
                repeat: ll,
                visit_cost: ll,
            }),
        }
    }
}

/// Reads the `qos.*` keys and checks the strategy against the scheme (Salah's polling loop
/// has one ring per vector). With a strategy, sets the classes `be` and `rt` from
/// `qos.rt_share` (so that the resolved scenario lists them) and, for `rr`, two queue vectors
/// unless `nic.queues` is given. Call before the classes and the topology are built.
pub fn prepare(p: &mut Params, scheme: Scheme) -> Result<Strategy, Error> {
    let strategy = prepare_classes(p)?;
    if scheme.uses_poll_loop() && strategy != Strategy::Off {
        return Err(p.inconsistent(
            STRATEGY,
            format!(
                "scheme \"{}\" runs Salah's polling loop, one ring per vector; QoS needs a NAPI scheme (napi, irq, coalesce-count, coalesce-time, ideal)",
                scheme.name()
            ),
        ));
    }
    Ok(strategy)
}

fn prepare_classes(p: &mut Params) -> Result<Strategy, Error> {
    let strategy = Strategy::of(p)?;
    let budgets = p.u64_list(RING_BUDGETS);
    if strategy == Strategy::Off {
        // its keys have no effect (a warning)
        return Ok(strategy);
    }
    let r = p.f64(RT_SHARE);
    if p.entries(CLASSES) > 0 && !classes_are_echo(p, r) {
        return Err(Error::Inconsistent {
            key: CLASSES.into(),
            value: format!("{} classes", p.entries(CLASSES)),
            reason: format!(
                "qos.strategy = \"{}\" makes the classes be and rt itself (qos.rt_share); remove traffic.classes",
                strategy.name()
            ),
        });
    }
    if !budgets.is_empty() && budgets.len() != 2 {
        return Err(p.inconsistent(
            RING_BUDGETS,
            "must be two ring budgets, [BE, RT] (the driver's PRB order)",
        ));
    }
    p.set_entry(CLASSES, BE, CLASS_NAME, Value::Str(BE_NAME.into()));
    p.set_entry(CLASSES, BE, CLASS_SHARE, Value::Float(1.0 - r));
    p.set_entry(CLASSES, RT, CLASS_NAME, Value::Str(RT_NAME.into()));
    p.set_entry(CLASSES, RT, CLASS_SHARE, Value::Float(r));
    if strategy == Strategy::Rr && !p.given(QUEUES) {
        p.set(QUEUES, Value::Int(super::rr::QUEUES));
    }
    Ok(strategy)
}

/// Whether the classes given are the ones a strategy makes (the echo of a resolved scenario).
fn classes_are_echo(p: &Params, r: f64) -> bool {
    let field = |i: usize, f: &str| p.get(&field_key(CLASSES, i, f)).clone();
    p.entries(CLASSES) == 2
        && field(BE, CLASS_NAME) == Value::Str(BE_NAME.into())
        && field(RT, CLASS_NAME) == Value::Str(RT_NAME.into())
        && field(BE, CLASS_SHARE) == Value::Float(1.0 - r)
        && field(RT, CLASS_SHARE) == Value::Float(r)
}

/// The QoS configuration once the topology is known (`rr` checks that its two vectors are on
/// one core).
pub fn configure(
    p: &Params,
    strategy: Strategy,
    classes: usize,
    weight: u64,
    vector_core: &[u16],
) -> Result<QosConfig, Error> {
    let order = match RingOrder::of(p)? {
        RingOrder::RtFirst => vec![RT, BE],
        RingOrder::Prb => vec![BE, RT],
    };
    strategy.layout(&Context {
        p,
        strategy,
        classes,
        weight,
        vector_core,
        order,
        budgets: p.u64_list(RING_BUDGETS),
    })
}

/// The keys of a strategy without one, and those a strategy does not read.
pub fn warnings(w: &mut Warnings, strategy: Strategy) {
    w.rule(STRATEGY_KEYS, strategy == Strategy::Off, || {
        no_effect("there is no QoS strategy (qos.strategy = \"off\")")
    });
    let reads = strategy.keys();
    w.rule(&[RING_BUDGETS], !reads.contains(&RING_BUDGETS), || {
        no_effect("ring budgets are the LL driver's (qos.strategy = \"ll-rr\" or \"ll-wfq\")")
    });
    w.rule(&[RING_ORDER], !reads.contains(&RING_ORDER), || {
        no_effect("the strategy has one ring per vector")
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Value;

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
