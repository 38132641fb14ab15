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
//! One file per policy: [`off`], [`static_itr`] (`static`), [`ixgbe_legacy`], [`linear`],
//! [`ixgbe`], [`i40e`], [`dim`], and [`external`] for policies written outside the core
//! (Python). Each implements [`Variant`] (its name, keys and settings) and has one line in the
//! registry (`policies!`), which makes the closed enum the engine dispatches on
//! ([`AnyPolicy`]) and the names the key table allows. The driver's settings around the
//! policy, and those without effect, are in [`config`].

pub mod config;

pub use off::Off;
pub use static_itr::Static;

use crate::error::Error;
use crate::schema::Params;
use crate::scheme::Scheme;
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
    /// A session of a vector without Tx counters: at `now` (`jiffies`), after `packets` Rx
    /// packets of `bytes` in all and `events` hard interrupts since time zero.
    pub fn rx_only(now: SimTime, jiffies: u64, packets: u64, bytes: u64, events: u64) -> Sample {
        Sample {
            now,
            jiffies,
            packets,
            bytes,
            events,
            ..Sample::default()
        }
    }

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

/// What a policy does with the ITR (`nic.itr_us`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Itr {
    /// It runs with the NIC's ITR, `nic.itr_us`, and never programs another.
    Keeps,
    /// It turns throttling off.
    Off,
    /// It programs the ITR itself.
    Programs,
}

/// A policy as the registry knows it: its name, its keys, its settings read from a scenario,
/// the policy of one vector, and how it sits with the rest of the driver. Each policy's file
/// implements it; one line in `policies!` registers it.
pub trait Variant: Policy + Sized {
    /// Its name: `driver.moderation = KIND`.
    const KIND: &'static str;
    /// The keys it reads that a policy without it has no use for (a key several policies read
    /// is listed by each). A policy without settings of its own lists none.
    const KEYS: &'static [&'static str] = &[];
    /// It is an algorithm that adapts to the load after each completed NAPI session, so a
    /// scheme that never completes one (Salah's polling loop) never runs it: a warning. (A
    /// policy from outside the core is not assumed to.)
    const ADAPTIVE: bool;
    /// What it does with the ITR.
    const ITR: Itr;
    /// It programs the coalescing conditions (`rx-usecs`, `rx-frames`) itself.
    const COALESCING: bool = false;
    /// Its settings.
    type Config: Clone + std::fmt::Debug + PartialEq;
    /// Its settings in `p` (validated by the key table).
    fn from_params(p: &Params) -> Result<Self::Config, Error>;
    /// The policy of one vector; `has_tx`: the vector has a Tx ring (a TxRx vector).
    fn new_vector(cfg: &Self::Config, has_tx: bool) -> Self;
    /// An error if it would turn `scheme` into another scheme.
    fn check_scheme(_scheme: Scheme) -> Result<(), Error> {
        Ok(())
    }
}

/// The registry: one line per policy, `Name(file::Type)`, in the order `driver.moderation`
/// lists them. It declares each policy's file as a module (`pub mod file;`) and makes
/// [`AnyPolicy`] (a closed enum, the engine's static dispatch), [`Moderation`] (a policy's
/// settings, chosen by name) and [`VARIANTS`]. (`cargo fmt` does not see a module declared in
/// a macro: `make fmt` and `make lint` format and check these files by name.)
macro_rules! policies {
    ($($name:ident($file:ident :: $policy:ident)),+ $(,)?) => {
        $(pub mod $file;)+
        policies!(@registry $($name($file::$policy)),+);
    };
    (@registry $($name:ident($ty:ty)),+) => {
        /// Every policy, for static dispatch: the engine holds one of these.
        #[derive(Debug)]
        pub enum AnyPolicy {
            $($name($ty)),+
        }

        impl Policy for AnyPolicy {
            fn initial(&self) -> Option<Write> {
                match self {
                    $(AnyPolicy::$name(p) => p.initial()),+
                }
            }
            fn on_complete(&mut self, s: &Sample) -> Option<Write> {
                match self {
                    $(AnyPolicy::$name(p) => p.on_complete(s)),+
                }
            }
            fn interval(&self) -> SimDuration {
                match self {
                    $(AnyPolicy::$name(p) => p.interval()),+
                }
            }
        }

        /// The driver's interrupt moderation policy and its settings (`driver.moderation`).
        #[derive(Clone, Debug, PartialEq)]
        pub enum Moderation {
            $($name(<$ty as Variant>::Config)),+
        }

        /// Each policy's name and keys, in registry order.
        pub const VARIANTS: &[Entry] = &[$(Entry {
            kind: <$ty as Variant>::KIND,
            keys: <$ty as Variant>::KEYS,
        }),+];

        /// The names of the policies: the allowed values of `driver.moderation`.
        pub const NAMES: &[&str] = &[$(<$ty as Variant>::KIND),+];

        impl Moderation {
            /// The policy named `name` (`driver.moderation`), with its settings from `p`; an
            /// unknown name is an error listing the known ones.
            pub fn named(name: &str, p: &Params) -> Result<Moderation, Error> {
                $(
                    if name == <$ty as Variant>::KIND {
                        return Ok(Moderation::$name(<$ty as Variant>::from_params(p)?));
                    }
                )+
                Err(crate::schema::unknown_name(config::KEY, name, NAMES))
            }

            /// The policy of one vector; `has_tx`: the vector has a Tx ring (a TxRx vector).
            pub fn policy(&self, has_tx: bool) -> AnyPolicy {
                match self {
                    $(Moderation::$name(c) => AnyPolicy::$name(<$ty as Variant>::new_vector(c, has_tx))),+
                }
            }

            /// Its name.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Moderation::$name(_) => <$ty as Variant>::KIND),+
                }
            }

            /// The keys only it (and policies sharing them) reads.
            pub fn keys(&self) -> &'static [&'static str] {
                match self {
                    $(Moderation::$name(_) => <$ty as Variant>::KEYS),+
                }
            }

            /// See [`Variant::ADAPTIVE`].
            pub fn adaptive(&self) -> bool {
                match self {
                    $(Moderation::$name(_) => <$ty as Variant>::ADAPTIVE),+
                }
            }

            /// What it does with the ITR.
            pub fn itr(&self) -> Itr {
                match self {
                    $(Moderation::$name(_) => <$ty as Variant>::ITR),+
                }
            }

            /// It programs `rx-usecs` and `rx-frames` itself.
            pub fn coalescing(&self) -> bool {
                match self {
                    $(Moderation::$name(_) => <$ty as Variant>::COALESCING),+
                }
            }

            /// An error if it would turn `scheme` into another scheme.
            pub fn check_scheme(&self, scheme: Scheme) -> Result<(), Error> {
                match self {
                    $(Moderation::$name(_) => <$ty as Variant>::check_scheme(scheme)),+
                }
            }
        }
    };
}

/// A policy's name and keys, as the registry lists them.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub kind: &'static str,
    pub keys: &'static [&'static str],
}

// The registry: adding a policy is its file and one line here.
policies! {
    Off(off::Off),
    Static(static_itr::Static),
    IxgbeLegacy(ixgbe_legacy::IxgbeLegacy),
    Linear(linear::Linear),
    Ixgbe(ixgbe::Ixgbe),
    I40e(i40e::I40e),
    Dim(dim::Dim),
    External(external::ExternalPolicy),
}

impl Moderation {
    /// Whether it writes to the NIC after sessions (the ITR or the coalescing conditions), so
    /// that nothing else may program the ITR (a receive-load controller).
    pub fn writes(&self) -> bool {
        self.itr() == Itr::Programs || self.coalescing()
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

/// A vector's two ring containers (`q_vector->rx` and `q_vector->tx`), each with what a
/// driver's update keeps for it (its value, the baseline of its counters, …).
#[derive(Clone, Copy, Debug)]
pub struct RingContainers<C> {
    pub rx: C,
    pub tx: C,
    /// The vector has a Tx ring (a TxRx vector); else its Tx container keeps its initial value.
    pub has_tx: bool,
}

impl<C: Copy> RingContainers<C> {
    /// Both containers at `initial`.
    pub fn new(initial: C, has_tx: bool) -> RingContainers<C> {
        RingContainers {
            rx: initial,
            tx: initial,
            has_tx,
        }
    }

    /// The containers after a session as the ixgbe-family `set_itr` updates them: the Tx
    /// container first (on a TxRx vector), then the Rx container, each by `update` with its own
    /// counters.
    #[inline]
    pub fn updated(mut self, s: &Sample, mut update: impl FnMut(&mut C, Counters)) -> Self {
        if self.has_tx {
            update(&mut self.tx, s.tx());
        }
        update(&mut self.rx, s.rx());
        self
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
