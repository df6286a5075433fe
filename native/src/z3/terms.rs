//! The terms of a z3 [`Context`]: integers ([`Int`]), Booleans ([`Bool`]) and bit-vectors
//! ([`BV`]), their constructors and operations, and [`forall_const`]. A term is a handle
//! that borrows its context; an invalid one (null) spreads to every term built from it.

use std::ffi::{c_uint, CString};

use super::{BinaryFn, Context, RawAst};

/// An integer term (z3's unbounded `Int` sort).
#[derive(Clone)]
pub struct Int<'c> {
    ctx: &'c Context<'c>,
    pub(super) ast: RawAst,
}

/// A Boolean term.
#[derive(Clone)]
pub struct Bool<'c> {
    ctx: &'c Context<'c>,
    pub(super) ast: RawAst,
}

/// A bit-vector term (its width fixed when made).
#[derive(Clone)]
pub struct BV<'c> {
    ctx: &'c Context<'c>,
    ast: RawAst,
}

impl std::fmt::Debug for Int<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ast.is_null() {
            "Int(invalid)"
        } else {
            "Int"
        })
    }
}

impl std::fmt::Debug for Bool<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ast.is_null() {
            "Bool(invalid)"
        } else {
            "Bool"
        })
    }
}

impl std::fmt::Debug for BV<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ast.is_null() {
            "BV(invalid)"
        } else {
            "BV"
        })
    }
}

impl<'c> Int<'c> {
    pub(super) fn of(ctx: &'c Context<'c>, ast: RawAst) -> Int<'c> {
        Int { ctx, ast }
    }

    /// Whether the term was built without an error (see the module's overview).
    pub fn is_valid(&self) -> bool {
        !self.ast.is_null()
    }

    /// The constant `v`.
    pub fn from_i64(ctx: &'c Context<'c>, v: i64) -> Int<'c> {
        let sort = ctx.int_sort;
        // SAFETY: `sort` is the context's integer sort (checked non-null by `build`).
        Int::of(
            ctx,
            ctx.build(&[sort], |c| unsafe { (ctx.api().Z3_mk_int64)(c, v, sort) }),
        )
    }

    /// The constant written in decimal in `s` (any size), `None` when `s` is not a numeral.
    pub fn from_str(ctx: &'c Context<'c>, s: &str) -> Option<Int<'c>> {
        let text = CString::new(s).ok()?;
        let sort = ctx.int_sort;
        // SAFETY: `text` is NUL-terminated and outlives the call; `sort` is the integer sort.
        let ast = ctx.build(&[sort], |c| unsafe {
            (ctx.api().Z3_mk_numeral)(c, text.as_ptr(), sort)
        });
        let t = Int::of(ctx, ast);
        t.is_valid().then_some(t)
    }

    /// A free integer variable named `name` (the same name gives the same variable).
    pub fn new_const(ctx: &'c Context<'c>, name: &str) -> Int<'c> {
        let (sym, sort) = (ctx.symbol(name), ctx.int_sort);
        // SAFETY: `sym` and `sort` are valid handles of this context (checked by `build`).
        Int::of(
            ctx,
            ctx.build(&[sym, sort], |c| unsafe {
                (ctx.api().Z3_mk_const)(c, sym, sort)
            }),
        )
    }

    /// `args[0] + args[1] + ...`.
    pub fn add(ctx: &'c Context<'c>, args: &[&Int<'c>]) -> Int<'c> {
        Int::of(ctx, ctx.nary(ctx.api().Z3_mk_add, &handles(args)))
    }

    /// `args[0] - args[1] - ...`.
    pub fn sub(ctx: &'c Context<'c>, args: &[&Int<'c>]) -> Int<'c> {
        Int::of(ctx, ctx.nary(ctx.api().Z3_mk_sub, &handles(args)))
    }

    /// `args[0] * args[1] * ...`.
    pub fn mul(ctx: &'c Context<'c>, args: &[&Int<'c>]) -> Int<'c> {
        Int::of(ctx, ctx.nary(ctx.api().Z3_mk_mul, &handles(args)))
    }

    /// `self mod m`: Euclidean, never negative (unspecified for `m = 0`).
    pub fn modulo(&self, m: &Int<'c>) -> Int<'c> {
        Int::of(
            self.ctx,
            self.ctx.binary(self.ctx.api().Z3_mk_mod, self.ast, m.ast),
        )
    }

    /// `self div d`: the quotient of [`Int::modulo`] (floor for a positive `d`).
    pub fn div(&self, d: &Int<'c>) -> Int<'c> {
        Int::of(
            self.ctx,
            self.ctx.binary(self.ctx.api().Z3_mk_div, self.ast, d.ast),
        )
    }

    /// `-self`.
    pub fn unary_minus(&self) -> Int<'c> {
        Int::of(
            self.ctx,
            self.ctx.unary(self.ctx.api().Z3_mk_unary_minus, self.ast),
        )
    }

    fn rel(&self, f: BinaryFn, other: &Int<'c>) -> Bool<'c> {
        Bool::of(self.ctx, self.ctx.binary(f, self.ast, other.ast))
    }

    /// `self = other`.
    pub fn equals(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_eq, other)
    }

    /// `self >= other`.
    pub fn ge(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_ge, other)
    }

    /// `self > other`.
    pub fn gt(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_gt, other)
    }

    /// `self <= other`.
    pub fn le(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_le, other)
    }

    /// `self < other`.
    pub fn lt(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_lt, other)
    }

    /// The bit-vector of `bits` bits whose unsigned value is `self mod 2^bits`
    /// (`Z3_mk_int2bv`).
    pub fn to_bv(&self, bits: u32) -> BV<'c> {
        let a = self.ast;
        // SAFETY: `a` is a valid integer term of this context (checked by `build`).
        let ast = self.ctx.build(&[a], |c| unsafe {
            (self.ctx.api().Z3_mk_int2bv)(c, bits, a)
        });
        BV { ctx: self.ctx, ast }
    }

    /// The value of `v` read as a signed (two's complement) or unsigned number
    /// (`Z3_mk_bv2int`).
    pub fn from_bv(v: &BV<'c>, signed: bool) -> Int<'c> {
        let a = v.ast;
        // SAFETY: `a` is a valid bit-vector term of this context (checked by `build`).
        let ast = v.ctx.build(&[a], |c| unsafe {
            (v.ctx.api().Z3_mk_bv2int)(c, a, signed)
        });
        Int::of(v.ctx, ast)
    }

    /// The term's value as an `i64` when it is a numeral that fits (a [`Model::eval`]
    /// result), else `None`.
    pub fn as_i64(&self) -> Option<i64> {
        if self.ast.is_null() {
            return None;
        }
        let mut v = 0i64;
        // SAFETY: `ast` is a valid term of this context; z3 writes one `int64_t` to `v` and
        // reports whether the term is a numeral that fits.
        let ok = unsafe { (self.ctx.api().Z3_get_numeral_int64)(self.ctx.raw, self.ast, &mut v) };
        (ok && !self.ctx.failed()).then_some(v)
    }
}

impl<'c> Bool<'c> {
    fn of(ctx: &'c Context<'c>, ast: RawAst) -> Bool<'c> {
        Bool { ctx, ast }
    }

    /// Whether the term was built without an error (see the module's overview).
    pub fn is_valid(&self) -> bool {
        !self.ast.is_null()
    }

    /// `if self then t else e`.
    pub fn ite(&self, t: &Int<'c>, e: &Int<'c>) -> Int<'c> {
        let (c, t, e) = (self.ast, t.ast, e.ast);
        // SAFETY: a Boolean condition and two integer branches, valid terms of this context
        // (checked by `build`).
        let ast = self.ctx.build(&[c, t, e], |x| unsafe {
            (self.ctx.api().Z3_mk_ite)(x, c, t, e)
        });
        Int::of(self.ctx, ast)
    }

    /// `not self`.
    pub fn not(&self) -> Bool<'c> {
        Bool::of(self.ctx, self.ctx.unary(self.ctx.api().Z3_mk_not, self.ast))
    }

    /// `self = other` (both true or both false).
    pub fn equals(&self, other: &Bool<'c>) -> Bool<'c> {
        Bool::of(
            self.ctx,
            self.ctx
                .binary(self.ctx.api().Z3_mk_eq, self.ast, other.ast),
        )
    }

    /// `self implies other`.
    pub fn implies(&self, other: &Bool<'c>) -> Bool<'c> {
        Bool::of(
            self.ctx,
            self.ctx
                .binary(self.ctx.api().Z3_mk_implies, self.ast, other.ast),
        )
    }

    /// `args[0] and args[1] and ...` (true for no arguments).
    pub fn and(ctx: &'c Context<'c>, args: &[&Bool<'c>]) -> Bool<'c> {
        Bool::of(ctx, ctx.nary(ctx.api().Z3_mk_and, &handles(args)))
    }

    /// `args[0] or args[1] or ...` (false for no arguments).
    pub fn or(ctx: &'c Context<'c>, args: &[&Bool<'c>]) -> Bool<'c> {
        Bool::of(ctx, ctx.nary(ctx.api().Z3_mk_or, &handles(args)))
    }
}

impl<'c> BV<'c> {
    /// [`Int::to_bv`]: `v mod 2^bits` as a bit-vector of `bits` bits.
    pub fn from_int(v: &Int<'c>, bits: u32) -> BV<'c> {
        v.to_bv(bits)
    }

    fn bitwise(&self, f: BinaryFn, other: &BV<'c>) -> BV<'c> {
        BV {
            ctx: self.ctx,
            ast: self.ctx.binary(f, self.ast, other.ast),
        }
    }

    /// Bitwise `self & other` (invalid unless both have the same width).
    pub fn bvand(&self, other: &BV<'c>) -> BV<'c> {
        self.bitwise(self.ctx.api().Z3_mk_bvand, other)
    }

    /// Bitwise `self | other` (invalid unless both have the same width).
    pub fn bvor(&self, other: &BV<'c>) -> BV<'c> {
        self.bitwise(self.ctx.api().Z3_mk_bvor, other)
    }

    /// Bitwise `self ^ other` (invalid unless both have the same width).
    pub fn bvxor(&self, other: &BV<'c>) -> BV<'c> {
        self.bitwise(self.ctx.api().Z3_mk_bvxor, other)
    }

    /// Whether the term was built without an error (see the module's overview).
    pub fn is_valid(&self) -> bool {
        !self.ast.is_null()
    }
}

/// `forall bound: body`, where `bound` are variables made by [`Int::new_const`] (no
/// patterns: z3 picks its own triggers).
pub fn forall_const<'c>(ctx: &'c Context<'c>, bound: &[&Int<'c>], body: &Bool<'c>) -> Bool<'c> {
    if bound.is_empty() {
        return body.clone();
    }
    let mut apps = Vec::with_capacity(bound.len());
    for v in bound {
        // SAFETY: `v.ast` is a valid term of this context (checked by `build`); a constant
        // is an application, which `Z3_to_app` returns (an error otherwise, not a crash).
        apps.push(ctx.build(&[v.ast], |c| unsafe { (ctx.api().Z3_to_app)(c, v.ast) }));
    }
    let Ok(n) = c_uint::try_from(apps.len()) else {
        return Bool::of(ctx, std::ptr::null_mut());
    };
    let mut args = apps.clone();
    args.push(body.ast);
    // SAFETY: `apps` holds `n` valid applications and `body` is a valid Boolean term of this
    // context (all checked non-null by `build`); no patterns (count 0, NULL array).
    let ast = ctx.build(&args, |c| unsafe {
        (ctx.api().Z3_mk_forall_const)(c, 0, n, apps.as_ptr(), 0, std::ptr::null(), body.ast)
    });
    Bool::of(ctx, ast)
}

/// The z3 handle of a term.
trait Handle {
    fn raw(&self) -> RawAst;
}

impl Handle for Int<'_> {
    fn raw(&self) -> RawAst {
        self.ast
    }
}

impl Handle for Bool<'_> {
    fn raw(&self) -> RawAst {
        self.ast
    }
}

fn handles<T: Handle>(args: &[&T]) -> Vec<RawAst> {
    args.iter().map(|t| t.raw()).collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::z3_or_skip;
    use super::super::*;

    #[test]
    fn bit_vectors_and_quantifiers() {
        let Some(z) = z3_or_skip("bit_vectors_and_quantifiers") else {
            return;
        };
        let ctx = z.context().expect("context");
        let c = &ctx;
        let k = |v| Int::from_i64(c, v);
        let eval = |t: &Int| {
            let s = Solver::new(c);
            assert_eq!(s.check(), SatResult::Sat);
            s.get_model()?.eval(t, true)?.as_i64()
        };
        fn bw<'c>(
            c: &'c Context<'c>,
            x: i64,
            y: i64,
            f: fn(&BV<'c>, &BV<'c>) -> BV<'c>,
        ) -> Int<'c> {
            let (x, y) = (Int::from_i64(c, x), Int::from_i64(c, y));
            Int::from_bv(&f(&BV::from_int(&x, 128), &BV::from_int(&y, 128)), true)
        }
        assert_eq!(eval(&bw(c, -6, 12, |p, q| p.bvand(q))), Some(-6 & 12));
        assert_eq!(eval(&bw(c, -6, 12, |p, q| p.bvor(q))), Some(-6 | 12));
        assert_eq!(eval(&bw(c, -6, 12, |p, q| p.bvxor(q))), Some(-6 ^ 12));
        // Unsigned reading of an 8-bit -1.
        assert_eq!(
            eval(&Int::from_bv(&BV::from_int(&k(-1), 8), false)),
            Some(255)
        );
        // forall j: 0 <= j < t -> j < 5, with t >= 5: t = 5 is the only model.
        let t = Int::new_const(c, "t");
        let j = Int::new_const(c, "j");
        let body = Bool::and(c, &[&j.ge(&k(0)), &j.lt(&t)]).implies(&j.lt(&k(5)));
        let s = Solver::new(c);
        s.assert(&forall_const(c, &[&j], &body));
        s.assert(&t.ge(&k(5)));
        assert_eq!(s.check(), SatResult::Sat);
        assert_eq!(
            s.get_model().and_then(|m| m.eval(&t, true)?.as_i64()),
            Some(5)
        );
    }

    #[test]
    fn errors_give_invalid_terms_and_unknown_never_an_abort() {
        let Some(z) = z3_or_skip("errors_give_invalid_terms_and_unknown_never_an_abort") else {
            return;
        };
        let ctx = z.context().expect("context");
        let c = &ctx;
        // Bit-vectors of different widths: z3 reports a sort error.
        let x = Int::new_const(c, "x");
        let bad = BV::from_int(&x, 8).bvand(&BV::from_int(&x, 16));
        assert!(!bad.is_valid());
        // Invalid terms stay invalid through every operation built on them.
        let i = Int::from_bv(&bad, true);
        let b = Int::add(c, &[&i, &x]).ge(&x);
        assert!(!i.is_valid() && !b.is_valid());
        let s = Solver::new(c);
        s.assert(&x.ge(&Int::from_i64(c, 0)));
        s.assert(&b);
        assert_eq!(s.check(), SatResult::Unknown);
        assert!(s.get_model().is_none());
        // A NUL in a name makes an invalid variable, not a panic.
        assert!(!Int::new_const(c, "a\0b").is_valid());
        // The context still works after the errors.
        let s = Solver::new(c);
        s.assert(&x.equals(&Int::from_i64(c, 3)));
        assert_eq!(s.check(), SatResult::Sat);
        // A tiny resource budget gives `Unknown` on a hard question: x^3 + y^3 = z^3.
        let (y, w) = (Int::new_const(c, "y"), Int::new_const(c, "w"));
        fn cube<'c>(c: &'c Context<'c>, v: &Int<'c>) -> Int<'c> {
            Int::mul(c, &[v, v, v])
        }
        let s = Solver::new(c);
        let mut p = Params::new(c);
        p.set_u32("rlimit", 1);
        s.set_params(&p);
        for v in [&x, &y, &w] {
            s.assert(&v.gt(&Int::from_i64(c, 0)));
        }
        s.assert(&Int::add(c, &[&cube(c, &x), &cube(c, &y)]).equals(&cube(c, &w)));
        assert_eq!(s.check(), SatResult::Unknown);
        // An unknown parameter is an error z3 reports when the solver is given it.
        let mut p = Params::new(c);
        p.set_u32("no_such_parameter", 1);
        let s = Solver::new(c);
        s.set_params(&p);
        assert_eq!(s.check(), SatResult::Unknown);
    }
}
