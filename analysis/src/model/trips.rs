//! Trip counts of the model's loops: a loop's count (header executions) is `1 + ` the first
//! iteration at which an exit condition holds, evaluated per thread ([`TripPlan`] per loop,
//! made once): closed form when the exit is one comparison affine in `k` (checked at the
//! solution and its predecessor, with every 32-bit extension proved not to wrap on `[0, k]`),
//! else by stepping (bounded by [`STEP_LIMIT`]). Counts that depend on the launch
//! coordinates only are kept in a [`TripTable`].

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::*;

/// Largest number of iterations stepped through when no closed form applies.
pub const STEP_LIMIT: u64 = 1 << 22;

impl TripSource for KernelModel {
    fn trip(&self, l: LoopId, cx: &Ctx) -> Result<i128, EvalError> {
        let plan = self.trip_plan(l);
        if let Some(r) = &plan.unknown {
            return Err(EvalError::Unknown(r.clone()));
        }
        let slot = plan.table(self).and_then(|t| Some(&t.counts[t.index(cx)?]));
        if let Some(n) = slot.map(|s| s.load(Ordering::Relaxed)).filter(|&n| n > 0) {
            return Ok(i128::from(n));
        }
        let (st, mut c) = TripScratch::take(&plan.tape, l);
        c.clone_from(cx);
        let mut ev = PlanEval {
            m: self,
            tape: &plan.tape,
            st,
            at: None,
        };
        let r = count(l, plan, &self.loops[l.index()].exits, &mut c, &mut ev);
        TripScratch::put(&plan.tape, ev.st, c);
        if let (Some(s), Ok(n)) = (slot, &r) {
            // A count that does not fit (never, below the step limit) is not kept.
            if let Ok(n) = i64::try_from(*n) {
                s.store(n, Ordering::Relaxed);
            }
        }
        r
    }
}

/// Whether the exits of loop `l` (`info`) read nothing but constants, thread and TB
/// coordinates and `l`'s own iteration: its trip count is then a function of the
/// coordinates alone.
pub(crate) fn counts_by_coordinates(info: &LoopInfo, l: LoopId) -> bool {
    let mut own = !info.exits.is_empty();
    for e in &info.exits {
        e.visit_leaves(&mut |x| match x {
            Expr::Var(Var::Iter(q)) if *q == l => {}
            Expr::Const(_) | Expr::Var(Var::Tid(_)) | Expr::Var(Var::Ctaid(_)) => {}
            _ => own = false,
        });
    }
    own
}

/// Most entries of one [`TripTable`] (8 MiB).
pub const TRIP_TABLE_ENTRIES: u64 = 1 << 20;

/// Most entries of all of one model's [`TripTable`]s (16 MiB): a loop whose table does not
/// fit any more solves its counts as they are asked.
pub const TRIP_TABLES_ENTRIES: u64 = 1 << 21;

/// The trip counts of a loop whose count is a function of the launch coordinates
/// ([`counts_by_coordinates`]), by the coordinates its decisive conjuncts read, filled as
/// threads ask: the footprints, the reuse walk and the dependence ranges each ask every
/// thread's count (histogram_global small: 8,192 threads with counts of their own, each
/// evaluated three times before).
#[derive(Debug)]
pub(crate) struct TripTable {
    /// (thread `0` or TB `1`, dimension, extent) of each coordinate indexed, the first one
    /// fastest.
    axes: Vec<(usize, usize, u64)>,
    /// By index, the count, or 0 while not yet computed (a count is at least 1); a count
    /// that failed is not kept (its error is evaluated again).
    counts: Vec<AtomicI64>,
}

impl TripTable {
    /// The table of a loop with `decisive` conjuncts in a launch of `grid` and `block`;
    /// `None` when it would exceed [`TRIP_TABLE_ENTRIES`] or the `room` left of
    /// [`TRIP_TABLES_ENTRIES`] (which it takes).
    fn new(decisive: &[E], grid: [u32; 3], block: [u32; 3], room: &AtomicU64) -> Option<TripTable> {
        let axes = coordinate_axes(conjuncts_read(decisive), grid, block);
        let n = axes
            .iter()
            .try_fold(1u64, |p, a| p.checked_mul(a.2))
            .filter(|&n| n <= TRIP_TABLE_ENTRIES)?;
        room.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(n))
            .ok()?;
        Some(TripTable {
            axes,
            counts: (0..n).map(|_| AtomicI64::new(0)).collect(),
        })
    }

    /// The entry of `cx`'s coordinates; `None` outside the launch.
    fn index(&self, cx: &Ctx) -> Option<usize> {
        let mut i = 0u64;
        for &(k, d, n) in self.axes.iter().rev() {
            let c = if k == 0 { cx.tid[d] } else { cx.ctaid[d] };
            let c = u64::try_from(c).ok().filter(|&c| c < n)?;
            i = i * n + c;
        }
        usize::try_from(i).ok()
    }
}

/// Loop `l`'s trip count in `cx` (whose iteration of `l` it sets), over `plan`.
fn count(
    l: LoopId,
    plan: &TripPlan,
    exits: &[E],
    cx: &mut Ctx,
    ev: &mut PlanEval,
) -> Result<i128, EvalError> {
    if let Some(k) = closed_form(l, &plan.closed, exits, cx, ev)? {
        return Ok(k + 1);
    }
    for k in 0..STEP_LIMIT as i128 {
        ev.at(cx, l, k);
        for e in exits {
            if ev.eval(e, cx)? != 0 {
                return Ok(k + 1);
            }
        }
    }
    Err(EvalError::TripLimit(l, STEP_LIMIT))
}

/// The slots and context a trip count evaluates in, kept per worker thread from one count
/// to the next (histogram_global small asks 24,576 counts, each of which allocated both).
struct TripScratch;

/// Scratch entries kept per thread (a count may ask an inner loop's, which takes its own).
const TRIP_SCRATCH: usize = 8;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<(std::sync::Arc<Tape>, TapeState, Ctx)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl TripScratch {
    /// Slots for `tape` (a plan of loop `l`), all invalid, and a context to overwrite.
    fn take(tape: &std::sync::Arc<Tape>, l: LoopId) -> (TapeState, Ctx) {
        let found = SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let p = s
                .iter()
                .position(|(t, _, _)| std::sync::Arc::ptr_eq(t, tape))?;
            let (_, st, c) = s.swap_remove(p);
            Some((st, c))
        });
        match found {
            Some((mut st, c)) => {
                st.next();
                (st, c)
            }
            None => (
                TapeState::with_fixed(tape, tape.invariant_in(l)),
                Ctx::new(0),
            ),
        }
    }
    /// Gives back what [`TripScratch::take`] gave.
    fn put(tape: &std::sync::Arc<Tape>, st: TapeState, c: Ctx) {
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            if s.len() >= TRIP_SCRATCH {
                s.remove(0);
            }
            s.push((tape.clone(), st, c));
        });
    }
}

/// The launch-independent part of a loop's trip count, worked out once per loop
/// ([`KernelModel::trip_plan`]) instead of once per thread: why the count is unknown, and
/// the shape of its single exit for [`closed_form`].
#[derive(Debug)]
pub struct TripPlan {
    /// [`KernelModel::loop_reason`].
    pub(crate) unknown: Option<Reason>,
    /// The exit's conjuncts that do not depend on the iteration, evaluated in order (one
    /// that does not hold asks the caller to step), and what follows them.
    pub(crate) closed: (Vec<E>, ClosedShape),
    /// The conjuncts of the exits that decide the count in the model's launch: all of them,
    /// less those that read only thread and TB coordinates and hold in every thread
    /// ([`holds_in_launch`]). The closed form's iteration-free conjuncts are left out the
    /// same way, as they could only hold.
    pub(crate) decisive: Vec<E>,
    /// Everything a count evaluates (the closed form's expressions and the exits), compiled
    /// once per loop: through [`eval`], each of a count's several evaluations looked its
    /// tape up again (half of histogram_global's analysis, whose 8,192 threads each have
    /// their own count).
    tape: std::sync::Arc<Tape>,
    /// The launch's counts, for a loop whose count depends on the coordinates alone; made
    /// on first use ([`TripPlan::table`]).
    table: std::sync::OnceLock<Option<TripTable>>,
    /// [`counts_by_coordinates`].
    pub(crate) by_coordinates: bool,
}

/// A trip count's evaluations, over its plan's [`TripPlan::tape`]; the slots are valid
/// until the iteration changes ([`PlanEval::at`]).
struct PlanEval<'a> {
    m: &'a KernelModel,
    tape: &'a Tape,
    st: TapeState,
    /// The iteration the slots were computed at (`None`: none yet).
    at: Option<i128>,
}

impl PlanEval<'_> {
    fn eval(&mut self, e: &E, cx: &Ctx) -> Result<i128, EvalError> {
        match self.tape.node(e) {
            Some(n) => eval_tape(self.tape, &mut self.st, n, cx, self.m),
            None => eval(e, cx, self.m),
        }
    }
    /// Sets loop `l`'s iteration in `cx` to `k` (the plan's loop: the slots that do not
    /// read it stay valid).
    fn at(&mut self, cx: &mut Ctx, l: LoopId, k: i128) {
        if self.at == Some(k) {
            return;
        }
        cx.iters[l.index()] = Some(k);
        self.st.next_iter();
        self.at = Some(k);
    }
}

/// The exit's shape after its iteration-free conjuncts.
#[derive(Clone, Debug)]
pub(crate) enum ClosedShape {
    /// No closed form (several exits, several conjuncts over the iteration, a conjunct
    /// that is no comparison, or not affine): step.
    Step,
    /// Nothing depends on the iteration: the loop leaves at iteration 0.
    Zero,
    /// One comparison `lit` = `a rel b`, `d = a - b` affine in the iteration with
    /// coefficient `coef`, exact while every obligation holds.
    Affine {
        rel: Rel,
        lit: E,
        d: E,
        coef: E,
        obl: Vec<Obligation>,
    },
}

impl TripPlan {
    pub(crate) fn new(m: &KernelModel, l: LoopId) -> TripPlan {
        let exits = m.loops.get(l.index()).map_or(&[][..], |i| &i.exits[..]);
        let mut decisive = Vec::new();
        for e in exits {
            conjuncts(e, &mut decisive);
        }
        let always: Vec<E> = decisive
            .iter()
            .filter(|c| holds_in_launch(m, c, m.grid, m.block))
            .cloned()
            .collect();
        decisive.retain(|c| !always.iter().any(|a| std::sync::Arc::ptr_eq(a, c)));
        let mut closed = Self::closed(exits, l);
        closed
            .0
            .retain(|c| !always.iter().any(|a| std::sync::Arc::ptr_eq(a, c)));
        let mut roots: Vec<&E> = closed.0.iter().chain(exits).collect();
        if let ClosedShape::Affine {
            lit, d, coef, obl, ..
        } = &closed.1
        {
            roots.extend([lit, d, coef]);
            roots.extend(obl.iter().map(|o| &o.e));
        }
        TripPlan {
            unknown: m.loop_reason(l),
            tape: std::sync::Arc::new(Tape::new(roots)),
            closed,
            decisive,
            table: std::sync::OnceLock::new(),
            by_coordinates: m
                .loops
                .get(l.index())
                .is_some_and(|info| counts_by_coordinates(info, l)),
        }
    }

    /// The loop's [`TripTable`] in `m`'s launch, when its count depends on the coordinates
    /// alone and the table is small enough.
    pub(crate) fn table(&self, m: &KernelModel) -> Option<&TripTable> {
        self.table
            .get_or_init(|| {
                self.by_coordinates
                    .then(|| TripTable::new(&self.decisive, m.grid, m.block, &m.trip_table_room))
                    .flatten()
            })
            .as_ref()
    }

    /// [`TripPlan::closed`] of a loop with `exits`.
    fn closed(exits: &[E], l: LoopId) -> (Vec<E>, ClosedShape) {
        let [exit] = exits else {
            return (Vec::new(), ClosedShape::Step);
        };
        let k = Var::Iter(l);
        let dep = |x: &Expr| matches!(x, Expr::Var(v) if *v == k) || matches!(x, Expr::Trip(_));
        let mut lits = Vec::new();
        conjuncts(exit, &mut lits);
        let mut free = Vec::new();
        let mut rel = None;
        for lit in lits {
            let mut d = false;
            lit.visit_leaves(&mut |x| d |= dep(x));
            if !d {
                free.push(lit);
            } else if rel.is_some() {
                // The conjuncts before this one are still evaluated, as they were.
                return (free, ClosedShape::Step);
            } else {
                rel = Some(lit);
            }
        }
        let shape = match rel.as_ref().map(|lit| (lit, &**lit)) {
            None => ClosedShape::Zero,
            Some((lit, Expr::Cmp(r, a, b))) => {
                let d = sub(a.clone(), b.clone());
                let mut obl = Vec::new();
                match linear_coef(&d, k, &mut obl, &dep) {
                    Some(coef) => ClosedShape::Affine {
                        rel: *r,
                        lit: lit.clone(),
                        d,
                        coef,
                        obl,
                    },
                    None => ClosedShape::Step,
                }
            }
            Some(_) => ClosedShape::Step,
        };
        (free, shape)
    }
}

/// The conjuncts of `e` (its `And` operands, recursively).
pub(crate) fn conjuncts(e: &E, out: &mut Vec<E>) {
    match &**e {
        Expr::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        _ => out.push(e.clone()),
    }
}

/// Most points [`holds_in_launch`] evaluates.
const LAUNCH_POINTS: u64 = 1 << 16;

/// Whether `e`, reading only constants and thread and TB coordinates (at least one), is
/// true in every thread of the launch: evaluated at every combination of the coordinates it
/// reads, when there are at most [`LAUNCH_POINTS`].
pub(crate) fn holds_in_launch(ts: &dyn TripSource, e: &E, grid: [u32; 3], block: [u32; 3]) -> bool {
    let mut only_coords = true;
    e.visit_leaves(&mut |x| {
        only_coords &= matches!(
            x,
            Expr::Const(_) | Expr::Var(Var::Tid(_)) | Expr::Var(Var::Ctaid(_))
        )
    });
    let used = coordinates_read(e);
    if !only_coords || used == [[false; 3]; 2] {
        return false;
    }
    let mut cx = Ctx::new(0);
    each_coordinate(used, grid, block, LAUNCH_POINTS, &mut cx, |cx| {
        eval(e, cx, ts).is_ok_and(|v| v != 0)
    }) == Some(true)
}

/// The thread (`[0]`) and TB (`[1]`) coordinates `e` reads, by dimension.
pub(crate) fn coordinates_read(e: &Expr) -> [[bool; 3]; 2] {
    let mut used = [[false; 3]; 2];
    e.visit_leaves(&mut |x| match x {
        Expr::Var(Var::Tid(d)) => used[0][usize::from(*d).min(2)] = true,
        Expr::Var(Var::Ctaid(d)) => used[1][usize::from(*d).min(2)] = true,
        _ => {}
    });
    used
}

/// The coordinates any of `conjuncts` reads ([`coordinates_read`]).
pub(crate) fn conjuncts_read(conjuncts: &[E]) -> [[bool; 3]; 2] {
    let mut used = [[false; 3]; 2];
    for c in conjuncts {
        let u = coordinates_read(c);
        for (x, y) in used.iter_mut().flatten().zip(u.iter().flatten()) {
            *x |= *y;
        }
    }
    used
}

/// (thread `0` or TB `1`, dimension, extent) of each coordinate `used` marks, threads
/// first, `x` first.
fn coordinate_axes(
    used: [[bool; 3]; 2],
    grid: [u32; 3],
    block: [u32; 3],
) -> Vec<(usize, usize, u64)> {
    let extents = [block, grid];
    (0..2)
        .flat_map(|k| (0..3).map(move |d| (k, d)))
        .filter(|&(k, d)| used[k][d])
        .map(|(k, d)| (k, d, u64::from(extents[k][d])))
        .collect()
}

/// Calls `f` with `cx`'s `%tid` and `%ctaid` set to every combination of the coordinates
/// `used` marks ([`coordinates_read`]) over `block` and `grid`, the first one fastest, until
/// it returns `false`: `Some(false)` then, `Some(true)` when every call returned `true`,
/// `None` (nothing called) when there are more than `limit` combinations.
pub(crate) fn each_coordinate(
    used: [[bool; 3]; 2],
    grid: [u32; 3],
    block: [u32; 3],
    limit: u64,
    cx: &mut Ctx,
    mut f: impl FnMut(&Ctx) -> bool,
) -> Option<bool> {
    let axes = coordinate_axes(used, grid, block);
    let points = axes
        .iter()
        .try_fold(1u64, |p, a| p.checked_mul(a.2))
        .filter(|&p| p <= limit)?;
    if points == 0 {
        return Some(true);
    }
    let mut at = vec![0u64; axes.len()];
    loop {
        for (&(k, d, _), &v) in axes.iter().zip(&at) {
            let c = if k == 0 { &mut cx.tid } else { &mut cx.ctaid };
            c[d] = i128::from(v);
        }
        if !f(cx) {
            return Some(false);
        }
        let mut i = 0;
        while i < axes.len() {
            at[i] += 1;
            if at[i] < axes[i].2 {
                break;
            }
            at[i] = 0;
            i += 1;
        }
        if i == axes.len() {
            return Some(true);
        }
    }
}

/// The first iteration at which the (single, affine) exit holds, when that can be solved
/// and verified; `None` asks the caller to step. `plan` is the exit's [`TripPlan`] shape.
fn closed_form(
    l: LoopId,
    (free, shape): &(Vec<E>, ClosedShape),
    exits: &[E],
    cx: &mut Ctx,
    ev: &mut PlanEval,
) -> Result<Option<i128>, EvalError> {
    let [_] = exits else { return Ok(None) };
    ev.at(cx, l, 0);
    for lit in free {
        if ev.eval(lit, cx)? == 0 {
            return Ok(None);
        }
    }
    let (r, lit, d, coef, obl) = match shape {
        ClosedShape::Step => return Ok(None),
        ClosedShape::Zero => return Ok(Some(0)),
        ClosedShape::Affine {
            rel,
            lit,
            d,
            coef,
            obl,
        } => (*rel, lit, d, coef, obl),
    };
    let d0 = ev.eval(d, cx)?;
    let ds = ev.eval(coef, cx)?;
    let ceil_div = |a: i128, b: i128| -> i128 { (a + b - 1).div_euclid(b) };
    let sol = match r {
        Rel::Lt | Rel::Le | Rel::Gt | Rel::Ge => {
            // Normalise to "d' < 0" or "d' <= 0".
            let (d0, ds, strict) = match r {
                Rel::Lt => (d0, ds, true),
                Rel::Le => (d0, ds, false),
                Rel::Gt => (-d0, -ds, true),
                _ => (-d0, -ds, false),
            };
            if (strict && d0 < 0) || (!strict && d0 <= 0) {
                Some(0)
            } else if ds >= 0 {
                None
            } else if strict {
                Some(d0.div_euclid(-ds) + 1)
            } else {
                Some(ceil_div(d0, -ds))
            }
        }
        Rel::Eq => {
            if d0 == 0 {
                Some(0)
            } else if ds != 0 && d0 % ds == 0 && -d0 / ds > 0 {
                Some(-d0 / ds)
            } else {
                None
            }
        }
        Rel::Ne => {
            if d0 != 0 {
                Some(0)
            } else if ds != 0 {
                Some(1)
            } else {
                None
            }
        }
    };
    let Some(s) = sol else { return Ok(None) };
    if s > STEP_LIMIT as i128 * 1024 {
        return Ok(None);
    }
    // Verify: no extension wraps on [0, s], the exit holds at s and not at s - 1. The exit
    // is the free conjuncts, which hold (above) and do not depend on the iteration, and
    // `lit`: `lit` alone decides it (on scalar_prod the free conjuncts were 49 of the
    // exit's 60 nodes, evaluated twice more per thread).
    for at in [0, s] {
        ev.at(cx, l, at);
        for o in obl {
            if !o.holds(ev.eval(&o.e, cx)?) {
                return Ok(None);
            }
        }
    }
    ev.at(cx, l, s);
    if ev.eval(lit, cx)? == 0 {
        return Ok(None);
    }
    if s > 0 {
        ev.at(cx, l, s - 1);
        if ev.eval(lit, cx)? != 0 {
            return Ok(None);
        }
    }
    Ok(Some(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::tests::NoTrips;

    /// histogram_global's grid-stride loop over `n` bytes, 256 threads per TB.
    fn histogram(grid: u32, n: u64) -> KernelModel {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let m = ptx_parser::parse_file(&root.join("kernels/histogram/histogram.compute_70.ptx"))
            .expect("parse");
        let f = m.kernel("histogram_global").expect("kernel");
        let l = launch::Launch::from_json(
            &format!(
                r#"{{"format": "paver-launch/1", "kernel": "histogram_global",
                    "grid": [{grid}, 1, 1], "block": [256, 1, 1], "params": [
                    {{"index": 0, "buffer": {{"type": "u8", "len": {n}, "init": "zeros"}}}},
                    {{"index": 1, "buffer": {{"type": "u32", "len": 256, "init": "zeros"}}}},
                    {{"index": 2, "value": {n}}}]}}"#
            ),
            &root.join("launch.json"),
        )
        .expect("launch");
        let b = l
            .bind("histogram_global", &crate::param_sigs(f), &root)
            .expect("bind");
        crate::addr::analyze_kernel(f, &b)
    }

    /// Loop `l`'s count in `cx` evaluated afresh, without the plan's table.
    fn uncached(m: &KernelModel, l: LoopId, cx: &Ctx) -> i128 {
        let plan = m.trip_plan(l);
        let mut ev = PlanEval {
            m,
            tape: &plan.tape,
            st: TapeState::with_fixed(&plan.tape, plan.tape.invariant_in(l)),
            at: None,
        };
        count(l, plan, &m.loops[l.index()].exits, &mut cx.clone(), &mut ev).expect("count")
    }

    /// A count that depends on the thread (`n` not a multiple of the grid's stride: the
    /// first 1,000 threads run one iteration more) is kept by `%tid.x` and `%ctaid.x` and
    /// read back as computed; coordinates outside the launch are evaluated, not looked up.
    #[test]
    fn the_launch_table_gives_every_threads_own_count() {
        let (grid, n) = (4u32, 3 * 1024 + 1000);
        let m = histogram(grid, n);
        let l = LoopId(0);
        let table = m.trip_plan(l).table(&m).expect("a table");
        assert_eq!(table.counts.len(), 256 * grid as usize);
        assert_eq!(
            m.trip_table_room.load(Ordering::Relaxed),
            TRIP_TABLES_ENTRIES - 1024,
            "the table takes its entries from the model's room"
        );
        let mut cx = Ctx::new(m.loops.len());
        for pass in 0..2 {
            for b in 0..grid {
                for t in 0..256 {
                    cx.ctaid[0] = i128::from(b);
                    cx.tid[0] = i128::from(t);
                    let want = uncached(&m, l, &cx);
                    let gid = u64::from(b * 256 + t);
                    assert_eq!(want, i128::from(3 + u64::from(gid < 1000)), "thread {gid}");
                    assert_eq!(m.trip(l, &cx).unwrap(), want, "pass {pass}, thread {gid}");
                }
            }
        }
        assert!(table.counts.iter().all(|c| c.load(Ordering::Relaxed) > 0));
        cx.tid[0] = 256;
        cx.ctaid[0] = 3;
        assert_eq!(table.index(&cx), None);
        assert_eq!(m.trip(l, &cx).unwrap(), uncached(&m, l, &cx));
        // No room left: no table, the same counts.
        let m = histogram(grid, n);
        m.trip_table_room.store(1023, Ordering::Relaxed);
        assert!(m.trip_plan(l).table(&m).is_none());
        cx.tid[0] = 7;
        assert_eq!(m.trip(l, &cx).unwrap(), 4);
    }

    /// A loop exit's conjunct is left out of its trip count's dependences only when it holds
    /// in every thread of the launch.
    #[test]
    fn conditions_that_hold_in_every_thread_of_a_launch() {
        let x = || var(Var::Tid(0));
        let by = || var(Var::Ctaid(1));
        let lt = |a: E, n: i128| cmp(Rel::Lt, a, konst(n));
        let grid = [4, 3, 1];
        let holds = |e: &E, bx: u32| holds_in_launch(&NoTrips, e, grid, [bx, 1, 1]);
        assert!(holds(&lt(x(), 32), 32));
        assert!(!holds(&lt(x(), 32), 33), "false in thread 32");
        assert!(holds(&or(lt(x(), 5), lt(by(), 3)), 64));
        assert!(
            !holds(&or(lt(x(), 5), lt(by(), 2)), 64),
            "false in TB y 2, threads 5.."
        );
        // Constants alone, or anything that reads more than the coordinates: never.
        assert!(!holds(&lt(konst(0), 1), 32));
        assert!(!holds(
            &lt(add(x(), var(Var::Iter(LoopId(0)))), 1 << 20),
            32
        ));
        // Too many combinations to enumerate: not claimed.
        let big = [1 << 12, 1 << 12, 1];
        assert!(!holds_in_launch(
            &NoTrips,
            &lt(add(x(), var(Var::Ctaid(0))), 1 << 30),
            big,
            [32, 1, 1]
        ));
    }
}
