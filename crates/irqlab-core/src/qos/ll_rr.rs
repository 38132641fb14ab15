//! `ll-rr`: one vector, a BE and an RT ring with ring budgets (4/4: the paper's
//! `PRB`), served by the LL driver's procedure ([`Discipline::next`]): the two rings take turns.

use super::config::{Context, QosConfig, RING_BUDGETS, RING_ORDER, RT_SHARE};
use crate::error::Error;

/// Its name (`qos.strategy`).
pub const KIND: &str = "ll-rr";
/// The `qos.*` keys it reads.
pub const KEYS: &[&str] = &[RT_SHARE, RING_BUDGETS, RING_ORDER];
/// The paper's ring budgets `[BE, RT]` unless `qos.ring_budgets` is given.
pub const DEFAULT_BUDGETS: [u64; 2] = [4, 4];

/// Its two rings and their budgets.
pub fn configure(c: &Context) -> Result<QosConfig, Error> {
    Ok(ll(c, DEFAULT_BUDGETS))
}

/// The LL driver's layout with `budgets` unless `qos.ring_budgets` gives its own (shared
/// with [`super::ll_wfq`]).
pub(super) fn ll(c: &Context, budgets: [u64; 2]) -> QosConfig {
    let b = if c.budgets.is_empty() {
        budgets.to_vec()
    } else {
        c.budgets.clone()
    };
    c.two_rings(b, true)
}
