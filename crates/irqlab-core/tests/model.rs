//! Integration tests of the host model, one module per behaviour: conservation, determinism,
//! agreement with queueing theory, and each scheme's defining behaviour.

use irqlab_core::{Report, Scenario, Value, run, run_traced};

fn scenario(pairs: &[(&str, Value)]) -> Scenario {
    Scenario::from_pairs(pairs.iter().cloned()).expect("valid scenario")
}

use crate::common::{conserved, f, i, s};

/// Salah et al. (2007) costs: 1/r = 3.73 us, 1/mu = 5.34 us, exponential; B = 1024.
fn salah(scheme: &str, rate: f64) -> Vec<(&'static str, Value)> {
    vec![
        ("scheme", s(scheme)),
        ("traffic.rate_pps", f(rate)),
        ("platform.irq_ns", f(3730.0)),
        ("platform.irq_dist", s("exponential")),
        ("platform.proto_ns", f(5340.0)),
        ("platform.proto_dist", s("exponential")),
        ("nic.ring_descriptors", i(1024)),
        ("run.warmup_ms", f(50.0)),
        ("run.duration_ms", f(400.0)),
    ]
}

/// `napi` with Salah's costs on four cores, a queue vector each, and 64 flows.
fn four_cores(rate: f64) -> Vec<(&'static str, Value)> {
    let mut pairs = salah("napi", rate);
    pairs.extend([
        ("host.cores", i(4)),
        ("nic.queues", i(4)),
        ("traffic.flows", i(64)),
    ]);
    pairs
}

mod conservation {
    use super::*;
    use proptest::prelude::*;

    fn dist() -> impl Strategy<Value = Value> {
        prop_oneof![Just(s("deterministic")), Just(s("exponential"))]
    }
    fn cost() -> impl Strategy<Value = Value> {
        prop_oneof![Just(f(0.0)), (1.0..20_000.0f64).prop_map(f)]
    }

    prop_compose! {
        fn any_scenario()(
            scheme in prop_oneof![Just("ideal"), Just("irq"), Just("napi")],
            seed in any::<u64>(),
            warmup in prop_oneof![Just(0.0), 0.0..1.0f64],
            duration in 0.05..3.0f64,
            cbr in any::<bool>(),
            rate in 1_000.0..2_000_000.0f64,
            ring in 1..256i128,
            itr in prop_oneof![Just(0.0), 0.0..100.0f64],
            rx_usecs in prop_oneof![Just(0.0), 0.0..100.0f64],
            rx_frames in 0..16i128,
            armed in any::<bool>(),
            irq in cost(), irq_dist in dist(),
            proto in 0.0..20_000.0f64, proto_dist in dist(),
            poll in cost(), softirq in cost(), mask in cost(), unmask in cost(), ctx in cost(),
            weight in 1..64i128, budget in 1..300i128, restart in 1..10i128,
        ) -> Scenario {
            scenario(&[
                ("scheme", s(scheme)),
                ("run.seed", i(seed as i128)),
                ("run.warmup_ms", f(warmup)),
                ("run.duration_ms", f(duration)),
                ("traffic.kind", s(if cbr { "cbr" } else { "poisson" })),
                ("traffic.rate_pps", f(rate)),
                ("nic.ring_descriptors", i(ring)),
                ("nic.itr_us", f(itr)),
                ("nic.rx_usecs", f(rx_usecs)),
                ("nic.rx_frames", i(rx_frames)),
                ("nic.cause_mode", s(if armed { "armed" } else { "latched" })),
                ("platform.irq_ns", irq),
                ("platform.irq_dist", irq_dist),
                ("platform.proto_ns", f(proto)),
                ("platform.proto_dist", proto_dist),
                ("platform.poll_ns", poll),
                ("platform.softirq_ns", softirq),
                ("platform.mask_ns", mask),
                ("platform.unmask_ns", unmask),
                ("platform.ctx_switch_ns", ctx),
                ("kernel.napi_weight", i(weight)),
                ("kernel.netdev_budget", i(budget)),
                ("kernel.max_softirq_restart", i(restart)),
            ])
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn packets_and_cpu_time_are_conserved(sc in any_scenario()) {
            conserved(&run(&sc));
        }
    }

    #[test]
    fn every_scheme_conserves_in_overload() {
        for scheme in ["ideal", "irq", "napi"] {
            let r = run(&scenario(&salah(scheme, 400_000.0)));
            conserved(&r);
            assert!(r.packets.dropped_nic > 0, "{scheme} overloaded must drop");
        }
    }
}

mod determinism {
    use super::*;

    #[test]
    fn same_scenario_same_seed_gives_identical_json() {
        for scheme in ["ideal", "irq", "napi"] {
            let sc = scenario(&salah(scheme, 150_000.0));
            let a = serde_json::to_string(&run(&sc)).unwrap();
            let b = serde_json::to_string(&run(&sc)).unwrap();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn schemes_share_the_arrival_sequence() {
        let mut short = salah("ideal", 150_000.0);
        short.push(("run.duration_ms", f(3.0)));
        let (_, ideal) = run_traced(&scenario(&short));
        short[0] = ("scheme", s("irq"));
        let (_, irq) = run_traced(&scenario(&short));
        assert_eq!(ideal.arrival_ps, irq.arrival_ps);
        assert!(ideal.arrival_ps.len() > 400);
        assert_ne!(
            ideal.done_ps, irq.done_ps,
            "different schemes, different service"
        );
    }
}

mod agreement {
    use super::*;

    /// `ideal` at load 0.9 with B = 8: mean of 10 replications within its 95% interval of the
    /// M/M/1/B closed forms (the full grid of loads and buffers is in the Python tests).
    #[test]
    fn ideal_is_mm1b() {
        let (lambda, mu, b) = (0.9e6, 1e6, 8usize);
        let rho: f64 = lambda / mu;
        let p: Vec<f64> = (0..=b).map(|n| rho.powi(n as i32)).collect();
        let z: f64 = p.iter().sum();
        let loss = p[b] / z;
        let mean_n: f64 = p
            .iter()
            .enumerate()
            .map(|(n, pn)| n as f64 * pn)
            .sum::<f64>()
            / z;
        let sojourn_us = mean_n / (lambda * (1.0 - loss)) * 1e6;
        let reps: Vec<Report> = (0..10)
            .map(|r| {
                run(&scenario(&[
                    ("scheme", s("ideal")),
                    ("traffic.rate_pps", f(lambda)),
                    ("platform.proto_ns", f(1000.0)),
                    ("nic.ring_descriptors", i(b as i128)),
                    ("run.replication", i(r)),
                    ("run.warmup_ms", f(1.0)),
                    ("run.duration_ms", f(100.0)),
                ]))
            })
            .collect();
        let ci = |xs: Vec<f64>| {
            let n = xs.len() as f64;
            let m = xs.iter().sum::<f64>() / n;
            let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            (m, 2.262 * sd / n.sqrt()) // t(0.975, 9)
        };
        let (m, h) = ci(reps.iter().map(|r| r.loss_ratio).collect());
        assert!((m - loss).abs() <= h, "loss {m} ± {h} vs {loss}");
        let (m, h) = ci(reps.iter().map(|r| r.latency_us.mean.unwrap()).collect());
        assert!(
            (m - sojourn_us).abs() <= h,
            "latency {m} ± {h} vs {sojourn_us}"
        );
    }
}

mod schemes {
    use super::*;

    #[test]
    fn ideal_has_no_interrupts() {
        let r = run(&scenario(&salah("ideal", 100_000.0)));
        assert_eq!(r.counts.irqs, 0);
        assert_eq!(r.cpu_ps.irq, 0);
        assert!(r.counts.polls > 0);
    }

    #[test]
    fn irq_livelocks_past_the_cliff_and_napi_does_not() {
        let tput = |scheme: &str, rate: f64| run(&scenario(&salah(scheme, rate))).throughput_pps;
        let (below, cliff, past, far) = (
            tput("irq", 100e3),
            tput("irq", 127e3),
            tput("irq", 250e3),
            tput("irq", 600e3),
        );
        assert!(
            cliff > below && cliff > past && past > far,
            "{below} {cliff} {past} {far}"
        );
        assert!(far < 0.5 * cliff);
        let mu = 1e9 / 5340.0;
        for rate in [250e3, 600e3] {
            let t = tput("napi", rate);
            assert!((t - mu).abs() < 0.01 * mu, "napi at {rate}: {t}");
        }
    }

    #[test]
    fn napi_interrupts_fade_under_overload() {
        let low = run(&scenario(&salah("napi", 100_000.0)));
        let over = run(&scenario(&salah("napi", 400_000.0)));
        assert!(low.irq_per_s > 10_000.0);
        assert!(over.irq_per_s < 0.01 * low.irq_per_s, "{}", over.irq_per_s);
    }

    #[test]
    fn static_itr_caps_the_interrupt_rate() {
        // 20 us ITR: at most 50 000 IRQs/s, whatever the load.
        for rate in [40_000.0, 100_000.0, 160_000.0] {
            let mut sc = salah("napi", rate);
            sc.push(("nic.itr_us", f(20.0)));
            let r = run(&scenario(&sc));
            assert!(r.irq_per_s <= 50_000.0 + 1.0, "{rate}: {}", r.irq_per_s);
            conserved(&r);
        }
        let mut sc = salah("napi", 100_000.0);
        sc.push(("nic.itr_us", f(20.0)));
        let with = run(&scenario(&sc));
        let without = run(&scenario(&salah("napi", 100_000.0)));
        assert!(with.irq_per_s < without.irq_per_s);
        assert!(
            with.latency_us.mean > without.latency_us.mean,
            "ITR trades latency for IRQs"
        );
    }

    #[test]
    fn irq_cause_is_a_bit_not_a_counter() {
        // Deterministic ISR of 10 us and packets every 2 us: the ISR absorbs the arrivals that
        // come while it runs, so there is one IRQ per 10 us at most, not one per packet.
        let r = run(&scenario(&[
            ("scheme", s("irq")),
            ("traffic.kind", s("cbr")),
            ("traffic.rate_pps", f(500_000.0)),
            ("platform.irq_ns", f(10_000.0)),
            ("platform.irq_dist", s("deterministic")),
            ("platform.proto_ns", f(100.0)),
            ("platform.proto_dist", s("deterministic")),
            ("run.warmup_ms", f(0.0)),
            ("run.duration_ms", f(10.0)),
        ]));
        assert!(
            r.irq_per_s <= 100_001.0 && r.irq_per_s > 80_000.0,
            "{}",
            r.irq_per_s
        );
    }
}

mod series {
    use super::*;
    use irqlab_core::run_series;

    #[test]
    fn series_adds_up_to_the_report() {
        // With no warm-up, the buckets partition the measured window: their sums are the
        // report's counters and their latency sum gives its mean exactly.
        let mut pairs = salah("napi", 150_000.0);
        pairs.push(("run.warmup_ms", f(0.0)));
        pairs.push(("run.duration_ms", f(20.0)));
        let sc = scenario(&pairs);
        let (r, s) = run_series(&sc, 1000);
        assert_eq!(s.offered.len(), 1000);
        assert_eq!(s.bucket.ps() * 1000, 20_000_000_000);
        assert_eq!(s.offered.iter().sum::<u64>(), r.packets.offered);
        assert_eq!(s.dropped.iter().sum::<u64>(), r.packets.dropped_nic);
        assert_eq!(s.delivered.iter().sum::<u64>(), r.packets.delivered);
        let sum: u128 = s.latency_sum_ps.iter().sum();
        let mean_us = sum as f64 / r.packets.delivered as f64 / 1e6;
        assert!((mean_us - r.latency_us.mean.unwrap()).abs() < 1e-9 * mean_us.max(1.0));
        // The series observes; it does not change the run.
        assert_eq!(run(&sc), r);
    }
}

mod interrupted {
    //! A run stops when its `stop` function says so — on every scheme, interleaved or core by
    //! core — within a millisecond of simulated time, and reports nothing.
    use super::*;
    use irqlab_core::params::SCHEMES;
    use irqlab_core::time::SimTime;
    use irqlab_core::{Tracer, run_interruptible, run_with_interruptible, runs_core_by_core};
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    const MS_PS: u64 = 1_000_000_000;

    /// Sets the stop flag at the `n`-th arrival, as Ctrl-C would in the middle of a run, and
    /// notes when.
    struct StopAt<'a> {
        stop: &'a AtomicBool,
        n: u64,
        set_at: &'a Cell<Option<SimTime>>,
    }

    impl Tracer for StopAt<'_> {
        fn arrival(&mut self, id: u64, t: SimTime, _: bool) {
            if id + 1 == self.n {
                self.stop.store(true, Ordering::Relaxed);
                self.set_at.set(Some(t));
            }
        }
        fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
    }

    /// An hour of simulated time: minutes to hours of wall time.
    fn an_hour(mut pairs: Vec<(&'static str, Value)>) -> Scenario {
        pairs.push(("run.warmup_ms", f(0.0)));
        pairs.push(("run.duration_ms", f(3.6e6)));
        scenario(&pairs)
    }

    /// Runs `sc` interleaved, setting its flag at the 5000th arrival: it must stop at the end
    /// of that millisecond slice.
    fn stops_within_a_millisecond(sc: &Scenario) {
        let stop = AtomicBool::new(false);
        let set_at = Cell::new(None);
        let tracer = StopAt {
            stop: &stop,
            n: 5000,
            set_at: &set_at,
        };
        let Err(e) = run_with_interruptible(sc, tracer, &mut || stop.load(Ordering::Relaxed))
        else {
            panic!("a run whose flag was set ran to its end");
        };
        let set_at = set_at.get().expect("the flag was set");
        assert!(
            set_at <= e.at && e.at.ps() <= set_at.ps() + MS_PS,
            "flag set at {set_at}, {e}"
        );
    }

    #[test]
    fn every_scheme_stops_within_a_millisecond_of_simulated_time() {
        for &scheme in SCHEMES {
            stops_within_a_millisecond(&an_hour(salah(scheme, 100_000.0)));
        }
    }

    #[test]
    fn an_interleaved_host_of_several_cores_stops() {
        let mut pairs = salah("napi", 400_000.0);
        pairs.extend([
            ("host.cores", i(4)),
            ("nic.queues", i(4)),
            ("traffic.flows", i(64)),
            ("host.forward", Value::Bool(true)),
        ]);
        let sc = an_hour(pairs);
        assert!(!runs_core_by_core(&sc));
        stops_within_a_millisecond(&sc);
    }

    #[test]
    fn a_host_run_core_by_core_stops() {
        let mut pairs = four_cores(1e7);
        pairs.push(("platform.proto_ns", f(100.0)));
        let sc = an_hour(pairs);
        assert!(runs_core_by_core(&sc));
        // told to stop before it starts: nothing runs
        let e = run_interruptible(&sc, &mut || true).unwrap_err();
        assert_eq!(e.at, SimTime::ZERO);
        // asked once per core and slice: told to stop at the 100th question
        let mut asked = 0;
        let e = run_interruptible(&sc, &mut || {
            asked += 1;
            asked == 100
        })
        .unwrap_err();
        assert!(SimTime::ZERO < e.at && e.at < sc.run.end, "{e}");
        assert_eq!(asked, 100);
        // a flag set from another thread while it runs (3.6e10 packets: hours)
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        let e = std::thread::scope(|s| {
            let run = s.spawn(|| run_interruptible(&sc, &mut || stop.load(Ordering::Relaxed)));
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Ordering::Relaxed);
            run.join().unwrap()
        })
        .unwrap_err();
        assert!(e.at < sc.run.end);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }
}

mod never_interrupted {
    //! Asking whether to stop changes nothing: a run whose flag is never set gives the report
    //! of `run`, bit for bit, having been asked at least once per millisecond of simulated
    //! time. (That `run` itself gives the reports it gave before runs could be stopped is held
    //! by the golden scenarios, tests/golden/.)
    use super::*;
    use irqlab_core::params::SCHEMES;
    use irqlab_core::{NoTrace, run_interruptible, run_with, runs_core_by_core};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Runs `sc` with a flag nobody sets, counting the questions; returns the report as JSON
    /// and how many times the flag was looked at.
    fn never_set(sc: &Scenario) -> (String, u64) {
        let flag = AtomicBool::new(false);
        let mut asked = 0;
        let r = run_interruptible(sc, &mut || {
            asked += 1;
            flag.load(Ordering::Relaxed)
        })
        .expect("a flag never set does not stop the run");
        (serde_json::to_string(&r).unwrap(), asked)
    }

    fn same_as_run(sc: &Scenario, ms: u64) {
        let (r, asked) = never_set(sc);
        assert_eq!(r, serde_json::to_string(&run(sc)).unwrap());
        assert!(asked >= ms, "asked {asked} times in {ms} ms");
    }

    #[test]
    fn every_scheme_gives_the_report_of_run() {
        for &scheme in SCHEMES {
            let mut pairs = salah(scheme, 150_000.0);
            pairs.push(("run.duration_ms", f(20.0)));
            same_as_run(&scenario(&pairs), 70);
        }
    }

    #[test]
    fn several_cores_give_the_report_of_run_interleaved_or_core_by_core() {
        let mut pairs = four_cores(400_000.0);
        pairs.push(("run.duration_ms", f(20.0)));
        let core_by_core = scenario(&pairs);
        assert!(runs_core_by_core(&core_by_core));
        same_as_run(&core_by_core, 4 * 70);
        // the interleaved run of the same host gives the same report too
        let (r, _) = never_set(&core_by_core);
        assert_eq!(
            r,
            serde_json::to_string(&run_with(&core_by_core, NoTrace).0).unwrap()
        );
        pairs.push(("host.forward", Value::Bool(true)));
        let interleaved = scenario(&pairs);
        assert!(!runs_core_by_core(&interleaved));
        same_as_run(&interleaved, 70);
    }
}
