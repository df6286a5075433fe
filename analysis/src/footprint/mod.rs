//! Exact per-TB footprints: the set of data units (line / sector / element) each TB reads,
//! per kernel parameter, with the warps that read them.
//!
//! A load's address, guard and loop trip counts depend on some subset of the `%ctaid`
//! dimensions; the load's footprint is computed once per distinct projection of the grid on
//! that subset (GEMM's `A` once per block row), not per TB. Within a TB, threads are
//! enumerated and each innermost loop whose address is affine in its counter, with a guard
//! independent of it and 32-bit extensions proved not to wrap over the whole range, becomes
//! one arithmetic run of units instead of one unit per iteration. TBs with identical
//! per-parameter footprints share one [`Class`]. [`Footprints::from_warp_units`] builds the same
//! structure from explicit per-warp unit sets (dynamic footprints from the interpreter).
//!
//! The types are here; the computation is in submodules, all re-exported: `compute` (the
//! driver), `plan` (what each load's walk needs, decided once), `group` (loads walked
//! together), `trip_cache` (trip counts during the walk), `walk` (one load in one TB) and
//! `runs` (what a walk produces, assembled into classes).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use launch::{BoundLaunch, BoundValue};
use rayon::prelude::*;

use crate::addr::{KernelModel, LoadSite};
use crate::expr::*;
use crate::loops::LoopId;

pub use crate::fx::{FxHasher, FxMap, FxSet};

mod compute;
mod group;
mod plan;
mod runs;
mod trip_cache;
mod walk;

pub use compute::*;
pub(crate) use group::*;
pub(crate) use plan::*;
use runs::*;
pub(crate) use trip_cache::*;
use walk::*;

/// Unit ids: parameter index in the bits above [`PARAM_SHIFT`], unit offset below.
pub const PARAM_SHIFT: u32 = 40;

/// A half-open interval of unit ids.
pub type Interval = (u64, u64);

/// Granularity of the data units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    /// Cache lines of the given size in bytes.
    Line(u64),
    /// 32-byte sectors.
    Sector,
    /// Elements of the parameter's buffer type (the load width when no buffer is described).
    Element,
}

/// TBs with identical footprints for one parameter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Class {
    /// Units read, sorted disjoint intervals.
    pub units: Vec<Interval>,
    /// Units read by two or more warps of the TB.
    pub multi_warp: Vec<Interval>,
    /// TB ids, ascending.
    pub members: Vec<u32>,
}

/// The footprints of one parameter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamFootprint {
    /// Parameter index.
    pub param: u32,
    /// Bytes per unit.
    pub unit_bytes: u64,
    /// Distinct footprints.
    pub classes: Vec<Class>,
}

/// Footprints of every TB of a launch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Footprints {
    /// Number of TBs (id = x + y*gx + z*gx*gy).
    pub num_tbs: u32,
    /// Per parameter that is read.
    pub params: Vec<ParamFootprint>,
    /// Per load (index into the model's loads; empty for loads not evaluated), the bytes it
    /// reads per data structure, over every TB, thread and iteration.
    pub load_ranges: Vec<Vec<LoadRange>>,
}

/// Region id of addresses that fall in no data structure (no parameter's buffer, no module
/// variable): they are reported per load but belong to no footprint.
pub const NO_BUFFER: u32 = (1 << 24) - 1;

/// The bytes one load reads in one data structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadRange {
    /// Data structure: parameter index, `nparams + j` for module variable `j`, or `None`
    /// when the addresses lie in no data structure.
    pub region: Option<u32>,
    /// First byte read (offset in the structure; the absolute address for `None`).
    pub lo: u64,
    /// One past the last byte read.
    pub hi: u64,
}

impl LoadRange {
    /// The ranges [`merge_ranges`] collected for one load, in region order (a load's
    /// ranges as the static evaluation and an interpreter run both report them).
    pub fn from_merged(mut v: Vec<(u32, u64, u64)>) -> Vec<LoadRange> {
        v.sort_unstable();
        v.into_iter()
            .map(|(r, lo, hi)| LoadRange {
                region: (r != NO_BUFFER).then_some(r),
                lo,
                hi,
            })
            .collect()
    }
}

/// Merges byte ranges `(region, lo, hi)` into one range per region (`region` a data
/// structure, or [`NO_BUFFER`] with absolute addresses).
pub fn merge_ranges(v: &mut Vec<(u32, u64, u64)>, r: (u32, u64, u64)) {
    match v.iter_mut().find(|x| x.0 == r.0) {
        Some(x) => {
            x.1 = x.1.min(r.1);
            x.2 = x.2.max(r.2);
        }
        None => v.push(r),
    }
}

/// Sorts and merges intervals.
pub fn normalize(mut v: Vec<Interval>) -> Vec<Interval> {
    v.sort_unstable();
    let mut out: Vec<Interval> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(l) if a <= l.1 => l.1 = l.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Units covered by at least two of `lists` (each normalized).
pub fn covered_twice(lists: &[Vec<Interval>]) -> Vec<Interval> {
    let mut ev: Vec<(u64, i32)> = Vec::new();
    for l in lists {
        for &(a, b) in l {
            ev.push((a, 1));
            ev.push((b, -1));
        }
    }
    ev.sort_unstable();
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0u64);
    for (x, d) in ev {
        let before = depth;
        depth += d;
        if before < 2 && depth >= 2 {
            start = x;
        } else if before >= 2 && depth < 2 && x > start {
            out.push((start, x));
        }
    }
    normalize(out)
}

/// Total units in a normalized list.
pub fn count(v: &[Interval]) -> u64 {
    v.iter().map(|(a, b)| b - a).sum()
}

impl Footprints {
    /// Builds footprints from explicit sets: `units[tb][warp]` lists the unit ids (see
    /// [`PARAM_SHIFT`]) warp `warp` of TB `tb` read, in any order, repeats allowed.
    pub fn from_warp_units(units: &[Vec<Vec<u64>>], unit_bytes: impl Fn(u32) -> u64) -> Footprints {
        let mut per_param: std::collections::BTreeMap<u32, Vec<Vec<Vec<Interval>>>> =
            Default::default();
        for (tb, warps) in units.iter().enumerate() {
            for (w, us) in warps.iter().enumerate() {
                for &u in us {
                    let p = (u >> PARAM_SHIFT) as u32;
                    let e = per_param
                        .entry(p)
                        .or_insert_with(|| vec![Vec::new(); units.len()]);
                    let tbw = &mut e[tb];
                    if tbw.len() <= w {
                        tbw.resize(w + 1, Vec::new());
                    }
                    tbw[w].push((u, u + 1));
                }
            }
        }
        let params = per_param
            .into_iter()
            .map(|(p, tbs)| {
                let per_tb: Vec<Vec<Vec<Interval>>> = tbs
                    .into_iter()
                    .map(|ws| ws.into_iter().map(normalize).collect())
                    .collect();
                build_param(
                    p,
                    unit_bytes(p),
                    per_tb.iter().map(|w| w.as_slice()).collect(),
                )
            })
            .collect();
        Footprints {
            num_tbs: units.len() as u32,
            params,
            load_ranges: Vec::new(),
        }
    }

    /// The class of every TB for parameter index `k` of [`Footprints::params`]
    /// (`u32::MAX`: the TB reads nothing of it).
    pub fn class_table(&self, k: usize) -> Vec<u32> {
        let mut class_of = vec![u32::MAX; self.num_tbs as usize];
        for (c, class) in self.params[k].classes.iter().enumerate() {
            for &m in &class.members {
                class_of[m as usize] = c as u32;
            }
        }
        class_of
    }
}

/// Groups TBs with identical per-warp footprints into classes.
fn build_param(param: u32, unit_bytes: u64, per_tb: Vec<&[Vec<Interval>]>) -> ParamFootprint {
    let mut index: HashMap<&[Vec<Interval>], usize> = HashMap::new();
    let mut classes: Vec<Class> = Vec::new();
    for (tb, warps) in per_tb.iter().enumerate() {
        if warps.iter().all(|w| w.is_empty()) {
            continue;
        }
        let k = *index.entry(warps).or_insert_with(|| {
            classes.push(Class {
                units: normalize(warps.iter().flatten().copied().collect()),
                multi_warp: covered_twice(warps),
                members: Vec::new(),
            });
            classes.len() - 1
        });
        classes[k].members.push(tb as u32);
    }
    ParamFootprint {
        param,
        unit_bytes,
        classes,
    }
}

/// A load's evaluation failure, reported against it.
#[derive(Clone, Debug)]
pub struct LoadError {
    /// Index into [`KernelModel::loads`].
    pub load: usize,
    /// What went wrong.
    pub error: String,
}

/// Unit size per parameter for a granularity.
pub fn unit_bytes(g: Granularity, launch: &BoundLaunch, p: u32, fallback: u64) -> u64 {
    match g {
        Granularity::Line(n) => n.max(1),
        Granularity::Sector => 32,
        Granularity::Element => match launch.params.get(p as usize).map(|x| &x.value) {
            Some(BoundValue::Buffer { elem, .. }) => elem.size() as u64,
            None => launch
                .region_elem_bytes(p as usize)
                .unwrap_or(fallback.max(1)),
            _ => fallback.max(1),
        },
    }
}
