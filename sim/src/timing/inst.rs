//! The instruction records the timing model works on: a static instruction's class and
//! register operands, and one executed warp instruction. Shared by the tracer, which makes
//! them, and the issue-order pass, which reorders them (`super::issue_order`).

/// Instruction classes with their own latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Integer, logic, moves, comparisons, conversions.
    Int,
    /// Single precision arithmetic.
    Fp,
    /// Double precision arithmetic.
    Dp,
    /// Special functions, divisions, square roots.
    Sfu,
    /// Branches, exits, shuffles, votes, fences.
    Ctrl,
    /// `bar.sync` / `barrier`.
    Barrier,
    /// Loads, stores, atomics.
    Mem,
}

/// What the timing model needs of one static instruction.
#[derive(Clone, Debug)]
pub struct StaticInst {
    /// Class.
    pub class: Class,
    /// Registers written (IR register indices).
    pub dsts: Vec<u32>,
    /// Registers read (including the guard).
    pub srcs: Vec<u32>,
    /// A branch's target instruction.
    pub target: Option<u32>,
    /// Issue slots: the SASS instructions ptxas makes of it on the common path
    /// ([`sass_slots`]); 1 for most.
    pub slots: u8,
}

/// No memory operation.
pub const NO_MEM: u32 = u32::MAX;

/// One executed warp instruction.
#[derive(Clone, Copy, Debug)]
pub struct DynInst {
    /// Instruction index.
    pub pc: u32,
    /// Lanes that executed it (guard true).
    pub lanes: u8,
    /// Index into [`WarpTrace::mems`], or [`NO_MEM`].
    pub mem: u32,
    /// For a barrier instruction: its [`crate::interp::BarrierArrival`], packed.
    pub bar: u16,
}
