//! Ingress QoS on the receive path (Beifuß et al. 2016): the NIC classifies each packet into a
//! real-time (RT) or best-effort (BE) class, the class picks an Rx ring (and, for `rr`, a queue
//! vector), and the driver's poll function serves the vector's rings by a *ring discipline*.
//!
//! Strategies (`qos.strategy`):
//! - `off`: the classes of `traffic.classes`, a ring each, the stock equal split in class order
//!   (the host's behaviour without QoS).
//! - `sq`: no classification: one ring per vector takes both classes (the stock driver).
//! - `rr`: two queue vectors on one core, the BE one (vector 0) and the RT one (vector 1), each
//!   with its own ring, IRQ line and NAPI of the full weight; `net_rx_action` serves them round
//!   robin.
//! - `vmdq`: one vector, a BE and an RT ring, the stock driver's equal split of the weight
//!   (`max(weight / rings, 1)` per ring, one pass).
//! - `ll-rr`, `ll-wfq`: one vector, a BE and an RT ring with ring budgets (4/4 and 4/60), served
//!   by the LL driver's procedure ([`Discipline::next`]).
//!
//! One file per strategy ([`off`], [`sq`], [`rr`], [`vmdq`], [`ll_rr`], [`ll_wfq`]): its name
//! (`KIND`), the keys it reads and how it lays out rings and vectors; one line each in the
//! registry ([`Strategy`]). [`config`] reads the `qos.*` keys; [`discipline`] is what the host
//! runs in a poll.
//!
//! The classes are `be` (index 0) and `rt` (index 1), in the order of the driver's `PRB`
//! parameter (increasing priority); each packet is RT with probability `qos.rt_share`, drawn
//! independently, so the two classes are independent Poisson streams when the arrivals are.

pub mod config;
pub mod discipline;

pub use config::{QosConfig, configure, prepare};
pub use discipline::{Discipline, PollState, Step};

use crate::error::Error;
use crate::schema::registry;

/// Class (and ring) indices of the two QoS classes, in PRB order.
pub const BE: usize = 0;
pub const RT: usize = 1;
/// Their names, as the classes a strategy makes are named.
pub const BE_NAME: &str = "be";
pub const RT_NAME: &str = "rt";

/// The registry: one line per strategy, `Name(file)`, in the order `qos.strategy` lists them.
/// Each file declares the strategy's name (`KIND`), the `qos.*` keys it reads (`KEYS`) and
/// `configure` (its rings, vectors and discipline). The registry declares the files as
/// modules and makes [`Strategy`] with its `keys` and its layout. (`cargo fmt` does not see a
/// module declared in a macro: `make fmt` and `make lint` format and check these files by
/// name.)
macro_rules! strategies {
    ($($name:ident($file:ident)),+ $(,)?) => {
        $(pub mod $file;)+

        registry! {
            key: config::STRATEGY;
            /// How the driver serves the vector's Rx rings (`qos.strategy`): one line per
            /// strategy in the registry, its name from its file.
            pub enum Strategy {
                $($name = $file::KIND),+
            }
        }

        impl Strategy {
            /// The `qos.*` keys it reads (besides the choice).
            pub fn keys(self) -> &'static [&'static str] {
                match self {
                    $(Strategy::$name => $file::KEYS),+
                }
            }

            /// Its rings, classes and vectors, and its ring discipline.
            fn layout(self, c: &config::Context) -> Result<QosConfig, Error> {
                match self {
                    $(Strategy::$name => $file::configure(c)),+
                }
            }
        }
    };
}

// The registry: adding a strategy is its file and one line here.
strategies! {
    Off(off),
    Sq(sq),
    Rr(rr),
    Vmdq(vmdq),
    LlRr(ll_rr),
    LlWfq(ll_wfq),
}

/// The strategies, as `qos.strategy` names them.
pub const STRATEGIES: &[&str] = Strategy::NAMES;
