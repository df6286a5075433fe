//! Golden files (issue 36): the IR dump (`paver inspect`) and the analysis JSON (`paver
//! analyze -o`) of a few corpus launches, compared byte for byte with `tests/golden/`. A
//! change that moves any of them fails here with the first differing line; when the change
//! is meant, re-bless with `PAVER_BLESS=1 cargo test --release --test it golden` and review
//! the files' diff in the commit.

use std::path::Path;

use crate::common::{paver_ok, root};

/// (name, PTX, kernel, launch): a GEMM, a stencil with barriers and shared memory, an
/// irregular SpMV (data-dependent loads) and a 2-D convolution.
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "mm_naive",
        "kernels/mm_naive/mm_naive.compute_70.ptx",
        "mm_naive",
        "kernels/mm_naive/small.json",
    ),
    (
        "hotspot",
        "kernels/hotspot/hotspot.compute_70.ptx",
        "",
        "kernels/hotspot/small.json",
    ),
    (
        "spmv_csr_vector",
        "kernels/spmv_csr/spmv_csr.compute_70.ptx",
        "spmv_csr_vector",
        "kernels/spmv_csr/small.spmv_csr_vector.json",
    ),
    (
        "conv2d",
        "kernels/conv2d/conv2d.compute_70.ptx",
        "",
        "kernels/conv2d/small.json",
    ),
];

/// Compares `actual` with the golden file `name`, or writes it under `PAVER_BLESS=1`.
fn check(name: &str, actual: &str) {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("PAVER_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; create it with PAVER_BLESS=1", path.display()));
    if expected != actual {
        let (n, (e, a)) = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .find(|(_, (e, a))| e != a)
            .unwrap_or((
                expected.lines().count().min(actual.lines().count()),
                ("(end of file)", "(end of file)"),
            ));
        panic!(
            "{} differs at line {}:\n  golden: {e}\n  now:    {a}\n\
             re-bless with PAVER_BLESS=1 if the change is meant",
            path.display(),
            n + 1
        );
    }
}

#[test]
fn golden_ir_dumps_and_analysis_documents() {
    let dir = std::env::temp_dir().join(format!("paver-golden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for &(name, ptx, kernel, launch) in CASES {
        let mut inspect = vec!["inspect", ptx];
        let mut analyze = vec!["analyze", ptx, "--launch", launch, "-q"];
        if !kernel.is_empty() {
            inspect.extend(["--kernel", kernel]);
            analyze.extend(["--kernel", kernel]);
        }
        check(&format!("{name}.inspect.txt"), &paver_ok(&inspect));
        let out = dir.join(format!("{name}.json"));
        analyze.extend(["-o", out.to_str().unwrap()]);
        paver_ok(&analyze);
        let text = std::fs::read_to_string(&out).unwrap();
        check(&format!("{name}.analysis.json"), &text);
        assert!(Path::new(&out).exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
