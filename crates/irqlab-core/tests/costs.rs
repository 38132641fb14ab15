//! The cost model's mechanisms beyond a fixed CPU time per event, each checked against its
//! definition in whole runs: the interrupt delivery delay and the descriptor write-back delay
//! (delays, not CPU time), and the indirect cost of an interrupt (CPU time of the next job).

use irqlab_core::time::SimTime;
use irqlab_core::{Report, Tracer, run_with};

use crate::common::{Pairs, US, b, conserved, exact, f, i, list, s};

/// `scheme` at a light CBR load (one packet every 100 us, each alone in the host):
/// deterministic costs, an interrupt of 1 us, protocol processing of 2 us, free polls.
fn light(scheme: &str) -> Pairs {
    exact(scheme)
        .rate_pps(10_000.0)
        // the window ends between two packets, the host idle
        .duration_ms(10.05)
        .irq_ns(1000.0)
        .proto_ns(2000.0)
        .with("platform.poll_ns", f(0.0))
        .with("platform.softirq_ns", f(0.0))
        .with("platform.unmask_ns", f(0.0))
}

/// The report without its scenario (which names every key, the cost's included).
fn outcome(mut r: Report) -> Report {
    r.scenario.clear();
    r
}

fn mean_latency_ps(r: &Report) -> f64 {
    r.latency_us.mean.expect("packets were delivered") * US as f64
}

mod delivery {
    use super::*;

    #[test]
    fn a_delivery_delay_adds_itself_to_latency_and_nothing_to_cpu_time() {
        for scheme in ["irq", "napi"] {
            let base = light(scheme).run();
            let late = light(scheme)
                .with("platform.irq_delivery_ns", f(5000.0))
                .run();
            conserved(&late);
            assert_eq!(late.packets.delivered, base.packets.delivered, "{scheme}");
            assert_eq!(late.counts.irqs, base.counts.irqs, "{scheme}");
            let added = mean_latency_ps(&late) - mean_latency_ps(&base);
            assert!(
                (added - 5000.0 * 1000.0).abs() < 1.0,
                "{scheme}: {added} ps"
            );
            // the core idles meanwhile: every category but idle is unchanged
            let (a, b) = (&late.cpu_ps, &base.cpu_ps);
            assert_eq!(
                (a.irq, a.softirq, a.idle),
                (b.irq, b.softirq, b.idle),
                "{scheme}"
            );
        }
    }

    #[test]
    fn arrivals_during_the_delivery_raise_no_second_interrupt() {
        // one packet a microsecond, each interrupt 5 us on its way: the interrupt in flight
        // covers the arrivals that follow it until its ISR ends (they raise the cause, which
        // the ISR clears), so at most one interrupt per 5 packets
        let pairs = light("irq")
            .rate_pps(1e6)
            .duration_ms(2.0)
            .irq_ns(100.0)
            .proto_ns(100.0);
        let prompt = pairs.run();
        let late = pairs.with("platform.irq_delivery_ns", f(5000.0)).run();
        conserved(&late);
        assert_eq!(
            prompt.counts.irqs, prompt.packets.offered,
            "without: one per packet"
        );
        assert!(
            late.counts.irqs * 5 <= late.packets.offered + 5,
            "{} IRQs for {} packets",
            late.counts.irqs,
            late.packets.offered
        );
        assert_eq!(
            late.packets.delivered + late.packets.in_flight,
            late.packets.offered
        );
    }
}

mod write_back {
    use super::*;

    /// Arrivals, deliveries and the polls that completed (returned less than the weight), in
    /// picoseconds.
    #[derive(Default)]
    struct Seen {
        arrival: Vec<u64>,
        done: Vec<Option<u64>>,
        completed_polls: Vec<u64>,
    }

    impl Tracer for Seen {
        fn arrival(&mut self, id: u64, t: SimTime, _accepted: bool) {
            crate::common::record_arrival(&mut self.arrival, id, t);
            self.done.push(None);
        }
        fn delivered(&mut self, id: u64, _arrival: SimTime, t: SimTime) {
            self.done[id as usize] = Some(t.ps());
        }
        fn poll(&mut self, _c: usize, _v: usize, t: SimTime, _packets: u64, work: u64) {
            if work < 64 {
                self.completed_polls.push(t.ps());
            }
        }
    }

    /// `napi` with a packet every microsecond, protocol processing 0.8 us and an interrupt
    /// of 2 us: busy periods of many packets, the poll catching up with the ring.
    fn busy(writeback_ns: f64) -> (Report, Seen) {
        let sc = light("napi")
            .rate_pps(1e6)
            .duration_ms(1.0)
            .irq_ns(2000.0)
            .proto_ns(800.0)
            .with("platform.writeback_ns", f(writeback_ns))
            .build();
        run_with(&sc, Seen::default())
    }

    #[test]
    fn a_poll_sees_every_written_back_packet_and_no_other() {
        let wb = 1500 * 1000;
        let (r, seen) = busy(1500.0);
        conserved(&r);
        // no packet is processed before its write-back: done >= arrival + wb + proto
        for (a, d) in seen.arrival.iter().zip(&seen.done) {
            if let Some(d) = d {
                assert!(*d >= a + wb + 800 * 1000, "arrived {a}, done {d}");
            }
        }
        // a poll that completes has taken every packet written back before it ended, and left
        // every packet that was in the ring but not yet written back (a write-back at the
        // instant the poll ends comes after it: the CPU's events come before timers)
        let mut left_unseen = 0;
        for &t in &seen.completed_polls {
            for (a, d) in seen.arrival.iter().zip(&seen.done) {
                let taken = d.is_some_and(|d| d <= t);
                if a + wb < t {
                    assert!(taken, "a poll completing at {t} missed a packet of {a}");
                } else if *a < t && !taken {
                    left_unseen += 1;
                }
            }
        }
        assert!(
            left_unseen > 0,
            "some poll ended with a packet DMA'd but not visible"
        );
        // without the delay, a completing poll leaves no packet that arrived before it
        let (_, seen) = busy(0.0);
        for &t in &seen.completed_polls {
            for (a, d) in seen.arrival.iter().zip(&seen.done) {
                if *a < t {
                    assert!(d.is_some_and(|d| d <= t), "{a} left by a poll at {t}");
                }
            }
        }
    }

    #[test]
    fn a_write_back_delay_adds_itself_to_latency_at_light_load() {
        for scheme in ["ideal", "irq", "napi", "disable-enable"] {
            let base = light(scheme).run();
            let late = light(scheme).with("platform.writeback_ns", f(3000.0)).run();
            conserved(&late);
            assert_eq!(late.packets.delivered, base.packets.delivered, "{scheme}");
            let added = mean_latency_ps(&late) - mean_latency_ps(&base);
            assert!(
                (added - 3000.0 * 1000.0).abs() < 1.0,
                "{scheme}: {added} ps"
            );
            assert_eq!(late.cpu_ps.idle, base.cpu_ps.idle, "{scheme}: no CPU time");
        }
    }
}

mod indirect {
    use super::*;

    #[test]
    fn the_indirect_cost_lands_in_the_next_job_and_not_in_cpu_irq() {
        // napi at light load: each interrupt is followed by its softirq's protocol processing
        let base = light("napi").run();
        let hit = light("napi")
            .with("platform.irq_indirect_ns", f(700.0))
            .run();
        conserved(&hit);
        let irqs = hit.counts.irqs;
        assert!(irqs > 90);
        assert_eq!(hit.cpu_ps.irq, base.cpu_ps.irq);
        assert_eq!(hit.cpu_ps.softirq, base.cpu_ps.softirq + irqs * 700 * 1000);
        let added = mean_latency_ps(&hit) - mean_latency_ps(&base);
        assert!((added - 700.0 * 1000.0).abs() < 1.0, "{added} ps");
    }

    #[test]
    fn an_interrupt_that_preempts_an_app_costs_the_softirq_after_it_not_the_app() {
        // an overloaded app on the core the interrupts come to: each interrupt preempts it,
        // and the softirq that runs inline after the ISR is the next job: it pays (cpu.irq
        // unchanged), and the app resumes without the cost
        let pairs = light("napi")
            .with("app.0.core", i(0))
            .with("app.0.cost_ns", f(120_000.0))
            .with("app.0.cost_dist", s("deterministic"));
        let base = pairs.run();
        let hit = pairs.with("platform.irq_indirect_ns", f(700.0)).run();
        conserved(&hit);
        assert_eq!(hit.cpu_ps.irq, base.cpu_ps.irq);
        let extra = hit.counts.irqs * 700 * 1000;
        assert_eq!(hit.cpu_ps.softirq, base.cpu_ps.softirq + extra);
        assert_eq!(
            hit.cpu_ps.app + extra,
            base.cpu_ps.app,
            "the app only lost the time"
        );
    }
}

mod together {
    use super::*;
    use proptest::prelude::*;

    fn scenarios() -> impl Strategy<Value = Pairs> {
        (
            prop_oneof![
                Just("ideal"),
                Just("irq"),
                Just("napi"),
                Just("disable-enable"),
                Just("napi-poll"),
                Just("coalesce-time"),
            ],
            any::<u32>(),
            1_000.0..1_500_000.0f64,
            (0.0..20_000.0f64, 0.0..5_000.0f64, 0.0..5_000.0f64),
            (0.0..5_000.0f64, 0.0..3_000.0f64),
            (1..3i128, 1..128i128, any::<bool>(), 1..3i128),
            history(),
        )
            .prop_map(
                |(scheme, seed, rate, (delivery, writeback, indirect), (irq, proto), shape, h)| {
                    let (cores, ring, app, per_core) = shape;
                    let mut p = Pairs::default()
                        .with("scheme", s(scheme))
                        .with("run.seed", i(seed as i128))
                        .with("run.warmup_ms", f(0.5))
                        .duration_ms(3.0)
                        .rate_pps(rate)
                        .cores(cores)
                        .irq_ns(irq)
                        .proto_ns(proto)
                        .with("traffic.flows", i(8))
                        .with("nic.ring_descriptors", i(ring))
                        .with("platform.irq_delivery_ns", f(delivery))
                        .with("platform.writeback_ns", f(writeback))
                        .with("platform.irq_indirect_ns", f(indirect))
                        .with(
                            "nic.queues",
                            // Salah's loop runs one vector per core
                            i(if scheme.contains("able") || scheme == "napi-poll" {
                                cores
                            } else {
                                cores * per_core
                            }),
                        )
                        .and(&h);
                    if app {
                        p = p.with("app.0.core", i(0));
                    }
                    p
                },
            )
    }

    /// The costs that depend on what ran before: cold packets, NAPI switches, ring
    /// contention; and where an skb is freed (each off at times).
    fn history() -> impl Strategy<Value = Pairs> {
        (
            0..6i128,
            prop_oneof![Just(0.0), 0.0..3_000.0f64],
            prop_oneof![Just(0.0), 0.0..2_000.0f64],
            prop_oneof![Just(0.0), 0.0..3_000.0f64],
            (prop_oneof![Just(0.0), 0.0..1_000.0f64], 0..70i128),
        )
            .prop_map(|(k, cold, switch, contention, (free, defer_max))| {
                Pairs::default()
                    .with("platform.cold_packets", i(k))
                    .with("platform.cold_packet_ns", f(cold))
                    .with("platform.napi_switch_ns", f(switch))
                    .with("platform.ring_contention_ns", f(contention))
                    .with("platform.skb_free_ns", f(free))
                    .with("kernel.skb_defer_max", i(defer_max))
            })
    }

    /// Request/response traffic to an app that busy-polls (`socket.busy_read_us`) or waits
    /// with epoll (busy polling, IRQ suspension), with the three costs drawn.
    fn busy_scenarios() -> impl Strategy<Value = Pairs> {
        (
            any::<u32>(),
            (0.0..5_000.0f64, 0.0..5_000.0f64, 0.0..5_000.0f64),
            prop::sample::select(vec!["recv", "epoll"]),
            prop::sample::select(vec![0.0, 20.0, 200.0]),
            any::<bool>(),
            (history(), 0..2i128),
        )
            .prop_map(
                |(seed, (delivery, writeback, indirect), io, busy_us, suspend, (h, app_core))| {
                    let mut p = Pairs::default()
                        .with("platform.preset", s("emmerich2015"))
                        .with("traffic.kind", s("rr"))
                        .with("run.seed", i(seed as i128))
                        .with("run.warmup_ms", f(0.5))
                        .duration_ms(3.0)
                        .with("rr.clients", i(4))
                        .with("host.cores", i(2))
                        .with("app.0.core", i(app_core))
                        .with("app.0.flows", list(&[0, 1, 2, 3]))
                        .with("app.0.cost_ns", f(1000.0))
                        .with("app.0.io", s(io))
                        .and(&h)
                        .with("platform.irq_delivery_ns", f(delivery))
                        .with("platform.writeback_ns", f(writeback))
                        .with("platform.irq_indirect_ns", f(indirect));
                    p = if io == "epoll" {
                        p.with("epoll.busy_poll_us", f(busy_us))
                            .with("epoll.prefer_busy_poll", b(suspend))
                    } else {
                        p.with("socket.busy_read_us", f(busy_us))
                    };
                    if suspend && io == "epoll" {
                        p = p
                            .with("kernel.napi_defer_hard_irqs", i(2))
                            .with("kernel.gro_flush_timeout_ns", f(20_000.0))
                            .with("kernel.irq_suspend_timeout_ns", f(2_000_000.0));
                    }
                    p
                },
            )
    }

    #[test]
    fn busy_polling_conserves_with_every_cost_on() {
        crate::common::for_random("COST_CASES", 30, busy_scenarios(), |pairs| {
            let r = pairs.run();
            conserved(&r);
            prop_assert!(r.packets.delivered > 0, "requests are answered");
            Ok(())
        });
    }

    #[test]
    fn packets_and_cpu_time_are_conserved_with_every_cost_on() {
        crate::common::for_random("COST_CASES", 60, scenarios(), |pairs| {
            let sc = pairs.build();
            let r = irqlab_core::run(&sc);
            conserved(&r);
            prop_assert_eq!(&r, &irqlab_core::run(&sc), "the same scenario twice");
            Ok(())
        });
    }
}

mod cold_packets {
    use super::*;

    /// `coalesce-count` with an interrupt every `n` packets and each poll over before the next
    /// packet comes: every poll takes exactly `n` packets. Protocol processing 1 us, a poll
    /// 0.5 us, a packet every 20 us.
    fn batches(n: i128) -> Pairs {
        light("coalesce-count")
            .rate_pps(50_000.0)
            .duration_ms(10.01)
            .proto_ns(1000.0)
            .with("platform.poll_ns", f(500.0))
            .with("nic.rx_frames", i(n))
    }

    #[test]
    fn cpu_time_per_packet_falls_with_packets_per_poll_as_the_formula_says() {
        let (k, c) = (4u64, 800.0);
        let mut per_packet = Vec::new();
        for n in [1u64, 2, 3, 4, 5, 8, 12] {
            let r = batches(n as i128)
                .with("platform.cold_packets", i(k as i128))
                .with("platform.cold_packet_ns", f(c))
                .run();
            conserved(&r);
            assert_eq!(r.counts.polled_packets, n * r.counts.polls, "n = {n}");
            assert!(r.counts.polls > 30, "n = {n}");
            let got = r.cpu_ps.softirq as f64 / r.counts.polled_packets as f64 / 1000.0;
            let m = n.min(k) as f64;
            let (kf, nf) = (k as f64, n as f64);
            let want = 500.0 / nf + 1000.0 + c * m * (2.0 * kf - m + 1.0) / (2.0 * kf * nf);
            // each packet's share is rounded down to the picosecond
            assert!(
                got <= want + 1e-9 && want - got < 1e-3,
                "n = {n}: {got} ns against {want} ns"
            );
            per_packet.push(got);
        }
        assert!(per_packet.windows(2).all(|w| w[1] < w[0]), "{per_packet:?}");
    }

    #[test]
    fn cold_packets_cost_cpu_time_only_when_both_keys_are_set() {
        let base = outcome(batches(3).run());
        for (k, c) in [(0, 800.0), (4, 0.0)] {
            let r = batches(3)
                .with("platform.cold_packets", i(k))
                .with("platform.cold_packet_ns", f(c))
                .run();
            assert_eq!(outcome(r), base, "cold_packets = {k}, cold_packet_ns = {c}");
        }
    }

    #[test]
    fn the_isr_that_takes_the_first_packet_pays_its_cold_start() {
        // disable-enable at light load: the ISR processes each packet (the first of its busy
        // period), so each pays the whole cold cost, charged to cpu.irq with the ISR
        let pairs = light("disable-enable").with("driver.first_packet", s("isr"));
        let base = pairs.run();
        let r = pairs
            .with("platform.cold_packets", i(3))
            .with("platform.cold_packet_ns", f(600.0))
            .run();
        conserved(&r);
        assert_eq!(r.packets.delivered, base.packets.delivered);
        let n = r.counts.irqs;
        assert!(n > 90);
        assert_eq!(r.cpu_ps.irq, base.cpu_ps.irq + n * 600 * 1000);
        assert_eq!(r.cpu_ps.softirq, base.cpu_ps.softirq);
    }
}

mod napi_switch {
    use super::*;

    /// Polls in the order they returned: (core, vector).
    #[derive(Default)]
    struct Polls(Vec<(usize, usize)>);

    impl Tracer for Polls {
        fn arrival(&mut self, _id: u64, _t: SimTime, _accepted: bool) {}
        fn delivered(&mut self, _id: u64, _arrival: SimTime, _t: SimTime) {}
        fn poll(&mut self, c: usize, v: usize, _t: SimTime, _packets: u64, _work: u64) {
            self.0.push((c, v));
        }
    }

    /// Polls of another vector than the core's previous poll.
    fn switches(polls: &Polls) -> u64 {
        let mut last = std::collections::HashMap::new();
        let mut n = 0;
        for &(c, v) in &polls.0 {
            if last.insert(c, v).is_some_and(|l| l != v) {
                n += 1;
            }
        }
        n
    }

    /// Two vectors on one core at light load (each packet alone), eight flows spread over them.
    fn two_vectors(switch_ns: f64) -> (Report, Polls) {
        let sc = light("napi")
            .with("platform.poll_ns", f(300.0))
            .with("nic.queues", i(2))
            .with("traffic.flows", i(8))
            .with("platform.napi_switch_ns", f(switch_ns))
            .build();
        run_with(&sc, Polls::default())
    }

    #[test]
    fn each_poll_of_another_napi_than_the_last_costs_the_switch_once() {
        let (r, polls) = two_vectors(450.0);
        conserved(&r);
        let n = switches(&polls);
        assert_eq!(polls.0.len() as u64, r.counts.polls);
        assert!(0 < n && n < r.counts.polls, "{n} of {}", r.counts.polls);
        // softirq time: the polls, the packets, and the switches
        let base = r.counts.polls * 300 * 1000 + r.counts.polled_packets * 2000 * 1000;
        assert_eq!(r.cpu_ps.softirq, base + n * 450 * 1000);
        let (off, _) = two_vectors(0.0);
        assert_eq!(off.cpu_ps.softirq, base);
    }

    #[test]
    fn one_vector_per_core_never_switches() {
        let pairs = light("napi").cores(2).with("traffic.flows", i(8));
        let base = outcome(pairs.run());
        let r = pairs.with("platform.napi_switch_ns", f(450.0)).run();
        assert_eq!(outcome(r), base);
    }
}

mod contention {
    use super::*;

    /// The busy-poll letter's host: one transaction in flight, the app busy-polling on core
    /// `app_core`, the vector's interrupt on core 0, `rx-usecs` as `itr_us`.
    fn letter(app_core: i128, itr_us: f64) -> Pairs {
        Pairs::default()
            .with("platform.preset", s("busypoll2013"))
            .with("scheme", s("napi"))
            .with("traffic.kind", s("rr"))
            .with("rr.clients", i(1))
            .with("rr.outstanding", i(1))
            .with("rr.remote_us", f(10.0))
            .with("rr.response_bytes", i(64))
            .with("traffic.size_bytes", i(64))
            .with("host.cores", i(2))
            .with("app.0.core", i(app_core))
            .with("app.0.cost_ns", f(900.0))
            .with("app.0.cost_dist", s("deterministic"))
            .with("app.0.flows", list(&[0]))
            .with("socket.busy_read_us", f(50.0))
            .with("nic.itr_us", f(itr_us))
            .with("run.warmup_ms", f(0.0))
            .duration_ms(2.0)
    }

    /// The distinct times from a request's arrival to its delivery to the socket, in ps.
    #[derive(Default)]
    struct Latencies(std::collections::BTreeSet<u64>);

    impl Tracer for Latencies {
        fn arrival(&mut self, _id: u64, _t: SimTime, _accepted: bool) {}
        fn delivered(&mut self, _id: u64, arrival: SimTime, t: SimTime) {
            self.0.insert(t.ps() - arrival.ps());
        }
    }

    fn latencies(pairs: &Pairs) -> (Report, Latencies) {
        run_with(&pairs.build(), Latencies::default())
    }

    /// Whether every latency of `on` is one of `off`'s, or one of them plus one contention;
    /// and how many of `on`'s are the latter.
    fn one_contention_or_none(off: &Latencies, on: &Latencies, c_ps: u64) -> usize {
        let mut paid = 0;
        for &l in &on.0 {
            if !off.0.contains(&l) {
                assert!(off.0.contains(&(l - c_ps)), "{l} ps: {:?}", off.0);
                paid += 1;
            }
        }
        paid
    }

    #[test]
    fn each_overlap_with_the_interrupt_costs_the_poller_one_contention() {
        // rx-usecs 100: the requests that come while the vector may interrupt have their
        // interrupt on core 0 while the poller processes them on core 1: each of those
        // requests takes one contention longer, the others none
        let (base, off) = latencies(&letter(1, 100.0));
        let (r, on) = latencies(&letter(1, 100.0).with("platform.ring_contention_ns", f(1500.0)));
        conserved(&r);
        assert!(one_contention_or_none(&off, &on, 1500 * 1000) > 0);
        let mean = |r: &Report| r.rtt_us.as_ref().unwrap().mean.unwrap();
        let added = mean(&r) - mean(&base);
        assert!(0.0 < added && added < 0.5 * 1.5, "{added} us");
    }

    #[test]
    fn with_deep_idle_states_rx_usecs_0_pays_more_than_rx_usecs_100() {
        // the letter's busy-polling rows: core 0 idles between interrupts and wakes from a
        // deep idle state (10.6 us after 5 us idle), so with rx-usecs 0 the interrupt that
        // follows each transaction still runs when the next request is processed; with
        // rx-usecs 100 the throttle holds most of them back
        let rtt_us = |itr: f64, c: f64| {
            let r = letter(1, itr)
                .with("platform.wakeup_ns", f(10_600.0))
                .with("platform.wakeup_after_us", f(5.0))
                .with("platform.ring_contention_ns", f(c))
                .with("run.warmup_ms", f(0.5))
                .duration_ms(5.0)
                .run();
            conserved(&r);
            r.rtt_us.unwrap().mean.unwrap()
        };
        let (base0, base100) = (rtt_us(0.0, 0.0), rtt_us(100.0, 0.0));
        assert!((base0 - base100).abs() < 0.01 * base0, "{base0} {base100}");
        let added0 = rtt_us(0.0, 2000.0) - base0;
        let added100 = rtt_us(100.0, 2000.0) - base100;
        assert!(
            added0 > 0.5 * 2.0 && 0.0 < added100 && added100 < 0.5 * added0,
            "{added0} us, {added100} us"
        );
    }

    #[test]
    fn an_interrupt_after_the_pollers_packet_costs_nothing() {
        // rx-usecs 0 with today's busy loop: the vector, masked by the interrupt before, fires
        // the request's interrupt when busy_poll_stop re-enables it, after the poller's
        // processing: no overlap
        let (base, off) = latencies(&letter(1, 0.0));
        let (r, on) = latencies(&letter(1, 0.0).with("platform.ring_contention_ns", f(1500.0)));
        assert!(r.counts.irqs >= r.packets.delivered);
        assert_eq!(one_contention_or_none(&off, &on, 1500 * 1000), 0);
        assert_eq!(outcome(r), outcome(base));
    }

    #[test]
    fn a_poller_alone_on_its_ring_pays_nothing() {
        // the poller on the interrupt's core: the ISR preempts it, which is no contention
        let base = outcome(letter(0, 0.0).run());
        let r = letter(0, 0.0)
            .with("platform.ring_contention_ns", f(1500.0))
            .run();
        assert_eq!(outcome(r), base);
        // on another core, with the interrupt reaching core 0 after the poller's processing
        // is over (delivered 3 us after the request): no overlap
        let late = letter(1, 0.0).with("platform.irq_delivery_ns", f(3000.0));
        let base = outcome(late.run());
        let r = late.with("platform.ring_contention_ns", f(1500.0)).run();
        assert!(base.counts.irqs > 100);
        assert_eq!(outcome(r), base);
    }
}
