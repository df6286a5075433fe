//! Named CTA barriers (PTX ISA 9.7.13.1, `bar` / `barrier`): 16 per TB, each counting
//! arrivals per warp (a warp counts as the warp size whatever its active lanes) until the
//! expected number of threads has arrived, then releasing the warps that wait on it.
//!
//! `bar.sync` and `bar.red` wait; `bar.arrive` only counts (the producer side of a
//! producer/consumer pair). Without a thread count a barrier expects every warp of the TB
//! that has not exited, so a warp exiting may complete it. Completion releases the waiting
//! warps at once, in the state shared by the TB's warps; the TB ([`super::TbExec`]) applies
//! the releases to its warps after each step, so a warp that arrives again before the others
//! resume waits on the next phase, as on hardware.
//!
//! When no warp can step and some wait, the TB is deadlocked (half the TB at `bar.sync 0`,
//! the other half at `bar.sync 1`): [`Barriers::deadlock`] describes who waits where.

/// Barriers per TB (barrier numbers 0..15).
pub const NUM_BARRIERS: u32 = 16;

/// Threads per warp: barrier thread counts are multiples of it and arrivals count per warp.
pub const WARP_SIZE: u32 = 32;

/// One warp's barrier instruction, as the timing model needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierArrival {
    /// Barrier number (0..15).
    pub id: u8,
    /// Warps the barrier waits for; 0 for every warp of the TB that has not exited.
    pub warps: u16,
    /// Whether the warp waits (`bar.sync`, `bar.red`) or only arrives (`bar.arrive`).
    pub wait: bool,
}

impl BarrierArrival {
    /// Packs the arrival into 16 bits (bits 0-3 id, 4 wait, 5-15 warps), so a trace record
    /// carries it without growing.
    pub fn pack(self) -> u16 {
        u16::from(self.id & 0xF) | u16::from(self.wait) << 4 | (self.warps.min(0x7FF) << 5)
    }

    /// The inverse of [`BarrierArrival::pack`].
    pub fn unpack(v: u16) -> BarrierArrival {
        BarrierArrival {
            id: (v & 0xF) as u8,
            warps: v >> 5,
            wait: v >> 4 & 1 != 0,
        }
    }
}

/// The accumulators of `bar.red`: population count, all true, any true.
pub(crate) type RedAcc = (u64, bool, bool);

const RED_INIT: RedAcc = (0, true, false);

#[derive(Clone, Debug)]
struct Barrier {
    /// Warps arrived in the current phase.
    arrived: u32,
    /// Warps expected (0: every warp that has not exited).
    expected: u32,
    red: RedAcc,
    /// Warps waiting, in arrival order.
    waiting: Vec<u32>,
}

impl Default for Barrier {
    fn default() -> Self {
        Barrier {
            arrived: 0,
            expected: 0,
            red: RED_INIT,
            waiting: Vec::new(),
        }
    }
}

/// The 16 barriers of one TB.
#[derive(Clone, Debug)]
pub(crate) struct Barriers {
    bars: [Barrier; NUM_BARRIERS as usize],
    /// Warps of the TB that have not exited.
    live: u32,
    /// Warps released since the TB last applied releases, with their `bar.red` results.
    released: Vec<(u32, RedAcc)>,
}

impl Barriers {
    /// The barriers of a TB of `warps` warps.
    pub(crate) fn new(warps: u32) -> Barriers {
        Barriers {
            bars: Default::default(),
            live: warps,
            released: Vec::new(),
        }
    }

    /// Warp `warp` arrives at barrier `id` (< [`NUM_BARRIERS`]) expecting `expected` warps
    /// (0: all live ones), contributing `red` (popc, all, any) to a `bar.red`. Returns the
    /// reduction result when this arrival completes the barrier; otherwise, when `wait`, the
    /// warp is recorded as waiting.
    pub(crate) fn arrive(
        &mut self,
        warp: u32,
        id: u32,
        expected: u32,
        red: Option<RedAcc>,
        wait: bool,
    ) -> Option<RedAcc> {
        let b = self.bars.get_mut(id as usize)?;
        if expected != 0 {
            b.expected = expected;
        }
        b.arrived += 1;
        if let Some((popc, all, any)) = red {
            b.red.0 += popc;
            b.red.1 &= all;
            b.red.2 |= any;
        }
        if b.arrived >= need(b, self.live) {
            return Some(self.complete(id as usize));
        }
        if wait {
            b.waiting.push(warp);
        }
        None
    }

    /// A warp has exited: barriers that expect every live warp may now be complete.
    pub(crate) fn warp_exited(&mut self) {
        self.live = self.live.saturating_sub(1);
        for id in 0..self.bars.len() {
            let b = &self.bars[id];
            if b.arrived > 0 && b.expected == 0 && b.arrived >= self.live {
                self.complete(id);
            }
        }
    }

    fn complete(&mut self, id: usize) -> RedAcc {
        let Some(b) = self.bars.get_mut(id) else {
            return RED_INIT;
        };
        let r = b.red;
        self.released.extend(b.waiting.drain(..).map(|w| (w, r)));
        b.arrived = 0;
        b.expected = 0;
        b.red = RED_INIT;
        r
    }

    /// Takes the warps released since the last call.
    pub(crate) fn take_released(&mut self, out: &mut Vec<(u32, RedAcc)>) {
        out.clear();
        out.append(&mut self.released);
    }

    /// Whether any warp has been released and not yet taken.
    #[inline]
    pub(crate) fn has_released(&self) -> bool {
        !self.released.is_empty()
    }

    /// The barriers warps wait on: `(barrier, arrived warps, expected warps, waiting warps)`.
    pub(crate) fn waits(&self) -> impl Iterator<Item = (u32, u32, u32, &[u32])> + '_ {
        self.bars.iter().enumerate().filter_map(move |(id, b)| {
            (!b.waiting.is_empty()).then_some((
                id as u32,
                b.arrived,
                need(b, self.live),
                b.waiting.as_slice(),
            ))
        })
    }
}

/// Warps barrier `b` waits for, with `live` warps not exited.
fn need(b: &Barrier, live: u32) -> u32 {
    if b.expected == 0 {
        live
    } else {
        b.expected
    }
}

/// `first-last` ranges of sorted warp ids (`0-1, 4`).
pub(crate) fn ranges(ids: &[u32]) -> String {
    let mut v = ids.to_vec();
    v.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_barrier_completes_at_its_count() {
        let mut b = Barriers::new(4);
        // bar.sync 1, 64: two warps.
        assert_eq!(b.arrive(0, 1, 2, None, true), None);
        assert!(!b.has_released());
        assert!(b.arrive(3, 1, 2, None, true).is_some());
        let mut out = Vec::new();
        b.take_released(&mut out);
        assert_eq!(out.iter().map(|r| r.0).collect::<Vec<_>>(), vec![0]);
        // The next phase starts empty.
        assert_eq!(b.arrive(1, 1, 2, None, false), None);
        assert_eq!(b.waits().count(), 0);
    }

    #[test]
    fn whole_tb_barrier_and_exits() {
        let mut b = Barriers::new(3);
        assert_eq!(b.arrive(0, 0, 0, Some((5, true, true)), true), None);
        assert_eq!(b.arrive(1, 0, 0, Some((2, false, true)), true), None);
        let w: Vec<_> = b
            .waits()
            .map(|(id, a, n, ws)| (id, a, n, ws.to_vec()))
            .collect();
        assert_eq!(w, vec![(0, 2, 3, vec![0, 1])]);
        // The third warp exits instead of arriving: the barrier completes.
        b.warp_exited();
        let mut out = Vec::new();
        b.take_released(&mut out);
        assert_eq!(out, vec![(0, (7, false, true)), (1, (7, false, true))]);
    }

    #[test]
    fn pack_round_trips() {
        let a = BarrierArrival {
            id: 15,
            warps: 32,
            wait: true,
        };
        assert_eq!(BarrierArrival::unpack(a.pack()), a);
        assert_eq!(ranges(&[4, 0, 1, 2, 7, 8]), "0-2, 4, 7-8");
    }
}
