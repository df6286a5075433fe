//! LASER's placement of child TBs (Tang et al., POMACS 2018, §6; issue 43): a per-SM reuse
//! monitor of three Bloom filters predicts, when a TB launches a child grid, whether the
//! child will reuse its parent's (or its siblings') data; a child predicted to reuse is
//! placed in the CU queue of the SM its parent TB runs on, any other child joins the global
//! queue with the host's TBs. An SM with a free context takes a TB from its own queue, else
//! from the global queue; once every SM has been served so, an SM with a free context and
//! an empty queue steals one from the tail of the longest queue whose SM has no free context
//! left (LASER's stealing across CU queues). The SMs are visited round robin, one TB each per
//! call, as LRR does.
//!
//! The monitor ([`ReuseMonitor`]) follows §6: three Bloom filters of 1,000 entries at a 0.1
//! false-positive probability (4,840 bits, 605 bytes each, the paper's size; 3 hash
//! functions, MurmurHash2's 64-bit variant with three seeds), a hit and a miss counter each,
//! fed with every L1 read of the SM at 128-byte line granularity. A read of a child TB is
//! checked against the parent-child filter and the sibling filter; a read of a TB that is a
//! parent (a host TB, or a TB that has launched a grid) is added to the parent-child filter,
//! a child's to the sibling filter; every read is checked against and added to the self
//! filter. Only misses are added (a hit changes no bit). The prediction is the reuse type
//! whose hit rate is above 0.5 and at least the others'; parent-child and sibling reuse are
//! high priority (placed on the parent's SM), self reuse and none low. The first
//! [`WARMUP_GRIDS`] child grids are placed on their parent's SM unconditionally, so that the
//! monitor sees child reads (§6, "the first couple of child kernels").
//!
//! What differs from the paper: the filters are not reset when a parent kernel finishes
//! (here one launch is one parent kernel); the kernel-level HPQ/LPQ order is modelled by
//! the queues a child's TBs join (its SM's queue is served before the global queue); a
//! child's reuse of its own lines counts as sibling reuse, as in the paper's filters. The
//! two-level warp scheduler is a warp policy, `--warp-policy laser-two-level`
//! ([`crate::timing::warp_sched::two_level`]): with it, the warps of a child placed on its
//! parent's SM join the parent TB's warp group ([`TbScheduler::join_group`]); with any
//! other warp policy the groups are ignored.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{ChildOrigin, DispatchContext, TbPolicyInfo, TbScheduler};

/// Child grids placed on their parent's SM before the monitor's prediction is used.
pub const WARMUP_GRIDS: u64 = 2;
/// Bits of one Bloom filter: 1,000 entries at a 0.1 false-positive rate (605 bytes).
pub const BLOOM_BITS: usize = 4_840;
/// Hash functions of one Bloom filter (`m / n * ln 2` = 3.35, rounded down).
pub const BLOOM_HASHES: u64 = 3;
/// Hit rate above which a reuse type is predicted (§6: "empirically set to 0.5").
pub const THRESHOLD: f64 = 0.5;

/// MurmurHash64A (Austin Appleby's MurmurHash2, 64-bit) of one 64-bit key.
pub fn murmur64a(key: u64, seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ 8u64.wrapping_mul(M);
    let mut k = key.wrapping_mul(M);
    k ^= k >> R;
    k = k.wrapping_mul(M);
    h ^= k;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// A Bloom filter of [`BLOOM_BITS`] bits and [`BLOOM_HASHES`] hash functions.
#[derive(Clone, Debug)]
pub struct Bloom {
    bits: Vec<u64>,
}

impl Default for Bloom {
    fn default() -> Self {
        Bloom {
            bits: vec![0; BLOOM_BITS.div_ceil(64)],
        }
    }
}

impl Bloom {
    fn positions(key: u64) -> impl Iterator<Item = usize> {
        (0..BLOOM_HASHES).map(move |s| (murmur64a(key, s) % BLOOM_BITS as u64) as usize)
    }

    /// Whether `key` may have been inserted (never false for an inserted key).
    pub fn contains(&self, key: u64) -> bool {
        Self::positions(key).all(|p| self.bits[p / 64] >> (p % 64) & 1 == 1)
    }

    /// Inserts `key`.
    pub fn insert(&mut self, key: u64) {
        for p in Self::positions(key) {
            self.bits[p / 64] |= 1 << (p % 64);
        }
    }
}

/// The reuse types the monitor tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reuse {
    /// Children read what their parent read.
    ParentChild,
    /// Children read what other children read.
    Sibling,
    /// A kernel reads what it read before.
    SelfReuse,
    /// None above the threshold.
    None,
}

/// One filter's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterCounts {
    /// Checks that found the line.
    pub hits: u64,
    /// Checks that did not.
    pub misses: u64,
}

impl FilterCounts {
    /// Hits over checks (0 without checks).
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }

    fn count(&mut self, hit: bool) {
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
    }
}

/// One SM's reuse monitor: parent-child, sibling and self filters with their counters.
#[derive(Clone, Debug, Default)]
pub struct ReuseMonitor {
    filters: [Bloom; 3],
    counts: [FilterCounts; 3],
}

const PC: usize = 0;
const SIB: usize = 1;
const SELF: usize = 2;

impl ReuseMonitor {
    /// An L1 read of `line` by a TB that is a parent (`parent`) and/or a child (`child`).
    pub fn read(&mut self, line: u64, parent: bool, child: bool) {
        if child {
            for f in [PC, SIB] {
                let hit = self.filters[f].contains(line);
                self.counts[f].count(hit);
            }
            self.filters[SIB].insert(line);
        }
        if parent {
            self.filters[PC].insert(line);
        }
        let hit = self.filters[SELF].contains(line);
        self.counts[SELF].count(hit);
        if !hit {
            self.filters[SELF].insert(line);
        }
    }

    /// The counters: parent-child, sibling, self.
    pub fn counts(&self) -> [FilterCounts; 3] {
        self.counts
    }

    /// The predicted reuse type of a child launched now.
    pub fn predict(&self) -> Reuse {
        let r = self.counts.map(|c| c.hit_rate());
        let best = |i: usize| r[i] > THRESHOLD && r.iter().all(|&x| r[i] >= x);
        if best(PC) {
            Reuse::ParentChild
        } else if best(SIB) {
            Reuse::Sibling
        } else if best(SELF) {
            Reuse::SelfReuse
        } else {
            Reuse::None
        }
    }
}

/// LASER's decisions and the monitors' counters (in the stats' `device_launches`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlacementStats {
    /// Child grids placed on their parent's SM (warm-up included).
    pub grids_on_parent_sm: u64,
    /// Child grids sent to the global queue.
    pub grids_global: u64,
    /// Child grids placed during the warm-up.
    pub grids_warmup: u64,
    /// Predictions made after the warm-up: parent-child, sibling, self, none.
    pub predicted: [u64; 4],
    /// Child TBs that ran on their parent TB's SM.
    pub tbs_on_parent_sm: u64,
    /// TBs taken from another SM's queue.
    pub tbs_stolen: u64,
    /// The monitors' counters summed over SMs: parent-child, sibling, self.
    pub monitor: [FilterCounts; 3],
    /// Their hit rates.
    pub monitor_hit_rates: [f64; 3],
}

/// LASER's TB scheduler.
#[derive(Debug, Clone)]
pub struct Laser {
    host_tbs: u32,
    global: VecDeque<u32>,
    /// Per SM: its CU queue of (TB, parent's SM).
    cuq: Vec<VecDeque<u32>>,
    ptr: usize,
    monitors: Vec<ReuseMonitor>,
    /// Per TB id: it has launched a grid.
    is_parent: Vec<bool>,
    /// Per TB id from `host_tbs`: the SM its parent ran on.
    parent_sm: Vec<u32>,
    /// Per TB id from `host_tbs`: its parent TB when it was placed on its parent's SM
    /// (its warps then join the parent's warp group).
    join: Vec<Option<u32>>,
    stats: PlacementStats,
}

impl Laser {
    /// Over `num_sms` SMs, the host's `num_tbs` TBs in the global queue.
    pub fn new(num_tbs: u32, num_sms: u32) -> Laser {
        let n = num_sms.max(1) as usize;
        Laser {
            host_tbs: num_tbs,
            global: (0..num_tbs).collect(),
            cuq: vec![VecDeque::new(); n],
            ptr: 0,
            monitors: vec![ReuseMonitor::default(); n],
            is_parent: Vec::new(),
            parent_sm: Vec::new(),
            join: Vec::new(),
            stats: PlacementStats::default(),
        }
    }

    fn is_parent(&self, tb: u32) -> bool {
        tb < self.host_tbs || self.is_parent.get(tb as usize).copied().unwrap_or(false)
    }

    /// Issues `tb` to `sm`.
    fn push(&mut self, sm: usize, tb: u32, out: &mut Vec<(u32, u32)>) {
        if self.parent_sm(tb) == Some(sm as u32) {
            self.stats.tbs_on_parent_sm += 1;
        }
        out.push((sm as u32, tb));
        self.ptr = (sm + 1) % self.cuq.len();
    }

    /// The TB's parent's SM (`None` for a host TB).
    fn parent_sm(&self, tb: u32) -> Option<u32> {
        tb.checked_sub(self.host_tbs)
            .and_then(|i| self.parent_sm.get(i as usize).copied())
    }
}

impl TbScheduler for Laser {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        let n = self.cuq.len();
        let start = self.ptr;
        let mut left: Vec<u32> = (0..n).map(|i| free.get(i).copied().unwrap_or(0)).collect();
        // First every SM serves its own queue, then the global queue; only then may an SM
        // with nothing of its own steal, and only a TB its queue's SM cannot start now (a
        // thief visited first would otherwise take a child from an idle parent SM).
        let mut served = vec![false; n];
        for k in 0..n {
            let sm = (start + k) % n;
            if left[sm] == 0 {
                continue;
            }
            let Some(tb) = self.cuq[sm].pop_front().or_else(|| self.global.pop_front()) else {
                continue;
            };
            served[sm] = true;
            left[sm] -= 1;
            self.push(sm, tb, out);
        }
        for k in 0..n {
            let sm = (start + k) % n;
            if served[sm] || left[sm] == 0 || !self.cuq[sm].is_empty() {
                continue;
            }
            // The longest queue whose SM is full (lowest SM on ties); its tail.
            let Some(donor) = (0..n)
                .filter(|&d| d != sm && left[d] == 0 && !self.cuq[d].is_empty())
                .max_by_key(|&d| (self.cuq[d].len(), std::cmp::Reverse(d)))
            else {
                continue;
            };
            if let Some(tb) = self.cuq[donor].pop_back() {
                self.stats.tbs_stolen += 1;
                left[sm] -= 1;
                self.push(sm, tb, out);
            }
        }
    }

    fn pending(&self) -> u64 {
        (self.global.len() + self.cuq.iter().map(VecDeque::len).sum::<usize>()) as u64
    }

    fn stolen(&self) -> u64 {
        self.stats.tbs_stolen
    }

    fn add_child_tbs(&mut self, tbs: std::ops::Range<u32>, origin: ChildOrigin) -> bool {
        let p = origin.parent_tb as usize;
        if self.is_parent.len() <= p {
            self.is_parent.resize(p + 1, false);
        }
        self.is_parent[p] = true;
        let sm = (origin.parent_sm as usize).min(self.cuq.len() - 1);
        let grids = self.stats.grids_on_parent_sm + self.stats.grids_global;
        let local = if grids < WARMUP_GRIDS {
            self.stats.grids_warmup += 1;
            true
        } else {
            let r = self.monitors[sm].predict();
            let i = match r {
                Reuse::ParentChild => 0,
                Reuse::Sibling => 1,
                Reuse::SelfReuse => 2,
                Reuse::None => 3,
            };
            self.stats.predicted[i] += 1;
            matches!(r, Reuse::ParentChild | Reuse::Sibling)
        };
        for tb in tbs {
            self.parent_sm.push(sm as u32);
            self.join.push(local.then_some(origin.parent_tb));
            if local {
                self.cuq[sm].push_back(tb);
            } else {
                self.global.push_back(tb);
            }
        }
        if local {
            self.stats.grids_on_parent_sm += 1;
        } else {
            self.stats.grids_global += 1;
        }
        true
    }

    fn join_group(&self, tb: u32) -> Option<u32> {
        tb.checked_sub(self.host_tbs)
            .and_then(|i| self.join.get(i as usize).copied().flatten())
    }

    fn observes_reads(&self) -> bool {
        true
    }

    fn observe_read(&mut self, sm: u32, tb: u32, line: u64) {
        let (parent, child) = (self.is_parent(tb), tb >= self.host_tbs);
        if let Some(m) = self.monitors.get_mut(sm as usize) {
            m.read(line, parent, child);
        }
    }

    fn placement(&self) -> Option<PlacementStats> {
        let mut s = self.stats.clone();
        for m in &self.monitors {
            for (t, c) in s.monitor.iter_mut().zip(m.counts()) {
                t.hits += c.hits;
                t.misses += c.misses;
            }
        }
        s.monitor_hit_rates = s.monitor.map(|c| c.hit_rate());
        Some(s)
    }
}

/// LASER.
pub const LASER: TbPolicyInfo = TbPolicyInfo {
    name: "laser",
    aliases: &[],
    description: "LASER (Tang et al. §6): host TBs round robin; child TBs on their parent's SM \
                  when a per-SM Bloom-filter reuse monitor predicts reuse; per-SM queues with \
                  stealing",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| Ok(Box::new(Laser::new(c.num_tbs, c.num_sms))),
};

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    /// MurmurHash64A's reference values for 8-byte keys would need the C source; instead:
    /// deterministic, seed-dependent, and spread over the filter's bits.
    #[test]
    fn hash_is_deterministic_and_spreads() {
        assert_eq!(murmur64a(42, 0), murmur64a(42, 0));
        assert_ne!(murmur64a(42, 0), murmur64a(42, 1));
        let mut used = vec![false; BLOOM_BITS];
        for k in 0..1000u64 {
            used[(murmur64a(k, 0) % BLOOM_BITS as u64) as usize] = true;
        }
        // 1,000 keys over 4,840 bits: about 4,840 * (1 - e^-0.207) = 906 distinct bits.
        let n = used.iter().filter(|&&b| b).count();
        assert!((850..=960).contains(&n), "{n}");
    }

    /// No false negatives; about 10 % false positives at 1,000 entries (the paper's sizing).
    #[test]
    fn bloom_filter_false_positive_rate() {
        let mut b = Bloom::default();
        for k in 0..1000u64 {
            b.insert(k * 128);
        }
        assert!((0..1000u64).all(|k| b.contains(k * 128)));
        let fp = (1000..21_000u64).filter(|&k| b.contains(k * 128)).count();
        let rate = fp as f64 / 20_000.0;
        assert!((0.05..0.15).contains(&rate), "{rate}");
    }

    /// Synthetic traces: children reading their parent's lines predict parent-child; children
    /// reading each other's (disjoint from the parent's) sibling; a kernel rereading its own
    /// lines self; streaming reads nothing.
    #[test]
    fn monitor_predicts_the_reuse_type() {
        let mut m = ReuseMonitor::default();
        (0..200).for_each(|l| m.read(l, true, false));
        (0..200).for_each(|l| m.read(l, false, true));
        assert_eq!(m.predict(), Reuse::ParentChild);

        let mut m = ReuseMonitor::default();
        (0..200).for_each(|l| m.read(l, true, false));
        for _ in 0..4 {
            (1000..1100).for_each(|l| m.read(l, false, true));
        }
        assert_eq!(m.predict(), Reuse::Sibling);

        let mut m = ReuseMonitor::default();
        for _ in 0..4 {
            (0..100).for_each(|l| m.read(l, true, false));
        }
        assert_eq!(m.predict(), Reuse::SelfReuse);

        let mut m = ReuseMonitor::default();
        (0..300).for_each(|l| m.read(l, true, false));
        (5000..5300).for_each(|l| m.read(l, false, true));
        assert_eq!(m.predict(), Reuse::None);
    }

    /// Placement: host TBs round robin; the warm-up children go to their parent's SM queue,
    /// later ones by the prediction; an SM with an empty queue takes the global queue, then
    /// steals from the tail of the longest queue.
    #[test]
    fn children_follow_the_prediction_and_idle_sms_steal() {
        let mut s = Laser::new(2, 2);
        assert_eq!(drive(&mut s, 2, 1, 1), vec![vec![0], vec![1]]);
        // Two warm-up grids from TB 1 on SM 1: four TBs in SM 1's queue.
        assert!(s.add_child_tbs(
            2..4,
            ChildOrigin {
                parent_tb: 1,
                parent_sm: 1
            }
        ));
        assert!(s.add_child_tbs(
            4..6,
            ChildOrigin {
                parent_tb: 1,
                parent_sm: 1
            }
        ));
        assert_eq!(s.cuq[1], [2, 3, 4, 5]);
        // No reads seen: no reuse predicted, so the third grid goes to the global queue.
        assert!(s.add_child_tbs(
            6..7,
            ChildOrigin {
                parent_tb: 0,
                parent_sm: 0
            }
        ));
        assert_eq!(s.global, [6]);
        let mut out = Vec::new();
        s.assign(&[1, 1], &mut out);
        // SM 0 (the pointer wrapped to it) takes the global TB, SM 1 its own queue's head.
        assert_eq!(out, vec![(0, 6), (1, 2)]);
        out.clear();
        s.assign(&[0, 1], &mut out);
        // SM 1 starts its queue's head itself; SM 0 is full, so nothing is stolen.
        assert_eq!(out, vec![(1, 3)]);
        out.clear();
        s.assign(&[1, 0], &mut out);
        // SM 0's queue and the global queue are empty and SM 1 is full: SM 0 steals SM 1's
        // tail.
        assert_eq!(out, vec![(0, 5)]);
        assert_eq!(s.stolen(), 1);
        // Child reads of the parent's lines on SM 1 make the next grid local again.
        for l in 0..100 {
            s.observe_read(1, 1, l);
            s.observe_read(1, 3, l);
        }
        assert!(s.add_child_tbs(
            7..8,
            ChildOrigin {
                parent_tb: 1,
                parent_sm: 1
            }
        ));
        assert_eq!(s.cuq[1], [4, 7]);
        let p = s.placement().unwrap();
        assert_eq!(p.grids_on_parent_sm, 3);
        assert_eq!(p.grids_global, 1);
        assert_eq!(p.predicted, [1, 0, 0, 1]);
        // TBs 2 and 3 on SM 1 and TB 6 on SM 0 ran where their parents did; the stolen TB 5
        // did not.
        assert_eq!(p.tbs_on_parent_sm, 3);
        assert_eq!(s.pending(), 2);
    }
}
