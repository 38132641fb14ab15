//! The driver's settings around its moderation policy (`driver.*`): which policy runs and
//! its settings (through the registry, [`Moderation::named`]), the link speed the policies
//! read, and what the ISR does with the first packet of a busy period; and the settings among
//! them that have no effect.

use super::{Itr, Moderation, Policy, VARIANTS, Variant};
use super::{static_itr, static_itr::ITR_RATE};
use crate::error::Error;
use crate::nic::config as nic;
use crate::schema::{Params, Value, keys, registry};
use crate::scheme::Scheme;
use crate::warnings::{Warnings, no_effect};

keys! {
    /// The policy's keys, in the order the warnings list them (then each registered policy's
    /// keys not among them, in registry order: [`keys`]).
    KEYS = "driver." [
        /// The key that chooses the policy.
        KEY = "driver.moderation",
        static_itr::ITR_RATE,
        /// The link speed the ixgbe and i40e policies read (0: the NIC's, `nic.link_gbps`).
        LINK_GBPS,
    ];
}
/// What the ISR does with the first packet of a busy period ([`FirstPacket`]).
pub const FIRST_PACKET: &str = "driver.first_packet";

/// The moderation's keys: `KEYS` (in the order the warnings list them), then any key of a registered policy not among them.
pub fn keys() -> Vec<&'static str> {
    let mut out = KEYS.to_vec();
    for k in VARIANTS.iter().flat_map(|v| v.keys) {
        if !out.contains(k) {
            out.push(k);
        }
    }
    out
}

/// The settings of a policy that reads the link speed and nothing else (`ixgbe`, `i40e`).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpeed {
    /// The link speed the driver reads (`driver.link_gbps`, resolved to the NIC's).
    pub link_gbps: f64,
}

/// An adaptive ITR policy whose one setting is the link speed it reads (`ixgbe`, `i40e`): its
/// name and how a vector's policy is made for a link speed are all its [`Variant`] needs.
pub trait LinkSpeedPolicy: Policy + Sized {
    /// Its name: `driver.moderation = KIND`.
    const KIND: &'static str;
    /// The policy of one vector on a link of `link_gbps`; `has_tx`: a TxRx vector.
    fn new(link_gbps: f64, has_tx: bool) -> Self;
}

impl<P: LinkSpeedPolicy> Variant for P {
    const KIND: &'static str = <P as LinkSpeedPolicy>::KIND;
    const KEYS: &'static [&'static str] = &[LINK_GBPS];
    const ADAPTIVE: bool = true;
    const ITR: Itr = Itr::Programs;
    type Config = LinkSpeed;

    fn from_params(p: &Params) -> Result<LinkSpeed, Error> {
        Ok(LinkSpeed {
            link_gbps: p.f64(LINK_GBPS),
        })
    }

    fn new_vector(c: &LinkSpeed, has_tx: bool) -> P {
        P::new(c.link_gbps, has_tx)
    }
}

registry! {
    key: FIRST_PACKET;
    /// Who processes the first packet of a busy period under disable-enable and hybrid.
    pub enum FirstPacket {
        /// The softirq, as every other packet.
        Softirq = "softirq",
        /// The ISR itself (Salah's Markov chain of Fig. 2).
        Isr = "isr",
    }
}

/// The policy of `p` with its settings. The link speed the policies read is resolved to the
/// NIC's (`nic_link_gbps`) unless given, so that the result says which was used.
pub fn configure(p: &mut Params, nic_link_gbps: f64) -> Result<Moderation, Error> {
    if p.f64(LINK_GBPS) == 0.0 {
        p.set(LINK_GBPS, Value::Float(nic_link_gbps));
    }
    Moderation::named(p.str(KEY), p)
}

/// Whether the ISR processes the first packet of a busy period.
pub fn first_packet_in_isr(p: &Params) -> Result<bool, Error> {
    Ok(FirstPacket::of(p)? == FirstPacket::Isr)
}

/// `driver.link_gbps` given at the NIC's speed is the echo of its resolved value.
pub fn echo(w: &mut Warnings) {
    if w.p.f64(LINK_GBPS) == w.p.f64(nic::LINK_GBPS) {
        w.echo(LINK_GBPS);
    }
}

/// Whether the policy reads the NIC's link speed (a link-speed policy without a speed of its
/// own).
pub fn reads_nic_link(m: &Moderation, p: &Params) -> bool {
    m.keys().contains(&LINK_GBPS) && p.f64(LINK_GBPS) == p.f64(nic::LINK_GBPS)
}

/// The policies that read the link speed, as a warning names them: `ixgbe and i40e`.
pub fn link_readers() -> String {
    let names: Vec<&str> = VARIANTS
        .iter()
        .filter(|v| v.keys.contains(&LINK_GBPS))
        .map(|v| v.kind)
        .collect();
    names.join(" and ")
}

/// The names quoted, as a warning lists them: `"ixgbe" and "i40e"`.
fn quoted(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    q.join(" and ")
}

/// The settings of the policies that do not run, of the first packet outside disable-enable
/// and hybrid, and of the NIC's interrupt logic that the policy replaces.
pub fn warnings(w: &mut Warnings, m: &Moderation, scheme: Scheme) {
    w.rule(
        &[FIRST_PACKET],
        !matches!(scheme, Scheme::DisableEnable | Scheme::Hybrid),
        || no_effect("only schemes \"disable-enable\" and \"hybrid\" use it"),
    );
    let kind = m.kind();
    // each policy's own keys, then the keys several policies share
    let owners = |k: &str| -> Vec<&'static str> {
        VARIANTS
            .iter()
            .filter(|v| v.keys.contains(&k))
            .map(|v| v.kind)
            .collect()
    };
    for v in VARIANTS {
        let own: Vec<&'static str> = v
            .keys
            .iter()
            .copied()
            .filter(|k| owners(k).len() == 1)
            .collect();
        w.rule(&own, kind != v.kind, || {
            no_effect(&format!("only driver.moderation = \"{}\" uses it", v.kind))
        });
    }
    let mut shared: Vec<&'static str> = Vec::new();
    for k in VARIANTS.iter().flat_map(|v| v.keys) {
        if owners(k).len() > 1 && !shared.contains(k) {
            shared.push(k);
        }
    }
    for k in shared {
        let names = owners(k);
        w.rule(&[k], !names.contains(&kind), || {
            no_effect(&format!(
                "only driver.moderation = {} use it",
                quoted(&names)
            ))
        });
    }
    itr_warnings(w, m);
}

/// The NIC's ITR and coalescing conditions, when the policy replaces them: an adaptive
/// policy overwrites the static value, as the drivers do — ixgbe's `ixgbe_set_itr` (with
/// rx-usecs 1) and i40e's `i40e_update_itr` rewrite the ITR at each poll's end, and net_dim's
/// work (`mlx5e_rx_dim_work`, `virtnet_rx_dim_work`) programs the coalescing pair it picks;
/// i40e and ice refuse a new `rx-usecs` while `adaptive-rx` is on (`__i40e_set_coalesce`,
/// `ice_set_rc_coalesce`). Per driver, python/irqlab/ops/probe/ineffective.py.
fn itr_warnings(w: &mut Warnings, m: &Moderation) {
    let kind = m.kind();
    w.rule(&[nic::ITR_US], m.itr() != Itr::Keeps, || {
        let does = if m.itr() == Itr::Off {
            "runs without an ITR"
        } else {
            "programs the ITR itself"
        };
        no_effect(&format!(
            "driver.moderation = \"{kind}\" {does} (nic.itr_us is the ITR of \"{}\")",
            static_itr::Static::KIND
        ))
    });
    let rate = w.p.f64(ITR_RATE) > 0.0;
    w.rule(&[nic::ITR_US], rate, || {
        no_effect("driver.itr_rate sets the ITR instead")
    });
    w.rule(&[nic::RX_USECS, nic::RX_FRAMES], m.coalescing(), || {
        no_effect(&format!(
            "driver.moderation = \"{kind}\" programs rx-usecs and rx-frames itself"
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::test_support::*;
    use crate::schema::{Params, Value};

    #[test]
    fn the_listed_keys_are_the_policies_keys_and_the_choice() {
        let mut listed: Vec<&str> = keys();
        listed.sort_unstable();
        let mut registered: Vec<&str> = VARIANTS.iter().flat_map(|v| v.keys).copied().collect();
        registered.push(KEY);
        registered.sort_unstable();
        registered.dedup();
        assert_eq!(listed, registered);
        // in the order the warnings list them: the choice, the static ITR and the link
        // speed, then the other policies' keys in registry order
        assert_eq!(
            keys(),
            [
                "driver.moderation",
                "driver.itr_rate",
                "driver.link_gbps",
                "driver.legacy_bulk_rate",
                "driver.legacy_elapsed",
                "driver.linear_rate_max",
                "driver.linear_rate_min",
                "driver.linear_pps_max",
                "driver.linear_min_update_us",
                "driver.linear_elapsed",
                "driver.dim_mode",
                "driver.policy",
            ]
        );
        assert!(keys().starts_with(KEYS));
    }

    #[test]
    fn the_link_speed_is_read_by_ixgbe_and_i40e() {
        assert_eq!(link_readers(), "ixgbe and i40e");
    }

    #[test]
    fn the_adaptive_policies_are_those_the_registry_marks() {
        for name in crate::moderation::NAMES {
            let m = Moderation::named(name, &Params::defaults()).unwrap();
            assert_eq!(m.kind(), *name);
        }
        let adaptive = |name: &str| {
            Moderation::named(name, &Params::defaults())
                .unwrap()
                .adaptive()
        };
        for name in ADAPTIVE {
            assert!(adaptive(name), "{name}");
        }
        for name in ["off", "static", "python"] {
            assert!(!adaptive(name), "{name}");
        }
        // an unknown name: the error the key table gives
        let e = Moderation::named("nope", &Params::defaults()).unwrap_err();
        let table = Params::from_pairs([("driver.moderation", s("nope"))]).unwrap_err();
        assert_eq!(e, table);
        assert!(
            e.to_string().starts_with(
                "driver.moderation = \"nope\": must be one of \"off\", \"static\", \"ixgbe-legacy\", \"linear\", \"ixgbe\", \"i40e\", \"dim\", \"python\""
            ),
            "{e}"
        );
    }

    #[test]
    fn the_driver_reads_the_nic_link_speed_unless_given_its_own() {
        let nic = ("nic.link_gbps", Value::Int(25));
        let own = ("driver.link_gbps", Value::Int(40));
        let ixgbe = Moderation::Ixgbe(LinkSpeed { link_gbps: 25.0 });
        let i40e = Moderation::I40e(LinkSpeed { link_gbps: 40.0 });
        for (policy, given, want, gbps) in [
            ("ixgbe", None, ixgbe, 25.0),
            ("i40e", Some(own), i40e, 40.0),
        ] {
            let mut pairs = vec![("driver.moderation", s(policy)), nic.clone()];
            pairs.extend(given);
            let sc = build(&pairs).unwrap();
            assert_eq!(sc.moderation, want);
            assert_eq!(sc.params.f64("driver.link_gbps"), gbps);
        }
    }

    #[test]
    fn moderation_off_and_the_linear_elapsed_mode_are_built_as_named() {
        let sc = build(&[("driver.moderation", s("off"))]).unwrap();
        assert_eq!(sc.moderation, Moderation::Off(()));
        let sc = build(&[("driver.moderation", s("static"))]).unwrap();
        assert_eq!(sc.moderation, Moderation::Static(sc.nic.itr));
        let nsec_only = |elapsed: &str| match build(&[
            ("driver.moderation", s("linear")),
            ("driver.linear_elapsed", s(elapsed)),
        ])
        .unwrap()
        .moderation
        {
            Moderation::Linear(c) => c.nsec_only,
            m => panic!("{m:?}"),
        };
        assert!(nsec_only("nsec-only"));
        assert!(!nsec_only("measured"));
    }

    #[test]
    fn driver_itr_rate_is_named_unless_the_moderation_is_static() {
        assert!(warned(&[("driver.itr_rate", Value::Int(8000))]).is_empty());
        let sc = build(&[
            ("driver.moderation", s("ixgbe")),
            ("driver.itr_rate", Value::Int(8000)),
        ])
        .unwrap();
        let w: Vec<String> = sc.warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(
            w,
            [
                "driver.itr_rate = 8000.0: has no effect: only driver.moderation = \"static\" uses it"
            ]
        );
    }

    #[test]
    fn ixgbe_legacy_and_dim_are_built_with_their_own_settings() {
        let moderation = |more: &[(&str, Value)]| build(more).unwrap().moderation;
        assert_eq!(
            moderation(&[("driver.moderation", s("ixgbe-legacy"))]),
            Moderation::IxgbeLegacy(crate::moderation::ixgbe_legacy::Config {
                bulk_rate: 8000,
                elapsed: crate::moderation::ixgbe_legacy::Elapsed::Itr,
            })
        );
        assert_eq!(
            moderation(&[
                ("driver.moderation", s("ixgbe-legacy")),
                ("driver.legacy_bulk_rate", Value::Int(12_000)),
                ("driver.legacy_elapsed", s("measured")),
            ]),
            Moderation::IxgbeLegacy(crate::moderation::ixgbe_legacy::Config {
                bulk_rate: 12_000,
                elapsed: crate::moderation::ixgbe_legacy::Elapsed::Measured,
            })
        );
        assert_eq!(
            moderation(&[("driver.moderation", s("dim"))]),
            Moderation::Dim(crate::moderation::dim::Config { cqe: false })
        );
        assert_eq!(
            moderation(&[
                ("driver.moderation", s("dim")),
                ("driver.dim_mode", s("cqe"))
            ]),
            Moderation::Dim(crate::moderation::dim::Config { cqe: true })
        );
    }

    #[test]
    fn the_first_packet_setting_is_named_outside_disable_enable_and_hybrid() {
        assert_eq!(
            warned(&[("driver.first_packet", s("isr"))]),
            ["driver.first_packet"]
        );
        for scheme in ["disable-enable", "hybrid"] {
            assert!(
                warned(&[("scheme", s(scheme)), ("driver.first_packet", s("softirq"))]).is_empty(),
                "{scheme}"
            );
        }
    }

    #[test]
    fn a_policy_s_settings_are_named_unless_that_policy_runs() {
        let bulk = ("driver.legacy_bulk_rate", Value::Int(12_000));
        assert_eq!(
            warned(std::slice::from_ref(&bulk)),
            ["driver.legacy_bulk_rate"]
        );
        assert!(warned(&[("driver.moderation", s("ixgbe-legacy")), bulk]).is_empty());
        let cqe = ("driver.dim_mode", s("cqe"));
        assert_eq!(warned(std::slice::from_ref(&cqe)), ["driver.dim_mode"]);
        assert!(warned(&[("driver.moderation", s("dim")), cqe]).is_empty());
    }

    #[test]
    fn what_overrides_nic_itr_us_is_named_in_its_warning() {
        let itr = ("nic.itr_us", Value::Int(20));
        let reason = |more: &[(&str, Value)]| {
            let mut pairs = vec![itr.clone()];
            pairs.extend_from_slice(more);
            let sc = build(&pairs).unwrap();
            let w: Vec<String> = sc.warnings.iter().map(|w| w.to_string()).collect();
            assert_eq!(w.len(), 1, "{w:?}");
            w[0].clone()
        };
        assert_eq!(
            reason(&[("driver.moderation", s("off"))]),
            "nic.itr_us = 20.0: has no effect: driver.moderation = \"off\" runs without an ITR (nic.itr_us is the ITR of \"static\")"
        );
        assert_eq!(
            reason(&[("driver.moderation", s("i40e"))]),
            "nic.itr_us = 20.0: has no effect: driver.moderation = \"i40e\" programs the ITR itself (nic.itr_us is the ITR of \"static\")"
        );
        assert_eq!(
            reason(&[("driver.itr_rate", Value::Int(8000))]),
            "nic.itr_us = 20.0: has no effect: driver.itr_rate sets the ITR instead"
        );
    }
}
