//! The state a channel keeps per request, bank and pseudo-channel, and the sets of banks
//! its scheduler looks at ([`super::channel`] drives them).

use super::Tag;
use std::collections::VecDeque;

/// No time, no row: a bank precharged, a bound not set.
pub(super) const NONE: u64 = u64::MAX;

/// A request in the controller.
#[derive(Clone, Copy, Debug)]
pub(super) struct Req {
    /// Arrival order in the channel.
    pub(super) seq: u64,
    /// Its bank in the channel and its row there.
    pub(super) bank: u32,
    pub(super) row: u64,
    /// Bursts it moves.
    pub(super) bursts: u32,
    /// DRAM cycle it leaves the pipeline for the queues.
    pub(super) arrive: u64,
    /// Core cycle it was handed to the channel.
    pub(super) pushed: u64,
    /// Whose data (reads).
    pub(super) tag: Tag,
    /// A write (else a read).
    pub(super) write: bool,
    /// An ACTIVATE was issued for it (a row miss, or a conflict with `pre`).
    pub(super) act: bool,
    /// A PRECHARGE was issued for it (a row conflict).
    pub(super) pre: bool,
}

/// A bank: its row buffer, the earliest time of each kind of command, refresh, and its
/// queued requests.
pub(super) struct Bank {
    /// The open row, `NONE` when precharged.
    pub(super) open: u64,
    /// Earliest column command (ACTIVATE + tRCD).
    pub(super) col_ok: u64,
    /// Earliest PRECHARGE (tRAS, tRTP, write recovery).
    pub(super) pre_ok: u64,
    /// Earliest ACTIVATE (tRC, PRECHARGE + tRP, refresh).
    pub(super) act_ok: u64,
    /// Start of the bank's next refresh.
    pub(super) next_ref: u64,
    /// Per kind: the arrival number of the oldest queued request hitting the open row
    /// (valid while `hits` is not 0) and of the oldest queued request, kept here so that
    /// comparing banks does not touch their queues.
    pub(super) hit_seq: [u64; 2],
    pub(super) front_seq: [u64; 2],
    /// Per kind: queued requests hitting the open row, and where the oldest is.
    pub(super) hits: [u32; 2],
    pub(super) hit_pos: [u32; 2],
    /// Queued reads and writes, each in arrival order.
    pub(super) q: [VecDeque<Req>; 2],
}

impl Bank {
    /// The oldest request of kind `k` hitting the open row is at `from` or later (one of
    /// `hits` is): finds it.
    pub(super) fn next_hit(&mut self, k: usize, from: usize) {
        let open = self.open;
        if let Some(i) = self.q[k].iter().skip(from).position(|r| r.row == open) {
            self.hit_pos[k] = (from + i) as u32;
            self.hit_seq[k] = self.q[k][from + i].seq;
        }
    }

    /// Counts the requests of kind `k` hitting the open row and finds the oldest.
    pub(super) fn find_hits(&mut self, k: usize) {
        let open = self.open;
        let q = &self.q[k];
        let mut n = 0;
        let mut first = None;
        for (i, r) in q.iter().enumerate() {
            if r.row == open {
                n += 1;
                first.get_or_insert(i);
            }
        }
        self.hits[k] = n;
        if let Some(i) = first {
            self.hit_pos[k] = i as u32;
            self.hit_seq[k] = q[i].seq;
        }
    }

    pub(super) fn set_front(&mut self, k: usize) {
        self.front_seq[k] = self.q[k].front().map_or(NONE, |r| r.seq);
    }
}

#[derive(Clone, Copy, Default)]
pub(super) struct Pc {
    /// Earliest column command (tCCD_S).
    pub(super) col_ok: u64,
    /// Earliest ACTIVATE (tRRD).
    pub(super) act_ok: u64,
    /// The last four ACTIVATEs (tFAW), a ring, and how many were issued.
    pub(super) acts: [u64; 4],
    pub(super) nacts: u64,
}

impl Pc {
    pub(super) fn faw_ok(&self, faw: u64) -> u64 {
        if self.nacts < 4 {
            0
        } else {
            self.acts[(self.nacts % 4) as usize] + faw
        }
    }
}

/// A set of banks.
#[derive(Clone, Default)]
pub(super) struct Bits(pub(super) Vec<u64>);

impl Bits {
    pub(super) fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    pub(super) fn set(&mut self, i: usize, on: bool) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if on {
            self.0[w] |= b;
        } else {
            self.0[w] &= !b;
        }
    }
}

/// Banks with row hits, oldest hit first: (the hit's arrival number, the bank).
#[derive(Clone, Default)]
pub(super) struct Order(pub(super) Vec<(u64, u32)>);

impl Order {
    pub(super) fn insert(&mut self, seq: u64, bank: usize) {
        let i = self.0.partition_point(|e| e.0 < seq);
        self.0.insert(i, (seq, bank as u32));
    }
    pub(super) fn remove(&mut self, seq: u64) {
        let i = self.0.partition_point(|e| e.0 < seq);
        if self.0.get(i).is_some_and(|e| e.0 == seq) {
            self.0.remove(i);
        }
    }
}

/// Calls `f` with each bank in `a` and not in `b` (`b = None`: each bank in `a`).
pub(super) fn each(a: &Bits, b: Option<&Bits>, mut f: impl FnMut(usize)) {
    for (w, &word) in a.0.iter().enumerate() {
        let mut x = word & !b.map_or(0, |b| b.0[w]);
        while x != 0 {
            f(w * 64 + x.trailing_zeros() as usize);
            x &= x - 1;
        }
    }
}
