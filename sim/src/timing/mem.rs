//! The memory side shared by all SMs: the interconnect, the L2 slices (one cache each,
//! `slices / channels` per DRAM channel) and the DRAM channels, advanced by a FIFO event
//! queue. SMs hand it block requests ([`MemSystem::send`]) and collect replies
//! ([`MemSystem::cycle`]).
//!
//! Latencies, for a read of one block injected at `t` (what the pointer-chase test checks):
//! L2 hit = NoC request + `l2.latency_cycles` + NoC reply; L2 miss adds the DRAM access
//! ([`super::dram`]: the controller's pipeline, the queue and the device time of the row
//! state it finds; the FIFO model: the transfer and `dram.latency_cycles`). The DRAM
//! channels hand back completion times, and ask to be woken for their next command, through
//! this module's event queue. Writes are fire-and-forget (write-back L2 by
//! default). Atomics are performed at the L2 (a write there) and answered like a hit.
//!
//! Waiting is event-driven. A read an L2 slice refuses (a reservation fail) waits for the
//! event that can admit it and is presented again only then, never polled: a read refused
//! because its block's MSHR has merged its maximum waits for that block's fill (and then
//! hits); a read refused because every MSHR is taken joins the slice's queue of blocks
//! waiting for an MSHR (oldest first; later reads of a queued block join its entry), and
//! each fill, which frees an MSHR, admits the queue's head block with all its reads (one
//! miss, merges up to the limit, the rest wait for that block's fill). A write that makes a
//! queued or merge-waiting block present admits its reads as hits. Each refused read is
//! counted once in `reservation_fails`, however long it waits ([`Cache::read_again`]).

use super::addr_map::SliceMap;
use super::block_map::BlockMap;
use super::cache::{Cache, CacheStats, Geometry, Outcome, Refusal};
use super::config::TimingConfig;
use super::dram::{ChannelMap, Done, Dram, DramStats, Tag};
use super::events::EventQueue;
use super::icc::{Icc, IccStats, Lookup};
use super::noc::{Noc, NocStats};
use super::numa::{Numa, NumaStats};
use std::collections::VecDeque;

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqKind {
    /// Block read (L1 miss).
    Read,
    /// Block write (write-through L1).
    Write,
    /// Atomic / reduction on the block.
    Atomic,
}

/// Where an SM's step sends its block requests: the memory system itself, or (in the
/// parallel phase, [`super::par`]) the SM's outbox, replayed into the memory system in SM
/// order afterwards. [`MemSystem::send`] returns nothing and nothing in an SM's step reads
/// the memory system, so the replay leaves it exactly as direct sends in SM order do.
pub trait MemPort {
    /// SM `sm` sends a request for the block at `block` (of `bytes` bytes) at `now`.
    fn send(&mut self, sm: u32, block: u64, bytes: u32, kind: ReqKind, now: u64);
}

impl MemPort for MemSystem {
    fn send(&mut self, sm: u32, block: u64, bytes: u32, kind: ReqKind, now: u64) {
        MemSystem::send(self, sm, block, bytes, kind, now);
    }
}

/// One request an SM sent during a parallel step, waiting in its outbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Block address.
    pub block: u64,
    /// Bytes (the L1's block size).
    pub bytes: u32,
    /// Read, write or atomic.
    pub kind: ReqKind,
    /// When it was sent.
    pub at: u64,
}

/// An SM's outbox: its requests in the order it sent them (the SM id is the outbox's).
#[derive(Debug, Default)]
pub struct Outbox(pub Vec<Request>);

impl MemPort for Outbox {
    fn send(&mut self, _sm: u32, block: u64, bytes: u32, kind: ReqKind, now: u64) {
        self.0.push(Request {
            block,
            bytes,
            kind,
            at: now,
        });
    }
}

/// A reply delivered to an SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The SM.
    pub sm: u32,
    /// Block address.
    pub block: u64,
    /// Read or atomic.
    pub kind: ReqKind,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Arrive {
        sm: u32,
        slice: u32,
        block: u64,
        kind: ReqKind,
    },
    DramFill {
        slice: u32,
        block: u64,
    },
    /// A DRAM channel can issue a command or take a request ([`Dram::wake`]).
    DramWake(u32),
    Deliver(Reply),
    /// A read miss at its cluster's ICC unit (merge table on).
    IccLookup {
        sm: u32,
        block: u64,
    },
    /// A read reply at its cluster, to go through the merge table (merge table on).
    IccDeliver(Reply),
}

/// The memory side.
pub struct MemSystem {
    noc: Noc,
    l2: Vec<Cache<(u32, ReqKind)>>,
    slice_map: SliceMap,
    dram: Dram,
    /// Slice -> DRAM channel and the channel-local line number.
    channel_map: ChannelMap,
    /// Scratch of a DRAM call: the reads whose data is back.
    dram_done: Vec<Done>,
    l2_line: u64,
    /// `log2(l2_line)` when the line is a power of two (every shipped configuration): the
    /// line number is a shift, not a 64-bit division, on every request.
    l2_line_shift: Option<u32>,
    /// Per slice: its DRAM channel ([`ChannelMap::channel`], computed once).
    channel: Vec<u32>,
    l2_latency: u64,
    block: u32,
    header: u32,
    events: EventQueue<Event>,
    /// Per slice: the refused reads, waiting for the event that admits them.
    waiting: Vec<Waiting>,
    /// Scratch of a wake-up: the SMs whose reads are presented again.
    retry: Vec<u32>,
    /// Scratch of a fill: the reads its MSHR held.
    fill_waiters: Vec<(u32, ReqKind)>,
    /// Intra-cluster coalescing, when an `icc` key is on ([`super::icc`]).
    icc: Option<Icc>,
    /// Scratch of an ICC reply: the SMs it goes to.
    icc_sms: Vec<u32>,
    /// The modules of a multi-module GPU ([`super::numa`]): homes, links, counters.
    numa: Option<Numa>,
}

/// The refused reads of one slice (see the module doc).
#[derive(Default)]
struct Waiting {
    /// Blocks waiting for an MSHR, oldest first, with the sequence number of their entry in
    /// `groups` (an entry admitted early by a write leaves a stale item here, skipped).
    order: VecDeque<(u64, u64)>,
    /// Per block waiting for an MSHR: its entry's sequence number and the requesting SMs,
    /// in arrival order.
    groups: BlockMap<(u64, Vec<u32>)>,
    /// Per block whose MSHR is full: the requesting SMs, in arrival order.
    merge: BlockMap<Vec<u32>>,
    seq: u64,
    /// Reads waiting in all.
    count: usize,
}

impl MemSystem {
    /// Builds the memory side of `cfg`.
    pub fn new(cfg: &TimingConfig) -> MemSystem {
        let g = &cfg.gpu;
        let slices = g.l2.slices.max(1);
        let geometry = Geometry::l2_slice(g, cfg.mem.l2_write);
        let l2 = (0..slices)
            .map(|_| Cache::new(geometry))
            .collect::<Vec<_>>();
        let block = l2[0].block_bytes() as u32;
        let channel_map = ChannelMap::new(slices, g.dram.channels);
        MemSystem {
            noc: Noc::new(
                g.interconnect.clusters,
                g.interconnect.sms_per_cluster,
                slices,
                g.interconnect.flit_bytes,
                cfg.mem.noc_latency,
                g.core.clock_mhz,
                g.interconnect.clock_mhz,
            ),
            l2,
            slice_map: SliceMap::new(
                g.l2.slice_index,
                slices,
                g.l2.set_index,
                g.l2.sets_per_slice,
            ),
            dram: Dram::new(g, block),
            channel_map,
            dram_done: Vec::new(),
            l2_line: u64::from(geometry.line),
            l2_line_shift: geometry
                .line
                .is_power_of_two()
                .then(|| geometry.line.trailing_zeros()),
            channel: (0..slices).map(|s| channel_map.channel(s)).collect(),
            l2_latency: u64::from(g.l2.latency_cycles),
            block,
            header: cfg.mem.header_bytes,
            events: EventQueue::default(),
            waiting: (0..slices).map(|_| Waiting::default()).collect(),
            retry: Vec::new(),
            fill_waiters: Vec::new(),
            icc: cfg.icc.active().then(|| {
                Icc::new(
                    &cfg.icc,
                    g.interconnect.clusters,
                    g.interconnect.sms_per_cluster,
                )
            }),
            icc_sms: Vec::new(),
            numa: None,
        }
    }

    /// Makes the memory side a multi-module one (`None`: one module, as built).
    pub fn set_numa(&mut self, numa: Option<Numa>) {
        self.numa = numa;
    }

    /// NUMA counters (`None` on a GPU with one module); `sm_tbs`: TBs each SM ran.
    pub fn numa_stats(&self, sm_tbs: &[u64]) -> Option<NumaStats> {
        self.numa.as_ref().map(|n| n.stats(sm_tbs))
    }

    /// The L2 slice of the block at `block`: hashed line-address bits
    /// ([`super::addr_map::SliceMap`]).
    pub fn slice_of(&self, block: u64) -> u32 {
        let line = match self.l2_line_shift {
            Some(k) => block >> k,
            None => block / self.l2_line,
        };
        self.slice_map.slice(line)
    }

    /// The DRAM channel behind `slice`: `slices / channels` consecutive slices share one
    /// (GPGPU-Sim's two sub-partitions per memory partition; [`ChannelMap`]).
    fn channel_of(&self, slice: u32) -> usize {
        self.channel[slice as usize] as usize
    }

    /// SM `sm` sends a request for the block at `block` (of `bytes` bytes, the L1's block
    /// size) at `now`.
    pub fn send(&mut self, sm: u32, block: u64, bytes: u32, kind: ReqKind, now: u64) {
        if kind == ReqKind::Read {
            if let Some(icc) = self.icc.as_mut() {
                icc.record(sm, block, now);
                if icc.intercepts() {
                    let t = now + icc.lookup_delay();
                    self.events.push(t, Event::IccLookup { sm, block });
                    return;
                }
                icc.count_injected();
            }
        }
        self.inject(sm, block, bytes, kind, now);
    }

    /// Puts the request on the NoC at `now`.
    fn inject(&mut self, sm: u32, block: u64, bytes: u32, kind: ReqKind, now: u64) {
        let slice = match self.numa.as_mut() {
            Some(n) => n.slice(sm, block),
            None => self.slice_of(block),
        };
        let size = match kind {
            ReqKind::Read => self.header,
            ReqKind::Write | ReqKind::Atomic => self.header + bytes,
        };
        let mut at = self.noc.request(sm, slice, size, now);
        if let Some(n) = self.numa.as_mut() {
            let data = if kind == ReqKind::Read {
                self.block
            } else {
                bytes
            };
            at = n.request(sm, slice, size, data, at);
        }
        self.events.push(
            at,
            Event::Arrive {
                sm,
                slice,
                block,
                kind,
            },
        );
    }

    /// When the next internal event is due.
    pub fn next_time(&self) -> Option<u64> {
        self.events.next_time()
    }

    /// Whether nothing is in flight.
    pub fn is_idle(&self) -> bool {
        self.events.is_empty() && self.waiting.iter().all(|w| w.count == 0) && self.dram.is_idle()
    }

    /// Reads refused by an L2 slice and waiting for an MSHR or a fill, now.
    pub fn waiting_reads(&self) -> usize {
        self.waiting.iter().map(|w| w.count).sum()
    }

    /// A read from `sm` reaching slice `slice` at `now` (`again`: it was refused before and
    /// is not counted as a reservation fail a second time).
    fn read(&mut self, slice: u32, sm: u32, block: u64, now: u64, again: bool) {
        let s = slice as usize;
        let c = &mut self.l2[s];
        let outcome = if again {
            c.read_again(block, (sm, ReqKind::Read))
        } else {
            c.read(block, (sm, ReqKind::Read))
        };
        match outcome {
            Outcome::Hit => self.reply(slice, sm, block, ReqKind::Read, now + self.l2_latency),
            Outcome::HitReserve => {}
            Outcome::Miss => self.dram_read(slice, block, now + self.l2_latency),
            Outcome::ReservationFail => {
                let w = &mut self.waiting[s];
                w.count += 1;
                match self.l2[s].refusal(block) {
                    Refusal::MergeFull => w.merge.entry(block).or_default().push(sm),
                    Refusal::NoMshr => {
                        if let Some(g) = w.groups.get_mut(&block) {
                            g.1.push(sm);
                        } else {
                            w.seq += 1;
                            w.order.push_back((w.seq, block));
                            w.groups.insert(block, (w.seq, vec![sm]));
                        }
                    }
                }
            }
        }
    }

    /// Presents the reads of `sms` for `block` again at `now`, in order.
    fn admit(&mut self, slice: u32, block: u64, sms: &[u32], now: u64) {
        self.waiting[slice as usize].count -= sms.len();
        for &sm in sms {
            self.read(slice, sm, block, now, true);
        }
    }

    /// Block `block` of slice `slice` was filled at `now`, freeing an MSHR: the reads that
    /// waited for that block's MSHR hit, then the oldest block waiting for an MSHR gets it.
    fn on_fill(&mut self, slice: u32, block: u64, now: u64) {
        let s = slice as usize;
        if self.waiting[s].count == 0 {
            return;
        }
        let mut retry = std::mem::take(&mut self.retry);
        if let Some(v) = self.waiting[s].merge.remove(&block) {
            retry.clear();
            retry.extend_from_slice(&v);
            self.admit(slice, block, &retry, now);
        }
        // One MSHR is free: the head block takes it (its first read misses, the others merge
        // or wait for its fill), unless a read of it hits now.
        while let Some((seq, b)) = self.waiting[s].order.pop_front() {
            let w = &mut self.waiting[s];
            if w.groups.get(&b).is_none_or(|g| g.0 != seq) {
                continue;
            }
            let Some((_, sms)) = w.groups.remove(&b) else {
                continue;
            };
            let before = self.l2[s].mshrs_used();
            self.admit(slice, b, &sms, now);
            // A group that only hit leaves the MSHR free for the next one.
            if self.l2[s].mshrs_used() > before || self.waiting[s].groups.contains_key(&b) {
                break;
            }
        }
        retry.clear();
        self.retry = retry;
    }

    /// Slice `slice` wrote block `block` at `now`: if that made the block present, the reads
    /// waiting for it hit.
    fn on_write(&mut self, slice: u32, block: u64, now: u64) {
        let s = slice as usize;
        if self.waiting[s].count == 0 || !self.l2[s].is_present(block) {
            return;
        }
        let mut retry = std::mem::take(&mut self.retry);
        retry.clear();
        let w = &mut self.waiting[s];
        if let Some(v) = w.merge.remove(&block) {
            retry.extend_from_slice(&v);
        }
        if let Some((_, v)) = w.groups.remove(&block) {
            retry.extend_from_slice(&v);
        }
        if !retry.is_empty() {
            self.admit(slice, block, &retry, now);
        }
        retry.clear();
        self.retry = retry;
    }

    fn reply(&mut self, slice: u32, sm: u32, block: u64, kind: ReqKind, at: u64) {
        let bytes = self.header + if kind == ReqKind::Read { self.block } else { 4 };
        let mut t = self.noc.reply(slice, sm, bytes, at);
        if let Some(n) = self.numa.as_mut() {
            t = n.reply(slice, sm, bytes, t);
        }
        let r = Reply { sm, block, kind };
        let icc = kind == ReqKind::Read && self.icc.as_ref().is_some_and(Icc::intercepts);
        self.events.push(
            t,
            if icc {
                Event::IccDeliver(r)
            } else {
                Event::Deliver(r)
            },
        );
    }

    fn writeback(&mut self, slice: u32, victim: Option<u64>, now: u64) {
        if let Some(v) = victim {
            let ch = self.channel_of(slice);
            let line = self.dram_line(slice, v);
            if let Some(w) = self.dram.write(ch, line, v, now) {
                self.events.push(w, Event::DramWake(ch as u32));
            }
        }
    }

    /// The channel-local line number of `block` in `slice`'s channel ([`super::dram::map`]).
    fn dram_line(&self, slice: u32, block: u64) -> u64 {
        if let Some(n) = &self.numa {
            return self
                .channel_map
                .hashed_line(n.module_line(block), n.modules());
        }
        let line = match self.l2_line_shift {
            Some(k) => block >> k,
            None => block / self.l2_line,
        };
        self.channel_map.line(slice, self.slice_map.local(line))
    }

    /// Slice `slice` missed `block`: the read goes to its DRAM channel at `at`.
    fn dram_read(&mut self, slice: u32, block: u64, at: u64) {
        let ch = self.channel_of(slice);
        let line = self.dram_line(slice, block);
        let mut done = std::mem::take(&mut self.dram_done);
        done.clear();
        let wake = self
            .dram
            .read(ch, line, Tag { slice, block }, at, &mut done);
        self.dram_events(ch, &done, wake);
        self.dram_done = done;
    }

    /// Queues the fills of the reads in `done` and channel `ch`'s wake-up `wake`.
    fn dram_events(&mut self, ch: usize, done: &[Done], wake: Option<u64>) {
        for d in done {
            self.events.push(
                d.at,
                Event::DramFill {
                    slice: d.tag.slice,
                    block: d.tag.block,
                },
            );
        }
        if let Some(w) = wake {
            self.events.push(w, Event::DramWake(ch as u32));
        }
    }

    /// Processes everything due at `now`; replies arriving at SMs go to `out`.
    pub fn cycle(&mut self, now: u64, out: &mut Vec<Reply>) {
        while let Some((_, ev)) = self.events.pop_due(now) {
            match ev {
                Event::Deliver(r) => out.push(r),
                Event::IccLookup { sm, block } => self.icc_lookup(sm, block, now, out),
                Event::IccDeliver(r) => {
                    let mut sms = std::mem::take(&mut self.icc_sms);
                    sms.clear();
                    if let Some(icc) = self.icc.as_mut() {
                        icc.reply(r.sm, r.block, &mut sms);
                    }
                    out.extend(sms.iter().map(|&sm| Reply { sm, ..r }));
                    self.icc_sms = sms;
                }
                Event::Arrive {
                    sm,
                    slice,
                    block,
                    kind,
                } => {
                    let s = slice as usize;
                    match kind {
                        ReqKind::Write => {
                            let (_, victim) = self.l2[s].write(block);
                            self.writeback(slice, victim, now);
                            self.on_write(slice, block, now);
                        }
                        ReqKind::Atomic => {
                            let (_, victim) = self.l2[s].write(block);
                            self.writeback(slice, victim, now);
                            self.reply(slice, sm, block, kind, now + self.l2_latency);
                            self.on_write(slice, block, now);
                        }
                        ReqKind::Read => self.read(slice, sm, block, now, false),
                    }
                }
                Event::DramWake(ch) => {
                    let ch = ch as usize;
                    let mut done = std::mem::take(&mut self.dram_done);
                    done.clear();
                    let wake = self.dram.wake(ch, now, &mut done);
                    self.dram_events(ch, &done, wake);
                    self.dram_done = done;
                }
                Event::DramFill { slice, block } => {
                    let mut waiters = std::mem::take(&mut self.fill_waiters);
                    waiters.clear();
                    let victim = self.l2[slice as usize].fill_into(block, &mut waiters);
                    self.writeback(slice, victim, now);
                    for &(sm, kind) in &waiters {
                        self.reply(slice, sm, block, kind, now);
                    }
                    self.fill_waiters = waiters;
                    self.on_fill(slice, block, now);
                }
            }
        }
    }

    /// A read miss of `sm` for `block` at its cluster's ICC unit at `now`: answered by the
    /// coalesced cache, merged, or injected after the merge table's latency.
    fn icc_lookup(&mut self, sm: u32, block: u64, now: u64, out: &mut Vec<Reply>) {
        let Some(icc) = self.icc.as_mut() else {
            return;
        };
        match icc.lookup(sm, block) {
            Lookup::CcHit => out.push(Reply {
                sm,
                block,
                kind: ReqKind::Read,
            }),
            Lookup::Merged => {}
            Lookup::Send { .. } => {
                let at = now + icc.inject_delay();
                self.inject(sm, block, self.block, ReqKind::Read, at);
            }
        }
    }

    /// ICC counters (`None` without an ICC key on).
    pub fn icc_stats(&self) -> Option<IccStats> {
        self.icc.as_ref().map(Icc::stats)
    }

    /// L2 counters summed over slices.
    pub fn l2_stats(&self) -> CacheStats {
        let mut s = CacheStats::default();
        for c in &self.l2 {
            s += c.stats();
        }
        s
    }

    /// DRAM counters summed over channels.
    pub fn dram_stats(&self) -> DramStats {
        self.dram.stats()
    }

    /// Interconnect counters.
    pub fn noc_stats(&self) -> NocStats {
        self.noc.stats().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu::GpuConfig;

    /// One L2 slice with one MSHR that merges one request: reads of blocks A, B, C and A
    /// again arrive together. A misses; B and C wait for the MSHR, the second A for A's
    /// fill. Each refusal counts once, every read is answered, A's second read as a hit at
    /// A's fill, then B and C one after the other (each fill frees the MSHR for the next).
    #[test]
    fn refused_reads_wait_for_the_fill_and_count_once() {
        let mut cfg = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
        for (k, v) in [
            ("l2.slices", "1"),
            ("l2.mshr_entries", "1"),
            ("l2.mshr_max_merge", "1"),
            ("dram.channels", "1"),
        ] {
            cfg.set(k, v).expect("set");
        }
        let mut m = MemSystem::new(&cfg);
        let line = u64::from(cfg.gpu.l2.line_bytes);
        let (a, b, c) = (0, 64 * line, 128 * line);
        for blk in [a, b, c, a] {
            m.send(0, blk, 128, ReqKind::Read, 0);
        }
        let mut got = Vec::new();
        let mut out = Vec::new();
        while let Some(t) = m.next_time() {
            out.clear();
            m.cycle(t, &mut out);
            got.extend(out.iter().map(|r| (r.block, t)));
        }
        assert!(m.is_idle());
        let order: Vec<u64> = got.iter().map(|g| g.0).collect();
        assert_eq!(order, vec![a, a, b, c]);
        // B's miss starts only at A's fill: its DRAM access follows, so it arrives later.
        assert!(got[2].1 > got[1].1 && got[3].1 > got[2].1);
        let s = m.l2_stats();
        assert_eq!(
            (s.accesses, s.hits, s.misses, s.reservation_fails),
            (4, 1, 3, 3)
        );
    }

    /// Runs the memory side until idle; the replies with their arrival times.
    fn drain(m: &mut MemSystem) -> Vec<(u32, u64, u64)> {
        let mut got = Vec::new();
        let mut out = Vec::new();
        while let Some(t) = m.next_time() {
            out.clear();
            m.cycle(t, &mut out);
            got.extend(out.iter().map(|r| (r.sm, r.block, t)));
        }
        got
    }

    /// The ICC GPU (12 clusters of 5 SMs) with the merge table: SMs 0, 1 and 4 (cluster 0)
    /// and SM 5 (cluster 1) read one block at the same time. Cluster 0 sends one request,
    /// cluster 1 another: two NoC requests; the reply to SM 0 reaches SMs 0, 1 and 4 at the
    /// same cycle. Without ICC the four reads are four requests.
    #[test]
    fn merge_table_sends_once_per_cluster_and_broadcasts() {
        let blk = 0x4000;
        let run = |icc: bool| {
            let mut cfg = TimingConfig::new(GpuConfig::builtin("icc").expect("icc"));
            cfg.icc.merge_table = icc;
            let mut m = MemSystem::new(&cfg);
            for sm in [0, 1, 4, 5] {
                m.send(sm, blk, 128, ReqKind::Read, 10);
            }
            let got = drain(&mut m);
            assert!(m.is_idle());
            (got, m.noc_stats(), m.icc_stats())
        };
        let (got, noc, icc) = run(true);
        assert_eq!(noc.requests, 2);
        let icc = icc.expect("icc stats");
        assert_eq!(
            (icc.merges, icc.broadcast_replies, icc.noc_read_requests),
            (2, 2, 2)
        );
        // SMs 1 and 4 ask for the line cluster 0 asked for in the same cycle: redundant;
        // SM 5 is the first of cluster 1: 2 redundant of 4.
        assert_eq!((icc.read_requests, icc.redundant_requests), (4, 2));
        let mut sms: Vec<u32> = got.iter().map(|g| g.0).collect();
        sms.sort_unstable();
        assert_eq!(sms, vec![0, 1, 4, 5]);
        let at = |sm: u32| got.iter().find(|g| g.0 == sm).map(|g| g.2);
        assert_eq!(at(0), at(1));
        assert_eq!(at(0), at(4));
        let (plain, noc, none) = run(false);
        assert_eq!(noc.requests, 4);
        assert!(none.is_none());
        assert_eq!(plain.len(), 4);
    }

    /// With the coalesced cache, a line two SMs shared is answered again from the cluster
    /// one cycle after the L1 miss, without a NoC request.
    #[test]
    fn coalesced_cache_answers_in_one_cycle() {
        let mut cfg = TimingConfig::new(GpuConfig::builtin("icc").expect("icc"));
        cfg.icc.merge_table = true;
        cfg.icc.coalesced_cache = true;
        let mut m = MemSystem::new(&cfg);
        m.send(0, 0x4000, 128, ReqKind::Read, 10);
        m.send(1, 0x4000, 128, ReqKind::Read, 10);
        drain(&mut m);
        assert_eq!(m.noc_stats().requests, 1);
        m.send(3, 0x4000, 128, ReqKind::Read, 5000);
        let got = drain(&mut m);
        assert_eq!(got, vec![(3, 0x4000, 5001)]);
        assert_eq!(m.noc_stats().requests, 1);
        let s = m.icc_stats().expect("icc stats");
        assert_eq!((s.coalesced_cache_fills, s.coalesced_cache_hits), (1, 1));
    }
}
