//! LASER's two-level warp scheduler (Tang et al., POMACS 2018, §5 and §6, after Narasiman
//! et al.'s two-level scheduler): warps form groups, a TB's warps one group, joined by the
//! warps of a child TB predicted to reuse its parent's data while the parent is resident on
//! the same SM (the group comes from [`super::WarpInfo::group`], which the SM sets at launch
//! from the TB policy's [`crate::timing::tb_sched::TbScheduler::join_group`]). GTO picks
//! between the groups (keep the group issued last while one of its warps is ready, else the
//! group of the oldest ready warp); inside the group the warps take turns, round robin by
//! slot. Without groups (no caller tracks them) every warp is its own group, which is GTO.

use super::{WarpInfo, WarpPolicyInfo, WarpScheduler};

/// The group issued last and its warp issued last.
#[derive(Clone, Debug, Default)]
pub struct TwoLevel {
    last: Option<(u32, u32)>,
}

impl WarpScheduler for TwoLevel {
    fn pick(&mut self, ready: &[u32], warps: &WarpInfo<'_>) -> u32 {
        let group = |w: u32| warps.group.get(w as usize).copied().unwrap_or(w);
        let age = |w: u32| warps.age.get(w as usize).copied().unwrap_or(0);
        let w = match self
            .last
            .filter(|&(g, _)| ready.iter().any(|&w| group(w) == g))
        {
            // Round robin inside the group: the next ready slot after the last, wrapping.
            Some((g, last)) => {
                let mut members = ready.iter().copied().filter(|&w| group(w) == g);
                let first = members.clone().next();
                members.find(|&w| w > last).or(first).unwrap_or(ready[0])
            }
            None => ready
                .iter()
                .copied()
                .min_by_key(|&w| (age(w), w))
                .unwrap_or(ready[0]),
        };
        self.last = Some((group(w), w));
        w
    }
}

/// LASER's two-level warp scheduler.
pub const LASER_TWO_LEVEL: WarpPolicyInfo = WarpPolicyInfo {
    name: "laser-two-level",
    aliases: &[],
    description: "LASER's two-level scheduler (Tang et al. §6): GTO between warp groups (a TB \
                  with the children that joined it under --tb-policy laser), round robin \
                  inside a group",
    make: || Box::new(TwoLevel::default()),
    ipaws: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups {0, 1, 2} (a parent's warps 0-1 and a child's 2) and {3}: inside the group the
    /// warps rotate; the group stays while one of its warps is ready; then the oldest ready
    /// warp's group.
    #[test]
    fn gto_between_groups_round_robin_inside() {
        let mut s = TwoLevel::default();
        let age = [1, 2, 3, 0];
        let info = WarpInfo {
            age: &age,
            issued: &[0; 4],
            group: &[7, 7, 7, 9],
        };
        assert_eq!(s.pick(&[0, 1, 2], &info), 0); // oldest ready: slot 0, group 7
        assert_eq!(s.pick(&[0, 1, 2, 3], &info), 1); // group 7 still ready: its next warp
        assert_eq!(s.pick(&[0, 1, 2, 3], &info), 2);
        assert_eq!(s.pick(&[0, 1, 2, 3], &info), 0); // wraps
        assert_eq!(s.pick(&[3], &info), 3); // group 7 stalled: group 9
        assert_eq!(s.pick(&[1, 3], &info), 3); // greedy on group 9
                                               // Without groups every warp is its own group: GTO.
        let mut s = TwoLevel::default();
        let none = WarpInfo {
            age: &age,
            issued: &[0; 4],
            group: &[],
        };
        assert_eq!(s.pick(&[0, 1, 2], &none), 0);
        assert_eq!(s.pick(&[0, 1, 2], &none), 0);
        assert_eq!(s.pick(&[1, 2, 3], &none), 3);
    }
}
