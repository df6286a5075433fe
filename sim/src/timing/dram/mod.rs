//! DRAM: the memory channels behind the L2 slices (issue 38). Two models, chosen by
//! `dram.scheduler`:
//!
//! * `fr-fcfs` (the default; [`channel`]): per channel, banks in bank groups (and HBM
//!   pseudo-channels) with an open-row policy, a read queue and a write queue, and an FR-FCFS
//!   scheduler (Rixner et al., "Memory Access Scheduling", ISCA 2000; GPGPU-Sim
//!   `dram_sched.cc`): at each DRAM cycle the oldest queued request whose column command can
//!   issue (a row hit whose bank, bank group, pseudo-channel, bus and turnaround timing allow
//!   it) issues its READ or WRITE, and the bank of the oldest request among banks without a
//!   row hit gets its PRECHARGE or ACTIVATE when their timing allows (a row with queued hits
//!   is not closed). Timing: tRCD, tRP, tRAS, tRC, tCL, tWL, tCCD_S / tCCD_L, tRRD, tFAW,
//!   tRTP, write recovery and the read / write turnarounds (GPGPU-Sim's tRTW, tWTR and tWTP
//!   formulas), bursts serialised on the data bus, and all-bank or per-bank refresh (the
//!   bank closes its row and takes no command for tRFC). Writes drain between watermarks as
//!   GPGPU-Sim's `-dram_write_queue_size SIZE:HIGH:LOW` does (`dram_sched.cc`: write mode
//!   from HIGH pending writes until fewer than LOW), and also whenever no read waits (the
//!   usual controller policy; GPGPU-Sim has that branch commented out), so writes never
//!   wait for a watermark a kernel's last writes do not reach. Reads beyond the read queue
//!   (writes beyond the write queue) wait in arrival order for an entry; the L2 is not held
//!   back (writes stay fire-and-forget, as before).
//! * `fifo`: the model before issue 38, a queue per channel served in arrival order at the
//!   channel's peak bandwidth, data `latency_cycles` after the transfer.
//!
//! Latency. `dram.latency_cycles` (GPGPU-Sim `-dram_latency`) is the unloaded latency beyond
//! the L2 of a read missing the row buffer of a precharged bank, its data transfer not
//! included: the FIFO model charges it in full after the transfer; the FR-FCFS model charges
//! `latency_cycles - (tRCD + tCL)` (in core cycles, rounded) as the controller's pipeline
//! before the request reaches its queue, and the device the rest. An unloaded row miss thus
//! costs the same in both models, a row hit tRCD less, a row conflict tRP more, and nothing
//! is counted twice. (GPGPU-Sim's detailed model adds `-dram_latency` to the device timing;
//! its simple model, which the H100 configuration's 194 comes from, charges it alone.)
//!
//! Clocks. The channels count DRAM cycles of `dram.clock_mhz`; a request handed over at
//! core cycle `c` enters the pipeline then and its queue at the first DRAM cycle at or after
//! `c + pipeline`; data back at DRAM cycle `d` is available at the first core cycle at or
//! after `d`. Completion times go back to the memory side as events ([`Dram::read`],
//! [`Dram::wake`]); a channel asks to be woken only for the next cycle at which a command
//! can issue or a request arrives, so idle channels cost nothing.
//!
//! Address mapping: [`map`].

mod bank;
pub mod channel;
pub mod map;

use channel::{Channel, Timing};
use gpu::config::{DramScheduler, GpuConfig};
use map::BankMap;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

pub use channel::Done;
pub use map::{ChannelMap, DramLocation, DramMap};

/// DRAM counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DramStats {
    /// Block reads.
    pub reads: u64,
    /// Block writes.
    pub writes: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Requests (reads and writes) served from the open row (FR-FCFS model; 0 with `fifo`).
    #[serde(default)]
    pub row_hits: u64,
    /// Requests to a precharged bank: an ACTIVATE and no PRECHARGE.
    #[serde(default)]
    pub row_misses: u64,
    /// Requests that found another row open: a PRECHARGE and an ACTIVATE.
    #[serde(default)]
    pub row_conflicts: u64,
    /// ACTIVATE commands (row misses and conflicts, and rows opened again after a refresh).
    #[serde(default)]
    pub activates: u64,
    /// PRECHARGE commands (refreshes close rows without one).
    #[serde(default)]
    pub precharges: u64,
    /// Write drains the high watermark started.
    #[serde(default)]
    pub write_drains: u64,
    /// Core cycles from a read's hand-over to the DRAM (after its L2 miss) to its data,
    /// summed over reads (pipeline, queueing and device time).
    #[serde(default)]
    pub read_latency_sum: u64,
    /// The largest of those.
    #[serde(default)]
    pub read_latency_max: u64,
    /// `read_latency_sum / reads` (0 without reads).
    #[serde(default)]
    pub read_latency_avg: f64,
}

impl AddAssign<&DramStats> for DramStats {
    fn add_assign(&mut self, o: &DramStats) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.bytes += o.bytes;
        self.row_hits += o.row_hits;
        self.row_misses += o.row_misses;
        self.row_conflicts += o.row_conflicts;
        self.activates += o.activates;
        self.precharges += o.precharges;
        self.write_drains += o.write_drains;
        self.read_latency_sum += o.read_latency_sum;
        self.read_latency_max = self.read_latency_max.max(o.read_latency_max);
        self.read_latency_avg = if self.reads == 0 {
            0.0
        } else {
            self.read_latency_sum as f64 / self.reads as f64
        };
    }
}

/// Whose read: the L2 slice that missed and the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The L2 slice.
    pub slice: u32,
    /// The block address.
    pub block: u64,
}

/// A channel of the FIFO model.
#[derive(Clone, Debug)]
struct FifoChannel {
    bytes_per_cycle: f64,
    latency: u64,
    free_at: f64,
    stats: DramStats,
}

impl FifoChannel {
    /// A transfer of `bytes` arriving at `now`; returns when its data is available (reads)
    /// or written (writes).
    fn access(&mut self, bytes: u32, write: bool, now: u64) -> u64 {
        let start = self.free_at.max(now as f64);
        self.free_at = start + f64::from(bytes) / self.bytes_per_cycle;
        if write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
        }
        self.stats.bytes += u64::from(bytes);
        let done = self.free_at.ceil() as u64 + self.latency;
        if !write {
            let lat = done - now;
            self.stats.read_latency_sum += lat;
            self.stats.read_latency_max = self.stats.read_latency_max.max(lat);
        }
        done
    }
}

enum Channels {
    Fifo(Vec<FifoChannel>),
    FrFcfs(Vec<Channel>),
}

/// Every channel of the GPU, moving blocks of one size.
pub struct Dram {
    channels: Channels,
    banks: BankMap,
    block: u32,
    bursts: u32,
}

impl Dram {
    /// The DRAM of `g`, whose requests move `block` bytes (the L2's fill unit).
    pub fn new(g: &GpuConfig, block: u32) -> Dram {
        let d = &g.dram;
        let n = d.channels.max(1) as usize;
        let channels = match d.scheduler {
            DramScheduler::Fifo => {
                let per_channel = f64::from(d.bus_bytes_per_channel)
                    * f64::from(d.data_rate)
                    * f64::from(d.clock_mhz)
                    / f64::from(g.core.clock_mhz.max(1));
                Channels::Fifo(
                    (0..n)
                        .map(|_| FifoChannel {
                            bytes_per_cycle: per_channel.max(1e-9),
                            latency: u64::from(d.latency_cycles),
                            free_at: 0.0,
                            stats: DramStats::default(),
                        })
                        .collect(),
                )
            }
            DramScheduler::FrFcfs => {
                let t = Timing::new(d, g.core.clock_mhz);
                Channels::FrFcfs((0..n).map(|i| Channel::new(t, i, n)).collect())
            }
        };
        Dram {
            channels,
            banks: BankMap::new(d, g.l2.line_bytes),
            block,
            bursts: block.div_ceil(d.burst_bytes().max(1)),
        }
    }

    /// A read of `tag.block`, channel-local line `line` of channel `ch`, handed over at core
    /// cycle `now`. Data that is back (at once with `fifo`) goes to `out`; the result is a
    /// core cycle at which [`Dram::wake`] must be called for channel `ch`, if one is needed
    /// and not yet asked for.
    pub fn read(
        &mut self,
        ch: usize,
        line: u64,
        tag: Tag,
        now: u64,
        out: &mut Vec<Done>,
    ) -> Option<u64> {
        self.request(ch, line, tag, false, now, out)
    }

    /// A write of a block at channel-local line `line` of channel `ch` at core cycle `now`;
    /// as [`Dram::read`] without data.
    pub fn write(&mut self, ch: usize, line: u64, block: u64, now: u64) -> Option<u64> {
        let tag = Tag { slice: 0, block };
        self.request(ch, line, tag, true, now, &mut Vec::new())
    }

    fn request(
        &mut self,
        ch: usize,
        line: u64,
        tag: Tag,
        write: bool,
        now: u64,
        out: &mut Vec<Done>,
    ) -> Option<u64> {
        match &mut self.channels {
            Channels::Fifo(c) => {
                let at = c[ch].access(self.block, write, now);
                if !write {
                    out.push(Done { tag, at });
                }
                None
            }
            Channels::FrFcfs(c) => {
                let (bank, row) = self.banks.locate(line);
                let c = &mut c[ch];
                c.push(bank, row, self.bursts, self.block, write, tag, now);
                c.take_wake()
            }
        }
    }

    /// Channel `ch` woken at core cycle `now`: reads whose data is back go to `out`; the
    /// result as for [`Dram::read`].
    pub fn wake(&mut self, ch: usize, now: u64, out: &mut Vec<Done>) -> Option<u64> {
        match &mut self.channels {
            Channels::Fifo(_) => None,
            Channels::FrFcfs(c) => {
                let c = &mut c[ch];
                c.wake(now, out);
                c.take_wake()
            }
        }
    }

    /// Whether no channel holds a request.
    pub fn is_idle(&self) -> bool {
        match &self.channels {
            Channels::Fifo(_) => true,
            Channels::FrFcfs(c) => c.iter().all(Channel::is_idle),
        }
    }

    /// Counters summed over channels.
    pub fn stats(&self) -> DramStats {
        let mut s = DramStats::default();
        match &self.channels {
            Channels::Fifo(c) => c.iter().for_each(|c| s += &c.stats),
            Channels::FrFcfs(c) => c.iter().for_each(|c| s += c.stats()),
        }
        s
    }
}
