//! The interconnect: a crossbar between SM clusters (SMs sharing one port) and L2 slices.
//! A packet of `b` bytes occupies `ceil(b / flit)` flit slots on its source port and on its
//! destination port (converted from the network clock to core cycles) and takes `latency`
//! core cycles in flight; ports are booked first come, first served.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Interconnect counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NocStats {
    /// Request packets SM -> L2.
    pub requests: u64,
    /// Reply packets L2 -> SM.
    pub replies: u64,
    /// Flits of requests.
    pub request_flits: u64,
    /// Flits of replies.
    pub reply_flits: u64,
}

impl AddAssign<&NocStats> for NocStats {
    fn add_assign(&mut self, o: &NocStats) {
        self.requests += o.requests;
        self.replies += o.replies;
        self.request_flits += o.request_flits;
        self.reply_flits += o.reply_flits;
    }
}

/// Flit counts whose port occupancy [`Noc`] keeps in a table.
const SIZE_TABLE: u64 = 64;

/// The crossbar.
#[derive(Clone, Debug)]
pub struct Noc {
    latency: u64,
    flit: u64,
    core_mhz: u64,
    noc_mhz: u64,
    sms_per_cluster: u32,
    /// `size` of packets of up to [`SIZE_TABLE`] flits, by flit count: the port occupancy
    /// without a division per packet.
    occ: Vec<u64>,
    /// Per cluster: injection port free at, ejection port free at.
    cluster_out: Vec<u64>,
    cluster_in: Vec<u64>,
    /// Per slice: input port free at, output port free at.
    slice_in: Vec<u64>,
    slice_out: Vec<u64>,
    stats: NocStats,
}

impl Noc {
    /// `clusters` ports of `sms_per_cluster` SMs each, `slices` memory-side ports.
    pub fn new(
        clusters: u32,
        sms_per_cluster: u32,
        slices: u32,
        flit_bytes: u32,
        latency: u32,
        core_mhz: u32,
        noc_mhz: u32,
    ) -> Noc {
        Noc {
            latency: u64::from(latency),
            flit: u64::from(flit_bytes.max(1)),
            core_mhz: u64::from(core_mhz.max(1)),
            noc_mhz: u64::from(noc_mhz.max(1)),
            sms_per_cluster: sms_per_cluster.max(1),
            occ: (0..=SIZE_TABLE)
                .map(|f| (f * u64::from(core_mhz.max(1))).div_ceil(u64::from(noc_mhz.max(1))))
                .collect(),
            cluster_out: vec![0; clusters.max(1) as usize],
            cluster_in: vec![0; clusters.max(1) as usize],
            slice_in: vec![0; slices.max(1) as usize],
            slice_out: vec![0; slices.max(1) as usize],
            stats: NocStats::default(),
        }
    }

    /// The counters.
    pub fn stats(&self) -> &NocStats {
        &self.stats
    }

    fn cluster(&self, sm: u32) -> usize {
        ((sm / self.sms_per_cluster) as usize).min(self.cluster_out.len() - 1)
    }

    /// (flits, core cycles the packet occupies a port).
    fn size(&self, bytes: u32) -> (u64, u64) {
        let flits = u64::from(bytes).div_ceil(self.flit).max(1);
        match self.occ.get(flits as usize) {
            Some(&occ) => (flits, occ),
            None => (flits, (flits * self.core_mhz).div_ceil(self.noc_mhz)),
        }
    }

    fn traverse(&mut self, src: u64, dst: u64, occ: u64, now: u64) -> (u64, u64, u64) {
        let leave = now.max(src) + occ;
        let arrive = (leave + self.latency).max(dst + occ);
        (leave, arrive, arrive)
    }

    /// A request of `bytes` from `sm` to `slice` injected at `now`; returns its arrival.
    pub fn request(&mut self, sm: u32, slice: u32, bytes: u32, now: u64) -> u64 {
        let (flits, occ) = self.size(bytes);
        let c = self.cluster(sm);
        let s = slice as usize % self.slice_in.len();
        let (leave, arrive, busy) = self.traverse(self.cluster_out[c], self.slice_in[s], occ, now);
        self.cluster_out[c] = leave;
        self.slice_in[s] = busy;
        self.stats.requests += 1;
        self.stats.request_flits += flits;
        arrive
    }

    /// A reply of `bytes` from `slice` to `sm` injected at `now`; returns its arrival.
    pub fn reply(&mut self, slice: u32, sm: u32, bytes: u32, now: u64) -> u64 {
        let (flits, occ) = self.size(bytes);
        let c = self.cluster(sm);
        let s = slice as usize % self.slice_out.len();
        let (leave, arrive, busy) = self.traverse(self.slice_out[s], self.cluster_in[c], occ, now);
        self.slice_out[s] = leave;
        self.cluster_in[c] = busy;
        self.stats.replies += 1;
        self.stats.reply_flits += flits;
        arrive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_and_port_bandwidth() {
        let mut n = Noc::new(2, 2, 2, 32, 10, 1000, 1000);
        // One flit: 1 cycle on the port + 10 in flight.
        assert_eq!(n.request(0, 0, 8, 100), 111);
        // SM 1 shares SM 0's cluster port: serialised behind it.
        assert_eq!(n.request(1, 1, 8, 100), 112);
        // Another cluster is free.
        assert_eq!(n.request(2, 1, 8, 100), 113); // slice 1's input is busy until 112
                                                  // A 128 B reply is 4 flits.
        assert_eq!(n.reply(0, 3, 136, 0), 15);
        assert_eq!(n.stats().request_flits, 3);
        assert_eq!(n.stats().reply_flits, 5);
        // A network at half the core clock takes twice the cycles per flit.
        let mut slow = Noc::new(1, 1, 1, 32, 0, 1000, 500);
        assert_eq!(slow.request(0, 0, 64, 0), 4);
    }
}
