//! The Locality Descriptors' existence questions decided symbolically with z3 (feature
//! `z3`): "can two different TBs read the same element of parameter `p`?" and "can one
//! thread read an element of `p` twice?".
//!
//! The model's expressions are encoded over 128-bit bit-vectors, which is exactly their
//! `i128` semantics (the `Ext` nodes become extract + sign/zero extension, so 32-bit wrap
//! is modelled, never assumed away). Each side of a question has its own `%tid`, `%ctaid`
//! and loop counters, bounded by the launch; a load at iterations `k` runs when every
//! enclosing loop's `k_l < Trip_l` and its guard holds; `Trip_l` is a fresh variable with
//! `exit(Trip_l - 1)` and `forall j < Trip_l - 1: !exit(j)`. Two accesses collide when their
//! element ranges in the parameter's buffer overlap. A question the solver cannot answer
//! (timeout, `unknown`, an expression outside the encoding) returns `None` for that
//! parameter, and the caller falls back to enumeration.

use std::collections::HashMap;

use launch::BoundLaunch;
use z3::ast::{Ast, Bool, BV};
use z3::{Config, Context, SatResult, Solver};

use crate::descriptor::Existence;
use crate::expr::{Expr, IntOp, Rel, Var};
use crate::loops::LoopId;
use crate::Analysis;

const W: u32 = 128;
/// Milliseconds the solver may spend on one query.
pub const TIMEOUT_MS: u32 = 500;
/// Milliseconds all the queries of one analysis may take; parameters left undecided then
/// go to enumeration.
pub const DEADLINE_MS: u128 = 3000;

struct Side<'c> {
    id: u32,
    tid: [BV<'c>; 3],
    ctaid: [BV<'c>; 3],
    iters: HashMap<u32, BV<'c>>,
}

struct Enc<'c, 'a> {
    ctx: &'c Context,
    a: &'a Analysis,
    /// Constraints defining the trip-count variables created while encoding.
    defs: Vec<Bool<'c>>,
    trips: HashMap<(u32, u32), BV<'c>>,
    fresh: u32,
}

impl<'c> Enc<'c, '_> {
    fn k(&self, v: i128) -> BV<'c> {
        let hi = BV::from_i64(self.ctx, (v >> 64) as i64, 64);
        let lo = BV::from_u64(self.ctx, v as u64, 64);
        hi.concat(&lo)
    }
    fn var(&mut self, name: &str) -> BV<'c> {
        self.fresh += 1;
        BV::new_const(self.ctx, format!("{name}!{}", self.fresh), W)
    }
    fn truth(&self, b: &Bool<'c>) -> BV<'c> {
        b.ite(&self.k(1), &self.k(0))
    }
    fn nz(&self, v: &BV<'c>) -> Bool<'c> {
        v._eq(&self.k(0)).not()
    }

    fn side(&mut self, id: u32, launch: &BoundLaunch) -> (Side<'c>, Vec<Bool<'c>>) {
        let b = [launch.block.x, launch.block.y, launch.block.z];
        let g = [launch.grid.x, launch.grid.y, launch.grid.z];
        let tid = [0, 1, 2].map(|d| self.var(&format!("tid{d}")));
        let ctaid = [0, 1, 2].map(|d| self.var(&format!("ctaid{d}")));
        let mut c = Vec::new();
        for d in 0..3 {
            c.push(tid[d].bvsge(&self.k(0)));
            c.push(tid[d].bvslt(&self.k(i128::from(b[d]))));
            c.push(ctaid[d].bvsge(&self.k(0)));
            c.push(ctaid[d].bvslt(&self.k(i128::from(g[d]))));
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
    fn exit_at(&mut self, l: LoopId, side: &mut Side<'c>, k: &BV<'c>) -> Option<Bool<'c>> {
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
            match self.bv(e, side) {
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

    fn trip(&mut self, l: LoopId, side: &mut Side<'c>) -> Option<BV<'c>> {
        if let Some(t) = self.trips.get(&(side.id, l.0)) {
            return Some(t.clone());
        }
        // A trip count that depends on nothing but the launch is a constant.
        if let Some(info) = self.a.model.loops.get(l.index()) {
            let mut free = true;
            for e in &info.exits {
                e.visit_leaves(&mut |x| match x {
                    Expr::Var(Var::Iter(q)) if *q == l => {}
                    _ => free = false,
                });
            }
            if free {
                let cx = crate::expr::Ctx::new(self.a.model.loops.len());
                let t = crate::expr::TripSource::trip(&self.a.model, l, &cx).ok()?;
                let t = self.k(t);
                self.trips.insert((side.id, l.0), t.clone());
                return Some(t);
            }
        }
        let t = self.var(&format!("trip{}", l.0));
        let last = t.bvsub(&self.k(1));
        let at_last = self.exit_at(l, side, &last)?;
        let j = self.var("j");
        let before = self.exit_at(l, side, &j)?;
        let body =
            Bool::and(self.ctx, &[&j.bvsge(&self.k(0)), &j.bvslt(&last)]).implies(&before.not());
        let all = z3::ast::forall_const(self.ctx, &[&j], &[], &body);
        self.defs.push(t.bvsge(&self.k(1)));
        self.defs.push(at_last);
        self.defs.push(all);
        self.trips.insert((side.id, l.0), t.clone());
        Some(t)
    }

    fn bv(&mut self, e: &Expr, side: &mut Side<'c>) -> Option<BV<'c>> {
        Some(match e {
            Expr::Const(c) => self.k(*c),
            Expr::Var(Var::Tid(d)) => side.tid[usize::from(*d).min(2)].clone(),
            Expr::Var(Var::Ctaid(d)) => side.ctaid[usize::from(*d).min(2)].clone(),
            Expr::Var(Var::Iter(l)) => side.iters.get(&l.0)?.clone(),
            Expr::Var(Var::Phi(_)) | Expr::Unknown(_) => return None,
            Expr::Trip(l) => self.trip(*l, side)?,
            Expr::Add(a, b) => self.bv(a, side)?.bvadd(&self.bv(b, side)?),
            Expr::Sub(a, b) => self.bv(a, side)?.bvsub(&self.bv(b, side)?),
            Expr::Mul(a, b) => self.bv(a, side)?.bvmul(&self.bv(b, side)?),
            Expr::Ext { bits, signed, e } => {
                let b = u32::from(*bits).clamp(1, W);
                let x = self.bv(e, side)?;
                if b == W {
                    x
                } else if *signed {
                    x.extract(b - 1, 0).sign_ext(W - b)
                } else {
                    x.extract(b - 1, 0).zero_ext(W - b)
                }
            }
            Expr::Op(o, a, b) => {
                let (x, y) = (self.bv(a, side)?, self.bv(b, side)?);
                match o {
                    IntOp::Div => x.bvsdiv(&y),
                    IntOp::Rem => x.bvsrem(&y),
                    IntOp::Shl(bits) => {
                        let inr = Bool::and(
                            self.ctx,
                            &[&y.bvsge(&self.k(0)), &y.bvslt(&self.k(i128::from(*bits)))],
                        );
                        inr.ite(&x.bvshl(&y), &self.k(0))
                    }
                    IntOp::Shr => {
                        let lo = y.bvslt(&self.k(0));
                        let hi = y.bvsgt(&self.k(127));
                        let amt = lo.ite(&self.k(0), &hi.ite(&self.k(127), &y));
                        x.bvashr(&amt)
                    }
                    IntOp::BitAnd => x.bvand(&y),
                    IntOp::BitOr => x.bvor(&y),
                    IntOp::BitXor => x.bvxor(&y),
                    IntOp::Min => x.bvslt(&y).ite(&x, &y),
                    IntOp::Max => x.bvsgt(&y).ite(&x, &y),
                    IntOp::MulHi(bits) => x.bvmul(&y).bvashr(&self.k(i128::from(*bits))),
                }
            }
            Expr::Cmp(r, a, b) => {
                let (x, y) = (self.bv(a, side)?, self.bv(b, side)?);
                let c = match r {
                    Rel::Eq => x._eq(&y),
                    Rel::Ne => x._eq(&y).not(),
                    Rel::Lt => x.bvslt(&y),
                    Rel::Le => x.bvsle(&y),
                    Rel::Gt => x.bvsgt(&y),
                    Rel::Ge => x.bvsge(&y),
                };
                self.truth(&c)
            }
            Expr::Not(a) => {
                let x = self.bv(a, side)?;
                self.truth(&x._eq(&self.k(0)))
            }
            Expr::And(a, b) => {
                let (x, y) = (self.bv(a, side)?, self.bv(b, side)?);
                self.truth(&Bool::and(self.ctx, &[&self.nz(&x), &self.nz(&y)]))
            }
            Expr::Or(a, b) => {
                let (x, y) = (self.bv(a, side)?, self.bv(b, side)?);
                self.truth(&Bool::or(self.ctx, &[&self.nz(&x), &self.nz(&y)]))
            }
            Expr::Select(c, a, b) => {
                let cv = self.bv(c, side)?;
                let (x, y) = (self.bv(a, side)?, self.bv(b, side)?);
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
    ) -> Option<(Vec<Bool<'c>>, BV<'c>, BV<'c>)> {
        let site = &self.a.model.loads[i];
        let mut c = Vec::new();
        for l in &site.loops {
            let k = self.var(&format!("k{}", l.0));
            side.iters.insert(l.0, k.clone());
            let t = self.trip(*l, side)?;
            c.push(k.bvsge(&self.k(0)));
            c.push(k.bvslt(&t));
        }
        for g in &site.cond {
            let v = self.bv(g, side)?;
            c.push(self.nz(&v));
        }
        let a = self.bv(&site.addr, side)?;
        let base = self.k((i128::from(p) + 1) << 36);
        c.push(a.bvsge(&base));
        c.push(a.bvslt(&self.k((i128::from(p) + 2) << 36)));
        let off = a.bvsub(&base);
        let ebv = self.k(i128::from(eb));
        let first = off.bvsdiv(&ebv);
        let last = off.bvadd(&self.k(i128::from(site.width) - 1)).bvsdiv(&ebv);
        Some((c, first, last))
    }
}

fn solve(ctx: &Context, cs: &[Bool]) -> Option<bool> {
    let s = Solver::new(ctx);
    let mut params = z3::Params::new(ctx);
    params.set_u32("timeout", TIMEOUT_MS);
    s.set_params(&params);
    for c in cs {
        s.assert(c);
    }
    match s.check() {
        SatResult::Sat => Some(true),
        SatResult::Unsat => Some(false),
        SatResult::Unknown => None,
    }
}

/// One existence question over loads `i` and `j` of parameter `p`: `same_thread` asks for
/// one thread (two different executions), otherwise for two different TBs.
fn question(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
    (i, j): (usize, usize),
    same_thread: bool,
) -> Option<bool> {
    let cfg = Config::new();
    let ctx = Context::new(&cfg);
    let mut enc = Enc {
        ctx: &ctx,
        a,
        defs: Vec::new(),
        trips: HashMap::new(),
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
    cs.push(fa.bvsle(&lb));
    cs.push(fb.bvsle(&la));
    if same_thread {
        if i == j {
            // Two different executions of one load: some counter differs.
            let site = &a.model.loads[i];
            if site.loops.is_empty() {
                return Some(false);
            }
            let diff: Vec<Bool> = site
                .loops
                .iter()
                .map(|l| s1.iters[&l.0]._eq(&s2.iters[&l.0]).not())
                .collect();
            let refs: Vec<&Bool> = diff.iter().collect();
            cs.push(Bool::or(&ctx, &refs));
        }
    } else {
        let same: Vec<Bool> = (0..3).map(|d| s1.ctaid[d]._eq(&s2.ctaid[d])).collect();
        let refs: Vec<&Bool> = same.iter().collect();
        cs.push(Bool::and(&ctx, &refs).not());
    }
    cs.append(&mut enc.defs);
    solve(&ctx, &cs)
}

/// Per parameter (in parallel), the existence answers decided by z3 (`None` where a query
/// had no answer or [`DEADLINE_MS`] had passed before the parameter started).
pub fn existence(a: &Analysis, launch: &BoundLaunch) -> Vec<Option<Existence>> {
    let params = crate::descriptor::load_params(a);
    let start = std::time::Instant::now();
    use rayon::prelude::*;
    (0..launch.params.len() as u32)
        .into_par_iter()
        .map(|p| {
            if start.elapsed().as_millis() > DEADLINE_MS {
                return None;
            }
            let eb = crate::descriptor::elem_bytes(launch, p)?;
            let loads: Vec<usize> = (0..a.model.loads.len())
                .filter(|&i| a.unresolved[i].is_none() && params[i] == Some(p))
                .collect();
            let mut e = Existence::default();
            for (x, &i) in loads.iter().enumerate() {
                for &j in &loads[x..] {
                    if !e.inter_tb {
                        e.inter_tb = question(a, launch, p, eb, (i, j), false)?;
                    }
                    if !e.intra_thread {
                        e.intra_thread = question(a, launch, p, eb, (i, j), true)?;
                    }
                }
            }
            Some(e)
        })
        .collect()
}
