//! `paver simulate --placement interleave|first-touch|ld` (issue 17, seed paper 004 §4.6):
//! data placement on a multi-module GPU (`--gpu mcm4`). `ld` runs Algorithm 2
//! ([`sim::timing::numa::algorithm2`]) on the launch's Locality Descriptors and the static
//! per-TB footprints (line granularity), both from the analysis; the other two need nothing
//! from it. On a GPU with one module the flag is refused: there is nothing to place.

use analysis::footprint::{Granularity, PARAM_SHIFT};
use sim::timing::numa::{algorithm2, Placement, PlacementKind, StructureProfile};
use sim::timing::{TbPolicy, TimingConfig};

use crate::error::CliError;
use crate::launch_args::Loaded;

/// The placement `name` asks for on `cfg`, with Algorithm 2's plan for `ld`.
pub(crate) fn placement(
    loaded: &Loaded,
    name: &str,
    cfg: &TimingConfig,
    policy: TbPolicy,
) -> Result<Placement, CliError> {
    let kind = PlacementKind::parse(name).ok_or_else(|| {
        CliError::Usage(format!(
            "--placement {name}: expected interleave, first-touch or ld"
        ))
    })?;
    let Some(numa) = &cfg.gpu.numa else {
        return Err(CliError::Usage(format!(
            "--placement {name}: GPU `{}` has one module, nothing to place; use a multi-module GPU (--gpu mcm4, or a .toml with a [numa] section)",
            cfg.gpu.name
        )));
    };
    if kind != PlacementKind::Interleave && policy != TbPolicy::Lrr {
        return Err(CliError::Usage(format!(
            "--placement {name} partitions the TBs over the modules itself; leave --tb-policy at lrr (or use --placement interleave)"
        )));
    }
    let plan = (kind == PlacementKind::Ld)
        .then(|| -> Result<_, CliError> {
            let hints = super::locality_hints(loaded)?;
            let a = analysis::analyze(loaded.kernel(), &loaded.bound, Granularity::Line(128))?;
            let offset = (1u64 << PARAM_SHIFT) - 1;
            let profiles: Vec<StructureProfile> = a
                .footprints
                .params
                .iter()
                .map(|p| StructureProfile {
                    region: p.param as usize,
                    classes: p
                        .classes
                        .iter()
                        .map(|c| {
                            let ranges = c
                                .units
                                .iter()
                                .map(|&(lo, hi)| {
                                    ((lo & offset) * p.unit_bytes, (hi & offset) * p.unit_bytes)
                                })
                                .collect();
                            (c.members.clone(), ranges)
                        })
                        .collect(),
                })
                .collect();
            let g = &loaded.bound.grid;
            Ok(algorithm2(
                &hints,
                &profiles,
                [g.x, g.y, g.z],
                numa.modules,
                u64::from(cfg.gpu.l2.line_bytes),
            ))
        })
        .transpose()?;
    Ok(Placement { kind, plan })
}
