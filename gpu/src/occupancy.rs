//! Occupancy: how many TBs of a kernel fit on one SM at once (x in PAVER §4), as the CUDA
//! occupancy calculator computes it:
//!
//! ```text
//! warps/TB   = ceil(threads/TB / warp size)
//! regs/TB    = round_up(regs/thread * warp size, register_alloc_unit) * warps/TB
//! shared/TB  = round_up(shared/TB + shared_reserved_per_tb, shared_alloc_unit)
//! x = min(max TBs/SM, max warps/SM / warps/TB, max threads/SM / (warps/TB * warp size),
//!         regs/SM / regs/TB, shared/SM / shared/TB)          (integer division)
//! ```
//! A limit whose resource the kernel does not use (0 registers, 0 shared) does not apply.
//! The calculator's per-scheduler register-file split (a second-order effect) is not modelled.

use crate::config::GpuConfig;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// What one TB of the kernel needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelResources {
    /// Threads per TB (block x * y * z).
    pub threads_per_tb: u32,
    /// Registers per thread (ptxas report, or the PTX's declared registers as an estimate).
    pub regs_per_thread: u32,
    /// Static + dynamic shared memory per TB in bytes.
    pub shared_per_tb: u32,
}

/// The occupancy and every limit that went into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Resident TBs per SM: the minimum of the limits below.
    pub tbs_per_sm: u32,
    /// The per-SM TB slot limit.
    pub by_tb_slots: u32,
    /// Limit from warps / threads.
    pub by_threads: u32,
    /// Limit from registers (`u32::MAX` when the kernel uses none).
    pub by_registers: u32,
    /// Limit from shared memory (`u32::MAX` when the kernel uses none).
    pub by_shared: u32,
    /// Which resource binds: `tb_slots`, `threads`, `registers` or `shared`.
    pub limiter: String,
}

fn round_up(v: u64, unit: u64) -> u64 {
    v.div_ceil(unit) * unit
}

/// TBs of a kernel resident on one SM of `gpu`; an error when one TB does not fit.
pub fn tbs_per_sm(gpu: &GpuConfig, k: &KernelResources) -> Result<u32> {
    occupancy(gpu, k).map(|o| o.tbs_per_sm)
}

/// The full occupancy breakdown.
pub fn occupancy(gpu: &GpuConfig, k: &KernelResources) -> Result<Occupancy> {
    let c = &gpu.core;
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
    if k.regs_per_thread > c.max_registers_per_thread {
        return Err(no_fit(format!(
            "{} registers per thread > {} allowed",
            k.regs_per_thread, c.max_registers_per_thread
        )));
    }
    if k.shared_per_tb > c.max_shared_mem_per_tb {
        return Err(no_fit(format!(
            "{} B shared memory per TB > {} B allowed",
            k.shared_per_tb, c.max_shared_mem_per_tb
        )));
    }
    let warp = u64::from(c.warp_size);
    let warps = u64::from(k.threads_per_tb).div_ceil(warp);
    let by_threads = (u64::from(c.max_warps_per_sm) / warps)
        .min(u64::from(c.max_threads_per_sm) / (warps * warp)) as u32;
    let by_registers = if k.regs_per_thread == 0 {
        u32::MAX
    } else {
        let per_warp = round_up(
            u64::from(k.regs_per_thread) * warp,
            u64::from(c.register_alloc_unit),
        );
        (u64::from(c.registers_per_sm) / (per_warp * warps)).min(u64::from(u32::MAX)) as u32
    };
    let shared = u64::from(k.shared_per_tb) + u64::from(c.shared_reserved_per_tb);
    let by_shared = if shared == 0 {
        u32::MAX
    } else {
        (u64::from(c.shared_mem_per_sm) / round_up(shared, u64::from(c.shared_alloc_unit)))
            .min(u64::from(u32::MAX)) as u32
    };
    let limits = [
        ("tb_slots", c.max_tbs_per_sm),
        ("threads", by_threads),
        ("registers", by_registers),
        ("shared", by_shared),
    ];
    let (limiter, tbs) = limits
        .iter()
        .copied()
        .min_by_key(|l| l.1)
        .unwrap_or(("tb_slots", c.max_tbs_per_sm));
    if tbs == 0 {
        return Err(no_fit(format!(
            "{limiter} allow no TB ({} threads, {} regs/thread, {} B shared)",
            k.threads_per_tb, k.regs_per_thread, k.shared_per_tb
        )));
    }
    Ok(Occupancy {
        tbs_per_sm: tbs,
        by_tb_slots: c.max_tbs_per_sm,
        by_threads,
        by_registers,
        by_shared,
        limiter: limiter.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(threads: u32, regs: u32, shared: u32) -> KernelResources {
        KernelResources {
            threads_per_tb: threads,
            regs_per_thread: regs,
            shared_per_tb: shared,
        }
    }

    fn gpu(name: &str) -> GpuConfig {
        GpuConfig::builtin(name).unwrap()
    }

    #[test]
    fn volta_256_threads_32_regs() {
        // 8 warps/TB. threads: 64/8 = 8. regs: 32*32 = 1024/warp, 8192/TB, 65536/8192 = 8.
        let o = occupancy(&gpu("volta"), &k(256, 32, 0)).unwrap();
        assert_eq!((o.tbs_per_sm, o.by_threads, o.by_registers), (8, 8, 8));
    }

    #[test]
    fn hand_computed_cases() {
        // Volta, 128 threads, 64 regs, 20000 B shared:
        //   threads 64/4 = 16; regs 64*32 = 2048/warp * 4 = 8192 -> 8;
        //   shared round_up(20000, 256) = 20224 -> 98304/20224 = 4.  x = 4 (shared).
        let o = occupancy(&gpu("volta"), &k(128, 64, 20000)).unwrap();
        assert_eq!((o.tbs_per_sm, o.limiter.as_str()), (4, "shared"));
        // Fermi, 256 threads, 21 regs: 8 warps; threads 48/8 = 6;
        //   regs 21*32 = 672 -> round_up 64 = 704/warp * 8 = 5632 -> 32768/5632 = 5.  x = 5.
        let o = occupancy(&gpu("fermi"), &k(256, 21, 0)).unwrap();
        assert_eq!((o.tbs_per_sm, o.limiter.as_str()), (5, "registers"));
        // Fermi, 64 threads, 10 regs: 2 warps; threads 24; regs 320 -> 320/warp*2 = 640 ->
        //   51; slots 8.  x = 8 (TB slots).
        let o = occupancy(&gpu("fermi"), &k(64, 10, 0)).unwrap();
        assert_eq!((o.tbs_per_sm, o.limiter.as_str()), (8, "tb_slots"));
        // Pascal, 48 threads (2 warps, 64-thread footprint), 0 regs: 64/2 = 32 = slots. x = 32.
        assert_eq!(tbs_per_sm(&gpu("pascal"), &k(48, 0, 0)).unwrap(), 32);
        // Hopper, 1024 threads, 0 shared: 1 KB reserved -> 228; threads 64/32 = 2. x = 2.
        assert_eq!(tbs_per_sm(&gpu("hopper"), &k(1024, 16, 0)).unwrap(), 2);
        // Hopper, 128 threads, 40000 B: (40000 + 1024) -> 41088 (128-aligned) -> 233472/41088 = 5.
        let o = occupancy(&gpu("hopper"), &k(128, 32, 40000)).unwrap();
        assert_eq!((o.tbs_per_sm, o.by_shared), (5, 5));
    }

    #[test]
    fn does_not_fit() {
        // 1024 threads x 128 regs = 131072 registers > 65536 on Volta.
        let e = tbs_per_sm(&gpu("volta"), &k(1024, 128, 0)).unwrap_err();
        assert!(e.to_string().contains("registers"), "{e}");
        assert!(tbs_per_sm(&gpu("fermi"), &k(2048, 8, 0)).is_err());
        assert!(tbs_per_sm(&gpu("fermi"), &k(64, 8, 60000)).is_err());
        assert!(tbs_per_sm(&gpu("fermi"), &k(64, 70, 0)).is_err());
    }
}
