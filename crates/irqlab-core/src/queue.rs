//! The event queue: a binary heap ordered by `(time, priority, seq)`.
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
}

impl<E> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
        }
    }

    #[inline]
    pub fn push(&mut self, time: SimTime, priority: u8, event: E) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            priority,
            seq: self.seq,
            event,
        });
    }

    /// Time and priority of the next event.
    #[inline]
    pub fn peek(&self) -> Option<(SimTime, u8)> {
        self.heap.peek().map(|e| (e.time, e.priority))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
