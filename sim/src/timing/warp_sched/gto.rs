//! Greedy then oldest (Rogers et al.; iPAWS §2): keep issuing the warp issued last while it
//! is ready, otherwise the oldest ready warp.

use super::{WarpInfo, WarpPolicyInfo, WarpScheduler};

/// GTO state: the slot issued last.
#[derive(Clone, Debug, Default)]
pub struct Gto {
    last: Option<u32>,
}

impl WarpScheduler for Gto {
    fn pick(&mut self, ready: &[u32], warps: &WarpInfo<'_>) -> u32 {
        let age = warps.age;
        let w = match self.last.filter(|l| ready.contains(l)) {
            Some(l) => l,
            None => ready
                .iter()
                .copied()
                .min_by_key(|&w| (age.get(w as usize).copied().unwrap_or(0), w))
                .unwrap_or(ready[0]),
        };
        self.last = Some(w);
        w
    }
}

/// GTO.
pub const GTO: WarpPolicyInfo = WarpPolicyInfo {
    name: "gto",
    aliases: &[],
    description: "greedy then oldest (Rogers et al., MICRO 2012)",
    make: || Box::new(Gto::default()),
    ipaws: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_then_oldest() {
        let mut s = Gto::default();
        let age = [5, 1, 3, 0];
        let age = &WarpInfo {
            age: &age,
            issued: &[0; 4],
            group: &[],
        };
        assert_eq!(s.pick(&[0, 1, 2], age), 1);
        assert_eq!(s.pick(&[0, 1, 2], age), 1);
        assert_eq!(s.pick(&[0, 2], age), 2);
        assert_eq!(s.pick(&[0, 2, 3], age), 2);
        assert_eq!(s.pick(&[0, 3], age), 3);
    }
}
