//! CUDA sources as input (`paver compile`, and a `.cu` file wherever a PTX file goes),
//! through NVRTC loaded at run time. Tests that need NVRTC report a skip with the reason when
//! this machine has none, except in CI (`CI=true`), which installs it and where its absence
//! is a failure.

use std::path::{Path, PathBuf};

use native::nvrtc::{Nvrtc, DEFAULT_ARCH};

use crate::common::{files_under, paver_env, paver_ok, root};

/// NVRTC as paver finds it, or `None` after printing why the test is skipped; in CI a
/// missing NVRTC fails the test.
fn nvrtc_or_skip(test: &str) -> Option<Nvrtc> {
    match Nvrtc::load(None) {
        Ok(n) => Some(n),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{test}: CI=true and NVRTC cannot be loaded: {e}")
        }
        Err(e) => {
            eprintln!("{test}: SKIPPED: {e}");
            None
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("paver-it-cuda-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every corpus source, `kernels/<name>/<name>.cu`. The kernels that launch kernels
/// (`kernels/dp/`) need `-rdc=true` and are compiled by nvcc 13 only (`kernels/gen_dp.py`).
fn corpus_sources() -> Vec<PathBuf> {
    let kernels = root().join("kernels");
    let files = files_under(&kernels, &|p: &Path| {
        p.extension().is_some_and(|e| e == "cu")
            && p.file_stem() == p.parent().and_then(Path::file_name)
            && p.parent().and_then(Path::parent) == Some(kernels.as_path())
    });
    assert!(
        files.len() >= 24,
        "expected 24+ corpus sources, found {}",
        files.len()
    );
    files
}

#[test]
fn every_corpus_source_compiles_to_its_committed_ptx() {
    let Some(nvrtc) = nvrtc_or_skip("every_corpus_source_compiles_to_its_committed_ptx") else {
        return;
    };
    // The committed PTX is NVRTC 12.9's (kernels/regenerate pins nvidia-cuda-nvrtc-cu12
    // 12.9.86); another version makes other PTX.
    if nvrtc.version() != (12, 9) {
        let why = format!(
            "NVRTC {:?} at {} is not 12.9, the corpus's",
            nvrtc.version(),
            nvrtc.path().display()
        );
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "{why}");
        eprintln!("every_corpus_source_compiles_to_its_committed_ptx: SKIPPED: {why}");
        return;
    }
    let options = [format!("--gpu-architecture={DEFAULT_ARCH}")];
    let mut differ = Vec::new();
    for cu in corpus_sources() {
        let src = std::fs::read_to_string(&cu).unwrap();
        let rel = cu
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let out = nvrtc
            .compile(&src, &rel, &options)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let committed = std::fs::read_to_string(cu.with_extension("compute_70.ptx")).unwrap();
        if out.ptx != committed {
            differ.push(rel);
        }
    }
    assert!(
        differ.is_empty(),
        "NVRTC's PTX differs from the committed compute_70 PTX for {differ:?}"
    );
}

#[test]
fn paver_compile_prints_the_corpus_ptx() {
    if nvrtc_or_skip("paver_compile_prints_the_corpus_ptx").is_none_or(|n| n.version() != (12, 9)) {
        return;
    }
    let cache = scratch("print");
    let out = paver_env(
        &["compile", "kernels/mm_naive/mm_naive.cu"],
        &[("PAVER_CACHE", cache.to_str().unwrap())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(root().join("kernels/mm_naive/mm_naive.compute_70.ptx")).unwrap()
    );
    // compute_70 draws NVRTC 12.9's deprecation note, which is not shown.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(cache);
}

#[test]
fn a_missing_nvrtc_is_an_error_that_says_how_to_install_it() {
    let out = paver_env(
        &["compile", "kernels/mm_naive/mm_naive.cu"],
        &[("PAVER_NVRTC", "/nonexistent/libnvrtc.so")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("paver: error: kernels/mm_naive/mm_naive.cu: "),
        "{stderr}"
    );
    assert!(stderr.contains("/nonexistent/libnvrtc.so"), "{stderr}");
    assert!(
        stderr.contains("pip install nvidia-cuda-nvrtc-cu12"),
        "{stderr}"
    );
    // The same for a command that reads the source to analyse it.
    let out = paver_env(
        &["parse", "kernels/mm_naive/mm_naive.cu"],
        &[("PAVER_NVRTC", "off")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("PAVER_NVRTC=off"), "{stderr}");
}

#[test]
fn a_compile_error_names_the_file_and_line() {
    if nvrtc_or_skip("a_compile_error_names_the_file_and_line").is_none() {
        return;
    }
    let dir = scratch("bad");
    let cu = dir.join("bad.cu");
    std::fs::write(
        &cu,
        "__global__ void k(float *a) {\n  a[0] = no_such_name;\n}\n",
    )
    .unwrap();
    let out = paver_env(
        &["compile", cu.to_str().unwrap()],
        &[("PAVER_CACHE", "off")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "paver: error: {}: NVRTC cannot compile",
            cu.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{}(2): error", cu.display())),
        "{stderr}"
    );
    assert!(stderr.contains("no_such_name"), "{stderr}");
    assert!(!stderr.contains("deprecated"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_second_compile_comes_from_the_cache() {
    if nvrtc_or_skip("the_second_compile_comes_from_the_cache").is_none() {
        return;
    }
    let dir = scratch("cache");
    let cu = dir.join("k.cu");
    std::fs::write(
        &cu,
        "extern \"C\" __global__ void k(int *a) { a[threadIdx.x] = N; }\n",
    )
    .unwrap();
    let cache = dir.join("cache");
    let env = [("PAVER_CACHE", cache.to_str().unwrap())];
    let run = |define: &str| {
        let out = paver_env(
            &["compile", cu.to_str().unwrap(), "-D", define, "--verbose"],
            &env,
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        (String::from_utf8(out.stdout).unwrap(), stderr)
    };
    let (first, why) = run("N=3");
    assert!(why.contains("compiled, cached in"), "{why}");
    let (second, why) = run("N=3");
    assert!(why.contains("from the cache"), "{why}");
    assert_eq!(first, second);
    // Other options are another key.
    let (third, why) = run("N=4");
    assert!(why.contains("compiled, cached in"), "{why}");
    assert_ne!(first, third);
    let entries = std::fs::read_dir(cache.join("ptx")).unwrap().count();
    assert_eq!(entries, 4, "a .ptx and a .log per compilation");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn analyze_reads_a_cuda_source_like_its_ptx() {
    if nvrtc_or_skip("analyze_reads_a_cuda_source_like_its_ptx")
        .is_none_or(|n| n.version() != (12, 9))
    {
        return;
    }
    let dir = scratch("analyze");
    let run = |file: &str, tag: &str| {
        let json = dir.join(format!("{tag}.json"));
        let args = [
            "analyze",
            file,
            "--grid",
            "8x8",
            "--block",
            "16x16",
            "--param",
            "3=128",
            "--no-descriptors",
            "--quiet",
            "-o",
            json.to_str().unwrap(),
        ];
        paver_ok(&args);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v
    };
    let from_cu = run("kernels/mm_naive/mm_naive.cu", "cu");
    let from_ptx = run("kernels/mm_naive/mm_naive.compute_70.ptx", "ptx");
    assert_eq!(from_cu["graph"], from_ptx["graph"]);
    assert!(
        from_cu["graph"]["num_tbs"].as_u64() == Some(64),
        "{}",
        from_cu["graph"]
    );
    // Kernels are named by their C++ names (overloads by their signatures, templates by
    // their arguments) or their extern "C" names.
    let cu = dir.join("names.cu");
    std::fs::write(
        &cu,
        "__global__ void scale(float *a, float s) { a[threadIdx.x] *= s; }\n\
         __global__ void scale(int *a, int s) { a[threadIdx.x] *= s; }\n\
         template <int N> __global__ void fill(float *a) { a[threadIdx.x] = N; }\n\
         template __global__ void fill<4>(float *);\n\
         extern \"C\" __global__ void plain(float *a) { a[0] = 1.0f; }\n",
    )
    .unwrap();
    let cu = cu.to_str().unwrap();
    for (name, mangled) in [
        ("scale(float*, float)", "_Z5scalePff"),
        ("scale(int*,int)", "_Z5scalePii"),
        ("fill<4>", "_Z4fillILi4EEvPf"),
        ("plain", "plain"),
    ] {
        let text = paver_ok(&["inspect", cu, "--kernel", name, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["kernel"], mangled, "{name}");
    }
    let out = paver_env(&["inspect", cu, "--kernel", "scale"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("names several kernels"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn paver_rewrite_takes_a_cuda_source() {
    if nvrtc_or_skip("paver_rewrite_takes_a_cuda_source").is_none() {
        return;
    }
    // The CUDA source compiled by NVRTC and the committed PTX rewrite to kernels that
    // compute the same outputs.
    let d = scratch("rewrite");
    let out = |p: &str| d.join(p).to_string_lossy().into_owned();
    let launch = "kernels/hotspot/small.json";
    paver_ok(&[
        "rewrite",
        "kernels/hotspot/hotspot.cu",
        "--launch",
        launch,
        "--identity",
        "--gpu",
        "h100",
        "-o",
        &out("cu.ptx"),
        "--launch-out",
        &out("cu.json"),
        "-q",
    ]);
    paver_ok(&[
        "run",
        &out("cu.ptx"),
        "--launch",
        &out("cu.json"),
        "-o",
        &out("cu"),
        "-q",
    ]);
    paver_ok(&[
        "run",
        "kernels/hotspot/hotspot.compute_70.ptx",
        "--launch",
        launch,
        "-o",
        &out("orig"),
        "-q",
    ]);
    let name = "p2_hotspot_param_2.npy";
    let a = std::fs::read(d.join("cu").join(name)).unwrap();
    let b = std::fs::read(d.join("orig").join(name)).unwrap();
    assert_eq!(
        a, b,
        "the rewritten CUDA source computes another temperature field"
    );
    let _ = std::fs::remove_dir_all(&d);
}
