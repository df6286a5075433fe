//! Intra-cluster coalescing (ICC, seed paper 002: Wang et al., IEEE TC 2019, §3.3 and §6):
//! per cluster of SMs sharing one NoC injection port, a **merge table** that keeps a read
//! miss from being sent again while the same block is already in flight from the cluster
//! (the reply is broadcast to every SM that asked), a **coalesced cache** (CC) of the lines
//! that had more than one requester, and the **redundancy metric** (the paper's
//! intra-cluster locality, ICL, Eq. 1).
//!
//! What the paper fixes (§6.1-6.4, §7), and the model does:
//! - The merge table is fully associative, `merge_table_entries` (48) entries of a block
//!   address and an SM bit vector. Only global reads (L1 read misses) use it; writes and
//!   atomics bypass it. Hit: the SM's bit is set and nothing is sent. Miss: an entry is
//!   allocated and the request is sent; with every entry taken the request is sent
//!   untracked. A reply is looked up by its address: the entry's SMs all get it, and the
//!   entry is freed. An untracked reply goes to its own SM only.
//! - The CC (`coalesced_cache_entries`, 24) is checked on an L1 miss before the merge table;
//!   a hit answers the SM without a NoC request. A line enters it when a reply frees a
//!   merge-table entry with more than one requester.
//! - One cycle each (`latency_cycles`): the CC lookup delays every L1 read miss by one
//!   cycle (a hit is answered then), the merge-table lookup delays the injection by one.
//! - Redundancy: a read request (an L1 miss reaching the cluster, before the CC and the
//!   merge table) is redundant when the same cluster requested the same 128 B line
//!   (`redundancy_line_bytes`) at most `redundancy_window_cycles` (2,000: §4.2 / Fig. 8;
//!   §3.3 varies it over 500-2,000) earlier. It is measured whenever any ICC key is on
//!   (`icc.redundancy` alone measures it without changing the model).
//!
//! Choices where the paper says nothing (also in docs/VALIDATION.md):
//! - A reply is matched to its merge-table entry by address *and* the SM that allocated the
//!   entry, so a reply to an untracked request (sent while the table was full) never frees
//!   the entry of a later tracked request for the same block: every SM gets exactly one
//!   reply per request it made.
//! - The reply-side lookup adds no cycle (it is done while the packet leaves the cluster's
//!   response FIFO); the broadcast over the cluster's bus is free (one packet, as in §6.1).
//! - The CC replaces its least recently used line; writes leave a present CC line as they
//!   leave a present L1 line (write-through L1, no data is modelled).
//! - The merge table keys on the request's block (the L1's fill unit: the line on the
//!   paper's GPU, a 32 B sector on sectored L1s).

use super::block_map::BlockMap;
use serde::{Deserialize, Serialize};

/// The ICC configuration (`icc.*` keys of `--set` and of `paver sweep` overrides; absent
/// from the echoed configuration while everything is at its default).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IccConfig {
    /// The merge table (`--icc`).
    pub merge_table: bool,
    /// The coalesced cache (`--coalesced-cache`; needs the merge table, which fills it).
    pub coalesced_cache: bool,
    /// Measure the redundancy (and count the NoC read requests) without the merge table.
    pub redundancy: bool,
    /// Merge-table entries per cluster (§6.2: 48).
    pub merge_table_entries: u32,
    /// Coalesced-cache lines per cluster (§6.4: 24).
    pub coalesced_cache_entries: u32,
    /// Access latency of the merge table and of the coalesced cache, each (§7: one cycle).
    pub latency_cycles: u32,
    /// Redundancy window in core cycles (§3.3: 500-2,000; 2,000 for the 19.4 %).
    pub redundancy_window_cycles: u64,
    /// Line size of the redundancy metric (§3.3: 128 B).
    pub redundancy_line_bytes: u32,
}

impl Default for IccConfig {
    fn default() -> Self {
        IccConfig {
            merge_table: false,
            coalesced_cache: false,
            redundancy: false,
            merge_table_entries: 48,
            coalesced_cache_entries: 24,
            latency_cycles: 1,
            redundancy_window_cycles: 2000,
            redundancy_line_bytes: 128,
        }
    }
}

impl IccConfig {
    /// Whether every field is at its default (the configuration then omits `icc`).
    pub fn is_default(&self) -> bool {
        *self == IccConfig::default()
    }

    /// Whether the run has an ICC unit (mechanism or measurement).
    pub fn active(&self) -> bool {
        self.merge_table || self.coalesced_cache || self.redundancy
    }

    /// Checks the values against the GPU's `sms_per_cluster`: a problem as text.
    pub fn check(&self, sms_per_cluster: u32) -> Result<(), String> {
        if self.coalesced_cache && !self.merge_table {
            return Err(
                "icc.coalesced_cache needs icc.merge_table (`--icc`): the merge table fills it"
                    .into(),
            );
        }
        for (k, v) in [
            ("icc.merge_table_entries", self.merge_table_entries),
            ("icc.coalesced_cache_entries", self.coalesced_cache_entries),
        ] {
            if v == 0 || v > 1 << 20 {
                return Err(format!("{k} = {v}, but it must be in 1..={}", 1 << 20));
            }
        }
        if self.redundancy_window_cycles == 0 {
            return Err("icc.redundancy_window_cycles = 0, but it must be positive".into());
        }
        let l = self.redundancy_line_bytes;
        if !l.is_power_of_two() || l < 32 {
            return Err(format!(
                "icc.redundancy_line_bytes = {l}, but it must be a power of two of at least 32"
            ));
        }
        if self.merge_table && sms_per_cluster > 64 {
            return Err(format!(
                "interconnect.sms_per_cluster = {sms_per_cluster}: the merge table's SM bit vector holds 64"
            ));
        }
        Ok(())
    }
}

/// ICC counters, summed over clusters (the stats key `icc`, present only when an ICC key
/// is on).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IccStats {
    /// Read requests reaching the clusters' ICC units (L1 read misses): the ICL denominator.
    pub read_requests: u64,
    /// Of those, redundant ones (same cluster, same line, within the window).
    pub redundant_requests: u64,
    /// `redundant_requests / read_requests` (ICL, Eq. 1; 0 without requests).
    pub redundancy: f64,
    /// L1 read misses answered by the coalesced cache.
    pub coalesced_cache_hits: u64,
    /// Lines put in the coalesced cache.
    pub coalesced_cache_fills: u64,
    /// Read misses merged into an in-flight request (merge-table hits: not sent).
    pub merges: u64,
    /// Read misses sent untracked because every merge-table entry was taken.
    pub merge_table_full: u64,
    /// Replies delivered to SMs whose request was merged (the broadcast's extra copies).
    pub broadcast_replies: u64,
    /// Read requests injected into the NoC (the paper's NoC traffic, §8.3).
    pub noc_read_requests: u64,
}

/// What the ICC unit does with a read miss ([`Icc::lookup`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The coalesced cache has the line: answered without the NoC.
    CcHit,
    /// The block is in flight from the cluster: merged, not sent.
    Merged,
    /// Send it into the NoC (`tracked`: it holds a merge-table entry).
    Send {
        /// Whether a merge-table entry was allocated.
        tracked: bool,
    },
}

/// One merge-table entry.
#[derive(Clone, Copy, Debug)]
struct Entry {
    block: u64,
    /// The SM that allocated it (whose request was sent).
    owner: u32,
    /// Bit `i`: SM `i` of the cluster waits for the block.
    sms: u64,
}

/// The ICC unit of one cluster.
#[derive(Clone, Debug, Default)]
struct Cluster {
    table: Vec<Entry>,
    /// The coalesced cache: (block, last use), at most `coalesced_cache_entries`.
    cc: Vec<(u64, u64)>,
    /// Per line: when the cluster last requested it (the redundancy metric).
    last: BlockMap<u64>,
}

/// The ICC units of every cluster.
#[derive(Clone, Debug)]
pub struct Icc {
    cfg: IccConfig,
    sms_per_cluster: u32,
    line_shift: u32,
    clusters: Vec<Cluster>,
    /// A use counter for the coalesced cache's LRU order.
    tick: u64,
    stats: IccStats,
}

impl Icc {
    /// The units of `clusters` clusters of `sms_per_cluster` SMs (SM `s` is in cluster
    /// `s / sms_per_cluster`, as the NoC numbers them).
    pub fn new(cfg: &IccConfig, clusters: u32, sms_per_cluster: u32) -> Icc {
        Icc {
            cfg: cfg.clone(),
            sms_per_cluster: sms_per_cluster.max(1),
            line_shift: cfg.redundancy_line_bytes.max(1).trailing_zeros(),
            clusters: (0..clusters.max(1)).map(|_| Cluster::default()).collect(),
            tick: 0,
            stats: IccStats::default(),
        }
    }

    fn cluster(&self, sm: u32) -> usize {
        ((sm / self.sms_per_cluster) as usize).min(self.clusters.len() - 1)
    }

    /// Whether read misses go through [`Icc::lookup`] (the merge table is on); otherwise
    /// the unit only measures.
    pub fn intercepts(&self) -> bool {
        self.cfg.merge_table
    }

    /// Cycles from the L1 miss to the lookup: the CC's latency when it is on.
    pub fn lookup_delay(&self) -> u64 {
        if self.cfg.coalesced_cache {
            u64::from(self.cfg.latency_cycles)
        } else {
            0
        }
    }

    /// Cycles from the merge-table lookup to the injection.
    pub fn inject_delay(&self) -> u64 {
        u64::from(self.cfg.latency_cycles)
    }

    /// A read miss of `sm` for `block` reaches the cluster at `now`: counts it and whether
    /// it is redundant.
    pub fn record(&mut self, sm: u32, block: u64, now: u64) {
        let c = self.cluster(sm);
        let line = block >> self.line_shift;
        self.stats.read_requests += 1;
        let window = self.cfg.redundancy_window_cycles;
        if let Some(t) = self.clusters[c].last.insert(line, now) {
            if now.saturating_sub(t) <= window {
                self.stats.redundant_requests += 1;
            }
        }
    }

    /// A read sent into the NoC untouched (measurement only, or after [`Icc::lookup`]).
    pub fn count_injected(&mut self) {
        self.stats.noc_read_requests += 1;
    }

    /// The read miss of `sm` for `block` at the cluster's ICC unit: the coalesced cache
    /// first, then the merge table.
    pub fn lookup(&mut self, sm: u32, block: u64) -> Lookup {
        let c = self.cluster(sm);
        let bit = 1u64 << (sm % self.sms_per_cluster);
        self.tick += 1;
        let tick = self.tick;
        let cl = &mut self.clusters[c];
        if self.cfg.coalesced_cache {
            if let Some(e) = cl.cc.iter_mut().find(|e| e.0 == block) {
                e.1 = tick;
                self.stats.coalesced_cache_hits += 1;
                return Lookup::CcHit;
            }
        }
        if let Some(e) = cl.table.iter_mut().find(|e| e.block == block) {
            // The SM's own request for the block is in flight only if its L1 sent it
            // twice; then it is sent untracked so that each request gets one reply.
            if e.sms & bit == 0 {
                e.sms |= bit;
                self.stats.merges += 1;
                return Lookup::Merged;
            }
        } else if cl.table.len() < self.cfg.merge_table_entries as usize {
            cl.table.push(Entry {
                block,
                owner: sm,
                sms: bit,
            });
            self.stats.noc_read_requests += 1;
            return Lookup::Send { tracked: true };
        } else {
            self.stats.merge_table_full += 1;
        }
        self.stats.noc_read_requests += 1;
        Lookup::Send { tracked: false }
    }

    /// A read reply for `block` addressed to `sm` reaches its cluster: pushes every SM it
    /// goes to on `out` (the addressee first, then the merged SMs in SM order), frees the
    /// merge-table entry and fills the coalesced cache when the line had several requesters.
    pub fn reply(&mut self, sm: u32, block: u64, out: &mut Vec<u32>) {
        out.push(sm);
        let c = self.cluster(sm);
        let base = c as u32 * self.sms_per_cluster;
        let cl = &mut self.clusters[c];
        let Some(i) = cl
            .table
            .iter()
            .position(|e| e.block == block && e.owner == sm)
        else {
            return;
        };
        let e = cl.table.swap_remove(i);
        let own = 1u64 << (sm % self.sms_per_cluster);
        let mut rest = e.sms & !own;
        while rest != 0 {
            out.push(base + rest.trailing_zeros());
            rest &= rest - 1;
            self.stats.broadcast_replies += 1;
        }
        if self.cfg.coalesced_cache && e.sms.count_ones() > 1 {
            self.tick += 1;
            let tick = self.tick;
            if let Some(x) = cl.cc.iter_mut().find(|x| x.0 == block) {
                x.1 = tick;
                return;
            }
            if cl.cc.len() >= self.cfg.coalesced_cache_entries as usize {
                if let Some(lru) = (0..cl.cc.len()).min_by_key(|&k| cl.cc[k].1) {
                    cl.cc.swap_remove(lru);
                }
            }
            cl.cc.push((block, tick));
            self.stats.coalesced_cache_fills += 1;
        }
    }

    /// Merge-table entries in use in `sm`'s cluster.
    pub fn entries_in_use(&self, sm: u32) -> usize {
        self.clusters[self.cluster(sm)].table.len()
    }

    /// The counters, with the ratio filled in.
    pub fn stats(&self) -> IccStats {
        let mut s = self.stats.clone();
        s.redundancy = if s.read_requests == 0 {
            0.0
        } else {
            s.redundant_requests as f64 / s.read_requests as f64
        };
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mt: bool, cc: bool, entries: u32, cc_entries: u32) -> IccConfig {
        IccConfig {
            merge_table: mt,
            coalesced_cache: cc,
            merge_table_entries: entries,
            coalesced_cache_entries: cc_entries,
            ..IccConfig::default()
        }
    }

    #[test]
    fn merge_table_hit_miss_and_broadcast() {
        // 2 clusters of 5 SMs. SMs 0, 3 and 4 (cluster 0) miss on block 0x1000: the first is
        // sent and tracked, the others merge. SM 5 (cluster 1) is sent on its own.
        let mut icc = Icc::new(&cfg(true, false, 48, 24), 2, 5);
        assert_eq!(icc.lookup(0, 0x1000), Lookup::Send { tracked: true });
        assert_eq!(icc.lookup(3, 0x1000), Lookup::Merged);
        assert_eq!(icc.lookup(4, 0x1000), Lookup::Merged);
        assert_eq!(icc.lookup(5, 0x1000), Lookup::Send { tracked: true });
        // Another block in cluster 0 is a miss.
        assert_eq!(icc.lookup(3, 0x2000), Lookup::Send { tracked: true });
        assert_eq!(icc.entries_in_use(0), 2);
        // The reply to SM 0 is broadcast to SMs 0, 3, 4 and frees the entry.
        let mut out = Vec::new();
        icc.reply(0, 0x1000, &mut out);
        assert_eq!(out, vec![0, 3, 4]);
        assert_eq!(icc.entries_in_use(0), 1);
        // Cluster 1's reply goes to SM 5 alone.
        out.clear();
        icc.reply(5, 0x1000, &mut out);
        assert_eq!(out, vec![5]);
        // Block 0x1000 is no longer in flight: the next miss is sent again.
        assert_eq!(icc.lookup(4, 0x1000), Lookup::Send { tracked: true });
        let s = icc.stats();
        assert_eq!(
            (s.merges, s.broadcast_replies, s.noc_read_requests),
            (2, 2, 4)
        );
        assert_eq!(s.merge_table_full, 0);
    }

    #[test]
    fn a_full_table_sends_untracked_and_its_reply_frees_nothing() {
        // Two entries: blocks A and B tracked, C (from SM 1) untracked.
        let mut icc = Icc::new(&cfg(true, false, 2, 24), 1, 5);
        let (a, b, c) = (0x80, 0x100, 0x180);
        assert_eq!(icc.lookup(0, a), Lookup::Send { tracked: true });
        assert_eq!(icc.lookup(0, b), Lookup::Send { tracked: true });
        assert_eq!(icc.lookup(1, c), Lookup::Send { tracked: false });
        // A merge into an existing entry still works when the table is full.
        assert_eq!(icc.lookup(2, a), Lookup::Merged);
        assert_eq!(icc.stats().merge_table_full, 1);
        // A's reply frees one entry; C is then tracked by SM 3, so SM 1's untracked reply
        // for C goes to SM 1 only and leaves SM 3's entry.
        let mut out = Vec::new();
        icc.reply(0, a, &mut out);
        assert_eq!(out, vec![0, 2]);
        assert_eq!(icc.lookup(3, c), Lookup::Send { tracked: true });
        out.clear();
        icc.reply(1, c, &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(icc.entries_in_use(0), 2);
        out.clear();
        icc.reply(3, c, &mut out);
        assert_eq!(out, vec![3]);
        assert_eq!(icc.entries_in_use(0), 1);
    }

    #[test]
    fn coalesced_cache_takes_only_multi_requester_lines() {
        let mut icc = Icc::new(&cfg(true, true, 48, 2), 1, 5);
        let mut out = Vec::new();
        // Block A: one requester. Not cached: the next miss goes to the merge table.
        assert_eq!(icc.lookup(0, 0xa00), Lookup::Send { tracked: true });
        icc.reply(0, 0xa00, &mut out);
        assert_eq!(icc.lookup(1, 0xa00), Lookup::Send { tracked: true });
        icc.reply(1, 0xa00, &mut out);
        // Block B: two requesters. Cached: a later miss from any SM of the cluster hits.
        assert_eq!(icc.lookup(0, 0xb00), Lookup::Send { tracked: true });
        assert_eq!(icc.lookup(1, 0xb00), Lookup::Merged);
        icc.reply(0, 0xb00, &mut out);
        assert_eq!(icc.lookup(4, 0xb00), Lookup::CcHit);
        // Blocks C and D, two requesters each, fill the 2-line cache: D evicts the least
        // recently used of B (last used at its hit) and C (filled after it): B.
        for blk in [0xc00, 0xd00] {
            assert_eq!(icc.lookup(2, blk), Lookup::Send { tracked: true });
            assert_eq!(icc.lookup(3, blk), Lookup::Merged);
            icc.reply(2, blk, &mut out);
        }
        assert_eq!(icc.lookup(0, 0xc00), Lookup::CcHit);
        assert_eq!(icc.lookup(0, 0xd00), Lookup::CcHit);
        assert_eq!(icc.lookup(0, 0xb00), Lookup::Send { tracked: true });
        let s = icc.stats();
        assert_eq!((s.coalesced_cache_hits, s.coalesced_cache_fills), (3, 3));
    }

    #[test]
    fn redundancy_window() {
        // Window 500 cycles, 128 B lines; 2 clusters of 2 SMs.
        let c = IccConfig {
            redundancy: true,
            redundancy_window_cycles: 500,
            ..IccConfig::default()
        };
        let mut icc = Icc::new(&c, 2, 2);
        icc.record(0, 0x1000, 0); // first: not redundant
        icc.record(1, 0x1040, 100); // same line (0x1000..0x1080), same cluster: redundant
        icc.record(2, 0x1000, 150); // other cluster: not redundant
        icc.record(0, 0x1000, 600); // 500 after 100: redundant (at most the window)
        icc.record(1, 0x1000, 1101); // 501 after 600: not redundant
        icc.record(1, 0x1080, 1102); // next line: not redundant
        let s = icc.stats();
        assert_eq!((s.read_requests, s.redundant_requests), (6, 2));
        assert!((s.redundancy - 2.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn checks() {
        assert!(cfg(false, true, 48, 24).check(5).is_err());
        assert!(cfg(true, true, 0, 24).check(5).is_err());
        assert!(cfg(true, false, 48, 24).check(65).is_err());
        assert!(cfg(true, true, 48, 24).check(5).is_ok());
        let bad_line = IccConfig {
            redundancy_line_bytes: 100,
            ..IccConfig::default()
        };
        assert!(bad_line.check(5).is_err());
    }
}
