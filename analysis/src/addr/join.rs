//! Joins: the states reaching a block from several predecessors merged into one, conditions
//! or-ed, values equal or selected on the condition that tells the two sides apart (a case
//! split over the atoms of the guards proves the merged condition covers every case).

use super::*;

/// Merges the states reaching a join: conditions or-ed, values equal or selected.
pub(super) fn merge(ins: &[&State]) -> Option<State> {
    let first = *ins.first()?;
    if ins.len() == 1 {
        return Some(first.clone());
    }
    // Literals on every side stay; when the sides' other literals together cover every case
    // (the join post-dominates their branches: powf's special cases all reaching the end of
    // a loop body), the join is reached whenever the common ones hold.
    let common: Vec<E> = first
        .cond
        .iter()
        .filter(|x| ins[1..].iter().all(|o| has(&o.cond, x)))
        .cloned()
        .collect();
    let cond = if covers_every_case(ins, &common) {
        common
    } else {
        let mut cond = first.cond.clone();
        for s in &ins[1..] {
            cond = or_conj(&cond, &s.cond);
        }
        cond
    };
    // A two-way join on one condition selects between its sides.
    let selector = if ins.len() == 2 {
        split_literal(&ins[0].cond, &ins[1].cond)
    } else {
        None
    };
    // Otherwise each side is told by the literals of its path condition that not every side
    // shares: the sides' conditions are exact and mutually exclusive (a thread reaches the
    // join along one edge), so a chain of selects on them is exact.
    let residuals: Vec<Option<E>> = if selector.is_none() {
        ins.iter()
            .map(|s| {
                let lits: Vec<E> = s
                    .cond
                    .iter()
                    .filter(|x| !ins.iter().all(|o| has(&o.cond, x)))
                    .cloned()
                    .collect();
                (!lits.is_empty()).then(|| lits.into_iter().fold(konst(1), and))
            })
            .collect()
    } else {
        Vec::new()
    };
    let env = (0..first.env.len())
        .map(|r| {
            let v0 = &first.env[r];
            if ins[1..]
                .iter()
                .all(|s| Arc::ptr_eq(&s.env[r], v0) || s.env[r] == *v0)
            {
                return v0.clone();
            }
            match &selector {
                Some(x) => select(x.clone(), ins[0].env[r].clone(), ins[1].env[r].clone()),
                None => chain(ins, &residuals, r),
            }
        })
        .collect();
    Some(State { env, cond })
}

/// `c0 ? v0 : (c1 ? v1 : ... v_{n-1})` over the sides' residual conditions; unknown when a
/// side other than the last has no residual literal to tell it apart.
fn chain(ins: &[&State], residuals: &[Option<E>], r: usize) -> E {
    let (last, rest) = ins.split_last().expect("a join has sides");
    let mut v = last.env[r].clone();
    for (s, c) in rest.iter().zip(residuals).rev() {
        match c {
            Some(c) => v = select(c.clone(), s.env[r].clone(), v),
            None => return unknown(Reason::PathDependent),
        }
    }
    v
}

/// Whether conjunction `c` holds literal `x` ([`same`]: two unknown predicates are one
/// literal only when they are one node).
pub(super) fn has(c: &[E], x: &E) -> bool {
    c.iter().any(|y| same(y, x))
}

/// Most distinct predicates [`covers_every_case`] enumerates (2^12 cases).
const COVER_MAX_ATOMS: usize = 12;

/// Whether the sides' path conditions, beyond the literals `common` to all, cover every
/// assignment of their predicates: then a thread that satisfies `common` reaches the join
/// along one of them. Predicates are the boolean leaves (a comparison and its negation are
/// one predicate); decided by enumerating their assignments, at most [`COVER_MAX_ATOMS`].
fn covers_every_case(ins: &[&State], common: &[E]) -> bool {
    let mut atoms: Vec<E> = Vec::new();
    let sides: Vec<Vec<&E>> = ins
        .iter()
        .map(|s| s.cond.iter().filter(|x| !has(common, x)).collect())
        .collect();
    if sides.iter().any(Vec::is_empty) {
        return true;
    }
    for side in &sides {
        for lit in side {
            if !collect_atoms(lit, &mut atoms) || atoms.len() > COVER_MAX_ATOMS {
                return false;
            }
        }
    }
    (0u32..1 << atoms.len()).all(|case| {
        sides
            .iter()
            .any(|side| side.iter().all(|lit| truth(lit, &atoms, case)))
    })
}

/// The predicate of a boolean leaf and whether the leaf is its negation (`a >= b` is
/// `!(a < b)`: the relation with the smaller [`Rel`] order is the predicate).
fn atom_of(e: &E) -> (E, bool) {
    match &**e {
        Expr::Cmp(r, a, b) if r.negate() < *r => {
            (Arc::new(Expr::Cmp(r.negate(), a.clone(), b.clone())), true)
        }
        _ => (e.clone(), false),
    }
}

/// Adds the predicates of boolean expression `e` to `atoms`; false when `e` is not a
/// combination of predicates by not / and / or.
fn collect_atoms(e: &E, atoms: &mut Vec<E>) -> bool {
    match &**e {
        Expr::Not(x) => collect_atoms(x, atoms),
        Expr::And(x, y) | Expr::Or(x, y) => collect_atoms(x, atoms) && collect_atoms(y, atoms),
        Expr::Const(_) => true,
        _ => {
            let (a, _) = atom_of(e);
            if !atoms.iter().any(|x| same(x, &a)) {
                atoms.push(a);
            }
            true
        }
    }
}

/// The value of boolean expression `e` when predicate `atoms[i]` is bit `i` of `case`.
fn truth(e: &E, atoms: &[E], case: u32) -> bool {
    match &**e {
        Expr::Not(x) => !truth(x, atoms, case),
        Expr::And(x, y) => truth(x, atoms, case) && truth(y, atoms, case),
        Expr::Or(x, y) => truth(x, atoms, case) || truth(y, atoms, case),
        Expr::Const(c) => *c != 0,
        _ => {
            let (a, negated) = atom_of(e);
            let i = atoms.iter().position(|x| same(x, &a)).unwrap_or(0);
            (case >> i & 1 == 1) != negated
        }
    }
}

/// If `a` and `b` differ in exactly one literal `x` / `!x`, returns `x` (true on `a`'s side).
fn split_literal(a: &[E], b: &[E]) -> Option<E> {
    let ra: Vec<&E> = a.iter().filter(|x| !has(b, x)).collect();
    let rb: Vec<&E> = b.iter().filter(|x| !has(a, x)).collect();
    if ra.len() == 1 && rb.len() == 1 && same(&not(ra[0].clone()), rb[0]) {
        Some(ra[0].clone())
    } else {
        None
    }
}

/// `(a1 & a2 ...) | (b1 & b2 ...)` as a conjunction, factoring the common literals.
fn or_conj(a: &[E], b: &[E]) -> Vec<E> {
    let common: Vec<E> = a.iter().filter(|x| has(b, x)).cloned().collect();
    let ra: Vec<E> = a.iter().filter(|x| !has(b, x)).cloned().collect();
    let rb: Vec<E> = b.iter().filter(|x| !has(a, x)).cloned().collect();
    if ra.is_empty() || rb.is_empty() {
        return common;
    }
    if ra.len() == 1 && rb.len() == 1 && same(&not(ra[0].clone()), &rb[0]) {
        return common;
    }
    let mut out = common;
    let lhs = ra.into_iter().fold(konst(1), and);
    let rhs = rb.into_iter().fold(konst(1), and);
    let o = or(lhs, rhs);
    if o.as_const().is_none() {
        out.push(o);
    }
    out
}
