//! The hard-IRQ level: one handler at a time per core; the others wait and run in turn
//! (packet interrupts first, then polling-timer, then NAPI-timer interrupts), each in full.

use irqlab_core::Report;

use crate::common::{Pairs, conserved, exact, f, i, list, s};

const IRQ_NS: u64 = 3000;
const TIMER_NS: u64 = 5000;

/// Every hard interrupt the run issued or took ran its whole handler once: the time at
/// hard-IRQ priority is `irqs × irq_ns + timer_ticks × poll_timer_ns`, up to the handlers cut
/// off at the end of the run.
fn every_handler_ran_in_full(r: &Report) {
    let c = &r.counts;
    let want = c.irqs * IRQ_NS * 1000 + c.timer_ticks * TIMER_NS * 1000;
    let got = r.cpu_ps.irq;
    assert!(
        got <= want + TIMER_NS * 1000 && want <= got + (IRQ_NS + TIMER_NS) * 1000,
        "hard-IRQ time {got} ps for {} IRQs and {} timer interrupts ({want} ps)",
        c.irqs,
        c.timer_ticks
    );
}

/// Salah's `poll` at 50 kpps, 1 µs a packet, its timer every `period_us` with a 5 µs handler.
fn polled_every(period_us: f64) -> Pairs {
    exact("poll")
        .rate_pps(50_000.0)
        .with("platform.poll_timer_ns", f(TIMER_NS as f64))
        .proto_ns(1000.0)
        .with("poll.period_us", f(period_us))
}

#[test]
fn a_packet_interrupt_waits_for_a_running_napi_timer_interrupt() {
    // Two vectors on one core with software IRQ coalescing: vector 0's NAPI hrtimer handler
    // (5 µs) is often running when vector 1's packet interrupt comes, and the other way round.
    // The interrupt waits for the hard-IRQ level; then its ISR runs.
    let r = exact("napi")
        .with("nic.queues", i(2))
        .with("nic.irq_affinity", list(&[0, 0]))
        .with("traffic.flows", i(64))
        .rate_pps(150_000.0)
        .with("traffic.kind", s("poisson"))
        .irq_ns(IRQ_NS as f64)
        .with("platform.poll_timer_ns", f(TIMER_NS as f64))
        .proto_ns(1000.0)
        .with("kernel.napi_defer_hard_irqs", i(2))
        .with("kernel.gro_flush_timeout_ns", f(20_000.0))
        .duration_ms(20.0)
        .run();
    conserved(&r);
    assert!(
        r.counts.irqs > 30 && r.counts.timer_ticks > 100,
        "{:?}",
        r.counts
    );
    every_handler_ran_in_full(&r);
    assert!(r.packets.in_flight <= 2 * 1024, "{:?}", r.packets);
    assert!(
        r.packets.delivered + 64 >= r.packets.offered,
        "{:?}",
        r.packets
    );
}

#[test]
fn a_polling_timer_faster_than_its_handler_keeps_the_hard_irq_level_busy() {
    // `poll` with a 4 µs polling period and a 5 µs timer handler: from the first tick on,
    // each tick fires while the previous handler runs; it waits, and runs as soon as the level
    // is free. The core does nothing but timer interrupts (a timer livelock): the poll at
    // softirq priority never runs.
    let r = polled_every(4.0)
        .irq_ns(IRQ_NS as f64)
        .duration_ms(2.0)
        .run();
    conserved(&r);
    let c = &r.counts;
    assert_eq!(c.irqs, 0, "packet interrupts stay disabled: {c:?}");
    assert_eq!(
        c.timer_ticks, 499,
        "a tick every 4 µs, at 4 … 1996 µs: {c:?}"
    );
    // handlers back to back from the first tick, at 4 µs
    let busy_from_ps = r.cpu_ps.measured - 4_000_000;
    assert!(
        r.cpu_ps.irq >= busy_from_ps,
        "hard-IRQ time {} ps: the level idled while ticks waited",
        r.cpu_ps.irq
    );
    assert_eq!(r.packets.delivered, 0, "{:?}", r.packets);
}

#[test]
fn an_isr_that_masks_the_vector_pays_the_register_write() {
    // NAPI masks the vector in its ISR (`platform.mask_ns`); normal interruption never masks,
    // so it does not pay it. One packet per 100 µs, each its own interrupt.
    let run = |scheme: &str, mask_ns: f64| {
        exact(scheme)
            .rate_pps(1e4)
            .irq_ns(IRQ_NS as f64)
            .proto_ns(1000.0)
            .with("platform.mask_ns", f(mask_ns))
            .duration_ms(10.0)
            .run()
    };
    let napi = run("napi", 500.0);
    conserved(&napi);
    assert_eq!(napi.counts.irqs, 100);
    assert_eq!(napi.cpu_ps.irq, 100 * (IRQ_NS + 500) * 1000);
    assert_eq!(napi.latency_us.mean, Some(4.5));
    let irq = run("irq", 500.0);
    assert_eq!(irq.counts.irqs, 100);
    assert_eq!(irq.cpu_ps.irq, 100 * IRQ_NS * 1000);
}

#[test]
fn a_tx_completion_raises_the_vector_interrupt_only_when_nic_tx_irq_is_on() {
    // A router at 10 kpps, one 1518-byte frame per 100 µs on a 0.25 Gbit/s link: each frame
    // is on the wire for about 49 µs, so it leaves after the poll that sent it has completed
    // and re-armed the cause (`armed`: re-enabling discards what the poll handled).
    // With Tx interrupts its write-back then raises a second interrupt per packet; without
    // them (Rx-only vectors) the descriptor waits for the next Rx poll and raises nothing.
    let router = |tx_irq: bool| {
        exact("napi")
            .rate_pps(1e4)
            .with("traffic.size_bytes", i(1518))
            .with("nic.link_gbps", f(0.25))
            .with("nic.cause_mode", s("armed"))
            .with("host.forward", irqlab_core::Value::Bool(true))
            .with("nic.tx_irq", irqlab_core::Value::Bool(tx_irq))
            .duration_ms(10.0)
            .run()
    };
    let on = router(true);
    conserved(&on);
    assert_eq!(on.packets.offered, 100);
    assert_eq!(on.counts.irqs, 2 * on.packets.offered, "{:?}", on.counts);
    let off = router(false);
    conserved(&off);
    assert_eq!(off.counts.irqs, off.packets.offered, "{:?}", off.counts);
}

#[test]
fn each_tx_write_back_re_arms_the_signal_of_the_next_departure_on_the_wire() {
    // A router at 25 kpps (40 µs apart) of 1518-byte frames on a 0.25 Gbit/s link (about
    // 49 µs each): the frames queue on the wire and leave back to back. Each Tx interrupt's
    // ISR clears the cause and arms the signal of the next frame still on the wire, so every
    // departure that finds the vector idle (all but the few µs per packet of the Rx path)
    // raises its own interrupt: at least three quarters of them.
    let r = exact("napi")
        .rate_pps(2.5e4)
        .proto_ns(1000.0)
        .with("traffic.size_bytes", i(1518))
        .with("nic.link_gbps", f(0.25))
        .with("nic.cause_mode", s("armed"))
        .with("host.forward", irqlab_core::Value::Bool(true))
        .duration_ms(10.0)
        .run();
    conserved(&r);
    let p = &r.packets;
    assert!(p.in_tx_ring > 10, "a backlog on the wire: {p:?}");
    let tx_irqs = r.counts.irqs - p.offered;
    assert!(
        tx_irqs >= p.transmitted * 3 / 4,
        "{tx_irqs} Tx interrupts for {} departures",
        p.transmitted
    );
}

#[test]
fn a_polling_tick_that_waits_for_a_long_handler_runs_once_and_the_level_frees_again() {
    // `poll` with a 20 µs period and exponential timer handlers of mean 5 µs: about one
    // handler in 55 outlasts the period, so the next tick finds the hard-IRQ level busy. It
    // waits and runs once when the level frees; then the core goes back to its poll loop. The
    // hard-IRQ level is busy about a quarter of the time, not from the first long handler on.
    let r = polled_every(20.0)
        .with("platform.poll_timer_dist", s("exponential"))
        .duration_ms(10.0)
        .run();
    conserved(&r);
    let c = &r.counts;
    assert_eq!(c.timer_ticks, 499, "a tick at 20 … 9980 µs: {c:?}");
    let share = r.cpu_ps.irq as f64 / r.cpu_ps.measured as f64;
    assert!(
        (0.15..0.35).contains(&share),
        "hard-IRQ share {share:.3}: each tick's handler ran once"
    );
    assert!(r.packets.delivered >= 490, "{:?}", r.packets);
}
