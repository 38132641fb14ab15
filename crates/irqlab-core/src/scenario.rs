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
//! | AF_XDP apps | `app.N.xsk_ring`, `need_wakeup`, `xsk_poll_core` | [`crate::xsk`] |
//!
//! What belongs to no single part stays here: the checks of settings that would turn the
//! scheme into another (`check_scheme_settings`) or that the scheme cannot place
//! (`check_placement`), and the warnings of the scheme's machinery (which parts a scheme runs
//! at all: `scheme_warnings`). The order of the calls is the order in which errors are found
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
pub use crate::nic::config::Device;
pub use crate::nic::{CauseMode, DriverConfig, NicConfig};
pub use crate::platform::{PlatformConfig, cliff_point_pps};
pub use crate::polling::{HybridConfig, PollConfig};
pub use crate::run::RunConfig;
pub use crate::scheme::Scheme;
pub use crate::sender::SenderConfig;
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
    /// The sending thread of a veth lab (`sender.*`).
    pub sender: SenderConfig,
    /// The AF_XDP apps' settings (`app.N.io = "xsk"`; `crate::xsk`).
    pub xsk: crate::xsk::XskApps,
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
        let nic = nic::configure(&mut p)?;
        let irq_suspend =
            crate::time::SimDuration::from_ns(p.f64(crate::busypoll::IRQ_SUSPEND_TIMEOUT_NS));
        let kernel = kernel::configure(&mut p, host.cores, nic.queues, irq_suspend)?;
        let sender = crate::sender::configure(&p, host.cores, nic.device)?;
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
        let napi_core = (nic.device == Device::Veth).then_some(if kernel.any_threaded() {
            kernel.napi[0].thread_core
        } else {
            sender.core
        });
        let topology = Topology::build(&p, &host, &nic, traffic.flows, hashes, napi_core)?;
        check_placement(&p, scheme, &host, &traffic, &topology)?;
        let xsk = crate::xsk::configure(&p, &ios, &busy, &topology, &host, nic.device, scheme)?;
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
        check_device(&p, scheme, &nic, &host, &qos)?;
        let threads = core_threads(&apps, &xsk, &sender);
        kernel::check_threaded(
            &p,
            &kernel,
            scheme.uses_poll_loop(),
            scheme == Scheme::Ideal,
            busy.any(),
            &threads,
        )?;
        let mut w = Warnings::new(&p, set);
        // echoes of resolved values are not settings of their own
        crate::polling::echo(&mut w, auto_switch_pps);
        moderation::echo(&mut w);
        pcap::echo(&mut w, traffic.replay.as_ref().map(|_| traffic.rate_pps));
        // the rules, from the device and the scheme's machinery to single keys
        let moderation_keys = [&moderation::keys()[..], &[moderation::FIRST_PACKET]].concat();
        nic::veth_warnings(&mut w, nic.device, &moderation_keys);
        crate::sender::warnings(&mut w, nic.device);
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
        crate::xsk::warnings(&mut w, &xsk, &busy);
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
            sender,
            xsk,
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

/// The threads a core has to run besides a NAPI thread: the apps', their XSK polling
/// threads' and the sending thread's, each with its core and what runs there (for the error
/// of threaded busy polling on that core, `kernel::check_threaded`).
fn core_threads(
    apps: &[crate::socket::config::AppConfig],
    xsk: &crate::xsk::XskApps,
    sender: &crate::sender::SenderConfig,
) -> Vec<(usize, String)> {
    let mut threads: Vec<(usize, String)> = apps
        .iter()
        .enumerate()
        .map(|(a, app)| {
            (
                app.core,
                format!("app {a} runs there (app.{a}.core = {})", app.core),
            )
        })
        .collect();
    for (a, x) in xsk.apps.iter().enumerate() {
        if let Some(c) = x.as_ref().and_then(|x| x.poll_core) {
            let what = format!("app {a}'s polling thread runs there (app.{a}.xsk_poll_core = {c})");
            threads.push((c, what));
        }
    }
    if sender.runs() {
        let c = sender.core;
        threads.push((
            c,
            format!("the sending thread runs there (sender.core = {c})"),
        ));
    }
    threads
}

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
        return Err(p.inconsistent(
            rr::CLIENTS,
            format!(
                "client {f}'s flow reaches no app, so its requests would never be answered; give it to an app (app.N.flows)"
            ),
        ));
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
        return Err(p.inconsistent(
            key,
            format!(
                "scheme \"{}\" runs Salah's polling loop, one queue vector per core; core {c} has {}",
                scheme.name(),
                topology.core_vectors[c].len()
            ),
        ));
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
    if scheme == Scheme::Ideal
        && let Some(key) = kernel::soft_coalescing_key(p)
    {
        return Err(p.inconsistent(
            &key,
            "scheme \"ideal\" has no interrupt cost, and software IRQ coalescing would add the NAPI timer's interrupts (platform.poll_timer_ns); use it with scheme \"napi\"",
        ));
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

/// A veth device (`nic.device = "veth"`): NAPI without an interrupt, one Rx ring, receiving
/// only (`drivers/net/veth.c`).
fn check_device(
    p: &Params,
    scheme: Scheme,
    nic: &NicConfig,
    host: &HostConfig,
    qos: &QosConfig,
) -> Result<(), Error> {
    if nic.device != Device::Veth {
        return Ok(());
    }
    let (key, reason) = if scheme != Scheme::Napi {
        (
            crate::scheme::KEY,
            "a veth device has no interrupt: its NAPI is scheduled by the transmit (veth_xmit); use scheme \"napi\"",
        )
    } else if host.forward {
        (
            crate::topology::FORWARD,
            "a veth device is modelled receiving only; forward with nic.device = \"hw\"",
        )
    } else if qos.rings > 1 {
        (
            crate::qos::config::STRATEGY,
            "a veth device has one Rx ring (its ptr_ring); ingress QoS needs nic.device = \"hw\"",
        )
    } else if TrafficKind::of(p)? == TrafficKind::Rr {
        (
            crate::traffic::config::KIND,
            "request/response traffic answers through a NIC's Tx ring; a veth device is modelled receiving only",
        )
    } else if let Some(key) = kernel::soft_coalescing_key(p) {
        return Err(p.inconsistent(
            &key,
            "a veth device has no interrupt to defer (software IRQ coalescing is for nic.device = \"hw\")",
        ));
    } else {
        return Ok(());
    };
    Err(p.inconsistent(key, reason))
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

/// What the tests of the parts build scenarios with.
#[cfg(test)]
pub(crate) mod test_support {
    use super::Scenario;
    use crate::error::Error;
    use crate::schema::Value;

    /// The policies that adapt to the load.
    pub const ADAPTIVE: &[&str] = &["ixgbe-legacy", "linear", "ixgbe", "i40e", "dim"];

    /// The scenario of `pairs`.
    pub fn build(pairs: &[(&str, Value)]) -> Result<Scenario, Error> {
        Scenario::from_pairs(pairs.iter().cloned())
    }

    /// The error of the scenario of `pairs`, which must be invalid.
    pub fn rejected(pairs: &[(&str, Value)]) -> Error {
        build(pairs).expect_err("an invalid scenario")
    }

    /// A string value.
    pub fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    /// The keys of the warnings of the scenario of `pairs`.
    pub fn warned(pairs: &[(&str, Value)]) -> Vec<String> {
        let sc = build(pairs).unwrap();
        sc.warnings.iter().map(|w| w.key.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

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
            ("sender", crate::sender::KEYS.to_vec()),
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
                crate::xsk::APP_XSK_RING,
                crate::xsk::APP_NEED_WAKEUP,
                crate::xsk::APP_XSK_POLL_CORE,
            ]
        );
    }

    #[test]
    fn count_coalescing_must_count() {
        let e = rejected(&[
            ("scheme", s("coalesce-count")),
            ("nic.rx_frames", Value::Int(0)),
        ]);
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
            let e = rejected(&[("scheme", s(scheme)), ("driver.moderation", s("dim"))]);
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
        let e = rejected(&pairs);
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
        let e = rejected(&[
            ("scheme", s("ideal")),
            ("kernel.napi_defer_hard_irqs", Value::Int(10)),
            ("kernel.gro_flush_timeout_ns", Value::Int(20_000)),
        ]);
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
    fn flow_popularity_and_the_rss_table_are_named_with_one_flow_or_one_queue() {
        let zipf = ("traffic.flow_zipf_s", Value::Float(1.1));
        assert_eq!(warned(std::slice::from_ref(&zipf)), ["traffic.flow_zipf_s"]);
        assert!(warned(&[("traffic.flows", Value::Int(4)), zipf]).is_empty());
        let rss = ("nic.rss_table_size", Value::Int(512));
        assert_eq!(warned(std::slice::from_ref(&rss)), ["nic.rss_table_size"]);
        assert!(warned(&[("nic.queues", Value::Int(2)), rss]).is_empty());
    }
}
