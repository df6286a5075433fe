//! Maps keyed by block address (MSHRs, the L1's pinning state, the ICC's last-access
//! table), with a hasher made for such keys.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hasher for block addresses (the MSHR maps): SipHash's resistance to
/// chosen keys buys nothing here and cost a fifth of the run time. Deterministic (no random
/// state), like the rest of the model.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockHasher(u64);

impl Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        // Block addresses end in zero bits; the rotation brings the product's well-mixed
        // high bits down to where the table takes its index.
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }
}

/// A map keyed by block address.
pub type BlockMap<V> = HashMap<u64, V, BuildHasherDefault<BlockHasher>>;
