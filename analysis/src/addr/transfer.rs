//! What one instruction does to the symbolic state: operands, special registers, parameter
//! values and each opcode's transfer function (integer arithmetic folded in the [`Expr`]
//! domain, floating point through `float`, comparisons to predicates).

use super::*;

impl Exec<'_> {
    pub(super) fn operand(&self, o: &Operand, st: &State) -> E {
        match o {
            Operand::Reg(r) => st.env[r.index()].clone(),
            Operand::PredNeg(r) => not(ext(st.env[r.index()].clone(), 1, false)),
            Operand::Imm(Immediate::Int(v)) => konst(i128::from(*v)),
            Operand::Imm(Immediate::UInt(v)) => konst(i128::from(*v)),
            // Floating-point values are carried as their IEEE bits (f32 in the low 32).
            Operand::Imm(Immediate::F32(b)) => konst(i128::from(*b)),
            Operand::Imm(Immediate::F64(b)) => konst(i128::from(*b)),
            Operand::Special(s) => self.special(*s),
            Operand::Symbol(Symbol::Global(k)) => self.module_var(*k),
            _ => unknown(Reason::Unsupported("operand kind".into())),
        }
    }

    /// The address of module `.global` / `.const` variable `k` (its own data structure).
    pub(super) fn module_var(&self, k: u32) -> E {
        match self.launch.module_var_base(k) {
            Some(b) => konst(i128::from(b)),
            None => unknown(Reason::Unsupported(format!(
                "address of module variable #{k} (not .global/.const, or the launch was bound \
                 without its module)"
            ))),
        }
    }

    fn special(&self, s: SpecialReg) -> E {
        let d = |d: ptx_parser::Dim| match d {
            ptx_parser::Dim::X => 0u8,
            ptx_parser::Dim::Y => 1,
            ptx_parser::Dim::Z => 2,
        };
        let dim3 = |v: launch::Dim3, k: u8| {
            i128::from(match k {
                0 => v.x,
                1 => v.y,
                _ => v.z,
            })
        };
        match s {
            SpecialReg::Tid(x) => var(Var::Tid(d(x))),
            SpecialReg::Ctaid(x) => var(Var::Ctaid(d(x))),
            SpecialReg::Ntid(x) => konst(dim3(self.launch.block, d(x))),
            SpecialReg::Nctaid(x) => konst(dim3(self.launch.grid, d(x))),
            SpecialReg::WarpSz => konst(32),
            SpecialReg::Laneid => {
                let bx = dim3(self.launch.block, 0);
                let by = dim3(self.launch.block, 1);
                let lin = add(
                    var(Var::Tid(0)),
                    add(
                        mul(var(Var::Tid(1)), konst(bx)),
                        mul(var(Var::Tid(2)), konst(bx * by)),
                    ),
                );
                op(IntOp::Rem, lin, konst(32))
            }
            other => unknown(Reason::Hardware(format!("{other:?}"))),
        }
    }

    fn param_value(&self, a: &ptx_parser::Address, offset: i64, bits: u8) -> E {
        let AddrBase::Symbol(Symbol::Param(i)) = a.base else {
            return unknown(Reason::Unsupported(
                "ld.param from a register address".into(),
            ));
        };
        let value = self.launch.params.get(i as usize).map(|p| &p.value);
        // A parameter left open: unknown at every offset ([`crate::open`] refuses the
        // loads that depend on it).
        if let Some(BoundValue::Open) = value {
            return unknown(Reason::OpenParam(i));
        }
        // A field of a by-value struct: its little-endian bytes at the offset.
        if let Some(BoundValue::Bytes { bytes, .. }) = value {
            let n = usize::from(bits / 8);
            let at = usize::try_from(offset).ok();
            return match at.and_then(|o| bytes.get(o..o.checked_add(n)?)) {
                Some(b) => {
                    let mut le = [0u8; 8];
                    le[..n.min(8)].copy_from_slice(&b[..n.min(8)]);
                    konst(ext_value(i128::from(u64::from_le_bytes(le)), bits, false))
                }
                None => unknown(Reason::Undefined),
            };
        }
        if offset != 0 {
            return unknown(Reason::Unsupported(
                "ld.param at an offset into a scalar parameter".into(),
            ));
        }
        match value {
            Some(BoundValue::Scalar { bits: v }) => konst(ext_value(i128::from(*v), bits, false)),
            Some(BoundValue::Buffer { base, .. }) | Some(BoundValue::Synthetic { base }) => {
                konst(i128::from(*base))
            }
            Some(BoundValue::Bytes { .. } | BoundValue::Open) | None => unknown(Reason::Undefined),
        }
    }

    pub(super) fn transfer(&self, inst: &Inst, st: &mut State, guard: Option<E>) {
        let ty = inst.mods.types.first().copied();
        let bits = ty.map_or(32, |t| (t.size() * 8) as u8);
        let signed = matches!(
            ty,
            Some(ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64)
        );
        let is_float = matches!(
            ty,
            Some(
                ScalarType::F16
                    | ScalarType::F32
                    | ScalarType::F64
                    | ScalarType::Bf16
                    | ScalarType::F16x2
            )
        );
        let is_pred = ty == Some(ScalarType::Pred);
        let src = |k: usize| {
            inst.operands
                .get(k)
                .map_or_else(|| unknown(Reason::Undefined), |o| self.operand(o, st))
        };
        let x = |k: usize| ext(src(k), bits, signed);
        let xu = |k: usize| ext(src(k), bits, false);
        let unsupported = || unknown(Reason::Unsupported(format!("{}{}", inst.op, inst.mods)));
        let value: E = match inst.op {
            _ if is_float
                && !matches!(
                    inst.op,
                    Opcode::Ld | Opcode::Ldu | Opcode::Setp | Opcode::Cvt
                ) =>
            {
                let srcs: Vec<Option<i128>> = (1..inst.operands.len())
                    .map(|k| src(k).as_const())
                    .collect();
                if matches!(inst.op, Opcode::Mov) {
                    src(1)
                } else if matches!(inst.op, Opcode::Selp) {
                    select(ext(src(3), 1, false), src(1), src(2))
                } else {
                    crate::float::fold(&inst.op, &inst.mods, ty, &srcs)
                        .map_or_else(|| unknown(Reason::Float), konst)
                }
            }
            Opcode::Mov => match inst.operands.get(1) {
                Some(Operand::Symbol(Symbol::Global(_))) => src(1),
                Some(Operand::Symbol(_)) | Some(Operand::Vector(_)) => unsupported(),
                _ => src(1),
            },
            Opcode::Cvta => src(1),
            Opcode::Add if !inst.mods.cc => add(src(1), src(2)),
            Opcode::Sub if !inst.mods.cc => sub(src(1), src(2)),
            Opcode::Mul | Opcode::Mad => {
                let prod = match inst.mods.mul {
                    Some(ptx_parser::MulMode::Wide) => mul(x(1), x(2)),
                    Some(ptx_parser::MulMode::Hi) => op(IntOp::MulHi(bits), x(1), x(2)),
                    _ => mul(src(1), src(2)),
                };
                if inst.op == Opcode::Mad {
                    if inst.mods.mul == Some(ptx_parser::MulMode::Hi) || inst.mods.cc {
                        unsupported()
                    } else {
                        add(prod, src(3))
                    }
                } else {
                    prod
                }
            }
            Opcode::Mul24 | Opcode::Mad24 if inst.mods.mul != Some(ptx_parser::MulMode::Hi) => {
                let prod = mul(ext(src(1), 24, signed), ext(src(2), 24, signed));
                if inst.op == Opcode::Mad24 {
                    add(prod, src(3))
                } else {
                    prod
                }
            }
            Opcode::Neg => sub(konst(0), src(1)),
            Opcode::Abs => {
                let v = x(1);
                select(
                    cmp(Rel::Lt, v.clone(), konst(0)),
                    sub(konst(0), v.clone()),
                    v,
                )
            }
            Opcode::Shl => match src(2).as_const() {
                Some(c) if (0..i128::from(bits)).contains(&c) => mul(src(1), konst(1i128 << c)),
                Some(_) => konst(0),
                None => op(IntOp::Shl(bits), xu(1), ext(src(2), 32, false)),
            },
            Opcode::Shr => op(IntOp::Shr, x(1), ext(src(2), 32, false)),
            Opcode::And | Opcode::Or | Opcode::Xor if is_pred => {
                let (a, b) = (ext(src(1), 1, false), ext(src(2), 1, false));
                match inst.op {
                    Opcode::And => and(a, b),
                    Opcode::Or => or(a, b),
                    _ => cmp(Rel::Ne, a, b),
                }
            }
            Opcode::And => op(IntOp::BitAnd, xu(1), xu(2)),
            Opcode::Or => op(IntOp::BitOr, xu(1), xu(2)),
            Opcode::Xor => op(IntOp::BitXor, xu(1), xu(2)),
            Opcode::Not if is_pred => not(ext(src(1), 1, false)),
            Opcode::Not => sub(sub(konst(0), src(1)), konst(1)),
            Opcode::Min => op(IntOp::Min, x(1), x(2)),
            Opcode::Max => op(IntOp::Max, x(1), x(2)),
            Opcode::Div => op(IntOp::Div, x(1), x(2)),
            Opcode::Rem => op(IntOp::Rem, x(1), x(2)),
            Opcode::Selp => select(ext(src(3), 1, false), src(1), src(2)),
            Opcode::Setp => return self.setp(inst, st, guard, bits, signed, is_float),
            Opcode::Cvt => {
                let dst = inst.mods.types.first().copied();
                let srct = inst.mods.types.get(1).copied();
                match (dst, srct) {
                    (Some(d), Some(s)) if is_int(d) && is_int(s) => ext(
                        src(1),
                        (s.size() * 8) as u8,
                        matches!(
                            s,
                            ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
                        ),
                    ),
                    (Some(d), Some(s)) => crate::float::cvt(d, s, &inst.mods, src(1).as_const())
                        .map_or_else(|| unknown(Reason::Float), konst),
                    _ => unknown(Reason::Float),
                }
            }
            Opcode::Ld if inst.mods.space.is_some_and(|s| s.is_param()) => {
                match (inst.operands.first(), inst.operands.get(1)) {
                    // `ld.param.v2.u32 {%r1, %r2}, [p+16]`: lane i reads offset + i * size.
                    (Some(Operand::Vector(rs)), Some(Operand::Address(a))) => {
                        let step = i64::from(bits / 8);
                        for (i, o) in rs.iter().enumerate() {
                            if let Operand::Reg(r) = o {
                                let v = self.param_value(a, a.offset + i as i64 * step, bits);
                                set_reg(st, r.index(), v, guard.clone());
                            }
                        }
                        return;
                    }
                    (_, Some(Operand::Address(a))) => self.param_value(a, a.offset, bits),
                    _ => unsupported(),
                }
            }
            Opcode::Ld | Opcode::Ldu | Opcode::Atom => unknown(Reason::DataDependent),
            _ => unsupported(),
        };
        assign(inst, st, 0, value, guard);
    }

    fn setp(
        &self,
        inst: &Inst,
        st: &mut State,
        guard: Option<E>,
        bits: u8,
        signed: bool,
        is_float: bool,
    ) {
        let (rel, uns) = match inst.mods.cmp {
            Some(CmpOp::Eq) => (Some(Rel::Eq), false),
            Some(CmpOp::Ne) => (Some(Rel::Ne), false),
            Some(CmpOp::Lt) => (Some(Rel::Lt), false),
            Some(CmpOp::Le) => (Some(Rel::Le), false),
            Some(CmpOp::Gt) => (Some(Rel::Gt), false),
            Some(CmpOp::Ge) => (Some(Rel::Ge), false),
            Some(CmpOp::Lo) => (Some(Rel::Lt), true),
            Some(CmpOp::Ls) => (Some(Rel::Le), true),
            Some(CmpOp::Hi) => (Some(Rel::Gt), true),
            Some(CmpOp::Hs) => (Some(Rel::Ge), true),
            _ => (None, false),
        };
        let c = match rel {
            Some(r) if !is_float => {
                let sg = signed && !uns;
                let a = ext(self.operand(&inst.operands[1], st), bits, sg);
                let b = ext(
                    inst.operands
                        .get(2)
                        .map_or_else(|| unknown(Reason::Undefined), |o| self.operand(o, st)),
                    bits,
                    sg,
                );
                cmp(r, a, b)
            }
            _ if is_float => {
                let a = self.operand(&inst.operands[1], st).as_const();
                let b = inst
                    .operands
                    .get(2)
                    .and_then(|o| self.operand(o, st).as_const());
                match (inst.mods.cmp, ty_of(inst), a, b) {
                    (Some(c), Some(t), Some(a), Some(b)) => crate::float::compare(c, t, a, b)
                        .map_or_else(|| unknown(Reason::Float), |v| konst(i128::from(v))),
                    _ => unknown(Reason::Float),
                }
            }
            _ => unknown(Reason::Unsupported(format!("setp{}", inst.mods))),
        };
        let combine = |v: E| -> E {
            match (inst.mods.bool_op, inst.operands.get(3)) {
                (Some(bop), Some(o)) => {
                    let q = ext(self.operand(o, st), 1, false);
                    match bop {
                        ptx_parser::BoolOp::And => and(v, q),
                        ptx_parser::BoolOp::Or => or(v, q),
                        ptx_parser::BoolOp::Xor => cmp(Rel::Ne, v, q),
                    }
                }
                _ => v,
            }
        };
        match inst.operands.first() {
            Some(Operand::PredPair(p, q)) => {
                let (p, q) = (*p, *q);
                let vp = combine(c.clone());
                let vq = combine(not(c));
                set_reg(st, p.index(), vp, guard.clone());
                set_reg(st, q.index(), vq, guard);
            }
            _ => {
                let v = combine(c);
                assign(inst, st, 0, v, guard);
            }
        }
    }
}

fn ty_of(inst: &Inst) -> Option<ScalarType> {
    inst.mods.types.first().copied()
}

fn is_int(t: ScalarType) -> bool {
    use ScalarType::*;
    matches!(
        t,
        B8 | B16 | B32 | B64 | U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64
    )
}

fn set_reg(st: &mut State, r: usize, v: E, guard: Option<E>) {
    let Some(slot) = st.env.get_mut(r) else {
        return;
    };
    *slot = match guard {
        Some(g) => select(g, v, slot.clone()),
        None => v,
    };
}

fn assign(inst: &Inst, st: &mut State, k: usize, v: E, guard: Option<E>) {
    match inst.operands.get(k) {
        Some(Operand::Reg(r)) => set_reg(st, r.index(), v, guard),
        Some(Operand::Vector(rs)) => {
            for o in rs {
                if let Operand::Reg(r) = o {
                    set_reg(st, r.index(), v.clone(), guard.clone());
                }
            }
        }
        _ => {}
    }
}
