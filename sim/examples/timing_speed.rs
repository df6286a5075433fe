//! Timing-model throughput (functional tracing included) in simulated warp instructions and
//! cycles per second, without criterion's statistics: quick before/after comparisons and
//! instruction-count profiles (`valgrind --tool=callgrind`).
//!
//! `cargo run -p sim --release --example timing_speed -- [mm_naive|hotspot|stencil2d|bfs] [repeats] [n]`
//! (`n`: mm_naive's matrix size, default 256 = 256 TBs; the others run their small launch).
//! Volta configuration (80 SMs), LRR TBs, GTO warps.

#[path = "common/case.rs"]
mod case;

use std::time::Instant;

use sim::timing::{simulate, SimOptions, TbPolicy, TimingConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let case = args.first().map_or("mm_naive", String::as_str);
    let repeats: usize = args.get(1).map_or(Ok(3), |s| s.parse())?;
    let n: u64 = args.get(2).map_or(Ok(256), |s| s.parse())?;
    let case::Case {
        module,
        kernel,
        bound,
    } = case::load(case, "compute_70", n)?;
    let f = module.kernel(kernel).ok_or("no kernel")?;
    let cfg = TimingConfig::new(gpu::GpuConfig::builtin("volta")?);
    let opts = SimOptions::new(TbPolicy::LRR);
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeats {
        let t = Instant::now();
        let s = simulate(&module, f, &bound, &cfg, &opts)?;
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(s);
    }
    let s = last.ok_or("no run")?;
    println!(
        "{case}: {} TBs, {} warp instructions, {} cycles, best {:.1} ms: {:.2} M warp-instr/s, {:.3} M cycles/s (stats digest {:016x})",
        s.tbs,
        s.warp_instructions,
        s.cycles,
        best * 1e3,
        s.warp_instructions as f64 / best / 1e6,
        s.cycles as f64 / best / 1e6,
        fnv(s.to_json().as_bytes()),
    );
    println!("  L1 {:?}\n  L2 {:?}\n  NoC {:?}", s.l1, s.l2, s.noc);
    Ok(())
}

/// FNV-1a 64 of the stats JSON, to check that an optimisation changes no result.
fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
