//! The timing model against a real H100 (issue 38): the eight launches of
//! `reference/h100/` (a copy of the project's H100 calibration data: CUDA sources, the
//! NVRTC PTX that ran, launches and Nsight Compute counters) run on the `h100`
//! configuration with the hardware's plain TB order (LRR), and are held to the issue's
//! bounds: cycle MAPE at most 20 %, Spearman rank correlation of cycles at least 0.95, L1
//! and L2 sector hit rates within 10 points, DRAM bytes read within 10 %.
//!
//! The inputs are rebuilt here bit for bit: `make_inputs.py`'s splitmix64 generators,
//! ported, and each buffer checked against the SHA-256 the H100 run recorded.
//!
//! Hit rates as Nsight Compute counts them: a request that merges into a miss in flight
//! is a hit (paver: `hit_reserve`), and at the L2 so is a store, which allocates its
//! sectors without fetching them (`lts__t_sector_hit_rate` of vecadd, one store per two
//! loads: 36.65 %; of blackscholes_like, two per three: 43.62 %).
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use serde_json::Value;
use sha2::{Digest, Sha256};
use sim::timing::sample::SampleOptions;
use sim::timing::{simulate, SimOptions, Stats, TbPolicy, TimingConfig};
use std::path::{Path, PathBuf};

const C_SEED: u64 = 0xD1B5_4A32_D192_ED03;
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
const M1: u64 = 0xBF58_476D_1CE4_E5B9;
const M2: u64 = 0x94D0_49BB_1331_11EB;

fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(C_SEED)
        .wrapping_add((i + 1).wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(M1);
    z = (z ^ (z >> 27)).wrapping_mul(M2);
    z ^ (z >> 31)
}

fn reference() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference/h100")
}

/// The CSR graph `make_inputs.csr_graph` builds: (row_ptr, col_idx).
fn csr(g: &Value) -> (Vec<i32>, Vec<i32>) {
    let n = g["n"].as_u64().unwrap();
    let (lo, hi, seed) = (
        g["deg_lo"].as_u64().unwrap(),
        g["deg_hi"].as_u64().unwrap(),
        g["seed"].as_u64().unwrap(),
    );
    let mut row = vec![0i32];
    let mut total = 0u64;
    for v in 0..n {
        total += lo + splitmix64(seed, v) % (hi - lo + 1);
        row.push(total as i32);
    }
    let col = (0..total)
        .map(|e| (splitmix64(seed + 1, e) % n) as i32)
        .collect();
    (row, col)
}

/// Buffer `p` of a launch as bytes (little-endian), as `make_inputs.make_buffer` makes it.
fn buffer(p: &Value, graphs: &Value) -> Vec<u8> {
    let n = p["len"].as_u64().unwrap();
    let init = p["init"].as_str().unwrap();
    let seed = p["seed"].as_u64().unwrap_or(0);
    let f32s = |v: Vec<f32>| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let i32s = |v: Vec<i32>| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    match init {
        "zeros" => vec![0; n as usize * 4],
        "rand_uniform" => {
            let lo = p["lo"].as_f64().unwrap_or(0.0);
            let hi = p["hi"].as_f64().unwrap_or(1.0);
            f32s(
                (0..n)
                    .map(|i| {
                        let u = (splitmix64(seed, i) >> 40) as f64 * 2f64.powi(-24);
                        (lo + (hi - lo) * u) as f32
                    })
                    .collect(),
            )
        }
        "rand_int" => {
            let lo = p["lo"].as_i64().unwrap();
            let span = (p["hi"].as_i64().unwrap() - lo) as u64;
            i32s(
                (0..n)
                    .map(|i| (lo + (splitmix64(seed, i) % span) as i64) as i32)
                    .collect(),
            )
        }
        _ => {
            let (kind, name) = init.split_once(':').unwrap();
            let (row, col) = csr(&graphs[name]);
            i32s(if kind == "csr_rowptr" { row } else { col })
        }
    }
}

/// TB order `order` of a `grid` (`make_inputs.tb_order`): `perm[p]` = the logical block
/// physical block `p` runs. `identity_table`: `p`; `random`: the stable argsort of
/// `splitmix64(1, p)`.
fn tb_order(order: &str, nblocks: u64) -> Vec<i32> {
    let mut perm: Vec<i32> = (0..nblocks as i32).collect();
    match order {
        "identity_table" => {}
        "random" => perm.sort_by_key(|&p| splitmix64(1, p as u64)),
        _ => panic!("TB order {order} not ported"),
    }
    perm
}

/// Kernel `name`'s launch `which` (`launch_sim` or `launch_hw`) as a paver launch file, its
/// buffers written to `dir` (checked against the H100 run's SHA-256 where recorded), and
/// the PTX it is for. `order` `None`: the noperm PTX (the measured counters' launch);
/// `Some(o)`: the PTX with the TB-order hook and `perm` = that order's table.
fn launch(
    name: &str,
    k: &Value,
    which: &str,
    order: Option<&str>,
    graphs: &Value,
    dir: &Path,
) -> (String, String) {
    let cfg = &k[which];
    let want = &cfg["inputs_sha256"];
    let mut params = Vec::new();
    for (i, p) in cfg["params"].as_array().unwrap().iter().enumerate() {
        let pname = p["name"].as_str().unwrap();
        let ty = p["elem"].as_str().unwrap_or("i32");
        let file = format!("{name}_{which}_p{i}.bin");
        let bytes = if p.get("buffer").is_some() && p["init"] == "zeros" {
            // No file for the outputs: 256 MB each at the `hw` size.
            params.push(format!(
                r#"{{"index":{i},"buffer":{{"type":"{ty}","len":{},"init":"zeros"}}}}"#,
                p["len"]
            ));
            continue;
        } else if p.get("buffer").is_some() {
            let bytes = buffer(p, graphs);
            let sha = format!("{:x}", Sha256::digest(&bytes));
            if let Some(w) = want.get(pname) {
                assert_eq!(
                    &sha, w,
                    "{name}: buffer {pname} differs from the H100 run's input"
                );
            }
            bytes
        } else if let Some(v) = p.get("scalar") {
            params.push(format!(r#"{{"index":{i},"value":{v}}}"#));
            continue;
        } else if let Some(o) = order {
            let nblocks = cfg["grid"][0].as_u64().unwrap() * cfg["grid"][1].as_u64().unwrap();
            tb_order(o, nblocks)
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect()
        } else {
            // `perm` of the noperm PTX, which never reads it.
            params.push(format!(
                r#"{{"index":{i},"buffer":{{"type":"i32","len":1,"init":"zeros"}}}}"#
            ));
            continue;
        };
        let len = bytes.len() / 4;
        std::fs::write(dir.join(&file), &bytes).unwrap();
        params.push(format!(
            r#"{{"index":{i},"buffer":{{"type":"{ty}","len":{len},"init":"file({file})"}}}}"#
        ));
    }
    let ptx_rel = match order {
        None => format!("ptx/{name}.noperm.sm_90.ptx"),
        Some(_) => format!("ptx/{name}.sm_90.ptx"),
    };
    let res = &k["ptxas_sm_90"][&ptx_rel];
    let json = format!(
        r#"{{"format":"paver-launch/1","kernel":{},"grid":{},"block":{},"params":[{}],"resources":{{"sm_90":{res}}}}}"#,
        k["entry"],
        cfg["grid"],
        cfg["block"],
        params.join(",")
    );
    (ptx_rel, json)
}

/// A launch of kernel `k` on the `h100` configuration with LRR (see [`launch`]); `sample`: with
/// sampled simulation.
fn simulate_launch(
    k: &Value,
    (ptx_rel, json): (String, String),
    dir: &Path,
    sample: bool,
) -> Stats {
    let text = std::fs::read_to_string(reference().join(&ptx_rel)).unwrap();
    let m = ptx_parser::parse(&text).unwrap();
    let entry = k["entry"].as_str().unwrap();
    let f = m.kernel(entry).unwrap();
    let bound = launch::Launch::from_json(&json, dir)
        .unwrap()
        .bind(entry, &sim::param_sigs(f), dir)
        .unwrap();
    let gpu = gpu::GpuConfig::builtin("h100").unwrap();
    let mut tc = TimingConfig::new(gpu);
    tc.regs_per_thread = k["ptxas_sm_90"][&ptx_rel]["registers"]
        .as_u64()
        .map(|r| r as u32);
    let mut opts = SimOptions::new(TbPolicy::LRR);
    if sample {
        opts.sample = Some(SampleOptions::default());
        // 262,144 TBs of about 100 warp instructions each: above the default cap.
        opts.max_warp_instructions = 100_000_000_000;
    }
    simulate(&m, f, &bound, &tc, &opts).unwrap()
}

/// One kernel simulated at its `sim` launch: the statistics and the ncu counters.
fn run(name: &str, k: &Value, graphs: &Value, dir: &Path) -> (Stats, Value) {
    let l = launch(name, k, "launch_sim", None, graphs, dir);
    (simulate_launch(k, l, dir, false), k["ncu"].clone())
}

fn ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        for &t in &idx[i..=j] {
            r[t] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let n = a.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn the_published_h100_launches_within_the_issue_38_bounds() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(reference().join("h100.json")).unwrap())
            .unwrap();
    let dir = std::env::temp_dir().join(format!("paver-h100-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut sim_c, mut hw_c) = (Vec::new(), Vec::new());
    let mut failures = Vec::new();
    let mut table = String::from(
        "kernel             cycles sim / H100     L1 hit % sim / H100   L2 hit % sim / H100   DRAM read B sim / H100\n",
    );
    for (name, k) in doc["kernels"].as_object().unwrap() {
        let (s, n) = run(name, k, &doc["graphs"], &dir);
        let hw = n["sm__cycles_elapsed.max"].as_f64().unwrap();
        let l1 = 100.0 * (s.l1.hits + s.l1.hit_reserve) as f64 / s.l1.accesses.max(1) as f64;
        let l2 = 100.0 * (s.l2.hits + s.l2.hit_reserve + s.l2.writes) as f64
            / s.l2.accesses.max(1) as f64;
        let rw = s.dram.reads + s.dram.writes;
        let dram = if rw == 0 {
            0.0
        } else {
            s.dram.bytes as f64 * s.dram.reads as f64 / rw as f64
        };
        let (l1_hw, l2_hw, dram_hw) = (
            n["l1tex__t_sector_hit_rate.pct"].as_f64().unwrap(),
            n["lts__t_sector_hit_rate.pct"].as_f64().unwrap(),
            n["dram__bytes_read.sum"].as_f64().unwrap(),
        );
        table.push_str(&format!(
            "{name:<18} {:>8} / {:>8} ({:.3})  {l1:6.2} / {l1_hw:6.2}      {l2:6.2} / {l2_hw:6.2}      {dram:>10.0} / {dram_hw:>10.0}\n",
            s.cycles,
            hw,
            s.cycles as f64 / hw
        ));
        if (l1 - l1_hw).abs() > 10.0 {
            failures.push(format!("{name}: L1 hit rate {l1:.2} % against {l1_hw} %"));
        }
        if (l2 - l2_hw).abs() > 10.0 {
            failures.push(format!("{name}: L2 hit rate {l2:.2} % against {l2_hw} %"));
        }
        if (dram / dram_hw - 1.0).abs() > 0.10 {
            failures.push(format!(
                "{name}: DRAM bytes read {dram:.0} against {dram_hw}"
            ));
        }
        sim_c.push(s.cycles as f64);
        hw_c.push(hw);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mape = 100.0
        * sim_c
            .iter()
            .zip(&hw_c)
            .map(|(s, h)| (s - h).abs() / h)
            .sum::<f64>()
        / sim_c.len() as f64;
    let rho = spearman(&sim_c, &hw_c);
    eprintln!("{table}cycle MAPE {mape:.1} %, Spearman {rho:.3}");
    assert_eq!(sim_c.len(), 8);
    if mape > 20.0 {
        failures.push(format!("cycle MAPE {mape:.1} % > 20 %"));
    }
    if rho < 0.95 {
        failures.push(format!("Spearman {rho:.3} < 0.95"));
    }
    assert!(failures.is_empty(), "{}\n{table}", failures.join("\n"));
}

/// Issue 38's TB-order criterion: srad_like at 8192 x 8192 (262,144 TBs, 248 waves, 768 MB
/// of arrays, far beyond the 50 MB L2), random TB order against the identity table, sampled
/// (docs/SAMPLING.md; 7-15 % of the TBs in detail). The H100 ran it in 0.942 ms
/// (identity_table) and 1.045 ms (random): 1.110x. The simulated slowdown must be within
/// 15 % of that ratio. Also printed: the excess (slowdown - 1) against the measured 11.0 %,
/// the stricter reading, which this model does not meet yet (docs/VALIDATION.md, "TB order
/// on the H100: srad_like at 8192 x 8192"). Minutes and 1.5 GB:
/// `cargo test --release -p sim --test h100_timing -- --ignored --nocapture srad_like`.
#[test]
#[ignore = "minutes: 262,144 TBs twice, sampled"]
fn srad_like_large_launch_tb_order_slowdown_within_15_percent_of_the_h100() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(reference().join("h100.json")).unwrap())
            .unwrap();
    let dir = std::env::temp_dir().join(format!("paver-h100-hw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let k = &doc["kernels"]["srad_like"];
    let mhz = gpu::GpuConfig::builtin("h100").unwrap().core.clock_mhz;
    let mut cycles = Vec::new();
    for order in ["identity_table", "random"] {
        let l = launch(
            "srad_like",
            k,
            "launch_hw",
            Some(order),
            &doc["graphs"],
            &dir,
        );
        let s = simulate_launch(k, l, &dir, true);
        let sampled = s.sampling.as_ref().map(|x| x.skipped_tbs).unwrap_or(0);
        eprintln!(
            "srad_like hw {order}: {} cycles ({:.3} ms at {mhz} MHz; H100 {:.3} ms), {sampled} TBs skipped",
            s.cycles,
            s.cycles as f64 / (f64::from(mhz) * 1e3),
            k["hw_ms"][order].as_f64().unwrap()
        );
        cycles.push(s.cycles as f64);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let sim = cycles[1] / cycles[0];
    let hw =
        k["hw_ms"]["random"].as_f64().unwrap() / k["hw_ms"]["identity_table"].as_f64().unwrap();
    eprintln!(
        "slowdown of random over identity_table: simulated {sim:.3}, H100 {hw:.3} (excess {:.1} % against {:.1} %)",
        100.0 * (sim - 1.0),
        100.0 * (hw - 1.0)
    );
    assert!(
        (sim / hw - 1.0).abs() <= 0.15,
        "simulated slowdown {sim:.3} not within 15 % of the H100's {hw:.3}"
    );
}
