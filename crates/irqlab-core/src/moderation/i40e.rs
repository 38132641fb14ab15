//! `i40e`: the adaptive ITR of i40e (v6.13.7, A. Duyck's 2018 rework; reference §3.1) for a
//! vector with one Rx ring.
//!
//! Each container holds a `target_itr` and the `current_itr` last programmed, in µs with a mode
//! flag (`LATENCY` = 0x8000) in a u16. After each session that `napi_complete_done`
//! completed, `i40e_update_enable_itr` updates the Tx container (no ring here: it returns at
//! once and keeps its initial values), then the Rx container:
//!
//! * stale (`jiffies > next_update`): 2 µs, latency mode;
//! * `itr_countdown > 0` (an ITR was written in the last three interrupts): keep the target,
//!   discard the sample;
//! * 0 < P < 4, B < 9000 and the Tx target in latency mode: latency mode, size formula;
//! * P < 56: target + 2 µs, keeping its flag, capped at 126;
//! * P ≤ 256: `min(tx.current, rx.current)` without the flag (bulk): kept if P ≤ 112,
//!   halved (at least 2) otherwise;
//! * P > 256: bulk, size formula.
//!
//! The size formula divides by a link-speed divisor (40G 2048, 25G/20G 1024, 10G and any
//! other 512, 1G/100M 64), rounds up to 2 µs and caps at 126. Then *one* ITR register is
//! written per interrupt, lazily: (1) Rx target < Rx current, (2) Tx target < Tx current or
//! the Tx increase exceeds the Rx increase, (3) Rx target != Rx current; else no write and the
//! countdown decrements. After a write `current = target` and `itr_countdown = 3`. The engine
//! applies the Rx write; a Tx write (never happens here) would not change the Rx throttle.
//! The hardware fires an interrupt at once when the ITR is updated, which is why the driver
//! discards the next samples; modelling that belongs to the engine.
//!
//! Quirks reproduced:
//! * The write-priority comparisons use the raw u16 *including* the 0x8000 flag, in signed
//!   `int` arithmetic as C promotes them: a latency-mode target counts as larger than any
//!   bulk value, so a drop from bulk 16 µs to latency 2 µs goes through rule (3), not (1).
//!   The flag is masked off (`& 0x1FFE`) only when the value is placed into the register.
//! * The three samples after every write are discarded, and their counters cleared.
//! * In the 56..256 band the new value is `min(tx.current, rx.current)` on raw values: the
//!   ringless Tx container's `50 | 0x8000` wins over any Rx latency value above it (an Rx at
//!   64 µs latency mode drops to 50 µs bulk).
//! * Integer average size, the breakpoints (≤ 60, ≤ 380, ≤ 1084, ≤ 1980), `DIV_ROUND_UP`,
//!   and halving as `(itr / 2) & 0x1FFE` (rounds down to 2 µs).
//! * Stale containers reset to 2 µs latency mode, their counters discarded.
//! * The programmed interval has 2 µs resolution: `current & 0x1FFE` µs.
//!
//! Initial values: the Rx container starts from `ITR_TO_REG(I40E_ITR_RX_DEF)` = 50 (the
//! driver strips the DYNAMIC flag), `next_update` = jiffies + 1 = 1, `itr_countdown` = 0
//! (zeroed allocation). The ringless Tx container is modelled, as the integration asked, at
//! `50 | 0x8000` for both target and current. Note that in the driver `i40e_vsi_configure_msix`
//! sets `tx.target_itr = ITR_TO_REG(tx_ring->itr_setting)` = 50 *without* the flag, and a
//! real (idle) Tx ring would creep to 126 and turn to latency mode once Rx reaches 126; with
//! the flag, Rx's latency path is available from the start, which is the idle-Tx steady
//! state; without it that path would be dead. [`TX_INITIAL`] is the one place to change.

use super::{Policy, Sample, Totals, Write, link_is};
use crate::time::{PS_PER_US, SimDuration};

/// `I40E_ITR_ADAPTIVE_MIN_INC`, µs.
pub const MIN_INC: u32 = 2;
/// `I40E_ITR_ADAPTIVE_MIN_USECS`.
pub const MIN_USECS: u32 = 2;
/// `I40E_ITR_ADAPTIVE_MAX_USECS`.
pub const MAX_USECS: u32 = 126;
/// `I40E_ITR_ADAPTIVE_LATENCY` (also `I40E_ITR_DYNAMIC`).
pub const LATENCY: u16 = 0x8000;
/// `I40E_ITR_ADAPTIVE_BULK`.
pub const BULK: u16 = 0;
/// `I40E_ITR_MASK`: the register's interval bits (2 µs resolution).
pub const MASK: u16 = 0x1FFE;
/// `I40E_ITR_20K`.
pub const ITR_20K: u16 = 50;
/// `ITR_COUNTDOWN_START`.
pub const COUNTDOWN_START: u8 = 3;
/// Target and current of the ringless Tx container (see the module doc).
pub const TX_INITIAL: u16 = ITR_20K | LATENCY;

/// i40e adaptive ITR (§3.1), one Rx ring.
#[derive(Debug)]
pub struct I40e {
    /// `i40e_itr_divisor`.
    divisor: u64,
    rx_target: u16,
    rx_current: u16,
    /// `rx.next_update`, jiffies.
    rx_next_update: u64,
    tx_target: u16,
    tx_current: u16,
    itr_countdown: u8,
    totals: Totals,
}

/// The interval programmed for a container value: `value & I40E_ITR_MASK` µs.
fn interval_of(v: u16) -> SimDuration {
    SimDuration(u64::from(v & MASK) * PS_PER_US)
}

impl I40e {
    /// `link_gbps` selects the size formula's divisor: 40 → 2048, 25 and 20 → 1024, 1 and
    /// 0.1 → 64, anything else (10 included) → 512.
    pub fn new(link_gbps: f64) -> I40e {
        let divisor = if link_is(link_gbps, 40.0) {
            2048
        } else if link_is(link_gbps, 25.0) || link_is(link_gbps, 20.0) {
            1024
        } else if link_is(link_gbps, 1.0) || link_is(link_gbps, 0.1) {
            64
        } else {
            512
        };
        I40e {
            divisor,
            rx_target: ITR_20K,
            rx_current: ITR_20K,
            rx_next_update: 1,
            tx_target: TX_INITIAL,
            tx_current: TX_INITIAL,
            itr_countdown: 0,
            totals: Totals::default(),
        }
    }

    /// Rx `target_itr` (µs plus [`LATENCY`]).
    pub fn rx_target(&self) -> u16 {
        self.rx_target
    }

    /// Rx `current_itr`: what is programmed (µs plus [`LATENCY`]).
    pub fn rx_current(&self) -> u16 {
        self.rx_current
    }

    /// `itr_countdown`.
    pub fn countdown(&self) -> u8 {
        self.itr_countdown
    }

    /// Caps a value at 126 µs keeping its flag.
    fn cap(itr: u32) -> u32 {
        if itr & u32::from(MASK) > MAX_USECS {
            (itr & u32::from(LATENCY)) + MAX_USECS
        } else {
            itr
        }
    }

    /// The size formula on top of `itr` (which carries the mode).
    fn by_size(&self, itr: u32, avg_wire_size: u64) -> u32 {
        let mut w: u64 = match avg_wire_size {
            0..=60 => 4096,
            61..=380 => avg_wire_size * 40 + 1696,
            381..=1084 => avg_wire_size * 15 + 11452,
            1085..=1980 => avg_wire_size * 5 + 22420,
            _ => 32256,
        };
        if itr & u32::from(LATENCY) != 0 {
            w /= 2;
        }
        // w ≤ 32256 and the divisor ≥ 64: at most 504.
        let add = u32::try_from(w.div_ceil(self.divisor)).unwrap_or(MAX_USECS);
        Self::cap(itr + add * MIN_INC)
    }

    /// `i40e_update_itr` for the Rx container: the new target.
    fn rx_value(&self, s: &Sample) -> u32 {
        if s.jiffies > self.rx_next_update {
            return MIN_USECS | u32::from(LATENCY);
        }
        if self.itr_countdown > 0 {
            return u32::from(self.rx_target);
        }
        let packets = self.totals.packets(s);
        let bytes = self.totals.bytes(s);
        if packets > 0 && packets < 4 && bytes < 9000 && self.tx_target & LATENCY != 0 {
            return self.by_size(u32::from(LATENCY), bytes / packets);
        }
        if packets < 56 {
            return Self::cap(u32::from(self.rx_target) + MIN_INC);
        }
        if packets <= 256 {
            let itr = u32::from(self.tx_current.min(self.rx_current) & MASK);
            if packets <= 112 {
                return itr; // "goldilocks"
            }
            return ((itr / 2) & u32::from(MASK)).max(MIN_USECS);
        }
        self.by_size(u32::from(BULK), bytes / packets)
    }

    fn update_rx(&mut self, s: &Sample) {
        let itr = self.rx_value(s);
        // Every path keeps the value ≤ 0x8000 + 126: fits the u16.
        self.rx_target = u16::try_from(itr).unwrap_or(u16::MAX);
        self.rx_next_update = s.jiffies.saturating_add(1);
        self.totals.reset(s);
    }
}

impl Policy for I40e {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(interval_of(ITR_20K)))
    }

    /// `i40e_update_enable_itr`: update Tx (no ring: nothing) and Rx, then write at most one
    /// ITR register.
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        self.update_rx(s);
        let (rt, rc) = (i32::from(self.rx_target), i32::from(self.rx_current));
        let (tt, tc) = (i32::from(self.tx_target), i32::from(self.tx_current));
        if rt < rc {
            // Rx ITR needs to be reduced: highest priority.
            self.rx_current = self.rx_target;
            self.itr_countdown = COUNTDOWN_START;
            Some(Write::Itr(interval_of(self.rx_current)))
        } else if tt < tc || rt - rc < tt - tc {
            // Tx reduced, or increased more than Rx: the Tx register.
            self.tx_current = self.tx_target;
            self.itr_countdown = COUNTDOWN_START;
            None
        } else if rc != rt {
            // Rx increased.
            self.rx_current = self.rx_target;
            self.itr_countdown = COUNTDOWN_START;
            Some(Write::Itr(interval_of(self.rx_current)))
        } else {
            self.itr_countdown = self.itr_countdown.saturating_sub(1);
            None
        }
    }

    fn interval(&self) -> SimDuration {
        interval_of(self.rx_current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moderation::us;
    use crate::time::SimTime;

    /// Sessions with cumulative counters; jiffies advance by one per session unless told.
    struct Feed {
        jiffies: u64,
        packets: u64,
        bytes: u64,
    }

    impl Feed {
        fn new() -> Feed {
            Feed {
                jiffies: 0,
                packets: 0,
                bytes: 0,
            }
        }
        fn step(&mut self, dj: u64, packets: u64, size: u64) -> Sample {
            self.jiffies += dj;
            self.packets += packets;
            self.bytes += packets * size;
            Sample {
                now: SimTime(self.jiffies),
                jiffies: self.jiffies,
                packets: self.packets,
                bytes: self.bytes,
                events: 0,
                ..Sample::default()
            }
        }
    }

    #[test]
    fn initial_setting() {
        let p = I40e::new(10.0);
        assert_eq!(p.initial(), Some(Write::Itr(us(50.0))));
        assert_eq!(p.interval(), us(50.0));
        assert_eq!((p.rx_target(), p.rx_current(), p.countdown()), (50, 50, 0));
    }

    #[test]
    fn bulk_size_formula_by_link() {
        // One session of 300 packets on a fresh policy: (link, size B, programmed µs).
        let table: &[(f64, u64, f64)] = &[
            (10.0, 60, 16.0),
            (10.0, 380, 66.0),
            (10.0, 1500, 118.0),
            (10.0, 1980, 126.0),
            (10.0, 9000, 126.0),
            (40.0, 60, 4.0),
            (40.0, 380, 18.0),
            (40.0, 1500, 30.0),
            (40.0, 1980, 32.0),
            (25.0, 60, 8.0),
            (1.0, 60, 126.0), // 4096 / 64 · 2 = 128: capped
            (0.1, 60, 126.0),
            (2.5, 60, 16.0), // not listed: default divisor
        ];
        for &(link, size, interval) in table {
            let mut p = I40e::new(link);
            let w = p.on_complete(&Feed::new().step(0, 300, size));
            assert_eq!(w, Some(Write::Itr(us(interval))), "{link}G {size} B");
            assert_eq!(p.rx_current() & LATENCY, 0, "bulk mode");
            assert_eq!(p.countdown(), COUNTDOWN_START);
        }
    }

    #[test]
    fn the_countdown_discards_three_samples() {
        // Sessions one jiffy apart at 10G.
        // (packets, size B, rx target after, write µs, countdown after)
        let table: &[(u64, u64, u16, Option<f64>, u8)] = &[
            (300, 60, 16, Some(16.0), 3),     // bulk 60 B: 16 µs, rule (1)
            (300, 1500, 16, None, 2),         // discarded (would be 118)
            (300, 1500, 16, None, 1),         // discarded
            (300, 1500, 16, None, 0),         // discarded
            (300, 1500, 118, Some(118.0), 3), // counted: rule (3), Rx increase
            (200, 1500, 118, None, 2),        // discarded (would halve)
            (200, 1500, 118, None, 1),
            (200, 1500, 118, None, 0),
            (200, 1500, 58, Some(58.0), 3), // 113..256: 118 / 2 = 59 & 0x1FFE = 58
        ];
        let mut p = I40e::new(10.0);
        let mut f = Feed::new();
        for (i, &(packets, size, target, write, countdown)) in table.iter().enumerate() {
            let w = p.on_complete(&f.step(1, packets, size));
            assert_eq!(p.rx_target(), target, "step {i}");
            assert_eq!(w, write.map(|v| Write::Itr(us(v))), "step {i}");
            assert_eq!(p.countdown(), countdown, "step {i}");
        }
    }

    #[test]
    fn bands_creep_keep_halve() {
        // Countdown forced to 0 before each session to look at the rule alone.
        // (packets, rx target after, programmed µs after); 1500 B packets at 10G.
        let table: &[(u64, u16, f64)] = &[
            (10, 52, 52.0),  // P < 56: target + 2, bulk (from 50)
            (55, 54, 54.0),  // still < 56
            (56, 54, 54.0),  // 56..112: min(tx 0x8032, rx 54) & MASK = 54, kept
            (112, 54, 54.0), // kept
            (113, 26, 26.0), // 113..256: halve, 54 / 2 = 27 & 0x1FFE = 26
            (256, 12, 12.0), // 13 & 0x1FFE
            (200, 6, 6.0),
            (200, 2, 2.0), // 3 & 0x1FFE
            (200, 2, 2.0), // 1 & 0x1FFE = 0 → at least 2
        ];
        let mut p = I40e::new(10.0);
        let mut f = Feed::new();
        for (i, &(packets, target, interval)) in table.iter().enumerate() {
            p.itr_countdown = 0;
            p.on_complete(&f.step(1, packets, 1500));
            assert_eq!(p.rx_target(), target, "step {i}");
            assert_eq!(p.interval(), us(interval), "step {i}");
        }
    }

    #[test]
    fn latency_mode_and_the_raw_flag_compare() {
        let mut p = I40e::new(10.0);
        let mut f = Feed::new();
        // 1 packet of 60 B: latency, 4096 / 2 / 512 → 4 · 2 = 8 µs.
        let w = p.on_complete(&f.step(1, 1, 60));
        assert_eq!(p.rx_target(), 8 | LATENCY);
        // Raw 0x8008 > 50: not rule (1) but rule (3); still written.
        assert_eq!(w, Some(Write::Itr(us(8.0))));
        // With 60 packets (56..112): min(tx 0x8032, rx 0x8008) & MASK = 8, bulk now.
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 60, 60));
        assert_eq!(p.rx_target(), 8);
        // 1 packet of 1500 B: latency 29920 / 2 → 30 · 2 = 60 µs.
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 1, 1500));
        assert_eq!(p.rx_target(), 60 | LATENCY);
        // Goldilocks from a latency 60: the ringless Tx 0x8032 wins the raw min → 50.
        p.itr_countdown = 0;
        let w = p.on_complete(&f.step(1, 60, 1500));
        assert_eq!(p.rx_target(), 50);
        // 50 < 0x803C raw: rule (1).
        assert_eq!(w, Some(Write::Itr(us(50.0))));
        // Creep keeps the latency flag and caps at 126.
        p.rx_target = 124 | LATENCY;
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 10, 1500));
        assert_eq!(p.rx_target(), 126 | LATENCY);
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 10, 1500));
        assert_eq!(p.rx_target(), 126 | LATENCY);
        // 0 packets: not latency (P > 0 needed), creep.
        p.rx_target = 20;
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 0, 0));
        assert_eq!(p.rx_target(), 22);
    }

    #[test]
    fn staleness_resets_to_2_us_latency() {
        let mut p = I40e::new(10.0);
        let mut f = Feed::new();
        p.on_complete(&f.step(1, 300, 60)); // 16 µs, countdown 3, next_update 2
        // 2 jiffies later: stale, even during the countdown.
        let w = p.on_complete(&f.step(2, 300, 1500));
        assert_eq!(p.rx_target(), 2 | LATENCY);
        // Raw 0x8002 > 16: written by rule (3).
        assert_eq!(w, Some(Write::Itr(us(2.0))));
        // The first session at jiffies 2 is stale already (next_update = 1).
        let mut p = I40e::new(10.0);
        let w = p.on_complete(&Feed::new().step(2, 300, 60));
        assert_eq!(w, Some(Write::Itr(us(2.0))));
    }

    #[test]
    fn odd_counters_do_not_panic() {
        let mut p = I40e::new(f64::NAN);
        for (j, packets, bytes) in [(u64::MAX, u64::MAX, u64::MAX), (0, 3, u64::MAX), (0, 0, 0)] {
            p.itr_countdown = 0;
            let s = Sample {
                now: SimTime(0),
                jiffies: j,
                packets,
                bytes,
                events: 0,
                ..Sample::default()
            };
            p.on_complete(&s);
        }
    }
}
