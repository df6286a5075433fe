//! Interpreter throughput in warp instructions per second, without criterion's statistics:
//! quick before/after comparisons and instruction-count profiles (`valgrind --tool=callgrind`).
//!
//! `cargo run -p sim --release --example interp_speed -- [mm_naive|hotspot|bfs] [threads] [repeats] [n]`
//! (`n`: mm_naive's matrix size, default 256; the others run their small launch).

use std::path::Path;
use std::time::Instant;

use launch::Launch;
use sim::{NoObserver, Program, RunOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let case = args.first().map_or("mm_naive", String::as_str);
    let threads: usize = args.get(1).map_or(Ok(1), |s| s.parse())?;
    let repeats: usize = args.get(2).map_or(Ok(5), |s| s.parse())?;
    let n: u64 = args.get(3).map_or(Ok(256), |s| s.parse())?;
    let (dir, kernel, launch_file) = match case {
        "mm_naive" => ("mm_naive", "mm_naive", ""),
        "hotspot" => ("hotspot", "hotspot", "small.json"),
        "bfs" => ("bfs", "bfs_expand", "small.bfs_expand.json"),
        other => return Err(format!("unknown case {other}").into()),
    };
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(dir);
    let module = ptx_parser::parse_file(&d.join(format!("{dir}.compute_90.ptx")))?;
    let f = module.kernel(kernel).ok_or("no kernel")?;
    let l = if case == "mm_naive" {
        let (g, len) = (n.div_ceil(16), n * n);
        let json = format!(
            r#"{{"format": "paver-launch/1", "grid": [{g},{g},1], "block": [16,16,1], "params": [
  {{"index": 0, "buffer": {{"type": "f32", "len": {len}, "init": "rand(1)"}}}},
  {{"index": 1, "buffer": {{"type": "f32", "len": {len}, "init": "rand(2)"}}}},
  {{"index": 2, "buffer": {{"type": "f32", "len": {len}, "init": "zeros"}}}},
  {{"index": 3, "value": {n}}}]}}"#
        );
        Launch::from_json(&json, Path::new("speed.json"))?
    } else {
        Launch::read(&d.join(launch_file))?
    };
    let bound = l.bind(kernel, &sim::param_sigs(f), &d)?;
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
