//! Scenario building and the tracer the tests share.

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
pub fn list(xs: &[i128]) -> Value {
    Value::List(xs.iter().map(|&x| Value::Int(x)).collect())
}

/// Scenario pairs; a key given again overrides the earlier value.
#[derive(Clone, Debug, Default)]
pub struct Pairs(Vec<(String, Value)>);

impl Pairs {
    pub fn with(mut self, key: &str, value: Value) -> Pairs {
        self.0.push((key.to_string(), value));
        self
    }
    pub fn build(&self) -> Scenario {
        Scenario::from_pairs(self.0.iter().cloned())
            .unwrap_or_else(|e| panic!("a valid scenario, got: {e}"))
    }
    pub fn run(&self) -> Report {
        run(&self.build())
    }
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

/// Every packet offered is delivered, dropped or still in the host; every picosecond of the
/// window is accounted once.
pub fn conserved(r: &Report) {
    let p = &r.packets;
    assert_eq!(
        p.offered + p.in_flight_at_warmup,
        p.delivered + p.dropped_nic + p.dropped_socket + p.dropped_tx + p.in_flight,
        "packets conserved: {p:?}"
    );
    let c = &r.cpu_ps;
    assert_eq!(
        c.irq + c.softirq + c.ksoftirqd + c.app + c.idle,
        c.measured,
        "CPU time conserved: {c:?}"
    );
}
