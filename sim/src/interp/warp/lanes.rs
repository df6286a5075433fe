//! Register access across the 32 lanes of a warp: the register file split around a
//! destination ([`Split`]), operand lanes (`gather`, `src_ref`), the per-lane maps that
//! arithmetic instructions use (`map1`, `map2`, `map3`), predicate masks and writes, and
//! the comparison behind `setp` / `set`.

use super::{Warp, FULL};
use crate::interp::exec::*;
use crate::interp::ops::*;

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
pub(super) fn for_bits(mask: u32, mut f: impl FnMut(usize)) {
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        f(l);
    }
}

impl Warp {
    #[inline(always)]
    pub(super) fn gather(&self, s: Src) -> [u64; 32] {
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
    pub(super) fn pred_mask(&self, slot: u32) -> u32 {
        let b = slot as usize * 32;
        let mut m = 0u32;
        for (l, v) in self.regs[b..b + 32].iter().enumerate() {
            m |= ((v & 1) as u32) << l;
        }
        m
    }

    #[inline(always)]
    pub(super) fn src_mask(&self, s: Src) -> u32 {
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
    pub(super) fn write(&mut self, mask: u32, d: u32, vals: &[u64; 32]) {
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
    pub(super) fn map1(&mut self, mask: u32, d: u32, a: Src, f: impl Fn(u64) -> u64) {
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
    pub(super) fn map2(&mut self, mask: u32, d: u32, a: Src, b: Src, f: impl Fn(u64, u64) -> u64) {
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
    pub(super) fn map3(
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
    pub(super) fn compare_mask(&mut self, cmp: ptx_parser::CmpOp, ty: Ty, a: Src, b: Src) -> u32 {
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

    #[inline(always)]
    pub(super) fn write_pred(&mut self, exec: u32, p: u32, m: u32) {
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
}
