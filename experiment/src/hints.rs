//! The Locality Descriptors placed in the launch's address space ([`sim::timing::hints`]),
//! for the run-time mechanisms of the Locality Descriptor paper (§4.4-4.6): the analysis's
//! own descriptors (one type, `graph_partition::descriptor::Descriptor`), each at its
//! region's base, with the analysis's C-Tile -> D-Tile map (the guided prefetcher's
//! prediction of use) and whether a block of the structure is read twice at the L1's block
//! size (which NO-REUSE structures the `ld` cache policy bypasses, `ld.bypass`). UNDECIDED descriptors are kept as such: each mechanism leaves those
//! structures alone.

use analysis::descriptor::Derived;
use launch::BoundLaunch;
use sim::timing::hints::{LocalityHints, StructureHint, TileMap};

/// The hints of `derived`, the launch `bound`'s descriptors, with the C-Tile -> D-Tile map
/// of the same structure in `tiles` (the same launch analysed at a finer granularity) and
/// whether a block of it is read twice at the L1's block size (`block_reuse`, by region id:
/// [`analysis::descriptor::block_reuse`]).
pub fn hints(
    derived: &[Derived],
    tiles: &[Derived],
    block_reuse: &[Option<bool>],
    bound: &BoundLaunch,
) -> LocalityHints {
    let mut hints = LocalityHints::default();
    for d in derived {
        let bytes = bound.region_bytes(d.descriptor.param as usize).flatten();
        let fine = tiles
            .iter()
            .find(|t| t.descriptor.param == d.descriptor.param)
            .unwrap_or(d);
        let d_tiles = fine.tile_map.iter().map(|t| t.d_tile.clone()).collect();
        let reuse = block_reuse
            .get(d.descriptor.param as usize)
            .copied()
            .flatten();
        hints.insert(
            StructureHint::new(d.descriptor.clone(), bytes)
                .with_tiles(TileMap { d_tiles })
                .with_l1_block_reuse(reuse),
        );
    }
    hints
}
