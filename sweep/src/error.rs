//! What stops a sweep or a report, typed; the CLI renders it once (`src/error.rs`). A run
//! that fails does not stop a sweep: it becomes a record with its message.

use std::path::PathBuf;

use crate::figures::FigureError;
use crate::plan::PlanError;
use crate::record::ReadError;

/// Everything that can stop `paver sweep` or `paver report`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The plan does not read, parse or validate (with the plan's path, and the line for
    /// TOML errors).
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// A `runs.jsonl` cannot be read, or a line of it (not the last) is not a record.
    #[error("{0}")]
    Records(#[from] ReadError),
    /// A report input is neither a sweep folder nor a `runs.jsonl`.
    #[error("{}: no runs.jsonl (give a `paver sweep` output folder or a runs.jsonl file)", path.display())]
    NoRecords {
        /// The input as given.
        path: PathBuf,
    },
    /// A sweep folder's `sweep.json` cannot be read or is not JSON.
    #[error("{}: {message}", path.display())]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// An output folder cannot be made.
    #[error("{}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A finished run's record cannot be appended to the sweep's `runs.jsonl` (the runs
    /// went on; their records are in the ones written at the end, if those could be).
    #[error("{}: {source}", path.display())]
    Append {
        /// The `runs.jsonl`.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The worker threads cannot be started.
    #[error("worker threads: {0}")]
    Workers(#[from] rayon::ThreadPoolBuildError),
    /// An output file cannot be written.
    #[error("{0}")]
    Write(#[from] experiment::output::WriteError),
    /// A figure cannot be drawn.
    #[error("{0}")]
    Figure(#[from] FigureError),
}
