//! TBs per SM end to end: `simulate`, `analyze --policy` and `partition` compute them the
//! same way (the `gpu` crate), honour `--registers` / `--tbs-per-sm` / `--ptxas`, count
//! dynamic shared memory, and report the reason on stderr and under `occupancy` in their
//! JSON. Expected values are worked out by hand from `configs/gpus/*.toml` and the CUDA
//! occupancy calculator's rules; no test needs a real ptxas (a fake one is written here).

use std::process::Command;

use serde_json::Value;

use crate::common::root;

const PTX: &str = "kernels/mm_naive/mm_naive.compute_70.ptx";
const LAUNCH: &str = "kernels/mm_naive/small.json";

/// Runs paver with no ptxas reachable (PAVER_PTXAS names a missing file, so it is tried,
/// reported and skipped) unless `ptxas` is given; returns (stdout, stderr).
fn paver(args: &[&str], ptxas: Option<&std::path::Path>) -> (String, String) {
    let missing = root().join("target/no-such-ptxas");
    let out = Command::new(env!("CARGO_BIN_EXE_paver"))
        .args(args)
        .current_dir(root())
        .env("PAVER_PTXAS", ptxas.unwrap_or(&missing))
        .output()
        .expect("run paver");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "paver {args:?}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

fn simulate(extra: &[&str], ptxas: Option<&std::path::Path>) -> (Value, String) {
    let mut args = vec!["simulate", PTX, "--launch", LAUNCH, "--tb-policy", "lrr"];
    args.extend_from_slice(extra);
    let (out, err) = paver(&args, ptxas);
    (serde_json::from_str(&out).unwrap(), err)
}

#[test]
fn simulate_reports_occupancy_from_the_launch_file_and_overrides() {
    // mm_naive: 16x16 = 256 threads (8 warps); the launch file records 32 registers (sm_70).
    // Fermi: 32*32 = 1024 registers/warp; 16384 per sub-partition / 1024 = 16, x2 = 32
    // warps / 8 = 4 TBs (warps allow 48/8 = 6).
    let (v, err) = simulate(&["--gpu", "fermi"], None);
    assert_eq!(v["tbs_per_sm"], 4);
    assert_eq!(v["occupancy"]["limiter"], "registers");
    assert_eq!(v["occupancy"]["registers"]["source"]["kind"], "launch_file");
    assert_eq!(v["occupancy"]["registers"]["source"]["arch"], "sm_70");
    assert!(
        err.contains("occupancy: 4 TBs/SM on gtx480, limited by registers"),
        "{err}"
    );
    // --registers 20: 640/warp -> 25 x2 = 50 / 8 = 6 = the warp limit 48 / 8.
    let (v, _) = simulate(&["--gpu", "fermi", "--registers", "20"], None);
    assert_eq!(v["tbs_per_sm"], 6);
    assert_eq!(v["occupancy"]["registers"]["source"]["kind"], "flag");
    // --tbs-per-sm wins.
    let (v, _) = simulate(&["--gpu", "volta", "--tbs-per-sm", "3"], None);
    assert_eq!(
        (v["tbs_per_sm"].as_u64(), v["occupancy"]["limiter"].as_str()),
        (Some(3), Some("override"))
    );
}

#[test]
fn dynamic_shared_memory_limits_every_command() {
    // 40,000 B of dynamic shared memory on Volta: round_up(40000, 256) = 40192 ->
    // 98304 / 40192 = 2 TBs per SM.
    let (v, _) = simulate(&["--gpu", "volta", "--dynamic-shared", "40000"], None);
    assert_eq!(v["tbs_per_sm"], 2);
    assert_eq!(v["occupancy"]["limiter"], "shared_memory");
    let dir = std::env::temp_dir().join(format!("paver-it-occ-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, s1, s2) = (dir.join("a.json"), dir.join("s1.json"), dir.join("s2.json"));
    paver(
        &[
            "analyze",
            PTX,
            "--launch",
            LAUNCH,
            "--dynamic-shared",
            "40000",
            "--quiet",
            "--policy",
            "rb-ts",
            "--gpu",
            "volta",
            "--schedule",
            s1.to_str().unwrap(),
            "-o",
            a.to_str().unwrap(),
        ],
        None,
    );
    paver(
        &[
            "partition",
            a.to_str().unwrap(),
            "--gpu",
            "volta",
            "--quiet",
            "-o",
            s2.to_str().unwrap(),
        ],
        None,
    );
    for s in [&s1, &s2] {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(s).unwrap()).unwrap();
        assert_eq!(v["tbs_per_sm"], 2, "{}", s.display());
        assert_eq!(v["occupancy"]["shared_bytes_per_tb"], 40000);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fake ptxas that accepts sm_75 only and reports 20 registers: on Fermi (sm_20 asked,
/// the PTX targets sm_70) it runs for sm_75, and 20 registers give 6 TBs per SM.
#[cfg(unix)]
#[test]
fn ptxas_is_run_for_the_nearest_architecture() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("paver-it-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("ptxas");
    std::fs::write(
        &fake,
        "#!/bin/sh\n\
         if [ \"$1\" = --help ]; then echo \"Allowed values for this option:  'sm_75'.\"; exit 0; fi\n\
         if [ \"$2\" != -arch=sm_75 ]; then echo 'ptxas fatal : unsupported' >&2; exit 1; fi\n\
         echo \"ptxas info    : Compiling entry function 'mm_naive' for 'sm_75'\"\n\
         echo \"ptxas info    : Used 20 registers, used 0 barriers, 380 bytes cmem[0]\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (v, err) = simulate(&["--gpu", "fermi"], Some(&fake));
    assert_eq!(v["tbs_per_sm"], 6);
    let src = &v["occupancy"]["registers"]["source"];
    assert_eq!(
        (
            src["kind"].as_str(),
            src["arch"].as_str(),
            src["requested"].as_str()
        ),
        (Some("ptxas"), Some("sm_75"), Some("sm_20"))
    );
    assert!(err.contains("ptxas -arch=sm_75 (asked for sm_20"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
