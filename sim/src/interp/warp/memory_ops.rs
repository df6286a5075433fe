//! Memory instructions of a warp: `ld`, `st` and `atom` in every state space (PTX ISA
//! 9.7.9.8-9.7.9.10, 9.7.13.4): per-lane addresses, generic-to-space resolution, alignment and
//! bounds checks with located errors, the observer callback, and atomic read-modify-writes.

use ptx_parser::{AtomOp, InstId};

use super::{for_bits, Warp, FULL};
use crate::error::SimError;
use crate::interp::device_runtime::PARAM_BUFFER_WINDOW;
use crate::interp::exec::*;
use crate::interp::layout::{LOCAL_WINDOW, SHARED_WINDOW};
use crate::interp::memory::GlobalMemory;
use crate::interp::observer::{AccessKind, MemAccess, MemObserver};
use crate::interp::ops::*;
use crate::interp::warp::TbCtx;

fn err_mem(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Load => "load",
        AccessKind::Store => "store",
        AccessKind::Atomic => "atomic",
    }
}

/// Applies atomic operation `k` of type `ty` to `old` with operands `b`, `c`.
fn atom_apply(k: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits;
    let r = match (k, ty.kind) {
        (AtomOp::Add, Kind::F) if bits == 32 => arith32(f32_of(old) + f32_of(b)),
        (AtomOp::Add, Kind::F) => (f64_of(old) + f64_of(b)).to_bits(),
        (AtomOp::Add, _) => old.wrapping_add(b),
        (AtomOp::Min, Kind::F) if bits == 32 => bits32(f32_of(old).min(f32_of(b))),
        (AtomOp::Min, Kind::F) => f64_of(old).min(f64_of(b)).to_bits(),
        (AtomOp::Min, Kind::S) => sx(old, bits).min(sx(b, bits)) as u64,
        (AtomOp::Min, _) => zx(old, bits).min(zx(b, bits)),
        (AtomOp::Max, Kind::F) if bits == 32 => bits32(f32_of(old).max(f32_of(b))),
        (AtomOp::Max, Kind::F) => f64_of(old).max(f64_of(b)).to_bits(),
        (AtomOp::Max, Kind::S) => sx(old, bits).max(sx(b, bits)) as u64,
        (AtomOp::Max, _) => zx(old, bits).max(zx(b, bits)),
        (AtomOp::Exch, _) => b,
        (AtomOp::Cas, _) => {
            if zx(old, bits) == zx(b, bits) {
                c
            } else {
                old
            }
        }
        (AtomOp::Inc, _) => {
            if zx(old, bits) >= zx(b, bits) {
                0
            } else {
                old + 1
            }
        }
        (AtomOp::Dec, _) => {
            let (o, bb) = (zx(old, bits), zx(b, bits));
            if o == 0 || o > bb {
                bb
            } else {
                o - 1
            }
        }
        (AtomOp::And, _) => old & b,
        (AtomOp::Or, _) => old | b,
        (AtomOp::Xor, _) => old ^ b,
    };
    zx(r, bits)
}

impl Warp {
    /// Per-lane addresses of `addr` into `self.addrs`.
    #[inline(always)]
    fn addresses(&mut self, exec: u32, addr: Addr) {
        if addr.reg == NO_REG {
            self.addrs = [addr.off; 32];
        } else {
            let b = addr.reg as usize * 32;
            let regs = &self.regs[b..b + 32];
            if exec == FULL {
                for l in 0..32 {
                    self.addrs[l] = regs[l].wrapping_add(addr.off);
                }
            } else {
                for_bits(exec, |l| self.addrs[l] = regs[l].wrapping_add(addr.off));
            }
        }
    }

    /// Resolves generic addresses: returns the lanes in each concrete space and rewrites
    /// `addrs` to offsets in those spaces.
    #[inline(always)]
    fn resolve(&mut self, exec: u32, space: Space) -> [(Space, u32); 4] {
        if matches!(space, Space::Shared | Space::Local) {
            // Shared and local windows are 32-bit address spaces: the hardware keeps the low
            // 32 bits of `reg + offset`, so 32-bit address arithmetic that wraps (a Rodinia
            // style `temp - 64*tid` base, then `[%r4+68]`) lands where it does on a GPU.
            for_bits(exec, |l| self.addrs[l] &= u64::from(u32::MAX));
        }
        if space != Space::Generic {
            return [
                (space, exec),
                (Space::Shared, 0),
                (Space::Local, 0),
                (Space::ParamBuffer, 0),
            ];
        }
        let (mut g, mut s, mut lo, mut pb) = (0u32, 0u32, 0u32, 0u32);
        for_bits(exec, |l| {
            let a = self.addrs[l];
            if a >= LOCAL_WINDOW {
                lo |= 1 << l;
                self.addrs[l] = a - LOCAL_WINDOW;
            } else if a >= SHARED_WINDOW {
                s |= 1 << l;
                self.addrs[l] = a - SHARED_WINDOW;
            } else if a >= PARAM_BUFFER_WINDOW {
                pb |= 1 << l;
                self.addrs[l] = a - PARAM_BUFFER_WINDOW;
            } else {
                g |= 1 << l;
            }
        });
        [
            (Space::Global, g),
            (Space::Shared, s),
            (Space::Local, lo),
            (Space::ParamBuffer, pb),
        ]
    }

    #[allow(clippy::too_many_arguments)]
    fn fault<M: GlobalMemory>(
        &self,
        tb: &TbCtx<'_>,
        mem: &M,
        pc: u32,
        lane: usize,
        kind: AccessKind,
        space: Space,
        addr: u64,
        size: u32,
    ) -> SimError {
        let what = match space {
            Space::Global => mem.describe(addr),
            Space::Shared => format!("the TB has {} bytes of shared memory", tb.shared.len()),
            Space::Local => format!("a thread has {} bytes of local memory", self.local_bytes),
            Space::Param => format!("the parameter block is {} bytes", tb.params.len()),
            Space::Generic => "no memory there".to_string(),
            Space::ParamBuffer => format!(
                "the TB's device-launch parameter buffers hold {} bytes",
                tb.runtime.arena.len()
            ),
        };
        SimError::OutOfBounds {
            kind: err_mem(kind),
            space: space.name(),
            addr,
            size,
            what,
            loc: tb.loc(self.id, lane, pc),
        }
    }

    fn check_align(
        &self,
        tb: &TbCtx<'_>,
        pc: u32,
        mask: u32,
        size: u32,
        kind: AccessKind,
        space: Space,
    ) -> Result<(), SimError> {
        let m = u64::from(size) - 1;
        let mut any = 0u64;
        if mask == FULL {
            // All lanes: a plain OR-reduction (vectorises).
            any = self.addrs.iter().fold(0, |a, &x| a | x) & m;
        } else {
            for l in 0..32 {
                any |= self.addrs[l] & if mask >> l & 1 != 0 { m } else { 0 };
            }
        }
        if any == 0 {
            return Ok(());
        }
        let mut bad = 0u32;
        for_bits(mask, |l| bad |= u32::from(self.addrs[l] & m != 0) << l);
        if bad != 0 {
            let l = bad.trailing_zeros() as usize;
            return Err(SimError::Misaligned {
                kind: err_mem(kind),
                space: space.name(),
                addr: self.addrs[l],
                size,
                loc: tb.loc(self.id, l, pc),
            });
        }
        Ok(())
    }

    #[inline(always)]
    pub(super) fn local_slot(&self, lane: usize, off: u64, size: u32) -> Option<usize> {
        let off = usize::try_from(off).ok()?;
        (off.checked_add(size as usize)? <= self.local_bytes)
            .then_some(lane * self.local_bytes + off)
    }

    /// A full-warp scalar global load whose addresses nobody observes: the address register
    /// is passed to the memory as it is (no per-lane address copy), alignment is one
    /// OR-reduction, and the values land in the destination register. `false` (nothing
    /// written) when it does not apply or a lane faults or is misaligned: the caller then
    /// takes the general path, which reports the fault.
    #[inline]
    pub(super) fn load_direct<M: GlobalMemory>(
        &mut self,
        mem: &mut M,
        ty: Ty,
        d: u32,
        addr: Addr,
    ) -> bool {
        let esize = u32::from(ty.bits.max(8) / 8);
        let (a, d) = (addr.reg as usize, d as usize);
        if a == NO_REG as usize || d == NO_REG as usize || a == d {
            return false;
        }
        let align = u64::from(esize) - 1;
        let (src, dst) = if a < d {
            let (lo, hi) = self.regs.split_at_mut(d * 32);
            (lo.get(a * 32..a * 32 + 32), hi.get_mut(..32))
        } else {
            let (lo, hi) = self.regs.split_at_mut(a * 32);
            (hi.get(..32), lo.get_mut(d * 32..d * 32 + 32))
        };
        let (Some(src), Some(dst)) = (src, dst) else {
            return false;
        };
        let (Ok(src), Ok(dst)) = (<&[u64; 32]>::try_from(src), <&mut [u64; 32]>::try_from(dst))
        else {
            return false;
        };
        let off = addr.off;
        if src.iter().fold(0, |acc, &x| acc | x.wrapping_add(off)) & align != 0 {
            return false;
        }
        // A fault leaves `dst` partly written, but the general path then stops the run with
        // the same fault (the address register is not the destination), so it is never seen.
        if mem.load_lanes(FULL, src, off, esize, dst).is_err() {
            return false;
        }
        if ty.kind == Kind::S {
            for v in dst.iter_mut() {
                *v = sx(*v, ty.bits) as u64;
            }
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn load<M: GlobalMemory, O: MemObserver>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        obs: &mut O,
        pc: u32,
        exec: u32,
        space: Space,
        ty: Ty,
        n: u8,
        ds: [u32; 4],
        addr: Addr,
    ) -> Result<(), SimError> {
        if exec == 0 {
            return Ok(());
        }
        let esize = u32::from(ty.bits.max(8) / 8);
        let total = esize * u32::from(n);
        self.addresses(exec, addr);
        if space == Space::Global && exec == FULL && n == 1 {
            // The common case (a scalar global load by a full warp), without the per-space
            // and per-element loops below.
            let d = ds[0];
            self.check_align(tb, pc, FULL, total, AccessKind::Load, space)?;
            obs.access(&MemAccess {
                tb: tb.linear,
                warp: self.id,
                inst: InstId(pc),
                kind: AccessKind::Load,
                space,
                size: total,
                mask: FULL,
                addrs: &self.addrs,
            });
            let bd = d as usize * 32;
            let mut scratch = [0u64; 32];
            let dst = match self.regs.get_mut(bd..bd + 32) {
                Some(r) => <&mut [u64; 32]>::try_from(r).unwrap_or(&mut scratch),
                None => &mut scratch,
            };
            if let Err(l) = mem.load_lanes(FULL, &self.addrs, 0, esize, dst) {
                let a = self.addrs[l];
                return Err(self.fault(tb, mem, pc, l, AccessKind::Load, space, a, esize));
            }
            if ty.kind == Kind::S {
                for v in dst.iter_mut() {
                    *v = sx(*v, ty.bits) as u64;
                }
            }
            return Ok(());
        }
        for (sp, mask) in self.resolve(exec, space) {
            if mask == 0 {
                continue;
            }
            self.check_align(tb, pc, mask, total, AccessKind::Load, sp)?;
            if sp == Space::Global || (sp == Space::Shared && obs.wants_shared()) {
                obs.access(&MemAccess {
                    tb: tb.linear,
                    warp: self.id,
                    inst: InstId(pc),
                    kind: AccessKind::Load,
                    space: sp,
                    size: total,
                    mask,
                    addrs: &self.addrs,
                });
            }
            for (k, &d) in ds.iter().enumerate().take(n as usize) {
                let off = u64::from(esize) * k as u64;
                let bd = d as usize * 32;
                let full = sp == Space::Global && mask == FULL && d != NO_REG;
                if let Some(dst) = self
                    .regs
                    .get_mut(bd..bd + 32)
                    .filter(|_| full)
                    .and_then(|r| <&mut [u64; 32]>::try_from(r).ok())
                {
                    // All lanes: straight into the destination registers (a fault aborts the
                    // run, so a partial write is never observed).
                    if let Err(l) = mem.load_lanes(mask, &self.addrs, off, esize, dst) {
                        let a = self.addrs[l].wrapping_add(off);
                        return Err(self.fault(tb, mem, pc, l, AccessKind::Load, sp, a, esize));
                    }
                    if ty.kind == Kind::S {
                        for v in dst.iter_mut() {
                            *v = sx(*v, ty.bits) as u64;
                        }
                    }
                    continue;
                }
                let mut out = [0u64; 32];
                if sp == Space::Global {
                    if let Err(l) = mem.load_lanes(mask, &self.addrs, off, esize, &mut out) {
                        let a = self.addrs[l].wrapping_add(off);
                        return Err(self.fault(tb, mem, pc, l, AccessKind::Load, sp, a, esize));
                    }
                } else {
                    let mut m = mask;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let a = self.addrs[l].wrapping_add(off);
                        let v = match sp {
                            Space::Shared => read_bytes(&tb.shared, a, esize),
                            Space::ParamBuffer => read_bytes(&tb.runtime.arena, a, esize),
                            Space::Local => self
                                .local_slot(l, a, esize)
                                .and_then(|i| read_bytes(&self.local, i as u64, esize)),
                            _ => read_bytes(&tb.params, a, esize),
                        };
                        let Some(v) = v else {
                            return Err(self.fault(tb, mem, pc, l, AccessKind::Load, sp, a, esize));
                        };
                        out[l] = v;
                    }
                }
                if ty.kind == Kind::S {
                    for v in out.iter_mut() {
                        *v = sx(*v, ty.bits) as u64;
                    }
                }
                self.write(mask, d, &out);
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn store<M: GlobalMemory, O: MemObserver>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        obs: &mut O,
        pc: u32,
        exec: u32,
        space: Space,
        ty: Ty,
        n: u8,
        srcs: [Src; 4],
        addr: Addr,
    ) -> Result<(), SimError> {
        if exec == 0 {
            return Ok(());
        }
        self.addresses(exec, addr);
        let esize = u32::from(ty.bits.max(8) / 8);
        let total = esize * u32::from(n);
        let mut vals = [[0u64; 32]; 4];
        for k in 0..n as usize {
            vals[k] = self.gather(srcs[k]);
        }
        for (sp, mask) in self.resolve(exec, space) {
            if mask == 0 {
                continue;
            }
            self.check_align(tb, pc, mask, total, AccessKind::Store, sp)?;
            if sp == Space::Global || (sp == Space::Shared && obs.wants_shared()) {
                obs.access(&MemAccess {
                    tb: tb.linear,
                    warp: self.id,
                    inst: InstId(pc),
                    kind: AccessKind::Store,
                    space: sp,
                    size: total,
                    mask,
                    addrs: &self.addrs,
                });
            }
            let mut m = mask;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for (k, val) in vals.iter().enumerate().take(n as usize) {
                    let a = self.addrs[l].wrapping_add(u64::from(esize) * k as u64);
                    let v = val[l];
                    let ok = match sp {
                        Space::Global => mem.store(a, esize, v).is_ok(),
                        Space::Shared => write_bytes(&mut tb.shared, a, esize, v),
                        Space::ParamBuffer => write_bytes(&mut tb.runtime.arena, a, esize, v),
                        Space::Local => match self.local_slot(l, a, esize) {
                            Some(i) => write_bytes(&mut self.local, i as u64, esize, v),
                            None => false,
                        },
                        _ => false,
                    };
                    if !ok {
                        return Err(self.fault(tb, mem, pc, l, AccessKind::Store, sp, a, esize));
                    }
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic<M: GlobalMemory, O: MemObserver>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        obs: &mut O,
        pc: u32,
        exec: u32,
        space: Space,
        k: AtomOp,
        ty: Ty,
        d: u32,
        addr: Addr,
        b: Src,
        c: Src,
    ) -> Result<(), SimError> {
        if exec == 0 {
            return Ok(());
        }
        self.addresses(exec, addr);
        let size = u32::from(ty.bits / 8);
        let bv = self.gather(b);
        let cv = self.gather(c);
        let mut out = [0u64; 32];
        for (sp, mask) in self.resolve(exec, space) {
            if mask == 0 {
                continue;
            }
            self.check_align(tb, pc, mask, size, AccessKind::Atomic, sp)?;
            if sp == Space::Global || (sp == Space::Shared && obs.wants_shared()) {
                obs.access(&MemAccess {
                    tb: tb.linear,
                    warp: self.id,
                    inst: InstId(pc),
                    kind: AccessKind::Atomic,
                    space: sp,
                    size,
                    mask,
                    addrs: &self.addrs,
                });
            }
            let mut m = mask;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let a = self.addrs[l];
                let (x, y) = (bv[l], cv[l]);
                let old = match sp {
                    Space::Global => mem
                        .atomic(a, size, &mut |old| atom_apply(k, ty, old, x, y))
                        .ok(),
                    Space::Shared => read_bytes(&tb.shared, a, size).and_then(|old| {
                        write_bytes(&mut tb.shared, a, size, atom_apply(k, ty, old, x, y))
                            .then_some(old)
                    }),
                    Space::Local => self.local_slot(l, a, size).and_then(|i| {
                        let old = read_bytes(&self.local, i as u64, size)?;
                        write_bytes(
                            &mut self.local,
                            i as u64,
                            size,
                            atom_apply(k, ty, old, x, y),
                        )
                        .then_some(old)
                    }),
                    _ => None,
                };
                let Some(old) = old else {
                    return Err(self.fault(tb, mem, pc, l, AccessKind::Atomic, sp, a, size));
                };
                out[l] = if ty.kind == Kind::S {
                    zx(old, ty.bits)
                } else {
                    old
                };
            }
        }
        self.write(exec, d, &out);
        Ok(())
    }
}

#[inline(always)]
pub(super) fn read_bytes(b: &[u8], off: u64, size: u32) -> Option<u64> {
    let off = usize::try_from(off).ok()?;
    let s = b.get(off..off.checked_add(size as usize)?)?;
    let mut buf = [0u8; 8];
    buf[..s.len()].copy_from_slice(s);
    Some(u64::from_le_bytes(buf))
}

#[inline(always)]
pub(super) fn write_bytes(b: &mut [u8], off: u64, size: u32, v: u64) -> bool {
    let Ok(off) = usize::try_from(off) else {
        return false;
    };
    let Some(end) = off.checked_add(size as usize) else {
        return false;
    };
    match b.get_mut(off..end) {
        Some(s) => {
            s.copy_from_slice(&v.to_le_bytes()[..size as usize]);
            true
        }
        None => false,
    }
}
