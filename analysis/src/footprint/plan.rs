//! Planning one load's walk before any TB is visited: which grid and block dimensions its
//! address, guards and trip counts read ([`LoadPlan`]'s projection), which guards are affine
//! in a loop counter ([`affine_range`]) and whether its innermost loop is an arithmetic run
//! of units ([`innermost_affine`]).

use super::*;

pub(super) struct LoadPlan<'a> {
    pub(super) site: &'a LoadSite,
    pub(super) dims: [bool; 3],
    /// For the innermost loop: the address and the guards as affine functions of its counter.
    pub(super) inner_affine: Option<InnerAffine>,
    /// Guard literals not depending on any loop counter / depending on some.
    pub(super) outer_conds: Vec<E>,
    pub(super) inner_conds: Vec<E>,
    /// For a load outside loops: the address and guard as affine functions of `%tid.x`, so
    /// a warp's lanes along `x` become one run.
    pub(super) lanes: Option<LanePlan>,
    /// Every expression above compiled into one DAG (shared nodes evaluated once per call).
    pub(super) tape: Tape,
    /// For a load outside loops whose tape is cheap to evaluate eagerly: the nodes of its
    /// address and guards (address first), for evaluating a warp row's lanes together
    /// ([`LaneEval`]).
    pub(super) lane_roots: Option<Vec<u32>>,
    /// For a load in loops: its address and the guards that mention a loop counter compiled
    /// apart, with their nodes (address first), for evaluating consecutive iterations of the
    /// innermost loop together ([`LaneAxis::Iter`]).
    pub(super) iter_tape: Option<(Tape, Vec<u32>)>,
    /// [`Tape::thread_only`] of `iter_tape` and of `tape`, for the warp rows' passes
    /// ([`LaneEval::run_reusing`]).
    pub(super) iter_thread_only: Vec<bool>,
    pub(super) tape_thread_only: Vec<bool>,
    /// The pass shared with the other loads of the same loops, and this load's place in it
    /// ([`group_iterations`]).
    pub(super) iter_group: Option<Membership>,
    /// For a loop-free load with [`LoadPlan::lane_roots`]: the warp pass shared with the
    /// kernel's other such loads, and this load's place in it ([`group_lanes`]).
    pub(super) lane_group: Option<Membership>,
    /// For a load with a [`RowPlan`] and guards outside its loops: the pass over a warp
    /// row's guards shared with the kernel's other such loads ([`group_rows`]; a member's
    /// nodes are its guards).
    pub(super) row_group: Option<Membership>,
    /// The recurrences of the outermost loop that tape reads: stepped for a warp row's
    /// lanes together before its threads walk ([`prestep_lanes`]).
    pub(super) outer_recs: Vec<std::sync::Arc<RecSys>>,
    /// For a load in loops whose expressions are all cheap eagerly and step no recurrence:
    /// what a warp row's walk evaluates for its lanes together ([`RowWalk`]).
    pub(super) row: Option<RowPlan>,
}

/// A load's guards outside its loops compiled apart (evaluated before the loops are
/// entered), with their nodes; `tape` then answers everything else for the row's lanes.
pub(super) struct RowPlan {
    pub(super) outer: Tape,
    pub(super) outer_nodes: Vec<u32>,
}

/// A loop-free load's address and guard as affine functions of `%tid.x`.
pub(super) struct LanePlan {
    /// Coefficient of `%tid.x` in the address, and the address's wrap obligations.
    pub(super) coef: E,
    pub(super) obl: Vec<Obligation>,
    /// Guard literals free of `%tid.x`.
    pub(super) free: Vec<E>,
    /// Guard literals `d(x) rel 0`: relation, `d`, its coefficient, its obligations.
    pub(super) affine: Vec<(Rel, E, E, Vec<Obligation>)>,
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
        crate::model::conjuncts(c, &mut lits);
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

pub(super) fn plan<'a>(
    model: &KernelModel,
    s: &'a LoadSite,
    grid: [u32; 3],
    block: [u32; 3],
) -> LoadPlan<'a> {
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
