//! Evaluation of loop recurrences ([`Expr::Rec`] over a [`RecSys`]): stepping a system to an
//! iteration ([`REC_LIMIT`] at most), with histories shared by the threads that agree on what
//! the system reads, and [`prestep_lanes`] filling them for a run of iterations ahead.

use super::*;

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
    index: crate::fx::FxMap<u64, u32>,
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
    let mut h = crate::fx::FxHasher::default();
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
pub(super) fn eval_rec_lanes(
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
pub(super) fn eval_rec(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::tests::NoTrips;
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
}
