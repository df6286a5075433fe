//! Fuzz target: parsing never panics or hangs, and whatever parses round-trips through the
//! printer to an equal IR.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    if let Ok(m) = ptx_parser::parse(&src) {
        let text = m.to_string();
        match ptx_parser::parse(&text) {
            Ok(m2) => assert!(m == m2, "reparse differs:\n{text}"),
            Err(e) => panic!("printed module does not parse: {e}\n{text}"),
        }
        for f in &m.functions {
            let _ = f.cfg();
        }
    }
});
