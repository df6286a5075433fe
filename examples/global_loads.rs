//! Library use in a few lines: parse a PTX file, bind a launch description to one of its
//! kernels, and list the kernel's global loads with their PTX lines and the buffer each
//! parameter points to.
//!
//! ```sh
//! cargo run --example global_loads -- kernels/mm_naive/mm_naive.compute_70.ptx kernels/mm_naive/small.json
//! ```

use std::path::Path;

use launch::{BoundValue, Launch};
use ptx_parser::{Opcode, StateSpace};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [ptx, launch_file] = args.as_slice() else {
        return Err("usage: global_loads FILE.ptx LAUNCH.json".into());
    };
    let module = ptx_parser::parse_file(Path::new(ptx))?;
    let launch = Launch::read(Path::new(launch_file))?;
    let name = launch
        .kernel
        .clone()
        .ok_or("the launch file names no kernel")?;
    let kernel = module.kernel(&name).ok_or("no such kernel in the PTX")?;

    // The launch binder only needs each parameter's name and type.
    let sigs = launch::param_sigs(kernel);
    let dir = Path::new(launch_file).parent().unwrap_or(Path::new("."));
    let bound = launch.bind(&name, &sigs, dir)?;

    println!("{name}: grid {} block {}", bound.grid, bound.block);
    for p in &bound.params {
        if let BoundValue::Buffer {
            base, elem, len, ..
        } = &p.value
        {
            println!("  {:<20} {len} x {elem} at {base:#x}", p.name);
        }
    }
    for (i, inst) in kernel.insts.iter().enumerate() {
        if matches!(inst.op, Opcode::Ld) && inst.mods.space == Some(StateSpace::Global) {
            let line = kernel.spans.get(i).map_or(0, |s| s.line);
            println!(
                "  line {line:>4}: {}",
                module
                    .display_inst(kernel, ptx_parser::InstId(i as u32))
                    .to_string()
                    .trim()
            );
        }
    }
    Ok(())
}
