//! DRAM channels: each serves its requests in arrival order at its peak bandwidth
//! (`bus bytes x data rate x DRAM clock`, in bytes per core cycle) and returns data
//! `latency` core cycles after the transfer ends.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// DRAM counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DramStats {
    /// Block reads.
    pub reads: u64,
    /// Block writes.
    pub writes: u64,
    /// Bytes moved.
    pub bytes: u64,
}

impl AddAssign<&DramStats> for DramStats {
    fn add_assign(&mut self, o: &DramStats) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.bytes += o.bytes;
    }
}

/// One channel.
#[derive(Clone, Debug)]
pub struct Channel {
    bytes_per_cycle: f64,
    latency: u64,
    free_at: f64,
    stats: DramStats,
}

impl Channel {
    /// A channel moving `bytes_per_cycle` bytes per core cycle.
    pub fn new(bytes_per_cycle: f64, latency: u32) -> Channel {
        Channel {
            bytes_per_cycle: bytes_per_cycle.max(1e-9),
            latency: u64::from(latency),
            free_at: 0.0,
            stats: DramStats::default(),
        }
    }

    /// The counters.
    pub fn stats(&self) -> &DramStats {
        &self.stats
    }

    /// A transfer of `bytes` arriving at `now`; returns when its data is available (reads)
    /// or written (writes).
    pub fn access(&mut self, bytes: u32, write: bool, now: u64) -> u64 {
        let start = self.free_at.max(now as f64);
        self.free_at = start + f64::from(bytes) / self.bytes_per_cycle;
        if write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
        }
        self.stats.bytes += u64::from(bytes);
        self.free_at.ceil() as u64 + self.latency
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_and_bandwidth() {
        let mut c = Channel::new(16.0, 100);
        assert_eq!(c.access(32, false, 10), 112);
        assert_eq!(c.access(32, false, 10), 114);
        assert_eq!(c.access(32, true, 1000), 1102);
        assert_eq!(
            (c.stats().reads, c.stats().writes, c.stats().bytes),
            (2, 1, 96)
        );
    }
}
