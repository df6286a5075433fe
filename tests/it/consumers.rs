//! Other tools consuming paver's outputs: the `.npz` graph read back by SciPy, the METIS
//! and `.npz` graph files read by `paver partition`, the C++ schedule reader
//! (`tools/schedule_reader`, compiled with g++) and the Python example for notebooks.
//!
//! g++, Python and SciPy come from the machine: `.ci/run` installs g++ and Python from
//! Debian's packages and SciPy into a virtual environment (`target/ci-venv`, passed as
//! `PAVER_PYTHON`). In CI (`CI=true`) a missing tool fails the test; elsewhere the test is
//! skipped with the reason on stderr.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{paver_ok, root};

/// A fresh folder in the temporary directory.
fn temp_dir(tag: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!(
        "paver-it-consumers-{}-{n}-{tag}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// `what` is missing: a failure in CI, a skip (with the reason) elsewhere.
fn missing(what: &str) {
    assert!(!in_ci(), "{what} (CI must have it: .ci/run installs it)");
    eprintln!("skipped: {what}");
}

/// Whether `cmd args` runs and exits 0.
fn runs(cmd: &Path, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A Python 3 with SciPy: `$PAVER_PYTHON`, the CI virtual environment, or `python3`.
fn python_with_scipy() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("PAVER_PYTHON") {
        candidates.push(p.into());
    }
    candidates.push(root().join("target/ci-venv/bin/python3"));
    candidates.push("python3".into());
    candidates
        .into_iter()
        .find(|p| runs(p, &["-c", "import scipy.sparse"]))
}

/// `paver analyze` of a small corpus launch with irregular weights (hotspot: halos of
/// different sizes), writing the JSON with its edges and the graph files asked for.
fn analyze_small(dir: &Path, graph_files: &[&str]) -> Value {
    let json = dir.join("a.json");
    let mut args: Vec<String> = [
        "analyze",
        "kernels/hotspot/hotspot.compute_70.ptx",
        "--launch",
        "kernels/hotspot/small.json",
        "--no-descriptors",
        "--edges-json",
        "--quiet",
        "-o",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(json.display().to_string());
    for g in graph_files {
        args.push("--graph".into());
        args.push(dir.join(g).display().to_string());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    paver_ok(&refs);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The JSON's edges as sorted `(i, j, w)`.
fn json_edges(doc: &Value) -> Vec<(u64, u64, u64)> {
    let mut e: Vec<(u64, u64, u64)> = doc["graph"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let t = t.as_array().unwrap();
            (
                t[0].as_u64().unwrap(),
                t[1].as_u64().unwrap(),
                t[2].as_u64().unwrap(),
            )
        })
        .collect();
    e.sort_unstable();
    e
}

#[test]
fn scipy_loads_the_npz_graph_with_the_json_edges() {
    let Some(python) = python_with_scipy() else {
        return missing("no Python 3 with SciPy (set PAVER_PYTHON)");
    };
    let dir = temp_dir("scipy");
    let doc = analyze_small(&dir, &["g.npz"]);
    let edges = json_edges(&doc);
    assert!(edges.len() > 50, "{} edges", edges.len());
    let n = doc["graph"]["num_tbs"].as_u64().unwrap();
    // SciPy's own reader; the script checks the matrix's shape, symmetry and format itself
    // and prints the upper triangle.
    let script = r#"
import sys, scipy.sparse as sp
m = sp.load_npz(sys.argv[1])
assert sp.isspmatrix_csr(m), type(m)
assert m.shape[0] == m.shape[1], m.shape
assert (m != m.T).nnz == 0, "not symmetric"
assert m.diagonal().sum() == 0
assert m.has_sorted_indices
u = sp.triu(m, k=1).tocoo()
print(m.shape[0], m.nnz)
for i, j, w in sorted(zip(u.row.tolist(), u.col.tolist(), u.data.tolist())):
    print(i, j, w)
"#;
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(dir.join("g.npz"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let head: Vec<u64> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(head, [n, 2 * edges.len() as u64]);
    let got: Vec<(u64, u64, u64)> = lines
        .map(|l| {
            let v: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1], v[2])
        })
        .collect();
    assert_eq!(got, edges);
    assert_eq!(doc["graph"]["file"], "g.npz");
    assert_eq!(doc["graph"]["file_format"], "scipy-npz");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn partition_reads_json_npz_and_metis_alike() {
    let dir = temp_dir("formats");
    analyze_small(&dir, &["g.graph"]);
    let doc = analyze_small(&dir, &["g.npz"]);
    let grid = doc["grid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("x");
    // The JSON without its edge list (as for a graph above the size limit): partition
    // follows `graph.file`.
    let mut stub = doc.clone();
    stub["graph"].as_object_mut().unwrap().remove("edges");
    std::fs::write(dir.join("noedges.json"), stub.to_string()).unwrap();
    let groups = |input: &str, extra: &[&str]| -> Value {
        let out = dir.join(format!("s-{input}.json"));
        let mut args = vec![
            "partition".to_string(),
            dir.join(input).display().to_string(),
            "--policy".into(),
            "rb-ts".into(),
            "--tbs-per-sm".into(),
            "4".into(),
            "--quiet".into(),
            "-o".into(),
            out.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        paver_ok(&refs);
        let s: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        s["groups"].clone()
    };
    let from_json = groups("a.json", &[]);
    assert!(from_json.as_array().unwrap().len() > 1);
    assert_eq!(groups("noedges.json", &[]), from_json);
    assert_eq!(groups("g.npz", &["--grid", &grid]), from_json);
    assert_eq!(groups("g.graph", &["--grid", &grid]), from_json);
    // The METIS file is the same graph: header `n m 001`, 1-based neighbours.
    let metis = std::fs::read_to_string(dir.join("g.graph")).unwrap();
    let n = doc["graph"]["num_tbs"].as_u64().unwrap();
    let m = json_edges(&doc).len();
    assert_eq!(metis.lines().next().unwrap(), format!("{n} {m} 001"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The toy replay of `tools/schedule_reader` (see replay.cpp), written again here from the
/// schedule JSON: the lines both consumers must print.
fn expected_replay(schedule: &Value, cycles: u64) -> String {
    let num_sms = schedule["num_sms"].as_u64().unwrap() as usize;
    let slots = schedule["tbs_per_sm"].as_u64().unwrap() as usize;
    let g: Vec<u64> = schedule["grid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    let mut queue: std::collections::VecDeque<Vec<u64>> = schedule["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|grp| {
            grp.as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_u64().unwrap())
                .collect()
        })
        .collect();
    let mut local: Vec<std::collections::VecDeque<u64>> = vec![Default::default(); num_sms];
    let mut running: Vec<Vec<u64>> = vec![Vec::new(); num_sms];
    let total = g[0] * g[1] * g[2];
    let (mut issued, mut cycle) = (0u64, 0u64);
    let mut out = String::new();
    while issued < total {
        for r in &mut running {
            r.retain(|&end| end > cycle);
        }
        for sm in 0..num_sms {
            if running[sm].len() >= slots {
                continue;
            }
            if local[sm].is_empty() {
                match queue.pop_front() {
                    Some(grp) => local[sm] = grp.into(),
                    None => continue,
                }
            }
            let tb = local[sm].pop_front().unwrap();
            out += &format!(
                "{cycle} {sm} {tb} {} {} {}\n",
                tb % g[0],
                (tb / g[0]) % g[1],
                tb / (g[0] * g[1])
            );
            running[sm].push(cycle + cycles);
            issued += 1;
        }
        cycle += 1;
    }
    out + &format!("done: {total} TBs in {cycle} cycles\n")
}

/// An RB-TS schedule of a corpus launch (the README's first command, small grid).
fn corpus_schedule(dir: &Path) -> (PathBuf, Value) {
    let path = dir.join("schedule.json");
    paver_ok(&[
        "analyze",
        "kernels/mm_naive/mm_naive.compute_70.ptx",
        "--launch",
        "kernels/mm_naive/small.json",
        "--policy",
        "rb-ts",
        "--gpu",
        "volta",
        "--tbs-per-sm",
        "2",
        "--quiet",
        "--schedule",
        path.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(v["groups"].as_array().unwrap().len() > 1);
    (path, v)
}

#[test]
fn cpp_reader_replays_a_corpus_schedule() {
    let cxx = std::env::var_os("CXX").map_or_else(|| PathBuf::from("g++"), PathBuf::from);
    if !runs(&cxx, &["--version"]) {
        return missing(&format!("no C++ compiler `{}` (set CXX)", cxx.display()));
    }
    let dir = temp_dir("cpp");
    let exe = dir.join("replay");
    let src = root().join("tools/schedule_reader/replay.cpp");
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (path, schedule) = corpus_schedule(&dir);
    let run = Command::new(&exe).arg(&path).arg("3").output().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        String::from_utf8(run.stdout).unwrap(),
        expected_replay(&schedule, 3)
    );
    // A broken schedule is refused with the field named.
    let mut bad = schedule.clone();
    bad["groups"][0][0] = serde_json::json!(1_000_000);
    std::fs::write(dir.join("bad.json"), bad.to_string()).unwrap();
    let run = Command::new(&exe)
        .arg(dir.join("bad.json"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("groups[0]"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn python_example_replays_a_corpus_schedule() {
    let python = PathBuf::from("python3");
    if !runs(&python, &["--version"]) {
        return missing("no python3");
    }
    let dir = temp_dir("py");
    let (path, schedule) = corpus_schedule(&dir);
    let run = Command::new(&python)
        .arg(root().join("tools/schedule_reader/schedule_example.py"))
        .arg(&path)
        .arg("5")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        String::from_utf8(run.stdout).unwrap(),
        expected_replay(&schedule, 5)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
