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

use std::collections::HashMap;
use std::sync::OnceLock;

use launch::BoundLaunch;

use crate::expr::{Expr, IntOp, Var, E};
use crate::loops::LoopId;
use crate::Analysis;

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

/// Low bits of `e` that are zero on every evaluation (a lower bound; 127 for zero).
fn low_zero_bits(e: &Expr) -> u32 {
    match e {
        Expr::Const(0) => 127,
        Expr::Const(c) => c.trailing_zeros(),
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Op(IntOp::BitOr | IntOp::BitXor, a, b) => {
            low_zero_bits(a).min(low_zero_bits(b))
        }
        Expr::Mul(a, b) => (low_zero_bits(a) + low_zero_bits(b)).min(127),
        Expr::Op(IntOp::BitAnd, a, b) => low_zero_bits(a).max(low_zero_bits(b)),
        Expr::Op(IntOp::Shl(bits), a, b) => match b.as_const() {
            Some(s) if (0..i128::from(*bits)).contains(&s) => {
                (low_zero_bits(a) + s as u32).min(127)
            }
            _ => 0,
        },
        // Truncation and sign extension keep the low bits.
        Expr::Ext { bits, e, .. } => low_zero_bits(e).min(u32::from(*bits)),
        _ => 0,
    }
}

/// The values a `b`-bit extension leaves unchanged.
fn ext_bounds(b: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    }
}

/// A term of an affine form.
#[derive(Clone, Debug, PartialEq)]
enum Atom {
    Tid(u8),
    Ctaid(u8),
    Iter(u32),
    /// A sub-expression of the thread coordinates and constants only (no loop counter, trip
    /// count or recurrence): one value per thread, equal on both sides of a question.
    Thread(E),
}

/// `c + sum(coef * atom)`, exact over every execution (no wrap on the way).
#[derive(Clone, Debug, Default, PartialEq)]
struct Lin {
    c: i128,
    terms: Vec<(Atom, i128)>,
}

impl Lin {
    fn konst(c: i128) -> Lin {
        Lin {
            c,
            terms: Vec::new(),
        }
    }
    fn atom(a: Atom) -> Lin {
        Lin {
            c: 0,
            terms: vec![(a, 1)],
        }
    }
    fn coef(&self, a: &Atom) -> i128 {
        self.terms.iter().find(|t| t.0 == *a).map_or(0, |t| t.1)
    }
    /// `self + k * o`.
    fn add_scaled(mut self, o: &Lin, k: i128) -> Option<Lin> {
        self.c = self.c.checked_add(o.c.checked_mul(k)?)?;
        for (a, v) in &o.terms {
            let v = v.checked_mul(k)?;
            match self.terms.iter_mut().find(|t| t.0 == *a) {
                Some(t) => t.1 = t.1.checked_add(v)?,
                None => self.terms.push((a.clone(), v)),
            }
        }
        self.terms.retain(|t| t.1 != 0);
        Some(self)
    }
    fn scale(&self, k: i128) -> Option<Lin> {
        Lin::default().add_scaled(self, k)
    }
}

/// Whether `e` is a function of the thread coordinates and constants only.
fn thread_only(e: &E) -> bool {
    let mut ok = true;
    e.visit_leaves(&mut |x| ok &= matches!(x, Expr::Var(Var::Tid(_)) | Expr::Var(Var::Ctaid(_))));
    let mut unknown = false;
    e.visit_unknowns(&mut |_| unknown = true);
    ok && !unknown && !has_rec(e)
}

fn has_rec(e: &Expr) -> bool {
    match e {
        Expr::Rec(..) => true,
        Expr::Const(_) | Expr::Var(_) | Expr::Trip(_) | Expr::Unknown(_) => false,
        Expr::Ext { e, .. } | Expr::Not(e) => has_rec(e),
        Expr::Add(a, b)
        | Expr::Sub(a, b)
        | Expr::Mul(a, b)
        | Expr::Op(_, a, b)
        | Expr::Cmp(_, a, b)
        | Expr::And(a, b)
        | Expr::Or(a, b) => has_rec(a) || has_rec(b),
        Expr::Select(c, a, b) => has_rec(c) || has_rec(a) || has_rec(b),
    }
}

/// `e` as an affine form exact on every execution of the launch, or `None` (a term that is
/// not affine, or a 32-bit extension the ranges do not prove to be the identity).
fn lin(e: &E, r: &Ranges) -> Option<Lin> {
    Some(match &**e {
        Expr::Const(c) => Lin::konst(*c),
        Expr::Var(Var::Tid(d)) => Lin::atom(Atom::Tid(*d)),
        Expr::Var(Var::Ctaid(d)) => Lin::atom(Atom::Ctaid(*d)),
        Expr::Var(Var::Iter(l)) => Lin::atom(Atom::Iter(l.0)),
        Expr::Add(a, b) => lin(a, r)?.add_scaled(&lin(b, r)?, 1)?,
        Expr::Sub(a, b) => lin(a, r)?.add_scaled(&lin(b, r)?, -1)?,
        Expr::Mul(a, b) => {
            let (x, y) = (lin(a, r)?, lin(b, r)?);
            if x.terms.is_empty() {
                y.scale(x.c)?
            } else if y.terms.is_empty() {
                x.scale(y.c)?
            } else if thread_only(e) {
                Lin::atom(Atom::Thread(e.clone()))
            } else {
                return None;
            }
        }
        Expr::Ext { bits, signed, e: x } => {
            if r.ext_is_identity(*bits, *signed, x) {
                lin(x, r)?
            } else if thread_only(e) {
                // May wrap, but the same value for both accesses of one thread.
                Lin::atom(Atom::Thread(e.clone()))
            } else {
                // Wrap-around possible in a term that varies between the accesses: defer.
                return None;
            }
        }
        Expr::Op(IntOp::Shl(bits), a, b) => match b.as_const() {
            Some(s) if (0..i128::from(*bits).min(64)).contains(&s) => {
                // `wrapping_shl` equals the product only while it cannot overflow `i128`.
                let (lo, hi) = r.of(a)?;
                let lim = 1i128 << (120 - s as u32).min(120);
                if lo.abs() >= lim || hi.abs() >= lim {
                    return None;
                }
                lin(a, r)?.scale(1i128 << s)?
            }
            _ if thread_only(e) => Lin::atom(Atom::Thread(e.clone())),
            _ => return None,
        },
        Expr::Op(IntOp::BitOr, a, b) => match r.disjoint_or(a, b) {
            Some((x, y)) => lin(x, r)?.add_scaled(&lin(y, r)?, 1)?,
            None if thread_only(e) => Lin::atom(Atom::Thread(e.clone())),
            None => return None,
        },
        _ if thread_only(e) => Lin::atom(Atom::Thread(e.clone())),
        _ => return None,
    })
}

/// A variable with the loop whose distance it is (`None`: not a distance).
type Tagged = (DVar, Option<u32>);

/// A bounded integer variable of a dependence equation: coefficient and range `[lo, hi]`
/// (`None`: unbounded above).
#[derive(Clone, Copy, Debug)]
struct DVar {
    coef: i128,
    lo: i128,
    hi: Option<i128>,
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether `delta + sum(coef * x)` over the integer boxes of `vars` provably never lies in
/// `[wlo, whi]` (GCD test, then Banerjee's bounds; exact for a single variable).
fn excluded(delta: i128, vars: &[DVar], (wlo, whi): (i128, i128)) -> Option<bool> {
    let vars: Vec<DVar> = vars.iter().copied().filter(|v| v.coef != 0).collect();
    // An empty box: no assignment at all.
    if vars.iter().any(|v| v.hi.is_some_and(|h| h < v.lo)) {
        return Some(true);
    }
    let (lo_t, hi_t) = (wlo.checked_sub(delta)?, whi.checked_sub(delta)?);
    if lo_t > hi_t {
        return Some(true);
    }
    // GCD: `sum(coef * x)` is a multiple of `g`.
    let g = vars.iter().fold(0, |g, v| gcd(g, v.coef));
    if g == 0 {
        return Some(!(lo_t..=hi_t).contains(&0));
    }
    let first = lo_t.checked_add((-lo_t).rem_euclid(g))?;
    if first > hi_t {
        return Some(true);
    }
    if let [v] = vars[..] {
        // Exact: the x with lo_t <= coef * x <= hi_t, within the box.
        let (a, b) = if v.coef > 0 {
            (div_ceil(lo_t, v.coef), hi_t.div_euclid(v.coef))
        } else {
            (div_ceil(-hi_t, -v.coef), (-lo_t).div_euclid(-v.coef))
        };
        let (a, b) = (a.max(v.lo), v.hi.map_or(b, |h| b.min(h)));
        return Some(a > b);
    }
    // Banerjee: the sum's range over the box.
    let (mut min, mut max) = (Some(0i128), Some(0i128));
    for v in &vars {
        let at_lo = v.coef.checked_mul(v.lo)?;
        let at_hi = match v.hi {
            Some(h) => Some(v.coef.checked_mul(h)?),
            None => None,
        };
        let (mn, mx) = match at_hi {
            Some(h) => (Some(at_lo.min(h)), Some(at_lo.max(h))),
            None if v.coef > 0 => (Some(at_lo), None),
            None => (None, Some(at_lo)),
        };
        min = match (min, mn) {
            (Some(a), Some(b)) => Some(a.checked_add(b)?),
            _ => None,
        };
        max = match (max, mx) {
            (Some(a), Some(b)) => Some(a.checked_add(b)?),
            _ => None,
        };
    }
    Some(max.is_some_and(|m| m < lo_t) || min.is_some_and(|m| m > hi_t))
}

fn div_ceil(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

/// The fast answer to "can one thread read an element of parameter `p` (elements of `eb`
/// bytes) with load `i` and again with load `j` (two different executions)?": `Some(false)`
/// when the dependence test excludes it, else `None` (the test never answers `true`).
pub fn intra_pair(a: &Analysis, r: &Ranges, p: u32, eb: u64, i: usize, j: usize) -> Option<bool> {
    let (si, sj) = (a.model.loads.get(i)?, a.model.loads.get(j)?);
    let acc = |s: &'_ crate::addr::LoadSite| Access {
        addr: s.addr.clone(),
        width: s.width,
        loops: s.loops.clone(),
    };
    intra(r, (i128::from(p) + 1) << 36, eb, &acc(si), &acc(sj), i == j)
}

/// One load of a dependence question: its address, width and loops (outermost first).
struct Access {
    addr: E,
    width: u32,
    loops: Vec<LoopId>,
}

/// [`intra_pair`] on two accesses to a buffer at `base`; `same`: one load against itself.
fn intra(r: &Ranges, base: i128, eb: u64, si: &Access, sj: &Access, same: bool) -> Option<bool> {
    let (i, j) = (0usize, usize::from(!same));
    if i == j && si.loops.is_empty() {
        // A load outside loops runs at most once per thread.
        return Some(false);
    }
    let (li, lj) = (lin(&si.addr, r)?, lin(&sj.addr, r)?);
    let eb = i128::from(eb);
    // Shared thread terms: equal on both sides, so only a coefficient difference remains.
    let mut vars: Vec<Tagged> = Vec::new();
    let mut thread_atoms: Vec<&Atom> = Vec::new();
    for (at, _) in li.terms.iter().chain(&lj.terms) {
        if !matches!(at, Atom::Iter(_)) && !thread_atoms.contains(&at) {
            thread_atoms.push(at);
        }
    }
    for at in thread_atoms {
        let coef = lj.coef(at).checked_sub(li.coef(at))?;
        if coef == 0 {
            continue;
        }
        let hi = match at {
            Atom::Tid(d) => r.block[usize::from(*d).min(2)] - 1,
            Atom::Ctaid(d) => r.grid[usize::from(*d).min(2)] - 1,
            // A per-thread value with different coefficients: no range to test with.
            _ => return None,
        };
        vars.push((
            DVar {
                coef,
                lo: 0,
                hi: Some(hi),
            },
            None,
        ));
    }
    // Loop counters: only the loads' own loops may appear.
    for (l, side) in [(&li, &si.loops), (&lj, &sj.loops)] {
        for (at, _) in &l.terms {
            if let Atom::Iter(q) = at {
                if !side.iter().any(|x| x.0 == *q) {
                    return None;
                }
            }
        }
    }
    let bound = |l: LoopId| r.max_trip(l).map(|t| t - 1);
    // The loops both loads are in, with equal strides, become one distance variable.
    let mut dist: Vec<(u32, i128, Option<i128>)> = Vec::new();
    for l in &si.loops {
        let (ci, cj) = (li.coef(&Atom::Iter(l.0)), lj.coef(&Atom::Iter(l.0)));
        let shared = sj.loops.contains(l);
        if shared && (ci == cj || i == j) {
            dist.push((l.0, ci, bound(*l)));
        } else {
            vars.push((
                DVar {
                    coef: -ci,
                    lo: 0,
                    hi: bound(*l),
                },
                None,
            ));
            if shared {
                vars.push((
                    DVar {
                        coef: cj,
                        lo: 0,
                        hi: bound(*l),
                    },
                    None,
                ));
            }
        }
    }
    for l in &sj.loops {
        if !si.loops.contains(l) {
            let cj = lj.coef(&Atom::Iter(l.0));
            vars.push((
                DVar {
                    coef: cj,
                    lo: 0,
                    hi: bound(*l),
                },
                None,
            ));
        }
    }
    for &(q, coef, hi) in &dist {
        let m = hi.map(|h| h.max(0));
        vars.push((
            DVar {
                coef,
                lo: -m.unwrap_or(i128::MAX / 4),
                hi: m,
            },
            Some(q),
        ));
    }
    // Element window: exact when every coefficient is a multiple of the element size (each
    // address's offset within its element is then the constant's), else a byte superset.
    let delta = lj.c.checked_sub(li.c)?;
    let all = li.terms.iter().chain(&lj.terms).all(|t| t.1 % eb == 0);
    let (delta, window, vars): (i128, (i128, i128), Vec<Tagged>) = if all {
        let (ri, rj) = ((li.c - base).rem_euclid(eb), (lj.c - base).rem_euclid(eb));
        let (wi, wj) = (i128::from(si.width), i128::from(sj.width));
        let (mi, mj) = ((ri + wi - 1) / eb, (rj + wj - 1) / eb);
        let d = (delta - (rj - ri)) / eb;
        let v = vars
            .into_iter()
            .map(|(v, q)| {
                (
                    DVar {
                        coef: v.coef / eb,
                        ..v
                    },
                    q,
                )
            })
            .collect();
        (d, (-mj, mi), v)
    } else {
        let (wi, wj) = (i128::from(si.width), i128::from(sj.width));
        (delta, (-(wj + eb - 2), wi + eb - 2), vars)
    };
    if i != j {
        let plain: Vec<DVar> = vars.iter().map(|v| v.0).collect();
        return excluded(delta, &plain, window).and_then(|x| x.then_some(false));
    }
    // One load against itself: some counter differs. Case "the first differing loop (in
    // nesting order) is m, d_m > 0" for each m; the window is symmetric (same load, same
    // offset), so d_m < 0 mirrors it.
    for m in 0..dist.len() {
        let mut case: Vec<DVar> = Vec::new();
        for (v, vq) in &vars {
            match vq.and_then(|x| dist.iter().position(|d| d.0 == x)) {
                Some(k) if k < m => {} // d = 0: drop
                Some(k) if k == m => case.push(DVar { lo: 1, ..*v }),
                _ => case.push(*v),
            }
        }
        if !excluded(delta, &case, window)? {
            return None;
        }
    }
    Some(false)
}

/// The `%ctaid` dimensions load `i`'s executions depend on (address, guards, the trip
/// counts of its loops and of any loop they refer to), or `None` when the model holds
/// something whose dependence is not visible (an unknown).
fn ctaid_dims(a: &Analysis, i: usize) -> Option<[bool; 3]> {
    let site = a.model.loads.get(i)?;
    let mut dims = [false; 3];
    let mut todo: Vec<LoopId> = site.loops.clone();
    let mut seen: Vec<LoopId> = Vec::new();
    let mut exprs: Vec<&E> = vec![&site.addr];
    exprs.extend(&site.cond);
    exprs.extend(&site.may_cond);
    let mut unknown = false;
    let mut visit = |e: &E, todo: &mut Vec<LoopId>| {
        e.visit_leaves(&mut |x| match x {
            Expr::Var(Var::Ctaid(d)) => dims[usize::from(*d).min(2)] = true,
            Expr::Trip(l) => todo.push(*l),
            _ => {}
        });
        e.visit_unknowns(&mut |_| unknown = true);
    };
    for e in exprs {
        visit(e, &mut todo);
    }
    while let Some(l) = todo.pop() {
        if seen.contains(&l) {
            continue;
        }
        seen.push(l);
        let info = a.model.loops.get(l.index())?;
        if info.unresolved.is_some() {
            return None;
        }
        if let Some(p) = info.parent {
            todo.push(p);
        }
        for e in &info.exits {
            visit(e, &mut todo);
        }
    }
    (!unknown).then_some(dims)
}

/// The fast answer to "can two different TBs read a common element of parameter `p`?"
/// over `loads` (the resolved loads of `p` that count in the footprints), or `None`.
pub fn inter_tb(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
    loads: &[usize],
) -> Option<bool> {
    let grid = [launch.grid.x, launch.grid.y, launch.grid.z];
    for &i in loads {
        let reads = a
            .footprints
            .load_ranges
            .get(i)
            .is_some_and(|v| v.iter().any(|r| r.region == Some(p) && r.lo < r.hi));
        if !reads {
            continue;
        }
        if let Some(dims) = ctaid_dims(a, i) {
            // Two TBs that differ along `d` only run this load identically.
            if (0..3).any(|d| !dims[d] && grid[d] >= 2) {
                return Some(true);
            }
        }
    }
    // The footprints first: they hold every counted load's units, so when they answer (no
    // two TBs share a unit, or the units are elements) a witness could only agree, and a
    // launch without inter-TB reuse would otherwise walk the witness's whole allowance
    // for nothing (gemv_unroll: a quarter of the analysis).
    let fp = a.footprints.params.iter().find(|x| x.param == p);
    if let Some(x) = fp.and_then(|fp| classes_meet(fp, eb)) {
        return Some(x);
    }
    // A parameter read by one load whose TBs read apart has no witness to find: walking
    // the witness's allowance first was a quarter of srad_update's small launch.
    if apart_by_address(a, launch, p, eb) {
        return Some(false);
    }
    if inter_tb_witness(a, launch, p, eb, loads) {
        return Some(true);
    }
    // No counted load reads the buffer: `Some(false)`.
    fp.map_or(Some(false), |_| None)
}

/// Whether two TBs' footprints of one parameter share a unit of `eb`-byte elements:
/// `Some` when the units are the elements themselves, or when no two TBs share any unit;
/// `None` when units of several elements meet (they may share a line, not an element).
fn classes_meet(fp: &crate::footprint::ParamFootprint, eb: u64) -> Option<bool> {
    // Units must be whole elements (or several), aligned on element boundaries.
    if fp.unit_bytes == 0 || !fp.unit_bytes.is_multiple_of(eb) {
        return None;
    }
    let mut meet = false;
    if fp
        .classes
        .iter()
        .any(|c| c.members.len() >= 2 && !c.units.is_empty())
    {
        meet = true;
    } else {
        let mut all: Vec<(u64, u64)> = fp
            .classes
            .iter()
            .flat_map(|c| c.units.iter().copied())
            .collect();
        all.sort_unstable();
        let mut end = 0u64;
        for (k, &(lo, hi)) in all.iter().enumerate() {
            // Each class's intervals are disjoint: an overlap is between two classes.
            if k > 0 && lo < end {
                meet = true;
                break;
            }
            end = end.max(hi);
        }
    }
    match (meet, fp.unit_bytes == eb) {
        (false, _) => Some(false),
        (true, true) => Some(true),
        (true, false) => None,
    }
}

/// Bytes the element-granularity footprints of [`inter_tb_by_element_footprints`] may take.
pub const ELEMENT_FOOTPRINT_BUDGET: u64 = 256 << 20;

/// Whether one load alone reads `p` and its TBs read apart ([`tbs_read_apart`]): [`inter_tb`]
/// asks before its witness walks (srad_update's paper launch spent a fifth of its analysis
/// walking five such parameters again at elements, its small launch a quarter on witnesses).
fn apart_by_address(a: &Analysis, launch: &BoundLaunch, p: u32, eb: u64) -> bool {
    let skip = loads_not_reading(a, p);
    let mut reading = (0..skip.len()).filter(|&i| !skip[i]);
    match (reading.next(), reading.next()) {
        (Some(i), None) => tbs_read_apart(a, &Ranges::new(a, launch), i, eb),
        _ => false,
    }
}

/// Per load, whether it is left out of `p`'s element question: it does not read `p`'s
/// buffer, is unresolved or does not count.
fn loads_not_reading(a: &Analysis, p: u32) -> Vec<bool> {
    (0..a.model.loads.len())
        .map(|i| {
            let reads = a
                .footprints
                .load_ranges
                .get(i)
                .is_some_and(|v| v.iter().any(|r| r.region == Some(p) && r.lo < r.hi));
            !reads || a.unresolved.get(i).is_some_and(Option::is_some) || !a.model.counts(i)
        })
        .collect()
}

/// Whether no two TBs read a common `eb`-byte element through load `i`: a load outside
/// loops whose address is affine in the thread and TB coordinates, exact over the launch
/// ([`lin`]), with coefficients that are whole elements, where any two threads of
/// different TBs access elements that never meet. Sorted by size, every coefficient must
/// step past all that the smaller ones span plus the elements one access covers (a mixed
/// radix): the highest coordinate in which two threads differ then parts their accesses.
/// A thread coordinate with coefficient 0 is left out (its threads are of one TB); a TB
/// coordinate with coefficient 0 along two or more TBs answers `false`. Guards only remove
/// threads, so they are not read.
pub fn tbs_read_apart(a: &Analysis, r: &Ranges, i: usize, eb: u64) -> bool {
    let Some(s) = a.model.loads.get(i) else {
        return false;
    };
    let Some(l) = lin(&s.addr, r).filter(|_| s.loops.is_empty()) else {
        return false;
    };
    let eb = i128::from(eb);
    if eb <= 0 {
        return false;
    }
    // Buffers start on element boundaries: the offset of every access in its element.
    let o = l.c.rem_euclid(eb);
    let covered = ((o + i128::from(s.width) + eb - 1) / eb).max(1);
    let mut terms = Vec::with_capacity(l.terms.len());
    for (atom, c) in &l.terms {
        let (n, tb) = match atom {
            Atom::Tid(d) => (r.block[usize::from(*d).min(2)], false),
            Atom::Ctaid(d) => (r.grid[usize::from(*d).min(2)], true),
            _ => return false,
        };
        if c % eb != 0 {
            return false;
        }
        terms.push((c / eb, n, tb));
    }
    // A coordinate the address does not read: its TBs read alike.
    for (d, &n) in r.grid.iter().enumerate() {
        let read = l.terms.iter().any(|(a, _)| *a == Atom::Ctaid(d as u8));
        if n >= 2 && !read {
            return false;
        }
    }
    affine_apart(&terms, covered)
}

/// Whether accesses of `covered` elements from `sum(c * x)`, over coordinates `x` in
/// `[0, n)` given as `(c, n, tb)` (`tb`: a TB coordinate), never meet between two points
/// that differ in a TB coordinate ([`tbs_read_apart`]).
fn affine_apart(terms: &[(i128, i128, bool)], covered: i128) -> bool {
    let mut steps: Vec<(i128, i128)> = Vec::with_capacity(terms.len());
    for &(c, n, tb) in terms {
        if n < 2 {
            continue;
        }
        if c == 0 {
            if tb {
                return false;
            }
            continue;
        }
        steps.push((c.abs(), n));
    }
    steps.sort_unstable();
    let mut span = 0i128;
    for (c, n) in steps {
        let Some(need) = span.checked_add(covered) else {
            return false;
        };
        if c < need {
            return false;
        }
        let Some(next) = c.checked_mul(n - 1).and_then(|x| x.checked_add(span)) else {
            return false;
        };
        span = next;
    }
    true
}

/// The inter-TB question of parameter `p` answered from footprints at element granularity,
/// for when [`inter_tb`] is left with units of several elements that meet (a column walk
/// whose row pitch is no multiple of a line: neighbouring TBs share lines, never elements).
/// Every counted resolved load that reads `p`'s buffer is evaluated again, at elements, for
/// `p` alone; `None` when that does not fit in [`ELEMENT_FOOTPRINT_BUDGET`].
pub fn inter_tb_by_element_footprints(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
) -> Option<bool> {
    use crate::footprint::{compute_within, Granularity};
    let skip = loads_not_reading(a, p);
    let (fp, errors) = compute_within(
        &a.model,
        launch,
        Granularity::Element,
        &skip,
        ELEMENT_FOOTPRINT_BUDGET,
    );
    if !errors.is_empty() {
        return None;
    }
    match fp.params.iter().find(|x| x.param == p) {
        Some(f) if f.unit_bytes == eb => classes_meet(f, eb),
        Some(_) => None,
        None => Some(false),
    }
}

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
fn inter_tb_witness(a: &Analysis, launch: &BoundLaunch, p: u32, eb: u64, loads: &[usize]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`affine_apart`] against every pair of points of small boxes: whenever it answers,
    /// no two points that differ in a TB coordinate have accesses that meet; and it
    /// answers for the row-major layouts it is for.
    #[test]
    fn affine_apart_is_sound_on_every_small_box() {
        let meet = |terms: &[(i128, i128, bool)], covered: i128| -> bool {
            let mut points: Vec<(Vec<i128>, i128)> = vec![(Vec::new(), 0)];
            for &(c, n, _) in terms {
                points = points
                    .into_iter()
                    .flat_map(|(xs, e)| {
                        (0..n).map(move |x| {
                            let mut xs = xs.clone();
                            xs.push(x);
                            (xs, e + c * x)
                        })
                    })
                    .collect();
            }
            points.iter().any(|(xa, ea)| {
                points.iter().any(|(xb, eb)| {
                    let other_tb = terms.iter().enumerate().any(|(k, t)| t.2 && xa[k] != xb[k]);
                    other_tb && (ea - eb).abs() < covered
                })
            })
        };
        let (mut answered, mut cases) = (0, 0);
        let coefs = [-5i128, -2, 0, 1, 2, 3, 4, 6, 8, 12];
        for &c0 in &coefs {
            for &c1 in &coefs {
                for &c2 in &coefs {
                    for (n0, n1, n2) in [(2, 3, 2), (4, 2, 3), (3, 1, 2), (2, 2, 4)] {
                        for covered in 1..=3 {
                            let terms = [(c0, n0, false), (c1, n1, true), (c2, n2, true)];
                            cases += 1;
                            if affine_apart(&terms, covered) {
                                answered += 1;
                                assert!(!meet(&terms, covered), "{terms:?} covering {covered}");
                            }
                        }
                    }
                }
            }
        }
        assert!(answered * 20 > cases, "answered {answered} of {cases}");
        // Row-major tiles: x = 16 bx + tx, y = 16 by + ty, element y * 64 + x.
        let tile = [
            (1, 16, false),
            (16, 4, true),
            (64, 16, false),
            (1024, 4, true),
        ];
        assert!(affine_apart(&tile, 1));
        assert!(
            !affine_apart(&tile, 2),
            "a two-element access meets its neighbour's"
        );
        assert!(
            !affine_apart(&[(1, 16, false), (0, 4, true)], 1),
            "every TB reads alike"
        );
        assert!(affine_apart(
            &[(1, 16, false), (0, 1, true), (16, 4, true)],
            1
        ));
    }

    use crate::expr::{add, ext, konst, mul, op, var};

    fn ranges(block: i128, trip: i128) -> Ranges<'static> {
        Ranges {
            src: None,
            block: [block, 1, 1],
            grid: [4, 1, 1],
            trips: Vec::new(),
            fixed: [(0, trip)].into_iter().collect(),
        }
    }

    fn acc(addr: E, loops: &[u32]) -> Access {
        Access {
            addr,
            width: 4,
            loops: loops.iter().map(|&l| LoopId(l)).collect(),
        }
    }

    const BASE: i128 = 1 << 36;

    #[test]
    fn gemm_unrolled_row_loads_never_meet() {
        // A[row * n + 4 k + c], 4-byte elements, loop of 256 iterations (n = 1024, unrolled
        // by 4): byte address base + 4 (row n) + 16 k + 4 c, the row from tid.y.
        let r = ranges(16, 256);
        let k = var(Var::Iter(LoopId(0)));
        let row = mul(var(Var::Tid(0)), konst(4 * 1024));
        let at = |c: i128| {
            acc(
                add(
                    add(konst(BASE), row.clone()),
                    add(mul(k.clone(), konst(16)), konst(4 * c)),
                ),
                &[0],
            )
        };
        for c in 0..4 {
            // One load against itself: 16 d = 0 needs d = 0.
            assert_eq!(intra(&r, BASE, 4, &at(c), &at(c), true), Some(false));
            for c2 in c + 1..4 {
                // 4 (c2 - c) + 16 d = 0 has no integer d.
                assert_eq!(intra(&r, BASE, 4, &at(c), &at(c2), false), Some(false));
            }
        }
        // A load that reads one element twice (offset 16 = next iteration of offset 0) is
        // not excluded: the test never claims a collision, it defers.
        let shifted = acc(
            add(
                add(konst(BASE + 16), row.clone()),
                mul(k.clone(), konst(16)),
            ),
            &[0],
        );
        assert_eq!(intra(&r, BASE, 4, &at(0), &shifted, false), None);
        // An address that does not move with the counter: same element every iteration.
        let fixed = acc(add(konst(BASE), row), &[0]);
        assert_eq!(intra(&r, BASE, 4, &fixed, &fixed, true), None);
        // Outside loops a load runs once per thread.
        let once = acc(konst(BASE), &[]);
        assert_eq!(intra(&r, BASE, 4, &once, &once, true), Some(false));
    }

    #[test]
    fn a_32_bit_wrap_defers_to_the_solver() {
        // base + 4 * s32(tid.x + k * 2^30), 8 iterations: k = 0 and k = 4 wrap onto the
        // same index (4 * 2^30 = 2^32), so the load does read an element twice. Without
        // the wrap the stride (2^32 bytes) would exclude it: the fast path must not answer.
        let r = ranges(32, 8);
        let k = var(Var::Iter(LoopId(0)));
        let idx = ext(add(var(Var::Tid(0)), mul(k, konst(1 << 30))), 32, true);
        let load = acc(add(konst(BASE), mul(idx.clone(), konst(4))), &[0]);
        assert_eq!(intra(&r, BASE, 4, &load, &load, true), None);
        // The same expression with 2 iterations cannot wrap (at most 31 + 2^30): decided.
        let r2 = ranges(32, 2);
        assert_eq!(intra(&r2, BASE, 4, &load, &load, true), Some(false));
        // The wrap checked concretely: iterations 0 and 4 of thread 0 give one index.
        use crate::expr::{eval, tests::NoTrips, Ctx};
        let mut cx = Ctx::new(1);
        cx.iters[0] = Some(0);
        let v0 = eval(&idx, &cx, &NoTrips);
        cx.iters[0] = Some(4);
        assert_eq!(v0, eval(&idx, &cx, &NoTrips));
        // A thread-only term may wrap: it is the same value for both accesses of a thread.
        let t = ext(mul(var(Var::Tid(0)), konst(1 << 31)), 32, true);
        let k = var(Var::Iter(LoopId(0)));
        let tl = |c: i128| {
            acc(
                add(
                    add(konst(BASE + 4 * c), mul(t.clone(), konst(4))),
                    mul(k.clone(), konst(8)),
                ),
                &[0],
            )
        };
        assert_eq!(intra(&r, BASE, 4, &tl(0), &tl(1), false), Some(false));
    }

    #[test]
    fn an_or_of_disjoint_bits_is_a_sum() {
        // base + 4 * s32((k << 5) | tid.x), 32 threads, 8 iterations (rr_friendly_table's
        // row and lane): the or is k * 32 + lane, so a thread never reads an element twice.
        let r = ranges(32, 8);
        let k = var(Var::Iter(LoopId(0)));
        let idx = |s: i128| {
            ext(
                op(
                    IntOp::BitOr,
                    op(IntOp::Shl(32), k.clone(), konst(s)),
                    var(Var::Tid(0)),
                ),
                32,
                true,
            )
        };
        let load = |s: i128| acc(add(konst(BASE), mul(idx(s), konst(4))), &[0]);
        assert_eq!(r.of(&idx(5)), Some((0, 7 * 32 + 31)));
        // The lane as the kernel computes it, `tid.x & 31`, with 64 threads.
        let r64 = ranges(64, 8);
        let lane = op(IntOp::BitAnd, var(Var::Tid(0)), konst(31));
        assert_eq!(r64.of(&lane), Some((0, 31)));
        let by_lane = ext(
            op(IntOp::BitOr, op(IntOp::Shl(32), k.clone(), konst(5)), lane),
            32,
            true,
        );
        let l = acc(add(konst(BASE), mul(by_lane, konst(4))), &[0]);
        assert_eq!(intra(&r64, BASE, 4, &l, &l, true), Some(false));
        assert_eq!(intra(&r, BASE, 4, &load(5), &load(5), true), Some(false));
        // Shifted by 4 the bits overlap (lanes reach 31): thread 16 reads element 16 at
        // k = 0 and k = 1. Not a sum, so the fast path must not answer "never".
        assert_eq!(
            r.of(&idx(4)),
            Some((i128::from(i32::MIN), i128::from(i32::MAX)))
        );
        assert_ne!(intra(&r, BASE, 4, &load(4), &load(4), true), Some(false));
    }

    #[test]
    fn gcd_and_banerjee() {
        // 4 + 16 d in [0, 0]: 16 does not divide -4.
        let v = [DVar {
            coef: 16,
            lo: -10,
            hi: Some(10),
        }];
        assert_eq!(excluded(4, &v, (0, 0)), Some(true));
        // 16 d in [0, 0] with d in [1, 10]: d = 0 only, outside the box.
        let v1 = [DVar {
            coef: 16,
            lo: 1,
            hi: Some(10),
        }];
        assert_eq!(excluded(0, &v1, (0, 0)), Some(true));
        // 16 d in [-20, 20] with d in [1, 10]: d = 1.
        assert_eq!(excluded(0, &v1, (-20, 20)), Some(false));
        // 3 x + 5 y = 100 with x, y in [0, 5]: at most 40 (Banerjee).
        let v2 = [
            DVar {
                coef: 3,
                lo: 0,
                hi: Some(5),
            },
            DVar {
                coef: 5,
                lo: 0,
                hi: Some(5),
            },
        ];
        assert_eq!(excluded(0, &v2, (100, 100)), Some(true));
        // 3 x + 5 y = 8: x = y = 1.
        assert_eq!(excluded(0, &v2, (8, 8)), Some(false));
        // Unbounded above: 2 x = 1000 has x = 500.
        let v3 = [DVar {
            coef: 2,
            lo: 0,
            hi: None,
        }];
        assert_eq!(excluded(0, &v3, (1000, 1000)), Some(false));
        assert_eq!(excluded(0, &v3, (-5, -1)), Some(true));
    }
}
