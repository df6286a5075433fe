//! A warp: 32 lanes of registers in structure-of-arrays form (`regs[slot * 32 + lane]`), a
//! reconvergence stack, and [`Warp::step`], which executes one warp instruction for all active
//! lanes and returns a [`Control`] value. Global memory is reached through
//! [`GlobalMemory`]; everything a TB shares (shared memory, parameters, counters) is in
//! [`TbCtx`].
//!
//! Memory instructions (`ld`, `st`, `atom`: addresses, space resolution, checks) are in the
//! child module `memory_ops`.

// Lane loops index several 32-element arrays in lockstep, on purpose (they vectorise).
#![allow(clippy::needless_range_loop)]

use ptx_parser::{ShflMode, SpecialReg, VoteMode};

use super::barrier::{BarrierArrival, Barriers, RedAcc, NUM_BARRIERS, WARP_SIZE};
use super::decode::Program;
use super::exec::*;
use super::layout::{LOCAL_WINDOW, SHARED_WINDOW};
use super::memory::GlobalMemory;
use super::observer::MemObserver;
use super::ops::*;
use super::simt::{self, SimtStack};
use crate::error::{Loc, SimError};

const FULL: u32 = u32::MAX;

mod memory_ops;

/// What a warp does after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Ready for the next instruction.
    Continue,
    /// Waiting at a TB barrier.
    Barrier,
    /// Every thread has exited.
    Exited,
}

/// State shared by the warps of one TB.
pub struct TbCtx<'p> {
    pub(crate) prog: &'p Program,
    pub(crate) params: &'p [u8],
    pub(crate) shared: Vec<u8>,
    /// TB index.
    pub(crate) ctaid: [u32; 3],
    /// Grid shape.
    pub(crate) nctaid: [u32; 3],
    /// Block shape.
    pub(crate) ntid: [u32; 3],
    /// Linear TB id.
    pub(crate) linear: u64,
    /// Executions of each instruction (warp level).
    pub(crate) counts: Vec<u64>,
    /// Warp instructions executed.
    pub(crate) warp_insts: u64,
    /// Thread instructions executed (lanes with a true guard).
    pub(crate) thread_insts: u64,
    /// Stop when `warp_insts` reaches this.
    pub(crate) budget: u64,
    /// The TB's named barriers.
    pub(crate) barriers: Barriers,
    /// The barrier instruction the last step executed, for the timing trace.
    pub(crate) bar_last: Option<BarrierArrival>,
    pub(crate) dynamic_shared: u64,
    /// The SM the TB runs on and the SMs of the GPU (`%smid`, `%nsmid`): `[0, 1]` outside
    /// the timing model, where TBs run on no SM.
    pub(crate) sm: [u32; 2],
}

impl TbCtx<'_> {
    /// The error location of lane `lane` of warp `warp` at instruction `pc`.
    pub(crate) fn loc(&self, warp: u32, lane: usize, pc: u32) -> Box<Loc> {
        let t = warp * 32 + lane as u32;
        let [nx, ny, _] = self.ntid;
        let pc = pc as usize;
        Box::new(Loc {
            kernel: self.prog.kernel.clone(),
            tb: self.ctaid,
            thread: [t % nx, (t / nx) % ny, t / (nx * ny)],
            line: self.prog.lines.get(pc).copied().unwrap_or(0),
            inst: self.prog.texts.get(pc).cloned().unwrap_or_default(),
        })
    }
}

/// One warp of a TB.
pub struct Warp {
    pub(crate) id: u32,
    regs: Vec<u64>,
    stack: SimtStack,
    exited: u32,
    /// Lanes that hold threads.
    pub(crate) present: u32,
    local: Vec<u8>,
    local_bytes: usize,
    clock: u64,
    /// `bar.red` waiting for the barrier: (reduction, destination, lanes).
    pub(crate) pending_red: Option<(BarRed, u32, u32)>,
    /// Whether the TB's barriers have counted this warp's exit.
    pub(crate) exit_counted: bool,
    addrs: [u64; 32],
    /// The last executed instruction and the lanes that executed it.
    last: (u32, u32),
    /// Lane values of operands that are not registers (immediates, negated predicates, the
    /// destination itself), so no temporary is cleared per instruction.
    scratch: [[u64; 32]; 3],
}

/// A register file split around a destination slot `d`: the slots before it, its 32 lanes
/// (writable), and the slots after it. Sources other than `d` are borrowed from `lo` / `hi`
/// while the destination is written, so a lane loop reads and writes register storage
/// directly, without copies.
struct Split<'r> {
    lo: &'r [u64],
    dst: &'r mut [u64; 32],
    hi: &'r [u64],
    d: usize,
}

impl<'r> Split<'r> {
    #[inline(always)]
    fn new(regs: &'r mut [u64], d: u32) -> Option<Split<'r>> {
        let d = d as usize;
        let (lo, rest) = regs.split_at_mut_checked(d.checked_mul(32)?)?;
        let (dst, hi) = rest.split_first_chunk_mut::<32>()?;
        Some(Split { lo, dst, hi, d })
    }

    /// The lanes of slot `r`, which is not `d`.
    #[inline(always)]
    fn other(lo: &'r [u64], hi: &'r [u64], d: usize, r: usize) -> Option<&'r [u64; 32]> {
        let s = if r < d {
            lo.get(r * 32..r * 32 + 32)?
        } else {
            let o = (r - d - 1) * 32;
            hi.get(o..o + 32)?
        };
        s.try_into().ok()
    }

    /// The lanes of source `s`: borrowed from the register file when it is a register other
    /// than the destination, else computed into `tmp`.
    #[inline(always)]
    fn src<'t>(
        lo: &'t [u64],
        hi: &'t [u64],
        dst: &[u64; 32],
        d: usize,
        s: Src,
        clock: u64,
        tmp: &'t mut [u64; 32],
    ) -> &'t [u64; 32] {
        match s {
            Src::Reg(r) if r as usize != d => {
                if let Some(x) = Split::other(lo, hi, d, r as usize) {
                    return x;
                }
                *tmp = [0; 32];
            }
            Src::Reg(_) => *tmp = *dst,
            Src::NotPred(r) => {
                let v = if r as usize == d {
                    Some(dst)
                } else {
                    Split::other(lo, hi, d, r as usize)
                };
                negated_pred(v.map(|v| &v[..]), tmp);
            }
            Src::Imm(v) => *tmp = [v; 32],
            Src::Clock => *tmp = [clock; 32],
        }
        tmp
    }
}

/// The lanes of source `s` (no destination involved): borrowed from `regs` for a register,
/// else computed into `tmp`.
#[inline(always)]
fn src_ref<'t>(regs: &'t [u64], s: Src, clock: u64, tmp: &'t mut [u64; 32]) -> &'t [u64; 32] {
    match s {
        Src::Reg(r) => {
            let b = r as usize * 32;
            if let Some(x) = regs.get(b..b + 32).and_then(|x| x.try_into().ok()) {
                return x;
            }
            *tmp = [0; 32];
        }
        Src::NotPred(r) => {
            let b = r as usize * 32;
            negated_pred(regs.get(b..b + 32), tmp);
        }
        Src::Imm(v) => *tmp = [v; 32],
        Src::Clock => *tmp = [clock; 32],
    }
    tmp
}

/// `!p` per lane of the predicate register lanes `v` into `tmp` (zeros for a missing register).
#[inline(always)]
fn negated_pred(v: Option<&[u64]>, tmp: &mut [u64; 32]) {
    match v {
        Some(v) => {
            for (o, x) in tmp.iter_mut().zip(v) {
                *o = (x & 1) ^ 1;
            }
        }
        None => *tmp = [0; 32],
    }
}

#[inline(always)]
fn for_bits(mask: u32, mut f: impl FnMut(usize)) {
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        f(l);
    }
}

impl Warp {
    /// Warp `id` of the TB in `tb`, with the threads of `present` lanes.
    /// All warps of the TB `tb` describes, the last one with only the threads that exist.
    pub(crate) fn all_of(tb: &TbCtx<'_>) -> Vec<Warp> {
        let nthreads = tb.ntid.iter().map(|&v| u64::from(v)).product::<u64>();
        (0..nthreads.div_ceil(32) as u32)
            .map(|w| {
                let n = (nthreads - u64::from(w) * 32).min(32) as u32;
                let present = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
                Warp::new(tb, w, present)
            })
            .collect()
    }

    pub(crate) fn new(tb: &TbCtx<'_>, id: u32, present: u32) -> Warp {
        let prog = tb.prog;
        let mut regs = vec![0u64; prog.num_slots * 32];
        let [nx, ny, nz] = tb.ntid;
        let nwarps = (nx * ny * nz).div_ceil(32);
        for &(slot, sr) in &prog.specials {
            for lane in 0..32u32 {
                let t = id * 32 + lane;
                let dim = |d: ptx_parser::Dim, v: [u32; 3]| match d {
                    ptx_parser::Dim::X => v[0],
                    ptx_parser::Dim::Y => v[1],
                    ptx_parser::Dim::Z => v[2],
                };
                let tid = [t % nx, (t / nx) % ny, t / (nx * ny)];
                let v: u64 = match sr {
                    SpecialReg::Tid(d) => u64::from(dim(d, tid)),
                    SpecialReg::Ntid(d) => u64::from(dim(d, tb.ntid)),
                    SpecialReg::Ctaid(d) => u64::from(dim(d, tb.ctaid)),
                    SpecialReg::Nctaid(d) => u64::from(dim(d, tb.nctaid)),
                    SpecialReg::Laneid => u64::from(lane),
                    SpecialReg::Warpid => u64::from(id),
                    SpecialReg::Nwarpid => u64::from(nwarps),
                    SpecialReg::Smid => u64::from(tb.sm[0]),
                    SpecialReg::Nsmid => u64::from(tb.sm[1]),
                    SpecialReg::LanemaskEq => 1u64 << lane,
                    SpecialReg::LanemaskLt => (1u64 << lane) - 1,
                    SpecialReg::LanemaskLe => (1u64 << (lane + 1)) - 1,
                    SpecialReg::LanemaskGt => zx(!((1u64 << (lane + 1)) - 1), 32),
                    SpecialReg::LanemaskGe => zx(!((1u64 << lane) - 1), 32),
                    SpecialReg::DynamicSmemSize => tb.dynamic_shared,
                    SpecialReg::TotalSmemSize | SpecialReg::AggrSmemSize => tb.shared.len() as u64,
                    SpecialReg::WarpSz => 32,
                    SpecialReg::ClusterNctaid(_)
                    | SpecialReg::Nclusterid(_)
                    | SpecialReg::ClusterNctarank => 1,
                    _ => 0, // %gridid, cluster ids, %envreg, %pm, timers
                };
                regs[slot as usize * 32 + lane as usize] = v;
            }
        }
        let local_bytes = prog.layout.local_bytes as usize;
        Warp {
            id,
            regs,
            stack: SimtStack::new(present),
            exited: 0,
            present,
            local: vec![0; local_bytes * 32],
            local_bytes,
            clock: 0,
            pending_red: None,
            exit_counted: false,
            addrs: [0; 32],
            last: (0, 0),
            scratch: [[0; 32]; 3],
        }
    }

    /// The instruction index of the last instruction this warp executed, and the lanes that
    /// executed it (active, guard true).
    pub fn last(&self) -> (u32, u32) {
        self.last
    }

    /// Lanes whose threads have not exited.
    pub(crate) fn live(&self) -> u32 {
        self.present & !self.exited
    }

    /// The value of register `slot` in `lane`.
    pub fn reg(&self, slot: u32, lane: usize) -> u64 {
        self.regs
            .get(slot as usize * 32 + lane)
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn set_reg(&mut self, slot: u32, lane: usize, v: u64) {
        if let Some(r) = self.regs.get_mut(slot as usize * 32 + lane) {
            *r = v;
        }
    }

    #[inline(always)]
    fn gather(&self, s: Src) -> [u64; 32] {
        match s {
            Src::Reg(r) => {
                let b = r as usize * 32;
                let mut out = [0u64; 32];
                out.copy_from_slice(&self.regs[b..b + 32]);
                out
            }
            Src::NotPred(r) => {
                let b = r as usize * 32;
                let mut out = [0u64; 32];
                for (o, v) in out.iter_mut().zip(&self.regs[b..b + 32]) {
                    *o = (v & 1) ^ 1;
                }
                out
            }
            Src::Imm(v) => [v; 32],
            Src::Clock => [self.clock; 32],
        }
    }

    #[inline(always)]
    fn pred_mask(&self, slot: u32) -> u32 {
        let b = slot as usize * 32;
        let mut m = 0u32;
        for (l, v) in self.regs[b..b + 32].iter().enumerate() {
            m |= ((v & 1) as u32) << l;
        }
        m
    }

    #[inline(always)]
    fn src_mask(&self, s: Src) -> u32 {
        match s {
            Src::Reg(r) => self.pred_mask(r),
            Src::NotPred(r) => !self.pred_mask(r),
            Src::Imm(v) => {
                if v & 1 != 0 {
                    FULL
                } else {
                    0
                }
            }
            Src::Clock => 0,
        }
    }

    #[inline(always)]
    fn write(&mut self, mask: u32, d: u32, vals: &[u64; 32]) {
        if d == NO_REG {
            return;
        }
        let b = d as usize * 32;
        let dst = &mut self.regs[b..b + 32];
        if mask == FULL {
            dst.copy_from_slice(vals);
        } else {
            for_bits(mask, |l| dst[l] = vals[l]);
        }
    }

    #[inline(always)]
    fn map1(&mut self, mask: u32, d: u32, a: Src, f: impl Fn(u64) -> u64) {
        let clock = self.clock;
        let [ta, _, _] = &mut self.scratch;
        let Some(Split { lo, dst, hi, d }) = Split::new(&mut self.regs, d) else {
            return;
        };
        let x = Split::src(lo, hi, dst, d, a, clock, ta);
        if mask == FULL {
            for l in 0..32 {
                dst[l] = f(x[l]);
            }
        } else {
            for_bits(mask, |l| dst[l] = f(x[l]));
        }
    }

    #[inline(always)]
    fn map2(&mut self, mask: u32, d: u32, a: Src, b: Src, f: impl Fn(u64, u64) -> u64) {
        let clock = self.clock;
        let [ta, tb, _] = &mut self.scratch;
        let Some(Split { lo, dst, hi, d }) = Split::new(&mut self.regs, d) else {
            return;
        };
        let x = Split::src(lo, hi, dst, d, a, clock, ta);
        let y = Split::src(lo, hi, dst, d, b, clock, tb);
        if mask == FULL {
            for l in 0..32 {
                dst[l] = f(x[l], y[l]);
            }
        } else {
            for_bits(mask, |l| dst[l] = f(x[l], y[l]));
        }
    }

    #[inline(always)]
    fn map3(
        &mut self,
        mask: u32,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
        f: impl Fn(u64, u64, u64) -> u64,
    ) {
        let clock = self.clock;
        let [ta, tb, tc] = &mut self.scratch;
        let Some(Split { lo, dst, hi, d }) = Split::new(&mut self.regs, d) else {
            return;
        };
        let x = Split::src(lo, hi, dst, d, a, clock, ta);
        let y = Split::src(lo, hi, dst, d, b, clock, tb);
        let z = Split::src(lo, hi, dst, d, c, clock, tc);
        if mask == FULL {
            for l in 0..32 {
                dst[l] = f(x[l], y[l], z[l]);
            }
        } else {
            for_bits(mask, |l| dst[l] = f(x[l], y[l], z[l]));
        }
    }

    /// The lanes where `cmp` holds between `a` and `b` (type `ty`). Integer comparisons map
    /// both sides to unsigned keys (sign bit flipped for signed types) and run one loop per
    /// comparison, outside the lane loop; floats use [`compare`] per lane.
    #[inline(always)]
    fn compare_mask(&mut self, cmp: ptx_parser::CmpOp, ty: Ty, a: Src, b: Src) -> u32 {
        use ptx_parser::CmpOp as C;
        let [ta, tb, _] = &mut self.scratch;
        let x = src_ref(&self.regs, a, self.clock, ta);
        let y = src_ref(&self.regs, b, self.clock, tb);
        if ty.kind == Kind::F {
            let mut m = 0u32;
            for l in 0..32 {
                m |= u32::from(compare(cmp, ty, x[l], y[l])) << l;
            }
            return m;
        }
        let zm = zmask(ty.bits);
        let flip = if ty.kind == Kind::S {
            1u64 << (ty.bits.clamp(1, 64) - 1)
        } else {
            0
        };
        /// The lanes where `f` holds between the keys of `x` and `y`.
        #[inline(always)]
        fn lanes(
            x: &[u64; 32],
            y: &[u64; 32],
            zm: u64,
            flip: u64,
            f: impl Fn(u64, u64) -> bool,
        ) -> u32 {
            let mut m = 0u32;
            for l in 0..32 {
                m |= u32::from(f((x[l] & zm) ^ flip, (y[l] & zm) ^ flip)) << l;
            }
            m
        }
        match cmp {
            C::Eq | C::Equ => lanes(x, y, zm, flip, |p, q| p == q),
            C::Ne | C::Neu => lanes(x, y, zm, flip, |p, q| p != q),
            C::Lt | C::Lo | C::Ltu => lanes(x, y, zm, flip, |p, q| p < q),
            C::Le | C::Ls | C::Leu => lanes(x, y, zm, flip, |p, q| p <= q),
            C::Gt | C::Hi | C::Gtu => lanes(x, y, zm, flip, |p, q| p > q),
            C::Ge | C::Hs | C::Geu => lanes(x, y, zm, flip, |p, q| p >= q),
            C::Num => FULL,
            C::Nan => 0,
        }
    }

    /// Writes the result `r` of a `bar.red` of kind `k` into `d` for `lanes`.
    pub(crate) fn deliver_red(&mut self, k: BarRed, d: u32, lanes: u32, r: RedAcc) {
        let (popc, all, any) = r;
        let v = match k {
            BarRed::Popc => popc,
            BarRed::And => u64::from(all),
            BarRed::Or => u64::from(any),
        };
        for lane in 0..32 {
            if lanes >> lane & 1 != 0 {
                self.set_reg(d, lane, v);
            }
        }
    }

    /// The barrier number and the warps expected (0: the whole TB) of a barrier
    /// instruction, checked as the PTX ISA requires (9.7.13.1): number 0..15, the same in
    /// every lane, a thread count that is a positive multiple of the warp size and no more
    /// than the TB has.
    fn barrier_operands(
        &self,
        tb: &TbCtx<'_>,
        pc: u32,
        exec: u32,
        id: Src,
        count: Option<Src>,
    ) -> Result<(u32, u32), SimError> {
        let lane = exec.trailing_zeros() as usize;
        let err = |why: String| SimError::Barrier {
            why,
            loc: tb.loc(self.id, lane, pc),
        };
        let uniform = |s: Src| -> Result<u64, SimError> {
            let v = self.gather(s);
            let first = v[lane];
            let mut odd = 0u32;
            for_bits(exec, |l| odd |= u32::from(v[l] != first) << l);
            if odd != 0 {
                return Err(SimError::Barrier {
                    why: format!(
                        "barrier operand differs between lanes ({first} in lane {lane}, {} in lane {})",
                        v[odd.trailing_zeros() as usize],
                        odd.trailing_zeros()
                    ),
                    loc: tb.loc(self.id, odd.trailing_zeros() as usize, pc),
                });
            }
            Ok(first)
        };
        let b = uniform(id)? & 0xFFFF_FFFF;
        if b >= u64::from(NUM_BARRIERS) {
            return Err(err(format!(
                "barrier number {b} out of range (a TB has {NUM_BARRIERS} barriers, 0..{})",
                NUM_BARRIERS - 1
            )));
        }
        let Some(c) = count else {
            return Ok((b as u32, 0));
        };
        let c = uniform(c)? & 0xFFFF_FFFF;
        let threads: u64 = tb.ntid.iter().map(|&v| u64::from(v)).product();
        let warps = threads.div_ceil(u64::from(WARP_SIZE));
        if c == 0 || c % u64::from(WARP_SIZE) != 0 {
            return Err(err(format!(
                "barrier {b} thread count {c} is not a positive multiple of the warp size ({WARP_SIZE})"
            )));
        }
        if c / u64::from(WARP_SIZE) > warps {
            return Err(err(format!(
                "barrier {b} waits for {c} threads but the TB has {threads} ({warps} warps): it can never complete"
            )));
        }
        Ok((b as u32, (c / u64::from(WARP_SIZE)) as u32))
    }

    /// Executes the next instruction of this warp.
    pub fn step<M: GlobalMemory, O: MemObserver>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        obs: &mut O,
    ) -> Result<Control, SimError> {
        self.exec_one(tb, mem, obs)
    }

    /// Executes up to `quantum` instructions, stopping early when the warp waits at a
    /// barrier or exits (the same as calling [`Warp::step`] that often, without a call per
    /// instruction); [`Control::Continue`] when the quantum ran out.
    pub fn run<M: GlobalMemory, O: MemObserver>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        obs: &mut O,
        quantum: u64,
    ) -> Result<Control, SimError> {
        for _ in 0..quantum {
            match self.exec_one(tb, mem, obs)? {
                Control::Continue => {}
                c => return Ok(c),
            }
        }
        Ok(Control::Continue)
    }

    #[inline(always)]
    fn exec_one<M: GlobalMemory, O: MemObserver>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        obs: &mut O,
    ) -> Result<Control, SimError> {
        let Some((pc, active)) = self.stack.current(self.exited) else {
            return Ok(Control::Exited);
        };
        let prog = tb.prog;
        let Some(di) = prog.insts.get(pc as usize) else {
            // Falling off the end of the body (or a path that only reconverges at the exit).
            self.exited |= active;
            return Ok(Control::Continue);
        };
        if tb.warp_insts >= tb.budget {
            return Err(SimError::Budget {
                limit: tb.budget,
                loc: tb.loc(self.id, active.trailing_zeros() as usize, pc),
            });
        }
        tb.warp_insts += 1;
        self.clock += 1;
        if let Some(c) = tb.counts.get_mut(pc as usize) {
            *c += 1;
        }
        let mut exec = active;
        if di.guard != NO_REG {
            let g = self.pred_mask(di.guard);
            exec &= if di.guard_neg { !g } else { g };
        }
        tb.thread_insts += u64::from(exec.count_ones());
        self.last = (pc, exec);
        let next = pc + 1;
        match di.op {
            Op::IBin { k, bits, d, a, b } => self.ibin(tb, pc, exec, k, bits, d, a, b)?,
            Op::IUn { k, bits, d, a } => match k {
                IUn::Not => self.map1(exec, d, a, |x| zx(!x, bits)),
                IUn::Cnot => self.map1(exec, d, a, |x| u64::from(zx(x, bits) == 0)),
                IUn::Neg => self.map1(exec, d, a, |x| zx(x.wrapping_neg(), bits)),
                IUn::Abs => self.map1(exec, d, a, |x| zx(sx(x, bits).unsigned_abs(), bits)),
                IUn::Popc => self.map1(exec, d, a, |x| u64::from(zx(x, bits).count_ones())),
                IUn::Clz => self.map1(exec, d, a, |x| {
                    u64::from(zx(x, bits).leading_zeros() - (64 - u32::from(bits)))
                }),
                IUn::Brev => self.map1(exec, d, a, |x| {
                    zx(x.reverse_bits() >> (64 - u32::from(bits)), bits)
                }),
                IUn::BfindU => self.map1(exec, d, a, |x| {
                    let v = zx(x, bits);
                    if v == 0 {
                        0xFFFF_FFFF
                    } else {
                        u64::from(63 - v.leading_zeros())
                    }
                }),
                IUn::BfindS => self.map1(exec, d, a, |x| {
                    let v = sx(x, bits);
                    let v = if v < 0 { !v } else { v } as u64;
                    if v == 0 {
                        0xFFFF_FFFF
                    } else {
                        u64::from(63 - v.leading_zeros())
                    }
                }),
            },
            Op::F32Bin {
                k,
                rnd: Rnd::Rn,
                ftz: false,
                sat: false,
                d,
                a,
                b,
            } if matches!(k, FBin::Add | FBin::Sub | FBin::Mul) => match k {
                FBin::Add => self.map2(exec, d, a, b, |x, y| arith32(f32_of(x) + f32_of(y))),
                FBin::Sub => self.map2(exec, d, a, b, |x, y| arith32(f32_of(x) - f32_of(y))),
                _ => self.map2(exec, d, a, b, |x, y| arith32(f32_of(x) * f32_of(y))),
            },
            Op::F32Bin {
                k,
                rnd,
                ftz: fz,
                sat,
                d,
                a,
                b,
            } => self.map2(exec, d, a, b, |x, y| {
                let (x, y) = if fz {
                    (ftz(f32_of(x)), ftz(f32_of(y)))
                } else {
                    (f32_of(x), f32_of(y))
                };
                let mut r = f32_bin(k, rnd, x, y);
                if fz {
                    r = ftz(r);
                }
                if sat {
                    r = sat01(r);
                }
                // copysign only moves a sign bit; it keeps a NaN operand's bits.
                if k == FBin::Copysign {
                    bits32(r)
                } else {
                    arith32(r)
                }
            }),
            Op::F64Bin { k, d, a, b } => self.map2(exec, d, a, b, |x, y| {
                f64_bin(k, f64_of(x), f64_of(y)).to_bits()
            }),
            Op::F32Un { k, ftz: fz, d, a } => self.map1(exec, d, a, |x| {
                let x = f32_of(x);
                let r = if fz {
                    ftz(f32_un(k, ftz(x)))
                } else {
                    f32_un(k, x)
                };
                // neg and abs only change the sign bit, as on the GPU.
                if matches!(k, FUn::Neg | FUn::Abs) {
                    bits32(r)
                } else {
                    arith32(r)
                }
            }),
            Op::F64Un { k, d, a } => self.map1(exec, d, a, |x| f64_un(k, f64_of(x)).to_bits()),
            Op::IMad {
                k,
                bits,
                d,
                a,
                b,
                c,
            } => {
                let w = u32::from(bits);
                let zm = zmask(bits);
                match k {
                    Mad::Lo => self.map3(exec, d, a, b, c, |x, y, z| {
                        x.wrapping_mul(y).wrapping_add(z) & zm
                    }),
                    Mad::HiU => self.map3(exec, d, a, b, c, |x, y, z| {
                        zx(
                            (((u128::from(zx(x, bits)) * u128::from(zx(y, bits))) >> w) as u64)
                                .wrapping_add(z),
                            bits,
                        )
                    }),
                    Mad::HiS => self.map3(exec, d, a, b, c, |x, y, z| {
                        zx(
                            (((i128::from(sx(x, bits)) * i128::from(sx(y, bits))) >> w) as u64)
                                .wrapping_add(z),
                            bits,
                        )
                    }),
                    Mad::WideU => self.map3(exec, d, a, b, c, |x, y, z| {
                        zx(
                            (zx(x, bits).wrapping_mul(zx(y, bits))).wrapping_add(z),
                            bits * 2,
                        )
                    }),
                    Mad::WideS => self.map3(exec, d, a, b, c, |x, y, z| {
                        zx(
                            (sx(x, bits).wrapping_mul(sx(y, bits)) as u64).wrapping_add(z),
                            bits * 2,
                        )
                    }),
                    Mad::Lo24U => self.map3(exec, d, a, b, c, |x, y, z| {
                        zx((x & 0xFF_FFFF) * (y & 0xFF_FFFF) + z, 32)
                    }),
                    Mad::Lo24S => self.map3(exec, d, a, b, c, |x, y, z| {
                        zx(
                            (sx(x, 24).wrapping_mul(sx(y, 24)) as u64).wrapping_add(z),
                            32,
                        )
                    }),
                    Mad::Sad => self.map3(exec, d, a, b, c, |x, y, z| {
                        // The operand type decides signedness; unsigned difference of the extended values.
                        zx(zx(x, bits).abs_diff(zx(y, bits)).wrapping_add(z), bits)
                    }),
                }
            }
            Op::F32Fma {
                rnd,
                ftz: fz,
                sat,
                d,
                a,
                b,
                c,
            } if rnd == Rnd::Rn && !fz && !sat => self.map3(exec, d, a, b, c, |x, y, z| {
                arith32(f32_of(x).mul_add(f32_of(y), f32_of(z)))
            }),
            Op::F32Fma {
                rnd,
                ftz: fz,
                sat,
                d,
                a,
                b,
                c,
            } => self.map3(exec, d, a, b, c, |x, y, z| {
                let (x, y, z) = (f32_of(x), f32_of(y), f32_of(z));
                let mut r = if fz {
                    ftz(f32_fma(rnd, ftz(x), ftz(y), ftz(z)))
                } else {
                    f32_fma(rnd, x, y, z)
                };
                if sat {
                    r = sat01(r);
                }
                arith32(r)
            }),
            Op::F64Fma { d, a, b, c } => self.map3(exec, d, a, b, c, |x, y, z| {
                f64_of(x).mul_add(f64_of(y), f64_of(z)).to_bits()
            }),
            Op::Bfe {
                signed,
                bits,
                d,
                a,
                b,
                c,
            } => self.map3(exec, d, a, b, c, |x, y, z| {
                zx(bfe(signed, bits, x, y, z), bits)
            }),
            Op::Bfi {
                bits,
                d,
                f,
                a,
                b,
                c,
            } => {
                let fv = self.gather(f);
                let av = self.gather(a);
                let bv = self.gather(b);
                let cv = self.gather(c);
                let mut out = [0u64; 32];
                for l in 0..32 {
                    out[l] = bfi(bits, fv[l], av[l], bv[l], cv[l]);
                }
                self.write(exec, d, &out);
            }
            Op::Prmt { d, a, b, c } => self.map3(exec, d, a, b, c, prmt),
            Op::Shf {
                left,
                wrap,
                d,
                a,
                b,
                c,
            } => self.map3(exec, d, a, b, c, |x, y, z| shf(left, wrap, x, y, z)),
            Op::Selp { bits, d, a, b, c } => {
                let zm = zmask(bits);
                self.map3(exec, d, a, b, c, |x, y, z| {
                    (if z & 1 != 0 { x } else { y }) & zm
                })
            }
            Op::Slct {
                bits,
                float,
                d,
                a,
                b,
                c,
            } => self.map3(exec, d, a, b, c, |x, y, z| {
                let ge = if float {
                    f32_of(z) >= 0.0
                } else {
                    sx(z, 32) >= 0
                };
                zx(if ge { x } else { y }, bits)
            }),
            Op::Setp {
                cmp,
                ty,
                comb,
                p,
                q,
                a,
                b,
            } => {
                let m = self.compare_mask(cmp, ty, a, b);
                let (mp, mq) = match comb {
                    None => (m, !m),
                    Some(Combine { op, c }) => {
                        let cm = self.src_mask(c);
                        match op {
                            ptx_parser::BoolOp::And => (m & cm, !m & cm),
                            ptx_parser::BoolOp::Or => (m | cm, !m | cm),
                            ptx_parser::BoolOp::Xor => (m ^ cm, !m ^ cm),
                        }
                    }
                };
                self.write_pred(exec, p, mp);
                self.write_pred(exec, q, mq);
            }
            Op::Set {
                cmp,
                ty,
                float_out,
                comb,
                d,
                a,
                b,
            } => {
                let m = self.compare_mask(cmp, ty, a, b);
                let cm = comb.map(|c| (c.op, self.src_mask(c.c)));
                let mut out = [0u64; 32];
                for l in 0..32 {
                    let mut t = m >> l & 1 != 0;
                    if let Some((op, cm)) = cm {
                        let c = cm >> l & 1 != 0;
                        t = match op {
                            ptx_parser::BoolOp::And => t && c,
                            ptx_parser::BoolOp::Or => t || c,
                            ptx_parser::BoolOp::Xor => t ^ c,
                        };
                    }
                    out[l] = match (t, float_out) {
                        (true, true) => bits32(1.0),
                        (true, false) => 0xFFFF_FFFF,
                        (false, _) => 0,
                    };
                }
                self.write(exec, d, &out);
            }
            Op::Cvt {
                dty,
                sty,
                rnd,
                sat,
                ftz: fz,
                d,
                a,
            } => self.map1(exec, d, a, |x| cvt(dty, sty, rnd, sat, fz, x)),
            Op::Mov { bits, d, a } => {
                let zm = zmask(bits);
                self.map1(exec, d, a, |x| x & zm)
            }
            Op::Pack { ebits, n, d, srcs } => {
                let mut out = [0u64; 32];
                for (k, s) in srcs.iter().take(n as usize).enumerate() {
                    let v = self.gather(*s);
                    for l in 0..32 {
                        out[l] |= zx(v[l], ebits) << (k as u32 * u32::from(ebits));
                    }
                }
                self.write(exec, d, &out);
            }
            Op::Unpack { ebits, n, ds, a } => {
                let v = self.gather(a);
                for (k, &dk) in ds.iter().take(n as usize).enumerate() {
                    let mut out = [0u64; 32];
                    for l in 0..32 {
                        out[l] = zx(v[l] >> (k as u32 * u32::from(ebits)), ebits);
                    }
                    self.write(exec, dk, &out);
                }
            }
            Op::Cvta { to, space, d, a } => {
                let win = match space {
                    Space::Shared => SHARED_WINDOW,
                    Space::Local => LOCAL_WINDOW,
                    _ => 0,
                };
                if to {
                    self.map1(exec, d, a, |x| x.wrapping_sub(win));
                } else {
                    self.map1(exec, d, a, |x| x.wrapping_add(win));
                }
            }
            Op::Testp { k, f64, d, a } => {
                let x = self.gather(a);
                let mut m = 0u32;
                for l in 0..32 {
                    m |= u32::from(testp(k, f64, x[l])) << l;
                }
                self.write_pred(exec, d, m);
            }
            Op::Ld {
                space,
                ty,
                n,
                ds,
                addr,
            } => {
                let direct = space == Space::Global
                    && exec == FULL
                    && n == 1
                    && !obs.wants_global()
                    && self.load_direct(mem, ty, ds[0], addr);
                if !direct {
                    self.load(tb, mem, obs, pc, exec, space, ty, n, ds, addr)?;
                }
            }
            Op::St {
                space,
                ty,
                n,
                srcs,
                addr,
            } => self.store(tb, mem, obs, pc, exec, space, ty, n, srcs, addr)?,
            Op::Atom {
                space,
                k,
                ty,
                d,
                addr,
                b,
                c,
            } => self.atomic(tb, mem, obs, pc, exec, space, k, ty, d, addr, b, c)?,
            Op::Bra { target, rpc } => {
                self.stack.branch(active, exec, target, next, rpc);
                return Ok(Control::Continue);
            }
            Op::Exit => {
                self.exited |= exec;
            }
            Op::Trap => {
                if exec != 0 {
                    return Err(SimError::Trap {
                        loc: tb.loc(self.id, exec.trailing_zeros() as usize, pc),
                    });
                }
            }
            Op::Bar {
                arrive,
                id,
                count,
                red,
            } => {
                if exec == 0 {
                    self.stack.goto(next);
                    return Ok(Control::Continue);
                }
                let live = self.live();
                // Lanes of this warp that neither exited nor arrive may only be parked where
                // no barrier is reachable any more (an early `return` waiting at the `ret`
                // block): they will exit without synchronising, as on a GPU, so the warp
                // arrives for them. Lanes that would meet a barrier later make this one
                // divergent, which the PTX ISA leaves undefined for `bar.sync` (aligned).
                let missing = live & !exec;
                if missing != 0 {
                    let reaches = |p: u32| {
                        p != simt::EXIT_PC
                            && tb
                                .prog
                                .reaches_barrier
                                .get(p as usize)
                                .copied()
                                .unwrap_or(true)
                    };
                    if self.stack.parked_pcs(missing).any(reaches) {
                        return Err(SimError::DivergentBarrier {
                            why: format!(
                                "only lanes {exec:#010x} of warp {} arrive; lanes {missing:#010x} \
                                 have neither exited nor arrived, and may reach a barrier later",
                                self.id
                            ),
                            loc: tb.loc(self.id, missing.trailing_zeros() as usize, pc),
                        });
                    }
                }
                let (b, expected) = self.barrier_operands(tb, pc, exec, id, count)?;
                let contrib = red.map(|(_, _, p)| {
                    let pm = self.src_mask(p) & exec;
                    (u64::from(pm.count_ones()), pm == exec, pm != 0)
                });
                self.stack.goto(next);
                tb.bar_last = Some(BarrierArrival {
                    id: b as u8,
                    warps: expected as u16,
                    wait: !arrive,
                });
                match tb.barriers.arrive(self.id, b, expected, contrib, !arrive) {
                    Some(r) => {
                        if let Some((k, d, _)) = red {
                            self.deliver_red(k, d, exec, r);
                        }
                        return Ok(Control::Continue);
                    }
                    None if arrive => return Ok(Control::Continue),
                    None => {
                        self.pending_red = red.map(|(k, d, _)| (k, d, exec));
                        return Ok(Control::Barrier);
                    }
                }
            }
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
            } => {
                let x = self.gather(a);
                let y = self.gather(b);
                let z = self.gather(c);
                let mut out = [0u64; 32];
                let mut pm = 0u32;
                for l in 0..32usize {
                    let lane = l as i64;
                    let bval = (y[l] & 0x1F) as i64;
                    let cval = (z[l] & 0x1F) as i64;
                    let seg = ((z[l] >> 8) & 0x1F) as i64;
                    let max_lane = (lane & seg) | (cval & !seg);
                    let min_lane = lane & seg;
                    let (j, ok) = match mode {
                        ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                        ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                        ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !seg);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if ok { j } else { lane };
                    out[l] = x[(j & 31) as usize];
                    pm |= u32::from(ok) << l;
                }
                self.write(exec, d, &out);
                self.write_pred(exec, p, pm);
            }
            Op::Vote { mode, d, a } => {
                let ballot = self.src_mask(a) & exec;
                match mode {
                    VoteMode::Ballot => self.write(exec, d, &[u64::from(ballot); 32]),
                    VoteMode::All => {
                        self.write_pred(exec, d, if ballot == exec { FULL } else { 0 })
                    }
                    VoteMode::Any => self.write_pred(exec, d, if ballot != 0 { FULL } else { 0 }),
                    VoteMode::Uni => self.write_pred(
                        exec,
                        d,
                        if ballot == 0 || ballot == exec {
                            FULL
                        } else {
                            0
                        },
                    ),
                }
            }
            Op::Activemask { d } => self.write(exec, d, &[u64::from(active); 32]),
            Op::Match {
                all,
                bits,
                d,
                p,
                a,
                m,
            } => {
                let (x, mm) = (self.gather(a), self.gather(m));
                let z = zmask(bits);
                let mut out = [0u64; 32];
                let mut pm = 0u32;
                for_bits(exec, |l| {
                    // The lanes this lane compares with: its member mask, as far as they run.
                    let members = mm[l] as u32 & exec;
                    let mut same = 0u32;
                    for_bits(members, |j| {
                        if x[j] & z == x[l] & z {
                            same |= 1 << j;
                        }
                    });
                    let equal = same == members;
                    out[l] = u64::from(match (all, equal) {
                        (false, _) => same,
                        (true, true) => members,
                        (true, false) => 0,
                    });
                    pm |= u32::from(equal) << l;
                });
                self.write(exec, d, &out);
                self.write_pred(exec, p, pm);
            }
            Op::Redux {
                op,
                signed,
                d,
                a,
                m,
            } => {
                let (x, mm) = (self.gather(a), self.gather(m));
                let mut out = [0u64; 32];
                for_bits(exec, |l| {
                    let members = mm[l] as u32 & exec;
                    let mut acc: Option<u32> = None;
                    for_bits(members, |j| {
                        let v = x[j] as u32;
                        acc = Some(match acc {
                            None => v,
                            Some(s) => match op {
                                ReduxOp::Add => s.wrapping_add(v),
                                ReduxOp::Min if signed => (s as i32).min(v as i32) as u32,
                                ReduxOp::Max if signed => (s as i32).max(v as i32) as u32,
                                ReduxOp::Min => s.min(v),
                                ReduxOp::Max => s.max(v),
                                ReduxOp::And => s & v,
                                ReduxOp::Or => s | v,
                                ReduxOp::Xor => s ^ v,
                            },
                        });
                    });
                    out[l] = u64::from(acc.unwrap_or(0));
                });
                self.write(exec, d, &out);
            }
            Op::Nop => {}
            Op::Unsupported(ref why) => {
                if exec != 0 {
                    return Err(SimError::Unsupported {
                        why: why.clone(),
                        loc: tb.loc(self.id, exec.trailing_zeros() as usize, pc),
                    });
                }
            }
        }
        self.stack.goto(next);
        Ok(Control::Continue)
    }

    #[inline(always)]
    fn write_pred(&mut self, exec: u32, p: u32, m: u32) {
        if p == NO_REG {
            return;
        }
        let b = p as usize * 32;
        let dst = &mut self.regs[b..b + 32];
        if exec == FULL {
            for (l, v) in dst.iter_mut().enumerate() {
                *v = u64::from(m >> l & 1);
            }
        } else {
            for_bits(exec, |l| dst[l] = u64::from(m >> l & 1));
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn ibin(
        &mut self,
        tb: &TbCtx<'_>,
        pc: u32,
        exec: u32,
        k: IBin,
        bits: u8,
        d: u32,
        a: Src,
        b: Src,
    ) -> Result<(), SimError> {
        let w = u32::from(bits);
        let zm = zmask(bits);
        match k {
            IBin::Add => self.map2(exec, d, a, b, |x, y| x.wrapping_add(y) & zm),
            IBin::Sub => self.map2(exec, d, a, b, |x, y| x.wrapping_sub(y) & zm),
            IBin::MulLo => self.map2(exec, d, a, b, |x, y| x.wrapping_mul(y) & zm),
            IBin::MulHiU => self.map2(exec, d, a, b, |x, y| {
                zx(
                    ((u128::from(zx(x, bits)) * u128::from(zx(y, bits))) >> w) as u64,
                    bits,
                )
            }),
            IBin::MulHiS => self.map2(exec, d, a, b, |x, y| {
                zx(
                    ((i128::from(sx(x, bits)) * i128::from(sx(y, bits))) >> w) as u64,
                    bits,
                )
            }),
            IBin::MulWideU if bits == 32 => {
                self.map2(exec, d, a, b, |x, y| (x & 0xFFFF_FFFF) * (y & 0xFFFF_FFFF))
            }
            IBin::MulWideS if bits == 32 => self.map2(exec, d, a, b, |x, y| {
                (i64::from(x as u32 as i32) * i64::from(y as u32 as i32)) as u64
            }),
            IBin::MulWideU => self.map2(exec, d, a, b, |x, y| {
                zx(zx(x, bits).wrapping_mul(zx(y, bits)), bits * 2)
            }),
            IBin::MulWideS => self.map2(exec, d, a, b, |x, y| {
                zx(sx(x, bits).wrapping_mul(sx(y, bits)) as u64, bits * 2)
            }),
            IBin::Mul24LoU => self.map2(exec, d, a, b, |x, y| {
                zx((x & 0xFF_FFFF) * (y & 0xFF_FFFF), 32)
            }),
            IBin::Mul24LoS => self.map2(exec, d, a, b, |x, y| {
                zx(sx(x, 24).wrapping_mul(sx(y, 24)) as u64, 32)
            }),
            IBin::Mul24HiU => self.map2(exec, d, a, b, |x, y| {
                zx(((x & 0xFF_FFFF) * (y & 0xFF_FFFF)) >> 16, 32)
            }),
            IBin::Mul24HiS => self.map2(exec, d, a, b, |x, y| {
                zx((sx(x, 24).wrapping_mul(sx(y, 24)) >> 16) as u64, 32)
            }),
            IBin::DivU | IBin::DivS | IBin::RemU | IBin::RemS => {
                let y = self.gather(b);
                let zero = {
                    let mut m = 0u32;
                    for_bits(exec, |l| m |= u32::from(zx(y[l], bits) == 0) << l);
                    m
                };
                if zero != 0 {
                    return Err(SimError::DivideByZero {
                        loc: tb.loc(self.id, zero.trailing_zeros() as usize, pc),
                    });
                }
                match k {
                    IBin::DivU => self.map2(exec, d, a, b, |x, y| {
                        zx(x, bits).checked_div(zx(y, bits)).unwrap_or(0)
                    }),
                    IBin::RemU => self.map2(exec, d, a, b, |x, y| {
                        zx(x, bits).checked_rem(zx(y, bits)).unwrap_or(0)
                    }),
                    // Signed overflow (MIN / -1) wraps, like the hardware.
                    IBin::DivS => self.map2(exec, d, a, b, |x, y| {
                        let (x, y) = (sx(x, bits), sx(y, bits));
                        zx(if y == 0 { 0 } else { x.wrapping_div(y) } as u64, bits)
                    }),
                    _ => self.map2(exec, d, a, b, |x, y| {
                        let (x, y) = (sx(x, bits), sx(y, bits));
                        zx(if y == 0 { 0 } else { x.wrapping_rem(y) } as u64, bits)
                    }),
                }
            }
            IBin::MinU => self.map2(exec, d, a, b, |x, y| zx(x, bits).min(zx(y, bits))),
            IBin::MinS => self.map2(exec, d, a, b, |x, y| {
                zx(sx(x, bits).min(sx(y, bits)) as u64, bits)
            }),
            IBin::MaxU => self.map2(exec, d, a, b, |x, y| zx(x, bits).max(zx(y, bits))),
            IBin::MaxS => self.map2(exec, d, a, b, |x, y| {
                zx(sx(x, bits).max(sx(y, bits)) as u64, bits)
            }),
            IBin::And => self.map2(exec, d, a, b, |x, y| x & y & zm),
            IBin::Or => self.map2(exec, d, a, b, |x, y| (x | y) & zm),
            IBin::Xor => self.map2(exec, d, a, b, |x, y| (x ^ y) & zm),
            // Shift amounts larger than the width clamp (PTX ISA 9.7.8.8).
            IBin::Shl => self.map2(exec, d, a, b, |x, y| {
                let s = zx(y, 32);
                if s >= u64::from(w) {
                    0
                } else {
                    zx(x << s, bits)
                }
            }),
            IBin::ShrU => self.map2(exec, d, a, b, |x, y| {
                let s = zx(y, 32);
                if s >= u64::from(w) {
                    0
                } else {
                    zx(x, bits) >> s
                }
            }),
            IBin::ShrS => self.map2(exec, d, a, b, |x, y| {
                let s = zx(y, 32).min(u64::from(w) - 1);
                zx((sx(x, bits) >> s) as u64, bits)
            }),
        }
        Ok(())
    }
}
