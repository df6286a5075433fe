//! Registers per thread estimated from the PTX when no `ptxas` report is at hand: register
//! allocation over live ranges, never the PTX's declared virtual registers (compilers declare
//! one virtual register per SSA value: NVRTC's naive GEMM declares 130, ptxas allocates 32).
//!
//! 1. **Operands.** Each instruction's definitions (the first operand of every instruction
//!    that has a destination: a register, a `{..}` vector, a `%r|%p` pair) and uses. Sizes in
//!    32-bit units: 64-bit values take two registers, 128-bit four, anything narrower one;
//!    predicates live in their own register file and count for nothing.
//! 2. **Constants.** Values the SASS reads from the constant bank instead of a register
//!    (kernel parameters loaded with `ld.param`, `%ntid`, `%nctaid`, immediates, and moves or
//!    `cvta.to.global` of those) occupy no register across their live range; one used as an
//!    address is materialised just before the access, so it counts at that instruction only.
//! 3. **Liveness** on the CFG ([`ptx_parser::Cfg`]): backward data flow to a fixed point. A
//!    guarded definition (`@%p mov ...`) does not end the live range of the value it may leave
//!    unchanged.
//! 4. **Pressure** in PTX order: at every instruction, the units of the values live after it
//!    plus its definitions (a dead result still needs a register at that point).
//! 5. **Scheduled pressure.** `ptxas` issues loads as early as it can to hide their latency:
//!    the same walk with every load's result live from the earliest point of its basic block
//!    where its address is available (after the definitions of its address registers, the
//!    last barrier and, for loads that may alias, the last store).
//! 6. **Budget.** `ptxas` hoists loads only while the kernel keeps full occupancy: the
//!    estimate is the PTX-order pressure, raised to the scheduled pressure but not beyond
//!    [`SCHEDULE_BUDGET`] registers.
//! 7. **Reserved.** Plus [`RESERVED_REGISTERS`], and at least [`MIN_REGISTERS`], as `ptxas`
//!    reports (both measured with ptxas 12.9 on synthetic kernels, see the crate README).
//! 8. **IEEE slow paths.** At least, at every `div.rn.f32` / `rcp.rn.f32`, the units live
//!    across it plus the registers of the slow-path subroutine ptxas calls there
//!    ([`slow_path_registers`], fitted on synthetic kernels, see the crate README).
//!
//! The corpus error of this estimate, kernel by kernel and GPU by GPU, is in the crate's
//! README; `tests/corpus.rs` holds it to the acceptance.

use ptx_parser::{
    AddrBase, Cfg, Function, Inst, InstId, Module, Opcode, Operand, RegId, Rounding, ScalarType,
    SpecialReg, StateSpace, Symbol,
};
use serde::{Deserialize, Serialize};

/// Registers the compiler adds to the largest number of simultaneously live 32-bit values
/// (ptxas 12.9 for sm_70 and sm_90: `k` live loaded values plus a 64-bit address are
/// reported as `k + 5` registers for every `k` from 4 to 24).
pub const RESERVED_REGISTERS: u32 = 2;

/// The fewest registers ptxas reports for a kernel that does anything (sm_70, sm_90: a
/// kernel storing one value reports 8).
pub const MIN_REGISTERS: u32 = 8;

/// Registers up to which ptxas lets its scheduler hoist loads: the count at which a kernel
/// still gets a full SM of threads on every architecture ptxas targets today
/// (65,536 registers / 2,048 threads).
pub const SCHEDULE_BUDGET: u32 = 32;

/// [`slow_path_registers`] of `div.rn.f32` (and the other IEEE roundings).
pub const SLOW_PATH_DIV: u32 = 13;

/// [`slow_path_registers`] of `rcp.rn.f32` (and the other IEEE roundings).
pub const SLOW_PATH_RCP: u32 = 12;

/// The estimate and the numbers it is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterEstimate {
    /// Registers per thread, as ptxas would report them.
    pub registers: u32,
    /// Largest number of simultaneously live 32-bit values in PTX order.
    pub pressure: u32,
    /// The same with loads issued as early as their block allows.
    pub scheduled_pressure: u32,
    /// The instruction where PTX-order pressure peaks (`None` for an empty body).
    pub peak_at: Option<InstId>,
}

/// 32-bit register units of a value of type `t` (predicates: none).
fn units(t: ScalarType) -> u32 {
    match t {
        ScalarType::Pred => 0,
        t => t.size().div_ceil(4).max(1),
    }
}

/// Whether `op` writes its first operand.
fn has_dest(op: &Opcode) -> bool {
    !matches!(
        op,
        Opcode::St
            | Opcode::Red
            | Opcode::Bra
            | Opcode::BrxIdx
            | Opcode::Call
            | Opcode::Ret
            | Opcode::Exit
            | Opcode::Trap
            | Opcode::Bar
            | Opcode::Barrier
            | Opcode::BarWarpSync
            | Opcode::Membar
            | Opcode::Fence
            | Opcode::Prefetch
            | Opcode::Prefetchu
            | Opcode::CpAsync
            | Opcode::CpAsyncCommitGroup
            | Opcode::CpAsyncWaitGroup
            | Opcode::CpAsyncWaitAll
            | Opcode::CpAsyncBulk
            | Opcode::Sust
            | Opcode::Stmatrix
            | Opcode::Nanosleep
            | Opcode::Pmevent
            | Opcode::Griddepcontrol
    )
}

/// Registers named by an operand, with whether they form an address.
fn regs_of(o: &Operand, address: bool, out: &mut Vec<(RegId, bool)>) {
    match o {
        Operand::Reg(r) | Operand::PredNeg(r) => out.push((*r, address)),
        Operand::PredPair(a, b) => {
            out.push((*a, address));
            out.push((*b, address));
        }
        Operand::Address(a) => {
            if let AddrBase::Reg(r) = a.base {
                out.push((r, true));
            }
        }
        Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => {
            for x in v {
                regs_of(x, address, out);
            }
        }
        _ => {}
    }
}

/// Definitions and uses of one instruction.
struct Operands {
    defs: Vec<RegId>,
    /// Constants materialised just before this instruction (their definitions sunk here).
    pre_defs: Vec<RegId>,
    /// Used registers, `true` when the use is an address.
    uses: Vec<(RegId, bool)>,
}

fn operands(inst: &Inst) -> Operands {
    let mut defs = Vec::new();
    let mut uses = Vec::new();
    let dest = has_dest(&inst.op);
    for (k, o) in inst.operands.iter().enumerate() {
        if k == 0 && dest && !matches!(o, Operand::Address(_)) {
            let mut d = Vec::new();
            regs_of(o, false, &mut d);
            defs.extend(d.into_iter().map(|x| x.0));
        } else {
            regs_of(o, false, &mut uses);
        }
    }
    if let Some(g) = inst.guard {
        uses.push((g.reg, false));
    }
    Operands {
        defs,
        pre_defs: Vec::new(),
        uses,
    }
}

/// Whether `inst` loads a value from memory that ptxas may issue early.
fn is_load(inst: &Inst) -> bool {
    match inst.op {
        Opcode::Ld | Opcode::Ldu => !inst.mods.space.is_some_and(|s| s.is_param()),
        Opcode::Tex | Opcode::Tld4 | Opcode::Suld | Opcode::Ldmatrix => true,
        _ => false,
    }
}

/// Registers whose every definition is a constant the SASS can read from the constant bank
/// or an immediate field.
fn constants(f: &Function, ops: &[Operands]) -> Vec<bool> {
    let n = f.regs.len();
    let mut defs_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, o) in ops.iter().enumerate() {
        for d in &o.defs {
            if let Some(v) = defs_of.get_mut(d.index()) {
                v.push(i);
            }
        }
    }
    let mut konst: Vec<bool> = defs_of.iter().map(|d| !d.is_empty()).collect();
    // Optimistic fixed point: drop registers with a non-constant definition until stable.
    loop {
        let mut changed = false;
        for r in 0..n {
            if !konst[r] {
                continue;
            }
            let all = defs_of[r].iter().all(|&i| {
                let inst = &f.insts[i];
                if inst.guard.is_some() {
                    return false;
                }
                let src_ok = |o: &Operand| match o {
                    Operand::Imm(_) | Operand::Symbol(_) => true,
                    Operand::Special(SpecialReg::Ntid(_) | SpecialReg::Nctaid(_)) => true,
                    Operand::Reg(x) => konst.get(x.index()).copied().unwrap_or(false),
                    _ => false,
                };
                match inst.op {
                    Opcode::Ld => {
                        inst.mods.space.is_some_and(|s| s.is_param())
                            && matches!(
                                inst.operands.get(1),
                                Some(Operand::Address(a)) if matches!(a.base, AddrBase::Symbol(_))
                            )
                    }
                    Opcode::Mov => inst.operands.get(1).is_some_and(src_ok),
                    Opcode::Cvta => {
                        inst.mods.to
                            && inst.mods.space == Some(StateSpace::Global)
                            && inst.operands.get(1).is_some_and(src_ok)
                    }
                    _ => false,
                }
            });
            if !all {
                konst[r] = false;
                changed = true;
            }
        }
        if !changed {
            return konst;
        }
    }
}

/// 64-bit registers holding shared-memory addresses (a `.shared` symbol's address, plus
/// offsets): the SASS addresses shared memory with 32-bit registers, so they take one.
fn shared_pointers(
    f: &Function,
    module_shared: &dyn Fn(&Operand) -> bool,
    ops: &[Operands],
) -> Vec<bool> {
    let n = f.regs.len();
    let mut defs_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, o) in ops.iter().enumerate() {
        for d in &o.defs {
            if let Some(v) = defs_of.get_mut(d.index()) {
                v.push(i);
            }
        }
    }
    let mut ptr: Vec<bool> = defs_of
        .iter()
        .enumerate()
        .map(|(r, d)| !d.is_empty() && units(f.regs[r].ty) == 2)
        .collect();
    loop {
        let mut changed = false;
        for r in 0..n {
            if !ptr[r] {
                continue;
            }
            let ok = defs_of[r].iter().all(|&i| {
                let inst = &f.insts[i];
                let is_ptr = |o: &Operand| match o {
                    Operand::Reg(x) => ptr.get(x.index()).copied().unwrap_or(false),
                    o => module_shared(o),
                };
                match inst.op {
                    Opcode::Mov => inst.operands.get(1).is_some_and(is_ptr),
                    Opcode::Cvta => {
                        inst.mods.to
                            && inst.mods.space.is_some_and(|s| s.is_shared())
                            && inst.operands.get(1).is_some_and(is_ptr)
                    }
                    Opcode::Add | Opcode::Sub => inst.operands.iter().skip(1).any(is_ptr),
                    _ => false,
                }
            });
            if !ok {
                ptr[r] = false;
                changed = true;
            }
        }
        if !changed {
            return ptr;
        }
    }
}

/// A fixed-size bit set over registers.
#[derive(Clone, PartialEq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    fn set(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
    fn clear(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
    fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| {
            (0..64)
                .filter(move |b| w >> b & 1 == 1)
                .map(move |b| k * 64 + b)
        })
    }
}

/// Moves the definition of every constant to just before its first use: ptxas reads a
/// constant from the constant bank where it is needed (hoisting it out of a loop), not where
/// the PTX loads it at the top of the kernel.
fn sink_constants(ops: &mut [Operands], konst: &[bool]) {
    let is_const = |r: &RegId| konst.get(r.index()).copied().unwrap_or(false);
    for o in ops.iter_mut() {
        if !o.defs.is_empty() && o.defs.iter().all(is_const) {
            // The whole instruction is a constant load or move: it disappears.
            o.uses.clear();
        }
        o.defs.retain(|d| !is_const(d));
    }
    let mut placed = vec![false; konst.len()];
    for o in ops.iter_mut() {
        let mut pre = Vec::new();
        for (u, _) in &o.uses {
            if is_const(u) && !placed[u.index()] {
                placed[u.index()] = true;
                pre.push(*u);
            }
        }
        o.pre_defs = pre;
    }
}

/// The order in which ptxas's list scheduler is modelled to issue a block's instructions:
/// loads and the instructions computing their addresses as early as their dependences
/// allow (latency hiding), everything else in PTX order.
fn schedule_block(f: &Function, ops: &[Operands], start: usize, end: usize) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, HashMap};
    let len = end - start;
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); len];
    let mut last_def: HashMap<usize, usize> = HashMap::new();
    let mut uses_since: HashMap<usize, Vec<usize>> = HashMap::new();
    let (mut last_store, mut last_fence): (Option<usize>, Option<usize>) = (None, None);
    let mut loads: Vec<usize> = Vec::new();
    let mut mem_since_fence: Vec<usize> = Vec::new();
    for k in 0..len {
        let (o, inst) = (&ops[start + k], &f.insts[start + k]);
        let p = &mut preds[k];
        for (u, _) in &o.uses {
            if let Some(&d) = last_def.get(&u.index()) {
                p.push(d);
            }
        }
        for d in o.defs.iter().chain(&o.pre_defs) {
            if let Some(&w) = last_def.get(&d.index()) {
                p.push(w);
            }
            if let Some(us) = uses_since.get(&d.index()) {
                p.extend(us.iter().copied());
            }
        }
        let fence = matches!(
            inst.op,
            Opcode::Bar
                | Opcode::Barrier
                | Opcode::BarWarpSync
                | Opcode::Membar
                | Opcode::Fence
                | Opcode::Call
        ) || inst.op.is_terminator();
        let store = matches!(
            inst.op,
            Opcode::St | Opcode::Red | Opcode::Atom | Opcode::Sust | Opcode::Stmatrix
        );
        if fence {
            p.extend(0..k);
        } else if store {
            p.extend(loads.iter().copied());
            p.extend(last_store);
            p.extend(last_fence);
        } else if is_load(inst) {
            p.extend(last_fence);
            if !inst.mods.nc && !matches!(inst.op, Opcode::Ldu) {
                p.extend(last_store);
            }
        }
        p.sort_unstable();
        p.dedup();
        if fence {
            last_fence = Some(k);
            loads.clear();
            mem_since_fence.clear();
        } else if store {
            last_store = Some(k);
        } else if is_load(inst) {
            loads.push(k);
        }
        for (u, _) in &o.uses {
            uses_since.entry(u.index()).or_default().push(k);
        }
        for d in o.defs.iter().chain(&o.pre_defs) {
            last_def.insert(d.index(), k);
            uses_since.remove(&d.index());
        }
    }
    // Priority: loads and, transitively, what their operands depend on through registers.
    let mut prio = vec![false; len];
    for k in (0..len).rev() {
        if is_load(&f.insts[start + k]) {
            prio[k] = true;
        }
        if prio[k] {
            let o = &ops[start + k];
            for &q in &preds[k] {
                let defines_use = ops[start + q]
                    .defs
                    .iter()
                    .chain(&ops[start + q].pre_defs)
                    .any(|d| o.uses.iter().any(|(u, _)| u == d));
                if defines_use && !f.insts[start + q].op.is_terminator() {
                    prio[q] = true;
                }
            }
        }
    }
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); len];
    let mut indeg = vec![0usize; len];
    for (k, p) in preds.iter().enumerate() {
        indeg[k] = p.len();
        for &q in p {
            succs[q].push(k);
        }
    }
    // Address computations first, then the loads, then the rest (each in PTX order among
    // what is ready): ptxas computes the addresses of a batch of independent loads before
    // issuing them (SASS of srad_update: eight IMAD.WIDE, then eight LDG).
    let class = |k: usize| {
        if !prio[k] {
            2
        } else if is_load(&f.insts[start + k]) {
            1
        } else {
            0
        }
    };
    let mut ready: BinaryHeap<Reverse<(u8, usize)>> = BinaryHeap::new();
    for (k, &d) in indeg.iter().enumerate() {
        if d == 0 {
            ready.push(Reverse((class(k), k)));
        }
    }
    let mut order = Vec::with_capacity(len);
    while let Some(Reverse((_, k))) = ready.pop() {
        order.push(start + k);
        for &s in &succs[k] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.push(Reverse((class(s), s)));
            }
        }
    }
    order
}

/// Largest number of live 32-bit units in a block executed in `order`, given the values live
/// at its end.
fn block_pressure(
    f: &Function,
    ops: &[Operands],
    order: &[usize],
    live_out: &Bits,
    size: &[u32],
) -> (u32, Option<usize>) {
    let mut live = live_out.clone();
    let mut units_live: u32 = live.ones().map(|r| size[r]).sum();
    let mut best = (units_live, order.last().copied());
    for &i in order.iter().rev() {
        let (o, inst) = (&ops[i], &f.insts[i]);
        let mut here = units_live;
        for d in &o.defs {
            if !live.get(d.index()) {
                here += size[d.index()];
            }
        }
        if inst.guard.is_none() {
            for d in &o.defs {
                if live.get(d.index()) {
                    live.clear(d.index());
                    units_live -= size[d.index()];
                }
            }
        }
        for (u, _) in &o.uses {
            if !live.get(u.index()) {
                live.set(u.index());
                units_live += size[u.index()];
            }
        }
        here = here.max(units_live);
        for d in &o.pre_defs {
            if live.get(d.index()) {
                live.clear(d.index());
                units_live -= size[d.index()];
            }
        }
        if here > best.0 {
            best = (here, Some(i));
        }
    }
    best
}

/// Registers a kernel needs at an instruction that ptxas expands into a fast path plus a
/// call to an IEEE slow-path subroutine, on top of the 32-bit units live across the call:
/// the subroutine's own registers (its operands pinned to fixed registers) plus the
/// reserved ones. `None` for other instructions. Fitted with ptxas 12.9 (sm_70) on
/// synthetic kernels holding `k` = 0-3 values live across one such instruction
/// (crate README): `div.rn.f32` reports `k + 15` registers (2 units of address are live
/// across as well), `rcp.rn.f32` `k + 14`.
pub fn slow_path_registers(inst: &Inst) -> Option<u32> {
    let f32 = inst.mods.types.first() == Some(&ScalarType::F32);
    let ieee = matches!(
        inst.mods.rounding,
        Some(Rounding::Rn | Rounding::Rz | Rounding::Rm | Rounding::Rp)
    );
    match inst.op {
        Opcode::Div if f32 && ieee => Some(SLOW_PATH_DIV),
        Opcode::Rcp if f32 && ieee => Some(SLOW_PATH_RCP),
        _ => None,
    }
}

/// Largest need at a slow-path call ([`slow_path_registers`] plus the units live across
/// it, its own result excepted) in a block executed in PTX order; 0 when it has none.
fn slow_path_need(
    f: &Function,
    ops: &[Operands],
    range: std::ops::Range<usize>,
    live_out: &Bits,
    size: &[u32],
) -> u32 {
    let mut live = live_out.clone();
    let mut best = 0;
    for i in range.rev() {
        let (o, inst) = (&ops[i], &f.insts[i]);
        if let Some(c) = slow_path_registers(inst) {
            let across: u32 = live
                .ones()
                .filter(|r| !o.defs.iter().any(|d| d.index() == *r))
                .map(|r| size[r])
                .sum();
            best = best.max(across + c);
        }
        if inst.guard.is_none() {
            for d in &o.defs {
                live.clear(d.index());
            }
        }
        for (u, _) in &o.uses {
            live.set(u.index());
        }
        for d in &o.pre_defs {
            live.clear(d.index());
        }
    }
    best
}

/// Estimates the registers per thread ptxas allocates for kernel `f` of `module`.
pub fn estimate_registers(module: &Module, f: &Function) -> RegisterEstimate {
    let n = f.regs.len();
    let mut ops: Vec<Operands> = f.insts.iter().map(operands).collect();
    let konst = constants(f, &ops);
    let is_shared_symbol = |o: &Operand| match o {
        Operand::Symbol(Symbol::Global(g)) => module
            .globals
            .get(*g as usize)
            .is_some_and(|v| v.space.is_shared()),
        Operand::Symbol(Symbol::Local(l)) => f
            .local_vars
            .get(*l as usize)
            .is_some_and(|v| v.space.is_shared()),
        _ => false,
    };
    let shared_ptr = shared_pointers(f, &is_shared_symbol, &ops);
    sink_constants(&mut ops, &konst);
    let size: Vec<u32> = f
        .regs
        .iter()
        .enumerate()
        .map(|(r, info)| if shared_ptr[r] { 1 } else { units(info.ty) })
        .collect();
    let cfg = Cfg::compute(f);
    let nb = cfg.blocks.len();
    // Block-level upward-exposed uses and kills.
    let mut gen = vec![Bits::new(n); nb];
    let mut kill = vec![Bits::new(n); nb];
    for (b, block) in cfg.blocks.iter().enumerate() {
        for i in (block.insts.start.index()..block.insts.end.index()).rev() {
            let (o, inst) = (&ops[i], &f.insts[i]);
            if inst.guard.is_none() {
                for d in &o.defs {
                    gen[b].clear(d.index());
                    kill[b].set(d.index());
                }
            }
            for (u, _) in &o.uses {
                gen[b].set(u.index());
            }
            for d in &o.pre_defs {
                gen[b].clear(d.index());
                kill[b].set(d.index());
            }
        }
    }
    let mut live_in = vec![Bits::new(n); nb];
    let mut live_out = vec![Bits::new(n); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut out = Bits::new(n);
            for s in &cfg.blocks[b].succs {
                out.union(&live_in[s.index()]);
            }
            let mut inn = out.clone();
            for (w, k) in inn.0.iter_mut().zip(&kill[b].0) {
                *w &= !k;
            }
            inn.union(&gen[b]);
            if inn != live_in[b] || out != live_out[b] {
                live_in[b] = inn;
                live_out[b] = out;
                changed = true;
            }
        }
    }
    // Blocks of loops ptxas can software-pipeline: between the target and the source of a
    // back edge in layout order, when no instruction of that range is a barrier, a call or
    // a write to global memory (which would order the next iteration's loads after it).
    let blocks_stop = |t: usize, s: usize| {
        cfg.blocks[t..=s].iter().any(|blk| {
            (blk.insts.start.index()..blk.insts.end.index()).any(|i| {
                let inst = &f.insts[i];
                matches!(inst.op, Opcode::Bar | Opcode::Barrier | Opcode::Call)
                    || (matches!(inst.op, Opcode::St | Opcode::Atom | Opcode::Red)
                        && !inst.mods.space.is_some_and(|sp| sp.is_shared()))
            })
        })
    };
    let mut in_loop = vec![false; nb];
    for (s, block) in cfg.blocks.iter().enumerate() {
        for t in &block.succs {
            let t = t.index();
            if t <= s && !blocks_stop(t, s) {
                in_loop[t..=s].iter_mut().for_each(|x| *x = true);
            }
        }
    }
    let mut pressure = 0u32;
    let mut scheduled = 0u32;
    let mut peak_at = None;
    let mut slow_path = 0u32;
    for (b, block) in cfg.blocks.iter().enumerate() {
        let (start, end) = (block.insts.start.index(), block.insts.end.index());
        slow_path = slow_path.max(slow_path_need(f, &ops, start..end, &live_out[b], &size));
        let ptx_order: Vec<usize> = (start..end).collect();
        let (p, at) = block_pressure(f, &ops, &ptx_order, &live_out[b], &size);
        if p > pressure {
            pressure = p;
            peak_at = at.map(InstId::new);
        }
        let order = schedule_block(f, &ops, start, end);
        let (q, _) = block_pressure(f, &ops, &order, &live_out[b], &size);
        let pipelined = in_loop[b] && (start..end).any(|i| is_load(&f.insts[i]));
        let q = if pipelined {
            // ptxas unrolls and software-pipelines loops that only read memory: two
            // iterations' temporaries are in flight at once on top of the values live
            // through the loop.
            let mut through = live_in[b].clone();
            for (w, o) in through.0.iter_mut().zip(&live_out[b].0) {
                *w &= o;
            }
            for (w, k) in through.0.iter_mut().zip(&kill[b].0) {
                *w &= !k;
            }
            let t: u32 = through.ones().map(|r| size[r]).sum();
            t + 2 * q.saturating_sub(t)
        } else {
            q
        };
        scheduled = scheduled.max(q);
    }
    let scheduled = scheduled.max(pressure);
    let budget = SCHEDULE_BUDGET.saturating_sub(RESERVED_REGISTERS);
    let allocated = pressure.max(scheduled.min(budget));
    RegisterEstimate {
        registers: (allocated + RESERVED_REGISTERS)
            .max(slow_path)
            .max(MIN_REGISTERS),
        pressure,
        scheduled_pressure: scheduled,
        peak_at,
    }
}
