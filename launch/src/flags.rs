//! The command-line spelling of a launch: `--grid 16x16 --block 16x16 --param 3=1024
//! --param 0=buffer:f32:1048576:rand(1)`. It builds the same [`Launch`] as a JSON file.

use crate::format::{BufferSpec, Dim3, Launch, ParamArg, ParamKey, ParamSpec, Scalar};
use crate::init::Init;
use crate::{ElemType, LaunchError};

/// Parses one `--param KEY=VALUE` argument.
///
/// KEY is a 0-based index or a PTX parameter name. VALUE is a number, or
/// `buffer:TYPE:LEN:INIT` (LEN may be empty when the initialiser implies it).
pub fn parse_param_flag(text: &str) -> Result<ParamSpec, LaunchError> {
    let bad = |why: String| LaunchError::Flag {
        flag: format!("--param {}", crate::budget::elide(text, 80)),
        why,
    };
    let (key, value) = text.split_once('=').ok_or_else(|| {
        bad("expected KEY=VALUE (e.g. 3=1024 or 0=buffer:f32:1024:rand(1))".into())
    })?;
    let key = key.trim();
    if key.is_empty() {
        return Err(bad("empty parameter name".into()));
    }
    let key = match key.parse::<usize>() {
        Ok(i) => ParamKey::Index(i),
        Err(_) => ParamKey::Name(key.to_string()),
    };
    let value = value.trim();
    let arg = if let Some(rest) = value.strip_prefix("buffer:") {
        let mut parts = rest.splitn(3, ':');
        let (ty, len, init) = match (parts.next(), parts.next(), parts.next()) {
            (Some(t), Some(l), Some(i)) => (t, l, i),
            _ => return Err(bad("expected buffer:TYPE:LEN:INIT".into())),
        };
        let ty: ElemType = ty.parse().map_err(|_| {
            bad(format!(
                "unknown element type `{}` (expected one of {})",
                crate::budget::elide(ty, 20),
                ElemType::NAMES
            ))
        })?;
        let len = if len.is_empty() {
            None
        } else {
            Some(len.parse::<u64>().map_err(|_| {
                bad(format!(
                    "`{}` is not an element count",
                    crate::budget::elide(len, 40)
                ))
            })?)
        };
        let init = Init::parse(init).map_err(|e| bad(e.to_string()))?;
        ParamArg::Buffer(BufferSpec {
            ty,
            len,
            len_of: None,
            init,
        })
    } else {
        ParamArg::Value(parse_scalar(value).ok_or_else(|| {
            bad(format!(
                "`{}` is neither a number nor buffer:TYPE:LEN:INIT",
                crate::budget::elide(value, 40)
            ))
        })?)
    };
    Ok(ParamSpec {
        key,
        comment: None,
        arg,
    })
}

/// Parses an integer (decimal, `0x` hex, optional sign) or a float literal.
pub fn parse_scalar(text: &str) -> Option<Scalar> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let int = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u128::from_str_radix(hex, 16).ok()
    } else {
        body.parse::<u128>().ok()
    };
    if let Some(v) = int.and_then(|v| i128::try_from(v).ok()) {
        return Some(Scalar::Int(if neg { -v } else { v }));
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(Scalar::Float(f)),
        _ => None,
    }
}

/// Launch settings given as flags, applied on top of an optional `--launch` file.
#[derive(Clone, Debug, Default)]
pub struct LaunchFlags {
    /// `--grid`.
    pub grid: Option<Dim3>,
    /// `--block`.
    pub block: Option<Dim3>,
    /// `--dynamic-shared`.
    pub dynamic_shared_bytes: Option<u64>,
    /// `--param`, in command-line order.
    pub params: Vec<ParamSpec>,
    /// `--kernel`.
    pub kernel: Option<String>,
}

impl LaunchFlags {
    /// Combines the flags with a base description (from `--launch`, or none). Flags win;
    /// a `--param` for a parameter the file also sets replaces the file's entry when the
    /// two are bound (later entries override earlier ones).
    pub fn apply(self, base: Option<Launch>) -> Result<Launch, LaunchError> {
        let mut launch = match base {
            Some(l) => l,
            None => {
                let grid = self.grid.ok_or(LaunchError::Missing {
                    what: "--grid (or --launch FILE)",
                })?;
                let block = self.block.ok_or(LaunchError::Missing {
                    what: "--block (or --launch FILE)",
                })?;
                Launch::new(grid, block)
            }
        };
        if let Some(g) = self.grid {
            launch.grid = g;
        }
        if let Some(b) = self.block {
            launch.block = b;
        }
        if let Some(d) = self.dynamic_shared_bytes {
            launch.dynamic_shared_bytes = d;
        }
        if self.kernel.is_some() {
            launch.kernel = self.kernel;
        }
        launch.params.extend(self.params);
        Ok(launch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_and_buffer_flags() {
        let p = parse_param_flag("3=1024").unwrap();
        assert_eq!(
            (p.key, p.arg),
            (ParamKey::Index(3), ParamArg::Value(Scalar::Int(1024)))
        );
        let p = parse_param_flag("alpha=-1.5").unwrap();
        assert_eq!(
            (p.key, p.arg),
            (
                ParamKey::Name("alpha".into()),
                ParamArg::Value(Scalar::Float(-1.5))
            )
        );
        let p = parse_param_flag("n=0x10").unwrap();
        assert_eq!(p.arg, ParamArg::Value(Scalar::Int(16)));
        let p = parse_param_flag("0=buffer:f32:1048576:rand(1)").unwrap();
        assert_eq!(
            p.arg,
            ParamArg::Buffer(BufferSpec {
                ty: ElemType::F32,
                len: Some(1 << 20),
                len_of: None,
                init: Init::Rand {
                    seed: 1,
                    range: None
                }
            })
        );
        let p = parse_param_flag("1=buffer:i32::csr_col_idx(4,4,1,2)").unwrap();
        assert!(matches!(
            p.arg,
            ParamArg::Buffer(BufferSpec { len: None, .. })
        ));
        let p = parse_param_flag("2=buffer:u8:8:file(/tmp/a:b.bin)").unwrap();
        assert!(
            matches!(p.arg, ParamArg::Buffer(BufferSpec { init: Init::File(ref f), .. }) if f.to_str() == Some("/tmp/a:b.bin"))
        );
    }

    #[test]
    fn bad_flags_say_what() {
        for (flag, want) in [
            ("1024", "KEY=VALUE"),
            ("=3", "empty parameter name"),
            ("3=abc", "neither a number"),
            ("0=buffer:f32:10", "buffer:TYPE:LEN:INIT"),
            ("0=buffer:float:10:zeros", "unknown element type `float`"),
            ("0=buffer:f32:ten:zeros", "not an element count"),
            ("0=buffer:f32:10:randx", "unknown initialiser"),
        ] {
            let e = parse_param_flag(flag).unwrap_err().to_string();
            assert!(e.contains(want), "{flag}: {e}");
        }
    }

    #[test]
    fn flags_override_file() {
        let base = Launch::new(Dim3 { x: 2, y: 1, z: 1 }, Dim3 { x: 32, y: 1, z: 1 });
        let flags = LaunchFlags {
            grid: Some(Dim3 { x: 8, y: 8, z: 1 }),
            params: vec![parse_param_flag("0=5").unwrap()],
            ..Default::default()
        };
        let l = flags.apply(Some(base)).unwrap();
        assert_eq!(l.grid.count(), 64);
        assert_eq!(l.block.x, 32);
        assert_eq!(l.params.len(), 1);
        let e = LaunchFlags::default().apply(None).unwrap_err().to_string();
        assert!(e.contains("--grid"), "{e}");
    }
}
