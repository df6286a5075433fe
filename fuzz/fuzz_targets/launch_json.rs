//! Fuzz target: reading a `paver-launch/1` description never panics or hangs; whatever
//! reads writes back (`to_json`) to JSON that reads as the same description; and binding it
//! to a kernel signature, checking every initialiser and making small buffers never panic
//! and never produce a buffer of the wrong size.
#![no_main]

use std::path::Path;

use launch::{BoundValue, Init, Launch, ParamArg, ParamSig, SigType};
use libfuzzer_sys::fuzz_target;

/// A kernel signature with every kind of parameter: pointers, 32-bit signed and unsigned
/// integers, a float and a double, a 16-bit integer and a by-value struct.
fn signature() -> Vec<ParamSig> {
    let p = |name: &str, ty| ParamSig {
        name: name.into(),
        ty,
    };
    let int = |bits, signed| SigType::Int { bits, signed };
    vec![
        p("a", int(64, false)),
        p("b", int(64, false)),
        p("n", int(32, true)),
        p("m", int(32, false)),
        p("alpha", SigType::Float { bits: 32 }),
        p("beta", SigType::Float { bits: 64 }),
        p("h", int(16, false)),
        p("s", SigType::Bytes { bytes: 24 }),
        p("c", int(64, true)),
    ]
}

/// Largest buffer the target materialises (bigger ones are only checked).
const MAX_MATERIALISE: u64 = 1 << 16;

/// CSR generators cost time in proportion to their rows; keep executions fast.
fn cheap(init: &Init) -> bool {
    match init {
        Init::CsrRowPtr(s) | Init::CsrColIdx(s) => s.rows <= 1 << 12 && s.avg_nnz <= 1 << 8,
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(launch) = Launch::from_json(&text, Path::new("fuzz.json")) else {
        return;
    };
    let json = launch.to_json();
    match Launch::from_json(&json, Path::new("again.json")) {
        Ok(again) => assert!(again == launch, "round trip differs:\n{json}"),
        Err(e) => panic!("written launch does not read: {e}\n{json}"),
    }
    let all_cheap = launch.params.iter().all(|p| match &p.arg {
        ParamArg::Buffer(b) => cheap(&b.init),
        ParamArg::Value(_) => true,
    });
    if !all_cheap {
        return;
    }
    // No file of the target's exists: file(…) must fail cleanly.
    let base = Path::new("/nonexistent-paver-fuzz");
    let Ok(bound) = launch.bind("k", &signature(), base) else {
        return;
    };
    for p in &bound.params {
        if let BoundValue::Buffer { elem, len, init, .. } = &p.value {
            let init = Init::parse(init).expect("a bound initialiser parses");
            let bytes = len * elem.size() as u64;
            if bytes <= MAX_MATERIALISE {
                let made = init.materialise(*elem, *len, base);
                if let Ok(v) = made {
                    assert_eq!(v.len() as u64, bytes, "{init} into {len} x {elem}");
                }
            }
        }
    }
});
