//! IR -> PTX text. `Display for Module` writes PTX that parses back to an equal IR.
//!
//! Layout follows compiler output: directives flush left, declarations and instructions
//! indented by a tab, labels flush left. Nested `{ }` scopes, declarations, labels, `.loc` and
//! `.pragma` are re-emitted at their recorded instruction positions (see [`crate::ir`] for the
//! scope representation). Modifiers print in their source order.

use crate::ir::*;
use std::fmt::{self, Display, Formatter, Write};

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.version != (0, 0) {
            writeln!(f, ".version {}.{}", self.version.0, self.version.1)?;
        }
        if !self.target.is_empty() {
            writeln!(f, ".target {}", self.target.join(", "))?;
        }
        writeln!(f, ".address_size {}", self.address_size)?;
        for item in &self.items {
            match *item {
                Item::File(i) => {
                    if let Some(fi) = self.files.get(i as usize) {
                        write!(f, ".file {} \"{}\"", fi.index, fi.name)?;
                        if let Some(t) = fi.timestamp {
                            write!(f, ", {t}")?;
                            if let Some(s) = fi.size {
                                write!(f, ", {s}")?;
                            }
                        }
                        writeln!(f)?;
                    }
                }
                Item::Pragma(i) => {
                    if let Some(p) = self.pragmas.get(i as usize) {
                        writeln!(f, ".pragma \"{p}\";")?;
                    }
                }
                Item::Section(i) => {
                    if let Some(s) = self.sections.get(i as usize) {
                        writeln!(f, "\t.section\t.{}\n\t{{{}}}", s.name, s.body)?;
                    }
                }
                Item::Global(i) => {
                    if let Some(g) = self.globals.get(i as usize) {
                        writeln!(f)?;
                        write_var(f, g)?;
                        writeln!(f)?;
                    }
                }
                Item::Function(i) => {
                    if let Some(func) = self.functions.get(i as usize) {
                        writeln!(f)?;
                        write!(f, "{}", self.display_function(func))?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Module {
    /// Displays one function of this module as PTX (names resolved against the module).
    pub fn display_function<'a>(&'a self, func: &'a Function) -> FunctionDisplay<'a> {
        FunctionDisplay { m: self, f: func }
    }
}

impl Module {
    /// Displays instruction `i` of `func` as one line of PTX, without indentation, e.g.
    /// `@%p1 bra $L__BB0_2;` (empty if `i` is out of range).
    pub fn display_inst<'a>(&'a self, func: &'a Function, i: InstId) -> InstDisplay<'a> {
        InstDisplay {
            f: FunctionDisplay { m: self, f: func },
            i,
        }
    }
}

/// Displays one instruction; see [`Module::display_inst`].
pub struct InstDisplay<'a> {
    f: FunctionDisplay<'a>,
    i: InstId,
}

impl Display for InstDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.f.f.insts.get(self.i.index()) {
            Some(inst) => self.f.inst(f, inst),
            None => Ok(()),
        }
    }
}

/// Displays a [`Function`] as PTX; see [`Module::display_function`].
pub struct FunctionDisplay<'a> {
    m: &'a Module,
    f: &'a Function,
}

fn write_var(f: &mut impl Write, g: &GlobalVar) -> fmt::Result {
    if let Some(l) = g.linkage {
        write!(f, ".{l} ")?;
    }
    write!(f, ".{}", g.space)?;
    if let Some(a) = g.align {
        write!(f, " .align {a}")?;
    }
    if let Some(v) = g.vec {
        write!(f, " .{v}")?;
    }
    write!(f, " .{} {}", g.ty, g.name)?;
    for d in &g.dims {
        match d {
            Some(n) => write!(f, "[{n}]")?,
            None => write!(f, "[]")?,
        }
    }
    if let Some(init) = &g.init {
        write!(f, " = ")?;
        write_init(f, init)?;
    }
    write!(f, ";")
}

fn write_init(f: &mut impl Write, init: &Init) -> fmt::Result {
    // Iterative over an explicit stack: initialisers may nest (bounded by the parser, but
    // IR built by hand is not).
    enum Work<'a> {
        Init(&'a Init),
        Str(&'static str),
    }
    let mut stack = vec![Work::Init(init)];
    while let Some(w) = stack.pop() {
        match w {
            Work::Str(s) => f.write_str(s)?,
            Work::Init(Init::Imm(v)) => write!(f, "{v}")?,
            Work::Init(Init::Symbol { name, offset }) => {
                write!(f, "{name}")?;
                if *offset != 0 {
                    write!(f, "+{offset}")?;
                }
            }
            Work::Init(Init::Generic { name, offset }) => {
                write!(f, "generic({name})")?;
                if *offset != 0 {
                    write!(f, "+{offset}")?;
                }
            }
            Work::Init(Init::List(items)) => {
                f.write_str("{")?;
                stack.push(Work::Str("}"));
                for (i, it) in items.iter().enumerate().rev() {
                    stack.push(Work::Init(it));
                    if i > 0 {
                        stack.push(Work::Str(", "));
                    }
                }
            }
        }
    }
    Ok(())
}

fn write_param(f: &mut impl Write, p: &Param) -> fmt::Result {
    write!(f, ".{}", p.space)?;
    if let Some(a) = p.align {
        write!(f, " .align {a}")?;
    }
    if let Some(v) = p.vec {
        write!(f, " .{v}")?;
    }
    write!(f, " .{}", p.ty)?;
    if let Some(ptr) = p.ptr {
        write!(f, " .ptr")?;
        if let Some(s) = ptr.space {
            write!(f, " .{s}")?;
        }
        if let Some(a) = ptr.align {
            write!(f, " .align {a}")?;
        }
    }
    write!(f, " {}", p.name)?;
    if let Some(n) = p.array {
        write!(f, "[{n}]")?;
    }
    Ok(())
}

fn write_params(f: &mut impl Write, ps: &[Param]) -> fmt::Result {
    f.write_str("(")?;
    for (i, p) in ps.iter().enumerate() {
        f.write_str(if i == 0 { "\n\t" } else { ",\n\t" })?;
        write_param(f, p)?;
    }
    if !ps.is_empty() {
        f.write_str("\n")?;
    }
    f.write_str(")")
}

fn write_dims(f: &mut impl Write, name: &str, d: &[u32]) -> fmt::Result {
    write!(f, ".{name} ")?;
    for (i, x) in d.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{x}")?;
    }
    writeln!(f)
}

/// Something declared at a body position.
#[derive(Clone, Copy)]
enum Ev {
    Reg(usize),
    Local(usize),
    Dir(usize),
    Label(usize),
}

impl Display for FunctionDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let func = self.f;
        if let Some(l) = func.linkage {
            write!(f, ".{l} ")?;
        }
        f.write_str(if func.is_entry { ".entry " } else { ".func " })?;
        if !func.returns.is_empty() {
            write_params(f, &func.returns)?;
            f.write_str(" ")?;
        }
        f.write_str(&func.name)?;
        if !func.params.is_empty() || func.is_entry {
            write_params(f, &func.params)?;
        }
        writeln!(f)?;
        let a = &func.attributes;
        if let Some(d) = &a.maxntid {
            write_dims(f, "maxntid", d)?;
        }
        if let Some(d) = &a.reqntid {
            write_dims(f, "reqntid", d)?;
        }
        if let Some(n) = a.minnctapersm {
            writeln!(f, ".minnctapersm {n}")?;
        }
        if let Some(n) = a.maxnctapersm {
            writeln!(f, ".maxnctapersm {n}")?;
        }
        if let Some(n) = a.maxnreg {
            writeln!(f, ".maxnreg {n}")?;
        }
        if let Some(n) = a.maxclusterrank {
            writeln!(f, ".maxclusterrank {n}")?;
        }
        if let Some(d) = &a.reqnctapercluster {
            write_dims(f, "reqnctapercluster", d)?;
        }
        if a.explicitcluster {
            writeln!(f, ".explicitcluster")?;
        }
        if a.noreturn {
            writeln!(f, ".noreturn")?;
        }
        for p in &a.pragmas {
            writeln!(f, ".pragma \"{p}\";")?;
        }
        if !func.has_body {
            return writeln!(f, ";");
        }
        writeln!(f, "{{")?;
        self.body(f)?;
        writeln!(f, "}}")
    }
}

impl FunctionDisplay<'_> {
    fn body(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let func = self.f;
        let n = func.insts.len();
        // Events by position.
        let mut events: Vec<(usize, ScopeId, Ev)> = Vec::new();
        events.extend(
            func.reg_decls
                .iter()
                .enumerate()
                .map(|(i, d)| (d.at.index(), d.scope, Ev::Reg(i))),
        );
        events.extend(
            func.local_vars
                .iter()
                .enumerate()
                .map(|(i, d)| (d.at.index(), d.scope, Ev::Local(i))),
        );
        events.extend(
            func.directives
                .iter()
                .enumerate()
                .map(|(i, d)| (d.at.index(), d.scope, Ev::Dir(i))),
        );
        events.extend(
            func.labels
                .iter()
                .enumerate()
                .map(|(i, d)| (d.target.index(), d.scope, Ev::Label(i))),
        );
        events.sort_by_key(|e| e.0);
        let mut done = vec![false; events.len()];
        let mut ev_start = 0usize;
        let mut stack: Vec<ScopeId> = vec![ScopeId(0)];
        let (mut pi, mut li) = (0usize, 0usize);
        for p in 0..=n {
            while events.get(ev_start).is_some_and(|e| e.0 < p) {
                ev_start += 1;
            }
            let mut ev_end = ev_start;
            while events.get(ev_end).is_some_and(|e| e.0 == p) {
                ev_end += 1;
            }
            let evs = events.get(ev_start..ev_end).unwrap_or(&[]);
            let done_here = done.get_mut(ev_start..ev_end).unwrap_or(&mut []);
            let emit = |f: &mut Formatter<'_>,
                        s: ScopeId,
                        done: &mut [bool],
                        depth: usize|
             -> fmt::Result {
                for (k, e) in evs.iter().enumerate() {
                    if e.1 == s && !done.get(k).copied().unwrap_or(true) {
                        if let Some(d) = done.get_mut(k) {
                            *d = true;
                        }
                        self.event(f, e.2, depth)?;
                    }
                }
                Ok(())
            };
            for (si, sc) in func.scopes.iter().enumerate().skip(1) {
                if sc.start.index() != p {
                    continue;
                }
                while let Some(&top) = stack.last() {
                    if Some(top) == sc.parent || stack.len() == 1 {
                        break;
                    }
                    emit(f, top, done_here, stack.len())?;
                    stack.pop();
                    writeln!(f, "{}}}", indent(stack.len()))?;
                }
                let top = stack.last().copied().unwrap_or(ScopeId(0));
                emit(f, top, done_here, stack.len())?;
                writeln!(f, "{}{{", indent(stack.len()))?;
                stack.push(ScopeId::new(si));
            }
            while let Some(&top) = stack.last() {
                let ends = func
                    .scopes
                    .get(top.index())
                    .is_some_and(|s| s.end.index() == p);
                if stack.len() == 1 || !ends {
                    break;
                }
                emit(f, top, done_here, stack.len())?;
                stack.pop();
                writeln!(f, "{}}}", indent(stack.len()))?;
            }
            let top = stack.last().copied().unwrap_or(ScopeId(0));
            emit(f, top, done_here, stack.len())?;
            // Anything left (a scope id that does not match the nesting) still gets printed.
            for k in 0..evs.len() {
                if !done_here.get(k).copied().unwrap_or(true) {
                    if let (Some(e), Some(d)) = (evs.get(k), done_here.get_mut(k)) {
                        *d = true;
                        self.event(f, e.2, stack.len())?;
                    }
                }
            }
            let ind = indent(stack.len());
            while let Some((at, s)) = func.pragmas.get(pi).filter(|x| x.0.index() == p) {
                let _ = at;
                writeln!(f, "{ind}.pragma \"{s}\";")?;
                pi += 1;
            }
            while let Some((_, l)) = func.locs.get(li).filter(|x| x.0.index() == p) {
                writeln!(f, "{ind}.loc {} {} {}", l.file, l.line, l.col)?;
                li += 1;
            }
            if let Some(inst) = func.insts.get(p) {
                f.write_str(&ind)?;
                self.inst(f, inst)?;
                f.write_str("\n")?;
            }
        }
        // Unbalanced scopes (hand-built IR): close what is open.
        while stack.len() > 1 {
            stack.pop();
            writeln!(f, "{}}}", indent(stack.len()))?;
        }
        Ok(())
    }

    fn event(&self, f: &mut Formatter<'_>, e: Ev, depth: usize) -> fmt::Result {
        let func = self.f;
        let ind = indent(depth);
        match e {
            Ev::Reg(i) => {
                if let Some(d) = func.reg_decls.get(i) {
                    write!(f, "{ind}.reg")?;
                    if let Some(v) = d.vec {
                        write!(f, " .{v}")?;
                    }
                    write!(f, " .{} {}", d.ty, d.name)?;
                    if let Some(c) = d.count {
                        write!(f, "<{c}>")?;
                    }
                    writeln!(f, ";")?;
                }
            }
            Ev::Local(i) => {
                if let Some(v) = func.local_vars.get(i) {
                    f.write_str(&ind)?;
                    write_var(f, &v.var)?;
                    writeln!(f)?;
                }
            }
            Ev::Dir(i) => {
                if let Some(d) = func.directives.get(i) {
                    writeln!(f, "{}{}: {};", ind, d.name, d.text)?;
                }
            }
            Ev::Label(i) => {
                if let Some(l) = func.labels.get(i) {
                    writeln!(f, "{}:", l.name)?;
                }
            }
        }
        Ok(())
    }

    fn inst(&self, f: &mut Formatter<'_>, i: &Inst) -> fmt::Result {
        if let Some(g) = i.guard {
            write!(
                f,
                "@{}{} ",
                if g.negated { "!" } else { "" },
                self.f.reg_name(g.reg)
            )?;
        }
        write!(f, "{}{}", i.op, i.mods)?;
        for (k, o) in i.operands.iter().enumerate() {
            f.write_str(if k == 0 { " \t" } else { ", " })?;
            self.operand(f, o, 0)?;
        }
        f.write_str(";")
    }

    fn operand(&self, f: &mut Formatter<'_>, o: &Operand, depth: u32) -> fmt::Result {
        let func = self.f;
        let list = |f: &mut Formatter<'_>, v: &[Operand], open: &str, close: &str| -> fmt::Result {
            f.write_str(open)?;
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                if depth < 64 {
                    self.operand(f, x, depth + 1)?;
                }
            }
            f.write_str(close)
        };
        match o {
            Operand::Reg(r) => write!(f, "{}", func.reg_name(*r)),
            Operand::PredNeg(r) => write!(f, "!{}", func.reg_name(*r)),
            Operand::PredPair(a, b) => write!(f, "{}|{}", func.reg_name(*a), func.reg_name(*b)),
            Operand::Imm(v) => write!(f, "{v}"),
            Operand::Special(s) => write!(f, "{s}"),
            Operand::Symbol(s) => f.write_str(self.m.symbol_name(func, *s)),
            Operand::Address(a) => {
                f.write_str("[")?;
                match a.base {
                    AddrBase::Reg(r) => write!(f, "{}", func.reg_name(r))?,
                    AddrBase::Symbol(s) => f.write_str(self.m.symbol_name(func, s))?,
                    AddrBase::Imm(v) => write!(f, "{v}")?,
                }
                if a.offset != 0 {
                    write!(f, "+{}", a.offset)?;
                }
                f.write_str("]")
            }
            Operand::Vector(v) => list(f, v, "{", "}"),
            Operand::Brackets(v) => list(f, v, "[", "]"),
            Operand::List(v) => list(f, v, "(", ")"),
            Operand::Label(l) => {
                f.write_str(func.labels.get(l.index()).map_or("?", |l| l.name.as_str()))
            }
            Operand::Sink => f.write_str("_"),
        }
    }
}

fn indent(depth: usize) -> String {
    "\t".repeat(depth.min(64))
}
