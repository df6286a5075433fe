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
//!
//! The results and their computation over a sample of TBs are here; the walk of the streams
//! (`walk`) and the metrics over them (`metrics`) are in submodules, re-exported.

use launch::BoundLaunch;
use serde::Serialize;

use crate::expr::{eval_tape, Ctx, EvalError, Expr, Obligation, Tape, TapeState, Var};
use crate::footprint::{unit_bytes, Granularity, Interval, PARAM_SHIFT};
use crate::locality::Graph;
use crate::Analysis;

pub mod dp;
mod metrics;
mod walk;

pub use metrics::*;
pub(crate) use walk::*;

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
