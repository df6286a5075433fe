//! Stage 2: tokens -> syntax tree ([`Ast`]), names still unresolved.
//!
//! A recursive-descent parser over the token slice. Names (registers, labels, symbols) are
//! borrowed `&str`s; instruction words are kept whole for [`crate::lower`] to split. Errors
//! are collected and parsing recovers at the next `;`, `}` or top-level directive; a missing
//! `;` is reported at the end of the previous token and parsing continues at the next token.
//! Nesting (braces, operand lists, initialisers) is bounded so no input can exhaust the stack.

use crate::ir::{Attributes, FileInfo, Immediate, Init, Param, PtrAttrs, SrcLoc};
use crate::lexer::{Lexed, TokKind, Token};
use crate::literal::{parse_number, parse_u32};
use crate::types::{Linkage, ScalarType, StateSpace, VecWidth};

mod body;
pub(crate) use body::parse_statement;
pub use body::{parse_body, parse_body_tokens};

/// Maximum nesting of operand lists and initialisers.
const MAX_DEPTH: u32 = 16;

/// A syntax error at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SynError {
    /// Byte offset.
    pub offset: u32,
    /// 1-based line.
    pub line: u32,
    /// Description.
    pub message: String,
}

/// A parsed module, names unresolved.
#[derive(Debug, Default)]
pub struct Ast<'a> {
    /// Top-level items in order.
    pub items: Vec<AstItem<'a>>,
}

/// A range of the operand arena filled by [`parse_body`].
pub type OpRange = std::ops::Range<u32>;

/// A top-level item.
#[derive(Debug)]
pub enum AstItem<'a> {
    /// `.version major.minor`
    Version(u32, u32),
    /// `.target a, b`
    Target(Vec<&'a str>),
    /// `.address_size n`
    AddressSize(u32),
    /// `.file`
    File(FileInfo),
    /// `.pragma "..."`
    Pragma(String),
    /// `.section name { body }`
    Section(&'a str, &'a str),
    /// Variable declaration.
    Var(VarDecl<'a>),
    /// Function declaration or definition.
    Func(FuncDecl<'a>),
}

/// A variable or register declaration with one or more declarators.
#[derive(Debug)]
pub struct VarDecl<'a> {
    /// Linkage directive.
    pub linkage: Option<Linkage>,
    /// State space.
    pub space: StateSpace,
    /// `.align`
    pub align: Option<u32>,
    /// `.v2`/`.v4`
    pub vec: Option<VecWidth>,
    /// Element type.
    pub ty: ScalarType,
    /// Declared names.
    pub decls: Vec<Declarator<'a>>,
}

/// One declared name.
#[derive(Debug)]
pub struct Declarator<'a> {
    /// Name.
    pub name: &'a str,
    /// Its token.
    pub tok: Token,
    /// `<n>` range count.
    pub range: Option<u32>,
    /// `[n]` / `[]` dimensions.
    pub dims: Vec<Option<u32>>,
    /// Initialiser.
    pub init: Option<Init>,
}

/// A function header with optional body.
#[derive(Debug)]
pub struct FuncDecl<'a> {
    /// Linkage directive.
    pub linkage: Option<Linkage>,
    /// `.entry` rather than `.func`.
    pub is_entry: bool,
    /// Name.
    pub name: &'a str,
    /// Return parameters.
    pub returns: Vec<Param>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Performance directives.
    pub attrs: Attributes,
    /// Token index just after the body's `{`, `None` for a declaration. Bodies are parsed
    /// one at a time by [`parse_body`] during lowering, so their syntax trees stay small.
    pub body: Option<usize>,
}

/// A body statement.
#[derive(Debug)]
pub enum Stmt<'a> {
    /// `.reg`/`.local`/`.shared`/`.param` declaration.
    Decl(VarDecl<'a>),
    /// `name:`
    Label(&'a str, Token),
    /// An instruction.
    Inst(AstInst<'a>),
    /// `{`
    Open,
    /// `}`
    Close,
    /// `.loc`
    Loc(SrcLoc),
    /// `.pragma`
    Pragma(String),
    /// `name: .callprototype ...;` / `.branchtargets` / `.calltargets`.
    Directive {
        /// Label name.
        name: &'a str,
        /// Directive text after the colon.
        text: &'a str,
        /// Words listed by `.branchtargets`/`.calltargets`.
        targets: Vec<(&'a str, Token)>,
    },
}

/// An instruction before name resolution.
#[derive(Debug)]
pub struct AstInst<'a> {
    /// `@[!]name` guard.
    pub guard: Option<(bool, &'a str, Token)>,
    /// The dotted instruction word.
    pub word: &'a str,
    /// Operands (a range of the operand arena).
    pub operands: OpRange,
    /// Byte offset of the first token.
    pub start: u32,
    /// Byte offset past the `;`.
    pub end: u32,
    /// Line of the first token.
    pub line: u32,
}

/// An operand before name resolution.
#[derive(Clone, Debug)]
pub enum AstOp<'a> {
    /// A name (register, special register, symbol or label).
    Name(&'a str, Token),
    /// `!name`
    Not(&'a str, Token),
    /// `a|b`
    Pair((&'a str, Token), (&'a str, Token)),
    /// A number.
    Imm(Immediate),
    /// `[name+off]`
    AddrName(&'a str, Token, i64),
    /// `[imm]`
    AddrImm(u64, i64),
    /// `{...}`
    Vector(OpRange),
    /// `[a, b]`
    Brackets(OpRange),
    /// `(a, b)`
    List(OpRange),
    /// `_`
    Sink,
}

type PResult<T> = Result<T, SynError>;

struct Parser<'a, 't> {
    src: &'a str,
    toks: &'t [Token],
    pos: usize,
    errors: Vec<SynError>,
    ops: Vec<AstOp<'a>>,
    scratch: Vec<AstOp<'a>>,
}

/// Parses a token stream. Returns the (possibly partial) tree and all syntax errors.
pub fn parse_tokens<'a>(src: &'a str, lexed: &'a Lexed) -> (Ast<'a>, Vec<SynError>) {
    let mut p = Parser {
        src,
        toks: &lexed.tokens,
        pos: 0,
        errors: Vec::new(),
        ops: Vec::new(),
        scratch: Vec::new(),
    };
    let ast = p.module();
    (ast, p.errors)
}

impl<'a> Parser<'a, '_> {
    fn peek(&self) -> Option<Token> {
        self.toks.get(self.pos).copied()
    }
    fn peek_at(&self, k: usize) -> Option<Token> {
        self.toks.get(self.pos + k).copied()
    }
    fn text(&self, t: Token) -> &'a str {
        t.text(self.src)
    }
    fn bump(&mut self) -> Option<Token> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    fn at_punct(&self, c: u8) -> bool {
        self.peek().is_some_and(|t| t.is(c))
    }
    fn eat_punct(&mut self, c: u8) -> bool {
        if self.at_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn at_directive(&self, d: &str) -> bool {
        self.peek()
            .is_some_and(|t| t.kind == TokKind::Directive && self.text(t) == d)
    }
    /// An error at the current token (or at the end of input).
    fn err_here(&self, msg: impl Into<String>) -> SynError {
        match self.peek() {
            Some(t) => SynError {
                offset: t.start,
                line: t.line,
                message: msg.into(),
            },
            None => self.err_after_prev(msg),
        }
    }
    /// An error just after the previous token (for a missing `;`).
    fn err_after_prev(&self, msg: impl Into<String>) -> SynError {
        let prev = self.pos.checked_sub(1).and_then(|i| self.toks.get(i));
        match prev {
            Some(t) => SynError {
                offset: t.end,
                line: t.line,
                message: msg.into(),
            },
            None => SynError {
                offset: 0,
                line: 1,
                message: msg.into(),
            },
        }
    }
    fn describe(&self) -> String {
        match self.peek() {
            Some(t) => format!("'{}'", self.text(t)),
            None => "end of input".into(),
        }
    }
    fn expect_punct(&mut self, c: u8, what: &str) -> PResult<Token> {
        match self.peek() {
            Some(t) if t.is(c) => {
                self.pos += 1;
                Ok(t)
            }
            _ => Err(self.err_here(format!(
                "expected '{}' {what}, found {}",
                c as char,
                self.describe()
            ))),
        }
    }
    fn expect_semi(&mut self, what: &str) -> PResult<()> {
        if self.eat_punct(b';') {
            Ok(())
        } else {
            Err(self.err_after_prev(format!("expected ';' after {what}")))
        }
    }
    fn expect_word(&mut self, what: &str) -> PResult<(&'a str, Token)> {
        match self.peek() {
            Some(t) if t.kind == TokKind::Word => {
                self.pos += 1;
                Ok((self.text(t), t))
            }
            _ => Err(self.err_here(format!("expected {what}, found {}", self.describe()))),
        }
    }
    fn expect_u32(&mut self, what: &str) -> PResult<u32> {
        // Fast path: one to four decimal digits without a leading zero (`.loc` operands).
        if let Some(t) = self.peek() {
            let b = self
                .src
                .as_bytes()
                .get(t.start as usize..t.end as usize)
                .unwrap_or(&[]);
            if t.kind == TokKind::Number
                && matches!(b.len(), 1..=4)
                && (b[0] != b'0' || b.len() == 1)
                && b.iter().all(u8::is_ascii_digit)
            {
                self.pos += 1;
                return Ok(b.iter().fold(0u32, |a, d| a * 10 + u32::from(d - b'0')));
            }
        }
        self.expect_u32_slow(what)
    }

    #[inline(never)]
    fn expect_u32_slow(&mut self, what: &str) -> PResult<u32> {
        match self.peek() {
            Some(t) if t.kind == TokKind::Number => match parse_u32(self.text(t)) {
                Some(v) => {
                    self.pos += 1;
                    Ok(v)
                }
                None => Err(self.err_here(format!("invalid {what} '{}'", self.text(t)))),
            },
            _ => Err(self.err_here(format!("expected {what}, found {}", self.describe()))),
        }
    }
    fn expect_str(&mut self, what: &str) -> PResult<String> {
        match self.peek() {
            Some(t) if t.kind == TokKind::Str => {
                self.pos += 1;
                let s = self.text(t);
                Ok(s.get(1..s.len().saturating_sub(1))
                    .unwrap_or("")
                    .to_string())
            }
            _ => Err(self.err_here(format!("expected {what}, found {}", self.describe()))),
        }
    }

    /// Skips to just after the next `;` at brace depth 0, or to a `}` that would close an
    /// enclosing block, or (at top level) to the next top-level directive.
    fn recover(&mut self, top_level: bool) {
        let start = self.pos;
        let mut depth = 0u32;
        while let Some(t) = self.peek() {
            match t.kind {
                TokKind::Punct(b';') if depth == 0 => {
                    self.pos += 1;
                    return;
                }
                TokKind::Punct(b'{') => depth += 1,
                TokKind::Punct(b'}') => {
                    if depth == 0 {
                        if top_level {
                            self.pos += 1;
                        }
                        return;
                    }
                    depth -= 1;
                    if depth == 0 && top_level {
                        self.pos += 1;
                        return;
                    }
                }
                TokKind::Directive
                    if top_level
                        && depth == 0
                        && self.pos > start
                        && is_top_directive(self.text(t)) =>
                {
                    return
                }
                _ => {}
            }
            self.pos += 1;
        }
    }

    fn push_err(&mut self, e: SynError) {
        self.errors.push(e);
    }

    fn module(&mut self) -> Ast<'a> {
        let mut ast = Ast::default();
        while self.peek().is_some() {
            let before = self.pos;
            match self.item() {
                Ok(Some(item)) => ast.items.push(item),
                Ok(None) => {}
                Err(e) => {
                    self.push_err(e);
                    self.recover(true);
                }
            }
            if self.pos == before {
                self.pos += 1;
            }
        }
        ast
    }

    fn item(&mut self) -> PResult<Option<AstItem<'a>>> {
        let Some(t) = self.peek() else {
            return Ok(None);
        };
        if t.is(b';') {
            self.pos += 1;
            return Ok(None);
        }
        if t.kind != TokKind::Directive {
            return Err(self.err_here(format!("expected a directive, found {}", self.describe())));
        }
        let d = self.text(t);
        match d {
            ".version" => {
                self.pos += 1;
                let v = self.peek().filter(|t| t.kind == TokKind::Number);
                let parsed = v.and_then(|v| {
                    let (a, b) = self.text(v).split_once('.')?;
                    Some((a.parse().ok()?, b.parse().ok()?))
                });
                match parsed {
                    Some((a, b)) => {
                        self.pos += 1;
                        Ok(Some(AstItem::Version(a, b)))
                    }
                    None => Err(self.err_here("expected version 'major.minor'")),
                }
            }
            ".target" => {
                self.pos += 1;
                let mut v = vec![self.expect_word("target name")?.0];
                while self.eat_punct(b',') {
                    v.push(self.expect_word("target name")?.0);
                }
                Ok(Some(AstItem::Target(v)))
            }
            ".address_size" => {
                self.pos += 1;
                let n = self.expect_u32("address size")?;
                if n != 32 && n != 64 {
                    return Err(self.err_after_prev("address size must be 32 or 64"));
                }
                Ok(Some(AstItem::AddressSize(n)))
            }
            ".file" => {
                self.pos += 1;
                Ok(Some(AstItem::File(self.file()?)))
            }
            ".pragma" => {
                self.pos += 1;
                let s = self.expect_str("pragma string")?;
                self.expect_semi("'.pragma'")?;
                Ok(Some(AstItem::Pragma(s)))
            }
            ".section" => {
                self.pos += 1;
                let name = self
                    .peek()
                    .filter(|t| t.kind == TokKind::Directive)
                    .ok_or_else(|| self.err_here("expected section name"))?;
                self.pos += 1;
                let open = self.expect_punct(b'{', "to open section")?;
                let mut depth = 1u32;
                while let Some(t) = self.bump() {
                    if t.is(b'{') {
                        depth += 1;
                    } else if t.is(b'}') {
                        depth -= 1;
                        if depth == 0 {
                            let body = self.src.get(open.end as usize..t.start as usize);
                            return Ok(Some(AstItem::Section(self.text(name), body.unwrap_or(""))));
                        }
                    }
                }
                Err(self.err_here("unterminated '.section' (missing '}')"))
            }
            _ => {
                let linkage = self.linkage();
                if self.at_directive(".entry") || self.at_directive(".func") {
                    return Ok(Some(AstItem::Func(self.function(linkage)?)));
                }
                let Some(t) = self.peek() else {
                    return Err(self.err_here("expected a declaration"));
                };
                let txt = self.text(t);
                match StateSpace::from_word(txt.get(1..).unwrap_or("")) {
                    Some(space)
                        if t.kind == TokKind::Directive
                            && !matches!(space, StateSpace::Reg | StateSpace::Generic) =>
                    {
                        self.pos += 1;
                        let v = self.var_decl(linkage, space)?;
                        Ok(Some(AstItem::Var(v)))
                    }
                    _ => Err(self.err_here(format!("unknown directive '{txt}'"))),
                }
            }
        }
    }

    fn linkage(&mut self) -> Option<Linkage> {
        let t = self.peek()?;
        if t.kind != TokKind::Directive {
            return None;
        }
        let l = Linkage::from_word(self.text(t).get(1..)?)?;
        self.pos += 1;
        Some(l)
    }

    fn file(&mut self) -> PResult<FileInfo> {
        let index = self.expect_u32("file index")?;
        let name = self.expect_str("file name")?;
        let mut info = FileInfo {
            index,
            name,
            timestamp: None,
            size: None,
        };
        if self.eat_punct(b',') {
            info.timestamp = Some(self.expect_u64("timestamp")?);
            if self.eat_punct(b',') {
                info.size = Some(self.expect_u64("file size")?);
            }
        }
        Ok(info)
    }

    fn expect_u64(&mut self, what: &str) -> PResult<u64> {
        let v = match self.peek() {
            Some(t) if t.kind == TokKind::Number => parse_number(self.text(t)),
            _ => None,
        };
        match v {
            Some(Immediate::Int(v)) if v >= 0 => {
                self.pos += 1;
                Ok(v as u64)
            }
            Some(Immediate::UInt(v)) => {
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.err_here(format!("expected {what}, found {}", self.describe()))),
        }
    }

    /// After the space directive: `[.align n] [.vN] .type declarator, ...;`
    fn var_decl(&mut self, linkage: Option<Linkage>, space: StateSpace) -> PResult<VarDecl<'a>> {
        let mut align = None;
        let mut vec = None;
        let mut ty = None;
        while let Some(t) = self.peek().filter(|t| t.kind == TokKind::Directive) {
            let w = self.text(t).get(1..).unwrap_or("");
            self.pos += 1;
            if w == "align" {
                align = Some(self.expect_u32("alignment")?);
            } else if let Some(v) = VecWidth::from_word(w) {
                vec = Some(v);
            } else if let Some(s) = ScalarType::from_word(w) {
                ty = Some(s);
            } else {
                self.pos -= 1;
                return Err(self.err_here(format!("unexpected '{}' in declaration", self.text(t))));
            }
        }
        let ty = ty.ok_or_else(|| self.err_here("expected a type in declaration"))?;
        let mut decls = vec![self.declarator()?];
        while self.eat_punct(b',') {
            decls.push(self.declarator()?);
        }
        self.expect_semi("declaration")?;
        Ok(VarDecl {
            linkage,
            space,
            align,
            vec,
            ty,
            decls,
        })
    }

    fn declarator(&mut self) -> PResult<Declarator<'a>> {
        let (name, tok) = self.expect_word("a name")?;
        let mut d = Declarator {
            name,
            tok,
            range: None,
            dims: Vec::new(),
            init: None,
        };
        if self.eat_punct(b'<') {
            d.range = Some(self.expect_u32("register count")?);
            self.expect_punct(b'>', "after register count")?;
        }
        while self.eat_punct(b'[') {
            if self.eat_punct(b']') {
                d.dims.push(None);
            } else {
                d.dims.push(Some(self.expect_u32("array size")?));
                self.expect_punct(b']', "after array size")?;
            }
            if d.dims.len() > 8 {
                return Err(self.err_here("too many array dimensions"));
            }
        }
        if self.eat_punct(b'=') {
            d.init = Some(self.init(0)?);
        }
        Ok(d)
    }

    fn init(&mut self, depth: u32) -> PResult<Init> {
        if depth > MAX_DEPTH {
            return Err(self.err_here("initialiser nested too deeply"));
        }
        if self.eat_punct(b'{') {
            let mut v = Vec::new();
            if !self.eat_punct(b'}') {
                loop {
                    v.push(self.init(depth + 1)?);
                    if self.eat_punct(b'}') {
                        break;
                    }
                    self.expect_punct(b',', "or '}' in initialiser")?;
                }
            }
            return Ok(Init::List(v));
        }
        if let Some(t) = self.peek().filter(|t| t.kind == TokKind::Word) {
            let name = self.text(t);
            self.pos += 1;
            if name == "generic" && self.eat_punct(b'(') {
                let (n, _) = self.expect_word("a symbol")?;
                self.expect_punct(b')', "after generic(symbol")?;
                let mut offset = 0;
                if self.eat_punct(b'+') {
                    offset = self.signed_offset()?;
                }
                return Ok(Init::Generic {
                    name: n.to_string(),
                    offset,
                });
            }
            let mut offset = 0;
            if self.at_punct(b'+') {
                self.pos += 1;
                offset = self.signed_offset()?;
            }
            return Ok(Init::Symbol {
                name: name.to_string(),
                offset,
            });
        }
        Ok(Init::Imm(self.signed_number()?))
    }

    fn signed_number(&mut self) -> PResult<Immediate> {
        let neg = self.eat_punct(b'-');
        match self.peek() {
            Some(t) if t.kind == TokKind::Number => match parse_number(self.text(t)) {
                Some(v) => {
                    self.pos += 1;
                    Ok(if neg { v.negate() } else { v })
                }
                None => Err(self.err_here(format!("invalid number '{}'", self.text(t)))),
            },
            _ => Err(self.err_here(format!("expected a number, found {}", self.describe()))),
        }
    }

    /// A (possibly negative) integer offset.
    fn signed_offset(&mut self) -> PResult<i64> {
        match self.signed_number()? {
            Immediate::Int(v) => Ok(v),
            Immediate::UInt(v) => Ok(v as i64),
            _ => Err(self.err_after_prev("address offset must be an integer")),
        }
    }

    fn function(&mut self, linkage: Option<Linkage>) -> PResult<FuncDecl<'a>> {
        let is_entry = self.at_directive(".entry");
        self.pos += 1;
        let mut returns = Vec::new();
        if self.at_punct(b'(') {
            returns = self.param_list()?;
        }
        let (name, _) = self.expect_word("function name")?;
        let mut params = Vec::new();
        if self.at_punct(b'(') {
            params = self.param_list()?;
        }
        let mut attrs = Attributes::default();
        loop {
            let Some(t) = self.peek() else {
                return Err(self.err_here("expected function body or ';'"));
            };
            if t.is(b';') {
                self.pos += 1;
                return Ok(FuncDecl {
                    linkage,
                    is_entry,
                    name,
                    returns,
                    params,
                    attrs,
                    body: None,
                });
            }
            if t.is(b'{') {
                self.pos += 1;
                let body = self.pos;
                self.skip_body()?;
                return Ok(FuncDecl {
                    linkage,
                    is_entry,
                    name,
                    returns,
                    params,
                    attrs,
                    body: Some(body),
                });
            }
            if t.kind != TokKind::Directive {
                return Err(self.err_here(format!(
                    "expected function body or ';', found {}",
                    self.describe()
                )));
            }
            self.pos += 1;
            match self.text(t) {
                ".maxntid" => attrs.maxntid = Some(self.dims3()?),
                ".reqntid" => attrs.reqntid = Some(self.dims3()?),
                ".reqnctapercluster" => attrs.reqnctapercluster = Some(self.dims3()?),
                ".minnctapersm" => attrs.minnctapersm = Some(self.expect_u32("count")?),
                ".maxnctapersm" => attrs.maxnctapersm = Some(self.expect_u32("count")?),
                ".maxnreg" => attrs.maxnreg = Some(self.expect_u32("register count")?),
                ".maxclusterrank" => attrs.maxclusterrank = Some(self.expect_u32("rank")?),
                ".explicitcluster" => attrs.explicitcluster = true,
                ".noreturn" => attrs.noreturn = true,
                ".pragma" => {
                    attrs.pragmas.push(self.expect_str("pragma string")?);
                    self.expect_semi("'.pragma'")?;
                }
                d => {
                    self.pos -= 1;
                    return Err(self.err_here(format!("unknown directive '{d}'")));
                }
            }
        }
    }

    fn dims3(&mut self) -> PResult<Vec<u32>> {
        let mut v = vec![self.expect_u32("dimension")?];
        while v.len() < 3 && self.eat_punct(b',') {
            v.push(self.expect_u32("dimension")?);
        }
        Ok(v)
    }

    fn param_list(&mut self) -> PResult<Vec<Param>> {
        self.expect_punct(b'(', "to open parameter list")?;
        let mut v = Vec::new();
        if self.eat_punct(b')') {
            return Ok(v);
        }
        loop {
            v.push(self.param()?);
            if self.eat_punct(b')') {
                return Ok(v);
            }
            self.expect_punct(b',', "or ')' in parameter list")?;
        }
    }

    fn param(&mut self) -> PResult<Param> {
        let t = self
            .peek()
            .filter(|t| t.kind == TokKind::Directive)
            .ok_or_else(|| {
                self.err_here(format!(
                    "expected '.param' or '.reg', found {}",
                    self.describe()
                ))
            })?;
        let space = match self.text(t) {
            ".param" => StateSpace::Param,
            ".reg" => StateSpace::Reg,
            d => return Err(self.err_here(format!("expected '.param' or '.reg', found '{d}'"))),
        };
        self.pos += 1;
        let mut p = Param {
            name: String::new(),
            space,
            align: None,
            vec: None,
            ty: ScalarType::B8,
            ptr: None,
            array: None,
        };
        let mut have_ty = false;
        while let Some(t) = self.peek().filter(|t| t.kind == TokKind::Directive) {
            let w = self.text(t).get(1..).unwrap_or("");
            self.pos += 1;
            if w == "align" {
                let a = self.expect_u32("alignment")?;
                match &mut p.ptr {
                    Some(ptr) => ptr.align = Some(a),
                    None => p.align = Some(a),
                }
            } else if w == "ptr" {
                p.ptr = Some(PtrAttrs {
                    space: None,
                    align: None,
                });
            } else if let (Some(ptr), Some(s)) = (&mut p.ptr, StateSpace::from_word(w)) {
                ptr.space = Some(s);
            } else if let Some(v) = VecWidth::from_word(w) {
                p.vec = Some(v);
            } else if let Some(s) = ScalarType::from_word(w) {
                p.ty = s;
                have_ty = true;
            } else {
                self.pos -= 1;
                return Err(self.err_here(format!("unexpected '{}' in parameter", self.text(t))));
            }
        }
        if !have_ty {
            return Err(self.err_here("expected a parameter type"));
        }
        p.name = self.expect_word("parameter name")?.0.to_string();
        if self.eat_punct(b'[') {
            p.array = Some(self.expect_u32("array size")?);
            self.expect_punct(b']', "after array size")?;
        }
        Ok(p)
    }

    /// Skips to just after the `}` matching an opening `{` (already consumed).
    fn skip_body(&mut self) -> PResult<()> {
        let mut depth = 1u32;
        while let Some(t) = self.bump() {
            match t.kind {
                TokKind::Punct(b'{') => depth += 1,
                TokKind::Punct(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(self.err_here("expected '}' at end of function body"))
    }
}

fn is_top_directive(d: &str) -> bool {
    matches!(
        d,
        ".version"
            | ".target"
            | ".address_size"
            | ".file"
            | ".visible"
            | ".extern"
            | ".weak"
            | ".common"
            | ".entry"
            | ".func"
            | ".global"
            | ".const"
            | ".section"
    )
}
