//! Data placement on a multi-module GPU (issue 17, seed paper 004 §4.6): `interleave`,
//! `first-touch`, or `ld`, Algorithm 2 ([`sim::timing::numa::algorithm2`]) on the launch's
//! Locality Descriptors and static per-TB footprints. On a GPU with one module a placement
//! is refused: there is nothing to place.

use analysis::footprint::PARAM_SHIFT;
use sim::timing::named::Named;
use sim::timing::numa::{algorithm2, Placement, PlacementKind, StructureProfile};
use sim::timing::TbPolicy;

use crate::error::{Error, Result};
use crate::Experiment;

/// The placement `name` asks for on `e`'s GPU, with Algorithm 2's plan for `ld`.
pub(crate) fn placement(e: &Experiment<'_>, name: &str, policy: TbPolicy) -> Result<Placement> {
    let kind = PlacementKind::parse(name).ok_or_else(|| {
        Error::Invalid(format!(
            "--placement {name}: expected one of {}",
            PlacementKind::names().join(", ")
        ))
    })?;
    let gpu = e.gpu();
    let Some(numa) = &gpu.numa else {
        return Err(Error::Invalid(format!(
            "--placement {name}: GPU `{}` has one module, nothing to place; use a multi-module GPU (--gpu mcm4, or a .toml with a [numa] section)",
            gpu.name
        )));
    };
    if kind != PlacementKind::Interleave && policy != TbPolicy::LRR {
        return Err(Error::Invalid(format!(
            "--placement {name} partitions the TBs over the modules itself; leave --tb-policy at lrr (or use --placement interleave)"
        )));
    }
    if kind != PlacementKind::Ld {
        return Ok(Placement { kind, plan: None });
    }
    let hints = e.hints()?;
    let w = e.workload();
    let a = w.analysis(e.granularity())?;
    let offset = (1u64 << PARAM_SHIFT) - 1;
    let profiles: Vec<StructureProfile> = a
        .analysis
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
    let g = &w.bound.grid;
    let plan = algorithm2(
        &hints,
        &profiles,
        [g.x, g.y, g.z],
        numa.modules,
        u64::from(gpu.l2.line_bytes),
    );
    Ok(Placement {
        kind,
        plan: Some(plan),
    })
}
