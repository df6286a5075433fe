//! Every instruction of every kernel of the corpus decodes to something the interpreter
//! executes: a new, unsupported opcode or modifier combination in `kernels/` fails here.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeSet;

use sim::Program;

#[test]
fn every_corpus_instruction_is_supported() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let mut files = Vec::new();
    for d in std::fs::read_dir(&root).unwrap() {
        let d = d.unwrap().path();
        if d.is_dir() {
            for f in std::fs::read_dir(&d).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "ptx") {
                    files.push(f);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() >= 80, "found only {} PTX files", files.len());
    let mut words = BTreeSet::new();
    let mut bad = Vec::new();
    for file in &files {
        let m = ptx_parser::parse_file(file).unwrap();
        for f in m.entries() {
            for i in &f.insts {
                words.insert(format!("{}{}", i.op.name(), i.mods));
            }
            for (line, text, why) in Program::from_function(&m, f).unsupported() {
                bad.push(format!("{}:{line}: `{text}`: {why}", file.display()));
            }
        }
    }
    println!(
        "{} distinct instruction words: {}",
        words.len(),
        words.into_iter().collect::<Vec<_>>().join(" ")
    );
    assert!(bad.is_empty(), "unsupported:\n{}", bad.join("\n"));
}
