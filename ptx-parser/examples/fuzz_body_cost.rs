//! Where the `parse` fuzz target's time goes: runs its body's stages (direct parse, the
//! two-pass reference, print, reparse, CFG) over the files given and prints the time each
//! stage takes over all of them (`fuzz/README.md`, "Where the time goes").
//!
//! ```sh
//! cargo run --release -p ptx-parser --example fuzz_body_cost -- kernels/*/*.ptx
//! ```

use std::time::{Duration, Instant};

fn main() {
    let mut t = [Duration::ZERO; 5];
    let mut files = 0;
    let mut bytes = 0;
    for path in std::env::args().skip(1) {
        let Ok(data) = std::fs::read(&path) else {
            eprintln!("{path}: unreadable");
            continue;
        };
        files += 1;
        bytes += data.len();
        let src = String::from_utf8_lossy(&data);
        let s = Instant::now();
        let parsed = ptx_parser::parse(&src);
        t[0] += s.elapsed();
        let s = Instant::now();
        let _ = ptx_parser::parse_two_pass(&src);
        t[1] += s.elapsed();
        if let Ok(m) = parsed {
            let s = Instant::now();
            let text = m.to_string();
            t[2] += s.elapsed();
            let s = Instant::now();
            let _ = ptx_parser::parse(&text);
            t[3] += s.elapsed();
            let s = Instant::now();
            for f in &m.functions {
                let _ = f.cfg();
            }
            t[4] += s.elapsed();
        }
    }
    println!("{files} files, {bytes} bytes");
    for (name, d) in ["parse", "parse_two_pass", "print", "reparse", "cfg"]
        .iter()
        .zip(t)
    {
        println!("{name:>15}: {:>9.3} ms", d.as_secs_f64() * 1e3);
    }
}
