//! Loads grouped to share one walk: loads with the same loops, lanes or rows are evaluated
//! together in one pass ([`IterGroup`]), whose results one TB keeps for its members
//! ([`IterPasses`]).

use super::*;

/// A load's group ([`IterGroup`]) and its place among the members.
pub(super) type Membership = (std::sync::Arc<IterGroup>, usize);

/// Loads whose lane passes are evaluated together, compiled into one tape: the loads of one
/// loop nest along their innermost iterations ([`LoadPlan::iter_tape`],
/// [`group_iterations`]) or along a warp row ([`RowWalk::leaf`]), a kernel's loop-free
/// loads along a warp ([`group_lanes`]), the guards outside the loops of loads walked by
/// rows ([`group_rows`]). A TB's jobs walk its loads one after the other; the first load of
/// a group to reach a pass's place evaluates the whole group there once and keeps every
/// member's answer ([`IterPasses`]) for the others. An unrolled loop's loads read each
/// other's values: mirror_boundary's fourth load reflects its index three times,
/// recomputing the first three loads' reflections.
pub(super) struct IterGroup {
    pub(super) tape: Tape,
    /// Per member, its address and guard nodes (address first); a row group's members'
    /// guard nodes alone.
    pub(super) members: Vec<Vec<u32>>,
}

/// The group of `loads` (two or more), each member's roots given by `roots`, compiled into
/// one tape, set in each member's slot (`slot`) with its place; nothing when the joined
/// tape is not `cheap` to evaluate eagerly.
fn join_group<'a>(
    plans: &mut [Option<LoadPlan<'a>>],
    loads: &[usize],
    roots: impl Fn(&LoadPlan) -> Vec<E>,
    cheap: impl Fn(&Tape) -> bool,
    slot: for<'p> fn(&'p mut LoadPlan<'a>) -> &'p mut Option<Membership>,
) {
    if loads.len() < 2 {
        return;
    }
    let member_roots: Vec<Vec<E>> = loads
        .iter()
        .filter_map(|&i| plans[i].as_ref().map(&roots))
        .collect();
    let tape = Tape::new(member_roots.iter().flatten());
    if !cheap(&tape) {
        return;
    }
    let members = member_roots
        .iter()
        .map(|rs| {
            rs.iter()
                .map(|e| tape.node(e).expect("compiled root"))
                .collect()
        })
        .collect();
    let g = std::sync::Arc::new(IterGroup { tape, members });
    for (pos, &i) in loads.iter().enumerate() {
        if let Some(p) = plans[i].as_mut() {
            *slot(p) = Some((g.clone(), pos));
        }
    }
}

/// Joins the loads of `plans` that lie in the same loops and have an iteration pass into
/// [`IterGroup`]s (groups of two or more).
pub(super) fn group_iterations(plans: &mut [Option<LoadPlan>]) {
    let mut by_nest: BTreeMap<Vec<LoopId>, Vec<usize>> = BTreeMap::new();
    for (i, p) in plans.iter().enumerate() {
        if let Some(p) = p.as_ref().filter(|p| p.iter_tape.is_some()) {
            by_nest.entry(p.site.loops.clone()).or_default().push(i);
        }
    }
    for (loops, loads) in by_nest {
        join_group(
            plans,
            &loads,
            |p| {
                std::iter::once(&p.site.addr)
                    .chain(&p.inner_conds)
                    .cloned()
                    .collect()
            },
            |t| t.is_cheap_in(&loops),
            |p| &mut p.iter_group,
        );
    }
}

/// Joins the loop-free loads of `plans` whose warp lanes a pass evaluates
/// ([`LoadPlan::lane_roots`]) into one [`IterGroup`] (of two or more), evaluated along the
/// warp's threads: a stencil's loads share their index arithmetic and guards (jacobi3d's
/// seven loads each evaluated the same tape of the thread's coordinates, where the
/// interpreter computes them once).
pub(super) fn group_lanes(plans: &mut [Option<LoadPlan>]) {
    let loads: Vec<usize> = (0..plans.len())
        .filter(|&i| plans[i].as_ref().is_some_and(|p| p.lane_roots.is_some()))
        .collect();
    join_group(
        plans,
        &loads,
        |p| {
            std::iter::once(&p.site.addr)
                .chain(&p.outer_conds)
                .chain(&p.inner_conds)
                .cloned()
                .collect()
        },
        Tape::is_cheap,
        |p| &mut p.lane_group,
    );
}

/// Joins the guards outside the loops of the loads that walk warp rows together
/// ([`RowPlan`]) into one [`IterGroup`] (of two or more; a member's nodes are its guards),
/// evaluated along a row's threads: nvcc's guards repeat the conditions of every path to
/// the load (scalar_prod's fourteen loads each evaluated the unrolled prologue's selects on
/// `%tid.x` for every row).
pub(super) fn group_rows(plans: &mut [Option<LoadPlan>]) {
    let loads: Vec<usize> = (0..plans.len())
        .filter(|&i| {
            plans[i]
                .as_ref()
                .and_then(|p| p.row.as_ref())
                .is_some_and(|rp| !rp.outer_nodes.is_empty())
        })
        .collect();
    join_group(
        plans,
        &loads,
        |p| p.outer_conds.clone(),
        Tape::is_cheap,
        |p| &mut p.row_group,
    );
}

/// Most addresses [`IterPasses`] keeps for one TB (4 MiB).
pub(super) const ITER_PASS_VALUES: usize = 1 << 18;

/// Deepest loop nest whose passes [`IterPasses`] keeps (its key holds the iterations).
pub(super) const ITER_PASS_DEPTH: usize = 4;

/// A group pass's place: the group's address, what its lanes differ in ([`axis_tag`]), the
/// (first lane's) thread, the iterations of the group's loops (the innermost one's the
/// chunk's first; -1 past the nest's depth) and the chunk's lanes.
type PassKey = (usize, u8, [i128; 3], [i128; ITER_PASS_DEPTH], usize);

/// [`PassKey`]'s tag of a lane axis: a pass along a loop's iterations and one along a
/// row's threads from the same thread and iteration are different passes.
pub(super) fn axis_tag(axis: LaneAxis) -> u8 {
    match axis {
        LaneAxis::Iter(_) => 0,
        LaneAxis::Tid => 1,
        LaneAxis::Threads(_) => 2,
    }
}

/// [`PassKey`]'s tag of a pass over a row's guards outside the loops
/// ([`TbWalk::group_mask`]).
pub(super) const ROW_GUARDS_TAG: u8 = 3;

/// The group passes of one TB's jobs ([`IterGroup`]): per pass, each member's count of
/// kept lanes followed by their addresses (the lanes whose guards hold, in lane order),
/// member after member, or for a row group each member's mask of lanes
/// ([`TbWalk::group_mask`]); `None` where the group's pass failed (each load then runs its
/// own).
#[derive(Default)]
pub(crate) struct IterPasses {
    pub(super) entries: FxMap<PassKey, Option<Box<[i128]>>>,
    pub(super) values: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A corpus launch, bound as the CLI binds it, and its model.
    fn corpus(dir: &str, launch_file: &str) -> (BoundLaunch, KernelModel) {
        let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../kernels")
            .join(dir);
        let m = ptx_parser::parse_file(&d.join(format!("{dir}.compute_70.ptx"))).expect("parse");
        let l = launch::Launch::read(&d.join(launch_file)).expect("launch");
        let name = l.kernel.clone().expect("kernel named");
        let f = m.kernel(&name).expect("kernel");
        let b = l
            .bind(&name, &crate::param_sigs(f), &d)
            .expect("bind")
            .with_module(&m);
        let model = crate::addr::analyze_kernel(f, &b);
        (b, model)
    }

    /// Every load of every TB walked alone and as a member of its group pass (the loads in
    /// turn, one [`IterPasses`] per TB, as the jobs run) gives the same runs and ranges:
    /// mirror_boundary's unrolled loads, whose addresses differ load by load while their
    /// union is the same row (the footprints alone would not tell a load read another's).
    #[test]
    fn group_passes_give_each_load_its_own_addresses() {
        grouped_equals_alone(
            "mirror_boundary",
            group_iterations,
            |p| p.iter_group.is_some(),
            4,
            true,
        );
    }

    /// [`group_passes_give_each_load_its_own_addresses`] for the warp passes of loop-free
    /// loads ([`group_lanes`]): a 3-D stencil (block 8 x 8 x 4, a warp across four rows),
    /// 4x4 sums of differences, and module_array's loads of a `.const` table at addresses
    /// every lane shares beside a sliding window.
    #[test]
    fn lane_groups_give_each_load_its_own_addresses() {
        for (dir, members) in [("jacobi3d", 7), ("sad", 17), ("module_array", 33)] {
            grouped_equals_alone(dir, group_lanes, |p| p.lane_group.is_some(), members, true);
        }
    }

    /// The same for warp rows walked together ([`RowWalk`]): their guards outside the
    /// loops from one pass per row ([`group_rows`]), their innermost iterations from the
    /// loop nest's pass along the row ([`RowWalk::leaf`]), their trip counts asked once per
    /// row ([`TripCache::row_trip`]): scalar_prod's fourteen loads (the unrolled loop's
    /// eight and the prologue's six, which never run for this launch), a GEMM's, syr2k's and
    /// gemv_unroll's.
    #[test]
    fn row_groups_give_each_load_its_own_addresses() {
        fn both(plans: &mut [Option<LoadPlan>]) {
            group_iterations(plans);
            group_rows(plans);
        }
        // Six of scalar_prod's fourteen loads keep guards outside their loops; the other
        // eight lost theirs when joins whose sides cover every case took the common
        // condition (issue 41).
        grouped_equals_alone("scalar_prod", both, |p| p.row_group.is_some(), 6, true);
        // Loads without guards outside their loops, whose innermost loops mostly run as
        // affine runs (a row pass where they do not).
        for dir in ["mm_naive", "syr2k", "gemv_unroll"] {
            let member = |p: &LoadPlan| p.row.is_some() && p.iter_group.is_some();
            grouped_equals_alone(dir, both, member, 2, false);
        }
    }

    fn grouped_equals_alone(
        dir: &str,
        group: fn(&mut [Option<LoadPlan>]),
        member: fn(&LoadPlan) -> bool,
        at_least: usize,
        passes_kept: bool,
    ) {
        let (b, model) = corpus(dir, "small.json");
        let dim = |d: u64| u32::try_from(d).expect("small launch");
        let grid = [b.grid.x, b.grid.y, b.grid.z].map(dim);
        let block = [b.block.x, b.block.y, b.block.z].map(dim);
        let alone: Vec<Option<LoadPlan>> = model
            .loads
            .iter()
            .map(|s| Some(plan(&model, s, grid, block)))
            .collect();
        let mut grouped: Vec<Option<LoadPlan>> = model
            .loads
            .iter()
            .map(|s| Some(plan(&model, s, grid, block)))
            .collect();
        group(&mut grouped);
        let members = grouped.iter().flatten().filter(|p| member(p)).count();
        assert!(
            members >= at_least,
            "{dir}: the loads form a group ({members} members)"
        );
        let deps = all_trip_deps(&model);
        let shared = SharedTrips::default();
        let spent = AtomicU64::new(0);
        let allow = Allowance {
            spent: &spent,
            limit: u64::MAX,
        };
        let gran = Granularity::Element;
        for z in 0..grid[2] {
            for y in 0..grid[1] {
                for x in 0..grid[0] {
                    let key = [x, y, z];
                    let mut passes = IterPasses::default();
                    let mut trips = TripCache::new(&deps, &shared);
                    for (i, (a, g)) in alone.iter().zip(&grouped).enumerate() {
                        let (a, g) = (a.as_ref().unwrap(), g.as_ref().unwrap());
                        let mut t = TripCache::new(&deps, &shared);
                        let want = eval_load(
                            &model,
                            &b,
                            gran,
                            a,
                            key,
                            block,
                            &mut t,
                            &mut IterPasses::default(),
                            &allow,
                        );
                        let got = eval_load(
                            &model,
                            &b,
                            gran,
                            g,
                            key,
                            block,
                            &mut trips,
                            &mut passes,
                            &allow,
                        );
                        assert!(want.is_ok(), "{dir}: load {i}, TB {key:?}: {want:?}");
                        assert_eq!(got.ok(), want.ok(), "{dir}: load {i}, TB {key:?}");
                    }
                    if passes_kept {
                        assert!(
                            !passes.entries.is_empty(),
                            "{dir}: the group's passes were kept"
                        );
                    }
                }
            }
        }
    }
}
