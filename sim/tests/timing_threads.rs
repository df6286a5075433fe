//! The timing model's results do not depend on the thread count (issues 11 and 40): the
//! stats JSON of a run with `SimOptions::threads` = 2 or 4 is byte-identical to the
//! one-thread run, for corpus launches with barriers, shared memory, atomics, gathers,
//! several waves of TBs, the locality ledger (`--explain`), sampling and kernels that launch
//! kernels, on a configuration with whole-line L1 blocks (Fermi) and one with a sectored,
//! unified L1 (H100). The parallel phase ([`sim::timing::par`]) is forced on for every
//! cycle it can take (`par_min_sms_per_thread` = 1), and each multi-thread run is checked
//! to have taken it.

use gpu::GpuConfig;
use launch::Launch;
use sim::timing::sample::SampleOptions;
use sim::timing::{simulate_with_info, RunInfo, SimOptions, TbPolicy, TimingConfig};
use std::path::Path;

/// What a run adds to the defaults.
#[derive(Clone, Copy, Default)]
struct Extra {
    explain: bool,
    sample: bool,
}

/// The stats JSON of `kernels/{dir}/{file}` on `gpu` with `threads` threads, and what the
/// run used.
fn stats_json(dir: &str, file: &str, gpu: &str, threads: usize, x: Extra) -> (String, RunInfo) {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(dir);
    let g = GpuConfig::builtin(gpu).expect("config");
    let stem = Path::new(dir)
        .file_name()
        .and_then(|s| s.to_str())
        .expect("stem");
    let ptx = if dir.starts_with("dp/") {
        format!("{stem}.nvcc13.sm_90.ptx")
    } else if g.arch == "hopper" {
        format!("{stem}.compute_90.ptx")
    } else {
        format!("{stem}.compute_70.ptx")
    };
    let m = ptx_parser::parse_file(&d.join(ptx)).expect("parse");
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
    opts.par_min_sms_per_thread = 1;
    opts.explain = x.explain;
    opts.sample = x.sample.then(SampleOptions::default);
    let (stats, info) =
        simulate_with_info(&m, f, &b, &cfg, &opts, &mut |_, _, _| {}).expect("simulate");
    (stats.to_json(), info)
}

/// Checks `dir`/`file` on each of `gpus` at 1, 2 and 4 threads.
fn check(dir: &str, file: &str, gpus: &[&str], x: Extra) {
    for gpu in gpus {
        let (one, i1) = stats_json(dir, file, gpu, 1, x);
        assert!(one.contains("\"cycles\""), "{dir}/{file} on {gpu}: {one}");
        assert_eq!(i1.parallel_steps, 0);
        for threads in [2, 4] {
            let (many, info) = stats_json(dir, file, gpu, threads, x);
            assert_eq!(one, many, "{dir}/{file} on {gpu}: 1 vs {threads} threads");
            assert!(
                info.parallel_steps > 0 && info.pooled_sm_steps > 0,
                "{dir}/{file} on {gpu} at {threads} threads never stepped in parallel"
            );
        }
    }
}

#[test]
fn stats_are_byte_identical_at_one_two_and_four_threads() {
    let launches = [
        ("mm_tiled", "small.json"),                   // barriers, shared memory
        ("histogram", "small.histogram_global.json"), // global atomics
        ("spmv_csr", "small.spmv_csr_scalar.json"),   // gathers, refused requests
        ("bfs", "small.bfs_update.json"),             // data-dependent control
    ];
    for (dir, file) in launches {
        check(dir, file, &["gtx480", "h100"], Extra::default());
    }
}

#[test]
fn several_waves_are_byte_identical_across_thread_counts() {
    // 2,304 TBs of 256 threads: many waves on the 15 SMs of a GTX 480.
    check("transpose", "waves.json", &["gtx480"], Extra::default());
}

#[test]
fn the_ledger_and_sampling_are_byte_identical_across_thread_counts() {
    let explain = Extra {
        explain: true,
        ..Extra::default()
    };
    check("mm_tiled", "small.json", &["gtx480"], explain);
    let sample = Extra {
        sample: true,
        ..Extra::default()
    };
    check("transpose", "waves.json", &["gtx480"], sample);
}

#[test]
fn device_launches_are_byte_identical_across_thread_counts() {
    check(
        "dp/dp_tb_child",
        "small.dp_tb_parent.json",
        &["h100"],
        Extra::default(),
    );
    check(
        "dp/dp_bfs",
        "small.dp_bfs_level.json",
        &["h100"],
        Extra::default(),
    );
}
