//! The traffic's settings (`traffic.*`): the kind of source (a registry: each kind's file
//! declares its name), the rate, the frame sizes, the flows and their popularity, the traffic
//! classes; and the settings without effect. Each kind's own settings are in its file:
//! [`super::onoff`], [`super::pcap`], [`super::rr`].

use std::sync::Arc;

use super::replay::ReplayConfig;
use super::{cbr, onoff, pcap, poisson, rr};
use crate::error::Error;
use crate::schema::{Params, Value, field_key, keys, registry};
use crate::warnings::{Warnings, no_effect};

keys! {
    /// The keys of every kind of traffic.
    pub KEYS = "traffic." [
        /// The key that chooses the kind of source ([`TrafficKind`]).
        KIND,
        RATE_PPS,
        SIZE_BYTES,
        SIZES,
        FLOWS,
        FLOW_ZIPF_S,
    ];
}
/// The traffic classes, numbered entries (`traffic.classes.N.name`, `.share`).
pub const CLASSES: &str = "traffic.classes";
pub const CLASS_NAME: &str = "name";
pub const CLASS_SHARE: &str = "share";

registry! {
    key: KIND;
    /// The arrival process: one line per kind, its name from its file.
    pub enum TrafficKind {
        Poisson = poisson::KIND,
        Cbr = cbr::KIND,
        ParetoOnOff = onoff::KIND,
        /// A capture replayed (`traffic::replay`).
        Pcap = pcap::KIND,
        /// Requests answered by the apps (`traffic::rr`).
        Rr = rr::KIND,
    }
}

/// Frame sizes: one size, or an empirical table sampled by its cumulative weights.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    Fixed(u32),
    Table {
        sizes: Vec<u32>,
        /// Cumulative probabilities, the last exactly 1.
        cum: Vec<f64>,
    },
}

impl SizeDist {
    /// Mean frame size, bytes.
    pub fn mean(&self) -> f64 {
        self.pmf().iter().map(|(s, p)| *s as f64 * p).sum()
    }

    /// The largest frame size, bytes.
    pub fn largest(&self) -> u32 {
        self.pmf().iter().map(|(s, _)| *s).max().unwrap_or(1)
    }

    /// `(size, probability)` pairs.
    pub fn pmf(&self) -> Vec<(u32, f64)> {
        match self {
            SizeDist::Fixed(s) => vec![(*s, 1.0)],
            SizeDist::Table { sizes, cum } => {
                let mut prev = 0.0;
                sizes
                    .iter()
                    .zip(cum)
                    .map(|(s, c)| {
                        let p = c - prev;
                        prev = *c;
                        (*s, p)
                    })
                    .collect()
            }
        }
    }
}

/// `traffic.sizes = "fixed"`: every frame `traffic.size_bytes`.
pub const FIXED: &str = "fixed";

/// The built-in frame-size tables (`bytes:weight` pairs; see docs/traffic.md for sources).
pub const SIZE_TABLES: &[(&str, &str)] = &[
    (
        "salah2007",
        "64:36, 90:3, 128:4, 256:3, 300:2, 400:2, 512:2, 570:11, 594:12, 800:1, 1000:1.5, 1300:2, 1518:20.5",
    ),
    ("imix", "64:7, 594:4, 1518:1"),
];

fn parse_sizes(p: &Params) -> Result<SizeDist, Error> {
    let text = p.str(SIZES);
    if text == FIXED {
        return Ok(SizeDist::Fixed(p.u64(SIZE_BYTES) as u32));
    }
    let table = SIZE_TABLES
        .iter()
        .find(|(name, _)| *name == text)
        .map_or(text, |(_, t)| t);
    let bad = |reason: String| Error::OutOfRange {
        key: SIZES.into(),
        value: Value::Str(text.to_string()).to_string(),
        allowed: reason,
    };
    let mut sizes = Vec::new();
    let mut weights = Vec::new();
    for item in table.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let shown = Value::Str(item.to_string());
        let (b, w) = item.split_once(':').ok_or_else(|| {
            let names: Vec<&str> = SIZE_TABLES.iter().map(|(n, _)| *n).collect();
            bad(format!(
                "expected \"fixed\", a table name ({}) or \"bytes:weight, ...\" pairs; {shown} has no ':'",
                names.join(", ")
            ))
        })?;
        let b: u32 = b
            .trim()
            .parse()
            .ok()
            .filter(|b| (1..=65_535).contains(b))
            .ok_or_else(|| {
                bad(format!(
                    "{shown}: the size must be an integer in 1 … 65535 bytes"
                ))
            })?;
        let w: f64 = w
            .trim()
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| bad(format!("{shown}: the weight must be a number >= 0")))?;
        sizes.push(b);
        weights.push(w);
    }
    let total: f64 = weights.iter().sum();
    if sizes.is_empty() || total <= 0.0 {
        return Err(bad(
            "the table needs at least one size with a positive weight".into(),
        ));
    }
    let cum = cumulative(weights, total);
    Ok(SizeDist::Table { sizes, cum })
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrafficConfig {
    pub kind: TrafficKind,
    pub rate_pps: f64,
    pub sizes: SizeDist,
    /// Pareto ON/OFF parameters (for `ParetoOnOff`).
    pub onoff: Option<onoff::OnOffConfig>,
    /// The capture and how it is replayed (for `Pcap`).
    pub replay: Option<ReplayConfig>,
    /// Number of flows.
    pub flows: usize,
    /// Cumulative flow popularity (Zipf); `None`: uniform.
    pub flow_cum: Option<Arc<[f64]>>,
    /// The traffic classes, at least one.
    pub classes: Vec<ClassConfig>,
    /// Cumulative class shares, the last exactly 1.
    pub class_cum: Vec<f64>,
}

/// A traffic class: its own Rx ring in every vector.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassConfig {
    pub name: String,
    pub share: f64,
}

/// The arrivals of `p` (kind `kind`; `replay`, its capture for `pcap`): their rate, frame
/// sizes, on/off sources and flows. The classes are the default one until [`classes`] reads
/// them (after QoS, which may make its own).
pub fn configure(
    p: &Params,
    kind: TrafficKind,
    replay: Option<ReplayConfig>,
) -> Result<TrafficConfig, Error> {
    let mut rate_pps = p.f64(RATE_PPS);
    let sizes = match &replay {
        Some(r) => {
            // the capture's own rate (resolved at the end of the build, once the warnings
            // have read what was given)
            if let Some(rate) = r.rate_pps() {
                rate_pps = rate.clamp(1e-3, 1e9);
            }
            pcap::sizes_of(&r.scan)
        }
        None => parse_sizes(p)?,
    };
    let onoff = if kind == TrafficKind::ParetoOnOff {
        Some(onoff::configure(p, rate_pps, &sizes)?)
    } else {
        None
    };
    // traffic.rate_pps ≤ 1e9 keeps a CBR spacing at 1000 ps or more
    let (flows, flow_cum) = match &replay {
        Some(r) => (r.scan.flows.len(), None),
        None if kind == TrafficKind::Rr => (p.u64(rr::CLIENTS) as usize, None),
        None => {
            let flows = p.u64(FLOWS) as usize;
            let zipf_s = p.f64(FLOW_ZIPF_S);
            let cum = (zipf_s > 0.0 && flows > 1).then(|| Arc::from(zipf_cum(flows, zipf_s)));
            (flows, cum)
        }
    };
    Ok(TrafficConfig {
        kind,
        rate_pps,
        sizes,
        onoff,
        replay,
        flows,
        flow_cum,
        classes: vec![ClassConfig {
            name: DEFAULT_CLASS.into(),
            share: 1.0,
        }],
        class_cum: vec![1.0],
    })
}

/// The class of a scenario without `traffic.classes`.
const DEFAULT_CLASS: &str = "default";

/// The settings of the kinds not chosen, and of sizes and flows that cannot vary.
pub fn warnings(w: &mut Warnings, kind: TrafficKind) {
    onoff::warnings(w, kind == TrafficKind::ParetoOnOff);
    pcap::warnings(w, kind == TrafficKind::Pcap);
    let sizes = w.p.str(SIZES).to_string();
    w.rule(&[SIZE_BYTES], sizes != FIXED, || {
        no_effect(&format!(
            "traffic.sizes = \"{sizes}\" gives the frame sizes"
        ))
    });
    let one_flow = w.p.u64(FLOWS) == 1;
    w.rule(&[FLOW_ZIPF_S], one_flow, || {
        no_effect("there is one flow (traffic.flows = 1)")
    });
}

/// Cumulative Zipf popularity of `n` flows: flow `k` has weight `1 / (k + 1)^s`.
fn zipf_cum(n: usize, s: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
    let total: f64 = w.iter().sum();
    cumulative(w, total)
}

/// The cumulative distribution of `weights` (at least one) that sum to `total`, its last
/// entry exactly 1 (a uniform draw below 1 always finds an entry).
fn cumulative(weights: impl IntoIterator<Item = f64>, total: f64) -> Vec<f64> {
    let mut acc = 0.0;
    let mut cum: Vec<f64> = weights
        .into_iter()
        .map(|w| {
            acc += w;
            acc / total
        })
        .collect();
    *cum.last_mut().expect("at least one weight") = 1.0;
    cum
}

/// The traffic classes (default: one, named "default") and their cumulative shares; resolves
/// empty names to `c0`, `c1`, … and all-zero shares to equal shares.
pub fn classes(p: &mut Params) -> Result<(Vec<ClassConfig>, Vec<f64>), Error> {
    let n = p.entries(CLASSES);
    if n == 0 {
        return Ok((
            vec![ClassConfig {
                name: DEFAULT_CLASS.into(),
                share: 1.0,
            }],
            vec![1.0],
        ));
    }
    let mut classes = Vec::with_capacity(n);
    for i in 0..n {
        let key = field_key(CLASSES, i, CLASS_NAME);
        let mut name = p.str(&key).to_string();
        if name.is_empty() {
            name = format!("c{i}");
            p.set(&key, Value::Str(name.clone()));
        }
        let valid = name.len() <= 32
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(Error::OutOfRange {
                key,
                value: Value::Str(name).to_string(),
                allowed: "must be at most 32 letters, digits, '-' and '_'".into(),
            });
        }
        if classes.iter().any(|c: &ClassConfig| c.name == name) {
            return Err(Error::Inconsistent {
                key,
                value: Value::Str(name).to_string(),
                reason: "class names must be unique; another class has this name".into(),
            });
        }
        let share = p.f64(&field_key(CLASSES, i, CLASS_SHARE));
        classes.push(ClassConfig { name, share });
    }
    let total: f64 = classes.iter().map(|c| c.share).sum();
    if total == 0.0 {
        for (i, c) in classes.iter_mut().enumerate() {
            c.share = 1.0 / n as f64;
            p.set(&field_key(CLASSES, i, CLASS_SHARE), Value::Float(c.share));
        }
    } else if (total - 1.0).abs() > 1e-9 {
        let key = field_key(CLASSES, 0, CLASS_SHARE);
        return Err(p.inconsistent(
            &key,
            format!(
                "the class shares sum to {total}; they must sum to 1 (or all be 0 for equal shares)"
            ),
        ));
    }
    // the shares sum to 1: dividing by 1 leaves each sum as it is
    let cum = cumulative(classes.iter().map(|c| c.share), 1.0);
    Ok((classes, cum))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::test_support::*;
    use crate::schema::Value;

    #[test]
    fn zipf_popularity_needs_s_above_0_and_more_than_one_flow() {
        let sc = build(&[
            ("traffic.flows", Value::Int(4)),
            ("traffic.flow_zipf_s", Value::Int(1)),
        ])
        .unwrap();
        // weights 1, 1/2, 1/3, 1/4 of 25/12
        let cum = sc.traffic.flow_cum.expect("zipf");
        let want = [12.0 / 25.0, 18.0 / 25.0, 22.0 / 25.0, 1.0];
        assert_eq!(cum.len(), want.len());
        for (c, w) in cum.iter().zip(want) {
            assert!((c - w).abs() < 1e-12, "{cum:?}");
        }
        assert_eq!(cum[3], 1.0);
        // s = 0: uniform
        let sc = build(&[
            ("traffic.flows", Value::Int(4)),
            ("traffic.flow_zipf_s", Value::Int(0)),
        ])
        .unwrap();
        assert_eq!(sc.traffic.flow_cum, None);
        // one flow: nothing to choose
        let sc = build(&[
            ("traffic.flows", Value::Int(1)),
            ("traffic.flow_zipf_s", Value::Int(1)),
        ])
        .unwrap();
        assert_eq!(sc.traffic.flow_cum, None);
    }

    #[test]
    fn a_size_table_has_cumulative_weights_and_its_weighted_mean() {
        let sc = build(&[("traffic.sizes", s("imix"))]).unwrap();
        assert_eq!(
            sc.traffic.sizes,
            SizeDist::Table {
                sizes: vec![64, 594, 1518],
                cum: vec![7.0 / 12.0, 11.0 / 12.0, 1.0],
            }
        );
        let mean = (64.0 * 7.0 + 594.0 * 4.0 + 1518.0) / 12.0;
        assert!((sc.traffic.sizes.mean() - mean).abs() < 1e-9);
        assert_eq!(SizeDist::Fixed(100).mean(), 100.0);
    }

    #[test]
    fn a_size_weight_must_be_a_finite_number_at_least_0() {
        for (table, item) in [("64:-1", "64:-1"), ("64:1, 128:inf", "128:inf")] {
            let e = rejected(&[("traffic.sizes", s(table))]);
            assert_eq!(e.key(), "traffic.sizes");
            assert_eq!(
                e.to_string(),
                format!(
                    "traffic.sizes = \"{table}\": \"{item}\": the weight must be a number >= 0"
                )
            );
        }
        let sc = build(&[("traffic.sizes", s("64:0, 128:2"))]).unwrap();
        assert_eq!(sc.traffic.sizes.mean(), 128.0);
    }

    #[test]
    fn class_names_are_at_most_32_letters_digits_dashes_and_underscores() {
        let name = |n: &str| {
            build(&[("traffic.classes.0.name", s(n))]).map(|sc| sc.traffic.classes[0].name.clone())
        };
        assert_eq!(name("rt-1_A").unwrap(), "rt-1_A");
        let longest = "a".repeat(32);
        assert_eq!(name(&longest).unwrap(), longest);
        for bad in ["a.b", "a b", &"a".repeat(33)] {
            let e = name(bad).unwrap_err();
            assert_eq!(e.key(), "traffic.classes.0.name");
            assert_eq!(
                e.to_string(),
                format!(
                    "traffic.classes.0.name = \"{bad}\": must be at most 32 letters, digits, '-' and '_'"
                )
            );
        }
    }

    #[test]
    fn a_size_table_whose_weights_are_all_0_is_refused() {
        let e = rejected(&[("traffic.sizes", s("64:0, 128:0"))]);
        assert_eq!(e.key(), "traffic.sizes");
        assert_eq!(
            e.to_string(),
            "traffic.sizes = \"64:0, 128:0\": the table needs at least one size with a positive weight"
        );
    }

    #[test]
    fn classes_without_shares_split_the_packets_equally() {
        let sc = build(&[
            ("traffic.classes.0.name", s("a")),
            ("traffic.classes.1.name", s("b")),
            ("traffic.classes.2.name", s("c")),
        ])
        .unwrap();
        let shares: Vec<f64> = sc.traffic.classes.iter().map(|c| c.share).collect();
        assert_eq!(shares, [1.0 / 3.0; 3]);
        let cum = &sc.traffic.class_cum;
        assert_eq!(cum.len(), 3);
        assert!((cum[0] - 1.0 / 3.0).abs() < 1e-12, "{cum:?}");
        assert!((cum[1] - 2.0 / 3.0).abs() < 1e-12, "{cum:?}");
        assert_eq!(cum[2], 1.0);
        // resolved, so that the result says the shares used
        assert_eq!(sc.params.f64("traffic.classes.1.share"), 1.0 / 3.0);
    }
}
