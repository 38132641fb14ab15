//! `traffic.kind = "pcap"`: the replay of a capture (`traffic.pcap`), read once when the
//! scenario is built (every error a reader finds surfaces here, naming the key) and checked
//! against the scenario's settings; the replay itself is [`super::replay`].

use super::config::{FLOW_ZIPF_S, FLOWS, RATE_PPS, SIZE_BYTES, SIZES, SizeDist};
use super::replay::{ReplayConfig, Scan};
use crate::error::Error;
use crate::schema::{Params, Value, keys};
use crate::warnings::{Warnings, no_effect};

/// Its name.
pub const KIND: &str = "pcap";
keys! {
    /// What only a replay uses.
    pub KEYS = "traffic." [
        /// The capture's file.
        PCAP,
        SPEEDUP,
        /// Passes over the capture (0: until the run ends).
        LOOP,
    ];
}

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
        return Err(p.inconsistent(
            LOOP,
            format!(
                "the capture has no duration to repeat ({}), so it can be played once only",
                no_duration(&scan)
            ),
        ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::test_support::*;
    use crate::scenario::*;
    use crate::schema::Value;

    /// A scenario replaying `three()` (3 packets over 1.000007 s, period 1.5 s), with the
    /// capture file it reads (removed when dropped).
    fn replayed(
        name: &str,
        more: &[(&str, Value)],
    ) -> Result<(Scenario, tempfile::TempPath), Error> {
        use crate::traffic::capture::tests::{file, pcap, three};
        let path = file(name, &pcap(&three(), false, false, 1));
        let mut pairs = vec![
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s(path.to_str().unwrap())),
            ("run.warmup_ms", Value::Int(0)),
        ];
        pairs.extend_from_slice(more);
        Ok((build(&pairs)?, path))
    }

    #[test]
    fn a_replay_lasts_its_capture_unless_told() {
        let (sc, _capture) = replayed("dur.pcap", &[]).unwrap();
        let period = 1_000_007_000_000 + 500_003_500_000u64;
        assert_eq!(sc.run.end.ps(), period);
        assert_eq!(sc.params.f64("run.duration_ms"), period as f64 / 1e9);
        // the rate of the capture, resolved: 3 packets per period
        assert_eq!(sc.traffic.rate_pps, 3.0 * 1e12 / period as f64);
        assert_eq!(sc.traffic.flows, 2);
        assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
        // sped up, looped, after a warm-up
        let (sc, _capture) = replayed(
            "dur2.pcap",
            &[
                ("traffic.speedup", Value::Int(4)),
                ("traffic.loop", Value::Int(3)),
                ("run.warmup_ms", Value::Int(100)),
            ],
        )
        .unwrap();
        assert_eq!(sc.run.end.ps(), (3 * period).div_ceil(4));
        assert_eq!(sc.run.warmup.ps(), 100_000_000_000);
        // re-running the resolved scenario is the same run
        let again = Scenario::build(sc.params.clone()).unwrap();
        assert_eq!(again.run, sc.run);
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        // a duration given is the duration
        let (sc, _capture) =
            replayed("dur3.pcap", &[("run.duration_ms", Value::Int(100))]).unwrap();
        assert_eq!(sc.run.end.ps(), 100_000_000_000);
        let (sc, _capture) = replayed(
            "dur4.pcap",
            &[
                ("traffic.loop", Value::Int(0)),
                ("run.duration_ms", Value::Int(5000)),
            ],
        )
        .unwrap();
        assert_eq!(sc.run.end.ps(), 5_000_000_000_000);
    }

    #[test]
    fn replay_settings_that_cannot_work_are_errors_naming_the_key() {
        let e = replayed("e1.pcap", &[("traffic.loop", Value::Int(0))]).unwrap_err();
        assert_eq!(e.key(), "traffic.loop");
        assert!(e.to_string().contains("set run.duration_ms"), "{e}");
        let e = replayed("e2.pcap", &[("run.warmup_ms", Value::Int(2000))]).unwrap_err();
        assert_eq!(e.key(), "run.warmup_ms");
        assert!(e.to_string().contains("lasts 1500.0105 ms"), "{e}");
        let e = rejected(&[("traffic.kind", s("pcap"))]);
        assert_eq!(
            e.to_string(),
            "traffic.pcap = \"\": traffic.kind = \"pcap\" replays a capture: give its file"
        );
        let e = rejected(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s("/dev/null")),
        ]);
        assert!(e.to_string().contains("is not a regular file"), "{e}");
        let e = rejected(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s("/no/such/capture.pcap")),
        ]);
        assert_eq!(
            e.to_string(),
            "traffic.pcap = \"/no/such/capture.pcap\": no such file"
        );
        // a long path shows its end, the file's name
        let long = format!("/{}/trace.pcap", "d".repeat(100));
        let e = rejected(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(&long))]);
        let shown = e.to_string();
        assert!(shown.starts_with("traffic.pcap = \"…ddd"), "{shown}");
        assert!(
            shown.ends_with("d/trace.pcap\" (112 characters): no such file"),
            "{shown}"
        );
        // one packet: no duration, nothing to loop
        use crate::traffic::capture::tests::{file, pcap, three};
        let one = file("one.pcap", &pcap(&three()[..1], false, false, 1));
        let one = one.to_str().unwrap();
        let e = rejected(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(one))]);
        assert_eq!(e.key(), "traffic.pcap");
        assert!(
            e.to_string().ends_with(
                "the capture has no duration of its own (it holds one packet): set run.duration_ms"
            ),
            "{e}"
        );
        let sc = build(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s(one)),
            ("run.duration_ms", Value::Int(1)),
        ])
        .unwrap();
        assert_eq!(sc.traffic.flows, 1);
        let e = rejected(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s(one)),
            ("run.duration_ms", Value::Int(1)),
            ("traffic.loop", Value::Int(2)),
        ]);
        assert_eq!(e.key(), "traffic.loop");
    }

    #[test]
    fn what_a_replay_ignores_is_named() {
        let w = |more: &[(&str, Value)]| {
            replayed("w.pcap", more)
                .unwrap()
                .0
                .warnings
                .iter()
                .map(|w| w.key.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            w(&[
                ("traffic.rate_pps", Value::Int(5)),
                ("traffic.sizes", s("imix")),
                ("traffic.size_bytes", Value::Int(100)),
                ("traffic.flows", Value::Int(64)),
                ("traffic.flow_zipf_s", Value::Float(1.1)),
            ]),
            [
                "traffic.rate_pps",
                "traffic.sizes",
                "traffic.size_bytes",
                "traffic.flows",
                "traffic.flow_zipf_s"
            ]
        );
        let (sc, _capture) = replayed("w2.pcap", &[("traffic.flows", Value::Int(64))]).unwrap();
        assert_eq!(
            sc.warnings[0].to_string(),
            "traffic.flows = 64: has no effect: traffic.kind = \"pcap\" takes the flows from the capture's 5-tuples"
        );
        // and a replay's keys without a replay
        assert_eq!(
            warned(&[
                ("traffic.speedup", Value::Int(2)),
                ("traffic.loop", Value::Int(3)),
                ("traffic.pcap", s("x.pcap")),
            ]),
            ["traffic.pcap", "traffic.speedup", "traffic.loop"]
        );
    }

    #[test]
    fn a_replay_runs_its_packets_on_the_queues_rss_picks() {
        let (sc, _capture) = replayed(
            "run.pcap",
            &[("nic.queues", Value::Int(4)), ("host.cores", Value::Int(2))],
        )
        .unwrap();
        let (r, trace) = crate::run_with(&sc, crate::PacketTrace::default());
        assert_eq!(trace.arrival_ps, [0, 2_000_000, 1_000_007_000_000]);
        assert_eq!(trace.size_bytes, [64, 1004, 64]);
        assert_eq!(trace.flow, [0, 1, 0]);
        let q = |f: usize| sc.topology.flow_queue[f];
        assert_eq!(trace.queue, [q(0), q(1), q(0)]);
        assert_eq!(r.packets.offered, 3);
        assert_eq!(r.frame_bytes.max, Some(1004));
        assert_eq!(r.frame_bytes.p50, Some(64));
        let rep = r.replay.clone().unwrap();
        assert_eq!((rep.packets, rep.passes, rep.error), (3, 1, None));
        // the core-by-core run is the same
        assert!(crate::runs_core_by_core(&sc));
        assert_eq!(crate::run(&sc), r);
    }

    #[test]
    fn a_long_capture_path_shows_its_last_48_characters() {
        let long = format!("/{}/trace.pcap", "d".repeat(100));
        assert_eq!(long.len(), 112);
        let e = rejected(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(&long))]);
        assert_eq!(
            e.to_string(),
            format!(
                "traffic.pcap = \"…{}\" (112 characters): no such file",
                &long[112 - 48..]
            )
        );
        // 64 characters are shown whole
        let whole = format!("/{}/trace.pcap", "d".repeat(52));
        assert_eq!(whole.len(), 64);
        let e = rejected(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(&whole))]);
        assert_eq!(
            e.to_string(),
            format!("traffic.pcap = \"{whole}\": no such file")
        );
    }

    #[test]
    fn a_replay_may_measure_an_hour_and_no_more() {
        use crate::traffic::capture::tests::{file, pcap, three};
        // two packets 1 s apart: a pass lasts 2 s (the span and one mean gap)
        let f = three().swap_remove(0);
        let two = [f.clone(), (f.0 + 1_000_000_000, f.1, f.2)];
        let path = file("hour.pcap", &pcap(&two, false, false, 1));
        let replay = |loops: i128| {
            build(&[
                ("traffic.kind", s("pcap")),
                ("traffic.pcap", s(path.to_str().unwrap())),
                ("run.warmup_ms", Value::Int(0)),
                ("traffic.loop", Value::Int(loops)),
            ])
        };
        // 1800 passes: 3600 s, the longest run.duration_ms allows
        let sc = replay(1800).unwrap();
        assert_eq!(sc.run.end.ps(), 3_600_000_000_000_000);
        assert_eq!(sc.params.f64("run.duration_ms"), 3.6e6);
        let e = replay(1801).unwrap_err();
        assert_eq!(e.key(), "traffic.pcap");
        assert!(
            e.to_string().contains(
                "its replay lasts 3602000 ms, longer than a run may measure (run.duration_ms ≤ 3600000)"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_replay_s_frame_sizes_are_weighted_by_their_packet_counts() {
        // three(): two 64-byte frames and one of 1004 bytes
        let (sc, _capture) = replayed("sizes.pcap", &[]).unwrap();
        assert_eq!(
            sc.traffic.sizes,
            SizeDist::Table {
                sizes: vec![64, 1004],
                cum: vec![2.0 / 3.0, 1.0],
            }
        );
        assert!((sc.traffic.sizes.mean() - (2.0 * 64.0 + 1004.0) / 3.0).abs() < 1e-9);
    }
}
