//! Salah's polling loop and the hybrid scheme's switch: their settings (`poll.*`,
//! `hybrid.*`) and those without effect. The loop itself runs in `host::polling`.

use crate::error::Error;
use crate::platform::{PlatformConfig, cliff_point_pps};
use crate::schema::{Params, Value, keys};
use crate::scheme::Scheme;
use crate::time::SimDuration;
use crate::warnings::{Warnings, no_effect};

keys! {
    /// The polling loop's and the hybrid switch's keys.
    pub KEYS = "poll." [
        POLL_KEYS = [
            /// T_poll.
            PERIOD_US,
            /// Q.
            QUOTA,
        ],
        HYBRID_KEYS = "hybrid." [
            /// The switching throughput (0: 95 % of the cliff point).
            SWITCH_PPS,
            WINDOW_US,
            HYSTERESIS,
        ],
    ];
}

/// Salah's polling parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PollConfig {
    /// T_poll.
    pub period: SimDuration,
    /// Q.
    pub quota: u64,
}

/// The hybrid scheme's switch.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridConfig {
    /// Throughput at which disable-enable hands over to polling (resolved), packets/s.
    pub switch_pps: f64,
    pub window: SimDuration,
    pub hysteresis: f64,
}

/// The polling loop of `p`.
pub fn configure_poll(p: &Params) -> Result<PollConfig, Error> {
    let poll = PollConfig {
        period: SimDuration::from_us(p.f64(PERIOD_US)),
        quota: p.u64(QUOTA),
    };
    if poll.period.is_zero() {
        return Err(at_least_a_picosecond(p, PERIOD_US));
    }
    Ok(poll)
}

/// The switching point `hybrid.switch_pps = 0` resolves to: 95 % of the cliff point of the
/// platform's costs for frames of `mean_size` bytes (free protocol processing has no cliff:
/// the largest rate the key allows).
pub fn auto_switch_pps(platform: &PlatformConfig, mean_size: f64) -> f64 {
    (0.95 * cliff_point_pps(platform, mean_size)).min(1e9)
}

/// The hybrid switch of `p`; a switching point of 0 is resolved to `auto_switch_pps`, so that
/// the result says which was used.
pub fn configure_hybrid(p: &mut Params, auto_switch_pps: f64) -> Result<HybridConfig, Error> {
    let switch_pps = match p.f64(SWITCH_PPS) {
        0.0 => {
            p.set(SWITCH_PPS, Value::Float(auto_switch_pps));
            auto_switch_pps
        }
        x => x,
    };
    let hybrid = HybridConfig {
        switch_pps,
        window: SimDuration::from_us(p.f64(WINDOW_US)),
        hysteresis: p.f64(HYSTERESIS),
    };
    if hybrid.window.is_zero() {
        return Err(at_least_a_picosecond(p, WINDOW_US));
    }
    Ok(hybrid)
}

fn at_least_a_picosecond(p: &Params, key: &str) -> Error {
    Error::OutOfRange {
        key: key.into(),
        value: p.get(key).to_string(),
        allowed: "must be at least one picosecond".into(),
    }
}

/// A switching point given at the value 0 resolves to is the echo of a resolved value.
pub fn echo(w: &mut Warnings, auto_switch_pps: f64) {
    if w.p.f64(SWITCH_PPS) == auto_switch_pps {
        w.echo(SWITCH_PPS);
    }
}

/// The polling loop's settings outside the polling schemes, the switch's outside hybrid.
pub fn warnings(w: &mut Warnings, scheme: Scheme) {
    let polling = matches!(scheme, Scheme::Poll | Scheme::NapiPoll | Scheme::Hybrid);
    w.rule(POLL_KEYS, !polling, || {
        no_effect("only the polling schemes use it (poll, napi-poll, hybrid)")
    });
    w.rule(HYBRID_KEYS, scheme != Scheme::Hybrid, || {
        no_effect("only scheme \"hybrid\" uses it")
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::test_support::*;
    use crate::schema::Value;

    #[test]
    fn hybrid_switches_at_95_percent_of_the_cliff_point_unless_given() {
        let platform = [
            ("scheme", s("hybrid")),
            ("platform.irq_ns", Value::Int(1000)),
            ("platform.proto_ns", Value::Int(2000)),
            ("platform.proto_ns_per_byte", Value::Int(1)),
            ("traffic.size_bytes", Value::Int(1000)),
        ];
        let sc = build(&platform).unwrap();
        // the cliff point of these costs is 263762.6 packets/s (the_cliff_point_is_salah_eq_13)
        let want = 0.95 * cliff_point_pps(&sc.platform, 1000.0);
        assert!((want - 250_574.5).abs() < 0.1, "{want}");
        assert_eq!(sc.hybrid.switch_pps, want);
        assert_eq!(sc.params.f64("hybrid.switch_pps"), want);
        let mut given = platform.to_vec();
        given.push(("hybrid.switch_pps", Value::Float(2e5)));
        assert_eq!(build(&given).unwrap().hybrid.switch_pps, 2e5);
    }
}
