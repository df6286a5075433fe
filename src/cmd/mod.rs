//! One module per subcommand, plus the helpers they share: finding a GPU configuration.
//! Loading a PTX file (or a CUDA source) and choosing a kernel is [`crate::launch_args`].

pub mod analyze;
pub mod compile;
pub mod dp_trace;
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

use crate::error::CliError;

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
