//! `linear`: the research patch to ixgbe 3.x by Lukas Erlacher (TUM, 2015), studied by
//! Emmerich et al. (2015): the interrupt rate is a linear function of the measured packet
//! rate (reference §1.6).
//!
//! After each completed NAPI session the Rx container measures packets per millisecond since
//! its `last_update`, caps it at `pps_max`, maps it linearly to an interrupt rate from
//! `rate_max` (no load) down to `rate_min` (at and above `pps_max`) and stores the interval
//! `4_000_000 / rate` in EITR units (µs × 4). The Tx container does the same with its own
//! packets and its own `last_update` (an idle Tx ring never updates and stays at 0); the
//! vector programs the larger interval of the two. No smoothing; EITR is written when the
//! value changes, with the low three bits cleared as every ixgbe EITR write does.
//!
//! The patch works in integers: packets per ms `= packets · 1_000_000 / elapsed_ns`,
//! `rate = MAXIRQ − ppms · (MAXIRQ − MINIRQ) / MAXPACKETS`, `itr = 4_000_000 / rate`. The
//! parameters are converted once to those integers: `rate_max` and `rate_min` to whole
//! interrupts/s, `pps_max` to whole packets per ms (the patch's `MAXPACKETS` = 2000 is
//! 2 Mpps; at least 1).
//!
//! Quirks reproduced:
//! * A session without packets returns before the clock is read: `last_update` is *not*
//!   refreshed, so the next measurement spans the whole idle time and underestimates the
//!   rate of the burst that ends it.
//! * Under `min_update` (50 µs in the patch) since `last_update` nothing happens and the
//!   counters keep accumulating.
//! * With `nsec_only` the rate divides by the `tv_nsec` part of the elapsed `timespec` only
//!   (elapsed time modulo 1 s): after an idle second the rate is hugely overestimated. The
//!   50 µs check still uses the whole elapsed time, as the patch's `tv_sec < 1 && tv_nsec <
//!   50000` does; a zero `tv_nsec` (the kernel would divide by zero) is treated like a too
//!   short interval.
//! * The Rx container's interval starts at 0 (zeroed allocation) and the vector programs
//!   `max(rx, tx)` on every call, adapted or not: until the first adaptation, a session
//!   without packets or under `min_update` writes EITR 0, i.e. turns throttling off. (The
//!   kernel's first adaptation measures from a zeroed `last_update`, i.e. from boot; here from
//!   the start of the run.)
//! * Integer packets per ms (1 kpps resolution) and integer rate and interval.
//! * The container compares the new *rate* with its stored *interval* before storing
//!   (`itr_setting != ring_container->itr`): always different in practice, kept as written.
//! * The register drops the low three bits of the interval: 8000 ints/s is EITR 500, written
//!   as 496 (124 µs); 54000 ints/s is 74, written as 72 (18 µs).
//! * Guards where the kernel would misbehave on out-of-range parameters: a rate below 1 is
//!   taken as 1 (no division by zero) and an interval above `u16::MAX` saturates (the patch's
//!   u16 would wrap; only for rates under 62 ints/s).

use super::ixgbe_legacy::{IXGBE_20K_ITR, eitr_interval, write_eitr};
use super::{Counters, Itr, Policy, RingContainers, Sample, Totals, Variant, Write};
use crate::error::Error;
use crate::schema::{Params, keys, registry};
use crate::time::{PS_PER_NS, SimDuration, SimTime};

keys! {
    /// The keys it reads.
    pub KEYS = "driver.linear_" [
        RATE_MAX,
        RATE_MIN,
        PPS_MAX,
        MIN_UPDATE_US,
        /// How the elapsed time is measured ([`Elapsed`]).
        ELAPSED,
    ];
}

registry! {
    key: ELAPSED;
    /// How the patch measures the time since its last update.
    pub enum Elapsed {
        /// The whole elapsed time.
        Measured = "measured",
        /// The `tv_nsec` part of the elapsed `timespec` only (the patch's bug).
        NsecOnly = "nsec-only",
    }
}

const NS_PER_S: u64 = 1_000_000_000;

/// The linear packet-rate policy of Emmerich et al. (2015).
#[derive(Debug)]
pub struct Linear {
    /// `MAXIRQ`, ints/s.
    rate_max: i64,
    /// `MINIRQ`, ints/s.
    rate_min: i64,
    /// `MAXPACKETS`, packets per ms (≥ 1).
    ppms_max: i64,
    min_update: SimDuration,
    nsec_only: bool,
    /// `q_vector->itr`, EITR units.
    itr: u16,
    rings: RingContainers<Container>,
}

/// A ring container of the patch.
#[derive(Clone, Copy, Debug, Default)]
struct Container {
    /// `itr` (u16 in the patch), EITR units; starts at 0 (zeroed allocation).
    itr: u16,
    /// `last_update`; the zeroed `timespec` is the start of the run here.
    last_update: SimTime,
    totals: Totals,
}

impl Linear {
    /// `rate_max` and `rate_min` in interrupts/s, `pps_max` in packets/s, `min_update` the
    /// least time between two adaptations, `nsec_only` the patch's elapsed-time bug,
    /// `has_tx` a TxRx vector.
    pub fn new(
        rate_max: f64,
        rate_min: f64,
        pps_max: f64,
        min_update: SimDuration,
        nsec_only: bool,
        has_tx: bool,
    ) -> Linear {
        // `as` saturates (NaN → 0): no panic on any input.
        let whole = |x: f64| x.round() as i64;
        Linear {
            rate_max: whole(rate_max).max(0),
            rate_min: whole(rate_min).max(0),
            ppms_max: whole(pps_max / 1000.0).max(1),
            min_update,
            nsec_only,
            itr: IXGBE_20K_ITR,
            rings: RingContainers::new(Container::default(), has_tx),
        }
    }

    /// The vector's `itr`, EITR units (µs × 4), before the register's masking.
    pub fn itr(&self) -> u16 {
        self.itr
    }

    /// The interrupt rate for `ppms` packets per ms (the patch's `itr_setting`).
    fn rate_of(&self, ppms: i64) -> i64 {
        let ppms = i128::from(ppms.min(self.ppms_max));
        let (max, min) = (i128::from(self.rate_max), i128::from(self.rate_min));
        // C: u64, truncating. With rate_min > rate_max the slope is positive and the division
        // truncates toward zero; the result lies between rate_min and rate_max either way.
        let rate = max - ppms * (max - min) / i128::from(self.ppms_max);
        i64::try_from(rate).unwrap_or(i64::MAX)
    }

    /// `ixgbe_update_itr` of the patch, for one container with its counters.
    fn update(&self, c: &mut Container, counters: Counters, now: SimTime) {
        let packets = c.totals.packets(counters);
        if packets == 0 {
            return; // last_update NOT refreshed
        }
        let dt = now.since(c.last_update);
        if dt < self.min_update {
            return; // counters keep accumulating
        }
        let dt_ns = dt.ps() / PS_PER_NS;
        let div_ns = if self.nsec_only {
            dt_ns % NS_PER_S
        } else {
            dt_ns
        };
        if div_ns == 0 {
            return; // the kernel would divide by zero; treated as too short
        }
        let ppms = u128::from(packets) * 1_000_000 / u128::from(div_ns);
        let ppms = i64::try_from(ppms).unwrap_or(i64::MAX);
        let rate = self.rate_of(ppms);
        if rate != i64::from(c.itr) {
            let itr = 4_000_000 / rate.max(1);
            c.itr = u16::try_from(itr).unwrap_or(u16::MAX);
        }
        c.totals.reset(counters);
        c.last_update = now;
    }
}

impl Policy for Linear {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(eitr_interval(IXGBE_20K_ITR)))
    }

    /// `ixgbe_set_itr` of the patch: update both containers (Tx first), program the larger
    /// interval if it changed.
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        self.rings = self.rings.updated(s, |c, k| self.update(c, k, s.now));
        write_eitr(&mut self.itr, self.rings.rx.itr.max(self.rings.tx.itr))
    }

    fn interval(&self) -> SimDuration {
        eitr_interval(self.itr)
    }
}

/// The settings of `linear`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub rate_max: f64,
    pub rate_min: f64,
    pub pps_max: f64,
    pub min_update: SimDuration,
    pub nsec_only: bool,
}

impl Variant for Linear {
    const KIND: &'static str = "linear";
    const KEYS: &'static [&'static str] = KEYS;
    const ADAPTIVE: bool = true;
    const ITR: Itr = Itr::Programs;
    type Config = Config;

    fn from_params(p: &Params) -> Result<Config, Error> {
        Ok(Config {
            rate_max: p.f64(RATE_MAX),
            rate_min: p.f64(RATE_MIN),
            pps_max: p.f64(PPS_MAX),
            min_update: SimDuration::from_us(p.f64(MIN_UPDATE_US)),
            nsec_only: Elapsed::of(p)? == Elapsed::NsecOnly,
        })
    }

    fn new_vector(c: &Config, has_tx: bool) -> Linear {
        Linear::new(
            c.rate_max,
            c.rate_min,
            c.pps_max,
            c.min_update,
            c.nsec_only,
            has_tx,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moderation::us;
    use crate::time::PS_PER_US;

    fn patch(nsec_only: bool) -> Linear {
        Linear::new(100_000.0, 8000.0, 2e6, us(50.0), nsec_only, false)
    }

    fn sample(t_ps: u64, packets: u64) -> Sample {
        Sample::rx_only(SimTime(t_ps), 0, packets, packets.saturating_mul(60), 0)
    }

    #[test]
    fn the_linear_map_at_its_ends_and_midpoint() {
        // One measurement from a fresh policy (last_update = 0).
        // (elapsed µs, packets, ppms, ints/s, EITR, programmed interval µs)
        let table: &[(u64, u64, i64, i64, u16, f64)] = &[
            (2000, 1, 0, 100_000, 40, 10.0), // (almost) zero load: 100 K ints/s
            (100, 1, 10, 99_540, 40, 10.0),  // 10 pkts/ms
            (100, 100, 1000, 54_000, 74, 18.0), // midpoint: 1 Mpps
            (100, 200, 2000, 8000, 500, 124.0), // pps_max: 8 K ints/s, 500 & 0xFF8 = 496
            (100, 1000, 10_000, 8000, 500, 124.0), // above pps_max: capped
            (1000, 1500, 1500, 31_000, 129, 32.0),
        ];
        for &(dt, packets, ppms, rate, eitr, interval) in table {
            let mut p = patch(false);
            assert_eq!(p.rate_of(ppms), rate);
            let w = p.on_complete(&sample(dt * PS_PER_US, packets));
            assert_eq!(p.itr(), eitr, "{dt} µs, {packets} packets");
            assert_eq!(w, Some(Write::Itr(us(interval))));
            assert_eq!(p.interval(), us(interval));
        }
    }

    #[test]
    fn starts_at_20k_and_writes_only_on_change() {
        let mut p = patch(false);
        assert_eq!(p.initial(), Some(Write::Itr(us(50.0))));
        assert_eq!(p.interval(), us(50.0));
        // Steady 1 Mpps: the first update writes, the next ones do not.
        // (time µs, cumulative packets, expected write)
        let table: &[(u64, u64, Option<f64>)] = &[
            (100, 100, Some(18.0)),
            (200, 200, None),
            (300, 300, None),
            (400, 500, Some(124.0)), // 2 Mpps
            (500, 500, None),        // no packets: nothing
            (600, 501, Some(10.0)),  // 1 packet in 200 µs (stale last_update): 5 pkts/ms
        ];
        for &(t, packets, write) in table {
            let w = p.on_complete(&sample(t * PS_PER_US, packets));
            assert_eq!(w, write.map(|v| Write::Itr(us(v))), "t = {t} µs");
        }
    }

    #[test]
    fn under_min_update_counters_accumulate() {
        let mut p = patch(false);
        p.on_complete(&sample(100 * PS_PER_US, 100)); // last_update = 100 µs, 18 µs
        // 30 µs later, 60 packets (2 Mpps): too soon, nothing happens.
        assert_eq!(p.on_complete(&sample(130 * PS_PER_US, 160)), None);
        assert_eq!(p.rings.rx.last_update, SimTime(100 * PS_PER_US));
        // At 200 µs: 100 packets over 100 µs counted together (the skipped 60 included).
        assert_eq!(p.on_complete(&sample(200 * PS_PER_US, 200)), None); // 1 Mpps again
        assert_eq!(p.itr(), 74);
        // Exactly 50 µs is enough.
        assert_eq!(
            p.on_complete(&sample(250 * PS_PER_US, 300)),
            Some(Write::Itr(us(124.0)))
        );
    }

    #[test]
    fn stale_last_update_after_an_idle_gap() {
        // At 2 Mpps, then 10 ms of sessions without packets, then a 100-packet burst in 50 µs.
        let mut p = patch(false);
        p.on_complete(&sample(100 * PS_PER_US, 200));
        assert_eq!(p.interval(), us(124.0));
        for t in (200..10_100).step_by(100) {
            assert_eq!(p.on_complete(&sample(t * PS_PER_US, 200)), None);
        }
        assert_eq!(p.rings.rx.last_update, SimTime(100 * PS_PER_US));
        // The burst is measured over 10.05 ms: 9 pkts/ms → 99_586 ints/s → 10 µs, although
        // its own rate (2 Mpps) would keep 124 µs.
        let w = p.on_complete(&sample(10_150 * PS_PER_US, 300));
        assert_eq!(w, Some(Write::Itr(us(10.0))));
    }

    #[test]
    fn nsec_only_drops_whole_seconds() {
        // After an update at 100 µs (1 Mpps → EITR 74, 18 µs), the next session comes dt
        // later with `packets` more.
        // (dt ps, packets, write with the bug, write measured)
        let table: &[(u64, u64, Option<f64>, Option<f64>)] = &[
            // 1.00003 s: 100 packets / 30 µs = 3333 pkts/ms (capped) vs 0 pkts/ms.
            (1_000_030_000_000, 100, Some(124.0), Some(10.0)),
            // 1.00001 s: the 50 µs check passes on the whole time; divides by 10 µs.
            (1_000_010_000_000, 100, Some(124.0), Some(10.0)),
            // 2 s exactly: tv_nsec = 0, skipped with the bug (the kernel would divide by 0).
            (2_000_000_000_000, 100, None, Some(10.0)),
            // Under a second the bug is invisible: 200 packets in 100 µs.
            (100_000_000, 200, Some(124.0), Some(124.0)),
        ];
        for &(dt, packets, buggy, measured) in table {
            for (nsec_only, want) in [(true, buggy), (false, measured)] {
                let mut p = patch(nsec_only);
                p.on_complete(&sample(100 * PS_PER_US, 100));
                assert_eq!(p.itr(), 74);
                let w = p.on_complete(&sample(100 * PS_PER_US + dt, 100 + packets));
                assert_eq!(
                    w,
                    want.map(|v| Write::Itr(us(v))),
                    "dt {dt} ps, bug {nsec_only}"
                );
            }
        }
    }

    #[test]
    fn before_the_first_adaptation_the_zeroed_container_turns_throttling_off() {
        // rx.itr starts at 0 (zeroed allocation) and the vector programs max(rx, tx) on every
        // call: a session that does not adapt (no packets, or under 50 µs) writes EITR 0.
        // (time µs, cumulative packets, expected write µs)
        let table: &[(u64, u64, Option<f64>)] = &[
            (10, 1, Some(0.0)), // 10 µs < 50 µs: no adaptation, max(0, 0) = 0 != 200
            (20, 2, None),
            (60, 61, Some(18.0)), // 61 in 60 µs: 1016 pkts/ms → 53_264/s → EITR 75 → 72
        ];
        let mut p = patch(false);
        for &(t, packets, want) in table {
            let w = p.on_complete(&sample(t * PS_PER_US, packets));
            assert_eq!(w, want.map(|v| Write::Itr(us(v))), "t = {t} µs");
        }
        assert_eq!(p.itr(), 75);
    }

    #[test]
    fn a_busier_tx_container_programs_the_longer_interval() {
        // 100 µs after the start: Rx 100 packets (1000 pkts/ms: 54 K ints/s, EITR 74) and
        // Tx 200 (2000 pkts/ms: 8 K ints/s, EITR 500): the larger interval wins.
        let s = Sample {
            now: SimTime(100 * PS_PER_US),
            packets: 100,
            tx_packets: 200,
            ..Sample::default()
        };
        let mut txrx = Linear::new(100_000.0, 8000.0, 2e6, us(50.0), false, true);
        assert_eq!(txrx.on_complete(&s), Some(Write::Itr(us(124.0))));
        assert_eq!((txrx.rings.rx.itr, txrx.rings.tx.itr), (74, 500));
        let mut rx_only = patch(false);
        assert_eq!(rx_only.on_complete(&s), Some(Write::Itr(us(18.0))));
        assert_eq!(
            rx_only.rings.tx.itr, 0,
            "an idle or ringless Tx container stays at 0"
        );
    }

    #[test]
    fn parameters_other_than_the_patch() {
        // Emmerich et al.'s rho_max = 2.1 Mpps: 2100 pkts/ms.
        let p = Linear::new(100_000.0, 8000.0, 2.1e6, us(50.0), false, false);
        assert_eq!(p.rate_of(2100), 8000);
        assert_eq!(p.rate_of(1050), 54_000);
        // Inverted rates and absurd values do not panic.
        let mut p = Linear::new(0.0, 1e7, 0.0, SimDuration::ZERO, true, false);
        for t in [0u64, 1, 1000, PS_PER_US, u64::MAX / 2] {
            p.on_complete(&sample(t, t));
        }
        let mut p = Linear::new(
            f64::NAN,
            f64::INFINITY,
            -1.0,
            SimDuration::ZERO,
            false,
            true,
        );
        p.on_complete(&sample(PS_PER_US, u64::MAX));
    }
}
