//! One memory channel under FR-FCFS: its banks and row buffers, the controller's read and
//! write queues, and the command timing, in DRAM cycles (the parent module's doc gives the
//! model and its choices).
//!
//! Event-driven: the channel computes, after each step, the next DRAM cycle at which a
//! command can issue or a request reaches its queues, and asks to be woken then
//! ([`Channel::take_wake`]); nothing runs while nothing can happen. A step issues at most
//! one column command (READ / WRITE) and one row command (ACTIVATE / PRECHARGE), HBM's dual
//! command bus (GPGPU-Sim `-dram_dual_bus_interface`; GDDR's tCCD of two or more cycles
//! leaves the single bus the same room). Candidates are found per bank, not per request:
//! each bank keeps its requests in arrival order and knows its oldest row hit; the banks
//! with row hits are kept oldest hit first, so the column command is the first of them that
//! can issue; the banks needing a row command (a bit set) are scanned only once a lower
//! bound on their next command time has come (timing constraints only grow; a bank that
//! changes is added to the bound at once). A test steps the same channel at every DRAM
//! cycle and checks that the data come back at the same cycles.

use super::bank::{each, Bank, Bits, Order, Pc, Req, NONE};
use super::{DramStats, Tag};
use gpu::config::{DramConfig, Refresh};
use std::collections::VecDeque;
const READ: usize = 0;
const WRITE: usize = 1;

/// A channel's parameters: the timing in DRAM cycles, the geometry, the queues and the two
/// clocks.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    rcd: u64,
    rp: u64,
    ras: u64,
    rc: u64,
    cl: u64,
    wl: u64,
    ccd_s: u64,
    ccd_l: u64,
    rrd: u64,
    faw: u64,
    rtp: u64,
    /// READ to WRITE command: tCL + burst + 2 - tWL (GPGPU-Sim `tRTW`, gpu-sim.h), the read
    /// data leaving the bus with two cycles of turnaround before the write data.
    rtw: u64,
    /// WRITE to READ command: tWL + burst + tWTR (GPGPU-Sim `tWTR`).
    wtr: u64,
    /// WRITE to PRECHARGE: tWL + burst + tWR (GPGPU-Sim `tWTP`).
    wtp: u64,
    /// Cycles one burst holds the channel's (combined) data bus.
    burst: u64,
    refresh: Refresh,
    refi: u64,
    rfc: u64,
    pcs: usize,
    groups: usize,
    /// `groups - 1` and `pcs - 1` (powers of two): a bank's group is its low bits, a
    /// group's pseudo-channel the group's low bits.
    group_mask: usize,
    pc_mask: usize,
    banks: usize,
    read_queue: usize,
    write_queue: usize,
    write_high: usize,
    write_low: usize,
    core_mhz: u64,
    dram_mhz: u64,
    /// The controller's pipeline in core cycles ([`DramConfig::pipeline_core_cycles`]).
    pipeline: u64,
}

impl Timing {
    /// The parameters of `d` on a GPU whose core runs at `core_mhz`.
    pub fn new(d: &DramConfig, core_mhz: u32) -> Timing {
        let bl = u64::from(d.burst_length / d.data_rate.max(1));
        let (cl, wl) = (u64::from(d.t_cl), u64::from(d.t_wl));
        Timing {
            rcd: u64::from(d.t_rcd),
            rp: u64::from(d.t_rp),
            ras: u64::from(d.t_ras),
            rc: u64::from(d.t_rc),
            cl,
            wl,
            ccd_s: u64::from(d.t_ccd_s.max(1)),
            ccd_l: u64::from(d.t_ccd_l.max(d.t_ccd_s).max(1)),
            rrd: u64::from(d.t_rrd),
            faw: u64::from(d.t_faw),
            rtp: u64::from(d.t_rtp),
            rtw: (cl + bl + 2).saturating_sub(wl),
            wtr: wl + bl + u64::from(d.t_wtr),
            wtp: wl + bl + u64::from(d.t_wr),
            burst: u64::from(d.burst_cycles().max(1)),
            refresh: d.refresh,
            refi: u64::from(d.t_refi),
            rfc: u64::from(d.t_rfc),
            pcs: d.pseudo_channels.max(1).next_power_of_two() as usize,
            groups: d.bank_groups.max(1).next_power_of_two() as usize,
            group_mask: d.bank_groups.max(1).next_power_of_two() as usize - 1,
            pc_mask: d.pseudo_channels.max(1).next_power_of_two() as usize - 1,
            banks: d.banks.max(1) as usize,
            read_queue: d.read_queue.max(1) as usize,
            write_queue: d.write_queue.max(1) as usize,
            write_high: d.write_high.max(1) as usize,
            write_low: d.write_low as usize,
            core_mhz: u64::from(core_mhz.max(1)),
            dram_mhz: u64::from(d.clock_mhz.max(1)),
            pipeline: u64::from(d.pipeline_core_cycles(core_mhz)),
        }
    }

    /// The first DRAM cycle at or after core cycle `core`.
    fn dram_ceil(&self, core: u64) -> u64 {
        (core * self.dram_mhz).div_ceil(self.core_mhz)
    }

    /// The last DRAM cycle at or before core cycle `core`.
    fn dram_floor(&self, core: u64) -> u64 {
        core * self.dram_mhz / self.core_mhz
    }

    /// The first core cycle at or after DRAM cycle `dram`.
    fn core_ceil(&self, dram: u64) -> u64 {
        (dram * self.core_mhz).div_ceil(self.dram_mhz)
    }
}

/// A read's data is back: the request's tag and the core cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// Whose data.
    pub tag: Tag,
    /// Core cycle the data is available to the L2.
    pub at: u64,
}

/// One FR-FCFS channel.
pub struct Channel {
    t: Timing,
    banks: Vec<Bank>,
    /// Per bank group: earliest column command (tCCD_L).
    group_col: Vec<u64>,
    pcs: Vec<Pc>,
    /// The data bus is free from here.
    bus_free: u64,
    /// Earliest READ (after a WRITE) and WRITE (after a READ).
    rd_ok: u64,
    wr_ok: u64,
    /// Earliest column and row commands (one of each per cycle).
    col_cmd_ok: u64,
    row_cmd_ok: u64,
    /// Per kind: requests in the controller's pipeline, and past it waiting for a queue
    /// entry, in arrival order (the arrival times of a kind never decrease). A request that
    /// has arrived waits here only while its queue is full.
    pending: [VecDeque<Req>; 2],
    /// Requests in the bank queues, per kind.
    queued: [usize; 2],
    /// Banks with queued requests, and with row hits, per kind.
    has: [Bits; 2],
    hit: [Bits; 2],
    /// The banks of `hit`, oldest hit first (the column pass stops at the first that can
    /// issue).
    order: [Order; 2],
    draining: bool,
    /// The drain was started by the high watermark (else: no reads were waiting).
    forced: bool,
    /// Next DRAM cycle something can happen (`NONE`: nothing queued).
    next: u64,
    /// Core cycle of the earliest wake-up asked for and not yet delivered.
    event_at: u64,
    /// Earliest `next_ref` of the banks.
    next_ref: u64,
    /// Per kind: lower bounds on the bank-level time of the next column command (over the
    /// banks with row hits) and row command (over the banks with requests and no hit).
    /// Bank-level times only grow, so a bound stays a bound; a bank joining either set,
    /// or changed by a command, is added at once ([`Channel::note`]); a step that finds a
    /// bound above it skips that pass, and a pass sets the bound exactly.
    col_lb: [u64; 2],
    row_lb: [u64; 2],
    seq: u64,
    stats: DramStats,
}

impl Channel {
    /// Channel `id` of `channels`, with the parameters `t`.
    pub fn new(t: Timing, id: usize, channels: usize) -> Channel {
        let channels = channels.max(1) as u64;
        let (banks, id) = (t.banks, id as u64);
        // Refresh staggering: all-bank, channel c at (c + 1) / C of the interval; per bank,
        // bank b of channel c at (b C + c + 1) / (B C), so a channel's banks are refi / B
        // apart and the channels in between.
        let first = |b: u64| match t.refresh {
            Refresh::None => NONE,
            Refresh::AllBank => (id + 1) * t.refi / channels,
            Refresh::PerBank => (b * channels + id + 1) * t.refi / (banks as u64 * channels),
        };
        let banks_v: Vec<Bank> = (0..banks as u64)
            .map(|b| Bank {
                open: NONE,
                col_ok: 0,
                pre_ok: 0,
                act_ok: 0,
                next_ref: first(b),
                hit_seq: [NONE; 2],
                front_seq: [NONE; 2],
                hits: [0; 2],
                hit_pos: [0; 2],
                q: [VecDeque::new(), VecDeque::new()],
            })
            .collect();
        let next_ref = banks_v.iter().map(|b| b.next_ref).min().unwrap_or(NONE);
        Channel {
            banks: banks_v,
            group_col: vec![0; t.groups],
            pcs: vec![Pc::default(); t.pcs],
            bus_free: 0,
            rd_ok: 0,
            wr_ok: 0,
            col_cmd_ok: 0,
            row_cmd_ok: 0,
            pending: [VecDeque::new(), VecDeque::new()],
            queued: [0; 2],
            has: [Bits::new(banks), Bits::new(banks)],
            hit: [Bits::new(banks), Bits::new(banks)],
            order: [Order::default(), Order::default()],
            draining: false,
            forced: false,
            next: NONE,
            event_at: NONE,
            next_ref,
            col_lb: [NONE; 2],
            row_lb: [NONE; 2],
            seq: 0,
            stats: DramStats::default(),
            t,
        }
    }

    /// The counters.
    pub fn stats(&self) -> &DramStats {
        &self.stats
    }

    /// Whether nothing is queued or in the pipeline.
    pub fn is_idle(&self) -> bool {
        self.next == NONE
    }

    /// A request for `bank`, `row` of `bursts` bursts and `bytes` bytes handed over at core
    /// cycle `now`; it reaches the queues after the pipeline.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        bank: u32,
        row: u64,
        bursts: u32,
        bytes: u32,
        write: bool,
        tag: Tag,
        now: u64,
    ) {
        let arrive = self.t.dram_ceil(now + self.t.pipeline);
        if write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
        }
        self.stats.bytes += u64::from(bytes);
        self.pending[usize::from(write)].push_back(Req {
            seq: 0,
            bank,
            row,
            bursts: bursts.max(1),
            arrive,
            pushed: now,
            tag,
            write,
            act: false,
            pre: false,
        });
        self.next = self.next.min(arrive);
    }

    /// The core cycle to be woken at, when one is needed and not yet asked for.
    pub fn take_wake(&mut self) -> Option<u64> {
        if self.next == NONE {
            return None;
        }
        let c = self.t.core_ceil(self.next);
        (c < self.event_at).then(|| {
            self.event_at = c;
            c
        })
    }

    /// Woken at core cycle `now`: runs every DRAM cycle due by then; reads whose data is
    /// back go to `out`.
    pub fn wake(&mut self, now: u64, out: &mut Vec<Done>) {
        if self.event_at == now {
            self.event_at = NONE;
        }
        let until = self.t.dram_floor(now);
        while self.next <= until {
            let t = self.next;
            self.next = NONE;
            self.step(t, now, out);
        }
    }

    /// Tests: at core cycle `now`, a step at every DRAM cycle from `from` to the last one
    /// by `now`, whether or not the channel asked for them, as a channel polled every cycle
    /// would take; returns the next DRAM cycle to poll.
    #[cfg(test)]
    fn poll(&mut self, from: u64, now: u64, out: &mut Vec<Done>) -> u64 {
        let until = self.t.dram_floor(now);
        for t in from..=until {
            self.step(t, now, out);
        }
        until.max(from.saturating_sub(1)) + 1
    }

    /// Closes the rows refreshes have closed by DRAM cycle `t` and holds those banks for
    /// tRFC.
    fn refresh(&mut self, t: u64) {
        if t < self.next_ref {
            return;
        }
        let mut earliest = NONE;
        for i in 0..self.banks.len() {
            let b = &mut self.banks[i];
            if b.next_ref > t {
                earliest = earliest.min(b.next_ref);
                continue;
            }
            while b.next_ref <= t {
                if b.open != NONE {
                    b.open = NONE;
                    for k in [READ, WRITE] {
                        if b.hits[k] > 0 {
                            self.order[k].remove(b.hit_seq[k]);
                        }
                    }
                    b.hits = [0; 2];
                    self.hit[READ].set(i, false);
                    self.hit[WRITE].set(i, false);
                }
                b.act_ok = b.act_ok.max(b.next_ref + self.t.rfc);
                b.next_ref += self.t.refi;
            }
            earliest = earliest.min(b.next_ref);
            self.note(i);
        }
        self.next_ref = earliest;
    }

    /// Moves the requests that have arrived by `t` into their queues while there is room,
    /// in arrival order.
    fn admit(&mut self, t: u64) {
        for k in [READ, WRITE] {
            while self.queued[k] < self.cap(k) && self.arrived(k, t) {
                if let Some(r) = self.pending[k].pop_front() {
                    self.enqueue(k, r);
                }
            }
        }
    }

    /// Whether the oldest pending request of kind `k` has arrived by `t`.
    fn arrived(&self, k: usize, t: u64) -> bool {
        self.pending[k].front().is_some_and(|r| r.arrive <= t)
    }

    /// Whether a request of kind `k` has arrived and has room in its queue.
    fn admissible(&self, k: usize, t: u64) -> bool {
        self.queued[k] < self.cap(k) && self.arrived(k, t)
    }

    /// The arrival of the next request of kind `k` that will find room (`NONE`: none
    /// pending, or its queue is full: a column command frees an entry, and admits it).
    fn next_arrival(&self, k: usize) -> u64 {
        if self.queued[k] < self.cap(k) {
            self.pending[k].front().map_or(NONE, |r| r.arrive)
        } else {
            NONE
        }
    }

    /// Queue entries for kind `k`.
    fn cap(&self, k: usize) -> usize {
        if k == READ {
            self.t.read_queue
        } else {
            self.t.write_queue
        }
    }

    /// Puts `r` in its bank's queue of kind `k`.
    fn enqueue(&mut self, k: usize, mut r: Req) {
        self.seq += 1;
        r.seq = self.seq;
        let b = r.bank as usize;
        let bank = &mut self.banks[b];
        if bank.open == r.row {
            if bank.hits[k] == 0 {
                bank.hit_pos[k] = bank.q[k].len() as u32;
                bank.hit_seq[k] = r.seq;
                self.order[k].insert(r.seq, b);
            }
            bank.hits[k] += 1;
            self.hit[k].set(b, true);
        }
        if bank.q[k].is_empty() {
            bank.front_seq[k] = r.seq;
        }
        bank.q[k].push_back(r);
        self.has[k].set(b, true);
        self.queued[k] += 1;
        self.note(b);
    }

    /// Writes and reads in the queues. (An arrived request waits outside only while its
    /// queue is full, which every decision on these counts sees already: full is at least
    /// the high watermark, and not empty.)
    fn waiting(&self) -> (usize, usize) {
        (self.queued[WRITE], self.queued[READ])
    }

    /// The read / write mode for the next commands (draining, forced): drain writes from
    /// the high watermark down to the low one, or while no read waits; read otherwise.
    fn next_mode(&self) -> (bool, bool) {
        let (w, r) = self.waiting();
        let (mut drain, mut forced) = (self.draining, self.forced);
        if drain && (w == 0 || (forced && w <= self.t.write_low) || (!forced && r > 0)) {
            drain = false;
        }
        if !drain {
            if w >= self.t.write_high {
                (drain, forced) = (true, true);
            } else if r == 0 && w > 0 {
                (drain, forced) = (true, false);
            }
        }
        (drain, forced)
    }

    /// Takes the mode [`Channel::next_mode`] gives, counting the drains the high watermark
    /// starts.
    fn mode(&mut self) {
        let (drain, forced) = self.next_mode();
        if drain && forced && !(self.draining && self.forced) {
            self.stats.write_drains += 1;
        }
        (self.draining, self.forced) = (drain, forced);
    }

    /// Earliest column command of kind `k` the channel-wide constraints allow.
    fn col_floor(&self, k: usize) -> u64 {
        let (turn, lat) = if k == READ {
            (self.rd_ok, self.t.cl)
        } else {
            (self.wr_ok, self.t.wl)
        };
        self.col_cmd_ok
            .max(turn)
            .max(self.bus_free.saturating_sub(lat))
    }

    /// Earliest column command to bank `b` (its row open) the bank, its bank group and
    /// its pseudo-channel allow.
    fn bank_col(&self, b: usize) -> u64 {
        let g = b & self.t.group_mask;
        self.banks[b]
            .col_ok
            .max(self.group_col[g])
            .max(self.pcs[g & self.t.pc_mask].col_ok)
    }

    /// Earliest row command to bank `b` (PRECHARGE if a row is open, else ACTIVATE) the
    /// bank and its pseudo-channel allow.
    fn bank_row(&self, b: usize) -> u64 {
        let bank = &self.banks[b];
        if bank.open != NONE {
            bank.pre_ok
        } else {
            let pc = &self.pcs[b & self.t.group_mask & self.t.pc_mask];
            bank.act_ok.max(pc.act_ok).max(pc.faw_ok(self.t.faw))
        }
    }

    /// Debug builds: no bank can issue before its pass's bound (a bound above that would
    /// wake the channel late). A bank that could issue at the last step but lost to another
    /// is held by the command bus until the next cycle, which the bound may say.
    #[cfg(debug_assertions)]
    fn check_bounds(&self) {
        for k in [READ, WRITE] {
            let mut banks = Vec::new();
            each(&self.hit[k], None, |b| {
                banks.push((self.banks[b].hit_seq[k], b as u32))
            });
            banks.sort_unstable();
            assert_eq!(banks, self.order[k].0, "hit order");
            let floor = self.col_floor(k);
            each(&self.hit[k], None, |b| {
                let c = self.bank_col(b).max(floor);
                assert!(
                    c >= self.col_lb[k],
                    "column bound, bank {b}: {c} < {}",
                    self.col_lb[k]
                );
            });
            each(&self.has[k], Some(&self.hit[k]), |b| {
                let c = self.bank_row(b).max(self.row_cmd_ok);
                assert!(
                    c >= self.row_lb[k],
                    "row bound, bank {b}: {c} < {}",
                    self.row_lb[k]
                );
            });
        }
    }

    /// Adds bank `b`'s next command times to the bounds of the passes it now belongs to.
    fn note(&mut self, b: usize) {
        for k in [READ, WRITE] {
            let bank = &self.banks[b];
            if bank.hits[k] > 0 {
                self.col_lb[k] = self.col_lb[k].min(self.bank_col(b));
            } else if !bank.q[k].is_empty() {
                self.row_lb[k] = self.row_lb[k].min(self.bank_row(b));
            }
        }
    }

    /// Issues what can issue at DRAM cycle `t` (core cycle `now`), then sets `next`.
    ///
    /// One pass over the banks with row hits finds the column command and a lower bound on
    /// the next one; one over the banks with requests and no hit finds the row command and
    /// a lower bound on the next. Timing constraints only grow, so a bound computed before a
    /// command issued is still a bound after it (at worst a step wakes early and finds
    /// nothing to do); the bank that issued is looked at again.
    fn step(&mut self, t: u64, now: u64, out: &mut Vec<Done>) {
        self.refresh(t);
        if self.admissible(READ, t) || self.admissible(WRITE, t) {
            self.admit(t);
        }
        self.mode();
        #[cfg(debug_assertions)]
        self.check_bounds();
        let (w, r) = self.waiting();
        let mut next = self.next_arrival(READ).min(self.next_arrival(WRITE));
        if w + r == 0 {
            self.next = if next == NONE { NONE } else { next.max(t + 1) };
            return;
        }
        let k = if self.draining { WRITE } else { READ };
        // Column command: the oldest row hit that can issue now (first ready, then first
        // come).
        if self.col_lb[k].max(self.col_floor(k)) <= t {
            // Oldest hit first: the first bank that can issue is the one.
            let mut lb = NONE;
            let mut best = None;
            for &(_, b) in &self.order[k].0 {
                let c = self.bank_col(b as usize);
                if c <= t {
                    best = Some(b as usize);
                    break;
                }
                lb = lb.min(c);
            }
            match best {
                Some(b) => {
                    // The command bus holds the rest until the next cycle.
                    self.col_lb[k] = t + 1;
                    self.column(k, b, t, now, out);
                }
                None => self.col_lb[k] = lb,
            }
        }
        // Row command: for the bank whose oldest request is the oldest among the banks
        // without a hit that can take one now.
        if self.row_lb[k].max(self.row_cmd_ok) <= t {
            let mut best: Option<(u64, usize)> = None;
            let (mut ready, mut lb) = (0u32, NONE);
            each(&self.has[k], Some(&self.hit[k]), |b| {
                let c = self.bank_row(b);
                if c > t {
                    lb = lb.min(c);
                    return;
                }
                ready += 1;
                let seq = self.banks[b].front_seq[k];
                if best.is_none_or(|(s, _)| seq < s) {
                    best = Some((seq, b));
                }
            });
            self.row_lb[k] = if ready > 1 { lb.min(t + 1) } else { lb };
            if let Some((_, b)) = best {
                self.row(k, b, t);
            }
        }
        // Any column command waits for the channel's floor, any row command for the
        // command bus.
        next = next
            .min(self.col_lb[k].max(self.col_floor(k)))
            .min(self.row_lb[k].max(self.row_cmd_ok));
        if self.next_mode() != (self.draining, self.forced) {
            next = t + 1;
        }
        self.next = if next == NONE { NONE } else { next.max(t + 1) };
    }

    /// Issues the column command of the oldest request of kind `k` hitting bank `b`'s open
    /// row.
    fn column(&mut self, k: usize, b: usize, t: u64, now: u64, out: &mut Vec<Done>) {
        let bank = &mut self.banks[b];
        let pos = bank.hit_pos[k] as usize;
        let Some(r) = bank.q[k].remove(pos) else {
            return;
        };
        self.order[k].remove(bank.hit_seq[k]);
        if bank.hits[k] > 1 {
            bank.hits[k] -= 1;
            bank.next_hit(k, pos);
            self.order[k].insert(bank.hit_seq[k], b);
        } else {
            bank.hits[k] = 0;
            self.hit[k].set(b, false);
        }
        bank.set_front(k);
        if bank.q[k].is_empty() {
            self.has[k].set(b, false);
        }
        self.queued[k] -= 1;
        let tm = self.t;
        let g = b & tm.group_mask;
        let last = t + u64::from(r.bursts - 1) * tm.ccd_s;
        self.pcs[g & tm.pc_mask].col_ok = last + tm.ccd_s;
        self.group_col[g] = last + tm.ccd_l;
        self.col_cmd_ok = t + 1;
        let bank = &mut self.banks[b];
        if r.write {
            self.bus_free = last + tm.wl + tm.burst;
            self.rd_ok = self.rd_ok.max(last + tm.wtr);
            bank.pre_ok = bank.pre_ok.max(last + tm.wtp);
        } else {
            let data = last + tm.cl + tm.burst;
            self.bus_free = data;
            self.wr_ok = self.wr_ok.max(last + tm.rtw);
            bank.pre_ok = bank.pre_ok.max(last + tm.rtp);
            let at = tm.core_ceil(data).max(now);
            let lat = at - r.pushed;
            self.stats.read_latency_sum += lat;
            self.stats.read_latency_max = self.stats.read_latency_max.max(lat);
            out.push(Done { tag: r.tag, at });
        }
        match (r.pre, r.act) {
            (true, _) => self.stats.row_conflicts += 1,
            (false, true) => self.stats.row_misses += 1,
            (false, false) => self.stats.row_hits += 1,
        }
        self.note(b);
        if self.arrived(k, t) {
            self.admit(t);
        }
    }

    /// Issues the row command bank `b`'s oldest request of kind `k` needs.
    fn row(&mut self, k: usize, b: usize, t: u64) {
        let tm = self.t;
        self.row_cmd_ok = t + 1;
        let bank = &mut self.banks[b];
        let Some(front) = bank.q[k].front_mut() else {
            return;
        };
        if bank.open != NONE {
            front.pre = true;
            bank.open = NONE;
            bank.act_ok = bank.act_ok.max(t + tm.rp);
            for kk in [READ, WRITE] {
                if bank.hits[kk] > 0 {
                    self.order[kk].remove(bank.hit_seq[kk]);
                }
            }
            bank.hits = [0; 2];
            self.hit[READ].set(b, false);
            self.hit[WRITE].set(b, false);
            self.stats.precharges += 1;
            self.note(b);
            return;
        }
        front.act = true;
        let row = front.row;
        bank.open = row;
        bank.col_ok = t + tm.rcd;
        bank.pre_ok = bank.pre_ok.max(t + tm.ras);
        bank.act_ok = t + tm.rc;
        for kk in [READ, WRITE] {
            bank.find_hits(kk);
            self.hit[kk].set(b, bank.hits[kk] > 0);
            if bank.hits[kk] > 0 {
                self.order[kk].insert(bank.hit_seq[kk], b);
            }
        }
        let pc = &mut self.pcs[b & tm.group_mask & tm.pc_mask];
        pc.act_ok = t + tm.rrd;
        pc.acts[(pc.nacts % 4) as usize] = t;
        pc.nacts += 1;
        self.stats.activates += 1;
        self.note(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu::GpuConfig;

    /// A deterministic xorshift64 stream: each call gives a value below `n`.
    fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    /// Titan V's HBM2 with both clocks at 1000 MHz (one DRAM cycle = one core cycle), no
    /// refresh: latencies read straight off the timing parameters.
    fn hbm2() -> DramConfig {
        let mut d = GpuConfig::builtin("titanv").expect("titanv").dram;
        d.clock_mhz = 1000;
        d.refresh = Refresh::None;
        d
    }

    fn tag(block: u64) -> Tag {
        Tag { slice: 0, block }
    }

    /// Drives one channel as the memory side does: requests `(core cycle, bank, row,
    /// write)` handed over in order, wake-ups at the cycles it asks for; the reads' data
    /// times by block (the request's index).
    fn run(d: &DramConfig, reqs: &[(u64, u32, u64, bool)]) -> (Vec<(u64, u64)>, DramStats) {
        run_at(d, 1000, reqs)
    }

    /// [`run`] with the core clock at `core_mhz`.
    fn run_at(
        d: &DramConfig,
        core_mhz: u32,
        reqs: &[(u64, u32, u64, bool)],
    ) -> (Vec<(u64, u64)>, DramStats) {
        let t = Timing::new(d, core_mhz);
        let mut c = Channel::new(t, 0, 1);
        let mut wakes = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            let next_req = reqs.get(i).map(|r| r.0);
            let next_wake = wakes.iter().next().copied();
            let request = match (next_req, next_wake) {
                (Some(r), Some(w)) => r <= w,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if request {
                let (at, bank, row, write) = reqs[i];
                c.push(bank, row, 1, 32, write, tag(i as u64), at);
                i += 1;
            } else if let Some(w) = next_wake {
                wakes.remove(&w);
                c.wake(w, &mut out);
            }
            if let Some(w) = c.take_wake() {
                wakes.insert(w);
            }
        }
        assert!(c.is_idle());
        let mut got: Vec<(u64, u64)> = out.iter().map(|d| (d.tag.block, d.at)).collect();
        got.sort_unstable();
        (got, c.stats().clone())
    }

    /// A read's latency on an idle channel is the pipeline plus the device's part: row miss
    /// (precharged bank) tRCD + tCL + burst, row hit tCL + burst, row conflict tRP + tRCD +
    /// tCL + burst (the previous ACTIVATE long past tRAS and tRC).
    #[test]
    fn row_hit_miss_and_conflict_latency_come_from_the_timing() {
        let d = hbm2();
        let p = u64::from(d.pipeline_core_cycles(1000));
        let (rcd, rp, cl) = (u64::from(d.t_rcd), u64::from(d.t_rp), u64::from(d.t_cl));
        let burst = u64::from(d.burst_cycles());
        let (got, s) = run(
            &d,
            &[(0, 3, 7, false), (1000, 3, 7, false), (2000, 3, 8, false)],
        );
        assert_eq!(got[0].1, p + rcd + cl + burst, "row miss");
        assert_eq!(got[1].1 - 1000, p + cl + burst, "row hit");
        assert_eq!(got[2].1 - 2000, p + rp + rcd + cl + burst, "row conflict");
        // The FIFO model's unloaded latency: latency_cycles after the transfer.
        assert_eq!(p + rcd + cl, u64::from(d.latency_cycles));
        assert_eq!(
            (
                s.row_misses,
                s.row_hits,
                s.row_conflicts,
                s.activates,
                s.precharges
            ),
            (1, 1, 1, 2, 1)
        );
        assert_eq!(s.read_latency_max, p + rp + rcd + cl + burst);
    }

    /// Two reads to one bank, different rows, arriving together: the second waits for the
    /// first's row to close (tRAS from its ACTIVATE, then tRP) and tRC between the two
    /// ACTIVATEs. To two banks they overlap: the second is one tRRD (and one burst) behind.
    #[test]
    fn a_bank_conflict_serialises_and_two_banks_overlap() {
        let d = hbm2();
        let p = u64::from(d.pipeline_core_cycles(1000));
        let t = |x: u32| u64::from(x);
        let burst = u64::from(d.burst_cycles());
        let (same, _) = run(&d, &[(0, 0, 1, false), (0, 0, 2, false)]);
        let act2 = p + t(d.t_rc).max(t(d.t_ras) + t(d.t_rp));
        assert_eq!(same[0].1, p + t(d.t_rcd) + t(d.t_cl) + burst);
        assert_eq!(same[1].1, act2 + t(d.t_rcd) + t(d.t_cl) + burst);
        // Banks 0 and 1 are in different bank groups (the group is the bank's low bits).
        let (two, _) = run(&d, &[(0, 0, 1, false), (0, 1, 2, false)]);
        assert_eq!(two[0].1, same[0].1);
        assert_eq!(two[1].1, same[0].1 + t(d.t_rrd));
        assert!(two[1].1 < same[1].1);
    }

    /// FR-FCFS: with bank 0's row 5 open, an older read of row 6 (a conflict) and a younger
    /// read of row 5 (a hit) arrive together; the younger is served first, while the older
    /// waits for its PRECHARGE and ACTIVATE.
    #[test]
    fn fr_fcfs_serves_a_younger_row_hit_before_an_older_miss() {
        let d = hbm2();
        let (got, s) = run(
            &d,
            &[(0, 0, 5, false), (1000, 0, 6, false), (1000, 0, 5, false)],
        );
        let (older, younger) = (got[1].1, got[2].1);
        assert!(younger < older, "hit {younger} before conflict {older}");
        let p = u64::from(d.pipeline_core_cycles(1000));
        let burst = u64::from(d.burst_cycles());
        assert_eq!(younger - 1000, p + u64::from(d.t_cl) + burst);
        assert_eq!((s.row_hits, s.row_conflicts, s.row_misses), (1, 1, 1));
    }

    /// Writes wait while reads are queued until the high watermark; then they drain down to
    /// the low one before reads go on. With no read waiting, writes go at once.
    #[test]
    fn writes_drain_between_the_watermarks() {
        let mut d = hbm2();
        (d.write_queue, d.write_high, d.write_low) = (8, 6, 2);
        // Reads to bank 0 keep the read queue busy (row conflicts, one per tRC); writes to
        // bank 1 arrive meanwhile.
        let mut reqs: Vec<(u64, u32, u64, bool)> = (0..40).map(|i| (i, 0, i, false)).collect();
        reqs.extend((0..6).map(|i| (100 + i, 1, 9, true)));
        reqs.sort_by_key(|r| r.0);
        let (got, s) = run(&d, &reqs);
        assert_eq!(s.write_drains, 1);
        assert_eq!(s.writes, 6);
        assert_eq!(got.len(), 40);
        // During the drain (four writes, from 6 pending down to 2) no read's data returns:
        // the reads are served one per tRC, so a gap of at least tRC plus the drain shows
        // up between two consecutive reads.
        let times: Vec<u64> = got.iter().map(|g| g.1).collect();
        let mut sorted = times.clone();
        sorted.sort_unstable();
        let gap = sorted.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        assert!(gap > u64::from(d.t_rc), "largest gap {gap}");
        // Without reads, a single write goes out without waiting for the watermark.
        let (_, s) = run(&d, &[(0, 1, 9, true)]);
        assert_eq!((s.writes, s.write_drains, s.row_misses), (1, 0, 1));
    }

    /// The event-driven channel against the same channel stepped at every DRAM cycle (the
    /// obvious, slow schedule), each GPU at its own clocks (several DRAM cycles per core
    /// cycle on some), with queues small enough to fill, mostly reads and mixed traffic,
    /// refresh on: every read's data comes back at the same cycle, so skipping the cycles
    /// the channel did not ask for changes nothing.
    #[test]
    fn waking_only_when_asked_equals_stepping_every_cycle() {
        for (gpu, seed, writes) in [
            ("h100", 7u64, 3),
            ("titanv", 11, 3),
            ("gtx480", 13, 3),
            ("titanx_pascal", 17, 50),
            ("h100", 19, 50),
        ] {
            let g = GpuConfig::builtin(gpu).expect("gpu");
            let mut d = g.dram.clone();
            (d.read_queue, d.write_queue, d.write_high, d.write_low) = (12, 8, 6, 2);
            d.refresh = Refresh::PerBank;
            (d.t_refi, d.t_rfc) = (900, 60);
            let core = g.core.clock_mhz;
            let mut rnd = xorshift(seed);
            let mut reqs = Vec::new();
            let mut at = 0;
            for _ in 0..1500 {
                at += rnd(3);
                reqs.push((at, rnd(u64::from(d.banks)) as u32, rnd(4), rnd(writes) == 0));
            }
            let (fast, _) = run_at(&d, core, &reqs);
            // Every core cycle: hand over the requests due, then a step at every DRAM cycle.
            let mut c = Channel::new(Timing::new(&d, core), 0, 1);
            let mut out = Vec::new();
            let (mut i, mut now, mut from) = (0, 0, 0);
            while i < reqs.len() || !c.is_idle() {
                while i < reqs.len() && reqs[i].0 == now {
                    let (at, bank, row, write) = reqs[i];
                    c.push(bank, row, 1, 32, write, tag(i as u64), at);
                    i += 1;
                }
                from = c.poll(from, now, &mut out);
                now += 1;
            }
            let mut slow: Vec<(u64, u64)> = out.iter().map(|d| (d.tag.block, d.at)).collect();
            slow.sort_unstable();
            assert_eq!(fast, slow, "{gpu}");
        }
    }

    /// A random mix of reads and writes over a few banks and rows, with refresh, on the
    /// HBM3 channel (pseudo-channels, bank groups): every read comes back, once, after at
    /// least the row-hit latency; the queues empty; and (debug builds) every step checks
    /// that no bank can issue before its pass's bound, so the channel is never woken late.
    #[test]
    fn random_traffic_completes_and_keeps_the_bounds() {
        let mut d = GpuConfig::builtin("h100").expect("h100").dram;
        (d.read_queue, d.write_queue, d.write_high, d.write_low) = (16, 8, 6, 2);
        d.clock_mhz = 1000;
        let mut rnd = xorshift(0x9E37_79B9);
        let mut reqs = Vec::new();
        let mut at = 0;
        for _ in 0..3000 {
            at += rnd(4);
            reqs.push((at, rnd(24) as u32, rnd(3), rnd(4) == 0));
        }
        let reads = reqs.iter().filter(|r| !r.3).count();
        let (got, s) = run(&d, &reqs);
        assert_eq!(got.len(), reads);
        let p = u64::from(d.pipeline_core_cycles(1000));
        let fastest = p + u64::from(d.t_cl + d.burst_cycles());
        for &(i, done) in &got {
            assert!(done >= reqs[i as usize].0 + fastest, "read {i}");
        }
        assert_eq!(s.row_hits + s.row_misses + s.row_conflicts, 3000);
        assert!(s.row_conflicts > 0 && s.row_hits > 0 && s.write_drains > 0);
    }

    /// Per-bank refresh closes an open row: a hit-pattern read after the bank's refresh is a
    /// row miss again.
    #[test]
    fn refresh_closes_the_row() {
        let mut d = hbm2();
        d.refresh = Refresh::PerBank;
        (d.t_refi, d.t_rfc) = (3000, 100);
        // Bank 0 of 16 (one channel): its refresh at (0 + 0 + 1) / 16 of 3000, then every
        // 3000 cycles.
        let first = 3000 / 16;
        let (_, s) = run(
            &d,
            &[
                (first + 10, 0, 4, false),
                (first + 500, 0, 4, false),
                (first + 3100, 0, 4, false),
            ],
        );
        assert_eq!((s.row_misses, s.row_hits), (2, 1));
    }
}
