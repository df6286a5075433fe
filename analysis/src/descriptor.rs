//! Locality Descriptors (Locality Descriptor paper, §3-4), one per pointer parameter,
//! derived from the symbolic model and the footprints. The descriptor is the one type LD
//! clustering and the simulator read too ([`Descriptor`], from `graph_partition`); the
//! analysis hands it out as [`Derived`], with the evidence it was derived from.
//!
//! - **compute-data map** `(mx, my, mz)`: `1` where the parameter's addresses (any resolved
//!   load of it: address and loop bounds) depend on `%ctaid` along that grid dimension.
//! - **C-Tile** (TBs): spans the grid along every dimension the map is 0 on, 1 TB elsewhere.
//! - **D-Tile** (elements): the data C-Tile `(0, 0, 0)` reads, as runs of consecutive
//!   elements: `n` runs of equal length `L` at a constant distance `S` give the D-Tile
//!   `(L, n, 1)` with stride `S` (REGULAR); one run is `(L, 1, 1)`, stride 1; any other shape
//!   (or an unresolved load) is IRREGULAR, with D-Tile `(extent, 1, 1)`.
//! - **LocalityType**: INTER-THREAD when two different TBs can read the same address,
//!   else INTRA-THREAD when one thread can re-read an address, else NO-REUSE. The two
//!   existence questions are answered by enumeration (every thread and iteration of the
//!   launch, up to [`ENUM_BUDGET`] points) or symbolically by z3 ([`crate::smt`]) when the
//!   machine has it ([`native::z3::solver`]); without it enumeration decides.
//! - **sharing** (only with INTER-THREAD): COACCESSED when the C-Tile has several TBs (the
//!   D-Tile is read by the whole C-Tile), else NEARBY (neighbouring TBs overlap: halos,
//!   misaligned units).
//! - **tile map**: per C-Tile (its coordinates in the grid of C-Tiles), the D-Tile as
//!   half-open element ranges, from the footprints (rounded out to whole units at line or
//!   sector granularity; at most [`MAX_TILE_MAP`] C-Tiles).
//! - **compute-data map, rank form** (paper §3.3.3): the order in which C-Tiles are
//!   traversed as the D-Tiles are traversed in `X -> Y -> Z` order: rank 1 for the grid
//!   dimension whose C-Tile step moves the D-Tile the least in memory, 2 for the next, 0 for
//!   dimensions the map does not use (histo's `(1,0,0)`; `(3,1,2)`: C-Tiles in `Y -> Z -> X`).
//! - **priority** (paper §3.3.5, 1 = highest): the order in which conflicting optimisations
//!   are resolved. The analysis ranks INTER-THREAD descriptors first (they drive CTA
//!   scheduling, §4.3), then the others, each group by data references (`Σ_TB |footprint|`,
//!   the data structure's share of the traffic) descending, then by parameter index.
//! - A parameter no load reads (no resolved load's addresses fall in its buffer and no
//!   unresolved load of unknown target exists) gets no descriptor. A question neither z3
//!   nor enumeration decides gives `locality_type` `UNDECIDED` and reuse flags `null`,
//!   never NO-REUSE.

use launch::BoundLaunch;
use ptx_parser::Function;
use serde::Serialize;

use crate::expr::{Expr, Var};
use crate::footprint::{normalize, Interval, PARAM_SHIFT};
use crate::Analysis;
pub use graph_partition::descriptor::{Descriptor, LocalityType, Pattern, Sharing};

pub(crate) use crate::existence::{all_pairs, elem_bytes, existence_of, Tables};
pub use crate::existence::{
    block_reuse, existence_by_enumeration, existence_by_sorting, load_params, Existence,
    BLOCK_REUSE_BUDGET, ENUM_BUDGET,
};

/// Points enumeration may visit for the questions z3 would have decided, when z3 is not
/// there (or switched off): the answers stay those the solver gives, at the cost of time
/// (gemv_unroll's paper launch, 2^26 points, is the corpus's largest).
pub const ENUM_BUDGET_WITHOUT_Z3: u64 = 1 << 28;
/// Largest number of C-Tiles listed in a tile map.
pub const MAX_TILE_MAP: usize = 4096;
/// Largest number of element ranges listed per D-Tile in a tile map.
pub const MAX_RANGES: usize = 1024;

/// How the existence questions were decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DecidedBy {
    /// Without z3 or enumeration: the footprints and the dependence test
    /// ([`crate::dependence`]) answered both questions.
    Analytic,
    /// The z3 SMT solver over the symbolic model.
    Z3,
    /// Enumeration of every thread and iteration.
    Enumeration,
    /// Neither path could decide (enumeration past its budget): `locality_type` is
    /// `UNDECIDED` and the reuse flags are `None`.
    Undecided,
}

/// One C-Tile and its D-Tile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TileMapEntry {
    /// The C-Tile's coordinates in the grid of C-Tiles.
    pub c_tile: [u64; 3],
    /// Element ranges `[lo, hi)` of the D-Tile.
    pub d_tile: Vec<[u64; 2]>,
}

/// A Locality Descriptor as the analysis derived it: the descriptor itself (the one type
/// clustering and the simulator read too) and the evidence behind it, which only the
/// analysis's report shows. Serialises as one flat object, the descriptor's fields first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Derived {
    /// The descriptor.
    #[serde(flatten)]
    pub descriptor: Descriptor,
    /// Two different TBs can read the same address (`None`: undecided).
    pub inter_tb_reuse: Option<bool>,
    /// One thread can read an address twice (`None`: undecided).
    pub intra_thread_reuse: Option<bool>,
    /// How the two existence answers were obtained.
    pub decided_by: DecidedBy,
    /// C-Tile -> D-Tile.
    pub tile_map: Vec<TileMapEntry>,
    /// More C-Tiles or ranges than listed.
    pub tile_map_truncated: bool,
}

/// The bare descriptors of `derived`, for clustering and the simulator's hints.
pub fn descriptors(derived: &[Derived]) -> Vec<Descriptor> {
    derived.iter().map(|d| d.descriptor.clone()).collect()
}

/// Compute-data map of parameter `p`.
fn compute_data_map(a: &Analysis, params: &[Option<u32>], p: u32) -> [u8; 3] {
    let mut m = [0u8; 3];
    for (l, lp) in a.model.loads.iter().zip(params) {
        if *lp != Some(p) {
            continue;
        }
        let mut mark = |e: &Expr| {
            if let Expr::Var(Var::Ctaid(d)) = e {
                m[usize::from(*d).min(2)] = 1;
            }
        };
        l.addr.visit_leaves(&mut mark);
        for q in &l.loops {
            if let Some(info) = a.model.loops.get(q.index()) {
                for e in &info.exits {
                    e.visit_leaves(&mut mark);
                }
            }
        }
    }
    m
}

/// Element ranges of the units `iv` (of `unit_bytes` each) of a buffer of `eb`-byte
/// elements.
fn to_elements(iv: &[Interval], unit_bytes: u64, eb: u64) -> Vec<Interval> {
    let mask = (1u64 << PARAM_SHIFT) - 1;
    normalize(
        iv.iter()
            .map(|&(lo, hi)| {
                let (lo, hi) = (lo & mask, ((hi - 1) & mask) + 1);
                (lo * unit_bytes / eb, (hi * unit_bytes).div_ceil(eb))
            })
            .collect(),
    )
}

/// D-Tile dims, stride and regularity from a D-Tile's element runs.
fn shape(runs: &[Interval]) -> ([u64; 3], Option<u64>, bool) {
    match runs {
        [] => ([0, 0, 1], None, true),
        [(lo, hi)] => ([hi - lo, 1, 1], Some(1), true),
        [first, second, ..] => {
            let len = first.1 - first.0;
            let stride = second.0 - first.0;
            let regular = runs
                .windows(2)
                .all(|w| w[1].1 - w[1].0 == len && w[1].0 - w[0].0 == stride);
            if regular && runs.last().is_some_and(|l| l.1 - l.0 == len) {
                ([len, runs.len() as u64, 1], Some(stride), true)
            } else {
                let extent = runs.last().map_or(0, |l| l.1) - first.0;
                ([extent, 1, 1], None, false)
            }
        }
    }
}

/// The descriptors of every pointer parameter of `f`, with per parameter the existence
/// answers (from [`existence_by_enumeration`] or the z3 path) and how they were decided.
pub fn describe(
    f: &Function,
    a: &Analysis,
    launch: &BoundLaunch,
    exist: &[(Existence, DecidedBy)],
) -> Vec<Derived> {
    let params = load_params(a);
    let grid = [launch.grid.x, launch.grid.y, launch.grid.z];
    let mut out = Vec::new();
    let mut weights: Vec<u64> = Vec::new();
    for p in launch.region_ids().into_iter().map(|p| p as u32) {
        let Some(eb) = elem_bytes(launch, p) else {
            continue;
        };
        let unresolved = a
            .unresolved
            .iter()
            .zip(&params)
            .any(|(u, lp)| u.is_some() && (lp.is_none() || *lp == Some(p)));
        let fp = a.footprints.params.iter().position(|x| x.param == p);
        // Never loaded: no resolved load reads its buffer and no unresolved load may.
        if fp.is_none() && !unresolved {
            continue;
        }
        let map = compute_data_map(a, &params, p);
        let c_tile = [0, 1, 2].map(|d| if map[d] == 1 { 1 } else { grid[d] });
        let n_ct = [0, 1, 2].map(|d| if map[d] == 1 { grid[d] } else { 1 });
        // Per C-Tile, the union of its TBs' units.
        let mut tiles: Vec<Vec<Interval>> = Vec::new();
        let total_ct = n_ct.iter().product::<u64>();
        let listed = (total_ct as usize).min(MAX_TILE_MAP);
        let mut truncated = total_ct as usize > listed;
        if let Some(k) = fp {
            // Union over the distinct (C-Tile, footprint class) pairs, not over TBs.
            let pf = &a.footprints.params[k];
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            for (ci, c) in pf.classes.iter().enumerate() {
                for &tb in &c.members {
                    let tb = u64::from(tb);
                    let at = [
                        tb % grid[0],
                        (tb / grid[0]) % grid[1],
                        tb / (grid[0] * grid[1]),
                    ];
                    let ct = [0, 1, 2].map(|d| if map[d] == 1 { at[d] } else { 0 });
                    let idx = (ct[0] + n_ct[0] * (ct[1] + n_ct[1] * ct[2])) as usize;
                    if idx < listed {
                        pairs.push((idx, ci));
                    }
                }
            }
            pairs.sort_unstable();
            pairs.dedup();
            tiles = vec![Vec::new(); listed];
            for (idx, ci) in pairs {
                tiles[idx].extend_from_slice(&pf.classes[ci].units);
            }
            for t in &mut tiles {
                *t = to_elements(&normalize(std::mem::take(t)), pf.unit_bytes, eb);
            }
        }
        let (d_tile, stride, regular) = tiles.first().map_or(([0, 0, 1], None, true), |t| shape(t));
        let regular = regular && !unresolved;
        let rank = rank_form(&map, &n_ct, &tiles);
        let refs: u64 = fp.map_or(0, |k| {
            a.footprints.params[k]
                .classes
                .iter()
                .map(|c| crate::footprint::count(&c.units) * c.members.len() as u64)
                .sum()
        });
        let (e, decided_by) = exist
            .get(p as usize)
            .copied()
            .unwrap_or((Existence::default(), DecidedBy::Undecided));
        let decided = decided_by != DecidedBy::Undecided;
        let locality_type = if !decided {
            LocalityType::Undecided
        } else if e.inter_tb {
            LocalityType::InterThread
        } else if e.intra_thread {
            LocalityType::IntraThread
        } else {
            LocalityType::NoReuse
        };
        let sharing = (decided && e.inter_tb).then_some(if c_tile.iter().product::<u64>() > 1 {
            Sharing::Coaccessed
        } else {
            Sharing::Nearby
        });
        let tile_map = tiles
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let i = i as u64;
                truncated |= t.len() > MAX_RANGES;
                TileMapEntry {
                    c_tile: [
                        i % n_ct[0],
                        (i / n_ct[0]) % n_ct[1],
                        i / (n_ct[0] * n_ct[1]),
                    ],
                    d_tile: t
                        .iter()
                        .take(MAX_RANGES)
                        .map(|&(lo, hi)| [lo, hi])
                        .collect(),
                }
            })
            .collect();
        out.push(Derived {
            descriptor: Descriptor {
                param: p,
                name: crate::region::region_name(f, launch, p),
                element_bytes: eb,
                locality_type,
                priority: 0,
                sharing,
                pattern: if regular {
                    Pattern::Regular
                } else {
                    Pattern::Irregular
                },
                stride_elements: if regular { stride } else { None },
                d_tile: if regular {
                    d_tile
                } else {
                    [d_tile[0] * d_tile[1], 1, 1]
                },
                c_tile,
                compute_data_map: map,
                compute_data_rank: rank,
            },
            inter_tb_reuse: decided.then_some(e.inter_tb),
            intra_thread_reuse: decided.then_some(e.intra_thread),
            decided_by,
            tile_map,
            tile_map_truncated: truncated,
        });
        weights.push(refs);
    }
    // Priority: INTER-THREAD first, then by data references (descending), then by index.
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by_key(|&i| {
        (
            out[i].descriptor.locality_type != LocalityType::InterThread,
            std::cmp::Reverse(weights[i]),
            out[i].descriptor.param,
        )
    });
    for (rank, i) in order.into_iter().enumerate() {
        out[i].descriptor.priority = rank as u32 + 1;
    }
    out
}

/// The compute-data map in rank form: among the dimensions the mask marks, rank by how far
/// one C-Tile step along the dimension moves the D-Tile's first element (smallest first:
/// it follows the data's `X`); a dimension whose step cannot be measured (one C-Tile, an
/// empty or unlisted tile) ranks after the measured ones; ties by dimension order.
fn rank_form(map: &[u8; 3], n_ct: &[u64; 3], tiles: &[Vec<Interval>]) -> [u8; 3] {
    let start = |idx: u64| -> Option<u64> {
        tiles
            .get(usize::try_from(idx).ok()?)
            .and_then(|t| t.first())
            .map(|r| r.0)
    };
    let step: [u64; 3] = [0, 1, 2].map(|d| {
        let idx = match d {
            0 => 1,
            1 => n_ct[0],
            _ => n_ct[0] * n_ct[1],
        };
        if map[d] == 0 || n_ct[d] < 2 {
            return u64::MAX;
        }
        match (start(0), start(idx)) {
            (Some(a), Some(b)) => a.abs_diff(b),
            _ => u64::MAX,
        }
    });
    let mut dims: Vec<usize> = (0..3).filter(|&d| map[d] == 1).collect();
    dims.sort_by_key(|&d| (step[d], d));
    let mut rank = [0u8; 3];
    for (r, d) in dims.into_iter().enumerate() {
        rank[d] = r as u8 + 1;
    }
    rank
}

/// Launches whose enumeration visits at most this many points
/// ([`crate::dependence::enumeration_points`]) have their open questions decided by
/// enumeration instead of z3: below it, z3's fixed costs (a context, the encoding, one
/// `check` per load pair, 30-90 ms each) exceed the walk's. The walk costs 1-5 us per point
/// on the corpus (gto_friendly's 2^20 points: 5 s under load, where z3 takes 1 s), so the
/// bound is 2^18.
pub const SMALL_LAUNCH_POINTS: u64 = 1 << 18;

/// The descriptors with the existence questions decided by the default path: first the
/// fast tests ([`crate::dependence`]: the footprints for the inter-TB question, the
/// dependence test per load pair for the intra-thread one, then a witness in the first and
/// last TBs, only their first and last warps on small launches); what they leave open goes
/// to enumeration on small launches (up to [`SMALL_LAUNCH_POINTS`] points), else to z3 (when
/// this process loads it, [`native::z3::solver`]: one context per parameter, only the open
/// pairs), and what z3 leaves open to enumeration (up to [`ENUM_BUDGET`] points). Parameters
/// no path decides are `Undecided`.
pub fn compute(f: &Function, a: &Analysis, launch: &BoundLaunch) -> Vec<Derived> {
    compute_with(f, a, launch, true)
}

/// [`compute`] with the engines chosen by the caller: with `use_z3` false it decides as on a
/// machine without z3 (the fast tests, then enumeration), whatever this process can load;
/// with it true z3 is looked for ([`native::z3::solver`]) when a question first needs it.
pub fn compute_with(
    f: &Function,
    a: &Analysis,
    launch: &BoundLaunch,
    use_z3: bool,
) -> Vec<Derived> {
    let n = launch.region_ids().last().map_or(0, |m| m + 1);
    let params = load_params(a);
    let ranges = crate::dependence::Ranges::new(a, launch);
    // Per data structure: the fast answers and the pairs the dependence test left open.
    struct Open {
        eb: u64,
        inter: Option<bool>,
        all: Vec<(usize, usize)>,
        open: Vec<(usize, usize)>,
        intra_witnessed: bool,
    }
    // Worked out when first needed (a launch whose questions the fast tests settle never
    // bounds its points).
    let small_cell = std::cell::OnceCell::new();
    let small = || {
        *small_cell.get_or_init(|| {
            crate::dependence::enumeration_points(a, launch, &ranges)
                .is_some_and(|x| x <= SMALL_LAUNCH_POINTS)
        })
    };
    let mut exist: Vec<Option<(Existence, DecidedBy)>> = vec![None; n];
    let mut open: Vec<Option<Open>> = (0..n).map(|_| None).collect();
    for p in launch.region_ids() {
        let Some(eb) = elem_bytes(launch, p as u32) else {
            continue;
        };
        let loads = crate::dependence::param_loads(a, &params, p as u32);
        // `inter_tb` has asked the address test already when it answers nothing.
        let inter = crate::dependence::inter_tb(a, launch, p as u32, eb, &loads)
            .or_else(|| crate::dependence::inter_tb_by_element_footprints(a, launch, p as u32, eb));
        let all = all_pairs(&loads);
        let undecided: Vec<(usize, usize)> = all
            .iter()
            .copied()
            .filter(|&(i, j)| {
                crate::dependence::intra_pair(a, &ranges, p as u32, eb, i, j) != Some(false)
            })
            .collect();
        // The dependence test proves only the absence of reuse; a concrete witness in the
        // grid's first or last TB proves its presence. On a small launch the enumeration
        // decides what the witness leaves open, and a witness that finds nothing walked
        // two TBs the enumeration walks again (gemv_unroll): there it looks at each TB's
        // first and last warp only.
        let intra = if undecided.is_empty() {
            Some(false)
        } else {
            let edge = small().then_some(32);
            crate::dependence::intra_thread_witness_at(a, launch, p as u32, eb, &loads, edge)
                .then_some(true)
        };
        match (inter, intra) {
            (Some(x), Some(y)) => {
                let e = Existence {
                    inter_tb: x,
                    intra_thread: y,
                };
                exist[p] = Some((e, DecidedBy::Analytic));
            }
            _ => {
                open[p] = Some(Open {
                    eb,
                    inter,
                    all,
                    // A witnessed reuse leaves no intra-thread pair to ask.
                    open: if intra == Some(true) {
                        Vec::new()
                    } else {
                        undecided
                    },
                    intra_witnessed: intra == Some(true),
                })
            }
        }
    }
    // z3 is looked for (once per process) only when a question needs it.
    let needs_solver = open.iter().any(Option::is_some) && !small();
    let solver = (use_z3 && needs_solver)
        .then(native::z3::solver)
        .and_then(Result::ok);
    // Without the solver, enumeration gets the larger budget, so the answers do not depend
    // on whether z3 is installed.
    let budget = if needs_solver && solver.is_none() {
        ENUM_BUDGET_WITHOUT_Z3
    } else {
        ENUM_BUDGET
    };
    if let Some(z3) = solver {
        use rayon::prelude::*;
        let solved: Vec<Option<Existence>> = open
            .par_iter()
            .enumerate()
            .map(|(p, o)| {
                let o = o.as_ref()?;
                crate::smt::decide(
                    z3,
                    a,
                    launch,
                    &ranges,
                    (p as u32, o.eb),
                    o.inter,
                    &o.all,
                    &o.open,
                )
            })
            .collect();
        for (p, e) in solved.into_iter().enumerate() {
            if let Some(mut e) = e {
                e.intra_thread |= open[p].as_ref().is_some_and(|o| o.intra_witnessed);
                exist[p] = Some((e, DecidedBy::Z3));
                open[p] = None;
            }
        }
    }
    let mut enumerated: Option<Option<Vec<Existence>>> = None;
    let exist: Vec<(Existence, DecidedBy)> = (0..n)
        .map(|p| match exist[p] {
            Some(x) => x,
            None if open[p].is_none() => (Existence::default(), DecidedBy::Undecided),
            None => match enumerated
                .get_or_insert_with(|| {
                    existence_of(a, launch, &ranges, Tables::Dense, budget, |q| {
                        open.get(q as usize).is_some_and(Option::is_some)
                    })
                })
                .as_ref()
            {
                Some(v) => (v[p], DecidedBy::Enumeration),
                None => (Existence::default(), DecidedBy::Undecided),
            },
        })
        .collect();
    describe(f, a, launch, &exist)
}

/// The descriptors with the existence questions decided by `z3` alone, enumeration for the
/// parameters the solver gives no answer for: the path before the fast tests, kept to
/// compare with.
pub fn compute_z3(
    f: &Function,
    a: &Analysis,
    launch: &BoundLaunch,
    z3: &native::z3::Z3,
) -> Vec<Derived> {
    compute_from(f, a, launch, crate::smt::existence(z3, a, launch))
}

/// The descriptors with the existence questions decided by enumeration only.
pub fn compute_enumerated(f: &Function, a: &Analysis, launch: &BoundLaunch) -> Vec<Derived> {
    compute_from(f, a, launch, vec![None; launch.params.len()])
}

fn compute_from(
    f: &Function,
    a: &Analysis,
    launch: &BoundLaunch,
    symbolic: Vec<Option<Existence>>,
) -> Vec<Derived> {
    // Parameters, module variables and struct fields' buffers (the latter two are not
    // modelled by z3: enumeration decides).
    let n = launch.region_ids().last().map_or(0, |m| m + 1);
    let mut enumerated: Option<Option<Vec<Existence>>> = None;
    let exist: Vec<(Existence, DecidedBy)> = (0..n)
        .map(|p| match symbolic.get(p).copied().flatten() {
            Some(e) => (e, DecidedBy::Z3),
            // Scalars get no descriptor: never enumerate the launch for them.
            None if elem_bytes(launch, p as u32).is_none() => {
                (Existence::default(), DecidedBy::Undecided)
            }
            None => match enumerated
                .get_or_insert_with(|| existence_by_enumeration(a, launch))
                .as_ref()
            {
                Some(v) => (v[p], DecidedBy::Enumeration),
                None => (Existence::default(), DecidedBy::Undecided),
            },
        })
        .collect();
    describe(f, a, launch, &exist)
}
