//! What stops an experiment, typed; the CLI renders it once (`src/error.rs`).

use std::sync::Arc;

/// Everything that can go wrong between a bound launch and its statistics.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The static analysis cannot run for this kernel and launch (shared by every run of
    /// the launch that needs it: it ran once).
    #[error("{0}")]
    Analysis(Arc<analysis::AnalysisError>),
    /// The setting asked for does not exist or does not fit the GPU (a `KEY=VALUE`
    /// override, a policy name, a placement on a one-module GPU): the caller's mistake.
    #[error("{0}")]
    Invalid(String),
    /// The TBs cannot be grouped.
    #[error("{0}")]
    Partition(#[from] graph_partition::Error),
    /// The occupancy calculator refuses the kernel on this GPU.
    #[error("occupancy: {0}")]
    Occupancy(gpu::Error),
    /// A given schedule was made for another GPU than the one simulated: its groups were
    /// sized for other SMs or TBs per SM.
    #[error(
        "the schedule was made for {what} {schedule} but the GPU simulated ({gpu}) has {simulated}: \
         build it for this GPU (`paver analyze --policy P --gpu G` with the same --set and \
         --tbs-per-sm), or leave --schedule out"
    )]
    ScheduleGpu {
        /// `SMs` or `TBs per SM`.
        what: &'static str,
        /// The schedule's value.
        schedule: u32,
        /// The simulated GPU's value.
        simulated: u32,
        /// The simulated GPU's name.
        gpu: String,
    },
    /// The simulator stopped (set-up, fault, budget), with its location.
    #[error("{0}")]
    Sim(#[from] sim::SimError),
    /// The launch is wrong for this GPU (a TB's shared memory beyond its limit).
    #[error("{0}")]
    Launch(#[from] launch::LaunchError),
    /// The run would need more memory than the budget (`PAVER_MEMORY_LIMIT`).
    #[error("{0}")]
    TooLarge(String),
}

impl Error {
    /// Whether the error is the caller's wrong setting (a command line's usage error)
    /// rather than a wrong or too large input.
    pub fn is_invalid_setting(&self) -> bool {
        matches!(self, Error::Invalid(_))
    }
}

/// The crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
