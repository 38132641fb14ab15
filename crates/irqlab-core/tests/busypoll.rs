//! Integration tests of busy polling, preferred busy polling and IRQ suspension with
//! request/response traffic: the Rust port of `tests/test_busypoll.py`, so that
//! `cargo test -p irqlab-core` alone notices a change to `busypoll`, `host::busypoll`,
//! `traffic::rr` or `socket`.
//!
//! Each rule of the kernel's state machine (v6.13 `net/core/dev.c` `__napi_busy_loop`,
//! `busy_poll_stop`, `napi_complete_done`, `napi_watchdog`; `fs/eventpoll.c` `ep_poll`;
//! `Documentation/networking/napi.rst`) is a behaviour test on whole runs; then the closed
//! loop's exact agreement with its analytic rate, the busy core, the idle wake-up cost,
//! conservation and determinism, bad input, and the settings (`BusyConfig`, `RrConfig`) and
//! warnings a scenario resolves to. The numbers are the Python tests', so the expectations are
//! the same.

use std::collections::BTreeMap;

use irqlab_core::busypoll::{BUSY_POLL_BUDGET, Io};
use irqlab_core::scenario::Dist;
use irqlab_core::socket::Socket;
use irqlab_core::time::{SimDuration, SimTime};
use irqlab_core::{Report, Tracer, run, run_with, runs_core_by_core};

use crate::common::{Pairs, b, conserved, f, i, list, record_arrival, s};

/// App `n`'s fields: on `core`, 1000 ns deterministic per request, waiting with `io`.
fn app(n: usize, core: i128, io: &str) -> Pairs {
    let k = |field: &str| format!("app.{n}.{field}");
    Pairs::default()
        .with(&k("core"), i(core))
        .with(&k("cost_ns"), f(1000.0))
        .with(&k("cost_dist"), s("deterministic"))
        .with(&k("io"), s(io))
}

/// One core, deterministic costs of the emmerich2015 preset (irq 700 ns, softirq 300 ns, poll
/// 500 ns, unmask 33 ns, proto 462 ns); an app answering requests; 10 ms after 1 ms of warm-up.
fn base() -> Pairs {
    Pairs::default()
        .with("platform.preset", s("emmerich2015"))
        .with("platform.proto_dist", s("deterministic"))
        .with("platform.wakeup_ns", f(0.0))
        .with("traffic.kind", s("rr"))
        .duration_ms(10.0)
        .with("run.warmup_ms", f(1.0))
        .and(&app(0, 0, "recv"))
}

/// Software IRQ coalescing (deferral): two deferred IRQs, a 20 us NAPI timer.
fn defer() -> Pairs {
    Pairs::default()
        .with("kernel.napi_defer_hard_irqs", i(2))
        .with("kernel.gro_flush_timeout_ns", f(20_000.0))
}

/// App 0 waits with epoll.
fn epoll_app() -> Pairs {
    app(0, 0, "epoll")
}

/// IRQ suspension: an epoll app preferring busy polling, deferral, a 2 ms suspension.
fn suspend() -> Pairs {
    epoll_app()
        .and(&defer())
        .with("epoll.prefer_busy_poll", b(true))
        .with("epoll.busy_poll_us", f(0.0))
        .with("epoll.batch_ns", f(300.0))
        .with("kernel.irq_suspend_timeout_ns", f(2_000_000.0))
}

fn busy(r: &Report) -> &irqlab_core::metrics::BusyPollCounts {
    r.busy_poll.as_ref().expect("busy-poll counts")
}

fn tps(r: &Report) -> f64 {
    r.transactions_per_s.expect("rr traffic")
}

/// The report without its scenario (which differs whenever a setting does).
fn without_scenario(mut r: Report) -> Report {
    r.scenario = BTreeMap::new();
    r
}

/// The receive path's packets and every CPU picosecond of the window are accounted for.
fn assert_conserved(r: &Report) {
    conserved(r);
    assert!((r.cpu.busy + r.cpu.idle - 1.0).abs() < 1e-12, "{:?}", r.cpu);
}

/// The state machine's rules (`__napi_busy_loop`, `busy_poll_stop`, `napi_complete_done`,
/// `napi_watchdog`).
mod rules {
    use super::*;

    #[test]
    fn no_poll_unmasks_the_irq_while_a_busy_poller_owns_the_napi() {
        // app 0 busy-polls in epoll_wait for up to 1 ms and rarely gets a request of its own:
        // while it owns the NAPI it polls app 1's packets. Every arrival would raise an IRQ
        // (no ITR) if a poll of the loop re-enabled the vector.
        let r = base()
            .with("rr.rate_rps", f(400_000.0))
            .with("rr.clients", i(8))
            .with("nic.itr_us", f(0.0))
            .with("epoll.busy_poll_us", f(1000.0))
            .with("host.cores", i(2))
            .and(&app(0, 0, "epoll"))
            .with("app.0.flows", list(&[0]))
            .and(&app(1, 1, "recv"))
            .with("app.1.flows", list(&[1, 2, 3, 4, 5, 6, 7]))
            .run();
        let bp = busy(&r);
        assert!(
            bp.packets > 4 * bp.sessions,
            "many packets per ownership: {bp:?}"
        );
        // at most the one IRQ that finds the vector still enabled when the loop takes the NAPI
        assert!(
            0 < bp.irqs_while_owned && bp.irqs_while_owned <= bp.sessions,
            "{bp:?}"
        );
    }

    #[test]
    fn a_busy_poll_never_processes_more_than_its_budget() {
        for (budget, want) in [(0, BUSY_POLL_BUDGET), (3, 3), (20, 20)] {
            let r = base()
                .with("rr.rate_rps", f(600_000.0))
                .with("rr.clients", i(64))
                .with("socket.busy_read_us", f(100.0))
                .with("socket.busy_poll_budget", i(budget))
                .with("socket.prefer_busy_poll", b(true))
                .with("nic.ring_descriptors", i(4096))
                .and(&defer())
                .run();
            let bp = busy(&r);
            // the ring often holds more: polls use their whole budget, and never more
            assert_eq!(bp.most_per_poll, want, "budget {budget}: {bp:?}");
            assert!(bp.polls > 1000, "{bp:?}");
            assert!(bp.packets <= want * bp.polls, "{bp:?}");
        }
    }

    #[test]
    fn epoll_wait_with_a_zero_timeout_never_busy_polls() {
        let p = base()
            .and(&epoll_app())
            .with("epoll.timeout_ms", i(0))
            .with("epoll.batch_ns", f(200.0))
            .with("epoll.busy_poll_us", f(50.0));
        assert!(
            p.warnings().iter().any(|w| w.contains("never busy-polls")),
            "{:?}",
            p.warnings()
        );
        let r = p.run();
        let bp = busy(&r);
        assert!(bp.empty_epoll_waits > 1000, "{bp:?}");
        assert_eq!((bp.sessions, bp.polls), (0, 0), "{bp:?}");
        assert_eq!(r.cpu_ps.busy_poll, 0);
        assert!(
            r.cpu.idle < 1e-3,
            "it spins on epoll_wait instead: {}",
            r.cpu.idle
        );
        assert!(tps(&r) > 0.0);
    }

    #[test]
    fn preferred_busy_polling_without_deferral_changes_nothing() {
        let load = base()
            .with("rr.rate_rps", f(600_000.0))
            .with("rr.clients", i(64))
            .with("socket.busy_read_us", f(50.0));
        for half in [
            Pairs::default(),
            Pairs::default().with("kernel.napi_defer_hard_irqs", i(2)),
            Pairs::default().with("kernel.gro_flush_timeout_ns", f(20_000.0)),
        ] {
            let plain = load.clone().and(&half);
            let prefer = plain.clone().with("socket.prefer_busy_poll", b(true));
            assert_eq!(
                without_scenario(plain.run()),
                without_scenario(prefer.run()),
                "{half:?}"
            );
        }
        // with deferral it does change (busy_poll_stop arms the timer instead of re-enabling)
        let plain = load.and(&defer());
        let prefer = plain.clone().with("socket.prefer_busy_poll", b(true));
        let (plain, prefer) = (plain.run(), prefer.run());
        assert_ne!(
            without_scenario(plain.clone()),
            without_scenario(prefer.clone())
        );
        assert!(
            prefer.irq_per_s < plain.irq_per_s,
            "{} vs {}",
            prefer.irq_per_s,
            plain.irq_per_s
        );
    }

    #[test]
    fn half_a_deferral_gives_prefer_nothing_to_arm_even_when_the_last_poll_is_full() {
        // an overloaded ring and a budget of 2: busy_poll_stop's poll often uses its whole
        // budget, so the softirq takes over; only with both deferral settings would prefer
        // arm the NAPI timer instead
        let heavy = base()
            .with("rr.rate_rps", f(150_000.0))
            .with("rr.clients", i(8))
            .with("socket.busy_read_us", f(100.0))
            .with("socket.busy_poll_budget", i(1));
        for half in [
            Pairs::default().with("kernel.napi_defer_hard_irqs", i(2)),
            Pairs::default().with("kernel.gro_flush_timeout_ns", f(20_000.0)),
        ] {
            let plain = heavy.clone().and(&half);
            let prefer = plain.clone().with("socket.prefer_busy_poll", b(true));
            let plain = plain.run();
            assert!(busy(&plain).polls > 1000, "{:?}", busy(&plain));
            assert_eq!(
                without_scenario(plain),
                without_scenario(prefer.run()),
                "{half:?}"
            );
        }
    }

    #[test]
    fn the_watchdog_is_not_re_armed_while_the_napi_is_owned() {
        // deferral and a poller that owns the NAPI between requests: the timer is armed only
        // when a loop leaves (busy_poll_stop's completion), never by the polls inside the loop
        let r = base()
            .with("rr.rate_rps", f(300_000.0))
            .with("rr.clients", i(8))
            .with("socket.busy_read_us", f(1000.0))
            .and(&defer())
            .run();
        let bp = busy(&r);
        assert!(
            bp.polls > 2 * bp.sessions,
            "polls inside loops, not only the final ones: {bp:?}"
        );
        assert!(r.counts.timer_ticks <= bp.sessions, "{:?} {bp:?}", r.counts);
        // and the expiries that find the NAPI owned are lost, as napi_watchdog does
        assert!(bp.watchdog_lost > 0, "{bp:?}");
    }

    #[test]
    fn the_busy_loop_deadline_uses_the_kernels_clock_granularity() {
        // requests 1 ms apart: each loop finds nothing and times out after busy_read_us of
        // 1024 ns units, checked against local_clock() >> 10 (so 50 units: 51.2 to 52.224 us)
        let r = base()
            .with("rr.remote_us", f(1000.0))
            .with("socket.busy_read_us", f(50.0))
            .with("platform.busy_iter_ns", f(1.0))
            .with("platform.poll_ns", f(0.0))
            .with("platform.unmask_ns", f(0.0))
            .run();
        let bp = busy(&r);
        let per_loop_us = r.cpu_ps.busy_poll as f64 / bp.sessions as f64 / 1e6;
        assert!(
            50.0 * 1.024 < per_loop_us && per_loop_us <= 51.0 * 1.024 + 0.001,
            "{per_loop_us}"
        );
    }

    #[test]
    fn the_softirq_hands_the_napi_to_a_preferring_poller_only_with_deferral() {
        let heavy = base()
            .with("rr.rate_rps", f(3_000_000.0))
            .with("rr.clients", i(64))
            .with("nic.ring_descriptors", i(4096))
            .with("socket.busy_read_us", f(20.0))
            .with("socket.prefer_busy_poll", b(true));
        assert!(busy(&heavy.clone().and(&defer()).run()).handovers > 0);
        assert!(
            heavy
                .warnings()
                .iter()
                .any(|w| w.contains("kernel.napi_defer_hard_irqs")),
            "{:?}",
            heavy.warnings()
        );
        assert_eq!(busy(&heavy.run()).handovers, 0);
    }
}

/// IRQ suspension (napi.rst): `napi_suspend_irqs` when `epoll_wait` returns events,
/// `napi_resume_irqs` when it finds none.
mod irq_suspension {
    use super::*;

    #[test]
    fn irqs_stay_off_while_epoll_wait_keeps_finding_events() {
        let busy_load = base()
            .and(&suspend())
            .with("rr.rate_rps", f(1_200_000.0))
            .with("rr.clients", i(64))
            .with("nic.ring_descriptors", i(4096));
        let suspended = busy_load.run();
        let deferred = busy_load
            .with("kernel.irq_suspend_timeout_ns", f(0.0))
            .run();
        assert!(busy(&suspended).suspends > 100, "{:?}", busy(&suspended));
        assert!(
            suspended.irq_per_s < 0.05 * deferred.irq_per_s.max(1.0),
            "{} vs {}",
            suspended.irq_per_s,
            deferred.irq_per_s
        );
    }

    #[test]
    fn an_empty_epoll_wait_hands_back_to_deferral() {
        // light load: most epoll_waits find nothing and resume IRQs (an immediate softirq poll)
        let r = base().and(&suspend()).with("rr.remote_us", f(200.0)).run();
        let bp = busy(&r);
        assert!(bp.suspends > 0, "{bp:?}");
        assert!(bp.resumes as f64 > 0.9 * bp.suspends as f64, "{bp:?}");
        assert!(
            r.irq_per_s > 0.9 * tps(&r),
            "interrupts deliver again: {} irq/s, {} transactions/s",
            r.irq_per_s,
            tps(&r)
        );
    }

    #[test]
    fn the_suspend_timeout_restarts_processing_when_the_app_stalls() {
        // each request takes the app 3 ms, far beyond a 100 us suspension: the timer polls
        let r = base()
            .and(&suspend())
            .with("app.0.core", i(1))
            .with("app.0.cost_ns", f(3_000_000.0))
            .with("app.0.flows", list(&[0, 1, 2, 3]))
            .with("host.cores", i(2))
            .with("rr.clients", i(4))
            .duration_ms(30.0)
            .with("kernel.irq_suspend_timeout_ns", f(100_000.0))
            .run();
        assert!(busy(&r).suspends > 0, "{:?}", busy(&r));
        assert!(r.counts.timer_ticks > 0);
        assert!(
            r.per_core[0].cpu.softirq > 0.0,
            "the softirq processed packets meanwhile"
        );
    }

    #[test]
    fn irq_suspension_without_deferral_has_no_effect_and_warns() {
        let no_defer = base()
            .and(&suspend())
            .without("kernel.napi_defer_hard_irqs")
            .without("kernel.gro_flush_timeout_ns")
            .with("rr.clients", i(8));
        let w = no_defer.warnings();
        assert!(
            w.iter()
                .any(|w| w.starts_with("kernel.irq_suspend_timeout_ns")
                    && w.contains("kernel.napi_defer_hard_irqs")),
            "{w:?}"
        );
        let off = no_defer
            .clone()
            .with("kernel.irq_suspend_timeout_ns", f(0.0));
        assert!(
            off.warnings()
                .iter()
                .any(|w| w.starts_with("epoll.prefer_busy_poll")),
            "prefer without deferral: {:?}",
            off.warnings()
        );
        let mut on = without_scenario(no_defer.run());
        let mut off = without_scenario(off.run());
        for r in [&mut on, &mut off] {
            let bp = r.busy_poll.as_mut().expect("busy-poll counts");
            bp.suspends = 0;
            bp.resumes = 0;
        }
        assert_eq!(on, off);
    }
}

/// What busy polling does to the host: the busy core, the idle wake-up cost, and the closed
/// loop's exact agreement with the sum of its path costs.
mod host {
    use super::*;

    #[test]
    fn a_busy_polling_core_is_busy_whatever_the_load() {
        for clients in [1, 4, 32] {
            let r = base()
                .with("rr.clients", i(clients))
                .with("rr.remote_us", f(20.0))
                .with("socket.busy_read_us", f(50.0))
                .run();
            assert_eq!(r.cpu.idle, 0.0, "{clients} clients");
            if clients < 32 {
                // (32 clients keep the app busy: its socket is never empty)
                assert!(r.cpu.busy_poll > 0.0, "{clients} clients");
            }
        }
    }

    #[test]
    fn busy_polling_removes_the_wake_up_cost_of_deep_idle_states() {
        let deep = base()
            .with("platform.wakeup_ns", f(4000.0))
            .with("platform.wakeup_after_us", f(20.0))
            .with("rr.remote_us", f(30.0));
        for (busy_read_us, expect_same) in [(0.0, false), (50.0, true)] {
            let p = deep.clone().with("socket.busy_read_us", f(busy_read_us));
            let sleepy = tps(&p.run());
            let shallow = tps(&p.with("platform.wakeup_ns", f(0.0)).run());
            assert_eq!(sleepy == shallow, expect_same, "{busy_read_us}: {sleepy}");
            if !expect_same {
                // the interrupt path pays the exit from the idle state on every request
                let lost = 1.0 / sleepy - 1.0 / shallow;
                assert!((lost / 4e-6 - 1.0).abs() < 0.05, "{lost}");
            }
        }
    }

    #[test]
    fn one_client_with_one_request_runs_at_one_over_the_sum_of_the_path_costs() {
        let costs = [
            ("platform.irq_ns", 700.0),
            ("platform.mask_ns", 50.0),
            ("platform.softirq_ns", 300.0),
            ("platform.poll_ns", 500.0),
            ("platform.proto_ns", 462.0),
            ("platform.task_wakeup_ns", 150.0),
            ("platform.unmask_ns", 33.0),
            ("platform.ctx_switch_ns", 400.0),
            ("platform.tx_ns", 250.0),
        ];
        let (app_ns, remote_us, response_bytes) = (1000.0, 20.0, 64.0);
        let wire_ns = (response_bytes + 20.0) * 8.0 / 10.0; // at 10 Gbit/s
        let period_ns =
            costs.iter().map(|c| c.1).sum::<f64>() + app_ns + wire_ns + remote_us * 1000.0;
        let n = 400.0;
        let mut p = base()
            .with("platform.tx_dist", s("deterministic"))
            .with("platform.task_wakeup_dist", s("deterministic"))
            .with("platform.ctx_switch_dist", s("deterministic"))
            .with("app.0.cost_ns", f(app_ns))
            .with("rr.remote_us", f(remote_us))
            .with("rr.response_bytes", i(response_bytes as i128))
            .with("run.warmup_ms", f(0.5))
            .duration_ms(n * period_ns / 1e6);
        for (k, v) in costs {
            p = p.with(k, f(v));
        }
        let r = p.run();
        let rtt = r.rtt_us.as_ref().expect("rr traffic");
        let mean = rtt.mean.expect("transactions");
        assert!(
            (mean / (period_ns / 1000.0) - 1.0).abs() < 1e-12,
            "{mean} us, want {}",
            period_ns / 1000.0
        );
        assert_eq!(rtt.min, rtt.max);
        assert!(
            (tps(&r) / (1e9 / period_ns) - 1.0).abs() < 1e-9,
            "{}",
            tps(&r)
        );
    }
}

/// Every mechanism conserves packets and CPU time and repeats itself; bad input is one line
/// naming its key; settings that cannot take effect warn naming what is missing.
mod conservation_and_input {
    use super::*;

    fn mechanisms() -> Vec<(&'static str, Pairs)> {
        let none = Pairs::default();
        vec![
            ("interrupts", none.clone()),
            ("deferral", defer()),
            (
                "busy-read",
                none.clone().with("socket.busy_read_us", f(50.0)),
            ),
            (
                "busy-read-prefer",
                defer()
                    .with("socket.busy_read_us", f(50.0))
                    .with("socket.prefer_busy_poll", b(true)),
            ),
            ("epoll", epoll_app().with("epoll.batch_ns", f(200.0))),
            (
                "epoll-busy",
                epoll_app()
                    .with("epoll.busy_poll_us", f(64.0))
                    .with("epoll.batch_ns", f(200.0)),
            ),
            ("irq-suspend", suspend()),
            (
                "open-loop",
                none.with("rr.rate_rps", f(400_000.0))
                    .with("socket.busy_read_us", f(50.0)),
            ),
        ]
    }

    #[test]
    fn every_mechanism_conserves_packets_and_cpu_time_and_is_deterministic() {
        for (name, m) in mechanisms() {
            let mut p = base()
                .and(&m)
                .with("rr.clients", i(8))
                .with("platform.proto_dist", s("exponential"))
                .with("rr.remote_dist", s("exponential"));
            if name == "open-loop" {
                p = p.with("rr.clients", i(16));
            } else {
                p = p.with("rr.outstanding", i(2));
            }
            let sc = p.build();
            let (a, again) = (run(&sc), run(&sc));
            assert_conserved(&a);
            assert_eq!(a, again, "{name}");
            assert!(tps(&a) > 0.0, "{name}");
        }
    }

    #[test]
    fn bad_values_are_one_line_errors_naming_the_key() {
        for (key, value) in [
            ("kernel.irq_suspend_timeout_ns", i(-1)),
            ("socket.busy_read_us", i(-5)),
            ("epoll.maxevents", i(0)),
            ("socket.busy_poll_budget", i(70_000)),
            ("rr.clients", i(0)),
        ] {
            let e = base().with(key, value).try_build().unwrap_err();
            assert_eq!(e.key(), key);
            let msg = e.to_string();
            assert!(msg.contains(key) && !msg.contains('\n'), "{msg}");
        }
    }

    #[test]
    fn busy_polling_with_no_application_is_an_error() {
        let e = Pairs::default()
            .with("socket.busy_read_us", f(50.0))
            .duration_ms(1.0)
            .try_build()
            .unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.key(), "socket.busy_read_us");
        assert!(msg.contains("app") && !msg.contains('\n'), "{msg}");
        let e = base()
            .with("scheme", s("poll"))
            .with("socket.busy_read_us", f(50.0))
            .try_build()
            .unwrap_err();
        assert!(e.to_string().contains("polling loop"), "{e}");
        let e = Pairs::default()
            .with("traffic.kind", s("rr"))
            .duration_ms(1.0)
            .try_build()
            .unwrap_err();
        assert_eq!(e.key(), "traffic.kind");
    }

    #[test]
    fn settings_that_cannot_take_effect_warn_naming_what_is_missing() {
        let has = |p: &Pairs, key: &str, words: &str| {
            let w = p.warnings();
            assert!(
                w.iter()
                    .any(|w| w.starts_with(&format!("{key} = ")) && w.contains(words)),
                "{key} / {words}: {w:?}"
            );
        };
        let short = base().duration_ms(1.0);
        has(
            &short
                .clone()
                .with("socket.busy_read_us", f(50.0))
                .with("socket.prefer_busy_poll", b(true)),
            "socket.prefer_busy_poll",
            "kernel.napi_defer",
        );
        has(
            &short
                .clone()
                .and(&epoll_app())
                .and(&defer())
                .with("kernel.irq_suspend_timeout_ns", f(1e6)),
            "kernel.irq_suspend_timeout_ns",
            "epoll.prefer_busy_poll",
        );
        has(
            &short
                .clone()
                .and(&defer())
                .with("kernel.irq_suspend_timeout_ns", f(1e6)),
            "kernel.irq_suspend_timeout_ns",
            "epoll",
        );
        has(
            &short
                .and(&epoll_app())
                .with("epoll.timeout_ms", i(0))
                .with("epoll.batch_ns", f(100.0))
                .with("epoll.busy_poll_us", f(50.0)),
            "epoll.busy_poll_us",
            "timeout_ms = 0",
        );
    }
}

/// What a scenario's busy-poll and request/response settings resolve to (`busypoll::configure`,
/// `configure_rr`), the rules that read them (`BusyConfig::epoll_on`, `BusyConfig::any`), and
/// the errors and warnings they give.
mod settings {
    use super::*;

    /// Keys of the scenario's warnings.
    fn warned(p: &Pairs) -> Vec<String> {
        p.build().warnings.iter().map(|w| w.key.clone()).collect()
    }

    #[test]
    fn epoll_busy_polls_with_a_busy_poll_time_or_prefer_and_any_app_with_either() {
        let mut cfg = base().build().busy;
        for busy_read in [0.0, 50.0] {
            for epoll_us in [0.0, 64.0] {
                for prefer in [false, true] {
                    cfg.busy_read_us = busy_read;
                    cfg.epoll_us = epoll_us;
                    cfg.epoll_prefer = prefer;
                    let epoll = epoll_us > 0.0 || prefer;
                    assert_eq!(cfg.epoll_on(), epoll, "{cfg:?}");
                    assert_eq!(cfg.any(), busy_read > 0.0 || epoll, "{cfg:?}");
                }
            }
        }
    }

    #[test]
    fn epoll_wait_busy_polls_with_either_a_busy_poll_time_or_prefer() {
        // light load: most epoll_waits find nothing; each busy-polls if epoll is on
        let light = base().and(&epoll_app()).with("rr.remote_us", f(200.0));
        let sessions = |p: Pairs| busy(&p.run()).sessions;
        assert_eq!(sessions(light.clone()), 0, "neither: epoll_wait sleeps");
        assert!(sessions(light.clone().with("epoll.busy_poll_us", f(64.0))) > 0);
        assert!(sessions(light.clone().with("kernel.busy_poll_us", f(64.0))) > 0);
        assert!(sessions(light.with("epoll.prefer_busy_poll", b(true))) > 0);
    }

    #[test]
    fn an_app_that_may_busy_poll_is_counted_and_its_host_runs_interleaved() {
        // two cores, an app on each reading its own core's flows: core by core unless an app
        // may busy-poll (its loop polls a NAPI from the app's thread)
        let two = Pairs::default()
            .with("traffic.kind", s("cbr"))
            .rate_pps(100_000.0)
            .with("traffic.flows", i(4))
            .cores(2)
            .duration_ms(2.0)
            .and(&app(0, 0, "recv"))
            .and(&app(1, 1, "recv"));
        assert!(runs_core_by_core(&two.build()));
        assert!(two.run().busy_poll.is_none(), "no busy polling, no epoll");
        let busy_read = two.clone().with("socket.busy_read_us", f(50.0));
        assert!(!runs_core_by_core(&busy_read.build()));
        let r = busy_read.run();
        assert!(busy(&r).sessions > 0, "{:?}", busy(&r));
        assert!(r.cpu.busy_poll > 0.0);
        let epoll_sysctl = two.with("kernel.busy_poll_us", f(50.0));
        assert!(!runs_core_by_core(&epoll_sysctl.build()));
        assert!(epoll_sysctl.run().busy_poll.is_some());
    }

    #[test]
    fn the_settings_resolve_as_the_kernel_stores_them() {
        let sc = base()
            .and(&epoll_app())
            .with("socket.busy_read_us", f(50.9))
            .with("socket.busy_poll_budget", i(5))
            .with("socket.prefer_busy_poll", b(true))
            .with("kernel.busy_poll_us", f(30.7))
            .with("epoll.busy_poll_budget", i(0))
            .with("epoll.prefer_busy_poll", b(true))
            .with("epoll.maxevents", i(7))
            .with("epoll.batch_ns", f(250.0))
            .with("kernel.irq_suspend_timeout_ns", f(50_000.0))
            .with("platform.busy_iter_ns", f(120.0))
            .build();
        let c = &sc.busy;
        assert_eq!(c.busy_read_us, 50.0, "whole units");
        assert_eq!(c.sock_budget, 5);
        assert!(c.sock_prefer);
        assert_eq!(
            c.epoll_us, 30.0,
            "net.core.busy_poll when the epoll context has none"
        );
        assert_eq!(c.epoll_budget, BUSY_POLL_BUDGET);
        assert!(c.epoll_prefer);
        assert_eq!(c.maxevents, 7);
        assert!(!c.epoll_nonblocking);
        assert_eq!(c.epoll_batch, SimDuration::from_ns(250.0));
        assert_eq!(c.irq_suspend_timeout, SimDuration::from_ns(50_000.0));
        assert_eq!(c.iter, SimDuration::from_ns(120.0));
        assert_eq!(sc.apps[0].io, Io::Epoll);
        // the epoll context's own time wins over the sysctl; a zero timeout is nonblocking
        let sc = base()
            .and(&epoll_app())
            .with("kernel.busy_poll_us", f(30.0))
            .with("epoll.busy_poll_us", f(20.0))
            .with("socket.busy_poll_budget", i(0))
            .with("epoll.busy_poll_budget", i(3))
            .with("epoll.timeout_ms", i(0))
            .with("epoll.batch_ns", f(100.0))
            .build();
        let c = &sc.busy;
        assert_eq!(c.epoll_us, 20.0);
        assert_eq!(c.sock_budget, BUSY_POLL_BUDGET);
        assert_eq!(c.epoll_budget, 3);
        assert!(c.epoll_nonblocking);
        assert!(!c.sock_prefer && !c.epoll_prefer);
        assert_eq!(base().build().apps[0].io, Io::Recv);
    }

    #[test]
    fn the_request_response_settings_resolve_to_the_workload() {
        let sc = base()
            .with("rr.clients", i(3))
            .with("rr.outstanding", i(2))
            .with("rr.remote_us", f(12.5))
            .with("rr.remote_dist", s("exponential"))
            .with("rr.response_bytes", i(128))
            .with("rr.timeout_us", f(300.0))
            .build();
        let rr = sc.rr.as_ref().expect("rr traffic");
        assert_eq!((rr.clients, rr.outstanding), (3, 2));
        assert_eq!(rr.remote.mean, SimDuration::from_us(12.5));
        assert_eq!(rr.remote.mean_ps, 12_500_000.0);
        assert_eq!(rr.remote.dist, Dist::Exponential);
        assert_eq!(rr.rate_rps, 0.0);
        assert_eq!(rr.response_bytes, 128);
        assert_eq!(rr.timeout, SimDuration::from_us(300.0));
        let open = base().with("rr.rate_rps", f(5000.0)).build();
        let rr = open.rr.as_ref().expect("rr traffic");
        assert_eq!(rr.rate_rps, 5000.0);
        assert_eq!(rr.remote.dist, Dist::Deterministic);
        assert!(Pairs::default().build().rr.is_none(), "cbr traffic");
    }

    #[test]
    fn a_busy_iteration_shorter_than_a_picosecond_is_an_error_naming_the_key() {
        let e = base()
            .with("platform.busy_iter_ns", f(1e-4))
            .try_build()
            .unwrap_err();
        assert_eq!(e.key(), "platform.busy_iter_ns");
        assert!(!e.to_string().contains('\n'));
        assert_eq!(
            base()
                .with("platform.busy_iter_ns", f(1e-3))
                .build()
                .busy
                .iter,
            SimDuration(1)
        );
    }

    #[test]
    fn each_busy_poll_setting_needs_an_app_and_a_napi_scheme() {
        let no_app = Pairs::default().duration_ms(1.0);
        assert!(no_app.try_build().is_ok());
        for (key, on, off) in [
            ("socket.busy_read_us", f(50.0), f(0.0)),
            ("kernel.busy_poll_us", f(50.0), f(0.0)),
            ("epoll.busy_poll_us", f(50.0), f(0.0)),
            ("epoll.prefer_busy_poll", b(true), b(false)),
            ("socket.prefer_busy_poll", b(true), b(false)),
        ] {
            let e = no_app
                .clone()
                .with(key, on.clone())
                .try_build()
                .unwrap_err();
            assert_eq!(e.key(), key);
            assert!(e.to_string().contains("add an app"), "{e}");
            assert!(
                no_app.clone().with(key, off.clone()).try_build().is_ok(),
                "{key} off"
            );
            for scheme in ["disable-enable", "poll", "napi-poll", "hybrid"] {
                let e = base()
                    .with("scheme", s(scheme))
                    .with(key, on.clone())
                    .try_build()
                    .unwrap_err();
                assert_eq!(e.key(), key, "{scheme}");
                assert!(e.to_string().contains("polling loop"), "{e}");
                assert!(
                    base()
                        .with("scheme", s(scheme))
                        .with(key, off.clone())
                        .try_build()
                        .is_ok(),
                    "{scheme}, {key} off"
                );
            }
            for scheme in ["napi", "irq", "coalesce-count", "coalesce-time"] {
                assert!(
                    base()
                        .with("scheme", s(scheme))
                        .with(key, on.clone())
                        .try_build()
                        .is_ok(),
                    "{scheme} {key}"
                );
            }
        }
    }

    #[test]
    fn a_nonblocking_epoll_wait_loop_must_cost_something() {
        let spin = base()
            .and(&epoll_app())
            .with("epoll.timeout_ms", i(0))
            .with("epoll.batch_ns", f(0.0));
        let e = spin.try_build().unwrap_err();
        assert_eq!(e.key(), "epoll.batch_ns");
        assert!(!e.to_string().contains('\n'));
        assert!(
            spin.clone()
                .with("epoll.batch_ns", f(1.0))
                .try_build()
                .is_ok()
        );
        assert!(
            spin.clone()
                .with("epoll.timeout_ms", i(-1))
                .try_build()
                .is_ok()
        );
        assert!(
            spin.and(&app(0, 0, "recv")).try_build().is_ok(),
            "no app waits with epoll"
        );
    }

    #[test]
    fn the_base_scenarios_warn_about_nothing() {
        for p in [
            base(),
            base().and(&defer()).with("socket.busy_read_us", f(50.0)),
            base()
                .and(&defer())
                .with("socket.busy_read_us", f(50.0))
                .with("socket.busy_poll_budget", i(4))
                .with("socket.prefer_busy_poll", b(true)),
            base().and(&suspend()),
            base()
                .and(&epoll_app())
                .with("epoll.timeout_ms", i(0))
                .with("epoll.batch_ns", f(100.0)),
            base()
                .and(&epoll_app())
                .with("epoll.busy_poll_us", f(50.0))
                .with("epoll.busy_poll_budget", i(4))
                .with("epoll.maxevents", i(4)),
            base().with("rr.outstanding", i(2)),
            base().with("rr.rate_rps", f(1000.0)),
        ] {
            assert_eq!(p.warnings(), Vec::<String>::new(), "{p:?}");
        }
    }

    #[test]
    fn preferring_busy_polling_without_deferral_warns_naming_the_missing_setting() {
        for (prefer, io, busy_key) in [
            ("socket.prefer_busy_poll", "recv", "socket.busy_read_us"),
            ("epoll.prefer_busy_poll", "epoll", "epoll.busy_poll_us"),
        ] {
            let p = base()
                .and(&app(0, 0, io))
                .with(busy_key, f(50.0))
                .with(prefer, b(true));
            let reason = |p: &Pairs| {
                p.build()
                    .warnings
                    .iter()
                    .find(|w| w.key == prefer)
                    .map(|w| w.reason.clone())
            };
            let none = reason(&p).expect("no deferral");
            assert!(none.contains("set kernel.napi_defer_hard_irqs"), "{none}");
            let half =
                reason(&p.clone().with("kernel.napi_defer_hard_irqs", i(2))).expect("no timer");
            assert!(half.contains("set kernel.gro_flush_timeout_ns"), "{half}");
            let half = reason(&p.clone().with("kernel.gro_flush_timeout_ns", f(20_000.0)))
                .expect("no deferred IRQs");
            assert!(half.contains("set kernel.napi_defer_hard_irqs"), "{half}");
            assert_eq!(reason(&p.and(&defer())), None);
        }
    }

    #[test]
    fn irq_suspension_warns_naming_the_first_missing_precondition() {
        let reason = |p: &Pairs| {
            let sc = p.build();
            let w: Vec<_> = sc
                .warnings
                .iter()
                .filter(|w| w.key == "kernel.irq_suspend_timeout_ns")
                .map(|w| w.reason.clone())
                .collect();
            assert!(w.len() <= 1, "{w:?}");
            w.into_iter().next()
        };
        let full = base().and(&suspend());
        assert_eq!(reason(&full), None);
        let recv = full.clone().and(&app(0, 0, "recv"));
        assert!(reason(&recv).unwrap().contains("app.N.io = \"epoll\""));
        let no_prefer = full.clone().with("epoll.prefer_busy_poll", b(false));
        assert!(
            reason(&no_prefer)
                .unwrap()
                .contains("without epoll.prefer_busy_poll")
        );
        let no_defer = full.clone().with("kernel.gro_flush_timeout_ns", f(0.0));
        assert!(
            reason(&no_defer)
                .unwrap()
                .contains("set kernel.gro_flush_timeout_ns")
        );
        let off = no_defer.with("kernel.irq_suspend_timeout_ns", f(0.0));
        assert_eq!(reason(&off), None);
    }

    #[test]
    fn settings_of_an_absent_mechanism_warn() {
        // rr.* without rr traffic
        let cbr = Pairs::default().duration_ms(1.0).and(&app(0, 0, "recv"));
        assert!(warned(&cbr).is_empty(), "{:?}", warned(&cbr));
        for (key, value) in [
            ("rr.clients", i(4)),
            ("rr.outstanding", i(2)),
            ("rr.remote_us", f(5.0)),
            ("rr.remote_dist", s("exponential")),
            ("rr.rate_rps", f(1000.0)),
            ("rr.response_bytes", i(100)),
            ("rr.timeout_us", f(50.0)),
        ] {
            assert_eq!(warned(&cbr.clone().with(key, value)), [key]);
        }
        // the cbr source's keys with rr traffic; rr.outstanding with an open loop
        for (key, value) in [
            ("traffic.rate_pps", f(1000.0)),
            ("traffic.flows", i(4)),
            ("traffic.flow_zipf_s", f(1.0)),
        ] {
            assert!(warned(&base().with(key, value)).contains(&key.to_string()));
        }
        let open = base().with("rr.rate_rps", f(1000.0));
        assert_eq!(
            warned(&open.clone().with("rr.outstanding", i(2))),
            ["rr.outstanding"]
        );
        // recv's keys without a recv app, or without socket.busy_read_us
        let epoll = base().and(&epoll_app());
        for (key, value) in [
            ("socket.busy_read_us", f(50.0)),
            ("socket.busy_poll_budget", i(4)),
            ("socket.prefer_busy_poll", b(true)),
        ] {
            let w = epoll
                .clone()
                .and(&defer())
                .with(key, value.clone())
                .build()
                .warnings;
            assert_eq!(w.len(), 1, "{w:?}");
            assert!(w[0].reason.contains("no app reads with recv"), "{w:?}");
            if key != "socket.busy_read_us" {
                let w = base().and(&defer()).with(key, value).build().warnings;
                assert_eq!(w.len(), 1, "{w:?}");
                assert!(w[0].reason.contains("set socket.busy_read_us"), "{w:?}");
            }
        }
        // epoll's keys without an epoll app
        for (key, value) in [
            ("kernel.busy_poll_us", f(50.0)),
            ("epoll.busy_poll_us", f(50.0)),
            ("epoll.busy_poll_budget", i(4)),
            ("epoll.prefer_busy_poll", b(true)),
            ("epoll.maxevents", i(4)),
            ("epoll.timeout_ms", i(0)),
            ("epoll.batch_ns", f(100.0)),
        ] {
            let w = base().and(&defer()).with(key, value).build().warnings;
            assert_eq!(w.len(), 1, "{key}: {w:?}");
            assert_eq!(w[0].key, key);
            assert!(w[0].reason.contains("no app waits with epoll"), "{w:?}");
        }
        // busy-poll settings of a nonblocking epoll_wait, which never busy-polls
        let nonblocking = epoll
            .with("epoll.timeout_ms", i(0))
            .with("epoll.batch_ns", f(100.0))
            .with("epoll.busy_poll_budget", i(4));
        assert!(
            warned(&nonblocking).is_empty(),
            "epoll is off: nothing to say"
        );
        let on = nonblocking.with("kernel.busy_poll_us", f(50.0));
        assert_eq!(
            warned(&on),
            ["kernel.busy_poll_us", "epoll.busy_poll_budget"]
        );
    }
}

/// The arrival time (ps) of each client's last request.
#[derive(Default)]
struct Requests {
    arrival_ps: Vec<u64>,
    flows: Vec<u32>,
}

impl Tracer for Requests {
    fn arrival(&mut self, id: u64, t: SimTime, _: bool) {
        record_arrival(&mut self.arrival_ps, id, t);
    }
    fn packet(&mut self, id: u64, _: u32, flow: u32, _: u16) {
        assert_eq!(id as usize + 1, self.arrival_ps.len());
        self.flows.push(flow);
    }
    fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
}

impl Requests {
    /// The last request of each of `clients` clients, ps (0: none).
    fn last_per_client(&self, clients: usize) -> Vec<u64> {
        let mut last = vec![0; clients];
        for (&fl, &t) in self.flows.iter().zip(&self.arrival_ps) {
            last[fl as usize] = t;
        }
        last
    }
}

/// The app's loops (`recv`, `epoll_wait`, the busy loop) and the request/response traffic
/// they answer, on timelines.
mod loops {
    use super::*;

    #[test]
    fn epoll_wait_returns_at_most_maxevents_events() {
        for (maxevents, least_per_return) in [(1, 1.0), (4, 3.5), (64, 32.0)] {
            let r = base()
                .and(&epoll_app())
                .with("rr.rate_rps", f(600_000.0))
                .with("rr.clients", i(64))
                .with("epoll.batch_ns", f(300.0))
                .with("epoll.maxevents", i(maxevents))
                .run();
            let bp = busy(&r);
            assert!(bp.epoll_returns > 10, "{bp:?}");
            assert!(
                bp.epoll_events <= maxevents as u64 * bp.epoll_returns,
                "{bp:?}"
            );
            // the app is overloaded: its socket holds more than maxevents at each return
            let per_return = bp.epoll_events as f64 / bp.epoll_returns as f64;
            assert!(per_return >= least_per_return, "{maxevents}: {bp:?}");
            assert_eq!(bp.sessions, 0, "epoll does not busy-poll: {bp:?}");
        }
    }

    #[test]
    fn a_spinning_loop_sees_a_packet_at_the_end_of_the_iteration_under_way() {
        // one client: the loop spins when the request arrives, and notices it once the
        // iteration under way is over, not at its deadline 52 us later
        let rtt = |iter_ns: f64| {
            let r = base()
                .with("socket.busy_read_us", f(50.0))
                .with("rr.remote_us", f(20.0))
                .with("platform.busy_iter_ns", f(iter_ns))
                .run();
            let rtt = r.rtt_us.clone().expect("rr traffic");
            assert_eq!(rtt.min, rtt.max, "every transaction alike");
            assert!(busy(&r).sessions > 300, "{:?}", busy(&r));
            rtt.mean.expect("transactions")
        };
        let exact = rtt(1.0);
        for iter_ns in [100.0, 1000.0] {
            let late_us = rtt(iter_ns) - exact;
            assert!(
                0.0 < late_us && late_us < iter_ns / 1000.0,
                "{iter_ns} ns iterations: {late_us} us late"
            );
        }
    }

    #[test]
    fn a_busy_loop_yields_to_a_thread_woken_on_its_core_once_its_slice_is_used() {
        // two apps on one core, one client each; each busy-polls for up to 1 ms. With a
        // 10 us slice, the spinning app yields as soon as the other is woken (need_resched),
        // so no request waits for the spinner's deadline.
        let r = base()
            .with("kernel.sched_slice_us", f(10.0))
            .with("rr.clients", i(2))
            .with("rr.remote_us", f(20.0))
            .with("socket.busy_read_us", f(1000.0))
            .with("app.0.flows", list(&[0]))
            .and(&app(1, 0, "recv"))
            .with("app.1.flows", list(&[1]))
            .run();
        let rtt = r.rtt_us.as_ref().expect("rr traffic");
        assert!(rtt.max.unwrap() < 30.0, "{rtt:?}");
        assert!(tps(&r) > 70_000.0, "{}", tps(&r));
        let t = r.per_app.iter().map(|a| a.consumed).sum::<u64>();
        assert!(
            r.counts.context_switches + 2 >= t,
            "a switch per request: {} for {t}",
            r.counts.context_switches
        );
    }

    #[test]
    fn a_request_dropped_at_a_full_ring_is_sent_again_so_every_client_keeps_asking() {
        // 64 clients' first requests arrive together at an 8-descriptor ring: most are dropped
        // and come back rr.timeout_us later
        let sc = base()
            .with("run.warmup_ms", f(0.0))
            .with("rr.clients", i(64))
            .with("nic.ring_descriptors", i(8))
            .with("rr.remote_us", f(1.0))
            .with("rr.timeout_us", f(100.0))
            .build();
        let (r, t) = run_with(&sc, Requests::default());
        assert!(r.packets.dropped_nic > 8, "{:?}", r.packets);
        let end = sc.run.end.ps();
        let last = t.last_per_client(64);
        assert!(
            last.iter().all(|&l| l > end - end / 10),
            "each client asks until the end: {last:?}"
        );
    }

    #[test]
    fn a_response_dropped_at_a_full_tx_ring_is_counted_and_its_client_asks_again() {
        // 1500-byte responses (1.2 us on the wire) out of a one-descriptor Tx ring
        let p = base()
            .with("rr.clients", i(16))
            .with("rr.remote_us", f(1.0))
            .with("rr.response_bytes", i(1500));
        let sc = p.clone().with("nic.tx_ring_descriptors", i(1)).build();
        let (r, t) = run_with(&sc, Requests::default());
        assert!(
            r.responses_dropped.unwrap() > 50,
            "{:?}",
            r.responses_dropped
        );
        let end = sc.run.end.ps();
        let last = t.last_per_client(16);
        assert!(last.iter().all(|&l| l > end - end / 10), "{last:?}");
        let roomy = p.with("nic.tx_ring_descriptors", i(512)).run();
        assert_eq!(roomy.responses_dropped, Some(0));
        assert!(tps(&roomy) > tps(&r));
    }

    #[test]
    fn a_closed_loop_sends_every_clients_requests_remote_us_after_time_zero() {
        // 3 clients with 2 requests each in flight, 7 us away: six requests at 7 us, in
        // client order; then one per response
        let (r, t) = run_with(
            &base()
                .with("rr.clients", i(3))
                .with("rr.outstanding", i(2))
                .with("rr.remote_us", f(7.0))
                .build(),
            Requests::default(),
        );
        assert_eq!(t.arrival_ps[..6], [7_000_000; 6]);
        assert_eq!(t.flows[..6], [0, 1, 2, 0, 1, 2]);
        assert!(
            t.arrival_ps[6] > 7_000_000 + 7_000_000,
            "{:?}",
            &t.arrival_ps[..8]
        );
        assert!(
            t.arrival_ps.windows(2).all(|w| w[0] <= w[1]),
            "in time order"
        );
        assert!(tps(&r) > 0.0);
    }

    #[test]
    fn an_open_loop_hands_its_requests_to_the_clients_in_turn_at_its_rate() {
        let sc = base()
            .with("rr.rate_rps", f(100_000.0))
            .with("rr.clients", i(3))
            .build();
        let (r, t) = run_with(&sc, Requests::default());
        assert!(
            t.flows
                .iter()
                .enumerate()
                .all(|(k, &fl)| fl as usize == k % 3),
            "{:?}",
            &t.flows[..10]
        );
        // Poisson at 100,000/s over 11 ms: 1100 expected, whatever the responses do
        let n = t.arrival_ps.len() as f64;
        assert!((n / 1100.0 - 1.0).abs() < 0.1, "{n}");
        assert!(
            (r.offered_pps / 100_000.0 - 1.0).abs() < 0.1,
            "{}",
            r.offered_pps
        );
        assert!(r.rtt_us.unwrap().mean.is_some());
    }

    #[test]
    fn a_sockets_utilisation_is_its_charge_over_its_buffer() {
        let mut sock = Socket::new(10_000, 1000);
        assert!(sock.is_empty());
        assert_eq!((sock.len(), sock.utilisation()), (0, 0.0));
        let pkt = |id| irqlab_core::nic::Packet {
            arrival: SimTime(id),
            size_bytes: 64,
            flow: 0,
            class: 0,
            id,
        };
        assert!(sock.enqueue(pkt(1), 2000));
        assert!(sock.enqueue(pkt(2), 2000));
        assert!(!sock.is_empty());
        assert_eq!(sock.len(), 2);
        assert_eq!(sock.utilisation(), 0.4);
        assert_eq!(sock.dequeue().map(|p| p.id), Some(1));
        assert_eq!(sock.len(), 1);
        assert_eq!(
            sock.utilisation(),
            0.4,
            "released in batches: 2000 < 10000 / 4"
        );
        assert_eq!(sock.dequeue().map(|p| p.id), Some(2));
        assert!(sock.is_empty());
        assert_eq!(sock.utilisation(), 0.0);
    }
}

/// Random busy-poll scenarios: no panic, packets and CPU time conserved, deterministic.
mod random {
    use super::*;
    use proptest::prelude::*;

    fn scenario() -> impl Strategy<Value = Pairs> {
        (
            (
                any::<u32>(),
                0.2..3.0f64,
                0.0..0.5f64,
                1..=2i128,
                1..=2i128,
                prop::sample::select(vec![0.0, 10.0, 100.0]),
                4..=256i128,
                1..=64i128,
            ),
            (
                1..=16i128,
                1..=4i128,
                0.0..50.0f64,
                prop::sample::select(vec!["deterministic", "exponential"]),
                prop::sample::select(vec![0.0, 50_000.0, 500_000.0]),
            ),
            (
                prop::sample::select(vec![0.0, 5.0, 50.0]),
                0..=16i128,
                any::<bool>(),
                prop::sample::select(vec![0.0, 10.0, 100.0]),
                any::<bool>(),
                1..=8i128,
                1.0..2000.0f64,
            ),
            (
                prop::sample::select(vec![0.0, 50_000.0, 2_000_000.0]),
                0..=3i128,
                prop::sample::select(vec![0.0, 5_000.0, 50_000.0]),
                1..=64i128,
                10.0..500.0f64,
                prop::sample::select(vec!["deterministic", "exponential"]),
            ),
            (
                prop::sample::select(vec!["recv", "epoll"]),
                prop::sample::select(vec!["recv", "epoll"]),
                0..=1i128,
            ),
        )
            .prop_map(
                |(
                    (seed, duration, warmup, cores, queues, itr, ring, tx_ring),
                    (clients, outstanding, remote, remote_dist, rate),
                    (read, sock_budget, sock_prefer, epoll_us, epoll_prefer, maxevents, batch),
                    (suspend, defer_irqs, gro, weight, iter, proto_dist),
                    (io0, io1, core1),
                )| {
                    let core1 = core1.min(cores - 1);
                    let half = (clients / 2).max(1);
                    let mut p = base()
                        .with("run.seed", i(seed as i128))
                        .duration_ms(duration)
                        .with("run.warmup_ms", f(warmup))
                        .with("host.cores", i(cores))
                        .with("nic.queues", i(queues))
                        .with("nic.itr_us", f(itr))
                        .with("nic.ring_descriptors", i(ring))
                        .with("nic.tx_ring_descriptors", i(tx_ring))
                        .with("rr.clients", i(clients))
                        .with("rr.outstanding", i(outstanding))
                        .with("rr.remote_us", f(remote))
                        .with("rr.remote_dist", s(remote_dist))
                        .with("rr.rate_rps", f(rate))
                        .with("socket.busy_read_us", f(read))
                        .with("socket.busy_poll_budget", i(sock_budget))
                        .with("socket.prefer_busy_poll", b(sock_prefer))
                        .with("epoll.busy_poll_us", f(epoll_us))
                        .with("epoll.prefer_busy_poll", b(epoll_prefer))
                        .with("epoll.maxevents", i(maxevents))
                        .with("epoll.batch_ns", f(batch))
                        .with("kernel.irq_suspend_timeout_ns", f(suspend))
                        .with("kernel.napi_defer_hard_irqs", i(defer_irqs))
                        .with("kernel.gro_flush_timeout_ns", f(gro))
                        .with("kernel.napi_weight", i(weight))
                        .with("platform.busy_iter_ns", f(iter))
                        .with("platform.proto_dist", s(proto_dist))
                        .and(&app(0, 0, io0))
                        .with("app.0.cost_dist", s("exponential"))
                        .with("app.0.flows", list(&(0..half).collect::<Vec<_>>()));
                    if clients > 1 {
                        p = p
                            .and(&app(1, core1, io1))
                            .with("app.1.flows", list(&(half..clients).collect::<Vec<_>>()));
                    }
                    p
                },
            )
    }

    #[test]
    fn random_busy_poll_scenarios_conserve_and_repeat() {
        crate::common::for_random("BUSY_CASES", 12, scenario(), |pairs| {
            let sc = pairs.build();
            let a = run(&sc);
            assert_conserved(&a);
            prop_assert_eq!(&a, &run(&sc), "the same scenario twice");
            Ok(())
        });
    }
}

/// Busy polls as the host counts and sizes them.
mod busy_polls {
    use super::*;

    /// Counts the driver's poll calls that returned, softirq and busy alike.
    #[derive(Default)]
    struct PollCalls(u64);

    impl Tracer for PollCalls {
        fn arrival(&mut self, _: u64, _: SimTime, _: bool) {}
        fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
        fn poll(&mut self, _: usize, _: usize, _: SimTime, _: u64, _: u64) {
            self.0 += 1;
        }
    }

    /// The request load of `a_busy_poll_never_processes_more_than_its_budget`, busy-polling
    /// with prefer and deferral, from the start of the run.
    fn loaded() -> Pairs {
        base()
            .with("rr.rate_rps", f(600_000.0))
            .with("rr.clients", i(64))
            .with("socket.busy_read_us", f(100.0))
            .with("socket.prefer_busy_poll", b(true))
            .with("nic.ring_descriptors", i(4096))
            .with("run.warmup_ms", f(0.0))
            .and(&defer())
    }

    #[test]
    fn every_busy_poll_counts_as_a_call_of_the_vectors_poll_function() {
        // the report's polls are every call of the driver's poll function: the softirq's and
        // the busy loops' (counted when a call starts; the tracer sees it when it returns)
        let (r, calls) = run_with(&loaded().build(), PollCalls::default());
        let bp = busy(&r);
        assert!(bp.polls > 1000, "{bp:?}");
        assert!(r.counts.polls >= bp.polls, "{:?} {bp:?}", r.counts);
        assert!(
            r.counts.polls == calls.0 || r.counts.polls == calls.0 + 1,
            "{} counted, {} returned",
            r.counts.polls,
            calls.0
        );
    }

    #[test]
    fn a_busy_poll_of_two_class_rings_takes_at_most_half_its_budget_from_each() {
        // two traffic classes, so two Rx rings: a busy poll's budget (8) is split equally,
        // 4 per ring; both rings hold more, so the fullest polls take 4 + 4
        let r = loaded()
            .with("traffic.classes.0.share", f(0.5))
            .with("traffic.classes.1.share", f(0.5))
            .run();
        let bp = busy(&r);
        assert!(bp.polls > 1000, "{bp:?}");
        assert_eq!(bp.most_per_poll, BUSY_POLL_BUDGET, "{bp:?}");
    }

    #[test]
    fn a_busy_loop_polls_only_when_the_napi_has_work() {
        // an iteration polls only when a ring holds a packet or a Tx descriptor is done, and
        // otherwise spins. At 10 krps the requests come one at a time: each loop polls once
        // when it finds work and once more in busy_poll_stop, and spins in between.
        let r = base()
            .with("rr.rate_rps", f(10_000.0))
            .with("rr.clients", i(8))
            .with("socket.busy_read_us", f(100.0))
            .run();
        let bp = busy(&r);
        assert!(bp.sessions > 100, "{bp:?}");
        assert_eq!(bp.polls, 2 * bp.sessions, "{bp:?}");
    }

    #[test]
    fn an_epoll_app_waits_with_epoll_wait_without_busy_polling_or_requests() {
        // CBR traffic (not rr) and no busy polling: the app still waits with epoll_wait; with
        // a zero timeout each call that finds nothing returns at once and is counted
        let r = Pairs::default()
            .with("platform.preset", s("emmerich2015"))
            .with("platform.wakeup_ns", f(0.0))
            .with("traffic.kind", s("cbr"))
            .rate_pps(10_000.0)
            .duration_ms(10.0)
            .with("run.warmup_ms", f(1.0))
            .and(&epoll_app())
            .with("epoll.timeout_ms", i(0))
            .with("epoll.batch_ns", f(200.0))
            .run();
        let bp = busy(&r);
        assert!(bp.empty_epoll_waits > 1000, "{bp:?}");
        assert_eq!((bp.sessions, bp.polls), (0, 0), "{bp:?}");
        assert_eq!(r.packets.consumed, r.packets.delivered, "{:?}", r.packets);
    }
}

/// The busy loop's spin, simulated as one CPU job and cut at the end of the iteration under
/// way by what would change the next iteration: a packet on the owned NAPI, the NAPI
/// released, a thread woken on the spinner's core. Each test has one of these alone cut the
/// spin, and checks the time or the figure the cut decides.
mod spin_cuts {
    use super::*;

    /// Each request's arrival (ps), flow and queue; each request an app finished: (app,
    /// request, ps), in time order.
    #[derive(Default)]
    struct Timeline {
        arrival_ps: Vec<u64>,
        flow: Vec<u32>,
        queue: Vec<u16>,
        consumed: Vec<(usize, u64, u64)>,
    }

    impl Tracer for Timeline {
        fn arrival(&mut self, _: u64, t: SimTime, _: bool) {
            self.arrival_ps.push(t.ps());
        }
        fn packet(&mut self, _: u64, _: u32, flow: u32, queue: u16) {
            self.flow.push(flow);
            self.queue.push(queue);
        }
        fn delivered(&mut self, _: u64, _: SimTime, _: SimTime) {}
        fn consumed(&mut self, app: usize, id: u64, t: SimTime) {
            self.consumed.push((app, id, t.ps()));
        }
    }

    #[test]
    fn a_spin_is_cut_exactly_at_the_first_iteration_boundary_after_the_packet() {
        // One client whose next request comes Exp(20 us) after each response, so requests
        // land at every phase of an iteration. The app (core 1; the IRQ and the softirq on
        // core 0, so nothing preempts its spin) busy-polls for up to 1 ms from t0, when it
        // has sent the response and calls recv again; its iterations end at t0 + j * iter.
        // A request arriving at ta is seen at the end of the iteration under way,
        // t0 + iter * (floor((ta - t0) / iter) + 1), and finished exactly 2495 ns later: the
        // poll (500 ns) and the protocol (462 ns), busy_poll_stop's poll (500 ns) and unmask
        // (33 ns), the app (1000 ns).
        for iter_ps in [1, 100_000, 333_000, 1_000_000] {
            let sc = base()
                .with("host.cores", i(2))
                .with("app.0.core", i(1))
                .with("app.0.flows", list(&[0]))
                .with("socket.busy_read_us", f(1000.0))
                .with("rr.remote_us", f(20.0))
                .with("rr.remote_dist", s("exponential"))
                .with("platform.busy_iter_ns", f(iter_ps as f64 / 1000.0))
                .build();
            let (_, t) = run_with(&sc, Timeline::default());
            let mut checked = 0;
            for w in t.consumed.windows(2) {
                let (t0, (_, req, done)) = (w[0].2, w[1]);
                let ta = t.arrival_ps[req as usize];
                // just after t0 the softirq poll of the IRQ that busy_poll_stop re-enabled
                // may still own the NAPI (and take the request itself)
                if ta < t0 + 5_000_000 {
                    continue;
                }
                let cut = t0 + iter_ps * ((ta - t0) / iter_ps + 1);
                assert_eq!(
                    done,
                    cut + 2_495_000,
                    "{iter_ps} ps iterations from {t0}: request {req} at {ta}"
                );
                checked += 1;
            }
            assert!(checked > 200, "{iter_ps} ps: {checked} requests checked");
        }
    }

    #[test]
    fn an_epoll_wait_that_only_prefers_busy_polling_makes_one_iteration_and_never_spins() {
        // epoll.busy_poll_us = 0 and net.core.busy_poll = 0 with prefer_busy_poll: ep_poll
        // busy-polls, but busy_loop_ep_timeout is true at once, so __napi_busy_loop leaves
        // after its first iteration and never reaches cpu_relax(): the length of an empty
        // iteration cannot matter.
        let run_at = |iter_ns: f64| {
            base()
                .and(&suspend())
                .with("rr.clients", i(4))
                .with("rr.remote_us", f(20.0))
                .with("platform.busy_iter_ns", f(iter_ns))
                .run()
        };
        let short = run_at(100.0);
        assert!(busy(&short).sessions > 100, "{:?}", busy(&short));
        assert_eq!(without_scenario(short), without_scenario(run_at(100_000.0)));
    }

    #[test]
    fn a_thread_woken_from_another_core_gets_a_spinning_core_once_the_spinners_slice_is_used() {
        // Two apps on core 0, both vectors on core 1. App 0 busy-polls queue 1 (its flows 0
        // and 1) for up to 1 ms; app 1 (epoll, no busy polling) reads flow 2, which RSS
        // steers to queue 0: its requests are processed by core 1's softirq, which wakes it on
        // core 0 while app 0 spins. need_resched cuts the spin at the end of the iteration
        // under way and app 0 yields once its 1 us slice is used. So app 1 waits at most a
        // slice, an iteration and one of app 0's requests, never for app 0's next request
        // (20,000/s) or its deadline.
        let sc = base()
            .cores(2)
            .with("nic.irq_affinity", list(&[1, 1]))
            .with("kernel.sched_slice_us", f(1.0))
            .with("rr.clients", i(3))
            .with("rr.rate_rps", f(30_000.0))
            .with("socket.busy_read_us", f(1000.0))
            .with("app.0.flows", list(&[0, 1]))
            .and(&app(1, 0, "epoll"))
            .with("app.1.flows", list(&[2]))
            .build();
        let (r, t) = run_with(&sc, Timeline::default());
        for (&flow, &queue) in t.flow.iter().zip(&t.queue) {
            assert_eq!(queue, if flow == 2 { 0 } else { 1 }, "flow {flow}");
        }
        assert!(busy(&r).sessions > 100, "{:?}", busy(&r));
        let woken = &r.per_app[1];
        assert!(woken.consumed > 50, "{woken:?}");
        let most = woken.app_latency_us.max.expect("requests");
        assert!(most < 10.0, "app 1 waited up to {most} us");
    }

    /// Two apps reading one queue (its vector on core 0), one client each, 20 us away: a
    /// `recv` app busy-polling for up to 1 ms, an epoll app busy-polling for 10 us.
    fn sharing_a_napi(recv_core: i128, epoll_core: i128) -> Pairs {
        base()
            .with("host.cores", i(2))
            .with("rr.clients", i(2))
            .with("rr.remote_us", f(20.0))
            .with("socket.busy_read_us", f(1000.0))
            .with("epoll.busy_poll_us", f(10.0))
            .and(&app(0, recv_core, "recv"))
            .with("app.0.flows", list(&[0]))
            .and(&app(1, epoll_core, "epoll"))
            .with("app.1.flows", list(&[1]))
    }

    #[test]
    fn a_poller_waiting_for_a_napi_takes_it_when_the_owners_loop_ends() {
        // The epoll app (core 1) answers first and its epoll_wait takes the NAPI; the recv
        // app (core 0, after the softirq) finds it owned and spins waiting. When the epoll
        // loop times out, busy_poll_stop frees the NAPI and the waiting loop takes it at the
        // end of its iteration, so the next two requests are polled by it: no request of
        // the window waits for an IRQ, and every transaction takes the same time.
        let r = sharing_a_napi(0, 1).run();
        let bp = busy(&r);
        assert!(r.packets.consumed > 400, "{:?}", r.packets);
        assert_eq!(bp.packets, r.counts.polled_packets, "{bp:?} {:?}", r.counts);
        let rtt = r.rtt_us.expect("rr traffic");
        assert_eq!(rtt.min, rtt.max, "{rtt:?}");
    }

    #[test]
    fn an_owner_still_sees_its_napis_packets_after_a_waiting_poller_gives_up() {
        // The recv app (core 1) answers first and takes the NAPI for up to 1 ms; the epoll
        // app's loop (core 0) finds it owned, waits 10 us and gives up. The owner's spin
        // must still be cut by the next request on its NAPI: every transaction takes
        // the same time, far from the owner's 1 ms deadline.
        let r = sharing_a_napi(1, 0).run();
        let bp = busy(&r);
        assert!(bp.sessions > 400, "{bp:?}");
        let rtt = r.rtt_us.expect("rr traffic");
        assert_eq!(rtt.min, rtt.max, "{rtt:?}");
        assert!(rtt.max.unwrap() < 25.0, "{rtt:?}");
    }
}

/// The busy loop's deadline is wall-clock time (`busy_loop_timeout` reads `local_clock`).
mod deadline {
    use super::*;

    /// Two cores, 16 vectors; 64 clients sending 32 k requests/s (Poisson, round robin: 500/s
    /// each). App 0 (core 0, a blocking recv that busy-polls for 1000 µs) answers one client,
    /// alone on its vector, which interrupts core 0; app 1 (core 1, epoll without busy
    /// polling) answers the other 63, whose vectors interrupt `others_core` (a 2 µs ISR and
    /// 2 µs of protocol processing a request). The requests arrive at the same times
    /// whichever core that is.
    fn loops(others_core: i128) -> Report {
        let host = Pairs::default()
            .with("host.cores", i(2))
            .with("nic.queues", i(16))
            .with("traffic.kind", s("rr"))
            .with("rr.clients", i(64))
            .with("rr.rate_rps", f(32_000.0));
        let q = host
            .clone()
            .with("host.cores", i(1))
            .and(&app(0, 0, "recv"))
            .build()
            .topology
            .flow_queue;
        let alone = (0..64)
            .find(|&k| q.iter().filter(|&&x| x == q[k]).count() == 1)
            .expect("a client alone on its vector");
        let affinity: Vec<i128> = (0..16)
            .map(|v| {
                if v == q[alone] as usize {
                    0
                } else {
                    others_core
                }
            })
            .collect();
        let others: Vec<i128> = (0..64).filter(|&k| k != alone as i128).collect();
        host.with("nic.irq_affinity", list(&affinity))
            .irq_ns(2000.0)
            .with("platform.irq_dist", s("deterministic"))
            .proto_ns(2000.0)
            .with("platform.proto_dist", s("deterministic"))
            .with("platform.wakeup_ns", f(0.0))
            .and(&app(0, 0, "recv"))
            .with("app.0.flows", list(&[alone as i128]))
            .and(&app(1, 1, "epoll"))
            .with("app.1.flows", list(&others))
            .with("socket.busy_read_us", f(1000.0))
            .with("run.warmup_ms", f(0.0))
            .duration_ms(200.0)
            .run()
    }

    #[test]
    fn a_busy_loop_that_interrupts_preempt_still_ends_at_its_deadline() {
        // About 60 % of app 0's loops find no request within their 1024 µs and time out. When
        // the other clients' interrupts and softirqs run on core 0 too, they take part of
        // that wall-clock time, and each loop spins only for what is left: core 0 spins less
        // by a good part of the time they take (the part that falls inside loops, which
        // cover about half the run). A loop that counted its own iterations instead would
        // spin as long either way.
        let alone = loops(1);
        let shared = loops(0);
        for r in [&alone, &shared] {
            assert_conserved(r);
            let busy = r.busy_poll.as_ref().expect("busy-poll counts");
            assert!(busy.sessions > 50, "{busy:?}");
        }
        let (a, b) = (&alone.per_core[0].cpu_ps, &shared.per_core[0].cpu_ps);
        let extra = ((b.irq + b.softirq) - (a.irq + a.softirq)) as f64;
        let less_spin = a.busy_poll as f64 - b.busy_poll as f64;
        assert!(extra > 10e9, "the other clients take {extra} ps of core 0");
        assert!(
            less_spin > 0.25 * extra,
            "core 0 spun {less_spin} ps less while {extra} ps of interrupts and softirqs \
             preempted it"
        );
    }
}
