//! End-to-end tests of the `paver` binary and of the repository's data files, in one
//! integration test binary (one link step for all of them).

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod analyze;
mod cli;
mod common;
mod consumers;
mod conventions;
mod cuda;
mod dp_metrics;
mod evidence;
mod golden;
mod launch_files;
mod ld_runtime;
mod occupancy;
mod oracle;
mod partition;
mod rewrite;
mod robust_io;
mod robust_ptx;
mod run;
mod simulate;
mod sweep;
