//! `static`: one fixed interval (`ethtool -C rx-usecs N`, or `InterruptThrottleRate=N`): the
//! NIC's `nic.itr_us`, or the interval of `driver.itr_rate` interrupts per second.

use super::{Itr, Policy, Sample, Variant, Write, interval_of_rate};
use crate::error::Error;
use crate::nic::config::ITR_US;
use crate::schema::Params;
use crate::time::SimDuration;

/// An interrupt rate instead of `nic.itr_us` (0: use `nic.itr_us`).
pub const ITR_RATE: &str = "driver.itr_rate";

/// `static`: one fixed interval.
#[derive(Debug)]
pub struct Static {
    pub itr: SimDuration,
}

impl Policy for Static {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(self.itr))
    }
    fn on_complete(&mut self, _: &Sample) -> Option<Write> {
        None
    }
    fn interval(&self) -> SimDuration {
        self.itr
    }
}

impl Variant for Static {
    const KIND: &'static str = "static";
    const KEYS: &'static [&'static str] = &[ITR_RATE];
    const ADAPTIVE: bool = false;
    const ITR: Itr = Itr::Keeps;
    /// The interval.
    type Config = SimDuration;

    fn from_params(p: &Params) -> Result<SimDuration, Error> {
        Ok(match p.f64(ITR_RATE) {
            0.0 => SimDuration::from_us(p.f64(ITR_US)),
            rate => interval_of_rate(rate),
        })
    }

    fn new_vector(itr: &SimDuration, _has_tx: bool) -> Static {
        Static { itr: *itr }
    }
}
