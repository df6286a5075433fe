//! Located parse errors.
//!
//! Every stage reports byte offsets; [`ParseErrors`] turns them into line/column and keeps
//! the source line. `Display` is one line per error, `kernel.ptx:12:5: error: expected ';'
//! after instruction`; the source line with a caret under the column is the CLI's
//! rendering (paver's `src/error.rs`), from [`ParseError::line_text`] and
//! [`ParseError::col`].

use std::fmt;
use std::path::PathBuf;

/// One error with its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Source file, when parsed with [`crate::parse_file`].
    pub file: Option<PathBuf>,
    /// 1-based line (0 for errors not tied to a line, such as I/O errors).
    pub line: u32,
    /// 1-based byte column.
    pub col: u32,
    /// What went wrong.
    pub message: String,
    /// The source line, for display.
    pub line_text: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.file {
            write!(f, "{}:", p.display())?;
        } else {
            write!(f, "<input>:")?;
        }
        if self.line == 0 {
            return write!(f, " error: {}", self.message);
        }
        write!(f, "{}:{}: error: {}", self.line, self.col, self.message)
    }
}

/// A non-empty list of errors (at most [`ParseErrors::MAX`]), sorted by position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ParseErrors {
    /// The errors.
    pub errors: Vec<ParseError>,
    /// How many further errors were dropped after the cap.
    pub truncated: usize,
}

impl ParseErrors {
    /// The most errors kept.
    pub const MAX: usize = 20;

    /// The first error.
    pub fn first(&self) -> Option<&ParseError> {
        self.errors.first()
    }
}

impl fmt::Display for ParseErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        if self.truncated > 0 {
            write!(f, "\n... and {} more errors", self.truncated)?;
        }
        Ok(())
    }
}

/// Builds [`ParseErrors`] from `(offset, line, message)` triples.
pub(crate) fn collect(
    src: &str,
    file: Option<PathBuf>,
    line_starts: &[u32],
    mut raw: Vec<(u32, u32, String)>,
) -> ParseErrors {
    raw.sort_by_key(|e| e.0);
    let total = raw.len();
    let errors: Vec<ParseError> = raw
        .into_iter()
        .take(ParseErrors::MAX)
        .map(|(offset, line, message)| {
            let start = line_starts
                .get((line as usize).saturating_sub(1))
                .copied()
                .unwrap_or(0) as usize;
            let rest = src.get(start..).unwrap_or("");
            let text = rest.split('\n').next().unwrap_or("").trim_end_matches('\r');
            ParseError {
                file: file.clone(),
                line,
                col: offset.saturating_sub(start as u32) + 1,
                message,
                line_text: text.to_string(),
            }
        })
        .collect();
    ParseErrors {
        truncated: total - errors.len(),
        errors,
    }
}
