//! The intra-thread dependence test, per load pair ([`intra_pair`]): the two addresses of
//! one thread as affine forms over bounded variables, excluded from the element-overlap
//! window by a GCD test and Banerjee's bounds.

use super::*;

/// Low bits of `e` that are zero on every evaluation (a lower bound; 127 for zero).
pub(super) fn low_zero_bits(e: &Expr) -> u32 {
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
pub(super) fn ext_bounds(b: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    }
}

/// A term of an affine form.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Atom {
    Tid(u8),
    Ctaid(u8),
    Iter(u32),
    /// A sub-expression of the thread coordinates and constants only (no loop counter, trip
    /// count or recurrence): one value per thread, equal on both sides of a question.
    Thread(E),
}

/// `c + sum(coef * atom)`, exact over every execution (no wrap on the way).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Lin {
    pub(super) c: i128,
    pub(super) terms: Vec<(Atom, i128)>,
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
pub(super) fn lin(e: &E, r: &Ranges) -> Option<Lin> {
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

#[cfg(test)]
mod tests {
    use super::*;
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
