//! Every `*.ptx` under `../kernels` parses, has an entry, and round-trips through the printer:
//! print -> parse gives an equal IR, and print -> parse -> print is a text fixed point.

use std::path::{Path, PathBuf};

#[path = "common/walk.rs"]
mod walk;
use walk::collect_ptx as collect;

/// The corpus files; fails when there are none (an empty corpus would make this test vacuous).
pub fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let mut v = Vec::new();
    collect(&dir, &mut v);
    assert!(
        !v.is_empty(),
        "no .ptx files under {} - the kernel corpus has not been generated yet",
        dir.display()
    );
    v
}

/// The extra inputs in `tests/data` (other compilers and targets; see `tests/data/regenerate`).
pub fn extra_data() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut v = Vec::new();
    collect(&dir, &mut v);
    assert!(!v.is_empty(), "no .ptx files under {}", dir.display());
    v
}

#[test]
fn corpus_parses_and_round_trips() {
    check_files(&corpus());
}

#[test]
fn extra_data_parses_and_round_trips() {
    check_files(&extra_data());
}

/// Full and lazy lexing agree: the token stream of [`ptx_parser::lexer::lex`] equals that of
/// [`ptx_parser::lexer::lex_lazy`] with every skipped block re-lexed in place.
#[test]
fn lazy_lexing_matches_full_lexing() {
    use ptx_parser::lexer::{lex, lex_block, lex_lazy};
    for path in corpus().iter().chain(&extra_data()) {
        let src = std::fs::read_to_string(path).expect("readable");
        let full = lex(&src);
        let lazy = lex_lazy(&src);
        assert_eq!(full.line_starts, lazy.line_starts, "{}", path.display());
        let mut merged = Vec::new();
        let mut buf = Vec::new();
        let mut errors = Vec::new();
        let mut blocks = lazy.blocks.iter().peekable();
        for (i, t) in lazy.tokens.iter().enumerate() {
            merged.push(*t);
            if let Some(b) = blocks.next_if(|b| b.open as usize == i) {
                lex_block(&src, b, &mut buf, &mut errors);
                merged.extend_from_slice(&buf);
                // The block's `}` is the lazy stream's next token.
                merged.pop();
            }
        }
        assert_eq!(full.tokens, merged, "{}", path.display());
        assert!(full.errors.is_empty() && errors.is_empty());
    }
}

fn check_files(files: &[PathBuf]) {
    let mut failures = Vec::new();
    for path in files {
        let m = match ptx_parser::parse_file(path) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{e}"));
                continue;
            }
        };
        if m.entries().count() == 0 {
            failures.push(format!("{}: no .entry", path.display()));
        }
        let text = m.to_string();
        match ptx_parser::parse(&text) {
            Ok(m2) => {
                if m2 != m {
                    let which = m
                        .functions
                        .iter()
                        .zip(&m2.functions)
                        .find(|(a, b)| a != b)
                        .map_or("module".to_string(), |(a, _)| a.name.clone());
                    failures.push(format!("{}: reparse differs in {which}", path.display()));
                }
                let text2 = m2.to_string();
                if text2 != text {
                    failures.push(format!("{}: print is not a fixed point", path.display()));
                }
            }
            Err(e) => failures.push(format!(
                "{}: printed PTX does not parse:\n{e}",
                path.display()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
