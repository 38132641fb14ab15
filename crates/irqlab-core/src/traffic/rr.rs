//! Request/response traffic (`traffic.kind = "rr"`): clients whose requests the host's apps
//! answer through the Tx path.
//!
//! Closed loop: each of `rr.clients` clients (one flow each) keeps `rr.outstanding` requests
//! in flight; a response leaving the wire brings that client's next request `rr.remote_us`
//! later (the wire back, the peer, the wire out). A request or response dropped anywhere is
//! sent again `rr.timeout_us` after the drop, so the loop never loses a request. Open loop
//! (`rr.rate_rps` > 0): Poisson requests, handed to the clients in turn; responses bring
//! nothing.
//!
//! The pending requests are a binary heap, sized once for every request in flight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::config::{FLOW_ZIPF_S, FLOWS, RATE_PPS};
use super::{Arrival, Poisson};
use crate::dist::{Cost, Dist};
use crate::error::Error;
use crate::rng::Stream;
use crate::schema::{Params, keys};
use crate::time::{SimDuration, SimTime};
use crate::warnings::Warnings;

/// Its name (`traffic.kind`).
pub const KIND: &str = "rr";
keys! {
    /// The keys of the request/response workload, which only `traffic.kind = "rr"` reads.
    pub KEYS = "rr." [
        CLIENTS,
        OUTSTANDING,
        REMOTE = ["rr.remote_us", "rr.remote_dist"],
        RATE_RPS,
        RESPONSE_BYTES,
        TIMEOUT_US,
    ];
}

/// The request/response workload (`traffic.kind = "rr"`).
#[derive(Clone, Debug, PartialEq)]
pub struct RrConfig {
    pub clients: usize,
    pub outstanding: usize,
    pub remote: Cost,
    /// 0: closed loop.
    pub rate_rps: f64,
    pub response_bytes: u32,
    pub timeout: SimDuration,
}

/// The request/response workload of `p`.
pub fn configure(p: &Params) -> Result<RrConfig, Error> {
    let mean = SimDuration::from_us(p.f64(REMOTE[0]));
    Ok(RrConfig {
        clients: p.u64(CLIENTS) as usize,
        outstanding: p.u64(OUTSTANDING) as usize,
        remote: Cost::of(mean, Dist::read(p, REMOTE[1])?),
        rate_rps: p.f64(RATE_RPS),
        response_bytes: p.u64(RESPONSE_BYTES) as u32,
        timeout: SimDuration::from_us(p.f64(TIMEOUT_US)),
    })
}

/// The workload's settings without it, and what it takes the place of.
pub fn warnings(w: &mut Warnings, chosen: bool) {
    if !chosen {
        for k in KEYS {
            w.changed(k, "has no effect: traffic.kind is not \"rr\"".into());
        }
        return;
    }
    for k in [RATE_PPS, FLOWS, FLOW_ZIPF_S] {
        w.changed(
            k,
            "has no effect: traffic.kind = \"rr\" takes its requests from rr.* (one flow per client)"
                .into(),
        );
    }
    if w.p.f64(RATE_RPS) > 0.0 {
        w.changed(
            OUTSTANDING,
            "has no effect: rr.rate_rps > 0 is an open loop".into(),
        );
    }
}

#[derive(Debug)]
pub struct Rr {
    /// Requests due: (time in ps, order of sending, client).
    due: BinaryHeap<Reverse<(u64, u64, u32)>>,
    sent: u64,
    open: Option<Poisson>,
    clients: u32,
    next_client: u32,
}

impl Rr {
    /// The first requests: every client's, `remote` after time zero.
    pub fn new(cfg: &RrConfig, first: SimTime) -> Rr {
        let in_flight = cfg.clients * cfg.outstanding;
        let mut rr = Rr {
            due: BinaryHeap::with_capacity(in_flight + 1),
            sent: 0,
            open: (cfg.rate_rps > 0.0).then(|| Poisson::new(cfg.rate_rps)),
            clients: cfg.clients as u32,
            next_client: 0,
        };
        if rr.open.is_none() {
            for _ in 0..cfg.outstanding {
                for c in 0..cfg.clients as u32 {
                    rr.push(c, first);
                }
            }
        }
        rr
    }

    /// Whether requests come from the clients' responses (closed loop).
    pub fn closed(&self) -> bool {
        self.open.is_none()
    }

    /// Client `client` sends a request that arrives at `at`.
    #[inline]
    pub fn push(&mut self, client: u32, at: SimTime) {
        self.due.push(Reverse((at.ps(), self.sent, client)));
        self.sent += 1;
    }

    /// The next request to arrive (`u64::MAX` when none is in flight).
    #[inline]
    pub fn next_arrival(&mut self, arrivals: &mut Stream, size_bytes: u32) -> Arrival {
        if let Some(p) = &mut self.open {
            let time = p.next_time(arrivals);
            let c = self.next_client;
            self.next_client = (c + 1) % self.clients;
            return Arrival {
                time,
                size_bytes,
                flow: c,
            };
        }
        match self.due.pop() {
            Some(Reverse((t, _, c))) => Arrival {
                time: SimTime(t),
                size_bytes,
                flow: c,
            },
            None => Arrival {
                time: SimTime(u64::MAX),
                size_bytes,
                flow: 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn cfg(clients: usize, outstanding: usize) -> RrConfig {
        RrConfig {
            clients,
            outstanding,
            remote: Cost {
                mean: SimDuration::ZERO,
                mean_ps: 0.0,
                dist: Dist::Deterministic,
            },
            rate_rps: 0.0,
            response_bytes: 64,
            timeout: SimDuration(1),
        }
    }

    #[test]
    fn a_closed_loop_keeps_every_request_in_flight_and_serves_them_in_time_order() {
        let mut rr = Rr::new(&cfg(2, 3), SimTime(5));
        let mut s = crate::rng::streams(1, 0)[0].clone();
        let first: Vec<Arrival> = (0..6).map(|_| rr.next_arrival(&mut s, 64)).collect();
        assert!(first.iter().all(|a| a.time == SimTime(5)));
        assert_eq!(first.iter().filter(|a| a.flow == 0).count(), 3);
        assert_eq!(rr.next_arrival(&mut s, 64).time, SimTime(u64::MAX));
        rr.push(1, SimTime(9));
        rr.push(0, SimTime(7));
        assert_eq!(rr.next_arrival(&mut s, 64).flow, 0);
        assert_eq!(rr.next_arrival(&mut s, 64).time, SimTime(9));
    }
}
