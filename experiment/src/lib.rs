//! One kernel launch on one configured GPU, computed once.
//!
//! A [`Workload`] is a bound launch of one kernel: its static analysis, locality graph and
//! Locality Descriptors are made on first use and shared by everything that asks after,
//! from any thread (a sweep runs many GPUs and policies on one launch). An [`Experiment`]
//! is a workload on one GPU with every override applied: the kernel's resources (ptxas at
//! most once) and its occupancy are computed when it is made, and the TB groups
//! ([`Experiment::schedule`]), the Locality Descriptor hints, a NUMA placement and the
//! simulation are its methods, so partitioning and simulation always see the same GPU.
//!
//! A workload comes from files through [`load`]: a PTX file (or a CUDA source compiled with
//! NVRTC, [`load::cuda`]), its kernel chosen by name ([`names`]) and a launch bound to it.
//! [`output`] writes result files atomically.
//!
//! Every command of the `paver` binary and the sweep go through this crate; the binary
//! parses arguments and prints.

mod error;
mod experiment;
pub mod groups;
mod hints;
pub mod load;
pub mod names;
pub mod output;
mod placement;
pub mod variants;
mod workload;

pub use error::{Error, Result};
pub use experiment::{recorded, timing_config, Experiment, GpuSetup, Run};
pub use groups::GroupRequest;
pub use variants::Variant;
pub use workload::{Analysed, Counts, Workload};
