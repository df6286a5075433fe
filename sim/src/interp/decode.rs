//! Decoding a kernel of the IR once into [`Program`]: every instruction becomes an [`Op`] with
//! register slots, immediates and resolved addresses; symbols get their addresses from the
//! memory layout (params, shared, local, module variables); branches get their
//! reconvergence point from [`super::simt::reconvergence_points`].
//!
//! Instructions the interpreter cannot execute decode to `Op::Unsupported` with a reason; they
//! only stop a run when executed. [`Program::unsupported`] lists them.

use ptx_parser::{
    AddrBase, AtomOp, Function, Immediate, Inst, InstId, Module, MulMode, Opcode, Operand,
    Precision, Rounding, ScalarType, SpecialReg, StateSpace, Symbol, VoteMode,
};

use super::layout::Layout;
use super::ops::*;
use super::simt;
use crate::SimError;

/// A kernel decoded for execution.
#[derive(Clone, Debug)]
pub struct Program {
    pub(crate) kernel: String,
    pub(crate) insts: Vec<DInst>,
    pub(crate) lines: Vec<u32>,
    pub(crate) texts: Vec<String>,
    pub(crate) opcodes: Vec<String>,
    /// Register slots per thread (PTX registers, then special registers).
    pub(crate) num_slots: usize,
    /// Special registers filled at warp start: (slot, register).
    pub(crate) specials: Vec<(u32, SpecialReg)>,
    pub(crate) layout: Layout,
    pub(crate) has_global_atomics: bool,
    /// `.maxntid` and `.reqntid` of the kernel (checked against the launched block).
    pub(crate) maxntid: Option<Vec<u32>>,
    pub(crate) reqntid: Option<Vec<u32>>,
    /// Per instruction: whether a thread there may still reach a CTA barrier
    /// ([`simt::reaches_barrier`]).
    pub(crate) reaches_barrier: Vec<bool>,
}

impl Program {
    /// Decodes kernel `name` of `module`.
    pub fn new(module: &Module, name: &str) -> Result<Program, SimError> {
        let f = module.kernel(name).filter(|f| f.has_body).ok_or_else(|| {
            SimError::Setup(format!("no kernel (.entry with a body) named `{name}`"))
        })?;
        Ok(Program::from_function(module, f))
    }

    /// Decodes function `f` (an entry) of `module`.
    pub fn from_function(module: &Module, f: &Function) -> Program {
        let layout = Layout::compute(module, f);
        let rpcs = simt::reconvergence_points(f);
        let mut d = Decoder {
            module,
            f,
            layout: &layout,
            specials: Vec::new(),
            rpcs: &rpcs,
        };
        let mut insts = Vec::with_capacity(f.insts.len());
        let mut has_global_atomics = false;
        for (i, inst) in f.insts.iter().enumerate() {
            let op = d.op(i, inst).unwrap_or_else(Op::Unsupported);
            if let Op::Atom {
                space: Space::Global | Space::Generic,
                ..
            } = op
            {
                has_global_atomics = true;
            }
            let (guard, guard_neg) = match inst.guard {
                Some(g) => (g.reg.0, g.negated),
                None => (NO_REG, false),
            };
            insts.push(DInst {
                guard,
                guard_neg,
                op,
            });
        }
        let texts = (0..f.insts.len())
            .map(|i| {
                module
                    .display_inst(f, InstId::new(i))
                    .to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let opcodes = f
            .insts
            .iter()
            .map(|i| format!("{}{}", i.op.name(), i.mods))
            .collect();
        let lines = (0..f.insts.len())
            .map(|i| f.span(InstId::new(i)).map_or(0, |s| s.line))
            .collect();
        let specials = d.specials;
        Program {
            kernel: f.name.clone(),
            insts,
            lines,
            texts,
            opcodes,
            num_slots: f.regs.len() + specials.len(),
            specials,
            layout,
            has_global_atomics,
            maxntid: f.attributes.maxntid.clone(),
            reqntid: f.attributes.reqntid.clone(),
            reaches_barrier: simt::reaches_barrier(f),
        }
    }

    /// Kernel name.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// True for an empty body.
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    /// Instructions the interpreter cannot execute: (PTX line, text, reason).
    pub fn unsupported(&self) -> Vec<(u32, String, String)> {
        self.insts
            .iter()
            .enumerate()
            .filter_map(|(i, d)| match &d.op {
                Op::Unsupported(why) => Some((self.lines[i], self.texts[i].clone(), why.clone())),
                _ => None,
            })
            .collect()
    }

    /// Whether the kernel has atomics on global (or generic) addresses; such kernels always
    /// run TB by TB with immediate writes (see [`crate::RunOptions`]).
    pub fn has_global_atomics(&self) -> bool {
        self.has_global_atomics
    }

    /// Bytes of static shared memory per TB.
    pub fn static_shared_bytes(&self) -> u64 {
        self.layout.shared_static
    }
}

struct Decoder<'a> {
    module: &'a Module,
    f: &'a Function,
    layout: &'a Layout,
    specials: Vec<(u32, SpecialReg)>,
    rpcs: &'a [u32],
}

type R<T> = Result<T, String>;

fn ty_of(t: ScalarType) -> R<Ty> {
    use ScalarType::*;
    let (kind, bits) = match t {
        Pred => (Kind::U, 1),
        B8 | U8 => (Kind::U, 8),
        B16 | U16 => (Kind::U, 16),
        B32 | U32 => (Kind::U, 32),
        B64 | U64 => (Kind::U, 64),
        S8 => (Kind::S, 8),
        S16 => (Kind::S, 16),
        S32 => (Kind::S, 32),
        S64 => (Kind::S, 64),
        F32 => (Kind::F, 32),
        F64 => (Kind::F, 64),
        other => return Err(format!("type .{other} not supported")),
    };
    Ok(Ty { kind, bits })
}

/// How an operand reads in an error message (never Rust debug text).
fn describe(o: Option<&Operand>) -> String {
    match o {
        None => "nothing (the operand is missing)".into(),
        Some(Operand::Reg(_)) => "a register".into(),
        Some(Operand::PredNeg(_)) => "a negated predicate".into(),
        Some(Operand::PredPair(..)) => "a predicate pair".into(),
        Some(Operand::Imm(i)) => format!("the immediate {i}"),
        Some(Operand::Special(s)) => format!("the special register {s}"),
        Some(Operand::Symbol(_)) => "a symbol".into(),
        Some(Operand::Address(_)) => "an address".into(),
        Some(Operand::Vector(v)) => format!("a vector of {} elements", v.len()),
        Some(Operand::Brackets(_)) => "a bracketed list".into(),
        Some(Operand::List(_)) => "a parenthesised list".into(),
        Some(Operand::Label(_)) => "a label".into(),
        Some(Operand::Sink) => "the sink `_`".into(),
    }
}

fn rnd_of(r: Option<Rounding>) -> R<Rnd> {
    match r {
        None | Some(Rounding::Rn) => Ok(Rnd::Rn),
        Some(Rounding::Rz) => Ok(Rnd::Rz),
        Some(Rounding::Rm) => Ok(Rnd::Rm),
        Some(Rounding::Rp) => Ok(Rnd::Rp),
        Some(r) => Err(format!("rounding .{r} not supported here")),
    }
}

impl Decoder<'_> {
    fn dst(&self, o: Option<&Operand>) -> R<u32> {
        match o {
            Some(Operand::Reg(r)) => Ok(r.0),
            Some(Operand::Sink) => Ok(NO_REG),
            other => Err(format!(
                "expected a destination register, found {}",
                describe(other)
            )),
        }
    }

    fn special(&mut self, s: SpecialReg) -> Src {
        match s {
            SpecialReg::Clock | SpecialReg::Clock64 | SpecialReg::ClockHi => Src::Clock,
            _ => {
                if let Some((slot, _)) = self.specials.iter().find(|(_, r)| *r == s) {
                    return Src::Reg(*slot);
                }
                let slot = (self.f.regs.len() + self.specials.len()) as u32;
                self.specials.push((slot, s));
                Src::Reg(slot)
            }
        }
    }

    /// A source operand read as type `ty`.
    fn src(&mut self, o: Option<&Operand>, ty: Ty) -> R<Src> {
        match o {
            Some(Operand::Reg(r)) => Ok(Src::Reg(r.0)),
            Some(Operand::PredNeg(r)) => Ok(Src::NotPred(r.0)),
            Some(Operand::Imm(i)) => Ok(Src::Imm(imm_bits(*i, ty))),
            Some(Operand::Special(s)) => Ok(self.special(*s)),
            Some(Operand::Symbol(s)) => Ok(Src::Imm(self.symbol_addr(*s)?.1)),
            other => Err(format!(
                "expected a source operand, found {}",
                describe(other)
            )),
        }
    }

    fn symbol_addr(&self, s: Symbol) -> R<(Space, u64)> {
        self.layout.symbol(s).ok_or_else(|| {
            format!(
                "symbol `{}` has no address",
                self.module.symbol_name(self.f, s)
            )
        })
    }

    fn addr(&self, o: Option<&Operand>) -> R<(Addr, Option<Space>)> {
        match o {
            Some(Operand::Address(a)) => {
                let (reg, base, space) = match a.base {
                    AddrBase::Reg(r) => (r.0, 0, None),
                    AddrBase::Imm(v) => (NO_REG, v, None),
                    AddrBase::Symbol(s) => {
                        let (sp, v) = self.symbol_addr(s)?;
                        (NO_REG, v, Some(sp))
                    }
                };
                Ok((
                    Addr {
                        reg,
                        off: base.wrapping_add(a.offset as u64),
                    },
                    space,
                ))
            }
            other => Err(format!(
                "expected an address [...], found {}",
                describe(other)
            )),
        }
    }

    fn ty(&self, inst: &Inst, k: usize) -> R<Ty> {
        let t = inst
            .mods
            .types
            .get(k)
            .copied()
            .ok_or("missing type suffix")?;
        ty_of(t)
    }

    fn space(&self, inst: &Inst, sym: Option<Space>) -> R<Space> {
        Ok(match inst.mods.space {
            None => sym.unwrap_or(Space::Generic),
            Some(StateSpace::Global | StateSpace::Const) => Space::Global,
            Some(s) if s.is_shared() => Space::Shared,
            Some(StateSpace::Local) => Space::Local,
            // A function-scope `.param` variable lives in local memory.
            Some(s) if s.is_param() && sym == Some(Space::Local) => Space::Local,
            Some(s) if s.is_param() => Space::Param,
            Some(s) => return Err(format!("state space .{s} not supported")),
        })
    }

    fn op(&mut self, idx: usize, inst: &Inst) -> R<Op> {
        let ops = &inst.operands;
        let m = &inst.mods;
        let o = |k: usize| ops.get(k);
        if m.cc {
            return Err(format!(
                "{}.cc (carry-out to the condition code) not supported",
                inst.op
            ));
        }
        if !m.other.is_empty()
            && !matches!(
                inst.op,
                Opcode::Bar
                    | Opcode::Barrier
                    | Opcode::Testp
                    | Opcode::Shf
                    | Opcode::Prmt
                    | Opcode::Ld
                    | Opcode::Ldu
                    | Opcode::St
                    | Opcode::Membar
                    | Opcode::Fence
            )
        {
            return Err(format!("modifiers .{} not supported", m.other.join(".")));
        }
        let op = match inst.op {
            Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Div
            | Opcode::Rem
            | Opcode::Min
            | Opcode::Max
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::Mul24
            | Opcode::Copysign => self.binary(inst)?,
            Opcode::Not
            | Opcode::Cnot
            | Opcode::Neg
            | Opcode::Abs
            | Opcode::Popc
            | Opcode::Clz
            | Opcode::Brev
            | Opcode::Bfind
            | Opcode::Rcp
            | Opcode::Sqrt
            | Opcode::Rsqrt
            | Opcode::Sin
            | Opcode::Cos
            | Opcode::Lg2
            | Opcode::Ex2
            | Opcode::Tanh => self.unary(inst)?,
            Opcode::Mad | Opcode::Fma | Opcode::Mad24 | Opcode::Sad => self.mad(inst)?,
            Opcode::Bfe => {
                let t = self.ty(inst, 0)?;
                let u32t = Ty {
                    kind: Kind::U,
                    bits: 32,
                };
                Op::Bfe {
                    signed: t.kind == Kind::S,
                    bits: t.bits,
                    d: self.dst(o(0))?,
                    a: self.src(o(1), t)?,
                    b: self.src(o(2), u32t)?,
                    c: self.src(o(3), u32t)?,
                }
            }
            Opcode::Bfi => {
                let t = self.ty(inst, 0)?;
                let u32t = Ty {
                    kind: Kind::U,
                    bits: 32,
                };
                Op::Bfi {
                    bits: t.bits,
                    d: self.dst(o(0))?,
                    f: self.src(o(1), t)?,
                    a: self.src(o(2), t)?,
                    b: self.src(o(3), u32t)?,
                    c: self.src(o(4), u32t)?,
                }
            }
            Opcode::Prmt => {
                if !m.other.is_empty() {
                    return Err(format!("prmt mode .{} not supported", m.other.join(".")));
                }
                let t = Ty {
                    kind: Kind::U,
                    bits: 32,
                };
                Op::Prmt {
                    d: self.dst(o(0))?,
                    a: self.src(o(1), t)?,
                    b: self.src(o(2), t)?,
                    c: self.src(o(3), t)?,
                }
            }
            Opcode::Shf => {
                let w = |s: &str| m.other.iter().any(|x| x == s);
                if m.other.len() != 2 || !(w("l") || w("r")) || !(w("wrap") || w("clamp")) {
                    return Err("shf needs .l/.r and .wrap/.clamp".into());
                }
                let t = Ty {
                    kind: Kind::U,
                    bits: 32,
                };
                Op::Shf {
                    left: w("l"),
                    wrap: w("wrap"),
                    d: self.dst(o(0))?,
                    a: self.src(o(1), t)?,
                    b: self.src(o(2), t)?,
                    c: self.src(o(3), t)?,
                }
            }
            Opcode::Selp => {
                let t = self.ty(inst, 0)?;
                let p = Ty {
                    kind: Kind::U,
                    bits: 1,
                };
                Op::Selp {
                    bits: t.bits,
                    d: self.dst(o(0))?,
                    a: self.src(o(1), t)?,
                    b: self.src(o(2), t)?,
                    c: self.src(o(3), p)?,
                }
            }
            Opcode::Slct => {
                let t = self.ty(inst, 0)?;
                let ct = self.ty(inst, 1)?;
                Op::Slct {
                    bits: t.bits,
                    float: ct.kind == Kind::F,
                    d: self.dst(o(0))?,
                    a: self.src(o(1), t)?,
                    b: self.src(o(2), t)?,
                    c: self.src(o(3), ct)?,
                }
            }
            Opcode::Setp | Opcode::Set => self.compare(inst)?,
            Opcode::Cvt => {
                let dty = self.ty(inst, 0)?;
                let sty = self.ty(inst, 1)?;
                if dty.kind != Kind::F && sty.kind != Kind::F && m.rounding.is_some() {
                    return Err("rounding on an integer conversion".into());
                }
                Op::Cvt {
                    dty,
                    sty,
                    rnd: m.rounding,
                    sat: m.sat,
                    ftz: m.ftz,
                    d: self.dst(o(0))?,
                    a: self.src(o(1), sty)?,
                }
            }
            Opcode::Mov => self.mov(inst)?,
            Opcode::Cvta => {
                let space = match m.space {
                    Some(StateSpace::Global | StateSpace::Const) => Space::Global,
                    Some(s) if s.is_shared() => Space::Shared,
                    Some(StateSpace::Local) => Space::Local,
                    Some(s) => return Err(format!("cvta.{s} not supported")),
                    None => {
                        return Err("cvta needs a state space (.global, .shared, .local)".into())
                    }
                };
                let t = self.ty(inst, 0)?;
                Op::Cvta {
                    to: m.to,
                    space,
                    d: self.dst(o(0))?,
                    a: self.src(o(1), t)?,
                }
            }
            Opcode::Testp => {
                let k = match m.other.first().map(String::as_str) {
                    Some("finite") => TestP::Finite,
                    Some("infinite") => TestP::Infinite,
                    Some("number") => TestP::Number,
                    Some("notanumber") => TestP::NotANumber,
                    Some("normal") => TestP::Normal,
                    Some("subnormal") => TestP::Subnormal,
                    Some(w) => return Err(format!("testp.{w} not supported (expected .finite, .infinite, .number, .notanumber, .normal or .subnormal)")),
                    None => return Err("testp needs a test (.finite, .infinite, .number, .notanumber, .normal or .subnormal)".into()),
                };
                let t = self.ty(inst, 0)?;
                Op::Testp {
                    k,
                    f64: t.bits == 64,
                    d: self.dst(o(0))?,
                    a: self.src(o(1), t)?,
                }
            }
            Opcode::Ld | Opcode::Ldu => {
                if let Some(w) = m.other.first() {
                    return Err(format!("ld modifier .{w} not supported"));
                }
                let ty = self.ty(inst, 0)?;
                let (addr, sym) = self.addr(o(1))?;
                let (n, ds) = match o(0) {
                    Some(Operand::Vector(v)) => {
                        let mut ds = [NO_REG; 4];
                        if v.len() > 4 {
                            return Err("vectors wider than 4 not supported".into());
                        }
                        for (k, e) in v.iter().enumerate() {
                            ds[k] = self.dst(Some(e))?;
                        }
                        (v.len() as u8, ds)
                    }
                    other => (1, [self.dst(other)?, NO_REG, NO_REG, NO_REG]),
                };
                Op::Ld {
                    space: self.space(inst, sym)?,
                    ty,
                    n,
                    ds,
                    addr,
                }
            }
            Opcode::St => {
                if let Some(w) = m.other.first() {
                    return Err(format!("st modifier .{w} not supported"));
                }
                let ty = self.ty(inst, 0)?;
                let (addr, sym) = self.addr(o(0))?;
                let (n, srcs) = match o(1) {
                    Some(Operand::Vector(v)) => {
                        let mut s = [Src::Imm(0); 4];
                        if v.len() > 4 {
                            return Err("vectors wider than 4 not supported".into());
                        }
                        for (k, e) in v.iter().enumerate() {
                            s[k] = self.src(Some(e), ty)?;
                        }
                        (v.len() as u8, s)
                    }
                    other => (
                        1,
                        [self.src(other, ty)?, Src::Imm(0), Src::Imm(0), Src::Imm(0)],
                    ),
                };
                Op::St {
                    space: self.space(inst, sym)?,
                    ty,
                    n,
                    srcs,
                    addr,
                }
            }
            Opcode::Atom | Opcode::Red => {
                let k = m.atom.ok_or("atom without operation")?;
                let ty = self.ty(inst, 0)?;
                let red = inst.op == Opcode::Red;
                let base = usize::from(!red);
                let d = if red { NO_REG } else { self.dst(o(0))? };
                let (addr, sym) = self.addr(o(base))?;
                let b = self.src(o(base + 1), ty)?;
                let c = if k == AtomOp::Cas {
                    self.src(o(base + 2), ty)?
                } else {
                    Src::Imm(0)
                };
                if ty.kind == Kind::F
                    && !matches!(k, AtomOp::Add | AtomOp::Exch | AtomOp::Min | AtomOp::Max)
                {
                    return Err(format!("atom.{k} on floats not supported"));
                }
                if matches!(k, AtomOp::Inc | AtomOp::Dec) && ty.bits != 32 {
                    return Err("atom.inc/dec need .u32".into());
                }
                Op::Atom {
                    space: self.space(inst, sym)?,
                    k,
                    ty,
                    d,
                    addr,
                    b,
                    c,
                }
            }
            Opcode::Bra => {
                let target = ops
                    .iter()
                    .find_map(|o| match o {
                        Operand::Label(l) => self.f.labels.get(l.index()).map(|l| l.target.0),
                        _ => None,
                    })
                    .ok_or("bra without a label")?;
                Op::Bra {
                    target,
                    rpc: self.rpcs.get(idx).copied().unwrap_or(u32::MAX),
                }
            }
            Opcode::Ret | Opcode::Exit => Op::Exit,
            Opcode::Trap => Op::Trap,
            Opcode::Bar | Opcode::Barrier => self.barrier(inst)?,
            Opcode::BarWarpSync
            | Opcode::Membar
            | Opcode::Fence
            | Opcode::Prefetch
            | Opcode::Prefetchu => Op::Nop,
            Opcode::Shfl => {
                let mode = m.shfl.ok_or("shfl without mode")?;
                let t = Ty {
                    kind: Kind::U,
                    bits: 32,
                };
                let (d, p) = match o(0) {
                    Some(Operand::PredPair(d, p)) => (d.0, p.0),
                    other => (self.dst(other)?, NO_REG),
                };
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(o(1), t)?,
                    b: self.src(o(2), t)?,
                    c: self.src(o(3), t)?,
                }
            }
            Opcode::Vote => {
                let mode = m.vote.ok_or("vote without mode")?;
                if mode == VoteMode::Ballot && m.types.first() != Some(&ScalarType::B32) {
                    return Err("vote.ballot needs .b32".into());
                }
                Op::Vote {
                    mode,
                    d: self.dst(o(0))?,
                    a: self.src(
                        o(1),
                        Ty {
                            kind: Kind::U,
                            bits: 1,
                        },
                    )?,
                }
            }
            Opcode::Activemask => Op::Activemask { d: self.dst(o(0))? },
            // CUDA's `printf` (debug output in many public kernels): the interpreter does not
            // print, and the call's result (read from `retval0`, zeroed local memory) is 0.
            Opcode::Call
                if ptx_parser::calls::external_callee(self.module, inst) == Some("vprintf") =>
            {
                Op::Nop
            }
            Opcode::Call => {
                return Err(format!(
                    "call: {}",
                    ptx_parser::calls::why_not_inlined(self.module, inst)
                ))
            }
            Opcode::Match => {
                let all = match m.vote {
                    Some(VoteMode::Any) => false,
                    Some(VoteMode::All) => true,
                    _ => return Err("match needs .any or .all".into()),
                };
                let bits = match m.types.first() {
                    Some(ScalarType::B32) => 32,
                    Some(ScalarType::B64) => 64,
                    _ => return Err("match needs .b32 or .b64".into()),
                };
                let (d, p) = match o(0) {
                    Some(Operand::PredPair(d, p)) => (d.0, p.0),
                    other => (self.dst(other)?, NO_REG),
                };
                let t = Ty {
                    kind: Kind::U,
                    bits,
                };
                let u32t = Ty {
                    kind: Kind::U,
                    bits: 32,
                };
                Op::Match {
                    all,
                    bits,
                    d,
                    p,
                    a: self.src(o(1), t)?,
                    m: self.src(o(2), u32t)?,
                }
            }
            Opcode::Redux => {
                let ty = m.types.first().copied();
                let op = match (m.atom, ty) {
                    (Some(AtomOp::Add), Some(ScalarType::U32 | ScalarType::S32)) => ReduxOp::Add,
                    (Some(AtomOp::Min), Some(ScalarType::U32 | ScalarType::S32)) => ReduxOp::Min,
                    (Some(AtomOp::Max), Some(ScalarType::U32 | ScalarType::S32)) => ReduxOp::Max,
                    (Some(AtomOp::And), Some(ScalarType::B32)) => ReduxOp::And,
                    (Some(AtomOp::Or), Some(ScalarType::B32)) => ReduxOp::Or,
                    (Some(AtomOp::Xor), Some(ScalarType::B32)) => ReduxOp::Xor,
                    _ => {
                        return Err(
                            "redux.sync: only .add/.min/.max on .u32/.s32 and .and/.or/.xor \
                             on .b32 are supported"
                                .into(),
                        )
                    }
                };
                let u32t = Ty {
                    kind: Kind::U,
                    bits: 32,
                };
                Op::Redux {
                    op,
                    signed: ty == Some(ScalarType::S32),
                    d: self.dst(o(0))?,
                    a: self.src(o(1), u32t)?,
                    m: self.src(o(2), u32t)?,
                }
            }
            ref other => return Err(format!("opcode `{other}` not supported")),
        };
        Ok(op)
    }

    /// `bar{.cta}.sync a{, b}`, `bar{.cta}.arrive a, b`, `bar{.cta}.red.op.type d, a{, b},
    /// {!}c` and their `barrier{.cta}` spellings (PTX ISA 9.7.13.1): barrier `a` (0..15),
    /// `b` threads (a multiple of the warp size; every thread of the TB when absent).
    fn barrier(&mut self, inst: &Inst) -> R<Op> {
        let m = &inst.mods;
        let words: Vec<&str> = m.other.iter().map(String::as_str).collect();
        let ops = &inst.operands;
        let u32t = Ty {
            kind: Kind::U,
            bits: 32,
        };
        let count = |this: &mut Self, k: usize| -> R<Option<Src>> {
            match ops.get(k) {
                None => Ok(None),
                o => this.src(o, u32t).map(Some),
            }
        };
        match words.as_slice() {
            [] => {
                if ops.len() > 2 {
                    return Err(format!(
                        "bar.sync takes 1 or 2 operands, found {}",
                        ops.len()
                    ));
                }
                Ok(Op::Bar {
                    arrive: false,
                    id: self.src(ops.first(), u32t)?,
                    count: count(self, 1)?,
                    red: None,
                })
            }
            ["arrive"] => {
                if ops.len() != 2 {
                    return Err(format!("bar.arrive takes 2 operands, found {}", ops.len()));
                }
                Ok(Op::Bar {
                    arrive: true,
                    id: self.src(ops.first(), u32t)?,
                    count: count(self, 1)?,
                    red: None,
                })
            }
            ["red", "popc"] | ["red", "and"] | ["red", "or"] => {
                let k = match words.last() {
                    Some(&"popc") => BarRed::Popc,
                    Some(&"and") => BarRed::And,
                    _ => BarRed::Or,
                };
                if !(3..=4).contains(&ops.len()) {
                    return Err(format!(
                        "bar.red takes 3 or 4 operands, found {}",
                        ops.len()
                    ));
                }
                let d = self.dst(ops.first())?;
                let p = self.src(
                    ops.last(),
                    Ty {
                        kind: Kind::U,
                        bits: 1,
                    },
                )?;
                Ok(Op::Bar {
                    arrive: false,
                    id: self.src(ops.get(1), u32t)?,
                    count: if ops.len() == 4 {
                        count(self, 2)?
                    } else {
                        None
                    },
                    red: Some((k, d, p)),
                })
            }
            _ => Err(format!("barrier form .{} not supported", words.join("."))),
        }
    }

    fn binary(&mut self, inst: &Inst) -> R<Op> {
        let m = &inst.mods;
        let t = self.ty(inst, 0)?;
        let o = |k: usize| inst.operands.get(k);
        let d = self.dst(o(0))?;
        // Shift amounts are .u32 whatever the shifted type.
        let bt = if matches!(inst.op, Opcode::Shl | Opcode::Shr) {
            Ty {
                kind: Kind::U,
                bits: 32,
            }
        } else {
            t
        };
        let a = self.src(o(1), t)?;
        let b = self.src(o(2), bt)?;
        if t.kind == Kind::F {
            let k = match inst.op {
                Opcode::Add => FBin::Add,
                Opcode::Sub => FBin::Sub,
                Opcode::Mul => FBin::Mul,
                Opcode::Div => FBin::Div,
                Opcode::Min => FBin::Min,
                Opcode::Max => FBin::Max,
                Opcode::Copysign => FBin::Copysign,
                ref op => return Err(format!("{op} on floats not supported")),
            };
            if t.bits == 64 {
                if !matches!(m.rounding, None | Some(Rounding::Rn)) || m.sat {
                    return Err("f64 with directed rounding or .sat not supported".into());
                }
                return Ok(Op::F64Bin { k, d, a, b });
            }
            let rnd =
                if m.precision == Some(Precision::Approx) || m.precision == Some(Precision::Full) {
                    Rnd::Rn
                } else {
                    rnd_of(m.rounding)?
                };
            return Ok(Op::F32Bin {
                k,
                rnd,
                ftz: m.ftz,
                sat: m.sat,
                d,
                a,
                b,
            });
        }
        let s = t.kind == Kind::S;
        let k = match (&inst.op, m.mul) {
            (Opcode::Add, _) if !m.sat => IBin::Add,
            (Opcode::Sub, _) if !m.sat => IBin::Sub,
            (Opcode::Mul, None | Some(MulMode::Lo)) => IBin::MulLo,
            (Opcode::Mul, Some(MulMode::Hi)) => pick(s, IBin::MulHiS, IBin::MulHiU),
            (Opcode::Mul, Some(MulMode::Wide)) => pick(s, IBin::MulWideS, IBin::MulWideU),
            (Opcode::Mul24, None | Some(MulMode::Lo)) => pick(s, IBin::Mul24LoS, IBin::Mul24LoU),
            (Opcode::Mul24, Some(MulMode::Hi)) => pick(s, IBin::Mul24HiS, IBin::Mul24HiU),
            (Opcode::Div, _) => pick(s, IBin::DivS, IBin::DivU),
            (Opcode::Rem, _) => pick(s, IBin::RemS, IBin::RemU),
            (Opcode::Min, _) => pick(s, IBin::MinS, IBin::MinU),
            (Opcode::Max, _) => pick(s, IBin::MaxS, IBin::MaxU),
            (Opcode::And, _) => IBin::And,
            (Opcode::Or, _) => IBin::Or,
            (Opcode::Xor, _) => IBin::Xor,
            (Opcode::Shl, _) => IBin::Shl,
            (Opcode::Shr, _) => pick(s, IBin::ShrS, IBin::ShrU),
            (op, _) => return Err(format!("{op} with these modifiers not supported")),
        };
        Ok(Op::IBin {
            k,
            bits: t.bits,
            d,
            a,
            b,
        })
    }

    fn unary(&mut self, inst: &Inst) -> R<Op> {
        let m = &inst.mods;
        let t = self.ty(inst, 0)?;
        let o = |k: usize| inst.operands.get(k);
        let d = self.dst(o(0))?;
        let a = self.src(o(1), t)?;
        if t.kind == Kind::F {
            let k = match inst.op {
                Opcode::Neg => FUn::Neg,
                Opcode::Abs => FUn::Abs,
                Opcode::Rcp => FUn::Rcp,
                Opcode::Sqrt => FUn::Sqrt,
                Opcode::Rsqrt => FUn::Rsqrt,
                Opcode::Sin => FUn::Sin,
                Opcode::Cos => FUn::Cos,
                Opcode::Lg2 => FUn::Lg2,
                Opcode::Ex2 => FUn::Ex2,
                Opcode::Tanh => FUn::Tanh,
                ref op => return Err(format!("{op} on floats not supported")),
            };
            if !matches!(m.rounding, None | Some(Rounding::Rn)) {
                return Err("directed rounding on rcp/sqrt not supported".into());
            }
            return Ok(if t.bits == 64 {
                Op::F64Un { k, d, a }
            } else {
                Op::F32Un {
                    k,
                    ftz: m.ftz,
                    d,
                    a,
                }
            });
        }
        let k = match inst.op {
            Opcode::Not => IUn::Not,
            Opcode::Cnot => IUn::Cnot,
            Opcode::Neg => IUn::Neg,
            Opcode::Abs => IUn::Abs,
            Opcode::Popc => IUn::Popc,
            Opcode::Clz => IUn::Clz,
            Opcode::Brev => IUn::Brev,
            Opcode::Bfind if !m.other.is_empty() => {
                return Err("bfind.shiftamt not supported".into())
            }
            Opcode::Bfind => pick(t.kind == Kind::S, IUn::BfindS, IUn::BfindU),
            ref op => return Err(format!("{op} on integers not supported")),
        };
        Ok(Op::IUn {
            k,
            bits: t.bits,
            d,
            a,
        })
    }

    fn mad(&mut self, inst: &Inst) -> R<Op> {
        let m = &inst.mods;
        let t = self.ty(inst, 0)?;
        let o = |k: usize| inst.operands.get(k);
        let d = self.dst(o(0))?;
        let a = self.src(o(1), t)?;
        let b = self.src(o(2), t)?;
        if t.kind == Kind::F {
            let c = self.src(o(3), t)?;
            if t.bits == 64 {
                if !matches!(m.rounding, None | Some(Rounding::Rn)) || m.sat {
                    return Err("f64 fma with directed rounding or .sat not supported".into());
                }
                return Ok(Op::F64Fma { d, a, b, c });
            }
            return Ok(Op::F32Fma {
                rnd: rnd_of(m.rounding)?,
                ftz: m.ftz,
                sat: m.sat,
                d,
                a,
                b,
                c,
            });
        }
        let s = t.kind == Kind::S;
        let wide = m.mul == Some(MulMode::Wide);
        let ct = if wide {
            Ty {
                kind: t.kind,
                bits: t.bits * 2,
            }
        } else {
            t
        };
        let c = self.src(o(3), ct)?;
        if m.sat {
            return Err("mad.sat not supported".into());
        }
        let k = match (&inst.op, m.mul) {
            (Opcode::Mad, None | Some(MulMode::Lo)) => Mad::Lo,
            (Opcode::Mad, Some(MulMode::Hi)) => pick(s, Mad::HiS, Mad::HiU),
            (Opcode::Mad, Some(MulMode::Wide)) => pick(s, Mad::WideS, Mad::WideU),
            (Opcode::Mad24, None | Some(MulMode::Lo)) => pick(s, Mad::Lo24S, Mad::Lo24U),
            (Opcode::Sad, _) => Mad::Sad,
            (op, _) => return Err(format!("{op} with these modifiers not supported")),
        };
        Ok(Op::IMad {
            k,
            bits: t.bits,
            d,
            a,
            b,
            c,
        })
    }

    fn compare(&mut self, inst: &Inst) -> R<Op> {
        let m = &inst.mods;
        let o = |k: usize| inst.operands.get(k);
        let cmp = m.cmp.ok_or("comparison missing")?;
        let set = inst.op == Opcode::Set;
        let ty = self.ty(inst, usize::from(set))?;
        let a = self.src(o(1), ty)?;
        let b = self.src(o(2), ty)?;
        let comb = match m.bool_op {
            Some(op) => Some(Combine {
                op,
                c: self.src(
                    o(3),
                    Ty {
                        kind: Kind::U,
                        bits: 1,
                    },
                )?,
            }),
            None => None,
        };
        if set {
            let dty = self.ty(inst, 0)?;
            return Ok(Op::Set {
                cmp,
                ty,
                float_out: dty.kind == Kind::F,
                comb,
                d: self.dst(o(0))?,
                a,
                b,
            });
        }
        let (p, q) = match o(0) {
            Some(Operand::PredPair(p, q)) => (p.0, q.0),
            other => (self.dst(other)?, NO_REG),
        };
        Ok(Op::Setp {
            cmp,
            ty,
            comb,
            p,
            q,
            a,
            b,
        })
    }

    fn mov(&mut self, inst: &Inst) -> R<Op> {
        let t = self.ty(inst, 0)?;
        let o = |k: usize| inst.operands.get(k);
        match (o(0), o(1)) {
            (Some(Operand::Vector(ds)), src) => {
                let n = ds.len();
                if !(2..=4).contains(&n) || !(t.bits as usize).is_multiple_of(n) {
                    return Err("bad vector unpack".into());
                }
                let mut out = [NO_REG; 4];
                for (k, e) in ds.iter().enumerate() {
                    out[k] = self.dst(Some(e))?;
                }
                Ok(Op::Unpack {
                    ebits: (t.bits as usize / n) as u8,
                    n: n as u8,
                    ds: out,
                    a: self.src(src, t)?,
                })
            }
            (d, Some(Operand::Vector(ss))) => {
                let n = ss.len();
                if !(2..=4).contains(&n) || !(t.bits as usize).is_multiple_of(n) {
                    return Err("bad vector pack".into());
                }
                let et = Ty {
                    kind: Kind::U,
                    bits: (t.bits as usize / n) as u8,
                };
                let mut srcs = [Src::Imm(0); 4];
                for (k, e) in ss.iter().enumerate() {
                    srcs[k] = self.src(Some(e), et)?;
                }
                Ok(Op::Pack {
                    ebits: et.bits,
                    n: n as u8,
                    d: self.dst(d)?,
                    srcs,
                })
            }
            (d, s) => Ok(Op::Mov {
                bits: t.bits,
                d: self.dst(d)?,
                a: self.src(s, t)?,
            }),
        }
    }
}

fn pick<T>(signed: bool, s: T, u: T) -> T {
    if signed {
        s
    } else {
        u
    }
}

/// The bits of immediate `i` as an operand of type `ty` (float literals converted to the
/// operand's width, integers to floats by value).
pub(crate) fn imm_bits(i: Immediate, ty: Ty) -> u64 {
    let v = match (ty.kind, ty.bits, i) {
        (Kind::F, 32, Immediate::F32(b)) => u64::from(b),
        (Kind::F, 32, Immediate::F64(b)) => u64::from((f64::from_bits(b) as f32).to_bits()),
        (Kind::F, 32, Immediate::Int(v)) => u64::from((v as f32).to_bits()),
        (Kind::F, 32, Immediate::UInt(v)) => u64::from((v as f32).to_bits()),
        (Kind::F, 64, Immediate::F32(b)) => f64::from(f32::from_bits(b)).to_bits(),
        (Kind::F, 64, Immediate::Int(v)) => (v as f64).to_bits(),
        (Kind::F, 64, Immediate::UInt(v)) => (v as f64).to_bits(),
        _ => i.bits(),
    };
    if ty.bits >= 64 {
        v
    } else {
        v & ((1u64 << ty.bits) - 1)
    }
}
