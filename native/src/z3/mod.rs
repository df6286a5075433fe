//! The z3 SMT solver's C API, loaded at run time (see the crate's overview): the few
//! functions the Locality Descriptors' existence questions need (`analysis::smt`), behind a
//! safe API.
//!
//! [`solver`] finds and opens `libz3` once per process ([`locate`], variable `PAVER_Z3`, the
//! `z3-solver` wheel, then the system loader) and checks that it is z3 4.8 or newer (where
//! `Z3_bool` became C `bool`). A [`Context`] is one z3 context, made with `Z3_mk_context`:
//! its terms ([`Int`], [`Bool`], [`BV`]) live as long as the context, so they are plain
//! handles that borrow it (`Int<'c>`) and cannot outlive it; the solvers, parameter sets and
//! models z3 counts references for ([`Solver`], [`Params`], [`Model`]) take a reference
//! when made and give it back when dropped.
//!
//! Errors never stop the process: the context's error handler is switched off, so a call
//! that fails returns a null term and sets the context's error code instead of calling
//! `exit`. A term built from a failed call is *invalid*, and so is every term built from an
//! invalid one (no z3 function ever sees a null pointer); a solver given an invalid term,
//! or whose `check` reports an error, answers [`SatResult::Unknown`], which callers already
//! treat as "no answer".
//!
//! z3 contexts are independent: each thread makes its own (a [`Context`] is neither `Send`
//! nor `Sync`), as `analysis::smt` does per data structure.
//!
//! The library and its contexts are here; the terms are in `terms`, the parameter sets,
//! solvers and models in `solver`.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::Path;
use std::sync::OnceLock;

use crate::locate::{self, LoadError, Located, Origin, Spec};

mod solver;
mod terms;

pub use solver::{Model, Params, SatResult, Solver};
pub use terms::{forall_const, Bool, Int, BV};

/// Where z3 is looked for (see [`locate`]'s search order).
pub const SPEC: Spec = Spec {
    what: "z3",
    env: "PAVER_Z3",
    wheel_files: &["z3/lib/libz3.so", "z3/lib/libz3.dylib", "z3/lib/libz3.dll"],
    toolkit_files: &[],
    system_names: &[
        "libz3.so",
        "libz3.so.4",
        "libz3.so.4.15",
        "libz3.so.4.14",
        "libz3.so.4.13",
        "libz3.so.4.12",
        "libz3.so.4.11",
        "libz3.so.4.8",
        "libz3.dylib",
        "libz3.dll",
    ],
    install:
        "pip install z3-solver (or apt-get install libz3-4), or set PAVER_Z3=/path/to/libz3.so",
};

/// The oldest z3 this wrapper calls: 4.8, where `Z3_bool` became C `bool`.
const OLDEST: (u32, u32) = (4, 8);

// The C API's handles: opaque pointers owned by z3.
type RawConfig = *mut c_void;
type RawContext = *mut c_void;
type RawAst = *mut c_void;
type RawSymbol = *mut c_void;
type RawParams = *mut c_void;
type RawSolver = *mut c_void;
type RawModel = *mut c_void;
/// `Z3_error_handler`: a pointer to `void (Z3_context, Z3_error_code)`, `None` for NULL.
type ErrorHandler = Option<unsafe extern "C" fn(RawContext, c_int)>;

/// `Z3_OK` of `Z3_error_code`.
const Z3_OK: c_int = 0;

/// Declares [`Api`], one function pointer per C function, and its loader. The names are the
/// C API's; every signature is copied from `z3_api.h` (`Z3_bool` is `bool`, `Z3_lbool` and
/// `Z3_error_code` are C `int`, `unsigned` is `c_uint`).
macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The z3 functions this module calls.
        #[allow(non_snake_case)]
        struct Api {
            $($name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Api {
            fn load(lib: &Located) -> Result<Api, LoadError> {
                Ok(Api {
                    $(
                        // SAFETY: the type is the function's signature in `z3_api.h`; the
                        // pointer is used only while `lib` is open (`Z3` keeps both).
                        $name: unsafe { lib.symbol(SPEC.what, stringify!($name))? },
                    )*
                })
            }
        }
    };
}

api! {
    Z3_get_version: fn(*mut c_uint, *mut c_uint, *mut c_uint, *mut c_uint);
    Z3_get_full_version: fn() -> *const c_char;
    Z3_mk_config: fn() -> RawConfig;
    Z3_del_config: fn(RawConfig);
    Z3_mk_context: fn(RawConfig) -> RawContext;
    Z3_del_context: fn(RawContext);
    Z3_set_error_handler: fn(RawContext, ErrorHandler);
    Z3_get_error_code: fn(RawContext) -> c_int;
    Z3_mk_string_symbol: fn(RawContext, *const c_char) -> RawSymbol;
    Z3_mk_int_sort: fn(RawContext) -> RawAst;
    Z3_mk_const: fn(RawContext, RawSymbol, RawAst) -> RawAst;
    Z3_mk_int64: fn(RawContext, i64, RawAst) -> RawAst;
    Z3_mk_numeral: fn(RawContext, *const c_char, RawAst) -> RawAst;
    Z3_mk_add: fn(RawContext, c_uint, *const RawAst) -> RawAst;
    Z3_mk_sub: fn(RawContext, c_uint, *const RawAst) -> RawAst;
    Z3_mk_mul: fn(RawContext, c_uint, *const RawAst) -> RawAst;
    Z3_mk_and: fn(RawContext, c_uint, *const RawAst) -> RawAst;
    Z3_mk_or: fn(RawContext, c_uint, *const RawAst) -> RawAst;
    Z3_mk_mod: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_div: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_unary_minus: fn(RawContext, RawAst) -> RawAst;
    Z3_mk_ite: fn(RawContext, RawAst, RawAst, RawAst) -> RawAst;
    Z3_mk_eq: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_ge: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_gt: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_le: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_lt: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_not: fn(RawContext, RawAst) -> RawAst;
    Z3_mk_implies: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_int2bv: fn(RawContext, c_uint, RawAst) -> RawAst;
    Z3_mk_bv2int: fn(RawContext, RawAst, bool) -> RawAst;
    Z3_mk_bvand: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_bvor: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_mk_bvxor: fn(RawContext, RawAst, RawAst) -> RawAst;
    Z3_to_app: fn(RawContext, RawAst) -> RawAst;
    Z3_mk_forall_const: fn(RawContext, c_uint, c_uint, *const RawAst, c_uint, *const RawAst, RawAst) -> RawAst;
    Z3_mk_params: fn(RawContext) -> RawParams;
    Z3_params_inc_ref: fn(RawContext, RawParams);
    Z3_params_dec_ref: fn(RawContext, RawParams);
    Z3_params_set_uint: fn(RawContext, RawParams, RawSymbol, c_uint);
    Z3_mk_solver: fn(RawContext) -> RawSolver;
    Z3_solver_inc_ref: fn(RawContext, RawSolver);
    Z3_solver_dec_ref: fn(RawContext, RawSolver);
    Z3_solver_set_params: fn(RawContext, RawSolver, RawParams);
    Z3_solver_assert: fn(RawContext, RawSolver, RawAst);
    Z3_solver_check: fn(RawContext, RawSolver) -> c_int;
    Z3_solver_get_model: fn(RawContext, RawSolver) -> RawModel;
    Z3_model_inc_ref: fn(RawContext, RawModel);
    Z3_model_dec_ref: fn(RawContext, RawModel);
    Z3_model_eval: fn(RawContext, RawModel, RawAst, bool, *mut RawAst) -> bool;
    Z3_get_numeral_int64: fn(RawContext, RawAst, *mut i64) -> bool;
}

/// An opened z3 library with the functions this module calls.
pub struct Z3 {
    api: Api,
    version: String,
    /// Kept open as long as the function pointers in `api` are used.
    lib: Located,
}

impl std::fmt::Debug for Z3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Z3")
            .field("version", &self.version)
            .field("path", &self.lib.path)
            .field("origin", &self.lib.origin)
            .finish()
    }
}

/// The process's z3, once [`solver`] has looked for it.
static LOADED: OnceLock<Result<Z3, LoadError>> = OnceLock::new();

/// The z3 of this process: found, opened and checked on the first call (the search order of
/// [`locate`], `PAVER_Z3=off` to do without), the same answer on every later call.
pub fn solver() -> Result<&'static Z3, &'static LoadError> {
    LOADED.get_or_init(|| Z3::load(None)).as_ref()
}

/// What [`solver`] answered, without looking for z3: `None` when nothing in this process
/// has asked for it yet (reports say whether z3 was needed without paying for the search).
pub fn loaded() -> Option<Result<&'static Z3, &'static LoadError>> {
    LOADED.get().map(Result::as_ref)
}

impl Z3 {
    /// Finds and opens z3: `explicit` (a library file or its folder) when given, else the
    /// search order of [`locate`]. Prefer [`solver`], which does this once per process.
    pub fn load(explicit: Option<&Path>) -> Result<Z3, LoadError> {
        let lib = locate::load(&SPEC, explicit)?;
        let api = Api::load(&lib)?;
        let (mut major, mut minor, mut build, mut rev) = (0, 0, 0, 0);
        // SAFETY: `Z3_get_version` writes four `unsigned`s through the pointers given.
        unsafe { (api.Z3_get_version)(&mut major, &mut minor, &mut build, &mut rev) };
        let version = format!("{major}.{minor}.{build}.{rev}");
        if (major, minor) < OLDEST {
            return Err(LoadError::TooOld {
                what: SPEC.what,
                path: lib.path.clone(),
                version,
                oldest: "4.8",
            });
        }
        Ok(Z3 { api, version, lib })
    }

    /// The version, `major.minor.build.revision` (`Z3_get_version`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The library's own description of its version and build (`Z3_get_full_version`).
    pub fn full_version(&self) -> String {
        // SAFETY: z3 returns a pointer to a static NUL-terminated string (or NULL).
        let p = unsafe { (self.api.Z3_get_full_version)() };
        if p.is_null() {
            return self.version.clone();
        }
        // SAFETY: `p` is non-null and points to z3's static NUL-terminated version string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The library file opened.
    pub fn path(&self) -> &Path {
        &self.lib.path
    }

    /// How the library was found.
    pub fn origin(&self) -> Origin {
        self.lib.origin
    }

    /// A new z3 context (`None` when z3 cannot make one, e.g. out of memory).
    pub fn context(&self) -> Option<Context<'_>> {
        let api = &self.api;
        // SAFETY: a configuration is created, used to create a context, then deleted, as
        // `Z3_mk_context` allows (the context keeps no reference to it).
        let raw = unsafe {
            let cfg = (api.Z3_mk_config)();
            if cfg.is_null() {
                return None;
            }
            let raw = (api.Z3_mk_context)(cfg);
            (api.Z3_del_config)(cfg);
            raw
        };
        if raw.is_null() {
            return None;
        }
        // SAFETY: `raw` is a live context; a NULL handler makes a failing call set the error
        // code and return instead of calling `exit` (z3's default handler).
        unsafe { (api.Z3_set_error_handler)(raw, None) };
        // SAFETY: `raw` is a live context.
        let int_sort = unsafe { (api.Z3_mk_int_sort)(raw) };
        Some(Context {
            z3: self,
            raw,
            int_sort,
        })
    }
}

/// One z3 context: the terms, solvers and models made in it live no longer than it.
pub struct Context<'z> {
    z3: &'z Z3,
    raw: RawContext,
    /// The sort of [`Int`] terms (null if z3 could not make it: every term is then invalid).
    int_sort: RawAst,
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` is a live context, deleted once; every object made in it borrows it,
        // so none is left.
        unsafe { (self.z3.api.Z3_del_context)(self.raw) };
    }
}

impl<'z> Context<'z> {
    fn api(&self) -> &'z Api {
        &self.z3.api
    }

    /// Whether the last call made in this context failed.
    fn failed(&self) -> bool {
        // SAFETY: `raw` is a live context.
        unsafe { (self.api().Z3_get_error_code)(self.raw) != Z3_OK }
    }

    /// `f(args...)` over the handles of `args`, or null (invalid) when one is invalid.
    fn build(&self, args: &[RawAst], f: impl FnOnce(RawContext) -> RawAst) -> RawAst {
        if args.iter().any(|a| a.is_null()) {
            return std::ptr::null_mut();
        }
        let r = f(self.raw);
        if self.failed() {
            std::ptr::null_mut()
        } else {
            r
        }
    }

    /// An n-ary function (`Z3_mk_add`, `Z3_mk_and`, ...) over `args`.
    fn nary(&self, f: NaryFn, args: &[RawAst]) -> RawAst {
        let Ok(n) = c_uint::try_from(args.len()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: every handle is a valid term of this context (checked non-null by
        // `build`), `n` is the array's length, and the sorts are the function's (the typed
        // wrappers only pass `Int`s to arithmetic and `Bool`s to connectives).
        self.build(args, |c| unsafe { f(c, n, args.as_ptr()) })
    }

    /// A binary function (`Z3_mk_mod`, `Z3_mk_eq`, ...) of `a` and `b`.
    fn binary(&self, f: BinaryFn, a: RawAst, b: RawAst) -> RawAst {
        // SAFETY: both handles are valid terms of this context (checked non-null by
        // `build`) of the sorts the function takes (see `nary`).
        self.build(&[a, b], |c| unsafe { f(c, a, b) })
    }

    /// A unary function (`Z3_mk_not`, `Z3_mk_unary_minus`) of `a`.
    fn unary(&self, f: UnaryFn, a: RawAst) -> RawAst {
        // SAFETY: `a` is a valid term of this context of the sort the function takes.
        self.build(&[a], |c| unsafe { f(c, a) })
    }

    /// The symbol `name` (null when the name holds a NUL byte or z3 fails).
    fn symbol(&self, name: &str) -> RawSymbol {
        let Ok(name) = CString::new(name) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `name` is a NUL-terminated string z3 copies.
        let s = unsafe { (self.api().Z3_mk_string_symbol)(self.raw, name.as_ptr()) };
        if self.failed() {
            std::ptr::null_mut()
        } else {
            s
        }
    }
}

type NaryFn = unsafe extern "C" fn(RawContext, c_uint, *const RawAst) -> RawAst;
type BinaryFn = unsafe extern "C" fn(RawContext, RawAst, RawAst) -> RawAst;
type UnaryFn = unsafe extern "C" fn(RawContext, RawAst) -> RawAst;

#[cfg(test)]
mod tests {
    use super::*;

    /// The process's z3, or `None` (the test then passes, saying it skipped) on a machine
    /// without it; under CI (`CI=true`, where `.ci/run` installs the `z3-solver` wheel) a
    /// missing z3 is a failure.
    pub(super) fn z3_or_skip(test: &str) -> Option<&'static Z3> {
        match solver() {
            Ok(z) => Some(z),
            Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("{test}: z3 is required in CI: {e}")
            }
            Err(e) => {
                eprintln!("{test}: SKIPPED (z3 not loaded: {e})");
                None
            }
        }
    }

    #[test]
    fn loads_once_and_reports_where_from() {
        let Some(z) = z3_or_skip("loads_once_and_reports_where_from") else {
            return;
        };
        let again = solver().expect("same answer");
        assert!(std::ptr::eq(z, again));
        assert!(loaded().is_some_and(|l| l.is_ok_and(|l| std::ptr::eq(z, l))));
        let v: Vec<u32> = z
            .version()
            .split('.')
            .filter_map(|x| x.parse().ok())
            .collect();
        assert_eq!(v.len(), 4, "{}", z.version());
        assert!((v[0], v[1]) >= OLDEST, "{}", z.version());
        assert!(!z.full_version().is_empty());
        eprintln!(
            "z3 {} ({}) from {}: {}",
            z.version(),
            z.full_version(),
            z.origin(),
            z.path().display()
        );
    }

    #[test]
    fn an_explicit_path_that_is_not_z3_is_an_error() {
        let e = Z3::load(Some(Path::new("/no/such/libz3.so"))).expect_err("missing");
        assert!(e.to_string().contains("/no/such/libz3.so"), "{e}");
    }
}
