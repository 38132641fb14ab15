//! The drivers' moderation policies at their table edges, and the engine applying them.

use irqlab_core::moderation::config::LinkSpeedPolicy;
use irqlab_core::moderation::dim::{Dim, DimMode};
use irqlab_core::moderation::i40e::{self, I40e};
use irqlab_core::moderation::ixgbe::Ixgbe;
use irqlab_core::moderation::{Policy, Sample, Write};
use irqlab_core::time::{SimDuration, SimTime};

use crate::common::{exact, i, s};

fn us(v: u64) -> SimDuration {
    SimDuration(v * crate::common::US)
}

/// One Rx-only session on a fresh policy, at jiffies 1 (not stale).
fn session(p: &mut impl Policy, packets: u64, bytes: u64) -> Option<Write> {
    p.on_complete(&Sample::rx_only(SimTime(1), 1, packets, bytes, 1))
}

#[test]
fn ixgbe_keeps_its_interval_from_exactly_48_to_95_packets() {
    // ixgbe_update_itr: P < 48 creeps by 2 µs, 48 ≤ P < 96 keeps, 96 ≤ P < 256 halves.
    // From the initial 50 µs (itr 200), 1500 B frames at 10G:
    // (packets, rx container after, vector itr after (µs × 4), write)
    let table: &[(u64, u8, u16, Option<u64>)] = &[
        (47, 52, 208, Some(52)),
        (48, 50, 200, None),
        (95, 50, 200, None),
        (96, 25, 100, Some(24)), // 200 >> 3 = 25; EITR drops bit 2: 24 µs
        (255, 25, 100, Some(24)),
    ];
    for &(packets, rx, itr, write) in table {
        let mut p = Ixgbe::new(10.0, false);
        let w = session(&mut p, packets, packets * 1500);
        assert_eq!((p.rx_itr(), p.itr()), (rx, itr), "{packets} packets");
        assert_eq!(w, write.map(|v| Write::Itr(us(v))), "{packets} packets");
    }
}

#[test]
fn i40e_sizes_381_to_1084_bytes_take_the_middle_arm_of_the_size_formula() {
    // i40e_update_itr, P > 256 at 10G (divisor 512): avg ≤ 380 → 40·B + 1696,
    // 381..=1084 → 15·B + 11452, 1085..=1980 → 5·B + 22420; DIV_ROUND_UP(w, 512) · 2 µs.
    let table: &[(u64, u64)] = &[
        (380, 66),   // 16896 / 512 = 33
        (381, 68),   // 17167 → 34
        (600, 80),   // 20452 → 40
        (1084, 110), // 27712 → 55
    ];
    for &(size, interval) in table {
        let mut p = I40e::new(10.0, false);
        let w = session(&mut p, 300, 300 * size);
        assert_eq!(w, Some(Write::Itr(us(interval))), "{size} B");
        assert_eq!(p.rx_current() & i40e::LATENCY, 0, "bulk mode");
    }
}

#[test]
fn i40e_latency_mode_uses_the_middle_arm_halved() {
    // 1 packet (latency mode, the ringless Tx in latency mode): w / 2, then / 512.
    for &(size, interval) in &[(600u64, 40u64), (1084, 56)] {
        let mut p = I40e::new(10.0, false);
        let w = session(&mut p, 1, size);
        assert_eq!(p.rx_target(), interval as u16 | i40e::LATENCY, "{size} B");
        assert_eq!(w, Some(Write::Itr(us(interval))), "{size} B");
    }
}

/// DIM on a host: sessions whose event counter is the vector's hard interrupts.
#[test]
fn dim_on_a_host_closes_windows_and_moves_off_its_default_profile() {
    // A steady 100 kpps (about one interrupt per 10 packets at DIM's default profile): DIM
    // measures windows of 64 interrupts; starting parked on top with zeroed stats (mlx5e),
    // its first decision leaves parking, so the profile changes and the driver writes a new
    // coalescing setting, several times in 50 ms. Were its event counter not the vector's
    // interrupts, no window would close and nothing would be written.
    let r = exact("napi")
        .with("driver.moderation", s("dim"))
        .rate_pps(1e5)
        .duration_ms(50.0)
        .run();
    assert!(r.counts.irqs > 4 * 64, "interrupts: {}", r.counts.irqs);
    assert!(
        r.counts.moderation_writes >= 2,
        "DIM wrote {} settings",
        r.counts.moderation_writes
    );
}

#[test]
fn dim_needs_64_events_per_window_not_64_sessions() {
    // The event counter is the IRQ count: sessions without new interrupts never close a window.
    let mut d = Dim::new(DimMode::Eqe);
    let mut t = 0;
    let mut sample = |packets: u64, events: u64| {
        t += 100 * crate::common::US;
        Sample::rx_only(
            SimTime(t),
            t / 4_000_000_000,
            packets,
            packets * 1500,
            events,
        )
    };
    assert_eq!(d.on_complete(&sample(0, 0)), None); // opens the window
    for k in 1..200 {
        assert_eq!(d.on_complete(&sample(k * 100, 63)), None, "session {k}");
    }
    // the 64th event closes it: parked on top with zeroed stats, a non-zero rate differs
    assert!(d.on_complete(&sample(20_000, 64)).is_some());
    assert_ne!(d.profile_ix(), 0);
}

#[test]
fn off_unthrottles_the_nic_when_it_comes_up_and_never_writes_again() {
    let mut p = irqlab_core::moderation::Off;
    assert_eq!(p.initial(), Some(Write::Itr(SimDuration::ZERO)));
    assert_eq!(session(&mut p, 300, 300 * 1500), None);
    assert_eq!(p.interval(), SimDuration::ZERO);
}

#[test]
fn static_programs_its_one_interval_and_reports_it() {
    let mut p = irqlab_core::moderation::Static { itr: us(30) };
    assert_eq!(p.initial(), Some(Write::Itr(us(30))));
    assert_eq!(p.interval(), us(30));
    assert_eq!(session(&mut p, 300, 300 * 1500), None);
    assert_eq!(p.interval(), us(30), "no sample changes it");
}

#[test]
fn the_engines_policy_reports_the_interval_of_the_policy_it_holds() {
    use irqlab_core::moderation::{AnyPolicy, Static};
    let p = AnyPolicy::Static(Static { itr: us(30) });
    assert_eq!(p.initial(), Some(Write::Itr(us(30))));
    assert_eq!(p.interval(), us(30));
    let mut p = AnyPolicy::I40e(I40e::new(10.0, false));
    assert_eq!(p.interval(), us(50));
    // 300 packets of 1500 B at 10G: bulk by size, 118 µs
    assert_eq!(session(&mut p, 300, 300 * 1500), Some(Write::Itr(us(118))));
    assert_eq!(p.interval(), us(118));
}

#[test]
fn an_idle_tx_ring_takes_part_in_i40es_itr_and_a_ringless_vector_has_none() {
    // nic.tx_ring_descriptors = 0 makes the vectors Rx-only: i40e's Tx container is then
    // ringless (no update, no say in the register). With a Tx ring (no forwarding: idle), its
    // container starts at 20K ints/s and is updated each interrupt like the Rx one; the vector
    // then interrupts less often than the Rx-only one at 10 kpps of 1500 B frames, and its
    // register is written far more often (200 interrupts and 1 write against 191 and 38).
    let irqs = |tx: i128| {
        let r = exact("napi")
            .with("driver.moderation", s("i40e"))
            .rate_pps(1e4)
            .with("nic.tx_ring_descriptors", i(tx))
            .duration_ms(20.0)
            .run();
        (r.counts.irqs, r.counts.moderation_writes)
    };
    let (rx_only, txrx) = (irqs(0), irqs(512));
    assert!(txrx.0 < rx_only.0, "Rx-only {rx_only:?}, TxRx {txrx:?}");
    assert!(
        txrx.1 > 10 * rx_only.1,
        "Rx-only {rx_only:?}, TxRx {txrx:?}"
    );
}

#[test]
fn dims_profiles_program_the_nics_coalescing_timer() {
    // One packet every 10 us, each handled in 9.07 us (IRQ 3.73 us, protocol 5.34 us): with
    // moderation off every packet interrupts. DIM's profiles hold the interrupt back by 1 us
    // at the least (RX_EQE_PROFILES), so the next packet arrives during the poll and shares it.
    let irqs = |moderation: &str| {
        exact("napi")
            .with("driver.moderation", s(moderation))
            .rate_pps(1e5)
            .duration_ms(20.0)
            .run()
            .counts
            .irqs
    };
    let (off, dim) = (irqs("off"), irqs("dim"));
    assert!(off >= 1990, "one interrupt per packet: {off}");
    assert!(dim < off * 3 / 4, "DIM {dim} interrupts, off {off}");
}
