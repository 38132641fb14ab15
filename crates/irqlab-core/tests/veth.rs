//! Integration tests of the veth lab's host: a veth device (`nic.device = "veth"`), the
//! sending thread (`[sender]`) and threaded NAPI (`kernel.threaded_napi`), after
//! `drivers/net/veth.c` (`veth_xmit`, `__veth_xdp_flush`, `veth_poll`, `VETH_RING_SIZE`) and
//! `net/core/dev.c` (`____napi_schedule`, `napi_threaded_poll_loop`).

use irqlab_core::time::SimTime;
use irqlab_core::{Report, Tracer, run_with};

use crate::common::{Pairs, b, conserved, f, i, record_arrival, s, veth_lab};

/// The sender's CPU time per packet, ns.
const SEND_NS: f64 = 2000.0;

/// The lab's host: two cores, a veth device, the sender on core 0 (2 µs per packet), one app
/// on core 1 (500 ns per packet), paced 64 B packets, deterministic costs.
fn lab(rate_pps: f64) -> Pairs {
    veth_lab(SEND_NS, 500.0)
        .with("run.duration_ms", f(20.0))
        .with("platform.proto_ns", f(1000.0))
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.poll_ns", f(200.0))
        .with("platform.softirq_ns", f(200.0))
        .with("platform.ctx_switch_ns", f(1000.0))
        .with("platform.task_wakeup_ns", f(500.0))
        .rate_pps(rate_pps)
}

/// The lab with threaded NAPI, its thread on core 1 (beside the app).
fn threaded(rate_pps: f64) -> Pairs {
    lab(rate_pps)
        .with("kernel.threaded_napi", b(true))
        .with("kernel.napi_thread_core", i(1))
}

fn ppp(r: &Report) -> f64 {
    r.packets_per_poll.expect("polls were made")
}

#[test]
fn no_irq_is_ever_counted_on_a_veth_device() {
    for p in [lab(100_000.0), threaded(100_000.0), lab(400_000.0)] {
        let r = p.run();
        assert_eq!(r.counts.irqs, 0);
        assert_eq!(r.cpu_ps.irq, 0);
        assert!(r.counts.polls > 0);
        conserved(&r);
    }
}

#[test]
fn without_threaded_napi_the_softirq_runs_on_the_senders_core_one_packet_per_poll() {
    let r = lab(50_000.0).run();
    assert_eq!(
        r.per_core[1].cpu_ps.softirq, 0,
        "no NET_RX on the app's core"
    );
    assert!(r.per_core[0].cpu_ps.softirq > 0);
    assert_eq!(r.cpu_ps.softirq, r.per_core[0].cpu_ps.softirq);
    assert_eq!(ppp(&r), 1.0, "each send's softirq polls its one packet");
    assert_eq!(r.packets.dropped_nic, 0);
    assert_eq!(r.packets.dropped_socket, 0);
    assert!(r.cpu.napi_thread.is_none(), "the category only when used");
    // softirq runs once per packet, at the send's local_bh_enable
    assert_eq!(r.counts.softirq_runs, r.counts.polls);
}

#[test]
fn the_senders_cpu_time_is_rate_times_cost_at_light_load() {
    for rate in [20_000.0, 100_000.0] {
        let r = lab(rate).run();
        let share = r.per_core[0].cpu.sender.expect("a sender");
        let expected = rate * SEND_NS * 1e-9;
        assert!(
            (share - expected).abs() < 0.002,
            "rate {rate}: sender share {share}, expected {expected}"
        );
        assert_eq!(r.per_core[1].cpu_ps.sender, Some(0));
        // the packets leave at the traffic's times, a send's cost later
        assert!(
            (r.offered_pps - rate).abs() / rate < 0.01,
            "{}",
            r.offered_pps
        );
    }
}

#[test]
fn with_threaded_napi_at_light_load_the_sender_pays_each_wake_up_of_the_thread() {
    // 20k/s: the thread sleeps between packets, so each transmit wakes it (task_wakeup_ns,
    // 500 ns, on the sender's core) besides the send itself
    let rate = 20_000.0;
    let r = threaded(rate).run();
    let share = r.per_core[0].cpu.sender.expect("a sender");
    let expected = rate * (SEND_NS + 500.0) * 1e-9;
    assert!(
        (share - expected).abs() < 0.002,
        "sender share {share}, expected {expected}"
    );
}

#[test]
fn with_threaded_napi_the_polls_are_the_threads_on_its_core_and_no_softirq_runs() {
    let r = threaded(100_000.0).run();
    assert_eq!(r.cpu_ps.softirq, 0);
    assert_eq!(r.counts.softirq_runs, 0);
    let thread = r.per_core[1].cpu_ps.napi_thread.expect("threaded");
    assert!(thread > 0);
    assert_eq!(r.per_core[0].cpu_ps.napi_thread, Some(0));
    assert_eq!(r.cpu_ps.napi_thread, Some(thread));
    assert_eq!(r.packets.dropped_nic + r.packets.dropped_socket, 0);
    // the thread's wake-ups are context switches on its core
    assert!(r.per_core[1].counts.context_switches > 0);
    conserved(&r);
}

#[test]
fn with_threaded_napi_packets_per_poll_rise_with_the_rate() {
    // the thread shares core 1 with the app: while it waits to run, packets gather
    // (one packet costs core 1 about 4.2 µs unbatched: the thread's switch, poll and wake-up
    // of the app, then the app's switch and its work)
    let rates = [20_000.0, 260_000.0, 300_000.0, 350_000.0];
    let ppps: Vec<f64> = rates.iter().map(|&r| ppp(&threaded(r).run())).collect();
    assert_eq!(ppps[0], 1.0, "{ppps:?}");
    assert!(
        ppps.windows(2).all(|w| w[1] > w[0]),
        "packets per poll rise with the rate: {ppps:?}"
    );
    assert!(ppps[3] > 1.8, "{ppps:?}");
    // without threaded NAPI it is one packet per poll up to the sender's core's capacity
    // (the core polls each packet right after its send)
    for r in [20_000.0, 200_000.0] {
        assert_eq!(ppp(&lab(r).run()), 1.0, "{r}");
    }
}

#[test]
fn packets_and_cpu_time_are_conserved_and_late_sends_wait_in_the_sender() {
    for p in [
        lab(100_000.0),
        lab(450_000.0),
        threaded(100_000.0),
        threaded(450_000.0),
    ] {
        let r = p.run();
        conserved(&r);
        assert!(r.packets.in_sender.is_some());
    }
    // overload: the sender (2 µs) and the softirq (1.4 µs) share core 0, at most ~290 kpps;
    // the rest waits in the sender, none is dropped at the ring
    let r = lab(450_000.0).run();
    assert!(r.offered_pps < 330_000.0, "{}", r.offered_pps);
    assert!(r.packets.in_sender.unwrap() > 1000);
    assert_eq!(r.packets.dropped_nic, 0);
}

#[test]
fn a_full_256_entry_ring_drops() {
    // no sending thread: packets arrive at 2 Mpps on a poll that takes 1.4 µs a packet
    let p = lab(2_000_000.0)
        .with("sender.cost_ns", f(0.0))
        .with("run.duration_ms", f(5.0));
    let sc = p.build();
    assert_eq!(sc.nic.ring_descriptors, 256);
    assert_eq!(sc.params.u64("nic.ring_descriptors"), 256);
    let r = p.run();
    assert!(r.packets.dropped_nic > 0);
    assert!(r.packets.in_flight <= 256);
    assert!(r.packets.in_sender.is_none());
    assert!(r.cpu.sender.is_none());
    conserved(&r);
}

#[test]
fn a_veth_ring_of_another_size_is_refused() {
    let e = lab(1000.0)
        .with("nic.ring_descriptors", i(1024))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "nic.ring_descriptors");
    assert!(e.to_string().contains("VETH_RING_SIZE = 256"), "{e}");
    assert!(
        lab(1000.0)
            .with("nic.ring_descriptors", i(256))
            .try_build()
            .is_ok()
    );
}

#[test]
fn bad_input_is_one_line_naming_its_key() {
    let cases = [
        (lab(1000.0).with("sender.core", i(2)), "sender.core"),
        (
            threaded(1000.0).with("kernel.napi_thread_core", i(5)),
            "kernel.napi_thread_core",
        ),
        (lab(1000.0).with("nic.queues", i(2)), "nic.queues"),
        (lab(1000.0).with("scheme", s("irq")), "scheme"),
        (
            lab(1000.0).with("nic.device", s("hw")),
            "sender.cost_ns", // a sender needs a veth
        ),
        (
            threaded(1000.0).with("kernel.net_rx_action", s("2.6.18")),
            "kernel.threaded_napi",
        ),
        (
            threaded(1000.0).with("socket.busy_read_us", i(50)),
            "kernel.threaded_napi",
        ),
        (lab(1000.0).with("host.forward", b(true)), "host.forward"),
        (
            lab(1000.0)
                .with("qos.strategy", s("ll-rr"))
                .with("qos.rt_share", f(0.1)),
            "qos.strategy",
        ),
        (lab(1000.0).with("traffic.kind", s("rr")), "traffic.kind"),
    ];
    for (p, key) in cases {
        let e = p.try_build().unwrap_err();
        assert_eq!(e.key(), key, "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

#[test]
fn the_sending_and_napi_thread_cores_are_bounded_by_the_largest_host() {
    // the key table's own range (0 to MAX_CORES - 1), before any check against host.cores
    for key in ["sender.core", "kernel.napi_thread_core"] {
        let e = threaded(1000.0).with(key, i(1024)).try_build().unwrap_err();
        assert_eq!(e.key(), key, "{e}");
        assert!(e.to_string().contains("1023"), "{e}");
        let e = threaded(1000.0).with(key, i(1023)).try_build().unwrap_err();
        assert!(
            !e.to_string().contains("1023]"),
            "in the range, refused as no core: {e}"
        );
    }
}

#[test]
fn a_napi_threads_full_weight_poll_is_polled_again_by_the_thread_not_the_softirq() {
    // the thread waits behind a slow app, the ring fills: its polls use their whole weight
    // (64), and napi_threaded_poll_loop polls again itself; nothing goes to NET_RX's list
    let r = threaded(300_000.0)
        .with("app.0.cost_ns", f(6000.0))
        .with("socket.rcvbuf_bytes", i(100_000_000))
        .run();
    conserved(&r);
    assert!(
        ppp(&r) > 32.0,
        "full-weight polls expected, {} per poll",
        ppp(&r)
    );
    assert_eq!(r.counts.softirq_runs, 0);
    assert_eq!(r.cpu_ps.softirq, 0);
    // and when NET_RX does run on the thread's core (the skb frees the app returns to the
    // sender's core, where the thread is too), it frees skbs and polls nothing
    let free_ns = 300.0;
    let r = threaded(300_000.0)
        .with("kernel.napi_thread_core", i(0))
        .with("app.0.cost_ns", f(1500.0))
        .with("platform.skb_free_ns", f(free_ns))
        .with("socket.rcvbuf_bytes", i(100_000_000))
        .run();
    conserved(&r);
    assert!(
        r.counts.softirq_runs > 0,
        "the frees raise NET_RX on core 0"
    );
    let most = r.counts.softirq_runs as f64 * 200.0 + (r.packets.consumed + 64) as f64 * free_ns;
    let softirq_ns = r.per_core[0].cpu_ps.softirq as f64 / 1e3;
    assert!(
        softirq_ns <= most,
        "{softirq_ns} ns of softirq: more than frees ({most} ns)"
    );
}

#[test]
fn a_sender_and_an_app_on_one_core_share_it_by_time_slices() {
    // overload: the sender always has packets due and the app always has packets to read;
    // the scheduler's slices give each a share of the core, none starves
    let r = lab(1_000_000.0)
        .with("app.0.core", i(0))
        .with("app.0.cost_ns", f(2000.0))
        .with("socket.rcvbuf_bytes", i(10_000_000))
        .run();
    conserved(&r);
    let core = &r.per_core[0].cpu_ps;
    let (sender, app) = (core.sender.unwrap_or(0), core.app);
    let measured = r.per_core[0].cpu_ps.measured as f64;
    assert!(
        sender as f64 > 0.2 * measured,
        "sender {sender} of {measured}"
    );
    assert!(app as f64 > 0.2 * measured, "app {app} of {measured}");
}

#[test]
fn interrupt_and_moderation_keys_on_a_veth_are_warnings_naming_them() {
    let w = lab(1000.0)
        .with("nic.itr_us", f(50.0))
        .with("driver.moderation", s("dim"))
        .with("nic.rx_usecs", f(10.0))
        .warnings();
    for key in ["nic.itr_us", "driver.moderation", "nic.rx_usecs"] {
        assert!(
            w.iter()
                .any(|m| m.starts_with(key) && m.contains("veth device has no interrupt")),
            "{key}: {w:?}"
        );
    }
    let w = lab(1000.0).with("kernel.napi_thread_core", i(1)).warnings();
    assert!(w[0].starts_with("kernel.napi_thread_core"), "{w:?}");
}

#[test]
fn threaded_napi_on_a_nic_polls_in_the_thread_too() {
    let r = Pairs::default()
        .with("host.cores", i(2))
        .with("traffic.kind", s("cbr"))
        .with("kernel.threaded_napi", b(true))
        .with("kernel.napi_thread_core", i(1))
        .with("run.duration_ms", f(10.0))
        .rate_pps(100_000.0)
        .run();
    assert!(r.counts.irqs > 0);
    assert_eq!(r.cpu_ps.softirq, 0);
    assert!(r.per_core[1].cpu_ps.napi_thread.unwrap() > 0);
    assert_eq!(r.packets.dropped_nic, 0);
    conserved(&r);
}

#[test]
fn a_scenario_without_the_new_keys_reports_no_new_fields() {
    let r = Pairs::default().rate_pps(100_000.0).duration_ms(2.0).run();
    assert!(r.cpu.napi_thread.is_none() && r.cpu.sender.is_none());
    assert!(r.packets.in_sender.is_none());
}

#[test]
fn random_costs_and_poisson_sends_conserve_and_repeat_exactly() {
    for threaded_on in [false, true] {
        let p = if threaded_on {
            threaded(150_000.0)
        } else {
            lab(150_000.0)
        }
        .with("traffic.kind", s("poisson"))
        .with("sender.cost_dist", s("exponential"))
        .with("platform.proto_dist", s("exponential"))
        .with("app.0.cost_dist", s("exponential"));
        let (a, b) = (p.run(), p.run());
        assert_eq!(a, b, "the same seed gives the same report");
        conserved(&a);
        let c = p.clone().with("run.seed", i(7)).run();
        assert_ne!(a.cpu_ps, c.cpu_ps, "another seed draws other costs");
    }
}

/// Each packet's entry into the veth device (`veth_xmit`): its id and time; and each delivered
/// packet's id, with the arrival time it carried.
#[derive(Default)]
struct Transmits {
    arrival_ps: Vec<u64>,
    delivered: Vec<u64>,
}

impl Tracer for Transmits {
    fn arrival(&mut self, id: u64, t: SimTime, _: bool) {
        record_arrival(&mut self.arrival_ps, id, t);
    }
    fn delivered(&mut self, id: u64, arrival: SimTime, _: SimTime) {
        assert_eq!(
            Some(&arrival.ps()),
            self.arrival_ps.get(id as usize),
            "packet {id}: delivered with another packet's arrival"
        );
        self.delivered.push(id);
    }
}

#[test]
fn the_veth_devices_packets_are_numbered_in_the_order_they_enter_it() {
    // the tracer sees ids 0, 1, 2, … at each transmit (record_arrival), each delivered packet
    // carries its own, and none is delivered twice
    for p in [
        lab(100_000.0),
        threaded(100_000.0),
        lab(100_000.0).with("sender.cost_ns", f(0.0)),
    ] {
        let (r, t) = run_with(&p.build(), Transmits::default());
        assert!(t.arrival_ps.len() > 1000, "{}", t.arrival_ps.len());
        assert!(t.arrival_ps.is_sorted(), "ids follow the transmits' order");
        let mut ids = t.delivered.clone();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), t.delivered.len(), "a packet delivered twice");
        assert!(r.packets.delivered > 0);
    }
}

#[test]
fn the_senders_count_is_the_packet_it_sends_and_those_due_behind_it() {
    // 500k/s on a sender taking 3 µs per packet, alone on its core (the NAPI thread on core
    // 1, its wake-ups free): from t = 0 it sends back to back, one packet every 3 µs, while
    // one comes due every 2 µs. The run ends at 21.0005 ms, inside a send: arrivals 0 to
    // 10,500 have come (10,501), 7,000 are sent, the 7,001st is being sent and 3,500 wait
    let end_ps: u64 = 21_000_500_000;
    let p = threaded(500_000.0)
        .with("sender.cost_ns", f(3000.0))
        .with("platform.task_wakeup_ns", f(0.0))
        .with("run.duration_ms", f(20.0005));
    let (r, t) = run_with(&p.build(), Transmits::default());
    let due = end_ps / 2_000_000 + 1;
    let sent = t.arrival_ps.len() as u64;
    let last = *t.arrival_ps.last().expect("sends");
    assert_eq!((due, sent, last), (10_501, 7_000, 21_000_000_000));
    // the next send started when the last one ended and is not over at the end
    assert!(end_ps - last < 3_000_000);
    assert_eq!(r.packets.in_sender, Some(due - sent));
    assert_eq!(r.packets.in_sender, Some(3_501));
}

#[test]
fn a_transmit_that_finds_the_napi_owned_by_a_busy_poller_runs_no_softirq() {
    // socket busy polling (50 µs) at 100k/s: the app's recv spins on the NAPI between
    // packets, so each transmit finds it scheduled (the busy loop owns it): napi_schedule
    // raises nothing, and the transmit's local_bh_enable has no NET_RX to run
    let r = lab(100_000.0).with("socket.busy_read_us", i(50)).run();
    conserved(&r);
    assert!(r.cpu_ps.busy_poll > 0, "the app busy-polls");
    assert!(r.counts.polls > 1000 && r.packets.dropped_nic == 0);
    assert_eq!(r.counts.softirq_runs, 0);
    assert_eq!(r.cpu_ps.softirq, 0);
}

/// The polls that used the whole NAPI weight (64), as they reported it.
#[derive(Default)]
struct FullPolls(u64);

impl Tracer for FullPolls {
    fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
    fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
    fn poll(&mut self, _: usize, _: usize, _: SimTime, _: u64, work: u64) {
        self.0 += u64::from(work == 64);
    }
}

#[test]
fn a_napi_threads_full_weight_poll_is_not_left_for_net_rx_on_its_core() {
    // overload: the NAPI thread beside the sender on core 0 waits for its turn, the ring
    // fills, and its polls use their whole weight (64): it polls again itself, and lists
    // nothing for net_rx_action (napi_threaded_poll_loop). NET_RX does run on core 0 (the app on core 1 defers its skb frees
    // there), and only frees: each run costs its entry (200 ns) and at most the frees of
    // every skb consumed (20 ns each), never a poll (200 ns, and 1 µs a packet)
    let free_ns = 20.0;
    let p = threaded(400_000.0)
        .with("kernel.napi_thread_core", i(0))
        .with("app.0.cost_ns", f(1500.0))
        .with("platform.skb_free_ns", f(free_ns))
        .with("socket.rcvbuf_bytes", i(100_000_000));
    let (r, full) = run_with(&p.build(), FullPolls::default());
    conserved(&r);
    assert!(full.0 > 20, "{} full-weight polls", full.0);
    assert!(
        r.counts.softirq_runs > 20,
        "the frees raise NET_RX on core 0"
    );
    let most = r.counts.softirq_runs as f64 * 200.0 + (r.packets.consumed + 64) as f64 * free_ns;
    let softirq_ns = r.per_core[0].cpu_ps.softirq as f64 / 1e3;
    assert!(
        softirq_ns <= most,
        "{softirq_ns} ns of softirq: more than its entries and frees ({most} ns)"
    );
}

#[test]
fn the_senders_core_spins_and_never_pays_for_leaving_idle_the_apps_core_does() {
    // 20k/s, one packet every 50 µs: both cores are idle between packets in the model; with
    // every idle exit costing 3 µs (wakeup_after 0), the app's core pays it for each packet's
    // first job there, the sender's core (sockperf spins between sends) never
    let rate = 20_000.0;
    let base = lab(rate).run();
    let r = lab(rate)
        .with("platform.wakeup_ns", f(3000.0))
        .with("platform.wakeup_after_us", f(0.0))
        .run();
    assert_eq!(
        r.per_core[0].cpu_ps, base.per_core[0].cpu_ps,
        "the sender's core: unchanged"
    );
    let extra_ps = r.per_core[1].cpu_ps.app as f64 - base.per_core[1].cpu_ps.app as f64;
    let expected_ps = r.per_core[1].counts.context_switches as f64 * 3000.0 * 1e3;
    assert!(
        (extra_ps - expected_ps).abs() <= 0.01 * expected_ps,
        "the app's core pays 3 µs per wake-up from idle: {extra_ps} ps vs {expected_ps} ps"
    );
    assert!(r.per_core[1].counts.context_switches as f64 >= 0.99 * rate * 0.02);
}

#[test]
fn waking_the_app_on_a_core_idle_longer_than_wakeup_after_costs_the_waker_an_ipi() {
    // 20k/s: the app's core idles ~47 µs between packets. Each packet's NET_RX (on the
    // sender's core) wakes the app: with ipi_wakeup_ns 4 µs and wakeup_after 20 µs it pays
    // 4 µs more per wake-up; with wakeup_after 100 µs the app's core is still "polling" and it
    // pays nothing more
    let rate = 20_000.0;
    let base = lab(rate).run();
    let ipi = |after_us: f64| {
        lab(rate)
            .with("platform.ipi_wakeup_ns", f(4000.0))
            .with("platform.wakeup_after_us", f(after_us))
            .run()
    };
    let long = ipi(20.0);
    let wakeups = long.per_app[0].wakeups as f64;
    assert!(
        wakeups >= 0.99 * rate * 0.02,
        "every packet wakes the app: {wakeups}"
    );
    let extra = long.per_core[0].cpu_ps.softirq as f64 - base.per_core[0].cpu_ps.softirq as f64;
    assert!(
        (extra - wakeups * 4.0e6).abs() <= 0.01 * wakeups * 4.0e6,
        "4 µs per wake-up on the waker's softirq: {extra} ps for {wakeups}"
    );
    assert_eq!(
        long.per_core[1].cpu_ps, base.per_core[1].cpu_ps,
        "the woken core pays nothing"
    );
    let short = ipi(100.0);
    assert_eq!(
        short.per_core[0].cpu_ps, base.per_core[0].cpu_ps,
        "idle for less: no IPI"
    );
}

#[test]
fn a_transmit_that_wakes_the_napi_thread_on_an_idle_core_pays_the_ipi_too() {
    let rate = 20_000.0;
    let base = threaded(rate).run();
    let r = threaded(rate)
        .with("platform.ipi_wakeup_ns", f(4000.0))
        .with("platform.wakeup_after_us", f(20.0))
        .run();
    // the thread's core (1) is idle between packets; the app on it is woken by the thread
    // on the same core (no IPI)
    let extra = r.per_core[0].cpu_ps.sender.unwrap_or(0) as f64
        - base.per_core[0].cpu_ps.sender.unwrap_or(0) as f64;
    let sends = rate * 0.02;
    assert!(
        (extra - sends * 4.0e6).abs() <= 0.02 * sends * 4.0e6,
        "4 µs per send that wakes the idle thread's core: {extra} ps"
    );
    assert_eq!(r.per_core[1].cpu_ps.app, base.per_core[1].cpu_ps.app);
}
