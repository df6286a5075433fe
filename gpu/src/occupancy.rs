//! Occupancy: how many TBs of a kernel fit on one SM at once (x in PAVER §4), as the CUDA
//! occupancy calculator (`cuda_occupancy.h`, `cudaOccMaxActiveBlocksPerMultiprocessor`)
//! computes it:
//!
//! ```text
//! warps/TB      = ceil(threads/TB / warp size)
//! regs/warp     = round_up(regs/thread * warp size, register_alloc_unit)
//! by registers  = floor(floor(regs/SM / P) / regs/warp) * P / warps/TB     (P sub-partitions)
//! shared/TB     = round_up(static + dynamic + shared_reserved_per_tb, shared_alloc_unit)
//! x = min(max TBs/SM, max warps/SM / warps/TB, max threads/SM / (warps/TB * warp size),
//!         by registers, shared/SM / shared/TB)                 (integer division)
//! ```
//! The register file is split between the SM's warp schedulers (`P` =
//! `warp_schedulers_per_sm`: 2 on Fermi, 4 from Kepler on, as the calculator's
//! `cudaOccSubPartitionsPerMultiprocessor`), and a TB must also fit the per-TB register
//! limit (taken equal to the register file) with its warps rounded up to `P`. Fermi
//! (`arch = "fermi"`) allocates 128 registers per warp instead of 64 for 21, 22, 29, 30, 37,
//! 38, 45 and 46 registers per thread (the calculator's cc 2.x special case). A limit whose
//! resource the kernel does not use (0 registers, 0 shared) does not apply.
//!
//! [`tbs_per_sm`] is the one place every command computes TBs per SM: it applies the
//! `--registers` / `--tbs-per-sm` overrides and says what limited the result and where the
//! register count came from.

use crate::config::GpuConfig;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a kernel's register count comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RegisterSource {
    /// `--registers N` on the command line.
    Flag,
    /// `ptxas -v` run on the PTX for `arch`; `requested` is the GPU's own architecture
    /// when ptxas could not target it (`None` when it could).
    Ptxas {
        /// Architecture ptxas compiled for (`sm_70`).
        arch: String,
        /// The architecture asked for, when a different one had to be used.
        requested: Option<String>,
    },
    /// The ptxas numbers recorded in the launch file's `resources` for `arch`.
    LaunchFile {
        /// The `resources` key used (`sm_70`).
        arch: String,
    },
    /// The liveness-based estimate from the PTX ([`crate::estimate`]).
    Estimate,
}

impl fmt::Display for RegisterSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterSource::Flag => f.write_str("--registers"),
            RegisterSource::Ptxas {
                arch,
                requested: None,
            } => write!(f, "ptxas -arch={arch}"),
            RegisterSource::Ptxas {
                arch,
                requested: Some(r),
            } => write!(
                f,
                "ptxas -arch={arch} (asked for {r}: the nearest architecture this ptxas assembles the PTX for)"
            ),
            RegisterSource::LaunchFile { arch } => {
                write!(f, "the launch file's ptxas numbers for {arch}")
            }
            RegisterSource::Estimate => f.write_str("the PTX liveness estimate"),
        }
    }
}

/// A register count and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registers {
    /// Registers per thread.
    pub count: u32,
    /// Its origin.
    pub source: RegisterSource,
}

/// What one TB of the kernel needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelResources {
    /// Threads per TB (block x * y * z).
    pub threads_per_tb: u32,
    /// Registers per thread, with their source.
    pub registers: Registers,
    /// Static shared memory per TB in bytes (declared `.shared` variables, or ptxas's count).
    pub static_shared_bytes: u64,
    /// Dynamic shared memory per TB in bytes (the launch's `dynamic_shared_bytes`).
    pub dynamic_shared_bytes: u64,
}

/// Command-line overrides of the occupancy computation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--registers N`: registers per thread.
    pub registers: Option<u32>,
    /// `--tbs-per-sm N`: the answer itself.
    pub tbs_per_sm: Option<u32>,
}

/// The resource that limits TBs per SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// The register file.
    Registers,
    /// Resident threads per SM.
    Threads,
    /// Resident warps per SM.
    Warps,
    /// Shared memory.
    SharedMemory,
    /// Resident TB slots per SM.
    TbSlots,
    /// `--tbs-per-sm` gave the answer.
    Override,
}

impl fmt::Display for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limiter::Registers => "registers",
            Limiter::Threads => "threads",
            Limiter::Warps => "warps",
            Limiter::SharedMemory => "shared memory",
            Limiter::TbSlots => "TB slots",
            Limiter::Override => "--tbs-per-sm",
        })
    }
}

/// The occupancy, every limit that went into it and the resources it was computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    /// The GPU configuration's name.
    pub gpu: String,
    /// Resident TBs per SM: the minimum of the limits below (or the override).
    pub tbs_per_sm: u32,
    /// What binds.
    pub limiter: Limiter,
    /// The per-SM TB slot limit.
    pub by_tb_slots: u32,
    /// Limit from resident warps.
    pub by_warps: u32,
    /// Limit from resident threads.
    pub by_threads: u32,
    /// Limit from registers (`u32::MAX` when the kernel uses none).
    pub by_registers: u32,
    /// Limit from shared memory (`u32::MAX` when the kernel uses none).
    pub by_shared: u32,
    /// Threads per TB.
    pub threads_per_tb: u32,
    /// Registers per thread and their source.
    pub registers: Registers,
    /// Static + dynamic shared memory per TB in bytes (before the driver's reservation).
    pub shared_bytes_per_tb: u64,
}

impl Occupancy {
    /// One line saying what x is and why (`8 TBs/SM on titanv, limited by threads; 32
    /// registers from ptxas -arch=sm_70, 0 B shared`).
    pub fn reason(&self) -> String {
        format!(
            "{} TBs/SM on {}, limited by {}; {} registers/thread from {}, {} B shared/TB, {} threads/TB",
            self.tbs_per_sm,
            self.gpu,
            self.limiter,
            self.registers.count,
            self.registers.source,
            self.shared_bytes_per_tb,
            self.threads_per_tb
        )
    }
}

fn round_up(v: u64, unit: u64) -> u64 {
    v.div_ceil(unit.max(1)) * unit.max(1)
}

/// Registers allocated per warp: the calculator's granularity, with Fermi's special case.
fn regs_per_warp(gpu: &GpuConfig, regs: u32) -> u64 {
    let c = &gpu.core;
    let unit = if gpu.arch == "fermi" && matches!(regs, 21 | 22 | 29 | 30 | 37 | 38 | 45 | 46) {
        128
    } else {
        c.register_alloc_unit
    };
    round_up(u64::from(regs) * u64::from(c.warp_size), u64::from(unit))
}

/// The CUDA occupancy calculator's answer for `k` on `gpu`; an error when one TB does not fit.
pub fn occupancy(gpu: &GpuConfig, k: &KernelResources) -> Result<Occupancy> {
    let c = &gpu.core;
    let regs = k.registers.count;
    let shared = k.static_shared_bytes.saturating_add(k.dynamic_shared_bytes);
    let no_fit = |reason: String| Error::DoesNotFit {
        gpu: gpu.name.clone(),
        reason,
    };
    if k.threads_per_tb == 0 {
        return Err(no_fit("a TB of 0 threads".into()));
    }
    if k.threads_per_tb > c.max_threads_per_tb {
        return Err(no_fit(format!(
            "{} threads per TB > {} allowed",
            k.threads_per_tb, c.max_threads_per_tb
        )));
    }
    if regs > c.max_registers_per_thread {
        return Err(no_fit(format!(
            "{regs} registers per thread ({}) > {} allowed",
            k.registers.source, c.max_registers_per_thread
        )));
    }
    if shared > u64::from(c.max_shared_mem_per_tb) {
        return Err(no_fit(format!(
            "{shared} B shared memory per TB > {} B allowed",
            c.max_shared_mem_per_tb
        )));
    }
    let warp = u64::from(c.warp_size);
    let warps = u64::from(k.threads_per_tb).div_ceil(warp);
    let clamp = |v: u64| v.min(u64::from(u32::MAX)) as u32;
    let by_warps = clamp(u64::from(c.max_warps_per_sm) / warps);
    let by_threads = clamp(u64::from(c.max_threads_per_sm) / (warps * warp));
    let by_registers = if regs == 0 {
        u32::MAX
    } else {
        let per_warp = regs_per_warp(gpu, regs);
        let parts = u64::from(c.warp_schedulers_per_sm.max(1));
        let file = u64::from(c.registers_per_sm);
        // The hardware's per-TB check rounds the TB's warps up to the sub-partitions.
        if per_warp * round_up(warps, parts) > file || per_warp * warps > file {
            0
        } else {
            clamp((file / parts / per_warp) * parts / warps)
        }
    };
    let by_shared = {
        let need = shared + u64::from(c.shared_reserved_per_tb);
        if need == 0 {
            u32::MAX
        } else {
            clamp(u64::from(c.shared_mem_per_sm) / gpu.shared_allocation_per_tb(shared))
        }
    };
    // Ties go to the first: the order the calculator reports its limiting factors in.
    let limits = [
        (Limiter::Warps, by_warps),
        (Limiter::Threads, by_threads),
        (Limiter::Registers, by_registers),
        (Limiter::SharedMemory, by_shared),
        (Limiter::TbSlots, c.max_tbs_per_sm),
    ];
    let (mut limiter, mut tbs) = limits[0];
    for &(l, v) in &limits[1..] {
        if v < tbs {
            (limiter, tbs) = (l, v);
        }
    }
    if tbs == 0 {
        return Err(no_fit(format!(
            "{limiter} allow no TB ({} threads, {regs} registers/thread from {}, {shared} B shared)",
            k.threads_per_tb, k.registers.source
        )));
    }
    Ok(Occupancy {
        gpu: gpu.name.clone(),
        tbs_per_sm: tbs,
        limiter,
        by_tb_slots: c.max_tbs_per_sm,
        by_warps,
        by_threads,
        by_registers,
        by_shared,
        threads_per_tb: k.threads_per_tb,
        registers: k.registers.clone(),
        shared_bytes_per_tb: shared,
    })
}

/// TBs per SM for `k` on `gpu` with the command line's overrides: `--registers` replaces the
/// register count, `--tbs-per-sm` the answer (the limits are still computed and reported).
/// Every command that needs TBs per SM calls this.
pub fn tbs_per_sm(gpu: &GpuConfig, k: &KernelResources, o: &Overrides) -> Result<Occupancy> {
    let mut k = k.clone();
    if let Some(r) = o.registers {
        k.registers = Registers {
            count: r,
            source: RegisterSource::Flag,
        };
    }
    match o.tbs_per_sm {
        Some(0) => Err(Error::InvalidOverride(
            "--tbs-per-sm must be at least 1".into(),
        )),
        Some(x) => {
            let mut occ = occupancy(gpu, &k).unwrap_or_else(|_| Occupancy {
                gpu: gpu.name.clone(),
                tbs_per_sm: x,
                limiter: Limiter::Override,
                by_tb_slots: gpu.core.max_tbs_per_sm,
                by_warps: 0,
                by_threads: 0,
                by_registers: 0,
                by_shared: 0,
                threads_per_tb: k.threads_per_tb,
                registers: k.registers.clone(),
                shared_bytes_per_tb: k.static_shared_bytes.saturating_add(k.dynamic_shared_bytes),
            });
            occ.tbs_per_sm = x;
            occ.limiter = Limiter::Override;
            Ok(occ)
        }
        None => occupancy(gpu, &k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(threads: u32, regs: u32, shared: u64) -> KernelResources {
        KernelResources {
            threads_per_tb: threads,
            registers: Registers {
                count: regs,
                source: RegisterSource::Flag,
            },
            static_shared_bytes: shared,
            dynamic_shared_bytes: 0,
        }
    }

    fn gpu(name: &str) -> GpuConfig {
        GpuConfig::builtin(name).unwrap()
    }

    fn x(name: &str, threads: u32, regs: u32, shared: u64) -> u32 {
        occupancy(&gpu(name), &k(threads, regs, shared))
            .unwrap()
            .tbs_per_sm
    }

    #[test]
    fn volta_256_threads_32_regs() {
        // 8 warps/TB. warps: 64/8 = 8. regs: 32*32 = 1024/warp; 16384 per sub-partition /
        // 1024 = 16 warps, x4 = 64 / 8 = 8.
        let o = occupancy(&gpu("volta"), &k(256, 32, 0)).unwrap();
        assert_eq!((o.tbs_per_sm, o.by_warps, o.by_registers), (8, 8, 8));
        assert_eq!(o.limiter, Limiter::Warps);
    }

    #[test]
    fn hand_computed_cases() {
        // Volta, 128 threads, 64 regs, 20000 B shared:
        //   warps 64/4 = 16; regs 2048/warp: 16384/2048 = 8 per sub-partition, 32/4 = 8;
        //   shared round_up(20000, 256) = 20224 -> 98304/20224 = 4.  x = 4 (shared).
        let o = occupancy(&gpu("volta"), &k(128, 64, 20000)).unwrap();
        assert_eq!((o.tbs_per_sm, o.limiter), (4, Limiter::SharedMemory));
        // Fermi, 256 threads, 21 regs: 21 is a 128-register-granularity count on cc 2.x:
        //   672 -> 768/warp; 16384/768 = 21 per sub-partition, x2 = 42 / 8 = 5.
        let o = occupancy(&gpu("fermi"), &k(256, 21, 0)).unwrap();
        assert_eq!((o.tbs_per_sm, o.limiter), (5, Limiter::Registers));
        // Fermi, 256 threads, 20 regs: 640/warp; 16384/640 = 25, x2 = 50 / 8 = 6 = warps 48/8.
        assert_eq!(x("fermi", 256, 20, 0), 6);
        // Fermi, 256 threads, 23 regs: 736 -> 768 (64 granularity); same as 21: 5.
        assert_eq!(x("fermi", 256, 23, 0), 5);
        // Fermi, 64 threads, 10 regs: 2 warps; warps 24; regs 320/warp -> 51 x2 = 102 / 2;
        //   slots 8.  x = 8 (TB slots).
        let o = occupancy(&gpu("fermi"), &k(64, 10, 0)).unwrap();
        assert_eq!((o.tbs_per_sm, o.limiter), (8, Limiter::TbSlots));
        // Volta, 32 threads, 96 regs: 3072/warp; 16384/3072 = 5 per sub-partition -> 20 TBs
        //   (the whole file would give 65536/3072 = 21).
        assert_eq!(x("volta", 32, 96, 0), 20);
        // Pascal, 48 threads (2 warps, 64-thread footprint), 0 regs: 64/2 = 32 = slots.
        assert_eq!(x("pascal", 48, 0, 0), 32);
        // Hopper, 1024 threads, 0 shared: 1 KB reserved -> 228; warps 64/32 = 2. x = 2.
        assert_eq!(x("hopper", 1024, 16, 0), 2);
        // Hopper, 128 threads, 40000 B: (40000 + 1024) -> 41088 (128-aligned) ->
        //   233472/41088 = 5.
        let o = occupancy(&gpu("hopper"), &k(128, 32, 40000)).unwrap();
        assert_eq!((o.tbs_per_sm, o.by_shared), (5, 5));
    }

    #[test]
    fn dynamic_shared_memory_counts_in_64_bits() {
        let mut r = k(128, 32, 1024);
        r.dynamic_shared_bytes = 47 * 1024;
        // Volta: 48 KB -> 98304 / 49152 = 2.
        assert_eq!(occupancy(&gpu("volta"), &r).unwrap().tbs_per_sm, 2);
        r.dynamic_shared_bytes = 1 << 33;
        let e = occupancy(&gpu("volta"), &r).unwrap_err();
        assert!(e.to_string().contains("8589935616 B shared"), "{e}");
    }

    #[test]
    fn overrides() {
        let g = gpu("volta");
        let o = tbs_per_sm(
            &g,
            &k(256, 200, 0),
            &Overrides {
                registers: Some(32),
                tbs_per_sm: None,
            },
        )
        .unwrap();
        assert_eq!(
            (o.tbs_per_sm, &o.registers.source),
            (8, &RegisterSource::Flag)
        );
        let o = tbs_per_sm(
            &g,
            &k(256, 32, 0),
            &Overrides {
                registers: None,
                tbs_per_sm: Some(3),
            },
        )
        .unwrap();
        assert_eq!((o.tbs_per_sm, o.limiter), (3, Limiter::Override));
        assert!(o.reason().contains("--tbs-per-sm"), "{}", o.reason());
        assert!(tbs_per_sm(
            &g,
            &k(256, 32, 0),
            &Overrides {
                registers: None,
                tbs_per_sm: Some(0)
            }
        )
        .is_err());
    }

    #[test]
    fn does_not_fit() {
        // 1024 threads x 128 regs = 131072 registers > 65536 on Volta.
        let e = occupancy(&gpu("volta"), &k(1024, 128, 0)).unwrap_err();
        assert!(e.to_string().contains("registers"), "{e}");
        assert!(occupancy(&gpu("fermi"), &k(2048, 8, 0)).is_err());
        assert!(occupancy(&gpu("fermi"), &k(64, 8, 60000)).is_err());
        assert!(occupancy(&gpu("fermi"), &k(64, 70, 0)).is_err());
    }
}
