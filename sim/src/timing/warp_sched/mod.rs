//! Warp schedulers: each SM has `warp_schedulers_per_sm` of them, warp slot `w` belonging to
//! scheduler `w % n`; every cycle each picks one of its ready warps. A new policy is one
//! file implementing [`WarpScheduler`]; [`CoreSched`] holds an SM's schedulers and the
//! per-warp counters the policies read (instructions issued since launch), and drives the
//! adaptive policy ([`ipaws`]), which switches its schedulers by phase.

mod gto;
pub mod ipaws;
mod lii;
mod lrr;
pub mod two_level;

pub use gto::Gto;
pub use ipaws::{IpawsStats, KernelDecision, SmPhases};
pub use lii::Lii;
pub use lrr::Lrr;

use super::named;
use std::sync::Arc;

/// What a scheduler may read about the SM's warp slots, indexed by slot.
#[derive(Clone, Copy, Debug)]
pub struct WarpInfo<'a> {
    /// Orders warps by when they were dispatched (smaller is older).
    pub age: &'a [u64],
    /// Warp instructions issued by the warp in the slot since it was launched.
    pub issued: &'a [u64],
    /// The warp group of the slot (its TB's, or the TB whose group a reusing child TB
    /// joined: [`two_level`]); empty where no caller tracks groups.
    pub group: &'a [u32],
}

/// A warp scheduling policy.
pub trait WarpScheduler: Send {
    /// Picks one of `ready` (warp slots, ascending, non-empty).
    fn pick(&mut self, ready: &[u32], warps: &WarpInfo<'_>) -> u32;
}

/// A warp policy: its names, what it does, and how to make one scheduler.
pub struct WarpPolicyInfo {
    /// The name on the command line, in plans and stats.
    pub name: &'static str,
    /// Other spellings accepted.
    pub aliases: &'static [&'static str],
    /// One line for the help texts.
    pub description: &'static str,
    /// A fresh scheduler (for the adaptive policy, its first phase's).
    pub make: fn() -> Box<dyn WarpScheduler>,
    /// Whether the SM drives iPAWS's phases ([`ipaws`]) over the schedulers.
    pub ipaws: bool,
}

/// Every warp policy. A new policy is its file (a [`WarpScheduler`] and its
/// [`WarpPolicyInfo`]) and one line here.
pub const WARP_POLICIES: &[&WarpPolicyInfo] = &[
    &gto::GTO,
    &lrr::LRR,
    &lii::LII,
    &ipaws::IPAWS,
    &two_level::LASER_TWO_LEVEL,
];

/// A warp policy of [`WARP_POLICIES`] (or of a caller's own [`WarpPolicyInfo`]).
#[derive(Clone, Copy)]
pub struct WarpPolicy(pub &'static WarpPolicyInfo);

impl WarpPolicy {
    /// Greedy then oldest.
    pub const GTO: WarpPolicy = WarpPolicy(&gto::GTO);
    /// Loose round robin.
    pub const LRR: WarpPolicy = WarpPolicy(&lrr::LRR);
    /// Least instructions issued.
    pub const LII: WarpPolicy = WarpPolicy(&lii::LII);
    /// iPAWS.
    pub const IPAWS: WarpPolicy = WarpPolicy(&ipaws::IPAWS);

    /// A fresh scheduler (`ipaws` starts as its Adapt phase's GTO; the phases need a
    /// [`CoreSched`]).
    pub fn make(self) -> Box<dyn WarpScheduler> {
        (self.0.make)()
    }

    /// The policy named `s` (a name or an alias, any case).
    pub fn parse(s: &str) -> Option<WarpPolicy> {
        named::find(WARP_POLICIES.iter().copied(), s).map(WarpPolicy)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Every policy's name, in [`WARP_POLICIES`] order.
    pub fn names() -> Vec<&'static str> {
        WARP_POLICIES.iter().map(|p| p.name).collect()
    }

    /// The help text: each name with its description.
    pub fn help() -> String {
        named::help("Warp scheduling policy", WARP_POLICIES.iter().copied())
    }
}

named::registry_handle!(WarpPolicy, WarpPolicyInfo);

/// One SM's warp schedulers and the per-warp counters they read.
pub struct CoreSched {
    scheds: Vec<Box<dyn WarpScheduler>>,
    issued: Vec<u64>,
    /// Per slot: its warp group.
    group: Vec<u32>,
    /// The adaptive policy's state (`--warp-policy ipaws` only).
    ipaws: Option<Box<ipaws::Ipaws>>,
}

impl CoreSched {
    /// `schedulers` schedulers of `policy` over `slots` warp slots of SM `sm`; `decision`
    /// is the kernel's iPAWS decision, shared by every SM of the run (the first SM to end
    /// its Adapt phase decides for all, iPAWS §5.4).
    pub fn new(
        policy: WarpPolicy,
        sm: u32,
        schedulers: usize,
        slots: usize,
        decision: &Arc<KernelDecision>,
    ) -> CoreSched {
        let n = schedulers.max(1);
        CoreSched {
            scheds: (0..n).map(|_| policy.make()).collect(),
            issued: vec![0; slots],
            group: vec![0; slots],
            ipaws: policy
                .0
                .ipaws
                .then(|| Box::new(ipaws::Ipaws::new(sm, n, slots, Arc::clone(decision)))),
        }
    }

    /// The number of warp schedulers.
    pub fn len(&self) -> usize {
        self.scheds.len()
    }

    /// Whether there is no scheduler (never: at least one is made).
    pub fn is_empty(&self) -> bool {
        self.scheds.is_empty()
    }

    /// Scheduler `k` picks one of `ready` (non-empty) at `now`.
    pub fn pick(&mut self, k: usize, ready: &[u32], age: &[u64], now: u64) -> u32 {
        let info = WarpInfo {
            age,
            issued: &self.issued,
            group: &self.group,
        };
        match self.ipaws.as_mut() {
            Some(ip) => ip.pick(k, ready, &info, now),
            None => self.scheds[k].pick(ready, &info),
        }
    }

    /// A warp of warp group `group` was launched into `slot`.
    pub fn on_launch(&mut self, slot: u32, group: u32) {
        if let Some(c) = self.issued.get_mut(slot as usize) {
            *c = 0;
        }
        if let Some(g) = self.group.get_mut(slot as usize) {
            *g = group;
        }
        if let Some(ip) = self.ipaws.as_mut() {
            ip.on_launch(slot);
        }
    }

    /// The warp in `slot` issued an instruction at `now`.
    pub fn on_issue(&mut self, slot: u32, now: u64) {
        if let Some(c) = self.issued.get_mut(slot as usize) {
            *c += 1;
        }
        if let Some(ip) = self.ipaws.as_mut() {
            ip.on_issue(slot, &self.issued, now);
        }
    }

    /// The warp in `slot` starts waiting at a barrier.
    pub fn on_barrier_wait(&mut self, slot: u32) {
        if let Some(ip) = self.ipaws.as_mut() {
            ip.on_barrier_wait(slot);
        }
    }

    /// The warp in `slot` was released from its barrier.
    pub fn on_barrier_release(&mut self, slot: u32) {
        if let Some(ip) = self.ipaws.as_mut() {
            ip.on_barrier_release(slot);
        }
    }

    /// The warp in `slot` finished at `now`.
    pub fn on_warp_done(&mut self, slot: u32, age: &[u64], now: u64) {
        if let Some(ip) = self.ipaws.as_mut() {
            ip.on_warp_done(slot, age, &self.issued, now);
        }
    }

    /// The iPAWS phase times of this SM (`None` for the other policies).
    pub fn phases(&self) -> Option<SmPhases> {
        self.ipaws.as_ref().map(|ip| ip.phases())
    }
}
