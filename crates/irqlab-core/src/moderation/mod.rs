//! Interrupt moderation policies: what the driver programs into the NIC's interrupt logic
//! after each completed NAPI session (reference §0.5, 1, 2, 3, 5).
//!
//! A policy is a small state machine. The engine calls [`Policy::on_complete`] when a poll
//! completes below its weight and `napi_complete_done` lets the driver re-enable the vector,
//! with the vector's cumulative counters of its Rx rings and of its Tx ring; the policy keeps
//! whatever baseline it needs (some reset their counters only when they act, as the drivers
//! do) and may return a register [`Write`]. A vector is a TxRx vector, as the drivers set them
//! up, unless `nic.tx_ring_descriptors = 0` makes it Rx-only: then the Tx container has no
//! ring and each policy leaves it at its initial value, as the drivers do. The engine applies it with the hardware semantics of §0.5: an ITR is a minimum
//! interval between interrupts, reloaded when an interrupt is issued; a new value takes effect
//! from the next reload (ixgbe writes EITR with `CNT_WDIS`), and coalescing settings (DIM)
//! apply to the next interrupt.
//!
//! One file per policy: `off` and `static` here, [`ixgbe_legacy`], [`linear`], [`ixgbe`],
//! [`i40e`], [`dim`], and [`external`] for policies written outside the core (Python).

pub mod dim;
pub mod external;
pub mod i40e;
pub mod ixgbe;
pub mod ixgbe_legacy;
pub mod linear;

use crate::time::{SimDuration, SimTime};

/// The vector's counters when a NAPI session completes. All counters are cumulative since
/// time zero; a policy that wants deltas keeps its own baseline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Time of the completion.
    pub now: SimTime,
    /// `jiffies` at `now` (the tick counter starts at zero with the run).
    pub jiffies: u64,
    /// Rx packets the driver has cleaned.
    pub packets: u64,
    /// Their bytes as the driver counts them (`skb->len`: the frame without its 4-byte FCS).
    pub bytes: u64,
    /// Hard interrupts of the vector (DIM's event counter).
    pub events: u64,
    /// Tx packets and bytes (`skb->len`) the driver has cleaned on the vector's Tx ring.
    pub tx_packets: u64,
    pub tx_bytes: u64,
}

impl Sample {
    /// The Rx container's cumulative counters.
    #[inline]
    pub fn rx(&self) -> Counters {
        Counters {
            packets: self.packets,
            bytes: self.bytes,
        }
    }

    /// The Tx container's cumulative counters.
    #[inline]
    pub fn tx(&self) -> Counters {
        Counters {
            packets: self.tx_packets,
            bytes: self.tx_bytes,
        }
    }
}

/// One ring container's cumulative packets and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub packets: u64,
    pub bytes: u64,
}

/// What a policy writes to the NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// The ITR/EITR: minimum interval between two interrupts (zero = no throttling).
    Itr(SimDuration),
    /// Coalescing: an interrupt `usecs` after the first unsignalled packet (or, with
    /// `restart`, after the last one: DIM's CQE mode), or once `frames` packets wait,
    /// whichever comes first (zero = that condition off).
    Coalesce {
        usecs: SimDuration,
        frames: u64,
        restart: bool,
    },
}

/// A moderation policy.
pub trait Policy {
    /// The setting the driver programs when the interface comes up (`None`: keep the NIC's
    /// configuration from the scenario).
    fn initial(&self) -> Option<Write>;
    /// A NAPI session completed and the vector is about to be re-enabled.
    fn on_complete(&mut self, s: &Sample) -> Option<Write>;
    /// The interval the policy believes is programmed, for tests and traces (zero if none).
    fn interval(&self) -> SimDuration;
}

/// `off`: no throttling, ever.
#[derive(Debug, Default)]
pub struct Off;

impl Policy for Off {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(SimDuration::ZERO))
    }
    fn on_complete(&mut self, _: &Sample) -> Option<Write> {
        None
    }
    fn interval(&self) -> SimDuration {
        SimDuration::ZERO
    }
}

/// `static`: one fixed interval (`ethtool -C rx-usecs N`, or `InterruptThrottleRate=N`).
#[derive(Debug)]
pub struct Static {
    pub itr: SimDuration,
}

impl Policy for Static {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(self.itr))
    }
    fn on_complete(&mut self, _: &Sample) -> Option<Write> {
        None
    }
    fn interval(&self) -> SimDuration {
        self.itr
    }
}

/// Every policy, for static dispatch: the engine holds one of these.
#[derive(Debug)]
pub enum AnyPolicy {
    Off(Off),
    Static(Static),
    IxgbeLegacy(ixgbe_legacy::IxgbeLegacy),
    Linear(linear::Linear),
    Ixgbe(ixgbe::Ixgbe),
    I40e(i40e::I40e),
    Dim(dim::Dim),
    External(external::ExternalPolicy),
}

macro_rules! each {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            AnyPolicy::Off($p) => $e,
            AnyPolicy::Static($p) => $e,
            AnyPolicy::IxgbeLegacy($p) => $e,
            AnyPolicy::Linear($p) => $e,
            AnyPolicy::Ixgbe($p) => $e,
            AnyPolicy::I40e($p) => $e,
            AnyPolicy::Dim($p) => $e,
            AnyPolicy::External($p) => $e,
        }
    };
}

impl Policy for AnyPolicy {
    fn initial(&self) -> Option<Write> {
        each!(self, p => p.initial())
    }
    fn on_complete(&mut self, s: &Sample) -> Option<Write> {
        each!(self, p => p.on_complete(s))
    }
    fn interval(&self) -> SimDuration {
        each!(self, p => p.interval())
    }
}

/// A ring container's `total_packets` / `total_bytes`: what the vector cleaned since the
/// container last reset them (the policies reset them when they act, as the drivers do).
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    packets_at_reset: u64,
    bytes_at_reset: u64,
}

impl Totals {
    pub fn packets(&self, c: Counters) -> u64 {
        c.packets.saturating_sub(self.packets_at_reset)
    }
    pub fn bytes(&self, c: Counters) -> u64 {
        c.bytes.saturating_sub(self.bytes_at_reset)
    }
    pub fn reset(&mut self, c: Counters) {
        self.packets_at_reset = c.packets;
        self.bytes_at_reset = c.bytes;
    }
}

/// Whether a link speed (Gbit/s) is the one a driver's `switch` case names.
pub(crate) fn link_is(gbps: f64, v: f64) -> bool {
    (gbps - v).abs() < 1e-9
}

/// A duration of `v` µs, for the policies' test tables.
#[cfg(test)]
pub(crate) fn us(v: f64) -> SimDuration {
    SimDuration::from_us(v)
}

/// Interval of an interrupt rate: `1e6 / rate` µs (integer ps).
pub fn interval_of_rate(ints_per_s: f64) -> SimDuration {
    SimDuration::from_us(1e6 / ints_per_s)
}
