//! The locality ledger (`paver simulate --explain`): for every TB, the SM and the time it
//! ran, the TBs resident beside it when it started, and whose L1 lines served its reads.
//!
//! A TB scheduling policy can only save memory traffic through the L1s and the L2: a TB's
//! read hits (or merges into the MSHR of) a line that it, or another TB resident on the
//! same SM, brought in. The ledger splits every L1 read request of a TB that way:
//!
//! - `hits_own` / `merges_own`: the line (present, or in flight in an MSHR) was brought in
//!   by the TB's own miss;
//! - `hits_shared` / `merges_shared`: by another TB's miss (`served_by` names the TBs and
//!   counts), or by a prefetch on another TB's behalf;
//! - `misses`: the TB's own misses, the L2 read requests it caused; `refetches` are those
//!   of blocks it had missed before (its own reuse the L1 did not keep: capacity or
//!   conflict evictions, not sharing).
//!
//! Each L1 keeps, per block, the TB whose miss (or prefetch) filled it last ([`SmLedger`]):
//! a hit is credited to that TB. Writes and atomics are not read requests and are left
//! out. A TB's reads counted here are its L1 read requests, sectors on a sectored L1.
//!
//! Two policies' ledgers set side by side (`paver report --ledger a.json b.json`) show
//! where one saves what the other does not: fewer own misses (a TB's own reuse kept in the
//! L1), more shared hits (co-resident TBs that read the same lines), more merges (TBs that
//! read them at the same time).

use serde::{Deserialize, Serialize};

use super::block_map::BlockMap;
use super::cache::Outcome;

/// One TB's entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TbEntry {
    /// The TB (linear id).
    pub tb: u32,
    /// The SM it ran on.
    pub sm: u32,
    /// Its place among the TBs that SM started (0: the first).
    pub order: u32,
    /// Cycle it started.
    pub start: u64,
    /// Cycle its last warp finished.
    pub end: u64,
    /// The TBs resident on the SM when it started, ascending.
    pub co_resident: Vec<u32>,
    /// Its L1 reads, by who brought the line.
    #[serde(flatten)]
    pub counts: ReadCounts,
    /// The TBs whose lines served its shared hits and merges, with how many, ascending TB.
    pub served_by: Vec<(u32, u64)>,
}

/// L1 read requests split by who brought the line they hit or merged into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadCounts {
    /// L1 read requests.
    pub reads: u64,
    /// Hits on lines the TB's own misses brought in.
    pub hits_own: u64,
    /// Hits on lines another TB brought in.
    pub hits_shared: u64,
    /// Merges into an MSHR the TB's own miss holds.
    pub merges_own: u64,
    /// Merges into an MSHR another TB's miss holds.
    pub merges_shared: u64,
    /// Misses: the L2 read requests it caused.
    pub misses: u64,
    /// Misses of blocks the same TB had missed before.
    pub refetches: u64,
}

impl std::ops::AddAssign<&ReadCounts> for ReadCounts {
    fn add_assign(&mut self, o: &ReadCounts) {
        self.reads += o.reads;
        self.hits_own += o.hits_own;
        self.hits_shared += o.hits_shared;
        self.merges_own += o.merges_own;
        self.merges_shared += o.merges_shared;
        self.misses += o.misses;
        self.refetches += o.refetches;
    }
}

/// The totals over every TB of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerSummary {
    /// TBs.
    pub tbs: u64,
    /// L1 reads of every TB, by who brought the line.
    #[serde(flatten)]
    pub counts: ReadCounts,
    /// Mean number of TBs resident beside a TB when it started.
    pub mean_co_resident: f64,
    /// Mean number of those that served it at least one hit or merge.
    pub mean_serving_co_resident: f64,
    /// Mean cycles a TB ran.
    pub mean_tb_cycles: f64,
}

/// The ledger of a run: the summary and one entry per TB, ascending TB.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    /// Totals.
    pub summary: LedgerSummary,
    /// Per TB.
    pub tbs: Vec<TbEntry>,
}

impl Ledger {
    /// The ledger of the entries of every SM.
    pub fn new(mut tbs: Vec<TbEntry>) -> Ledger {
        tbs.sort_by_key(|e| e.tb);
        let mut s = LedgerSummary {
            tbs: tbs.len() as u64,
            ..LedgerSummary::default()
        };
        let (mut co, mut serving, mut cycles) = (0u64, 0u64, 0u64);
        for e in &tbs {
            s.counts += &e.counts;
            co += e.co_resident.len() as u64;
            serving += e
                .served_by
                .iter()
                .filter(|(t, _)| e.co_resident.binary_search(t).is_ok())
                .count() as u64;
            cycles += e.end - e.start;
        }
        let n = s.tbs.max(1) as f64;
        s.mean_co_resident = co as f64 / n;
        s.mean_serving_co_resident = serving as f64 / n;
        s.mean_tb_cycles = cycles as f64 / n;
        Ledger { summary: s, tbs }
    }
}

/// One SM's side of the ledger: the TB that filled each block, the open entries of the
/// resident TBs (by context), and the entries of the TBs that finished.
#[derive(Debug, Default)]
pub struct SmLedger {
    sm: u32,
    started: u32,
    filler: BlockMap<u32>,
    open: Vec<Option<TbEntry>>,
    /// Per open context: `served_by` as a map while the TB runs.
    served: Vec<BlockMap<u64>>,
    /// Per open context: the blocks the TB has missed.
    missed: Vec<BlockMap<()>>,
    done: Vec<TbEntry>,
}

impl SmLedger {
    /// An empty ledger for SM `sm` with `contexts` TB contexts.
    pub fn new(sm: u32, contexts: usize) -> SmLedger {
        SmLedger {
            sm,
            open: vec![None; contexts],
            served: vec![BlockMap::default(); contexts],
            missed: vec![BlockMap::default(); contexts],
            ..SmLedger::default()
        }
    }

    /// TB `tb` starts in context `ctx` at `now`.
    pub fn start(&mut self, ctx: usize, tb: u32, now: u64) {
        let mut co_resident: Vec<u32> = self.open.iter().flatten().map(|e| e.tb).collect();
        co_resident.sort_unstable();
        self.open[ctx] = Some(TbEntry {
            tb,
            sm: self.sm,
            order: self.started,
            start: now,
            co_resident,
            ..TbEntry::default()
        });
        self.served[ctx].clear();
        self.missed[ctx].clear();
        self.started += 1;
    }

    /// The TB in context `ctx` read `block` with `outcome` (a refusal is not a request: it
    /// is presented again).
    pub fn read(&mut self, ctx: usize, block: u64, outcome: Outcome) {
        let Some(e) = self.open[ctx].as_mut() else {
            return;
        };
        let tb = e.tb;
        let e = &mut e.counts;
        let (own, shared) = match outcome {
            Outcome::ReservationFail => return,
            Outcome::Miss => {
                e.reads += 1;
                e.misses += 1;
                if self.missed[ctx].insert(block, ()).is_some() {
                    e.refetches += 1;
                }
                self.filler.insert(block, tb);
                return;
            }
            Outcome::Hit => (&mut e.hits_own, &mut e.hits_shared),
            Outcome::HitReserve => (&mut e.merges_own, &mut e.merges_shared),
        };
        e.reads += 1;
        match self.filler.get(&block) {
            Some(&t) if t == tb => *own += 1,
            Some(&t) => {
                *shared += 1;
                *self.served[ctx].entry(u64::from(t)).or_insert(0) += 1;
            }
            // A line no read of this SM missed (filled by a write): nobody's reuse.
            None => *own += 1,
        }
    }

    /// A prefetch of `block` issued on behalf of the TB in context `ctx`.
    pub fn prefetched(&mut self, ctx: usize, block: u64) {
        if let Some(e) = &self.open[ctx] {
            self.filler.insert(block, e.tb);
        }
    }

    /// The TB in context `ctx` finished at `now`.
    pub fn finish(&mut self, ctx: usize, now: u64) {
        if let Some(mut e) = self.open[ctx].take() {
            e.end = now;
            let mut served: Vec<(u32, u64)> = self.served[ctx]
                .drain()
                .map(|(t, n)| (t as u32, n))
                .collect();
            served.sort_unstable();
            e.served_by = served;
            self.done.push(e);
        }
    }

    /// The entries of the TBs that finished.
    pub fn into_entries(self) -> Vec<TbEntry> {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_credited_to_the_tb_that_missed() {
        let mut l = SmLedger::new(3, 2);
        l.start(0, 10, 5);
        l.start(1, 11, 6);
        l.read(0, 0x100, Outcome::Miss);
        l.read(1, 0x100, Outcome::HitReserve);
        l.read(1, 0x100, Outcome::ReservationFail);
        l.read(0, 0x100, Outcome::Hit);
        l.read(1, 0x100, Outcome::Hit);
        l.read(1, 0x200, Outcome::Miss);
        l.read(0, 0x200, Outcome::Hit);
        l.read(0, 0x100, Outcome::Miss);
        l.finish(1, 40);
        l.finish(0, 50);
        let led = Ledger::new(l.into_entries());
        let (a, b) = (&led.tbs[0], &led.tbs[1]);
        assert_eq!(
            (a.tb, a.co_resident.clone(), b.co_resident.clone()),
            (10, vec![], vec![10])
        );
        let (c, d) = (&a.counts, &b.counts);
        assert_eq!((c.reads, c.misses, c.hits_own, c.hits_shared), (4, 2, 1, 1));
        assert_eq!((c.refetches, d.refetches), (1, 0));
        assert_eq!(
            (d.reads, d.misses, d.merges_shared, d.hits_shared),
            (3, 1, 1, 1)
        );
        assert_eq!(a.served_by, vec![(11, 1)]);
        assert_eq!(b.served_by, vec![(10, 2)]);
        assert_eq!((a.order, b.order, a.end - a.start), (0, 1, 45));
        assert_eq!(led.summary.counts.reads, 7);
        assert_eq!(led.summary.counts.misses, 3);
        // TB 11 was served by TB 10, resident when it started; TB 10 by TB 11, which was not.
        assert_eq!(led.summary.mean_serving_co_resident, 0.5);
    }
}
