//! CUDA sources as input: every command that reads a PTX file also reads a `.cu` file,
//! compiled to PTX with NVRTC ([`native::nvrtc`], loaded at run time) and cached.
//!
//! The options ([`CudaOptions`], the CLI's CUDA flags) become NVRTC's: `--arch` its `--gpu-architecture` (default
//! `compute_70`, the corpus's), `-D`/`-I`/`--std` its `--define-macro`/`--include-path`/
//! `--std`, and each `--nvrtc-opt` is passed as it is. The program is named by the path as
//! given, so NVRTC's log lines read `kernels/x/x.cu(12): error: ...`.
//!
//! The PTX is cached under `$PAVER_CACHE/ptx` (else `$XDG_CACHE_HOME/paver/ptx`, else
//! `~/.cache/paver/ptx`; `PAVER_CACHE=off` turns the cache off), keyed by the SHA-256 of
//! the source, the program name, the options and the NVRTC version (and library size, which
//! tells patch releases apart). Headers a source includes are not part of the key.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{LoadError, MAX_PTX_BYTES};

/// How to compile a `.cu` file: NVRTC's library and options.
#[derive(Debug, Clone, Default)]
pub struct CudaOptions {
    /// NVRTC library (a file or its folder); `None`: $PAVER_NVRTC, the nvidia-cuda-nvrtc
    /// wheel of the active Python environment, CUDA_HOME/CUDA_PATH, the system's.
    pub nvrtc: Option<PathBuf>,
    /// Virtual architecture (`compute_70`, `sm_90` or `90`); `None`: compute_70 (the
    /// corpus's), or the oldest one an NVRTC without it supports.
    pub arch: Option<String>,
    /// Preprocessor macros, NAME or NAME=VALUE.
    pub define: Vec<String>,
    /// Folders searched for #include files.
    pub include: Vec<PathBuf>,
    /// C++ dialect (`c++17`, `c++20`).
    pub std: Option<String>,
    /// Any other NVRTC options, as NVRTC spells them.
    pub nvrtc_opt: Vec<String>,
}

/// Whether `path` names a CUDA source (by its extension, `.cu`).
pub fn is_cuda(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "cu")
}

/// NVRTC 12.9's warning for every compilation for an architecture older than sm_75,
/// including the default: not shown.
const DEPRECATED_ARCH: &str = "Architectures prior to '<compute/sm>_75' are deprecated";

/// A compiled source.
#[derive(Debug)]
pub struct Ptx {
    /// The PTX text.
    pub text: String,
    /// The cache file holding it (absent when the cache is off or cannot be written).
    pub file: Option<PathBuf>,
    /// Whether it came from the cache.
    pub cached: bool,
    /// NVRTC's warnings (its log without the deprecation note of old architectures).
    pub warnings: String,
    /// The NVRTC used: version and where it was found, for `paver compile --verbose`.
    pub nvrtc: String,
}

impl CudaOptions {
    /// NVRTC's options for these flags, the architecture first (`default_arch` when none
    /// is given).
    pub fn options(&self, default_arch: &str) -> Vec<String> {
        let arch = match self.arch.as_deref() {
            None => default_arch.to_string(),
            Some(a) if a.chars().all(|c| c.is_ascii_digit()) => format!("compute_{a}"),
            Some(a) => a.to_string(),
        };
        let mut o = vec![format!("--gpu-architecture={arch}")];
        if let Some(s) = &self.std {
            o.push(format!("--std={s}"));
        }
        o.extend(self.define.iter().map(|d| format!("--define-macro={d}")));
        o.extend(
            self.include
                .iter()
                .map(|i| format!("--include-path={}", i.display())),
        );
        o.extend(self.nvrtc_opt.iter().cloned());
        o
    }

    /// Compiles the CUDA source at `path` to PTX, from the cache when it holds it.
    pub fn compile(&self, path: &Path) -> Result<Ptx, LoadError> {
        let bytes =
            ::launch::budget::read_input(path, MAX_PTX_BYTES).map_err(|message| LoadError::Io {
                path: path.to_path_buf(),
                message,
            })?;
        let source = String::from_utf8(bytes).map_err(|_| LoadError::Io {
            path: path.to_path_buf(),
            message: "not UTF-8 text".into(),
        })?;
        let nvrtc_error = |error| LoadError::Nvrtc {
            path: path.to_path_buf(),
            error,
        };
        let nvrtc = native::nvrtc::Nvrtc::load(self.nvrtc.as_deref()).map_err(nvrtc_error)?;
        let (major, minor) = nvrtc.version();
        let about = format!(
            "NVRTC {major}.{minor} ({}, {})",
            nvrtc.path().display(),
            nvrtc.origin()
        );
        let default_arch = if self.arch.is_some() {
            String::new()
        } else {
            nvrtc.default_arch()
        };
        let options = self.options(&default_arch);
        let name = path.to_string_lossy().into_owned();

        let entry = cache_dir().map(|dir| {
            let mut h = Sha256::new();
            let lib_len = std::fs::metadata(nvrtc.path()).map_or(0, |m| m.len());
            h.update(
                format!("paver-ptx-cache/1\0nvrtc {major}.{minor} {lib_len}\0{name}\0").as_bytes(),
            );
            for o in &options {
                h.update(o.as_bytes());
                h.update(b"\0");
            }
            h.update(b"\0");
            h.update(source.as_bytes());
            let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            dir.join(key)
        });
        if let Some(entry) = &entry {
            let ptx_file = entry.with_extension("ptx");
            if let (Ok(text), Ok(log)) = (
                std::fs::read_to_string(&ptx_file),
                std::fs::read_to_string(entry.with_extension("log")),
            ) {
                return Ok(Ptx {
                    text,
                    file: Some(ptx_file),
                    cached: true,
                    warnings: warnings(&log),
                    nvrtc: about,
                });
            }
        }
        let out = nvrtc
            .compile(&source, &name, &options)
            .map_err(|e| match e {
                // The deprecation note would come first, before the errors that matter.
                native::nvrtc::NvrtcError::Compile { name, options, log } => {
                    native::nvrtc::NvrtcError::Compile {
                        name,
                        options,
                        log: warnings(&log),
                    }
                }
                e => e,
            })
            .map_err(nvrtc_error)?;
        let file = entry.and_then(|entry| {
            let dir = entry.parent()?;
            std::fs::create_dir_all(dir).ok()?;
            let ptx_file = entry.with_extension("ptx");
            // The log first: a PTX file in the cache always has its log beside it.
            put(&entry.with_extension("log"), &out.log)?;
            put(&ptx_file, &out.ptx)?;
            Some(ptx_file)
        });
        Ok(Ptx {
            text: out.ptx,
            file,
            cached: false,
            warnings: warnings(&out.log),
            nvrtc: about,
        })
    }
}

/// Writes a cache file: to a name of its own, then renamed into place, so that threads and
/// processes compiling the same source at once never see a part of it.
fn put(path: &Path, text: &str) -> Option<()> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp-{}-{n}", std::process::id()));
    let done = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done.ok()
}

fn warnings(log: &str) -> String {
    log.lines()
        .filter(|l| !l.contains(DEPRECATED_ARCH))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// The PTX cache's folder: `$PAVER_CACHE/ptx`, `$XDG_CACHE_HOME/paver/ptx` or
/// `~/.cache/paver/ptx`; `None` when `PAVER_CACHE=off` or there is no home.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(v) = var("PAVER_CACHE") {
        if v == "off" || v == "0" || v == "none" {
            return None;
        }
        return Some(PathBuf::from(v).join("ptx"));
    }
    if let Some(x) = var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(x).join("paver").join("ptx"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".cache").join("paver").join("ptx"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_nvrtc_options_in_order() {
        let a = CudaOptions {
            arch: Some("90".into()),
            define: vec!["N=4".into(), "FAST".into()],
            include: vec![PathBuf::from("inc")],
            std: Some("c++17".into()),
            nvrtc_opt: vec!["--generate-line-info".into()],
            ..CudaOptions::default()
        };
        assert_eq!(
            a.options("compute_70"),
            [
                "--gpu-architecture=compute_90",
                "--std=c++17",
                "--define-macro=N=4",
                "--define-macro=FAST",
                "--include-path=inc",
                "--generate-line-info"
            ]
        );
        assert_eq!(
            CudaOptions::default().options("compute_70"),
            ["--gpu-architecture=compute_70"]
        );
    }

    #[test]
    fn the_deprecation_note_is_not_a_warning() {
        let log = "nvrtc: warning : Architectures prior to '<compute/sm>_75' are deprecated and may be removed in a future release\n";
        assert_eq!(warnings(log), "");
        assert_eq!(warnings("k.cu(3): warning: x\n"), "k.cu(3): warning: x");
    }
}
