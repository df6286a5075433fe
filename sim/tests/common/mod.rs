//! Helpers shared by the sim integration tests: the corpus's launches, running one, and
//! comparing buffers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use launch::{
    BoundLaunch, BoundValue, ElemType, FieldArg, FieldSpec, Init, Launch, ParamArg, ParamKey,
    ParamSpec, Scalar,
};
use sim::{NoObserver, Program, RunOptions, RunResult};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One small launch of the corpus.
#[derive(Clone, Debug)]
pub struct Case {
    /// Kernel directory name.
    pub dir: String,
    /// Launch file.
    pub launch: PathBuf,
    /// Launch file stem (`small`, `small.bfs_expand`).
    pub stem: String,
    /// Kernel entry name.
    pub kernel: String,
}

/// Every `kernels/*/small*.json`, sorted.
pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root().join("kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for d in dirs.into_iter().filter(|d| d.is_dir()) {
        let mut files: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("small") && name.ends_with(".json") {
                let l = Launch::read(&f).unwrap();
                out.push(Case {
                    dir: d.file_name().unwrap().to_string_lossy().to_string(),
                    stem: name.trim_end_matches(".json").to_string(),
                    kernel: l.kernel.clone().unwrap(),
                    launch: f,
                });
            }
        }
    }
    out
}

/// The analysis-pattern kernels of issue 13 (guarded loads, mirrored boundaries, float-derived
/// bounds, column walks, module arrays, struct parameters, no `ret`, negative offsets): what
/// they read is checked address by address against the interpreter (analysis/tests and
/// tests/it/analyze.rs), but their outputs have no CPU mirror (`corpus.rs`) and no H100
/// reference (`h100.rs`) yet. Those tests leave them out by name and fail when a name here
/// leaves the corpus or gains a reference. The warp-scheduling kernels of issue 16
/// (`rr_friendly_*`, `gto_friendly`) and the Locality Descriptor kernel of issue 17
/// (`libor_path`) are here for the same reason.
pub const ANALYSIS_PATTERNS: [&str; 14] = [
    "colwalk_col",
    "colwalk_row",
    "float_chunks",
    "gto_friendly",
    "guarded_gather",
    "libor_path",
    "mirror_walk",
    "module_array",
    "negoff",
    "noret",
    "rr_friendly_sync",
    "rr_friendly_table",
    "rr_friendly_window",
    "struct_param",
];

/// Values for the by-value parameters the corpus's launch files leave open (the static
/// analysis needs none of them; running needs every one), as the kernels' host code sets
/// them: lavaMD's `par_str` (`alpha` = 0.5, Rodinia's main.c).
pub fn open_values(kernel: &str) -> Vec<ParamSpec> {
    match kernel {
        "kernel_gpu_cuda" => vec![ParamSpec {
            key: ParamKey::Index(0),
            comment: Some("par_str: alpha".into()),
            arg: ParamArg::Struct(vec![FieldSpec {
                offset: 0,
                comment: None,
                arg: FieldArg::Value(ElemType::F64, Scalar::Float(0.5)),
            }]),
        }],
        _ => Vec::new(),
    }
}

/// The launch file `path` with the values of [`open_values`] added: ready to run.
pub fn runnable(path: &Path) -> Launch {
    let mut l = Launch::read(path).unwrap();
    let kernel = l.kernel.clone().unwrap_or_default();
    l.params.extend(open_values(&kernel));
    l
}

/// Kernels with a CPU mirror (`corpus.rs`) but no H100 reference (`h100.rs`) yet: lavaMD
/// (issue 37). `h100.rs` fails when one gains a reference.
pub const NO_H100_REFERENCE: [&str; 1] = ["kernel_gpu_cuda"];

/// The three PTX builds of a kernel directory.
pub const VARIANTS: [&str; 3] = ["compute_70", "compute_90", "nvcc13.sm_90"];

/// A run of one case.
pub struct Ran {
    /// The bound launch.
    pub bound: BoundLaunch,
    /// Input buffers (before the run).
    pub inputs: Vec<Option<Vec<u8>>>,
    /// The result.
    pub result: RunResult,
}

/// Binds and runs `case` with the `variant` PTX.
pub fn run_case(case: &Case, variant: &str, threads: usize) -> Ran {
    let dir = root().join("kernels").join(&case.dir);
    let ptx = dir.join(format!("{}.{variant}.ptx", case.dir));
    let module = ptx_parser::parse_file(&ptx).unwrap();
    let f = module.kernel(&case.kernel).unwrap();
    let bound = runnable(&case.launch)
        .bind(&case.kernel, &sim::param_sigs(f), &dir)
        .unwrap();
    let prog = Program::new(&module, &case.kernel).unwrap();
    let unsupported = prog.unsupported();
    assert!(unsupported.is_empty(), "{}: {unsupported:?}", ptx.display());
    let inputs = inputs(&bound);
    let opts = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let result = sim::run(&prog, &bound, &opts, &mut NoObserver)
        .unwrap_or_else(|e| panic!("{} {}: {e}", case.stem, ptx.display()));
    Ran {
        bound,
        inputs,
        result,
    }
}

/// The materialised input buffers of a launch.
pub fn inputs(b: &BoundLaunch) -> Vec<Option<Vec<u8>>> {
    b.params
        .iter()
        .map(|p| match &p.value {
            BoundValue::Buffer {
                elem, len, init, ..
            } => Some(
                Init::parse(init)
                    .unwrap()
                    .materialise(*elem, *len, &b.base_dir)
                    .unwrap(),
            ),
            _ => None,
        })
        .collect()
}

/// Element type of parameter `i`'s buffer.
pub fn elem(b: &BoundLaunch, i: usize) -> Option<ElemType> {
    match &b.params[i].value {
        BoundValue::Buffer { elem, .. } => Some(*elem),
        _ => None,
    }
}

/// Scalar parameter `i` as bits.
pub fn scalar(b: &BoundLaunch, i: usize) -> u64 {
    match &b.params[i].value {
        BoundValue::Scalar { bits } => *bits,
        other => panic!("param {i} is not a scalar: {other:?}"),
    }
}

/// Bytes as f32s.
pub fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
/// Bytes as f64s.
pub fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
/// Bytes as i32s.
pub fn i32s(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
/// Bytes as u32s.
pub fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
/// Bytes as u16s.
pub fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Largest relative error `|a - b| / max(|b|, floor)` between two buffers of type `e`
/// (0 for integers that are equal, infinity for any integer difference).
pub fn max_rel_err(e: ElemType, got: &[u8], want: &[u8], floor: f64) -> (f64, usize) {
    assert_eq!(got.len(), want.len(), "buffer sizes differ");
    let (g, w): (Vec<f64>, Vec<f64>) = match e {
        ElemType::F32 => (
            f32s(got).into_iter().map(f64::from).collect(),
            f32s(want).into_iter().map(f64::from).collect(),
        ),
        ElemType::F64 => (f64s(got), f64s(want)),
        _ => {
            let first = got.iter().zip(want).position(|(a, b)| a != b);
            return match first {
                None => (0.0, 0),
                Some(k) => (f64::INFINITY, k / e.size()),
            };
        }
    };
    let mut worst = (0.0, 0);
    for (k, (a, b)) in g.iter().zip(&w).enumerate() {
        let err = if a.to_bits() == b.to_bits() || a == b {
            0.0
        } else if a.is_nan() || b.is_nan() {
            f64::INFINITY
        } else {
            (a - b).abs() / b.abs().max(floor)
        };
        if err > worst.0 {
            worst = (err, k);
        }
    }
    worst
}

/// FNV-1a 64 of bytes (the reference meta.json hashes inputs and outputs with it).
pub fn fnv1a64(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= u64::from(x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
