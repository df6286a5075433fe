//! Concrete evaluation of an expression in one thread's context ([`Ctx`]): [`eval`], its
//! memoised form [`eval_memo`], the trip counts it asks a [`TripSource`] for, and why an
//! evaluation fails ([`EvalError`]).

use super::*;

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
pub type Memo = crate::fx::FxMap<usize, i128>;

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
