//! Evaluation of a compiled [`Tape`] over up to [`LANES`] threads or iterations at once
//! ([`LaneEval`]): the values a warp's lanes or a run of iterations take, computed node by node.

use super::*;

/// Most lanes [`LaneEval`] evaluates at once (a warp).
pub const LANES: usize = 32;

/// What the lanes of a [`LaneEval`] pass differ in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneAxis {
    /// `%tid.x`: lane `l` is the thread of the context with `%tid.x` increased by `l`
    /// (consecutive lanes of one warp row).
    Tid,
    /// The iteration of one loop: lane `l` is iteration `k0 + l` of the loop, `k0` being its
    /// iteration in the context (one thread's consecutive iterations).
    Iter(LoopId),
    /// The thread's place in a block of these dimensions, `x` fastest: lane `l` is the
    /// thread `l` places after the context's (the lanes of a warp, across rows of a block
    /// narrower than a warp).
    Threads([u32; 3]),
}

impl LaneAxis {
    /// Sets `c`, a copy of `cx`, to lane `l`'s context.
    pub(super) fn set_lane(self, c: &mut Ctx, cx: &Ctx, l: usize) {
        let l = l as i128;
        match self {
            LaneAxis::Tid => c.tid[0] = cx.tid[0] + l,
            LaneAxis::Iter(lp) => {
                if let Some(k) = c.iters.get_mut(lp.index()) {
                    *k = cx.iters[lp.index()].map(|k0| k0 + l);
                }
            }
            LaneAxis::Threads(b) => {
                // Only for leaves evaluated lane by lane: the division is not on the hot path.
                let (bx, by) = (i128::from(b[0]).max(1), i128::from(b[1]).max(1));
                let t = cx.tid[0] + bx * (cx.tid[1] + by * cx.tid[2]) + l;
                c.tid = [t % bx, (t / bx) % by, t / (bx * by)];
            }
        }
    }
}

/// Every node of a [`Tape`] evaluated for up to [`LANES`] contexts at once, contexts that
/// differ along one [`LaneAxis`]: one pass over the nodes in topological order, each node a
/// loop over the lanes, where evaluating context by context dispatches on every node of
/// every context. The pass is eager (both branches of a `select`, both operands of
/// `and`/`or`), so it gives up on the first error anywhere, even in a branch a lazy
/// evaluation would not take: the caller then evaluates those contexts one by one, which
/// reports exactly what a lazy evaluation reports.
#[derive(Debug, Default)]
pub struct LaneEval {
    /// `vals[node * lanes + lane]`, sized by each run.
    vals: Vec<i128>,
    /// Lanes of the last run.
    lanes: usize,
    /// The tape, lanes, first thread and TB of the last run along `%tid.x` that succeeded:
    /// whose values `vals` holds.
    last: Option<(u64, usize, [i128; 3], [i128; 3])>,
}

impl LaneEval {
    /// An evaluator storing its values in `vals` (its contents do not matter): a caller
    /// running many evaluators one after the other reuses one allocation.
    pub fn with_values(vals: Vec<i128>) -> LaneEval {
        LaneEval {
            vals,
            lanes: 0,
            last: None,
        }
    }

    /// The value storage, for reuse.
    pub fn into_values(self) -> Vec<i128> {
        self.vals
    }

    /// Evaluates every node of `t` for lanes `0..n` (`n <= LANES`) along `axis`; `false` on
    /// any error (nothing is reported: evaluate the lanes one by one instead).
    pub fn run(
        &mut self,
        t: &Tape,
        axis: LaneAxis,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
    ) -> bool {
        // One lane (a recurrence's step) is the common case of a long walk: compiled apart,
        // its lane loops vanish.
        if n == 1 {
            self.run_lanes(t, axis, 1, cx, ts, None, None)
        } else {
            self.run_lanes(t, axis, n.min(LANES), cx, ts, None, None)
        }
    }

    /// [`LaneEval::run`] along `%tid.x`, keeping the values of the nodes `thread_only`
    /// marks ([`Tape::thread_only`]) when the last run was of the same tape, lanes, threads
    /// and TB: a warp row's passes at the iterations of its loops recomputed the same
    /// thread-only guards and address parts at each (scalar_prod's unrolled prologue: a few
    /// hundred nodes of selects on `%tid.x`).
    pub fn run_reusing(
        &mut self,
        t: &Tape,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
        thread_only: &[bool],
    ) -> bool {
        let n = if n == 1 { 1 } else { n.min(LANES) };
        let same = t.id != 0
            && self.last == Some((t.id, n, cx.tid, cx.ctaid))
            && thread_only.len() == t.len();
        if same {
            self.run_lanes(t, LaneAxis::Tid, n, cx, ts, None, Some(thread_only))
        } else {
            self.run(t, LaneAxis::Tid, n, cx, ts)
        }
    }

    /// Evaluates every node of a recurrence's step `t` for lanes `0..n` (`n <= LANES`) along
    /// `%tid.x`, lane `l`'s registers `regs` holding `state[l * regs.len() ..]`; `false` on
    /// any error.
    pub fn run_steps(
        &mut self,
        t: &Tape,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
        regs: &[u32],
        state: &[i128],
    ) -> bool {
        let n = n.min(LANES);
        state.len() >= n * regs.len()
            && self.run_lanes(t, LaneAxis::Tid, n, cx, ts, Some((regs, state)), None)
    }

    /// [`LaneEval::run`], with the lanes' own values of some `Var::Phi` registers (`phis`:
    /// the registers and `state[lane * registers + register]`), the nodes `keep` marks left
    /// as the last run computed them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn run_lanes(
        &mut self,
        t: &Tape,
        axis: LaneAxis,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
        phis: Option<(&[u32], &[i128])>,
        keep: Option<&[bool]>,
    ) -> bool {
        // Set again at the end of a pass that succeeds.
        self.last = None;
        self.lanes = n;
        if self.vals.len() < t.len() * n {
            self.vals.resize(t.len() * n, 0);
        }
        // The loop whose iteration the lanes differ in, and the first lane's iteration.
        let iter = match axis {
            LaneAxis::Iter(l) => match cx.iters.get(l.index()).copied().flatten() {
                Some(k0) => Some((l, k0)),
                None => return false,
            },
            _ => None,
        };
        let set_lane = |c: &mut Ctx, l: usize| axis.set_lane(c, cx, l);
        // Along `LaneAxis::Threads`, the lanes' `%tid`, stepped from the context's thread,
        // `x` fastest (a tape has many `%tid` nodes).
        let lane_tids = match axis {
            LaneAxis::Threads(b) => {
                let (bx, by) = (i128::from(b[0]).max(1), i128::from(b[1]).max(1));
                let mut tids = [[0i128; 3]; LANES];
                let mut at = cx.tid;
                for t in tids.iter_mut().take(n) {
                    *t = at;
                    at[0] += 1;
                    if at[0] >= bx {
                        at[0] = 0;
                        at[1] += 1;
                        if at[1] >= by {
                            at[1] = 0;
                            at[2] += 1;
                        }
                    }
                }
                Some(tids)
            }
            _ => None,
        };
        let mut lane_cx: Option<Ctx> = None;
        for u in 0..t.len() as u32 {
            if keep.is_some_and(|k| k[u as usize]) {
                continue;
            }
            let (head, rest) = self.vals.split_at_mut(u as usize * n);
            let out = &mut rest[..n];
            let get = |x: u32| &head[x as usize * n..x as usize * n + n];
            match &t.nodes[u as usize] {
                Node::Const(c) => out.fill(*c),
                Node::Tid(0) if axis == LaneAxis::Tid => {
                    for (l, o) in out.iter_mut().enumerate() {
                        *o = cx.tid[0] + l as i128;
                    }
                }
                Node::Tid(d) => match &lane_tids {
                    Some(tids) => {
                        for (o, t) in out.iter_mut().zip(tids) {
                            *o = t[*d];
                        }
                    }
                    None => out.fill(cx.tid[*d]),
                },
                Node::Ctaid(d) => out.fill(cx.ctaid[*d]),
                Node::Add(a, b) => lanes2(out, get(*a), get(*b), |x, y| x.wrapping_add(y)),
                Node::Sub(a, b) => lanes2(out, get(*a), get(*b), |x, y| x.wrapping_sub(y)),
                Node::Mul(a, b) => lanes2(out, get(*a), get(*b), |x, y| x.wrapping_mul(y)),
                Node::Ext(bits, signed, a) => {
                    let a = get(*a);
                    match (*bits, *signed) {
                        (32, true) => lanes1(out, a, |x| i128::from(x as i32)),
                        (32, false) => lanes1(out, a, |x| i128::from(x as u32)),
                        (64, true) => lanes1(out, a, |x| i128::from(x as i64)),
                        (64, false) => lanes1(out, a, |x| i128::from(x as u64)),
                        (bits, signed) => lanes1(out, a, |x| ext_value(x, bits, signed)),
                    }
                }
                Node::Op(op, a, b) => {
                    let (a, b) = (get(*a), get(*b));
                    match op {
                        // The operations that cannot fail, without a match per lane.
                        IntOp::BitAnd => lanes2(out, a, b, |x, y| x & y),
                        IntOp::BitOr => lanes2(out, a, b, |x, y| x | y),
                        IntOp::BitXor => lanes2(out, a, b, |x, y| x ^ y),
                        IntOp::Min => lanes2(out, a, b, |x, y| x.min(y)),
                        IntOp::Max => lanes2(out, a, b, |x, y| x.max(y)),
                        _ => {
                            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                                match apply_op(*op, x, y) {
                                    Ok(v) => *o = v,
                                    Err(_) => return false,
                                }
                            }
                        }
                    }
                }
                Node::Cmp(r, a, b) => {
                    lanes2(out, get(*a), get(*b), |x, y| i128::from(r.holds(x, y)))
                }
                Node::Not(a) => lanes1(out, get(*a), |x| i128::from(x == 0)),
                Node::And(a, b) => {
                    lanes2(out, get(*a), get(*b), |x, y| i128::from(x != 0 && y != 0))
                }
                Node::Or(a, b) => {
                    lanes2(out, get(*a), get(*b), |x, y| i128::from(x != 0 || y != 0))
                }
                Node::Select(c, a, b) => {
                    let (c, a, b) = (get(*c), get(*a), get(*b));
                    for l in 0..n {
                        out[l] = if c[l] != 0 { a[l] } else { b[l] };
                    }
                }
                Node::Leaf(e) => {
                    // The lanes' own loop counter, or their own recurrence registers.
                    let own_iter = match (&**e, iter) {
                        (Expr::Var(Var::Iter(v)), Some((l, k0))) if *v == l => Some(k0),
                        _ => None,
                    };
                    let own_phi = match (&**e, phis) {
                        (Expr::Var(Var::Phi(reg)), Some((regs, state))) => regs
                            .iter()
                            .position(|x| x == reg)
                            .map(|ri| (ri, regs.len(), state)),
                        _ => None,
                    };
                    if let Some(k0) = own_iter {
                        for (l, o) in out.iter_mut().enumerate() {
                            *o = k0 + l as i128;
                        }
                    } else if let Some((ri, m, state)) = own_phi {
                        for (l, o) in out.iter_mut().enumerate() {
                            *o = state[l * m + ri];
                        }
                    } else if matches!(**e, Expr::Var(_)) {
                        // Any other variable is the same in every lane.
                        match eval_memo(e, cx, ts, &mut Memo::default()) {
                            Ok(v) => out.fill(v),
                            Err(_) => return false,
                        }
                    } else {
                        // Trip counts and unknowns: per lane, in the lane's context.
                        let c = lane_cx.get_or_insert_with(|| cx.clone());
                        if !per_lane(out, c, &set_lane, |c, _| {
                            eval_memo(e, c, ts, &mut Memo::default())
                        }) {
                            return false;
                        }
                    }
                }
                // A recurrence of the lanes' own loop: one history answers every lane.
                Node::Rec(r, i, k) if iter.is_some_and(|(l, _)| r.l == l) => {
                    if eval_rec_lanes(r, *i as usize, get(*k), cx, ts, out).is_err() {
                        return false;
                    }
                }
                Node::Rec(r, i, k) => {
                    let c = lane_cx.get_or_insert_with(|| cx.clone());
                    let k = get(*k).to_vec();
                    if !per_lane(out, c, &set_lane, |c, l| {
                        eval_rec(r, *i as usize, k[l], c, ts)
                    }) {
                        return false;
                    }
                }
            }
        }
        if axis == LaneAxis::Tid && phis.is_none() {
            self.last = Some((t.id, n, cx.tid, cx.ctaid));
        }
        true
    }

    /// The value of node `n` in lane `l` of the last [`LaneEval::run`].
    pub fn value(&self, n: u32, l: usize) -> i128 {
        self.vals[n as usize * self.lanes + l]
    }
}

/// `out[l] = f(lane l's context, l)` with `c` set to each lane's context by `set_lane`;
/// `false` at the first error.
fn per_lane(
    out: &mut [i128],
    c: &mut Ctx,
    set_lane: &impl Fn(&mut Ctx, usize),
    mut f: impl FnMut(&Ctx, usize) -> Result<i128, EvalError>,
) -> bool {
    for (l, o) in out.iter_mut().enumerate() {
        set_lane(c, l);
        match f(c, l) {
            Ok(v) => *o = v,
            Err(_) => return false,
        }
    }
    true
}

/// `out[l] = f(a[l])`.
fn lanes1(out: &mut [i128], a: &[i128], f: impl Fn(i128) -> i128) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

/// `out[l] = f(a[l], b[l])`.
fn lanes2(out: &mut [i128], a: &[i128], b: &[i128], f: impl Fn(i128, i128) -> i128) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::tests::NoTrips;
    #[test]
    fn warp_lanes_across_rows_equal_thread_by_thread_evaluation() {
        // Rows of 5 threads, 3 rows, 3 planes: a warp's lanes cross rows and planes.
        let b = [5u32, 3, 3];
        let (x, y, z) = (var(Var::Tid(0)), var(Var::Tid(1)), var(Var::Tid(2)));
        let lin = add(
            x.clone(),
            mul(konst(7), add(y.clone(), mul(konst(11), z.clone()))),
        );
        let addr = ext(
            add(mul(var(Var::Ctaid(0)), konst(1000)), sub(lin, konst(3050))),
            32,
            true,
        );
        let guard = and(cmp(Rel::Lt, x, konst(4)), not(cmp(Rel::Eq, y, z)));
        let wide = ext(mul(addr.clone(), konst(1 << 40)), 64, false);
        let roots = [addr, guard, wide];
        let tape = Tape::new(roots.iter());
        let nodes: Vec<u32> = roots.iter().map(|e| tape.node(e).unwrap()).collect();
        let mut le = LaneEval::default();
        let mut cx = Ctx::new(0);
        cx.ctaid[0] = 3;
        // From the block's first thread, from the middle of a row, up to its last thread.
        for (first, n) in [(0usize, 32usize), (7, 32), (32, 13), (40, 5)] {
            let f = first as i128;
            cx.tid = [f % 5, (f / 5) % 3, f / 15];
            assert!(le.run(&tape, LaneAxis::Threads(b), n, &cx, &NoTrips));
            for l in 0..n {
                let t = (first + l) as i128;
                let mut c = cx.clone();
                c.tid = [t % 5, (t / 5) % 3, t / 15];
                for (e, &nd) in roots.iter().zip(&nodes) {
                    assert_eq!(Ok(le.value(nd, l)), eval(e, &c, &NoTrips), "thread {t}");
                }
            }
        }
    }

    #[test]
    fn reused_thread_only_values_equal_a_fresh_pass() {
        // An address of the thread (a select on `%tid.x`) and of the loop's counter.
        let (x, j) = (var(Var::Tid(0)), var(Var::Iter(LoopId(0))));
        let thread = select(
            cmp(Rel::Lt, op(IntOp::Rem, x.clone(), konst(3)), konst(1)),
            mul(x.clone(), konst(7)),
            add(x, var(Var::Ctaid(0))),
        );
        let addr = add(thread.clone(), mul(j, konst(1000)));
        let tape = Tape::new([&addr]);
        let only = tape.thread_only();
        assert!(only[tape.node(&thread).unwrap() as usize]);
        assert!(!only[tape.node(&addr).unwrap() as usize]);
        let na = tape.node(&addr).unwrap();
        let mut le = LaneEval::default();
        let mut cx = Ctx::new(1);
        // Iterations of one row, then another row, then another TB, then back.
        for (tid, ctaid, k) in [
            (0, 0, 0),
            (0, 0, 1),
            (0, 0, 5),
            (32, 0, 5),
            (32, 2, 5),
            (0, 0, 2),
        ] {
            cx.tid[0] = tid;
            cx.ctaid[0] = ctaid;
            cx.iters[0] = Some(k);
            assert!(le.run_reusing(&tape, 32, &cx, &NoTrips, &only));
            let mut fresh = LaneEval::default();
            assert!(fresh.run(&tape, LaneAxis::Tid, 32, &cx, &NoTrips));
            for l in 0..32 {
                assert_eq!(
                    le.value(na, l),
                    fresh.value(na, l),
                    "tid {tid} ctaid {ctaid} k {k}"
                );
            }
        }
    }

    #[test]
    fn lane_pass_equals_lane_by_lane_evaluation() {
        // A clamped, wrapped index with a guard, and a division whose divisor is 0 on one
        // lane (in the branch not taken there).
        let x = add(mul(var(Var::Ctaid(0)), konst(8)), var(Var::Tid(0)));
        let clamped = select(cmp(Rel::Lt, x.clone(), konst(3)), konst(3), x.clone());
        let idx = ext(sub(clamped, konst(5)), 32, true);
        let guard = and(
            cmp(Rel::Ge, x.clone(), konst(1)),
            not(cmp(Rel::Eq, var(Var::Tid(1)), konst(2))),
        );
        let div = op(IntOp::Div, konst(100), sub(x.clone(), konst(11)));
        let safe = select(cmp(Rel::Eq, x.clone(), konst(11)), konst(0), div.clone());
        let roots = [idx.clone(), guard.clone(), safe.clone()];
        let tape = Tape::new(roots.iter());
        let nodes: Vec<u32> = roots.iter().map(|e| tape.node(e).unwrap()).collect();
        let mut le = LaneEval::default();
        let mut cx = Ctx::new(0);
        for (ctaid, tid1, n) in [(0, 0, 8), (1, 2, 5), (2, 1, 32)] {
            cx.ctaid[0] = ctaid;
            cx.tid[1] = tid1;
            cx.tid[0] = 0;
            // Lane 3 of TB 1 divides by zero in the branch the select does not take: the
            // eager pass gives up there, the lazy evaluation does not fail.
            let ok = le.run(&tape, LaneAxis::Tid, n, &cx, &NoTrips);
            assert_eq!(ok, !(ctaid == 1 && n > 3), "ctaid {ctaid}");
            for l in 0..n {
                let mut c = cx.clone();
                c.tid[0] = l as i128;
                assert!(eval(&safe, &c, &NoTrips).is_ok());
                if ok {
                    for (e, &nd) in roots.iter().zip(&nodes) {
                        assert_eq!(
                            Ok(le.value(nd, l)),
                            eval(e, &c, &NoTrips),
                            "ctaid {ctaid} lane {l}"
                        );
                    }
                }
            }
        }
    }
}
