//! Registers and shared memory from NVIDIA's `ptxas`, when one can be found: `--ptxas PATH`,
//! the `PAVER_PTXAS` environment variable, or `ptxas` on `PATH` ([`find`]). It runs as
//! `ptxas -v -arch=sm_XX` on the PTX ([`run`]) and its report (`Used 32 registers, ...,
//! 2048 bytes smem`) is read by [`parse`].
//!
//! Architectures: a PTX file cannot be assembled for an architecture below its `.target`,
//! CUDA 13's ptxas no longer accepts sm_70, and no current ptxas accepts Fermi's sm_20. The
//! GPU's own architecture is tried first, then the ones ptxas lists as accepted, nearest
//! first; the report names the one used ([`crate::RegisterSource::Ptxas`]).

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `ptxas -v` reports for one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxasReport {
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per TB in bytes.
    pub shared_bytes: u64,
}

/// The ptxas to use: `explicit` (`--ptxas`), else `PAVER_PTXAS`, else `ptxas` on `PATH`.
pub fn find(explicit: Option<&Path>) -> Option<PathBuf> {
    find_with(
        explicit,
        std::env::var_os("PAVER_PTXAS").as_deref().map(Path::new),
        std::env::var_os("PATH").as_deref(),
    )
}

/// [`find`] with the environment given (for tests).
pub fn find_with(
    explicit: Option<&Path>,
    env: Option<&Path>,
    path: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    if let Some(p) = explicit.or(env) {
        return Some(p.to_path_buf());
    }
    std::env::split_paths(path?)
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
}

/// Parses `ptxas -v` output: the registers and shared bytes of `entry`.
pub fn parse(output: &str, entry: &str) -> Option<PtxasReport> {
    let mut current: Option<&str> = None;
    let mut found = None;
    for line in output.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next();
            continue;
        }
        if let Some(rest) = line.split("Function properties for ").nth(1) {
            let name = rest.trim();
            current = Some(name).filter(|n| !n.is_empty()).or(current);
            continue;
        }
        if current != Some(entry) {
            continue;
        }
        let Some(used) = line.split("Used ").nth(1) else {
            continue;
        };
        let number_before = |unit: &str| -> Option<u64> {
            used.split(',').find_map(|part| {
                let part = part.trim();
                let n = part.strip_suffix(unit)?.trim();
                n.parse().ok()
            })
        };
        let registers = number_before("registers").unwrap_or(0) as u32;
        let shared_bytes = number_before("bytes smem").unwrap_or(0);
        found = Some(PtxasReport {
            registers,
            shared_bytes,
        });
    }
    found
}

/// Architectures (`sm_XX` numbers) this ptxas accepts, from its `--help` text.
fn accepted(ptxas: &Path) -> Vec<u32> {
    let Ok(out) = Command::new(ptxas).arg("--help").output() else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<u32> = text
        .split(|c: char| c == '\'' || c.is_whitespace() || c == ',')
        .filter_map(|w| w.strip_prefix("sm_"))
        .filter_map(|n| n.parse().ok())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Runs `ptxas -v` on `ptx` for the architecture nearest `want` (an `sm_XX` number) that it
/// accepts and that is not below the PTX's own target `min`; returns the report of `entry`
/// and the architecture used.
pub fn run(
    ptxas: &Path,
    ptx: &Path,
    entry: &str,
    want: u32,
    min: u32,
) -> Result<(PtxasReport, u32)> {
    let err = |message: String| Error::Ptxas {
        path: ptxas.display().to_string(),
        message,
    };
    let mut archs = accepted(ptxas);
    if archs.is_empty() {
        archs.push(want);
    }
    let floor = want.max(min);
    // The nearest accepted architecture at or above what is wanted, else the nearest below
    // (which ptxas refuses only when the PTX targets something higher).
    let mut order: Vec<u32> = archs.iter().copied().filter(|&a| a >= floor).collect();
    order.extend(archs.iter().rev().copied().filter(|&a| a < floor));
    let mut last = String::new();
    for arch in order.into_iter().take(4) {
        let out = Command::new(ptxas)
            .arg("-v")
            .arg(format!("-arch=sm_{arch}"))
            .arg(ptx)
            .arg("-o")
            .arg(if cfg!(windows) { "NUL" } else { "/dev/null" })
            .output()
            .map_err(|e| err(e.to_string()))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if out.status.success() {
            return parse(&text, entry)
                .map(|r| (r, arch))
                .ok_or_else(|| err(format!("no report for entry {entry} in:\n{text}")));
        }
        last = text;
    }
    Err(err(last.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from CUDA 12.9 ptxas (`ptxas -v -arch=sm_70 mm_tiled.compute_70.ptx`) and
    /// CUDA 13 ptxas (sm_90; no `cmem` line on that architecture).
    const CUDA12: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'mm_tiled' for 'sm_70'
ptxas info    : Function properties for mm_tiled
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'mm_naive' for 'sm_70'
ptxas info    : Function properties for mm_naive
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 0 barriers, 380 bytes cmem[0]
";
    const CUDA13: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem
";

    #[test]
    fn parses_reports() {
        assert_eq!(
            parse(CUDA12, "mm_tiled"),
            Some(PtxasReport {
                registers: 32,
                shared_bytes: 2048
            })
        );
        assert_eq!(
            parse(CUDA12, "mm_naive"),
            Some(PtxasReport {
                registers: 30,
                shared_bytes: 0
            })
        );
        assert_eq!(
            parse(CUDA13, "k"),
            Some(PtxasReport {
                registers: 40,
                shared_bytes: 4096
            })
        );
        assert_eq!(parse(CUDA12, "nope"), None);
    }

    #[test]
    fn discovery_order() {
        let dir = std::env::temp_dir().join(format!("paver-gpu-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let on_path = dir.join("ptxas");
        std::fs::write(&on_path, "#!/bin/sh\n").unwrap();
        let path = std::env::join_paths([dir.clone()]).unwrap();
        let flag = Path::new("/opt/flag/ptxas");
        let env = Path::new("/opt/env/ptxas");
        assert_eq!(
            find_with(Some(flag), Some(env), Some(&path)),
            Some(flag.to_path_buf())
        );
        assert_eq!(
            find_with(None, Some(env), Some(&path)),
            Some(env.to_path_buf())
        );
        assert_eq!(find_with(None, None, Some(&path)), Some(on_path));
        let empty = std::env::join_paths([dir.join("none")]).unwrap();
        assert_eq!(find_with(None, None, Some(&empty)), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A fake ptxas (a shell script written here) that accepts sm_75 and sm_90 only, as
    /// CUDA 13's does not accept sm_70: asked for sm_70, `run` falls back to sm_75.
    #[cfg(unix)]
    #[test]
    fn runs_a_fake_ptxas_at_the_nearest_architecture() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("paver-gpu-fake-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("ptxas");
        std::fs::write(
            &fake,
            "#!/bin/sh\n\
             if [ \"$1\" = --help ]; then echo \"Allowed values for this option:  'sm_75','sm_90'.\"; exit 0; fi\n\
             case \"$2\" in\n\
               -arch=sm_75) echo \"ptxas info    : Compiling entry function 'k' for 'sm_75'\"; \
                            echo \"ptxas info    : Used 24 registers, used 0 barriers, 512 bytes smem\";;\n\
               *) echo \"ptxas fatal   : Value '${2#-arch=}' is not defined for option 'gpu-name'\" >&2; exit 1;;\n\
             esac\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ptx = dir.join("k.ptx");
        std::fs::write(&ptx, ".version 7.0\n.target sm_70\n").unwrap();
        let (r, arch) = run(&fake, &ptx, "k", 70, 70).unwrap();
        assert_eq!((r.registers, r.shared_bytes, arch), (24, 512, 75));
        // Fermi: nothing at or above sm_20 but sm_75 and sm_90; sm_75 is the nearest.
        let (_, arch) = run(&fake, &ptx, "k", 20, 70).unwrap();
        assert_eq!(arch, 75);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
