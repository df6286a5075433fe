//! The TB locality heat maps of a sweep (PAVER Fig. 5): the adjacency matrix of each
//! launch's locality graph, max-pooled to at most [`MAX_SIDE`] cells a side, saved by
//! `paver sweep` as `DIR/heatmaps/<kernel>.<launch stem>.<key>.json` when it analyses the
//! launch, and drawn by `paver report` (the `figures` module).
//!
//! The sweep keeps the pooled matrix rather than the graph: a report must be drawable from
//! the sweep folder alone (the PTX may be gone, or on another machine after a Slurm run),
//! and the pooled matrix is what the figure shows. The file is a function of the launch's
//! inputs only, so shards that analyse the same launch write identical files.

use std::path::{Path, PathBuf};

use experiment::output::{write_atomic, WriteError};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::plan::LaunchInput;

/// `format` of a heat map file.
pub const FORMAT: &str = "paver-heatmap/1";

/// Largest side of the pooled matrix, in cells: enough to show the paper's patterns (bands,
/// blocks, diagonals) on grids of thousands of TBs, small enough to draw as vector graphics.
pub const MAX_SIDE: u32 = 128;

/// One launch's heat map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Heatmap {
    /// Always [`FORMAT`].
    pub format: String,
    /// Kernel name.
    pub kernel: String,
    /// PTX path as the plan resolved it.
    pub ptx: String,
    /// Launch file path.
    pub launch: String,
    /// SHA-256 of the PTX bytes.
    pub ptx_sha256: String,
    /// SHA-256 of the launch file bytes.
    pub launch_sha256: String,
    /// TBs in the grid (the matrix is `num_tbs x num_tbs` before pooling).
    pub num_tbs: u32,
    /// Cells a side after pooling: `min(num_tbs, MAX_SIDE)`. Cell `(r, c)` covers TB ids
    /// `[r * num_tbs / side, (r + 1) * num_tbs / side)` by the same range of columns.
    pub side: u32,
    /// Largest edge weight (shared data units of one TB pair).
    pub max_weight: u64,
    /// Edges of the graph (unordered TB pairs sharing data).
    pub edges: u64,
    /// PAVER §6.2 class of the launch (high / low / none).
    pub locality_class: String,
    /// `side * side` cells, row-major: the largest weight of a TB pair the cell covers, 0
    /// where none shares data (the diagonal of an unpooled matrix, since a TB is not its
    /// own neighbour).
    pub cells: Vec<u64>,
}

impl Heatmap {
    /// The heat map of `graph` for the launch `input` of `kernel`.
    pub fn new(
        input: &LaunchInput,
        kernel: &str,
        graph: &analysis::locality::Graph,
        locality_class: &str,
    ) -> Heatmap {
        let (side, cells) = analysis::heatmap::pooled(graph, MAX_SIDE);
        Heatmap {
            format: FORMAT.into(),
            kernel: kernel.into(),
            ptx: input.ptx.to_string_lossy().into_owned(),
            launch: input.launch.to_string_lossy().into_owned(),
            ptx_sha256: input.ptx_sha256.clone(),
            launch_sha256: input.launch_sha256.clone(),
            num_tbs: graph.num_tbs(),
            side,
            max_weight: cells.iter().copied().max().unwrap_or(0),
            edges: graph.num_edges(),
            locality_class: locality_class.into(),
            cells,
        }
    }

    /// File name: kernel, launch file stem and the first 12 hex digits of a hash over both
    /// inputs and the kernel, so that two launches never share a name.
    pub fn file_name(&self) -> String {
        let stem = Path::new(&self.launch)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut h = Sha256::new();
        for part in [&self.ptx_sha256, &self.launch_sha256, &self.kernel] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let key: String = h
            .finalize()
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{}.{}.{key}.json", safe(&self.kernel), safe(&stem))
    }

    /// The stem of the heat map's figures (`….svg`, `….png`) and of the report's links to
    /// them: `heatmap_` and its file name without `.json`.
    pub fn figure_stem(&self) -> String {
        let name = self.file_name();
        format!("heatmap_{}", name.strip_suffix(".json").unwrap_or(&name))
    }

    /// A short caption: `kernel (launch stem)`.
    pub fn label(&self) -> String {
        let stem = Path::new(&self.launch)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{} ({stem})", self.kernel)
    }
}

/// A file-name-safe form of `s`.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `DIR/heatmaps`.
pub fn dir_of(sweep_dir: &Path) -> PathBuf {
    sweep_dir.join("heatmaps")
}

/// Writes `map` into `dir` (created), replacing the file atomically.
pub fn write(dir: &Path, map: &Heatmap) -> Result<PathBuf, WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(map.file_name());
    // A `Heatmap` always serialises (strings and integers).
    let text = serde_json::to_string(map).unwrap_or_default() + "\n";
    write_atomic(&path, &text)?;
    Ok(path)
}

/// Every heat map in the `heatmaps` folders of `sweep_dirs`, one per file name (shards write
/// the same file for the same launch), sorted by label. Unreadable files are reported in the
/// warnings and skipped.
pub fn read_all(sweep_dirs: &[PathBuf]) -> (Vec<Heatmap>, Vec<String>) {
    let mut by_name = std::collections::BTreeMap::new();
    let mut warnings = Vec::new();
    for d in sweep_dirs {
        let dir = dir_of(d);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        for p in paths {
            let parsed = std::fs::read_to_string(&p)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Heatmap>(&t).map_err(|e| e.to_string()))
                .and_then(|m| {
                    let n = m.side as usize;
                    if m.format != FORMAT {
                        Err(format!("format `{}`, expected `{FORMAT}`", m.format))
                    } else if m.cells.len() != n * n {
                        Err(format!("{} cells for side {n}", m.cells.len()))
                    } else {
                        Ok(m)
                    }
                });
            match parsed {
                Ok(m) => {
                    by_name.entry(m.file_name()).or_insert(m);
                }
                Err(e) => warnings.push(format!("{}: {e}; heat map skipped", p.display())),
            }
        }
    }
    let mut maps: Vec<Heatmap> = by_name.into_values().collect();
    maps.sort_by_key(|a| (a.label(), a.file_name()));
    (maps, warnings)
}
