//! Prints the symbolic model of a kernel for a launch file (debugging aid).
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let m = ptx_parser::parse_file(std::path::Path::new(&a[1])).expect("parse");
    let l = launch::Launch::read(std::path::Path::new(&a[2])).expect("launch");
    let name = l.kernel.clone().expect("kernel");
    let f = m.kernel(&name).expect("kernel");
    let dir = std::path::Path::new(&a[2]).parent().expect("dir");
    let b = l.bind(&name, &analysis::param_sigs(f), dir).expect("bind");
    let model = analysis::addr::analyze_kernel(f, &b);
    for (i, lp) in model.loops.iter().enumerate() {
        println!("loop {i}: {lp:?}");
    }
    for s in &model.loads {
        println!(
            "load line {} w {} loops {:?}\n  addr {:?}\n  cond {:?}",
            s.line, s.width, s.loops, s.addr, s.cond
        );
    }
}
