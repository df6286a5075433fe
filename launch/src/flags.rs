//! The command-line spelling of a launch: `--grid 16x16 --block 16x16 --param 3=1024
//! --param 0=buffer:f32:1048576:rand(1)`. It builds the same [`Launch`] as a JSON file.

use crate::format::{
    BufferSpec, Dim3, FieldArg, FieldSpec, Launch, ParamArg, ParamKey, ParamSpec, Scalar,
};
use crate::init::Init;
use crate::{ElemType, LaunchError};

/// Parses one `--param KEY=VALUE` argument.
///
/// KEY is a 0-based index or a PTX parameter name. VALUE is a number, `true` / `false`,
/// `buffer:TYPE:LEN:INIT` (LEN may be empty when the initialiser implies it), or for a
/// by-value struct `struct:OFFSET=FIELD;...` (FIELD: `TYPE:VALUE` or a buffer) or
/// `bytes:B,B,...`: the same as a launch file's `fields` and `bytes`.
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
    let arg = if let Some(rest) = value.strip_prefix("struct:") {
        ParamArg::Struct(parse_fields(rest).map_err(bad)?)
    } else if let Some(rest) = value.strip_prefix("bytes:") {
        let bytes = rest
            .split(',')
            .map(|b| b.trim().parse::<u8>())
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| bad("expected bytes:B,B,... with each B in 0..=255".into()))?;
        ParamArg::Bytes(bytes)
    } else if value.starts_with("buffer:") {
        ParamArg::Buffer(parse_buffer(value).map_err(bad)?)
    } else {
        ParamArg::Value(parse_scalar(value).ok_or_else(|| {
            bad(format!(
                "`{}` is neither a number, true/false, buffer:TYPE:LEN:INIT, struct:OFFSET=FIELD;... \
                 nor bytes:B,B,...",
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

/// The fields of `struct:OFFSET=FIELD;OFFSET=FIELD;...`: a FIELD is `TYPE:VALUE` (a scalar
/// of an element type, `i32:48`) or `buffer:TYPE:LEN:INIT` (its address).
fn parse_fields(text: &str) -> Result<Vec<FieldSpec>, String> {
    let mut fields = Vec::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (off, field) = part.split_once('=').ok_or_else(|| {
            format!(
                "struct field `{}`: expected OFFSET=TYPE:VALUE or OFFSET=buffer:TYPE:LEN:INIT",
                crate::budget::elide(part, 40)
            )
        })?;
        let offset = off.trim().parse::<u64>().map_err(|_| {
            format!(
                "struct field `{}`: `{}` is not a byte offset",
                crate::budget::elide(part, 40),
                crate::budget::elide(off, 20)
            )
        })?;
        let arg = if field.starts_with("buffer:") {
            FieldArg::Buffer(parse_buffer(field)?)
        } else {
            let (ty, v) = field.split_once(':').ok_or_else(|| {
                format!("struct field at offset {offset}: expected TYPE:VALUE (e.g. i32:48)")
            })?;
            let ty: ElemType = ty.trim().parse().map_err(|_| {
                format!(
                    "struct field at offset {offset}: unknown element type `{}` (expected one of {})",
                    crate::budget::elide(ty, 20),
                    ElemType::NAMES
                )
            })?;
            let v = parse_scalar(v.trim()).ok_or_else(|| {
                format!(
                    "struct field at offset {offset}: `{}` is not a number",
                    crate::budget::elide(v, 40)
                )
            })?;
            FieldArg::Value(ty, v)
        };
        fields.push(FieldSpec {
            offset,
            comment: None,
            arg,
        });
    }
    if fields.is_empty() {
        return Err("struct: needs at least one field (struct:OFFSET=TYPE:VALUE;...)".into());
    }
    Ok(fields)
}

/// `buffer:TYPE:LEN:INIT` (LEN may be empty when the initialiser implies it).
fn parse_buffer(value: &str) -> Result<BufferSpec, String> {
    let rest = value.strip_prefix("buffer:").unwrap_or(value);
    let mut parts = rest.splitn(3, ':');
    let (ty, len, init) = match (parts.next(), parts.next(), parts.next()) {
        (Some(t), Some(l), Some(i)) => (t, l, i),
        _ => return Err("expected buffer:TYPE:LEN:INIT".into()),
    };
    let ty: ElemType = ty.parse().map_err(|_| {
        format!(
            "unknown element type `{}` (expected one of {})",
            crate::budget::elide(ty, 20),
            ElemType::NAMES
        )
    })?;
    let len = if len.is_empty() {
        None
    } else {
        Some(len.parse::<u64>().map_err(|_| {
            format!(
                "`{}` is not an element count",
                crate::budget::elide(len, 40)
            )
        })?)
    };
    let init = Init::parse(init).map_err(|e| e.to_string())?;
    Ok(BufferSpec {
        ty,
        len,
        len_of: None,
        init,
    })
}

/// Parses an integer (decimal, `0x` hex, optional sign), a float literal, or `true` /
/// `false` (1 / 0: a C++ `bool` parameter is a `.u8` or `.b8` in PTX).
pub fn parse_scalar(text: &str) -> Option<Scalar> {
    match text {
        "true" => return Some(Scalar::Int(1)),
        "false" => return Some(Scalar::Int(0)),
        _ => {}
    }
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
    fn bools_structs_and_bytes() {
        assert_eq!(
            parse_param_flag("5=true").unwrap().arg,
            ParamArg::Value(Scalar::Int(1))
        );
        assert_eq!(
            parse_param_flag("5=false").unwrap().arg,
            ParamArg::Value(Scalar::Int(0))
        );
        let p =
            parse_param_flag("0=struct:0=buffer:f32:16:rand(1,0,2);16=i32:48; 20=f32:0.5").unwrap();
        let ParamArg::Struct(f) = p.arg else {
            panic!("{:?}", p.arg)
        };
        assert_eq!(f.len(), 3);
        assert!(matches!(&f[0].arg, FieldArg::Buffer(b) if b.len == Some(16)));
        assert_eq!(
            (f[1].offset, &f[1].arg),
            (16, &FieldArg::Value(ElemType::I32, Scalar::Int(48)))
        );
        assert_eq!(
            (f[2].offset, &f[2].arg),
            (20, &FieldArg::Value(ElemType::F32, Scalar::Float(0.5)))
        );
        assert_eq!(
            parse_param_flag("0=bytes:1,2,255").unwrap().arg,
            ParamArg::Bytes(vec![1, 2, 255])
        );
    }

    #[test]
    fn bad_flags_say_what() {
        for (flag, want) in [
            ("1024", "KEY=VALUE"),
            ("=3", "empty parameter name"),
            ("3=abc", "neither a number"),
            ("0=struct:", "at least one field"),
            ("0=struct:8", "OFFSET=TYPE:VALUE"),
            ("0=struct:x=i32:1", "not a byte offset"),
            ("0=struct:0=int:1", "unknown element type `int`"),
            ("0=struct:0=i32:abc", "not a number"),
            ("0=bytes:1,300", "0..=255"),
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
