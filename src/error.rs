//! The CLI's error type: every library error, rendered once for a person.

use std::path::PathBuf;

/// What can stop a command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The PTX does not parse (each error already carries file:line:col and the line).
    #[error("{0}")]
    Ptx(#[from] ptx_parser::ParseErrors),
    /// The analysis cannot run for this kernel and launch.
    #[error("{0}")]
    Analysis(#[from] analysis::AnalysisError),
    /// An experiment (a launch on a GPU: groups, hints, placement, simulation) cannot run.
    #[error("{0}")]
    Experiment(experiment::Error),
    /// The interpreter stopped (fault, budget, unsupported instruction), with its location.
    #[error("{0}")]
    Sim(#[from] sim::SimError),
    /// The graph cannot be read or partitioned.
    #[error("{}: {message}", path.display())]
    Partition {
        /// The input (or output) file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A GPU configuration file does not read or validate.
    #[error("{0}")]
    Gpu(String),
    /// A launch description or flag is wrong.
    #[error("{0}")]
    Launch(#[from] launch::LaunchError),
    /// Reading or writing a file failed.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        message: String,
    },
    /// A kernel cannot be loaded: a CUDA source NVRTC cannot compile (NVRTC missing, or
    /// the source's errors, its log naming `file(line)` for each).
    #[error("{0}")]
    Load(experiment::load::LoadError),
    /// A kernel cannot be rewritten into persistent workers (`paver rewrite`).
    #[error("{}: {error}", path.display())]
    Rewrite {
        /// The PTX or CUDA file.
        path: PathBuf,
        /// What stops the rewrite, with the PTX line.
        error: rewrite::RewriteError,
    },
    /// The arguments make no sense together (exit status 2, like clap's usage errors).
    #[error("{0}")]
    Usage(String),
    /// Standard output is a pipe whose reader has gone (`paver parse k.ptx | head`): the
    /// command stops quietly with status 0.
    #[error("standard output closed")]
    BrokenPipe,
    /// Something would need more memory than the budget (`PAVER_MEMORY_LIMIT`), or an input
    /// is larger than the machine can hold.
    #[error("{0}")]
    TooLarge(String),
}

impl From<experiment::load::LoadError> for CliError {
    fn from(e: experiment::load::LoadError) -> CliError {
        use experiment::load::LoadError;
        match e {
            LoadError::Ptx(e) => CliError::Ptx(e),
            LoadError::Io { path, message } => CliError::Io { path, message },
            e @ LoadError::Nvrtc { .. } => CliError::Load(e),
            LoadError::Launch(e) => CliError::Launch(e),
            LoadError::Sim(e) => CliError::Sim(e),
            // A wrong `--kernel`: the command line's mistake (status 2).
            e => CliError::Usage(e.to_string()),
        }
    }
}

impl From<experiment::output::WriteError> for CliError {
    fn from(e: experiment::output::WriteError) -> CliError {
        CliError::io(e.path, e.source)
    }
}

impl From<sweep::Error> for CliError {
    fn from(e: sweep::Error) -> CliError {
        match e {
            sweep::Error::Write(e) => e.into(),
            sweep::Error::Folder { path, source } => CliError::io(path, source),
            sweep::Error::Manifest { path, message } => CliError::Io { path, message },
            // The plan, a records file, a report input, the workers, a figure: status 2.
            e => CliError::Usage(e.to_string()),
        }
    }
}

impl From<experiment::Error> for CliError {
    fn from(e: experiment::Error) -> CliError {
        match e {
            experiment::Error::Sim(e) => CliError::Sim(e),
            experiment::Error::Launch(e) => CliError::Launch(e),
            experiment::Error::TooLarge(m) => CliError::TooLarge(m),
            e => CliError::Experiment(e),
        }
    }
}

/// Longest line of an error message, in characters: a message quotes what a person wrote,
/// and a 10 MB token must not come back twice on the terminal.
pub const MAX_LINE_CHARS: usize = 400;

impl CliError {
    /// The message printed on stderr: `paver: error: ...` (PTX errors come with their
    /// source lines and carets).
    pub fn render(&self) -> String {
        let text = match self {
            CliError::Ptx(e) => render_ptx(e),
            _ => format!("paver: error: {self}"),
        };
        text.lines()
            .map(|l| launch::elide(l, MAX_LINE_CHARS))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Exit status: 2 for usage errors, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Experiment(e) if e.is_invalid_setting() => 2,
            _ => 1,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, e: std::io::Error) -> CliError {
        CliError::Io {
            path: path.into(),
            message: e.to_string(),
        }
    }
}

/// PTX errors like a compiler's diagnostics: each error's `file:line:col: error: message`,
/// its source line, and a caret under the column.
///
/// ```text
/// kernel.ptx:12:5: error: expected ';' after instruction
///     mov.u32 %r1, %r2
///                     ^
/// ```
fn render_ptx(errors: &ptx_parser::ParseErrors) -> String {
    let mut out = String::new();
    for (i, e) in errors.errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&e.to_string());
        if e.line == 0 {
            continue;
        }
        out.push('\n');
        out.push_str(&e.line_text);
        out.push('\n');
        // Keep tabs so the caret lines up under tab-indented PTX.
        out.extend(
            e.line_text
                .chars()
                .take((e.col as usize).saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' }),
        );
        out.push('^');
    }
    if errors.truncated > 0 {
        out.push_str(&format!("\n... and {} more errors", errors.truncated));
    }
    out
}

pub use experiment::output::{write_atomic, write_atomic_with, write_pending, PendingFile};
