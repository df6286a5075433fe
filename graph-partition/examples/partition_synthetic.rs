//! Builds a synthetic locality graph and groups it once, printing sizes and times; run it
//! under `/usr/bin/time -v` to see peak memory.
//!
//! `cargo run --release -p graph-partition --example partition_synthetic -- gemm 256 rb-ts [out.json]`

use graph_partition::{make_schedule, synthetic, Launch, Params, PolicyKind};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let shape = args.get(1).map_or("gemm", String::as_str);
    let side: u32 = args.get(2).map_or(Ok(256), |s| s.parse())?;
    let policy: PolicyKind = args.get(3).map_or("rb-ts", String::as_str).parse()?;
    let t = Instant::now();
    let g = match shape {
        "gemm" => synthetic::gemm(side),
        "stencil" => synthetic::stencil(side),
        other => return Err(format!("unknown shape `{other}` (gemm | stencil)").into()),
    };
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let launch = Launch {
        kernel: format!("{shape}{side}"),
        grid: [side, side, 1],
        block: [16, 16, 1],
    };
    let s = make_schedule(&g, &*policy.policy(), &Params::new(80, 8), &launch)?;
    let st = s.stats.as_ref().ok_or("no stats")?;
    println!(
        "{shape} {} TBs, {} edges: build {build_ms:.0} ms, {} {:.0} ms, {} groups (max {}), \
         weight inside groups {} vs LRR {}, concurrent weight {} vs LRR {}, of {}",
        g.num_tbs(),
        g.num_edges(),
        s.policy,
        st.partition_ms,
        st.num_groups,
        st.max_group_size,
        st.quality.intra_group_weight,
        st.lrr.intra_group_weight,
        st.quality.concurrent_weight,
        st.lrr.concurrent_weight,
        st.quality.total_weight
    );
    if let Some(out) = args.get(4) {
        s.write(std::path::Path::new(out))?;
    }
    Ok(())
}
