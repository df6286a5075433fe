//! Solving in a z3 [`Context`]: parameter sets ([`Params`]), the [`Solver`] with its
//! assertions and [`SatResult`], and the [`Model`] of a satisfiable check.

use std::cell::Cell;

use super::{Bool, Context, Int, RawAst, RawModel, RawParams, RawSolver};

/// A solver's parameter set (`Z3_params`).
pub struct Params<'c> {
    ctx: &'c Context<'c>,
    raw: RawParams,
    /// False once a setting could not be made (the solver given it then answers `Unknown`).
    valid: bool,
}

impl<'c> Params<'c> {
    /// An empty parameter set.
    pub fn new(ctx: &'c Context<'c>) -> Params<'c> {
        // SAFETY: `ctx.raw` is a live context; the new set gets a reference, given back in
        // `drop`.
        let raw = unsafe { (ctx.api().Z3_mk_params)(ctx.raw) };
        let valid = !raw.is_null() && !ctx.failed();
        if valid {
            // SAFETY: `raw` is a parameter set of this context.
            unsafe { (ctx.api().Z3_params_inc_ref)(ctx.raw, raw) };
        }
        Params {
            ctx,
            raw: if valid { raw } else { std::ptr::null_mut() },
            valid,
        }
    }

    /// Sets the unsigned parameter `key` (such as `rlimit`, the solver's resource budget).
    pub fn set_u32(&mut self, key: &str, value: u32) {
        let sym = self.ctx.symbol(key);
        if !self.valid || sym.is_null() {
            self.valid = false;
            return;
        }
        // SAFETY: `raw` is a live parameter set and `sym` a symbol of this context.
        unsafe { (self.ctx.api().Z3_params_set_uint)(self.ctx.raw, self.raw, sym, value) };
        self.valid &= !self.ctx.failed();
    }
}

impl Drop for Params<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: gives back the reference taken in `new`.
            unsafe { (self.ctx.api().Z3_params_dec_ref)(self.ctx.raw, self.raw) };
        }
    }
}

/// The answer of [`Solver::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SatResult {
    /// The assertions have no model.
    Unsat,
    /// No answer: the budget ran out, or an assertion was invalid or z3 reported an error.
    Unknown,
    /// The assertions have a model ([`Solver::get_model`]).
    Sat,
}

/// A z3 solver: assertions, then [`Solver::check`].
pub struct Solver<'c> {
    ctx: &'c Context<'c>,
    raw: RawSolver,
    /// Set when an invalid term or parameter set was given: `check` answers `Unknown`.
    poisoned: Cell<bool>,
}

impl<'c> Solver<'c> {
    /// A solver for the context's default logic.
    pub fn new(ctx: &'c Context<'c>) -> Solver<'c> {
        // SAFETY: `ctx.raw` is a live context; the solver gets a reference, given back in
        // `drop`.
        let raw = unsafe { (ctx.api().Z3_mk_solver)(ctx.raw) };
        let ok = !raw.is_null() && !ctx.failed();
        if ok {
            // SAFETY: `raw` is a solver of this context.
            unsafe { (ctx.api().Z3_solver_inc_ref)(ctx.raw, raw) };
        }
        Solver {
            ctx,
            raw: if ok { raw } else { std::ptr::null_mut() },
            poisoned: Cell::new(!ok),
        }
    }

    /// Applies `params` to later checks.
    pub fn set_params(&self, params: &Params<'c>) {
        if self.poisoned.get() || !params.valid {
            self.poisoned.set(true);
            return;
        }
        // SAFETY: a live solver and a live parameter set of this context.
        unsafe { (self.ctx.api().Z3_solver_set_params)(self.ctx.raw, self.raw, params.raw) };
        if self.ctx.failed() {
            self.poisoned.set(true);
        }
    }

    /// Adds the assertion `b`.
    pub fn assert(&self, b: &Bool<'c>) {
        if self.poisoned.get() || b.ast.is_null() {
            self.poisoned.set(true);
            return;
        }
        // SAFETY: a live solver and a valid Boolean term of this context.
        unsafe { (self.ctx.api().Z3_solver_assert)(self.ctx.raw, self.raw, b.ast) };
        if self.ctx.failed() {
            self.poisoned.set(true);
        }
    }

    /// Whether the assertions have a model.
    pub fn check(&self) -> SatResult {
        if self.poisoned.get() {
            return SatResult::Unknown;
        }
        // SAFETY: a live solver of this context.
        let r = unsafe { (self.ctx.api().Z3_solver_check)(self.ctx.raw, self.raw) };
        if self.ctx.failed() {
            return SatResult::Unknown;
        }
        match r {
            -1 => SatResult::Unsat,
            1 => SatResult::Sat,
            _ => SatResult::Unknown,
        }
    }

    /// The model of the last `check` that answered [`SatResult::Sat`], else `None`.
    pub fn get_model(&self) -> Option<Model<'c>> {
        if self.poisoned.get() {
            return None;
        }
        // SAFETY: a live solver; without a model z3 sets the error code (no handler runs).
        let raw = unsafe { (self.ctx.api().Z3_solver_get_model)(self.ctx.raw, self.raw) };
        if raw.is_null() || self.ctx.failed() {
            return None;
        }
        // SAFETY: `raw` is a model of this context; the reference is given back in `drop`.
        unsafe { (self.ctx.api().Z3_model_inc_ref)(self.ctx.raw, raw) };
        Some(Model { ctx: self.ctx, raw })
    }
}

impl Drop for Solver<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: gives back the reference taken in `new`.
            unsafe { (self.ctx.api().Z3_solver_dec_ref)(self.ctx.raw, self.raw) };
        }
    }
}

/// A satisfying assignment, from [`Solver::get_model`].
pub struct Model<'c> {
    ctx: &'c Context<'c>,
    raw: RawModel,
}

impl<'c> Model<'c> {
    /// The value of `t` in the model; with `completion`, variables the model leaves free get
    /// a default value. `None` when z3 cannot evaluate it.
    pub fn eval(&self, t: &Int<'c>, completion: bool) -> Option<Int<'c>> {
        if t.ast.is_null() {
            return None;
        }
        let mut out: RawAst = std::ptr::null_mut();
        // SAFETY: a live model and a valid term of this context; z3 writes one term handle
        // to `out` and reports success.
        let ok = unsafe {
            (self.ctx.api().Z3_model_eval)(self.ctx.raw, self.raw, t.ast, completion, &mut out)
        };
        (ok && !out.is_null() && !self.ctx.failed()).then(|| Int::of(self.ctx, out))
    }
}

impl Drop for Model<'_> {
    fn drop(&mut self) {
        // SAFETY: gives back the reference taken in `Solver::get_model`.
        unsafe { (self.ctx.api().Z3_model_dec_ref)(self.ctx.raw, self.raw) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::z3_or_skip;
    use super::super::*;

    #[test]
    fn arithmetic_models_and_unsat() {
        let Some(z) = z3_or_skip("arithmetic_models_and_unsat") else {
            return;
        };
        let ctx = z.context().expect("context");
        let c = &ctx;
        let k = |v| Int::from_i64(c, v);
        let x = Int::new_const(c, "x");
        let y = Int::new_const(c, "y");
        // x + y = 10, x - y = 4, 3 x = 21 - y * 0: x = 7, y = 3.
        let s = Solver::new(c);
        let mut p = Params::new(c);
        p.set_u32("rlimit", 200_000);
        s.set_params(&p);
        s.assert(&Int::add(c, &[&x, &y]).equals(&k(10)));
        s.assert(&Int::sub(c, &[&x, &y]).equals(&k(4)));
        s.assert(&Int::mul(c, &[&k(3), &x]).equals(&k(21)));
        assert_eq!(s.check(), SatResult::Sat);
        let m = s.get_model().expect("model");
        let val = |t: &Int| m.eval(t, true).and_then(|v| v.as_i64());
        assert_eq!((val(&x), val(&y)), (Some(7), Some(3)));
        // Euclidean mod and floor div: -7 mod 3 = 2, -7 div 3 = -3; -(-7) = 7.
        let n = k(-7);
        assert_eq!(val(&n.modulo(&k(3))), Some(2));
        assert_eq!(val(&n.div(&k(3))), Some(-3));
        assert_eq!(val(&n.unary_minus()), Some(7));
        assert_eq!(val(&n.lt(&k(0)).ite(&k(1), &k(2))), Some(1));
        // A number past i64 is a numeral but not an i64.
        let big = Int::from_str(c, "170141183460469231731687303715884105727").expect("numeral");
        assert_eq!(val(&big), None);
        assert!(Int::from_str(c, "twelve").is_none());
        // x > 5 and x < 6 has no integer solution.
        let s = Solver::new(c);
        s.assert(&Bool::and(c, &[&x.gt(&k(5)), &x.lt(&k(6))]));
        assert_eq!(s.check(), SatResult::Unsat);
        assert!(s.get_model().is_none());
        // or, not, implies, le, ge, Bool equality.
        let s = Solver::new(c);
        let b = Bool::or(c, &[&x.le(&k(0)), &x.ge(&k(100))]);
        s.assert(&b);
        s.assert(&x.gt(&k(0)).implies(&x.equals(&k(100))));
        s.assert(&x.equals(&k(0)).not());
        s.assert(&b.equals(&x.ge(&k(100))));
        assert_eq!(s.check(), SatResult::Sat);
        assert_eq!(
            s.get_model().and_then(|m| m.eval(&x, true)?.as_i64()),
            Some(100)
        );
    }
}
