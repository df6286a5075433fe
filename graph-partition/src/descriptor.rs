//! The Locality Descriptor (Vijaykumar et al., ISCA 2018, §3.2): one type, [`Descriptor`],
//! and its vocabulary, for everything that reads a descriptor: the static analysis that
//! derives it (`analysis::descriptor`, which adds the evidence it was derived from), CTA
//! clustering ([`crate::policy::LdClustering`]) and the simulator's run-time mechanisms
//! (`sim::timing::hints`, which place it in the launch's address space). It lives here, in
//! the lowest crate all three depend on, so no crate re-reads another's JSON to get one.
//! The enums serialise as the paper spells them (`INTER-THREAD`, `COACCESSED`, `REGULAR`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// The Locality Descriptor of one data structure (a pointer parameter, module variable or
/// struct field's buffer): what the paper's programmer would write, as the static analysis
/// derives it. Fields serialise in this order as the first fields of each entry of a
/// `paver-analysis/1` document's `locality_descriptors`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Descriptor {
    /// Region id: the parameter index, or the launch binding's id of a module variable or
    /// struct field's buffer (`launch::BoundLaunch::buffer_at`).
    pub param: u32,
    /// The data structure's name (`None`: the PTX gives it none).
    pub name: Option<String>,
    /// Element size in bytes.
    pub element_bytes: u64,
    /// `INTER-THREAD`, `INTRA-THREAD`, `NO-REUSE`, or `UNDECIDED` when the analysis could
    /// not answer the existence questions.
    pub locality_type: LocalityType,
    /// The paper's priority (§3.3.5): 1 is the highest, unique per descriptor.
    pub priority: u32,
    /// `COACCESSED` or `NEARBY` (INTER-THREAD only).
    pub sharing: Option<Sharing>,
    /// `REGULAR` or `IRREGULAR`.
    pub pattern: Pattern,
    /// Distance in elements between the D-Tile's rows (REGULAR only).
    pub stride_elements: Option<u64>,
    /// D-Tile dimensions in elements.
    pub d_tile: [u64; 3],
    /// C-Tile dimensions in TBs.
    pub c_tile: [u64; 3],
    /// Compute-data map as a mask: 1 where the addresses use `%ctaid` along that dimension.
    pub compute_data_map: [u8; 3],
    /// Compute-data map in the paper's rank form (§3.3.3): the traversal rank of each grid
    /// dimension's C-Tiles as D-Tiles are traversed `X -> Y -> Z`; 0 where the mask is 0.
    pub compute_data_rank: [u8; 3],
}

impl Descriptor {
    /// Whether the access pattern is REGULAR (a D-Tile of rows a fixed stride apart).
    pub fn is_regular(&self) -> bool {
        self.pattern == Pattern::Regular
    }

    /// The name for messages: the data structure's, else `param N`.
    pub fn display_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("param {}", self.param))
    }

    /// The descriptors of an analysis document (`doc` is the whole `paver-analysis/1`
    /// document or its `locality_descriptors` array), in document order; what an entry
    /// holds besides the descriptor (the analysis's evidence) is ignored. Errors when the
    /// document has no descriptors (analysed with `--no-descriptors`) or an entry is
    /// malformed (naming the entry and the field).
    pub fn from_analysis(doc: &Value) -> Result<Vec<Descriptor>> {
        let list = match doc.get("locality_descriptors") {
            Some(v) => v,
            None if doc.is_array() => doc,
            None => {
                return Err(Error::LocalityDescriptor(
                    "the analysis has no `locality_descriptors` (run `paver analyze` without \
                     --no-descriptors)"
                        .into(),
                ))
            }
        };
        let Some(list) = list.as_array() else {
            return Err(Error::LocalityDescriptor(
                "`locality_descriptors` is not an array".into(),
            ));
        };
        list.iter()
            .enumerate()
            .map(|(i, d)| {
                Descriptor::deserialize(d).map_err(|e| {
                    Error::LocalityDescriptor(format!("locality_descriptors[{i}]: {e}"))
                })
            })
            .collect()
    }
}

/// The locality type (§3.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LocalityType {
    /// Different threads (of one or several TBs) read the same data.
    #[serde(rename = "INTER-THREAD")]
    InterThread,
    /// A thread rereads its own data.
    #[serde(rename = "INTRA-THREAD")]
    IntraThread,
    /// No data is read twice.
    #[serde(rename = "NO-REUSE")]
    NoReuse,
    /// The analysis could not decide: run-time mechanisms leave the structure alone.
    #[serde(rename = "UNDECIDED")]
    Undecided,
}

/// How threads share an INTER-THREAD structure (§3.2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Sharing {
    /// Threads read the same elements together.
    #[serde(rename = "COACCESSED")]
    Coaccessed,
    /// Threads read neighbouring elements.
    #[serde(rename = "NEARBY")]
    Nearby,
}

/// The access pattern (§3.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Pattern {
    /// A D-Tile of rows a fixed stride apart.
    #[serde(rename = "REGULAR")]
    Regular,
    /// Anything else.
    #[serde(rename = "IRREGULAR")]
    Irregular,
}

impl LocalityType {
    /// The paper's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LocalityType::InterThread => "INTER-THREAD",
            LocalityType::IntraThread => "INTRA-THREAD",
            LocalityType::NoReuse => "NO-REUSE",
            LocalityType::Undecided => "UNDECIDED",
        }
    }
}

impl Sharing {
    /// The paper's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Sharing::Coaccessed => "COACCESSED",
            Sharing::Nearby => "NEARBY",
        }
    }
}

impl Pattern {
    /// The paper's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Regular => "REGULAR",
            Pattern::Irregular => "IRREGULAR",
        }
    }
}

impl std::fmt::Display for LocalityType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Sharing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
