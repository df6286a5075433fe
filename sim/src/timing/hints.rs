//! The Locality Descriptor of each data structure of a launch (seed paper 004 §3), placed
//! in the launch's address space, for the run-time uses of the descriptor (§4.4 cache
//! management, §4.5 prefetching, §4.6 NUMA placement).
//!
//! The simulator does not depend on the analysis crate: the descriptor is the one type
//! every crate reads ([`graph_partition::descriptor::Descriptor`]), and the caller, who ran
//! the analysis, places each one ([`LocalityHints::insert`]); a run without hints behaves
//! exactly as before. Data structures are keyed by their region id, the index the launch
//! binding gives every buffer (`launch::BoundLaunch::buffer_at`): parameters, then module
//! variables, then struct fields' buffers, each at its own `(id + 1) << 36` base, so the
//! structure an address belongs to is a shift away.
//!
//! A hint may also carry the descriptor's C-Tile -> D-Tile map as the analysis placed it
//! ([`TileMap`]: per C-Tile, the element ranges of its D-Tile), which the guided
//! prefetcher reads to tell whether a block is data a resident TB's C-Tile will use
//! ([`StructureHint::in_d_tile`]), and whether a block of the structure is read twice at
//! the L1's block size ([`StructureHint::l1_block_reuse`]), which the bypass reads.

use std::collections::BTreeMap;

pub use graph_partition::descriptor::{Descriptor, LocalityType, Pattern, Sharing};

/// One data structure's descriptor, with where it lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureHint {
    /// Region id (`launch::BoundLaunch::buffer_at`).
    pub region: usize,
    /// Global address of byte 0.
    pub base: u64,
    /// Size in bytes (`None`: a pointer the launch gave no buffer for).
    pub bytes: Option<u64>,
    /// The structure's Locality Descriptor.
    pub descriptor: Descriptor,
    /// The C-Tile -> D-Tile map (`None`: not given; the guided prefetcher then predicts no
    /// use of the structure).
    pub tiles: Option<TileMap>,
    /// Whether some block of the structure, at the L1's block size, is read twice (by two
    /// warps, or by one warp at two points); `None`: not known. The bypass of
    /// `--cache-policy ld` reads it (`ld.bypass`, [`super::ld_cache::BypassRule`]).
    pub l1_block_reuse: Option<bool>,
}

/// The C-Tile -> D-Tile map of one structure: C-Tile `i` (linear, x fastest, in the grid of
/// C-Tiles of the descriptor's `c_tile` dimensions) reads the elements of `d_tiles[i]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileMap {
    /// Per C-Tile, its D-Tile's element ranges `[lo, hi)`, sorted and disjoint. C-Tiles past
    /// the end are not listed (the analysis lists at most 4,096).
    pub d_tiles: Vec<Vec<[u64; 2]>>,
}

impl StructureHint {
    /// `descriptor` placed where the launch binding puts its region (`descriptor.param`),
    /// `bytes` long.
    pub fn new(descriptor: Descriptor, bytes: Option<u64>) -> StructureHint {
        let region = descriptor.param as usize;
        StructureHint {
            region,
            base: launch::bind::buffer_base(region),
            bytes,
            descriptor,
            tiles: None,
            l1_block_reuse: None,
        }
    }

    /// The same hint with the block-reuse answer `reuse` at the L1's block size.
    pub fn with_l1_block_reuse(mut self, reuse: Option<bool>) -> StructureHint {
        self.l1_block_reuse = reuse;
        self
    }

    /// The same hint with the C-Tile -> D-Tile map `tiles`.
    pub fn with_tiles(mut self, tiles: TileMap) -> StructureHint {
        self.tiles = Some(tiles);
        self
    }

    /// The linear C-Tile of TB `tb` (linear id, x fastest) in a grid of `grid` TBs.
    pub fn c_tile_of(&self, tb: u32, grid: [u64; 3]) -> u64 {
        let t = u64::from(tb);
        let (gx, gy) = (grid[0].max(1), grid[1].max(1));
        let xyz = [t % gx, (t / gx) % gy, t / (gx * gy)];
        let ct = self.descriptor.c_tile.map(|c| c.max(1));
        let n = [0, 1].map(|d| grid[d].max(1).div_ceil(ct[d]));
        xyz[0] / ct[0] + n[0] * (xyz[1] / ct[1] + n[1] * (xyz[2] / ct[2]))
    }

    /// Whether bytes `addr..addr + len` of this structure overlap the D-Tile of C-Tile
    /// `c_tile` (linear); `false` without a map or for a C-Tile the map does not list.
    pub fn in_d_tile(&self, c_tile: u64, addr: u64, len: u64) -> bool {
        let Some(ranges) = self
            .tiles
            .as_ref()
            .and_then(|t| t.d_tiles.get(usize::try_from(c_tile).ok()?))
        else {
            return false;
        };
        let Some(off) = addr.checked_sub(self.base) else {
            return false;
        };
        let eb = self.descriptor.element_bytes.max(1);
        let (lo, hi) = (off / eb, (off + len.max(1)).div_ceil(eb));
        // The first range ending after `lo`; it overlaps when it starts before `hi`.
        let i = ranges.partition_point(|r| r[1] <= lo);
        ranges.get(i).is_some_and(|r| r[0] < hi)
    }
}

/// The descriptors of one launch, by region.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalityHints {
    by_region: BTreeMap<usize, StructureHint>,
}

/// log2 of the distance between two regions' bases (`launch::bind::BUFFER_SPACING_LOG2`).
const SPACING_LOG2: u32 = launch::bind::BUFFER_SPACING_LOG2;

impl LocalityHints {
    /// No hints: every mechanism that reads them falls back to the plain policy.
    pub fn is_empty(&self) -> bool {
        self.by_region.is_empty()
    }

    /// Adds (or replaces) the hint of `h.region`.
    pub fn insert(&mut self, h: StructureHint) {
        self.by_region.insert(h.region, h);
    }

    /// Every hint, by region id.
    pub fn iter(&self) -> impl Iterator<Item = &StructureHint> {
        self.by_region.values()
    }

    /// The hint of the structure holding byte `addr`, if it has one (an address past a
    /// sized structure's end belongs to none).
    pub fn of_addr(&self, addr: u64) -> Option<&StructureHint> {
        let region = (addr >> SPACING_LOG2).checked_sub(1)? as usize;
        let h = self.by_region.get(&region)?;
        match h.bytes {
            Some(n) if addr - h.base >= n => None,
            _ => Some(h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(region: usize, bytes: Option<u64>) -> StructureHint {
        StructureHint::new(
            Descriptor {
                param: region as u32,
                name: None,
                element_bytes: 4,
                locality_type: LocalityType::NoReuse,
                priority: 1,
                sharing: None,
                pattern: Pattern::Regular,
                stride_elements: None,
                d_tile: [1, 1, 1],
                c_tile: [1, 1, 1],
                compute_data_map: [1, 0, 0],
                compute_data_rank: [1, 0, 0],
            },
            bytes,
        )
    }

    #[test]
    fn an_address_finds_the_structure_that_holds_it() {
        let mut h = LocalityHints::default();
        h.insert(hint(0, Some(4096)));
        h.insert(hint(2, None));
        let b0 = launch::bind::buffer_base(0);
        assert_eq!(h.of_addr(b0).map(|s| s.region), Some(0));
        assert_eq!(h.of_addr(b0 + 4095).map(|s| s.region), Some(0));
        assert_eq!(h.of_addr(b0 + 4096), None, "one past the end");
        assert_eq!(
            h.of_addr(launch::bind::buffer_base(1)),
            None,
            "no hint for region 1"
        );
        let b2 = launch::bind::buffer_base(2);
        assert_eq!(h.of_addr(b2 + (1 << 20)).map(|s| s.region), Some(2));
        assert_eq!(h.of_addr(0), None, "below every region");
    }

    /// A 4 x 2 grid of TBs with 1 x 1 C-Tiles: TB 5 (x1 y1) is C-Tile 5. Its D-Tile holds
    /// elements 8..16 and 40..48 (4 B each): bytes 32..64 and 160..192.
    #[test]
    fn a_block_is_in_the_d_tile_of_its_c_tile() {
        let mut d_tiles = vec![Vec::new(); 8];
        d_tiles[5] = vec![[8, 16], [40, 48]];
        let h = hint(0, Some(4096)).with_tiles(TileMap { d_tiles });
        assert_eq!(h.c_tile_of(5, [4, 2, 1]), 5);
        let b = h.base;
        assert!(h.in_d_tile(5, b + 32, 32));
        assert!(h.in_d_tile(5, b, 64), "overlaps 32..64");
        assert!(!h.in_d_tile(5, b, 32), "bytes 0..32 are elements 0..8");
        assert!(
            !h.in_d_tile(5, b + 64, 96),
            "bytes 64..160: between the ranges"
        );
        assert!(h.in_d_tile(5, b + 128, 64));
        assert!(
            !h.in_d_tile(4, b + 32, 32),
            "another C-Tile's D-Tile (empty)"
        );
        assert!(
            !h.in_d_tile(9, b + 32, 32),
            "a C-Tile the map does not list"
        );
        assert!(!hint(0, None).in_d_tile(5, b + 32, 32), "no map");
        // C-Tiles of 4 x 1 TBs (the grid's whole x): TB 5 is C-Tile 1.
        let mut wide = hint(0, None);
        wide.descriptor.c_tile = [4, 1, 1];
        assert_eq!(wide.c_tile_of(5, [4, 2, 1]), 1);
        assert_eq!(wide.c_tile_of(3, [4, 2, 1]), 0);
    }
}
