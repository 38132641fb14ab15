//! Integration tests of per-NAPI settings (`napi.N.*`): each overrides the device-wide
//! `kernel.*` value for vector N alone, as `/sys/class/net/<dev>/napi/<id>/...` or netdev's
//! `napi-set` does for one NAPI.

use irqlab_core::Report;

use crate::common::{Pairs, exact, f, i, list, s};

/// Two cores, a vector on each, the same load on both; no deferral anywhere.
fn two_vectors() -> Pairs {
    exact("napi")
        .cores(2)
        .with("nic.queues", i(2))
        .with("nic.irq_affinity", list(&[0, 1]))
        .with("traffic.flows", i(64))
        .rate_pps(2e5)
        .proto_ns(1000.0)
        .irq_ns(2000.0)
        .with("platform.poll_timer_ns", f(500.0))
        .duration_ms(10.0)
}

/// Deferral for the device: 2 empty polls, a 20 µs timer.
fn device_defers(p: Pairs) -> Pairs {
    p.with("kernel.napi_defer_hard_irqs", i(2))
        .with("kernel.gro_flush_timeout_ns", f(20_000.0))
}

/// Vector 1 alone defers (vector 0 keeps the device's settings, -1).
fn vector_1_defers(p: Pairs) -> Pairs {
    p.with("napi.0.defer_hard_irqs", i(-1))
        .with("napi.1.defer_hard_irqs", i(2))
        .with("napi.1.gro_flush_timeout_ns", f(20_000.0))
}

fn defers(r: &Report, v: usize) -> bool {
    r.per_queue[v].counts.timer_ticks > 0
}

#[test]
fn a_per_napi_value_overrides_the_device_value_for_that_vector_only() {
    let base = two_vectors().run();
    assert!(!defers(&base, 0) && !defers(&base, 1));
    let r = vector_1_defers(two_vectors()).run();
    // vector 1 polls from its timer and takes far fewer interrupts
    assert!(defers(&r, 1), "{:?}", r.per_queue[1].counts);
    assert!(
        r.per_queue[1].irq_per_s < base.per_queue[1].irq_per_s / 10.0,
        "{} vs {} IRQ/s",
        r.per_queue[1].irq_per_s,
        base.per_queue[1].irq_per_s
    );
    // vector 0 runs exactly as without the table
    assert_eq!(r.per_queue[0], base.per_queue[0]);
    assert_eq!(r.per_core[0], base.per_core[0]);
    // the same per-vector values given device-wide defer both vectors, vector 1 alike
    let both = device_defers(two_vectors()).run();
    assert!(defers(&both, 0) && defers(&both, 1));
    assert_eq!(both.per_queue[1], r.per_queue[1]);
}

#[test]
fn a_per_napi_zero_turns_the_device_value_off_for_that_vector() {
    let device = device_defers(two_vectors()).run();
    let off = device_defers(two_vectors())
        .with("napi.0.gro_flush_timeout_ns", f(-1.0))
        .with("napi.1.defer_hard_irqs", i(0))
        .run();
    let none = two_vectors().run();
    assert!(defers(&off, 0) && !defers(&off, 1));
    assert_eq!(off.per_queue[0], device.per_queue[0]);
    assert_eq!(off.per_queue[1], none.per_queue[1]);
}

#[test]
fn a_bare_entry_keeps_every_device_value() {
    let device = device_defers(two_vectors()).run();
    let mut r = device_defers(two_vectors())
        .with("napi.0.threaded", s("device"))
        .with("napi.1.irq_suspend_timeout_ns", f(-1.0))
        .run();
    r.scenario.clone_from(&device.scenario);
    assert_eq!(r, device);
}

#[test]
fn a_napi_entry_past_the_last_vector_is_refused_naming_its_key() {
    let e = two_vectors()
        .with("napi.0.defer_hard_irqs", i(-1))
        .with("napi.1.defer_hard_irqs", i(-1))
        .with("napi.2.gro_flush_timeout_ns", f(20_000.0))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.2.gro_flush_timeout_ns");
    assert_eq!(
        e.to_string(),
        "napi.2.gro_flush_timeout_ns = 20000.0: there is no vector 2: nic.queues = 2 has vectors 0 … 1"
    );
    // an entry of nothing but device values names its first field
    let e = exact("napi")
        .with("napi.0.defer_hard_irqs", i(-1))
        .with("napi.1.defer_hard_irqs", i(-1))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.1.defer_hard_irqs");
    assert!(
        e.to_string().contains("nic.queues = 1 has vectors 0 … 0"),
        "{e}"
    );
    assert!(!e.to_string().contains('\n'));
}

#[test]
fn out_of_range_and_unmodelled_per_napi_values_are_refused() {
    let e = exact("napi")
        .with("napi.0.gro_flush_timeout_ns", f(-0.5))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.0.gro_flush_timeout_ns");
    let e = exact("napi")
        .with("napi.0.defer_hard_irqs", i(-2))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.0.defer_hard_irqs");
    // a NAPI thread's core must be one of the host's
    let e = exact("napi")
        .with("napi.0.threaded", s("on"))
        .with("napi.0.thread_core", i(3))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.0.thread_core");
    assert!(
        e.to_string().contains("host.cores = 1 has cores 0 … 0"),
        "{e}"
    );
    assert!(!e.to_string().contains('\n'));
    // the device's own value, repeated, is accepted
    exact("napi").with("napi.0.threaded", s("off")).build();
}

#[test]
fn per_napi_deferral_is_refused_where_device_deferral_is() {
    let e = vector_1_defers(exact("ideal").with("nic.queues", i(2)))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.1.defer_hard_irqs");
    let e = exact("napi")
        .with("nic.device", s("veth"))
        .with("napi.0.defer_hard_irqs", i(2))
        .with("napi.0.gro_flush_timeout_ns", f(20_000.0))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.0.defer_hard_irqs");
}

#[test]
fn a_device_value_completed_by_a_napi_of_its_own_is_not_warned_about() {
    let p = two_vectors()
        .with("kernel.napi_defer_hard_irqs", i(2))
        .with("napi.0.gro_flush_timeout_ns", f(20_000.0));
    let w = p.warnings();
    assert!(
        !w.iter()
            .any(|w| w.starts_with("kernel.napi_defer_hard_irqs")),
        "{w:?}"
    );
    let r = p.run();
    assert!(defers(&r, 0) && !defers(&r, 1));
    // alone it still has no effect, and is warned about
    let w = two_vectors()
        .with("kernel.napi_defer_hard_irqs", i(2))
        .warnings();
    assert!(
        w.iter()
            .any(|w| w.starts_with("kernel.napi_defer_hard_irqs")),
        "{w:?}"
    );
}
