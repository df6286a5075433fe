//! `paver launch FILE.ptx …`: binds a launch (a `--launch` file and/or flags) to a kernel,
//! reports every parameter's resolved value and address, and can write the result as a
//! normalised launch file to reuse with `--launch`.

use std::fmt::Write;
use std::path::{Component, Path, PathBuf};

use launch::{
    BoundLaunch, BoundValue, BufferSpec, Init, Launch, ParamArg, ParamKey, ParamSpec, Scalar,
    SigType,
};

use crate::error::{write_atomic, CliError};
use crate::launch_args::KernelLaunchArgs;

/// Examples shown by `paver launch --help`.
pub const EXAMPLES: &str = "Examples:
  paver launch kernels/mm_naive/mm_naive.compute_70.ptx --grid 64x64 --block 16x16 --param 3=1024
  paver launch kernels/mm_naive/mm_naive.compute_70.ptx --launch kernels/mm_naive/small.json -o bound.json
  paver launch kernels/mm_naive/mm_naive.cu --launch kernels/mm_naive/small.json   # CUDA source, NVRTC";

/// Arguments of `paver launch`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelLaunchArgs,
    /// Print the bound launch as JSON.
    #[arg(long)]
    json: bool,
    /// Write the launch, normalised (every parameter by index, kernel named), to this file.
    #[arg(short, long, value_name = "FILE.json")]
    output: Option<PathBuf>,
}

/// Runs `paver launch`: the binding of the commands that run the kernel, so a by-value
/// parameter without a value is an error here (`paver analyze` leaves it open).
pub fn run(args: Args) -> Result<(), CliError> {
    let loaded = args.target.load()?;
    let (launch, bound) = (&loaded.launch, &loaded.bound);
    if let Some(out) = &args.output {
        let mut l = normalise(launch, bound);
        rebase_files(&mut l, &bound.base_dir, out)?;
        write_atomic(out, &l.to_json())?;
    }
    if args.json {
        let text =
            serde_json::to_string_pretty(&bound).map_err(|e| CliError::Usage(e.to_string()))?;
        crate::out::println(&text)?;
    } else {
        crate::out::print(&human(bound))?;
    }
    Ok(())
}

/// The launch with every parameter given by index, in order, and the kernel named.
pub(crate) fn normalise(orig: &Launch, bound: &BoundLaunch) -> Launch {
    let mut l = Launch::new(bound.grid, bound.block);
    l.kernel = Some(bound.kernel.clone());
    l.dynamic_shared_bytes = bound.dynamic_shared_bytes;
    l.resources = orig.resources.clone();
    // The last spec for a parameter is the one that was bound; keep its comment and buffer.
    let spec_for = |i: usize, name: &str| -> Option<&ParamSpec> {
        orig.params.iter().rev().find(|s| match &s.key {
            ParamKey::Index(k) => *k == i,
            ParamKey::Name(n) => n == name,
        })
    };
    for (i, p) in bound.params.iter().enumerate() {
        let spec = spec_for(i, &p.name);
        let comment = spec.and_then(|s| s.comment.clone());
        let arg = match (&p.value, spec.map(|s| &s.arg)) {
            (BoundValue::Scalar { bits }, _) => ParamArg::Value(decode(*bits, p.ty)),
            (BoundValue::Buffer { len, .. }, Some(ParamArg::Buffer(b))) => {
                let mut b = b.clone();
                b.len = Some(*len);
                b.len_of = None;
                ParamArg::Buffer(b)
            }
            (BoundValue::Bytes { .. }, Some(a)) => a.clone(),
            _ => continue, // synthetic pointers stay synthetic
        };
        l.params.push(ParamSpec {
            key: ParamKey::Index(i),
            comment,
            arg,
        });
    }
    l
}

/// Rewrites relative `file(…)` paths, which were relative to `base_dir` (the launch file's
/// folder, or the working directory for flags), so they name the same files from the
/// folder of `out`, where the new launch file goes.
pub(crate) fn rebase_files(l: &mut Launch, base_dir: &Path, out: &Path) -> Result<(), CliError> {
    let cwd = std::env::current_dir().map_err(|e| CliError::io(".", e))?;
    let out_dir = lexical(&cwd.join(out.parent().unwrap_or(Path::new(""))));
    for p in &mut l.params {
        if let ParamArg::Buffer(BufferSpec {
            init: Init::File(f),
            ..
        }) = &mut p.arg
        {
            if f.is_relative() {
                let target = lexical(&cwd.join(base_dir).join(&*f));
                *f = relative_to(&target, &out_dir);
            }
        }
    }
    Ok(())
}

/// `path` with `.` dropped and `..` applied to the component before it, without asking the
/// file system (the files may not exist yet).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c);
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `target` as a path relative to the folder `from` (both absolute and lexical); `target`
/// itself when they share no root.
fn relative_to(target: &Path, from: &Path) -> PathBuf {
    let t: Vec<Component> = target.components().collect();
    let f: Vec<Component> = from.components().collect();
    let common = t.iter().zip(&f).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return target.to_path_buf();
    }
    let mut rel = PathBuf::new();
    for _ in common..f.len() {
        rel.push("..");
    }
    for c in &t[common..] {
        rel.push(c);
    }
    rel
}

fn decode(bits: u64, ty: SigType) -> Scalar {
    match ty {
        SigType::Float { bits: 32 } => Scalar::Float(f64::from(f32::from_bits(bits as u32))),
        SigType::Float { .. } => Scalar::Float(f64::from_bits(bits)),
        SigType::Int {
            bits: w,
            signed: true,
        } if w < 64 => {
            let shift = 64 - w;
            Scalar::Int(i128::from(((bits << shift) as i64) >> shift))
        }
        SigType::Int { signed: true, .. } => Scalar::Int(i128::from(bits as i64)),
        _ => Scalar::Int(i128::from(bits)),
    }
}

fn human(b: &BoundLaunch) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {}: grid {} ({} TBs), block {} ({} threads), dynamic shared {} B",
        crate::names::display(&b.kernel),
        b.grid,
        b.num_tbs(),
        b.block,
        b.block.count(),
        b.dynamic_shared_bytes
    );
    for (i, p) in b.params.iter().enumerate() {
        let v = match &p.value {
            BoundValue::Scalar { bits } => format!("= {}", decode(*bits, p.ty)),
            BoundValue::Buffer {
                base,
                elem,
                len,
                init,
            } => {
                format!(
                    "-> {base:#x}: {len} x {elem} ({} bytes), {init}",
                    len * elem.size() as u64
                )
            }
            BoundValue::Synthetic { base } => {
                format!("-> {base:#x}: synthetic pointer (no buffer given)")
            }
            // `paver launch` binds strictly; kept for a launch bound open elsewhere.
            BoundValue::Open => "open: no value given (only the static analysis allows it)".into(),
            BoundValue::Bytes { bytes, buffers } => {
                let mut s = format!("= {} bytes by value", bytes.len());
                for fb in buffers {
                    s += &format!(
                        "; +{} -> {:#x}: {} x {} ({})",
                        fb.offset, fb.base, fb.len, fb.elem, fb.init
                    );
                }
                s
            }
        };
        let _ = writeln!(out, "  [{i}] {:<24} {v}", p.name);
    }
    let _ = writeln!(out, "buffers: {} bytes in all", b.buffer_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(lexical(&p("/a/./b/../c")), p("/a/c"));
        assert_eq!(
            relative_to(&p("/w/data/x.bin"), &p("/w/out")),
            p("../data/x.bin")
        );
        assert_eq!(relative_to(&p("/w/x.bin"), &p("/w")), p("x.bin"));
        assert_eq!(
            relative_to(&p("/w/k/d/x.bin"), &p("/w/k/d/e/f")),
            p("../../x.bin")
        );
    }
}
