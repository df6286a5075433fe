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

use std::sync::Arc;

use crate::loops::LoopId;

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
type Seen =
    std::collections::HashSet<usize, std::hash::BuildHasherDefault<crate::footprint::FxHasher>>;

/// Whether the walk should descend into `x`: always for a node with one reference, once for
/// a shared one.
fn first_visit(x: &E, seen: &mut Seen) -> bool {
    Arc::strong_count(x) == 1 || seen.insert(Arc::as_ptr(x) as usize)
}

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

/// Applies a non-ring operation to concrete operands.
pub fn apply_op(o: IntOp, x: i128, y: i128) -> Result<i128, EvalError> {
    Ok(match o {
        IntOp::Div => {
            if y == 0 {
                return Err(EvalError::DivByZero);
            }
            x.wrapping_div(y)
        }
        IntOp::Rem => {
            if y == 0 {
                return Err(EvalError::DivByZero);
            }
            x.wrapping_rem(y)
        }
        IntOp::Shl(bits) => {
            if y < 0 || y >= i128::from(bits) {
                0
            } else {
                x.wrapping_shl(y as u32)
            }
        }
        IntOp::Shr => x >> (y.clamp(0, 127) as u32),
        IntOp::BitAnd => x & y,
        IntOp::BitOr => x | y,
        IntOp::BitXor => x ^ y,
        IntOp::Min => x.min(y),
        IntOp::Max => x.max(y),
        IntOp::MulHi(bits) => x.wrapping_mul(y) >> u32::from(bits),
    })
}

/// Why a concrete evaluation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// An unknown value was needed.
    #[error("{0}")]
    Unknown(Reason),
    /// Division by zero.
    #[error("division by zero")]
    DivByZero,
    /// A loop that never exits or runs longer than the analysis allows.
    #[error("loop {0} does not terminate within {1} iterations for some thread")]
    TripLimit(LoopId, u64),
    /// The footprint would take more memory than the analysis's budget allows.
    #[error("budget: the footprint would exceed the memory budget")]
    Budget,
    /// A variable with no value in the context (internal).
    #[error("variable {0:?} has no value here")]
    Unbound(Var),
}

/// Supplies trip counts during evaluation.
pub trait TripSource {
    /// The trip count of loop `l` for the thread and outer iterations of `cx`.
    fn trip(&self, l: LoopId, cx: &Ctx) -> Result<i128, EvalError>;
}

/// The concrete context of one evaluation: a thread, and the iteration of each loop.
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    /// `%tid`.
    pub tid: [i128; 3],
    /// `%ctaid`.
    pub ctaid: [i128; 3],
    /// Iteration of each loop (indexed by loop id); `None` outside the loop.
    pub iters: Vec<Option<i128>>,
    /// Trip counts fixed by the enclosing enumeration (indexed by loop id).
    pub trips: Vec<Option<i128>>,
    /// Values of `Var::Phi` registers while a recurrence is stepped (innermost last).
    pub phis: Vec<(u32, i128)>,
}

impl Ctx {
    /// A context for `nloops` loops.
    pub fn new(nloops: usize) -> Ctx {
        Ctx {
            tid: [0; 3],
            ctaid: [0; 3],
            iters: vec![None; nloops],
            trips: vec![None; nloops],
            phis: Vec::new(),
        }
    }
}

/// Values of the shared nodes of one DAG already evaluated in one context, by node address.
/// Only nodes referenced more than once are kept (`Arc::strong_count > 1`): a node with a
/// single reference is reached once per evaluation anyway. Only successes are kept: an error
/// ends the whole evaluation.
pub type Memo = crate::footprint::FxMap<usize, i128>;

/// Evaluates `e` concretely with exact PTX integer semantics. Each shared subexpression is
/// evaluated once (the cost is linear in the DAG's size, not in its unfolded tree's: a
/// mirrored index's back-edge value reads the previous values several times per unrolled
/// step, its tree is ~150 times its DAG). An expression evaluated again (an address per
/// thread and iteration) is compiled once into a [`Tape`], kept in a small per-thread cache
/// keyed by its address and checked by a shallow comparison (the cached copy holds its
/// children, so equal child pointers mean the same DAG).
pub fn eval(e: &Expr, cx: &Ctx, ts: &dyn TripSource) -> Result<i128, EvalError> {
    if matches!(
        e,
        Expr::Const(_) | Expr::Var(_) | Expr::Trip(_) | Expr::Unknown(_)
    ) {
        return eval_memo(e, cx, ts, &mut Memo::default());
    }
    let addr = e as *const Expr as usize;
    let set = (addr >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - EVAL_CACHE_SET_BITS);
    let ways = set * EVAL_CACHE_WAYS..(set + 1) * EVAL_CACHE_WAYS;
    let hit = EVAL_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        c.clock += 1;
        let clock = c.clock;
        let entry = c
            .entries
            .get_mut(ways.clone())?
            .iter_mut()
            .flatten()
            .find(|x| x.addr == addr && *x.root == *e)?;
        entry.used = clock;
        Some((entry.tape.clone(), std::mem::take(&mut entry.slots)))
    });
    let (tape, mut st) = match hit {
        Some(x) => x,
        None => {
            let root = Arc::new(e.clone());
            let tape = std::rc::Rc::new(Tape::new([&root]));
            EVAL_CACHE.with(|c| {
                let mut c = c.borrow_mut();
                if c.entries.is_empty() {
                    c.entries
                        .resize_with(EVAL_CACHE_WAYS << EVAL_CACHE_SET_BITS, || None);
                }
                let used = c.clock;
                // An empty way, else the least recently used one.
                let w = c.entries[ways.clone()]
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, x)| x.as_ref().map_or(0, |x| x.used))
                    .map_or(ways.start, |(i, _)| ways.start + i);
                c.entries[w] = Some(EvalEntry {
                    addr,
                    root,
                    tape: tape.clone(),
                    slots: TapeState::default(),
                    used,
                });
            });
            (tape, TapeState::default())
        }
    };
    // A nested evaluation of the same expression took the slots: start afresh.
    if st.vals.len() != tape.len() {
        st = TapeState::new(&tape);
    } else {
        st.next();
    }
    let r = eval_tape(&tape, &mut st, (tape.len() - 1) as u32, cx, ts);
    EVAL_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(x) = c
            .entries
            .get_mut(ways)
            .into_iter()
            .flatten()
            .flatten()
            .find(|x| x.addr == addr && std::rc::Rc::ptr_eq(&x.tape, &tape))
        {
            x.slots = st;
        }
    });
    r
}

/// log2 of the number of sets of [`EVAL_CACHE`].
const EVAL_CACHE_SET_BITS: u32 = 6;
/// Ways per set of [`EVAL_CACHE`]. Associative because a direct-mapped table let two
/// expressions evaluated in turn evict each other on every call: scalar_prod's address and
/// the trip count it reads shared a slot, and each evaluation recompiled the other (70,000
/// compilations, half of the launch's analysis).
const EVAL_CACHE_WAYS: usize = 4;

/// An entry of [`EVAL_CACHE`].
struct EvalEntry {
    /// The expression's address.
    addr: usize,
    /// A shallow copy of it (which keeps its children alive).
    root: E,
    tape: std::rc::Rc<Tape>,
    slots: TapeState,
    /// When it was last used ([`EvalCache::clock`]).
    used: u64,
}

/// Compiled expressions evaluated lately: set-associative by address, least recently used
/// replaced.
#[derive(Default)]
struct EvalCache {
    entries: Vec<Option<EvalEntry>>,
    clock: u64,
}

thread_local! {
    /// This thread's [`EvalCache`].
    static EVAL_CACHE: std::cell::RefCell<EvalCache> =
        std::cell::RefCell::new(EvalCache::default());
}

/// [`eval`] sharing `memo` with other evaluations in the same context `cx` (the caller
/// clears it when the context changes).
pub fn eval_memo(
    e: &Expr,
    cx: &Ctx,
    ts: &dyn TripSource,
    memo: &mut Memo,
) -> Result<i128, EvalError> {
    let mut go = |x: &E| -> Result<i128, EvalError> {
        if Arc::strong_count(x) == 1 || matches!(**x, Expr::Const(_) | Expr::Var(_)) {
            return eval_memo(x, cx, ts, memo);
        }
        let key = Arc::as_ptr(x) as usize;
        if let Some(&v) = memo.get(&key) {
            return Ok(v);
        }
        let v = eval_memo(x, cx, ts, memo)?;
        memo.insert(key, v);
        Ok(v)
    };
    Ok(match e {
        Expr::Const(c) => *c,
        Expr::Var(Var::Tid(d)) => cx.tid[usize::from(*d)],
        Expr::Var(Var::Ctaid(d)) => cx.ctaid[usize::from(*d)],
        Expr::Var(v @ Var::Iter(l)) => cx
            .iters
            .get(l.index())
            .copied()
            .flatten()
            .ok_or(EvalError::Unbound(*v))?,
        Expr::Var(v @ Var::Phi(r)) => match cx.phis.iter().rev().find(|(x, _)| x == r) {
            Some((_, val)) => *val,
            None => return Err(EvalError::Unbound(*v)),
        },
        Expr::Trip(l) => match cx.trips.get(l.index()).copied().flatten() {
            Some(t) => t,
            None => ts.trip(*l, cx)?,
        },
        Expr::Add(a, b) => go(a)?.wrapping_add(go(b)?),
        Expr::Sub(a, b) => go(a)?.wrapping_sub(go(b)?),
        Expr::Mul(a, b) => go(a)?.wrapping_mul(go(b)?),
        Expr::Ext { bits, signed, e } => ext_value(go(e)?, *bits, *signed),
        Expr::Op(o, a, b) => apply_op(*o, go(a)?, go(b)?)?,
        Expr::Cmp(r, a, b) => i128::from(r.holds(go(a)?, go(b)?)),
        Expr::Not(a) => i128::from(go(a)? == 0),
        Expr::And(a, b) => i128::from(go(a)? != 0 && go(b)? != 0),
        Expr::Or(a, b) => i128::from(go(a)? != 0 || go(b)? != 0),
        Expr::Select(c, a, b) => {
            if go(c)? != 0 {
                go(a)?
            } else {
                go(b)?
            }
        }
        Expr::Unknown(r) => return Err(EvalError::Unknown(r.clone())),
        Expr::Rec(r, i, k) => {
            let k = go(k)?;
            eval_rec(r, *i as usize, k, cx, ts)?
        }
    })
}

/// A DAG compiled to an array in topological order (children before parents), each node
/// naming its operands by index, so that an evaluation keeps one value slot per node
/// ([`TapeState`]) instead of hashing node addresses: the cost of evaluating shared
/// subexpressions is linear in the DAG's size. Evaluation stays lazy (a `Select` evaluates
/// one branch, `And`/`Or` short-circuit), so errors in branches not taken do not surface,
/// exactly as with [`eval`].
#[derive(Debug, Default)]
pub struct Tape {
    nodes: Vec<Node>,
    /// Node index by expression address (every node of the compiled roots).
    index: crate::footprint::FxMap<usize, u32>,
    /// Node index by shape (operation and operand nodes): equal subexpressions built
    /// apart (each PTX operation's `Ext`, the constants, a value re-read after every
    /// branch) become one node. mirror_boundary's reflection step had 87 nodes.
    shapes: crate::footprint::FxMap<Shape, u32>,
    /// The roots, which keep every compiled node alive (the addresses stay unique).
    roots: Vec<E>,
    /// Unique per compiled tape (0: an empty default one), for [`LaneEval`] to tell whose
    /// values it holds.
    id: u64,
}

/// A node's identity for [`Tape::shapes`]: what it computes from which nodes. Leaves that
/// are not variables or trip counts (unknowns) have none.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Shape {
    Const(i128),
    Var(Var),
    Trip(LoopId),
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    Ext(u8, bool, u32),
    Op(IntOp, u32, u32),
    Cmp(Rel, u32, u32),
    Not(u32),
    And(u32, u32),
    Or(u32, u32),
    Select(u32, u32, u32),
    Rec(usize, u32, u32),
}

impl Node {
    fn shape(&self) -> Option<Shape> {
        Some(match self {
            Node::Const(c) => Shape::Const(*c),
            Node::Tid(d) => Shape::Var(Var::Tid(*d as u8)),
            Node::Ctaid(d) => Shape::Var(Var::Ctaid(*d as u8)),
            Node::Leaf(e) => match **e {
                Expr::Var(v) => Shape::Var(v),
                Expr::Trip(l) => Shape::Trip(l),
                _ => return None,
            },
            Node::Add(a, b) => Shape::Add(*a, *b),
            Node::Sub(a, b) => Shape::Sub(*a, *b),
            Node::Mul(a, b) => Shape::Mul(*a, *b),
            Node::Ext(bits, signed, a) => Shape::Ext(*bits, *signed, *a),
            Node::Op(o, a, b) => Shape::Op(*o, *a, *b),
            Node::Cmp(r, a, b) => Shape::Cmp(*r, *a, *b),
            Node::Not(a) => Shape::Not(*a),
            Node::And(a, b) => Shape::And(*a, *b),
            Node::Or(a, b) => Shape::Or(*a, *b),
            Node::Select(c, a, b) => Shape::Select(*c, *a, *b),
            Node::Rec(r, i, k) => Shape::Rec(Arc::as_ptr(r) as usize, *i, *k),
        })
    }
}

#[derive(Debug)]
enum Node {
    Const(i128),
    /// `%tid` and `%ctaid` by dimension, read from the context without going through
    /// [`eval_memo`] (the leaves of every address).
    Tid(usize),
    Ctaid(usize),
    /// A variable, trip count or unknown: evaluated as an expression.
    Leaf(E),
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    Ext(u8, bool, u32),
    Op(IntOp, u32, u32),
    Cmp(Rel, u32, u32),
    Not(u32),
    And(u32, u32),
    Or(u32, u32),
    Select(u32, u32, u32),
    Rec(Arc<RecSys>, u32, u32),
}

impl Tape {
    /// Compiles the DAG of `roots`.
    pub fn new<'a>(roots: impl IntoIterator<Item = &'a E>) -> Tape {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let mut t = Tape {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            ..Tape::default()
        };
        for r in roots {
            t.add(r);
            t.roots.push(r.clone());
        }
        t
    }
    fn add(&mut self, e: &E) -> u32 {
        let key = Arc::as_ptr(e) as usize;
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let n = match &**e {
            Expr::Const(c) => Node::Const(*c),
            Expr::Var(Var::Tid(d)) if *d < 3 => Node::Tid(usize::from(*d)),
            Expr::Var(Var::Ctaid(d)) if *d < 3 => Node::Ctaid(usize::from(*d)),
            Expr::Var(_) | Expr::Trip(_) | Expr::Unknown(_) => Node::Leaf(e.clone()),
            Expr::Add(a, b) => Node::Add(self.add(a), self.add(b)),
            Expr::Sub(a, b) => Node::Sub(self.add(a), self.add(b)),
            Expr::Mul(a, b) => Node::Mul(self.add(a), self.add(b)),
            Expr::Ext { bits, signed, e } => Node::Ext(*bits, *signed, self.add(e)),
            Expr::Op(o, a, b) => Node::Op(*o, self.add(a), self.add(b)),
            Expr::Cmp(r, a, b) => Node::Cmp(*r, self.add(a), self.add(b)),
            Expr::Not(a) => Node::Not(self.add(a)),
            Expr::And(a, b) => Node::And(self.add(a), self.add(b)),
            Expr::Or(a, b) => Node::Or(self.add(a), self.add(b)),
            Expr::Select(c, a, b) => Node::Select(self.add(c), self.add(a), self.add(b)),
            Expr::Rec(r, i, k) => Node::Rec(r.clone(), *i, self.add(k)),
        };
        let shape = n.shape();
        if let Some(&i) = shape.as_ref().and_then(|sh| self.shapes.get(sh)) {
            self.index.insert(key, i);
            return i;
        }
        self.nodes.push(n);
        let i = (self.nodes.len() - 1) as u32;
        self.index.insert(key, i);
        if let Some(sh) = shape {
            self.shapes.insert(sh, i);
        }
        i
    }
    /// Whether no node needs a trip count or a recurrence: every value is a few operations
    /// on the context, cheap to compute eagerly for every lane ([`LaneEval`]) even where a
    /// lazy evaluation would skip it.
    pub fn is_cheap(&self) -> bool {
        self.nodes.iter().all(|n| match n {
            Node::Rec(..) => false,
            Node::Leaf(e) => !matches!(**e, Expr::Trip(_)),
            _ => true,
        })
    }
    /// Whether every value is cheap to compute eagerly in a thread inside `loops` (whose
    /// iterations and trip counts the context fixes): trip counts only of those loops, and
    /// recurrences only at a loop counter (a state the walk of that loop steps to anyway).
    pub fn is_cheap_in(&self, loops: &[LoopId]) -> bool {
        let at_counter = |k: u32| matches!(&self.nodes[k as usize], Node::Leaf(e) if matches!(**e, Expr::Var(Var::Iter(_))));
        self.nodes.iter().all(|n| match n {
            Node::Rec(_, _, k) => at_counter(*k),
            Node::Leaf(e) => match **e {
                Expr::Trip(l) => loops.contains(&l),
                _ => true,
            },
            _ => true,
        })
    }
    /// By node, whether it reads the thread, the TB and constants alone (no other variable,
    /// trip count or recurrence), nor does any node under it: its lanes' values are the
    /// same in any pass over the same lanes of the same TB ([`LaneEval::run_reusing`]).
    pub fn thread_only(&self) -> Vec<bool> {
        self.closed_under(|_| false)
    }

    /// By node, whether its value stays the same when only loop `l`'s iteration changes in
    /// the context: it reads neither that iteration nor a trip count or recurrence (which
    /// may read it), and no node under it does.
    pub fn invariant_in(&self, l: LoopId) -> Vec<bool> {
        self.closed_under(|e| matches!(e, Expr::Var(v) if *v != Var::Iter(l)))
    }

    /// By node, whether its value stays the same when only loop iterations and trip counts
    /// change in the context: it reads no iteration, trip count or recurrence.
    pub fn iteration_free(&self) -> Vec<bool> {
        self.closed_under(|e| matches!(e, Expr::Var(v) if !matches!(v, Var::Iter(_))))
    }

    /// By node, whether every leaf under it is a constant, a thread or TB coordinate or a
    /// leaf `leaf` accepts, and no recurrence is.
    fn closed_under(&self, leaf: impl Fn(&Expr) -> bool) -> Vec<bool> {
        let mut inv: Vec<bool> = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            let all = |xs: &[u32]| xs.iter().all(|&x| inv[x as usize]);
            let v = match n {
                Node::Const(_) | Node::Tid(_) | Node::Ctaid(_) => true,
                Node::Leaf(e) => leaf(e),
                Node::Rec(..) => false,
                Node::Add(a, b)
                | Node::Sub(a, b)
                | Node::Mul(a, b)
                | Node::Op(_, a, b)
                | Node::Cmp(_, a, b)
                | Node::And(a, b)
                | Node::Or(a, b) => all(&[*a, *b]),
                Node::Ext(_, _, a) | Node::Not(a) => all(&[*a]),
                Node::Select(c, a, b) => all(&[*c, *a, *b]),
            };
            inv.push(v);
        }
        inv
    }

    /// The recurrence systems the tape reads, each once.
    pub fn recs(&self) -> Vec<Arc<RecSys>> {
        let mut out: Vec<Arc<RecSys>> = Vec::new();
        for n in &self.nodes {
            if let Node::Rec(r, _, _) = n {
                if !out.iter().any(|x| Arc::ptr_eq(x, r)) {
                    out.push(r.clone());
                }
            }
        }
        out
    }
    /// The node of a compiled expression (a root or any node under one).
    pub fn node(&self, e: &E) -> Option<u32> {
        self.index.get(&(Arc::as_ptr(e) as usize)).copied()
    }
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// Whether the tape is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// The value slots of one [`Tape`]: a slot is valid while its generation is the current one;
/// [`TapeState::next`] invalidates all of them at once (a new context). Slots marked fixed
/// ([`TapeState::with_fixed`]) also survive [`TapeState::next_iter`], which invalidates the
/// others: a trip count evaluates its exit at several iterations of one loop, and the
/// nodes that do not read that loop's iteration keep their values.
#[derive(Clone, Debug, Default)]
pub struct TapeState {
    vals: Vec<i128>,
    gens: Vec<u32>,
    cur: u32,
    /// The generation of the last [`TapeState::next`]: a fixed slot computed since is valid.
    base: u32,
    /// By node, whether [`TapeState::next_iter`] keeps it (empty: none is kept).
    fixed: Vec<bool>,
}

impl TapeState {
    /// Slots for `t`, all invalid.
    pub fn new(t: &Tape) -> TapeState {
        TapeState {
            vals: vec![0; t.len()],
            gens: vec![0; t.len()],
            cur: 1,
            base: 1,
            fixed: Vec::new(),
        }
    }
    /// Slots for `t`, all invalid, of which those `fixed` marks (by node) survive
    /// [`TapeState::next_iter`].
    pub fn with_fixed(t: &Tape, fixed: Vec<bool>) -> TapeState {
        TapeState {
            fixed,
            ..TapeState::new(t)
        }
    }
    /// Invalidates every slot (the context changed).
    pub fn next(&mut self) {
        self.next_iter();
        self.base = self.cur;
    }
    /// Invalidates every slot but the fixed ones (only what they do not read changed).
    pub fn next_iter(&mut self) {
        self.cur = self.cur.wrapping_add(1);
        if self.cur == 0 {
            self.gens.fill(0);
            self.cur = 1;
            self.base = 1;
        }
    }
    /// Whether slot `u` holds a value for the current context.
    #[inline]
    fn valid(&self, u: usize) -> bool {
        let g = self.gens[u];
        g == self.cur || (g >= self.base && self.fixed.get(u) == Some(&true))
    }
}

/// Evaluates node `n` of `t` in context `cx`, reusing the slots of `st` filled since its
/// last [`TapeState::next`].
pub fn eval_tape(
    t: &Tape,
    st: &mut TapeState,
    n: u32,
    cx: &Ctx,
    ts: &dyn TripSource,
) -> Result<i128, EvalError> {
    let u = n as usize;
    if st.valid(u) {
        return Ok(st.vals[u]);
    }
    let mut go = |x: u32| eval_tape(t, st, x, cx, ts);
    let v = match &t.nodes[u] {
        Node::Const(c) => *c,
        Node::Tid(d) => cx.tid[*d],
        Node::Ctaid(d) => cx.ctaid[*d],
        Node::Leaf(e) => match **e {
            // A loop counter, at every node of every trip count's exit.
            Expr::Var(v @ Var::Iter(l)) => cx
                .iters
                .get(l.index())
                .copied()
                .flatten()
                .ok_or(EvalError::Unbound(v))?,
            _ => eval_memo(e, cx, ts, &mut Memo::default())?,
        },
        Node::Add(a, b) => go(*a)?.wrapping_add(go(*b)?),
        Node::Sub(a, b) => go(*a)?.wrapping_sub(go(*b)?),
        Node::Mul(a, b) => go(*a)?.wrapping_mul(go(*b)?),
        Node::Ext(bits, signed, a) => ext_value(go(*a)?, *bits, *signed),
        Node::Op(o, a, b) => apply_op(*o, go(*a)?, go(*b)?)?,
        Node::Cmp(r, a, b) => i128::from(r.holds(go(*a)?, go(*b)?)),
        Node::Not(a) => i128::from(go(*a)? == 0),
        Node::And(a, b) => i128::from(go(*a)? != 0 && go(*b)? != 0),
        Node::Or(a, b) => i128::from(go(*a)? != 0 || go(*b)? != 0),
        Node::Select(c, a, b) => {
            if go(*c)? != 0 {
                go(*a)?
            } else {
                go(*b)?
            }
        }
        Node::Rec(r, i, k) => {
            let k = go(*k)?;
            eval_rec(r, *i as usize, k, cx, ts)?
        }
    };
    st.vals[u] = v;
    st.gens[u] = st.cur;
    Ok(v)
}

/// Most lanes [`LaneEval`] evaluates at once (a warp).
pub const LANES: usize = 32;

/// What the lanes of a [`LaneEval`] pass differ in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneAxis {
    /// `%tid.x`: lane `l` is the thread of the context with `%tid.x` increased by `l`
    /// (consecutive lanes of one warp row).
    Tid,
    /// The iteration of one loop: lane `l` is iteration `k0 + l` of the loop, `k0` being its
    /// iteration in the context (one thread's consecutive iterations).
    Iter(LoopId),
    /// The thread's place in a block of these dimensions, `x` fastest: lane `l` is the
    /// thread `l` places after the context's (the lanes of a warp, across rows of a block
    /// narrower than a warp).
    Threads([u32; 3]),
}

impl LaneAxis {
    /// Sets `c`, a copy of `cx`, to lane `l`'s context.
    fn set_lane(self, c: &mut Ctx, cx: &Ctx, l: usize) {
        let l = l as i128;
        match self {
            LaneAxis::Tid => c.tid[0] = cx.tid[0] + l,
            LaneAxis::Iter(lp) => {
                if let Some(k) = c.iters.get_mut(lp.index()) {
                    *k = cx.iters[lp.index()].map(|k0| k0 + l);
                }
            }
            LaneAxis::Threads(b) => {
                // Only for leaves evaluated lane by lane: the division is not on the hot path.
                let (bx, by) = (i128::from(b[0]).max(1), i128::from(b[1]).max(1));
                let t = cx.tid[0] + bx * (cx.tid[1] + by * cx.tid[2]) + l;
                c.tid = [t % bx, (t / bx) % by, t / (bx * by)];
            }
        }
    }
}

/// Every node of a [`Tape`] evaluated for up to [`LANES`] contexts at once, contexts that
/// differ along one [`LaneAxis`]: one pass over the nodes in topological order, each node a
/// loop over the lanes, where evaluating context by context dispatches on every node of
/// every context. The pass is eager (both branches of a `select`, both operands of
/// `and`/`or`), so it gives up on the first error anywhere, even in a branch a lazy
/// evaluation would not take: the caller then evaluates those contexts one by one, which
/// reports exactly what a lazy evaluation reports.
#[derive(Debug, Default)]
pub struct LaneEval {
    /// `vals[node * lanes + lane]`, sized by each run.
    vals: Vec<i128>,
    /// Lanes of the last run.
    lanes: usize,
    /// The tape, lanes, first thread and TB of the last run along `%tid.x` that succeeded:
    /// whose values `vals` holds.
    last: Option<(u64, usize, [i128; 3], [i128; 3])>,
}

impl LaneEval {
    /// An evaluator storing its values in `vals` (its contents do not matter): a caller
    /// running many evaluators one after the other reuses one allocation.
    pub fn with_values(vals: Vec<i128>) -> LaneEval {
        LaneEval {
            vals,
            lanes: 0,
            last: None,
        }
    }

    /// The value storage, for reuse.
    pub fn into_values(self) -> Vec<i128> {
        self.vals
    }

    /// Evaluates every node of `t` for lanes `0..n` (`n <= LANES`) along `axis`; `false` on
    /// any error (nothing is reported: evaluate the lanes one by one instead).
    pub fn run(
        &mut self,
        t: &Tape,
        axis: LaneAxis,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
    ) -> bool {
        // One lane (a recurrence's step) is the common case of a long walk: compiled apart,
        // its lane loops vanish.
        if n == 1 {
            self.run_lanes(t, axis, 1, cx, ts, None, None)
        } else {
            self.run_lanes(t, axis, n.min(LANES), cx, ts, None, None)
        }
    }

    /// [`LaneEval::run`] along `%tid.x`, keeping the values of the nodes `thread_only`
    /// marks ([`Tape::thread_only`]) when the last run was of the same tape, lanes, threads
    /// and TB: a warp row's passes at the iterations of its loops recomputed the same
    /// thread-only guards and address parts at each (scalar_prod's unrolled prologue: a few
    /// hundred nodes of selects on `%tid.x`).
    pub fn run_reusing(
        &mut self,
        t: &Tape,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
        thread_only: &[bool],
    ) -> bool {
        let n = if n == 1 { 1 } else { n.min(LANES) };
        let same = t.id != 0
            && self.last == Some((t.id, n, cx.tid, cx.ctaid))
            && thread_only.len() == t.len();
        if same {
            self.run_lanes(t, LaneAxis::Tid, n, cx, ts, None, Some(thread_only))
        } else {
            self.run(t, LaneAxis::Tid, n, cx, ts)
        }
    }

    /// Evaluates every node of a recurrence's step `t` for lanes `0..n` (`n <= LANES`) along
    /// `%tid.x`, lane `l`'s registers `regs` holding `state[l * regs.len() ..]`; `false` on
    /// any error.
    pub fn run_steps(
        &mut self,
        t: &Tape,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
        regs: &[u32],
        state: &[i128],
    ) -> bool {
        let n = n.min(LANES);
        state.len() >= n * regs.len()
            && self.run_lanes(t, LaneAxis::Tid, n, cx, ts, Some((regs, state)), None)
    }

    /// [`LaneEval::run`], with the lanes' own values of some `Var::Phi` registers (`phis`:
    /// the registers and `state[lane * registers + register]`), the nodes `keep` marks left
    /// as the last run computed them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn run_lanes(
        &mut self,
        t: &Tape,
        axis: LaneAxis,
        n: usize,
        cx: &Ctx,
        ts: &dyn TripSource,
        phis: Option<(&[u32], &[i128])>,
        keep: Option<&[bool]>,
    ) -> bool {
        // Set again at the end of a pass that succeeds.
        self.last = None;
        self.lanes = n;
        if self.vals.len() < t.len() * n {
            self.vals.resize(t.len() * n, 0);
        }
        // The loop whose iteration the lanes differ in, and the first lane's iteration.
        let iter = match axis {
            LaneAxis::Iter(l) => match cx.iters.get(l.index()).copied().flatten() {
                Some(k0) => Some((l, k0)),
                None => return false,
            },
            _ => None,
        };
        let set_lane = |c: &mut Ctx, l: usize| axis.set_lane(c, cx, l);
        // Along `LaneAxis::Threads`, the lanes' `%tid`, stepped from the context's thread,
        // `x` fastest (a tape has many `%tid` nodes).
        let lane_tids = match axis {
            LaneAxis::Threads(b) => {
                let (bx, by) = (i128::from(b[0]).max(1), i128::from(b[1]).max(1));
                let mut tids = [[0i128; 3]; LANES];
                let mut at = cx.tid;
                for t in tids.iter_mut().take(n) {
                    *t = at;
                    at[0] += 1;
                    if at[0] >= bx {
                        at[0] = 0;
                        at[1] += 1;
                        if at[1] >= by {
                            at[1] = 0;
                            at[2] += 1;
                        }
                    }
                }
                Some(tids)
            }
            _ => None,
        };
        let mut lane_cx: Option<Ctx> = None;
        for u in 0..t.len() as u32 {
            if keep.is_some_and(|k| k[u as usize]) {
                continue;
            }
            let (head, rest) = self.vals.split_at_mut(u as usize * n);
            let out = &mut rest[..n];
            let get = |x: u32| &head[x as usize * n..x as usize * n + n];
            match &t.nodes[u as usize] {
                Node::Const(c) => out.fill(*c),
                Node::Tid(0) if axis == LaneAxis::Tid => {
                    for (l, o) in out.iter_mut().enumerate() {
                        *o = cx.tid[0] + l as i128;
                    }
                }
                Node::Tid(d) => match &lane_tids {
                    Some(tids) => {
                        for (o, t) in out.iter_mut().zip(tids) {
                            *o = t[*d];
                        }
                    }
                    None => out.fill(cx.tid[*d]),
                },
                Node::Ctaid(d) => out.fill(cx.ctaid[*d]),
                Node::Add(a, b) => lanes2(out, get(*a), get(*b), |x, y| x.wrapping_add(y)),
                Node::Sub(a, b) => lanes2(out, get(*a), get(*b), |x, y| x.wrapping_sub(y)),
                Node::Mul(a, b) => lanes2(out, get(*a), get(*b), |x, y| x.wrapping_mul(y)),
                Node::Ext(bits, signed, a) => {
                    let a = get(*a);
                    match (*bits, *signed) {
                        (32, true) => lanes1(out, a, |x| i128::from(x as i32)),
                        (32, false) => lanes1(out, a, |x| i128::from(x as u32)),
                        (64, true) => lanes1(out, a, |x| i128::from(x as i64)),
                        (64, false) => lanes1(out, a, |x| i128::from(x as u64)),
                        (bits, signed) => lanes1(out, a, |x| ext_value(x, bits, signed)),
                    }
                }
                Node::Op(op, a, b) => {
                    let (a, b) = (get(*a), get(*b));
                    match op {
                        // The operations that cannot fail, without a match per lane.
                        IntOp::BitAnd => lanes2(out, a, b, |x, y| x & y),
                        IntOp::BitOr => lanes2(out, a, b, |x, y| x | y),
                        IntOp::BitXor => lanes2(out, a, b, |x, y| x ^ y),
                        IntOp::Min => lanes2(out, a, b, |x, y| x.min(y)),
                        IntOp::Max => lanes2(out, a, b, |x, y| x.max(y)),
                        _ => {
                            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                                match apply_op(*op, x, y) {
                                    Ok(v) => *o = v,
                                    Err(_) => return false,
                                }
                            }
                        }
                    }
                }
                Node::Cmp(r, a, b) => {
                    lanes2(out, get(*a), get(*b), |x, y| i128::from(r.holds(x, y)))
                }
                Node::Not(a) => lanes1(out, get(*a), |x| i128::from(x == 0)),
                Node::And(a, b) => {
                    lanes2(out, get(*a), get(*b), |x, y| i128::from(x != 0 && y != 0))
                }
                Node::Or(a, b) => {
                    lanes2(out, get(*a), get(*b), |x, y| i128::from(x != 0 || y != 0))
                }
                Node::Select(c, a, b) => {
                    let (c, a, b) = (get(*c), get(*a), get(*b));
                    for l in 0..n {
                        out[l] = if c[l] != 0 { a[l] } else { b[l] };
                    }
                }
                Node::Leaf(e) => {
                    // The lanes' own loop counter, or their own recurrence registers.
                    let own_iter = match (&**e, iter) {
                        (Expr::Var(Var::Iter(v)), Some((l, k0))) if *v == l => Some(k0),
                        _ => None,
                    };
                    let own_phi = match (&**e, phis) {
                        (Expr::Var(Var::Phi(reg)), Some((regs, state))) => regs
                            .iter()
                            .position(|x| x == reg)
                            .map(|ri| (ri, regs.len(), state)),
                        _ => None,
                    };
                    if let Some(k0) = own_iter {
                        for (l, o) in out.iter_mut().enumerate() {
                            *o = k0 + l as i128;
                        }
                    } else if let Some((ri, m, state)) = own_phi {
                        for (l, o) in out.iter_mut().enumerate() {
                            *o = state[l * m + ri];
                        }
                    } else if matches!(**e, Expr::Var(_)) {
                        // Any other variable is the same in every lane.
                        match eval_memo(e, cx, ts, &mut Memo::default()) {
                            Ok(v) => out.fill(v),
                            Err(_) => return false,
                        }
                    } else {
                        // Trip counts and unknowns: per lane, in the lane's context.
                        let c = lane_cx.get_or_insert_with(|| cx.clone());
                        if !per_lane(out, c, &set_lane, |c, _| {
                            eval_memo(e, c, ts, &mut Memo::default())
                        }) {
                            return false;
                        }
                    }
                }
                // A recurrence of the lanes' own loop: one history answers every lane.
                Node::Rec(r, i, k) if iter.is_some_and(|(l, _)| r.l == l) => {
                    if eval_rec_lanes(r, *i as usize, get(*k), cx, ts, out).is_err() {
                        return false;
                    }
                }
                Node::Rec(r, i, k) => {
                    let c = lane_cx.get_or_insert_with(|| cx.clone());
                    let k = get(*k).to_vec();
                    if !per_lane(out, c, &set_lane, |c, l| {
                        eval_rec(r, *i as usize, k[l], c, ts)
                    }) {
                        return false;
                    }
                }
            }
        }
        if axis == LaneAxis::Tid && phis.is_none() {
            self.last = Some((t.id, n, cx.tid, cx.ctaid));
        }
        true
    }

    /// The value of node `n` in lane `l` of the last [`LaneEval::run`].
    pub fn value(&self, n: u32, l: usize) -> i128 {
        self.vals[n as usize * self.lanes + l]
    }
}

/// `out[l] = f(lane l's context, l)` with `c` set to each lane's context by `set_lane`;
/// `false` at the first error.
fn per_lane(
    out: &mut [i128],
    c: &mut Ctx,
    set_lane: &impl Fn(&mut Ctx, usize),
    mut f: impl FnMut(&Ctx, usize) -> Result<i128, EvalError>,
) -> bool {
    for (l, o) in out.iter_mut().enumerate() {
        set_lane(c, l);
        match f(c, l) {
            Ok(v) => *o = v,
            Err(_) => return false,
        }
    }
    true
}

/// `out[l] = f(a[l])`.
fn lanes1(out: &mut [i128], a: &[i128], f: impl Fn(i128) -> i128) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

/// `out[l] = f(a[l], b[l])`.
fn lanes2(out: &mut [i128], a: &[i128], b: &[i128], f: impl Fn(i128, i128) -> i128) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

/// A compiled expression set with its slots: evaluates any compiled expression, falling back
/// to [`eval`] for others. Values stay valid while the context does: a call in the same
/// context as the one before reuses what that call computed (a load's guards and address
/// share most of their nodes), a call in another context starts a new generation.
#[derive(Debug)]
pub struct Evaluator<'a> {
    tape: &'a Tape,
    st: TapeState,
    /// The context the slots were filled in.
    seen: Ctx,
}

impl<'a> Evaluator<'a> {
    /// An evaluator over `tape`.
    pub fn new(tape: &'a Tape) -> Evaluator<'a> {
        Evaluator {
            tape,
            st: TapeState::new(tape),
            seen: Ctx::new(0),
        }
    }
    /// The value of `e` in `cx`.
    pub fn eval(&mut self, e: &E, cx: &Ctx, ts: &dyn TripSource) -> Result<i128, EvalError> {
        match self.tape.node(e) {
            Some(n) => {
                let s = &mut self.seen;
                if s.tid != cx.tid
                    || s.ctaid != cx.ctaid
                    || s.iters != cx.iters
                    || s.trips != cx.trips
                    || s.phis != cx.phis
                {
                    self.st.next();
                    s.tid = cx.tid;
                    s.ctaid = cx.ctaid;
                    s.iters.clone_from(&cx.iters);
                    s.trips.clone_from(&cx.trips);
                    s.phis.clone_from(&cx.phis);
                }
                eval_tape(self.tape, &mut self.st, n, cx, ts)
            }
            None => eval(e, cx, ts),
        }
    }
}

/// Largest iteration a recurrence is stepped to.
pub const REC_LIMIT: i128 = 1 << 24;

/// Most register values the recurrence histories of one worker thread keep (16 MB of
/// `i128`); beyond it they are dropped and later evaluations step again from the start.
const REC_HISTORY_CAP: usize = 1 << 20;

/// The states a recurrence system reached in one context: register `r` at iteration `k` is
/// `states[(k - first) * m + r]` (`m` registers), for `k` from `first` on.
struct RecHistory {
    sys: Arc<RecSys>,
    /// The coordinates the system reads ([`RecSys::coords`]).
    tid: [i128; 3],
    ctaid: [i128; 3],
    /// The other loops' iterations (the system's own is `None`).
    iters: Vec<Option<i128>>,
    phis: Vec<(u32, i128)>,
    first: i128,
    states: Vec<i128>,
}

impl RecHistory {
    /// Whether this is the history of `r` (whose loop is `li`) in `cx`.
    fn is(&self, r: &Arc<RecSys>, li: usize, cx: &Ctx) -> bool {
        Arc::ptr_eq(&self.sys, r)
            && (self.tid, self.ctaid) == r.coords(cx)
            && self.iters.len() == cx.iters.len()
            && self
                .iters
                .iter()
                .zip(&cx.iters)
                .enumerate()
                .all(|(n, (a, b))| n == li || a == b)
            && self.phis == cx.phis
    }
    /// Iterations recorded.
    fn len(&self) -> i128 {
        (self.states.len() / self.sys.regs.len().max(1)) as i128
    }
}

/// The recurrence histories of one worker thread, and the systems' compiled steps.
#[derive(Default)]
struct RecMemo {
    /// History by hash of system and context (a collision replaces the older one).
    index: crate::footprint::FxMap<u64, u32>,
    histories: Vec<RecHistory>,
    /// Register values held by `histories`.
    values: usize,
    /// Compiled step tapes of the systems stepped lately (the `Arc` keeps each system, hence
    /// the tape's node addresses, alive).
    tapes: Vec<StepTape>,
}

/// A recurrence system's compiled steps and their slots.
type StepTape = (Arc<RecSys>, std::rc::Rc<Tape>, TapeState);

thread_local! {
    /// Every state a recurrence reached, per system and context: the walks visit a loop's
    /// iterations `k = 0, 1, ...` once per load (and, in the footprints, once per load for
    /// each thread of a TB in turn), so each state is stepped once and read many times.
    static REC_MEMO: std::cell::RefCell<RecMemo> = std::cell::RefCell::new(RecMemo::default());
}

thread_local! {
    /// Value storage of the eager step passes, reused from call to call.
    static STEP_VALS: std::cell::RefCell<Vec<i128>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The key of `r`'s history in `cx` (its own loop `li` left out).
fn rec_hash(r: &Arc<RecSys>, li: usize, cx: &Ctx) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::footprint::FxHasher::default();
    h.write_usize(Arc::as_ptr(r) as usize);
    let (tid, ctaid) = r.coords(cx);
    for v in tid.iter().chain(&ctaid) {
        h.write_u64(*v as u64);
    }
    for (n, it) in cx.iters.iter().enumerate() {
        if n != li {
            h.write_u64(it.map_or(u64::MAX, |v| v as u64));
        }
    }
    for (reg, v) in &cx.phis {
        h.write_u32(*reg);
        h.write_u64(*v as u64);
    }
    h.finish()
}

/// Register `i` of recurrence `r` at iterations `ks` of its own loop, in contexts that are
/// `cx` but for that loop's iteration: they share one history, stepped once to the last of
/// them and read for all of them.
fn eval_rec_lanes(
    r: &Arc<RecSys>,
    i: usize,
    ks: &[i128],
    cx: &Ctx,
    ts: &dyn TripSource,
    out: &mut [i128],
) -> Result<(), EvalError> {
    let Some(&last) = ks.iter().max() else {
        return Ok(());
    };
    eval_rec(r, i, last, cx, ts)?;
    let li = r.l.index();
    let hash = rec_hash(r, li, cx);
    let m = r.regs.len();
    let mut missed = false;
    REC_MEMO.with(|c| {
        let c = c.borrow();
        let h = c
            .index
            .get(&hash)
            .map(|&x| &c.histories[x as usize])
            .filter(|h| h.is(r, li, cx));
        for (o, &k) in out.iter_mut().zip(ks) {
            match h {
                Some(h) if k >= h.first && k < h.first + h.len() => {
                    *o = h.states[(k - h.first) as usize * m + i];
                }
                _ => missed = true,
            }
        }
    });
    // States the history no longer holds (or never held: `ks` out of range) one by one.
    if missed {
        for (o, &k) in out.iter_mut().zip(ks) {
            *o = eval_rec(r, i, k, cx, ts)?;
        }
    }
    Ok(())
}

/// Register `i` of recurrence `r` at iteration `k` in context `cx`.
fn eval_rec(
    r: &Arc<RecSys>,
    i: usize,
    k: i128,
    cx: &Ctx,
    ts: &dyn TripSource,
) -> Result<i128, EvalError> {
    if !(0..=REC_LIMIT).contains(&k) {
        return Err(EvalError::TripLimit(r.l, REC_LIMIT as u64));
    }
    let m = r.regs.len();
    if i >= m {
        return Err(EvalError::Unbound(Var::Phi(i as u32)));
    }
    let li = r.l.index();
    let hash = rec_hash(r, li, cx);
    // A recorded state answers at once; otherwise step from the latest one before `k`.
    let start = REC_MEMO.with(|c| {
        let mut c = c.borrow_mut();
        if c.values > REC_HISTORY_CAP {
            c.index.clear();
            c.histories.clear();
            c.values = 0;
        }
        let h = c.index.get(&hash).map(|&x| &c.histories[x as usize])?;
        if !h.is(r, li, cx) || k < h.first {
            return None;
        }
        let n = h.len();
        if k < h.first + n {
            let at = (k - h.first) as usize * m + i;
            return Some(Err(h.states[at]));
        }
        let last = (h.first + n - 1 - h.first) as usize * m;
        Some(Ok((h.first + n - 1, h.states[last..last + m].to_vec())))
    });
    let (mut j, mut state, fresh) = match start {
        Some(Err(v)) => return Ok(v),
        Some(Ok((j, s))) => (j, s, false),
        None => (
            0,
            r.init
                .iter()
                .map(|e| eval(e, cx, ts))
                .collect::<Result<Vec<_>, _>>()?,
            true,
        ),
    };
    if state.len() != m {
        return Err(EvalError::Unbound(Var::Phi(i as u32)));
    }
    // The states to record, the last at `k` (the initial one too when stepping starts at
    // 0), appended to the history below; a long loop keeps its later ones only.
    let mut stepped = Vec::with_capacity(((k - j + 1) as usize).min(1 << 12) * m);
    if fresh {
        stepped.extend_from_slice(&state);
    }
    if j < k {
        let mut c = cx.clone();
        for t in c.trips.iter_mut() {
            *t = None;
        }
        let base = c.phis.len();
        // The step expressions share most of their nodes: they are compiled once per system
        // into one tape, and each step fills its slots once.
        let (tape, mut tst) = step_tape(r);
        let roots: Vec<u32> = r.step.iter().filter_map(|e| tape.node(e)).collect();
        // A step whose every node is cheap is one eager pass over the tape; a step that
        // meets an error there is evaluated lazily, which reports what it must.
        let mut eager = tape
            .is_cheap()
            .then(|| LaneEval::with_values(STEP_VALS.with(|v| v.take())));
        let res = (|| {
            while j < k {
                if let Some(x) = c.iters.get_mut(li) {
                    *x = Some(j);
                }
                c.phis.truncate(base);
                c.phis
                    .extend(r.regs.iter().copied().zip(state.iter().copied()));
                let ran = match eager.as_mut() {
                    Some(le) => le.run(&tape, LaneAxis::Tid, 1, &c, ts).then_some(&*le),
                    None => None,
                };
                if let Some(le) = ran {
                    for (s, &n) in state.iter_mut().zip(&roots) {
                        *s = le.value(n, 0);
                    }
                } else {
                    tst.next();
                    for (s, &n) in state.iter_mut().zip(&roots) {
                        *s = eval_tape(&tape, &mut tst, n, &c, ts)?;
                    }
                }
                stepped.extend_from_slice(&state);
                if stepped.len() > REC_HISTORY_CAP / 4 {
                    stepped.drain(..stepped.len() / m / 2 * m);
                }
                j += 1;
            }
            Ok(())
        })();
        if let Some(le) = eager {
            STEP_VALS.with(|v| *v.borrow_mut() = le.into_values());
        }
        put_step_tape(r, tst);
        res?;
    }
    let v = state[i];
    // Record what was computed (the history may have been dropped meanwhile by the
    // evaluations the steps made: it is then started again from here).
    let from = k + 1 - (stepped.len() / m) as i128;
    record(r, cx, hash, from, stepped);
    Ok(v)
}

/// Appends `stepped`, the states of `r` in `cx` from iteration `from` on, to its history
/// (`hash` is [`rec_hash`]); a history that does not end just before `from` is replaced.
fn record(r: &Arc<RecSys>, cx: &Ctx, hash: u64, from: i128, stepped: Vec<i128>) {
    let (li, m) = (r.l.index(), r.regs.len().max(1));
    REC_MEMO.with(|c| {
        let mut c = c.borrow_mut();
        let c = &mut *c;
        let found = c.index.get(&hash).map(|&x| x as usize).filter(|&x| {
            let h = &c.histories[x];
            h.is(r, li, cx) && h.first + h.len() == from
        });
        c.values += stepped.len();
        match found {
            Some(x) => {
                let h = &mut c.histories[x];
                h.states.extend_from_slice(&stepped);
                // One long loop keeps at most a quarter of the cap: its older half goes.
                if h.states.len() > REC_HISTORY_CAP / 4 {
                    let drop = h.states.len() / m / 2;
                    h.states.drain(..drop * m);
                    h.first += drop as i128;
                    c.values -= drop * m;
                }
            }
            None => {
                let mut iters = cx.iters.clone();
                if let Some(x) = iters.get_mut(li) {
                    *x = None;
                }
                let (tid, ctaid) = r.coords(cx);
                c.histories.push(RecHistory {
                    sys: r.clone(),
                    tid,
                    ctaid,
                    iters,
                    phis: cx.phis.clone(),
                    first: from,
                    states: stepped,
                });
                c.index.insert(hash, (c.histories.len() - 1) as u32);
            }
        }
    });
}

/// The compiled step of `r` and its slots (taken: give them back with [`put_step_tape`]).
fn step_tape(r: &Arc<RecSys>) -> (std::rc::Rc<Tape>, TapeState) {
    let (tape, tst) = REC_MEMO.with(|t| {
        let t = &mut t.borrow_mut().tapes;
        match t.iter().position(|(s, _, _)| Arc::ptr_eq(s, r)) {
            Some(p) => {
                let (_, tape, st) = &mut t[p];
                (tape.clone(), std::mem::take(st))
            }
            None => {
                if t.len() >= 16 {
                    t.remove(0);
                }
                let tape = std::rc::Rc::new(Tape::new(&r.step));
                t.push((r.clone(), tape.clone(), TapeState::default()));
                (tape, TapeState::default())
            }
        }
    });
    let tst = if tst.vals.len() == tape.len() {
        tst
    } else {
        TapeState::new(&tape)
    };
    (tape, tst)
}

/// Gives back the slots [`step_tape`] took.
fn put_step_tape(r: &Arc<RecSys>, tst: TapeState) {
    REC_MEMO.with(|t| {
        if let Some(e) = t
            .borrow_mut()
            .tapes
            .iter_mut()
            .find(|(s, _, _)| Arc::ptr_eq(s, r))
        {
            e.2 = tst;
        }
    });
}

/// Steps recurrence `r` for the lanes `0..n` along `%tid.x` of `cx` together, from their
/// initial states to iteration `upto`, and records each lane's history, so that the walks of
/// those threads that follow find every state recorded. `cx` is the context the walks
/// evaluate `r` in (its own loop's iteration aside). Nothing is done for lanes whose history
/// already reaches `upto`, nor where the steps are not cheap to evaluate eagerly, the
/// histories would take more than an eighth of their cap, or an evaluation fails (the walks
/// then step each thread as they go).
pub fn prestep_lanes(r: &Arc<RecSys>, n: usize, upto: i128, cx: &Ctx, ts: &dyn TripSource) {
    let (li, m) = (r.l.index(), r.regs.len());
    let n = n.min(LANES);
    let Ok(len) = usize::try_from(upto + 1) else {
        return;
    };
    if m == 0 || n < 2 || len.saturating_mul(n * m) > REC_HISTORY_CAP / 8 {
        return;
    }
    let mut c = cx.clone();
    let lane_cx = |c: &mut Ctx, l: usize| LaneAxis::Tid.set_lane(c, cx, l);
    let reaches = |c: &Ctx| {
        let hash = rec_hash(r, li, c);
        REC_MEMO.with(|memo| {
            let memo = memo.borrow();
            memo.index.get(&hash).is_some_and(|&x| {
                let h = &memo.histories[x as usize];
                h.is(r, li, c) && h.first == 0 && h.len() > upto
            })
        })
    };
    if (0..n).all(|l| {
        lane_cx(&mut c, l);
        reaches(&c)
    }) {
        return;
    }
    // Initial states, lane by lane: `state[l * m + reg]`.
    let mut state = vec![0i128; n * m];
    for l in 0..n {
        lane_cx(&mut c, l);
        for (reg, e) in r.init.iter().enumerate() {
            match eval(e, &c, ts) {
                Ok(v) if reg < m => state[l * m + reg] = v,
                _ => return,
            }
        }
    }
    let (tape, tst) = step_tape(r);
    put_step_tape(r, tst);
    if !tape.is_cheap() {
        return;
    }
    let roots: Vec<u32> = r.step.iter().filter_map(|e| tape.node(e)).collect();
    if roots.len() != m {
        return;
    }
    // `hist[l]`: lane `l`'s states, iteration after iteration.
    let mut hist: Vec<Vec<i128>> = (0..n)
        .map(|l| {
            let mut h = Vec::with_capacity(len * m);
            h.extend_from_slice(&state[l * m..(l + 1) * m]);
            h
        })
        .collect();
    c.tid[0] = cx.tid[0];
    for t in c.trips.iter_mut() {
        *t = None;
    }
    let mut le = LaneEval::with_values(STEP_VALS.with(|v| v.take()));
    let mut ok = true;
    for j in 0..upto {
        if let Some(x) = c.iters.get_mut(li) {
            *x = Some(j);
        }
        if !le.run_steps(&tape, n, &c, ts, &r.regs, &state) {
            ok = false;
            break;
        }
        for (l, h) in hist.iter_mut().enumerate() {
            for (reg, &root) in roots.iter().enumerate() {
                state[l * m + reg] = le.value(root, l);
            }
            h.extend_from_slice(&state[l * m..(l + 1) * m]);
        }
    }
    STEP_VALS.with(|v| *v.borrow_mut() = le.into_values());
    if !ok {
        return;
    }
    let mut c = cx.clone();
    for (l, h) in hist.into_iter().enumerate() {
        lane_cx(&mut c, l);
        if !reaches(&c) {
            let hash = rec_hash(r, li, &c);
            record(r, &c, hash, 0, h);
        }
    }
}

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

    /// Equal subexpressions built apart compile to one node; different ones do not (a
    /// constant, an operand, a width or signedness apart).
    #[test]
    fn equal_shapes_share_a_node() {
        let x = || var(Var::Tid(0));
        let a = add(x(), konst(1));
        let b = add(x(), konst(1));
        let c = add(x(), konst(2));
        let wide = |e: &E, signed| {
            Arc::new(Expr::Ext {
                bits: 32,
                signed,
                e: e.clone(),
            })
        };
        let (sa, sb, ua) = (wide(&a, true), wide(&b, true), wide(&a, false));
        let root = mul(add(sa.clone(), sb.clone()), add(ua.clone(), c.clone()));
        let tape = Tape::new([&root]);
        let n = |e: &E| tape.node(e).unwrap();
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(n(&a), n(&b));
        assert_eq!(n(&sa), n(&sb));
        assert_ne!(n(&a), n(&c));
        assert_ne!(n(&sa), n(&ua));
        // x, 1, x + 1, its two extensions, 2, x + 2, two sums and the product.
        assert_eq!(tape.len(), 10);
        let mut cx = Ctx::new(0);
        cx.tid[0] = 5;
        let mut st = TapeState::new(&tape);
        assert_eq!(
            eval_tape(&tape, &mut st, n(&root), &cx, &NoTrips).unwrap(),
            12 * 13
        );
    }

    /// A slot that does not read a loop's iteration keeps its value across
    /// [`TapeState::next_iter`]; one that does is computed again; [`TapeState::next`]
    /// forgets both.
    #[test]
    fn fixed_slots_survive_an_iteration_change_only() {
        let (l, other) = (LoopId(0), LoopId(1));
        let fixed = add(var(Var::Tid(0)), var(Var::Iter(other)));
        let root = add(fixed.clone(), mul(konst(10), var(Var::Iter(l))));
        let tape = Tape::new([&root, &fixed]);
        let inv = tape.invariant_in(l);
        let (r, f) = (tape.node(&root).unwrap(), tape.node(&fixed).unwrap());
        assert!(inv[f as usize] && !inv[r as usize]);
        let trip = Arc::new(Expr::Trip(other));
        assert!(
            !Tape::new([&trip]).invariant_in(l)[0],
            "a trip count may read the iteration"
        );
        let mut st = TapeState::with_fixed(&tape, inv);
        let mut cx = Ctx::new(2);
        cx.tid[0] = 3;
        cx.iters = vec![Some(0), Some(5)];
        assert_eq!(eval_tape(&tape, &mut st, r, &cx, &NoTrips).unwrap(), 8);
        cx.iters[0] = Some(2);
        st.next_iter();
        assert_eq!(eval_tape(&tape, &mut st, r, &cx, &NoTrips).unwrap(), 28);
        // The fixed slot was kept: a change it would see is not seen until `next`.
        cx.tid[0] = 100;
        st.next_iter();
        assert_eq!(eval_tape(&tape, &mut st, f, &cx, &NoTrips).unwrap(), 8);
        st.next();
        assert_eq!(eval_tape(&tape, &mut st, f, &cx, &NoTrips).unwrap(), 105);
        assert_eq!(eval_tape(&tape, &mut st, r, &cx, &NoTrips).unwrap(), 125);
    }

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

    /// Steps `r` from its initial values to `k`, the reference for [`eval_rec`].
    fn stepped(r: &RecSys, k: i128, cx: &Ctx) -> Vec<i128> {
        let mut st: Vec<i128> = r
            .init
            .iter()
            .map(|e| eval(e, cx, &NoTrips).unwrap())
            .collect();
        let mut c = cx.clone();
        for j in 0..k {
            c.iters[r.l.index()] = Some(j);
            c.phis = r.regs.iter().copied().zip(st.iter().copied()).collect();
            st = r
                .step
                .iter()
                .map(|e| eval(e, &c, &NoTrips).unwrap())
                .collect();
        }
        st
    }

    /// `x' = (5x + j) mod 17 + y`, `y' = 3 - y` in loop 0 (not affine, two registers), from
    /// `x = x0`, `y = 1`.
    fn two_register_rec(x0: E) -> Arc<RecSys> {
        let (x, y) = (var(Var::Phi(0)), var(Var::Phi(1)));
        let j = var(Var::Iter(LoopId(0)));
        Arc::new(RecSys {
            l: LoopId(0),
            regs: vec![0, 1],
            init: vec![x0, konst(1)],
            step: vec![
                add(
                    op(IntOp::Rem, add(mul(konst(5), x), j), konst(17)),
                    y.clone(),
                ),
                sub(konst(3), y),
            ],
            reads: Default::default(),
        })
    }

    #[test]
    fn warp_lanes_across_rows_equal_thread_by_thread_evaluation() {
        // Rows of 5 threads, 3 rows, 3 planes: a warp's lanes cross rows and planes.
        let b = [5u32, 3, 3];
        let (x, y, z) = (var(Var::Tid(0)), var(Var::Tid(1)), var(Var::Tid(2)));
        let lin = add(
            x.clone(),
            mul(konst(7), add(y.clone(), mul(konst(11), z.clone()))),
        );
        let addr = ext(
            add(mul(var(Var::Ctaid(0)), konst(1000)), sub(lin, konst(3050))),
            32,
            true,
        );
        let guard = and(cmp(Rel::Lt, x, konst(4)), not(cmp(Rel::Eq, y, z)));
        let wide = ext(mul(addr.clone(), konst(1 << 40)), 64, false);
        let roots = [addr, guard, wide];
        let tape = Tape::new(roots.iter());
        let nodes: Vec<u32> = roots.iter().map(|e| tape.node(e).unwrap()).collect();
        let mut le = LaneEval::default();
        let mut cx = Ctx::new(0);
        cx.ctaid[0] = 3;
        // From the block's first thread, from the middle of a row, up to its last thread.
        for (first, n) in [(0usize, 32usize), (7, 32), (32, 13), (40, 5)] {
            let f = first as i128;
            cx.tid = [f % 5, (f / 5) % 3, f / 15];
            assert!(le.run(&tape, LaneAxis::Threads(b), n, &cx, &NoTrips));
            for l in 0..n {
                let t = (first + l) as i128;
                let mut c = cx.clone();
                c.tid = [t % 5, (t / 5) % 3, t / 15];
                for (e, &nd) in roots.iter().zip(&nodes) {
                    assert_eq!(Ok(le.value(nd, l)), eval(e, &c, &NoTrips), "thread {t}");
                }
            }
        }
    }

    #[test]
    fn iteration_lanes_and_prestepped_histories_equal_stepping_one_by_one() {
        let r = two_register_rec(add(var(Var::Tid(0)), var(Var::Ctaid(0))));
        let j = var(Var::Iter(LoopId(0)));
        let rec = |reg: u32| Arc::new(Expr::Rec(r.clone(), reg, j.clone()));
        // An address of both registers, the thread and the counter; a guard on a register.
        let addr = add(
            mul(rec(0), konst(4)),
            add(rec(1), mul(j.clone(), var(Var::Tid(0)))),
        );
        let guard = cmp(Rel::Lt, op(IntOp::Rem, rec(0), konst(5)), konst(3));
        let tape = Tape::new([&addr, &guard]);
        assert!(tape.is_cheap_in(&[LoopId(0)]));
        assert_eq!(tape.recs().len(), 1);
        let (na, ng) = (tape.node(&addr).unwrap(), tape.node(&guard).unwrap());
        let mut le = LaneEval::default();
        for ctaid in 0..3 {
            let mut cx = Ctx::new(1);
            cx.ctaid[0] = ctaid;
            // TB 1's threads are stepped together first (their walks then only read the
            // histories); the others' are stepped by the first evaluation that needs them.
            if ctaid == 1 {
                prestep_lanes(&r, 8, 39, &cx, &NoTrips);
            }
            for tid in 0..8 {
                cx.tid[0] = tid;
                for (k0, n) in [(20, 20), (35, 5), (0, 20), (3, 32)] {
                    cx.iters[0] = Some(k0);
                    assert!(le.run(&tape, LaneAxis::Iter(LoopId(0)), n, &cx, &NoTrips));
                    for l in 0..n {
                        let k = k0 + l as i128;
                        let mut c = cx.clone();
                        c.iters[0] = None;
                        let st = stepped(&r, k, &c);
                        let where_ = format!("ctaid {ctaid} tid {tid} k {k}");
                        assert_eq!(le.value(na, l), st[0] * 4 + st[1] + k * tid, "{where_}");
                        assert_eq!(le.value(ng, l), i128::from(st[0] % 5 < 3), "{where_}");
                    }
                }
            }
        }
    }

    #[test]
    fn histories_are_shared_by_threads_that_agree_on_what_a_system_reads() {
        // A system of `%tid.x` alone and one that also reads `%ctaid.y`.
        let by_x = two_register_rec(var(Var::Tid(0)));
        let by_xy = two_register_rec(add(var(Var::Tid(0)), var(Var::Ctaid(1))));
        assert_eq!(by_x.reads(), [true, false, false, false, false, false]);
        assert_eq!(by_xy.reads(), [true, false, false, false, true, false]);
        let histories = || REC_MEMO.with(|m| m.borrow().histories.len());
        REC_MEMO.with(|m| *m.borrow_mut() = RecMemo::default());
        for (r, want) in [(&by_x, 1), (&by_xy, 3)] {
            let before = histories();
            // Every thread of every TB reads its own states, stepped or shared.
            for (tid_y, ctaid_y) in [(0, 0), (2, 0), (0, 3), (1, 7)] {
                let mut cx = Ctx::new(1);
                cx.tid = [5, tid_y, 0];
                cx.ctaid = [2, ctaid_y, 1];
                for k in [30, 4] {
                    let at = Arc::new(Expr::Rec(r.clone(), 0, konst(k)));
                    assert_eq!(
                        eval(&at, &cx, &NoTrips),
                        Ok(stepped(r, k, &cx)[0]),
                        "tid.y {tid_y} ctaid.y {ctaid_y} k {k}"
                    );
                }
            }
            assert_eq!(histories() - before, want, "{:?}", r.reads());
        }
        // A trip count may depend on any coordinate: a system reading one keeps them all.
        let by_trip = two_register_rec(var(Var::Tid(0)));
        let by_trip = Arc::new(RecSys::new(
            by_trip.l,
            by_trip.regs.clone(),
            vec![Arc::new(Expr::Trip(LoopId(1))), konst(1)],
            by_trip.step.clone(),
        ));
        assert_eq!(by_trip.reads(), [true; 6]);
    }

    #[test]
    fn reused_thread_only_values_equal_a_fresh_pass() {
        // An address of the thread (a select on `%tid.x`) and of the loop's counter.
        let (x, j) = (var(Var::Tid(0)), var(Var::Iter(LoopId(0))));
        let thread = select(
            cmp(Rel::Lt, op(IntOp::Rem, x.clone(), konst(3)), konst(1)),
            mul(x.clone(), konst(7)),
            add(x, var(Var::Ctaid(0))),
        );
        let addr = add(thread.clone(), mul(j, konst(1000)));
        let tape = Tape::new([&addr]);
        let only = tape.thread_only();
        assert!(only[tape.node(&thread).unwrap() as usize]);
        assert!(!only[tape.node(&addr).unwrap() as usize]);
        let na = tape.node(&addr).unwrap();
        let mut le = LaneEval::default();
        let mut cx = Ctx::new(1);
        // Iterations of one row, then another row, then another TB, then back.
        for (tid, ctaid, k) in [
            (0, 0, 0),
            (0, 0, 1),
            (0, 0, 5),
            (32, 0, 5),
            (32, 2, 5),
            (0, 0, 2),
        ] {
            cx.tid[0] = tid;
            cx.ctaid[0] = ctaid;
            cx.iters[0] = Some(k);
            assert!(le.run_reusing(&tape, 32, &cx, &NoTrips, &only));
            let mut fresh = LaneEval::default();
            assert!(fresh.run(&tape, LaneAxis::Tid, 32, &cx, &NoTrips));
            for l in 0..32 {
                assert_eq!(
                    le.value(na, l),
                    fresh.value(na, l),
                    "tid {tid} ctaid {ctaid} k {k}"
                );
            }
        }
    }

    #[test]
    fn recurrence_history_answers_any_order_of_iterations() {
        let r = two_register_rec(var(Var::Tid(0)));
        let at = |k: i128, reg: u32| Arc::new(Expr::Rec(r.clone(), reg, konst(k)));
        let mut cx = Ctx::new(1);
        // Ascending, descending and interleaved across threads, as the walks ask.
        let mut order: Vec<(i128, i128)> = Vec::new();
        for t in 0..3 {
            order.extend((0..40).map(|k| (t, k)));
        }
        order.extend((0..40).rev().map(|k| (1, k)));
        order.extend((0..40).flat_map(|k| (0..3).map(move |t| (t, (k * 7) % 40))));
        for (t, k) in order {
            cx.tid[0] = t;
            let want = stepped(&r, k, &cx);
            for reg in 0..2 {
                assert_eq!(
                    eval(&at(k, reg), &cx, &NoTrips),
                    Ok(want[reg as usize]),
                    "tid {t} k {k}"
                );
            }
        }
        // A loop longer than one history keeps: its early states are stepped again.
        cx.tid[0] = 5;
        let long = (REC_HISTORY_CAP / 4) as i128;
        for k in [long, long + 10, long - 5, 3, long + 5, 0] {
            assert_eq!(
                eval(&at(k, 0), &cx, &NoTrips),
                Ok(stepped(&r, k, &cx)[0]),
                "k {k}"
            );
        }
        // Past the limit: an error, not a walk of 2^24 steps per call.
        assert!(eval(&at(REC_LIMIT + 1, 0), &cx, &NoTrips).is_err());
    }

    #[test]
    fn lane_pass_equals_lane_by_lane_evaluation() {
        // A clamped, wrapped index with a guard, and a division whose divisor is 0 on one
        // lane (in the branch not taken there).
        let x = add(mul(var(Var::Ctaid(0)), konst(8)), var(Var::Tid(0)));
        let clamped = select(cmp(Rel::Lt, x.clone(), konst(3)), konst(3), x.clone());
        let idx = ext(sub(clamped, konst(5)), 32, true);
        let guard = and(
            cmp(Rel::Ge, x.clone(), konst(1)),
            not(cmp(Rel::Eq, var(Var::Tid(1)), konst(2))),
        );
        let div = op(IntOp::Div, konst(100), sub(x.clone(), konst(11)));
        let safe = select(cmp(Rel::Eq, x.clone(), konst(11)), konst(0), div.clone());
        let roots = [idx.clone(), guard.clone(), safe.clone()];
        let tape = Tape::new(roots.iter());
        let nodes: Vec<u32> = roots.iter().map(|e| tape.node(e).unwrap()).collect();
        let mut le = LaneEval::default();
        let mut cx = Ctx::new(0);
        for (ctaid, tid1, n) in [(0, 0, 8), (1, 2, 5), (2, 1, 32)] {
            cx.ctaid[0] = ctaid;
            cx.tid[1] = tid1;
            cx.tid[0] = 0;
            // Lane 3 of TB 1 divides by zero in the branch the select does not take: the
            // eager pass gives up there, the lazy evaluation does not fail.
            let ok = le.run(&tape, LaneAxis::Tid, n, &cx, &NoTrips);
            assert_eq!(ok, !(ctaid == 1 && n > 3), "ctaid {ctaid}");
            for l in 0..n {
                let mut c = cx.clone();
                c.tid[0] = l as i128;
                assert!(eval(&safe, &c, &NoTrips).is_ok());
                if ok {
                    for (e, &nd) in roots.iter().zip(&nodes) {
                        assert_eq!(
                            Ok(le.value(nd, l)),
                            eval(e, &c, &NoTrips),
                            "ctaid {ctaid} lane {l}"
                        );
                    }
                }
            }
        }
    }
}
