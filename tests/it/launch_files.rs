//! Every launch description in the corpus is valid: against the JSON Schema, against the
//! Rust reader, and bound against its kernel's PTX (names, types, buffer lengths).

use crate::common::{launch_files, root};

#[test]
fn launch_schema_is_valid_and_accepts_every_corpus_launch() {
    let schema_path = root().join("docs/schema/paver-launch-1.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    for file in launch_files() {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{}: {}",
            file.display(),
            errors.join("; ")
        );
        launch::Launch::read(&file).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn launch_schema_rejects_what_the_reader_rejects() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schema/paver-launch-1.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let bad = [
        r#"{"format": "paver-launch/1", "grid": [0], "block": [1]}"#,
        r#"{"format": "paver-launch/2", "grid": [1], "block": [1]}"#,
        r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "extra": 1}"#,
        r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0}]}"#,
        r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0, "name": "a", "value": 1}]}"#,
        r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0, "value": 1, "buffer": {"type": "f32", "len": 1, "init": "zeros"}}]}"#,
        r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0, "buffer": {"type": "f16", "len": 1, "init": "zeros"}}]}"#,
        r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0, "buffer": {"type": "f32", "len": 1, "init": "random"}}]}"#,
        r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0, "buffer": {"type": "f32", "len": 1, "len_of": 2, "init": "zeros"}}]}"#,
    ];
    for text in bad {
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        assert!(!validator.is_valid(&doc), "schema accepted {text}");
        assert!(
            launch::Launch::from_json(text, std::path::Path::new("t.json")).is_err(),
            "reader accepted {text}"
        );
    }
}
