//! The run's settings (`run.*`): its seed and replication (the random streams), and the
//! measured window: the warm-up, then `run.duration_ms` (or, for a replay without a duration,
//! the replay's length). None of these settings is reported as having no effect (no
//! `warnings` here).

use crate::error::Error;
use crate::schema::{Kind, Params, Value, keys};
use crate::time::{PS_PER_MS, SimDuration, SimTime};
use crate::traffic::pcap;
use crate::traffic::replay::ReplayConfig;

keys! {
    /// The run's keys (for the check that each key has one part).
    #[cfg(test)]
    pub KEYS = "run." [
        SEED,
        REPLICATION,
        DURATION_MS,
        WARMUP_MS,
    ];
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    pub seed: u64,
    pub replication: u64,
    /// Start of the measured window.
    pub warmup: SimTime,
    /// End of the run (exclusive).
    pub end: SimTime,
}

/// The run of `p`; `replay`, the capture a replay plays (its length is the run's unless
/// `run.duration_ms` is given, and is then resolved into it).
pub fn configure(p: &mut Params, replay: Option<&ReplayConfig>) -> Result<RunConfig, Error> {
    let warmup = SimTime::ZERO + SimDuration::from_ms(p.f64(WARMUP_MS));
    let end = match replay {
        Some(r) if !p.given(DURATION_MS) => replay_end(p, r, warmup)?,
        _ => warmup + SimDuration::from_ms(p.f64(DURATION_MS)),
    };
    if end <= warmup {
        return Err(Error::OutOfRange {
            key: DURATION_MS.into(),
            value: p.get(DURATION_MS).to_string(),
            allowed: "must be at least one picosecond".into(),
        });
    }
    Ok(RunConfig {
        seed: p.u64(SEED),
        replication: p.u64(REPLICATION),
        warmup,
        end,
    })
}

/// The end of a replay's run when `run.duration_ms` is not given: the end of the replay (its
/// passes, sped up), measured after the warm-up. The duration is resolved, so that the result
/// says it and re-running the result gives the same run.
fn replay_end(p: &mut Params, r: &ReplayConfig, warmup: SimTime) -> Result<SimTime, Error> {
    let why_not = |reason: String| Error::Inconsistent {
        key: pcap::PCAP.into(),
        value: pcap::shown_path(p.str(pcap::PCAP)),
        reason,
    };
    if r.scan.period_ps() == 0 {
        return Err(why_not(format!(
            "the capture has no duration of its own ({}): set run.duration_ms",
            pcap::no_duration(&r.scan)
        )));
    }
    let Some(length) = r.length_ps() else {
        return Err(Error::Inconsistent {
            key: pcap::LOOP.into(),
            value: "0".into(),
            reason: "repeats the capture until the run ends: set run.duration_ms".into(),
        });
    };
    let ms = |ps: u64| ps as f64 / PS_PER_MS as f64;
    if length <= warmup.ps() {
        return Err(p.inconsistent(
            WARMUP_MS,
            format!(
                "the replay of traffic.pcap lasts {} ms, and the run measures what follows the warm-up: set run.warmup_ms below it (0 measures the whole replay), or run.duration_ms",
                ms(length)
            ),
        ));
    }
    let measured = length - warmup.ps();
    let max_ms = p
        .schema()
        .spec(DURATION_MS)
        .map(|s| match s.kind {
            Kind::Float { max, .. } => max,
            _ => f64::INFINITY,
        })
        .unwrap_or(f64::INFINITY);
    if ms(measured) > max_ms {
        return Err(why_not(format!(
            "its replay lasts {} ms, longer than a run may measure (run.duration_ms ≤ {max_ms}): set run.duration_ms to replay its beginning, or traffic.speedup",
            ms(measured)
        )));
    }
    // The float of milliseconds converts back to exactly these picoseconds: below the
    // 3.6e15 ps a run may measure, x < 2^22, so x · 1e9 is within 0.23 ps of `measured`.
    let x = ms(measured);
    debug_assert_eq!(SimDuration::from_ms(x).ps(), measured);
    p.set(DURATION_MS, Value::Float(x));
    Ok(warmup + SimDuration::from_ms(x))
}
