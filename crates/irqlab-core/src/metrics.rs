//! Metrics: streaming counters and HDR latency histograms (memory does not grow with the run),
//! turned into a [`Report`] at the end.
//!
//! Everything is measured in the window `[warmup, end)`: arrivals and NIC drops by their arrival
//! time, the end of protocol processing (delivery, or a drop at the socket or the Tx ring) and
//! the end of a packet's stay in the host (consumed by its app, transmitted, or taken by the
//! stack) by when they happen, CPU time by when it was spent.
//!
//! Two conservation laws hold exactly. The receive path (Rx rings, the packet in protocol
//! processing included):
//! `offered + in_flight_at_warmup = delivered + dropped_nic + dropped_socket + dropped_tx + in_flight`.
//! The whole host (rings, sockets, apps, Tx rings):
//! `offered + in_host_at_warmup = consumed + transmitted + to_stack + dropped_nic + dropped_socket
//! + dropped_tx + in_flight + in_socket + in_app + in_tx_ring`.
//!
//! Statistics are kept per (queue, class) and per (app, class) — one record per packet — and
//! merged at the end into the whole report and its per-core, per-queue, per-class and per-app
//! breakdowns (HDR histograms add exactly).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::cpu::{Category, N_CATEGORIES};
use crate::params::Value;
use crate::scenario::{Scenario, SizeDist};
use crate::time::{PS_PER_NS, PS_PER_US, SimTime};

/// Largest latency the histogram resolves (larger values are clamped for percentiles only;
/// the mean and max stay exact).
const HIST_MAX_NS: u64 = 3_600_000_000_000;

/// HDR histogram precision: 3 significant digits, so 2^11 = 2048 sub-buckets (1024 per
/// half-octave) of 1 ns at the bottom.
const HIST_SIGFIG: u8 = 3;
const HALF_BITS: u32 = 10;

/// The HDR bucket of `ns` (3 significant digits, 1 ns units), as a flat index: values below
/// 2048 ns have their own; above, each octave `[2^k, 2^(k+1))` has 1024 of width `2^(k-10)`.
/// This is HdrHistogram's own layout (`Histogram::new(3)`), so a bucket's count is exactly
/// the count the library would keep for it.
#[inline(always)]
fn hdr_bucket(ns: u64) -> usize {
    let k = 63 - (ns | 1).leading_zeros();
    let s = k.saturating_sub(HALF_BITS);
    ((s as usize) << HALF_BITS) + (ns >> s) as usize
}

/// The smallest value of bucket `i` (the inverse of [`hdr_bucket`]).
fn hdr_bucket_value(i: usize) -> u64 {
    let s = (i >> HALF_BITS).saturating_sub(1);
    ((i - (s << HALF_BITS)) as u64) << s
}

/// Latency samples: exact count, sum, min and max; percentiles from an HDR histogram
/// (3 significant digits, ns).
///
/// A sample is counted in its HDR bucket (`counts`, laid out as the library lays out its own,
/// grown with the largest value recorded so that an idle part of the host costs little
/// memory); the [`Histogram`] is built from the counts when a report asks for percentiles.
/// `Histogram::record` costs about 55 instructions per call (its bounds and auto-resize checks,
/// min and max, total count and `Result`), a tenth of all the work of simulating a packet;
/// counting is a shift and an add. Percentiles depend only on the bucket counts, so they are
/// the same numbers (a test records random values both ways).
#[derive(Debug)]
pub struct LatencyStats {
    n: u64,
    sum_ps: u128,
    min_ps: u64,
    max_ps: u64,
    counts: Vec<u64>,
}

impl Default for LatencyStats {
    fn default() -> Self {
        LatencyStats {
            n: 0,
            sum_ps: 0,
            min_ps: u64::MAX,
            max_ps: 0,
            counts: Vec::new(),
        }
    }
}

impl LatencyStats {
    #[inline]
    pub fn record(&mut self, lat_ps: u64) {
        self.n += 1;
        self.sum_ps += u128::from(lat_ps);
        self.min_ps = self.min_ps.min(lat_ps);
        self.max_ps = self.max_ps.max(lat_ps);
        // values past an hour are clamped, as a histogram bounded there would
        let i = hdr_bucket((lat_ps / PS_PER_NS).min(HIST_MAX_NS));
        if i >= self.counts.len() {
            self.grow(i);
        }
        self.counts[i] += 1;
    }

    /// Room for bucket `i` (a new largest latency; the `Vec` grows its capacity by doubling).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        self.counts.resize(i + 1, 0);
    }

    /// Adds `other`'s samples.
    pub fn merge(&mut self, other: &LatencyStats) {
        if other.n == 0 {
            return;
        }
        self.n += other.n;
        self.sum_ps += other.sum_ps;
        self.min_ps = self.min_ps.min(other.min_ps);
        self.max_ps = self.max_ps.max(other.max_ps);
        let len = self.counts.len().max(other.counts.len());
        self.counts.resize(len, 0);
        for (x, y) in self.counts.iter_mut().zip(&other.counts) {
            *x += y;
        }
    }

    /// The HDR histogram of the samples (in ns).
    fn histogram(&self) -> Histogram<u64> {
        let mut h = Histogram::new(HIST_SIGFIG).expect("valid histogram precision");
        for (i, &c) in self.counts.iter().enumerate() {
            if c != 0 {
                h.record_n(hdr_bucket_value(i), c)
                    .expect("an auto-resizing histogram records any value");
            }
        }
        h
    }

    /// Mean in µs (`None` without samples).
    pub fn mean_us(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_ps as f64 / self.n as f64 / PS_PER_US as f64)
    }

    fn report(&self) -> Latency {
        let n = self.n;
        let hist = self.histogram();
        // The histogram answers with the top of a quantile's bucket (3 significant digits);
        // the exact extremes bound it, so no percentile exceeds the maximum.
        let q = |x: f64| {
            (n > 0).then(|| {
                let ns = hist.value_at_quantile(x) as f64;
                (ns / 1e3).clamp(
                    self.min_ps as f64 / PS_PER_US as f64,
                    self.max_ps as f64 / PS_PER_US as f64,
                )
            })
        };
        Latency {
            mean: self.mean_us(),
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            min: (n > 0).then(|| self.min_ps as f64 / PS_PER_US as f64),
            max: (n > 0).then(|| self.max_ps as f64 / PS_PER_US as f64),
        }
    }
}

/// Counts of the receive path for one (queue, class).
#[derive(Debug, Default)]
pub struct PathStats {
    pub offered: u64,
    pub dropped_nic: u64,
    pub delivered: u64,
    pub dropped_socket: u64,
    pub dropped_tx: u64,
    pub to_stack: u64,
    pub transmitted: u64,
    pub latency: LatencyStats,
}

/// What adds up over queues, apps and classes.
trait Tally: Default {
    fn add(&mut self, o: &Self);
}

/// The sum of `parts`.
fn tally<'t, T: Tally + 't>(parts: impl Iterator<Item = &'t T>) -> T {
    let mut sum = T::default();
    for p in parts {
        sum.add(p);
    }
    sum
}

/// Row `r` (a queue, an app) of a table of (row, class) entries stored row by row.
fn row<T>(table: &[T], classes: usize, r: usize) -> std::slice::Iter<'_, T> {
    table[r * classes..(r + 1) * classes].iter()
}

/// Column `c` (a class) of such a table.
fn column<T>(table: &[T], classes: usize, c: usize) -> impl Iterator<Item = &T> {
    table.iter().skip(c).step_by(classes)
}

impl Tally for PathStats {
    fn add(&mut self, o: &PathStats) {
        self.offered += o.offered;
        self.dropped_nic += o.dropped_nic;
        self.delivered += o.delivered;
        self.dropped_socket += o.dropped_socket;
        self.dropped_tx += o.dropped_tx;
        self.to_stack += o.to_stack;
        self.transmitted += o.transmitted;
        self.latency.merge(&o.latency);
    }
}

/// What an app finished, for one (app, class).
#[derive(Debug, Default)]
pub struct AppStats {
    pub consumed: u64,
    /// Bytes at IP length (frame without Ethernet header and FCS).
    pub ip_bytes: u64,
    pub dropped_socket: u64,
    pub latency: LatencyStats,
}

impl Tally for AppStats {
    fn add(&mut self, o: &AppStats) {
        self.consumed += o.consumed;
        self.ip_bytes += o.ip_bytes;
        self.dropped_socket += o.dropped_socket;
        self.latency.merge(&o.latency);
    }
}

/// Log2 buckets of the packets-per-poll histogram ([`ppp_bucket`]). Bucket 17 holds the
/// largest NAPI weight (`kernel.napi_weight` ≤ 65536) and busy-poll budget (≤ 65535); the top
/// bucket takes everything from 2^30 up.
pub const PPP_BUCKETS: usize = 32;

/// The bucket of a poll that processed `work` packets, as bpftrace's `hist()` has it: bucket 0
/// holds 0, bucket 1 holds 1, bucket k ≥ 2 holds [2^(k−1), 2^k − 1] (the bit length of
/// `work`), clamped to the top bucket.
#[inline(always)]
pub fn ppp_bucket(work: u64) -> usize {
    ((u64::BITS - work.leading_zeros()) as usize).min(PPP_BUCKETS - 1)
}

/// The smallest packet count of bucket `k` (the key bpftrace prints for it).
pub fn ppp_bucket_lower(k: usize) -> u64 {
    if k == 0 { 0 } else { 1 << (k - 1) }
}

/// Event counts of one queue vector.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VectorCounts {
    pub irqs: u64,
    pub polls: u64,
    pub polled_packets: u64,
    pub timer_ticks: u64,
    pub mode_switches: u64,
    pub moderation_writes: u64,
    pub tx_cleaned: u64,
    /// Calls of the driver's poll function that returned in the window, by the packets each
    /// processed ([`ppp_bucket`]); reported as `packets_per_poll_hist`.
    #[serde(skip)]
    pub ppp_hist: [u64; PPP_BUCKETS],
}

/// Polls by the packets each processed, in log2 buckets ([`ppp_bucket`]). Serialised as
/// bpftrace prints a `hist()`: a map from each bucket's smallest count ("0", "1", "2", "4",
/// …) to its polls, in ascending order, only the buckets that counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PollHist(pub [u64; PPP_BUCKETS]);

impl PollHist {
    /// Adds `other`'s counts.
    fn add(&mut self, other: &[u64; PPP_BUCKETS]) {
        for (x, y) in self.0.iter_mut().zip(other) {
            *x += y;
        }
    }

    /// The polls counted.
    pub fn polls(&self) -> u64 {
        self.0.iter().sum()
    }

    /// `(smallest count of the bucket, polls)` of the buckets that counted, in order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(k, &n)| (ppp_bucket_lower(k), n))
    }
}

impl Serialize for PollHist {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = ser.serialize_map(Some(self.buckets().count()))?;
        for (lower, n) in self.buckets() {
            map.serialize_entry(&lower.to_string(), &n)?;
        }
        map.end()
    }
}

/// Event counts of one core.
#[derive(Clone, Debug, Default)]
pub struct CoreCounts {
    pub softirq_runs: u64,
    pub ksoftirqd_wakeups: u64,
    pub time_squeeze: u64,
    pub context_switches: u64,
}

/// How a packet left the receive path (the end of its protocol processing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingExit {
    /// Taken by its app's socket.
    Socket,
    /// Queued on the Tx ring.
    Tx,
    /// Consumed by the stack: nobody reads it and the host does not forward.
    Stack,
    DroppedSocket,
    DroppedTx,
}

/// Counters of one run.
#[derive(Debug)]
pub struct Metrics {
    warmup: SimTime,
    end: SimTime,
    classes: usize,
    /// Per (queue, class): index `queue · classes + class`.
    pub path: Vec<PathStats>,
    /// Per (app, class).
    pub app: Vec<AppStats>,
    /// Per app: its wake-up delays ([`Metrics::on_app_switched_in`]).
    pub wakeup: Vec<LatencyStats>,
    pub vectors: Vec<VectorCounts>,
    pub cores: Vec<CoreCounts>,
    /// Accepted into a ring before the window opened; left the ring, and left the host, before.
    accepted_before: u64,
    ring_exits_before: u64,
    host_exits_before: u64,
    /// Offered frames per size in bytes (grown to the largest size seen: frames are at most
    /// 65535 bytes). Not counted when every frame has the same size (`fixed_size`): the
    /// offered count says it all, and the hot path saves the count.
    pub sizes: Vec<u64>,
    /// The size of every frame, when the traffic has one size.
    fixed_size: Option<u32>,
    /// Busy polling's counts, and request/response traffic's (`busypoll`).
    pub busy: BusyPollCounts,
    pub rr: RrStats,
    /// The AF_XDP apps' counts (`xsk`).
    pub xsk: XskCounts,
}

/// The AF_XDP apps' counts (`app.N.io = "xsk"`), in the measured window, all apps together.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct XskCounts {
    /// Times an app's own thread found its XSK's Rx ring empty (a user-space peek that got
    /// nothing).
    pub empty_checks: u64,
    /// `recvfrom` calls on the XSKs: the apps' kicks and busy polls, and their polling
    /// threads'.
    pub recvfroms: u64,
    /// Packets refused by a full XSK Rx ring (`XDP_STATISTICS` `rx_ring_full`), counted also
    /// in `dropped_socket`.
    pub rx_ring_full: u64,
}

/// Busy polling, preferred busy polling and IRQ suspension, counted in the measured window.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BusyPollCounts {
    /// Busy loops started (`napi_busy_loop` calls).
    pub sessions: u64,
    /// Poll function calls from busy loops (iterations that found work, and `busy_poll_stop`'s
    /// final polls), and the packets they processed.
    pub polls: u64,
    pub packets: u64,
    /// The most packets one of those calls processed.
    pub most_per_poll: u64,
    /// The softirq handed the NAPI to a preferring poller (full weight, deferral armed).
    pub handovers: u64,
    /// IRQs issued while a busy poller owned the NAPI (they set MISSED).
    pub irqs_while_owned: u64,
    /// NAPI timer expiries that found the NAPI owned (lost, as `napi_watchdog` does).
    pub watchdog_lost: u64,
    /// `epoll_wait` returns with events, the events, and empty returns (zero timeout).
    pub epoll_returns: u64,
    pub epoll_events: u64,
    pub empty_epoll_waits: u64,
    /// IRQ suspension: `napi_suspend_irqs` and `napi_resume_irqs` calls.
    pub suspends: u64,
    pub resumes: u64,
}

/// Request/response transactions completed in the measured window.
#[derive(Debug, Default)]
pub struct RrStats {
    pub transactions: u64,
    /// Request arrival at the NIC to the response back at the client.
    pub rtt: LatencyStats,
    pub responses_dropped: u64,
}

/// The state of the host when the run ends, for the in-flight counts and the CPU accounts.
pub struct Snapshot {
    /// Per (queue, class): packets in the ring (waiting or in protocol processing), and of
    /// them in protocol processing.
    pub in_ring: Vec<u64>,
    pub in_poll: Vec<u64>,
    /// Per app: in its socket, and being handled by it.
    pub in_socket: Vec<u64>,
    pub in_app: Vec<u64>,
    /// Per vector: in its Tx ring.
    pub in_tx_ring: Vec<u64>,
    /// Per core: picoseconds by category in the window.
    pub cpu_ps: Vec<[u64; N_CATEGORIES]>,
    /// Packets the sending thread has not sent yet: due, or being sent (`[sender]`).
    pub in_sender: u64,
}

impl Metrics {
    pub fn new(s: &Scenario) -> Metrics {
        let classes = s.traffic.classes.len();
        let queues = s.nic.queues;
        Metrics {
            warmup: s.run.warmup,
            end: s.run.end,
            classes,
            path: (0..queues * classes)
                .map(|_| PathStats::default())
                .collect(),
            app: (0..s.apps.len() * classes)
                .map(|_| AppStats::default())
                .collect(),
            wakeup: (0..s.apps.len()).map(|_| LatencyStats::default()).collect(),
            vectors: vec![VectorCounts::default(); queues],
            cores: vec![CoreCounts::default(); s.host.cores],
            accepted_before: 0,
            ring_exits_before: 0,
            host_exits_before: 0,
            sizes: Vec::new(),
            fixed_size: match s.traffic.sizes {
                SizeDist::Fixed(size) => Some(size),
                SizeDist::Table { .. } => None,
            },
            busy: BusyPollCounts::default(),
            rr: RrStats::default(),
            xsk: XskCounts::default(),
        }
    }

    /// Takes over the counters of a part of this host run on its own (`partition`): its core
    /// is `core`, its vectors and apps are `vectors` and `apps` here, in its own order.
    pub fn absorb(&mut self, mut part: Metrics, core: usize, vectors: &[usize], apps: &[usize]) {
        let k = self.classes;
        debug_assert_eq!(part.classes, k);
        for (local, &v) in vectors.iter().enumerate() {
            for class in 0..k {
                self.path[v * k + class] = std::mem::take(&mut part.path[local * k + class]);
            }
            self.vectors[v] = std::mem::take(&mut part.vectors[local]);
        }
        for (local, &a) in apps.iter().enumerate() {
            for class in 0..k {
                self.app[a * k + class] = std::mem::take(&mut part.app[local * k + class]);
            }
            self.wakeup[a] = std::mem::take(&mut part.wakeup[local]);
        }
        self.cores[core] = std::mem::take(&mut part.cores[0]);
        self.accepted_before += part.accepted_before;
        self.ring_exits_before += part.ring_exits_before;
        self.host_exits_before += part.host_exits_before;
        let longest = self.sizes.len().max(part.sizes.len());
        self.sizes.resize(longest, 0);
        for (x, y) in self.sizes.iter_mut().zip(&part.sizes) {
            *x += y;
        }
    }

    /// Whether `t` lies in the measured window.
    #[inline]
    pub fn measuring(&self, t: SimTime) -> bool {
        t >= self.warmup
    }

    #[inline]
    fn path_mut(&mut self, queue: usize, class: u16) -> &mut PathStats {
        &mut self.path[queue * self.classes + class as usize]
    }

    #[inline(always)]
    pub fn on_arrival(
        &mut self,
        t: SimTime,
        queue: usize,
        class: u16,
        accepted: bool,
        size_bytes: u32,
    ) {
        if self.measuring(t) {
            if self.fixed_size.is_none() {
                let i = size_bytes as usize;
                if i >= self.sizes.len() {
                    self.sizes.resize(i + 1, 0);
                }
                self.sizes[i] += 1;
            }
            let p = self.path_mut(queue, class);
            p.offered += 1;
            if !accepted {
                p.dropped_nic += 1;
            }
        } else if accepted {
            self.accepted_before += 1;
        }
    }

    /// A packet's protocol processing ended at `now`.
    #[inline]
    pub fn on_ring_exit(
        &mut self,
        now: SimTime,
        queue: usize,
        class: u16,
        arrival: SimTime,
        exit: RingExit,
    ) {
        if !self.measuring(now) {
            self.ring_exits_before += 1;
            if matches!(
                exit,
                RingExit::Stack | RingExit::DroppedSocket | RingExit::DroppedTx
            ) {
                self.host_exits_before += 1;
            }
            return;
        }
        let p = self.path_mut(queue, class);
        match exit {
            RingExit::Socket | RingExit::Tx | RingExit::Stack => {
                p.delivered += 1;
                p.latency.record((now - arrival).ps());
                if exit == RingExit::Stack {
                    p.to_stack += 1;
                }
            }
            RingExit::DroppedSocket => p.dropped_socket += 1,
            RingExit::DroppedTx => p.dropped_tx += 1,
        }
    }

    /// A packet's protocol processing ended at `now` and the stack took it (the common case of
    /// [`Metrics::on_ring_exit`], kept short).
    #[inline(always)]
    pub fn on_stack(&mut self, now: SimTime, queue: usize, class: u16, arrival: SimTime) {
        if now < self.warmup {
            self.ring_exits_before += 1;
            self.host_exits_before += 1;
            return;
        }
        let p = self.path_mut(queue, class);
        p.delivered += 1;
        p.to_stack += 1;
        p.latency.record((now - arrival).ps());
    }

    /// A packet polled by the NAPI path finished protocol processing and the stack took it.
    #[inline(always)]
    pub fn on_polled_to_stack(&mut self, now: SimTime, queue: usize, class: u16, arrival: SimTime) {
        if now < self.warmup {
            self.ring_exits_before += 1;
            self.host_exits_before += 1;
            return;
        }
        self.vectors[queue].polled_packets += 1;
        let p = self.path_mut(queue, class);
        p.delivered += 1;
        p.to_stack += 1;
        p.latency.record((now - arrival).ps());
    }

    /// An app's socket refused a packet (counted also in the receive path's `dropped_socket`).
    #[inline]
    pub fn on_socket_drop(&mut self, now: SimTime, app: usize, class: u16) {
        if self.measuring(now) {
            self.app[app * self.classes + class as usize].dropped_socket += 1;
        }
    }

    /// An app finished a packet.
    #[inline]
    pub fn on_consumed(
        &mut self,
        now: SimTime,
        app: usize,
        class: u16,
        arrival: SimTime,
        size_bytes: u32,
    ) {
        if !self.measuring(now) {
            self.host_exits_before += 1;
            return;
        }
        let a = &mut self.app[app * self.classes + class as usize];
        a.consumed += 1;
        a.ip_bytes += u64::from(size_bytes.saturating_sub(ETH_OVERHEAD_BYTES));
        a.latency.record((now - arrival).ps());
    }

    /// The driver's poll function of `vector` returned at `now`, having processed `work`
    /// packets (`napi:napi_poll`'s `work`). A poll belongs to the window it returns in, as the
    /// tracepoint, which fires when it returns: `polls` counts it when it starts, so a poll
    /// that straddles the window's opening is counted here only, and one still running at the
    /// end in `polls` only (at most one of each per vector).
    #[inline(always)]
    pub fn on_poll_done(&mut self, now: SimTime, vector: usize, work: u64) {
        if self.measuring(now) {
            self.vectors[vector].ppp_hist[ppp_bucket(work)] += 1;
        }
    }

    /// App `app`, woken from sleep, has been switched in at `now`: its wake-up delay is
    /// `delay_ps` (see [`AppReport::wakeup_delay_us`]).
    #[inline]
    pub fn on_app_switched_in(&mut self, now: SimTime, app: usize, delay_ps: u64) {
        if self.measuring(now) {
            self.wakeup[app].record(delay_ps);
        }
    }

    /// The driver cleaned the Tx descriptor of a transmitted packet.
    #[inline]
    pub fn on_transmitted(&mut self, now: SimTime, vector: usize, class: u16) {
        if !self.measuring(now) {
            self.host_exits_before += 1;
            return;
        }
        self.path_mut(vector, class).transmitted += 1;
        self.vectors[vector].tx_cleaned += 1;
    }

    /// The report of the run, assembled from its sections (each computed by one function of
    /// `Sections`, in the order of the report's fields).
    pub fn report(&self, s: &Scenario, snap: &Snapshot) -> Report {
        let r = Sections::new(self, s, snap);
        let all = r.all_paths();
        let all_app = r.all_apps();
        let traffic = r.traffic(&all);
        let cpu = r.cpu(&all, traffic.throughput_pps);
        let interrupts = r.interrupts();
        let rr = r.request_response();
        Report {
            scheme: s.scheme.name().to_string(),
            seed: s.run.seed,
            replication: s.run.replication,
            measured_s: r.secs,
            packets: r.packets(&all, &all_app),
            offered_pps: traffic.offered_pps,
            offered_gbps: traffic.offered_gbps,
            frame_bytes: traffic.frame_bytes,
            throughput_pps: traffic.throughput_pps,
            loss_ratio: traffic.loss_ratio,
            latency_us: all.latency.report(),
            cpu: cpu.share,
            cpu_ps: cpu.ps,
            irq_per_s: interrupts.irq_per_s,
            polls_per_s: interrupts.polls_per_s,
            packets_per_poll: interrupts.packets_per_poll,
            packets_per_poll_hist: interrupts.packets_per_poll_hist,
            cycles_per_packet: cpu.cycles_per_packet,
            load_latency_product: cpu.load_latency_product,
            counts: interrupts.counts,
            scenario: r.scenario(),
            app_latency_us: all_app.latency.report(),
            goodput_bps: r.rate(all_app.ip_bytes),
            per_core: r.per_core(),
            per_queue: r.per_queue(),
            per_class: r.per_class(),
            per_app: r.per_app(),
            replay: None,
            notes: r.notes(),
            transactions_per_s: rr.transactions_per_s,
            rtt_us: rr.rtt_us,
            responses_dropped: rr.responses_dropped,
            busy_poll: r.busy_poll(),
            xsk: s.xsk.any().then(|| self.xsk.clone()),
        }
    }
}

/// The report's sections, from a run's counters, its scenario and its end state.
struct Sections<'a> {
    m: &'a Metrics,
    s: &'a Scenario,
    snap: &'a Snapshot,
    /// The measured window, in seconds and in picoseconds.
    secs: f64,
    measured_ps: u64,
    classes: usize,
    queues: usize,
}

/// Traffic section: what was offered, delivered and lost, per second.
struct TrafficSection {
    offered_pps: f64,
    offered_gbps: f64,
    frame_bytes: FrameBytes,
    throughput_pps: f64,
    loss_ratio: f64,
}

/// CPU section: time by category, and the cycles each delivered packet cost.
struct CpuSection {
    share: CpuShare,
    ps: CpuPs,
    cycles_per_packet: Option<f64>,
    load_latency_product: Option<f64>,
}

/// Interrupts section: IRQ and poll rates, and the event counts.
struct InterruptSection {
    irq_per_s: f64,
    polls_per_s: f64,
    packets_per_poll: Option<f64>,
    packets_per_poll_hist: Option<PollHist>,
    counts: Counts,
}

/// Request/response section (`traffic.kind = "rr"` only).
struct RrSection {
    transactions_per_s: Option<f64>,
    rtt_us: Option<Latency>,
    responses_dropped: Option<u64>,
}

/// Busy CPU cycles per delivered packet: `busy` of `cores` cores at `ghz`, delivering `pps`
/// (`n` packets in all).
fn cycles_per_packet(busy: f64, cores: f64, ghz: f64, pps: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| busy * cores * ghz * 1e9 / pps)
}

/// Packets per poll, if any poll was made.
fn per_poll(packets: u64, polls: u64) -> Option<f64> {
    (polls > 0).then(|| packets as f64 / polls as f64)
}

impl<'a> Sections<'a> {
    fn new(m: &'a Metrics, s: &'a Scenario, snap: &'a Snapshot) -> Sections<'a> {
        let measured = m.end - m.warmup;
        Sections {
            m,
            s,
            snap,
            secs: measured.as_secs_f64(),
            measured_ps: measured.ps(),
            classes: m.classes,
            queues: s.nic.queues,
        }
    }

    /// Events per second of the window.
    fn rate(&self, n: u64) -> f64 {
        n as f64 / self.secs
    }

    // ----- the (queue, class) and (app, class) parts, summed ------------------------------

    fn queue_path(&self, q: usize) -> PathStats {
        tally(row(&self.m.path, self.classes, q))
    }

    fn class_path(&self, c: usize) -> PathStats {
        tally(column(&self.m.path, self.classes, c))
    }

    fn all_paths(&self) -> PathStats {
        tally(self.m.path.iter())
    }

    fn app_of(&self, a: usize) -> AppStats {
        tally(row(&self.m.app, self.classes, a))
    }

    fn class_app(&self, c: usize) -> AppStats {
        tally(column(&self.m.app, self.classes, c))
    }

    fn all_apps(&self) -> AppStats {
        tally(self.m.app.iter())
    }

    /// Packets in the rings at the end, of the (queue, class) slots `slot` picks.
    fn in_ring(&self, slot: impl Fn(usize) -> bool) -> u64 {
        let v = &self.snap.in_ring;
        (0..v.len()).filter(|&i| slot(i)).map(|i| v[i]).sum()
    }

    // ----- CPU time -------------------------------------------------------------------------

    /// CPU shares of `cores` cores together: each counts 1/cores.
    fn shares(&self, ps: &[u64; N_CATEGORIES], cores: f64) -> CpuShare {
        let share = |c: Category| ps[c as usize] as f64 / (self.measured_ps as f64 * cores);
        let idle = share(Category::Idle);
        CpuShare {
            busy: 1.0 - idle,
            irq: share(Category::Irq),
            softirq: share(Category::Softirq),
            ksoftirqd: share(Category::Ksoftirqd),
            app: share(Category::App),
            idle,
            busy_poll: share(Category::BusyPoll),
            napi_thread: self
                .s
                .kernel
                .any_threaded()
                .then(|| share(Category::NapiThread)),
            sender: self.s.sender.runs().then(|| share(Category::Sender)),
        }
    }

    fn cpu_ps(&self, ps: &[u64; N_CATEGORIES], cores: u64) -> CpuPs {
        CpuPs {
            irq: ps[Category::Irq as usize],
            softirq: ps[Category::Softirq as usize],
            ksoftirqd: ps[Category::Ksoftirqd as usize],
            app: ps[Category::App as usize],
            idle: ps[Category::Idle as usize],
            busy_poll: ps[Category::BusyPoll as usize],
            napi_thread: self
                .s
                .kernel
                .any_threaded()
                .then(|| ps[Category::NapiThread as usize]),
            sender: self.s.sender.runs().then(|| ps[Category::Sender as usize]),
            measured: self.measured_ps * cores,
        }
    }

    // ----- the sections -----------------------------------------------------------------------

    /// Where the packets are: counted in the window, and in the host at its ends.
    fn packets(&self, all: &PathStats, all_app: &AppStats) -> Packets {
        let (m, snap) = (self.m, self.snap);
        Packets {
            offered: all.offered,
            delivered: all.delivered,
            dropped_nic: all.dropped_nic,
            dropped_socket: all.dropped_socket,
            in_flight: snap.in_ring.iter().sum(),
            in_flight_at_warmup: m.accepted_before - m.ring_exits_before,
            dropped_tx: all.dropped_tx,
            in_poll: snap.in_poll.iter().sum(),
            consumed: all_app.consumed,
            transmitted: all.transmitted,
            to_stack: all.to_stack,
            in_socket: snap.in_socket.iter().sum(),
            in_app: snap.in_app.iter().sum(),
            in_tx_ring: snap.in_tx_ring.iter().sum(),
            in_host_at_warmup: m.accepted_before - m.host_exits_before,
            in_sender: self.s.sender.runs().then_some(snap.in_sender),
        }
    }

    fn traffic(&self, all: &PathStats) -> TrafficSection {
        // offered frames by size: counted, or all of the one size
        let sizes = match self.m.fixed_size {
            Some(size) => {
                let mut v = vec![0; size as usize + 1];
                v[size as usize] = all.offered;
                v
            }
            None => self.m.sizes.clone(),
        };
        let bytes: u64 = sizes.iter().enumerate().map(|(b, n)| b as u64 * n).sum();
        let dropped = all.dropped_nic + all.dropped_socket + all.dropped_tx;
        TrafficSection {
            offered_pps: self.rate(all.offered),
            offered_gbps: bytes as f64 * 8.0 / self.secs / 1e9,
            frame_bytes: frame_bytes(&sizes),
            throughput_pps: self.rate(all.delivered),
            loss_ratio: if all.offered > 0 {
                dropped as f64 / all.offered as f64
            } else {
                0.0
            },
        }
    }

    /// The whole host's CPU time, and the cycles per packet delivered at `throughput_pps`.
    fn cpu(&self, all: &PathStats, throughput_pps: f64) -> CpuSection {
        let mut total = [0u64; N_CATEGORIES];
        for c in &self.snap.cpu_ps {
            for (x, y) in total.iter_mut().zip(c) {
                *x += y;
            }
        }
        let cores = self.s.host.cores;
        let share = self.shares(&total, cores as f64);
        let cycles = cycles_per_packet(
            share.busy,
            cores as f64,
            self.s.platform.cpu_ghz,
            throughput_pps,
            all.delivered,
        );
        CpuSection {
            ps: self.cpu_ps(&total, cores as u64),
            share,
            cycles_per_packet: cycles,
            load_latency_product: cycles.zip(all.latency.mean_us()).map(|(c, t)| c * t),
        }
    }

    /// Polls by packets, if the scheme's polls are calls of the driver's poll function.
    fn poll_hist<'v>(&self, vectors: impl Iterator<Item = &'v VectorCounts>) -> Option<PollHist> {
        (!self.s.scheme.uses_poll_loop()).then(|| {
            let mut h = PollHist::default();
            for v in vectors {
                h.add(&v.ppp_hist);
            }
            h
        })
    }

    fn interrupts(&self) -> InterruptSection {
        let mut vc = VectorCounts::default();
        for v in &self.m.vectors {
            vc.irqs += v.irqs;
            vc.polls += v.polls;
            vc.polled_packets += v.polled_packets;
            vc.timer_ticks += v.timer_ticks;
            vc.mode_switches += v.mode_switches;
            vc.moderation_writes += v.moderation_writes;
            vc.tx_cleaned += v.tx_cleaned;
        }
        let mut cc = CoreCounts::default();
        for c in &self.m.cores {
            cc.softirq_runs += c.softirq_runs;
            cc.ksoftirqd_wakeups += c.ksoftirqd_wakeups;
            cc.time_squeeze += c.time_squeeze;
            cc.context_switches += c.context_switches;
        }
        InterruptSection {
            irq_per_s: self.rate(vc.irqs),
            polls_per_s: self.rate(vc.polls),
            packets_per_poll: per_poll(vc.polled_packets, vc.polls),
            packets_per_poll_hist: self.poll_hist(self.m.vectors.iter()),
            counts: Counts {
                irqs: vc.irqs,
                polls: vc.polls,
                polled_packets: vc.polled_packets,
                softirq_runs: cc.softirq_runs,
                ksoftirqd_wakeups: cc.ksoftirqd_wakeups,
                time_squeeze: cc.time_squeeze,
                timer_ticks: vc.timer_ticks,
                mode_switches: vc.mode_switches,
                moderation_writes: vc.moderation_writes,
                context_switches: cc.context_switches,
                tx_cleaned: vc.tx_cleaned,
            },
        }
    }

    /// Every scenario key with the value the run used.
    fn scenario(&self) -> BTreeMap<String, Value> {
        self.s
            .params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn per_core(&self) -> Vec<CoreReport> {
        (0..self.s.host.cores).map(|c| self.core(c)).collect()
    }

    /// Core `c`: its vectors' receive path and counts, its apps, its CPU time.
    fn core(&self, c: usize) -> CoreReport {
        let (s, classes) = (self.s, self.classes);
        let vectors: Vec<usize> = s.topology.core_vectors[c]
            .iter()
            .map(|&v| v as usize)
            .collect();
        let mut p = PathStats::default();
        let mut v = VectorCounts::default();
        let mut in_fl = 0;
        for &q in &vectors {
            p.add(&self.queue_path(q));
            let x = &self.m.vectors[q];
            v.irqs += x.irqs;
            v.polls += x.polls;
            v.polled_packets += x.polled_packets;
            v.timer_ticks += x.timer_ticks;
            in_fl += self.in_ring(|i| i / classes == q);
        }
        let mut app = AppStats::default();
        for (a, cfg) in s.apps.iter().enumerate() {
            if cfg.core == c {
                app.add(&self.app_of(a));
            }
        }
        let ps = &self.snap.cpu_ps[c];
        let cpu = self.shares(ps, 1.0);
        let thr = self.rate(p.delivered);
        let k = &self.m.cores[c];
        CoreReport {
            core: c,
            vectors,
            path: path_report(&p, in_fl, self.secs),
            app_latency_us: app.latency.report(),
            goodput_bps: self.rate(app.ip_bytes),
            cycles_per_packet: cycles_per_packet(
                cpu.busy,
                1.0,
                s.platform.cpu_ghz,
                thr,
                p.delivered,
            ),
            cpu,
            cpu_ps: self.cpu_ps(ps, 1),
            irq_per_s: self.rate(v.irqs),
            polls_per_s: self.rate(v.polls),
            packets_per_poll: per_poll(v.polled_packets, v.polls),
            counts: CoreReportCounts {
                irqs: v.irqs,
                polls: v.polls,
                polled_packets: v.polled_packets,
                timer_ticks: v.timer_ticks,
                softirq_runs: k.softirq_runs,
                ksoftirqd_wakeups: k.ksoftirqd_wakeups,
                time_squeeze: k.time_squeeze,
                context_switches: k.context_switches,
            },
        }
    }

    fn per_queue(&self) -> Vec<QueueReport> {
        let (topo, classes) = (&self.s.topology, self.classes);
        (0..self.queues)
            .map(|q| {
                let v = &self.m.vectors[q];
                QueueReport {
                    queue: q,
                    core: topo.vector_core[q] as usize,
                    flows: topo.queue_flows[q],
                    path: path_report(
                        &self.queue_path(q),
                        self.in_ring(|i| i / classes == q),
                        self.secs,
                    ),
                    in_tx_ring: self.snap.in_tx_ring[q],
                    irq_per_s: self.rate(v.irqs),
                    polls_per_s: self.rate(v.polls),
                    packets_per_poll: per_poll(v.polled_packets, v.polls),
                    packets_per_poll_hist: self.poll_hist(std::iter::once(v)),
                    counts: v.clone(),
                }
            })
            .collect()
    }

    fn per_class(&self) -> Vec<ClassReport> {
        let classes = self.classes;
        (0..classes)
            .map(|c| {
                let a = self.class_app(c);
                ClassReport {
                    class: self.s.traffic.classes[c].name.clone(),
                    share: self.s.traffic.classes[c].share,
                    path: path_report(
                        &self.class_path(c),
                        self.in_ring(|i| i % classes == c),
                        self.secs,
                    ),
                    consumed: a.consumed,
                    goodput_bps: self.rate(a.ip_bytes),
                    app_latency_us: a.latency.report(),
                }
            })
            .collect()
    }

    fn per_app(&self) -> Vec<AppReport> {
        let (s, snap) = (self.s, self.snap);
        (0..s.apps.len())
            .map(|i| {
                let a = self.app_of(i);
                AppReport {
                    app: i,
                    core: s.apps[i].core,
                    flows: s.topology.app_flows[i],
                    consumed: a.consumed,
                    dropped_socket: a.dropped_socket,
                    in_socket: snap.in_socket[i],
                    in_app: snap.in_app[i],
                    consumed_pps: self.rate(a.consumed),
                    goodput_bps: self.rate(a.ip_bytes),
                    app_latency_us: a.latency.report(),
                    wakeup_delay_us: self.m.wakeup[i].report(),
                    wakeups: self.m.wakeup[i].n,
                }
            })
            .collect()
    }

    /// What the result depends on beyond the model's sources.
    fn notes(&self) -> Vec<String> {
        self.s
            .adapt
            .scheme
            .choice_note()
            .map(str::to_string)
            .into_iter()
            .collect()
    }

    fn request_response(&self) -> RrSection {
        let (rr, on) = (&self.m.rr, self.s.rr.is_some());
        RrSection {
            transactions_per_s: on.then(|| self.rate(rr.transactions)),
            rtt_us: on.then(|| rr.rtt.report()),
            responses_dropped: on.then_some(rr.responses_dropped),
        }
    }

    /// Busy polling's counts, when an app may busy-poll or waits with epoll.
    fn busy_poll(&self) -> Option<BusyPollCounts> {
        let s = self.s;
        (s.busy.any() || s.apps.iter().any(|a| a.io == crate::busypoll::Io::Epoll))
            .then(|| self.m.busy.clone())
    }
}

/// The distribution of the offered frames' sizes, from their counts by size.
fn frame_bytes(sizes: &[u64]) -> FrameBytes {
    let n: u64 = sizes.iter().sum();
    let sum: u64 = sizes.iter().enumerate().map(|(b, c)| b as u64 * c).sum();
    // the smallest size with at least per_mille/1000 of the frames at or below it
    let q = |per_mille: u64| {
        (n > 0).then(|| {
            let rank = (n * per_mille).div_ceil(1000).max(1);
            let mut seen = 0;
            sizes
                .iter()
                .position(|&c| {
                    seen += c;
                    seen >= rank
                })
                .unwrap_or(0) as u32
        })
    };
    FrameBytes {
        mean: (n > 0).then(|| sum as f64 / n as f64),
        min: sizes.iter().position(|&c| c > 0).map(|b| b as u32),
        p50: q(500),
        p90: q(900),
        p99: q(990),
        max: sizes.iter().rposition(|&c| c > 0).map(|b| b as u32),
    }
}

/// Sizes of the frames offered in the window, bytes (Ethernet frames, FCS included); exact
/// (a percentile is the smallest size at or below which that share of the frames lies).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrameBytes {
    pub mean: Option<f64>,
    pub min: Option<u32>,
    pub p50: Option<u32>,
    pub p90: Option<u32>,
    pub p99: Option<u32>,
    pub max: Option<u32>,
}

/// Ethernet header and FCS: a frame's bytes beyond its IP packet.
pub const ETH_OVERHEAD_BYTES: u32 = 18;

fn path_report(p: &PathStats, in_flight: u64, secs: f64) -> PathReport {
    let dropped = p.dropped_nic + p.dropped_socket + p.dropped_tx;
    PathReport {
        offered: p.offered,
        delivered: p.delivered,
        dropped_nic: p.dropped_nic,
        dropped_socket: p.dropped_socket,
        dropped_tx: p.dropped_tx,
        in_flight,
        offered_pps: p.offered as f64 / secs,
        throughput_pps: p.delivered as f64 / secs,
        loss_ratio: if p.offered > 0 {
            dropped as f64 / p.offered as f64
        } else {
            0.0
        },
        latency_us: p.latency.report(),
    }
}

/// Packet counts in the measured window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Packets {
    pub offered: u64,
    /// Finished protocol processing and taken by a socket, a Tx ring or the stack.
    pub delivered: u64,
    /// The Rx ring was full.
    pub dropped_nic: u64,
    /// The socket's receive buffer was full.
    pub dropped_socket: u64,
    /// In the Rx rings at the end of the run (waiting, or in protocol processing).
    pub in_flight: u64,
    /// In the Rx rings when the window opened.
    pub in_flight_at_warmup: u64,
    /// The Tx ring was full.
    pub dropped_tx: u64,
    /// Of `in_flight`, in protocol processing at the end.
    pub in_poll: u64,
    /// Finished by their app.
    pub consumed: u64,
    /// Sent, and their Tx descriptor cleaned.
    pub transmitted: u64,
    /// Delivered to the stack (no app reads them, the host does not forward).
    pub to_stack: u64,
    /// In sockets, being handled by apps, in Tx rings at the end.
    pub in_socket: u64,
    pub in_app: u64,
    pub in_tx_ring: u64,
    /// Anywhere in the host when the window opened.
    pub in_host_at_warmup: u64,
    /// Due but not yet sent by the sending thread at the end (`[sender]` only): not yet
    /// offered to the device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_sender: Option<u64>,
}

/// Latency, µs. `None` if nothing was recorded. Percentiles from the HDR histogram
/// (3 significant digits); mean, min and max exact.
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

/// CPU time by category, as fractions of the measured time (of all cores together).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuShare {
    pub busy: f64,
    pub irq: f64,
    pub softirq: f64,
    pub ksoftirqd: f64,
    pub app: f64,
    pub idle: f64,
    /// Apps' threads busy-polling (their time outside `app`).
    pub busy_poll: f64,
    /// NAPI threads' polls (`kernel.threaded_napi` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub napi_thread: Option<f64>,
    /// The sending thread (`sender.cost_ns` > 0 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender: Option<f64>,
}

/// CPU time by category, exact picoseconds; they sum to `measured` (the measured time times
/// the cores).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuPs {
    pub irq: u64,
    pub softirq: u64,
    pub ksoftirqd: u64,
    pub app: u64,
    pub idle: u64,
    pub busy_poll: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub napi_thread: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender: Option<u64>,
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
    /// Context switches between threads (ksoftirqd, apps).
    pub context_switches: u64,
    /// Tx descriptors cleaned.
    pub tx_cleaned: u64,
}

/// The receive path's figures for a part of the host (a core, a queue, a class).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathReport {
    pub offered: u64,
    pub delivered: u64,
    pub dropped_nic: u64,
    pub dropped_socket: u64,
    pub dropped_tx: u64,
    pub in_flight: u64,
    pub offered_pps: f64,
    pub throughput_pps: f64,
    pub loss_ratio: f64,
    pub latency_us: Latency,
}

/// One core.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreReport {
    pub core: usize,
    /// The vectors whose IRQ and NAPI run here.
    pub vectors: Vec<usize>,
    #[serde(flatten)]
    pub path: PathReport,
    /// Apps on this core.
    pub app_latency_us: Latency,
    pub goodput_bps: f64,
    pub cpu: CpuShare,
    pub cpu_ps: CpuPs,
    pub irq_per_s: f64,
    pub polls_per_s: f64,
    pub packets_per_poll: Option<f64>,
    pub cycles_per_packet: Option<f64>,
    pub counts: CoreReportCounts,
}

/// A core's event counts (its vectors' and its own).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreReportCounts {
    pub irqs: u64,
    pub polls: u64,
    pub polled_packets: u64,
    pub timer_ticks: u64,
    pub softirq_runs: u64,
    pub ksoftirqd_wakeups: u64,
    pub time_squeeze: u64,
    pub context_switches: u64,
}

/// One queue vector.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueReport {
    pub queue: usize,
    pub core: usize,
    /// Flows RSS steers here.
    pub flows: u32,
    #[serde(flatten)]
    pub path: PathReport,
    pub in_tx_ring: u64,
    pub irq_per_s: f64,
    pub polls_per_s: f64,
    pub packets_per_poll: Option<f64>,
    /// This vector's polls by the packets each processed (as the report's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets_per_poll_hist: Option<PollHist>,
    pub counts: VectorCounts,
}

/// One traffic class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassReport {
    pub class: String,
    pub share: f64,
    #[serde(flatten)]
    pub path: PathReport,
    pub consumed: u64,
    pub goodput_bps: f64,
    pub app_latency_us: Latency,
}

/// One app.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppReport {
    pub app: usize,
    pub core: usize,
    pub flows: u32,
    pub consumed: u64,
    pub dropped_socket: u64,
    pub in_socket: u64,
    pub in_app: u64,
    pub consumed_pps: f64,
    /// Bytes per second at IP length the app finished.
    pub goodput_bps: f64,
    pub app_latency_us: Latency,
    /// Wake-up delay: from the wake-up of the sleeping app (a packet queued on its socket,
    /// `try_to_wake_up`) to the start of its context switch in (where the kernel's
    /// `sched:sched_switch` tracepoint fires), for each wake-up whose switch completed in the
    /// window. The model's switch is a thread-level job of `platform.ctx_switch_ns` that
    /// interrupts and softirqs may preempt, so the delay is its completion less the wake-up
    /// less its drawn cost: the wait for the core (a thread running on, softirq work on the
    /// core) and any preemption of the switch itself. The switch's own cost is not in it, as
    /// the tracepoint leaves it out.
    pub wakeup_delay_us: Latency,
    /// The wake-ups whose delay `wakeup_delay_us` counts.
    pub wakeups: u64,
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
    /// Offered frame bits per second (destination address to FCS), Gbit/s.
    pub offered_gbps: f64,
    /// Sizes of the offered frames.
    pub frame_bytes: FrameBytes,
    /// Packets delivered per second (the end of protocol processing).
    pub throughput_pps: f64,
    /// Dropped anywhere, per offered packet.
    pub loss_ratio: f64,
    /// NIC arrival → end of protocol processing (for forwarded packets: handed to the Tx ring).
    pub latency_us: Latency,
    pub cpu: CpuShare,
    pub cpu_ps: CpuPs,
    pub irq_per_s: f64,
    pub polls_per_s: f64,
    pub packets_per_poll: Option<f64>,
    /// Calls of the driver's poll function by the packets each processed, in bpftrace's log2
    /// buckets ([`PollHist`]): the softirq's, NAPI threads' and busy loops' polls that
    /// returned in the window, empty polls in "0". Absent for the schemes of Salah's polling
    /// loop (`disable-enable`, `poll`, `napi-poll`, `hybrid`), whose polls are not calls of
    /// the driver's poll function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets_per_poll_hist: Option<PollHist>,
    /// Busy CPU cycles per delivered packet (Emmerich et al. `c_pkt = l·f_CPU / r`).
    pub cycles_per_packet: Option<f64>,
    /// `P_ll = c_pkt · t`: cycles per packet times mean latency (cycles·µs).
    pub load_latency_product: Option<f64>,
    pub counts: Counts,
    /// Every scenario key with the value the run used (defaults filled in): enough to re-run it.
    pub scenario: BTreeMap<String, Value>,
    /// NIC arrival → its app finished it.
    pub app_latency_us: Latency,
    /// Bytes per second at IP length (frame − 18) the apps finished.
    pub goodput_bps: f64,
    pub per_core: Vec<CoreReport>,
    pub per_queue: Vec<QueueReport>,
    pub per_class: Vec<ClassReport>,
    pub per_app: Vec<AppReport>,
    /// What the result depends on beyond the model's sources (a rule a paper leaves open,
    /// which irqlab chose); none for most scenarios.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How a replayed capture went (`traffic.kind = "pcap"` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::traffic::replay::ReplayReport>,
    /// Request/response traffic (`traffic.kind = "rr"`): transactions completed per second,
    /// their round-trip times (request at the NIC to response back at the client), responses
    /// dropped at a full Tx ring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transactions_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<Latency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub responses_dropped: Option<u64>,
    /// Busy polling's counts, when an app may busy-poll or waits with epoll.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_poll: Option<BusyPollCounts>,
    /// The AF_XDP apps' counts, when an app reads an XSK.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xsk: Option<XskCounts>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Value::{Float, Int, Str};

    #[test]
    fn percentiles_stay_within_the_exact_extremes() {
        // 5,468,158,488 ps lands in a bucket whose top is 5,468,159 ns: without the bound
        // every percentile of a single sample would exceed its maximum.
        let mut l = LatencyStats::default();
        l.record(5_468_158_488_000);
        let r = l.report();
        let max = r.max.unwrap();
        assert_eq!(max, 5_468_158.488);
        for p in [r.p50, r.p90, r.p99, r.p999] {
            assert_eq!(p.unwrap(), max);
        }
        // and none falls below the minimum: 1,000,500 ps is kept as 1,000 ns
        let mut l = LatencyStats::default();
        l.record(1_000_500);
        l.record(2_000_000);
        let r = l.report();
        assert_eq!(r.p50.unwrap(), 1.0005);
        assert_eq!(r.p999.unwrap(), 2.0);
    }

    #[test]
    fn bucket_counts_make_the_histogram_that_recording_each_value_makes() {
        // values at every magnitude up to the clamp, and each octave's edges
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut values: Vec<u64> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> (x % 64)).min(HIST_MAX_NS)
            })
            .collect();
        for k in 0..42 {
            values.extend([(1 << k) - 1, 1 << k, (1 << k) + 1, (3 << k) / 2]);
        }
        let mut l = LatencyStats::default();
        let mut direct = Histogram::<u64>::new(HIST_SIGFIG).unwrap();
        for &ns in &values {
            let ns = ns.min(HIST_MAX_NS);
            l.record(ns * PS_PER_NS);
            direct.record(ns).unwrap();
        }
        let built = l.histogram();
        assert_eq!(built.len(), direct.len());
        let counts = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(counts(&built), counts(&direct));
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                built.value_at_quantile(q),
                direct.value_at_quantile(q),
                "q = {q}"
            );
        }
        // every bucket up to the clamp is one of the library's: it starts at its lowest
        // equivalent value, the next one where the library's next bucket starts, and each
        // bucket's first value maps back to it
        for i in 0..hdr_bucket(HIST_MAX_NS) {
            let v = hdr_bucket_value(i);
            assert_eq!(direct.lowest_equivalent(v), v, "bucket {i}");
            assert_eq!(
                direct.next_non_equivalent(v),
                hdr_bucket_value(i + 1),
                "bucket {i}"
            );
            assert_eq!(hdr_bucket(v), i);
        }
    }

    #[test]
    fn merged_samples_count_in_their_buckets_as_one_set() {
        // a short and a long set: the merge grows the short one's buckets
        let (mut a, mut b, mut both) = (
            LatencyStats::default(),
            LatencyStats::default(),
            LatencyStats::default(),
        );
        for ns in [5, 700, 3_000, 90_000] {
            a.record(ns * PS_PER_NS);
            both.record(ns * PS_PER_NS);
        }
        for ns in [6, 3_001, 7_000_000_000] {
            b.record(ns * PS_PER_NS);
            both.record(ns * PS_PER_NS);
        }
        let mut short = LatencyStats::default();
        short.record(10 * PS_PER_NS);
        short.merge(&a);
        short.merge(&b);
        both.record(10 * PS_PER_NS);
        assert_eq!(short.counts, both.counts);
        assert_eq!(short.report(), both.report());
    }

    #[test]
    fn without_samples_every_latency_figure_is_none() {
        let r = LatencyStats::default().report();
        assert_eq!(
            [r.mean, r.p50, r.p90, r.p99, r.p999, r.min, r.max],
            [None; 7]
        );
        // one sample: all of them are it
        let mut l = LatencyStats::default();
        l.record(3_000_000);
        let r = l.report();
        assert_eq!(
            [r.mean, r.p50, r.p90, r.p99, r.p999, r.min, r.max],
            [Some(3.0); 7]
        );
    }

    #[test]
    fn a_polls_bucket_is_bpftraces_log2_bucket() {
        // (work, bucket, the bucket's smallest count)
        for (work, k, lower) in [
            (0, 0, 0),
            (1, 1, 1),
            (2, 2, 2),
            (3, 2, 2),
            (4, 3, 4),
            (7, 3, 4),
            (8, 4, 8),
            (63, 6, 32),
            (64, 7, 64),
            (65, 7, 64),
            (65_535, 16, 32_768),
            (65_536, 17, 65_536),
        ] {
            assert_eq!(ppp_bucket(work), k, "work {work}");
            assert_eq!(ppp_bucket_lower(k), lower, "bucket {k}");
        }
        // every bucket below the top holds [lower, next lower − 1]; the top one the rest
        for k in 0..PPP_BUCKETS - 1 {
            let (lo, hi) = (ppp_bucket_lower(k), ppp_bucket_lower(k + 1) - 1);
            assert_eq!((ppp_bucket(lo), ppp_bucket(hi)), (k, k), "bucket {k}");
        }
        assert_eq!(ppp_bucket(1 << 30), PPP_BUCKETS - 1);
        assert_eq!(ppp_bucket(u64::MAX), PPP_BUCKETS - 1);
    }

    #[test]
    fn a_poll_histogram_is_a_map_of_the_buckets_that_counted_in_ascending_order() {
        let mut h = PollHist::default();
        for work in [0, 1, 1, 5, 64, 6, 300] {
            h.0[ppp_bucket(work)] += 1;
        }
        assert_eq!(h.polls(), 7);
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json, r#"{"0":1,"1":2,"4":2,"64":1,"256":1}"#);
        assert_eq!(serde_json::to_string(&PollHist::default()).unwrap(), "{}");
    }

    #[test]
    fn frame_bytes_describe_the_offered_sizes_and_are_none_without_frames() {
        // two frames of 64 B and two of 1500 B (index = size, value = count)
        let mut sizes = vec![0u64; 1501];
        sizes[64] = 2;
        sizes[1500] = 2;
        let f = frame_bytes(&sizes);
        assert_eq!(f.mean, Some(782.0));
        assert_eq!((f.min, f.max), (Some(64), Some(1500)));
        assert_eq!((f.p50, f.p90, f.p99), (Some(64), Some(1500), Some(1500)));
        let none = frame_bytes(&[0; 100]);
        assert_eq!(
            (none.mean, none.min, none.p50, none.max),
            (None, None, None, None)
        );
    }

    /// The report of the scenario these pairs make.
    fn report_of(pairs: &[(&str, Value)]) -> crate::Report {
        let s = crate::Scenario::from_pairs(pairs.iter().cloned()).expect("a valid scenario");
        crate::run(&s)
    }

    #[test]
    fn a_cores_timer_ticks_are_its_vectors() {
        // pure polling on two cores, a vector each: each core's polling-timer interrupts are
        // its vector's, and together the host's
        let r = report_of(&[
            ("scheme", Str("poll".into())),
            ("host.cores", Int(2)),
            ("nic.queues", Int(2)),
            ("traffic.flows", Int(64)),
            ("run.duration_ms", Float(2.0)),
        ]);
        assert!(r.counts.timer_ticks > 0);
        for c in 0..2 {
            assert_eq!(
                r.per_core[c].counts.timer_ticks, r.per_queue[c].counts.timer_ticks,
                "core {c}"
            );
        }
        assert_eq!(
            r.per_core[0].counts.timer_ticks + r.per_core[1].counts.timer_ticks,
            r.counts.timer_ticks
        );
    }

    #[test]
    fn losses_rates_and_the_load_latency_product_are_what_they_are_defined_as() {
        // an app whose socket holds two packets, too slow for the offered load: drops at the
        // NIC are none (a large ring), drops at the socket many
        let r = report_of(&[
            ("traffic.rate_pps", Float(50_000.0)),
            ("nic.ring_descriptors", Int(4096)),
            ("app.0.core", Int(0)),
            ("app.0.cost_ns", Float(40_000.0)),
            ("socket.rcvbuf_bytes", Int(2 * 2304)),
            ("run.duration_ms", Float(20.0)),
        ]);
        let p = &r.packets;
        assert!(p.dropped_socket > 100 && p.dropped_nic == 0, "{p:?}");
        let dropped = (p.dropped_nic + p.dropped_socket + p.dropped_tx) as f64;
        assert_eq!(r.loss_ratio, dropped / p.offered as f64);
        let q = &r.per_queue[0].path;
        assert_eq!(q.loss_ratio, dropped / q.offered as f64);
        assert_eq!(q.offered_pps, q.offered as f64 / r.measured_s);
        assert_eq!(r.offered_pps, p.offered as f64 / r.measured_s);
        // P_ll = cycles per packet x mean latency
        let (c, t) = (r.cycles_per_packet.unwrap(), r.latency_us.mean.unwrap());
        assert_eq!(r.load_latency_product, Some(c * t));
    }

    #[test]
    fn a_run_that_offers_nothing_loses_nothing() {
        // one packet a second, none in the measured half millisecond: no 0/0 loss ratio
        let r = report_of(&[
            ("traffic.kind", Str("cbr".into())),
            ("traffic.rate_pps", Float(1.0)),
            ("run.warmup_ms", Float(0.5)),
            ("run.duration_ms", Float(1.0)),
        ]);
        assert_eq!(r.packets.offered, 0);
        assert_eq!(r.loss_ratio, 0.0);
        assert_eq!(r.per_queue[0].path.loss_ratio, 0.0);
    }
}
