//! Finding PTX files, shared by the corpus test and the parse benchmark (included with
//! `#[path]`, since tests and benches are separate crates).

use std::path::{Path, PathBuf};

/// Appends every `*.ptx` under `dir` (recursive) to `out`, in sorted order; a missing folder
/// adds nothing.
pub fn collect_ptx(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_ptx(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}
