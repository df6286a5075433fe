//! Static locality analysis of PTX kernels.
//!
//! Data flows in one direction:
//! 1. [`dom`] and [`loops`]: dominator tree and natural loops of the kernel's CFG.
//! 2. [`addr`]: symbolic execution over the CFG in the value domain of [`expr`]; loops are
//!    summarised by [`ivs`] (induction variables, per-thread trip counts). The result, a
//!    [`addr::KernelModel`], holds each global load's address expression, guard and loop nest.
//! 3. [`footprint`]: exact per-TB sets of data units (line / sector / element) read, as
//!    interval lists shared by TBs with equal footprints; also built from explicit address
//!    sets (the interpreter's dynamic footprints).
//! 4. [`locality`]: the TB locality graph from an inverted index (units grouped by the set of
//!    TB classes reading them), PAVER Table 2 statistics and the Fig. 2 sharing categories.
#![warn(missing_docs)]

pub mod addr;
pub mod dom;
pub mod expr;
pub mod footprint;
pub mod ivs;
pub mod locality;
pub mod loops;
pub mod report;

use launch::{BoundLaunch, ParamSig, SigType};
use ptx_parser::{Function, ScalarType};

/// The kernel's parameter list as the launch binder sees it (same as the CLI's).
pub fn param_sigs(f: &Function) -> Vec<ParamSig> {
    f.params
        .iter()
        .map(|p| {
            let bits = p.ty.size() * 8;
            let ty = match (p.array, p.ty) {
                (Some(n), t) => SigType::Bytes {
                    bytes: u64::from(n) * u64::from(t.size()),
                },
                (None, ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64) => {
                    SigType::Int { bits, signed: true }
                }
                (None, ScalarType::F16 | ScalarType::F32 | ScalarType::F64 | ScalarType::Bf16) => {
                    SigType::Float { bits }
                }
                _ => SigType::Int {
                    bits,
                    signed: false,
                },
            };
            ParamSig {
                name: p.name.clone(),
                ty,
            }
        })
        .collect()
}

/// One kernel analysed for one launch: the symbolic model, the footprints and the loads
/// whose evaluation failed.
#[derive(Debug)]
pub struct Analysis {
    /// Loads, loops and their expressions.
    pub model: addr::KernelModel,
    /// Per-TB footprints of the resolved loads.
    pub footprints: footprint::Footprints,
    /// Per load (index into `model.loads`): why it is unresolved, if it is.
    pub unresolved: Vec<Option<String>>,
}

/// Everything that stops an analysis before it starts.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The launch is larger than the analysis can represent or this machine can hold.
    #[error("kernel {kernel}: {why}")]
    TooLarge {
        /// The kernel.
        kernel: String,
        /// What is too large.
        why: String,
    },
    /// The function is a declaration without a body.
    #[error("kernel {kernel}: no body to analyse")]
    NoBody {
        /// The kernel.
        kernel: String,
    },
}

/// Largest number of TBs analysed (the locality graph's ids are `u32`, its rows dense).
pub const MAX_TBS: u64 = 1 << 24;

/// Analyses kernel `f` under `launch` at granularity `gran`.
pub fn analyze(
    f: &Function,
    launch: &BoundLaunch,
    gran: footprint::Granularity,
) -> Result<Analysis, AnalysisError> {
    if !f.has_body {
        return Err(AnalysisError::NoBody {
            kernel: f.name.clone(),
        });
    }
    let tbs = launch
        .grid
        .x
        .saturating_mul(launch.grid.y)
        .saturating_mul(launch.grid.z);
    if tbs > MAX_TBS {
        return Err(AnalysisError::TooLarge {
            kernel: f.name.clone(),
            why: format!("{tbs} thread blocks, more than the {MAX_TBS} the analysis supports"),
        });
    }
    let model = addr::analyze_kernel(f, launch);
    let mut unresolved: Vec<Option<String>> = model
        .loads
        .iter()
        .map(|l| l.unresolved(&model).map(|r| r.to_string()))
        .collect();
    let skip: Vec<bool> = unresolved.iter().map(Option::is_some).collect();
    let (footprints, errors) = footprint::compute(&model, launch, gran, &skip);
    for e in errors {
        unresolved[e.load] = Some(e.error);
    }
    Ok(Analysis {
        model,
        footprints,
        unresolved,
    })
}
