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
//!
//! The walk over the CFG is here; what one instruction does to the state is in `transfer`,
//! how the states reaching a join merge is in `join`.

use std::collections::HashMap;
use std::sync::Arc;

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

mod join;
mod transfer;

use join::{has, merge};

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
        stores: HashMap::new(),
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
        stores: x.stores,
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
    /// The value each reached `st.param` / generic / local store writes.
    stores: HashMap<InstId, E>,
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
            // What a store into a device-side launch's arguments or parameter buffer writes
            // (`crate::child_launch`); global and shared stores are not needed.
            if self.recording
                && inst.op == Opcode::St
                && !matches!(
                    inst.mods.space,
                    Some(StateSpace::Global | StateSpace::Shared)
                )
                && guard.as_ref().and_then(|g| g.as_const()) != Some(0)
            {
                if let Some(o) = inst.operands.get(1) {
                    let v = self.operand(o, &st);
                    self.stores.insert(InstId::new(i), v);
                }
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
}
