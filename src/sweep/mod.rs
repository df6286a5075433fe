//! Experiments across kernels x GPUs x policies (`paver sweep`, `paver report`): plans, the
//! runner, the per-run records and the tables made from them. See docs/SWEEP.md.

pub mod exec;
pub mod figures;
pub mod heatmap;
pub mod plan;
pub mod record;
pub mod report;
