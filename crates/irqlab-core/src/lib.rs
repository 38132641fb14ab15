//! # irqlab-core
//!
//! The engine and host model of irqlab, a laboratory for the host receive path: how packets
//! arriving at a NIC become CPU work (interrupts, moderation, NAPI polling, softirqs,
//! ksoftirqd) and what latency, CPU load, IRQ rate, throughput and loss that gives.
//!
//! One call is one run: a [`Scenario`] and its seed in, a [`Report`] out. Runs are pure and
//! deterministic: the same scenario gives a bit-identical report on any machine.
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
//! Tx, RSS), [`cpu`], [`kernel`] (softirq, NAPI), [`sched`] (the thread level), [`socket`],
//! [`moderation`] (the drivers' policies), [`topology`] (what runs where) and [`metrics`];
//! `host` puts them together as the model the engine runs. [`params`] and [`scenario`] hold
//! the validated configuration; `engine`, `queue`, [`time`] and [`rng`] are the simulation
//! machinery; [`trace`] observes a run.

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
mod queue;
pub mod rng;
pub mod scenario;
pub mod sched;
pub mod socket;
pub mod time;
pub mod topology;
pub mod trace;
pub mod traffic;

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
    if runs_core_by_core(scenario) {
        host::partition::run(scenario)
    } else {
        run_with(scenario, NoTrace).0
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
    if scenario.host.cores == 1 && scenario.nic.queues == 1 {
        host::Host::<T, host::One, _>::new(scenario, tracer).run()
    } else {
        host::Host::<T, host::Many, _>::new(scenario, tracer).run()
    }
}

/// Builds and runs a scenario given as `(dotted key, value)` pairs.
pub fn run_pairs<K: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, Value)>,
) -> Result<Report, Error> {
    Ok(run(&Scenario::from_pairs(pairs)?))
}
