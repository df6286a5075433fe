//! Errors of the interpreter. Every execution error names the kernel, the TB, the thread, the
//! PTX line and the instruction text, so a person can find the fault in the source.

use std::fmt;

/// Where an execution error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    /// Kernel name.
    pub kernel: String,
    /// TB index `(x, y, z)`.
    pub tb: [u32; 3],
    /// Thread index in the TB `(x, y, z)` (the first faulting lane).
    pub thread: [u32; 3],
    /// 1-based PTX line (0 when unknown).
    pub line: u32,
    /// The instruction, as PTX text.
    pub inst: String,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [tx, ty, tz] = self.tb;
        let [hx, hy, hz] = self.thread;
        write!(
            f,
            "kernel {}, TB ({tx},{ty},{tz}), thread ({hx},{hy},{hz}), PTX line {}: `{}`",
            self.kernel, self.line, self.inst
        )
    }
}

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A memory access outside every buffer or variable of its state space.
    #[error("out-of-bounds {kind} of {size} bytes at {space} address {addr:#x} ({what}) at {loc}")]
    OutOfBounds {
        /// `load`, `store` or `atomic`.
        kind: &'static str,
        /// State space name.
        space: &'static str,
        /// The faulting address.
        addr: u64,
        /// Bytes accessed.
        size: u32,
        /// What lies near the address (which buffer, and how far outside it).
        what: String,
        /// Where.
        loc: Box<Loc>,
    },
    /// An address not aligned to the access size.
    #[error("misaligned {kind} of {size} bytes at {space} address {addr:#x} at {loc}")]
    Misaligned {
        /// `load`, `store` or `atomic`.
        kind: &'static str,
        /// State space name.
        space: &'static str,
        /// The faulting address.
        addr: u64,
        /// Bytes accessed.
        size: u32,
        /// Where.
        loc: Box<Loc>,
    },
    /// A barrier that not all non-exited threads of the TB reach.
    #[error("divergent barrier: {why} at {loc}")]
    DivergentBarrier {
        /// What went wrong.
        why: String,
        /// Where.
        loc: Box<Loc>,
    },
    /// A barrier instruction with an invalid operand (number out of 0..15, a thread count
    /// that is not a positive multiple of the warp size or exceeds the TB).
    #[error("invalid barrier: {why} at {loc}")]
    Barrier {
        /// What went wrong.
        why: String,
        /// Where.
        loc: Box<Loc>,
    },
    /// Every warp of a TB that has not exited waits at a barrier that can never complete.
    #[error("barrier deadlock in kernel {kernel}, TB ({},{},{}): {waits}", tb[0], tb[1], tb[2])]
    Deadlock {
        /// Kernel name.
        kernel: String,
        /// TB index `(x, y, z)`.
        tb: [u32; 3],
        /// Which warps (threads) wait at which barrier and PTX line, and how many arrived.
        waits: String,
    },
    /// The instruction budget ran out (a runaway loop?).
    #[error("instruction budget of {limit} warp instructions exhausted (runaway loop? raise --max-instructions) at {loc}")]
    Budget {
        /// The budget.
        limit: u64,
        /// Where.
        loc: Box<Loc>,
    },
    /// Integer division or remainder by zero (PTX leaves the result unspecified).
    #[error("integer division by zero at {loc}")]
    DivideByZero {
        /// Where.
        loc: Box<Loc>,
    },
    /// `trap` executed.
    #[error("trap executed at {loc}")]
    Trap {
        /// Where.
        loc: Box<Loc>,
    },
    /// An instruction the interpreter does not implement.
    #[error("unsupported instruction ({why}) at {loc}")]
    Unsupported {
        /// Why it cannot run.
        why: String,
        /// Where.
        loc: Box<Loc>,
    },
    /// A device-side launch that cannot run: a bad configuration, an unknown buffer or
    /// stream, nesting beyond the limit (`interp::device_runtime`).
    #[error("device-side launch: {why} at {loc}")]
    DeviceLaunch {
        /// What went wrong.
        why: String,
        /// Where the parent called the device runtime.
        loc: Box<Loc>,
    },
    /// The module has no kernel of that name with a body.
    #[error("no kernel (.entry with a body) named `{0}`")]
    NoKernel(String),
    /// A launch dimension or count beyond what the simulator indexes (`u32`).
    #[error("{what} {value} too large")]
    TooLarge {
        /// What: `grid.x`, `block.y`, `TB`, `TB count`...
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// A grid or block with a zero dimension.
    #[error("empty grid or block")]
    EmptyLaunch,
    /// The launch's block breaks the kernel's `.maxntid` or `.reqntid` directive.
    #[error("kernel `{kernel}` declares {directive} {declared} {why}")]
    BlockDirective {
        /// Kernel name.
        kernel: String,
        /// `.maxntid` or `.reqntid`.
        directive: &'static str,
        /// The directive's dimensions as written.
        declared: String,
        /// How the launch's block breaks it.
        why: String,
    },
    /// More `.local` memory per thread than CUDA allows.
    #[error("the kernel declares {declared} of .local memory per thread; CUDA allows at most {max} per thread")]
    LocalMemory {
        /// What the kernel declares (human-readable bytes).
        declared: String,
        /// CUDA's limit (human-readable bytes).
        max: String,
    },
    /// The kernel's resources do not fit the GPU (occupancy 0) or an override is invalid.
    #[error("occupancy: {0}")]
    Occupancy(#[from] gpu::Error),
    /// A grouped TB policy (the PAVER runtime) run without a schedule.
    #[error("the PAVER runtime needs a schedule (groups of TBs)")]
    NoSchedule,
    /// A schedule naming a TB outside the grid, or one TB twice.
    #[error("schedule: TB {tb} out of range or repeated (grid has {num_tbs})")]
    ScheduleTb {
        /// The TB.
        tb: u32,
        /// TBs in the grid.
        num_tbs: u64,
    },
    /// A data placement on a GPU without memory modules.
    #[error("placement `{placement}` needs a multi-module GPU (a [numa] section, e.g. --gpu mcm4); {gpu} has one module")]
    PlacementNeedsNuma {
        /// The placement asked for.
        placement: &'static str,
        /// The GPU's name.
        gpu: String,
    },
    /// Two run options that cannot go together.
    #[error("{0}")]
    Options(String),
    /// The run passed `max_cycles`.
    #[error("stopped after {0} cycles (max_cycles)")]
    MaxCycles(u64),
    /// The timing model can make no progress (a TB policy that issues nothing to idle SMs,
    /// or warps waiting on each other with nothing in flight).
    #[error("timing model deadlocked at cycle {cycle} ({done} of {num_tbs} TBs done): {why}")]
    TimingDeadlock {
        /// The cycle.
        cycle: u64,
        /// TBs finished.
        done: u64,
        /// TBs in the grid.
        num_tbs: u32,
        /// What holds it.
        why: String,
    },
    /// The worker threads could not be started.
    #[error("cannot start {threads} threads: {why}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// The system's answer.
        why: String,
    },
    /// A broken invariant of the simulator itself (a bug to report, not an input error).
    #[error("internal error: {0}")]
    Internal(String),
    /// A schedule (`paver-schedule/1`) made for another kernel or launch than the one run.
    #[error("the schedule is for {what} {schedule} but the launch has {what} {launch}")]
    ScheduleMismatch {
        /// What differs: `kernel`, `grid`, `block` or `TB count`.
        what: &'static str,
        /// The schedule's value.
        schedule: String,
        /// The launch's value.
        launch: String,
    },
    /// A buffer initialiser failed.
    #[error("{0}")]
    Launch(#[from] launch::LaunchError),
}

impl SimError {
    /// Where the error happened, for execution errors.
    pub fn loc(&self) -> Option<&Loc> {
        match self {
            SimError::OutOfBounds { loc, .. }
            | SimError::Misaligned { loc, .. }
            | SimError::DivergentBarrier { loc, .. }
            | SimError::Barrier { loc, .. }
            | SimError::Budget { loc, .. }
            | SimError::DivideByZero { loc }
            | SimError::Trap { loc }
            | SimError::Unsupported { loc, .. }
            | SimError::DeviceLaunch { loc, .. } => Some(loc),
            SimError::NoKernel(_)
            | SimError::TooLarge { .. }
            | SimError::EmptyLaunch
            | SimError::BlockDirective { .. }
            | SimError::LocalMemory { .. }
            | SimError::Occupancy(_)
            | SimError::NoSchedule
            | SimError::ScheduleTb { .. }
            | SimError::PlacementNeedsNuma { .. }
            | SimError::MaxCycles(_)
            | SimError::TimingDeadlock { .. }
            | SimError::Threads { .. }
            | SimError::Internal(_)
            | SimError::Options(_)
            | SimError::Deadlock { .. }
            | SimError::ScheduleMismatch { .. }
            | SimError::Launch(_) => None,
        }
    }
}
