//! How TBs of different kernels share an SM (issue 43): a kernel and the grids it launches
//! from the device each keep their own occupancy. An SM's capacity is [`CAPACITY`] units,
//! and a TB of a kernel with `x` TBs per SM takes [`tb_weight`]`(x)` of them.

/// An SM's capacity for resident TBs, in units that divide evenly by every occupancy from
/// 1 to 32 TBs per SM (the least common multiple of 1..=32): a TB of a kernel with `x` TBs
/// per SM takes `CAPACITY / x` ([`tb_weight`]). Grids of different kernels (a kernel and the
/// grids it launches from the device, issue 43) then share an SM by their own occupancies:
/// two TBs of a kernel with 4 per SM leave room for four of one with 8. For one kernel the
/// limit is its `x` TBs, exactly as the TB contexts count them.
pub const CAPACITY: u64 = 144_403_552_893_600;

/// The share of an SM one TB takes when its kernel fits `tbs_per_sm` TBs per SM. Rounding
/// down (for occupancies above 32, which no configuration has) still admits at most
/// `tbs_per_sm` TBs, since the remainder is less than a share.
pub fn tb_weight(tbs_per_sm: u32) -> u64 {
    CAPACITY / u64::from(tbs_per_sm.max(1))
}

#[cfg(test)]
mod tests {
    use super::{tb_weight, CAPACITY};

    #[test]
    fn every_occupancy_up_to_32_fills_the_capacity_exactly() {
        for x in 1..=32u32 {
            assert_eq!(tb_weight(x) * u64::from(x), CAPACITY, "x = {x}");
        }
    }

    #[test]
    fn kernels_share_an_sm_by_their_own_occupancies() {
        // Two TBs of a kernel with 4 per SM leave room for four of one with 8, and one of
        // a kernel with 3 per SM for exactly 2 more of it beside nothing else.
        let left = CAPACITY - 2 * tb_weight(4);
        assert_eq!(left / tb_weight(8), 4);
        assert_eq!((CAPACITY - tb_weight(3)) / tb_weight(3), 2);
        // Above 32 (no configuration has it) rounding down still admits only x.
        assert_eq!(CAPACITY / tb_weight(48), 48);
    }
}
