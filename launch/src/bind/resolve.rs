//! Binding a [`Launch`] to a kernel's parameter list ([`Launch::bind`],
//! [`Launch::bind_open`]): names resolved to indices, values checked and encoded for their
//! PTX type, buffer lengths settled, pointers given their bases, launch limits checked.

use std::path::Path;

use super::*;
use crate::format::{BufferSpec, FieldArg, ParamArg, ParamKey, Scalar};

impl Launch {
    /// Resolves this description against `kernel`'s parameters. `base_dir` is where relative
    /// `file(…)` paths are read from. Every by-value parameter needs a value (a 64-bit
    /// integer without one is a pointer and gets a synthetic address): this is the binding
    /// of everything that runs the kernel.
    pub fn bind(
        &self,
        kernel: &str,
        sig: &[ParamSig],
        base_dir: &Path,
    ) -> Result<BoundLaunch, LaunchError> {
        self.bind_with(kernel, sig, base_dir, false)
    }

    /// [`Launch::bind`], except that a by-value parameter without a value (a scalar other
    /// than a 64-bit integer, or a struct) is bound to [`BoundValue::Open`] instead of
    /// being an error: the binding of `paver analyze`'s static analysis, which needs
    /// values only where addresses, guards or loop bounds depend on them (issue 37).
    pub fn bind_open(
        &self,
        kernel: &str,
        sig: &[ParamSig],
        base_dir: &Path,
    ) -> Result<BoundLaunch, LaunchError> {
        self.bind_with(kernel, sig, base_dir, true)
    }

    fn bind_with(
        &self,
        kernel: &str,
        sig: &[ParamSig],
        base_dir: &Path,
        open: bool,
    ) -> Result<BoundLaunch, LaunchError> {
        check_dims(self.grid, self.block)?;
        // Later entries override earlier ones (flags come after the file's entries).
        let mut chosen: Vec<Option<&ParamArg>> = vec![None; sig.len()];
        for spec in &self.params {
            let idx = match &spec.key {
                ParamKey::Index(i) if *i < sig.len() => *i,
                ParamKey::Index(i) => {
                    return Err(LaunchError::Param {
                        param: i.to_string(),
                        why: format!(
                            "kernel `{kernel}` has {} parameters (0..{})",
                            sig.len(),
                            sig.len()
                        ),
                    })
                }
                ParamKey::Name(n) => {
                    sig.iter()
                        .position(|p| &p.name == n)
                        .ok_or_else(|| LaunchError::Param {
                            param: n.clone(),
                            why: format!(
                                "kernel `{kernel}` has no parameter of that name (it has: {})",
                                sig.iter()
                                    .map(|p| p.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        })?
                }
            };
            chosen[idx] = Some(&spec.arg);
        }
        let mut params = Vec::with_capacity(sig.len());
        let mut field_buffers = 0usize;
        for (idx, (p, arg)) in sig.iter().zip(&chosen).enumerate() {
            let at = |why: String| LaunchError::Param {
                param: format!("{idx} (`{}`)", p.name),
                why,
            };
            let value = match (arg, p.ty) {
                (Some(ParamArg::Value(v)), ty) => BoundValue::Scalar {
                    bits: encode_scalar(*v, ty).map_err(at)?,
                },
                (Some(ParamArg::Buffer(b)), SigType::Int { bits: 64, .. }) => {
                    let len = buffer_len(b, &chosen).map_err(at)?;
                    let bytes = len
                        .checked_mul(b.ty.size() as u64)
                        .filter(|&n| n < 1 << BUFFER_SPACING_LOG2);
                    if bytes.is_none() {
                        return Err(at(format!(
                            "a buffer of {len} {} elements is larger than 64 GiB",
                            b.ty
                        )));
                    }
                    b.init
                        .check(b.ty, len, base_dir)
                        .map_err(|e| at(e.to_string()))?;
                    BoundValue::Buffer {
                        base: buffer_base(idx),
                        elem: b.ty,
                        len,
                        init: b.init.to_string(),
                    }
                }
                (Some(ParamArg::Bytes(b)), SigType::Bytes { bytes }) => {
                    if b.len() as u64 != bytes {
                        return Err(at(format!(
                            "`bytes` holds {} bytes but the parameter has {bytes}",
                            b.len()
                        )));
                    }
                    BoundValue::Bytes {
                        bytes: b.clone(),
                        buffers: Vec::new(),
                    }
                }
                (Some(ParamArg::Struct(fields)), SigType::Bytes { bytes }) => {
                    let mut image = vec![0u8; bytes as usize];
                    let mut buffers = Vec::new();
                    let mut put = |off: u64, n: usize, v: u64| -> Result<(), LaunchError> {
                        let end = off.checked_add(n as u64).filter(|&e| e <= bytes);
                        let Some(end) = end else {
                            return Err(at(format!(
                                "field at offset {off} ({n} bytes) does not fit in {bytes} bytes"
                            )));
                        };
                        image[off as usize..end as usize].copy_from_slice(&v.to_le_bytes()[..n]);
                        Ok(())
                    };
                    for fs in fields {
                        match &fs.arg {
                            FieldArg::Value(ty, v) => {
                                let sig = elem_sig(*ty);
                                let bits = encode_scalar(*v, sig).map_err(|e| {
                                    at(format!("field at offset {}: {e}", fs.offset))
                                })?;
                                put(fs.offset, ty.size(), bits)?;
                            }
                            FieldArg::Buffer(b) => {
                                let len = buffer_len(b, &chosen).map_err(&at)?;
                                if len
                                    .checked_mul(b.ty.size() as u64)
                                    .filter(|&n| n < 1 << BUFFER_SPACING_LOG2)
                                    .is_none()
                                {
                                    return Err(at(format!(
                                        "field at offset {}: a buffer of {len} {} elements is \
                                         larger than 64 GiB",
                                        fs.offset, b.ty
                                    )));
                                }
                                b.init
                                    .check(b.ty, len, base_dir)
                                    .map_err(|e| at(e.to_string()))?;
                                let base = buffer_base(STRUCT_REGION0 + field_buffers);
                                field_buffers += 1;
                                put(fs.offset, 8, base)?;
                                buffers.push(FieldBuffer {
                                    offset: fs.offset,
                                    base,
                                    elem: b.ty,
                                    len,
                                    init: b.init.to_string(),
                                });
                            }
                        }
                    }
                    BoundValue::Bytes {
                        bytes: image,
                        buffers,
                    }
                }
                (Some(ParamArg::Bytes(_) | ParamArg::Struct(_)), ty) => {
                    return Err(at(format!(
                        "`bytes` / `fields` need a by-value struct parameter, but this one is {}",
                        describe(ty)
                    )))
                }
                (Some(ParamArg::Buffer(_)), ty) => {
                    return Err(at(format!(
                        "a buffer needs a 64-bit pointer parameter, but this one is {}",
                        describe(ty)
                    )))
                }
                (None, SigType::Int { bits: 64, .. }) => BoundValue::Synthetic {
                    base: buffer_base(idx),
                },
                (None, _) if open => BoundValue::Open,
                (None, ty) => return Err(at(missing_value(ty))),
            };
            params.push(BoundParam {
                name: p.name.clone(),
                ty: p.ty,
                value,
            });
        }
        Ok(BoundLaunch {
            kernel: kernel.to_string(),
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.dynamic_shared_bytes,
            params,
            base_dir: base_dir.to_path_buf(),
            module_vars: Vec::new(),
        })
    }
}

/// The error text of a by-value parameter without a value.
pub(super) fn missing_value(ty: SigType) -> String {
    format!("no value given for this {} parameter", describe(ty))
}

fn check_dims(grid: Dim3, block: Dim3) -> Result<(), LaunchError> {
    let over = |what: &str, d: Dim3, max: Dim3| {
        if d.x > max.x || d.y > max.y || d.z > max.z {
            Err(LaunchError::Dims {
                why: format!("{what} {d} exceeds the CUDA limit {max}"),
            })
        } else {
            Ok(())
        }
    };
    over("grid", grid, MAX_GRID)?;
    over("block", block, MAX_BLOCK)?;
    if block.count() > MAX_THREADS_PER_BLOCK {
        return Err(LaunchError::Dims {
            why: format!(
                "block {block} has {} threads; CUDA allows at most {MAX_THREADS_PER_BLOCK}",
                block.count()
            ),
        });
    }
    Ok(())
}

/// The signature type that encodes a struct field of element type `t`.
fn elem_sig(t: ElemType) -> SigType {
    let bits = t.size() as u32 * 8;
    if t.is_float() {
        SigType::Float { bits }
    } else {
        SigType::Int {
            bits,
            signed: t.is_signed_int(),
        }
    }
}

fn describe(ty: SigType) -> String {
    match ty {
        SigType::Int { bits, signed: true } => format!(".s{bits}"),
        SigType::Int {
            bits,
            signed: false,
        } => format!(".u{bits}"),
        SigType::Float { bits } => format!(".f{bits}"),
        SigType::Bytes { bytes } => format!("{bytes}-byte by-value"),
    }
}

fn buffer_len(b: &BufferSpec, chosen: &[Option<&ParamArg>]) -> Result<u64, String> {
    if let Some(len) = b.len {
        if let Some(implied) = b.init.implied_len() {
            if implied != len {
                return Err(format!(
                    "`len` is {len} but `{}` makes {implied} elements",
                    b.init
                ));
            }
        }
        return Ok(len);
    }
    if let Some(other) = b.len_of {
        return match chosen.get(other) {
            Some(Some(ParamArg::Buffer(o))) if o.len_of.is_none() => o
                .len
                .or_else(|| o.init.implied_len())
                .ok_or_else(|| format!("parameter {other}'s length is not known either")),
            _ => Err(format!(
                "`len_of` names parameter {other}, which has no buffer with its own length"
            )),
        };
    }
    b.init
        .implied_len()
        .ok_or_else(|| format!("buffer needs `len`: `{}` does not imply a length", b.init))
}

/// Encodes a scalar for a parameter of type `ty`, rejecting values the type cannot hold.
fn encode_scalar(v: Scalar, ty: SigType) -> Result<u64, String> {
    // A literal with an exponent or a fraction of zero (`1e3`, `64.0`) is an integer when
    // its value is one; 2^127 and beyond cannot fit any PTX type either way.
    let v = match (v, ty) {
        (Scalar::Float(f), SigType::Int { .. })
            if f.is_finite() && f.fract() == 0.0 && f.abs() < 2f64.powi(127) =>
        {
            Scalar::Int(f as i128)
        }
        _ => v,
    };
    match (v, ty) {
        (Scalar::Int(i), SigType::Int { bits, signed }) => {
            let (lo, hi) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                // Negative values are accepted as two's complement for unsigned/bit types
                // down to the signed minimum (PTX `.b32` parameters often hold ints).
                (-(1i128 << (bits - 1)), (1i128 << bits) - 1)
            };
            if i < lo || i > hi {
                return Err(format!(
                    "{i} does not fit in {bits} bits (a {} parameter holds {lo} to {hi})",
                    describe(ty)
                ));
            }
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            Ok((i as u64) & mask)
        }
        (Scalar::Float(f), SigType::Int { bits, .. }) if f.is_finite() && f.fract() == 0.0 => {
            Err(format!("{f:e} does not fit in {bits} bits"))
        }
        (Scalar::Float(f), SigType::Int { .. }) => Err(format!(
            "{f:?} is not an integer, but the parameter is {}",
            describe(ty)
        )),
        (v, SigType::Float { bits }) => {
            let f = match v {
                Scalar::Int(i) => i as f64,
                Scalar::Float(f) => f,
            };
            match bits {
                64 => Ok(f.to_bits()),
                32 if f.abs() > f64::from(f32::MAX) => Err(format!(
                    "{f:e} is outside the range of .f32 (±{:e})",
                    f32::MAX
                )),
                32 => Ok((f as f32).to_bits() as u64),
                _ => Err(format!("{} parameters are not supported", describe(ty))),
            }
        }
        (_, SigType::Bytes { bytes }) => Err(format!(
            "a {} parameter (a struct passed by value) cannot be set from a number; give its \
             fields: `--param I=struct:0=i32:48;8=buffer:f32:1024:zeros` (OFFSET=TYPE:VALUE or \
             OFFSET=buffer:TYPE:LEN:INIT, `;` between fields) or `--param I=bytes:B,B,...` \
             ({bytes} bytes), or in a launch file {{\"index\": I, \"fields\": [{{\"offset\": 0, \
             \"type\": \"i32\", \"value\": 48}}, {{\"offset\": 8, \"buffer\": {{\"type\": \"f32\", \
             \"len\": 1024, \"init\": \"zeros\"}}}}]}} (docs/LAUNCH.md, \"By-value struct parameters\")",
            describe(ty)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::parse_param_flag;

    fn sig() -> Vec<ParamSig> {
        let p = |name: &str, ty| ParamSig {
            name: name.into(),
            ty,
        };
        vec![
            p(
                "A",
                SigType::Int {
                    bits: 64,
                    signed: false,
                },
            ),
            p(
                "B",
                SigType::Int {
                    bits: 64,
                    signed: false,
                },
            ),
            p(
                "n",
                SigType::Int {
                    bits: 32,
                    signed: true,
                },
            ),
            p("alpha", SigType::Float { bits: 32 }),
        ]
    }

    fn launch(params: &[&str]) -> Launch {
        let mut l = Launch::new(Dim3 { x: 4, y: 4, z: 1 }, Dim3 { x: 16, y: 16, z: 1 });
        l.params = params
            .iter()
            .map(|p| parse_param_flag(p).unwrap())
            .collect();
        l
    }

    #[test]
    fn binds_by_index_and_name_with_synthetic_pointers() {
        let b = launch(&["0=buffer:f32:100:zeros", "n=64", "3=0.5"])
            .bind("k", &sig(), Path::new("."))
            .unwrap();
        assert_eq!(
            b.params[0].value,
            BoundValue::Buffer {
                base: 1 << 36,
                elem: ElemType::F32,
                len: 100,
                init: "zeros".into()
            }
        );
        assert_eq!(b.params[1].value, BoundValue::Synthetic { base: 2 << 36 });
        assert_eq!(b.params[2].value, BoundValue::Scalar { bits: 64 });
        assert_eq!(
            b.params[3].value,
            BoundValue::Scalar {
                bits: 0.5f32.to_bits() as u64
            }
        );
        assert_eq!(b.buffer_bytes(), 400);
        assert_eq!(b.buffer_at((1 << 36) + 396), Some((0, 396)));
        assert_eq!(b.buffer_at((1 << 36) + 400), None);
        assert_eq!(b.buffer_at(5), None);
        assert_eq!(b.buffer_at((2 << 36) + 8), Some((1, 8)));
    }

    #[test]
    fn whole_floats_are_integers() {
        let b = launch(&["n=1e3", "alpha=1"])
            .bind("k", &sig(), Path::new("."))
            .unwrap();
        assert_eq!(b.params[2].value, BoundValue::Scalar { bits: 1000 });
        let b = launch(&["n=-64.0", "alpha=1"])
            .bind("k", &sig(), Path::new("."))
            .unwrap();
        assert_eq!(
            b.params[2].value,
            BoundValue::Scalar {
                bits: u64::from((-64i32) as u32)
            }
        );
    }

    #[test]
    fn buffer_values_must_fit_their_type() {
        for (flag, want) in [
            (
                "0=buffer:u8:4:fill(300)",
                "300 does not fit in u8 (0 to 255)",
            ),
            ("0=buffer:u8:4:fill(-1)", "-1 does not fit in u8"),
            ("0=buffer:u32:4:fill(2.7)", "2.7 is not an integer"),
            ("0=buffer:i32:4:fill(1e20)", "does not fit in i32"),
            ("0=buffer:u8:4:rand(1,0,1000)", "999 does not fit in u8"),
            ("0=buffer:u8:300:iota", "299 does not fit in u8"),
            (
                "0=buffer:u8::csr_row_ptr(100,100,10,1)",
                "number of non-zeros",
            ),
            (
                "0=buffer:u8::csr_col_idx(10,300,2,1)",
                "largest column index: 299",
            ),
            (
                "0=buffer:f32:4:onehot(99)",
                "index 99 is outside a buffer of 4",
            ),
            ("0=buffer:f32:4:file(no/such/file.bin)", "no/such/file.bin"),
        ] {
            let e = launch(&["n=1", "alpha=1", flag])
                .bind("k", &sig(), Path::new("."))
                .unwrap_err()
                .to_string();
            assert!(e.contains("parameter 0 (`A`)"), "{flag}: {e}");
            assert!(e.contains(want), "{flag}: {e}");
        }
        // The same values in range are fine.
        for flag in [
            "0=buffer:u8:4:fill(255)",
            "0=buffer:i8:4:fill(-128)",
            "0=buffer:u8:4:rand(1,0,256)",
            "0=buffer:u8:256:iota",
            "0=buffer:f32:4:fill(2.7)",
            "0=buffer:f32:4:onehot(3)",
        ] {
            launch(&["n=1", "alpha=1", flag])
                .bind("k", &sig(), Path::new("."))
                .unwrap_or_else(|e| panic!("{flag}: {e}"));
        }
    }

    #[test]
    fn later_entries_override() {
        let b = launch(&["n=1", "2=7", "alpha=1"])
            .bind("k", &sig(), Path::new("."))
            .unwrap();
        assert_eq!(b.params[2].value, BoundValue::Scalar { bits: 7 });
        assert_eq!(
            b.params[3].value,
            BoundValue::Scalar {
                bits: 1.0f32.to_bits() as u64
            }
        );
    }

    #[test]
    fn scalar_encoding_limits() {
        let b = launch(&["n=-1", "alpha=1"])
            .bind("k", &sig(), Path::new("."))
            .unwrap();
        assert_eq!(b.params[2].value, BoundValue::Scalar { bits: 0xffff_ffff });
        for (args, want) in [
            (
                vec!["n=2147483648", "alpha=1"],
                "does not fit in 32 bits (a .s32 parameter holds -2147483648 to 2147483647)",
            ),
            (
                vec!["n=1e10", "alpha=1"],
                "10000000000 does not fit in 32 bits",
            ),
            (
                vec!["0=1180591620717411303424", "n=1", "alpha=1"],
                "1180591620717411303424 does not fit in 64 bits",
            ),
            (vec!["n=1", "alpha=1e39"], "outside the range of .f32"),
            (vec!["n=1.5", "alpha=1"], "not an integer"),
            (vec!["alpha=1"], "no value given for this .s32"),
            (vec!["n=1"], "no value given for this .f32"),
            (vec!["n=1", "alpha=1", "7=1"], "has 4 parameters"),
            (
                vec!["n=1", "alpha=1", "beta=1"],
                "no parameter of that name (it has: A, B, n, alpha)",
            ),
            (
                vec!["n=1", "alpha=buffer:f32:4:zeros"],
                "needs a 64-bit pointer",
            ),
            (vec!["n=1", "alpha=1", "0=buffer:f32::zeros"], "needs `len`"),
            (
                vec!["n=1", "alpha=1", "0=buffer:u32:3:csr_row_ptr(4,4,1,1)"],
                "makes 5 elements",
            ),
            (
                vec!["n=1", "alpha=1", "0=buffer:f64:9000000000:zeros"],
                "larger than 64 GiB",
            ),
        ] {
            let e = launch(&args)
                .bind("k", &sig(), Path::new("."))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }

    #[test]
    fn open_binding_leaves_by_value_parameters_without_values_open() {
        let mut s = sig();
        s.push(ParamSig {
            name: "par".into(),
            ty: SigType::Bytes { bytes: 8 },
        });
        // Only `n` given: `alpha` (.f32) and `par` (a struct) are open, the pointers
        // synthetic as in the strict binding.
        let l = launch(&["n=5"]);
        let b = l.bind_open("k", &s, Path::new(".")).unwrap();
        assert_eq!(b.params[0].value, BoundValue::Synthetic { base: 1 << 36 });
        assert_eq!(b.params[2].value, BoundValue::Scalar { bits: 5 });
        assert_eq!(b.params[3].value, BoundValue::Open);
        assert_eq!(b.params[4].value, BoundValue::Open);
        assert_eq!(b.open_params(), [3, 4]);
        assert_eq!(
            serde_json::to_value(&b.params[4].value).unwrap(),
            serde_json::json!({"kind": "open"})
        );
        // Running needs every value: the same message as the strict binding's.
        let strict = l.bind("k", &s, Path::new(".")).unwrap_err().to_string();
        let open = b.require_values().unwrap_err().to_string();
        assert_eq!(strict, open);
        assert!(
            open.contains("parameter 3 (`alpha`): no value given for this .f32 parameter"),
            "{open}"
        );
        // Given values, nothing is open and nothing is required.
        let b = launch(&["n=5", "alpha=1", "par=1"]).bind_open("k", &s, Path::new("."));
        assert!(b.is_err(), "a number cannot set a struct");
        let mut l = launch(&["n=5", "alpha=1"]);
        l.params.push(crate::ParamSpec {
            key: ParamKey::Name("par".into()),
            comment: None,
            arg: ParamArg::Bytes(vec![0; 8]),
        });
        let b = l.bind_open("k", &s, Path::new(".")).unwrap();
        assert!(b.open_params().is_empty());
        b.require_values().unwrap();
        assert_eq!(b, l.bind("k", &s, Path::new(".")).unwrap());
        // Open binding does not loosen anything else.
        let e = launch(&["n=1.5"])
            .bind_open("k", &s, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an integer"), "{e}");
    }

    #[test]
    fn launch_limits() {
        let mut l = launch(&["n=1", "alpha=1"]);
        l.grid = Dim3 {
            x: 1 << 31,
            y: 1,
            z: 1,
        };
        let e = l.bind("k", &sig(), Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("2147483648x1x1 exceeds the CUDA limit"), "{e}");
        l.grid = Dim3 { x: 1, y: 1, z: 1 };
        l.block = Dim3 { x: 64, y: 32, z: 1 };
        let e = l.bind("k", &sig(), Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("2048 threads"), "{e}");
    }

    #[test]
    fn len_from_generators_and_len_of() {
        let s = vec![
            ParamSig {
                name: "rp".into(),
                ty: SigType::Int {
                    bits: 64,
                    signed: false,
                },
            },
            ParamSig {
                name: "ci".into(),
                ty: SigType::Int {
                    bits: 64,
                    signed: false,
                },
            },
            ParamSig {
                name: "v".into(),
                ty: SigType::Int {
                    bits: 64,
                    signed: false,
                },
            },
        ];
        let mut l = launch(&[
            "0=buffer:i32::csr_row_ptr(50,50,4,3)",
            "1=buffer:i32::csr_col_idx(50,50,4,3)",
        ]);
        l.params.push(crate::ParamSpec {
            key: ParamKey::Index(2),
            comment: None,
            arg: ParamArg::Buffer(BufferSpec {
                ty: ElemType::F32,
                len: None,
                len_of: Some(1),
                init: crate::Init::Ones,
            }),
        });
        let b = l.bind("spmv", &s, Path::new(".")).unwrap();
        let nnz = crate::init::CsrSpec {
            rows: 50,
            cols: 50,
            avg_nnz: 4,
            seed: 3,
        }
        .nnz();
        let lens: Vec<u64> = b
            .params
            .iter()
            .map(|p| match p.value {
                BoundValue::Buffer { len, .. } => len,
                _ => panic!(),
            })
            .collect();
        assert_eq!(lens, [51, nnz, nnz]);
    }
}
