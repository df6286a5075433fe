//! `paver inspect FILE.ptx --kernel NAME`: one kernel's control-flow graph, block by block,
//! with each instruction as PTX and its source line.

use std::fmt::Write;
use std::path::PathBuf;

use ptx_parser::{BlockId, Cfg, Function, InstId, Module};
use serde::Serialize;

use crate::error::CliError;
use crate::launch_args::{load_module, select_kernel};

/// Examples shown by `paver inspect --help`.
pub const EXAMPLES: &str = "Examples:
  paver inspect kernels/mm_naive/mm_naive.compute_70.ptx
  paver inspect kernels/conv2d/conv2d.compute_70.ptx --kernel convolution2D_kernel --json
  paver inspect my_kernels.cu --kernel 'scale(float*, float)' -D TILE=16   # C++ overload by signature";

/// Arguments of `paver inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// PTX file, or CUDA source (.cu) compiled with NVRTC.
    file: PathBuf,
    /// Kernel (.entry) name, mangled or demangled (`convolution2D_kernel`); may be omitted
    /// when the file has one entry.
    #[arg(long)]
    kernel: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    cuda: crate::launch_args::CudaArgs,
}

#[derive(Serialize)]
struct CfgDump {
    kernel: String,
    instructions: usize,
    blocks: Vec<BlockDump>,
}

#[derive(Serialize)]
struct BlockDump {
    id: u32,
    label: Option<String>,
    preds: Vec<u32>,
    succs: Vec<u32>,
    insts: Vec<InstDump>,
}

#[derive(Serialize)]
struct InstDump {
    id: u32,
    /// 1-based line in the PTX file.
    line: u32,
    text: String,
}

fn dump(m: &Module, f: &Function) -> CfgDump {
    let cfg = Cfg::compute(f);
    let blocks = cfg
        .blocks
        .iter()
        .enumerate()
        .map(|(b, block)| BlockDump {
            id: b as u32,
            label: block
                .label
                .and_then(|l| f.labels.get(l.index()))
                .map(|l| l.name.clone()),
            preds: cfg
                .preds
                .get(b)
                .map(|p| p.iter().map(|x| x.0).collect())
                .unwrap_or_default(),
            succs: block.succs.iter().map(|s: &BlockId| s.0).collect(),
            insts: (block.insts.start.0..block.insts.end.0)
                .map(|i| InstDump {
                    id: i,
                    line: f.span(InstId(i)).map_or(0, |s| s.line),
                    text: m.display_inst(f, InstId(i)).to_string().replace('\t', " "),
                })
                .collect(),
        })
        .collect();
    CfgDump {
        kernel: f.name.clone(),
        instructions: f.insts.len(),
        blocks,
    }
}

fn human(d: &CfgDump) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {}: {} instructions in {} basic blocks",
        crate::names::display(&d.kernel),
        d.instructions,
        d.blocks.len()
    );
    let ids = |v: &[u32]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter()
                .map(|b| format!("B{b}"))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    for b in &d.blocks {
        let label = b
            .label
            .as_deref()
            .map(|l| format!(" {l}:"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\nB{}{}   preds: {}   succs: {}",
            b.id,
            label,
            ids(&b.preds),
            ids(&b.succs)
        );
        for i in &b.insts {
            let _ = writeln!(out, "  {:>5}  line {:<5} {}", i.id, i.line, i.text);
        }
    }
    out
}

/// Runs `paver inspect`.
pub fn run(args: Args) -> Result<(), CliError> {
    let module = load_module(&args.file, &args.cuda)?;
    let f = select_kernel(&module, args.kernel.as_deref(), &args.file)?;
    let d = dump(&module, f);
    if args.json {
        let text = serde_json::to_string_pretty(&d).map_err(|e| CliError::Usage(e.to_string()))?;
        crate::out::println(&text)?;
    } else {
        crate::out::print(&human(&d))?;
    }
    Ok(())
}
