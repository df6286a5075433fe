//! A launch from files: a PTX file (or a CUDA source, compiled with NVRTC first:
//! [`cuda`]) parsed into a module ([`read_module`]), its kernel chosen by name
//! ([`select_kernel`], mangled or demangled: [`crate::names`]), and a launch bound to it
//! ([`bind`]): a [`Workload`]. The CLI's `FILE --kernel --launch` flags and `paver sweep`'s
//! plans ([`open`]) both load this way.

use std::path::{Path, PathBuf};

use launch::{Launch, LaunchFlags};
use ptx_parser::{Function, Module};

use crate::Workload;
use cuda::CudaOptions;

pub mod cuda;

/// Largest PTX file read (1 GiB; the largest real modules are a few hundred MB).
pub const MAX_PTX_BYTES: u64 = 1 << 30;

/// What stops a launch from loading.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The PTX does not parse (each error already carries file:line:col and the line).
    #[error("{0}")]
    Ptx(#[from] ptx_parser::ParseErrors),
    /// An input cannot be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS (or the size check) said.
        message: String,
    },
    /// A CUDA source cannot be compiled: NVRTC is missing, or the source has errors (its
    /// log names `file(line)` for each).
    #[error("{}: {error}", path.display())]
    Nvrtc {
        /// The `.cu` file.
        path: PathBuf,
        /// What NVRTC said, or why it cannot be loaded.
        error: native::nvrtc::NvrtcError,
    },
    /// No entry of the module has the name asked for.
    #[error("{}: no kernel named `{name}`; its entries (one a line, mangled and demangled):{entries}", path.display())]
    NoKernel {
        /// The PTX or CUDA file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The module's entries, each on a line of its own.
        entries: String,
    },
    /// The name asked for matches several entries (overloads of one C++ name).
    #[error("{}: `{name}` names several kernels, give the mangled name of one:{entries}", path.display())]
    AmbiguousKernel {
        /// The PTX or CUDA file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The entries it matches, each on a line of its own.
        entries: String,
    },
    /// The module has no `.entry`.
    #[error("{}: the module has no .entry", path.display())]
    NoEntry {
        /// The PTX or CUDA file.
        path: PathBuf,
    },
    /// No name was given and the module has several entries.
    #[error("{}: several kernels, choose one with --kernel; its entries (one a line, mangled and demangled):{entries}", path.display())]
    SeveralKernels {
        /// The PTX or CUDA file.
        path: PathBuf,
        /// The module's entries, each on a line of its own.
        entries: String,
    },
    /// The launch description is wrong, or does not bind to the kernel.
    #[error("{0}")]
    Launch(#[from] launch::LaunchError),
    /// The block does not fit the kernel's `.maxntid` / `.reqntid`.
    #[error("{0}")]
    Sim(#[from] sim::SimError),
}

impl LoadError {
    /// Whether the kernel could not be chosen by the name given (or without one): the
    /// caller's wrong `--kernel`, where the other errors are wrong inputs.
    pub fn is_kernel_choice(&self) -> bool {
        matches!(
            self,
            LoadError::NoKernel { .. }
                | LoadError::AmbiguousKernel { .. }
                | LoadError::NoEntry { .. }
                | LoadError::SeveralKernels { .. }
        )
    }
}

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
/// NVRTC's warnings, when it has any, go to `warn`.
pub fn read_module(
    path: &Path,
    cuda: &CudaOptions,
    warn: &dyn Fn(&str),
) -> Result<Input, LoadError> {
    if crate::load::cuda::is_cuda(path) {
        let ptx = cuda.compile(path)?;
        if !ptx.warnings.is_empty() {
            warn(&ptx.warnings);
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
        ::launch::budget::read_input(path, MAX_PTX_BYTES).map_err(|message| LoadError::Io {
            path: path.to_path_buf(),
            message,
        })?;
    let src = String::from_utf8_lossy(&bytes);
    Ok(Input {
        module: ptx_parser::parse_named(&src, Some(path.to_path_buf()))?,
        ptx_file: Some(path.to_path_buf()),
    })
}

/// The entry named `name` (mangled, demangled or bare C++ name: [`crate::names::matches`]),
/// or the only entry when no name is given; `path` names the module in errors.
pub fn select_kernel<'m>(
    module: &'m Module,
    name: Option<&str>,
    path: &Path,
) -> Result<&'m Function, LoadError> {
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
                [] => Err(LoadError::NoKernel {
                    path: path.to_path_buf(),
                    name: n.to_string(),
                    entries: names(),
                }),
                several => Err(LoadError::AmbiguousKernel {
                    path: path.to_path_buf(),
                    name: n.to_string(),
                    entries: several
                        .iter()
                        .map(|f| match crate::names::demangle(&f.name) {
                            Some(d) => format!("\n  {} ({d})", f.name),
                            None => format!("\n  {}", f.name),
                        })
                        .collect::<String>(),
                }),
            }
        }
        None => {
            let mut entries = module.entries();
            match (entries.next(), entries.next()) {
                (Some(f), None) => Ok(f),
                (None, _) => Err(LoadError::NoEntry {
                    path: path.to_path_buf(),
                }),
                (Some(_), Some(_)) => Err(LoadError::SeveralKernels {
                    path: path.to_path_buf(),
                    entries: names(),
                }),
            }
        }
    }
}

/// How a launch binds to a module's kernel ([`bind`]).
pub struct Binding<'a> {
    /// The PTX or CUDA file the module came from (for messages).
    pub file: &'a Path,
    /// The launch, its `kernel` naming the entry (or `None`: the module's only one).
    pub launch: Launch,
    /// The folder relative `file(…)` paths of the launch resolve against.
    pub base_dir: PathBuf,
    /// The launch file, when the launch came from one (for messages).
    pub launch_file: Option<&'a Path>,
    /// Whether the caller named the kernel (`--kernel`, a plan's `kernel`) rather than the
    /// launch file: a wrong name from the launch file is a wrong input, not a wrong setting.
    pub kernel_given: bool,
    /// Leave by-value parameters without a value open ([`launch::Launch::bind_open`]).
    pub open: bool,
    /// The static analysis's options.
    pub options: analysis::Options,
}

/// Chooses the kernel of `input` the launch names and binds the launch to it, every
/// parameter valued ([`launch::Launch::bind`]) unless `open`; device functions the kernel
/// calls are inlined into it.
pub fn bind(input: Input, b: Binding<'_>) -> Result<Workload, LoadError> {
    let Input { module, ptx_file } = input;
    let launch = b.launch;
    let f = match select_kernel(&module, launch.kernel.as_deref(), b.file) {
        // A name from the launch file is a wrong input (an unknown kernel of the launch),
        // not a wrong setting.
        Err(e) if e.is_kernel_choice() && !b.kernel_given && launch.kernel.is_some() => {
            return Err(launch::LaunchError::UnknownKernel {
                path: b.launch_file.map(Path::to_path_buf).unwrap_or_default(),
                name: launch::elide(launch.kernel.as_deref().unwrap_or(""), 80),
                ptx: b.file.display().to_string(),
                entries: module
                    .entries()
                    .map(|f| format!("\n  {}", f.name))
                    .collect(),
            }
            .into())
        }
        r => r?,
    };
    let sigs = launch::param_sigs(f);
    let bound = if b.open {
        launch.bind_open(&f.name, &sigs, &b.base_dir)?
    } else {
        launch.bind(&f.name, &sigs, &b.base_dir)?
    }
    .with_module(&module);
    let block = bound.block;
    sim::interp::tb::check_block_attributes(
        &f.name,
        f.attributes.maxntid.as_deref(),
        f.attributes.reqntid.as_deref(),
        [block.x, block.y, block.z].map(|d| u32::try_from(d).unwrap_or(u32::MAX)),
    )?;
    let kernel = module
        .functions
        .iter()
        .position(|g| std::ptr::eq(g, f))
        .unwrap_or_default();
    // Calls to device functions become part of the kernel's body, for the analysis
    // and the interpreter alike (`ptx_parser::calls`).
    let mut module = module;
    if ptx_parser::calls::has_inlinable_calls(&module, &module.functions[kernel]) {
        module.functions[kernel] =
            ptx_parser::calls::inline_calls(&module, &module.functions[kernel]);
    }
    Ok(Workload::new(
        module, kernel, ptx_file, launch, bound, b.options,
    ))
}

/// The launch of the PTX (or CUDA) file `file` that the launch file `launch_file`
/// describes, on the kernel `kernel` names (else the launch file's, else the module's only
/// one), every parameter valued: what `paver FILE --launch FILE.json [--kernel K]` loads.
/// Relative `file(…)` paths of the launch resolve against its folder; NVRTC's warnings go
/// to `warn`.
pub fn open(
    file: &Path,
    launch_file: &Path,
    kernel: Option<String>,
    options: analysis::Options,
    warn: &dyn Fn(&str),
) -> Result<Workload, LoadError> {
    let input = read_module(file, &CudaOptions::default(), warn)?;
    let base_dir = launch_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let kernel_given = kernel.is_some();
    let flags = LaunchFlags {
        kernel,
        ..LaunchFlags::default()
    };
    let launch = flags.apply(Some(Launch::read(launch_file)?))?;
    bind(
        input,
        Binding {
            file,
            launch,
            base_dir,
            launch_file: Some(launch_file),
            kernel_given,
            open: false,
            options,
        },
    )
}
