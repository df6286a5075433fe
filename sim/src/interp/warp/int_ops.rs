//! Integer binary arithmetic of a warp (`add`, `sub`, `mul` in all its forms, `mul24`,
//! `div`, `rem` with the divide-by-zero check, `min`, `max`, logic and shifts; PTX ISA
//! 9.7.1, 9.7.8).

use super::{for_bits, TbCtx, Warp};
use crate::error::SimError;
use crate::interp::exec::*;
use crate::interp::ops::*;

impl Warp {
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn ibin(
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
