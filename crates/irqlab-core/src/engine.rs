//! The engine: one run, from time zero to the end of the measured window, of any [`Model`].
//!
//! A model has three sources of events, which the engine merges lazily (nothing is
//! pre-scheduled): the earliest CPU completion of its cores (priority 0), its earliest timer
//! (priority 1), and its next packet arrival (priority 2). The next event is the one with the
//! smallest `(time, priority)`; the model orders each source internally (cores by index, timers
//! FIFO). An event at or after the end of the run is not processed. Everything else — what an
//! event means — is the model's business: the engine knows no host type.
//!
//! A run can be stopped: the caller gives a `stop` function, asked between two slices of the
//! run whether to stop there. The event loop itself never asks: it runs in slices of [`SLICE`]
//! of simulated time, ending each where it already compares times for the end of the run, so
//! no instruction is added per packet. A slice also ends after [`TIMERS_PER_CHECK`] timer
//! events (one counter counted down per timer event), for models whose timers come closer
//! together than time can bound (a polling period may be a picosecond). A slice also ends at the
//! warm-up, and the measured window opens between that slice and the next, so the loop does
//! not check for it either. Slicing does not change what is computed: a run resumes exactly where
//! it stopped ([`Engine::run_until`]).

use std::fmt;

use crate::time::{PS_PER_MS, PS_PER_S, SimDuration, SimTime};

/// Simulated time between two calls of the `stop` function. A millisecond holds at most a million
/// arrivals at the highest rate a scenario may ask for (10^9 packets/s), a tenth of a second of
/// wall time or so; at common rates it is a few hundred microseconds of work, and slicing costs
/// nothing measurable (benches/README.md).
pub(crate) const SLICE: SimDuration = SimDuration(PS_PER_MS);

/// Timer events after which a slice ends early, whatever simulated time they took.
pub(crate) const TIMERS_PER_CHECK: u32 = 1 << 16;

/// A run stopped before its end because its `stop` function said so. Every event before `at`
/// was handled; nothing was reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted {
    pub at: SimTime,
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "run interrupted after {:.6} s of simulated time",
            self.at.ps() as f64 / PS_PER_S as f64
        )
    }
}

impl std::error::Error for Interrupted {}

/// A discrete-event model the engine can drive.
pub(crate) trait Model {
    /// When the earliest running CPU job finishes, ps (`u64::MAX`: none).
    fn next_completion_ps(&self) -> u64;
    /// When the earliest timer fires, ps (`u64::MAX`: none).
    fn next_timer_ps(&self) -> u64;
    /// When the next packet arrives, ps.
    fn next_arrival_ps(&self) -> u64;
    /// The earliest CPU job finishes at `now`.
    fn on_completion(&mut self, now: SimTime);
    /// The earliest timer fires at `now`.
    fn on_timer(&mut self, now: SimTime);
    /// The next packet arrives at `now`.
    fn on_arrival(&mut self, now: SimTime);
    /// The measured window opens at `t` (called once, before the first event at or after it,
    /// or at the end if there is none).
    fn open_window(&mut self, t: SimTime);
    /// The run ends at `t`.
    fn close(&mut self, t: SimTime);
}

enum Next {
    Cpu,
    Timer,
    Arrival,
}

/// Runs `m` from time zero to `end`, opening the measured window at `warmup`, unless `stop`
/// says to stop first.
pub(crate) fn run<M: Model>(
    m: &mut M,
    warmup: SimTime,
    end: SimTime,
    stop: &mut dyn FnMut() -> bool,
) -> Result<(), Interrupted> {
    let mut e = Engine::new(warmup);
    e.run_until(m, end, stop)?;
    e.finish(m, end);
    Ok(())
}

/// A run that can stop and resume: [`Engine::run_until`] any number of times with growing
/// times, then [`Engine::finish`]. The events handled are the same as in one call of [`run`].
pub(crate) struct Engine {
    warmup: SimTime,
    window_open: bool,
    /// Every event before this time has been handled.
    reached: SimTime,
}

impl Engine {
    pub fn new(warmup: SimTime) -> Engine {
        Engine {
            warmup,
            window_open: false,
            reached: SimTime::ZERO,
        }
    }

    /// Handles every event before `until`, slice by slice, asking `stop` before each slice.
    pub fn run_until<M: Model>(
        &mut self,
        m: &mut M,
        until: SimTime,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<(), Interrupted> {
        while self.reached < until {
            if stop() {
                return Err(Interrupted { at: self.reached });
            }
            // A slice ends at the warm-up, and the window opens before the next one: the event
            // loop itself never checks for it.
            if !self.window_open && self.reached >= self.warmup {
                m.open_window(self.warmup);
                self.window_open = true;
            }
            let mut to = until.min(self.reached + SLICE);
            if !self.window_open {
                to = to.min(self.warmup);
            }
            self.reached = self.handle_before(m, to);
        }
        Ok(())
    }

    /// Handles every event before `to`, or stops after [`TIMERS_PER_CHECK`] timer events.
    /// Returns the time before which every event has been handled.
    fn handle_before<M: Model>(&mut self, m: &mut M, to: SimTime) -> SimTime {
        let mut timers = TIMERS_PER_CHECK;
        loop {
            // Lazy merge of the three sources; ties go to the CPU, then timers, then arrivals.
            let tc = m.next_completion_ps();
            let tt = m.next_timer_ps();
            let ta = m.next_arrival_ps();
            let (t, which) = if tc <= tt && tc <= ta {
                (tc, Next::Cpu)
            } else if tt <= ta {
                (tt, Next::Timer)
            } else {
                (ta, Next::Arrival)
            };
            let t = SimTime(t);
            if t >= to {
                break to;
            }
            match which {
                Next::Cpu => m.on_completion(t),
                Next::Timer => {
                    m.on_timer(t);
                    timers -= 1;
                    if timers == 0 {
                        break t;
                    }
                }
                Next::Arrival => m.on_arrival(t),
            }
        }
    }

    /// Ends the run at `end` (every event before it handled).
    pub fn finish<M: Model>(&mut self, m: &mut M, end: SimTime) {
        if !self.window_open {
            m.open_window(self.warmup);
            self.window_open = true;
        }
        m.close(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Arrivals every `arrival_ps`, a timer every `timer_ps` (0: always at time 0, time stands
    /// still), no CPU; logs each event. It sets `stop` at its `stop_after`-th event.
    struct Toy<'a> {
        arrival_ps: u64,
        timer_ps: u64,
        next_arrival: u64,
        next_timer: u64,
        log: Vec<(u64, char)>,
        stop: &'a AtomicBool,
        stop_after: usize,
        set_at: Option<u64>,
    }

    impl<'a> Toy<'a> {
        fn new(arrival_ps: u64, timer_ps: u64, stop: &'a AtomicBool, stop_after: usize) -> Self {
            Toy {
                arrival_ps,
                timer_ps,
                next_arrival: arrival_ps,
                next_timer: timer_ps,
                log: Vec::new(),
                stop,
                stop_after,
                set_at: None,
            }
        }
        fn event(&mut self, t: SimTime, what: char) {
            self.log.push((t.ps(), what));
            if self.log.len() == self.stop_after {
                self.stop.store(true, Ordering::Relaxed);
                self.set_at = Some(t.ps());
            }
        }
    }

    impl Model for Toy<'_> {
        fn next_completion_ps(&self) -> u64 {
            u64::MAX
        }
        fn next_timer_ps(&self) -> u64 {
            self.next_timer
        }
        fn next_arrival_ps(&self) -> u64 {
            self.next_arrival
        }
        fn on_completion(&mut self, _: SimTime) {
            unreachable!()
        }
        fn on_timer(&mut self, t: SimTime) {
            self.next_timer += self.timer_ps;
            self.event(t, 't');
        }
        fn on_arrival(&mut self, t: SimTime) {
            self.next_arrival += self.arrival_ps;
            self.event(t, 'a');
        }
        fn open_window(&mut self, t: SimTime) {
            self.log.push((t.ps(), 'w'));
        }
        fn close(&mut self, t: SimTime) {
            self.log.push((t.ps(), 'c'));
        }
    }

    const MS: u64 = PS_PER_MS;

    #[test]
    fn slices_and_resumption_change_no_event() {
        let never = AtomicBool::new(false);
        let mut go_on = || false;
        // an arrival every 0.37 ms and a timer every 0.23 ms for 10 ms, window at 2 ms
        let mut whole = Toy::new(370_000_000, 230_000_000, &never, 0);
        run(&mut whole, SimTime(2 * MS), SimTime(10 * MS), &mut go_on).unwrap();
        let mut expected: Vec<(u64, char)> = (1..)
            .map(|k| (k * 370_000_000, 'a'))
            .take_while(|&(t, _)| t < 10 * MS)
            .chain(
                (1..)
                    .map(|k| (k * 230_000_000, 't'))
                    .take_while(|&(t, _)| t < 10 * MS),
            )
            .collect();
        expected.sort_by_key(|&(t, what)| (t, what == 'a')); // ties: the timer first
        let first_measured = expected.iter().position(|&(t, _)| t >= 2 * MS).unwrap();
        expected.insert(first_measured, (2 * MS, 'w'));
        expected.push((10 * MS, 'c'));
        assert_eq!(whole.log, expected);

        // the same run stopped and resumed at odd times, twice at one of them
        let mut resumed = Toy::new(370_000_000, 230_000_000, &never, 0);
        let mut e = Engine::new(SimTime(2 * MS));
        for t in [1, 1_110_000_000, 3 * MS, 3 * MS, 7_400_000_001, 10 * MS] {
            e.run_until(&mut resumed, SimTime(t), &mut go_on).unwrap();
        }
        e.finish(&mut resumed, SimTime(10 * MS));
        assert_eq!(resumed.log, whole.log);
    }

    #[test]
    fn a_set_flag_stops_the_run_within_a_slice() {
        let stop = AtomicBool::new(false);
        // an arrival every microsecond for an hour; the flag is set at 5.5 ms
        let mut m = Toy::new(1_000_000, u64::MAX, &stop, 5501);
        let end = SimTime(3_600_000 * MS);
        let mut asked = || stop.load(Ordering::Relaxed);
        let e = run(&mut m, SimTime::ZERO, end, &mut asked).unwrap_err();
        let set_at = m.set_at.unwrap();
        assert_eq!(set_at, 5_500_000_000);
        assert!(
            set_at < e.at.ps() && e.at.ps() <= set_at + SLICE.ps(),
            "{e:?}"
        );
        // every event before `at` was handled, none after
        assert_eq!(m.log.last().unwrap().0, e.at.ps() - 1_000_000);
        // a flag set before the run: nothing runs
        let mut m = Toy::new(1_000_000, u64::MAX, &stop, 0);
        assert_eq!(
            run(&mut m, SimTime::ZERO, end, &mut asked),
            Err(Interrupted { at: SimTime::ZERO })
        );
        assert!(m.log.is_empty());
    }

    #[test]
    fn timers_that_stand_still_are_stopped_too() {
        // a timer that fires at time zero for ever: simulated time never reaches a slice's end
        let stop = AtomicBool::new(false);
        let mut m = Toy::new(u64::MAX, 0, &stop, 1000);
        let e = run(&mut m, SimTime::ZERO, SimTime(MS), &mut || {
            stop.load(Ordering::Relaxed)
        });
        let e = e.unwrap_err();
        assert_eq!(e.at, SimTime::ZERO);
        assert!(
            m.log.len() <= 1000 + TIMERS_PER_CHECK as usize,
            "{}",
            m.log.len()
        );
    }

    #[test]
    fn stop_is_asked_once_a_slice_or_after_every_timers_per_check_timers() {
        let never = AtomicBool::new(false);
        // a timer every 0.1 µs: 10,000 a slice, below TIMERS_PER_CHECK, so once a slice
        let mut m = Toy::new(u64::MAX, 100_000, &never, 0);
        let mut asked = 0;
        run(&mut m, SimTime::ZERO, SimTime(10 * MS), &mut || {
            asked += 1;
            false
        })
        .unwrap();
        assert_eq!(asked, 10);
        // a timer every ps: 1e9 a slice, so every TIMERS_PER_CHECK timers
        let mut m = Toy::new(u64::MAX, 1, &never, 0);
        let mut asked = 0;
        let e = run(&mut m, SimTime::ZERO, SimTime(MS), &mut || {
            asked += 1;
            asked > 3
        })
        .unwrap_err();
        // the window's opening and 3 × TIMERS_PER_CHECK timers, at 1, 2, … ps
        assert_eq!(m.log.len(), 1 + 3 * TIMERS_PER_CHECK as usize);
        assert_eq!(e.at, SimTime(3 * u64::from(TIMERS_PER_CHECK)));
    }

    #[test]
    fn an_interrupted_run_says_how_far_it_got_in_seconds() {
        let e = Interrupted {
            at: SimTime(1_500 * MS),
        };
        assert_eq!(
            e.to_string(),
            "run interrupted after 1.500000 s of simulated time"
        );
    }
}
