//! Schedule file: writer, reader, validation, and agreement with the JSON Schema's required
//! fields.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use graph_partition::{make_schedule, Graph, Launch, Params, PolicyKind, Schedule};

fn sample() -> Schedule {
    let g = Graph::from_edges(6, &[(0, 1, 5), (2, 3, 5), (4, 5, 5)]).unwrap();
    let launch = Launch {
        kernel: "mm".into(),
        grid: [3, 2, 1],
        block: [16, 16, 1],
    };
    make_schedule(
        &g,
        &*PolicyKind::KwayTs.policy(),
        &Params::new(3, 2),
        &launch,
    )
    .unwrap()
}

#[test]
fn writes_the_documented_shape() {
    let s = sample();
    let v: serde_json::Value = serde_json::from_str(&s.to_json().unwrap()).unwrap();
    assert_eq!(v["format"], "paver-schedule/1");
    assert_eq!(v["policy"], "kway-ts");
    assert_eq!(v["grid"], serde_json::json!([3, 2, 1]));
    assert_eq!(v["num_sms"], 3);
    assert_eq!(v["tbs_per_sm"], 2);
    // Pairs (0,1), (2,3), (4,5) share; Kway-TS with 3 parts keeps all 15. LRR runs
    // {0,3}, {1,4}, {2,5} on the three SMs and keeps none.
    assert_eq!(v["groups"], serde_json::json!([[0, 1], [2, 3], [4, 5]]));
    assert_eq!(v["stats"]["quality"]["concurrent_weight"], 15);
    assert_eq!(v["stats"]["quality"]["intra_group_weight"], 15);
    assert_eq!(v["stats"]["lrr"]["concurrent_weight"], 0);
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../schema/paver-schedule-1.schema.json")).unwrap();
    for key in schema["required"].as_array().unwrap() {
        assert!(v.get(key.as_str().unwrap()).is_some(), "missing {key}");
    }
    for key in v.as_object().unwrap().keys() {
        assert!(
            schema["properties"].get(key).is_some(),
            "{key} not in schema"
        );
    }
}

#[test]
fn validation_catches_broken_schedules() {
    let mut s = sample();
    s.groups[0].push(4);
    assert!(s
        .validate()
        .unwrap_err()
        .to_string()
        .contains("TB 4 appears"));
    let mut s = sample();
    s.groups.pop();
    assert!(s
        .validate()
        .unwrap_err()
        .to_string()
        .contains("in no group"));
    let mut s = sample();
    s.groups[0][0] = 99;
    assert!(s
        .validate()
        .unwrap_err()
        .to_string()
        .contains("outside the grid"));
    let mut s = sample();
    s.format = "paver-schedule/2".into();
    assert!(s.validate().is_err());
    let mut s = sample();
    s.groups.push(vec![]);
    assert!(s.validate().unwrap_err().to_string().contains("empty"));
}

#[test]
fn minimal_file_from_another_tool_reads() {
    let text = r#"{"format":"paver-schedule/1","kernel":"k","grid":[4,1,1],"block":[64,1,1],
        "policy":"custom","num_sms":2,"tbs_per_sm":2,"groups":[[3,2],[1,0]]}"#;
    let s = Schedule::from_json(text).unwrap();
    assert_eq!((s.issue_unit, s.sms_per_cluster, s.stats), (1, 1, None));
}

#[test]
fn file_roundtrip() {
    let s = sample();
    let dir = std::env::temp_dir().join(format!("gp-sched-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.json");
    s.write(&path).unwrap();
    assert_eq!(Schedule::read(&path).unwrap(), s);
    std::fs::remove_dir_all(&dir).unwrap();
}
