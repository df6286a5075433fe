//! Writing output files atomically: each is written in full to a temporary file beside
//! it and renamed into place, so an interrupted or failed run never leaves a half-written
//! output behind. Used by every command of the CLI and by the sweep's records and reports.

use std::path::PathBuf;

/// A file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct WriteError {
    /// The file asked for (not the temporary one).
    pub path: PathBuf,
    /// What the OS said.
    pub source: std::io::Error,
}

impl WriteError {
    fn new(path: impl Into<PathBuf>, source: std::io::Error) -> WriteError {
        WriteError {
            path: path.into(),
            source,
        }
    }
}

/// Writes `text` to `path` atomically: to a temporary file in the same folder, then renamed,
/// so an interrupted or failed run never leaves a half-written output behind. Something that
/// exists and is not a regular file (`/dev/null`, a pipe, a terminal) is written in place:
/// renaming over it would replace the device with a file.
pub fn write_atomic(path: &std::path::Path, text: &str) -> Result<(), WriteError> {
    write_atomic_with(path, |w| w.write_all(text.as_bytes()))
}

/// Like [`write_atomic`], with the contents produced by `fill` through a buffered writer.
pub fn write_atomic_with(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), WriteError> {
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
    pub fn commit(mut self) -> Result<(), WriteError> {
        let Some(tmp) = self.tmp.take() else {
            return Ok(());
        };
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            WriteError::new(&self.path, e)
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
) -> Result<PendingFile, WriteError> {
    use std::io::Write;
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    if special {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| WriteError::new(path, e))?;
        let mut w = std::io::BufWriter::with_capacity(capacity, file);
        fill(&mut w)
            .and_then(|()| w.flush())
            .map_err(|e| WriteError::new(path, e))?;
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
        .map_err(|e| WriteError::new(path, e))?;
    Ok(pending)
}
