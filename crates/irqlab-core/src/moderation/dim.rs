//! `dim`: Linux's generic dynamic interrupt moderation, `net_dim` (`lib/dim`, v6.13.7;
//! reference §5), with the default Rx profiles, as mlx5e drives it: once per session that
//! `napi_complete_done` completed, with the vector's cumulative counters.
//!
//! The start state is mlx5e's: the driver creates the completion queue with the default
//! profile's moderation (index 1, `net_dim_get_def_rx_moderation`) but allocates `struct dim`
//! zeroed and never sets its `profile_ix`: DIM starts at index 0, parked on top, with zero
//! reference stats. Its first window with traffic is therefore "better" than nothing; it
//! leaves the park going right (from index 0) and steps to 1 — what the hardware already
//! runs. (ice instead sets `profile_ix = 1` and steps left to 0 first; [`Dim::starting_at`]
//! gives that start.)
//!
//! Two state machines:
//! * measurement (`net_dim`): a window opens at a sample and closes at the first sample at
//!   least `DIM_NEVENTS` = 64 events (interrupts) later; its rates (`dim_calc_stats`) feed
//!   the tuning; if the profile did not change, the closing sample opens the next window;
//! * tuning (`net_dim_decision`): a hill climb over the 5 profiles on bytes/ms, then
//!   packets/ms, then fewer events/ms, with a change counted when it is at least 11 %;
//!   parking on top after a step back that improved, leaving the park on an 11 % change,
//!   parking "tired" for 10 windows after 10 steps without parking on top.
//!
//! When the profile changes `net_dim` schedules the driver's work and ignores further calls
//! (`DIM_APPLY_NEW_PROFILE`); the work programs the new moderation and sets the state back to
//! `DIM_START_MEASURE`. The work is taken as instantaneous here: [`Policy::on_complete`]
//! returns the new setting and the next call opens a new window.
//!
//! Quirks reproduced:
//! * `epms` is computed from the constant 64, not from the events counted in the window
//!   (windows close at ≥ 64 events, so a window with more events reports too few per ms).
//! * Rates are `DIV_ROUND_UP` (ceilings); the window length is `ktime_us_delta`, truncated
//!   to whole µs and stored in a u32 (wraps after about 71.6 minutes); 0 µs makes the window
//!   "unreliable": no decision, and the window stays open from the same start.
//! * The significance test is `100·|cur − prev| / prev > 10` in integers: 11 % or more.
//! * While parked on top the reference stats stay frozen at those of the window that parked;
//!   every other decision replaces them.
//! * `tired` counts steps since the last park on top; turning does not reset it; the exit step
//!   from either park counts as a step.
//! * Counters are u64 here: the kernel's wrap-safe 16/32-bit gaps are not needed; deltas
//!   saturate at zero.

use super::{Itr, Policy, Sample, Variant, Write};
use crate::error::Error;
use crate::schema::{Params, registry};
use crate::scheme::Scheme;
use crate::time::{PS_PER_US, SimDuration, SimTime};

/// The CQ period mode ([`DimMode`]).
pub const MODE: &str = "driver.dim_mode";

/// `DIM_NEVENTS`: events per decision window.
pub const DIM_NEVENTS: u64 = 64;
/// `NET_DIM_PARAMS_NUM_PROFILES`.
pub const NUM_PROFILES: usize = 5;
/// `NET_DIM_DEF_PROFILE_EQE` = `NET_DIM_DEF_PROFILE_CQE`.
pub const DEFAULT_PROFILE: usize = 1;
/// Rx profiles, timer from the first event (usec, pkts).
pub const RX_EQE_PROFILES: [(u64, u64); NUM_PROFILES] =
    [(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)];
/// Rx profiles, timer restarted by each completion (usec, pkts).
pub const RX_CQE_PROFILES: [(u64, u64); NUM_PROFILES] =
    [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)];

/// `tired` limit: `2 * NET_DIM_PARAMS_NUM_PROFILES`.
const TIRED_MAX: u8 = 2 * NUM_PROFILES as u8;

registry! {
    key: MODE;
    /// The CQ period mode: which profile table, and whether each completion restarts the timer.
    pub enum DimMode {
        /// `DIM_CQ_PERIOD_MODE_START_FROM_EQE`.
        Eqe = "eqe",
        /// `DIM_CQ_PERIOD_MODE_START_FROM_CQE`.
        Cqe = "cqe",
    }
}

/// `dim->tune_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuneState {
    ParkingOnTop,
    ParkingTired,
    GoingRight,
    GoingLeft,
}

/// `dim->state` (measurement). `DIM_APPLY_NEW_PROFILE` is never observed: see the module doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Measure {
    Start,
    InProgress,
}

/// `struct dim_stats` (without the RDMA completion fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub ppms: u64,
    pub bpms: u64,
    pub epms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    Worse,
    Same,
    Better,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Stepped,
    TooTired,
    OnEdge,
}

/// The sample that opened the window (`dim->start_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Start {
    time: SimTime,
    packets: u64,
    bytes: u64,
    events: u64,
}

impl Start {
    fn of(s: &Sample) -> Start {
        Start {
            time: s.now,
            packets: s.packets,
            bytes: s.bytes,
            events: s.events,
        }
    }
}

/// `dim_calc_stats`: the window's rates, or `None` if it lasted 0 µs.
fn calc_stats(start: &Start, end: &Sample) -> Option<Stats> {
    // ktime_us_delta truncates to µs; the kernel keeps it in a u32.
    let delta_us = u64::from((end.now.since(start.time).ps() / PS_PER_US) as u32);
    if delta_us == 0 {
        return None;
    }
    let npkts = end.packets.saturating_sub(start.packets);
    let nbytes = end.bytes.saturating_sub(start.bytes);
    Some(Stats {
        ppms: npkts.saturating_mul(1000).div_ceil(delta_us),
        bpms: nbytes.saturating_mul(1000).div_ceil(delta_us),
        // The constant, not the events of the window.
        epms: (DIM_NEVENTS * 1000).div_ceil(delta_us),
    })
}

/// `IS_SIGNIFICANT_DIFF`: at least 11 % away from a non-zero reference.
fn significant(val: u64, reference: u64) -> bool {
    reference != 0 && val.abs_diff(reference).saturating_mul(100) / reference > 10
}

/// `net_dim_stats_compare`.
fn compare(cur: &Stats, prev: &Stats) -> Compare {
    // Bytes, then packets per ms: more is better, and a rate that was zero is bettered by any.
    for (c, p) in [(cur.bpms, prev.bpms), (cur.ppms, prev.ppms)] {
        if p == 0 {
            return if c != 0 {
                Compare::Better
            } else {
                Compare::Same
            };
        }
        if significant(c, p) {
            return if c > p {
                Compare::Better
            } else {
                Compare::Worse
            };
        }
    }
    // Then interrupts per ms: fewer is better (a zero reference is never significantly off).
    if significant(cur.epms, prev.epms) {
        return if cur.epms < prev.epms {
            Compare::Better
        } else {
            Compare::Worse
        };
    }
    Compare::Same
}

/// Linux net_dim over the default Rx profiles.
#[derive(Debug)]
pub struct Dim {
    mode: DimMode,
    measure: Measure,
    start: Start,
    tune: TuneState,
    profile_ix: usize,
    /// The profile the NIC runs.
    programmed_ix: usize,
    steps_right: u8,
    steps_left: u8,
    tired: u8,
    prev: Stats,
}

impl Dim {
    /// mlx5e's start: the NIC programmed with the default profile, `struct dim` zeroed.
    pub fn new(mode: DimMode) -> Dim {
        Dim::starting_at(mode, 0)
    }

    /// The NIC programmed with the default profile and DIM believing it is at `profile_ix`
    /// (ice: 1).
    pub fn starting_at(mode: DimMode, profile_ix: usize) -> Dim {
        Dim {
            mode,
            measure: Measure::Start,
            start: Start::default(),
            tune: TuneState::ParkingOnTop,
            profile_ix: profile_ix.min(NUM_PROFILES - 1),
            programmed_ix: DEFAULT_PROFILE,
            steps_right: 0,
            steps_left: 0,
            tired: 0,
            prev: Stats::default(),
        }
    }

    /// The current profile index (0 … 4).
    pub fn profile_ix(&self) -> usize {
        self.profile_ix
    }

    /// The tuning state.
    pub fn tune_state(&self) -> TuneState {
        self.tune
    }

    /// The profile programmed in the NIC (the default one until DIM first applies one).
    pub fn programmed_ix(&self) -> usize {
        self.programmed_ix
    }

    /// Steps since the last park on top (or the remaining windows while parked tired).
    pub fn tired(&self) -> u8 {
        self.tired
    }

    /// The reference stats of the last decision.
    pub fn prev_stats(&self) -> Stats {
        self.prev
    }

    fn profile(&self, ix: usize) -> (u64, u64) {
        let table = match self.mode {
            DimMode::Eqe => &RX_EQE_PROFILES,
            DimMode::Cqe => &RX_CQE_PROFILES,
        };
        table[ix.min(NUM_PROFILES - 1)]
    }

    /// The coalescing setting of profile `ix`.
    fn setting(&self, ix: usize) -> Write {
        let (usecs, frames) = self.profile(ix);
        Write::Coalesce {
            usecs: SimDuration(usecs * PS_PER_US),
            frames,
            restart: self.mode == DimMode::Cqe,
        }
    }

    /// `net_dim_step`.
    fn step(&mut self) -> Step {
        if self.tired == TIRED_MAX {
            return Step::TooTired;
        }
        match self.tune {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                if self.profile_ix == NUM_PROFILES - 1 {
                    return Step::OnEdge;
                }
                self.profile_ix += 1;
                self.steps_right = self.steps_right.saturating_add(1);
            }
            TuneState::GoingLeft => {
                if self.profile_ix == 0 {
                    return Step::OnEdge;
                }
                self.profile_ix -= 1;
                self.steps_left = self.steps_left.saturating_add(1);
            }
        }
        self.tired = self.tired.saturating_add(1);
        Step::Stepped
    }

    /// `net_dim_exit_parking`.
    fn exit_parking(&mut self) {
        self.tune = if self.profile_ix != 0 {
            TuneState::GoingLeft
        } else {
            TuneState::GoingRight
        };
        self.step();
    }

    /// `dim_turn`.
    fn turn(&mut self) {
        match self.tune {
            TuneState::ParkingOnTop | TuneState::ParkingTired => {}
            TuneState::GoingRight => {
                self.tune = TuneState::GoingLeft;
                self.steps_left = 0;
            }
            TuneState::GoingLeft => {
                self.tune = TuneState::GoingRight;
                self.steps_right = 0;
            }
        }
    }

    /// `dim_on_top`.
    fn on_top(&self) -> bool {
        match self.tune {
            TuneState::ParkingOnTop | TuneState::ParkingTired => true,
            TuneState::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            TuneState::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    /// `dim_park_on_top`.
    fn park_on_top(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tired = 0;
        self.tune = TuneState::ParkingOnTop;
    }

    /// `dim_park_tired`: `tired` keeps its value (10) and counts the windows down.
    fn park_tired(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tune = TuneState::ParkingTired;
    }

    /// `net_dim_decision`: true if the profile changed.
    fn decision(&mut self, cur: &Stats) -> bool {
        let prev_state = self.tune;
        let prev_ix = self.profile_ix;
        match self.tune {
            TuneState::ParkingOnTop => {
                if compare(cur, &self.prev) != Compare::Same {
                    self.exit_parking();
                }
            }
            TuneState::ParkingTired => {
                self.tired = self.tired.saturating_sub(1);
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            TuneState::GoingRight | TuneState::GoingLeft => {
                if compare(cur, &self.prev) != Compare::Better {
                    self.turn();
                }
                if self.on_top() {
                    self.park_on_top();
                } else {
                    match self.step() {
                        Step::OnEdge => self.park_on_top(),
                        Step::TooTired => self.park_tired(),
                        Step::Stepped => {}
                    }
                }
            }
        }
        if prev_state != TuneState::ParkingOnTop || self.tune != TuneState::ParkingOnTop {
            self.prev = *cur;
        }
        self.profile_ix != prev_ix
    }
}

impl Policy for Dim {
    fn initial(&self) -> Option<Write> {
        Some(self.setting(self.programmed_ix))
    }

    /// `net_dim`.
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        if self.measure == Measure::InProgress {
            if s.events.saturating_sub(self.start.events) < DIM_NEVENTS {
                return None;
            }
            let cur = calc_stats(&self.start, s)?; // 0 µs: unreliable, window stays open
            if self.decision(&cur) {
                // DIM_APPLY_NEW_PROFILE: the driver's work applies the profile and sets the
                // state back to DIM_START_MEASURE before the next call, so the next call
                // opens a new window.
                self.measure = Measure::Start;
                self.programmed_ix = self.profile_ix;
                return Some(self.setting(self.profile_ix));
            }
            // No change: fall through, this sample opens the next window.
        }
        self.start = Start::of(s);
        self.measure = Measure::InProgress;
        None
    }

    fn interval(&self) -> SimDuration {
        SimDuration(self.profile(self.programmed_ix).0 * PS_PER_US)
    }
}

/// The settings of `dim`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `DIM_CQ_PERIOD_MODE_START_FROM_CQE`.
    pub cqe: bool,
}

impl Variant for Dim {
    const KIND: &'static str = "dim";
    const KEYS: &'static [&'static str] = &[MODE];
    const ADAPTIVE: bool = true;
    const ITR: Itr = Itr::Keeps;
    const COALESCING: bool = true;
    type Config = Config;

    fn from_params(p: &Params) -> Result<Config, Error> {
        Ok(Config {
            cqe: DimMode::of(p)? == DimMode::Cqe,
        })
    }

    fn new_vector(c: &Config, _has_tx: bool) -> Dim {
        Dim::new(if c.cqe { DimMode::Cqe } else { DimMode::Eqe })
    }

    /// DIM programs the coalescing conditions that the coalescing schemes preset.
    fn check_scheme(scheme: Scheme) -> Result<(), Error> {
        if matches!(scheme, Scheme::CoalesceCount | Scheme::CoalesceTime) {
            return Err(Error::Inconsistent {
                key: super::config::KEY.into(),
                value: "\"dim\"".into(),
                reason: format!(
                    "DIM programs nic.rx_usecs and nic.rx_frames itself, replacing the coalescing of scheme \"{}\"; run DIM with scheme \"irq\" or \"napi\"",
                    scheme.name()
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TuneState::*;

    fn us(v: u64) -> SimDuration {
        SimDuration(v * PS_PER_US)
    }

    fn eqe(ix: usize) -> Write {
        let (usecs, frames) = RX_EQE_PROFILES[ix];
        Write::Coalesce {
            usecs: us(usecs),
            frames,
            restart: false,
        }
    }

    /// Cumulative counters of the vector.
    #[derive(Default)]
    struct Feed {
        t_us: u64,
        packets: u64,
        bytes: u64,
        events: u64,
    }

    impl Feed {
        fn sample(&self) -> Sample {
            Sample::rx_only(
                SimTime(self.t_us * PS_PER_US),
                0,
                self.packets,
                self.bytes,
                self.events,
            )
        }

        fn advance(&mut self, dt_us: u64, packets: u64, bytes: u64, events: u64) -> Sample {
            self.t_us += dt_us;
            self.packets += packets;
            self.bytes += bytes;
            self.events += events;
            self.sample()
        }

        /// One decision window of 1 ms, 1000 packets and 64 events carrying `bytes` (so
        /// bpms = bytes, ppms = 1000, epms = 64). Opens the window first when the policy
        /// waits for a start (after a profile change).
        fn window(&mut self, dim: &mut Dim, bytes: u64) -> Option<Write> {
            if dim.measure == Measure::Start {
                assert_eq!(dim.on_complete(&self.sample()), None);
            }
            let s = self.advance(1000, 1000, bytes, 64);
            dim.on_complete(&s)
        }
    }

    /// Runs windows of the given bytes/ms and checks (profile, state, tired, write) after each.
    fn run(table: &[(u64, usize, TuneState, u8, bool)]) -> Dim {
        let mut dim = Dim::starting_at(DimMode::Eqe, 1);
        let mut f = Feed::default();
        for (i, &(bytes, ix, state, tired, write)) in table.iter().enumerate() {
            let w = f.window(&mut dim, bytes);
            let got = (dim.profile_ix(), dim.tune_state(), dim.tired(), w);
            assert_eq!(
                got,
                (ix, state, tired, write.then(|| eqe(ix))),
                "window {}",
                i + 1
            );
        }
        dim
    }

    #[test]
    fn mlx5e_starts_zeroed_below_the_programmed_default() {
        let mut dim = Dim::new(DimMode::Eqe);
        assert_eq!((dim.profile_ix(), dim.programmed_ix()), (0, 1));
        assert_eq!(
            dim.initial(),
            Some(eqe(1)),
            "the NIC runs the default profile"
        );
        assert_eq!(dim.interval(), us(8));
        let mut f = Feed::default();
        // First window: better than the zero stats; leaves the park going right, to 1.
        assert_eq!(f.window(&mut dim, 100_000), Some(eqe(1)));
        assert_eq!(
            (dim.profile_ix(), dim.tune_state(), dim.tired()),
            (1, GoingRight, 1)
        );
        // Same again: not better, turn left, step to 0 (1 µs).
        assert_eq!(f.window(&mut dim, 100_000), Some(eqe(0)));
        assert_eq!((dim.profile_ix(), dim.tune_state()), (0, GoingLeft));
        assert_eq!(dim.interval(), us(1));
        // ice's start steps left first.
        let mut ice = Dim::starting_at(DimMode::Eqe, 1);
        assert_eq!(Feed::default().window(&mut ice, 100_000), Some(eqe(0)));
        assert_eq!(ice.tune_state(), GoingLeft);
    }

    #[test]
    fn initial_setting_is_profile_1() {
        let dim = Dim::starting_at(DimMode::Eqe, 1);
        assert_eq!(dim.initial(), Some(eqe(1)));
        assert_eq!(dim.interval(), us(8));
        let dim = Dim::starting_at(DimMode::Cqe, 1);
        let cqe1 = Write::Coalesce {
            usecs: us(8),
            frames: 128,
            restart: true,
        };
        assert_eq!(dim.initial(), Some(cqe1));
    }

    #[test]
    fn stats_use_ceilings_and_the_constant_64() {
        let start = Start::default();
        // (µs, packets, bytes, events) → (ppms, bpms, epms)
        let table: &[(u64, u64, u64, u64, Option<Stats>)] = &[
            (
                1000,
                1000,
                100_000,
                64,
                Some(Stats {
                    ppms: 1000,
                    bpms: 100_000,
                    epms: 64,
                }),
            ),
            // 200 events in the window: epms still from 64.
            (
                1000,
                1000,
                100_000,
                200,
                Some(Stats {
                    ppms: 1000,
                    bpms: 100_000,
                    epms: 64,
                }),
            ),
            (
                3,
                1,
                1,
                64,
                Some(Stats {
                    ppms: 334,
                    bpms: 334,
                    epms: 21_334,
                }),
            ),
            (
                1500,
                1,
                0,
                64,
                Some(Stats {
                    ppms: 1,
                    bpms: 0,
                    epms: 43,
                }),
            ),
            (0, 100, 100, 64, None), // 0 µs: unreliable
        ];
        for &(t, packets, bytes, events, want) in table {
            let end = Sample {
                now: SimTime(t * PS_PER_US + 999_999), // truncated to whole µs
                jiffies: 0,
                packets,
                bytes,
                events,
                ..Sample::default()
            };
            assert_eq!(calc_stats(&start, &end), want, "{t} µs");
        }
    }

    #[test]
    fn significance_is_eleven_percent() {
        // (cur, prev, significant)
        for (c, p, sig) in [
            (1110, 1000, true),
            (1109, 1000, false),
            (890, 1000, true),
            (891, 1000, false),
            (5, 0, false),
            (0, 0, false),
        ] {
            assert_eq!(significant(c, p), sig, "{c} vs {p}");
        }
        let s = |bpms, ppms, epms| Stats { ppms, bpms, epms };
        // (cur, prev, result): bytes first, then packets, then fewer events.
        for (c, p, r) in [
            (s(1, 0, 0), s(0, 5, 5), Compare::Better),
            (s(0, 9, 9), s(0, 5, 5), Compare::Same),
            (s(120, 1, 100), s(100, 1000, 1), Compare::Better),
            (s(80, 1000, 1), s(100, 1, 100), Compare::Worse),
            (s(105, 0, 0), s(100, 0, 9), Compare::Same),
            (s(105, 1, 0), s(100, 0, 9), Compare::Better),
            (s(105, 80, 0), s(100, 100, 9), Compare::Worse),
            (s(105, 100, 5), s(100, 100, 0), Compare::Same),
            (s(105, 100, 80), s(100, 100, 100), Compare::Better),
            (s(105, 100, 120), s(100, 100, 100), Compare::Worse),
            (s(105, 105, 105), s(100, 100, 100), Compare::Same),
        ] {
            assert_eq!(compare(&c, &p), r, "{c:?} vs {p:?}");
        }
    }

    /// Windows that park DIM on top at profile 2: (bytes/ms, profile after, state after,
    /// tired after, profile written).
    const PARKED_AT_2: [(u64, usize, TuneState, u8, bool); 6] = [
        (100_000, 0, GoingLeft, 1, true), // vs zero stats: better → exit parking, left
        (100_000, 1, GoingRight, 2, true), // same → turn right, step
        (120_000, 2, GoingRight, 3, true), // +20 %: better, step
        (140_000, 3, GoingRight, 4, true), // +16.7 %
        (100_000, 2, GoingLeft, 5, true), // −28.6 %: worse → turn left, step back
        (130_000, 2, ParkingOnTop, 0, false), // +30 % after one step back: on top
    ];

    #[test]
    fn parks_after_a_better_then_worse_step() {
        let dim = run(&[
            &PARKED_AT_2[..],
            &[
                (143_000, 2, ParkingOnTop, 0, false), // +10 % of the frozen 130_000: same
                (144_300, 1, GoingLeft, 1, true),     // +11 % of 130_000 (+0.9 % of 143_000): leave
            ],
        ]
        .concat());
        assert_eq!(dim.prev_stats().bpms, 144_300);
    }

    #[test]
    fn a_step_back_that_does_not_improve_turns_again() {
        run(&[
            (100_000, 0, GoingLeft, 1, true),
            (100_000, 1, GoingRight, 2, true),
            (120_000, 2, GoingRight, 3, true),
            (140_000, 3, GoingRight, 4, true),
            (100_000, 2, GoingLeft, 5, true), // worse: turn, step back
            (100_000, 3, GoingRight, 6, true), // same: turn again (steps_right reset)
            (115_000, 4, GoingRight, 7, true), // +15 %: on_top needs steps_left > 1: step on
        ]);
    }

    #[test]
    fn on_edge_at_profile_4_parks_on_top() {
        let dim = run(&[
            (100_000, 0, GoingLeft, 1, true),
            (100_000, 1, GoingRight, 2, true),
            (120_000, 2, GoingRight, 3, true),
            (140_000, 3, GoingRight, 4, true),
            (160_000, 4, GoingRight, 5, true),
            (180_000, 4, ParkingOnTop, 0, false), // better, but no profile 5: ON_EDGE
        ]);
        assert_eq!(dim.interval(), us(256));
        // On the left edge too: going left at 0 and better → park.
        run(&[
            (100_000, 0, GoingLeft, 1, true),
            (120_000, 0, ParkingOnTop, 0, false),
        ]);
    }

    #[test]
    fn tired_after_ten_steps_parks_for_ten_windows() {
        // Identical windows: the first is better than the zero stats, then always the same,
        // so it turns at every window and oscillates between 0 and 1.
        let mut table = vec![(100_000, 0, GoingLeft, 1, true)];
        for w in 2..=10u8 {
            let (ix, state) = if w % 2 == 0 {
                (1, GoingRight)
            } else {
                (0, GoingLeft)
            };
            table.push((100_000, ix, state, w, true));
        }
        // 11th: the step would be the 11th: too tired → park tired, profile kept.
        table.push((100_000, 1, ParkingTired, 10, false));
        // 10 windows parked: tired counts down, the 10th leaves (left, from 1) and steps.
        for tired in (1..=9u8).rev() {
            table.push((100_000, 1, ParkingTired, tired, false));
        }
        table.push((100_000, 0, GoingLeft, 1, true));
        assert_eq!(table.len(), 21);
        run(&table);
    }

    #[test]
    fn windows_need_64_events_and_some_time() {
        let mut dim = Dim::starting_at(DimMode::Eqe, 1);
        let mut f = Feed::default();
        assert_eq!(dim.on_complete(&f.sample()), None); // opens the window at 0
        // 63 events: nothing, the window stays open.
        assert_eq!(dim.on_complete(&f.advance(1000, 500, 50_000, 63)), None);
        assert_eq!(dim.prev_stats(), Stats::default());
        // The 64th event 500 µs later closes it: rates over 1500 µs.
        let w = dim.on_complete(&f.advance(500, 500, 50_000, 1));
        assert_eq!(w, Some(eqe(0)));
        let want = Stats {
            ppms: 667,
            bpms: 66_667,
            epms: 43,
        };
        assert_eq!(dim.prev_stats(), want);
        // After a change the next call only opens a window, whatever it carries.
        assert_eq!(dim.on_complete(&f.advance(1000, 1000, 1, 500)), None);
        assert_eq!(dim.measure, Measure::InProgress);
        // 64 events in 0 µs: unreliable, no decision, the window stays open.
        assert_eq!(dim.on_complete(&f.advance(0, 10, 10, 64)), None);
        assert_eq!(dim.start.time, SimTime(2500 * PS_PER_US));
        assert_eq!(dim.tune_state(), GoingLeft);
    }

    #[test]
    fn cqe_mode_writes_restarting_timers() {
        let mut dim = Dim::starting_at(DimMode::Cqe, 1);
        let mut f = Feed::default();
        let w = f.window(&mut dim, 100_000);
        let want = Write::Coalesce {
            usecs: us(2),
            frames: 256,
            restart: true,
        };
        assert_eq!(w, Some(want));
        assert_eq!(dim.interval(), us(2));
    }

    #[test]
    fn odd_counters_do_not_panic() {
        let mut dim = Dim::starting_at(DimMode::Eqe, 1);
        for (t, v) in [
            (0u64, 0u64),
            (u64::MAX, u64::MAX),
            (1, 0),
            (u64::MAX, 5),
            (2, u64::MAX),
        ] {
            let s = Sample::rx_only(SimTime(t), 0, v, v, v);
            dim.on_complete(&s);
        }
    }

    #[test]
    fn going_right_one_step_after_two_left_is_on_top() {
        // dim_on_top going right: steps_left > 1 and steps_right == 1. Parked at 2, DIM leaves
        // left (steps reset by the park), steps left twice, is worse and turns right: one step
        // right is not yet on top; better after it, it is.
        run(&[
            &PARKED_AT_2[..],
            &[
                (144_300, 1, GoingLeft, 1, true), // +11 %: leaves the park, left from 2
                (175_000, 0, GoingLeft, 2, true), // +21 %: better, steps_left 2
                (100_000, 1, GoingRight, 3, true), // worse: turn (steps_right 0), not on top: step
                (130_000, 1, ParkingOnTop, 0, false), // +30 %: steps left 2, right 1: on top
            ],
        ]
        .concat());
    }

    #[test]
    fn a_start_past_the_last_profile_is_held_at_profile_4() {
        assert_eq!(Dim::starting_at(DimMode::Eqe, 4).profile_ix(), 4);
        assert_eq!(Dim::starting_at(DimMode::Eqe, 5).profile_ix(), 4);
        assert_eq!(Dim::starting_at(DimMode::Cqe, 9).profile_ix(), 4);
    }

    #[test]
    fn the_programmed_profile_follows_each_applied_change() {
        // programmed_ix is what the NIC runs: the default (1) until DIM applies a profile,
        // then each profile DIM writes; a decision without a change keeps it.
        let mut dim = Dim::starting_at(DimMode::Eqe, 1);
        assert_eq!(dim.programmed_ix(), 1);
        let mut f = Feed::default();
        assert_eq!(f.window(&mut dim, 100_000), Some(eqe(0)));
        assert_eq!(dim.programmed_ix(), 0, "left to 0: the NIC runs profile 0");
        assert_eq!(f.window(&mut dim, 100_000), Some(eqe(1)));
        assert_eq!(dim.programmed_ix(), 1);
        assert_eq!(f.window(&mut dim, 120_000), Some(eqe(2)));
        assert_eq!(dim.programmed_ix(), 2);
        assert_eq!(f.window(&mut dim, 140_000), Some(eqe(3)));
        assert_eq!(f.window(&mut dim, 100_000), Some(eqe(2)));
        // Better after one step back: parks on top, no write, the NIC keeps profile 2.
        assert_eq!(f.window(&mut dim, 130_000), None);
        assert_eq!((dim.programmed_ix(), dim.interval()), (2, us(64)));
    }

    #[test]
    fn going_left_one_step_after_one_right_is_not_on_top() {
        // dim_on_top going left needs steps_right > 1 and steps_left == 1. Leaving the park
        // at 2 (left to 1), DIM turns right for one step (to 2), is worse and turns left for
        // one step (to 1); better after it, one step right was no climb: it steps on to 0
        // instead of parking.
        run(&[
            &PARKED_AT_2[..],
            &[
                (144_300, 1, GoingLeft, 1, true), // +11 %: leaves the park, left from 2
                (144_300, 2, GoingRight, 2, true), // same: turn right, step (steps_right 1)
                (100_000, 1, GoingLeft, 3, true), // −30 %: turn left, step (steps_left 1)
                (130_000, 0, GoingLeft, 4, true), // +30 %: steps_right is 1, not on top: step
            ],
        ]
        .concat());
    }
}
