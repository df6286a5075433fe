//! The functional PTX interpreter.
//!
//! Data flow: [`Program::new`] decodes a kernel of the IR once ([`decode`], with memory
//! [`layout`] and SIMT reconvergence points from [`simt`]); [`run`] builds global memory
//! from a bound launch ([`memory`]) and executes TB after TB ([`runner`]); a TB in execution
//! is a [`TbExec`] ([`tb`], named barriers in [`barrier`]), whose [`Warp`]s [`Warp::step`] one warp instruction at a time
//! ([`warp`], per-lane semantics in [`exec`]); memory accesses go through [`GlobalMemory`] and are reported to a
//! [`MemObserver`] ([`observer`]). Kernels that launch kernels: [`device_runtime`] (the order
//! in which child grids run, and why it is one CUDA allows).

pub mod barrier;
pub mod decode;
pub mod device_runtime;
pub mod exec;
pub mod layout;
pub mod memory;
pub mod observer;
pub(crate) mod ops;
pub mod runner;
pub mod simt;
pub mod tb;
pub mod warp;

pub use barrier::BarrierArrival;
pub use decode::Program;
pub use layout::{LOCAL_WINDOW, SHARED_WINDOW};
pub use memory::{GlobalMemory, Globals, MemFault, Region};
pub use observer::{
    AccessKind, FootprintCollector, GridStart, Launcher, MemAccess, MemObserver, NoObserver,
};
pub use ops::Space;
pub use runner::{run, MemoryModel, RunOptions, RunResult, RunStats};
pub use tb::{param_block, Geometry, Step, TbExec};
pub use warp::{Control, TbCtx, Warp};
