//! Decoding of the barrier instructions (`bar`, `barrier`: sync, arrive, red; PTX ISA
//! 9.7.13.1).

use ptx_parser::Inst;

use super::{Decoder, R};
use crate::interp::ops::*;

impl Decoder<'_> {
    /// `bar{.cta}.sync a{, b}`, `bar{.cta}.arrive a, b`, `bar{.cta}.red.op.type d, a{, b},
    /// {!}c` and their `barrier{.cta}` spellings (PTX ISA 9.7.13.1): barrier `a` (0..15),
    /// `b` threads (a multiple of the warp size; every thread of the TB when absent).
    pub(super) fn barrier(&mut self, inst: &Inst) -> R<Op> {
        let m = &inst.mods;
        let words: Vec<&str> = m.other.iter().map(String::as_str).collect();
        let ops = &inst.operands;
        let u32t = Ty {
            kind: Kind::U,
            bits: 32,
        };
        let count = |this: &mut Self, k: usize| -> R<Option<Src>> {
            match ops.get(k) {
                None => Ok(None),
                o => this.src(o, u32t).map(Some),
            }
        };
        match words.as_slice() {
            [] => {
                if ops.len() > 2 {
                    return Err(format!(
                        "bar.sync takes 1 or 2 operands, found {}",
                        ops.len()
                    ));
                }
                Ok(Op::Bar {
                    arrive: false,
                    id: self.src(ops.first(), u32t)?,
                    count: count(self, 1)?,
                    red: None,
                })
            }
            ["arrive"] => {
                if ops.len() != 2 {
                    return Err(format!("bar.arrive takes 2 operands, found {}", ops.len()));
                }
                Ok(Op::Bar {
                    arrive: true,
                    id: self.src(ops.first(), u32t)?,
                    count: count(self, 1)?,
                    red: None,
                })
            }
            ["red", "popc"] | ["red", "and"] | ["red", "or"] => {
                let k = match words.last() {
                    Some(&"popc") => BarRed::Popc,
                    Some(&"and") => BarRed::And,
                    _ => BarRed::Or,
                };
                if !(3..=4).contains(&ops.len()) {
                    return Err(format!(
                        "bar.red takes 3 or 4 operands, found {}",
                        ops.len()
                    ));
                }
                let d = self.dst(ops.first())?;
                let p = self.src(
                    ops.last(),
                    Ty {
                        kind: Kind::U,
                        bits: 1,
                    },
                )?;
                Ok(Op::Bar {
                    arrive: false,
                    id: self.src(ops.get(1), u32t)?,
                    count: if ops.len() == 4 {
                        count(self, 2)?
                    } else {
                        None
                    },
                    red: Some((k, d, p)),
                })
            }
            _ => Err(format!("barrier form .{} not supported", words.join("."))),
        }
    }
}
