//! Parses the given PTX files repeatedly for 3 s and prints throughput in MB/s and kernels
//! (`.entry` functions) per second: `cargo run --release -p ptx-parser --example
//! ptx_parse_loop -- kernels/*/*.ptx`.
fn main() {
    let files: Vec<String> = std::env::args()
        .skip(1)
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let bytes: usize = files.iter().map(String::len).sum();
    let mut kernels = 0usize;
    for f in &files {
        match ptx_parser::parse(f) {
            Ok(m) => kernels += m.entries().count(),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    let t = std::time::Instant::now();
    let mut n = 0usize;
    while t.elapsed().as_secs_f64() < 3.0 {
        for f in &files {
            if ptx_parser::parse(f).is_err() {
                eprintln!("parse error");
                std::process::exit(1);
            }
        }
        n += 1;
    }
    let secs = t.elapsed().as_secs_f64();
    let mbs = (bytes * n) as f64 / secs / 1e6;
    let kps = (kernels * n) as f64 / secs;
    println!("{n} passes over {bytes} bytes, {kernels} kernels: {mbs:.1} MB/s, {kps:.0} kernels/s");
}
