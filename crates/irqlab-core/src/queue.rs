//! The event queue: a binary heap ordered by `(time, priority, seq)`; and [`MinTree`], the
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

/// The smallest of `n` times, ties to the lowest index: a tournament tree, `O(log n)` per
/// update, `O(1)` to read.
#[derive(Debug)]
pub struct MinTree {
    /// Leaves padded to a power of two with `u64::MAX`.
    vals: Vec<u64>,
    /// `win[k]`: the winning leaf under internal node `k` (1 is the root); unused for one leaf.
    win: Vec<u32>,
}

impl MinTree {
    /// `n` slots, all at `u64::MAX`.
    pub fn new(n: usize) -> MinTree {
        let m = n.max(1).next_power_of_two();
        let mut t = MinTree {
            vals: vec![u64::MAX; m],
            win: vec![0; m],
        };
        for k in (1..m).rev() {
            t.win[k] = t.play(k);
        }
        t
    }

    /// The winner of node `k`'s two children.
    #[inline]
    fn play(&self, k: usize) -> u32 {
        let m = self.vals.len();
        let side = |c: usize| if c >= m { (c - m) as u32 } else { self.win[c] };
        let (l, r) = (side(2 * k), side(2 * k + 1));
        if self.vals[l as usize] <= self.vals[r as usize] {
            l
        } else {
            r
        }
    }

    /// Sets slot `i` to `t`.
    #[inline]
    pub fn set(&mut self, i: usize, t: u64) {
        let m = self.vals.len();
        self.vals[i] = t;
        if m == 1 {
            return;
        }
        let mut k = (i + m) / 2;
        while k >= 1 {
            self.win[k] = self.play(k);
            k /= 2;
        }
    }

    /// The smallest time and its slot.
    #[inline]
    pub fn min(&self) -> (u64, usize) {
        let i = if self.vals.len() == 1 {
            0
        } else {
            self.win[1] as usize
        };
        (self.vals[i], i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_tree_keeps_the_earliest_with_ties_to_the_lowest_slot() {
        for n in [1, 2, 3, 5, 16, 17] {
            let mut t = MinTree::new(n);
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
}
