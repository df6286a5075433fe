//! The symbolic value domain: expression trees over the thread's coordinates
//! (`%tid`, `%ctaid`), one iteration counter per loop and per-thread trip counts, with launch
//! constants (`%ntid`, `%nctaid`, parameter values, buffer addresses) folded in.
//!
//! Values are *mathematical* integers (`i128`). The ring operations (`+ - *`, shifts left by
//! constants) commute with reduction modulo 2^w, so a register's bits are always the low `w`
//! bits of its mathematical value; every operation that *interprets* a register (widening,
//! comparison, division, right shift, bitwise ops, min/max) goes through an [`Expr::Ext`]
//! node that reduces to the register's width and sign- or zero-extends. Concrete evaluation
//! is therefore exact PTX integer semantics, 32-bit wrap included. Affine reasoning over a
//! loop counter records every `Ext` it crosses as an obligation and checks it (see
//! [`linear_coef`]), so it never silently assumes "no wrap".
//!
//! Values loaded from memory, floating point and unsupported operations are
//! [`Expr::Unknown`] with the reason; they propagate.
//!
//! The language's types are here; its parts are in submodules, all re-exported: `build`
//! (the folding constructors), `eval` (concrete evaluation in one thread), `tape` (compilation
//! to a tape and its evaluation), `lanes` (a tape over a warp's lanes or a run of
//! iterations), `rec` (loop recurrences) and `affine` (substitution and loop-counter
//! coefficients).

use std::sync::Arc;

use crate::loops::LoopId;

mod affine;
mod build;
mod eval;
mod lanes;
mod rec;
mod tape;

pub use affine::*;
pub use build::*;
pub use eval::*;
pub use lanes::*;
pub use rec::*;
pub use tape::*;

/// A shared expression.
pub type E = Arc<Expr>;

/// A variable of the symbolic domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    /// `%tid.{x,y,z}` (0, 1, 2).
    Tid(u8),
    /// `%ctaid.{x,y,z}` (0, 1, 2).
    Ctaid(u8),
    /// The iteration counter of a loop, 0 on the first execution of its header.
    Iter(LoopId),
    /// Placeholder for a loop-carried register's value at the header during induction
    /// variable discovery; never survives into a result.
    Phi(u32),
}

/// Why a value is not statically known.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Loaded from memory (the paper's non-static address).
    DataDependent,
    /// An operation the domain does not model (named).
    Unsupported(String),
    /// Floating-point value.
    Float,
    /// A loop-carried register that is not an induction variable.
    LoopCarried,
    /// Different values reach a join and no branch condition selects between them.
    PathDependent,
    /// A register read before any definition.
    Undefined,
    /// A hardware-dependent special register (`%smid`, `%clock`, ...).
    Hardware(String),
    /// A loop with several exits or an exit whose iteration cannot be told.
    LoopExit,
    /// The load's guard (not its address) is not known, for the inner reason.
    Guard(Box<Reason>),
    /// Enumerating the load's footprint would exceed the analysis's memory budget.
    Budget,
    /// The value of a parameter the launch leaves open (by index; [`crate::open`]).
    OpenParam(u32),
    /// One access's bytes lie in two data structures, or in one and outside every buffer
    /// (a read across a buffer's end): `paver analyze` warns on standard error.
    Straddle,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::DataDependent => f.write_str("data-dependent: value loaded from memory"),
            Reason::Unsupported(op) => write!(f, "unsupported operation `{op}`"),
            Reason::Float => f.write_str("floating-point value"),
            Reason::LoopCarried => {
                f.write_str("loop-carried value that is not an induction variable")
            }
            Reason::PathDependent => f.write_str("value depends on the control-flow path"),
            Reason::Undefined => f.write_str("register read before definition"),
            Reason::Hardware(r) => write!(f, "hardware-dependent special register {r}"),
            Reason::LoopExit => f.write_str("loop with an exit the analysis cannot place"),
            Reason::Guard(r) => write!(f, "guard: {r}"),
            Reason::Budget => f.write_str("budget: the footprint would exceed the memory budget"),
            Reason::OpenParam(p) => write!(f, "parameter {p} has no value"),
            Reason::Straddle => f.write_str(STRADDLE),
        }
    }
}

/// [`Reason::Straddle`]'s text.
const STRADDLE: &str =
    "a read straddles a buffer's end (its bytes lie in two data structures, or in one and outside every buffer)";

/// The class of an unresolved load's reason text (the text of a [`Reason`] or an
/// [`EvalError`], as [`crate::Analysis::unresolved`] keeps it), for the coverage counts of
/// `paver analyze` (`coverage.unresolved_reasons`): one word per kind of obstacle.
pub fn reason_kind(text: &str) -> &'static str {
    const KINDS: &[(&str, &str)] = &[
        ("data-dependent", "data-dependent"),
        ("unsupported operation", "unsupported"),
        ("floating-point value", "floating-point"),
        ("loop-carried", "loop-carried"),
        ("value depends on the control-flow path", "path-dependent"),
        ("register read before definition", "undefined"),
        ("hardware-dependent", "hardware"),
        ("loop with an exit", "loop-exit"),
        ("guard: ", "guard"),
        ("budget", "budget"),
        ("parameter ", "open-parameter"),
        ("a read straddles", "straddle"),
        ("division by zero", "division-by-zero"),
        ("loop ", "trip-limit"),
    ];
    KINDS
        .iter()
        .find(|(prefix, _)| text.starts_with(prefix))
        .map_or("other", |&(_, k)| k)
}

/// Comparison of interpreted (already extended) operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rel {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Rel {
    /// The relation holding exactly when `self` does not.
    pub fn negate(self) -> Rel {
        match self {
            Rel::Eq => Rel::Ne,
            Rel::Ne => Rel::Eq,
            Rel::Lt => Rel::Ge,
            Rel::Le => Rel::Gt,
            Rel::Gt => Rel::Le,
            Rel::Ge => Rel::Lt,
        }
    }
    /// Applies the relation.
    pub fn holds(self, a: i128, b: i128) -> bool {
        match self {
            Rel::Eq => a == b,
            Rel::Ne => a != b,
            Rel::Lt => a < b,
            Rel::Le => a <= b,
            Rel::Gt => a > b,
            Rel::Ge => a >= b,
        }
    }
}

/// Non-ring integer operations on interpreted operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntOp {
    /// Truncating division (PTX `div`).
    Div,
    /// Remainder with the dividend's sign (PTX `rem`).
    Rem,
    /// Shift left by a variable amount, result width in bits.
    Shl(u8),
    /// Shift right (arithmetic for signed operands, logical for unsigned: the extension
    /// decides).
    Shr,
    /// Bitwise and.
    BitAnd,
    /// Bitwise or.
    BitOr,
    /// Bitwise xor.
    BitXor,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// High half of the product of two `w`-bit values.
    MulHi(u8),
}

/// A symbolic value. `Eq` lets `Arc<Expr>` comparisons stop at shared nodes (pointer
/// equality first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A constant.
    Const(i128),
    /// A variable.
    Var(Var),
    /// The number of times the loop's header runs, for the current thread and outer
    /// iterations.
    Trip(LoopId),
    /// Sum.
    Add(E, E),
    /// Difference.
    Sub(E, E),
    /// Product.
    Mul(E, E),
    /// The low `bits` of the operand, sign- or zero-extended.
    Ext {
        /// Width.
        bits: u8,
        /// Sign-extend.
        signed: bool,
        /// Operand.
        e: E,
    },
    /// A non-ring operation on interpreted operands.
    Op(IntOp, E, E),
    /// Comparison, 1 or 0.
    Cmp(Rel, E, E),
    /// Boolean not.
    Not(E),
    /// Boolean and.
    And(E, E),
    /// Boolean or.
    Or(E, E),
    /// `c ? a : b`.
    Select(E, E, E),
    /// Not statically known.
    Unknown(Reason),
    /// Register `idx` of a loop-carried recurrence that is not an induction variable, at
    /// iteration `k` of its loop: evaluated concretely by stepping the recurrence from its
    /// initial values ([`RecSys`]).
    Rec(Arc<RecSys>, u32, E),
}

/// A system of loop-carried registers whose values do not depend on loaded data but are
/// not induction variables (mirrored boundary stepping, `not.b32` counters, steps by an
/// inner loop's trip count): `state(0) = init`, `state(j + 1) = step(state(j))`, where
/// `step[i]` reads the state through `Var::Phi(regs[i])` and may use `Var::Iter(l)` = `j`.
#[derive(Clone, Debug)]
pub struct RecSys {
    /// The loop.
    pub l: LoopId,
    /// The registers (`Var::Phi` ids), in state order.
    pub regs: Vec<u32>,
    /// Values at the loop's entry.
    pub init: Vec<E>,
    /// Back-edge values over the state of the previous iteration.
    pub step: Vec<E>,
    /// The coordinates `init` and `step` read, worked out once ([`RecSys::reads`]).
    pub reads: std::sync::OnceLock<[bool; 6]>,
}

/// Systems are equal when their loop, registers and expressions are (`reads` is derived
/// from them, and may not have been worked out yet).
impl PartialEq for RecSys {
    fn eq(&self, o: &RecSys) -> bool {
        (self.l, &self.regs, &self.init, &self.step) == (o.l, &o.regs, &o.init, &o.step)
    }
}

impl Eq for RecSys {}

impl RecSys {
    /// The system of loop `l` with registers `regs`, initial values `init` and steps `step`.
    pub fn new(l: LoopId, regs: Vec<u32>, init: Vec<E>, step: Vec<E>) -> RecSys {
        RecSys {
            l,
            regs,
            init,
            step,
            reads: std::sync::OnceLock::new(),
        }
    }

    /// The thread and TB coordinates the system's states depend on, `%tid.{x,y,z}` then
    /// `%ctaid.{x,y,z}`: those its initial values and steps read (with the systems nested in
    /// them), or all six when they read a trip count (which may depend on any). Two threads
    /// that agree on these, on the other loops' iterations and on the outer registers step
    /// through the same states: their histories are one ([`rec_hash`]).
    pub fn reads(&self) -> [bool; 6] {
        *self.reads.get_or_init(|| {
            let (mut m, mut trip) = ([false; 6], false);
            for e in self.init.iter().chain(&self.step) {
                e.visit_leaves(&mut |x| match x {
                    Expr::Var(Var::Tid(d)) => m[usize::from(*d).min(2)] = true,
                    Expr::Var(Var::Ctaid(d)) => m[3 + usize::from(*d).min(2)] = true,
                    Expr::Trip(_) => trip = true,
                    _ => {}
                });
            }
            if trip {
                [true; 6]
            } else {
                m
            }
        })
    }

    /// The coordinates of `cx` the system's states depend on ([`RecSys::reads`]), the
    /// others 0: `(tid, ctaid)`.
    fn coords(&self, cx: &Ctx) -> ([i128; 3], [i128; 3]) {
        let m = self.reads();
        let (mut tid, mut ctaid) = ([0; 3], [0; 3]);
        for d in 0..3 {
            if m[d] {
                tid[d] = cx.tid[d];
            }
            if m[3 + d] {
                ctaid[d] = cx.ctaid[d];
            }
        }
        (tid, ctaid)
    }
}

/// Builds a constant.
pub fn konst(v: i128) -> E {
    Arc::new(Expr::Const(v))
}

/// Builds a variable.
pub fn var(v: Var) -> E {
    Arc::new(Expr::Var(v))
}

/// Builds an unknown.
pub fn unknown(r: Reason) -> E {
    Arc::new(Expr::Unknown(r))
}

impl Expr {
    /// The constant value, if this is one.
    pub fn as_const(&self) -> Option<i128> {
        match self {
            Expr::Const(c) => Some(*c),
            _ => None,
        }
    }
    /// Whether the value is always 0 or 1 (comparisons and boolean connectives).
    pub fn is_boolean(&self) -> bool {
        match self {
            Expr::Cmp(..) | Expr::Not(_) | Expr::And(..) | Expr::Or(..) => true,
            Expr::Const(c) => *c == 0 || *c == 1,
            Expr::Ext {
                bits: 1,
                signed: false,
                ..
            } => true,
            Expr::Select(_, a, b) => a.is_boolean() && b.is_boolean(),
            _ => false,
        }
    }
    /// The first unknown reason in the tree, if any. Each shared node is visited once.
    pub fn unknown_reason(&self) -> Option<Reason> {
        let mut seen = Seen::default();
        self.unknown_in(&mut seen)
    }
    fn unknown_in(&self, seen: &mut Seen) -> Option<Reason> {
        let mut go = |x: &E| {
            if first_visit(x, seen) {
                x.unknown_in(seen)
            } else {
                // Visited before and found free of unknowns (else the walk had stopped).
                None
            }
        };
        match self {
            Expr::Unknown(r) => Some(r.clone()),
            Expr::Const(_) | Expr::Var(_) | Expr::Trip(_) => None,
            Expr::Ext { e, .. } | Expr::Not(e) => go(e),
            Expr::Add(a, b)
            | Expr::Sub(a, b)
            | Expr::Mul(a, b)
            | Expr::Op(_, a, b)
            | Expr::Cmp(_, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b) => go(a).or_else(|| go(b)),
            Expr::Select(c, a, b) => go(c).or_else(|| go(a)).or_else(|| go(b)),
            Expr::Rec(r, _, k) => go(k).or_else(|| r.init.iter().chain(&r.step).find_map(go)),
        }
    }
    /// Calls `f` on every variable and trip count in the tree (on a leaf under a shared
    /// node once per visit of that node: each shared node is visited once).
    pub fn visit_leaves(&self, f: &mut impl FnMut(&Expr)) {
        let mut seen = Seen::default();
        self.leaves_in(f, &mut seen, false);
    }
    /// Calls `f` on the reason of every unknown in the DAG (each shared node visited once).
    pub fn visit_unknowns(&self, f: &mut impl FnMut(&Reason)) {
        let mut seen = Seen::default();
        self.leaves_in(
            &mut |x| {
                if let Expr::Unknown(r) = x {
                    f(r);
                }
            },
            &mut seen,
            true,
        );
    }
    fn leaves_in(&self, f: &mut dyn FnMut(&Expr), seen: &mut Seen, unknowns: bool) {
        let mut go = |x: &E, f: &mut dyn FnMut(&Expr)| {
            if first_visit(x, seen) {
                x.leaves_in(f, seen, unknowns);
            }
        };
        match self {
            Expr::Var(_) | Expr::Trip(_) => f(self),
            Expr::Unknown(_) if unknowns => f(self),
            Expr::Const(_) | Expr::Unknown(_) => {}
            Expr::Ext { e, .. } | Expr::Not(e) => go(e, f),
            Expr::Add(a, b)
            | Expr::Sub(a, b)
            | Expr::Mul(a, b)
            | Expr::Op(_, a, b)
            | Expr::Cmp(_, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b) => {
                go(a, f);
                go(b, f);
            }
            Expr::Select(c, a, b) => {
                go(c, f);
                go(a, f);
                go(b, f);
            }
            // The recurrence's own counter is `k`; its initial values and steps carry the
            // thread coordinates, outer counters and trip counts it depends on.
            Expr::Rec(r, _, k) => {
                go(k, f);
                for x in r.init.iter().chain(&r.step) {
                    go(x, f);
                }
            }
        }
    }
}

/// The shared nodes a walk has visited, by address.
type Seen = std::collections::HashSet<usize, std::hash::BuildHasherDefault<crate::fx::FxHasher>>;

/// Whether the walk should descend into `x`: always for a node with one reference, once for
/// a shared one.
fn first_visit(x: &E, seen: &mut Seen) -> bool {
    Arc::strong_count(x) == 1 || seen.insert(Arc::as_ptr(x) as usize)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A trip source that knows no loop (the unit tests' expressions that read none).
    pub(crate) struct NoTrips;
    impl TripSource for NoTrips {
        fn trip(&self, l: LoopId, _: &Ctx) -> Result<i128, EvalError> {
            Err(EvalError::TripLimit(l, 0))
        }
    }

    /// Every reason and evaluation error has its own kind in the coverage counts (the
    /// match fails to compile when a variant is added without a kind).
    #[test]
    fn every_unresolved_reason_has_a_kind() {
        let reasons = [
            (Reason::DataDependent, "data-dependent"),
            (Reason::Unsupported("cvt.rni".into()), "unsupported"),
            (Reason::Float, "floating-point"),
            (Reason::LoopCarried, "loop-carried"),
            (Reason::PathDependent, "path-dependent"),
            (Reason::Undefined, "undefined"),
            (Reason::Hardware("%smid".into()), "hardware"),
            (Reason::LoopExit, "loop-exit"),
            (Reason::Guard(Box::new(Reason::Float)), "guard"),
            (Reason::Budget, "budget"),
            (Reason::OpenParam(3), "open-parameter"),
            (Reason::Straddle, "straddle"),
        ];
        for (r, kind) in &reasons {
            match r {
                Reason::DataDependent
                | Reason::Unsupported(_)
                | Reason::Float
                | Reason::LoopCarried
                | Reason::PathDependent
                | Reason::Undefined
                | Reason::Hardware(_)
                | Reason::LoopExit
                | Reason::Guard(_)
                | Reason::Budget
                | Reason::OpenParam(_)
                | Reason::Straddle => {}
            }
            assert_eq!(reason_kind(&r.to_string()), *kind, "{r}");
        }
        assert_eq!(
            reason_kind(&EvalError::DivByZero.to_string()),
            "division-by-zero"
        );
        assert_eq!(
            reason_kind(&EvalError::TripLimit(LoopId(2), 9).to_string()),
            "trip-limit"
        );
        assert_eq!(reason_kind(&EvalError::Budget.to_string()), "budget");
        assert_eq!(reason_kind(crate::GRAPH_BUDGET), "budget");
    }
}
