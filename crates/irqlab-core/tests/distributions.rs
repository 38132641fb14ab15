//! Two distributions a lab traces, as the model reports them: the packets of each call of the
//! driver's poll function in bpftrace's log2 buckets (`napi:napi_poll`'s `work`;
//! `packets_per_poll_hist`, per queue vector and in all), and each app's wake-up delay
//! (`sched:sched_wakeup` → `sched:sched_switch`; `per_app[i].wakeup_delay_us`).

use irqlab_core::metrics::{PPP_BUCKETS, ppp_bucket, ppp_bucket_lower};
use irqlab_core::time::SimTime;
use irqlab_core::{Report, Tracer, run_with};

use crate::common::{Pairs, b, f, i, list, s, veth_lab};

/// Every return of a driver's poll function: its vector, when, the packets it processed.
#[derive(Default)]
struct Polls(Vec<(usize, u64, u64)>);

impl Tracer for Polls {
    fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
    fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
    fn poll(&mut self, _: usize, vector: usize, t: SimTime, packets: u64, _: u64) {
        self.0.push((vector, t.ps(), packets));
    }
}

/// The histogram of each vector is the traced polls that returned in the window, each in its
/// bucket; the report's is their sum; and they count the polls `counts.polls` counts, but
/// for the one poll per vector that may straddle either end of the window.
fn holds_the_traced_polls(p: &Pairs) -> Report {
    let sc = p.build();
    let warmup = sc.run.warmup.ps();
    let (r, traced) = run_with(&sc, Polls::default());
    let mut want = vec![[0u64; PPP_BUCKETS]; r.per_queue.len()];
    let mut work = vec![0u64; r.per_queue.len()];
    for &(v, t, packets) in &traced.0 {
        if t >= warmup {
            want[v][ppp_bucket(packets)] += 1;
            work[v] += packets;
        }
    }
    let mut total = [0u64; PPP_BUCKETS];
    for q in &r.per_queue {
        let v = q.queue;
        let h = q
            .packets_per_poll_hist
            .as_ref()
            .expect("a NAPI scheme's histogram");
        assert_eq!(h.0, want[v], "vector {v}");
        // a poll counts in `polls` when it starts, in the histogram when it returns
        let (hist, polls) = (h.polls(), q.counts.polls);
        if warmup == 0 {
            assert!(
                polls - hist <= 1,
                "vector {v}: {hist} in the histogram, {polls} polls"
            );
        } else {
            assert!(
                hist.abs_diff(polls) <= 1,
                "vector {v}: {hist} vs {polls} polls"
            );
        }
        // the packets lie within the buckets' bounds
        let bound = |top: bool| -> u64 {
            (0..PPP_BUCKETS)
                .map(|k| {
                    let edge = if top {
                        ppp_bucket_lower(k + 1).max(1) - 1
                    } else {
                        ppp_bucket_lower(k)
                    };
                    h.0[k] * edge
                })
                .sum()
        };
        assert!(
            bound(false) <= work[v] && work[v] <= bound(true),
            "vector {v}"
        );
        for (x, y) in total.iter_mut().zip(&h.0) {
            *x += y;
        }
    }
    let all = r
        .packets_per_poll_hist
        .as_ref()
        .expect("the host's histogram");
    assert_eq!(all.0, total);
    assert!(all.polls() > 0, "polls were made");
    r
}

/// A NIC host: `cores` cores with a queue vector each, Poisson traffic at `rate_pps`.
fn nic(cores: i128, rate_pps: f64) -> Pairs {
    Pairs::default()
        .cores(cores)
        .with("traffic.flows", i(64))
        .with("run.warmup_ms", f(1.0))
        .duration_ms(10.0)
        .rate_pps(rate_pps)
}

/// The veth lab's host (`examples/veth_lab.toml`): the sender on core 0, the app on core 1.
fn veth(rate_pps: f64) -> Pairs {
    veth_lab(3000.0, 1500.0)
        .duration_ms(10.0)
        .with("platform.proto_ns", f(1500.0))
        .with("platform.poll_ns", f(300.0))
        .with("platform.softirq_ns", f(200.0))
        .with("platform.ctx_switch_ns", f(1500.0))
        .with("platform.task_wakeup_ns", f(500.0))
        .rate_pps(rate_pps)
}

#[test]
fn the_softirqs_polls_are_counted_by_their_packets() {
    // light load (mostly one packet a poll), and past the weight (full polls repolled)
    let light = holds_the_traced_polls(&nic(2, 100_000.0));
    assert!(light.packets_per_poll_hist.unwrap().0[1] > 0);
    let heavy = holds_the_traced_polls(&nic(1, 3_000_000.0).with("kernel.napi_weight", i(16)));
    let h = heavy.packets_per_poll_hist.unwrap();
    assert!(h.0[ppp_bucket(16)] > 0, "full polls of the weight: {h:?}");
    assert_eq!(
        h.0[ppp_bucket(16) + 1..].iter().sum::<u64>(),
        0,
        "none beyond it"
    );
    // from the start of the run: only a poll still running at the end is missing
    holds_the_traced_polls(&nic(1, 500_000.0).with("run.warmup_ms", f(0.0)));
}

#[test]
fn a_napi_threads_polls_and_a_veths_are_counted() {
    let r = holds_the_traced_polls(&veth(100_000.0));
    // without threaded NAPI each send's softirq polls its one packet
    let h = r.packets_per_poll_hist.as_ref().unwrap();
    assert_eq!(h.polls(), h.0[1], "{h:?}");
    // the thread beside the app on core 1 falls behind the sends and polls several at once
    let r = holds_the_traced_polls(
        &veth(250_000.0)
            .with("kernel.threaded_napi", b(true))
            .with("kernel.napi_thread_core", i(1)),
    );
    let h = r.packets_per_poll_hist.as_ref().unwrap();
    assert!(
        h.0[2..].iter().sum::<u64>() > 0,
        "polls of two or more: {h:?}"
    );
}

#[test]
fn busy_loops_polls_are_counted_with_the_softirqs() {
    // request/response traffic to an app that busy-polls its socket on the vector's core:
    // plain, and preferring with deferral (where the poller's loops and busy_poll_stop's
    // polls are all the polls)
    let rr = Pairs::default()
        .with("platform.preset", s("emmerich2015"))
        .with("traffic.kind", s("rr"))
        .with("platform.wakeup_ns", f(0.0))
        .with("rr.rate_rps", f(150_000.0))
        .with("rr.clients", i(8))
        .with("app.0.core", i(0))
        .with("app.0.cost_ns", f(1000.0))
        .with("app.0.cost_dist", s("deterministic"))
        .with("app.0.io", s("recv"))
        .with("socket.busy_read_us", f(100.0))
        .with("run.warmup_ms", f(1.0))
        .duration_ms(10.0);
    let prefer = rr
        .clone()
        .with("socket.prefer_busy_poll", b(true))
        .with("kernel.napi_defer_hard_irqs", i(2))
        .with("kernel.gro_flush_timeout_ns", f(20_000.0));
    let plain = holds_the_traced_polls(&rr);
    let busy = plain.busy_poll.unwrap();
    assert!(busy.polls > 0, "the app busy-polled: {busy:?}");
    assert!(
        busy.polls < plain.counts.polls,
        "and the softirq polled too"
    );
    let prefer = holds_the_traced_polls(&prefer);
    assert!(prefer.busy_poll.unwrap().polls > 0);
}

#[test]
fn the_polling_loops_schemes_have_no_histogram() {
    // Salah's polling loop does not call a driver's poll function
    for scheme in ["poll", "napi-poll", "disable-enable", "hybrid"] {
        let r = nic(1, 100_000.0).with("scheme", s(scheme)).run();
        assert!(r.counts.polls > 0, "{scheme}");
        assert!(r.packets_per_poll_hist.is_none(), "{scheme}");
        assert!(r.per_queue[0].packets_per_poll_hist.is_none(), "{scheme}");
    }
    for scheme in ["napi", "irq", "coalesce-count"] {
        holds_the_traced_polls(&nic(1, 100_000.0).with("scheme", s(scheme)));
    }
}

#[test]
fn an_app_alone_on_its_core_is_switched_in_at_once() {
    // the veth lab at light load: each packet wakes the app on core 1, where nothing else runs
    let r = veth(20_000.0).run();
    let a = &r.per_app[0];
    assert_eq!(a.wakeup_delay_us.max, Some(0.0));
    assert_eq!(a.wakeup_delay_us.mean, Some(0.0));
    assert_eq!(a.wakeups, a.consumed, "every packet woke it");
    assert_eq!(a.wakeups, r.per_core[1].counts.context_switches);
    // a NIC's vector on core 0, the app on core 1, Poisson arrivals: some packets find it
    // awake, and every wake-up is switched in at once
    let r = nic(2, 200_000.0)
        .with("nic.queues", i(1))
        .with("app.0.core", i(1))
        .with("app.0.flows", list(&(0..64).collect::<Vec<_>>()))
        .with("app.0.cost_ns", f(3000.0))
        .run();
    let a = &r.per_app[0];
    assert_eq!(a.wakeup_delay_us.max, Some(0.0));
    assert!(
        a.wakeups > 0 && a.wakeups < a.consumed,
        "{} of {}",
        a.wakeups,
        a.consumed
    );
    assert_eq!(a.wakeups, r.per_core[1].counts.context_switches);
}

#[test]
fn an_app_woken_behind_the_sender_waits_for_the_rest_of_its_send() {
    // threaded NAPI on core 1; the sender and the app on core 0. A send (S) wakes the NAPI
    // thread and then pays that wake-up (W) on core 0. Meanwhile on core 1 the thread is
    // switched in (X), polls (P0) and processes the packet (P), which wakes the app: at
    // S + X + P0 + P after the send began, while the sender still pays W until S + W. The
    // app's switch starts when the sender sleeps, W − X − P0 − P after its wake-up.
    let (w, x, p0, p) = (20_000.0, 2000.0, 500.0, 1000.0);
    let r = veth(10_000.0)
        .with("kernel.threaded_napi", b(true))
        .with("kernel.napi_thread_core", i(1))
        .with("app.0.core", i(0))
        .with("sender.cost_ns", f(1000.0))
        .with("platform.task_wakeup_ns", f(w))
        .with("platform.task_wakeup_dist", s("deterministic"))
        .with("platform.ctx_switch_ns", f(x))
        .with("platform.ctx_switch_dist", s("deterministic"))
        .with("platform.poll_ns", f(p0))
        .with("platform.poll_dist", s("deterministic"))
        .with("platform.proto_ns", f(p))
        .with("platform.proto_dist", s("deterministic"))
        .run();
    let a = &r.per_app[0];
    let want = (w - x - p0 - p) / 1000.0;
    let d = &a.wakeup_delay_us;
    assert_eq!((d.min, d.max), (Some(want), Some(want)), "{d:?}");
    assert_eq!(a.wakeups, a.consumed, "every packet woke it");
    // with its own core, no wait
    let alone = veth(10_000.0)
        .with("kernel.threaded_napi", b(true))
        .with("kernel.napi_thread_core", i(1))
        .with("host.cores", i(3))
        .with("app.0.core", i(2))
        .run();
    assert_eq!(alone.per_app[0].wakeup_delay_us.max, Some(0.0));
}

#[test]
fn an_app_sharing_the_softirqs_core_waits_and_counts_only_its_wake_ups() {
    // two apps on the vector's core, busy enough that they queue behind each other and the
    // softirq, and use up their slices: a return from the run queue is not a wake-up
    let r = nic(1, 80_000.0)
        .with("traffic.flows", i(2))
        .with("app.0.core", i(0))
        .with("app.0.flows", list(&[0]))
        .with("app.0.cost_ns", f(2000.0))
        .with("app.1.core", i(0))
        .with("app.1.flows", list(&[1]))
        .with("app.1.cost_ns", f(2000.0))
        .with("kernel.sched_slice_us", f(20.0))
        .run();
    let switches = r.per_core[0].counts.context_switches;
    let mut woken = 0;
    for a in &r.per_app {
        let d = &a.wakeup_delay_us;
        assert!(a.wakeups > 0, "app {}", a.app);
        assert!(
            d.min.unwrap() >= 0.0 && d.max.unwrap() > 0.0,
            "app {}: {d:?}",
            a.app
        );
        woken += a.wakeups;
    }
    assert!(woken < switches, "{woken} wake-ups of {switches} switches");
    // no wake-up in the window: no delay
    let quiet = nic(1, 1.0)
        .with("traffic.kind", s("cbr"))
        .with("app.0.core", i(0))
        .run();
    let a = &quiet.per_app[0];
    assert_eq!((a.wakeups, a.wakeup_delay_us.mean), (0, None));
}
