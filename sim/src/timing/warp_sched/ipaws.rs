//! iPAWS: instruction-issue pattern-based adaptive warp scheduling (Lee et al., seed paper
//! 001; §3, Algorithm 1). Per kernel, three phases on every SM:
//!
//! - **Adapt** (§3.1-3.3): GTO, counting per warp the instructions issued (`inst`), the
//!   barrier waiting time (`btime`) and the instruction-issue stall counter, until the
//!   first warp of the SM finishes. Then Algorithm 1 on the warps-of-interest (WOI):
//!   `iscore_i = inst_i + btime_i`, `iscore_thr = W * iscore_max / 2`; `iscore_sum <
//!   iscore_thr` is a concave pattern (keep GTO), otherwise convex (switch to RR).
//! - **Recover** (§3.4, convex only): least instructions issued ([`super::Lii`]) until the
//!   newest warp, the one with the fewest instructions when Adapt ended, has issued as many
//!   as the most any warp of the SM had then (or finishes).
//! - **Execute**: GTO (concave) or RR (convex) to the end of the kernel.
//!
//! The decision is the first SM's to end Adapt, for every SM (§5.4: "we also used the
//! adaptive decision results from the first core"): an SM still in Adapt switches at its
//! next scheduling step after that, with its own counts for Recover.
//!
//! Choices where the paper leaves room (docs/VALIDATION.md, "iPAWS", lists them):
//! - `btime_i` counts the instructions the SM issues while warp `i` waits at a barrier
//!   ("the instruction-issue score is increased ... when the warp is stalled at a barrier
//!   and another warp issues an instruction", §3.3), so it is in the unit of `inst`.
//! - The stall counter of a warp counts the cycles in which it was its scheduler's first
//!   choice and did not issue. Under GTO the first choice is the greedy warp (the one issued
//!   last), else the oldest: GTO's priority order, in which the greedy warp stands first.
//!   A memory-bound SM thus charges its stall cycles to the newest warp GTO reached before
//!   the SM stalled, which is the WOI limit §3.2 / Fig. 8 describe ("newer warps do not
//!   receive a fair opportunity to issue instructions").
//! - The WOI are the warps older than the oldest warp with the highest stall count, and that
//!   warp itself (so W >= 1); with no stalls at all, every warp of the SM.
//! - All warps resident on the SM count (across TBs, §3.2), the finished one included.

use super::{Gto, Lii, Lrr, WarpInfo, WarpPolicyInfo, WarpScheduler};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

/// One warp's Adapt-phase counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpSample {
    /// Dispatch order on the SM (smaller is older).
    pub age: u64,
    /// Instructions issued.
    pub inst: u64,
    /// Barrier waiting time (instructions the SM issued while the warp waited).
    pub btime: u64,
    /// Instruction-issue stall counter.
    pub stall: u64,
}

/// The outcome of Algorithm 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Warps on the SM when Adapt ended.
    pub warps: u32,
    /// W: the warps-of-interest.
    pub warps_of_interest: u32,
    /// The sum of `iscore` over the WOI.
    pub iscore_sum: u64,
    /// The largest `iscore` among the WOI.
    pub iscore_max: u64,
    /// `iscore_sum >= W * iscore_max / 2`: switch to RR.
    pub convex: bool,
}

impl Verdict {
    /// `iscore_thr = W * iscore_max / 2`.
    pub fn threshold(&self) -> f64 {
        f64::from(self.warps_of_interest) * self.iscore_max as f64 / 2.0
    }
}

/// Algorithm 1 over the warps of one SM (any order).
pub fn classify(samples: &[WarpSample]) -> Verdict {
    let mut v = samples.to_vec();
    v.sort_by_key(|s| s.age);
    let top = v.iter().map(|s| s.stall).max().unwrap_or(0);
    let w = if top == 0 {
        v.len()
    } else {
        // The oldest warp with the highest count is the limit.
        v.iter()
            .position(|s| s.stall == top)
            .map_or(v.len(), |i| i + 1)
    };
    let woi = &v[..w];
    let score = |s: &WarpSample| s.inst + s.btime;
    let max = woi.iter().map(score).max().unwrap_or(0);
    let sum: u64 = woi.iter().map(score).sum();
    Verdict {
        warps: v.len() as u32,
        warps_of_interest: w as u32,
        iscore_sum: sum,
        iscore_max: max,
        // iscore_sum < W * max / 2 is concave; in integers, 2 * sum < W * max.
        convex: 2 * u128::from(sum) >= w as u128 * u128::from(max),
    }
}

/// The kernel's decision, made once by the first SM to end Adapt and read by every SM.
#[derive(Debug, Default)]
pub struct KernelDecision(OnceLock<Decided>);

/// Who decided, when, and what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The SM whose Adapt phase ended first.
    pub sm: u32,
    /// The cycle it ended.
    pub cycle: u64,
    /// Its Algorithm 1 outcome.
    pub verdict: Verdict,
}

impl KernelDecision {
    /// The decision, once made.
    pub fn get(&self) -> Option<&Decided> {
        self.0.get()
    }

    /// The stats of a run: the decision and every SM's phase times (`sms`, SM order).
    pub fn stats(&self, sms: Vec<SmPhases>) -> IpawsStats {
        let d = self.get();
        let v = d.map(|d| d.verdict).unwrap_or_default();
        let recover_cycles = sms
            .iter()
            .filter_map(|p| Some(p.recover_end_cycle? - p.adapt_end_cycle?))
            .max()
            .unwrap_or(0);
        IpawsStats {
            decision: match d {
                None => "undecided",
                Some(d) if d.verdict.convex => "convex",
                Some(_) => "concave",
            }
            .to_string(),
            execute_policy: match d {
                None => "gto",
                Some(d) if d.verdict.convex => "lrr",
                Some(_) => "gto",
            }
            .to_string(),
            decided_by_sm: d.map(|d| d.sm),
            adapt_cycles: d.map(|d| d.cycle),
            recover_cycles,
            warps: v.warps,
            warps_of_interest: v.warps_of_interest,
            iscore_sum: v.iscore_sum,
            iscore_max: v.iscore_max,
            iscore_threshold: v.threshold(),
            sms,
        }
    }
}

/// One SM's phase boundaries (core cycles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmPhases {
    /// When the SM left Adapt (`null`: it never scheduled after the decision).
    pub adapt_end_cycle: Option<u64>,
    /// When it left Recover for RR (`null`: concave, or never left).
    pub recover_end_cycle: Option<u64>,
}

/// The `ipaws` object of the stats JSON (`--warp-policy ipaws` only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IpawsStats {
    /// `concave` (GTO kept), `convex` (Recover with LII, then RR) or `undecided` (no
    /// warp finished).
    pub decision: String,
    /// The Execute phase's policy: `gto` or `lrr`.
    pub execute_policy: String,
    /// The SM that decided (the first to end Adapt).
    pub decided_by_sm: Option<u32>,
    /// The kernel's Adapt phase: cycles from the start until the decision.
    pub adapt_cycles: Option<u64>,
    /// The longest Recover phase of any SM, in cycles (0 when concave).
    pub recover_cycles: u64,
    /// Warps on the deciding SM when it decided.
    pub warps: u32,
    /// W, the warps-of-interest among them.
    pub warps_of_interest: u32,
    /// The sum of `inst + btime` over the WOI.
    pub iscore_sum: u64,
    /// The largest `inst + btime` among the WOI.
    pub iscore_max: u64,
    /// `W * iscore_max / 2`.
    pub iscore_threshold: f64,
    /// Per SM, its phase boundaries.
    pub sms: Vec<SmPhases>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Adapt,
    /// LII until `laggard` has issued `target` instructions (or finished).
    Recover {
        laggard: u32,
        target: u64,
    },
    Execute,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Slot {
    #[default]
    Empty,
    Live,
    Done,
}

/// One SM's iPAWS state.
#[derive(Debug)]
pub struct Ipaws {
    sm: u32,
    decision: Arc<KernelDecision>,
    phase: Phase,
    convex: bool,
    gto: Vec<Gto>,
    rr: Vec<Lrr>,
    slots: Vec<Slot>,
    stall: Vec<u64>,
    btime: Vec<u64>,
    /// While a warp waits at a barrier: `core_issued` when it started.
    bar_since: Vec<Option<u64>>,
    /// Instructions the SM issued.
    core_issued: u64,
    /// Per scheduler: its first choice (the warp issued last) and when it last issued.
    head: Vec<Option<(u32, u64)>>,
    phases: SmPhases,
}

impl Ipaws {
    /// SM `sm` with `schedulers` schedulers over `slots` warp slots.
    pub fn new(sm: u32, schedulers: usize, slots: usize, decision: Arc<KernelDecision>) -> Ipaws {
        Ipaws {
            sm,
            decision,
            phase: Phase::Adapt,
            convex: false,
            gto: vec![Gto::default(); schedulers],
            rr: vec![Lrr::default(); schedulers],
            slots: vec![Slot::Empty; slots],
            stall: vec![0; slots],
            btime: vec![0; slots],
            bar_since: vec![None; slots],
            core_issued: 0,
            head: vec![None; schedulers],
            phases: SmPhases::default(),
        }
    }

    /// The SM's phase boundaries so far.
    pub fn phases(&self) -> SmPhases {
        self.phases
    }

    /// Scheduler `k` picks one of `ready` at `now`.
    pub fn pick(&mut self, k: usize, ready: &[u32], info: &WarpInfo<'_>, now: u64) -> u32 {
        if self.phase == Phase::Adapt {
            if let Some(d) = self.decision.get().copied() {
                self.switch(d.verdict.convex, info, now);
            }
        }
        match self.phase {
            Phase::Adapt => {
                let w = self.gto[k].pick(ready, info);
                // The first choice since the last issue stalled in every cycle in between,
                // and in this one too unless it is the warp picked.
                if let Some((h, t0)) = self.head[k] {
                    let gap = now.saturating_sub(t0);
                    let stalled = if h == w { gap.saturating_sub(1) } else { gap };
                    if let Some(c) = self.stall.get_mut(h as usize) {
                        *c += stalled;
                    }
                }
                self.head[k] = Some((w, now));
                w
            }
            Phase::Recover { .. } => Lii.pick(ready, info),
            Phase::Execute if self.convex => self.rr[k].pick(ready, info),
            Phase::Execute => self.gto[k].pick(ready, info),
        }
    }

    /// A warp was launched into `slot`.
    pub fn on_launch(&mut self, slot: u32) {
        let s = slot as usize;
        if s < self.slots.len() {
            self.slots[s] = Slot::Live;
            self.stall[s] = 0;
            self.btime[s] = 0;
            self.bar_since[s] = None;
        }
    }

    /// The warp in `slot` issued at `now` (`issued` already counts it).
    pub fn on_issue(&mut self, slot: u32, issued: &[u64], now: u64) {
        self.core_issued += 1;
        if let Phase::Recover { laggard, target } = self.phase {
            if slot == laggard && issued.get(slot as usize).copied().unwrap_or(0) >= target {
                self.end_recover(now);
            }
        }
    }

    /// The warp in `slot` starts waiting at a barrier.
    pub fn on_barrier_wait(&mut self, slot: u32) {
        if let Some(b) = self.bar_since.get_mut(slot as usize) {
            *b = Some(self.core_issued);
        }
    }

    /// The warp in `slot` leaves its barrier.
    pub fn on_barrier_release(&mut self, slot: u32) {
        let s = slot as usize;
        if let Some(Some(t)) = self.bar_since.get_mut(s).map(Option::take) {
            self.btime[s] += self.core_issued - t;
        }
    }

    /// The warp in `slot` finished at `now`.
    pub fn on_warp_done(&mut self, slot: u32, age: &[u64], issued: &[u64], now: u64) {
        let s = slot as usize;
        let info = WarpInfo {
            age,
            issued,
            group: &[],
        };
        match self.phase {
            Phase::Adapt => {
                // Charge the first choices' stalls up to now (the finished warp's too).
                for (h, t0) in self.head.iter_mut().flatten() {
                    if let Some(c) = self.stall.get_mut(*h as usize) {
                        *c += now.saturating_sub(*t0);
                    }
                    *t0 = now;
                }
                if s < self.slots.len() {
                    self.slots[s] = Slot::Done;
                }
                let d = match self.decision.get() {
                    Some(d) => *d,
                    None => {
                        let verdict = classify(&self.samples(age, issued));
                        *self.decision.0.get_or_init(|| Decided {
                            sm: self.sm,
                            cycle: now,
                            verdict,
                        })
                    }
                };
                self.switch(d.verdict.convex, &info, now);
            }
            Phase::Recover { laggard, .. } => {
                if s < self.slots.len() {
                    self.slots[s] = Slot::Done;
                }
                if laggard == slot {
                    self.end_recover(now);
                }
            }
            Phase::Execute => {
                if s < self.slots.len() {
                    self.slots[s] = Slot::Done;
                }
            }
        }
        for h in &mut self.head {
            if h.is_some_and(|(w, _)| w == slot) {
                *h = None;
            }
        }
    }

    /// The Adapt-phase counters of the warps on the SM (live or finished).
    fn samples(&self, age: &[u64], issued: &[u64]) -> Vec<WarpSample> {
        (0..self.slots.len())
            .filter(|&s| self.slots[s] != Slot::Empty)
            .map(|s| WarpSample {
                age: age.get(s).copied().unwrap_or(0),
                inst: issued.get(s).copied().unwrap_or(0),
                btime: self.btime[s]
                    + self.bar_since[s].map_or(0, |t| self.core_issued.saturating_sub(t)),
                stall: self.stall[s],
            })
            .collect()
    }

    /// Ends Adapt at `now` with the kernel's decision.
    fn switch(&mut self, convex: bool, info: &WarpInfo<'_>, now: u64) {
        self.phases.adapt_end_cycle = Some(now);
        self.convex = convex;
        self.phase = Phase::Execute;
        if !convex {
            return;
        }
        let count = |s: usize| info.issued.get(s).copied().unwrap_or(0);
        let target = (0..self.slots.len())
            .filter(|&s| self.slots[s] != Slot::Empty)
            .map(count)
            .max()
            .unwrap_or(0);
        // The newest among the live warps with the fewest instructions.
        let laggard = (0..self.slots.len())
            .filter(|&s| self.slots[s] == Slot::Live)
            .min_by_key(|&s| {
                (
                    count(s),
                    std::cmp::Reverse(info.age.get(s).copied().unwrap_or(0)),
                )
            });
        match laggard {
            Some(l) if count(l) < target => {
                self.phase = Phase::Recover {
                    laggard: l as u32,
                    target,
                }
            }
            _ => self.phases.recover_end_cycle = Some(now),
        }
    }

    fn end_recover(&mut self, now: u64) {
        self.phase = Phase::Execute;
        self.phases.recover_end_cycle = Some(now);
    }
}

/// iPAWS.
pub const IPAWS: WarpPolicyInfo = WarpPolicyInfo {
    name: "ipaws",
    aliases: &[],
    description: "iPAWS (Algorithm 1): GTO, then GTO or LII+RR by the instruction-issue pattern (stats key `ipaws`)",
    make: || Box::new(Gto::default()),
    ipaws: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(age: u64, inst: u64, btime: u64, stall: u64) -> WarpSample {
        WarpSample {
            age,
            inst,
            btime,
            stall,
        }
    }

    #[test]
    fn concave_pattern_keeps_gto() {
        // Fig. 7(a)-like: four warps, older ones issued far more. No stalls: W = 4.
        // iscore_max = 100, thr = 4 * 100 / 2 = 200; sum = 100 + 40 + 20 + 10 = 170 < 200.
        let v = classify(&[
            warp(0, 100, 0, 0),
            warp(1, 40, 0, 0),
            warp(2, 20, 0, 0),
            warp(3, 10, 0, 0),
        ]);
        assert_eq!(v.warps_of_interest, 4);
        assert_eq!(v.iscore_max, 100);
        assert_eq!(v.iscore_sum, 170);
        assert_eq!(v.threshold(), 200.0);
        assert!(!v.convex);
    }

    #[test]
    fn convex_pattern_switches() {
        // Fig. 7(b)-like: 100, 90, 80, 70: sum 340 >= thr 200.
        let v = classify(&[
            warp(3, 70, 0, 0),
            warp(0, 100, 0, 0),
            warp(2, 80, 0, 0),
            warp(1, 90, 0, 0),
        ]);
        assert_eq!((v.iscore_sum, v.iscore_max), (340, 100));
        assert!(v.convex);
        // Exactly at the threshold is convex ("if iscore_sum < iscore_thr then concave").
        let v = classify(&[warp(0, 100, 0, 0), warp(1, 0, 0, 0)]);
        assert_eq!((v.iscore_sum, v.threshold()), (100, 100.0));
        assert!(v.convex);
    }

    #[test]
    fn warps_of_interest_cut_at_the_stall_peak() {
        // Fig. 8-like: warps 0-2 issued evenly, warps 3-5 never got a chance. Over all six
        // warps: max 50, thr 6 * 50 / 2 = 150, sum 50 + 48 + 46 = 144 < 150: concave
        // (wrong). The stall counts peak at warp 2 (ties with warp 4: the oldest wins), so
        // W = 3: thr 75, sum 144 >= 75: convex.
        let warps = [
            warp(0, 50, 0, 1),
            warp(1, 48, 0, 3),
            warp(2, 46, 0, 9),
            warp(3, 0, 0, 2),
            warp(4, 0, 0, 9),
            warp(5, 0, 0, 0),
        ];
        let v = classify(&warps);
        assert_eq!(v.warps, 6);
        assert_eq!(v.warps_of_interest, 3);
        assert_eq!(v.iscore_sum, 144);
        assert_eq!(v.threshold(), 75.0);
        assert!(v.convex);
        let no_stalls: Vec<_> = warps.iter().map(|w| warp(w.age, w.inst, 0, 0)).collect();
        let v = classify(&no_stalls);
        assert_eq!((v.warps_of_interest, v.iscore_sum), (6, 144));
        assert!(!v.convex);
    }

    #[test]
    fn barrier_time_restores_a_concave_pattern() {
        // Fig. 9-like: a barrier evens the instructions issued (30, 30, 28, 28: W = 4,
        // max 30, thr 60, sum 116: convex).
        let v = classify(&[
            warp(0, 30, 0, 0),
            warp(1, 30, 0, 0),
            warp(2, 28, 0, 0),
            warp(3, 28, 0, 0),
        ]);
        assert!(v.convex);
        // Six warps issued 30, 28, ..., 28 (sum 170 >= thr 6 * 30 / 2 = 90: convex by
        // `inst` alone), but the oldest waited at barriers while the SM issued 170
        // instructions: iscores 200, 28 x 5, sum 340 < thr 6 * 200 / 2 = 600: concave.
        let v = classify(&[
            warp(0, 30, 170, 0),
            warp(1, 28, 0, 0),
            warp(2, 28, 0, 0),
            warp(3, 28, 0, 0),
            warp(4, 28, 0, 0),
            warp(5, 28, 0, 0),
        ]);
        assert_eq!((v.iscore_max, v.iscore_sum), (200, 340));
        assert_eq!(v.threshold(), 600.0);
        assert!(!v.convex);
    }

    /// Drives one SM's iPAWS as the SM does: `issue` picks among `ready` and counts.
    struct Core {
        ip: Ipaws,
        age: Vec<u64>,
        issued: Vec<u64>,
    }

    impl Core {
        fn new(sm: u32, slots: usize, d: &Arc<KernelDecision>) -> Core {
            let mut ip = Ipaws::new(sm, 1, slots, Arc::clone(d));
            for s in 0..slots as u32 {
                ip.on_launch(s);
            }
            Core {
                ip,
                age: (0..slots as u64).collect(),
                issued: vec![0; slots],
            }
        }
        fn issue(&mut self, ready: &[u32], now: u64) -> u32 {
            let info = WarpInfo {
                age: &self.age,
                issued: &self.issued,
                group: &[],
            };
            let w = self.ip.pick(0, ready, &info, now);
            self.issued[w as usize] += 1;
            self.ip.on_issue(w, &self.issued, now);
            w
        }
        fn done(&mut self, slot: u32, now: u64) {
            self.ip.on_warp_done(slot, &self.age, &self.issued, now);
        }
    }

    #[test]
    fn adapt_counts_stalls_of_the_first_choice() {
        // One scheduler, three warps. Cycle 0: 0 issues (GTO: oldest). Cycle 1: 0 again.
        // Cycles 2-4: nothing issues; cycle 5: warp 1 issues (0 stalled in cycles 2, 3, 4
        // and 5: 4 counts). Cycle 6: 1 issues. Cycle 9: 2 issues (1 stalled in 7, 8, 9: 3).
        // Warp 0 finishes at cycle 10: 2 (first choice since 9) is charged 10 - 9 = 1.
        let d = Arc::new(KernelDecision::default());
        let mut c = Core::new(0, 3, &d);
        assert_eq!(c.issue(&[0, 1, 2], 0), 0);
        assert_eq!(c.issue(&[0, 1, 2], 1), 0);
        assert_eq!(c.issue(&[1, 2], 5), 1);
        assert_eq!(c.issue(&[1, 2], 6), 1);
        assert_eq!(c.issue(&[2], 9), 2);
        assert_eq!(c.ip.stall, vec![4, 3, 0]);
        c.done(0, 10);
        assert_eq!(c.ip.stall, vec![4, 3, 1]);
        // Peak at warp 0: W = 1, iscore 2: sum 2 >= thr 1: convex.
        let dec = d.get().copied().expect("decided");
        assert_eq!(dec.sm, 0);
        assert_eq!(dec.cycle, 10);
        assert_eq!(dec.verdict.warps, 3);
        assert_eq!(dec.verdict.warps_of_interest, 1);
        assert!(dec.verdict.convex);
    }

    #[test]
    fn barrier_time_counts_other_warps_issues() {
        // Warp 0 waits at a barrier while warps 1 and 2 issue 5 instructions in all.
        let d = Arc::new(KernelDecision::default());
        let mut c = Core::new(0, 3, &d);
        c.issue(&[0], 0);
        c.ip.on_barrier_wait(0);
        for t in 1..4 {
            c.issue(&[1], t);
        }
        c.issue(&[2], 4);
        c.issue(&[2], 5);
        c.ip.on_barrier_release(0);
        c.issue(&[0], 6);
        assert_eq!(c.ip.btime, vec![5, 0, 0]);
        // Waiting still counts when Adapt ends mid-wait.
        c.ip.on_barrier_wait(1);
        c.issue(&[2], 7);
        let s = c.ip.samples(&c.age, &c.issued);
        assert_eq!(s[1].btime, 1);
    }

    #[test]
    fn recover_with_lii_until_the_newest_warp_catches_up_then_rr() {
        let d = Arc::new(KernelDecision::default());
        let mut c = Core::new(0, 4, &d);
        // GTO issues 0 six times, then 1 four times, 2 four times and 3 twice (each one
        // becomes the greedy warp when the previous one leaves `ready`).
        let mut t = 0;
        for (w, n) in [(0u32, 6), (1, 4), (2, 4), (3, 2)] {
            for _ in 0..n {
                let ready: Vec<u32> = (w..4).collect();
                assert_eq!(c.issue(&ready, t), w);
                t += 1;
            }
        }
        assert_eq!(c.issued, vec![6, 4, 4, 2]);
        // Warp 0 finishes at 16: each first choice stalled once, in the cycle the next
        // warp issued instead (0 at 6, 1 at 10, 2 at 14), and 3 (first choice since 15)
        // is charged 16 - 15 = 1. The peak (1) is first reached by warp 0: W = 1, sum 6
        // >= thr 1 * 6 / 2: convex.
        c.done(0, t);
        assert_eq!(c.ip.stall, vec![1, 1, 1, 1]);
        let v = d.get().expect("decided").verdict;
        assert!(v.convex);
        // Recover: target 6 (warp 0's count), laggard 3 (fewest, 2).
        assert_eq!(
            c.ip.phase,
            Phase::Recover {
                laggard: 3,
                target: 6
            }
        );
        assert_eq!(c.ip.phases().adapt_end_cycle, Some(16));
        // LII: 3 (2) until it has 4, then ties 1, 2, 3 at 4: the oldest, 1; then 2; then
        // 3 (4 < 5), ...
        let order: Vec<u32> = (0..4).map(|i| c.issue(&[1, 2, 3], 20 + i)).collect();
        assert_eq!(order, vec![3, 3, 1, 2]);
        assert!(matches!(c.ip.phase, Phase::Recover { .. }));
        assert_eq!(c.issue(&[1, 2, 3], 24), 3); // 3 reaches 5
        assert_eq!(c.issue(&[1, 2, 3], 25), 1); // 1: 5 (tie with 3, older)
        assert_eq!(c.issue(&[1, 2, 3], 26), 2); // 2: 5
        assert_eq!(c.issue(&[1, 2, 3], 27), 3); // 3: 6 = target: Recover ends
        assert_eq!(c.ip.phase, Phase::Execute);
        assert_eq!(c.ip.phases().recover_end_cycle, Some(27));
        // Execute: round robin.
        let order: Vec<u32> = (0..4).map(|i| c.issue(&[1, 2, 3], 30 + i)).collect();
        assert_eq!(order, vec![1, 2, 3, 1]);
    }

    #[test]
    fn concave_keeps_gto_and_the_first_sm_decides_for_all() {
        let d = Arc::new(KernelDecision::default());
        let mut a = Core::new(0, 4, &d);
        let mut b = Core::new(1, 4, &d);
        // SM 1 issues 40 from warp 0 and 1 from each other warp, stalling warp 3 (its first
        // choice after cycle 43) until cycle 50, when warp 0 finishes.
        for t in 0..40 {
            assert_eq!(b.issue(&[0, 1, 2, 3], t), 0);
        }
        assert_eq!(b.issue(&[1, 2, 3], 40), 1);
        assert_eq!(b.issue(&[2, 3], 41), 2);
        assert_eq!(b.issue(&[3], 42), 3);
        b.done(0, 50);
        // Stalls: 0 charged 1 at 40, 1 at 41, 2 at 42, 3 from 42 to 50: 8. W = 4 (peak at
        // the newest), iscores 40, 1, 1, 1: sum 43 < 4 * 40 / 2 = 80: concave.
        let dec = d.get().copied().expect("decided");
        assert_eq!(dec.sm, 1);
        assert_eq!(dec.verdict.warps_of_interest, 4);
        assert_eq!(dec.verdict.iscore_sum, 43);
        assert!(!dec.verdict.convex);
        assert_eq!(b.ip.phase, Phase::Execute);
        // SM 0, still in Adapt, adopts it at its next pick and stays with GTO.
        assert_eq!(a.issue(&[1, 2], 60), 1);
        assert_eq!(a.ip.phases().adapt_end_cycle, Some(60));
        assert_eq!(a.ip.phases().recover_end_cycle, None);
        assert_eq!(a.issue(&[1, 2], 61), 1);
        let st = d.stats(vec![a.ip.phases(), b.ip.phases()]);
        assert_eq!(st.decision, "concave");
        assert_eq!(st.execute_policy, "gto");
        assert_eq!(st.adapt_cycles, Some(50));
        assert_eq!(st.recover_cycles, 0);
        assert_eq!(st.iscore_threshold, 80.0);
    }
}
