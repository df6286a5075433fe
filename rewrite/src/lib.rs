//! PTX rewriting for real GPUs: `paver rewrite`.
//!
//! A locality-aware TB scheduler (PAVER) needs hardware no GPU has. Software CTA
//! clustering (Li et al., ASPLOS 2017) gets the same effect on today's GPUs by launching
//! *persistent workers*: a few CTAs per SM that take logical TB ids from per-SM work lists
//! in global memory and run the original body once per id. This crate does both halves:
//!
//! - [`WorkTable`]: the work lists as the rewritten kernel reads them (one flat array of
//!   little-endian `u32` words, passed as an extra kernel parameter), built from a
//!   schedule's TB groups or in plain TB order (`--identity`).
//! - [`persistent`]: the kernel rewritten into the worker loop (see the module's
//!   documentation for the generated code and its barrier protocol).
//!
//! The crate works on the parsed IR and prints PTX; it knows nothing of graphs, GPUs or
//! launches, which the CLI brings together.

pub mod persistent;
pub mod table;

pub use persistent::{persistent, RewriteError, Rewritten, GRID_PARAMS, TABLE_PARAM};
pub use table::WorkTable;
