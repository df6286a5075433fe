//! Operand decoding for [`super::Decoder`]: destinations, sources (registers, immediates,
//! special registers, symbol addresses), addresses, type and rounding modifiers, state
//! spaces, and how an operand reads in an error message.

use ptx_parser::{
    AddrBase, Immediate, Inst, Operand, Rounding, ScalarType, SpecialReg, StateSpace, Symbol,
};

use super::{Decoder, R};
use crate::interp::ops::*;

pub(super) fn ty_of(t: ScalarType) -> R<Ty> {
    use ScalarType::*;
    let (kind, bits) = match t {
        Pred => (Kind::U, 1),
        B8 | U8 => (Kind::U, 8),
        B16 | U16 => (Kind::U, 16),
        B32 | U32 => (Kind::U, 32),
        B64 | U64 => (Kind::U, 64),
        S8 => (Kind::S, 8),
        S16 => (Kind::S, 16),
        S32 => (Kind::S, 32),
        S64 => (Kind::S, 64),
        F32 => (Kind::F, 32),
        F64 => (Kind::F, 64),
        other => return Err(format!("type .{other} not supported")),
    };
    Ok(Ty { kind, bits })
}

/// How an operand reads in an error message (never Rust debug text).
pub(super) fn describe(o: Option<&Operand>) -> String {
    match o {
        None => "nothing (the operand is missing)".into(),
        Some(Operand::Reg(_)) => "a register".into(),
        Some(Operand::PredNeg(_)) => "a negated predicate".into(),
        Some(Operand::PredPair(..)) => "a predicate pair".into(),
        Some(Operand::Imm(i)) => format!("the immediate {i}"),
        Some(Operand::Special(s)) => format!("the special register {s}"),
        Some(Operand::Symbol(_)) => "a symbol".into(),
        Some(Operand::Address(_)) => "an address".into(),
        Some(Operand::Vector(v)) => format!("a vector of {} elements", v.len()),
        Some(Operand::Brackets(_)) => "a bracketed list".into(),
        Some(Operand::List(_)) => "a parenthesised list".into(),
        Some(Operand::Label(_)) => "a label".into(),
        Some(Operand::Sink) => "the sink `_`".into(),
    }
}

pub(super) fn rnd_of(r: Option<Rounding>) -> R<Rnd> {
    match r {
        None | Some(Rounding::Rn) => Ok(Rnd::Rn),
        Some(Rounding::Rz) => Ok(Rnd::Rz),
        Some(Rounding::Rm) => Ok(Rnd::Rm),
        Some(Rounding::Rp) => Ok(Rnd::Rp),
        Some(r) => Err(format!("rounding .{r} not supported here")),
    }
}
impl Decoder<'_> {
    pub(super) fn dst(&self, o: Option<&Operand>) -> R<u32> {
        match o {
            Some(Operand::Reg(r)) => Ok(r.0),
            Some(Operand::Sink) => Ok(NO_REG),
            other => Err(format!(
                "expected a destination register, found {}",
                describe(other)
            )),
        }
    }

    pub(super) fn special(&mut self, s: SpecialReg) -> Src {
        match s {
            SpecialReg::Clock | SpecialReg::Clock64 | SpecialReg::ClockHi => Src::Clock,
            _ => {
                if let Some((slot, _)) = self.specials.iter().find(|(_, r)| *r == s) {
                    return Src::Reg(*slot);
                }
                let slot = (self.f.regs.len() + self.specials.len()) as u32;
                self.specials.push((slot, s));
                Src::Reg(slot)
            }
        }
    }

    /// A source operand read as type `ty`.
    pub(super) fn src(&mut self, o: Option<&Operand>, ty: Ty) -> R<Src> {
        match o {
            Some(Operand::Reg(r)) => Ok(Src::Reg(r.0)),
            Some(Operand::PredNeg(r)) => Ok(Src::NotPred(r.0)),
            Some(Operand::Imm(i)) => Ok(Src::Imm(imm_bits(*i, ty))),
            Some(Operand::Special(s)) => Ok(self.special(*s)),
            // A kernel's address, for a device-side launch (`mov.u64 %rd, child;`).
            Some(Operand::Symbol(Symbol::Function(i))) => Ok(Src::Imm(
                crate::interp::device_runtime::FUNCTION_HANDLE + u64::from(*i),
            )),
            Some(Operand::Symbol(s)) => Ok(Src::Imm(self.symbol_addr(*s)?.1)),
            other => Err(format!(
                "expected a source operand, found {}",
                describe(other)
            )),
        }
    }

    pub(super) fn symbol_addr(&self, s: Symbol) -> R<(Space, u64)> {
        self.layout.symbol(s).ok_or_else(|| {
            format!(
                "symbol `{}` has no address",
                self.module.symbol_name(self.f, s)
            )
        })
    }

    pub(super) fn addr(&self, o: Option<&Operand>) -> R<(Addr, Option<Space>)> {
        match o {
            Some(Operand::Address(a)) => {
                let (reg, base, space) = match a.base {
                    AddrBase::Reg(r) => (r.0, 0, None),
                    AddrBase::Imm(v) => (NO_REG, v, None),
                    AddrBase::Symbol(s) => {
                        let (sp, v) = self.symbol_addr(s)?;
                        (NO_REG, v, Some(sp))
                    }
                };
                Ok((
                    Addr {
                        reg,
                        off: base.wrapping_add(a.offset as u64),
                    },
                    space,
                ))
            }
            other => Err(format!(
                "expected an address [...], found {}",
                describe(other)
            )),
        }
    }

    pub(super) fn ty(&self, inst: &Inst, k: usize) -> R<Ty> {
        let t = inst
            .mods
            .types
            .get(k)
            .copied()
            .ok_or("missing type suffix")?;
        ty_of(t)
    }

    pub(super) fn space(&self, inst: &Inst, sym: Option<Space>) -> R<Space> {
        Ok(match inst.mods.space {
            None => sym.unwrap_or(Space::Generic),
            Some(StateSpace::Global | StateSpace::Const) => Space::Global,
            Some(s) if s.is_shared() => Space::Shared,
            Some(StateSpace::Local) => Space::Local,
            // A function-scope `.param` variable lives in local memory.
            Some(s) if s.is_param() && sym == Some(Space::Local) => Space::Local,
            Some(s) if s.is_param() => Space::Param,
            Some(s) => return Err(format!("state space .{s} not supported")),
        })
    }
}

/// The bits of immediate `i` as an operand of type `ty` (float literals converted to the
/// operand's width, integers to floats by value).
pub(crate) fn imm_bits(i: Immediate, ty: Ty) -> u64 {
    let v = match (ty.kind, ty.bits, i) {
        (Kind::F, 32, Immediate::F32(b)) => u64::from(b),
        (Kind::F, 32, Immediate::F64(b)) => u64::from((f64::from_bits(b) as f32).to_bits()),
        (Kind::F, 32, Immediate::Int(v)) => u64::from((v as f32).to_bits()),
        (Kind::F, 32, Immediate::UInt(v)) => u64::from((v as f32).to_bits()),
        (Kind::F, 64, Immediate::F32(b)) => f64::from(f32::from_bits(b)).to_bits(),
        (Kind::F, 64, Immediate::Int(v)) => (v as f64).to_bits(),
        (Kind::F, 64, Immediate::UInt(v)) => (v as f64).to_bits(),
        _ => i.bits(),
    };
    if ty.bits >= 64 {
        v
    } else {
        v & ((1u64 << ty.bits) - 1)
    }
}
