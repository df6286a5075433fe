//! The benchmark cases the speed examples share: naive GEMM at matrix size `n` (16x16 blocks,
//! random inputs), and the small launches of hotspot, stencil2d and bfs_expand.

use std::path::Path;

use launch::{BoundLaunch, Launch};

/// A corpus kernel bound to its benchmark launch.
pub struct Case {
    pub module: ptx_parser::Module,
    pub kernel: &'static str,
    pub bound: BoundLaunch,
}

/// Case `name` from the `variant` PTX build (`compute_70`, `compute_90`, ...).
pub fn load(name: &str, variant: &str, n: u64) -> Result<Case, Box<dyn std::error::Error>> {
    let (dir, kernel, launch_file) = match name {
        "mm_naive" => ("mm_naive", "mm_naive", ""),
        "hotspot" => ("hotspot", "hotspot", "small.json"),
        "stencil2d" => ("stencil2d", "stencil2d_5pt", "small.json"),
        "bfs" => ("bfs", "bfs_expand", "small.bfs_expand.json"),
        other => return Err(format!("unknown case {other}").into()),
    };
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(dir);
    let module = ptx_parser::parse_file(&d.join(format!("{dir}.{variant}.ptx")))?;
    let f = module.kernel(kernel).ok_or("no kernel")?;
    let l = if name == "mm_naive" {
        let (g, len) = (n.div_ceil(16), n * n);
        let json = format!(
            r#"{{"format": "paver-launch/1", "grid": [{g},{g},1], "block": [16,16,1], "params": [
  {{"index": 0, "buffer": {{"type": "f32", "len": {len}, "init": "rand(1)"}}}},
  {{"index": 1, "buffer": {{"type": "f32", "len": {len}, "init": "rand(2)"}}}},
  {{"index": 2, "buffer": {{"type": "f32", "len": {len}, "init": "zeros"}}}},
  {{"index": 3, "value": {n}}}]}}"#
        );
        Launch::from_json(&json, Path::new("speed.json"))?
    } else {
        Launch::read(&d.join(launch_file))?
    };
    let bound = l.bind(kernel, &sim::param_sigs(f), &d)?;
    Ok(Case {
        module,
        kernel,
        bound,
    })
}
