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
use crate::scenario::{Cost, Dist, Warning};
use crate::schema::Params;
use crate::time::{SimDuration, SimTime};

/// `BUSY_POLL_BUDGET`: the budget of each busy poll when none is set.
pub const BUSY_POLL_BUDGET: u64 = 8;

/// How an app waits for packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// A blocking `recv` loop.
    Recv,
    /// An `epoll_wait` loop.
    Epoll,
}

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

/// The request/response workload (`traffic.kind = "rr"`).
#[derive(Clone, Debug, PartialEq)]
pub struct RrConfig {
    pub clients: usize,
    pub outstanding: usize,
    pub remote: Cost,
    /// 0: closed loop.
    pub rate_rps: f64,
    pub response_bytes: u32,
    pub timeout: SimDuration,
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

/// The settings of `p`, checked against the scenario's apps (`ios`: each app's `io`).
pub fn configure(p: &Params, ios: &[Io]) -> Result<BusyConfig, Error> {
    let epoll_us = match p.f64("epoll.busy_poll_us") {
        0.0 => p.f64("kernel.busy_poll_us"),
        us => us,
    };
    let cfg = BusyConfig {
        busy_read_us: p.f64("socket.busy_read_us").trunc(),
        sock_budget: budget_or_default(p.u64("socket.busy_poll_budget")),
        sock_prefer: p.bool("socket.prefer_busy_poll"),
        epoll_us: epoll_us.trunc(),
        epoll_budget: budget_or_default(p.u64("epoll.busy_poll_budget")),
        epoll_prefer: p.bool("epoll.prefer_busy_poll"),
        maxevents: p.u64("epoll.maxevents"),
        epoll_nonblocking: *p.get("epoll.timeout_ms") == crate::schema::Value::Int(0),
        epoll_batch: SimDuration::from_ns(p.f64("epoll.batch_ns")),
        irq_suspend_timeout: SimDuration::from_ns(p.f64("kernel.irq_suspend_timeout_ns")),
        iter: SimDuration::from_ns(p.f64("platform.busy_iter_ns")),
    };
    if cfg.iter.is_zero() {
        return Err(Error::OutOfRange {
            key: "platform.busy_iter_ns".into(),
            value: p.get("platform.busy_iter_ns").to_string(),
            allowed: "must be at least one picosecond".into(),
        });
    }
    let busy_keys = [
        "socket.busy_read_us",
        "kernel.busy_poll_us",
        "epoll.busy_poll_us",
        "epoll.prefer_busy_poll",
        "socket.prefer_busy_poll",
    ];
    if ios.is_empty()
        && let Some(k) = busy_keys.iter().find(|k| is_on(p, k))
    {
        return Err(Error::Inconsistent {
            key: (*k).into(),
            value: p.get(k).to_string(),
            reason: "busy polling runs in an application's thread; add an app ([[app]])".into(),
        });
    }
    let scheme = p.str("scheme");
    if matches!(scheme, "disable-enable" | "poll" | "napi-poll" | "hybrid")
        && let Some(k) = busy_keys.iter().find(|k| is_on(p, k))
    {
        return Err(Error::Inconsistent {
            key: (*k).into(),
            value: p.get(k).to_string(),
            reason: format!(
                "busy polling polls a NAPI; scheme \"{scheme}\" runs Salah's polling loop instead (use napi, irq, coalesce-count or coalesce-time)"
            ),
        });
    }
    if p.str("traffic.kind") == "rr" && ios.is_empty() {
        return Err(Error::Inconsistent {
            key: "traffic.kind".into(),
            value: p.get("traffic.kind").to_string(),
            reason: "requests need an app to answer them; add an app ([[app]])".into(),
        });
    }
    let epoll_apps = ios.contains(&Io::Epoll);
    if epoll_apps && cfg.epoll_nonblocking && cfg.epoll_batch.is_zero() {
        return Err(Error::Inconsistent {
            key: "epoll.batch_ns".into(),
            value: p.get("epoll.batch_ns").to_string(),
            reason: "an epoll_wait loop with epoll.timeout_ms = 0 spins on it: each call must cost something".into(),
        });
    }
    Ok(cfg)
}

/// Whether a busy-polling key is set: a flag that is true, or a time above 0.
fn is_on(p: &Params, k: &str) -> bool {
    match p.get(k) {
        crate::schema::Value::Bool(b) => *b,
        _ => p.f64(k) > 0.0,
    }
}

/// Settings that cannot take effect, as the kernel documents them; each names what is missing.
pub fn warnings(p: &Params, cfg: &BusyConfig, ios: &[Io], out: &mut Vec<Warning>) {
    let defer =
        p.u64("kernel.napi_defer_hard_irqs") > 0 && p.f64("kernel.gro_flush_timeout_ns") > 0.0;
    let missing_defer = if p.u64("kernel.napi_defer_hard_irqs") == 0 {
        "kernel.napi_defer_hard_irqs"
    } else {
        "kernel.gro_flush_timeout_ns"
    };
    let recv_apps = ios.contains(&Io::Recv);
    let epoll_apps = ios.contains(&Io::Epoll);
    let unset = p.unset();
    let mut warn = |key: &str, reason: String| {
        if p.get(key) != unset.get(key) {
            out.push(Warning {
                key: key.into(),
                value: p.get(key).to_string(),
                reason,
            });
        }
    };
    if cfg.sock_prefer && !defer {
        warn(
            "socket.prefer_busy_poll",
            format!(
                "has no effect without software IRQ coalescing: set {missing_defer} (napi.rst: deferral is a precondition for prefer_busy_poll)"
            ),
        );
    }
    if cfg.epoll_prefer && !defer {
        warn(
            "epoll.prefer_busy_poll",
            format!(
                "has no effect on IRQs without software IRQ coalescing: set {missing_defer} (napi.rst: deferral is a precondition for prefer_busy_poll)"
            ),
        );
    }
    if !cfg.irq_suspend_timeout.is_zero() {
        if !epoll_apps {
            warn(
                "kernel.irq_suspend_timeout_ns",
                "has no effect: IRQ suspension works through epoll; set app.N.io = \"epoll\""
                    .into(),
            );
        } else if !cfg.epoll_prefer {
            warn(
                "kernel.irq_suspend_timeout_ns",
                "has no effect without epoll.prefer_busy_poll = true (napi.rst)".into(),
            );
        } else if !defer {
            warn(
                "kernel.irq_suspend_timeout_ns",
                format!(
                    "has no effect without software IRQ coalescing: set {missing_defer} (napi.rst)"
                ),
            );
        }
    }
    let rr = p.str("traffic.kind") == "rr";
    for k in RR_KEYS {
        if !rr {
            warn(k, "has no effect: traffic.kind is not \"rr\"".into());
        }
    }
    if rr {
        for k in ["traffic.rate_pps", "traffic.flows", "traffic.flow_zipf_s"] {
            warn(k, "has no effect: traffic.kind = \"rr\" takes its requests from rr.* (one flow per client)".into());
        }
        if p.f64("rr.rate_rps") > 0.0 {
            warn(
                "rr.outstanding",
                "has no effect: rr.rate_rps > 0 is an open loop".into(),
            );
        }
    }
    if !recv_apps {
        for k in [
            "socket.busy_read_us",
            "socket.busy_poll_budget",
            "socket.prefer_busy_poll",
        ] {
            warn(
                k,
                "has no effect: no app reads with recv (app.N.io = \"recv\")".into(),
            );
        }
    } else if cfg.busy_read_us == 0.0 {
        for k in ["socket.busy_poll_budget", "socket.prefer_busy_poll"] {
            warn(
                k,
                "has no effect: recv does not busy-poll (set socket.busy_read_us)".into(),
            );
        }
    }
    if !epoll_apps {
        for k in [
            "kernel.busy_poll_us",
            "epoll.busy_poll_us",
            "epoll.busy_poll_budget",
            "epoll.prefer_busy_poll",
            "epoll.maxevents",
            "epoll.timeout_ms",
            "epoll.batch_ns",
        ] {
            warn(
                k,
                "has no effect: no app waits with epoll (app.N.io = \"epoll\")".into(),
            );
        }
    } else if cfg.epoll_nonblocking && cfg.epoll_on() {
        for k in [
            "epoll.busy_poll_us",
            "kernel.busy_poll_us",
            "epoll.busy_poll_budget",
        ] {
            warn(
                k,
                "has no effect: epoll_wait with epoll.timeout_ms = 0 never busy-polls".into(),
            );
        }
    }
}

/// The request/response workload of `p`.
pub fn configure_rr(p: &Params) -> RrConfig {
    let mean = SimDuration::from_us(p.f64("rr.remote_us"));
    RrConfig {
        clients: p.u64("rr.clients") as usize,
        outstanding: p.u64("rr.outstanding") as usize,
        remote: Cost {
            mean,
            mean_ps: mean.ps() as f64,
            dist: match p.str("rr.remote_dist") {
                "exponential" => Dist::Exponential,
                _ => Dist::Deterministic,
            },
        },
        rate_rps: p.f64("rr.rate_rps"),
        response_bytes: p.u64("rr.response_bytes") as u32,
        timeout: SimDuration::from_us(p.f64("rr.timeout_us")),
    }
}

/// The keys of the request/response workload, which only `traffic.kind = "rr"` reads.
pub const RR_KEYS: &[&str] = &[
    "rr.clients",
    "rr.outstanding",
    "rr.remote_us",
    "rr.remote_dist",
    "rr.rate_rps",
    "rr.response_bytes",
    "rr.timeout_us",
];

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
