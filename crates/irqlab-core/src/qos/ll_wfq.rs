//! `ll-wfq`: one vector, a BE and an RT ring with ring budgets (4/60: the paper's
//! `PRB`), served by the LL driver's procedure ([`super::Discipline::next`]): a weighted fair share, 60 RT packets to 4 BE under backlog.

use super::config::{Context, QosConfig, RING_BUDGETS, RING_ORDER, RT_SHARE};
use crate::error::Error;

/// Its name (`qos.strategy`).
pub const KIND: &str = "ll-wfq";
/// The `qos.*` keys it reads.
pub const KEYS: &[&str] = &[RT_SHARE, RING_BUDGETS, RING_ORDER];
/// The paper's ring budgets `[BE, RT]` unless `qos.ring_budgets` is given.
pub const DEFAULT_BUDGETS: [u64; 2] = [4, 60];

/// Its two rings and their budgets.
pub fn configure(c: &Context) -> Result<QosConfig, Error> {
    Ok(super::ll_rr::ll(c, DEFAULT_BUDGETS))
}
