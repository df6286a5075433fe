//! One module per subcommand, plus the helpers they share: loading a PTX file, choosing a
//! kernel, and describing its parameters to the launch binder.

pub mod analyze;
pub mod inspect;
pub mod launch;
pub mod occupancy;
pub mod parse;
pub mod partition;
pub mod report;
pub mod run;
pub mod simulate;
pub mod sweep;

use std::path::Path;

use ptx_parser::{Function, Module};

use crate::error::CliError;

/// Largest PTX file read (1 GiB; the largest real modules are a few hundred MB).
pub const MAX_PTX_BYTES: u64 = 1 << 30;

/// Parses the PTX file at `path` (a regular file or a pipe of at most [`MAX_PTX_BYTES`]).
pub fn load_module(path: &Path) -> Result<Module, CliError> {
    let bytes =
        ::launch::budget::read_input(path, MAX_PTX_BYTES).map_err(|message| CliError::Io {
            path: path.to_path_buf(),
            message,
        })?;
    let src = String::from_utf8_lossy(&bytes);
    Ok(ptx_parser::parse_named(&src, Some(path.to_path_buf()))?)
}

/// The entry named `name` (mangled, demangled or bare C++ name: [`crate::names::matches`]),
/// or the only entry when no name is given.
pub fn select_kernel<'m>(
    module: &'m Module,
    name: Option<&str>,
    path: &Path,
) -> Result<&'m Function, CliError> {
    let names = || {
        module
            .entries()
            .map(|f| match crate::names::demangle(&f.name) {
                Some(d) => format!("{} ({d})", f.name),
                None => f.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(n) => {
            if let Some(f) = module.kernel(n).filter(|f| f.is_entry) {
                return Ok(f);
            }
            let found: Vec<&Function> = module
                .entries()
                .filter(|f| crate::names::matches(&f.name, n))
                .collect();
            match found.as_slice() {
                [f] => Ok(f),
                [] => Err(CliError::Usage(format!(
                    "{}: no kernel named `{n}` (entries: {})",
                    path.display(),
                    names()
                ))),
                several => Err(CliError::Usage(format!(
                    "{}: `{n}` names several kernels, give the mangled name: {}",
                    path.display(),
                    several
                        .iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            }
        }
        None => {
            let mut entries = module.entries();
            match (entries.next(), entries.next()) {
                (Some(f), None) => Ok(f),
                (None, _) => Err(CliError::Usage(format!(
                    "{}: the module has no .entry",
                    path.display()
                ))),
                (Some(_), Some(_)) => Err(CliError::Usage(format!(
                    "{}: several kernels, choose one with --kernel (entries: {})",
                    path.display(),
                    names()
                ))),
            }
        }
    }
}

pub use ::launch::param_sigs;

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
