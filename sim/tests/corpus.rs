//! The interpreter against independent CPU code: every kernel entry of the corpus (36), at its
//! small launch, run from each of its three PTX builds, must produce the buffers that a plain
//! Rust function mirroring the kernel's `.cu` source computes from the same inputs (built by
//! the `launch` crate).
//!
//! The mirrors live in [`dense`] (matrix and vector products), [`stencil`] (grid stencils and
//! image kernels) and [`irregular`] (data-dependent, atomic, racy and hash kernels). Each
//! returns, per output parameter, a [`Want`]:
//! - integers exactly;
//! - floats within a tolerance stated next to the mirror with its reason. The CPU evaluates
//!   `a * b + c` as a rounded multiply then a rounded add, while the compiler contracts it to
//!   one `fma.rn` (no intermediate rounding), so a float result may differ by a few rounding
//!   errors of its terms. The tolerance is therefore relative to a per-element *scale* (the sum
//!   of the magnitudes of the terms, which bounds the rounding error), not to the result,
//!   which can cancel;
//! - racy outputs (several threads store different values to one slot without ordering):
//!   one of the values some interleaving can leave, exactly where only one is possible.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

mod common;
#[path = "corpus/dense.rs"]
mod dense;
#[path = "corpus/irregular.rs"]
mod irregular;
#[path = "corpus/stencil.rs"]
mod stencil;

use common::*;
use launch::{BoundLaunch, ElemType};

/// What a mirror sees: the bound launch and its materialised input buffers.
pub struct Ctx<'a> {
    bound: &'a BoundLaunch,
    inputs: &'a [Option<Vec<u8>>],
}

impl Ctx<'_> {
    fn bytes(&self, i: usize) -> &[u8] {
        self.inputs[i].as_deref().unwrap()
    }
    /// Buffer parameter `i` as f32s.
    pub fn f32(&self, i: usize) -> Vec<f32> {
        f32s(self.bytes(i))
    }
    /// Buffer parameter `i` as f64s.
    pub fn f64(&self, i: usize) -> Vec<f64> {
        f64s(self.bytes(i))
    }
    /// Buffer parameter `i` as i32s.
    pub fn i32(&self, i: usize) -> Vec<i32> {
        i32s(self.bytes(i))
    }
    /// Buffer parameter `i` as u32s.
    pub fn u32(&self, i: usize) -> Vec<u32> {
        u32s(self.bytes(i))
    }
    /// Buffer parameter `i` as u16s.
    pub fn u16(&self, i: usize) -> Vec<u16> {
        u16s(self.bytes(i))
    }
    /// Buffer parameter `i` as bytes.
    pub fn u8(&self, i: usize) -> Vec<u8> {
        self.bytes(i).to_vec()
    }
    /// Scalar parameter `i` as a C `int`.
    pub fn int(&self, i: usize) -> i32 {
        scalar(self.bound, i) as u32 as i32
    }
    /// Scalar parameter `i` as a C `float`.
    pub fn float(&self, i: usize) -> f32 {
        f32::from_bits(scalar(self.bound, i) as u32)
    }
    /// Scalar parameter `i` as a C `double`.
    pub fn double(&self, i: usize) -> f64 {
        f64::from_bits(scalar(self.bound, i))
    }
    /// By-value struct parameter `i`'s bytes.
    pub fn struct_bytes(&self, i: usize) -> &[u8] {
        match &self.bound.params[i].value {
            launch::BoundValue::Bytes { bytes, .. } => bytes,
            other => panic!("param {i} is not a struct: {other:?}"),
        }
    }
    /// Grid size in TBs (x, y, z).
    pub fn grid(&self) -> [i32; 3] {
        let g = &self.bound.grid;
        [g.x as i32, g.y as i32, g.z as i32]
    }
    /// Block size in threads (x, y, z).
    pub fn block(&self) -> [i32; 3] {
        let b = &self.bound.block;
        [b.x as i32, b.y as i32, b.z as i32]
    }
    /// Threads launched along x, y, z (grid * block).
    pub fn threads(&self) -> [i32; 3] {
        let (g, b) = (self.grid(), self.block());
        [g[0] * b[0], g[1] * b[1], g[2] * b[2]]
    }
}

/// A custom check of an output buffer: the first failure.
pub type Checker = Box<dyn Fn(&[u8]) -> Result<(), String>>;

/// The expected content of one output buffer.
pub enum Want {
    /// Exactly these bytes.
    Exact(Vec<u8>),
    /// Floats (as f64; f32 buffers are widened) with `|got - want| <= tol * scale[i]`.
    Near {
        want: Vec<f64>,
        scale: Vec<f64>,
        tol: f64,
    },
    /// Racy: element `i` (of `size` bytes) must be one of `cand[i]`.
    OneOf { size: usize, cand: Vec<Vec<u64>> },
    /// A custom check returning the first failure.
    Check(Checker),
}

/// Integers (any `bytemuck`-like little-endian plain type) exactly.
pub fn exact_i32(v: &[i32]) -> Want {
    Want::Exact(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}
/// u32s exactly.
pub fn exact_u32(v: &[u32]) -> Want {
    Want::Exact(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}
/// f32s bit for bit (where the CPU does the same IEEE operations in the same order).
pub fn exact_f32(v: &[f32]) -> Want {
    Want::Exact(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}
/// f64s bit for bit.
pub fn exact_f64(v: &[f64]) -> Want {
    Want::Exact(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}
/// f32s within `tol * scale`.
pub fn near_f32(want: &[f32], scale: &[f32], tol: f64) -> Want {
    Want::Near {
        want: want.iter().map(|x| f64::from(*x)).collect(),
        scale: scale.iter().map(|x| f64::from(*x)).collect(),
        tol,
    }
}
/// f64s within `tol * scale`.
pub fn near_f64(want: &[f64], scale: &[f64], tol: f64) -> Want {
    Want::Near {
        want: want.to_vec(),
        scale: scale.to_vec(),
        tol,
    }
}

/// A kernel entry's CPU mirror: the expected output buffers by parameter index.
type Mirror = fn(&Ctx) -> Vec<(usize, Want)>;

/// The mirror of every entry of the corpus.
fn mirror(kernel: &str) -> Option<Mirror> {
    Some(match kernel {
        "mm_naive" => dense::mm_naive,
        "mm_tiled" => dense::mm_tiled,
        "syrk" => dense::syrk,
        "syr2k" => dense::syr2k,
        "atax_kernel1" => dense::atax_kernel1,
        "atax_kernel2" => dense::atax_kernel2,
        "mvt_kernel1" => dense::mvt_kernel1,
        "mvt_kernel2" => dense::mvt_kernel2,
        "gemv_unroll4" => dense::gemv_unroll4,
        "doitgen" => dense::doitgen,
        "lud_internal" => dense::lud_internal,
        "transpose_naive" => dense::transpose_naive,
        "scalar_prod" => dense::scalar_prod,
        "backprop_layerforward" => dense::backprop_layerforward,
        "hotspot" => stencil::hotspot,
        "pathfinder" => stencil::pathfinder,
        "srad_diffusion_coeff" => stencil::srad_diffusion_coeff,
        "srad_update" => stencil::srad_update,
        "conv2d" => stencil::conv2d,
        "dwt2d_haar" => stencil::dwt2d_haar,
        "fdtd3d" => stencil::fdtd3d,
        "jacobi3d_7pt" => stencil::jacobi3d_7pt,
        "stencil2d_5pt" => stencil::stencil2d_5pt,
        "sad_4x4" => stencil::sad_4x4,
        "bfs_expand" => irregular::bfs_expand,
        "bfs_update" => irregular::bfs_update,
        "spmv_csr_scalar" => irregular::spmv_csr_scalar,
        "spmv_csr_vector" => irregular::spmv_csr_vector,
        "btree_find_k" => irregular::btree_find_k,
        "mergesort_step" => irregular::mergesort_step,
        "histogram_global" => irregular::histogram_global,
        "histogram_shared" => irregular::histogram_shared,
        "tpacf" => irregular::tpacf,
        "storegpu_chunk_hash" => irregular::storegpu_chunk_hash,
        "storegpu_sliding_hash" => irregular::storegpu_sliding_hash,
        "blackscholes" => irregular::blackscholes,
        "kernel_gpu_cuda" => irregular::lavamd,
        _ => return None,
    })
}

/// Checks `got` (a buffer of element type `e`) against `want`; the worst tolerance use
/// (error / allowed, 0 for exact) or a failure message.
fn check(e: ElemType, got: &[u8], want: &Want) -> Result<f64, String> {
    match want {
        Want::Exact(w) => {
            if w.len() != got.len() {
                return Err(format!("{} bytes, want {}", got.len(), w.len()));
            }
            match got
                .chunks(e.size())
                .zip(w.chunks(e.size()))
                .position(|(a, b)| a != b)
            {
                None => Ok(0.0),
                Some(k) => Err(format!(
                    "element {k}: got {:02x?}, want {:02x?}",
                    &got[k * e.size()..(k + 1) * e.size()],
                    &w[k * e.size()..(k + 1) * e.size()]
                )),
            }
        }
        Want::Near { want, scale, tol } => {
            let g: Vec<f64> = match e {
                ElemType::F32 => f32s(got).into_iter().map(f64::from).collect(),
                ElemType::F64 => f64s(got),
                other => return Err(format!("tolerance on a {other:?} buffer")),
            };
            if g.len() != want.len() {
                return Err(format!("{} elements, want {}", g.len(), want.len()));
            }
            let mut worst = 0.0f64;
            for (k, ((a, b), s)) in g.iter().zip(want).zip(scale).enumerate() {
                if a.to_bits() == b.to_bits() {
                    continue;
                }
                let allowed = tol * s.abs();
                let err = (a - b).abs();
                if err.is_nan() || err > allowed {
                    return Err(format!(
                        "element {k}: got {a:e}, want {b:e} (error {err:e} > {tol:e} * scale {s:e})"
                    ));
                }
                worst = worst.max(err / allowed);
            }
            Ok(worst)
        }
        Want::OneOf { size, cand } => {
            for (k, (g, c)) in got.chunks_exact(*size).zip(cand).enumerate() {
                let mut buf = [0u8; 8];
                buf[..*size].copy_from_slice(g);
                let v = u64::from_le_bytes(buf);
                if !c.contains(&v) {
                    return Err(format!("element {k}: {v:#x} is not one of {c:#x?}"));
                }
            }
            Ok(0.0)
        }
        Want::Check(f) => f(got).map(|()| 0.0),
    }
}

#[test]
fn every_entry_has_a_mirror() {
    let kernels: std::collections::BTreeSet<String> =
        cases().into_iter().map(|c| c.kernel).collect();
    for k in ANALYSIS_PATTERNS {
        assert!(kernels.contains(k), "{k} is no longer in the corpus");
    }
    let mirrored: Vec<&String> = kernels
        .iter()
        .filter(|k| !ANALYSIS_PATTERNS.contains(&k.as_str()))
        .collect();
    assert_eq!(mirrored.len(), 37, "{mirrored:?}");
    for k in mirrored {
        assert!(mirror(k).is_some(), "no CPU mirror for {k}");
    }
}

#[test]
fn outputs_match_cpu_mirrors() {
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for case in cases()
        .into_iter()
        .filter(|c| !ANALYSIS_PATTERNS.contains(&c.kernel.as_str()))
    {
        let Some(m) = mirror(&case.kernel) else {
            failures.push(format!("{}: no mirror", case.kernel));
            continue;
        };
        let mut wants: Option<Vec<(usize, Want)>> = None;
        for variant in VARIANTS {
            let ran = run_case(&case, variant, 1);
            let wants = wants.get_or_insert_with(|| {
                m(&Ctx {
                    bound: &ran.bound,
                    inputs: &ran.inputs,
                })
            });
            let mut worst = 0.0f64;
            for (i, want) in wants.iter() {
                let e = elem(&ran.bound, *i).unwrap();
                match check(e, ran.result.buffer(*i).unwrap(), want) {
                    Ok(w) => worst = worst.max(w),
                    Err(msg) => failures.push(format!(
                        "{}/{} [{variant}] p{i}: {msg}",
                        case.dir, case.stem
                    )),
                }
            }
            report.push(format!(
                "{:<36} {variant:<14} outputs {:?} worst error/allowed {worst:.3}",
                format!("{}/{}", case.dir, case.stem),
                wants.iter().map(|(i, _)| *i).collect::<Vec<_>>()
            ));
        }
    }
    println!("{}", report.join("\n"));
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// lavaMD's launch files leave `par_str` open (the static analysis needs no `alpha`); the
/// interpreter needs every value and says which is missing, whichever way the launch was
/// bound.
#[test]
fn lavamd_needs_par_str_to_run() {
    let case = cases().into_iter().find(|c| c.dir == "lavamd").unwrap();
    let dir = root().join("kernels").join("lavamd");
    let module = ptx_parser::parse_file(&dir.join("lavamd.compute_70.ptx")).unwrap();
    let f = module.kernel(&case.kernel).unwrap();
    let l = launch::Launch::read(&case.launch).unwrap();
    let want = "parameter 0 (`kernel_gpu_cuda_param_0`): no value given for this 8-byte by-value parameter";
    let e = l
        .bind(&case.kernel, &sim::param_sigs(f), &dir)
        .unwrap_err()
        .to_string();
    assert_eq!(e, want);
    let open = l
        .bind_open(&case.kernel, &sim::param_sigs(f), &dir)
        .unwrap();
    let prog = sim::Program::new(&module, &case.kernel).unwrap();
    let e = sim::run(
        &prog,
        &open,
        &sim::RunOptions::default(),
        &mut sim::NoObserver,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, want);
}
