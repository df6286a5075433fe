//! Function bodies: statements, instructions and operands.
//!
//! Bodies are parsed one function at a time ([`parse_body`]), called from
//! [`crate::lower`], so the statement list and operand arena are reused between functions and
//! stay small and cache-resident.

use super::SynError;
use super::{AstInst, AstOp, OpRange, PResult, Parser, Stmt, MAX_DEPTH};
use crate::ir::SrcLoc;
use crate::lexer::{Lexed, TokKind, Token};
use crate::types::StateSpace;

/// Parses the body starting at token `start` (see [`FuncDecl::body`]) into `stmts`, with
/// operands in the arena `ops` (both cleared first); syntax errors are appended to `errors`.
pub fn parse_body<'a>(
    src: &'a str,
    lexed: &Lexed,
    start: usize,
    stmts: &mut Vec<Stmt<'a>>,
    ops: &mut Vec<AstOp<'a>>,
    errors: &mut Vec<SynError>,
) {
    parse_body_tokens(src, &lexed.tokens, start, stmts, ops, errors);
}

/// Like [`parse_body`], over any token slice (such as a block lexed by
/// [`crate::lexer::lex_block`], which starts at index 0 and ends with the closing `}`).
pub fn parse_body_tokens<'a>(
    src: &'a str,
    toks: &[Token],
    start: usize,
    stmts: &mut Vec<Stmt<'a>>,
    ops: &mut Vec<AstOp<'a>>,
    errors: &mut Vec<SynError>,
) {
    stmts.clear();
    ops.clear();
    let mut p = Parser {
        src,
        toks,
        pos: start,
        errors: std::mem::take(errors),
        ops: std::mem::take(ops),
        scratch: Vec::new(),
    };
    if let Err(e) = p.body(stmts) {
        p.errors.push(e);
    }
    *ops = p.ops;
    *errors = p.errors;
}

/// Parses `toks` as exactly one body statement (an instruction or a declaration that the
/// direct lowering in [`crate::lower`] lexed on its own), with operands in `ops` (cleared
/// first). `None` unless the statement parses without any error and uses every token, so a
/// caller that falls back to [`parse_body_tokens`] on `None` sees no difference.
pub(crate) fn parse_statement<'a>(
    src: &'a str,
    toks: &[Token],
    ops: &mut Vec<AstOp<'a>>,
) -> Option<Stmt<'a>> {
    ops.clear();
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        errors: Vec::new(),
        ops: std::mem::take(ops),
        scratch: Vec::new(),
    };
    let mut out = Vec::with_capacity(1);
    let ok = p.stmt(&mut out).is_ok() && p.errors.is_empty() && p.pos == toks.len();
    *ops = p.ops;
    match (ok, out.pop(), out.is_empty()) {
        (true, Some(s), true) => Some(s),
        _ => None,
    }
}

impl<'a> Parser<'a, '_> {
    /// Statements up to the `}` closing the body (already past the opening `{`).
    fn body(&mut self, out: &mut Vec<Stmt<'a>>) -> PResult<()> {
        let mut depth = 1u32;
        loop {
            let Some(t) = self.peek() else {
                return Err(self.err_here("expected '}' at end of function body"));
            };
            if t.is(b'}') {
                self.pos += 1;
                depth -= 1;
                if depth == 0 {
                    return Ok(());
                }
                out.push(Stmt::Close);
                continue;
            }
            if t.is(b'{') {
                self.pos += 1;
                depth += 1;
                if depth > 64 {
                    return Err(self.err_after_prev("blocks nested too deeply"));
                }
                out.push(Stmt::Open);
                continue;
            }
            match self.stmt(out) {
                Ok(()) => {}
                Err(e) => {
                    self.push_err(e);
                    self.recover(false);
                }
            }
        }
    }

    /// Parses one statement and appends it to `out` (nothing for an empty `;`).
    fn stmt(&mut self, out: &mut Vec<Stmt<'a>>) -> PResult<()> {
        let Some(t) = self.peek() else {
            return Ok(());
        };
        match t.kind {
            TokKind::Punct(b';') => {
                self.pos += 1;
                Ok(())
            }
            TokKind::Word | TokKind::Punct(b'@')
                if !(t.kind == TokKind::Word && self.peek_at(1).is_some_and(|n| n.is(b':'))) =>
            {
                let i = self.inst()?;
                out.push(Stmt::Inst(i));
                Ok(())
            }
            _ => {
                if let Some(s) = self.other_stmt(t)? {
                    out.push(s);
                }
                Ok(())
            }
        }
    }

    /// A statement other than an instruction or `;`.
    fn other_stmt(&mut self, t: Token) -> PResult<Option<Stmt<'a>>> {
        match t.kind {
            TokKind::Directive => self.body_directive(t),
            TokKind::Word if self.peek_at(1).is_some_and(|n| n.is(b':')) => {
                self.pos += 2;
                let name = self.text(t);
                if let Some(d) = self.peek().filter(|d| d.kind == TokKind::Directive) {
                    let dt = self.text(d);
                    if matches!(dt, ".callprototype" | ".branchtargets" | ".calltargets") {
                        return self.labelled_directive(name, dt).map(Some);
                    }
                }
                Ok(Some(Stmt::Label(name, t)))
            }
            _ => Err(self.err_here(format!(
                "expected an instruction, found {}",
                self.describe()
            ))),
        }
    }

    fn labelled_directive(&mut self, name: &'a str, d: &str) -> PResult<Stmt<'a>> {
        let start = self.peek().map_or(0, |t| t.start);
        let list = d != ".callprototype";
        self.pos += 1;
        let mut targets = Vec::new();
        let mut depth = 0u32;
        while let Some(t) = self.peek() {
            if t.is(b';') && depth == 0 {
                let text = self.src.get(start as usize..t.start as usize).unwrap_or("");
                self.pos += 1;
                return Ok(Stmt::Directive {
                    name,
                    text: text.trim_end(),
                    targets,
                });
            }
            if t.is(b'(') {
                depth += 1;
            } else if t.is(b')') {
                depth = depth.saturating_sub(1);
            } else if t.is(b'{') || t.is(b'}') {
                return Err(self.err_here(format!("unexpected '{}' in '{d}'", self.text(t))));
            } else if list && t.kind == TokKind::Word {
                targets.push((self.text(t), t));
            }
            self.pos += 1;
        }
        Err(self.err_here(format!("expected ';' after '{d}'")))
    }

    fn body_directive(&mut self, t: Token) -> PResult<Option<Stmt<'a>>> {
        let d = self.text(t);
        self.pos += 1;
        match d {
            ".loc" => {
                let file = self.expect_u32("file index")?;
                let line = self.expect_u32("line")?;
                let col = self.expect_u32("column")?;
                // Skip `, function_name ..., inlined_at ...` on the same line.
                while self.peek().is_some_and(|n| n.line == t.line && !n.is(b'}')) {
                    self.pos += 1;
                }
                Ok(Some(Stmt::Loc(SrcLoc { file, line, col })))
            }
            ".pragma" => {
                let s = self.expect_str("pragma string")?;
                self.expect_semi("'.pragma'")?;
                Ok(Some(Stmt::Pragma(s)))
            }
            _ => {
                let space = StateSpace::from_word(d.get(1..).unwrap_or(""));
                match space {
                    Some(s) if s != StateSpace::Generic => {
                        Ok(Some(Stmt::Decl(self.var_decl(None, s)?)))
                    }
                    _ => {
                        self.pos -= 1;
                        Err(self.err_here(format!("unknown directive '{d}'")))
                    }
                }
            }
        }
    }

    fn inst(&mut self) -> PResult<AstInst<'a>> {
        let first = self
            .peek()
            .ok_or_else(|| self.err_here("expected an instruction"))?;
        let mut guard = None;
        if self.eat_punct(b'@') {
            let neg = self.eat_punct(b'!');
            let (name, tok) = self.expect_word("a predicate register after '@'")?;
            guard = Some((neg, name, tok));
        }
        let word = match self.peek() {
            Some(t) if t.kind == TokKind::Word => {
                self.pos += 1;
                self.text(t)
            }
            _ => self.expect_word("an instruction")?.0,
        };
        self.scratch.clear();
        if !self.eat_punct(b';') {
            loop {
                self.push_operand(0)?;
                if self.eat_punct(b';') {
                    break;
                }
                if !self.eat_punct(b',') {
                    let e = self.err_after_prev("expected ';' after instruction");
                    if self.peek().is_some_and(|n| n.line > first.line) {
                        // Likely a forgotten `;`: report it and keep what we have.
                        self.push_err(e);
                        break;
                    }
                    return Err(e);
                }
            }
        }
        let end = self
            .pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(first.end, |t| t.end);
        let operands = self.flush(0);
        Ok(AstInst {
            guard,
            word,
            operands,
            start: first.start,
            end,
            line: first.line,
        })
    }

    /// Parses one operand onto the scratch stack (a plain name without building a
    /// `Result`, the common case).
    #[inline]
    fn push_operand(&mut self, depth: u32) -> PResult<()> {
        if let Some(t) = self.peek() {
            if t.kind == TokKind::Word && depth <= MAX_DEPTH {
                let name = self.text(t);
                if name != "_" && !self.peek_at(1).is_some_and(|n| n.is(b'|')) {
                    self.pos += 1;
                    self.scratch.push(AstOp::Name(name, t));
                    return Ok(());
                }
            }
        }
        self.push_operand_slow(depth)
    }

    #[inline(never)]
    fn push_operand_slow(&mut self, depth: u32) -> PResult<()> {
        let op = self.operand(depth)?;
        self.scratch.push(op);
        Ok(())
    }

    fn operand(&mut self, depth: u32) -> PResult<AstOp<'a>> {
        if depth > MAX_DEPTH {
            return Err(self.err_here("operand nested too deeply"));
        }
        let Some(t) = self.peek() else {
            return Err(self.err_here("expected an operand"));
        };
        match t.kind {
            TokKind::Word => {
                self.pos += 1;
                let name = self.text(t);
                if name == "_" {
                    return Ok(AstOp::Sink);
                }
                if self.eat_punct(b'|') {
                    let second = self.expect_word("a predicate after '|'")?;
                    return Ok(AstOp::Pair((name, t), second));
                }
                Ok(AstOp::Name(name, t))
            }
            TokKind::Number | TokKind::Punct(b'-') => Ok(AstOp::Imm(self.signed_number()?)),
            TokKind::Punct(b'!') => {
                self.pos += 1;
                let (n, nt) = self.expect_word("a predicate after '!'")?;
                Ok(AstOp::Not(n, nt))
            }
            TokKind::Punct(b'{') => {
                self.pos += 1;
                Ok(AstOp::Vector(self.op_list(b'}', depth)?))
            }
            TokKind::Punct(b'(') => {
                self.pos += 1;
                Ok(AstOp::List(self.op_list(b')', depth)?))
            }
            TokKind::Punct(b'[') => {
                self.pos += 1;
                let first = self.operand(depth + 1)?;
                if self.at_punct(b'+') || self.at_punct(b'-') {
                    if self.at_punct(b'+') {
                        self.pos += 1;
                    }
                    let off = self.signed_offset()?;
                    self.expect_punct(b']', "to close address")?;
                    return match first {
                        AstOp::Name(n, nt) => Ok(AstOp::AddrName(n, nt, off)),
                        AstOp::Imm(i) => Ok(AstOp::AddrImm(i.bits(), off)),
                        _ => Err(self.err_after_prev("invalid address base")),
                    };
                }
                if self.eat_punct(b']') {
                    return Ok(match first {
                        AstOp::Name(n, nt) => AstOp::AddrName(n, nt, 0),
                        AstOp::Imm(i) => AstOp::AddrImm(i.bits(), 0),
                        other => {
                            let mark = self.scratch.len();
                            self.scratch.push(other);
                            AstOp::Brackets(self.flush(mark))
                        }
                    });
                }
                self.expect_punct(b',', "or ']' in address")?;
                if self.at_punct(b']') {
                    // `[%rd2,]` would otherwise become a one-element list that prints as the
                    // address `[%rd2]`.
                    return Err(self.err_here(format!(
                        "expected an operand after ',', found {}",
                        self.describe()
                    )));
                }
                let mark = self.scratch.len();
                self.scratch.push(first);
                self.op_items(b']', depth)?;
                Ok(AstOp::Brackets(self.flush(mark)))
            }
            _ => Err(self.err_here(format!("expected an operand, found {}", self.describe()))),
        }
    }

    /// Moves `scratch[mark..]` to the arena and returns its range there.
    fn flush(&mut self, mark: usize) -> OpRange {
        let start = self.ops.len() as u32;
        if mark == 0 {
            // One bulk copy (no per-variant clone); leaves `scratch` empty.
            self.ops.append(&mut self.scratch);
        } else if mark < self.scratch.len() {
            self.ops.extend(self.scratch.drain(mark..));
        }
        start..self.ops.len() as u32
    }

    /// Comma-separated operands up to `close` (allowing an empty list), as an arena range.
    fn op_list(&mut self, close: u8, depth: u32) -> PResult<OpRange> {
        let mark = self.scratch.len();
        self.op_items(close, depth)?;
        Ok(self.flush(mark))
    }

    /// Pushes comma-separated operands up to `close` onto the scratch stack.
    fn op_items(&mut self, close: u8, depth: u32) -> PResult<()> {
        if self.eat_punct(close) {
            return Ok(());
        }
        loop {
            self.push_operand(depth + 1)?;
            if self.eat_punct(close) {
                return Ok(());
            }
            self.expect_punct(b',', &format!("or '{}' in operand list", close as char))?;
        }
    }
}
