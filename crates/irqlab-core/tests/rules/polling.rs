//! Salah et al.'s protocol-processing loop: each scheme's defining behaviour, on timelines
//! worked out by hand (CBR arrivals, deterministic costs).

use irqlab_core::Report;

use crate::common::{Pairs, conserved, exact, f, i, s};

/// `scheme` on Salah's loop: 1 µs per packet, a 2 µs ISR, a 1 µs timer handler.
fn salah(scheme: &str, rate: f64) -> Pairs {
    exact(scheme)
        .rate_pps(rate)
        .proto_ns(1000.0)
        .irq_ns(2000.0)
        .with("platform.poll_timer_ns", f(1000.0))
        .duration_ms(10.0)
}

/// The hybrid at 1 Mpps switching at `switch_pps`, measured over 1 ms windows.
fn hybrid(switch_pps: f64) -> Pairs {
    salah("hybrid", 1e6)
        .with("hybrid.switch_pps", f(switch_pps))
        .with("hybrid.window_us", f(1000.0))
}

/// Each packet a busy period of its own: its interrupt, one poll, no timer tick.
fn an_interrupt_and_a_poll_per_packet(r: &Report) {
    conserved(r);
    let c = &r.counts;
    assert_eq!(c.irqs, r.packets.offered);
    assert_eq!(c.polls, c.irqs);
    assert_eq!(c.timer_ticks, 0);
}

fn same_outcome(a: &Report, b: &Report) {
    assert_eq!(a.packets, b.packets);
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.cpu_ps, b.cpu_ps);
    assert_eq!(a.latency_us, b.latency_us);
}

#[test]
fn poll_takes_at_most_the_quota_each_period_and_no_packet_interrupt() {
    // Overload (1 Mpps): every 20 µs tick polls exactly Q = 3 packets: 150 kpps.
    let r = salah("poll", 1e6).run();
    conserved(&r);
    let c = &r.counts;
    assert_eq!(c.irqs, 0);
    assert_eq!(c.timer_ticks, 499, "ticks at 20, 40 … 9980 µs");
    assert_eq!(c.polls, c.timer_ticks);
    assert_eq!(c.polled_packets, 3 * c.polls);
    assert_eq!(r.packets.delivered, 3 * 499);
    // a larger quota takes more per tick
    let q5 = salah("poll", 1e6).with("poll.quota", i(5)).run();
    assert_eq!(q5.packets.delivered, 5 * 499);
    // idle apart from the ticks' handlers and 3 packets per 20 µs
    assert_eq!(r.cpu_ps.irq, 499 * 1_000_000);
    assert_eq!(r.cpu_ps.softirq, 3 * 499 * 1_000_000);
}

#[test]
fn poll_at_light_load_waits_for_the_next_tick() {
    // 10 kpps: one packet per 100 µs, each polled at the next tick: its latency is the wait
    // for the tick (at most one period), the timer handler (1 µs) and its processing (1 µs).
    let r = salah("poll", 1e4).run();
    conserved(&r);
    assert_eq!(r.counts.irqs, 0);
    assert_eq!(r.counts.polls, 499);
    let (mean, max) = (r.latency_us.mean.unwrap(), r.latency_us.max.unwrap());
    assert!(
        2.0 <= mean && max <= 22.0,
        "latency {mean} µs, at most {max} µs"
    );
    // a longer period, a longer wait
    let slow = salah("poll", 1e4).with("poll.period_us", f(80.0)).run();
    assert!(slow.latency_us.max.unwrap() > 22.0, "{:?}", slow.latency_us);
}

#[test]
fn disable_enable_at_low_load_gives_each_packet_its_own_interrupt_and_poll() {
    // 10 kpps, 100 µs apart: each packet is a busy period of its own; with the first packet
    // in the ISR (the default) that ISR costs irq + mask + proto and the poll finds nothing.
    let r = salah("disable-enable", 1e4).run();
    an_interrupt_and_a_poll_per_packet(&r);
    let c = &r.counts;
    assert_eq!(c.polled_packets, 0, "the ISR took each packet");
    assert_eq!(r.cpu_ps.irq, c.irqs * 3_000_000);
    assert_eq!(r.latency_us.mean, Some(3.0));
    // with the first packet left to the poll: ISR 2 µs, then the packet
    let r = salah("disable-enable", 1e4)
        .with("driver.first_packet", s("softirq"))
        .run();
    assert_eq!(r.counts.polled_packets, r.packets.delivered);
    assert_eq!(r.cpu_ps.irq, r.counts.irqs * 2_000_000);
    assert_eq!(r.latency_us.mean, Some(3.0));
}

#[test]
fn disable_enable_under_overload_polls_exhaustively_without_livelock() {
    // 2 Mpps against 1 µs per packet: after the first interrupt the ring never empties, so
    // packet interrupts stay disabled and protocol processing runs at full speed: 1 Mpps.
    let r = salah("disable-enable", 2e6).run();
    conserved(&r);
    assert_eq!(r.counts.irqs, 1);
    let tput = r.throughput_pps;
    assert!((0.99e6..=1.0e6).contains(&tput), "throughput {tput}");
    assert!(r.packets.dropped_nic > 0);
}

#[test]
fn napi_poll_at_low_load_is_interrupt_driven() {
    // Each packet: IRQ, a poll that empties the ring, interrupts back on; no tick ever.
    let r = salah("napi-poll", 1e4).run();
    an_interrupt_and_a_poll_per_packet(&r);
    assert_eq!(
        r.latency_us.mean,
        Some(3.0),
        "ISR 2 µs, then 1 µs of processing"
    );
}

#[test]
fn napi_poll_at_overload_is_timer_driven_at_the_quota_per_period() {
    // 1 Mpps: after the first interrupt, the ring holds more than Q after every poll, so the
    // timer drives polls of Q = 3: the first poll from the ISR, then one per 20 µs tick.
    let r = salah("napi-poll", 1e6).run();
    conserved(&r);
    let c = &r.counts;
    assert_eq!(c.irqs, 1);
    assert_eq!(c.polls, c.timer_ticks + 1);
    assert_eq!(c.polled_packets, 3 * c.polls);
    assert!((495..=500).contains(&c.timer_ticks), "{c:?}");
}

#[test]
fn the_polling_loop_re_enables_interrupts_at_the_cost_of_a_register_write() {
    // disable-enable at 10 kpps with a 500 ns unmask: each busy period pays it once, in
    // softirq time, before interrupts are back on.
    let plain = salah("disable-enable", 1e4).run();
    let r = salah("disable-enable", 1e4)
        .with("platform.unmask_ns", f(500.0))
        .run();
    conserved(&r);
    assert_eq!(r.counts.irqs, plain.counts.irqs);
    assert_eq!(
        r.cpu_ps.softirq,
        plain.cpu_ps.softirq + r.counts.irqs * 500_000
    );
}

#[test]
fn the_armed_cause_takes_no_spurious_interrupt_the_latched_one_does() {
    // 300 kpps on disable-enable with the first packet in the poll: packets arrive during the
    // busy periods. Armed (the scheme's default): re-enabling clears the cause, so only a new
    // packet interrupts. Latched: a cause raised while masked fires on unmasking, even when
    // the poll already took those packets.
    let base = salah("disable-enable", 3e5)
        .with("traffic.kind", s("poisson"))
        .with("driver.first_packet", s("softirq"));
    let armed = base.clone().with("nic.cause_mode", s("armed")).run();
    let latched = base.with("nic.cause_mode", s("latched")).run();
    conserved(&armed);
    conserved(&latched);
    // armed: every interrupt starts a poll that finds a packet
    assert_eq!(armed.counts.polls, armed.counts.irqs);
    assert!(armed.counts.polled_packets >= armed.counts.polls);
    assert!(
        latched.counts.irqs > armed.counts.irqs,
        "latched {} armed {}",
        latched.counts.irqs,
        armed.counts.irqs
    );
}

#[test]
fn hybrid_below_its_switch_is_disable_enable_and_above_it_is_poll() {
    let below = salah("hybrid", 1e4).with("hybrid.switch_pps", f(5e5)).run();
    let de = salah("disable-enable", 1e4).run();
    same_outcome(&below, &de);
    assert_eq!(below.counts.mode_switches, 0);
    // 1 Mpps with a 100 kpps switch: the first 1 ms window measures disable-enable's
    // 1 Mpps, the hybrid switches to polling once and stays there (poll delivers 150 kpps,
    // above 90 % of the switch).
    let above = hybrid(1e5).run();
    conserved(&above);
    assert_eq!(above.counts.mode_switches, 1);
    assert!(above.counts.timer_ticks > 400, "{:?}", above.counts);
    assert_eq!(above.counts.irqs, 1);
}

#[test]
fn hybrid_hands_back_to_disable_enable_below_the_hysteresis() {
    // Q = 1 polls 50 kpps, below 90 % of a 100 kpps switch: measured in polling the
    // throughput falls below the band, so the hybrid goes back to disable-enable, which again
    // measures 1 Mpps and switches again: it flips at every window.
    let r = hybrid(1e5).with("poll.quota", i(1)).run();
    conserved(&r);
    assert!(r.counts.mode_switches >= 8, "{:?}", r.counts);
    // with the band wide enough (hysteresis 0.6: below 40 kpps), polling stays
    let r = hybrid(1e5)
        .with("hybrid.hysteresis", f(0.6))
        .with("poll.quota", i(1))
        .run();
    assert_eq!(r.counts.mode_switches, 1, "{:?}", r.counts);
}

#[test]
fn the_isr_that_takes_the_first_packet_pays_its_per_byte_cost_too() {
    // disable-enable at 10 kpps, 1000 B frames at 1 ns per byte: the ISR's one cost is
    // irq + mask + proto (3 µs) plus 1 µs for the bytes; the poll (first packet in the
    // softirq) pays the same 1 µs after a 2 µs ISR.
    for first in ["isr", "softirq"] {
        let r = salah("disable-enable", 1e4)
            .with("traffic.size_bytes", i(1000))
            .with("platform.proto_ns_per_byte", f(1.0))
            .with("driver.first_packet", s(first))
            .run();
        conserved(&r);
        assert_eq!(r.latency_us.mean, Some(4.0), "first packet in the {first}");
        assert_eq!(
            r.cpu_ps.irq + r.cpu_ps.softirq,
            r.packets.delivered * 4_000_000
        );
    }
}

#[test]
fn napi_poll_ticks_only_while_a_poll_leaves_packets_behind() {
    // 100 kpps, 10 µs apart: each poll empties the ring and turns the timer off, so no
    // tick ever comes; at 1 Mpps the ring keeps more than Q and the timer keeps running.
    let light = salah("napi-poll", 1e5).run();
    assert_eq!(light.counts.timer_ticks, 0);
    assert_eq!(light.counts.irqs, light.packets.offered);
    let heavy = salah("napi-poll", 1e6).run();
    assert!(heavy.counts.timer_ticks > 400);
}

#[test]
fn only_salahs_disable_enable_loop_takes_the_first_packet_in_the_isr() {
    // `driver.first_packet` belongs to disable-enable (and the hybrid): NAPI and normal
    // interruption ignore it, and napi-poll's ISR never processes a packet.
    for scheme in ["napi", "irq", "napi-poll"] {
        let with = |first: &str| {
            salah(scheme, 1e5)
                .with("traffic.kind", s("poisson"))
                .with("driver.first_packet", s(first))
                .run()
        };
        same_outcome(&with("isr"), &with("softirq"));
    }
}

#[test]
fn a_latched_cause_interrupts_spuriously_with_the_first_packet_in_the_isr_too() {
    // Latched cause, first packet in the ISR (disable-enable's default): the interrupt that
    // fires on re-enabling for packets the loop already took finds the ring empty, so its ISR
    // takes no packet; the same packets are delivered as with an armed cause.
    let run = |mode: &str| {
        salah("disable-enable", 3e5)
            .with("traffic.kind", s("poisson"))
            .with("nic.cause_mode", s(mode))
            .run()
    };
    let (latched, armed) = (run("latched"), run("armed"));
    conserved(&latched);
    conserved(&armed);
    assert!(latched.counts.irqs > armed.counts.irqs + 100);
    assert_eq!(latched.packets.delivered, armed.packets.delivered);
}

#[test]
fn hybrid_back_in_disable_enable_with_packets_waiting_polls_them_without_an_interrupt() {
    // The flipping hybrid of `hybrid_hands_back_to_disable_enable_below_the_hysteresis`: at
    // 1 Mpps the ring is never empty when polling hands back, so the loop starts a poll at
    // once; only the first packet ever raised an interrupt.
    let r = hybrid(1e5).with("poll.quota", i(1)).run();
    conserved(&r);
    assert!(r.counts.mode_switches >= 8, "{:?}", r.counts);
    assert_eq!(r.counts.irqs, 1, "{:?}", r.counts);
}

#[test]
fn hybrid_polling_hands_back_only_strictly_below_the_band() {
    // Q = 1 per 20 µs at 1 Mpps: polling delivers exactly 50 packets per 1 ms window, 50 kpps.
    // With hysteresis 0.5 and a 100 kpps switch the band's floor is 50 kpps: a window exactly
    // at the floor is not below it, so polling stays; with a 100.1 kpps switch (floor
    // 50.05 kpps) every polling window is below it and the hybrid keeps flipping.
    let run = |switch_pps: f64| {
        hybrid(switch_pps)
            .with("hybrid.hysteresis", f(0.5))
            .with("poll.quota", i(1))
            .run()
    };
    let at = run(100_000.0);
    conserved(&at);
    assert_eq!(at.counts.mode_switches, 1, "{:?}", at.counts);
    let above = run(100_100.0);
    conserved(&above);
    assert!(above.counts.mode_switches >= 5, "{:?}", above.counts);
}

#[test]
fn a_poll_that_wakes_an_app_goes_on_with_its_quota_after_the_wake_up() {
    // `poll` at overload with a blocking app on core 1 reading the flow: each tick's first
    // packet finds the app asleep and wakes it (0.2 µs in softirq after its protocol
    // processing); then the poll goes on with the rest of its quota. Every tick still polls
    // Q = 3 packets, and the app reads them all.
    let r = salah("poll", 1e6)
        .with("host.cores", i(2))
        .with("platform.task_wakeup_ns", f(200.0))
        .with("app.0.core", i(1))
        .with("app.0.flows", crate::common::list(&[0]))
        .with("app.0.cost_ns", f(100.0))
        .with("app.0.cost_dist", s("deterministic"))
        .run();
    conserved(&r);
    assert_eq!(r.counts.polled_packets, 3 * 499, "{:?}", r.counts);
    assert_eq!(r.packets.delivered, 3 * 499);
    assert!(r.packets.consumed + 3 >= 3 * 499, "{:?}", r.packets);
    let wakeups = r.per_core[1].counts.context_switches;
    assert!(
        wakeups >= 499,
        "the app sleeps between ticks: {wakeups} switches"
    );
    assert_eq!(
        r.per_core[0].cpu_ps.softirq,
        3 * 499 * 1_000_000 + wakeups * 200_000,
        "each packet's processing and each wake-up, in softirq"
    );
}
