//! The warp side of barriers (PTX ISA 9.7.13.1): the checked operands of a `bar` /
//! `barrier` instruction (number, thread count) and the delivery of a `bar.red` result to
//! the arriving lanes. The TB side (arrivals, generations) is [`crate::interp::barrier`].

use super::{for_bits, TbCtx, Warp};
use crate::error::SimError;
use crate::interp::barrier::{RedAcc, NUM_BARRIERS, WARP_SIZE};
use crate::interp::ops::*;

impl Warp {
    /// Writes the result `r` of a `bar.red` of kind `k` into `d` for `lanes`.
    pub(crate) fn deliver_red(&mut self, k: BarRed, d: u32, lanes: u32, r: RedAcc) {
        let (popc, all, any) = r;
        let v = match k {
            BarRed::Popc => popc,
            BarRed::And => u64::from(all),
            BarRed::Or => u64::from(any),
        };
        for lane in 0..32 {
            if lanes >> lane & 1 != 0 {
                self.set_reg(d, lane, v);
            }
        }
    }

    /// The barrier number and the warps expected (0: the whole TB) of a barrier
    /// instruction, checked as the PTX ISA requires (9.7.13.1): number 0..15, the same in
    /// every lane, a thread count that is a positive multiple of the warp size and no more
    /// than the TB has.
    pub(super) fn barrier_operands(
        &self,
        tb: &TbCtx<'_>,
        pc: u32,
        exec: u32,
        id: Src,
        count: Option<Src>,
    ) -> Result<(u32, u32), SimError> {
        let lane = exec.trailing_zeros() as usize;
        let err = |why: String| SimError::Barrier {
            why,
            loc: tb.loc(self.id, lane, pc),
        };
        let uniform = |s: Src| -> Result<u64, SimError> {
            let v = self.gather(s);
            let first = v[lane];
            let mut odd = 0u32;
            for_bits(exec, |l| odd |= u32::from(v[l] != first) << l);
            if odd != 0 {
                return Err(SimError::Barrier {
                    why: format!(
                        "barrier operand differs between lanes ({first} in lane {lane}, {} in lane {})",
                        v[odd.trailing_zeros() as usize],
                        odd.trailing_zeros()
                    ),
                    loc: tb.loc(self.id, odd.trailing_zeros() as usize, pc),
                });
            }
            Ok(first)
        };
        let b = uniform(id)? & 0xFFFF_FFFF;
        if b >= u64::from(NUM_BARRIERS) {
            return Err(err(format!(
                "barrier number {b} out of range (a TB has {NUM_BARRIERS} barriers, 0..{})",
                NUM_BARRIERS - 1
            )));
        }
        let Some(c) = count else {
            return Ok((b as u32, 0));
        };
        let c = uniform(c)? & 0xFFFF_FFFF;
        let threads: u64 = tb.ntid.iter().map(|&v| u64::from(v)).product();
        let warps = threads.div_ceil(u64::from(WARP_SIZE));
        if c == 0 || c % u64::from(WARP_SIZE) != 0 {
            return Err(err(format!(
                "barrier {b} thread count {c} is not a positive multiple of the warp size ({WARP_SIZE})"
            )));
        }
        if c / u64::from(WARP_SIZE) > warps {
            return Err(err(format!(
                "barrier {b} waits for {c} threads but the TB has {threads} ({warps} warps): it can never complete"
            )));
        }
        Ok((b as u32, (c / u64::from(WARP_SIZE)) as u32))
    }
}
