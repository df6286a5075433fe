//! Decoding a kernel of the IR once into [`Program`]: every instruction becomes an [`Op`] with
//! register slots, immediates and resolved addresses; symbols get their addresses from the
//! memory layout (params, shared, local, module variables); branches get their
//! reconvergence point from [`super::simt::reconvergence_points`].
//!
//! Instructions the interpreter cannot execute decode to `Op::Unsupported` with a reason; they
//! only stop a run when executed. [`Program::unsupported`] lists them.
//!
//! The per-opcode dispatch (`Decoder::op`) is here; child modules hold `operands` (operand,
//! type, rounding and state-space decoding, immediates), `alu` (integer and float
//! arithmetic, `mad` / `fma`, comparisons, `mov`) and `barrier` (`bar` / `barrier` forms).

use std::sync::Arc;

use ptx_parser::{
    AtomOp, DeviceRuntimeFn, Function, Inst, InstId, Module, Opcode, Operand, ScalarType,
    SpecialReg, StateSpace, Symbol, VoteMode,
};

use super::layout::Layout;
use super::ops::*;
use super::simt;
use crate::SimError;

mod alu;
mod barrier;
mod operands;

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
    /// For a kernel that calls the device runtime: the module (shared with the programs of
    /// the kernels it launches) and each function's parameter-block size when it is a kernel
    /// (`interp::device_runtime`).
    pub(crate) children: Option<Arc<Children>>,
}

/// What the device runtime needs to know about the kernels a kernel may launch.
#[derive(Debug)]
pub(crate) struct Children {
    pub module: Arc<Module>,
    /// Per module function: its parameter-block bytes when it is an `.entry` with a body.
    pub param_bytes: Vec<Option<u64>>,
}

impl Children {
    fn of(module: Arc<Module>) -> Children {
        let param_bytes = module
            .functions
            .iter()
            .map(|g| (g.is_entry && g.has_body).then(|| Layout::compute(&module, g).param_bytes))
            .collect();
        Children {
            module,
            param_bytes,
        }
    }
}

impl Program {
    /// Decodes kernel `name` of `module`.
    pub fn new(module: &Module, name: &str) -> Result<Program, SimError> {
        let f = module
            .kernel(name)
            .filter(|f| f.has_body)
            .ok_or_else(|| SimError::NoKernel(name.to_string()))?;
        Ok(Program::from_function(module, f))
    }

    /// Decodes function `f` (an entry) of `module`.
    pub fn from_function(module: &Module, f: &Function) -> Program {
        let calls_runtime = f
            .insts
            .iter()
            .any(|i| ptx_parser::device_runtime::runtime_call(module, i).is_some());
        let children = calls_runtime.then(|| Arc::new(Children::of(Arc::new(module.clone()))));
        Program::decode(module, f, children)
    }

    /// Decodes kernel `index` of the module of `children` (a kernel launched from the device),
    /// sharing `children` with it.
    pub(crate) fn child(children: &Arc<Children>, index: u32) -> Option<Program> {
        let m = &children.module;
        let f = m
            .functions
            .get(index as usize)
            .filter(|f| f.is_entry && f.has_body)?;
        Some(Program::decode(m, f, Some(children.clone())))
    }

    /// Whether the program was decoded with the device runtime (it, or the module's kernels
    /// it launches, may launch grids from the device).
    pub(crate) fn calls_device_runtime(&self) -> bool {
        self.children.is_some()
    }

    /// Every function of the module decoded as the kernel of a child grid, by function index
    /// (`None`: not a kernel with a body); empty without the device runtime.
    pub(crate) fn child_programs(&self) -> Vec<Option<Program>> {
        let Some(c) = &self.children else {
            return Vec::new();
        };
        (0..c.module.functions.len() as u32)
            .map(|i| Program::child(c, i))
            .collect()
    }

    /// The module of a program decoded with the device runtime (its child kernels' module).
    pub(crate) fn child_module(&self) -> Option<&ptx_parser::Module> {
        self.children.as_ref().map(|c| &*c.module)
    }

    /// The function `index` of the module of a program decoded with the device runtime.
    pub(crate) fn child_function(&self, index: u32) -> Option<&ptx_parser::Function> {
        self.children
            .as_ref()
            .and_then(|c| c.module.functions.get(index as usize))
    }

    /// The parameter-block size of kernel `index` of the module (`None`: not a kernel).
    pub(crate) fn child_param_bytes(&self, index: u32) -> Option<u64> {
        self.children
            .as_ref()
            .and_then(|c| c.param_bytes.get(index as usize).copied().flatten())
    }

    /// The name of function `index` of the module.
    pub(crate) fn child_name(&self, index: u32) -> &str {
        self.children
            .as_ref()
            .and_then(|c| c.module.functions.get(index as usize))
            .map_or("?", |g| g.name.as_str())
    }

    fn decode(module: &Module, f: &Function, children: Option<Arc<Children>>) -> Program {
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
            children,
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
impl Decoder<'_> {
    /// A call of the device runtime: where its arguments and return value live.
    fn runtime_call(&self, f: DeviceRuntimeFn, inst: &Inst) -> R<Op> {
        let ops = inst.operands.as_slice();
        let at = ops
            .iter()
            .position(|o| matches!(o, Operand::Symbol(Symbol::Function(_))))
            .ok_or("call without a function")?;
        let offsets = |o: Option<&Operand>| -> R<Vec<u64>> {
            match o {
                None => Ok(Vec::new()),
                Some(Operand::List(v)) => v
                    .iter()
                    .map(|x| match x {
                        Operand::Symbol(Symbol::Local(i)) => {
                            match self.layout.local_vars.get(*i as usize) {
                                Some(Some((Space::Local, off))) => Ok(*off),
                                _ => Err(format!(
                                    "{}: an argument is not a .param variable",
                                    f.api_name()
                                )),
                            }
                        }
                        _ => Err(format!(
                            "{}: arguments must be .param variables",
                            f.api_name()
                        )),
                    })
                    .collect(),
                Some(_) => Err(format!("{}: malformed argument list", f.api_name())),
            }
        };
        let rets = if at == 0 {
            Vec::new()
        } else {
            offsets(ops.get(at - 1))?
        };
        let args = offsets(ops.get(at + 1))?;
        let want = match f {
            DeviceRuntimeFn::GetParameterBuffer => 4,
            DeviceRuntimeFn::LaunchDevice | DeviceRuntimeFn::StreamCreateWithFlags => 2,
            DeviceRuntimeFn::StreamDestroy | DeviceRuntimeFn::GetDevice => 1,
            DeviceRuntimeFn::GetLastError
            | DeviceRuntimeFn::PeekAtLastError
            | DeviceRuntimeFn::DeviceSynchronize => 0,
        };
        if args.len() != want || rets.len() > 1 {
            return Err(format!(
                "{} takes {want} arguments and returns one value; the call passes {} and takes {}",
                f.api_name(),
                args.len(),
                rets.len()
            ));
        }
        Ok(Op::Runtime(Box::new(
            crate::interp::device_runtime::RuntimeCall {
                f,
                args,
                ret: rets.first().copied(),
            },
        )))
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
            Opcode::Call => match ptx_parser::device_runtime::runtime_call(self.module, inst) {
                Some(DeviceRuntimeFn::DeviceSynchronize) => {
                    return Err(
                        "call to `cudaDeviceSynchronize`: a parent waiting for its child \
                                grids (CDP1) is gone from CUDA 12's device runtime (CDP2), and \
                                the interpreter runs child grids after their parent grid \
                                (interp::device_runtime); recompile with CUDA 12+, where \
                                children complete before the parent grid does"
                            .into(),
                    )
                }
                Some(f) => self.runtime_call(f, inst)?,
                None => {
                    return Err(format!(
                        "call: {}",
                        ptx_parser::calls::why_not_inlined(self.module, inst)
                    ))
                }
            },
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
}
