//! Concrete walks: witnesses of reuse found by walking a few threads of neighbouring TBs or
//! one thread's iterations, the enumeration's cost ([`enumeration_points`]) and the per-pair
//! enumeration reference of the intra-thread test ([`intra_pair_by_enumeration`]).

use super::*;

/// Points [`inter_tb_witness`] may evaluate.
pub const WITNESS_POINTS: u64 = 1 << 16;

/// A concrete witness of inter-TB reuse: the TB at the grid's origin and its neighbour
/// along each dimension the grid spans, walked thread by thread (thread `t` of both, every
/// load of `loads` at every iteration, guards and trip counts evaluated exactly, as the
/// enumeration's [`crate::reuse::Walker`] walks them) until
/// they read a common element of `p` (`true`) or [`WITNESS_POINTS`] points per dimension
/// are spent or the TBs end (`false`: no answer either way). Guards that only cut the grid's edge
/// (GEMM's `row < n && col < n`) hide the `%ctaid` independence from [`ctaid_dims`]; the
/// first threads of two neighbouring TBs show the shared row at once.
pub(super) fn inter_tb_witness(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
    loads: &[usize],
) -> bool {
    use crate::expr::Ctx;
    use crate::footprint::{unit_bytes, FxSet, Granularity, PARAM_SHIFT};
    let (g, b) = (launch.grid, launch.block);
    let grid = [g.x, g.y, g.z];
    // The walker's units of `p` are its elements (else no witness is looked for).
    if unit_bytes(Granularity::Element, launch, p, eb) != eb {
        return false;
    }
    // Dimensions no load's address uses first (where the shared data is), each with its
    // own budget.
    let mut uses = [false; 3];
    for &i in loads {
        if let Some(s) = a.model.loads.get(i) {
            s.addr.visit_leaves(&mut |x| {
                if let Expr::Var(Var::Ctaid(d)) = x {
                    uses[usize::from(*d).min(2)] = true;
                }
            });
        }
    }
    let mut dims = [0usize, 1, 2];
    dims.sort_by_key(|&d| uses[d]);
    // The enumeration's walker: its tape evaluation and its innermost loops stepped as runs
    // cost a fraction of evaluating each point's expressions (a column walk that finds no
    // witness spent a third of its analysis here).
    let plan = crate::reuse::WalkPlan::of_loads(a, |i| loads.contains(&i));
    let mut w = crate::reuse::Walker::new(a, launch, Granularity::Element, &plan);
    w.limit = WITNESS_POINTS;
    let mut cx = Ctx::new(a.model.loops.len());
    let mut ev: Vec<(u32, u64)> = Vec::new();
    let n = b.count();
    for d in dims {
        if grid[d] < 2 {
            continue;
        }
        w.points = 0;
        w.truncated = false;
        let mut other = [0i128; 3];
        other[d] = 1;
        let mut seen = [FxSet::default(), FxSet::default()];
        // Thread `t` of one TB, then of the other: a GEMM's first thread alone may spend
        // the budget on its row, and the other TB's first thread shows the row shared.
        'dim: for t in 0..n {
            cx.tid = thread_coords(t, b);
            for (side, ctaid) in [[0i128; 3], other].into_iter().enumerate() {
                cx.ctaid = ctaid;
                for &i in loads {
                    ev.clear();
                    if w.thread_events(i, &mut cx, &mut ev).is_err() || w.truncated {
                        break 'dim;
                    }
                    for (_, u) in &ev {
                        if u >> PARAM_SHIFT != u64::from(p) {
                            continue;
                        }
                        if seen[1 - side].contains(u) {
                            return true;
                        }
                        seen[side].insert(*u);
                    }
                }
            }
        }
    }
    false
}

/// A concrete witness of intra-thread reuse: the threads of the TB at the grid's origin,
/// then of the TB at its opposite corner, one after the other, every load of `loads` at
/// every iteration (guards and trip counts evaluated exactly), until one thread reads an
/// element of `p` in two different executions (`true`) or [`WITNESS_POINTS`] points per TB
/// are spent or the TBs end (`false`: no answer either way). The dependence test can only
/// prove the absence of reuse; a kernel that re-reads a table in a loop (LIBOR's rates,
/// rr_friendly's windows) shows it in its first thread, and a stencil that clamps its
/// neighbours at the grid's far edge (srad's east and south coefficients) in the last TB.
pub fn intra_thread_witness(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
    loads: &[usize],
) -> bool {
    intra_thread_witness_at(a, launch, p, eb, loads, None)
}

/// [`intra_thread_witness`] over the first and the last `edge` threads of each of its two
/// TBs only (all of them for `None`): a quick look for launches the enumeration decides
/// anyway, where a witness that finds nothing walked two TBs for nothing, while the
/// rereads a witness shows sit in a TB's first threads or the grid's far edge.
pub fn intra_thread_witness_at(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
    loads: &[usize],
    edge: Option<u64>,
) -> bool {
    use crate::expr::Ctx;
    let (g, b) = (launch.grid, launch.block);
    let last = [g.x, g.y, g.z].map(|n| i128::from(n.max(1)) - 1);
    let corners: &[[i128; 3]] = if last == [0; 3] {
        &[[0; 3]]
    } else {
        &[[0; 3], last]
    };
    // The loads of `p` at element granularity: units are elements of `eb` bytes (should
    // the walker's element size differ, no witness is looked for).
    if crate::footprint::unit_bytes(crate::footprint::Granularity::Element, launch, p, eb) != eb {
        return false;
    }
    let plan = crate::reuse::WalkPlan::of_loads(a, |i| loads.contains(&i));
    let mut w = crate::reuse::Walker::new(a, launch, crate::footprint::Granularity::Element, &plan);
    w.limit = WITNESS_POINTS;
    let mut cx = Ctx::new(a.model.loops.len());
    let mut ev: Vec<(u32, u64)> = Vec::new();
    let mut seen = crate::footprint::FxSet::default();
    for &ctaid in corners {
        cx.ctaid = ctaid;
        w.points = 0;
        w.truncated = false;
        let n = b.count();
        let near_edge = |t: u64| edge.is_none_or(|e| t < e || t + e >= n);
        'tb: for t in (0..n).filter(|&t| near_edge(t)) {
            cx.tid = thread_coords(t, b);
            seen.clear();
            for &i in loads {
                ev.clear();
                if w.thread_events(i, &mut cx, &mut ev).is_err() || w.truncated {
                    break 'tb;
                }
                // An execution's elements are distinct: one met again comes from another
                // execution (of this load or of an earlier one).
                // Units are tagged with their data structure: an address of a load of
                // `p` that falls in another structure's buffer witnesses nothing for `p`.
                for (_, u) in &ev {
                    if u >> crate::footprint::PARAM_SHIFT == u64::from(p) && !seen.insert(*u) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// The points [`crate::existence::existence_by_enumeration`] would visit (every thread
/// times every loop's largest trip count, per counted resolved load), or `None` when a loop
/// has no bound.
pub fn enumeration_points(a: &Analysis, launch: &BoundLaunch, r: &Ranges) -> Option<u64> {
    let threads = launch.num_tbs().saturating_mul(launch.block.count());
    let mut total = 0u64;
    for (i, site) in a.model.loads.iter().enumerate() {
        if a.unresolved.get(i).is_some_and(Option::is_some) || !a.model.counts(i) {
            continue;
        }
        let mut n = threads;
        for l in &site.loops {
            let t = u64::try_from(r.max_trip(*l)?.max(0)).ok()?;
            n = n.saturating_mul(t);
        }
        total = total.saturating_add(n);
    }
    Some(total)
}

/// Per-pair reference by enumeration: whether one thread reads an element of `p` with load
/// `i` and again with load `j` (different executions), visiting every thread and iteration;
/// `None` past `budget` points or on an evaluation error. For tests of [`intra_pair`].
pub fn intra_pair_by_enumeration(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
    (i, j): (usize, usize),
    budget: u64,
) -> Option<bool> {
    use crate::expr::Ctx;
    let mut w = PairWalk {
        a,
        base: (i128::from(p) + 1) << 36,
        eb: i128::from(eb),
        points: 0,
        budget,
    };
    let (g, b) = (launch.grid, launch.block);
    let mut cx = Ctx::new(a.model.loops.len());
    for tb in 0..launch.num_tbs() {
        cx.ctaid = [tb % g.x, (tb / g.x) % g.y, tb / (g.x * g.y)].map(i128::from);
        for t in 0..b.count() {
            cx.tid = thread_coords(t, b);
            // Elements load `i` reads in this thread; each execution adds its elements
            // once, so an element met again comes from another execution.
            let mut seen = crate::footprint::FxSet::default();
            let mut ei = Vec::new();
            w.walk(i, 0, &mut cx, &mut ei)?;
            for (f, l) in ei {
                for e in f..=l {
                    if !seen.insert(e) && i == j {
                        return Some(true);
                    }
                }
            }
            if i != j {
                let mut ej = Vec::new();
                w.walk(j, 0, &mut cx, &mut ej)?;
                if ej.iter().any(|&(f, l)| (f..=l).any(|e| seen.contains(&e))) {
                    return Some(true);
                }
            }
        }
    }
    Some(false)
}

/// The `%tid` of linear thread `t` in a block of shape `b` (x fastest).
fn thread_coords(t: u64, b: launch::Dim3) -> [i128; 3] {
    [t % b.x, (t / b.x) % b.y, t / (b.x * b.y)].map(i128::from)
}

/// The concrete walk of [`intra_pair_by_enumeration`].
struct PairWalk<'a> {
    a: &'a Analysis,
    base: i128,
    eb: i128,
    points: u64,
    budget: u64,
}

impl PairWalk<'_> {
    /// The element ranges of every execution of load `x` by the thread of `cx`.
    fn walk(
        &mut self,
        x: usize,
        depth: usize,
        cx: &mut crate::expr::Ctx,
        out: &mut Vec<(i128, i128)>,
    ) -> Option<()> {
        use crate::expr::{eval, TripSource};
        let model = &self.a.model;
        let site = model.loads.get(x)?;
        if depth == site.loops.len() {
            self.points += 1;
            if self.points > self.budget {
                return None;
            }
            for c in &site.cond {
                if eval(c, cx, model).ok()? == 0 {
                    return Some(());
                }
            }
            let ad = eval(&site.addr, cx, model).ok()?;
            if ad >= self.base && ad < self.base + (1 << 36) {
                let off = ad - self.base;
                out.push((off / self.eb, (off + i128::from(site.width) - 1) / self.eb));
            }
            return Some(());
        }
        let l = site.loops[depth];
        cx.iters[l.index()] = None;
        cx.trips[l.index()] = None;
        let t = model.trip(l, cx).ok()?;
        cx.trips[l.index()] = Some(t);
        for k in 0..t {
            cx.iters[l.index()] = Some(k);
            self.walk(x, depth + 1, cx, out)?;
        }
        cx.iters[l.index()] = None;
        cx.trips[l.index()] = None;
        Some(())
    }
}
