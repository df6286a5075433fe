//! Parses a PTX file and prints it back (or the errors): `cargo run --example ptx_roundtrip -- f.ptx`.
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: ptx_roundtrip FILE.ptx");
        std::process::exit(2);
    };
    match ptx_parser::parse_file(std::path::Path::new(&path)) {
        Ok(m) => print!("{m}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
