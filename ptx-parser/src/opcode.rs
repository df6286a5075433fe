//! Instruction opcodes and their typed modifiers.
//!
//! An instruction word such as `ld.global.nc.v4.f32` splits into an [`Opcode`] (`ld`) and
//! [`Modifiers`] (`global`, `nc`, `v4`, `f32`). Which words a modifier may be depends on the
//! opcode family: `.lo` is a comparison for `setp` but a result half for `mul`, `.and` is a
//! boolean combiner for `setp` but an operation for `atom`. Words not modelled land in
//! [`Modifiers::other`]. The source order of modifier words is kept so printing reproduces the
//! instruction exactly (PTX requires a specific order per instruction, PTX ISA chapter 9.7).

use crate::inline::InlineVec;
use crate::types::*;
use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! opcodes {
    ($($var:ident = $s:literal),* $(,)?) => {
        /// A PTX instruction opcode (PTX ISA chapter 9.7). Unknown opcodes parse as
        /// [`Opcode::Other`] with all their dotted words as modifiers.
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Opcode {
            $(#[doc = concat!("`", $s, "`")] $var,)*
            /// Any other instruction; holds the first word.
            Other(String),
        }
        impl Opcode {
            /// The opcode as written in PTX (possibly dotted, e.g. `cp.async.wait_group`).
            pub fn name(&self) -> &str {
                match self {
                    $(Self::$var => $s,)*
                    Self::Other(s) => s,
                }
            }
            fn from_single(s: &str) -> Option<Self> {
                match s {
                    $($s => Some(Self::$var),)*
                    _ => None,
                }
            }
        }
    };
}

opcodes! {
    Ld = "ld", Ldu = "ldu", St = "st", Prefetch = "prefetch", Prefetchu = "prefetchu",
    Mov = "mov", Add = "add", Addc = "addc", Sub = "sub", Subc = "subc", Mul = "mul",
    Mad = "mad", Madc = "madc", Mul24 = "mul24", Mad24 = "mad24", Sad = "sad", Div = "div",
    Rem = "rem", Abs = "abs", Neg = "neg", Min = "min", Max = "max", And = "and", Or = "or",
    Xor = "xor", Not = "not", Cnot = "cnot", Shl = "shl", Shr = "shr", Shf = "shf",
    Selp = "selp", Setp = "setp", Set = "set", Slct = "slct", Cvt = "cvt", Cvta = "cvta",
    Bra = "bra", BrxIdx = "brx.idx", Call = "call", Ret = "ret", Exit = "exit", Trap = "trap",
    Bar = "bar", Barrier = "barrier", BarWarpSync = "bar.warp.sync", Membar = "membar",
    Fence = "fence", Atom = "atom", Red = "red", Shfl = "shfl", Vote = "vote", Match = "match",
    Activemask = "activemask", Redux = "redux", Fma = "fma", Rcp = "rcp", Sqrt = "sqrt",
    Rsqrt = "rsqrt", Sin = "sin", Cos = "cos", Lg2 = "lg2", Ex2 = "ex2", Tanh = "tanh",
    Tex = "tex", Tld4 = "tld4", Txq = "txq", Suld = "suld", Sust = "sust", Prmt = "prmt",
    Bfe = "bfe", Bfi = "bfi", Bfind = "bfind", Popc = "popc", Clz = "clz", Brev = "brev",
    Copysign = "copysign", Testp = "testp", Isspacep = "isspacep", Lop3 = "lop3",
    Dp4a = "dp4a", Dp2a = "dp2a", CpAsync = "cp.async",
    CpAsyncCommitGroup = "cp.async.commit_group", CpAsyncWaitGroup = "cp.async.wait_group",
    CpAsyncWaitAll = "cp.async.wait_all", CpAsyncBulk = "cp.async.bulk", Mma = "mma",
    Wmma = "wmma", Wgmma = "wgmma", Ldmatrix = "ldmatrix", Stmatrix = "stmatrix",
    Mbarrier = "mbarrier", Nanosleep = "nanosleep", Pmevent = "pmevent",
    Griddepcontrol = "griddepcontrol", Elect = "elect", Mapa = "mapa", Getctarank = "getctarank",
}

/// Which context decides the meaning of ambiguous modifier words.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    General,
    Compare,
    Mul,
    Atomic,
    Shfl,
    Vote,
}

impl Opcode {
    /// Splits an instruction word into opcode and the remaining modifier words.
    pub fn split(word: &str) -> (Opcode, &str) {
        let (head, rest) = word.split_once('.').unwrap_or((word, ""));
        let strip = |rest: &'static str, full: &str| -> Option<usize> {
            full.strip_prefix(rest).and_then(|r| {
                if r.is_empty() || r.starts_with('.') {
                    Some(full.len() - r.len())
                } else {
                    None
                }
            })
        };
        let multi: &[(&'static str, Opcode)] = match head {
            "cp" => &[
                ("async.commit_group", Opcode::CpAsyncCommitGroup),
                ("async.wait_group", Opcode::CpAsyncWaitGroup),
                ("async.wait_all", Opcode::CpAsyncWaitAll),
                ("async.bulk", Opcode::CpAsyncBulk),
                ("async", Opcode::CpAsync),
            ],
            "bar" => &[("warp.sync", Opcode::BarWarpSync)],
            "brx" => &[("idx", Opcode::BrxIdx)],
            _ => &[],
        };
        for (suffix, op) in multi {
            if let Some(n) = strip(suffix, rest) {
                let r = rest.get(n..).unwrap_or("");
                return (op.clone(), r.strip_prefix('.').unwrap_or(r));
            }
        }
        let op = match head {
            "cp" | "brx" => Opcode::Other(head.to_string()),
            _ => Opcode::from_single(head).unwrap_or_else(|| Opcode::Other(head.to_string())),
        };
        (op, rest)
    }

    fn family(&self) -> Family {
        match self {
            Opcode::Setp | Opcode::Set | Opcode::Slct => Family::Compare,
            Opcode::Mul | Opcode::Mad | Opcode::Mul24 | Opcode::Mad24 | Opcode::Madc => Family::Mul,
            Opcode::Atom | Opcode::Red | Opcode::Redux => Family::Atomic,
            Opcode::Shfl => Family::Shfl,
            // `match.any` / `match.all` share `vote`'s mode words.
            Opcode::Vote | Opcode::Match => Family::Vote,
            _ => Family::General,
        }
    }

    /// True for instructions that end a basic block unconditionally when unguarded.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            Opcode::Bra | Opcode::BrxIdx | Opcode::Ret | Opcode::Exit | Opcode::Trap
        )
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which field of [`Modifiers`] a modifier word went to; kept in source order for printing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Slot {
    /// [`Modifiers::space`]
    Space,
    /// [`Modifiers::space2`]
    Space2,
    /// [`Modifiers::cache`]
    Cache,
    /// [`Modifiers::nc`]
    Nc,
    /// Next entry of [`Modifiers::types`]
    Type,
    /// [`Modifiers::rounding`]
    Rounding,
    /// [`Modifiers::ftz`]
    Ftz,
    /// [`Modifiers::sat`]
    Sat,
    /// [`Modifiers::precision`]
    Precision,
    /// [`Modifiers::cmp`]
    Cmp,
    /// [`Modifiers::bool_op`]
    BoolOp,
    /// [`Modifiers::mul`]
    Mul,
    /// [`Modifiers::vec`]
    Vec,
    /// [`Modifiers::uni`]
    Uni,
    /// [`Modifiers::sync`]
    Sync,
    /// [`Modifiers::aligned`]
    Aligned,
    /// [`Modifiers::cc`]
    Cc,
    /// [`Modifiers::to`]
    To,
    /// [`Modifiers::atom`]
    Atom,
    /// [`Modifiers::scope`]
    Scope,
    /// [`Modifiers::sem`]
    Sem,
    /// [`Modifiers::shfl`]
    Shfl,
    /// [`Modifiers::vote`]
    Vote,
    /// Next entry of [`Modifiers::other`]
    #[default]
    Other,
}

/// Typed instruction modifiers. Fields not present in the source are `None`/`false`/empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Modifiers {
    /// State space (`ld.global`, `cvta.to.global`, destination space of `cp.async`).
    pub space: Option<StateSpace>,
    /// Second state space (source space of `cp.async.ca.shared.global`).
    pub space2: Option<StateSpace>,
    /// Cache operator.
    pub cache: Option<CacheOp>,
    /// `.nc` (non-coherent, read-only path) on `ld.global`.
    pub nc: bool,
    /// Type suffixes in order (`cvt.f32.s32` has two; more than four go to `other`).
    pub types: InlineVec<ScalarType, 4>,
    /// Rounding modifier.
    pub rounding: Option<Rounding>,
    /// `.ftz`
    pub ftz: bool,
    /// `.sat`
    pub sat: bool,
    /// `.approx` / `.full`
    pub precision: Option<Precision>,
    /// Comparison of `setp`/`set`/`slct`.
    pub cmp: Option<CmpOp>,
    /// Boolean combiner of `setp`/`set`.
    pub bool_op: Option<BoolOp>,
    /// `.lo`/`.hi`/`.wide` of multiplies.
    pub mul: Option<MulMode>,
    /// `.v2`/`.v4`/`.v8`.
    pub vec: Option<VecWidth>,
    /// `.uni` (non-divergent branch / call).
    pub uni: bool,
    /// `.sync`
    pub sync: bool,
    /// `.aligned`
    pub aligned: bool,
    /// `.cc` (carry out of `add.cc`/`sub.cc`/`mad.cc`).
    pub cc: bool,
    /// `.to` of `cvta.to.space` (generic -> space) versus `cvta.space` (space -> generic).
    pub to: bool,
    /// Operation of `atom`/`red`/`redux`.
    pub atom: Option<AtomOp>,
    /// Memory scope.
    pub scope: Option<MemScope>,
    /// Memory ordering semantic.
    pub sem: Option<Semantic>,
    /// `shfl` mode.
    pub shfl: Option<ShflMode>,
    /// `vote` mode.
    pub vote: Option<VoteMode>,
    /// Modifier words not modelled (or repeated), without the dot, in order.
    pub other: Vec<String>,
    /// Source order of the words, so printing reproduces them.
    pub order: InlineVec<Slot, { Modifiers::MAX_WORDS }>,
}

impl Modifiers {
    /// The most modifier words an instruction may have.
    pub const MAX_WORDS: usize = 24;

    /// Parses the dotted modifier words (`"global.nc.v4.f32"`) of opcode `op`. Words beyond
    /// [`Modifiers::MAX_WORDS`] are dropped; the caller checks the count first.
    pub fn parse(op: &Opcode, words: &str) -> Modifiers {
        let mut m = Modifiers::default();
        if words.is_empty() {
            return m;
        }
        let fam = op.family();
        for w in words.split('.') {
            if m.order.is_full() {
                break;
            }
            let slot = m.classify(fam, w);
            m.order.push(slot);
        }
        m
    }

    fn classify(&mut self, fam: Family, w: &str) -> Slot {
        macro_rules! set {
            ($field:ident, $v:expr, $slot:ident) => {
                if self.$field.is_none() {
                    self.$field = Some($v);
                    return Slot::$slot;
                }
            };
        }
        macro_rules! flag {
            ($field:ident, $slot:ident) => {
                if !self.$field {
                    self.$field = true;
                    return Slot::$slot;
                }
            };
        }
        match fam {
            Family::Compare => {
                if let Some(c) = CmpOp::from_word(w) {
                    set!(cmp, c, Cmp);
                }
                if let Some(b) = BoolOp::from_word(w) {
                    set!(bool_op, b, BoolOp);
                }
            }
            Family::Mul => {
                if let Some(x) = MulMode::from_word(w) {
                    set!(mul, x, Mul);
                }
            }
            Family::Atomic => {
                if let Some(x) = AtomOp::from_word(w) {
                    set!(atom, x, Atom);
                }
            }
            Family::Shfl => {
                if let Some(x) = ShflMode::from_word(w) {
                    set!(shfl, x, Shfl);
                }
            }
            Family::Vote => {
                if let Some(x) = VoteMode::from_word(w) {
                    set!(vote, x, Vote);
                }
            }
            Family::General => {}
        }
        if let Some(t) = ScalarType::from_word(w) {
            if self.types.push(t) {
                return Slot::Type;
            }
        }
        match w {
            "nc" => flag!(nc, Nc),
            "ftz" => flag!(ftz, Ftz),
            "sat" => flag!(sat, Sat),
            "uni" => flag!(uni, Uni),
            "sync" => flag!(sync, Sync),
            "aligned" => flag!(aligned, Aligned),
            "cc" => flag!(cc, Cc),
            "to" => flag!(to, To),
            _ => {}
        }
        if let Some(s) = StateSpace::from_word(w) {
            if s != StateSpace::Generic {
                set!(space, s, Space);
                set!(space2, s, Space2);
            }
        }
        if let Some(x) = CacheOp::from_word(w) {
            set!(cache, x, Cache);
        }
        if let Some(x) = Rounding::from_word(w) {
            set!(rounding, x, Rounding);
        }
        if let Some(x) = Precision::from_word(w) {
            set!(precision, x, Precision);
        }
        if let Some(x) = VecWidth::from_word(w) {
            set!(vec, x, Vec);
        }
        if let Some(x) = MemScope::from_word(w) {
            set!(scope, x, Scope);
        }
        if let Some(x) = Semantic::from_word(w) {
            set!(sem, x, Sem);
        }
        self.other.push(w.to_string());
        Slot::Other
    }

    /// The modifier words in print order, each without its leading dot.
    pub fn words(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.order.len());
        self.write_words(|w| out.push(w.to_string()));
        out
    }

    /// Calls `emit` with each word in order (source order when known, else a canonical one).
    fn write_words(&self, mut emit: impl FnMut(&str)) {
        let canonical;
        let order: &[Slot] = if self.order.is_empty() {
            canonical = self.canonical_order();
            &canonical
        } else {
            self.order.as_slice()
        };
        let (mut ti, mut oi) = (0, 0);
        for slot in order {
            let w: &str = match slot {
                Slot::Space => self.space.map_or("", StateSpace::as_str),
                Slot::Space2 => self.space2.map_or("", StateSpace::as_str),
                Slot::Cache => self.cache.map_or("", CacheOp::as_str),
                Slot::Nc => "nc",
                Slot::Type => {
                    ti += 1;
                    self.types.get(ti - 1).map_or("", |t| t.as_str())
                }
                Slot::Rounding => self.rounding.map_or("", Rounding::as_str),
                Slot::Ftz => "ftz",
                Slot::Sat => "sat",
                Slot::Precision => self.precision.map_or("", Precision::as_str),
                Slot::Cmp => self.cmp.map_or("", CmpOp::as_str),
                Slot::BoolOp => self.bool_op.map_or("", BoolOp::as_str),
                Slot::Mul => self.mul.map_or("", MulMode::as_str),
                Slot::Vec => self.vec.map_or("", VecWidth::as_str),
                Slot::Uni => "uni",
                Slot::Sync => "sync",
                Slot::Aligned => "aligned",
                Slot::Cc => "cc",
                Slot::To => "to",
                Slot::Atom => self.atom.map_or("", AtomOp::as_str),
                Slot::Scope => self.scope.map_or("", MemScope::as_str),
                Slot::Sem => self.sem.map_or("", Semantic::as_str),
                Slot::Shfl => self.shfl.map_or("", ShflMode::as_str),
                Slot::Vote => self.vote.map_or("", VoteMode::as_str),
                Slot::Other => {
                    oi += 1;
                    self.other.get(oi - 1).map_or("", String::as_str)
                }
            };
            if !w.is_empty() {
                emit(w);
            }
        }
    }

    /// A PTX-conforming order for modifiers built programmatically (no recorded order):
    /// semantic, scope, space(s), ... then types last, as most instruction grammars read.
    fn canonical_order(&self) -> Vec<Slot> {
        let mut o = Vec::new();
        let mut push = |c: bool, s: Slot| {
            if c {
                o.push(s)
            }
        };
        push(self.to, Slot::To);
        push(self.sync, Slot::Sync);
        push(self.aligned, Slot::Aligned);
        push(self.shfl.is_some(), Slot::Shfl);
        push(self.vote.is_some(), Slot::Vote);
        push(self.uni, Slot::Uni);
        push(self.cmp.is_some(), Slot::Cmp);
        push(self.bool_op.is_some(), Slot::BoolOp);
        push(self.sem.is_some(), Slot::Sem);
        push(self.scope.is_some(), Slot::Scope);
        push(self.space.is_some(), Slot::Space);
        push(self.space2.is_some(), Slot::Space2);
        push(self.nc, Slot::Nc);
        push(self.cache.is_some(), Slot::Cache);
        push(self.atom.is_some(), Slot::Atom);
        push(self.mul.is_some(), Slot::Mul);
        push(self.cc, Slot::Cc);
        push(self.precision.is_some(), Slot::Precision);
        push(self.rounding.is_some(), Slot::Rounding);
        push(self.ftz, Slot::Ftz);
        push(self.sat, Slot::Sat);
        for _ in &self.other {
            o.push(Slot::Other);
        }
        if self.vec.is_some() {
            o.push(Slot::Vec);
        }
        for _ in &self.types {
            o.push(Slot::Type);
        }
        o
    }
}

impl fmt::Display for Modifiers {
    /// Writes `.w1.w2...` (empty when there are none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut r = Ok(());
        self.write_words(|w| {
            if r.is_ok() {
                r = write!(f, ".{w}");
            }
        });
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(w: &str) -> (Opcode, Modifiers) {
        let (op, rest) = Opcode::split(w);
        let m = Modifiers::parse(&op, rest);
        (op, m)
    }

    #[test]
    fn ld_global_nc() {
        let (op, m) = split("ld.global.nc.v4.f32");
        assert_eq!(op, Opcode::Ld);
        assert_eq!(m.space, Some(StateSpace::Global));
        assert!(m.nc);
        assert_eq!(m.vec, Some(VecWidth::V4));
        assert_eq!(&m.types[..], &[ScalarType::F32]);
        assert_eq!(m.to_string(), ".global.nc.v4.f32");
    }

    #[test]
    fn context_dependent_words() {
        let (_, m) = split("setp.lo.and.u32");
        assert_eq!(m.cmp, Some(CmpOp::Lo));
        assert_eq!(m.bool_op, Some(BoolOp::And));
        let (_, m) = split("mad.lo.s32");
        assert_eq!(m.mul, Some(MulMode::Lo));
        let (_, m) = split("atom.global.and.b32");
        assert_eq!(m.atom, Some(AtomOp::And));
        let (_, m) = split("vote.sync.uni.pred");
        assert_eq!(m.vote, Some(VoteMode::Uni));
        assert!(m.sync && !m.uni);
        let (_, m) = split("bra.uni");
        assert!(m.uni);
    }

    #[test]
    fn multiword_opcodes() {
        let (op, m) = split("cp.async.ca.shared.global");
        assert_eq!(op, Opcode::CpAsync);
        assert_eq!(m.cache, Some(CacheOp::Ca));
        assert_eq!(m.space, Some(StateSpace::Shared));
        assert_eq!(m.space2, Some(StateSpace::Global));
        assert_eq!(split("cp.async.wait_group").0, Opcode::CpAsyncWaitGroup);
        assert_eq!(split("cp.async.bulk.tensor.2d").0, Opcode::CpAsyncBulk);
        assert_eq!(split("bar.warp.sync").0, Opcode::BarWarpSync);
        let (op, m) = split("cp.reduce.async.bulk");
        assert_eq!(op, Opcode::Other("cp".into()));
        assert_eq!(m.other, vec!["reduce", "async", "bulk"]);
        let (op, m) = split("cvta.to.global.u64");
        assert_eq!(op, Opcode::Cvta);
        assert!(m.to);
    }

    #[test]
    fn canonical_order_when_built() {
        let m = Modifiers {
            space: Some(StateSpace::Global),
            types: [ScalarType::U32].into_iter().collect(),
            cache: Some(CacheOp::Cg),
            ..Default::default()
        };
        assert_eq!(m.to_string(), ".global.cg.u32");
    }
}
