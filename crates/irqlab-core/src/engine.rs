//! The engine: one run, from time zero to the end of the measured window, of any [`Model`].
//!
//! A model has three sources of events, which the engine merges lazily (nothing is
//! pre-scheduled): the earliest CPU completion of its cores (priority 0), its earliest timer
//! (priority 1), and its next packet arrival (priority 2). The next event is the one with the
//! smallest `(time, priority)`; the model orders each source internally (cores by index, timers
//! FIFO). An event at or after the end of the run is not processed. Everything else — what an
//! event means — is the model's business: the engine knows no host type.

use crate::time::SimTime;

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

/// Runs `m` from time zero to `end`, opening the measured window at `warmup`.
pub(crate) fn run<M: Model>(m: &mut M, warmup: SimTime, end: SimTime) {
    let mut e = Engine::new(warmup);
    e.run_until(m, end);
    e.finish(m, end);
}

/// A run that can stop and resume: [`Engine::run_until`] any number of times with growing
/// times, then [`Engine::finish`]. The events handled are the same as in one call of [`run`].
pub(crate) struct Engine {
    warmup: SimTime,
    window_open: bool,
}

impl Engine {
    pub fn new(warmup: SimTime) -> Engine {
        Engine {
            warmup,
            window_open: false,
        }
    }

    /// Handles every event before `until`.
    pub fn run_until<M: Model>(&mut self, m: &mut M, until: SimTime) {
        let warmup = self.warmup;
        let mut window_open = self.window_open;
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
            if t >= until {
                break;
            }
            if !window_open && t >= warmup {
                m.open_window(warmup);
                window_open = true;
            }
            match which {
                Next::Cpu => m.on_completion(t),
                Next::Timer => m.on_timer(t),
                Next::Arrival => m.on_arrival(t),
            }
        }
        self.window_open = window_open;
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
