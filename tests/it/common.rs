//! Helpers shared by the end-to-end tests: locating the repository, the corpus and the
//! `paver` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (recursive) whose name satisfies `keep`, sorted.
pub fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if keep(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every launch description of the corpus (`kernels/<dir>/small*.json` and `paper*.json`).
pub fn launch_files() -> Vec<PathBuf> {
    let kernels = root().join("kernels");
    let files = files_under(&kernels, &|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        p.parent().and_then(Path::parent) == Some(kernels.as_path())
            && name.ends_with(".json")
            && (name.starts_with("small") || name.starts_with("paper"))
    });
    assert!(
        files.len() >= 48,
        "expected small and paper launches for 24+ kernels, found {}",
        files.len()
    );
    files
}

/// Every PTX file of the corpus.
pub fn ptx_files() -> Vec<PathBuf> {
    let files = files_under(&root().join("kernels"), &|p| {
        p.extension().is_some_and(|e| e == "ptx")
    });
    assert!(
        files.len() >= 48,
        "expected PTX for 24+ kernels, found {}",
        files.len()
    );
    files
}

/// Runs the `paver` binary with `args` from the repository root.
pub fn paver(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_paver"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run paver")
}

/// Runs `paver` from the repository root with extra environment variables.
pub fn paver_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_paver"));
    c.args(args).current_dir(root());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run paver")
}

/// Runs `paver`, asserts success, returns stdout.
pub fn paver_ok(args: &[&str]) -> String {
    let out = paver(args);
    assert!(
        out.status.success(),
        "paver {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Runs `paver`, asserts failure with exit code 1..=2 and a one-line error without a
/// backtrace or panic, returns stderr.
pub fn paver_err(args: &[&str]) -> String {
    let out = paver(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "paver {args:?} succeeded but should fail"
    );
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "paver {args:?}: exit {:?}\n{stderr}",
        out.status.code()
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
    stderr
}

/// `--param` flags giving the naive GEMM's three `N x N` float matrices for `N = 256`
/// (`A`, `B` random, `C` zero): `--param 3=256` alone leaves the buffers at the launch
/// file's size, and reads outside every buffer count in no footprint.
pub const GEMM_256_BUFFERS: [&str; 6] = [
    "--param",
    "0=buffer:f32:65536:rand(1)",
    "--param",
    "1=buffer:f32:65536:rand(2)",
    "--param",
    "2=buffer:f32:65536:zeros",
];
