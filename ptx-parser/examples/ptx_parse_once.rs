//! Parses each given PTX file once (for instruction-count profiling under callgrind, whose
//! counts do not depend on machine load).
fn main() {
    for p in std::env::args().skip(1) {
        let Ok(src) = std::fs::read_to_string(&p) else {
            eprintln!("cannot read {p}");
            std::process::exit(1);
        };
        match ptx_parser::parse(&src) {
            Ok(m) => println!("{p}: {} bytes, {} functions", src.len(), m.functions.len()),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
}
