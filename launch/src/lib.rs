//! Kernel launch descriptions, shared by `paver analyze`, `run` and `simulate`.
//!
//! Data flows one way: a [`Launch`] comes from a `paver-launch/1` JSON file
//! ([`Launch::read`]) and/or command-line flags ([`flags`]); [`Launch::bind`] resolves it
//! against the kernel's parameter list into a [`BoundLaunch`] (every parameter valued,
//! every pointer given an address); [`Init::materialise`] makes a buffer's bytes when a
//! consumer needs contents, not just addresses.
#![warn(missing_docs)]

use std::path::PathBuf;

pub mod bind;
pub mod budget;
pub mod elem;
pub mod flags;
pub mod format;
pub mod init;
pub mod ptx;

pub use bind::{
    BoundLaunch, BoundParam, BoundValue, FieldBuffer, ModuleVar, ParamSig, SigType, STRUCT_REGION0,
};
pub use budget::{elide, human_bytes, MemoryBudget};
pub use elem::ElemType;
pub use flags::{parse_param_flag, LaunchFlags};
pub use format::{
    BufferSpec, Dim3, FieldArg, FieldSpec, Launch, ParamArg, ParamKey, ParamSpec, Resources,
    Scalar, FORMAT,
};
pub use init::{CsrSpec, Init, SplitMix64};
pub use ptx::param_sigs;

/// Everything that can be wrong with a launch description.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The file could not be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// Malformed JSON or a value of the wrong shape.
    #[error("{}:{line}:{col}: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What serde said.
        message: String,
    },
    /// The `format` key names another format or version.
    #[error("{}: format is `{found}`, expected `{}`", path.display(), FORMAT)]
    Format {
        /// The file.
        path: PathBuf,
        /// What it said.
        found: String,
    },
    /// An initialiser string that does not parse.
    #[error("bad initialiser `{text}`: {why}")]
    BadInit {
        /// The text.
        text: String,
        /// Why.
        why: String,
    },
    /// A `file(…)` initialiser whose file has the wrong size.
    #[error("{}: file holds {found} bytes but the buffer needs {expected} bytes", path.display())]
    FileSize {
        /// The file.
        path: PathBuf,
        /// Bytes the buffer needs.
        expected: u64,
        /// Bytes in the file.
        found: u64,
    },
    /// A bad command-line flag.
    #[error("{flag}: {why}")]
    Flag {
        /// The flag as given.
        flag: String,
        /// Why.
        why: String,
    },
    /// A required setting is missing.
    #[error("missing {what}")]
    Missing {
        /// What.
        what: &'static str,
    },
    /// A parameter cannot take the value given.
    #[error("parameter {param}: {why}")]
    Param {
        /// Which parameter.
        param: String,
        /// Why.
        why: String,
    },
    /// Grid or block outside CUDA's limits.
    #[error("{why}")]
    Dims {
        /// Why.
        why: String,
    },
    /// More memory than can be allocated.
    #[error("the launch needs {bytes} bytes of buffers, more than this machine can allocate")]
    TooLarge {
        /// Bytes asked for.
        bytes: u64,
    },
    /// Something would need more memory than the budget allows (the message names what,
    /// how much, and the limit), or the budget setting itself is wrong.
    #[error("{message}")]
    Budget {
        /// The whole message.
        message: String,
    },
    /// The launch file names a kernel the PTX module does not have.
    #[error("{}: kernel `{name}` is not an entry of {ptx}; its entries (one a line):{entries}", path.display())]
    UnknownKernel {
        /// The launch file.
        path: PathBuf,
        /// The name it gives.
        name: String,
        /// The PTX file.
        ptx: String,
        /// The module's entries, each on a line of its own (`\n  name`).
        entries: String,
    },
}
