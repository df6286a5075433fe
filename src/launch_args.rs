//! The launch flags shared by every command that takes a launch (`--launch`, `--grid`,
//! `--block`, `--param`, `--dynamic-shared`), turned into a [`launch::Launch`].

use std::path::{Path, PathBuf};

use experiment::Workload;
use launch::{BufferSpec, Dim3, Init, Launch, LaunchFlags, ParamArg, ParamSpec};

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
    pub cuda: crate::cuda::CudaArgs,
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
    /// static analysis with `options`.
    pub fn load_with(&self, open: bool, options: analysis::Options) -> Result<Workload, CliError> {
        let crate::cmd::Input { module, ptx_file } =
            crate::cmd::load_input(&self.file, &self.cuda)?;
        let (launch, base_dir) = self.launch.build(self.kernel.clone())?;
        let f = match crate::cmd::select_kernel(&module, launch.kernel.as_deref(), &self.file) {
            // A name from the launch file is a wrong input (status 1), not a wrong command
            // line (status 2, kept for `--kernel`).
            Err(CliError::Usage(_)) if self.kernel.is_none() && launch.kernel.is_some() => {
                return Err(launch::LaunchError::UnknownKernel {
                    path: self.launch.launch.clone().unwrap_or_default(),
                    name: launch::elide(launch.kernel.as_deref().unwrap_or(""), 80),
                    ptx: self.file.display().to_string(),
                    entries: module
                        .entries()
                        .map(|f| format!("\n  {}", f.name))
                        .collect(),
                }
                .into())
            }
            r => r?,
        };
        let sigs = crate::cmd::param_sigs(f);
        let bound = if open {
            launch.bind_open(&f.name, &sigs, &base_dir)?
        } else {
            launch.bind(&f.name, &sigs, &base_dir)?
        }
        .with_module(&module);
        let b = bound.block;
        sim::interp::tb::check_block_attributes(
            &f.name,
            f.attributes.maxntid.as_deref(),
            f.attributes.reqntid.as_deref(),
            [b.x, b.y, b.z].map(|d| u32::try_from(d).unwrap_or(u32::MAX)),
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
            module, kernel, ptx_file, launch, bound, options,
        ))
    }
}
