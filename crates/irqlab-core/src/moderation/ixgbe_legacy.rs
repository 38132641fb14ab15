//! `ixgbe-legacy`: the 3-state dynamic ITR of the out-of-tree ixgbe 3.x driver and of upstream
//! ixgbe before 4.15 (reference §1.2-1.5).
//!
//! A vector has an Rx and a Tx ring container, each with a latency class (starting at
//! `lowest`). After each completed NAPI session:
//!
//! 1. each container's class (Tx, then Rx) is updated from its byte rate since its last update
//!    that reset its counters (thresholds 10 and 20 B/µs, one adjacent step at most); a
//!    container without packets keeps its class, so an idle Tx ring stays `lowest` and the Rx
//!    class decides; a forwarding vector's Tx bytes count as much as its Rx bytes;
//! 2. the more bulk class of the two (`max(rx, tx)`) gives a target (`lowest` 40, `low` 200, `bulk` 500 or 336, EITR units of
//!    µs × 4), and if the target differs from the vector's `itr` the vector moves a tenth of
//!    the way in rate terms, `itr = 10·T·itr / (9·T + itr)`, and EITR is written with its low
//!    three bits cleared (`itr & 0xFF8`).
//!
//! Quirks reproduced:
//! * Elapsed time is *assumed* to be the current interval, `itr >> 2` µs ([`Elapsed::Itr`]):
//!   after an idle gap the byte rate is overestimated. [`Elapsed::Measured`] takes the
//!   measured time since the previous counter reset in whole µs instead (the fix); a zero
//!   elapsed time skips the class update as the driver does when ITR is off.
//! * A session without packets leaves the class and the counters alone, but the smoothing step
//!   still runs: `ixgbe_set_itr` computes the target and smooths on every call, whatever
//!   `ixgbe_update_itr` did.
//! * Integer smoothing: from above the target is reached exactly; from below the step
//!   `itr·(T − itr) / (9T + itr)` falls under one long before the target, so the vector stalls
//!   short of it (at 490 for T = 500, 326 for 336, 190 for 200) and, since `T != itr`
//!   stays true, EITR is rewritten with the same value on every later update.
//! * The register drops the low three bits, so an `itr` of 142 programs 136 (34 µs).
//! * Integer bytes per µs (`bytes / elapsed_us`), classes compared with `>` as in the driver.

use super::{Counters, Itr, Policy, RingContainers, Sample, Totals, Variant, Write};
use crate::error::Error;
use crate::schema::{Params, keys, registry};
use crate::time::{PS_PER_US, SimDuration, SimTime};

keys! {
    /// The keys it reads.
    pub KEYS = "driver.legacy_" [
        /// The bulk class's interrupt rate (8000 or 12000).
        BULK_RATE,
        /// How the elapsed time is estimated ([`Elapsed`]).
        ELAPSED,
    ];
}

/// `IXGBE_100K_ITR`: the target of the `lowest_latency` class (10 µs).
pub const IXGBE_100K_ITR: u16 = 40;
/// `IXGBE_20K_ITR`: the target of `low_latency` and the vector's initial `itr` (50 µs).
pub const IXGBE_20K_ITR: u16 = 200;
/// `IXGBE_12K_ITR`: the bulk target upstream before 4.15 (84 µs).
pub const IXGBE_12K_ITR: u16 = 336;
/// `IXGBE_8K_ITR`: the bulk target of the 3.x driver (125 µs nominal, 124 µs programmed).
pub const IXGBE_8K_ITR: u16 = 500;
/// `IXGBE_MAX_EITR`: the EITR interval field; the low three bits are reserved.
pub const IXGBE_MAX_EITR: u16 = 0xFF8;
/// `IXGBE_MIN_EITR`.
pub const IXGBE_MIN_EITR: u16 = 8;

/// Picoseconds per EITR unit (a quarter microsecond).
const PS_PER_EITR_UNIT: u64 = PS_PER_US / 4;

/// The interval an ixgbe driver programs for a vector `itr` in EITR units (µs × 4):
/// `ixgbe_write_eitr` writes `itr & IXGBE_MAX_EITR`. Exact in picoseconds.
pub fn eitr_interval(itr: u16) -> SimDuration {
    SimDuration(u64::from(itr & IXGBE_MAX_EITR) * PS_PER_EITR_UNIT)
}

/// The end of an ixgbe-family `set_itr`: program `new` (EITR units) if it differs from the
/// vector's `itr`, which then holds it.
pub fn write_eitr(itr: &mut u16, new: u16) -> Option<Write> {
    if *itr == new {
        return None;
    }
    *itr = new;
    Some(Write::Itr(eitr_interval(new)))
}

registry! {
    key: ELAPSED;
    /// How the driver estimates the time since the previous update.
    pub enum Elapsed {
        /// The driver's assumption: the currently programmed interval, `itr >> 2` µs.
        Itr = "itr",
        /// The measured time since the previous update that reset the counters, in whole µs.
        Measured = "measured",
    }
}

/// The latency class of a ring container (`enum latency_range`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Lowest = 0,
    Low = 1,
    Bulk = 2,
}

/// A ring container: its class, counters and the time of their last reset.
#[derive(Clone, Copy, Debug)]
struct Container {
    /// `q_vector->{rx,tx}.itr`: the class.
    class: Class,
    totals: Totals,
    last_reset: SimTime,
}

impl Container {
    fn new() -> Container {
        Container {
            class: Class::Lowest,
            totals: Totals::default(),
            last_reset: SimTime::ZERO,
        }
    }
}

/// Old ixgbe 3-state dynamic ITR (§1.4-1.5).
#[derive(Debug)]
pub struct IxgbeLegacy {
    /// EITR units of the `bulk_latency` target.
    bulk_target: u16,
    elapsed: Elapsed,
    /// `q_vector->itr`: the smoothed interval, EITR units (µs × 4).
    itr: u16,
    rings: RingContainers<Container>,
}

impl IxgbeLegacy {
    /// `bulk_rate` is the bulk class's interrupt rate: 8000 gives `IXGBE_8K_ITR` = 500 (3.x,
    /// the default) and 12000 gives `IXGBE_12K_ITR` = 336 (upstream before 4.15). The driver
    /// has no formula for its constants (336 is not 4e6/12000); any other rate maps to
    /// `4_000_000 / rate` clamped to the register's range.
    /// `has_tx`: a TxRx vector.
    pub fn new(bulk_rate: u32, elapsed: Elapsed, has_tx: bool) -> IxgbeLegacy {
        let bulk_target = match bulk_rate {
            8000 => IXGBE_8K_ITR,
            12000 => IXGBE_12K_ITR,
            r => {
                let t = 4_000_000 / u64::from(r.max(1));
                u16::try_from(t.clamp(u64::from(IXGBE_MIN_EITR), u64::from(IXGBE_MAX_EITR)))
                    .unwrap_or(IXGBE_MAX_EITR)
            }
        };
        IxgbeLegacy {
            bulk_target,
            elapsed,
            itr: IXGBE_20K_ITR,
            rings: RingContainers::new(Container::new(), has_tx),
        }
    }

    /// The vector's smoothed `itr`, EITR units (µs × 4).
    pub fn itr(&self) -> u16 {
        self.itr
    }

    /// The Rx container's latency class.
    pub fn class(&self) -> Class {
        self.rings.rx.class
    }

    /// The Tx container's latency class.
    pub fn tx_class(&self) -> Class {
        self.rings.tx.class
    }

    fn target(&self, class: Class) -> u16 {
        match class {
            Class::Lowest => IXGBE_100K_ITR,
            Class::Low => IXGBE_20K_ITR,
            Class::Bulk => self.bulk_target,
        }
    }

    /// `ixgbe_update_itr` for one container, with its counters.
    fn update_class(&self, c: &mut Container, counters: Counters, now: SimTime) {
        let packets = c.totals.packets(counters);
        if packets == 0 {
            return; // nothing learned: class and counters unchanged
        }
        let elapsed_us = match self.elapsed {
            Elapsed::Itr => u64::from(self.itr >> 2),
            Elapsed::Measured => now.since(c.last_reset).ps() / PS_PER_US,
        };
        if elapsed_us == 0 {
            return; // ITR off (or no measurable time): cannot estimate, counters kept
        }
        let bytes_per_us = c.totals.bytes(counters) / elapsed_us;
        c.class = match c.class {
            Class::Lowest if bytes_per_us > 10 => Class::Low,
            Class::Low if bytes_per_us > 20 => Class::Bulk,
            Class::Low if bytes_per_us <= 10 => Class::Lowest,
            Class::Bulk if bytes_per_us <= 20 => Class::Low,
            c => c,
        };
        c.totals.reset(counters);
        c.last_reset = now;
    }
}

/// The driver's exponential smoothing, `(10·T·itr) / (9·T + itr)` in integers (u32 as in C).
pub fn smooth(target: u16, itr: u16) -> u16 {
    let (t, o) = (u32::from(target), u32::from(itr));
    let den = 9 * t + o;
    if den == 0 {
        return 0;
    }
    // The result lies between `itr` and `target` (a weighted harmonic mean), so it fits.
    u16::try_from(10 * t * o / den).unwrap_or(u16::MAX)
}

impl Policy for IxgbeLegacy {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(eitr_interval(IXGBE_20K_ITR)))
    }

    /// `ixgbe_set_itr`: update the classes (Tx first), then target of the more bulk one,
    /// smoothing and the EITR write.
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        self.rings = self.rings.updated(s, |c, k| self.update_class(c, k, s.now));
        let target = self.target(self.rings.rx.class.max(self.rings.tx.class));
        if target == self.itr {
            return None;
        }
        self.itr = smooth(target, self.itr);
        Some(Write::Itr(eitr_interval(self.itr)))
    }

    fn interval(&self) -> SimDuration {
        eitr_interval(self.itr)
    }
}

/// The settings of `ixgbe-legacy`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub bulk_rate: u32,
    pub elapsed: Elapsed,
}

impl Variant for IxgbeLegacy {
    const KIND: &'static str = "ixgbe-legacy";
    const KEYS: &'static [&'static str] = KEYS;
    const ADAPTIVE: bool = true;
    const ITR: Itr = Itr::Programs;
    type Config = Config;

    fn from_params(p: &Params) -> Result<Config, Error> {
        Ok(Config {
            bulk_rate: p.u64(BULK_RATE) as u32,
            elapsed: Elapsed::of(p)?,
        })
    }

    fn new_vector(c: &Config, has_tx: bool) -> IxgbeLegacy {
        IxgbeLegacy::new(c.bulk_rate, c.elapsed, has_tx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moderation::us;

    /// Feeds cumulative counters built from deltas and checks the state after each step.
    struct Feed {
        t_ps: u64,
        packets: u64,
        bytes: u64,
    }

    impl Feed {
        fn new() -> Feed {
            Feed {
                t_ps: 0,
                packets: 0,
                bytes: 0,
            }
        }
        fn step(&mut self, dt_us: u64, packets: u64, bytes: u64) -> Sample {
            self.t_ps += dt_us * PS_PER_US;
            self.packets += packets;
            self.bytes += bytes;
            Sample::rx_only(SimTime(self.t_ps), 0, self.packets, self.bytes, 0)
        }
    }

    #[test]
    fn eitr_interval_drops_the_reserved_bits_exactly() {
        for (itr, ps) in [
            (40u16, 10_000_000u64),
            (200, 50_000_000),
            (142, 34_000_000),
            (336, 84_000_000),
            (500, 124_000_000),
            (490, 122_000_000),
            (7, 0),
            (0xFFFF, 1_022_000_000),
        ] {
            assert_eq!(eitr_interval(itr).ps(), ps, "itr {itr}");
        }
    }

    #[test]
    fn smoothing_is_the_drivers_integer_ewma() {
        // (target, old itr, new itr)
        for (t, o, n) in [
            (40u16, 500u16, 232u16), // the reference's check: 0.9·8K + 0.1·100K ≈ 17.2K ints/s
            (40, 200, 142),
            (40, 41, 40), // from above: reaches the target exactly
            (200, 500, 434),
            (200, 201, 200),
            (500, 200, 212), // from below
            (500, 489, 490),
            (500, 490, 490), // stalls: 490·10 < 9·500 + 490
            (336, 325, 326),
            (336, 326, 326),
            (200, 190, 190),
        ] {
            assert_eq!(smooth(t, o), n, "target {t}, itr {o}");
        }
    }

    #[test]
    fn approaching_from_below_stalls_short_of_the_target_and_rewrites() {
        for (bulk_rate, stall) in [(8000, 490u16), (12000, 326)] {
            let mut p = IxgbeLegacy::new(bulk_rate, Elapsed::Measured, false);
            let mut f = Feed::new();
            // 100 µs windows at 30 B/µs: lowest → low → bulk, then bulk for good.
            let mut last = None;
            for _ in 0..200 {
                last = p.on_complete(&f.step(100, 20, 3000));
            }
            assert_eq!(p.class(), Class::Bulk);
            assert_eq!(p.itr(), stall, "bulk rate {bulk_rate}");
            // Still != target: every update rewrites the same value.
            assert_eq!(last, Some(Write::Itr(eitr_interval(stall))));
        }
    }

    #[test]
    fn from_above_the_ewma_reaches_the_target_and_stops_writing() {
        let mut p = IxgbeLegacy::new(8000, Elapsed::Measured, false);
        p.itr = 500;
        let mut f = Feed::new();
        // Lowest class (1 B/µs): 500 → 232 → 156 → 120 → ... → 40.
        let seq: Vec<u16> = (0..4)
            .map(|_| {
                p.on_complete(&f.step(100, 1, 100));
                p.itr()
            })
            .collect();
        assert_eq!(seq, [232, 156, 120, 100]);
        for _ in 0..40 {
            p.on_complete(&f.step(100, 1, 100));
        }
        assert_eq!(p.itr(), 40);
        assert_eq!(p.on_complete(&f.step(100, 1, 100)), None);
        assert_eq!(p.interval(), us(10.0));
    }

    #[test]
    fn class_transitions_at_the_10_and_20_bytes_per_us_thresholds() {
        // Measured elapsed, 100 µs windows: bytes/100 is the byte rate.
        // (bytes in the window, class after, itr after, programmed interval µs)
        let table: &[(u64, Class, u16, f64)] = &[
            (1000, Class::Lowest, 142, 34.0), // 10 B/µs is not > 10
            (1100, Class::Low, 146, 36.0),    // 11 > 10: lowest → low
            (2000, Class::Low, 150, 36.0),    // 20 is not > 20
            (2100, Class::Bulk, 161, 40.0),   // 21 > 20: low → bulk
            (2100, Class::Bulk, 172, 42.0),
            (2000, Class::Low, 174, 42.0),    // 20 <= 20: bulk → low
            (1000, Class::Lowest, 130, 32.0), // 10 <= 10: low → lowest
            (9900, Class::Low, 134, 32.0),    // 99 B/µs from lowest: one step only
            (9900, Class::Bulk, 144, 36.0),
            (0, Class::Bulk, 155, 38.0), // no packets: class kept, smoothing goes on
        ];
        let mut p = IxgbeLegacy::new(8000, Elapsed::Measured, false);
        let mut f = Feed::new();
        for (i, &(bytes, class, itr, interval)) in table.iter().enumerate() {
            let packets = if bytes == 0 { 0 } else { 10 };
            let w = p.on_complete(&f.step(100, packets, bytes));
            assert_eq!(p.class(), class, "step {i}");
            assert_eq!(p.itr(), itr, "step {i}");
            assert_eq!(w, Some(Write::Itr(us(interval))), "step {i}");
            assert_eq!(p.interval(), us(interval), "step {i}");
        }
    }

    #[test]
    fn a_session_without_packets_keeps_the_class_but_still_smooths() {
        let mut p = IxgbeLegacy::new(8000, Elapsed::Itr, false);
        assert_eq!(p.initial(), Some(Write::Itr(us(50.0))));
        assert_eq!(p.interval(), us(50.0));
        let mut f = Feed::new();
        // Class lowest, target 40: 200 → 142 even though nothing arrived.
        let w = p.on_complete(&f.step(10, 0, 0));
        assert_eq!(
            (p.class(), p.itr(), w),
            (Class::Lowest, 142, Some(Write::Itr(us(34.0))))
        );
    }

    #[test]
    fn elapsed_itr_overestimates_after_an_idle_gap_measured_does_not() {
        // One 1500-byte packet after 10 ms of silence, the vector at its initial 50 µs.
        // (elapsed mode, class after, itr after)
        for (mode, class, itr) in [
            (Elapsed::Itr, Class::Low, 200), // 1500 / 50 = 30 B/µs > 10; target 200 = itr
            (Elapsed::Measured, Class::Lowest, 142), // 1500 / 10000 = 0 B/µs
        ] {
            let mut p = IxgbeLegacy::new(8000, mode, false);
            let mut f = Feed::new();
            p.on_complete(&f.step(10_000, 1, 1500));
            assert_eq!((p.class(), p.itr()), (class, itr), "{mode:?}");
        }
    }

    #[test]
    fn elapsed_itr_uses_the_smoothed_interval() {
        // itr 200 → 50 µs assumed, whatever the 1 ms that really passed: 1100 B is 22 B/µs.
        // lowest → low: the target (200) equals itr, nothing is written.
        let mut p = IxgbeLegacy::new(8000, Elapsed::Itr, false);
        let mut f = Feed::new();
        assert_eq!(p.on_complete(&f.step(1000, 5, 1100)), None);
        assert_eq!((p.class(), p.itr()), (Class::Low, 200));
        // low → bulk (22 > 20): 200 → 212, written as 212 & 0xFF8 = 208 (52 µs).
        let w = p.on_complete(&f.step(1000, 5, 1100));
        assert_eq!(
            (p.class(), p.itr(), w),
            (Class::Bulk, 212, Some(Write::Itr(us(52.0))))
        );
        // At itr 212 (53 µs assumed) the same 1100 B is 20 B/µs: bulk → low.
        p.on_complete(&f.step(1000, 5, 1100));
        assert_eq!((p.class(), p.itr()), (Class::Low, 210));
    }

    #[test]
    fn measured_zero_elapsed_skips_the_update_and_keeps_the_counters() {
        let mut p = IxgbeLegacy::new(8000, Elapsed::Measured, false);
        let mut f = Feed::new();
        p.on_complete(&f.step(100, 1, 100)); // reset at t = 100 µs, lowest, itr 142
        // Same microsecond: 0 µs elapsed → no class update, counters not reset.
        let s = Sample::rx_only(SimTime(100 * PS_PER_US + 999_999), 0, 2, 1200, 0);
        p.on_complete(&s);
        assert_eq!(p.class(), Class::Lowest);
        // 100 µs after the reset: the skipped 1100 bytes count, 1100 / 100 = 11 > 10.
        let s = Sample::rx_only(SimTime(200 * PS_PER_US), 0, 2, 1200, 0);
        p.on_complete(&s);
        assert_eq!(p.class(), Class::Low);
    }

    #[test]
    fn bulk_targets_by_rate() {
        for (rate, target) in [(8000, 500), (12000, 336), (10000, 400), (0, IXGBE_MAX_EITR)] {
            assert_eq!(
                IxgbeLegacy::new(rate, Elapsed::Itr, false).bulk_target,
                target
            );
        }
    }

    #[test]
    fn the_more_bulk_container_sets_the_target() {
        // A forwarding vector: Rx idle in this session, Tx 2000 B in the assumed 50 µs: 40
        // B/µs, bulk-bound. The Tx class moves one step (lowest → low); Rx stays lowest.
        let tx = |packets: u64, bytes: u64| Sample {
            now: SimTime(PS_PER_US),
            tx_packets: packets,
            tx_bytes: bytes,
            ..Sample::default()
        };
        let mut p = IxgbeLegacy::new(8000, Elapsed::Itr, true);
        let w = p.on_complete(&tx(10, 2000));
        assert_eq!((p.class(), p.tx_class()), (Class::Lowest, Class::Low));
        assert_eq!(w, None, "the low target is the initial 200: no write");
        // An Rx-only vector ignores Tx counters.
        let mut q = IxgbeLegacy::new(8000, Elapsed::Itr, false);
        q.on_complete(&tx(10, 2000));
        assert_eq!(q.tx_class(), Class::Lowest);
        // Tx bulk: the target follows it (a smoothing step towards 500).
        let w = p.on_complete(&tx(20, 4000));
        assert_eq!(p.tx_class(), Class::Bulk);
        assert_eq!(p.itr(), smooth(IXGBE_8K_ITR, IXGBE_20K_ITR));
        assert_eq!(w, Some(Write::Itr(eitr_interval(p.itr()))));
    }

    #[test]
    fn odd_counters_do_not_panic() {
        let mut p = IxgbeLegacy::new(8000, Elapsed::Itr, false);
        for (now, packets, bytes) in [(5u64, u64::MAX, u64::MAX), (1, 3, 0), (0, 0, 0)] {
            let s = Sample::rx_only(SimTime(now), u64::MAX, packets, bytes, u64::MAX);
            p.on_complete(&s);
        }
    }
}
