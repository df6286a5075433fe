//! Native libraries that paver uses when a machine has them, loaded at run time with
//! `dlopen`, never linked: building paver needs nothing but the Rust toolchain.
//!
//! - [`z3`]: the z3 SMT solver, which decides the Locality Descriptors' existence questions
//!   that the fast tests leave open (without it, enumeration decides them).
//! - [`nvrtc`]: NVIDIA's runtime compiler, which turns CUDA sources into the PTX every
//!   command reads.
//!
//! Each library is found by [`locate`]: an explicit path (a flag), an environment variable,
//! the wheel of the active Python environment (`z3-solver`, `nvidia-cuda-nvrtc-cu12`),
//! the toolkit folders (`CUDA_HOME`), then the system loader's own search. This is the only
//! crate of the workspace that contains `unsafe` code: the calls through the loaded function
//! pointers. What it exports is safe.

pub mod locate;
pub mod nvrtc;
pub mod z3;

pub use locate::{LoadError, Located, Origin};
