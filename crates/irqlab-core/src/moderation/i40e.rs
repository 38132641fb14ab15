//! `i40e`: the adaptive ITR of i40e (v6.13.7, A. Duyck's 2018 rework; reference §3.1).
//!
//! Each ring container (Rx, Tx) holds a `target_itr` and the `current_itr` last programmed, in
//! µs with a mode flag (`LATENCY` = 0x8000) in a u16. After each session that
//! `napi_complete_done` completed, `i40e_update_enable_itr` updates the Tx container, then the
//! Rx container (`i40e_update_itr`):
//!
//! * stale (`jiffies > next_update`): Rx 2 µs, Tx 126 µs, latency mode;
//! * `itr_countdown > 0` (an ITR was written in the last three interrupts): keep the target,
//!   discard the sample;
//! * Rx: 0 < P < 4, B < 9000 and the Tx target in latency mode: latency mode, size formula;
//! * Tx: P < 4 with Tx at 126 µs in bulk mode and Rx at 126 µs: back to 126 µs latency mode
//!   ("let the Rx relax"); 33 ≤ P: the Tx target drops its latency flag first;
//! * P < 56: target + 2 µs, keeping its flag, capped at 126;
//! * P ≤ 256: `min(tx.current, rx.current)` without the flag (bulk): kept if P ≤ 112,
//!   halved (at least 2) otherwise;
//! * P > 256: bulk, size formula (on the container's own average size).
//!
//! The size formula divides by a link-speed divisor (40G 2048, 25G/20G 1024, 10G and any
//! other 512, 1G/100M 64), rounds up to 2 µs and caps at 126. Then *one* ITR register is
//! written per interrupt, lazily: (1) Rx target < Rx current, (2) Tx target < Tx current or
//! the Tx increase exceeds the Rx increase, (3) Rx target != Rx current; else no write and the
//! countdown decrements. After a write `current = target` and `itr_countdown = 3`. The engine
//! applies the Rx write; a Tx write programs the Tx ITR (index 1), which throttles Tx causes
//! only: irqlab's vector has one throttle, the Rx one, so a Tx write changes no interval here,
//! but it takes the interrupt's one write and restarts the countdown, as in the driver.
//! The hardware fires an interrupt at once when the ITR is updated, which is why the driver
//! discards the next samples; modelling that belongs to the engine.
//!
//! Both containers start at `ITR_TO_REG(I40E_ITR_{RX,TX}_DEF)` = 50 µs: the driver strips the
//! DYNAMIC flag, which is also the latency flag, so they start in bulk mode; `next_update` =
//! jiffies + 1 = 1, `itr_countdown` = 0 (zeroed allocation). A Tx ring that carries nothing
//! (a receive-only workload) creeps 2 µs per update up to 126 (each step a Tx write, which
//! costs the Rx three discarded samples), and only once the Rx container has reached 126 µs
//! does it return to latency mode, which opens the Rx latency path.
//!
//! Quirks reproduced:
//! * The write-priority comparisons use the raw u16 *including* the 0x8000 flag, in signed
//!   `int` arithmetic as C promotes them: a latency-mode target counts as larger than any
//!   bulk value, so a drop from bulk 16 µs to latency 2 µs goes through rule (3), not (1).
//!   The flag is masked off (`& 0x1FFE`) only when the value is placed into the register.
//! * The three samples after every write are discarded, and their counters cleared.
//! * In the 56..256 band the new value is `min(tx.current, rx.current)` on raw values.
//! * Integer average size, the breakpoints (≤ 60, ≤ 380, ≤ 1084, ≤ 1980), `DIV_ROUND_UP`,
//!   and halving as `(itr / 2) & 0x1FFE` (rounds down to 2 µs).
//! * Stale containers reset to their default, their counters discarded.
//! * The programmed interval has 2 µs resolution: `current & 0x1FFE` µs.
//!
//! i40e vectors always pair a Tx ring with their Rx ring. With `nic.tx_ring_descriptors = 0`
//! (an Rx-only vector, which i40e does not set up) the Tx container is ringless: it is never
//! updated and is held at [`TX_RINGLESS`], 50 µs in latency mode (irqlab's model before it had
//! Tx rings).

use super::config::LinkSpeedPolicy;
use super::{Counters, Policy, Sample, Totals, Write, link_is};
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
/// Target and current of a ringless Tx container (see the module doc).
pub const TX_RINGLESS: u16 = ITR_20K | LATENCY;

/// One ring container.
#[derive(Clone, Copy, Debug)]
struct Container {
    target: u16,
    current: u16,
    /// `next_update`, jiffies.
    next_update: u64,
    totals: Totals,
}

impl Container {
    fn new(itr: u16) -> Container {
        Container {
            target: itr,
            current: itr,
            next_update: 1,
            totals: Totals::default(),
        }
    }
}

/// i40e adaptive ITR (§3.1).
#[derive(Debug)]
pub struct I40e {
    /// `i40e_itr_divisor`.
    divisor: u64,
    rx: Container,
    tx: Container,
    itr_countdown: u8,
    /// The vector has a Tx ring.
    has_tx: bool,
}

/// The interval programmed for a container value: `value & I40E_ITR_MASK` µs.
fn interval_of(v: u16) -> SimDuration {
    SimDuration(u64::from(v & MASK) * PS_PER_US)
}

impl I40e {
    /// Rx `target_itr` (µs plus [`LATENCY`]).
    pub fn rx_target(&self) -> u16 {
        self.rx.target
    }

    /// Rx `current_itr`: what is programmed (µs plus [`LATENCY`]).
    pub fn rx_current(&self) -> u16 {
        self.rx.current
    }

    /// Tx `target_itr` and `current_itr`.
    pub fn tx_target(&self) -> u16 {
        self.tx.target
    }
    pub fn tx_current(&self) -> u16 {
        self.tx.current
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

    /// The rules shared by both containers from "P < 56" on, for a container whose target is
    /// `target` and that saw `packets` and `bytes`.
    fn by_count(&self, target: u16, packets: u64, bytes: u64) -> u32 {
        if packets < 56 {
            return Self::cap(u32::from(target) + MIN_INC);
        }
        if packets <= 256 {
            let itr = u32::from(self.tx.current.min(self.rx.current) & MASK);
            if packets <= 112 {
                return itr; // "goldilocks"
            }
            return ((itr / 2) & u32::from(MASK)).max(MIN_USECS);
        }
        self.by_size(u32::from(BULK), bytes / packets)
    }

    /// `i40e_update_itr` for the Rx container (`rx`) or the Tx container: the new target.
    fn value(&self, rx: bool, s: &Sample) -> u32 {
        let (c, counters, stale) = if rx {
            (&self.rx, s.rx(), MIN_USECS)
        } else {
            (&self.tx, s.tx(), MAX_USECS)
        };
        if s.jiffies > c.next_update {
            return stale | u32::from(LATENCY);
        }
        if self.itr_countdown > 0 {
            return u32::from(c.target);
        }
        let packets = c.totals.packets(counters);
        let bytes = c.totals.bytes(counters);
        let mut target = c.target;
        if rx {
            if packets > 0 && packets < 4 && bytes < 9000 && self.tx.target & LATENCY != 0 {
                return self.by_size(u32::from(LATENCY), bytes / packets);
            }
        } else if packets < 4 {
            if u32::from(target) == MAX_USECS && u32::from(self.rx.target & MASK) == MAX_USECS {
                // Tx and Rx maxed: Tx back to latency mode so that the Rx can relax
                return MAX_USECS | u32::from(LATENCY);
            }
        } else if packets > 32 {
            target &= !LATENCY;
        }
        self.by_count(target, packets, bytes)
    }

    fn set_target(c: &mut Container, itr: u32, counters: Counters, jiffies: u64) {
        // Every path keeps the value ≤ 0x8000 + 126: fits the u16.
        c.target = u16::try_from(itr).unwrap_or(u16::MAX);
        c.next_update = jiffies.saturating_add(1);
        c.totals.reset(counters);
    }
}

impl Policy for I40e {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(interval_of(ITR_20K)))
    }

    /// `i40e_update_enable_itr`: update Tx (ringless: nothing) and Rx, then write at most one
    /// ITR register.
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        if self.has_tx {
            let itr = self.value(false, s);
            Self::set_target(&mut self.tx, itr, s.tx(), s.jiffies);
        }
        let itr = self.value(true, s);
        Self::set_target(&mut self.rx, itr, s.rx(), s.jiffies);
        let (rt, rc) = (i32::from(self.rx.target), i32::from(self.rx.current));
        let (tt, tc) = (i32::from(self.tx.target), i32::from(self.tx.current));
        if rt < rc {
            // Rx ITR needs to be reduced: highest priority.
            self.rx.current = self.rx.target;
            self.itr_countdown = COUNTDOWN_START;
            Some(Write::Itr(interval_of(self.rx.current)))
        } else if tt < tc || rt - rc < tt - tc {
            // Tx reduced, or increased more than Rx: the Tx register.
            self.tx.current = self.tx.target;
            self.itr_countdown = COUNTDOWN_START;
            None
        } else if rc != rt {
            // Rx increased.
            self.rx.current = self.rx.target;
            self.itr_countdown = COUNTDOWN_START;
            Some(Write::Itr(interval_of(self.rx.current)))
        } else {
            self.itr_countdown = self.itr_countdown.saturating_sub(1);
            None
        }
    }

    fn interval(&self) -> SimDuration {
        interval_of(self.rx.current)
    }
}

impl LinkSpeedPolicy for I40e {
    const KIND: &'static str = "i40e";

    /// `link_gbps` selects the size formula's divisor: 40 → 2048, 25 and 20 → 1024, 1 and
    /// 0.1 → 64, anything else (10 included) → 512. `has_tx`: a TxRx vector.
    fn new(link_gbps: f64, has_tx: bool) -> I40e {
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
            rx: Container::new(ITR_20K),
            tx: Container::new(if has_tx { ITR_20K } else { TX_RINGLESS }),
            itr_countdown: 0,
            has_tx,
        }
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
            Sample::rx_only(
                SimTime(self.jiffies),
                self.jiffies,
                self.packets,
                self.bytes,
                0,
            )
        }
    }

    #[test]
    fn initial_setting() {
        let p = I40e::new(10.0, false);
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
            let mut p = I40e::new(link, false);
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
        let mut p = I40e::new(10.0, false);
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
        let mut p = I40e::new(10.0, false);
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
        let mut p = I40e::new(10.0, false);
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
        p.rx.target = 124 | LATENCY;
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 10, 1500));
        assert_eq!(p.rx_target(), 126 | LATENCY);
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 10, 1500));
        assert_eq!(p.rx_target(), 126 | LATENCY);
        // 0 packets: not latency (P > 0 needed), creep.
        p.rx.target = 20;
        p.itr_countdown = 0;
        p.on_complete(&f.step(1, 0, 0));
        assert_eq!(p.rx_target(), 22);
    }

    #[test]
    fn staleness_resets_to_2_us_latency() {
        let mut p = I40e::new(10.0, false);
        let mut f = Feed::new();
        p.on_complete(&f.step(1, 300, 60)); // 16 µs, countdown 3, next_update 2
        // 2 jiffies later: stale, even during the countdown.
        let w = p.on_complete(&f.step(2, 300, 1500));
        assert_eq!(p.rx_target(), 2 | LATENCY);
        // Raw 0x8002 > 16: written by rule (3).
        assert_eq!(w, Some(Write::Itr(us(2.0))));
        // The first session at jiffies 2 is stale already (next_update = 1).
        let mut p = I40e::new(10.0, false);
        let w = p.on_complete(&Feed::new().step(2, 300, 60));
        assert_eq!(w, Some(Write::Itr(us(2.0))));
    }

    /// A TxRx vector's sessions: Rx and Tx packets (with their size), one jiffy apart.
    struct TxRx {
        j: u64,
        rx: (u64, u64),
        tx: (u64, u64),
    }

    impl TxRx {
        fn new() -> TxRx {
            TxRx {
                j: 0,
                rx: (0, 0),
                tx: (0, 0),
            }
        }
        fn step(&mut self, rx: (u64, u64), tx: (u64, u64)) -> Sample {
            self.j += 1;
            self.rx = (self.rx.0 + rx.0, self.rx.1 + rx.0 * rx.1);
            self.tx = (self.tx.0 + tx.0, self.tx.1 + tx.0 * tx.1);
            Sample {
                now: SimTime(self.j),
                jiffies: self.j,
                packets: self.rx.0,
                bytes: self.rx.1,
                tx_packets: self.tx.0,
                tx_bytes: self.tx.1,
                ..Sample::default()
            }
        }
    }

    #[test]
    fn both_containers_start_in_bulk_mode_at_50() {
        let p = I40e::new(10.0, true);
        assert_eq!((p.tx_target(), p.tx_current()), (50, 50));
        let p = I40e::new(10.0, false);
        assert_eq!((p.tx_target(), p.tx_current()), (TX_RINGLESS, TX_RINGLESS));
    }

    #[test]
    fn an_idle_tx_ring_creeps_by_tx_writes_that_cost_the_rx_its_samples() {
        // Receive only: 300 packets of 60 B per session at 10G.
        // (rx target, tx target, tx current, write, countdown) after each session.
        let table: &[(u16, u16, u16, Option<f64>, u8)] = &[
            (16, 52, 50, Some(16.0), 3), // rule 1: the Rx drop wins the write
            (16, 52, 52, None, 3),       // rule 2: the Tx creep takes the write
            (16, 52, 52, None, 2),       // discarded
            (16, 52, 52, None, 1),
            (16, 52, 52, None, 0),
            (16, 54, 54, None, 3), // counted: Tx creeps again and writes again
        ];
        let mut p = I40e::new(10.0, true);
        let mut f = TxRx::new();
        for (i, &(rt, tt, tc, w, cd)) in table.iter().enumerate() {
            let got = p.on_complete(&f.step((300, 60), (0, 0)));
            assert_eq!(
                (p.rx_target(), p.tx_target(), p.tx_current(), p.countdown()),
                (rt, tt, tc, cd),
                "session {}",
                i + 1
            );
            assert_eq!(got, w.map(|v| Write::Itr(us(v))), "session {}", i + 1);
        }
    }

    #[test]
    fn the_rx_latency_path_waits_for_the_tx_container_in_latency_mode() {
        // One packet of 60 B: a ringless Tx (latency mode) lets Rx go to latency, 8 µs; a
        // real Tx ring starts in bulk mode, so the Rx only creeps, 52 µs bulk.
        let mut a = I40e::new(10.0, false);
        a.on_complete(&TxRx::new().step((1, 60), (0, 0)));
        assert_eq!(a.rx_target(), 8 | LATENCY);
        let mut b = I40e::new(10.0, true);
        b.on_complete(&TxRx::new().step((1, 60), (0, 0)));
        assert_eq!(b.rx_target(), 52);
        // Tx at 126 bulk and Rx at 126: Tx returns to latency mode, and the Rx path opens.
        let mut c = I40e::new(10.0, true);
        c.tx.target = 126;
        c.tx.current = 126;
        c.rx.target = 126;
        c.rx.current = 126;
        let mut f = TxRx::new();
        c.on_complete(&f.step((1, 60), (0, 0)));
        assert_eq!(c.tx_target(), 126 | LATENCY);
        assert_eq!(
            c.rx_target(),
            8 | LATENCY,
            "latency path: 4096 / 2 / 512 → 4 · 2"
        );
    }

    #[test]
    fn a_forwarding_tx_container_follows_its_own_packets() {
        // 300 packets of 1500 B each way: both bulk by size, 118 µs; Tx has 33+ packets so
        // any latency flag is dropped first.
        let mut p = I40e::new(10.0, true);
        p.tx.target = 40 | LATENCY;
        p.on_complete(&TxRx::new().step((300, 1500), (300, 1500)));
        assert_eq!((p.rx_target(), p.tx_target()), (118, 118));
        // 40 Tx packets: the flag is dropped, then + 2 (P < 56).
        let mut p = I40e::new(10.0, true);
        p.tx.target = 40 | LATENCY;
        p.on_complete(&TxRx::new().step((300, 60), (40, 60)));
        assert_eq!(p.tx_target(), 42);
        // 10 Tx packets: + 2, keeping the flag.
        let mut p = I40e::new(10.0, true);
        p.tx.target = 40 | LATENCY;
        p.on_complete(&TxRx::new().step((300, 60), (10, 60)));
        assert_eq!(p.tx_target(), 42 | LATENCY);
        // Stale (two quiet jiffies): Rx 2 µs, Tx 126 µs, both latency.
        let mut p = I40e::new(10.0, true);
        let mut f = TxRx::new();
        f.j = 5;
        p.on_complete(&f.step((300, 60), (300, 60)));
        assert_eq!((p.rx_target(), p.tx_target()), (2 | LATENCY, 126 | LATENCY));
    }

    #[test]
    fn the_rx_latency_path_takes_1_to_3_packets_under_9000_bytes() {
        // i40e_update_itr: `packets && packets < 4 && bytes < 9000` with the Tx container in
        // latency mode (a ringless Tx) takes the latency path, 8 µs for 60 B frames; at 4
        // packets, or 9000 bytes, the count path creeps the bulk 50 µs by 2.
        let rx_after = |packets: u64, size: u64| {
            let mut p = I40e::new(10.0, false);
            p.on_complete(&TxRx::new().step((packets, size), (0, 0)));
            p.rx_target()
        };
        assert_eq!(rx_after(3, 60), 8 | LATENCY);
        assert_eq!(rx_after(4, 60), 52);
        assert_eq!(rx_after(3, 2999), rx_after(1, 2999));
        assert_eq!(rx_after(3, 2999) & LATENCY, LATENCY);
        assert_eq!(rx_after(3, 3000), 52);
    }

    #[test]
    fn odd_counters_do_not_panic() {
        let mut p = I40e::new(f64::NAN, false);
        for (j, packets, bytes) in [(u64::MAX, u64::MAX, u64::MAX), (0, 3, u64::MAX), (0, 0, 0)] {
            p.itr_countdown = 0;
            let s = Sample::rx_only(SimTime(0), j, packets, bytes, 0);
            p.on_complete(&s);
        }
    }

    #[test]
    fn equal_rx_and_tx_increases_give_the_write_to_the_rx_register() {
        // 10 packets each way from the bulk 50 µs: both targets creep to 52. Rule (2) takes
        // the Tx register only when its increase *exceeds* the Rx one, so rule (3) writes Rx.
        let mut p = I40e::new(10.0, true);
        let w = p.on_complete(&TxRx::new().step((10, 60), (10, 60)));
        assert_eq!((p.rx_target(), p.tx_target()), (52, 52));
        assert_eq!(w, Some(Write::Itr(us(52.0))));
        assert_eq!((p.rx_current(), p.tx_current()), (52, 50));
        assert_eq!(p.countdown(), COUNTDOWN_START);
        // A larger Tx increase (2 against 0: the Rx held by 56 packets) takes the Tx register.
        let mut p = I40e::new(10.0, true);
        let w = p.on_complete(&TxRx::new().step((56, 60), (10, 60)));
        assert_eq!((p.rx_target(), p.tx_target()), (50, 52));
        assert_eq!(w, None);
        assert_eq!((p.rx_current(), p.tx_current()), (50, 52));
        assert_eq!(p.countdown(), COUNTDOWN_START);
    }

    #[test]
    fn the_tx_latency_flag_is_dropped_from_33_tx_packets() {
        // `packets > 32`: 32 Tx packets keep the flag (+ 2 µs), 33 drop it first.
        let tx_after = |tx_packets: u64| {
            let mut p = I40e::new(10.0, true);
            p.tx.target = 40 | LATENCY;
            p.on_complete(&TxRx::new().step((300, 60), (tx_packets, 60)));
            p.tx_target()
        };
        assert_eq!(tx_after(32), 42 | LATENCY);
        assert_eq!(tx_after(33), 42);
    }

    #[test]
    fn maxed_containers_relax_the_tx_only_below_4_tx_packets() {
        // Tx at 126 bulk and Rx at 126: up to 3 Tx packets the Tx returns to 126 latency; at 4
        // the count rules apply (P < 56: + 2, capped at 126, still bulk).
        let tx_after = |tx_packets: u64| {
            let mut p = I40e::new(10.0, true);
            p.tx.target = 126;
            p.tx.current = 126;
            p.rx.target = 126;
            p.rx.current = 126;
            p.on_complete(&TxRx::new().step((1, 60), (tx_packets, 60)));
            p.tx_target()
        };
        assert_eq!(tx_after(0), 126 | LATENCY);
        assert_eq!(tx_after(3), 126 | LATENCY);
        assert_eq!(tx_after(4), 126);
    }

    #[test]
    fn the_tx_relaxes_only_when_both_containers_are_maxed() {
        // `tx 126 bulk && rx 126`: with only one of them at 126 the Tx follows the count
        // rules (fewer than 4 Tx packets: + 2 µs, capped at 126), in bulk mode.
        let tx_after = |tx: u16, rx: u16| {
            let mut p = I40e::new(10.0, true);
            p.tx.target = tx;
            p.tx.current = tx;
            p.rx.target = rx;
            p.rx.current = rx;
            p.on_complete(&TxRx::new().step((1, 60), (0, 60)));
            p.tx_target()
        };
        assert_eq!(tx_after(126, 126), 126 | LATENCY);
        assert_eq!(
            tx_after(126, 50),
            126,
            "Rx not maxed: Tx stays bulk, capped"
        );
        assert_eq!(tx_after(40, 126), 42, "Tx not maxed: it creeps");
        assert_eq!(
            tx_after(126 | LATENCY, 126),
            126 | LATENCY,
            "already latency"
        );
    }
}
