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
        }
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
}
