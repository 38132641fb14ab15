//! # irqlab-core
//!
//! The engine and host model of irqlab, a laboratory for the host receive path: how packets
//! arriving at a NIC become CPU work (interrupts, moderation, NAPI polling, softirqs,
//! ksoftirqd) and what latency, CPU load, IRQ rate, throughput and loss that gives.
//!
//! One call is one run: a [`Scenario`] and its seed in, a [`Report`] out. Runs are pure and
//! deterministic: the same scenario gives a bit-identical report on any machine. A run can be
//! stopped before its end ([`run_interruptible`]); one that is not stopped gives the same
//! report as [`run`].
//!
//! ```
//! use irqlab_core::{Scenario, Value, run};
//!
//! let scenario = Scenario::from_pairs([
//!     ("scheme", Value::Str("napi".into())),
//!     ("traffic.rate_pps", Value::Float(50_000.0)),
//!     ("run.duration_ms", Value::Float(20.0)),
//! ])?;
//! let report = run(&scenario);
//! let p = &report.packets;
//! assert_eq!(
//!     p.offered + p.in_flight_at_warmup,
//!     p.delivered + p.dropped_nic + p.dropped_socket + p.dropped_tx + p.in_flight
//! );
//! # Ok::<(), irqlab_core::Error>(())
//! ```
//!
//! Modules mirror the parts of the real system: [`traffic`], [`nic`] (rings, interrupt logic,
//! Tx, RSS), [`cpu`], [`kernel`] (softirq, NAPI), [`sched`] (the thread level), [`socket`]
//! (and the apps), [`moderation`] (the drivers' policies), [`adapt`] (receive-load
//! controllers), [`busypoll`], [`xsk`] (AF_XDP apps), [`polling`] (Salah's polling loop), [`qos`] (ingress QoS: ring
//! disciplines), [`platform`] (the costs), [`topology`] (what runs where) and [`metrics`];
//! `host` puts them together as the model the engine runs.
//!
//! Each part owns its configuration: its config type, `configure` and `warnings`, in the part
//! (a `config.rs` in its folder, or its file), reading its own keys. [`params`] is the key
//! table (data), written in the types of [`schema`] (the validated values, [`Params`]);
//! [`scheme`] is the scheme, a preset of the parts; [`scenario`] calls the parts in order and
//! assembles the [`Scenario`]; [`warnings`] collects the settings without effect. `engine`,
//! `queue`, [`time`] and [`rng`] are the simulation machinery; [`trace`] observes a run.

pub mod adapt;
pub mod busypoll;
pub mod cpu;
mod dist;
mod engine;
pub mod error;
mod host;
pub mod kernel;
pub mod metrics;
pub mod moderation;
pub mod nic;
pub mod params;
pub mod platform;
pub mod polling;
pub mod qos;
mod queue;
pub mod rng;
mod run;
pub mod scenario;
pub mod sched;
pub mod schema;
pub mod scheme;
pub mod sender;
pub mod socket;
pub mod time;
pub mod topology;
pub mod trace;
pub mod traffic;
pub mod warnings;
pub mod xsk;

pub use engine::Interrupted;
pub use error::Error;
pub use metrics::Report;
pub use params::{PARAMS, ParamSpec, Params, Value};
pub use scenario::{Scenario, Scheme};
pub use trace::{NoTrace, PacketTrace, Series, Tracer};

/// Runs one scenario to its end.
///
/// A host whose cores do not interact (each core's apps read only flows steered to its own
/// vectors, no forwarding) is run core by core, which is faster and gives the same report as
/// [`run_with`] (see `host::partition`).
pub fn run(scenario: &Scenario) -> Report {
    match run_interruptible(scenario, &mut || false) {
        Ok(report) => report,
        Err(_) => unreachable!("a run told never to stop was interrupted"),
    }
}

/// Runs one scenario to its end, or until `stop` returns true: then it returns
/// [`Interrupted`] and no report.
///
/// `stop` is asked before every millisecond of simulated time and after at most 65,536 timer
/// events, which is at most a fraction of a second of wall time apart (on a core-by-core run,
/// once per core and window too). Asking costs nothing on the hot path, and a run that is not
/// stopped gives the same report as [`run`], bit for bit. `stop` may look at a flag another
/// thread sets, a deadline, or pending signals.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use irqlab_core::{Scenario, Value, run_interruptible};
///
/// // an hour of 10 Mpps: minutes of wall time
/// let scenario = Scenario::from_pairs([
///     ("traffic.rate_pps", Value::Float(1e7)),
///     ("run.duration_ms", Value::Float(3.6e6)),
/// ])?;
/// let stop = AtomicBool::new(false);
/// std::thread::scope(|s| {
///     let run = s.spawn(|| run_interruptible(&scenario, &mut || stop.load(Ordering::Relaxed)));
///     stop.store(true, Ordering::Relaxed); // on Ctrl-C, say
///     let stopped = run.join().unwrap().unwrap_err();
///     assert!(stopped.at < scenario.run.end);
/// });
/// # Ok::<(), irqlab_core::Error>(())
/// ```
pub fn run_interruptible(
    scenario: &Scenario,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Report, Interrupted> {
    if runs_core_by_core(scenario) {
        host::partition::run(scenario, stop)
    } else {
        run_with_interruptible(scenario, NoTrace, stop).map(|(report, _)| report)
    }
}

/// Runs one scenario and records every packet's arrival and completion.
pub fn run_traced(scenario: &Scenario) -> (Report, PacketTrace) {
    run_with(scenario, PacketTrace::default())
}

/// Runs one scenario and records it as a time series of `buckets` equal buckets over the
/// whole run (warm-up included), for warm-up detection.
pub fn run_series(scenario: &Scenario, buckets: usize) -> (Report, Series) {
    let series = Series::new(scenario.run.end, buckets);
    run_with(scenario, series)
}

/// Whether [`run`] runs `scenario` core by core: several cores, each with a vector, no app
/// reading a flow steered to another core, no forwarding. The report is the same either way.
pub fn runs_core_by_core(scenario: &Scenario) -> bool {
    host::partition::applies(scenario)
}

/// Runs one scenario with any tracer, its cores' events interleaved in time order.
pub fn run_with<T: Tracer>(scenario: &Scenario, tracer: T) -> (Report, T) {
    match run_with_interruptible(scenario, tracer, &mut || false) {
        Ok(out) => out,
        Err(_) => unreachable!("a run told never to stop was interrupted"),
    }
}

/// [`run_with`], stopped when `stop` returns true (see [`run_interruptible`]).
///
/// ```
/// use std::time::{Duration, Instant};
/// use irqlab_core::{NoTrace, Scenario, Value, run_with_interruptible};
///
/// // an hour of traffic, given a tenth of a second of wall time
/// let scenario = Scenario::from_pairs([("run.duration_ms", Value::Float(3.6e6))])?;
/// let deadline = Instant::now() + Duration::from_millis(100);
/// let out = run_with_interruptible(&scenario, NoTrace, &mut || Instant::now() > deadline);
/// assert!(out.is_err());
/// # Ok::<(), irqlab_core::Error>(())
/// ```
pub fn run_with_interruptible<T: Tracer>(
    scenario: &Scenario,
    tracer: T,
    stop: &mut dyn FnMut() -> bool,
) -> Result<(Report, T), Interrupted> {
    if scenario.host.cores == 1 && scenario.nic.queues == 1 {
        host::Host::<T, host::One, _>::new(scenario, tracer).run(stop)
    } else {
        host::Host::<T, host::Many, _>::new(scenario, tracer).run(stop)
    }
}

/// Builds and runs a scenario given as `(dotted key, value)` pairs.
pub fn run_pairs<K: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, Value)>,
) -> Result<Report, Error> {
    Ok(run(&Scenario::from_pairs(pairs)?))
}
