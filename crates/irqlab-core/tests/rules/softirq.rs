//! `handle_softirqs` on a host: when it restarts and when it hands over to ksoftirqd.

use irqlab_core::Report;

use crate::common::{conserved, exact, f, i};

/// Overload (2 Mpps against 1 µs per packet) with HZ 1000 and a restart window of one jiffy
/// (`max_softirq_time_ms` = 1), restarts otherwise unbounded; the first `ms` of the run.
fn overload_for(ms: f64) -> Report {
    exact("napi")
        .rate_pps(2e6)
        .proto_ns(1000.0)
        .with("kernel.hz", i(1000))
        .with("kernel.max_softirq_time_ms", f(1.0))
        .with("kernel.max_softirq_restart", i(1000))
        .with("kernel.netdev_budget", i(300))
        .duration_ms(ms)
        .run()
}

#[test]
fn handle_softirqs_restarts_only_while_jiffies_is_before_its_deadline() {
    // The first handle_softirqs starts in jiffy 0, so its deadline is jiffy 1
    // (`time_before(jiffies, end)`): its passes of about 300 µs restart while they end in jiffy
    // 0, and the first one that ends in jiffy 1 (about 1.2 ms) wakes ksoftirqd.
    let before = overload_for(1.0);
    conserved(&before);
    assert_eq!(before.cpu_ps.ksoftirqd, 0, "{:?}", before.cpu_ps);
    assert!(
        before.cpu_ps.softirq > 900 * 1_000_000,
        "{:?}",
        before.cpu_ps
    );
    let after = overload_for(1.5);
    conserved(&after);
    assert!(after.cpu_ps.ksoftirqd > 0, "{:?}", after.cpu_ps);
}
