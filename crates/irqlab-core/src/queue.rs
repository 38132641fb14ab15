//! The event queue: a binary heap ordered by `(time, priority, seq)`; and [`Earliest`], the
//! earliest of a fixed set of times (the cores' next completions).
//!
//! The order is a written contract: earlier time first; at equal time, lower priority number
//! first; at equal priority, the event scheduled first (FIFO). `seq` never repeats, so no two
//! entries compare equal and the order is total. Only timers live here; the engine merges the
//! next arrival and the CPU's next completion with the queue head lazily (see `engine`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

struct Entry<E> {
    time: SimTime,
    priority: u8,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (SimTime, u8, u64) {
        (self.time, self.priority, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we pop the smallest key.
        other.key().cmp(&self.key())
    }
}

/// A priority queue of timed events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    /// The head's time, ps (`u64::MAX`: empty), kept at each push and pop: the engine reads
    /// it before every event.
    head_ps: u64,
}

impl<E> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
            head_ps: u64::MAX,
        }
    }

    #[inline]
    pub fn push(&mut self, time: SimTime, priority: u8, event: E) {
        self.seq += 1;
        self.head_ps = self.head_ps.min(time.ps());
        self.heap.push(Entry {
            time,
            priority,
            seq: self.seq,
            event,
        });
    }

    /// Time of the next event, ps (`u64::MAX`: none).
    #[inline]
    pub fn next_ps(&self) -> u64 {
        self.head_ps
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop();
        self.head_ps = self.heap.peek().map_or(u64::MAX, |e| e.time.ps());
        e.map(|e| (e.time, e.event))
    }
}

/// The earliest of `n` times, ties to the lowest index: the cores' next completions.
///
/// A tournament tree of times: node 1 holds the earliest of all, each node the earlier of its
/// two children; slot `i` is leaf `m + i` (`m` a power of two). An update recomputes its leaf's
/// path and stops at the first node that does not change; the earliest time is read at the
/// root, and its slot found by walking down towards it (left first: ties go to the lowest slot)
/// only when it is needed. Up to [`Earliest::SMALL`] slots the nodes sit in a fixed array, whose
/// masked indices need no bounds checks.
#[derive(Debug)]
pub struct Earliest {
    m: usize,
    nodes: Nodes,
}

#[derive(Debug)]
enum Nodes {
    Small(Box<[u64; 2 * Earliest::SMALL]>),
    Large(Box<[u64]>),
}

/// The tree's operations on any node storage; `MASK` keeps indices in range.
macro_rules! tree_ops {
    ($t:expr, $m:expr, $mask:expr, set $i:expr, $time:expr) => {{
        let t = $t;
        let mut k = ($m + $i) & $mask;
        t[k] = $time;
        while k > 1 {
            let best = t[k].min(t[(k ^ 1) & $mask]);
            k >>= 1;
            if t[k] == best {
                break; // unchanged here, so above too
            }
            t[k] = best;
        }
    }};
    ($t:expr, $m:expr, $mask:expr, min) => {{
        let t = $t;
        let mut k = 1;
        while k < $m {
            let left = (2 * k) & $mask;
            k = if t[left] == t[k] {
                left
            } else {
                (left + 1) & $mask
            };
        }
        (t[1], k - $m)
    }};
}

impl Earliest {
    /// Trees of at most this many slots use the fixed array.
    pub const SMALL: usize = 64;

    /// `n` slots, all at `u64::MAX`.
    pub fn new(n: usize) -> Earliest {
        let m = n.max(1).next_power_of_two();
        let nodes = if m <= Self::SMALL {
            Nodes::Small(Box::new([u64::MAX; 2 * Self::SMALL]))
        } else {
            Nodes::Large(vec![u64::MAX; 2 * m].into_boxed_slice())
        };
        Earliest { m, nodes }
    }

    /// Sets slot `i` to `time`.
    #[inline]
    pub fn set(&mut self, i: usize, time: u64) {
        let m = self.m;
        match &mut self.nodes {
            Nodes::Small(t) => tree_ops!(&mut t[..], m, 2 * Self::SMALL - 1, set i, time),
            Nodes::Large(t) => tree_ops!(&mut t[..], m, usize::MAX, set i, time),
        }
    }

    /// The earliest time.
    #[inline]
    pub fn time(&self) -> u64 {
        match &self.nodes {
            Nodes::Small(t) => t[1],
            Nodes::Large(t) => t[1],
        }
    }

    /// The earliest time and its slot.
    #[inline]
    pub fn min(&self) -> (u64, usize) {
        let m = self.m;
        match &self.nodes {
            Nodes::Small(t) => tree_ops!(&t[..], m, 2 * Self::SMALL - 1, min),
            Nodes::Large(t) => tree_ops!(&t[..], m, usize::MAX, min),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_keeps_the_minimum_with_ties_to_the_lowest_slot() {
        for n in [1, 2, 3, 5, 16, 17, 64, 65, 200] {
            let mut t = Earliest::new(n);
            assert_eq!(t.min().0, u64::MAX);
            let mut naive = vec![u64::MAX; n];
            let mut x: u64 = 12345;
            for step in 0..200 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = (x >> 33) as usize % n;
                let v = if step % 7 == 0 {
                    u64::MAX
                } else {
                    (x >> 40) % 50
                };
                t.set(i, v);
                naive[i] = v;
                let best = *naive.iter().min().unwrap();
                let at = naive.iter().position(|&y| y == best).unwrap();
                assert_eq!(t.min(), (best, at), "n = {n}, step {step}");
            }
        }
    }

    #[test]
    fn pops_by_time_then_priority_then_fifo() {
        let mut q = EventQueue::with_capacity(4);
        q.push(SimTime(5), 1, "c");
        q.push(SimTime(5), 0, "b");
        q.push(SimTime(1), 9, "a");
        q.push(SimTime(5), 1, "d");
        let order: Vec<&str> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
    }

    #[test]
    fn the_next_time_is_the_heads_after_every_push_and_pop() {
        let mut q = EventQueue::with_capacity(4);
        assert_eq!(q.next_ps(), u64::MAX);
        q.push(SimTime(7), 1, ());
        assert_eq!(q.next_ps(), 7);
        q.push(SimTime(9), 1, ());
        assert_eq!(q.next_ps(), 7);
        q.push(SimTime(3), 1, ());
        assert_eq!(q.next_ps(), 3);
        let next: Vec<u64> = std::iter::from_fn(|| q.pop().map(|_| q.next_ps())).collect();
        assert_eq!(next, [7, 9, u64::MAX]);
    }
}
