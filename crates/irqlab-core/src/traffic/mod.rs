//! Traffic: packet sources, one file per kind (`traffic.kind`): [`poisson`](Poisson), [`cbr`](Cbr),
//! [`onoff`] (Pareto ON/OFF), [`pcap`] (a capture replayed by [`replay`], read by [`capture`])
//! and [`rr`] (requests answered by the apps). Each kind's file declares its name and its
//! keys; [`config`] holds the registry of kinds and the settings every kind shares.
//!
//! A source is asked for one arrival at a time; the engine merges it lazily with the other
//! events instead of pre-scheduling arrivals, so memory does not grow with the run. A replayed
//! capture is one more source, whose packets bring their own sizes and flows.

pub mod capture;
mod cbr;
pub mod config;
pub mod onoff;
pub mod pcap;
mod poisson;
pub mod replay;
pub mod rr;

pub use cbr::Cbr;
pub use onoff::OnOff;
pub use poisson::Poisson;
pub use replay::Replay;

use crate::rng::Stream;
use crate::time::SimTime;
pub use config::{SizeDist, TrafficConfig, TrafficKind};

/// One arrival: when, how many bytes, and its flow if the source knows it (a replayed
/// capture; synthetic traffic draws it: [`Arrival::DRAW_FLOW`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: SimTime,
    pub size_bytes: u32,
    pub flow: u32,
}

impl Arrival {
    /// The flow of an arrival whose source does not know it. No flow has this number
    /// (`traffic.flows` ≤ 2^20; a capture numbers its flows from 0, fewer than its packets). A
    /// sentinel rather than an `Option`: the arrival stays 16 bytes.
    pub const DRAW_FLOW: u32 = u32::MAX;
}

/// The arrival processes, dispatched statically.
#[derive(Debug)]
pub enum Process {
    Poisson(Poisson),
    Cbr(Cbr),
    OnOff(Box<OnOff>),
    Replay(Box<Replay>),
    Rr(Box<rr::Rr>),
}

/// An arrival process and the frame sizes it carries.
#[derive(Debug)]
pub struct Source {
    process: Process,
    sizes: SizeDist,
}

impl Source {
    /// The source of `cfg` in a run that ends at `end` (a replay reads no further).
    pub fn new(cfg: &TrafficConfig, rr: Option<&rr::RrConfig>, end: SimTime) -> Source {
        let process = match cfg.kind {
            TrafficKind::Poisson => Process::Poisson(Poisson::new(cfg.rate_pps)),
            TrafficKind::Cbr => Process::Cbr(Cbr::new(cfg.rate_pps)),
            TrafficKind::ParetoOnOff => Process::OnOff(Box::new(OnOff::new(
                cfg.onoff.as_ref().expect("on/off configured"),
            ))),
            TrafficKind::Pcap => Process::Replay(Box::new(Replay::new(
                cfg.replay.as_ref().expect("replay configured"),
                end,
            ))),
            TrafficKind::Rr => {
                let cfg = rr.expect("rr configured");
                Process::Rr(Box::new(rr::Rr::new(cfg, SimTime::ZERO + cfg.remote.mean)))
            }
        };
        Source {
            process,
            sizes: cfg.sizes.clone(),
        }
    }

    /// The next arrival, drawing times from the arrivals stream and sizes from the sizes
    /// stream (fixed sizes draw nothing). Poisson and CBR are inlined into the engine's
    /// loop; the on/off sources and a replay are called out of line.
    #[inline(always)]
    pub fn next_arrival(&mut self, arrivals: &mut Stream, sizes: &mut Stream) -> Arrival {
        let time = match &mut self.process {
            Process::Poisson(s) => s.next_time(arrivals),
            Process::Cbr(s) => s.next_time(),
            Process::OnOff(s) => return on_off_arrival(s, arrivals, &self.sizes, sizes),
            Process::Rr(r) => {
                let size = self.sizes.sample(sizes);
                return rr_arrival(r, arrivals, size);
            }
            Process::Replay(r) => return replayed_arrival(r),
        };
        Arrival {
            time,
            size_bytes: self.sizes.sample(sizes),
            flow: Arrival::DRAW_FLOW,
        }
    }

    /// The request/response clients, for `traffic.kind = "rr"`.
    pub fn rr_mut(&mut self) -> Option<&mut rr::Rr> {
        match &mut self.process {
            Process::Rr(r) => Some(r),
            _ => None,
        }
    }

    /// How the replay went, for a replayed capture.
    pub fn replay_report(&self) -> Option<replay::ReplayReport> {
        match &self.process {
            Process::Replay(r) => Some(r.report()),
            _ => None,
        }
    }
}

#[inline(never)]
fn on_off_arrival(
    s: &mut OnOff,
    arrivals: &mut Stream,
    cfg: &SizeDist,
    sizes: &mut Stream,
) -> Arrival {
    s.next_arrival(arrivals, cfg, sizes)
}

#[inline(never)]
fn rr_arrival(r: &mut rr::Rr, arrivals: &mut Stream, size: u32) -> Arrival {
    r.next_arrival(arrivals, size)
}

#[inline(never)]
fn replayed_arrival(r: &mut Replay) -> Arrival {
    r.next_arrival().unwrap_or(Arrival {
        time: SimTime(u64::MAX),
        size_bytes: 0,
        flow: 0,
    })
}

impl SizeDist {
    /// One frame size.
    #[inline]
    pub fn sample(&self, stream: &mut Stream) -> u32 {
        match self {
            SizeDist::Fixed(s) => *s,
            SizeDist::Table { sizes, cum } => {
                let u = stream.uniform();
                let i = cum.partition_point(|c| *c <= u).min(sizes.len() - 1);
                sizes[i]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_table_draws_each_size_with_its_weight() {
        // 64 B a quarter of the time, 1500 B the rest
        let sizes = SizeDist::Table {
            sizes: vec![64, 1500],
            cum: vec![0.25, 1.0],
        };
        let mut s = crate::rng::streams(1, 0)[crate::rng::StreamId::Sizes as usize].clone();
        let n = 40_000;
        let small = (0..n).filter(|_| sizes.sample(&mut s) == 64).count();
        // within 5 standard deviations of n / 4 (sd = 87)
        assert!(
            (small as f64 - n as f64 / 4.0).abs() < 450.0,
            "{small} of {n}"
        );
    }
}
