//! NAPI on a host: software IRQ coalescing (deferral), and what the measured window holds.

use crate::common::{conserved, exact, f, i, s};

#[test]
fn deferral_polls_n_times_from_the_timer_then_re_enables_the_vector() {
    // napi_defer_hard_irqs = 3, gro_flush_timeout = 10 µs, one packet per 100 µs: the poll
    // that found the packet reloads the counter to 3; each empty completion while it is above
    // zero decrements it and arms the timer; the fourth completion re-enables the vector.
    // Per packet: 1 IRQ, 3 timer interrupts, 4 polls.
    let defer = |n: i128| {
        exact("napi")
            .rate_pps(1e4)
            .proto_ns(1000.0)
            .irq_ns(2000.0)
            .with("platform.poll_timer_ns", f(500.0))
            .with("nic.cause_mode", s("armed"))
            .with("kernel.napi_defer_hard_irqs", i(n))
            .with("kernel.gro_flush_timeout_ns", f(10_000.0))
            .duration_ms(10.0)
            .run()
    };
    let r = defer(3);
    conserved(&r);
    let c = &r.counts;
    assert_eq!(c.irqs, r.packets.offered);
    assert_eq!(c.timer_ticks, 3 * c.irqs, "{c:?}");
    assert_eq!(c.polls, 4 * c.irqs, "{c:?}");
    assert_eq!(r.cpu_ps.irq, c.irqs * 2_000_000 + c.timer_ticks * 500_000);
    let r = defer(1);
    assert_eq!(r.counts.timer_ticks, r.counts.irqs);
    assert_eq!(r.counts.polls, 2 * r.counts.irqs);
    // no deferral: every completion re-enables at once
    let r = defer(0);
    assert_eq!((r.counts.timer_ticks, r.counts.polls), (0, r.counts.irqs));
}

#[test]
fn a_steady_stream_keeps_a_deferring_napi_on_the_timer() {
    // 200 kpps (5 µs apart) with a 20 µs timer: every timer poll finds packets and reloads
    // the counter, so after the first interrupt the vector is never re-enabled.
    let r = exact("napi")
        .rate_pps(2e5)
        .proto_ns(1000.0)
        .with("platform.poll_timer_ns", f(500.0))
        .with("kernel.napi_defer_hard_irqs", i(2))
        .with("kernel.gro_flush_timeout_ns", f(20_000.0))
        .duration_ms(10.0)
        .run();
    conserved(&r);
    assert_eq!(r.counts.irqs, 1);
    // a timer poll per 20 µs plus the poll's own time (its interrupt and 4 packets)
    let ticks = r.counts.timer_ticks;
    assert!((10_000 / 26..10_000 / 20).contains(&ticks), "{ticks} ticks");
}

#[test]
fn the_measured_window_holds_only_what_happens_after_the_warm_up() {
    // CBR at 10 kpps, a 1 µs packet and a 2 µs interrupt each: 100 packets per 10 ms, each
    // its own interrupt and poll, whether 0 or 5 ms of warm-up came first.
    let run = |warmup_ms: f64| {
        exact("napi")
            .rate_pps(1e4)
            .proto_ns(1000.0)
            .irq_ns(2000.0)
            .with("run.warmup_ms", f(warmup_ms))
            .duration_ms(10.0)
            .run()
    };
    let cold = run(0.0);
    let warm = run(5.0);
    for r in [&cold, &warm] {
        conserved(r);
        assert_eq!(r.cpu_ps.measured, 10_000_000_000);
        assert_eq!(r.packets.offered, 100);
        assert_eq!(r.counts.irqs, 100);
        assert_eq!(r.counts.polls, 100);
        assert_eq!(r.cpu_ps.irq, 100 * 2_000_000);
        assert_eq!(r.cpu_ps.softirq, 100 * 1_000_000);
        assert_eq!(r.latency_us.mean, Some(3.0));
    }
    assert_eq!(warm.packets.in_flight_at_warmup, 0);
    // a warm-up that ends 1.5 µs after an arrival (they come at multiples of 100 µs), inside
    // its busy period, carries that packet into the window
    let mid = run(5.0015);
    conserved(&mid);
    assert_eq!(mid.packets.in_flight_at_warmup, 1);
    assert_eq!(mid.packets.offered, 100);
}

#[test]
fn a_latched_cause_interrupts_on_unmasking_for_packets_the_poll_already_took() {
    // Intel's EICR is latched: a packet that arrives while the vector is masked sets the
    // cause, and re-enabling fires at once even though the poll took that packet: an empty
    // (spurious) poll. Armed, re-enabling discards what the poll handled.
    let run = |mode: &str| {
        exact("napi")
            .with("traffic.kind", s("poisson"))
            .rate_pps(2e5)
            .proto_ns(1000.0)
            .irq_ns(2000.0)
            .with("nic.cause_mode", s(mode))
            .duration_ms(10.0)
            .run()
    };
    let (latched, armed) = (run("latched"), run("armed"));
    conserved(&latched);
    conserved(&armed);
    assert_eq!(latched.packets.delivered, armed.packets.delivered);
    assert!(
        latched.counts.irqs > armed.counts.irqs + 100,
        "latched {:?} armed {:?}",
        latched.counts,
        armed.counts
    );
    // each spurious interrupt is one more poll, for the same packets
    assert!(latched.counts.polls > armed.counts.polls);
}
