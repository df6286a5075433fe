//! Lowering of one instruction: its word split into opcode and modifiers (through the
//! word cache), its guard, and its operands (registers, immediates, addresses, vectors,
//! labels and symbols) resolved to [`Operand`]s.

use super::{FnLower, Pending, PENDING};
use crate::ir::*;
use crate::opcode::{Modifiers, Opcode};
use crate::syntax::{AstInst, AstOp};
use crate::types::SpecialReg;
use std::sync::Arc;

impl<'a, 'm> FnLower<'a, 'm> {
    pub(super) fn reg_operand(&mut self, name: &'a str, tok: crate::lexer::Token) -> Option<RegId> {
        let r = self.find_reg(name);
        if r.is_none() {
            self.err(tok.start, tok.line, format!("undeclared register '{name}'"));
        }
        r
    }

    pub(super) fn inst(&mut self, i: &AstInst<'a>, ops: &[AstOp<'a>]) {
        let (op, mods) = self.opcode(i.word, i.start, i.line);
        let guard = match i.guard {
            Some((negated, name, tok)) => self
                .reg_operand(name, tok)
                .map(|reg| Guard { reg, negated }),
            None => None,
        };
        let is_branch = matches!(op, Opcode::Bra | Opcode::BrxIdx);
        let col = self.lexed.col(i.line, i.start);
        // The instruction is pushed first and its operands lowered into it in place: an
        // `Inst` with inline operands is large, and building it on the stack costs copies.
        let items = ops
            .get(i.operands.start as usize..i.operands.end as usize)
            .unwrap_or(&[]);
        self.cur_inst = self.f.insts.len() as u32;
        self.f.insts.push(Inst {
            guard,
            op,
            mods,
            operands: Operands::with_capacity(items.len()),
        });
        for o in items {
            let v = self.operand(o, ops, is_branch);
            if let Some(last) = self.f.insts.last_mut() {
                last.operands.push(v);
            }
        }
        self.f.spans.push(Span {
            line: i.line,
            col,
            start: i.start,
            end: i.end,
        });
    }

    /// Splits instruction word `word` (cached), reporting too many modifiers at `start`.
    pub(super) fn opcode(&mut self, word: &str, start: u32, line: u32) -> (Opcode, Arc<Modifiers>) {
        let (op, mods, too_many) = match self.words.get(word) {
            Some((op, m, too_many)) => (op.clone(), Arc::clone(m), *too_many),
            None => {
                let (op, rest) = Opcode::split(word);
                let too_many = rest.bytes().filter(|&c| c == b'.').count() >= Modifiers::MAX_WORDS;
                let mods = Arc::new(Modifiers::parse(&op, rest));
                self.words
                    .insert(word, (op.clone(), mods.clone(), too_many));
                (op, mods, too_many)
            }
        };
        if too_many {
            self.err(
                start,
                line,
                format!("too many modifiers on '{}'", op.name()),
            );
        }
        (op, mods)
    }

    fn operand(&mut self, o: &AstOp<'a>, ops: &[AstOp<'a>], is_branch: bool) -> Operand {
        match o {
            AstOp::Name(n, tok) => self.name_operand(n, *tok, is_branch),
            AstOp::Not(n, tok) => self
                .reg_operand(n, *tok)
                .map_or(Operand::Sink, Operand::PredNeg),
            AstOp::Pair((a, at), (b, bt)) => {
                let a = self.reg_operand(a, *at);
                let b = self.reg_operand(b, *bt);
                match (a, b) {
                    (Some(a), Some(b)) => Operand::PredPair(a, b),
                    _ => Operand::Sink,
                }
            }
            AstOp::Imm(v) => Operand::Imm(*v),
            AstOp::AddrImm(v, off) => Operand::Address(Address {
                base: AddrBase::Imm(*v),
                offset: *off,
            }),
            AstOp::AddrName(n, tok, off) => self.addr_operand(n, *tok, *off),
            AstOp::Vector(v) => Operand::Vector(self.operands(v.clone(), ops, false)),
            AstOp::Brackets(v) => Operand::Brackets(self.operands(v.clone(), ops, false)),
            AstOp::List(v) => Operand::List(self.operands(v.clone(), ops, false)),
            AstOp::Sink => Operand::Sink,
        }
    }

    fn operands(
        &mut self,
        r: crate::syntax::OpRange,
        ops: &[AstOp<'a>],
        is_branch: bool,
    ) -> Vec<Operand> {
        let items = ops.get(r.start as usize..r.end as usize).unwrap_or(&[]);
        let mut v = Vec::with_capacity(items.len());
        for o in items {
            v.push(self.operand(o, ops, is_branch));
        }
        v
    }

    /// `[n+off]`: a register or a symbol (never a label).
    pub(super) fn addr_operand(
        &mut self,
        n: &'a str,
        tok: crate::lexer::Token,
        off: i64,
    ) -> Operand {
        let base = if let Some(r) = self.find_reg(n) {
            Some(AddrBase::Reg(r))
        } else if let Some(s) = self.find_symbol(n) {
            Some(AddrBase::Symbol(s))
        } else {
            let what = if n.starts_with('%') {
                "register"
            } else {
                "identifier"
            };
            self.err(tok.start, tok.line, format!("undeclared {what} '{n}'"));
            None
        };
        base.map_or(Operand::Sink, |base| {
            Operand::Address(Address { base, offset: off })
        })
    }

    pub(super) fn name_operand(
        &mut self,
        n: &'a str,
        tok: crate::lexer::Token,
        is_branch: bool,
    ) -> Operand {
        if let Some(r) = self.find_reg(n) {
            return Operand::Reg(r);
        }
        if n.starts_with('%') || n == "WARP_SZ" {
            if let Some(s) = SpecialReg::from_name(n) {
                return Operand::Special(s);
            }
            self.err(tok.start, tok.line, format!("undeclared register '{n}'"));
            return Operand::Sink;
        }
        if self.defer_labels {
            self.pending.push(Pending {
                inst: self.cur_inst,
                name: n,
                scope: self.cur_scope(),
                symbol: self.find_symbol(n),
            });
            return PENDING;
        }
        if let Some(l) = self.find_label(n) {
            return Operand::Label(l);
        }
        if let Some(s) = self.find_symbol(n) {
            return Operand::Symbol(s);
        }
        let msg = if is_branch {
            format!("undefined label '{n}'")
        } else {
            format!("undeclared identifier '{n}'")
        };
        self.err(tok.start, tok.line, msg);
        Operand::Sink
    }
}
