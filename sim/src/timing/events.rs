//! A time-ordered event queue whose events at equal times pop first-in first-out, so runs
//! are deterministic (as nexosim's `util/priority_queue.rs`).
//!
//! Memory events are near-future (a NoC hop, an L2 or DRAM latency), so the queue is a
//! timing wheel: [`WHEEL`] slots, one per cycle of the window `[base, base + WHEEL)`, each
//! a FIFO of the events at that time (every event in a slot has the same time), with a
//! bitmap of the non-empty slots; events beyond the window wait in a binary heap and move
//! into their slot, in (time, push order), as the window reaches them. Pushing and popping
//! cost O(1) instead of a heap's O(log n) with its cache misses. The slots' FIFOs are
//! linked lists in one pool of nodes, so memory follows the events queued at once.

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

/// Slots of the wheel (cycles of the window; a power of two).
pub const WHEEL: usize = 4096;
const MASK: u64 = WHEEL as u64 - 1;
const WORDS: usize = WHEEL / 64;
const _: () = assert!(WORDS <= 64, "the summary word has a bit per word");

const NIL: u32 = u32::MAX;

struct Node<E> {
    ev: Option<E>,
    next: u32,
}

/// The queue.
pub struct EventQueue<E> {
    /// Every queued event is at or after `base`; the wheel holds those before
    /// `base + WHEEL`.
    base: u64,
    /// Per slot: first and last node of its FIFO.
    slots: Vec<(u32, u32)>,
    nodes: Vec<Node<E>>,
    /// Unused nodes, linked through `next`.
    free: u32,
    /// Bit `i`: slot `i` is not empty.
    bits: [u64; WORDS],
    /// Bit `w`: `bits[w]` is not zero, so the earliest slot is found with two bit scans
    /// instead of a pass over every word (the engine asks for it at every step).
    summary: u64,
    in_wheel: usize,
    far: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            base: 0,
            slots: vec![(NIL, NIL); WHEEL],
            nodes: Vec::new(),
            free: NIL,
            bits: [0; WORDS],
            summary: 0,
            in_wheel: 0,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `ev` at `time` (not before the last time popped or asked for).
    pub fn push(&mut self, time: u64, ev: E) {
        debug_assert!(time >= self.base, "event at {time} before {}", self.base);
        let time = time.max(self.base);
        if time - self.base < WHEEL as u64 {
            self.put(time, ev);
        } else {
            self.seq += 1;
            self.far.push(Entry {
                time,
                seq: self.seq,
                ev,
            });
        }
    }

    fn put(&mut self, time: u64, ev: E) {
        let n = if self.free != NIL {
            let n = self.free;
            let node = &mut self.nodes[n as usize];
            self.free = node.next;
            node.ev = Some(ev);
            node.next = NIL;
            n
        } else {
            self.nodes.push(Node {
                ev: Some(ev),
                next: NIL,
            });
            (self.nodes.len() - 1) as u32
        };
        let i = (time & MASK) as usize;
        let (head, tail) = self.slots[i];
        if head == NIL {
            self.slots[i] = (n, n);
            self.bits[i / 64] |= 1 << (i % 64);
            self.summary |= 1 << (i / 64);
        } else {
            self.nodes[tail as usize].next = n;
            self.slots[i].1 = n;
        }
        self.in_wheel += 1;
    }

    /// The time of the earliest event in the wheel.
    fn wheel_min(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = (self.base & MASK) as usize;
        let (w0, b0) = (start / 64, start % 64);
        // The first word from `start`'s bit, then the others in circular order (the next
        // non-empty word after `w0` from the summary, wrapping around), then the first
        // word's bits before `start`.
        let first = self.bits[w0] & (u64::MAX << b0);
        let slot = if first != 0 {
            w0 * 64 + first.trailing_zeros() as usize
        } else {
            let after = if w0 + 1 < WORDS {
                self.summary & (u64::MAX << (w0 + 1))
            } else {
                0
            };
            let w = if after != 0 {
                after.trailing_zeros() as usize
            } else if self.summary & !(u64::MAX << w0) != 0 {
                (self.summary & !(u64::MAX << w0)).trailing_zeros() as usize
            } else {
                w0
            };
            let m = if w == w0 {
                self.bits[w] & !(u64::MAX << b0)
            } else {
                self.bits[w]
            };
            if m == 0 {
                return None;
            }
            w * 64 + m.trailing_zeros() as usize
        };
        Some(self.base + ((slot as u64).wrapping_sub(start as u64) & MASK))
    }

    /// Moves the window to start at `to` (no event is before it): events of the heap that
    /// it now covers enter their slots, in order.
    fn advance(&mut self, to: u64) {
        if to <= self.base {
            return;
        }
        self.base = to;
        while let Some(e) = self.far.peek() {
            if e.time - self.base >= WHEEL as u64 {
                break;
            }
            if let Some(e) = self.far.pop() {
                self.put(e.time, e.ev);
            }
        }
    }

    /// The earliest event's time.
    pub fn next_time(&self) -> Option<u64> {
        self.wheel_min().or_else(|| self.far.peek().map(|e| e.time))
    }

    /// Pops the earliest event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, E)> {
        let Some(t) = self.next_time() else {
            self.advance(now);
            return None;
        };
        if t > now {
            self.advance(now);
            return None;
        }
        self.advance(t);
        let i = (t & MASK) as usize;
        let head = self.slots[i].0;
        let node = self.nodes.get_mut(head as usize)?;
        let ev = node.ev.take()?;
        let next = node.next;
        node.next = self.free;
        self.free = head;
        if next == NIL {
            self.slots[i] = (NIL, NIL);
            self.bits[i / 64] &= !(1 << (i % 64));
            if self.bits[i / 64] == 0 {
                self.summary &= !(1 << (i / 64));
            }
        } else {
            self.slots[i].0 = next;
        }
        self.in_wheel -= 1;
        Some((t, ev))
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.in_wheel == 0 && self.far.is_empty()
    }
}

/// When each SM next needs a cycle, for the engine: which SMs are due at a step, visited
/// in SM order, without a pass over every SM per cycle (a 132-SM H100 running a small
/// launch has a handful of SMs busy, and a stalled SM costs nothing).
///
/// `due[i]` is authoritative. An SM due at the step after the current one is a bit in
/// `next`; one due later is in a min-heap of (time, SM), where an entry whose time no
/// longer equals `due` is stale and skipped. [`SmAgenda::begin`] moves everything due by
/// `now` into the bitmap of the current step, which [`SmAgenda::take_current`] yields in
/// ascending SM order (the order the engine always visited them in).
#[derive(Clone, Debug)]
pub struct SmAgenda {
    due: Vec<u64>,
    cur: Vec<u64>,
    next: Vec<u64>,
    /// The step `next` belongs to.
    next_at: u64,
    later: BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
}

impl SmAgenda {
    /// `n` SMs, none due.
    pub fn new(n: usize) -> SmAgenda {
        let words = n.div_ceil(64).max(1);
        SmAgenda {
            due: vec![u64::MAX; n],
            cur: vec![0; words],
            next: vec![0; words],
            next_at: u64::MAX,
            later: BinaryHeap::new(),
        }
    }

    /// When SM `i` is due (`u64::MAX`: not until an event makes it so).
    pub fn due(&self, i: usize) -> u64 {
        self.due[i]
    }

    /// Starts step `now`: every SM due by then joins the current set.
    pub fn begin(&mut self, now: u64) {
        if self.next_at <= now {
            for (c, n) in self.cur.iter_mut().zip(&mut self.next) {
                *c |= std::mem::take(n);
            }
            self.next_at = u64::MAX;
        }
        while let Some(&std::cmp::Reverse((t, i))) = self.later.peek() {
            if t > now {
                break;
            }
            self.later.pop();
            if self.due[i as usize] == t {
                self.cur[i as usize / 64] |= 1 << (i % 64);
            }
        }
    }

    /// SM `i` is due now (a reply, a launch), at step `now` (after [`SmAgenda::begin`]).
    pub fn due_now(&mut self, i: usize, now: u64) {
        self.due[i] = now;
        self.cur[i / 64] |= 1 << (i % 64);
    }

    /// Whether some SM is due at the current step.
    pub fn any_current(&self) -> bool {
        self.cur.iter().any(|&w| w != 0)
    }

    /// The lowest SM of the current set, removed from it.
    pub fn take_current(&mut self) -> Option<usize> {
        for (k, w) in self.cur.iter_mut().enumerate() {
            if *w != 0 {
                let b = w.trailing_zeros() as usize;
                *w &= *w - 1;
                return Some(k * 64 + b);
            }
        }
        None
    }

    /// SM `i`, visited at step `now`, is next due at `t` (`u64::MAX`: on an event).
    pub fn set(&mut self, i: usize, t: u64, now: u64) {
        self.due[i] = t;
        if t == u64::MAX {
            return;
        }
        if t == now + 1 {
            self.next[i / 64] |= 1 << (i % 64);
            self.next_at = t;
        } else {
            self.later.push(std::cmp::Reverse((t, i as u32)));
        }
    }

    /// The earliest time an SM not in the current set is due (`u64::MAX`: none).
    pub fn first_due(&mut self) -> u64 {
        while let Some(&std::cmp::Reverse((t, i))) = self.later.peek() {
            if self.due[i as usize] == t {
                break;
            }
            self.later.pop();
        }
        let later = self.later.peek().map_or(u64::MAX, |r| r.0 .0);
        if self.next.iter().any(|&w| w != 0) {
            later.min(self.next_at)
        } else {
            later
        }
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

    /// The wheel against the obvious reference (a list sorted by time, then push order),
    /// with times spanning several windows and pops at irregular times.
    #[test]
    fn matches_sorted_reference() {
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            r = r
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            r >> 33
        };
        let (mut now, mut id) = (0u64, 0u64);
        for _ in 0..20_000 {
            match next() % 4 {
                0 | 1 => {
                    let d = match next() % 3 {
                        0 => next() % 8,
                        1 => next() % 600,
                        _ => next() % (3 * WHEEL as u64),
                    };
                    q.push(now + d, id);
                    reference.push((now + d, id));
                    id += 1;
                }
                2 => now += next() % 50,
                _ => {
                    // The queue's earliest time agrees with the reference's.
                    let want = reference.iter().map(|e| e.0).min();
                    assert_eq!(q.next_time(), want);
                    while let Some((t, e)) = q.pop_due(now) {
                        let k = (0..reference.len())
                            .min_by_key(|&k| reference[k])
                            .expect("reference not empty");
                        assert_eq!((t, e), reference.remove(k));
                    }
                    assert!(reference.iter().all(|e| e.0 > now));
                }
            }
        }
    }
}
