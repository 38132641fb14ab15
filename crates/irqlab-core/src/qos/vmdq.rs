//! `vmdq`: one vector, a BE and an RT ring, the stock driver's equal split of the weight
//! (`max(weight / rings, 1)` per ring, one pass).

use super::config::{Context, QosConfig, RING_ORDER, RT_SHARE};
use crate::error::Error;

/// Its name (`qos.strategy`).
pub const KIND: &str = "vmdq";
/// The `qos.*` keys it reads.
pub const KEYS: &[&str] = &[RT_SHARE, RING_ORDER];

/// Its rings and vectors.
pub fn configure(c: &Context) -> Result<QosConfig, Error> {
    let share = (c.weight / 2).max(1);
    Ok(c.two_rings(vec![share, share], false))
}
