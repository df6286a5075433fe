//! The GPU model of paver: GPU configurations ([`config`], the `configs/gpus/*.toml` files
//! compiled in by name) and the occupancy calculator ([`occupancy`]): how many TBs of a
//! kernel are resident on one SM at once. The CLI and the simulator share them, so a fact
//! such as "TBs per SM for this kernel on this GPU" is computed in one place.

#![warn(missing_docs)]

pub mod config;
pub mod dram;
pub mod error;
pub mod estimate;
pub mod occupancy;
pub mod ptxas;
pub mod resources;
pub mod timing;

pub use config::GpuConfig;
pub use error::{Error, Result};
pub use occupancy::{
    occupancy, tbs_per_sm, KernelResources, Limiter, Occupancy, Overrides, RegisterSource,
    Registers,
};
pub use resources::{kernel_resources, ResourceInputs};
