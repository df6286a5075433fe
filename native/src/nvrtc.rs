//! NVIDIA's runtime CUDA compiler (NVRTC), loaded at run time (see the crate's overview).
//!
//! [`Nvrtc::load`] finds `libnvrtc` (see [`SPEC`] for where), [`Nvrtc::compile`] turns one
//! CUDA source into PTX: a program is created from the text, compiled with the options
//! given, and its PTX and log are read back; the program is destroyed when the call
//! returns. A source that does not compile is [`NvrtcError::Compile`], which carries the
//! compiler's log (whose lines name `file(line): error: ...`).
//!
//! Only the functions of NVRTC 11.2 and later that paver needs are bound; every one of them
//! exists in NVRTC 12 and 13.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

use crate::locate::{self, LoadError, Located, Origin, Spec};

/// Where NVRTC is looked for.
pub const SPEC: Spec = Spec {
    what: "NVRTC",
    env: "PAVER_NVRTC",
    wheel_files: &[
        // nvidia-cuda-nvrtc-cu12 (the corpus's PTX is NVRTC 12.9's).
        "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
        // nvidia-cuda-nvrtc 13.x.
        "nvidia/cu13/lib/libnvrtc.so.13",
    ],
    toolkit_files: &[
        "lib64/libnvrtc.so",
        "lib64/libnvrtc.so.13",
        "lib64/libnvrtc.so.12",
        "lib/libnvrtc.so",
        "targets/x86_64-linux/lib/libnvrtc.so",
        "targets/sbsa-linux/lib/libnvrtc.so",
    ],
    system_names: &["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"],
    install: "pip install nvidia-cuda-nvrtc-cu12 (into the active Python environment), or set PAVER_NVRTC=/path/to/libnvrtc.so",
};

/// The virtual architecture paver compiles for when none is given: the corpus's
/// (`kernels/gen.py`), the oldest one NVRTC 12 supports.
pub const DEFAULT_ARCH: &str = "compute_70";

/// Why NVRTC could not compile a source.
#[derive(Debug, thiserror::Error)]
pub enum NvrtcError {
    /// The library is not there (or switched off, or too old); the message ends with how to
    /// install it.
    #[error("{0}{}", load_hint(.0))]
    Load(#[from] LoadError),
    /// The source does not compile: the compiler's log says where and why.
    #[error("NVRTC cannot compile {name} ({options}):\n{log}", options = options.join(" "))]
    Compile {
        /// The program's name (the source file as given).
        name: String,
        /// The options it was compiled with.
        options: Vec<String>,
        /// NVRTC's log: `name(line): error: ...` lines with the source line and a caret.
        log: String,
    },
    /// An NVRTC call failed for another reason (an unknown option, out of memory).
    #[error("{function} failed for {name}: {message}{}", if log.is_empty() { String::new() } else { format!("\n{log}") })]
    Call {
        /// The program's name.
        name: String,
        /// The NVRTC function.
        function: &'static str,
        /// NVRTC's error string (`NVRTC_ERROR_INVALID_OPTION`).
        message: String,
        /// The compiler's log, when it wrote one.
        log: String,
    },
    /// The source, its name or an option holds a NUL byte, which C strings cannot carry.
    #[error("{name}: {what} contains a NUL byte")]
    Nul {
        /// The program's name.
        name: String,
        /// Which input ("the source", "option `...`").
        what: String,
    },
}

/// What to add to a load error's message so that it says how to get NVRTC (`NotFound`
/// already does).
fn load_hint(e: &LoadError) -> String {
    match e {
        LoadError::NotFound { .. } => String::new(),
        LoadError::Disabled { env, .. } => format!("; unset {env} to compile CUDA sources"),
        LoadError::Open { .. } | LoadError::Symbol { .. } | LoadError::TooOld { .. } => {
            format!("; {}", SPEC.install)
        }
    }
}

type Result_ = c_int;
type Program = *mut c_void;

type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> Result_;
type ErrorStringFn = unsafe extern "C" fn(Result_) -> *const c_char;
type NumArchsFn = unsafe extern "C" fn(*mut c_int) -> Result_;
type ArchsFn = unsafe extern "C" fn(*mut c_int) -> Result_;
type CreateFn = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> Result_;
type DestroyFn = unsafe extern "C" fn(*mut Program) -> Result_;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Result_;
type SizeFn = unsafe extern "C" fn(Program, *mut usize) -> Result_;
type GetFn = unsafe extern "C" fn(Program, *mut c_char) -> Result_;

/// The bound functions; valid while the library in [`Nvrtc::lib`] stays open.
#[derive(Clone, Copy)]
struct Fns {
    version: VersionFn,
    error_string: ErrorStringFn,
    num_archs: NumArchsFn,
    archs: ArchsFn,
    create: CreateFn,
    destroy: DestroyFn,
    compile: CompileFn,
    log_size: SizeFn,
    log: GetFn,
    ptx_size: SizeFn,
    ptx: GetFn,
}

/// An opened NVRTC library.
pub struct Nvrtc {
    lib: Located,
    fns: Fns,
    version: (i32, i32),
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.lib.path)
            .field("origin", &self.lib.origin)
            .field("version", &self.version)
            .finish()
    }
}

/// What one successful compilation gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// The PTX text (without NVRTC's trailing NUL).
    pub ptx: String,
    /// The compiler's log: warnings, or empty.
    pub log: String,
}

impl Nvrtc {
    /// Finds and opens NVRTC: `explicit` (a `--nvrtc` flag) first, then the search of
    /// [`locate`] with [`SPEC`].
    pub fn load(explicit: Option<&Path>) -> Result<Nvrtc, NvrtcError> {
        let lib = locate::load(&SPEC, explicit)?;
        let what = SPEC.what;
        // SAFETY: each type is the function's C signature as declared in NVRTC's `nvrtc.h`
        // (NVRTC 11.2 to 13.x: `nvrtcResult` is a C enum, i.e. `int`; `nvrtcProgram` a
        // pointer). The pointers live in `Nvrtc` together with the open library.
        let fns = unsafe {
            Fns {
                version: lib.symbol(what, "nvrtcVersion")?,
                error_string: lib.symbol(what, "nvrtcGetErrorString")?,
                num_archs: lib.symbol(what, "nvrtcGetNumSupportedArchs")?,
                archs: lib.symbol(what, "nvrtcGetSupportedArchs")?,
                create: lib.symbol(what, "nvrtcCreateProgram")?,
                destroy: lib.symbol(what, "nvrtcDestroyProgram")?,
                compile: lib.symbol(what, "nvrtcCompileProgram")?,
                log_size: lib.symbol(what, "nvrtcGetProgramLogSize")?,
                log: lib.symbol(what, "nvrtcGetProgramLog")?,
                ptx_size: lib.symbol(what, "nvrtcGetPTXSize")?,
                ptx: lib.symbol(what, "nvrtcGetPTX")?,
            }
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: both pointers are to live `c_int`s.
        let rc = unsafe { (fns.version)(&mut major, &mut minor) };
        let mut nvrtc = Nvrtc {
            lib,
            fns,
            version: (0, 0),
        };
        nvrtc.check(rc, "nvrtcVersion", "NVRTC", String::new)?;
        nvrtc.version = (major, minor);
        Ok(nvrtc)
    }

    /// The library file opened (a bare file name when the system loader found it).
    pub fn path(&self) -> &Path {
        &self.lib.path
    }

    /// How the library was found.
    pub fn origin(&self) -> Origin {
        self.lib.origin
    }

    /// NVRTC's version, `(major, minor)` (`(12, 9)`).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The real architectures this NVRTC compiles for (`[75, 80, ...]`), ascending.
    pub fn supported_archs(&self) -> Result<Vec<i32>, NvrtcError> {
        let mut n: c_int = 0;
        // SAFETY: `n` is a live `c_int`.
        let rc = unsafe { (self.fns.num_archs)(&mut n) };
        self.check(rc, "nvrtcGetNumSupportedArchs", "NVRTC", String::new)?;
        let mut archs = vec![0 as c_int; usize::try_from(n).unwrap_or(0)];
        if !archs.is_empty() {
            // SAFETY: `archs` has room for the `n` values NVRTC said it would write.
            let rc = unsafe { (self.fns.archs)(archs.as_mut_ptr()) };
            self.check(rc, "nvrtcGetSupportedArchs", "NVRTC", String::new)?;
        }
        archs.sort_unstable();
        Ok(archs)
    }

    /// The default `--gpu-architecture`: [`DEFAULT_ARCH`] when this NVRTC supports it, else
    /// the oldest virtual architecture it does (NVRTC 13 starts at `compute_75`).
    pub fn default_arch(&self) -> String {
        match self.supported_archs() {
            Ok(archs) if !archs.is_empty() && !archs.contains(&70) => {
                format!("compute_{}", archs[0])
            }
            _ => DEFAULT_ARCH.to_string(),
        }
    }

    /// Compiles `source` as the program `name` (the name NVRTC puts in its log and, with
    /// line information, in the PTX's `.file`) with `options` (`--gpu-architecture=...`).
    pub fn compile(
        &self,
        source: &str,
        name: &str,
        options: &[String],
    ) -> Result<Compiled, NvrtcError> {
        let nul = |what: String| NvrtcError::Nul {
            name: name.to_string(),
            what,
        };
        let c_source = CString::new(source).map_err(|_| nul("the source".into()))?;
        let c_name = CString::new(name).map_err(|_| nul("the file name".into()))?;
        let c_options = options
            .iter()
            .map(|o| CString::new(o.as_str()).map_err(|_| nul(format!("option `{o}`"))))
            .collect::<Result<Vec<_>, _>>()?;
        let option_ptrs: Vec<*const c_char> = c_options.iter().map(|o| o.as_ptr()).collect();
        let num_options = c_int::try_from(option_ptrs.len()).map_err(|_| NvrtcError::Call {
            name: name.to_string(),
            function: "nvrtcCompileProgram",
            message: "too many options".into(),
            log: String::new(),
        })?;

        let mut raw: Program = std::ptr::null_mut();
        // SAFETY: `raw` is a live out-pointer; the source and name are NUL-terminated and
        // outlive the call; no headers are passed (count 0, null arrays), as allowed.
        let rc = unsafe {
            (self.fns.create)(
                &mut raw,
                c_source.as_ptr(),
                c_name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.check(rc, "nvrtcCreateProgram", name, String::new)?;
        let program = ProgramGuard { nvrtc: self, raw };

        // SAFETY: `program.raw` is a program created above and not yet destroyed;
        // `option_ptrs` holds `num_options` NUL-terminated strings that outlive the call.
        let rc = unsafe { (self.fns.compile)(program.raw, num_options, option_ptrs.as_ptr()) };
        let log = program.read(self.fns.log_size, self.fns.log, "nvrtcGetProgramLog", name)?;
        let log = log.trim_end().to_string();
        if rc == NVRTC_ERROR_COMPILATION {
            return Err(NvrtcError::Compile {
                name: name.to_string(),
                options: options.to_vec(),
                log,
            });
        }
        self.check(rc, "nvrtcCompileProgram", name, || log.clone())?;
        let ptx = program.read(self.fns.ptx_size, self.fns.ptx, "nvrtcGetPTX", name)?;
        Ok(Compiled { ptx, log })
    }

    /// `Ok` for `NVRTC_SUCCESS`, else the call's error with NVRTC's message.
    fn check(
        &self,
        rc: Result_,
        function: &'static str,
        name: &str,
        log: impl FnOnce() -> String,
    ) -> Result<(), NvrtcError> {
        if rc == 0 {
            return Ok(());
        }
        Err(NvrtcError::Call {
            name: name.to_string(),
            function,
            message: self.error_string(rc),
            log: log(),
        })
    }

    fn error_string(&self, rc: Result_) -> String {
        // SAFETY: nvrtcGetErrorString takes any value and returns a static NUL-terminated
        // string (or null for values it does not know, handled below).
        let p = unsafe { (self.fns.error_string)(rc) };
        if p.is_null() {
            return format!("NVRTC error {rc}");
        }
        // SAFETY: non-null, NUL-terminated and static (see above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `NVRTC_ERROR_COMPILATION`: the source has errors; the log says which.
const NVRTC_ERROR_COMPILATION: Result_ = 6;

/// A created program, destroyed when dropped.
struct ProgramGuard<'a> {
    nvrtc: &'a Nvrtc,
    raw: Program,
}

impl ProgramGuard<'_> {
    /// Reads one of the program's outputs (log or PTX) through its size and copy functions,
    /// without the trailing NUL.
    fn read(
        &self,
        size_fn: SizeFn,
        get_fn: GetFn,
        function: &'static str,
        name: &str,
    ) -> Result<String, NvrtcError> {
        let mut size = 0usize;
        // SAFETY: `self.raw` is a live program; `size` a live out-pointer.
        let rc = unsafe { size_fn(self.raw, &mut size) };
        self.nvrtc.check(rc, function, name, String::new)?;
        if size == 0 {
            return Ok(String::new());
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds the `size` bytes (NUL included) NVRTC said it writes.
        let rc = unsafe { get_fn(self.raw, buf.as_mut_ptr().cast::<c_char>()) };
        self.nvrtc.check(rc, function, name, String::new)?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.raw` was created by nvrtcCreateProgram and is destroyed only here.
        unsafe { (self.nvrtc.fns.destroy)(&mut self.raw) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVRTC when this machine has it; the tests below say so and pass when it does not
    /// (the CLI's integration tests fail in CI instead).
    fn nvrtc() -> Option<Nvrtc> {
        match Nvrtc::load(None) {
            Ok(n) => Some(n),
            Err(e) => {
                eprintln!("skipped: {e}");
                None
            }
        }
    }

    #[test]
    fn compiles_a_kernel_to_ptx() {
        let Some(n) = nvrtc() else { return };
        let src = "extern \"C\" __global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n";
        let arch = n.default_arch();
        let out = n
            .compile(src, "k.cu", &[format!("--gpu-architecture={arch}")])
            .expect("compiles");
        assert!(out.ptx.contains(".entry k("), "{}", out.ptx);
        assert!(!out.ptx.ends_with('\0'));
    }

    #[test]
    fn a_compile_error_carries_the_log_with_file_and_line() {
        let Some(n) = nvrtc() else { return };
        let src = "__global__ void k(float *a) {\n  a[0] = undefined_name;\n}\n";
        let arch = n.default_arch();
        let e = n
            .compile(src, "bad.cu", &[format!("--gpu-architecture={arch}")])
            .expect_err("does not compile");
        let msg = e.to_string();
        assert!(matches!(e, NvrtcError::Compile { .. }), "{msg}");
        assert!(msg.contains("bad.cu(2)"), "{msg}");
        assert!(msg.contains("undefined_name"), "{msg}");
    }

    #[test]
    fn an_unknown_option_is_a_call_error() {
        let Some(n) = nvrtc() else { return };
        let e = n
            .compile("", "x.cu", &["--no-such-option".to_string()])
            .expect_err("bad option");
        assert!(
            e.to_string().contains("--no-such-option") || e.to_string().contains("OPTION"),
            "{e}"
        );
    }

    #[test]
    fn a_nul_byte_is_refused_before_nvrtc_is_called() {
        let Some(n) = nvrtc() else { return };
        let e = n.compile("a\0b", "x.cu", &[]).expect_err("NUL");
        assert!(matches!(e, NvrtcError::Nul { .. }), "{e}");
    }
}
