//! A built scenario: validated [`Params`] turned into typed, integer-time configuration.
//!
//! Build, validate, then run: every error surfaces here, naming its key, before time zero.

use std::collections::BTreeSet;
use std::sync::Arc;

pub use crate::dist::{Cost, Dist};
use crate::error::Error;
pub use crate::moderation::Moderation;
pub use crate::nic::{CauseMode, DriverConfig, NicConfig};
use crate::params::{Params, Value, field_key};
pub use crate::platform::{PlatformConfig, cliff_point_pps};
pub use crate::scheme::Scheme;
use crate::time::{PS_PER_MS, PS_PER_S, SimDuration, SimTime};
pub use crate::topology::Topology;
use crate::traffic::replay::{ReplayConfig, Scan};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrafficKind {
    Poisson,
    Cbr,
    ParetoOnOff,
    /// A capture replayed (`traffic::replay`).
    Pcap,
    /// Requests answered by the apps (`traffic::rr`).
    Rr,
}

/// Frame sizes: one size, or an empirical table sampled by its cumulative weights.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    Fixed(u32),
    Table {
        sizes: Vec<u32>,
        /// Cumulative probabilities, the last exactly 1.
        cum: Vec<f64>,
    },
}

impl SizeDist {
    /// Mean frame size, bytes.
    pub fn mean(&self) -> f64 {
        self.pmf().iter().map(|(s, p)| *s as f64 * p).sum()
    }

    /// `(size, probability)` pairs.
    pub fn pmf(&self) -> Vec<(u32, f64)> {
        match self {
            SizeDist::Fixed(s) => vec![(*s, 1.0)],
            SizeDist::Table { sizes, cum } => {
                let mut prev = 0.0;
                sizes
                    .iter()
                    .zip(cum)
                    .map(|(s, c)| {
                        let p = c - prev;
                        prev = *c;
                        (*s, p)
                    })
                    .collect()
            }
        }
    }
}

/// The built-in frame-size tables (`bytes:weight` pairs; see docs/traffic.md for sources).
pub const SIZE_TABLES: &[(&str, &str)] = &[
    (
        "salah2007",
        "64:36, 90:3, 128:4, 256:3, 300:2, 400:2, 512:2, 570:11, 594:12, 800:1, 1000:1.5, 1300:2, 1518:20.5",
    ),
    ("imix", "64:7, 594:4, 1518:1"),
];

fn parse_sizes(p: &Params) -> Result<SizeDist, Error> {
    let text = p.str("traffic.sizes");
    if text == "fixed" {
        return Ok(SizeDist::Fixed(p.u64("traffic.size_bytes") as u32));
    }
    let table = SIZE_TABLES
        .iter()
        .find(|(name, _)| *name == text)
        .map_or(text, |(_, t)| t);
    let bad = |reason: String| Error::OutOfRange {
        key: "traffic.sizes".into(),
        value: Value::Str(text.to_string()).to_string(),
        allowed: reason,
    };
    let mut sizes = Vec::new();
    let mut weights = Vec::new();
    for item in table.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let shown = Value::Str(item.to_string());
        let (b, w) = item.split_once(':').ok_or_else(|| {
            let names: Vec<&str> = SIZE_TABLES.iter().map(|(n, _)| *n).collect();
            bad(format!(
                "expected \"fixed\", a table name ({}) or \"bytes:weight, ...\" pairs; {shown} has no ':'",
                names.join(", ")
            ))
        })?;
        let b: u32 = b
            .trim()
            .parse()
            .ok()
            .filter(|b| (1..=65_535).contains(b))
            .ok_or_else(|| {
                bad(format!(
                    "{shown}: the size must be an integer in 1 … 65535 bytes"
                ))
            })?;
        let w: f64 = w
            .trim()
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| bad(format!("{shown}: the weight must be a number >= 0")))?;
        sizes.push(b);
        weights.push(w);
    }
    let total: f64 = weights.iter().sum();
    if sizes.is_empty() || total <= 0.0 {
        return Err(bad(
            "the table needs at least one size with a positive weight".into(),
        ));
    }
    let mut acc = 0.0;
    let mut cum: Vec<f64> = weights
        .iter()
        .map(|w| {
            acc += w;
            acc / total
        })
        .collect();
    *cum.last_mut().expect("non-empty") = 1.0;
    Ok(SizeDist::Table { sizes, cum })
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    pub seed: u64,
    pub replication: u64,
    /// Start of the measured window.
    pub warmup: SimTime,
    /// End of the run (exclusive).
    pub end: SimTime,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrafficConfig {
    pub kind: TrafficKind,
    pub rate_pps: f64,
    pub sizes: SizeDist,
    /// Pareto ON/OFF parameters (for `ParetoOnOff`).
    pub onoff: Option<OnOffConfig>,
    /// The capture and how it is replayed (for `Pcap`).
    pub replay: Option<ReplayConfig>,
    /// Number of flows.
    pub flows: usize,
    /// Cumulative flow popularity (Zipf); `None`: uniform.
    pub flow_cum: Option<Arc<[f64]>>,
    /// The traffic classes, at least one.
    pub classes: Vec<ClassConfig>,
    /// Cumulative class shares, the last exactly 1.
    pub class_cum: Vec<f64>,
}

/// A traffic class: its own Rx ring in every vector.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassConfig {
    pub name: String,
    pub share: f64,
}

/// The host's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct HostConfig {
    pub cores: usize,
    /// Packets no app reads are transmitted (a router) rather than ending in the stack.
    pub forward: bool,
}

/// Socket defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketConfig {
    pub rcvbuf_bytes: u64,
    /// Truesize charged per packet; 0: [`truesize_of_frame`].
    pub truesize_bytes: u64,
    /// The largest frame exceeds the standard MTU: the driver uses 3 KiB buffers.
    pub jumbo: bool,
}

impl SocketConfig {
    /// The truesize a frame of `size_bytes` is charged in a socket.
    #[inline]
    pub fn truesize(&self, size_bytes: u32) -> u64 {
        if self.truesize_bytes > 0 {
            self.truesize_bytes
        } else {
            truesize_of_frame(size_bytes, self.jumbo)
        }
    }
}

/// The largest frame of the standard 1500-byte MTU (with its Ethernet header and FCS).
pub const STANDARD_MAX_FRAME: u32 = 1518;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64.
pub const SK_BUFF_BYTES: u64 = 256;

/// The skb truesize of a received frame as ixgbe builds it (`build_skb`, 4 KiB pages): at the
/// standard MTU every frame sits in a 2 KiB half page, `2048 + 256` = 2304 bytes whatever its
/// length; with a larger MTU (`jumbo`) the driver uses 3 KiB buffers in 4 KiB halves of 8 KiB
/// pages: `4096 + 256` for the first 3 KiB of a frame, and 4096 for each further buffer.
pub fn truesize_of_frame(size_bytes: u32, jumbo: bool) -> u64 {
    if !jumbo {
        return 2048 + SK_BUFF_BYTES;
    }
    u64::from(size_bytes).div_ceil(3072).max(1) * 4096 + SK_BUFF_BYTES
}

/// An application: a thread on a core reading its socket with blocking `recv`.
#[derive(Clone, Debug, PartialEq)]
pub struct AppConfig {
    pub core: usize,
    /// Per packet: fixed part and per-byte part (ps per frame byte).
    pub cost: Cost,
    pub cost_ps_per_byte: f64,
    /// Its socket's receive buffer, bytes.
    pub rcvbuf_bytes: u64,
    /// `recv` or `epoll_wait` loop.
    pub io: crate::busypoll::Io,
}

/// Aggregated Pareto ON/OFF sources (Taqqu, Willinger & Sherman 1997; Salah §5.1).
#[derive(Clone, Debug, PartialEq)]
pub struct OnOffConfig {
    pub sources: usize,
    pub alpha_on: f64,
    pub alpha_off: f64,
    /// Pareto locations (shortest periods), ps.
    pub b_on_ps: f64,
    pub b_off_ps: f64,
    /// Wire time per byte at the line rate, ps.
    pub ps_per_byte: f64,
}

/// Salah's polling parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PollConfig {
    /// T_poll.
    pub period: SimDuration,
    /// Q.
    pub quota: u64,
}

/// The hybrid scheme's switch.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridConfig {
    /// Throughput at which disable-enable hands over to polling (resolved), packets/s.
    pub switch_pps: f64,
    pub window: SimDuration,
    pub hysteresis: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KernelConfig {
    pub napi_weight: u64,
    pub netdev_budget: i64,
    /// Length of one jiffy.
    pub jiffy: SimDuration,
    /// `usecs_to_jiffies(netdev_budget_usecs)`.
    pub budget_jiffies: u64,
    pub max_softirq_restart: u64,
    /// `msecs_to_jiffies(MAX_SOFTIRQ_TIME)`.
    pub max_softirq_jiffies: u64,
    /// `napi_defer_hard_irqs`.
    pub defer_hard_irqs: u64,
    /// `gro_flush_timeout`.
    pub gro_flush_timeout: SimDuration,
    /// Time slice of the threads sharing a core (resolved).
    pub sched_slice: SimDuration,
    /// `kernel.ksoftirqd_policy = "below-apps"`: a waiting app takes the core from ksoftirqd
    /// after each of its `handle_softirqs` runs (Linux 2.6.18, ksoftirqd at nice 19).
    pub ksoftirqd_below_apps: bool,
    /// `kernel.net_rx_action = "2.6.18"`: a poll cleans at most what is left of the
    /// `net_rx_action` budget, not its whole weight, and a NAPI that used it is polled again
    /// in the same pass.
    pub poll_budget_left: bool,
    /// `kernel.timer_tick`: a tick every jiffy whose exit runs pending softirqs inline.
    pub timer_tick: bool,
}

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
    pub adapt: crate::adapt::AdaptConfig,
    /// Ingress QoS: the classes' rings and vectors, and the ring discipline.
    pub qos: crate::qos::QosConfig,
    /// disable-enable and hybrid: the ISR processes the first packet of a busy period.
    pub first_packet_in_isr: bool,
    /// Busy polling, preferred busy polling and IRQ suspension (`busypoll`).
    pub busy: crate::busypoll::BusyConfig,
    /// The request/response workload (`traffic.kind = "rr"`).
    pub rr: Option<crate::busypoll::RrConfig>,
    /// The validated key/value pairs it was built from (echoed into the result).
    pub params: Params,
    /// Settings that have no effect in this scenario ([`Warning`]); the run is valid.
    pub warnings: Vec<Warning>,
}

/// A deterministic cost of `ns` nanoseconds.
fn cost_of(ns: f64) -> Cost {
    let mean = SimDuration::from_ns(ns);
    Cost {
        mean,
        mean_ps: mean.ps() as f64,
        dist: Dist::Deterministic,
    }
}

/// A softirq deadline no run reaches (`kernel.softirq_time_limit = false`), with room to add.
const NO_LIMIT_JIFFIES: u64 = 1 << 62;

/// `ceil(units * hz / per_second)`: the kernel's rounding of a time to jiffies.
fn to_jiffies(value: f64, per_second: f64, hz: u64) -> u64 {
    (value * hz as f64 / per_second).ceil().max(0.0) as u64
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

    /// Builds a scenario from validated params, checking the constraints between keys.
    pub fn build(mut p: Params) -> Result<Scenario, Error> {
        let scheme = Scheme::of(&p)?;
        // the keys set to a value of their own, before the scenario resolves automatic ones
        let set = set_keys(&p);
        let kind = match p.str("traffic.kind") {
            "cbr" => TrafficKind::Cbr,
            "pareto-onoff" => TrafficKind::ParetoOnOff,
            "pcap" => TrafficKind::Pcap,
            "rr" => TrafficKind::Rr,
            _ => TrafficKind::Poisson,
        };
        let replay = match kind {
            TrafficKind::Pcap => Some(configure_replay(&p)?),
            _ => None,
        };
        let warmup = SimTime::ZERO + SimDuration::from_ms(p.f64("run.warmup_ms"));
        let end = match &replay {
            Some(r) if !p.given("run.duration_ms") => replay_end(&mut p, r, warmup)?,
            _ => warmup + SimDuration::from_ms(p.f64("run.duration_ms")),
        };
        if end <= warmup {
            return Err(Error::OutOfRange {
                key: "run.duration_ms".into(),
                value: p.get("run.duration_ms").to_string(),
                allowed: "must be at least one picosecond".into(),
            });
        }
        let mut rate_pps = p.f64("traffic.rate_pps");
        let sizes = match &replay {
            Some(r) => {
                // the capture's own rate (resolved below, once the warnings have read what
                // was given)
                if let Some(rate) = r.rate_pps() {
                    rate_pps = rate.clamp(1e-3, 1e9);
                }
                sizes_of(&r.scan)
            }
            None => parse_sizes(&p)?,
        };
        let onoff = if kind == TrafficKind::ParetoOnOff {
            Some(crate::traffic::onoff::configure(&p, rate_pps, &sizes)?)
        } else {
            None
        };
        // traffic.rate_pps ≤ 1e9 keeps a CBR spacing at 1000 ps or more
        let (flows, flow_cum) = match &replay {
            Some(r) => (r.scan.flows.len(), None),
            None if kind == TrafficKind::Rr => (p.u64("rr.clients") as usize, None),
            None => {
                let flows = p.u64("traffic.flows") as usize;
                let zipf_s = p.f64("traffic.flow_zipf_s");
                let cum = (zipf_s > 0.0 && flows > 1).then(|| Arc::from(zipf_cum(flows, zipf_s)));
                (flows, cum)
            }
        };
        let strategy = crate::qos::prepare(&mut p)?;
        if scheme.uses_poll_loop() && strategy != crate::qos::Strategy::Off {
            return Err(Error::Inconsistent {
                key: "qos.strategy".into(),
                value: p.get("qos.strategy").to_string(),
                reason: format!(
                    "scheme \"{}\" runs Salah's polling loop, one ring per vector; QoS needs a NAPI scheme (napi, irq, coalesce-count, coalesce-time, ideal)",
                    scheme.name()
                ),
            });
        }
        let (classes, class_cum) = parse_classes(&mut p)?;
        let hz = p.u64("kernel.hz");
        let jiffy = SimDuration(PS_PER_S / hz);
        let platform = crate::platform::configure(&p)?;
        let host = HostConfig {
            cores: p.u64("host.cores") as usize,
            forward: p.bool("host.forward"),
        };
        let nic = crate::nic::config::configure(&p)?;
        let min_budget_us = 2_000_000 / hz;
        let budget_us = match p.u64("kernel.netdev_budget_usecs") {
            0 => min_budget_us,
            us if us < min_budget_us => {
                return Err(Error::Inconsistent {
                    key: "kernel.netdev_budget_usecs".into(),
                    value: us.to_string(),
                    reason: format!(
                        "below the kernel's minimum of 2 jiffies ({min_budget_us} us at kernel.hz = {hz}); use 0 for the default"
                    ),
                });
            }
            us => us,
        };
        let slice_us = match p.f64("kernel.sched_slice_us") {
            0.0 => {
                // EEVDF: sysctl_sched_base_slice = 0.75 ms x (1 + ilog2(min(cpus, 8)))
                let us = 750.0 * f64::from(1 + host.cores.min(8).ilog2());
                p.set("kernel.sched_slice_us", Value::Float(us));
                us
            }
            us => us,
        };
        // no time limit: a deadline no run reaches
        let limits = p.bool("kernel.softirq_time_limit");
        let kernel = KernelConfig {
            napi_weight: p.u64("kernel.napi_weight"),
            netdev_budget: p.u64("kernel.netdev_budget") as i64,
            jiffy,
            budget_jiffies: if limits {
                to_jiffies(budget_us as f64, 1e6, hz)
            } else {
                NO_LIMIT_JIFFIES
            },
            max_softirq_restart: p.u64("kernel.max_softirq_restart"),
            max_softirq_jiffies: if limits {
                to_jiffies(p.f64("kernel.max_softirq_time_ms"), 1e3, hz)
            } else {
                NO_LIMIT_JIFFIES
            },
            ksoftirqd_below_apps: p.str("kernel.ksoftirqd_policy") == "below-apps",
            poll_budget_left: p.str("kernel.net_rx_action") == "2.6.18",
            timer_tick: p.bool("kernel.timer_tick"),
            defer_hard_irqs: p.u64("kernel.napi_defer_hard_irqs"),
            gro_flush_timeout: SimDuration::from_ns(p.f64("kernel.gro_flush_timeout_ns")),
            sched_slice: SimDuration::from_us(slice_us),
        };
        let moderation = crate::moderation::config::configure(&mut p, nic.link_gbps)?;
        let adapt = crate::adapt::config::configure(&p, scheme, &moderation)?;
        let driver = crate::nic::config::configure_driver(&p)?;
        let poll = PollConfig {
            period: SimDuration::from_us(p.f64("poll.period_us")),
            quota: p.u64("poll.quota"),
        };
        if poll.period.is_zero() {
            return Err(Error::OutOfRange {
                key: "poll.period_us".into(),
                value: p.get("poll.period_us").to_string(),
                allowed: "must be at least one picosecond".into(),
            });
        }
        // free protocol processing has no cliff: the largest rate the key allows
        let auto_switch_pps = (0.95 * cliff_point_pps(&platform, sizes.mean())).min(1e9);
        let switch_pps = match p.f64("hybrid.switch_pps") {
            0.0 => {
                // resolved, so that the result says which switching point was used
                p.set("hybrid.switch_pps", Value::Float(auto_switch_pps));
                auto_switch_pps
            }
            x => x,
        };
        let hybrid = HybridConfig {
            switch_pps,
            window: SimDuration::from_us(p.f64("hybrid.window_us")),
            hysteresis: p.f64("hybrid.hysteresis"),
        };
        if hybrid.window.is_zero() {
            return Err(Error::OutOfRange {
                key: "hybrid.window_us".into(),
                value: p.get("hybrid.window_us").to_string(),
                allowed: "must be at least one picosecond".into(),
            });
        }
        let largest = sizes.pmf().iter().map(|(s, _)| *s).max().unwrap_or(1);
        let socket = SocketConfig {
            rcvbuf_bytes: p.u64("socket.rcvbuf_bytes"),
            truesize_bytes: p.u64("socket.truesize_bytes"),
            jumbo: largest > STANDARD_MAX_FRAME,
        };
        let mut apps = Vec::with_capacity(p.entries("app"));
        for i in 0..p.entries("app") {
            let key = |f: &str| field_key("app", i, f);
            let dist = match p.str(&key("cost_dist")) {
                "exponential" => Dist::Exponential,
                _ => Dist::Deterministic,
            };
            let rcvbuf_bytes = match p.u64(&key("rcvbuf_bytes")) {
                0 => socket.rcvbuf_bytes,
                b => b,
            };
            // a packet must fit an empty socket
            let need = socket.truesize(largest);
            if rcvbuf_bytes < need {
                let k = if p.u64(&key("rcvbuf_bytes")) == 0 {
                    "socket.rcvbuf_bytes".to_string()
                } else {
                    key("rcvbuf_bytes")
                };
                return Err(Error::Inconsistent {
                    value: p.get(&k).to_string(),
                    key: k,
                    reason: format!(
                        "smaller than one packet: a {largest}-byte frame is charged {need} bytes of truesize"
                    ),
                });
            }
            apps.push(AppConfig {
                core: p.u64(&key("core")) as usize,
                cost: Cost {
                    dist,
                    ..cost_of(p.f64(&key("cost_ns")))
                },
                cost_ps_per_byte: p.f64(&key("cost_ns_per_byte")) * 1000.0,
                rcvbuf_bytes,
                io: match p.str(&key("io")) {
                    "epoll" => crate::busypoll::Io::Epoll,
                    _ => crate::busypoll::Io::Recv,
                },
            });
        }
        let ios: Vec<crate::busypoll::Io> = apps.iter().map(|a| a.io).collect();
        let busy = crate::busypoll::configure(&p, &ios)?;
        let rr = (kind == TrafficKind::Rr).then(|| crate::busypoll::configure_rr(&p));
        let flow_hashes = replay.as_ref().map(|r| &r.scan.flows.hash[..]);
        let topology = Topology::build(&p, &host, &nic, flows, flow_hashes)?;
        if kind == TrafficKind::Rr
            && let Some(f) = (0..flows as u32).find(|&f| topology.app_of(f).is_none())
        {
            return Err(Error::Inconsistent {
                key: "rr.clients".into(),
                value: p.get("rr.clients").to_string(),
                reason: format!(
                    "client {f}'s flow reaches no app, so its requests would never be answered; give it to an app (app.N.flows)"
                ),
            });
        }
        if scheme.uses_poll_loop() {
            if let Some(c) = topology.core_vectors.iter().position(|v| v.len() > 1) {
                let key = if p.u64_list("nic.irq_affinity").is_empty() {
                    "nic.queues"
                } else {
                    "nic.irq_affinity"
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
                    key: "host.forward".into(),
                    value: "true".into(),
                    reason: format!(
                        "scheme \"{}\" runs Salah's polling loop, which never cleans a Tx ring; forward with a NAPI scheme (napi, irq, coalesce-count, coalesce-time, ideal)",
                        scheme.name()
                    ),
                });
            }
        }
        if host.forward && nic.tx_ring_descriptors == 0 {
            return Err(Error::Inconsistent {
                key: "nic.tx_ring_descriptors".into(),
                value: "0".into(),
                reason: "host.forward = true needs a Tx ring on each vector".into(),
            });
        }
        let qos = crate::qos::configure(
            &p,
            strategy,
            classes.len(),
            kernel.napi_weight,
            &topology.vector_core,
        )?;
        check_scheme_settings(&p, scheme, classes.len())?;
        let mut warnings = Effect {
            p: &p,
            scheme,
            set,
            auto_switch_pps,
            replay_rate_pps: replay.as_ref().map(|_| rate_pps),
        }
        .warnings();
        crate::busypoll::warnings(&p, &busy, &ios, &mut warnings);
        if replay.is_some() {
            // so that the result says the rate replayed
            p.set("traffic.rate_pps", Value::Float(rate_pps));
        }
        Ok(Scenario {
            scheme,
            run: RunConfig {
                seed: p.u64("run.seed"),
                replication: p.u64("run.replication"),
                warmup,
                end,
            },
            host,
            traffic: TrafficConfig {
                kind,
                rate_pps,
                sizes,
                onoff,
                replay,
                flows,
                flow_cum,
                classes,
                class_cum,
            },
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
            first_packet_in_isr: p.str("driver.first_packet") == "isr",
            busy,
            rr,
            params: p,
            warnings,
        })
    }
}

/// The replay of `traffic.pcap`: its capture read once (every error a reader finds surfaces
/// here, naming the key), and the settings checked against it.
fn configure_replay(p: &Params) -> Result<ReplayConfig, Error> {
    let path = p.str("traffic.pcap");
    let bad = |reason: String| Error::Inconsistent {
        key: "traffic.pcap".into(),
        value: shown_path(path),
        reason,
    };
    if path.is_empty() {
        return Err(bad(
            "traffic.kind = \"pcap\" replays a capture: give its file".into(),
        ));
    }
    // read now and again during the run: a pipe would be empty the second time
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(bad(
            "is not a regular file (a pipe or a device): a replay reads its capture twice, so save it to a file first".into(),
        ));
    }
    let scan = Scan::cached(std::path::Path::new(path)).map_err(|e| bad(e.0))?;
    let loops = p.u64("traffic.loop");
    if scan.period_ps() == 0 && loops != 1 {
        return Err(Error::Inconsistent {
            key: "traffic.loop".into(),
            value: p.get("traffic.loop").to_string(),
            reason: format!(
                "the capture has no duration to repeat ({}), so it can be played once only",
                no_duration(&scan)
            ),
        });
    }
    Ok(ReplayConfig {
        path: path.into(),
        scan,
        speedup: p.f64("traffic.speedup"),
        loops,
    })
}

/// A path as an error shows it: quoted, and when long its end (the file's name) rather than
/// its beginning.
fn shown_path(path: &str) -> String {
    const SHOWN: usize = 64;
    let n = path.chars().count();
    if n <= SHOWN {
        return Value::Str(path.into()).to_string();
    }
    let tail: String = path.chars().skip(n - (SHOWN - 16)).collect();
    format!("\"…{}\" ({n} characters)", tail.escape_debug())
}

/// Why a capture has no duration.
fn no_duration(scan: &Scan) -> String {
    if scan.packets == 1 {
        "it holds one packet".into()
    } else {
        format!("its {} packets have one timestamp", scan.packets)
    }
}

/// The end of a replay's run when `run.duration_ms` is not given: the end of the replay (its
/// passes, sped up), measured after the warm-up. The duration is resolved, so that the result
/// says it and re-running the result gives the same run.
fn replay_end(p: &mut Params, r: &ReplayConfig, warmup: SimTime) -> Result<SimTime, Error> {
    let why_not = |reason: String| Error::Inconsistent {
        key: "traffic.pcap".into(),
        value: shown_path(p.str("traffic.pcap")),
        reason,
    };
    if r.scan.period_ps() == 0 {
        return Err(why_not(format!(
            "the capture has no duration of its own ({}): set run.duration_ms",
            no_duration(&r.scan)
        )));
    }
    let Some(length) = r.length_ps() else {
        return Err(Error::Inconsistent {
            key: "traffic.loop".into(),
            value: "0".into(),
            reason: "repeats the capture until the run ends: set run.duration_ms".into(),
        });
    };
    let ms = |ps: u64| ps as f64 / PS_PER_MS as f64;
    if length <= warmup.ps() {
        return Err(Error::Inconsistent {
            key: "run.warmup_ms".into(),
            value: p.get("run.warmup_ms").to_string(),
            reason: format!(
                "the replay of traffic.pcap lasts {} ms, and the run measures what follows the warm-up: set run.warmup_ms below it (0 measures the whole replay), or run.duration_ms",
                ms(length)
            ),
        });
    }
    let measured = length - warmup.ps();
    let max_ms = crate::params::spec("run.duration_ms")
        .map(|s| match s.kind {
            crate::params::Kind::Float { max, .. } => max,
            _ => f64::INFINITY,
        })
        .unwrap_or(f64::INFINITY);
    if ms(measured) > max_ms {
        return Err(why_not(format!(
            "its replay lasts {} ms, longer than a run may measure (run.duration_ms ≤ {max_ms}): set run.duration_ms to replay its beginning, or traffic.speedup",
            ms(measured)
        )));
    }
    // The float of milliseconds converts back to exactly these picoseconds: below the
    // 3.6e15 ps a run may measure, x < 2^22, so x · 1e9 is within 0.23 ps of `measured`.
    let x = ms(measured);
    debug_assert_eq!(SimDuration::from_ms(x).ps(), measured);
    p.set("run.duration_ms", Value::Float(x));
    Ok(warmup + SimDuration::from_ms(x))
}

/// A capture's frame sizes as a size table.
fn sizes_of(scan: &Scan) -> SizeDist {
    if let [(size, _)] = scan.sizes[..] {
        return SizeDist::Fixed(size);
    }
    let mut acc = 0u64;
    let mut cum: Vec<f64> = scan
        .sizes
        .iter()
        .map(|(_, n)| {
            acc += n;
            acc as f64 / scan.packets as f64
        })
        .collect();
    *cum.last_mut().expect("a capture has packets") = 1.0;
    SizeDist::Table {
        sizes: scan.sizes.iter().map(|(b, _)| *b).collect(),
        cum,
    }
}

/// Cumulative Zipf popularity of `n` flows: flow `k` has weight `1 / (k + 1)^s`.
fn zipf_cum(n: usize, s: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    let mut cum: Vec<f64> = w
        .iter()
        .map(|x| {
            acc += x;
            acc / total
        })
        .collect();
    *cum.last_mut().expect("at least one flow") = 1.0;
    cum
}

/// The traffic classes (default: one, named "default") and their cumulative shares; resolves
/// empty names to `c0`, `c1`, … and all-zero shares to equal shares.
fn parse_classes(p: &mut Params) -> Result<(Vec<ClassConfig>, Vec<f64>), Error> {
    let n = p.entries("traffic.classes");
    if n == 0 {
        return Ok((
            vec![ClassConfig {
                name: "default".into(),
                share: 1.0,
            }],
            vec![1.0],
        ));
    }
    let mut classes = Vec::with_capacity(n);
    for i in 0..n {
        let key = field_key("traffic.classes", i, "name");
        let mut name = p.str(&key).to_string();
        if name.is_empty() {
            name = format!("c{i}");
            p.set(&key, Value::Str(name.clone()));
        }
        let valid = name.len() <= 32
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(Error::OutOfRange {
                key,
                value: Value::Str(name).to_string(),
                allowed: "must be at most 32 letters, digits, '-' and '_'".into(),
            });
        }
        if classes.iter().any(|c: &ClassConfig| c.name == name) {
            return Err(Error::Inconsistent {
                key,
                value: Value::Str(name).to_string(),
                reason: "class names must be unique; another class has this name".into(),
            });
        }
        let share = p.f64(&field_key("traffic.classes", i, "share"));
        classes.push(ClassConfig { name, share });
    }
    let total: f64 = classes.iter().map(|c| c.share).sum();
    if total == 0.0 {
        for (i, c) in classes.iter_mut().enumerate() {
            c.share = 1.0 / n as f64;
            p.set(
                &field_key("traffic.classes", i, "share"),
                Value::Float(c.share),
            );
        }
    } else if (total - 1.0).abs() > 1e-9 {
        let key = field_key("traffic.classes", 0, "share");
        return Err(Error::Inconsistent {
            value: p.get(&key).to_string(),
            key,
            reason: format!(
                "the class shares sum to {total}; they must sum to 1 (or all be 0 for equal shares)"
            ),
        });
    }
    let mut acc = 0.0;
    let mut cum: Vec<f64> = classes
        .iter()
        .map(|c| {
            acc += c.share;
            acc
        })
        .collect();
    *cum.last_mut().expect("at least one class") = 1.0;
    Ok((classes, cum))
}

// ----- settings that contradict the scheme, and settings without effect ----------------------
//
// A scheme is a preset of one host model, so every key can be set with every scheme, and many
// keys mean nothing to some schemes (an ITR to a host without interrupts, a polling period to
// NAPI). Two kinds of such settings:
//
// - a setting that would make the run something else than its scheme says (count coalescing
//   that never counts, DIM replacing a coalescing scheme's preset, interrupts on the ideal
//   host, traffic classes whose packets are never polled) is an error, found here before
//   time zero;
// - a setting the scenario ignores, or that does not do what its name says (an adaptive
//   policy under Salah's polling loop, which never runs it), is a [`Warning`] naming the key:
//   the run is valid, and a sweep that crosses schemes with keys only some of them use runs as
//   it always did.
//
// Only a key set to a value of its own is reported: a key left out, set to the value it
// would have anyway (its default, or a preset's), or set to the value the scenario resolves
// for it (an echo of a previous run: `hybrid.switch_pps`, `driver.link_gbps`) is not. Nor is
// a `platform.*` key: the platform describes the machine (its costs are a preset of their
// own, applied to every scheme), not a choice of the receive path. The decisions are recorded
// in docs/scenario.md ("Settings a scheme ignores").

/// The keys set to a value other than the one they would have if the scenario left them out.
fn set_keys(p: &Params) -> BTreeSet<&'static str> {
    let unset = p.unset();
    crate::params::PARAMS
        .iter()
        .map(|s| s.key)
        .filter(|k| p.get(k) != unset.get(k))
        .collect()
}

/// The adaptive moderation policies: they reprogram the NIC after each NAPI session.
const ADAPTIVE: &[&str] = &["ixgbe-legacy", "linear", "ixgbe", "i40e", "dim"];

/// Settings valid alone that would turn the scheme into another.
fn check_scheme_settings(p: &Params, scheme: Scheme, classes: usize) -> Result<(), Error> {
    let moderation = p.str("driver.moderation");
    if scheme == Scheme::CoalesceCount && p.u64("nic.rx_frames") == 0 {
        return Err(Error::Inconsistent {
            key: "nic.rx_frames".into(),
            value: "0".into(),
            reason: "scheme \"coalesce-count\" interrupts once nic.rx_frames packets wait, so it needs at least 1 (1 is scheme \"irq\"); 0 turns count coalescing off".into(),
        });
    }
    if matches!(scheme, Scheme::CoalesceCount | Scheme::CoalesceTime) && moderation == "dim" {
        return Err(Error::Inconsistent {
            key: "driver.moderation".into(),
            value: "\"dim\"".into(),
            reason: format!(
                "DIM programs nic.rx_usecs and nic.rx_frames itself, replacing the coalescing of scheme \"{}\"; run DIM with scheme \"irq\" or \"napi\"",
                scheme.name()
            ),
        });
    }
    let defer = p.u64("kernel.napi_defer_hard_irqs") > 0;
    if scheme == Scheme::Ideal && defer && p.f64("kernel.gro_flush_timeout_ns") > 0.0 {
        return Err(Error::Inconsistent {
            key: "kernel.napi_defer_hard_irqs".into(),
            value: p.get("kernel.napi_defer_hard_irqs").to_string(),
            reason: "scheme \"ideal\" has no interrupt cost, and software IRQ coalescing would add the NAPI timer's interrupts (platform.poll_timer_ns); use it with scheme \"napi\"".into(),
        });
    }
    if scheme.uses_poll_loop() && classes > 1 {
        return Err(Error::Inconsistent {
            key: "traffic.classes".into(),
            value: format!("{classes} classes"),
            reason: format!(
                "scheme \"{}\" runs Salah's polling loop, which polls one Rx ring per vector, so the packets of every class but the first would never be processed; use one class, or a NAPI scheme (napi, irq, coalesce-count, coalesce-time, ideal)",
                scheme.name()
            ),
        });
    }
    Ok(())
}

/// A setting that has no effect in its scenario, or not the one its name says. The scenario is
/// valid and runs; the Python layer shows it as a warning (`irqlab.ConfigWarning`).
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    pub key: String,
    /// The value as given, formatted as in errors.
    pub value: String,
    /// Why it has no effect, and what would use it.
    pub reason: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}: {}", self.key, self.value, self.reason)
    }
}

/// Keys that shape when packet interrupts fire.
const NIC_IRQ: &[&str] = &[
    "nic.itr_us",
    "nic.rx_usecs",
    "nic.rx_frames",
    "nic.cause_mode",
];
/// The driver's moderation policy and its parameters.
const MODERATION: &[&str] = &[
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
];
/// The kernel's softirq and NAPI, which Salah's polling loop replaces.
const SOFTIRQ: &[&str] = &[
    "kernel.napi_weight",
    "kernel.netdev_budget",
    "kernel.netdev_budget_usecs",
    "kernel.hz",
    "kernel.max_softirq_restart",
    "kernel.max_softirq_time_ms",
    "kernel.napi_defer_hard_irqs",
    "kernel.gro_flush_timeout_ns",
];
const SOFT_COALESCING: &[&str] = &["kernel.napi_defer_hard_irqs", "kernel.gro_flush_timeout_ns"];
const POLL: &[&str] = &["poll.period_us", "poll.quota"];
const HYBRID: &[&str] = &["hybrid.switch_pps", "hybrid.window_us", "hybrid.hysteresis"];
/// The receive-load controllers' parameters.
const ADAPT: &[&str] = &[
    "adapt.interval_ms",
    "adapt.buflow",
    "adapt.bufupper",
    "adapt.alpha",
    "adapt.beta",
    "adapt.budget_min",
    "adapt.budget_max",
    "adapt.micro",
    "adapt.rhip_rate",
    "adapt.rhip_budget",
    "adapt.t_decrease",
    "adapt.t_increase_ns",
    "adapt.t_snap_ns",
    "adapt.aic_min_rate",
    "adapt.aic_max_rate",
    "adapt.aic_rate_step",
    "adapt.aic_decrease",
];
/// What only forwarded packets use (their costs, `platform.tx_*`, describe the machine and are
/// not reported, as no `platform.*` key is).
const TX: &[&str] = &["driver.tx_work_limit", "nic.tx_irq"];
/// What only a replay uses.
const PCAP: &[&str] = &["traffic.pcap", "traffic.speedup", "traffic.loop"];
const ONOFF: &[&str] = &[
    "traffic.sources",
    "traffic.alpha_on",
    "traffic.alpha_off",
    "traffic.on_min_bytes",
    "traffic.line_rate_gbps",
];

/// Finds the settings without effect, one warning per key: the first rule that applies to a
/// key gives its reason (the rules go from the scheme's machinery to single keys).
struct Effect<'a> {
    p: &'a Params,
    scheme: Scheme,
    /// Keys set to a value of their own, not yet reported.
    set: BTreeSet<&'static str>,
    /// The switching point `hybrid.switch_pps = 0` resolves to.
    auto_switch_pps: f64,
    /// A replay's rate, which `traffic.rate_pps` resolves to.
    replay_rate_pps: Option<f64>,
}

impl Effect<'_> {
    fn warnings(mut self) -> Vec<Warning> {
        let mut out = Vec::new();
        let p = self.p;
        let name = self.scheme.name();
        let moderation = p.str("driver.moderation");
        let forward = p.bool("host.forward");
        let defer = p.u64("kernel.napi_defer_hard_irqs") > 0;
        let gro = p.f64("kernel.gro_flush_timeout_ns") > 0.0;
        // an echo of a resolved value is not a setting of its own
        if p.f64("hybrid.switch_pps") == self.auto_switch_pps {
            self.set.remove("hybrid.switch_pps");
        }
        if p.f64("driver.link_gbps") == p.f64("nic.link_gbps") {
            self.set.remove("driver.link_gbps");
        }
        if self.replay_rate_pps == Some(p.f64("traffic.rate_pps")) {
            self.set.remove("traffic.rate_pps");
        }
        let mut rule = |keys: &[&'static str], applies: bool, reason: &dyn Fn() -> String| {
            if !applies {
                return;
            }
            for k in keys {
                if self.set.remove(k) {
                    out.push(Warning {
                        key: (*k).to_string(),
                        value: p.get(k).to_string(),
                        reason: reason(),
                    });
                }
            }
        };
        // the scheme's machinery
        let ideal = self.scheme == Scheme::Ideal;
        let poll = self.scheme == Scheme::Poll;
        for keys in [NIC_IRQ, MODERATION, &["driver.first_packet", "nic.tx_irq"]] {
            rule(keys, ideal, &|| {
                no_effect(
                    "scheme \"ideal\" has no interrupts (an arrival starts protocol processing at no cost)",
                )
            });
            rule(keys, poll, &|| {
                no_effect(
                    "scheme \"poll\" never enables packet interrupts (the polling timer starts every poll)",
                )
            });
        }
        let masks = self.scheme.masks_on_irq();
        rule(&["nic.cause_mode"], !masks, &|| {
            no_effect(&format!(
                "scheme \"{name}\" never masks the vector, so never re-enables it"
            ))
        });
        let in_loop = self.scheme.uses_poll_loop();
        rule(SOFTIRQ, in_loop, &|| {
            no_effect(&format!(
                "scheme \"{name}\" runs Salah's polling loop, not the kernel's softirq and NAPI"
            ))
        });
        // the loop never completes a NAPI session, so an adaptive policy never runs
        rule(
            &["driver.moderation"],
            in_loop && ADAPTIVE.contains(&moderation),
            &|| {
                format!(
                    "never adapts: scheme \"{name}\" runs Salah's polling loop, which never runs the driver's moderation, so the NIC keeps the policy's initial setting all run; use \"static\" (nic.itr_us) or \"off\", or a NAPI scheme (napi, irq, coalesce-count, coalesce-time)"
                )
            },
        );
        // software IRQ coalescing defers re-enabling a masked vector to a timer's poll
        rule(SOFT_COALESCING, !masks && defer && gro, &|| {
            format!(
                "defers nothing: scheme \"{name}\" never masks the vector, so the NAPI timer only adds polls and interrupts (platform.poll_timer_ns) of its own; software IRQ coalescing is for scheme \"napi\""
            )
        });
        rule(&["kernel.napi_defer_hard_irqs"], !gro, &|| {
            no_effect(
                "it needs kernel.gro_flush_timeout_ns > 0, the timer that polls instead of the interrupt",
            )
        });
        rule(&["kernel.gro_flush_timeout_ns"], !defer, &|| {
            no_effect("it needs kernel.napi_defer_hard_irqs > 0 (no GRO is modelled)")
        });
        let polling = matches!(
            self.scheme,
            Scheme::Poll | Scheme::NapiPoll | Scheme::Hybrid
        );
        rule(POLL, !polling, &|| {
            no_effect("only the polling schemes use it (poll, napi-poll, hybrid)")
        });
        rule(HYBRID, self.scheme != Scheme::Hybrid, &|| {
            no_effect("only scheme \"hybrid\" uses it")
        });
        rule(ADAPT, p.str("adapt.scheme") == "none", &|| {
            no_effect("only a receive-load controller uses it (adapt.scheme)")
        });
        rule(
            &["driver.first_packet"],
            !matches!(self.scheme, Scheme::DisableEnable | Scheme::Hybrid),
            &|| no_effect("only schemes \"disable-enable\" and \"hybrid\" use it"),
        );
        // the driver's moderation policy
        let only = |m: &str| no_effect(&format!("only driver.moderation = \"{m}\" uses it"));
        rule(&["driver.itr_rate"], moderation != "static", &|| {
            only("static")
        });
        rule(
            &["driver.legacy_bulk_rate", "driver.legacy_elapsed"],
            moderation != "ixgbe-legacy",
            &|| only("ixgbe-legacy"),
        );
        rule(
            &[
                "driver.linear_rate_max",
                "driver.linear_rate_min",
                "driver.linear_pps_max",
                "driver.linear_min_update_us",
                "driver.linear_elapsed",
            ],
            moderation != "linear",
            &|| only("linear"),
        );
        rule(&["driver.dim_mode"], moderation != "dim", &|| only("dim"));
        rule(&["driver.policy"], moderation != "python", &|| {
            only("python")
        });
        let link_speed_policy = matches!(moderation, "ixgbe" | "i40e");
        // the policy reads the NIC's speed unless driver.link_gbps names one of its own
        let policy_reads_nic_link =
            link_speed_policy && p.f64("driver.link_gbps") == p.f64("nic.link_gbps");
        rule(&["driver.link_gbps"], !link_speed_policy, &|| {
            no_effect("only driver.moderation = \"ixgbe\" and \"i40e\" use it")
        });
        rule(
            &["nic.itr_us"],
            !matches!(moderation, "static" | "dim"),
            &|| {
                let does = if moderation == "off" {
                    "runs without an ITR"
                } else {
                    "programs the ITR itself"
                };
                no_effect(&format!(
                    "driver.moderation = \"{moderation}\" {does} (nic.itr_us is the ITR of \"static\")"
                ))
            },
        );
        rule(&["nic.itr_us"], p.f64("driver.itr_rate") > 0.0, &|| {
            no_effect("driver.itr_rate sets the ITR instead")
        });
        rule(
            &["nic.rx_usecs", "nic.rx_frames"],
            moderation == "dim",
            &|| no_effect("driver.moderation = \"dim\" programs rx-usecs and rx-frames itself"),
        );
        // forwarding, traffic
        rule(TX, !forward, &|| {
            no_effect("only forwarding transmits (host.forward = true)")
        });
        rule(
            &["nic.link_gbps"],
            !forward && !policy_reads_nic_link,
            &|| {
                no_effect(
                    "only forwarding (host.forward = true) and the ixgbe and i40e policies use it",
                )
            },
        );
        rule(ONOFF, p.str("traffic.kind") != "pareto-onoff", &|| {
            no_effect("only traffic.kind = \"pareto-onoff\" uses it")
        });
        let pcap = p.str("traffic.kind") == "pcap";
        rule(PCAP, !pcap, &|| {
            no_effect("only traffic.kind = \"pcap\" uses it")
        });
        rule(&["traffic.rate_pps"], pcap, &|| {
            no_effect(
                "traffic.kind = \"pcap\" replays the capture at its own rate (times traffic.speedup)",
            )
        });
        rule(&["traffic.sizes", "traffic.size_bytes"], pcap, &|| {
            no_effect("traffic.kind = \"pcap\" replays the capture's own frame sizes")
        });
        rule(&["traffic.flows", "traffic.flow_zipf_s"], pcap, &|| {
            no_effect("traffic.kind = \"pcap\" takes the flows from the capture's 5-tuples")
        });
        rule(
            &["traffic.size_bytes"],
            p.str("traffic.sizes") != "fixed",
            &|| {
                no_effect(&format!(
                    "traffic.sizes = \"{}\" gives the frame sizes",
                    p.str("traffic.sizes")
                ))
            },
        );
        rule(
            &["traffic.flow_zipf_s"],
            p.u64("traffic.flows") == 1,
            &|| no_effect("there is one flow (traffic.flows = 1)"),
        );
        rule(&["nic.rss_table_size"], p.u64("nic.queues") == 1, &|| {
            no_effect("there is one queue vector (nic.queues = 1)")
        });
        // ingress QoS (`qos`)
        let strategy = p.str("qos.strategy");
        rule(QOS, strategy == "off", &|| {
            no_effect("there is no QoS strategy (qos.strategy = \"off\")")
        });
        rule(
            &["qos.ring_budgets"],
            !matches!(strategy, "ll-rr" | "ll-wfq"),
            &|| {
                no_effect(
                    "ring budgets are the LL driver's (qos.strategy = \"ll-rr\" or \"ll-wfq\")",
                )
            },
        );
        rule(
            &["qos.ring_order"],
            matches!(strategy, "sq" | "rr"),
            &|| no_effect("the strategy has one ring per vector"),
        );
        out
    }
}

/// The keys of a QoS strategy.
const QOS: &[&str] = &["qos.rt_share", "qos.ring_budgets", "qos.ring_order"];

fn no_effect(why: &str) -> String {
    format!("has no effect: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

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
