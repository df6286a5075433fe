//! A set-associative, LRU, optionally sectored cache with MSHRs, used for the per-SM L1 and
//! the L2 slices.
//!
//! Requests are *blocks*: a 32 B sector of a sectored cache, the whole line otherwise (the
//! coalescer produces them). Tags are per line with a valid and a dirty bit per block, so a
//! sectored cache misses on a sector of a present line. Lines are allocated when the fill
//! arrives (`fill`), MSHRs are keyed by block address and carry the waiters (`T`) to wake.
//! Outcomes follow GPGPU-Sim: a read of a block already in flight merges into its MSHR
//! ("hit reserve") unless the entry has merged `mshr_max_merge` requests, and a miss with
//! every MSHR taken is a reservation fail (nothing changes). The requester then waits for
//! the event that can admit the request ([`Cache::refusal`] says which: that block's fill,
//! or any fill) and presents it again with [`Cache::read_again`], which does not count a
//! second refusal: `reservation_fails` counts requests refused, once each.
//!
//! Sectors and fills: with `sectored` (GPGPU-Sim `S:`; every shipped L1 but Fermi's and
//! every shipped L2) a line is allocated on its first sector fill and each 32 B sector is
//! fetched, valid and dirty on its own; a miss fetches the missing sector only. An L2 slice
//! serves whole lines when its L1 is not sectored (Fermi).
//!
//! Write policies ([`WritePolicy`], `mem.l1_write` / `mem.l2_write`): the L1 is
//! write-through without write allocation (a store updates a present sector and always goes
//! on to the L2; GPGPU-Sim `T`, and `L` = write-through for global data, in the shipped L1
//! configs of Fermi to Hopper); the L2 is write-back with write allocation, sector-wise and
//! without fetch (a store allocates the line, marks its sector valid and dirty, dirty
//! sectors go to DRAM when the line is evicted; GPGPU-Sim `B` with `L` lazy fetch-on-read,
//! in every shipped L2 config). Stores are whole-sector writes: a partial-sector store does
//! not fetch the rest of the sector.
//!
//! Set index: [`super::addr_map::SetMap`] (linear, XOR, IPOLY or the Fermi hash, per level and
//! configuration); tags are whole line numbers.

use super::addr_map::SetMap;
use super::block_map::BlockMap;
use super::ld_cache::LdL1;
use super::prefetch::Prefetch;
use gpu::config::{SetIndex, SliceIndex};
use gpu::timing::WritePolicy;
use gpu::GpuConfig;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::ops::AddAssign;

/// What an access did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The block is present.
    Hit,
    /// The block is in flight; the request was merged into its MSHR.
    HitReserve,
    /// Not present: an MSHR was allocated (reads) or the write went on (writes).
    Miss,
    /// No MSHR (or merge slot) free; nothing changed, retry later.
    ReservationFail,
}

/// Counters of one cache (or the sum of several).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheStats {
    /// Hits + hit reserves + misses (reservation fails are retried and not counted here).
    pub accesses: u64,
    /// Hits.
    pub hits: u64,
    /// Reads merged into an MSHR.
    pub hit_reserve: u64,
    /// Misses.
    pub misses: u64,
    /// Read requests refused for lack of an MSHR or of a merge slot, each counted once
    /// however long it then waits (its later presentations go through
    /// [`Cache::read_again`]).
    pub reservation_fails: u64,
    /// Write accesses (included in `accesses`).
    pub writes: u64,
    /// Dirty blocks written back on eviction.
    pub writebacks: u64,
}

impl AddAssign<&CacheStats> for CacheStats {
    fn add_assign(&mut self, o: &CacheStats) {
        self.accesses += o.accesses;
        self.hits += o.hits;
        self.hit_reserve += o.hit_reserve;
        self.misses += o.misses;
        self.reservation_fails += o.reservation_fails;
        self.writes += o.writes;
        self.writebacks += o.writebacks;
    }
}

/// Why a read was refused, i.e. which event can admit it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The block's MSHR holds `max_merge` requests: its fill admits the read (as a hit).
    MergeFull,
    /// Every MSHR is taken: any fill frees one.
    NoMshr,
}

/// Geometry and policy of a cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Sets.
    pub sets: u32,
    /// Ways.
    pub ways: u32,
    /// Line bytes.
    pub line: u32,
    /// 32 B sectors.
    pub sectored: bool,
    /// MSHR entries.
    pub mshrs: u32,
    /// Requests one MSHR may hold.
    pub max_merge: u32,
    /// Write policy.
    pub write: WritePolicy,
    /// How the set is chosen from the cache-local line number.
    pub set_index: SetIndex,
    /// Caches the lines are dealt across (the L2 slices; 1 for an L1): the cache-local line
    /// number is `line / interleave`, the line address with the slice choice divided out
    /// (see [`super::addr_map`]).
    pub interleave: u32,
    /// How those slices are chosen (the L2's joint IPOLY hash takes slice and set bits from
    /// one hash).
    pub slice_index: SliceIndex,
}

impl Geometry {
    /// The per-SM L1 of `gpu` with `ways` ways (the carveout's, [`GpuConfig::l1_ways`]).
    pub fn l1(gpu: &GpuConfig, ways: u32, write: WritePolicy) -> Geometry {
        let l1 = &gpu.l1;
        Geometry {
            sets: l1.sets.max(1),
            ways: ways.max(1),
            line: l1.line_bytes.max(32),
            sectored: l1.sectored,
            mshrs: l1.mshr_entries.max(1),
            max_merge: l1.mshr_max_merge.max(1),
            write,
            set_index: l1.set_index,
            interleave: 1,
            slice_index: SliceIndex::Linear,
        }
    }

    /// One L2 slice of `gpu`.
    pub fn l2_slice(gpu: &GpuConfig, write: WritePolicy) -> Geometry {
        let l2 = &gpu.l2;
        Geometry {
            sets: l2.sets_per_slice.max(1),
            ways: l2.ways.max(1),
            line: l2.line_bytes.max(32),
            // An L1 with whole-line blocks asks for whole lines: the L2 serves them whole.
            sectored: l2.sectored && gpu.l1.sectored,
            mshrs: l2.mshr_entries.max(1),
            max_merge: l2.mshr_max_merge.max(1),
            write,
            set_index: l2.set_index,
            interleave: l2.slices.max(1),
            slice_index: l2.slice_index,
        }
    }
}

/// Above this many ways a lookup goes through a tag -> way map instead of comparing every
/// way (a 256 KB unified L1 without shared memory has 512 ways of 4 sets).
const MAP_LOOKUP_WAYS: u32 = 32;

/// The search-array value of a way never allocated (stored tags are `line number + 1`).
const INVALID: u64 = 0;

/// `set_base` of a set whose ways are not allocated yet.
const NO_SET: u32 = u32::MAX;

const NIL: u32 = u32::MAX;

/// Bytes of array capacity the per-thread pool ([`Pool`]) keeps at most; a cache whose arrays
/// would take it beyond frees them as before.
const POOL_BYTES: usize = 64 << 20;

/// The arrays of dropped caches, emptied, with their capacity: the next [`Cache::new`] of the
/// same geometry on the same thread takes them instead of growing new ones. A small launch
/// on a large GPU builds (and drops) 132 L1s and 80 L2 slices per run, and growing their
/// way arrays set by set (`Cache::ways_of`) and freeing them again was a tenth of such a
/// run. Only capacity is reused: a taken array is empty, so a cache built from the pool is
/// the cache built without it, and no result depends on the pool.
#[derive(Default)]
struct Pool {
    /// Per geometry (sets, ways): the arrays of its dropped caches (kept apart so that an
    /// L1 does not take an L2 slice's arrays and leave the slice to grow its own).
    by_geometry: Vec<((u32, u32), Arrays)>,
    bytes: usize,
}

/// Emptied arrays of one geometry.
#[derive(Default)]
struct Arrays {
    u8s: Vec<Vec<u8>>,
    u32s: Vec<Vec<u32>>,
    u64s: Vec<Vec<u64>>,
    maps: Vec<BlockMap<u32>>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// Bytes held by an array of capacity `cap` of `T`.
fn cap_bytes<T>(cap: usize) -> usize {
    cap * std::mem::size_of::<T>()
}

impl Pool {
    /// The arrays of geometry `key` (a handful of geometries per run: a linear search).
    fn arrays(&mut self, key: (u32, u32)) -> (&mut Arrays, &mut usize) {
        let i = match self.by_geometry.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                self.by_geometry.push((key, Arrays::default()));
                self.by_geometry.len() - 1
            }
        };
        (&mut self.by_geometry[i].1, &mut self.bytes)
    }

    fn take<T>(list: &mut Vec<Vec<T>>, bytes: &mut usize) -> Vec<T> {
        match list.pop() {
            Some(v) => {
                *bytes -= cap_bytes::<T>(v.capacity());
                v
            }
            None => Vec::new(),
        }
    }

    fn give<T>(list: &mut Vec<Vec<T>>, bytes: &mut usize, mut v: Vec<T>) {
        let b = cap_bytes::<T>(v.capacity());
        if b == 0 || *bytes + b > POOL_BYTES {
            return;
        }
        v.clear();
        *bytes += b;
        list.push(v);
    }

    fn take_map(list: &mut Vec<BlockMap<u32>>, bytes: &mut usize) -> BlockMap<u32> {
        match list.pop() {
            Some(m) => {
                *bytes -= map_bytes(&m);
                m
            }
            None => BlockMap::default(),
        }
    }

    fn give_map(list: &mut Vec<BlockMap<u32>>, bytes: &mut usize, mut m: BlockMap<u32>) {
        let b = map_bytes(&m);
        if b == 0 || *bytes + b > POOL_BYTES {
            return;
        }
        m.clear();
        *bytes += b;
        list.push(m);
    }
}

/// Bytes a map's table holds (an estimate: 12 bytes and a control byte per bucket).
fn map_bytes(m: &BlockMap<u32>) -> usize {
    m.capacity() * 13
}

/// Per set, a doubly linked list of its allocated ways from least to most recently used.
#[derive(Clone, Debug)]
struct Lru {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
}

impl Lru {
    /// Appends way `i` (not in the list) as the most recently used of `set`.
    fn append(&mut self, set: usize, i: usize) {
        let t = self.tail[set];
        self.prev[i] = t;
        self.next[i] = NIL;
        if t == NIL {
            self.head[set] = i as u32;
        } else {
            self.next[t as usize] = i as u32;
        }
        self.tail[set] = i as u32;
    }

    /// Moves way `i` (in the list) to the tail.
    fn move_to_tail(&mut self, set: usize, i: usize) {
        if self.tail[set] == i as u32 {
            return;
        }
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.head[set] = n;
        } else {
            self.next[p as usize] = n;
        }
        // `i` is not the tail, so it has a successor.
        self.prev[n as usize] = p;
        self.append(set, i);
    }
}

/// The cache; `T` is what an MSHR remembers per merged request.
///
/// Tags are whole line numbers (unique in the cache whatever the set function); the set is
/// [`SetMap`]'s.
#[derive(Clone, Debug)]
pub struct Cache<T> {
    g: Geometry,
    block: u64,
    /// Line and block sizes are powers of two: addresses split with shifts and masks.
    shifts: bool,
    sets: SetMap,
    /// Per set: the index of its first way in the arrays below, `NO_SET` until a line is
    /// first allocated in it. The ways of a set are created on first use, so a cache costs
    /// what its launch touches: an H100 L2 has 409,600 lines (7 MB of tags and stamps), most
    /// of which a small launch never reaches, and filling them all up front took longer than
    /// simulating it.
    set_base: Vec<u32>,
    /// Per set: ways allocated so far. Ways are never invalidated, so the empty ways of a
    /// set are the ones from this count on, and the next allocation takes the first of them
    /// without looking for the LRU way.
    filled: Vec<u32>,
    /// Valid bit per block of each way.
    valid: Vec<u8>,
    /// Dirty bit per block of each way.
    dirty: Vec<u8>,
    /// The line number + 1 of each way when allocated, else `INVALID` (the search array).
    tags: Vec<u64>,
    /// LRU stamps, 0 = never allocated (so the LRU choice takes an empty way first).
    stamps: Vec<u64>,
    /// tag -> way index, for caches with more than [`MAP_LOOKUP_WAYS`] ways.
    where_is: Option<BlockMap<u32>>,
    /// Recency order of each set's allocated ways, for caches with more than
    /// [`MAP_LOOKUP_WAYS`] ways: the LRU way is the list's head instead of the minimum of
    /// a scan over hundreds of stamps (the same way: stamps are distinct and every use
    /// moves a way to the tail).
    lru: Option<Lru>,
    /// Block -> its MSHR's index in `entries`.
    mshr: BlockMap<u32>,
    /// The waiters of each MSHR. Entries are reused (with their capacity) through `free`,
    /// so a miss allocates nothing once the cache has warmed up.
    entries: Vec<Vec<T>>,
    free: Vec<u32>,
    clock: u64,
    stats: CacheStats,
    /// The Locality Descriptor's cache management and prefetch bookkeeping (L1s of runs
    /// with `--cache-policy ld` or `--prefetch`; `None`: the plain cache, untouched).
    ld: Option<Box<LdL1>>,
}

impl<T> Cache<T> {
    /// An empty cache.
    pub fn new(g: Geometry) -> Cache<T> {
        let block = if g.sectored { 32 } else { u64::from(g.line) };
        let many = g.ways > MAP_LOOKUP_WAYS;
        let sets = g.sets as usize;
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            let (a, b) = p.arrays((g.sets, g.ways));
            let filled = |mut v: Vec<u32>, x: u32| {
                v.resize(sets, x);
                v
            };
            let set_base = filled(Pool::take(&mut a.u32s, b), NO_SET);
            let counts = filled(Pool::take(&mut a.u32s, b), 0);
            let lru = many.then(|| Lru {
                prev: Pool::take(&mut a.u32s, b),
                next: Pool::take(&mut a.u32s, b),
                head: filled(Pool::take(&mut a.u32s, b), NIL),
                tail: filled(Pool::take(&mut a.u32s, b), NIL),
            });
            let valid = Pool::take(&mut a.u8s, b);
            let dirty = Pool::take(&mut a.u8s, b);
            let tags = Pool::take(&mut a.u64s, b);
            let stamps = Pool::take(&mut a.u64s, b);
            let where_is = many.then(|| Pool::take_map(&mut a.maps, b));
            let mshr = Pool::take_map(&mut a.maps, b);
            Cache {
                g,
                block,
                shifts: g.line.is_power_of_two() && block.is_power_of_two(),
                sets: SetMap::new(g.set_index, g.sets, g.interleave, g.slice_index),
                set_base,
                filled: counts,
                valid,
                dirty,
                tags,
                stamps,
                where_is,
                lru,
                mshr,
                entries: Vec::new(),
                free: Vec::new(),
                clock: 0,
                stats: CacheStats::default(),
                ld: None,
            }
        })
    }

    /// Bytes of one block (the request unit).
    pub fn block_bytes(&self) -> u64 {
        self.block
    }

    /// The counters.
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// MSHR entries in use.
    pub fn mshrs_used(&self) -> usize {
        self.mshr.len()
    }

    /// (stored tag = line number + 1, set, block bit).
    fn locate(&self, addr: u64) -> (u64, usize, u8) {
        let (tag, bit) = if self.shifts {
            // Power-of-two line and block (every shipped configuration): no divisions.
            let l = self.g.line.trailing_zeros();
            let b = self.block.trailing_zeros();
            (
                addr >> l,
                ((addr & (u64::from(self.g.line) - 1)) >> b) as u8,
            )
        } else {
            let line = u64::from(self.g.line);
            (addr / line, ((addr % line) / self.block) as u8)
        };
        let set = self.sets.set(tag);
        (tag + 1, set, 1u8 << bit)
    }

    /// The address of the block holding `addr`.
    fn block_of(&self, addr: u64) -> u64 {
        if self.shifts {
            addr & !(self.block - 1)
        } else {
            addr - addr % self.block
        }
    }

    /// The set (0-based) that holds `addr` (for tests of the mapping).
    pub fn set_of(&self, addr: u64) -> usize {
        self.locate(addr).1
    }

    /// The first way of `set`, creating its ways (empty) on first use.
    fn ways_of(&mut self, set: usize) -> usize {
        let b = self.set_base[set];
        if b != NO_SET {
            return b as usize;
        }
        let base = self.tags.len();
        let n = base + self.g.ways as usize;
        self.tags.resize(n, INVALID);
        self.stamps.resize(n, 0);
        if let Some(l) = &mut self.lru {
            l.prev.resize(n, NIL);
            l.next.resize(n, NIL);
        }
        self.valid.resize(n, 0);
        self.dirty.resize(n, 0);
        self.set_base[set] = base as u32;
        base
    }

    /// Way `i` of `set` was used now: the most recently used of its set.
    fn touch(&mut self, set: usize, i: usize) {
        self.stamps[i] = self.clock;
        if let Some(l) = &mut self.lru {
            l.move_to_tail(set, i);
        }
    }

    fn find(&self, tag: u64, set: usize) -> Option<usize> {
        if let Some(m) = &self.where_is {
            return m.get(&tag).map(|&i| i as usize);
        }
        let base = self.set_base[set];
        if base == NO_SET {
            return None;
        }
        let base = base as usize;
        // Tags of invalid ways are `INVALID`, so one compare per way (vectorises).
        self.tags[base..base + self.g.ways as usize]
            .iter()
            .position(|&t| t == tag)
            .map(|i| base + i)
    }

    /// Whether the block holding `addr` is present (no state change).
    pub fn is_present(&self, addr: u64) -> bool {
        let (tag, set, bit) = self.locate(addr);
        self.find(tag, set)
            .is_some_and(|i| self.valid[i] & bit != 0)
    }

    /// A read of the block at `addr` by `who`; on `Miss` the caller sends the block request
    /// to the next level and later calls [`Cache::fill`].
    pub fn read(&mut self, addr: u64, who: T) -> Outcome {
        self.access(addr, who, true)
    }

    /// [`Cache::read`] of a request that was refused before: a refusal now is not counted
    /// again (`reservation_fails` counts requests, not attempts).
    pub fn read_again(&mut self, addr: u64, who: T) -> Outcome {
        self.access(addr, who, false)
    }

    /// After a [`Outcome::ReservationFail`] for `addr`: what the request waits for.
    pub fn refusal(&self, addr: u64) -> Refusal {
        if self.mshr.contains_key(&(self.block_of(addr))) {
            Refusal::MergeFull
        } else {
            Refusal::NoMshr
        }
    }

    fn access(&mut self, addr: u64, who: T, count_fail: bool) -> Outcome {
        let (tag, set, bit) = self.locate(addr);
        self.clock += 1;
        if let Some(i) = self.find(tag, set) {
            if self.valid[i] & bit != 0 {
                self.touch(set, i);
                self.stats.accesses += 1;
                self.stats.hits += 1;
                if let Some(ld) = &mut self.ld {
                    ld.on_demand(addr, Some((i, bit)));
                }
                return Outcome::Hit;
            }
        }
        let key = self.block_of(addr);
        if let Some(&e) = self.mshr.get(&key) {
            let w = &mut self.entries[e as usize];
            if (w.len() as u32) < self.g.max_merge {
                w.push(who);
                self.stats.accesses += 1;
                self.stats.hit_reserve += 1;
                if let Some(ld) = &mut self.ld {
                    ld.on_demand(addr, None);
                    ld.on_merge(key);
                }
                return Outcome::HitReserve;
            }
            self.stats.reservation_fails += u64::from(count_fail);
            return Outcome::ReservationFail;
        }
        if self.mshr.len() as u32 >= self.g.mshrs {
            self.stats.reservation_fails += u64::from(count_fail);
            return Outcome::ReservationFail;
        }
        let e = match self.free.pop() {
            Some(e) => e,
            None => {
                self.entries.push(Vec::new());
                (self.entries.len() - 1) as u32
            }
        };
        self.entries[e as usize].push(who);
        self.mshr.insert(key, e);
        self.stats.accesses += 1;
        self.stats.misses += 1;
        if let Some(ld) = &mut self.ld {
            ld.on_demand(addr, None);
        }
        Outcome::Miss
    }

    /// A write of the block at `addr`. Write-through: `Hit` updates a present block, `Miss`
    /// allocates nothing; the caller forwards the write either way. Write-back: the block
    /// is allocated (if needed) and marked dirty; returns the evicted dirty block, if any,
    /// for the caller to write to the next level.
    pub fn write(&mut self, addr: u64) -> (Outcome, Option<u64>) {
        let (tag, set, bit) = self.locate(addr);
        self.clock += 1;
        self.stats.accesses += 1;
        self.stats.writes += 1;
        let present = self.find(tag, set);
        let hit = present.is_some_and(|i| self.valid[i] & bit != 0);
        if hit {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        let outcome = if hit { Outcome::Hit } else { Outcome::Miss };
        match self.g.write {
            WritePolicy::WriteThrough => {
                if let Some(i) = present.filter(|_| hit) {
                    self.touch(set, i);
                }
                (outcome, None)
            }
            WritePolicy::WriteBack => {
                let (i, victim) = match present {
                    Some(i) => (i, None),
                    None => self.allocate(tag, set),
                };
                self.valid[i] |= bit;
                self.dirty[i] |= bit;
                self.touch(set, i);
                (outcome, victim)
            }
        }
    }

    /// Chooses the LRU way (an invalid one first) for `tag`; returns it and the address of
    /// a dirty block it held (one per dirty block would be exact; the first is reported and
    /// the rest counted).
    fn allocate(&mut self, tag: u64, set: usize) -> (usize, Option<u64>) {
        let base = self.ways_of(set);
        // The first empty way, else the least recently used one (every stamp is distinct).
        let used = self.filled[set];
        let i = if used < self.g.ways {
            self.filled[set] = used + 1;
            let i = base + used as usize;
            if let Some(l) = &mut self.lru {
                l.append(set, i);
            }
            i
        } else if let Some(i) = self
            .ld
            .as_mut()
            .and_then(|ld| ld.victim(base, self.g.ways as usize, &self.stamps))
        {
            i
        } else if let Some(l) = &self.lru {
            l.head[set] as usize
        } else {
            base + self.stamps[base..base + self.g.ways as usize]
                .iter()
                .enumerate()
                .min_by_key(|&(_, &t)| t)
                .map_or(0, |(k, _)| k)
        };
        let old_tag = self.tags[i];
        if let Some(m) = &mut self.where_is {
            if old_tag != INVALID {
                m.remove(&old_tag);
            }
            m.insert(tag, i as u32);
        }
        let mut victim = None;
        let (valid, dirty) = (self.valid[i], self.dirty[i]);
        if valid != 0 && dirty != 0 {
            self.stats.writebacks += u64::from(dirty.count_ones());
            let b = dirty.trailing_zeros() as u64;
            victim = Some((old_tag - 1) * u64::from(self.g.line) + b * self.block);
        }
        self.valid[i] = 0;
        self.dirty[i] = 0;
        self.touch(set, i);
        self.tags[i] = tag;
        if let Some(ld) = &mut self.ld {
            ld.on_insert(i, (tag - 1) * u64::from(self.g.line));
        }
        (i, victim)
    }

    /// The block at `addr` arrived: installs it (LRU victim) and returns the waiters of its
    /// MSHR and the dirty block evicted, if any.
    pub fn fill(&mut self, addr: u64) -> (Vec<T>, Option<u64>) {
        let mut waiters = Vec::new();
        let victim = self.fill_into(addr, &mut waiters);
        (waiters, victim)
    }

    /// [`Cache::fill`], appending the waiters to `out` (no allocation per fill).
    pub fn fill_into(&mut self, addr: u64, out: &mut Vec<T>) -> Option<u64> {
        let key = self.block_of(addr);
        if let Some(e) = self.mshr.remove(&key) {
            out.append(&mut self.entries[e as usize]);
            self.free.push(e);
        }
        let (tag, set, bit) = self.locate(addr);
        self.clock += 1;
        let (i, victim) = match self.find(tag, set) {
            Some(i) => (i, None),
            None if self.ld.as_ref().is_some_and(|ld| ld.bypasses(addr)) => {
                if let Some(ld) = &mut self.ld {
                    ld.on_fill(key, None);
                }
                return None;
            }
            None => self.allocate(tag, set),
        };
        self.valid[i] |= bit;
        self.touch(set, i);
        if let Some(ld) = &mut self.ld {
            ld.on_fill(key, Some((i, bit)));
        }
        victim
    }

    /// Gives the cache its Locality Descriptor state (`--cache-policy ld`, `--prefetch`).
    pub fn set_ld(&mut self, ld: LdL1) {
        self.ld = Some(Box::new(ld));
    }

    /// The Locality Descriptor state, if the cache has one.
    pub fn ld(&self) -> Option<&LdL1> {
        self.ld.as_deref()
    }

    /// The Locality Descriptor state, mutable (the prefetcher's throttle and counters).
    pub fn ld_mut(&mut self) -> Option<&mut LdL1> {
        self.ld.as_deref_mut()
    }

    /// Core cycle `now` for the hard-pin reset timer (nothing without an [`LdL1`]).
    pub fn ld_tick(&mut self, now: u64) {
        if let Some(ld) = &mut self.ld {
            ld.tick(now);
        }
    }

    /// A prefetch of the block at `addr` ([`super::prefetch`]): takes an MSHR with no
    /// waiter when the block is neither present, nor in flight, nor bypassed and an MSHR
    /// is free; the caller then sends the read. Not counted in [`CacheStats`] (demand
    /// accesses only).
    pub fn prefetch(&mut self, addr: u64) -> Prefetch {
        let key = self.block_of(addr);
        if self.is_present(addr)
            || self.mshr.contains_key(&key)
            || self.ld.as_ref().is_some_and(|ld| ld.bypasses(addr))
        {
            return Prefetch::Unneeded;
        }
        if self.mshr.len() as u32 >= self.g.mshrs {
            if let Some(ld) = &mut self.ld {
                ld.stats.prefetches_dropped += 1;
            }
            return Prefetch::Dropped;
        }
        let e = match self.free.pop() {
            Some(e) => e,
            None => {
                self.entries.push(Vec::new());
                (self.entries.len() - 1) as u32
            }
        };
        self.mshr.insert(key, e);
        if let Some(ld) = &mut self.ld {
            ld.on_prefetch(key);
        }
        Prefetch::Issued
    }
}

impl<T> Drop for Cache<T> {
    /// Hands the arrays to the thread's pool (see [`Pool`]).
    fn drop(&mut self) {
        // `try_with`: during thread exit the pool may be gone; the arrays are then freed.
        let _ = POOL.try_with(|p| {
            let Ok(mut p) = p.try_borrow_mut() else {
                return;
            };
            let (a, b) = p.arrays((self.g.sets, self.g.ways));
            Pool::give(&mut a.u32s, b, std::mem::take(&mut self.set_base));
            Pool::give(&mut a.u32s, b, std::mem::take(&mut self.filled));
            if let Some(l) = self.lru.take() {
                Pool::give(&mut a.u32s, b, l.prev);
                Pool::give(&mut a.u32s, b, l.next);
                Pool::give(&mut a.u32s, b, l.head);
                Pool::give(&mut a.u32s, b, l.tail);
            }
            Pool::give(&mut a.u8s, b, std::mem::take(&mut self.valid));
            Pool::give(&mut a.u8s, b, std::mem::take(&mut self.dirty));
            Pool::give(&mut a.u64s, b, std::mem::take(&mut self.tags));
            Pool::give(&mut a.u64s, b, std::mem::take(&mut self.stamps));
            if let Some(m) = self.where_is.take() {
                Pool::give_map(&mut a.maps, b, m);
            }
            Pool::give_map(&mut a.maps, b, std::mem::take(&mut self.mshr));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn geom(sets: u32, ways: u32, mshrs: u32) -> Geometry {
        Geometry {
            sets,
            ways,
            line: 128,
            sectored: false,
            mshrs,
            max_merge: 2,
            write: WritePolicy::WriteBack,
            set_index: SetIndex::Linear,
            interleave: 1,
            slice_index: SliceIndex::Linear,
        }
    }

    /// The obvious fully associative LRU: a list, most recent last.
    struct Reference {
        ways: usize,
        lines: Vec<u64>,
    }

    impl Reference {
        fn access(&mut self, line: u64) -> bool {
            let hit = if let Some(p) = self.lines.iter().position(|&l| l == line) {
                self.lines.remove(p);
                true
            } else {
                if self.lines.len() == self.ways {
                    self.lines.remove(0);
                }
                false
            };
            self.lines.push(line);
            hit
        }
    }

    #[test]
    fn mshr_merge_and_reservation_fail() {
        let mut c: Cache<u32> = Cache::new(geom(1, 4, 1));
        assert_eq!(c.read(0, 1), Outcome::Miss);
        assert_eq!(c.read(4, 2), Outcome::HitReserve);
        assert_eq!(c.read(8, 3), Outcome::ReservationFail); // merge limit 2
        assert_eq!(c.read(128, 4), Outcome::ReservationFail); // one MSHR
        let (w, v) = c.fill(0);
        assert_eq!((w, v), (vec![1, 2], None));
        assert_eq!(c.read(8, 5), Outcome::Hit);
        let s = c.stats();
        assert_eq!(
            (
                s.accesses,
                s.hits,
                s.hit_reserve,
                s.misses,
                s.reservation_fails
            ),
            (3, 1, 1, 1, 2)
        );
    }

    /// A cache built after a used one of the same geometry was dropped (its arrays come
    /// from the pool) starts empty: no stale line hits, no stale dirty line is written back,
    /// no MSHR is taken. Checked for the few-ways (scan) and many-ways (map, LRU list) paths.
    #[test]
    fn a_cache_from_the_pool_starts_empty() {
        for ways in [4, 2 * MAP_LOOKUP_WAYS] {
            let lines = u64::from(ways) * 2;
            let mut old: Cache<u32> = Cache::new(geom(2, ways, 4));
            for l in 0..lines {
                old.write(l * 128);
            }
            assert_eq!(old.read(128 * (lines - 1), 1), Outcome::Hit); // held, dirty
            drop(old);
            let mut c: Cache<u32> = Cache::new(geom(2, ways, 4));
            // The same line in a cache whose arrays were `old`'s (capacity only).
            assert_eq!(c.read(128 * (lines - 1), 1), Outcome::Miss);
            assert_eq!(c.mshrs_used(), 1);
            assert_eq!(c.fill(128 * (lines - 1)), (vec![1], None));
            // Fill both sets to capacity with clean lines: no victim is dirty.
            for l in 0..lines {
                let a = (lines + l) * 128;
                assert_eq!(c.read(a, 2), Outcome::Miss);
                let (_, victim) = c.fill(a);
                assert_eq!(victim, None);
            }
            let s = c.stats();
            assert_eq!(
                (s.accesses, s.hits, s.misses, s.writebacks),
                (lines + 1, 0, lines + 1, 0)
            );
        }
    }

    #[test]
    fn a_refused_request_counts_once() {
        let mut c: Cache<u32> = Cache::new(geom(1, 4, 1));
        assert_eq!(c.read(0, 1), Outcome::Miss);
        assert_eq!(c.read(4, 2), Outcome::HitReserve);
        assert_eq!(c.read(8, 3), Outcome::ReservationFail);
        assert_eq!(c.refusal(8), Refusal::MergeFull);
        assert_eq!(c.read(128, 4), Outcome::ReservationFail);
        assert_eq!(c.refusal(128), Refusal::NoMshr);
        // Presented again while still refused: not counted a second time.
        assert_eq!(c.read_again(8, 3), Outcome::ReservationFail);
        assert_eq!(c.read_again(128, 4), Outcome::ReservationFail);
        assert_eq!(c.stats().reservation_fails, 2);
        c.fill(0);
        assert_eq!(c.read_again(8, 3), Outcome::Hit);
        assert_eq!(c.read_again(128, 4), Outcome::Miss);
        assert_eq!(c.stats().reservation_fails, 2);
    }

    #[test]
    fn sectors_miss_separately() {
        let mut g = geom(1, 2, 8);
        g.sectored = true;
        let mut c: Cache<()> = Cache::new(g);
        assert_eq!(c.read(0, ()), Outcome::Miss);
        c.fill(0);
        assert_eq!(c.read(31, ()), Outcome::Hit);
        assert_eq!(c.read(32, ()), Outcome::Miss);
        assert_eq!(c.block_bytes(), 32);
    }

    #[test]
    fn write_back_evicts_dirty() {
        let mut c: Cache<()> = Cache::new(geom(1, 1, 4));
        assert_eq!(c.write(256), (Outcome::Miss, None));
        assert_eq!(c.read(0, ()), Outcome::Miss);
        assert_eq!(c.fill(0).1, Some(256));
        assert_eq!(c.stats().writebacks, 1);
        let mut wt: Cache<()> = Cache::new(Geometry {
            write: WritePolicy::WriteThrough,
            ..geom(1, 1, 4)
        });
        assert_eq!(wt.write(0), (Outcome::Miss, None));
        assert!(!wt.is_present(0));
    }

    /// Reads `addrs` (line numbers) through a cache of `sets` x `ways`, filling each miss at
    /// once, and checks every outcome against a fully associative LRU model per set.
    fn check_against_reference(
        sets: u32,
        ways: u32,
        addrs: &[u64],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut c: Cache<()> = Cache::new(geom(sets, ways, 4));
        let mut refs: Vec<Reference> = (0..sets)
            .map(|_| Reference {
                ways: ways as usize,
                lines: Vec::new(),
            })
            .collect();
        for &a in addrs {
            let addr = a * 128 + 5;
            let expect = refs[(a % u64::from(sets)) as usize].access(a);
            let got = c.read(addr, ());
            if got == Outcome::Miss {
                c.fill(addr);
            }
            prop_assert_eq!(got == Outcome::Hit, expect);
        }
        Ok(())
    }

    proptest! {
        /// With immediate fills, each set behaves as a fully associative LRU cache of `ways`
        /// lines over the addresses mapping to it.
        #[test]
        fn matches_fully_associative_reference(
            sets in 1u32..5, ways in 1u32..6,
            addrs in proptest::collection::vec(0u64..64, 1..300),
        ) {
            check_against_reference(sets, ways, &addrs)?;
        }

        /// The same with more ways than [`MAP_LOOKUP_WAYS`] (tag map and recency lists
        /// instead of the scans): the unified L1s of Pascal and later.
        #[test]
        fn many_ways_match_fully_associative_reference(
            sets in 1u32..3, ways in 33u32..40,
            addrs in proptest::collection::vec(0u64..120, 1..600),
        ) {
            check_against_reference(sets, ways, &addrs)?;
        }
    }
}
