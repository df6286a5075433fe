//! The Locality Descriptors placed in the launch's address space ([`sim::timing::hints`]),
//! for the run-time mechanisms of the Locality Descriptor paper (§4.4-4.6): the analysis's
//! own descriptors (one type, `graph_partition::descriptor::Descriptor`), each at its
//! region's base, with the analysis's C-Tile -> D-Tile map (the guided prefetcher's
//! prediction of use). UNDECIDED descriptors are kept as such: each mechanism leaves those
//! structures alone.

use analysis::descriptor::Derived;
use launch::BoundLaunch;
use sim::timing::hints::{LocalityHints, StructureHint, TileMap};

/// The hints of `derived`, the launch `bound`'s descriptors, with the C-Tile -> D-Tile map
/// of the same structure in `tiles` (the same launch analysed at a finer granularity).
pub fn hints(derived: &[Derived], tiles: &[Derived], bound: &BoundLaunch) -> LocalityHints {
    let mut hints = LocalityHints::default();
    for d in derived {
        let bytes = bound.region_bytes(d.descriptor.param as usize).flatten();
        let fine = tiles
            .iter()
            .find(|t| t.descriptor.param == d.descriptor.param)
            .unwrap_or(d);
        let d_tiles = fine.tile_map.iter().map(|t| t.d_tile.clone()).collect();
        hints.insert(
            StructureHint::new(d.descriptor.clone(), bytes).with_tiles(TileMap { d_tiles }),
        );
    }
    hints
}
