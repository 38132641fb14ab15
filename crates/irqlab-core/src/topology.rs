//! The host's shape (`host.*`: its cores, whether it forwards) and where everything is: which
//! core serves each queue vector, which queue RSS steers each flow to, and which app reads
//! each flow. Built and checked once, with the scenario. None of these settings is reported
//! as having no effect (no `warnings` here; what a scheme cannot place is an error,
//! `scenario::check_placement`).

use std::sync::Arc;

use crate::error::Error;
use crate::nic::config::NicConfig;
use crate::nic::rss;
use crate::schema::{Params, field_key, keys};
use crate::socket::config::{APP, APP_CORE, APP_FLOWS};

keys! {
    /// The host's keys, and where its vectors are.
    pub KEYS = "host." [
        CORES,
        /// Packets no app reads are transmitted rather than ending in the stack.
        FORWARD,
        /// The core of each vector's IRQ (empty: vector v on core v mod cores).
        IRQ_AFFINITY = "nic.irq_affinity",
    ];
}

/// The host's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct HostConfig {
    pub cores: usize,
    /// Packets no app reads are transmitted (a router) rather than ending in the stack.
    pub forward: bool,
}

/// The host of `p`.
pub fn configure_host(p: &Params) -> Result<HostConfig, Error> {
    Ok(HostConfig {
        cores: p.u64(CORES) as usize,
        forward: p.bool(FORWARD),
    })
}

/// A flow that no app reads.
pub const NO_APP: u16 = u16::MAX;

/// The host's wiring.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// The core of each vector (its IRQ's affinity).
    pub vector_core: Vec<u16>,
    /// The vectors of each core, in vector order (the order their NAPIs are listed in).
    pub core_vectors: Vec<Vec<u16>>,
    /// The queue RSS steers each flow to (shared: a host run core by core gives each core a
    /// copy of the topology, and flows can number a million).
    pub flow_queue: Arc<[u16]>,
    /// The app that reads each flow, or [`NO_APP`].
    pub flow_app: Arc<[u16]>,
    /// In a part of a host run core by core (`host::partition`): the index here of each app of
    /// the whole host ([`NO_APP`]: on another core); `None` for a whole host.
    pub app_local: Option<Vec<u16>>,
    /// Flows steered to each queue.
    pub queue_flows: Vec<u32>,
    /// Flows each app reads.
    pub app_flows: Vec<u32>,
}

impl Topology {
    /// The app reading `flow`, by its index in this host's apps, if any.
    #[inline]
    pub fn app_of(&self, flow: u32) -> Option<u16> {
        let a = self.flow_app[flow as usize];
        if a == NO_APP {
            return None;
        }
        match &self.app_local {
            None => Some(a),
            Some(local) => Some(local[a as usize]).filter(|&l| l != NO_APP),
        }
    }

    /// The wiring of `flows` flows: synthetic ones (`rss::Tuple::of_flow`), or, given
    /// `hashes`, flows with those RSS hashes (a replayed capture's).
    pub fn build(
        p: &Params,
        host: &HostConfig,
        nic: &NicConfig,
        flows: usize,
        hashes: Option<&[u32]>,
        napi_core: Option<usize>,
    ) -> Result<Topology, Error> {
        let cores = host.cores;
        let queues = nic.queues;
        let affinity = p.u64_list(IRQ_AFFINITY);
        let vector_core: Vec<u16> = if let Some(c) = napi_core {
            // a device without an IRQ (veth): its NAPI runs where it is scheduled
            vec![c as u16; queues]
        } else if affinity.is_empty() {
            (0..queues).map(|v| (v % cores) as u16).collect()
        } else {
            if affinity.len() != queues {
                return Err(p.inconsistent(
                    IRQ_AFFINITY,
                    format!(
                        "needs one core per vector: {} entries for nic.queues = {queues}",
                        affinity.len()
                    ),
                ));
            }
            if let Some(v) = affinity.iter().position(|&c| c as usize >= cores) {
                return Err(p.inconsistent(
                    IRQ_AFFINITY,
                    format!(
                        "vector {v} is pinned to core {}, but host.cores = {cores} has cores 0 … {}",
                        affinity[v],
                        cores - 1
                    ),
                ));
            }
            affinity.iter().map(|&c| c as u16).collect()
        };
        let mut core_vectors = vec![Vec::new(); cores];
        for (v, &c) in vector_core.iter().enumerate() {
            core_vectors[c as usize].push(v as u16);
        }
        let flow_queue = match hashes {
            _ if queues == 1 => vec![0; flows],
            Some(h) => rss::queues_of(h, queues, nic.rss_table_size),
            None => rss::flow_queues(flows, queues, nic.rss_table_size),
        };
        let mut queue_flows = vec![0u32; queues];
        for &q in &flow_queue {
            queue_flows[q as usize] += 1;
        }

        let n_apps = p.entries(APP);
        let mut flow_app = vec![NO_APP; flows];
        let mut app_flows = vec![0u32; n_apps];
        // Explicit flow lists first; then each core's remaining flows go round robin to the
        // apps on that core that take the default.
        let mut defaults_by_core: Vec<Vec<u16>> = vec![Vec::new(); cores];
        for (a, count) in app_flows.iter_mut().enumerate() {
            let core_key = field_key(APP, a, APP_CORE);
            let core = p.u64(&core_key) as usize;
            if core >= cores {
                return Err(Error::Inconsistent {
                    key: core_key,
                    value: core.to_string(),
                    reason: format!("host.cores = {cores} has cores 0 … {}", cores - 1),
                });
            }
            let flows_key = field_key(APP, a, APP_FLOWS);
            let list = p.u64_list(&flows_key);
            if list.is_empty() {
                defaults_by_core[if napi_core.is_some() { 0 } else { core }].push(a as u16);
                continue;
            }
            for (k, &f) in list.iter().enumerate() {
                let f = f as usize;
                if list[..k].contains(&(f as u64)) {
                    return Err(p.inconsistent(&flows_key, format!("flow {f} is listed twice")));
                }
                if f >= flows {
                    return Err(p.inconsistent(
                        &flows_key,
                        format!(
                            "flow {f} does not exist: traffic.flows = {flows} has flows 0 … {}",
                            flows - 1
                        ),
                    ));
                }
                if flow_app[f] != NO_APP {
                    return Err(p.inconsistent(
                        &flows_key,
                        format!("flow {f} is read by app {} already", flow_app[f]),
                    ));
                }
                flow_app[f] = a as u16;
                *count += 1;
            }
        }
        let mut next = vec![0usize; cores];
        for f in 0..flows {
            if flow_app[f] != NO_APP {
                continue;
            }
            // a device without an IRQ: its packets go to the apps on any core
            let core = match napi_core {
                Some(_) => 0,
                None => vector_core[flow_queue[f] as usize] as usize,
            };
            let apps = &defaults_by_core[core];
            if apps.is_empty() {
                continue;
            }
            let a = apps[next[core] % apps.len()];
            next[core] += 1;
            flow_app[f] = a;
            app_flows[a as usize] += 1;
        }
        if let Some(a) = app_flows.iter().position(|&n| n == 0) {
            let core = p.u64(&field_key(APP, a, APP_CORE));
            let flows_key = field_key(APP, a, APP_FLOWS);
            return Err(p.inconsistent(
                &flows_key,
                format!(
                    "app {a} reads no flow: no flow is steered to its core {core} (RSS over traffic.flows = {flows}, nic.queues = {queues}) that another app does not read; give its flows"
                ),
            ));
        }
        Ok(Topology {
            vector_core,
            core_vectors,
            flow_queue: flow_queue.into(),
            flow_app: flow_app.into(),
            app_local: None,
            queue_flows,
            app_flows,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Scenario, Value};

    #[test]
    fn apps_sharing_a_core_take_its_flows_in_turn() {
        // one core, three apps reading the default flows (every flow RSS steers to the core)
        let mut pairs = vec![("traffic.flows".to_string(), Value::Int(7))];
        for a in 0..3 {
            pairs.push((format!("app.{a}.core"), Value::Int(0)));
        }
        let s = Scenario::from_pairs(pairs).unwrap();
        let t = &s.topology;
        assert_eq!(t.app_flows, [3, 2, 2]);
        assert_eq!(&t.flow_app[..], [0, 1, 2, 0, 1, 2, 0]);
    }
}
