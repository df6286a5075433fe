//! Sizes checked before anything is allocated: worker threads, and the memory a run or a
//! simulation of a launch needs against the process's memory budget
//! ([`launch::MemoryBudget`]: half the machine, or `PAVER_MEMORY_LIMIT`).

use crate::error::CliError;
use experiment::Workload;

/// Worker threads per available core that `--threads` may ask for: more only adds
/// scheduling and memory (each worker holds a TB's shared and local memory).
const THREADS_PER_CORE: usize = 4;

/// The worker threads to use for `--threads requested`: at most [`THREADS_PER_CORE`] per
/// available core (at least 8), with a note on standard error when that caps the request.
/// Results do not depend on the thread count, so capping changes only the speed.
pub fn worker_threads(requested: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = (cores * THREADS_PER_CORE).max(8);
    if requested > cap {
        crate::out::eprintln(&format!(
            "paver: note: --threads {requested} is more than {THREADS_PER_CORE} per available core ({cores}); using {cap}"
        ));
        cap
    } else {
        requested
    }
}

/// The budget of this process; a malformed `PAVER_MEMORY_LIMIT` is a usage error.
pub fn budget() -> Result<launch::MemoryBudget, CliError> {
    launch::MemoryBudget::detect().map_err(|e| CliError::Usage(e.to_string()))
}

fn too_large(e: sim::SimError) -> CliError {
    match e {
        sim::SimError::Launch(launch::LaunchError::Budget { message }) => {
            CliError::TooLarge(message)
        }
        e => CliError::Sim(e),
    }
}

/// Checks a functional run of the loaded launch with `workers` TBs in flight.
pub fn check_run_memory(loaded: &Workload, workers: usize) -> Result<(), CliError> {
    let needs = sim::MemoryNeeds::of(&loaded.module, loaded.kernel(), &loaded.bound);
    needs
        .check_run(workers as u64, &budget()?)
        .map_err(too_large)
}

/// Largest graph file `paver partition` reads (4 GiB; a 65,536-TB GEMM's 25 M edges take
/// about 600 MB of JSON).
const MAX_GRAPH_BYTES: u64 = 4 << 30;

/// Bytes the partitioner holds per TB and per edge of a locality graph (adjacency in both
/// directions, METIS's copies, the orders and groups), a generous estimate.
const GRAPH_BYTES_PER_TB: u64 = 64;
const GRAPH_BYTES_PER_EDGE: u64 = 48;

/// Reads a graph input (analysis JSON, `.npz` or METIS text) with the size cap, refusing
/// what is not a regular file or a pipe.
pub fn read_graph_bytes(path: &std::path::Path) -> Result<Vec<u8>, CliError> {
    launch::budget::read_input(path, MAX_GRAPH_BYTES).map_err(|message| CliError::Io {
        path: path.to_path_buf(),
        message,
    })
}

/// Checks the size a METIS graph's header announces (`N M ...` on the first line that is
/// not a `%` comment) before the partitioner allocates for it.
pub fn check_metis_header(text: &str, path: &std::path::Path) -> Result<(), CliError> {
    let header = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('%'));
    let mut nums = header
        .into_iter()
        .flat_map(str::split_whitespace)
        .map(|w| w.parse::<u64>().ok());
    let (Some(Some(n)), Some(Some(m))) = (nums.next(), nums.next()) else {
        return Ok(()); // the graph reader says what is wrong
    };
    budget()?
        .check(
            &format!("a locality graph of {n} TBs and {m} edges"),
            n.saturating_mul(GRAPH_BYTES_PER_TB)
                .saturating_add(m.saturating_mul(GRAPH_BYTES_PER_EDGE)),
        )
        .map_err(|e| CliError::TooLarge(format!("{}: {e}", path.display())))
}

/// Checks an analysis document's graph before the partitioner allocates for it:
/// `graph.num_tbs` must be the number of TBs of `grid` (when the document has one), and the
/// graph must fit in the memory budget.
pub fn check_analysis_graph(
    doc: &serde_json::Value,
    path: &std::path::Path,
) -> Result<(), CliError> {
    let Some(num_tbs) = doc["graph"]["num_tbs"].as_u64() else {
        return Ok(()); // the graph reader says what is missing
    };
    let bad = |message: String| CliError::Partition {
        path: path.to_path_buf(),
        message,
    };
    if let Some(grid) = doc["grid"].as_array() {
        let dims: Option<Vec<u64>> = grid.iter().map(serde_json::Value::as_u64).collect();
        if let Some(dims) = dims {
            let tbs = dims.iter().fold(1u64, |a, &d| a.saturating_mul(d));
            if tbs != num_tbs {
                return Err(bad(format!(
                    "graph.num_tbs is {num_tbs} but the grid {} has {tbs} TBs",
                    dims.iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join("x")
                )));
            }
        }
    }
    let edges = doc["graph"]["edges"].as_array().map_or(0, Vec::len) as u64;
    let bytes = num_tbs
        .saturating_mul(GRAPH_BYTES_PER_TB)
        .saturating_add(edges.saturating_mul(GRAPH_BYTES_PER_EDGE));
    budget()?
        .check(
            &format!("a locality graph of {num_tbs} TBs and {edges} edges"),
            bytes,
        )
        .map_err(|e| CliError::TooLarge(format!("{}: {e}", path.display())))
}
