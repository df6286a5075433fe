//! The L1 prefetchers (`--prefetch next-line|ld`; seed paper 004 §4.5, Figure 11).
//!
//! A prefetch is triggered by a demand read miss in the L1 (`Outcome::Miss`, not a merge)
//! and is a real read request: it takes an L1 MSHR (with no waiter, so it never blocks a
//! warp), crosses the interconnect, the L2 and DRAM like a miss, and fills the L1 on its
//! return. It is dropped when no MSHR is free, and not sent when its block is present, in
//! flight, or one the L1 would bypass ([`super::cache::Cache::prefetch`]).
//!
//! Targets (`block` is the missed block: a 32 B sector of a sectored L1, else the line):
//!
//! - `next-line`: `block + line` for every miss (the block at the same offset of the next
//!   line: a warp missing a whole line of sectors prefetches the whole next line).
//! - `ld`: INTER-THREAD structures only. NEARBY: the next line, as above. COACCESSED with a
//!   REGULAR pattern: `block + (L1_size / (active_tiles × tile_width)) × stride`, where
//!   `stride` is the descriptor's stride (the distance between a D-Tile's rows) in bytes,
//!   `tile_width` the bytes of a D-Tile row (`d_tile[0] × element_bytes`: "the number of
//!   bytes that are accessed at the same time"), and `active_tiles` the number of distinct
//!   C-Tiles among the TBs resident on the SM (with the 1:1 C-Tile/D-Tile mapping, the
//!   D-Tiles the SM is working on, hence the prefetcher is prefetching). The quotient is
//!   taken in whole rows (integer division): the L1's share of one active tile, in tile
//!   rows. A distance of zero rows, a structure without a stride, or a target outside the
//!   structure sends nothing. Everything else (IRREGULAR COACCESSED, INTRA-THREAD,
//!   NO-REUSE, UNDECIDED, no descriptor): no prefetch.

use super::hints::{LocalityHints, LocalityType, Sharing};
use serde::{Deserialize, Serialize};

/// The L1 prefetcher (`--prefetch`, key `ld.prefetch`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrefetchPolicy {
    /// No prefetching.
    #[default]
    None,
    /// The next line on every L1 read miss.
    NextLine,
    /// The Locality Descriptor's guided prefetcher (§4.5).
    Ld,
}

impl super::named::Named for PrefetchPolicy {
    const KIND: &'static str = "L1 prefetcher on read misses";
    const ALL: &'static [super::named::Entry<PrefetchPolicy>] = &[
        super::named::Entry {
            value: PrefetchPolicy::None,
            name: "none",
            aliases: &[],
            description: "no prefetching",
        },
        super::named::Entry {
            value: PrefetchPolicy::NextLine,
            name: "next-line",
            aliases: &[],
            description: "the next line on every L1 read miss",
        },
        super::named::Entry {
            value: PrefetchPolicy::Ld,
            name: "ld",
            aliases: &[],
            description: "the Locality Descriptor's §4.5: INTER-THREAD NEARBY -> next line, \
                          COACCESSED REGULAR -> strided (stats key `ld`)",
        },
    ];
}

/// What [`super::cache::Cache::prefetch`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefetch {
    /// An MSHR was taken: the caller sends the read.
    Issued,
    /// No MSHR free: nothing sent.
    Dropped,
    /// Present, in flight, or bypassed: nothing sent.
    Unneeded,
}

/// The distinct C-Tiles of the TBs `resident` (linear ids, x fastest) in a grid of `grid`
/// TBs with C-Tiles of `c_tile` TBs: at least 1.
fn active_tiles(grid: [u64; 3], c_tile: [u64; 3], resident: impl Iterator<Item = u32>) -> u64 {
    let mut seen: Vec<[u64; 3]> = Vec::new();
    let (gx, gy) = (grid[0].max(1), grid[1].max(1));
    for tb in resident {
        let t = u64::from(tb);
        let xyz = [t % gx, (t / gx) % gy, t / (gx * gy)];
        let c = [
            xyz[0] / c_tile[0].max(1),
            xyz[1] / c_tile[1].max(1),
            xyz[2] / c_tile[2].max(1),
        ];
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    (seen.len() as u64).max(1)
}

/// The block to prefetch after a demand miss of `block` (see the module doc).
pub(crate) fn target(
    policy: PrefetchPolicy,
    hints: &LocalityHints,
    block: u64,
    line: u64,
    l1_bytes: u64,
    grid: [u64; 3],
    resident: impl Iterator<Item = u32>,
) -> Option<u64> {
    match policy {
        PrefetchPolicy::None => None,
        PrefetchPolicy::NextLine => block.checked_add(line),
        PrefetchPolicy::Ld => {
            let h = hints.of_addr(block)?;
            let d = &h.descriptor;
            if d.locality_type != LocalityType::InterThread {
                return None;
            }
            let t = match d.sharing? {
                Sharing::Nearby => block.checked_add(line)?,
                Sharing::Coaccessed if d.is_regular() => {
                    let stride = d.stride_elements? * d.element_bytes;
                    let width = d.d_tile[0] * d.element_bytes;
                    let active = active_tiles(grid, d.c_tile, resident);
                    let rows = l1_bytes / active.checked_mul(width).filter(|&w| w > 0)?;
                    if rows == 0 || stride == 0 {
                        return None;
                    }
                    block.checked_add(rows.checked_mul(stride)?)?
                }
                Sharing::Coaccessed => return None,
            };
            (hints.of_addr(t).map(|o| o.region) == Some(h.region)).then_some(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::hints::{Descriptor, Pattern, StructureHint};

    fn hint(locality: LocalityType, sharing: Option<Sharing>, regular: bool) -> StructureHint {
        let descriptor = Descriptor {
            param: 0,
            name: None,
            element_bytes: 4,
            locality_type: locality,
            priority: 1,
            sharing,
            pattern: if regular {
                Pattern::Regular
            } else {
                Pattern::Irregular
            },
            stride_elements: Some(1024),
            d_tile: [64, 16, 1],
            c_tile: [1, 4, 1],
            compute_data_map: [1, 0, 0],
            compute_data_rank: [1, 0, 0],
        };
        StructureHint::new(descriptor, Some(1 << 24))
    }

    fn hints(h: StructureHint) -> LocalityHints {
        let mut l = LocalityHints::default();
        l.insert(h);
        l
    }

    #[test]
    fn next_line_is_one_line_on() {
        let l = LocalityHints::default();
        let b = 0x1_0000_0020;
        let t = target(
            PrefetchPolicy::NextLine,
            &l,
            b,
            128,
            32768,
            [1, 1, 1],
            [].into_iter(),
        );
        assert_eq!(t, Some(0x1_0000_00a0));
        assert_eq!(
            target(
                PrefetchPolicy::None,
                &l,
                b,
                128,
                32768,
                [1, 1, 1],
                [].into_iter()
            ),
            None
        );
    }

    #[test]
    fn ld_nearby_is_next_line_and_others_get_nothing() {
        // The `ld` target of a read miss at `block`: 128 B lines, a 32 KB L1, a 4 x 4 grid,
        // TB 0 resident.
        let ld_target = |l: &LocalityHints, block| {
            target(
                PrefetchPolicy::Ld,
                l,
                block,
                128,
                32768,
                [4, 4, 1],
                [0].into_iter(),
            )
        };
        let base = launch::bind::buffer_base(0);
        let l = hints(hint(
            LocalityType::InterThread,
            Some(Sharing::Nearby),
            false,
        ));
        let t = ld_target(&l, base + 256);
        assert_eq!(t, Some(base + 384));
        for (loc, sh, reg) in [
            (LocalityType::InterThread, Some(Sharing::Coaccessed), false),
            (LocalityType::IntraThread, None, true),
            (LocalityType::NoReuse, None, true),
            (LocalityType::Undecided, None, true),
        ] {
            let l = hints(hint(loc, sh, reg));
            let t = ld_target(&l, base + 256);
            assert_eq!(t, None, "{loc:?} {sh:?} regular={reg}");
        }
        // No descriptor for the address.
        let t = ld_target(&l, launch::bind::buffer_base(3));
        assert_eq!(t, None);
    }

    /// COACCESSED + REGULAR: by hand, tile width 64 x 4 B = 256 B, stride 1024 x 4 B = 4096
    /// B. Grid 4 x 8 with C-Tiles of 1 x 4 TBs: TBs 0 (x0 y0), 4 (x0 y1) share C-Tile
    /// (0, 0); TB 1 (x1 y0) is C-Tile (1, 0); TB 17 (x1 y4) is C-Tile (1, 1). With a 32 KB
    /// L1: one active tile -> 32768 / 256 = 128 rows ahead = 524288 B; three active tiles
    /// -> 32768 / 768 = 42 rows = 172032 B.
    #[test]
    fn strided_distance_by_hand() {
        let base = launch::bind::buffer_base(0);
        let l = hints(hint(
            LocalityType::InterThread,
            Some(Sharing::Coaccessed),
            true,
        ));
        let go = |tbs: &[u32]| {
            target(
                PrefetchPolicy::Ld,
                &l,
                base,
                128,
                32768,
                [4, 8, 1],
                tbs.iter().copied(),
            )
        };
        assert_eq!(go(&[0, 4]), Some(base + 524_288));
        assert_eq!(go(&[0, 4, 1, 17]), Some(base + 172_032));
        assert_eq!(go(&[]), Some(base + 524_288), "at least one tile");
        // Beyond the structure's 16 MB: nothing.
        let far = base + (1 << 24) - 4096;
        let t = target(
            PrefetchPolicy::Ld,
            &l,
            far,
            128,
            32768,
            [4, 8, 1],
            [0].into_iter(),
        );
        assert_eq!(t, None);
    }
}
