//! The NIC: queue vectors, each with an Rx ring per traffic class, a Tx ring ([`tx`]) and the
//! interrupt logic of its IRQ line; RSS ([`rss`]) steers each flow to a queue. This module holds
//! their state and rules; the transitions that touch the CPU live in `host::nic`. Its settings
//! (`nic.*`) are read in [`config`].
//!
//! **Ring.** `ring_descriptors` slots. A packet takes a slot when it arrives (DMA is taken as
//! instantaneous) and gives it back when its protocol processing completes; an arrival that
//! finds every slot taken is dropped. Packets are processed in arrival order. The driver sees a
//! packet once its descriptor is written back, `platform.writeback_ns` after its DMA (at once by
//! default): write-backs come in arrival order, so the packets it does not see yet are the
//! newest ones ([`Ring::hide_newest`], [`Ring::write_back_oldest`]).
//!
//! **Interrupt line** (Intel ITR/EITR semantics, reference §0.5, plus the `ethtool -C`
//! `rx-usecs` / `rx-frames` coalescing conditions):
//! - an arrival raises the cause bit (a bit, not a counter) and counts one frame waiting to be
//!   signalled; the first such frame starts the absolute timeout;
//! - an IRQ is issued when the cause is raised, the vector is unmasked, its previous ISR has
//!   finished, the throttle interval (`itr`) has expired since the previous IRQ, and the
//!   coalescing condition holds (`rx_frames` frames waiting, or `rx_usecs` since the first, or
//!   immediately when neither is set);
//! - issuing an IRQ reloads the throttle counter; the ISR, when it finishes, has seen every
//!   packet that arrived before, so it clears the cause and the frame count.

pub mod config;
pub mod rss;
pub mod tx;

use crate::time::{SimDuration, SimTime};
pub use config::{CauseMode, DriverConfig, NicConfig};

/// A packet in the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub arrival: SimTime,
    /// Frame size (at most 65535 bytes; 24 bytes a packet keep the rings compact).
    pub size_bytes: u16,
    /// Its flow and traffic class.
    pub flow: u32,
    pub class: u16,
    /// Sequence number among all arrivals (for traces).
    pub id: u64,
}

/// A descriptor ring's entries: a fixed circular buffer, allocated once, oldest first.
#[derive(Debug)]
pub struct Fifo<T> {
    slots: Box<[T]>,
    /// Index of the oldest entry.
    head: usize,
    /// Entries held.
    len: usize,
}

impl<T: Copy> Fifo<T> {
    /// `capacity` slots, each holding `empty` until used.
    pub fn new(capacity: usize, empty: T) -> Fifo<T> {
        Fifo {
            slots: vec![empty; capacity].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }

    /// The oldest entry (the ring holds one).
    #[inline]
    pub fn first(&self) -> &T {
        &self.slots[self.head]
    }

    /// The `i`-th entry from the oldest.
    #[inline]
    pub fn at(&self, i: usize) -> &T {
        let mut k = self.head + i;
        if k >= self.slots.len() {
            k -= self.slots.len();
        }
        &self.slots[k]
    }

    /// Appends an entry. The caller checks `is_full` first.
    #[inline]
    pub fn push(&mut self, e: T) {
        debug_assert!(!self.is_full());
        let mut i = self.head + self.len;
        if i >= self.slots.len() {
            i -= self.slots.len();
        }
        self.slots[i] = e;
        self.len += 1;
    }

    /// Removes the oldest entry.
    #[inline]
    pub fn pop(&mut self) -> T {
        debug_assert!(self.len > 0);
        let e = self.slots[self.head];
        self.head += 1;
        if self.head == self.slots.len() {
            self.head = 0;
        }
        self.len -= 1;
        e
    }
}

#[cfg(test)]
impl Packet {
    /// A 64-byte packet of flow 0, class 0, number `id`, arrived at `id` ps: for tests.
    pub(crate) fn numbered(id: u64) -> Packet {
        Packet {
            arrival: SimTime(id),
            size_bytes: 64,
            flow: 0,
            class: 0,
            id,
        }
    }
}

/// The Rx descriptor ring.
#[derive(Debug)]
pub struct Ring {
    /// The packets: waiting, plus the one in service.
    slots: Fifo<Packet>,
    /// Whether the head packet is being processed (it keeps its slot until done).
    head_in_service: bool,
    /// The newest packets, whose descriptors are not written back yet: the driver does not
    /// see them (`platform.writeback_ns`; write-backs come in arrival order).
    hidden: usize,
}

impl Ring {
    pub fn new(capacity: usize) -> Ring {
        let empty = Packet {
            arrival: SimTime::ZERO,
            size_bytes: 0,
            flow: 0,
            class: 0,
            id: 0,
        };
        Ring {
            slots: Fifo::new(capacity, empty),
            head_in_service: false,
            hidden: 0,
        }
    }

    /// Slots taken (packets waiting plus the one in service).
    #[inline]
    pub fn occupied(&self) -> usize {
        self.slots.len()
    }

    /// Packets waiting for the driver to take them: written back, not yet taken.
    #[inline]
    pub fn unprocessed(&self) -> usize {
        self.slots.len() - usize::from(self.head_in_service) - self.hidden
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.slots.is_full()
    }

    /// Stores an arriving packet. The caller checks `is_full` first.
    #[inline]
    pub fn push(&mut self, p: Packet) {
        self.slots.push(p);
    }

    /// A packet was DMA'd into the ring, but its descriptor is not written back yet: the
    /// driver does not see it (the caller pushed it first).
    #[inline]
    pub fn hide_newest(&mut self) {
        self.hidden += 1;
    }

    /// The oldest descriptor not yet written back is: the driver sees its packet.
    #[inline]
    pub fn write_back_oldest(&mut self) {
        debug_assert!(self.hidden > 0);
        self.hidden -= 1;
    }

    /// The driver takes the next waiting packet for processing.
    #[inline]
    pub fn take(&mut self) -> Packet {
        debug_assert!(!self.head_in_service && !self.slots.is_empty());
        self.head_in_service = true;
        *self.slots.first()
    }

    /// Adds the packets of each class in the ring to `in_ring[class]`, and the one in
    /// protocol processing to `in_poll[class]`.
    pub fn count_by_class(&self, in_ring: &mut [u64], in_poll: &mut [u64]) {
        for k in 0..self.slots.len() {
            in_ring[self.slots.at(k).class as usize] += 1;
        }
        if self.head_in_service {
            in_poll[self.slots.first().class as usize] += 1;
        }
    }

    /// Processing of the taken packet finished: its slot is free again.
    #[inline]
    pub fn release(&mut self) -> Packet {
        debug_assert!(self.head_in_service);
        self.head_in_service = false;
        self.slots.pop()
    }
}

/// The interrupt logic of one queue vector.
#[derive(Debug)]
pub struct IrqLine {
    itr: SimDuration,
    rx_usecs: SimDuration,
    rx_frames: u64,
    /// The absolute timeout counts from the last unsignalled packet, not the first (DIM's
    /// CQE mode: each completion restarts the timer).
    restart: bool,
    /// The interrupt cause bit.
    pub cause: bool,
    /// Frames that arrived since the cause was last cleared.
    pub frames: u64,
    /// Arrival time of the first of them.
    pub first: SimTime,
    pub masked: bool,
    /// An IRQ was issued and its ISR has not finished yet.
    pub in_service: bool,
    /// The throttle counter reaches zero at this time.
    pub throttle_until: SimTime,
    /// Time of the moderation timer currently armed, if any.
    pub timer_at: Option<SimTime>,
}

/// What the interrupt logic decides when asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqDecision {
    /// Nothing to signal, or waiting for more frames with no timeout.
    Idle,
    /// Issue the IRQ now.
    Fire,
    /// Ask again at this time.
    WaitUntil(SimTime),
}

impl IrqLine {
    pub fn new(cfg: &NicConfig) -> IrqLine {
        IrqLine {
            itr: cfg.itr,
            rx_usecs: cfg.rx_usecs,
            rx_frames: cfg.rx_frames,
            restart: false,
            cause: false,
            frames: 0,
            first: SimTime::ZERO,
            masked: false,
            in_service: false,
            throttle_until: SimTime::ZERO,
            timer_at: None,
        }
    }

    /// A packet arrived (or was dropped for lack of descriptors: the overrun cause).
    #[inline]
    pub fn raise(&mut self, now: SimTime) {
        if self.frames == 0 || self.restart {
            self.first = now;
        }
        self.frames += 1;
        self.cause = true;
    }

    /// A Tx completion (descriptor write-back) raises the cause; it counts no Rx frame, but
    /// starts the absolute timeout if nothing was waiting.
    #[inline]
    pub fn raise_tx(&mut self, now: SimTime) {
        if !self.cause && self.frames == 0 {
            self.first = now;
        }
        self.cause = true;
    }

    /// The driver writes a new ITR: it applies from the next reload of the throttle counter
    /// (ixgbe writes EITR with `CNT_WDIS`, which neither clears the counter nor interrupts).
    pub fn set_itr(&mut self, itr: SimDuration) {
        self.itr = itr;
    }

    /// The driver writes new coalescing settings (DIM's profiles).
    pub fn set_coalesce(&mut self, usecs: SimDuration, frames: u64, restart: bool) {
        self.rx_usecs = usecs;
        self.rx_frames = frames;
        self.restart = restart;
    }

    /// The ITR currently programmed.
    pub fn itr(&self) -> SimDuration {
        self.itr
    }

    /// Clears the cause and the waiting-frame count (the driver has seen every packet).
    #[inline]
    pub fn clear(&mut self) {
        self.cause = false;
        self.frames = 0;
    }

    /// Whether the line is masked or its ISR runs: it issues nothing now, whatever the cause
    /// ([`IrqLine::decide`] says `Idle`).
    #[inline(always)]
    pub fn held(&self) -> bool {
        self.masked || self.in_service
    }

    /// Whether an IRQ should be issued now, later, or not at all.
    #[inline]
    pub fn decide(&self, now: SimTime) -> IrqDecision {
        if !self.cause || self.held() {
            return IrqDecision::Idle;
        }
        let no_coalescing = self.rx_frames == 0 && self.rx_usecs.is_zero();
        let enough_frames = self.rx_frames > 0 && self.frames >= self.rx_frames;
        let coalesced = if no_coalescing || enough_frames {
            Some(now)
        } else if !self.rx_usecs.is_zero() {
            Some(self.first + self.rx_usecs)
        } else {
            None
        };
        match coalesced {
            None => IrqDecision::Idle,
            Some(t) => {
                let at = t.max(self.throttle_until);
                if at <= now {
                    IrqDecision::Fire
                } else {
                    IrqDecision::WaitUntil(at)
                }
            }
        }
    }

    /// Issues the IRQ: reloads the throttle counter; NAPI drivers' vectors auto-mask.
    #[inline]
    pub fn issue(&mut self, now: SimTime, auto_mask: bool) {
        self.throttle_until = now + self.itr;
        self.in_service = true;
        if auto_mask {
            self.masked = true;
        }
    }

    /// The ISR finished: it has seen every packet that arrived while it ran.
    #[inline]
    pub fn isr_done(&mut self) {
        self.in_service = false;
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(id: u64) -> Packet {
        Packet::numbered(id)
    }

    #[test]
    fn ring_keeps_order_and_slots_until_release() {
        let mut r = Ring::new(2);
        r.push(packet(1));
        r.push(packet(2));
        assert!(r.is_full());
        assert_eq!(r.take().id, 1);
        assert_eq!(r.unprocessed(), 1);
        assert!(r.is_full(), "the packet in service keeps its slot");
        assert_eq!(r.release().id, 1);
        r.push(packet(3)); // wraps around
        assert_eq!(r.take().id, 2);
        assert_eq!(r.release().id, 2);
        assert_eq!(r.take().id, 3);
        assert_eq!(r.release().id, 3);
        assert_eq!(r.occupied(), 0);
    }

    fn line(itr_us: u64, rx_usecs: u64, rx_frames: u64) -> IrqLine {
        IrqLine::new(&NicConfig {
            itr: SimDuration(itr_us * 1_000_000),
            rx_usecs: SimDuration(rx_usecs * 1_000_000),
            rx_frames,
            cause_mode: CauseMode::Latched,
            ..NicConfig::default()
        })
    }
    const US: u64 = 1_000_000;

    #[test]
    fn without_moderation_the_first_packet_fires_at_once() {
        let mut l = line(0, 0, 0);
        assert_eq!(l.decide(SimTime(5)), IrqDecision::Idle);
        l.raise(SimTime(5));
        assert_eq!(l.decide(SimTime(5)), IrqDecision::Fire);
    }

    #[test]
    fn itr_is_a_minimum_interval_not_a_delay() {
        let mut l = line(10, 0, 0);
        l.raise(SimTime(0));
        assert_eq!(l.decide(SimTime(0)), IrqDecision::Fire);
        l.issue(SimTime(0), false);
        l.isr_done();
        // A packet 3 us later waits until the counter expires at 10 us ...
        l.raise(SimTime(3 * US));
        assert_eq!(
            l.decide(SimTime(3 * US)),
            IrqDecision::WaitUntil(SimTime(10 * US))
        );
        assert_eq!(l.decide(SimTime(10 * US)), IrqDecision::Fire);
        l.issue(SimTime(10 * US), false);
        l.isr_done();
        // ... one arriving after the counter expired fires at once.
        l.raise(SimTime(25 * US));
        assert_eq!(l.decide(SimTime(25 * US)), IrqDecision::Fire);
    }

    #[test]
    fn frame_count_and_absolute_timeout_whichever_first() {
        let mut l = line(0, 50, 3);
        l.raise(SimTime(US));
        assert_eq!(
            l.decide(SimTime(US)),
            IrqDecision::WaitUntil(SimTime(51 * US))
        );
        l.raise(SimTime(2 * US));
        l.raise(SimTime(4 * US));
        assert_eq!(l.decide(SimTime(4 * US)), IrqDecision::Fire);
        let mut l = line(0, 0, 2);
        l.raise(SimTime(US));
        assert_eq!(
            l.decide(SimTime(US)),
            IrqDecision::Idle,
            "count only: waits for frames"
        );
    }

    #[test]
    fn masked_or_in_service_vectors_do_not_fire() {
        let mut l = line(0, 0, 0);
        l.raise(SimTime(0));
        l.issue(SimTime(0), true);
        l.raise(SimTime(1));
        assert_eq!(l.decide(SimTime(1)), IrqDecision::Idle);
        l.isr_done();
        assert!(!l.cause, "the ISR saw the packet that arrived while it ran");
        l.raise(SimTime(2));
        assert_eq!(l.decide(SimTime(2)), IrqDecision::Idle, "still masked");
        l.masked = false;
        assert_eq!(l.decide(SimTime(2)), IrqDecision::Fire);
    }

    #[test]
    fn occupied_counts_the_waiting_packets_and_the_one_in_service() {
        let mut r = Ring::new(4);
        for id in 1..=3 {
            r.push(packet(id));
            assert_eq!(r.occupied(), id as usize);
        }
        r.take();
        assert_eq!((r.occupied(), r.unprocessed()), (3, 2));
        r.release();
        assert_eq!((r.occupied(), r.unprocessed()), (2, 2));
    }

    #[test]
    fn a_tx_completion_with_nothing_waiting_starts_the_absolute_timeout() {
        // rx-usecs 50: a Tx write-back at 10 us raises the cause and starts the timeout there.
        let mut l = line(0, 50, 0);
        l.raise_tx(SimTime(10 * US));
        assert_eq!(
            l.decide(SimTime(10 * US)),
            IrqDecision::WaitUntil(SimTime(60 * US))
        );
        // After the ISR cleared everything, the next one starts it afresh.
        l.issue(SimTime(60 * US), false);
        l.isr_done();
        l.raise_tx(SimTime(100 * US));
        assert_eq!(
            l.decide(SimTime(100 * US)),
            IrqDecision::WaitUntil(SimTime(150 * US))
        );
        // An Rx frame already waiting keeps its own start: the Tx completion does not move it.
        let mut l = line(0, 50, 0);
        l.raise(SimTime(US));
        l.raise_tx(SimTime(20 * US));
        assert_eq!(
            l.decide(SimTime(20 * US)),
            IrqDecision::WaitUntil(SimTime(51 * US))
        );
    }

    #[test]
    fn itr_reports_the_programmed_interval_and_a_write_replaces_it() {
        let mut l = line(10, 0, 0);
        assert_eq!(l.itr(), SimDuration(10 * US));
        l.set_itr(SimDuration(24 * US));
        assert_eq!(l.itr(), SimDuration(24 * US));
    }

    #[test]
    fn a_second_tx_completion_keeps_the_absolute_timeout_the_first_started() {
        // rx-usecs 50: write-backs at 10 and 30 us; the timeout runs from the first
        let mut l = line(0, 50, 0);
        l.raise_tx(SimTime(10 * US));
        l.raise_tx(SimTime(30 * US));
        assert_eq!(
            l.decide(SimTime(30 * US)),
            IrqDecision::WaitUntil(SimTime(60 * US))
        );
    }
}
