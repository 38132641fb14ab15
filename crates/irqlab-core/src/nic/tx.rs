//! The Tx side of a queue vector: a descriptor ring and the wire.
//!
//! A forwarded packet takes a Tx descriptor when the driver transmits it and leaves the wire
//! at its departure time: after the frames queued before it on the port (one link shared by
//! every Tx queue, served in the order the driver queued them) and its own wire time
//! (`(size + 20 bytes of preamble and gap) · 8 / link rate`). The driver cleans a descriptor
//! in a later poll of its vector, once the packet has left. A transmit that finds every
//! descriptor taken drops the packet.

use super::Fifo;
use crate::time::{SimDuration, SimTime};

/// One transmitted packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxEntry {
    /// When its last bit leaves the wire.
    pub depart: SimTime,
    pub size_bytes: u32,
    /// Traffic class, for per-class counts.
    pub class: u16,
}

/// The Tx descriptor ring, in transmit (and departure) order.
#[derive(Debug)]
pub struct TxRing {
    slots: Fifo<TxEntry>,
}

impl TxRing {
    pub fn new(capacity: usize) -> TxRing {
        TxRing {
            slots: Fifo::new(capacity, TxEntry::default()),
        }
    }

    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    #[inline]
    pub fn occupied(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.slots.is_full()
    }

    /// Queues a packet. The caller checks `is_full` first.
    #[inline]
    pub fn push(&mut self, e: TxEntry) {
        debug_assert!(
            self.slots.is_empty() || self.slots.at(self.slots.len() - 1).depart <= e.depart
        );
        self.slots.push(e);
    }

    /// Descriptors whose packet has left by `now` (the first ones, in order).
    pub fn done_by(&self, now: SimTime) -> usize {
        // departures are non-decreasing along the ring: binary search
        let (mut lo, mut hi) = (0, self.slots.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.slots.at(mid).depart <= now {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The first departure after `t`, if any packet is still to leave then.
    pub fn next_departure_after(&self, t: SimTime) -> Option<SimTime> {
        let i = self.done_by(t);
        (i < self.slots.len()).then(|| self.slots.at(i).depart)
    }

    /// Frees the oldest descriptor (its packet has left).
    #[inline]
    pub fn pop(&mut self) -> TxEntry {
        self.slots.pop()
    }
}

/// The port's wire, shared by its Tx queues.
#[derive(Debug)]
pub struct Wire {
    /// Picoseconds per byte on the wire.
    ps_per_byte: f64,
    /// When the last queued frame has left.
    free_at: SimTime,
}

/// Preamble, start delimiter and inter-frame gap, bytes.
pub const WIRE_OVERHEAD_BYTES: u32 = 20;

impl Wire {
    pub fn new(link_gbps: f64) -> Wire {
        Wire {
            ps_per_byte: 8_000.0 / link_gbps,
            free_at: SimTime::ZERO,
        }
    }

    /// The time a frame of `size_bytes` takes on the wire.
    #[inline]
    pub fn frame_time(&self, size_bytes: u32) -> SimDuration {
        SimDuration(crate::dist::round_ps(
            f64::from(size_bytes + WIRE_OVERHEAD_BYTES) * self.ps_per_byte,
        ))
    }

    /// Queues a frame handed to the NIC at `now`; returns its departure time.
    #[inline]
    pub fn send(&mut self, now: SimTime, size_bytes: u32) -> SimTime {
        let start = self.free_at.max(now);
        self.free_at = start + self.frame_time(size_bytes);
        self.free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-byte frame leaving at `depart` ps.
    fn entry(depart: u64) -> TxEntry {
        TxEntry {
            depart: SimTime(depart),
            size_bytes: 64,
            class: 0,
        }
    }

    #[test]
    fn frames_leave_back_to_back_at_the_link_rate() {
        let mut w = Wire::new(10.0);
        // 64 B + 20 B at 10 Gbit/s: 67.2 ns.
        assert_eq!(w.frame_time(64), SimDuration(67_200));
        let a = w.send(SimTime(1_000), 64);
        let b = w.send(SimTime(1_000), 64);
        assert_eq!(a, SimTime(68_200));
        assert_eq!(b, SimTime(135_400), "queued behind the first");
        let c = w.send(SimTime(1_000_000), 1500);
        assert_eq!(
            c,
            SimTime(1_000_000 + 1_216_000),
            "an idle wire starts at once"
        );
    }

    #[test]
    fn the_ring_cleans_in_order_what_has_left() {
        let mut r = TxRing::new(3);
        for d in [10, 20, 30] {
            r.push(entry(d));
        }
        assert!(r.is_full());
        assert_eq!(r.done_by(SimTime(5)), 0);
        assert_eq!(r.done_by(SimTime(20)), 2);
        assert_eq!(r.next_departure_after(SimTime(20)), Some(SimTime(30)));
        assert_eq!(r.pop().depart, SimTime(10));
        r.push(entry(40)); // wraps
        assert_eq!(r.done_by(SimTime(100)), 3);
        assert_eq!(r.next_departure_after(SimTime(100)), None);
        assert_eq!(r.pop().depart, SimTime(20));
        assert_eq!(r.pop().depart, SimTime(30));
        assert_eq!(r.pop().depart, SimTime(40));
        assert_eq!(r.occupied(), 0);
    }

    #[test]
    fn a_tx_ring_has_the_capacity_it_was_built_with() {
        let mut r = TxRing::new(5);
        assert_eq!(r.capacity(), 5);
        for d in 1..=5 {
            assert!(!r.is_full(), "{} of 5 taken", d - 1);
            r.push(entry(d));
        }
        assert!(r.is_full());
        assert_eq!((r.occupied(), r.capacity()), (5, 5));
    }

    #[test]
    fn a_wrapped_ring_finds_the_first_packet_still_to_leave() {
        // slots [40 | 20 | 30]: the oldest at slot 1, the newest wrapped to slot 0
        let mut r = TxRing::new(3);
        for d in [10, 20, 30] {
            r.push(entry(d));
        }
        r.pop();
        r.push(entry(40));
        assert_eq!(r.done_by(SimTime(35)), 2);
        assert_eq!(r.next_departure_after(SimTime(35)), Some(SimTime(40)));
        assert_eq!(r.next_departure_after(SimTime(25)), Some(SimTime(30)));
    }
}
