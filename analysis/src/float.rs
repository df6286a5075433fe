//! Floating-point arithmetic on launch constants, folded concretely (a loop bound
//! `ceil((double)n / 512)`). A floating-point register's value in the [`crate::expr`] domain
//! is its IEEE bit pattern (f32 in the low 32 bits); only operations whose operands are all
//! constants are folded, with round-to-nearest-even (`.rn`, and `.approx` / `.full`, which
//! the interpreter also computes exactly rounded). Anything else (directed rounding of an
//! arithmetic result, half precision, transcendental approximations, subnormals under
//! `.ftz`) is left to the caller as [`crate::expr::Reason::Float`].

use ptx_parser::{CmpOp, Modifiers, Opcode, ScalarType};

/// A float read from its bits as f64, with its width; `None` for non-float types.
fn read(t: ScalarType, v: i128) -> Option<f64> {
    match t {
        ScalarType::F32 => Some(f64::from(f32::from_bits(v as u32))),
        ScalarType::F64 => Some(f64::from_bits(v as u64)),
        _ => None,
    }
}

fn subnormal(t: ScalarType, v: i128) -> bool {
    match t {
        ScalarType::F32 => f32::from_bits(v as u32).is_subnormal(),
        _ => f64::from_bits(v as u64).is_subnormal(),
    }
}

/// Folds float instruction `op` of type `ty` on constant operands `srcs` (operands 1..);
/// `None` when it cannot (an operand not constant, an unsupported operation or mode).
pub fn fold(
    op: &Opcode,
    mods: &Modifiers,
    ty: Option<ScalarType>,
    srcs: &[Option<i128>],
) -> Option<i128> {
    let t = ty?;
    if !matches!(t, ScalarType::F32 | ScalarType::F64) {
        return None;
    }
    if !matches!(mods.rounding, None | Some(ptx_parser::Rounding::Rn)) || mods.sat {
        return None;
    }
    let n = match op {
        Opcode::Neg | Opcode::Abs | Opcode::Sqrt | Opcode::Rcp => 1,
        Opcode::Fma | Opcode::Mad => 3,
        Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Div | Opcode::Min | Opcode::Max => 2,
        _ => return None,
    };
    let raw: Vec<i128> = srcs.iter().take(n).copied().collect::<Option<Vec<_>>>()?;
    if raw.len() != n || (mods.ftz && raw.iter().any(|&v| subnormal(t, v))) {
        return None;
    }
    // The same operation at either width: one body, instantiated for f32 and f64.
    macro_rules! fold {
        ($f:ty, $from:expr) => {{
            let x: Vec<$f> = raw.iter().map(|&v| <$f>::from_bits($from(v))).collect();
            match op {
                Opcode::Neg => -x[0],
                Opcode::Abs => x[0].abs(),
                Opcode::Sqrt => x[0].sqrt(),
                Opcode::Rcp => 1.0 / x[0],
                Opcode::Add => x[0] + x[1],
                Opcode::Sub => x[0] - x[1],
                Opcode::Mul => x[0] * x[1],
                Opcode::Div => x[0] / x[1],
                Opcode::Min => x[0].min(x[1]),
                Opcode::Max => x[0].max(x[1]),
                _ => x[0].mul_add(x[1], x[2]),
            }
        }};
    }
    if t == ScalarType::F32 {
        let r = fold!(f32, |v: i128| v as u32);
        if r.is_nan() || (mods.ftz && r.is_subnormal()) {
            return None;
        }
        Some(i128::from(r.to_bits()))
    } else {
        // `.ftz` applies to f32 only.
        let r = fold!(f64, |v: i128| v as u64);
        if r.is_nan() {
            return None;
        }
        Some(i128::from(r.to_bits()))
    }
}

fn signed(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
    )
}

/// `cvt.dst.src` of constant `v` where at least one side is a float; `None` when it cannot
/// be folded exactly.
pub fn cvt(dst: ScalarType, src: ScalarType, mods: &Modifiers, v: Option<i128>) -> Option<i128> {
    use ptx_parser::Rounding as R;
    let v = v?;
    if mods.sat || (mods.ftz && read(src, v).is_some() && subnormal(src, v)) {
        return None;
    }
    let bits = dst.size() * 8;
    match (read(src, v), dst) {
        // Float to integer: round to an integer as the modifier says, saturate (PTX).
        (Some(x), d) if !matches!(d, ScalarType::F32 | ScalarType::F64) => {
            let r = match mods.rounding {
                Some(R::Rni) => x.round_ties_even(),
                Some(R::Rmi) => x.floor(),
                Some(R::Rpi) => x.ceil(),
                None | Some(R::Rzi) => x.trunc(),
                _ => return None,
            };
            if r.is_nan() {
                return Some(0);
            }
            let (lo, hi) = if signed(d) {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            Some((r as i128).clamp(lo, hi))
        }
        // Float to float.
        (Some(x), d) => {
            let x = match mods.rounding {
                Some(R::Rni) => x.round_ties_even(),
                Some(R::Rmi) => x.floor(),
                Some(R::Rpi) => x.ceil(),
                Some(R::Rzi) => x.trunc(),
                None | Some(R::Rn) => x,
                _ => return None,
            };
            if x.is_nan() {
                return None;
            }
            Some(if d == ScalarType::F32 {
                i128::from((x as f32).to_bits())
            } else {
                i128::from(x.to_bits())
            })
        }
        // Integer to float, round to nearest.
        (None, d) => {
            if !matches!(mods.rounding, None | Some(R::Rn)) {
                return None;
            }
            let sb = (src.size() * 8) as u8;
            let iv = crate::expr::ext_value(v, sb, signed(src));
            match d {
                ScalarType::F32 => Some(i128::from(if signed(src) {
                    (iv as i64 as f32).to_bits()
                } else {
                    (iv as u64 as f32).to_bits()
                })),
                ScalarType::F64 => Some(i128::from(if signed(src) {
                    (iv as i64 as f64).to_bits()
                } else {
                    (iv as u64 as f64).to_bits()
                })),
                _ => None,
            }
        }
    }
}

/// `setp.cmp.ty a, b` on constant floats.
pub fn compare(c: CmpOp, t: ScalarType, a: i128, b: i128) -> Option<bool> {
    let (x, y) = (read(t, a)?, read(t, b)?);
    let nan = x.is_nan() || y.is_nan();
    Some(match c {
        CmpOp::Eq => !nan && x == y,
        CmpOp::Ne => !nan && x != y,
        CmpOp::Lt => !nan && x < y,
        CmpOp::Le => !nan && x <= y,
        CmpOp::Gt => !nan && x > y,
        CmpOp::Ge => !nan && x >= y,
        CmpOp::Equ => nan || x == y,
        CmpOp::Neu => nan || x != y,
        CmpOp::Ltu => nan || x < y,
        CmpOp::Leu => nan || x <= y,
        CmpOp::Gtu => nan || x > y,
        CmpOp::Geu => nan || x >= y,
        CmpOp::Num => !nan,
        CmpOp::Nan => nan,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_of_a_double_quotient() {
        // ceil((double)1000 / 512) = 2, computed as PTX does: cvt.rn.f64.s32, div.rn.f64,
        // cvt.rpi.s32.f64.
        let m = Modifiers::default();
        let n = cvt(ScalarType::F64, ScalarType::S32, &m, Some(1000)).unwrap();
        let d = fold(
            &Opcode::Div,
            &m,
            Some(ScalarType::F64),
            &[Some(n), Some(i128::from(512f64.to_bits()))],
        )
        .unwrap();
        let rpi = Modifiers {
            rounding: Some(ptx_parser::Rounding::Rpi),
            ..Modifiers::default()
        };
        assert_eq!(
            cvt(ScalarType::S32, ScalarType::F64, &rpi, Some(d)),
            Some(2)
        );
        // A negative integer through u32 -> f32 reads as unsigned.
        let u = cvt(ScalarType::F32, ScalarType::U32, &m, Some(-1)).unwrap();
        assert_eq!(f32::from_bits(u as u32), 4_294_967_296.0);
    }
}
