//! `ixgbe`: the adaptive ITR of upstream ixgbe since 4.15 (commit `b4ded8327fea`, as in
//! v6.13.7; reference §2).
//!
//! A vector has an Rx and a Tx ring container, both starting at `126 | LATENCY` (254). After
//! each session that `napi_complete_done` completed (that is when the engine calls
//! [`Policy::on_complete`]) `ixgbe_set_itr` updates the Tx container, then the Rx container,
//! with the same rule; each picks a value in µs plus a mode flag (§2.5):
//!
//! * stale (`jiffies > next_update`, i.e. 2 jiffies or more since its last update):
//!   10 µs, latency mode;
//! * no packets: the vector's interval + 2 µs (at most 126), keeping its own mode flag;
//! * P < 4 and B < 9000: latency mode, from the size formula (halved);
//! * P < 48: + 2 µs (at most 126), bulk; P < 96: keep, bulk; P < 256: halve (`itr >> 3`
//!   of the µs × 4 value, at least 10), bulk;
//! * P ≥ 256: bulk, from the size formula.
//!
//! The size formula approximates `(170 · (size + 24)) / (size + 640)` scaled by 256 and
//! rounds up to 2 µs with a divisor by link speed (10G, 100M and others: 512; 2.5G, 1G,
//! 10M: 128 with the value capped at 8064 first). The vector then takes the smaller raw
//! container value, clears the flag, shifts it to µs × 4 and writes EITR if it changed.
//!
//! A Tx ring that carries nothing (a receive-only workload) still takes part: it is stale
//! (10 µs, latency) after a quiet spell like the Rx container, and otherwise creeps by 2 µs
//! from the vector's interval, keeping its latency flag. So when the Rx container chooses a
//! latency-mode value above `interval + 2` (large packets, or a 1G link), the idle Tx
//! container's `interval + 2` wins the min. A vector without a Tx ring
//! (`nic.tx_ring_descriptors = 0`) keeps its Tx container at 254, which never wins.
//!
//! Quirks reproduced:
//! * The min over containers compares raw u8 values *including* the 0x80 latency flag: any
//!   bulk value beats any latency value.
//! * The halving path shifts the vector's µs × 4 value by 3, so the result can be odd in µs;
//!   EITR then drops bit 2 as the register has 2 µs granularity (`itr & 0xFF8`): 13 µs is
//!   programmed as 12 µs, while the driver keeps 13 (52) as its `q_vector->itr` for the
//!   next `itr >> 2`.
//! * Staleness resets to 10 µs latency mode whatever the counters say, and the counters of
//!   the stale window are discarded (every path clears them).
//! * Integer average size `B / P`, the piecewise formula's breakpoints (≤ 60, ≤ 316, ≤ 1084,
//!   < 1968) and `DIV_ROUND_UP`, as in the driver.
//! * `next_update = jiffies + 1` after every update, including at ring setup (jiffies 0), so
//!   a first session at jiffies ≥ 2 already counts as stale.

use super::config::LinkSpeedPolicy;
use super::ixgbe_legacy::{IXGBE_20K_ITR, eitr_interval, write_eitr};
use super::{Counters, Policy, RingContainers, Sample, Totals, Write, link_is};
use crate::time::SimDuration;

/// `IXGBE_ITR_ADAPTIVE_MIN_INC`, µs.
pub const MIN_INC: u32 = 2;
/// `IXGBE_ITR_ADAPTIVE_MIN_USECS`.
pub const MIN_USECS: u32 = 10;
/// `IXGBE_ITR_ADAPTIVE_MAX_USECS`.
pub const MAX_USECS: u32 = 126;
/// `IXGBE_ITR_ADAPTIVE_LATENCY`: the mode flag in the u8 container value.
pub const LATENCY: u8 = 0x80;
/// `IXGBE_ITR_ADAPTIVE_BULK`.
pub const BULK: u8 = 0x00;

/// The link-speed branch of the size formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SizeDivisor {
    /// 10G, 100M and any other speed: `DIV_ROUND_UP(w, 2 * 256) * 2`.
    Fast,
    /// 2.5G, 1G, 10M: `DIV_ROUND_UP(min(w, 8064), 2 * 64) * 2`.
    Slow,
}

/// A ring container (`q_vector->rx` or `->tx`).
#[derive(Clone, Copy, Debug)]
struct Container {
    /// `itr`: µs plus the latency flag.
    itr: u8,
    /// `next_update`, jiffies.
    next_update: u64,
    totals: Totals,
}

impl Container {
    fn new() -> Container {
        Container {
            itr: MAX_USECS as u8 | LATENCY,
            // `ixgbe_add_ring` at time zero: jiffies 0 + 1.
            next_update: 1,
            totals: Totals::default(),
        }
    }
}

/// Current upstream ixgbe adaptive ITR (§2).
#[derive(Debug)]
pub struct Ixgbe {
    divisor: SizeDivisor,
    /// `q_vector->itr`: µs × 4.
    itr: u16,
    rings: RingContainers<Container>,
}

impl Ixgbe {
    /// The vector's `itr`, µs × 4 (before the register's masking).
    pub fn itr(&self) -> u16 {
        self.itr
    }

    /// The Rx container's value: µs plus [`LATENCY`] when in latency mode.
    pub fn rx_itr(&self) -> u8 {
        self.rings.rx.itr
    }

    /// The Tx container's value.
    pub fn tx_itr(&self) -> u8 {
        self.rings.tx.itr
    }

    /// The size formula: µs to add for an average wire size, in the mode `itr` carries.
    fn by_size(&self, itr: u32, avg_wire_size: u64) -> u32 {
        let mut w: u64 = match avg_wire_size {
            0..=60 => 5120,                           // 50K ints/s
            61..=316 => avg_wire_size * 40 + 2720,    // 50K to 16K
            317..=1084 => avg_wire_size * 15 + 11452, // 16K to 9.2K
            1085..=1967 => avg_wire_size * 5 + 22420, // 9.2K to 8K
            _ => 32256,                               // plateau at 8K
        };
        if itr & u32::from(LATENCY) != 0 {
            w >>= 1;
        }
        let add = match self.divisor {
            SizeDivisor::Fast => w.div_ceil(u64::from(MIN_INC) * 256),
            SizeDivisor::Slow => w.min(8064).div_ceil(u64::from(MIN_INC) * 64),
        };
        // w ≤ 32256, so add ≤ 63.
        itr + u32::try_from(add).unwrap_or(MAX_USECS) * MIN_INC
    }

    /// `ixgbe_update_itr` for one container, with its counters.
    fn update(&self, c: &mut Container, counters: Counters, jiffies: u64) {
        let itr = self.value(c, counters, jiffies);
        // `ring_container->itr` is a u8; every path stays ≤ 126 | 0x80.
        c.itr = u8::try_from(itr).unwrap_or(u8::MAX);
        c.next_update = jiffies.saturating_add(1);
        c.totals.reset(counters);
    }

    fn value(&self, c: &Container, counters: Counters, jiffies: u64) -> u32 {
        if jiffies > c.next_update {
            return MIN_USECS | u32::from(LATENCY);
        }
        let cur = u32::from(self.itr >> 2);
        let packets = c.totals.packets(counters);
        if packets == 0 {
            return (cur + MIN_INC).min(MAX_USECS) + u32::from(c.itr & LATENCY);
        }
        let bytes = c.totals.bytes(counters);
        if packets < 4 && bytes < 9000 {
            return self.by_size(u32::from(LATENCY), bytes / packets);
        }
        if packets < 48 {
            return (cur + MIN_INC).min(MAX_USECS);
        }
        if packets < 96 {
            return cur;
        }
        if packets < 256 {
            return u32::from(self.itr >> 3).max(MIN_USECS);
        }
        self.by_size(u32::from(BULK), bytes / packets)
    }
}

impl Policy for Ixgbe {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(eitr_interval(IXGBE_20K_ITR)))
    }

    /// `ixgbe_set_itr`: update Tx (a ringless container: nothing) and Rx, take the raw min,
    /// write if new.
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        self.rings = self.rings.updated(s, |c, k| self.update(c, k, s.jiffies));
        let v = self.rings.rx.itr.min(self.rings.tx.itr);
        write_eitr(&mut self.itr, u16::from(v & !LATENCY) << 2)
    }

    fn interval(&self) -> SimDuration {
        eitr_interval(self.itr)
    }
}

impl LinkSpeedPolicy for Ixgbe {
    const KIND: &'static str = "ixgbe";

    /// `link_gbps`: 10, 0.1 and any other value select the 10G branch of the size formula;
    /// 2.5, 1 and 0.01 the 1G branch. `has_tx`: a TxRx vector (else Rx-only).
    fn new(link_gbps: f64, has_tx: bool) -> Ixgbe {
        let slow = [2.5, 1.0, 0.01].iter().any(|&v| link_is(link_gbps, v));
        Ixgbe {
            divisor: if slow {
                SizeDivisor::Slow
            } else {
                SizeDivisor::Fast
            },
            itr: IXGBE_20K_ITR,
            rings: RingContainers::new(Container::new(), has_tx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moderation::us;
    use crate::time::SimTime;

    /// One session on a fresh policy at jiffies 1 (not stale).
    fn first(link: f64, packets: u64, bytes: u64) -> (Ixgbe, Option<Write>) {
        let mut p = Ixgbe::new(link, false);
        let w = p.on_complete(&Sample::rx_only(SimTime(1), 1, packets, bytes, 1));
        (p, w)
    }

    #[test]
    fn size_formula_at_10g_and_1g() {
        // (link, avg wire size B, bulk µs (P = 256), latency µs (P = 1))
        let table: &[(f64, u64, u8, u8)] = &[
            (10.0, 40, 20, 10),
            (10.0, 60, 20, 10),
            (10.0, 128, 32, 16),
            (10.0, 316, 60, 30),
            (10.0, 1084, 110, 56),
            (10.0, 1500, 118, 60),
            (10.0, 1968, 126, 64),
            (10.0, 8000, 126, 64),
            (0.1, 60, 20, 10),
            (40.0, 60, 20, 10), // any other speed: the 10G branch
            (1.0, 60, 80, 40),
            (1.0, 128, 124, 62), // 7840 / 128 → 62 · 2; latency 3920 / 128 → 31 · 2
            (1.0, 256, 126, 102), // 12960 capped at 8064; latency 6480 (halved first)
            (1.0, 316, 126, 120), // latency 7680 / 128 = 60 · 2
            (1.0, 1500, 126, 126),
            (2.5, 60, 80, 40),
            (0.01, 60, 80, 40),
        ];
        for &(link, size, bulk, lat) in table {
            let (p, w) = first(link, 256, 256 * size);
            assert_eq!(p.rx_itr(), bulk, "{link}G {size} B bulk");
            assert_eq!(w, Some(Write::Itr(us(f64::from(bulk)))));
            let (p, w) = first(link, 1, size);
            assert_eq!(p.rx_itr(), lat | LATENCY, "{link}G {size} B latency");
            assert_eq!(w, Some(Write::Itr(us(f64::from(lat)))));
            assert_eq!(p.interval(), us(f64::from(lat)));
        }
    }

    #[test]
    fn latency_needs_few_packets_and_few_bytes() {
        // (packets, bytes, rx_itr after) from the initial 50 µs vector at 10G.
        let table: &[(u64, u64, u8)] = &[
            (1, 60, 10 | LATENCY),
            (2, 0, 10 | LATENCY),    // avg 0 ≤ 60
            (3, 8999, 64 | LATENCY), // avg 2999: plateau 32256 >> 1 = 16128 → 32 · 2
            (3, 9000, 52),           // B ≥ 9000: bulk creep, 50 + 2
            (4, 240, 52),            // P ≥ 4: bulk creep
        ];
        for &(packets, bytes, want) in table {
            let (p, _) = first(10.0, packets, bytes);
            assert_eq!(p.rx_itr(), want, "{packets} packets, {bytes} B");
        }
    }

    #[test]
    fn creep_keep_halve() {
        // Sessions one jiffy apart from the initial 50 µs vector (itr 200) at 10G.
        // (packets, bytes, rx_itr after, vector itr after (µs × 4), programmed µs, write?)
        let table: &[(u64, u64, u8, u16, f64, bool)] = &[
            (10, 6000, 52, 208, 52.0, true),  // 4 ≤ P < 48: + 2 µs, bulk
            (50, 3000, 52, 208, 52.0, false), // 48 ≤ P < 96: keep
            (100, 6000, 26, 104, 26.0, true), // 96 ≤ P < 256: 208 >> 3 = 26
            (100, 6000, 13, 52, 12.0, true),  // 104 >> 3 = 13: odd, EITR 52 & 0xFF8 = 48
            (100, 6000, 10, 40, 10.0, true),  // 52 >> 3 = 6 → at least 10
            (0, 0, 12, 48, 12.0, true),       // no packets: + 2, bulk flag kept
            (1, 60, 10 | LATENCY, 40, 10.0, true),
            (0, 0, 12 | LATENCY, 48, 12.0, true), // no packets: + 2, latency flag kept
            (47, 3000, 14, 56, 14.0, true),
            (95, 6000, 14, 56, 14.0, false),
            (255, 15000, 10, 40, 10.0, true), // 56 >> 3 = 7 → 10
        ];
        let mut p = Ixgbe::new(10.0, false);
        let (mut packets, mut bytes) = (0, 0);
        for (j, &(dp, db, rx, itr, interval, write)) in table.iter().enumerate() {
            packets += dp;
            bytes += db;
            let s = Sample::rx_only(SimTime(j as u64), j as u64, packets, bytes, 0);
            let w = p.on_complete(&s);
            assert_eq!((p.rx_itr(), p.itr()), (rx, itr), "step {j}");
            assert_eq!(p.interval(), us(interval), "step {j}");
            assert_eq!(w, write.then_some(Write::Itr(us(interval))), "step {j}");
        }
    }

    #[test]
    fn creep_stops_at_126() {
        let mut p = Ixgbe::new(10.0, false);
        let mut packets = 0;
        for j in 0..100u64 {
            packets += 20;
            let s = Sample::rx_only(SimTime(j), j, packets, packets * 1500, 0);
            p.on_complete(&s);
        }
        assert_eq!((p.rx_itr(), p.interval()), (126, us(126.0)));
    }

    #[test]
    fn staleness_resets_to_10_us_latency() {
        // (jiffies, packets in the session, rx_itr after, programmed µs)
        let table: &[(u64, u64, u8, f64)] = &[
            (1, 300, 20, 20.0),           // next_update was 1: fresh, 60 B bulk → 20 µs
            (2, 20, 22, 22.0),            // next_update 2: fresh, creep
            (4, 300, 10 | LATENCY, 10.0), // 4 > 3: stale, counters ignored
            (5, 20, 12, 12.0),            // fresh again: creep from 10
            (5, 20, 14, 14.0),            // same jiffy is fine
            (7, 0, 10 | LATENCY, 10.0),   // stale
        ];
        let mut p = Ixgbe::new(10.0, false);
        let mut packets = 0;
        for (i, &(jiffies, dp, rx, interval)) in table.iter().enumerate() {
            packets += dp;
            let s = Sample::rx_only(SimTime(i as u64), jiffies, packets, packets * 60, 0);
            p.on_complete(&s);
            assert_eq!(p.rx_itr(), rx, "step {i}");
            assert_eq!(p.interval(), us(interval), "step {i}");
        }
        // The very first session, at jiffies 2, is already stale (ring added at jiffies 0).
        let mut p = Ixgbe::new(10.0, false);
        let s = Sample::rx_only(SimTime(0), 2, 300, 300 * 1500, 0);
        assert_eq!(p.on_complete(&s), Some(Write::Itr(us(10.0))));
    }

    #[test]
    fn initial_and_no_ring_tx() {
        let p = Ixgbe::new(10.0, false);
        assert_eq!(p.initial(), Some(Write::Itr(us(50.0))));
        assert_eq!(p.interval(), us(50.0));
        assert_eq!(p.tx_itr(), 254);
        // rx at 126 | LAT = 254 ties with tx: 126 µs.
        let mut p = Ixgbe::new(10.0, false);
        p.rings.rx.itr = 124 | LATENCY;
        p.itr = 4 * 124;
        let s = Sample::rx_only(SimTime(0), 1, 0, 0, 0);
        assert_eq!(p.on_complete(&s), Some(Write::Itr(us(126.0))));
        assert_eq!(p.rx_itr(), 254);
    }

    /// A TxRx vector: one session of `rx` packets of `rx_size` B and `tx` of `tx_size` B.
    fn txrx(p: &mut Ixgbe, jiffies: u64, rx: (u64, u64), tx: (u64, u64)) -> Option<Write> {
        let s = Sample {
            now: SimTime(jiffies),
            jiffies,
            packets: p.rings.rx.totals.packets(Counters::default()) + rx.0,
            bytes: rx.0 * rx.1,
            tx_packets: tx.0,
            tx_bytes: tx.0 * tx.1,
            ..Sample::default()
        };
        let w = p.on_complete(&s);
        p.rings.rx.totals = Totals::default();
        p.rings.tx.totals = Totals::default();
        w
    }

    #[test]
    fn an_idle_tx_ring_caps_a_latency_mode_rx_value_at_interval_plus_2() {
        // (Rx packets, Rx size, Rx-only: rx_itr / programmed µs, TxRx: tx_itr / programmed µs)
        // from the initial 50 µs vector at 10G, one session at jiffies 1.
        let table: &[(u64, u64, u8, f64, u8, f64)] = &[
            // 1 packet of 1500 B: Rx latency 60 µs; the idle Tx creeps to 52 | LAT and wins.
            (1, 1500, 60 | LATENCY, 60.0, 52 | LATENCY, 52.0),
            // 1 packet of 60 B: Rx latency 10 µs < 52: Rx wins either way.
            (1, 60, 10 | LATENCY, 10.0, 52 | LATENCY, 10.0),
            // 300 packets of 60 B: Rx bulk 20 µs beats any latency value.
            (300, 60, 20, 20.0, 52 | LATENCY, 20.0),
            // no packets: both creep to 52, Rx keeps its latency flag: a tie.
            (0, 0, 52 | LATENCY, 52.0, 52 | LATENCY, 52.0),
        ];
        for &(n, size, rx_only, rx_only_us, tx_after, txrx_us) in table {
            let mut a = Ixgbe::new(10.0, false);
            let w = txrx(&mut a, 1, (n, size), (0, 0));
            assert_eq!(a.rx_itr(), rx_only, "Rx-only {n} x {size} B");
            assert_eq!(a.tx_itr(), 254, "a ringless Tx container keeps its value");
            assert_eq!(w, Some(Write::Itr(us(rx_only_us))));
            let mut b = Ixgbe::new(10.0, true);
            let w = txrx(&mut b, 1, (n, size), (0, 0));
            assert_eq!(b.rx_itr(), rx_only, "the Rx rule does not change");
            assert_eq!(b.tx_itr(), tx_after, "TxRx {n} x {size} B");
            assert_eq!(w, Some(Write::Itr(us(txrx_us))), "TxRx {n} x {size} B");
        }
    }

    #[test]
    fn the_tx_container_follows_the_same_rule_with_its_own_counters() {
        // A forwarding vector: Tx sees what Rx saw one session earlier. Sessions one jiffy
        // apart from 50 µs at 10G; (Rx n, Tx n, size, rx_itr, tx_itr, programmed µs).
        let table: &[(u64, u64, u64, u8, u8, f64)] = &[
            // Rx 300 x 60 B: bulk 20; Tx idle creeps 52 | LAT: bulk wins.
            (300, 0, 60, 20, 52 | LATENCY, 20.0),
            // Rx 300 again: 20; Tx 300 x 60 B: bulk 20 too.
            (300, 300, 60, 20, 20, 20.0),
            // Rx 10 (creep from the vector's 20 to 22); Tx 300: 20. The smaller wins.
            (10, 300, 60, 22, 20, 20.0),
            // Traffic stops: both creep from the vector's 20 to 22, keeping their bulk flags.
            (0, 0, 60, 22, 22, 22.0),
            // Rx sees 1 packet of 1500 B (latency 60); the bulk Tx value wins the raw min.
            (1, 0, 1500, 60 | LATENCY, 24, 24.0),
        ];
        let mut p = Ixgbe::new(10.0, true);
        for (j, &(rx, tx, size, rx_itr, tx_itr, interval)) in table.iter().enumerate() {
            txrx(&mut p, j as u64 + 1, (rx, size), (tx, size));
            assert_eq!((p.rx_itr(), p.tx_itr()), (rx_itr, tx_itr), "step {j}");
            assert_eq!(p.interval(), us(interval), "step {j}");
        }
        // Two quiet jiffies: both containers are stale, 10 µs latency.
        txrx(&mut p, 8, (300, 1500), (300, 1500));
        assert_eq!((p.rx_itr(), p.tx_itr()), (10 | LATENCY, 10 | LATENCY));
        assert_eq!(p.interval(), us(10.0));
    }

    #[test]
    fn odd_counters_do_not_panic() {
        let mut p = Ixgbe::new(f64::NAN, false);
        for (j, packets, bytes) in [(u64::MAX, u64::MAX, u64::MAX), (0, 3, u64::MAX), (0, 0, 0)] {
            let s = Sample::rx_only(SimTime(0), j, packets, bytes, 0);
            p.on_complete(&s);
        }
    }

    #[test]
    fn latency_mode_sizes_by_the_average_of_2_or_3_packets() {
        // P < 4 and B < 9000: the size formula takes the integer average B / P, halved for
        // latency mode, at 10G. (packets, bytes, rx_itr after)
        let table: &[(u64, u64, u8)] = &[
            (2, 120, 10 | LATENCY),  // avg 60: 5120 >> 1 = 2560 → 5 · 2
            (3, 300, 14 | LATENCY),  // avg 100: 6720 >> 1 = 3360 → 7 · 2
            (3, 4500, 60 | LATENCY), // avg 1500: 29920 >> 1 = 14960 → 30 · 2
        ];
        for &(packets, bytes, want) in table {
            let (p, w) = first(10.0, packets, bytes);
            assert_eq!(p.rx_itr(), want, "{packets} packets, {bytes} B");
            let interval = f64::from(want & !LATENCY);
            assert_eq!(w, Some(Write::Itr(us(interval))));
        }
    }
}
