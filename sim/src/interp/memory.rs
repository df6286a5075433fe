//! Global memory: the launch's buffers and the module's variables as regions of one address
//! space, the [`GlobalMemory`] trait through which warps touch it, and the per-TB overlay that
//! lets TBs run in parallel with results identical to a serial run.
//!
//! Region `r` starts at `(r + 1) << 36` (parameters first, then module variables). A region
//! without bytes (a synthetic pointer, a scalar parameter) faults on every access.

// Lane loops index several 32-element arrays in lockstep, on purpose (they vectorise).
#![allow(clippy::needless_range_loop)]

use std::collections::HashMap;

use launch::{BoundLaunch, BoundValue, Init};

use super::decode::Program;
use super::layout::{Layout, REGION_LOG2};
use crate::SimError;

/// Why an access failed (the warp adds the location).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemFault {
    /// Outside every region's bytes.
    OutOfBounds,
}

/// Global memory as a warp sees it. Accesses are naturally aligned, 1 to 8 bytes; the warp
/// checks alignment before calling.
pub trait GlobalMemory {
    /// Reads `size` bytes at `addr`, little-endian, zero-extended.
    fn load(&mut self, addr: u64, size: u32) -> Result<u64, MemFault>;
    /// Writes the low `size` bytes of `value` at `addr`.
    fn store(&mut self, addr: u64, size: u32, value: u64) -> Result<(), MemFault>;
    /// Atomically replaces the value `v` at `addr` by `f(v)`; returns `v`.
    fn atomic(
        &mut self,
        addr: u64,
        size: u32,
        f: &mut dyn FnMut(u64) -> u64,
    ) -> Result<u64, MemFault> {
        let old = self.load(addr, size)?;
        self.store(addr, size, f(old))?;
        Ok(old)
    }
    /// Loads `size` bytes at `addrs[l] + off` for every lane `l` of `mask` into `out[l]`;
    /// on a fault returns the first faulting lane. Implementations may batch the lanes.
    fn load_lanes(
        &mut self,
        mask: u32,
        addrs: &[u64; 32],
        off: u64,
        size: u32,
        out: &mut [u64; 32],
    ) -> Result<(), usize> {
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            out[l] = self.load(addrs[l].wrapping_add(off), size).map_err(|_| l)?;
        }
        Ok(())
    }
    /// What lies at `addr`, for error messages (which buffer, how far outside it).
    fn describe(&self, addr: u64) -> String {
        format!("nothing mapped at {addr:#x}")
    }
}

/// One region of global memory.
#[derive(Clone, Debug)]
pub struct Region {
    /// Parameter or variable name.
    pub name: String,
    /// Contents (`None`: no memory behind the address).
    pub bytes: Option<Vec<u8>>,
}

/// The global memory of a launch.
#[derive(Clone, Debug, Default)]
pub struct Globals {
    /// Regions in address order.
    pub regions: Vec<Region>,
}

#[inline]
fn split(addr: u64) -> (usize, usize) {
    (
        ((addr >> REGION_LOG2) as usize).wrapping_sub(1),
        (addr & ((1u64 << REGION_LOG2) - 1)) as usize,
    )
}

/// Calls `f` for every lane of `mask` in order, stopping at the first error.
#[inline]
fn for_lanes(mask: u32, mut f: impl FnMut(usize) -> Result<(), usize>) -> Result<(), usize> {
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        f(l)?;
    }
    Ok(())
}

#[inline]
fn read_le(b: &[u8], off: usize, size: u32) -> Option<u64> {
    Some(match size {
        1 => u64::from(*b.get(off)?),
        2 => u64::from(u16::from_le_bytes(b.get(off..off + 2)?.try_into().ok()?)),
        4 => u64::from(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?)),
        8 => u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?),
        _ => return None,
    })
}

/// The lanes of `mask` from one region, through a `size`-byte view of its bytes
/// (`as_chunks`): each lane is one bounds-checked element read (`get`, which is the bounds
/// check), or, for a full warp, one slice or one element per half-warp when its addresses
/// are contiguous or all equal (the coalesced and broadcast patterns); alignment is checked
/// once by OR-ing the offsets. `None` when a lane is outside the region or misaligned (the
/// caller then goes lane by lane).
// The macro is instantiated for 1-byte elements too, where the alignment tests are trivially
// true.
#[allow(clippy::modulo_one, clippy::bad_bit_mask)]
#[inline]
fn gather(
    b: &[u8],
    base: u64,
    mask: u32,
    addrs: &[u64; 32],
    off: u64,
    size: u32,
    out: &mut [u64; 32],
) -> Option<()> {
    let delta = off.wrapping_sub(base);
    macro_rules! lanes {
        ($t:ty, $n:expr) => {{
            let (w, _) = b.as_chunks::<$n>();
            let mut acc = 0u64;
            if mask == u32::MAX {
                // Per half-warp: one contiguous run (a slice copy) or one address (a
                // broadcast) are recognised with a vector pass; other patterns read lane by
                // lane.
                let (halves, _) = addrs.as_chunks::<16>();
                let (outs, _) = out.as_chunks_mut::<16>();
                for (a, o) in halves.iter().zip(outs.iter_mut()) {
                    let a0 = a[0];
                    let (mut run, mut same) = (0u64, 0u64);
                    for l in 0..16 {
                        run |= a[l] ^ a0.wrapping_add(l as u64 * $n);
                        same |= a[l] ^ a0;
                    }
                    let x0 = a0.wrapping_add(delta);
                    if (run == 0 || same == 0) && x0 % $n == 0 {
                        let i0 = (x0 / $n) as usize;
                        if run == 0 {
                            let s: &[[u8; $n]; 16] =
                                w.get(i0..i0.checked_add(16)?)?.try_into().ok()?;
                            for l in 0..16 {
                                o[l] = u64::from(<$t>::from_le_bytes(s[l]));
                            }
                        } else {
                            o.fill(u64::from(<$t>::from_le_bytes(*w.get(i0)?)));
                        }
                        continue;
                    }
                    for (o, &a) in o.iter_mut().zip(a) {
                        let x = a.wrapping_add(delta);
                        acc |= x;
                        *o = u64::from(<$t>::from_le_bytes(*w.get((x / $n) as usize)?));
                    }
                }
            } else {
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let x = addrs[l].wrapping_add(delta);
                    acc |= x;
                    out[l] = u64::from(<$t>::from_le_bytes(*w.get((x / $n) as usize)?));
                }
            }
            if acc & ($n - 1) != 0 {
                return None;
            }
        }};
    }
    match size {
        1 => lanes!(u8, 1),
        2 => lanes!(u16, 2),
        4 => lanes!(u32, 4),
        8 => lanes!(u64, 8),
        _ => return None,
    }
    Some(())
}

#[inline]
fn write_le(b: &mut [u8], off: usize, size: u32, v: u64) -> Option<()> {
    let n = size as usize;
    b.get_mut(off..off + n)?
        .copy_from_slice(&v.to_le_bytes()[..n]);
    Some(())
}

impl Globals {
    /// Materialises every buffer of `bound` and the module variables of `prog`.
    pub fn from_launch(prog: &Program, bound: &BoundLaunch) -> Result<Globals, SimError> {
        // Running needs every parameter's value (an open one is for the static analysis).
        bound.require_values()?;
        let mut regions = Vec::with_capacity(bound.params.len() + prog.layout.global_images.len());
        for p in &bound.params {
            let bytes = match &p.value {
                BoundValue::Buffer {
                    elem, len, init, ..
                } => Some(Init::parse(init)?.materialise(*elem, *len, &bound.base_dir)?),
                _ => None,
            };
            regions.push(Region {
                name: p.name.clone(),
                bytes,
            });
        }
        while regions.len() < prog.layout.nparams {
            regions.push(Region {
                name: String::new(),
                bytes: None,
            });
        }
        for g in &prog.layout.global_images {
            regions.push(Region {
                name: g.name.clone(),
                bytes: Some(g.bytes.clone()),
            });
        }
        // Buffers that fields of by-value struct parameters point to, from region
        // `STRUCT_REGION0` on (the launch crate's map).
        for (k, b) in bound.field_buffers().enumerate() {
            let r = launch::STRUCT_REGION0 + k;
            while regions.len() < r {
                regions.push(Region {
                    name: String::new(),
                    bytes: None,
                });
            }
            let name = bound
                .params
                .iter()
                .find(|p| matches!(&p.value, BoundValue::Bytes { buffers, .. } if buffers.iter().any(|x| x.base == b.base)))
                .map_or_else(String::new, |p| format!("{}+{}", p.name, b.offset));
            regions.push(Region {
                name,
                bytes: Some(Init::parse(&b.init)?.materialise(b.elem, b.len, &bound.base_dir)?),
            });
        }
        Ok(Globals { regions })
    }

    /// The bytes of region `r` (parameter `r`'s buffer for `r < nparams`).
    pub fn region(&self, r: usize) -> Option<&[u8]> {
        self.regions.get(r).and_then(|x| x.bytes.as_deref())
    }

    /// Describes what lies at `addr` for error messages.
    pub fn describe(&self, addr: u64) -> String {
        let (r, off) = split(addr);
        match self.regions.get(r) {
            Some(Region {
                name,
                bytes: Some(b),
            }) => {
                format!(
                    "byte offset {off} of buffer `{name}`, which holds {} bytes",
                    b.len()
                )
            }
            Some(Region { name, bytes: None }) => {
                format!("pointer `{name}` has no buffer in the launch")
            }
            None => "no buffer or variable there".to_string(),
        }
    }

    #[inline]
    fn bytes(&self, r: usize) -> Option<&[u8]> {
        self.regions.get(r)?.bytes.as_deref()
    }

    /// Batched loads when every lane hits the region of the first lane (the common case).
    #[inline]
    fn load_lanes_fast(
        &self,
        mask: u32,
        addrs: &[u64; 32],
        off: u64,
        size: u32,
        out: &mut [u64; 32],
    ) -> Option<()> {
        let first = addrs[mask.trailing_zeros() as usize].wrapping_add(off);
        let (r, _) = split(first);
        let b = self.bytes(r)?;
        gather(b, Layout::region_base(r), mask, addrs, off, size, out)
    }
}

impl GlobalMemory for Globals {
    #[inline]
    fn load_lanes(
        &mut self,
        mask: u32,
        addrs: &[u64; 32],
        off: u64,
        size: u32,
        out: &mut [u64; 32],
    ) -> Result<(), usize> {
        if self.load_lanes_fast(mask, addrs, off, size, out).is_some() {
            return Ok(());
        }
        for_lanes(mask, |l| {
            self.load(addrs[l].wrapping_add(off), size)
                .map(|v| out[l] = v)
                .map_err(|_| l)
        })
    }
    fn describe(&self, addr: u64) -> String {
        Globals::describe(self, addr)
    }
    #[inline]
    fn load(&mut self, addr: u64, size: u32) -> Result<u64, MemFault> {
        let (r, off) = split(addr);
        self.bytes(r)
            .and_then(|b| read_le(b, off, size))
            .ok_or(MemFault::OutOfBounds)
    }
    #[inline]
    fn store(&mut self, addr: u64, size: u32, value: u64) -> Result<(), MemFault> {
        let (r, off) = split(addr);
        self.regions
            .get_mut(r)
            .and_then(|x| x.bytes.as_deref_mut())
            .and_then(|b| write_le(b, off, size, value))
            .ok_or(MemFault::OutOfBounds)
    }
}

const PAGE_LOG2: u32 = 12;
const PAGE: usize = 1 << PAGE_LOG2;

/// Bytes one TB wrote, by page, with a mask of the bytes written.
#[derive(Clone)]
struct Page {
    data: Box<[u8; PAGE]>,
    written: Box<[u64; PAGE / 64]>,
}

/// A TB's view of global memory in snapshot mode: reads see the launch's initial memory plus
/// this TB's own writes; writes go to a private overlay that [`Overlay::commit`] applies.
pub struct SnapshotView<'a> {
    base: &'a Globals,
    overlay: Overlay,
}

/// The writes of one TB.
#[derive(Default)]
pub struct Overlay {
    pages: HashMap<(usize, usize), Page>,
    /// Per region: whether this TB wrote to it (loads from others skip the page lookup).
    dirty: Vec<bool>,
}

impl<'a> SnapshotView<'a> {
    /// A fresh view of `base`.
    pub fn new(base: &'a Globals) -> SnapshotView<'a> {
        SnapshotView {
            base,
            overlay: Overlay {
                pages: HashMap::new(),
                dirty: vec![false; base.regions.len()],
            },
        }
    }
    /// The TB's writes.
    pub fn into_overlay(self) -> Overlay {
        self.overlay
    }
}

impl Overlay {
    /// Applies the writes to `g`.
    pub fn commit(&self, g: &mut Globals) {
        let mut keys: Vec<_> = self.pages.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            let (Some(p), Some(b)) = (
                self.pages.get(&k),
                g.regions.get_mut(k.0).and_then(|r| r.bytes.as_mut()),
            ) else {
                continue;
            };
            let start = k.1 * PAGE;
            for (w, bits) in p.written.iter().enumerate() {
                let mut bits = *bits;
                while bits != 0 {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if let Some(dst) = b.get_mut(start + i) {
                        *dst = p.data[i];
                    }
                }
            }
        }
    }
}

impl GlobalMemory for SnapshotView<'_> {
    #[inline]
    fn load_lanes(
        &mut self,
        mask: u32,
        addrs: &[u64; 32],
        off: u64,
        size: u32,
        out: &mut [u64; 32],
    ) -> Result<(), usize> {
        let (r, _) = split(addrs[mask.trailing_zeros() as usize].wrapping_add(off));
        if !self.overlay.dirty.get(r).copied().unwrap_or(true)
            && self
                .base
                .load_lanes_fast(mask, addrs, off, size, out)
                .is_some()
        {
            return Ok(());
        }
        for_lanes(mask, |l| {
            self.load(addrs[l].wrapping_add(off), size)
                .map(|v| out[l] = v)
                .map_err(|_| l)
        })
    }
    fn describe(&self, addr: u64) -> String {
        self.base.describe(addr)
    }
    #[inline]
    fn load(&mut self, addr: u64, size: u32) -> Result<u64, MemFault> {
        let (r, off) = split(addr);
        let b = self.base.bytes(r).ok_or(MemFault::OutOfBounds)?;
        let v = read_le(b, off, size).ok_or(MemFault::OutOfBounds)?;
        if !self.overlay.dirty.get(r).copied().unwrap_or(false) {
            return Ok(v);
        }
        // Accesses are aligned, so they never straddle a page.
        let Some(p) = self.overlay.pages.get(&(r, off >> PAGE_LOG2)) else {
            return Ok(v);
        };
        let mut bytes = v.to_le_bytes();
        let po = off & (PAGE - 1);
        for (k, byte) in bytes.iter_mut().enumerate().take(size as usize) {
            let i = po + k;
            if p.written[i / 64] >> (i % 64) & 1 != 0 {
                *byte = p.data[i];
            }
        }
        Ok(u64::from_le_bytes(bytes))
    }

    #[inline]
    fn store(&mut self, addr: u64, size: u32, value: u64) -> Result<(), MemFault> {
        let (r, off) = split(addr);
        let b = self.base.bytes(r).ok_or(MemFault::OutOfBounds)?;
        if off.checked_add(size as usize).is_none_or(|e| e > b.len()) {
            return Err(MemFault::OutOfBounds);
        }
        if let Some(d) = self.overlay.dirty.get_mut(r) {
            *d = true;
        }
        let p = self
            .overlay
            .pages
            .entry((r, off >> PAGE_LOG2))
            .or_insert_with(|| Page {
                data: Box::new([0; PAGE]),
                written: Box::new([0; PAGE / 64]),
            });
        let po = off & (PAGE - 1);
        let bytes = value.to_le_bytes();
        for k in 0..size as usize {
            let i = po + k;
            p.data[i] = bytes[k];
            p.written[i / 64] |= 1 << (i % 64);
        }
        Ok(())
    }
}

/// Builds the kernel parameter block of `bound` for `layout`.
pub(crate) fn param_block(layout: &Layout, bound: &BoundLaunch) -> Vec<u8> {
    let mut out = vec![0u8; layout.param_bytes as usize];
    for (i, p) in bound.params.iter().enumerate() {
        let (Some(&off), Some(&size)) = (layout.param_offsets.get(i), layout.param_sizes.get(i))
        else {
            continue;
        };
        let v = match &p.value {
            BoundValue::Scalar { bits } => *bits,
            BoundValue::Buffer { base, .. } | BoundValue::Synthetic { base } => *base,
            // Refused by `Globals::from_launch` before any thread runs.
            BoundValue::Open => continue,
            BoundValue::Bytes { bytes, .. } => {
                // By-value struct: its bytes, as many as the parameter holds.
                let n = (size as usize).min(bytes.len());
                if let Some(dst) = out.get_mut(off as usize..off as usize + n) {
                    dst.copy_from_slice(&bytes[..n]);
                }
                continue;
            }
        };
        let n = (size as usize).min(8);
        if let Some(dst) = out.get_mut(off as usize..off as usize + n) {
            dst.copy_from_slice(&v.to_le_bytes()[..n]);
        }
    }
    out
}
