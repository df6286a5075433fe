//! Induction variables and trip counts.
//!
//! A register written inside a loop whose value on every back edge is `phi + step`, with
//! `step` invariant in the loop, is an induction variable `init + step * k` (`k` = the
//! loop's [`Var::Iter`]). Strength-reduced pointers (`add.s64 %rd30, %rd30, %rd5`), counters
//! counting down to zero and unrolled-by-4 steps all have this shape. Other loop-carried
//! registers become [`Reason::LoopCarried`].
//!
//! A loop's trip count (header executions) is `1 + ` the first iteration at which an exit
//! condition holds, evaluated per thread: closed form when the exit is one comparison
//! affine in `k` (checked at the solution and its predecessor, with every 32-bit
//! extension proved not to wrap on `[0, k]`), else by stepping (bounded). The counts are
//! computed where the kernel model keeps them (`model`, below this module and `addr`); their
//! public items are re-exported here.

use ptx_parser::{BlockId, Cfg, Function, Operand};

use crate::expr::*;
use crate::loops::LoopId;

pub use crate::model::{TripPlan, STEP_LIMIT, TRIP_TABLES_ENTRIES, TRIP_TABLE_ENTRIES};

/// Registers written by the instructions of `blocks`.
pub fn defined_regs(f: &Function, cfg: &Cfg, blocks: &[BlockId]) -> Vec<u32> {
    let mut seen = vec![false; f.regs.len()];
    for b in blocks {
        let r = &cfg.blocks[b.index()].insts;
        for inst in &f.insts[r.start.index()..r.end.index()] {
            match inst.operands.first() {
                Some(Operand::Reg(x)) => seen[x.index()] = true,
                Some(Operand::PredPair(p, q)) => {
                    seen[p.index()] = true;
                    seen[q.index()] = true;
                }
                Some(Operand::Vector(v)) => {
                    for o in v {
                        if let Operand::Reg(x) = o {
                            seen[x.index()] = true;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (0..seen.len())
        .filter(|&i| seen[i])
        .map(|i| i as u32)
        .collect()
}

/// Splits `e` into `count * phi(r) + rest`, modulo `2^width` (`width` = the register's
/// bits): an extension at least as wide as the register is the identity modulo `2^width`,
/// so `cvt.u32.u64 (cvt.s64.s32 r)` (a grid-stride loop's round trip through 64 bits) is `r`.
fn split(e: &E, r: u32, width: u8) -> Option<(i64, E)> {
    match &**e {
        Expr::Var(Var::Phi(x)) if *x == r => Some((1, konst(0))),
        Expr::Ext { bits, e: inner, .. } if *bits >= width && mentions(inner, Var::Phi(r)) => {
            split(inner, r, width)
        }
        Expr::Add(a, b) => {
            let (ca, ra) = split(a, r, width)?;
            let (cb, rb) = split(b, r, width)?;
            Some((ca + cb, add(ra, rb)))
        }
        Expr::Sub(a, b) => {
            let (ca, ra) = split(a, r, width)?;
            let (cb, rb) = split(b, r, width)?;
            Some((ca - cb, sub(ra, rb)))
        }
        _ if mentions(e, Var::Phi(r)) => None,
        _ => Some((0, e.clone())),
    }
}

/// The value at the header of loop-carried register `r` with pre-loop value `init` and
/// back-edge values `latch` (computed with placeholders), for loop `l` with inner loops
/// `inner`; `width` is the register's width in bits.
pub fn classify(r: u32, width: u8, init: E, latch: &[&E], l: LoopId, inner: &[LoopId]) -> E {
    let Some(first) = latch.first() else {
        return init;
    };
    if latch.iter().any(|v| *v != *first) {
        return unknown(Reason::LoopCarried);
    }
    let v = *first;
    if matches!(&**v, Expr::Var(Var::Phi(x)) if *x == r) {
        return init;
    }
    let Some((1, step)) = split(v, r, width) else {
        return unknown(Reason::LoopCarried);
    };
    let mut variant = false;
    step.visit_leaves(&mut |x| match x {
        Expr::Var(Var::Phi(_)) => variant = true,
        Expr::Var(Var::Iter(q)) | Expr::Trip(q) if *q == l || inner.contains(q) => variant = true,
        _ => {}
    });
    if variant {
        return unknown(Reason::LoopCarried);
    }
    add(init, mul(step, var(Var::Iter(l))))
}

/// For the loop-carried registers of loop `l` that [`classify`] left as
/// [`Reason::LoopCarried`] (`carried`), a recurrence evaluated concretely
/// ([`Expr::Rec`]): the system holds them and every register of `defined` their back-edge
/// values read, transitively. `init(r)` is the value at the loop's entry, `latch` the
/// back-edge values of every latch (from the pass with placeholders). Registers whose
/// back-edge values differ between latches, or depend on loaded data, stay unknown.
pub fn recurrences(
    l: LoopId,
    defined: &[u32],
    carried: &[u32],
    init: &dyn Fn(u32) -> E,
    latch: &dyn Fn(u32) -> Option<E>,
) -> Vec<(u32, E)> {
    // The registers a register's recurrence reads, transitively; `None` when one of them
    // cannot be stepped (unknown value, latches that disagree, the loop's own counter).
    let closure = |r0: u32| -> Option<Vec<(u32, E)>> {
        let mut out: Vec<(u32, E)> = Vec::new();
        let mut todo = vec![r0];
        while let Some(r) = todo.pop() {
            if out.iter().any(|(x, _)| *x == r) {
                continue;
            }
            let v = latch(r)?;
            if v.unknown_reason().is_some() || init(r).unknown_reason().is_some() {
                return None;
            }
            let mut bad = false;
            v.visit_leaves(&mut |x| match x {
                Expr::Var(Var::Phi(q)) if defined.binary_search(q).is_ok() && !todo.contains(q) => {
                    todo.push(*q);
                }
                Expr::Var(Var::Iter(q)) | Expr::Trip(q) if *q == l => bad = true,
                _ => {}
            });
            if bad {
                return None;
            }
            out.push((r, v));
        }
        Some(out)
    };
    let mut system: Vec<(u32, E)> = Vec::new();
    let mut good = Vec::new();
    for &r in carried {
        if let Some(c) = closure(r) {
            good.push(r);
            for (q, v) in c {
                if !system.iter().any(|(x, _)| *x == q) {
                    system.push((q, v));
                }
            }
        }
    }
    if good.is_empty() {
        return Vec::new();
    }
    system.sort_by_key(|(r, _)| *r);
    let regs: Vec<u32> = system.iter().map(|(r, _)| *r).collect();
    let sys = std::sync::Arc::new(RecSys::new(
        l,
        regs.clone(),
        regs.iter().map(|&r| init(r)).collect(),
        system.into_iter().map(|(_, v)| v).collect(),
    ));
    good.iter()
        .filter_map(|r| {
            let i = regs.iter().position(|x| x == r)?;
            Some((
                *r,
                std::sync::Arc::new(Expr::Rec(sys.clone(), i as u32, var(Var::Iter(l)))),
            ))
        })
        .collect()
}
