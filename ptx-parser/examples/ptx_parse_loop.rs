//! Parses the given PTX files repeatedly for 3 s and prints throughput in MB/s and kernels
//! (`.entry` functions) per second, twice: for producing the IR alone (each module is dropped
//! outside the timed region, as criterion's `iter_with_large_drop` does) and for producing
//! and dropping it. `cargo run --release -p ptx-parser --example ptx_parse_loop --
//! kernels/*/*.ptx`.
use std::time::{Duration, Instant};

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
    let (mut parse, mut drop) = (Duration::ZERO, Duration::ZERO);
    let mut n = 0usize;
    while parse + drop < Duration::from_secs(3) {
        for f in &files {
            let t = Instant::now();
            let m = ptx_parser::parse(f);
            let t1 = Instant::now();
            if m.is_err() {
                eprintln!("parse error");
                std::process::exit(1);
            }
            std::mem::drop(m);
            parse += t1 - t;
            drop += t1.elapsed();
        }
        n += 1;
    }
    let rate = |d: Duration| {
        let s = d.as_secs_f64();
        ((bytes * n) as f64 / s / 1e6, (kernels * n) as f64 / s)
    };
    let (p_mbs, p_kps) = rate(parse);
    let (t_mbs, t_kps) = rate(parse + drop);
    println!(
        "{n} passes over {bytes} bytes, {kernels} kernels: parse {p_mbs:.1} MB/s, {p_kps:.0} kernels/s; \
         parse+drop {t_mbs:.1} MB/s, {t_kps:.0} kernels/s"
    );
}
