//! Affine reasoning and rewriting: substitution of a variable ([`subst`]), whether an
//! expression reads one ([`mentions`]), and the coefficient of a loop counter in an address
//! ([`linear_coef`]) with the [`Obligation`]s on the `Ext` nodes it crosses.

use super::*;

/// Replaces every occurrence of variable `v` by `by`, folding constants again. Shared
/// subexpressions are rewritten once (expressions are DAGs: a mirrored index unrolled four
/// times reads each previous value several times) and unchanged ones keep their identity.
pub fn subst(e: &E, v: Var, by: &E) -> E {
    let mut memo: std::collections::HashMap<*const Expr, E> = std::collections::HashMap::new();
    subst_in(e, v, by, &mut memo)
}

fn subst_in(e: &E, v: Var, by: &E, memo: &mut std::collections::HashMap<*const Expr, E>) -> E {
    if let Some(x) = memo.get(&Arc::as_ptr(e)) {
        return x.clone();
    }
    let mut go = |x: &E| subst_in(x, v, by, memo);
    let out = match &**e {
        Expr::Var(x) if *x == v => by.clone(),
        Expr::Const(_) | Expr::Var(_) | Expr::Trip(_) | Expr::Unknown(_) => e.clone(),
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) => {
            let (x, y) = (go(a), go(b));
            if Arc::ptr_eq(&x, a) && Arc::ptr_eq(&y, b) {
                e.clone()
            } else {
                match &**e {
                    Expr::Add(..) => add(x, y),
                    Expr::Sub(..) => sub(x, y),
                    _ => mul(x, y),
                }
            }
        }
        Expr::Ext { bits, signed, e: a } => {
            let x = go(a);
            if Arc::ptr_eq(&x, a) {
                e.clone()
            } else {
                ext(x, *bits, *signed)
            }
        }
        Expr::Not(a) => {
            let x = go(a);
            if Arc::ptr_eq(&x, a) {
                e.clone()
            } else {
                not(x)
            }
        }
        Expr::Op(_, a, b) | Expr::Cmp(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
            let (x, y) = (go(a), go(b));
            if Arc::ptr_eq(&x, a) && Arc::ptr_eq(&y, b) {
                e.clone()
            } else {
                match &**e {
                    Expr::Op(o, ..) => op(*o, x, y),
                    Expr::Cmp(r, ..) => cmp(*r, x, y),
                    Expr::And(..) => and(x, y),
                    _ => or(x, y),
                }
            }
        }
        Expr::Select(c, a, b) => {
            let (z, x, y) = (go(c), go(a), go(b));
            if Arc::ptr_eq(&z, c) && Arc::ptr_eq(&x, a) && Arc::ptr_eq(&y, b) {
                e.clone()
            } else {
                select(z, x, y)
            }
        }
        Expr::Rec(r, i, k) => {
            let init: Vec<E> = r.init.iter().map(&mut go).collect();
            let step: Vec<E> = r.step.iter().map(&mut go).collect();
            let k2 = go(k);
            let same = init.iter().zip(&r.init).all(|(a, b)| Arc::ptr_eq(a, b))
                && step.iter().zip(&r.step).all(|(a, b)| Arc::ptr_eq(a, b));
            if same && Arc::ptr_eq(&k2, k) {
                e.clone()
            } else {
                let sys = if same {
                    r.clone()
                } else {
                    Arc::new(RecSys::new(r.l, r.regs.clone(), init, step))
                };
                Arc::new(Expr::Rec(sys, *i, k2))
            }
        }
    };
    memo.insert(Arc::as_ptr(e), out.clone());
    out
}

/// Whether `e` mentions variable `v` directly (trip counts are checked by the caller).
pub fn mentions(e: &Expr, v: Var) -> bool {
    let mut found = false;
    e.visit_leaves(&mut |x| {
        if matches!(x, Expr::Var(y) if *y == v) {
            found = true;
        }
    });
    found
}

/// An `Ext` node crossed by [`linear_coef`]: its operand must stay inside the extension's
/// range over the whole iteration domain for the affine form to be exact.
#[derive(Clone, Debug)]
pub struct Obligation {
    /// The operand.
    pub e: E,
    /// Width.
    pub bits: u8,
    /// Signedness.
    pub signed: bool,
}

impl Obligation {
    /// Whether value `v` lies in the range where extension is the identity.
    pub fn holds(&self, v: i128) -> bool {
        ext_value(v, self.bits, self.signed) == v
    }
}

/// If `e` is affine in `v` (ignoring wrap), the coefficient of `v` as an expression free of
/// `v`, collecting the `Ext` nodes crossed in `obl`. `dep(x)` says whether a trip count or
/// other leaf depends on `v` (such leaves make the form non-affine).
pub fn linear_coef(
    e: &E,
    v: Var,
    obl: &mut Vec<Obligation>,
    dep: &dyn Fn(&Expr) -> bool,
) -> Option<E> {
    let free = |x: &E| -> bool {
        let mut d = false;
        x.visit_leaves(&mut |l| d |= dep(l));
        !d
    };
    match &**e {
        Expr::Var(x) if *x == v => Some(konst(1)),
        Expr::Const(_) | Expr::Var(_) | Expr::Unknown(_) => Some(konst(0)),
        Expr::Trip(_) => {
            if dep(e) {
                None
            } else {
                Some(konst(0))
            }
        }
        Expr::Add(a, b) => Some(add(
            linear_coef(a, v, obl, dep)?,
            linear_coef(b, v, obl, dep)?,
        )),
        Expr::Sub(a, b) => Some(sub(
            linear_coef(a, v, obl, dep)?,
            linear_coef(b, v, obl, dep)?,
        )),
        Expr::Mul(a, b) => {
            if free(a) {
                Some(mul(a.clone(), linear_coef(b, v, obl, dep)?))
            } else if free(b) {
                Some(mul(linear_coef(a, v, obl, dep)?, b.clone()))
            } else {
                None
            }
        }
        Expr::Ext { bits, signed, e: x } => {
            if free(x) {
                return Some(konst(0));
            }
            let c = linear_coef(x, v, obl, dep)?;
            obl.push(Obligation {
                e: x.clone(),
                bits: *bits,
                signed: *signed,
            });
            Some(c)
        }
        _ => {
            if free(e) {
                Some(konst(0))
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::tests::NoTrips;
    #[test]
    fn wrap_is_exact() {
        // (0x7fffffff + 1) as s32, widened: -2^31.
        let e = ext(add(var(Var::Tid(0)), konst(1)), 32, true);
        let mut cx = Ctx::new(0);
        cx.tid[0] = 0x7fff_ffff;
        assert_eq!(eval(&e, &cx, &NoTrips), Ok(-(1i128 << 31)));
        // The affine view records the obligation that catches it.
        let mut obl = Vec::new();
        let dep = |x: &Expr| matches!(x, Expr::Var(Var::Tid(0)));
        let c = linear_coef(&e, Var::Tid(0), &mut obl, &dep).unwrap();
        assert_eq!(c.as_const(), Some(1));
        assert_eq!(obl.len(), 1);
        assert!(!obl[0].holds(eval(&obl[0].e, &cx, &NoTrips).unwrap()));
    }
}
