//! The DRAM address mapping: which channel, bank and row hold a line.
//!
//! * Channel: the L2 slice's (`addr_map`'s hashed slice of the line; `slices / channels`
//!   consecutive slices share a channel, GPGPU-Sim's sub-partitions of a memory partition).
//! * Channel-local line number `q`: the slice-local number
//!   ([`SliceMap::local`](super::super::addr_map::SliceMap::local)) times the slices per
//!   channel, plus the slice's index in its channel. The lines one channel holds are
//!   numbered densely in address order, so a stream walks its rows in order. (On a
//!   multi-module GPU the slice is a hash inside the home module; there `q` is the line
//!   number divided by the channel count, dense on average.)
//! * Bank and row from `q`, low bits first: the bank group (pseudo-channel in its lowest
//!   bits), the line within the row, the bank within its group, the row. Consecutive lines
//!   of a channel therefore go to different bank groups and pseudo-channels (tCCD_S, not
//!   tCCD_L, between a stream's column commands: GPGPU-Sim's `-dram_bnkgrp_indexing_policy 1`,
//!   "lower bits for bnkgrp to increase bnkgrp parallelism"), each group's row fills before
//!   the next row, and a line's sectors share one row. With `bank_hash = "xor"` the bank
//!   number (group and bank bits) is XORed with the low row bits (Zhang, Zhu and Zhang,
//!   "A permutation-based page interleaving scheme", MICRO 2000; GPGPU-Sim
//!   `-dram_bnk_indexing_policy 1`, `bitwise_hash_function(row, bank)` in dram.cc), so
//!   accesses a power-of-two number of rows apart spread over the banks instead of
//!   conflicting in one.
//!
//! NVIDIA does not publish its controllers' mapping. The layout follows GPGPU-Sim's tested
//! configurations (`-gpgpu_mem_addr_mapping`: a 2 KB (4 KB on Fermi) row per bank,
//! bank-group bits low) and the principle GPU mapping studies state (Liu et al., "Get Out of
//! the Valley: Power-Efficient Address Mapping for GPUs", ISCA 2018: row bits should change
//! as little as possible across a stream, channel and bank bits as much as possible).

use super::super::addr_map::SliceMap;
use gpu::config::{BankHash, DramConfig, GpuConfig};

/// Channel-local line number -> (bank, row).
#[derive(Clone, Copy, Debug)]
pub struct BankMap {
    group_bits: u32,
    line_bits: u32,
    bank_bits: u32,
    banks: u64,
    xor: bool,
}

impl BankMap {
    /// The map of `d`'s channels for `line`-byte lines.
    pub fn new(d: &DramConfig, line: u32) -> BankMap {
        let lg = |x: u32| x.max(1).next_power_of_two().trailing_zeros();
        let groups = d.bank_groups.max(1);
        BankMap {
            group_bits: lg(groups),
            line_bits: lg((d.row_bytes / line.max(1)).max(1)),
            bank_bits: lg((d.banks / groups).max(1)),
            banks: u64::from(d.banks.max(1).next_power_of_two()),
            xor: d.bank_hash == BankHash::Xor,
        }
    }

    /// The bank (bank group in the low bits) and row of channel-local line `q`.
    pub fn locate(&self, q: u64) -> (u32, u64) {
        // The lowest group bit alternates line by line; the line's place in its row; the
        // other group bits; the bank in its group; the row.
        let alt_bits = self.group_bits.min(1);
        let alt = q & ((1 << alt_bits) - 1);
        let rest = q >> (alt_bits + self.line_bits);
        let high_bits = self.group_bits - alt_bits;
        let group = alt | ((rest & ((1 << high_bits) - 1)) << alt_bits);
        let rest = rest >> high_bits;
        let bank = rest & ((1 << self.bank_bits) - 1);
        let row = rest >> self.bank_bits;
        let mut flat = group | (bank << self.group_bits);
        if self.xor {
            flat ^= row & (self.banks - 1);
        }
        (flat as u32, row)
    }
}

/// L2 slice -> channel, and the channel-local line number.
#[derive(Clone, Copy, Debug)]
pub struct ChannelMap {
    channels: u64,
    slices: u64,
    /// Most slices one channel has.
    per: u64,
}

impl ChannelMap {
    /// `slices` L2 slices over `channels` channels.
    pub fn new(slices: u32, channels: u32) -> ChannelMap {
        let (s, c) = (u64::from(slices.max(1)), u64::from(channels.max(1)));
        ChannelMap {
            channels: c,
            slices: s,
            per: s.div_ceil(c),
        }
    }

    /// The channel behind `slice`: `slices / channels` consecutive slices share one.
    pub fn channel(&self, slice: u32) -> u32 {
        ((u64::from(slice) * self.channels / self.slices).min(self.channels - 1)) as u32
    }

    /// The channel-local number of a line that is number `local` of slice `slice`.
    pub fn line(&self, slice: u32, local: u64) -> u64 {
        let c = u64::from(self.channel(slice));
        let first = (c * self.slices).div_ceil(self.channels);
        local * self.per + (u64::from(slice) - first)
    }

    /// The channel-local number of a line of a multi-module GPU, number `line` of its
    /// module's memory (`numa::Numa::module_line`): there the slice is a hash inside the
    /// module, so the module's line number over its channel count (one line per channel
    /// per number on average; lines that share a number share a row).
    pub fn hashed_line(&self, line: u64, modules: u32) -> u64 {
        line / (self.channels / u64::from(modules.max(1))).max(1)
    }
}

/// Where a byte address lives in DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramLocation {
    /// L2 slice.
    pub slice: u32,
    /// Channel.
    pub channel: u32,
    /// Bank in the channel (its bank group in the low bits).
    pub bank: u32,
    /// Row in the bank.
    pub row: u64,
}

/// The mapping of a GPU, for tests and tools that place data on purpose (the simulator's
/// memory side computes the same from its own slice map).
pub struct DramMap {
    slices: SliceMap,
    channels: ChannelMap,
    banks: BankMap,
    line: u64,
    /// On a multi-module GPU: the module every page is placed in (the slices per module),
    /// as first-touch placement puts the data of one SM's thread.
    module: Option<(u32, u32)>,
    /// On a multi-module GPU: the page shift and the module count.
    interleave: Option<(u32, u32)>,
    modules: u32,
}

impl DramMap {
    /// The mapping of `g`.
    pub fn new(g: &GpuConfig) -> DramMap {
        DramMap {
            slices: SliceMap::new(
                g.l2.slice_index,
                g.l2.slices.max(1),
                g.l2.set_index,
                g.l2.sets_per_slice,
            ),
            channels: ChannelMap::new(g.l2.slices, g.dram.channels),
            banks: BankMap::new(&g.dram, g.l2.line_bytes),
            line: u64::from(g.l2.line_bytes.max(1)),
            module: g.numa.as_ref().map(|n| (0, g.l2.slices / n.modules.max(1))),
            interleave: g
                .numa
                .as_ref()
                .map(|n| (n.page_bytes.max(1).trailing_zeros(), n.modules.max(1))),
            modules: g.numa.as_ref().map_or(1, |n| n.modules.max(1)),
        }
    }

    /// On a multi-module GPU, the mapping of data placed in module `module` by first touch
    /// (whole pages, as one SM's thread places them); no effect on a GPU with one module.
    pub fn in_module(mut self, module: u32) -> DramMap {
        if let Some(m) = &mut self.module {
            m.0 = module;
        }
        self
    }

    /// Where byte `addr` lives.
    pub fn locate(&self, addr: u64) -> DramLocation {
        let line = addr / self.line;
        match self.module {
            Some((m, _)) => self.place(line, Some((m, line))),
            None => self.place(line, None),
        }
    }

    /// Where byte `addr` lives on a multi-module GPU with pages interleaved over the
    /// modules (`--placement interleave`: the module is the page number's low bits); as
    /// [`DramMap::locate`] on a GPU with one module.
    pub fn locate_interleaved(&self, addr: u64) -> DramLocation {
        let line = addr / self.line;
        match self.interleave {
            Some((page_shift, modules)) => {
                let m = ((addr >> page_shift) % u64::from(modules)) as u32;
                let zone = modules.trailing_zeros();
                let module_line =
                    super::super::numa::without_field(addr, page_shift, zone) / self.line;
                self.place(line, Some((m, module_line)))
            }
            None => self.place(line, None),
        }
    }

    /// The location of line `line`; on a multi-module GPU, in module `m` as line
    /// `module_line` of that module's memory.
    fn place(&self, line: u64, module: Option<(u32, u64)>) -> DramLocation {
        let (slice, q) = match (self.module, module) {
            (Some((_, spm)), Some((m, module_line))) => {
                let slice = m * spm + super::super::numa::slice_in_module(line, spm);
                (slice, self.channels.hashed_line(module_line, self.modules))
            }
            _ => {
                let slice = self.slices.slice(line);
                (slice, self.channels.line(slice, self.slices.local(line)))
            }
        };
        let channel = self.channels.channel(slice);
        let (bank, row) = self.banks.locate(q);
        DramLocation {
            slice,
            channel,
            bank,
            row,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    /// A sequential walk fills rows: on every shipped GPU the rows it touches hold about
    /// as many bytes as it reads (no row opened for a fraction of its page), and it uses
    /// every bank of every channel.
    #[test]
    fn a_sequential_walk_fills_rows_and_uses_every_bank() {
        for name in GpuConfig::builtin_names() {
            let g = GpuConfig::builtin(name).expect("builtin");
            let map = DramMap::new(&g).in_module(0);
            let line = u64::from(g.l2.line_bytes);
            let bytes = 64u64 << 20;
            let mut rows = HashSet::new();
            let mut banks = HashSet::new();
            for a in (0..bytes).step_by(line as usize) {
                let l = map.locate(a);
                rows.insert((l.channel, l.bank, l.row));
                banks.insert((l.channel, l.bank));
            }
            let full = bytes / u64::from(g.dram.row_bytes);
            let n = rows.len() as u64;
            assert!(
                n >= full && n <= full + full / 20,
                "{name}: {n} rows for {full} rows' worth of data"
            );
            // (On a multi-module GPU the walk is in module 0, a module's channels.)
            let channels = g.dram.channels / g.numa.as_ref().map_or(1, |n| n.modules);
            assert_eq!(
                banks.len() as u64,
                u64::from(channels) * u64::from(g.dram.banks),
                "{name}"
            );
        }
    }

    /// The channel-local numbering of a single-module GPU: in one channel, a walk's lines
    /// get numbers that never step back by more than the channel's slices (the lines of one
    /// group of `2^k` lines reach a channel's two slices in either order) and repeat rarely
    /// (where two IPOLY blocks meet), and end dense (no gaps).
    #[test]
    fn channel_local_lines_are_dense_and_ordered() {
        for name in ["gtx480", "titanx_pascal", "titanv", "h100", "icc"] {
            let g = GpuConfig::builtin(name).expect("builtin");
            let s = &g.l2;
            let slices = SliceMap::new(s.slice_index, s.slices, s.set_index, s.sets_per_slice);
            let ch = ChannelMap::new(s.slices, g.dram.channels);
            let mut last: HashMap<u32, u64> = HashMap::new();
            let (mut repeats, mut backwards, lines) = (0, 0, 1u64 << 18);
            for l in 0..lines {
                let slice = slices.slice(l);
                let q = ch.line(slice, slices.local(l));
                if let Some(&p) = last.get(&ch.channel(slice)) {
                    repeats += u64::from(q == p);
                    backwards += u64::from(q + ch.per < p);
                }
                last.insert(ch.channel(slice), q);
            }
            // Each channel ends near lines / channels: the numbering is dense.
            let per = lines / u64::from(g.dram.channels);
            for (&c, &q) in &last {
                assert!(
                    q + 1 >= per * 98 / 100 && q < per * 102 / 100,
                    "{name} channel {c}: {q} of {per}"
                );
            }
            assert!(
                repeats * 100 < lines && backwards * 100 < lines,
                "{name}: {repeats} repeats, {backwards} backwards"
            );
        }
    }

    /// XOR bank hashing: lines a power-of-two number of rows apart that share every
    /// bank bit without the hash land in different banks with it.
    #[test]
    fn xor_hash_spreads_rows_of_one_bank_position() {
        let g = GpuConfig::builtin("titanv").expect("titanv");
        let mut linear = g.dram.clone();
        linear.bank_hash = BankHash::Linear;
        let (x, l) = (BankMap::new(&g.dram, 128), BankMap::new(&linear, 128));
        // One row stripe of a channel: banks x lines per row.
        let stripe = u64::from(g.dram.banks) * u64::from(g.dram.row_bytes / 128);
        let xs: HashSet<u32> = (0..16).map(|r| x.locate(r * stripe).0).collect();
        let ls: HashSet<u32> = (0..16).map(|r| l.locate(r * stripe).0).collect();
        assert_eq!((xs.len(), ls.len()), (16, 1));
        let rows: HashSet<u64> = (0..16).map(|r| x.locate(r * stripe).1).collect();
        assert_eq!(rows.len(), 16);
    }
}
