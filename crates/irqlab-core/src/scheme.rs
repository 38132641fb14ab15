//! The interrupt-handling scheme (`scheme`): which parts of the host model are in play.
//!
//! A scheme in the papers is a named preset of the host's parts, not a separate simulator:
//! the first eight are the schemes of Salah et al. (2007), `napi` is Linux NAPI (`net/core/dev.c`
//! `napi_schedule`, `net_rx_action`, `napi_complete_done`). Their presets are in the key table
//! (`params::PRESETS`); the parts ask the scheme what it runs ([`Scheme::uses_poll_loop`],
//! [`Scheme::masks_on_irq`]).

use crate::schema::registry;

/// The key that chooses the scheme.
pub const KEY: &str = "scheme";

registry! {
    key: KEY;
    /// The interrupt-handling scheme: which parts of the host model are in play.
    ///
    /// The first eight are the schemes of Salah et al. (2007); `Napi` is Linux NAPI.
    pub enum Scheme {
        /// No interrupt cost: an arrival wakes protocol processing for free (M/M/1/B-like).
        Ideal = "ideal",
        /// Normal interruption: the IRQ line is never masked; ISRs preempt protocol processing.
        Irq = "irq",
        /// Interrupts off while the ring is non-empty, re-enabled when a poll finds it empty.
        DisableEnable = "disable-enable",
        /// Pure (FreeBSD-style) polling: a periodic timer starts polls of up to Q packets;
        /// packet interrupts are never enabled.
        Poll = "poll",
        /// Salah's NAPI: an IRQ disables interrupts and starts timer-driven polls of up to Q
        /// packets until one finds the ring empty.
        NapiPoll = "napi-poll",
        /// Normal interruption with an IRQ every `nic.rx_frames` packets.
        CoalesceCount = "coalesce-count",
        /// Normal interruption with an IRQ `nic.rx_usecs` after the first packet of a batch.
        CoalesceTime = "coalesce-time",
        /// Disable-enable below a switching throughput, pure polling above it.
        Hybrid = "hybrid",
        /// Linux NAPI: the ISR masks the vector; the softirq poll re-enables it when the ring
        /// is empty.
        Napi = "napi",
    }
}

impl Scheme {
    /// Whether protocol processing runs in Salah's polling loop (`polling`) rather than in
    /// the Linux NAPI softirq (`host`).
    #[inline]
    pub fn uses_poll_loop(self) -> bool {
        matches!(
            self,
            Scheme::DisableEnable | Scheme::Poll | Scheme::NapiPoll | Scheme::Hybrid
        )
    }

    /// Whether issuing an IRQ masks (disables) the vector.
    #[inline]
    pub fn masks_on_irq(self) -> bool {
        matches!(
            self,
            Scheme::Napi | Scheme::DisableEnable | Scheme::NapiPoll | Scheme::Hybrid
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::test_support::*;

    #[test]
    fn every_scheme_is_built_from_its_name_and_named_by_it() {
        for name in crate::params::SCHEMES {
            let sc = build(&[("scheme", s(name))]).unwrap();
            assert_eq!(sc.scheme.name(), *name);
        }
        assert_eq!(build(&[]).unwrap().scheme.name(), "napi");
    }
}
