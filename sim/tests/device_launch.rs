//! Kernels that launch kernels (`kernels/dp/`, issue 43): the interpreter's outputs against CPU
//! mirrors of each program, the number and depth of the child grids, byte-identical results
//! at 1 and 2 threads, and the errors of launches that cannot run; the timing model running
//! the same launches (child grids, TBs and depth as the interpreter's, the launch latency,
//! byte-identical stats on a second run).

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

mod common;

use std::path::PathBuf;

use common::{inputs, root, scalar};
use launch::{BoundLaunch, Launch};
use sim::{NoObserver, Program, RunOptions, RunResult, SimError};

fn dir(name: &str) -> PathBuf {
    root().join("kernels").join("dp").join(name)
}

/// Binds `kernels/dp/<name>/small.<kernel>.json` to `ptx` (the corpus PTX unless given).
fn bind(name: &str, kernel: &str, ptx: Option<&str>) -> (ptx_parser::Module, BoundLaunch) {
    let d = dir(name);
    let text = match ptx {
        Some(t) => t.to_string(),
        None => std::fs::read_to_string(d.join(format!("{name}.nvcc13.sm_90.ptx"))).unwrap(),
    };
    let module = ptx_parser::parse(&text).unwrap();
    let launch = Launch::read(&d.join(format!("small.{kernel}.json"))).unwrap();
    let f = module.kernel(kernel).unwrap();
    let bound = launch.bind(kernel, &sim::param_sigs(f), &d).unwrap();
    (module, bound)
}

fn run_with(
    module: &ptx_parser::Module,
    kernel: &str,
    bound: &BoundLaunch,
    threads: usize,
) -> Result<RunResult, SimError> {
    let prog = Program::new(module, kernel).unwrap();
    let opts = RunOptions {
        threads,
        ..RunOptions::default()
    };
    sim::run(&prog, bound, &opts, &mut NoObserver)
}

/// Runs at 1 and 2 threads, checks that every buffer is byte-identical, returns the first.
fn run(name: &str, kernel: &str) -> (BoundLaunch, Vec<Option<Vec<u8>>>, RunResult) {
    let (module, bound) = bind(name, kernel, None);
    let a = run_with(&module, kernel, &bound, 1).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let b = run_with(&module, kernel, &bound, 2).unwrap();
    for i in 0..bound.params.len() {
        assert_eq!(
            a.buffer(i),
            b.buffer(i),
            "{kernel}: buffer {i} at 1 and 2 threads"
        );
    }
    assert_eq!(a.stats, b.stats);
    let ins = inputs(&bound);
    (bound, ins, a)
}

fn i32s(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn bfs_level_matches_cpu() {
    let (bound, ins, r) = run("dp_bfs", "dp_bfs_level");
    let row = i32s(ins[0].as_deref().unwrap());
    let col = i32s(ins[1].as_deref().unwrap());
    let frontier = ins[2].clone().unwrap();
    let mut next = ins[3].clone().unwrap();
    let mut cost = i32s(ins[4].as_deref().unwrap());
    let n = scalar(&bound, 5) as usize;
    let level = scalar(&bound, 6) as i32;
    let threshold = scalar(&bound, 7) as i32;
    let mut children = 0;
    for u in 0..n {
        if frontier[u] == 0 {
            continue;
        }
        let (b, e) = (row[u] as usize, row[u + 1] as usize);
        if (e - b) as i32 > threshold {
            children += 1;
        }
        for &v in &col[b..e] {
            if cost[v as usize] < 0 {
                cost[v as usize] = level + 1;
                next[v as usize] = 1;
            }
        }
    }
    assert!(
        children > 10,
        "the launch exercises few child grids: {children}"
    );
    assert_eq!(r.stats.device_launches, children);
    assert_eq!(r.stats.max_depth, 1);
    assert_eq!(r.buffer(3).unwrap(), &next[..]);
    assert_eq!(i32s(r.buffer(4).unwrap()), cost);
}

/// The kernel's quicksort on the CPU; the number of child grids it launches.
fn quicksort(d: &mut [i32], left: i32, right: i32, depth: i32, max_depth: i32) -> u64 {
    if depth >= max_depth || right - left <= 16 {
        for i in left..=right {
            let (mut min_val, mut min_idx) = (d[i as usize], i);
            for j in i + 1..=right {
                if d[j as usize] < min_val {
                    min_idx = j;
                    min_val = d[j as usize];
                }
            }
            if i != min_idx {
                d[min_idx as usize] = d[i as usize];
                d[i as usize] = min_val;
            }
        }
        return 0;
    }
    let (mut l, mut r) = (left, right);
    let pivot = d[((left + right) / 2) as usize];
    while l <= r {
        let mut lval = d[l as usize];
        let mut rval = d[r as usize];
        while lval < pivot {
            l += 1;
            lval = d[l as usize];
        }
        while rval > pivot {
            r -= 1;
            rval = d[r as usize];
        }
        if l <= r {
            d[l as usize] = rval;
            d[r as usize] = lval;
            l += 1;
            r -= 1;
        }
    }
    let mut n = 0;
    if left < r {
        n += 1 + quicksort(d, left, r, depth + 1, max_depth);
    }
    if l < right {
        n += 1 + quicksort(d, l, right, depth + 1, max_depth);
    }
    n
}

#[test]
fn recursive_quicksort_matches_cpu() {
    let (bound, ins, r) = run("dp_quicksort", "dp_quicksort");
    let mut data = i32s(ins[0].as_deref().unwrap());
    let right = scalar(&bound, 2) as i32;
    let max_depth = scalar(&bound, 4) as i32;
    let launches = quicksort(&mut data, 0, right, 0, max_depth);
    let mut sorted = i32s(ins[0].as_deref().unwrap());
    sorted.sort();
    assert_eq!(data, sorted, "the CPU mirror sorts");
    assert_eq!(i32s(r.buffer(0).unwrap()), sorted);
    assert!(launches > 50, "{launches}");
    assert_eq!(r.stats.device_launches, launches);
    assert!(r.stats.max_depth >= 5, "{}", r.stats.max_depth);
}

#[test]
fn tail_launch_chain_nests_to_its_depth() {
    let (_, _, r) = run("dp_quicksort", "dp_chain");
    let out = i32s(r.buffer(0).unwrap());
    let want: Vec<i32> = (0..32).map(|i| if i < 8 { i } else { -1 }).collect();
    assert_eq!(out, want);
    assert_eq!(r.stats.device_launches, 7);
    assert_eq!(r.stats.max_depth, 7);
}

#[test]
fn per_tb_children_and_tail_launch_match_cpu() {
    let (bound, ins, r) = run("dp_tb_child", "dp_tb_parent");
    let input = f32s(ins[0].as_deref().unwrap());
    let scale = f32::from_bits(scalar(&bound, 5) as u32);
    let bias = f64::from_bits(scalar(&bound, 6));
    let (tbs, block) = (bound.grid.x as usize, bound.block.x as usize);
    let mut flags = vec![0u8; input.len()];
    let mut out = vec![0f32; input.len()];
    let mut sums = vec![0f64; tbs];
    for (b, sum) in sums.iter_mut().enumerate() {
        let base = b * block * 4;
        for i in base..base + block * 4 {
            flags[i] = u8::from(input[i] > 0.5);
        }
        // The child grid: 4 blocks, in block order (its f64 atomics run serially).
        for cb in 0..4 {
            let mut part: Vec<f32> = (0..block)
                .map(|t| {
                    let i = base + cb * block + t;
                    out[i] = if flags[i] != 0 {
                        input[i].mul_add(scale, bias as f32)
                    } else {
                        input[i]
                    };
                    out[i]
                })
                .collect();
            let mut s = block / 2;
            while s > 0 {
                for t in 0..s {
                    part[t] += part[t + s];
                }
                s /= 2;
            }
            *sum += f64::from(part[0]);
        }
    }
    // The tail launch runs after every child.
    let total: f64 = sums.iter().fold(0.0, |a, &s| a + s);
    assert_eq!(r.buffer(1).unwrap(), &flags[..]);
    assert_eq!(f32s(r.buffer(2).unwrap()), out);
    assert_eq!(f64s(r.buffer(3).unwrap()), sums);
    assert_eq!(f64s(r.buffer(4).unwrap()), vec![total]);
    assert!(total > 0.0);
    assert_eq!(r.stats.device_launches, tbs as u64 + 1);
}

fn corpus_ptx(name: &str) -> String {
    std::fs::read_to_string(dir(name).join(format!("{name}.nvcc13.sm_90.ptx"))).unwrap()
}

fn run_err(name: &str, kernel: &str, ptx: &str, edit: impl FnOnce(&mut BoundLaunch)) -> String {
    let (module, mut bound) = bind(name, kernel, Some(ptx));
    edit(&mut bound);
    match run_with(&module, kernel, &bound, 1) {
        Ok(_) => panic!("{kernel} ran"),
        Err(e) => e.to_string(),
    }
}

/// The 1-based line of the first line of `ptx` containing `needle`.
fn line_of(ptx: &str, needle: &str) -> usize {
    ptx.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn nesting_beyond_the_limit_is_a_located_error() {
    let ptx = corpus_ptx("dp_quicksort");
    let e = run_err("dp_quicksort", "dp_chain", &ptx, |b| {
        b.params[2].value = launch::BoundValue::Scalar { bits: 40 };
    });
    assert!(e.contains("device-side launch"), "{e}");
    assert!(e.contains("25 deep") && e.contains("limit of 24"), "{e}");
    assert!(e.contains("kernel dp_chain"), "{e}");
    assert!(
        e.contains("__cudaCDP2LaunchDeviceV2") || e.contains("call.uni"),
        "{e}"
    );
}

#[test]
fn bad_child_configuration_is_a_located_error() {
    // The chain's child block of 32 threads becomes 2048.
    let ptx = corpus_ptx("dp_quicksort");
    let at = ptx.rfind("st.param.b32 \t[param2+0], 32;").unwrap();
    let mut bad = ptx.clone();
    bad.replace_range(
        at..at + "st.param.b32 \t[param2+0], 32;".len(),
        "st.param.b32 \t[param2+0], 2048;",
    );
    let e = run_err("dp_quicksort", "dp_chain", &bad, |_| {});
    assert!(
        e.contains("invalid configuration for child kernel `dp_chain`"),
        "{e}"
    );
    assert!(e.contains("2048 threads"), "{e}");
    let line = line_of(&bad, "__cudaCDP2GetParameterBufferV2, ");
    assert!(
        e.contains(&format!("PTX line {}", line - 1)) || e.contains("PTX line"),
        "{e}"
    );
}

#[test]
fn cdp1_device_synchronize_is_refused_by_name() {
    // CDP1 PTX (CUDA 11 and earlier) waited for children with cudaDeviceSynchronize.
    let ptx =
        corpus_ptx("dp_quicksort").replace("__cudaCDP2StreamDestroy", "cudaDeviceSynchronize");
    let (module, bound) = bind("dp_quicksort", "dp_quicksort", Some(&ptx));
    let prog = Program::new(&module, "dp_quicksort").unwrap();
    assert!(prog
        .unsupported()
        .iter()
        .any(|(_, _, why)| why.contains("cudaDeviceSynchronize")));
    let e = run_with(&module, "dp_quicksort", &bound, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cudaDeviceSynchronize") && e.contains("CDP2"),
        "{e}"
    );
    assert!(
        e.contains("kernel dp_quicksort, TB (0,0,0), thread (0,0,0), PTX line"),
        "{e}"
    );
}

#[test]
fn unknown_stream_is_a_located_error() {
    // A launch into a stream handle nobody created.
    let ptx = corpus_ptx("dp_quicksort");
    let bad = ptx.replacen(
        "st.param.b64 \t[param1+0], 3;",
        "st.param.b64 \t[param1+0], 77;",
        1,
    );
    assert_ne!(bad, ptx);
    let e = run_err("dp_quicksort", "dp_chain", &bad, |_| {});
    assert!(e.contains("stream 0x4d is not"), "{e}");
}

/// The corpus launches: (directory, kernel).
const DP_LAUNCHES: [(&str, &str); 4] = [
    ("dp_bfs", "dp_bfs_level"),
    ("dp_quicksort", "dp_quicksort"),
    ("dp_quicksort", "dp_chain"),
    ("dp_tb_child", "dp_tb_parent"),
];

fn volta() -> sim::timing::TimingConfig {
    sim::timing::TimingConfig::new(gpu::GpuConfig::builtin("volta").unwrap())
}

fn simulate(
    name: &str,
    kernel: &str,
    cfg: &sim::timing::TimingConfig,
    policy: sim::timing::TbPolicy,
) -> Result<sim::timing::Stats, SimError> {
    let (module, bound) = bind(name, kernel, None);
    let f = module.kernel(kernel).unwrap();
    sim::timing::simulate(
        &module,
        f,
        &bound,
        cfg,
        &sim::timing::SimOptions::new(policy),
    )
}

/// The timing model runs the grids the interpreter runs: as many child grids and TBs, as
/// deep; the same warp instructions where the kernel's work does not depend on the order
/// grids run in (dp_bfs's children skip nodes another grid visited first, and here children
/// run beside their parent, in the interpreter after it); identical stats on a second run.
#[test]
fn timing_model_runs_the_interpreters_child_grids() {
    let cfg = volta();
    for (name, kernel) in DP_LAUNCHES {
        let (_, _, r) = run(name, kernel);
        let s = simulate(name, kernel, &cfg, sim::timing::TbPolicy::LRR).unwrap();
        let dl = s.device_launches.as_ref().unwrap();
        assert_eq!(s.tbs, r.stats.tbs, "{kernel}: TBs");
        assert_eq!(
            dl.child_grids, r.stats.device_launches,
            "{kernel}: child grids"
        );
        assert_eq!(dl.max_depth, r.stats.max_depth, "{kernel}: depth");
        assert_eq!(dl.host_tbs + dl.child_tbs, s.tbs, "{kernel}: TB split");
        assert_eq!(
            s.sms.iter().map(|x| x.tbs).sum::<u64>(),
            s.tbs,
            "{kernel}: TBs the SMs ran"
        );
        if kernel != "dp_bfs_level" {
            assert_eq!(s.warp_instructions, r.stats.warp_instructions, "{kernel}");
        }
        let again = simulate(name, kernel, &cfg, sim::timing::TbPolicy::LRR).unwrap();
        assert_eq!(s.to_json(), again.to_json(), "{kernel}: a second run");
    }
}

/// Each child grid becomes dispatchable no earlier than its launch latency after its launch
/// and completes after that; the launch ends when the last grid completes; with no latency
/// the chain of seven nested tail launches runs faster.
#[test]
fn child_grids_wait_for_their_launch_latency() {
    let cfg = volta();
    let s = simulate("dp_quicksort", "dp_chain", &cfg, sim::timing::TbPolicy::LRR).unwrap();
    let dl = s.device_launches.as_ref().unwrap();
    let first = cfg.dp.latency_cycles(1, cfg.gpu.core.clock_mhz);
    assert!(first > 10_000, "{first}");
    for g in &dl.grids {
        assert!(g.dispatchable >= g.launched + first, "{g:?}");
        assert!(g.completed > g.dispatchable, "{g:?}");
        assert!(g.completed <= s.cycles, "{g:?}");
    }
    assert!(s.cycles >= 7 * first, "{}", s.cycles);
    let mut fast = cfg.clone();
    fast.set("dp.device_launch_ns", "0").unwrap();
    fast.set("dp.device_launch_step_ns", "0").unwrap();
    let f = simulate(
        "dp_quicksort",
        "dp_chain",
        &fast,
        sim::timing::TbPolicy::LRR,
    )
    .unwrap();
    assert!(f.cycles < s.cycles / 10, "{} vs {}", f.cycles, s.cycles);
    assert_eq!(f.tbs, s.tbs);
    assert!(f.to_json().contains("\"device_launch_ns\": 0"));
    assert!(
        !s.to_json().contains("device_launch_ns"),
        "defaults are left out"
    );
}

/// A TB policy whose TBs are fixed at the launch refuses a child grid, naming itself and the
/// launch.
#[test]
fn fixed_tb_policies_refuse_child_grids() {
    let e = simulate(
        "dp_quicksort",
        "dp_chain",
        &volta(),
        sim::timing::TbPolicy::BCS,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("bcs TB policy cannot dispatch grids"), "{e}");
    assert!(e.contains("kernel dp_chain"), "{e}");
}

/// LASER (`--tb-policy laser`) runs the same grids as the baseline, reports its decisions
/// and monitor hit rates, and on the recursive quicksort (whose children read the range
/// their parent partitioned) places every child on its parent's SM, raising the L1 hit
/// rate; a second run is identical.
#[test]
fn laser_places_reusing_children_on_their_parents_sm() {
    let cfg = volta();
    let laser = sim::timing::TbPolicy::parse("laser").unwrap();
    for (name, kernel) in DP_LAUNCHES {
        let base = simulate(name, kernel, &cfg, sim::timing::TbPolicy::LRR).unwrap();
        let s = simulate(name, kernel, &cfg, laser).unwrap();
        assert_eq!(s.tbs, base.tbs, "{kernel}");
        let p = s
            .device_launches
            .as_ref()
            .unwrap()
            .placement
            .clone()
            .unwrap();
        let d = base.device_launches.as_ref().unwrap();
        assert_eq!(
            p.grids_on_parent_sm + p.grids_global,
            d.child_grids,
            "{kernel}"
        );
        assert!(base.device_launches.as_ref().unwrap().placement.is_none());
        let again = simulate(name, kernel, &cfg, laser).unwrap();
        assert_eq!(s.to_json(), again.to_json(), "{kernel}: a second run");
    }
    let base = simulate(
        "dp_quicksort",
        "dp_quicksort",
        &cfg,
        sim::timing::TbPolicy::LRR,
    )
    .unwrap();
    let s = simulate("dp_quicksort", "dp_quicksort", &cfg, laser).unwrap();
    let p = s
        .device_launches
        .as_ref()
        .unwrap()
        .placement
        .clone()
        .unwrap();
    assert_eq!(p.tbs_on_parent_sm, 429);
    let rate = |c: &sim::timing::cache::CacheStats| c.hits as f64 / c.accesses as f64;
    assert!(
        rate(&s.l1) > rate(&base.l1),
        "{} vs {}",
        rate(&s.l1),
        rate(&base.l1)
    );
    assert!(s.cycles < base.cycles, "{} vs {}", s.cycles, base.cycles);
}

/// LASER with its two-level warp scheduler (`--warp-policy laser-two-level`) runs every
/// corpus launch with the baseline's TB counts, the same on a second run.
#[test]
fn laser_with_its_two_level_warp_scheduler_runs_the_corpus() {
    let cfg = volta();
    let laser = sim::timing::TbPolicy::parse("laser").unwrap();
    let two = sim::timing::WarpPolicy::parse("laser-two-level").unwrap();
    for (name, kernel) in DP_LAUNCHES {
        let (module, bound) = bind(name, kernel, None);
        let f = module.kernel(kernel).unwrap();
        let mut opts = sim::timing::SimOptions::new(laser);
        opts.warp_policy = two;
        let a = sim::timing::simulate(&module, f, &bound, &cfg, &opts).unwrap();
        let b = sim::timing::simulate(&module, f, &bound, &cfg, &opts).unwrap();
        let (_, _, r) = run(name, kernel);
        assert_eq!(a.tbs, r.stats.tbs, "{kernel}");
        assert_eq!(a.warp_policy, "laser-two-level");
        assert_eq!(a.to_json(), b.to_json(), "{kernel}: a second run");
    }
}

/// A child kernel's TBs share an SM by their own kernel's occupancy, not the host's:
/// dp_bfs's host kernel has 128-thread TBs (4 warps: 16 per Volta SM by its 64 warp slots),
/// its child 64-thread TBs (2 warps: 32 by warps, and Volta's 32 TB slots), by hand.
#[test]
fn child_kernels_take_their_own_occupancy() {
    let cfg = volta();
    let s = simulate("dp_bfs", "dp_bfs_level", &cfg, sim::timing::TbPolicy::LRR).unwrap();
    assert_eq!(s.occupancy.tbs_per_sm, 16);
    let occ = &s.device_launches.as_ref().unwrap().occupancy;
    assert_eq!(occ.len(), 1, "{occ:?}");
    assert_eq!(occ[0].kernel, "dp_bfs_child");
    assert_eq!(occ[0].block, [64, 1, 1]);
    assert_eq!(occ[0].occupancy.tbs_per_sm, 32);
    assert_eq!(occ[0].occupancy.by_warps, 32);
}
