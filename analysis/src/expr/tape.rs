//! Compilation of expression DAGs to a [`Tape`] (nodes in topological order, operands by
//! index) evaluated with one value slot per node ([`TapeState`], [`eval_tape`]), and the
//! [`Evaluator`] that evaluates compiled expressions and falls back to [`eval`] for others.

use super::*;

/// A DAG compiled to an array in topological order (children before parents), each node
/// naming its operands by index, so that an evaluation keeps one value slot per node
/// ([`TapeState`]) instead of hashing node addresses: the cost of evaluating shared
/// subexpressions is linear in the DAG's size. Evaluation stays lazy (a `Select` evaluates
/// one branch, `And`/`Or` short-circuit), so errors in branches not taken do not surface,
/// exactly as with [`eval`].
#[derive(Debug, Default)]
pub struct Tape {
    pub(super) nodes: Vec<Node>,
    /// Node index by expression address (every node of the compiled roots).
    index: crate::fx::FxMap<usize, u32>,
    /// Node index by shape (operation and operand nodes): equal subexpressions built
    /// apart (each PTX operation's `Ext`, the constants, a value re-read after every
    /// branch) become one node. mirror_boundary's reflection step had 87 nodes.
    shapes: crate::fx::FxMap<Shape, u32>,
    /// The roots, which keep every compiled node alive (the addresses stay unique).
    roots: Vec<E>,
    /// Unique per compiled tape (0: an empty default one), for [`LaneEval`] to tell whose
    /// values it holds.
    pub(super) id: u64,
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
pub(super) enum Node {
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
    pub(super) vals: Vec<i128>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::tests::NoTrips;
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
}
