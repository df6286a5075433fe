//! One SM: resident TBs (contexts), warp slots with a per-register scoreboard, several warp
//! schedulers issuing one instruction each per cycle, a load/store unit feeding the L1 data
//! cache (and shared memory with bank conflicts), and the L1's MSHRs waking loads when
//! replies arrive.
//!
//! Scoreboard: an instruction issues when none of its source or destination registers is
//! waiting (RAW and WAW). ALU classes make their destinations ready `latency` cycles after
//! issue; loads mark them pending until every block of the access has hit (`l1` latency)
//! or come back from the memory side.
//!
//! The LSU is in order. When the L1 refuses its head block (a reservation fail), the LSU
//! waits for the event that can admit it, without retrying: the fill of that block when
//! its MSHR had merged its maximum, any fill when every MSHR was taken. Then the block is
//! presented again ([`Cache::read_again`]), so `reservation_fails` counts each refused
//! request once.

use super::block_map::BlockMap;
use super::cache::{Cache, CacheStats, Geometry, Outcome, Refusal};
use super::config::{PipelineConfig, TimingConfig};
use super::ld_cache::{LdL1, LdStats};
use super::ledger::SmLedger;
use super::mem::{MemPort, Reply, ReqKind};
use super::prefetch::Prefetch;
use super::stats::SmStats;
use super::trace::{Class, Kernel, MemOp, TbStream, Tracer, WarpTrace, NO_MEM};
use super::warp_sched::{CoreSched, KernelDecision, SmPhases, WarpPolicy};
use crate::interp::barrier::NUM_BARRIERS;
use crate::interp::{AccessKind, BarrierArrival, Space};
use crate::SimError;
use std::collections::VecDeque;
use std::sync::Arc;

const NONE: u32 = u32::MAX;
const PENDING: u64 = u64::MAX;

struct TbSlot<'p> {
    tb: u32,
    /// The static instructions of the TB's kernel (a child grid's differ from the host
    /// launch's).
    kernel: &'p Kernel,
    /// The warp group of its warps (`warp_sched::two_level`): its own id, or the group of
    /// the resident TB it joined.
    group: u32,
    /// The TB's interpreter state; dropped once every warp has exited functionally (its
    /// register files are most of the memory a resident TB holds, and a short kernel's
    /// warps all exit within their first chunk).
    stream: Option<TbStream<'p>>,
    /// Per warp of the TB: the traced window not yet issued.
    windows: Vec<WarpTrace>,
    live: u32,
    /// Per named barrier: warps arrived, and warps expected (0: every live warp).
    at_barrier: [(u32, u32); NUM_BARRIERS as usize],
    warp_slots: Vec<u32>,
    /// The share of the SM it takes ([`CAPACITY`](super::capacity::CAPACITY) units).
    weight: u64,
}

#[derive(Default)]
struct Load {
    remaining: u32,
    issued_all: bool,
    done_at: u64,
    dsts: Vec<u32>,
}

#[derive(Default)]
struct WarpSlot {
    used: bool,
    ctx: u32,
    w: u32,
    /// Next instruction in the window, and the window's length.
    pos: u32,
    len: u32,
    /// No instruction follows the window (the warp exited functionally).
    ended: bool,
    next_issue: u64,
    regs: Vec<u64>,
    barrier: bool,
    /// The barrier the warp waits at, while `barrier`.
    bar_id: u8,
    done: bool,
    loads: Vec<Load>,
    free_loads: Vec<u32>,
    outstanding: u32,
    /// `check` passed and nothing but the LSU queue can change that until the warp issues;
    /// `next_is_mem` says whether the LSU queue matters.
    ready_cached: bool,
    next_is_mem: bool,
}

struct LsuEntry {
    warp: u32,
    op: MemOp,
    next: u32,
    load: u32,
    /// The block at `next` was refused by the L1 (and counted once).
    refused: bool,
}

/// What a blocked LSU waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LsuWait {
    /// Nothing: the LSU is not blocked.
    No,
    /// Any L1 fill (every MSHR was taken).
    AnyFill,
    /// The fill of this block (its MSHR was full).
    Fill(u64),
}

/// The SM.
pub struct Sm<'p> {
    id: u32,
    l1: Cache<(u32, u32)>,
    l1_latency: u64,
    block_bytes: u32,
    /// The L1's line size: the data stage serves `pipeline.l1_lines_per_cycle` of them.
    line_bytes: u64,
    /// `log2(line_bytes)` when it is a power of two (every shipped configuration): the
    /// line of each block the LSU presents is a shift, not a 64-bit division.
    line_shift: Option<u32>,
    /// Per warp scheduler: the cycle it can issue again after a multi-slot instruction.
    sched_busy: Vec<u64>,
    pipe: PipelineConfig,
    scheds: CoreSched,
    /// The warp slots, created at the SM's first launch (`num_slots` of them): most SMs of
    /// a large GPU running a small launch never get a TB, and creating and dropping 64
    /// slots on each of them was a quarter of such a run.
    warps: Vec<WarpSlot>,
    num_slots: usize,
    age: Vec<u64>,
    /// Per warp slot: it cannot issue before this (a cached `check`; reset by load
    /// completions, barrier releases and launches). Kept apart from [`WarpSlot`] so that
    /// the per-cycle scan over blocked warps reads one dense array.
    blocked: Vec<u64>,
    /// Bit per warp slot: in use and `blocked` is not `u64::MAX` (a warp waiting for a load
    /// or a barrier is left out of the scan until the event that unblocks it).
    live: Vec<u64>,
    /// Per warp scheduler `k`: the bits of its warp slots (`slot % schedulers`), words
    /// `k * words..(k + 1) * words` of one flat array (one indirection less per scan).
    sched_mask: Vec<u64>,
    /// The last scan left a ready memory instruction waiting for room in the LSU queue:
    /// the LSU's next pop must rescan (otherwise a pop changes nothing a scan reads).
    room_wanted: bool,
    ctxs: Vec<Option<TbSlot<'p>>>,
    lsu: VecDeque<LsuEntry>,
    /// The blocks of the global accesses in `lsu`, in queue order (copied at issue, so a
    /// warp's window can be refilled while its accesses wait in the queue).
    lsu_blocks: VecDeque<u64>,
    atomics: BlockMap<VecDeque<(u32, u32)>>,
    dispatched: u64,
    stats: SmStats,
    ready: Vec<u32>,
    /// Scratch: the loads a reply completes a block of.
    waiters: Vec<(u32, u32)>,
    finished: Vec<u32>,
    num_regs: usize,
    /// Nothing can issue before this (set when the SM stalls; cleared by launches and
    /// replies), so stalled SMs cost nothing per cycle.
    sleep_until: u64,
    /// The LSU's head access was refused an L1 MSHR (or merge slot): nothing the LSU does
    /// can change until the fill that admits it, so it waits for that fill.
    lsu_blocked: bool,
    lsu_wait: LsuWait,
    /// No warp can become ready before this (the earliest time the last scan of the warps
    /// found, when it issued nothing), unless an event resets it: a launch, a completed
    /// load, a released barrier, room or admission in the LSU. Until then a cycle only
    /// runs the LSU and skips the scan.
    scan_at: u64,
    /// Free TB contexts, free warp slots and free capacity ([`CAPACITY`](super::capacity::CAPACITY) units).
    free_ctxs: u32,
    free_slots: u32,
    free_units: u64,
    /// The most trace bytes held at once, sampled when TBs launch and finish.
    peak_trace_bytes: usize,
    /// The locality ledger (`--explain`; `None` otherwise, at no cost).
    ledger: Option<SmLedger>,
    /// L1 reads (TB, 128-byte line) for a TB policy that watches them (LASER's reuse
    /// monitor); `None` otherwise, at no cost.
    reads: Option<Vec<(u32, u64)>>,
}

/// Sets warp slot `s`'s blocked-until time and its live bit.
fn set_blocked(blocked: &mut [u64], live: &mut [u64], s: usize, t: u64) {
    blocked[s] = t;
    if t == u64::MAX {
        live[s / 64] &= !(1 << (s % 64));
    } else {
        live[s / 64] |= 1 << (s % 64);
    }
}

/// The first slot at or after `from` whose bit is set in both `live` and `mask`.
fn next_live(live: &[u64], mask: &[u64], from: usize) -> Option<usize> {
    let mut w = from / 64;
    let mut m = live.get(w)? & mask[w] & (u64::MAX << (from % 64));
    loop {
        if m != 0 {
            return Some(w * 64 + m.trailing_zeros() as usize);
        }
        w += 1;
        m = live.get(w)? & mask[w];
    }
}

impl<'p> Sm<'p> {
    /// SM `id` with `contexts` TB contexts; `decision` is the run's iPAWS decision, shared
    /// by its SMs.
    pub fn new(
        id: u32,
        cfg: &TimingConfig,
        contexts: u32,
        warp: WarpPolicy,
        num_regs: usize,
        decision: &Arc<KernelDecision>,
    ) -> Sm<'p> {
        let g = &cfg.gpu;
        // `g.l1.ways` is the carveout's (the engine passes the configuration the SM runs with).
        let l1 = Cache::new(Geometry::l1(g, g.l1.ways, cfg.mem.l1_write));
        let block_bytes = l1.block_bytes() as u32;
        let nw = g.core.max_warps_per_sm.max(1) as usize;
        Sm {
            id,
            l1,
            l1_latency: u64::from(g.l1.latency_cycles),
            block_bytes,
            line_bytes: u64::from(g.l1.line_bytes.max(1)),
            line_shift: g
                .l1
                .line_bytes
                .max(1)
                .is_power_of_two()
                .then(|| g.l1.line_bytes.max(1).trailing_zeros()),
            sched_busy: vec![0; g.core.warp_schedulers_per_sm.max(1) as usize],
            pipe: cfg.pipeline.clone(),
            scheds: CoreSched::new(
                warp,
                id,
                g.core.warp_schedulers_per_sm.max(1) as usize,
                nw,
                decision,
            ),
            warps: Vec::new(),
            num_slots: nw,
            // Created with the warp slots at the first launch (`init_slots`).
            age: Vec::new(),
            blocked: Vec::new(),
            live: Vec::new(),
            sched_mask: Vec::new(),
            room_wanted: false,
            ctxs: (0..contexts.max(1)).map(|_| None).collect(),
            lsu: VecDeque::new(),
            lsu_blocks: VecDeque::new(),
            atomics: BlockMap::default(),
            dispatched: 0,
            stats: SmStats::default(),
            ready: Vec::new(),
            waiters: Vec::new(),
            finished: Vec::new(),
            num_regs,
            sleep_until: 0,
            lsu_blocked: false,
            lsu_wait: LsuWait::No,
            scan_at: 0,
            free_ctxs: contexts.max(1),
            free_slots: nw as u32,
            free_units: super::capacity::CAPACITY,
            peak_trace_bytes: 0,
            ledger: None,
            reads: None,
        }
    }

    /// Creates the warp slots and the per-slot arrays the scan reads, at the SM's first
    /// launch (nothing reads them before): a small launch on a large GPU leaves most SMs
    /// without a TB, and their allocations were a part of every run's set-up.
    fn init_slots(&mut self) {
        let nw = self.num_slots;
        self.warps.resize_with(nw, WarpSlot::default);
        self.age = vec![0; nw];
        self.blocked = vec![u64::MAX; nw];
        self.live = vec![0; nw.div_ceil(64)];
        let n = self.scheds.len().max(1);
        let words = nw.div_ceil(64);
        let mut m = vec![0u64; n * words];
        for k in 0..n {
            for s in (k..nw).step_by(n) {
                m[k * words + s / 64] |= 1 << (s % 64);
            }
        }
        self.sched_mask = m;
    }

    /// Free TB contexts, given that a TB needs `warps_per_tb` warp slots and `weight` of
    /// the SM's capacity ([`tb_weight`](super::capacity::tb_weight)).
    pub fn free_contexts(&self, warps_per_tb: u32, weight: u64) -> u32 {
        let by_units = u32::try_from(self.free_units / weight.max(1)).unwrap_or(u32::MAX);
        self.free_ctxs
            .min(self.free_slots / warps_per_tb.max(1))
            .min(by_units)
    }

    /// Whether any TB is resident.
    pub fn is_busy(&self) -> bool {
        self.free_ctxs < self.ctxs.len() as u32
    }

    /// Counters (busy cycles are added by the engine).
    pub fn stats_mut(&mut self) -> &mut SmStats {
        &mut self.stats
    }

    /// Counters.
    pub fn stats(&self) -> &SmStats {
        &self.stats
    }

    /// The iPAWS phase times (`--warp-policy ipaws` only).
    pub fn warp_phases(&self) -> Option<SmPhases> {
        self.scheds.phases()
    }

    /// L1 counters.
    pub fn l1_stats(&self) -> &CacheStats {
        self.l1.stats()
    }

    /// Gives the L1 the Locality Descriptor mechanisms (`--cache-policy ld`, `--prefetch`).
    pub fn set_ld(&mut self, ld: LdL1) {
        self.l1.set_ld(ld);
    }

    /// Their counters, when the L1 has them.
    pub fn ld_stats(&self) -> Option<&LdStats> {
        self.l1.ld().map(LdL1::stats)
    }

    /// Records the L1 reads for [`Sm::take_reads`].
    pub fn keep_reads(&mut self) {
        self.reads = Some(Vec::new());
    }

    /// Moves the L1 reads recorded since the last call to `out`: (TB, 128-byte line), in
    /// the order the L1 saw them.
    pub fn take_reads(&mut self, out: &mut Vec<(u32, u64)>) {
        if let Some(r) = &mut self.reads {
            out.append(r);
        }
    }

    /// Keeps the locality ledger of this SM ([`super::ledger`]).
    pub fn keep_ledger(&mut self) {
        self.ledger = Some(SmLedger::new(self.id, self.ctxs.len()));
    }

    /// The ledger's entries of the TBs this SM ran (empty without `keep_ledger`).
    pub fn take_ledger(&mut self) -> Vec<super::ledger::TbEntry> {
        self.ledger
            .take()
            .map(SmLedger::into_entries)
            .unwrap_or_default()
    }

    /// TBs that finished since the last call.
    pub fn take_finished(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.finished);
    }

    /// Starts TB `tb` at `now`, tracing its warps' first chunks with `tracer`; its warps
    /// join the warp group of TB `join` when that TB is resident here (a child predicted to
    /// reuse its parent's data, LASER), else form their own.
    pub fn launch(
        &mut self,
        tb: u32,
        tracer: &mut Tracer<'p>,
        now: u64,
        join: Option<u32>,
    ) -> Result<(), SimError> {
        let group = join
            .and_then(|p| self.ctxs.iter().flatten().find(|t| t.tb == p))
            .map_or(tb, |t| t.group);
        self.sleep_until = 0;
        self.scan_at = 0;
        let Some(c) = self.ctxs.iter().position(Option::is_none) else {
            return Ok(());
        };
        let mut stream = tracer.start(tb, self.id);
        let weight = stream.weight();
        if weight > self.free_units {
            // The scheduler was told the free contexts for the largest TB share in play, so
            // this does not happen; a TB that does not fit is an engine error.
            return Err(SimError::Internal(format!(
                "TB {tb} needs {weight} of SM {}'s capacity, {} free",
                self.id, self.free_units
            )));
        }
        let kernel = stream.kernel();
        let nw = stream.num_warps();
        let mut windows: Vec<WarpTrace> = (0..nw).map(|_| WarpTrace::default()).collect();
        for w in 0..nw {
            tracer.refill(&mut stream, w, &mut windows)?;
        }
        if self.warps.is_empty() {
            self.init_slots();
        }
        let mut slots = Vec::with_capacity(nw);
        for (w, wt) in windows.iter().enumerate() {
            let Some(s) = self.warps.iter().position(|x| !x.used) else {
                break;
            };
            let ws = &mut self.warps[s];
            ws.used = true;
            ws.ctx = c as u32;
            ws.w = w as u32;
            ws.pos = 0;
            ws.len = wt.insts.len() as u32;
            ws.ended = wt.ended;
            ws.next_issue = now;
            ws.regs.clear();
            ws.regs.resize(self.num_regs.max(kernel.num_regs), 0);
            ws.barrier = false;
            ws.done = false;
            ws.loads.clear();
            ws.free_loads.clear();
            ws.outstanding = 0;
            set_blocked(&mut self.blocked, &mut self.live, s, 0);
            ws.ready_cached = false;
            self.age[s] = self.dispatched;
            self.dispatched += 1;
            self.scheds.on_launch(s as u32, group);
            slots.push(s as u32);
        }
        self.free_ctxs -= 1;
        self.free_slots -= slots.len() as u32;
        self.free_units -= weight;
        if let Some(l) = &mut self.ledger {
            l.start(c, tb, now);
        }
        let live = slots.len() as u32;
        self.ctxs[c] = Some(TbSlot {
            tb,
            kernel,
            group,
            stream: (!windows.iter().all(|w| w.ended)).then_some(stream),
            windows,
            live,
            at_barrier: [(0, 0); NUM_BARRIERS as usize],
            warp_slots: slots.clone(),
            weight,
        });
        self.sample_trace_bytes();
        for s in slots {
            self.maybe_finish(s, now);
        }
        Ok(())
    }

    fn sample_trace_bytes(&mut self) {
        self.peak_trace_bytes = self.peak_trace_bytes.max(self.trace_bytes());
    }

    /// The most trace bytes this SM held at once (sampled when TBs launch and finish).
    pub fn peak_trace_bytes(&self) -> usize {
        self.peak_trace_bytes
    }

    /// Trace bytes the resident TBs hold (their warps' windows).
    pub fn trace_bytes(&self) -> usize {
        self.ctxs
            .iter()
            .flatten()
            .map(|t| t.windows.iter().map(WarpTrace::bytes).sum::<usize>())
            .sum::<usize>()
            + self.lsu_blocks.capacity() * std::mem::size_of::<u64>()
    }

    /// Warp slot `s` has issued its whole window and more follows: traces the next chunk.
    fn refill(&mut self, s: usize, tracer: Option<&mut Tracer<'p>>) -> Result<(), SimError> {
        let c = self.warps[s].ctx as usize;
        let Some(tb) = self.ctxs[c].as_mut() else {
            return Ok(());
        };
        let w = self.warps[s].w as usize;
        let Some(stream) = tb.stream.as_mut() else {
            return Ok(());
        };
        // The parallel phase steps without the tracer only SMs that `may_trace` cleared.
        let Some(tracer) = tracer else {
            return Err(SimError::Internal(format!(
                "SM {} needed the tracer in the parallel phase",
                self.id
            )));
        };
        tracer.refill(stream, w, &mut tb.windows)?;
        if tb.windows.iter().all(|w| w.ended) {
            tb.stream = None;
        }
        self.warps[s].pos = 0;
        // A refill may also have appended to other warps' windows (run to a barrier).
        for &x in &tb.warp_slots {
            let ws = &mut self.warps[x as usize];
            let wt = &tb.windows[ws.w as usize];
            ws.len = wt.insts.len() as u32;
            ws.ended = wt.ended;
        }
        Ok(())
    }

    /// A reply from the memory side arrived at `now`.
    ///
    /// Returns whether the SM can do something new (the LSU is admitted again, or a load
    /// completed): otherwise its next cycle stays when it was, since a cycle before then
    /// would find every warp as it left it.
    pub fn on_reply(&mut self, r: &Reply, now: u64) -> bool {
        let admits = match self.lsu_wait {
            LsuWait::No => false,
            LsuWait::AnyFill => r.kind == ReqKind::Read,
            LsuWait::Fill(b) => r.kind == ReqKind::Read && r.block == b,
        };
        let mut woke = admits;
        if admits {
            self.lsu_blocked = false;
            self.lsu_wait = LsuWait::No;
        }
        let mut waiters = std::mem::take(&mut self.waiters);
        waiters.clear();
        match r.kind {
            ReqKind::Read => {
                self.l1.ld_tick(now);
                self.l1.fill_into(r.block, &mut waiters);
            }
            ReqKind::Atomic => {
                waiters.extend(self.atomics.get_mut(&r.block).and_then(VecDeque::pop_front))
            }
            ReqKind::Write => {}
        }
        for &(w, l) in &waiters {
            let load = &mut self.warps[w as usize].loads[l as usize];
            load.remaining -= 1;
            load.done_at = load.done_at.max(now);
            if load.remaining == 0 && load.issued_all {
                self.complete(w, l, now);
                woke = true;
            }
        }
        self.waiters = waiters;
        // A completed load has reset `scan_at` (`complete`); an LSU admitted again changes
        // nothing a scan reads (the pop that follows rescans if a warp waits for room), so
        // it only needs the cycle that runs the LSU.
        if woke {
            self.sleep_until = 0;
        }
        woke
    }

    fn complete(&mut self, w: u32, l: u32, now: u64) {
        let ws = &mut self.warps[w as usize];
        let load = std::mem::take(&mut ws.loads[l as usize]);
        let t = load.done_at.max(now);
        for d in &load.dsts {
            if let Some(r) = ws.regs.get_mut(*d as usize) {
                *r = t;
            }
        }
        ws.loads[l as usize].dsts = load.dsts;
        set_blocked(&mut self.blocked, &mut self.live, w as usize, 0);
        ws.free_loads.push(l);
        ws.outstanding -= 1;
        self.scan_at = 0;
        self.maybe_finish(w, now);
    }

    fn store_sent(&mut self, w: u32, now: u64) {
        self.warps[w as usize].outstanding -= 1;
        self.maybe_finish(w, now);
    }

    fn maybe_finish(&mut self, w: u32, now: u64) {
        let ws = &mut self.warps[w as usize];
        if ws.done || ws.pos < ws.len || !ws.ended || ws.outstanding > 0 {
            return;
        }
        ws.done = true;
        let c = ws.ctx as usize;
        self.scheds.on_warp_done(w, &self.age, now);
        let Some(tb) = self.ctxs[c].as_mut() else {
            return;
        };
        tb.live -= 1;
        if tb.live == 0 {
            self.sample_trace_bytes();
            let tb = self.ctxs[c].take().map(|t| (t.tb, t.warp_slots, t.weight));
            if let Some((id, slots, weight)) = tb {
                for &s in &slots {
                    self.warps[s as usize].used = false;
                    set_blocked(&mut self.blocked, &mut self.live, s as usize, u64::MAX);
                }
                self.free_ctxs += 1;
                self.free_slots += slots.len() as u32;
                self.free_units += weight;
                self.finished.push(id);
                if let Some(l) = &mut self.ledger {
                    l.finish(c, now);
                }
                self.stats.tbs += 1;
            }
        } else {
            // Barriers without a thread count wait for the warps that have not exited.
            for id in 0..NUM_BARRIERS as usize {
                self.release_barrier(c, id, now);
            }
        }
    }

    /// Releases the warps waiting at barrier `id` of TB context `c` once enough warps
    /// have arrived (its thread count, or every live warp).
    fn release_barrier(&mut self, c: usize, id: usize, now: u64) {
        let Some(tb) = self.ctxs[c].as_mut() else {
            return;
        };
        let Some(&(arrived, expected)) = tb.at_barrier.get(id) else {
            return;
        };
        let need = if expected == 0 { tb.live } else { expected };
        if arrived == 0 || arrived < need {
            return;
        }
        tb.at_barrier[id] = (0, 0);
        self.scan_at = 0;
        for &s in &tb.warp_slots {
            let ws = &mut self.warps[s as usize];
            if ws.barrier && usize::from(ws.bar_id) == id {
                ws.barrier = false;
                self.scheds.on_barrier_release(s);
                set_blocked(&mut self.blocked, &mut self.live, s as usize, 0);
                ws.next_issue = ws.next_issue.max(now + 1);
            }
        }
    }

    /// Whether [`Sm::cycle`] at `now` may call the tracer (functional execution, which
    /// reads and writes the launch's one global memory and so must run in SM order): only
    /// a warp whose window is used up and whose stream goes on is refilled, and only by a
    /// scan, which does not run while the SM sleeps or its scan waits (unless its LSU runs:
    /// a completed load restarts the scan). A warp that becomes used up in a cycle has just
    /// issued and is not scanned again in that cycle, so the state before the cycle decides.
    /// A used-up warp waiting at a barrier counts only if the barrier can be released in
    /// this cycle: another warp of its TB issues a barrier instruction next (a warp issues
    /// at most one instruction a cycle) or has ended its stream (its exit lowers the count
    /// the barrier waits for). Conservative otherwise.
    pub fn may_trace(&self, now: u64) -> bool {
        let lsu_active = !self.lsu.is_empty() && !self.lsu_blocked;
        if !lsu_active && now < self.sleep_until.max(self.scan_at) {
            return false;
        }
        self.ctxs.iter().flatten().any(|tb| {
            if tb.stream.is_none() {
                return false;
            }
            let mut at_barrier = false;
            for &x in &tb.warp_slots {
                let ws = &self.warps[x as usize];
                if !ws.done && !ws.ended && ws.pos >= ws.len {
                    if !ws.barrier {
                        return true;
                    }
                    at_barrier = true;
                }
            }
            at_barrier
                && tb.warp_slots.iter().any(|&x| {
                    let ws = &self.warps[x as usize];
                    if ws.done || ws.barrier {
                        return false;
                    }
                    if ws.ended {
                        return true;
                    }
                    tb.windows[ws.w as usize]
                        .insts
                        .get(ws.pos as usize)
                        .is_some_and(|di| tb.kernel.insts[di.pc as usize].class == Class::Barrier)
                })
        })
    }

    /// Advances one cycle at `now`. Returns whether anything happened or is queued (the
    /// next cycle matters) and the earliest future time a blocked warp becomes ready.
    ///
    /// `tracer` may be `None` when [`Sm::may_trace`] said no for this cycle (the parallel
    /// phase, [`super::par`]); requests go to `mem`, the memory system or an outbox.
    pub fn cycle<M: MemPort>(
        &mut self,
        now: u64,
        mem: &mut M,
        mut tracer: Option<&mut Tracer<'p>>,
    ) -> Result<(bool, u64), SimError> {
        let lsu_active = !self.lsu.is_empty() && !self.lsu_blocked;
        if !lsu_active && now < self.sleep_until {
            return Ok((false, self.sleep_until));
        }
        if lsu_active {
            self.lsu_cycle(now, mem);
        }
        let mut issued = false;
        let mut wake = u64::MAX;
        let n = if now < self.scan_at {
            wake = self.scan_at;
            0
        } else {
            self.scheds.len()
        };
        for k in 0..n {
            if let Some(&b) = self.sched_busy.get(k) {
                if b > now {
                    wake = wake.min(b);
                    continue;
                }
            }
            self.ready.clear();
            // The scheduler's warps in slot order (the order of `used[k]`), skipping those
            // blocked until an event (`blocked` = MAX), which could not issue and set no
            // wake-up time. The live bits are read afresh at each step: a warp visited
            // earlier can release a barrier and unblock a later one.
            let mut from = 0;
            let words = self.live.len();
            let mask = k * words..(k + 1) * words;
            while let Some(s) = next_live(&self.live, &self.sched_mask[mask.clone()], from) {
                from = s + 1;
                let b = self.blocked[s];
                if b > now {
                    wake = wake.min(b);
                    continue;
                }
                let ws = &self.warps[s];
                if !ws.ready_cached {
                    if ws.pos >= ws.len && !ws.ended && !ws.barrier && ws.used && !ws.done {
                        self.refill(s, tracer.as_deref_mut())?;
                        if self.warps[s].pos >= self.warps[s].len {
                            self.maybe_finish(s as u32, now);
                        }
                    }
                    match self.check(s, now) {
                        Ok(is_mem) => {
                            let ws = &mut self.warps[s];
                            ws.ready_cached = true;
                            ws.next_is_mem = is_mem;
                        }
                        Err(t) => {
                            set_blocked(&mut self.blocked, &mut self.live, s, t);
                            wake = wake.min(t);
                            continue;
                        }
                    }
                }
                // A memory instruction also needs room in the LSU queue. Room appears only
                // when the LSU pops its head access, which resets `scan_at`: until then a
                // scan would find this warp as it is, so it sets no wake-up time (an
                // uncoalesced access drains over many cycles, and scanning every warp on
                // each of them was most of an SM cycle).
                if self.warps[s].next_is_mem
                    && self.lsu.len() >= self.pipe.lsu_queue.max(1) as usize
                {
                    self.room_wanted = true;
                } else {
                    self.ready.push(s as u32);
                }
            }

            if self.ready.is_empty() {
                continue;
            }
            let w = self.scheds.pick(k, &self.ready, &self.age, now);
            self.issue(w, k, now);
            issued = true;
        }
        if n > 0 {
            self.scan_at = if issued { 0 } else { wake };
        }
        let active = issued || lsu_active || (!self.lsu.is_empty() && !self.lsu_blocked);
        if !active {
            self.sleep_until = wake;
        }
        Ok((active, wake))
    }

    /// Ok(whether the instruction uses the LSU) if warp slot `s` can issue now as far as
    /// its own state says (the LSU queue is the caller's test), else the time it may become
    /// ready (MAX: when an event says so).
    fn check(&self, s: usize, now: u64) -> Result<bool, u64> {
        let ws = &self.warps[s];
        if !ws.used || ws.done || ws.barrier || ws.pos >= ws.len {
            return Err(u64::MAX);
        }
        if ws.next_issue > now {
            return Err(ws.next_issue);
        }
        let Some(tb) = self.ctxs[ws.ctx as usize].as_ref() else {
            return Err(u64::MAX);
        };
        let di = tb.windows[ws.w as usize].insts[ws.pos as usize];
        let st = &tb.kernel.insts[di.pc as usize];
        let mut wait = 0u64;
        for r in st.srcs.iter().chain(&st.dsts) {
            let t = ws.regs.get(*r as usize).copied().unwrap_or(0);
            if t > now {
                wait = wait.max(t);
            }
        }
        if wait > 0 {
            return Err(if wait == PENDING { u64::MAX } else { wait });
        }
        Ok(di.mem != NO_MEM)
    }

    fn issue(&mut self, w: u32, k: usize, now: u64) {
        let s = w as usize;
        let c = self.warps[s].ctx as usize;
        let Some(tb) = self.ctxs[c].as_mut() else {
            return;
        };
        let wi = self.warps[s].w as usize;
        let di = tb.windows[wi].insts[self.warps[s].pos as usize];
        let kernel: &'p Kernel = tb.kernel;
        let st = &kernel.insts[di.pc as usize];
        self.stats.warp_instructions += 1;
        self.stats.thread_instructions += u64::from(di.lanes);
        self.scheds.on_issue(w, now);
        let p = &self.pipe;
        let lat = |class: Class| {
            u64::from(match class {
                Class::Int => p.int,
                Class::Fp => p.fp,
                Class::Dp => p.dp,
                Class::Sfu => p.sfu,
                Class::Ctrl | Class::Barrier => p.ctrl,
                Class::Mem => p.constant,
            })
        };
        // An instruction ptxas expands into `slots` SASS instructions holds its warp and
        // its scheduler for that many issue cycles; its result comes `slots - 1` later.
        let slots = u64::from(st.slots.max(1));
        if slots > 1 {
            if let Some(b) = self.sched_busy.get_mut(k) {
                *b = now + slots;
            }
        }
        let ws = &mut self.warps[s];
        ws.pos += 1;
        ws.next_issue = now + slots;
        set_blocked(&mut self.blocked, &mut self.live, s, now + slots);
        ws.ready_cached = false;
        match st.class {
            Class::Barrier => {
                // bar.sync / bar.red wait; bar.arrive only counts (named barriers, PTX ISA
                // 9.7.13.1; the functional run decided which barrier and count).
                let a = BarrierArrival::unpack(di.bar);
                let id = usize::from(a.id) % NUM_BARRIERS as usize;
                tb.at_barrier[id].0 += 1;
                tb.at_barrier[id].1 = u32::from(a.warps);
                if a.wait {
                    ws.barrier = true;
                    ws.bar_id = id as u8;
                    self.scheds.on_barrier_wait(w);
                }
                self.release_barrier(c, id, now);
            }
            Class::Mem if di.mem != NO_MEM => {
                let wt = &tb.windows[wi];
                let op = wt.mems[di.mem as usize];
                if op.space != Space::Shared {
                    let b = &wt.blocks[op.start as usize..(op.start + op.len) as usize];
                    self.lsu_blocks.extend(b.iter().copied());
                }
                let mut load = NONE;
                if op.kind != AccessKind::Store {
                    let l = match ws.free_loads.pop() {
                        Some(l) => l,
                        None => {
                            ws.loads.push(Load::default());
                            (ws.loads.len() - 1) as u32
                        }
                    };
                    let ld = &mut ws.loads[l as usize];
                    ld.remaining = 0;
                    ld.issued_all = false;
                    ld.done_at = 0;
                    ld.dsts.clear();
                    ld.dsts.extend_from_slice(&st.dsts);
                    for d in &st.dsts {
                        if let Some(r) = ws.regs.get_mut(*d as usize) {
                            *r = PENDING;
                        }
                    }
                    load = l;
                }
                // Stores too keep the warp (and its TB) alive until the LSU has sent them.
                ws.outstanding += 1;
                self.lsu.push_back(LsuEntry {
                    warp: w,
                    op,
                    next: 0,
                    load,
                    refused: false,
                });
            }
            class => {
                let t = now + (slots - 1) + lat(class);
                for d in &st.dsts {
                    if let Some(r) = ws.regs.get_mut(*d as usize) {
                        *r = t;
                    }
                }
            }
        }
        self.maybe_finish(w, now);
    }

    /// The LSU popped its head access: a warp waiting for room can issue now. Only such a
    /// warp needs a scan for it; the pop's other effects (a completed load, a finished
    /// warp's barrier release) reset `scan_at` themselves.
    fn room_freed(&mut self) {
        if std::mem::take(&mut self.room_wanted) {
            self.scan_at = 0;
        }
    }

    fn lsu_cycle<M: MemPort>(&mut self, now: u64, mem: &mut M) {
        let mut budget = self.pipe.lsu_blocks_per_cycle.max(1);
        // The L1's data stage serves the blocks of `l1_lines_per_cycle` lines a cycle: a
        // warp access touching 16 lines takes 16 cycles however few sectors each.
        let mut lines = self.pipe.l1_lines_per_cycle.max(1);
        let mut line = u64::MAX;
        while budget > 0 {
            let Some(e) = self.lsu.front_mut() else {
                return;
            };
            if e.op.space == Space::Shared {
                let step = budget.min(e.op.len - e.next);
                e.next += step;
                budget -= step;
                if e.next >= e.op.len {
                    let (w, l) = (e.warp, e.load);
                    self.lsu.pop_front();
                    self.room_freed();
                    if l != NONE {
                        let t = now + u64::from(self.pipe.shared);
                        let ld = &mut self.warps[w as usize].loads[l as usize];
                        ld.done_at = t;
                        ld.issued_all = true;
                        self.complete(w, l, now);
                    } else {
                        self.store_sent(w, now);
                    }
                }
                continue;
            }
            let at = now + self.l1_latency;
            while budget > 0 && e.next < e.op.len {
                let block = self.lsu_blocks[e.next as usize];
                let l = match self.line_shift {
                    Some(k) => block >> k,
                    None => block / self.line_bytes,
                };
                if l != line {
                    if lines == 0 {
                        return;
                    }
                    lines -= 1;
                    line = l;
                }
                match e.op.kind {
                    AccessKind::Load => {
                        let who = (e.warp, e.load);
                        if let (Some(r), false) = (&mut self.reads, e.refused) {
                            let c = self.warps[e.warp as usize].ctx as usize;
                            if let Some(t) = &self.ctxs[c] {
                                r.push((t.tb, block / 128));
                            }
                        }
                        let outcome = if e.refused {
                            self.l1.read_again(block, who)
                        } else {
                            self.l1.read(block, who)
                        };
                        e.refused = false;
                        if let Some(l) = &mut self.ledger {
                            l.read(self.warps[e.warp as usize].ctx as usize, block, outcome);
                        }
                        let ld = &mut self.warps[e.warp as usize].loads[e.load as usize];
                        match outcome {
                            Outcome::Hit => ld.done_at = ld.done_at.max(at),
                            Outcome::HitReserve => ld.remaining += 1,
                            Outcome::Miss => {
                                ld.remaining += 1;
                                mem.send(self.id, block, self.block_bytes, ReqKind::Read, at);
                                // `--prefetch` (issue 17, `super::prefetch`).
                                let resident = self.ctxs.iter().flatten().map(|c| c.tb);
                                let bytes = u64::from(self.block_bytes);
                                if let Some(t) = self
                                    .l1
                                    .ld_mut()
                                    .and_then(|x| x.prefetch_target(block, bytes, resident))
                                {
                                    if self.l1.prefetch(t) == Prefetch::Issued {
                                        mem.send(self.id, t, self.block_bytes, ReqKind::Read, at);
                                        if let Some(l) = &mut self.ledger {
                                            let c = self.warps[e.warp as usize].ctx as usize;
                                            l.prefetched(c, t);
                                        }
                                    }
                                }
                            }
                            Outcome::ReservationFail => {
                                e.refused = true;
                                self.lsu_blocked = true;
                                self.lsu_wait = match self.l1.refusal(block) {
                                    Refusal::MergeFull => LsuWait::Fill(block),
                                    Refusal::NoMshr => LsuWait::AnyFill,
                                };
                                return;
                            }
                        }
                    }
                    AccessKind::Store => {
                        self.l1.write(block);
                        mem.send(self.id, block, self.block_bytes, ReqKind::Write, at);
                    }
                    AccessKind::Atomic => {
                        if e.load != NONE {
                            self.warps[e.warp as usize].loads[e.load as usize].remaining += 1;
                            self.atomics
                                .entry(block)
                                .or_default()
                                .push_back((e.warp, e.load));
                        }
                        mem.send(self.id, block, self.block_bytes, ReqKind::Atomic, at);
                    }
                }
                e.next += 1;
                budget -= 1;
            }
            if e.next >= e.op.len {
                let (w, l) = (e.warp, e.load);
                self.lsu_blocks.drain(..e.op.len as usize);
                self.lsu.pop_front();
                self.room_freed();
                if l != NONE {
                    let ld = &mut self.warps[w as usize].loads[l as usize];
                    ld.issued_all = true;
                    if ld.remaining == 0 {
                        self.complete(w, l, now);
                    }
                } else {
                    self.store_sent(w, now);
                }
            }
        }
    }
}
