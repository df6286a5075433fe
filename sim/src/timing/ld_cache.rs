//! The Locality Descriptor's cache management in the L1 (seed paper 004 §4.4, Figure 11):
//! `--cache-policy ld`.
//!
//! Each L1 line gets a *rank* when it is inserted, from the descriptor of the data structure
//! its address belongs to ([`super::hints::LocalityHints::of_addr`]):
//!
//! - NO-REUSE: the line is not inserted at all (bypass). The miss still takes an MSHR, so
//!   requests to a block already in flight merge into it, but the fill only wakes its
//!   waiters; every demand read of such a structure counts in `bypassed`. Which structures
//!   are bypassed is `ld.bypass` ([`BypassRule`]): by default (`block`) a structure is
//!   bypassed when its descriptor says NO-REUSE *and* no block of it, at the L1's block
//!   size (a 32 B sector when the L1 is sectored, else the line), is read twice by the
//!   launch (by two warps, or by one warp at two points: [`super::hints::StructureHint::
//!   l1_block_reuse`], from the analysis's walk at that size). The descriptor's
//!   LocalityType is defined over addresses (§3.3.4: "the same data"), so a thread that
//!   walks a row reads each element once and its matrix is NO-REUSE, yet it reads each
//!   128 B line 32 times; §4.4 says NO-REUSE data is bypassed "to reduce cache pollution",
//!   which presumes no cache block of it would be hit. Bypassing such a row walk made
//!   every iteration an L2 access (mvt_kernel1 on gtx480: 2,096 -> 65,584 L2 accesses,
//!   5.2x the cycles). `element` bypasses every NO-REUSE structure, the text's rule taken
//!   literally.
//! - INTRA-THREAD: *hard-pinned*, inserted with the highest rank. When every way of the set
//!   holds a hard-pinned line, the victim is way 0 (the paper's "specific cache way"), so
//!   the other ways keep their part of the working set instead of being thrashed in turn
//!   (`pinned_evictions`). Between hard-pinned structures the descriptor priority decides:
//!   the lines of the lowest-priority one go first, the first way of them when several.
//!   A timer unpins every hard-pinned line each `ld.unpin_cycles` core cycles (default
//!   [`DEFAULT_UNPIN_CYCLES`]; 0: never), so that a working set whose threads have left
//!   does not hold its ways for ever (`unpin_resets` counts the timer's firings).
//! - INTER-THREAD COACCESSED IRREGULAR: *soft-pinned*, ranked above unpinned lines and
//!   below hard-pinned ones, without thrash control: among soft-pinned lines the
//!   descriptor priority decides (the priority-1 structure's lines are kept longest), then
//!   LRU. The timer leaves them alone (the paper ties the timer to hard pinning, and soft
//!   pinning has "no policy to control thrashing"). Which INTER-THREAD structures are
//!   soft-pinned is `ld.soft_pin` ([`SoftPin`]): the paper says it twice, differently.
//!   §4.4 says "we use soft pinning for data with INTER-THREAD locality type"; §4.2's
//!   algorithm (Figure 11) soft-pins only COACCESSED IRREGULAR data, and gives COACCESSED
//!   REGULAR data the strided prefetcher and NEARBY data the next-line prefetcher instead.
//!   We follow Figure 11, the algorithm (`coaccessed-irregular`, the default): a
//!   soft-pinned structure is never unpinned, so a small shared vector read once per pass
//!   keeps one way of its sets for the whole launch while a row walk beside it needs every
//!   way (atax_kernel1 on gtx480, `x` COACCESSED REGULAR beside `A`: 1.106x the plain
//!   cycles, L2 accesses 10,841 -> 13,729; gemv_unroll 1.132x). `inter-thread` soft-pins
//!   every INTER-THREAD structure, §4.4's sentence.
//! - UNDECIDED structures and addresses without a descriptor: rank 0, the plain policy.
//!
//! The victim is the way of the lowest rank, LRU among equal ranks (an unpinned line always
//! goes before a pinned one); empty ways are taken first, as in the plain cache. A rank is
//! given at insertion only: a hit does not re-pin a line the timer unpinned.
//!
//! The same per-line state carries the prefetcher's bookkeeping ([`super::prefetch`]):
//! which lines a prefetch brought in and no demand access has used yet (`useful` on the
//! first demand hit), and which MSHRs a prefetch opened (`late` when a demand read merges
//! into one).

use super::block_map::BlockMap;
use super::hints::{LocalityHints, LocalityType, Pattern, Sharing};
use super::prefetch::{PrefetchGuide, PrefetchPolicy, Throttle};
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;
use std::sync::Arc;

/// The timer's period by default, in core cycles. Long enough for a pinned working set to
/// be reused by its threads (an INTRA-THREAD loop over a TB's rows takes thousands of
/// cycles per pass on the shipped configurations), short enough to release the ways of
/// TBs that have finished within a few TB lifetimes of a corpus kernel.
pub const DEFAULT_UNPIN_CYCLES: u64 = 20_000;

/// The L1 replacement policy (`--cache-policy`, key `ld.cache_policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CachePolicy {
    /// The configuration's own policy (LRU, allocate on read miss).
    #[default]
    Plain,
    /// Bypass NO-REUSE, hard-pin INTRA-THREAD, soft-pin INTER-THREAD (§4.4).
    Ld,
}

impl super::named::Named for CachePolicy {
    const KIND: &'static str = "L1 replacement";
    const ALL: &'static [super::named::Entry<CachePolicy>] = &[
        super::named::Entry {
            value: CachePolicy::Plain,
            name: "plain",
            aliases: &[],
            description: "the configuration's LRU, allocating on read misses",
        },
        super::named::Entry {
            value: CachePolicy::Ld,
            name: "ld",
            aliases: &[],
            description: "the Locality Descriptor's §4.4: NO-REUSE structures bypass the L1, \
                          INTRA-THREAD ones are hard-pinned, INTER-THREAD COACCESSED \
                          IRREGULAR ones soft-pinned (stats key `ld`)",
        },
    ];
}

/// The run-time Locality Descriptor mechanisms of the L1 (`ld.*` keys). Left out of the
/// configuration's JSON while at its defaults, so other runs echo what they always did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LdConfig {
    /// Replacement policy.
    #[serde(default)]
    pub cache_policy: CachePolicy,
    /// Prefetcher.
    #[serde(default)]
    pub prefetch: PrefetchPolicy,
    /// Period of the hard-pin reset timer in core cycles (0: pins are never reset).
    #[serde(default = "default_unpin")]
    pub unpin_cycles: u64,
    /// Where the `ld` prefetcher may send a target ([`super::prefetch`], "Guidance").
    #[serde(default)]
    pub prefetch_guide: PrefetchGuide,
    /// The `ld` prefetcher's accuracy window in prefetches sent per L1 (0: no throttle;
    /// [`super::prefetch`], "Throttle").
    #[serde(default = "default_window")]
    pub prefetch_window: u64,
    /// The accuracy, in percent, below which a window turns the `ld` prefetcher off.
    #[serde(default = "default_accuracy")]
    pub prefetch_accuracy_pct: u64,
    /// Which NO-REUSE structures `--cache-policy ld` bypasses.
    #[serde(default)]
    pub bypass: BypassRule,
    /// Which INTER-THREAD structures `--cache-policy ld` soft-pins.
    #[serde(default)]
    pub soft_pin: SoftPin,
}

/// Which INTER-THREAD structures the `ld` cache policy soft-pins (`ld.soft_pin`; see the
/// module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SoftPin {
    /// COACCESSED IRREGULAR ones (the paper's Figure 11).
    #[default]
    CoaccessedIrregular,
    /// Every INTER-THREAD one (the paper's §4.4 text).
    InterThread,
}

impl super::named::Named for SoftPin {
    const KIND: &'static str = "soft-pinned structures";
    const ALL: &'static [super::named::Entry<SoftPin>] = &[
        super::named::Entry {
            value: SoftPin::CoaccessedIrregular,
            name: "coaccessed-irregular",
            aliases: &[],
            description: "INTER-THREAD COACCESSED IRREGULAR structures (Figure 11)",
        },
        super::named::Entry {
            value: SoftPin::InterThread,
            name: "inter-thread",
            aliases: &[],
            description: "every INTER-THREAD structure (the text of §4.4)",
        },
    ];
}

/// Which structures the `ld` cache policy bypasses (`ld.bypass`; see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BypassRule {
    /// NO-REUSE structures no block of which (at the L1's block size) is read twice.
    #[default]
    Block,
    /// Every NO-REUSE structure (reuse of elements alone, §4.4 literally).
    Element,
}

impl super::named::Named for BypassRule {
    const KIND: &'static str = "L1 bypass rule";
    const ALL: &'static [super::named::Entry<BypassRule>] = &[
        super::named::Entry {
            value: BypassRule::Block,
            name: "block",
            aliases: &[],
            description: "NO-REUSE structures none of whose L1 blocks (sectors or lines) is \
                          read twice",
        },
        super::named::Entry {
            value: BypassRule::Element,
            name: "element",
            aliases: &[],
            description: "every NO-REUSE structure (no element read twice)",
        },
    ];
}

fn default_unpin() -> u64 {
    DEFAULT_UNPIN_CYCLES
}

fn default_window() -> u64 {
    super::prefetch::DEFAULT_PREFETCH_WINDOW
}

fn default_accuracy() -> u64 {
    super::prefetch::DEFAULT_ACCURACY_PCT
}

impl Default for LdConfig {
    fn default() -> Self {
        LdConfig {
            cache_policy: CachePolicy::Plain,
            prefetch: PrefetchPolicy::None,
            unpin_cycles: DEFAULT_UNPIN_CYCLES,
            prefetch_guide: PrefetchGuide::Tiles,
            prefetch_window: default_window(),
            prefetch_accuracy_pct: default_accuracy(),
            bypass: BypassRule::Block,
            soft_pin: SoftPin::CoaccessedIrregular,
        }
    }
}

impl LdConfig {
    /// Every field at its default (the plain L1, no prefetcher).
    pub fn is_default(&self) -> bool {
        *self == LdConfig::default()
    }

    /// Whether any mechanism is on (the L1s then carry an [`LdL1`]).
    pub fn active(&self) -> bool {
        self.cache_policy != CachePolicy::Plain || self.prefetch != PrefetchPolicy::None
    }
}

/// Counters of the mechanisms, summed over the SMs' L1s (stats key `ld`, present when a
/// mechanism is on).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LdStats {
    /// Demand reads of NO-REUSE structures (hits, merges and misses; never inserted).
    pub bypassed: u64,
    /// Lines inserted hard-pinned (INTRA-THREAD).
    pub pinned_insertions: u64,
    /// Lines inserted soft-pinned (INTER-THREAD, `ld.soft_pin`).
    pub soft_pinned_insertions: u64,
    /// Victims taken by the way-0 rule (every way of the set hard-pinned).
    pub pinned_evictions: u64,
    /// Firings of the unpin timer, per L1 up to its last fill (the timer is applied when a
    /// fill arrives, the only time pins matter), summed over the SMs.
    pub unpin_resets: u64,
    /// Prefetch requests sent to the L2.
    pub prefetches_issued: u64,
    /// Prefetches dropped because no MSHR was free.
    pub prefetches_dropped: u64,
    /// Prefetched blocks whose first demand access hit them in the L1.
    pub prefetches_useful: u64,
    /// Prefetches a demand read merged into while they were in flight.
    pub prefetches_late: u64,
    /// `ld` targets not sent because no resident TB's D-Tile holds them (guidance).
    #[serde(default)]
    pub prefetches_unguided: u64,
    /// `ld` prefetch triggers skipped while the accuracy throttle was off.
    #[serde(default)]
    pub prefetches_throttled: u64,
}

impl AddAssign<&LdStats> for LdStats {
    fn add_assign(&mut self, o: &LdStats) {
        self.bypassed += o.bypassed;
        self.pinned_insertions += o.pinned_insertions;
        self.soft_pinned_insertions += o.soft_pinned_insertions;
        self.pinned_evictions += o.pinned_evictions;
        self.unpin_resets += o.unpin_resets;
        self.prefetches_issued += o.prefetches_issued;
        self.prefetches_dropped += o.prefetches_dropped;
        self.prefetches_useful += o.prefetches_useful;
        self.prefetches_late += o.prefetches_late;
        self.prefetches_unguided += o.prefetches_unguided;
        self.prefetches_throttled += o.prefetches_throttled;
    }
}

/// Rank classes (the high bits of a rank; the low 16 bits order structures by priority).
const SOFT: u32 = 1 << 16;
const HARD: u32 = 2 << 16;

/// The rank of a line of a pinned class `class` of a structure of priority `p` (1 is the
/// highest): a higher priority gives a higher rank, so it is evicted later.
fn ranked(class: u32, p: u32) -> u32 {
    class + (0xffff - p.min(0xffff))
}

/// The Locality Descriptor state of one L1 (owned by its [`super::cache::Cache`]).
#[derive(Clone, Debug)]
pub struct LdL1 {
    cfg: LdConfig,
    hints: Arc<LocalityHints>,
    /// The launch's grid, for the C-Tile of a resident TB (the prefetcher's active tiles).
    grid: [u64; 3],
    /// L1 data bytes of the run (the carveout's).
    l1_bytes: u64,
    /// L1 line bytes.
    line: u64,
    /// Per way (the cache's way index): rank, 0 = unpinned.
    rank: Vec<u32>,
    /// Per way: blocks a prefetch filled that no demand access has used yet.
    pf_bits: Vec<u8>,
    /// Blocks with an MSHR a prefetch opened; `true` once a demand read merged into it.
    pf_inflight: BlockMap<bool>,
    /// The timer's next firing.
    next_reset: u64,
    /// The `ld` prefetcher's accuracy throttle.
    throttle: Throttle,
    pub(crate) stats: LdStats,
}

impl LdL1 {
    /// The state of an L1 of `l1_bytes` bytes in lines of `line` bytes running a launch of
    /// `grid` with descriptors `hints`, under `cfg`.
    pub fn new(
        cfg: &LdConfig,
        hints: Arc<LocalityHints>,
        grid: [u64; 3],
        l1_bytes: u64,
        line: u64,
    ) -> LdL1 {
        LdL1 {
            cfg: cfg.clone(),
            hints,
            grid,
            l1_bytes,
            line,
            rank: Vec::new(),
            pf_bits: Vec::new(),
            pf_inflight: BlockMap::default(),
            next_reset: if cfg.unpin_cycles == 0 {
                u64::MAX
            } else {
                cfg.unpin_cycles
            },
            throttle: Throttle::new(cfg.prefetch_window, cfg.prefetch_accuracy_pct),
            stats: LdStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LdConfig {
        &self.cfg
    }

    /// The counters.
    pub fn stats(&self) -> &LdStats {
        &self.stats
    }

    fn managing(&self) -> bool {
        self.cfg.cache_policy == CachePolicy::Ld
    }

    /// Whether a fill of `addr` is not inserted (NO-REUSE under `--cache-policy ld`, as
    /// `ld.bypass` reads it).
    pub(crate) fn bypasses(&self, addr: u64) -> bool {
        self.managing()
            && self.hints.of_addr(addr).is_some_and(|h| {
                h.descriptor.locality_type == LocalityType::NoReuse
                    && match self.cfg.bypass {
                        BypassRule::Block => h.l1_block_reuse == Some(false),
                        BypassRule::Element => true,
                    }
            })
    }

    /// The rank a line at `addr` is inserted with.
    fn rank_of(&self, addr: u64) -> u32 {
        if !self.managing() {
            return 0;
        }
        let Some(d) = self.hints.of_addr(addr).map(|h| &h.descriptor) else {
            return 0;
        };
        match d.locality_type {
            LocalityType::IntraThread => ranked(HARD, d.priority),
            LocalityType::InterThread
                if self.cfg.soft_pin == SoftPin::InterThread
                    || (d.sharing == Some(Sharing::Coaccessed)
                        && d.pattern == Pattern::Irregular) =>
            {
                ranked(SOFT, d.priority)
            }
            LocalityType::InterThread | LocalityType::NoReuse | LocalityType::Undecided => 0,
        }
    }

    fn grow(&mut self, i: usize) {
        if self.rank.len() <= i {
            self.rank.resize(i + 1, 0);
            self.pf_bits.resize(i + 1, 0);
        }
    }

    /// The victim among ways `base..base + ways` (all allocated), with their LRU `stamps`
    /// (the cache's array), or `None` for the plain LRU choice.
    pub(crate) fn victim(&mut self, base: usize, ways: usize, stamps: &[u64]) -> Option<usize> {
        if !self.managing() {
            return None;
        }
        self.grow(base + ways - 1);
        let rank = &self.rank[base..base + ways];
        let k = (0..ways).min_by_key(|&k| (rank[k], stamps[base + k]))?;
        let r = rank[k];
        if r >= HARD {
            // Every way is hard-pinned: the first way of the lowest rank (way 0 with one
            // pinned structure) takes the new line; the others keep theirs.
            self.stats.pinned_evictions += 1;
            return rank.iter().position(|&x| x == r).map(|k| base + k);
        }
        Some(base + k)
    }

    /// Way `i` now holds the line at `addr` (a new allocation).
    pub(crate) fn on_insert(&mut self, i: usize, addr: u64) {
        self.grow(i);
        let r = self.rank_of(addr);
        if r >= HARD {
            self.stats.pinned_insertions += 1;
        } else if r >= SOFT {
            self.stats.soft_pinned_insertions += 1;
        }
        self.rank[i] = r;
        // Prefetched blocks of the evicted line no demand used: wasted.
        for _ in 0..self.pf_bits[i].count_ones() {
            self.throttle.on_wasted();
        }
        self.pf_bits[i] = 0;
    }

    /// A demand read of `addr` was counted (not refused); `hit_way`: the way it hit, with
    /// the block's bit.
    pub(crate) fn on_demand(&mut self, addr: u64, hit_way: Option<(usize, u8)>) {
        if self.bypasses(addr) {
            self.stats.bypassed += 1;
        }
        if let Some((i, bit)) = hit_way {
            if let Some(b) = self.pf_bits.get_mut(i) {
                if *b & bit != 0 {
                    *b &= !bit;
                    self.stats.prefetches_useful += 1;
                    self.throttle.on_used();
                }
            }
        }
    }

    /// A demand read merged into the MSHR of `block`.
    pub(crate) fn on_merge(&mut self, block: u64) {
        if let Some(m) = self.pf_inflight.get_mut(&block) {
            if !*m {
                *m = true;
                self.stats.prefetches_late += 1;
                self.throttle.on_used();
            }
        }
    }

    /// A prefetch of `block` took an MSHR.
    pub(crate) fn on_prefetch(&mut self, block: u64) {
        self.pf_inflight.insert(block, false);
        self.stats.prefetches_issued += 1;
    }

    /// The fill of `block` arrived; `way`: where it was installed (`None`: bypassed), with
    /// the block's bit. A prefetch no demand merged into marks its block unused.
    pub(crate) fn on_fill(&mut self, block: u64, way: Option<(usize, u8)>) {
        if self.pf_inflight.remove(&block) == Some(false) {
            if let Some((i, bit)) = way {
                self.grow(i);
                self.pf_bits[i] |= bit;
            }
        }
    }

    /// The timer at core cycle `now`: unpins every hard-pinned line at each period's end.
    pub(crate) fn tick(&mut self, now: u64) {
        if now < self.next_reset {
            return;
        }
        let p = self.cfg.unpin_cycles.max(1);
        let fired = (now - self.next_reset) / p + 1;
        self.next_reset = self.next_reset.saturating_add(fired * p);
        if !self.managing() {
            return;
        }
        self.stats.unpin_resets += fired;
        for r in &mut self.rank {
            if *r >= HARD {
                *r = 0;
            }
        }
    }

    /// Where the prefetcher sends a prefetch after a demand read miss of `block` (see
    /// [`super::prefetch`]); `resident`: the linear ids of the TBs resident on the SM,
    /// `block_bytes` the L1's block. Under `ld`, the throttle and the guidance apply
    /// (counted in `prefetches_throttled` and `prefetches_unguided`).
    pub fn prefetch_target(
        &mut self,
        block: u64,
        block_bytes: u64,
        resident: impl Iterator<Item = u32> + Clone,
    ) -> Option<u64> {
        let t = super::prefetch::target(
            self.cfg.prefetch,
            &self.hints,
            block,
            self.line,
            self.l1_bytes,
            self.grid,
            resident.clone(),
        )?;
        if self.cfg.prefetch != PrefetchPolicy::Ld {
            return Some(t);
        }
        if !self.throttle.allows() {
            self.stats.prefetches_throttled += 1;
            return None;
        }
        if self.cfg.prefetch_guide == PrefetchGuide::Tiles
            && !super::prefetch::predicted(&self.hints, t, block_bytes, self.grid, resident)
        {
            self.stats.prefetches_unguided += 1;
            return None;
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::cache::{Cache, Geometry, Outcome};
    use crate::timing::config::WritePolicy;
    use crate::timing::hints::{Descriptor, Pattern, Sharing, StructureHint};
    use crate::timing::prefetch::Prefetch;
    use gpu::config::{SetIndex, SliceIndex};

    /// Region 0: NO-REUSE, no block read twice; 1: INTRA-THREAD priority 1; 2: INTER-THREAD
    /// priority 1; 3: INTER-THREAD priority 2; 4: INTRA-THREAD priority 2; 5: NO-REUSE
    /// with blocks read twice (a row walk); 6: INTER-THREAD COACCESSED REGULAR priority 3;
    /// region 7 has no descriptor.
    fn hints() -> Arc<LocalityHints> {
        let mut l = LocalityHints::default();
        for (region, locality, priority) in [
            (0, LocalityType::NoReuse, 5),
            (1, LocalityType::IntraThread, 1),
            (2, LocalityType::InterThread, 1),
            (3, LocalityType::InterThread, 2),
            (4, LocalityType::IntraThread, 2),
            (5, LocalityType::NoReuse, 6),
            (6, LocalityType::InterThread, 3),
        ] {
            let descriptor = Descriptor {
                param: region,
                name: None,
                element_bytes: 4,
                locality_type: locality,
                priority,
                sharing: (locality == LocalityType::InterThread).then_some(Sharing::Coaccessed),
                pattern: if region == 6 {
                    Pattern::Regular
                } else {
                    Pattern::Irregular
                },
                stride_elements: None,
                d_tile: [32, 1, 1],
                c_tile: [1, 1, 1],
                compute_data_map: [1, 0, 0],
                compute_data_rank: [1, 0, 0],
            };
            l.insert(
                StructureHint::new(descriptor, Some(1 << 20))
                    .with_l1_block_reuse(Some(region != 0)),
            );
        }
        Arc::new(l)
    }

    /// Line `k` of region `r` (one set: every line maps to it).
    fn a(r: usize, k: u64) -> u64 {
        launch::bind::buffer_base(r) + 128 * k
    }

    /// One set of 4 ways, 128 B lines, `mshrs` MSHRs, with the LD state of `cfg`.
    fn cache(cfg: &LdConfig, mshrs: u32) -> Cache<u32> {
        let mut c = Cache::new(Geometry {
            sets: 1,
            ways: 4,
            line: 128,
            sectored: false,
            mshrs,
            max_merge: 4,
            write: WritePolicy::WriteThrough,
            set_index: SetIndex::Linear,
            interleave: 1,
            slice_index: SliceIndex::Linear,
        });
        c.set_ld(LdL1::new(cfg, hints(), [1, 1, 1], 512, 128));
        c
    }

    fn ld_cfg() -> LdConfig {
        LdConfig {
            cache_policy: CachePolicy::Ld,
            ..LdConfig::default()
        }
    }

    /// Reads `addr` and, on a miss, fills it at once.
    fn load(c: &mut Cache<u32>, addr: u64) -> Outcome {
        let o = c.read(addr, 0);
        if o == Outcome::Miss {
            c.fill(addr);
        }
        o
    }

    fn st(c: &Cache<u32>) -> LdStats {
        c.ld().map(|l| l.stats().clone()).unwrap_or_default()
    }

    #[test]
    fn no_reuse_bypasses_the_l1() {
        let mut c = cache(&ld_cfg(), 4);
        assert_eq!(load(&mut c, a(0, 0)), Outcome::Miss);
        assert!(!c.is_present(a(0, 0)), "a NO-REUSE fill is not inserted");
        assert_eq!(load(&mut c, a(0, 0)), Outcome::Miss);
        // In flight: a second read merges into the MSHR (and counts as bypassed too).
        assert_eq!(c.read(a(0, 1), 1), Outcome::Miss);
        assert_eq!(c.read(a(0, 1) + 4, 2), Outcome::HitReserve);
        assert_eq!(c.fill(a(0, 1)).0, vec![1, 2]);
        assert!(!c.is_present(a(0, 1)));
        assert_eq!(st(&c).bypassed, 4);
        assert_eq!((c.stats().hits, c.stats().misses), (0, 3));
        // The plain policy inserts it.
        let mut p = cache(&LdConfig::default(), 4);
        load(&mut p, a(0, 0));
        assert!(p.is_present(a(0, 0)));
        assert_eq!(st(&p).bypassed, 0);
    }

    /// Region 6 is INTER-THREAD COACCESSED REGULAR: Figure 11 gives it the strided
    /// prefetcher, not soft pinning, so by default it is inserted unpinned;
    /// `ld.soft_pin = inter-thread` soft-pins it.
    #[test]
    fn only_coaccessed_irregular_structures_are_soft_pinned() {
        let mut c = cache(&ld_cfg(), 4);
        load(&mut c, a(6, 0));
        load(&mut c, a(2, 0));
        assert_eq!(st(&c).soft_pinned_insertions, 1, "region 2 alone");
        let every = LdConfig {
            soft_pin: SoftPin::InterThread,
            ..ld_cfg()
        };
        let mut e = cache(&every, 4);
        load(&mut e, a(6, 0));
        load(&mut e, a(2, 0));
        assert_eq!(st(&e).soft_pinned_insertions, 2);
    }

    /// Region 5 is NO-REUSE by elements, but some of its lines are read twice: the default
    /// rule inserts it (as the plain policy, rank 0), `ld.bypass = element` bypasses it.
    #[test]
    fn a_no_reuse_structure_whose_blocks_are_reread_is_cached() {
        let mut c = cache(&ld_cfg(), 4);
        assert_eq!(load(&mut c, a(5, 0)), Outcome::Miss);
        assert_eq!(load(&mut c, a(5, 0) + 4), Outcome::Hit);
        assert_eq!(st(&c).bypassed, 0);
        let element = LdConfig {
            bypass: BypassRule::Element,
            ..ld_cfg()
        };
        let mut e = cache(&element, 4);
        assert_eq!(load(&mut e, a(5, 0)), Outcome::Miss);
        assert_eq!(load(&mut e, a(5, 0) + 4), Outcome::Miss);
        assert_eq!(st(&e).bypassed, 2);
    }

    /// Four INTRA-THREAD lines fill the set (all hard-pinned); the fifth and sixth both go
    /// to way 0, so lines 1-3 stay (plain LRU would have evicted lines 0 and 1).
    #[test]
    fn hard_pinning_evicts_way_zero() {
        let mut c = cache(&ld_cfg(), 4);
        for k in 0..6 {
            assert_eq!(load(&mut c, a(1, k)), Outcome::Miss);
        }
        let present: Vec<bool> = (0..6).map(|k| c.is_present(a(1, k))).collect();
        assert_eq!(present, [false, true, true, true, false, true]);
        let s = st(&c);
        assert_eq!((s.pinned_insertions, s.pinned_evictions), (6, 2));
        // An unpinned line into the all-pinned set also takes way 0.
        load(&mut c, a(7, 0));
        assert!(!c.is_present(a(1, 5)) && c.is_present(a(7, 0)));
        assert_eq!(st(&c).pinned_evictions, 3);
    }

    /// The timer (period 100 cycles) unpins: after it fires, the victim is the LRU line
    /// again (line 1, since line 0 was hit since), not way 0.
    #[test]
    fn the_timer_unpins() {
        let cfg = LdConfig {
            unpin_cycles: 100,
            ..ld_cfg()
        };
        let run = |tick: u64| {
            let mut c = cache(&cfg, 4);
            for k in 0..4 {
                load(&mut c, a(1, k));
            }
            assert_eq!(load(&mut c, a(1, 0)), Outcome::Hit);
            c.ld_tick(tick);
            load(&mut c, a(1, 4));
            (c.is_present(a(1, 0)), c.is_present(a(1, 1)), st(&c))
        };
        let (l0, l1, s) = run(99);
        assert_eq!(
            (l0, l1, s.unpin_resets, s.pinned_evictions),
            (false, true, 0, 1)
        );
        let (l0, l1, s) = run(250);
        assert_eq!(
            (l0, l1, s.unpin_resets, s.pinned_evictions),
            (true, false, 2, 0)
        );
        // The new line is pinned again.
        assert_eq!(s.pinned_insertions, 5);
    }

    /// A soft-pinned INTER-THREAD line outlives more recent unpinned lines; among soft
    /// lines alone it is plain LRU (no way-0 rule).
    #[test]
    fn soft_pinning_is_preferred_over_unpinned() {
        let mut c = cache(&ld_cfg(), 4);
        load(&mut c, a(2, 0));
        for k in 0..4 {
            load(&mut c, a(7, k));
        }
        assert!(c.is_present(a(2, 0)), "kept over the LRU unpinned line");
        assert!(!c.is_present(a(7, 0)));
        let mut c = cache(&ld_cfg(), 4);
        for k in 0..5 {
            load(&mut c, a(2, k));
        }
        assert!(!c.is_present(a(2, 0)) && c.is_present(a(2, 1)));
        let s = st(&c);
        assert_eq!((s.soft_pinned_insertions, s.pinned_evictions), (5, 0));
    }

    /// Priority 1 beats priority 2 whatever the recency, for soft and for hard pins.
    #[test]
    fn descriptor_priority_orders_the_victims() {
        let mut c = cache(&ld_cfg(), 4);
        load(&mut c, a(2, 0)); // priority 1, oldest
        for k in 0..3 {
            load(&mut c, a(3, k)); // priority 2
        }
        load(&mut c, a(2, 1));
        assert!(c.is_present(a(2, 0)));
        assert!(!c.is_present(a(3, 0)), "the LRU line of the lower priority");
        // Hard: ways hold intra prio 1, prio 2, prio 1, prio 1; the prio-2 line's way goes.
        let mut c = cache(&ld_cfg(), 4);
        for addr in [a(1, 0), a(4, 0), a(1, 1), a(1, 2)] {
            load(&mut c, addr);
        }
        load(&mut c, a(1, 3));
        assert!(!c.is_present(a(4, 0)));
        assert!((0..4).all(|k| c.is_present(a(1, k))));
        // A hard pin outranks a soft one.
        let mut c = cache(&ld_cfg(), 4);
        for addr in [a(1, 0), a(2, 0), a(1, 1), a(1, 2)] {
            load(&mut c, addr);
        }
        load(&mut c, a(1, 3));
        assert!(!c.is_present(a(2, 0)) && c.is_present(a(1, 0)));
    }

    /// Prefetches take MSHRs, are dropped without one, and count late and useful.
    #[test]
    fn prefetch_mshrs_late_and_useful() {
        let cfg = LdConfig {
            prefetch: PrefetchPolicy::NextLine,
            ..LdConfig::default()
        };
        let mut c = cache(&cfg, 2);
        assert_eq!(c.read(a(7, 0), 1), Outcome::Miss);
        assert_eq!(c.read(a(7, 1), 2), Outcome::Miss);
        assert_eq!(c.prefetch(a(7, 2)), Prefetch::Dropped, "both MSHRs taken");
        c.fill(a(7, 0));
        assert_eq!(c.prefetch(a(7, 2)), Prefetch::Issued);
        assert_eq!(c.mshrs_used(), 2);
        assert_eq!(c.prefetch(a(7, 2)), Prefetch::Unneeded, "already in flight");
        assert_eq!(c.prefetch(a(7, 0)), Prefetch::Unneeded, "present");
        assert_eq!(c.read(a(7, 2), 3), Outcome::HitReserve);
        assert_eq!(c.fill(a(7, 2)).0, vec![3]);
        c.fill(a(7, 1));
        assert_eq!(c.prefetch(a(7, 3)), Prefetch::Issued);
        assert_eq!(
            c.fill(a(7, 3)).0,
            Vec::<u32>::new(),
            "a prefetch wakes no one"
        );
        assert_eq!(c.read(a(7, 3), 4), Outcome::Hit);
        assert_eq!(c.read(a(7, 3), 5), Outcome::Hit);
        let s = st(&c);
        assert_eq!(
            (
                s.prefetches_issued,
                s.prefetches_dropped,
                s.prefetches_late,
                s.prefetches_useful
            ),
            (2, 1, 1, 1)
        );
        // Demand statistics count the demand reads only.
        assert_eq!((c.stats().accesses, c.stats().misses), (5, 2));
        // Under --cache-policy ld a prefetch of a NO-REUSE block is not sent.
        let mut c = cache(
            &LdConfig {
                prefetch: PrefetchPolicy::NextLine,
                ..ld_cfg()
            },
            2,
        );
        assert_eq!(c.prefetch(a(0, 3)), Prefetch::Unneeded);
    }

    #[test]
    fn config_defaults_are_plain() {
        let d = LdConfig::default();
        assert!(d.is_default() && !d.active());
        assert!(ld_cfg().active());
    }
}
