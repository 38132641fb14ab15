//! A host whose cores do not interact, run core by core.
//!
//! On most multi-queue servers nothing couples one core to another once RSS has chosen a
//! packet's queue: each vector's IRQ, NAPI and moderation run on its own core, and each app
//! reads flows steered to its own core. Such a host is N one-core hosts fed by one traffic
//! source. This module runs it that way: the traffic is generated in windows of a few thousand
//! packets, routed to the cores' buffers by RSS, and each core then runs alone to the window's
//! end, its state hot in the caches, instead of the cores' events interleaving packet by packet
//! (which cost twice the time per packet at 16 cores; benches/README.md).
//!
//! The result is bit-identical to the interleaved run: a core's events are the same and come
//! in the same order (the engine's order restricted to one core), its costs come from its own
//! streams in both, and the counters it adds to are its own. The tests hold the two runs equal
//! over random hosts.
//!
//! A host is run this way when it has several cores, each with at least one vector, no app
//! reads a flow steered to another core, and it does not forward (its Tx rings share the
//! port's wire). Tracers always see the interleaved run.
//!
//! Each core's engine asks the `stop` function as in the interleaved run: before each slice of
//! simulated time, so at least once per core and window.

use super::{Buffer, Feed, Generator, Host, Many, One};
use crate::engine::{Engine, Interrupted};
use crate::metrics::{Metrics, Report, Snapshot};
use crate::rng::{self, N_STREAMS, Stream};
use crate::scenario::Scenario;
use crate::time::SimTime;
use crate::topology::{NO_APP, Topology};
use crate::trace::NoTrace;

/// Packets routed per window, over all cores: each core runs long enough for its state to come
/// back into the caches once per window, and the buffers (24 bytes a packet, written and read
/// in order) stay in a core's L2 cache (196 KB). Larger windows were slower (benches/README.md).
const WINDOW: usize = 8192;

/// Whether `s` can be run core by core (see the module doc).
pub(crate) fn applies(s: &Scenario) -> bool {
    let t = &s.topology;
    s.host.cores > 1
        && !s.host.forward
        && s.nic.device == crate::scenario::Device::Hw
        && !s.kernel.any_threaded()
        && s.rr.is_none()
        && !s.busy.any()
        && s.apps.iter().all(|a| a.io == crate::busypoll::Io::Recv)
        && t.core_vectors.iter().all(|v| !v.is_empty())
        && t.flow_app.iter().zip(t.flow_queue.iter()).all(|(&a, &q)| {
            a == NO_APP || s.apps[a as usize].core == t.vector_core[q as usize] as usize
        })
}

/// One core with its vectors and apps, as a host of its own.
struct Part {
    scenario: Scenario,
    /// Its vectors and apps in the whole host, in their order there.
    vectors: Vec<usize>,
    apps: Vec<usize>,
}

impl Part {
    fn of(s: &Scenario, core: usize) -> Part {
        let t = &s.topology;
        let vectors: Vec<usize> = t.core_vectors[core].iter().map(|&v| v as usize).collect();
        let apps: Vec<usize> = (0..s.apps.len())
            .filter(|&a| s.apps[a].core == core)
            .collect();
        let mut app_local = vec![NO_APP; s.apps.len()];
        for (local, &a) in apps.iter().enumerate() {
            app_local[a] = local as u16;
        }
        let mut p = s.clone();
        p.host.cores = 1;
        p.nic.queues = vectors.len();
        p.kernel.napi = vectors.iter().map(|&v| s.kernel.napi[v]).collect();
        p.apps = apps
            .iter()
            .map(|&a| {
                let mut app = s.apps[a].clone();
                app.core = 0;
                app
            })
            .collect();
        p.topology = Topology {
            vector_core: vec![0; vectors.len()],
            core_vectors: vec![(0..vectors.len() as u16).collect()],
            // the whole host's (shared); arrivals come routed, so it is not read here
            flow_queue: t.flow_queue.clone(),
            flow_app: t.flow_app.clone(),
            app_local: Some(app_local),
            queue_flows: vectors.iter().map(|&v| t.queue_flows[v]).collect(),
            app_flows: apps.iter().map(|&a| t.app_flows[a]).collect(),
        };
        Part {
            scenario: p,
            vectors,
            apps,
        }
    }
}

/// A part's host, in the layout it needs.
enum PartHost<'s> {
    One(Box<Host<'s, NoTrace, One, Buffer>>),
    Many(Box<Host<'s, NoTrace, Many, Buffer>>),
}

impl<'s> PartHost<'s> {
    fn new(s: &'s Scenario, streams: [Stream; N_STREAMS]) -> PartHost<'s> {
        let feed = Buffer::default();
        if s.nic.queues == 1 {
            PartHost::One(Box::new(Host::with_feed(s, NoTrace, feed, vec![streams])))
        } else {
            PartHost::Many(Box::new(Host::with_feed(s, NoTrace, feed, vec![streams])))
        }
    }

    /// Runs the host to `t` on the packets of `buffer` (which it leaves there, taken or not),
    /// unless `stop` says to stop first.
    fn run_until(
        &mut self,
        e: &mut Engine,
        t: SimTime,
        buffer: &mut Buffer,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<(), Interrupted> {
        match self {
            PartHost::One(h) => {
                std::mem::swap(&mut h.feed, buffer);
                let done = e.run_until(&mut **h, t, stop);
                std::mem::swap(&mut h.feed, buffer);
                done
            }
            PartHost::Many(h) => {
                std::mem::swap(&mut h.feed, buffer);
                let done = e.run_until(&mut **h, t, stop);
                std::mem::swap(&mut h.feed, buffer);
                done
            }
        }
    }

    fn finish(self, e: &mut Engine, end: SimTime) -> (Metrics, Snapshot) {
        match self {
            PartHost::One(mut h) => {
                e.finish(&mut *h, end);
                h.into_results()
            }
            PartHost::Many(mut h) => {
                e.finish(&mut *h, end);
                h.into_results()
            }
        }
    }
}

/// Runs `s` core by core ([`applies`] must hold), unless `stop` says to stop first.
pub(crate) fn run(s: &Scenario, stop: &mut dyn FnMut() -> bool) -> Result<Report, Interrupted> {
    debug_assert!(applies(s));
    let cores = s.host.cores;
    let (warmup, end) = (s.run.warmup, s.run.end);
    let streams = rng::core_streams(s.run.seed, s.run.replication, cores);
    let mut traffic = Generator::new(s, &streams[0]);
    let parts: Vec<Part> = (0..cores).map(|c| Part::of(s, c)).collect();
    // each flow's core (RSS: its queue's core) and its vector's index there
    let mut vector_route = vec![(0u32, 0u16); s.nic.queues];
    for (c, part) in parts.iter().enumerate() {
        for (local, &v) in part.vectors.iter().enumerate() {
            vector_route[v] = (c as u32, local as u16);
        }
    }
    let route: Vec<(u32, u16)> = s
        .topology
        .flow_queue
        .iter()
        .map(|&q| vector_route[q as usize])
        .collect();
    let mut buffers: Vec<Buffer> = (0..cores).map(|_| Buffer::default()).collect();
    let mut hosts: Vec<PartHost> = parts
        .iter()
        .zip(streams)
        .map(|(p, streams)| PartHost::new(&p.scenario, streams))
        .collect();
    let mut engines: Vec<Engine> = (0..cores).map(|_| Engine::new(warmup)).collect();
    // every core has handled every event before this time
    let mut reached = SimTime::ZERO;
    loop {
        for b in &mut buffers {
            b.compact();
        }
        let mut routed = 0;
        while routed < WINDOW && traffic.next_ps() < end.ps() {
            let mut r = traffic.take_unsteered();
            let (c, local) = route[r.flow as usize];
            r.vector = local;
            buffers[c as usize].push(r);
            routed += 1;
        }
        // every arrival before `until` is routed
        let until = SimTime(traffic.next_ps().min(end.ps()));
        for ((h, e), b) in hosts.iter_mut().zip(&mut engines).zip(&mut buffers) {
            h.run_until(e, until, b, stop)
                .map_err(|_| Interrupted { at: reached })?;
        }
        reached = until;
        if until >= end {
            break;
        }
    }
    let mut metrics = Metrics::new(s);
    let classes = s.traffic.classes.len();
    let mut snap = Snapshot {
        in_ring: vec![0; s.nic.queues * classes],
        in_poll: vec![0; s.nic.queues * classes],
        in_socket: vec![0; s.apps.len()],
        in_app: vec![0; s.apps.len()],
        in_tx_ring: vec![0; s.nic.queues],
        cpu_ps: Vec::with_capacity(cores),
        in_sender: 0,
    };
    for ((c, h), (part, e)) in hosts
        .into_iter()
        .enumerate()
        .zip(parts.iter().zip(&mut engines))
    {
        let (m, p) = h.finish(e, end);
        metrics.absorb(m, c, &part.vectors, &part.apps);
        for (local, &v) in part.vectors.iter().enumerate() {
            for class in 0..classes {
                snap.in_ring[v * classes + class] = p.in_ring[local * classes + class];
                snap.in_poll[v * classes + class] = p.in_poll[local * classes + class];
            }
            snap.in_tx_ring[v] = p.in_tx_ring[local];
        }
        for (local, &a) in part.apps.iter().enumerate() {
            snap.in_socket[a] = p.in_socket[local];
            snap.in_app[a] = p.in_app[local];
        }
        snap.cpu_ps.push(p.cpu_ps[0]);
    }
    let mut report = metrics.report(s, &snap);
    report.replay = traffic.replay_report();
    Ok(report)
}
