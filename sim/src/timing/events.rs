//! A time-ordered event queue whose events at equal times pop first-in first-out, so runs
//! are deterministic (as nexosim's `util/priority_queue.rs`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: u64,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.seq) == (o.time, o.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// The queue.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `ev` at `time`.
    pub fn push(&mut self, time: u64, ev: E) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            ev,
        });
    }

    /// The earliest event's time.
    pub fn next_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time)
    }

    /// Pops the earliest event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, E)> {
        if self.heap.peek()?.time <= now {
            self.heap.pop().map(|e| (e.time, e.ev))
        } else {
            None
        }
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_at_equal_times() {
        let mut q = EventQueue::default();
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let mut out = Vec::new();
        while let Some((_, e)) = q.pop_due(10) {
            out.push(e);
        }
        assert_eq!(out, vec!['b', 'd', 'a', 'c']);
        assert!(q.pop_due(0).is_none());
    }
}
