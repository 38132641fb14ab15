//! `rr`: two queue vectors on one core, the BE one (vector 0) and the RT one (vector 1), each
//! with its own ring, IRQ line and NAPI of the full weight; `net_rx_action` serves them round
//! robin.

use super::config::{Context, QosConfig, RT_SHARE};
use crate::error::Error;
use crate::nic::config::QUEUES as NIC_QUEUES;
use crate::topology::{CORES, IRQ_AFFINITY};

/// Its name (`qos.strategy`).
pub const KIND: &str = "rr";
/// The `qos.*` keys it reads.
pub const KEYS: &[&str] = &[RT_SHARE];
/// The queue vectors it needs (set unless `nic.queues` is given).
pub const QUEUES: i128 = 2;

/// Its two vectors, checked to be on one core.
pub fn configure(c: &Context) -> Result<QosConfig, Error> {
    let (p, vector_core) = (c.p, c.vector_core);
    if vector_core.len() != 2 {
        return Err(p.inconsistent(
            NIC_QUEUES,
            "qos.strategy = \"rr\" needs two queue vectors on one core: the BE one (0) and the RT one (1)",
        ));
    }
    if vector_core[0] != vector_core[1] {
        let key = if p.u64_list(IRQ_AFFINITY).is_empty() {
            CORES
        } else {
            IRQ_AFFINITY
        };
        return Err(p.inconsistent(
            key,
            format!(
                "qos.strategy = \"rr\" serves its BE and RT vectors on one core; they are on cores {} and {} (set nic.irq_affinity = [{}, {}])",
                vector_core[0],
                vector_core[1],
                vector_core[0],
                vector_core[0]
            ),
        ));
    }
    Ok(QosConfig {
        strategy: c.strategy,
        rings: 1,
        class_ring: vec![0, 0],
        class_vector: Some(vec![0, 1]),
        discipline: None,
    })
}
