//! A built scenario: validated [`Params`] turned into typed, integer-time configuration.
//!
//! Build, validate, then run: every error surfaces here, naming its key, before time zero.
//!
//! Each part reads its own keys into its own configuration and says which of its settings have
//! no effect; this module calls them in order and assembles the [`Scenario`]. The parts, and
//! where their configuration lives:
//!
//! | part | keys | module |
//! |---|---|---|
//! | scheme | `scheme` | [`crate::scheme`] |
//! | run | `run.*` | `run` ([`RunConfig`]) |
//! | traffic and its kinds | `traffic.*`, `rr.*` | [`crate::traffic::config`], `onoff`, `pcap`, `rr` |
//! | QoS | `qos.*` | [`crate::qos::config`] and a file per strategy |
//! | platform costs | `platform.*` | [`crate::platform`] |
//! | host, cores, IRQ affinity | `host.*`, `nic.irq_affinity` | [`crate::topology`] |
//! | NIC, rings, RSS, Tx | `nic.*`, `driver.tx_work_limit` | [`crate::nic::config`] |
//! | kernel, NAPI, scheduler | `kernel.*` | [`crate::kernel::config`] |
//! | moderation (the driver) | `driver.*` | [`crate::moderation::config`] and a file per policy |
//! | receive-load controllers | `adapt.*` | [`crate::adapt::config`] and a file per controller |
//! | polling loop, hybrid | `poll.*`, `hybrid.*` | [`crate::polling`] |
//! | sockets and apps | `socket.*`, `[[app]]` | [`crate::socket::config`] |
//! | busy polling, epoll | `socket.busy_*`, `epoll.*`, … | [`crate::busypoll`] |
//!
//! What belongs to no single part stays here: the checks of settings that would turn the
//! scheme into another ([`check_scheme_settings`]) or that the scheme cannot place
//! ([`check_placement`]), and the warnings of the scheme's machinery (which parts a scheme runs
//! at all: [`scheme_warnings`]). The order of the calls is the order in which errors are found
//! and warnings listed.

use crate::adapt::AdaptConfig;
use crate::busypoll::{BusyConfig, Io};
use crate::error::Error;
use crate::kernel::config as kernel;
use crate::moderation::config as moderation;
use crate::nic::config as nic;
use crate::params::{Params, Value};
use crate::qos::QosConfig;
use crate::traffic::{pcap, rr};
use crate::warnings::{Warnings, no_effect};

pub use crate::dist::{Cost, Dist};
pub use crate::kernel::KernelConfig;
pub use crate::moderation::Moderation;
pub use crate::nic::{CauseMode, DriverConfig, NicConfig};
pub use crate::platform::{PlatformConfig, cliff_point_pps};
pub use crate::polling::{HybridConfig, PollConfig};
pub use crate::run::RunConfig;
pub use crate::scheme::Scheme;
pub use crate::socket::config::{
    AppConfig, SK_BUFF_BYTES, STANDARD_MAX_FRAME, SocketConfig, truesize_of_frame,
};
pub use crate::topology::{HostConfig, Topology};
pub use crate::traffic::config::{ClassConfig, SIZE_TABLES, SizeDist, TrafficConfig, TrafficKind};
pub use crate::traffic::onoff::OnOffConfig;
pub use crate::traffic::rr::RrConfig;
pub use crate::warnings::Warning;

/// Everything one run needs, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub scheme: Scheme,
    pub run: RunConfig,
    pub host: HostConfig,
    pub traffic: TrafficConfig,
    pub nic: NicConfig,
    pub driver: DriverConfig,
    pub socket: SocketConfig,
    pub apps: Vec<AppConfig>,
    /// Where everything is: vectors on cores, flows on queues and apps.
    pub topology: Topology,
    pub platform: PlatformConfig,
    pub kernel: KernelConfig,
    pub poll: PollConfig,
    pub hybrid: HybridConfig,
    pub moderation: Moderation,
    /// The receive-load controller (`adapt.*`).
    pub adapt: AdaptConfig,
    /// Ingress QoS: the classes' rings and vectors, and the ring discipline.
    pub qos: QosConfig,
    /// disable-enable and hybrid: the ISR processes the first packet of a busy period.
    pub first_packet_in_isr: bool,
    /// Busy polling, preferred busy polling and IRQ suspension (`busypoll`).
    pub busy: BusyConfig,
    /// The request/response workload (`traffic.kind = "rr"`).
    pub rr: Option<RrConfig>,
    /// The validated key/value pairs it was built from (echoed into the result).
    pub params: Params,
    /// Settings that have no effect in this scenario ([`Warning`]); the run is valid.
    pub warnings: Vec<Warning>,
}

impl Scenario {
    /// The same scenario with its `python` moderation policy made by `factory`, one per
    /// vector. A scenario with another `driver.moderation` does not change.
    pub fn with_policy(mut self, factory: crate::moderation::external::Factory) -> Scenario {
        if let Moderation::External(f) = &mut self.moderation {
            *f = Some(factory);
        }
        self
    }

    /// Builds a scenario from `(dotted key, value)` pairs (missing keys take their defaults).
    pub fn from_pairs<K: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, Value)>,
    ) -> Result<Scenario, Error> {
        Self::build(Params::from_pairs(pairs)?)
    }

    /// Builds a scenario from validated params: each part in turn, then the checks between
    /// parts, then the warnings.
    pub fn build(mut p: Params) -> Result<Scenario, Error> {
        let scheme = Scheme::of(&p)?;
        // the keys set to a value of their own, before the parts resolve automatic ones
        let set = p.set_keys();
        // the traffic, and the run's window (a replay's length may be the run's)
        let kind = TrafficKind::of(&p)?;
        let replay = match kind {
            TrafficKind::Pcap => Some(pcap::configure(&p)?),
            _ => None,
        };
        let run = crate::run::configure(&mut p, replay.as_ref())?;
        let mut traffic = crate::traffic::config::configure(&p, kind, replay)?;
        // QoS makes its classes before the classes are read
        let strategy = crate::qos::prepare(&mut p, scheme)?;
        (traffic.classes, traffic.class_cum) = crate::traffic::config::classes(&mut p)?;
        // the host
        let platform = crate::platform::configure(&p)?;
        let host = crate::topology::configure_host(&p)?;
        let nic = nic::configure(&p)?;
        let kernel = kernel::configure(&mut p, host.cores)?;
        let moderation = moderation::configure(&mut p, nic.link_gbps)?;
        let adapt = crate::adapt::config::configure(&p, scheme, &moderation)?;
        let driver = nic::configure_driver(&p)?;
        let poll = crate::polling::configure_poll(&p)?;
        let auto_switch_pps = crate::polling::auto_switch_pps(&platform, traffic.sizes.mean());
        let hybrid = crate::polling::configure_hybrid(&mut p, auto_switch_pps)?;
        // sockets and apps, busy polling, requests
        let largest = traffic.sizes.largest();
        let socket = crate::socket::config::configure(&p, largest)?;
        let apps = crate::socket::config::configure_apps(&p, &socket, largest)?;
        let ios: Vec<Io> = apps.iter().map(|a| a.io).collect();
        let busy = crate::busypoll::configure(&p, scheme, &ios)?;
        let rr = match kind {
            TrafficKind::Rr => Some(rr::configure(&p)?),
            _ => None,
        };
        // where everything is, and what needs it
        let hashes = traffic.replay.as_ref().map(|r| &r.scan.flows.hash[..]);
        let topology = Topology::build(&p, &host, &nic, traffic.flows, hashes)?;
        check_placement(&p, scheme, &host, &traffic, &topology)?;
        nic::check_forwarding(&nic, host.forward)?;
        let classes = traffic.classes.len();
        let qos = crate::qos::configure(
            &p,
            strategy,
            classes,
            kernel.napi_weight,
            &topology.vector_core,
        )?;
        check_scheme_settings(&p, scheme, &moderation, classes)?;
        let mut w = Warnings::new(&p, set);
        // echoes of resolved values are not settings of their own
        crate::polling::echo(&mut w, auto_switch_pps);
        moderation::echo(&mut w);
        pcap::echo(&mut w, traffic.replay.as_ref().map(|_| traffic.rate_pps));
        // the rules, from the scheme's machinery to single keys
        scheme_warnings(&mut w, scheme, &moderation);
        kernel::warnings(&mut w);
        crate::polling::warnings(&mut w, scheme);
        crate::adapt::config::warnings(&mut w, &adapt);
        moderation::warnings(&mut w, &moderation, scheme);
        let reads_link = moderation::reads_nic_link(&moderation, &p);
        nic::tx_warnings(
            &mut w,
            host.forward,
            reads_link,
            &moderation::link_readers(),
        );
        crate::traffic::config::warnings(&mut w, kind);
        nic::rss_warnings(&mut w);
        crate::qos::config::warnings(&mut w, strategy);
        crate::busypoll::warnings(&mut w, &busy, &ios, kind == TrafficKind::Rr);
        let warnings = w.finish();
        if traffic.replay.is_some() {
            // so that the result says the rate replayed
            p.set(
                crate::traffic::config::RATE_PPS,
                Value::Float(traffic.rate_pps),
            );
        }
        Ok(Scenario {
            scheme,
            run,
            host,
            traffic,
            nic,
            driver,
            socket,
            apps,
            topology,
            platform,
            kernel,
            poll,
            hybrid,
            moderation,
            adapt,
            qos,
            first_packet_in_isr: moderation::first_packet_in_isr(&p)?,
            busy,
            rr,
            params: p,
            warnings,
        })
    }
}

// ----- checks between parts -----------------------------------------------------------------
//
// A scheme is a preset of one host model, so every key can be set with every scheme. A setting
// that would make the run something else than its scheme says (count coalescing that never
// counts, DIM replacing a coalescing scheme's preset, interrupts on the ideal host, traffic
// classes whose packets are never polled) is an error, found here before time zero; a setting
// the scenario ignores is a warning (`crate::warnings`). The decisions are recorded in
// docs/scenario.md ("Settings a scheme ignores").

/// What the topology must allow: every request/response client's flow reaches an app, and
/// Salah's polling loop has one vector per core and forwards nothing.
fn check_placement(
    p: &Params,
    scheme: Scheme,
    host: &HostConfig,
    traffic: &TrafficConfig,
    topology: &Topology,
) -> Result<(), Error> {
    if traffic.kind == TrafficKind::Rr
        && let Some(f) = (0..traffic.flows as u32).find(|&f| topology.app_of(f).is_none())
    {
        return Err(Error::Inconsistent {
            key: rr::CLIENTS.into(),
            value: p.get(rr::CLIENTS).to_string(),
            reason: format!(
                "client {f}'s flow reaches no app, so its requests would never be answered; give it to an app (app.N.flows)"
            ),
        });
    }
    if !scheme.uses_poll_loop() {
        return Ok(());
    }
    if let Some(c) = topology.core_vectors.iter().position(|v| v.len() > 1) {
        let key = if p.u64_list(crate::topology::IRQ_AFFINITY).is_empty() {
            nic::QUEUES
        } else {
            crate::topology::IRQ_AFFINITY
        };
        return Err(Error::Inconsistent {
            key: key.into(),
            value: p.get(key).to_string(),
            reason: format!(
                "scheme \"{}\" runs Salah's polling loop, one queue vector per core; core {c} has {}",
                scheme.name(),
                topology.core_vectors[c].len()
            ),
        });
    }
    if host.forward {
        return Err(Error::Inconsistent {
            key: crate::topology::FORWARD.into(),
            value: "true".into(),
            reason: format!(
                "scheme \"{}\" runs Salah's polling loop, which never cleans a Tx ring; forward with a NAPI scheme (napi, irq, coalesce-count, coalesce-time, ideal)",
                scheme.name()
            ),
        });
    }
    Ok(())
}

/// Settings valid alone that would turn the scheme into another.
fn check_scheme_settings(
    p: &Params,
    scheme: Scheme,
    moderation: &Moderation,
    classes: usize,
) -> Result<(), Error> {
    if scheme == Scheme::CoalesceCount && p.u64(nic::RX_FRAMES) == 0 {
        return Err(Error::Inconsistent {
            key: nic::RX_FRAMES.into(),
            value: "0".into(),
            reason: "scheme \"coalesce-count\" interrupts once nic.rx_frames packets wait, so it needs at least 1 (1 is scheme \"irq\"); 0 turns count coalescing off".into(),
        });
    }
    moderation.check_scheme(scheme)?;
    if scheme == Scheme::Ideal && kernel::soft_coalescing(p) {
        return Err(Error::Inconsistent {
            key: kernel::NAPI_DEFER_HARD_IRQS.into(),
            value: p.get(kernel::NAPI_DEFER_HARD_IRQS).to_string(),
            reason: "scheme \"ideal\" has no interrupt cost, and software IRQ coalescing would add the NAPI timer's interrupts (platform.poll_timer_ns); use it with scheme \"napi\"".into(),
        });
    }
    if scheme.uses_poll_loop() && classes > 1 {
        return Err(Error::Inconsistent {
            key: crate::traffic::config::CLASSES.into(),
            value: format!("{classes} classes"),
            reason: format!(
                "scheme \"{}\" runs Salah's polling loop, which polls one Rx ring per vector, so the packets of every class but the first would never be processed; use one class, or a NAPI scheme (napi, irq, coalesce-count, coalesce-time, ideal)",
                scheme.name()
            ),
        });
    }
    Ok(())
}

/// The scheme's machinery: the parts a scheme does not run at all (the interrupts of the ideal
/// host and of pure polling, the vector's masking, the softirq under Salah's polling loop, the
/// driver's moderation, which that loop never calls).
fn scheme_warnings(w: &mut Warnings, scheme: Scheme, m: &Moderation) {
    let name = scheme.name();
    let moderation_keys = moderation::keys();
    let isr: &[&'static str] = &[moderation::FIRST_PACKET, nic::TX_IRQ];
    for keys in [nic::IRQ_KEYS, &moderation_keys[..], isr] {
        w.rule(keys, scheme == Scheme::Ideal, || {
            no_effect(
                "scheme \"ideal\" has no interrupts (an arrival starts protocol processing at no cost)",
            )
        });
        w.rule(keys, scheme == Scheme::Poll, || {
            no_effect(
                "scheme \"poll\" never enables packet interrupts (the polling timer starts every poll)",
            )
        });
    }
    let masks = scheme.masks_on_irq();
    w.rule(&[nic::CAUSE_MODE], !masks, || {
        no_effect(&format!(
            "scheme \"{name}\" never masks the vector, so never re-enables it"
        ))
    });
    let in_loop = scheme.uses_poll_loop();
    w.rule(kernel::SOFTIRQ_KEYS, in_loop, || {
        no_effect(&format!(
            "scheme \"{name}\" runs Salah's polling loop, not the kernel's softirq and NAPI"
        ))
    });
    // the loop never completes a NAPI session, so an adaptive policy never runs
    w.rule(&[moderation::KEY], in_loop && m.adaptive(), || {
        format!(
            "never adapts: scheme \"{name}\" runs Salah's polling loop, which never runs the driver's moderation, so the NIC keeps the policy's initial setting all run; use \"static\" (nic.itr_us) or \"off\", or a NAPI scheme (napi, irq, coalesce-count, coalesce-time)"
        )
    });
    // software IRQ coalescing defers re-enabling a masked vector to a timer's poll
    let soft = kernel::soft_coalescing(w.p);
    w.rule(kernel::SOFT_COALESCING_KEYS, !masks && soft, || {
        format!(
            "defers nothing: scheme \"{name}\" never masks the vector, so the NAPI timer only adds polls and interrupts (platform.poll_timer_ns) of its own; software IRQ coalescing is for scheme \"napi\""
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    /// The policies that adapt to the load.
    const ADAPTIVE: &[&str] = &["ixgbe-legacy", "linear", "ixgbe", "i40e", "dim"];

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

    /// Every key of the table, by the part that declares it.
    fn keys_by_part() -> Vec<(&'static str, Vec<&'static str>)> {
        let cat = |lists: &[&[&'static str]]| lists.concat();
        vec![
            ("scheme", vec![crate::scheme::KEY]),
            ("run", crate::run::KEYS.to_vec()),
            (
                "traffic",
                cat(&[
                    crate::traffic::config::KEYS,
                    crate::traffic::onoff::KEYS,
                    pcap::KEYS,
                    rr::KEYS,
                ]),
            ),
            ("qos", crate::qos::config::KEYS.to_vec()),
            ("platform", crate::platform::KEYS.to_vec()),
            ("topology", crate::topology::KEYS.to_vec()),
            ("nic", nic::KEYS.to_vec()),
            ("kernel", kernel::KEYS.to_vec()),
            (
                "moderation",
                cat(&[&moderation::keys(), &[moderation::FIRST_PACKET]]),
            ),
            (
                "adapt",
                cat(&[&[crate::adapt::config::SCHEME], crate::adapt::config::KEYS]),
            ),
            ("polling", crate::polling::KEYS.to_vec()),
            ("socket", crate::socket::config::KEYS.to_vec()),
            ("busypoll", crate::busypoll::KEYS.to_vec()),
        ]
    }

    #[test]
    fn every_key_of_the_table_is_declared_by_exactly_one_part() {
        let mut owner: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (part, keys) in keys_by_part() {
            for k in keys {
                owner.entry(k).or_default().push(part);
            }
        }
        for spec in crate::params::PARAMS {
            let parts = owner.remove(spec.key).unwrap_or_default();
            assert_eq!(parts.len(), 1, "{} is declared by {parts:?}", spec.key);
        }
        assert!(owner.is_empty(), "not keys of the table: {owner:?}");
        // the numbered entries: the classes are the traffic's, the apps the sockets'
        use crate::socket::config as socket;
        use crate::traffic::config as traffic;
        let fields = |prefix: &str| -> Vec<&str> {
            let t = crate::params::TABLES.iter().find(|t| t.prefix == prefix);
            t.expect(prefix).fields.iter().map(|f| f.key).collect()
        };
        assert_eq!(
            fields(traffic::CLASSES),
            [traffic::CLASS_NAME, traffic::CLASS_SHARE]
        );
        assert_eq!(
            fields(socket::APP),
            [
                socket::APP_CORE,
                socket::APP_COST_NS,
                socket::APP_COST_DIST,
                socket::APP_COST_NS_PER_BYTE,
                socket::APP_FLOWS,
                socket::APP_RCVBUF_BYTES,
                socket::APP_IO,
            ]
        );
    }

    fn build(pairs: &[(&str, Value)]) -> Result<Scenario, Error> {
        Scenario::from_pairs(pairs.iter().cloned())
    }

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    fn warned(pairs: &[(&str, Value)]) -> Vec<String> {
        let sc = build(pairs).unwrap();
        sc.warnings.iter().map(|w| w.key.clone()).collect()
    }

    #[test]
    fn count_coalescing_must_count() {
        let e = build(&[
            ("scheme", s("coalesce-count")),
            ("nic.rx_frames", Value::Int(0)),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "nic.rx_frames");
        assert!(e.to_string().contains("at least 1"), "{e}");
        // tau = 1 is the end of Salah's Fig. 10 curve, and T = 0 that of time coalescing
        build(&[
            ("scheme", s("coalesce-count")),
            ("nic.rx_frames", Value::Int(1)),
        ])
        .unwrap();
        let t0 = build(&[
            ("scheme", s("coalesce-time")),
            ("nic.rx_usecs", Value::Int(0)),
        ]);
        assert!(t0.unwrap().warnings.is_empty());
    }

    #[test]
    fn dim_replacing_the_coalescing_preset_is_an_error() {
        for scheme in ["coalesce-count", "coalesce-time"] {
            let e = build(&[("scheme", s(scheme)), ("driver.moderation", s("dim"))]).unwrap_err();
            assert_eq!(e.key(), "driver.moderation");
            assert!(e.to_string().contains("replacing the coalescing"), "{e}");
        }
    }

    #[test]
    fn a_policy_the_polling_loop_never_runs_is_a_warning() {
        // a sweep of scheme x driver.moderation runs every point; these never adapt
        for scheme in ["disable-enable", "napi-poll", "hybrid"] {
            for m in ADAPTIVE {
                let sc = build(&[("scheme", s(scheme)), ("driver.moderation", s(m))]).unwrap();
                let w: Vec<String> = sc.warnings.iter().map(|w| w.to_string()).collect();
                assert_eq!(w.len(), 1, "{scheme} {m}: {w:?}");
                assert!(w[0].starts_with("driver.moderation = "), "{w:?}");
                assert!(w[0].contains("never adapts"), "{w:?}");
            }
            for m in ["off", "static"] {
                let sc = build(&[("scheme", s(scheme)), ("driver.moderation", s(m))]).unwrap();
                assert!(sc.warnings.is_empty(), "{scheme} {m}: {:?}", sc.warnings);
            }
        }
        // no packet interrupts at all: nothing to moderate
        let w = warned(&[("scheme", s("poll")), ("driver.moderation", s("ixgbe"))]);
        assert_eq!(w, ["driver.moderation"]);
    }

    #[test]
    fn the_polling_loop_takes_one_class() {
        let pairs = [
            ("scheme", s("disable-enable")),
            ("traffic.classes.0.share", Value::Float(0.5)),
            ("traffic.classes.1.share", Value::Float(0.5)),
        ];
        let e = build(&pairs).unwrap_err();
        assert_eq!(e.key(), "traffic.classes");
        assert!(e.to_string().contains("never be processed"), "{e}");
        build(&[
            ("scheme", s("disable-enable")),
            ("traffic.classes.0.name", s("x")),
        ])
        .unwrap();
    }

    #[test]
    fn the_ideal_host_takes_no_timer_interrupts() {
        let e = build(&[
            ("scheme", s("ideal")),
            ("kernel.napi_defer_hard_irqs", Value::Int(10)),
            ("kernel.gro_flush_timeout_ns", Value::Int(20_000)),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "kernel.napi_defer_hard_irqs");
    }

    #[test]
    fn defaults_and_presets_warn_of_nothing() {
        for scheme in crate::params::SCHEMES {
            for preset in crate::params::PLATFORM_PRESETS {
                let sc = build(&[("scheme", s(scheme)), ("platform.preset", s(preset))]).unwrap();
                assert!(
                    sc.warnings.is_empty(),
                    "{scheme} {preset}: {:?}",
                    sc.warnings
                );
                // every key given at the value it resolved to (a rerun): still nothing
                let echo: Vec<(String, Value)> = sc
                    .params
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect();
                let again = Scenario::from_pairs(echo).unwrap();
                assert!(
                    again.warnings.is_empty(),
                    "{scheme} {preset}: {:?}",
                    again.warnings
                );
                // a key set to its default is not a setting of its own
                let same = build(&[
                    ("scheme", s(scheme)),
                    ("platform.preset", s(preset)),
                    ("nic.itr_us", Value::Int(0)),
                    ("poll.quota", Value::Int(3)),
                    ("hybrid.window_us", Value::Float(1000.0)),
                ])
                .unwrap();
                assert!(
                    same.warnings.is_empty(),
                    "{scheme} {preset}: {:?}",
                    same.warnings
                );
            }
        }
    }

    #[test]
    fn settings_a_scheme_ignores_are_named() {
        let itr = ("nic.itr_us", Value::Int(20));
        assert_eq!(
            warned(&[("scheme", s("ideal")), itr.clone()]),
            ["nic.itr_us"]
        );
        assert_eq!(
            warned(&[("scheme", s("poll")), itr.clone()]),
            ["nic.itr_us"]
        );
        for scheme in ["napi", "irq", "disable-enable", "napi-poll", "hybrid"] {
            assert!(
                warned(&[("scheme", s(scheme)), itr.clone()]).is_empty(),
                "{scheme}"
            );
        }
        let sc = build(&[("scheme", s("ideal")), ("driver.moderation", s("linear"))]).unwrap();
        assert_eq!(
            sc.warnings[0].to_string(),
            "driver.moderation = \"linear\": has no effect: scheme \"ideal\" has no interrupts (an arrival starts protocol processing at no cost)"
        );
        let quota = ("poll.quota", Value::Int(5));
        assert_eq!(
            warned(&[("scheme", s("napi")), quota.clone()]),
            ["poll.quota"]
        );
        assert!(warned(&[("scheme", s("napi-poll")), quota]).is_empty());
        let w = warned(&[("scheme", s("irq")), ("nic.cause_mode", s("armed"))]);
        assert_eq!(w, ["nic.cause_mode"]);
        // the platform describes the machine: its costs are never reported
        assert!(warned(&[("scheme", s("irq")), ("platform.mask_ns", Value::Int(500))]).is_empty());
        let w = warned(&[
            ("scheme", s("poll")),
            ("kernel.napi_weight", Value::Int(16)),
        ]);
        assert_eq!(w, ["kernel.napi_weight"]);
        let w = warned(&[("hybrid.switch_pps", Value::Float(2e5))]);
        assert_eq!(w, ["hybrid.switch_pps"]);
        let w = warned(&[("driver.moderation", s("ixgbe")), itr.clone()]);
        assert_eq!(w, ["nic.itr_us"]);
        assert!(warned(&[("driver.moderation", s("dim")), itr]).is_empty());
        let w = warned(&[("driver.linear_rate_max", Value::Float(5e4))]);
        assert_eq!(w, ["driver.linear_rate_max"]);
        let w = warned(&[("driver.policy", Value::Str("mine.py:Mine".into()))]);
        assert_eq!(w, ["driver.policy"]);
        let w = warned(&[("kernel.gro_flush_timeout_ns", Value::Int(20_000))]);
        assert_eq!(w, ["kernel.gro_flush_timeout_ns"]);
        let w = warned(&[
            ("scheme", s("irq")),
            ("kernel.napi_defer_hard_irqs", Value::Int(2)),
            ("kernel.gro_flush_timeout_ns", Value::Int(20_000)),
        ]);
        assert_eq!(
            w,
            ["kernel.napi_defer_hard_irqs", "kernel.gro_flush_timeout_ns"]
        );
        let w = warned(&[
            ("driver.tx_work_limit", Value::Int(64)),
            ("traffic.sources", Value::Int(2)),
        ]);
        assert_eq!(w, ["driver.tx_work_limit", "traffic.sources"]);
        let forwarding = [
            ("host.forward", Value::Bool(true)),
            ("driver.tx_work_limit", Value::Int(64)),
        ];
        assert!(warned(&forwarding).is_empty());
    }

    #[test]
    fn default_scenario_builds_with_kernel_rounding() {
        let s = Scenario::build(Params::defaults()).unwrap();
        assert_eq!(s.scheme, Scheme::Napi);
        assert_eq!(s.kernel.jiffy, SimDuration(1_000_000_000));
        assert_eq!(s.kernel.budget_jiffies, 2);
        assert_eq!(s.kernel.max_softirq_jiffies, 2);
        assert_eq!(s.platform.irq.mean, SimDuration(3_730_000));
        assert_eq!(s.run.end.ps() - s.run.warmup.ps(), 100_000_000_000);
    }

    #[test]
    fn hz_250_rounds_up_like_the_kernel() {
        let s = Scenario::from_pairs([("kernel.hz", Value::Int(250))]).unwrap();
        assert_eq!(s.kernel.budget_jiffies, 2); // default: 2 jiffies = 8000 us
        assert_eq!(s.kernel.max_softirq_jiffies, 1); // 2 ms at 4 ms per jiffy, rounded up
        let e = Scenario::from_pairs([
            ("kernel.hz", Value::Int(250)),
            ("kernel.netdev_budget_usecs", Value::Int(2000)),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "kernel.netdev_budget_usecs");
        assert!(e.to_string().contains("8000 us"), "{e}");
    }

    /// A scenario replaying `three()` (3 packets over 1.000007 s, period 1.5 s), with the
    /// capture file it reads (removed when dropped).
    fn replayed(
        name: &str,
        more: &[(&str, Value)],
    ) -> Result<(Scenario, tempfile::TempPath), Error> {
        use crate::traffic::capture::tests::{file, pcap, three};
        let path = file(name, &pcap(&three(), false, false, 1));
        let mut pairs = vec![
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s(path.to_str().unwrap())),
            ("run.warmup_ms", Value::Int(0)),
        ];
        pairs.extend_from_slice(more);
        Ok((build(&pairs)?, path))
    }

    #[test]
    fn a_replay_lasts_its_capture_unless_told() {
        let (sc, _capture) = replayed("dur.pcap", &[]).unwrap();
        let period = 1_000_007_000_000 + 500_003_500_000u64;
        assert_eq!(sc.run.end.ps(), period);
        assert_eq!(sc.params.f64("run.duration_ms"), period as f64 / 1e9);
        // the rate of the capture, resolved: 3 packets per period
        assert_eq!(sc.traffic.rate_pps, 3.0 * 1e12 / period as f64);
        assert_eq!(sc.traffic.flows, 2);
        assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
        // sped up, looped, after a warm-up
        let (sc, _capture) = replayed(
            "dur2.pcap",
            &[
                ("traffic.speedup", Value::Int(4)),
                ("traffic.loop", Value::Int(3)),
                ("run.warmup_ms", Value::Int(100)),
            ],
        )
        .unwrap();
        assert_eq!(sc.run.end.ps(), (3 * period).div_ceil(4));
        assert_eq!(sc.run.warmup.ps(), 100_000_000_000);
        // re-running the resolved scenario is the same run
        let again = Scenario::build(sc.params.clone()).unwrap();
        assert_eq!(again.run, sc.run);
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        // a duration given is the duration
        let (sc, _capture) =
            replayed("dur3.pcap", &[("run.duration_ms", Value::Int(100))]).unwrap();
        assert_eq!(sc.run.end.ps(), 100_000_000_000);
        let (sc, _capture) = replayed(
            "dur4.pcap",
            &[
                ("traffic.loop", Value::Int(0)),
                ("run.duration_ms", Value::Int(5000)),
            ],
        )
        .unwrap();
        assert_eq!(sc.run.end.ps(), 5_000_000_000_000);
    }

    #[test]
    fn replay_settings_that_cannot_work_are_errors_naming_the_key() {
        let e = replayed("e1.pcap", &[("traffic.loop", Value::Int(0))]).unwrap_err();
        assert_eq!(e.key(), "traffic.loop");
        assert!(e.to_string().contains("set run.duration_ms"), "{e}");
        let e = replayed("e2.pcap", &[("run.warmup_ms", Value::Int(2000))]).unwrap_err();
        assert_eq!(e.key(), "run.warmup_ms");
        assert!(e.to_string().contains("lasts 1500.0105 ms"), "{e}");
        let e = build(&[("traffic.kind", s("pcap"))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "traffic.pcap = \"\": traffic.kind = \"pcap\" replays a capture: give its file"
        );
        let e = build(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s("/dev/null")),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("is not a regular file"), "{e}");
        let e = build(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s("/no/such/capture.pcap")),
        ])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "traffic.pcap = \"/no/such/capture.pcap\": no such file"
        );
        // a long path shows its end, the file's name
        let long = format!("/{}/trace.pcap", "d".repeat(100));
        let e = build(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(&long))]).unwrap_err();
        let shown = e.to_string();
        assert!(shown.starts_with("traffic.pcap = \"…ddd"), "{shown}");
        assert!(
            shown.ends_with("d/trace.pcap\" (112 characters): no such file"),
            "{shown}"
        );
        // one packet: no duration, nothing to loop
        use crate::traffic::capture::tests::{file, pcap, three};
        let one = file("one.pcap", &pcap(&three()[..1], false, false, 1));
        let one = one.to_str().unwrap();
        let e = build(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(one))]).unwrap_err();
        assert_eq!(e.key(), "traffic.pcap");
        assert!(
            e.to_string().ends_with(
                "the capture has no duration of its own (it holds one packet): set run.duration_ms"
            ),
            "{e}"
        );
        let sc = build(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s(one)),
            ("run.duration_ms", Value::Int(1)),
        ])
        .unwrap();
        assert_eq!(sc.traffic.flows, 1);
        let e = build(&[
            ("traffic.kind", s("pcap")),
            ("traffic.pcap", s(one)),
            ("run.duration_ms", Value::Int(1)),
            ("traffic.loop", Value::Int(2)),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "traffic.loop");
    }

    #[test]
    fn what_a_replay_ignores_is_named() {
        let w = |more: &[(&str, Value)]| {
            replayed("w.pcap", more)
                .unwrap()
                .0
                .warnings
                .iter()
                .map(|w| w.key.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            w(&[
                ("traffic.rate_pps", Value::Int(5)),
                ("traffic.sizes", s("imix")),
                ("traffic.size_bytes", Value::Int(100)),
                ("traffic.flows", Value::Int(64)),
                ("traffic.flow_zipf_s", Value::Float(1.1)),
            ]),
            [
                "traffic.rate_pps",
                "traffic.sizes",
                "traffic.size_bytes",
                "traffic.flows",
                "traffic.flow_zipf_s"
            ]
        );
        let (sc, _capture) = replayed("w2.pcap", &[("traffic.flows", Value::Int(64))]).unwrap();
        assert_eq!(
            sc.warnings[0].to_string(),
            "traffic.flows = 64: has no effect: traffic.kind = \"pcap\" takes the flows from the capture's 5-tuples"
        );
        // and a replay's keys without a replay
        assert_eq!(
            warned(&[
                ("traffic.speedup", Value::Int(2)),
                ("traffic.loop", Value::Int(3)),
                ("traffic.pcap", s("x.pcap")),
            ]),
            ["traffic.pcap", "traffic.speedup", "traffic.loop"]
        );
    }

    #[test]
    fn a_replay_runs_its_packets_on_the_queues_rss_picks() {
        let (sc, _capture) = replayed(
            "run.pcap",
            &[("nic.queues", Value::Int(4)), ("host.cores", Value::Int(2))],
        )
        .unwrap();
        let (r, trace) = crate::run_with(&sc, crate::PacketTrace::default());
        assert_eq!(trace.arrival_ps, [0, 2_000_000, 1_000_007_000_000]);
        assert_eq!(trace.size_bytes, [64, 1004, 64]);
        assert_eq!(trace.flow, [0, 1, 0]);
        let q = |f: usize| sc.topology.flow_queue[f];
        assert_eq!(trace.queue, [q(0), q(1), q(0)]);
        assert_eq!(r.packets.offered, 3);
        assert_eq!(r.frame_bytes.max, Some(1004));
        assert_eq!(r.frame_bytes.p50, Some(64));
        let rep = r.replay.clone().unwrap();
        assert_eq!((rep.packets, rep.passes, rep.error), (3, 1, None));
        // the core-by-core run is the same
        assert!(crate::runs_core_by_core(&sc));
        assert_eq!(crate::run(&sc), r);
    }

    #[test]
    fn a_socket_charges_the_configured_truesize_or_the_frame_s_own() {
        let configured = SocketConfig {
            rcvbuf_bytes: 212_992,
            truesize_bytes: 1000,
            jumbo: false,
        };
        assert_eq!(configured.truesize(64), 1000);
        assert_eq!(configured.truesize(9000), 1000);
        let standard = SocketConfig {
            truesize_bytes: 0,
            ..configured.clone()
        };
        assert_eq!(standard.truesize(64), 2304);
        let jumbo = SocketConfig {
            truesize_bytes: 0,
            jumbo: true,
            ..configured
        };
        // 3 buffers of 3 KiB in 4 KiB halves, and the sk_buff
        assert_eq!(jumbo.truesize(9000), 3 * 4096 + 256);
    }

    #[test]
    fn frames_above_1518_bytes_are_jumbo_and_1518_is_not() {
        let sc = build(&[("traffic.size_bytes", Value::Int(1518))]).unwrap();
        assert!(!sc.socket.jumbo);
        assert_eq!(sc.socket.truesize(1518), 2304);
        let sc = build(&[("traffic.size_bytes", Value::Int(1519))]).unwrap();
        assert!(sc.socket.jumbo);
        assert_eq!(sc.socket.truesize(1519), 4096 + 256);
    }

    #[test]
    fn the_driver_reads_the_nic_link_speed_unless_given_its_own() {
        let sc = build(&[
            ("driver.moderation", s("ixgbe")),
            ("nic.link_gbps", Value::Int(25)),
        ])
        .unwrap();
        assert_eq!(
            sc.moderation,
            Moderation::Ixgbe(crate::moderation::ixgbe::Config { link_gbps: 25.0 })
        );
        assert_eq!(sc.params.f64("driver.link_gbps"), 25.0);
        let sc = build(&[
            ("driver.moderation", s("i40e")),
            ("nic.link_gbps", Value::Int(25)),
            ("driver.link_gbps", Value::Int(40)),
        ])
        .unwrap();
        assert_eq!(
            sc.moderation,
            Moderation::I40e(crate::moderation::i40e::Config { link_gbps: 40.0 })
        );
        assert_eq!(sc.params.f64("driver.link_gbps"), 40.0);
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
    fn aic_decreases_once_per_interval_unless_per_packet() {
        let sc = build(&[]).unwrap();
        assert!(sc.adapt.aic_once_per_interval);
        let sc = build(&[("adapt.aic_decrease", s("per-packet"))]).unwrap();
        assert!(!sc.adapt.aic_once_per_interval);
        let sc = build(&[("adapt.aic_decrease", s("per-interval"))]).unwrap();
        assert!(sc.adapt.aic_once_per_interval);
    }

    #[test]
    fn zipf_popularity_needs_s_above_0_and_more_than_one_flow() {
        let sc = build(&[
            ("traffic.flows", Value::Int(4)),
            ("traffic.flow_zipf_s", Value::Int(1)),
        ])
        .unwrap();
        // weights 1, 1/2, 1/3, 1/4 of 25/12
        let cum = sc.traffic.flow_cum.expect("zipf");
        let want = [12.0 / 25.0, 18.0 / 25.0, 22.0 / 25.0, 1.0];
        assert_eq!(cum.len(), want.len());
        for (c, w) in cum.iter().zip(want) {
            assert!((c - w).abs() < 1e-12, "{cum:?}");
        }
        assert_eq!(cum[3], 1.0);
        // s = 0: uniform
        let sc = build(&[
            ("traffic.flows", Value::Int(4)),
            ("traffic.flow_zipf_s", Value::Int(0)),
        ])
        .unwrap();
        assert_eq!(sc.traffic.flow_cum, None);
        // one flow: nothing to choose
        let sc = build(&[
            ("traffic.flows", Value::Int(1)),
            ("traffic.flow_zipf_s", Value::Int(1)),
        ])
        .unwrap();
        assert_eq!(sc.traffic.flow_cum, None);
    }

    #[test]
    fn a_size_table_has_cumulative_weights_and_its_weighted_mean() {
        let sc = build(&[("traffic.sizes", s("imix"))]).unwrap();
        assert_eq!(
            sc.traffic.sizes,
            SizeDist::Table {
                sizes: vec![64, 594, 1518],
                cum: vec![7.0 / 12.0, 11.0 / 12.0, 1.0],
            }
        );
        let mean = (64.0 * 7.0 + 594.0 * 4.0 + 1518.0) / 12.0;
        assert!((sc.traffic.sizes.mean() - mean).abs() < 1e-9);
        assert_eq!(SizeDist::Fixed(100).mean(), 100.0);
    }

    #[test]
    fn a_size_weight_must_be_a_finite_number_at_least_0() {
        for (table, item) in [("64:-1", "64:-1"), ("64:1, 128:inf", "128:inf")] {
            let e = build(&[("traffic.sizes", s(table))]).unwrap_err();
            assert_eq!(e.key(), "traffic.sizes");
            assert_eq!(
                e.to_string(),
                format!(
                    "traffic.sizes = \"{table}\": \"{item}\": the weight must be a number >= 0"
                )
            );
        }
        let sc = build(&[("traffic.sizes", s("64:0, 128:2"))]).unwrap();
        assert_eq!(sc.traffic.sizes.mean(), 128.0);
    }

    #[test]
    fn class_names_are_at_most_32_letters_digits_dashes_and_underscores() {
        let name = |n: &str| {
            build(&[("traffic.classes.0.name", s(n))]).map(|sc| sc.traffic.classes[0].name.clone())
        };
        assert_eq!(name("rt-1_A").unwrap(), "rt-1_A");
        let longest = "a".repeat(32);
        assert_eq!(name(&longest).unwrap(), longest);
        for bad in ["a.b", "a b", &"a".repeat(33)] {
            let e = name(bad).unwrap_err();
            assert_eq!(e.key(), "traffic.classes.0.name");
            assert_eq!(
                e.to_string(),
                format!(
                    "traffic.classes.0.name = \"{bad}\": must be at most 32 letters, digits, '-' and '_'"
                )
            );
        }
    }

    #[test]
    fn a_long_capture_path_shows_its_last_48_characters() {
        let long = format!("/{}/trace.pcap", "d".repeat(100));
        assert_eq!(long.len(), 112);
        let e = build(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(&long))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "traffic.pcap = \"…{}\" (112 characters): no such file",
                &long[112 - 48..]
            )
        );
        // 64 characters are shown whole
        let whole = format!("/{}/trace.pcap", "d".repeat(52));
        assert_eq!(whole.len(), 64);
        let e = build(&[("traffic.kind", s("pcap")), ("traffic.pcap", s(&whole))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("traffic.pcap = \"{whole}\": no such file")
        );
    }

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
    fn an_adapt_lower_bound_may_equal_its_upper_bound_but_not_exceed_it() {
        let sc = build(&[
            ("adapt.budget_min", Value::Int(300)),
            ("adapt.buflow", Value::Float(0.5)),
            ("adapt.aic_min_rate", Value::Int(100_000)),
        ])
        .unwrap();
        assert_eq!((sc.adapt.budget_min, sc.adapt.budget_max), (300, 300));
        assert_eq!((sc.adapt.buflow, sc.adapt.bufupper), (0.5, 0.5));
        assert_eq!(
            (sc.adapt.aic_min_rate, sc.adapt.aic_max_rate),
            (100_000.0, 100_000.0)
        );
        for (key, value, message) in [
            (
                "adapt.budget_min",
                Value::Int(301),
                "adapt.budget_min = 301: must not exceed adapt.budget_max (300)",
            ),
            (
                "adapt.buflow",
                Value::Float(0.75),
                "adapt.buflow = 0.75: must not exceed adapt.bufupper (0.5)",
            ),
            (
                "adapt.aic_min_rate",
                Value::Int(100_001),
                "adapt.aic_min_rate = 100001.0: must not exceed adapt.aic_max_rate (100000.0)",
            ),
        ] {
            let e = build(&[(key, value)]).unwrap_err();
            assert_eq!(e.key(), key);
            assert_eq!(e.to_string(), message);
        }
    }

    #[test]
    fn every_scheme_is_built_from_its_name_and_named_by_it() {
        for name in crate::params::SCHEMES {
            let sc = build(&[("scheme", s(name))]).unwrap();
            assert_eq!(sc.scheme.name(), *name);
        }
        assert_eq!(build(&[]).unwrap().scheme.name(), "napi");
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

    #[test]
    fn a_size_table_whose_weights_are_all_0_is_refused() {
        let e = build(&[("traffic.sizes", s("64:0, 128:0"))]).unwrap_err();
        assert_eq!(e.key(), "traffic.sizes");
        assert_eq!(
            e.to_string(),
            "traffic.sizes = \"64:0, 128:0\": the table needs at least one size with a positive weight"
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
    fn adapt_steps_on_the_utilisation_trend_unless_micro_is_none() {
        assert!(build(&[]).unwrap().adapt.micro);
        assert!(!build(&[("adapt.micro", s("none"))]).unwrap().adapt.micro);
    }

    #[test]
    fn netdev_budget_usecs_may_be_exactly_the_two_jiffy_minimum() {
        let budget = |hz: i128, us: i128| {
            build(&[
                ("kernel.hz", Value::Int(hz)),
                ("kernel.netdev_budget_usecs", Value::Int(us)),
            ])
        };
        assert_eq!(budget(1000, 2000).unwrap().kernel.budget_jiffies, 2);
        assert_eq!(budget(250, 8000).unwrap().kernel.budget_jiffies, 2);
        let e = budget(1000, 1999).unwrap_err();
        assert_eq!(e.key(), "kernel.netdev_budget_usecs");
        assert!(e.to_string().contains("2000 us"), "{e}");
    }

    #[test]
    fn the_default_time_slice_is_eevdf_s_base_slice_for_the_cores() {
        // 0.75 ms x (1 + ilog2(min(cores, 8))), resolved into the params
        for (cores, us) in [
            (1, 750.0),
            (2, 1500.0),
            (4, 2250.0),
            (8, 3000.0),
            (16, 3000.0),
        ] {
            let sc = build(&[("host.cores", Value::Int(cores))]).unwrap();
            assert_eq!(sc.kernel.sched_slice, SimDuration::from_us(us), "{cores}");
            assert_eq!(sc.params.f64("kernel.sched_slice_us"), us, "{cores}");
        }
        let sc = build(&[
            ("host.cores", Value::Int(4)),
            ("kernel.sched_slice_us", Value::Int(100)),
        ])
        .unwrap();
        assert_eq!(sc.kernel.sched_slice, SimDuration::from_us(100.0));
    }

    #[test]
    fn hybrid_switches_at_95_percent_of_the_cliff_point_unless_given() {
        let platform = [
            ("scheme", s("hybrid")),
            ("platform.irq_ns", Value::Int(1000)),
            ("platform.proto_ns", Value::Int(2000)),
            ("platform.proto_ns_per_byte", Value::Int(1)),
            ("traffic.size_bytes", Value::Int(1000)),
        ];
        let sc = build(&platform).unwrap();
        // the cliff point of these costs is 263762.6 packets/s (the_cliff_point_is_salah_eq_13)
        let want = 0.95 * cliff_point_pps(&sc.platform, 1000.0);
        assert!((want - 250_574.5).abs() < 0.1, "{want}");
        assert_eq!(sc.hybrid.switch_pps, want);
        assert_eq!(sc.params.f64("hybrid.switch_pps"), want);
        let mut given = platform.to_vec();
        given.push(("hybrid.switch_pps", Value::Float(2e5)));
        assert_eq!(build(&given).unwrap().hybrid.switch_pps, 2e5);
    }

    #[test]
    fn an_app_s_cost_is_drawn_from_its_distribution_and_charged_per_byte_in_ps() {
        let app = |more: &[(&str, Value)]| {
            let mut pairs = vec![("app.0.core", Value::Int(0))];
            pairs.extend_from_slice(more);
            build(&pairs).unwrap().apps[0].clone()
        };
        // the default: 1 us, exponential
        let a = app(&[]);
        assert_eq!(a.cost.mean, SimDuration(1_000_000));
        assert_eq!(a.cost.dist, Dist::Exponential);
        assert_eq!(a.cost_ps_per_byte, 0.0);
        let a = app(&[
            ("app.0.cost_dist", s("deterministic")),
            ("app.0.cost_ns", Value::Int(2000)),
            ("app.0.cost_ns_per_byte", Value::Float(2.5)),
        ]);
        assert_eq!(a.cost.mean, SimDuration(2_000_000));
        assert_eq!(a.cost.dist, Dist::Deterministic);
        assert_eq!(a.cost_ps_per_byte, 2500.0);
        let a = app(&[("app.0.cost_dist", s("exponential"))]);
        assert_eq!(a.cost.dist, Dist::Exponential);
    }

    #[test]
    fn a_replay_may_measure_an_hour_and_no_more() {
        use crate::traffic::capture::tests::{file, pcap, three};
        // two packets 1 s apart: a pass lasts 2 s (the span and one mean gap)
        let f = three().swap_remove(0);
        let two = [f.clone(), (f.0 + 1_000_000_000, f.1, f.2)];
        let path = file("hour.pcap", &pcap(&two, false, false, 1));
        let replay = |loops: i128| {
            build(&[
                ("traffic.kind", s("pcap")),
                ("traffic.pcap", s(path.to_str().unwrap())),
                ("run.warmup_ms", Value::Int(0)),
                ("traffic.loop", Value::Int(loops)),
            ])
        };
        // 1800 passes: 3600 s, the longest run.duration_ms allows
        let sc = replay(1800).unwrap();
        assert_eq!(sc.run.end.ps(), 3_600_000_000_000_000);
        assert_eq!(sc.params.f64("run.duration_ms"), 3.6e6);
        let e = replay(1801).unwrap_err();
        assert_eq!(e.key(), "traffic.pcap");
        assert!(
            e.to_string().contains(
                "its replay lasts 3602000 ms, longer than a run may measure (run.duration_ms ≤ 3600000)"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_replay_s_frame_sizes_are_weighted_by_their_packet_counts() {
        // three(): two 64-byte frames and one of 1004 bytes
        let (sc, _capture) = replayed("sizes.pcap", &[]).unwrap();
        assert_eq!(
            sc.traffic.sizes,
            SizeDist::Table {
                sizes: vec![64, 1004],
                cum: vec![2.0 / 3.0, 1.0],
            }
        );
        assert!((sc.traffic.sizes.mean() - (2.0 * 64.0 + 1004.0) / 3.0).abs() < 1e-9);
    }

    #[test]
    fn classes_without_shares_split_the_packets_equally() {
        let sc = build(&[
            ("traffic.classes.0.name", s("a")),
            ("traffic.classes.1.name", s("b")),
            ("traffic.classes.2.name", s("c")),
        ])
        .unwrap();
        let shares: Vec<f64> = sc.traffic.classes.iter().map(|c| c.share).collect();
        assert_eq!(shares, [1.0 / 3.0; 3]);
        let cum = &sc.traffic.class_cum;
        assert_eq!(cum.len(), 3);
        assert!((cum[0] - 1.0 / 3.0).abs() < 1e-12, "{cum:?}");
        assert!((cum[1] - 2.0 / 3.0).abs() < 1e-12, "{cum:?}");
        assert_eq!(cum[2], 1.0);
        // resolved, so that the result says the shares used
        assert_eq!(sc.params.f64("traffic.classes.1.share"), 1.0 / 3.0);
    }

    #[test]
    fn software_irq_coalescing_with_one_of_its_two_keys_is_a_warning_not_an_error() {
        let defer = ("kernel.napi_defer_hard_irqs", Value::Int(10));
        let gro = ("kernel.gro_flush_timeout_ns", Value::Int(20_000));
        // even on the ideal host: without the other key there is no timer interrupt
        for scheme in ["ideal", "napi"] {
            let sc = build(&[("scheme", s(scheme)), defer.clone()]).unwrap();
            let w: Vec<String> = sc.warnings.iter().map(|w| w.to_string()).collect();
            assert_eq!(
                w,
                [
                    "kernel.napi_defer_hard_irqs = 10: has no effect: it needs kernel.gro_flush_timeout_ns > 0, the timer that polls instead of the interrupt"
                ],
                "{scheme}"
            );
            assert_eq!(
                warned(&[("scheme", s(scheme)), gro.clone()]),
                ["kernel.gro_flush_timeout_ns"],
                "{scheme}"
            );
        }
        assert!(warned(&[defer, gro]).is_empty());
    }

    #[test]
    fn adapt_settings_without_a_controller_are_named() {
        let alpha = ("adapt.alpha", Value::Float(4.0));
        assert_eq!(warned(std::slice::from_ref(&alpha)), ["adapt.alpha"]);
        assert!(warned(&[("adapt.scheme", s("qapolling")), alpha]).is_empty());
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
    fn link_speeds_are_named_unless_forwarding_or_a_link_speed_policy_reads_them() {
        let nic = ("nic.link_gbps", Value::Int(25));
        let own = ("driver.link_gbps", Value::Int(40));
        let ixgbe = ("driver.moderation", s("ixgbe"));
        // static moderation reads neither
        assert_eq!(warned(std::slice::from_ref(&own)), ["driver.link_gbps"]);
        assert_eq!(warned(std::slice::from_ref(&nic)), ["nic.link_gbps"]);
        // ixgbe reads the NIC's speed, or its own if given one
        assert!(warned(&[ixgbe.clone(), nic.clone()]).is_empty());
        assert!(warned(&[ixgbe.clone(), own.clone()]).is_empty());
        assert_eq!(warned(&[ixgbe, nic.clone(), own]), ["nic.link_gbps"]);
        // forwarding transmits at the NIC's speed
        assert!(warned(&[("host.forward", Value::Bool(true)), nic]).is_empty());
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

    #[test]
    fn flow_popularity_and_the_rss_table_are_named_with_one_flow_or_one_queue() {
        let zipf = ("traffic.flow_zipf_s", Value::Float(1.1));
        assert_eq!(warned(std::slice::from_ref(&zipf)), ["traffic.flow_zipf_s"]);
        assert!(warned(&[("traffic.flows", Value::Int(4)), zipf]).is_empty());
        let rss = ("nic.rss_table_size", Value::Int(512));
        assert_eq!(warned(std::slice::from_ref(&rss)), ["nic.rss_table_size"]);
        assert!(warned(&[("nic.queues", Value::Int(2)), rss]).is_empty());
    }
}
