//! Fuzz target: parsing never panics or hangs; the direct lowering gives exactly what the
//! two-pass reference gives (module, spans, errors); and whatever parses round-trips through
//! the printer to an equal IR.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let parsed = ptx_parser::parse(&src);
    match (&parsed, ptx_parser::parse_two_pass(&src)) {
        (Ok(a), Ok(b)) => {
            assert!(*a == b, "direct and two-pass modules differ");
            for (fa, fb) in a.functions.iter().zip(&b.functions) {
                assert_eq!(fa.spans, fb.spans, "spans of {} differ", fa.name);
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("direct and two-pass lowering disagree on success"),
    }
    if let Ok(m) = parsed {
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
