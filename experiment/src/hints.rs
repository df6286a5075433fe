//! The Locality Descriptors in the simulator's terms ([`sim::timing::hints`]), for the
//! run-time mechanisms of the Locality Descriptor paper (§4.4-4.6). UNDECIDED descriptors
//! are kept as such: each mechanism leaves those structures alone.

use analysis::descriptor::Descriptor;
use launch::BoundLaunch;
use sim::timing::hints::{LocalityHints, LocalityType, Sharing, StructureHint};

/// The hints of `descriptors`, the launch `bound`'s.
pub fn hints(descriptors: &[Descriptor], bound: &BoundLaunch) -> LocalityHints {
    let mut hints = LocalityHints::default();
    for d in descriptors {
        let region = d.param as usize;
        let locality = match d.locality_type {
            "INTER-THREAD" => LocalityType::InterThread,
            "INTRA-THREAD" => LocalityType::IntraThread,
            "NO-REUSE" => LocalityType::NoReuse,
            _ => LocalityType::Undecided,
        };
        let sharing = match d.sharing {
            Some("COACCESSED") => Some(Sharing::Coaccessed),
            Some("NEARBY") => Some(Sharing::Nearby),
            _ => None,
        };
        hints.insert(StructureHint {
            region,
            base: launch::bind::buffer_base(region),
            bytes: bound.region_bytes(region).flatten(),
            element_bytes: d.element_bytes,
            locality,
            sharing,
            regular: d.pattern == "REGULAR",
            stride_elements: d.stride_elements,
            d_tile: d.d_tile,
            c_tile: d.c_tile,
            compute_data_map: d.compute_data_map,
            priority: d.priority,
        });
    }
    hints
}
