//! The sending thread (`[sender]`, `sender.*`): a thread of the host that sends the traffic
//! through a veth pair (`nic.device = "veth"`), as `sockperf throughput` or a paced `iperf3`
//! client does. It sends each packet at its arrival time (paced); each send takes
//! `sender.cost_ns` of its CPU time (the syscall, the stack's transmit, `veth_xmit`), at the
//! thread level of `sender.core`, charged to `cpu.sender`. A send due while the core is busy
//! waits until the sender runs again, which then sends its late packets back to back (a
//! spin-paced sender catching up). Between sends it waits for its next packet without holding
//! the core (its pacing wait is not CPU time here).
//!
//! The transitions live in `host::sender`; the device it sends through in `host::veth`.

use crate::dist::{Cost, Dist};
use crate::error::Error;
use crate::nic::config::Device;
use crate::schema::{Params, keys};
use crate::warnings::{Warnings, no_effect};

keys! {
    /// The sender's keys.
    pub KEYS = "sender." [
        CORE,
        COST_NS,
        COST_DIST,
    ];
}

/// The sender of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct SenderConfig {
    /// The core its thread runs on (with a veth device and without threaded NAPI, the core
    /// whose `NET_RX_SOFTIRQ` polls the veth's NAPI, the sender's or not).
    pub core: usize,
    /// Its CPU time per packet sent (zero: no sending thread; packets arrive as they come).
    pub cost: Cost,
}

impl SenderConfig {
    /// Whether a sending thread is modelled.
    pub fn runs(&self) -> bool {
        !self.cost.is_zero()
    }
}

impl Default for SenderConfig {
    fn default() -> SenderConfig {
        SenderConfig {
            core: 0,
            cost: Cost::of_ns(0.0),
        }
    }
}

/// The sender of `p`, on a host of `cores` cores receiving on `device`.
pub fn configure(p: &Params, cores: usize, device: Device) -> Result<SenderConfig, Error> {
    let core = p.u64(CORE) as usize;
    if core >= cores {
        return Err(p.inconsistent(
            CORE,
            format!("host.cores = {cores} has cores 0 … {}", cores - 1),
        ));
    }
    let cost = Cost {
        dist: Dist::read(p, COST_DIST)?,
        ..Cost::of_ns(p.f64(COST_NS))
    };
    if !cost.is_zero() && device != Device::Veth {
        return Err(p.inconsistent(
            COST_NS,
            "the host's sender sends through a veth pair; set nic.device = \"veth\" (a NIC's traffic comes from the wire)",
        ));
    }
    Ok(SenderConfig { core, cost })
}

/// The sender's keys where nothing uses them: its core without a veth device, its cost's
/// distribution without a cost.
pub fn warnings(w: &mut Warnings, device: Device) {
    w.rule(&[CORE], device != Device::Veth, || {
        no_effect("only a veth device (nic.device = \"veth\") is fed by the host's sender")
    });
    let no_cost = w.p.f64(COST_NS) == 0.0;
    w.rule(&[COST_DIST], no_cost, || {
        no_effect("sender.cost_ns = 0: no sending thread is modelled")
    });
}

#[cfg(test)]
mod tests {
    use crate::scenario::test_support::*;
    use crate::schema::Value;
    use crate::time::SimDuration;

    fn veth() -> (&'static str, Value) {
        ("nic.device", s("veth"))
    }

    #[test]
    fn a_sender_is_its_core_and_its_cost_with_its_distribution() {
        let sc = build(&[
            veth(),
            ("host.cores", Value::Int(2)),
            ("sender.core", Value::Int(1)),
            ("sender.cost_ns", Value::Float(2500.0)),
            ("sender.cost_dist", s("exponential")),
        ])
        .unwrap();
        assert_eq!(sc.sender.core, 1);
        assert_eq!(sc.sender.cost.mean, SimDuration::from_ns(2500.0));
        assert_eq!(sc.sender.cost.dist, crate::dist::Dist::Exponential);
        assert!(sc.sender.runs());
        // the default: no sending thread, on core 0
        let sc = build(&[veth()]).unwrap();
        assert!(!sc.sender.runs());
        assert_eq!(sc.sender.core, 0);
    }

    #[test]
    fn a_sender_outside_the_host_or_without_a_veth_is_an_error() {
        let e = rejected(&[veth(), ("sender.core", Value::Int(1))]);
        assert_eq!(e.key(), "sender.core");
        assert!(
            e.to_string().contains("host.cores = 1 has cores 0 … 0"),
            "{e}"
        );
        let e = rejected(&[("sender.cost_ns", Value::Float(1000.0))]);
        assert_eq!(e.key(), "sender.cost_ns");
        assert!(e.to_string().contains("nic.device = \"veth\""), "{e}");
    }

    #[test]
    fn the_senders_keys_without_effect_are_warnings() {
        assert_eq!(
            warned(&[
                ("host.cores", Value::Int(2)),
                ("sender.core", Value::Int(1))
            ]),
            ["sender.core"]
        );
        assert_eq!(
            warned(&[veth(), ("sender.cost_dist", s("exponential"))]),
            ["sender.cost_dist"]
        );
        assert!(
            warned(&[
                veth(),
                ("sender.cost_ns", Value::Float(1000.0)),
                ("sender.cost_dist", s("exponential")),
            ])
            .is_empty()
        );
    }
}
