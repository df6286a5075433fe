//! PTX front-end of paver: text -> tokens -> syntax tree -> per-function IR, plus a printer,
//! a control-flow graph and summaries.
//!
//! Data flows through three stages, like naga's WGSL front-end:
//! 1. [`lexer`]: a byte loop producing [`lexer::Token`]s that borrow the source. The top level
//!    is lexed first with function bodies skipped by a brace-matching scan
//!    ([`lexer::lex_lazy`]); each body is lexed when it is lowered, into a reused buffer, so
//!    the tokens of a whole file never exist at once.
//! 2. [`syntax`]: recursive descent over tokens into an [`syntax::Ast`] with unresolved names;
//!    numeric literals are parsed by `nom` combinators in [`literal`].
//! 3. [`lower`]: names resolved (registers, labels, symbols, through `{ }` scopes), instruction
//!    words split into [`Opcode`] + typed [`Modifiers`], producing a [`Module`] ([`ir`]).
//!
//! Function bodies take a faster path first: the direct lowering (`lower/direct.rs`) reads a
//! body's bytes once and produces its IR without tokens or a syntax tree, handing anything
//! unusual to stages 1-3; [`parse_two_pass`] uses stages 1-3 alone and is the reference the
//! differential tests and the fuzz target hold [`parse`] to.
//!
//! A verifier (`verify.rs`) then rejects what `ptxas` rejects beyond the grammar: unknown
//! modifiers and wrong operands on memory instructions, non-predicate guards, barrier numbers
//! and thread counts out of range, duplicate definitions, a missing `.version`.
//!
//! [`print`] writes a module back as PTX that re-parses to an equal IR; [`cfg`] builds basic
//! blocks; [`device_runtime`] names the CUDA device-runtime calls of kernels that launch
//! kernels (never inlined by [`calls`]); [`summary`] counts instructions and memory accesses. Every error carries a
//! location; parsing never panics on any input.
//!
//! ```
//! let m = ptx_parser::parse(".version 8.0\n.target sm_90\n.address_size 64\n\
//!     .visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<2>;\n\
//!     ld.param.u64 %rd1, [p];\nret;\n}\n").unwrap();
//! assert_eq!(m.entries().count(), 1);
//! assert_eq!(m.kernel("k").unwrap().insts.len(), 2);
//! ```

#![warn(missing_docs)]

pub mod calls;
pub mod cfg;
pub mod device_runtime;
pub mod dom;
pub mod error;
pub mod inline;
pub mod ir;
pub mod lexer;
pub mod literal;
pub mod lower;
pub mod opcode;
pub mod print;
pub mod summary;
pub mod syntax;
pub mod types;
mod verify;

pub use cfg::{Block, Cfg};
pub use device_runtime::DeviceRuntimeFn;
pub use error::{ParseError, ParseErrors};
pub use ir::*;
pub use opcode::{Modifiers, Opcode, Slot};
pub use summary::MemCounts;
pub use types::*;

use std::path::{Path, PathBuf};

/// Parses PTX source text into a [`Module`].
pub fn parse(src: &str) -> Result<Module, ParseErrors> {
    parse_named(src, None)
}

/// Reads and parses a PTX file; errors carry the file name. An I/O error is reported as a
/// [`ParseError`] with line 0.
pub fn parse_file(path: &Path) -> Result<Module, ParseErrors> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let src = String::from_utf8_lossy(&bytes);
            parse_named(&src, Some(path.to_path_buf()))
        }
        Err(e) => Err(ParseErrors {
            errors: vec![ParseError {
                file: Some(path.to_path_buf()),
                line: 0,
                col: 0,
                message: format!("cannot read file: {e}"),
                line_text: String::new(),
            }],
            truncated: 0,
        }),
    }
}

/// Parses `src`, recording `file` in errors.
pub fn parse_named(src: &str, file: Option<PathBuf>) -> Result<Module, ParseErrors> {
    parse_with(src, file, Some(&mut 0))
}

/// Parses `src` with every function body lowered the two-pass way (tokens, statements,
/// then IR), never by the direct lowering that [`parse`] tries first. The result, spans and
/// errors included, is the same as [`parse`]'s; this is the reference that differential
/// tests and the `direct` fuzz target compare [`parse`] against.
pub fn parse_two_pass(src: &str) -> Result<Module, ParseErrors> {
    parse_with(src, None, None)
}

/// How many function bodies of `src` [`parse`] lowers directly (the rest, and any with an
/// error, take the two-pass way). For tests that the fast path is taken.
#[doc(hidden)]
pub fn direct_bodies(src: &str) -> usize {
    let mut n = 0;
    let _ = parse_with(src, None, Some(&mut n));
    n
}

fn parse_with(
    src: &str,
    file: Option<PathBuf>,
    direct: Option<&mut usize>,
) -> Result<Module, ParseErrors> {
    let lexed = lexer::lex_lazy(src);
    let (ast, syn_errors) = syntax::parse_tokens(src, &lexed);
    let (module, body_lex_errors, mut low_errors) =
        lower::lower_lazy_with(&ast, src, &lexed, direct);
    if lexed.errors.is_empty()
        && body_lex_errors.is_empty()
        && syn_errors.is_empty()
        && low_errors.is_empty()
    {
        // The verifier runs only once the whole file lowered cleanly, so both lowering paths
        // verify the same module, and a syntax error is not buried under its consequences.
        let mut checks = verify::check_module(&ast, &module, src, &lexed.line_starts);
        checks.extend(verify::check_instructions(&module));
        if checks.is_empty() {
            return Ok(module);
        }
        low_errors.extend(
            checks
                .into_iter()
                .map(|(offset, line, message)| lower::LowerError {
                    offset,
                    line,
                    message,
                }),
        );
    }
    let raw: Vec<(u32, u32, String)> = lexed
        .errors
        .iter()
        .chain(&body_lex_errors)
        .map(|e| (e.offset, e.line, e.message.clone()))
        .chain(
            syn_errors
                .into_iter()
                .map(|e| (e.offset, e.line, e.message)),
        )
        .chain(
            low_errors
                .into_iter()
                .map(|e| (e.offset, e.line, e.message)),
        )
        .collect();
    Err(error::collect(src, file, &lexed.line_starts, raw))
}
