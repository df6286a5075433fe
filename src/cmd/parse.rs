//! `paver parse FILE.ptx`: a summary of every kernel and function in a PTX file.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

use ptx_parser::{Function, MemCounts, Module};
use serde::Serialize;

use crate::error::CliError;
use crate::launch_args::load_module;

/// Examples shown by `paver parse --help`.
pub const EXAMPLES: &str = "Examples:
  paver parse kernels/mm_naive/mm_naive.compute_70.ptx
  paver parse kernels/conv2d/conv2d.compute_70.ptx --json | jq '.functions[].demangled'
  paver parse kernels/conv2d/conv2d.cu --arch compute_90     # compiled with NVRTC (paver compile)";

/// Arguments of `paver parse`.
#[derive(clap::Args)]
pub struct Args {
    /// PTX file, or CUDA source (.cu) compiled with NVRTC.
    file: PathBuf,
    /// Print JSON instead of the human summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    cuda: crate::launch_args::CudaArgs,
}

#[derive(Serialize)]
struct ModuleSummary<'a> {
    file: String,
    version: String,
    target: &'a [String],
    address_size: u32,
    functions: Vec<FunctionSummary<'a>>,
}

#[derive(Serialize)]
struct FunctionSummary<'a> {
    name: &'a str,
    /// The demangled C++ name, for mangled names.
    #[serde(skip_serializing_if = "Option::is_none")]
    demangled: Option<String>,
    entry: bool,
    params: Vec<ParamSummary<'a>>,
    registers: BTreeMap<String, usize>,
    instructions: usize,
    basic_blocks: usize,
    memory: MemCounts,
    instruction_mix: BTreeMap<String, usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    maxntid: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reqntid: Option<&'a [u32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    minnctapersm: Option<u32>,
}

#[derive(Serialize)]
struct ParamSummary<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    ty: String,
    pointer: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    array: Option<u32>,
}

fn summarise<'a>(path: &std::path::Path, m: &'a Module) -> ModuleSummary<'a> {
    ModuleSummary {
        file: path.display().to_string(),
        version: format!("{}.{}", m.version.0, m.version.1),
        target: &m.target,
        address_size: m.address_size,
        functions: m
            .functions
            .iter()
            .filter(|f| f.has_body)
            .map(summarise_fn)
            .collect(),
    }
}

fn summarise_fn(f: &Function) -> FunctionSummary<'_> {
    // nvcc writes no `.ptr` attribute: the C++ signature says which parameters are pointers.
    let types = crate::names::param_types(&f.name).filter(|t| t.len() == f.params.len());
    let is_pointer = |k: usize| {
        types
            .as_ref()
            .and_then(|t| t.get(k))
            .is_some_and(|t| t.ends_with('*'))
    };
    FunctionSummary {
        name: &f.name,
        demangled: crate::names::demangle(&f.name),
        entry: f.is_entry,
        params: f
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| ParamSummary {
                name: &p.name,
                ty: p.ty.to_string(),
                pointer: p.ptr.is_some() || is_pointer(k),
                array: p.array,
            })
            .collect(),
        registers: f
            .register_counts()
            .into_iter()
            .map(|(t, n)| (t.to_string(), n))
            .collect(),
        instructions: f.insts.len(),
        basic_blocks: f.cfg().blocks.len(),
        memory: f.mem_counts(),
        instruction_mix: f.instruction_mix(),
        maxntid: f.attributes.maxntid.as_deref(),
        reqntid: f.attributes.reqntid.as_deref(),
        minnctapersm: f.attributes.minnctapersm,
    }
}

fn human(s: &ModuleSummary<'_>) -> String {
    let mut out = String::new();
    let entries = s.functions.iter().filter(|f| f.entry).count();
    let _ = writeln!(
        out,
        "{}: PTX {}, target {}, {}-bit addresses, {} entr{}, {} function{}",
        s.file,
        s.version,
        s.target.join(", "),
        s.address_size,
        entries,
        if entries == 1 { "y" } else { "ies" },
        s.functions.len() - entries,
        if s.functions.len() - entries == 1 {
            ""
        } else {
            "s"
        },
    );
    for f in &s.functions {
        let mangled = f
            .demangled
            .as_ref()
            .map(|_| format!("  [{}]", f.name))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\n{} {}{mangled}",
            if f.entry { "entry" } else { "func" },
            f.demangled.as_deref().unwrap_or(f.name)
        );
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| {
                let arr = p.array.map(|n| format!("[{n}]")).unwrap_or_default();
                format!(
                    "{} .{}{}{}",
                    p.name,
                    p.ty,
                    arr,
                    if p.pointer { " (ptr)" } else { "" }
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "  params       {}: {}",
            params.len(),
            params.join(", ")
        );
        let regs: Vec<String> = f
            .registers
            .iter()
            .map(|(t, n)| format!("{n} .{t}"))
            .collect();
        let _ = writeln!(
            out,
            "  registers    {}",
            if regs.is_empty() {
                "none".into()
            } else {
                regs.join(", ")
            }
        );
        let _ = writeln!(
            out,
            "  instructions {} in {} basic blocks",
            f.instructions, f.basic_blocks
        );
        let m = &f.memory;
        let _ = writeln!(
            out,
            "  global       {} loads ({} .nc), {} stores, {} atomics/reductions; generic {} loads, {} stores",
            m.global_loads, m.global_nc_loads, m.global_stores, m.global_atomics, m.generic_loads, m.generic_stores
        );
        let _ = writeln!(
            out,
            "  shared       {} loads, {} stores",
            m.shared_loads, m.shared_stores
        );
        let mut mix: Vec<(&String, &usize)> = f.instruction_mix.iter().collect();
        mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mix: Vec<String> = mix.iter().map(|(op, n)| format!("{op} {n}")).collect();
        let _ = writeln!(out, "  mix          {}", mix.join(", "));
    }
    out
}

/// Runs `paver parse`.
pub fn run(args: Args) -> Result<(), CliError> {
    let module = load_module(&args.file, &args.cuda)?;
    let summary = summarise(&args.file, &module);
    if args.json {
        let text =
            serde_json::to_string_pretty(&summary).map_err(|e| CliError::Usage(e.to_string()))?;
        crate::out::println(&text)?;
    } else {
        crate::out::print(&human(&summary))?;
    }
    Ok(())
}
