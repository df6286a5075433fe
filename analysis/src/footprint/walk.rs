//! The walk of one load in one TB ([`eval_load`]): its threads row by row ([`RowWalk`]), lane
//! masks of the guards and the loops, affine innermost loops as runs ([`TbWalk`]).

use super::*;

thread_local! {
    /// Value storage of the lane evaluators, reused from job to job.
    static LANE_VALS: std::cell::RefCell<Vec<i128>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[allow(clippy::too_many_arguments)]
pub(super) fn eval_load(
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
