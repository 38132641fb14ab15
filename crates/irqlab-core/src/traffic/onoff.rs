//! Aggregated Pareto ON/OFF sources: the self-similar traffic of Salah et al. (2007) §5.1,
//! after Taqqu, Willinger & Sherman (1997).
//!
//! Each of `sources` independent sources alternates ON and OFF periods drawn from Pareto
//! distributions (`P(X > x) = (b/x)^α`, `x ≥ b`). During ON it sends frames back to back at
//! the line rate, each occupying its size plus 20 bytes (preamble and minimum gap) of wire
//! time, and arriving when its last bit has been received. A frame started before the ON
//! period ends is sent whole, so an ON period carries at least one frame; the OFF period
//! starts when the last frame ends. Every source starts with an OFF period at time zero.
//!
//! **Calibration.** The ON location `b_on` is the wire time of `on_min_bytes` (64 bytes: 512
//! ns at 1 Gbit/s, the paper's choice). The OFF location follows from the target packet rate.
//! The paper derives it from `ρ_i = E[ON]/(E[ON] + E[OFF])`, which ignores that frames are
//! whole; with 557-byte frames (4.6 µs on the wire) and `E[ON] = 2.2 µs` that would double the
//! load. Here the frames per ON period are counted instead: with `S_k` the wire time of the
//! first `k` frames, `E[N_on] = Σ_{k≥0} P(D > S_k)`, computed exactly over the size
//! distribution for `k ≤ 8` and with `S_k ≈ k·E[w]` beyond (those terms are small), and by
//! Wald's identity `E[ON] = E[N_on]·E[w]`. Each source must send `rate/sources` frames per
//! second, so `E[OFF] = E[N_on]·(sources/rate) − E[ON]` and `b_off = E[OFF](α_off − 1)/α_off`.

use super::Arrival;
use super::config::{RATE_PPS, SizeDist};
use crate::error::Error;
use crate::rng::Stream;
use crate::schema::{Params, keys};
use crate::time::{PS_PER_S, SimTime};
use crate::warnings::{Warnings, no_effect};

/// Its name (`traffic.kind`).
pub const KIND: &str = "pareto-onoff";
keys! {
    /// What only the on/off sources use.
    pub KEYS = "traffic." [
        SOURCES,
        ALPHA_ON,
        ALPHA_OFF,
        ON_MIN_BYTES,
        LINE_RATE_GBPS,
    ];
}

/// Aggregated Pareto ON/OFF sources (Taqqu, Willinger & Sherman 1997; Salah §5.1).
#[derive(Clone, Debug, PartialEq)]
pub struct OnOffConfig {
    pub sources: usize,
    pub alpha_on: f64,
    pub alpha_off: f64,
    /// Pareto locations (shortest periods), ps.
    pub b_on_ps: f64,
    pub b_off_ps: f64,
    /// Wire time per byte at the line rate, ps.
    pub ps_per_byte: f64,
}

/// Bytes of wire time per frame besides the frame: 8 of preamble, 12 of inter-frame gap.
pub const WIRE_OVERHEAD_BYTES: u32 = 20;
/// Longest ON or OFF period drawn, ps (about 11.6 days): keeps heavy tails inside the clock.
const MAX_PERIOD_PS: f64 = 1e18;
/// Frames counted exactly (by convolving the size distribution) in `E[N_on]`.
const EXACT_TERMS: usize = 8;

/// `P(D > s)` for a Pareto ON period `D` with location `b` and shape `alpha`.
fn survival(s: f64, b: f64, alpha: f64) -> f64 {
    if s < b { 1.0 } else { (b / s).powf(alpha) }
}

/// `E[N_on]`: the mean number of frames in an ON period (see the module docs).
pub fn expected_frames_per_on(sizes: &SizeDist, ps_per_byte: f64, b_on: f64, alpha: f64) -> f64 {
    let pmf: Vec<(usize, f64)> = sizes
        .pmf()
        .into_iter()
        .filter(|(_, p)| *p > 0.0)
        .map(|(s, p)| ((s + WIRE_OVERHEAD_BYTES) as usize, p))
        .collect();
    let max_wire = pmf.iter().map(|(w, _)| *w).max().unwrap_or(1);
    let mean_wire: f64 = pmf.iter().map(|(w, p)| *w as f64 * p).sum();
    // dist[x] = P(S_k = x bytes of wire time), convolved one frame at a time
    let mut dist = vec![1.0];
    let mut frames = 1.0; // k = 0: S_0 = 0 < D always
    for _ in 1..=EXACT_TERMS {
        let mut next = vec![0.0; dist.len() + max_wire];
        for (x, px) in dist.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            for (w, pw) in &pmf {
                next[x + w] += px * pw;
            }
        }
        dist = next;
        frames += dist
            .iter()
            .enumerate()
            .filter(|(_, p)| **p > 0.0)
            .map(|(x, p)| p * survival(x as f64 * ps_per_byte, b_on, alpha))
            .sum::<f64>();
    }
    // k > EXACT_TERMS: S_k ≈ k E[w]; then the tail of the series as an integral
    let c = b_on / (mean_wire * ps_per_byte);
    const LAST: usize = 100_000;
    for k in EXACT_TERMS + 1..=LAST {
        frames += (c / k as f64).powf(alpha).min(1.0);
    }
    frames + c.powf(alpha) * (LAST as f64 + 0.5).powf(1.0 - alpha) / (alpha - 1.0)
}

/// Derives the sources' parameters from the scenario, checking that the target rate is
/// reachable (each source below the line rate).
pub fn configure(p: &Params, rate_pps: f64, sizes: &SizeDist) -> Result<OnOffConfig, Error> {
    let sources = p.u64(SOURCES) as usize;
    let alpha_on = p.f64(ALPHA_ON);
    let alpha_off = p.f64(ALPHA_OFF);
    let ps_per_byte = 8.0 * 1000.0 / p.f64(LINE_RATE_GBPS);
    let b_on = p.u64(ON_MIN_BYTES) as f64 * ps_per_byte;
    let mean_wire_ps = (sizes.mean() + WIRE_OVERHEAD_BYTES as f64) * ps_per_byte;
    let per_source_pps = rate_pps / sources as f64;
    let cycle_frames = per_source_pps * mean_wire_ps / PS_PER_S as f64;
    if cycle_frames >= 1.0 {
        let max = sources as f64 * PS_PER_S as f64 / mean_wire_ps;
        return Err(p.inconsistent(
            RATE_PPS,
            format!(
                "pareto-onoff: {sources} sources at {} Gbit/s with frames of {:.0} bytes on average carry less than {max:.0} packets/s",
                p.f64(LINE_RATE_GBPS),
                sizes.mean()
            ),
        ));
    }
    let n_on = expected_frames_per_on(sizes, ps_per_byte, b_on, alpha_on);
    let mean_off = n_on * (PS_PER_S as f64 / per_source_pps - mean_wire_ps);
    Ok(OnOffConfig {
        sources,
        alpha_on,
        alpha_off,
        b_on_ps: b_on,
        b_off_ps: mean_off * (alpha_off - 1.0) / alpha_off,
        ps_per_byte,
    })
}

/// The sources' settings without them.
pub fn warnings(w: &mut Warnings, chosen: bool) {
    w.rule(KEYS, !chosen, || {
        no_effect("only traffic.kind = \"pareto-onoff\" uses it")
    });
}

#[derive(Clone, Debug)]
struct Src {
    /// Arrival (end of reception) of the source's next frame, ps.
    arrival: u64,
    size: u32,
    /// End of the current ON period, ps.
    on_end: u64,
}

/// The aggregate of the sources.
#[derive(Clone, Debug)]
pub struct OnOff {
    cfg: OnOffConfig,
    srcs: Box<[Src]>,
    started: bool,
}

impl OnOff {
    pub fn new(cfg: &OnOffConfig) -> OnOff {
        let empty = Src {
            arrival: 0,
            size: 0,
            on_end: 0,
        };
        OnOff {
            cfg: cfg.clone(),
            srcs: vec![empty; cfg.sources].into_boxed_slice(),
            started: false,
        }
    }

    #[inline]
    fn pareto(stream: &mut Stream, b: f64, alpha: f64) -> u64 {
        let x = b * (1.0 - stream.uniform()).powf(-1.0 / alpha);
        x.min(MAX_PERIOD_PS).round() as u64
    }

    #[inline]
    fn wire(&self, size: u32) -> u64 {
        ((size + WIRE_OVERHEAD_BYTES) as f64 * self.cfg.ps_per_byte).round() as u64
    }

    /// Starts an OFF period at `t` for source `i`, then its next ON period and first frame.
    fn off_then_on(
        &mut self,
        i: usize,
        t: u64,
        periods: &mut Stream,
        sizes: &SizeDist,
        sz: &mut Stream,
    ) {
        let off = Self::pareto(periods, self.cfg.b_off_ps, self.cfg.alpha_off);
        let on = Self::pareto(periods, self.cfg.b_on_ps, self.cfg.alpha_on);
        let start = t.saturating_add(off);
        let size = sizes.sample(sz);
        let w = self.wire(size);
        let s = &mut self.srcs[i];
        s.on_end = start.saturating_add(on);
        s.size = size;
        s.arrival = start.saturating_add(w);
    }

    #[inline]
    pub fn next_arrival(
        &mut self,
        periods: &mut Stream,
        sizes: &SizeDist,
        sz: &mut Stream,
    ) -> Arrival {
        if !self.started {
            self.started = true;
            for i in 0..self.srcs.len() {
                self.off_then_on(i, 0, periods, sizes, sz);
            }
        }
        let mut i = 0;
        for (j, s) in self.srcs.iter().enumerate().skip(1) {
            if s.arrival < self.srcs[i].arrival {
                i = j;
            }
        }
        let (time, size, on_end) = (self.srcs[i].arrival, self.srcs[i].size, self.srcs[i].on_end);
        if time < on_end {
            let next = sizes.sample(sz);
            let w = self.wire(next);
            let s = &mut self.srcs[i];
            s.size = next;
            s.arrival = time.saturating_add(w);
        } else {
            self.off_then_on(i, time, periods, sizes, sz);
        }
        Arrival {
            time: SimTime(time),
            size_bytes: size,
            flow: Arrival::DRAW_FLOW,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_per_on_period_counts_whole_frames() {
        // 64-byte frames take 672 ns; ON periods of at least 512 ns: one frame, plus a second
        // when D > 672 ns (probability (512/672)^alpha), and so on: a direct sum (with the
        // integral of its tail beyond 2 million terms) gives the same number.
        for alpha in [1.3, 2.5] {
            let n = expected_frames_per_on(&SizeDist::Fixed(64), 8000.0, 512_000.0, alpha);
            let last = 2_000_000u64;
            let c: f64 = 512.0 / 672.0;
            let direct: f64 = (0..=last)
                .map(|k| survival(k as f64 * 672_000.0, 512_000.0, alpha))
                .sum::<f64>()
                + c.powf(alpha) * (last as f64 + 0.5).powf(1.0 - alpha) / (alpha - 1.0);
            assert!((n - direct).abs() < 1e-4 * direct, "{n} vs {direct}");
        }
        // With a size table, the first frames are counted exactly: two sizes, 64 and 1518.
        let sizes = SizeDist::Table {
            sizes: vec![64, 1518],
            cum: vec![0.5, 1.0],
        };
        let n = expected_frames_per_on(&sizes, 8000.0, 512_000.0, 1.3);
        // k = 1 alone: P(D > S_1) = 0.5 (512/672)^1.3 + 0.5 (512/12304)^1.3
        let k1 = 0.5 * (512.0f64 / 672.0).powf(1.3) + 0.5 * (512.0f64 / 12304.0).powf(1.3);
        assert!(n > 1.0 + k1 && n < 1.0 + k1 + 0.5, "{n}");
    }

    fn onoff(pairs: &[(&str, crate::Value)]) -> Result<crate::Scenario, Error> {
        let mut all = vec![("traffic.kind", crate::Value::Str("pareto-onoff".into()))];
        all.extend(pairs.iter().cloned());
        crate::Scenario::from_pairs(all)
    }

    #[test]
    fn a_rate_the_sources_cannot_carry_at_the_line_rate_is_an_error() {
        // 105-byte frames take 125 bytes of wire time: 1 us at 1 Gbit/s, so each source
        // carries less than 1e6 frames/s, two sources less than 2e6.
        let pairs = |rate: f64| {
            [
                ("traffic.sources", crate::Value::Int(2)),
                ("traffic.size_bytes", crate::Value::Int(105)),
                ("traffic.rate_pps", crate::Value::Float(rate)),
            ]
        };
        let e = onoff(&pairs(2e6)).unwrap_err();
        assert_eq!(e.key(), "traffic.rate_pps");
        assert_eq!(
            e,
            Error::Inconsistent {
                key: "traffic.rate_pps".into(),
                value: crate::Value::Float(2e6).to_string(),
                reason: "pareto-onoff: 2 sources at 1 Gbit/s with frames of 105 bytes on average carry less than 2000000 packets/s".into(),
            }
        );
        let sc = onoff(&pairs(1_999_999.0)).unwrap();
        assert!(sc.traffic.onoff.is_some());
    }

    #[test]
    fn frames_per_on_period_use_the_mean_wire_time_beyond_the_exact_terms() {
        // Two sizes (84 and 1538 bytes of wire time), an ON location of 8 kB: the series
        // 1 + sum_k P(D > S_k), exact (over all 2^k size sequences) for k <= 8, then with
        // S_k = k E[w] (E[w] = 811 bytes), summed directly to 2 million terms plus the
        // integral of the rest.
        let sizes = SizeDist::Table {
            sizes: vec![64, 1518],
            cum: vec![0.5, 1.0],
        };
        let (ps, b, alpha) = (8000.0, 8000.0 * 8000.0, 1.3);
        let n = expected_frames_per_on(&sizes, ps, b, alpha);
        let mut exact = 1.0;
        for k in 1..=8u32 {
            for seq in 0..1u32 << k {
                let bytes: u32 = (0..k)
                    .map(|f| if seq >> f & 1 == 1 { 1538 } else { 84 })
                    .sum();
                exact += 0.5f64.powi(k as i32) * survival(bytes as f64 * ps, b, alpha);
            }
        }
        let c: f64 = 8000.0 / 811.0;
        let last = 2_000_000u64;
        let tail: f64 = (9..=last)
            .map(|k| survival(k as f64 * 811.0 * ps, b, alpha))
            .sum::<f64>()
            + c.powf(alpha) * (last as f64 + 0.5).powf(1.0 - alpha) / (alpha - 1.0);
        let direct = exact + tail;
        assert!(tail > 0.5, "the tail matters here: {tail}");
        assert!((n - direct).abs() < 1e-4 * direct, "{n} vs {direct}");
    }

    #[test]
    fn the_merged_sources_arrive_in_time_order_and_overlap_one_another() {
        // Eight sources at 1 Gbit/s calibrated for 1 Mpps of 64-byte frames (672 ns on the
        // wire): each sends back to back, one frame per 672 ns at most, but the sources are
        // independent, so the merged arrivals (in time order) are often closer than that.
        let sc = onoff(&[
            ("traffic.sources", crate::Value::Int(8)),
            ("traffic.rate_pps", crate::Value::Float(1e6)),
        ])
        .unwrap();
        let cfg = sc.traffic.onoff.as_ref().unwrap();
        let mut src = OnOff::new(cfg);
        let mut st = crate::rng::streams(3, 0);
        let [periods, sz] = st.get_disjoint_mut([0, 1]).unwrap();
        let (n, mut close) = (20_000, 0);
        let mut last = 0;
        for k in 0..n {
            let a = src.next_arrival(periods, &sc.traffic.sizes, sz);
            assert!(a.time.ps() >= last, "arrival {k} in time order");
            if k > 0 && a.time.ps() - last < 672_000 {
                close += 1;
            }
            last = a.time.ps();
        }
        assert!(close > n / 20, "{close} of {n} gaps shorter than a frame");
    }

    #[test]
    fn the_line_rate_sets_the_wire_time_per_byte_and_the_rate_a_source_can_carry() {
        // At 10 Gbit/s a byte takes 800 ps, so 64-byte frames (84 bytes of wire time, 67.2
        // ns) let one source carry almost 14.9 Mpps: 2 Mpps is within reach. At the default
        // 1 Gbit/s (8000 ps a byte, 672 ns a frame) one source carries less than 1.49 Mpps.
        let pairs = |gbps: f64| {
            [
                ("traffic.sources", crate::Value::Int(1)),
                ("traffic.size_bytes", crate::Value::Int(64)),
                ("traffic.rate_pps", crate::Value::Float(2e6)),
                ("traffic.line_rate_gbps", crate::Value::Float(gbps)),
            ]
        };
        let sc = onoff(&pairs(10.0)).unwrap();
        let cfg = sc.traffic.onoff.as_ref().unwrap();
        assert_eq!(cfg.ps_per_byte, 800.0);
        // the shortest ON period: the wire time of 64 bytes
        assert_eq!(cfg.b_on_ps, 64.0 * 800.0);
        let e = onoff(&pairs(1.0)).unwrap_err();
        assert_eq!(e.key(), "traffic.rate_pps");
    }

    /// One source, ON and OFF periods fixed in effect (a shape so large that every Pareto
    /// draw rounds to its location), frames of 64 bytes: 672 ns on the wire at 1 Gbit/s.
    fn fixed_periods(b_on_ps: f64, b_off_ps: f64) -> Vec<u64> {
        let cfg = OnOffConfig {
            sources: 1,
            alpha_on: 1e12,
            alpha_off: 1e12,
            b_on_ps,
            b_off_ps,
            ps_per_byte: 8000.0,
        };
        let sizes = SizeDist::Fixed(64);
        let mut src = OnOff::new(&cfg);
        let mut st = crate::rng::streams(5, 0);
        let [periods, sz] = st.get_disjoint_mut([0, 1]).unwrap();
        (0..6)
            .map(|_| {
                let a = src.next_arrival(periods, &sizes, sz);
                assert_eq!(a.size_bytes, 64);
                a.time.ps()
            })
            .collect()
    }

    #[test]
    fn a_frame_that_ends_exactly_when_its_on_period_ends_is_the_last_of_that_period() {
        // OFF 1 us from time zero, then ON for exactly one frame's wire time: the frame ends
        // as the ON period does, no other frame starts before its end, and the next OFF
        // period starts there. Every cycle: 1 us OFF, one frame of 672 ns.
        assert_eq!(
            fixed_periods(672_000.0, 1_000_000.0),
            [1, 2, 3, 4, 5, 6].map(|k| k * 1_672_000)
        );
        // One picosecond more of ON: the second frame starts before the ON period ends and
        // is sent whole; then OFF.
        let t = fixed_periods(672_001.0, 1_000_000.0);
        assert_eq!(
            t,
            [
                1_672_000,
                2_344_000,
                2_344_000 + 1_672_000,
                2_344_000 + 2_344_000,
                2 * 2_344_000 + 1_672_000,
                3 * 2_344_000
            ]
        );
    }

    #[test]
    fn frames_of_several_sources_arriving_at_one_instant_come_in_source_order() {
        // Three sources in mid-ON, the three frames due at the same picosecond (sizes 100,
        // 200 and 300 bytes tell them apart): the lowest-numbered source's frame comes
        // first, so a seed gives one sequence of arrivals.
        let cfg = OnOffConfig {
            sources: 3,
            alpha_on: 1.3,
            alpha_off: 1.5,
            b_on_ps: 512_000.0,
            b_off_ps: 1e6,
            ps_per_byte: 8000.0,
        };
        let mut src = OnOff::new(&cfg);
        src.started = true;
        for (i, s) in src.srcs.iter_mut().enumerate() {
            *s = Src {
                arrival: 5_000_000,
                size: 100 * (i as u32 + 1),
                on_end: 1_000_000_000,
            };
        }
        let sizes = SizeDist::Fixed(64);
        let mut st = crate::rng::streams(1, 0);
        let [periods, sz] = st.get_disjoint_mut([0, 1]).unwrap();
        let got: Vec<(u64, u32)> = (0..3)
            .map(|_| {
                let a = src.next_arrival(periods, &sizes, sz);
                (a.time.ps(), a.size_bytes)
            })
            .collect();
        assert_eq!(got, [(5_000_000, 100), (5_000_000, 200), (5_000_000, 300)]);
    }
}
