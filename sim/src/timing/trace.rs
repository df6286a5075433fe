//! Functional execution feeding the timing model: when the TB scheduler issues a TB, it is
//! run here by the interpreter, warp by warp, and recorded as per-warp instruction streams
//! (static instruction, active-lane count, coalesced blocks of each memory access, shared
//! bank-conflict degree). Register dependences and instruction classes come from the IR
//! ([`Kernel`]), keyed by the instruction's index.
//!
//! The interpreter reports memory instructions to a [`MemObserver`] but not the PC of the
//! other instructions, so this module steps the TB's warps itself (as the interpreter's own
//! runner does, through crate-internal constructors) and recovers each step's PC from the
//! per-instruction execution counters: the expected successor (`pc + 1`, or the branch
//! target) is checked first, the whole counter table is scanned only when neither matches
//! (a SIMT reconvergence pop). TBs are traced in the order they are issued, on one copy of
//! global memory, so kernels whose TBs do not race see the same values as `sim::run`.

use super::coalesce::{bank_conflicts, coalesce};
use crate::interp::memory::param_block;
use crate::interp::{
    AccessKind, Control, Globals, MemAccess, MemObserver, Program, Space, TbCtx, Warp,
};
use crate::SimError;
use launch::BoundLaunch;
use ptx_parser::{Function, Opcode, Operand};

/// Instruction classes with their own latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Integer, logic, moves, comparisons, conversions.
    Int,
    /// Single precision arithmetic.
    Fp,
    /// Double precision arithmetic.
    Dp,
    /// Special functions, divisions, square roots.
    Sfu,
    /// Branches, exits, shuffles, votes, fences.
    Ctrl,
    /// `bar.sync` / `barrier`.
    Barrier,
    /// Loads, stores, atomics.
    Mem,
}

/// What the timing model needs of one static instruction.
#[derive(Clone, Debug)]
pub struct StaticInst {
    /// Class.
    pub class: Class,
    /// Registers written (IR register indices).
    pub dsts: Vec<u32>,
    /// Registers read (including the guard).
    pub srcs: Vec<u32>,
    /// A branch's target instruction.
    pub target: Option<u32>,
}

/// The static instructions of a kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Per instruction index.
    pub insts: Vec<StaticInst>,
    /// Registers of the kernel (scoreboard size).
    pub num_regs: usize,
}

fn regs_of(o: &Operand, out: &mut Vec<u32>) {
    match o {
        Operand::Reg(r) | Operand::PredNeg(r) => out.push(r.0),
        Operand::PredPair(a, b) => out.extend([a.0, b.0]),
        Operand::Address(a) => {
            if let ptx_parser::AddrBase::Reg(r) = a.base {
                out.push(r.0);
            }
        }
        Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => {
            v.iter().for_each(|o| regs_of(o, out))
        }
        _ => {}
    }
}

impl Kernel {
    /// Classes and register operands of `f`'s instructions.
    pub fn new(f: &Function) -> Kernel {
        let insts = f
            .insts
            .iter()
            .map(|i| {
                use Opcode::*;
                let words = i.mods.words();
                let has = |w: &str| words.iter().any(|x| x == w);
                let class = match &i.op {
                    Ld | Ldu | St | Atom | Red | Prefetch | Prefetchu | CpAsync => Class::Mem,
                    Bar | Barrier => Class::Barrier,
                    Bra | BrxIdx | Call | Ret | Exit | Trap | Shfl | Vote | Match | Activemask
                    | Redux | Membar | Fence | BarWarpSync => Class::Ctrl,
                    Div | Rem | Rcp | Sqrt | Rsqrt | Sin | Cos | Lg2 | Ex2 | Tanh => {
                        if has("f64") && matches!(i.op, Div | Rem) {
                            Class::Dp
                        } else {
                            Class::Sfu
                        }
                    }
                    _ if has("f64") => Class::Dp,
                    _ if has("f32") || has("f16") || has("bf16") => Class::Fp,
                    _ => Class::Int,
                };
                let no_dst = matches!(
                    i.op,
                    St | Red
                        | Bra
                        | BrxIdx
                        | Ret
                        | Exit
                        | Trap
                        | Bar
                        | Barrier
                        | BarWarpSync
                        | Membar
                        | Fence
                        | Prefetch
                        | Prefetchu
                        | CpAsync
                );
                let mut dsts = Vec::new();
                let mut srcs = Vec::new();
                for (k, o) in i.operands.iter().enumerate() {
                    if k == 0 && !no_dst {
                        regs_of(o, &mut dsts);
                    } else {
                        regs_of(o, &mut srcs);
                    }
                }
                if let Some(g) = i.guard {
                    srcs.push(g.reg.0);
                }
                let target = i.operands.iter().find_map(|o| match o {
                    Operand::Label(l) => f.labels.get(l.index()).map(|l| l.target.index() as u32),
                    _ => None,
                });
                StaticInst {
                    class,
                    dsts,
                    srcs,
                    target,
                }
            })
            .collect();
        Kernel {
            insts,
            num_regs: f.regs.len(),
        }
    }
}

/// No memory operation.
pub const NO_MEM: u32 = u32::MAX;

/// One executed warp instruction.
#[derive(Clone, Copy, Debug)]
pub struct DynInst {
    /// Instruction index.
    pub pc: u32,
    /// Lanes that executed it (guard true).
    pub lanes: u8,
    /// Index into [`WarpTrace::mems`], or [`NO_MEM`].
    pub mem: u32,
}

/// One executed memory instruction.
#[derive(Clone, Copy, Debug)]
pub struct MemOp {
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Global or shared.
    pub space: Space,
    /// Global: the range of [`WarpTrace::blocks`] it touches. Shared: `len` is the
    /// bank-conflict degree.
    pub start: u32,
    /// See `start`.
    pub len: u32,
}

/// The instruction stream of one warp.
#[derive(Clone, Debug, Default)]
pub struct WarpTrace {
    /// Instructions in execution order.
    pub insts: Vec<DynInst>,
    /// Memory instructions.
    pub mems: Vec<MemOp>,
    /// Coalesced block addresses.
    pub blocks: Vec<u64>,
}

/// The streams of one TB.
#[derive(Clone, Debug, Default)]
pub struct TbTrace {
    /// Per warp.
    pub warps: Vec<WarpTrace>,
    /// Threads of the TB.
    pub threads: u32,
}

#[derive(Default)]
struct Recorder {
    block: u64,
    banks: u32,
    got: Vec<MemOp>,
    blocks: Vec<u64>,
}

impl MemObserver for Recorder {
    fn wants_shared(&self) -> bool {
        true
    }
    fn access(&mut self, a: &MemAccess<'_>) {
        let op = if a.space == Space::Shared {
            MemOp {
                kind: a.kind,
                space: a.space,
                start: 0,
                len: bank_conflicts(a.mask, a.addrs, a.size, self.banks),
            }
        } else {
            let start = self.blocks.len();
            coalesce(a.mask, a.addrs, a.size, self.block, &mut self.blocks);
            MemOp {
                kind: a.kind,
                space: a.space,
                start: start as u32,
                len: (self.blocks.len() - start) as u32,
            }
        };
        self.got.push(op);
    }
    fn split(&self, _: u64) -> Self {
        Recorder {
            block: self.block,
            banks: self.banks,
            ..Recorder::default()
        }
    }
    fn merge(&mut self, _: u64, _: Self) {}
}

/// Runs TBs functionally on demand and records their streams.
pub struct Tracer<'p> {
    prog: &'p Program,
    kernel: &'p Kernel,
    params: Vec<u8>,
    globals: Globals,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: usize,
    dynamic: u64,
    block_bytes: u64,
    banks: u32,
    budget: u64,
}

fn dim(v: u64, what: &str) -> Result<u32, SimError> {
    u32::try_from(v).map_err(|_| SimError::Setup(format!("{what} {v} too large")))
}

impl<'p> Tracer<'p> {
    /// A tracer of `prog` (whose IR gave `kernel`) over `bound`; global accesses coalesce
    /// into `block_bytes` blocks, shared ones into `banks` banks; `budget` bounds each TB's
    /// warp instructions.
    pub fn new(
        prog: &'p Program,
        kernel: &'p Kernel,
        bound: &BoundLaunch,
        block_bytes: u64,
        banks: u32,
        budget: u64,
    ) -> Result<Tracer<'p>, SimError> {
        let globals = Globals::from_launch(prog, bound)?;
        let l = &prog.layout;
        let grid = [
            dim(bound.grid.x, "grid.x")?,
            dim(bound.grid.y, "grid.y")?,
            dim(bound.grid.z, "grid.z")?,
        ];
        let block = [
            dim(bound.block.x, "block.x")?,
            dim(bound.block.y, "block.y")?,
            dim(bound.block.z, "block.z")?,
        ];
        if grid.contains(&0) || block.contains(&0) {
            return Err(SimError::Setup("empty grid or block".into()));
        }
        Ok(Tracer {
            prog,
            kernel,
            params: param_block(l, bound),
            globals,
            grid,
            block,
            shared_bytes: (l
                .shared_static
                .max(l.shared_dynamic_at + bound.dynamic_shared_bytes))
                as usize,
            dynamic: bound.dynamic_shared_bytes,
            block_bytes,
            banks,
            budget,
        })
    }

    /// Shared memory one TB uses.
    pub fn shared_bytes(&self) -> usize {
        self.shared_bytes
    }

    /// Runs TB `tb` (linear id) and returns its streams.
    pub fn trace(&mut self, tb: u64) -> Result<TbTrace, SimError> {
        let prog = self.prog;
        let [gx, gy, _] = self.grid;
        let (gx, gy) = (u64::from(gx), u64::from(gy));
        let mut ctx = TbCtx {
            prog,
            params: &self.params,
            shared: vec![0u8; self.shared_bytes],
            ctaid: [
                (tb % gx) as u32,
                ((tb / gx) % gy) as u32,
                (tb / (gx * gy)) as u32,
            ],
            nctaid: self.grid,
            ntid: self.block,
            linear: tb,
            counts: vec![0; prog.insts.len()],
            warp_insts: 0,
            thread_insts: 0,
            budget: self.budget,
            red: (0, true, false),
            dynamic_shared: self.dynamic,
        };
        let mut warps = Warp::all_of(&ctx);
        let nwarps = warps.len() as u32;
        let mut out: Vec<WarpTrace> = (0..nwarps).map(|_| WarpTrace::default()).collect();
        let mut guess = vec![0u32; nwarps as usize];
        let mut shadow = vec![0u64; prog.insts.len()];
        let mut rec = Recorder {
            block: self.block_bytes,
            banks: self.banks,
            ..Recorder::default()
        };
        let mut state = vec![Control::Continue; warps.len()];
        loop {
            for (wi, (w, st)) in warps.iter_mut().zip(state.iter_mut()).enumerate() {
                while *st == Control::Continue {
                    let (wi0, ti0) = (ctx.warp_insts, ctx.thread_insts);
                    rec.got.clear();
                    rec.blocks.clear();
                    *st = w.step(&mut ctx, &mut self.globals, &mut rec)?;
                    if ctx.warp_insts == wi0 {
                        continue;
                    }
                    let pc = self.find_pc(guess[wi], &ctx.counts, &shadow);
                    shadow[pc as usize] += 1;
                    let t = &mut out[wi];
                    let mem = match rec.got.first() {
                        Some(&op) => {
                            let base = t.blocks.len() as u32;
                            t.blocks.extend_from_slice(&rec.blocks);
                            let len = if op.space == Space::Shared {
                                rec.got.iter().map(|o| o.len).max().unwrap_or(1)
                            } else {
                                rec.blocks.len() as u32
                            };
                            t.mems.push(MemOp {
                                start: if op.space == Space::Shared { 0 } else { base },
                                len,
                                ..op
                            });
                            (t.mems.len() - 1) as u32
                        }
                        None => NO_MEM,
                    };
                    t.insts.push(DynInst {
                        pc,
                        lanes: (ctx.thread_insts - ti0) as u8,
                        mem,
                    });
                    guess[wi] = pc;
                }
            }
            if state.iter().all(|s| *s == Control::Exited) {
                break;
            }
            let (popc, all, any) = ctx.red;
            for (w, st) in warps.iter_mut().zip(state.iter_mut()) {
                if *st == Control::Barrier {
                    if let Some((k, d, mask)) = w.pending_red.take() {
                        let v = match k {
                            crate::interp::ops::BarRed::Popc => popc,
                            crate::interp::ops::BarRed::And => u64::from(all),
                            crate::interp::ops::BarRed::Or => u64::from(any),
                        };
                        for lane in 0..32 {
                            if mask >> lane & 1 != 0 {
                                w.set_reg(d, lane, v);
                            }
                        }
                    }
                    *st = Control::Continue;
                }
            }
            ctx.red = (0, true, false);
        }
        Ok(TbTrace {
            warps: out,
            threads: self.block.iter().product::<u32>(),
        })
    }

    /// The instruction the last step executed: the only one whose counter moved.
    fn find_pc(&self, last: u32, counts: &[u64], shadow: &[u64]) -> u32 {
        let moved = |i: u32| {
            counts
                .get(i as usize)
                .zip(shadow.get(i as usize))
                .is_some_and(|(c, s)| c != s)
        };
        for cand in [last + 1, last, 0] {
            if moved(cand) {
                return cand;
            }
        }
        if let Some(t) = self.kernel.insts.get(last as usize).and_then(|s| s.target) {
            if moved(t) {
                return t;
            }
        }
        counts
            .iter()
            .zip(shadow)
            .position(|(c, s)| c != s)
            .unwrap_or(0) as u32
    }
}
