//! The CPU: one core as a preemptive-resume priority server.
//!
//! Three levels, highest first: hard IRQ, softirq, threads. Each level holds at most one job
//! (a piece of work with a remaining time, an accounting category and a continuation tag).
//! The core always runs the highest non-empty level; a job at a higher level preempts the
//! running one, which resumes where it stopped. Every picosecond of the measured window is
//! accounted to the category of the job that ran in it, or to idle.
//!
//! The core is not in the event queue: the engine asks it when its running job will finish.
//!
//! **The indirect cost of an interrupt** (`platform.irq_indirect_ns`, [`Cpu::with_irq_indirect`]):
//! a hard-IRQ job leaves the core *polluted* (its caches, TLB and branch predictors hold the
//! handler's state, not the work's). The next job that runs on the core at the softirq or the
//! thread level — the work the interrupt preempted, resuming, or the work that starts after it —
//! pays the cost once, as extra time charged to its own category: the pollution is a state, not
//! a count, so several hard-IRQ jobs before that job cost it one refill, and it is paid whole
//! however short that job is. A hard-IRQ job never pays it. A job that is given the cost but is
//! preempted at the same instant, before it ran at all, hands it back: the job that actually
//! runs next pays it (or the core stays polluted, if that is another hard-IRQ job).

use crate::time::{SimDuration, SimTime};

/// Priority level of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    HardIrq = 0,
    SoftIrq = 1,
    Thread = 2,
}

pub const N_LEVELS: usize = 3;

impl Level {
    /// Every level, highest first.
    pub const ALL: [Level; N_LEVELS] = [Level::HardIrq, Level::SoftIrq, Level::Thread];
}

/// Where CPU time goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Irq = 0,
    Softirq = 1,
    Ksoftirqd = 2,
    App = 3,
    Idle = 4,
    /// An app's thread busy-polling a device queue (`busypoll`).
    BusyPoll = 5,
    /// A NAPI thread's polls (`kernel.threaded_napi`).
    NapiThread = 6,
    /// The sending thread (`[sender]`).
    Sender = 7,
}

pub const N_CATEGORIES: usize = 8;

#[derive(Clone, Copy, Debug)]
struct Job<T> {
    remaining: u64,
    category: Category,
    tag: T,
}

/// The core. `T` is the continuation tag the host model attaches to each job.
#[derive(Debug)]
pub struct Cpu<T> {
    jobs: [Option<Job<T>>; N_LEVELS],
    /// Level of the running job, if any.
    running: Option<Level>,
    /// Time up to which `remaining` and the accounts are brought.
    since: SimTime,
    /// Picoseconds per category since time zero.
    account: [u64; N_CATEGORIES],
    /// When the running job finishes (`u64::MAX` if none runs): cached for the event loop.
    next_done: u64,
    /// Since when the core has been idle.
    idle_since: SimTime,
    /// Idle time (ps) after which a job pays `wakeup_ps` more: leaving a deep idle state.
    wakeup_after_ps: u64,
    wakeup_ps: u64,
    /// A job may cost more than its own time: a wake-up or an indirect cost is set.
    extras: bool,
    /// The indirect cost of a hard interrupt (0: none), whether the next job still owes it,
    /// and which job was given it at which instant (it hands it back if preempted then).
    indirect_ps: u64,
    polluted: bool,
    indirect_paid: Option<(Level, SimTime)>,
    /// The indirect cost each level's job was given (0: none), for [`Cpu::indirect_owed`].
    indirect_in: [u64; N_LEVELS],
}

impl<T: Copy> Default for Cpu<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Cpu<T> {
    /// An idle core at time zero.
    pub fn new() -> Cpu<T> {
        Cpu {
            jobs: [None; N_LEVELS],
            running: None,
            since: SimTime::ZERO,
            account: [0; N_CATEGORIES],
            next_done: u64::MAX,
            idle_since: SimTime::ZERO,
            wakeup_after_ps: 0,
            wakeup_ps: 0,
            extras: false,
            indirect_ps: 0,
            polluted: false,
            indirect_paid: None,
            indirect_in: [0; N_LEVELS],
        }
    }

    /// A core that pays `cost` to wake when it has been idle longer than `after`.
    pub fn with_wakeup(mut self, cost: SimDuration, after: SimDuration) -> Cpu<T> {
        self.wakeup_ps = cost.ps();
        self.wakeup_after_ps = after.ps();
        self.with_extras()
    }

    /// A core whose next softirq- or thread-level job after a hard-IRQ job takes `cost` longer
    /// (the module's doc says exactly when).
    pub fn with_irq_indirect(mut self, cost: SimDuration) -> Cpu<T> {
        self.indirect_ps = cost.ps();
        self.with_extras()
    }

    /// Whether a job may cost more than its own time (a wake-up or an indirect cost), kept
    /// as one flag for [`Cpu::start`]; whichever of the two is set last, and in either order.
    fn with_extras(mut self) -> Cpu<T> {
        self.extras = self.wakeup_ps != 0 || self.indirect_ps != 0;
        self
    }

    /// Brings the running job and the accounts forward to `now`.
    #[inline]
    pub fn advance(&mut self, now: SimTime) {
        let dt = now.ps() - self.since.ps();
        if dt == 0 {
            return;
        }
        match self.running {
            Some(level) => {
                let job = self.jobs[level as usize].as_mut().expect("running job");
                debug_assert!(job.remaining >= dt, "job overran its completion");
                job.remaining -= dt;
                self.account[job.category as usize] += dt;
            }
            None => self.account[Category::Idle as usize] += dt,
        }
        self.since = now;
    }

    /// Puts a job on `level`. The level must be free; the caller has advanced to now.
    #[inline(always)]
    pub fn start(&mut self, level: Level, duration: SimDuration, category: Category, tag: T) {
        let l = level as usize;
        debug_assert!(self.jobs[l].is_none(), "level {level:?} is busy");
        let mut remaining = duration.ps();
        if self.extras {
            if self.running.is_none()
                && self.wakeup_ps != 0
                && self.since.ps() - self.idle_since.ps() > self.wakeup_after_ps
            {
                // the first job after a long idle period also pays for leaving the idle state
                remaining += self.wakeup_ps;
            }
            if self.indirect_ps != 0 {
                remaining = self.indirect_on_start(level, remaining);
            }
        }
        let duration = SimDuration(remaining);
        self.jobs[l] = Some(Job {
            remaining: duration.ps(),
            category,
            tag,
        });
        if self.running.is_none_or(|r| level < r) {
            self.running = Some(level);
            self.next_done = self.since.ps() + duration.ps();
        }
    }

    /// A job of `remaining` ps is put on `level`: if it runs now (it preempts, or the core is
    /// idle), it takes back the indirect cost from a job given it at this instant, and pays
    /// it if the core is polluted and it is not a hard-IRQ job. Returns its time.
    #[cold]
    #[inline(never)]
    fn indirect_on_start(&mut self, level: Level, remaining: u64) -> u64 {
        self.indirect_in[level as usize] = 0;
        if self.running.is_some_and(|r| level >= r) {
            return remaining; // it waits: the cost goes to whoever runs next
        }
        if let Some((paid, at)) = self.indirect_paid.take()
            && at == self.since
            && self.running == Some(paid)
        {
            let job = self.jobs[paid as usize]
                .as_mut()
                .expect("the job that paid");
            job.remaining -= self.indirect_ps;
            self.indirect_in[paid as usize] = 0;
            self.polluted = true;
        }
        if self.polluted && level != Level::HardIrq {
            self.polluted = false;
            self.indirect_paid = Some((level, self.since));
            self.indirect_in[level as usize] = self.indirect_ps;
            remaining + self.indirect_ps
        } else {
            remaining
        }
    }

    /// A hard-IRQ handler has just ended (its job completed, or it took no time): the core is
    /// polluted, and the job that runs now pays, if it is not a hard-IRQ job (it ends that
    /// much later). The caller calls it before it starts any job at this instant.
    #[inline(never)]
    pub fn irq_done(&mut self) {
        if self.indirect_ps == 0 {
            return;
        }
        self.polluted = true;
        if let Some(r) = self.running
            && self.polluted
            && r != Level::HardIrq
        {
            self.polluted = false;
            self.indirect_paid = Some((r, self.since));
            self.indirect_in[r as usize] = self.indirect_ps;
            self.jobs[r as usize].as_mut().expect("job").remaining += self.indirect_ps;
            self.next_done += self.indirect_ps;
        }
    }

    /// Whether the core runs nothing at `now` and has run nothing for longer than `after` (a
    /// core idle since time zero counts from there).
    #[inline]
    pub fn idle_longer_than(&self, now: SimTime, after: SimDuration) -> bool {
        self.running.is_none() && now.ps().saturating_sub(self.idle_since.ps()) > after.ps()
    }

    /// When the running job finishes, in ps; `u64::MAX` if none runs.
    #[inline]
    pub fn next_completion_ps(&self) -> u64 {
        self.next_done
    }

    /// Removes the running job, which has just finished, and returns its level and tag.
    #[inline]
    pub fn complete(&mut self) -> (Level, T) {
        let level = self.running.expect("a running job");
        let job = self.jobs[level as usize].take().expect("job");
        debug_assert_eq!(job.remaining, 0);
        self.running = Level::ALL
            .into_iter()
            .find(|&l| self.jobs[l as usize].is_some());
        self.next_done = match self.running {
            Some(r) => self.since.ps() + self.jobs[r as usize].as_ref().expect("job").remaining,
            None => {
                self.idle_since = self.since;
                u64::MAX
            }
        };
        (level, job.tag)
    }

    /// The time left of the job on `level` (0 if none). The caller has advanced to now.
    #[inline]
    pub fn remaining(&self, level: Level) -> u64 {
        self.jobs[level as usize]
            .as_ref()
            .map_or(0, |j| j.remaining)
    }

    /// Shortens the job on `level` to `remaining` (at least 1 ps, at most what it had). The
    /// caller has advanced to now.
    pub fn shorten(&mut self, level: Level, remaining: u64) {
        let l = level as usize;
        let job = self.jobs[l].as_mut().expect("a job to shorten");
        job.remaining = remaining.clamp(1, job.remaining);
        if self.running == Some(level) {
            self.next_done = self.since.ps() + job.remaining;
        }
    }

    /// Lengthens the job on `level` by `ps` (it ends that much later, charged to its
    /// category). The caller has advanced to now.
    pub fn extend(&mut self, level: Level, ps: u64) {
        let job = self.jobs[level as usize].as_mut().expect("a job to extend");
        job.remaining += ps;
        if self.running == Some(level) {
            self.next_done += ps;
        }
    }

    /// The indirect interrupt cost the job on `level` was given (0 if none, or no job): part
    /// of its [`Cpu::remaining`] time.
    pub fn indirect_owed(&self, level: Level) -> u64 {
        if self.jobs[level as usize].is_some() {
            self.indirect_in[level as usize]
        } else {
            0
        }
    }

    /// The continuation tag of the job on `level`, if any.
    pub fn tag(&self, level: Level) -> Option<T> {
        self.jobs[level as usize].as_ref().map(|j| j.tag)
    }

    /// Whether a job occupies `level`.
    #[inline]
    pub fn is_busy(&self, level: Level) -> bool {
        self.jobs[level as usize].is_some()
    }

    /// Picoseconds accounted to each category since time zero.
    pub fn account(&self) -> [u64; N_CATEGORIES] {
        self.account
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waking_from_a_long_idle_period_costs_extra() {
        let mut cpu: Cpu<u8> = Cpu::new().with_wakeup(SimDuration(7), SimDuration(20));
        cpu.advance(SimTime(30)); // idle 30 > 20: the job pays 7 more
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 1);
        assert_eq!(cpu.next_completion_ps(), 42);
        cpu.advance(SimTime(42));
        cpu.complete();
        cpu.advance(SimTime(50)); // idle 8 <= 20: no extra cost
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 2);
        assert_eq!(cpu.next_completion_ps(), 55);
        cpu.advance(SimTime(55));
        cpu.complete();
        assert_eq!(cpu.account()[Category::Irq as usize], 17);
    }

    #[test]
    fn a_core_is_idle_longer_than_a_span_only_past_it_and_never_while_running() {
        let mut cpu: Cpu<u8> = Cpu::new();
        let after = SimDuration(20);
        assert!(
            cpu.idle_longer_than(SimTime(21), after),
            "idle since time zero"
        );
        assert!(
            !cpu.idle_longer_than(SimTime(20), after),
            "exactly the span: not longer"
        );
        cpu.advance(SimTime(30));
        cpu.start(Level::Thread, SimDuration(5), Category::App, 1);
        assert!(!cpu.idle_longer_than(SimTime(34), after), "running");
        cpu.advance(SimTime(35));
        cpu.complete();
        assert!(
            !cpu.idle_longer_than(SimTime(55), after),
            "idle since 35: 20, not longer"
        );
        assert!(cpu.idle_longer_than(SimTime(56), after));
    }

    /// A core with an indirect interrupt cost of 100 ps.
    fn polluting() -> Cpu<u8> {
        Cpu::new().with_irq_indirect(SimDuration(100))
    }

    /// Runs the running job to its end: its end time and tag.
    fn finish(cpu: &mut Cpu<u8>) -> (u64, u8) {
        let t = cpu.next_completion_ps();
        cpu.advance(SimTime(t));
        let (level, tag) = cpu.complete();
        if level == Level::HardIrq {
            cpu.irq_done();
        }
        (t, tag)
    }

    #[test]
    fn the_work_an_interrupt_preempted_pays_its_indirect_cost_when_it_resumes() {
        let mut cpu = polluting();
        cpu.start(Level::Thread, SimDuration(50), Category::App, 1);
        cpu.advance(SimTime(10));
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 2);
        assert_eq!(finish(&mut cpu), (15, 2));
        // 40 left, plus the refill
        assert_eq!(finish(&mut cpu), (155, 1));
        let a = cpu.account();
        assert_eq!(
            (a[Category::Irq as usize], a[Category::App as usize]),
            (5, 150)
        );
        // the next job, with no interrupt between, pays nothing
        cpu.start(Level::Thread, SimDuration(50), Category::App, 3);
        assert_eq!(finish(&mut cpu), (205, 3));
    }

    #[test]
    fn several_interrupts_before_the_next_job_cost_it_one_refill() {
        let mut cpu = polluting();
        for (t, tag) in [(0, 1), (10, 2)] {
            cpu.advance(SimTime(t));
            cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, tag);
            finish(&mut cpu);
        }
        // idle between them and after: the core stays polluted until a job runs
        cpu.advance(SimTime(30));
        cpu.start(Level::SoftIrq, SimDuration(20), Category::Softirq, 3);
        assert_eq!(finish(&mut cpu), (150, 3));
        let a = cpu.account();
        assert_eq!(
            (a[Category::Irq as usize], a[Category::Softirq as usize]),
            (10, 120)
        );
    }

    #[test]
    fn a_job_shorter_than_the_refill_pays_it_whole() {
        let mut cpu = polluting();
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 1);
        finish(&mut cpu);
        cpu.start(Level::SoftIrq, SimDuration(1), Category::Softirq, 2);
        assert_eq!(finish(&mut cpu), (106, 2));
    }

    #[test]
    fn a_job_preempted_before_it_ran_hands_the_cost_to_the_job_that_runs() {
        // the interrupt ends; the app it preempted is chosen, but a softirq starts at the same
        // instant (irq_exit): the softirq pays, the app resumes with its own time only
        let mut cpu = polluting();
        cpu.start(Level::Thread, SimDuration(50), Category::App, 1);
        cpu.advance(SimTime(10));
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 2);
        assert_eq!(finish(&mut cpu), (15, 2));
        assert_eq!(cpu.indirect_owed(Level::Thread), 100, "given to the app");
        cpu.start(Level::SoftIrq, SimDuration(20), Category::Softirq, 3);
        assert_eq!(cpu.indirect_owed(Level::Thread), 0, "handed back");
        assert_eq!(cpu.indirect_owed(Level::SoftIrq), 100);
        assert_eq!(finish(&mut cpu), (135, 3));
        assert_eq!(finish(&mut cpu), (175, 1));
        // a second interrupt at the same instant: it does not pay; the job after it does, once
        let mut cpu = polluting();
        cpu.start(Level::Thread, SimDuration(50), Category::App, 1);
        cpu.advance(SimTime(10));
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 2);
        assert_eq!(finish(&mut cpu), (15, 2));
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 3);
        assert_eq!(finish(&mut cpu), (20, 3));
        assert_eq!(finish(&mut cpu), (160, 1));
        let a = cpu.account();
        assert_eq!(
            (a[Category::Irq as usize], a[Category::App as usize]),
            (10, 150)
        );
    }

    #[test]
    fn work_that_ran_after_the_interrupt_keeps_the_cost_when_preempted_later() {
        let mut cpu = polluting();
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 1);
        finish(&mut cpu);
        cpu.start(Level::Thread, SimDuration(50), Category::App, 2);
        cpu.advance(SimTime(20));
        // a softirq (no interrupt before it) preempts: the app keeps its debt
        cpu.start(Level::SoftIrq, SimDuration(10), Category::Softirq, 3);
        assert_eq!(finish(&mut cpu), (30, 3));
        assert_eq!(finish(&mut cpu), (165, 2));
    }

    #[test]
    fn preempted_work_resumes_and_every_picosecond_is_accounted() {
        let mut cpu: Cpu<u8> = Cpu::new();
        cpu.advance(SimTime(10)); // idle 10
        cpu.start(Level::SoftIrq, SimDuration(30), Category::Softirq, 1);
        assert_eq!(cpu.next_completion_ps(), 40);
        cpu.advance(SimTime(20));
        cpu.start(Level::HardIrq, SimDuration(5), Category::Irq, 2);
        assert_eq!(cpu.next_completion_ps(), 25);
        cpu.advance(SimTime(25));
        assert_eq!(cpu.complete(), (Level::HardIrq, 2));
        // The softirq job had 20 left when preempted: it now ends at 45.
        assert_eq!(cpu.next_completion_ps(), 45);
        cpu.advance(SimTime(45));
        assert_eq!(cpu.complete(), (Level::SoftIrq, 1));
        cpu.advance(SimTime(100));
        let a = cpu.account();
        assert_eq!(a[Category::Irq as usize], 5);
        assert_eq!(a[Category::Softirq as usize], 30);
        assert_eq!(a[Category::Idle as usize], 65);
        assert_eq!(a.iter().sum::<u64>(), 100);
    }

    #[test]
    fn a_shortened_job_ends_sooner_and_a_preempted_one_keeps_the_running_jobs_end() {
        let mut cpu: Cpu<u8> = Cpu::new();
        cpu.advance(SimTime(10));
        cpu.start(Level::Thread, SimDuration(100), Category::App, 1);
        assert_eq!(cpu.remaining(Level::Thread), 100);
        assert_eq!(cpu.remaining(Level::SoftIrq), 0, "no job there");
        cpu.advance(SimTime(30));
        assert_eq!(cpu.remaining(Level::Thread), 80);
        // the running job: its end moves with it
        cpu.shorten(Level::Thread, 50);
        assert_eq!(cpu.remaining(Level::Thread), 50);
        assert_eq!(cpu.next_completion_ps(), 80);
        // never below 1 ps, never longer than it was
        cpu.shorten(Level::Thread, 0);
        assert_eq!(
            (cpu.remaining(Level::Thread), cpu.next_completion_ps()),
            (1, 31)
        );
        cpu.shorten(Level::Thread, 1000);
        assert_eq!(
            (cpu.remaining(Level::Thread), cpu.next_completion_ps()),
            (1, 31)
        );
        // a preempted job: the running job still ends when it did
        let mut cpu: Cpu<u8> = Cpu::new();
        cpu.start(Level::Thread, SimDuration(100), Category::App, 1);
        cpu.advance(SimTime(20));
        cpu.start(Level::HardIrq, SimDuration(10), Category::Irq, 2);
        cpu.shorten(Level::Thread, 40);
        assert_eq!(cpu.remaining(Level::Thread), 40);
        assert_eq!(cpu.next_completion_ps(), 30);
        cpu.advance(SimTime(30));
        assert_eq!(cpu.complete(), (Level::HardIrq, 2));
        assert_eq!(cpu.next_completion_ps(), 70);
    }
}
