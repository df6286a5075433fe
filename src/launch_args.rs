//! The launch flags shared by every command that takes a launch (`--launch`, `--grid`,
//! `--block`, `--param`, `--dynamic-shared`), turned into a [`launch::Launch`], and the
//! CUDA flags of every command that reads a `.cu` file, and loading the file they name (a
//! PTX file, or a CUDA source compiled first) with the errors made the CLI's.

use std::path::{Path, PathBuf};

use experiment::load::Input;
use experiment::Workload;
use launch::{BufferSpec, Dim3, Init, Launch, LaunchFlags, ParamArg, ParamSpec};
use ptx_parser::{Function, Module};

use crate::error::CliError;

/// Launch flags (see docs/LAUNCH.md).
#[derive(clap::Args, Debug)]
pub struct LaunchArgs {
    /// Launch description file (paver-launch/1 JSON); flags below override it.
    #[arg(long, value_name = "FILE.json")]
    pub launch: Option<PathBuf>,
    /// Grid in thread blocks: X, XxY or XxYxZ.
    #[arg(long, value_name = "XxYxZ", value_parser = Dim3::parse)]
    pub grid: Option<Dim3>,
    /// Block in threads: X, XxY or XxYxZ.
    #[arg(long, value_name = "XxYxZ", value_parser = Dim3::parse)]
    pub block: Option<Dim3>,
    /// Dynamic shared memory per block, bytes.
    #[arg(long, value_name = "BYTES")]
    pub dynamic_shared: Option<u64>,
    /// Parameter value: INDEX|NAME=NUMBER or INDEX|NAME=buffer:TYPE:LEN:INIT (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    pub params: Vec<ParamSpec>,
}

fn parse_param(s: &str) -> Result<ParamSpec, String> {
    launch::parse_param_flag(s).map_err(|e| e.to_string())
}

impl LaunchArgs {
    /// The launch these flags describe, with the folder relative `file(…)` paths resolve
    /// against (the launch file's folder, else the working directory).
    pub fn build(&self, kernel: Option<String>) -> Result<(Launch, PathBuf), CliError> {
        let (base, dir) = match &self.launch {
            Some(path) => {
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                (Some(Launch::read(path)?), dir)
            }
            None => (None, PathBuf::from(".")),
        };
        // `file(…)` in a flag is relative to the working directory, while the file's own
        // entries are relative to the file: make the flags' paths absolute.
        let cwd = std::env::current_dir().map_err(|e| CliError::io(".", e))?;
        let params = self
            .params
            .iter()
            .cloned()
            .map(|mut p| {
                if let ParamArg::Buffer(BufferSpec {
                    init: Init::File(f),
                    ..
                }) = &mut p.arg
                {
                    *f = cwd.join(&*f);
                }
                p
            })
            .collect();
        let flags = LaunchFlags {
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.dynamic_shared,
            params,
            kernel,
        };
        Ok((flags.apply(base)?, dir))
    }
}

/// The PTX file, kernel and launch of every command that runs or analyses one launch
/// (`analyze`, `run`, `simulate`, `launch`).
#[derive(clap::Args, Debug)]
pub struct KernelLaunchArgs {
    /// PTX file, or CUDA source (.cu) compiled with NVRTC.
    pub file: PathBuf,
    /// Kernel (.entry) name, mangled or demangled (`convolution2D_kernel`); may be omitted
    /// when the file has one entry or the launch names it.
    #[arg(long)]
    pub kernel: Option<String>,
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub cuda: CudaArgs,
}

impl KernelLaunchArgs {
    /// Parses the PTX, chooses the kernel (`--kernel`, else the launch's, else the only
    /// entry) and binds the launch to it, every parameter valued ([`launch::Launch::bind`]).
    pub fn load(&self) -> Result<Workload, CliError> {
        self.load_with(false, analysis::Options::default())
    }

    /// [`KernelLaunchArgs::load`] that leaves by-value parameters without a value open
    /// ([`launch::Launch::bind_open`]): for `paver analyze`'s static analysis, which says
    /// when an open parameter's value is needed after all.
    pub fn load_open(&self) -> Result<Workload, CliError> {
        self.load_with(true, analysis::Options::default())
    }

    /// Loads the launch, by-value parameters without a value left `open` or not, for a
    /// static analysis with `options` ([`experiment::load::bind`]).
    pub fn load_with(&self, open: bool, options: analysis::Options) -> Result<Workload, CliError> {
        let input = load_input(&self.file, &self.cuda)?;
        let (launch, base_dir) = self.launch.build(self.kernel.clone())?;
        let binding = experiment::load::Binding {
            file: &self.file,
            launch,
            base_dir,
            launch_file: self.launch.launch.as_deref(),
            kernel_given: self.kernel.is_some(),
            open,
            options,
        };
        Ok(experiment::load::bind(input, binding)?)
    }
}

/// The NVRTC options of every command that reads a `.cu` file
/// ([`experiment::load::cuda::CudaOptions`]).
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "CUDA sources (.cu inputs)")]
pub struct CudaArgs {
    /// NVRTC library (a file or its folder); else $PAVER_NVRTC, the nvidia-cuda-nvrtc
    /// wheel of the active Python environment, CUDA_HOME/CUDA_PATH, the system's.
    #[arg(long, value_name = "PATH")]
    pub nvrtc: Option<PathBuf>,
    /// Virtual architecture to compile for (`compute_70`, `sm_90` or `90`); default
    /// compute_70 (the corpus's), or the oldest one an NVRTC without it supports.
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    /// Preprocessor macro NAME or NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Folder searched for #include files (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// C++ dialect (`c++17`, `c++20`).
    #[arg(long, value_name = "STD")]
    pub std: Option<String>,
    /// Any other NVRTC option, as NVRTC spells it (`--nvrtc-opt=--use_fast_math`;
    /// repeatable).
    #[arg(long = "nvrtc-opt", value_name = "OPT", allow_hyphen_values = true)]
    pub nvrtc_opt: Vec<String>,
}

impl CudaArgs {
    /// The compiler options these flags give.
    pub fn options(&self) -> experiment::load::cuda::CudaOptions {
        experiment::load::cuda::CudaOptions {
            nvrtc: self.nvrtc.clone(),
            arch: self.arch.clone(),
            define: self.define.clone(),
            include: self.include.clone(),
            std: self.std.clone(),
            nvrtc_opt: self.nvrtc_opt.clone(),
        }
    }
}

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
