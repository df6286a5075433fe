//! Functional PTX execution (and, later, the cycle-level GPU timing model, issue 6).
//!
//! The interpreter ([`interp`]) runs a kernel of the `ptx-parser` IR over a launch bound by
//! the `launch` crate: decode once ([`Program`]), build global memory from the launch's
//! buffers, run every TB (warps of 32 lanes, SIMT reconvergence at immediate
//! post-dominators, barriers, shared/local/param/global spaces, atomics, shuffles, votes), and
//! return the buffers after the run with instruction counts ([`RunResult`]).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let module = ptx_parser::parse_file("kernels/mm_naive/mm_naive.compute_70.ptx".as_ref())?;
//! let kernel = module.kernel("mm_naive").ok_or("no kernel")?;
//! let launch = launch::Launch::read("kernels/mm_naive/small.json".as_ref())?;
//! let bound = launch.bind("mm_naive", &sim::param_sigs(kernel), "kernels/mm_naive".as_ref())?;
//! let prog = sim::Program::new(&module, "mm_naive")?;
//! let out = sim::run(&prog, &bound, &sim::RunOptions::default(), &mut sim::NoObserver)?;
//! let c: &[u8] = out.buffer(2).ok_or("no C")?;
//! # let _ = c; Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod error;
pub mod interp;
pub mod needs;
pub mod npy;
pub mod timing;

pub use error::{Loc, SimError};
pub use interp::{
    run, AccessKind, FootprintCollector, Globals, GridStart, Launcher, MemAccess, MemObserver,
    MemoryModel, NoObserver, Program, RunOptions, RunResult, RunStats, Space,
};
pub use needs::MemoryNeeds;

pub use launch::param_sigs;
