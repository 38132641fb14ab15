//! The cost model's mechanisms beyond a fixed CPU time per event, each checked against its
//! definition in whole runs: the interrupt delivery delay and the descriptor write-back delay
//! (delays, not CPU time), and the indirect cost of an interrupt (CPU time of the next job).

use irqlab_core::time::SimTime;
use irqlab_core::{Report, Tracer, run_with};

use crate::common::{Pairs, US, b, conserved, exact, f, i, s};

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
            (1..3i128, 1..128i128, any::<bool>()),
        )
            .prop_map(
                |(scheme, seed, rate, (delivery, writeback, indirect), (irq, proto), shape)| {
                    let (cores, ring, app) = shape;
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
                        .with("platform.irq_indirect_ns", f(indirect));
                    if app {
                        p = p.with("app.0.core", i(0));
                    }
                    p
                },
            )
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
        )
            .prop_map(
                |(seed, (delivery, writeback, indirect), io, busy_us, suspend)| {
                    let mut p = Pairs::default()
                        .with("platform.preset", s("emmerich2015"))
                        .with("traffic.kind", s("rr"))
                        .with("run.seed", i(seed as i128))
                        .with("run.warmup_ms", f(0.5))
                        .duration_ms(3.0)
                        .with("rr.clients", i(4))
                        .with("app.0.core", i(0))
                        .with("app.0.cost_ns", f(1000.0))
                        .with("app.0.io", s(io))
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
