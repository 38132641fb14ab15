//! Scenario building and the tracer the tests share.

use irqlab_core::Report;

pub use crate::common::{Pairs, US, f, i, list, s};

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
