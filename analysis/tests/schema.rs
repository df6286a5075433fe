//! The documents `report::write_json` produces for the corpus's small launches validate
//! against `schema/paver-analysis-1.schema.json`.

mod common;

use analysis::footprint::Granularity;
use common::*;

/// Every corpus kernel directory with its small launch files.
fn small_launches() -> Vec<(String, String)> {
    let root = kdir("");
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("kernels/")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    for d in dirs {
        let mut files: Vec<String> = std::fs::read_dir(root.join(&d))
            .expect("kernel dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with("small") && f.ends_with(".json"))
            .collect();
        files.sort();
        for f in files {
            if kdir(&d).join(format!("{d}.compute_70.ptx")).exists() {
                out.push((d.clone(), f));
            }
        }
    }
    out
}

/// The document of one launch, as bytes and parsed back.
pub fn document_bytes(dir: &str, file: &str, g: Granularity) -> Vec<u8> {
    let (m, b) = load(dir, "compute_70", file);
    let f = m.kernel(&b.kernel).expect("kernel");
    let a = analysis::analyze(f, &b, g).expect("analysis");
    let (graph, stats) = analysis::locality::build(&a.footprints);
    let r = analysis::reuse::compute(&a, &b, g, &graph);
    // Descriptors by enumeration here (z3 is exercised by tests/descriptor.rs).
    let d = analysis::descriptor::compute_enumerated(f, &a, &b);
    let doc = analysis::report::document_with(f, &b, g, &a, &graph, &stats, &r, &d);
    let mut out = Vec::new();
    analysis::report::write_json(&mut out, &doc, &graph).expect("write");
    out
}

#[test]
fn corpus_documents_validate() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("schema/paver-analysis-1.schema.json"),
        )
        .expect("schema file"),
    )
    .expect("schema JSON");
    let v = jsonschema::validator_for(&schema).expect("valid schema");
    let launches = small_launches();
    assert!(launches.len() >= 30, "{} launches", launches.len());
    for (d, f) in launches {
        for g in [Granularity::Line(128), Granularity::Element] {
            let bytes = document_bytes(&d, &f, g);
            if std::env::var_os("PAVER_DUMP").is_some() && d == "mm_naive" {
                std::fs::write("/tmp/paver-doc.json", &bytes).expect("dump");
            }
            let doc: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
            let errors: Vec<String> = v
                .iter_errors(&doc)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .take(5)
                .collect();
            assert!(errors.is_empty(), "{d} {f} {g:?}: {errors:#?}");
        }
    }
    // The schema rejects a document with a field removed or mistyped.
    let mut doc: serde_json::Value = serde_json::from_slice(&document_bytes(
        "mm_naive",
        "small.json",
        Granularity::Sector,
    ))
    .expect("JSON");
    assert!(v.is_valid(&doc));
    doc["stats"]["spscore"] = serde_json::json!("high");
    assert!(!v.is_valid(&doc));
    doc.as_object_mut().expect("object").remove("graph");
    assert!(!v.is_valid(&doc));
}
