//! `sq`: no classification: one ring per vector takes both classes (the stock driver).

use super::config::{Context, QosConfig, RT_SHARE};
use crate::error::Error;

/// Its name (`qos.strategy`).
pub const KIND: &str = "sq";
/// The `qos.*` keys it reads.
pub const KEYS: &[&str] = &[RT_SHARE];

/// Its rings and vectors.
pub fn configure(c: &Context) -> Result<QosConfig, Error> {
    Ok(QosConfig {
        strategy: c.strategy,
        rings: 1,
        class_ring: vec![0, 0],
        class_vector: None,
        discipline: None,
    })
}
