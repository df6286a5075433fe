//! Experiments across kernels x GPUs x policies (`paver sweep`, `paver report`): plans, the
//! runner, the per-run records and the tables made from them. See docs/SWEEP.md.
//!
//! Data flows one way. A [`plan`] (TOML) expands into runs, each with a content key; a
//! sweep [`folder`] says which of them are already recorded and which are left; [`exec`]
//! loads and analyses each launch once (through the `experiment` crate), simulates every
//! run of it and makes one [`record`] per run (`runs.jsonl`, `runs.csv`) and one [`heatmap`]
//! per launch. `paver report` [`merge`]s sweep folders (shards, resumed sweeps) and writes
//! the [`report`]'s tables and their [`figures`].
//!
//! Errors are typed ([`Error`]); the CLI renders them once.
#![warn(missing_docs)]

mod error;
pub mod exec;
pub mod figures;
pub mod folder;
pub mod heatmap;
pub mod ledger;
pub mod merge;
pub mod plan;
pub mod record;
pub mod report;

pub use error::Error;

/// paver's version, in every record and run key: the workspace's, which this crate shares
/// with the binary.
pub const PAVER_VERSION: &str = env!("CARGO_PKG_VERSION");
