//! `off`: no QoS: the classes of `traffic.classes`, a ring each, the stock equal split in
//! class order (the host's behaviour without QoS).

use super::config::{Context, QosConfig};
use crate::error::Error;

/// Its name (`qos.strategy`).
pub const KIND: &str = "off";
/// The `qos.*` keys it reads.
pub const KEYS: &[&str] = &[];

/// Its rings and vectors.
pub fn configure(c: &Context) -> Result<QosConfig, Error> {
    Ok(QosConfig::off(c.classes))
}
