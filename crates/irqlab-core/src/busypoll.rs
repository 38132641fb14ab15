//! Socket busy polling, preferred busy polling and IRQ suspension: their settings, the rules
//! that decide whether a setting can take effect, and the busy loop's clock.
//!
//! The model follows today's kernel (v6.13+ `net/core/dev.c` `__napi_busy_loop`,
//! `busy_poll_stop`, `napi_complete_done`, `napi_watchdog`, `napi_suspend_irqs`,
//! `napi_resume_irqs`; `fs/eventpoll.c` `ep_poll`, `ep_busy_loop`;
//! `Documentation/networking/napi.rst`). The transitions live in `host::busypoll`; this module
//! holds what they read.
//!
//! - A busy loop runs in the app's thread. It takes the NAPI when no one owns it
//!   (`SCHED | IN_BUSY_POLL`); while it owns it, the driver's `napi_complete_done` does nothing,
//!   so the IRQ stays masked once it has fired and the NAPI timer is not re-armed. Each poll
//!   processes at most the busy-poll budget (8 unless set). A poller that finds the NAPI owned
//!   and prefers busy polling sets `PREFER`: the softirq hands the NAPI over after a poll that
//!   used its whole weight, if software IRQ coalescing is configured.
//! - The loop ends when the socket (or the epoll set) has data, when its time is up (checked
//!   after each poll against the kernel's clock, `local_clock() >> 10`: "microseconds" of
//!   1024 ns, `time_after` strictly), or when another thread needs the core. Leaving
//!   (`busy_poll_stop`) polls once more without ownership, so the IRQ may be re-enabled; with
//!   preferred busy polling and deferral it arms the NAPI timer instead (the pledge).
//! - epoll: an `epoll_wait` that finds events returns them; with `prefer_busy_poll` and an
//!   IRQ suspension timeout it arms the NAPI timer with that timeout (suspension). One that
//!   finds nothing busy-polls (once, if only `prefer_busy_poll` is set), then resumes IRQs
//!   (an immediate softirq poll) if it still found nothing, and sleeps. A zero timeout never
//!   busy-polls.

use crate::error::Error;
use crate::kernel::config as kernel;
use crate::platform::BUSY_ITER_NS;
use crate::schema::{Params, Value, keys};
use crate::scheme::Scheme;
use crate::time::{SimDuration, SimTime};
use crate::traffic::config::TrafficKind;
use crate::traffic::rr;
use crate::warnings::Warnings;

/// `BUSY_POLL_BUDGET`: the budget of each busy poll when none is set.
pub const BUSY_POLL_BUDGET: u64 = 8;

/// How an app waits for packets (an app's setting, `app.N.io`).
pub use crate::socket::config::Io;

/// The busy-poll settings of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct BusyConfig {
    /// `sk_ll_usec`, in the kernel's 1024 ns units (0: off).
    pub busy_read_us: f64,
    pub sock_budget: u64,
    pub sock_prefer: bool,
    /// The epoll context's busy-poll time (its own, else `net.core.busy_poll`).
    pub epoll_us: f64,
    pub epoll_budget: u64,
    pub epoll_prefer: bool,
    pub maxevents: u64,
    /// `epoll_wait(…, 0)`: returns at once.
    pub epoll_nonblocking: bool,
    pub epoll_batch: SimDuration,
    /// `irq-suspend-timeout` (0: off).
    pub irq_suspend_timeout: SimDuration,
    /// An iteration of a busy loop that finds nothing.
    pub iter: SimDuration,
}

impl BusyConfig {
    /// `ep_busy_loop_on`: an epoll context busy-polls if it has a busy-poll time (its own or
    /// the sysctl) or prefers busy polling.
    pub fn epoll_on(&self) -> bool {
        self.epoll_us > 0.0 || self.epoll_prefer
    }

    /// Any app may busy-poll.
    pub fn any(&self) -> bool {
        self.busy_read_us > 0.0 || self.epoll_on()
    }
}

/// The kernel's busy-loop clock, `busy_loop_current_time()` = `local_clock() >> 10`, at `t`.
#[inline]
pub fn busy_clock(t: SimTime) -> u64 {
    (t.ps() / 1000) >> 10
}

/// The first instant at which a busy loop that started at `t0` with `usecs` of busy-poll time
/// has timed out: `time_after(busy_clock(now), busy_clock(t0) + usecs)`, i.e. the clock has
/// passed the end by one unit. (`usecs` is taken as whole units, as the kernel stores it.)
#[inline]
pub fn busy_deadline(t0: SimTime, usecs: f64) -> SimTime {
    let end_units = busy_clock(t0) + usecs as u64 + 1;
    SimTime((end_units << 10) * 1000)
}

/// The busy-poll budget: the setting, or `BUSY_POLL_BUDGET` for 0.
#[inline]
pub fn budget_or_default(b: u64) -> u64 {
    if b == 0 { BUSY_POLL_BUDGET } else { b }
}

keys! {
    /// Busy polling's keys (its iteration's cost is the platform's, `platform.busy_iter_ns`).
    pub KEYS = "kernel." [
        /// What only an app reading with `recv` uses.
        RECV_KEYS = "socket." [
            BUSY_READ_US,
            SOCK_BUDGET = "socket.busy_poll_budget",
            SOCK_PREFER = "socket.prefer_busy_poll",
        ],
        /// What only an app waiting with `epoll_wait` uses.
        EPOLL_KEYS = "epoll." [
            /// `net.core.busy_poll`: the epoll contexts' busy-poll time unless they have their
            /// own.
            BUSY_POLL_US = "kernel.busy_poll_us",
            EPOLL_US = "epoll.busy_poll_us",
            EPOLL_BUDGET = "epoll.busy_poll_budget",
            EPOLL_PREFER = "epoll.prefer_busy_poll",
            MAXEVENTS,
            TIMEOUT_MS,
            BATCH_NS,
        ],
        IRQ_SUSPEND_TIMEOUT_NS,
    ];
}
/// The keys that turn busy polling on.
const ON_KEYS: &[&str] = &[
    BUSY_READ_US,
    BUSY_POLL_US,
    EPOLL_US,
    EPOLL_PREFER,
    SOCK_PREFER,
];

/// The settings of `p`, checked against the scheme and the scenario's apps (`ios`: each
/// app's `io`).
pub fn configure(p: &Params, scheme: Scheme, ios: &[Io]) -> Result<BusyConfig, Error> {
    let epoll_us = match p.f64(EPOLL_US) {
        0.0 => p.f64(BUSY_POLL_US),
        us => us,
    };
    let cfg = BusyConfig {
        busy_read_us: p.f64(BUSY_READ_US).trunc(),
        sock_budget: budget_or_default(p.u64(SOCK_BUDGET)),
        sock_prefer: p.bool(SOCK_PREFER),
        epoll_us: epoll_us.trunc(),
        epoll_budget: budget_or_default(p.u64(EPOLL_BUDGET)),
        epoll_prefer: p.bool(EPOLL_PREFER),
        maxevents: p.u64(MAXEVENTS),
        epoll_nonblocking: *p.get(TIMEOUT_MS) == Value::Int(0),
        epoll_batch: SimDuration::from_ns(p.f64(BATCH_NS)),
        irq_suspend_timeout: SimDuration::from_ns(p.f64(IRQ_SUSPEND_TIMEOUT_NS)),
        iter: SimDuration::from_ns(p.f64(BUSY_ITER_NS)),
    };
    if cfg.iter.is_zero() {
        return Err(Error::OutOfRange {
            key: BUSY_ITER_NS.into(),
            value: p.get(BUSY_ITER_NS).to_string(),
            allowed: "must be at least one picosecond".into(),
        });
    }
    let on = ON_KEYS.iter().find(|k| is_on(p, k));
    if ios.is_empty()
        && let Some(k) = on
    {
        return Err(Error::Inconsistent {
            key: (*k).into(),
            value: p.get(k).to_string(),
            reason: "busy polling runs in an application's thread; add an app ([[app]])".into(),
        });
    }
    if scheme.uses_poll_loop()
        && let Some(k) = on
    {
        return Err(Error::Inconsistent {
            key: (*k).into(),
            value: p.get(k).to_string(),
            reason: format!(
                "busy polling polls a NAPI; scheme \"{}\" runs Salah's polling loop instead (use napi, irq, coalesce-count or coalesce-time)",
                scheme.name()
            ),
        });
    }
    if TrafficKind::of(p)? == TrafficKind::Rr && ios.is_empty() {
        return Err(p.inconsistent(
            TrafficKind::KEY,
            "requests need an app to answer them; add an app ([[app]])",
        ));
    }
    let epoll_apps = ios.contains(&Io::Epoll);
    if epoll_apps && cfg.epoll_nonblocking && cfg.epoll_batch.is_zero() {
        return Err(p.inconsistent(
            BATCH_NS,
            "an epoll_wait loop with epoll.timeout_ms = 0 spins on it: each call must cost something",
        ));
    }
    Ok(cfg)
}

/// Whether a busy-polling key is set: a flag that is true, or a time above 0.
fn is_on(p: &Params, k: &str) -> bool {
    match p.get(k) {
        Value::Bool(b) => *b,
        _ => p.f64(k) > 0.0,
    }
}

/// Settings that cannot take effect, as the kernel documents them; each names what is
/// missing. (The request/response workload's come in between: [`rr::warnings`].)
pub fn warnings(w: &mut Warnings, cfg: &BusyConfig, ios: &[Io], rr: bool) {
    let defer = kernel::soft_coalescing(w.p);
    let missing_defer = kernel::missing_soft_coalescing(w.p);
    let epoll_apps = ios.contains(&Io::Epoll);
    if cfg.sock_prefer && !defer {
        w.changed(
            SOCK_PREFER,
            format!(
                "has no effect without software IRQ coalescing: set {missing_defer} (napi.rst: deferral is a precondition for prefer_busy_poll)"
            ),
        );
    }
    if cfg.epoll_prefer && !defer {
        w.changed(
            EPOLL_PREFER,
            format!(
                "has no effect on IRQs without software IRQ coalescing: set {missing_defer} (napi.rst: deferral is a precondition for prefer_busy_poll)"
            ),
        );
    }
    if !cfg.irq_suspend_timeout.is_zero() {
        let why = if !epoll_apps {
            Some(
                "has no effect: IRQ suspension works through epoll; set app.N.io = \"epoll\""
                    .into(),
            )
        } else if !cfg.epoll_prefer {
            Some("has no effect without epoll.prefer_busy_poll = true (napi.rst)".into())
        } else if !defer {
            Some(format!(
                "has no effect without software IRQ coalescing: set {missing_defer} (napi.rst)"
            ))
        } else {
            None
        };
        if let Some(why) = why {
            w.changed(IRQ_SUSPEND_TIMEOUT_NS, why);
        }
    }
    rr::warnings(w, rr);
    io_warnings(w, cfg, ios);
}

/// Busy polling of the way no app waits, or that never busy-polls (no app at all included):
/// `net.core.busy_read` is each new socket's `sk_ll_usec` (`sock_init_data`, net/core/sock.c),
/// which only a blocking receive spends (`sk_can_busy_loop`/`sk_busy_loop`,
/// include/net/busy_poll.h); `net.core.busy_poll` only `poll`, `select` and `epoll_wait`
/// (`net_busy_loop_on`, fs/select.c, `ep_busy_loop`, fs/eventpoll.c).
fn io_warnings(w: &mut Warnings, cfg: &BusyConfig, ios: &[Io]) {
    // an AF_XDP socket busy-polls in its recvfrom with the same options (`crate::xsk`)
    if !ios.iter().any(|io| matches!(io, Io::Recv | Io::Xsk)) {
        for k in RECV_KEYS {
            w.changed(
                k,
                "has no effect: no app reads with recv (app.N.io = \"recv\")".into(),
            );
        }
    } else if cfg.busy_read_us == 0.0 {
        for k in [SOCK_BUDGET, SOCK_PREFER] {
            w.changed(
                k,
                "has no effect: recv does not busy-poll (set socket.busy_read_us)".into(),
            );
        }
    }
    if !ios.contains(&Io::Epoll) {
        for k in EPOLL_KEYS {
            w.changed(
                k,
                "has no effect: no app waits with epoll (app.N.io = \"epoll\")".into(),
            );
        }
    } else if cfg.epoll_nonblocking && cfg.epoll_on() {
        for k in [EPOLL_US, BUSY_POLL_US, EPOLL_BUDGET] {
            w.changed(
                k,
                "has no effect: epoll_wait with epoll.timeout_ms = 0 never busy-polls".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_clock_counts_units_of_1024_ns() {
        assert_eq!(busy_clock(SimTime(1_023_999)), 0);
        assert_eq!(busy_clock(SimTime(1_024_000)), 1);
        // 50 "us" from t = 0: over once the clock reads 51, at 51 x 1024 ns = 52.224 us
        assert_eq!(busy_deadline(SimTime::ZERO, 50.0), SimTime(52_224_000));
        // from t = 1000 ns (clock 0) the same instant: the granularity, not t0 + 50 us
        assert_eq!(busy_deadline(SimTime(1_000_000), 50.0), SimTime(52_224_000));
        // from t = 1024 ns (clock 1): one unit later
        assert_eq!(busy_deadline(SimTime(1_024_000), 50.0), SimTime(53_248_000));
    }

    #[test]
    fn a_budget_of_zero_is_the_kernels_default_of_eight() {
        assert_eq!(budget_or_default(0), 8);
        assert_eq!(budget_or_default(3), 3);
    }
}
