//! What every test module builds scenarios with (values, and scenario pairs), and the
//! conservation laws every report keeps.

use irqlab_core::time::SimTime;
use irqlab_core::{Report, Scenario, Value, run};

/// Picoseconds per microsecond.
pub const US: u64 = 1_000_000;

pub fn f(x: f64) -> Value {
    Value::Float(x)
}
pub fn i(x: i128) -> Value {
    Value::Int(x)
}
pub fn s(x: &str) -> Value {
    Value::Str(x.to_string())
}
pub fn b(x: bool) -> Value {
    Value::Bool(x)
}
pub fn list(xs: &[i128]) -> Value {
    Value::List(xs.iter().map(|&x| Value::Int(x)).collect())
}

/// `scheme` with CBR arrivals, deterministic costs and no warm-up.
pub fn exact(scheme: &str) -> Pairs {
    Pairs::default()
        .with("scheme", s(scheme))
        .with("traffic.kind", s("cbr"))
        .with("run.warmup_ms", f(0.0))
        .with("platform.irq_dist", s("deterministic"))
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.poll_timer_dist", s("deterministic"))
}

/// The veth lab's topology (`examples/veth_lab.toml`): two cores, a veth device fed by paced
/// 64 B packets, the sending thread on core 0 (`send_ns` a packet), one app on core 1
/// (`app_ns` a packet, deterministic), 1 ms of warm-up. Each test adds its costs and window.
pub fn veth_lab(send_ns: f64, app_ns: f64) -> Pairs {
    Pairs::default()
        .with("host.cores", i(2))
        .with("nic.device", s("veth"))
        .with("traffic.kind", s("cbr"))
        .with("traffic.size_bytes", i(64))
        .with("run.warmup_ms", f(1.0))
        .with("sender.core", i(0))
        .with("sender.cost_ns", f(send_ns))
        .with("app.0.core", i(1))
        .with("app.0.cost_ns", f(app_ns))
        .with("app.0.cost_dist", s("deterministic"))
}

/// Scenario pairs; a key given again overrides the earlier value.
#[derive(Clone, Debug, Default)]
pub struct Pairs(Vec<(String, Value)>);

impl Pairs {
    pub fn with(mut self, key: &str, value: Value) -> Pairs {
        self.0.push((key.to_string(), value));
        self
    }
    /// Every pair of `other` on top of these.
    pub fn and(mut self, other: &Pairs) -> Pairs {
        self.0.extend(other.0.iter().cloned());
        self
    }
    /// Without `key` (as if never given).
    pub fn without(mut self, key: &str) -> Pairs {
        self.0.retain(|(k, _)| k != key);
        self
    }
    /// `traffic.rate_pps`, the offered rate.
    pub fn rate_pps(self, pps: f64) -> Pairs {
        self.with("traffic.rate_pps", f(pps))
    }
    /// `run.duration_ms`, the measured window.
    pub fn duration_ms(self, ms: f64) -> Pairs {
        self.with("run.duration_ms", f(ms))
    }
    /// `platform.irq_ns`, an interrupt's cost.
    pub fn irq_ns(self, ns: f64) -> Pairs {
        self.with("platform.irq_ns", f(ns))
    }
    /// `platform.proto_ns`, a packet's protocol processing.
    pub fn proto_ns(self, ns: f64) -> Pairs {
        self.with("platform.proto_ns", f(ns))
    }
    /// `n` cores with a queue vector each (`host.cores`, `nic.queues`).
    pub fn cores(self, n: i128) -> Pairs {
        self.with("host.cores", i(n)).with("nic.queues", i(n))
    }
    pub fn try_build(&self) -> Result<Scenario, irqlab_core::Error> {
        Scenario::from_pairs(self.0.iter().cloned())
    }
    pub fn build(&self) -> Scenario {
        self.try_build()
            .unwrap_or_else(|e| panic!("a valid scenario, got: {e}"))
    }
    pub fn run(&self) -> Report {
        run(&self.build())
    }
    /// The keys the scenario warns about, with their messages.
    pub fn warnings(&self) -> Vec<String> {
        self.build()
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect()
    }
}

/// Every packet offered is delivered, dropped or still in the receive path; every picosecond
/// of the window is accounted once, on the host and on each of its cores.
pub fn conserved(r: &Report) {
    let p = &r.packets;
    assert_eq!(
        p.offered + p.in_flight_at_warmup,
        p.delivered + p.dropped_nic + p.dropped_socket + p.dropped_tx + p.in_flight,
        "packets conserved: {p:?}"
    );
    let cores = r
        .per_core
        .iter()
        .map(|k| (format!("core {}", k.core), &k.cpu_ps));
    for (what, c) in std::iter::once(("the host".to_string(), &r.cpu_ps)).chain(cores) {
        assert_eq!(
            c.irq
                + c.softirq
                + c.ksoftirqd
                + c.app
                + c.busy_poll
                + c.idle
                + c.napi_thread.unwrap_or(0)
                + c.sender.unwrap_or(0),
            c.measured,
            "CPU time conserved on {what}: {c:?}"
        );
    }
}

/// Holds `check` on random scenarios drawn from `scenarios`: `cases` of them, or as many as the
/// environment variable `env` asks for; a failure panics with the minimal failing scenario.
pub fn for_random(
    env: &str,
    cases: u32,
    scenarios: impl proptest::strategy::Strategy<Value = Pairs>,
    check: impl Fn(Pairs) -> Result<(), proptest::test_runner::TestCaseError>,
) {
    use proptest::test_runner::{Config, TestError, TestRunner};
    let config = Config {
        cases: std::env::var(env)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..Config::default()
    };
    match TestRunner::new(config).run(&scenarios, check) {
        Ok(()) => {}
        Err(TestError::Fail(why, pairs)) => {
            panic!("{why}\nminimal failing scenario: {pairs:#?}")
        }
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
    }
}

/// A tracer's record of arrival `id` at `t` in `arrival_ps`: arrivals are numbered in order.
pub fn record_arrival(arrival_ps: &mut Vec<u64>, id: u64, t: SimTime) {
    assert_eq!(id as usize, arrival_ps.len(), "ids are sequence numbers");
    arrival_ps.push(t.ps());
}
