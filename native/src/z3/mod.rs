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

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::Path;
use std::sync::OnceLock;

use crate::locate::{self, LoadError, Located, Origin, Spec};

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

/// An integer term (z3's unbounded `Int` sort).
#[derive(Clone)]
pub struct Int<'c> {
    ctx: &'c Context<'c>,
    ast: RawAst,
}

/// A Boolean term.
#[derive(Clone)]
pub struct Bool<'c> {
    ctx: &'c Context<'c>,
    ast: RawAst,
}

/// A bit-vector term (its width fixed when made).
#[derive(Clone)]
pub struct BV<'c> {
    ctx: &'c Context<'c>,
    ast: RawAst,
}

impl std::fmt::Debug for Int<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ast.is_null() {
            "Int(invalid)"
        } else {
            "Int"
        })
    }
}

impl std::fmt::Debug for Bool<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ast.is_null() {
            "Bool(invalid)"
        } else {
            "Bool"
        })
    }
}

impl std::fmt::Debug for BV<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.ast.is_null() {
            "BV(invalid)"
        } else {
            "BV"
        })
    }
}

impl<'c> Int<'c> {
    fn of(ctx: &'c Context<'c>, ast: RawAst) -> Int<'c> {
        Int { ctx, ast }
    }

    /// Whether the term was built without an error (see the module's overview).
    pub fn is_valid(&self) -> bool {
        !self.ast.is_null()
    }

    /// The constant `v`.
    pub fn from_i64(ctx: &'c Context<'c>, v: i64) -> Int<'c> {
        let sort = ctx.int_sort;
        // SAFETY: `sort` is the context's integer sort (checked non-null by `build`).
        Int::of(
            ctx,
            ctx.build(&[sort], |c| unsafe { (ctx.api().Z3_mk_int64)(c, v, sort) }),
        )
    }

    /// The constant written in decimal in `s` (any size), `None` when `s` is not a numeral.
    pub fn from_str(ctx: &'c Context<'c>, s: &str) -> Option<Int<'c>> {
        let text = CString::new(s).ok()?;
        let sort = ctx.int_sort;
        // SAFETY: `text` is NUL-terminated and outlives the call; `sort` is the integer sort.
        let ast = ctx.build(&[sort], |c| unsafe {
            (ctx.api().Z3_mk_numeral)(c, text.as_ptr(), sort)
        });
        let t = Int::of(ctx, ast);
        t.is_valid().then_some(t)
    }

    /// A free integer variable named `name` (the same name gives the same variable).
    pub fn new_const(ctx: &'c Context<'c>, name: &str) -> Int<'c> {
        let (sym, sort) = (ctx.symbol(name), ctx.int_sort);
        // SAFETY: `sym` and `sort` are valid handles of this context (checked by `build`).
        Int::of(
            ctx,
            ctx.build(&[sym, sort], |c| unsafe {
                (ctx.api().Z3_mk_const)(c, sym, sort)
            }),
        )
    }

    /// `args[0] + args[1] + ...`.
    pub fn add(ctx: &'c Context<'c>, args: &[&Int<'c>]) -> Int<'c> {
        Int::of(ctx, ctx.nary(ctx.api().Z3_mk_add, &handles(args)))
    }

    /// `args[0] - args[1] - ...`.
    pub fn sub(ctx: &'c Context<'c>, args: &[&Int<'c>]) -> Int<'c> {
        Int::of(ctx, ctx.nary(ctx.api().Z3_mk_sub, &handles(args)))
    }

    /// `args[0] * args[1] * ...`.
    pub fn mul(ctx: &'c Context<'c>, args: &[&Int<'c>]) -> Int<'c> {
        Int::of(ctx, ctx.nary(ctx.api().Z3_mk_mul, &handles(args)))
    }

    /// `self mod m`: Euclidean, never negative (unspecified for `m = 0`).
    pub fn modulo(&self, m: &Int<'c>) -> Int<'c> {
        Int::of(
            self.ctx,
            self.ctx.binary(self.ctx.api().Z3_mk_mod, self.ast, m.ast),
        )
    }

    /// `self div d`: the quotient of [`Int::modulo`] (floor for a positive `d`).
    pub fn div(&self, d: &Int<'c>) -> Int<'c> {
        Int::of(
            self.ctx,
            self.ctx.binary(self.ctx.api().Z3_mk_div, self.ast, d.ast),
        )
    }

    /// `-self`.
    pub fn unary_minus(&self) -> Int<'c> {
        Int::of(
            self.ctx,
            self.ctx.unary(self.ctx.api().Z3_mk_unary_minus, self.ast),
        )
    }

    fn rel(&self, f: BinaryFn, other: &Int<'c>) -> Bool<'c> {
        Bool::of(self.ctx, self.ctx.binary(f, self.ast, other.ast))
    }

    /// `self = other`.
    pub fn equals(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_eq, other)
    }

    /// `self >= other`.
    pub fn ge(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_ge, other)
    }

    /// `self > other`.
    pub fn gt(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_gt, other)
    }

    /// `self <= other`.
    pub fn le(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_le, other)
    }

    /// `self < other`.
    pub fn lt(&self, other: &Int<'c>) -> Bool<'c> {
        self.rel(self.ctx.api().Z3_mk_lt, other)
    }

    /// The bit-vector of `bits` bits whose unsigned value is `self mod 2^bits`
    /// (`Z3_mk_int2bv`).
    pub fn to_bv(&self, bits: u32) -> BV<'c> {
        let a = self.ast;
        // SAFETY: `a` is a valid integer term of this context (checked by `build`).
        let ast = self.ctx.build(&[a], |c| unsafe {
            (self.ctx.api().Z3_mk_int2bv)(c, bits, a)
        });
        BV { ctx: self.ctx, ast }
    }

    /// The value of `v` read as a signed (two's complement) or unsigned number
    /// (`Z3_mk_bv2int`).
    pub fn from_bv(v: &BV<'c>, signed: bool) -> Int<'c> {
        let a = v.ast;
        // SAFETY: `a` is a valid bit-vector term of this context (checked by `build`).
        let ast = v.ctx.build(&[a], |c| unsafe {
            (v.ctx.api().Z3_mk_bv2int)(c, a, signed)
        });
        Int::of(v.ctx, ast)
    }

    /// The term's value as an `i64` when it is a numeral that fits (a [`Model::eval`]
    /// result), else `None`.
    pub fn as_i64(&self) -> Option<i64> {
        if self.ast.is_null() {
            return None;
        }
        let mut v = 0i64;
        // SAFETY: `ast` is a valid term of this context; z3 writes one `int64_t` to `v` and
        // reports whether the term is a numeral that fits.
        let ok = unsafe { (self.ctx.api().Z3_get_numeral_int64)(self.ctx.raw, self.ast, &mut v) };
        (ok && !self.ctx.failed()).then_some(v)
    }
}

impl<'c> Bool<'c> {
    fn of(ctx: &'c Context<'c>, ast: RawAst) -> Bool<'c> {
        Bool { ctx, ast }
    }

    /// Whether the term was built without an error (see the module's overview).
    pub fn is_valid(&self) -> bool {
        !self.ast.is_null()
    }

    /// `if self then t else e`.
    pub fn ite(&self, t: &Int<'c>, e: &Int<'c>) -> Int<'c> {
        let (c, t, e) = (self.ast, t.ast, e.ast);
        // SAFETY: a Boolean condition and two integer branches, valid terms of this context
        // (checked by `build`).
        let ast = self.ctx.build(&[c, t, e], |x| unsafe {
            (self.ctx.api().Z3_mk_ite)(x, c, t, e)
        });
        Int::of(self.ctx, ast)
    }

    /// `not self`.
    pub fn not(&self) -> Bool<'c> {
        Bool::of(self.ctx, self.ctx.unary(self.ctx.api().Z3_mk_not, self.ast))
    }

    /// `self = other` (both true or both false).
    pub fn equals(&self, other: &Bool<'c>) -> Bool<'c> {
        Bool::of(
            self.ctx,
            self.ctx
                .binary(self.ctx.api().Z3_mk_eq, self.ast, other.ast),
        )
    }

    /// `self implies other`.
    pub fn implies(&self, other: &Bool<'c>) -> Bool<'c> {
        Bool::of(
            self.ctx,
            self.ctx
                .binary(self.ctx.api().Z3_mk_implies, self.ast, other.ast),
        )
    }

    /// `args[0] and args[1] and ...` (true for no arguments).
    pub fn and(ctx: &'c Context<'c>, args: &[&Bool<'c>]) -> Bool<'c> {
        Bool::of(ctx, ctx.nary(ctx.api().Z3_mk_and, &handles(args)))
    }

    /// `args[0] or args[1] or ...` (false for no arguments).
    pub fn or(ctx: &'c Context<'c>, args: &[&Bool<'c>]) -> Bool<'c> {
        Bool::of(ctx, ctx.nary(ctx.api().Z3_mk_or, &handles(args)))
    }
}

impl<'c> BV<'c> {
    /// [`Int::to_bv`]: `v mod 2^bits` as a bit-vector of `bits` bits.
    pub fn from_int(v: &Int<'c>, bits: u32) -> BV<'c> {
        v.to_bv(bits)
    }

    fn bitwise(&self, f: BinaryFn, other: &BV<'c>) -> BV<'c> {
        BV {
            ctx: self.ctx,
            ast: self.ctx.binary(f, self.ast, other.ast),
        }
    }

    /// Bitwise `self & other` (invalid unless both have the same width).
    pub fn bvand(&self, other: &BV<'c>) -> BV<'c> {
        self.bitwise(self.ctx.api().Z3_mk_bvand, other)
    }

    /// Bitwise `self | other` (invalid unless both have the same width).
    pub fn bvor(&self, other: &BV<'c>) -> BV<'c> {
        self.bitwise(self.ctx.api().Z3_mk_bvor, other)
    }

    /// Bitwise `self ^ other` (invalid unless both have the same width).
    pub fn bvxor(&self, other: &BV<'c>) -> BV<'c> {
        self.bitwise(self.ctx.api().Z3_mk_bvxor, other)
    }

    /// Whether the term was built without an error (see the module's overview).
    pub fn is_valid(&self) -> bool {
        !self.ast.is_null()
    }
}

/// `forall bound: body`, where `bound` are variables made by [`Int::new_const`] (no
/// patterns: z3 picks its own triggers).
pub fn forall_const<'c>(ctx: &'c Context<'c>, bound: &[&Int<'c>], body: &Bool<'c>) -> Bool<'c> {
    if bound.is_empty() {
        return body.clone();
    }
    let mut apps = Vec::with_capacity(bound.len());
    for v in bound {
        // SAFETY: `v.ast` is a valid term of this context (checked by `build`); a constant
        // is an application, which `Z3_to_app` returns (an error otherwise, not a crash).
        apps.push(ctx.build(&[v.ast], |c| unsafe { (ctx.api().Z3_to_app)(c, v.ast) }));
    }
    let Ok(n) = c_uint::try_from(apps.len()) else {
        return Bool::of(ctx, std::ptr::null_mut());
    };
    let mut args = apps.clone();
    args.push(body.ast);
    // SAFETY: `apps` holds `n` valid applications and `body` is a valid Boolean term of this
    // context (all checked non-null by `build`); no patterns (count 0, NULL array).
    let ast = ctx.build(&args, |c| unsafe {
        (ctx.api().Z3_mk_forall_const)(c, 0, n, apps.as_ptr(), 0, std::ptr::null(), body.ast)
    });
    Bool::of(ctx, ast)
}

/// The z3 handle of a term.
trait Handle {
    fn raw(&self) -> RawAst;
}

impl Handle for Int<'_> {
    fn raw(&self) -> RawAst {
        self.ast
    }
}

impl Handle for Bool<'_> {
    fn raw(&self) -> RawAst {
        self.ast
    }
}

fn handles<T: Handle>(args: &[&T]) -> Vec<RawAst> {
    args.iter().map(|t| t.raw()).collect()
}

/// A solver's parameter set (`Z3_params`).
pub struct Params<'c> {
    ctx: &'c Context<'c>,
    raw: RawParams,
    /// False once a setting could not be made (the solver given it then answers `Unknown`).
    valid: bool,
}

impl<'c> Params<'c> {
    /// An empty parameter set.
    pub fn new(ctx: &'c Context<'c>) -> Params<'c> {
        // SAFETY: `ctx.raw` is a live context; the new set gets a reference, given back in
        // `drop`.
        let raw = unsafe { (ctx.api().Z3_mk_params)(ctx.raw) };
        let valid = !raw.is_null() && !ctx.failed();
        if valid {
            // SAFETY: `raw` is a parameter set of this context.
            unsafe { (ctx.api().Z3_params_inc_ref)(ctx.raw, raw) };
        }
        Params {
            ctx,
            raw: if valid { raw } else { std::ptr::null_mut() },
            valid,
        }
    }

    /// Sets the unsigned parameter `key` (such as `rlimit`, the solver's resource budget).
    pub fn set_u32(&mut self, key: &str, value: u32) {
        let sym = self.ctx.symbol(key);
        if !self.valid || sym.is_null() {
            self.valid = false;
            return;
        }
        // SAFETY: `raw` is a live parameter set and `sym` a symbol of this context.
        unsafe { (self.ctx.api().Z3_params_set_uint)(self.ctx.raw, self.raw, sym, value) };
        self.valid &= !self.ctx.failed();
    }
}

impl Drop for Params<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: gives back the reference taken in `new`.
            unsafe { (self.ctx.api().Z3_params_dec_ref)(self.ctx.raw, self.raw) };
        }
    }
}

/// The answer of [`Solver::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SatResult {
    /// The assertions have no model.
    Unsat,
    /// No answer: the budget ran out, or an assertion was invalid or z3 reported an error.
    Unknown,
    /// The assertions have a model ([`Solver::get_model`]).
    Sat,
}

/// A z3 solver: assertions, then [`Solver::check`].
pub struct Solver<'c> {
    ctx: &'c Context<'c>,
    raw: RawSolver,
    /// Set when an invalid term or parameter set was given: `check` answers `Unknown`.
    poisoned: Cell<bool>,
}

impl<'c> Solver<'c> {
    /// A solver for the context's default logic.
    pub fn new(ctx: &'c Context<'c>) -> Solver<'c> {
        // SAFETY: `ctx.raw` is a live context; the solver gets a reference, given back in
        // `drop`.
        let raw = unsafe { (ctx.api().Z3_mk_solver)(ctx.raw) };
        let ok = !raw.is_null() && !ctx.failed();
        if ok {
            // SAFETY: `raw` is a solver of this context.
            unsafe { (ctx.api().Z3_solver_inc_ref)(ctx.raw, raw) };
        }
        Solver {
            ctx,
            raw: if ok { raw } else { std::ptr::null_mut() },
            poisoned: Cell::new(!ok),
        }
    }

    /// Applies `params` to later checks.
    pub fn set_params(&self, params: &Params<'c>) {
        if self.poisoned.get() || !params.valid {
            self.poisoned.set(true);
            return;
        }
        // SAFETY: a live solver and a live parameter set of this context.
        unsafe { (self.ctx.api().Z3_solver_set_params)(self.ctx.raw, self.raw, params.raw) };
        if self.ctx.failed() {
            self.poisoned.set(true);
        }
    }

    /// Adds the assertion `b`.
    pub fn assert(&self, b: &Bool<'c>) {
        if self.poisoned.get() || b.ast.is_null() {
            self.poisoned.set(true);
            return;
        }
        // SAFETY: a live solver and a valid Boolean term of this context.
        unsafe { (self.ctx.api().Z3_solver_assert)(self.ctx.raw, self.raw, b.ast) };
        if self.ctx.failed() {
            self.poisoned.set(true);
        }
    }

    /// Whether the assertions have a model.
    pub fn check(&self) -> SatResult {
        if self.poisoned.get() {
            return SatResult::Unknown;
        }
        // SAFETY: a live solver of this context.
        let r = unsafe { (self.ctx.api().Z3_solver_check)(self.ctx.raw, self.raw) };
        if self.ctx.failed() {
            return SatResult::Unknown;
        }
        match r {
            -1 => SatResult::Unsat,
            1 => SatResult::Sat,
            _ => SatResult::Unknown,
        }
    }

    /// The model of the last `check` that answered [`SatResult::Sat`], else `None`.
    pub fn get_model(&self) -> Option<Model<'c>> {
        if self.poisoned.get() {
            return None;
        }
        // SAFETY: a live solver; without a model z3 sets the error code (no handler runs).
        let raw = unsafe { (self.ctx.api().Z3_solver_get_model)(self.ctx.raw, self.raw) };
        if raw.is_null() || self.ctx.failed() {
            return None;
        }
        // SAFETY: `raw` is a model of this context; the reference is given back in `drop`.
        unsafe { (self.ctx.api().Z3_model_inc_ref)(self.ctx.raw, raw) };
        Some(Model { ctx: self.ctx, raw })
    }
}

impl Drop for Solver<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: gives back the reference taken in `new`.
            unsafe { (self.ctx.api().Z3_solver_dec_ref)(self.ctx.raw, self.raw) };
        }
    }
}

/// A satisfying assignment, from [`Solver::get_model`].
pub struct Model<'c> {
    ctx: &'c Context<'c>,
    raw: RawModel,
}

impl<'c> Model<'c> {
    /// The value of `t` in the model; with `completion`, variables the model leaves free get
    /// a default value. `None` when z3 cannot evaluate it.
    pub fn eval(&self, t: &Int<'c>, completion: bool) -> Option<Int<'c>> {
        if t.ast.is_null() {
            return None;
        }
        let mut out: RawAst = std::ptr::null_mut();
        // SAFETY: a live model and a valid term of this context; z3 writes one term handle
        // to `out` and reports success.
        let ok = unsafe {
            (self.ctx.api().Z3_model_eval)(self.ctx.raw, self.raw, t.ast, completion, &mut out)
        };
        (ok && !out.is_null() && !self.ctx.failed()).then(|| Int::of(self.ctx, out))
    }
}

impl Drop for Model<'_> {
    fn drop(&mut self) {
        // SAFETY: gives back the reference taken in `Solver::get_model`.
        unsafe { (self.ctx.api().Z3_model_dec_ref)(self.ctx.raw, self.raw) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process's z3, or `None` (the test then passes, saying it skipped) on a machine
    /// without it; under CI (`CI=true`, where `.ci/run` installs the `z3-solver` wheel) a
    /// missing z3 is a failure.
    fn z3_or_skip(test: &str) -> Option<&'static Z3> {
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
    fn arithmetic_models_and_unsat() {
        let Some(z) = z3_or_skip("arithmetic_models_and_unsat") else {
            return;
        };
        let ctx = z.context().expect("context");
        let c = &ctx;
        let k = |v| Int::from_i64(c, v);
        let x = Int::new_const(c, "x");
        let y = Int::new_const(c, "y");
        // x + y = 10, x - y = 4, 3 x = 21 - y * 0: x = 7, y = 3.
        let s = Solver::new(c);
        let mut p = Params::new(c);
        p.set_u32("rlimit", 200_000);
        s.set_params(&p);
        s.assert(&Int::add(c, &[&x, &y]).equals(&k(10)));
        s.assert(&Int::sub(c, &[&x, &y]).equals(&k(4)));
        s.assert(&Int::mul(c, &[&k(3), &x]).equals(&k(21)));
        assert_eq!(s.check(), SatResult::Sat);
        let m = s.get_model().expect("model");
        let val = |t: &Int| m.eval(t, true).and_then(|v| v.as_i64());
        assert_eq!((val(&x), val(&y)), (Some(7), Some(3)));
        // Euclidean mod and floor div: -7 mod 3 = 2, -7 div 3 = -3; -(-7) = 7.
        let n = k(-7);
        assert_eq!(val(&n.modulo(&k(3))), Some(2));
        assert_eq!(val(&n.div(&k(3))), Some(-3));
        assert_eq!(val(&n.unary_minus()), Some(7));
        assert_eq!(val(&n.lt(&k(0)).ite(&k(1), &k(2))), Some(1));
        // A number past i64 is a numeral but not an i64.
        let big = Int::from_str(c, "170141183460469231731687303715884105727").expect("numeral");
        assert_eq!(val(&big), None);
        assert!(Int::from_str(c, "twelve").is_none());
        // x > 5 and x < 6 has no integer solution.
        let s = Solver::new(c);
        s.assert(&Bool::and(c, &[&x.gt(&k(5)), &x.lt(&k(6))]));
        assert_eq!(s.check(), SatResult::Unsat);
        assert!(s.get_model().is_none());
        // or, not, implies, le, ge, Bool equality.
        let s = Solver::new(c);
        let b = Bool::or(c, &[&x.le(&k(0)), &x.ge(&k(100))]);
        s.assert(&b);
        s.assert(&x.gt(&k(0)).implies(&x.equals(&k(100))));
        s.assert(&x.equals(&k(0)).not());
        s.assert(&b.equals(&x.ge(&k(100))));
        assert_eq!(s.check(), SatResult::Sat);
        assert_eq!(
            s.get_model().and_then(|m| m.eval(&x, true)?.as_i64()),
            Some(100)
        );
    }

    #[test]
    fn bit_vectors_and_quantifiers() {
        let Some(z) = z3_or_skip("bit_vectors_and_quantifiers") else {
            return;
        };
        let ctx = z.context().expect("context");
        let c = &ctx;
        let k = |v| Int::from_i64(c, v);
        let eval = |t: &Int| {
            let s = Solver::new(c);
            assert_eq!(s.check(), SatResult::Sat);
            s.get_model()?.eval(t, true)?.as_i64()
        };
        fn bw<'c>(
            c: &'c Context<'c>,
            x: i64,
            y: i64,
            f: fn(&BV<'c>, &BV<'c>) -> BV<'c>,
        ) -> Int<'c> {
            let (x, y) = (Int::from_i64(c, x), Int::from_i64(c, y));
            Int::from_bv(&f(&BV::from_int(&x, 128), &BV::from_int(&y, 128)), true)
        }
        assert_eq!(eval(&bw(c, -6, 12, |p, q| p.bvand(q))), Some(-6 & 12));
        assert_eq!(eval(&bw(c, -6, 12, |p, q| p.bvor(q))), Some(-6 | 12));
        assert_eq!(eval(&bw(c, -6, 12, |p, q| p.bvxor(q))), Some(-6 ^ 12));
        // Unsigned reading of an 8-bit -1.
        assert_eq!(
            eval(&Int::from_bv(&BV::from_int(&k(-1), 8), false)),
            Some(255)
        );
        // forall j: 0 <= j < t -> j < 5, with t >= 5: t = 5 is the only model.
        let t = Int::new_const(c, "t");
        let j = Int::new_const(c, "j");
        let body = Bool::and(c, &[&j.ge(&k(0)), &j.lt(&t)]).implies(&j.lt(&k(5)));
        let s = Solver::new(c);
        s.assert(&forall_const(c, &[&j], &body));
        s.assert(&t.ge(&k(5)));
        assert_eq!(s.check(), SatResult::Sat);
        assert_eq!(
            s.get_model().and_then(|m| m.eval(&t, true)?.as_i64()),
            Some(5)
        );
    }

    #[test]
    fn errors_give_invalid_terms_and_unknown_never_an_abort() {
        let Some(z) = z3_or_skip("errors_give_invalid_terms_and_unknown_never_an_abort") else {
            return;
        };
        let ctx = z.context().expect("context");
        let c = &ctx;
        // Bit-vectors of different widths: z3 reports a sort error.
        let x = Int::new_const(c, "x");
        let bad = BV::from_int(&x, 8).bvand(&BV::from_int(&x, 16));
        assert!(!bad.is_valid());
        // Invalid terms stay invalid through every operation built on them.
        let i = Int::from_bv(&bad, true);
        let b = Int::add(c, &[&i, &x]).ge(&x);
        assert!(!i.is_valid() && !b.is_valid());
        let s = Solver::new(c);
        s.assert(&x.ge(&Int::from_i64(c, 0)));
        s.assert(&b);
        assert_eq!(s.check(), SatResult::Unknown);
        assert!(s.get_model().is_none());
        // A NUL in a name makes an invalid variable, not a panic.
        assert!(!Int::new_const(c, "a\0b").is_valid());
        // The context still works after the errors.
        let s = Solver::new(c);
        s.assert(&x.equals(&Int::from_i64(c, 3)));
        assert_eq!(s.check(), SatResult::Sat);
        // A tiny resource budget gives `Unknown` on a hard question: x^3 + y^3 = z^3.
        let (y, w) = (Int::new_const(c, "y"), Int::new_const(c, "w"));
        fn cube<'c>(c: &'c Context<'c>, v: &Int<'c>) -> Int<'c> {
            Int::mul(c, &[v, v, v])
        }
        let s = Solver::new(c);
        let mut p = Params::new(c);
        p.set_u32("rlimit", 1);
        s.set_params(&p);
        for v in [&x, &y, &w] {
            s.assert(&v.gt(&Int::from_i64(c, 0)));
        }
        s.assert(&Int::add(c, &[&cube(c, &x), &cube(c, &y)]).equals(&cube(c, &w)));
        assert_eq!(s.check(), SatResult::Unknown);
        // An unknown parameter is an error z3 reports when the solver is given it.
        let mut p = Params::new(c);
        p.set_u32("no_such_parameter", 1);
        let s = Solver::new(c);
        s.set_params(&p);
        assert_eq!(s.check(), SatResult::Unknown);
    }

    #[test]
    fn an_explicit_path_that_is_not_z3_is_an_error() {
        let e = Z3::load(Some(Path::new("/no/such/libz3.so"))).expect_err("missing");
        assert!(e.to_string().contains("/no/such/libz3.so"), "{e}");
    }
}
