//! `paver compile FILE.cu`: the PTX NVRTC makes of a CUDA source, the same that every
//! other command reads when given the `.cu` file (see `experiment::load::cuda`).

use std::path::PathBuf;

use crate::error::CliError;
use crate::launch_args::CudaArgs;

/// Examples shown by `paver compile --help`.
pub const EXAMPLES: &str = "Examples:
  paver compile kernels/mm_naive/mm_naive.cu -o mm_naive.ptx
  paver compile kernels/conv2d/conv2d.cu --arch compute_90 --nvrtc-opt=--generate-line-info
  paver compile my.cu -D TILE=32 -I include --std c++17 | paver parse /dev/stdin
  PAVER_NVRTC=/usr/local/cuda/lib64/libnvrtc.so paver compile my.cu --verbose

NVRTC is found through --nvrtc, $PAVER_NVRTC, the nvidia-cuda-nvrtc-cu12 wheel of the
active Python environment, CUDA_HOME/CUDA_PATH, then the system loader. The PTX is cached
in $PAVER_CACHE/ptx (else ~/.cache/paver/ptx; PAVER_CACHE=off: no cache).";

/// Arguments of `paver compile`.
#[derive(clap::Args)]
pub struct Args {
    /// CUDA source (.cu).
    file: PathBuf,
    /// Write the PTX to this file instead of standard output.
    #[arg(short, long, value_name = "FILE.ptx")]
    output: Option<PathBuf>,
    /// Say on standard error which NVRTC compiled it and where the cached PTX is.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    cuda: CudaArgs,
}

/// Runs `paver compile`.
pub fn run(args: Args) -> Result<(), CliError> {
    if !experiment::load::cuda::is_cuda(&args.file) {
        return Err(CliError::Usage(format!(
            "{}: not a CUDA source (.cu); PTX files need no compiling",
            args.file.display()
        )));
    }
    let ptx = args.cuda.options().compile(&args.file)?;
    if !ptx.warnings.is_empty() {
        crate::out::eprintln(&format!(
            "paver: warning: NVRTC for {}:\n{}",
            args.file.display(),
            ptx.warnings
        ));
    }
    if args.verbose {
        let cache = match (&ptx.file, ptx.cached) {
            (Some(f), true) => format!("from the cache, {}", f.display()),
            (Some(f), false) => format!("compiled, cached in {}", f.display()),
            (None, _) => "compiled, not cached".to_string(),
        };
        crate::out::eprintln(&format!("paver: {}: {cache}", ptx.nvrtc));
    }
    match &args.output {
        Some(path) => Ok(crate::error::write_atomic(path, &ptx.text)?),
        None => crate::out::print(&ptx.text),
    }
}
