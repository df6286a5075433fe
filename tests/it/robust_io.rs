//! Bad input never crashes, hangs, exhausts memory or lies (issue 14, families 1, 2, 5, 6, 7
//! and the command-line messages of 9): failing outputs, sizes checked before allocating,
//! atomic outputs, launch values that do not fit their buffers, broken GPU configurations,
//! and no bad input ending in a panic (status 101) or a signal.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{paver, paver_env, paver_err, paver_ok, root};

const MM: &str = "kernels/mm_naive/mm_naive.compute_70.ptx";
const MM_LAUNCH: &str = "kernels/mm_naive/small.json";

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("paver-robust-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts a clean failure with status `code` and returns stderr.
fn fails_with(out: &Output, code: i32, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{what}: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{what}: {stderr}"
    );
    stderr
}

/// Runs `paver` with standard output on `/dev/full` (every write fails: no space left).
fn paver_to_dev_full(args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    Command::new(env!("CARGO_BIN_EXE_paver"))
        .args(args)
        .current_dir(root())
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .expect("run paver")
}

// Family 1: writing to a full device or a closed pipe.

#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    for args in [
        vec!["parse", MM],
        vec!["parse", MM, "--json"],
        vec!["inspect", MM],
        vec!["inspect", MM, "--json"],
        vec!["launch", MM, "--launch", MM_LAUNCH],
        vec!["analyze", MM, "--launch", MM_LAUNCH],
        vec!["run", MM, "--launch", MM_LAUNCH],
        vec![
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "--quiet",
            "--set",
            "core.num_sms=4",
        ],
    ] {
        let out = paver_to_dev_full(&args);
        let stderr = fails_with(&out, 1, &args.join(" "));
        assert!(
            stderr.contains("standard output") && stderr.contains("No space left"),
            "{args:?}: {stderr}"
        );
    }
}

/// Runs `paver` with standard output on a pipe of which the test reads `keep` bytes and then
/// closes; returns the status and stderr.
fn paver_into_closed_pipe(args: &[&str], keep: usize) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_paver"))
        .args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn paver");
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; keep];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), stderr)
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `inspect --json` of a 4,000-instruction kernel writes far more than a pipe buffers
    // (64 KiB), so a write after the reader has gone fails for certain (`… | head -c10`).
    let dir = scratch("pipe");
    let body = "\tadd.s32 %r1, %r1, 1;\n".repeat(4000);
    let big = tiny_ptx(&dir, "", &format!("\t.reg .b32 %r<2>;\n{body}"));
    let big = big.to_str().unwrap();
    let json_len = paver_ok(&["inspect", big, "--json"]).len();
    assert!(
        json_len > 1 << 17,
        "{json_len} bytes is not enough to fill a pipe"
    );
    for args in [vec!["inspect", big, "--json"], vec!["parse", MM]] {
        let (code, stderr) = paver_into_closed_pipe(&args, 10);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// Family 2: sizes checked against the machine before allocating.

#[test]
fn terabyte_dynamic_shared_memory_is_refused() {
    let e = paver_err(&[
        "run",
        MM,
        "--launch",
        MM_LAUNCH,
        "--dynamic-shared",
        "1099511627776",
    ]);
    assert!(
        e.contains("shared 1.0 TiB") && e.contains("memory budget"),
        "{e}"
    );
    // Volta allows 96 KiB per TB (CUDA cc 7.0 opt-in limit).
    let e = paver_err(&[
        "simulate",
        MM,
        "--launch",
        MM_LAUNCH,
        "--dynamic-shared",
        "1099511627776",
    ]);
    assert!(e.contains("1.0 TiB") && e.contains("96.0 KiB"), "{e}");
    // The same from a launch file.
    let dir = scratch("dynshared");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(MM_LAUNCH)).unwrap()).unwrap();
    doc["dynamic_shared_bytes"] = (1u64 << 40).into();
    let launch = dir.join("l.json");
    std::fs::write(&launch, doc.to_string()).unwrap();
    for cmd in ["run", "simulate"] {
        let e = paver_err(&[cmd, MM, "--launch", launch.to_str().unwrap()]);
        assert!(e.contains("1.0 TiB"), "{cmd}: {e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A module with one kernel `k(.u64 p)` and `decl` inside its body (before `ret`) and
/// `global` at module scope.
fn tiny_ptx(dir: &Path, global: &str, decl: &str) -> PathBuf {
    let text = format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n{global}\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n{decl}\n\tret;\n}}\n"
    );
    let path = dir.join("k.ptx");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn huge_local_and_global_arrays_are_refused_before_allocation() {
    let dir = scratch("arrays");
    // 100 MB of .local per thread with 1,024 threads: CUDA allows 512 KB per thread.
    let ptx = tiny_ptx(&dir, "", "\t.local .align 4 .b8 big[100000000];");
    for cmd in ["run", "simulate"] {
        let e = paver_err(&[cmd, ptx.to_str().unwrap(), "--grid", "1", "--block", "1024"]);
        assert!(
            e.contains("95.4 MiB of .local") && e.contains("512.0 KiB"),
            "{cmd}: {e}"
        );
    }
    // A 4 GiB `.global` array against a 1 GiB budget: refused, naming the limit.
    let ptx = tiny_ptx(&dir, ".global .align 4 .b8 g[65536][65536];", "");
    for cmd in ["run", "simulate"] {
        let out = paver_env(
            &[cmd, ptx.to_str().unwrap(), "--grid", "1", "--block", "32"],
            &[("PAVER_MEMORY_LIMIT", "1G")],
        );
        let e = fails_with(&out, 1, cmd);
        assert!(
            e.contains("module variables 4.0 GiB")
                && e.contains("memory budget of 1.0 GiB")
                && e.contains("PAVER_MEMORY_LIMIT"),
            "{cmd}: {e}"
        );
    }
    // A malformed budget is a usage error.
    let out = paver_env(
        &["run", ptx.to_str().unwrap(), "--grid", "1", "--block", "32"],
        &[("PAVER_MEMORY_LIMIT", "lots")],
    );
    let e = fails_with(&out, 2, "bad budget");
    assert!(e.contains("PAVER_MEMORY_LIMIT=lots"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn devices_are_not_read_as_inputs() {
    let e = paver_err(&["parse", "/dev/zero"]);
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = paver_err(&["launch", MM, "--launch", "/dev/zero"]);
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = paver_err(&["simulate", MM, "--launch", MM_LAUNCH, "--gpu", "/dev/zero"]);
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = paver_err(&[
        "run",
        MM,
        "--launch",
        MM_LAUNCH,
        "--param",
        "0=buffer:f32:4096:file(/dev/zero)",
    ]);
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = paver_err(&["partition", "/dev/zero"]);
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
}

#[test]
fn absurd_thread_counts_are_capped() {
    let out = paver(&[
        "run",
        MM,
        "--launch",
        MM_LAUNCH,
        "--threads",
        "20000",
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = (4 * cores).max(8);
    assert!(
        stderr.contains("--threads 20000") && stderr.contains(&format!("using {cap}")),
        "{stderr}"
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["threads"], cap as u64);
}

/// An analysis document of a `grid`-TB launch whose graph claims `num_tbs` TBs.
fn analysis_doc(dir: &Path, num_tbs: u64, grid: u64) -> PathBuf {
    let doc = serde_json::json!({
        "format": "paver-analysis/1",
        "kernel": "k",
        "grid": [grid, 1, 1],
        "block": [32, 1, 1],
        "graph": {"num_tbs": num_tbs, "edges": [[0, 1, 3]]},
    });
    let path = dir.join(format!("a{num_tbs}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

#[test]
fn partition_checks_the_graph_size_before_building_it() {
    let dir = scratch("partition");
    // 10^8 TBs claimed for a 4-TB grid: the mismatch is reported before any allocation.
    let a = analysis_doc(&dir, 100_000_000, 4);
    let e = paver_err(&["partition", a.to_str().unwrap(), "--tbs-per-sm", "2"]);
    assert!(
        e.contains("graph.num_tbs is 100000000 but the grid 4x1x1 has 4 TBs"),
        "{e}"
    );
    // 2^32 - 1 TBs that match the grid: more than the budget allows.
    let a = analysis_doc(&dir, (1 << 32) - 1, (1 << 32) - 1);
    let out = paver_env(
        &["partition", a.to_str().unwrap(), "--tbs-per-sm", "2"],
        &[("PAVER_MEMORY_LIMIT", "4G")],
    );
    let e = fails_with(&out, 1, "2^32-1 TBs");
    assert!(
        e.contains("4294967295 TBs") && e.contains("memory budget of 4.0 GiB"),
        "{e}"
    );
    // A METIS file announcing 2^32 - 1 vertices.
    let g = dir.join("huge.graph");
    std::fs::write(&g, "% huge\n4294967295 1\n2\n1\n").unwrap();
    let out = paver_env(
        &["partition", g.to_str().unwrap(), "--tbs-per-sm", "2"],
        &[("PAVER_MEMORY_LIMIT", "4G")],
    );
    let e = fails_with(&out, 1, "METIS 2^32-1 vertices");
    assert!(e.contains("4294967295 TBs") && e.contains("budget"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

// Family 5: outputs.

#[test]
fn simulate_output_is_atomic_and_errors_name_the_users_path() {
    let dir = scratch("simout");
    let out = dir.join("stats.json");
    std::fs::write(&out, "old").unwrap();
    let args = |o: &str| {
        vec![
            "simulate".to_string(),
            MM.to_string(),
            "--launch".into(),
            MM_LAUNCH.into(),
            "--quiet".into(),
            "--set".into(),
            "core.num_sms=4".into(),
            "-o".into(),
            o.to_string(),
        ]
    };
    let a = args(out.to_str().unwrap());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    paver_ok(&a);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(stats["tbs"], 16);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["stats.json"], "no temporary file left behind");
    // A missing folder is reported under the path the user gave.
    let missing = dir.join("no/such/dir/stats.json");
    let a = args(missing.to_str().unwrap());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let e = paver_err(&a);
    assert!(
        e.contains(missing.to_str().unwrap()) && !e.contains("paver-tmp"),
        "{e}"
    );
    // A full device: status 1, nothing half-written anywhere.
    let a = args("/dev/full");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let e = paver_err(&a);
    assert!(
        e.contains("/dev/full") && e.contains("No space left"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn launch_output_rebases_relative_files() {
    let dir = scratch("rebase");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::create_dir_all(dir.join("out/deeper")).unwrap();
    let a: Vec<u8> = (0..4096u32)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    std::fs::write(dir.join("data/a.bin"), &a).unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(MM_LAUNCH)).unwrap()).unwrap();
    doc["params"][0]["buffer"]["init"] = "file(data/a.bin)".into();
    let l = dir.join("launch.json");
    std::fs::write(&l, doc.to_string()).unwrap();
    let out = dir.join("out/deeper/normalised.json");
    paver_ok(&[
        "launch",
        MM,
        "--launch",
        l.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("file(../../data/a.bin)"), "{text}");
    // The written file works from its own folder, and from anywhere else.
    paver_ok(&["launch", MM, "--launch", out.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
}

// Family 6: launch values.

#[test]
fn initialisers_that_do_not_fit_their_buffer_are_errors() {
    for (param, want) in [
        (
            "0=buffer:u8:4096:fill(300)",
            "300 does not fit in u8 (0 to 255)",
        ),
        ("0=buffer:u8:4096:fill(-1)", "-1 does not fit in u8"),
        ("0=buffer:u32:4096:fill(2.7)", "2.7 is not an integer"),
        ("0=buffer:i32:4096:fill(1e20)", "does not fit in i32"),
        ("0=buffer:u8:4096:rand(1,0,1000)", "999 does not fit in u8"),
        (
            "0=buffer:u8::csr_row_ptr(1000,1000,4,1)",
            "the last row pointer (the number of non-zeros)",
        ),
        (
            "0=buffer:f32:4096:onehot(99999)",
            "index 99999 is outside a buffer of 4096",
        ),
        ("0=buffer:f32:4096:file(no/such.bin)", "no/such.bin"),
    ] {
        for cmd in ["launch", "run"] {
            let e = paver_err(&[cmd, MM, "--launch", MM_LAUNCH, "--param", param]);
            assert!(
                e.contains("parameter 0 (`mm_naive_param_0`)") && e.contains(want),
                "{cmd} {param}: {e}"
            );
        }
    }
}

// Family 7: GPU configurations.

/// The Volta configuration with `key = value` replacing the line that sets `key`.
fn edited_volta(dir: &Path, key: &str, value: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join("configs/gpus/titanv.toml")).unwrap();
    let mut section = String::new();
    let mut done = false;
    let (sec, field) = key.split_once('.').unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            let t = l.trim();
            if t.starts_with('[') {
                section = t.trim_matches(|c| c == '[' || c == ']').to_string();
            }
            let name = t.split('=').next().unwrap_or("").trim();
            if section == sec && name == field && !done {
                done = true;
                format!("{field} = {value}")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(done, "{key} not in titanv.toml");
    let path = dir.join(format!("{}.toml", key.replace('.', "_")));
    std::fs::write(&path, edited.join("\n")).unwrap();
    path
}

#[test]
fn broken_gpu_configurations_name_the_key() {
    let dir = scratch("gpu");
    for (key, value, want) in [
        ("dram.channels", "0", "dram.channels = 0"),
        (
            "core.warp_schedulers_per_sm",
            "0",
            "core.warp_schedulers_per_sm = 0",
        ),
        ("interconnect.clusters", "0", "interconnect.clusters = 0"),
        ("core.warp_size", "7", "core.warp_size = 7"),
        ("core.num_sms", "100000000", "core.num_sms = 100000000"),
    ] {
        let toml = edited_volta(&dir, key, value);
        let out = paver(&[
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "--gpu",
            toml.to_str().unwrap(),
        ]);
        let e = fails_with(&out, 1, key);
        assert!(
            e.contains(want) && e.contains(toml.to_str().unwrap()),
            "{key}: {e}"
        );
    }
    // An override that breaks the configuration: a usage error naming the key.
    let e = paver_err(&[
        "simulate",
        MM,
        "--launch",
        MM_LAUNCH,
        "--set",
        "core.num_sms=0",
    ]);
    assert!(e.contains("core.num_sms = 0"), "{e}");
    assert!(!e.contains("deadlock"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

// Family 9: command-line messages.

#[test]
fn the_budget_message_shows_the_limit() {
    // The launch executes W warp instructions; a budget of W - 1 runs out in the last TB,
    // when almost nothing is left: the message must show W - 1, the limit given.
    let out = paver_ok(&["run", MM, "--launch", MM_LAUNCH, "--json"]);
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    let w = s["stats"]["warp_instructions"].as_u64().unwrap();
    let limit = (w - 1).to_string();
    let e = paver_err(&[
        "run",
        MM,
        "--launch",
        MM_LAUNCH,
        "--max-instructions",
        &limit,
    ]);
    assert!(
        e.contains(&format!("budget of {limit} warp instructions")),
        "{e}"
    );
}

#[test]
fn integer_parameters_accept_whole_numbers_and_say_what_does_not_fit() {
    let out = paver_ok(&["launch", MM, "--launch", MM_LAUNCH, "--param", "3=1e3"]);
    assert!(
        out.contains("mm_naive_param_3") && out.contains("= 1000"),
        "{out}"
    );
    let e = paver_err(&[
        "launch",
        MM,
        "--launch",
        MM_LAUNCH,
        "--param",
        "3=1180591620717411303424",
    ]);
    assert!(e.contains("does not fit in 32 bits"), "{e}");
    // The same 2^70 from a launch file (JSON reads it as a float).
    let dir = scratch("bigint");
    let text = std::fs::read_to_string(root().join(MM_LAUNCH))
        .unwrap()
        .replace("\"value\": 64", "\"value\": 1180591620717411303424");
    let l = dir.join("l.json");
    std::fs::write(&l, text).unwrap();
    let e = paver_err(&["launch", MM, "--launch", l.to_str().unwrap()]);
    assert!(
        e.contains("does not fit in 32 bits") && !e.contains("not an integer"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_kernel_in_a_launch_file_is_an_input_error() {
    let dir = scratch("kernel");
    let text = std::fs::read_to_string(root().join(MM_LAUNCH))
        .unwrap()
        .replace("\"kernel\": \"mm_naive\"", "\"kernel\": \"mm_navie\"");
    let l = dir.join("l.json");
    std::fs::write(&l, text).unwrap();
    let out = paver(&["launch", MM, "--launch", l.to_str().unwrap()]);
    let e = fails_with(&out, 1, "kernel from the launch file");
    assert!(
        e.contains("mm_navie") && e.contains("entries (one a line):\n  mm_naive"),
        "{e}"
    );
    // Named on the command line, it stays a usage error.
    let out = paver(&["launch", MM, "--launch", MM_LAUNCH, "--kernel", "mm_navie"]);
    fails_with(&out, 2, "--kernel");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn huge_tokens_are_not_echoed() {
    // One command-line argument may hold at most 128 KiB (Linux MAX_ARG_STRLEN).
    let param = format!("3={}", "x".repeat(100_000));
    let out = paver(&["launch", MM, "--launch", MM_LAUNCH, "--param", &param]);
    let e = fails_with(&out, 2, "100 KB --param");
    assert!(e.len() < 4096, "{} bytes of error", e.len());
    let token = "x".repeat(10 << 20);
    let dir = scratch("token");
    // In a launch file: as the kernel's name, an initialiser, and an unknown key.
    let base = std::fs::read_to_string(root().join(MM_LAUNCH)).unwrap();
    for (from, to) in [
        (
            "\"kernel\": \"mm_naive\"",
            format!("\"kernel\": \"{token}\""),
        ),
        ("rand(1)", format!("{token}(1)")),
        ("\"dynamic_shared_bytes\"", format!("\"{token}\"")),
    ] {
        let l = dir.join("l.json");
        std::fs::write(&l, base.replace(from, &to)).unwrap();
        let out = paver(&["launch", MM, "--launch", l.to_str().unwrap()]);
        let e = fails_with(&out, 1, "10 MB token in a launch file");
        assert!(e.len() < 4096, "{} bytes of error", e.len());
    }
    let ptx = dir.join("t.ptx");
    std::fs::write(&ptx, format!(".version 7.0\n.target sm_70\n{token}\n")).unwrap();
    let out = paver(&["parse", ptx.to_str().unwrap()]);
    let e = fails_with(&out, 1, "10 MB PTX token");
    assert!(e.len() < 16384, "{} bytes of error", e.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every bad input of this file, and more, in one list: none may end in a panic (status
/// 101) or a signal.
#[test]
fn no_bad_input_panics_or_dies_by_signal() {
    let dir = scratch("nopanic");
    let ptx_local = tiny_ptx(&dir, "", "\t.local .align 4 .b8 big[100000000];");
    let local = ptx_local.to_str().unwrap().to_string();
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.join("garbage.json");
    std::fs::write(
        &garbage,
        "{\"format\": \"paver-launch/1\", \"grid\": [1e30], \"block\": [-1]}",
    )
    .unwrap();
    let bad_toml = dir.join("bad.toml");
    std::fs::write(&bad_toml, "[core]\nnum_sms = -1\n").unwrap();
    let cases: Vec<Vec<String>> = [
        vec!["parse", "/dev/zero"],
        vec!["parse", "/nonexistent.ptx"],
        vec!["parse", "/tmp"],
        vec!["inspect", MM, "--kernel", "nope"],
        vec!["launch", MM, "--launch", "/dev/zero"],
        vec!["launch", MM, "--launch", empty.to_str().unwrap()],
        vec!["launch", MM, "--launch", garbage.to_str().unwrap()],
        vec![
            "launch",
            MM,
            "--launch",
            MM_LAUNCH,
            "--param",
            "0=buffer:u8:4:fill(1e400)",
        ],
        vec![
            "launch",
            MM,
            "--launch",
            MM_LAUNCH,
            "--param",
            "0=buffer:u64:18446744073709551615:zeros",
        ],
        vec![
            "launch",
            MM,
            "--launch",
            MM_LAUNCH,
            "--param",
            "0=buffer:i64:8:rand(1,-1e300,1e300)",
        ],
        vec![
            "launch",
            MM,
            "--launch",
            MM_LAUNCH,
            "--param",
            "0=buffer:u32::csr_row_ptr(2147483648,2147483648,2147483648,1)",
        ],
        vec!["launch", MM, "--launch", MM_LAUNCH, "--param", "3=-1e300"],
        vec![
            "launch",
            MM,
            "--launch",
            MM_LAUNCH,
            "--grid",
            "4294967296x65536",
        ],
        vec![
            "run",
            MM,
            "--launch",
            MM_LAUNCH,
            "--dynamic-shared",
            "18446744073709551615",
        ],
        vec!["run", &local, "--grid", "1", "--block", "1024"],
        vec![
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "--gpu",
            bad_toml.to_str().unwrap(),
        ],
        vec![
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "--set",
            "core.num_sms=0",
        ],
        vec![
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "--set",
            "l1.line_bytes=0",
        ],
        vec![
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "--set",
            "pipeline.shared_banks=0",
        ],
        vec![
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "--set",
            "dram.bandwidth_gbps=-1",
        ],
        vec!["simulate", MM, "--launch", MM_LAUNCH, "--tbs-per-sm", "0"],
        vec![
            "simulate",
            MM,
            "--launch",
            MM_LAUNCH,
            "-o",
            "/nonexistent/dir/x.json",
        ],
        vec!["partition", "/dev/zero"],
        vec!["partition", empty.to_str().unwrap()],
        vec!["run", MM, "--launch", MM_LAUNCH, "--threads", "0"],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect();
    for args in &cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = paver(&a);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(
            matches!(code, Some(1 | 2)),
            "paver {}: status {:?} (101 is a panic, none a signal)\n{stderr}",
            args.join(" "),
            out.status
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
