//! The timing model's memory and waiting (issue 11): per-warp traces are streamed, so the
//! trace memory of a run is bounded by its resident warps and not by the instructions it
//! executes; a request refused for lack of an MSHR waits for the fill that admits it and
//! counts as one reservation fail, however long it waits.

use gpu::GpuConfig;
use launch::{BoundLaunch, Launch};
use sim::timing::{simulate_with_info, trace, RunInfo, SimOptions, Stats, TbPolicy, TimingConfig};
use std::path::Path;

fn kernels() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

/// Naive GEMM (the corpus's NVRTC build) of size `n` on a `g x g` grid of 16x16 TBs: every
/// thread runs a k loop of `n` iterations.
fn mm_naive(n: u64, g: u64) -> (ptx_parser::Module, BoundLaunch) {
    let d = kernels().join("mm_naive");
    let m = ptx_parser::parse_file(&d.join("mm_naive.compute_70.ptx")).expect("parse");
    let len = n * n;
    let json = format!(
        r#"{{"format": "paver-launch/1", "grid": [{g},{g},1], "block": [16,16,1], "params": [
  {{"index": 0, "buffer": {{"type": "f32", "len": {len}, "init": "rand(1)"}}}},
  {{"index": 1, "buffer": {{"type": "f32", "len": {len}, "init": "rand(2)"}}}},
  {{"index": 2, "buffer": {{"type": "f32", "len": {len}, "init": "zeros"}}}},
  {{"index": 3, "value": {n}}}]}}"#
    );
    let f = m.kernel("mm_naive").expect("kernel");
    let b = Launch::from_json(&json, Path::new("t.json"))
        .expect("launch")
        .bind("mm_naive", &sim::param_sigs(f), &d)
        .expect("bind");
    (m, b)
}

fn run(m: &ptx_parser::Module, b: &BoundLaunch, cfg: &TimingConfig) -> (Stats, RunInfo) {
    let f = m.kernel("mm_naive").expect("kernel");
    simulate_with_info(
        m,
        f,
        b,
        cfg,
        &SimOptions::new(TbPolicy::LRR),
        &mut |_, _, _| {},
    )
    .expect("simulate")
}

/// One TB of naive GEMM with a k loop 8 times longer executes about 8 times the warp
/// instructions, but holds no more trace: at most [`trace::CHUNK`] instructions per warp,
/// each with at most one memory access of at most 32 blocks per lane pair, whatever the
/// loop length. Whole-TB traces (12 bytes per instruction and more) would grow 8-fold.
#[test]
fn trace_memory_is_bounded_by_resident_warps() {
    let cfg = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
    let (m1, b1) = mm_naive(256, 1);
    let (m2, b2) = mm_naive(2048, 1);
    let (s1, i1) = run(&m1, &b1, &cfg);
    let (s2, i2) = run(&m2, &b2, &cfg);
    assert!(
        s2.warp_instructions >= 7 * s1.warp_instructions,
        "{} vs {}",
        s2.warp_instructions,
        s1.warp_instructions
    );
    // The bound from the chunk size alone: 8 warps, CHUNK instructions each, an
    // instruction record, a memory record and up to 64 blocks of 8 bytes per instruction
    // (a generous upper bound on each vector's capacity, doubled for growth).
    let per_inst = 12 + 12 + 64 * 8;
    let bound = 8 * trace::CHUNK * per_inst * 2;
    assert!(i1.peak_trace_bytes > 0);
    assert!(
        i2.peak_trace_bytes <= bound,
        "{} > {bound}",
        i2.peak_trace_bytes
    );
    // And it does not grow with the loop.
    assert!(
        i2.peak_trace_bytes <= i1.peak_trace_bytes * 2,
        "{} vs {}",
        i2.peak_trace_bytes,
        i1.peak_trace_bytes
    );
    // A whole-TB trace of the long run would need at least 12 bytes per instruction.
    assert!((i2.peak_trace_bytes as u64) < s2.warp_instructions * 12 / 4);
}

/// With two MSHRs per L1 and per L2 slice and a kernel that misses everywhere, many
/// requests are refused; each is counted once, so there are never more reservation fails
/// than requests presented (reads at the L1; reads arriving at the L2 are the L1's misses).
/// Polling counted every retry: far more fails than requests.
#[test]
fn reservation_fails_count_each_request_once() {
    let mut cfg = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
    for (k, v) in [
        ("l1.mshr_entries", "2"),
        ("l2.mshr_entries", "2"),
        ("l2.mshr_max_merge", "2"),
    ] {
        cfg.set(k, v).expect("set");
    }
    let (m, b) = mm_naive(256, 4);
    let (s, _) = run(&m, &b, &cfg);
    assert!(s.l1.reservation_fails > 0, "{:?}", s.l1);
    assert!(s.l2.reservation_fails > 0, "{:?}", s.l2);
    let l1_reads = s.l1.accesses - s.l1.writes;
    assert!(
        s.l1.reservation_fails <= l1_reads,
        "L1 {} fails for {l1_reads} reads",
        s.l1.reservation_fails
    );
    let l2_reads = s.l2.accesses - s.l2.writes;
    assert!(
        s.l2.reservation_fails <= l2_reads,
        "L2 {} fails for {l2_reads} reads",
        s.l2.reservation_fails
    );
    // Every request reaches the L2 and is served once (waiting loses or duplicates none).
    assert_eq!(s.l2.accesses, s.noc.requests);
    assert_eq!(s.noc.replies, l2_reads);
}
