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

/// The parameter types of a mangled C++ name, as the demangled signature spells them
/// (`["float const*", "int"]`); `None` for a C name or what does not demangle.
pub fn param_types(name: &str) -> Option<Vec<String>> {
    let d = demangle(name)?;
    // The parameter list is the last top-level `( ... )`: templates and nested types come
    // before it.
    let close = d.rfind(')')?;
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in d[..=close].char_indices().rev() {
        match c {
            ')' | '>' | ']' => depth += 1,
            '(' | '<' | '[' => {
                depth -= 1;
                if depth == 0 && c == '(' {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &d[open? + 1..close];
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = inner[start..].trim();
    if !last.is_empty() && last != "void" {
        out.push(last.to_string());
    }
    Some(out)
}

/// How a kernel name is shown to a person: demangled when it is a C++ name.
pub fn display(name: &str) -> Cow<'_, str> {
    match demangle(name) {
        Some(d) => Cow::Owned(d),
        None => Cow::Borrowed(name),
    }
}

/// Whether `query` (from `--kernel`) names `name`: the name itself, its demangled signature
/// (spaces ignored), its bare demangled name, or that name without template arguments.
pub fn matches(name: &str, query: &str) -> bool {
    if name == query {
        return true;
    }
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    demangle(name).is_some_and(|d| squash(&d) == squash(query))
        || bare(name).is_some_and(|b| {
            // `bincount` names the instance `bincount<int>` too (several instances are an
            // ambiguity the caller lists).
            squash(&b) == squash(query) || base_name(&b) == squash(query)
        })
}

/// A bare demangled name without its template arguments (`mm_tiled<16>` -> `mm_tiled`).
fn base_name(bare: &str) -> String {
    let end = bare.find('<').unwrap_or(bare.len());
    bare[..end].chars().filter(|c| !c.is_whitespace()).collect()
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
        assert_eq!(param_types(m).unwrap(), ["int", "int", "float*", "float*"]);
        // A template instance: the template's arguments are not parameters.
        let t = "_Z8bincountIiEvPKT_Pjii";
        assert_eq!(
            param_types(t).unwrap(),
            ["int const*", "unsigned int*", "int", "int"]
        );
        assert_eq!(param_types("mm_naive"), None);
        assert!(matches(t, "bincount"));
        assert!(matches(t, "bincount<int>"));
        assert!(!matches(t, "bin"));
    }
}
