//! Ingress QoS in the host (Beifuß et al. 2016): each strategy's defining behaviour in whole
//! runs, the device budget in every poll, conservation and determinism per class, and the
//! configuration errors, one line naming their key.

use irqlab_core::time::SimTime;
use irqlab_core::{Report, Scenario, Tracer, Value, run, run_with};

use crate::common::{f, i, list, s};

/// The `beifuss2016` router with `strategy` at `rate_pps` and RT share `rt`, plus `more`.
fn pairs(strategy: &str, rate_pps: f64, rt: f64, more: &[(&str, Value)]) -> Vec<(String, Value)> {
    let mut p: Vec<(String, Value)> = vec![
        ("platform.preset".into(), s("beifuss2016")),
        ("host.forward".into(), Value::Bool(true)),
        ("traffic.size_bytes".into(), i(128)),
        ("qos.strategy".into(), s(strategy)),
        ("qos.rt_share".into(), f(rt)),
        ("traffic.rate_pps".into(), f(rate_pps)),
        ("run.warmup_ms".into(), f(2.0)),
        ("run.duration_ms".into(), f(20.0)),
    ];
    p.extend(more.iter().map(|(k, v)| (k.to_string(), v.clone())));
    p
}

fn build(p: Vec<(String, Value)>) -> Scenario {
    Scenario::from_pairs(p).unwrap_or_else(|e| panic!("a valid scenario, got: {e}"))
}

fn class<'r>(r: &'r Report, name: &str) -> &'r irqlab_core::metrics::ClassReport {
    r.per_class
        .iter()
        .find(|c| c.class == name)
        .expect("the class is reported")
}

const STRATEGIES: &[&str] = &["sq", "rr", "vmdq", "ll-rr", "ll-wfq"];

/// Records the largest number of packets one poll took, and the polls that took more than
/// the weight.
#[derive(Default)]
struct PollSizes {
    max: u64,
}

impl Tracer for PollSizes {
    fn arrival(&mut self, _id: u64, _t: SimTime, _accepted: bool) {}
    fn delivered(&mut self, _id: u64, _arrival: SimTime, _done: SimTime) {}
    fn poll(&mut self, _c: usize, _v: usize, _t: SimTime, packets: u64, _work: u64) {
        self.max = self.max.max(packets);
    }
}

#[test]
fn no_poll_takes_more_than_the_device_budget() {
    for &st in STRATEGIES {
        for rate in [0.8e6, 2.5e6] {
            for (budgets, weight) in [(None, 64), (Some([4, 100]), 64), (Some([7, 5]), 16)] {
                if budgets.is_some() && !st.starts_with("ll") {
                    continue;
                }
                let mut more = vec![("kernel.napi_weight", i(weight))];
                if let Some([be, rt]) = budgets {
                    more.push(("qos.ring_budgets", list(&[be, rt])));
                }
                let sc = build(pairs(st, rate, 0.4, &more));
                let (r, t) = run_with(&sc, PollSizes::default());
                assert!(r.packets.delivered > 0);
                assert!(
                    t.max <= weight as u64,
                    "{st} {rate} {budgets:?}: a poll took {}",
                    t.max
                );
                if rate > 2e6 {
                    // overloaded: polls use their whole budget
                    assert_eq!(t.max, weight as u64, "{st} {budgets:?}");
                }
            }
        }
    }
}

#[test]
fn ll_wfq_with_an_rt_budget_above_the_device_budget_starves_be_in_overload() {
    // RT alone (0.9 x 2.5 Mpps) exceeds what the core can serve: its ring never empties
    let starve = run(&build(pairs(
        "ll-wfq",
        2.5e6,
        0.9,
        &[("qos.ring_budgets", list(&[4, 100]))],
    )));
    let be = class(&starve, "be");
    assert!(be.path.offered > 1000);
    assert_eq!(be.path.delivered, 0, "BE is never served");
    // the paper's budgets keep BE alive: 4 of every 64 packets
    let wfq = run(&build(pairs("ll-wfq", 2.5e6, 0.9, &[])));
    let (be, rt) = (class(&wfq, "be"), class(&wfq, "rt"));
    let share = be.path.delivered as f64 / (be.path.delivered + rt.path.delivered) as f64;
    assert!((share - 4.0 / 64.0).abs() < 0.01, "BE share {share}");
}

#[test]
fn rr_completes_the_lighter_vector_more_often() {
    // 30 % RT near saturation: the RT vector (1) empties its ring and re-enables its IRQ more
    // often than the loaded BE vector (0)
    let r = run(&build(pairs("rr", 1.5e6, 0.3, &[])));
    assert_eq!(r.per_queue.len(), 2);
    let (be, rt) = (&r.per_queue[0], &r.per_queue[1]);
    assert!(
        2 * rt.counts.irqs > 3 * be.counts.irqs,
        "RT vector {} IRQs, BE vector {}",
        rt.counts.irqs,
        be.counts.irqs
    );
    // each vector carries only its class
    assert_eq!(be.path.offered, class(&r, "be").path.offered);
    assert_eq!(rt.path.offered, class(&r, "rt").path.offered);
    // with 70 % RT the lighter vector is the BE one
    let r = run(&build(pairs("rr", 1.5e6, 0.7, &[])));
    assert!(2 * r.per_queue[0].counts.irqs > 3 * r.per_queue[1].counts.irqs);
    // and in overload the RT vector still interrupts, the BE one never
    let over = run(&build(pairs("rr", 2.0e6, 0.3, &[])));
    assert!(over.per_queue[1].irq_per_s > 5000.0);
    assert!(over.per_queue[0].irq_per_s < 100.0);
}

#[test]
fn in_overload_ll_drops_be_and_keeps_rt_while_sq_drops_both_alike() {
    let ll = run(&build(pairs("ll-rr", 2.2e6, 0.3, &[])));
    assert_eq!(class(&ll, "rt").path.dropped_nic, 0);
    assert!(class(&ll, "be").path.loss_ratio > 0.1);
    let sq = run(&build(pairs("sq", 2.2e6, 0.3, &[])));
    let (be, rt) = (class(&sq, "be"), class(&sq, "rt"));
    assert!(be.path.loss_ratio > 0.1);
    assert!(
        (be.path.loss_ratio - rt.path.loss_ratio).abs() < 0.03,
        "class-blind: BE {} RT {}",
        be.path.loss_ratio,
        rt.path.loss_ratio
    );
    // one ring of 512 descriptors holds both classes
    assert!(sq.packets.in_flight <= 512);
}

#[test]
fn conservation_holds_per_class_for_every_strategy() {
    for &st in STRATEGIES {
        for rate in [0.3e6, 1.5e6, 2.3e6] {
            let sc = build(pairs(st, rate, 0.35, &[("run.warmup_ms", f(0.0))]));
            let r = run(&sc);
            assert_eq!(r.per_class.len(), 2);
            let mut offered = 0;
            for c in &r.per_class {
                let p = &c.path;
                assert_eq!(
                    p.offered,
                    p.delivered + p.dropped_nic + p.dropped_socket + p.dropped_tx + p.in_flight,
                    "{st} {rate} class {}",
                    c.class
                );
                offered += p.offered;
            }
            assert_eq!(offered, r.packets.offered);
            let in_flight: u64 = r.per_class.iter().map(|c| c.path.in_flight).sum();
            assert_eq!(in_flight, r.packets.in_flight, "{st} {rate}");
            // every picosecond of the core is accounted
            let c = &r.per_core[0].cpu_ps;
            assert_eq!(c.irq + c.softirq + c.ksoftirqd + c.app + c.idle, c.measured);
            assert_eq!(c.measured, sc.run.end.ps() - sc.run.warmup.ps());
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_report_per_class() {
    for &st in STRATEGIES {
        let sc = build(pairs(st, 1.6e6, 0.3, &[("run.seed", i(7))]));
        let (a, b) = (run(&sc), run(&sc));
        assert_eq!(a, b, "{st}");
        let other = run(&build(pairs(st, 1.6e6, 0.3, &[("run.seed", i(8))])));
        assert_ne!(a.per_class, other.per_class, "{st}");
    }
}

#[test]
fn strategies_see_the_same_packets_with_the_same_seed() {
    // common random numbers: the classes are drawn from their own stream
    let offered: Vec<(u64, u64)> = STRATEGIES
        .iter()
        .map(|st| {
            let r = run(&build(pairs(st, 1.0e6, 0.3, &[])));
            (class(&r, "be").path.offered, class(&r, "rt").path.offered)
        })
        .collect();
    assert!(offered.windows(2).all(|w| w[0] == w[1]), "{offered:?}");
    let rt = offered[0].1 as f64 / (offered[0].0 + offered[0].1) as f64;
    assert!((rt - 0.3).abs() < 0.01, "RT share {rt}");
}

#[test]
fn the_ring_order_decides_who_goes_first() {
    // LL-RR in overload with RT first vs BE first: same budgets, so the same shares; only
    // which class waits behind the other's 4 changes
    let rt_first = run(&build(pairs("ll-rr", 0.9e6, 0.3, &[])));
    let prb = run(&build(pairs(
        "ll-rr",
        0.9e6,
        0.3,
        &[("qos.ring_order", s("prb"))],
    )));
    let m = |r: &Report, c: &str| class(r, c).path.latency_us.mean.expect("a latency");
    assert!(m(&rt_first, "rt") < m(&prb, "rt"));
    assert!(m(&rt_first, "be") > m(&prb, "be"));
}

fn error(more: &[(&str, Value)]) -> irqlab_core::Error {
    let mut p = pairs("ll-wfq", 1e6, 0.3, &[]);
    p.extend(more.iter().map(|(k, v)| (k.to_string(), v.clone())));
    match Scenario::from_pairs(p) {
        Ok(_) => panic!("{more:?} should be refused"),
        Err(e) => e,
    }
}

#[test]
fn bad_qos_settings_are_one_line_errors_naming_the_key() {
    // (settings, the key named, what the message says)
    type Case<'a> = (Vec<(&'a str, Value)>, &'a str, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec![("qos.ring_budgets", list(&[0, 4]))],
            "qos.ring_budgets",
            "1 …",
        ),
        (
            vec![("qos.ring_budgets", list(&[4, 4, 4]))],
            "qos.ring_budgets",
            "at most 2",
        ),
        (
            vec![("qos.ring_budgets", list(&[4]))],
            "qos.ring_budgets",
            "[BE, RT]",
        ),
        (vec![("qos.rt_share", f(1.5))], "qos.rt_share", "[0, 1]"),
        (vec![("qos.rt_share", f(-0.1))], "qos.rt_share", "[0, 1]"),
        (
            vec![("qos.strategy", s("wfq"))],
            "qos.strategy",
            "\"ll-wfq\"",
        ),
        (
            vec![("qos.strategy", s("rr")), ("nic.queues", i(1))],
            "nic.queues",
            "two queue vectors",
        ),
        (
            vec![("qos.strategy", s("rr")), ("host.cores", i(2))],
            "host.cores",
            "nic.irq_affinity = [0, 0]",
        ),
        (
            vec![
                ("qos.strategy", s("rr")),
                ("host.cores", i(2)),
                ("nic.irq_affinity", list(&[0, 1])),
            ],
            "nic.irq_affinity",
            "one core",
        ),
        (
            vec![("traffic.classes.0.name", s("gold"))],
            "traffic.classes",
            "qos.strategy = \"ll-wfq\" makes the classes be and rt",
        ),
        (
            vec![("scheme", s("napi-poll"))],
            "qos.strategy",
            "NAPI scheme",
        ),
    ];
    for (more, key, says) in cases {
        let e = error(&more);
        let text = e.to_string();
        assert_eq!(e.key(), key, "{text}");
        assert!(text.contains(says), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
}

#[test]
fn without_a_strategy_nothing_changes() {
    // the default host has one class and no QoS: a scenario that names qos.strategy = off
    // gives the very same report
    let plain = run(&Scenario::from_pairs([("traffic.rate_pps", f(2e5))]).unwrap());
    let off =
        run(
            &Scenario::from_pairs([("traffic.rate_pps", f(2e5)), ("qos.strategy", s("off"))])
                .unwrap(),
        );
    assert_eq!(plain.packets, off.packets);
    assert_eq!(plain.latency_us, off.latency_us);
}

#[test]
fn qos_keys_a_strategy_ignores_are_warnings() {
    let warned = |more: &[(&str, Value)]| -> Vec<String> {
        Scenario::from_pairs(more.iter().map(|(k, v)| (k.to_string(), v.clone())))
            .expect("valid")
            .warnings
            .iter()
            .map(|w| w.key.clone())
            .collect()
    };
    assert_eq!(warned(&[("qos.rt_share", f(0.5))]), ["qos.rt_share"]);
    assert_eq!(
        warned(&[
            ("qos.strategy", s("sq")),
            ("qos.ring_budgets", list(&[4, 4]))
        ]),
        ["qos.ring_budgets"]
    );
    assert_eq!(
        warned(&[("qos.strategy", s("rr")), ("qos.ring_order", s("prb"))]),
        ["qos.ring_order"]
    );
    assert!(
        warned(&[
            ("qos.strategy", s("ll-rr")),
            ("qos.ring_budgets", list(&[2, 6]))
        ])
        .is_empty()
    );
    // a resolved scenario given back (its classes be and rt included) builds as it was
    let sc = build(pairs("rr", 1e6, 0.25, &[]));
    let echo: Vec<(String, Value)> = sc
        .params
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let again = Scenario::from_pairs(echo).expect("the echo builds");
    assert_eq!(again.qos, sc.qos);
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

/// Records each poll's packets and the work it reported to `net_rx_action`.
#[derive(Default)]
struct PollReturns(Vec<(u64, u64)>);

impl Tracer for PollReturns {
    fn arrival(&mut self, _id: u64, _t: SimTime, _accepted: bool) {}
    fn delivered(&mut self, _id: u64, _arrival: SimTime, _done: SimTime) {}
    fn poll(&mut self, _c: usize, _v: usize, _t: SimTime, packets: u64, work: u64) {
        self.0.push((packets, work));
    }
}

#[test]
fn an_ll_poll_that_empties_every_ring_with_its_last_packet_of_budget_reports_weight_minus_one() {
    // LL checks "every ring empty" before "device budget used": a poll can take exactly its
    // weight and still complete. Like every driver, it then calls napi_complete_done and
    // returns min(work, weight − 1), so net_rx_action does not put it on the repoll list.
    // An incomplete poll reports the whole weight; a complete one below it, its packets.
    let weight = 16;
    for st in ["ll-rr", "ll-wfq"] {
        let sc = build(pairs(st, 1.2e6, 0.4, &[("kernel.napi_weight", i(weight))]));
        let (r, t) = run_with(&sc, PollReturns::default());
        assert!(r.packets.delivered > 1000, "{st}");
        let weight = weight as u64;
        for &(packets, work) in &t.0 {
            let ok = if packets < weight {
                work == packets
            } else {
                work == weight - 1 || work == weight
            };
            assert!(ok, "{st}: a poll of {packets} packets reported {work}");
        }
        let whole_and_complete = t.0.iter().filter(|&&p| p == (weight, weight - 1)).count();
        let whole_and_incomplete = t.0.iter().filter(|&&p| p == (weight, weight)).count();
        assert!(
            whole_and_complete > 0 && whole_and_incomplete > 0,
            "{st}: {whole_and_complete} complete and {whole_and_incomplete} incomplete polls \
             of the whole weight in {}",
            t.0.len()
        );
    }
}
