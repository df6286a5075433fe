//! Calls to device functions, inlined into the kernel ([`inline_calls`]).
//!
//! nvcc keeps a `__device__` function out of line when it is `__noinline__`, recursive or
//! large, and calls it through the PTX calling convention (PTX ISA 9.7.12.3, "call"):
//!
//! ```text
//! { .param .b32 param0; st.param.b32 [param0+0], %r1; .param .b32 retval0;
//!   call.uni (retval0), _Z5twicei, (param0); ld.param.b32 %r6, [retval0+0]; }
//! ```
//!
//! The analysis and the interpreter see one kernel body, so every direct call to a function
//! with a body becomes a copy of that body: its registers, labels, scopes, variables and
//! directives renamed into the caller's, its formal parameters and return values bound to
//! the call's `.param` variables, and each `ret` a branch to the instruction after the call.
//! The copies keep their own source spans, so errors point at the callee's lines.
//! Callees are inlined recursively up to [`MAX_DEPTH`] levels (recursion deeper than that
//! stays a `call`, which the interpreter reports when it is executed) and while the body
//! stays below [`MAX_INSTS`] instructions.
//!
//! A `.param` variable of the calling sequence that is written once (`st.param`) and read
//! with the same width becomes a register move, and the store goes: arguments and return
//! values flow through registers, as they do in the hardware's ABI, so the analysis follows
//! an index through a call and the simulator sees no memory access the GPU would not make.

use std::sync::Arc;

use crate::ir::*;
use crate::opcode::{Modifiers, Opcode};
use crate::types::{ScalarType, StateSpace};

/// Deepest chain of calls inlined (a kernel calling `f` calling `g` is depth 2).
pub const MAX_DEPTH: u32 = 8;

/// Largest body, in instructions, that inlining may produce; calls beyond stay calls.
pub const MAX_INSTS: usize = 1 << 20;

/// Whether `f` contains a direct call to a function of `m` that has a body.
pub fn has_inlinable_calls(m: &Module, f: &Function) -> bool {
    f.insts.iter().any(|i| callee_of(m, i).is_some())
}

/// `f` with its calls inlined (see the module's overview); `f` itself when it has none.
pub fn inline_calls(m: &Module, f: &Function) -> Function {
    let mut out = expand(m, f, 0);
    forward_params(&mut out);
    out
}

/// Why a `call` instruction was left in the body, for the interpreter's message.
pub fn why_not_inlined(m: &Module, inst: &Inst) -> String {
    let target = inst.operands.iter().find_map(|o| match o {
        Operand::Symbol(Symbol::Function(i)) => m.functions.get(*i as usize),
        _ => None,
    });
    match target {
        None => "an indirect call (through a register) is not supported".to_string(),
        Some(g) if crate::device_runtime::DeviceRuntimeFn::of_name(&g.name).is_some() => format!(
            "`{}` is a function of the CUDA device runtime (a kernel launching kernels, \
             `ptx_parser::device_runtime`), which this consumer does not run",
            g.name
        ),
        Some(g) if !g.has_body => format!(
            "`{}` is declared without a body (an external function such as `vprintf` or \
             `malloc`), which the interpreter does not provide (`vprintf` it runs as a call that
             prints nothing)",
            g.name
        ),
        Some(g) => format!(
            "the call to `{}` was not inlined: calls nested deeper than {MAX_DEPTH} levels \
             (recursion) or a body over {MAX_INSTS} instructions",
            g.name
        ),
    }
}

/// The function a direct call instruction calls, with its index.
fn called<'m>(m: &'m Module, inst: &Inst) -> Option<(u32, &'m Function)> {
    if inst.op != Opcode::Call {
        return None;
    }
    inst.operands.iter().find_map(|o| match o {
        Operand::Symbol(Symbol::Function(i)) => m.functions.get(*i as usize).map(|g| (*i, g)),
        _ => None,
    })
}

/// The name of the external function (declared without a body: `vprintf`, `malloc`) a
/// direct call instruction calls.
pub fn external_callee<'m>(m: &'m Module, inst: &Inst) -> Option<&'m str> {
    called(m, inst)
        .filter(|(_, g)| !g.has_body)
        .map(|(_, g)| g.name.as_str())
}

/// The function a direct call instruction calls, when it has a body and is not the device
/// runtime's (a device-side launch stays a call: [`crate::device_runtime`]).
fn callee_of<'m>(m: &'m Module, inst: &Inst) -> Option<(u32, &'m Function)> {
    called(m, inst).filter(|(_, g)| {
        g.has_body && crate::device_runtime::DeviceRuntimeFn::of_name(&g.name).is_none()
    })
}

/// The return and argument symbols of a direct call: `call (r...), f, (a...)`. `None` when
/// an argument or return value is not a `.param` variable (registers, immediates).
fn call_lists(inst: &Inst) -> Option<(Vec<Symbol>, Vec<Symbol>)> {
    let ops = inst.operands.as_slice();
    let at = ops
        .iter()
        .position(|o| matches!(o, Operand::Symbol(Symbol::Function(_))))?;
    let syms = |o: Option<&Operand>| -> Option<Vec<Symbol>> {
        match o {
            None => Some(Vec::new()),
            Some(Operand::List(v)) => v
                .iter()
                .map(|x| match x {
                    Operand::Symbol(s @ Symbol::Local(_)) => Some(*s),
                    _ => None,
                })
                .collect(),
            Some(_) => None,
        }
    };
    let rets = if at == 0 {
        Some(Vec::new())
    } else {
        syms(ops.get(at - 1))
    }?;
    let args = syms(ops.get(at + 1))?;
    Some((rets, args))
}

/// `f` with its calls replaced by the callees' bodies, `depth` levels below the kernel.
fn expand(m: &Module, f: &Function, depth: u32) -> Function {
    let inlinable = |i: &Inst| {
        depth < MAX_DEPTH
            && callee_of(m, i).is_some_and(|(_, g)| {
                call_lists(i)
                    .is_some_and(|(r, a)| r.len() == g.returns.len() && a.len() == g.params.len())
            })
    };
    if !f.insts.iter().any(inlinable) {
        return f.clone();
    }
    let mut out = Function {
        insts: Vec::with_capacity(f.insts.len()),
        spans: Vec::with_capacity(f.spans.len()),
        locs: Vec::new(),
        pragmas: Vec::new(),
        ..f.clone()
    };
    // Where each of `f`'s instructions (and its end) lands in `out`.
    let mut at = Vec::with_capacity(f.insts.len() + 1);
    let span_of = |i: usize| f.spans.get(i).copied().unwrap_or_default();
    for (i, inst) in f.insts.iter().enumerate() {
        at.push(out.insts.len());
        let expanded = if inlinable(inst) && out.insts.len() < MAX_INSTS {
            callee_of(m, inst).and_then(|(_, g)| {
                let g = expand(m, g, depth + 1);
                (out.insts.len() + g.insts.len() <= MAX_INSTS).then_some(g)
            })
        } else {
            None
        };
        match (expanded, call_lists(inst)) {
            (Some(g), Some((rets, args))) => {
                let scope = innermost_scope(f, i);
                splice(&mut out, &g, &rets, &args, scope, inst.guard);
            }
            _ => {
                out.insts.push(inst.clone());
                out.spans.push(span_of(i));
            }
        }
    }
    at.push(out.insts.len());
    let map = |x: InstId| InstId::new(at.get(x.index()).copied().unwrap_or(out.insts.len()));
    // The caller's own tables (the first entries of each): to their new positions.
    let n_labels = f.labels.len();
    for l in &mut out.labels[..n_labels] {
        l.target = map(l.target);
    }
    for s in &mut out.scopes[..f.scopes.len()] {
        s.start = map(s.start);
        s.end = map(s.end);
    }
    for v in &mut out.local_vars[..f.local_vars.len()] {
        v.at = map(v.at);
    }
    for d in &mut out.reg_decls[..f.reg_decls.len()] {
        d.at = map(d.at);
    }
    for d in &mut out.directives[..f.directives.len()] {
        d.at = map(d.at);
    }
    let mut locs: Vec<(InstId, SrcLoc)> = f.locs.iter().map(|(i, l)| (map(*i), *l)).collect();
    locs.append(&mut out.locs);
    locs.sort_by_key(|x| x.0);
    out.locs = locs;
    let mut pragmas: Vec<(InstId, String)> = f
        .pragmas
        .iter()
        .map(|(i, p)| (map(*i), p.clone()))
        .collect();
    pragmas.append(&mut out.pragmas);
    pragmas.sort_by_key(|x| x.0);
    out.pragmas = pragmas;
    out
}

/// The innermost `{ }` scope of `f` holding instruction `i`.
fn innermost_scope(f: &Function, i: usize) -> ScopeId {
    let mut best = (ScopeId(0), usize::MAX);
    for (k, s) in f.scopes.iter().enumerate() {
        let (a, b) = (s.start.index(), s.end.index());
        if a <= i && i < b && b - a < best.1 {
            best = (ScopeId::new(k), b - a);
        }
    }
    best.0
}

/// Appends callee `g`'s body to `out` for a call whose return and argument variables are
/// `rets` and `args`, in caller scope `scope`; a guarded call guards every copied
/// instruction's effect by branching around the body.
fn splice(
    out: &mut Function,
    g: &Function,
    rets: &[Symbol],
    args: &[Symbol],
    scope: ScopeId,
    guard: Option<Guard>,
) {
    let site = out.scopes.len();
    let base = out.insts.len();
    let reg_off = out.regs.len() as u32;
    let decl_off = out.reg_decls.len() as u32;
    let scope_off = out.scopes.len() as u32;
    let label_off = out.labels.len() as u32;
    let local_off = out.local_vars.len() as u32;
    let dir_off = out.directives.len() as u32;
    // A guarded call: `@!p bra ret` around the body.
    let skip = usize::from(guard.is_some());
    let body = base + skip;
    let end = InstId::new(body + g.insts.len());
    let inst_at = |x: InstId| InstId::new(body + x.index());
    let scope_at = |s: ScopeId| ScopeId(s.0 + scope_off);
    let rename = |name: &str| match name.strip_prefix('%') {
        Some(rest) => format!("%i{site}_{rest}"),
        None => format!("i{site}_{name}"),
    };
    out.regs.extend(g.regs.iter().map(|r| RegInfo {
        decl: r.decl + decl_off,
        ..*r
    }));
    // The callee's function-scope registers are declared at the caller's function scope:
    // a forwarded return value is read after the call, outside the call's `{ }`, and the
    // renamed names cannot clash.
    out.reg_decls.extend(g.reg_decls.iter().map(|d| {
        let top = d.scope == ScopeId(0);
        RegDecl {
            name: rename(&d.name),
            first: RegId(d.first.0 + reg_off),
            scope: if top { ScopeId(0) } else { scope_at(d.scope) },
            at: if top { InstId(0) } else { inst_at(d.at) },
            ..d.clone()
        }
    }));
    out.scopes.extend(g.scopes.iter().map(|s| Scope {
        parent: Some(s.parent.map_or(scope, scope_at)),
        start: inst_at(s.start),
        end: inst_at(s.end),
    }));
    out.labels.extend(g.labels.iter().map(|l| LabelInfo {
        name: rename(&l.name),
        target: inst_at(l.target),
        scope: scope_at(l.scope),
    }));
    let ret_label = LabelId::new(out.labels.len());
    out.labels.push(LabelInfo {
        name: format!("$L__ret_i{site}"),
        target: end,
        scope,
    });
    out.local_vars.extend(g.local_vars.iter().map(|v| {
        let mut v = v.clone();
        v.var.name = rename(&v.var.name);
        v.scope = scope_at(v.scope);
        v.at = inst_at(v.at);
        v
    }));
    out.directives
        .extend(g.directives.iter().map(|d| LabelledDirective {
            name: rename(&d.name),
            targets: d.targets.iter().map(|l| LabelId(l.0 + label_off)).collect(),
            scope: scope_at(d.scope),
            at: inst_at(d.at),
            ..d.clone()
        }));
    let map = Rename {
        reg_off,
        label_off,
        local_off,
        dir_off,
        rets,
        args,
    };
    let bra = |guard: Option<Guard>| Inst {
        guard,
        op: Opcode::Bra,
        mods: Arc::new(Modifiers::default()),
        operands: [Operand::Label(ret_label)].into_iter().collect(),
    };
    let call_span = out.spans.last().copied().unwrap_or_default();
    if let Some(gd) = guard {
        out.insts.push(bra(Some(Guard {
            reg: gd.reg,
            negated: !gd.negated,
        })));
        out.spans
            .push(g.spans.first().copied().unwrap_or(call_span));
    }
    for (j, inst) in g.insts.iter().enumerate() {
        let mut inst = map.inst(inst);
        if inst.op == Opcode::Ret {
            inst = bra(inst.guard);
        }
        out.insts.push(inst);
        out.spans.push(g.spans.get(j).copied().unwrap_or(call_span));
    }
    out.locs
        .extend(g.locs.iter().map(|(i, l)| (inst_at(*i), *l)));
    out.pragmas
        .extend(g.pragmas.iter().map(|(i, p)| (inst_at(*i), p.clone())));
}

/// How a callee's names map into the caller.
struct Rename<'a> {
    reg_off: u32,
    label_off: u32,
    local_off: u32,
    dir_off: u32,
    rets: &'a [Symbol],
    args: &'a [Symbol],
}

impl Rename<'_> {
    fn reg(&self, r: RegId) -> RegId {
        RegId(r.0 + self.reg_off)
    }

    fn sym(&self, s: Symbol) -> Symbol {
        match s {
            Symbol::Param(i) => self.args.get(i as usize).copied().unwrap_or(s),
            Symbol::Ret(i) => self.rets.get(i as usize).copied().unwrap_or(s),
            Symbol::Local(i) => Symbol::Local(i + self.local_off),
            Symbol::Directive(i) => Symbol::Directive(i + self.dir_off),
            Symbol::Global(_) | Symbol::Function(_) => s,
        }
    }

    fn operand(&self, o: &Operand) -> Operand {
        match o {
            Operand::Reg(r) => Operand::Reg(self.reg(*r)),
            Operand::PredNeg(r) => Operand::PredNeg(self.reg(*r)),
            Operand::PredPair(a, b) => Operand::PredPair(self.reg(*a), self.reg(*b)),
            Operand::Symbol(s) => Operand::Symbol(self.sym(*s)),
            Operand::Address(a) => Operand::Address(Address {
                base: match a.base {
                    AddrBase::Reg(r) => AddrBase::Reg(self.reg(r)),
                    AddrBase::Symbol(s) => AddrBase::Symbol(self.sym(s)),
                    AddrBase::Imm(v) => AddrBase::Imm(v),
                },
                offset: a.offset,
            }),
            Operand::Vector(v) => Operand::Vector(v.iter().map(|x| self.operand(x)).collect()),
            Operand::Brackets(v) => Operand::Brackets(v.iter().map(|x| self.operand(x)).collect()),
            Operand::List(v) => Operand::List(v.iter().map(|x| self.operand(x)).collect()),
            Operand::Label(l) => Operand::Label(LabelId(l.0 + self.label_off)),
            Operand::Imm(_) | Operand::Special(_) | Operand::Sink => o.clone(),
        }
    }

    fn inst(&self, i: &Inst) -> Inst {
        Inst {
            guard: i.guard.map(|g| Guard {
                reg: self.reg(g.reg),
                negated: g.negated,
            }),
            op: i.op.clone(),
            mods: i.mods.clone(),
            operands: i.operands.iter().map(|o| self.operand(o)).collect(),
        }
    }
}

/// A scalar `ld.param` / `st.param` of a function-scope `.param` variable: (variable,
/// byte offset, width in bytes).
fn param_access(f: &Function, inst: &Inst, addr_operand: usize) -> Option<(u32, i64, u32)> {
    if !matches!(inst.mods.space, Some(s) if s.is_param()) || inst.mods.vec.is_some() {
        return None;
    }
    let Some(Operand::Address(a)) = inst.operands.get(addr_operand) else {
        return None;
    };
    let AddrBase::Symbol(Symbol::Local(v)) = a.base else {
        return None;
    };
    let var = f.local_vars.get(v as usize)?;
    if var.space != StateSpace::Param {
        return None;
    }
    let ty = *inst.mods.types.first()?;
    Some((v, a.offset, ty.size()))
}

/// Replaces reads of calling-sequence `.param` variables by register moves where the
/// variable is written once with the same width and the written register never changes
/// after (see the module's overview); stores left without a reader go.
fn forward_params(f: &mut Function) {
    use std::collections::HashMap;
    if !f.local_vars.iter().any(|v| v.space == StateSpace::Param) {
        return;
    }
    // Registers written by more than one instruction may change between store and load.
    // Every instruction but a store is counted as writing the registers of its first
    // operand: an overcount only forwards less.
    let mut writes = vec![0u32; f.regs.len()];
    for inst in f.insts.iter().filter(|i| i.op != Opcode::St) {
        match inst.operands.first() {
            Some(Operand::Reg(r)) => bump(&mut writes, *r),
            Some(Operand::PredPair(a, b)) => {
                bump(&mut writes, *a);
                bump(&mut writes, *b);
            }
            Some(Operand::Vector(v)) => {
                for x in v {
                    if let Operand::Reg(r) = x {
                        bump(&mut writes, *r);
                    }
                }
            }
            _ => {}
        }
    }
    // The one store per (variable, offset): its value, width and instruction; `None` when
    // there is a second store, or the one store is guarded or of a value that may change.
    type Key = (u32, i64);
    let mut stores: HashMap<Key, Option<(Operand, u32, usize)>> = HashMap::new();
    // `.param` variables mentioned other than by a scalar load or store (address taken,
    // vector access): their stores stay and their loads stay loads.
    let mut other_use = vec![false; f.local_vars.len()];
    for (i, inst) in f.insts.iter().enumerate() {
        let access = match inst.op {
            Opcode::St => param_access(f, inst, 0),
            Opcode::Ld => param_access(f, inst, 1),
            _ => None,
        };
        match access {
            Some((v, off, w)) if inst.op == Opcode::St => {
                let value = inst.operands.get(1).cloned().filter(|val| match val {
                    Operand::Reg(r) => writes.get(r.index()).is_some_and(|&n| n <= 1),
                    Operand::Imm(_) => true,
                    _ => false,
                });
                let first = value
                    .filter(|_| inst.guard.is_none())
                    .map(|val| (val, w, i));
                stores
                    .entry((v, off))
                    .and_modify(|e| *e = None)
                    .or_insert(first);
            }
            Some(_) => {}
            None => {
                for o in inst.operands.iter() {
                    mark_param_uses(f, o, &mut other_use);
                }
            }
        }
    }
    // Rewrite the loads.
    let mut forwarded_all: HashMap<Key, bool> = HashMap::new();
    for i in 0..f.insts.len() {
        let inst = &f.insts[i];
        if inst.op != Opcode::Ld {
            continue;
        }
        let Some((v, off, w)) = param_access(f, inst, 1) else {
            continue;
        };
        let ok = match stores.get(&(v, off)) {
            Some(Some((value, sw, _))) if *sw == w && w >= 2 && !other_use[v as usize] => {
                Some(value.clone())
            }
            _ => None,
        };
        let slot = forwarded_all.entry((v, off)).or_insert(true);
        let (Some(value), Some(dst @ Operand::Reg(_))) = (ok, inst.operands.first().cloned())
        else {
            *slot = false;
            continue;
        };
        let ty = inst.mods.types.first().copied().unwrap_or(ScalarType::B32);
        let mut mods = Modifiers::default();
        let _ = mods.types.push(ty);
        f.insts[i] = Inst {
            guard: inst.guard,
            op: Opcode::Mov,
            mods: Arc::new(mods),
            operands: [dst, value].into_iter().collect(),
        };
    }
    // Stores whose every reader became a move: dropped.
    let mut keep = vec![true; f.insts.len()];
    for (key, s) in &stores {
        if let Some((_, _, i)) = s {
            if forwarded_all.get(key).copied().unwrap_or(true) && !other_use[key.0 as usize] {
                keep[*i] = false;
            }
        }
    }
    if keep.iter().any(|k| !k) {
        retain(f, &keep);
    }
}

fn bump(writes: &mut [u32], r: RegId) {
    if let Some(n) = writes.get_mut(r.index()) {
        *n += 1;
    }
}

fn mark_param_uses(f: &Function, o: &Operand, other_use: &mut [bool]) {
    let mut mark = |s: &Symbol| {
        if let Symbol::Local(v) = s {
            if f.local_vars
                .get(*v as usize)
                .is_some_and(|x| x.space == StateSpace::Param)
            {
                if let Some(u) = other_use.get_mut(*v as usize) {
                    *u = true;
                }
            }
        }
    };
    match o {
        Operand::Symbol(s) => mark(s),
        Operand::Address(Address {
            base: AddrBase::Symbol(s),
            ..
        }) => mark(s),
        // A call left in the body (not inlined) reads its arguments and writes its
        // return values through memory.
        Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => {
            for x in v {
                mark_param_uses(f, x, other_use);
            }
        }
        _ => {}
    }
}

/// Drops the instructions whose `keep` is false, moving every table that points at
/// instructions to the next instruction kept.
fn retain(f: &mut Function, keep: &[bool]) {
    let n = f.insts.len();
    let mut at = vec![0usize; n + 1];
    let mut k = 0;
    for i in 0..n {
        at[i] = k;
        if keep[i] {
            k += 1;
        }
    }
    at[n] = k;
    let map = |x: InstId| InstId::new(at[x.index().min(n)]);
    let mut i = 0;
    f.insts.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    let mut i = 0;
    f.spans.retain(|_| {
        i += 1;
        keep.get(i - 1).copied().unwrap_or(true)
    });
    for l in &mut f.labels {
        l.target = map(l.target);
    }
    for s in &mut f.scopes {
        s.start = map(s.start);
        s.end = map(s.end);
    }
    for v in &mut f.local_vars {
        v.at = map(v.at);
    }
    for d in &mut f.reg_decls {
        d.at = map(d.at);
    }
    for d in &mut f.directives {
        d.at = map(d.at);
    }
    for l in &mut f.locs {
        l.0 = map(l.0);
    }
    for p in &mut f.pragmas {
        p.0 = map(p.0);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
    use super::*;

    /// NVRTC 12.9's PTX (compute_70) of `tests/data/calls_nvrtc.cu`: `fact` (NVRTC turns
    /// its recursion into a loop), a `pick` with a loop, and `printf` (an external
    /// `vprintf`).
    const NVRTC: &str = include_str!("../tests/data/calls_nvrtc.ptx");

    fn inlined(src: &str, kernel: &str) -> (Module, Function) {
        let m = crate::parse(src).unwrap();
        let f = m.kernel(kernel).unwrap();
        assert!(has_inlinable_calls(&m, f));
        let g = inline_calls(&m, f);
        (m, g)
    }

    #[test]
    fn direct_calls_become_the_body_and_parameters_become_moves() {
        let (m, g) = inlined(NVRTC, "r");
        let calls: Vec<String> = g
            .insts
            .iter()
            .enumerate()
            .filter(|(_, i)| i.op == Opcode::Call)
            .map(|(k, _)| m.display_inst(&g, InstId::new(k)).to_string())
            .collect();
        // Only the external `vprintf` remains.
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert!(calls[0].contains("vprintf"), "{calls:?}");
        assert!(!has_inlinable_calls(&m, &g));
        // `pick`'s arguments and result flow through registers. What stays in memory:
        // `vprintf`'s two arguments and its result, and `fact`'s result, whose register
        // the callee writes in a loop (more than once, so it is not forwarded).
        let param_accesses = g
            .insts
            .iter()
            .filter(|i| {
                matches!(i.op, Opcode::Ld | Opcode::St)
                    && (param_access(&g, i, 0).is_some() || param_access(&g, i, 1).is_some())
            })
            .count();
        let shown: Vec<String> = g
            .insts
            .iter()
            .enumerate()
            .filter(|(_, i)| {
                matches!(i.op, Opcode::Ld | Opcode::St)
                    && (param_access(&g, i, 0).is_some() || param_access(&g, i, 1).is_some())
            })
            .map(|(k, _)| m.display_inst(&g, InstId::new(k)).to_string())
            .collect();
        assert_eq!(param_accesses, 5, "{shown:#?}");
        let global_loads = g
            .insts
            .iter()
            .filter(|i| i.op == Opcode::Ld && i.mods.space == Some(StateSpace::Global))
            .count();
        assert_eq!(
            global_loads, 4,
            "pick's loop, unrolled by NVRTC, reads a[i + k]"
        );
        // The body still prints and parses as PTX, with the same instructions.
        let mut m2 = m.clone();
        let k = m.functions.iter().position(|f| f.name == "r").unwrap();
        m2.functions[k] = g.clone();
        let text = m2.to_string();
        let back = crate::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let g2 = back.kernel("r").unwrap();
        assert_eq!(g2.insts.len(), g.insts.len());
        assert_eq!(g2.cfg().blocks.len(), g.cfg().blocks.len());
    }

    #[test]
    fn recursion_stops_at_the_depth_limit_and_says_why() {
        let src = ".version 8.0\n.target sm_70\n.address_size 64\n\
            .func (.param .b32 rv) down(.param .b32 x)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
            ld.param.u32 %r1, [x];\nsetp.eq.u32 %p1, %r1, 0;\nmov.u32 %r3, 0;\n@%p1 bra DONE;\n\
            sub.u32 %r2, %r1, 1;\n{\n.param .b32 a;\nst.param.b32 [a+0], %r2;\n.param .b32 r;\n\
            call.uni (r), down, (a);\nld.param.b32 %r3, [r+0];\n}\nadd.u32 %r3, %r3, 1;\n\
            DONE:\nst.param.b32 [rv+0], %r3;\nret;\n}\n\
            .visible .entry k(.param .u32 n)\n{\n.reg .b32 %r<4>;\nld.param.u32 %r1, [n];\n\
            {\n.param .b32 a;\nst.param.b32 [a+0], %r1;\n.param .b32 r;\n\
            call.uni (r), down, (a);\nld.param.b32 %r2, [r+0];\n}\nret;\n}\n";
        let (m, g) = inlined(src, "k");
        let left: Vec<&Inst> = g.insts.iter().filter(|i| i.op == Opcode::Call).collect();
        // Eight copies inlined, the ninth level stays a call.
        assert_eq!(left.len(), 1);
        assert!(why_not_inlined(&m, left[0]).contains("deeper than 8 levels"));
        let copies = g.insts.iter().filter(|i| i.op == Opcode::Sub).count();
        assert_eq!(copies, MAX_DEPTH as usize);
    }

    #[test]
    fn an_external_function_stays_a_call_and_says_why() {
        let (m, g) = inlined(NVRTC, "r");
        let printf = g.insts.iter().find(|i| {
            i.op == Opcode::Call
                && i.operands.iter().any(|o| {
                    matches!(o, Operand::Symbol(Symbol::Function(f))
                        if m.functions[*f as usize].name == "vprintf")
                })
        });
        assert!(why_not_inlined(&m, printf.unwrap()).contains("without a body"));
    }

    #[test]
    fn a_guarded_call_branches_around_the_body() {
        let src = ".version 8.0\n.target sm_70\n.address_size 64\n\
            .func (.param .b32 rv) twice(.param .b32 x)\n{\n.reg .b32 %r<3>;\n\
            ld.param.u32 %r1, [x];\nshl.b32 %r2, %r1, 1;\nst.param.b32 [rv+0], %r2;\nret;\n}\n\
            .visible .entry k(.param .u32 n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
            ld.param.u32 %r1, [n];\nsetp.gt.u32 %p1, %r1, 4;\nmov.u32 %r2, 7;\n\
            {\n.param .b32 param0;\nst.param.b32 [param0+0], %r1;\n.param .b32 retval0;\n\
            @%p1 call.uni (retval0), twice, (param0);\nld.param.b32 %r2, [retval0+0];\n}\n\
            ret;\n}\n";
        let (m, g) = inlined(src, "k");
        let text: Vec<String> = (0..g.insts.len())
            .map(|k| {
                let t = m.display_inst(&g, InstId::new(k)).to_string();
                t.split_whitespace().collect::<Vec<_>>().join(" ")
            })
            .collect();
        assert_eq!(text[3], "@!%p1 bra $L__ret_i2;", "{text:#?}");
        // The argument became a move from %r1, the result a move of the callee's %r2; the
        // stores are gone.
        assert!(
            text.iter().any(|t| t == "mov.u32 %i2_r1, %r1;"),
            "{text:#?}"
        );
        assert!(
            text.iter().any(|t| t == "mov.b32 %r2, %i2_r2;"),
            "{text:#?}"
        );
        assert!(!text.iter().any(|t| t.starts_with("st.param")), "{text:#?}");
    }
}
