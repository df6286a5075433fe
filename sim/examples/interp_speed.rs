//! Interpreter throughput in warp instructions per second, without criterion's statistics:
//! quick before/after comparisons and instruction-count profiles (`valgrind --tool=callgrind`).
//!
//! `cargo run -p sim --release --example interp_speed -- [mm_naive|hotspot|bfs] [threads] [repeats] [n]`
//! (`n`: mm_naive's matrix size, default 256; the others run their small launch).

#[path = "common/case.rs"]
mod case;

use std::time::Instant;

use sim::{NoObserver, Program, RunOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let case = args.first().map_or("mm_naive", String::as_str);
    let threads: usize = args.get(1).map_or(Ok(1), |s| s.parse())?;
    let repeats: usize = args.get(2).map_or(Ok(5), |s| s.parse())?;
    let n: u64 = args.get(3).map_or(Ok(256), |s| s.parse())?;
    let case::Case {
        module,
        kernel,
        bound,
    } = case::load(case, "compute_90", n)?;
    let prog = Program::new(&module, kernel)?;
    let opts = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let mut best = f64::INFINITY;
    let mut insts = 0;
    for _ in 0..repeats {
        let t = Instant::now();
        let r = sim::run(&prog, &bound, &opts, &mut NoObserver)?;
        best = best.min(t.elapsed().as_secs_f64());
        insts = r.stats.warp_instructions;
    }
    println!(
        "{case} threads={threads}: {insts} warp instructions, best {:.1} ms, {:.2} M warp-instr/s",
        best * 1e3,
        insts as f64 / best / 1e6
    );
    Ok(())
}
