//! Direct lowering: a function body from source bytes to IR in one pass, without tokens or
//! a syntax tree for the common statements.
//!
//! The two-pass lowering (lex the body, parse it into [`Stmt`]s, number scopes and labels,
//! then lower) walks every instruction three times; it is the reference. This path scans the
//! bytes once and lowers as it goes:
//! - instructions whose operands are names, `_`, numbers, `!p`, `[base]`/`[base+-off]`
//!   addresses and `{a, b}` vectors are lowered straight from the bytes;
//! - `.loc`, `.reg` declarations, labels, `{ }` scopes and comments are handled in place;
//! - any other statement (other declarations, `.pragma`, `a|b` pairs, call lists, operands
//!   spread over lines ...) is lexed and parsed on its own by the reference code
//!   ([`crate::syntax::parse_statement`]) and lowered by the same [`FnLower`] methods;
//! - labels are not known in advance, so a name operand that may be a label is lowered as
//!   [`PENDING`] and resolved at the end of the body ([`Pending`]).
//!
//! It never reports errors: on anything unexpected (a malformed statement, any lowering
//! error, a labelled directive, a stray byte) it gives up, and the caller lowers the body the
//! two-pass way, which reports the errors. A body it accepts lowers to exactly the reference's
//! IR, spans included; `tests/direct.rs` and the `parse` fuzz target check that.

use super::{FnLower, ModuleNames, WordCache, PENDING};
use crate::ir::*;
use crate::lexer::{
    class, lex_block, scan_number, scan_word, Block, Lexed, TokKind, Token, C_DIGIT, C_PERCENT,
    C_SPACE, C_WORD,
};
use crate::literal::{parse_number, parse_u32};
use crate::opcode::Opcode;
use crate::syntax::{parse_statement, AstOp, Declarator, FuncDecl, Stmt, VarDecl};
use crate::types::{ScalarType, StateSpace, VecWidth};
use std::sync::Arc;

use super::LowerError;

/// Blocks may nest this deep (as in [`crate::syntax::parse_body`]).
const MAX_NESTING: usize = 64;

/// A position in the body's bytes, with its line.
struct Cursor<'s> {
    /// The source up to the body's closing `}` inclusive.
    src: &'s str,
    /// The same as bytes.
    b: &'s [u8],
    i: usize,
    line: u32,
}

impl<'s> Cursor<'s> {
    /// The text of `s..e`.
    #[inline]
    fn text(&self, s: usize, e: usize) -> Option<&'s str> {
        self.src.get(s..e)
    }

    /// The byte at the cursor, 0 at the end (0 is never valid PTX, so it ends every scan).
    #[inline]
    fn peek(&self) -> u8 {
        self.b.get(self.i).copied().unwrap_or(0)
    }

    /// Skips blanks on the current line.
    #[inline]
    fn blanks(&mut self) {
        while class(self.peek()) == C_SPACE && self.i < self.b.len() {
            self.i += 1;
        }
    }

    /// Skips blanks, newlines and comments; false at an unterminated block comment.
    fn trivia(&mut self) -> bool {
        loop {
            match self.peek() {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                }
                b'/' if self.b.get(self.i + 1) == Some(&b'/') => {
                    while !matches!(self.peek(), b'\n' | 0) {
                        self.i += 1;
                    }
                }
                b'/' if self.b.get(self.i + 1) == Some(&b'*') => {
                    self.i += 2;
                    loop {
                        match self.peek() {
                            0 if self.i >= self.b.len() => return false,
                            b'*' if self.b.get(self.i + 1) == Some(&b'/') => {
                                self.i += 2;
                                break;
                            }
                            b'\n' => self.line += 1,
                            _ => {}
                        }
                        self.i += 1;
                    }
                }
                c if class(c) == C_SPACE && self.i < self.b.len() => self.i += 1,
                _ => return true,
            }
        }
    }

    /// Scans a word (`%rd1`, `$L__BB0_2`, `%tid.x`) starting at the cursor, if one starts here.
    #[inline]
    fn word(&mut self) -> Option<(usize, usize)> {
        let c = class(self.peek());
        if c != C_WORD && c != C_PERCENT {
            return None;
        }
        let start = self.i;
        self.i = scan_word(self.b, start + 1, true);
        Some((start, self.i))
    }

    /// A number token at the cursor that is a plain decimal (1-18 digits, no leading zero),
    /// read in one pass; `None`, with the cursor unmoved, for any other token, which the
    /// caller then reads with [`Cursor::number`]. The value is what `parse_number` gives.
    #[inline]
    fn decimal(&mut self) -> Option<u64> {
        let start = self.i;
        let mut i = start;
        let mut v = 0u64;
        while let Some(&d) = self.b.get(i) {
            if !d.is_ascii_digit() {
                break;
            }
            if i - start == 18 {
                return None;
            }
            v = v * 10 + u64::from(d - b'0');
            i += 1;
        }
        let n = i - start;
        if n == 0 || (n > 1 && self.b.get(start) == Some(&b'0')) {
            return None;
        }
        // Where `scan_number` would go on (`12ab`, `1.5`, `1_0`), the token is not plain.
        if self
            .b
            .get(i)
            .is_some_and(|&d| d.is_ascii_alphanumeric() || d == b'.' || d == b'_')
        {
            return None;
        }
        self.i = i;
        Some(v)
    }

    /// Scans a number token at the cursor, if one starts here.
    #[inline]
    fn number(&mut self) -> Option<(usize, usize)> {
        if class(self.peek()) != C_DIGIT {
            return None;
        }
        let start = self.i;
        self.i = scan_number(self.b, start);
        Some((start, self.i))
    }
}

/// Why a statement was not lowered directly.
enum Miss {
    /// Lower it through the reference parser ([`FnLower::via_parser`]).
    Statement,
    /// Give up on the whole body.
    Body,
}

impl<'a, 'm> FnLower<'a, 'm> {
    /// Lowers function `d`, whose body is the skipped `block` of `src`, directly from the
    /// bytes. `None` (with `errors` as they were; `words` may have gained entries) when the
    /// body needs the two-pass lowering.
    pub(super) fn run_direct(
        d: &'m FuncDecl<'a>,
        block: &Block,
        src: &'a str,
        names: &'m ModuleNames<'a>,
        lexed: &'m Lexed,
        words: &mut WordCache,
        errors: &'m mut Vec<LowerError>,
    ) -> Option<Function> {
        let before = errors.len();
        let mut l = FnLower::new(d, &[], names, lexed, words, errors);
        l.defer_labels = true;
        let ok = l.direct_body(src, block) && l.resolve_pending() && l.errors.len() == before;
        *words = std::mem::take(&mut l.words);
        if ok {
            Some(l.f)
        } else {
            l.errors.truncate(before);
            None
        }
    }

    /// The statement loop; true when the whole body was lowered without error.
    fn direct_body(&mut self, src: &'a str, block: &Block) -> bool {
        let end = block.end as usize;
        let Some(body) = src.get(..end) else {
            return false;
        };
        let mut c = Cursor {
            src: body,
            b: body.as_bytes(),
            i: block.start as usize,
            line: block.line,
        };
        self.f.scopes.push(Scope {
            parent: None,
            start: InstId(0),
            end: InstId(0),
        });
        self.frames.push(Default::default());
        self.stack.push(ScopeId(0));
        // Every instruction ends with a `;`: room for that many (a few more than needed,
        // for declarations), so the large `Inst`s are never moved by growth.
        let semis = count_byte(c.b.get(c.i..).unwrap_or(&[]), b';');
        self.f.insts.reserve_exact(semis);
        self.f.spans.reserve_exact(semis);
        let mut toks = Vec::new();
        let mut ops = Vec::new();
        loop {
            if !c.trivia() {
                return false;
            }
            let start = c.i;
            let r = match c.peek() {
                b'}' => {
                    c.i += 1;
                    let n = InstId::new(self.f.insts.len());
                    let cur = self.cur_scope();
                    if let Some(sc) = self.f.scopes.get_mut(cur.index()) {
                        sc.end = n;
                    }
                    if self.stack.len() == 1 {
                        return c.i == end;
                    }
                    self.stack.pop();
                    self.frames.pop();
                    Ok(())
                }
                b'{' => {
                    c.i += 1;
                    if self.stack.len() >= MAX_NESTING {
                        return false;
                    }
                    let n = InstId::new(self.f.insts.len());
                    let id = ScopeId::new(self.f.scopes.len());
                    self.f.scopes.push(Scope {
                        parent: Some(self.cur_scope()),
                        start: n,
                        end: n,
                    });
                    self.stack.push(id);
                    self.frames.push(Default::default());
                    Ok(())
                }
                b';' => {
                    c.i += 1;
                    Ok(())
                }
                b'.' => self.directive(&mut c),
                b'@' => self.inst_direct(&mut c, src),
                _ => match c.word() {
                    Some((ws, we)) => {
                        c.blanks();
                        match c.peek() {
                            b':' => {
                                c.i += 1;
                                self.label(src.get(ws..we).unwrap_or(""))
                            }
                            // A label's `:` may follow on a later line; leave that to the parser.
                            b'\n' | b'/' => Err(Miss::Statement),
                            _ => {
                                c.i = start;
                                self.inst_direct(&mut c, src)
                            }
                        }
                    }
                    None => Err(Miss::Body),
                },
            };
            match r {
                Ok(()) => {}
                Err(Miss::Body) => return false,
                Err(Miss::Statement) => {
                    // Undo what the statement lowered so far, then parse it.
                    c.i = start;
                    if !self.via_parser(&mut c, src, &mut toks, &mut ops) {
                        return false;
                    }
                }
            }
        }
    }

    /// `name:` (the colon already read); as the reference's label pre-pass.
    fn label(&mut self, name: &'a str) -> Result<(), Miss> {
        let cur = self.cur_scope();
        let id = LabelId::new(self.f.labels.len());
        if self.labels.insert((cur, name), id).is_some() {
            return Err(Miss::Body);
        }
        if self.f.labels.capacity() == 0 {
            self.f.labels.reserve(self.f.insts.capacity() / 8);
        }
        self.f.labels.push(LabelInfo {
            name: name.to_string(),
            target: InstId::new(self.f.insts.len()),
            scope: cur,
        });
        Ok(())
    }

    /// A directive statement: `.loc` and `.reg` here, anything else through the parser.
    fn directive(&mut self, c: &mut Cursor<'a>) -> Result<(), Miss> {
        let start = c.i;
        let end = scan_word(c.b, start + 1, false);
        match c.b.get(start..end) {
            Some(b".loc") => {}
            Some(b".reg") => {
                c.i = end;
                return self.reg_decl(c);
            }
            _ => return Err(Miss::Statement),
        }
        c.i = end;
        let mut v = [0u32; 3];
        for x in &mut v {
            c.blanks();
            *x = match c.decimal() {
                Some(d) => u32::try_from(d).ok(),
                None => {
                    let (s, e) = c.number().ok_or(Miss::Body)?;
                    parse_u32(c.text(s, e).ok_or(Miss::Body)?)
                }
            }
            .ok_or(Miss::Body)?;
        }
        // The reference skips every further token on the `.loc` line except `}`
        // (`, function_name ..., inlined_at ...`). Accept only bytes that lex to such tokens.
        loop {
            match c.peek() {
                b'\n' | 0 => break,
                b'/' if c.b.get(c.i + 1) == Some(&b'/') => break,
                b'{' | b'}' | b'"' | b'/' => return Err(Miss::Body),
                x if x.is_ascii_alphanumeric()
                    || matches!(
                        x,
                        b' ' | b'\t'
                            | b'\r'
                            | b'_'
                            | b'$'
                            | b'%'
                            | b'.'
                            | b','
                            | b':'
                            | b'+'
                            | b'-'
                    ) =>
                {
                    c.i += 1
                }
                _ => return Err(Miss::Body),
            }
        }
        let loc = SrcLoc {
            file: v[0],
            line: v[1],
            col: v[2],
        };
        let at = InstId::new(self.f.insts.len());
        if self.f.locs.capacity() == 0 {
            // Compilers emit a `.loc` before most instructions once they emit one.
            self.f
                .locs
                .reserve(self.f.insts.capacity().saturating_sub(at.index()));
        }
        match self.f.locs.last_mut() {
            Some(last) if last.0 == at => last.1 = loc,
            _ => self.f.locs.push((at, loc)),
        }
        Ok(())
    }

    /// `.reg [.vN] .type name[<n>], ...;` after the `.reg`, as the parser's `var_decl`
    /// reads it; alignment, arrays and initialisers go to the parser.
    fn reg_decl(&mut self, c: &mut Cursor<'a>) -> Result<(), Miss> {
        let line = c.line;
        let (mut vec, mut ty) = (None, None);
        loop {
            c.blanks();
            if c.peek() != b'.' || class(c.b.get(c.i + 1).copied().unwrap_or(0)) != C_WORD {
                break;
            }
            let end = scan_word(c.b, c.i + 1, false);
            let w = c.text(c.i + 1, end).ok_or(Miss::Body)?;
            if let Some(v) = VecWidth::from_word(w) {
                vec = Some(v);
            } else if let Some(t) = ScalarType::from_word(w) {
                ty = Some(t);
            } else {
                return Err(Miss::Statement);
            }
            c.i = end;
        }
        let ty = ty.ok_or(Miss::Statement)?;
        let mut decls = Vec::with_capacity(1);
        loop {
            c.blanks();
            let (s, e) = c.word().ok_or(Miss::Statement)?;
            c.blanks();
            let mut range = None;
            if c.peek() == b'<' {
                c.i += 1;
                c.blanks();
                let (ns, ne) = c.number().ok_or(Miss::Statement)?;
                range = Some(parse_u32(c.text(ns, ne).ok_or(Miss::Body)?).ok_or(Miss::Statement)?);
                c.blanks();
                if c.peek() != b'>' {
                    return Err(Miss::Statement);
                }
                c.i += 1;
                c.blanks();
            }
            decls.push(Declarator {
                name: c.text(s, e).ok_or(Miss::Body)?,
                tok: Token {
                    kind: TokKind::Word,
                    start: s as u32,
                    end: e as u32,
                    line,
                },
                range,
                dims: Vec::new(),
                init: None,
            });
            match c.peek() {
                b',' => c.i += 1,
                b';' => break,
                _ => return Err(Miss::Statement),
            }
        }
        c.i += 1;
        self.decl(&VarDecl {
            linkage: None,
            space: StateSpace::Reg,
            align: None,
            vec,
            ty,
            decls,
        });
        Ok(())
    }

    /// An instruction at the cursor, lowered from the bytes. On `Err(Miss::Statement)` the
    /// instruction has been removed again.
    fn inst_direct(&mut self, c: &mut Cursor<'a>, src: &'a str) -> Result<(), Miss> {
        let n = self.f.insts.len();
        let n_pending = self.pending.len();
        let r = self.inst_bytes(c, src);
        if r.is_err() {
            self.f.insts.truncate(n);
            self.f.spans.truncate(n);
            self.pending.truncate(n_pending);
        }
        r
    }

    fn inst_bytes(&mut self, c: &mut Cursor<'a>, src: &'a str) -> Result<(), Miss> {
        let start = c.i;
        let line = c.line;
        let text = |s: usize, e: usize| src.get(s..e).ok_or(Miss::Body);
        let tok = |s: usize, e: usize| Token {
            kind: TokKind::Word,
            start: s as u32,
            end: e as u32,
            line,
        };
        let mut guard = None;
        if c.peek() == b'@' {
            c.i += 1;
            c.blanks();
            let negated = c.peek() == b'!';
            if negated {
                c.i += 1;
                c.blanks();
            }
            let (s, e) = c.word().ok_or(Miss::Statement)?;
            guard = Some((negated, text(s, e)?, tok(s, e)));
            c.blanks();
        }
        let (ws, we) = c.word().ok_or(Miss::Statement)?;
        let word = text(ws, we)?;
        let guard = match guard {
            Some((negated, name, t)) => Some(Guard {
                reg: self.reg_operand(name, t).ok_or(Miss::Body)?,
                negated,
            }),
            None => None,
        };
        // Copy the cached opcode and modifiers straight into the new instruction.
        let key = match c.b.get(ws..) {
            Some(rest) if rest.len() >= 16 => WordCache::key_at(rest, word.len()),
            _ => WordCache::key(word.as_bytes()),
        };
        let cached = self.words.find_keyed(word, key);
        let (op, mods) = match cached.and_then(|k| self.words.entries.get(k)) {
            Some((_, _, true)) => return Err(Miss::Body),
            Some((op, mods, false)) => (op.clone(), Arc::clone(mods)),
            // First use of the word, or the cache is full: split it as the two-pass way does.
            // (It reports too many modifiers, which makes the body fall back.)
            None => self.opcode(word, start as u32, line),
        };
        let is_branch = matches!(op, Opcode::Bra | Opcode::BrxIdx);
        self.cur_inst = self.f.insts.len() as u32;
        let mut inst = Inst {
            guard,
            op,
            mods,
            operands: Operands::new(),
        };
        c.blanks();
        if c.peek() != b';' {
            loop {
                self.operand_bytes(c, src, is_branch, &mut inst.operands)?;
                c.blanks();
                match c.peek() {
                    b',' => {
                        c.i += 1;
                        c.blanks();
                    }
                    b';' => break,
                    _ => return Err(Miss::Statement),
                }
            }
        }
        c.i += 1;
        self.f.insts.push(inst);
        self.f.spans.push(Span {
            line,
            col: self.lexed.col(line, start as u32),
            start: start as u32,
            end: c.i as u32,
        });
        Ok(())
    }

    /// One operand at the cursor.
    fn operand_bytes(
        &mut self,
        c: &mut Cursor<'a>,
        src: &'a str,
        is_branch: bool,
        out: &mut Operands,
    ) -> Result<(), Miss> {
        // Operands are pushed into `out` in place: returning a `Result<Operand, _>` costs
        // store-forwarding stalls on its odd layout (measured: a third of this path).
        let line = c.line;
        let tok = |s: usize, e: usize| Token {
            kind: TokKind::Word,
            start: s as u32,
            end: e as u32,
            line,
        };
        match c.peek() {
            b'[' => {
                c.i += 1;
                c.blanks();
                if let Some((s, e)) = c.word() {
                    let name = src.get(s..e).ok_or(Miss::Body)?;
                    if name == "_" {
                        return Err(Miss::Statement);
                    }
                    let offset = address_offset(c)?;
                    match self.find_reg_fast(name) {
                        Some(r) => out.push(Operand::Address(Address {
                            base: AddrBase::Reg(r),
                            offset,
                        })),
                        None => out.push(self.addr_operand(name, tok(s, e), offset)),
                    }
                } else {
                    let v = signed_number(c).ok_or(Miss::Statement)?;
                    let offset = address_offset(c)?;
                    out.push(Operand::Address(Address {
                        base: AddrBase::Imm(v.bits()),
                        offset,
                    }));
                }
            }
            b'{' => {
                c.i += 1;
                let mut v = Vec::new();
                c.blanks();
                if c.peek() == b'}' {
                    c.i += 1;
                    out.push(Operand::Vector(v));
                    return Ok(());
                }
                loop {
                    c.blanks();
                    let (s, e) = c.word().ok_or(Miss::Statement)?;
                    let name = src.get(s..e).ok_or(Miss::Body)?;
                    c.blanks();
                    if name == "_" {
                        v.push(Operand::Sink);
                    } else if c.peek() == b'|' {
                        return Err(Miss::Statement);
                    } else {
                        v.push(self.name_operand(name, tok(s, e), false));
                    }
                    match c.peek() {
                        b',' => c.i += 1,
                        b'}' => {
                            c.i += 1;
                            out.push(Operand::Vector(v));
                            return Ok(());
                        }
                        _ => return Err(Miss::Statement),
                    }
                }
            }
            b'!' => {
                c.i += 1;
                c.blanks();
                let (s, e) = c.word().ok_or(Miss::Statement)?;
                let name = src.get(s..e).ok_or(Miss::Body)?;
                let r = self.reg_operand(name, tok(s, e)).ok_or(Miss::Body)?;
                out.push(Operand::PredNeg(r));
            }
            _ => match c.word() {
                Some((s, e)) => {
                    let name = src.get(s..e).ok_or(Miss::Body)?;
                    if name == "_" {
                        out.push(Operand::Sink);
                        return Ok(());
                    }
                    c.blanks();
                    if c.peek() == b'|' {
                        return Err(Miss::Statement);
                    }
                    match self.find_reg_fast(name) {
                        Some(r) => out.push(Operand::Reg(r)),
                        None => out.push(self.name_operand(name, tok(s, e), is_branch)),
                    }
                }
                None => out.push(Operand::Imm(signed_number(c).ok_or(Miss::Statement)?)),
            },
        }
        Ok(())
    }

    /// The statement at the cursor (up to its `;`), lexed and parsed by the reference code
    /// and lowered by the shared methods. False when that fails or reports anything.
    fn via_parser(
        &mut self,
        c: &mut Cursor<'a>,
        src: &'a str,
        toks: &mut Vec<Token>,
        ops: &mut Vec<AstOp<'a>>,
    ) -> bool {
        let start = c.i;
        let Some(semi) = statement_end(c.b, start) else {
            return false;
        };
        let block = Block {
            open: 0,
            start: start as u32,
            end: semi as u32 + 1,
            line: c.line,
        };
        let mut lex_errors = Vec::new();
        lex_block(src, &block, toks, &mut lex_errors);
        if !lex_errors.is_empty() {
            return false;
        }
        match parse_statement(src, toks, ops) {
            Some(Stmt::Inst(i)) => self.inst(&i, ops),
            Some(Stmt::Decl(v)) => self.decl(&v),
            Some(Stmt::Pragma(p)) => {
                let at = InstId::new(self.f.insts.len());
                self.f.pragmas.push((at, p));
            }
            _ => return false,
        }
        c.line += c.b[start..=semi].iter().filter(|&&x| x == b'\n').count() as u32;
        c.i = semi + 1;
        true
    }

    /// Resolves every [`Pending`] operand; false if a name is neither a label nor a symbol.
    fn resolve_pending(&mut self) -> bool {
        let pending = std::mem::take(&mut self.pending);
        let mut k = 0;
        while let Some(first) = pending.get(k) {
            let n = pending[k..]
                .iter()
                .take_while(|p| p.inst == first.inst)
                .count();
            let mut found = Vec::with_capacity(n);
            for p in &pending[k..k + n] {
                let label = self
                    .scope_chain_from(p.scope)
                    .find_map(|s| self.labels.get(&(s, p.name)).copied());
                match (label, p.symbol) {
                    (Some(l), _) => found.push(Operand::Label(l)),
                    (None, Some(s)) => found.push(Operand::Symbol(s)),
                    (None, None) => return false,
                }
            }
            let Some(inst) = self.f.insts.get_mut(first.inst as usize) else {
                return false;
            };
            let mut it = found.into_iter();
            if !fill_pending(&mut inst.operands, &mut it) || it.next().is_some() {
                return false;
            }
            k += n;
        }
        true
    }
}

/// Replaces the [`PENDING`] operands in `ops`, depth first (the order they were lowered in),
/// with the next values of `with`; false if `with` runs out.
fn fill_pending(ops: &mut [Operand], with: &mut impl Iterator<Item = Operand>) -> bool {
    for o in ops {
        let filled = match o {
            Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => fill_pending(v, with),
            _ if *o == PENDING => with.next().map(|x| *o = x).is_some(),
            _ => true,
        };
        if !filled {
            return false;
        }
    }
    true
}

/// How many bytes of `b` equal `x` (eight at a time).
fn count_byte(b: &[u8], x: u8) -> usize {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let pattern = u64::from_le_bytes([x; 8]);
    let mut chunks = b.chunks_exact(8);
    let mut n = 0;
    for ch in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(ch);
        let t = u64::from_le_bytes(a) ^ pattern;
        // High bit set in each byte of `y` exactly where `t`'s byte is nonzero.
        let y = ((t & LOW7) + LOW7) | t;
        n += (!y & !LOW7).count_ones() as usize;
    }
    n + chunks.remainder().iter().filter(|&&c| c == x).count()
}

/// A number token at the cursor with an optional `-` right before it, as the reference's
/// `signed_number` reads it (which also allows blanks after the `-`).
fn signed_number(c: &mut Cursor<'_>) -> Option<Immediate> {
    let neg = c.peek() == b'-';
    if neg {
        c.i += 1;
        c.blanks();
    }
    let v = match c.decimal() {
        Some(d) => Immediate::Int(d as i64),
        None => {
            let (s, e) = c.number()?;
            parse_number(c.text(s, e)?)?
        }
    };
    Some(if neg { v.negate() } else { v })
}

/// After an address base: `]`, or `+off]`/`+-off]`/`-off]`, returning the offset.
fn address_offset(c: &mut Cursor<'_>) -> Result<i64, Miss> {
    c.blanks();
    let mut off = 0;
    if matches!(c.peek(), b'+' | b'-') {
        if c.peek() == b'+' {
            c.i += 1;
            c.blanks();
        }
        off = match signed_number(c) {
            Some(Immediate::Int(v)) => v,
            Some(Immediate::UInt(v)) => v as i64,
            _ => return Err(Miss::Statement),
        };
        c.blanks();
    }
    if c.peek() != b']' {
        return Err(Miss::Statement);
    }
    c.i += 1;
    Ok(off)
}

/// Index of the `;` ending the statement that starts at `start`: the first `;` outside a
/// string. `None` at a comment (the parser's view of it could differ), a string the lexer
/// would reject, or the end of the body.
fn statement_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    loop {
        match *b.get(i)? {
            b';' => return Some(i),
            b'/' => return None,
            b'"' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'"' => break,
                        b'\\' | b'\n' => return None,
                        _ => i += 1,
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_bytes() {
        let text = b";a;;\x80\xff;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;; ;;x;";
        for k in 0..text.len() {
            let want = text[k..].iter().filter(|&&c| c == b';').count();
            assert_eq!(count_byte(&text[k..], b';'), want);
        }
    }

    #[test]
    fn statement_ends() {
        assert_eq!(statement_end(b"mov.u32 %r1, 1;", 0), Some(14));
        assert_eq!(statement_end(b".pragma \"a;b\";", 0), Some(13));
        assert_eq!(statement_end(b"mov // x;\n;", 0), None);
        assert_eq!(statement_end(b"ret", 0), None);
    }
}
