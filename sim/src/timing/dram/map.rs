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

    /// The channel-local number of line `line` when its slice is not from a [`SliceMap`]
    /// (a multi-module GPU): the line number over the channel count.
    pub fn hashed_line(&self, line: u64) -> u64 {
        line / self.channels
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
        }
    }

    /// On a multi-module GPU, the mapping of data placed in module `module` (first touch
    /// from one of its SMs); no effect on a GPU with one module.
    pub fn in_module(mut self, module: u32) -> DramMap {
        if let Some(m) = &mut self.module {
            m.0 = module;
        }
        self
    }

    /// Where byte `addr` lives.
    pub fn locate(&self, addr: u64) -> DramLocation {
        self.place(addr, self.module.map(|m| m.0))
    }

    /// Where byte `addr` lives on a multi-module GPU when its page is in module `module`
    /// (the placement decides; on a GPU with one module, `module` is ignored).
    pub fn locate_in(&self, addr: u64, module: u32) -> DramLocation {
        self.place(addr, Some(module))
    }

    fn place(&self, addr: u64, module: Option<u32>) -> DramLocation {
        let line = addr / self.line;
        let (slice, q) = match (self.module, module) {
            (Some((_, spm)), Some(m)) => {
                let slice = m * spm + super::super::numa::slice_in_module(line, spm);
                (slice, self.channels.hashed_line(line))
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
