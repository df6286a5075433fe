//! Building expressions: the constructors that fold constants and simplify as they build
//! ([`add`], [`mul`], [`ext`], [`op`], [`cmp`], [`select`], ...), so that equal values tend to
//! get equal trees, and [`ext_value`], the concrete reduction an [`Expr::Ext`] node stands for.

use super::*;

/// Reduces `v` to `bits` bits and extends.
#[inline]
pub fn ext_value(v: i128, bits: u8, signed: bool) -> i128 {
    // The widths of PTX registers by casts (a variable 128-bit shift is several
    // instructions, on every address node of every lane).
    match (bits, signed) {
        (32, true) => return i128::from(v as i32),
        (32, false) => return i128::from(v as u32),
        (64, true) => return i128::from(v as i64),
        (64, false) => return i128::from(v as u64),
        _ => {}
    }
    if bits >= 128 {
        return v;
    }
    let shift = 128 - u32::from(bits);
    if signed {
        (v << shift) >> shift
    } else {
        ((v as u128) << shift >> shift) as i128
    }
}

// ---- smart constructors with constant folding ----

/// `a + b`.
pub fn add(a: E, b: E) -> E {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => konst(x.wrapping_add(y)),
        (Some(0), _) => b,
        (_, Some(0)) => a,
        _ => Arc::new(Expr::Add(a, b)),
    }
}

/// `a - b`.
pub fn sub(a: E, b: E) -> E {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => konst(x.wrapping_sub(y)),
        (_, Some(0)) => a,
        _ => Arc::new(Expr::Sub(a, b)),
    }
}

/// `a * b`.
pub fn mul(a: E, b: E) -> E {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => konst(x.wrapping_mul(y)),
        (Some(0), _) | (_, Some(0)) => konst(0),
        (Some(1), _) => b,
        (_, Some(1)) => a,
        _ => Arc::new(Expr::Mul(a, b)),
    }
}

/// The low `bits` of `e`, extended.
pub fn ext(e: E, bits: u8, signed: bool) -> E {
    if let Some(c) = e.as_const() {
        return konst(ext_value(c, bits, signed));
    }
    // A boolean (0 or 1) is unchanged by any zero-extension: predicates stay comparisons,
    // so exit conditions and guards keep the shape the closed forms recognise.
    if !signed && bits >= 1 && e.is_boolean() {
        return e;
    }
    if let Expr::Ext {
        bits: b2,
        signed: s2,
        ..
    } = &*e
    {
        if *b2 == bits && *s2 == signed {
            return e;
        }
    }
    Arc::new(Expr::Ext { bits, signed, e })
}

/// A non-ring operation (operands already extended).
pub fn op(o: IntOp, a: E, b: E) -> E {
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        if let Ok(v) = apply_op(o, x, y) {
            return konst(v);
        }
    }
    Arc::new(Expr::Op(o, a, b))
}

/// A comparison (operands already extended).
pub fn cmp(r: Rel, a: E, b: E) -> E {
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        return konst(i128::from(r.holds(x, y)));
    }
    Arc::new(Expr::Cmp(r, a, b))
}

/// Whether `a` and `b` are the same value: structurally equal, except that two unknowns
/// are the same only when they are one node (`Expr`'s `==` takes any two unknowns of one
/// reason as equal, which is right for "is it known?" but not for path conditions: two
/// different comparisons of loaded floats are two different predicates).
pub fn same(a: &E, b: &E) -> bool {
    if Arc::ptr_eq(a, b) {
        return true;
    }
    match (&**a, &**b) {
        (Expr::Unknown(_), _) | (_, Expr::Unknown(_)) => false,
        (Expr::Const(x), Expr::Const(y)) => x == y,
        (Expr::Var(x), Expr::Var(y)) => x == y,
        (Expr::Trip(x), Expr::Trip(y)) => x == y,
        (Expr::Add(a1, a2), Expr::Add(b1, b2))
        | (Expr::Sub(a1, a2), Expr::Sub(b1, b2))
        | (Expr::Mul(a1, a2), Expr::Mul(b1, b2))
        | (Expr::And(a1, a2), Expr::And(b1, b2))
        | (Expr::Or(a1, a2), Expr::Or(b1, b2)) => same(a1, b1) && same(a2, b2),
        (
            Expr::Ext { bits, signed, e },
            Expr::Ext {
                bits: b2,
                signed: s2,
                e: e2,
            },
        ) => bits == b2 && signed == s2 && same(e, e2),
        (Expr::Op(o, a1, a2), Expr::Op(p, b1, b2)) => o == p && same(a1, b1) && same(a2, b2),
        (Expr::Cmp(r, a1, a2), Expr::Cmp(q, b1, b2)) => r == q && same(a1, b1) && same(a2, b2),
        (Expr::Not(x), Expr::Not(y)) => same(x, y),
        (Expr::Select(c, a1, a2), Expr::Select(d, b1, b2)) => {
            same(c, d) && same(a1, b1) && same(a2, b2)
        }
        (Expr::Rec(s1, i, k), Expr::Rec(s2, j, l)) => Arc::ptr_eq(s1, s2) && i == j && same(k, l),
        _ => false,
    }
}

/// Boolean not.
pub fn not(a: E) -> E {
    match &*a {
        Expr::Const(c) => konst(i128::from(*c == 0)),
        Expr::Not(x) if x.is_boolean() => x.clone(),
        Expr::Cmp(r, x, y) => Arc::new(Expr::Cmp(r.negate(), x.clone(), y.clone())),
        // De Morgan on booleans: guards become conjunctions of comparisons.
        Expr::Or(x, y) if x.is_boolean() && y.is_boolean() => and(not(x.clone()), not(y.clone())),
        Expr::And(x, y) if x.is_boolean() && y.is_boolean() => or(not(x.clone()), not(y.clone())),
        _ => Arc::new(Expr::Not(a)),
    }
}

/// Boolean and.
pub fn and(a: E, b: E) -> E {
    match (a.as_const(), b.as_const()) {
        (Some(0), _) | (_, Some(0)) => konst(0),
        (Some(_), _) => b,
        (_, Some(_)) => a,
        _ => Arc::new(Expr::And(a, b)),
    }
}

/// Boolean or.
pub fn or(a: E, b: E) -> E {
    match (a.as_const(), b.as_const()) {
        (Some(x), _) if x != 0 => konst(1),
        (_, Some(y)) if y != 0 => konst(1),
        (Some(_), _) => b,
        (_, Some(_)) => a,
        _ => Arc::new(Expr::Or(a, b)),
    }
}

/// `c ? a : b`.
pub fn select(c: E, a: E, b: E) -> E {
    match c.as_const() {
        Some(0) => b,
        Some(_) => a,
        None if a == b => a,
        None => Arc::new(Expr::Select(c, a, b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn folding_and_select() {
        assert_eq!(add(konst(2), konst(3)).as_const(), Some(5));
        assert_eq!(select(konst(0), konst(1), konst(2)).as_const(), Some(2));
        assert_eq!(op(IntOp::Rem, konst(-7), konst(3)).as_const(), Some(-1));
        assert_eq!(
            not(cmp(Rel::Lt, var(Var::Tid(0)), konst(3))),
            cmp(Rel::Ge, var(Var::Tid(0)), konst(3))
        );
    }
}
