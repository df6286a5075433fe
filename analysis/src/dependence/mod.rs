//! Fast answers to the Locality Descriptors' existence questions, asked before z3 or
//! enumeration (issues 13 and 15: the descriptors' phase was most of the analysis time).
//!
//! - **Intra-thread, per load pair** ([`intra_pair`]): a dependence test. When both loads'
//!   addresses are affine in the thread coordinates and loop counters (every 32-bit `Ext`
//!   proved by the launch's value ranges never to wrap), the difference of the two
//!   addresses of one thread is `delta + sum(a_v * x_v)` over bounded integer variables
//!   (iteration counters of either side, or their distance `d = k' - k` for a loop both share
//!   with one stride, and thread coordinates whose coefficients differ). The two accesses
//!   can overlap only if that difference falls in the element-overlap window; a GCD test and
//!   Banerjee's bounds test show when it cannot, and the answer is "no reuse". The test
//!   never answers "reuse": anything it cannot exclude (an `Ext` that may wrap, a non-affine
//!   term, a loop without a bound) is `None`, left to z3 or enumeration. For one load
//!   against itself the counter vector must differ: the cases "first differing loop is `m`,
//!   with `d_m > 0`" are tested one by one (the window is symmetric).
//! - **Inter-TB, per parameter** ([`inter_tb`]): a load whose address, guards and loop
//!   bounds do not use `%ctaid` along a dimension the grid spans with two or more TBs, and
//!   that reads the parameter's buffer at all (its byte range from the footprints), is read
//!   identically by neighbouring TBs along that dimension: reuse. Otherwise the footprints'
//!   per-TB units decide: TBs whose units (whole elements or larger) never meet share no
//!   element; at element granularity, units shared by two TBs are shared elements.
//! - **Enumeration cost** ([`enumeration_points`]): the points enumeration visits, to
//!   choose enumeration over z3 on small launches.
//!
//! [`Ranges`] (the value ranges of the launch's variables, with each loop's largest trip
//! count computed lazily) is shared with the z3 encoding, which uses it to drop the
//! wraps that cannot happen.
//!
//! [`Ranges`] is here; the tests are in submodules, all re-exported: `intra` (the
//! intra-thread dependence test), `inter` (the inter-TB test) and `witness` (concrete walks:
//! witnesses, the enumeration's cost and the per-pair enumeration reference).

use std::collections::HashMap;
use std::sync::OnceLock;

use launch::BoundLaunch;

use crate::expr::{Expr, IntOp, Var, E};
use crate::loops::LoopId;
use crate::Analysis;

mod inter;
mod intra;
mod witness;

pub use inter::*;
pub use intra::*;
pub use witness::*;

/// Largest number of threads whose trip counts are evaluated to bound a loop's counter.
pub const MAX_TRIP_THREADS: u64 = 1 << 20;

/// Ranges of the variables of a launch: `%tid`, `%ctaid` from the launch, loop counters
/// from the largest trip count over all threads (constant trip counts, or ones that depend
/// on the thread only, evaluated for every thread of launches up to [`MAX_TRIP_THREADS`]),
/// each computed on first use.
pub struct Ranges<'a> {
    /// The analysis and launch the trip counts come from (`None` in unit tests).
    src: Option<(&'a Analysis, &'a BoundLaunch)>,
    pub(crate) block: [i128; 3],
    pub(crate) grid: [i128; 3],
    trips: Vec<OnceLock<Option<i128>>>,
    /// Fixed trip bounds (unit tests), consulted before the lazy ones.
    fixed: HashMap<u32, i128>,
}

impl<'a> Ranges<'a> {
    /// The ranges of `launch`'s variables for `a`'s model (nothing is evaluated yet).
    pub fn new(a: &'a Analysis, launch: &'a BoundLaunch) -> Ranges<'a> {
        Ranges {
            src: Some((a, launch)),
            block: [launch.block.x, launch.block.y, launch.block.z].map(i128::from),
            grid: [launch.grid.x, launch.grid.y, launch.grid.z].map(i128::from),
            trips: (0..a.model.loops.len()).map(|_| OnceLock::new()).collect(),
            fixed: HashMap::new(),
        }
    }

    /// The largest trip count of loop `l` over every thread, when known.
    pub fn max_trip(&self, l: LoopId) -> Option<i128> {
        if let Some(t) = self.fixed.get(&l.0) {
            return Some(*t);
        }
        *self
            .trips
            .get(l.index())?
            .get_or_init(|| self.compute_max_trip(l))
    }

    fn compute_max_trip(&self, l: LoopId) -> Option<i128> {
        use crate::expr::{Ctx, TripSource};
        let (a, launch) = self.src?;
        let info = a.model.loops.get(l.index())?;
        if !a.model.trip_plan(l).by_coordinates {
            return None;
        }
        let thread_free = info.exits.iter().all(|e| {
            let mut free = true;
            e.visit_leaves(&mut |x| {
                free &= !matches!(x, Expr::Var(Var::Tid(_)) | Expr::Var(Var::Ctaid(_)))
            });
            free
        });
        let mut cx = Ctx::new(a.model.loops.len());
        if thread_free {
            return a.model.trip(l, &cx).ok();
        }
        let threads = launch.num_tbs().saturating_mul(launch.block.count());
        if threads > MAX_TRIP_THREADS {
            return None;
        }
        // Only the coordinates that decide the count are enumerated (the exits' conjuncts
        // that hold in every thread left out): scalar_prod's outer loop, 32,768 threads,
        // becomes its 128 `%ctaid.x`.
        let (grid, block) = (a.model.grid, a.model.block);
        let used = crate::model::conjuncts_read(&a.model.trip_plan(l).decisive);
        let mut max: Option<i128> = None;
        let mut failed = false;
        crate::model::each_coordinate(used, grid, block, u64::MAX, &mut cx, |cx| {
            match a.model.trip(l, cx) {
                Ok(n) => {
                    max = Some(max.map_or(n, |m: i128| m.max(n)));
                    true
                }
                Err(_) => {
                    failed = true;
                    false
                }
            }
        })?;
        if failed {
            return None;
        }
        max
    }

    /// The range `[lo, hi]` of `e` over the launch, when the interval arithmetic knows it.
    pub fn of(&self, e: &Expr) -> Option<(i128, i128)> {
        let two = |a: &Expr, b: &Expr| Some((self.of(a)?, self.of(b)?));
        Some(match e {
            Expr::Const(c) => (*c, *c),
            Expr::Var(Var::Tid(d)) => (0, self.block[usize::from(*d).min(2)] - 1),
            Expr::Var(Var::Ctaid(d)) => (0, self.grid[usize::from(*d).min(2)] - 1),
            Expr::Var(Var::Iter(l)) => (0, self.max_trip(*l)? - 1),
            Expr::Add(a, b) => {
                let ((p, q), (r, s)) = two(a, b)?;
                (p.checked_add(r)?, q.checked_add(s)?)
            }
            Expr::Sub(a, b) => {
                let ((p, q), (r, s)) = two(a, b)?;
                (p.checked_sub(s)?, q.checked_sub(r)?)
            }
            Expr::Mul(a, b) => {
                let ((p, q), (r, s)) = two(a, b)?;
                let c = [
                    p.checked_mul(r)?,
                    p.checked_mul(s)?,
                    q.checked_mul(r)?,
                    q.checked_mul(s)?,
                ];
                (*c.iter().min()?, *c.iter().max()?)
            }
            Expr::Ext { bits, signed, e } => {
                let b = u32::from(*bits).clamp(1, 126);
                let (min, max) = ext_bounds(b, *signed);
                match self.of(e) {
                    Some((lo, hi)) if min <= lo && hi <= max => (lo, hi),
                    _ => (min, max),
                }
            }
            Expr::Op(IntOp::Min, a, b) => {
                let ((p, q), (r, s)) = two(a, b)?;
                (p.min(r), q.min(s))
            }
            Expr::Op(IntOp::Max, a, b) => {
                let ((p, q), (r, s)) = two(a, b)?;
                (p.max(r), q.max(s))
            }
            Expr::Op(IntOp::Shl(bits), a, b) => {
                // A constant shift below the width, without overflowing `i128`: a product.
                let s = b
                    .as_const()
                    .filter(|s| (0..i128::from(*bits).min(64)).contains(s))?;
                let (lo, hi) = self.of(a)?;
                (lo.checked_mul(1 << s)?, hi.checked_mul(1 << s)?)
            }
            Expr::Op(IntOp::BitAnd, a, b) => {
                // A non-negative mask bounds the result whatever the other operand's sign.
                match (a.as_const(), b.as_const()) {
                    (Some(m), _) | (_, Some(m)) if m >= 0 => (0, m),
                    _ => return None,
                }
            }
            Expr::Op(IntOp::BitOr, a, b) => {
                let (x, y) = self.disjoint_or(a, b)?;
                let ((p, q), (r, s)) = two(x, y)?;
                (p.checked_add(r)?, q.checked_add(s)?)
            }
            Expr::Cmp(..) | Expr::Not(_) | Expr::And(..) | Expr::Or(..) => (0, 1),
            Expr::Select(_, a, b) => {
                let ((p, q), (r, s)) = two(a, b)?;
                (p.min(r), q.max(s))
            }
            _ => return None,
        })
    }

    /// The operands of `a | b` as `(x, y)` when the or is a sum: `x`'s low `k` bits are
    /// always zero and `0 <= y < 2^k` (`r << 5 | lane`, a row and a lane), so `x | y` is
    /// `x + y` in two's complement whatever the sign of `x`.
    pub fn disjoint_or<'e>(&self, a: &'e E, b: &'e E) -> Option<(&'e E, &'e E)> {
        [(a, b), (b, a)].into_iter().find(|(x, y)| {
            let k = low_zero_bits(x).min(126);
            k > 0
                && self
                    .of(y)
                    .is_some_and(|(lo, hi)| lo >= 0 && hi < (1i128 << k))
        })
    }

    /// Whether `Ext { bits, signed, e }` is the identity for every value `e` takes.
    pub fn ext_is_identity(&self, bits: u8, signed: bool, e: &Expr) -> bool {
        let b = u32::from(bits).clamp(1, 128);
        if b >= 127 {
            return true;
        }
        let (min, max) = ext_bounds(b, signed);
        self.of(e).is_some_and(|(lo, hi)| min <= lo && hi <= max)
    }
}

/// The resolved loads of parameter `p` that count in the footprints.
pub fn param_loads(a: &Analysis, params: &[Option<u32>], p: u32) -> Vec<usize> {
    (0..a.model.loads.len())
        .filter(|&i| {
            a.unresolved.get(i).is_some_and(Option::is_none)
                && params.get(i).copied().flatten() == Some(p)
                && a.model.counts(i)
        })
        .collect()
}
