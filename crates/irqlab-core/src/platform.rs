//! The platform: every cost of the host in one place (`platform.*`), as the key table's
//! presets fit them to each source's testbed.
//!
//! A cost is CPU time charged to a core and a category (an IRQ's entry, exit and ISR, protocol
//! processing fixed and per byte, a poll, a softirq pass, masking and unmasking a vector, a
//! context switch, a polling timer's interrupt, transmitting and cleaning a Tx descriptor, a
//! thread's wake-up, visiting an LL ring, the indirect cost of an interrupt paid by the work
//! after it) or a delay that passes while the core does other work (an interrupt's delivery, a
//! descriptor's write-back); waking an idle core is paid by the first job after it. Each of the
//! costs beyond a CPU time per event is defined in docs/costs.md. The platform describes the machine, not a choice of the receive
//! path, so none of its keys is ever reported as having no effect (`warnings`).

use crate::dist::Cost;
use crate::error::Error;
use crate::schema::{Params, keys};
use crate::time::SimDuration;

keys! {
    /// The platform's keys.
    pub KEYS = "platform." [
        /// The key that chooses a preset of costs (the presets are in the key table).
        PRESET,
        CPU_GHZ,
        /// Each cost's two keys: its mean in ns and its distribution.
        [IRQ],
        [PROTO],
        PROTO_NS_PER_BYTE,
        [POLL],
        [SOFTIRQ],
        [MASK],
        [UNMASK],
        [POLL_TIMER],
        WAKEUP_NS,
        WAKEUP_AFTER_US,
        [CTX_SWITCH],
        [TX],
        [TX_CLEAN],
        [TASK_WAKEUP],
        IPI_WAKEUP_NS,
        RING_SWITCH_NS,
        IRQ_DELIVERY_NS,
        WRITEBACK_NS,
        IRQ_INDIRECT_NS,
        COLD_PACKETS,
        COLD_PACKET_NS,
        NAPI_SWITCH_NS,
        RING_CONTENTION_NS,
        SKB_FREE_NS,
        /// An AF_XDP app's packet in the poll (read by `host::xsk`).
        XDP_NS,
        /// One iteration of a busy loop that finds nothing (read by `busypoll`).
        BUSY_ITER_NS,
    ];
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlatformConfig {
    pub cpu_ghz: f64,
    pub irq: Cost,
    pub proto: Cost,
    pub proto_ps_per_byte: f64,
    pub poll: Cost,
    pub softirq: Cost,
    pub mask: Cost,
    pub unmask: Cost,
    pub ctx_switch: Cost,
    pub poll_timer: Cost,
    /// Forwarding: transmit, and cleaning a completed Tx descriptor.
    pub tx: Cost,
    pub tx_clean: Cost,
    /// Waking a sleeping thread, charged to the waker.
    pub task_wakeup: Cost,
    /// Waking a thread whose core has been idle longer than `wakeup_after`: the waker's
    /// reschedule IPI to it, charged to the waker besides `task_wakeup` (zero: never).
    pub ipi_wakeup: SimDuration,
    /// Waking the core after an idle period longer than `wakeup_after` (zero cost: never).
    pub wakeup: Cost,
    pub wakeup_after: SimDuration,
    /// LL driver: one visit of an Rx ring in a poll.
    pub ring_switch: Cost,
    /// Delays that are not CPU time: from the NIC's decision to interrupt to the handler
    /// starting (`host::nic::issue_irq`), and from a packet's DMA to its descriptor's
    /// write-back (`host::nic::arrival`; a packet is visible to the driver from then on).
    pub irq_delivery: SimDuration,
    pub writeback: SimDuration,
    /// The indirect cost of a hard interrupt: CPU time the next job on the core pays
    /// (`crate::cpu::Cpu::with_irq_indirect`).
    pub irq_indirect: SimDuration,
    /// Batching economies: the extra time of a poll's first packets, falling linearly from
    /// `cold_packet` to 0 over `cold_packets` packets ([`PlatformConfig::cold_ps`]; 0: none).
    pub cold_packets: u64,
    pub cold_packet: SimDuration,
    /// A NAPI poll call of another vector than the last one polled on its core costs this
    /// much more (`host::kernel::poll_call`).
    pub napi_switch: SimDuration,
    /// A busy poller's protocol processing overlapping its vector's interrupt handler on
    /// another core costs it this much more, once per overlap (`host::busypoll`).
    pub ring_contention: SimDuration,
    /// Freeing one skb (`napi_consume_skb`): an app that reads it frees it, or defers its free
    /// to the core that allocated it (`host::skb_defer`). Zero: frees are not modelled.
    pub skb_free: SimDuration,
    /// An AF_XDP app's packet in the NAPI poll: its descriptor, the XDP program and the
    /// redirect into its XSK, instead of protocol processing (`host::xsk`; deterministic).
    pub xdp: SimDuration,
}

/// The costs of `p`.
pub fn configure(p: &Params) -> Result<PlatformConfig, Error> {
    let cost = |[ns, dist]: [&str; 2]| Cost::read(p, ns, dist);
    Ok(PlatformConfig {
        cpu_ghz: p.f64(CPU_GHZ),
        irq: cost(IRQ)?,
        proto: cost(PROTO)?,
        proto_ps_per_byte: p.f64(PROTO_NS_PER_BYTE) * 1000.0,
        poll: cost(POLL)?,
        softirq: cost(SOFTIRQ)?,
        mask: cost(MASK)?,
        unmask: cost(UNMASK)?,
        ctx_switch: cost(CTX_SWITCH)?,
        poll_timer: cost(POLL_TIMER)?,
        tx: cost(TX)?,
        tx_clean: cost(TX_CLEAN)?,
        task_wakeup: cost(TASK_WAKEUP)?,
        ipi_wakeup: SimDuration::from_ns(p.f64(IPI_WAKEUP_NS)),
        // deterministic, as every cost `Cost::of_ns` builds
        wakeup: Cost::of_ns(p.f64(WAKEUP_NS)),
        wakeup_after: SimDuration::from_us(p.f64(WAKEUP_AFTER_US)),
        ring_switch: Cost::of_ns(p.f64(RING_SWITCH_NS)),
        irq_delivery: SimDuration::from_ns(p.f64(IRQ_DELIVERY_NS)),
        writeback: SimDuration::from_ns(p.f64(WRITEBACK_NS)),
        irq_indirect: SimDuration::from_ns(p.f64(IRQ_INDIRECT_NS)),
        cold_packets: p.u64(COLD_PACKETS),
        cold_packet: SimDuration::from_ns(p.f64(COLD_PACKET_NS)),
        napi_switch: SimDuration::from_ns(p.f64(NAPI_SWITCH_NS)),
        ring_contention: SimDuration::from_ns(p.f64(RING_CONTENTION_NS)),
        skb_free: SimDuration::from_ns(p.f64(SKB_FREE_NS)),
        xdp: SimDuration::from_ns(p.f64(XDP_NS)),
    })
}

impl PlatformConfig {
    /// Whether a poll's first packets cost more (`platform.cold_packets` and
    /// `cold_packet_ns` both set).
    #[inline(always)]
    pub fn cold(&self) -> bool {
        self.cold_packets != 0 && !self.cold_packet.is_zero()
    }

    /// The extra time of a poll's packet after `taken` others in the same poll:
    /// `cold_packet x max(0, 1 - taken / cold_packets)`, in ps (rounded down).
    pub fn cold_ps(&self, taken: u64) -> u64 {
        let k = self.cold_packets;
        if taken >= k {
            return 0;
        }
        (u128::from(self.cold_packet.ps()) * u128::from(k - taken) / u128::from(k)) as u64
    }
}

/// Salah Eq. 13: the cliff point of normal interruption, `r/2 (sqrt(1 + 4 mu/r) - 1)`, with
/// `1/r` the mean IRQ cost and `1/mu` the mean protocol cost of a frame of the mean size.
pub fn cliff_point_pps(platform: &PlatformConfig, mean_size: f64) -> f64 {
    let proto_s = (platform.proto.mean_ps + platform.proto_ps_per_byte * mean_size) * 1e-12;
    if proto_s == 0.0 {
        return f64::INFINITY;
    }
    let mu = 1.0 / proto_s;
    let irq_s = platform.irq.mean_ps * 1e-12;
    if irq_s == 0.0 {
        return mu;
    }
    let r = 1.0 / irq_s;
    // r/2 (sqrt(1 + x) - 1) with x = 4 mu/r, written to keep precision when x is small
    let x = 4.0 * mu / r;
    r / 2.0 * x / ((1.0 + x).sqrt() + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::test_support::*;
    use crate::schema::Value;
    use crate::time::SimDuration;

    #[test]
    fn the_cliff_point_is_salah_eq_13() {
        let platform = |irq: f64, proto: f64, per_byte: f64| {
            build(&[
                ("platform.irq_ns", Value::Float(irq)),
                ("platform.proto_ns", Value::Float(proto)),
                ("platform.proto_ns_per_byte", Value::Float(per_byte)),
            ])
            .unwrap()
            .platform
        };
        // 1/r = 1 us, 1/mu = 2 us + 1000 bytes x 1 ns = 3 us
        let (r, mu): (f64, f64) = (1e6, 1.0 / 3e-6);
        let want = r / 2.0 * ((1.0 + 4.0 * mu / r).sqrt() - 1.0);
        let got = cliff_point_pps(&platform(1000.0, 2000.0, 1.0), 1000.0);
        assert!((got - want).abs() < 1e-6 * want, "{got} {want}");
        assert!((got - 263_762.6).abs() < 0.1, "{got}");
        // free interrupts: the protocol's rate
        let got = cliff_point_pps(&platform(0.0, 2000.0, 1.0), 1000.0);
        assert!((got - mu).abs() < 1e-6 * mu, "{got}");
        // free protocol processing: no cliff
        assert_eq!(
            cliff_point_pps(&platform(1000.0, 0.0, 0.0), 1000.0),
            f64::INFINITY
        );
    }

    #[test]
    fn a_cost_of_zero_ns_is_free_and_a_positive_one_is_not() {
        let sc = build(&[
            ("platform.irq_ns", Value::Int(1000)),
            ("platform.unmask_ns", Value::Int(0)),
            ("platform.wakeup_ns", Value::Int(0)),
        ])
        .unwrap();
        // a zero cost takes no time and draws no random number (a wake-up of 0 ns: never)
        assert!(sc.platform.unmask.is_zero());
        assert!(sc.platform.wakeup.is_zero());
        assert!(!sc.platform.irq.is_zero());
        assert_eq!(sc.platform.irq.mean, SimDuration(1_000_000));
    }
}
