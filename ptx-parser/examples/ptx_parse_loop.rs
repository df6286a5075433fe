//! Parses the given PTX files repeatedly and prints throughput (for profiling the parser).
fn main() {
    let files: Vec<String> = std::env::args()
        .skip(1)
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let bytes: usize = files.iter().map(String::len).sum();
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
    let mbs = (bytes * n) as f64 / t.elapsed().as_secs_f64() / 1e6;
    println!("{n} passes over {bytes} bytes: {mbs:.1} MB/s");
}
