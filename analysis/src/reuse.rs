//! LASER reuse metrics (Eq. 1 self reuse ratio, Eq. 3 directed pair ratio, LRU stack reuse
//! distance) over the access streams the static model implies.
//!
//! **Access order.** One *access* is one warp-level execution of a resolved global load
//! touching one data unit: the active lanes of a warp executing the same load at the same
//! loop iterations are coalesced to their distinct units. A warp's stream orders its
//! accesses by the program-order key `(header(L1), k1, ..., header(Ld), kd, load)` (loop
//! headers and the load by instruction position, `ki` the iteration of the `i`-th enclosing
//! loop), units ascending within one key. A TB's stream merges its warps' streams by key,
//! warps in id order within a key (lockstep warps). The kernel stream is the TB streams of
//! the sampled TBs concatenated in TB id order.
//!
//! Streams are enumerated point by point (thread x iteration), so for large launches the
//! metrics are computed on a bounded, evenly spaced sample of TBs ([`POINT_BUDGET`]
//! evaluations); [`Reuse::sampled_tbs`] says how many. Stack distances use a Fenwick tree
//! over time stamps (`O(n log n)` in the stream length).

use launch::BoundLaunch;
use serde::Serialize;

use crate::expr::{eval_tape, Ctx, EvalError, Expr, Obligation, Tape, TapeState, Var};
use crate::footprint::{unit_bytes, Granularity, Interval, PARAM_SHIFT};
use crate::locality::Graph;
use crate::Analysis;

/// Largest number of (thread, load, iteration) points enumerated for the reuse metrics.
pub const POINT_BUDGET: u64 = 1 << 18;
/// Largest number of unit comparisons spent on directed pair ratios.
pub const PAIR_BUDGET: u64 = 1 << 26;

/// A 10-bin histogram of ratios in `[0, 1]`: bin `i` holds `[i/10, (i+1)/10)`, the last bin
/// includes 1.
pub type RatioHistogram = [u64; 10];

/// Reuse metrics of one granularity of stream (warp or TB).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StreamReuse {
    /// Number of streams.
    pub streams: u64,
    /// Accesses over all streams (`size` of Eq. 1, summed).
    pub accesses: u64,
    /// Distinct units per stream, summed (`uniq` of Eq. 1).
    pub unique: u64,
    /// `1 - unique / accesses` (Eq. 1 pooled over the streams); 0 without accesses.
    pub self_reuse_ratio: f64,
    /// Histogram of the per-stream ratio `1 - uniq / size`.
    pub self_reuse_histogram: RatioHistogram,
    /// LRU stack distance histogram of the streams: bin 0 = distance 0, bin `i >= 1` =
    /// `[2^(i-1), 2^i)`.
    pub stack_distance_histogram: Vec<u64>,
    /// First accesses (infinite stack distance).
    pub cold_accesses: u64,
}

/// The reuse metrics of one analysis.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Reuse {
    /// TBs whose streams were enumerated.
    pub sampled_tbs: u64,
    /// TBs of the launch.
    pub total_tbs: u64,
    /// Warp streams.
    pub warp: StreamReuse,
    /// TB streams.
    pub tb: StreamReuse,
    /// Stack distances of the kernel stream (sampled TBs in id order).
    pub kernel_stack_distance_histogram: Vec<u64>,
    /// First accesses of the kernel stream.
    pub kernel_cold_accesses: u64,
    /// Directed pair ratio (Eq. 3) `R(x->y)` over ordered pairs of TBs `x` (sampled) and `y`
    /// with at least one shared unit.
    pub pair_ratio_histogram: RatioHistogram,
    /// Ordered pairs counted in [`Reuse::pair_ratio_histogram`].
    pub pairs: u64,
    /// Sampled TBs whose pairs were counted (bounded by [`PAIR_BUDGET`]).
    pub pair_sampled_tbs: u64,
    /// A single TB exceeded twice [`POINT_BUDGET`] points: its streams were cut short.
    pub truncated: bool,
}

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
    fn new(prefix: &[u64], last: u64) -> Key {
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
    fn as_slice(&self) -> &[u64] {
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

/// Bin of a ratio in a 10-bin histogram.
pub fn ratio_bin(r: f64) -> usize {
    ((r * 10.0).floor().max(0.0) as usize).min(9)
}

/// Bin of a stack distance (0, then powers of two).
fn distance_bin(d: u64) -> usize {
    if d == 0 {
        0
    } else {
        64 - d.leading_zeros() as usize
    }
}

/// LRU stack distances of `stream` added to `hist`; returns the number of cold accesses.
/// A Fenwick tree marks, per unit, the time of its latest access; the distance of an
/// access is the number of marks after the unit's previous access.
pub fn stack_distances(stream: &[u64], hist: &mut Vec<u64>) -> u64 {
    let n = stream.len();
    let mut tree = vec![0i64; n + 1];
    let add = |tree: &mut Vec<i64>, mut i: usize, v: i64| {
        i += 1;
        while i <= n {
            tree[i] += v;
            i += i & i.wrapping_neg();
        }
    };
    let prefix = |tree: &Vec<i64>, mut i: usize| -> i64 {
        let mut s = 0;
        while i > 0 {
            s += tree[i];
            i -= i & i.wrapping_neg();
        }
        s
    };
    let mut last: crate::footprint::FxMap<u64, usize> = Default::default();
    let mut cold = 0;
    for (t, &u) in stream.iter().enumerate() {
        match last.insert(u, t) {
            Some(p) => {
                let d = (prefix(&tree, t) - prefix(&tree, p + 1)) as u64;
                let b = distance_bin(d);
                if hist.len() <= b {
                    hist.resize(b + 1, 0);
                }
                hist[b] += 1;
                add(&mut tree, p, -1);
            }
            None => cold += 1,
        }
        add(&mut tree, t, 1);
    }
    cold
}

fn mentions_iter(e: &Expr) -> bool {
    let mut m = false;
    e.visit_leaves(&mut |x| m |= matches!(x, Expr::Var(Var::Iter(_)) | Expr::Trip(_)));
    m
}

/// One load's expressions as a walk evaluates them: nodes of the plan's [`Tape`].
struct LoadTape {
    /// Guards that do not mention a loop iteration: evaluated once per thread.
    outer: Vec<u32>,
    /// Guards that do: evaluated per point.
    inner: Vec<u32>,
    addr: u32,
    /// When the address and the guards are affine in the innermost loop's counter
    /// ([`crate::footprint::InnerAffine`]): their nodes, so that the innermost loop steps
    /// the address over the iterations where the guards hold instead of evaluating it per
    /// iteration (as the footprints do).
    inner_affine: Option<AffineTape>,
}

/// [`crate::footprint::InnerAffine`] as nodes of a [`WalkPlan`]'s tape.
struct AffineTape {
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
    loads: Vec<Option<LoadTape>>,
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

/// Warp and TB streams of one TB's events: (per-warp streams, TB stream).
fn streams(mut ev: Vec<Event>) -> (Vec<Vec<u64>>, Vec<u64>) {
    if let Some(order) = PackedOrder::of(&ev) {
        return order.streams(ev);
    }
    // Equal events are identical, so the unstable sort's result is unique.
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut ev[..]);
    ev.dedup();
    let nw = ev.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
    let mut warps = vec![Vec::new(); nw];
    let mut tb = Vec::with_capacity(ev.len());
    for (_, w, u) in ev {
        warps[w as usize].push(u);
        tb.push(u);
    }
    (warps, tb)
}

/// Events as `u128`s that sort and compare as the events do, where they fit: a TB's events
/// are 80 bytes each (the inline key), and sorting them was most of a large TB's cost (the
/// GEMM at N=4096 walks 2^19 points of one TB). Key word `i` is stored as `word + 1` in the
/// bits the largest such value needs (0 past the end of a shorter key, so a key sorts
/// before its extensions, as slices do), then the warp and the unit.
struct PackedOrder {
    /// Bits of each key position.
    key_bits: Vec<u32>,
    warp_bits: u32,
    unit_bits: u32,
}

impl PackedOrder {
    /// The packing of `ev`, when its fields fit in 128 bits.
    fn of(ev: &[Event]) -> Option<PackedOrder> {
        let bits = |v: u64| 64 - v.leading_zeros();
        let mut top: Vec<u64> = Vec::new();
        let (mut warp, mut unit) = (0u32, 0u64);
        for (k, w, u) in ev {
            let s = k.as_slice();
            if top.len() < s.len() {
                top.resize(s.len(), 0);
            }
            for (t, &x) in top.iter_mut().zip(s) {
                *t = (*t).max(x.checked_add(1)?);
            }
            warp = warp.max(*w);
            unit = unit.max(*u);
        }
        let order = PackedOrder {
            key_bits: top.iter().map(|&t| bits(t)).collect(),
            warp_bits: bits(u64::from(warp)),
            unit_bits: bits(unit),
        };
        let total: u32 = order.key_bits.iter().sum::<u32>() + order.warp_bits + order.unit_bits;
        (total <= 128).then_some(order)
    }

    fn pack(&self, (k, w, u): &Event) -> u128 {
        let s = k.as_slice();
        let mut x = 0u128;
        for (i, &b) in self.key_bits.iter().enumerate() {
            x = (x << b) | u128::from(s.get(i).map_or(0, |&v| v + 1));
        }
        (((x << self.warp_bits) | u128::from(*w)) << self.unit_bits) | u128::from(*u)
    }

    /// [`streams`] of `ev` through the packed form.
    fn streams(&self, ev: Vec<Event>) -> (Vec<Vec<u64>>, Vec<u64>) {
        use rayon::prelude::*;
        let mut packed: Vec<u128> = ev.par_iter().map(|e| self.pack(e)).collect();
        drop(ev);
        // A thread's events of one load ascend (iterations in order): runs the stable sort
        // merges rather than sorting from scratch.
        packed.par_sort();
        packed.dedup();
        let unit_mask = (1u128 << self.unit_bits) - 1;
        let warp_mask = (1u128 << self.warp_bits) - 1;
        let warp = |x: u128| ((x >> self.unit_bits) & warp_mask) as usize;
        let nw = packed.iter().map(|&x| warp(x) + 1).max().unwrap_or(0);
        let mut warps = vec![Vec::new(); nw];
        let mut tb = Vec::with_capacity(packed.len());
        for x in packed {
            let u = (x & unit_mask) as u64;
            warps[warp(x)].push(u);
            tb.push(u);
        }
        (warps, tb)
    }
}

fn add_stream(s: &mut StreamReuse, stream: &[u64]) {
    if stream.is_empty() {
        return;
    }
    let mut v = stream.to_vec();
    v.sort_unstable();
    v.dedup();
    s.streams += 1;
    s.accesses += stream.len() as u64;
    s.unique += v.len() as u64;
    s.self_reuse_histogram[ratio_bin(1.0 - v.len() as f64 / stream.len() as f64)] += 1;
    s.cold_accesses += stack_distances(stream, &mut s.stack_distance_histogram);
}

fn finish(s: &mut StreamReuse) {
    s.self_reuse_ratio = if s.accesses == 0 {
        0.0
    } else {
        1.0 - s.unique as f64 / s.accesses as f64
    };
}

/// Accesses of the sorted `(unit, count)` list `counts` whose unit lies in the sorted
/// disjoint intervals `iv`.
fn accesses_in(counts: &[(u64, u64)], iv: &[Interval]) -> u64 {
    let (mut j, mut shared) = (0usize, 0u64);
    for &(u, c) in counts {
        while j < iv.len() && iv[j].1 <= u {
            j += 1;
        }
        if j == iv.len() {
            break;
        }
        if iv[j].0 <= u {
            shared += c;
        }
    }
    shared
}

/// What one sampled TB contributes to the warp, TB and kernel streams.
struct SampledTb {
    warps: Vec<Vec<u64>>,
    stream: Vec<u64>,
    /// The TB stream's distinct units, ascending, with their access counts.
    counts: Vec<(u64, u64)>,
}

impl SampledTb {
    fn new(ev: Vec<Event>) -> SampledTb {
        let (warps, stream) = streams(ev);
        let mut sorted = stream.clone();
        sorted.sort_unstable();
        let mut counts: Vec<(u64, u64)> = Vec::new();
        for u in sorted {
            match counts.last_mut() {
                Some((x, n)) if *x == u => *n += 1,
                _ => counts.push((u, 1)),
            }
        }
        SampledTb {
            warps,
            stream,
            counts,
        }
    }
}

/// Computes the reuse metrics of `a` (whose graph is `g`) at granularity `gran`.
pub fn compute(a: &Analysis, launch: &BoundLaunch, gran: Granularity, g: &Graph) -> Reuse {
    walk(a, launch, gran).finish(a, g)
}

/// What [`Walker::affine_step`] decides for a load's innermost loop.
enum Stepped {
    /// The address or a guard is not affine in the counter over the loop (or could not be
    /// evaluated here): the caller walks each iteration.
    Walk,
    /// The guards fail in every iteration.
    Never,
    /// The guards hold on iterations `lo..hi`; the address of iteration `k` is
    /// `a0 + c (k - lo)`.
    Run {
        a0: i128,
        c: i128,
        lo: i128,
        hi: i128,
    },
}

/// The streams of the sampled TBs and the metrics that need no graph: the first half of
/// [`compute`], which callers can run beside the graph's construction.
pub struct Walked {
    out: Reuse,
    sample: Vec<u64>,
    tbs: Vec<SampledTb>,
}

/// Enumerates the sampled TBs' streams (in parallel; their streams are added in TB order,
/// so the result does not depend on the thread count) and computes the stream metrics.
pub fn walk(a: &Analysis, launch: &BoundLaunch, gran: Granularity) -> Walked {
    walk_with(a, launch, gran, &WalkPlan::new(a))
}

/// For up to `n` evenly spaced TBs: the points [`Walker::tb_points`] counts and the points
/// an unbudgeted walk of the TB visits (the tests check they are equal).
#[doc(hidden)]
pub fn counted_and_walked_points(
    a: &Analysis,
    launch: &BoundLaunch,
    n: u64,
) -> Result<Vec<(u64, u64)>, EvalError> {
    let plan = WalkPlan::new(a);
    let mut w = Walker::new(a, launch, Granularity::Element, &plan);
    w.limit = u64::MAX;
    let total = launch.num_tbs();
    let n = n.clamp(1, total.max(1));
    let mut ev: Vec<(u32, u64)> = Vec::new();
    (0..n)
        .map(|i| i * total / n)
        .filter(|&tb| tb < total)
        .map(|tb| {
            let counted = w.tb_points(tb)?;
            let before = w.points;
            ev.clear();
            w.tb_events_into(tb, &mut ev)?;
            Ok((counted, w.points - before))
        })
        .collect()
}

/// [`walk`] evaluating every iteration's address, without stepping affine addresses: the
/// reference the tests compare the stepped walk with.
#[doc(hidden)]
pub fn walk_per_iteration(a: &Analysis, launch: &BoundLaunch, gran: Granularity) -> Walked {
    let mut plan = WalkPlan::new(a);
    for l in plan.loads.iter_mut().flatten() {
        l.inner_affine = None;
    }
    walk_with(a, launch, gran, &plan)
}

fn walk_with(a: &Analysis, launch: &BoundLaunch, gran: Granularity, plan: &WalkPlan) -> Walked {
    use rayon::prelude::*;
    let total = launch.num_tbs();
    let mut out = Reuse {
        total_tbs: total,
        ..Reuse::default()
    };
    if total == 0 {
        return Walked {
            out,
            sample: Vec::new(),
            tbs: Vec::new(),
        };
    }
    // Cost of TB 0 sets the sample size.
    let mut w = Walker::new(a, launch, gran, plan);
    let first = w.tb_events(0).unwrap_or_default();
    let per_tb = w.points.max(1);
    let n = (POINT_BUDGET / per_tb).clamp(1, total);
    let sample: Vec<u64> = (0..n).map(|i| i * total / n).collect();
    let rest: Vec<(SampledTb, bool)> = sample[1..]
        .par_iter()
        .map(|&tb| {
            let mut w = Walker::new(a, launch, gran, plan);
            let ev = w.tb_events(tb).unwrap_or_default();
            (SampledTb::new(ev), w.truncated)
        })
        .collect();
    out.truncated = w.truncated || rest.iter().any(|r| r.1);
    let tbs: Vec<SampledTb> = std::iter::once(SampledTb::new(first))
        .chain(rest.into_iter().map(|r| r.0))
        .collect();
    let mut kernel = Vec::new();
    for t in &tbs {
        for ws in &t.warps {
            add_stream(&mut out.warp, ws);
        }
        add_stream(&mut out.tb, &t.stream);
        kernel.extend_from_slice(&t.stream);
    }
    out.sampled_tbs = sample.len() as u64;
    finish(&mut out.warp);
    finish(&mut out.tb);
    out.kernel_cold_accesses = stack_distances(&kernel, &mut out.kernel_stack_distance_histogram);
    Walked { out, sample, tbs }
}

impl Walked {
    /// Adds the directed pair ratios, which need the graph `g` of `a`.
    pub fn finish(self, a: &Analysis, g: &Graph) -> Reuse {
        use rayon::prelude::*;
        let Walked {
            mut out,
            sample,
            tbs,
        } = self;
        // Directed pair ratios, from the sampled TBs to their graph neighbours (the graph's
        // full rows hold the neighbours on both sides), for the TBs in sample order whose
        // comparisons fit in the budget (at least the first).
        let mut work = 0u64;
        let mut counted: Vec<usize> = Vec::new();
        for (idx, t) in tbs.iter().enumerate() {
            if t.counts.is_empty() {
                out.pair_sampled_tbs += 1;
                continue;
            }
            let row_len: usize = g
                .full_row(sample[idx] as u32)
                .iter()
                .map(|p| p.0.len())
                .sum();
            let cost = row_len as u64 * t.counts.len() as u64;
            if work > 0 && work + cost > PAIR_BUDGET {
                break;
            }
            work += cost;
            out.pair_sampled_tbs += 1;
            counted.push(idx);
        }
        // A neighbour's units are its classes' units, one class per parameter, in disjoint
        // ranges of unit ids: the accesses `x` shares with `y` are summed per parameter over
        // `y`'s classes, each class's count computed once per `x`.
        let params = &a.footprints.params;
        let class_of: Vec<Vec<u32>> = (0..params.len())
            .map(|k| a.footprints.class_table(k))
            .collect();
        let hists: Vec<RatioHistogram> = counted
            .par_iter()
            .map(|&idx| {
                let (x, counts) = (sample[idx] as u32, &tbs[idx].counts);
                let total_x: u64 = counts.iter().map(|c| c.1).sum();
                let mut memo: Vec<Vec<Option<u64>>> =
                    params.iter().map(|p| vec![None; p.classes.len()]).collect();
                let mut hist = RatioHistogram::default();
                let [below, above] = g.full_row(x);
                for &y in below.0.iter().chain(above.0) {
                    let mut shared = 0u64;
                    for (k, p) in params.iter().enumerate() {
                        let c = class_of[k][y as usize];
                        if c == u32::MAX {
                            continue;
                        }
                        shared += *memo[k][c as usize].get_or_insert_with(|| {
                            accesses_in(counts, &p.classes[c as usize].units)
                        });
                    }
                    hist[ratio_bin(shared as f64 / total_x as f64)] += 1;
                }
                hist
            })
            .collect();
        for h in hists {
            for (o, v) in out.pair_ratio_histogram.iter_mut().zip(h) {
                *o += v;
            }
        }
        out.pairs = out.pair_ratio_histogram.iter().sum();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed sort gives the streams the sort of whole events gives: keys of different
    /// lengths (a key before its extensions), equal events removed, large units.
    #[test]
    fn packed_streams_equal_sorted_events() {
        let mut ev: Vec<Event> = Vec::new();
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..5000 {
            let len = (next() % 4) as usize;
            let words: Vec<u64> = (0..len).map(|_| next() % 5).collect();
            let key = Key::new(&words, next() % 3);
            let unit = ((next() % 4) << PARAM_SHIFT) | (next() % 300);
            ev.push((key, (next() % 4) as u32, unit));
        }
        ev.extend(ev.clone().into_iter().take(700));
        let order = PackedOrder::of(&ev).expect("fits");
        let packed = order.streams(ev.clone());
        let mut sorted = ev;
        sorted.sort_unstable();
        sorted.dedup();
        let nw = sorted.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
        let mut warps = vec![Vec::new(); nw];
        let tb: Vec<u64> = sorted.iter().map(|e| e.2).collect();
        for e in &sorted {
            warps[e.1 as usize].push(e.2);
        }
        assert_eq!(packed, (warps, tb));
        // Too wide for 128 bits: the whole events are sorted instead.
        let wide: Vec<Event> = (0..3)
            .map(|i| (Key::new(&[u64::MAX - 1, 1 << 40], i), 0, u64::MAX))
            .collect();
        assert!(PackedOrder::of(&wide).is_none());
    }

    /// Brute-force stack distance: distinct units since the previous access.
    fn naive(stream: &[u64]) -> (Vec<u64>, u64) {
        let mut hist = Vec::new();
        let mut cold = 0;
        for t in 0..stream.len() {
            match stream[..t].iter().rposition(|&u| u == stream[t]) {
                Some(p) => {
                    let mut d: Vec<u64> = stream[p + 1..t].to_vec();
                    d.sort_unstable();
                    d.dedup();
                    let b = distance_bin(d.len() as u64);
                    if hist.len() <= b {
                        hist.resize(b + 1, 0);
                    }
                    hist[b] += 1;
                }
                None => cold += 1,
            }
        }
        (hist, cold)
    }

    #[test]
    fn fenwick_stack_distances_match_naive() {
        let mut x = 12345u64;
        for len in [0usize, 1, 5, 100, 700] {
            let s: Vec<u64> = (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (x >> 33) % 37
                })
                .collect();
            let mut h = Vec::new();
            let c = stack_distances(&s, &mut h);
            assert_eq!((h, c), naive(&s));
        }
    }

    #[test]
    fn stack_distance_example() {
        // a b c a : distance 2 for the last access.
        let mut h = Vec::new();
        assert_eq!(stack_distances(&[1, 2, 3, 1, 1], &mut h), 3);
        assert_eq!(h, vec![1, 0, 1]);
    }

    #[test]
    fn ratio_bins() {
        assert_eq!(ratio_bin(0.0), 0);
        assert_eq!(ratio_bin(0.05), 0);
        assert_eq!(ratio_bin(0.1), 1);
        assert_eq!(ratio_bin(0.99), 9);
        assert_eq!(ratio_bin(1.0), 9);
    }
}
