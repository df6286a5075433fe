//! The timing model's results do not depend on the thread count (issue 11): the stats JSON
//! of a run with `SimOptions::threads` = 2 is byte-identical to the one-thread run, for
//! corpus launches with barriers, shared memory, atomics and gathers, on a configuration
//! with whole-line L1 blocks (Fermi) and one with a sectored, unified L1 (H100).

use gpu::GpuConfig;
use launch::Launch;
use sim::timing::{simulate, SimOptions, TbPolicy, TimingConfig};
use std::path::Path;

/// The stats JSON of `kernels/{dir}/{file}` on `gpu` with `threads` threads.
fn stats_json(dir: &str, file: &str, gpu: &str, threads: usize) -> String {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(dir);
    let g = GpuConfig::builtin(gpu).expect("config");
    let variant = if g.arch == "hopper" {
        "compute_90"
    } else {
        "compute_70"
    };
    let m = ptx_parser::parse_file(&d.join(format!("{dir}.{variant}.ptx"))).expect("parse");
    let launch = Launch::read(&d.join(file)).expect("launch");
    let name = match &launch.kernel {
        Some(k) => k.clone(),
        None => m
            .functions
            .iter()
            .find(|f| f.is_entry)
            .expect("entry")
            .name
            .clone(),
    };
    let f = m.kernel(&name).expect("kernel");
    let b = launch.bind(&name, &sim::param_sigs(f), &d).expect("bind");
    let cfg = TimingConfig::new(g);
    let mut opts = SimOptions::new(TbPolicy::LRR);
    opts.threads = threads;
    simulate(&m, f, &b, &cfg, &opts)
        .expect("simulate")
        .to_json()
}

#[test]
fn stats_are_byte_identical_at_one_and_two_threads() {
    let launches = [
        ("mm_tiled", "small.json"),                   // barriers, shared memory
        ("histogram", "small.histogram_global.json"), // global atomics
        ("spmv_csr", "small.spmv_csr_scalar.json"),   // gathers, refused requests
        ("bfs", "small.bfs_update.json"),             // data-dependent control
    ];
    for gpu in ["gtx480", "h100"] {
        for (dir, file) in launches {
            let one = stats_json(dir, file, gpu, 1);
            let two = stats_json(dir, file, gpu, 2);
            assert!(one.contains("\"cycles\""), "{dir}/{file} on {gpu}: {one}");
            assert_eq!(one, two, "{dir}/{file} on {gpu}: 1 vs 2 threads");
        }
    }
}
