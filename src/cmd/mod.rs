//! One module per subcommand, plus the helpers they share: loading a PTX file (or a CUDA
//! source, compiled first) and choosing a kernel ([`experiment::load`]) with their errors
//! made the CLI's, and finding a GPU configuration.

pub mod analyze;
pub mod compile;
pub mod inspect;
pub mod launch;
pub mod occupancy;
pub mod parse;
pub mod partition;
pub mod report;
pub mod rewrite;
pub mod run;
pub mod simulate;
pub mod sweep;

use std::path::Path;

use ptx_parser::{Function, Module};

use crate::error::CliError;
use crate::launch_args::CudaArgs;

pub use experiment::load::Input;

/// Parses the PTX file at `path`, or compiles the CUDA source at `path` (`.cu`) with NVRTC
/// and `cuda`'s options first ([`experiment::load::read_module`]); NVRTC's warnings go to
/// standard error.
pub fn load_input(path: &Path, cuda: &CudaArgs) -> Result<Input, CliError> {
    let warn = |w: &str| {
        crate::out::eprintln(&format!(
            "paver: warning: NVRTC for {}:\n{w}",
            path.display()
        ))
    };
    Ok(experiment::load::read_module(path, &cuda.options(), &warn)?)
}

/// The module of [`load_input`].
pub fn load_module(path: &Path, cuda: &CudaArgs) -> Result<Module, CliError> {
    load_input(path, cuda).map(|i| i.module)
}

/// The entry named `name` (mangled, demangled or bare C++ name), or the only entry when no
/// name is given ([`experiment::load::select_kernel`]); a wrong name is a usage error.
pub fn select_kernel<'m>(
    module: &'m Module,
    name: Option<&str>,
    path: &Path,
) -> Result<&'m Function, CliError> {
    Ok(experiment::load::select_kernel(module, name, path)?)
}

/// The GPU configuration `--gpu` names: a built-in name (an unknown one is a usage error,
/// status 2) or a TOML file (a file that does not read or validate is a wrong input,
/// status 1).
pub fn lookup_gpu(spec: &str) -> Result<gpu::GpuConfig, CliError> {
    gpu::GpuConfig::lookup(spec).map_err(|e| match e {
        gpu::Error::GpuConfig { .. } if !gpu::GpuConfig::names_file(spec) => {
            CliError::Usage(e.to_string())
        }
        e => CliError::Gpu(e.to_string()),
    })
}
