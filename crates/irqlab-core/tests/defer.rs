//! Integration tests of deferred skb frees (`platform.skb_free_ns`, `kernel.skb_defer_max`),
//! after Linux 6.18's `net/core/skbuff.c` (`skb_attempt_defer_free`, from `skb_consume_udp`)
//! and `net/core/dev.c` (`kick_defer_list_purge`, `skb_defer_free_flush` at each
//! `net_rx_action` loop head and after each threaded poll).

use irqlab_core::Report;

use crate::common::{Pairs, b, conserved, f, i, list, s, veth_lab};

/// Freeing one skb, ns.
const FREE_NS: f64 = 300.0;
/// The app's own CPU time per packet, ns.
const APP_NS: f64 = 500.0;
/// `platform.softirq_ns` of the lab: each `net_rx_action` run's entry.
const SOFTIRQ_NS: f64 = 200.0;

/// The veth lab's host (as in `veth.rs`): two cores, the sender on core 0 (2 µs a packet), the
/// app on core 1, threaded NAPI with its thread on core 1 (the app's), deterministic costs.
fn threaded(rate_pps: f64) -> Pairs {
    veth_lab(2000.0, APP_NS)
        .with("run.duration_ms", f(20.0))
        .with("app.0.flows", list(&[0]))
        .with("platform.proto_ns", f(1000.0))
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.poll_ns", f(200.0))
        .with("platform.softirq_ns", f(SOFTIRQ_NS))
        .with("platform.softirq_dist", s("deterministic"))
        // no switch cost: the app's CPU time is its work and its frees
        .with("platform.ctx_switch_ns", f(0.0))
        .with("platform.task_wakeup_ns", f(500.0))
        .with("kernel.threaded_napi", b(true))
        .with("kernel.napi_thread_core", i(1))
        .rate_pps(rate_pps)
}

fn on(p: Pairs) -> Pairs {
    p.with("platform.skb_free_ns", f(FREE_NS))
}

fn ps(ns: f64) -> f64 {
    ns * 1000.0
}

/// The skbs the app on core `c` freed itself: its CPU time beyond its own work, in frees.
fn freed_by_app(r: &Report, c: usize) -> f64 {
    let app = r.per_core[c].cpu_ps.app as f64;
    (app - r.packets.consumed as f64 * ps(APP_NS)) / ps(FREE_NS)
}

#[test]
fn with_skb_free_ns_0_nothing_changes() {
    // the defer list's key alone changes nothing, on a veth or a NIC
    let nic = Pairs::default()
        .with("host.cores", i(2))
        .with("app.0.core", i(1))
        .with("app.0.flows", list(&[0]))
        .rate_pps(200_000.0)
        .duration_ms(5.0);
    for p in [threaded(100_000.0), nic] {
        let base = p.run();
        let q = p.clone().with("kernel.skb_defer_max", i(4));
        let w = q.warnings();
        assert!(
            w.iter()
                .any(|w| w.contains("kernel.skb_defer_max") && w.contains("platform.skb_free_ns")),
            "{w:?}"
        );
        let mut r = q.run();
        r.scenario.clone_from(&base.scenario);
        assert_eq!(base, r, "bit for bit");
        let r = p.with("platform.skb_free_ns", f(0.0)).run();
        assert_eq!(base, r, "bit for bit");
    }
}

#[test]
fn threaded_veth_the_senders_core_runs_net_rx_every_33_skbs_polling_nothing() {
    for rate in [50_000.0, 100_000.0, 200_000.0] {
        let r = on(threaded(rate)).run();
        conserved(&r);
        let consumed = r.packets.consumed;
        assert!(consumed as f64 > rate * 0.019, "{rate}: {consumed}");
        let core0 = &r.per_core[0];
        // the 33rd skb on the list (32 before it: skb_defer_max / 2) kicks; the flush at once
        let runs = core0.counts.softirq_runs;
        let want = consumed as f64 / 33.0;
        assert!(
            (runs as f64 - want).abs() <= 1.0,
            "{rate}: {runs} NET_RX runs on core 0, {want} expected"
        );
        assert_eq!(core0.counts.polls, 0, "no NAPI polled on core 0");
        assert_eq!(core0.counts.polled_packets, 0);
        // core 0's softirq time: the runs' entries and one free per skb consumed on core 1
        // (up to the list's content at the window's ends)
        let frees = (core0.cpu_ps.softirq as f64 - runs as f64 * ps(SOFTIRQ_NS)) / ps(FREE_NS);
        assert!(
            (frees - consumed as f64).abs() <= 33.0,
            "{rate}: {frees} frees, {consumed} consumed"
        );
        assert_eq!(frees.fract(), 0.0, "whole frees: {frees}");
        assert_eq!(r.per_core[1].counts.softirq_runs, 0);
        // the app freed nothing itself
        assert!(freed_by_app(&r, 1).abs() <= 1.0, "{}", freed_by_app(&r, 1));
    }
}

#[test]
fn without_threaded_napi_each_sends_softirq_frees_the_list_and_no_net_rx_is_added() {
    let p = threaded(100_000.0).with("kernel.threaded_napi", b(false));
    let (base, r) = (p.run(), on(p).run());
    conserved(&r);
    // the list never reaches its half: each packet's softirq on core 0 flushes it first
    assert_eq!(r.counts.softirq_runs, base.counts.softirq_runs);
    assert_eq!(r.counts.softirq_runs, r.counts.polls);
    let extra = (r.per_core[0].cpu_ps.softirq - base.per_core[0].cpu_ps.softirq) as f64;
    let frees = extra / ps(FREE_NS);
    assert!(
        (frees - r.packets.consumed as f64).abs() <= 2.0,
        "{frees} frees, {} consumed",
        r.packets.consumed
    );
    assert_eq!(r.per_core[1].cpu_ps.app, base.per_core[1].cpu_ps.app);
}

#[test]
fn the_app_on_the_allocating_core_frees_each_skb_itself() {
    let r = on(threaded(50_000.0).with("app.0.core", i(0))).run();
    conserved(&r);
    assert_eq!(r.counts.softirq_runs, 0, "no deferral, no NET_RX");
    let n = freed_by_app(&r, 0);
    assert!((n - r.packets.consumed as f64).abs() <= 1.0, "{n}");
}

#[test]
fn skb_defer_max_0_defers_nothing() {
    let r = on(threaded(100_000.0).with("kernel.skb_defer_max", i(0))).run();
    conserved(&r);
    assert_eq!(r.counts.softirq_runs, 0, "nothing deferred, no NET_RX");
    let n = freed_by_app(&r, 1);
    assert!((n - r.packets.consumed as f64).abs() <= 1.0, "{n}");
}

#[test]
fn a_full_list_is_freed_by_the_app() {
    // a NIC's vector on core 0 polls 64 packets at a time (1 µs each); the app on core 1 reads
    // them meanwhile, and the list (skb_defer_max 4: it holds 3) is freed at the poll's end
    let p = Pairs::default()
        .with("host.cores", i(2))
        .with("app.0.core", i(1))
        .with("app.0.flows", list(&[0]))
        .with("app.0.cost_ns", f(APP_NS))
        .with("app.0.cost_dist", s("deterministic"))
        .with("platform.ctx_switch_ns", f(0.0))
        .with("platform.proto_ns", f(1000.0))
        .with("platform.proto_dist", s("deterministic"))
        .with("nic.itr_us", f(200.0))
        .rate_pps(600_000.0)
        .duration_ms(10.0);
    let full = on(p.clone().with("kernel.skb_defer_max", i(4))).run();
    let roomy = on(p.clone()).run();
    for r in [&full, &roomy] {
        conserved(r);
    }
    let (n_full, n_roomy) = (freed_by_app(&full, 1), freed_by_app(&roomy, 1));
    let consumed = full.packets.consumed as f64;
    assert!(
        n_full > 0.8 * consumed && n_roomy < 0.01 * consumed,
        "{n_full} of {consumed} by the app with skb_defer_max 4, {n_roomy} with 64"
    );
}

#[test]
fn random_costs_conserve_and_repeat_exactly() {
    let p = on(threaded(150_000.0))
        .with("traffic.kind", s("poisson"))
        .with("platform.proto_dist", s("exponential"))
        .with("app.0.cost_dist", s("exponential"));
    let (a, c) = (p.run(), p.run());
    assert_eq!(a, c);
    conserved(&a);
    assert!(a.per_core[0].counts.softirq_runs > 0);
}

#[test]
fn a_nics_napi_thread_frees_its_cores_list_after_each_poll() {
    // the skbs are built by the NAPI thread's polls on core 0 and read by the app on core 1:
    // the thread frees them after its next poll, in its own time; no NET_RX is raised
    let p = Pairs::default()
        .with("host.cores", i(2))
        .with("kernel.threaded_napi", b(true))
        .with("kernel.napi_thread_core", i(0))
        .with("app.0.core", i(1))
        .with("app.0.flows", list(&[0]))
        .with("app.0.cost_ns", f(APP_NS))
        .with("app.0.cost_dist", s("deterministic"))
        .with("platform.irq_dist", s("deterministic"))
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.ctx_switch_ns", f(0.0))
        .with("traffic.kind", s("cbr"))
        .rate_pps(50_000.0)
        .duration_ms(10.0);
    let (base, r) = (p.run(), on(p).run());
    conserved(&r);
    assert_eq!(r.counts.softirq_runs, 0);
    let thread = |r: &Report| r.per_core[0].cpu_ps.napi_thread.expect("threaded") as f64;
    let frees = (thread(&r) - thread(&base)) / ps(FREE_NS);
    let consumed = r.packets.consumed as f64;
    assert!((frees - consumed).abs() <= 1.0, "{frees} frees, {consumed}");
    assert!(freed_by_app(&r, 1).abs() <= 1.0, "{}", freed_by_app(&r, 1));
}
