//! The Locality Descriptors placed in the launch's address space ([`sim::timing::hints`]),
//! for the run-time mechanisms of the Locality Descriptor paper (§4.4-4.6); the locality
//! type and sharing are the analysis's own values (one vocabulary,
//! `graph_partition::descriptor`). UNDECIDED descriptors are kept as such: each mechanism
//! leaves those structures alone.

use analysis::descriptor::{Descriptor, Pattern};
use launch::BoundLaunch;
use sim::timing::hints::{LocalityHints, StructureHint};

/// The hints of `descriptors`, the launch `bound`'s.
pub fn hints(descriptors: &[Descriptor], bound: &BoundLaunch) -> LocalityHints {
    let mut hints = LocalityHints::default();
    for d in descriptors {
        let region = d.param as usize;
        hints.insert(StructureHint {
            region,
            base: launch::bind::buffer_base(region),
            bytes: bound.region_bytes(region).flatten(),
            element_bytes: d.element_bytes,
            locality: d.locality_type,
            sharing: d.sharing,
            regular: d.pattern == Pattern::Regular,
            stride_elements: d.stride_elements,
            d_tile: d.d_tile,
            c_tile: d.c_tile,
            compute_data_map: d.compute_data_map,
            priority: d.priority,
        });
    }
    hints
}
