//! `traffic.kind = "pcap"`: the replay of a capture (`traffic.pcap`), read once when the
//! scenario is built (every error a reader finds surfaces here, naming the key) and checked
//! against the scenario's settings; the replay itself is [`super::replay`].

use super::config::{FLOW_ZIPF_S, FLOWS, RATE_PPS, SIZE_BYTES, SIZES, SizeDist};
use super::replay::{ReplayConfig, Scan};
use crate::error::Error;
use crate::schema::{Params, Value};
use crate::warnings::{Warnings, no_effect};

/// Its name.
pub const KIND: &str = "pcap";
/// The capture's file.
pub const PCAP: &str = "traffic.pcap";
pub const SPEEDUP: &str = "traffic.speedup";
/// Passes over the capture (0: until the run ends).
pub const LOOP: &str = "traffic.loop";
/// What only a replay uses.
pub const KEYS: &[&str] = &[PCAP, SPEEDUP, LOOP];

/// The replay of `traffic.pcap`: its capture read once (every error a reader finds surfaces
/// here, naming the key), and the settings checked against it.
pub fn configure(p: &Params) -> Result<ReplayConfig, Error> {
    let path = p.str(PCAP);
    let bad = |reason: String| Error::Inconsistent {
        key: PCAP.into(),
        value: shown_path(path),
        reason,
    };
    if path.is_empty() {
        return Err(bad(
            "traffic.kind = \"pcap\" replays a capture: give its file".into(),
        ));
    }
    // read now and again during the run: a pipe would be empty the second time
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(bad(
            "is not a regular file (a pipe or a device): a replay reads its capture twice, so save it to a file first".into(),
        ));
    }
    let scan = Scan::cached(std::path::Path::new(path)).map_err(|e| bad(e.0))?;
    let loops = p.u64(LOOP);
    if scan.period_ps() == 0 && loops != 1 {
        return Err(Error::Inconsistent {
            key: LOOP.into(),
            value: p.get(LOOP).to_string(),
            reason: format!(
                "the capture has no duration to repeat ({}), so it can be played once only",
                no_duration(&scan)
            ),
        });
    }
    Ok(ReplayConfig {
        path: path.into(),
        scan,
        speedup: p.f64(SPEEDUP),
        loops,
    })
}

/// A path as an error shows it: quoted, and when long its end (the file's name) rather than
/// its beginning.
pub fn shown_path(path: &str) -> String {
    const SHOWN: usize = 64;
    let n = path.chars().count();
    if n <= SHOWN {
        return Value::Str(path.into()).to_string();
    }
    let tail: String = path.chars().skip(n - (SHOWN - 16)).collect();
    format!("\"…{}\" ({n} characters)", tail.escape_debug())
}

/// Why a capture has no duration.
pub fn no_duration(scan: &Scan) -> String {
    if scan.packets == 1 {
        "it holds one packet".into()
    } else {
        format!("its {} packets have one timestamp", scan.packets)
    }
}

/// A capture's frame sizes as a size table.
pub fn sizes_of(scan: &Scan) -> SizeDist {
    if let [(size, _)] = scan.sizes[..] {
        return SizeDist::Fixed(size);
    }
    let mut acc = 0u64;
    let mut cum: Vec<f64> = scan
        .sizes
        .iter()
        .map(|(_, n)| {
            acc += n;
            acc as f64 / scan.packets as f64
        })
        .collect();
    *cum.last_mut().expect("a capture has packets") = 1.0;
    SizeDist::Table {
        sizes: scan.sizes.iter().map(|(b, _)| *b).collect(),
        cum,
    }
}

/// A given `traffic.rate_pps` equal to the capture's rate is the echo of its resolved value.
pub fn echo(w: &mut Warnings, replay_rate_pps: Option<f64>) {
    if replay_rate_pps == Some(w.p.f64(RATE_PPS)) {
        w.echo(RATE_PPS);
    }
}

/// A replay's settings without one; and what a replay takes from its capture instead.
pub fn warnings(w: &mut Warnings, chosen: bool) {
    w.rule(KEYS, !chosen, || {
        no_effect("only traffic.kind = \"pcap\" uses it")
    });
    w.rule(&[RATE_PPS], chosen, || {
        no_effect(
            "traffic.kind = \"pcap\" replays the capture at its own rate (times traffic.speedup)",
        )
    });
    w.rule(&[SIZES, SIZE_BYTES], chosen, || {
        no_effect("traffic.kind = \"pcap\" replays the capture's own frame sizes")
    });
    w.rule(&[FLOWS, FLOW_ZIPF_S], chosen, || {
        no_effect("traffic.kind = \"pcap\" takes the flows from the capture's 5-tuples")
    });
}
