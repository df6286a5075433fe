//! Sampled simulation (`sim::timing::sample`, `paver simulate --sample`) against full runs
//! of the same multi-wave launches: the corpus's `waves` launches (2,304 TBs) on a Volta
//! cut to 4 SMs and a 768 KB L2, 72 waves each.
//!
//! * A launch whose TBs are alike (transpose_naive) converges within its first waves:
//!   sampled cycles and L2 accesses within 2 % of the full run, a third of its TBs
//!   skipped.
//! * A launch whose rates keep moving runs in full: sampling then changes no counter.
//! * Sampled runs are deterministic, and refuse the per-TB ledger.

use launch::BoundLaunch;
use sim::timing::sample::SampleOptions;
use sim::timing::{simulate, SimOptions, Stats, TbPolicy, TimingConfig};
use std::path::{Path, PathBuf};

fn kernels() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

/// Kernel `dir`'s compute_70 PTX bound to its launch file `launch`.
fn load(dir: &str, launch: &str) -> (ptx_parser::Module, BoundLaunch) {
    let root = kernels().join(dir);
    let m = ptx_parser::parse_file(&root.join(format!("{dir}.compute_70.ptx"))).expect("ptx");
    let l = launch::Launch::read(&root.join(launch)).expect("launch");
    let k = l.kernel.clone().expect("kernel");
    let b = l
        .bind(&k, &sim::param_sigs(m.kernel(&k).expect("kernel")), &root)
        .expect("bind");
    (m, b)
}

/// Volta cut to 4 SMs (32 TBs of 256 threads a wave) and a 768 KB L2 (4 ways of 24), so
/// that a 72-wave launch fills its L2 within its first waves as a paper launch fills a
/// full L2 (the warm-up lasts until the L2 has missed its capacity).
fn small_volta() -> TimingConfig {
    let mut cfg = TimingConfig::new(gpu::GpuConfig::builtin("volta").expect("volta"));
    cfg.set("core.num_sms", "4").expect("set");
    cfg.set("l2.ways", "4").expect("set");
    cfg.set("l2.size_bytes", &(48 * 32 * 4 * 128).to_string())
        .expect("set");
    cfg
}

fn run(dir: &str, launch: &str, sample: Option<SampleOptions>) -> Stats {
    let (m, b) = load(dir, launch);
    let f = m.kernel(&b.kernel).expect("kernel");
    let mut opts = SimOptions::new(TbPolicy::LRR);
    opts.sample = sample;
    simulate(&m, f, &b, &small_volta(), &opts).expect("simulate")
}

fn rel(a: u64, b: u64) -> f64 {
    a as f64 / b as f64 - 1.0
}

#[test]
fn alike_tbs_converge_and_extrapolate_within_two_percent() {
    let full = run("transpose", "waves.json", None);
    let sampled = run("transpose", "waves.json", Some(SampleOptions::default()));
    let s = sampled.sampling.as_ref().expect("sampling stats");
    eprintln!(
        "transpose waves: cycles {} vs {} ({:+.2} %), L2 {} vs {} ({:+.2} %), {} of {} TBs in detail, bound {:.2} %",
        sampled.cycles,
        full.cycles,
        100.0 * rel(sampled.cycles, full.cycles),
        sampled.l2.accesses,
        full.l2.accesses,
        100.0 * rel(sampled.l2.accesses, full.l2.accesses),
        s.detailed_tbs,
        full.tbs,
        100.0 * s.error_bound
    );
    assert!(s.converged, "{s:?}");
    // 72 waves: the warm-up and the default criterion's six windows leave about a third
    // of the launch to skip (1,471 of 2,304 TBs in detail on 2026-11-29); at least a
    // quarter must be skipped.
    assert!(
        s.skipped_tbs * 4 >= full.tbs,
        "sampling simulated {} of {} TBs",
        s.detailed_tbs,
        full.tbs
    );
    assert_eq!(s.detailed_tbs + s.skipped_tbs, full.tbs);
    assert!(rel(sampled.cycles, full.cycles).abs() <= 0.02);
    assert!(rel(sampled.l2.accesses, full.l2.accesses).abs() <= 0.02);
    assert!(rel(sampled.warp_instructions, full.warp_instructions).abs() <= 0.02);
    // The simulated part is the full run's prefix: fewer cycles than the extrapolation.
    assert!(s.simulated_cycles < sampled.cycles);
}

#[test]
fn rates_that_never_settle_run_in_full() {
    // A tolerance no real launch meets: the run goes to the end in detail, and every
    // counter equals the full run's.
    let strict = SampleOptions {
        tolerance: 1e-9,
        ..SampleOptions::default()
    };
    let full = run("transpose", "waves.json", None);
    let mut sampled = run("transpose", "waves.json", Some(strict));
    let s = sampled.sampling.take().expect("sampling stats");
    assert!(!s.converged);
    assert_eq!(s.skipped_tbs, 0);
    assert_eq!(s.error_bound, 0.0);
    assert_eq!(sampled.to_json(), full.to_json());
}

#[test]
fn sampled_runs_are_deterministic_and_refuse_the_ledger() {
    let a = run("transpose", "waves.json", Some(SampleOptions::default()));
    let b = run("transpose", "waves.json", Some(SampleOptions::default()));
    assert_eq!(a.to_json(), b.to_json());

    let (m, bound) = load("transpose", "small.json");
    let f = m.kernel(&bound.kernel).expect("kernel");
    let mut opts = SimOptions::new(TbPolicy::LRR);
    opts.sample = Some(SampleOptions::default());
    opts.explain = true;
    let e = simulate(&m, f, &bound, &small_volta(), &opts).expect_err("refused");
    assert!(e.to_string().contains("--explain"), "{e}");
}
