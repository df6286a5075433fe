//! Stage 3: syntax tree -> IR. Resolves names and splits instruction words.
//!
//! Module symbols (globals, functions) are collected first, so references may precede
//! declarations. Per function, a first pass over the body numbers the `{ }` scopes and the
//! labels (branches may jump forward); the second pass declares registers and variables in
//! their scope (registers must be declared before use, as in PTX), resolves every operand
//! name through the scope chain and emits [`Inst`]s with their [`Span`]s.
//!
//! Register ranges (`%r<30>`) are stored once; `%r17` resolves by splitting the trailing
//! number and looking up the prefix, so no per-register string is allocated.
//!
//! Each body is first offered to `direct`, which lowers it from its bytes in one pass with
//! the same `FnLower` tables and methods; that path and the two-pass one above give the
//! same IR and errors.
//!
//! Child modules: `names` (scope frames, register ranges, register / label / symbol lookup),
//! `operands` (instructions and their operands), `words` (the instruction word cache),
//! `direct` (the one-pass lowering).

use crate::ir::*;
use crate::lexer::{lex_block, LexError, Lexed, Token};
use crate::syntax::{parse_body, parse_body_tokens, Ast, AstItem, AstOp, FuncDecl, Stmt, VarDecl};
use crate::types::StateSpace;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

mod direct;
mod names;
mod operands;
mod words;

use names::Frame;
use words::WordCache;

/// Most registers one function may declare (guards against `%r<4000000000>`).
const MAX_REGS: usize = 1 << 22;

/// A resolution error at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerError {
    /// Byte offset.
    pub offset: u32,
    /// 1-based line.
    pub line: u32,
    /// Description.
    pub message: String,
}

/// FxHash (rustc's): much faster than SipHash for short identifier keys; inputs are not
/// adversarial in a way that matters here (worst case is slower parsing, never wrong output).
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(a)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }
    fn write_usize(&mut self, i: usize) {
        self.write(&(i as u64).to_le_bytes());
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Module-wide names.
struct ModuleNames<'a> {
    globals: FxMap<&'a str, u32>,
    functions: FxMap<&'a str, u32>,
}

/// Lowers a syntax tree to a module, parsing each function body on the way (see
/// [`crate::syntax::parse_body`]); returns every body syntax error and resolution error.
pub fn lower<'a>(ast: &Ast<'a>, src: &'a str, lexed: &'a Lexed) -> (Module, Vec<LowerError>) {
    let (m, lex_errors, mut errors) = lower_lazy(ast, src, lexed);
    errors.extend(lex_errors.into_iter().map(|e| LowerError {
        offset: e.offset,
        line: e.line,
        message: e.message,
    }));
    (m, errors)
}

/// Like [`lower`], for a token stream from [`crate::lexer::lex_lazy`]: function bodies that
/// the lexer skipped are lowered here, directly from their bytes where possible, otherwise
/// lexed one at a time into a reused buffer and lowered the two-pass way; every other skipped
/// block is lexed for its errors. Returns the module, the lexical errors found in skipped
/// blocks, and the syntax and resolution errors.
pub fn lower_lazy<'a>(
    ast: &Ast<'a>,
    src: &'a str,
    lexed: &'a Lexed,
) -> (Module, Vec<LexError>, Vec<LowerError>) {
    lower_lazy_with(ast, src, lexed, Some(&mut 0))
}

/// [`lower_lazy`], choosing whether bodies are first tried with the direct lowering
/// (`direct` is `Some`, counting the bodies it lowered; see the `direct` module) or always
/// lowered the two-pass way (`None`). Both give the same module and errors; the two-pass way
/// is the reference for differential tests.
pub(crate) fn lower_lazy_with<'a>(
    ast: &Ast<'a>,
    src: &'a str,
    lexed: &'a Lexed,
    mut direct: Option<&mut usize>,
) -> (Module, Vec<LexError>, Vec<LowerError>) {
    let mut body_toks: Vec<Token> = Vec::new();
    let mut lex_errors: Vec<LexError> = Vec::new();
    let mut used = vec![false; lexed.blocks.len()];
    let mut words = WordCache::default();
    let mut stmts: Vec<Stmt<'a>> = Vec::new();
    let mut ops: Vec<AstOp<'a>> = Vec::new();
    let mut syn_errors = Vec::new();
    let mut m = Module {
        address_size: 64,
        ..Module::default()
    };
    let mut errors = Vec::new();
    let mut names = ModuleNames {
        globals: FxMap::default(),
        functions: FxMap::default(),
    };
    let (mut ng, mut nf) = (0u32, 0u32);
    for item in &ast.items {
        match item {
            AstItem::Var(v) => {
                for d in &v.decls {
                    names.globals.entry(d.name).or_insert(ng);
                    ng += 1;
                }
            }
            AstItem::Func(f) => {
                names.functions.entry(f.name).or_insert(nf);
                nf += 1;
            }
            _ => {}
        }
    }
    m.items.reserve(ast.items.len());
    m.functions.reserve(nf as usize);
    m.globals.reserve(ng as usize);
    for item in &ast.items {
        match item {
            AstItem::Version(a, b) => m.version = (*a, *b),
            AstItem::Target(t) => m.target = t.iter().map(|s| s.to_string()).collect(),
            AstItem::AddressSize(n) => m.address_size = *n,
            AstItem::File(f) => {
                m.items.push(Item::File(m.files.len() as u32));
                m.files.push(f.clone());
            }
            AstItem::Pragma(p) => {
                m.items.push(Item::Pragma(m.pragmas.len() as u32));
                m.pragmas.push(p.clone());
            }
            AstItem::Section(name, body) => {
                m.items.push(Item::Section(m.sections.len() as u32));
                m.sections.push(Section {
                    name: name.get(1..).unwrap_or("").to_string(),
                    body: body.to_string(),
                });
            }
            AstItem::Var(v) => {
                for g in global_vars(v) {
                    m.items.push(Item::Global(m.globals.len() as u32));
                    m.globals.push(g);
                }
            }
            AstItem::Func(f) => {
                m.items.push(Item::Function(m.functions.len() as u32));
                stmts.clear();
                ops.clear();
                if let Some(start) = f.body {
                    let block = lexed
                        .blocks
                        .binary_search_by_key(&start, |b| b.open as usize + 1)
                        .ok();
                    match block.and_then(|k| Some((k, lexed.blocks.get(k)?))) {
                        Some((k, b)) => {
                            if let Some(u) = used.get_mut(k) {
                                *u = true;
                            }
                            if let Some(count) = direct.as_deref_mut() {
                                let func = FnLower::run_direct(
                                    f,
                                    b,
                                    src,
                                    &names,
                                    lexed,
                                    &mut words,
                                    &mut errors,
                                );
                                if let Some(func) = func {
                                    *count += 1;
                                    m.functions.push(func);
                                    continue;
                                }
                            }
                            lex_block(src, b, &mut body_toks, &mut lex_errors);
                            parse_body_tokens(
                                src,
                                &body_toks,
                                0,
                                &mut stmts,
                                &mut ops,
                                &mut syn_errors,
                            );
                        }
                        None => {
                            parse_body(src, lexed, start, &mut stmts, &mut ops, &mut syn_errors)
                        }
                    }
                }
                let func = FnLower::run(f, &stmts, &ops, &names, lexed, &mut words, &mut errors);
                m.functions.push(func);
            }
        }
    }
    errors.extend(syn_errors.into_iter().map(|e| LowerError {
        offset: e.offset,
        line: e.line,
        message: e.message,
    }));
    for (b, used) in lexed.blocks.iter().zip(used) {
        if !used {
            lex_block(src, b, &mut body_toks, &mut lex_errors);
        }
    }
    (m, lex_errors, errors)
}

fn global_vars<'v>(v: &'v VarDecl<'_>) -> impl Iterator<Item = GlobalVar> + 'v {
    v.decls.iter().map(move |d| GlobalVar {
        name: d.name.to_string(),
        linkage: v.linkage,
        space: v.space,
        align: v.align,
        vec: v.vec,
        ty: v.ty,
        dims: d.dims.clone(),
        init: d.init.clone(),
    })
}

struct FnLower<'a, 'm> {
    f: Function,
    ops: &'m [AstOp<'a>],
    names: &'m ModuleNames<'a>,
    params: FxMap<&'m str, Symbol>,
    frames: Vec<Frame<'a>>,
    stack: Vec<ScopeId>,
    labels: FxMap<(ScopeId, &'a str), LabelId>,
    directives: FxMap<(ScopeId, &'a str), u32>,
    lexed: &'m Lexed,
    words: WordCache,
    errors: &'m mut Vec<LowerError>,
    /// Direct lowering ([`direct`]): label operands are resolved at the end of the body,
    /// since labels are not numbered in advance; see [`Pending`].
    defer_labels: bool,
    pending: Vec<Pending<'a>>,
    /// Index of the instruction whose operands are being lowered (for [`Pending::inst`]).
    cur_inst: u32,
}

/// A name operand whose meaning depends on the labels of the whole body: a label if one of
/// that name is visible from `scope`, else `symbol` (looked up where the operand occurs, as
/// the two-pass lowering does), else an error. Lowered as [`PENDING`] in instruction `inst`;
/// pending operands of one instruction are in operand order.
struct Pending<'a> {
    inst: u32,
    name: &'a str,
    scope: ScopeId,
    symbol: Option<Symbol>,
}

/// The placeholder operand of a [`Pending`] name (no body has `u32::MAX` labels).
const PENDING: Operand = Operand::Label(LabelId(u32::MAX));

impl<'a, 'm> FnLower<'a, 'm> {
    /// Lowers the function `d` whose body was parsed into `body` (with operands in `ops`).
    fn run(
        d: &'m FuncDecl<'a>,
        body: &'m [Stmt<'a>],
        ops: &'m [AstOp<'a>],
        names: &'m ModuleNames<'a>,
        lexed: &'m Lexed,
        words: &mut WordCache,
        errors: &'m mut Vec<LowerError>,
    ) -> Function {
        let mut l = FnLower::new(d, ops, names, lexed, words, errors);
        if d.body.is_some() {
            l.prepass(body);
            l.main_pass(body);
        }
        *words = l.words;
        l.f
    }

    fn new(
        d: &'m FuncDecl<'a>,
        ops: &'m [AstOp<'a>],
        names: &'m ModuleNames<'a>,
        lexed: &'m Lexed,
        words: &mut WordCache,
        errors: &'m mut Vec<LowerError>,
    ) -> Self {
        let mut params = FxMap::default();
        for (i, p) in d.params.iter().enumerate() {
            params.insert(p.name.as_str(), Symbol::Param(i as u32));
        }
        for (i, p) in d.returns.iter().enumerate() {
            params.insert(p.name.as_str(), Symbol::Ret(i as u32));
        }
        FnLower {
            f: Function {
                name: d.name.to_string(),
                is_entry: d.is_entry,
                linkage: d.linkage,
                has_body: d.body.is_some(),
                returns: d.returns.clone(),
                params: d.params.clone(),
                attributes: d.attrs.clone(),
                ..Function::default()
            },
            ops,
            names,
            params,
            frames: Vec::new(),
            stack: Vec::new(),
            labels: FxMap::default(),
            directives: FxMap::default(),
            lexed,
            words: std::mem::take(words),
            errors,
            defer_labels: false,
            pending: Vec::new(),
            cur_inst: 0,
        }
    }

    fn err(&mut self, offset: u32, line: u32, message: String) {
        self.errors.push(LowerError {
            offset,
            line,
            message,
        });
    }

    /// Numbers scopes, labels and labelled directives.
    fn prepass(&mut self, body: &[Stmt<'a>]) {
        // Per-function table sizes, counted on the way (capacity only; avoids regrowth).
        let (mut n_locs, mut n_decls, mut n_regs) = (0usize, 0usize, 0usize);
        let mut n_insts = 0usize;
        let mut stack = vec![ScopeId(0)];
        self.f.scopes.push(Scope {
            parent: None,
            start: InstId(0),
            end: InstId(0),
        });
        for s in body {
            let cur = stack.last().copied().unwrap_or(ScopeId(0));
            match s {
                Stmt::Inst(_) => n_insts += 1,
                Stmt::Loc(_) => n_locs += 1,
                Stmt::Decl(v) if v.space == StateSpace::Reg => {
                    n_decls += v.decls.len();
                    for d in &v.decls {
                        n_regs = n_regs.saturating_add(d.range.unwrap_or(1) as usize);
                    }
                }
                Stmt::Open => {
                    let id = ScopeId::new(self.f.scopes.len());
                    self.f.scopes.push(Scope {
                        parent: Some(cur),
                        start: InstId::new(n_insts),
                        end: InstId::new(n_insts),
                    });
                    stack.push(id);
                }
                Stmt::Close => {
                    if stack.len() > 1 {
                        stack.pop();
                    }
                    if let Some(sc) = self.f.scopes.get_mut(cur.index()) {
                        sc.end = InstId::new(n_insts);
                    }
                }
                Stmt::Label(name, tok) => {
                    let id = LabelId::new(self.f.labels.len());
                    if self.labels.insert((cur, name), id).is_some() {
                        self.err(tok.start, tok.line, format!("duplicate label '{name}'"));
                    }
                    self.f.labels.push(LabelInfo {
                        name: name.to_string(),
                        target: InstId::new(n_insts),
                        scope: cur,
                    });
                }
                Stmt::Directive { name, text, .. } => {
                    let id = self.f.directives.len() as u32;
                    self.directives.insert((cur, name), id);
                    self.f.directives.push(LabelledDirective {
                        name: name.to_string(),
                        text: text.to_string(),
                        targets: Vec::new(),
                        scope: cur,
                        at: InstId::new(n_insts),
                    });
                }
                _ => {}
            }
        }
        if let Some(s) = self.f.scopes.first_mut() {
            s.end = InstId::new(n_insts);
        }
        // Exact sizes: an `Inst` holds its operands inline, so over-reserving costs memory.
        self.f.insts.reserve_exact(n_insts);
        self.f.spans.reserve_exact(n_insts);
        self.f.locs.reserve(n_locs);
        self.f.reg_decls.reserve(n_decls);
        if n_regs <= MAX_REGS {
            self.f.regs.reserve(n_regs);
        }
    }

    fn cur_scope(&self) -> ScopeId {
        self.stack.last().copied().unwrap_or(ScopeId(0))
    }

    fn main_pass(&mut self, body: &[Stmt<'a>]) {
        self.frames.push(Frame::default());
        self.stack.push(ScopeId(0));
        let mut next_scope = 1usize;
        let mut n_dir = 0usize;
        for s in body {
            match s {
                Stmt::Inst(i) => self.inst(i, self.ops),
                Stmt::Decl(v) => self.decl(v),
                Stmt::Open => {
                    self.stack.push(ScopeId::new(next_scope));
                    next_scope += 1;
                    self.frames.push(Frame::default());
                }
                Stmt::Close => {
                    if self.stack.len() > 1 {
                        self.stack.pop();
                        self.frames.pop();
                    }
                }
                Stmt::Label(..) => {}
                Stmt::Loc(loc) => {
                    let at = InstId::new(self.f.insts.len());
                    match self.f.locs.last_mut() {
                        Some(last) if last.0 == at => last.1 = *loc,
                        _ => self.f.locs.push((at, *loc)),
                    }
                }
                Stmt::Pragma(p) => {
                    let at = InstId::new(self.f.insts.len());
                    self.f.pragmas.push((at, p.clone()));
                }
                Stmt::Directive { targets, .. } => {
                    let mut ids = Vec::new();
                    if self
                        .f
                        .directives
                        .get(n_dir)
                        .is_some_and(|d| d.text.starts_with(".branchtargets"))
                    {
                        for (name, tok) in targets {
                            match self.find_label(name) {
                                Some(l) => ids.push(l),
                                None => self.err(
                                    tok.start,
                                    tok.line,
                                    format!("undefined label '{name}'"),
                                ),
                            }
                        }
                    }
                    if let Some(d) = self.f.directives.get_mut(n_dir) {
                        d.targets = ids;
                    }
                    n_dir += 1;
                }
            }
        }
    }

    fn decl(&mut self, v: &VarDecl<'a>) {
        let scope = self.cur_scope();
        let at = InstId::new(self.f.insts.len());
        if v.space == StateSpace::Reg {
            for d in &v.decls {
                let first = RegId::new(self.f.regs.len());
                let decl = self.f.reg_decls.len() as u32;
                let count = d.range.unwrap_or(1) as usize;
                if self.f.regs.len() + count > MAX_REGS {
                    self.err(
                        d.tok.start,
                        d.tok.line,
                        "too many registers declared".into(),
                    );
                    continue;
                }
                let Some(frame) = self.frames.last_mut() else {
                    continue;
                };
                let dup = match d.range {
                    Some(n) => frame.add_range(d.name, first.0, n),
                    None => frame.regs.insert(d.name, first).is_some(),
                };
                if dup {
                    self.err(
                        d.tok.start,
                        d.tok.line,
                        format!("duplicate register '{}'", d.name),
                    );
                }
                self.f.reg_decls.push(RegDecl {
                    name: d.name.to_string(),
                    ty: v.ty,
                    vec: v.vec,
                    count: d.range,
                    first,
                    scope,
                    at,
                });
                match d.range {
                    Some(n) => self.f.regs.extend((0..n).map(|k| RegInfo {
                        ty: v.ty,
                        decl,
                        index: Some(k),
                    })),
                    None => self.f.regs.push(RegInfo {
                        ty: v.ty,
                        decl,
                        index: None,
                    }),
                }
            }
        } else {
            for (g, d) in global_vars(v).zip(&v.decls) {
                let idx = self.f.local_vars.len() as u32;
                if let Some(frame) = self.frames.last_mut() {
                    if frame.locals.insert(d.name, idx).is_some() {
                        self.errors.push(LowerError {
                            offset: d.tok.start,
                            line: d.tok.line,
                            message: format!("duplicate variable '{}'", d.name),
                        });
                    }
                }
                self.f.local_vars.push(LocalVar { var: g, scope, at });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::*;
    use crate::opcode::Opcode;
    use crate::types::*;

    const HEAD: &str = ".version 8.4\n.target sm_90a, texmode_independent\n.address_size 64\n";

    fn kernel(body: &str) -> (Module, Function) {
        let src = format!(
            "{HEAD}.visible .entry k(\n.param .u64 .ptr .global .align 8 p,\n.param .align 8 .b8 s[24],\n.param .u32 n\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n{{\n{body}\n}}\n"
        );
        let m = crate::parse(&src).unwrap_or_else(|e| panic!("{e}"));
        let f = m.kernel("k").unwrap().clone();
        (m, f)
    }

    #[test]
    fn header_params_attributes() {
        let (m, f) = kernel("ret;");
        assert_eq!(m.version, (8, 4));
        assert_eq!(m.target, vec!["sm_90a", "texmode_independent"]);
        assert_eq!(m.address_size, 64);
        assert!(f.is_entry && f.has_body);
        assert_eq!(f.linkage, Some(Linkage::Visible));
        assert_eq!(
            f.params[0].ptr,
            Some(PtrAttrs {
                space: Some(StateSpace::Global),
                align: Some(8)
            })
        );
        assert_eq!(f.params[0].ty, ScalarType::U64);
        assert_eq!(
            (f.params[1].align, f.params[1].array, f.params[1].ty),
            (Some(8), Some(24), ScalarType::B8)
        );
        assert_eq!(f.attributes.maxntid, Some(vec![256, 1, 1]));
        assert_eq!(f.attributes.minnctapersm, Some(2));
    }

    #[test]
    fn register_ranges_and_operands() {
        let (_, f) = kernel(
            ".reg .pred %p<3>;\n.reg .b32 %r<5>, %x;\n.reg .b64 %rd<4>;\n.reg .f32 %f<3>;\n\
             ld.param.u64 %rd1, [p];\n\
             @!%p2 ld.global.nc.v2.f32 {%f1, _}, [%rd1+-4];\n\
             mov.u32 %r4, %tid.x;\n\
             add.s32 %x, %r4, -7;\n\
             mov.b32 %f2, 0f3F800000;\n\
             mov.f64 %rd3, 0d3FF0000000000000;\n\
             setp.lt.and.s32 %p1|%p2, %r4, 0xFFFFFFFFU, !%p0;\n\
             st.global.f32 [%rd1+8], 1.5;\n\
             ld.param.u32 %r1, [s+16];\n\
             ret;",
        );
        // %p0..2 -> 0..2, %r0..4 -> 3..7, %x -> 8, %rd0..3 -> 9..12, %f0..2 -> 13..15
        assert_eq!(f.regs.len(), 16);
        assert_eq!(f.reg_name(RegId(7)).to_string(), "%r4");
        assert_eq!(f.reg_name(RegId(8)).to_string(), "%x");
        assert_eq!(f.reg_type(RegId(10)), Some(ScalarType::B64));
        let i = &f.insts;
        assert_eq!(i[0].op, Opcode::Ld);
        assert_eq!(i[0].mods.space, Some(StateSpace::Param));
        assert_eq!(
            i[0].operands,
            vec![
                Operand::Reg(RegId(10)),
                Operand::Address(Address {
                    base: AddrBase::Symbol(Symbol::Param(0)),
                    offset: 0
                })
            ]
        );
        assert_eq!(
            i[1].guard,
            Some(Guard {
                reg: RegId(2),
                negated: true
            })
        );
        assert!(i[1].mods.nc);
        assert_eq!(i[1].mods.vec, Some(VecWidth::V2));
        assert_eq!(
            i[1].operands,
            vec![
                Operand::Vector(vec![Operand::Reg(RegId(14)), Operand::Sink]),
                Operand::Address(Address {
                    base: AddrBase::Reg(RegId(10)),
                    offset: -4
                })
            ]
        );
        assert_eq!(i[2].operands[1], Operand::Special(SpecialReg::Tid(Dim::X)));
        assert_eq!(
            i[3].operands,
            vec![
                Operand::Reg(RegId(8)),
                Operand::Reg(RegId(7)),
                Operand::Imm(Immediate::Int(-7))
            ]
        );
        assert_eq!(i[4].operands[1], Operand::Imm(Immediate::F32(0x3F80_0000)));
        assert_eq!(
            i[5].operands[1],
            Operand::Imm(Immediate::F64(0x3FF0_0000_0000_0000))
        );
        assert_eq!(i[6].mods.cmp, Some(CmpOp::Lt));
        assert_eq!(i[6].mods.bool_op, Some(BoolOp::And));
        assert_eq!(
            i[6].operands,
            vec![
                Operand::PredPair(RegId(1), RegId(2)),
                Operand::Reg(RegId(7)),
                Operand::Imm(Immediate::UInt(0xFFFF_FFFF)),
                Operand::PredNeg(RegId(0))
            ]
        );
        assert_eq!(
            i[7].operands[1],
            Operand::Imm(Immediate::F64(1.5f64.to_bits()))
        );
        assert_eq!(
            i[8].operands[1],
            Operand::Address(Address {
                base: AddrBase::Symbol(Symbol::Param(1)),
                offset: 16
            })
        );
        assert_eq!(f.spans[1].line, 17);
        assert_eq!(f.spans[1].col, 1);
    }

    #[test]
    fn labels_forward_and_backward() {
        let (_, f) = kernel(
            ".reg .pred %p1;\nbra.uni $L__BB0_2;\n$L__BB0_1:\nexit;\nLBB0_3:\n$L__BB0_2:\n@%p1 bra $L__BB0_1;\nret;",
        );
        assert_eq!(f.labels.len(), 3);
        assert_eq!(f.labels[0].name, "$L__BB0_1");
        assert_eq!(f.labels[0].target, InstId(1));
        assert_eq!(f.labels[1].target, InstId(2));
        assert_eq!(f.labels[2].target, InstId(2));
        assert!(f.insts[0].mods.uni);
        assert_eq!(f.insts[0].operands, vec![Operand::Label(LabelId(2))]);
        assert_eq!(f.insts[2].operands, vec![Operand::Label(LabelId(0))]);
    }

    #[test]
    fn call_sequence_scopes() {
        let src = format!(
            "{HEAD}.func (.param .b32 func_retval0) foo(.param .b64 foo_param_0);\n\
             .visible .entry k()\n{{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n\
             {{ // callseq 0, 0\n.param .b64 param0;\nst.param.b64 [param0], %rd1;\n.param .b32 retval0;\n\
             call.uni (retval0), foo, (param0);\nld.param.b32 %r1, [retval0];\n}} // callseq 0\n\
             {{\n.reg .pred p;\n.param .b64 param0;\nst.param.b64 [param0+0], %rd1;\nsetp.ne.s32 p, %r1, 0;\n}}\n\
             ret;\n}}\n"
        );
        let m = crate::parse(&src).unwrap_or_else(|e| panic!("{e}"));
        let f = m.kernel("k").unwrap();
        assert_eq!(f.scopes.len(), 3);
        assert_eq!(
            f.scopes[1],
            Scope {
                parent: Some(ScopeId(0)),
                start: InstId(0),
                end: InstId(3)
            }
        );
        assert_eq!(
            f.scopes[2],
            Scope {
                parent: Some(ScopeId(0)),
                start: InstId(3),
                end: InstId(5)
            }
        );
        assert_eq!(f.local_vars.len(), 3);
        assert_eq!(
            (f.local_vars[0].name.as_str(), f.local_vars[0].scope),
            ("param0", ScopeId(1))
        );
        assert_eq!(
            (f.local_vars[2].name.as_str(), f.local_vars[2].scope),
            ("param0", ScopeId(2))
        );
        assert_eq!(
            f.insts[1].operands,
            vec![
                Operand::List(vec![Operand::Symbol(Symbol::Local(1))]),
                Operand::Symbol(Symbol::Function(0)),
                Operand::List(vec![Operand::Symbol(Symbol::Local(0))]),
            ]
        );
        assert_eq!(
            f.insts[3].operands[0],
            Operand::Address(Address {
                base: AddrBase::Symbol(Symbol::Local(2)),
                offset: 0
            })
        );
        // `p` is a register without `%`, declared in scope 2.
        assert_eq!(f.insts[4].operands[0], Operand::Reg(RegId(5)));
        assert_eq!(f.reg_decls[2].scope, ScopeId(2));
        let printed = m.to_string();
        let m2 = crate::parse(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
        assert_eq!(m, m2);
        assert_eq!(m2.to_string(), printed);
    }

    #[test]
    fn globals_initialisers_and_debug_sections() {
        let src = format!(
            "{HEAD}.file 1 \"/tmp/a.cu\", 1700000000, 1234\n\
             .global .align 4 .b8 tbl[4] = {{1, 2, 0x3, -1}};\n\
             .const .align 4 .f32 c = 0f3F800000;\n\
             .global .align 8 .u64 ptrs[2] = {{tbl, generic(tbl)+0}};\n\
             .extern .shared .align 16 .b8 smem[];\n\
             .weak .global .align 4 .u32 w[2][2] = {{{{1, 2}}, {{3, 4}}}};\n\
             .visible .entry k()\n{{\n.reg .b64 %rd<2>;\n.loc 1 7 3\nmov.u64 %rd1, tbl;\nld.shared.u8 %rd0, [smem+3];\n.pragma \"nounroll\";\nret;\n}}\n\
             .section .debug_str {{\n$L__info_string0:\n.b8 95,90,0\n}}\n"
        );
        let m = crate::parse(&src).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.files[0].name, "/tmp/a.cu");
        assert_eq!(
            (m.files[0].timestamp, m.files[0].size),
            (Some(1_700_000_000), Some(1234))
        );
        let g = &m.globals;
        assert_eq!(g.len(), 5);
        assert_eq!(
            g[0].init,
            Some(Init::List(vec![
                Init::Imm(Immediate::Int(1)),
                Init::Imm(Immediate::Int(2)),
                Init::Imm(Immediate::Int(3)),
                Init::Imm(Immediate::Int(-1))
            ]))
        );
        assert_eq!(g[1].init, Some(Init::Imm(Immediate::F32(0x3F80_0000))));
        assert_eq!(
            (g[3].space, g[3].linkage, g[3].dims.clone()),
            (StateSpace::Shared, Some(Linkage::Extern), vec![None])
        );
        assert_eq!(g[4].dims, vec![Some(2), Some(2)]);
        assert_eq!(g[0].size_bytes(), Some(4));
        let f = m.kernel("k").unwrap();
        assert_eq!(f.insts[0].operands[1], Operand::Symbol(Symbol::Global(0)));
        assert_eq!(
            f.insts[1].operands[1],
            Operand::Address(Address {
                base: AddrBase::Symbol(Symbol::Global(3)),
                offset: 3
            })
        );
        assert_eq!(
            f.loc(InstId(1)),
            Some(SrcLoc {
                file: 1,
                line: 7,
                col: 3
            })
        );
        assert_eq!(f.pragmas, vec![(InstId(2), "nounroll".to_string())]);
        assert_eq!(m.sections.len(), 1);
        assert_eq!(m.sections[0].name, "debug_str");
        let printed = m.to_string();
        let m2 = crate::parse(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
        assert_eq!(m, m2);
    }

    #[test]
    fn prototypes_and_unknown_instructions() {
        let src = format!(
            "{HEAD}.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);\n\
             .weak .func bar() .noreturn;\n\
             .entry k()\n{{\n.reg .b64 %rd<3>;\n\
             proto_1 : .callprototype (.param .b32 _) _ (.param .b64 _);\n\
             {{\n.param .b64 param0;\n.param .b32 retval0;\ncall (retval0), %rd1, (param0), proto_1;\n}}\n\
             frobnicate.sync.aligned.m16n8k16.x4 {{%rd1, %rd2}}, [%rd0];\n\
             tex.2d.v4.f32.f32 {{%rd0, %rd1, %rd2, %rd0}}, [%rd1, {{%rd2, %rd0}}];\n\
             ret;\n}}\n"
        );
        let m = crate::parse(&src).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.functions.len(), 3);
        assert!(!m.functions[0].has_body);
        assert_eq!(m.functions[0].linkage, Some(Linkage::Extern));
        assert_eq!(m.functions[0].returns[0].name, "func_retval0");
        assert!(m.functions[1].attributes.noreturn);
        assert_eq!(m.entries().count(), 1);
        let f = m.kernel("k").unwrap();
        assert_eq!(f.directives[0].name, "proto_1");
        assert_eq!(
            f.insts[0].operands[3],
            Operand::Symbol(Symbol::Directive(0))
        );
        assert_eq!(f.insts[1].op, Opcode::Other("frobnicate".into()));
        assert!(f.insts[1].mods.sync && f.insts[1].mods.aligned);
        assert_eq!(f.insts[1].mods.other, vec!["m16n8k16", "x4"]);
        assert!(matches!(f.insts[2].operands[1], Operand::Brackets(ref v) if v.len() == 2));
        assert_eq!(
            m.display_inst(f, InstId(2)).to_string(),
            "tex.2d.v4.f32.f32 \t{%rd0, %rd1, %rd2, %rd0}, [%rd1, {%rd2, %rd0}];"
        );
        let printed = m.to_string();
        assert!(
            printed.contains("\tfrobnicate.sync.aligned.m16n8k16.x4 \t{%rd1, %rd2}, [%rd0];"),
            "{printed}"
        );
        let m2 = crate::parse(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
        assert_eq!(m, m2);
    }
}
