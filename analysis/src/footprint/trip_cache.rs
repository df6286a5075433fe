//! Loop trip counts during the walk: what each loop's count reads ([`TripDeps`]), the counts
//! shared by all workers ([`SharedTrips`]) and one TB's cache of them ([`TripCache`]).

use super::*;

/// What a loop's trip count depends on: thread coordinates, TB coordinates and the
/// iterations of other loops (everything else in it is fixed by the launch).
#[derive(Clone, Debug, Default)]
pub(crate) struct TripDeps {
    tid: [bool; 3],
    ctaid: [bool; 3],
    iters: Vec<LoopId>,
}

/// [`TripDeps`] of every loop of `model`, by loop index: what its exits' decisive
/// conjuncts ([`crate::model::TripPlan::decisive`]) read. nvcc's exits carry the condition of
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
