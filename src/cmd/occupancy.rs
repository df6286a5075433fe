//! TBs per SM for the commands that need them (`analyze --policy`, `partition`, `simulate`):
//! the kernel's resources from the best source at hand (`--registers`, ptxas found through
//! `--ptxas` / `PAVER_PTXAS` / `PATH`, the launch file's recorded ptxas numbers, the liveness
//! estimate), then `gpu::tbs_per_sm`, the one occupancy computation of the project.

use std::path::PathBuf;

use gpu::{GpuConfig, KernelResources, Occupancy};

use crate::launch_args::Loaded;

/// The ptxas numbers a launch file records, as (architecture, registers, shared bytes).
pub fn recorded(launch: &launch::Launch) -> Vec<(String, u32, u64)> {
    launch
        .resources
        .iter()
        .map(|(arch, r)| (arch.clone(), r.registers, r.shared_bytes))
        .collect()
}

/// The resources of `loaded`'s kernel on `gpu`. ptxas runs only when no `--registers`
/// override makes its answer moot; a ptxas that fails is reported on stderr and skipped.
pub fn launch_resources(
    gpu: &GpuConfig,
    loaded: &Loaded,
    registers: Option<u32>,
    ptxas: Option<&PathBuf>,
) -> KernelResources {
    let found = if registers.is_none() {
        gpu::ptxas::find(ptxas.map(PathBuf::as_path))
    } else {
        None
    };
    let rec = recorded(&loaded.launch);
    let inputs = gpu::ResourceInputs {
        module: &loaded.module,
        function: loaded.kernel(),
        ptx_path: loaded.ptx_file.as_deref(),
        ptxas: found.as_deref(),
        recorded: &rec,
        threads_per_tb: u32::try_from(loaded.bound.block.count()).unwrap_or(u32::MAX),
        dynamic_shared_bytes: loaded.bound.dynamic_shared_bytes,
    };
    let (k, warning) = gpu::kernel_resources(gpu, &inputs);
    if let Some(w) = warning {
        eprintln!("warning: {w}");
    }
    k
}

/// `schedule` as JSON with the occupancy it was built for under `occupancy`.
pub fn schedule_json(
    schedule: &graph_partition::Schedule,
    occ: Option<&Occupancy>,
) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(schedule)?;
    if let (Some(o), Some(obj)) = (occ, v.as_object_mut()) {
        obj.insert("occupancy".into(), serde_json::to_value(o)?);
    }
    serde_json::to_string_pretty(&v)
}
