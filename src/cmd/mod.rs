//! One module per subcommand, plus the helpers they share: loading a PTX file (or a CUDA
//! source, compiled first), choosing a kernel, and describing its parameters to the launch
//! binder.

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

use std::path::{Path, PathBuf};

use ptx_parser::{Function, Module};

use crate::cuda::CudaArgs;
use crate::error::CliError;

/// Largest PTX file read (1 GiB; the largest real modules are a few hundred MB).
pub const MAX_PTX_BYTES: u64 = 1 << 30;

/// A parsed module and the file that holds its PTX.
pub struct Input {
    /// The module.
    pub module: Module,
    /// The PTX file: the input itself, or for a CUDA source the cached PTX (absent when
    /// the cache is off), which ptxas reads for the kernel's resources.
    pub ptx_file: Option<PathBuf>,
}

/// Parses the PTX file at `path` (a regular file or a pipe of at most [`MAX_PTX_BYTES`]),
/// or compiles the CUDA source at `path` (`.cu`) with NVRTC and `cuda`'s options first;
/// NVRTC's warnings go to standard error.
pub fn load_input(path: &Path, cuda: &CudaArgs) -> Result<Input, CliError> {
    if crate::cuda::is_cuda(path) {
        let ptx = cuda.compile(path)?;
        if !ptx.warnings.is_empty() {
            crate::out::eprintln(&format!(
                "paver: warning: NVRTC for {}:\n{}",
                path.display(),
                ptx.warnings
            ));
        }
        // Parse errors point into the cached PTX, a file that can be opened; without the
        // cache, into the source's PTX by name.
        let name = ptx
            .file
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{} (PTX from NVRTC)", path.display())));
        let module = ptx_parser::parse_named(&ptx.text, Some(name))?;
        return Ok(Input {
            module,
            ptx_file: ptx.file,
        });
    }
    let bytes =
        ::launch::budget::read_input(path, MAX_PTX_BYTES).map_err(|message| CliError::Io {
            path: path.to_path_buf(),
            message,
        })?;
    let src = String::from_utf8_lossy(&bytes);
    Ok(Input {
        module: ptx_parser::parse_named(&src, Some(path.to_path_buf()))?,
        ptx_file: Some(path.to_path_buf()),
    })
}

/// The module of [`load_input`].
pub fn load_module(path: &Path, cuda: &CudaArgs) -> Result<Module, CliError> {
    load_input(path, cuda).map(|i| i.module)
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
            .map(|n| format!("\n  {n}"))
            .collect::<String>()
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
                    "{}: no kernel named `{n}`; its entries (one a line, mangled and demangled):{}",
                    path.display(),
                    names()
                ))),
                several => Err(CliError::Usage(format!(
                    "{}: `{n}` names several kernels, give the mangled name of one:{}",
                    path.display(),
                    several
                        .iter()
                        .map(|f| match crate::names::demangle(&f.name) {
                            Some(d) => format!("\n  {} ({d})", f.name),
                            None => format!("\n  {}", f.name),
                        })
                        .collect::<String>()
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
                    "{}: several kernels, choose one with --kernel; its entries (one a line, mangled and demangled):{}",
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
