//! The decoded instruction form: resolved operands (register slots, immediates, addresses)
//! and a typed operation enum, so execution never looks at strings or modifier lists.

use ptx_parser::{AtomOp, CmpOp, ShflMode, VoteMode};

/// "No register" in destination fields (`_` sinks, `red` without result).
pub(crate) const NO_REG: u32 = u32::MAX;

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// Register slot (PTX registers first, then special registers filled at warp start).
    Reg(u32),
    /// `!%p`: negated predicate register.
    NotPred(u32),
    /// Immediate bits (floats as their IEEE bits in the operand's width).
    Imm(u64),
    /// `%clock` / `%clock64`: the warp's instruction counter.
    Clock,
}

/// A memory state space as the interpreter sees it (`.const` lives in global memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// `.global` and `.const`.
    Global,
    /// `.shared` (per TB).
    Shared,
    /// `.local` (per thread).
    Local,
    /// `.param` (kernel parameters).
    Param,
    /// Generic addressing: the window the address falls in decides.
    Generic,
    /// A device-side launch's parameter buffer (per TB, reached through generic addresses
    /// only: [`super::device_runtime`]).
    ParamBuffer,
}

impl Space {
    /// PTX spelling.
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Param => "param",
            Space::Generic => "generic",
            Space::ParamBuffer => "parameter buffer",
        }
    }
}

/// `[reg + off]` or `[off]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    /// Base register slot, or [`NO_REG`].
    pub reg: u32,
    /// Offset (wrapping), includes a symbol's address.
    pub off: u64,
}

/// Value class of an instruction type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Unsigned or untyped bits.
    U,
    /// Signed integer.
    S,
    /// IEEE float (32 or 64 bits).
    F,
}

/// An instruction type: class and width in bits (predicates are 1-bit unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ty {
    pub kind: Kind,
    pub bits: u8,
}

/// Directed rounding of float results (`.rn` default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rnd {
    Rn,
    Rz,
    Rm,
    Rp,
}

/// Integer binary operations; operands read at the instruction width `bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IBin {
    Add,
    Sub,
    MulLo,
    MulHiU,
    MulHiS,
    MulWideU,
    MulWideS,
    Mul24LoU,
    Mul24LoS,
    Mul24HiU,
    Mul24HiS,
    DivU,
    DivS,
    RemU,
    RemS,
    MinU,
    MinS,
    MaxU,
    MaxS,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
}

/// Integer unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IUn {
    Not,
    Cnot,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
    BfindU,
    BfindS,
}

/// Float binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FBin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    Copysign,
}

/// Float unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FUn {
    Neg,
    Abs,
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
}

/// Integer multiply-add flavours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mad {
    Lo,
    HiU,
    HiS,
    WideU,
    WideS,
    Lo24U,
    Lo24S,
    Sad,
}

/// `testp` property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TestP {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// Reduction of `bar.red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarRed {
    Popc,
    And,
    Or,
}

/// Boolean combiner of `setp`/`set` with its predicate operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Combine {
    pub op: ptx_parser::BoolOp,
    pub c: Src,
}

/// One decoded instruction.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    IBin {
        k: IBin,
        bits: u8,
        d: u32,
        a: Src,
        b: Src,
    },
    IUn {
        k: IUn,
        bits: u8,
        d: u32,
        a: Src,
    },
    F32Bin {
        k: FBin,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: u32,
        a: Src,
        b: Src,
    },
    F64Bin {
        k: FBin,
        d: u32,
        a: Src,
        b: Src,
    },
    F32Un {
        k: FUn,
        ftz: bool,
        d: u32,
        a: Src,
    },
    F64Un {
        k: FUn,
        d: u32,
        a: Src,
    },
    IMad {
        k: Mad,
        bits: u8,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    F32Fma {
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    F64Fma {
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Bfe {
        signed: bool,
        bits: u8,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Bfi {
        bits: u8,
        d: u32,
        f: Src,
        a: Src,
        b: Src,
        c: Src,
    },
    Prmt {
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Shf {
        left: bool,
        wrap: bool,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Selp {
        bits: u8,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Slct {
        bits: u8,
        float: bool,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Setp {
        cmp: CmpOp,
        ty: Ty,
        comb: Option<Combine>,
        p: u32,
        q: u32,
        a: Src,
        b: Src,
    },
    Set {
        cmp: CmpOp,
        ty: Ty,
        float_out: bool,
        comb: Option<Combine>,
        d: u32,
        a: Src,
        b: Src,
    },
    Cvt {
        dty: Ty,
        sty: Ty,
        rnd: Option<ptx_parser::Rounding>,
        sat: bool,
        ftz: bool,
        d: u32,
        a: Src,
    },
    Mov {
        bits: u8,
        d: u32,
        a: Src,
    },
    Pack {
        ebits: u8,
        n: u8,
        d: u32,
        srcs: [Src; 4],
    },
    Unpack {
        ebits: u8,
        n: u8,
        ds: [u32; 4],
        a: Src,
    },
    Cvta {
        to: bool,
        space: Space,
        d: u32,
        a: Src,
    },
    Testp {
        k: TestP,
        f64: bool,
        d: u32,
        a: Src,
    },
    Ld {
        space: Space,
        ty: Ty,
        n: u8,
        ds: [u32; 4],
        addr: Addr,
    },
    St {
        space: Space,
        ty: Ty,
        n: u8,
        srcs: [Src; 4],
        addr: Addr,
    },
    Atom {
        space: Space,
        k: AtomOp,
        ty: Ty,
        d: u32,
        addr: Addr,
        b: Src,
        c: Src,
    },
    Bra {
        target: u32,
        rpc: u32,
    },
    Exit,
    /// `bar.sync` / `bar.arrive` / `bar.red` on barrier `id` with `count` threads (`None`:
    /// the whole TB); `arrive` does not wait.
    Bar {
        arrive: bool,
        id: Src,
        count: Option<Src>,
        red: Option<(BarRed, u32, Src)>,
    },
    Shfl {
        mode: ShflMode,
        d: u32,
        p: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Vote {
        mode: VoteMode,
        d: u32,
        a: Src,
    },
    Activemask {
        d: u32,
    },
    /// `match.any` / `match.all` (PTX ISA 9.7.13.10): lanes whose `a` (of `bits` bits)
    /// equals the executing lane's; `p` (optional) tells whether all are equal.
    Match {
        all: bool,
        bits: u8,
        d: u32,
        p: u32,
        a: Src,
        m: Src,
    },
    /// `redux.sync.op.type` (PTX ISA 9.7.13.11): `op` over the 32-bit `a` of the lanes
    /// in the member mask, `signed` for `.s32` min/max.
    Redux {
        op: ReduxOp,
        signed: bool,
        d: u32,
        a: Src,
        m: Src,
    },
    Nop,
    Trap,
    /// A call of the CUDA device runtime (a device-side launch and its helpers).
    Runtime(Box<super::device_runtime::RuntimeCall>),
    Unsupported(String),
}

/// The operations of `redux.sync` on integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// A decoded instruction with its guard.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DInst {
    /// Guard predicate slot, or [`NO_REG`].
    pub guard: u32,
    /// `@!%p`.
    pub guard_neg: bool,
    /// The operation.
    pub op: Op,
}
