//! Loose round robin: the first ready warp after the one issued last.

use super::{WarpInfo, WarpPolicyInfo, WarpScheduler};

/// LRR state: the slot issued last.
#[derive(Clone, Debug, Default)]
pub struct Lrr {
    last: Option<u32>,
}

impl WarpScheduler for Lrr {
    fn pick(&mut self, ready: &[u32], _warps: &WarpInfo<'_>) -> u32 {
        let w = match self.last {
            Some(l) => ready.iter().copied().find(|&w| w > l).unwrap_or(ready[0]),
            None => ready[0],
        };
        self.last = Some(w);
        w
    }
}

/// LRR.
pub const LRR: WarpPolicyInfo = WarpPolicyInfo {
    name: "lrr",
    aliases: &["rr"],
    description: "loose round robin over the ready warps",
    make: || Box::new(Lrr::default()),
    ipaws: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates() {
        let mut s = Lrr::default();
        let age = &WarpInfo {
            age: &[0; 8],
            issued: &[0; 8],
            group: &[],
        };
        assert_eq!(s.pick(&[1, 3, 5], age), 1);
        assert_eq!(s.pick(&[1, 3, 5], age), 3);
        assert_eq!(s.pick(&[1, 3, 5], age), 5);
        assert_eq!(s.pick(&[1, 3, 5], age), 1);
        assert_eq!(s.pick(&[0, 1], age), 0);
    }
}
