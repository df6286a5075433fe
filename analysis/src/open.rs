//! Parameters left open: by-value parameters the launch gives no value
//! ([`launch::BoundValue::Open`], bound by [`launch::Launch::bind_open`]). The static
//! analysis needs a parameter's value only where the loads it analyses depend on it (issue
//! 37, "values only where they matter"): lavaMD's `par_str` carries `alpha`, a double used
//! in arithmetic only, and no address, guard or loop bound reads it.
//!
//! Leaving a value open must never change a result silently: the analysis with the value
//! left open either equals the analysis with any value given, or fails naming the
//! parameter and the load that needs it. Two independent checks make sure of it, and
//! [`check`] fails when either finds a dependence:
//!
//! 1. **Dependence in the program** (the primary check). A forward, flow-insensitive
//!    dataflow over the kernel's registers marks every register whose value may depend on
//!    an open parameter: read from it by `ld.param` (or through its address), computed from
//!    a marked register, written under a marked guard predicate, or written in a block whose
//!    execution a marked branch decides (control dependence: the blocks reachable from the
//!    branch before its immediate post-dominator, so loop bodies under a marked exit test
//!    and everything after a marked early exit). A global load the analysis reaches
//!    depends on the parameter when its address register, its guard predicate or the
//!    branches it lies under (loop bounds included) are marked. Values loaded from memory
//!    are not marked by their address or contents: the symbolic model takes every loaded
//!    value as unknown whatever the parameters, so the model cannot tell them apart.
//! 2. **Dependence in the model** (catches what the symbolic execution does beyond the
//!    program's dependences). The open value enters the symbolic execution as an unknown of
//!    its own ([`Reason::OpenParam`]); where such an unknown survives into a load's address,
//!    guard or the exit conditions of the loops its nest or address use (a condition
//!    or-ed at a join without folding away, say), the load depends on it too.
//!
//! Why not only the second: the expression domain turns unknowns into others (a
//! floating-point operation on an open value is [`Reason::Float`], a join it cannot
//! select is [`Reason::PathDependent`], a non-affine recurrence [`Reason::LoopCarried`]),
//! and those would silently make a load unresolved or a guard "floating-point" where a
//! value would have folded. Why not only the first: a branch the launch's values would have
//! folded away is explored both ways with an open value, and the conditions merged at the
//! join need not fold back.

use launch::{BoundLaunch, BoundValue, SigType};
use ptx_parser::{AddrBase, BlockId, Cfg, Function, Opcode, Operand, Symbol};

use crate::addr::KernelModel;
use crate::expr::{Expr, Reason, E};
use crate::loops::LoopId;

/// A parameter left open that an analysed load needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeedsValue {
    /// The parameter's index.
    pub index: usize,
    /// Its PTX name.
    pub name: String,
    /// How to give it (`--param` for a scalar, the launch file's `fields` for a struct).
    pub how: String,
    /// What depends on it, naming the load's PTX line.
    pub why: String,
}

/// Checks that no global load of `model` depends on a parameter `launch` leaves open; the
/// first one found (in load order) is the error. Free when nothing is open.
pub fn check(f: &Function, model: &KernelModel, launch: &BoundLaunch) -> Result<(), NeedsValue> {
    let open = launch.open_params();
    if open.is_empty() {
        return Ok(());
    }
    let taint = Taint::compute(f, launch, &open);
    let need = |bits: u64, why: String| -> NeedsValue {
        let index = open[bits.trailing_zeros().min(open.len() as u32 - 1) as usize];
        let p = &launch.params[index];
        let how = match p.ty {
            SigType::Bytes { .. } => format!(
                "give its fields in the launch file (\"index\": {index}, \"fields\": [...])"
            ),
            _ => format!("give it with --param {index}=VALUE"),
        };
        NeedsValue {
            index,
            name: p.name.clone(),
            how,
            why,
        }
    };
    for l in &model.loads {
        let inst = &f.insts[l.inst.index()];
        let line = l.line;
        if let Some(Operand::Address(a)) = inst.operands.get(1) {
            let bits = match a.base {
                AddrBase::Reg(r) => taint.regs[r.index()],
                _ => 0,
            };
            if bits != 0 {
                return Err(need(
                    bits,
                    format!("the address of the load at PTX line {line} depends on it"),
                ));
            }
        }
        if let Some(g) = inst.guard {
            let bits = taint.regs[g.reg.index()];
            if bits != 0 {
                return Err(need(
                    bits,
                    format!("the guard predicate of the load at PTX line {line} depends on it"),
                ));
            }
        }
        let bits = taint
            .cfg
            .block_of
            .get(l.inst.index())
            .map_or(0, |b| taint.blocks[b.index()]);
        if bits != 0 {
            return Err(need(
                bits,
                format!(
                    "a branch or loop bound that decides whether (or how often) the load at \
                     PTX line {line} runs depends on it"
                ),
            ));
        }
        if let Some(i) = model_dependence(model, l) {
            let pos = open.iter().position(|&p| p == i as usize).unwrap_or(0);
            return Err(need(
                1 << pos.min(63),
                format!(
                    "the analysis's address, guard or loop bounds of the load at PTX line \
                     {line} depend on it"
                ),
            ));
        }
    }
    Ok(())
}

/// The open parameter (by index) whose unknown survives in load `l`'s address, guard or the
/// exits of the loops it lies in or whose trip counts its expressions use.
fn model_dependence(model: &KernelModel, l: &crate::addr::LoadSite) -> Option<u32> {
    let mut found = None;
    let mut loops: Vec<LoopId> = l.loops.clone();
    let visit = |e: &E, loops: &mut Vec<LoopId>, found: &mut Option<u32>| {
        e.visit_leaves(&mut |x| match x {
            Expr::Trip(lp) | Expr::Var(crate::expr::Var::Iter(lp)) if !loops.contains(lp) => {
                loops.push(*lp)
            }
            _ => {}
        });
        e.visit_unknowns(&mut |r| {
            if let Reason::OpenParam(p) = r {
                *found = found.or(Some(*p));
            }
        });
    };
    for e in std::iter::once(&l.addr).chain(&l.cond).chain(&l.may_cond) {
        visit(e, &mut loops, &mut found);
    }
    // The loops' exits, the loops those use and the enclosing ones (their trip counts
    // bound the inner ones'), until no new loop turns up.
    let mut k = 0;
    while let Some(&lp) = loops.get(k) {
        k += 1;
        let Some(info) = model.loops.get(lp.index()) else {
            continue;
        };
        if let Some(Reason::OpenParam(p)) = &info.unresolved {
            found = found.or(Some(*p));
        }
        for e in &info.exits {
            visit(e, &mut loops, &mut found);
        }
        if let Some(parent) = info.parent.filter(|p| !loops.contains(p)) {
            loops.push(parent);
        }
    }
    found
}

/// Per register and per block, the open parameters (bit `k` for the `k`-th open one; the
/// 64th and later share bit 63) the value or the execution may depend on.
struct Taint {
    cfg: Cfg,
    regs: Vec<u64>,
    blocks: Vec<u64>,
}

impl Taint {
    fn compute(f: &Function, launch: &BoundLaunch, open: &[usize]) -> Taint {
        let cfg = Cfg::compute(f);
        let bit_of = |param: u32| -> u64 {
            open.iter()
                .position(|&p| p == param as usize)
                .map_or(0, |k| 1u64 << k.min(63))
        };
        let all: u64 = (0..open.len())
            .map(|k| 1u64 << k.min(63))
            .fold(0, |a, b| a | b);
        let is_open = |param: u32| {
            launch
                .params
                .get(param as usize)
                .is_some_and(|p| p.value == BoundValue::Open)
        };
        let nb = cfg.blocks.len();
        let pdom = post_dominators(&cfg);
        let mut t = Taint {
            regs: vec![0; f.regs.len()],
            blocks: vec![0; nb],
            cfg,
        };
        // Bits an operand reads (registers, and open parameters by address).
        let read = |o: &Operand, regs: &[u64]| -> u64 {
            let mut bits = 0;
            visit_regs(o, &mut |r| bits |= regs.get(r).copied().unwrap_or(0));
            bits | symbols(o, &|p| if is_open(p) { bit_of(p) } else { 0 })
        };
        loop {
            let mut changed = false;
            for b in 0..nb {
                let ctl = t.blocks[b];
                let range = t.cfg.blocks[b].insts.clone();
                for i in range.start.index()..range.end.index() {
                    let inst = &f.insts[i];
                    let guard = inst.guard.map_or(0, |g| t.regs[g.reg.index()]);
                    let srcs: u64 = match inst.op {
                        // `ld.param`: the parameter's value (through a register: any open
                        // one).
                        Opcode::Ld if inst.mods.space.is_some_and(|s| s.is_param()) => {
                            match inst.operands.get(1) {
                                Some(Operand::Address(a)) => match a.base {
                                    AddrBase::Symbol(Symbol::Param(p)) if is_open(p) => bit_of(p),
                                    AddrBase::Symbol(_) | AddrBase::Imm(_) => 0,
                                    AddrBase::Reg(_) => all,
                                },
                                _ => all,
                            }
                        }
                        // Other loads and atomics: the model takes the value as unknown
                        // whatever the parameters.
                        Opcode::Ld | Opcode::Ldu | Opcode::Atom => 0,
                        _ => inst
                            .operands
                            .iter()
                            .skip(1)
                            .fold(0, |acc, o| acc | read(o, &t.regs)),
                    };
                    let v = srcs | guard | ctl;
                    if v != 0 {
                        if let Some(d) = inst.operands.first() {
                            visit_dests(d, &mut |r| {
                                if let Some(x) = t.regs.get_mut(r) {
                                    if *x | v != *x {
                                        *x |= v;
                                        changed = true;
                                    }
                                }
                            });
                        }
                    }
                }
                // A branch on a marked value marks the blocks it decides.
                let Some(last) = range.end.index().checked_sub(1).map(|i| &f.insts[i]) else {
                    continue;
                };
                let decides = match last.op {
                    Opcode::Bra | Opcode::Ret | Opcode::Exit | Opcode::Trap => {
                        last.guard.map_or(0, |g| t.regs[g.reg.index()])
                    }
                    Opcode::BrxIdx => {
                        last.guard.map_or(0, |g| t.regs[g.reg.index()])
                            | last
                                .operands
                                .iter()
                                .fold(0, |acc, o| acc | read(o, &t.regs))
                    }
                    _ => 0,
                };
                if decides == 0 {
                    continue;
                }
                for x in region(&t.cfg, &pdom, BlockId::new(b)) {
                    let m = &mut t.blocks[x.index()];
                    if *m | decides != *m {
                        *m |= decides;
                        changed = true;
                    }
                }
            }
            if !changed {
                return t;
            }
        }
    }
}

/// The blocks a conditional branch at the end of `b` decides: those reachable from its
/// successors without passing a block that post-dominates `b`.
fn region(cfg: &Cfg, pdom: &[Vec<u64>], b: BlockId) -> Vec<BlockId> {
    let strictly_pdom = |x: usize| x != b.index() && pdom[b.index()][x / 64] >> (x % 64) & 1 == 1;
    let mut seen = vec![false; cfg.blocks.len()];
    let mut stack: Vec<usize> = cfg.blocks[b.index()]
        .succs
        .iter()
        .map(|s| s.index())
        .collect();
    let mut out = Vec::new();
    while let Some(x) = stack.pop() {
        if seen[x] || strictly_pdom(x) {
            continue;
        }
        seen[x] = true;
        out.push(BlockId::new(x));
        stack.extend(cfg.blocks[x].succs.iter().map(|s| s.index()));
    }
    out
}

/// Per block, the set (a bit set over blocks) of blocks that post-dominate it. Blocks
/// from which no exit can be reached count as exits themselves (post-dominated by nothing
/// else), so branches in an endless loop decide everything they reach.
fn post_dominators(cfg: &Cfg) -> Vec<Vec<u64>> {
    let n = cfg.blocks.len();
    let words = n.div_ceil(64);
    // Blocks that reach an exit (a block without successors).
    let mut reaches = vec![false; n];
    let mut stack: Vec<usize> = (0..n).filter(|&b| cfg.blocks[b].succs.is_empty()).collect();
    while let Some(b) = stack.pop() {
        if reaches[b] {
            continue;
        }
        reaches[b] = true;
        stack.extend(cfg.preds[b].iter().map(|p| p.index()));
    }
    let only = |b: usize| {
        let mut v = vec![0u64; words];
        v[b / 64] |= 1 << (b % 64);
        v
    };
    let mut pdom: Vec<Vec<u64>> = (0..n)
        .map(|b| {
            if cfg.blocks[b].succs.is_empty() || !reaches[b] {
                only(b)
            } else {
                vec![u64::MAX; words]
            }
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            if cfg.blocks[b].succs.is_empty() || !reaches[b] {
                continue;
            }
            let mut v = vec![u64::MAX; words];
            for s in cfg.blocks[b].succs.iter().filter(|s| reaches[s.index()]) {
                for (w, x) in v.iter_mut().zip(&pdom[s.index()]) {
                    *w &= x;
                }
            }
            v[b / 64] |= 1 << (b % 64);
            if v != pdom[b] {
                pdom[b] = v;
                changed = true;
            }
        }
    }
    pdom
}

/// Calls `f` on every register an operand reads.
fn visit_regs(o: &Operand, f: &mut dyn FnMut(usize)) {
    match o {
        Operand::Reg(r) | Operand::PredNeg(r) => f(r.index()),
        Operand::PredPair(p, q) => {
            f(p.index());
            f(q.index());
        }
        Operand::Address(a) => {
            if let AddrBase::Reg(r) = a.base {
                f(r.index());
            }
        }
        Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => {
            for x in v {
                visit_regs(x, f);
            }
        }
        _ => {}
    }
}

/// Calls `f` on every register a destination operand writes.
fn visit_dests(o: &Operand, f: &mut dyn FnMut(usize)) {
    match o {
        Operand::Reg(r) => f(r.index()),
        Operand::PredPair(p, q) => {
            f(p.index());
            f(q.index());
        }
        Operand::Vector(v) | Operand::List(v) => {
            for x in v {
                visit_dests(x, f);
            }
        }
        _ => {}
    }
}

/// The bits of the parameters an operand names (their addresses: `mov.u64 %rd, p`).
fn symbols(o: &Operand, bit: &dyn Fn(u32) -> u64) -> u64 {
    match o {
        Operand::Symbol(Symbol::Param(p)) => bit(*p),
        Operand::Address(a) => match a.base {
            AddrBase::Symbol(Symbol::Param(p)) => bit(p),
            _ => 0,
        },
        Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => {
            v.iter().fold(0, |acc, x| acc | symbols(x, bit))
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks: 0 entry (`@%p1 bra $E`), 1 a diamond side (`@%p2 bra $J`), 2 the other side,
    /// 3 `$J` (a loop header and latch), 4 after the loop, 5 `$E` (`ret`).
    const SRC: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u32 n)\n{\n.reg .pred %p<4>;\n.reg .b32 %r<4>;\n\
        ld.param.u32 %r1, [n];\nsetp.lt.s32 %p1, %r1, 0;\n@%p1 bra $E;\n\
        setp.lt.s32 %p2, %r1, 5;\n@%p2 bra $J;\nadd.s32 %r1, %r1, 1;\n\
        $J:\nadd.s32 %r2, %r2, 1;\nsetp.lt.s32 %p3, %r2, %r1;\n@%p3 bra $J;\n\
        add.s32 %r3, %r2, 1;\n$E:\nret;\n}\n";

    #[test]
    fn branches_decide_the_blocks_before_their_post_dominator() {
        let m = ptx_parser::parse(SRC).unwrap();
        let cfg = Cfg::compute(m.kernel("k").unwrap());
        assert_eq!(cfg.blocks.len(), 6);
        let pdom = post_dominators(&cfg);
        let sorted = |mut v: Vec<BlockId>| {
            v.sort();
            v.iter().map(|b| b.index()).collect::<Vec<_>>()
        };
        // The early exit decides everything up to the `ret` block.
        assert_eq!(sorted(region(&cfg, &pdom, BlockId(0))), [1, 2, 3, 4]);
        // The diamond joins at the loop header: only its other side.
        assert_eq!(sorted(region(&cfg, &pdom, BlockId(1))), [2]);
        // The loop's exit test decides the loop (its header again).
        assert_eq!(sorted(region(&cfg, &pdom, BlockId(3))), [3]);
    }
}
