//! The lowered IR: a [`Module`] of [`GlobalVar`]s and [`Function`]s whose instructions refer to
//! registers, labels and symbols by dense ids.
//!
//! Instruction data ([`Function::insts`]) is separate from source information
//! ([`Function::spans`], a side table). Equality (`PartialEq`) ignores spans, so a module equals
//! its own printed-and-reparsed form.
//!
//! # Scopes
//! PTX bodies may nest `{ }` blocks (nvcc wraps every call sequence in one, inline assembly
//! declares `.reg .pred p;` in one, and names repeat between blocks). Each block is a
//! [`Scope`] in [`Function::scopes`] (index 0 is the body itself) covering a half-open range of
//! instructions; every declaration records the scope it lives in and the instruction it
//! precedes (`at`). Names are resolved through the scope chain at lowering time, so two
//! `param0`s in sibling blocks become two different [`LocalVar`]s with the same name. The
//! printer re-emits the braces and declarations at the recorded positions.

use crate::opcode::{Modifiers, Opcode};
use crate::types::*;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Range;

macro_rules! id {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u32);
        impl $name {
            /// The index into the owning vector.
            pub fn index(self) -> usize {
                self.0 as usize
            }
            /// Builds an id from a vector index (saturating at `u32::MAX`).
            pub fn new(i: usize) -> Self {
                Self(u32::try_from(i).unwrap_or(u32::MAX))
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id!(
    /// A register of a [`Function`]: index into [`Function::regs`]. Displays as `r5`; use
    /// [`Function::reg_name`] for the PTX name.
    RegId, "r"
);
id!(
    /// A label: index into [`Function::labels`]. Displays as `L3`.
    LabelId, "L"
);
id!(
    /// An instruction: index into [`Function::insts`]. Displays as `i7`.
    InstId, "i"
);
id!(
    /// A basic block of a [`crate::cfg::Cfg`]. Displays as `bb2`.
    BlockId, "bb"
);
id!(
    /// A lexical `{ }` scope: index into [`Function::scopes`]. Displays as `s1`.
    ScopeId, "s"
);

/// A source location: 1-based line and byte column, and the byte range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column.
    pub col: u32,
    /// Byte offset of the start.
    pub start: u32,
    /// Byte offset one past the end.
    pub end: u32,
}

impl Span {
    /// The byte range.
    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A parsed PTX module (translation unit).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Module {
    /// `.version major.minor`.
    pub version: (u32, u32),
    /// `.target` entries (`sm_90a`, `texmode_independent`, `debug`).
    pub target: Vec<String>,
    /// `.address_size` (64 when absent).
    pub address_size: u32,
    /// `.file` directives.
    pub files: Vec<FileInfo>,
    /// Module-scope variables.
    pub globals: Vec<GlobalVar>,
    /// Functions and kernels, declarations (prototypes) included.
    pub functions: Vec<Function>,
    /// `.section` blocks (debug information), kept as raw text.
    pub sections: Vec<Section>,
    /// Module-level `.pragma` strings (without quotes).
    pub pragmas: Vec<String>,
    /// Order of the module items after the header, for printing.
    pub items: Vec<Item>,
}

/// A module item in source order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Item {
    /// [`Module::files`] index.
    File(u32),
    /// [`Module::globals`] index.
    Global(u32),
    /// [`Module::functions`] index.
    Function(u32),
    /// [`Module::sections`] index.
    Section(u32),
    /// [`Module::pragmas`] index.
    Pragma(u32),
}

impl Module {
    /// The kernel (`.entry`) called `name`.
    pub fn kernel(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.is_entry && f.name == name)
    }
    /// All kernels (`.entry` functions with a body).
    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.is_entry && f.has_body)
    }
    /// The function (with a body if one exists, else the declaration) called `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions
            .iter()
            .find(|f| f.name == name && f.has_body)
            .or_else(|| self.functions.iter().find(|f| f.name == name))
    }
    /// The name a [`Symbol`] refers to inside function `f` (`"?"` when out of range).
    pub fn symbol_name<'a>(&'a self, f: &'a Function, s: Symbol) -> &'a str {
        let name = match s {
            Symbol::Param(i) => f.params.get(i as usize).map(|p| p.name.as_str()),
            Symbol::Ret(i) => f.returns.get(i as usize).map(|p| p.name.as_str()),
            Symbol::Local(i) => f.local_vars.get(i as usize).map(|v| v.name.as_str()),
            Symbol::Global(i) => self.globals.get(i as usize).map(|v| v.name.as_str()),
            Symbol::Function(i) => self.functions.get(i as usize).map(|v| v.name.as_str()),
            Symbol::Directive(i) => f.directives.get(i as usize).map(|v| v.name.as_str()),
        };
        name.unwrap_or("?")
    }
}

/// `.file index "name"[, timestamp, size]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInfo {
    /// File index used by `.loc`.
    pub index: u32,
    /// File name (unescaped text between the quotes, kept verbatim).
    pub name: String,
    /// Optional timestamp.
    pub timestamp: Option<u64>,
    /// Optional file size.
    pub size: Option<u64>,
}

/// A `.section name { ... }` block, body kept verbatim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Section name (`.debug_info`).
    pub name: String,
    /// Text between the braces.
    pub body: String,
}

/// A value in a variable initialiser.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Init {
    /// A number.
    Imm(Immediate),
    /// Address of a symbol plus offset (`tbl`, `tbl+8`).
    Symbol {
        /// Symbol name.
        name: String,
        /// Byte offset.
        offset: i64,
    },
    /// `generic(sym)+offset`: generic address of a symbol.
    Generic {
        /// Symbol name.
        name: String,
        /// Byte offset.
        offset: i64,
    },
    /// A brace list `{a, b, ...}` (nested for multi-dimensional arrays).
    List(Vec<Init>),
}

/// A variable declaration (module scope or function scope).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GlobalVar {
    /// Name.
    pub name: String,
    /// `.visible` / `.extern` / `.weak` / `.common`.
    pub linkage: Option<Linkage>,
    /// State space (`.global`, `.shared`, `.const`, `.local`, `.param`, ...).
    pub space: StateSpace,
    /// `.align N`.
    pub align: Option<u32>,
    /// `.v2`/`.v4` element vector.
    pub vec: Option<VecWidth>,
    /// Element type.
    pub ty: ScalarType,
    /// Array dimensions; `None` is an unsized `[]`.
    pub dims: Vec<Option<u32>>,
    /// `= ...` initialiser.
    pub init: Option<Init>,
}

impl GlobalVar {
    /// Total size in bytes if all dimensions are known.
    pub fn size_bytes(&self) -> Option<u64> {
        let mut n = u64::from(self.ty.size()) * u64::from(self.vec.map_or(1, VecWidth::lanes));
        for d in &self.dims {
            n = n.checked_mul(u64::from((*d)?))?;
        }
        Some(n)
    }
}

/// A function-scope variable (`.shared`, `.local`, `.param` inside a body).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalVar {
    /// The declaration.
    pub var: GlobalVar,
    /// Lexical scope it is declared in.
    pub scope: ScopeId,
    /// Position: declared just before this instruction.
    pub at: InstId,
}

impl std::ops::Deref for LocalVar {
    type Target = GlobalVar;
    fn deref(&self) -> &GlobalVar {
        &self.var
    }
}

/// Pointer attributes of a kernel parameter (`.ptr .global .align 8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtrAttrs {
    /// Pointed-to state space (generic when absent).
    pub space: Option<StateSpace>,
    /// Pointee alignment.
    pub align: Option<u32>,
}

/// A function parameter or return value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// Name (`_` in prototypes).
    pub name: String,
    /// `.param` (usual) or `.reg`.
    pub space: StateSpace,
    /// `.align N` (of the parameter itself).
    pub align: Option<u32>,
    /// `.v2`/`.v4`.
    pub vec: Option<VecWidth>,
    /// Element type.
    pub ty: ScalarType,
    /// `.ptr` attributes.
    pub ptr: Option<PtrAttrs>,
    /// Array length of `.b8 name[24]` (struct by value).
    pub array: Option<u32>,
}

/// Performance-tuning directives and other function attributes (PTX ISA 11.4).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attributes {
    /// `.maxntid x[, y[, z]]`.
    pub maxntid: Option<Vec<u32>>,
    /// `.reqntid x[, y[, z]]`.
    pub reqntid: Option<Vec<u32>>,
    /// `.minnctapersm n`.
    pub minnctapersm: Option<u32>,
    /// `.maxnctapersm n` (deprecated).
    pub maxnctapersm: Option<u32>,
    /// `.maxnreg n`.
    pub maxnreg: Option<u32>,
    /// `.maxclusterrank n`.
    pub maxclusterrank: Option<u32>,
    /// `.reqnctapercluster x[, y[, z]]`.
    pub reqnctapercluster: Option<Vec<u32>>,
    /// `.explicitcluster`.
    pub explicitcluster: bool,
    /// `.noreturn`.
    pub noreturn: bool,
    /// `.pragma` strings between header and body.
    pub pragmas: Vec<String>,
}

/// One `.reg` declarator: `%r<30>` (a range) or `%x` (single).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegDecl {
    /// Name, or the prefix of a range.
    pub name: String,
    /// Type.
    pub ty: ScalarType,
    /// `.v2`/`.v4` vector register.
    pub vec: Option<VecWidth>,
    /// `Some(n)` for `name<n>`, declaring `name0` .. `name{n-1}`.
    pub count: Option<u32>,
    /// First register id; the range occupies consecutive ids.
    pub first: RegId,
    /// Scope declared in.
    pub scope: ScopeId,
    /// Declared just before this instruction.
    pub at: InstId,
}

/// One register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegInfo {
    /// Type.
    pub ty: ScalarType,
    /// Index into [`Function::reg_decls`].
    pub decl: u32,
    /// Position in a range declaration (`%r5` is 5), `None` for a single declaration.
    pub index: Option<u32>,
}

/// The PTX name of a register, borrowed from its declaration (displays like `%r5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegName<'a> {
    /// Name or range prefix.
    pub base: &'a str,
    /// Suffix number of a range register.
    pub index: Option<u32>,
}

impl fmt::Display for RegName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}{}", self.base, i),
            None => f.write_str(self.base),
        }
    }
}

/// A label and the instruction it names (`insts.len()` for a label at the end).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelInfo {
    /// Name.
    pub name: String,
    /// The labelled instruction.
    pub target: InstId,
    /// Scope declared in.
    pub scope: ScopeId,
}

/// A `{ }` block in a body. Scope 0 is the body itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// Enclosing scope (`None` for scope 0).
    pub parent: Option<ScopeId>,
    /// First instruction inside.
    pub start: InstId,
    /// One past the last instruction inside.
    pub end: InstId,
}

/// A labelled declaration directive in a body: `proto: .callprototype ...;`,
/// `tgts: .branchtargets L1, L2;`, `.calltargets`. The directive's text is kept verbatim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelledDirective {
    /// Label name.
    pub name: String,
    /// Directive text after the colon, without the final `;` (`.callprototype (...) _ (...)`).
    pub text: String,
    /// For `.branchtargets`: the resolved labels.
    pub targets: Vec<LabelId>,
    /// Scope declared in.
    pub scope: ScopeId,
    /// Declared just before this instruction.
    pub at: InstId,
}

/// A `.loc file line col` source position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SrcLoc {
    /// `.file` index.
    pub file: u32,
    /// Line.
    pub line: u32,
    /// Column.
    pub col: u32,
}

/// A function or kernel.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Function {
    /// Name.
    pub name: String,
    /// `.entry` (kernel) rather than `.func`.
    pub is_entry: bool,
    /// `.visible` / `.extern` / `.weak`.
    pub linkage: Option<Linkage>,
    /// False for a declaration without body (prototype).
    pub has_body: bool,
    /// Return parameters of a `.func`.
    pub returns: Vec<Param>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Performance directives.
    pub attributes: Attributes,
    /// Registers, indexed by [`RegId`].
    pub regs: Vec<RegInfo>,
    /// Register declarations in source order (for names and printing).
    pub reg_decls: Vec<RegDecl>,
    /// Labels, indexed by [`LabelId`].
    pub labels: Vec<LabelInfo>,
    /// Function-scope variable declarations.
    pub local_vars: Vec<LocalVar>,
    /// Labelled directives (`.callprototype`, `.branchtargets`, `.calltargets`).
    pub directives: Vec<LabelledDirective>,
    /// `{ }` scopes; index 0 is the whole body.
    pub scopes: Vec<Scope>,
    /// Instructions, indexed by [`InstId`].
    pub insts: Vec<Inst>,
    /// Source span of each instruction (side table, parallel to `insts`).
    pub spans: Vec<Span>,
    /// `.loc` in effect from an instruction on (one entry per change).
    pub locs: Vec<(InstId, SrcLoc)>,
    /// `.pragma` strings in the body, before the given instruction.
    pub pragmas: Vec<(InstId, String)>,
}

impl PartialEq for Function {
    /// Structural equality ignoring [`Function::spans`].
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.is_entry == o.is_entry
            && self.linkage == o.linkage
            && self.has_body == o.has_body
            && self.returns == o.returns
            && self.params == o.params
            && self.attributes == o.attributes
            && self.regs == o.regs
            && self.reg_decls == o.reg_decls
            && self.labels == o.labels
            && self.local_vars == o.local_vars
            && self.directives == o.directives
            && self.scopes == o.scopes
            && self.insts == o.insts
            && self.locs == o.locs
            && self.pragmas == o.pragmas
    }
}

impl Function {
    /// The PTX name of register `r`.
    pub fn reg_name(&self, r: RegId) -> RegName<'_> {
        match self.regs.get(r.index()) {
            Some(info) => RegName {
                base: self
                    .reg_decls
                    .get(info.decl as usize)
                    .map_or("%?", |d| d.name.as_str()),
                index: info.index,
            },
            None => RegName {
                base: "%?",
                index: None,
            },
        }
    }
    /// Type of register `r`.
    pub fn reg_type(&self, r: RegId) -> Option<ScalarType> {
        self.regs.get(r.index()).map(|i| i.ty)
    }
    /// The instruction `i`.
    pub fn inst(&self, i: InstId) -> Option<&Inst> {
        self.insts.get(i.index())
    }
    /// The source span of instruction `i`.
    pub fn span(&self, i: InstId) -> Option<Span> {
        self.spans.get(i.index()).copied()
    }
    /// The label called `name` (first one if names repeat in different scopes).
    pub fn label(&self, name: &str) -> Option<LabelId> {
        self.labels
            .iter()
            .position(|l| l.name == name)
            .map(LabelId::new)
    }
    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
    /// The `.loc` in effect at instruction `i`.
    pub fn loc(&self, i: InstId) -> Option<SrcLoc> {
        let k = self.locs.partition_point(|(at, _)| *at <= i);
        k.checked_sub(1)
            .and_then(|k| self.locs.get(k))
            .map(|(_, l)| *l)
    }
}

/// `@%p` / `@!%p` guard predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Guard {
    /// The predicate register.
    pub reg: RegId,
    /// `@!%p`: execute when false.
    pub negated: bool,
}

/// One instruction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inst {
    /// Guard predicate.
    pub guard: Option<Guard>,
    /// Opcode.
    pub op: Opcode,
    /// Modifiers, shared by the instructions spelled with the same instruction word (the
    /// parser caches them per module): an `Inst` is 72 bytes smaller than with its own copy,
    /// which the parser's throughput depends on (docs/PERFORMANCE.md, "PTX parsing"). Read
    /// fields through it as usual (`inst.mods.space`); build one with `Arc::new`.
    pub mods: std::sync::Arc<Modifiers>,
    /// Operands, destination(s) first as in PTX.
    pub operands: Operands,
}

/// The operands of one [`Inst`]: a slice (through `Deref`) stored inline for up to
/// [`Operands::INLINE`] operands, on the heap beyond.
///
/// Almost every PTX instruction has at most four operands; storing them in the instruction
/// saves one heap allocation and one free per instruction (7 % of the parser's instructions
/// when this replaced a `Vec<Operand>`; see `docs/PERFORMANCE.md`, "PTX parsing").
#[derive(Clone, Default, PartialEq)]
pub struct Operands(smallvec::SmallVec<[Operand; Operands::INLINE]>);

impl Operands {
    /// Operands stored without a heap allocation.
    pub const INLINE: usize = 4;

    /// No operands.
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// No operands, with room for `n` (on the heap only when `n` exceeds [`Self::INLINE`]).
    #[inline]
    pub fn with_capacity(n: usize) -> Self {
        Self(smallvec::SmallVec::with_capacity(n))
    }

    /// Appends an operand.
    #[inline(always)]
    pub fn push(&mut self, o: Operand) {
        self.0.push(o);
    }

    /// The operands as a slice.
    pub fn as_slice(&self) -> &[Operand] {
        &self.0
    }
}

impl std::ops::Deref for Operands {
    type Target = [Operand];
    fn deref(&self) -> &[Operand] {
        &self.0
    }
}

impl std::ops::DerefMut for Operands {
    fn deref_mut(&mut self) -> &mut [Operand] {
        &mut self.0
    }
}

impl fmt::Debug for Operands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<Operand>> for Operands {
    fn from(v: Vec<Operand>) -> Self {
        Self(smallvec::SmallVec::from_vec(v))
    }
}

impl FromIterator<Operand> for Operands {
    fn from_iter<I: IntoIterator<Item = Operand>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Operands {
    type Item = &'a Operand;
    type IntoIter = std::slice::Iter<'a, Operand>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq<Vec<Operand>> for Operands {
    fn eq(&self, other: &Vec<Operand>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<[Operand]> for Operands {
    fn eq(&self, other: &[Operand]) -> bool {
        self.as_slice() == other
    }
}

/// Serialised as a plain sequence, like the `Vec<Operand>` it replaces.
impl Serialize for Operands {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Operands {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Operand>::deserialize(d).map(Self::from)
    }
}

/// A named symbol referenced by an operand, resolved to what it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Symbol {
    /// [`Function::params`] index.
    Param(u32),
    /// [`Function::returns`] index.
    Ret(u32),
    /// [`Function::local_vars`] index.
    Local(u32),
    /// [`Module::globals`] index.
    Global(u32),
    /// [`Module::functions`] index.
    Function(u32),
    /// [`Function::directives`] index (call prototypes, branch target lists).
    Directive(u32),
}

/// An immediate value; float literals keep their exact bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Immediate {
    /// Signed integer (the default for integer literals).
    Int(i64),
    /// Unsigned integer (`U` suffix, or too large for `i64`).
    UInt(u64),
    /// `0fXXXXXXXX` single precision bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float literal, as double bits.
    F64(u64),
}

impl Immediate {
    /// The value as a 64-bit pattern (floats as their bits).
    pub fn bits(self) -> u64 {
        match self {
            Immediate::Int(v) => v as u64,
            Immediate::UInt(v) | Immediate::F64(v) => v,
            Immediate::F32(v) => u64::from(v),
        }
    }
    /// Negates (integers wrap; floats flip the sign bit).
    pub fn negate(self) -> Immediate {
        match self {
            Immediate::Int(v) => Immediate::Int(v.wrapping_neg()),
            Immediate::UInt(v) => Immediate::Int((v as i64).wrapping_neg()),
            Immediate::F32(b) => Immediate::F32(b ^ 0x8000_0000),
            Immediate::F64(b) => Immediate::F64(b ^ 0x8000_0000_0000_0000),
        }
    }
}

impl fmt::Display for Immediate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Immediate::Int(v) => write!(f, "{v}"),
            Immediate::UInt(v) => write!(f, "{v}U"),
            Immediate::F32(b) => write!(f, "0f{b:08X}"),
            Immediate::F64(b) => write!(f, "0d{b:016X}"),
        }
    }
}

/// Base of an address operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AddrBase {
    /// `[%rd1+...]`
    Reg(RegId),
    /// `[name+...]`
    Symbol(Symbol),
    /// `[0x100]`: absolute address.
    Imm(u64),
}

/// `[base+offset]` memory operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Address {
    /// Base.
    pub base: AddrBase,
    /// Byte offset (may be negative: `[%rd1+-4]`).
    pub offset: i64,
}

/// An instruction operand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Operand {
    /// A register.
    Reg(RegId),
    /// `!%p`: negated predicate source.
    PredNeg(RegId),
    /// `%p|%q`: the two predicate destinations of `setp`.
    PredPair(RegId, RegId),
    /// An immediate.
    Imm(Immediate),
    /// A special register (`%tid.x`).
    Special(SpecialReg),
    /// A symbol (parameter, variable, function, prototype), possibly with an offset when used
    /// as a value (`mov.u64 %rd1, tbl;`).
    Symbol(Symbol),
    /// `[base+offset]`.
    Address(Address),
    /// `{a, b, ...}` vector.
    Vector(Vec<Operand>),
    /// `[a, b, ...]` bracket list that is not a simple address (texture operands).
    Brackets(Vec<Operand>),
    /// `(a, b, ...)` list of `call` arguments / return values.
    List(Vec<Operand>),
    /// A branch target.
    Label(LabelId),
    /// `_` sink.
    Sink,
}
