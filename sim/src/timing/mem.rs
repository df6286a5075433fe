//! The memory side shared by all SMs: the interconnect, the L2 slices (one cache each,
//! `slices / channels` per DRAM channel) and the DRAM channels, advanced by a FIFO event
//! queue. SMs hand it block requests ([`MemSystem::send`]) and collect replies
//! ([`MemSystem::cycle`]).
//!
//! Latencies, for a read of one block injected at `t` (what the pointer-chase test checks):
//! L2 hit = NoC request + `l2.latency_cycles` + NoC reply; L2 miss adds the DRAM channel's
//! transfer and `dram.latency_cycles`. Writes are fire-and-forget (write-back L2 by
//! default). Atomics are performed at the L2 (a write there) and answered like a hit.

use super::addr_map::SliceMap;
use super::cache::{Cache, CacheStats, Geometry, Outcome};
use super::config::TimingConfig;
use super::dram::{Channel, DramStats};
use super::events::EventQueue;
use super::noc::{Noc, NocStats};

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
    Arrive { sm: u32, block: u64, kind: ReqKind },
    DramFill { slice: u32, block: u64 },
    Deliver(Reply),
}

/// The memory side.
pub struct MemSystem {
    noc: Noc,
    l2: Vec<Cache<(u32, ReqKind)>>,
    slice_map: SliceMap,
    dram: Vec<Channel>,
    l2_line: u64,
    l2_latency: u64,
    block: u32,
    header: u32,
    events: EventQueue<Event>,
    /// Per slice: reads refused for lack of an MSHR (or merge slot), oldest first. They are
    /// retried right after the next event that changes that slice (a fill, a write or an
    /// atomic), the earliest moment they can succeed, instead of every cycle.
    parked: Vec<Vec<(u32, u64)>>,
    retry: Vec<(u32, u64)>,
}

impl MemSystem {
    /// Builds the memory side of `cfg`.
    pub fn new(cfg: &TimingConfig) -> MemSystem {
        let g = &cfg.gpu;
        let slices = g.l2.slices.max(1);
        let geometry = Geometry::l2_slice(g, cfg.mem.l2_write);
        let core = f64::from(g.core.clock_mhz.max(1));
        let per_channel = f64::from(g.dram.bus_bytes_per_channel)
            * f64::from(g.dram.data_rate)
            * f64::from(g.dram.clock_mhz)
            / core;
        let l2 = (0..slices)
            .map(|_| Cache::new(geometry))
            .collect::<Vec<_>>();
        let block = l2[0].block_bytes() as u32;
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
            dram: (0..g.dram.channels.max(1))
                .map(|_| Channel::new(per_channel, g.dram.latency_cycles))
                .collect(),
            l2_line: u64::from(geometry.line),
            l2_latency: u64::from(g.l2.latency_cycles),
            block,
            header: cfg.mem.header_bytes,
            events: EventQueue::default(),
            parked: vec![Vec::new(); slices as usize],
            retry: Vec::new(),
        }
    }

    /// The L2 slice of the block at `block`: hashed line-address bits
    /// ([`super::addr_map::SliceMap`]).
    pub fn slice_of(&self, block: u64) -> u32 {
        self.slice_map.slice(block / self.l2_line)
    }

    /// The DRAM channel behind `slice`: `slices / channels` consecutive slices share one
    /// (GPGPU-Sim's two sub-partitions per memory partition).
    fn channel_of(&self, slice: u32) -> usize {
        (slice as usize * self.dram.len() / self.l2.len()).min(self.dram.len() - 1)
    }

    /// SM `sm` sends a request for the block at `block` (of `bytes` bytes, the L1's block
    /// size) at `now`.
    pub fn send(&mut self, sm: u32, block: u64, bytes: u32, kind: ReqKind, now: u64) {
        let slice = self.slice_of(block);
        let size = match kind {
            ReqKind::Read => self.header,
            ReqKind::Write | ReqKind::Atomic => self.header + bytes,
        };
        let at = self.noc.request(sm, slice, size, now);
        self.events.push(at, Event::Arrive { sm, block, kind });
    }

    /// When the next internal event is due.
    pub fn next_time(&self) -> Option<u64> {
        self.events.next_time()
    }

    /// Whether nothing is in flight.
    pub fn is_idle(&self) -> bool {
        self.events.is_empty() && self.parked.iter().all(Vec::is_empty)
    }

    /// A read from `sm` reaching slice `slice` at `now`.
    fn read(&mut self, slice: u32, sm: u32, block: u64, now: u64) {
        let s = slice as usize;
        match self.l2[s].read(block, (sm, ReqKind::Read)) {
            Outcome::Hit => self.reply(slice, sm, block, ReqKind::Read, now + self.l2_latency),
            Outcome::HitReserve => {}
            Outcome::Miss => {
                let ch = self.channel_of(slice);
                let t = self.dram[ch].access(self.block, false, now + self.l2_latency);
                self.events.push(t, Event::DramFill { slice, block });
            }
            Outcome::ReservationFail => self.parked[s].push((sm, block)),
        }
    }

    /// Slice `slice` changed at `now`: its parked reads try again, in arrival order.
    fn unpark(&mut self, slice: u32, now: u64) {
        let s = slice as usize;
        if self.parked[s].is_empty() {
            return;
        }
        let mut retry = std::mem::take(&mut self.retry);
        std::mem::swap(&mut retry, &mut self.parked[s]);
        for &(sm, block) in &retry {
            self.read(slice, sm, block, now);
        }
        retry.clear();
        self.retry = retry;
    }

    fn reply(&mut self, slice: u32, sm: u32, block: u64, kind: ReqKind, at: u64) {
        let bytes = self.header + if kind == ReqKind::Read { self.block } else { 4 };
        let t = self.noc.reply(slice, sm, bytes, at);
        self.events
            .push(t, Event::Deliver(Reply { sm, block, kind }));
    }

    fn writeback(&mut self, slice: u32, victim: Option<u64>, now: u64) {
        if victim.is_some() {
            let ch = self.channel_of(slice);
            self.dram[ch].access(self.block, true, now);
        }
    }

    /// Processes everything due at `now`; replies arriving at SMs go to `out`.
    pub fn cycle(&mut self, now: u64, out: &mut Vec<Reply>) {
        while let Some((_, ev)) = self.events.pop_due(now) {
            match ev {
                Event::Deliver(r) => out.push(r),
                Event::Arrive { sm, block, kind } => {
                    let slice = self.slice_of(block);
                    let s = slice as usize;
                    match kind {
                        ReqKind::Write => {
                            let (_, victim) = self.l2[s].write(block);
                            self.writeback(slice, victim, now);
                            self.unpark(slice, now);
                        }
                        ReqKind::Atomic => {
                            let (_, victim) = self.l2[s].write(block);
                            self.writeback(slice, victim, now);
                            self.reply(slice, sm, block, kind, now + self.l2_latency);
                            self.unpark(slice, now);
                        }
                        ReqKind::Read => self.read(slice, sm, block, now),
                    }
                }
                Event::DramFill { slice, block } => {
                    let (waiters, victim) = self.l2[slice as usize].fill(block);
                    self.writeback(slice, victim, now);
                    for (sm, kind) in waiters {
                        self.reply(slice, sm, block, kind, now);
                    }
                    self.unpark(slice, now);
                }
            }
        }
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
        let mut s = DramStats::default();
        for c in &self.dram {
            s += c.stats();
        }
        s
    }

    /// Interconnect counters.
    pub fn noc_stats(&self) -> NocStats {
        self.noc.stats().clone()
    }
}
