//! Least instructions issued (iPAWS §3.4, its Recover phase): the ready warp that has
//! issued the fewest instructions since it was launched; ties go to the oldest.

use super::{WarpInfo, WarpPolicyInfo, WarpScheduler};

/// LII has no state of its own: the counts are the SM's ([`WarpInfo::issued`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct Lii;

impl WarpScheduler for Lii {
    fn pick(&mut self, ready: &[u32], warps: &WarpInfo<'_>) -> u32 {
        let get = |v: &[u64], w: u32| v.get(w as usize).copied().unwrap_or(0);
        ready
            .iter()
            .copied()
            .min_by_key(|&w| (get(warps.issued, w), get(warps.age, w), w))
            .unwrap_or(ready[0])
    }
}

/// LII.
pub const LII: WarpPolicyInfo = WarpPolicyInfo {
    name: "lii",
    aliases: &[],
    description: "least instructions issued first (iPAWS §3.4)",
    make: || Box::new(Lii),
    ipaws: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_issued_then_oldest() {
        let mut s = Lii;
        let age = [3, 0, 1, 2];
        let issued = [5, 9, 2, 2];
        let info = WarpInfo {
            age: &age,
            issued: &issued,
            group: &[],
        };
        // Slots 2 and 3 tie at 2 instructions; 2 is older (age 1 < 2).
        assert_eq!(s.pick(&[0, 1, 2, 3], &info), 2);
        assert_eq!(s.pick(&[0, 1, 3], &info), 3);
        assert_eq!(s.pick(&[0, 1], &info), 0);
        assert_eq!(s.pick(&[1], &info), 1);
    }
}
