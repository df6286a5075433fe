//! The one way commands write to standard output.
//!
//! `print!` panics when the write fails; paver's output often goes to a pipe that closes
//! early (`paver parse k.ptx | head`) or to a file on a full disk. [`print`] reports a
//! failed write as an error instead: a closed pipe as [`CliError::BrokenPipe`], which
//! `main` ends quietly with status 0 like other Unix filters whose reader stopped reading;
//! anything else (`/dev/full`: no space left) as an I/O error on "standard output", status 1.

use std::io::Write;

use crate::error::CliError;

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes `text` and a newline to standard output and flushes it.
pub fn println(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// The error for a failed write to standard output.
pub fn stdout_error(e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CliError::BrokenPipe
    } else {
        CliError::io("standard output", e)
    }
}

/// Writes a line to standard error, ignoring failures (there is nowhere left to report them;
/// `eprintln!` would panic).
pub fn eprintln(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.write_all(b"\n");
}
