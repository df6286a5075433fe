//! `paver analyze --dynamic`'s `dynamic_parallelism`: Tang et al.'s Eq. 1, 2, 3 at kernel,
//! TB and warp granularity over every grid of a run, device-launched ones included; numbers
//! computed by hand on a tiny `dp_tb_parent` launch, invariants on `dp_quicksort` and
//! `dp_bfs_level`, and what the JSON says of kernels without device launches.

use serde_json::Value;

use crate::analyze::analyze;
use crate::common::root;

fn path(rel: &str) -> String {
    root().join(rel).to_str().unwrap().to_string()
}

fn hist(v: &Value) -> Vec<u64> {
    v["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn bins(pairs: &[(usize, u64)]) -> Vec<u64> {
    let mut h = vec![0; 10];
    for &(b, n) in pairs {
        h[b] = n;
    }
    h
}

fn pooled(v: &Value) -> (u64, u64) {
    (
        v["reused"].as_u64().unwrap(),
        v["accesses"].as_u64().unwrap(),
    )
}

/// `dp_tb_parent` on 2 TBs of 32 threads (one warp each), 128-byte lines. By hand:
/// - parent TB b: 4 loads of `in` (lines 4b..4b+3, one each) and 4 one-byte stores of
///   `flags` (all in line b): 8 accesses, 5 units; the grid 16 and 10 (Eq. 1: 6/16).
/// - its child grid (launched by TB b's thread 0, so warp 0): 4 TBs of one warp; TB j reads
///   `flags` line b and `in` line 4b+j, writes `out` line 4b+j and adds to `sums` line 0
///   (thread 0's atomic): 4 accesses, 4 units; the grid 16 accesses, 10 units (6/16).
///   Eq. 2: the parent touched the `in` and `flags` lines, not `out` or `sums`: 8/16 for the
///   grid, 2/4 for each child TB against its parent TB (and warp against warp).
/// - the tail launch `dp_tb_total` (TB 0's thread 0): 2 loads of `sums` line 0 and a store
///   to `total`: 3 accesses, 2 units (Eq. 1: 1/3); Eq. 2: 0/3.
/// - siblings (launched by parent TB 0): the child grid of TB 0 and the tail grid share
///   `sums` line 0: R(child -> tail) = 4/16, R(tail -> child) = 2/3; at TB granularity
///   R(child TB -> tail TB) = 1/4 (4 pairs), R(tail TB -> child TB) = 2/3 (4 pairs).
/// - intra-kernel TB pairs: a child grid's TBs share `flags` line b and `sums` line 0, 2 of
///   their 4 accesses: 12 ordered pairs per grid at 0.5; the parent's 2 TBs share nothing.
#[test]
fn dp_tb_child_ratios_by_hand() {
    let doc = analyze(
        &path("kernels/dp/dp_tb_child/dp_tb_child.nvcc13.sm_90.ptx"),
        &path("kernels/dp/dp_tb_child/small.dp_tb_parent.json"),
        &["--dynamic", "--grid", "2", "--block", "32"],
    );
    let dp = &doc["dynamic_parallelism"];
    assert_eq!(dp["measured"], true);
    assert_eq!(dp["launch_sites"], 2);
    assert_eq!(dp["grids"], 4);
    assert_eq!(dp["device_launches"], 3);
    assert_eq!(dp["max_depth"], 1);
    // Run order: the two children, then the tail launch.
    let list = dp["grid_list"].as_array().unwrap();
    let kernels: Vec<&str> = list.iter().map(|g| g["kernel"].as_str().unwrap()).collect();
    assert_eq!(
        kernels,
        ["dp_tb_parent", "dp_tb_child", "dp_tb_child", "dp_tb_total"]
    );
    assert_eq!(list[3]["tail"], true);
    assert_eq!(list[2]["parent"][1], 1, "the second child's parent TB");
    for (g, acc, uniq) in [(0, 16, 10), (1, 16, 10), (2, 16, 10), (3, 3, 2)] {
        assert_eq!(list[g]["accesses"], acc, "grid {g}");
        assert_eq!(list[g]["unique"], uniq, "grid {g}");
    }
    assert_eq!(list[1]["parent_child_ratio"], 0.5);
    assert_eq!(list[3]["parent_child_ratio"], 0.0);

    let k = &dp["kernel"];
    assert_eq!(hist(&k["self_reuse"]), bins(&[(3, 4)]));
    assert_eq!(pooled(&k["self_reuse"]), (6 + 6 + 6 + 1, 16 + 16 + 16 + 3));
    assert_eq!(hist(&k["parent_child"]), bins(&[(0, 1), (5, 2)]));
    assert_eq!(pooled(&k["parent_child"]), (16, 35));
    assert_eq!(hist(&k["sibling"]), bins(&[(2, 1), (6, 1)]));
    assert_eq!(pooled(&k["sibling"]), (4 + 2, 16 + 3));
    assert_eq!(k["sibling"]["pairs_without_sharing"], 0);

    let t = &dp["tb"];
    // 2 parent TBs at 3/8, 8 child TBs at 0, the tail TB at 1/3.
    assert_eq!(hist(&t["self_reuse"]), bins(&[(0, 8), (3, 3)]));
    assert_eq!(hist(&t["parent_child"]), bins(&[(0, 1), (5, 8)]));
    assert_eq!(pooled(&t["parent_child"]), (16, 35));
    assert_eq!(hist(&t["intra_kernel"]), bins(&[(5, 24)]));
    assert_eq!(t["intra_kernel"]["pairs_without_sharing"], 2);
    assert_eq!(hist(&t["sibling"]), bins(&[(2, 4), (6, 4)]));
    assert_eq!(pooled(&t["sibling"]), (4 + 4 * 2, 4 * 4 + 4 * 3));

    // One warp per TB: the warps' ratios are the TBs'; no pair of warps in a TB.
    let w = &dp["warp"];
    assert_eq!(w["self_reuse"], t["self_reuse"]);
    assert_eq!(w["parent_child"], t["parent_child"]);
    assert_eq!(w["inter_warp"]["count"], 0);
    assert_eq!(w["inter_warp"]["pairs_without_sharing"], 0);

    let per: Vec<&str> = dp["per_kernel"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(per, ["dp_tb_parent", "dp_tb_child", "dp_tb_total"]);
}

/// Checks the invariants of one `dynamic_parallelism` object: every ratio in [0, 1], every
/// histogram summing to its count, counts plus empties equal to the streams (grids, TBs,
/// warps; the children's for Eq. 2).
fn check_invariants(dp: &Value) {
    let list = dp["grid_list"].as_array().unwrap();
    let grids = dp["grids"].as_u64().unwrap();
    assert!(grids > 1, "the kernel launched no grid");
    assert_eq!(dp["device_launches"].as_u64().unwrap(), grids - 1);
    let stats: Vec<&Value> = ["kernel", "tb", "warp"]
        .iter()
        .flat_map(|l| dp[*l].as_object().unwrap().values())
        .collect();
    for s in stats {
        let h = hist(s);
        assert_eq!(h.iter().sum::<u64>(), s["count"].as_u64().unwrap());
        let (r, a) = pooled(s);
        assert!(r <= a);
        for key in ["pooled", "mean"] {
            let v = s[key].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&v), "{key} = {v}");
        }
    }
    let n = |v: &Value| v["count"].as_u64().unwrap() + v["empty"].as_u64().unwrap();
    assert_eq!(n(&dp["kernel"]["self_reuse"]), grids);
    assert_eq!(n(&dp["kernel"]["parent_child"]), grids - 1);
    if list.len() as u64 == grids {
        let tbs = |g: &Value| -> u64 {
            g["grid"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .product()
        };
        let warps = |g: &Value| -> u64 {
            let t: u64 = g["block"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .product();
            tbs(g) * t.div_ceil(32)
        };
        let all_tbs: u64 = list.iter().map(tbs).sum();
        let child_tbs: u64 = list[1..].iter().map(tbs).sum();
        let all_warps: u64 = list.iter().map(warps).sum();
        let child_warps: u64 = list[1..].iter().map(warps).sum();
        assert_eq!(n(&dp["tb"]["self_reuse"]), all_tbs);
        assert_eq!(n(&dp["tb"]["parent_child"]), child_tbs);
        assert_eq!(n(&dp["warp"]["self_reuse"]), all_warps);
        assert_eq!(n(&dp["warp"]["parent_child"]), child_warps);
        for g in &list[1..] {
            let r = g["parent_child_ratio"].as_f64().unwrap_or(0.0);
            assert!((0.0..=1.0).contains(&r));
            assert!(g["parent"][0].as_u64().unwrap() < g["id"].as_u64().unwrap());
        }
    }
    let per_grids: u64 = dp["per_kernel"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["grids"].as_u64().unwrap())
        .sum();
    assert_eq!(per_grids, grids);
}

/// The corpus's recursive quicksort (nesting several levels) and BFS (hundreds of children)
/// keep the invariants.
#[test]
fn dp_quicksort_and_bfs_invariants() {
    for (ptx, launch) in [
        (
            "kernels/dp/dp_quicksort/dp_quicksort.nvcc13.sm_90.ptx",
            "kernels/dp/dp_quicksort/small.dp_quicksort.json",
        ),
        (
            "kernels/dp/dp_bfs/dp_bfs.nvcc13.sm_90.ptx",
            "kernels/dp/dp_bfs/small.dp_bfs_level.json",
        ),
    ] {
        let doc = analyze(&path(ptx), &path(launch), &["--dynamic"]);
        check_invariants(&doc["dynamic_parallelism"]);
    }
}

/// A kernel without device launches says so, statically and dynamically (where it is not
/// traced grid by grid).
#[test]
fn kernels_without_device_launches_say_so() {
    let ptx = path("kernels/mm_naive/mm_naive.compute_70.ptx");
    let launch = path("kernels/mm_naive/small.json");
    let st = analyze(&ptx, &launch, &[]);
    assert_eq!(st["dynamic_parallelism"]["measured"], false);
    assert_eq!(st["dynamic_parallelism"]["launch_sites"], 0);
    assert!(st["dynamic_parallelism"]["note"]
        .as_str()
        .unwrap()
        .contains("launches no kernel from the device"));
    // With --dynamic too: nothing to measure (Eq. 1 and 3 of its grid are `reuse`), and
    // no grid traced.
    let dy = analyze(&ptx, &launch, &["--dynamic"]);
    let dp = &dy["dynamic_parallelism"];
    assert_eq!(dp["measured"], false);
    assert!(dp["note"]
        .as_str()
        .unwrap()
        .contains("launches no kernel from the device"));
    assert!(dp.get("grids").is_none());
    // A DP kernel analysed statically points at --dynamic.
    let st = analyze(
        &path("kernels/dp/dp_tb_child/dp_tb_child.nvcc13.sm_90.ptx"),
        &path("kernels/dp/dp_tb_child/small.dp_tb_parent.json"),
        &[],
    );
    assert_eq!(st["dynamic_parallelism"]["measured"], false);
    assert!(st["dynamic_parallelism"]["note"]
        .as_str()
        .unwrap()
        .contains("--dynamic"));
}

/// The static analysis resolves `dp_tb_parent`'s two launch sites from the launch (2 TBs of
/// 32 threads): the child over 4 blocks of `blockDim.x` with `blockDim.x * 4` bytes of
/// dynamic shared memory, its arguments the parent's buffers, `sums + blockIdx.x` and `base`
/// per parent TB; the tail launch of one block of 32 with `gridDim.x` as its count. BFS's
/// child grid depends on a node's degree, loaded from memory: said so, with the store's line.
#[test]
fn static_child_launches_resolve_or_say_why() {
    let doc = analyze(
        &path("kernels/dp/dp_tb_child/dp_tb_child.nvcc13.sm_90.ptx"),
        &path("kernels/dp/dp_tb_child/small.dp_tb_parent.json"),
        &["--grid", "2", "--block", "32"],
    );
    let dp = &doc["dynamic_parallelism"];
    let sites = dp["launches"].as_array().unwrap();
    assert_eq!(sites.len(), 2);
    assert_eq!(dp["launches_resolved"], 2);
    let c = |v: &Value| {
        assert_eq!(v["kind"], "const", "{v}");
        v["value"].as_i64().unwrap()
    };
    let child = &sites[0];
    assert_eq!(child["kernel"], "dp_tb_child");
    assert_eq!(child["resolved"], true);
    let dims = |d: &Value| -> Vec<i64> { d.as_array().unwrap().iter().map(c).collect() };
    assert_eq!(dims(&child["grid"]), [4, 1, 1]);
    assert_eq!(dims(&child["block"]), [32, 1, 1]);
    assert_eq!(c(&child["shared_bytes"]), 128);
    let params = child["params"].as_array().unwrap();
    let offsets: Vec<u64> = params
        .iter()
        .map(|p| p["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, [0, 8, 16, 24, 32, 36, 40]);
    let indices: Vec<u64> = params
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [0, 1, 2, 3, 4, 5, 6]);
    for (k, buf) in [(0, 0), (1, 1), (2, 2)] {
        assert_eq!(params[k]["value"]["buffer"][0], buf, "argument {k}");
        assert_eq!(params[k]["value"]["buffer"][1], 0, "argument {k}");
    }
    // sums + blockIdx.x: two distinct pointers, 8 bytes apart; base = blockIdx.x * 128.
    assert_eq!(params[3]["value"]["kind"], "per_tb");
    let sums: Vec<i64> = params[3]["value"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(sums[1] - sums[0], 8);
    assert_eq!(params[4]["value"]["values"], serde_json::json!([0, 128]));
    // scale = 2.0f and bias = 0.25 as their bits.
    assert_eq!(c(&params[5]["value"]), 0x4000_0000);
    assert_eq!(c(&params[6]["value"]), 0x3FD0_0000_0000_0000);
    let tail = &sites[1];
    assert_eq!(tail["kernel"], "dp_tb_total");
    assert_eq!(dims(&tail["grid"]), [1, 1, 1]);
    assert_eq!(dims(&tail["block"]), [32, 1, 1]);
    assert_eq!(c(&tail["params"][2]["value"]), 2, "gridDim.x");

    let doc = analyze(
        &path("kernels/dp/dp_bfs/dp_bfs.nvcc13.sm_90.ptx"),
        &path("kernels/dp/dp_bfs/small.dp_bfs_level.json"),
        &[],
    );
    let dp = &doc["dynamic_parallelism"];
    let site = &dp["launches"][0];
    assert_eq!(site["kernel"], "dp_bfs_child");
    assert_eq!(site["resolved"], false);
    assert_eq!(dp["launches_resolved"], 0);
    let unresolved: Vec<&Value> = site["grid"]
        .as_array()
        .unwrap()
        .iter()
        .chain(
            site["params"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| &p["value"]),
        )
        .filter(|v| v["kind"] != "const" && v["kind"] != "per_tb")
        .collect();
    assert!(!unresolved.is_empty());
    assert!(unresolved.iter().any(|v| v["reason"]
        .as_str()
        .is_some_and(|r| r.contains("data-dependent"))
        && v["line"].as_u64().unwrap() > 0));
}
