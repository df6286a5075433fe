//! Error type of the crate: every variant says what went wrong and where (file, GPU, field).

use thiserror::Error;

/// Everything that can go wrong while reading GPU configurations or computing occupancy.
#[derive(Debug, Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A GPU configuration file is malformed or unknown.
    #[error("GPU config {name}: {message}")]
    GpuConfig {
        /// Config name or path.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A thread block cannot be resident on an SM at all.
    #[error("a TB does not fit on one SM of {gpu}: {reason}")]
    DoesNotFit {
        /// GPU config name.
        gpu: String,
        /// The resource that is exceeded, with numbers.
        reason: String,
    },
    /// `--tbs-per-sm` or `--registers` is unusable.
    #[error("{0}")]
    InvalidOverride(String),
    /// ptxas ran but failed, or its output could not be read.
    #[error("ptxas {path}: {message}")]
    Ptxas {
        /// The ptxas executable.
        path: String,
        /// What went wrong (its stderr, or the unreadable output).
        message: String,
    },
}

/// Result alias of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
