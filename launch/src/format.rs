//! The launch description as data: the `paver-launch/1` JSON format (schema in
//! `docs/schema/paver-launch-1.schema.json`) and its Rust mirror.
//!
//! A description may name parameters by index or by PTX name and may leave buffer lengths
//! to generators; [`crate::bind`] resolves all that against a kernel's signature.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::elem::ElemType;
use crate::init::Init;
use crate::LaunchError;

/// The value of the `format` key this version reads and writes.
pub const FORMAT: &str = "paver-launch/1";

/// Grid or block dimensions. In JSON an array of one to three positive integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<u64>", into = "[u64; 3]")]
pub struct Dim3 {
    /// Extent along x.
    pub x: u64,
    /// Extent along y.
    pub y: u64,
    /// Extent along z.
    pub z: u64,
}

impl Dim3 {
    /// `x * y * z`.
    pub fn count(&self) -> u64 {
        self.x.saturating_mul(self.y).saturating_mul(self.z)
    }

    /// Parses `16`, `16x16` or `16x16x4`.
    pub fn parse(text: &str) -> Result<Dim3, String> {
        let parts: Result<Vec<u64>, _> = text
            .split(['x', 'X'])
            .map(|p| p.trim().parse::<u64>())
            .collect();
        match parts {
            Ok(v) => Dim3::try_from(v),
            Err(_) => Err(format!(
                "`{}` is not a dimension: expected X, XxY or XxYxZ with positive integers",
                crate::budget::elide(text, 40)
            )),
        }
    }
}

impl TryFrom<Vec<u64>> for Dim3 {
    type Error = String;
    fn try_from(v: Vec<u64>) -> Result<Self, String> {
        if v.is_empty() || v.len() > 3 {
            return Err(format!("expected 1 to 3 dimensions, found {}", v.len()));
        }
        if v.contains(&0) {
            return Err("dimensions must be at least 1".to_string());
        }
        Ok(Dim3 {
            x: v[0],
            y: v.get(1).copied().unwrap_or(1),
            z: v.get(2).copied().unwrap_or(1),
        })
    }
}

impl From<Dim3> for [u64; 3] {
    fn from(d: Dim3) -> [u64; 3] {
        [d.x, d.y, d.z]
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.x, self.y, self.z)
    }
}

/// A launch description: everything needed to run or analyse one kernel launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// Always [`FORMAT`].
    pub format: String,
    /// Entry name in the PTX module; may be omitted when the module has one entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Grid dimensions in thread blocks.
    pub grid: Dim3,
    /// Block dimensions in threads.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    #[serde(default)]
    pub dynamic_shared_bytes: u64,
    /// Parameter values, each naming its parameter by index or name.
    #[serde(default)]
    pub params: Vec<ParamSpec>,
    /// Per-architecture resource use reported by `ptxas` (key: `sm_70`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, Resources>,
}

/// Resource use of the kernel on one architecture, as `ptxas -v` reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, in bytes.
    pub shared_bytes: u64,
}

/// Which parameter a [`ParamSpec`] sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKey {
    /// 0-based position in the PTX parameter list.
    Index(usize),
    /// The parameter's name in the PTX.
    Name(String),
}

impl fmt::Display for ParamKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamKey::Index(i) => write!(f, "{i}"),
            ParamKey::Name(n) => f.write_str(n),
        }
    }
}

/// A scalar parameter value as written (the PTX type decides how it is encoded).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// An integer literal.
    Int(i128),
    /// A literal with a fraction or exponent.
    Float(f64),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v:?}"),
        }
    }
}

/// A buffer bound to a pointer parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferSpec {
    /// Element type.
    pub ty: ElemType,
    /// How many elements it holds; `None` when the initialiser or `len_of` decides.
    pub len: Option<u64>,
    /// "As many elements as the buffer of parameter N" (for CSR value arrays).
    pub len_of: Option<usize>,
    /// Initial contents.
    pub init: Init,
}

/// What a parameter is set to.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamArg {
    /// A scalar.
    Value(Scalar),
    /// A buffer of global memory; the parameter receives its address.
    Buffer(BufferSpec),
    /// The raw bytes of a by-value struct / byte-array parameter (exactly its size).
    Bytes(Vec<u8>),
    /// A by-value struct parameter given field by field (unnamed bytes are zero).
    Struct(Vec<FieldSpec>),
}

/// One field of a by-value struct parameter: a typed scalar or a pointer to a fresh buffer,
/// at a byte offset.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldSpec {
    /// Byte offset in the struct.
    pub offset: u64,
    /// Free text for the reader.
    pub comment: Option<String>,
    /// Its value.
    pub arg: FieldArg,
}

/// A struct field's value.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldArg {
    /// A scalar of the given element type, stored little-endian.
    Value(ElemType, Scalar),
    /// A buffer of global memory; the field (8 bytes) receives its address.
    Buffer(BufferSpec),
}

/// One entry of `params`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawParam", into = "RawParam")]
pub struct ParamSpec {
    /// The parameter.
    pub key: ParamKey,
    /// Free text for the reader.
    pub comment: Option<String>,
    /// Its value.
    pub arg: ParamArg,
}

/// The JSON shape of a parameter entry, validated into [`ParamSpec`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParam {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    buffer: Option<RawBuffer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes: Option<Vec<u8>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fields: Option<Vec<RawField>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawField {
    offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    ty: Option<ElemType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    buffer: Option<RawBuffer>,
}

fn buffer_from_raw(key: &ParamKey, b: RawBuffer) -> Result<BufferSpec, String> {
    let init = Init::parse(&b.init).map_err(|e| e.to_string())?;
    if b.len.is_some() && b.len_of.is_some() {
        return Err(format!("parameter {key}: give `len` or `len_of`, not both"));
    }
    Ok(BufferSpec {
        ty: b.ty,
        len: b.len,
        len_of: b.len_of,
        init,
    })
}

fn buffer_to_raw(b: BufferSpec) -> RawBuffer {
    RawBuffer {
        ty: b.ty,
        len: b.len,
        len_of: b.len_of,
        init: b.init.to_string(),
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuffer {
    #[serde(rename = "type")]
    ty: ElemType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    len_of: Option<usize>,
    init: String,
}

impl TryFrom<RawParam> for ParamSpec {
    type Error = String;
    fn try_from(r: RawParam) -> Result<Self, String> {
        let key = match (r.index, r.name) {
            (Some(i), None) => ParamKey::Index(i),
            (None, Some(n)) => ParamKey::Name(n),
            (Some(_), Some(_)) => {
                return Err("a parameter entry has either `index` or `name`, not both".into())
            }
            (None, None) => return Err("a parameter entry needs `index` or `name`".into()),
        };
        let given = usize::from(r.value.is_some())
            + usize::from(r.buffer.is_some())
            + usize::from(r.bytes.is_some())
            + usize::from(r.fields.is_some());
        if given != 1 {
            return Err(format!(
                "parameter {key}: give exactly one of `value`, `buffer`, `bytes`, `fields`"
            ));
        }
        let arg = if let Some(n) = r.value {
            ParamArg::Value(scalar_from_json(&n)?)
        } else if let Some(b) = r.buffer {
            ParamArg::Buffer(buffer_from_raw(&key, b)?)
        } else if let Some(b) = r.bytes {
            ParamArg::Bytes(b)
        } else {
            let mut fields = Vec::new();
            for f in r.fields.unwrap_or_default() {
                let at = f.offset;
                let arg = match (f.ty, f.value, f.buffer) {
                    (Some(ty), Some(n), None) => FieldArg::Value(ty, scalar_from_json(&n)?),
                    (None, None, Some(b)) => FieldArg::Buffer(buffer_from_raw(&key, b)?),
                    _ => {
                        return Err(format!(
                            "parameter {key}: field at offset {at} needs `type` and `value`, \
                             or `buffer`"
                        ))
                    }
                };
                fields.push(FieldSpec {
                    offset: at,
                    comment: f.comment,
                    arg,
                });
            }
            ParamArg::Struct(fields)
        };
        Ok(ParamSpec {
            key,
            comment: r.comment,
            arg,
        })
    }
}

impl From<ParamSpec> for RawParam {
    fn from(p: ParamSpec) -> RawParam {
        let (index, name) = match p.key {
            ParamKey::Index(i) => (Some(i), None),
            ParamKey::Name(n) => (None, Some(n)),
        };
        let scalar = |v: Scalar| match v {
            Scalar::Int(v) => Some(int_to_json(v)),
            Scalar::Float(v) => serde_json::Number::from_f64(v),
        };
        let (mut value, mut buffer, mut bytes, mut fields) = (None, None, None, None);
        match p.arg {
            ParamArg::Value(v) => value = scalar(v),
            ParamArg::Buffer(b) => buffer = Some(buffer_to_raw(b)),
            ParamArg::Bytes(b) => bytes = Some(b),
            ParamArg::Struct(fs) => {
                fields = Some(
                    fs.into_iter()
                        .map(|f| {
                            let (ty, value, buffer) = match f.arg {
                                FieldArg::Value(t, v) => (Some(t), scalar(v), None),
                                FieldArg::Buffer(b) => (None, None, Some(buffer_to_raw(b))),
                            };
                            RawField {
                                offset: f.offset,
                                comment: f.comment,
                                ty,
                                value,
                                buffer,
                            }
                        })
                        .collect(),
                )
            }
        }
        RawParam {
            index,
            name,
            comment: p.comment,
            value,
            buffer,
            bytes,
            fields,
        }
    }
}

fn int_to_json(v: i128) -> serde_json::Number {
    if let Ok(u) = u64::try_from(v) {
        u.into()
    } else if let Ok(i) = i64::try_from(v) {
        i.into()
    } else {
        // Out of every PTX integer range; binding rejects it before it can be written.
        serde_json::Number::from(0)
    }
}

fn scalar_from_json(n: &serde_json::Number) -> Result<Scalar, String> {
    if let Some(u) = n.as_u64() {
        Ok(Scalar::Int(u as i128))
    } else if let Some(i) = n.as_i64() {
        Ok(Scalar::Int(i as i128))
    } else if let Some(f) = n.as_f64() {
        Ok(Scalar::Float(f))
    } else {
        Err(format!("`{n}` is not a usable number"))
    }
}

impl Launch {
    /// An empty description for a `grid` x `block` launch.
    pub fn new(grid: Dim3, block: Dim3) -> Launch {
        Launch {
            format: FORMAT.to_string(),
            kernel: None,
            grid,
            block,
            dynamic_shared_bytes: 0,
            params: Vec::new(),
            resources: BTreeMap::new(),
        }
    }

    /// Reads a description from JSON text; `path` is only used in error messages.
    pub fn from_json(text: &str, path: &Path) -> Result<Launch, LaunchError> {
        let launch: Launch = serde_json::from_str(text).map_err(|e| LaunchError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            col: e.column(),
            message: e.to_string(),
        })?;
        if launch.format != FORMAT {
            return Err(LaunchError::Format {
                path: path.to_path_buf(),
                found: launch.format,
            });
        }
        Ok(launch)
    }

    /// Reads a description from a file (a regular file or a pipe of at most
    /// [`crate::budget::MAX_LAUNCH_BYTES`]).
    pub fn read(path: &Path) -> Result<Launch, LaunchError> {
        let text = crate::budget::read_input_text(path, crate::budget::MAX_LAUNCH_BYTES).map_err(
            |message| LaunchError::Io {
                path: path.to_path_buf(),
                message,
            },
        )?;
        Launch::from_json(&text, path)
    }

    /// Pretty JSON, ending in a newline.
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{
      "format": "paver-launch/1",
      "kernel": "mm_naive",
      "grid": [4, 4],
      "block": [16, 16, 1],
      "params": [
        {"index": 0, "comment": "A", "buffer": {"type": "f32", "len": 4096, "init": "rand(1)"}},
        {"name": "mm_naive_param_3", "value": 64},
        {"index": 2, "value": -0.5},
        {"index": 5, "buffer": {"type": "i32", "init": "csr_col_idx(8,8,2,1)"}},
        {"index": 6, "buffer": {"type": "f32", "len_of": 5, "init": "ones"}}
      ],
      "resources": {"sm_70": {"registers": 30, "shared_bytes": 0}}
    }"#;

    #[test]
    fn reads_every_field() {
        let l = Launch::from_json(EXAMPLE, Path::new("x.json")).unwrap();
        assert_eq!(l.kernel.as_deref(), Some("mm_naive"));
        assert_eq!(l.grid, Dim3 { x: 4, y: 4, z: 1 });
        assert_eq!(l.params.len(), 5);
        assert_eq!(l.params[1].key, ParamKey::Name("mm_naive_param_3".into()));
        assert_eq!(l.params[1].arg, ParamArg::Value(Scalar::Int(64)));
        assert_eq!(l.params[2].arg, ParamArg::Value(Scalar::Float(-0.5)));
        match &l.params[4].arg {
            ParamArg::Buffer(b) => {
                assert_eq!((b.len, b.len_of, b.ty), (None, Some(5), ElemType::F32))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(l.resources["sm_70"].registers, 30);
    }

    #[test]
    fn json_round_trip() {
        let l = Launch::from_json(EXAMPLE, Path::new("x.json")).unwrap();
        let again = Launch::from_json(&l.to_json(), Path::new("y.json")).unwrap();
        assert_eq!(l, again);
    }

    #[test]
    fn errors_carry_position_and_reason() {
        let cases = [
            (
                r#"{"format": "paver-launch/1", "grid": [0], "block": [1]}"#,
                "at least 1",
            ),
            (
                r#"{"format": "paver-launch/1", "grid": [1,1,1,1], "block": [1]}"#,
                "1 to 3",
            ),
            (
                r#"{"format": "paver-launch/2", "grid": [1], "block": [1]}"#,
                "paver-launch/2",
            ),
            (
                r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "grdi": 1}"#,
                "unknown field",
            ),
            (
                r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"value": 1}]}"#,
                "needs `index` or `name`",
            ),
            (
                r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0, "buffer": {"type": "f33", "len": 1, "init": "zeros"}}]}"#,
                "f33",
            ),
            (
                r#"{"format": "paver-launch/1", "grid": [1], "block": [1], "params": [{"index": 0, "buffer": {"type": "f32", "len": 1, "init": "rnd(1)"}}]}"#,
                "unknown initialiser",
            ),
            ("{\n  \"format\": ", "x.json:2"),
        ];
        for (text, want) in cases {
            let e = Launch::from_json(text, Path::new("x.json"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text}\n  gave: {e}");
        }
    }

    #[test]
    fn dim3_parsing() {
        assert_eq!(Dim3::parse("16x16").unwrap(), Dim3 { x: 16, y: 16, z: 1 });
        assert_eq!(Dim3::parse("7").unwrap(), Dim3 { x: 7, y: 1, z: 1 });
        assert_eq!(Dim3::parse("2x3x4").unwrap().count(), 24);
        assert!(Dim3::parse("16x").is_err());
        assert!(Dim3::parse("0x4").is_err());
        assert!(Dim3::parse("1x2x3x4").is_err());
        assert!(Dim3::parse("-1").is_err());
    }
}
