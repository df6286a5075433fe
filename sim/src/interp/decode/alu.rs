//! Decoding of the ALU instructions: integer and float binary and unary operations, `mad`
//! / `fma`, comparisons (`setp`, `set`) and `mov`.

use ptx_parser::{Inst, MulMode, Opcode, Operand, Precision, Rounding};

use super::operands::*;
use super::{Decoder, R};
use crate::interp::ops::*;

impl Decoder<'_> {
    pub(super) fn binary(&mut self, inst: &Inst) -> R<Op> {
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

    pub(super) fn unary(&mut self, inst: &Inst) -> R<Op> {
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

    pub(super) fn mad(&mut self, inst: &Inst) -> R<Op> {
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

    pub(super) fn compare(&mut self, inst: &Inst) -> R<Op> {
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

    pub(super) fn mov(&mut self, inst: &Inst) -> R<Op> {
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
