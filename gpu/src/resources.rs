//! A kernel's resources for the occupancy calculator, from the best source at hand: `ptxas`
//! run on the PTX when one can be found, else the ptxas numbers a launch file records,
//! else the liveness estimate ([`crate::estimate`]) and the declared `.shared` variables.

use crate::config::GpuConfig;
use crate::estimate::estimate_registers;
use crate::occupancy::{KernelResources, RegisterSource, Registers};
use ptx_parser::{Function, Module};
use std::path::Path;

/// The `sm_XX` number of an architecture family (`volta` -> 70), `None` when unknown.
pub fn compute_capability(arch: &str) -> Option<u32> {
    Some(match arch.to_ascii_lowercase().as_str() {
        "fermi" => 20,
        "kepler" => 35,
        "maxwell" => 52,
        "pascal" => 61,
        "volta" => 70,
        "turing" => 75,
        "ampere" => 80,
        "ada" => 89,
        "hopper" => 90,
        "blackwell" => 100,
        _ => return None,
    })
}

/// The `sm_XX` number of the module's `.target` (0 when it names none).
pub fn ptx_target(module: &Module) -> u32 {
    module
        .target
        .iter()
        .filter_map(|t| t.strip_prefix("sm_"))
        .filter_map(|t| {
            t.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

/// Of the recorded architectures (`sm_70`, `sm_90`), the one standing for `gpu`: the
/// nearest at or above its own, else the highest below.
pub fn recorded_arch<'a>(gpu: &GpuConfig, keys: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let cc = compute_capability(&gpu.arch).unwrap_or(70);
    let mut ks: Vec<(u32, &str)> = keys
        .filter_map(|k| Some((k.strip_prefix("sm_")?.parse().ok()?, k)))
        .collect();
    ks.sort_unstable();
    ks.iter()
        .find(|(n, _)| *n >= cc)
        .or(ks.last())
        .map(|(_, k)| *k)
}

/// Bytes of the `.shared` variables the kernel declares (module scope and its own).
pub fn declared_shared_bytes(module: &Module, f: &Function) -> u64 {
    module
        .globals
        .iter()
        .chain(f.local_vars.iter().map(|l| &l.var))
        .filter(|g| g.space.is_shared())
        .filter_map(|g| g.size_bytes())
        .sum()
}

/// What the resources of one kernel launch are computed from.
pub struct ResourceInputs<'a> {
    /// The PTX module.
    pub module: &'a Module,
    /// The kernel.
    pub function: &'a Function,
    /// The PTX file (for ptxas).
    pub ptx_path: Option<&'a Path>,
    /// The ptxas to run, if one was found.
    pub ptxas: Option<&'a Path>,
    /// ptxas numbers recorded in the launch file: (architecture, registers, shared bytes).
    pub recorded: &'a [(String, u32, u64)],
    /// Threads per TB.
    pub threads_per_tb: u32,
    /// The launch's dynamic shared memory per TB.
    pub dynamic_shared_bytes: u64,
}

/// The kernel's resources on `gpu`, with a warning when ptxas was found but failed.
pub fn kernel_resources(
    gpu: &GpuConfig,
    i: &ResourceInputs<'_>,
) -> (KernelResources, Option<String>) {
    let mut warning = None;
    let cc = compute_capability(&gpu.arch).unwrap_or(70);
    if let (Some(ptxas), Some(ptx)) = (i.ptxas, i.ptx_path) {
        match crate::ptxas::run(ptxas, ptx, &i.function.name, cc, ptx_target(i.module)) {
            Ok((r, arch)) => {
                let source = RegisterSource::Ptxas {
                    arch: format!("sm_{arch}"),
                    requested: (arch != cc).then(|| format!("sm_{cc}")),
                };
                return (
                    KernelResources {
                        threads_per_tb: i.threads_per_tb,
                        registers: Registers {
                            count: r.registers,
                            source,
                        },
                        static_shared_bytes: r.shared_bytes,
                        dynamic_shared_bytes: i.dynamic_shared_bytes,
                    },
                    None,
                );
            }
            Err(e) => warning = Some(format!("{e}; using the next source")),
        }
    }
    if let Some(arch) = recorded_arch(gpu, i.recorded.iter().map(|r| r.0.as_str())) {
        if let Some((_, regs, shared)) = i.recorded.iter().find(|r| r.0 == arch) {
            return (
                KernelResources {
                    threads_per_tb: i.threads_per_tb,
                    registers: Registers {
                        count: *regs,
                        source: RegisterSource::LaunchFile {
                            arch: arch.to_string(),
                        },
                    },
                    static_shared_bytes: *shared,
                    dynamic_shared_bytes: i.dynamic_shared_bytes,
                },
                warning,
            );
        }
    }
    let e = estimate_registers(i.module, i.function);
    (
        KernelResources {
            threads_per_tb: i.threads_per_tb,
            registers: Registers {
                count: e.registers,
                source: RegisterSource::Estimate,
            },
            static_shared_bytes: declared_shared_bytes(i.module, i.function),
            dynamic_shared_bytes: i.dynamic_shared_bytes,
        },
        warning,
    )
}
