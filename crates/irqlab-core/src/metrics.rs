//! Metrics: streaming counters and an HDR latency histogram (memory does not grow with the
//! run), turned into a [`Report`] at the end.
//!
//! Everything is measured in the window `[warmup, end)`: arrivals and drops by their arrival
//! time, deliveries (and their latencies) by their completion time, CPU time by when it was
//! spent. Packets already in the ring when the window opens are `in_flight_at_warmup`, so
//! that `offered + in_flight_at_warmup = delivered + dropped_nic + dropped_socket + in_flight`
//! holds exactly (with no warm-up, `in_flight_at_warmup` is 0).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::cpu::{Category, N_CATEGORIES};
use crate::params::Value;
use crate::scenario::Scenario;
use crate::time::{PS_PER_NS, PS_PER_US, SimTime};

/// Largest latency the histogram resolves (larger values are clamped for percentiles only;
/// the mean and max stay exact).
const HIST_MAX_NS: u64 = 3_600_000_000_000;

/// Counters of one run.
#[derive(Debug)]
pub struct Metrics {
    warmup: SimTime,
    end: SimTime,
    pub offered: u64,
    pub delivered: u64,
    pub dropped_nic: u64,
    pub dropped_socket: u64,
    /// Accepted and completed before the window opened.
    pub accepted_before: u64,
    pub completed_before: u64,
    pub irqs: u64,
    pub polls: u64,
    pub polled_packets: u64,
    pub softirq_runs: u64,
    pub ksoftirqd_wakeups: u64,
    pub time_squeeze: u64,
    pub timer_ticks: u64,
    pub mode_switches: u64,
    pub moderation_writes: u64,
    latency_sum_ps: u128,
    latency_min_ps: u64,
    latency_max_ps: u64,
    hist: Histogram<u64>,
}

impl Metrics {
    pub fn new(warmup: SimTime, end: SimTime) -> Metrics {
        Metrics {
            warmup,
            end,
            offered: 0,
            delivered: 0,
            dropped_nic: 0,
            dropped_socket: 0,
            accepted_before: 0,
            completed_before: 0,
            irqs: 0,
            polls: 0,
            polled_packets: 0,
            softirq_runs: 0,
            ksoftirqd_wakeups: 0,
            time_squeeze: 0,
            timer_ticks: 0,
            mode_switches: 0,
            moderation_writes: 0,
            latency_sum_ps: 0,
            latency_min_ps: u64::MAX,
            latency_max_ps: 0,
            hist: Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid histogram bounds"),
        }
    }

    /// Whether `t` lies in the measured window.
    #[inline]
    pub fn measuring(&self, t: SimTime) -> bool {
        t >= self.warmup
    }

    #[inline]
    pub fn on_arrival(&mut self, t: SimTime, accepted: bool) {
        if self.measuring(t) {
            self.offered += 1;
            if !accepted {
                self.dropped_nic += 1;
            }
        } else if accepted {
            self.accepted_before += 1;
        }
    }

    #[inline]
    pub fn on_delivery(&mut self, now: SimTime, arrival: SimTime) {
        if !self.measuring(now) {
            self.completed_before += 1;
            return;
        }
        let lat = (now - arrival).ps();
        self.delivered += 1;
        self.latency_sum_ps += lat as u128;
        self.latency_min_ps = self.latency_min_ps.min(lat);
        self.latency_max_ps = self.latency_max_ps.max(lat);
        self.hist.saturating_record(lat / PS_PER_NS);
    }

    /// The report of the run.
    pub fn report(&self, s: &Scenario, cpu_ps: [u64; N_CATEGORIES], in_flight: u64) -> Report {
        let measured = self.end - self.warmup;
        let secs = measured.as_secs_f64();
        let share = |c: Category| cpu_ps[c as usize] as f64 / measured.ps() as f64;
        let idle = share(Category::Idle);
        let busy = 1.0 - idle;
        let throughput_pps = self.delivered as f64 / secs;
        let n = self.delivered;
        let q = |x: f64| (n > 0).then(|| self.hist.value_at_quantile(x) as f64 / 1e3);
        let mean_us = (n > 0).then(|| self.latency_sum_ps as f64 / n as f64 / PS_PER_US as f64);
        let cycles_per_packet = (n > 0).then(|| busy * s.platform.cpu_ghz * 1e9 / throughput_pps);
        Report {
            scheme: s.scheme.name().to_string(),
            seed: s.run.seed,
            replication: s.run.replication,
            measured_s: secs,
            packets: Packets {
                offered: self.offered,
                delivered: self.delivered,
                dropped_nic: self.dropped_nic,
                dropped_socket: self.dropped_socket,
                in_flight,
                in_flight_at_warmup: self.accepted_before - self.completed_before,
            },
            offered_pps: self.offered as f64 / secs,
            throughput_pps,
            loss_ratio: if self.offered > 0 {
                (self.dropped_nic + self.dropped_socket) as f64 / self.offered as f64
            } else {
                0.0
            },
            latency_us: Latency {
                mean: mean_us,
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                min: (n > 0).then(|| self.latency_min_ps as f64 / PS_PER_US as f64),
                max: (n > 0).then(|| self.latency_max_ps as f64 / PS_PER_US as f64),
            },
            cpu: CpuShare {
                busy,
                irq: share(Category::Irq),
                softirq: share(Category::Softirq),
                ksoftirqd: share(Category::Ksoftirqd),
                app: share(Category::App),
                idle,
            },
            cpu_ps: CpuPs {
                irq: cpu_ps[Category::Irq as usize],
                softirq: cpu_ps[Category::Softirq as usize],
                ksoftirqd: cpu_ps[Category::Ksoftirqd as usize],
                app: cpu_ps[Category::App as usize],
                idle: cpu_ps[Category::Idle as usize],
                measured: measured.ps(),
            },
            irq_per_s: self.irqs as f64 / secs,
            polls_per_s: self.polls as f64 / secs,
            packets_per_poll: (self.polls > 0)
                .then(|| self.polled_packets as f64 / self.polls as f64),
            cycles_per_packet,
            load_latency_product: cycles_per_packet.zip(mean_us).map(|(c, t)| c * t),
            counts: Counts {
                irqs: self.irqs,
                polls: self.polls,
                polled_packets: self.polled_packets,
                softirq_runs: self.softirq_runs,
                ksoftirqd_wakeups: self.ksoftirqd_wakeups,
                time_squeeze: self.time_squeeze,
                timer_ticks: self.timer_ticks,
                mode_switches: self.mode_switches,
                moderation_writes: self.moderation_writes,
            },
            scenario: s.params.iter().map(|(k, v)| (k, v.clone())).collect(),
        }
    }
}

/// Packet counts in the measured window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Packets {
    pub offered: u64,
    pub delivered: u64,
    pub dropped_nic: u64,
    pub dropped_socket: u64,
    /// In the ring at the end of the run.
    pub in_flight: u64,
    /// In the ring when the window opened.
    pub in_flight_at_warmup: u64,
}

/// Latency from NIC arrival to the end of protocol processing, µs. `None` if nothing was
/// delivered. Percentiles from the HDR histogram (3 significant digits); mean, min and max
/// exact.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Latency {
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// CPU time by category, as fractions of the measured time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuShare {
    pub busy: f64,
    pub irq: f64,
    pub softirq: f64,
    pub ksoftirqd: f64,
    pub app: f64,
    pub idle: f64,
}

/// CPU time by category, exact picoseconds; they sum to `measured`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuPs {
    pub irq: u64,
    pub softirq: u64,
    pub ksoftirqd: u64,
    pub app: u64,
    pub idle: u64,
    pub measured: u64,
}

/// Event counts in the measured window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Counts {
    pub irqs: u64,
    /// Calls of the driver's poll function (`napi`), or polls of the polling loop.
    pub polls: u64,
    /// Packets processed by those calls.
    pub polled_packets: u64,
    /// `net_rx_action` runs.
    pub softirq_runs: u64,
    pub ksoftirqd_wakeups: u64,
    /// `net_rx_action` runs cut short by the budget or the time limit.
    pub time_squeeze: u64,
    /// Timer interrupts that start a poll: the polling timer (`poll`, `napi-poll`, `hybrid`)
    /// or the NAPI hrtimer of software IRQ coalescing.
    pub timer_ticks: u64,
    /// Switches between disable-enable and polling (`hybrid`).
    pub mode_switches: u64,
    /// Register writes by the moderation policy (ITR or coalescing).
    pub moderation_writes: u64,
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub scheme: String,
    pub seed: u64,
    pub replication: u64,
    pub measured_s: f64,
    pub packets: Packets,
    pub offered_pps: f64,
    pub throughput_pps: f64,
    pub loss_ratio: f64,
    pub latency_us: Latency,
    pub cpu: CpuShare,
    pub cpu_ps: CpuPs,
    pub irq_per_s: f64,
    pub polls_per_s: f64,
    pub packets_per_poll: Option<f64>,
    /// Busy CPU cycles per delivered packet (Emmerich et al. `c_pkt = l·f_CPU / r`).
    pub cycles_per_packet: Option<f64>,
    /// `P_ll = c_pkt · t`: cycles per packet times mean latency (cycles·µs).
    pub load_latency_product: Option<f64>,
    pub counts: Counts,
    /// Every scenario key with the value the run used (defaults filled in): enough to re-run it.
    pub scenario: BTreeMap<&'static str, Value>,
}
