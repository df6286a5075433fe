//! Error type of the crate: every variant says what went wrong and where (line, TB, field).

use thiserror::Error;

/// Everything that can go wrong while reading graphs, grouping TBs or writing schedules.
#[derive(Debug, Error)]
pub enum Error {
    /// An edge names a TB outside `0..num_tbs`.
    #[error("edge {index}: TB {tb} is out of range (graph has {num_tbs} TBs)")]
    TbOutOfRange {
        /// Position of the edge in the input list.
        index: usize,
        /// Offending TB id.
        tb: u64,
        /// Number of TBs in the graph.
        num_tbs: u32,
    },
    /// More TBs than a `u32` id can name.
    #[error("graph has {0} TBs; at most {max} are supported", max = u32::MAX)]
    TooManyTbs(u64),
    /// Malformed analysis JSON (`{"graph": {"num_tbs": N, "edges": [[i, j, w], ...]}}`).
    #[error("analysis JSON: {location}: {message}")]
    AnalysisJson {
        /// JSON path of the offending value, e.g. `graph.edges[3][1]`.
        location: String,
        /// What is wrong there.
        message: String,
    },
    /// Malformed METIS `.graph` text.
    #[error("METIS graph, line {line}: {message}")]
    MetisFormat {
        /// 1-based line number in the file.
        line: usize,
        /// What is wrong on that line.
        message: String,
    },
    /// Malformed SciPy `.npz` sparse matrix (what is wrong, naming the array and position).
    #[error("npz graph: {0}")]
    Npz(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A grouping parameter is unusable (zero SMs, zero TB slots, ...).
    #[error("invalid parameter `{name}`: {message}")]
    InvalidParam {
        /// Parameter name.
        name: &'static str,
        /// Why it is invalid.
        message: String,
    },
    /// METIS reported an error that the fallback could not absorb.
    #[error("METIS failed on a graph of {num_tbs} TBs ({parts} parts): {message}")]
    Metis {
        /// Vertices in the (sub)graph handed to METIS.
        num_tbs: usize,
        /// Requested parts.
        parts: usize,
        /// METIS's message.
        message: String,
    },
    /// A schedule breaks an invariant (TB missing, duplicated, unknown format...).
    #[error("schedule: {0}")]
    InvalidSchedule(String),
    /// JSON (de)serialisation failed.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Locality Descriptor clustering input is inconsistent with the graph.
    #[error("LD clustering: {0}")]
    LocalityDescriptor(String),
}

/// Result alias of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
