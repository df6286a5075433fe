//! Finding a native library on this machine and opening it.
//!
//! The search order, first hit wins:
//! 1. an explicit path (a command-line flag such as `--nvrtc PATH`): a file, or a folder
//!    searched for the library's file names;
//! 2. the library's environment variable (`PAVER_Z3`, `PAVER_NVRTC`), the same way; the
//!    value `off` disables the library, so a run can be made as on a machine without it;
//! 3. the wheel of the active Python environment (`$VIRTUAL_ENV`, then `$PAVER_PYTHON`,
//!    then `python3`'s `site-packages`): `z3-solver` ships `z3/lib/libz3.so`,
//!    `nvidia-cuda-nvrtc-cu12` ships `nvidia/cuda_nvrtc/lib/libnvrtc.so.12`;
//! 4. a toolkit folder (`CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`);
//! 5. the system loader's search by file name (`ld.so.cache`, `LD_LIBRARY_PATH`).
//!
//! Nothing is searched until a library is needed, and a library that is not found is an
//! error value ([`LoadError`]) listing every place tried and how to install it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What to look for: one native library and the places it is known to live.
#[derive(Debug)]
pub struct Spec {
    /// The library's name in messages ("z3", "NVRTC").
    pub what: &'static str,
    /// Environment variable naming the library file or its folder (`off` disables it).
    pub env: &'static str,
    /// Paths relative to a Python `site-packages` folder, most wanted first.
    pub wheel_files: &'static [&'static str],
    /// Paths relative to a toolkit folder (`CUDA_HOME`), most wanted first.
    pub toolkit_files: &'static [&'static str],
    /// File names for the system loader's own search, most wanted first.
    pub system_names: &'static [&'static str],
    /// One line that says how to install the library.
    pub install: &'static str,
}

/// Where a library was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The path given on the command line.
    Explicit,
    /// The library's environment variable.
    Env,
    /// A wheel of the active Python environment.
    PythonWheel,
    /// A CUDA toolkit folder.
    Toolkit,
    /// The system loader's search.
    System,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Origin::Explicit => "command line",
            Origin::Env => "environment variable",
            Origin::PythonWheel => "Python wheel",
            Origin::Toolkit => "CUDA toolkit",
            Origin::System => "system loader",
        })
    }
}

/// An opened library: kept open for as long as this value lives.
#[derive(Debug)]
pub struct Located {
    /// The file opened (a bare file name when the system loader found it).
    pub path: PathBuf,
    /// How it was found.
    pub origin: Origin,
    /// The open library.
    pub(crate) lib: libloading::Library,
}

/// Why a native library could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Nowhere it was looked for.
    #[error("{what} not found (looked in: {}); {install}", tried.join(", "))]
    NotFound {
        /// The library's name.
        what: &'static str,
        /// Every place looked in, in order.
        tried: Vec<String>,
        /// How to install it, one line.
        install: &'static str,
    },
    /// Switched off by its environment variable.
    #[error("{what} is switched off ({env}=off)")]
    Disabled {
        /// The library's name.
        what: &'static str,
        /// The variable that switched it off.
        env: &'static str,
    },
    /// A file was named explicitly but cannot be opened.
    #[error("cannot open {what} at {}: {why}", path.display())]
    Open {
        /// The library's name.
        what: &'static str,
        /// The file named.
        path: PathBuf,
        /// The loader's message.
        why: String,
    },
    /// The library is older than the oldest version paver calls.
    #[error("{what} at {} is version {version}; paver needs {oldest} or newer", path.display())]
    TooOld {
        /// The library's name.
        what: &'static str,
        /// The file opened.
        path: PathBuf,
        /// Its version.
        version: String,
        /// The oldest version paver calls.
        oldest: &'static str,
    },
    /// The library lacks a function paver calls (too old a version).
    #[error("{what} at {} has no function `{name}` (too old a version?): {why}", path.display())]
    Symbol {
        /// The library's name.
        what: &'static str,
        /// The file opened.
        path: PathBuf,
        /// The missing function.
        name: String,
        /// The loader's message.
        why: String,
    },
}

impl Located {
    /// The function `name` of this library as a function pointer of type `T`.
    ///
    /// # Safety
    /// `T` must be the C function's exact signature.
    pub(crate) unsafe fn symbol<T: Copy>(
        &self,
        what: &'static str,
        name: &str,
    ) -> Result<T, LoadError> {
        let mut cname = name.as_bytes().to_vec();
        cname.push(0);
        // SAFETY: the caller guarantees `T` is the function's signature; the pointer is used
        // only while `self.lib` is open (the callers keep both together).
        match unsafe { self.lib.get::<T>(&cname) } {
            Ok(s) => Ok(*s),
            Err(e) => Err(LoadError::Symbol {
                what,
                path: self.path.clone(),
                name: name.to_string(),
                why: e.to_string(),
            }),
        }
    }
}

/// Opens `file`: a library file, or a folder searched for the spec's file names.
fn open_named(spec: &Spec, given: &Path, origin: Origin) -> Result<Located, LoadError> {
    let candidates: Vec<PathBuf> = if given.is_dir() {
        let names = spec
            .system_names
            .iter()
            .chain(spec.wheel_files.iter())
            .chain(spec.toolkit_files.iter())
            .filter_map(|f| Path::new(f).file_name().map(|n| given.join(n)));
        let mut v: Vec<PathBuf> = names.filter(|p| p.is_file()).collect();
        v.dedup();
        v
    } else {
        vec![given.to_path_buf()]
    };
    let Some(path) = candidates.into_iter().next() else {
        return Err(LoadError::Open {
            what: spec.what,
            path: given.to_path_buf(),
            why: format!("the folder holds none of {}", spec.system_names.join(", ")),
        });
    };
    open_path(&path, origin).map_err(|why| LoadError::Open {
        what: spec.what,
        path,
        why,
    })
}

fn open_path(path: &Path, origin: Origin) -> Result<Located, String> {
    // SAFETY: opening a library runs its initialisers; z3 and NVRTC have none with effects
    // beyond their own state.
    match unsafe { libloading::Library::new(path) } {
        Ok(lib) => Ok(Located {
            path: path.to_path_buf(),
            origin,
            lib,
        }),
        Err(e) => Err(e.to_string()),
    }
}

/// The `site-packages` folders of the active Python environment: `$VIRTUAL_ENV`'s, then
/// those `$PAVER_PYTHON` (or `python3`) reports. Empty when there is no Python.
pub fn python_site_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        dirs.extend(venv_site_dirs(Path::new(&venv)));
    }
    let python = std::env::var_os("PAVER_PYTHON").unwrap_or_else(|| "python3".into());
    let script = "import site, sys\n\
                  p = list(site.getsitepackages()) if hasattr(site, 'getsitepackages') else []\n\
                  p.append(site.getusersitepackages())\n\
                  print('\\n'.join(p))";
    if let Ok(out) = Command::new(&python).args(["-c", script]).output() {
        if out.status.success() {
            let text = String::from_utf8_lossy(&out.stdout);
            dirs.extend(text.lines().filter(|l| !l.is_empty()).map(PathBuf::from));
        }
    }
    dirs.dedup();
    dirs
}

fn venv_site_dirs(venv: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for lib in ["lib", "lib64"] {
        if let Ok(rd) = std::fs::read_dir(venv.join(lib)) {
            let mut found: Vec<PathBuf> = rd
                .filter_map(Result::ok)
                .map(|e| e.path().join("site-packages"))
                .filter(|p| p.is_dir())
                .collect();
            found.sort();
            v.extend(found);
        }
    }
    v
}

/// Finds and opens the library `spec` describes (see the module's search order).
pub fn load(spec: &Spec, explicit: Option<&Path>) -> Result<Located, LoadError> {
    if let Some(p) = explicit {
        return open_named(spec, p, Origin::Explicit);
    }
    if let Some(v) = std::env::var_os(spec.env) {
        if v == "off" || v == "none" || v == "0" {
            return Err(LoadError::Disabled {
                what: spec.what,
                env: spec.env,
            });
        }
        if !v.is_empty() {
            return open_named(spec, Path::new(&v), Origin::Env);
        }
    }
    let mut tried = Vec::new();
    let try_file = |path: PathBuf, origin: Origin, tried: &mut Vec<String>| {
        if path.is_file() {
            match open_path(&path, origin) {
                Ok(l) => return Some(l),
                Err(e) => tried.push(format!("{} ({e})", path.display())),
            }
        }
        None
    };
    if !spec.wheel_files.is_empty() {
        // `$VIRTUAL_ENV`'s folders first: asking Python starts a process (tens to hundreds
        // of milliseconds), needed only when they do not hold the wheel.
        let venv: Vec<PathBuf> = std::env::var_os("VIRTUAL_ENV")
            .map(|v| venv_site_dirs(Path::new(&v)))
            .unwrap_or_default();
        for site in &venv {
            for f in spec.wheel_files {
                if let Some(l) = try_file(site.join(f), Origin::PythonWheel, &mut tried) {
                    return Ok(l);
                }
            }
        }
        let sites = python_site_dirs();
        for site in sites.iter().filter(|s| !venv.contains(s)) {
            for f in spec.wheel_files {
                if let Some(l) = try_file(site.join(f), Origin::PythonWheel, &mut tried) {
                    return Ok(l);
                }
            }
        }
        tried.push(if sites.is_empty() {
            "Python site-packages (no Python found)".to_string()
        } else {
            format!("Python wheels in {}", join_paths(&sites))
        });
    }
    if !spec.toolkit_files.is_empty() {
        let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
            .iter()
            .filter_map(std::env::var_os)
            .map(PathBuf::from)
            .collect();
        roots.push(PathBuf::from("/usr/local/cuda"));
        for root in &roots {
            for f in spec.toolkit_files {
                if let Some(l) = try_file(root.join(f), Origin::Toolkit, &mut tried) {
                    return Ok(l);
                }
            }
        }
        tried.push(format!("toolkits {}", join_paths(&roots)));
    }
    for name in spec.system_names {
        if let Ok(l) = open_path(Path::new(name), Origin::System) {
            return Ok(l);
        }
    }
    tried.push(format!(
        "the system loader ({})",
        spec.system_names.join(", ")
    ));
    tried.push(format!("${}", spec.env));
    Err(LoadError::NotFound {
        what: spec.what,
        tried,
        install: spec.install,
    })
}

fn join_paths(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTHING: Spec = Spec {
        what: "nothing",
        env: "PAVER_TEST_NOTHING_LIB",
        wheel_files: &[],
        toolkit_files: &[],
        system_names: &["libpaver-no-such-library.so"],
        install: "install nothing",
    };

    #[test]
    fn a_missing_library_is_an_error_that_lists_where_it_looked() {
        let e = load(&NOTHING, None).expect_err("no such library");
        let msg = e.to_string();
        assert!(msg.contains("libpaver-no-such-library.so"), "{msg}");
        assert!(msg.contains("install nothing"), "{msg}");
    }

    #[test]
    fn an_explicit_path_that_does_not_exist_is_named_in_the_error() {
        let e = load(&NOTHING, Some(Path::new("/no/such/lib.so"))).expect_err("missing");
        assert!(e.to_string().contains("/no/such/lib.so"), "{e}");
    }
}
