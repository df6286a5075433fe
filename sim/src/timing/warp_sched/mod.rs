//! Warp schedulers: each SM has `warp_schedulers_per_sm` of them, warp slot `w` belonging to
//! scheduler `w % n`; every cycle each picks one of its ready warps. A new policy is one
//! file implementing [`WarpScheduler`].

mod gto;
mod lrr;

pub use gto::Gto;
pub use lrr::Lrr;

use serde::{Deserialize, Serialize};

/// A warp scheduling policy.
pub trait WarpScheduler: Send {
    /// Picks one of `ready` (warp slots, ascending, non-empty); `age[slot]` orders warps by
    /// when they were dispatched (smaller is older).
    fn pick(&mut self, ready: &[u32], age: &[u64]) -> u32;
}

/// The shipped policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarpPolicy {
    /// Greedy then oldest.
    Gto,
    /// Loose round robin.
    Lrr,
}

impl WarpPolicy {
    /// A fresh scheduler.
    pub fn make(self) -> Box<dyn WarpScheduler> {
        match self {
            WarpPolicy::Gto => Box::new(Gto::default()),
            WarpPolicy::Lrr => Box::new(Lrr::default()),
        }
    }

    /// Parses `gto` / `lrr`.
    pub fn parse(s: &str) -> Option<WarpPolicy> {
        match s.to_ascii_lowercase().as_str() {
            "gto" => Some(WarpPolicy::Gto),
            "lrr" | "rr" => Some(WarpPolicy::Lrr),
            _ => None,
        }
    }
}
