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
    /// A CUDA source cannot be compiled: NVRTC is missing, or the source has errors (its
    /// log names `file(line)` for each).
    #[error("{}: {error}", path.display())]
    Nvrtc {
        /// The `.cu` file.
        path: PathBuf,
        /// What NVRTC said, or why it cannot be loaded.
        error: native::nvrtc::NvrtcError,
    },
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

/// Writes `text` to `path` atomically: to a temporary file in the same folder, then renamed,
/// so an interrupted or failed run never leaves a half-written output behind. Something that
/// exists and is not a regular file (`/dev/null`, a pipe, a terminal) is written in place:
/// renaming over it would replace the device with a file.
pub fn write_atomic(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    write_atomic_with(path, |w| w.write_all(text.as_bytes()))
}

/// Like [`write_atomic`], with the contents produced by `fill` through a buffered writer.
pub fn write_atomic_with(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), CliError> {
    write_pending(path, 1 << 20, fill)?.commit()
}

/// An output written in full to a temporary file beside it, not yet in place: [`commit`]
/// renames it over the path asked for, dropping it deletes it. Several outputs of one run
/// are written (possibly in parallel) and then committed together only when all of them
/// succeeded, so a failure leaves every earlier version in place.
///
/// [`commit`]: PendingFile::commit
#[must_use = "a pending file is deleted unless committed"]
#[derive(Debug)]
pub struct PendingFile {
    /// The temporary file (`None`: written in place, see [`write_atomic`]).
    tmp: Option<PathBuf>,
    path: PathBuf,
}

impl PendingFile {
    /// Puts the file in place.
    pub fn commit(mut self) -> Result<(), CliError> {
        let Some(tmp) = self.tmp.take() else {
            return Ok(());
        };
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            CliError::io(&self.path, e)
        })
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if let Some(tmp) = &self.tmp {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `path`'s new contents, produced by `fill` through a writer buffering `capacity`
/// bytes (writes at least that long go straight to the file), to a temporary file in the
/// same folder; [`PendingFile::commit`] puts it in place. Something that exists and is not
/// a regular file is written in place at once (see [`write_atomic`]).
pub fn write_pending(
    path: &std::path::Path,
    capacity: usize,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<PendingFile, CliError> {
    use std::io::Write;
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    if special {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| CliError::io(path, e))?;
        let mut w = std::io::BufWriter::with_capacity(capacity, file);
        fill(&mut w)
            .and_then(|()| w.flush())
            .map_err(|e| CliError::io(path, e))?;
        return Ok(PendingFile {
            tmp: None,
            path: path.to_path_buf(),
        });
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.paver-tmp-{}", std::process::id()));
    let pending = PendingFile {
        tmp: Some(tmp.clone()),
        path: path.to_path_buf(),
    };
    std::fs::File::create(&tmp)
        .and_then(|file| {
            let mut w = std::io::BufWriter::with_capacity(capacity, file);
            fill(&mut w)?;
            w.flush()
        })
        // The user named `path`; the temporary name would only confuse. Dropping `pending`
        // removes the temporary file.
        .map_err(|e| CliError::io(path, e))?;
    Ok(pending)
}
