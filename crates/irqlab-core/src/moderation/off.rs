//! `off`: no throttling, ever (`ethtool -C rx-usecs 0`, `InterruptThrottleRate=0`).

use super::{Itr, Policy, Sample, Variant, Write};
use crate::error::Error;
use crate::schema::Params;
use crate::time::SimDuration;

/// `off`: no throttling, ever.
#[derive(Debug, Default)]
pub struct Off;

impl Policy for Off {
    fn initial(&self) -> Option<Write> {
        Some(Write::Itr(SimDuration::ZERO))
    }
    fn on_complete(&mut self, _: &Sample) -> Option<Write> {
        None
    }
    fn interval(&self) -> SimDuration {
        SimDuration::ZERO
    }
}

impl Variant for Off {
    const KIND: &'static str = "off";
    const ADAPTIVE: bool = false;
    const ITR: Itr = Itr::Off;
    type Config = ();

    fn from_params(_: &Params) -> Result<(), Error> {
        Ok(())
    }

    fn new_vector(_: &(), _has_tx: bool) -> Off {
        Off
    }
}
