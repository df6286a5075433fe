//! Forward progress (issue 41): a warp that spins on a flag another warp of its TB sets must
//! not starve that warp. The interpreter runs warps round robin in time slices
//! (`sim::interp::tb::QUANTUM`), so the order depends on the program alone: the same result and
//! the same instruction counts at any thread count.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use gpu::GpuConfig;
use launch::{BoundLaunch, Launch};
use sim::timing::{simulate, SimOptions, TbPolicy, TimingConfig};
use sim::{NoObserver, Program, RunOptions};

/// `ptx/prodcons.cu` (NVRTC 12.9, `ptx/regenerate.sh`): warp 1 spins on a volatile shared
/// flag until warp 0 has filled a shared buffer and set it; both then meet at
/// `bar.sync 1, 64`. Warp 1 arrives last at the `__syncthreads()` before, so a schedule
/// that runs a warp until it waits goes on with warp 1 into its spin.
const PRODCONS: &str = include_str!("ptx/prodcons.ptx");

fn bound(m: &ptx_parser::Module) -> BoundLaunch {
    let f = m.kernel("prodcons").unwrap();
    let json = r#"{"format": "paver-launch/1", "grid": [4,1,1], "block": [64,1,1],
        "params": [{"index": 0, "buffer": {"type": "f32", "len": 128, "init": "iota"}},
                   {"index": 1, "buffer": {"type": "f32", "len": 128, "init": "zeros"}}]}"#;
    Launch::from_json(json, Path::new("t.json"))
        .unwrap()
        .bind("prodcons", &sim::param_sigs(f), Path::new("."))
        .unwrap()
}

fn run(threads: usize) -> (Vec<f32>, u64) {
    let m = ptx_parser::parse(PRODCONS).unwrap();
    let bound = bound(&m);
    let prog = Program::new(&m, "prodcons").unwrap();
    let opts = RunOptions {
        threads,
        // Far more than the 4 TBs need (a few thousand), far less than a starving spin
        // would burn before the error.
        max_warp_instructions: 10_000_000,
    };
    let r = sim::run(&prog, &bound, &opts, &mut NoObserver).unwrap_or_else(|e| panic!("{e}"));
    let out = r
        .buffer(1)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    (out, r.stats.warp_instructions)
}

#[test]
fn a_consumer_spinning_on_a_shared_flag_does_not_starve_its_producer() {
    let (out, insts) = run(1);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, 2.0 * i as f32 + 1.0, "out[{i}]");
    }
    // The spin runs one time slice per turn of the producer, not until the budget.
    assert!(insts < 100_000, "{insts} warp instructions");
    assert_eq!(
        run(2),
        (out, insts),
        "the order depends on the thread count"
    );
}

/// `ptx/spin3.cu`: warp 0 waits at the final `__syncthreads()`, warp 1 spins on a shared
/// flag, warp 2 computes for `n` steps (past one trace window) before it sets the flag.
const SPIN3: &str = include_str!("ptx/spin3.ptx");

/// The timing model traces each warp on demand, a window of `sim::timing::trace::CHUNK`
/// instructions at a time, in the order its warp scheduler asks: the spinning warp's
/// windows alternate with the producer's, which sets the flag (shown here, with the
/// producer's work longer than one window, because the model does not use the
/// interpreter's time slices).
#[test]
fn the_timing_model_runs_a_producer_behind_a_spinning_warp() {
    let m = ptx_parser::parse(SPIN3).unwrap();
    let f = m.kernel("spin3").unwrap();
    let json = r#"{"format": "paver-launch/1", "grid": [2,1,1], "block": [96,1,1],
        "params": [{"index": 0, "buffer": {"type": "f32", "len": 64, "init": "iota"}},
                   {"index": 1, "buffer": {"type": "f32", "len": 64, "init": "zeros"}},
                   {"index": 2, "value": 1000}]}"#;
    let b = Launch::from_json(json, Path::new("t.json"))
        .unwrap()
        .bind("spin3", &sim::param_sigs(f), Path::new("."))
        .unwrap();
    let cfg = TimingConfig::new(GpuConfig::builtin("volta").unwrap());
    let mut opts = SimOptions::new(TbPolicy::LRR);
    opts.max_warp_instructions = 10_000_000;
    let s = simulate(&m, f, &b, &cfg, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.tbs, 2);
    // Warp 2's 1,000 steps of a few instructions each, warp 1's spin for a slice or two.
    assert!(s.warp_instructions < 100_000, "{}", s.warp_instructions);
}
