//! A warp: 32 lanes of registers in structure-of-arrays form (`regs[slot * 32 + lane]`), a
//! reconvergence stack, and [`Warp::step`], which executes one warp instruction for all active
//! lanes and returns a [`Control`] value. Global memory is reached through
//! [`GlobalMemory`]; everything a TB shares (shared memory, parameters, counters) is in
//! [`TbCtx`].
//!
//! The instruction dispatch ([`Warp::step`], `exec_one`) is here; the rest is in child modules:
//! `lanes` (register access across the 32 lanes: operand gathering, per-lane maps, predicate
//! masks, comparisons), `int_ops` (integer binary arithmetic), `barrier_ops` (`bar` operand
//! checks and `bar.red` results) and `memory_ops` (`ld`, `st`, `atom`: addresses, space
//! resolution, checks).

// Lane loops index several 32-element arrays in lockstep, on purpose (they vectorise).
#![allow(clippy::needless_range_loop)]

use ptx_parser::{ShflMode, SpecialReg, VoteMode};

use super::barrier::{BarrierArrival, Barriers};
use super::decode::Program;
use super::exec::*;
use super::layout::{LOCAL_WINDOW, SHARED_WINDOW};
use super::memory::GlobalMemory;
use super::observer::MemObserver;
use super::ops::*;
use super::simt::{self, SimtStack};
use crate::error::{Loc, SimError};

const FULL: u32 = u32::MAX;

mod barrier_ops;
mod int_ops;
mod lanes;
mod memory_ops;
mod runtime_ops;

use lanes::for_bits;

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
    /// The parameter block: borrowed from the caller for a host launch, owned for a grid
    /// the timing model launches from the device (its block exists only while it runs).
    pub(crate) params: std::borrow::Cow<'p, [u8]>,
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
    /// The TB's device-runtime state (parameter buffers, streams, child launches).
    pub(crate) runtime: super::device_runtime::TbRuntime,
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
            Op::Runtime(ref call) => self.runtime_call(tb, mem, pc, exec, call)?,
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
}
