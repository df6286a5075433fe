//! The Locality Descriptor's vocabulary (Vijaykumar et al., ISCA 2018, §3.2), one set of
//! types for everything that reads a descriptor: the static analysis that derives them
//! (`analysis::descriptor`), CTA clustering ([`crate::policy::LdClustering`]) and the
//! simulator's run-time mechanisms (`sim::timing::hints`). They serialise as the paper
//! spells them (`INTER-THREAD`, `COACCESSED`, `REGULAR`).

use serde::{Deserialize, Serialize};

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
