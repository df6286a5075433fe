//! A multi-module (NUMA) GPU and its data placement (seed paper 004, the Locality
//! Descriptor: §2.2, §4.6 and Algorithm 2, evaluated on the multi-chip system of its §5).
//!
//! **The machine.** A GPU configuration with a `[numa]` section (`--gpu mcm4`) splits its
//! SMs, L2 slices and DRAM channels into `modules` equal consecutive groups: SM `s` belongs
//! to module `s / (num_sms / modules)`, slice `l` to `l / (slices / modules)`, and the DRAM
//! channel behind a slice is in the slice's module (consecutive slices share a channel). The
//! L2 is memory-side: a block is cached only in the slices of the module that owns its
//! memory (its *home*). A request from an SM to a block homed elsewhere crosses the
//! inter-module link twice (request, then reply): each module has one outgoing and one
//! incoming link port of `link_gbps` per direction, booked first come first served like a
//! DRAM channel (fractional cycles, so a 137 B/cycle link is modelled exactly), plus
//! `link_latency_cycles` in flight; the crossbar (`noc.rs`) is traversed as before. A
//! remote L2 hit so costs NoC + 2 x link + L2 latency.
//!
//! **Placement** ([`PlacementKind`]) says which module owns each block:
//! - `interleave`: 64 KB pages round robin over modules, `module = (addr >> 16) mod
//!   modules`. The paper's baseline hashes pages with an XOR function (§6.2, [62]); plain
//!   round robin is what the issue asks for, and with buffers aligned far apart it spreads
//!   every structure evenly too (what the hash is for).
//! - `first-touch`: a page goes to the module of the SM whose request reaches memory first;
//!   TBs are partitioned as MCM-GPU's distributed scheduling (§6.2 "FirstTouch-Distrib"):
//!   the grid is cut into `modules` contiguous equal ranges of TB ids, range `z` runs on
//!   module `z`'s SMs.
//! - `ld`: Algorithm 2 ([`algorithm2`]) picks for each data structure `N = log2(modules)`
//!   consecutive address bits starting at `b` in 7..=16 as its zone index (`module = (addr
//!   >> b) mod modules`) and the TB partition over modules; structures without a usable
//!   descriptor keep the interleave mapping (which is the same bit field at `b` = 16).
//!
//! Within the home module the slice is a mixed hash of the line number ([`slice_in_module`]);
//! the set within the slice is the GPU's own set function. Every (slice, set) of every
//! module is used about evenly by sequential and strided walks under every placement
//! (tested below, as issue 11 tests every GPU in `addr_map.rs`).
//!
//! TBs given a zone run only on that zone's SMs, in TB-id order, one per SM per pass
//! ([`ZoneScheduler`]); a zone that runs out of TBs does not take another zone's (the
//! paper's access-distribution effects, §6.2, stay visible).

use super::config::TimingConfig;
use super::hints::{LocalityHints, LocalityType};
use super::named::Named;
use super::tb_sched::TbScheduler;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// log2 of the distance between two regions' bases (as in [`super::hints`]).
const SPACING_LOG2: u32 = launch::bind::BUFFER_SPACING_LOG2;

/// The lowest and highest first bit Algorithm 2 tries (§4.6 footnote 3: 128 B to 64 KB).
pub const LD_BITS: std::ops::RangeInclusive<u32> = 7..=16;

/// How data is placed over the modules of a NUMA GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlacementKind {
    /// Pages round robin over modules.
    Interleave,
    /// A page at the module that touches it first, TBs partitioned contiguously.
    FirstTouch,
    /// Algorithm 2 of the Locality Descriptor paper.
    Ld,
}

impl super::named::Named for PlacementKind {
    const KIND: &'static str = "Data placement on a multi-module GPU";
    const ALL: &'static [super::named::Entry<PlacementKind>] = &[
        super::named::Entry {
            value: PlacementKind::Interleave,
            name: "interleave",
            aliases: &[],
            description: "64 KB pages round robin over the modules (the default)",
        },
        super::named::Entry {
            value: PlacementKind::FirstTouch,
            name: "first-touch",
            aliases: &["firsttouch"],
            description:
                "a page at the module that touches it first, TBs in contiguous ranges per module",
        },
        super::named::Entry {
            value: PlacementKind::Ld,
            name: "ld",
            aliases: &[],
            description: "Algorithm 2 of the Locality Descriptor paper: per data structure the \
                          zone bits, and the TB partition",
        },
    ];
}

/// TBs with one footprint: their ids and the byte ranges `[lo, hi)` they read.
pub type FootprintClass = (Vec<u32>, Vec<(u64, u64)>);

/// What one data structure's TBs read, for Algorithm 2: the static per-TB footprints
/// (TBs with identical footprints grouped), in byte offsets from the structure's base.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StructureProfile {
    /// Region id (as in [`super::hints::StructureHint::region`]).
    pub region: usize,
    /// Per group of TBs with one footprint: the TB ids and the byte ranges `[lo, hi)` read.
    pub classes: Vec<FootprintClass>,
}

/// What Algorithm 2 chose.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LdPlan {
    /// Per structure: its region id and the first address bit of its zone field.
    pub bits: BTreeMap<usize, u32>,
    /// Per TB: its zone.
    pub tb_zone: Vec<u32>,
    /// The structure whose C-Tiles set the TB partition (the highest-priority usable one).
    pub leader: Option<usize>,
    /// Lines the chosen mapping makes local, of all lines in the profiles (each TB's
    /// footprint counted once per line).
    pub predicted_local_lines: u64,
    /// All lines in the profiles.
    pub profiled_lines: u64,
}

/// A run's placement: the kind, and Algorithm 2's plan for `ld`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The kind.
    pub kind: PlacementKind,
    /// Algorithm 2's plan (`ld` only).
    pub plan: Option<LdPlan>,
}

impl Placement {
    /// A placement of `kind` without a plan of Algorithm 2 (interleave and first touch need
    /// none).
    pub fn of(kind: PlacementKind) -> Placement {
        Placement { kind, plan: None }
    }
}

/// Lines of `[lo, hi)` (bytes, `line` a power of two) whose zone field at bit `b` (`zones`
/// a power of two) is each zone: counted a 2^b-aligned run at a time.
fn zone_lines(lo: u64, hi: u64, b: u32, line: u64, zones: u32, out: &mut [u64]) {
    if hi <= lo {
        return;
    }
    let first = lo / line;
    let last = (hi - 1) / line;
    let run_log2 = b.saturating_sub(line.trailing_zeros());
    let mut cur = first;
    while cur <= last {
        let end = (((cur >> run_log2) + 1) << run_log2).min(last + 1);
        let zone = ((cur * line) >> b) & u64::from(zones - 1);
        out[zone as usize] += end - cur;
        cur = end;
    }
}

/// Algorithm 2 (§4.6): the TB partition over `zones` NUMA zones and each structure's zone
/// bits, from the Locality Descriptors (`hints`) and what each TB reads (`profiles`).
///
/// - Usable structures: a descriptor that is not UNDECIDED and a non-empty profile, in
///   priority order (1 first). The first is `LDesc_1`; others fall back to interleave.
/// - NUMA_PART(LDesc_1, b): `LDesc_1`'s C-Tiles, halved along their largest dimension while
///   one holds more than `ceil(TBs / zones)` TBs (so that every zone can get work; the paper
///   favours parallelism over locality, §6.2), are visited in C-Tile order; each goes to the
///   zone holding most of the lines its TBs read (the D-Tile it accesses), or, when that
///   zone is full (`ceil(TBs / zones)` TBs), the next best with room, else the least loaded.
/// - COMP_UTIL: the lines read that are local under the partition and mapping. The paper's
///   "ratio of local to remote accesses" is unbounded when nothing is remote; the local
///   count ranks one structure's mappings the same way and adds across structures by
///   their traffic.
/// - For each `b_hi` in 7..=16 the partition of `LDesc_1` at `b_hi` is scored with every
///   other structure's best `b_lo`; the best total wins (ties: the lower bit, the finer
///   interleave).
pub fn algorithm2(
    hints: &LocalityHints,
    profiles: &[StructureProfile],
    grid: [u64; 3],
    zones: u32,
    line: u64,
) -> LdPlan {
    let zones = zones.max(1);
    let num_tbs = grid.iter().product::<u64>() as usize;
    let cap = (num_tbs as u64).div_ceil(u64::from(zones)).max(1);
    // Usable structures, highest priority first.
    let mut usable: Vec<(&StructureProfile, u32, [u64; 3])> = profiles
        .iter()
        .filter(|p| p.classes.iter().any(|c| !c.1.is_empty()))
        .filter_map(|p| {
            let d = &hints.iter().find(|h| h.region == p.region)?.descriptor;
            (d.locality_type != LocalityType::Undecided).then_some((p, d.priority, d.c_tile))
        })
        .collect();
    usable.sort_by_key(|u| (u.1, u.0.region));
    // counts[s][bi][tb * zones + z]: lines of structure s TB tb reads in zone z at bit b.
    let bits: Vec<u32> = LD_BITS.collect();
    let counts: Vec<Vec<Vec<u64>>> = usable
        .iter()
        .map(|(p, _, _)| {
            bits.iter()
                .map(|&b| {
                    let mut per_tb = vec![0u64; num_tbs * zones as usize];
                    let mut z = vec![0u64; zones as usize];
                    for (tbs, ranges) in &p.classes {
                        z.iter_mut().for_each(|x| *x = 0);
                        for &(lo, hi) in ranges {
                            zone_lines(lo, hi, b, line, zones, &mut z);
                        }
                        for &tb in tbs {
                            let i = tb as usize * zones as usize;
                            if let Some(dst) = per_tb.get_mut(i..i + zones as usize) {
                                dst.copy_from_slice(&z);
                            }
                        }
                    }
                    per_tb
                })
                .collect()
        })
        .collect();
    let profiled_lines: u64 = counts.iter().map(|c| c[0].iter().sum::<u64>()).sum();
    let Some((leader, _, c_tile)) = usable.first() else {
        return LdPlan {
            bits: BTreeMap::new(),
            tb_zone: contiguous_zones(num_tbs as u32, zones),
            leader: None,
            predicted_local_lines: 0,
            profiled_lines,
        };
    };
    let tiles = c_tiles(grid, *c_tile, cap);
    let local = |s: usize, bi: usize, part: &[u32]| -> u64 {
        part.iter()
            .enumerate()
            .map(|(tb, &z)| counts[s][bi][tb * zones as usize + z as usize])
            .sum()
    };
    let mut best: Option<(u64, LdPlan)> = None;
    for (bi, &b_hi) in bits.iter().enumerate() {
        let part = numa_part(&tiles, &counts[0][bi], zones, cap, num_tbs);
        let mut util = local(0, bi, &part);
        let mut map = BTreeMap::new();
        map.insert(leader.region, b_hi);
        for (s, (p, _, _)) in usable.iter().enumerate().skip(1) {
            let (mut tb_lo, mut tu) = (bits[0], 0u64);
            for (bj, &b_lo) in bits.iter().enumerate() {
                let u = local(s, bj, &part);
                if u > tu {
                    (tb_lo, tu) = (b_lo, u);
                }
            }
            map.insert(p.region, tb_lo);
            util += tu;
        }
        if best.as_ref().is_none_or(|(u, _)| util > *u) {
            best = Some((
                util,
                LdPlan {
                    bits: map,
                    tb_zone: part,
                    leader: Some(leader.region),
                    predicted_local_lines: util,
                    profiled_lines,
                },
            ));
        }
    }
    best.map(|b| b.1).unwrap_or_default()
}

/// TB ids cut into `zones` contiguous equal ranges (MCM-GPU's distributed scheduling).
pub fn contiguous_zones(num_tbs: u32, zones: u32) -> Vec<u32> {
    let zones = zones.max(1);
    super::tb_sched::split_even(num_tbs, zones)
        .into_iter()
        .enumerate()
        .flat_map(|(z, r)| r.map(move |_| z as u32))
        .collect()
}

/// The C-Tiles of a grid in C-Tile order (x fastest), each its TB ids (x fastest), after
/// halving the C-Tile along its largest dimension while it holds more than `cap` TBs.
fn c_tiles(grid: [u64; 3], c_tile: [u64; 3], cap: u64) -> Vec<Vec<u32>> {
    let mut c = [0usize, 1, 2].map(|d| c_tile[d].clamp(1, grid[d].max(1)));
    while c.iter().product::<u64>() > cap {
        let d = (0..3).max_by_key(|&d| (c[d], 3 - d)).unwrap_or(0);
        if c[d] <= 1 {
            break;
        }
        c[d] = c[d].div_ceil(2);
    }
    let n = [0, 1, 2].map(|d| grid[d].max(1).div_ceil(c[d]));
    let mut out = vec![Vec::new(); (n[0] * n[1] * n[2]) as usize];
    for z in 0..grid[2].max(1) {
        for y in 0..grid[1].max(1) {
            for x in 0..grid[0].max(1) {
                let t = (x / c[0]) + n[0] * ((y / c[1]) + n[1] * (z / c[2]));
                let tb = x + grid[0] * (y + grid[1] * z);
                out[t as usize].push(tb as u32);
            }
        }
    }
    out
}

/// NUMA_PART: each C-Tile to the zone holding most of what it reads, within `cap` TBs a
/// zone (see [`algorithm2`]).
fn numa_part(tiles: &[Vec<u32>], counts: &[u64], zones: u32, cap: u64, num_tbs: usize) -> Vec<u32> {
    let zn = zones as usize;
    let mut part = vec![0u32; num_tbs];
    let mut load = vec![0u64; zn];
    let mut sum = vec![0u64; zn];
    for tile in tiles {
        sum.iter_mut().for_each(|x| *x = 0);
        for &tb in tile {
            for (z, s) in sum.iter_mut().enumerate() {
                *s += counts[tb as usize * zn + z];
            }
        }
        let mut order: Vec<usize> = (0..zn).collect();
        order.sort_by_key(|&z| (std::cmp::Reverse(sum[z]), z));
        let size = tile.len() as u64;
        let z = order
            .iter()
            .copied()
            .find(|&z| load[z] + size <= cap)
            .unwrap_or_else(|| (0..zn).min_by_key(|&z| (load[z], z)).unwrap_or(0));
        load[z] += size;
        for &tb in tile {
            part[tb as usize] = z as u32;
        }
    }
    part
}

/// Per module: accesses (block requests reaching the memory side: L1 read misses,
/// writes, atomics) by its SMs to memory it owns (local) or another owns (remote).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleNumaStats {
    /// Accesses to the module's own memory.
    pub local_accesses: u64,
    /// Accesses to another module's memory.
    pub remote_accesses: u64,
    /// Data bytes of the local accesses (the block read, or the bytes written).
    pub local_bytes: u64,
    /// Data bytes of the remote accesses.
    pub remote_bytes: u64,
    /// Accesses (from any module) served by this module's memory.
    pub served_accesses: u64,
}

/// One structure's zone mapping in a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructureMapping {
    /// Region id.
    pub region: usize,
    /// First address bit of the zone field.
    pub bit: u32,
    /// Interleaving granularity in bytes (`2^bit`).
    pub granularity_bytes: u64,
}

/// NUMA counters (the `numa` key of the stats; only on a multi-module GPU).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NumaStats {
    /// `interleave`, `first-touch` or `ld`.
    pub placement: String,
    /// Local accesses, all modules.
    pub local_accesses: u64,
    /// Remote accesses, all modules.
    pub remote_accesses: u64,
    /// Data bytes of local accesses.
    pub local_bytes: u64,
    /// Data bytes of remote accesses.
    pub remote_bytes: u64,
    /// `remote_accesses / (local + remote)` (0 without accesses).
    pub remote_fraction: f64,
    /// Bytes on the inter-module links (requests and replies, headers included).
    pub link_bytes: u64,
    /// Per module.
    pub modules: Vec<ModuleNumaStats>,
    /// TBs run by each module's SMs.
    pub module_tbs: Vec<u64>,
    /// `ld`: each structure's mapping chosen by Algorithm 2 (others interleave).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mapping: Vec<StructureMapping>,
    /// `ld`: the structure whose C-Tiles set the TB partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<usize>,
    /// `ld`: the fraction of profiled lines Algorithm 2 predicted local.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_local_fraction: Option<f64>,
}

/// The inter-module links: per module one outgoing and one incoming port.
#[derive(Clone, Debug)]
struct Links {
    bytes_per_cycle: f64,
    latency: f64,
    out_free: Vec<f64>,
    in_free: Vec<f64>,
    bytes: u64,
}

impl Links {
    /// A packet of `bytes` from module `a` to module `b` ready at `now`; its arrival.
    fn cross(&mut self, a: usize, b: usize, bytes: u32, now: u64) -> u64 {
        let occ = f64::from(bytes) / self.bytes_per_cycle;
        let leave = self.out_free[a].max(now as f64) + occ;
        self.out_free[a] = leave;
        let arrive = (leave + self.latency).max(self.in_free[b] + occ);
        self.in_free[b] = arrive;
        self.bytes += u64::from(bytes);
        arrive.ceil() as u64
    }
}

/// The NUMA side of the memory system: homes, links and counters.
#[derive(Clone, Debug)]
pub struct Numa {
    kind: PlacementKind,
    modules: u32,
    sms_per_module: u32,
    slices_per_module: u32,
    page_shift: u32,
    line_shift: u32,
    /// Per region: the first bit of its zone field (`ld`); others at `page_shift`.
    bits: BTreeMap<usize, u32>,
    /// `first-touch`: page -> module.
    owner: HashMap<u64, u32>,
    links: Links,
    stats: Vec<ModuleNumaStats>,
    plan: Option<LdPlan>,
}

impl Numa {
    /// The NUMA side of `cfg` under `placement` (`None`: `cfg` has one module).
    pub fn new(cfg: &TimingConfig, placement: &Placement) -> Option<Numa> {
        let g = &cfg.gpu;
        let n = g.numa.as_ref()?;
        let modules = n.modules.max(1);
        let spm = (g.l2.slices / modules).max(1);
        Some(Numa {
            kind: placement.kind,
            modules,
            sms_per_module: (g.core.num_sms / modules).max(1),
            slices_per_module: spm,
            page_shift: n.page_bytes.max(1).trailing_zeros(),
            line_shift: g.l2.line_bytes.max(1).trailing_zeros(),
            bits: match (&placement.plan, placement.kind) {
                (Some(p), PlacementKind::Ld) => p.bits.clone(),
                _ => BTreeMap::new(),
            },
            owner: HashMap::new(),

            links: Links {
                bytes_per_cycle: (n.link_gbps * 1000.0 / f64::from(g.core.clock_mhz.max(1)))
                    .max(1e-9),
                latency: f64::from(n.link_latency_cycles),
                out_free: vec![0.0; modules as usize],
                in_free: vec![0.0; modules as usize],
                bytes: 0,
            },
            stats: vec![ModuleNumaStats::default(); modules as usize],
            plan: placement.plan.clone(),
        })
    }

    /// The number of modules.
    pub fn modules(&self) -> u32 {
        self.modules
    }

    /// The module of SM `sm`.
    pub fn module_of_sm(&self, sm: u32) -> u32 {
        (sm / self.sms_per_module).min(self.modules - 1)
    }

    /// The module of L2 slice `slice`.
    pub fn module_of_slice(&self, slice: u32) -> u32 {
        (slice / self.slices_per_module).min(self.modules - 1)
    }

    /// The home module of the block at `addr`, first-touch pages claimed by `sm`.
    pub fn home(&mut self, sm: u32, addr: u64) -> u32 {
        let mask = u64::from(self.modules - 1);
        let b = match self.kind {
            PlacementKind::FirstTouch => {
                let m = self.module_of_sm(sm);
                let page = addr >> self.page_shift;
                return *self.owner.entry(page).or_insert(m);
            }
            PlacementKind::Interleave => self.page_shift,
            PlacementKind::Ld => {
                let region = (addr >> SPACING_LOG2).wrapping_sub(1) as usize;
                self.bits.get(&region).copied().unwrap_or(self.page_shift)
            }
        };
        ((addr >> b) & mask) as u32
    }

    /// The line number of `addr` inside its home module's memory, what that module's DRAM
    /// channels number their rows by ([`super::dram::map`]): with `interleave` and `ld`
    /// the address with its zone field (the module bits) taken out, so each module's lines
    /// are numbered densely; with `first-touch` the line number itself (whole pages belong
    /// to a module, so a module's lines are dense within each of its pages).
    pub fn module_line(&self, addr: u64) -> u64 {
        let zone = self.modules.trailing_zeros();
        let b = match self.kind {
            PlacementKind::FirstTouch => return addr >> self.line_shift,
            PlacementKind::Interleave => self.page_shift,
            PlacementKind::Ld => {
                let region = (addr >> SPACING_LOG2).wrapping_sub(1) as usize;
                self.bits.get(&region).copied().unwrap_or(self.page_shift)
            }
        };
        without_field(addr, b, zone) >> self.line_shift
    }

    /// The L2 slice (global index) of the block at `addr` requested by `sm`.
    pub fn slice(&mut self, sm: u32, addr: u64) -> u32 {
        let m = self.home(sm, addr);
        m * self.slices_per_module
            + slice_in_module(addr >> self.line_shift, self.slices_per_module)
    }

    /// A request of `size` bytes on the wire (`data` bytes of payload: the block a read
    /// brings back, the bytes a write carries) from `sm` to `slice`, off the crossbar at
    /// `at`: counted, and across the link when remote; its arrival at the slice.
    pub fn request(&mut self, sm: u32, slice: u32, size: u32, data: u32, at: u64) -> u64 {
        let (a, b) = (self.module_of_sm(sm), self.module_of_slice(slice));
        self.stats[b as usize].served_accesses += 1;
        let s = &mut self.stats[a as usize];
        if a == b {
            s.local_accesses += 1;
            s.local_bytes += u64::from(data);
            at
        } else {
            s.remote_accesses += 1;
            s.remote_bytes += u64::from(data);
            self.links.cross(a as usize, b as usize, size, at)
        }
    }

    /// A reply of `size` bytes from `slice` to `sm` off the crossbar at `at`; its arrival.
    pub fn reply(&mut self, slice: u32, sm: u32, size: u32, at: u64) -> u64 {
        let (a, b) = (self.module_of_slice(slice), self.module_of_sm(sm));
        if a == b {
            at
        } else {
            self.links.cross(a as usize, b as usize, size, at)
        }
    }

    /// The counters; `sm_tbs` are the TBs each SM ran.
    pub fn stats(&self, sm_tbs: &[u64]) -> NumaStats {
        let mut s = NumaStats {
            placement: self.kind.name().to_string(),
            modules: self.stats.clone(),
            link_bytes: self.links.bytes,
            module_tbs: vec![0; self.modules as usize],
            ..NumaStats::default()
        };
        for m in &self.stats {
            s.local_accesses += m.local_accesses;
            s.remote_accesses += m.remote_accesses;
            s.local_bytes += m.local_bytes;
            s.remote_bytes += m.remote_bytes;
        }
        let all = s.local_accesses + s.remote_accesses;
        s.remote_fraction = if all == 0 {
            0.0
        } else {
            s.remote_accesses as f64 / all as f64
        };
        for (sm, &t) in sm_tbs.iter().enumerate() {
            s.module_tbs[self.module_of_sm(sm as u32) as usize] += t;
        }
        if let (PlacementKind::Ld, Some(p)) = (self.kind, &self.plan) {
            s.mapping = p
                .bits
                .iter()
                .map(|(&region, &bit)| StructureMapping {
                    region,
                    bit,
                    granularity_bytes: 1 << bit,
                })
                .collect();
            s.leader = p.leader;
            s.predicted_local_fraction = (p.profiled_lines > 0)
                .then(|| p.predicted_local_lines as f64 / p.profiled_lines as f64);
        }
        s
    }
}

/// `addr` with the `bits` bits from bit `at` taken out (the bits above move down).
pub(crate) fn without_field(addr: u64, at: u32, bits: u32) -> u64 {
    let low = addr & ((1u64 << at) - 1);
    ((addr >> (at + bits)) << at) | low
}

/// The slice of line `line` among a module's `spm`: a SplitMix64 hash of the line number
/// (Steele et al., OOPSLA 2014). A linear hash (IPOLY, or the line modulo the slices)
/// correlates with the L2's set function once the zone bits of a module's lines are fixed:
/// on mcm4 it left some (slice, set) pairs unused and others at 4x the mean; a mixed hash
/// does not (`every_l2_set_of_every_module_is_used`).
pub(crate) fn slice_in_module(line: u64, spm: u32) -> u32 {
    let mut z = line.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 32) % u64::from(spm.max(1))) as u32
}

/// TBs assigned to zones, each run only on its zone's SMs: per zone a queue in TB-id order;
/// every call hands one TB to each SM with a free context, SM by SM, and repeats while
/// that assigns any (the SMs of a zone take its TBs round robin).
pub struct ZoneScheduler {
    queues: Vec<VecDeque<u32>>,
    sms_per_zone: u32,
    pending: u64,
}

impl ZoneScheduler {
    /// `tb_zone[tb]` is each TB's zone; `num_sms` SMs split evenly over the zones.
    pub fn new(tb_zone: &[u32], zones: u32, num_sms: u32) -> ZoneScheduler {
        let zones = zones.max(1);
        let mut queues = vec![VecDeque::new(); zones as usize];
        for (tb, &z) in tb_zone.iter().enumerate() {
            queues[(z.min(zones - 1)) as usize].push_back(tb as u32);
        }
        ZoneScheduler {
            queues,
            sms_per_zone: (num_sms / zones).max(1),
            pending: tb_zone.len() as u64,
        }
    }
}

impl TbScheduler for ZoneScheduler {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        let mut left: Vec<u32> = free.to_vec();
        loop {
            let mut any = false;
            for (sm, f) in left.iter_mut().enumerate() {
                if *f == 0 {
                    continue;
                }
                let z = (sm as u32 / self.sms_per_zone) as usize;
                if let Some(tb) = self.queues.get_mut(z).and_then(VecDeque::pop_front) {
                    out.push((sm as u32, tb));
                    *f -= 1;
                    self.pending -= 1;
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
    }

    fn pending(&self) -> u64 {
        self.pending
    }
}

/// The TB scheduler a placement brings (`first-touch`: contiguous ranges; `ld`: Algorithm
/// 2's partition), or `None` (`interleave`, or a GPU with one module): the run's
/// `--tb-policy` then places TBs.
pub fn zone_scheduler(
    cfg: &TimingConfig,
    placement: &Placement,
    num_tbs: u32,
) -> Option<ZoneScheduler> {
    let n = cfg.gpu.numa.as_ref()?;
    let zones = n.modules.max(1);
    let tb_zone = match (placement.kind, &placement.plan) {
        (PlacementKind::Interleave, _) => return None,
        (PlacementKind::Ld, Some(p)) if p.tb_zone.len() == num_tbs as usize => p.tb_zone.clone(),
        _ => contiguous_zones(num_tbs, zones),
    };
    Some(ZoneScheduler::new(&tb_zone, zones, cfg.gpu.core.num_sms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::hints::{Descriptor, Pattern, StructureHint};
    use gpu::GpuConfig;

    fn mcm4() -> TimingConfig {
        TimingConfig::new(GpuConfig::builtin("mcm4").expect("mcm4"))
    }

    fn numa(kind: PlacementKind, bits: &[(usize, u32)]) -> Numa {
        let plan = LdPlan {
            bits: bits.iter().copied().collect(),
            ..LdPlan::default()
        };
        Numa::new(
            &mcm4(),
            &Placement {
                kind,
                plan: Some(plan),
            },
        )
        .expect("mcm4 has modules")
    }

    /// The configuration: 4 modules of 16 SMs and 16 slices; 64 KB pages.
    #[test]
    fn mcm4_modules() {
        let c = mcm4();
        let n = c.gpu.numa.as_ref().expect("[numa]");
        assert_eq!(
            (n.modules, n.page_bytes, c.gpu.core.num_sms),
            (4, 65536, 64)
        );
        // 192 GB/s per module: 8 channels x 8 B x 750 MHz x 4.
        assert_eq!(8 * 8 * 750 * 4, 192_000);
        let m = Numa::new(&c, &Placement::of(PlacementKind::Interleave)).expect("numa");
        assert_eq!(
            (m.module_of_sm(15), m.module_of_sm(16), m.module_of_sm(63)),
            (0, 1, 3)
        );
        assert_eq!((m.module_of_slice(15), m.module_of_slice(16)), (0, 1));
        let one = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
        assert!(Numa::new(&one, &Placement::of(PlacementKind::Ld)).is_none());
    }

    /// Interleave: page k of a structure (64 KB) at module k mod 4, from any SM; the local
    /// address drops bits 16-17.
    #[test]
    fn interleave_pages_round_robin() {
        let mut m = numa(PlacementKind::Interleave, &[]);
        let base = launch::bind::buffer_base(0);
        for k in 0..9u64 {
            let home = m.home(63, base + k * 65536 + 200);
            assert_eq!(u64::from(home), k % 4, "page {k}");
        }
    }

    /// First touch: the first SM's module owns the page, later touches do not move it.
    #[test]
    fn first_touch_owns_the_page() {
        let mut m = numa(PlacementKind::FirstTouch, &[]);
        let a = launch::bind::buffer_base(1) + 3 * 65536;
        assert_eq!(m.home(20, a), 1, "SM 20 is in module 1");
        assert_eq!(m.home(0, a + 65535), 1, "same page, still module 1");
        assert_eq!(m.home(0, a + 65536), 0, "next page, SM 0 first");
        assert_eq!(m.home(63, a + 65536), 0);
        assert_eq!(m.home(63, a + 2 * 65536), 3);
    }

    /// ld: region 0 interleaved at 16 KB (bit 14), region 1 without a mapping at 64 KB.
    #[test]
    fn ld_bits_choose_the_zone() {
        let mut m = numa(PlacementKind::Ld, &[(0, 14)]);
        let b0 = launch::bind::buffer_base(0);
        let b1 = launch::bind::buffer_base(1);
        assert_eq!(m.home(0, b0 + 3 * 16384), 3);
        assert_eq!(m.home(0, b0 + 4 * 16384 + 100), 0);
        assert_eq!(m.home(0, b0 + 6 * 16384), 2);
        assert_eq!(m.home(0, b1 + 3 * 16384), 0, "interleave: still page 0");
        assert_eq!(m.home(0, b1 + 65536), 1);
    }

    /// Lines of a byte range per zone, by hand: [0, 40 KB) at bit 14 (16 KB per zone):
    /// 128 lines in zone 0, 128 in zone 1, 64 in zone 2; at bit 7 lines alternate.
    #[test]
    fn zone_lines_by_hand() {
        let mut z = [0u64; 4];
        zone_lines(0, 40 * 1024, 14, 128, 4, &mut z);
        assert_eq!(z, [128, 128, 64, 0]);
        let mut z = [0u64; 4];
        zone_lines(128, 6 * 128 + 1, 7, 128, 4, &mut z);
        // Lines 1..=6: zones 1, 2, 3, 0, 1, 2.
        assert_eq!(z, [1, 2, 2, 1]);
    }

    fn hint(region: u32, priority: u32, c_tile: [u64; 3]) -> StructureHint {
        let descriptor = Descriptor {
            param: region,
            name: None,
            element_bytes: 4,
            locality_type: LocalityType::InterThread,
            priority,
            sharing: None,
            pattern: Pattern::Regular,
            stride_elements: None,
            d_tile: [1, 1, 1],
            c_tile,
            compute_data_map: [1, 0, 0],
            compute_data_rank: [1, 0, 0],
        };
        StructureHint::new(descriptor, None)
    }

    /// The paper's Figure 13 in miniature: 16 TBs, 4 zones, C-Tiles of 4 TBs. TB t reads
    /// A's 16 KB at t x 16 KB (a C-Tile: one 64 KB page) and B's 4 KB at t x 4 KB (a
    /// C-Tile: one 16 KB quarter page). By hand: only bit 16 puts each C-Tile's A data in
    /// one zone (C-Tile k in zone k); with that partition only bit 14 does the same for B
    /// ((t x 4 KB >> 14) mod 4 = t / 4). Everything is local.
    #[test]
    fn algorithm2_figure_13() {
        let mut hints = LocalityHints::default();
        hints.insert(hint(0, 1, [4, 1, 1]));
        hints.insert(hint(1, 2, [1, 1, 1]));
        let tbs = |unit: u64| StructureProfile {
            region: if unit == 16384 { 0 } else { 1 },
            classes: (0..16u32)
                .map(|t| {
                    (
                        vec![t],
                        vec![(u64::from(t) * unit, u64::from(t + 1) * unit)],
                    )
                })
                .collect(),
        };
        let plan = algorithm2(&hints, &[tbs(16384), tbs(4096)], [16, 1, 1], 4, 128);
        assert_eq!(plan.bits, BTreeMap::from([(0, 16), (1, 14)]));
        assert_eq!(plan.tb_zone, (0..16).map(|t| t / 4).collect::<Vec<u32>>());
        assert_eq!(plan.leader, Some(0));
        // 16 TBs x (128 + 32) lines, all local.
        assert_eq!(
            (plan.predicted_local_lines, plan.profiled_lines),
            (2560, 2560)
        );
        // B alone as the leader (A undecided): each TB's own 4 KB; C-Tiles of 1 TB. Bit 7
        // spreads a TB's 32 lines over 4 zones (8 local); bit 12 and above keep all 32 in
        // one zone, but the partition must hold 4 TBs a zone: bit 12 sends TB t to zone
        // t mod 4 (4 each), all local, and is the lowest such bit.
        let mut h2 = LocalityHints::default();
        let mut a = hint(0, 1, [4, 1, 1]);
        a.descriptor.locality_type = LocalityType::Undecided;
        h2.insert(a);
        h2.insert(hint(1, 2, [1, 1, 1]));
        let plan = algorithm2(&h2, &[tbs(16384), tbs(4096)], [16, 1, 1], 4, 128);
        assert_eq!(plan.bits, BTreeMap::from([(1, 12)]));
        assert_eq!(plan.tb_zone, (0..16).map(|t| t % 4).collect::<Vec<u32>>());
        assert_eq!(plan.predicted_local_lines, 16 * 32);
    }

    /// Without a usable descriptor: no mapping, TBs in contiguous ranges.
    #[test]
    fn algorithm2_without_descriptors_falls_back() {
        let plan = algorithm2(&LocalityHints::default(), &[], [10, 1, 1], 4, 128);
        assert!(plan.bits.is_empty());
        assert_eq!(plan.tb_zone, vec![0, 0, 0, 1, 1, 1, 2, 2, 3, 3]);
    }

    /// Remote accesses are counted and cross the link: 16 B a cycle (22.4 GB/s at
    /// 1.4 GHz), 32 cycles in flight. A 136 B packet occupies 8.5 cycles: sent at 100 it
    /// leaves at 108.5 and arrives at 140.5 (141); a second at 100 leaves at 117 and
    /// arrives at 149. A local access passes untouched.
    #[test]
    fn remote_counting_and_link_bandwidth() {
        let mut c = mcm4();
        c.set("numa.link_gbps", "22.4").expect("set");
        let mut m = Numa::new(&c, &Placement::of(PlacementKind::Interleave)).expect("numa");
        assert_eq!(
            m.request(0, 16, 136, 128, 100),
            141,
            "SM 0 -> slice 16 (module 1)"
        );
        assert_eq!(m.request(1, 17, 136, 128, 100), 149);
        assert_eq!(m.request(0, 0, 136, 128, 100), 100, "local");
        // The reply direction uses module 1's outgoing port, free until now.
        assert_eq!(m.reply(16, 0, 136, 200), 241);
        let s = m.stats(&[1, 2]);
        assert_eq!((s.local_accesses, s.remote_accesses), (1, 2));
        assert_eq!((s.local_bytes, s.remote_bytes), (128, 256));
        assert_eq!(s.link_bytes, 3 * 136);
        assert!((s.remote_fraction - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.modules[1].served_accesses, 2);
        assert_eq!(s.module_tbs, vec![3, 0, 0, 0]);
    }

    /// The zone scheduler: 8 TBs, zones 0 0 1 1 0 0 1 1, 4 SMs in 2 zones, 1 free context
    /// each: SMs 0 and 1 get TBs 0 and 1, SMs 2 and 3 TBs 2 and 3.
    #[test]
    fn zone_scheduler_keeps_tbs_in_their_zone() {
        let mut s = ZoneScheduler::new(&[0, 0, 1, 1, 0, 0, 1, 1], 2, 4);
        let mut out = Vec::new();
        s.assign(&[1, 1, 1, 1], &mut out);
        assert_eq!(out, vec![(0, 0), (1, 1), (2, 2), (3, 3)]);
        out.clear();
        s.assign(&[2, 0, 0, 0], &mut out);
        assert_eq!(out, vec![(0, 4), (0, 5)]);
        assert_eq!(s.pending(), 2);
    }

    /// Every set of every L2 slice of every module is used about evenly (within 0.7-1.3x
    /// of the mean) by a sequential walk and by 4 KB and 64 KB column walks (one line per
    /// row), under interleave and under the finest and a middle `ld` mapping: the
    /// module-local slice choice keeps a module's data on all its slices (issue 11's test,
    /// `addr_map.rs`, through the NUMA path).
    #[test]
    fn every_l2_set_of_every_module_is_used() {
        use crate::timing::cache::{Cache, Geometry};
        use crate::timing::config::WritePolicy;
        let c = mcm4();
        let g = Geometry::l2_slice(&c.gpu, WritePolicy::WriteBack);
        let cache: Cache<()> = Cache::new(g);
        let sets = g.sets as usize;
        let slices = c.gpu.l2.slices as usize;
        let base = launch::bind::buffer_base(2);
        for (kind, bits) in [
            (PlacementKind::Interleave, None),
            (PlacementKind::Ld, Some(7)),
            (PlacementKind::Ld, Some(14)),
        ] {
            let mut m = numa(kind, &bits.map(|b| (2, b)).into_iter().collect::<Vec<_>>());
            // 256 lines per (slice, set) on average: the hashed slice choice adds noise of
            // a sixteenth of the mean.
            let n = 256 * (slices * sets) as u64;
            for (what, stride) in [
                ("sequential", 1u64),
                ("4 KB column", 32),
                ("64 KB column", 512),
            ] {
                let mut u = vec![0u64; slices * sets];
                for k in 0..n {
                    let a = base + k * stride * 128;
                    let s = m.slice(0, a) as usize;
                    u[s * sets + cache.set_of(a)] += 1;
                }
                // A module the walk never reaches (a 4 KB column under 128 B interleave
                // stays in one module) is left out: the spread is over the slices that
                // hold the walk's data.
                let per_module = sets * slices / 4;
                let u: Vec<u64> = u
                    .chunks(per_module)
                    .filter(|c| c.iter().any(|&x| x > 0))
                    .flatten()
                    .copied()
                    .collect();
                let mean = u.iter().sum::<u64>() as f64 / u.len() as f64;
                let lo = *u.iter().min().unwrap_or(&0) as f64 / mean;
                let hi = *u.iter().max().unwrap_or(&0) as f64 / mean;
                assert!(
                    lo >= 0.7 && hi <= 1.3,
                    "{kind:?} {bits:?} {what}: per-set use between {lo:.2} and {hi:.2} of the mean"
                );
            }
        }
    }
}
