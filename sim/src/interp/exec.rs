//! Per-lane semantics of the arithmetic, comparison and conversion instructions (PTX ISA
//! 9.7.1 integer, 9.7.3 single/double float, 9.7.7 comparison, 9.7.9.21 `cvt`, 9.7.8 bit
//! manipulation).
//!
//! Values travel as `u64` bit patterns; an instruction reads its operands at its own width
//! (zero- or sign-extended) and writes its result masked to the destination width.
//! f32 arithmetic runs natively in f32 (`.rn`); directed roundings (`.rz`, `.rm`, `.rp`) are
//! computed exactly in f64 plus an error term and rounded in the requested direction.
//! Approximate instructions (`ex2.approx`, `lg2.approx`, `sin.approx`, `rsqrt.approx`, ...)
//! use the exact (correctly rounded or libm) functions: results may differ from hardware in the
//! last bits.

use ptx_parser::{CmpOp, Rounding};

use super::ops::{FBin, FUn, Kind, Rnd, TestP, Ty};

/// Low `bits` of `v`.
#[inline(always)]
pub(crate) fn zx(v: u64, bits: u8) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// The mask of the low `bits` bits (`zx(v, bits) == v & zmask(bits)`), computed once per
/// warp instruction instead of per lane.
#[inline(always)]
pub(crate) fn zmask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `v`'s low `bits` sign-extended.
#[inline(always)]
pub(crate) fn sx(v: u64, bits: u8) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - u32::from(bits);
        ((v << s) as i64) >> s
    }
}

#[inline(always)]
pub(crate) fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

#[inline(always)]
pub(crate) fn f64_of(v: u64) -> f64 {
    f64::from_bits(v)
}

#[inline(always)]
pub(crate) fn bits32(f: f32) -> u64 {
    u64::from(f.to_bits())
}

/// The canonical single-precision NaN NVIDIA GPUs produce (PTX ISA 9.7.3: f32 arithmetic
/// does not propagate NaN payloads; every NaN result is `0x7fffffff`).
pub(crate) const CANONICAL_NAN32: u32 = 0x7fff_ffff;

/// [`bits32`] of an f32 arithmetic result: a NaN becomes [`CANONICAL_NAN32`] (x86 would
/// give `0xffc00000` for `0/0` or `sqrt(-1)`).
#[inline(always)]
pub(crate) fn arith32(f: f32) -> u64 {
    u64::from(if f.is_nan() {
        CANONICAL_NAN32
    } else {
        f.to_bits()
    })
}

/// Flushes an f32 subnormal to a zero of the same sign (`.ftz`).
#[inline(always)]
pub(crate) fn ftz(f: f32) -> f32 {
    if f.is_subnormal() {
        f32::from_bits(f.to_bits() & 0x8000_0000)
    } else {
        f
    }
}

/// Clamps to [0, 1], NaN to 0 (`.sat` on floats).
#[inline(always)]
pub(crate) fn sat01(f: f32) -> f32 {
    if f.is_nan() {
        0.0
    } else {
        f.clamp(0.0, 1.0)
    }
}

fn next_up(f: f32) -> f32 {
    if f.is_nan() || f == f32::INFINITY {
        return f;
    }
    if f == 0.0 {
        return f32::from_bits(1);
    }
    let b = f.to_bits();
    f32::from_bits(if f > 0.0 { b + 1 } else { b - 1 })
}

fn next_down(f: f32) -> f32 {
    -next_up(-f)
}

/// Rounds the exact value `hi + lo` (an f64 plus its error term) to f32 in direction `r`.
pub(crate) fn round_f32(hi: f64, lo: f64, r: Rnd) -> f32 {
    let n = hi as f32; // nearest (ties to even) of hi
    if r == Rnd::Rn || n.is_nan() {
        return n;
    }
    if n.is_infinite() {
        // Overflow: directed modes round towards zero / the direction to the largest finite.
        let max = f32::MAX.copysign(n);
        return match r {
            Rnd::Rz => max,
            Rnd::Rm if n > 0.0 => max,
            Rnd::Rp if n < 0.0 => max,
            _ => n,
        };
    }
    // diff = exact - n, computed exactly enough to know its sign.
    let diff = (hi - f64::from(n)) + lo;
    let down = if diff < 0.0 { next_down(n) } else { n }; // largest f32 <= exact
    let up = if diff > 0.0 { next_up(n) } else { n }; // smallest f32 >= exact
    match r {
        Rnd::Rm => down,
        Rnd::Rp => up,
        Rnd::Rz => {
            if hi + lo >= 0.0 || (hi == 0.0 && lo >= 0.0) {
                down
            } else {
                up
            }
        }
        Rnd::Rn => n,
    }
}

/// Exact sum of two f64s as (rounded, error) (Knuth's TwoSum).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// f32 binary operation with rounding.
#[inline(always)]
pub(crate) fn f32_bin(k: FBin, rnd: Rnd, a: f32, b: f32) -> f32 {
    if rnd == Rnd::Rn {
        return match k {
            FBin::Add => a + b,
            FBin::Sub => a - b,
            FBin::Mul => a * b,
            FBin::Div => a / b,
            FBin::Min => a.min(b),
            FBin::Max => a.max(b),
            FBin::Copysign => b.copysign(a),
        };
    }
    let (x, y) = (f64::from(a), f64::from(b));
    match k {
        FBin::Add => {
            let (s, e) = two_sum(x, y);
            round_f32(s, e, rnd)
        }
        FBin::Sub => {
            let (s, e) = two_sum(x, -y);
            round_f32(s, e, rnd)
        }
        FBin::Mul => round_f32(x * y, 0.0, rnd), // exact: 24 + 24 bits < 53
        FBin::Div => {
            let q = x / y;
            // Residual a - q*b computed exactly with an fma: sign tells which side q is on.
            let r = (-q).mul_add(y, x);
            let side = r * y.signum();
            let lo = if side > 0.0 {
                f64::MIN_POSITIVE
            } else if side < 0.0 {
                -f64::MIN_POSITIVE
            } else {
                0.0
            };
            round_f32(q, lo, rnd)
        }
        _ => f32_bin(k, Rnd::Rn, a, b),
    }
}

/// f32 fused multiply-add `a * b + c` with rounding.
#[inline(always)]
pub(crate) fn f32_fma(rnd: Rnd, a: f32, b: f32, c: f32) -> f32 {
    if rnd == Rnd::Rn {
        return a.mul_add(b, c);
    }
    let p = f64::from(a) * f64::from(b); // exact
    let (s, e) = two_sum(p, f64::from(c));
    round_f32(s, e, rnd)
}

/// f32 unary operation (approximations computed exactly).
#[inline(always)]
pub(crate) fn f32_un(k: FUn, a: f32) -> f32 {
    match k {
        FUn::Neg => -a,
        FUn::Abs => a.abs(),
        FUn::Rcp => 1.0 / a,
        FUn::Sqrt => a.sqrt(),
        FUn::Rsqrt => (1.0 / f64::from(a).sqrt()) as f32,
        FUn::Sin => a.sin(),
        FUn::Cos => a.cos(),
        FUn::Lg2 => a.log2(),
        FUn::Ex2 => a.exp2(),
        FUn::Tanh => a.tanh(),
    }
}

/// f64 unary operation.
#[inline(always)]
pub(crate) fn f64_un(k: FUn, a: f64) -> f64 {
    match k {
        FUn::Neg => -a,
        FUn::Abs => a.abs(),
        FUn::Rcp => 1.0 / a,
        FUn::Sqrt => a.sqrt(),
        FUn::Rsqrt => 1.0 / a.sqrt(),
        FUn::Sin => a.sin(),
        FUn::Cos => a.cos(),
        FUn::Lg2 => a.log2(),
        FUn::Ex2 => a.exp2(),
        FUn::Tanh => a.tanh(),
    }
}

/// f64 binary operation (`.rn`).
#[inline(always)]
pub(crate) fn f64_bin(k: FBin, a: f64, b: f64) -> f64 {
    match k {
        FBin::Add => a + b,
        FBin::Sub => a - b,
        FBin::Mul => a * b,
        FBin::Div => a / b,
        FBin::Min => a.min(b),
        FBin::Max => a.max(b),
        FBin::Copysign => b.copysign(a),
    }
}

/// `setp`/`set` comparison of `a` and `b` read as `ty` (PTX ISA 9.7.7.1; unordered
/// variants are true when either operand is NaN).
#[inline(always)]
pub(crate) fn compare(cmp: CmpOp, ty: Ty, a: u64, b: u64) -> bool {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match ty.kind {
        Kind::F if ty.bits == 32 => f32_of(a).partial_cmp(&f32_of(b)),
        Kind::F => f64_of(a).partial_cmp(&f64_of(b)),
        Kind::S => Some(sx(a, ty.bits).cmp(&sx(b, ty.bits))),
        Kind::U => Some(zx(a, ty.bits).cmp(&zx(b, ty.bits))),
    };
    let unordered = ord.is_none();
    let o = ord.unwrap_or(Ordering::Equal);
    match cmp {
        CmpOp::Eq => !unordered && o == Ordering::Equal,
        CmpOp::Ne => !unordered && o != Ordering::Equal,
        CmpOp::Lt | CmpOp::Lo => !unordered && o == Ordering::Less,
        CmpOp::Le | CmpOp::Ls => !unordered && o != Ordering::Greater,
        CmpOp::Gt | CmpOp::Hi => !unordered && o == Ordering::Greater,
        CmpOp::Ge | CmpOp::Hs => !unordered && o != Ordering::Less,
        CmpOp::Equ => unordered || o == Ordering::Equal,
        CmpOp::Neu => unordered || o != Ordering::Equal,
        CmpOp::Ltu => unordered || o == Ordering::Less,
        CmpOp::Leu => unordered || o != Ordering::Greater,
        CmpOp::Gtu => unordered || o == Ordering::Greater,
        CmpOp::Geu => unordered || o != Ordering::Less,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}

/// `testp` (PTX ISA 9.7.3.3).
pub(crate) fn testp(k: TestP, f64: bool, a: u64) -> bool {
    let (fin, inf, nan, normal, sub) = if f64 {
        let x = f64_of(a);
        (
            x.is_finite(),
            x.is_infinite(),
            x.is_nan(),
            x.is_normal(),
            x.is_subnormal(),
        )
    } else {
        let x = f32_of(a);
        (
            x.is_finite(),
            x.is_infinite(),
            x.is_nan(),
            x.is_normal(),
            x.is_subnormal(),
        )
    };
    match k {
        TestP::Finite => fin,
        TestP::Infinite => inf,
        TestP::Number => !nan,
        TestP::NotANumber => nan,
        TestP::Normal => normal,
        TestP::Subnormal => sub,
    }
}

fn round_int(x: f64, r: Option<Rounding>) -> f64 {
    match r {
        Some(Rounding::Rni) => x.round_ties_even(),
        Some(Rounding::Rzi) => x.trunc(),
        Some(Rounding::Rmi) => x.floor(),
        Some(Rounding::Rpi) => x.ceil(),
        _ => x,
    }
}

fn rnd_dir(r: Option<Rounding>) -> Rnd {
    match r {
        Some(Rounding::Rz) => Rnd::Rz,
        Some(Rounding::Rm) => Rnd::Rm,
        Some(Rounding::Rp) => Rnd::Rp,
        _ => Rnd::Rn,
    }
}

/// Integer `v` (already extended to i128) saturated into `ty`.
fn clamp_int(v: i128, ty: Ty) -> u64 {
    let (lo, hi): (i128, i128) = match ty.kind {
        Kind::S => (-(1i128 << (ty.bits - 1)), (1i128 << (ty.bits - 1)) - 1),
        _ => (0, (1i128 << ty.bits) - 1),
    };
    zx(v.clamp(lo, hi) as u64, ty.bits)
}

/// `cvt.dty.sty` with rounding `r`, saturation and flush-to-zero (PTX ISA 9.7.9.21).
/// Float-to-integer conversions saturate and map NaN to 0, as PTX specifies.
pub(crate) fn cvt(dty: Ty, sty: Ty, r: Option<Rounding>, sat: bool, ftz_: bool, a: u64) -> u64 {
    match (dty.kind, sty.kind) {
        (Kind::F, Kind::F) => {
            let x = if sty.bits == 32 {
                let f = f32_of(a);
                f64::from(if ftz_ { ftz(f) } else { f })
            } else {
                f64_of(a)
            };
            let x = round_int(x, r);
            if dty.bits == 32 {
                let mut f = if matches!(r, Some(Rounding::Rz | Rounding::Rm | Rounding::Rp)) {
                    round_f32(x, 0.0, rnd_dir(r))
                } else {
                    x as f32
                };
                if ftz_ {
                    f = ftz(f);
                }
                if sat {
                    f = sat01(f);
                }
                arith32(f)
            } else {
                let x = if sat {
                    if x.is_nan() {
                        0.0
                    } else {
                        x.clamp(0.0, 1.0)
                    }
                } else {
                    x
                };
                x.to_bits()
            }
        }
        (Kind::F, _) => {
            let v: i128 = if sty.kind == Kind::S {
                i128::from(sx(a, sty.bits))
            } else {
                i128::from(zx(a, sty.bits))
            };
            if dty.bits == 32 {
                let f = match rnd_dir(r) {
                    Rnd::Rn => {
                        if sty.kind == Kind::S {
                            v as i64 as f32
                        } else {
                            v as u64 as f32
                        }
                    }
                    d => {
                        let hi = v as f64;
                        let lo = (v - hi as i128) as f64;
                        round_f32(hi, lo, d)
                    }
                };
                bits32(if sat { sat01(f) } else { f })
            } else if sty.kind == Kind::S {
                (v as i64 as f64).to_bits()
            } else {
                (v as u64 as f64).to_bits()
            }
        }
        (_, Kind::F) => {
            let x = if sty.bits == 32 {
                let f = f32_of(a);
                f64::from(if ftz_ { ftz(f) } else { f })
            } else {
                f64_of(a)
            };
            let x = round_int(x, r.or(Some(Rounding::Rzi)));
            if x.is_nan() {
                return 0;
            }
            // f64 -> i128 saturates; then clamp into the destination type.
            clamp_int(x as i128, dty)
        }
        _ => {
            let v: i128 = if sty.kind == Kind::S {
                i128::from(sx(a, sty.bits))
            } else {
                i128::from(zx(a, sty.bits))
            };
            if sat {
                clamp_int(v, dty)
            } else if dty.kind == Kind::S {
                // Truncate then sign-extend to keep the slot canonical for the width.
                zx(sx(v as u64, dty.bits) as u64, dty.bits)
            } else {
                zx(v as u64, dty.bits)
            }
        }
    }
}

/// `prmt.b32` default mode: byte selectors in `c`'s four low nibbles (PTX ISA 9.7.8.7).
pub(crate) fn prmt(a: u64, b: u64, c: u64) -> u64 {
    let bytes = (a as u32 as u64) | ((b as u32 as u64) << 32);
    let mut out = 0u64;
    for k in 0..4 {
        let sel = (c >> (4 * k)) & 0xF;
        let byte = (bytes >> (8 * (sel & 7))) & 0xFF;
        let byte = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xFF
            } else {
                0
            }
        } else {
            byte
        };
        out |= byte << (8 * k);
    }
    out
}

/// `bfe` (PTX ISA 9.7.8.5): `len` bits from `pos`, sign-extended for signed types.
pub(crate) fn bfe(signed: bool, bits: u8, a: u64, pos: u64, len: u64) -> u64 {
    let w = u64::from(bits);
    let pos = pos & 0xFF;
    let len = len & 0xFF;
    let sbit = if signed && len > 0 {
        (pos + len - 1).min(w - 1)
    } else {
        0
    };
    let sign = signed && len > 0 && (a >> sbit) & 1 != 0;
    let mut d = 0u64;
    for i in 0..w {
        let bit = if i < len && pos + i < w {
            (a >> (pos + i)) & 1
        } else {
            u64::from(sign)
        };
        d |= bit << i;
    }
    d
}

/// `bfi` (PTX ISA 9.7.8.6): insert `len` low bits of `f` into `b` at `pos`.
pub(crate) fn bfi(bits: u8, f: u64, b: u64, pos: u64, len: u64) -> u64 {
    let w = u64::from(bits);
    let pos = pos & 0xFF;
    let len = len & 0xFF;
    let mut d = b;
    for i in 0..len {
        if pos + i >= w {
            break;
        }
        d = (d & !(1 << (pos + i))) | (((f >> i) & 1) << (pos + i));
    }
    zx(d, bits)
}

/// `shf.{l,r}.{wrap,clamp}.b32` (PTX ISA 9.7.8.9): funnel shift of `b:a` by `c`.
pub(crate) fn shf(left: bool, wrap: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = if wrap {
        (c & 31) as u32
    } else {
        (c as u32).min(32)
    };
    let v = (u64::from(b as u32) << 32) | u64::from(a as u32);
    if left {
        u64::from(((v << n) >> 32) as u32)
    } else {
        u64::from((v >> n) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_brackets_the_exact_sum() {
        let a = 1.0f32;
        let b = 1e-10f32;
        assert_eq!(f32_bin(FBin::Add, Rnd::Rn, a, b), 1.0);
        assert_eq!(f32_bin(FBin::Add, Rnd::Rm, a, b), 1.0);
        assert_eq!(f32_bin(FBin::Add, Rnd::Rp, a, b), next_up(1.0));
        assert_eq!(f32_bin(FBin::Add, Rnd::Rz, -a, -b), -1.0);
        assert_eq!(f32_bin(FBin::Add, Rnd::Rm, -a, -b), -next_up(1.0));
        assert_eq!(
            f32_fma(Rnd::Rm, 3.0, 1.0 / 3.0, 0.0),
            1.0f32.min(3.0 * (1.0 / 3.0))
        );
        // rn(1/3) = 0.33333334 lies above 1/3.
        assert_eq!(f32_bin(FBin::Div, Rnd::Rp, 1.0, 3.0), 1.0 / 3.0);
        assert_eq!(f32_bin(FBin::Div, Rnd::Rz, 1.0, 3.0), next_down(1.0 / 3.0));
        assert_eq!(f32_bin(FBin::Div, Rnd::Rm, -1.0, 3.0), -1.0 / 3.0);
    }

    #[test]
    fn conversions_saturate_and_round() {
        let f32t = Ty {
            kind: Kind::F,
            bits: 32,
        };
        let s32 = Ty {
            kind: Kind::S,
            bits: 32,
        };
        let u8t = Ty {
            kind: Kind::U,
            bits: 8,
        };
        let u32t = Ty {
            kind: Kind::U,
            bits: 32,
        };
        let c = |d, s, r, sat, v| cvt(d, s, r, sat, false, v);
        assert_eq!(
            c(s32, f32t, Some(Rounding::Rzi), false, bits32(-2.7)),
            zx(-2i64 as u64, 32)
        );
        assert_eq!(c(s32, f32t, Some(Rounding::Rni), false, bits32(2.5)), 2);
        assert_eq!(
            c(s32, f32t, Some(Rounding::Rzi), false, bits32(1e20)),
            0x7FFF_FFFF
        );
        assert_eq!(
            c(s32, f32t, Some(Rounding::Rzi), false, bits32(f32::NAN)),
            0
        );
        assert_eq!(c(u8t, u32t, None, false, 0x1FF), 0xFF);
        assert_eq!(c(u8t, u32t, None, true, 0x1FF), 0xFF);
        assert_eq!(c(u8t, s32, None, true, zx(-5i64 as u64, 32)), 0);
        assert_eq!(
            c(f32t, u32t, Some(Rounding::Rn), false, 16_777_217),
            bits32(16_777_216.0)
        );
        assert_eq!(
            c(f32t, u32t, Some(Rounding::Rp), false, 16_777_217),
            bits32(16_777_218.0)
        );
        assert_eq!(c(f32t, f32t, None, true, bits32(1.5)), bits32(1.0));
    }

    #[test]
    fn bit_fields() {
        assert_eq!(bfe(false, 32, 0xABCD, 4, 8), 0xBC);
        assert_eq!(bfe(true, 32, 0x80, 4, 4), 0xFFFF_FFF8);
        assert_eq!(bfi(32, 0xF, 0, 4, 4), 0xF0);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x5410), 0x6655_2211);
        assert_eq!(shf(true, true, 0x8000_0000, 0x1, 1), 0x3);
        // .clamp limits the amount to 32: all of `b` shifted in.
        assert_eq!(shf(false, false, 0x0, 0x1, 40), 0x1);
    }
}
