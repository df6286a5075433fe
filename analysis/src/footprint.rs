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

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use launch::{BoundLaunch, BoundValue};
use rayon::prelude::*;

use crate::addr::{KernelModel, LoadSite};
use crate::expr::*;
use crate::loops::LoopId;

/// Unit ids: parameter index in the bits above [`PARAM_SHIFT`], unit offset below.
pub const PARAM_SHIFT: u32 = 40;

/// A fast non-cryptographic hasher (the FxHash of rustc) for the analysis's internal maps,
/// whose keys are small integer vectors.
#[derive(Clone, Copy, Default)]
pub struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

/// A `HashSet` with [`FxHasher`].
pub type FxSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<FxHasher>>;

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

struct LoadPlan<'a> {
    site: &'a LoadSite,
    dims: [bool; 3],
    /// For the innermost loop: the address and the guards as affine functions of its counter.
    inner_affine: Option<InnerAffine>,
    /// Guard literals not depending on any loop counter / depending on some.
    outer_conds: Vec<E>,
    inner_conds: Vec<E>,
    /// For a load outside loops: the address and guard as affine functions of `%tid.x`, so
    /// a warp's lanes along `x` become one run.
    lanes: Option<LanePlan>,
    /// Every expression above compiled into one DAG (shared nodes evaluated once per call).
    tape: Tape,
    /// For a load outside loops whose tape is cheap to evaluate eagerly: the nodes of its
    /// address and guards (address first), for evaluating a warp row's lanes together
    /// ([`LaneEval`]).
    lane_roots: Option<Vec<u32>>,
    /// For a load in loops: its address and the guards that mention a loop counter compiled
    /// apart, with their nodes (address first), for evaluating consecutive iterations of the
    /// innermost loop together ([`LaneAxis::Iter`]).
    iter_tape: Option<(Tape, Vec<u32>)>,
    /// [`Tape::thread_only`] of `iter_tape` and of `tape`, for the warp rows' passes
    /// ([`LaneEval::run_reusing`]).
    iter_thread_only: Vec<bool>,
    tape_thread_only: Vec<bool>,
    /// The pass shared with the other loads of the same loops, and this load's place in it
    /// ([`group_iterations`]).
    iter_group: Option<Membership>,
    /// For a loop-free load with [`LoadPlan::lane_roots`]: the warp pass shared with the
    /// kernel's other such loads, and this load's place in it ([`group_lanes`]).
    lane_group: Option<Membership>,
    /// For a load with a [`RowPlan`] and guards outside its loops: the pass over a warp
    /// row's guards shared with the kernel's other such loads ([`group_rows`]; a member's
    /// nodes are its guards).
    row_group: Option<Membership>,
    /// The recurrences of the outermost loop that tape reads: stepped for a warp row's
    /// lanes together before its threads walk ([`prestep_lanes`]).
    outer_recs: Vec<std::sync::Arc<RecSys>>,
    /// For a load in loops whose expressions are all cheap eagerly and step no recurrence:
    /// what a warp row's walk evaluates for its lanes together ([`RowWalk`]).
    row: Option<RowPlan>,
}

/// A load's guards outside its loops compiled apart (evaluated before the loops are
/// entered), with their nodes; `tape` then answers everything else for the row's lanes.
struct RowPlan {
    outer: Tape,
    outer_nodes: Vec<u32>,
}

thread_local! {
    /// Value storage of the lane evaluators, reused from job to job.
    static LANE_VALS: std::cell::RefCell<Vec<i128>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A loop-free load's address and guard as affine functions of `%tid.x`.
struct LanePlan {
    /// Coefficient of `%tid.x` in the address, and the address's wrap obligations.
    coef: E,
    obl: Vec<Obligation>,
    /// Guard literals free of `%tid.x`.
    free: Vec<E>,
    /// Guard literals `d(x) rel 0`: relation, `d`, its coefficient, its obligations.
    affine: Vec<(Rel, E, E, Vec<Obligation>)>,
}

fn lane_plan(s: &LoadSite, conds: &[E]) -> Option<LanePlan> {
    if !s.loops.is_empty() {
        return None;
    }
    let x = Var::Tid(0);
    let dep = |e: &Expr| matches!(e, Expr::Var(v) if *v == x) || matches!(e, Expr::Trip(_));
    let mut obl = Vec::new();
    let coef = linear_coef(&s.addr, x, &mut obl, &dep)?;
    let (free, affine) = split_affine(conds.iter(), x, &dep)?;
    Some(LanePlan {
        coef,
        obl,
        free,
        affine,
    })
}

/// A guard literal `d rel 0` with `d` affine in a variable: the relation, `d`, its
/// coefficient, and the obligations under which `d` is affine.
pub(crate) type AffineLit = (Rel, E, E, Vec<Obligation>);

/// The guard literals (conjuncts of `conds`) that depend on nothing `dep` marks, and those
/// that do, as affine comparisons in `x`; `None` when one of the latter is not one (or is
/// a `!=`, which holds on no interval).
fn split_affine<'a>(
    conds: impl Iterator<Item = &'a E>,
    x: Var,
    dep: &dyn Fn(&Expr) -> bool,
) -> Option<(Vec<E>, Vec<AffineLit>)> {
    let (mut free, mut affine) = (Vec::new(), Vec::new());
    let mut lits = Vec::new();
    for c in conds {
        crate::ivs::conjuncts(c, &mut lits);
    }
    for lit in lits {
        let mut d = false;
        lit.visit_leaves(&mut |e| d |= dep(e));
        if !d {
            free.push(lit);
            continue;
        }
        let Expr::Cmp(r, a, b) = &*lit else {
            return None;
        };
        if *r == Rel::Ne {
            return None;
        }
        let diff = sub(a.clone(), b.clone());
        let mut o = Vec::new();
        let c = linear_coef(&diff, x, &mut o, dep)?;
        affine.push((*r, diff, c, o));
    }
    Some((free, affine))
}

/// The `k` in `[0, n)` where every literal holds, given each literal's `d` at `k = 0` and
/// its coefficient, as a half-open range (empty when `lo >= hi`).
pub(crate) fn affine_range(
    lits: impl Iterator<Item = (Rel, i128, i128)>,
    n: i128,
) -> Option<(i128, i128)> {
    let (mut lo, mut hi) = (0i128, n);
    let mut cut = |(a, b): (i128, i128)| {
        lo = lo.max(a);
        hi = hi.min(b);
    };
    for (r, d0, ds) in lits {
        match r {
            Rel::Lt => cut(solve_le(d0 + 1, ds, n)),
            Rel::Le => cut(solve_le(d0, ds, n)),
            Rel::Gt => cut(solve_le(1 - d0, -ds, n)),
            Rel::Ge => cut(solve_le(-d0, -ds, n)),
            Rel::Eq => {
                cut(solve_le(d0, ds, n));
                cut(solve_le(-d0, -ds, n));
            }
            Rel::Ne => return None,
        }
    }
    Some((lo, hi))
}

/// The `k` in `[0, n)` with `a + b * k <= 0`, as a half-open range.
fn solve_le(a: i128, b: i128, n: i128) -> (i128, i128) {
    if b == 0 {
        if a <= 0 {
            (0, n)
        } else {
            (0, 0)
        }
    } else if b > 0 {
        (0, n.min((-a).div_euclid(b) + 1))
    } else {
        let nb = -b;
        (0.max((a + nb - 1).div_euclid(nb)), n)
    }
}

/// Computes the static footprints of `model`'s resolved loads (skipping `skip`).
/// Returns the footprints and the loads whose evaluation failed (they are left out).
pub fn compute(
    model: &KernelModel,
    launch: &BoundLaunch,
    gran: Granularity,
    skip: &[bool],
) -> (Footprints, Vec<LoadError>) {
    compute_within(model, launch, gran, skip, u64::MAX)
}

/// Bytes charged per run a job records: the run itself, its share of sorting and class
/// building, and, for a strided run, the intervals it expands to.
fn run_bytes(r: &Run) -> u64 {
    if r.2 == 1 || r.3 <= 1 {
        RUN_BYTES
    } else {
        RUN_BYTES + r.3.saturating_mul(INTERVAL_BYTES)
    }
}
const RUN_BYTES: u64 = 64;
const INTERVAL_BYTES: u64 = 32;

/// How much memory one job may still take: the load's counter and limit.
struct Allowance<'a> {
    spent: &'a AtomicU64,
    limit: u64,
}

/// [`compute`] within `budget` bytes for the footprint work. The first job of every load
/// (its first grid projection) runs with an equal share of the budget; from its size the
/// load's total is estimated (`first x projections`), and loads are admitted in program
/// order while the estimates fit. A load refused, or whose jobs together exceed its
/// allowance (estimate plus an equal share of what is left over), is reported with reason
/// `budget`. Every decision depends only on the inputs, never on the thread count.
pub fn compute_within(
    model: &KernelModel,
    launch: &BoundLaunch,
    gran: Granularity,
    skip: &[bool],
    budget: u64,
) -> (Footprints, Vec<LoadError>) {
    let grid = [
        launch.grid.x as u32,
        launch.grid.y as u32,
        launch.grid.z as u32,
    ];
    let block = [
        launch.block.x as u32,
        launch.block.y as u32,
        launch.block.z as u32,
    ];
    let num_tbs = grid[0] * grid[1] * grid[2];
    let mut plans: Vec<Option<LoadPlan>> = model
        .loads
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if skip.get(i).copied().unwrap_or(false) {
                None
            } else {
                Some(plan(model, s, grid, block))
            }
        })
        .collect();
    group_iterations(&mut plans);
    group_lanes(&mut plans);
    group_rows(&mut plans);
    // Jobs: (load, projection of the grid on the load's dims).
    let mut jobs: Vec<(usize, [u32; 3])> = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        let Some(p) = p else { continue };
        let ext = |d: usize| if p.dims[d] { grid[d] } else { 1 };
        for z in 0..ext(2) {
            for y in 0..ext(1) {
                for x in 0..ext(0) {
                    jobs.push((i, [x, y, z]));
                }
            }
        }
    }
    let deps = all_trip_deps(model);
    let shared = SharedTrips::default();
    let run_job = |j: usize,
                   allow: &Allowance,
                   trips: &mut TripCache,
                   passes: &mut IterPasses|
     -> Result<(WarpRuns, Ranges), String> {
        let (i, key) = jobs[j];
        let p = plans[i].as_ref().ok_or_else(String::new)?;
        eval_load(model, launch, gran, p, key, block, trips, passes, allow)
            .map_err(|e| e.to_string())
    };
    // Per load, its jobs `[first, end)`.
    let mut span = vec![(usize::MAX, 0usize); plans.len()];
    for (j, (i, _)) in jobs.iter().enumerate() {
        if span[*i].0 == usize::MAX {
            span[*i].0 = j;
        }
        span[*i].1 = j + 1;
    }
    let live_loads: Vec<usize> = (0..plans.len())
        .filter(|&i| span[i].0 != usize::MAX)
        .collect();
    let share = budget / (live_loads.len().max(1) as u64);
    let counters: Vec<AtomicU64> = (0..plans.len()).map(|_| AtomicU64::new(0)).collect();
    // Every load's first job is of the grid's first TB: the loads run in one chunk per
    // worker, each chunk on one trip cache and one set of group passes (a group's pass
    // was otherwise run again by each member: module_array's 33 loop-free loads).
    let chunk = live_loads
        .len()
        .div_ceil(rayon::current_num_threads().max(1))
        .max(1);
    let firsts: Vec<Result<(WarpRuns, Ranges), String>> = live_loads
        .par_chunks(chunk)
        .flat_map_iter(|loads| {
            let mut trips = TripCache::new(&deps, &shared);
            let mut passes = IterPasses::default();
            loads
                .iter()
                .map(|&i| {
                    run_job(
                        span[i].0,
                        &Allowance {
                            spent: &counters[i],
                            limit: share,
                        },
                        &mut trips,
                        &mut passes,
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // Admit loads in order while their estimates fit.
    let mut admitted = vec![false; plans.len()];
    let mut estimates = vec![0u64; plans.len()];
    let mut total = 0u64;
    for (&i, r) in live_loads.iter().zip(&firsts) {
        if r.is_err() {
            continue;
        }
        let first = counters[i].load(Ordering::Relaxed);
        let est = first.saturating_mul((span[i].1 - span[i].0) as u64);
        if total.saturating_add(est) <= budget {
            total += est;
            admitted[i] = true;
            estimates[i] = est;
        }
    }
    let slack = (budget - total) / (admitted.iter().filter(|a| **a).count().max(1) as u64);
    // The jobs of one `%ctaid` (one per load) run one after another on one trip cache:
    // the loads of a thread share its loops' counts, which were worked out again per load.
    let mut by_tb: BTreeMap<[u32; 3], Vec<usize>> = BTreeMap::new();
    for (j, (_, key)) in jobs.iter().enumerate() {
        by_tb.entry(*key).or_default().push(j);
    }
    let by_tb: Vec<Vec<usize>> = by_tb.into_values().collect();
    let per_tb: Vec<Vec<(usize, JobResult)>> = by_tb
        .par_iter()
        .map(|js| {
            let mut trips = TripCache::new(&deps, &shared);
            let mut passes = IterPasses::default();
            js.iter()
                .map(|&j| {
                    let i = jobs[j].0;
                    let r = if j == span[i].0 {
                        Ok((Vec::new(), Vec::new()))
                    } else if !admitted[i] {
                        Err(EvalError::Budget.to_string())
                    } else {
                        run_job(
                            j,
                            &Allowance {
                                spent: &counters[i],
                                limit: estimates[i].saturating_add(slack),
                            },
                            &mut trips,
                            &mut passes,
                        )
                    };
                    (j, r)
                })
                .collect()
        })
        .collect();
    let mut results: Vec<Result<(WarpRuns, Ranges), String>> = (0..jobs.len())
        .map(|_| Ok((Vec::new(), Vec::new())))
        .collect();
    for (j, r) in per_tb.into_iter().flatten() {
        results[j] = r;
    }
    for (&i, r) in live_loads.iter().zip(firsts) {
        let j = span[i].0;
        results[j] = match r {
            Ok(w) if admitted[i] => Ok(w),
            Ok(_) => Err(EvalError::Budget.to_string()),
            Err(e) => Err(e),
        };
    }
    // Byte ranges per load, apart from the runs.
    let mut load_ranges: Vec<Vec<(u32, u64, u64)>> = vec![Vec::new(); plans.len()];
    let results: Vec<Result<WarpRuns, String>> = results
        .into_iter()
        .zip(&jobs)
        .map(|(r, (i, _))| {
            r.map(|(w, rs)| {
                for x in rs {
                    merge_ranges(&mut load_ranges[*i], x);
                }
                w
            })
        })
        .collect();
    let mut errors: Vec<LoadError> = Vec::new();
    let mut bad = vec![false; plans.len()];
    for ((i, _), r) in jobs.iter().zip(&results) {
        if let Err(e) = r {
            if !bad[*i] {
                bad[*i] = true;
                errors.push(LoadError {
                    load: *i,
                    error: e.clone(),
                });
            }
        }
    }
    // Per load: key -> result index.
    let mut first_job = vec![usize::MAX; plans.len()];
    for (j, (i, _)) in jobs.iter().enumerate() {
        if first_job[*i] == usize::MAX {
            first_job[*i] = j;
        }
    }
    let live: Vec<usize> = (0..plans.len())
        .filter(|&i| plans[i].is_some() && !bad[i])
        .collect();
    let params: Vec<u32> = {
        let mut ps: Vec<u32> = results
            .iter()
            .flatten()
            .flat_map(|w| w.iter().flat_map(|v| v.iter().map(|r| r.0)))
            .collect();
        ps.sort_unstable();
        ps.dedup();
        ps
    };
    let nwarps = (block[0] * block[1] * block[2]).div_ceil(32) as usize;
    let job_of = |i: usize, tb: u32| -> usize {
        let Some(p) = plans[i].as_ref() else {
            return usize::MAX;
        };
        let c = [
            tb % grid[0],
            (tb / grid[0]) % grid[1],
            tb / (grid[0] * grid[1]),
        ];
        let ext = |d: usize| if p.dims[d] { grid[d] as usize } else { 1 };
        let proj = |d: usize| if p.dims[d] { c[d] as usize } else { 0 };
        first_job[i] + proj(0) + ext(0) * (proj(1) + ext(1) * proj(2))
    };
    let out_params: Vec<ParamFootprint> = params
        .par_iter()
        .map(|&param| {
            // TB class key: the jobs of the loads that touch this parameter.
            let touching: Vec<usize> = live
                .iter()
                .copied()
                .filter(|&i| {
                    let j0 = first_job[i];
                    results[j0..]
                        .iter()
                        .zip(&jobs[j0..])
                        .take_while(|(_, (l, _))| *l == i)
                        .any(|(r, _)| {
                            r.as_ref()
                                .is_ok_and(|w| w.iter().any(|v| v.iter().any(|r| r.0 == param)))
                        })
                })
                .collect();
            let mut index: FxMap<Vec<usize>, usize> = FxMap::default();
            let mut classes: Vec<Class> = Vec::new();
            for tb in 0..num_tbs {
                let key: Vec<usize> = touching.iter().map(|&i| job_of(i, tb)).collect();
                let k = if let Some(&k) = index.get(&key) {
                    k
                } else {
                    let mut warps: Vec<Vec<Run>> = vec![Vec::new(); nwarps];
                    for &j in &key {
                        if let Ok(w) = &results[j] {
                            for (wi, v) in w.iter().enumerate() {
                                warps[wi].extend(v.iter().filter(|r| r.0 == param));
                            }
                        }
                    }
                    let warps: Vec<Vec<Run>> = warps.into_iter().map(normalize_runs).collect();
                    classes.push(class_from_runs(&warps));
                    index.insert(key, classes.len() - 1);
                    classes.len() - 1
                };
                classes[k].members.push(tb);
            }
            classes.retain(|c| !c.units.is_empty());
            let fallback = model
                .loads
                .iter()
                .map(|l| u64::from(l.width))
                .min()
                .unwrap_or(4);
            ParamFootprint {
                param,
                unit_bytes: unit_bytes(gran, launch, param, fallback),
                classes,
            }
        })
        .collect();
    let load_ranges = load_ranges
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            if bad[i] {
                return Vec::new();
            }
            LoadRange::from_merged(v)
        })
        .collect();
    (
        Footprints {
            num_tbs,
            params: out_params,
            load_ranges,
        },
        errors,
    )
}

fn loop_dims(model: &KernelModel, l: LoopId, out: &mut [bool; 3], seen: &mut Vec<LoopId>) {
    if seen.contains(&l) {
        return;
    }
    seen.push(l);
    if let Some(info) = model.loops.get(l.index()) {
        for e in &info.exits {
            expr_dims(model, e, out, seen);
        }
    }
}

fn expr_dims(model: &KernelModel, e: &Expr, out: &mut [bool; 3], seen: &mut Vec<LoopId>) {
    let mut trips = Vec::new();
    e.visit_leaves(&mut |x| match x {
        Expr::Var(Var::Ctaid(d)) => out[usize::from(*d)] = true,
        Expr::Trip(l) => trips.push(*l),
        _ => {}
    });
    for l in trips {
        loop_dims(model, l, out, seen);
    }
}

/// Interval of `e` over every thread of the launch (`None`: not bounded by this simple
/// interval arithmetic).
fn interval(e: &Expr, grid: [u32; 3], block: [u32; 3]) -> Option<(i128, i128)> {
    Some(match e {
        Expr::Const(c) => (*c, *c),
        Expr::Var(Var::Tid(d)) => (0, i128::from(block[usize::from(*d)]) - 1),
        Expr::Var(Var::Ctaid(d)) => (0, i128::from(grid[usize::from(*d)]) - 1),
        Expr::Add(a, b) => {
            let (x, y) = (interval(a, grid, block)?, interval(b, grid, block)?);
            (x.0.checked_add(y.0)?, x.1.checked_add(y.1)?)
        }
        Expr::Sub(a, b) => {
            let (x, y) = (interval(a, grid, block)?, interval(b, grid, block)?);
            (x.0.checked_sub(y.1)?, x.1.checked_sub(y.0)?)
        }
        Expr::Mul(a, b) => {
            let (x, y) = (interval(a, grid, block)?, interval(b, grid, block)?);
            let c = [
                x.0.checked_mul(y.0)?,
                x.0.checked_mul(y.1)?,
                x.1.checked_mul(y.0)?,
                x.1.checked_mul(y.1)?,
            ];
            (*c.iter().min()?, *c.iter().max()?)
        }
        Expr::Ext { bits, signed, e } => {
            let x = interval(e, grid, block)?;
            if ext_value(x.0, *bits, *signed) == x.0 && ext_value(x.1, *bits, *signed) == x.1 {
                x
            } else {
                return None;
            }
        }
        Expr::Cmp(r, a, b) => {
            let (x, y) = (interval(a, grid, block)?, interval(b, grid, block)?);
            let always = match r {
                Rel::Lt => x.1 < y.0,
                Rel::Le => x.1 <= y.0,
                Rel::Gt => x.0 > y.1,
                Rel::Ge => x.0 >= y.1,
                _ => false,
            };
            if always {
                (1, 1)
            } else {
                (0, 1)
            }
        }
        Expr::And(a, b) => {
            let (x, y) = (interval(a, grid, block)?, interval(b, grid, block)?);
            (x.0.min(y.0).min(1), 1)
        }
        _ => return None,
    })
}

/// When load `s`'s address is affine in its innermost loop's counter and none of the guards
/// `inner` mentions that counter: the coefficient (free of the counter) and the extensions
/// the affine form crosses, which must hold over the loop for it to be exact. The
/// footprints and the point walks (`reuse::WalkPlan`) step such loops instead of
/// evaluating every iteration.
pub(crate) fn innermost_affine<'a>(
    s: &LoadSite,
    inner: impl Iterator<Item = &'a E>,
) -> Option<InnerAffine> {
    let k = Var::Iter(*s.loops.last()?);
    let dep = |x: &Expr| matches!(x, Expr::Var(v) if *v == k) || matches!(x, Expr::Trip(_));
    let mut obl = Vec::new();
    let coef = linear_coef(&s.addr, k, &mut obl, &dep)?;
    let (with_k, free): (Vec<&E>, Vec<&E>) = inner.partition(|c| mentions(c, k));
    let (conj_free, lits) = split_affine(with_k.into_iter(), k, &dep)?;
    let free = free.into_iter().cloned().chain(conj_free).collect();
    Some(InnerAffine {
        coef,
        obl,
        free,
        lits,
    })
}

/// A load's address and guards as affine functions of its innermost loop's counter, so that
/// the walks visit the iterations where the guards hold as one stepped run.
#[derive(Debug)]
pub(crate) struct InnerAffine {
    /// The address's coefficient, and the extensions it crosses.
    pub(crate) coef: E,
    pub(crate) obl: Vec<Obligation>,
    /// Guards (and guard literals) free of the counter.
    pub(crate) free: Vec<E>,
    /// Guard literals affine in the counter: they hold on one interval of iterations.
    pub(crate) lits: Vec<AffineLit>,
}

impl InnerAffine {
    /// Every expression the walks evaluate.
    pub(crate) fn roots(&self) -> impl Iterator<Item = &E> {
        std::iter::once(&self.coef)
            .chain(self.obl.iter().map(|o| &o.e))
            .chain(&self.free)
            .chain(
                self.lits
                    .iter()
                    .flat_map(|(_, d, c, o)| [d, c].into_iter().chain(o.iter().map(|o| &o.e))),
            )
    }
}

fn plan<'a>(model: &KernelModel, s: &'a LoadSite, grid: [u32; 3], block: [u32; 3]) -> LoadPlan<'a> {
    let mut dims = [false; 3];
    let mut seen = Vec::new();
    // Guard literals true for every thread of the launch are dropped: they would only tie
    // the footprint to more grid dimensions.
    let cond: Vec<E> = s
        .cond
        .iter()
        .filter(|c| interval(c, grid, block) != Some((1, 1)))
        .cloned()
        .collect();
    expr_dims(model, &s.addr, &mut dims, &mut seen);
    for c in &cond {
        expr_dims(model, c, &mut dims, &mut seen);
    }
    for l in &s.loops {
        loop_dims(model, *l, &mut dims, &mut seen);
    }
    let mentions_iter = |e: &Expr| {
        let mut m = false;
        e.visit_leaves(&mut |x| m |= matches!(x, Expr::Var(Var::Iter(_))));
        m
    };
    let (inner_conds, outer_conds): (Vec<E>, Vec<E>) =
        cond.into_iter().partition(|c| mentions_iter(c));
    let inner_affine = innermost_affine(s, inner_conds.iter());
    let all: Vec<E> = outer_conds.iter().chain(&inner_conds).cloned().collect();
    let lanes = lane_plan(s, &all);
    let mut roots: Vec<&E> = vec![&s.addr];
    roots.extend(&all);
    if let Some(ia) = &inner_affine {
        roots.extend(ia.roots());
    }
    if let Some(lp) = &lanes {
        roots.push(&lp.coef);
        roots.extend(lp.obl.iter().map(|o| &o.e));
        roots.extend(&lp.free);
        for (_, d, c, obl) in &lp.affine {
            roots.push(d);
            roots.push(c);
            roots.extend(obl.iter().map(|o| &o.e));
        }
    }
    let tape = Tape::new(roots);
    let tape_thread_only = tape.thread_only();
    // Not where a node solves a trip count or steps a recurrence: evaluated eagerly, in a
    // branch a lane does not take, that could cost a walk of millions of iterations.
    let node = |e: &E| tape.node(e).expect("compiled root");
    let lane_roots: Option<Vec<u32>> = (s.loops.is_empty() && tape.is_cheap()).then(|| {
        std::iter::once(&s.addr)
            .chain(&outer_conds)
            .chain(&inner_conds)
            .map(node)
            .collect()
    });
    let iter_tape = (!s.loops.is_empty())
        .then(|| Tape::new(std::iter::once(&s.addr).chain(&inner_conds)))
        .filter(|t| t.is_cheap_in(&s.loops))
        .map(|t| {
            let nodes = std::iter::once(&s.addr)
                .chain(&inner_conds)
                .map(|e| t.node(e).expect("compiled root"))
                .collect();
            (t, nodes)
        });
    let outer_recs = match (&iter_tape, s.loops.first()) {
        (Some((t, _)), Some(&l0)) => t.recs().into_iter().filter(|r| r.l == l0).collect(),
        _ => Vec::new(),
    };
    // Recurrences stay with the thread-by-thread walk, which steps them along iterations
    // (one history lookup for a chunk of them) rather than along lanes.
    let row = (!s.loops.is_empty()
        && iter_tape.is_some()
        && tape.is_cheap_in(&s.loops)
        && tape.recs().is_empty())
    .then(|| Tape::new(&outer_conds))
    .filter(Tape::is_cheap)
    .map(|outer| RowPlan {
        outer_nodes: outer_conds
            .iter()
            .map(|e| outer.node(e).expect("compiled root"))
            .collect(),
        outer,
    });
    LoadPlan {
        site: s,
        dims,
        inner_affine,
        outer_conds,
        inner_conds,
        lanes,
        tape,
        lane_roots,
        iter_thread_only: iter_tape
            .as_ref()
            .map_or(Vec::new(), |(t, _)| t.thread_only()),
        tape_thread_only,
        iter_tape,
        iter_group: None,
        lane_group: None,
        row_group: None,
        outer_recs,
        row,
    }
}

/// A load's group ([`IterGroup`]) and its place among the members.
type Membership = (std::sync::Arc<IterGroup>, usize);

/// Loads whose lane passes are evaluated together, compiled into one tape: the loads of one
/// loop nest along their innermost iterations ([`LoadPlan::iter_tape`],
/// [`group_iterations`]) or along a warp row ([`RowWalk::leaf`]), a kernel's loop-free
/// loads along a warp ([`group_lanes`]), the guards outside the loops of loads walked by
/// rows ([`group_rows`]). A TB's jobs walk its loads one after the other; the first load of
/// a group to reach a pass's place evaluates the whole group there once and keeps every
/// member's answer ([`IterPasses`]) for the others. An unrolled loop's loads read each
/// other's values: mirror_boundary's fourth load reflects its index three times,
/// recomputing the first three loads' reflections.
struct IterGroup {
    tape: Tape,
    /// Per member, its address and guard nodes (address first); a row group's members'
    /// guard nodes alone.
    members: Vec<Vec<u32>>,
}

/// The group of `loads` (two or more), each member's roots given by `roots`, compiled into
/// one tape, set in each member's slot (`slot`) with its place; nothing when the joined
/// tape is not `cheap` to evaluate eagerly.
fn join_group<'a>(
    plans: &mut [Option<LoadPlan<'a>>],
    loads: &[usize],
    roots: impl Fn(&LoadPlan) -> Vec<E>,
    cheap: impl Fn(&Tape) -> bool,
    slot: for<'p> fn(&'p mut LoadPlan<'a>) -> &'p mut Option<Membership>,
) {
    if loads.len() < 2 {
        return;
    }
    let member_roots: Vec<Vec<E>> = loads
        .iter()
        .filter_map(|&i| plans[i].as_ref().map(&roots))
        .collect();
    let tape = Tape::new(member_roots.iter().flatten());
    if !cheap(&tape) {
        return;
    }
    let members = member_roots
        .iter()
        .map(|rs| {
            rs.iter()
                .map(|e| tape.node(e).expect("compiled root"))
                .collect()
        })
        .collect();
    let g = std::sync::Arc::new(IterGroup { tape, members });
    for (pos, &i) in loads.iter().enumerate() {
        if let Some(p) = plans[i].as_mut() {
            *slot(p) = Some((g.clone(), pos));
        }
    }
}

/// Joins the loads of `plans` that lie in the same loops and have an iteration pass into
/// [`IterGroup`]s (groups of two or more).
fn group_iterations(plans: &mut [Option<LoadPlan>]) {
    let mut by_nest: BTreeMap<Vec<LoopId>, Vec<usize>> = BTreeMap::new();
    for (i, p) in plans.iter().enumerate() {
        if let Some(p) = p.as_ref().filter(|p| p.iter_tape.is_some()) {
            by_nest.entry(p.site.loops.clone()).or_default().push(i);
        }
    }
    for (loops, loads) in by_nest {
        join_group(
            plans,
            &loads,
            |p| {
                std::iter::once(&p.site.addr)
                    .chain(&p.inner_conds)
                    .cloned()
                    .collect()
            },
            |t| t.is_cheap_in(&loops),
            |p| &mut p.iter_group,
        );
    }
}

/// Joins the loop-free loads of `plans` whose warp lanes a pass evaluates
/// ([`LoadPlan::lane_roots`]) into one [`IterGroup`] (of two or more), evaluated along the
/// warp's threads: a stencil's loads share their index arithmetic and guards (jacobi3d's
/// seven loads each evaluated the same tape of the thread's coordinates, where the
/// interpreter computes them once).
fn group_lanes(plans: &mut [Option<LoadPlan>]) {
    let loads: Vec<usize> = (0..plans.len())
        .filter(|&i| plans[i].as_ref().is_some_and(|p| p.lane_roots.is_some()))
        .collect();
    join_group(
        plans,
        &loads,
        |p| {
            std::iter::once(&p.site.addr)
                .chain(&p.outer_conds)
                .chain(&p.inner_conds)
                .cloned()
                .collect()
        },
        Tape::is_cheap,
        |p| &mut p.lane_group,
    );
}

/// Joins the guards outside the loops of the loads that walk warp rows together
/// ([`RowPlan`]) into one [`IterGroup`] (of two or more; a member's nodes are its guards),
/// evaluated along a row's threads: nvcc's guards repeat the conditions of every path to
/// the load (scalar_prod's fourteen loads each evaluated the unrolled prologue's selects on
/// `%tid.x` for every row).
fn group_rows(plans: &mut [Option<LoadPlan>]) {
    let loads: Vec<usize> = (0..plans.len())
        .filter(|&i| {
            plans[i]
                .as_ref()
                .and_then(|p| p.row.as_ref())
                .is_some_and(|rp| !rp.outer_nodes.is_empty())
        })
        .collect();
    join_group(
        plans,
        &loads,
        |p| p.outer_conds.clone(),
        Tape::is_cheap,
        |p| &mut p.row_group,
    );
}

/// Most addresses [`IterPasses`] keeps for one TB (4 MiB).
const ITER_PASS_VALUES: usize = 1 << 18;

/// Deepest loop nest whose passes [`IterPasses`] keeps (its key holds the iterations).
const ITER_PASS_DEPTH: usize = 4;

/// A group pass's place: the group's address, what its lanes differ in ([`axis_tag`]), the
/// (first lane's) thread, the iterations of the group's loops (the innermost one's the
/// chunk's first; -1 past the nest's depth) and the chunk's lanes.
type PassKey = (usize, u8, [i128; 3], [i128; ITER_PASS_DEPTH], usize);

/// [`PassKey`]'s tag of a lane axis: a pass along a loop's iterations and one along a
/// row's threads from the same thread and iteration are different passes.
fn axis_tag(axis: LaneAxis) -> u8 {
    match axis {
        LaneAxis::Iter(_) => 0,
        LaneAxis::Tid => 1,
        LaneAxis::Threads(_) => 2,
    }
}

/// [`PassKey`]'s tag of a pass over a row's guards outside the loops
/// ([`TbWalk::group_mask`]).
const ROW_GUARDS_TAG: u8 = 3;

/// The group passes of one TB's jobs ([`IterGroup`]): per pass, each member's count of
/// kept lanes followed by their addresses (the lanes whose guards hold, in lane order),
/// member after member, or for a row group each member's mask of lanes
/// ([`TbWalk::group_mask`]); `None` where the group's pass failed (each load then runs its
/// own).
#[derive(Default)]
pub(crate) struct IterPasses {
    entries: FxMap<PassKey, Option<Box<[i128]>>>,
    values: usize,
}

/// What a loop's trip count depends on: thread coordinates, TB coordinates and the
/// iterations of other loops (everything else in it is fixed by the launch).
#[derive(Clone, Debug, Default)]
pub(crate) struct TripDeps {
    tid: [bool; 3],
    ctaid: [bool; 3],
    iters: Vec<LoopId>,
}

/// [`TripDeps`] of every loop of `model`, by loop index: what its exits' decisive
/// conjuncts ([`crate::ivs::TripPlan::decisive`]) read. nvcc's exits carry the condition of
/// every path to the latch (scalar_prod's outer loop: 60 nodes of `%tid.x` that are always
/// true beside `v >= n`); left in, they made a per-TB count per-thread.
pub(crate) fn all_trip_deps(model: &KernelModel) -> Vec<TripDeps> {
    (0..model.loops.len())
        .map(|l| {
            let mut d = TripDeps::default();
            trip_deps(model, LoopId(l as u32), &mut d, &mut Vec::new());
            d
        })
        .collect()
}

fn trip_deps(model: &KernelModel, l: LoopId, out: &mut TripDeps, seen: &mut Vec<LoopId>) {
    if seen.contains(&l) {
        return;
    }
    seen.push(l);
    let mut trips = Vec::new();
    for e in &model.trip_plan(l).decisive {
        e.visit_leaves(&mut |x| match x {
            Expr::Var(Var::Tid(d)) => out.tid[usize::from(*d)] = true,
            Expr::Var(Var::Ctaid(d)) => out.ctaid[usize::from(*d)] = true,
            Expr::Var(Var::Iter(q)) if *q != l && !out.iters.contains(q) => out.iters.push(*q),
            Expr::Trip(q) => trips.push(*q),
            _ => {}
        });
    }
    for q in trips {
        trip_deps(model, q, out, seen);
    }
}

/// Trip counts that depend on no `%ctaid`, shared by every TB (and every load) of one
/// walk: a thread-strided loop's count is the same function of `%tid` in every TB, and
/// working it out again per TB and per load was most of the footprints' time on such
/// kernels (scalar_prod: 14 loads x 16 TBs x 256 threads closed forms for 256 values).
/// Its keys are those of one TB's [`TripCache`], so it holds no more than one TB's counts.
#[derive(Debug, Default)]
pub(crate) struct SharedTrips(std::sync::Mutex<FxMap<u32, TripMemo>>);

/// Trip counts of one loop by the values they depend on ([`TripDeps`] order). Keyed by a
/// boxed slice so that a lookup borrows the caller's key buffer instead of allocating one
/// (a lookup per thread and loop entry: scalar_prod makes a million).
type TripMemo = FxMap<Box<[i128]>, i128>;

impl SharedTrips {
    fn get(&self, l: u32, k: &[i128]) -> Option<i128> {
        // A poisoned lock only means another walk panicked; the counts in it are still
        // right (each is inserted whole).
        let m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        m.get(&l)?.get(k).copied()
    }

    fn insert(&self, l: u32, k: &[i128], t: i128) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        m.entry(l).or_default().insert(k.into(), t);
    }
}

/// A warp row's trip count's place ([`TripCache::row_trip`]): the loop, the first thread,
/// the lanes and the iterations the count reads.
type RowTripKey = (u32, [i128; 3], u32, Vec<i128>);

/// Trip counts of one job, memoised on the values they depend on; those that depend on no
/// `%ctaid` also in the walk's [`SharedTrips`].
pub(crate) struct TripCache<'a> {
    deps: &'a [TripDeps],
    /// By loop index.
    memo: Vec<TripMemo>,
    /// [`TripCache::row_trip`]'s answers.
    rows: FxMap<RowTripKey, Option<i128>>,
    shared: &'a SharedTrips,
    /// The key being looked up (reused).
    key: Vec<i128>,
}

impl<'a> TripCache<'a> {
    /// An empty cache over `deps` ([`all_trip_deps`]) in front of `shared`.
    pub(crate) fn new(deps: &'a [TripDeps], shared: &'a SharedTrips) -> Self {
        TripCache {
            deps,
            memo: (0..deps.len()).map(|_| TripMemo::default()).collect(),
            rows: FxMap::default(),
            shared,
            key: Vec::new(),
        }
    }

    /// Forgets the counts of this cache (the `%ctaid` changed); the shared ones stay.
    pub(crate) fn clear(&mut self) {
        self.memo.iter_mut().for_each(FxMap::clear);
        self.rows.clear();
    }

    /// The trip count of loop `l` that the lanes of `mask` of the warp row from `cx`
    /// (lane `k` is `%tid.x + k`) share, or `None` when they differ; the error of the first
    /// lane (in lane order, up to the first that differs) that has one. Remembered per row:
    /// the loads of one loop nest asked it lane by lane, each of them.
    pub(crate) fn row_trip(
        &mut self,
        model: &KernelModel,
        l: LoopId,
        cx: &mut Ctx,
        mask: u32,
    ) -> Result<Option<i128>, EvalError> {
        let iters: Vec<i128> = self.deps.get(l.index()).map_or(Vec::new(), |d| {
            d.iters
                .iter()
                .map(|q| cx.iters[q.index()].unwrap_or(-1))
                .collect()
        });
        let key = (l.index() as u32, cx.tid, mask, iters);
        if let Some(&t) = self.rows.get(&key) {
            return Ok(t);
        }
        let x0 = cx.tid[0];
        let mut t = None;
        for lane in (0..32).filter(|&k| mask & (1 << k) != 0) {
            cx.tid[0] = x0 + lane;
            let tl = self.trip(model, l, cx);
            cx.tid[0] = x0;
            match (tl?, t) {
                (tl, None) => t = Some(tl),
                (tl, Some(t0)) if tl == t0 => {}
                _ => {
                    t = None;
                    break;
                }
            }
        }
        self.rows.insert(key, t);
        Ok(t)
    }

    /// Whether loop `l`'s trip count may differ between threads of one warp row (it reads
    /// `%tid.x`).
    pub(crate) fn varies_along_x(&self, l: LoopId) -> bool {
        self.deps.get(l.index()).is_none_or(|d| d.tid[0])
    }

    /// The trip count of loop `l` in `cx`.
    pub(crate) fn trip(
        &mut self,
        model: &KernelModel,
        l: LoopId,
        cx: &Ctx,
    ) -> Result<i128, EvalError> {
        let (Some(d), Some(memo)) = (self.deps.get(l.index()), self.memo.get_mut(l.index())) else {
            return model.trip(l, cx);
        };
        if model.trip_plan(l).table(model).is_some() {
            // The launch's table answers faster than the memo's hashed keys.
            return model.trip(l, cx);
        }
        let key = &mut self.key;
        key.clear();
        key.extend((0..3).filter(|&i| d.tid[i]).map(|i| cx.tid[i]));
        key.extend(d.iters.iter().map(|q| cx.iters[q.index()].unwrap_or(-1)));
        let per_tb = d.ctaid.contains(&true);
        let li = l.index() as u32;
        if let Some(&t) = memo.get(&key[..]) {
            return Ok(t);
        }
        if !per_tb {
            if let Some(t) = self.shared.get(li, key) {
                memo.insert(key[..].into(), t);
                return Ok(t);
            }
        }
        let t = model.trip(l, cx)?;
        if !per_tb {
            self.shared.insert(li, key, t);
        }
        memo.insert(key[..].into(), t);
        Ok(t)
    }
}

/// One run of units of a parameter: `(param, start, stride, count)`; with `stride == 1`
/// the interval `[start, start + count)`, else the points `start + k * stride`, `k < count`.
type Run = (u32, u64, u64, u64);

/// Per warp of one TB, the runs one load reads (sorted, deduplicated, stride-1 runs merged).
type WarpRuns = Vec<Vec<Run>>;
/// Byte ranges `(data structure, lo, hi)` one evaluation read.
type Ranges = Vec<(u32, u64, u64)>;
/// What one job (one load in one TB) gives: its runs and byte ranges, or why not.
type JobResult = Result<(WarpRuns, Ranges), String>;

/// Sorts and deduplicates runs, merging overlapping or adjacent intervals of one parameter.
fn normalize_runs(mut rs: Vec<Run>) -> Vec<Run> {
    for r in &mut rs {
        if r.3 <= 1 {
            r.2 = 1;
        }
    }
    rs.sort_unstable();
    rs.dedup();
    let (mut ivs, pts): (Vec<Run>, Vec<Run>) = rs.into_iter().partition(|r| r.2 == 1);
    let mut out: Vec<Run> = Vec::with_capacity(ivs.len() + pts.len());
    for (p, a, _, n) in ivs.drain(..) {
        match out.last_mut() {
            Some(l) if l.0 == p && a <= l.1 + l.3 => l.3 = l.3.max(a + n - l.1),
            _ => out.push((p, a, 1, n)),
        }
    }
    out.extend(pts);
    out.sort_unstable();
    out
}

/// Appends the units of `r` as intervals.
fn expand(r: &Run, out: &mut Vec<Interval>) {
    let &(_, a, st, n) = r;
    if st == 1 {
        out.push((a, a + n));
    } else {
        out.extend((0..n).map(|k| (a + k * st, a + k * st + 1)));
    }
}

/// The class of one TB for one parameter from the runs of each warp: units, and units read
/// by two or more warps. A run read by several warps is expanded once.
fn class_from_runs(warps: &[Vec<Run>]) -> Class {
    let mut all: Vec<(&Run, u32)> = Vec::new();
    for (w, rs) in warps.iter().enumerate() {
        all.extend(rs.iter().map(|r| (r, w as u32)));
    }
    all.sort_unstable();
    // Runs of several warps (counted twice) and runs of one warp (by warp).
    let mut multi: Vec<Interval> = Vec::new();
    let mut single: Vec<(u32, &Run)> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let mut j = i + 1;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        if j - i >= 2 {
            expand(all[i].0, &mut multi);
        } else {
            single.push((all[i].1, all[i].0));
        }
        i = j;
    }
    let multi = normalize(multi);
    let mut units = multi.clone();
    let multi_warp = if single.is_empty() {
        multi
    } else {
        single.sort_unstable();
        let mut lists: Vec<Vec<Interval>> = vec![multi.clone(), multi];
        let mut k = 0;
        while k < single.len() {
            let w = single[k].0;
            let mut v = Vec::new();
            while k < single.len() && single[k].0 == w {
                expand(single[k].1, &mut v);
                k += 1;
            }
            let v = normalize(v);
            units.extend_from_slice(&v);
            lists.push(v);
        }
        units = normalize(units);
        covered_twice(&lists)
    };
    Class {
        units,
        multi_warp,
        members: Vec::new(),
    }
}

struct Sink<'a> {
    launch: &'a BoundLaunch,
    gran: Granularity,
    width: u64,
    runs: Vec<Vec<Run>>,
    warp: usize,
    allow: &'a Allowance<'a>,
    /// Bytes recorded since the last [`Sink::flush`].
    pending: u64,
    /// Bytes read per data structure (`NO_BUFFER` for addresses in none).
    ranges: Vec<(u32, u64, u64)>,
}

impl Sink<'_> {
    fn push(&mut self, r: Run) -> Result<(), EvalError> {
        self.pending += run_bytes(&r);
        self.runs[self.warp].push(r);
        if self.pending >= 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }
    /// Charges the pending bytes to the load's allowance.
    fn flush(&mut self) -> Result<(), EvalError> {
        let now = self.allow.spent.fetch_add(self.pending, Ordering::Relaxed) + self.pending;
        self.pending = 0;
        if now > self.allow.limit {
            return Err(EvalError::Budget);
        }
        Ok(())
    }
    fn unit_of(&self, a: i128) -> Result<(u32, u64, u64), EvalError> {
        let Ok(addr) = u64::try_from(a) else {
            return Err(EvalError::Unknown(Reason::Unsupported(format!(
                "address {a:#x} outside the 64-bit address space"
            ))));
        };
        // The data structure that contains the address, or none (`NO_BUFFER`, the offset
        // is then the address itself).
        let Some((p, off)) = self.launch.buffer_at(addr) else {
            return Ok((NO_BUFFER, 1, addr));
        };
        let ub = unit_bytes(self.gran, self.launch, p as u32, self.width);
        Ok((p as u32, ub, off))
    }
    /// Records accesses at the addresses `vals` (up to a warp's worth of one thread's
    /// iterations), in any order. A footprint is a set, so the values are sorted, deduplicated
    /// and recorded as arithmetic runs ([`Sink::ap`]): mirror_boundary's reflecting index is
    /// one or two runs per 32 iterations where it was 32 points. A run whose ends are not in
    /// one buffer (or in none) is recorded point by point, as is every value when one is
    /// outside the address space (the error then names the same address as a walk in
    /// iteration order would).
    fn points(&mut self, vals: &mut [i128]) -> Result<(), EvalError> {
        if vals.len() < 3 || vals.iter().any(|&a| u64::try_from(a).is_err()) {
            return vals.iter().try_for_each(|&a| self.ap(a, 0, 1));
        }
        let buffer = |a: i128| {
            u64::try_from(a)
                .ok()
                .and_then(|a| self.launch.buffer_at(a))
                .map(|b| b.0)
        };
        // Already one non-decreasing run in the order given (a warp row's consecutive
        // elements, an address every lane shares): what the sort below would find.
        let (a0, last) = (vals[0], vals[vals.len() - 1]);
        let c = vals[1] - a0;
        if c >= 0 && vals.windows(2).all(|w| w[1] - w[0] == c) {
            if c == 0 {
                return self.ap(a0, 0, 1);
            }
            if buffer(a0).is_some() && buffer(a0) == buffer(last + self.width as i128 - 1) {
                return self.ap(a0, c, vals.len() as i128);
            }
        }
        vals.sort_unstable();
        let mut m = 1;
        for i in 1..vals.len() {
            if vals[i] != vals[m - 1] {
                vals[m] = vals[i];
                m += 1;
            }
        }
        let v = &vals[..m];
        let mut i = 0;
        while i < m {
            let mut j = i + 1;
            if j < m {
                let c = v[j] - v[i];
                while j + 1 < m && v[j + 1] - v[j] == c {
                    j += 1;
                }
                j += 1;
            }
            // `v[i .. j]` is one arithmetic run.
            let (a0, last) = (v[i], v[j - 1]);
            let end = last + self.width as i128 - 1;
            if j - i > 1 && buffer(a0).is_some() && buffer(a0) == buffer(end) {
                let c = v[i + 1] - a0;
                self.ap(a0, c, (j - i) as i128)?;
            } else {
                v[i..j].iter().try_for_each(|&a| self.ap(a, 0, 1))?;
            }
            i = j;
        }
        Ok(())
    }

    /// Records accesses at `a0 + c*k`, `k` in `[0, t)`.
    fn ap(&mut self, a0: i128, c: i128, t: i128) -> Result<(), EvalError> {
        if t <= 0 {
            return Ok(());
        }
        let (a0, c) = if c < 0 {
            (a0 + c * (t - 1), -c)
        } else {
            (a0, c)
        };
        let (p, ub, off0) = self.unit_of(a0)?;
        let last = a0 + c * (t - 1) + self.width as i128 - 1;
        let (p1, _, off1) = self.unit_of(last)?;
        if p1 != p {
            return Err(EvalError::Unknown(Reason::Straddle));
        }
        merge_ranges(&mut self.ranges, (p, off0, off1 + 1));
        if p == NO_BUFFER {
            return Ok(());
        }
        let base = u64::from(p) << PARAM_SHIFT;
        // Units an access covers beyond its first, and the units one step moves.
        let span = (off0 + self.width - 1) / ub - off0 / ub;
        let stride = c as u64 / ub;
        // Steps no longer than the units an access covers leave no gap: one interval (a
        // warp's 4-byte elements at 1-byte units is one interval, not four strided runs).
        let gapless = c as u64 <= ub || ((c as u64).is_multiple_of(ub) && stride <= span + 1);
        if t == 1 || c == 0 || gapless {
            self.push((p, base + off0 / ub, 1, off1 / ub - off0 / ub + 1))?;
        } else if (c as u64).is_multiple_of(ub) {
            for s in 0..=span {
                self.push((p, base + off0 / ub + s, stride, t as u64))?;
            }
        } else {
            for k in 0..t {
                let a = a0 + c * k;
                let (_, _, o) = self.unit_of(a)?;
                let o1 = o + self.width - 1;
                self.push((p, base + o / ub, 1, o1 / ub - o / ub + 1))?;
            }
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn eval_load(
    model: &KernelModel,
    launch: &BoundLaunch,
    gran: Granularity,
    p: &LoadPlan,
    key: [u32; 3],
    block: [u32; 3],
    trips: &mut TripCache,
    passes: &mut IterPasses,
    allow: &Allowance,
) -> Result<(WarpRuns, Ranges), EvalError> {
    let nthreads = (block[0] * block[1] * block[2]) as usize;
    let nwarps = nthreads.div_ceil(32);
    let sink = Sink {
        launch,
        gran,
        width: u64::from(p.site.width),
        runs: vec![Vec::new(); nwarps],
        warp: 0,
        allow,
        pending: 0,
        ranges: Vec::new(),
    };
    let mut w = TbWalk {
        model,
        p,
        sink,
        trips,
        passes,
        ev: Evaluator::new(&p.tape),
        le: LaneEval::with_values(LANE_VALS.with(|v| v.take())),
    };
    let mut cx = Ctx::new(model.loops.len());
    cx.ctaid = [i128::from(key[0]), i128::from(key[1]), i128::from(key[2])];
    let mut t = 0u32;
    while t < nthreads as u32 {
        cx.tid = [
            i128::from(t % block[0]),
            i128::from((t / block[0]) % block[1]),
            i128::from(t / (block[0] * block[1])),
        ];
        w.sink.warp = (t / 32) as usize;
        // The lanes of this warp in this row of the block.
        let n = (block[0] - t % block[0]).min(32 - t % 32);
        if let Some([addr, conds @ ..]) = p.lane_roots.as_deref() {
            // A loop-free load: the values of every lane of the warp from here on in one
            // pass (across the rows of a block narrower than a warp). They make the same
            // decisions, row by row, as the lanes' affine view and the walk below, which
            // evaluate them lane by lane (and are used where the pass meets an error).
            let warp_lanes = (32 - t % 32).min(nthreads as u32 - t);
            let axis = LaneAxis::Threads(block);
            // The pass of the kernel's loop-free loads together, run by the first of them
            // to reach this warp in this TB; a footprint is a set, so the kept addresses
            // are recorded as the runs they form.
            if let Some(g) = p.lane_group.as_ref().filter(|_| warp_lanes > 1) {
                if w.record_group(g, axis, warp_lanes as usize, &cx)? {
                    t += warp_lanes;
                    continue;
                }
            }
            if warp_lanes > 1 && w.le.run(&p.tape, axis, warp_lanes as usize, &cx, model) {
                let node = |e: &E| p.tape.node(e).expect("compiled root");
                let le = &w.le;
                let mut off = 0;
                while off < warp_lanes {
                    let n = (block[0] - (t + off) % block[0]).min(warp_lanes - off);
                    let lane = |l: i128| (off as i128 + l) as usize;
                    let run = match &p.lanes {
                        Some(lp) => lanes_with(p, lp, i128::from(n), &mut w.sink, &mut |e, l| {
                            Ok(le.value(node(e), lane(l)))
                        })?,
                        None => false,
                    };
                    if !run {
                        for l in 0..i128::from(n) {
                            if conds.iter().all(|&c| le.value(c, lane(l)) != 0) {
                                w.sink.ap(le.value(*addr, lane(l)), 0, 1)?;
                            }
                        }
                    }
                    off += n;
                }
                t += warp_lanes;
                continue;
            }
        }
        if let Some(lp) = &p.lanes {
            let x0 = cx.tid[0];
            let ev = &mut w.ev;
            let run = lanes_with(p, lp, i128::from(n), &mut w.sink, &mut |e, l| {
                cx.tid[0] = x0 + l;
                let v = ev.eval(e, &cx, model);
                cx.tid[0] = x0;
                v
            })?;
            if run {
                t += n;
                continue;
            }
        }
        if let Some(rp) = p.row.as_ref().filter(|_| n > 1) {
            if (RowWalk { n: n as usize }).run(rp, &mut cx, &mut w)? {
                t += n;
                continue;
            }
        }
        // At the start of a warp row: its lanes' recurrences stepped together, to the most
        // iterations any of them runs (the walks below read the states).
        if (t.is_multiple_of(32) || t.is_multiple_of(block[0])) && n > 1 && !p.outer_recs.is_empty()
        {
            let l0 = p.site.loops[0];
            let x0 = cx.tid[0];
            let most = (0..i128::from(n)).try_fold(0i128, |m, l| {
                cx.tid[0] = x0 + l;
                w.trips.trip(model, l0, &cx).map(|t| m.max(t))
            });
            cx.tid[0] = x0;
            if let Ok(most) = most {
                for r in &p.outer_recs {
                    prestep_lanes(r, n as usize, most - 1, &cx, model);
                }
            }
        }
        t += 1;
        let mut ok = true;
        for c in &p.outer_conds {
            if w.ev.eval(c, &cx, model)? == 0 {
                ok = false;
                break;
            }
        }
        if ok {
            w.walk(0, &mut cx)?;
        }
    }
    let TbWalk { mut sink, le, .. } = w;
    LANE_VALS.with(|v| *v.borrow_mut() = le.into_values());
    sink.flush()?;
    Ok((
        sink.runs.into_iter().map(normalize_runs).collect(),
        sink.ranges,
    ))
}

/// The walk of the lanes of one warp row together, for a load with a [`RowPlan`]: their
/// guards outside the loops, their trip counts and, in the innermost loop, their affine runs
/// or addresses, each in one pass over the lanes (`LaneAxis::Tid`) where the thread-by-thread
/// [`TbWalk::walk`] evaluates lane after lane. The lanes walk together while their trip counts
/// agree; from a loop where they differ, or where a pass meets an error, each lane walks on
/// its own ([`TbWalk::walk`], which then decides and reports exactly as it does for any thread).
struct RowWalk {
    /// Lanes in the row; lane `l` is the context's thread with `%tid.x` increased by `l`.
    n: usize,
}

/// The lanes of a row still walked together, a bit each.
type LaneMask = u32;

/// The lanes set in `m`, lowest first.
fn lanes_of(m: LaneMask) -> impl Iterator<Item = usize> {
    (0..LANES).filter(move |&l| m & (1 << l) != 0)
}

impl RowWalk {
    /// Every lane of the row.
    fn all_lanes(&self) -> LaneMask {
        if self.n >= LANES {
            LaneMask::MAX
        } else {
            (1 << self.n) - 1
        }
    }

    /// Walks the row with `cx` at its first lane. `false`, with nothing recorded, when it
    /// cannot start (a pass over the guards fails) or meets an error other than the budget:
    /// the caller then walks the row thread by thread, which reports what it must.
    fn run(&self, rp: &RowPlan, cx: &mut Ctx, w: &mut TbWalk) -> Result<bool, EvalError> {
        let mut mask = self.all_lanes();
        let shared =
            w.p.row_group
                .as_ref()
                .and_then(|g| w.group_mask(g, self.n, cx));
        if let Some(m) = shared {
            mask &= m;
        } else if !rp.outer_nodes.is_empty() {
            if !w.le.run(&rp.outer, LaneAxis::Tid, self.n, cx, w.model) {
                return Ok(false);
            }
            for l in 0..self.n {
                if rp.outer_nodes.iter().any(|&c| w.le.value(c, l) == 0) {
                    mask &= !(1 << l);
                }
            }
        }
        let (runs, ranges) = (w.sink.runs[w.sink.warp].len(), w.sink.ranges.clone());
        let x0 = cx.tid[0];
        match self.level(0, mask, cx, w) {
            Ok(()) => Ok(true),
            Err(EvalError::Budget) => Err(EvalError::Budget),
            Err(_) => {
                cx.tid[0] = x0;
                w.sink.runs[w.sink.warp].truncate(runs);
                w.sink.ranges = ranges;
                Ok(false)
            }
        }
    }

    /// Lane `l` alone, from loop `depth` on.
    fn alone(&self, l: usize, depth: usize, cx: &mut Ctx, w: &mut TbWalk) -> Result<(), EvalError> {
        let x0 = cx.tid[0];
        cx.tid[0] = x0 + l as i128;
        let r = w.walk(depth, cx);
        cx.tid[0] = x0;
        r
    }

    /// The lanes of `mask` in loop `depth` (the outer loops' iterations fixed in `cx`).
    fn level(
        &self,
        depth: usize,
        mask: LaneMask,
        cx: &mut Ctx,
        w: &mut TbWalk,
    ) -> Result<(), EvalError> {
        let p = w.p;
        let loops = &p.site.loops;
        let Some(first) = lanes_of(mask).next() else {
            return Ok(());
        };
        let l = loops[depth];
        cx.trips[l.index()] = None;
        cx.iters[l.index()] = None;
        // The lanes' trip count, when they agree.
        let x0 = cx.tid[0];
        let t = if w.trips.varies_along_x(l) {
            w.trips.row_trip(w.model, l, cx, mask)?
        } else {
            cx.tid[0] = x0 + first as i128;
            let t = w.trips.trip(w.model, l, cx);
            cx.tid[0] = x0;
            Some(t?)
        };
        let Some(t) = t else {
            for lane in lanes_of(mask) {
                self.alone(lane, depth, cx, w)?;
            }
            return Ok(());
        };
        cx.trips[l.index()] = Some(t);
        let innermost = depth + 1 == loops.len();
        let mut rest: LaneMask = 0;
        match &p.inner_affine {
            Some(ia) if innermost && t > 1 => rest = self.affine(ia, l, t, mask, cx, w)?,
            _ => {
                for k in 0..t {
                    cx.iters[l.index()] = Some(k);
                    if innermost {
                        rest |= self.leaf(mask, cx, w)?;
                    } else {
                        self.level(depth + 1, mask, cx, w)?;
                    }
                    // The lanes the pass could not answer, in this iteration on their own.
                    for lane in lanes_of(std::mem::take(&mut rest)) {
                        self.alone(lane, depth + 1, cx, w)?;
                    }
                }
            }
        }
        cx.iters[l.index()] = None;
        // The lanes whose affine run did not hold, walked on their own from this loop on.
        for lane in lanes_of(rest) {
            self.alone(lane, depth, cx, w)?;
        }
        cx.trips[l.index()] = None;
        Ok(())
    }

    /// The lanes of `mask` at one iteration of the innermost loop: their guards and
    /// addresses in one pass; the lanes left to walk alone (all of them when the pass fails).
    fn leaf(&self, mask: LaneMask, cx: &Ctx, w: &mut TbWalk) -> Result<LaneMask, EvalError> {
        let p = w.p;
        let Some((tape, nodes)) = &p.iter_tape else {
            return Ok(mask);
        };
        // Every lane of the row still together: the pass of the loads of this loop nest,
        // run by the first of them to reach the row here (scalar_prod's unrolled loop:
        // eight loads, one index).
        if let Some(g) = p.iter_group.as_ref().filter(|_| mask == self.all_lanes()) {
            if w.record_group(g, LaneAxis::Tid, self.n, cx)? {
                return Ok(0);
            }
        }
        if !w
            .le
            .run_reusing(tape, self.n, cx, w.model, &p.iter_thread_only)
        {
            return Ok(mask);
        }
        let (addr, conds) = (nodes[0], &nodes[1..]);
        // The row's addresses together, as the runs they form (a warp reading consecutive
        // elements is one run, where it was a point per lane).
        let mut vals = [0i128; crate::expr::LANES];
        let mut m = 0;
        for lane in lanes_of(mask) {
            if conds.iter().all(|&c| w.le.value(c, lane) != 0) {
                vals[m] = w.le.value(addr, lane);
                m += 1;
            }
        }
        w.sink.points(&mut vals[..m])?;
        Ok(0)
    }

    /// [`TbWalk::affine_run`] for the lanes of `mask` over the `t > 1` iterations of the
    /// innermost loop `l`, from two passes (at the first and the last iteration). A lane is
    /// recorded here when its run covers every iteration (or it records nothing); the lanes
    /// left (returned) walk alone, where [`TbWalk::affine_run`] decides for them.
    fn affine(
        &self,
        ia: &InnerAffine,
        l: LoopId,
        t: i128,
        mask: LaneMask,
        cx: &mut Ctx,
        w: &mut TbWalk,
    ) -> Result<LaneMask, EvalError> {
        let p = w.p;
        let tape = &p.tape;
        let node = |e: &E| tape.node(e).expect("compiled root");
        let holds = |le: &LaneEval, obl: &[Obligation], lane: usize| {
            obl.iter().all(|o| o.holds(le.value(node(&o.e), lane)))
        };
        // At the last iteration: the obligations the run needs there.
        cx.iters[l.index()] = Some(t - 1);
        if !w
            .le
            .run_reusing(tape, self.n, cx, w.model, &p.tape_thread_only)
        {
            return Ok(mask);
        }
        let mut at_end: LaneMask = 0;
        for lane in lanes_of(mask) {
            if ia.lits.iter().all(|(_, _, _, o)| holds(&w.le, o, lane))
                && holds(&w.le, &ia.obl, lane)
            {
                at_end |= 1 << lane;
            }
        }
        cx.iters[l.index()] = Some(0);
        if !w
            .le
            .run_reusing(tape, self.n, cx, w.model, &p.tape_thread_only)
        {
            return Ok(mask);
        }
        let mut rest: LaneMask = 0;
        for lane in lanes_of(mask) {
            if at_end & (1 << lane) == 0
                || !ia.lits.iter().all(|(_, _, _, o)| holds(&w.le, o, lane))
            {
                rest |= 1 << lane;
                continue;
            }
            if ia.free.iter().any(|c| w.le.value(node(c), lane) == 0) {
                continue;
            }
            let ends = ia
                .lits
                .iter()
                .map(|(r, d, c, _)| (*r, w.le.value(node(d), lane), w.le.value(node(c), lane)));
            match affine_range(ends, t) {
                Some((lo, hi)) if lo >= hi => {}
                Some((0, hi)) if hi == t && holds(&w.le, &ia.obl, lane) => {
                    let a0 = w.le.value(node(&p.site.addr), lane);
                    w.sink.ap(a0, w.le.value(node(&ia.coef), lane), t)?;
                }
                _ => rest |= 1 << lane,
            }
        }
        Ok(rest)
    }
}

/// Records the accesses of lanes `0 .. n` of one warp row as one run; `false` when the
/// affine view does not hold over them (the caller enumerates). `val(e, l)` is the value of
/// `e` in lane `l`: evaluated lane by lane, or read from a [`LaneEval`] pass.
fn lanes_with(
    p: &LoadPlan,
    lp: &LanePlan,
    n: i128,
    sink: &mut Sink,
    val: &mut dyn FnMut(&E, i128) -> Result<i128, EvalError>,
) -> Result<bool, EvalError> {
    let holds_at = |val: &mut dyn FnMut(&E, i128) -> Result<i128, EvalError>,
                    obl: &[Obligation],
                    at: i128|
     -> Result<bool, EvalError> {
        for o in obl {
            if !o.holds(val(&o.e, at)?) {
                return Ok(false);
            }
        }
        Ok(true)
    };
    for c in &lp.free {
        if val(c, 0)? == 0 {
            return Ok(true);
        }
    }
    let mut ends = Vec::with_capacity(lp.affine.len());
    for (r, d, c, obl) in &lp.affine {
        if !holds_at(val, obl, 0)? || !holds_at(val, obl, n - 1)? {
            return Ok(false);
        }
        ends.push((*r, val(d, 0)?, val(c, 0)?));
    }
    let Some((lo, hi)) = affine_range(ends.into_iter(), n) else {
        return Ok(false);
    };
    if lo >= hi {
        return Ok(true);
    }
    if !holds_at(val, &lp.obl, lo)? || !holds_at(val, &lp.obl, hi - 1)? {
        return Ok(false);
    }
    let a0 = val(&p.site.addr, lo)?;
    let c = val(&lp.coef, lo)?;
    sink.ap(a0, c, hi - lo)?;
    Ok(true)
}

/// One load's walk of one TB: the kernel and the load's plan, where its accesses are
/// recorded, the TB's trip counts and the two evaluators' scratch. The thread-by-thread
/// walk ([`TbWalk::walk`]) and a warp row's ([`RowWalk`]) share it.
struct TbWalk<'w, 'a, 't> {
    model: &'a KernelModel,
    p: &'a LoadPlan<'a>,
    sink: Sink<'a>,
    trips: &'w mut TripCache<'t>,
    passes: &'w mut IterPasses,
    ev: Evaluator<'a>,
    le: LaneEval,
}

impl TbWalk<'_, '_, '_> {
    /// The `t > 1` iterations of load `p`'s innermost loop `l` as one stepped run: the address is
    /// affine in the counter, and so are the guards that mention it (a bound check `c * 512 +
    /// tid < n`), which hold on one interval of iterations. `false` (the caller walks the
    /// iterations) when the affine forms do not hold over the loop (an extension they cross
    /// wraps) or anything here cannot be evaluated: the walk one iteration at a time evaluates
    /// only what each iteration needs, and reports what it cannot evaluate.
    fn affine_run(
        &mut self,
        ia: &InnerAffine,
        l: LoopId,
        t: i128,
        cx: &mut Ctx,
    ) -> Result<bool, EvalError> {
        let (model, p) = (self.model, self.p);
        let (sink, ev) = (&mut self.sink, &mut self.ev);
        let holds_at = |cx: &mut Ctx, ev: &mut Evaluator, obl: &[Obligation], at: i128| {
            cx.iters[l.index()] = Some(at);
            obl.iter()
                .all(|o| ev.eval(&o.e, cx, model).is_ok_and(|v| o.holds(v)))
        };
        for (_, _, _, obl) in &ia.lits {
            if !holds_at(cx, ev, obl, 0) || !holds_at(cx, ev, obl, t - 1) {
                return Ok(false);
            }
        }
        cx.iters[l.index()] = Some(0);
        for c in &ia.free {
            match ev.eval(c, cx, model) {
                Ok(0) => return Ok(true),
                Ok(_) => {}
                Err(_) => return Ok(false),
            }
        }
        let mut ends = Vec::with_capacity(ia.lits.len());
        for (r, d, c, _) in &ia.lits {
            match (ev.eval(d, cx, model), ev.eval(c, cx, model)) {
                (Ok(d0), Ok(ds)) => ends.push((*r, d0, ds)),
                _ => return Ok(false),
            }
        }
        let Some((lo, hi)) = affine_range(ends.into_iter(), t) else {
            return Ok(false);
        };
        if lo >= hi {
            return Ok(true);
        }
        if !holds_at(cx, ev, &ia.obl, lo) || !holds_at(cx, ev, &ia.obl, hi - 1) {
            return Ok(false);
        }
        cx.iters[l.index()] = Some(lo);
        let (Ok(a0), Ok(c)) = (
            ev.eval(&p.site.addr, cx, model),
            ev.eval(&ia.coef, cx, model),
        ) else {
            return Ok(false);
        };
        sink.ap(a0, c, hi - lo)?;
        Ok(true)
    }

    /// The lanes of the warp row of `n` threads from `cx` where every guard of member
    /// `pos` of row group `g` ([`group_rows`]) holds, from the group's pass there (run now,
    /// or by an earlier member in this TB); `None` where that pass fails.
    fn group_mask(&mut self, (g, pos): &Membership, n: usize, cx: &Ctx) -> Option<LaneMask> {
        // Guards outside the loops read no loop counter: no iterations in the key.
        let key = (
            std::sync::Arc::as_ptr(g) as usize,
            ROW_GUARDS_TAG,
            cx.tid,
            [-1; ITER_PASS_DEPTH],
            n,
        );
        if let Some(e) = self.passes.entries.get(&key) {
            return e.as_deref().map(|masks| masks[*pos] as LaneMask);
        }
        let le = &mut self.le;
        let masks: Option<Box<[i128]>> =
            le.run(&g.tape, LaneAxis::Tid, n, cx, self.model).then(|| {
                g.members
                    .iter()
                    .map(|conds| {
                        let mut m: LaneMask = 0;
                        for lane in 0..n {
                            if conds.iter().all(|&c| le.value(c, lane) != 0) {
                                m |= 1 << lane;
                            }
                        }
                        i128::from(m)
                    })
                    .collect()
            });
        let m = masks.as_deref().map(|v| v[*pos] as LaneMask);
        let size = masks.as_ref().map_or(1, |v| v.len());
        if self.passes.values + size <= ITER_PASS_VALUES {
            self.passes.values += size;
            self.passes.entries.insert(key, masks);
        }
        m
    }

    /// Records this load's kept addresses in the `n` lanes along `axis` from `cx` from its
    /// group's pass ([`TbWalk::group_points`]) as the runs they form; `false`, with nothing
    /// recorded, where that pass fails.
    fn record_group(
        &mut self,
        (g, pos): &Membership,
        axis: LaneAxis,
        n: usize,
        cx: &Ctx,
    ) -> Result<bool, EvalError> {
        let mut vals = [0i128; LANES];
        let Some(m) = self.group_points((g, *pos), axis, n, cx, &mut vals) else {
            return Ok(false);
        };
        self.sink.points(&mut vals[..m])?;
        Ok(true)
    }

    /// Member `pos` of group `g`'s kept addresses in the `n` lanes along `axis` from the
    /// context `cx` (a thread's iterations of the innermost loop, a warp row's threads, a
    /// warp's threads across rows), from the group's pass there (run now, or by an
    /// earlier member in this TB), written to `out`: how many, or `None` where that pass
    /// fails.
    fn group_points(
        &mut self,
        (g, pos): (&std::sync::Arc<IterGroup>, usize),
        axis: LaneAxis,
        n: usize,
        cx: &Ctx,
        out: &mut [i128; LANES],
    ) -> Option<usize> {
        let loops = &self.p.site.loops;
        if loops.len() > ITER_PASS_DEPTH {
            return None;
        }
        let mut iters = [-1i128; ITER_PASS_DEPTH];
        for (k, q) in iters.iter_mut().zip(loops) {
            *k = cx.iters[q.index()].unwrap_or(-1);
        }
        let key = (
            std::sync::Arc::as_ptr(g) as usize,
            axis_tag(axis),
            cx.tid,
            iters,
            n,
        );
        // Member `pos`'s addresses in a pass's values.
        let read = |vals: &[i128], out: &mut [i128; LANES]| {
            let mut at = 0;
            for _ in 0..pos {
                at += 1 + vals[at] as usize;
            }
            let m = vals[at] as usize;
            out[..m].copy_from_slice(&vals[at + 1..at + 1 + m]);
            m
        };
        if let Some(e) = self.passes.entries.get(&key) {
            return e.as_deref().map(|vals| read(vals, out));
        }
        let le = &mut self.le;
        let vals: Option<Box<[i128]>> = le.run(&g.tape, axis, n, cx, self.model).then(|| {
            let mut vals = Vec::with_capacity(g.members.len() * (n + 1));
            for nodes in &g.members {
                let (addr, conds) = (nodes[0], &nodes[1..]);
                let at = vals.len();
                vals.push(0);
                for lane in 0..n {
                    if conds.iter().all(|&c| le.value(c, lane) != 0) {
                        vals.push(le.value(addr, lane));
                    }
                }
                vals[at] = (vals.len() - at - 1) as i128;
            }
            vals.into_boxed_slice()
        });
        let m = vals.as_deref().map(|v| read(v, out));
        let size = vals.as_ref().map_or(1, |v| v.len());
        if self.passes.values + size <= ITER_PASS_VALUES {
            self.passes.values += size;
            self.passes.entries.insert(key, vals);
        }
        m
    }

    /// The accesses of the thread of `cx` from loop `depth` of the load on (its guards
    /// outside the loops hold), recorded in the sink.
    fn walk(&mut self, depth: usize, cx: &mut Ctx) -> Result<(), EvalError> {
        let (model, p) = (self.model, self.p);
        let loops = &p.site.loops;
        if depth == loops.len() {
            for c in &p.inner_conds {
                if self.ev.eval(c, cx, model)? == 0 {
                    return Ok(());
                }
            }
            let a = self.ev.eval(&p.site.addr, cx, model)?;
            return self.sink.ap(a, 0, 1);
        }
        let l = loops[depth];
        cx.trips[l.index()] = None;
        cx.iters[l.index()] = None;
        let t = self.trips.trip(model, l, cx)?;
        cx.trips[l.index()] = Some(t);
        let innermost = depth + 1 == loops.len();
        if innermost && t > 1 {
            if let Some(ia) = &p.inner_affine {
                let done = self.affine_run(ia, l, t, cx)?;
                cx.iters[l.index()] = None;
                if done {
                    cx.trips[l.index()] = None;
                    return Ok(());
                }
            }
        }
        // The innermost loop's iterations up to a warp's worth at a time, in one eager pass; one
        // by one where it meets an error (the lazy walk reports what it must).
        let chunk = match &p.iter_tape {
            Some(_) if innermost && t > 1 => LANES as i128,
            _ => t.max(1),
        };
        let mut k0 = 0;
        while k0 < t {
            let n = (t - k0).min(chunk);
            cx.iters[l.index()] = Some(k0);
            if let Some(g) = p.iter_group.as_ref().filter(|_| n > 1 && innermost) {
                if self.record_group(g, LaneAxis::Iter(l), n as usize, cx)? {
                    k0 += n;
                    continue;
                }
            }
            if let Some((tape, nodes)) = p.iter_tape.as_ref().filter(|_| n > 1 && innermost) {
                if self.le.run(tape, LaneAxis::Iter(l), n as usize, cx, model) {
                    let (addr, conds) = (nodes[0], &nodes[1..]);
                    let mut vals = [0i128; LANES];
                    let mut m = 0;
                    for lane in 0..n as usize {
                        if conds.iter().all(|&c| self.le.value(c, lane) != 0) {
                            vals[m] = self.le.value(addr, lane);
                            m += 1;
                        }
                    }
                    self.sink.points(&mut vals[..m])?;
                    k0 += n;
                    continue;
                }
            }
            for k in k0..k0 + n {
                cx.iters[l.index()] = Some(k);
                self.walk(depth + 1, cx)?;
            }
            k0 += n;
        }
        cx.iters[l.index()] = None;
        cx.trips[l.index()] = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A corpus launch, bound as the CLI binds it, and its model.
    fn corpus(dir: &str, launch_file: &str) -> (BoundLaunch, KernelModel) {
        let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../kernels")
            .join(dir);
        let m = ptx_parser::parse_file(&d.join(format!("{dir}.compute_70.ptx"))).expect("parse");
        let l = launch::Launch::read(&d.join(launch_file)).expect("launch");
        let name = l.kernel.clone().expect("kernel named");
        let f = m.kernel(&name).expect("kernel");
        let b = l
            .bind(&name, &crate::param_sigs(f), &d)
            .expect("bind")
            .with_module(&m);
        let model = crate::addr::analyze_kernel(f, &b);
        (b, model)
    }

    /// Every load of every TB walked alone and as a member of its group pass (the loads in
    /// turn, one [`IterPasses`] per TB, as the jobs run) gives the same runs and ranges:
    /// mirror_boundary's unrolled loads, whose addresses differ load by load while their
    /// union is the same row (the footprints alone would not tell a load read another's).
    #[test]
    fn group_passes_give_each_load_its_own_addresses() {
        grouped_equals_alone(
            "mirror_boundary",
            group_iterations,
            |p| p.iter_group.is_some(),
            4,
            true,
        );
    }

    /// [`group_passes_give_each_load_its_own_addresses`] for the warp passes of loop-free
    /// loads ([`group_lanes`]): a 3-D stencil (block 8 x 8 x 4, a warp across four rows),
    /// 4x4 sums of differences, and module_array's loads of a `.const` table at addresses
    /// every lane shares beside a sliding window.
    #[test]
    fn lane_groups_give_each_load_its_own_addresses() {
        for (dir, members) in [("jacobi3d", 7), ("sad", 17), ("module_array", 33)] {
            grouped_equals_alone(dir, group_lanes, |p| p.lane_group.is_some(), members, true);
        }
    }

    /// The same for warp rows walked together ([`RowWalk`]): their guards outside the
    /// loops from one pass per row ([`group_rows`]), their innermost iterations from the
    /// loop nest's pass along the row ([`RowWalk::leaf`]), their trip counts asked once per
    /// row ([`TripCache::row_trip`]): scalar_prod's fourteen loads (the unrolled loop's
    /// eight and the prologue's six, which never run for this launch), a GEMM's, syr2k's and
    /// gemv_unroll's.
    #[test]
    fn row_groups_give_each_load_its_own_addresses() {
        fn both(plans: &mut [Option<LoadPlan>]) {
            group_iterations(plans);
            group_rows(plans);
        }
        // Six of scalar_prod's fourteen loads keep guards outside their loops; the other
        // eight lost theirs when joins whose sides cover every case took the common
        // condition (issue 41).
        grouped_equals_alone("scalar_prod", both, |p| p.row_group.is_some(), 6, true);
        // Loads without guards outside their loops, whose innermost loops mostly run as
        // affine runs (a row pass where they do not).
        for dir in ["mm_naive", "syr2k", "gemv_unroll"] {
            let member = |p: &LoadPlan| p.row.is_some() && p.iter_group.is_some();
            grouped_equals_alone(dir, both, member, 2, false);
        }
    }

    fn grouped_equals_alone(
        dir: &str,
        group: fn(&mut [Option<LoadPlan>]),
        member: fn(&LoadPlan) -> bool,
        at_least: usize,
        passes_kept: bool,
    ) {
        let (b, model) = corpus(dir, "small.json");
        let dim = |d: u64| u32::try_from(d).expect("small launch");
        let grid = [b.grid.x, b.grid.y, b.grid.z].map(dim);
        let block = [b.block.x, b.block.y, b.block.z].map(dim);
        let alone: Vec<Option<LoadPlan>> = model
            .loads
            .iter()
            .map(|s| Some(plan(&model, s, grid, block)))
            .collect();
        let mut grouped: Vec<Option<LoadPlan>> = model
            .loads
            .iter()
            .map(|s| Some(plan(&model, s, grid, block)))
            .collect();
        group(&mut grouped);
        let members = grouped.iter().flatten().filter(|p| member(p)).count();
        assert!(
            members >= at_least,
            "{dir}: the loads form a group ({members} members)"
        );
        let deps = all_trip_deps(&model);
        let shared = SharedTrips::default();
        let spent = AtomicU64::new(0);
        let allow = Allowance {
            spent: &spent,
            limit: u64::MAX,
        };
        let gran = Granularity::Element;
        for z in 0..grid[2] {
            for y in 0..grid[1] {
                for x in 0..grid[0] {
                    let key = [x, y, z];
                    let mut passes = IterPasses::default();
                    let mut trips = TripCache::new(&deps, &shared);
                    for (i, (a, g)) in alone.iter().zip(&grouped).enumerate() {
                        let (a, g) = (a.as_ref().unwrap(), g.as_ref().unwrap());
                        let mut t = TripCache::new(&deps, &shared);
                        let want = eval_load(
                            &model,
                            &b,
                            gran,
                            a,
                            key,
                            block,
                            &mut t,
                            &mut IterPasses::default(),
                            &allow,
                        );
                        let got = eval_load(
                            &model,
                            &b,
                            gran,
                            g,
                            key,
                            block,
                            &mut trips,
                            &mut passes,
                            &allow,
                        );
                        assert!(want.is_ok(), "{dir}: load {i}, TB {key:?}: {want:?}");
                        assert_eq!(got.ok(), want.ok(), "{dir}: load {i}, TB {key:?}");
                    }
                    if passes_kept {
                        assert!(
                            !passes.entries.is_empty(),
                            "{dir}: the group's passes were kept"
                        );
                    }
                }
            }
        }
    }
}
