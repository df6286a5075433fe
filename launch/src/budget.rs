//! How much memory paver may use, and reading input files with a size cap.
//!
//! Every command that allocates in proportion to its input (buffers of a launch, shared and
//! local memory per TB, a locality graph, a simulated GPU) checks the size it is about to
//! allocate against one [`MemoryBudget`] first, so a bad input ends in an error naming the
//! size and the limit instead of an allocation abort or a machine that swaps. The budget is
//! half the machine's memory (the smaller of physical memory and a cgroup limit), or what
//! the environment variable [`ENV`] says (`PAVER_MEMORY_LIMIT=8G`, `512M`, `75%`, bytes).
//!
//! [`read_input`] reads a file a person named (a launch, a GPU configuration, PTX, an
//! analysis document) with a cap, and refuses what is not a regular file or a pipe
//! (`/dev/zero` would otherwise be read until memory runs out).

use std::fmt;
use std::io::Read;
use std::path::Path;

use crate::LaunchError;

/// The environment variable that sets the budget.
pub const ENV: &str = "PAVER_MEMORY_LIMIT";

/// Budget when the machine's memory cannot be found out (8 GiB).
const FALLBACK_BYTES: u64 = 8 << 30;

/// The memory budget of one paver process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Most bytes a command may allocate for one input-dependent structure.
    pub bytes: u64,
    /// Where the number comes from, for messages.
    pub source: BudgetSource,
}

/// Where a [`MemoryBudget`] comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BudgetSource {
    /// `PAVER_MEMORY_LIMIT`.
    Env,
    /// Half of the machine's memory (`total` bytes).
    Machine {
        /// Physical memory (or the cgroup limit, when smaller).
        total: u64,
    },
    /// The machine's memory is unknown: a fixed 8 GiB.
    Fallback,
}

impl fmt::Display for BudgetSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetSource::Env => write!(f, "from {ENV}"),
            BudgetSource::Machine { total } => {
                write!(f, "half of this machine's {}", human_bytes(*total))
            }
            BudgetSource::Fallback => write!(f, "the default; this machine's memory is unknown"),
        }
    }
}

impl MemoryBudget {
    /// The budget of this process: [`ENV`] if set, else half the machine's memory.
    pub fn detect() -> Result<MemoryBudget, LaunchError> {
        let machine = machine_memory();
        match std::env::var(ENV) {
            Ok(text) => {
                let bytes = parse_size(&text, machine).map_err(|why| LaunchError::Budget {
                    message: format!("{ENV}={}: {why}", elide(&text, 40)),
                })?;
                Ok(MemoryBudget {
                    bytes,
                    source: BudgetSource::Env,
                })
            }
            Err(_) => Ok(match machine {
                Some(total) => MemoryBudget {
                    bytes: total / 2,
                    source: BudgetSource::Machine { total },
                },
                None => MemoryBudget {
                    bytes: FALLBACK_BYTES,
                    source: BudgetSource::Fallback,
                },
            }),
        }
    }

    /// Ok when `bytes` fit in the budget; otherwise an error saying that `what` needs
    /// `bytes`, with the limit and where it comes from.
    pub fn check(&self, what: &str, bytes: u64) -> Result<(), LaunchError> {
        if bytes <= self.bytes {
            return Ok(());
        }
        Err(LaunchError::Budget {
            message: format!(
                "{what} needs {}, more than the memory budget of {} ({}; set {ENV} to change it)",
                human_bytes(bytes),
                human_bytes(self.bytes),
                self.source
            ),
        })
    }
}

/// Physical memory, or the cgroup v2 limit when one is set and smaller; `None` off Linux.
pub fn machine_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let total = meminfo.lines().find_map(|l| {
        let kb = l.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?;
        kb.trim().parse::<u64>().ok()?.checked_mul(1024)
    })?;
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    Some(cgroup.map_or(total, |c| c.min(total)))
}

/// Parses a size: bytes (`1048576`), with a binary suffix (`64K`, `512M`, `8G`, `1T`, with
/// or without a trailing `B`/`iB`), or a percentage of `machine` (`75%`).
pub fn parse_size(text: &str, machine: Option<u64>) -> Result<u64, String> {
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        let p: f64 = p
            .trim()
            .parse()
            .map_err(|_| "expected a percentage such as 75%".to_string())?;
        if !(p > 0.0 && p <= 100.0) {
            return Err("a percentage must be in (0, 100]".into());
        }
        let total = machine.ok_or("this machine's memory is unknown; give bytes")?;
        return Ok((total as f64 * p / 100.0) as u64);
    }
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (digits, shift) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 10),
        Some('M') => (&body[..body.len() - 1], 20),
        Some('G') => (&body[..body.len() - 1], 30),
        Some('T') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| "expected bytes, a size such as 512M or 8G, or a percentage".to_string())?;
    if n == 0 {
        return Err("the budget must be positive".into());
    }
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| "larger than 2^64 bytes".to_string())
}

/// `1.5 GiB`-style text for a byte count (exact bytes below 1 KiB).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Largest launch description read (64 MiB: a launch lists parameters, not data).
pub const MAX_LAUNCH_BYTES: u64 = 64 << 20;

/// Reads the file a person named, refusing what is not a regular file or a pipe and
/// anything longer than `max_bytes`. Errors are plain text for the caller to put after the
/// path.
pub fn read_input(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    let ft = meta.file_type();
    if meta.is_dir() {
        return Err("is a folder, not a file".into());
    }
    #[cfg(unix)]
    let is_pipe = std::os::unix::fs::FileTypeExt::is_fifo(&ft);
    #[cfg(not(unix))]
    let is_pipe = false;
    if !ft.is_file() && !is_pipe {
        return Err("is not a regular file or a pipe (a device?); paver reads files".into());
    }
    if ft.is_file() && meta.len() > max_bytes {
        return Err(format!(
            "is {}, larger than the {} this input may have",
            human_bytes(meta.len()),
            human_bytes(max_bytes)
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut data = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| e.to_string())?;
    if data.len() as u64 > max_bytes {
        return Err(format!(
            "is larger than the {} this input may have",
            human_bytes(max_bytes)
        ));
    }
    Ok(data)
}

/// [`read_input`] for text: the bytes must be UTF-8.
pub fn read_input_text(path: &Path, max_bytes: u64) -> Result<String, String> {
    String::from_utf8(read_input(path, max_bytes)?).map_err(|e| {
        format!(
            "is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// `text` itself when at most `max` characters long, else its first `max` characters and a
/// note of how much was left out: messages quote what a person wrote, never megabytes of it.
pub fn elide(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1048576", None), Ok(1 << 20));
        assert_eq!(parse_size("64K", None), Ok(64 << 10));
        assert_eq!(parse_size("512M", None), Ok(512 << 20));
        assert_eq!(parse_size("8G", None), Ok(8 << 30));
        assert_eq!(parse_size("8GiB", None), Ok(8 << 30));
        assert_eq!(parse_size("2gb", None), Ok(2 << 30));
        assert_eq!(parse_size("1T", None), Ok(1 << 40));
        assert_eq!(parse_size("50%", Some(1000)), Ok(500));
        assert!(parse_size("50%", None).is_err());
        assert!(parse_size("0", None).is_err());
        assert!(parse_size("lots", None).is_err());
        assert!(parse_size("150%", Some(1000)).is_err());
        assert!(parse_size("99999999999T", None).is_err());
    }

    #[test]
    fn check_names_the_limit_not_what_is_left() {
        let b = MemoryBudget {
            bytes: 1 << 30,
            source: BudgetSource::Env,
        };
        assert!(b.check("x", 1 << 30).is_ok());
        let e = b.check("buffer A", 3 << 30).unwrap_err().to_string();
        assert!(e.contains("buffer A needs 3.0 GiB"), "{e}");
        assert!(e.contains("budget of 1.0 GiB"), "{e}");
        assert!(e.contains(ENV), "{e}");
    }

    #[test]
    fn human_bytes_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(1 << 40), "1.0 TiB");
    }

    #[test]
    fn elide_keeps_short_text_and_cuts_long_text() {
        assert_eq!(elide("abc", 3), "abc");
        assert_eq!(elide("abcdef", 3), "abc… (3 more bytes)");
        // Cuts at a character boundary.
        assert_eq!(elide("ééé", 1), "é… (4 more bytes)");
    }

    #[test]
    fn read_input_refuses_devices_and_oversized_files() {
        #[cfg(unix)]
        {
            let e = read_input(Path::new("/dev/zero"), 1 << 20).unwrap_err();
            assert!(e.contains("not a regular file"), "{e}");
        }
        let dir = std::env::temp_dir().join(format!("paver-budget-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        std::fs::write(&f, [b'x'; 100]).unwrap();
        assert_eq!(read_input(&f, 100).unwrap().len(), 100);
        let e = read_input(&f, 99).unwrap_err();
        assert!(e.contains("larger than the 99 B"), "{e}");
        let e = read_input(&dir, 99).unwrap_err();
        assert!(e.contains("folder"), "{e}");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_input_text(&f, 100).unwrap_err().contains("UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
