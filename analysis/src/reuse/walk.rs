//! The walk of the access streams: what each load's walk needs, compiled once
//! ([`WalkPlan`]), the [`Walker`] that enumerates a TB's threads and iterations, and the
//! events it emits ([`Event`], ordered by their program-order [`Key`]).

use super::*;

/// One access event: program-order key, warp, unit id.
pub(crate) type Event = (Key, u32, u64);

/// Where a walk puts its events: the reuse metrics keep each event's program-order key,
/// the descriptors' existence questions only its thread and unit (building the key, an
/// inline copy of the loop prefix per event, was most of their walk).
pub(crate) trait EventSink {
    /// Whether [`EventSink::event`] reads its key (`false`: the walk may pass any).
    const KEYED: bool;
    /// Unit `unit` read by `warp` (or thread) at the point of key `prefix` then `inst`.
    fn event(&mut self, prefix: &[u64], inst: u64, warp: u32, unit: u64);
}

impl EventSink for Vec<Event> {
    const KEYED: bool = true;
    fn event(&mut self, prefix: &[u64], inst: u64, warp: u32, unit: u64) {
        self.push((Key::new(prefix, inst), warp, unit));
    }
}

/// (warp or thread, unit) pairs without keys.
impl EventSink for Vec<(u32, u64)> {
    const KEYED: bool = false;
    fn event(&mut self, _: &[u64], _: u64, warp: u32, unit: u64) {
        self.push((warp, unit));
    }
}

/// Words of a [`Key`] stored inline: three nested loops (two words each) and the load.
const KEY_INLINE: usize = 7;

/// A program-order key `(header(L1), k1, ..., load)`, ordered as the slice of its words.
/// Keys of up to [`KEY_INLINE`] words are stored inline: an enumeration emits one event per
/// point and unit (2^19 on the GEMM), where a vector per event cost an allocation each.
#[derive(Clone, Debug)]
pub(crate) enum Key {
    /// Length and words (the rest zero).
    Inline(u8, [u64; KEY_INLINE]),
    /// Longer keys.
    Heap(Vec<u64>),
}

impl Key {
    /// The key `prefix` followed by `last`.
    pub(super) fn new(prefix: &[u64], last: u64) -> Key {
        let len = prefix.len() + 1;
        if len <= KEY_INLINE {
            let mut w = [0u64; KEY_INLINE];
            w[..prefix.len()].copy_from_slice(prefix);
            w[prefix.len()] = last;
            Key::Inline(len as u8, w)
        } else {
            let mut v = prefix.to_vec();
            v.push(last);
            Key::Heap(v)
        }
    }
    /// The key's words.
    pub(super) fn as_slice(&self) -> &[u64] {
        match self {
            Key::Inline(n, w) => &w[..usize::from(*n)],
            Key::Heap(v) => v,
        }
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

fn mentions_iter(e: &Expr) -> bool {
    let mut m = false;
    e.visit_leaves(&mut |x| m |= matches!(x, Expr::Var(Var::Iter(_)) | Expr::Trip(_)));
    m
}

/// One load's expressions as a walk evaluates them: nodes of the plan's [`Tape`].
pub(super) struct LoadTape {
    /// Guards that do not mention a loop iteration: evaluated once per thread.
    outer: Vec<u32>,
    /// Guards that do: evaluated per point.
    inner: Vec<u32>,
    addr: u32,
    /// When the address and the guards are affine in the innermost loop's counter
    /// ([`crate::footprint::InnerAffine`]): their nodes, so that the innermost loop steps
    /// the address over the iterations where the guards hold instead of evaluating it per
    /// iteration (as the footprints do).
    pub(super) inner_affine: Option<AffineTape>,
}

/// [`crate::footprint::InnerAffine`] as nodes of a [`WalkPlan`]'s tape.
pub(super) struct AffineTape {
    coef: u32,
    /// The extensions the address crosses: nodes with their ranges.
    obl: Vec<(u32, Obligation)>,
    free: Vec<u32>,
    lits: Vec<AffineLitTape>,
}

/// A literal `d rel 0` affine in the counter: relation, `d`'s node, its coefficient's node,
/// and the obligations under which `d` is affine.
type AffineLitTape = (crate::expr::Rel, u32, u32, Vec<(u32, Obligation)>);

/// The loads of an analysis compiled for point-by-point walks ([`Walker`]): one [`Tape`]
/// for every load, so that what the loads of a thread have in common (an unrolled loop's
/// remainder guards, the thread's index arithmetic) is evaluated once per context, and
/// each load's guards split once by whether they mention an iteration. Shared by the
/// walkers of every sampled TB; the tree-walking [`crate::expr::eval`] it replaces was most
/// of a small launch's walk (gemv: half of the descriptors' enumeration).
pub(crate) struct WalkPlan {
    tape: Tape,
    /// The tape's nodes that read no iteration ([`Tape::iteration_free`]), which every
    /// walker keeps across iterations.
    iteration_free: Vec<bool>,
    pub(super) loads: Vec<Option<LoadTape>>,
    /// What each loop's trip count depends on, for the walkers' trip caches: the loads of
    /// one thread share their loops' counts.
    deps: Vec<crate::footprint::TripDeps>,
    /// The `%ctaid`-free trip counts every walker of this plan shares.
    shared_trips: crate::footprint::SharedTrips,
}

impl WalkPlan {
    /// Every resolved load that counts.
    pub(crate) fn new(a: &Analysis) -> WalkPlan {
        WalkPlan::of_loads(a, |_| true)
    }

    /// The resolved loads that count and that `keep` selects (by load index).
    pub(crate) fn of_loads(a: &Analysis, keep: impl Fn(usize) -> bool) -> WalkPlan {
        let model = &a.model;
        struct Roots<'e> {
            outer: Vec<&'e crate::expr::E>,
            inner: Vec<&'e crate::expr::E>,
            addr: &'e crate::expr::E,
            affine: Option<crate::footprint::InnerAffine>,
        }
        let roots: Vec<Option<Roots>> = model
            .loads
            .iter()
            .enumerate()
            .map(|(i, site)| {
                if a.unresolved[i].is_some() || !model.counts(i) || !keep(i) {
                    return None;
                }
                let (inner, outer): (Vec<&crate::expr::E>, Vec<&crate::expr::E>) =
                    site.cond.iter().partition(|c| mentions_iter(c));
                let affine = crate::footprint::innermost_affine(site, inner.iter().copied());
                Some(Roots {
                    outer,
                    inner,
                    addr: &site.addr,
                    affine,
                })
            })
            .collect();
        let mut all: Vec<&crate::expr::E> = Vec::new();
        for r in roots.iter().flatten() {
            all.extend(r.outer.iter().chain(&r.inner).copied());
            all.push(r.addr);
            if let Some(ia) = &r.affine {
                all.extend(ia.roots());
            }
        }
        let tape = Tape::new(all);
        let node = |e: &crate::expr::E| tape.node(e).expect("compiled root");
        let loads = roots
            .iter()
            .map(|r| {
                let r = r.as_ref()?;
                Some(LoadTape {
                    outer: r.outer.iter().map(|e| node(e)).collect(),
                    inner: r.inner.iter().map(|e| node(e)).collect(),
                    addr: node(r.addr),
                    inner_affine: r.affine.as_ref().map(|ia| {
                        let obl = |o: &[Obligation]| -> Vec<(u32, Obligation)> {
                            o.iter().map(|o| (node(&o.e), o.clone())).collect()
                        };
                        AffineTape {
                            coef: node(&ia.coef),
                            obl: obl(&ia.obl),
                            free: ia.free.iter().map(&node).collect(),
                            lits: ia
                                .lits
                                .iter()
                                .map(|(r, d, c, o)| (*r, node(d), node(c), obl(o)))
                                .collect(),
                        }
                    }),
                })
            })
            .collect();
        WalkPlan {
            iteration_free: tape.iteration_free(),
            tape,
            loads,
            deps: crate::footprint::all_trip_deps(model),
            shared_trips: crate::footprint::SharedTrips::default(),
        }
    }
}

/// Enumerates the access events of TBs point by point.
pub(crate) struct Walker<'a> {
    a: &'a Analysis,
    launch: &'a BoundLaunch,
    gran: Granularity,
    plan: &'a WalkPlan,
    /// Value slots of the plan's tape, valid for the context as it is since the last
    /// [`Walker::moved`].
    st: TapeState,
    /// Trip counts of the TB being walked, and its `%ctaid`.
    trips: crate::footprint::TripCache<'a>,
    trips_ctaid: [i128; 3],
    /// Points visited so far.
    pub(crate) points: u64,
    /// A TB's enumeration stopped at twice [`POINT_BUDGET`] points.
    pub(crate) truncated: bool,
    /// Events carry the thread's linear id instead of its warp.
    pub(crate) per_thread: bool,
    /// Points after which a TB's enumeration stops.
    pub(crate) limit: u64,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(
        a: &'a Analysis,
        launch: &'a BoundLaunch,
        gran: Granularity,
        plan: &'a WalkPlan,
    ) -> Self {
        Walker {
            a,
            launch,
            gran,
            plan,
            st: TapeState::with_fixed(&plan.tape, plan.iteration_free.clone()),
            trips: crate::footprint::TripCache::new(&plan.deps, &plan.shared_trips),
            trips_ctaid: [-1; 3],
            points: 0,
            truncated: false,
            per_thread: false,
            limit: 2 * POINT_BUDGET,
        }
    }

    /// Node `n` of the plan's tape in `cx`, which has not changed since the last
    /// [`Walker::moved`] (values computed since then are reused).
    fn eval(&mut self, n: u32, cx: &Ctx) -> Result<i128, EvalError> {
        eval_tape(&self.plan.tape, &mut self.st, n, cx, &self.a.model)
    }

    /// The context changed: forget the values computed in the old one.
    fn moved(&mut self) {
        self.st.next();
    }

    /// Only loop iterations or trip counts changed in the context: forget the values that
    /// read them, keep those of the thread and TB alone ([`Tape::iteration_free`]: a point
    /// of an innermost loop recomputed the thread's whole address).
    fn iter_moved(&mut self) {
        self.st.next_iter();
    }

    /// Sets loop `l`'s iteration in `cx` (a new context).
    fn set_iter(&mut self, cx: &mut Ctx, l: crate::loops::LoopId, k: Option<i128>) {
        cx.iters[l.index()] = k;
        self.iter_moved();
    }

    /// The events of one TB: (key, warp or thread, unit), unsorted.
    pub(crate) fn tb_events(&mut self, tb: u64) -> Result<Vec<Event>, EvalError> {
        let mut out = Vec::new();
        self.tb_events_into(tb, &mut out)?;
        Ok(out)
    }

    /// [`Walker::tb_events`] appended to `out`, whose allocation a caller walking
    /// many TBs reuses: a TB's events are megabytes, and a fresh vector per TB was paid in
    /// page faults.
    pub(crate) fn tb_events_into(
        &mut self,
        tb: u64,
        out: &mut impl EventSink,
    ) -> Result<(), EvalError> {
        self.each_guarded_load(tb, &mut |w, i, cx, warp| {
            let mut key = Vec::with_capacity(2 * w.a.model.loads[i].loops.len() + 1);
            w.walk(i, 0, cx, &mut key, warp, out)
        })
    }

    /// Calls `f(self, load, cx, warp)` for every thread of TB `tb` and every load whose
    /// guards free of loop counters hold for it, in the walk's order (threads in linear
    /// order, loads in program order), `cx` set to the thread.
    #[allow(clippy::type_complexity)]
    fn each_guarded_load(
        &mut self,
        tb: u64,
        f: &mut dyn FnMut(&mut Self, usize, &mut Ctx, u32) -> Result<(), EvalError>,
    ) -> Result<(), EvalError> {
        let (g, b) = (self.launch.grid, self.launch.block);
        let mut cx = Ctx::new(self.a.model.loops.len());
        cx.ctaid = [
            i128::from(tb % g.x),
            i128::from((tb / g.x) % g.y),
            i128::from(tb / (g.x * g.y)),
        ];
        let plan = self.plan;
        for t in 0..b.x * b.y * b.z {
            cx.tid = [
                i128::from(t % b.x),
                i128::from((t / b.x) % b.y),
                i128::from(t / (b.x * b.y)),
            ];
            self.moved();
            let warp = if self.per_thread { t } else { t / 32 } as u32;
            for (i, l) in plan.loads.iter().enumerate() {
                let Some(l) = l else {
                    continue;
                };
                let mut ok = true;
                for &c in &l.outer {
                    if self.eval(c, &cx)? == 0 {
                        ok = false;
                        break;
                    }
                }
                if ok {
                    f(self, i, &mut cx, warp)?;
                }
            }
        }
        Ok(())
    }

    /// The points [`Walker::tb_events_into`] visits in TB `tb` when no budget stops it,
    /// counted without walking innermost loops (their trip counts are the points): a walk
    /// that would pass its budget is known before it starts. Evaluates what the walk
    /// evaluates before each point, in the same order, so it fails where the walk would.
    pub(crate) fn tb_points(&mut self, tb: u64) -> Result<u64, EvalError> {
        let mut n = 0u64;
        self.each_guarded_load(tb, &mut |w, i, cx, _| {
            n = n.saturating_add(w.count(i, 0, cx)?);
            Ok(())
        })?;
        Ok(n)
    }

    /// Enters loop `lp` in `cx`: its trip count for the context (memoised per TB), set in
    /// `cx` with the iteration left unset.
    fn enter(&mut self, lp: crate::loops::LoopId, cx: &mut Ctx) -> Result<i128, EvalError> {
        cx.trips[lp.index()] = None;
        self.set_iter(cx, lp, None);
        if self.trips_ctaid != cx.ctaid {
            self.trips.clear();
            self.trips_ctaid = cx.ctaid;
        }
        let t = self.trips.trip(&self.a.model, lp, cx)?;
        cx.trips[lp.index()] = Some(t);
        self.iter_moved();
        Ok(t)
    }

    /// The points of load `i` below loop depth `depth` (see [`Walker::tb_points`]).
    fn count(&mut self, i: usize, depth: usize, cx: &mut Ctx) -> Result<u64, EvalError> {
        let model = &self.a.model;
        let site = &model.loads[i];
        if depth == site.loops.len() {
            return Ok(1);
        }
        let lp = site.loops[depth];
        let t = self.enter(lp, cx)?;
        let mut n = 0u64;
        if depth + 1 == site.loops.len() {
            n = u64::try_from(t).unwrap_or(0);
        } else {
            for k in 0..t {
                self.set_iter(cx, lp, Some(k));
                n = n.saturating_add(self.count(i, depth + 1, cx)?);
            }
        }
        cx.trips[lp.index()] = None;
        self.set_iter(cx, lp, None);
        Ok(n)
    }

    /// The events of load `i` in the thread of `cx` (its `%ctaid` and `%tid` set), with the
    /// thread's linear id 0: its accesses in program order, each execution's units once.
    pub(crate) fn thread_events(
        &mut self,
        i: usize,
        cx: &mut Ctx,
        out: &mut impl EventSink,
    ) -> Result<(), EvalError> {
        let plan = self.plan;
        let Some(l) = &plan.loads[i] else {
            return Ok(());
        };
        // The caller set the context.
        self.moved();
        for &c in &l.outer {
            if self.eval(c, cx)? == 0 {
                return Ok(());
            }
        }
        let mut key = Vec::with_capacity(2 * self.a.model.loads[i].loops.len() + 1);
        self.walk(i, 0, cx, &mut key, 0, out)
    }

    fn walk(
        &mut self,
        i: usize,
        depth: usize,
        cx: &mut Ctx,
        key: &mut Vec<u64>,
        warp: u32,
        out: &mut impl EventSink,
    ) -> Result<(), EvalError> {
        let model = &self.a.model;
        let site = &model.loads[i];
        let plan = self.plan;
        let Some(l) = &plan.loads[i] else {
            return Ok(());
        };
        if depth == site.loops.len() {
            self.points += 1;
            for &c in &l.inner {
                if self.eval(c, cx)? == 0 {
                    return Ok(());
                }
            }
            let a = self.eval(l.addr, cx)?;
            self.emit(i, a, key, warp, out);
            return Ok(());
        }
        let lp = site.loops[depth];
        let t = self.enter(lp, cx)?;
        let header = self.header_pos(lp);
        if depth + 1 == site.loops.len() && t > 1 {
            let step = self.affine_step(i, lp, t, cx)?;
            if !matches!(step, Stepped::Walk) {
                // The points the loop below would visit, each address stepped from the
                // first; the guards hold on one interval of them (all, or none, when no
                // guard mentions the counter).
                let n = self.admit(t);
                if let Stepped::Run { a0, c, lo, hi } = step {
                    self.emit_run(i, (a0, c), (lo, hi.min(n)), header, key, warp, out);
                }
                cx.trips[lp.index()] = None;
                self.set_iter(cx, lp, None);
                return Ok(());
            }
        }
        for k in 0..t {
            if self.points > self.limit {
                self.truncated = true;
                break;
            }
            self.set_iter(cx, lp, Some(k));
            key.push(header);
            key.push(k as u64);
            self.walk(i, depth + 1, cx, key, warp, out)?;
            key.truncate(key.len() - 2);
        }
        cx.trips[lp.index()] = None;
        self.set_iter(cx, lp, None);
        Ok(())
    }

    /// The iterations of a `t`-iteration innermost loop the point budget lets the walk
    /// visit, counted as visited, as the per-iteration walk counts them: it enters an
    /// iteration while at most [`Walker::limit`] points are spent, else stops truncated.
    fn admit(&mut self, t: i128) -> i128 {
        let room = i128::from(self.limit.saturating_add(1).saturating_sub(self.points));
        let n = t.min(room);
        if n < t {
            self.truncated = true;
        }
        self.points += n as u64;
        n
    }

    /// For load `i`'s innermost loop `lp` of `t > 1` iterations in `cx`: [`Stepped`].
    fn affine_step(
        &mut self,
        i: usize,
        lp: crate::loops::LoopId,
        t: i128,
        cx: &mut Ctx,
    ) -> Result<Stepped, EvalError> {
        let plan = self.plan;
        let Some(l) = &plan.loads[i] else {
            return Ok(Stepped::Walk);
        };
        let Some(ia) = &l.inner_affine else {
            return Ok(Stepped::Walk);
        };
        let r = self.affine_interval(l, ia, lp, t, cx);
        self.set_iter(cx, lp, None);
        r
    }

    /// Whether the extensions `obl` are exact at iteration `at` of `lp` (`false` where they
    /// cannot be evaluated).
    fn holds_at(
        &mut self,
        cx: &mut Ctx,
        lp: crate::loops::LoopId,
        obl: &[(u32, Obligation)],
        at: i128,
    ) -> bool {
        self.set_iter(cx, lp, Some(at));
        obl.iter()
            .all(|(n, o)| self.eval(*n, cx).is_ok_and(|v| o.holds(v)))
    }

    /// [`Walker::affine_step`]: the guards that mention the counter hold on one interval of
    /// iterations. An extension crossed by an affine form is exact over the loop when its
    /// operand (affine in the counter) is in range at both ends. Anything that cannot be
    /// evaluated here (an operand under a branch the address does not take, say) leaves the
    /// loop to the per-iteration walk, which evaluates only what each iteration needs.
    fn affine_interval(
        &mut self,
        l: &LoadTape,
        ia: &AffineTape,
        lp: crate::loops::LoopId,
        t: i128,
        cx: &mut Ctx,
    ) -> Result<Stepped, EvalError> {
        for (_, _, _, obl) in &ia.lits {
            if !self.holds_at(cx, lp, obl, 0) || !self.holds_at(cx, lp, obl, t - 1) {
                return Ok(Stepped::Walk);
            }
        }
        self.set_iter(cx, lp, Some(0));
        for &g in &ia.free {
            match self.eval(g, cx) {
                Ok(0) => return Ok(Stepped::Never),
                Ok(_) => {}
                Err(_) => return Ok(Stepped::Walk),
            }
        }
        let mut ends = Vec::with_capacity(ia.lits.len());
        for &(r, d, c, _) in &ia.lits {
            match (self.eval(d, cx), self.eval(c, cx)) {
                (Ok(d0), Ok(ds)) => ends.push((r, d0, ds)),
                _ => return Ok(Stepped::Walk),
            }
        }
        let Some((lo, hi)) = crate::footprint::affine_range(ends.into_iter(), t) else {
            return Ok(Stepped::Walk);
        };
        if lo >= hi {
            return Ok(Stepped::Never);
        }
        if !self.holds_at(cx, lp, &ia.obl, lo) || !self.holds_at(cx, lp, &ia.obl, hi - 1) {
            return Ok(Stepped::Walk);
        }
        self.set_iter(cx, lp, Some(lo));
        let (Ok(a0), Ok(c)) = (self.eval(l.addr, cx), self.eval(ia.coef, cx)) else {
            return Ok(Stepped::Walk);
        };
        Ok(Stepped::Run { a0, c, lo, hi })
    }

    /// The events of one access of load `i` at address `a` under program-order prefix `key`.
    fn emit(&self, i: usize, a: i128, key: &[u64], warp: u32, out: &mut impl EventSink) {
        let site = &self.a.model.loads[i];
        // The data structure holding the address (none: no footprint).
        let Some((p, off)) = u64::try_from(a).ok().and_then(|a| self.launch.buffer_at(a)) else {
            return;
        };
        let ub = unit_bytes(self.gran, self.launch, p as u32, u64::from(site.width));
        let inst = site.inst.index() as u64;
        for u in off / ub..=(off + u64::from(site.width) - 1) / ub {
            out.event(key, inst, warp, ((p as u64) << PARAM_SHIFT) | u);
        }
    }

    /// The events of load `i` at iterations `lo..hi` of its innermost loop (header
    /// position `header`), where the address is `a0 + c * (k - lo)`. When the first and
    /// the last address fall in one data structure every address between them does (a
    /// structure's bytes are contiguous and the addresses monotone), so the structure and
    /// its unit size are looked up once instead of per point.
    #[allow(clippy::too_many_arguments)]
    fn emit_run<S: EventSink>(
        &self,
        i: usize,
        (a0, c): (i128, i128),
        (lo, hi): (i128, i128),
        header: u64,
        key: &mut Vec<u64>,
        warp: u32,
        out: &mut S,
    ) {
        if lo >= hi {
            return;
        }
        let site = &self.a.model.loads[i];
        let last = c.checked_mul(hi - 1 - lo).and_then(|d| a0.checked_add(d));
        let at = |a: i128| u64::try_from(a).ok().and_then(|a| self.launch.buffer_at(a));
        let one = match (at(a0), last.and_then(at)) {
            (Some((p, off0)), Some((q, _))) if p == q => Some((p, off0)),
            _ => None,
        };
        let Some((p, off0)) = one else {
            for k in lo..hi {
                key.push(header);
                key.push(k as u64);
                self.emit(i, a0.wrapping_add(c.wrapping_mul(k - lo)), key, warp, out);
                key.truncate(key.len() - 2);
            }
            return;
        };
        let width = u64::from(site.width);
        let ub = unit_bytes(self.gran, self.launch, p as u32, width);
        let inst = site.inst.index() as u64;
        let tag = (p as u64) << PARAM_SHIFT;
        if !S::KEYED {
            for k in lo..hi {
                let off = (i128::from(off0) + c * (k - lo)) as u64;
                for u in off / ub..=(off + width - 1) / ub {
                    out.event(&[], inst, warp, tag | u);
                }
            }
            return;
        }
        for k in lo..hi {
            // In the structure, as both ends are: the offset is the address's.
            let off = (i128::from(off0) + c * (k - lo)) as u64;
            key.push(header);
            key.push(k as u64);
            for u in off / ub..=(off + width - 1) / ub {
                out.event(key, inst, warp, tag | u);
            }
            key.truncate(key.len() - 2);
        }
    }

    fn header_pos(&self, l: crate::loops::LoopId) -> u64 {
        self.a
            .model
            .loops
            .get(l.index())
            .map_or(0, |x| u64::from(x.header_inst))
    }
}
