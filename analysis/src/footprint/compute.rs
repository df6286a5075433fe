//! The footprints' driver: [`compute`] and [`compute_within`] plan the loads, walk each
//! distinct projection of the grid under the memory allowance and assemble the per-TB
//! classes.

use super::*;

/// Computes the static footprints of `model`'s resolved loads (skipping `skip`).
/// Returns the footprints and the loads whose evaluation failed (they are left out).
pub fn compute(
    model: &KernelModel,
    launch: &BoundLaunch,
    gran: Granularity,
    skip: &[bool],
) -> (Footprints, Vec<LoadError>) {
    compute_within(model, launch, gran, skip, u64::MAX)
}

/// Bytes charged per run a job records: the run itself, its share of sorting and class
/// building, and, for a strided run, the intervals it expands to.
pub(super) fn run_bytes(r: &Run) -> u64 {
    if r.2 == 1 || r.3 <= 1 {
        RUN_BYTES
    } else {
        RUN_BYTES + r.3.saturating_mul(INTERVAL_BYTES)
    }
}
const RUN_BYTES: u64 = 64;
const INTERVAL_BYTES: u64 = 32;

/// How much memory one job may still take: the load's counter and limit.
pub(super) struct Allowance<'a> {
    pub(super) spent: &'a AtomicU64,
    pub(super) limit: u64,
}

/// [`compute`] within `budget` bytes for the footprint work. The first job of every load
/// (its first grid projection) runs with an equal share of the budget; from its size the
/// load's total is estimated (`first x projections`), and loads are admitted in program
/// order while the estimates fit. A load refused, or whose jobs together exceed its
/// allowance (estimate plus an equal share of what is left over), is reported with reason
/// `budget`. Every decision depends only on the inputs, never on the thread count.
pub fn compute_within(
    model: &KernelModel,
    launch: &BoundLaunch,
    gran: Granularity,
    skip: &[bool],
    budget: u64,
) -> (Footprints, Vec<LoadError>) {
    let grid = [
        launch.grid.x as u32,
        launch.grid.y as u32,
        launch.grid.z as u32,
    ];
    let block = [
        launch.block.x as u32,
        launch.block.y as u32,
        launch.block.z as u32,
    ];
    let num_tbs = grid[0] * grid[1] * grid[2];
    let mut plans: Vec<Option<LoadPlan>> = model
        .loads
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if skip.get(i).copied().unwrap_or(false) {
                None
            } else {
                Some(plan(model, s, grid, block))
            }
        })
        .collect();
    group_iterations(&mut plans);
    group_lanes(&mut plans);
    group_rows(&mut plans);
    // Jobs: (load, projection of the grid on the load's dims).
    let mut jobs: Vec<(usize, [u32; 3])> = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        let Some(p) = p else { continue };
        let ext = |d: usize| if p.dims[d] { grid[d] } else { 1 };
        for z in 0..ext(2) {
            for y in 0..ext(1) {
                for x in 0..ext(0) {
                    jobs.push((i, [x, y, z]));
                }
            }
        }
    }
    let deps = all_trip_deps(model);
    let shared = SharedTrips::default();
    let run_job = |j: usize,
                   allow: &Allowance,
                   trips: &mut TripCache,
                   passes: &mut IterPasses|
     -> Result<(WarpRuns, Ranges), String> {
        let (i, key) = jobs[j];
        let p = plans[i].as_ref().ok_or_else(String::new)?;
        eval_load(model, launch, gran, p, key, block, trips, passes, allow)
            .map_err(|e| e.to_string())
    };
    // Per load, its jobs `[first, end)`.
    let mut span = vec![(usize::MAX, 0usize); plans.len()];
    for (j, (i, _)) in jobs.iter().enumerate() {
        if span[*i].0 == usize::MAX {
            span[*i].0 = j;
        }
        span[*i].1 = j + 1;
    }
    let live_loads: Vec<usize> = (0..plans.len())
        .filter(|&i| span[i].0 != usize::MAX)
        .collect();
    let share = budget / (live_loads.len().max(1) as u64);
    let counters: Vec<AtomicU64> = (0..plans.len()).map(|_| AtomicU64::new(0)).collect();
    // Every load's first job is of the grid's first TB: the loads run in one chunk per
    // worker, each chunk on one trip cache and one set of group passes (a group's pass
    // was otherwise run again by each member: module_array's 33 loop-free loads).
    let chunk = live_loads
        .len()
        .div_ceil(rayon::current_num_threads().max(1))
        .max(1);
    let firsts: Vec<Result<(WarpRuns, Ranges), String>> = live_loads
        .par_chunks(chunk)
        .flat_map_iter(|loads| {
            let mut trips = TripCache::new(&deps, &shared);
            let mut passes = IterPasses::default();
            loads
                .iter()
                .map(|&i| {
                    run_job(
                        span[i].0,
                        &Allowance {
                            spent: &counters[i],
                            limit: share,
                        },
                        &mut trips,
                        &mut passes,
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // Admit loads in order while their estimates fit.
    let mut admitted = vec![false; plans.len()];
    let mut estimates = vec![0u64; plans.len()];
    let mut total = 0u64;
    for (&i, r) in live_loads.iter().zip(&firsts) {
        if r.is_err() {
            continue;
        }
        let first = counters[i].load(Ordering::Relaxed);
        let est = first.saturating_mul((span[i].1 - span[i].0) as u64);
        if total.saturating_add(est) <= budget {
            total += est;
            admitted[i] = true;
            estimates[i] = est;
        }
    }
    let slack = (budget - total) / (admitted.iter().filter(|a| **a).count().max(1) as u64);
    // The jobs of one `%ctaid` (one per load) run one after another on one trip cache:
    // the loads of a thread share its loops' counts, which were worked out again per load.
    let mut by_tb: BTreeMap<[u32; 3], Vec<usize>> = BTreeMap::new();
    for (j, (_, key)) in jobs.iter().enumerate() {
        by_tb.entry(*key).or_default().push(j);
    }
    let by_tb: Vec<Vec<usize>> = by_tb.into_values().collect();
    let per_tb: Vec<Vec<(usize, JobResult)>> = by_tb
        .par_iter()
        .map(|js| {
            let mut trips = TripCache::new(&deps, &shared);
            let mut passes = IterPasses::default();
            js.iter()
                .map(|&j| {
                    let i = jobs[j].0;
                    let r = if j == span[i].0 {
                        Ok((Vec::new(), Vec::new()))
                    } else if !admitted[i] {
                        Err(EvalError::Budget.to_string())
                    } else {
                        run_job(
                            j,
                            &Allowance {
                                spent: &counters[i],
                                limit: estimates[i].saturating_add(slack),
                            },
                            &mut trips,
                            &mut passes,
                        )
                    };
                    (j, r)
                })
                .collect()
        })
        .collect();
    let mut results: Vec<Result<(WarpRuns, Ranges), String>> = (0..jobs.len())
        .map(|_| Ok((Vec::new(), Vec::new())))
        .collect();
    for (j, r) in per_tb.into_iter().flatten() {
        results[j] = r;
    }
    for (&i, r) in live_loads.iter().zip(firsts) {
        let j = span[i].0;
        results[j] = match r {
            Ok(w) if admitted[i] => Ok(w),
            Ok(_) => Err(EvalError::Budget.to_string()),
            Err(e) => Err(e),
        };
    }
    // Byte ranges per load, apart from the runs.
    let mut load_ranges: Vec<Vec<(u32, u64, u64)>> = vec![Vec::new(); plans.len()];
    let results: Vec<Result<WarpRuns, String>> = results
        .into_iter()
        .zip(&jobs)
        .map(|(r, (i, _))| {
            r.map(|(w, rs)| {
                for x in rs {
                    merge_ranges(&mut load_ranges[*i], x);
                }
                w
            })
        })
        .collect();
    let mut errors: Vec<LoadError> = Vec::new();
    let mut bad = vec![false; plans.len()];
    for ((i, _), r) in jobs.iter().zip(&results) {
        if let Err(e) = r {
            if !bad[*i] {
                bad[*i] = true;
                errors.push(LoadError {
                    load: *i,
                    error: e.clone(),
                });
            }
        }
    }
    // Per load: key -> result index.
    let mut first_job = vec![usize::MAX; plans.len()];
    for (j, (i, _)) in jobs.iter().enumerate() {
        if first_job[*i] == usize::MAX {
            first_job[*i] = j;
        }
    }
    let live: Vec<usize> = (0..plans.len())
        .filter(|&i| plans[i].is_some() && !bad[i])
        .collect();
    let params: Vec<u32> = {
        let mut ps: Vec<u32> = results
            .iter()
            .flatten()
            .flat_map(|w| w.iter().flat_map(|v| v.iter().map(|r| r.0)))
            .collect();
        ps.sort_unstable();
        ps.dedup();
        ps
    };
    let nwarps = (block[0] * block[1] * block[2]).div_ceil(32) as usize;
    let job_of = |i: usize, tb: u32| -> usize {
        let Some(p) = plans[i].as_ref() else {
            return usize::MAX;
        };
        let c = [
            tb % grid[0],
            (tb / grid[0]) % grid[1],
            tb / (grid[0] * grid[1]),
        ];
        let ext = |d: usize| if p.dims[d] { grid[d] as usize } else { 1 };
        let proj = |d: usize| if p.dims[d] { c[d] as usize } else { 0 };
        first_job[i] + proj(0) + ext(0) * (proj(1) + ext(1) * proj(2))
    };
    let out_params: Vec<ParamFootprint> = params
        .par_iter()
        .map(|&param| {
            // TB class key: the jobs of the loads that touch this parameter.
            let touching: Vec<usize> = live
                .iter()
                .copied()
                .filter(|&i| {
                    let j0 = first_job[i];
                    results[j0..]
                        .iter()
                        .zip(&jobs[j0..])
                        .take_while(|(_, (l, _))| *l == i)
                        .any(|(r, _)| {
                            r.as_ref()
                                .is_ok_and(|w| w.iter().any(|v| v.iter().any(|r| r.0 == param)))
                        })
                })
                .collect();
            let mut index: FxMap<Vec<usize>, usize> = FxMap::default();
            let mut classes: Vec<Class> = Vec::new();
            for tb in 0..num_tbs {
                let key: Vec<usize> = touching.iter().map(|&i| job_of(i, tb)).collect();
                let k = if let Some(&k) = index.get(&key) {
                    k
                } else {
                    let mut warps: Vec<Vec<Run>> = vec![Vec::new(); nwarps];
                    for &j in &key {
                        if let Ok(w) = &results[j] {
                            for (wi, v) in w.iter().enumerate() {
                                warps[wi].extend(v.iter().filter(|r| r.0 == param));
                            }
                        }
                    }
                    let warps: Vec<Vec<Run>> = warps.into_iter().map(normalize_runs).collect();
                    classes.push(class_from_runs(&warps));
                    index.insert(key, classes.len() - 1);
                    classes.len() - 1
                };
                classes[k].members.push(tb);
            }
            classes.retain(|c| !c.units.is_empty());
            let fallback = model
                .loads
                .iter()
                .map(|l| u64::from(l.width))
                .min()
                .unwrap_or(4);
            ParamFootprint {
                param,
                unit_bytes: unit_bytes(gran, launch, param, fallback),
                classes,
            }
        })
        .collect();
    let load_ranges = load_ranges
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            if bad[i] {
                return Vec::new();
            }
            LoadRange::from_merged(v)
        })
        .collect();
    (
        Footprints {
            num_tbs,
            params: out_params,
            load_ranges,
        },
        errors,
    )
}
