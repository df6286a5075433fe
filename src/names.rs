//! Kernel names for people: C++ names (`_Z20convolution2D_kerneliiPfS_`) demangled with
//! cpp_demangle (`convolution2D_kernel(int, int, float*, float*)`) in every human summary,
//! and `--kernel` matching the mangled name, the demangled signature or the bare name
//! (`convolution2D_kernel`). JSON outputs keep the mangled name, which is what PTX, ptxas
//! and other simulators use.

use std::borrow::Cow;

use cpp_demangle::{DemangleOptions, Symbol};

/// The demangled signature of a mangled C++ name; `None` for a C name or what does not
/// demangle.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    Symbol::new(name.as_bytes()).ok()?.demangle().ok()
}

/// The demangled name without parameters or return type (`mm_tiled<16>`), for `--kernel`.
pub fn bare(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let opts = DemangleOptions::new().no_params().no_return_type();
    Symbol::new(name.as_bytes())
        .ok()?
        .demangle_with_options(&opts)
        .ok()
}

/// How a kernel name is shown to a person: demangled when it is a C++ name.
pub fn display(name: &str) -> Cow<'_, str> {
    match demangle(name) {
        Some(d) => Cow::Owned(d),
        None => Cow::Borrowed(name),
    }
}

/// Whether `query` (from `--kernel`) names `name`: the name itself, its demangled signature
/// (spaces ignored) or its bare demangled name.
pub fn matches(name: &str, query: &str) -> bool {
    if name == query {
        return true;
    }
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    demangle(name).is_some_and(|d| squash(&d) == squash(query))
        || bare(name).is_some_and(|b| squash(&b) == squash(query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_corpus_names() {
        // The Itanium C++ ABI by hand: 20 characters of name, then int, int, float*, float*
        // (S_ repeats the first substitution, float*).
        let m = "_Z20convolution2D_kerneliiPfS_";
        assert_eq!(
            demangle(m).as_deref(),
            Some("convolution2D_kernel(int, int, float*, float*)")
        );
        assert_eq!(bare(m).as_deref(), Some("convolution2D_kernel"));
        assert_eq!(display("mm_naive"), "mm_naive");
        assert!(matches(m, "convolution2D_kernel"));
        assert!(matches(m, "convolution2D_kernel(int,int,float*,float*)"));
        assert!(matches(m, m));
        assert!(!matches(m, "convolution2D"));
    }
}
