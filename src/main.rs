//! The `paver` command line: argument parsing and dispatch. Each subcommand lives in
//! `cmd/`; errors from the libraries are rendered once, here.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod error;
mod launch_args;
mod limits;
mod out;
mod progress;

use experiment::names;

/// paver: PTX locality analysis, TB locality graphs, locality-aware TB grouping, GPU simulation.
#[derive(Parser)]
#[command(name = "paver", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarise each kernel of a PTX file: parameters, registers, instruction mix, memory ops.
    #[command(after_help = cmd::parse::EXAMPLES)]
    Parse(cmd::parse::Args),
    /// Show one kernel's control-flow graph: basic blocks, successors, instructions.
    #[command(after_help = cmd::inspect::EXAMPLES)]
    Inspect(cmd::inspect::Args),
    /// Static locality analysis: per-TB footprints, the TB locality graph, sharing statistics.
    #[command(after_help = cmd::analyze::EXAMPLES)]
    Analyze(cmd::analyze::Args),
    /// Group TBs of a locality graph for a locality-aware TB scheduler (schedule JSON).
    #[command(after_help = cmd::partition::EXAMPLES)]
    Partition(cmd::partition::Args),
    /// Run a kernel in the PTX interpreter; write every buffer as NumPy .npy.
    #[command(after_help = cmd::run::EXAMPLES)]
    Run(cmd::run::Args),
    /// Cycle-level simulation of a launch with a TB scheduling policy; statistics as JSON.
    #[command(after_help = cmd::simulate::EXAMPLES)]
    Simulate(cmd::simulate::Args),
    /// Compile a CUDA source to PTX with NVRTC (what every command does with a .cu input).
    #[command(after_help = cmd::compile::EXAMPLES)]
    Compile(cmd::compile::Args),
    /// Bind a launch (file and/or flags) to a kernel: check it and show every parameter's value.
    #[command(after_help = cmd::launch::EXAMPLES)]
    Launch(cmd::launch::Args),
    /// Rewrite a kernel into persistent workers that run a TB schedule on a real GPU.
    #[command(after_help = cmd::rewrite::EXAMPLES)]
    Rewrite(cmd::rewrite::Args),
    /// Run a plan of kernels x GPUs x policies through the simulator; one record per run.
    #[command(after_help = cmd::sweep::EXAMPLES)]
    Sweep(cmd::sweep::Args),
    /// Merge sweep folders and write the PAVER evaluation's tables and figures.
    #[command(after_help = cmd::report::EXAMPLES)]
    Report(cmd::report::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap renders help/version to stdout and usage errors to stderr; an error quotes
            // the argument, which may be megabytes long: its lines are cut.
            if e.use_stderr() {
                let text = e.render().to_string();
                let lines: Vec<String> = text
                    .trim_end()
                    .lines()
                    .map(|l| launch::elide(l, error::MAX_LINE_CHARS))
                    .collect();
                out::eprintln(&lines.join("\n"));
                return ExitCode::from(2);
            }
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let result = match cli.command {
        Command::Parse(args) => cmd::parse::run(args),
        Command::Inspect(args) => cmd::inspect::run(args),
        Command::Compile(args) => cmd::compile::run(args),
        Command::Launch(args) => cmd::launch::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Partition(args) => cmd::partition::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Simulate(args) => cmd::simulate::run(args),
        Command::Sweep(args) => cmd::sweep::run(args),
        Command::Rewrite(args) => cmd::rewrite::run(args),
        Command::Report(args) => cmd::report::run(args),
    };
    match result {
        Ok(()) | Err(error::CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(e) => {
            out::eprintln(&e.render());
            ExitCode::from(e.exit_code())
        }
    }
}
