//! The kernel's settings for the receive path (`kernel.*`): NAPI and `net_rx_action`'s
//! budgets and time limit, software IRQ coalescing, the thread level's scheduler and the
//! ksoftirqd policy, the timer tick; and the settings among them without effect.

use crate::error::Error;
use crate::schema::{Params, Value, fmt_float, keys, registry};
use crate::time::{PS_PER_S, SimDuration};
use crate::warnings::{Warnings, no_effect};

keys! {
    /// The kernel's keys (busy polling's are `busypoll`'s).
    pub KEYS = "kernel." [
        /// The kernel's softirq and NAPI, which Salah's polling loop replaces.
        pub SOFTIRQ_KEYS = [
            NAPI_WEIGHT,
            NETDEV_BUDGET,
            NETDEV_BUDGET_USECS,
            HZ,
            MAX_SOFTIRQ_RESTART,
            MAX_SOFTIRQ_TIME_MS,
            NAPI_DEFER_HARD_IRQS,
            GRO_FLUSH_TIMEOUT_NS,
        ],
        /// The thread level's time slice (0: EEVDF's base slice for the cores).
        SCHED_SLICE_US,
        KSOFTIRQD_POLICY,
        NET_RX_ACTION,
        TIMER_TICK,
        SOFTIRQ_TIME_LIMIT,
        /// Threaded NAPI (`/sys/class/net/<dev>/threaded`), and the core its threads run on.
        THREADED_NAPI,
        NAPI_THREAD_CORE,
        /// The NAPI threads' scheduling policy (`chrt`): fair (`SCHED_OTHER`) or FIFO.
        NAPI_THREAD_POLICY,
        /// `net.core.skb_defer_max`: the skbs a core may hold for others to free
        /// (`skb_attempt_defer_free`; with `platform.skb_free_ns`).
        SKB_DEFER_MAX,
    ];
}
/// Software IRQ coalescing (`napi_defer_hard_irqs` with `gro_flush_timeout`).
pub const SOFT_COALESCING_KEYS: &[&str] = &[NAPI_DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT_NS];

registry! {
    key: KSOFTIRQD_POLICY;
    /// Whether a waiting app takes the core from ksoftirqd.
    pub enum KsoftirqdPolicy {
        /// ksoftirqd and the apps share the core under the scheduler.
        Fair = "fair",
        /// ksoftirqd at nice 19 (Linux 2.6.18): a waiting app takes the core after each of its
        /// `handle_softirqs` runs.
        BelowApps = "below-apps",
    }
}

registry! {
    key: NAPI_THREAD_POLICY;
    /// A NAPI thread's scheduling policy among its core's threads (`chrt -p`).
    pub enum ThreadPolicy {
        /// `SCHED_OTHER`: the core's threads share it by the fair rule (`crate::sched`).
        Fair = "fair",
        /// `SCHED_FIFO` (`chrt -f`): it runs before the core's fair threads, which give way at
        /// their next preemption point when it wakes, and it never gives way to them.
        Fifo = "fifo",
    }
}

registry! {
    key: NET_RX_ACTION;
    /// Which `net_rx_action` runs.
    pub enum NetRxAction {
        /// Today's: a poll cleans up to its weight.
        V6_13 = "6.13",
        /// 2.6.18's: a poll cleans at most what is left of the budget, and a NAPI that used it
        /// is polled again in the same pass.
        V2_6_18 = "2.6.18",
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct KernelConfig {
    pub napi_weight: u64,
    pub netdev_budget: i64,
    /// Length of one jiffy.
    pub jiffy: SimDuration,
    /// `usecs_to_jiffies(netdev_budget_usecs)`.
    pub budget_jiffies: u64,
    pub max_softirq_restart: u64,
    /// `msecs_to_jiffies(MAX_SOFTIRQ_TIME)`.
    pub max_softirq_jiffies: u64,
    /// Time slice of the threads sharing a core (resolved).
    pub sched_slice: SimDuration,
    /// `kernel.ksoftirqd_policy = "below-apps"`: a waiting app takes the core from ksoftirqd
    /// after each of its `handle_softirqs` runs (Linux 2.6.18, ksoftirqd at nice 19).
    pub ksoftirqd_below_apps: bool,
    /// `kernel.net_rx_action = "2.6.18"`: a poll cleans at most what is left of the
    /// `net_rx_action` budget, not its whole weight, and a NAPI that used it is polled again
    /// in the same pass.
    pub poll_budget_left: bool,
    /// `kernel.timer_tick`: a tick every jiffy whose exit runs pending softirqs inline.
    pub timer_tick: bool,
    /// `kernel.threaded_napi`: each NAPI is polled by a thread of its own
    /// (`napi_threaded_poll`), not by `NET_RX_SOFTIRQ` (the device's setting; each NAPI's,
    /// resolved, is `napi[v].threaded`).
    pub threaded_napi: bool,
    /// The core the NAPI threads are pinned to (the device's; each NAPI's is
    /// `napi[v].thread_core`).
    pub napi_thread_core: usize,
    /// `net.core.skb_defer_max` (0: no skb's free is deferred).
    pub skb_defer_max: u64,
    /// Each vector's NAPI settings: the device-wide values with `napi.N.*` over them.
    pub napi: Vec<NapiSettings>,
}

/// One NAPI's settings (`napi.N.*` over the device-wide `kernel.*`), resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NapiSettings {
    /// `napi_defer_hard_irqs`.
    pub defer_hard_irqs: u64,
    /// `gro_flush_timeout`.
    pub gro_flush_timeout: SimDuration,
    /// `irq_suspend_timeout`.
    pub irq_suspend_timeout: SimDuration,
    /// `threaded`: who polls this NAPI.
    pub threaded: Threaded,
    /// The core its NAPI thread is pinned to (with `threaded` on or busy-poll).
    pub thread_core: usize,
    /// Its NAPI thread is `SCHED_FIFO` (`chrt -f`), not fair.
    pub thread_fifo: bool,
}

/// Who polls a NAPI (netdev's `napi-threaded`: disabled, enabled, busy-poll).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threaded {
    /// `NET_RX_SOFTIRQ` on the core that scheduled it.
    Off,
    /// Its thread (`NAPI_STATE_THREADED`), woken by `napi_schedule`; it sleeps once a poll
    /// completes the NAPI.
    On,
    /// Its thread, polling without end (`NAPI_STATE_THREADED_BUSY_POLL`, Linux 6.19): once
    /// scheduled, the NAPI stays in busy poll (`NAPI_STATE_IN_BUSY_POLL`), so
    /// `napi_complete_done` neither completes it nor lets the driver re-arm the IRQ.
    BusyPoll,
}

impl KernelConfig {
    /// Some NAPI is polled by a thread of its own.
    pub fn any_threaded(&self) -> bool {
        self.napi.iter().any(|n| n.threaded != Threaded::Off)
    }

    /// Some NAPI's thread busy-polls.
    pub fn any_threaded_busy_poll(&self) -> bool {
        self.napi.iter().any(|n| n.threaded == Threaded::BusyPoll)
    }
}

impl NapiSettings {
    /// Software IRQ coalescing is on for this NAPI: both of its settings above 0.
    #[inline]
    pub fn defers(&self) -> bool {
        self.defer_hard_irqs > 0 && !self.gro_flush_timeout.is_zero()
    }
}

/// A softirq deadline no run reaches (`kernel.softirq_time_limit = false`), with room to add.
const NO_LIMIT_JIFFIES: u64 = 1 << 62;

/// `ceil(units * hz / per_second)`: the kernel's rounding of a time to jiffies.
fn to_jiffies(value: f64, per_second: f64, hz: u64) -> u64 {
    (value * hz as f64 / per_second).ceil().max(0.0) as u64
}

/// The kernel of `p` on a host of `cores` cores. The time slice is resolved (EEVDF's base
/// slice for the cores, unless given), so that the result says which was used.
///
/// The NAPIs' settings are resolved for each of the `queues` vectors; `irq_suspend` is the
/// device's `kernel.irq_suspend_timeout_ns` (a key of busy polling's).
pub fn configure(
    p: &mut Params,
    cores: usize,
    queues: usize,
    irq_suspend: SimDuration,
) -> Result<KernelConfig, Error> {
    let hz = p.u64(HZ);
    let min_budget_us = 2_000_000 / hz;
    let budget_us = match p.u64(NETDEV_BUDGET_USECS) {
        0 => min_budget_us,
        us if us < min_budget_us => {
            return Err(Error::Inconsistent {
                key: NETDEV_BUDGET_USECS.into(),
                value: us.to_string(),
                reason: format!(
                    "below the kernel's minimum of 2 jiffies ({min_budget_us} us at kernel.hz = {hz}); use 0 for the default"
                ),
            });
        }
        us => us,
    };
    let slice_us = match p.f64(SCHED_SLICE_US) {
        0.0 => {
            // EEVDF: sysctl_sched_base_slice = 0.75 ms x (1 + ilog2(min(cpus, 8)))
            let us = 750.0 * f64::from(1 + cores.min(8).ilog2());
            p.set(SCHED_SLICE_US, Value::Float(us));
            us
        }
        us => us,
    };
    // no time limit: a deadline no run reaches
    let limits = p.bool(SOFTIRQ_TIME_LIMIT);
    let jiffies = |value: f64, per_second: f64| {
        if limits {
            to_jiffies(value, per_second, hz)
        } else {
            NO_LIMIT_JIFFIES
        }
    };
    Ok(KernelConfig {
        napi_weight: p.u64(NAPI_WEIGHT),
        netdev_budget: p.u64(NETDEV_BUDGET) as i64,
        jiffy: SimDuration(PS_PER_S / hz),
        budget_jiffies: jiffies(budget_us as f64, 1e6),
        max_softirq_restart: p.u64(MAX_SOFTIRQ_RESTART),
        max_softirq_jiffies: jiffies(p.f64(MAX_SOFTIRQ_TIME_MS), 1e3),
        ksoftirqd_below_apps: KsoftirqdPolicy::of(p)? == KsoftirqdPolicy::BelowApps,
        poll_budget_left: NetRxAction::of(p)? == NetRxAction::V2_6_18,
        timer_tick: p.bool(TIMER_TICK),
        sched_slice: SimDuration::from_us(slice_us),
        threaded_napi: p.bool(THREADED_NAPI),
        napi_thread_core: napi_thread_core(p, cores)?,
        skb_defer_max: p.u64(SKB_DEFER_MAX),
        napi: napi_settings(p, cores, queues, irq_suspend)?,
    })
}

/// The `napi.N.*` field `field` of entry `i`.
fn napi_key(i: usize, field: &str) -> String {
    crate::schema::field_key(NAPI, i, field)
}

/// Each of the `queues` vectors' NAPI settings: `napi.N.*` where given (not -1, not
/// "device"), else the device-wide `kernel.*`. An entry past the last vector is refused,
/// naming its first field set; so is a NAPI thread's core that is not one of the host's
/// `cores`.
fn napi_settings(
    p: &Params,
    cores: usize,
    queues: usize,
    irq_suspend: SimDuration,
) -> Result<Vec<NapiSettings>, Error> {
    let device = NapiSettings {
        defer_hard_irqs: p.u64(NAPI_DEFER_HARD_IRQS),
        gro_flush_timeout: SimDuration::from_ns(p.f64(GRO_FLUSH_TIMEOUT_NS)),
        irq_suspend_timeout: irq_suspend,
        threaded: if p.bool(THREADED_NAPI) {
            Threaded::On
        } else {
            Threaded::Off
        },
        thread_core: napi_thread_core(p, cores)?,
        thread_fifo: ThreadPolicy::of(p)? == ThreadPolicy::Fifo,
    };
    let mut out = vec![device; queues];
    let device_value = Value::Int(NAPI_DEVICE);
    let time = |key: &str, dev: SimDuration| -> Result<SimDuration, Error> {
        match p.f64(key) {
            ns if ns == NAPI_DEVICE as f64 => Ok(dev),
            ns if ns < 0.0 => Err(Error::OutOfRange {
                key: key.to_string(),
                value: p.get(key).to_string(),
                allowed: "-1 (the device's value), or 0 and above".into(),
            }),
            ns => Ok(SimDuration::from_ns(ns)),
        }
    };
    let entries = p.entries(NAPI);
    if entries > queues {
        let i = queues;
        let given = |f: &&&str| {
            let v = p.get(&napi_key(i, f));
            *v != device_value
                && *v != Value::Float(NAPI_DEVICE as f64)
                && *v != Value::Str(NAPI_THREADED_DEVICE.into())
        };
        let field = NAPI_FIELDS.iter().find(given).unwrap_or(&NAPI_FIELDS[0]);
        return Err(p.inconsistent(
            &napi_key(i, field),
            format!(
                "there is no vector {i}: nic.queues = {queues} has vectors 0 … {}",
                queues - 1
            ),
        ));
    }
    for (i, n) in out.iter_mut().enumerate().take(entries) {
        n.threaded = match p.str(&napi_key(i, NAPI_THREADED)) {
            "on" => Threaded::On,
            "off" => Threaded::Off,
            NAPI_THREADED_BUSY_POLL => Threaded::BusyPoll,
            _ => n.threaded,
        };
        let core = napi_key(i, NAPI_THREAD_CORE_FIELD);
        if *p.get(&core) != device_value {
            let c = p.u64(&core) as usize;
            if c >= cores {
                return Err(p.inconsistent(
                    &core,
                    format!("host.cores = {cores} has cores 0 … {}", cores - 1),
                ));
            }
            n.thread_core = c;
        }
        match p.str(&napi_key(i, NAPI_THREAD_POLICY_FIELD)) {
            "fair" => n.thread_fifo = false,
            "fifo" => n.thread_fifo = true,
            _ => {}
        }
        let defer = napi_key(i, NAPI_DEFER);
        if *p.get(&defer) != device_value {
            n.defer_hard_irqs = p.u64(&defer);
        }
        n.gro_flush_timeout = time(&napi_key(i, NAPI_GRO_FLUSH), n.gro_flush_timeout)?;
        n.irq_suspend_timeout = time(&napi_key(i, NAPI_IRQ_SUSPEND), n.irq_suspend_timeout)?;
    }
    Ok(out)
}

/// A per-NAPI field left at this takes the device-wide value (`kernel.*`).
pub const NAPI_DEVICE: i128 = -1;
/// `napi.N.threaded` (and `napi.N.thread_policy`) left to the device (`kernel.threaded_napi`,
/// `kernel.napi_thread_policy`).
pub const NAPI_THREADED_DEVICE: &str = "device";
/// `napi.N.threaded` for threaded busy polling (netdev's `napi-threaded` `busy-poll`).
pub const NAPI_THREADED_BUSY_POLL: &str = "busy-poll";
/// The per-NAPI table (`[[napi]]`) and its fields.
pub const NAPI: &str = "napi";
const NAPI_DEFER: &str = "defer_hard_irqs";
const NAPI_GRO_FLUSH: &str = "gro_flush_timeout_ns";
const NAPI_IRQ_SUSPEND: &str = "irq_suspend_timeout_ns";
const NAPI_THREADED: &str = "threaded";
const NAPI_THREAD_CORE_FIELD: &str = "thread_core";
const NAPI_THREAD_POLICY_FIELD: &str = "thread_policy";
/// The fields of a NAPI entry, in the key table's order.
const NAPI_FIELDS: [&str; 6] = [
    NAPI_DEFER,
    NAPI_GRO_FLUSH,
    NAPI_IRQ_SUSPEND,
    NAPI_THREADED,
    NAPI_THREAD_CORE_FIELD,
    NAPI_THREAD_POLICY_FIELD,
];

/// `kernel.napi_thread_core`, which must be one of the host's cores.
fn napi_thread_core(p: &Params, cores: usize) -> Result<usize, Error> {
    let c = p.u64(NAPI_THREAD_CORE) as usize;
    if c >= cores {
        return Err(p.inconsistent(
            NAPI_THREAD_CORE,
            format!("host.cores = {cores} has cores 0 … {}", cores - 1),
        ));
    }
    Ok(c)
}

/// The key that turns threaded NAPI on: `kernel.threaded_napi` if the device's setting does,
/// else the first NAPI's own `napi.N.threaded` that does.
fn threaded_key(p: &Params, k: &KernelConfig) -> String {
    if p.bool(THREADED_NAPI) {
        return THREADED_NAPI.into();
    }
    let v = k
        .napi
        .iter()
        .position(|n| n.threaded != Threaded::Off)
        .unwrap_or(0);
    napi_key(v, NAPI_THREADED)
}

/// Threaded NAPI with what the model does not combine it with: Linux 2.6.18's
/// `net_rx_action` (threaded NAPI came with 5.12), Salah's polling loop, the ideal host, and
/// socket busy polling.
///
/// Threaded busy polling keeps its thread's core 100 % busy: a core that has to run one of
/// `threads` as well (each a core and what runs there: an app, its polling thread, the
/// sending thread) is refused, naming the
/// vector's `napi.N.thread_core`; so are two FIFO busy-polling threads on one core (the
/// second would never run: `SCHED_FIFO` threads of one priority take turns only when one
/// blocks, and a busy-polling thread never does).
pub fn check_threaded(
    p: &Params,
    k: &KernelConfig,
    in_loop: bool,
    ideal: bool,
    busy: bool,
    threads: &[(usize, String)],
) -> Result<(), Error> {
    if !k.any_threaded() {
        return Ok(());
    }
    let reason = if NetRxAction::of(p)? == NetRxAction::V2_6_18 {
        "Linux 2.6.18's net_rx_action (kernel.net_rx_action) has no threaded NAPI (Linux 5.12 added it); use kernel.net_rx_action = \"6.13\""
    } else if in_loop {
        "Salah's polling loop replaces the NAPI; use a NAPI scheme (napi, irq, coalesce-count, coalesce-time)"
    } else if ideal {
        "scheme \"ideal\" runs its softirq inline for free; use a NAPI scheme (napi, irq, coalesce-count, coalesce-time)"
    } else if busy {
        "socket busy polling with threaded NAPI is not modelled; turn one of them off"
    } else {
        return check_threaded_busy_poll(p, k, threads);
    };
    Err(p.inconsistent(&threaded_key(p, k), reason))
}

/// Threaded busy polling's cores (see [`check_threaded`]).
fn check_threaded_busy_poll(
    p: &Params,
    k: &KernelConfig,
    threads: &[(usize, String)],
) -> Result<(), Error> {
    let spinning = |v: usize| k.napi[v].threaded == Threaded::BusyPoll;
    for (v, n) in k.napi.iter().enumerate().filter(|&(v, _)| spinning(v)) {
        let c = n.thread_core;
        let other = if let Some((_, what)) = threads.iter().find(|(tc, _)| *tc == c) {
            Some(what.clone())
        } else {
            k.napi[..v]
                .iter()
                .position(|o| o.threaded == Threaded::BusyPoll && o.thread_core == c)
                .filter(|_| n.thread_fifo)
                .map(|o| {
                    format!("vector {o}'s busy-polling NAPI thread holds it, and a FIFO thread never gives way to one of its own priority")
                })
        };
        if let Some(other) = other {
            let key = if *p.get(&napi_key(v, NAPI_THREAD_CORE_FIELD)) == Value::Int(NAPI_DEVICE) {
                NAPI_THREAD_CORE.to_string()
            } else {
                napi_key(v, NAPI_THREAD_CORE_FIELD)
            };
            return Err(p.inconsistent(
                &key,
                format!(
                    "vector {v}'s NAPI thread busy-polls (napi.{v}.threaded = \"busy-poll\") and keeps core {c} 100 % busy, but {other}; give the NAPI thread a core of its own"
                ),
            ));
        }
    }
    Ok(())
}

/// Software IRQ coalescing is on: `napi_defer_hard_irqs` and `gro_flush_timeout` both set,
/// for the device or for a NAPI of its own (`napi.N.*`).
pub fn soft_coalescing(p: &Params) -> bool {
    soft_coalescing_key(p).is_some()
}

/// The key that turns software IRQ coalescing on: `kernel.napi_defer_hard_irqs` if the
/// device's settings do, else the first NAPI's own `napi.N.defer_hard_irqs` that does.
pub fn soft_coalescing_key(p: &Params) -> Option<String> {
    let defer = p.u64(NAPI_DEFER_HARD_IRQS);
    let gro = p.f64(GRO_FLUSH_TIMEOUT_NS);
    if defer > 0 && gro > 0.0 {
        return Some(NAPI_DEFER_HARD_IRQS.into());
    }
    (0..p.entries(NAPI)).find_map(|i| {
        let own = |field: &str, device: f64| match p.f64(&napi_key(i, field)) {
            x if x < 0.0 => device,
            x => x,
        };
        let on = own(NAPI_DEFER, defer as f64) > 0.0 && own(NAPI_GRO_FLUSH, gro) > 0.0;
        on.then(|| napi_key(i, NAPI_DEFER))
    })
}

/// The key of software IRQ coalescing that is missing (the first, if both are).
pub fn missing_soft_coalescing(p: &Params) -> &'static str {
    if p.u64(NAPI_DEFER_HARD_IRQS) == 0 {
        NAPI_DEFER_HARD_IRQS
    } else {
        GRO_FLUSH_TIMEOUT_NS
    }
}

/// The settings without effect among the kernel's: the NAPI thread's core without threaded
/// NAPI; deferred frees without their cost; one of the two keys of software IRQ coalescing
/// without the other; and the time limits the kernel counts in jiffies ([`jiffy_warnings`]).
///
/// Deferral without a flush timeout does nothing: `napi_complete_done` (net/core/dev.c)
/// counts `defer_hard_irqs_count` down and keeps the IRQ masked only `if (timeout)`, the
/// `gro_flush_timeout` that arms the NAPI timer to poll in the interrupt's place; with 0 it
/// returns true and the driver re-enables the IRQ as without deferral. The reverse,
/// `gro_flush_timeout` alone, only delays the flush of packets GRO holds, and no GRO is
/// modelled.
pub fn warnings(w: &mut Warnings) {
    // a NAPI of its own may be threaded (`napi.N.threaded`) with the device's core or policy
    let own_threaded = |i: usize| {
        let t = w.p.str(&napi_key(i, NAPI_THREADED));
        t == "on" || t == NAPI_THREADED_BUSY_POLL || (t != "off" && w.p.bool(THREADED_NAPI))
    };
    let on_device = |field: &str, device: &Value| {
        (0..w.p.entries(NAPI)).any(|i| own_threaded(i) && w.p.get(&napi_key(i, field)) == device)
    };
    let device_core = Value::Int(NAPI_DEVICE);
    let device_policy = Value::Str(NAPI_THREADED_DEVICE.into());
    let untouched = |i: usize| i >= w.p.entries(NAPI);
    let device_threads = |field: &str, device: &Value| {
        w.p.bool(THREADED_NAPI) && (0..w.p.u64(crate::nic::config::QUEUES) as usize).any(untouched)
            || on_device(field, device)
    };
    let core_used = device_threads(NAPI_THREAD_CORE_FIELD, &device_core);
    let policy_used = device_threads(NAPI_THREAD_POLICY_FIELD, &device_policy);
    let why = || {
        no_effect(
            "no NAPI thread takes the device's value: kernel.threaded_napi is false, and no napi.N.threaded of \"on\" or \"busy-poll\" leaves it to the device",
        )
    };
    w.rule(&[NAPI_THREAD_CORE], !core_used, why);
    w.rule(&[NAPI_THREAD_POLICY], !policy_used, why);
    for i in 0..w.p.entries(NAPI) {
        let (core, policy) = (
            napi_key(i, NAPI_THREAD_CORE_FIELD),
            napi_key(i, NAPI_THREAD_POLICY_FIELD),
        );
        if !own_threaded(i) {
            let why = format!("vector {i} has no NAPI thread (napi.{i}.threaded resolves to off)");
            if *w.p.get(&core) != device_core {
                w.entry_field(&core, no_effect(&why));
            }
            if *w.p.get(&policy) != device_policy {
                w.entry_field(&policy, no_effect(&why));
            }
        } else if w.p.str(&napi_key(i, NAPI_THREADED)) == NAPI_THREADED_BUSY_POLL {
            // `napi_complete_done` returns at once while `NAPI_STATE_IN_BUSY_POLL` is set
            let why = format!(
                "vector {i}'s NAPI thread busy-polls (napi.{i}.threaded = \"busy-poll\"): napi_complete_done returns before deferral or the timer (NAPI_STATE_IN_BUSY_POLL, net/core/dev.c)"
            );
            for f in [NAPI_DEFER, NAPI_GRO_FLUSH, NAPI_IRQ_SUSPEND] {
                let key = napi_key(i, f);
                let v = w.p.get(&key);
                if *v != device_core && *v != Value::Float(NAPI_DEVICE as f64) {
                    w.entry_field(&key, no_effect(&why));
                }
            }
        }
    }
    let frees = w.p.f64(crate::platform::SKB_FREE_NS) > 0.0;
    w.rule(&[SKB_DEFER_MAX], !frees, || {
        no_effect("skb frees are modelled only with platform.skb_free_ns > 0")
    });
    // a NAPI of its own may complete the pair (`napi.N.*`): then neither is without effect
    let soft = soft_coalescing(w.p);
    let defer = soft || w.p.u64(NAPI_DEFER_HARD_IRQS) > 0;
    let gro = soft || w.p.f64(GRO_FLUSH_TIMEOUT_NS) > 0.0;
    w.rule(&[NAPI_DEFER_HARD_IRQS], !gro, || {
        no_effect(
            "it needs kernel.gro_flush_timeout_ns > 0, the timer that polls instead of the interrupt",
        )
    });
    w.rule(&[GRO_FLUSH_TIMEOUT_NS], !defer, || {
        no_effect("it needs kernel.napi_defer_hard_irqs > 0 (no GRO is modelled)")
    });
    jiffy_warnings(w);
}

/// `x` us as a warning shows it: whole, or to a tenth.
fn micros(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A time limit the kernel counts in whole jiffies, given in a finer unit: it acts as the
/// whole number of jiffies it rounds up to, which the warning names (the model counts them
/// the same way, [`configure`]).
///
/// - `net_rx_action` (net/core/dev.c): `time_limit = jiffies +
///   usecs_to_jiffies(netdev_budget_usecs)`, and a pass stops once `time_after_eq(jiffies,
///   time_limit)`; `usecs_to_jiffies` (include/linux/jiffies.h) rounds up. So at HZ = 250 any
///   value from 4001 to 8000 us is 2 jiffies: the pass stops at the second tick after it
///   starts, 4 to 8 ms later.
/// - `handle_softirqs` (kernel/softirq.c): `end = jiffies + MAX_SOFTIRQ_TIME`, with
///   `MAX_SOFTIRQ_TIME = msecs_to_jiffies(2)`, rounded up the same way.
///
/// A value less than a microsecond (a millisecond's thousandth) short of its whole jiffies is
/// the value itself (HZ = 300's jiffy is 3333.3 us: 6666 us is its two jiffies). Without a
/// time limit (`kernel.softirq_time_limit = false`) there is nothing to round.
fn jiffy_warnings(w: &mut Warnings) {
    if !w.p.bool(SOFTIRQ_TIME_LIMIT) {
        return;
    }
    let hz = w.p.u64(HZ);
    // (key, its value in us, us per unit of the key, the kernel function that rounds it)
    let limits = [
        (
            NETDEV_BUDGET_USECS,
            w.p.u64(NETDEV_BUDGET_USECS) as f64,
            1.0,
            "net_rx_action's time limit, usecs_to_jiffies in net/core/dev.c",
        ),
        (
            MAX_SOFTIRQ_TIME_MS,
            w.p.f64(MAX_SOFTIRQ_TIME_MS) * 1e3,
            1e3,
            "handle_softirqs' MAX_SOFTIRQ_TIME, msecs_to_jiffies in kernel/softirq.c",
        ),
    ];
    for (key, us, unit_us, what) in limits {
        if us <= 0.0 {
            continue; // 0 is netdev_budget_usecs' default of 2 jiffies
        }
        let jiffies = to_jiffies(us, 1e6, hz);
        let whole_us = jiffies as f64 * 1e6 / hz as f64;
        let acts_as = (whole_us - us >= 1.0).then(|| {
            if unit_us == 1.0 {
                format!("{}", whole_us.floor())
            } else {
                fmt_float(whole_us / unit_us)
            }
        });
        let shown = acts_as.clone().unwrap_or_default();
        let unit = if unit_us == 1.0 { "us" } else { "ms" };
        w.acts_as(key, acts_as, || {
            let from = (jiffies - 1) as f64 * 1e6 / hz as f64;
            format!(
                "acts as {shown} {unit}: {jiffies} {} at kernel.hz = {hz} ({what}, counts whole jiffies, rounding up; the model does the same): the limit is reached {} to {} us after it starts, at a tick",
                if jiffies == 1 { "jiffy" } else { "jiffies" },
                micros(from),
                micros(whole_us),
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::test_support::*;
    use crate::scenario::*;
    use crate::schema::{Params, Value};
    use crate::time::SimDuration;

    #[test]
    fn default_scenario_builds_with_kernel_rounding() {
        let s = Scenario::build(Params::defaults()).unwrap();
        assert_eq!(s.scheme, Scheme::Napi);
        assert_eq!(s.kernel.jiffy, SimDuration(1_000_000_000));
        assert_eq!(s.kernel.budget_jiffies, 2);
        assert_eq!(s.kernel.max_softirq_jiffies, 2);
        assert_eq!(s.platform.irq.mean, SimDuration(3_730_000));
        assert_eq!(s.run.end.ps() - s.run.warmup.ps(), 100_000_000_000);
    }

    #[test]
    fn hz_250_rounds_up_like_the_kernel() {
        let s = Scenario::from_pairs([("kernel.hz", Value::Int(250))]).unwrap();
        assert_eq!(s.kernel.budget_jiffies, 2); // default: 2 jiffies = 8000 us
        assert_eq!(s.kernel.max_softirq_jiffies, 1); // 2 ms at 4 ms per jiffy, rounded up
        let e = Scenario::from_pairs([
            ("kernel.hz", Value::Int(250)),
            ("kernel.netdev_budget_usecs", Value::Int(2000)),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "kernel.netdev_budget_usecs");
        assert!(e.to_string().contains("8000 us"), "{e}");
    }

    #[test]
    fn netdev_budget_usecs_may_be_exactly_the_two_jiffy_minimum() {
        let budget = |hz: i128, us: i128| {
            build(&[
                ("kernel.hz", Value::Int(hz)),
                ("kernel.netdev_budget_usecs", Value::Int(us)),
            ])
        };
        assert_eq!(budget(1000, 2000).unwrap().kernel.budget_jiffies, 2);
        assert_eq!(budget(250, 8000).unwrap().kernel.budget_jiffies, 2);
        let e = budget(1000, 1999).unwrap_err();
        assert_eq!(e.key(), "kernel.netdev_budget_usecs");
        assert!(e.to_string().contains("2000 us"), "{e}");
    }

    #[test]
    fn the_default_time_slice_is_eevdf_s_base_slice_for_the_cores() {
        // 0.75 ms x (1 + ilog2(min(cores, 8))), resolved into the params
        for (cores, us) in [
            (1, 750.0),
            (2, 1500.0),
            (4, 2250.0),
            (8, 3000.0),
            (16, 3000.0),
        ] {
            let sc = build(&[("host.cores", Value::Int(cores))]).unwrap();
            assert_eq!(sc.kernel.sched_slice, SimDuration::from_us(us), "{cores}");
            assert_eq!(sc.params.f64("kernel.sched_slice_us"), us, "{cores}");
        }
        let sc = build(&[
            ("host.cores", Value::Int(4)),
            ("kernel.sched_slice_us", Value::Int(100)),
        ])
        .unwrap();
        assert_eq!(sc.kernel.sched_slice, SimDuration::from_us(100.0));
    }

    #[test]
    fn software_irq_coalescing_with_one_of_its_two_keys_is_a_warning_not_an_error() {
        let defer = ("kernel.napi_defer_hard_irqs", Value::Int(10));
        let gro = ("kernel.gro_flush_timeout_ns", Value::Int(20_000));
        // even on the ideal host: without the other key there is no timer interrupt
        for scheme in ["ideal", "napi"] {
            let sc = build(&[("scheme", s(scheme)), defer.clone()]).unwrap();
            let w: Vec<String> = sc.warnings.iter().map(|w| w.to_string()).collect();
            assert_eq!(
                w,
                [
                    "kernel.napi_defer_hard_irqs = 10: has no effect: it needs kernel.gro_flush_timeout_ns > 0, the timer that polls instead of the interrupt"
                ],
                "{scheme}"
            );
            assert_eq!(
                warned(&[("scheme", s(scheme)), gro.clone()]),
                ["kernel.gro_flush_timeout_ns"],
                "{scheme}"
            );
        }
        assert!(warned(&[defer, gro]).is_empty());
    }

    #[test]
    fn a_time_limit_between_ticks_acts_as_the_whole_jiffies_it_rounds_up_to() {
        // net_rx_action: time_limit = jiffies + usecs_to_jiffies(netdev_budget_usecs), which
        // rounds up (net/core/dev.c, include/linux/jiffies.h)
        let at = |hz: i128, key: &'static str, v: Value| {
            let sc = build(&[("kernel.hz", Value::Int(hz)), (key, v)]).unwrap();
            sc.warnings
        };
        let w = at(250, "kernel.netdev_budget_usecs", Value::Int(9000));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key, "kernel.netdev_budget_usecs");
        assert_eq!(w[0].acts_as.as_deref(), Some("12000"));
        assert_eq!(
            w[0].to_string(),
            "kernel.netdev_budget_usecs = 9000: acts as 12000 us: 3 jiffies at kernel.hz = 250 (net_rx_action's time limit, usecs_to_jiffies in net/core/dev.c, counts whole jiffies, rounding up; the model does the same): the limit is reached 8000 to 12000 us after it starts, at a tick"
        );
        // and the model runs it as those jiffies
        let sc = build(&[
            ("kernel.hz", Value::Int(250)),
            ("kernel.netdev_budget_usecs", Value::Int(9000)),
        ])
        .unwrap();
        assert_eq!(sc.kernel.budget_jiffies, 3);
        let w = at(1000, "kernel.netdev_budget_usecs", Value::Int(2500));
        assert_eq!(w[0].acts_as.as_deref(), Some("3000"));
        assert_eq!(
            at(300, "kernel.netdev_budget_usecs", Value::Int(7000))[0]
                .acts_as
                .as_deref(),
            Some("10000")
        );
        // a whole number of jiffies, or within a microsecond of it, is what it says
        for (hz, us) in [
            (250, 8000),
            (250, 12000),
            (1000, 2000),
            (1000, 4000),
            (300, 6666),
        ] {
            assert!(
                at(hz, "kernel.netdev_budget_usecs", Value::Int(us)).is_empty(),
                "{hz} {us}"
            );
        }
        // handle_softirqs: end = jiffies + MAX_SOFTIRQ_TIME (kernel/softirq.c)
        let w = at(250, "kernel.max_softirq_time_ms", Value::Float(3.0));
        assert_eq!(w[0].acts_as.as_deref(), Some("4.0"));
        assert!(w[0].reason.contains("kernel/softirq.c"), "{w:?}");
        assert!(at(1000, "kernel.max_softirq_time_ms", Value::Float(3.0)).is_empty());
        // the default 2 ms at HZ 250 rounds too, but a key at its default is never reported
        assert!(at(250, "kernel.max_softirq_time_ms", Value::Float(2.0)).is_empty());
        // without a time limit there is nothing to round
        let sc = build(&[
            ("kernel.hz", Value::Int(250)),
            ("kernel.netdev_budget_usecs", Value::Int(9000)),
            ("kernel.softirq_time_limit", Value::Bool(false)),
        ])
        .unwrap();
        assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
        // a scheme without the kernel's softirq says so instead, once
        let w = build(&[
            ("scheme", s("poll")),
            ("kernel.hz", Value::Int(250)),
            ("kernel.netdev_budget_usecs", Value::Int(9000)),
        ])
        .unwrap()
        .warnings;
        let w: Vec<_> = w
            .iter()
            .filter(|w| w.key == "kernel.netdev_budget_usecs")
            .collect();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].acts_as.is_none() && w[0].reason.contains("polling loop"),
            "{w:?}"
        );
    }

    #[test]
    fn threaded_napi_is_refused_where_the_model_does_not_combine_it() {
        let t = ("kernel.threaded_napi", Value::Bool(true));
        for (other, why) in [
            (("scheme", s("ideal")), "ideal"),
            (("scheme", s("poll")), "polling loop"),
            (("kernel.net_rx_action", s("2.6.18")), "5.12"),
            (("socket.busy_read_us", Value::Int(50)), "busy polling"),
        ] {
            let e = rejected(&[t.clone(), ("app.0.core", Value::Int(0)), other]);
            assert_eq!(e.key(), "kernel.threaded_napi");
            assert!(e.to_string().contains(why), "{e}");
        }
        let e = rejected(&[t.clone(), ("kernel.napi_thread_core", Value::Int(1))]);
        assert_eq!(e.key(), "kernel.napi_thread_core");
        let sc = build(&[
            t,
            ("host.cores", Value::Int(2)),
            ("kernel.napi_thread_core", Value::Int(1)),
        ])
        .unwrap();
        assert!(sc.kernel.threaded_napi);
        assert_eq!(sc.kernel.napi_thread_core, 1);
        assert!(sc.warnings.is_empty());
    }
}
