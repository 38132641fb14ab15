//! AF_XDP apps (`app.N.io = "xsk"`; `crate::xsk`, `host::xsk`): each test asserts one rule of
//! the kernel or the driver (Linux 6.18 `net/xdp/xsk.c`, `include/net/busy_poll.h`,
//! `net/core/dev.c`, ice's `ice_clean_rx_irq_zc`), then conservation and determinism, bad
//! input and the settings without effect.

use std::collections::BTreeMap;

use irqlab_core::metrics::{BusyPollCounts, XskCounts};
use irqlab_core::time::SimTime;
use irqlab_core::{Report, Tracer, run_with};

use crate::common::{Pairs, b, conserved, f, i, list, s};

/// Two cores: the vector's IRQ and softirq on core 0, an XSK app on core 1 reading flow 0
/// (the only one) at 1000 ns a packet; deterministic costs (IRQ 3730 ns, protocol 5340 ns,
/// XDP 50 ns), 100 kpps CBR; 5 ms after 1 ms of warm-up.
fn base() -> Pairs {
    Pairs::default()
        .with("host.cores", i(2))
        .with("traffic.kind", s("cbr"))
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.irq_dist", s("deterministic"))
        .rate_pps(100_000.0)
        .duration_ms(5.0)
        .with("run.warmup_ms", f(1.0))
        .with("app.0.core", i(1))
        .with("app.0.flows", list(&[0]))
        .with("app.0.io", s("xsk"))
        .with("app.0.cost_ns", f(1000.0))
        .with("app.0.cost_dist", s("deterministic"))
}

/// SO_BUSY_POLL on the XSK.
fn busy_poll() -> Pairs {
    Pairs::default().with("socket.busy_read_us", f(50.0))
}

/// SO_PREFER_BUSY_POLL with deferral (two deferred IRQs, a 20 us NAPI timer).
fn prefer() -> Pairs {
    Pairs::default()
        .with("socket.prefer_busy_poll", b(true))
        .with("kernel.napi_defer_hard_irqs", i(2))
        .with("kernel.gro_flush_timeout_ns", f(20_000.0))
}

fn xsk(r: &Report) -> &XskCounts {
    r.xsk.as_ref().expect("XSK counts")
}

fn busy(r: &Report) -> &BusyPollCounts {
    r.busy_poll.as_ref().expect("busy-poll counts")
}

/// The receive path's and the whole host's packets, and every CPU picosecond, accounted once.
fn assert_conserved(r: &Report) {
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
        "the host's packets conserved: {p:?}"
    );
}

/// The report without its scenario (which differs whenever a setting does).
fn without_scenario(mut r: Report) -> Report {
    r.scenario = BTreeMap::new();
    r
}

/// The kernel's and the driver's rules, each on whole runs.
mod rules {
    use super::*;

    #[test]
    fn an_xsk_packet_costs_the_xdp_redirect_instead_of_protocol_processing() {
        // the ideal host: an arrival is processed at once, at its cost alone
        let ideal = base()
            .with("scheme", s("ideal"))
            .with("platform.proto_ns", f(1000.0))
            .with("platform.xdp_ns", f(80.0));
        let r = ideal.run();
        assert_eq!(r.latency_us.mean, Some(0.08), "XDP_REDIRECT: 80 ns");
        assert_eq!(r.packets.consumed, r.packets.offered);
        let socket = ideal.with("app.0.io", s("recv")).run();
        assert_eq!(socket.latency_us.mean, Some(1.0), "the stack: 1000 ns");
    }

    #[test]
    fn xsk_busy_polling_never_processes_more_than_its_budget_and_a_backlog_fills_each_poll() {
        // 5 Mpps against an app that handles about 3 Mpps: the NIC ring stays full, so each
        // poll of a recvfrom's nonblocking busy loop (sk_busy_loop(sk, 1): one poll, then
        // busy_poll_stop's) takes exactly its budget
        for budget in [4, 16] {
            let r = base()
                .and(&busy_poll())
                .and(&prefer())
                .rate_pps(5e6)
                .with("app.0.cost_ns", f(200.0))
                .with("socket.busy_poll_budget", i(budget))
                .with("run.warmup_ms", f(2.0))
                .duration_ms(2.0)
                .run();
            let bp = busy(&r);
            assert!(r.packets.dropped_nic > 0, "overloaded: {:?}", r.packets);
            assert_eq!(bp.most_per_poll, budget as u64, "{bp:?}");
            assert!(bp.polls > 400, "{bp:?}");
            // every poll full (one at each edge of the window may be counted at its start
            // or at its end only)
            let full = bp.polls * budget as u64;
            assert!(bp.packets.abs_diff(full) <= budget as u64, "{bp:?}");
            // a recvfrom is one nonblocking busy loop: at most two polls each (and one of a
            // loop that started before the window)
            assert_eq!(bp.sessions, xsk(&r).recvfroms, "{bp:?}");
            assert!(bp.polls <= 2 * bp.sessions + 1, "{bp:?}");
        }
    }

    #[test]
    fn with_need_wakeup_and_irq_delivery_the_app_never_calls_recvfrom() {
        // the driver flags the fill ring only when it runs out of buffers: never here
        let r = base().run();
        let x = xsk(&r);
        assert_eq!(x.recvfroms, 0, "{x:?}");
        assert!(
            x.empty_checks > 10_000,
            "the thread spins on its ring: {x:?}"
        );
        assert_eq!(r.packets.consumed, r.packets.offered, "{:?}", r.packets);
        assert!(
            r.counts.irqs >= r.packets.offered,
            "IRQ delivery: {:?}",
            r.counts
        );
        assert!(r.busy_poll.is_none(), "no busy polling");
        // the thread never sleeps: its core is busy the whole window
        assert_eq!(r.per_core[1].cpu.idle, 0.0, "{:?}", r.per_core[1].cpu);
    }

    #[test]
    fn without_need_wakeup_every_empty_check_is_a_recvfrom_that_does_nothing() {
        let with = base().run();
        let without = base().with("app.0.need_wakeup", b(false)).run();
        let x = xsk(&without);
        assert!(x.empty_checks > 10_000, "{x:?}");
        assert_eq!(x.recvfroms, x.empty_checks, "{x:?}");
        // __xsk_recvmsg with neither busy polling nor a wakeup flag returns at once: the run is
        // the same but for the count (the model has no syscall cost of its own)
        assert_eq!(x.empty_checks, xsk(&with).empty_checks);
        let mut same = without_scenario(without);
        same.xsk = with.xsk.clone();
        assert_eq!(same, without_scenario(with));
    }

    #[test]
    fn a_busy_polling_app_calls_recvfrom_on_every_empty_check() {
        for wakeup in [true, false] {
            let r = base()
                .and(&busy_poll())
                .with("app.0.need_wakeup", b(wakeup))
                .run();
            let x = xsk(&r);
            assert!(x.recvfroms > 10_000, "{x:?}");
            assert_eq!(x.recvfroms, x.empty_checks, "need_wakeup {wakeup}: {x:?}");
            assert_eq!(busy(&r).sessions, x.recvfroms, "one busy loop each");
            assert_eq!(r.packets.consumed, r.packets.offered);
        }
    }

    #[test]
    fn the_polling_thread_busy_polls_and_the_apps_own_thread_only_reads_its_ring() {
        // xsk_rr -t: the app on core 1, its polling thread on core 2, the IRQ on core 0
        let r = base()
            .with("host.cores", i(3))
            .and(&busy_poll())
            .with("app.0.xsk_poll_core", i(2))
            .run();
        let (x, bp) = (xsk(&r), busy(&r));
        assert_eq!(bp.sessions, x.recvfroms, "every recvfrom busy-polls once");
        assert!(x.recvfroms > 10_000, "{x:?}");
        assert!(x.empty_checks > 10_000, "the app's own thread spins: {x:?}");
        assert_eq!(r.packets.consumed, r.packets.offered);
        // both threads keep their cores busy: the app's in cpu.app, the poller's in
        // cpu.busy_poll
        let (app, poller) = (&r.per_core[1].cpu, &r.per_core[2].cpu);
        assert_eq!((app.idle, app.busy_poll), (0.0, 0.0), "{app:?}");
        assert_eq!((poller.idle, poller.app), (0.0, 0.0), "{poller:?}");
        assert!(bp.packets > 0, "the poller took packets: {bp:?}");
    }

    #[test]
    fn an_xsk_has_no_socket_buffer_accounting_but_a_full_ring_drops() {
        // Poisson arrivals at half the app's rate on a host that delivers them at once: the
        // app's queue passes two packets now and then, which a socket holding one packet's
        // truesize (2304 bytes, refused once over it) does not take
        let load = base()
            .with("scheme", s("ideal"))
            .with("platform.proto_ns", f(100.0))
            .with("traffic.kind", s("poisson"))
            .with("app.0.cost_ns", f(5000.0))
            .with("socket.rcvbuf_bytes", i(2304))
            .duration_ms(20.0);
        let socket = load.clone().with("app.0.io", s("recv")).run();
        assert!(socket.packets.dropped_socket > 10, "{:?}", socket.packets);
        let r = load.run();
        assert_eq!(r.packets.dropped_socket, 0, "{:?}", r.packets);
        assert_eq!(xsk(&r).rx_ring_full, 0);
        // a ring of two descriptors refuses the third packet waiting
        let r = load.clone().with("app.0.xsk_ring", i(2)).run();
        let dropped = r.packets.dropped_socket;
        assert!(dropped > 10, "{:?}", r.packets);
        assert_eq!(xsk(&r).rx_ring_full, dropped);
        assert_eq!(r.per_app[0].dropped_socket, dropped);
        assert_eq!(r.packets.dropped_nic, 0);
        assert_conserved(&r);
        // an app slower than its traffic: the ring is full at the end, its two descriptors
        // counted in the host
        let r = load
            .clone()
            .with("traffic.kind", s("cbr"))
            .with("app.0.cost_ns", f(25_000.0))
            .with("app.0.xsk_ring", i(2))
            .run();
        assert_eq!(
            (r.packets.in_socket, r.packets.in_app),
            (2, 1),
            "{:?}",
            r.packets
        );
        assert!(xsk(&r).rx_ring_full > 100, "{:?}", r.xsk);
        assert_conserved(&r);
    }

    /// Per packet: when its redirect ended and when its app finished it; and when each poll
    /// of the vector returned.
    #[derive(Default)]
    struct Timeline {
        delivered: BTreeMap<u64, u64>,
        consumed: BTreeMap<u64, u64>,
        polls: Vec<u64>,
    }

    impl Tracer for Timeline {
        fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
        fn delivered(&mut self, id: u64, _: SimTime, t: SimTime) {
            self.delivered.insert(id, t.ps());
        }
        fn poll(&mut self, _: usize, _: usize, t: SimTime, _: u64, _: u64) {
            self.polls.push(t.ps());
        }
        fn consumed(&mut self, _: usize, id: u64, t: SimTime) {
            self.consumed.insert(id, t.ps());
        }
    }

    #[test]
    fn the_app_sees_a_descriptor_only_once_its_poll_has_flushed() {
        // an IRQ at most every 100 us gathers about ten packets per poll, 1 us each to redirect;
        // xdp_do_flush at the end of the Rx clean makes them visible to the app all at once
        let sc = base()
            .with("nic.itr_us", f(100.0))
            .with("platform.xdp_ns", f(1000.0))
            .with("app.0.cost_ns", f(100.0))
            .build();
        let (r, t) = run_with(&sc, Timeline::default());
        assert_eq!(r.packets.consumed, r.packets.offered);
        let mut waited = 0;
        for (id, &done) in &t.consumed {
            let redirected = t.delivered[id];
            let flush = *t
                .polls
                .iter()
                .find(|&&p| p >= redirected)
                .expect("the poll that redirected it returned");
            assert!(
                done >= flush + 100_000,
                "packet {id}: redirected at {redirected}, flushed at {flush}, finished at {done}"
            );
            waited += u64::from(flush >= redirected + 1_000_000);
        }
        assert!(
            waited * 2 > t.consumed.len() as u64,
            "most packets wait for later ones of their poll: {waited}"
        );
    }

    #[test]
    fn a_flush_ends_the_apps_spin_at_the_end_of_the_iteration_under_way() {
        // the ideal host redirects each packet 50 ns after its arrival (every 10 us); the app's
        // spin, iterations of 100 ns from time zero, sees it at the end of the iteration under
        // way, 100 ns after the arrival, and handles it in 1000 ns: 1.1 us for every packet
        let r = base().with("scheme", s("ideal")).run();
        let l = &r.app_latency_us;
        assert_eq!((l.min, l.max), (Some(1.1), Some(1.1)), "{l:?}");
        // between two packets it spins 10 - 1 us: 90 empty checks each
        assert_eq!(xsk(&r).empty_checks, 90 * r.packets.consumed, "{:?}", r.xsk);
    }

    #[test]
    fn a_busy_poll_stop_that_used_its_budget_lists_the_napi_on_the_pollers_core() {
        // bursts of Poisson arrivals at half the app's rate leave busy_poll_stop's poll of one
        // packet more now and then: `__napi_schedule` lists the NAPI on the busy-polling core
        // (this CPU's softnet_data), whose local_bh_enable runs the softirq at once, while the
        // vector's IRQ, on core 0, stays masked
        let r = base()
            .and(&busy_poll())
            .with("socket.busy_poll_budget", i(1))
            .with("traffic.kind", s("poisson"))
            .rate_pps(1e6)
            .with("app.0.cost_ns", f(500.0))
            .run();
        let poller = &r.per_core[1].cpu;
        assert!(
            poller.softirq > 0.0,
            "the poller's core polls in softirq: {poller:?}"
        );
        // and the host delivers everything: no NAPI waits on a core that never polls it
        assert_eq!(
            r.packets.dropped_nic + r.packets.dropped_socket,
            0,
            "{:?}",
            r.packets
        );
        assert!(r.packets.in_flight < 100, "{:?}", r.packets);
        assert_conserved(&r);
    }

    #[test]
    fn a_spinning_app_gives_way_to_a_waiting_thread_at_the_end_of_its_slice() {
        // no traffic: the app spins on its ring and its polling thread, on the same core,
        // busy-polls; each runs a slice of 50 us in turn (EEVDF), so they share the core
        let r = base()
            .rate_pps(1e-3)
            .and(&busy_poll())
            .with("app.0.xsk_poll_core", i(1))
            .with("kernel.sched_slice_us", f(50.0))
            .run();
        assert_eq!(r.packets.offered, 0);
        let cpu = &r.per_core[1].cpu;
        assert!((cpu.app - 0.5).abs() < 0.02, "{cpu:?}");
        assert!((cpu.busy_poll - 0.5).abs() < 0.02, "{cpu:?}");
        assert!(
            r.per_core[1].counts.context_switches > 50,
            "{:?}",
            r.per_core[1]
        );
    }
}

/// Every way of reading an XSK conserves packets and CPU time and repeats itself; bad input is
/// one line naming its key; settings without effect warn.
mod conservation_and_input {
    use super::*;

    fn mechanisms() -> Vec<(&'static str, Pairs)> {
        let poisson = base()
            .with("traffic.kind", s("poisson"))
            .rate_pps(300_000.0);
        vec![
            ("irq", poisson.clone()),
            ("kick", poisson.clone().with("app.0.need_wakeup", b(false))),
            ("busy poll", poisson.clone().and(&busy_poll())),
            ("prefer", poisson.clone().and(&busy_poll()).and(&prefer())),
            (
                "polling thread",
                poisson
                    .clone()
                    .with("host.cores", i(3))
                    .and(&busy_poll())
                    .and(&prefer())
                    .with("app.0.xsk_poll_core", i(2)),
            ),
            (
                "on the vector's core",
                poisson.clone().with("app.0.core", i(0)).and(&busy_poll()),
            ),
            (
                "poller beside the app",
                poisson
                    .clone()
                    .and(&busy_poll())
                    .with("app.0.xsk_poll_core", i(1))
                    .with("kernel.sched_slice_us", f(50.0)),
            ),
            ("tiny ring", poisson.clone().with("app.0.xsk_ring", i(2))),
            (
                "requests",
                base()
                    .with("traffic.kind", s("rr"))
                    .with("rr.clients", i(4))
                    .with("app.0.flows", list(&[0, 1, 2, 3]))
                    .and(&busy_poll()),
            ),
            (
                "beside a socket app",
                poisson
                    .clone()
                    .with("traffic.flows", i(2))
                    .with("app.0.flows", list(&[0]))
                    .with("app.1.core", i(0))
                    .with("app.1.flows", list(&[1])),
            ),
            (
                "a socket app first",
                poisson
                    .clone()
                    .with("traffic.flows", i(2))
                    .with("app.0.core", i(0))
                    .with("app.0.io", s("recv"))
                    .with("app.1.core", i(1))
                    .with("app.1.io", s("xsk"))
                    .with("app.1.flows", list(&[1]))
                    .and(&busy_poll()),
            ),
            (
                "threaded NAPI",
                poisson
                    .clone()
                    .with("kernel.threaded_napi", b(true))
                    .with("kernel.napi_thread_core", i(0)),
            ),
        ]
    }

    #[test]
    fn every_way_of_reading_an_xsk_conserves_packets_and_cpu_time_and_is_deterministic() {
        for (name, p) in mechanisms() {
            let a = p.run();
            assert_conserved(&a);
            assert!(a.packets.consumed > 100, "{name}: {:?}", a.packets);
            assert!(a.xsk.is_some(), "{name}");
            assert_eq!(a, p.run(), "{name}: the same run twice");
            if name != "requests" {
                let other = p.clone().with("run.seed", i(2)).run();
                assert_ne!(a.latency_us, other.latency_us, "{name}: another seed");
            }
        }
    }

    #[test]
    fn a_scenario_without_an_xsk_app_reports_no_xsk_counts() {
        assert!(base().with("app.0.io", s("recv")).run().xsk.is_none());
    }

    fn error(p: &Pairs) -> irqlab_core::Error {
        p.try_build().expect_err("an invalid scenario")
    }

    #[test]
    fn bad_xsk_settings_are_one_line_errors_naming_the_key() {
        let cases: Vec<(Pairs, &str, &str)> = vec![
            // the flows RSS steers to core 0 come from both queues
            (
                base()
                    .with("host.cores", i(1))
                    .with("nic.queues", i(2))
                    .with("traffic.flows", i(8))
                    .with("app.0.core", i(0))
                    .without("app.0.flows"),
                "app.0.io",
                "reach queues 0, 1",
            ),
            (
                base()
                    .with("traffic.flows", i(2))
                    .with("app.0.flows", list(&[0]))
                    .with("app.1.core", i(1))
                    .with("app.1.io", s("xsk"))
                    .with("app.1.flows", list(&[1])),
                "app.1.io",
                "queue 0 has app 0's XSK already",
            ),
            (
                base().with("app.0.xsk_ring", i(3)),
                "app.0.xsk_ring",
                "must be a power of two",
            ),
            (
                base().with("app.0.xsk_ring", i(0)),
                "app.0.xsk_ring",
                "must be a power of two",
            ),
            (
                base().and(&busy_poll()).with("app.0.xsk_poll_core", i(2)),
                "app.0.xsk_poll_core",
                "host.cores = 2 has cores 0 … 1",
            ),
            (
                base().with("app.0.xsk_poll_core", i(1)),
                "app.0.xsk_poll_core",
                "set socket.busy_read_us > 0",
            ),
            (
                base().with("scheme", s("poll")),
                "app.0.io",
                "Salah's polling loop",
            ),
            (
                base()
                    .with("nic.device", s("veth"))
                    .with("sender.cost_ns", f(1000.0)),
                "app.0.io",
                "nic.device = \"hw\"",
            ),
        ];
        for (p, key, says) in cases {
            let e = error(&p);
            assert_eq!(e.key(), key, "{e}");
            let text = e.to_string();
            assert!(text.contains(says), "{text}");
            assert!(!text.contains('\n'), "one line: {text}");
        }
        // out of the key table's range
        let e = error(&base().with("app.0.xsk_poll_core", i(-2)));
        assert_eq!(e.key(), "app.0.xsk_poll_core");
        let e = error(&base().with("app.0.xsk_poll_core", i(1024)));
        assert_eq!(
            e.to_string(),
            "app.0.xsk_poll_core = 1024: must be an integer in -1 … 1023"
        );
        let e = error(&base().with("app.0.xsk_ring", i((1 << 20) + 1)));
        assert_eq!(e.key(), "app.0.xsk_ring");
    }

    #[test]
    fn a_tiny_socket_buffer_is_no_error_for_an_xsk_app() {
        // a socket must hold one packet; an XSK has no socket buffer
        let tiny = base().with("socket.rcvbuf_bytes", i(1));
        assert!(
            tiny.clone()
                .with("app.0.io", s("recv"))
                .try_build()
                .is_err()
        );
        assert!(tiny.try_build().is_ok());
    }

    fn warned(p: &Pairs) -> Vec<String> {
        p.build().warnings.iter().map(|w| w.key.clone()).collect()
    }

    #[test]
    fn xsk_settings_without_effect_warn_naming_the_key() {
        assert!(warned(&base()).is_empty());
        assert!(warned(&base().and(&busy_poll()).and(&prefer())).is_empty());
        // an app that reads a socket
        let recv = base().with("app.0.io", s("recv"));
        assert_eq!(
            warned(
                &recv
                    .clone()
                    .with("app.0.xsk_ring", i(4096))
                    .with("app.0.need_wakeup", b(false))
            ),
            ["app.0.xsk_ring", "app.0.need_wakeup"]
        );
        let w = recv.with("app.0.xsk_ring", i(4096)).build().warnings;
        assert!(w[0].reason.contains("app.0.io = \"xsk\""), "{w:?}");
        // an XSK's socket buffer
        let w = base().with("app.0.rcvbuf_bytes", i(4096)).build().warnings;
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key, "app.0.rcvbuf_bytes");
        assert!(w[0].reason.contains("no socket buffer accounting"), "{w:?}");
        // need_wakeup of an app that calls recvfrom on every empty ring anyway, or never
        let legacy = base().with("app.0.need_wakeup", b(false));
        assert!(warned(&legacy).is_empty(), "the kick");
        assert_eq!(
            warned(&legacy.clone().and(&busy_poll())),
            ["app.0.need_wakeup"]
        );
        let threaded = legacy
            .and(&busy_poll())
            .with("host.cores", i(3))
            .with("app.0.xsk_poll_core", i(2));
        assert_eq!(warned(&threaded), ["app.0.need_wakeup"]);
        // the socket busy-poll options are the XSK's too: not reported as unused
        assert!(
            warned(
                &base()
                    .and(&busy_poll())
                    .with("socket.busy_poll_budget", i(4))
            )
            .is_empty()
        );
    }
}
