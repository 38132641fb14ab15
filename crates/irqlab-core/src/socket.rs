//! A socket's receive queue, accounted in bytes of skb truesize as UDP does (v6.13
//! `__udp_enqueue_schedule_skb`, `__skb_recv_udp`, `udp_rmem_release`).
//!
//! - Protocol processing queues a packet unless the memory already charged exceeds the
//!   receive buffer (`sk_rmem_alloc > sk_rcvbuf`, checked before adding: the first packet
//!   always fits, and the charge may overshoot by one packet); it charges the packet's
//!   truesize. A refused packet is dropped (`dropped_socket`).
//! - The app's `recv` takes the head packet. UDP keeps a private reader queue: when it is
//!   empty, `recv` moves the whole receive queue into it. The charge of a packet read is
//!   released in batches: it is added to a deficit, and the deficit is returned to
//!   `sk_rmem_alloc` only once it reaches a quarter of the buffer (`forward_threshold`) or the
//!   reader queue is empty. Until then packets already read still count against the buffer.
//!
//! Queuing a packet and the app's reads happen in `host::socket`. The sockets' and the apps'
//! settings (`socket.*`, `[[app]]`) are read in [`config`].

pub mod config;

pub use config::{AppConfig, SocketConfig};

use std::collections::VecDeque;

use crate::nic::Packet;

/// A packet in a socket, with the truesize it is charged and the core that allocated its
/// skb (`skb->alloc_cpu`).
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub packet: Packet,
    pub truesize: u32,
    pub alloc_core: u16,
}

#[derive(Debug)]
pub struct Socket {
    /// The reader queue (its first `reader` packets) followed by the receive queue.
    queue: VecDeque<Queued>,
    reader: usize,
    /// `sk_rmem_alloc`.
    rmem: u64,
    /// `sk_rcvbuf`.
    rcvbuf: u64,
    /// Released charge not yet returned (`forward_deficit`), and its threshold.
    deficit: u64,
    threshold: u64,
    /// The core that allocated the skb of the packet the last `recv` took.
    taken_alloc_core: u16,
}

impl Socket {
    pub fn new(rcvbuf: u64, min_truesize: u64) -> Socket {
        let most = (rcvbuf / min_truesize.max(1) + 1).min(4096) as usize;
        Socket {
            queue: VecDeque::with_capacity(most),
            reader: 0,
            rmem: 0,
            rcvbuf,
            deficit: 0,
            threshold: rcvbuf >> 2,
            taken_alloc_core: 0,
        }
    }

    /// Packets waiting to be read.
    #[inline]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Utilisation of the buffer: `sk_rmem_alloc / sk_rcvbuf` (may exceed 1 by one packet).
    #[inline]
    pub fn utilisation(&self) -> f64 {
        self.rmem as f64 / self.rcvbuf as f64
    }

    /// Memory charged, bytes (`sk_rmem_alloc`).
    pub fn rmem(&self) -> u64 {
        self.rmem
    }

    /// Queues `p` charged `truesize` bytes, or refuses it (returns false) if the buffer is
    /// already over its limit; its skb allocated on core 0.
    #[inline]
    pub fn enqueue(&mut self, packet: Packet, truesize: u64) -> bool {
        self.enqueue_from(packet, truesize, 0)
    }

    /// [`Socket::enqueue`] of a packet whose skb core `alloc_core` allocated.
    #[inline]
    pub fn enqueue_from(&mut self, packet: Packet, truesize: u64, alloc_core: u16) -> bool {
        if self.rmem > self.rcvbuf {
            return false;
        }
        self.rmem += truesize;
        self.queue.push_back(Queued {
            packet,
            truesize: truesize as u32,
            alloc_core,
        });
        true
    }

    /// The core that allocated the skb of the packet the last [`Socket::dequeue`] returned.
    #[inline]
    pub fn taken_alloc_core(&self) -> usize {
        usize::from(self.taken_alloc_core)
    }

    /// `recv`: takes the head packet; its charge joins the deficit.
    #[inline]
    pub fn dequeue(&mut self) -> Option<Packet> {
        if self.reader == 0 {
            self.reader = self.queue.len();
        }
        let q = self.queue.pop_front()?;
        self.taken_alloc_core = q.alloc_core;
        self.reader -= 1;
        self.deficit += u64::from(q.truesize);
        if self.deficit >= self.threshold || self.reader == 0 {
            self.rmem -= self.deficit;
            self.deficit = 0;
            self.reader = self.queue.len();
        }
        Some(q.packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u64) -> Packet {
        Packet::numbered(id)
    }

    #[test]
    fn a_socket_accepts_while_at_or_under_its_buffer() {
        let mut s = Socket::new(5000, 2304);
        assert!(s.enqueue(pkt(1), 2304)); // 0 <= 5000
        assert!(s.enqueue(pkt(2), 2304)); // 2304 <= 5000
        assert!(s.enqueue(pkt(3), 2304)); // 4608 <= 5000: one over the limit is allowed
        assert!(!s.enqueue(pkt(4), 2304), "6912 > 5000: dropped");
        assert_eq!((s.len(), s.rmem()), (3, 6912));
        let order: Vec<u64> = std::iter::from_fn(|| s.dequeue().map(|p| p.id)).collect();
        assert_eq!(order, [1, 2, 3]);
        assert_eq!(
            s.rmem(),
            0,
            "an empty reader queue returns the whole deficit"
        );
    }

    #[test]
    fn reads_are_released_in_batches_of_a_quarter_buffer() {
        // 10 packets of 1000 B in a 20000 B buffer: threshold 5000.
        let mut s = Socket::new(20_000, 1000);
        for i in 0..10 {
            assert!(s.enqueue(pkt(i), 1000));
        }
        for i in 0..4 {
            assert_eq!(s.dequeue().unwrap().id, i);
            assert_eq!(
                s.rmem(),
                10_000,
                "read {i}: deficit {} < 5000",
                1000 * (i + 1)
            );
        }
        s.dequeue();
        assert_eq!(s.rmem(), 5000, "the fifth read reaches the threshold");
        // A packet arriving now joins the receive queue, behind the reader queue.
        assert!(s.enqueue(pkt(10), 1000));
        for _ in 0..4 {
            s.dequeue();
        }
        assert_eq!(s.rmem(), 6000, "4000 read but not yet released");
        assert_eq!(s.dequeue().unwrap().id, 9);
        assert_eq!(
            s.rmem(),
            1000,
            "the reader queue ran dry: released; packet 10 moves in"
        );
        assert_eq!(s.dequeue().unwrap().id, 10);
        assert_eq!(s.rmem(), 0);
        assert!(s.dequeue().is_none());
    }

    #[test]
    fn a_socket_exactly_at_its_buffer_still_accepts() {
        // The refusal needs rmem *over* rcvbuf: at 4608 of 4608 a packet is still taken.
        let mut s = Socket::new(4608, 2304);
        assert!(s.enqueue(pkt(1), 2304));
        assert!(s.enqueue(pkt(2), 2304));
        assert_eq!(s.rmem(), 4608);
        assert!(s.enqueue(pkt(3), 2304), "4608 is not over 4608");
        assert!(!s.enqueue(pkt(4), 2304), "6912 > 4608: dropped");
        assert_eq!((s.len(), s.rmem()), (3, 6912));
    }
}
