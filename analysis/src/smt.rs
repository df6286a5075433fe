//! The Locality Descriptors' existence questions decided symbolically with z3, when the
//! machine has it ([`native::z3`], loaded at run time): "can two different TBs read the same
//! element of parameter `p`?" and "can one thread read an element of `p` twice?".
//!
//! The model's expressions are encoded as z3 integers (linear arithmetic for the usual
//! index expressions, whose launch parameters are constants): they are `i128` arithmetic
//! that stays far from overflow, and the 32-bit wraps the PTX performs are `Ext` nodes,
//! encoded exactly with `mod`, so wrap is modelled, never assumed away. Bitwise operations
//! other than low-bit masks go through 128-bit vectors. Each side of a question has its own
//! `%tid`, `%ctaid` and loop counters, bounded by the launch; a load at iterations `k` runs
//! when every enclosing loop's `k_l < Trip_l` and its guard holds; `Trip_l` is a constant
//! when the exits depend on the launch only, else a fresh variable with `exit(Trip_l - 1)`
//! and `forall j < Trip_l - 1: !exit(j)`. Two accesses collide when their element ranges in
//! the parameter's buffer overlap. A question the solver cannot answer within its resource
//! budget (`unknown`, or an expression outside the encoding) returns `None` for that
//! parameter, and the caller falls back to enumeration.

use std::collections::HashMap;

use launch::BoundLaunch;
use native::z3::{Bool, Context, Int, Model, Params, SatResult, Solver, BV, Z3};

use crate::dependence::Ranges;
use crate::existence::Existence;
use crate::expr::{Expr, IntOp, Rel, Var};
use crate::loops::LoopId;
use crate::Analysis;

/// z3 as this process found it, for reports (the `z3` object of `paver analyze`'s JSON).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SolverStatus {
    /// Whether a question needed z3 in this process: the fast tests, and enumeration on
    /// small launches, leave none to it on most launches, and then z3 is not looked for.
    pub needed: bool,
    /// Whether z3 loaded (`None` when it was not needed).
    pub available: Option<bool>,
    /// Its version (`major.minor.build.revision`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How it was found: "Python wheel", "environment variable", "system loader", ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The library file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Why it is not available (where it was looked for, how to install it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SolverStatus {
    /// What this process has found so far; never looks for z3 itself.
    pub fn now() -> SolverStatus {
        let mut s = SolverStatus {
            needed: false,
            available: None,
            version: None,
            origin: None,
            path: None,
            reason: None,
        };
        match native::z3::loaded() {
            None => {}
            Some(Ok(z)) => {
                s.needed = true;
                s.available = Some(true);
                s.version = Some(z.version().to_string());
                s.origin = Some(z.origin().to_string());
                s.path = Some(z.path().display().to_string());
            }
            Some(Err(e)) => {
                s.needed = true;
                s.available = Some(false);
                s.reason = Some(e.to_string());
            }
        }
        s
    }
}

impl std::fmt::Display for SolverStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.available, &self.reason) {
            (None, _) => f.write_str("z3 not needed (no question left open for it)"),
            (Some(true), _) => write!(
                f,
                "z3 {} ({}: {})",
                self.version.as_deref().unwrap_or("?"),
                self.origin.as_deref().unwrap_or("?"),
                self.path.as_deref().unwrap_or("?")
            ),
            (Some(false), reason) => write!(
                f,
                "z3 not available, its questions went to enumeration ({})",
                reason.as_deref().unwrap_or("?")
            ),
        }
    }
}

/// Width of the bit-vectors used for the bitwise operations that have no integer form.
const W: u32 = 128;
/// z3 resource units one query may spend (a deterministic budget, unlike a time-out: the
/// same launch gets the same answers on any machine under any load).
pub const RLIMIT: u32 = 200_000;
/// Largest number of load pairs asked about per parameter and question; beyond, the
/// parameter goes to enumeration.
pub const MAX_PAIRS: usize = 64;

struct Side<'c> {
    id: u32,
    tid: [Int<'c>; 3],
    ctaid: [Int<'c>; 3],
    iters: HashMap<u32, Int<'c>>,
}

struct Enc<'c, 'a> {
    ctx: &'c Context<'c>,
    a: &'a Analysis,
    /// Constraints defining the trip-count variables created while encoding.
    defs: Vec<Bool<'c>>,
    trips: HashMap<(u32, u32), Int<'c>>,
    /// Loop bounds relaxed to avoid quantifiers (see [`Enc::runs_at`]).
    relaxed: bool,
    /// Value ranges of the launch's variables, to drop the wraps that cannot happen.
    ranges: &'a Ranges<'a>,
    fresh: u32,
}

impl<'c> Enc<'c, '_> {
    fn k(&self, v: i128) -> Int<'c> {
        match i64::try_from(v) {
            Ok(x) => Int::from_i64(self.ctx, x),
            // Only fails on a malformed numeral, which an i128 never is.
            Err(_) => Int::from_str(self.ctx, &v.to_string()).unwrap_or_else(|| self.k(0)),
        }
    }
    fn var(&mut self, name: &str) -> Int<'c> {
        self.fresh += 1;
        Int::new_const(self.ctx, &format!("{name}!{}", self.fresh))
    }
    fn truth(&self, b: &Bool<'c>) -> Int<'c> {
        b.ite(&self.k(1), &self.k(0))
    }
    fn nz(&self, v: &Int<'c>) -> Bool<'c> {
        v.equals(&self.k(0)).not()
    }
    fn add(&self, x: &Int<'c>, y: &Int<'c>) -> Int<'c> {
        Int::add(self.ctx, &[x, y])
    }
    fn sub(&self, x: &Int<'c>, y: &Int<'c>) -> Int<'c> {
        Int::sub(self.ctx, &[x, y])
    }
    fn mul(&self, x: &Int<'c>, y: &Int<'c>) -> Int<'c> {
        Int::mul(self.ctx, &[x, y])
    }
    /// `x` reduced to its low `bits` bits, read as signed or unsigned (PTX `cvt`, the
    /// 32-bit wrap of `add.s32`): z3's `mod` is Euclidean, so it is never negative.
    fn wrap(&self, x: &Int<'c>, bits: u32, signed: bool) -> Int<'c> {
        let m = self.k(1i128 << bits);
        if signed {
            let h = self.k(1i128 << (bits - 1));
            self.sub(&self.add(x, &h).modulo(&m), &h)
        } else {
            x.modulo(&m)
        }
    }
    /// Division truncating towards zero (PTX `div`, Rust's `/`); z3's `div` floors for a
    /// positive divisor.
    fn tdiv(&self, x: &Int<'c>, y: &Int<'c>) -> Int<'c> {
        let zero = self.k(0);
        let (ax, ay) = (
            x.ge(&zero).ite(x, &x.unary_minus()),
            y.ge(&zero).ite(y, &y.unary_minus()),
        );
        let q = ax.div(&ay);
        x.ge(&zero).equals(&y.ge(&zero)).ite(&q, &q.unary_minus())
    }
    /// A bitwise operation through 128-bit vectors (exact for `i128` values).
    fn bitwise(&self, x: &Int<'c>, y: &Int<'c>, f: impl Fn(&BV<'c>, &BV<'c>) -> BV<'c>) -> Int<'c> {
        Int::from_bv(&f(&BV::from_int(x, W), &BV::from_int(y, W)), true)
    }

    fn side(&mut self, id: u32, launch: &BoundLaunch) -> (Side<'c>, Vec<Bool<'c>>) {
        let b = [launch.block.x, launch.block.y, launch.block.z];
        let g = [launch.grid.x, launch.grid.y, launch.grid.z];
        let tid = [0, 1, 2].map(|d| self.var(&format!("tid{d}")));
        let ctaid = [0, 1, 2].map(|d| self.var(&format!("ctaid{d}")));
        let mut c = Vec::new();
        for d in 0..3 {
            c.push(tid[d].ge(&self.k(0)));
            c.push(tid[d].lt(&self.k(i128::from(b[d]))));
            c.push(ctaid[d].ge(&self.k(0)));
            c.push(ctaid[d].lt(&self.k(i128::from(g[d]))));
        }
        let s = Side {
            id,
            tid,
            ctaid,
            iters: HashMap::new(),
        };
        (s, c)
    }

    /// `exit(k)` of loop `l` on `side` with the loop's counter bound to `k`.
    fn exit_at(&mut self, l: LoopId, side: &mut Side<'c>, k: &Int<'c>) -> Option<Bool<'c>> {
        let info = self.a.model.loops.get(l.index())?;
        let mut any = Vec::new();
        let saved = side.iters.insert(l.0, k.clone());
        let mut ok = true;
        for e in &info.exits {
            let mut has_trip = false;
            e.visit_leaves(&mut |x| has_trip |= matches!(x, Expr::Trip(_)));
            if has_trip {
                ok = false;
                break;
            }
            match self.int(e, side) {
                Some(v) => any.push(self.nz(&v)),
                None => {
                    ok = false;
                    break;
                }
            }
        }
        match saved {
            Some(v) => side.iters.insert(l.0, v),
            None => side.iters.remove(&l.0),
        };
        if !ok || any.is_empty() {
            return None;
        }
        let refs: Vec<&Bool> = any.iter().collect();
        Some(Bool::or(self.ctx, &refs))
    }

    /// The trip count of loop `l` when it depends on nothing but the launch.
    fn constant_trip(&self, l: LoopId) -> Option<i128> {
        let info = self.a.model.loops.get(l.index())?;
        let mut free = true;
        for e in &info.exits {
            e.visit_leaves(&mut |x| match x {
                Expr::Var(Var::Iter(q)) if *q == l => {}
                _ => free = false,
            });
        }
        if !free {
            return None;
        }
        let cx = crate::expr::Ctx::new(self.a.model.loops.len());
        crate::expr::TripSource::trip(&self.a.model, l, &cx).ok()
    }

    /// "Loop `l` runs iteration `k` on `side`", i.e. `k < Trip_l` for `k >= 0`. In relaxed
    /// mode a non-constant trip count becomes `k = 0 or !exit(k - 1)`, which every iteration
    /// that runs satisfies (so an unsat answer stands) but which needs no quantifier; a
    /// witness found that way is checked concretely before it is believed (see
    /// [`question`]).
    fn runs_at(&mut self, l: LoopId, side: &mut Side<'c>, k: &Int<'c>) -> Option<Bool<'c>> {
        if let Some(t) = self.constant_trip(l) {
            return Some(k.lt(&self.k(t)));
        }
        if let Some(t) = self.ranges.max_trip(l) {
            // Every thread's trip count is at most `t` (measured): a sound extra bound
            // that lets the wrap checks below see the counter's range.
            let below = k.lt(&self.k(t));
            let rest = self.runs_at_unbounded(l, side, k)?;
            return Some(Bool::and(self.ctx, &[&below, &rest]));
        }
        self.runs_at_unbounded(l, side, k)
    }

    fn runs_at_unbounded(
        &mut self,
        l: LoopId,
        side: &mut Side<'c>,
        k: &Int<'c>,
    ) -> Option<Bool<'c>> {
        if self.relaxed {
            let prev = self.sub(k, &self.k(1));
            let exited = self.exit_at(l, side, &prev)?;
            return Some(Bool::or(self.ctx, &[&k.equals(&self.k(0)), &exited.not()]));
        }
        let t = self.trip(l, side)?;
        Some(k.lt(&t))
    }

    fn trip(&mut self, l: LoopId, side: &mut Side<'c>) -> Option<Int<'c>> {
        if let Some(t) = self.trips.get(&(side.id, l.0)) {
            return Some(t.clone());
        }
        if let Some(t) = self.constant_trip(l) {
            let t = self.k(t);
            self.trips.insert((side.id, l.0), t.clone());
            return Some(t);
        }
        let t = self.var(&format!("trip{}", l.0));
        let last = self.sub(&t, &self.k(1));
        let at_last = self.exit_at(l, side, &last)?;
        let j = self.var("j");
        let before = self.exit_at(l, side, &j)?;
        let body = Bool::and(self.ctx, &[&j.ge(&self.k(0)), &j.lt(&last)]).implies(&before.not());
        let all = native::z3::forall_const(self.ctx, &[&j], &body);
        self.defs.push(t.ge(&self.k(1)));
        if let Some(m) = self.ranges.max_trip(l) {
            self.defs.push(t.le(&self.k(m)));
        }
        self.defs.push(at_last);
        self.defs.push(all);
        self.trips.insert((side.id, l.0), t.clone());
        Some(t)
    }

    /// `e` as a z3 integer term. The model's expressions are `i128` arithmetic that never
    /// comes near overflow (launch-bounded indices times launch constants), so unbounded
    /// integers give the same values; the 32-bit wraps the PTX performs are explicit `Ext`
    /// nodes and are encoded exactly with `mod`.
    fn int(&mut self, e: &Expr, side: &mut Side<'c>) -> Option<Int<'c>> {
        Some(match e {
            Expr::Const(c) => self.k(*c),
            Expr::Var(Var::Tid(d)) => side.tid[usize::from(*d).min(2)].clone(),
            Expr::Var(Var::Ctaid(d)) => side.ctaid[usize::from(*d).min(2)].clone(),
            Expr::Var(Var::Iter(l)) => side.iters.get(&l.0)?.clone(),
            Expr::Var(Var::Phi(_)) | Expr::Unknown(_) | Expr::Rec(..) => return None,
            Expr::Trip(l) => self.trip(*l, side)?,
            Expr::Add(a, b) => {
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                self.add(&x, &y)
            }
            Expr::Sub(a, b) => {
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                self.sub(&x, &y)
            }
            Expr::Mul(a, b) => {
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                self.mul(&x, &y)
            }
            Expr::Ext { bits, signed, e } => {
                let b = u32::from(*bits).clamp(1, W);
                let x = self.int(e, side)?;
                if self.ranges.ext_is_identity(*bits, *signed, e) {
                    // No value in range wraps: the extension is the identity, and the term
                    // stays linear.
                    x
                } else {
                    self.wrap(&x, b, *signed)
                }
            }
            Expr::Op(o, a, b) => {
                let konst_b = b.as_const();
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                match o {
                    // Only by a non-zero constant: a variable divisor could be zero on a
                    // path the concrete evaluation never takes (`Select` is lazy), and a
                    // constraint `y != 0` would wrongly exclude the other paths' witnesses.
                    IntOp::Div | IntOp::Rem => match konst_b {
                        Some(d) if d != 0 => {
                            let q = self.tdiv(&x, &y);
                            if *o == IntOp::Div {
                                q
                            } else {
                                self.sub(&x, &self.mul(&y, &q))
                            }
                        }
                        _ => return None,
                    },
                    IntOp::Shl(bits) => match konst_b {
                        Some(s) if s >= 0 && s < i128::from(*bits) => {
                            self.mul(&x, &self.k(1i128 << s))
                        }
                        Some(_) => self.k(0),
                        None => return None,
                    },
                    IntOp::Shr => match konst_b {
                        // Arithmetic shift = floor division by a power of two.
                        Some(s) => x.div(&self.k(1i128 << s.clamp(0, 126))),
                        None => return None,
                    },
                    IntOp::BitAnd => match konst_b {
                        Some(m) if m > 0 && (m + 1).count_ones() == 1 => x.modulo(&self.k(m + 1)),
                        _ => self.bitwise(&x, &y, |p, q| p.bvand(q)),
                    },
                    IntOp::BitOr => self.bitwise(&x, &y, |p, q| p.bvor(q)),
                    IntOp::BitXor => self.bitwise(&x, &y, |p, q| p.bvxor(q)),
                    IntOp::Min => x.lt(&y).ite(&x, &y),
                    IntOp::Max => x.gt(&y).ite(&x, &y),
                    IntOp::MulHi(bits) => self.mul(&x, &y).div(&self.k(1i128 << bits)),
                }
            }
            Expr::Cmp(r, a, b) => {
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                let c = match r {
                    Rel::Eq => x.equals(&y),
                    Rel::Ne => x.equals(&y).not(),
                    Rel::Lt => x.lt(&y),
                    Rel::Le => x.le(&y),
                    Rel::Gt => x.gt(&y),
                    Rel::Ge => x.ge(&y),
                };
                self.truth(&c)
            }
            Expr::Not(a) => {
                let x = self.int(a, side)?;
                self.truth(&x.equals(&self.k(0)))
            }
            Expr::And(a, b) => {
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                self.truth(&Bool::and(self.ctx, &[&self.nz(&x), &self.nz(&y)]))
            }
            Expr::Or(a, b) => {
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                self.truth(&Bool::or(self.ctx, &[&self.nz(&x), &self.nz(&y)]))
            }
            Expr::Select(c, a, b) => {
                let cv = self.int(c, side)?;
                let (x, y) = (self.int(a, side)?, self.int(b, side)?);
                self.nz(&cv).ite(&x, &y)
            }
        })
    }

    /// Constraints under which load `i` runs on `side` (its loop counters created), and its
    /// first and last element index in parameter `p`'s buffer of `eb`-byte elements.
    fn access(
        &mut self,
        i: usize,
        side: &mut Side<'c>,
        p: u32,
        eb: u64,
    ) -> Option<(Vec<Bool<'c>>, Int<'c>, Int<'c>)> {
        let site = &self.a.model.loads[i];
        let mut c = Vec::new();
        for l in &site.loops {
            let k = self.var(&format!("k{}", l.0));
            side.iters.insert(l.0, k.clone());
            c.push(k.ge(&self.k(0)));
            let runs = self.runs_at(*l, side, &k)?;
            c.push(runs);
        }
        for g in &site.cond {
            let v = self.int(g, side)?;
            c.push(self.nz(&v));
        }
        let a = self.int(&site.addr, side)?;
        let base = self.k((i128::from(p) + 1) << 36);
        c.push(a.ge(&base));
        c.push(a.lt(&self.k((i128::from(p) + 2) << 36)));
        // The offset is not negative here, so floor division is the element index.
        let off = self.sub(&a, &base);
        let ebv = self.k(i128::from(eb));
        let first = off.div(&ebv);
        let last = self
            .add(&off, &self.k(i128::from(site.width) - 1))
            .div(&ebv);
        Some((c, first, last))
    }
}

/// What the solver said about one encoding of a question.
enum Answer {
    Unsat,
    /// Satisfiable; with the witness's concrete check when the encoding was relaxed.
    Sat {
        verified: bool,
    },
}

/// One existence question over loads `i` and `j` of parameter `p`: `same_thread` asks for
/// one thread (two different executions), otherwise for two different TBs. Asked first with
/// relaxed loop bounds; a witness that does not survive the concrete check sends the
/// question to the exact (quantified) encoding.
/// The parameter a question is about, with what encoding it needs.
struct Subject<'a> {
    a: &'a Analysis,
    ranges: &'a Ranges<'a>,
    /// The z3 context every query about this parameter shares (created once: a context
    /// costs milliseconds, more than many of the queries).
    ctx: &'a Context<'a>,
    launch: &'a BoundLaunch,
    /// Parameter index.
    p: u32,
    /// Its element size in bytes.
    eb: u64,
}

fn question(q: &Subject, ij: (usize, usize), same_thread: bool) -> Option<bool> {
    match ask(q, ij, same_thread, true)? {
        Answer::Unsat => Some(false),
        Answer::Sat { verified: true } => Some(true),
        Answer::Sat { verified: false } => match ask(q, ij, same_thread, false)? {
            Answer::Unsat => Some(false),
            Answer::Sat { .. } => Some(true),
        },
    }
}

fn ask(q: &Subject, (i, j): (usize, usize), same_thread: bool, relaxed: bool) -> Option<Answer> {
    let Subject {
        a,
        ranges,
        ctx,
        launch,
        p,
        eb,
    } = *q;
    let mut enc = Enc {
        ctx,
        a,
        defs: Vec::new(),
        trips: HashMap::new(),
        relaxed,
        ranges,
        fresh: 0,
    };
    let (mut s1, mut cs) = enc.side(0, launch);
    let (mut s2, c2) = enc.side(1, launch);
    if same_thread {
        s2.tid = s1.tid.clone();
        s2.ctaid = s1.ctaid.clone();
    } else {
        cs.extend(c2);
    }
    let (ca, fa, la) = enc.access(i, &mut s1, p, eb)?;
    let (cb, fb, lb) = enc.access(j, &mut s2, p, eb)?;
    cs.extend(ca);
    cs.extend(cb);
    cs.push(fa.le(&lb));
    cs.push(fb.le(&la));
    if same_thread {
        if i == j {
            // Two different executions of one load: some counter differs.
            let site = &a.model.loads[i];
            if site.loops.is_empty() {
                return Some(Answer::Unsat);
            }
            let diff: Vec<Bool> = site
                .loops
                .iter()
                .map(|l| s1.iters[&l.0].equals(&s2.iters[&l.0]).not())
                .collect();
            let refs: Vec<&Bool> = diff.iter().collect();
            cs.push(Bool::or(ctx, &refs));
        }
    } else {
        let same: Vec<Bool> = (0..3).map(|d| s1.ctaid[d].equals(&s2.ctaid[d])).collect();
        let refs: Vec<&Bool> = same.iter().collect();
        cs.push(Bool::and(ctx, &refs).not());
    }
    cs.append(&mut enc.defs);
    let solver = Solver::new(ctx);
    let mut params = Params::new(ctx);
    params.set_u32("rlimit", RLIMIT);
    solver.set_params(&params);
    for c in &cs {
        solver.assert(c);
    }
    match solver.check() {
        SatResult::Unsat => Some(Answer::Unsat),
        SatResult::Unknown => None,
        SatResult::Sat if !relaxed => Some(Answer::Sat { verified: true }),
        SatResult::Sat => {
            let verified = solver.get_model().is_some_and(|m| {
                let w1 = witness(&m, &s1);
                let w2 = witness(&m, &s2);
                match (w1, w2) {
                    (Some(x), Some(y)) => collide(q, (i, &x), (j, &y), same_thread),
                    _ => false,
                }
            });
            Some(Answer::Sat { verified })
        }
    }
}

/// One side of a witness: the thread and the iteration of every loop of its load.
fn witness(m: &Model, side: &Side) -> Option<crate::expr::Ctx> {
    let val = |x: &Int| m.eval(x, true).and_then(|v| v.as_i64()).map(i128::from);
    let mut cx = crate::expr::Ctx::new(0);
    for d in 0..3 {
        cx.tid[d] = val(&side.tid[d])?;
        cx.ctaid[d] = val(&side.ctaid[d])?;
    }
    let mut iters: Vec<(u32, i128)> = Vec::new();
    for (l, k) in &side.iters {
        iters.push((*l, val(k)?));
    }
    let n = iters.iter().map(|x| x.0 as usize + 1).max().unwrap_or(0);
    cx.iters = vec![None; n];
    for (l, k) in iters {
        cx.iters[l as usize] = Some(k);
    }
    Some(cx)
}

/// Whether the concrete witness is real: both loads run at their iterations (trip counts
/// and guards evaluated exactly), read overlapping elements of the parameter's buffer, and
/// are two different executions (different TBs, or one thread's different iterations).
fn collide(
    q: &Subject,
    (i, x): (usize, &crate::expr::Ctx),
    (j, y): (usize, &crate::expr::Ctx),
    same_thread: bool,
) -> bool {
    use crate::expr::{eval, TripSource};
    let (a, eb) = (q.a, i128::from(q.eb));
    let base = (i128::from(q.p) + 1) << 36;
    let range = |load: usize, cx: &crate::expr::Ctx| -> Option<(i128, i128)> {
        let site = a.model.loads.get(load)?;
        let mut cx = cx.clone();
        cx.iters.resize(a.model.loops.len(), None);
        cx.trips = vec![None; a.model.loops.len()];
        for l in &site.loops {
            let k = cx.iters.get(l.index()).copied().flatten()?;
            // The iteration runs when it is below the thread's trip count.
            cx.iters[l.index()] = None;
            let t = a.model.trip(*l, &cx).ok()?;
            if k < 0 || k >= t {
                return None;
            }
            cx.iters[l.index()] = Some(k);
        }
        for g in &site.cond {
            if eval(g, &cx, &a.model).ok()? == 0 {
                return None;
            }
        }
        let addr = eval(&site.addr, &cx, &a.model).ok()?;
        // Inside the parameter's buffer region, as the encoding requires.
        if addr < base || addr >= base + (1 << 36) {
            return None;
        }
        Some((addr / eb, (addr + i128::from(site.width) - 1) / eb))
    };
    let (Some(r1), Some(r2)) = (range(i, x), range(j, y)) else {
        return false;
    };
    let overlap = r1.0 <= r2.1 && r2.0 <= r1.1;
    let distinct = if same_thread {
        x.tid == y.tid && x.ctaid == y.ctaid && (i != j || x.iters != y.iters)
    } else {
        x.ctaid != y.ctaid
    };
    overlap && distinct
}

/// Per parameter (in parallel), the existence answers decided by `z3` alone (`None` where a
/// query had no answer within [`RLIMIT`], or the parameter has more than [`MAX_PAIRS`] load
/// pairs). Deterministic: budgets are z3 resource units, not time. The descriptors' default
/// path ([`crate::descriptor::compute`]) asks z3 only what the fast tests leave open
/// ([`decide`]); this asks it everything, to test the solver's reach.
pub fn existence(z3: &Z3, a: &Analysis, launch: &BoundLaunch) -> Vec<Option<Existence>> {
    let params = crate::existence::load_params(a);
    let ranges = Ranges::new(a, launch);
    use rayon::prelude::*;
    (0..launch.params.len() as u32)
        .into_par_iter()
        .map(|p| {
            let eb = crate::existence::elem_bytes(launch, p)?;
            let loads = crate::dependence::param_loads(a, &params, p);
            let pairs = crate::existence::all_pairs(&loads);
            decide(z3, a, launch, &ranges, (p, eb), None, &pairs, &pairs)
        })
        .collect()
}

/// The existence answers for parameter `p` (elements of `eb` bytes) with one `z3` context:
/// the inter-TB question over `all` (every load pair of `p`) unless `inter` already
/// answers it, the intra-thread question over `open` (the pairs a fast test left open; the
/// others are known not to collide). `None` when a needed query has no answer within
/// [`RLIMIT`] or a question has more than [`MAX_PAIRS`] pairs to ask.
#[allow(clippy::too_many_arguments)]
pub fn decide(
    z3: &Z3,
    a: &Analysis,
    launch: &BoundLaunch,
    ranges: &Ranges,
    (p, eb): (u32, u64),
    inter: Option<bool>,
    all: &[(usize, usize)],
    open: &[(usize, usize)],
) -> Option<Existence> {
    if open.len() > MAX_PAIRS || (inter.is_none() && all.len() > MAX_PAIRS) {
        return None;
    }
    let mut e = Existence {
        inter_tb: inter.unwrap_or(false),
        intra_thread: false,
    };
    if open.is_empty() && inter.is_some() {
        return Some(e);
    }
    let ctx = z3.context()?;
    let subject = Subject {
        a,
        ranges,
        ctx: &ctx,
        launch,
        p,
        eb,
    };
    if inter.is_none() {
        for &ij in all {
            if e.inter_tb {
                break;
            }
            e.inter_tb = question(&subject, ij, false)?;
        }
    }
    for &ij in open {
        if e.intra_thread {
            break;
        }
        e.intra_thread = question(&subject, ij, true)?;
    }
    Some(e)
}

/// One question about loads `i` and `j` of parameter `p` asked of `z3` alone (a fresh
/// context): `same_thread` for the intra-thread question, else the inter-TB one. For tests
/// comparing the fast paths with the solver.
pub fn pair(
    z3: &Z3,
    a: &Analysis,
    launch: &BoundLaunch,
    (p, eb): (u32, u64),
    ij: (usize, usize),
    same_thread: bool,
) -> Option<bool> {
    let ranges = Ranges::new(a, launch);
    let ctx = z3.context()?;
    let subject = Subject {
        a,
        ranges: &ranges,
        ctx: &ctx,
        launch,
        p,
        eb,
    };
    question(&subject, ij, same_thread)
}
