//! Small typed vocabularies of PTX: scalar types, state spaces and the instruction modifier
//! enums (cache operators, rounding, comparisons, scopes, ...).
//!
//! Every enum maps one-to-one to the PTX spelling without the leading dot
//! (`from_word("global")`, `as_str() == "global"`), so the printer reproduces the source
//! exactly. Spellings follow the PTX ISA 8.x, sections 5.2 (types), 5.1 (state spaces) and
//! 9.7 (instruction modifiers).

use std::fmt;

/// Declares a `Copy` enum whose variants map to fixed PTX words.
macro_rules! word_enum {
    (@first $first:ident $($rest:ident)*) => { Self::$first };
    ($(#[$m:meta])* $name:ident { $($var:ident = $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $(#[doc = concat!("`.", $s, "`")] $var,)*
        }
        impl Default for $name {
            /// The first variant (placeholder for inline storage).
            fn default() -> Self {
                word_enum!(@first $($var)*)
            }
        }
        impl $name {
            /// Parses the PTX word (without the leading dot).
            pub fn from_word(s: &str) -> Option<Self> {
                match s {
                    $($s => Some(Self::$var),)*
                    _ => None,
                }
            }
            /// The PTX word (without the leading dot).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$var => $s,)*
                }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

word_enum! {
    /// A PTX fundamental or packed type (PTX ISA 5.2.1, 5.2.5).
    ScalarType {
        Pred = "pred",
        B8 = "b8", B16 = "b16", B32 = "b32", B64 = "b64", B128 = "b128",
        U8 = "u8", U16 = "u16", U32 = "u32", U64 = "u64",
        S8 = "s8", S16 = "s16", S32 = "s32", S64 = "s64",
        F16 = "f16", F16x2 = "f16x2", Bf16 = "bf16", Bf16x2 = "bf16x2",
        Tf32 = "tf32", F32 = "f32", F64 = "f64",
        E4m3 = "e4m3", E5m2 = "e5m2", E4m3x2 = "e4m3x2", E5m2x2 = "e5m2x2",
        U16x2 = "u16x2", S16x2 = "s16x2", S4 = "s4", U4 = "u4",
        Texref = "texref", Samplerref = "samplerref", Surfref = "surfref",
    }
}

impl ScalarType {
    /// Size in bytes (predicates count as 1; opaque handles as 8).
    pub fn size(self) -> u32 {
        use ScalarType::*;
        match self {
            Pred | B8 | U8 | S8 | E4m3 | E5m2 | S4 | U4 => 1,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 => 2,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | Tf32 | U16x2 | S16x2 => 4,
            B64 | U64 | S64 | F64 | Texref | Samplerref | Surfref => 8,
            B128 => 16,
        }
    }
}

word_enum! {
    /// A state space (PTX ISA 5.1). `Generic` is never written; it is the absence of a space.
    StateSpace {
        Reg = "reg", Sreg = "sreg", Const = "const", Global = "global", Local = "local",
        Param = "param", ParamEntry = "param::entry", ParamFunc = "param::func",
        Shared = "shared", SharedCta = "shared::cta", SharedCluster = "shared::cluster",
        Tex = "tex", Generic = "generic",
    }
}

impl StateSpace {
    /// True for `.shared`, `.shared::cta` and `.shared::cluster`.
    pub fn is_shared(self) -> bool {
        matches!(self, Self::Shared | Self::SharedCta | Self::SharedCluster)
    }
    /// True for `.param` and its `::entry` / `::func` forms.
    pub fn is_param(self) -> bool {
        matches!(self, Self::Param | Self::ParamEntry | Self::ParamFunc)
    }
}

word_enum! {
    /// Cache operator of `ld`/`st` (PTX ISA 9.7.9.1). `.nc` is a separate flag.
    CacheOp { Ca = "ca", Cg = "cg", Cs = "cs", Lu = "lu", Cv = "cv", Wb = "wb", Wt = "wt" }
}

word_enum! {
    /// Rounding modifier (PTX ISA 9.7.3, 9.7.9.21).
    Rounding {
        Rn = "rn", Rz = "rz", Rm = "rm", Rp = "rp", Rna = "rna", Rs = "rs",
        Rni = "rni", Rzi = "rzi", Rmi = "rmi", Rpi = "rpi",
    }
}

word_enum! {
    /// Comparison operator of `setp`, `set`, `slct` (PTX ISA 9.7.7.1).
    CmpOp {
        Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge",
        Lo = "lo", Ls = "ls", Hi = "hi", Hs = "hs",
        Equ = "equ", Neu = "neu", Ltu = "ltu", Leu = "leu", Gtu = "gtu", Geu = "geu",
        Num = "num", Nan = "nan",
    }
}

word_enum! {
    /// Boolean combining operator of `setp`/`set` (PTX ISA 9.7.7.4).
    BoolOp { And = "and", Or = "or", Xor = "xor" }
}

word_enum! {
    /// Result half of `mul`/`mad`/`mul24`/`mad24` (PTX ISA 9.7.1.5).
    MulMode { Lo = "lo", Hi = "hi", Wide = "wide" }
}

word_enum! {
    /// Precision of `div`, `rcp`, `sqrt`, ... (`.approx` or `.full`).
    Precision { Approx = "approx", Full = "full" }
}

word_enum! {
    /// Vector width of `ld`/`st`/`tex` (PTX ISA 5.2.3).
    VecWidth { V2 = "v2", V4 = "v4", V8 = "v8" }
}

impl VecWidth {
    /// Number of elements.
    pub fn lanes(self) -> u32 {
        match self {
            Self::V2 => 2,
            Self::V4 => 4,
            Self::V8 => 8,
        }
    }
}

word_enum! {
    /// Operation of `atom`/`red`/`redux` (PTX ISA 9.7.13.5).
    AtomOp {
        Add = "add", Min = "min", Max = "max", Exch = "exch", Cas = "cas",
        Inc = "inc", Dec = "dec", And = "and", Or = "or", Xor = "xor",
    }
}

word_enum! {
    /// Memory scope (PTX ISA 8.5); `gl` is `membar.gl`.
    MemScope { Cta = "cta", Cluster = "cluster", Gpu = "gpu", Sys = "sys", Gl = "gl" }
}

word_enum! {
    /// Memory ordering semantic (PTX ISA 8.4).
    Semantic {
        Weak = "weak", Relaxed = "relaxed", Acquire = "acquire", Release = "release",
        AcqRel = "acq_rel", Sc = "sc", Volatile = "volatile", Mmio = "mmio",
    }
}

word_enum! {
    /// Mode of `shfl` (PTX ISA 9.7.8.6).
    ShflMode { Up = "up", Down = "down", Bfly = "bfly", Idx = "idx" }
}

word_enum! {
    /// Mode of `vote` (PTX ISA 9.7.8.8).
    VoteMode { All = "all", Any = "any", Uni = "uni", Ballot = "ballot" }
}

word_enum! {
    /// Linkage / visibility directive of a module-level symbol (PTX ISA 11.6).
    Linkage { Visible = "visible", Extern = "extern", Weak = "weak", Common = "common" }
}

/// A vector dimension of a special register such as `%tid.x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Dim {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

impl Dim {
    fn from_word(s: &str) -> Option<Self> {
        match s {
            "x" => Some(Self::X),
            "y" => Some(Self::Y),
            "z" => Some(Self::Z),
            _ => None,
        }
    }
    fn as_str(self) -> &'static str {
        match self {
            Self::X => "x",
            Self::Y => "y",
            Self::Z => "z",
        }
    }
}

/// A special (read-only, predefined) register (PTX ISA chapter 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SpecialReg {
    /// `%tid.{x,y,z}`: thread index in the CTA.
    Tid(Dim),
    /// `%ntid.{x,y,z}`: CTA shape.
    Ntid(Dim),
    /// `%ctaid.{x,y,z}`: CTA index in the grid.
    Ctaid(Dim),
    /// `%nctaid.{x,y,z}`: grid shape.
    Nctaid(Dim),
    /// `%clusterid.{x,y,z}`.
    Clusterid(Dim),
    /// `%nclusterid.{x,y,z}`.
    Nclusterid(Dim),
    /// `%cluster_ctaid.{x,y,z}`.
    ClusterCtaid(Dim),
    /// `%cluster_nctaid.{x,y,z}`.
    ClusterNctaid(Dim),
    /// `%cluster_ctarank`.
    ClusterCtarank,
    /// `%cluster_nctarank`.
    ClusterNctarank,
    /// `%is_explicit_cluster`.
    IsExplicitCluster,
    /// `%laneid`.
    Laneid,
    /// `%warpid`.
    Warpid,
    /// `%nwarpid`.
    Nwarpid,
    /// `%smid`.
    Smid,
    /// `%nsmid`.
    Nsmid,
    /// `%gridid`.
    Gridid,
    /// `%clock`.
    Clock,
    /// `%clock_hi`.
    ClockHi,
    /// `%clock64`.
    Clock64,
    /// `%lanemask_eq`.
    LanemaskEq,
    /// `%lanemask_le`.
    LanemaskLe,
    /// `%lanemask_lt`.
    LanemaskLt,
    /// `%lanemask_ge`.
    LanemaskGe,
    /// `%lanemask_gt`.
    LanemaskGt,
    /// `%globaltimer`.
    Globaltimer,
    /// `%globaltimer_lo`.
    GlobaltimerLo,
    /// `%globaltimer_hi`.
    GlobaltimerHi,
    /// `%dynamic_smem_size`.
    DynamicSmemSize,
    /// `%total_smem_size`.
    TotalSmemSize,
    /// `%aggr_smem_size`.
    AggrSmemSize,
    /// `%envreg0` .. `%envreg31`.
    Envreg(u8),
    /// `%pm0` .. `%pm7`.
    Pm(u8),
    /// `%pm0_64` .. `%pm7_64`.
    Pm64(u8),
    /// The predefined constant `WARP_SZ`.
    WarpSz,
}

impl SpecialReg {
    /// Parses a special register name such as `%tid.x` or `%envreg3`.
    pub fn from_name(s: &str) -> Option<Self> {
        use SpecialReg::*;
        if let Some((base, d)) = s.split_once('.') {
            let d = Dim::from_word(d)?;
            return Some(match base {
                "%tid" => Tid(d),
                "%ntid" => Ntid(d),
                "%ctaid" => Ctaid(d),
                "%nctaid" => Nctaid(d),
                "%clusterid" => Clusterid(d),
                "%nclusterid" => Nclusterid(d),
                "%cluster_ctaid" => ClusterCtaid(d),
                "%cluster_nctaid" => ClusterNctaid(d),
                _ => return None,
            });
        }
        Some(match s {
            "%cluster_ctarank" => ClusterCtarank,
            "%cluster_nctarank" => ClusterNctarank,
            "%is_explicit_cluster" => IsExplicitCluster,
            "%laneid" => Laneid,
            "%warpid" => Warpid,
            "%nwarpid" => Nwarpid,
            "%smid" => Smid,
            "%nsmid" => Nsmid,
            "%gridid" => Gridid,
            "%clock" => Clock,
            "%clock_hi" => ClockHi,
            "%clock64" => Clock64,
            "%lanemask_eq" => LanemaskEq,
            "%lanemask_le" => LanemaskLe,
            "%lanemask_lt" => LanemaskLt,
            "%lanemask_ge" => LanemaskGe,
            "%lanemask_gt" => LanemaskGt,
            "%globaltimer" => Globaltimer,
            "%globaltimer_lo" => GlobaltimerLo,
            "%globaltimer_hi" => GlobaltimerHi,
            "%dynamic_smem_size" => DynamicSmemSize,
            "%total_smem_size" => TotalSmemSize,
            "%aggr_smem_size" => AggrSmemSize,
            "WARP_SZ" => WarpSz,
            _ => {
                let num = |p: &str, max: u8| -> Option<u8> {
                    let n = s.strip_prefix(p)?;
                    if n.is_empty() || n.len() > 2 || (n.len() > 1 && n.starts_with('0')) {
                        return None;
                    }
                    let v: u8 = n.parse().ok()?;
                    (v <= max).then_some(v)
                };
                if let Some(n) = num("%envreg", 31) {
                    Envreg(n)
                } else if let Some(n) = s.strip_suffix("_64").and_then(|b| {
                    let n = b.strip_prefix("%pm")?;
                    let v: u8 = n.parse().ok()?;
                    (n.len() == 1 && v <= 7).then_some(v)
                }) {
                    Pm64(n)
                } else if let Some(n) = num("%pm", 7) {
                    Pm(n)
                } else {
                    return None;
                }
            }
        })
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SpecialReg::*;
        let (base, dim) = match *self {
            Tid(d) => ("%tid", d),
            Ntid(d) => ("%ntid", d),
            Ctaid(d) => ("%ctaid", d),
            Nctaid(d) => ("%nctaid", d),
            Clusterid(d) => ("%clusterid", d),
            Nclusterid(d) => ("%nclusterid", d),
            ClusterCtaid(d) => ("%cluster_ctaid", d),
            ClusterNctaid(d) => ("%cluster_nctaid", d),
            Envreg(n) => return write!(f, "%envreg{n}"),
            Pm(n) => return write!(f, "%pm{n}"),
            Pm64(n) => return write!(f, "%pm{n}_64"),
            other => {
                let s = match other {
                    ClusterCtarank => "%cluster_ctarank",
                    ClusterNctarank => "%cluster_nctarank",
                    IsExplicitCluster => "%is_explicit_cluster",
                    Laneid => "%laneid",
                    Warpid => "%warpid",
                    Nwarpid => "%nwarpid",
                    Smid => "%smid",
                    Nsmid => "%nsmid",
                    Gridid => "%gridid",
                    Clock => "%clock",
                    ClockHi => "%clock_hi",
                    Clock64 => "%clock64",
                    LanemaskEq => "%lanemask_eq",
                    LanemaskLe => "%lanemask_le",
                    LanemaskLt => "%lanemask_lt",
                    LanemaskGe => "%lanemask_ge",
                    LanemaskGt => "%lanemask_gt",
                    Globaltimer => "%globaltimer",
                    GlobaltimerLo => "%globaltimer_lo",
                    GlobaltimerHi => "%globaltimer_hi",
                    DynamicSmemSize => "%dynamic_smem_size",
                    TotalSmemSize => "%total_smem_size",
                    AggrSmemSize => "%aggr_smem_size",
                    _ => "WARP_SZ",
                };
                return f.write_str(s);
            }
        };
        write!(f, "{base}.{}", dim.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        assert_eq!(ScalarType::from_word("f16x2"), Some(ScalarType::F16x2));
        assert_eq!(
            StateSpace::from_word("shared::cta").map(|s| s.as_str()),
            Some("shared::cta")
        );
        assert_eq!(CmpOp::from_word("geu"), Some(CmpOp::Geu));
        assert_eq!(ScalarType::from_word("f17"), None);
    }

    #[test]
    fn special_regs() {
        for s in [
            "%tid.x",
            "%ctaid.z",
            "%envreg31",
            "%pm3",
            "%pm7_64",
            "%clock64",
            "WARP_SZ",
        ] {
            let r = SpecialReg::from_name(s).unwrap();
            assert_eq!(r.to_string(), s);
        }
        assert_eq!(SpecialReg::from_name("%envreg32"), None);
        assert_eq!(SpecialReg::from_name("%tid.w"), None);
        assert_eq!(SpecialReg::from_name("%envreg01"), None);
    }
}
