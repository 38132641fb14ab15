//! A built scenario: validated [`Params`] turned into typed, integer-time configuration.
//!
//! Build, validate, then run: every error surfaces here, naming its key, before time zero.

use crate::error::Error;
use crate::params::{Params, Value};
use crate::time::{PS_PER_S, SimDuration, SimTime};

/// The interrupt-handling scheme: which parts of the host model are in play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// No interrupt cost: an arrival wakes protocol processing for free (M/M/1/B-like).
    Ideal,
    /// Normal interruption: the IRQ line is never masked; ISRs preempt protocol processing.
    Irq,
    /// NAPI: the ISR masks the vector; the poll re-enables it when the ring is empty.
    Napi,
}

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Ideal => "ideal",
            Scheme::Irq => "irq",
            Scheme::Napi => "napi",
        }
    }
}

/// Distribution of a CPU cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    Deterministic,
    Exponential,
}

/// A CPU cost: its mean (integer ps) and distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub mean: SimDuration,
    /// `mean` in ps as a float, for sampling.
    pub mean_ps: f64,
    pub dist: Dist,
}

impl Cost {
    /// A cost of zero takes no time and draws no random number.
    pub fn is_zero(&self) -> bool {
        self.mean.is_zero()
    }
}

/// How re-enabling the vector treats a cause raised by packets the poll already processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CauseMode {
    /// The cause bit stays latched until an IRQ is delivered (Intel EICR): re-enabling a vector
    /// with a latched cause interrupts at once, even if the poll already took those packets.
    Latched,
    /// Re-enabling after the poll found the ring empty re-arms the vector: only packets that
    /// arrive afterwards raise an IRQ (completion-queue arming; Salah's disable-enable model).
    Armed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrafficKind {
    Poisson,
    Cbr,
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
    pub size_bytes: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NicConfig {
    pub ring_descriptors: usize,
    pub itr: SimDuration,
    pub rx_usecs: SimDuration,
    pub rx_frames: u64,
    pub cause_mode: CauseMode,
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
}

/// Everything one run needs, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub scheme: Scheme,
    pub run: RunConfig,
    pub traffic: TrafficConfig,
    pub nic: NicConfig,
    pub platform: PlatformConfig,
    pub kernel: KernelConfig,
    /// The validated key/value pairs it was built from (echoed into the result).
    pub params: Params,
}

fn cost(p: &Params, name: &str) -> Cost {
    let mean = SimDuration::from_ns(p.f64(&format!("platform.{name}_ns")));
    let dist = match p.str(&format!("platform.{name}_dist")) {
        "exponential" => Dist::Exponential,
        _ => Dist::Deterministic,
    };
    Cost {
        mean,
        mean_ps: mean.ps() as f64,
        dist,
    }
}

/// `ceil(units * hz / per_second)`: the kernel's rounding of a time to jiffies.
fn to_jiffies(value: f64, per_second: f64, hz: u64) -> u64 {
    (value * hz as f64 / per_second).ceil().max(0.0) as u64
}

impl Scenario {
    /// Builds a scenario from `(dotted key, value)` pairs (missing keys take their defaults).
    pub fn from_pairs<K: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, Value)>,
    ) -> Result<Scenario, Error> {
        Self::build(Params::from_pairs(pairs)?)
    }

    /// Builds a scenario from validated params, checking the constraints between keys.
    pub fn build(p: Params) -> Result<Scenario, Error> {
        let scheme = match p.str("scheme") {
            "ideal" => Scheme::Ideal,
            "irq" => Scheme::Irq,
            _ => Scheme::Napi,
        };
        let warmup = SimTime::ZERO + SimDuration::from_ms(p.f64("run.warmup_ms"));
        let end = warmup + SimDuration::from_ms(p.f64("run.duration_ms"));
        if end <= warmup {
            return Err(Error::OutOfRange {
                key: "run.duration_ms".into(),
                value: p.get("run.duration_ms").to_string(),
                allowed: "must be at least one picosecond".into(),
            });
        }
        let rate_pps = p.f64("traffic.rate_pps");
        let kind = match p.str("traffic.kind") {
            "cbr" => TrafficKind::Cbr,
            _ => TrafficKind::Poisson,
        };
        if kind == TrafficKind::Cbr && (PS_PER_S as f64 / rate_pps) < 1.0 {
            return Err(Error::Inconsistent {
                key: "traffic.rate_pps".into(),
                value: p.get("traffic.rate_pps").to_string(),
                reason: "CBR spacing would be below one picosecond".into(),
            });
        }
        let hz = p.u64("kernel.hz");
        let jiffy = SimDuration(PS_PER_S / hz);
        let platform = PlatformConfig {
            cpu_ghz: p.f64("platform.cpu_ghz"),
            irq: cost(&p, "irq"),
            proto: cost(&p, "proto"),
            proto_ps_per_byte: p.f64("platform.proto_ns_per_byte") * 1000.0,
            poll: cost(&p, "poll"),
            softirq: cost(&p, "softirq"),
            mask: cost(&p, "mask"),
            unmask: cost(&p, "unmask"),
            ctx_switch: cost(&p, "ctx_switch"),
        };
        let nic = NicConfig {
            ring_descriptors: p.u64("nic.ring_descriptors") as usize,
            itr: SimDuration::from_us(p.f64("nic.itr_us")),
            rx_usecs: SimDuration::from_us(p.f64("nic.rx_usecs")),
            rx_frames: p.u64("nic.rx_frames"),
            cause_mode: match p.str("nic.cause_mode") {
                "armed" => CauseMode::Armed,
                _ => CauseMode::Latched,
            },
        };
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
        let kernel = KernelConfig {
            napi_weight: p.u64("kernel.napi_weight"),
            netdev_budget: p.u64("kernel.netdev_budget") as i64,
            jiffy,
            budget_jiffies: to_jiffies(budget_us as f64, 1e6, hz),
            max_softirq_restart: p.u64("kernel.max_softirq_restart"),
            max_softirq_jiffies: to_jiffies(p.f64("kernel.max_softirq_time_ms"), 1e3, hz),
        };
        Ok(Scenario {
            scheme,
            run: RunConfig {
                seed: p.u64("run.seed"),
                replication: p.u64("run.replication"),
                warmup,
                end,
            },
            traffic: TrafficConfig {
                kind,
                rate_pps,
                size_bytes: p.u64("traffic.size_bytes") as u32,
            },
            nic,
            platform,
            kernel,
            params: p,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
