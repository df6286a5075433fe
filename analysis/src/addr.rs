//! Symbolic execution of a kernel over its CFG: every register gets an [`Expr`] over the
//! thread's coordinates and loop counters, every block a guard (a conjunction of branch
//! conditions), every loop its induction variables and exit conditions, and every global
//! load its address expression, guard and loop nest ([`KernelModel`]).
//!
//! Blocks run in reverse postorder. Branch conditions are folded with the launch's
//! constants, so edges that cannot be taken for this launch (unroll remainders, `n < 1`
//! early outs) disappear. At a join, equal values merge; values from the two sides of one
//! condition become a `select`; anything else is [`Reason::PathDependent`]. A loop is run
//! twice ([`crate::ivs`]): once with placeholders for its loop-carried registers to find
//! `r = r + step` induction variables, then with `init + step * k`.

use std::collections::HashMap;

use launch::{BoundLaunch, BoundValue};
use ptx_parser::{
    AddrBase, BlockId, Cfg, CmpOp, Function, Immediate, Inst, InstId, Opcode, Operand, ScalarType,
    SpecialReg, StateSpace, Symbol,
};

use crate::dom::DomTree;
use crate::expr::*;
use crate::ivs;
use crate::loops::{LoopForest, LoopId};
use crate::model::guard_unknowns;

pub use crate::model::{Guard, KernelModel, LoadSite, LoopInfo};

#[derive(Clone)]
struct State {
    env: Vec<E>,
    cond: Vec<E>,
}

/// Runs the symbolic execution of `f` for `launch`.
pub fn analyze_kernel(f: &Function, launch: &BoundLaunch) -> KernelModel {
    let cfg = Cfg::compute(f);
    let dom = DomTree::compute(&cfg);
    let forest = LoopForest::compute(&cfg, &dom);
    let undefined = unknown(Reason::Undefined);
    let mut x = Exec {
        f,
        cfg: &cfg,
        dom: &dom,
        forest: &forest,
        launch,
        edges: HashMap::new(),
        loads: HashMap::new(),
        loops: vec![LoopInfo::default(); forest.loops.len()],
        recording: true,
    };
    for (i, l) in forest.loops.iter().enumerate() {
        x.loops[i].parent = l.parent;
        x.loops[i].header_inst = cfg.blocks[l.header.index()].insts.start.index() as u32;
    }
    if !cfg.blocks.is_empty() {
        let st = State {
            env: vec![undefined; f.regs.len()],
            cond: Vec::new(),
        };
        let order: Vec<BlockId> = dom.rpo.clone();
        x.run_region(None, &order, BlockId(0), st);
    }
    let mut loads: Vec<LoadSite> = x.loads.into_values().collect();
    loads.sort_by_key(|l| l.inst);
    // Guard literals on loaded data or floating point move to `may_cond`.
    for l in &mut loads {
        let mut lits = Vec::new();
        for c in &l.cond {
            crate::model::conjuncts(c, &mut lits);
        }
        let (may, exact): (Vec<E>, Vec<E>) = lits
            .into_iter()
            .partition(|c| matches!(guard_unknowns(c), Some(Ok(_))));
        l.cond = exact;
        l.may_cond = may;
    }
    let reached: std::collections::HashSet<InstId> = loads.iter().map(|l| l.inst).collect();
    let unreachable_loads = f
        .insts
        .iter()
        .enumerate()
        .filter(|(i, inst)| is_global_load(inst) && !reached.contains(&InstId::new(*i)))
        .map(|(i, _)| (InstId::new(i), f.span(InstId::new(i)).map_or(0, |s| s.line)))
        .collect();
    let trip_plans = x.loops.iter().map(|_| std::sync::OnceLock::new()).collect();
    KernelModel {
        loads,
        unreachable_loads,
        loops: x.loops,
        include_may: false,
        trip_plans,
        trip_table_room: std::sync::atomic::AtomicU64::new(crate::ivs::TRIP_TABLES_ENTRIES),
        grid: [launch.grid.x, launch.grid.y, launch.grid.z].map(dim),
        block: [launch.block.x, launch.block.y, launch.block.z].map(dim),
    }
}

/// A launch dimension as the footprints count it (larger ones saturate; a launch that large
/// is refused by the budget long before).
fn dim(d: u64) -> u32 {
    u32::try_from(d).unwrap_or(u32::MAX)
}

/// Whether `inst` is a load that may read global memory (`ld.global`, `ld.const`, `ldu`,
/// generic `ld`).
pub fn is_global_load(inst: &Inst) -> bool {
    // `.const` module variables live in global memory (the interpreter's layout, the
    // simulator's memory path), so their loads count like global loads.
    matches!(inst.op, Opcode::Ld | Opcode::Ldu)
        && matches!(
            inst.mods.space,
            None | Some(StateSpace::Global) | Some(StateSpace::Generic) | Some(StateSpace::Const)
        )
}

struct Exec<'a> {
    f: &'a Function,
    cfg: &'a Cfg,
    dom: &'a DomTree,
    forest: &'a LoopForest,
    launch: &'a BoundLaunch,
    edges: HashMap<(BlockId, BlockId), State>,
    loads: HashMap<InstId, LoadSite>,
    loops: Vec<LoopInfo>,
    recording: bool,
}

impl Exec<'_> {
    /// Runs the blocks of `order` (one region: the function or a loop body) from `entry`.
    fn run_region(&mut self, region: Option<LoopId>, order: &[BlockId], entry: BlockId, st: State) {
        let depth = region.map_or(0, |l| self.forest.get(l).depth as usize);
        for &b in order {
            self.edges.retain(|(from, _), _| *from != b);
        }
        for &b in order {
            let nest = self.forest.nest(b);
            let child = nest.get(depth).copied();
            if let Some(c) = child {
                if self.forest.get(c).header != b {
                    continue;
                }
            }
            let input = if b == entry {
                Some(st.clone())
            } else {
                self.merge_preds(b)
            };
            let Some(input) = input else { continue };
            match child {
                Some(c) => self.run_loop(c, input),
                None => self.exec_block(b, input),
            }
        }
    }

    fn merge_preds(&self, b: BlockId) -> Option<State> {
        let ins: Vec<&State> = self.cfg.preds[b.index()]
            .iter()
            .filter(|p| !self.dom.dominates(b, **p))
            .filter_map(|p| self.edges.get(&(*p, b)))
            .collect();
        merge(&ins)
    }

    fn run_loop(&mut self, l: LoopId, input: State) {
        let lp = self.forest.get(l);
        let header = lp.header;
        let order: Vec<BlockId> = self
            .dom
            .rpo
            .iter()
            .copied()
            .filter(|b| self.forest.is_in_loop(*b, l))
            .collect();
        let defined = ivs::defined_regs(self.f, self.cfg, &order);
        // Pass 1: placeholders for loop-carried registers.
        let mut st1 = input.clone();
        for &r in &defined {
            st1.env[r as usize] = var(Var::Phi(r));
        }
        let rec = self.recording;
        self.recording = false;
        self.run_region(Some(l), &order, header, st1);
        self.recording = rec;
        let latch_envs: Vec<Vec<E>> = lp
            .latches
            .iter()
            .filter_map(|t| self.edges.get(&(*t, header)).map(|s| s.env.clone()))
            .collect();
        let inner: Vec<LoopId> = (0..self.forest.loops.len())
            .map(|i| LoopId(i as u32))
            .filter(|&x| x != l && self.forest.is_in_loop(self.forest.get(x).header, l))
            .collect();
        let mut st2 = input.clone();
        let mut carried = Vec::new();
        for &r in &defined {
            let init = input.env[r as usize].clone();
            let vals: Vec<&E> = latch_envs.iter().map(|e| &e[r as usize]).collect();
            let width = (self.f.regs[r as usize].ty.size() * 8) as u8;
            let v = ivs::classify(r, width, init, &vals, l, &inner);
            if matches!(&*v, Expr::Unknown(Reason::LoopCarried)) {
                carried.push(r);
            }
            st2.env[r as usize] = v;
        }
        // Loop-carried registers that are not induction variables but do not depend on
        // loaded data: a recurrence stepped concretely per thread.
        if !carried.is_empty() {
            let latch = |r: u32| -> Option<E> {
                let first = latch_envs.first()?.get(r as usize)?.clone();
                latch_envs
                    .iter()
                    .all(|e| e[r as usize] == first)
                    .then_some(first)
            };
            let init = |r: u32| input.env[r as usize].clone();
            for (r, v) in ivs::recurrences(l, &defined, &carried, &init, &latch) {
                st2.env[r as usize] = v;
            }
            // A register no recurrence steps because its back-edge value reads loaded data
            // or compares floating-point values (a binary search's bounds, stepped on a
            // comparison of the loaded key) is unknown for that reason, not as "not an
            // induction variable".
            for &r in &carried {
                let why = latch_envs.iter().find_map(|e| {
                    e[r as usize]
                        .unknown_reason()
                        .filter(|x| matches!(x, Reason::DataDependent | Reason::Float))
                });
                if let Some(why) = why {
                    if matches!(&*st2.env[r as usize], Expr::Unknown(Reason::LoopCarried)) {
                        st2.env[r as usize] = unknown(why);
                    }
                }
            }
        }
        // Pass 2: the real values, loads recorded.
        self.run_region(Some(l), &order, header, st2);
        let mut exits = Vec::new();
        let mut outs: Vec<(BlockId, BlockId, State)> = Vec::new();
        for &b in &order {
            for &s in &self.cfg.blocks[b.index()].succs {
                if self.forest.is_in_loop(s, l) {
                    continue;
                }
                if let Some(es) = self.edges.get(&(b, s)) {
                    let lits: Vec<E> = es
                        .cond
                        .iter()
                        .filter(|c| !has(&input.cond, c))
                        .cloned()
                        .collect();
                    exits.push(lits.into_iter().fold(konst(1), and));
                    outs.push((b, s, es.clone()));
                }
            }
        }
        let info = &mut self.loops[l.index()];
        info.exits = exits;
        info.unresolved = if outs.is_empty() {
            Some(Reason::LoopExit)
        } else {
            None
        };
        let last = sub(Arc::new(Expr::Trip(l)), konst(1));
        let single = outs.len() == 1;
        for (b, s, es) in outs {
            let mut env = es.env;
            for &r in &defined {
                env[r as usize] = subst(&env[r as usize], Var::Iter(l), &last);
            }
            let mut cond = input.cond.clone();
            if !single {
                cond.push(unknown(Reason::LoopExit));
            }
            self.edges.insert((b, s), State { env, cond });
        }
    }

    fn exec_block(&mut self, b: BlockId, mut st: State) {
        let block = &self.cfg.blocks[b.index()];
        let range = block.insts.start.index()..block.insts.end.index();
        let mut branch: Option<(E, Option<BlockId>)> = None;
        for i in range {
            let inst = &self.f.insts[i];
            let guard = inst.guard.map(|g| {
                let p = ext(st.env[g.reg.index()].clone(), 1, false);
                if g.negated {
                    not(p)
                } else {
                    p
                }
            });
            match inst.op {
                Opcode::Bra => {
                    let target = inst.operands.iter().find_map(|o| match o {
                        Operand::Label(l) => self
                            .f
                            .labels
                            .get(l.index())
                            .and_then(|li| self.cfg.block_of(li.target)),
                        _ => None,
                    });
                    branch = Some((guard.unwrap_or_else(|| konst(1)), target));
                    continue;
                }
                Opcode::Ret | Opcode::Exit | Opcode::Trap => {
                    branch = Some((guard.unwrap_or_else(|| konst(1)), None));
                    continue;
                }
                _ => {}
            }
            if self.recording && is_global_load(inst) {
                self.record_load(InstId::new(i), inst, &st, guard.clone());
            }
            self.transfer(inst, &mut st, guard);
        }
        let succs = &block.succs;
        match branch {
            Some((g, target)) => {
                for &s in succs {
                    let taken = Some(s) == target;
                    let falls =
                        self.cfg.blocks.get(b.index() + 1).is_some() && s.index() == b.index() + 1;
                    let lit = match (taken, falls) {
                        (true, true) => konst(1),
                        (true, false) => g.clone(),
                        (false, _) => not(g.clone()),
                    };
                    self.push_edge(b, s, &st, lit);
                }
            }
            None => {
                for &s in succs {
                    self.push_edge(b, s, &st, konst(1));
                }
            }
        }
    }

    fn push_edge(&mut self, b: BlockId, s: BlockId, st: &State, lit: E) {
        if lit.as_const() == Some(0) {
            return;
        }
        let mut cond = st.cond.clone();
        if lit.as_const().is_none() && !has(&cond, &lit) {
            cond.push(lit);
        }
        self.edges.insert(
            (b, s),
            State {
                env: st.env.clone(),
                cond,
            },
        );
    }

    fn record_load(&mut self, id: InstId, inst: &Inst, st: &State, guard: Option<E>) {
        let Some(Operand::Address(a)) = inst.operands.get(1) else {
            return;
        };
        let base = match a.base {
            AddrBase::Reg(r) => st.env[r.index()].clone(),
            AddrBase::Imm(v) => konst(i128::from(v)),
            AddrBase::Symbol(Symbol::Global(k)) => self.module_var(k),
            AddrBase::Symbol(_) => unknown(Reason::Unsupported(
                "load from a module-scope variable".into(),
            )),
        };
        let addr = add(base, konst(i128::from(a.offset)));
        let mut cond = st.cond.clone();
        if let Some(g) = guard {
            if g.as_const() == Some(0) {
                return;
            }
            if g.as_const().is_none() {
                cond.push(g);
            }
        }
        let ty = inst.mods.types.first().copied().unwrap_or(ScalarType::B32);
        let width = ty.size() * inst.mods.vec.map_or(1, |v| v.lanes());
        let b = self.cfg.block_of(id).unwrap_or(BlockId(0));
        let site = LoadSite {
            inst: id,
            line: self.f.span(id).map_or(0, |s| s.line),
            width,
            addr,
            cond,
            may_cond: Vec::new(),
            loops: self.forest.nest(b),
            global_space: inst.mods.space == Some(StateSpace::Global),
        };
        self.loads.insert(id, site);
    }

    fn operand(&self, o: &Operand, st: &State) -> E {
        match o {
            Operand::Reg(r) => st.env[r.index()].clone(),
            Operand::PredNeg(r) => not(ext(st.env[r.index()].clone(), 1, false)),
            Operand::Imm(Immediate::Int(v)) => konst(i128::from(*v)),
            Operand::Imm(Immediate::UInt(v)) => konst(i128::from(*v)),
            // Floating-point values are carried as their IEEE bits (f32 in the low 32).
            Operand::Imm(Immediate::F32(b)) => konst(i128::from(*b)),
            Operand::Imm(Immediate::F64(b)) => konst(i128::from(*b)),
            Operand::Special(s) => self.special(*s),
            Operand::Symbol(Symbol::Global(k)) => self.module_var(*k),
            _ => unknown(Reason::Unsupported("operand kind".into())),
        }
    }

    /// The address of module `.global` / `.const` variable `k` (its own data structure).
    fn module_var(&self, k: u32) -> E {
        match self.launch.module_var_base(k) {
            Some(b) => konst(i128::from(b)),
            None => unknown(Reason::Unsupported(format!(
                "address of module variable #{k} (not .global/.const, or the launch was bound \
                 without its module)"
            ))),
        }
    }

    fn special(&self, s: SpecialReg) -> E {
        let d = |d: ptx_parser::Dim| match d {
            ptx_parser::Dim::X => 0u8,
            ptx_parser::Dim::Y => 1,
            ptx_parser::Dim::Z => 2,
        };
        let dim3 = |v: launch::Dim3, k: u8| {
            i128::from(match k {
                0 => v.x,
                1 => v.y,
                _ => v.z,
            })
        };
        match s {
            SpecialReg::Tid(x) => var(Var::Tid(d(x))),
            SpecialReg::Ctaid(x) => var(Var::Ctaid(d(x))),
            SpecialReg::Ntid(x) => konst(dim3(self.launch.block, d(x))),
            SpecialReg::Nctaid(x) => konst(dim3(self.launch.grid, d(x))),
            SpecialReg::WarpSz => konst(32),
            SpecialReg::Laneid => {
                let bx = dim3(self.launch.block, 0);
                let by = dim3(self.launch.block, 1);
                let lin = add(
                    var(Var::Tid(0)),
                    add(
                        mul(var(Var::Tid(1)), konst(bx)),
                        mul(var(Var::Tid(2)), konst(bx * by)),
                    ),
                );
                op(IntOp::Rem, lin, konst(32))
            }
            other => unknown(Reason::Hardware(format!("{other:?}"))),
        }
    }

    fn param_value(&self, a: &ptx_parser::Address, offset: i64, bits: u8) -> E {
        let AddrBase::Symbol(Symbol::Param(i)) = a.base else {
            return unknown(Reason::Unsupported(
                "ld.param from a register address".into(),
            ));
        };
        let value = self.launch.params.get(i as usize).map(|p| &p.value);
        // A parameter left open: unknown at every offset ([`crate::open`] refuses the
        // loads that depend on it).
        if let Some(BoundValue::Open) = value {
            return unknown(Reason::OpenParam(i));
        }
        // A field of a by-value struct: its little-endian bytes at the offset.
        if let Some(BoundValue::Bytes { bytes, .. }) = value {
            let n = usize::from(bits / 8);
            let at = usize::try_from(offset).ok();
            return match at.and_then(|o| bytes.get(o..o.checked_add(n)?)) {
                Some(b) => {
                    let mut le = [0u8; 8];
                    le[..n.min(8)].copy_from_slice(&b[..n.min(8)]);
                    konst(ext_value(i128::from(u64::from_le_bytes(le)), bits, false))
                }
                None => unknown(Reason::Undefined),
            };
        }
        if offset != 0 {
            return unknown(Reason::Unsupported(
                "ld.param at an offset into a scalar parameter".into(),
            ));
        }
        match value {
            Some(BoundValue::Scalar { bits: v }) => konst(ext_value(i128::from(*v), bits, false)),
            Some(BoundValue::Buffer { base, .. }) | Some(BoundValue::Synthetic { base }) => {
                konst(i128::from(*base))
            }
            Some(BoundValue::Bytes { .. } | BoundValue::Open) | None => unknown(Reason::Undefined),
        }
    }

    fn transfer(&self, inst: &Inst, st: &mut State, guard: Option<E>) {
        let ty = inst.mods.types.first().copied();
        let bits = ty.map_or(32, |t| (t.size() * 8) as u8);
        let signed = matches!(
            ty,
            Some(ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64)
        );
        let is_float = matches!(
            ty,
            Some(
                ScalarType::F16
                    | ScalarType::F32
                    | ScalarType::F64
                    | ScalarType::Bf16
                    | ScalarType::F16x2
            )
        );
        let is_pred = ty == Some(ScalarType::Pred);
        let src = |k: usize| {
            inst.operands
                .get(k)
                .map_or_else(|| unknown(Reason::Undefined), |o| self.operand(o, st))
        };
        let x = |k: usize| ext(src(k), bits, signed);
        let xu = |k: usize| ext(src(k), bits, false);
        let unsupported = || unknown(Reason::Unsupported(format!("{}{}", inst.op, inst.mods)));
        let value: E = match inst.op {
            _ if is_float
                && !matches!(
                    inst.op,
                    Opcode::Ld | Opcode::Ldu | Opcode::Setp | Opcode::Cvt
                ) =>
            {
                let srcs: Vec<Option<i128>> = (1..inst.operands.len())
                    .map(|k| src(k).as_const())
                    .collect();
                if matches!(inst.op, Opcode::Mov) {
                    src(1)
                } else if matches!(inst.op, Opcode::Selp) {
                    select(ext(src(3), 1, false), src(1), src(2))
                } else {
                    crate::float::fold(&inst.op, &inst.mods, ty, &srcs)
                        .map_or_else(|| unknown(Reason::Float), konst)
                }
            }
            Opcode::Mov => match inst.operands.get(1) {
                Some(Operand::Symbol(Symbol::Global(_))) => src(1),
                Some(Operand::Symbol(_)) | Some(Operand::Vector(_)) => unsupported(),
                _ => src(1),
            },
            Opcode::Cvta => src(1),
            Opcode::Add if !inst.mods.cc => add(src(1), src(2)),
            Opcode::Sub if !inst.mods.cc => sub(src(1), src(2)),
            Opcode::Mul | Opcode::Mad => {
                let prod = match inst.mods.mul {
                    Some(ptx_parser::MulMode::Wide) => mul(x(1), x(2)),
                    Some(ptx_parser::MulMode::Hi) => op(IntOp::MulHi(bits), x(1), x(2)),
                    _ => mul(src(1), src(2)),
                };
                if inst.op == Opcode::Mad {
                    if inst.mods.mul == Some(ptx_parser::MulMode::Hi) || inst.mods.cc {
                        unsupported()
                    } else {
                        add(prod, src(3))
                    }
                } else {
                    prod
                }
            }
            Opcode::Mul24 | Opcode::Mad24 if inst.mods.mul != Some(ptx_parser::MulMode::Hi) => {
                let prod = mul(ext(src(1), 24, signed), ext(src(2), 24, signed));
                if inst.op == Opcode::Mad24 {
                    add(prod, src(3))
                } else {
                    prod
                }
            }
            Opcode::Neg => sub(konst(0), src(1)),
            Opcode::Abs => {
                let v = x(1);
                select(
                    cmp(Rel::Lt, v.clone(), konst(0)),
                    sub(konst(0), v.clone()),
                    v,
                )
            }
            Opcode::Shl => match src(2).as_const() {
                Some(c) if (0..i128::from(bits)).contains(&c) => mul(src(1), konst(1i128 << c)),
                Some(_) => konst(0),
                None => op(IntOp::Shl(bits), xu(1), ext(src(2), 32, false)),
            },
            Opcode::Shr => op(IntOp::Shr, x(1), ext(src(2), 32, false)),
            Opcode::And | Opcode::Or | Opcode::Xor if is_pred => {
                let (a, b) = (ext(src(1), 1, false), ext(src(2), 1, false));
                match inst.op {
                    Opcode::And => and(a, b),
                    Opcode::Or => or(a, b),
                    _ => cmp(Rel::Ne, a, b),
                }
            }
            Opcode::And => op(IntOp::BitAnd, xu(1), xu(2)),
            Opcode::Or => op(IntOp::BitOr, xu(1), xu(2)),
            Opcode::Xor => op(IntOp::BitXor, xu(1), xu(2)),
            Opcode::Not if is_pred => not(ext(src(1), 1, false)),
            Opcode::Not => sub(sub(konst(0), src(1)), konst(1)),
            Opcode::Min => op(IntOp::Min, x(1), x(2)),
            Opcode::Max => op(IntOp::Max, x(1), x(2)),
            Opcode::Div => op(IntOp::Div, x(1), x(2)),
            Opcode::Rem => op(IntOp::Rem, x(1), x(2)),
            Opcode::Selp => select(ext(src(3), 1, false), src(1), src(2)),
            Opcode::Setp => return self.setp(inst, st, guard, bits, signed, is_float),
            Opcode::Cvt => {
                let dst = inst.mods.types.first().copied();
                let srct = inst.mods.types.get(1).copied();
                match (dst, srct) {
                    (Some(d), Some(s)) if is_int(d) && is_int(s) => ext(
                        src(1),
                        (s.size() * 8) as u8,
                        matches!(
                            s,
                            ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
                        ),
                    ),
                    (Some(d), Some(s)) => crate::float::cvt(d, s, &inst.mods, src(1).as_const())
                        .map_or_else(|| unknown(Reason::Float), konst),
                    _ => unknown(Reason::Float),
                }
            }
            Opcode::Ld if inst.mods.space.is_some_and(|s| s.is_param()) => {
                match (inst.operands.first(), inst.operands.get(1)) {
                    // `ld.param.v2.u32 {%r1, %r2}, [p+16]`: lane i reads offset + i * size.
                    (Some(Operand::Vector(rs)), Some(Operand::Address(a))) => {
                        let step = i64::from(bits / 8);
                        for (i, o) in rs.iter().enumerate() {
                            if let Operand::Reg(r) = o {
                                let v = self.param_value(a, a.offset + i as i64 * step, bits);
                                set_reg(st, r.index(), v, guard.clone());
                            }
                        }
                        return;
                    }
                    (_, Some(Operand::Address(a))) => self.param_value(a, a.offset, bits),
                    _ => unsupported(),
                }
            }
            Opcode::Ld | Opcode::Ldu | Opcode::Atom => unknown(Reason::DataDependent),
            _ => unsupported(),
        };
        assign(inst, st, 0, value, guard);
    }

    fn setp(
        &self,
        inst: &Inst,
        st: &mut State,
        guard: Option<E>,
        bits: u8,
        signed: bool,
        is_float: bool,
    ) {
        let (rel, uns) = match inst.mods.cmp {
            Some(CmpOp::Eq) => (Some(Rel::Eq), false),
            Some(CmpOp::Ne) => (Some(Rel::Ne), false),
            Some(CmpOp::Lt) => (Some(Rel::Lt), false),
            Some(CmpOp::Le) => (Some(Rel::Le), false),
            Some(CmpOp::Gt) => (Some(Rel::Gt), false),
            Some(CmpOp::Ge) => (Some(Rel::Ge), false),
            Some(CmpOp::Lo) => (Some(Rel::Lt), true),
            Some(CmpOp::Ls) => (Some(Rel::Le), true),
            Some(CmpOp::Hi) => (Some(Rel::Gt), true),
            Some(CmpOp::Hs) => (Some(Rel::Ge), true),
            _ => (None, false),
        };
        let c = match rel {
            Some(r) if !is_float => {
                let sg = signed && !uns;
                let a = ext(self.operand(&inst.operands[1], st), bits, sg);
                let b = ext(
                    inst.operands
                        .get(2)
                        .map_or_else(|| unknown(Reason::Undefined), |o| self.operand(o, st)),
                    bits,
                    sg,
                );
                cmp(r, a, b)
            }
            _ if is_float => {
                let a = self.operand(&inst.operands[1], st).as_const();
                let b = inst
                    .operands
                    .get(2)
                    .and_then(|o| self.operand(o, st).as_const());
                match (inst.mods.cmp, ty_of(inst), a, b) {
                    (Some(c), Some(t), Some(a), Some(b)) => crate::float::compare(c, t, a, b)
                        .map_or_else(|| unknown(Reason::Float), |v| konst(i128::from(v))),
                    _ => unknown(Reason::Float),
                }
            }
            _ => unknown(Reason::Unsupported(format!("setp{}", inst.mods))),
        };
        let combine = |v: E| -> E {
            match (inst.mods.bool_op, inst.operands.get(3)) {
                (Some(bop), Some(o)) => {
                    let q = ext(self.operand(o, st), 1, false);
                    match bop {
                        ptx_parser::BoolOp::And => and(v, q),
                        ptx_parser::BoolOp::Or => or(v, q),
                        ptx_parser::BoolOp::Xor => cmp(Rel::Ne, v, q),
                    }
                }
                _ => v,
            }
        };
        match inst.operands.first() {
            Some(Operand::PredPair(p, q)) => {
                let (p, q) = (*p, *q);
                let vp = combine(c.clone());
                let vq = combine(not(c));
                set_reg(st, p.index(), vp, guard.clone());
                set_reg(st, q.index(), vq, guard);
            }
            _ => {
                let v = combine(c);
                assign(inst, st, 0, v, guard);
            }
        }
    }
}

fn ty_of(inst: &Inst) -> Option<ScalarType> {
    inst.mods.types.first().copied()
}

fn is_int(t: ScalarType) -> bool {
    use ScalarType::*;
    matches!(
        t,
        B8 | B16 | B32 | B64 | U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64
    )
}

fn set_reg(st: &mut State, r: usize, v: E, guard: Option<E>) {
    let Some(slot) = st.env.get_mut(r) else {
        return;
    };
    *slot = match guard {
        Some(g) => select(g, v, slot.clone()),
        None => v,
    };
}

fn assign(inst: &Inst, st: &mut State, k: usize, v: E, guard: Option<E>) {
    match inst.operands.get(k) {
        Some(Operand::Reg(r)) => set_reg(st, r.index(), v, guard),
        Some(Operand::Vector(rs)) => {
            for o in rs {
                if let Operand::Reg(r) = o {
                    set_reg(st, r.index(), v.clone(), guard.clone());
                }
            }
        }
        _ => {}
    }
}

/// Merges the states reaching a join: conditions or-ed, values equal or selected.
fn merge(ins: &[&State]) -> Option<State> {
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
fn has(c: &[E], x: &E) -> bool {
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

use std::sync::Arc;
