//! Timing-model throughput over the whole corpus: every small launch
//! (`kernels/*/small*.json`, 36 of them) on every built-in GPU configuration (gtx480,
//! titanx_pascal, titanv, h100), LRR TBs, GTO warps, the launch file's ptxas register count
//! for the occupancy limit (as `paver simulate` does). Prints each run's rate in simulated
//! warp instructions per second (after a warm-up run, over at least `repeats` runs and
//! 0.3 s, in CPU time of the thread from `/proc/thread-self/schedstat`, so that other
//! processes on a loaded machine do not count; wall-clock where that file is missing), an
//! FNV-1a digest of its stats JSON
//! (to check that an optimisation changes no result), and the slowest and median rate per
//! configuration.
//!
//! `cargo run -p sim --release --example timing_sweep -- [repeats] [filter] [configs] [size]`
//! (`filter`: only launch files whose path contains it, `-` for all; `configs`: a
//! comma-separated subset such as `titanv,h100`, `-` for all; `size`: `small` (default) or
//! `paper`, the launch files' prefix). `SWEEP_VERBOSE=1` also prints each run's L1, L2, NoC
//! and DRAM counters; `SWEEP_THREADS=2` runs with `SimOptions::threads` = 2 (the digests
//! must not change); `SWEEP_DUMP=DIR` writes each run's stats JSON to
//! `DIR/{config}__{dir}__{file}` (for a byte-by-byte before/after comparison).

use std::path::{Path, PathBuf};
use std::time::Instant;

use sim::timing::{simulate, SimOptions, TbPolicy, TimingConfig};

const CONFIGS: [&str; 4] = ["gtx480", "titanx_pascal", "titanv", "h100"];

/// CPU seconds of runs a rate is measured over, at least.
const MIN_CPU: f64 = 0.3;

/// The launch files named `{prefix}*.json`, sorted.
fn launches(root: &Path, prefix: &str) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(root)? {
        let d = d?.path();
        if !d.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&d)? {
            let f = f?.path();
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with(prefix) && name.ends_with(".json") {
                out.push(f);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repeats: usize = args.first().map_or(Ok(1), |s| s.parse())?;
    let filter = args.get(1).map_or("-", String::as_str);
    let configs: Vec<&str> = match args.get(2).map(String::as_str) {
        Some(c) if c != "-" => c.split(',').collect(),
        _ => CONFIGS.to_vec(),
    };
    let prefix = args.get(3).map_or("small", String::as_str);
    let threads: usize = std::env::var("SWEEP_THREADS").map_or(Ok(1), |s| s.parse())?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let files: Vec<PathBuf> = launches(&root, prefix)?
        .into_iter()
        .filter(|f| filter == "-" || f.to_string_lossy().contains(filter))
        .collect();
    for gpu in configs {
        let g = gpu::GpuConfig::builtin(gpu)?;
        let (variant, keys): (&str, &[&str]) = if g.arch == "hopper" {
            ("compute_90", &["sm_90", "sm_80", "sm_70"])
        } else {
            ("compute_70", &["sm_70", "sm_90"])
        };
        let mut rates = Vec::new();
        for file in &files {
            let dir = file.parent().ok_or("no parent")?;
            let name = dir.file_name().and_then(|n| n.to_str()).ok_or("bad dir")?;
            let module = ptx_parser::parse_file(&dir.join(format!("{name}.{variant}.ptx")))?;
            let launch = launch::Launch::read(file)?;
            let kernel = match &launch.kernel {
                Some(k) => k.clone(),
                None => module
                    .functions
                    .iter()
                    .find(|f| f.is_entry)
                    .map(|f| f.name.clone())
                    .ok_or("no entry")?,
            };
            let f = module.kernel(&kernel).ok_or("no kernel")?;
            let bound = launch.bind(&kernel, &sim::param_sigs(f), dir)?;
            let mut cfg = TimingConfig::new(g.clone());
            cfg.regs_per_thread = keys
                .iter()
                .find_map(|k| launch.resources.get(*k).map(|r| r.registers));
            let mut opts = SimOptions::new(TbPolicy::LRR);
            opts.threads = threads;
            // One warm-up run, then runs until they add up to `MIN_CPU` of CPU time (the
            // thread's run time advances in scheduler ticks, so short runs are summed).
            let s = simulate(&module, f, &bound, &cfg, &opts)?;
            let (t0, c0) = (Instant::now(), cpu_ns());
            let mut runs = 0u32;
            let per_run = loop {
                simulate(&module, f, &bound, &cfg, &opts)?;
                runs += 1;
                let wall = t0.elapsed().as_secs_f64();
                let secs = match (c0, cpu_ns()) {
                    (Some(a), Some(b)) => (b - a) as f64 * 1e-9,
                    _ => wall,
                };
                if runs as usize >= repeats.max(1) && secs >= MIN_CPU {
                    break secs / f64::from(runs);
                }
            };
            let rate = s.warp_instructions as f64 / per_run;
            let label = file
                .strip_prefix(&root)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned();
            println!(
                "{gpu:<14} {label:<48} {:>9} winst {:>9} cyc {:>8.1} ms {:>7.2} M/s  L2 rf {:>8}  {:016x}",
                s.warp_instructions,
                s.cycles,
                per_run * 1e3,
                rate / 1e6,
                s.l2.reservation_fails,
                fnv(s.to_json().as_bytes()),
            );
            if let Some(dir) = std::env::var_os("SWEEP_DUMP") {
                let name = format!("{gpu}__{}", label.replace('/', "__"));
                std::fs::write(Path::new(&dir).join(name), s.to_json())?;
            }
            if std::env::var_os("SWEEP_VERBOSE").is_some() {
                println!(
                    "  L1 {:?}\n  L2 {:?}\n  NoC {:?}\n  DRAM {:?}",
                    s.l1, s.l2, s.noc, s.dram
                );
            }
            rates.push((rate, label));
        }
        rates.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((slow, which)) = rates.first() {
            let median = rates[rates.len() / 2].0;
            println!(
                "{gpu}: slowest {:.2} M/s ({which}), median {:.2} M/s over {} launches",
                slow / 1e6,
                median / 1e6,
                rates.len()
            );
        }
    }
    Ok(())
}

/// Nanoseconds this thread has run on a CPU (`/proc/thread-self/schedstat`).
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// FNV-1a 64 of the stats JSON.
fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
