//! Integration tests of the receive path under application load as Chang et al. (2007) model
//! it: ksoftirqd below the app (Linux 2.6.18), a poll bounded by what is left of the budget,
//! no softirq time limit, and the receive-load controllers acting through the host.
//!
//! CBR arrivals and deterministic costs make each timeline one a reader can work out by hand
//! (written next to each scenario).

use irqlab_core::time::SimTime;
use irqlab_core::{Report, Tracer, run, run_with};

use crate::common::{Pairs, b, f, i, s};

/// One core, one app reading every packet; CBR at 1 Mpps; protocol processing 2 us, the app
/// 10 us per packet; every other cost zero; one softirq pass of at most 10 packets before
/// ksoftirqd takes over; a 1 ms slice.
fn overloaded() -> Pairs {
    Pairs::default()
        .with("scheme", s("napi"))
        .with("traffic.kind", s("cbr"))
        .rate_pps(1e6)
        .with("run.warmup_ms", f(5.0))
        .duration_ms(20.0)
        .irq_ns(0.0)
        .with("platform.irq_dist", s("deterministic"))
        .proto_ns(2000.0)
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.ctx_switch_ns", f(0.0))
        .with("platform.task_wakeup_ns", f(0.0))
        .with("platform.softirq_ns", f(0.0))
        .with("platform.poll_ns", f(0.0))
        .with("platform.unmask_ns", f(0.0))
        .with("platform.mask_ns", f(0.0))
        .with("kernel.napi_weight", i(10))
        .with("kernel.netdev_budget", i(10))
        .with("kernel.max_softirq_restart", i(1))
        .with("kernel.sched_slice_us", f(1000.0))
        .with("app.0.cost_ns", f(10_000.0))
        .with("app.0.cost_dist", s("deterministic"))
}

/// Linux 2.6.18's receive path as Chang et al. ran it: NAPI weight 64, a `netdev_budget` of
/// `budget`, and its `net_rx_action` (a poll cleans at most what is left of the budget).
fn linux_2_6_18(budget: i128) -> Pairs {
    Pairs::default()
        .with("kernel.napi_weight", i(64))
        .with("kernel.netdev_budget", i(budget))
        .with("kernel.net_rx_action", s("2.6.18"))
}

fn share(r: &Report) -> (f64, f64) {
    (r.cpu.ksoftirqd, r.cpu.app)
}

#[test]
fn below_apps_ksoftirqd_gets_one_softirq_run_per_app_round() {
    // The ring never empties, so the vector stays masked and ksoftirqd does all protocol
    // processing. Below the app: the app drains its socket (10 packets, 100 us) and sleeps;
    // ksoftirqd runs one handle_softirqs (10 packets, 20 us), whose first packet wakes the
    // app, which takes the core at once after it: ksoftirqd / app = 20 / 100.
    let r = run(&overloaded()
        .with("kernel.ksoftirqd_policy", s("below-apps"))
        .build());
    let (ksd, app) = share(&r);
    assert!(
        (ksd / app - 0.2).abs() < 0.01,
        "ksoftirqd {ksd}, app {app}: Fig. 2's round of one B_p and the app's k_a"
    );
    assert!(r.cpu.idle < 1e-9, "no idle: the core is always behind");
    assert_eq!(
        r.packets.dropped_socket, 0,
        "the app empties its socket every round"
    );
    // Fair sharing: the woken app waits for ksoftirqd's 1 ms slice (50 runs, 500 packets)
    // and the socket overflows; each thread gets half the thread level.
    let r = run(&overloaded().build());
    let (ksd, app) = share(&r);
    assert!(
        (ksd / app - 1.0).abs() < 0.05,
        "fair: ksoftirqd {ksd}, app {app}"
    );
    assert!(r.packets.dropped_socket > 0);
}

#[test]
fn below_apps_an_app_in_its_slice_is_never_preempted_by_ksoftirqd() {
    // A 10 us slice: the app yields after each packet if ksoftirqd waits; ksoftirqd still
    // gives the core back after one run. ksoftirqd's share follows the rounds: 20 us per
    // 10 us of app time.
    let r = run(&overloaded()
        .with("kernel.ksoftirqd_policy", s("below-apps"))
        .with("kernel.sched_slice_us", f(10.0))
        .build());
    let (ksd, app) = share(&r);
    assert!((ksd / app - 2.0).abs() < 0.02, "ksoftirqd {ksd}, app {app}");
}

#[derive(Default)]
struct Polls {
    packets: Vec<u64>,
    knobs: Vec<(u64, u64, u64)>,
}

impl Tracer for Polls {
    fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
    fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
    fn poll(&mut self, _: usize, _: usize, _: SimTime, packets: u64, _: u64) {
        self.packets.push(packets);
    }
    fn knobs(&mut self, _: usize, t: SimTime, budget: u64, itr_ps: u64) {
        self.knobs.push((t.ps(), budget, itr_ps));
    }
}

#[test]
fn budget_left_bounds_each_poll_by_what_is_left_of_netdev_budget() {
    // Weight 64, netdev_budget 10: v6.13 lets each poll clean its whole weight; 2.6.18's
    // dev->poll(dev, &budget) cleans at most 10.
    let base = overloaded().with("kernel.napi_weight", i(64));
    let (_, weight) = run_with(&base.build(), Polls::default());
    assert_eq!(weight.packets.iter().max(), Some(&64));
    let (_, left) = run_with(
        &base.with("kernel.net_rx_action", s("2.6.18")).build(),
        Polls::default(),
    );
    assert_eq!(left.packets.iter().max(), Some(&10));
}

#[test]
fn without_a_time_limit_a_pass_runs_to_its_budget() {
    // A 3000-packet budget at 2 us a packet is 6 ms: the default limit (2 jiffies at HZ 1000)
    // ends each pass after about 1000 packets; without it each pass takes its 3000.
    let base = overloaded()
        .with("nic.ring_descriptors", i(4096))
        .and(&linux_2_6_18(3000))
        .with("app.0.cost_ns", f(100.0))
        .duration_ms(300.0);
    let per_pass = |p: Pairs| {
        let r = run(&p.build());
        let c = &r.per_core[0].counts;
        c.polled_packets as f64 / c.softirq_runs as f64
    };
    let limited = per_pass(base.clone());
    let unlimited = per_pass(base.with("kernel.softirq_time_limit", b(false)));
    assert!(limited < 1100.0, "{limited}");
    assert!((unlimited - 3000.0).abs() < 100.0, "{unlimited}");
}

/// A 1500-byte stream at 80 kpps to an app slower than the stream (15 us per packet): the
/// socket fills, whatever the controller does about protocol processing.
fn pressured(scheme: &str) -> Pairs {
    overloaded()
        .rate_pps(80_000.0)
        .with("traffic.size_bytes", i(1518))
        .with("app.0.cost_ns", f(15_000.0))
        .and(&linux_2_6_18(300))
        .with("kernel.max_softirq_restart", i(10))
        .with("kernel.ksoftirqd_policy", s("below-apps"))
        .with("socket.rcvbuf_bytes", i(2_000_000))
        .with("run.warmup_ms", f(0.0))
        .duration_ms(500.0)
        .with("adapt.scheme", s(scheme))
}

#[test]
fn qapolling_halves_the_budget_once_the_socket_is_half_full() {
    let (_, t) = run_with(&pressured("qapolling").build(), Polls::default());
    let first = t.knobs.first().expect("the controller acted");
    assert_eq!((first.1, first.2), (150, 0), "300 / alpha, T untouched");
    assert!(t.knobs.iter().any(|k| k.1 == 1), "down to the floor");
    assert!(t.knobs.iter().all(|k| k.2 == 0), "QAPolling never writes T");
}

#[test]
fn rhip_raises_t_to_125_us_before_it_touches_the_budget() {
    let (r, t) = run_with(&pressured("rhip").build(), Polls::default());
    let first_budget_change = t
        .knobs
        .iter()
        .position(|k| k.1 != 300)
        .expect("the budget moved");
    assert!(first_budget_change > 0);
    assert_eq!(
        t.knobs[first_budget_change - 1].2,
        125_000_000,
        "T at 1/8000 s first"
    );
    assert!(
        t.knobs[..first_budget_change]
            .windows(2)
            .all(|w| w[1].2 == w[0].2 + 500_000),
        "+500 ns per packet above bufupper"
    );
    assert!(r.irq_per_s <= 8000.0 * 1.01, "{}", r.irq_per_s);
}

#[test]
fn aic_lowers_the_interrupt_rate_and_leaves_the_budget() {
    let (_, t) = run_with(&pressured("aic").build(), Polls::default());
    assert!(!t.knobs.is_empty());
    assert!(t.knobs.iter().all(|k| k.1 == 300));
    assert_eq!(
        t.knobs[0].2, 20_000_000,
        "unthrottled counts as 100000/s: halved"
    );
}

#[test]
fn an_adaptive_scheme_refuses_a_moderation_policy_that_also_writes_t() {
    let e = pressured("rhip")
        .with("driver.moderation", s("ixgbe"))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "driver.moderation");
    assert!(
        pressured("qapolling")
            .with("driver.moderation", s("ixgbe"))
            .try_build()
            .is_ok(),
        "QAPolling leaves T to the policy"
    );
    let e = pressured("qapolling")
        .with("scheme", s("irq"))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "adapt.scheme");
    let e = pressured("qapolling")
        .with("adapt.buflow", f(0.6))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "adapt.buflow");
    assert!(e.to_string().lines().count() == 1);
}

#[test]
fn each_timer_tick_gives_a_pending_softirq_one_inline_invocation() {
    // The app takes 1 s per packet in a 1 s slice: below it, ksoftirqd never runs. Without
    // the tick the ring is never served again after the first interrupt's invocation; with
    // it, every jiffy (1 ms) runs one invocation of B_p = 10 packets at softirq level.
    let busy = overloaded()
        .with("kernel.ksoftirqd_policy", s("below-apps"))
        .with("kernel.sched_slice_us", f(1e6))
        .with("app.0.cost_ns", f(1e9))
        .with("socket.rcvbuf_bytes", i(100_000_000));
    let r = run(&busy.build());
    assert_eq!(r.per_core[0].counts.polled_packets, 0);
    let r = run(&busy.with("kernel.timer_tick", b(true)).build());
    let polled = r.per_core[0].counts.polled_packets;
    assert_eq!(
        polled,
        20 * 10,
        "20 ticks in the 20 ms window, 10 packets each"
    );
    assert!(
        (r.cpu.softirq - 0.02).abs() < 1e-9,
        "200 x 2 us in 20 ms: {}",
        r.cpu.softirq
    );
}

#[test]
fn a_quiet_interval_raises_a_low_budget_by_beta_up_to_rhips_threshold() {
    // 10 kpps of small packets to a fast app: the socket never fills, so every 100 ms interval
    // ends quiet. QAPolling adds beta up to budget_max; RHIP only up to its 300.
    let quiet = |scheme: &str, budget: i128| {
        let sc = overloaded()
            .rate_pps(10_000.0)
            .with("app.0.cost_ns", f(1000.0))
            .with("kernel.netdev_budget", i(budget))
            .with("run.warmup_ms", f(0.0))
            .duration_ms(450.0)
            .with("adapt.scheme", s(scheme))
            .build();
        let (_, t) = run_with(&sc, Polls::default());
        t.knobs
    };
    let ms = |k: &(u64, u64, u64)| k.0 / 1_000_000_000;
    let q = quiet("qapolling", 100);
    assert_eq!(
        q.iter().map(|k| (ms(k), k.1, k.2)).collect::<Vec<_>>(),
        [(100, 101, 0), (200, 102, 0), (300, 103, 0), (400, 104, 0)]
    );
    let r = quiet("rhip", 299);
    assert_eq!(
        r.iter().map(|k| (ms(k), k.1)).collect::<Vec<_>>()[..1],
        [(100, 300)],
        "+beta, capped at 300"
    );
}

#[test]
fn rhip_raises_the_budget_after_an_interval_without_ksoftirqd_and_rhip_noksd_does_not() {
    // The socket stays above bufupper, and softirqs always run inline (no restart or time
    // limit), so ksoftirqd never runs: each interval end is RHIP's "line 6" (the budget, down
    // at 1, gets +beta), while rhip-noksd, without the ksoftirqd rule, sees an interval above
    // bufupper and changes nothing.
    let interval_ends = |scheme: &str| {
        let sc = pressured(scheme)
            .with("kernel.max_softirq_restart", i(1000))
            .with("kernel.softirq_time_limit", b(false));
        let (r, t) = run_with(&sc.build(), Polls::default());
        assert_eq!(r.cpu.ksoftirqd, 0.0);
        t.knobs
            .into_iter()
            .filter(|k| k.0 % 100_000_000_000 == 0)
            .map(|k| (k.0 / 1_000_000_000, k.1))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        interval_ends("rhip"),
        [(100, 2), (200, 2), (300, 2), (400, 2)]
    );
    assert_eq!(interval_ends("rhip-noksd"), []);
}

#[test]
fn every_controllers_report_says_its_result_depends_on_irqlabs_choices() {
    for scheme in ["qapolling", "aic", "rhip", "rhip-noksd"] {
        let r = run(&pressured(scheme).duration_ms(1.0).build());
        assert_eq!(r.notes.len(), 1, "{scheme}: {:?}", r.notes);
        let note = &r.notes[0];
        assert!(note.starts_with("adapt.scheme = "), "{note}");
        assert!(note.contains("docs/applications.md"), "{note}");
        assert!(note.contains("adapt.alpha"), "{note}");
    }
    let r = run(&overloaded().duration_ms(1.0).build());
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

#[test]
fn rhip_keeps_its_knobs_at_an_interval_end_after_ksoftirqd_ran_and_the_socket_filled() {
    // The pressured stream with the stock restart limits: in the first 100 ms interval the
    // socket goes above bufupper (RHIP lowers the budget) and ksoftirqd runs, so its end is
    // not RHIP's "line 6": no change at 100 ms.
    let run = |ms: f64| {
        let sc = pressured("rhip").duration_ms(ms).build();
        run_with(&sc, Polls::default())
    };
    let (r, t) = run(99.0);
    assert!(r.cpu.ksoftirqd > 0.0, "{:?}", r.cpu);
    assert!(t.knobs.iter().any(|k| k.1 < 300), "{:?}", t.knobs);
    let (_, t) = run(150.0);
    let at_100: Vec<_> = t.knobs.iter().filter(|k| k.0 == 100_000_000_000).collect();
    assert_eq!(at_100, Vec::<&(u64, u64, u64)>::new());
}

#[test]
fn aic_starts_from_the_static_itr_the_nic_was_given() {
    // a static ITR of 50 us is 20000 interrupts/s: AIC's first step halves it, T = 100 us
    let (_, t) = run_with(
        &pressured("aic").with("nic.itr_us", f(50.0)).build(),
        Polls::default(),
    );
    assert_eq!(t.knobs[0].2, 100_000_000, "{:?}", &t.knobs[..1]);
}

#[test]
fn only_a_controller_that_changes_t_writes_the_itr_and_each_write_is_counted() {
    // QAPolling moves only the budget: no register write
    let (r, t) = run_with(&pressured("qapolling").build(), Polls::default());
    assert!(t.knobs.len() > 2, "the budget moved: {:?}", t.knobs);
    assert_eq!(r.counts.moderation_writes, 0);
    // AIC moves T: one write per change of T (one vector), all in the window (no warm-up)
    let (r, t) = run_with(&pressured("aic").build(), Polls::default());
    let mut before = 0;
    let mut changes = 0;
    for k in &t.knobs {
        changes += u64::from(k.2 != before);
        before = k.2;
    }
    assert!(changes > 1, "{:?}", t.knobs);
    assert_eq!(r.counts.moderation_writes, changes);
}
