//! Integration tests of threaded NAPI per NAPI (`napi.N.threaded`, `napi.N.thread_core`,
//! `napi.N.thread_policy`) and of threaded busy polling (`napi.N.threaded = "busy-poll"`),
//! after `net/core/dev.c` (`____napi_schedule`, `napi_threaded_poll`,
//! `napi_threaded_poll_loop(napi, busy_poll)`, `napi_complete_done` with
//! `NAPI_STATE_IN_BUSY_POLL`) and the scheduler's rule for `SCHED_FIFO` against fair threads.

use irqlab_core::Report;

use crate::common::{Pairs, conserved, exact, f, i, list, s};

/// Three cores, a vector on each of cores 0 and 1, the same load on both; core 2 free.
fn two_vectors(rate_pps: f64) -> Pairs {
    exact("napi")
        .cores(3)
        .with("nic.queues", i(2))
        .with("nic.irq_affinity", list(&[0, 1]))
        .with("traffic.flows", i(64))
        .rate_pps(rate_pps)
        .proto_ns(1000.0)
        .irq_ns(2000.0)
        .with("platform.poll_ns", f(300.0))
        .with("platform.ctx_switch_ns", f(1000.0))
        .with("platform.task_wakeup_ns", f(500.0))
        .duration_ms(10.0)
}

/// Vector 1 alone is threaded, its thread on core 2.
fn vector_1_threaded(p: Pairs, mode: &str) -> Pairs {
    p.with("napi.0.threaded", s("device"))
        .with("napi.1.threaded", s(mode))
        .with("napi.1.thread_core", i(2))
}

fn napi_thread(r: &Report, c: usize) -> f64 {
    r.per_core[c]
        .cpu
        .napi_thread
        .expect("a NAPI thread's share")
}

#[test]
fn a_threaded_napi_moves_its_vectors_net_rx_work_from_softirq_to_its_thread_and_no_other() {
    let base = two_vectors(2e5).run();
    let r = vector_1_threaded(two_vectors(2e5), "on").run();
    conserved(&r);
    // vector 1's IRQ core runs its hard IRQs but no NET_RX any more; its thread's core does
    // the polls, charged to the thread
    assert!(base.per_core[1].cpu_ps.softirq > 0);
    assert_eq!(
        r.per_core[1].cpu_ps.softirq, 0,
        "no NET_RX where vector 1's IRQ fires"
    );
    assert!(r.per_core[1].cpu_ps.irq > 0);
    assert_eq!(r.per_core[2].cpu_ps.softirq, 0);
    // the same polls, less the softirq's own entry, plus the thread's switches in
    let moved = napi_thread(&r, 2);
    let was = base.per_core[1].cpu.softirq;
    let switches = r.per_core[2].counts.context_switches as f64 * 1e-6 / r.measured_s;
    assert!(
        moved > 0.8 * was && moved < was + switches + 0.01,
        "thread share {moved} against the softirq's {was} and switches' {switches}"
    );
    // vector 0 runs exactly as without threading vector 1 (its core only gains the
    // thread category, at 0)
    assert_eq!(r.per_queue[0], base.per_queue[0]);
    let mut core0 = r.per_core[0].clone();
    assert_eq!(core0.cpu_ps.napi_thread, Some(0));
    (core0.cpu.napi_thread, core0.cpu_ps.napi_thread) = (None, None);
    assert_eq!(core0, base.per_core[0]);
    // every packet is still delivered
    assert_eq!(r.packets.dropped_nic, 0);
    assert_eq!(r.packets.delivered, base.packets.delivered);
}

#[test]
fn the_device_setting_threads_every_vector_and_a_napi_of_its_own_can_turn_it_off() {
    let all = two_vectors(2e5)
        .with("kernel.threaded_napi", s("true").clone())
        .try_build();
    // (the device key is a bool: a string is refused, naming it)
    assert_eq!(all.unwrap_err().key(), "kernel.threaded_napi");
    let r = two_vectors(2e5)
        .with("kernel.threaded_napi", irqlab_core::Value::Bool(true))
        .with("kernel.napi_thread_core", i(2))
        .with("napi.0.threaded", s("off"))
        .run();
    // vector 0 keeps NET_RX on its core, vector 1's thread polls on core 2
    assert!(r.per_core[0].cpu_ps.softirq > 0);
    assert_eq!(r.per_core[1].cpu_ps.softirq, 0);
    assert!(napi_thread(&r, 2) > 0.1);
    conserved(&r);
}

/// One queue whose IRQ fires on core 0; its NAPI thread and a heavy app share core 1 (the
/// app's 3 µs and the stack's 1 µs a packet at 300k/s load core 1 beyond its capacity). The
/// ring (128 slots) fills in 0.43 ms, much less than the app takes to drain its socket (4 MB).
fn shared_core(policy: &str) -> Pairs {
    exact("napi")
        .cores(2)
        .with("nic.queues", i(1))
        .with("nic.irq_affinity", list(&[0]))
        .rate_pps(3e5)
        .proto_ns(1000.0)
        .irq_ns(1000.0)
        .with("platform.ctx_switch_ns", f(1000.0))
        .with("platform.task_wakeup_ns", f(500.0))
        .with("nic.ring_descriptors", i(128))
        .with("socket.rcvbuf_bytes", i(4 << 20))
        .with("kernel.sched_slice_us", f(3000.0))
        .with("app.0.core", i(1))
        .with("app.0.cost_ns", f(3000.0))
        .with("app.0.cost_dist", s("deterministic"))
        .with("app.0.flows", list(&[0]))
        .with("napi.0.threaded", s("on"))
        .with("napi.0.thread_core", i(1))
        .with("napi.0.thread_policy", s(policy))
        .duration_ms(30.0)
}

#[test]
fn a_fair_napi_thread_waits_for_the_apps_slice_and_a_fifo_one_goes_first() {
    let fair = shared_core("fair").run();
    let fifo = shared_core("fifo").run();
    conserved(&fair);
    conserved(&fifo);
    // fair: the woken thread waits behind the app until the app has used its slice or
    // emptied its socket, while the ring overflows
    assert!(
        fair.packets.dropped_nic > fair.packets.offered / 20,
        "fair: {:?}",
        fair.packets
    );
    // FIFO: the thread runs at the app's next packet boundary, so the ring never fills; the
    // overload goes to the app's socket instead
    assert_eq!(fifo.packets.dropped_nic, 0, "fifo: {:?}", fifo.packets);
    assert!(fifo.packets.dropped_socket > 0, "fifo: {:?}", fifo.packets);
    // the thread gets the core's share it needs (the stack's 1 µs a packet), the app the rest
    let t = napi_thread(&fifo, 1);
    assert!(t > 0.28, "fifo thread share {t}");
    assert!(fifo.per_core[1].cpu.app < fair.per_core[1].cpu.app);
}

/// Threaded busy polling of the one queue, its thread on core 1 (FIFO, as `chrt -f 50`), the
/// app on core 0.
fn busy_poll(rate_pps: f64) -> Pairs {
    exact("napi")
        .cores(2)
        .with("nic.queues", i(1))
        .with("nic.irq_affinity", list(&[0]))
        .rate_pps(rate_pps)
        .proto_ns(1000.0)
        .irq_ns(2000.0)
        .with("platform.poll_ns", f(300.0))
        .with("platform.ctx_switch_ns", f(1000.0))
        .with("app.0.core", i(0))
        .with("app.0.cost_ns", f(500.0))
        .with("napi.0.threaded", s("busy-poll"))
        .with("napi.0.thread_core", i(1))
        .with("napi.0.thread_policy", s("fifo"))
        .with("run.warmup_ms", f(1.0))
        .duration_ms(10.0)
}

#[test]
fn threaded_busy_polling_keeps_its_core_100_percent_busy_at_any_load() {
    for rate in [1e3, 5e4, 5e5] {
        let r = busy_poll(rate).run();
        conserved(&r);
        let core = &r.per_core[1].cpu;
        assert!(core.busy > 0.9999, "rate {rate}: core 1 busy {}", core.busy);
        assert!(napi_thread(&r, 1) > 0.9999);
        assert_eq!(r.packets.dropped_nic, 0, "rate {rate}");
        assert!(r.packets.delivered > 0);
    }
}

#[test]
fn threaded_busy_polling_leaves_the_irq_masked_after_the_first() {
    let r = busy_poll(1e5).with("run.warmup_ms", f(0.0)).run();
    // the first packet's IRQ schedules the NAPI and wakes its thread; the driver never
    // re-arms it: one IRQ in the whole run, no NAPI timer, no NET_RX anywhere
    assert_eq!(r.counts.irqs, 1, "{:?}", r.counts);
    assert_eq!(r.counts.timer_ticks, 0);
    assert_eq!(r.cpu_ps.softirq, 0);
    // the thread's packets go out at once: its latency is the stack's cost and less than a
    // poll's spin iteration more
    let p99 = r.latency_us.p99.expect("latencies");
    assert!(p99 < 1.0 + 0.3 + 0.1 + 0.05, "p99 {p99} us");
}

#[test]
fn threaded_busy_polling_ignores_deferral_which_is_warned_about() {
    let with = busy_poll(1e5)
        .with("napi.0.defer_hard_irqs", i(100))
        .with("napi.0.gro_flush_timeout_ns", f(15_000.0));
    let r = with.run();
    let base = busy_poll(1e5).run();
    assert_eq!(r.per_queue, base.per_queue);
    assert_eq!(r.counts.timer_ticks, 0);
    let w = with.warnings();
    assert!(
        w.iter()
            .any(|w| w.starts_with("napi.0.defer_hard_irqs") && w.contains("busy-polls")),
        "{w:?}"
    );
}

#[test]
fn two_fair_busy_polling_threads_on_one_core_take_turns_by_the_slice() {
    let r = exact("napi")
        .cores(3)
        .with("nic.queues", i(2))
        .with("nic.irq_affinity", list(&[0, 1]))
        .with("traffic.flows", i(64))
        .rate_pps(1e5)
        .proto_ns(1000.0)
        .irq_ns(2000.0)
        .with("napi.0.threaded", s("busy-poll"))
        .with("napi.0.thread_core", i(2))
        .with("napi.1.threaded", s("busy-poll"))
        .with("napi.1.thread_core", i(2))
        .with("kernel.sched_slice_us", f(100.0))
        .with("run.warmup_ms", f(1.0))
        .duration_ms(10.0)
        .run();
    conserved(&r);
    assert!(r.per_core[2].cpu.busy > 0.9999, "{:?}", r.per_core[2].cpu);
    // both vectors are polled (each thread has its turn); packets wait at most about a slice
    assert!(r.per_queue[0].packets_per_poll.is_some());
    assert!(r.per_queue[1].packets_per_poll.is_some());
    assert_eq!(r.packets.dropped_nic, 0);
    let p99 = r.latency_us.p99.expect("latencies");
    assert!(p99 < 100.0 + 20.0, "p99 {p99} us");
}

#[test]
fn threaded_busy_polling_on_a_core_that_has_to_run_something_else_is_refused() {
    // the app's core
    let e = busy_poll(1e5)
        .with("napi.0.thread_core", i(0))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.0.thread_core");
    let msg = e.to_string();
    assert!(msg.contains("keeps core 0 100 % busy"), "{msg}");
    assert!(msg.contains("app 0 runs there"), "{msg}");
    assert!(!msg.contains('\n'));
    // fair or FIFO alike
    let e = busy_poll(1e5)
        .with("napi.0.thread_core", i(0))
        .with("napi.0.thread_policy", s("fair"))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.0.thread_core");
    // the device's core, named as the device's key
    let e = busy_poll(1e5)
        .without("napi.0.thread_core")
        .with("kernel.napi_thread_core", i(0))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "kernel.napi_thread_core");
    // two FIFO busy pollers on one core: the second would never run
    let e = exact("napi")
        .cores(3)
        .with("nic.queues", i(2))
        .with("nic.irq_affinity", list(&[0, 1]))
        .with("napi.0.threaded", s("busy-poll"))
        .with("napi.0.thread_core", i(2))
        .with("napi.1.threaded", s("busy-poll"))
        .with("napi.1.thread_core", i(2))
        .with("kernel.napi_thread_policy", s("fifo"))
        .try_build()
        .unwrap_err();
    assert_eq!(e.key(), "napi.1.thread_core");
    assert!(
        e.to_string()
            .contains("vector 0's busy-polling NAPI thread"),
        "{e}"
    );
}

#[test]
fn a_thread_setting_of_a_vector_without_a_thread_is_warned_about() {
    let w = two_vectors(1e5)
        .with("napi.0.thread_core", i(2))
        .with("napi.0.thread_policy", s("fifo"))
        .warnings();
    for key in ["napi.0.thread_core", "napi.0.thread_policy"] {
        assert!(
            w.iter()
                .any(|w| w.starts_with(key) && w.contains("vector 0 has no NAPI thread")),
            "{key}: {w:?}"
        );
    }
    let w = two_vectors(1e5)
        .with("kernel.napi_thread_policy", s("fifo"))
        .warnings();
    assert!(
        w.iter().any(|w| w.starts_with("kernel.napi_thread_policy")),
        "{w:?}"
    );
    // with a vector threaded on the device's core and policy, neither device key is
    let w = vector_1_threaded(two_vectors(1e5), "on")
        .without("napi.1.thread_core")
        .with("kernel.napi_thread_core", i(2))
        .with("kernel.napi_thread_policy", s("fifo"))
        .warnings();
    assert!(
        !w.iter().any(|w| w.starts_with("kernel.napi_thread")),
        "{w:?}"
    );
}

#[test]
fn threaded_busy_polling_is_deterministic() {
    let a = busy_poll(2e5).run();
    let b = busy_poll(2e5).run();
    assert_eq!(a, b);
}

#[test]
fn a_busy_polling_vector_leaves_the_other_vectors_napis_as_they_were() {
    let base = two_vectors(2e5).run();
    // vector 0 busy-polls from core 2; vector 1 keeps NET_RX on its core
    let r = two_vectors(2e5)
        .with("napi.0.threaded", s("busy-poll"))
        .with("napi.0.thread_core", i(2))
        .run();
    conserved(&r);
    assert_eq!(r.per_queue[1], base.per_queue[1]);
    assert!(
        r.per_queue[1].irq_per_s > 1e5 * 0.9,
        "{}",
        r.per_queue[1].irq_per_s
    );
    // and beside a thread that sleeps when it is done
    let r = two_vectors(2e5)
        .with("napi.0.threaded", s("busy-poll"))
        .with("napi.0.thread_core", i(2))
        .with("napi.1.threaded", s("on"))
        .with("napi.1.thread_core", i(1))
        .run();
    conserved(&r);
    assert!(
        r.per_queue[1].irq_per_s > 1e5 * 0.9,
        "{}",
        r.per_queue[1].irq_per_s
    );
    assert!(
        napi_thread(&r, 1) < 0.5,
        "vector 1's thread sleeps between its polls"
    );
}
