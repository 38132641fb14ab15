//! Integration tests of the host topology, one module per behaviour: several NAPIs sharing a
//! core, vectors on their cores, forwarding, apps and sockets, the thread level's fair share,
//! conservation and determinism over random hosts, and configuration errors that name their key.
//!
//! Most expectations are exact: CBR arrivals and deterministic costs make the timeline one a
//! reader can work out by hand (it is written next to each scenario).

use irqlab_core::time::SimTime;
use irqlab_core::{NoTrace, Report, Scenario, Tracer, run, run_with, runs_core_by_core};

use crate::common::{self, Pairs, US, b, conserved, f, i, list, record_arrival, s};

/// [`common::exact`]: CBR arrivals, deterministic costs, no warm-up; and every CPU cost zero
/// except protocol processing (its default until a test sets it) — each test adds the costs
/// its story needs.
fn exact(scheme: &str) -> Pairs {
    common::exact(scheme)
        .irq_ns(0.0)
        .with("platform.tx_ns", f(0.0))
        .with("platform.tx_clean_ns", f(0.0))
}

/// One call of a driver's poll function, as the tracer saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PollCall {
    core: usize,
    vector: usize,
    /// When it returned, ps.
    t: u64,
    packets: u64,
    work: u64,
    /// The packets it delivered (exact on a one-core host: the deliveries since the previous
    /// poll returned).
    ids: Vec<u64>,
}

/// Records every arrival, delivery, poll call and consumption of a run.
#[derive(Default)]
struct Log {
    arrival_ps: Vec<u64>,
    accepted: Vec<bool>,
    /// End of protocol processing (taken by a socket, a Tx ring or the stack), ps.
    delivered_ps: Vec<Option<u64>>,
    polls: Vec<PollCall>,
    pending: Vec<u64>,
    /// (app, packet id, t in ps).
    consumed: Vec<(usize, u64, u64)>,
}

impl Tracer for Log {
    fn arrival(&mut self, id: u64, t: SimTime, accepted: bool) {
        record_arrival(&mut self.arrival_ps, id, t);
        self.accepted.push(accepted);
        self.delivered_ps.push(None);
    }
    fn delivered(&mut self, id: u64, arrival: SimTime, t: SimTime) {
        assert_eq!(arrival.ps(), self.arrival_ps[id as usize]);
        assert!(
            self.delivered_ps[id as usize].is_none(),
            "{id} delivered twice"
        );
        self.delivered_ps[id as usize] = Some(t.ps());
        self.pending.push(id);
    }
    fn poll(&mut self, core: usize, vector: usize, t: SimTime, packets: u64, work: u64) {
        self.polls.push(PollCall {
            core,
            vector,
            t: t.ps(),
            packets,
            work,
            ids: std::mem::take(&mut self.pending),
        });
    }
    fn consumed(&mut self, app: usize, id: u64, t: SimTime) {
        self.consumed.push((app, id, t.ps()));
    }
}

fn traced(sc: &Scenario) -> (Report, Log) {
    run_with(sc, Log::default())
}

/// Both conservation laws of `metrics`, the CPU accounts of every core, and that the per-core,
/// per-queue, per-class and per-app breakdowns add up to the totals.
fn check_laws(r: &Report) {
    conserved(r);
    let p = &r.packets;
    assert_eq!(
        p.offered + p.in_host_at_warmup,
        p.consumed
            + p.transmitted
            + p.to_stack
            + p.dropped_nic
            + p.dropped_socket
            + p.dropped_tx
            + p.in_flight
            + p.in_socket
            + p.in_app
            + p.in_tx_ring,
        "whole host: {p:?}"
    );
    let c = &r.cpu_ps;
    let cores = r.per_core.len() as u64;
    assert_eq!(c.measured % cores, 0);
    for core in &r.per_core {
        assert_eq!(
            core.cpu_ps.measured,
            c.measured / cores,
            "core {}",
            core.core
        );
    }
    let sum = |f: &dyn Fn(&irqlab_core::metrics::CpuPs) -> u64| -> u64 {
        r.per_core.iter().map(|x| f(&x.cpu_ps)).sum()
    };
    assert_eq!(sum(&|k| k.irq), c.irq);
    assert_eq!(sum(&|k| k.softirq), c.softirq);
    assert_eq!(sum(&|k| k.ksoftirqd), c.ksoftirqd);
    assert_eq!(sum(&|k| k.app), c.app);
    assert_eq!(sum(&|k| k.idle), c.idle);

    type Path = irqlab_core::metrics::PathReport;
    let totals = |parts: Vec<&Path>, what: &str| {
        let add = |f: fn(&Path) -> u64| parts.iter().map(|x| f(x)).sum::<u64>();
        assert_eq!(add(|x| x.offered), p.offered, "{what} offered");
        assert_eq!(add(|x| x.delivered), p.delivered, "{what} delivered");
        assert_eq!(add(|x| x.dropped_nic), p.dropped_nic, "{what} dropped_nic");
        assert_eq!(
            add(|x| x.dropped_socket),
            p.dropped_socket,
            "{what} dropped_socket"
        );
        assert_eq!(add(|x| x.dropped_tx), p.dropped_tx, "{what} dropped_tx");
        assert_eq!(add(|x| x.in_flight), p.in_flight, "{what} in_flight");
    };
    totals(r.per_core.iter().map(|x| &x.path).collect(), "per_core");
    totals(r.per_queue.iter().map(|x| &x.path).collect(), "per_queue");
    totals(r.per_class.iter().map(|x| &x.path).collect(), "per_class");

    let n = &r.counts;
    let core_sum = |f: fn(&irqlab_core::metrics::CoreReportCounts) -> u64| -> u64 {
        r.per_core.iter().map(|x| f(&x.counts)).sum()
    };
    assert_eq!(core_sum(|x| x.irqs), n.irqs);
    assert_eq!(core_sum(|x| x.polls), n.polls);
    assert_eq!(core_sum(|x| x.polled_packets), n.polled_packets);
    assert_eq!(core_sum(|x| x.softirq_runs), n.softirq_runs);
    assert_eq!(core_sum(|x| x.ksoftirqd_wakeups), n.ksoftirqd_wakeups);
    assert_eq!(core_sum(|x| x.time_squeeze), n.time_squeeze);
    assert_eq!(core_sum(|x| x.context_switches), n.context_switches);
    let queue_sum = |f: fn(&irqlab_core::metrics::VectorCounts) -> u64| -> u64 {
        r.per_queue.iter().map(|x| f(&x.counts)).sum()
    };
    assert_eq!(queue_sum(|x| x.irqs), n.irqs);
    assert_eq!(queue_sum(|x| x.polls), n.polls);
    assert_eq!(queue_sum(|x| x.tx_cleaned), n.tx_cleaned);
    assert_eq!(
        r.per_queue.iter().map(|x| x.in_tx_ring).sum::<u64>(),
        p.in_tx_ring
    );
    assert_eq!(
        r.per_app.iter().map(|a| a.consumed).sum::<u64>(),
        p.consumed
    );
    assert_eq!(
        r.per_app.iter().map(|a| a.dropped_socket).sum::<u64>(),
        p.dropped_socket
    );
    assert_eq!(
        r.per_app.iter().map(|a| a.in_socket).sum::<u64>(),
        p.in_socket
    );
    assert_eq!(r.per_app.iter().map(|a| a.in_app).sum::<u64>(), p.in_app);
    assert_eq!(
        r.per_class.iter().map(|c| c.consumed).sum::<u64>(),
        p.consumed
    );
}

/// Two or three NAPIs on one core: `net_rx_action`'s poll list, repoll list, shared budget,
/// time limit and the hand-off to ksoftirqd.
mod several_napis_on_one_core {
    use super::*;

    /// `ideal` (an arrival schedules its NAPI at once, no IRQ) with `queues` vectors on core 0,
    /// 64 flows, deterministic 1 us protocol processing, CBR at `rate`.
    fn napis(queues: i128, rate: f64) -> Pairs {
        exact("ideal")
            .with("nic.queues", i(queues))
            .with("traffic.flows", i(64))
            .rate_pps(rate)
            .proto_ns(1000.0)
    }

    /// Overload: 4 Mpps against 1 Mpps of service, 16-slot rings: every ring stays full, so
    /// every poll uses its whole weight of 4.
    fn busy(queues: i128) -> Pairs {
        napis(queues, 4e6)
            .with("kernel.napi_weight", i(4))
            .with("nic.ring_descriptors", i(16))
    }

    /// The polls after the rings have filled (the first 50 us are a start-up transient).
    fn steady(log: &Log) -> Vec<&PollCall> {
        log.polls.iter().filter(|p| p.t >= 50 * US).collect()
    }

    #[test]
    fn napis_are_polled_in_the_order_they_were_scheduled() {
        // Three vectors with one Rx slot each and 10 us of protocol processing per packet,
        // packets every 1 us: an accepted packet schedules its NAPI at its arrival, and each
        // poll takes exactly that one packet. While one packet is processed the other vectors'
        // next packets wait, their NAPIs on the poll list in arrival order: FIFO service of
        // the poll list means packets leave in the order they were accepted.
        let sc = napis(3, 1e6)
            .with("nic.ring_descriptors", i(1))
            .proto_ns(10_000.0)
            .duration_ms(5.0)
            .build();
        assert!(sc.topology.queue_flows.iter().all(|&n| n > 0));
        let (r, log) = traced(&sc);
        check_laws(&r);
        assert!(log.polls.iter().all(|p| p.packets == 1 && p.ids.len() == 1));
        let served: Vec<u64> = log.polls.iter().map(|p| p.ids[0]).collect();
        let accepted: Vec<u64> = (0..log.accepted.len() as u64)
            .filter(|&id| log.accepted[id as usize])
            .collect();
        assert_eq!(
            served,
            accepted[..served.len()],
            "polled in the order they were scheduled"
        );
        assert!(accepted.len() - served.len() <= 3, "the rest is in flight");
        // The order was a real choice: most polls started with two NAPIs waiting.
        let waiting_two = log
            .polls
            .windows(3)
            .filter(|w| {
                let start = w[1].t - 10 * US;
                log.arrival_ps[w[2].ids[0] as usize] < start
            })
            .count();
        assert!(
            waiting_two > log.polls.len() / 2,
            "{waiting_two} of {}",
            log.polls.len()
        );
        // ... and not the vectors' index order.
        let vectors: Vec<usize> = log.polls.iter().map(|p| p.vector).collect();
        assert!(vectors.windows(2).any(|w| w[0] > w[1]) && vectors.windows(2).any(|w| w[0] < w[1]));
    }

    #[test]
    fn a_napi_that_used_its_weight_goes_behind_the_others() {
        // Three always-busy vectors, weight 4, budget large: each poll takes 4 packets (4 us)
        // and goes to the repoll list, behind the NAPIs still to be polled: a strict rotation.
        let sc = busy(3)
            .with("kernel.netdev_budget", i(1 << 20))
            .duration_ms(2.0)
            .build();
        let (r, log) = traced(&sc);
        check_laws(&r);
        let polls = steady(&log);
        assert!(polls.len() > 400, "{}", polls.len());
        for p in &polls {
            assert_eq!((p.packets, p.work), (4, 4), "{p:?}");
        }
        for w in polls.windows(2) {
            assert_eq!(w[1].t - w[0].t, 4 * US, "back to back: {w:?}");
        }
        for w in polls.windows(4) {
            let v: Vec<usize> = w.iter().map(|p| p.vector).collect();
            assert!(
                v[0] != v[1] && v[1] != v[2] && v[0] != v[2] && v[3] == v[0],
                "not a rotation: {v:?}"
            );
        }
        assert_eq!(r.counts.time_squeeze, 0, "the budget was never the limit");
    }

    #[test]
    fn the_budget_is_shared_by_the_pass() {
        // Two busy vectors, weight 4, netdev_budget 6: a pass polls the first (6 - 4 = 2 left,
        // > 0: go on), then the second (2 - 4 < 0: stop, time_squeeze). 100 ns of entry cost per
        // pass make the passes visible: 4 us between the polls of a pass, 4.1 us across passes.
        let base = busy(2)
            .with("platform.softirq_ns", f(100.0))
            .duration_ms(2.0);
        let (r, log) = traced(&base.clone().with("kernel.netdev_budget", i(6)).build());
        check_laws(&r);
        let polls = steady(&log);
        let gaps: Vec<u64> = polls.windows(2).map(|w| w[1].t - w[0].t).collect();
        assert!(gaps.len() > 300);
        let first = usize::from(gaps[0] != 4_100_000);
        for (k, g) in gaps.iter().enumerate().skip(first) {
            let want = if (k - first) % 2 == 0 {
                4_100_000
            } else {
                4_000_000
            };
            assert_eq!(*g, want, "gap {k}: two polls per pass");
        }
        for w in polls.windows(2) {
            assert_ne!(w[0].vector, w[1].vector);
        }
        let (runs, squeezed) = (r.counts.softirq_runs, r.counts.time_squeeze);
        assert!(
            runs > 200 && squeezed + 2 >= runs && squeezed <= runs,
            "every pass is squeezed: {runs} runs, {squeezed} squeezes"
        );
        assert!(
            r.counts.polls.abs_diff(2 * runs) <= 2,
            "{} polls",
            r.counts.polls
        );

        // Budget 8: 8 - 4 - 4 = 0, "budget <= 0": still squeezed.
        let r8 = run(&base.clone().with("kernel.netdev_budget", i(8)).build());
        let (runs8, squeezed8) = (r8.counts.softirq_runs, r8.counts.time_squeeze);
        assert!(
            squeezed8 + 2 >= runs8 && squeezed8 <= runs8,
            "{runs8} runs, {squeezed8} squeezes"
        );

        // Budget 9: 9 - 4 - 4 = 1 > 0, but the local list is empty: the pass ends without a
        // squeeze (the two NAPIs are requeued and the softirq re-raised).
        let r9 = run(&base.clone().with("kernel.netdev_budget", i(9)).build());
        assert_eq!(r9.counts.time_squeeze, 0);
        assert!(r9.counts.polls.abs_diff(2 * r9.counts.softirq_runs) <= 2);

        // Three vectors, budget 6: two polls a pass, and the one left over goes first in the
        // next pass: the rotation holds across passes (no NAPI starves).
        let (r3, log3) = traced(&busy(3).with("kernel.netdev_budget", i(6)).build());
        check_laws(&r3);
        let polls = steady(&log3);
        for w in polls.windows(4) {
            let v: Vec<usize> = w.iter().map(|p| p.vector).collect();
            assert!(
                v[0] != v[1] && v[1] != v[2] && v[0] != v[2] && v[3] == v[0],
                "{v:?}"
            );
        }
    }

    #[test]
    fn the_time_limit_ends_a_pass_in_jiffies() {
        // A pass also ends when its local list is empty, so the time limit shows only with
        // long polls and many NAPIs: 12 busy vectors, weight 1, 250 us of protocol processing
        // (polls end on quarter milliseconds), no budget limit; 60 ms. The first pass polls
        // the first vector alone (the others are scheduled meanwhile); the second starts at
        // 0.25 ms, in jiffy 0. A pass starting in jiffy j ends with the first poll to return
        // at or after jiffy j + limit, squeezed.
        let cases = [
            // hz 1000, 2 jiffies (the default): passes [0.25, 2], [2, 4], ..., [58, 60): the
            // squeezes at 2, 4, ..., 58 ms; 8 polls a pass.
            (1000, 0, 31, 29),
            // 2500 us is 2.5 jiffies, rounded up to 3: passes [0.25, 3], [3, 6], ..., [57, 60)
            // of 12 polls.
            (1000, 2500, 21, 19),
            // hz 250: 2 jiffies are 8 ms, more than the 3 ms that 12 polls take: the local
            // list runs dry first, no squeeze: passes [0.25, 3.25], ..., [57.25, 60).
            (250, 0, 21, 0),
        ];
        for (hz, usecs, runs, squeezed) in cases {
            let sc = napis(12, 1e6)
                .with("traffic.flows", i(1024))
                .with("nic.ring_descriptors", i(16))
                .with("kernel.napi_weight", i(1))
                .with("kernel.netdev_budget", i(1 << 20))
                .proto_ns(250_000.0)
                .with("kernel.hz", i(hz))
                .with("kernel.netdev_budget_usecs", i(usecs))
                .duration_ms(60.0)
                .build();
            assert!(sc.topology.queue_flows.iter().all(|&n| n > 0));
            let (r, log) = traced(&sc);
            check_laws(&r);
            assert!(
                log.polls
                    .iter()
                    .all(|p| p.t % (250 * US) == 0 && p.work == 1)
            );
            assert_eq!(log.polls.len(), 239, "back to back from 0.25 to 59.75 ms");
            assert_eq!(
                (r.counts.softirq_runs, r.counts.time_squeeze),
                (runs, squeezed),
                "hz {hz}, netdev_budget_usecs {usecs}"
            );
        }
    }

    #[test]
    fn after_max_softirq_restart_passes_ksoftirqd_takes_over_on_the_vectors_core() {
        // Both vectors on core 1 of two; weight 4, budget 6; 100 Mpps fill both 16-slot rings
        // within nanoseconds. Inline, from t = 0: pass 1 polls vector A alone (B is scheduled
        // meanwhile): 4 us; pass 2 polls B and A (8 us, squeezed); pass 3 the same, until
        // 20 us. handle_softirqs has made max_softirq_restart = 3 passes: it wakes core 1's
        // ksoftirqd, which keeps the overloaded core to itself and never sleeps again.
        let handoff = |restart: i128| {
            let sc = napis(2, 1e8)
                .with("nic.ring_descriptors", i(16))
                .with("kernel.napi_weight", i(4))
                .with("host.cores", i(2))
                .with("nic.irq_affinity", list(&[1, 1]))
                .with("kernel.netdev_budget", i(6))
                .with("kernel.max_softirq_restart", i(restart))
                .duration_ms(0.5)
                .build();
            let (r, log) = traced(&sc);
            check_laws(&r);
            assert!(log.polls.iter().all(|p| p.core == 1));
            let (core0, core1) = (&r.per_core[0], &r.per_core[1]);
            assert_eq!(
                core0.cpu_ps.idle, core0.cpu_ps.measured,
                "core 0 has no vector"
            );
            let k0 = &core0.counts;
            assert_eq!(
                (k0.softirq_runs, k0.ksoftirqd_wakeups, k0.time_squeeze),
                (0, 0, 0)
            );
            assert_eq!(core1.counts.time_squeeze, r.counts.time_squeeze);
            assert!(r.counts.time_squeeze > 0);
            assert_eq!(core1.counts.ksoftirqd_wakeups, 1);
            assert_eq!(
                core1.counts.context_switches, 1,
                "switched in once, never left"
            );
            assert_eq!(r.counts.ksoftirqd_wakeups, 1);
            let c = &core1.cpu_ps;
            assert_eq!(c.idle, 0);
            assert_eq!(c.softirq + c.ksoftirqd, c.measured);
            assert_eq!(r.cpu_ps.ksoftirqd, c.ksoftirqd, "all of it on core 1");
            c.softirq
        };
        assert_eq!(handoff(3), (4 + 8 + 8) * US, "three passes inline");
        assert_eq!(handoff(10), (4 + 9 * 8) * US, "ten passes inline");
        assert_eq!(handoff(1), 4 * US, "one pass inline");
    }
}

/// Each vector's IRQ and softirq work runs on its core (`nic.irq_affinity`, default v mod cores).
mod vectors_run_on_their_cores {
    use super::*;

    /// `napi` at 100 kpps (a packet every 10 us), 64 flows: IRQ 1 us, protocol processing 2 us;
    /// every packet is done before the next arrives, so each costs exactly one IRQ and 3 us on
    /// its vector's core.
    fn light(cores: i128, queues: i128) -> Pairs {
        exact("napi")
            .with("host.cores", i(cores))
            .with("nic.queues", i(queues))
            .with("traffic.flows", i(64))
            .rate_pps(100_000.0)
            .irq_ns(1000.0)
            .proto_ns(2000.0)
            .duration_ms(10.0)
    }

    /// Every core's IRQ and softirq time is exactly its vectors' packets' cost.
    fn check_cores(r: &Report, affinity: &[usize]) {
        check_laws(r);
        assert_eq!(r.packets.offered, 1000);
        for (v, q) in r.per_queue.iter().enumerate() {
            assert_eq!(q.core, affinity[v], "vector {v}");
            assert_eq!(q.counts.irqs, q.path.offered, "one IRQ per packet");
            assert_eq!(q.path.delivered, q.path.offered);
        }
        for c in &r.per_core {
            let mine: Vec<usize> = (0..affinity.len())
                .filter(|&v| affinity[v] == c.core)
                .collect();
            assert_eq!(c.vectors, mine, "core {}", c.core);
            let irqs: u64 = mine.iter().map(|&v| r.per_queue[v].counts.irqs).sum();
            let packets: u64 = mine.iter().map(|&v| r.per_queue[v].path.delivered).sum();
            assert_eq!(c.counts.irqs, irqs);
            assert_eq!(c.path.delivered, packets);
            assert_eq!(c.cpu_ps.irq, irqs * US, "core {}", c.core);
            assert_eq!(c.cpu_ps.softirq, packets * 2 * US, "core {}", c.core);
            assert_eq!(c.cpu_ps.ksoftirqd + c.cpu_ps.app, 0);
            if mine.is_empty() {
                assert_eq!(
                    c.cpu_ps.idle, c.cpu_ps.measured,
                    "core {} has no vector",
                    c.core
                );
                assert_eq!(c.counts.polls + c.counts.softirq_runs, 0);
            } else {
                assert!(packets > 0, "core {} got traffic", c.core);
            }
        }
    }

    #[test]
    fn pinned_vectors_charge_their_cores_and_the_others_stay_idle() {
        // Vector 0 on core 2, vector 1 on core 0; core 1 has none.
        let sc = light(3, 2).with("nic.irq_affinity", list(&[2, 0])).build();
        assert_eq!(sc.topology.vector_core, [2, 0]);
        check_cores(&run(&sc), &[2, 0, 0][..2]);
        // Two vectors on one core of two: all the work there.
        let sc = light(2, 2).with("nic.irq_affinity", list(&[1, 1])).build();
        check_cores(&run(&sc), &[1, 1]);
    }

    #[test]
    fn the_default_affinity_is_vector_mod_cores() {
        check_cores(&run(&light(3, 5).build()), &[0, 1, 2, 0, 1]);
        // More cores than vectors: cores 2 and 3 idle.
        check_cores(&run(&light(4, 2).build()), &[0, 1]);
    }
}

/// `host.forward`: the Tx ring, the wire, Tx cleaning and Tx completion interrupts.
mod forwarding {
    use super::*;

    #[test]
    fn frames_leave_at_the_link_rate() {
        // CBR above the line rate, cheap forwarding (170 ns a packet, 5.9 Mpps of CPU): the
        // wire is the bottleneck, the Tx ring overflows, and what leaves is the line rate:
        // link_gbps·1e9 / 8 / (size + 20) frames per second.
        for (gbps, size, rate) in [(1.0, 64, 3e6), (10.0, 1500, 1.2e6)] {
            let r = run(&exact("napi")
                .with("host.forward", b(true))
                .with("nic.link_gbps", f(gbps))
                .with("traffic.size_bytes", i(size))
                .rate_pps(rate)
                .irq_ns(500.0)
                .proto_ns(100.0)
                .with("platform.tx_ns", f(50.0))
                .with("platform.tx_clean_ns", f(20.0))
                .with("run.warmup_ms", f(2.0))
                .duration_ms(20.0)
                .build());
            check_laws(&r);
            let line = gbps * 1e9 / 8.0 / (size as f64 + 20.0);
            let sent = r.packets.transmitted as f64 / r.measured_s;
            assert!(
                (sent - line).abs() < 0.005 * line,
                "{gbps} Gbit/s, {size} B: {sent} pps vs {line}"
            );
            assert!(r.packets.dropped_tx > 0, "the Tx ring overflows");
            assert_eq!(r.packets.dropped_nic, 0, "the CPU keeps up");
            assert_eq!(r.counts.tx_cleaned, r.packets.transmitted);
        }
    }

    #[test]
    fn the_emmerich_preset_forwards_at_its_calibrated_rate() {
        // Its per-packet cost already is the whole forwarding path (Tx costs 0), so forwarding
        // over the 10 GbE wire (14.88 Mpps) keeps the 2.1 Mpps saturation of the preset.
        let base = Pairs::default()
            .with("scheme", s("napi"))
            .with("platform.preset", s("emmerich2015"))
            .with("driver.moderation", s("off"))
            .with("traffic.size_bytes", i(64))
            .rate_pps(3e6)
            .with("run.warmup_ms", f(5.0))
            .duration_ms(20.0);
        let rx = run(&base.clone().with("host.forward", b(false)).build());
        let fwd = run(&base.with("host.forward", b(true)).build());
        check_laws(&fwd);
        assert_eq!(rx.packets.delivered, fwd.packets.delivered);
        assert!(
            (fwd.throughput_pps - 2.1e6).abs() < 0.05e6,
            "{} pps",
            fwd.throughput_pps
        );
        // What was delivered leaves, up to the frames still in the 512-descriptor Tx ring.
        assert!(fwd.packets.transmitted.abs_diff(fwd.packets.delivered) <= 512);
        assert_eq!(fwd.packets.dropped_tx, 0);
    }

    #[test]
    fn a_full_tx_ring_drops_and_descriptors_are_cleaned_in_a_later_poll() {
        // `ideal` (no Tx interrupts), free CPU, one Tx descriptor, 100 Mbit/s (a 64-byte frame
        // takes 6.72 us), a packet every 2 us for 80 us:
        //  t=0  packet 0 is sent (leaves at 6.72);
        //  t=2, 4, 6  the descriptor is still taken (not left, or not cleaned): dropped;
        //  t=8  the poll first cleans packet 0 (transmitted), then sends packet 4; ...
        // so 1 packet in 4 is sent, and each is counted transmitted at the next poll after it
        // left: 10 sent, 9 transmitted, the last still on the ring; 30 dropped at Tx.
        let sc = exact("ideal")
            .with("host.forward", b(true))
            .with("nic.tx_ring_descriptors", i(1))
            .with("nic.link_gbps", f(0.1))
            .rate_pps(500_000.0)
            .proto_ns(0.0)
            .duration_ms(0.08)
            .build();
        let (r, log) = traced(&sc);
        check_laws(&r);
        let p = &r.packets;
        assert_eq!(p.offered, 40);
        assert_eq!((p.delivered, p.dropped_tx), (10, 30));
        assert_eq!(
            (p.transmitted, r.counts.tx_cleaned, p.in_tx_ring),
            (9, 9, 1)
        );
        let sent: Vec<u64> = (0..40)
            .filter(|id| log.delivered_ps[*id as usize].is_some())
            .collect();
        assert_eq!(sent, (0..10).map(|k| 4 * k).collect::<Vec<_>>());
        assert_eq!(r.per_queue[0].path.dropped_tx, 30);
    }

    /// `napi` forwarding at 10 kpps for 10 ms, IRQ 1 us, protocol 2 us, transmit 0.25 us,
    /// cleaning 0.05 us, 10 Gbit/s: a packet is on the Tx ring at 3.25 us after its arrival and
    /// leaves the wire 67.2 ns later; the next packet comes 100 us later.
    fn lone_packets(tx_irq: bool) -> Report {
        let r = run(&exact("napi")
            .with("host.forward", b(true))
            .with("nic.tx_irq", b(tx_irq))
            .rate_pps(10_000.0)
            .irq_ns(1000.0)
            .proto_ns(2000.0)
            .with("platform.tx_ns", f(250.0))
            .with("platform.tx_clean_ns", f(50.0))
            .duration_ms(10.0)
            .build());
        check_laws(&r);
        assert_eq!(r.packets.offered, 100);
        assert_eq!(r.packets.delivered, 100);
        r
    }

    #[test]
    fn with_tx_irq_a_lone_packet_interrupts_twice() {
        // Rx IRQ at t, poll sends the packet; its write-back at t + 3.3172 us raises the cause
        // again: a second IRQ, whose poll cleans the descriptor.
        let r = lone_packets(true);
        assert_eq!(
            r.counts.irqs, 200,
            "an Rx and a Tx completion IRQ per packet"
        );
        assert_eq!(r.counts.polls, 200);
        assert_eq!((r.packets.transmitted, r.packets.in_tx_ring), (100, 0));
        assert_eq!(r.cpu_ps.irq, 200 * US);
        assert_eq!(r.cpu_ps.softirq, 100 * 2_250_000 + 100 * 50_000);
        assert_eq!(
            r.latency_us.max,
            Some(3.25),
            "on the Tx ring 3.25 us after arrival"
        );
        // Two vectors on two cores: each cleans its own descriptors, on its own core.
        let r2 = run(&exact("napi")
            .cores(2)
            .with("traffic.flows", i(64))
            .with("host.forward", b(true))
            .rate_pps(10_000.0)
            .irq_ns(1000.0)
            .proto_ns(2000.0)
            .duration_ms(10.0)
            .build());
        check_laws(&r2);
        for (v, q) in r2.per_queue.iter().enumerate() {
            assert!(q.path.offered > 0);
            assert_eq!(q.counts.tx_cleaned, q.path.delivered, "vector {v}");
            assert_eq!(q.counts.irqs, 2 * q.path.offered, "vector {v}");
            assert_eq!(r2.per_core[v].cpu_ps.irq, 2 * q.path.offered * US);
        }
        // Without: one IRQ per packet; a descriptor waits for the next packet's poll.
        let r = lone_packets(false);
        assert_eq!(r.counts.irqs, 100);
        assert_eq!(r.counts.polls, 100);
        assert_eq!((r.packets.transmitted, r.packets.in_tx_ring), (99, 1));
        assert_eq!(r.cpu_ps.softirq, 100 * 2_250_000 + 99 * 50_000);
        // ... and that poll cleans it (50 ns) before its Rx packet: 3.3 us.
        assert_eq!(
            (r.latency_us.min, r.latency_us.max),
            (Some(3.25), Some(3.3))
        );
    }

    #[test]
    fn a_tx_work_limit_below_the_cleanable_count_makes_the_poll_incomplete() {
        // Free CPU, ITR of 10 us, a packet every 1 us, no Tx interrupts: an IRQ every 10 us,
        // whose poll finds the previous batch's 10 frames gone (67 ns each at 10 Gbit/s).
        // With tx_work_limit 4 the poll cleans 4, processes the 10 new Rx packets and reports
        // the whole weight: repolled at once, it cleans 4 more (incomplete again), then the
        // last 2 and completes. With 16, one complete poll per IRQ.
        let base = exact("napi")
            .with("host.forward", b(true))
            .with("nic.tx_irq", b(false))
            .with("nic.itr_us", f(10.0))
            .rate_pps(1e6)
            .proto_ns(0.0)
            .duration_ms(0.1);
        let (r, log) = traced(&base.clone().with("driver.tx_work_limit", i(4)).build());
        check_laws(&r);
        let calls: Vec<(u64, u64, u64)> = log
            .polls
            .iter()
            .map(|p| (p.t / US, p.packets, p.work))
            .collect();
        let mut want = vec![(0, 1, 1), (10, 9, 9)];
        for t in (20..100).step_by(10) {
            want.extend([(t, 10, 64), (t, 0, 64), (t, 0, 0)]);
        }
        assert_eq!(calls, want);
        assert_eq!(r.counts.irqs, 10);
        assert_eq!(r.counts.tx_cleaned, 1 + 9 + 7 * 10);
        assert_eq!(r.packets.in_tx_ring, 10);

        let (r, log) = traced(&base.with("driver.tx_work_limit", i(16)).build());
        check_laws(&r);
        assert_eq!(log.polls.len(), 10);
        assert!(log.polls.iter().all(|p| p.work == p.packets && p.work < 64));
        assert_eq!(r.counts.tx_cleaned, 1 + 9 + 7 * 10);
    }
    #[test]
    fn armed_re_enable_still_signals_a_frame_that_left_during_the_poll() {
        // On/off bursts at 1 Gbit/s (one source, seed 1), one Tx descriptor, IRQ 1 us,
        // protocol 2 us, 10 Gbit/s out. The first burst: frames 0, 1, 2 at 1905.585,
        // 1906.257 and 1906.929 us. The ISR ends at 1906.585; the poll sends frame 0 (on the
        // wire until 1908.652), drops 1 and 2 at the full Tx ring and completes at 1912.585.
        // Frame 0's write-back came after the poll's Tx clean: no poll has seen it. Latched,
        // the cause it raised interrupts at unmask and a poll at 1913.585 cleans it. Armed
        // may discard only causes of work the poll did, so it should do the same; it clears
        // the cause and arms only departures still to come, and frame 0's descriptor waits
        // for the next burst's poll (2586.232 us). Over 50 ms: 29 forwarded frames; latched
        // 29 Tx-completion polls, armed 6.
        for mode in ["latched", "armed"] {
            let sc = exact("napi")
                .with("nic.cause_mode", s(mode))
                .with("host.forward", b(true))
                .with("nic.tx_ring_descriptors", i(1))
                .with("traffic.kind", s("pareto-onoff"))
                .with("traffic.sources", i(1))
                .rate_pps(2000.0)
                .irq_ns(1000.0)
                .proto_ns(2000.0)
                .duration_ms(50.0)
                .build();
            let (r, log) = traced(&sc);
            check_laws(&r);
            let first: Vec<(u64, u64)> = log.polls[..2].iter().map(|p| (p.t, p.packets)).collect();
            assert_eq!(
                first,
                [(1_912_585_148, 3), (1_913_585_148, 0)],
                "{mode}: the burst's poll, then the Tx completion's"
            );
            let tx_only = log.polls.iter().filter(|p| p.packets == 0).count() as u64;
            assert_eq!(
                tx_only, r.packets.delivered,
                "{mode}: a Tx completion poll per frame sent"
            );
        }
    }
}

/// Apps: blocking sockets, wake-ups, socket drops, latency and goodput, placement.
mod apps_and_sockets {
    use super::*;

    /// `napi` at 10 kpps for 10 ms with an app reading the one flow: IRQ 1 us, protocol 2 us,
    /// waking the app 0.2 us (softirq), a context switch 0.5 us, the app 1 us a packet.
    fn sleepy(app_core: i128) -> Report {
        let r = run(&exact("napi")
            .with("host.cores", i(2))
            .rate_pps(10_000.0)
            .irq_ns(1000.0)
            .proto_ns(2000.0)
            .with("platform.task_wakeup_ns", f(200.0))
            .with("platform.ctx_switch_ns", f(500.0))
            .with("app.0.core", i(app_core))
            .with("app.0.flows", list(&[0]))
            .with("app.0.cost_ns", f(1000.0))
            .with("app.0.cost_dist", s("deterministic"))
            .duration_ms(10.0)
            .build());
        check_laws(&r);
        assert_eq!(r.packets.consumed, 100);
        assert_eq!(r.per_app[0].consumed, 100);
        assert_eq!(r.latency_us.mean, Some(3.0));
        r
    }

    #[test]
    fn a_blocking_app_sleeps_and_protocol_processing_wakes_it() {
        // Same core: delivered at 3 us, the wake-up runs in softirq until 3.2, then the
        // switch into the app (3.2 – 3.7) and its packet (3.7 – 4.7); its socket is then
        // empty and it sleeps again: one context switch per packet.
        let r = sleepy(0);
        let c = &r.per_core[0];
        assert_eq!(c.counts.context_switches, 100);
        let lat = r.app_latency_us.mean.unwrap();
        assert!((lat - 4.7).abs() < 1e-9, "{lat}");
        assert_eq!(c.cpu_ps.irq, 100 * US);
        assert_eq!(c.cpu_ps.softirq, 100 * 2_200_000);
        assert_eq!(
            c.cpu_ps.app,
            100 * 1_500_000,
            "switches are charged to the app"
        );
        assert_eq!(r.per_core[1].cpu_ps.idle, r.per_core[1].cpu_ps.measured);
    }

    #[test]
    fn an_app_on_another_core_runs_in_parallel() {
        // App on core 1: the switch starts at 3 us, while core 0 still runs the wake-up
        // (3 – 3.2): consumed at 4.5 us instead of 4.7.
        let r = sleepy(1);
        let lat = r.app_latency_us.mean.unwrap();
        assert!((lat - 4.5).abs() < 1e-9, "{lat}");
        let (c0, c1) = (&r.per_core[0].cpu_ps, &r.per_core[1].cpu_ps);
        assert_eq!((c0.irq, c0.softirq, c0.app), (100 * US, 100 * 2_200_000, 0));
        assert_eq!((c1.irq, c1.softirq, c1.app), (0, 0, 100 * 1_500_000));
        assert_eq!(r.per_core[1].counts.context_switches, 100);
        assert_eq!(r.per_core[0].counts.context_switches, 0);
        assert_eq!(r.per_core[1].goodput_bps, r.goodput_bps);
        assert_eq!(r.per_core[0].goodput_bps, 0.0);
    }

    #[test]
    fn a_slow_app_fills_its_socket_and_the_rest_is_dropped() {
        // 200 kpps to an app on core 1 that needs 10 us a packet: it consumes 100 kpps, its
        // socket stays full and the other half is dropped at the socket. A 230400-byte buffer
        // holds about 230400 / 2304 = 100 packets (less what was read but not yet released,
        // at most a quarter of the buffer; one more may overshoot), so each consumed packet
        // waited about 100 app costs.
        let rcvbuf = 230_400u64;
        let r = run(&exact("napi")
            .with("host.cores", i(2))
            .rate_pps(200_000.0)
            .irq_ns(1000.0)
            .proto_ns(1000.0)
            .with("app.0.core", i(1))
            .with("app.0.flows", list(&[0]))
            .with("app.0.cost_ns", f(10_000.0))
            .with("app.0.cost_dist", s("deterministic"))
            .with("app.0.rcvbuf_bytes", i(rcvbuf as i128))
            .with("run.warmup_ms", f(2.0))
            .duration_ms(20.0)
            .build());
        check_laws(&r);
        let (p, a) = (&r.packets, &r.per_app[0]);
        assert!(
            (a.consumed_pps - 100_000.0).abs() < 100.0,
            "{}",
            a.consumed_pps
        );
        assert!(p.dropped_socket > 1900, "{}", p.dropped_socket);
        assert_eq!(a.dropped_socket, p.dropped_socket);
        assert_eq!(r.per_class[0].path.dropped_socket, p.dropped_socket);
        assert_eq!(p.dropped_nic, 0);
        let full = rcvbuf / 2304;
        assert!(
            (full - full / 4 - 1..=full + 1).contains(&a.in_socket),
            "{} packets in a socket of {full}",
            a.in_socket
        );
        let lat = a.app_latency_us.mean.unwrap();
        assert!((740.0..=1030.0).contains(&lat), "{lat} us");
    }

    /// Two cores, two queues, 32 flows, Poisson traffic and exponential costs; an app on
    /// each core reading the flows RSS steers there, 200-byte frames.
    fn busy_apps() -> Scenario {
        Pairs::default()
            .cores(2)
            .with("traffic.flows", i(32))
            .with("traffic.size_bytes", i(200))
            .rate_pps(150_000.0)
            .irq_ns(1000.0)
            .proto_ns(2000.0)
            .with("platform.task_wakeup_ns", f(300.0))
            .with("platform.ctx_switch_ns", f(800.0))
            .with("app.0.core", i(0))
            .with("app.0.cost_ns", f(3000.0))
            .with("app.1.core", i(1))
            .with("app.1.cost_ns", f(6000.0))
            .with("app.1.rcvbuf_bytes", i(20_000))
            .with("run.warmup_ms", f(0.0))
            .duration_ms(20.0)
            .build()
    }

    #[test]
    fn app_latency_is_at_least_protocol_latency_for_every_packet() {
        let sc = busy_apps();
        let (r, log) = traced(&sc);
        check_laws(&r);
        assert!(r.packets.consumed > 1000 && r.packets.dropped_socket > 0);
        let mut seen = vec![false; log.arrival_ps.len()];
        for &(app, id, t) in &log.consumed {
            assert!(app < 2);
            assert!(
                !std::mem::replace(&mut seen[id as usize], true),
                "{id} consumed twice"
            );
            let done = log.delivered_ps[id as usize].expect("consumed packets were delivered");
            assert!(
                t >= done,
                "packet {id}: consumed at {t} before delivered at {done}"
            );
            assert!(done >= log.arrival_ps[id as usize]);
        }
        assert_eq!(log.consumed.len() as u64, r.packets.consumed, "no warm-up");
        assert!(r.app_latency_us.mean >= r.latency_us.mean);
        assert!(r.app_latency_us.min >= r.latency_us.min);
    }

    #[test]
    fn goodput_is_consumed_ip_bytes_per_second() {
        // 200-byte frames carry 182 bytes of IP packet (minus Ethernet header and FCS).
        let r = run(&busy_apps());
        check_laws(&r);
        let want = |n: u64| n as f64 * 182.0 / r.measured_s;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.max(1.0);
        assert!(
            close(r.goodput_bps, want(r.packets.consumed)),
            "{}",
            r.goodput_bps
        );
        for a in &r.per_app {
            assert!(a.consumed > 0);
            assert!(close(a.goodput_bps, want(a.consumed)), "app {}", a.app);
            assert!(close(a.consumed_pps, a.consumed as f64 / r.measured_s));
        }
        let per_core: f64 = r.per_core.iter().map(|c| c.goodput_bps).sum();
        let per_class: f64 = r.per_class.iter().map(|c| c.goodput_bps).sum();
        assert!(close(per_core, r.goodput_bps) && close(per_class, r.goodput_bps));
    }

    #[test]
    fn flows_no_app_reads_end_in_the_stack() {
        // Two queues on two cores; the app on core 1 reads exactly the flows RSS steers to
        // queue 1: queue 0's packets all end in the stack, queue 1's all go to the socket.
        let base = exact("napi")
            .cores(2)
            .with("traffic.flows", i(16))
            .rate_pps(100_000.0)
            .irq_ns(500.0)
            .proto_ns(1000.0)
            .duration_ms(10.0);
        let queues = base.build().topology.flow_queue;
        let mine: Vec<i128> = (0..16)
            .filter(|&f| queues[f] == 1)
            .map(|f| f as i128)
            .collect();
        assert!(!mine.is_empty() && mine.len() < 16);
        let sc = base
            .with("app.0.core", i(1))
            .with("app.0.flows", list(&mine))
            .with("app.0.cost_dist", s("deterministic"))
            .build();
        assert_eq!(sc.topology.flow_queue, queues, "apps do not move flows");
        let r = run(&sc);
        check_laws(&r);
        assert_eq!(r.per_app[0].flows as usize, mine.len());
        let (q0, q1) = (&r.per_queue[0].path, &r.per_queue[1].path);
        assert!(q0.delivered > 0 && q1.delivered > 0);
        assert_eq!(r.packets.to_stack, q0.delivered);
        assert_eq!(
            q1.delivered,
            r.packets.consumed + r.packets.in_socket + r.packets.in_app,
            "queue 1's packets all went to the app"
        );
    }
}

/// The thread level: an app and ksoftirqd share a core by round robin with a time slice.
mod fair_share_of_a_core {
    use super::*;

    /// One core in overload (1.5 Mpps, protocol 1 us): `napi` with weight and budget 8 and one
    /// softirq pass before the hand-off, so ksoftirqd runs passes of exactly 8 us (the vector
    /// stays masked: no more IRQs); an app needing 5 us a packet, `app` = whether it is on
    /// this core (else on core 1 of 2).
    fn shared(slice_us: f64, app_here: bool) -> Pairs {
        exact("napi")
            .with("host.cores", i(if app_here { 1 } else { 2 }))
            .rate_pps(1.5e6)
            .irq_ns(1000.0)
            .proto_ns(1000.0)
            .with("kernel.napi_weight", i(8))
            .with("kernel.netdev_budget", i(8))
            .with("kernel.max_softirq_restart", i(1))
            .with("kernel.sched_slice_us", f(slice_us))
            .with("app.0.core", i(if app_here { 0 } else { 1 }))
            .with("app.0.flows", list(&[0]))
            .with("app.0.cost_ns", f(5000.0))
            .with("app.0.cost_dist", s("deterministic"))
            .with("run.warmup_ms", f(2.0))
            .duration_ms(20.0)
    }

    #[test]
    fn app_and_ksoftirqd_share_by_slices() {
        // Each thread keeps the core until it has used its slice, then yields at its next
        // switch point: ksoftirqd after a pass (8 us), the app after a packet (5 us).
        //  slice 1 us:   8 us of ksoftirqd, 5 us of app:         shares 8/13, 5/13;
        //  slice 100 us: 13 passes (104 us), 20 packets (100 us): 104/204, 100/204.
        for (slice, ksoftirqd, app) in [
            (1.0, 8.0 / 13.0, 5.0 / 13.0),
            (100.0, 104.0 / 204.0, 100.0 / 204.0),
        ] {
            let sc = shared(slice, true).build();
            let (r, log) = traced(&sc);
            check_laws(&r);
            let c = &r.per_core[0].cpu;
            assert!(c.ksoftirqd > 0.0 && c.app > 0.0);
            assert_eq!(
                r.cpu_ps.irq + r.cpu_ps.softirq + r.cpu_ps.idle,
                0,
                "{:?}",
                r.cpu_ps
            );
            assert!(
                (c.ksoftirqd - ksoftirqd).abs() < 0.003,
                "slice {slice}: ksoftirqd {}",
                c.ksoftirqd
            );
            assert!((c.app - app).abs() < 0.003, "slice {slice}: app {}", c.app);
            assert!(
                r.packets.dropped_nic > 0 && r.packets.dropped_socket > 0,
                "overload"
            );
            // Neither waits much longer than a slice: the longest gap between two packets
            // the app finished, or between two polls, is the other's turn plus one unit.
            let warm = 2_000 * US;
            let max_gap = |ts: Vec<u64>| ts.windows(2).map(|w| w[1] - w[0]).max().unwrap();
            let app_gap = max_gap(
                log.consumed
                    .iter()
                    .map(|c| c.2)
                    .filter(|&t| t > warm)
                    .collect(),
            );
            let poll_gap = max_gap(
                log.polls
                    .iter()
                    .map(|p| p.t)
                    .filter(|&t| t > warm)
                    .collect(),
            );
            let bound = (slice * 1e6) as u64 + 8 * US + 5 * US;
            assert!(
                app_gap <= bound,
                "slice {slice}: the app waited {app_gap} ps"
            );
            assert!(
                poll_gap <= bound,
                "slice {slice}: ksoftirqd waited {poll_gap} ps"
            );
            assert!(app_gap >= (slice * 1e6) as u64 && poll_gap >= (slice * 1e6) as u64);
        }
    }

    #[test]
    fn alone_on_its_core_ksoftirqd_ignores_the_slice() {
        // The app on core 1: ksoftirqd never has anyone to yield to; the report is the same
        // whatever the slice (but for the echoed scenario).
        let report = |slice: f64| {
            let mut r = run(&shared(slice, false).build());
            check_laws(&r);
            assert!(r.per_core[0].cpu_ps.ksoftirqd > 0 && r.per_core[0].cpu_ps.app == 0);
            r.scenario.clear();
            r
        };
        let base = report(0.0);
        for slice in [1.0, 100.0, 5000.0] {
            assert_eq!(report(slice), base, "slice {slice}");
        }
    }
}

/// Random hosts: the conservation laws, the breakdowns, and repeatability.
mod conservation_and_determinism {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;
    use std::cell::Cell;

    fn cost() -> impl Strategy<Value = f64> {
        prop_oneof![Just(0.0), 1.0..5_000.0f64]
    }
    fn dist() -> impl Strategy<Value = &'static str> {
        prop_oneof![Just("deterministic"), Just("exponential")]
    }

    pub(super) fn host() -> impl Strategy<Value = Pairs> {
        (1..=4usize, 1..=6usize, 1..=300usize, 0..=3usize, 0..=3usize)
            .prop_flat_map(|(cores, queues, flows, apps, classes)| {
                (
                    Just((flows, apps)),
                    (
                        Just(cores),
                        Just(queues),
                        prop::option::of(prop::collection::vec(0..cores, queues)),
                    ),
                    prop::collection::vec(0..=apps, flows),
                    prop::collection::vec(
                        (
                            0..cores,
                            any::<bool>(),
                            cost(),
                            dist(),
                            prop_oneof![Just(0i128), 2304..100_000i128],
                        ),
                        apps,
                    ),
                    prop::collection::vec(
                        (any::<bool>(), prop_oneof![Just(0.0), 0.0..1.0f64]),
                        classes,
                    ),
                    (prop_oneof![Just(0.0), 0.2..2.0f64], any::<bool>()),
                    (
                        any::<bool>(),
                        1..=64i128,
                        any::<bool>(),
                        0.1..100.0f64,
                        1..300i128,
                    ),
                    (
                        prop_oneof![
                            Just("ideal"),
                            Just("irq"),
                            Just("napi"),
                            Just("coalesce-count"),
                            Just("coalesce-time")
                        ],
                        any::<u64>(),
                        any::<bool>(),
                        1e3..3e6f64,
                        64..=1518i128,
                        1..=256i128,
                    ),
                    (
                        prop::collection::vec((cost(), dist()), 10),
                        1..=64i128,
                        1..=300i128,
                        1..=10i128,
                        prop_oneof![Just(0.0), 1.0..2_000.0f64],
                    ),
                    (prop_oneof![Just(0.0), 0.0..0.5f64], 0.05..2.0f64),
                )
            })
            .prop_map(
                |(
                    (flows, _apps),
                    (cores, queues, affinity),
                    owners,
                    app_specs,
                    class_specs,
                    (zipf, cbr),
                    (forward, tx_ring, tx_irq, link, tx_limit),
                    (scheme, seed, armed, rate, size, ring),
                    (costs, weight, budget, restart, slice),
                    (warmup, duration),
                )| {
                    let mut p = Pairs::default()
                        .with("scheme", s(scheme))
                        .with("run.seed", i(seed as i128))
                        .with("run.warmup_ms", f(warmup))
                        .duration_ms(duration)
                        .with("host.cores", i(cores as i128))
                        .with("host.forward", b(forward))
                        .with("nic.queues", i(queues as i128))
                        .with("nic.ring_descriptors", i(ring))
                        .with("nic.tx_ring_descriptors", i(tx_ring))
                        .with("nic.tx_irq", b(tx_irq))
                        .with("nic.link_gbps", f(link))
                        .with("nic.cause_mode", s(if armed { "armed" } else { "latched" }))
                        .with("driver.tx_work_limit", i(tx_limit))
                        .with("traffic.kind", s(if cbr { "cbr" } else { "poisson" }))
                        .rate_pps(rate)
                        .with("traffic.size_bytes", i(size))
                        .with("traffic.flows", i(flows as i128))
                        .with("traffic.flow_zipf_s", f(zipf))
                        .with("kernel.napi_weight", i(weight))
                        .with("kernel.netdev_budget", i(budget))
                        .with("kernel.max_softirq_restart", i(restart))
                        .with("kernel.sched_slice_us", f(slice));
                    if let Some(aff) = affinity {
                        let aff: Vec<i128> = aff.iter().map(|&c| c as i128).collect();
                        p = p.with("nic.irq_affinity", list(&aff));
                    }
                    if seed % 3 == 0 {
                        // deferred skb frees, across cores where an app reads another's flows
                        p = p
                            .with("platform.skb_free_ns", f((seed % 997) as f64))
                            .with("kernel.skb_defer_max", i(i128::from(seed % 70)));
                    }
                    let names = [
                        "irq",
                        "softirq",
                        "proto",
                        "poll",
                        "mask",
                        "unmask",
                        "ctx_switch",
                        "task_wakeup",
                        "tx",
                        "tx_clean",
                    ];
                    for (name, (ns, d)) in names.iter().zip(&costs) {
                        p = p
                            .with(&format!("platform.{name}_ns"), f(*ns))
                            .with(&format!("platform.{name}_dist"), s(d));
                    }
                    let pool = ["rt", "be", "bulk"];
                    let total: f64 = class_specs.iter().map(|c| c.1).sum();
                    for (k, (named, w)) in class_specs.iter().enumerate() {
                        let key = |x: &str| format!("traffic.classes.{k}.{x}");
                        p = p.with(&key("name"), s(if *named { pool[k] } else { "" }));
                        let share = if total > 0.0 { w / total } else { 0.0 };
                        p = p.with(&key("share"), f(share));
                    }
                    for (a, (core, explicit, cost, d, rcvbuf)) in app_specs.iter().enumerate() {
                        let key = |x: &str| format!("app.{a}.{x}");
                        p = p
                            .with(&key("core"), i(*core as i128))
                            .with(&key("cost_ns"), f(*cost))
                            .with(&key("cost_dist"), s(d))
                            .with(&key("rcvbuf_bytes"), i(*rcvbuf));
                        if *explicit {
                            let mine: Vec<i128> = (0..flows)
                                .filter(|&fl| owners[fl] == a)
                                .map(|fl| fl as i128)
                                .collect();
                            p = p.with(&key("flows"), list(&mine));
                        }
                    }
                    p
                },
            )
    }

    /// Holds `check` on `TOPO_CASES` (default 150) random hosts it does not reject; a failure
    /// panics with the minimal failing scenario.
    pub(super) fn for_random_hosts(check: impl Fn(Pairs) -> Result<(), TestCaseError>) {
        crate::common::for_random("TOPO_CASES", 150, host(), check);
    }

    #[test]
    fn random_hosts_conserve_and_repeat() {
        let (valid, invalid) = (Cell::new(0u32), Cell::new(0u32));
        for_random_hosts(|pairs| {
            let sc = match pairs.try_build() {
                Ok(sc) => sc,
                Err(e) => {
                    invalid.set(invalid.get() + 1);
                    return Err(TestCaseError::reject(e.to_string()));
                }
            };
            valid.set(valid.get() + 1);
            let a = run(&sc);
            check_laws(&a);
            let b = run(&sc);
            prop_assert_eq!(&a, &b, "the same scenario twice");
            Ok(())
        });
        eprintln!(
            "random hosts: {} valid, {} rejected by Scenario::from_pairs",
            valid.get(),
            invalid.get()
        );
        assert!(valid.get() >= 150);
    }
}

/// A host whose cores do not interact is run core by core; the report is the interleaved
/// run's, bit for bit.
mod core_by_core {
    use super::*;
    use proptest::test_runner::TestCaseError;
    use std::cell::Cell;

    fn same(sc: &Scenario) -> Result<(), String> {
        let split = run(sc);
        let (joint, _) = run_with(sc, NoTrace);
        let (a, b) = (
            serde_json::to_string(&split).unwrap(),
            serde_json::to_string(&joint).unwrap(),
        );
        if a == b {
            Ok(())
        } else {
            Err(format!("core by core:\n{a}\ninterleaved:\n{b}"))
        }
    }

    #[test]
    fn random_independent_hosts_give_the_interleaved_report() {
        let split = Cell::new(0u32);
        super::conservation_and_determinism::for_random_hosts(|pairs| {
            let Ok(sc) = pairs.with("host.forward", b(false)).try_build() else {
                return Err(TestCaseError::reject("invalid"));
            };
            if !runs_core_by_core(&sc) {
                return Err(TestCaseError::reject("cores interact"));
            }
            split.set(split.get() + 1);
            same(&sc).map_err(TestCaseError::fail)
        });
        assert!(split.get() >= 150, "{} hosts run core by core", split.get());
    }

    #[test]
    fn the_polling_loop_schemes_run_core_by_core_alike() {
        for scheme in ["poll", "disable-enable", "napi-poll", "hybrid"] {
            let sc = Pairs::default()
                .with("scheme", s(scheme))
                .with("platform.preset", s("salah2007"))
                .cores(3)
                .with("traffic.flows", i(64))
                .rate_pps(300_000.0)
                .with("run.warmup_ms", f(2.0))
                .duration_ms(20.0)
                .build();
            assert!(runs_core_by_core(&sc));
            same(&sc).unwrap_or_else(|e| panic!("{scheme}: {e}"));
        }
    }

    #[test]
    fn which_hosts_run_core_by_core() {
        let two = Pairs::default().cores(2).with("traffic.flows", i(8));
        assert!(runs_core_by_core(&two.build()));
        assert!(!runs_core_by_core(&exact("napi").build()), "one core");
        assert!(
            !runs_core_by_core(&two.clone().with("host.forward", b(true)).build()),
            "the Tx rings share the wire"
        );
        assert!(
            !runs_core_by_core(&two.clone().with("nic.queues", i(1)).build()),
            "core 1 has no vector"
        );
        // flow 0 is steered to one of the two vectors; an app on the other core reads it
        let sc = two.build();
        let far = 1 - sc.topology.vector_core[sc.topology.flow_queue[0] as usize] as i128;
        let app = |core: i128| {
            two.clone()
                .with("app.0.core", i(core))
                .with("app.0.flows", list(&[0]))
                .build()
        };
        assert!(runs_core_by_core(&app(1 - far)));
        assert!(
            !runs_core_by_core(&app(far)),
            "an app reads another core's flow"
        );
    }
}

/// Configuration errors name their key and say, in one line, what is allowed.
mod bad_input_names_the_key {
    use super::*;

    fn fails(pairs: Pairs, key: &str, says: &str) {
        let e = match pairs.try_build() {
            Ok(_) => panic!("{pairs:?} should fail on {key}"),
            Err(e) => e,
        };
        let msg = e.to_string();
        assert_eq!(e.key(), key, "{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
        assert!(msg.starts_with(key), "starts with its key: {msg}");
        assert!(msg.contains(says), "'{msg}' should say '{says}'");
    }

    fn two_cores() -> Pairs {
        Pairs::default().with("host.cores", i(2))
    }

    #[test]
    fn topology() {
        fails(
            two_cores()
                .with("nic.queues", i(2))
                .with("nic.irq_affinity", list(&[0, 5])),
            "nic.irq_affinity",
            "has cores 0 … 1",
        );
        fails(
            two_cores()
                .with("nic.queues", i(3))
                .with("nic.irq_affinity", list(&[0, 1])),
            "nic.irq_affinity",
            "needs one core per vector: 2 entries for nic.queues = 3",
        );
        fails(
            Pairs::default().with("host.cores", i(0)),
            "host.cores",
            "must be an integer in 1 … 1024",
        );
        fails(
            Pairs::default().with("nic.queues", i(0)),
            "nic.queues",
            "must be an integer in 1 … 1024",
        );
        // Salah's polling loop serves one vector per core.
        fails(
            Pairs::default()
                .with("scheme", s("disable-enable"))
                .with("nic.queues", i(2)),
            "nic.queues",
            "one queue vector per core",
        );
        fails(
            two_cores()
                .with("scheme", s("poll"))
                .with("nic.queues", i(2))
                .with("nic.irq_affinity", list(&[1, 1])),
            "nic.irq_affinity",
            "one queue vector per core",
        );
        fails(
            Pairs::default()
                .with("host.forward", b(true))
                .with("nic.tx_ring_descriptors", i(0)),
            "nic.tx_ring_descriptors",
            "needs a Tx ring",
        );
    }

    #[test]
    fn classes() {
        fails(
            Pairs::default()
                .with("traffic.classes.0.share", f(0.5))
                .with("traffic.classes.1.share", f(0.3)),
            "traffic.classes.0.share",
            "must sum to 1",
        );
        fails(
            Pairs::default()
                .with("traffic.classes.0.name", s("rt"))
                .with("traffic.classes.1.name", s("rt")),
            "traffic.classes.1.name",
            "another class has this name",
        );
    }

    #[test]
    fn apps() {
        fails(
            two_cores().with("app.0.core", i(2)),
            "app.0.core",
            "has cores 0 … 1",
        );
        // One queue, on core 0: nothing is steered to core 1.
        fails(
            two_cores().with("app.0.core", i(1)),
            "app.0.flows",
            "reads no flow",
        );
        fails(
            Pairs::default()
                .with("traffic.flows", i(4))
                .with("app.0.flows", list(&[1, 5])),
            "app.0.flows",
            "flow 5 does not exist: traffic.flows = 4 has flows 0 … 3",
        );
        fails(
            Pairs::default()
                .with("traffic.flows", i(4))
                .with("app.0.flows", list(&[1]))
                .with("app.1.flows", list(&[2, 1])),
            "app.1.flows",
            "flow 1 is read by app 0 already",
        );
        fails(
            Pairs::default()
                .with("socket.rcvbuf_bytes", i(2000))
                .with("app.0.core", i(0)),
            "socket.rcvbuf_bytes",
            "charged 2304 bytes of truesize",
        );
        fails(
            Pairs::default().with("app.0.rcvbuf_bytes", i(2303)),
            "app.0.rcvbuf_bytes",
            "charged 2304 bytes of truesize",
        );
        // A buffer of exactly one packet is enough.
        assert!(
            Pairs::default()
                .with("app.0.rcvbuf_bytes", i(2304))
                .try_build()
                .is_ok()
        );
        fails(
            Pairs::default().with("app.1.core", i(0)),
            "app.0",
            "numbered from 0 without gaps",
        );
    }

    #[test]

    fn a_flow_listed_twice_is_named_as_such() {
        // app.0.flows = [1, 1]: the list repeats flow 1 (not "read by app 0 already": app 0
        // is the app being configured).
        let e = Pairs::default()
            .with("traffic.flows", i(4))
            .with("app.0.flows", list(&[1, 1]))
            .try_build()
            .unwrap_err();
        assert_eq!(e.key(), "app.0.flows");
        assert!(!e.to_string().contains("read by app 0 already"), "{e}");
        assert!(e.to_string().contains("flow 1 is listed twice"), "{e}");
    }
}

/// The report's derived figures, each against the rule that defines it.
mod report_figures {
    use super::*;

    /// `napi` at 100 kpps on two cores, one vector each: IRQ 1 us and protocol processing
    /// 2 us a packet, every packet done before the next arrives (one IRQ, one poll each).
    fn light() -> Pairs {
        exact("napi")
            .cores(2)
            .with("traffic.flows", i(64))
            .rate_pps(100_000.0)
            .irq_ns(1000.0)
            .proto_ns(2000.0)
            .duration_ms(10.0)
    }

    #[test]
    fn cycles_per_packet_are_busy_cycles_of_every_core_per_delivered_packet() {
        // busy share x cores x clock / throughput: 3 us of work a packet at 2.5 GHz is 7500
        // cycles, for the host (two cores) and for each core alike.
        let r = run(&light().with("platform.cpu_ghz", f(2.5)).build());
        check_laws(&r);
        assert_eq!(r.packets.delivered, 1000);
        let cycles = r.cycles_per_packet.expect("packets were delivered");
        assert!((cycles - 7500.0).abs() < 1e-6, "{cycles}");
        for c in &r.per_core {
            assert!(c.path.delivered > 0, "core {} got traffic", c.core);
            let cycles = c.cycles_per_packet.expect("packets were delivered");
            assert!((cycles - 7500.0).abs() < 1e-6, "core {}: {cycles}", c.core);
        }
    }

    #[test]
    fn packets_per_poll_is_polled_packets_over_polls_and_none_without_polls() {
        let r = run(&light().build());
        assert_eq!(r.counts.polls, 1000, "one poll a packet");
        assert_eq!(r.counts.polled_packets, 1000);
        assert_eq!(r.packets_per_poll, Some(1.0));
        for q in &r.per_queue {
            assert_eq!(
                q.packets_per_poll,
                Some(q.counts.polled_packets as f64 / q.counts.polls as f64),
                "queue {}",
                q.queue
            );
        }
        for c in &r.per_core {
            assert_eq!(c.counts.polls, c.path.delivered, "core {}", c.core);
            assert_eq!(c.packets_per_poll, Some(1.0), "core {}", c.core);
        }
        // A window no packet arrives in (CBR at 10 pps: one at time zero, in the 1 ms warm-up,
        // the next at 100 ms): no poll, no ratio.
        let r = run(&light().rate_pps(10.0).with("run.warmup_ms", f(1.0)).build());
        assert_eq!((r.packets.offered, r.counts.polls), (0, 0));
        assert_eq!(r.packets_per_poll, None);
    }

    #[test]
    fn offered_gbps_is_offered_frame_bits_per_measured_second() {
        // 200 kpps of 1500 B frames for 10 ms: 2000 frames, 2.4 Gbit/s.
        let r = run(&light()
            .rate_pps(200_000.0)
            .with("traffic.size_bytes", i(1500))
            .build());
        assert_eq!(r.measured_s, 0.01);
        assert_eq!(r.packets.offered, 2000);
        assert!((r.offered_gbps - 2.4).abs() < 1e-9, "{}", r.offered_gbps);
    }

    #[test]
    fn each_queue_and_core_accounts_for_its_own_packets_in_flight() {
        // 4 Mpps against two 16-slot rings served at 1 Mpps each: both rings hold packets at
        // the end, and each queue's (and core's) packets are conserved on their own.
        let r = run(&exact("ideal")
            .cores(2)
            .with("traffic.flows", i(64))
            .rate_pps(4e6)
            .proto_ns(1000.0)
            .with("nic.ring_descriptors", i(16))
            .duration_ms(1.0)
            .build());
        check_laws(&r);
        let own = |p: &irqlab_core::metrics::PathReport, what: String| {
            assert!(p.in_flight > 0, "{what}: {p:?}");
            assert_eq!(
                p.offered,
                p.delivered + p.dropped_nic + p.dropped_socket + p.dropped_tx + p.in_flight,
                "{what}: {p:?}"
            );
        };
        for q in &r.per_queue {
            own(&q.path, format!("queue {}", q.queue));
        }
        for c in &r.per_core {
            own(&c.path, format!("core {}", c.core));
        }
    }

    #[test]
    fn a_packet_polled_to_the_stack_exactly_at_the_end_of_the_warm_up_is_measured() {
        // One core, one vector: packet 0 arrives at 0, its IRQ takes 1 us and its protocol
        // processing 2 us, so it reaches the stack at 3 us, the warm-up's end: it was in the
        // host at the warm-up and is delivered in the window. Packets 1 to 4 arrive at 10 to
        // 40 us and are done by 43 us; packet 5 arrives at 50 us, in flight when the 50 us
        // window ends at 53 us.
        let r = run(&light()
            .cores(1)
            .with("run.warmup_ms", f(0.003))
            .duration_ms(0.05)
            .build());
        check_laws(&r);
        let p = &r.packets;
        assert_eq!(p.in_flight_at_warmup, 1);
        assert_eq!(p.offered, 5);
        assert_eq!(p.delivered, 5);
        assert_eq!(p.in_flight, 1);
        assert_eq!(r.latency_us.min, Some(3.0));
    }

    #[test]
    fn throughput_is_delivered_packets_per_measured_second_on_every_path() {
        // 1000 packets delivered in 10 ms: 100 kpps, split over the cores and queues.
        let r = run(&light().build());
        assert_eq!(r.packets.delivered, 1000);
        assert!((r.throughput_pps - 100_000.0).abs() < 1e-6);
        let paths = r.per_core.iter().map(|c| &c.path);
        for p in paths.chain(r.per_queue.iter().map(|q| &q.path)) {
            assert!(p.delivered > 0);
            let pps = p.delivered as f64 * 100.0;
            assert!((p.throughput_pps - pps).abs() < 1e-6, "{p:?}");
        }
    }
}
/// The same edge on the general NAPI path (two Rx rings, one per class), which hands packets to
/// the stack through the shared delivery, not the one-ring fast path.
#[test]
fn a_packet_taken_from_one_of_two_rings_to_the_stack_exactly_at_the_end_of_the_warm_up_is_measured()
{
    // Packet 0 arrives at 0, its IRQ takes 1 us and its protocol processing 2 us: it reaches
    // the stack at 3 us, the warm-up's end. Packets 1 to 4 arrive at 10 to 40 us and are done
    // by 43 us; packet 5 arrives at 50 us and is in flight when the window ends at 53 us.
    let sc = exact("napi")
        .with("nic.queues", i(1))
        .with("traffic.classes.0.share", f(0.5))
        .with("traffic.classes.1.share", f(0.5))
        .rate_pps(100_000.0)
        .irq_ns(1000.0)
        .proto_ns(2000.0)
        .with("run.warmup_ms", f(0.003))
        .duration_ms(0.05)
        .build();
    let (r, log) = traced(&sc);
    check_laws(&r);
    assert_eq!(log.delivered_ps[0], Some(3 * US));
    let p = &r.packets;
    assert_eq!(
        (p.in_flight_at_warmup, p.offered, p.delivered, p.in_flight),
        (1, 5, 5, 1)
    );
    assert_eq!(r.latency_us.min, Some(3.0));
}
